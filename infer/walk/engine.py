"""One inference run: the pipeline from a loaded model to what a result reads, and the walk of
nodes.

``load`` (infer/load/loader.py) -> ``scan`` (infer/core/limits.py: the model measured against the limits,
each node's fields read once) -> walk -> ``InferenceResult``. The walk starts at the main
graph (infer/walk/graphs.py) and goes node by node in dependency order (infer/walk/order.py, Clause 7.5).
Each node's inputs are looked up through the scopes (infer/core/scopes.py); a node already answered
is answered again from the memo (infer/walk/memo.py); else it is checked (infer/check/validate.py), the
dispatcher says how it is inferred (infer/walk/dispatch.py: a model-local function, a registry rule,
a schema's function body, a schema registered at run time), the rule runs (infer/walk/rulerun.py)
and its outputs are placed (infer/walk/placement.py). Subgraphs and function bodies are walked by
the same code, on a rule's request (the ``Walker`` protocol of infer/contract/context.py).
"""

from __future__ import annotations

import copy
import dataclasses
import gc
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

from onnx import ModelProto, NodeProto, TypeProto

from infer.check.validate import check_model, check_node
from infer.contract import registry
from infer.contract.attributes import rule_attributes
from infer.contract.context import RuleContext, replay_effects, site_of
from infer.contract.signature import ONNX_OPSET, STANDARD_DOMAINS, canonical_domain
from infer.core import diagnostics as diag
from infer.core import limits
from infer.core import types as T
from infer.core.diagnostics import Location
from infer.core.dims.budget import RUN, Budget, NodeTimeout, run_seconds
from infer.core.dimscope import DimScope
from infer.core.dimtable import DimTable, Site
from infer.core.scopes import MAIN, ContentNote, Frame, GraphRecord, Scope
from infer.core.values import Value
from infer.load import external
from infer.load.nodeview import NodeBytes, NodeView, read_nodes
from infer.load.scan import scan
from infer.walk import custom_schemas, reuse
from infer.walk.dispatch import CUSTOM_SCHEMA, FUNCTION, RULE, SCHEMA_BODY, Dispatcher, schema_body
from infer.walk.graphs import Graphs
from infer.walk.memo import FACTS, WALK, Memo, Store
from infer.walk.order import SubgraphUses, order
from infer.walk.placement import Placement
from infer.walk.rulerun import RuleRunner
from infer.walk.state import RunState

__all__ = ["ContentNote", "Engine", "Frame", "GraphRecord", "Options", "Scope", "collector_paused"]


@dataclass
class Options:
    """Knobs of one inference run (all keyword arguments of ``infer_model``)."""

    dims_style: str = "expressions"  # "expressions" | "strict": how dims are written back
    bindings: Mapping[str, int] = field(default_factory=dict)  # dim_param -> int
    # Resource limits (Clause 15.4; docs/limits.md, infer/core/limits.py).
    limits: limits.Limits = field(default_factory=limits.Limits)
    # Read small integer initializers kept in external files (Clauses 13, 15.3): opt-in, since a
    # model is untrusted data (Clause 15.5).
    read_external_data: bool = False
    # Follow computed contents (Shape -> Gather -> Concat -> Reshape). Off, only constants
    # (initializers, Constant nodes) are read, as onnx.shape_inference does without data_prop.
    propagate_values: bool = True
    # Ask the inference function of an operator schema registered at run time
    # (``onnx.defs.register_schema``) for an operator onnx-infer has no rule for
    # (infer/walk/custom_schemas.py). On in the drop-in for onnx.shape_inference, which does so.
    custom_schemas: bool = False
    # Called after each node of the main graph with (nodes done, nodes in all): a progress bar.
    progress: Callable[[int, int], None] | None = None

    # The limits read by their former names (code that read ``options.max_depth``).
    max_depth = property(lambda self: self.limits.max_depth)
    max_rank = property(lambda self: self.limits.max_rank)
    max_nodes = property(lambda self: self.limits.max_nodes)
    max_node_visits = property(lambda self: self.limits.max_node_visits)
    max_expression_size = property(lambda self: self.limits.max_expression_size)


class _Moved:
    """The objects that runs moved to the oldest generation and that may become garbage only a
    full collection frees.

    Python collects the oldest generation when what reached it since its last full collection
    passes a quarter of what that collection left (``long_lived_pending > long_lived_total / 4``
    in CPython's gc). Objects moved there by ``gc.freeze``/``gc.unfreeze`` are not counted in
    that. A run's own objects need no count: a run holds no cycle (the engine's parts are handed
    what calls back into it, never hold it), so what its caller drops is freed at once by
    reference counting (tests/test_hostile_memory.py holds it). What the move takes along of the
    program's own young objects may hold cycles: those are counted, every object moved when
    another thread may have allocated meanwhile. Past half of what the last full collection left,
    runs move nothing until Python's own rule makes a full collection: their objects then count
    towards it, and no run makes a full collection of the heap itself (a full collection
    traverses everything alive: made as runs started, when every moved object was counted, it was
    7 to 14% of repeated calls' time).
    """

    FRACTION: ClassVar[float] = 0.5  # runs stop moving when the moved objects pass this much of what the last left
    pending: ClassVar[int] = 0  # objects counted since the last full collection (ours, Python's, the program's)
    total: ClassVar[int] = 0  # objects alive after the last full collection (counted when one is seen)
    full_seen: ClassVar[int] = -1  # Python's count of full collections when ``total`` was last counted

    @classmethod
    def add(cls, moved: int) -> None:
        """Account for ``moved`` objects a run moved to the oldest generation."""
        cls._seen()
        cls.pending += moved

    @staticmethod
    def least() -> int:
        """Fewest moved objects that stop the moves: those between two collections of the
        middle generation at Python's thresholds (no stop for a few runs' crumbs)."""
        low, middle, _ = gc.get_threshold()
        return low * middle

    @classmethod
    def due(cls) -> bool:
        """Have the objects moved since the last full collection passed its bound?"""
        cls._seen()
        return cls.pending > max(int(cls.total * cls.FRACTION), cls.least())

    @classmethod
    def _seen(cls) -> None:
        """After a full collection (Python's or the program's): count afresh (counting is a list
        of pointers, a tenth of the cost of the collection)."""
        full = gc.get_stats()[-1]["collections"]
        if full != cls.full_seen:
            cls.pending, cls.total, cls.full_seen = 0, len(gc.get_objects()), full


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for the duration (restored as it was).

    Inference allocates many small objects and frees few: the collector would traverse all of
    them, and everything else alive, again and again (a third of the time on a large model, and
    more than linear in its size). Nothing inference builds needs it while it runs.

    On the way out, what was allocated meanwhile (by a run of more objects than make a young
    collection) is moved to the oldest generation, as two collections would have moved the
    objects that survive them; left in the youngest, the first collection after the run would
    traverse all of them (as long again as a repeated model's inference). What may hold garbage
    of it is counted (``_Moved``), and runs stop moving while that is past its bound, so that the
    garbage of many runs is collected by Python (docs/limits.md, "Repeated calls"). No
    collection is made here.
    """
    collecting = gc.isenabled()
    gc.disable()
    before = gc.get_count()[0]
    alone = threading.active_count() == 1
    try:
        yield
    finally:
        if collecting:
            young = gc.get_count()[0]  # allocated less freed since the youngest was last emptied
            # A run of fewer objects than make a young collection leaves them young, to be
            # collected as the program's own: nothing is counted for them (a one-node model
            # moved 94 objects a call). A larger run's would reach the oldest generation by
            # Python's rules, uncounted, and stay there (+13% memory over 1,000 calls of
            # bert_tiny at 7,000).
            if young - before > gc.get_threshold()[0] and gc.get_freeze_count() == 0 and not _Moved.due():
                # (the program's frozen stay frozen)
                program = (
                    before + len(gc.get_objects(generation=1)) if alone and threading.active_count() == 1 else young
                )
                gc.freeze()  # every tracked object to the permanent generation (a list splice) ...
                gc.unfreeze()  # ... and from there into the oldest one
                _Moved.add(program)
            gc.enable()


class Engine:
    """One run: the state the walk builds (dimension table, diagnostics, records) and the walk of
    nodes. Implements the ``Walker`` protocol rules call back through."""

    state: RunState

    def __init__(
        self,
        model: ModelProto,
        options: Options | None = None,
        directory: Path | None = None,
        light_nodes: list[bytes | None] | NodeBytes | None = None,
        previous: Engine | None = None,
        budget: Budget | None = None,
    ):
        """``light_nodes``: the main graph's nodes serialized (``nodeview.light_nodes``), when the
        caller has them (the loader does); the scan reads the nodes from them, consuming them.
        ``previous``: an earlier run of this model (or of a version before an edit), whose fresh
        variables keep their names where the same nodes make them again. ``budget``: the run's
        (``infer.run`` makes it, with its clock running since the model was read); by default one
        of the options' limits, whose clock starts with the scan."""
        o = options or Options()
        budget = budget or Budget(o.limits.max_expression_size, o.limits.max_seconds)
        self.reuse_key: bytes | None = None  # what this run's result stands for (``infer.walk.reuse``)
        self.timed_out = False  # the run's clock (``max_seconds``) stopped the scan or the walk
        # Clause 15.4: the whole model is measured, without recursion, before anything walks it;
        # a model past a limit is refused by ``run`` and nothing else reads it.
        with budget.active():
            measured = scan(model, o.limits, light_nodes)
        self.timed_out = measured.timed_out
        reserved = frozenset() if measured.refusals else frozenset(measured.dim_params)
        inputs = frozenset() if measured.refusals else frozenset(measured.input_dim_params)
        scope = DimScope(DimTable(reserved=reserved, bindings=dict(o.bindings), inputs=inputs))
        if previous is not None:
            scope.table.seed(previous.state.table)
        functions = {(canonical_domain(f.domain), f.name, f.overload): f for f in model.functions}
        self.state = st = RunState(
            model,
            o,
            measured,
            scope,
            budget,
            _memo_policy(o, model),
            limits.node_budget(measured.expanded_nodes, o.limits.max_node_visits),
            self._read_opsets(model.opset_import),
            functions,
            directory,
        )
        function_domains = frozenset(d for d, _, _ in functions) - set(STANDARD_DOMAINS)
        self.dispatcher = Dispatcher(functions, function_domains, o.custom_schemas)
        self.uses = SubgraphUses()
        self.placement = Placement(st)
        self.graphs = Graphs(st, self.placement)
        self.rules = RuleRunner(st.report, lambda: st.diagnostics, o.limits, lambda: st.records, budget)
        self._start_walk()

    def _start_walk(self) -> None:
        """What each walk starts afresh: its results name that walk's variables."""
        st = self.state
        st.visits = limits.node_budget(st.scan.expanded_nodes, st.options.limits.max_node_visits)
        self._shared: dict[Value, Value] = {}  # one object for equal values without contents
        self._warned_default = False

    def _read_opsets(self, imports: Iterable[Any]) -> dict[str, int]:
        opsets: dict[str, int] = {}
        for imp in imports:
            opsets[canonical_domain(imp.domain)] = int(imp.version)
        self.implicit_default = "" not in opsets
        if self.implicit_default:
            # Clause 5.3.2: the default domain is imported implicitly; its version is not stated,
            # so the newest is assumed and a node that relies on it gets a warning.
            opsets[""] = ONNX_OPSET
        # onnx.defs takes a C ``int``: a version past it is newer than any published one anyway,
        # and one below 1 names none.
        return {d: min(max(v, 0), limits.OPSET_CEILING) for d, v in opsets.items()}

    # -- reporting ------------------------------------------------------------------------------

    def report_at(self, site: Site, code: str, message: str, suggestion: str | None = None) -> None:
        self.state.report_at(site, code, message, suggestion)

    @contextmanager
    def reporting_once(self) -> Iterator[None]:
        """A diagnostic reported more than once within the block is kept once."""
        start = len(self.state.diagnostics)
        try:
            yield
        finally:
            seen: set = set()
            kept = [d for d in self.state.diagnostics[start:] if not (d in seen or seen.add(d))]  # type: ignore[func-returns-value]
            del self.state.diagnostics[start:]
            self.state.diagnostics.extend(kept)

    # -- what rules and placement ask of the run ------------------------------------------------

    def snapshot(self) -> Engine:
        """This finished run as another result may hold it: what a result exposes that a caller
        could change (the records, the diagnostics) copied, the rest shared (``infer.walk.reuse``)."""
        out = copy.copy(self)
        out.state = st = dataclasses.replace(self.state)  # (all its fields are the constructor's)
        st.records = {path: rec.copy() for path, rec in self.state.records.items()}
        st.diagnostics = list(self.state.diagnostics)
        return out

    @property
    def reusable(self) -> bool:
        """May this run's result stand for another call on a model of the same content
        (``infer.walk.reuse``)? Not when it read what can change without the model changing:
        external data, operator schemas registered at run time."""
        return (
            not self.timed_out
            and not self.state.external_reads
            and not self.state.options.read_external_data
            and (not self.dispatcher.depends_on_registrations)
        )

    # What the ``Walker`` protocol asks of the run; the layers above the walk (``infer.out``, the
    # drop-ins) read everything else from ``state``.

    @property
    def scope(self) -> DimScope:
        return self.state.scope

    @property
    def ir_version(self) -> int:
        return self.state.model.ir_version

    def declared_type(self, tp: TypeProto, value: str) -> T.Type:
        """A type the model writes, its dim names declarations of the model's variables (read
        from the run's table: a rule result that asked is this walk's alone, infer/walk/memo.py)."""
        self.scope.table_reads += 1
        return self.placement.declared_type(tp, value)

    def recorded_value(self, graph: str, name: str) -> Value | None:
        """What the walk has recorded for ``name`` in ``graph`` (this walk's alone, like the table)."""
        self.scope.table_reads += 1
        rec = self.state.records.get(graph)
        return None if rec is None else rec.values.get(name)

    def walk_subgraph(
        self, ctx: RuleContext, attr_name: str, inputs: list[Value], quiet: bool = False, iterated: bool = False
    ) -> list[Value] | None:
        return self.graphs.subgraph(self.walk_nodes, ctx, attr_name, inputs, quiet, iterated)

    # -- the pipeline ---------------------------------------------------------------------------

    def run(self) -> None:
        """Infer the model; walk it again when what its nodes require sharpens earlier results.

        A Conv deep in the graph tells us its input extent is at least its kernel; a Div of that
        extent computed earlier (exporters compute output sizes with Div) could not know it. When
        the first walk learned such a bound and left extents unknown, a second walk starts with
        the bounds (fresh variables are keyed by node, so the second walk names them the same).
        """
        with collector_paused(), self.state.budget.active():
            try:
                self._walk()
                if self.timed_out or not self.scope.minimums or not any(v.is_fresh for v in self.state.table):
                    return
                st = self.state
                st.scope = st.scope.carried()
                st.diagnostics, st.records = [], {}
                self._start_walk()
                self._walk()
            finally:
                self.state.scan.views.clear()  # read for the walk; a result kept for long need not hold them

    def _walk(self) -> None:
        if self.state.scan.refusals:
            self.state.records[MAIN] = GraphRecord(MAIN, "graph")
            for r in self.state.scan.refusals:
                self.state.report(
                    "limit",
                    f"the model is refused: {r.message}",
                    Location(r.path, value=r.value),
                    limits.how_to_raise(r.message),
                )
            return
        check_model(self.state, self.state.model)
        for path, t in self.state.scan.external:
            for problem in external.reference_problems(t):
                self.state.add_diagnostic_once(
                    "external-data", f"external tensor `{t.name}`: {problem}", Location(path, value=t.name), diag.ERROR
                )
        # Past the node budget the walk stops; ``stopping`` keeps what is sound and reports it.
        with _stopping(self):
            self.graphs.main(self.walk_nodes)

    # -- nodes ----------------------------------------------------------------------------------

    def walk_nodes(self, frame: Frame, views: list[NodeView], consume: bool = False) -> None:
        """Infer the nodes ``views`` describe; ``consume``: drop each view once used (a graph walked
        once, whose views would otherwise all stay alive beside the values they produce)."""
        scope, values, producers = frame.scope, frame.record.values, frame.record.producers
        nested = scope.parent is not None
        progress = self.state.options.progress if frame.path == MAIN else None
        # Every node's, before any is walked: a walk stopped part way (a time limit) leaves them whole.
        frame.record.holders = [i for i, v in enumerate(views) if v.has_subgraph]
        frame.record.node_io = [(v.op_type, v.domain, v.inputs, v.outputs) for v in views]
        for done, idx in enumerate(order(frame, views, self.uses, self.state.report), 1):
            view = views[idx]
            if consume:
                views[idx] = None  # type: ignore[call-overload]
            for name, v in zip(view.outputs, self.infer_node(frame, idx, None, view)):
                if not name:
                    continue
                if name in values or (nested and scope.visible_outside(name)):
                    self._redefined(frame, idx, view.node, name, name in values)
                if v.known is None:
                    # Equal values are held once: layers repeat their types, and a large model's
                    # memory is mostly its values. (Contents are not merged: 0.0 equals -0.0.)
                    v = self._shared.setdefault(v, v)
                values[name] = v  # the scope's own dict too (see ``Graphs.new_frame``)
                producers[name] = idx
            if progress is not None:
                progress(done, len(views))

    def _redefined(self, frame: Frame, idx: int, node: NodeProto, name: str, here: bool) -> None:
        code = "duplicate-definition" if here else "shadowing"
        where = " in this graph" if here else " in an enclosing graph"
        self.state.report(
            code, f"`{name}` is already defined{where}", Location(frame.path, idx, node.name, node.op_type, value=name)
        )

    def infer_node(self, frame: Frame, idx: int, node: NodeProto | None, view: NodeView | None = None) -> list[Value]:
        """Infer one node of ``frame``'s graph: ``node``, or the one ``view`` has read (fetched
        only when the memo cannot answer)."""
        self.state.visits.charge()  # Clause 15.4: bounded work, whatever the nesting
        if view is None:
            assert node is not None
            view = read_nodes([node])[0]
        opset = frame.opsets.get(view.domain)
        inputs = self._inputs(frame, idx, view)
        first_implicit = self.implicit_default and not self._warned_default and view.domain == ""
        memo = self.state.memo
        key = None if first_implicit else memo.key(view, opset, inputs)
        if key is not None and (hit := memo.get(key, self.scope)) is not None:
            prepared, plain, replay = hit
            make_site = partial(_site, frame, idx, view.node, inputs)
            site: Site | Callable[[], Site] = make_site
            if replay:  # what the rule required where it ran, required here too
                site = make_site()
                replay_effects(self.state.scope, replay, site)
            if plain is not None and not any(name in frame.declared for name in view.outputs):
                return list(plain)  # the common case of a repeated layer: nothing to add
            return self.placement.place(frame, site, view.outputs, view.op_type, prepared, None, ())
        return self._infer_afresh(frame, idx, view, opset, inputs, key)

    def _inputs(self, frame: Frame, idx: int, view: NodeView) -> list[Value | None]:
        """The node's input values: ``None`` for an absent one; an undefined one is reported."""
        scope = frame.scope
        local = scope.values
        inputs: list[Value | None] = []
        for name in view.inputs:
            if not name:
                inputs.append(None)
                continue
            v = local.get(name) or scope.lookup(name)
            if v is None:
                self.state.report(
                    "undefined-value",
                    f"{view.op_type} consumes `{name}`, which nothing defines",
                    Location(frame.path, idx, view.node.name, view.op_type, value=name),
                )
                v = Value()
            inputs.append(v)
        return inputs

    def _check_import(self, view: NodeView, opset: int | None, loc: Location) -> None:
        """Clause 5.3.2: every domain a node uses is imported, a model-local function's too; the
        default domain's implicit version is warned about once."""
        domain = view.domain
        if opset is None:
            self.state.report(
                "domain-not-imported",
                f"{view.op_type} is in domain '{domain}', which the model does not import",
                loc,
                f"add an opset_import entry for '{domain}'",
            )
        elif domain == "" and self.implicit_default and not self._warned_default:
            self._warned_default = True
            self.state.report(
                "default-opset-implicit",
                f"{view.op_type} is in the default domain, whose version the model does not import; "
                f"assuming opset {ONNX_OPSET}",
                loc,
                "add an opset_import entry for domain ''",
            )

    def _infer_afresh(
        self, frame: Frame, idx: int, view: NodeView, opset: int | None, inputs: list[Value | None], key: tuple | None
    ) -> list[Value]:
        node = view.node
        domain = view.domain
        loc = Location(frame.path, idx, node.name, view.op_type)
        self._check_import(view, opset, loc)
        sig, how = self.dispatcher.resolve(domain, view.op_type, view.overload, opset)
        if opset is None and how.kind != FUNCTION:
            prepared = self.placement.prepare_all(None, view.op_type, inputs, None, len(view.outputs))
            site = _site(frame, idx, node, inputs)
            return self.placement.place(frame, site, view.outputs, view.op_type, prepared, how.reason, ())
        attrs = rule_attributes(node, sig, frame.attr_refs, view.attrs_summary if not view.has_ref else None)
        ctx = RuleContext(node, partial(_site, frame, idx, node, inputs), sig, opset or 1, inputs, self, frame, attrs)
        n_diagnostics = len(self.state.diagnostics)
        check_node(self.state, ctx, loc, view)
        raw: list[Any] | None = None
        if how.kind == SCHEMA_BODY and (body := schema_body(domain, node, opset or 1, inputs)) is not None:
            raw = self.rules.run(lambda c: self.graphs.function(self.walk_nodes, frame, c, body), ctx, loc)
        elif how.kind == SCHEMA_BODY:
            how = how.fallback  # type: ignore[assignment]
        if how.kind == RULE:
            clean = len(self.state.diagnostics) == n_diagnostics  # the checks found nothing
            s = self.scope
            fact_reads, table_reads, facts_before = s.fact_reads, s.table_reads, s.facts_key
            raw = self.rules.run(how.target, ctx, loc)
            # Reused only where the rule declares its result a function of the node and inputs and
            # did nothing a reuse would skip (``ctx.acted``); a failure or a refused extent gives
            # a reason.
            if key is not None and clean and how.pure and not ctx.acted and ctx.reason is None:
                # What the result rests on beyond its key: the walk's table, what it has
                # learned, or nothing (infer/walk/memo.py).
                rests_on = (
                    (WALK, s.serial)
                    if s.table_reads != table_reads
                    else (FACTS, (facts_before, s.facts_key))
                    if s.fact_reads != fact_reads
                    else None
                )
                return self._remember(frame, ctx, view, sig, inputs, raw, key, rests_on)
        elif how.kind == FUNCTION:
            raw = self.rules.run(lambda c: self.graphs.function(self.walk_nodes, frame, c, how.target), ctx, loc)
        elif how.kind == CUSTOM_SCHEMA:
            # (``outer``: what the node's graph attributes read from enclosing graphs)
            infer_custom = custom_schemas.infer_outputs
            raw = self.rules.run(
                lambda c: infer_custom(c, how.target, frame, self.uses.of(node), self.ir_version), ctx, loc
            )
        elif how.code is not None:
            self.state.report(how.code, how.reason or "", loc, how.suggestion)
        prepared = self.placement.prepare_all(sig, view.op_type, inputs, raw, len(view.outputs))
        return self.placement.place(
            frame, _site_of(ctx), view.outputs, view.op_type, prepared, how.reason or ctx.reason, ctx.causes
        )

    def _remember(
        self,
        frame: Frame,
        ctx: RuleContext,
        view: NodeView,
        sig: Any,
        inputs: list[Value | None],
        raw: list[Any] | None,
        key: tuple,
        rests_on: tuple | None,
    ) -> list[Value]:
        """Place a pure run of a clean node, and offer it to the memo: a node with the same key
        gets the same outputs, passes the same checks, and nothing was reported or learned that
        a reuse would skip. Placing the ``plain`` values adds nothing when no output has unknown
        extents to name or contents to explain (and none is declared: checked at reuse)."""
        values = self.placement.prepare_all(sig, view.op_type, inputs, raw, len(view.outputs))
        simple = not any(p.needs_fill or p.note or p.overflow is not None for p in values)
        self.state.memo.offer(key, values, tuple(p.plain for p in values) if simple else None, rests_on, ctx.replay)
        return self.placement.place(frame, _site_of(ctx), view.outputs, view.op_type, values, None, ())


def _memo_policy(o: Options, model: ModelProto) -> Memo:
    """What of the options a rule's result depends on (infer/walk/memo.py); a run made while
    reuse across calls is disabled keeps its results to itself."""
    options = (
        o.propagate_values,
        o.limits.max_expression_size,
        o.limits.max_rank,
        model.ir_version,
        o.custom_schemas,
        registry.REGISTRY.generation,
    )
    return Memo(options, None if reuse.RECENT.enabled else Store())


@contextmanager
def _stopping(engine: Engine) -> Iterator[None]:
    """Where the node budget or the run's time (``max_seconds``) runs out, stop the walk: keep
    what is sound, report the limit."""
    try:
        yield
    except (limits.LimitExceeded, NodeTimeout) as e:
        if isinstance(e, NodeTimeout):
            if e.level != RUN:
                raise  # (a rule's own time is its runner's to catch; none should reach here)
            engine.timed_out = True
            message = (
                f"inference stopped after {run_seconds():g} s (limit max_seconds); values not "
                "reached by then are not inferred"
            )
        else:
            message = str(e)
        # A Loop body interrupted mid fixed point holds one round's types, not every round's:
        # only the values the main graph's finished nodes produced are kept.
        for path in [p for p in engine.state.records if p != MAIN]:
            del engine.state.records[path]
        engine.state.report("limit", message, Location(MAIN), limits.how_to_raise(message))


def _site_of(ctx: RuleContext) -> Callable[[], Site]:
    """The context's site, made when first asked for (by the rule or by placement)."""
    return lambda: site_of(ctx)


def _site(frame: Frame, idx: int, node: NodeProto, inputs: list[Value | None]) -> Site:
    types = tuple(None if v is None else v.type for v in inputs)
    return Site(
        frame.path,
        idx,
        node.name,
        node.op_type,
        node.domain,
        types,
        (frame.ident or frame.path, node_identity(frame, idx, node.output)),
    )


def node_identity(frame: Frame, idx: int, outputs: Iterable[str]) -> str:
    """The node at ``idx`` of ``frame``'s graph by what it is rather than where: its first output's
    name (unique in a valid graph), else its position (no output, or one an earlier node of the
    graph already produced)."""
    first = next((o for o in outputs if o), None)
    return first if first is not None and first not in frame.record.producers else f"#{idx}"
