"""Registering inference rules in the contract layer's table (``infer.contract.registry.REGISTRY``,
read at each registration, so a test may put a table of its own there), and the examples kept
beside them.

Registering, in a family module of a standard domain (whose signatures ``onnx.defs`` has)::

    @rule("Reshape", since=5)
    def reshape(ctx): ...

    shape_rule(["Sin", "Cos"], "X[*s] -> Y[*s]")
    example("Reshape", ["float[2,3]", "int64[1]={6}"], ["float[6]"])

An operator of any other domain is one record of ``signatures.kit.operator.operator``, which
registers through these.

Every entry records the module that declared it (``Entry.module``), which the conformance
statement shows.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from infer.contract import registry as table
from infer.contract.registry import Entry, RuleFn, lookup
from infer.contract.signature import canonical_domain

__all__ = [
    "Entry",
    "RuleFn",
    "RuleT",
    "lookup",
    "rule",
    "shape_rule",
    "unsupported",
    "example",
    "Example",
    "EXAMPLES",
]


def _names(ops: str | Iterable[str]) -> list[str]:
    return [ops] if isinstance(ops, str) else list(ops)


RuleT = TypeVar("RuleT", bound=RuleFn)  # a rule function, as its module declares it


def rule(ops: str | Iterable[str], since: int = 1, domain: str = "", pure: bool = True) -> Callable[[RuleT], RuleT]:
    """Register a Python rule for one or more operators; ``pure=False`` where its result rests on
    more than the node and its inputs (what the walk recorded elsewhere, a subgraph's walk)."""

    def wrap(fn: RuleT) -> RuleT:
        for op in _names(ops):
            # (a function made by exec without a module has None for one, where Entry holds a str)
            module = fn.__module__ or ""
            table.REGISTRY.add(Entry(canonical_domain(domain), op, since, rule=fn, module=module, pure=pure))
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
        table.REGISTRY.add(Entry(canonical_domain(domain), op, since, rule=fn, pattern=source, module=module))


def unsupported(ops: str | Iterable[str], reason: str, since: int = 1, domain: str = "", module: str = "") -> None:
    """Declare that outputs stay unknown (beyond their schema types), and why; ``module`` (the
    calling one unless given) declares them."""
    module = module or caller_module()
    for op in _names(ops):
        table.REGISTRY.add(Entry(canonical_domain(domain), op, since, reason=reason, module=module))


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
