"""Resource limits (Clause 15.4): the table, the node budget, and the pre-scan that enforces them.

A model is untrusted data (Clause 15.1). Every limit below is documented in docs/limits.md and
a model past one is *refused* with a ``limit`` diagnostic (Clause 10), never a crash, a hang or
an unbounded allocation. The per-run limits are the fields of ``Limits`` (keyword arguments of
``infer_model``, ``--limit`` on the command line); the fixed ones are module constants of the code
that enforces them.

``scan`` looks at the whole model before anything else does, iteratively (no Python recursion,
whatever the nesting), so that everything after it (the walk, the annotator, ``explain``) only
ever sees a model within the limits.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from typing import Any

from onnx import AttributeProto, GraphProto, ModelProto, TensorProto, TypeProto

from .dims.budget import MAX_EXPRESSION_SIZE
from .nodeview import NodeView, read_light_nodes, read_nodes

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

OPSET_CEILING = (1 << 31) - 1  # opset versions above are read as this (onnx.defs takes a C int)

# -- fixed limits, enforced where they are defined (listed here for the documentation) ----------

MAX_KNOWN_ELEMENTS = 1 << 12  # elements of a tensor whose contents are tracked (infer.values)
# Floating-point constants compute shapes only in small tensors (Resize scales, a Range's bounds);
# larger ones are weights, whose elements would cost memory and time for nothing.
MAX_KNOWN_FLOAT_ELEMENTS = 1 << 8
MAX_EXTERNAL_HASH_BYTES = 1 << 32  # bytes of external files hashed per run to verify checksums (infer.external)


def _limit(default: Any, bounds: str, past: str, *, shown: Any = None, kind: str = "count") -> Any:
    """A field of ``Limits``: its default, and what the table of limits says of it. ``kind``:
    ``count`` (a non-negative integer), ``optional count`` (or ``None``: a default computed from
    the model), ``seconds`` (a non-negative number; 0 or ``None``: no limit)."""
    return field(default=default, metadata={"bounds": bounds, "past": past, "kind": kind,
                                            "shown": default if shown is None else shown})  # fmt: skip


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
        return dataclasses.replace(base or cls(), **overrides)

    def replace(self, **overrides: Any) -> Limits:
        return self.from_overrides(overrides, self)

    def kind(self, name: str) -> str:
        """``count``, ``optional count`` or ``seconds`` (see ``_limit``)."""
        return next(f.metadata["kind"] for f in fields(self) if f.name == name)


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


class LimitExceeded(BaseException):
    """Inference must stop now (the node budget is spent).

    A ``BaseException`` on purpose, like ``KeyboardInterrupt``: rules catch ``Exception`` to turn
    their own bugs into ``rule-crash`` diagnostics, and must not swallow this one. The engine
    catches it at the top of the run and reports a ``limit`` diagnostic.
    """


@dataclass
class Budget:
    """Node inferences left in one run (Clause 15.4: bounded processor time)."""

    allowed: int
    used: int = 0

    def charge(self) -> None:
        self.used += 1
        if self.used > self.allowed:
            raise LimitExceeded(
                f"inference stopped after {self.allowed} node inferences (limit max_node_visits); "
                "values not reached by then are not inferred"
            )


def node_budget(expanded_nodes: int, max_node_visits: int | None) -> Budget:
    """The budget of a model of ``expanded_nodes`` nodes (``None``: the documented default)."""
    if max_node_visits is None:
        max_node_visits = MAX_NODE_VISITS_PER_NODE * expanded_nodes + MAX_NODE_VISITS_BASE
    return Budget(max_node_visits)


@contextmanager
def stopping(engine: Any) -> Iterator[None]:
    """Where the node budget runs out, stop the walk: keep what is sound, report the limit."""
    from .diagnostics import Location

    try:
        yield
    except LimitExceeded as e:
        # A Loop body interrupted mid fixed point holds one round's types, not every round's:
        # only the values the main graph's finished nodes produced are kept.
        for path in [p for p in engine.records if p != "main"]:
            del engine.records[path]
        engine.report("limit", str(e), Location("main"))


# -- the pre-scan --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Refusal:
    """A limit the model exceeds: where, and a one-line message."""

    path: str
    message: str
    value: str | None = None


@dataclass
class Scan:
    """What the pre-scan found: sizes, and every limit exceeded."""

    nodes: int = 0  # nodes of all graphs, once each
    expanded_nodes: int = 0  # with each model-local function call counting its body
    depth: int = 0  # deepest static subgraph nesting (0: the main graph only)
    refusals: list[Refusal] = field(default_factory=list)
    external: list[tuple[str, TensorProto]] = field(default_factory=list)  # (graph path, tensor)
    # Found on the way, so that no other pass walks every node again:
    dim_params: set[str] = field(default_factory=set)  # every dim_param name declared anywhere
    graphs: list[tuple[str, GraphProto]] = field(default_factory=list)  # subgraphs the engine can walk
    views: dict[str, list[NodeView]] = field(default_factory=dict)  # graph path -> its nodes, read once
    renamed: dict[str, tuple[int, ...]] = field(default_factory=dict)  # graph path -> nodes named as an earlier one
    # A declared type holds a negative extent or a nameless opaque type (validation says which).
    odd_types: bool = False


def _type_problem(tp: TypeProto, max_rank: int, out: Scan) -> str | None:
    """Why a declared type exceeds a limit (rank, nesting), or ``None``; iterative.

    On the way, the ``dim_param`` names of the type are added to ``out.dim_params``, and
    ``out.odd_types`` set where it holds a negative extent or an opaque type without a name.
    """
    dim_params = out.dim_params
    stack = [(tp, 0)]
    while stack:
        t, depth = stack.pop()
        if depth > MAX_TYPE_DEPTH:
            return f"its type nests deeper than {MAX_TYPE_DEPTH} levels"
        kind = t.WhichOneof("value")
        if kind in ("tensor_type", "sparse_tensor_type"):
            inner = getattr(t, kind)
            if inner.HasField("shape"):
                if len(inner.shape.dim) > max_rank:
                    return f"its type has rank {len(inner.shape.dim)}, above the limit {max_rank} (max_rank)"
                for d in inner.shape.dim:
                    if d.dim_param:
                        dim_params.add(d.dim_param)
                    elif d.dim_value < 0:
                        out.odd_types = True
        elif kind == "opaque_type" and not t.opaque_type.name:
            out.odd_types = True
        elif kind in ("sequence_type", "optional_type"):
            inner = getattr(t, kind)
            if inner.HasField("elem_type"):
                stack.append((inner.elem_type, depth + 1))
        elif kind == "map_type" and t.map_type.HasField("value_type"):
            stack.append((t.map_type.value_type, depth + 1))
    return None


_SCALAR_ATTRS = frozenset({
    AttributeProto.FLOAT, AttributeProto.INT, AttributeProto.STRING, AttributeProto.FLOATS,
    AttributeProto.INTS, AttributeProto.STRINGS, AttributeProto.TYPE_PROTO, AttributeProto.TYPE_PROTOS,
})  # fmt: skip


def _graphs_of(node_attrs: Any) -> Iterator[tuple[str, GraphProto]]:
    for a in node_attrs:
        if a.type == AttributeProto.GRAPH or a.HasField("g"):
            yield a.name, a.g
        for k, g in enumerate(a.graphs):
            yield f"{a.name}[{k}]", g


def _tensors_of(node_attrs: Any) -> Iterator[TensorProto]:
    for a in node_attrs:
        if a.HasField("t"):
            yield a.t
        yield from a.tensors
        if a.HasField("sparse_tensor"):
            yield a.sparse_tensor.values
        for st in a.sparse_tensors:
            yield st.values


def scan(
    model: ModelProto, max_depth: int, max_rank: int, max_nodes: int, light: list[bytes | None] | None = None
) -> Scan:
    """Sizes of ``model`` and every limit it exceeds, without recursion.

    ``light``: the main graph's nodes serialized (``nodeview.light_nodes``), from which they are
    read faster; consumed.
    """
    out = Scan()
    calls: dict[tuple[str, str], int] = {}  # (domain, name) of a local function -> call sites

    def refuse(path: str, message: str, value: str | None = None) -> None:
        if len(out.refusals) < 20:  # enough to explain; a model may exceed a limit a million times
            out.refusals.append(Refusal(path, message, value))

    def tensor(path: str, t: TensorProto, what: str) -> None:
        if len(t.dims) > max_rank:
            refuse(path, f"{what} `{t.name}` has rank {len(t.dims)}, above the limit {max_rank} (max_rank)", t.name)
        if t.data_location == TensorProto.EXTERNAL or t.external_data:
            out.external.append((path, t))

    # Graphs are visited with an explicit stack: (graph, path, depth, walkable). A graph is
    # walkable when every step to it is a GRAPH attribute (what the engine follows).
    stack: list[tuple[GraphProto, str, int, bool]] = [(model.graph, "main", 0, True)]
    count_calls = len(model.functions) > 0
    plain_tensors: set[bytes] = set()  # serialized tensor attributes within every limit
    while stack:
        g, path, depth, walkable = stack.pop()
        out.depth = max(out.depth, depth)
        if depth > max_depth:
            refuse(path, f"subgraphs nest {depth} deep, above the limit {max_depth} (max_depth)")
            continue
        if walkable and depth:
            out.graphs.append((path, g))
        for vi in (*g.input, *g.output, *g.value_info):
            problem = _type_problem(vi.type, max_rank, out) if vi.HasField("type") else None
            if problem:
                refuse(path, f"`{vi.name}`: {problem}", vi.name)
        for t in g.initializer:
            tensor(path, t, "initializer")
        for st in g.sparse_initializer:
            tensor(path, st.values, "sparse initializer")
            if len(st.dims) > max_rank:
                refuse(path, f"sparse initializer `{st.values.name}` has rank {len(st.dims)} (max_rank {max_rank})")
        out.nodes += len(g.node)
        if out.nodes > max_nodes:
            continue  # refused below; not worth reading
        views = None
        if light is not None and path == "main":
            views = read_light_nodes(g.node, light)
        if views is None:
            views = read_nodes(g.node)
        if views.renamed:
            out.renamed[path] = views.renamed
        if walkable:
            out.views[path] = views
        for idx, n in enumerate(views):
            serialized = n.memo_base[-1] if n.memo_base is not None else None  # its attributes' bytes
            if count_calls:
                key = (n.node.domain, n.op_type)
                calls[key] = calls.get(key, 0) + 1
            # Inference reads an attribute's payload by its type: a scalar one carries nothing to
            # measure (whatever else a malformed one sets, nothing reads it).
            for k, kind in enumerate(n.attr_types):
                if kind in _SCALAR_ATTRS:
                    continue
                if kind == AttributeProto.TENSOR:  # a Constant's value: the common case, kept cheap
                    if serialized is not None and serialized[k] in plain_tensors:
                        continue  # the same bytes passed already (repeated layers repeat constants)
                    t = n.node.attribute[k].t
                    if len(t.dims) > max_rank or t.data_location == TensorProto.EXTERNAL or len(t.external_data):
                        tensor(f"{path}/{idx}", t, "tensor attribute")
                    elif serialized is not None:
                        plain_tensors.add(serialized[k])
                    continue
                a = n.node.attribute[k]
                for t in _tensors_of((a,)):
                    tensor(f"{path}/{idx}", t, "tensor attribute")
                if kind == AttributeProto.GRAPH:
                    stack.append((a.g, f"{path}/{idx}:{a.name}", depth + 1, walkable))
                elif a.HasField("g"):
                    stack.append((a.g, f"{path}/{idx}:{a.name}", depth + 1, False))
                for k, sub in enumerate(a.graphs):
                    stack.append((sub, f"{path}/{idx}:{a.name}[{k}]", depth + 1, False))
    out.expanded_nodes = out.nodes + _function_nodes(model, calls, max(max_nodes, MAX_EXPANSION_BASE))
    for f in model.functions:
        for idx, n in enumerate(f.node):
            for t in _tensors_of(n.attribute):
                tensor(f"function {f.domain}.{f.name}/{idx}", t, "tensor attribute")
        for vi in getattr(f, "value_info", ()):
            problem = _type_problem(vi.type, max_rank, out) if vi.HasField("type") else None
            if problem:
                refuse(f"function {f.domain}.{f.name}", f"`{vi.name}`: {problem}", vi.name)
    written = out.nodes + sum(len(f.node) for f in model.functions)
    if out.expanded_nodes > max_nodes:
        refuse("main", f"the model has {out.expanded_nodes} nodes (function calls expanded), above the "
                       f"limit {max_nodes} (max_nodes)")  # fmt: skip
    elif out.expanded_nodes > MAX_EXPANSION_RATIO * written + MAX_EXPANSION_BASE:
        refuse("main", f"its function calls expand {written} nodes into {out.expanded_nodes}, more than "
                       f"{MAX_EXPANSION_RATIO} times plus {MAX_EXPANSION_BASE} (MAX_EXPANSION_RATIO)")  # fmt: skip
    return out


def _function_nodes(model: ModelProto, calls: dict[tuple[str, str], int], cap: int) -> int:
    """Nodes that walking every call of a model-local function adds (capped just past ``cap``).

    A function body calling another function twice, 40 levels deep, would be walked 2^40 times:
    the size of each function with its calls expanded is computed bottom-up (a recursive
    function counts its body once; the walker refuses the recursion itself).
    """
    local = {(f.domain, f.name): f for f in model.functions}
    if not local:
        return 0
    size: dict[tuple[str, str], int] = {}
    state: dict[tuple[str, str], int] = {}  # 1 visiting, 2 done

    def body_calls(f: Any) -> list[tuple[str, str]]:
        out = []
        stack = list(f.node)
        while stack:  # calls inside subgraphs of the body count too
            n = stack.pop()
            if (n.domain, n.op_type) in local:
                out.append((n.domain, n.op_type))
            for _, g in _graphs_of(n.attribute):
                stack.extend(g.node)
        return out

    def nodes_in(f: Any) -> int:
        count, stack = 0, list(f.node)
        while stack:
            n = stack.pop()
            count += 1
            for _, g in _graphs_of(n.attribute):
                stack.extend(g.node)
        return count

    for key in local:
        work = [(key, False)]
        while work:  # iterative post-order over the call graph
            k, expanded = work.pop()
            if state.get(k) == 2:
                continue
            if expanded:
                total = nodes_in(local[k])
                for c in body_calls(local[k]):
                    total += size.get(c, 0)  # 0 for a call still being visited: a recursion
                    if total > cap:
                        break
                size[k] = min(total, cap + 1)
                state[k] = 2
                continue
            if state.get(k) == 1:
                continue
            state[k] = 1
            work.append((k, True))
            work.extend((c, False) for c in body_calls(local[k]) if state.get(c) is None)
    total = 0
    for k, n in calls.items():
        if k in size:
            total += n * size[k]
            if total > cap:
                return cap + 1
    return total
