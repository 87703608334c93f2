"""The table of inference rules the walk looks operators up in, and how it is filled.

The contract layer owns the table: an entry covers one operator from ``since`` up to the next
entry of the same operator, and is either a rule (a Python function or a compiled DSL pattern)
or an explicit "unsupported, because ..." that ``explain`` and the conformance statement read.
The rules package (``signatures``) fills it as its modules are imported (``signatures.kit.registry``
has the functions that register). The walk never imports the rules: ``ensure`` asks the rules
package, by name (``infer.core.imports``), to import the modules of an operator it meets, so a
process imports the rules its models use and no layer of ``infer`` imports ``signatures``.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from infer.contract.signature import canonical_domain
from infer.core import imports

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


def lookup(domain: str, op_type: str, version: int) -> Entry | None:
    """The entry in force for ``op_type`` of ``domain`` at ``version`` (``ensure`` imports its rules)."""
    return REGISTRY.lookup(domain, op_type, version)


def ensure(domain: str, op_type: str) -> None:
    """Import the rule modules that declare ``op_type`` of ``domain`` (idempotent; nothing for an
    operator no module declares)."""
    imports.module(imports.RULES).ensure(domain, op_type)


def load_all() -> None:
    """Import every rule module of every domain (idempotent): the whole table."""
    imports.module(imports.RULES).load_all()
