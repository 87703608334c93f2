"""The pre-scan: sizes of a model and every limit (Clause 15.4) it exceeds, before anything reads it.

``scan`` looks at the whole model before anything else does, iteratively (no Python recursion,
whatever the nesting), so that everything after it (the walk, the annotator, ``explain``) only
ever sees a model within the limits of ``infer.core.limits``. On the way it collects what later
passes would otherwise walk every node again for: dim_param names, subgraphs, node views.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from onnx import AttributeProto, GraphProto, ModelProto, TensorProto, TypeProto

from infer.core.dims.budget import RUN, NodeTimeout, run_seconds, tick
from infer.core.limits import MAX_EXPANSION_BASE, MAX_EXPANSION_RATIO, MAX_TYPE_DEPTH, Limits
from infer.core.scopes import MAIN, GraphPath
from infer.load.nodeview import SCALAR_TYPES, NodeBytes, NodeView, Views, read_light_nodes, read_nodes


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
    values: int = 0  # graph inputs, outputs and initializers of all graphs
    timed_out: bool = False  # the run's clock (``max_seconds``) ran out during the scan
    expanded_nodes: int = 0  # with each model-local function call counting its body
    depth: int = 0  # deepest static subgraph nesting (0: the main graph only)
    refusals: list[Refusal] = field(default_factory=list)
    external: list[tuple[str, TensorProto]] = field(default_factory=list)  # (graph path, tensor)
    # Found on the way, so that no other pass walks every node again:
    dim_params: set[str] = field(default_factory=set)  # every dim_param name declared anywhere
    input_dim_params: set[str] = field(default_factory=set)  # those the main graph's inputs declare
    graphs: list[tuple[str, GraphProto]] = field(default_factory=list)  # subgraphs the engine can walk
    views: dict[str, Views] = field(default_factory=dict)  # graph path -> its nodes, read once
    renamed: dict[str, tuple[int, ...]] = field(default_factory=dict)  # graph path -> nodes named as an earlier one
    # A declared type holds a negative extent or a nameless opaque type (validation says which).
    odd_types: bool = False
    # An attribute of a scalar or tensor type holds a graph, whose declarations the scan does
    # not read (``Views.hidden_graphs``): ``dim_params`` may then miss some of the model's.
    hidden_graphs: bool = False


def _type_problem(tp: TypeProto, max_rank: int, out: Scan, of_input: bool = False) -> str | None:
    """Why a declared type exceeds a limit (rank, nesting), or ``None``; iterative.

    On the way, the ``dim_param`` names of the type are added to ``out.dim_params`` (and to
    ``out.input_dim_params`` for a main graph's input, ``of_input``), and ``out.odd_types`` set
    where it holds a negative extent or an opaque type without a name.
    """
    dim_params = out.dim_params
    input_names = out.input_dim_params if of_input else None
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
                        if input_names is not None:
                            input_names.add(d.dim_param)
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


def scan(model: ModelProto, limits: Limits, light: list[bytes | None] | NodeBytes | None = None) -> Scan:
    """Sizes of ``model`` and every limit of ``limits`` it exceeds, without recursion.

    ``light``: the main graph's nodes serialized (``nodeview.light_nodes``), from which they are
    read faster; consumed. The scan ticks the run's clock (``max_seconds``): a scan past it
    refuses the model.
    """
    out = Scan()
    try:
        _scan_model(out, model, limits, light)
    except NodeTimeout as e:
        if e.level != RUN:
            raise
        out.timed_out = True
        _refuse(out, MAIN, f"its scan took longer than {run_seconds():g} s (limit max_seconds)")
    return out


def _scan_model(out: Scan, model: ModelProto, limits: Limits, light: list[bytes | None] | NodeBytes | None) -> None:
    max_depth, max_rank, max_nodes = limits.max_depth, limits.max_rank, limits.max_nodes
    max_values, max_node_values = limits.max_graph_values, limits.max_node_values
    calls: dict[tuple[str, str], int] = {}  # (domain, name) of a local function -> call sites
    counted = calls if len(model.functions) else None  # None: no local function, no call to count
    # Graphs are visited with an explicit stack: (graph, path, depth, walkable). A graph is
    # walkable when every step to it is a GRAPH attribute (what the engine follows).
    stack: list[tuple[GraphProto, str, int, bool]] = [(model.graph, MAIN, 0, True)]
    plain_tensors: set[bytes] = set()  # serialized tensor attributes within every limit
    while stack:
        g, path, depth, walkable = stack.pop()
        out.depth = max(out.depth, depth)
        if depth > max_depth:
            _refuse(out, path, f"subgraphs nest {depth} deep, above the limit {max_depth} (max_depth)")
            continue
        if walkable and depth:
            out.graphs.append((path, g))
        # Counted before anything of the graph is read: past the limit, its declarations and
        # nodes are not worth reading (refused below).
        out.values += len(g.input) + len(g.output) + len(g.initializer) + len(g.sparse_initializer)
        out.nodes += len(g.node)
        if out.values > max_values or out.nodes > max_nodes:
            continue
        _scan_declarations(out, g, path, max_rank)
        views = None
        if light is not None and path == MAIN:
            views = read_light_nodes(g.node, light, max_node_values)
        if views is None:
            views = read_nodes(g.node)
        if views.renamed:
            out.renamed[path] = views.renamed
        out.hidden_graphs = out.hidden_graphs or views.hidden_graphs
        if walkable:
            out.views[path] = views
        _scan_nodes(out, views, path, depth, walkable, max_rank, max_node_values, counted, plain_tensors, stack)
    if out.values > max_values:
        _refuse(
            out,
            MAIN,
            f"it declares {out.values} graph inputs, outputs and initializers, above the limit "
            f"{max_values} (max_graph_values)",
        )
    out.expanded_nodes = out.nodes + _function_nodes(model, calls, max(max_nodes, MAX_EXPANSION_BASE))
    _scan_functions(out, model, max_rank)
    _refuse_node_count(out, model, max_nodes)


def _refuse(out: Scan, path: str, message: str, value: str | None = None) -> None:
    """Record a limit exceeded at ``path`` (the first 20 only)."""
    if len(out.refusals) < 20:  # enough to explain; a model may exceed a limit a million times
        out.refusals.append(Refusal(path, message, value))


def _check_tensor(out: Scan, path: str, t: TensorProto, what: str, max_rank: int) -> None:
    """Refuse ``t`` (a ``what``: initializer, tensor attribute) past ``max_rank``; note it if external."""
    if len(t.dims) > max_rank:
        _refuse(out, path, f"{what} `{t.name}` has rank {len(t.dims)}, above the limit {max_rank} (max_rank)", t.name)
    if t.data_location == TensorProto.EXTERNAL or t.external_data:
        out.external.append((path, t))


def _scan_declarations(out: Scan, g: GraphProto, path: str, max_rank: int) -> None:
    """Check what graph ``g`` declares besides its nodes: its values' types and its initializers."""
    inputs = len(g.input) if path == MAIN else 0
    for k, vi in enumerate((*g.input, *g.output, *g.value_info)):
        if not k & 255:
            tick(256)  # (in steps: a declaration costs about a microsecond)
        problem = _type_problem(vi.type, max_rank, out, k < inputs) if vi.HasField("type") else None
        if problem:
            _refuse(out, path, f"`{vi.name}`: {problem}", vi.name)
    for k, t in enumerate(g.initializer):
        if not k & 255:
            tick(256)
        _check_tensor(out, path, t, "initializer", max_rank)
    for st in g.sparse_initializer:
        _check_tensor(out, path, st.values, "sparse initializer", max_rank)
        if len(st.dims) > max_rank:
            _refuse(out, path, f"sparse initializer `{st.values.name}` has rank {len(st.dims)} (max_rank {max_rank})")


def _scan_nodes(
    out: Scan,
    views: list[NodeView],
    path: str,
    depth: int,
    walkable: bool,
    max_rank: int,
    max_node_values: int,
    calls: dict[tuple[str, str], int] | None,
    plain_tensors: set[bytes],
    stack: list[tuple[GraphProto, str, int, bool]],
) -> None:
    """Check the attributes of the nodes ``views`` of the graph at ``path`` (``depth`` deep), and
    their inputs and outputs against ``max_node_values``, and push their subgraphs onto ``stack``;
    each node's (domain, op_type) is counted in ``calls`` (unless ``None``), and a tensor
    attribute within every limit is added to ``plain_tensors``.
    """
    for idx, n in enumerate(views):
        if not idx & 255:
            tick(256)
        if len(n.inputs) + len(n.outputs) > max_node_values:
            _refuse(
                out,
                f"{path}/{idx}",
                f"{n.op_type} has {len(n.inputs) + len(n.outputs)} inputs and outputs, "
                f"above the limit {max_node_values} (max_node_values)",
            )
        serialized = n.memo_base[-1] if n.memo_base is not None else None  # its attributes' bytes
        if calls is not None:
            key = (n.node.domain, n.op_type)
            calls[key] = calls.get(key, 0) + 1
        # Inference reads an attribute's payload by its type: a scalar one carries nothing to
        # measure (whatever else a malformed one sets, nothing reads it).
        for k, kind in enumerate(n.attr_types):
            if kind in SCALAR_TYPES:
                continue
            if kind == AttributeProto.TENSOR:  # a Constant's value: the common case, kept cheap
                if serialized is not None and serialized[k] in plain_tensors:
                    continue  # the same bytes passed already (repeated layers repeat constants)
                t = n.node.attribute[k].t
                if len(t.dims) > max_rank or t.data_location == TensorProto.EXTERNAL or len(t.external_data):
                    _check_tensor(out, f"{path}/{idx}", t, "tensor attribute", max_rank)
                elif serialized is not None:
                    plain_tensors.add(serialized[k])
                continue
            a = n.node.attribute[k]
            for t in _tensors_of((a,)):
                _check_tensor(out, f"{path}/{idx}", t, "tensor attribute", max_rank)
            if kind == AttributeProto.GRAPH:
                stack.append((a.g, GraphPath(path).subgraph(idx, a.name), depth + 1, walkable))
            elif a.HasField("g"):
                stack.append((a.g, GraphPath(path).subgraph(idx, a.name), depth + 1, False))
            for k, sub in enumerate(a.graphs):
                stack.append((sub, GraphPath(path).subgraph(idx, f"{a.name}[{k}]"), depth + 1, False))


def _scan_functions(out: Scan, model: ModelProto, max_rank: int) -> None:
    """Check the model-local functions' bodies: their tensor attributes and declared types."""
    for f in model.functions:
        for idx, n in enumerate(f.node):
            for t in _tensors_of(n.attribute):
                _check_tensor(out, f"function {f.domain}.{f.name}/{idx}", t, "tensor attribute", max_rank)
        for vi in getattr(f, "value_info", ()):
            problem = _type_problem(vi.type, max_rank, out) if vi.HasField("type") else None
            if problem:
                _refuse(out, f"function {f.domain}.{f.name}", f"`{vi.name}`: {problem}", vi.name)


def _refuse_node_count(out: Scan, model: ModelProto, max_nodes: int) -> None:
    """Refuse a model whose nodes, function calls expanded (``out.expanded_nodes``), are too many
    in all or too many more than it writes."""
    written = out.nodes + sum(len(f.node) for f in model.functions)
    if out.expanded_nodes > max_nodes:
        message = (
            f"the model has {out.expanded_nodes} nodes (function calls expanded), above the "
            f"limit {max_nodes} (max_nodes)"
        )
        _refuse(out, MAIN, message)
    elif out.expanded_nodes > MAX_EXPANSION_RATIO * written + MAX_EXPANSION_BASE:
        message = (
            f"its function calls expand {written} nodes into {out.expanded_nodes}, more than "
            f"{MAX_EXPANSION_RATIO} times plus {MAX_EXPANSION_BASE} (MAX_EXPANSION_RATIO)"
        )
        _refuse(out, MAIN, message)


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
