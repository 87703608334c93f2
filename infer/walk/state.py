"""What one run builds and the parts of the walk share: the table, the diagnostics, the records.

The engine makes one ``RunState`` per run and hands it to the parts that read or add to it
(graphs, placement, the checks), instead of itself: they see the run's state, not the walk.
A second walk of the same model (``Engine.run``) starts a new scope, diagnostics and records
in the same state.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from onnx import FunctionProto, ModelProto

from infer.core import diagnostics as diag
from infer.core.diagnostics import Diagnostic, Location
from infer.core.dimscope import DimScope
from infer.core.dimtable import DimTable, Site
from infer.core.scopes import GraphRecord

if TYPE_CHECKING:  # pragma: no cover
    from infer.load.scan import Scan


@dataclass(slots=True)
class RunState:
    """One run's state. ``scan``: the model measured before anything walks it; ``opsets``: the
    imported versions by domain; ``functions``: the model's local functions by (domain, name,
    overload); ``directory``: where external data is resolved (``None``: nowhere)."""

    model: ModelProto
    options: Any  # ``infer.walk.engine.Options``
    scan: Scan
    scope: DimScope
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
