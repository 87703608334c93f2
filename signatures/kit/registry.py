"""The table of inference rules, looked up by (domain, op_type, version).

An entry covers one operator from ``since`` up to the next entry of the same operator. It is
either a rule (a Python function or a compiled DSL pattern) or an explicit "unsupported,
because ..." that ``explain`` and the conformance statement read.

Registering, in a family module::

    @rule("Reshape", since=5)
    def reshape(ctx): ...

    shape_rule(["Sin", "Cos"], "X[*s] -> Y[*s]")
    unsupported("Snpe", domain="com.microsoft", reason="its outputs are those of an opaque payload")

Every entry records the module that declared it (``Entry.module``), which the conformance
statement shows.
"""

from __future__ import annotations

import bisect
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from infer.contract.signature import canonical_domain

RuleFn = Callable[[Any], Sequence[Any]]


@dataclass(frozen=True, slots=True)
class Entry:
    domain: str
    op_type: str
    since: int
    rule: RuleFn | None = None
    reason: str | None = None  # set for unsupported entries
    pattern: str | None = None  # the DSL source, for documentation
    module: str = ""  # the module that declared the entry
    # False for a rule whose result rests on more than its node and inputs (what the walk has
    # recorded elsewhere): never reused for another node (infer/walk/memo.py).
    pure: bool = True

    @property
    def supported(self) -> bool:
        return self.rule is not None


class Registry:
    def __init__(self) -> None:
        self._entries: dict[tuple[str, str], list[Entry]] = {}
        # Bumped by every registration: results of rules kept across calls (infer/walk/memo.py) are
        # kept for one set of rules.
        self.generation = 0

    def add(self, entry: Entry) -> None:
        self.generation += 1
        key = (entry.domain, entry.op_type)
        versions = self._entries.setdefault(key, [])
        if any(e.since == entry.since for e in versions):
            raise ValueError(f"duplicate rule for {entry.domain}:{entry.op_type} since {entry.since}")
        bisect.insort(versions, entry, key=lambda e: e.since)

    def lookup(self, domain: str, op_type: str, version: int) -> Entry | None:
        """The entry in force at ``version`` (a schema's since_version, or the imported opset)."""
        versions = self._entries.get((canonical_domain(domain), op_type))
        if not versions:
            return None
        i = bisect.bisect_right(versions, version, key=lambda e: e.since)
        return versions[i - 1] if i else None

    def entries(self) -> list[Entry]:
        return [e for versions in self._entries.values() for e in versions]

    def operators(self) -> set[tuple[str, str]]:
        return set(self._entries)


REGISTRY = Registry()


def _names(ops: str | Iterable[str]) -> list[str]:
    return [ops] if isinstance(ops, str) else list(ops)


def rule(ops: str | Iterable[str], since: int = 1, domain: str = "", pure: bool = True) -> Callable[[RuleFn], RuleFn]:
    """Register a Python rule for one or more operators; ``pure=False`` where its result rests on
    more than the node and its inputs (what the walk recorded elsewhere, a subgraph's walk)."""

    def wrap(fn: RuleFn) -> RuleFn:
        for op in _names(ops):
            REGISTRY.add(Entry(canonical_domain(domain), op, since, rule=fn, module=fn.__module__, pure=pure))
        return fn

    return wrap


def caller_module(depth: int = 2) -> str:
    """The module calling the registering function (``depth`` frames up)."""
    return str(sys._getframe(depth).f_globals.get("__name__", ""))


def shape_rule(
    ops: str | Iterable[str], pattern: str | Sequence[str], since: int = 1, domain: str = "", module: str = ""
) -> None:
    """Register a DSL pattern (see ``signatures.kit.dsl``) for one or more operators; ``module``
    (the calling one unless given) declares them."""
    from signatures.kit.dsl import compile_pattern

    module = module or caller_module()
    fn = compile_pattern(pattern)
    fn.__module__ = module
    source = pattern if isinstance(pattern, str) else " | ".join(pattern)
    for op in _names(ops):
        REGISTRY.add(Entry(canonical_domain(domain), op, since, rule=fn, pattern=source, module=module))


def unsupported(ops: str | Iterable[str], reason: str, since: int = 1, domain: str = "") -> None:
    """Declare that outputs stay unknown (beyond their schema types), and why."""
    module = caller_module()
    for op in _names(ops):
        REGISTRY.add(Entry(canonical_domain(domain), op, since, reason=reason, module=module))


def lookup(domain: str, op_type: str, version: int) -> Entry | None:
    return REGISTRY.lookup(domain, op_type, version)


@dataclass(frozen=True)
class Example:
    """An invocation test kept beside its rule: input types in, expected output types out.

    Types are strings: ``float[N,3,H,W]``, ``int64[4]={0,0,12,64}`` (known contents), ``float[*]``
    (unknown rank), ``""`` for an unsupplied input. An expected dim ``?`` accepts an unknown or
    fresh extent. ``error`` names a diagnostic code the node must raise.
    """

    op_type: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    attrs: tuple[tuple[str, Any], ...] = ()
    opset: int | None = None
    domain: str = ""
    error: str | None = None
    module: str = ""


EXAMPLES: list[Example] = []


def example(
    op_type: str,
    inputs: Sequence[str],
    outputs: Sequence[str],
    attrs: dict[str, Any] | None = None,
    opset: int | None = None,
    domain: str = "",
    error: str | None = None,
) -> None:
    """Declare an invocation test of ``op_type``'s rule (run by tests/test_rule_examples.py)."""
    module = caller_module()
    EXAMPLES.append(
        Example(op_type, tuple(inputs), tuple(outputs), tuple((attrs or {}).items()), opset, domain, error, module)
    )
