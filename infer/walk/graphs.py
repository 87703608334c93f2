"""Walking graphs: the main graph, a node's graph attributes, a function body at a call site.

Each starts a ``Frame``: what the graph declares (``value_info`` and outputs, merged where a
value is declared twice), what it binds before its nodes run (inputs, initializers; Clause 7.2),
then its nodes (``Engine.walk_nodes``), then its outputs. A subgraph sees its enclosing graphs'
names (Clause 5.4.3); a function body sees only its call's inputs and attributes (Clause 8.4).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from onnx import AttributeProto, FunctionProto, GraphProto, NodeProto, TypeProto, helper

from infer.check.validate import check_graph
from infer.contract.context import RuleContext, node_of, site_of
from infer.contract.signature import STANDARD_DOMAINS, canonical_domain
from infer.core import types as T
from infer.core.diagnostics import Location
from infer.core.dimtable import Origin, Site
from infer.core.dimwriter import write_text
from infer.core.scopes import MAIN, Frame, GraphPath, GraphRecord, Scope
from infer.core.values import Value, value_from_tensor
from infer.load import external
from infer.load.nodeview import read_nodes
from infer.walk.placement import strip_shape, with_empty_contents

if TYPE_CHECKING:  # pragma: no cover
    from infer.load.nodeview import NodeView
    from infer.walk.placement import Placement
    from infer.walk.state import RunState


WalkNodes = Callable[[Frame, "list[NodeView]", bool], None]  # (frame, views, consume)


class Graphs:
    """The graph-level part of one run's walk (the node-level part is the engine's).

    Each walk is handed ``walk_nodes``, the engine's walk of a graph's nodes, which it recurses
    into: held here, the engine's own method would make the run a cycle (engine -> graphs ->
    engine), which only a full collection of the heap frees once its caller drops the result."""

    def __init__(self, state: RunState, placement: Placement):
        self.state = state
        self.placement = placement

    # -- the main graph -------------------------------------------------------------------------

    def main(self, walk_nodes: WalkNodes) -> None:
        """Bind the main graph's inputs and initializers, walk its nodes, check its outputs."""
        e = self.state
        graph = e.model.graph
        frame = self.new_frame(graph, MAIN, Scope(), e.opsets, 0)
        inits = self.initializers(graph, MAIN)
        for inp in graph.input:
            self._bind_input(frame, inp, inits)
        for name, v in inits.items():
            frame.record.values[name] = v
            frame.record.initializers.add(name)
        views = e.scan.views.pop(MAIN, None)  # read by the scan, walked once
        walk_nodes(frame, views or read_nodes(graph.node), True)
        self.finish_outputs(frame, graph)
        for path, sub in e.scan.graphs:  # structural checks of subgraphs no rule walked
            if path not in e.records:
                check_graph(e, sub, path, top_level=False)

    def _bind_input(self, frame: Frame, inp: Any, inits: dict[str, Value]) -> None:
        e, name = self.state, inp.name
        declared = self.placement.declared_type(inp.type, name) if inp.HasField("type") else T.UNKNOWN
        if name not in inits:
            self._assume_readings(inp)
        if isinstance(declared, T.TensorType) and declared.shape is None:
            e.report("missing-io-shape", f"graph input `{name}` has no shape", Location(MAIN, value=name))
        if name in inits:
            init = inits.pop(name)
            if not isinstance(declared, T.UnknownType):
                # The default an initializer gives must be a value of the input's type.
                for c in T.refine(declared, init.type)[1]:
                    e.report(
                        "declared-type-clash",
                        f"graph input `{name}` is declared {declared} but its initializer is {init.type}: {c}",
                        Location(MAIN, value=name),
                        "make the declaration and the initializer agree",
                    )
            ir = e.model.ir_version
            if ir and ir < 4:
                # Before IR 4 every initializer is listed as an input and is a constant.
                frame.record.values[name] = init
                frame.record.initializers.add(name)
                return
            # IR >= 4: a default the caller may override (Clause 7.2); contents not usable.
            if isinstance(declared, T.UnknownType):
                declared = T.TensorType(getattr(init.type, "elem", None))

        def origin(axis: int) -> tuple[Origin, tuple]:
            why = f"graph input `{name}` declares axis {axis} without extent or name"
            return Origin("fresh", why, Site(MAIN), name, axis), ("input", name, axis)

        frame.record.values[name] = with_empty_contents(Value(self.placement.fill_unknown(declared, origin)))
        frame.record.inputs.append(name)

    def _assume_readings(self, inp: Any) -> None:
        """Each name on graph input ``inp`` that the table reads as an expression is an assumption
        (``DimScope.assume_reading``): the caller gives that axis an extent of its own."""
        scope = self.state.scope
        for axis, param in _dim_params(inp.type):
            reading = scope.table.readings.get(param)
            if reading is not None:
                why = f"graph input `{inp.name}` axis {axis} is declared '{param}', read as the expression it spells"
                scope.assume_reading(param, reading, Site(MAIN), why)

    # -- frames ---------------------------------------------------------------------------------

    def new_frame(
        self,
        graph: GraphProto,
        path: GraphPath,
        scope: Scope,
        opsets: Mapping[str, int],
        depth: int,
        functions_active: tuple = (),
        attr_refs: Mapping[str, AttributeProto] | None = None,
    ) -> Frame:
        """A frame for ``graph``, its record registered and its declarations checked."""
        e = self.state
        declared: dict[str, TypeProto] = {}
        for vi in (*graph.value_info, *graph.output):
            if not vi.HasField("type"):
                continue
            prev = declared.get(vi.name)
            if prev is not None and prev is not vi.type:
                # Declared twice (value_info and graph output): both bind; keep what they state
                # together, and report where they contradict each other.
                a, b = self.placement.declared_type(prev, vi.name), self.placement.declared_type(vi.type, vi.name)
                merged, clashes = T.refine(a, b)
                for c in clashes:
                    e.report(
                        "declared-type-clash",
                        f"`{vi.name}` is declared {a} and {b}: {c}",
                        Location(path, value=vi.name),
                    )
                if not clashes:
                    declared[vi.name] = T.to_proto(merged, write_text) or vi.type
                    continue
            declared[vi.name] = vi.type
        record = GraphRecord(path, "graph", nodes=graph.node)
        record.outputs = [o.name for o in graph.output]
        scope.values = record.values  # what the graph defines is what it records: one dict
        e.records[path] = record
        check_graph(e, graph, path, top_level=depth == 0)
        return Frame(path, scope, opsets, declared, record, depth, functions_active, attr_refs)

    def initializers(self, graph: GraphProto, path: str) -> dict[str, Value]:
        """Initializer values; small integer ones kept externally are read when opted in."""
        e = self.state
        out: dict[str, Value] = {}
        for t in graph.initializer:
            if external.is_external(t) and external.wanted(t):
                t, problem = external.contents_for_inference(
                    t, e.directory, e.external_reads, opted_in=e.options.read_external_data
                )
                if problem is not None:
                    e.add_diagnostic_once(
                        "external-data",
                        f"external tensor `{t.name}`: {problem}",
                        Location(path, value=t.name),
                        problem.severity,
                    )
            out[t.name] = value_from_tensor(t)
        for st in graph.sparse_initializer:
            # An initializer stored in sparse form: its value is the dense tensor (onnxruntime
            # densifies it, and onnx's inference types its consumers so), contents not tracked.
            elem = st.values.data_type or None
            shape = tuple(int(d) if d >= 0 else None for d in st.dims)
            out[st.values.name] = Value(T.TensorType(elem, shape))
        return out

    def finish_outputs(self, frame: Frame, graph: GraphProto) -> list[Value]:
        e = self.state
        outs = []
        for o in graph.output:
            v = frame.scope.lookup(o.name)
            if v is None:
                e.report(
                    "undefined-value",
                    f"graph output `{o.name}` is not produced by any node, input or initializer",
                    Location(frame.path, value=o.name),
                )
                v = Value(self.placement.declared_type(o.type, o.name)) if o.HasField("type") else Value()
            elif o.name not in frame.scope.values:
                # The definition is silent; onnxruntime refuses to load such a model.
                e.report(
                    "outer-scope-output",
                    f"subgraph output `{o.name}` is a value of an enclosing graph, returned directly",
                    Location(frame.path, value=o.name),
                    f"return Identity(`{o.name}`) instead, which onnxruntime accepts",
                )
            outs.append(v)
        return outs

    # -- a node's graph attribute ---------------------------------------------------------------

    def subgraph(
        self, walk_nodes: WalkNodes, ctx: RuleContext, attr_name: str, inputs: list[Value], quiet: bool, iterated: bool
    ) -> list[Value] | None:
        """Walk the graph attribute ``attr_name`` of ``ctx``'s node with ``inputs`` bound.

        A walk replaces what an earlier walk of the same subgraph recorded (a Loop body is walked
        until its loop-carried types are stable, and only its last walk holds for every
        iteration). ``quiet`` drops the diagnostics and facts of this walk: the rounds of such a
        fixed point report nothing, the final walk reports. ``iterated``: the graph runs once
        per iteration or element, so a dim name declared in it, which would claim one extent for
        every iteration, is not read (exporters write the first iteration's).
        """
        e = self.state
        frame: Frame = ctx._frame
        graph = ctx.attrs.get(attr_name)
        if not isinstance(graph, GraphProto):
            return None
        if frame.depth + 1 > e.options.limits.max_depth:
            e.report_at(site_of(ctx), "limit", f"subgraphs nest deeper than {e.options.limits.max_depth}")
            return None
        path = frame.path.subgraph(site_of(ctx).node_index or 0, attr_name)
        if path in e.records:  # a re-walk (Loop fixed point): drop the earlier walk's records
            for stale in [p for p in e.records if GraphPath(p).within(path)]:
                del e.records[stale]
        n_diagnostics, n_facts = len(e.diagnostics), len(e.table.facts)
        sub = self.new_frame(
            graph, path, Scope(frame.scope), frame.opsets, frame.depth + 1, frame.functions_active, frame.attr_refs
        )
        at = site_of(ctx).key
        sub.ident = GraphPath(at[0]).subgraph(at[1], attr_name)
        if iterated:
            sub.declared = {name: _without_dim_names(tp) for name, tp in sub.declared.items()}
        for i, inp in enumerate(graph.input):
            self._bind_subgraph_input(frame, sub, inp, inputs[i] if i < len(inputs) else Value())
        for name, v in self.initializers(graph, path).items():
            if frame.scope.lookup(name) is not None:
                e.report(
                    "shadowing", f"subgraph initializer `{name}` shadows an outer name", Location(path, value=name)
                )
            sub.record.values[name] = v
            sub.record.initializers.add(name)
        try:
            walk_nodes(sub, e.scan.views.get(path) or read_nodes(graph.node), False)
            return self.finish_outputs(sub, graph)
        finally:
            if quiet:
                del e.diagnostics[n_diagnostics:]
                e.table.rollback_facts(n_facts)

    def _bind_subgraph_input(self, frame: Frame, sub: Frame, inp: Any, v: Value) -> None:
        e = self.state
        if inp.HasField("type"):
            # What the node binds is authoritative: a declared body input often states only the
            # first iteration's type (exporters write the initial value's), and runtimes do not
            # check it. The declaration reports clashes and fills what is unknown.
            declared = self.placement.declared_type(inp.type, inp.name)
            for c in T.refine(declared, v.type)[1]:
                e.report(
                    "declared-type-clash",
                    f"subgraph input `{inp.name}` is declared {declared} but receives {v.type}: {c}",
                    Location(sub.path, value=inp.name),
                )
            t = v.type
            if isinstance(t, T.UnknownType):
                t = strip_shape(declared)  # the kind and element type; extents may change
            elif isinstance(t, T.TensorType) and t.elem is None and isinstance(declared, T.TensorType):
                t = T.TensorType(declared.elem, t.shape)
            v = Value(t, v.known)
        if frame.scope.lookup(inp.name) is not None:
            e.report(
                "shadowing", f"subgraph input `{inp.name}` shadows an outer name", Location(sub.path, value=inp.name)
            )
        sub.record.values[inp.name] = v
        sub.record.inputs.append(inp.name)

    # -- a function body at a call site ---------------------------------------------------------

    def _refused_call(self, frame: Frame, ctx: RuleContext, fn: FunctionProto, key: tuple, loc: Location) -> bool:
        """Whether calling ``fn`` here recurses or nests past the limit (reported if so)."""
        e = self.state
        if key in frame.functions_active:
            cycle = frame.functions_active[frame.functions_active.index(key) + 1 :]
            through = " through " + ", ".join(f"{d}:{n}" for d, n, _ in cycle) if cycle else ""
            e.report("recursion", f"function {fn.domain}:{fn.name} calls itself{through}", loc)
            ctx.because("the function is recursive")
            return True
        if frame.depth + 1 > e.options.limits.max_depth:
            e.report("limit", f"functions nest deeper than {e.options.limits.max_depth}", loc)
            return True
        return False

    def function(self, walk_nodes: WalkNodes, frame: Frame, ctx: RuleContext, fn: FunctionProto) -> list[Any] | None:
        """The outputs of calling ``fn`` with ``ctx``'s inputs and attributes (Clause 8.4)."""
        e = self.state
        key = (canonical_domain(fn.domain), fn.name, getattr(fn, "overload", ""))
        loc = Location(frame.path, site_of(ctx).node_index, node_of(ctx).name, ctx.op_type)
        if self._refused_call(frame, ctx, fn, key, loc):
            return None
        opsets = dict(frame.opsets)
        for imp in fn.opset_import:
            opsets[canonical_domain(imp.domain)] = int(imp.version)
        path = frame.path.call(site_of(ctx).node_index or 0, fn.domain, fn.name)
        scope = Scope()
        record = GraphRecord(path, "function", nodes=list(fn.node))
        scope.values = record.values
        record.outputs = list(fn.output)
        e.records[path] = record
        # A function is polymorphic (Clause 8.4): a dim name in its value_info is not the
        # model-scoped variable of that name, and need not be one extent across call sites.
        declared = {vi.name: _without_dim_names(vi.type) for vi in getattr(fn, "value_info", ()) if vi.HasField("type")}
        at = site_of(ctx).key
        ident = GraphPath(at[0]).call(at[1], fn.domain, fn.name)
        sub = Frame(
            path,
            scope,
            opsets,
            declared,
            record,
            frame.depth + 1,
            frame.functions_active + (key,),
            _attribute_references(frame, ctx, fn),
            ident,
        )
        omitted = {name for i, name in enumerate(fn.input) if name and (i >= len(ctx.inputs) or ctx.inputs[i] is None)}
        for i, name in enumerate(fn.input):
            if name and name not in omitted:
                record.values[name] = ctx.inputs[i]  # type: ignore[assignment]
                record.inputs.append(name)
        # Inputs may be left off at the end (they are absent in the body); outputs may not:
        # onnxruntime refuses such a call, and onnx's strict inference fails on it.
        if len(ctx.inputs) > len(fn.input) or ctx.n_outputs != len(fn.output):
            e.report(
                "arity",
                f"{ctx.op_type} is called with {len(ctx.inputs)} inputs and {ctx.n_outputs} outputs; "
                f"the function has {len(fn.input)} and {len(fn.output)}",
                loc,
            )
        record.nodes = [_absent(n, omitted) for n in fn.node]
        walk_nodes(sub, read_nodes(record.nodes), False)
        out = []
        for name in fn.output:
            v = scope.lookup(name)
            if v is None and name not in omitted:
                e.report(
                    "undefined-value",
                    f"function output `{name}` is not produced by the body of {fn.domain}:{fn.name}",
                    Location(path, value=name),
                )
            out.append(v)
        return out


def _attribute_references(frame: Frame, ctx: RuleContext, fn: FunctionProto) -> dict[str, AttributeProto]:
    """What the body's ``ref_attr_name``s read: schema defaults, the function's defaults, then
    the call's attributes (themselves references in a calling function)."""
    refs: dict[str, AttributeProto] = {}
    if ctx.sig is not None and ctx.sig.domain in STANDARD_DOMAINS:
        # A schema's body refers to the operator's attributes, whose defaults the schema has.
        for name, spec in ctx.sig.attributes.items():
            if spec.default is not None:
                refs[name] = helper.make_attribute(name, spec.default)
    for a in fn.attribute_proto:  # defaults (IR >= 9)
        refs[a.name] = a
    for a in node_of(ctx).attribute:
        if a.ref_attr_name:
            outer = (frame.attr_refs or {}).get(a.ref_attr_name)
            if outer is not None:
                refs[a.name] = outer
        else:
            refs[a.name] = a
    return refs


def _absent(n: NodeProto, omitted: set[str]) -> NodeProto:
    """``n`` with every input the call site omits made absent (Clause 8.4)."""
    if not omitted.intersection(n.input):
        return n
    copy = NodeProto()
    copy.CopyFrom(n)
    copy.input[:] = ["" if i in omitted else i for i in n.input]
    return copy


def _without_dim_names(tp: TypeProto) -> TypeProto:
    """A copy of ``tp`` whose dims keep their values but not their names."""
    out = TypeProto()
    out.CopyFrom(tp)
    stack = [out]
    while stack:
        t = stack.pop()
        kind = t.WhichOneof("value")
        if kind in ("tensor_type", "sparse_tensor_type"):
            for d in getattr(t, kind).shape.dim:
                if d.HasField("dim_param"):
                    d.ClearField("dim_param")
        elif kind in ("sequence_type", "optional_type"):
            stack.append(getattr(t, kind).elem_type)
        elif kind == "map_type":
            stack.append(t.map_type.value_type)
    return out


def _dim_params(tp: TypeProto) -> list[tuple[int, str]]:
    """(axis, name) of each ``dim_param`` of a tensor type, or of a sequence's or optional's element."""
    kind = tp.WhichOneof("value")
    if kind in ("sequence_type", "optional_type"):
        inner = getattr(tp, kind)
        return _dim_params(inner.elem_type) if inner.HasField("elem_type") else []
    if kind not in ("tensor_type", "sparse_tensor_type"):
        return []
    return [(axis, d.dim_param) for axis, d in enumerate(getattr(tp, kind).shape.dim) if d.dim_param]
