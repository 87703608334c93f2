"""The result of inferring one model: types, shapes, dimension table, diagnostics."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from onnx import ModelProto

from infer.check.domain import Domain, domain_of
from infer.core import dims as D
from infer.core import types as T
from infer.core.diagnostics import ERROR, Diagnostic, Location, make
from infer.core.dims.budget import RUN, NodeTimeout, run_limit, run_seconds
from infer.core.dimscope import Assumption
from infer.core.dimtable import DimTable
from infer.core.limits import how_to_raise
from infer.core.scopes import MAIN, GraphRecord
from infer.core.values import Value
from infer.out.annotate import write_annotations
from infer.out.cost import Cost
from infer.out.cost import build as build_cost
from infer.out.explain import Explanation, explain
from infer.walk.engine import Engine

if TYPE_CHECKING:  # pragma: no cover
    from infer.out.verify import Bounds, VerifyReport

# How completely a value is known, from best to worst.
KNOWN = "known"  # every dim an integer
SYMBOLIC = "symbolic"  # every dim an integer or an expression over declared variables
PARTIAL = "partial"  # rank known, some dim a fresh variable
UNKNOWN_RANK = "unknown-rank"
UNTYPED = "untyped"
LEVELS = (KNOWN, SYMBOLIC, PARTIAL, UNKNOWN_RANK, UNTYPED)


def classify(t: T.Type, table: DimTable) -> str:
    if isinstance(t, T.UnknownType):
        return UNTYPED
    if isinstance(t, (T.TensorType, T.SparseTensorType)):
        if t.shape is None:
            return UNKNOWN_RANK
        if t.elem is None:
            return PARTIAL
    levels = [KNOWN]
    for d in T.dims_of(t):
        if d is None or table.is_fresh(d):
            levels.append(PARTIAL)
        elif not isinstance(d, int):
            levels.append(SYMBOLIC)
    return max(levels, key=LEVELS.index)


@dataclass
class Summary:
    values: int
    counts: dict[str, int]

    @property
    def typed(self) -> int:
        return self.values - self.counts.get(UNTYPED, 0)

    def to_dict(self) -> dict[str, Any]:
        return {"values": self.values, "typed": self.typed, **{k: self.counts.get(k, 0) for k in LEVELS}}

    def __str__(self) -> str:
        c = self.counts
        return (
            f"{self.values} values: {self.typed} typed, {c.get(KNOWN, 0)} fully known, "
            f"{c.get(SYMBOLIC, 0)} symbolic, {c.get(PARTIAL, 0)} with unknown dims, "
            f"{c.get(UNKNOWN_RANK, 0)} of unknown rank"
        )


class InferenceResult:
    """Everything inference found. ``model`` is an annotated copy; the input is never modified."""

    def __init__(self, engine: Engine, source: ModelProto, owned: bool, dims_style: str):
        self._engine = engine
        self._source = source
        self._owned = owned
        self._dims_style = dims_style
        self._model: ModelProto | None = None
        self._domain: Domain | None = None
        self._cost: Cost | None = None

    # -- the annotated model ------------------------------------------------------------------

    def _write(self, m: ModelProto) -> None:
        """Annotate ``m`` within the run's clock (``max_seconds``, afresh for the writing): past
        it, what is not yet written is left out, and a ``limit`` error says so. (Each type is
        computed whole before it is copied in: an interrupted writing claims nothing wrong.)"""
        with run_limit(self._engine.state.options.limits.max_seconds):
            try:
                write_annotations(m, self._engine, self._dims_style)
            except NodeTimeout as e:
                if e.level != RUN:
                    raise
                message = (
                    f"writing the annotated model stopped after {run_seconds():g} s (limit max_seconds); "
                    "values not written by then have no value_info"
                )
                self._engine.state.diagnostics.append(make("limit", message, Location(MAIN), how_to_raise(message)))

    @property
    def model(self) -> ModelProto:
        """The model with inferred ``value_info`` written in (built on first access)."""
        if self._model is None:
            if self._owned:
                m = self._source  # parsed by us from a path or bytes: nobody else holds it
            else:
                m = ModelProto()
                m.CopyFrom(self._source)
            self._write(m)
            self._model = m
        return self._model

    @property
    def source(self) -> ModelProto:
        """The model inference read: the caller's, never modified; one read from a path or bytes
        is annotated in place once ``model`` is built (``source_annotated``)."""
        return self._source

    @property
    def source_annotated(self) -> bool:
        return self._owned and self._model is not None

    @property
    def directory(self) -> Path | None:
        """Where the model's external data is resolved (the model file's directory), if anywhere."""
        return self._engine.state.directory

    # -- lookups ------------------------------------------------------------------------------

    @property
    def dims(self) -> DimTable:
        return self._engine.state.table

    @property
    def assumptions(self) -> list[Assumption]:
        """Conditions on dimension variables that some claims rest on (a window that fits, an
        integer exactly representable in float32); runs outside them are not covered."""
        return self._engine.state.scope.assumptions

    @property
    def input_variables(self) -> list[str]:
        """The dimension variables of the main graph's inputs (initializers left out), in the
        order the inputs give them: the sizes a caller chooses."""
        main = self._engine.state.records[MAIN]
        names: dict[str, None] = {}
        for name in main.inputs:
            if name in main.initializers or name not in main.values:
                continue
            for d in T.dims_of(main.values[name].type):
                if D.is_symbolic(d):
                    names.update(dict.fromkeys(sorted(D.free_names(d))))
        # A name read as an expression is still a size the caller chooses (an assumption ties it).
        names.update(dict.fromkeys(self._engine.state.scope.readings))
        return list(names)

    @property
    def domain(self) -> Domain:
        """Which sizes of its inputs the model accepts: what its nodes require of the input
        variables (``infer.check.domain``; docs/domain.md)."""
        if self._domain is None:
            self._domain = domain_of(self._engine.state.scope, self.input_variables)
        return self._domain

    @property
    def cost(self) -> Cost:
        """What the shapes cost: bytes of values, work of nodes, weights, the peak of live memory
        (``infer.out.cost``; docs/cost.md), computed on first access; nothing is run."""
        if self._cost is None:
            state = self._engine.state
            self._cost = build_cost(
                state.records, state.scope, self.domain, self._source, state.table, self.input_variables
            )
        return self._cost

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return self._engine.state.diagnostics

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == ERROR]

    @property
    def graphs(self) -> dict[str, GraphRecord]:
        return self._engine.state.records

    def _record_for(self, name: str, graph: str | None) -> GraphRecord:
        if graph is not None:
            rec = self._engine.state.records.get(graph)
            if rec is None or name not in rec.values:
                raise KeyError(f"no value `{name}` in graph {graph}")
            return rec
        main = self._engine.state.records[MAIN]
        if name in main.values:
            return main
        for path in sorted(self._engine.state.records):
            rec = self._engine.state.records[path]
            if rec.kind == "graph" and name in rec.values:
                return rec
        raise KeyError(f"no value `{name}` in the model")

    def value(self, name: str, graph: str | None = None) -> Value:
        return self._record_for(name, graph).values[name]

    def type_of(self, name: str, graph: str | None = None) -> T.Type:
        """The inferred type of ``name`` (main graph first, then subgraphs)."""
        return self.value(name, graph).type

    def shape_of(self, name: str, graph: str | None = None) -> tuple[D.Dim, ...] | None:
        """Dims of tensor ``name``: ints and ``dims.Expr``; ``None`` for unknown rank."""
        t = self.type_of(name, graph)
        return t.shape if isinstance(t, (T.TensorType, T.SparseTensorType)) else None

    def explain(self, name: str, graph: str | None = None, dim: int | None = None) -> Explanation:
        """Why ``name``'s type, rank or dims (only axis ``dim`` if given) are not known."""
        rec = self._record_for(name, graph)
        return explain(self._engine.state.records, self._engine.state.table, rec.path, name, dim)

    def values(self) -> Iterator[tuple[str, str, Value]]:
        """(graph path, name, value) for every value computed by a node, subgraphs included."""
        for path, rec in self._engine.state.records.items():
            if rec.kind != "graph":
                continue
            for name in rec.producers:
                yield path, name, rec.values[name]

    def summary(self) -> Summary:
        counts: Counter[str] = Counter()
        n = 0
        for _, _, v in self.values():
            n += 1
            counts[classify(v.type, self.dims)] += 1
        return Summary(n, dict(counts))

    def verify(
        self,
        *,
        samples: int = 5,
        bind: Mapping[str, int] | None = None,
        int_range: tuple[int, int] | None = None,
        seed: int = 0,
        bounds: Bounds | None = None,
        read_external_data: bool = False,
    ) -> VerifyReport:
        """Check these claims against onnxruntime at ``samples`` bindings on random inputs
        (``infer.out.verify.verify``; needs ``pip install 'onnx-infer[verify]'``)."""
        from infer.out.verify import verify

        return verify(
            self,
            samples=samples,
            bind=bind,
            int_range=int_range,
            seed=seed,
            bounds=bounds,
            read_external_data=read_external_data,
        )

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready report: summary, values, dimension table and diagnostics."""
        table = self.dims
        return {
            "summary": self.summary().to_dict(),
            "values": [
                {"graph": g, "name": n, "type": str(v.type), "status": classify(v.type, table)}
                for g, n, v in self.values()
            ],
            "dims": {
                "variables": [
                    {
                        "name": var.name,
                        "kind": var.origin.kind,
                        "definition": None if var.definition is None else D.to_str(var.definition),
                        "origin": var.origin.reason,
                        "node": str(var.origin.site) if var.origin.site else None,
                    }
                    for var in table
                ],
                "facts": [str(f) for f in table.facts],
                "assumptions": [str(a) for a in self.assumptions],
            },
            "diagnostics": [d.to_dict() for d in self.diagnostics],
        }
