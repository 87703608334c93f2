"""What an inference rule sees of its node: inputs, attributes, and ways to report.

A rule is ``rule(ctx) -> list`` with one entry per node output, each one of:

- a shape (tuple of dims; ``None`` dims are unknown): a tensor whose element type the schema
  decides;
- a ``Type`` (a tensor type with ``elem=None`` gets its element type from the schema);
- a ``Value`` (a type plus known contents);
- ``None``: nothing known beyond what the schema says.

Unknown dims become fresh variables with the reason the rule gave through ``because``.

A rule sees its node only through the context's methods. The walk and the checks, which made the
context, read the node and its site with ``node_of`` and ``site_of``; rules may not import those
(tests/test_architecture.py). What a rule does beyond computing its outputs goes through a
method that records it: a requirement or an assumption in ``replay`` (a reuse of the result at
another node redoes it there, ``replay_effects``), a report, a fresh or declared variable or a
subgraph walk in ``acted`` (the walk reuses no result of a rule that did any of it,
infer/walk/memo.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Protocol

from onnx import AttributeProto, NodeProto, TypeProto

from infer.core.dims import Dim
from infer.core.dimscope import DimScope
from infer.core.dimtable import Origin, Site, Variable
from infer.core.scopes import GraphPath
from infer.core.types import UNKNOWN, OptionalType, SequenceType, SparseTensorType, TensorType, Type
from infer.core.values import Known, Value


class Schema(Protocol):
    """What a rule reads of its operator's signature (``infer.contract.signature.Signature``)."""

    since_version: int
    domain: str
    attributes: Mapping[str, Any]  # name -> spec with ``default`` and ``type``
    outputs: Sequence[Any]


class Facts(Protocol):
    """What decides the signs, sizes and order of extents in a run (``RuleContext``, ``DimScope``):
    bounds read from an extent's syntax, sharpened by what the run has required; comparisons
    proved from them (the one prover rules use)."""

    def lower_bound(self, d: Dim) -> int | None: ...

    def bounds(self, d: Dim) -> tuple[int | None, int | None]: ...

    def equal(self, a: Dim, b: Dim) -> bool | None: ...

    def less(self, a: Dim, b: Dim) -> bool | None: ...


class Walker(Protocol):
    """What a rule may ask of the walk it runs in; the engine implements it.

    This is the only way back from a rule to the walker: subgraphs are walked through it (the
    recursion of If, Loop, Scan and function calls), and everything else a rule learns comes in
    its ``RuleContext``.
    """

    scope: DimScope
    ir_version: int

    def report_at(self, site: Site, code: str, message: str, suggestion: str | None = None) -> None: ...

    def walk_subgraph(self, ctx: RuleContext, attr: str, inputs: list[Value], quiet: bool,
                      iterated: bool) -> list[Value] | None: ...  # fmt: skip

    def declared_type(self, tp: TypeProto, value: str) -> Type: ...

    def recorded_value(self, graph: str, name: str) -> Value | None: ...

    @contextmanager
    def reporting_once(self) -> Iterator[None]: ...


_MISSING = object()


class RuleError(Exception):
    """A rule found the node malformed; the engine reports it and leaves outputs unknown."""

    def __init__(self, code: str, message: str, suggestion: str | None = None):
        super().__init__(message)
        self.code = code
        self.suggestion = suggestion


class Effects:
    """What a rule did besides computing its outputs, shared by a context and its views:
    ``acted`` (what a reuse of its result could not redo) and ``replay`` (what it redoes)."""

    __slots__ = ("acted", "replay")

    def __init__(self) -> None:
        self.acted = False
        self.replay: list[tuple[str, tuple, dict[str, Any]]] = []


class RuleContext:
    """The node under inference, as a rule sees it."""

    __slots__ = (
        "_effects",
        "_frame",
        "_node",
        "_site",
        "_walker",
        "attrs",
        "causes",
        "inputs",
        "n_outputs",
        "opset",
        "reason",
        "sig",
        "version",
    )  # fmt: skip

    def __init__(
        self,
        node: NodeProto,
        site: Site | Callable[[], Site],
        sig: Schema | None,
        opset: int,
        inputs: list[Value | None],
        walker: Walker,
        frame: Any,
        attrs: dict[str, Any],
        effects: Effects | None = None,
    ):
        """``site``: the node's, or a function making it when first asked for (most nodes never
        need one). ``walker`` and ``frame`` (the graph being walked, opaque here) are for the
        walker's own calls back (``subgraph``); rules never read them. ``effects``: shared with
        the context this one is a view of (``view``)."""
        self._node = node
        self._site = site
        self._effects = Effects() if effects is None else effects
        self.sig = sig
        self.opset = opset
        self.version = sig.since_version if sig is not None else opset
        self.inputs = inputs
        self.n_outputs = len(node.output)
        self._walker = walker
        self._frame = frame
        self.attrs = attrs
        self.reason: str | None = None
        self.causes: tuple[str, ...] = ()

    def _where(self) -> Site:
        """The node in the model (graph path, position, name, operator, input types)."""
        s = self._site
        if type(s) is not Site:
            s = self._site = s()
        return s

    def _acting(self) -> Site:
        """The site of an effect the rule is about to have that a reuse of its result could not
        redo (``acted``)."""
        self._effects.acted = True
        return self._where()

    def _replayed(self, method: str, args: tuple, **kw: Any) -> None:
        """Have the scope's ``method`` (a requirement, an assumption) at this node, and record it
        for a reuse of this result to redo at its own node (``replay``)."""
        self._effects.replay.append((method, args, kw))
        getattr(self._walker.scope, method)(*args, site=self._where(), **kw)

    @property
    def acted(self) -> bool:
        """Has the rule reported, made or declared a variable, or walked a subgraph?"""
        return self._effects.acted

    @property
    def replay(self) -> tuple[tuple[str, tuple, dict[str, Any]], ...]:
        """The requirements and assumptions the rule made, as (scope method, arguments,
        keywords): what a reuse of its result redoes (``replay_effects``)."""
        return tuple(self._effects.replay)

    def view(self, indices: Sequence[int]) -> RuleContext:
        """This node as if its inputs were only ``indices`` of its own, in that order (a fused or
        quantized operator presenting its float counterpart's inputs to that one's rule)."""
        node = NodeProto()
        node.CopyFrom(self._node)
        del node.input[:]
        node.input.extend(self.input_name(i) for i in indices)
        inputs = [self.value(i) if self.has(i) else None for i in indices]
        return RuleContext(node, self._where(), self.sig, self.opset, inputs, self._walker, self._frame, self.attrs,
                           self._effects)  # fmt: skip

    # -- inputs ---------------------------------------------------------------------------------

    @property
    def op_type(self) -> str:
        return self._node.op_type

    @property
    def n_inputs(self) -> int:
        return len(self.inputs)

    def has(self, i: int) -> bool:
        """Is input ``i`` supplied (present and not an empty name, Clause 7.3.3)?"""
        return i < len(self.inputs) and self.inputs[i] is not None

    def value(self, i: int) -> Value | None:
        return self.inputs[i] if i < len(self.inputs) else None

    def type(self, i: int) -> Type:
        v = self.value(i)
        return UNKNOWN if v is None else v.type

    def shape(self, i: int) -> tuple[Dim, ...] | None:
        """Shape of tensor input ``i``; ``None`` if absent, not a tensor or of unknown rank."""
        t = self.type(i)
        if isinstance(t, (TensorType, SparseTensorType)):
            return t.shape
        return None

    def rank(self, i: int) -> int | None:
        s = self.shape(i)
        return None if s is None else len(s)

    def elem(self, i: int) -> int | None:
        t = self.type(i)
        return t.elem if isinstance(t, (TensorType, SparseTensorType)) else None

    def known(self, i: int) -> Known | None:
        """Contents of tensor input ``i``, if tracked. A sequence's or optional's tracked items are
        no tensor's contents: a rule reading elements (an Add given a sequence) never sees them."""
        v = self.value(i)
        if v is None or isinstance(v.type, (SequenceType, OptionalType)):
            return None
        return v.known

    def known_dims(self, i: int) -> list[Dim] | None:
        """Contents of input ``i`` as dims (a shape tensor), if tracked."""
        k = self.known(i)
        return None if k is None else k.dims()

    def known_ints(self, i: int) -> list[int] | None:
        k = self.known(i)
        return None if k is None else k.ints()

    def output_name(self, k: int) -> str:
        """The name of output ``k`` ("" where the node leaves it out)."""
        out = self._node.output
        return out[k] if k < len(out) else ""

    def wants_output(self, k: int) -> bool:
        """Does the node ask for output ``k`` (an optional output left out is not computed)?"""
        return self.output_name(k) != ""

    def input_name(self, i: int) -> str:
        return self._node.input[i] if i < len(self._node.input) else ""

    # -- attributes -----------------------------------------------------------------------------

    def attr(self, name: str, default: Any = _MISSING) -> Any:
        """The node's attribute, else the schema default, else ``default`` (else ``None``)."""
        if name in self.attrs:
            return self.attrs[name]
        if self.sig is not None:
            spec = self.sig.attributes.get(name)
            if spec is not None and spec.default is not None:
                return spec.default
        return None if default is _MISSING else default

    def has_attr(self, name: str) -> bool:
        return name in self.attrs

    def require(self, name: str) -> Any:
        """A required attribute; its absence is a malformed node."""
        v = self.attr(name)
        if v is None:
            raise RuleError("bad-attribute", f"{self.op_type} needs attribute '{name}'")
        return v

    # -- what the run knows of its dimension variables ------------------------------------------

    def lower_bound(self, d: Dim) -> int | None:
        """The least value of ``d`` in a run of a valid model (what the run has required
        included: a window that must fit makes its axis at least the window)."""
        return self._walker.scope.lower_bound(d)

    def bounds(self, d: Dim) -> tuple[int | None, int | None]:
        """(lower, upper) bounds of ``d``, sharpened like ``lower_bound``; ``None`` where unknown."""
        return self._walker.scope.bounds(d)

    def equal(self, a: Dim, b: Dim) -> bool | None:
        """``True`` when ``a == b`` in every run of a valid model, ``False`` when in none, else
        ``None`` (what the run has required included: the one comparison rules use)."""
        return self._walker.scope.equal(a, b)

    def less(self, a: Dim, b: Dim) -> bool | None:
        """``a < b`` in every run of a valid model (``True``), in none (``False``), else ``None``."""
        return self._walker.scope.less(a, b)

    def exact(self, d: Dim) -> Dim:
        """``d`` with the quotients the model's validity makes exact (``require_multiple``)."""
        return self._walker.scope.exact(d)

    def require_at_least(self, d: Dim, value: int, why: str) -> None:
        """A model that runs has ``d >= value`` here (a window fits its axis): listed in
        ``result.assumptions``, and it sharpens ``lower_bound`` from now on."""
        self._replayed("require_at_least", (d, value), why=why)

    def require_multiple(self, d: Dim, k: Dim, why: str) -> None:
        """A model that runs has ``k`` dividing ``d`` here (a Reshape's element count): listed as
        ``mod(d, k) == 0``, and ``exact`` uses it."""
        self._replayed("require_multiple", (d, k), why=why)

    def require_at_most(self, d: Dim, value: int, why: str, every_run: bool = True) -> None:
        """A model that runs has ``d <= value`` here (an index within its axis): listed in the
        model's domain; ``every_run`` false where only some values of the inputs need it (the
        bound is what every value needs)."""
        self._replayed("require_at_most", (d, value), why=why, every_run=every_run)

    def require_broadcast(self, ds: Sequence[Dim], text: str, why: str = "broadcast") -> None:
        """A model that runs has the extents ``ds`` broadcast (each 1 or equal to the others):
        listed in the domain; ``text`` is the assumption ``explain`` shows."""
        self._replayed("require_broadcast", (tuple(ds), text), why=why)

    def require_equal(self, a: Dim, b: Dim, text: str, why: str) -> None:
        """A model that runs has ``a == b`` here (a MatMul's inner extents): listed in the domain."""
        self._replayed("require_equal", (a, b, text), why=why)

    def require_unexpressed(self, text: str, reason: str) -> None:
        """A model that runs needs ``text``, which no constraint over extents states (the values
        of computed indices): listed in the domain as not expressed, with ``reason``."""
        self._replayed("require_unexpressed", (text, reason))

    def runtime_requires_at_least(self, d: Dim, value: int, why: str) -> None:
        """onnxruntime runs this node only where ``d >= value``, which the definition does not
        require: a runtime's requirement in the domain; ``lower_bound`` does not use it."""
        self._replayed("runtime_requires_at_least", (d, value), why=why)

    def refused_by_runtime(self, text: str) -> None:
        """onnxruntime refuses this node although the definition allows it (``text`` says why):
        a ``runtime-refuses`` warning, and a runtime's requirement in the domain (the model
        runs nowhere there). Inference goes on with the definition's outputs."""
        self._walker.scope.refused_by_runtime(text, self._acting())
        message = f"{self.op_type} with inputs {self.input_types_str()}: {text}; the definition allows it"
        self._walker.report_at(self._where(), "runtime-refuses", message)

    def fresh(self, reason: str, key: tuple = (), value: str | None = None, axis: int | None = None,
              causes: tuple[str, ...] = ()) -> Dim:  # fmt: skip
        """A fresh variable of this node for an extent it cannot determine, with ``reason``; the
        same ``key`` at this node gives the same variable (a subgraph walked again)."""
        site = self._acting()
        origin = Origin("fresh", reason, site, value, axis, causes)
        return self._walker.scope.fresh(origin, key=(*site.key, *key))

    def is_fresh(self, d: Dim) -> bool:
        """Does ``d`` mention a fresh variable (an extent inference could not determine)?"""
        return self._walker.scope.is_fresh(d)

    def variable(self, name: str) -> Variable | None:
        """The run's variable called ``name``, with its origin."""
        return self._walker.scope.variable(name)

    # -- reporting ------------------------------------------------------------------------------

    @property
    def ir_version(self) -> int:
        return self._walker.ir_version

    @property
    def attribute_references(self) -> Mapping[str, AttributeProto] | None:
        """Inside a function body, the calling node's attributes its ``ref_attr_name``s read."""
        return getattr(self._frame, "attr_refs", None)

    def because(self, reason: str, *inputs: int) -> None:
        """Why this node's unknown extents are unknown; ``inputs`` name the inputs responsible."""
        self.reason = reason
        self.causes = tuple(self.input_name(i) for i in inputs if self.input_name(i))

    def contents_unknown(self, i: int, what: str) -> None:
        """The usual reason: ``what`` is read from input ``i`` whose contents are not known."""
        name = self.input_name(i)
        self.because(f"{what} comes from `{name}`, whose contents are not known", i)

    def error(self, code: str, message: str, suggestion: str | None = None) -> None:
        """Report a contradiction found at this node (e.g. extents 3 and 4 cannot broadcast)."""
        self._walker.report_at(self._acting(), code, message, suggestion)

    def assume(self, text: str, dims: Sequence[Dim] = ()) -> None:
        self._replayed("assume", (text, tuple(dims)))

    def assume_range(self, d: Dim, lower: int | None, upper: int | None, why: str) -> None:
        """Record that this node's claims assume ``lower <= d <= upper`` (``result.assumptions``)."""
        self._replayed("assume_range", (d, lower, upper), why=why)

    def input_types_str(self) -> str:
        return ", ".join("-" if v is None else str(v.type) for v in self.inputs)

    def declared_type(self, tp: TypeProto, value: str) -> Type:
        """A type the model writes (a TypeProto attribute), its dim names read as declarations
        (which may name variables: an effect)."""
        self._effects.acted = True
        return self._walker.declared_type(tp, value)

    def recorded_value(self, graph: str, name: str) -> Value | None:
        """What the walk has recorded for ``name`` in graph ``graph`` (where a variable was made)."""
        return self._walker.recorded_value(graph, name)

    # -- subgraphs ------------------------------------------------------------------------------

    def subgraph(self, attr_name: str, inputs: Sequence[Value], quiet: bool = False,
                 iterated: bool = False) -> list[Value] | None:  # fmt: skip
        """Infer the graph attribute ``attr_name`` with ``inputs`` bound to its inputs.

        ``quiet`` drops what this walk reports (a round of a fixed point that is walked again);
        ``iterated``: the graph runs once per iteration or element, so a dim name declared in
        it is not read as one extent for every iteration.
        """
        self._effects.acted = True
        return self._walker.walk_subgraph(self, attr_name, list(inputs), quiet, iterated)

    def made_inside(self, name: str, attr_name: str) -> bool:
        """Was variable ``name`` made fresh by a node inside the graph attribute ``attr_name``
        (in it or in a graph nested in it)?"""
        var = self.variable(name)
        if var is None or not var.is_fresh or var.origin.site is None:
            return False
        site = self._where()
        path = GraphPath(site.graph).subgraph(site.node_index or 0, attr_name)
        return GraphPath(var.origin.site.graph).within(path)

    @contextmanager
    def reporting_once(self) -> Iterator[None]:
        """Within the block, a diagnostic reported again (by the first and the final walk of a
        fixed point) is kept once."""
        with self._walker.reporting_once():
            yield


def node_of(ctx: RuleContext) -> NodeProto:
    """The node a context presents (for the walk and the checks that made it; never for rules)."""
    return ctx._node


def site_of(ctx: RuleContext) -> Site:
    """The site of the node a context presents, made when first asked for (the walk's and the
    checks'; never for rules)."""
    return ctx._where()


def replay_effects(scope: DimScope, effects: Sequence[tuple[str, tuple, dict[str, Any]]], site: Site) -> None:
    """Redo at ``site`` the requirements and assumptions a rule made at another node whose
    result is reused here (``RuleContext.replay``)."""
    for method, args, kw in effects:
        getattr(scope, method)(*args, site=site, **kw)
