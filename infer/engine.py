"""The walker: orders nodes, resolves names through scopes, runs rules, refines, records.

One ``Engine`` infers one model. It walks the top-level graph in topological order (Clause
7.5), looks each node's rule up by (domain, op_type, version), turns what the rule returns into
values (element types from the schema, unknown extents into fresh variables with their origin),
refines them against what the model declares (Clause 9.4) and records where everything came
from. Subgraphs (Clause 7.6) and function bodies (Clause 8.4) are walked by the same code.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, NamedTuple

from onnx import AttributeProto, FunctionProto, GraphProto, ModelProto, NodeProto, TensorProto, TypeProto, helper

import signatures
from signatures.registry import lookup
from signatures.schema import (
    ONNX_OPSET,
    STANDARD_DOMAINS,
    Signature,
    attribute_value,
    canonical_domain,
    function_body,
    parse_type_str,
    signature,
)

from . import custom_schemas, external, limits
from . import diagnostics as diag
from . import dims as D
from . import types as T
from .claims import within_bounds
from .context import RuleContext, RuleError
from .diagnostics import Diagnostic, Location
from .dims import Dim
from .dimtable import DimTable, Origin, Site
from .nodeview import NodeView, has_subgraph, read_nodes
from .scopes import MAIN, ContentNote, Frame, GraphPath, GraphRecord, Scope
from .validate import check_graph, check_model, check_node
from .values import Known, Value, in_domain, value_from_tensor, without_overflow

DEBUG = bool(os.environ.get("ONNX_INFER_DEBUG"))


@dataclass
class Options:
    """Knobs of one inference run (all keyword arguments of ``infer_model``)."""

    dims_style: str = "expressions"  # "expressions" | "strict": how dims are written back
    bindings: Mapping[str, int] = field(default_factory=dict)  # dim_param -> int
    # Resource limits (Clause 15.4; docs/limits.md, infer/limits.py). A model past one is refused.
    max_depth: int = limits.MAX_DEPTH  # subgraph and function nesting
    max_rank: int = limits.MAX_RANK  # rank of a declared type, initializer or tensor attribute
    max_nodes: int = limits.MAX_NODES  # nodes, a function's body counted at every call
    max_node_visits: int | None = None  # node inferences; None: 4 x expanded nodes + 10,000
    max_expression_size: int = limits.MAX_EXPRESSION_SIZE  # terms of one symbolic extent
    # Read small integer initializers kept in external files (Clauses 13, 15.3): opt-in, since a
    # model is untrusted data (Clause 15.5).
    read_external_data: bool = False
    # Follow computed contents (Shape -> Gather -> Concat -> Reshape). Off, only constants
    # (initializers, Constant nodes) are read, as onnx.shape_inference does without data_prop.
    propagate_values: bool = True
    # Ask the inference function of an operator schema registered at run time
    # (``onnx.defs.register_schema``) for an operator onnx-infer has no rule for
    # (infer/custom_schemas.py). On in the drop-in for onnx.shape_inference, which does so.
    custom_schemas: bool = False


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for the duration (restored as it was).

    Inference allocates many small objects and frees few: the collector would traverse all of
    them, and everything else alive, again and again (a third of the time on a large model, and
    more than linear in its size). Nothing inference builds needs it while it runs.

    On the way out, what was allocated meanwhile is moved to the oldest generation, as two
    collections would have moved the objects that survive them; left in the youngest, the
    first collection after the run would traverse all of them (as long again as a repeated
    model's inference).
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            if gc.get_freeze_count() == 0:  # (objects the program froze itself must stay frozen)
                gc.freeze()  # every tracked object to the permanent generation (a list splice) ...
                gc.unfreeze()  # ... and from there into the oldest one
            gc.enable()


def _attr_python(a: AttributeProto) -> Any:
    if a.type in (AttributeProto.GRAPH, AttributeProto.GRAPHS, AttributeProto.TENSOR,
                  AttributeProto.SPARSE_TENSOR, AttributeProto.TYPE_PROTO):  # fmt: skip
        from onnx import helper

        return helper.get_attribute_value(a)
    return attribute_value(a)


class Engine:
    def __init__(
        self,
        model: ModelProto,
        options: Options | None = None,
        directory: Path | None = None,
        light_nodes: list[bytes | None] | None = None,
    ):
        """``light_nodes``: the main graph's nodes serialized (``nodeview.light_nodes``), when the
        caller has them (the loader does); the scan reads the nodes from them, consuming them."""
        signatures.load_all()
        self.model = model
        self.options = o = options or Options()
        if o.custom_schemas:
            signature.cache_clear()  # schemas registered or deregistered since the last run
        self.directory = directory  # where external data is resolved (Clause 13.2); None: nowhere
        # Clause 15.4: the whole model is measured, without recursion, before anything walks it;
        # a model past a limit is refused by ``run`` and nothing else reads it.
        self.scan = limits.scan(model, o.max_depth, o.max_rank, o.max_nodes, light_nodes)
        self.budget = limits.node_budget(self.scan.expanded_nodes, o.max_node_visits)
        self._overflows_nested: list[int] = []  # size-limit refusals inside the rules running
        # id(node) -> (node, outer names its subgraphs read); the node is kept so its id stays its own
        self._uses: dict[int, tuple[NodeProto, frozenset[str]]] = {}
        self._external: dict[Any, Any] = {}  # external references already read (or refused)
        # Pure rule results (see ``_inputs_and_key``), with the placed values when placing adds nothing.
        self._memo: dict[tuple, tuple[list[Prepared], tuple[Value, ...] | None]] = {}
        # Bits of the hashes of keys computed once: about 8 a node (fewer collisions than nodes).
        self._seen_bits = min(_SEEN_BITS, 1 << max(12, (8 * self.scan.expanded_nodes).bit_length()))
        self._memo_seen = bytearray(self._seen_bits // 8)
        self._shared_values: dict[Value, Value] = {}  # one object for equal values without contents
        self.clean_checks: set[tuple] = set()  # node checks that found nothing (``validate``)
        reserved = frozenset() if self.scan.refusals else frozenset(self.scan.dim_params)
        self.table = DimTable(reserved=reserved, bindings=dict(self.options.bindings))
        self.diagnostics: list[Diagnostic] = []
        self.records: dict[str, GraphRecord] = {}
        self._warned_default = False
        self.opsets = self._read_opsets(model.opset_import, Location(MAIN))
        # onnx.defs takes a C ``int``: a version past it is newer than any published one anyway,
        # and one below 1 names none.
        self.opsets = {d: min(max(v, 0), limits.OPSET_CEILING) for d, v in self.opsets.items()}
        self.functions: dict[tuple[str, str, str], FunctionProto] = {
            (canonical_domain(f.domain), f.name, f.overload): f for f in model.functions
        }
        self.function_domains = frozenset(d for d, _, _ in self.functions) - set(STANDARD_DOMAINS)

    # -- reporting ------------------------------------------------------------------------------

    def report(self, code: str, message: str, location: Location, suggestion: str | None = None) -> None:
        self.diagnostics.append(diag.make(code, message, location, suggestion))

    def report_at(self, site: Site, code: str, message: str, suggestion: str | None = None) -> None:
        self.report(code, message, Location(site.graph, site.node_index, site.node_name, site.op_type), suggestion)

    @contextmanager
    def reporting_once(self) -> Iterator[None]:
        """A diagnostic reported more than once within the block is kept once."""
        start = len(self.diagnostics)
        try:
            yield
        finally:
            seen: set = set()
            kept = [d for d in self.diagnostics[start:] if not (d in seen or seen.add(d))]  # type: ignore[func-returns-value]
            del self.diagnostics[start:]
            self.diagnostics.extend(kept)

    def recorded_value(self, graph: str, name: str) -> Value | None:
        rec = self.records.get(graph)
        return None if rec is None else rec.values.get(name)

    @property
    def ir_version(self) -> int:
        return self.model.ir_version

    def _read_opsets(self, imports: Iterable[Any], where: Location) -> dict[str, int]:
        opsets: dict[str, int] = {}
        for imp in imports:
            opsets[canonical_domain(imp.domain)] = int(imp.version)
        self.implicit_default = "" not in opsets
        if self.implicit_default:
            # Clause 5.3.2: the default domain is imported implicitly; its version is not stated,
            # so the newest is assumed and a node that relies on it gets a warning.
            opsets[""] = ONNX_OPSET
        return opsets

    # -- types from the model -------------------------------------------------------------------

    def declared_type(self, tp: TypeProto, value: str) -> T.Type:
        def read_dim(t: Any, axis: int) -> Dim:
            d = t.shape.dim[axis]
            kind = d.WhichOneof("value")
            if kind == "dim_value":
                return int(d.dim_value) if d.dim_value >= 0 else None
            if kind == "dim_param" and d.dim_param:
                return self.table.declared(d.dim_param, f"on `{value}`", value)
            return None

        return T.from_proto(tp, read_dim)

    def _fill_unknown(self, t: T.Type, origin_for: Any) -> T.Type:
        """Replace unknown dims of tensor types by fresh variables (``origin_for(axis)``)."""
        if isinstance(t, (T.TensorType, T.SparseTensorType)) and t.shape is not None:
            if any(d is None for d in t.shape):
                shape = tuple(self.table.fresh(*origin_for(axis)) if d is None else d for axis, d in enumerate(t.shape))
                return type(t)(t.elem, shape)
        elif isinstance(t, T.SequenceType):
            # A variable in an element type would claim one extent for every element (Clause
            # 6.5.2, note): an extent the elements may not share stays unnamed.
            return t
        elif isinstance(t, T.OptionalType):
            return T.OptionalType(self._fill_unknown(t.elem, origin_for))
        return t

    # -- the walk -------------------------------------------------------------------------------

    def run(self) -> None:
        """Infer the model; walk it again when what its nodes require sharpens earlier results.

        A Conv deep in the graph tells us its input extent is at least its kernel; a Div of that
        extent computed earlier (exporters compute output sizes with Div) could not know it. When
        the first walk learned such a bound and left extents unknown, a second walk starts with
        the bounds (fresh variables are keyed by node, so the second walk names them the same).
        """
        with collector_paused():
            self._run()

    def _run(self) -> None:
        try:
            self._run_once()
            minimums = dict(self.table.minimums)
            if not minimums or not any(v.is_fresh for v in self.table):
                return
            self.table = DimTable(reserved=self.table.reserved, bindings=self.table.bindings, minimums=minimums,
                                  var_minimums=dict(self.table.var_minimums))  # fmt: skip
            self.diagnostics = []
            self.records = {}
            self._warned_default = False
            self.budget = limits.node_budget(self.scan.expanded_nodes, self.options.max_node_visits)
            self._run_once()
        finally:
            self.scan.views.clear()  # read for the walk; a result kept for long need not hold them

    def _run_once(self) -> None:
        self._memo, self._memo_seen = {}, bytearray(self._seen_bits // 8)  # results name this walk's variables
        self._shared_values = {}
        if self.scan.refusals:
            self.records[MAIN] = GraphRecord(MAIN, "graph")
            for r in self.scan.refusals:
                self.report("limit", f"the model is refused: {r.message}", Location(r.path, value=r.value))
            return
        check_model(self, self.model)
        for path, t in self.scan.external:
            for problem in external.reference_problems(t):
                self.diagnostics.append(diag.make(
                    "external-data", f"external tensor `{t.name}`: {problem}", Location(path, value=t.name),
                    "store the tensor in the model, or fix its reference", severity=diag.ERROR,
                ))  # fmt: skip
        # Past the node budget the walk stops; ``stopping`` keeps what is sound and reports it.
        with D.expression_limit(self.options.max_expression_size), limits.stopping(self):
            graph = self.model.graph
            frame = self._new_frame(graph, MAIN, Scope(), self.opsets, 0)
            ir = self.model.ir_version
            inits = self._initializers(graph, MAIN)
            for inp in graph.input:
                name = inp.name
                declared = self.declared_type(inp.type, name) if inp.HasField("type") else T.UNKNOWN
                if isinstance(declared, (T.TensorType,)) and declared.shape is None:
                    self.report("missing-io-shape", f"graph input `{name}` has no shape", Location(MAIN, value=name))
                if name in inits:
                    init = inits.pop(name)
                    if not isinstance(declared, T.UnknownType):
                        # The default an initializer gives must be a value of the input's type.
                        for c in T.refine(declared, init.type)[1]:
                            self.report(
                                "declared-type-clash",
                                f"graph input `{name}` is declared {declared} but its initializer is {init.type}: {c}",
                                Location(MAIN, value=name),
                                "make the declaration and the initializer agree",
                            )
                    if ir and ir < 4:
                        # Before IR 4 every initializer is listed as an input and is a constant.
                        frame.record.values[name] = init
                        frame.record.initializers.add(name)
                        continue
                    # IR >= 4: a default the caller may override (Clause 7.2); contents not usable.
                    if isinstance(declared, T.UnknownType):
                        declared = T.TensorType(getattr(init.type, "elem", None))
                t = self._fill_unknown(
                    declared,
                    lambda axis, n=name: (
                        Origin(
                            "fresh",
                            f"graph input `{n}` declares axis {axis} without extent or name",
                            Site(MAIN),
                            n,
                            axis,
                        ),
                        ("input", n, axis),
                    ),
                )
                v = _with_empty_contents(Value(t))
                frame.record.values[name] = v
                frame.record.inputs.append(name)
            for name, v in inits.items():
                frame.record.values[name] = v
                frame.record.initializers.add(name)
            self._walk_nodes(frame, self.scan.views.pop(MAIN, None) or read_nodes(graph.node), consume=True)
            self._finish_outputs(frame, graph)
            self._check_unwalked()

    def _check_unwalked(self) -> None:
        """Structural checks of subgraphs no rule walked (their operator has no rule, say)."""
        for path, graph in self.scan.graphs:
            if path not in self.records:
                check_graph(self, graph, path, top_level=False)

    def _new_frame(
        self,
        graph: GraphProto,
        path: GraphPath,
        scope: Scope,
        opsets: Mapping[str, int],
        depth: int,
        functions_active: tuple = (),
        attr_refs: Mapping[str, AttributeProto] | None = None,
    ) -> Frame:
        declared: dict[str, TypeProto] = {}
        for vi in (*graph.value_info, *graph.output):
            if vi.HasField("type"):
                prev = declared.get(vi.name)
                if prev is not None and prev is not vi.type:
                    # Declared twice (value_info and graph output): both bind; keep what they
                    # state together, and report where they contradict each other.
                    a, b = self.declared_type(prev, vi.name), self.declared_type(vi.type, vi.name)
                    merged, clashes = T.refine(a, b)
                    for c in clashes:
                        self.report("declared-type-clash", f"`{vi.name}` is declared {a} and {b}: {c}",
                                    Location(path, value=vi.name))  # fmt: skip
                    if not clashes:
                        declared[vi.name] = T.to_proto(merged, _write_dim) or vi.type
                        continue
                declared[vi.name] = vi.type
        record = GraphRecord(path, "graph", nodes=graph.node)
        record.outputs = [o.name for o in graph.output]
        scope.values = record.values  # what the graph defines is what it records: one dict
        self.records[path] = record
        check_graph(self, graph, path, top_level=depth == 0)
        return Frame(path, scope, opsets, declared, record, depth, functions_active, attr_refs)

    def _initializers(self, graph: GraphProto, path: str) -> dict[str, Value]:
        """Initializer values; small integer ones kept externally are read when opted in."""
        out: dict[str, Value] = {}
        for t in graph.initializer:
            if external.is_external(t) and external.wanted(t):
                t, problem = external.contents_for_inference(
                    t, self.directory, self._external, opted_in=self.options.read_external_data
                )
                if problem is not None:
                    d = diag.make("external-data", f"external tensor `{t.name}`: {problem}",
                                  Location(path, value=t.name), severity=problem.severity)  # fmt: skip
                    if d not in self.diagnostics:
                        self.diagnostics.append(d)
            out[t.name] = value_from_tensor(t)
        for st in graph.sparse_initializer:
            # An initializer stored in sparse form: its value is the dense tensor (onnxruntime
            # densifies it, and onnx's inference types its consumers so), contents not tracked.
            elem = st.values.data_type or None
            shape = tuple(int(d) if d >= 0 else None for d in st.dims)
            out[st.values.name] = Value(T.TensorType(elem, shape))
        return out

    def _finish_outputs(self, frame: Frame, graph: GraphProto) -> list[Value]:
        outs = []
        for o in graph.output:
            v = frame.scope.lookup(o.name)
            if v is None:
                self.report(
                    "undefined-value",
                    f"graph output `{o.name}` is not produced by any node, input or initializer",
                    Location(frame.path, value=o.name),
                )
                v = Value(self.declared_type(o.type, o.name)) if o.HasField("type") else Value()
            elif o.name not in frame.scope.values:
                # The definition is silent; onnxruntime refuses to load such a model.
                self.report(
                    "outer-scope-output",
                    f"subgraph output `{o.name}` is a value of an enclosing graph, returned directly",
                    Location(frame.path, value=o.name),
                    f"return Identity(`{o.name}`) instead, which onnxruntime accepts",
                )
            outs.append(v)
        return outs

    def _subgraph_uses(self, node: NodeProto) -> frozenset[str]:
        """Outer names a node's subgraphs read (its implicit inputs, for ordering), once per node.

        Built bottom-up from the nested nodes' own (cached) uses, so each graph is read once
        however deep the nesting; reading every nested level again for every enclosing node
        costs the square of the depth (If in If in If ...).
        """
        if not has_subgraph(node):
            return _NO_USES
        hit = self._uses.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1]
        used: set[str] = set()
        for a in node.attribute:
            if a.type == AttributeProto.GRAPH:
                used |= self._graph_uses(a.g)
            elif a.type == AttributeProto.GRAPHS:
                for g in a.graphs:
                    used |= self._graph_uses(g)
        uses = frozenset(used)
        self._uses[id(node)] = (node, uses)
        return uses

    def _graph_uses(self, g: GraphProto) -> set[str]:
        """Names graph ``g`` reads from enclosing graphs (through its own subgraphs too)."""
        defined = {i.name for i in g.input}
        defined.update(t.name for t in g.initializer)
        defined.update(t.values.name for t in g.sparse_initializer)
        used: set[str] = set()
        for n in g.node:
            defined.update(n.output)
            used.update(n.input)
            if n.attribute:
                used |= self._subgraph_uses(n)
        used.update(o.name for o in g.output)
        used.discard("")
        return used - defined

    def _order(self, frame: Frame, views: list[NodeView]) -> Sequence[int]:
        """Node indices in an order where producers come first (Clause 7.5).

        Only a name produced by this node or a later one of the same graph is out of order: a
        name nothing here produces is an outer one, or undefined (reported where it is consumed).
        """
        producer: dict[str, int] = {}
        for idx, v in enumerate(views):
            for o in v.outputs:
                if o:
                    producer.setdefault(o, idx)
        defined, visible_outside = frame.record.values, frame.scope.visible_outside
        first: tuple[int, str] | None = None  # the first node that consumes a later (or its own) output
        for idx, v in enumerate(views):
            for i in (*v.inputs, *self._subgraph_uses(v.node)) if v.has_subgraph else v.inputs:
                if producer.get(i, -1) >= idx and i not in defined and not visible_outside(i):
                    first = (idx, i)
                    break
            if first is not None:
                break
        if first is None:
            return range(len(views))
        nodes = [v.node for v in views]
        import networkx as nx  # only for graphs out of order: its import costs a quarter second

        g = nx.DiGraph()
        g.add_nodes_from(range(len(nodes)))
        for idx, n in enumerate(nodes):
            for i in (*n.input, *self._subgraph_uses(n)):
                p = producer.get(i)
                # A node that consumes its own output is a cycle of one (unless the name is also
                # defined before the graph's nodes: then it is defined twice, reported elsewhere).
                if p is not None and (p != idx or (i not in defined and not visible_outside(i))):
                    g.add_edge(p, idx)
        try:
            order = list(nx.lexicographical_topological_sort(g))
            idx, name = first
            self.report(
                "not-topological",
                f"nodes are not in topological order: `{name}` is consumed before it is produced; "
                "inferred in dependency order instead",
                Location(frame.path, idx, nodes[idx].name, nodes[idx].op_type, value=name),
                "sort the nodes so that each comes after the producers of its inputs",
            )
            return order
        except nx.NetworkXUnfeasible:
            cycle = nx.find_cycle(g)
            members = sorted({a for a, _ in cycle})
            names = ", ".join(f"{nodes[i].op_type} `{nodes[i].name}` (node {i})" for i in members)
            at = members[0]
            self.report("cycle", f"the graph has a cycle through {names}",
                        Location(frame.path, at, nodes[at].name, nodes[at].op_type))  # fmt: skip
            # Walk what can be ordered; the rest in file order with unknown inputs.
            acyclic = g.copy()
            acyclic.remove_edges_from(cycle)
            try:
                return list(nx.lexicographical_topological_sort(acyclic))
            except nx.NetworkXUnfeasible:
                return list(range(len(nodes)))

    def _walk_nodes(self, frame: Frame, views: list[NodeView], consume: bool = False) -> None:
        """Infer the nodes ``views`` describe; ``consume``: drop each view once used (a graph walked
        once, whose views would otherwise all stay alive beside the values they produce)."""
        scope, values, producers = frame.scope, frame.record.values, frame.record.producers
        shared = self._shared_values
        nested = scope.parent is not None
        for idx in self._order(frame, views):
            view = views[idx]
            if consume:
                views[idx] = None  # type: ignore[call-overload]
            outputs = self.infer_node(frame, idx, None, view)
            for name, v in zip(view.outputs, outputs):
                if not name:
                    continue
                if name in values or (nested and scope.visible_outside(name)):
                    node = view.node
                    code = "duplicate-definition" if name in values else "shadowing"
                    self.report(
                        code,
                        f"`{name}` is already defined"
                        + (" in an enclosing graph" if code == "shadowing" else " in this graph"),
                        Location(frame.path, idx, node.name, node.op_type, value=name),
                    )
                if v.known is None:
                    # Equal values are held once: layers repeat their types, and a large model's
                    # memory is mostly its values. (Contents are not merged: 0.0 equals -0.0.)
                    v = shared.setdefault(v, v)
                values[name] = v  # the scope's own dict too (see ``_new_frame``)
                producers[name] = idx

    # -- one node -------------------------------------------------------------------------------

    def _node_attrs(self, frame: Frame, node: NodeProto, sig: Signature | None) -> dict[str, Any]:
        """The node's attributes as Python values, references resolved; what a rule must not read
        is left out, so that it falls back to the schema default or refuses the node cleanly:
        an attribute without a type (which value field holds it cannot be told), and one whose
        type is not the schema's (a rule would take a string for an int). Validation reports
        both (``attribute-type``)."""
        attrs: dict[str, Any] = {}
        specs = sig.attributes if sig is not None else None
        for a in node.attribute:
            name, given = a.name, a
            if a.ref_attr_name:
                given = (frame.attr_refs or {}).get(a.ref_attr_name)
                if given is None:
                    continue  # no value at the call site and no default: omitted (Clause 8.4)
            if given.type == AttributeProto.UNDEFINED or given.ref_attr_name:
                continue  # no type, or a reference the call site left unresolved
            spec = specs.get(name) if specs is not None else None
            if spec is not None and given.type != spec.type:
                continue
            attrs[name] = _attr_python(given)
        return attrs

    def infer_node(self, frame: Frame, idx: int, node: NodeProto | None, view: NodeView | None = None) -> list[Value]:
        """Infer one node of ``frame``'s graph: ``node``, or the one ``view`` has read (fetched
        only when the memo cannot answer)."""
        self.budget.charge()  # Clause 15.4: bounded work, whatever the nesting
        if view is None:
            assert node is not None
            view = read_nodes([node])[0]
        domain = view.domain
        opset = frame.opsets.get(domain)
        inputs, key = self._inputs_and_key(frame, idx, view, opset)
        if key is not None and (hit := self._memo.get(key)) is not None:
            prepared, plain = hit
            if plain is not None:
                declared = frame.declared
                for name in view.outputs:
                    if name in declared:
                        break
                else:
                    return list(plain)  # the common case of a repeated layer: nothing to add
            node = view.node
            return self._place_outputs(frame, _site(frame, idx, node, inputs), node, prepared, None, ())
        node = view.node
        site = _site(frame, idx, node, inputs)
        loc = Location(frame.path, idx, node.name, node.op_type)
        fkey = (domain, node.op_type, node.overload)
        if opset is None:
            # Clause 5.3.2: every domain a node uses is imported, a model-local function's too
            # (whose body is still inferred below).
            self.report(
                "domain-not-imported",
                f"{node.op_type} is in domain '{domain}', which the model does not import",
                loc,
                f"add an opset_import entry for '{domain}'",
            )
            if fkey not in self.functions:
                return self._finish_node(frame, site, node, None, inputs, None, "its domain is not imported")
        if domain == "" and self.implicit_default and not self._warned_default:
            self._warned_default = True
            self.report(
                "default-opset-implicit",
                f"{node.op_type} is in the default domain, whose version the model does not import; "
                f"assuming opset {ONNX_OPSET}",
                loc,
                "add an opset_import entry for domain ''",
            )
        sig = signature(domain, node.op_type, opset) if opset is not None else None
        ctx = RuleContext(node, site, sig, opset or 1, inputs, self, frame, self._node_attrs(frame, node, sig))
        n_diagnostics = len(self.diagnostics)
        check_node(self, ctx, loc)
        raw: list[Any] | None = None
        reason: str | None = None
        if fkey in self.functions and (sig is None or domain not in STANDARD_DOMAINS):
            fn = self.functions[fkey]
            raw = self._run_rule(lambda c: self._infer_function(frame, c, fn), ctx, loc)
        elif sig is None and domain in STANDARD_DOMAINS:
            reason = (
                f"{node.op_type} is not an operator of {domain or 'ai.onnx'} opset {opset}"
                if node.op_type
                else "the node names no operator (its op_type is empty)"
            )
            self.report("unknown-operator", reason, loc, "check the operator name and the imported opset version")
        else:
            entry = lookup(domain, node.op_type, sig.since_version if sig else (opset or 1))
            if entry is not None and entry.rule is not None:
                clean = len(self.diagnostics) == n_diagnostics
                mark = self._side_effect_mark()
                raw = self._run_rule(entry.rule, ctx, loc)
                if key is not None and clean and ctx.reason is None and self._side_effect_mark() == mark:
                    # A pure run of a clean node: a node with the same key gets the same outputs,
                    # passes the same checks, and nothing was reported or learned that a reuse
                    # would skip.
                    values = self._output_values(sig, node.op_type, inputs, raw, len(node.output))
                    # Placing ``plain`` values adds nothing when no output has unknown extents
                    # to name or contents to explain (and none is declared: checked at reuse).
                    simple = not any(p.needs_fill or p.note or p.overflow is not None for p in values)
                    # Kept from the second time a key is computed on: most keys seen once are
                    # never seen again (a model's unique nodes), and storing them costs memory.
                    h = hash(key) & (self._seen_bits - 1)
                    seen, byte, bit = self._memo_seen, h >> 3, 1 << (h & 7)
                    if seen[byte] & bit:  # or another key with these hash bits: stored early, harmless
                        self._memo[key] = (values, tuple(p.plain for p in values) if simple else None)
                    else:
                        seen[byte] |= bit
                    return self._place_outputs(frame, site, node, values, None, ())
            elif entry is not None:
                reason = f"{node.op_type} is not supported: {entry.reason}"
                self.report("unsupported", reason, loc)
            elif sig is not None and (body := self._schema_body(domain, node, opset, inputs)) is not None:
                raw = self._run_rule(lambda c: self._infer_function(frame, c, body), ctx, loc)
            elif (
                self.options.custom_schemas
                and (schema := custom_schemas.user_schema(domain, node.op_type, opset or 1)) is not None
            ):
                raw = self._run_rule(lambda c: self._infer_custom(c, schema), ctx, loc)
            elif sig is not None:
                reason = f"no inference rule for {node.op_type} at {domain or 'ai.onnx'} opset {opset}"
                self.report("no-rule", reason, loc)
            elif domain in self.function_domains:
                # The domain holds the model's own functions: a name none of them has is more
                # likely a mistake than an operator a runtime provides (onnxruntime refuses it).
                reason = f"{node.op_type} is no function of this model, whose functions in '{domain}' are " + ", ".join(
                    sorted(name for d, name, _ in self.functions if d == domain)
                )
                self.report("unknown-function", reason, loc)
            else:
                reason = f"no signature or rule for {node.op_type} of domain '{domain}' (a custom operator)"
                self.report("no-rule", reason, loc)
        return self._finish_node(frame, site, node, sig, inputs, raw, reason or ctx.reason, ctx.causes)

    def _schema_body(self, domain: str, node: NodeProto, opset: int, inputs: list[Value | None]) -> Any:
        """The schema's function body for this node (built for its input types if it must be)."""

        types = [None if v is None else T.to_proto(v.type, _write_dim) for v in inputs]
        return function_body(domain, node.op_type, opset, node, types)

    def _infer_custom(self, ctx: RuleContext, schema: Any) -> list[T.Type] | None:
        """Outputs as the inference function registered with ``schema`` gives them."""
        names = custom_schemas.DimNames()
        types = [None if v is None else names.to_proto(v.type) for v in ctx.inputs]
        data = [
            custom_schemas.tensor_from_known(v.known, v.type.elem)
            if v is not None and isinstance(v.type, T.TensorType)
            else None
            for v in ctx.inputs
        ]
        outer: dict[str, TypeProto] = {}  # what the node's graph attributes read from outside
        for name in self._subgraph_uses(ctx.node):
            v = ctx._frame.scope.lookup(name)
            tp = None if v is None else names.to_proto(v.type)
            if tp is not None:
                outer[name] = tp
        out = custom_schemas.run_inference(
            schema, ctx.node, types, data, ctx._frame.opsets, self.model.ir_version, outer
        )
        if out.error is not None:
            raise RuleError("custom-inference", out.error)
        types = [names.from_proto(tp) for tp in out.outputs]
        if any(not isinstance(t, T.TensorType) or t.shape is None or None in t.shape for t in types):
            ctx.because("the inference function registered for it leaves this unknown")
        return types

    def _run_rule(self, fn: Any, ctx: RuleContext, loc: Location) -> list[Any] | None:
        before = D.overflow_count()
        self._overflows_nested.append(0)
        try:
            return self._run_rule_guarded(fn, ctx, loc)
        finally:
            inner = self._overflows_nested.pop()
            total = D.overflow_count() - before
            if self._overflows_nested:
                self._overflows_nested[-1] += total
            if total > inner:  # this node's own expressions hit the size limit, not a subgraph's
                limit = self.options.max_expression_size
                if ctx.reason is None:
                    ctx.because(f"its symbolic extent would grow past {limit} terms (limit max_expression_size)")
                self.diagnostics.append(diag.make(
                    "limit", f"{ctx.op_type}: a symbolic extent grew past {limit} terms (max_expression_size); "
                    "it is left unknown", loc, severity=diag.WARNING,
                ))  # fmt: skip

    def _run_rule_guarded(self, fn: Any, ctx: RuleContext, loc: Location) -> list[Any] | None:
        try:
            out = fn(ctx)
            if out is None:
                return None
            # What no tensor can be (a rank past the limit, an extent past int64 or below 0) is
            # left unknown and reported here, for every rule at once.
            out, problems = within_bounds(list(out), self.options.max_rank)
            for code, message in problems:
                self.report(code, f"{ctx.op_type} with inputs {ctx.input_types_str()}: {message}", loc)
            if problems and ctx.reason is None:
                ctx.because(problems[0][1])
            return out
        except RuleError as e:
            self.report(e.code, f"{ctx.op_type} with inputs {ctx.input_types_str()}: {e}", loc, e.suggestion)
            ctx.because(f"the node is malformed: {e}")
        except Exception as e:  # a bug in a rule must not stop the walk: report it, go on
            if DEBUG:
                raise
            self.report("rule-crash", f"rule for {ctx.op_type} failed: {type(e).__name__}: {e}", loc)
            ctx.because("its inference rule failed")
        return None

    def _schema_types(self, sig: Signature | None, inputs: list[Value | None], n: int) -> list[T.Type]:
        """Output types as far as the type constraints decide them (shape unknown)."""
        if sig is None:
            return [T.UNKNOWN] * n
        bound: dict[str, T.Type] = {}
        for i, v in enumerate(inputs):
            formal = sig.input_formal(i)
            if v is None or formal is None or formal.type_str not in sig.constraints:
                continue
            if formal.option == "variadic" and not formal.homogeneous:
                continue  # each position of a heterogeneous variadic has a type of its own
            if formal.type_str not in bound and not isinstance(v.type, T.UnknownType):
                bound[formal.type_str] = _strip_shape(v.type)
        out = []
        for k in range(n):
            formal = sig.output_formal(k)
            if formal is None:
                out.append(T.UNKNOWN)
                continue
            ts = formal.type_str
            if formal.option == "variadic" and not formal.homogeneous:
                out.append(T.UNKNOWN)
            elif ts in bound:
                out.append(bound[ts])
            elif ts in sig.constraints:
                allowed = sig.constraints[ts]
                out.append(parse_type_str(allowed[0]) if len(allowed) == 1 else T.UNKNOWN)
            else:
                out.append(parse_type_str(ts))
        return out

    # -- memoized rule results -----------------------------------------------------------------

    def _inputs_and_key(
        self, frame: Frame, idx: int, view: NodeView, opset: int | None
    ) -> tuple[list[Value | None], tuple | None]:
        """A node's input values (``None`` for an absent input; an undefined one is reported),
        and its memo key: what its checks and rule depend on, when its result may be reused;
        else ``None``.

        Repeated layers present the same operator with the same input types, contents and
        attributes, so their rules run (and their checks pass) once; only clean, pure runs are
        stored (see ``infer_node``). Known float contents are keyed with the positions of their
        ``-0.0`` elements too (it equals ``0.0`` but divides differently). Nodes with subgraphs,
        attribute references (whose values live in the calling function) or inputs other than
        tensors (sequence rules ask where a variable was made) are always inferred afresh, and
        so is the first node of an implicit default domain (it is warned about once). One loop
        does both: this runs for every node.
        """
        base = view.memo_base
        keyed = base is not None and opset is not None
        if keyed and self.implicit_default and not self._warned_default and view.domain == "":
            keyed = False
        inputs: list[Value | None] = []
        signs: tuple = ()  # (input position, its -0.0 positions) where there are any
        scope = frame.scope
        local = scope.values
        for name in view.inputs:
            if not name:
                inputs.append(None)
                continue
            v = local.get(name)
            if v is None:
                v = scope.lookup(name)
                if v is None:
                    self.report(
                        "undefined-value",
                        f"{view.op_type} consumes `{name}`, which nothing defines",
                        Location(frame.path, idx, view.node.name, view.op_type, value=name),
                    )
                    v = Value()
            inputs.append(v)
            if keyed:
                t = v.type
                if type(t) is not T.TensorType:
                    # sequences, optionals, maps: rules consult where their variables came from
                    keyed = isinstance(t, T.UnknownType)
                elif (known := v.known) is not None and t.elem in _FLOAT_ELEMS and (zeros := known.negative_zeros()):
                    signs += ((len(inputs) - 1, zeros),)
        if not keyed:
            return inputs, None
        return inputs, (base, opset, tuple(inputs), self.table.minimums_epoch, signs)

    def _side_effect_mark(self) -> tuple[int, ...]:
        """Counters that any report, fact, variable, subgraph walk or refused extent moves."""
        t = self.table
        return (len(self.diagnostics), len(t.variables), len(t.facts), t.minimums_epoch, t.fresh_calls,
                D.overflow_count(), len(self.records))  # fmt: skip

    # -- placing a node's outputs ---------------------------------------------------------------

    def _output_values(
        self, sig: Signature | None, op_type: str, inputs: list[Value | None], raw: list[Any] | None, n: int
    ) -> list[Prepared]:
        """What the rule returned, completed by what the schema's type constraints decide."""
        base = self._schema_types(sig, inputs, n)
        return [self._prepare(_to_value(raw[k] if raw is not None and k < len(raw) else None, base[k]), op_type)
                for k in range(n)]  # fmt: skip

    def _prepare(self, v: Value, op_type: str) -> Prepared:
        """An output value with the work its placement does when nothing is fresh or declared.

        That work depends on the value alone, so a memoized result carries it and repeated
        layers skip it.
        """
        v, overflow = without_overflow(in_domain(v))
        t = v.type
        needs_fill = not isinstance(t, (T.TensorType, T.SparseTensorType)) or (
            t.shape is not None and any(d is None for d in t.shape)
        )
        plain = self._settle(v, t, op_type)
        return Prepared(v, needs_fill, plain, _needs_note(plain), overflow)

    def _settle(self, v: Value, t: T.Type, op_type: str) -> Value:
        """``v`` with type ``t``: contents dropped where they do not fit (or are not propagated,
        an option; a Constant's are always kept), empty ones made known."""
        known = v.known
        if known is not None and (
            not _known_fits(known, t) or (not self.options.propagate_values and op_type != "Constant")
        ):
            return Value(t)
        if known is None:
            return _with_empty_contents(Value(t) if t is not v.type else v)
        return v if t is v.type else Value(t, known)

    def _finish_node(
        self,
        frame: Frame,
        site: Site,
        node: NodeProto,
        sig: Signature | None,
        inputs: list[Value | None],
        raw: list[Any] | None,
        reason: str | None,
        causes: tuple[str, ...] = (),
    ) -> list[Value]:
        values = self._output_values(sig, node.op_type, inputs, raw, len(node.output))
        return self._place_outputs(frame, site, node, values, reason, causes)

    def _place_outputs(
        self,
        frame: Frame,
        site: Site,
        node: NodeProto,
        prepared: list[Prepared],
        reason: str | None,
        causes: tuple[str, ...],
    ) -> list[Value]:
        """Name this node's unknown extents, refine by declarations, note unknown contents."""
        outs: list[Value] = []
        for k, name in enumerate(node.output):
            p = prepared[k]
            if not name:
                outs.append(p.value)
                continue
            if not p.needs_fill and name not in frame.declared:
                v = p.plain
            else:
                t = p.value.type
                if p.needs_fill:
                    why = reason or _default_reason(node.op_type)
                    t = self._fill_unknown(
                        t,
                        lambda axis, k=k, name=name, why=why: (
                            Origin("fresh", why, site, name, axis, causes),
                            (site.graph, site.node_index, k, axis),
                        ),
                    )
                if name in frame.declared:
                    t = self._refine_declared(frame, site, name, t)
                v = self._settle(p.value, t, node.op_type)
            if p.note if v is p.plain else _needs_note(v):
                frame.record.notes[name] = ContentNote(site, reason or _default_reason(node.op_type), causes)
            if p.overflow is not None:
                self.report(
                    "integer-overflow",
                    f"{node.op_type} computes {p.overflow} in `{name}`, outside the range of "
                    f"{T.elem_name(p.value.type.elem)}; a runtime wraps it, so that element is left unknown",
                    Location(site.graph, site.node_index, site.node_name, site.op_type, value=name),
                )
            outs.append(v)
        return outs

    def _refine_declared(self, frame: Frame, site: Site, name: str, t: T.Type) -> T.Type:
        tp = frame.declared.get(name)
        if tp is None:
            return t
        declared = self.declared_type(tp, name)
        is_output = name in frame.record.outputs

        def keep(axis: int, d: Dim, i: Dim) -> Dim:
            # Both hold; keep the more useful one and record the equality the model entails.
            if D.equal(d, i) is True:
                return i
            if not self.table.is_fresh(i):
                self.table.learn_equal(d, i, site)
                return d if isinstance(d, int) else i
            # An extent inference could not determine takes what the model declares, except that
            # a graph output's does not take a variable of the graph inputs: that would equate
            # this extent with one of theirs on the declaration's word alone, and exporters name
            # output axes after input axes of equal extent at export time (TorchScript declared
            # `batch` on a height).
            return i if is_output and self._names_input_variable(d) else d

        out, clashes = T.refine(declared, t, keep)
        for c in clashes:
            self.report(
                "declared-type-clash",
                f"`{name}` is declared {declared} but {site.op_type} produces {t}: {c}",
                Location(site.graph, site.node_index, site.node_name, site.op_type, value=name),
                "fix or remove the value_info entry" if name not in frame.record.outputs else None,
            )
        return out

    def _names_input_variable(self, d: Dim) -> bool:
        """Does ``d`` mention a variable declared on an input of the main graph?"""
        inputs = self._input_names
        return any((v := self.table.get(n)) is not None and v.origin.kind == "declared" and v.origin.value in inputs
                   for n in D.free_names(d))  # fmt: skip

    @cached_property
    def _input_names(self) -> frozenset[str]:
        return frozenset(i.name for i in self.model.graph.input)

    # -- subgraphs and functions ----------------------------------------------------------------

    def walk_subgraph(
        self, ctx: RuleContext, attr_name: str, inputs: list[Value], quiet: bool = False, iterated: bool = False
    ) -> list[Value] | None:
        """Walk the graph attribute ``attr_name`` of ``ctx``'s node with ``inputs`` bound.

        A walk replaces what an earlier walk of the same subgraph recorded (a Loop body is walked
        until its loop-carried types are stable, and only its last walk holds for every
        iteration). ``quiet`` drops the diagnostics and facts of this walk: the rounds of such a
        fixed point report nothing, the final walk reports. ``iterated``: the graph runs once
        per iteration or element, so a dim name declared in it, which would claim one extent for
        every iteration, is not read (exporters write the first iteration's).
        """
        frame: Frame = ctx._frame
        graph = ctx.attrs.get(attr_name)
        if not isinstance(graph, GraphProto):
            return None
        if frame.depth + 1 > self.options.max_depth:
            self.report_at(ctx.site, "limit", f"subgraphs nest deeper than {self.options.max_depth}")
            return None
        path = frame.path.subgraph(ctx.site.node_index, attr_name)  # type: ignore[arg-type]
        if path in self.records:  # a re-walk (Loop fixed point): drop the earlier walk's records
            for stale in [p for p in self.records if GraphPath(p).within(path)]:
                del self.records[stale]
        n_diagnostics, n_facts = len(self.diagnostics), len(self.table.facts)
        sub = self._new_frame(
            graph, path, Scope(frame.scope), frame.opsets, frame.depth + 1,
            frame.functions_active, frame.attr_refs,
        )  # fmt: skip
        if iterated:
            sub.declared = {name: _without_dim_names(tp) for name, tp in sub.declared.items()}
        for i, inp in enumerate(graph.input):
            v = inputs[i] if i < len(inputs) else Value()
            if inp.HasField("type"):
                # What the node binds is authoritative: a declared body input often states only
                # the first iteration's type (exporters write the initial value's), and runtimes
                # do not check it. The declaration reports clashes and fills what is unknown.
                declared = self.declared_type(inp.type, inp.name)
                _, clashes = T.refine(declared, v.type)
                for c in clashes:
                    self.report(
                        "declared-type-clash",
                        f"subgraph input `{inp.name}` is declared {declared} but receives {v.type}: {c}",
                        Location(path, value=inp.name),
                    )
                t = v.type
                if isinstance(t, T.UnknownType):
                    t = _strip_shape(declared)  # the kind and element type; extents may change
                elif isinstance(t, T.TensorType) and t.elem is None and isinstance(declared, T.TensorType):
                    t = T.TensorType(declared.elem, t.shape)
                v = Value(t, v.known)
            if frame.scope.lookup(inp.name) is not None:
                self.report("shadowing", f"subgraph input `{inp.name}` shadows an outer name",
                            Location(path, value=inp.name))  # fmt: skip
            sub.record.values[inp.name] = v
            sub.record.inputs.append(inp.name)
        for name, v in self._initializers(graph, path).items():
            if frame.scope.lookup(name) is not None:
                self.report("shadowing", f"subgraph initializer `{name}` shadows an outer name",
                            Location(path, value=name))  # fmt: skip
            sub.record.values[name] = v
            sub.record.initializers.add(name)
        try:
            self._walk_nodes(sub, self.scan.views.get(path) or read_nodes(graph.node))
            return self._finish_outputs(sub, graph)
        finally:
            if quiet:
                del self.diagnostics[n_diagnostics:]
                self.table.rollback_facts(n_facts)

    def _infer_function(self, frame: Frame, ctx: RuleContext, fn: FunctionProto) -> list[Any] | None:
        key = (canonical_domain(fn.domain), fn.name, getattr(fn, "overload", ""))
        loc = Location(frame.path, ctx.site.node_index, ctx.node.name, ctx.op_type)
        if key in frame.functions_active:
            cycle = frame.functions_active[frame.functions_active.index(key) + 1 :]
            through = " through " + ", ".join(f"{d}:{n}" for d, n, _ in cycle) if cycle else ""
            self.report("recursion", f"function {fn.domain}:{fn.name} calls itself{through}", loc)
            ctx.because("the function is recursive")
            return None
        if frame.depth + 1 > self.options.max_depth:
            self.report("limit", f"functions nest deeper than {self.options.max_depth}", loc)
            return None
        refs: dict[str, AttributeProto] = {}
        if ctx.sig is not None and ctx.sig.domain in STANDARD_DOMAINS:
            # A schema's body refers to the operator's attributes, whose defaults the schema has.
            for name, spec in ctx.sig.attributes.items():
                if spec.default is not None:
                    refs[name] = helper.make_attribute(name, spec.default)
        for a in fn.attribute_proto:  # defaults (IR >= 9)
            refs[a.name] = a
        for a in ctx.node.attribute:
            if a.ref_attr_name:
                outer = (frame.attr_refs or {}).get(a.ref_attr_name)
                if outer is not None:
                    refs[a.name] = outer
            else:
                refs[a.name] = a
        opsets = dict(frame.opsets)
        for imp in fn.opset_import:
            opsets[canonical_domain(imp.domain)] = int(imp.version)
        path = frame.path.call(ctx.site.node_index, fn.domain, fn.name)  # type: ignore[arg-type]
        scope = Scope()
        record = GraphRecord(path, "function", nodes=list(fn.node))
        scope.values = record.values
        record.outputs = list(fn.output)
        self.records[path] = record
        # A function is polymorphic (Clause 8.4): a dim name in its value_info is not the
        # model-scoped variable of that name, and need not be one extent across call sites.
        declared = {vi.name: _without_dim_names(vi.type) for vi in getattr(fn, "value_info", ()) if vi.HasField("type")}
        sub = Frame(path, scope, opsets, declared, record, frame.depth + 1,
                    frame.functions_active + (key,), refs)  # fmt: skip
        omitted: set[str] = set()
        for i, name in enumerate(fn.input):
            v = ctx.inputs[i] if i < len(ctx.inputs) else None
            if v is not None and name:
                record.values[name] = v
                record.inputs.append(name)
            elif name:
                omitted.add(name)

        def absent(n: NodeProto) -> NodeProto:
            # An input the call site omits is absent wherever the body uses it (Clause 8.4).
            if not omitted.intersection(n.input):
                return n
            copy = NodeProto()
            copy.CopyFrom(n)
            copy.input[:] = ["" if i in omitted else i for i in n.input]
            return copy

        # Inputs may be left off at the end (they are absent in the body); outputs may not:
        # onnxruntime refuses such a call, and onnx's strict inference fails on it.
        if len(ctx.inputs) > len(fn.input) or ctx.n_outputs != len(fn.output):
            self.report(
                "arity",
                f"{ctx.op_type} is called with {len(ctx.inputs)} inputs and {ctx.n_outputs} outputs; "
                f"the function has {len(fn.input)} and {len(fn.output)}",
                loc,
            )
        nodes = [absent(n) for n in fn.node]
        record.nodes = nodes
        self._walk_nodes(sub, read_nodes(nodes))
        out = []
        for name in fn.output:
            v = scope.lookup(name)
            if v is None and name not in omitted:
                self.report(
                    "undefined-value",
                    f"function output `{name}` is not produced by the body of {fn.domain}:{fn.name}",
                    Location(path, value=name),
                )
            out.append(v)
        return out


_NO_USES: frozenset[str] = frozenset()


# The memo's record of keys computed once: one bit per hash value modulo at most 2^20 (128 KB).
_SEEN_BITS = 1 << 20

_FLOAT_ELEMS = frozenset({
    TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.BFLOAT16,
    TensorProto.COMPLEX64, TensorProto.COMPLEX128,
    *(getattr(TensorProto, n) for n in ("FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ",
                                        "FLOAT4E2M1", "FLOAT8E8M0") if hasattr(TensorProto, n)),
})  # fmt: skip


def _write_dim(d: Dim) -> int | str | None:
    return d if isinstance(d, int) or d is None else D.to_str(d)


def _with_empty_contents(v: Value) -> Value:
    """A tensor with no elements has known contents: none (an empty ``axes`` input, say)."""
    t = v.type
    if v.known is None and isinstance(t, T.TensorType) and t.shape is not None and 0 in t.shape:
        if all(isinstance(d, int) for d in t.shape):
            return Value(t, Known(tuple(t.shape), ()))  # type: ignore[arg-type]
    return v


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


def _strip_shape(t: T.Type) -> T.Type:
    if isinstance(t, T.TensorType):
        return T.TensorType(t.elem)
    if isinstance(t, T.SparseTensorType):
        return T.SparseTensorType(t.elem)
    if isinstance(t, T.SequenceType):
        return T.SequenceType(_strip_shape(t.elem))
    if isinstance(t, T.OptionalType):
        return T.OptionalType(_strip_shape(t.elem))
    return t


def _to_value(spec: Any, base: T.Type) -> Value:
    """Turn what a rule returned for one output into a value, filling the schema's types."""
    known: Known | None = None
    if isinstance(spec, Value):
        known = spec.known
        spec = spec.type
    if spec is None:
        return Value(base)
    if isinstance(spec, (tuple, list)):
        elem = base.elem if isinstance(base, (T.TensorType, T.SparseTensorType)) else None
        cls = T.SparseTensorType if isinstance(base, T.SparseTensorType) else T.TensorType
        return Value(cls(elem, tuple(D.normalize(d) for d in spec)), known)
    if isinstance(spec, (T.TensorType, T.SparseTensorType)) and spec.elem is None:
        if isinstance(base, (T.TensorType, T.SparseTensorType)):
            spec = type(spec)(base.elem, spec.shape)
    if isinstance(spec, T.UnknownType):
        return Value(base, known)
    return Value(spec, known)


class Prepared(NamedTuple):
    """One output of a rule, ready to place (see ``Engine._prepare``)."""

    value: Value  # as the rule and the schema give it
    needs_fill: bool  # has unknown extents (or a kind whose placement the engine always does)
    plain: Value  # the value placed where nothing is fresh or declared
    note: bool  # ``plain`` needs a content note (unknown shape contents or rank)
    overflow: int | None = None  # an element computed past its element type's range (made unknown)


def _site(frame: Frame, idx: int, node: NodeProto, inputs: list[Value | None]) -> Site:
    types = tuple(None if v is None else v.type for v in inputs)
    return Site(frame.path, idx, node.name, node.op_type, node.domain, types)


def _default_reason(op_type: str) -> str:
    return f"the rule for {op_type} cannot determine this extent from its inputs"


def _needs_note(v: Value) -> bool:
    return (v.known is None and _is_small_int_tensor(v.type)) or _rank_unknown(v.type)


def _known_fits(k: Known, t: T.Type) -> bool:
    if not isinstance(t, T.TensorType) or t.shape is None:
        return True
    if len(t.shape) != len(k.shape):
        return False
    return all(D.equal(a, b) is not False for a, b in zip(t.shape, k.shape))


def _rank_unknown(t: T.Type) -> bool:
    return isinstance(t, T.UnknownType) or (isinstance(t, T.TensorType) and t.shape is None)


def _is_small_int_tensor(t: T.Type) -> bool:
    from onnx import TensorProto

    return (
        isinstance(t, T.TensorType)
        and t.elem in (TensorProto.INT64, TensorProto.INT32)
        and t.shape is not None
        and len(t.shape) <= 1
    )
