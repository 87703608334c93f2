"""One run's context: what it may spend, what it reuses, what it knows and what it builds.

The engine makes one ``RunState`` per run and hands it to the parts that read or add to it
(graphs, placement, the rule runner, the checks), instead of itself: they see the run, not the
walk. It owns the run's scope (``DimScope``: the table, the facts), its budget (the expression
bound, the refusals and the clocks, ``infer.core.dims.budget.Budget``), the walk's node visits,
and its memo policy (``Memo``: which options key a kept result, which store keeps it). A second
walk of the same model (``Engine.run``) starts a new scope, node visits, diagnostics and records
in the same state; the budget and the memo policy stay the run's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from onnx import FunctionProto, ModelProto

from infer.core import diagnostics as diag
from infer.core.diagnostics import Diagnostic, Location
from infer.core.dims.budget import Budget
from infer.core.dimscope import DimScope
from infer.core.dimtable import DimTable, Site
from infer.core.limits import Limits, NodeVisits
from infer.core.scopes import GraphRecord
from infer.load.scan import Scan  # (at run time: compiled, RunState checks its field's class)
from infer.walk.memo import Memo


class RunOptions(Protocol):
    """What a run reads of its options: ``infer.walk.engine.Options``, which this module cannot
    name (the engine imports it)."""

    @property
    def propagate_values(self) -> bool: ...

    @property
    def read_external_data(self) -> bool: ...

    @property
    def limits(self) -> Limits: ...

    @property
    def progress(self) -> Callable[[int, int], None] | None: ...


@dataclass(slots=True)
class RunState:
    """One run's state. ``scan``: the model measured before anything walks it; ``scope``,
    ``budget``, ``memo``, ``visits``: see the module docstring; ``opsets``: the imported versions
    by domain; ``functions``: the model's local functions by (domain, name, overload);
    ``directory``: where external data is resolved (``None``: nowhere)."""

    model: ModelProto
    options: RunOptions
    scan: Scan
    scope: DimScope
    budget: Budget
    memo: Memo
    visits: NodeVisits
    opsets: dict[str, int]
    functions: dict[tuple[str, str, str], FunctionProto]
    directory: Path | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    records: dict[str, GraphRecord] = field(default_factory=dict)
    external_reads: dict[Any, Any] = field(default_factory=dict)  # external references read (or refused)
    clean_checks: set[tuple] = field(default_factory=set)  # node checks that found nothing (``validate``)

    @property
    def table(self) -> DimTable:
        """The run's dimension variables (what ``result.dims`` shows and the writers name)."""
        return self.scope.table

    @property
    def propagate_values(self) -> bool:
        return self.options.propagate_values

    def report(self, code: str, message: str, location: Location, suggestion: str | None = None) -> None:
        self.diagnostics.append(diag.make(code, message, location, suggestion))

    def report_at(self, site: Site, code: str, message: str, suggestion: str | None = None) -> None:
        self.report(code, message, Location(site.graph, site.node_index, site.node_name, site.op_type), suggestion)

    def add_diagnostic_once(self, code: str, message: str, location: Location, severity: str) -> None:
        d = diag.make(code, message, location, severity=severity)
        if d not in self.diagnostics:
            self.diagnostics.append(d)
