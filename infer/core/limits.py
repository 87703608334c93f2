"""Resource limits (Clause 15.4): the table and the node budget.

A model is untrusted data (Clause 15.1). Every limit below is documented in docs/limits.md and
a model past one is *refused* with a ``limit`` diagnostic (Clause 10), never a crash, a hang or
an unbounded allocation. The per-run limits are the fields of ``Limits`` (keyword arguments of
``infer_model``, ``--limit`` on the command line); the fixed ones are module constants of the code
that enforces them.

``infer.load.scan`` enforces the model-size limits before anything else reads the model; the
walk charges the node budget.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from infer.core.dims.budget import MAX_EXPRESSION_SIZE

# -- the per-run limits (defaults of ``Limits``) ----------------------------------------------

MAX_DEPTH = 64  # nesting of subgraphs and of function calls
MAX_RANK = 1024  # rank of any type the model declares or an initializer has
MAX_NODES = 1_000_000  # nodes of the model, each function call counting its body's nodes
# Function calls nested so that each calls the next twice make the work exponential in the size
# of the file: the expanded count may exceed the count of nodes written at most this much.
MAX_EXPANSION_RATIO = 64  # expanded nodes <= 64 x nodes written + MAX_EXPANSION_BASE
MAX_EXPANSION_BASE = 10_000
MAX_NODE_VISITS_PER_NODE = 4  # node inferences per (expanded) node: re-walks of Loop/Scan bodies
MAX_NODE_VISITS_BASE = 10_000  # ... plus this many, for small models with nested loops
MAX_MODEL_BYTES = (1 << 31) - 1  # a model file (protobuf cannot parse more in one message)
# Wall-clock seconds of one node's rule: a node inference costs about a millisecond, so only a
# construction built to be slow comes near it (docs/limits.md).
MAX_NODE_SECONDS = 10.0
MAX_TYPE_DEPTH = 64  # nesting of sequence/optional/map types in one TypeProto
# Inputs and outputs of one node. Every step of a node's inference (its inputs looked up, its memo
# key, its checks, a variadic rule, its outputs placed) costs some microseconds an input in
# Python, where onnx's C++ spends a fraction of one: a Sum of 5,000,000 inputs took onnx 2 s and
# onnx-infer 26 s. Real models stay far below (a Concat of some thousands of inputs).
MAX_NODE_VALUES = 100_000
# Graph inputs, outputs and initializers (sparse ones too) of all graphs together. Each costs
# onnx-infer 25 to 45 microseconds (a declared type read, its extents named, a value placed),
# ten to twenty times what onnx's C++ spends: 1,000,000 graph inputs took 200 s and 2.8 GB where
# onnx takes 13 s and 0.9 GB. At this limit a model costs some 5 s and 400 MB; real models declare
# some hundreds (the largest of the test corpus: 228).
MAX_GRAPH_VALUES = 100_000

OPSET_CEILING = (1 << 31) - 1  # opset versions above are read as this (onnx.defs takes a C int)

# -- fixed limits, enforced where they are defined (listed here for the documentation) ----------

MAX_KNOWN_ELEMENTS = 1 << 12  # elements of a tensor whose contents are tracked (infer.core.values)
# Floating-point constants compute shapes only in small tensors (Resize scales, a Range's bounds);
# larger ones are weights, whose elements would cost memory and time for nothing.
MAX_KNOWN_FLOAT_ELEMENTS = 1 << 8
MAX_EXTERNAL_HASH_BYTES = 1 << 32  # bytes of external files hashed per run to verify checksums (infer.load.external)


def _limit(default: Any, bounds: str, past: str, *, shown: Any = None, kind: str = "count") -> Any:
    """A field of ``Limits``: its default, and what the table of limits says of it. ``kind``:
    ``count`` (a non-negative integer), ``optional count`` (or ``None``: a default computed from
    the model), ``seconds`` (a non-negative number; 0 or ``None``: no limit)."""
    return field(
        default=default,
        metadata={"bounds": bounds, "past": past, "kind": kind, "shown": default if shown is None else shown},
    )


@dataclass(frozen=True)
class Limits:
    """The resource limits of one run (Clause 15.4), the one definition that ``infer_model``'s
    keyword arguments, the command line's ``--limit NAME=VALUE`` and the table of limits
    (``TABLE``, docs/limits.md, the conformance statement) read. Defaults: the module constants.

    ``Limits(max_nodes=50_000)`` or ``Limits().replace(max_nodes=50_000)``; a name that is no
    limit or a value out of range is a ``ValueError`` naming it.
    """

    max_depth: int = _limit(
        MAX_DEPTH,
        "nesting of subgraphs and function calls",
        "the model (static nesting) or the deeper call (dynamic) is refused: `limit` error",
    )
    max_rank: int = _limit(
        MAX_RANK, "rank of a declared type, an initializer or a tensor attribute", "the model is refused: `limit` error"
    )
    max_nodes: int = _limit(
        MAX_NODES, "nodes of all graphs, a function's body counted at every call", "the model is refused: `limit` error"
    )
    max_node_visits: int | None = _limit(
        None,
        "node inferences in one run, re-walks of Loop/Scan bodies and function calls included",
        "inference stops: `limit` error; values not reached stay unknown",
        shown=f"{MAX_NODE_VISITS_PER_NODE} x expanded nodes + {MAX_NODE_VISITS_BASE}",
        kind="optional count",
    )
    max_expression_size: int = _limit(
        MAX_EXPRESSION_SIZE,
        "terms of one symbolic extent",
        "that extent becomes a fresh variable whose reason names the limit: `limit` warning",
    )
    max_model_bytes: int = _limit(
        MAX_MODEL_BYTES, "size of a model (a file, bytes, a ModelProto serialized)", "not read: exit status 2"
    )
    max_node_seconds: float | None = _limit(
        MAX_NODE_SECONDS,
        "wall-clock seconds of one node's rule (0 or None: no limit; the only limit whose "
        "effect depends on the machine)",
        "that node's outputs are unknown: `limit` warning; inference goes on",
        kind="seconds",
    )
    max_seconds: float | None = _limit(
        None,
        "wall-clock seconds of one run: the scan and the walk of `infer_model`, and apart from "
        "them the writing of the annotated copy (0 or None: no limit)",
        "the scan: the model is refused; the walk: inference stops, values not reached stay "
        "unknown; the writing: values not yet written are left without `value_info`. A `limit` error",
        shown="none",
        kind="seconds",
    )
    max_node_values: int = _limit(
        MAX_NODE_VALUES, "inputs and outputs of one node", "the model is refused: `limit` error"
    )
    max_graph_values: int = _limit(
        MAX_GRAPH_VALUES,
        "graph inputs, outputs and initializers (sparse ones included) of all graphs together",
        "the model is refused: `limit` error",
    )

    def __post_init__(self) -> None:
        for f in fields(self):
            _check(f.name, f.metadata["kind"], getattr(self, f.name))

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    @classmethod
    def from_overrides(cls, overrides: Mapping[str, Any], base: Limits | None = None) -> Limits:
        """``base`` (the defaults) with ``overrides`` (name -> value) in place, each checked."""
        unknown = [name for name in overrides if name not in cls.names()]
        if unknown:
            raise ValueError(f"{unknown[0]!r} is not a limit; the limits are {', '.join(cls.names())}")
        # Each value checked here, before the dataclass is made: a value of the wrong type must be
        # the ValueError the docstring promises, and a class compiled with mypyc would refuse it
        # with a TypeError of its own before ``__post_init__`` ran.
        kinds = {f.name: f.metadata["kind"] for f in fields(cls)}
        for name, value in overrides.items():
            _check(name, kinds[name], value)
        return dataclasses.replace(base or cls(), **overrides)

    def replace(self, **overrides: Any) -> Limits:
        return self.from_overrides(overrides, self)

    def kind(self, name: str) -> str:
        """``count``, ``optional count`` or ``seconds`` (see ``_limit``)."""
        kind: str = next(f.metadata["kind"] for f in fields(self) if f.name == name)  # as ``_limit`` stores it
        return kind


def _check(name: str, kind: str, value: Any) -> None:
    if value is None and kind != "count":
        return
    if kind == "seconds":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < math.inf:
            raise ValueError(f"{name} must be a non-negative number of seconds (0 or None: no limit), not {value!r}")
    elif isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer, not {value!r}")


def _row(name: str) -> tuple[str, Any, str, str]:
    f = next(f for f in fields(Limits) if f.name == name)
    return name, f.metadata["shown"], f.metadata["bounds"], f.metadata["past"]


# (name, default, what it bounds, what happens past it): docs/limits.md and the conformance
# statement read this table; the per-run rows are read from ``Limits``.
TABLE: list[tuple[str, Any, str, str]] = [
    _row("max_depth"),
    _row("max_rank"),
    _row("max_nodes"),
    ("MAX_EXPANSION_RATIO", f"{MAX_EXPANSION_RATIO} x nodes + {MAX_EXPANSION_BASE}",
     "nodes with function calls expanded, against the nodes the file holds",
     "the model is refused: `limit` error"),
    _row("max_node_visits"),
    _row("max_expression_size"),
    _row("max_model_bytes"),
    _row("max_node_seconds"),
    _row("max_seconds"),
    _row("max_node_values"),
    _row("max_graph_values"),
    ("MAX_TYPE_DEPTH", MAX_TYPE_DEPTH, "nesting of sequence, optional and map types",
     "the model is refused: `limit` error"),
    ("MAX_KNOWN_ELEMENTS", MAX_KNOWN_ELEMENTS, "elements of a tensor whose contents are tracked",
     "larger tensors have unknown contents"),
    ("MAX_KNOWN_FLOAT_ELEMENTS", MAX_KNOWN_FLOAT_ELEMENTS,
     "elements of a floating-point initializer or Constant whose contents are read",
     "larger ones (weights) have unknown contents"),
    ("MAX_INT_MAGNITUDE", "2^128", "an integer in extent arithmetic",
     "the result is unknown (a fresh variable where it is an extent)"),
    ("MAX_EXTERNAL_HASH_BYTES", MAX_EXTERNAL_HASH_BYTES,
     "bytes of external files hashed in one run to verify checksums, each file once",
     "references still to verify are not read: `external-data` warning"),
]  # fmt: skip


def how_to_raise(message: str) -> str | None:
    """The suggestion of a ``limit`` diagnostic whose ``message`` names a per-run limit
    (``(max_nodes)``, ``(limit max_seconds)``): how to raise it; ``None`` if it names none."""
    name = next((n for n in Limits.names() if f"{n})" in message), None)
    if name is None:
        return None
    return f"if the model is trusted, raise the limit: --limit {name}=VALUE (infer_model(..., {name}=VALUE))"


class LimitExceeded(BaseException):
    """Inference must stop now (the node budget is spent).

    A ``BaseException`` on purpose, like ``KeyboardInterrupt``: rules catch ``Exception`` to turn
    their own bugs into ``rule-crash`` diagnostics, and must not swallow this one. The engine
    catches it at the top of the run and reports a ``limit`` diagnostic.
    """


@dataclass
class NodeVisits:
    """Node inferences left in one walk (Clause 15.4: bounded processor time)."""

    allowed: int
    used: int = 0

    def charge(self) -> None:
        self.used += 1
        if self.used > self.allowed:
            raise LimitExceeded(
                f"inference stopped after {self.allowed} node inferences (limit max_node_visits); "
                "values not reached by then are not inferred"
            )


def node_budget(expanded_nodes: int, max_node_visits: int | None) -> NodeVisits:
    """The budget of a model of ``expanded_nodes`` nodes (``None``: the documented default)."""
    if max_node_visits is None:
        max_node_visits = MAX_NODE_VISITS_PER_NODE * expanded_nodes + MAX_NODE_VISITS_BASE
    return NodeVisits(max_node_visits)
