"""Placing a node's outputs: what its rule returned becomes the values its graph records.

A rule returns one entry per output (a shape, a ``Type``, a ``Value`` or ``None``). Placement
completes each with the element types the schema's type constraints decide, guards its contents
(``in_domain``, ``without_overflow``), names every unknown extent with a fresh variable that
records the node, output, axis and reason (Clause 9.3), refines the value against what the model
declares for it (Clause 9.4) and notes why contents or a rank stayed unknown (for ``explain``).

The part that depends on the value alone is done once (``prepare``), so that a memoized
result carries it and repeated layers skip it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, Protocol

from onnx import ModelProto, TensorProto, TypeProto

from infer.check.validate import admits, type_string
from infer.contract.signature import Signature, parse_type_str
from infer.core import dims as D
from infer.core import types as T
from infer.core.diagnostics import Location
from infer.core.dims import Dim
from infer.core.dimscope import DimScope
from infer.core.dimtable import DimTable, Origin, Site
from infer.core.scopes import MAIN, ContentNote, Frame
from infer.core.values import INT_RANGE, Known, Value, in_domain, without_overflow


class Prepared(NamedTuple):
    """One output of a rule, ready to place."""

    value: Value  # as the rule and the schema give it
    needs_fill: bool  # has unknown extents (or a kind whose placement always runs)
    plain: Value  # the value placed where nothing is fresh or declared
    note: bool  # ``plain`` needs a content note (unknown shape contents or rank)
    overflow: int | None = None  # an element computed past its element type's range (made unknown)
    # Symbolic elements of a 32-bit integer tensor its range may not hold: (element, type), each
    # assumed within the type where the node is placed (a runtime wraps past it).
    assumed: tuple[tuple[Dim, int], ...] = ()


class Run(Protocol):
    """What placement reads of the run it places for (``infer.walk.state.RunState``)."""

    @property
    def model(self) -> ModelProto: ...

    @property
    def scope(self) -> DimScope: ...

    @property
    def table(self) -> DimTable: ...

    @property
    def propagate_values(self) -> bool: ...

    def report(self, code: str, message: str, location: Location, suggestion: str | None = None) -> None: ...


class Placement:
    """Places the outputs of the nodes of one run, and reads the types the model declares."""

    def __init__(self, run: Run):
        self.run = run
        # A declared name -> the extent it stands for and where that was (``meaning``).
        self.meanings: dict[str, tuple[Dim, str]] = {}
        # Names the model gives to extents inference does not prove equal -> the extent each
        # stands for: the drop-ins write such a name only over that extent (infer/core/dimwriter.py).
        self.conflicts: dict[str, Dim] = {}

    def declared_type(self, tp: TypeProto, value: str) -> T.Type:
        """A type the model writes for ``value``, its dim names declarations of the model's
        variables (positive those the main graph's inputs declare, wherever they are met first:
        a value declared twice is read before the inputs are bound)."""
        table, inputs = self.run.table, self._input_dim_names

        def read_dim(t: Any, axis: int) -> Dim:
            d = t.shape.dim[axis]
            kind = d.WhichOneof("value")
            if kind == "dim_value":
                return int(d.dim_value) if d.dim_value >= 0 else None
            if kind == "dim_param" and d.dim_param:
                return table.declared(d.dim_param, f"on `{value}`", value, d.dim_param in inputs)
            return None

        return T.from_proto(tp, read_dim)

    # -- what depends on the value alone --------------------------------------------------------

    def prepare_all(
        self, sig: Signature | None, op_type: str, inputs: Sequence[Value | None], raw: Sequence[Any] | None, n: int
    ) -> list[Prepared]:
        """What the rule returned (``raw``), completed by what the schema's constraints decide."""
        base = schema_types(sig, inputs, n)
        return [
            self.prepare(to_value(raw[k] if raw is not None and k < len(raw) else None, base[k]), op_type)
            for k in range(n)
        ]

    def prepare(self, v: Value, op_type: str) -> Prepared:
        t = v.type
        if v.known is None and type(t) is T.TensorType:
            return self._prepare_tensor(v, t)  # the usual case: a tensor of unknown contents
        v, overflow = without_overflow(in_domain(v))
        v, assumed = _narrow_symbolic(v)
        t = v.type
        needs_fill = not isinstance(t, (T.TensorType, T.SparseTensorType)) or (
            t.shape is not None and any(d is None for d in t.shape)
        )
        plain = self.settle(v, t, op_type)
        return Prepared(v, needs_fill, plain, _needs_note(plain), overflow, assumed)

    @staticmethod
    def _prepare_tensor(v: Value, t: T.TensorType) -> Prepared:
        """``prepare`` of a tensor without contents: nothing to keep in its domain or to settle
        but empty contents, which a shape of integers with a 0 has."""
        shape = t.shape
        if shape is None:
            return Prepared(v, False, v, True)  # unknown rank: noted
        needs_fill = empty = False
        symbolic = False
        for d in shape:
            if d is None:
                needs_fill = True
            elif type(d) is int:
                empty = empty or d == 0
            else:
                symbolic = True
        if empty and not needs_fill and not symbolic:  # every extent an int
            plain = Value(t, Known(tuple(d for d in shape if type(d) is int), ()))
        else:
            plain = v
        note = plain.known is None and t.elem in _SMALL_INTS and len(shape) <= 1
        return Prepared(v, needs_fill, plain, note)

    def settle(self, v: Value, t: T.Type, op_type: str) -> Value:
        """``v`` with type ``t``: contents dropped where they do not fit (or are not propagated,
        an option; a Constant's are always kept), empty ones made known."""
        known = v.known
        if known is not None and (
            not _known_fits(known, t) or (not self.run.propagate_values and op_type != "Constant")
        ):
            return Value(t)
        if known is None:
            return with_empty_contents(Value(t, None, v.span) if t is not v.type else v)
        return v if t is v.type else Value(t, known)

    # -- placing --------------------------------------------------------------------------------

    def place(
        self,
        frame: Frame,
        site: Site | Callable[[], Site],
        outputs: Sequence[str],
        op_type: str,
        prepared: list[Prepared],
        reason: str | None,
        causes: tuple[str, ...],
    ) -> list[Value]:
        """Name this node's unknown extents, refine by declarations, note unknown contents.
        ``site``: the node's, or a function making it (most nodes never need one)."""
        outs: list[Value] = []
        for k, name in enumerate(outputs):
            p = prepared[k]
            if not name:
                outs.append(p.value)
                continue
            if not p.needs_fill and name not in frame.declared:
                v = p.plain
            else:
                site = site if isinstance(site, Site) else site()
                v = self._placed(frame, site, name, op_type, k, p, reason, causes)
            if p.note if v is p.plain else _needs_note(v):
                site = site if isinstance(site, Site) else site()
                frame.record.notes[name] = ContentNote(site, reason or default_reason(op_type), causes)
            if p.assumed:
                site = site if isinstance(site, Site) else site()
                self._assume_within(p.assumed, site)
            if p.overflow is not None and isinstance(p.value.type, T.TensorType):  # only a tensor's overflows
                site = site if isinstance(site, Site) else site()
                self.run.report(
                    "integer-overflow",
                    f"{op_type} computes {p.overflow} in `{name}`, outside the range of "
                    f"{T.elem_name(p.value.type.elem)}; a runtime wraps it, so that element is left unknown",
                    Location(site.graph, site.node_index, site.node_name, site.op_type, value=name),
                )
            outs.append(v)
        return outs

    def _assume_within(self, assumed: tuple[tuple[Dim, int], ...], site: Site) -> None:
        """Claims on these elements rest on each staying within its 32-bit type (listed in
        ``result.assumptions``), where what the run knows does not prove it."""
        scope = self.run.scope
        for d, elem in assumed:
            lo, hi = INT_RANGE[elem]
            blo, bhi = scope.bounds(d)
            need_lo = None if blo is not None and blo >= lo else lo
            need_hi = None if bhi is not None and bhi <= hi else hi
            scope.assume_range(d, need_lo, need_hi, site, f"within {T.elem_name(elem)}")

    def _placed(
        self,
        frame: Frame,
        site: Site,
        name: str,
        op_type: str,
        k: int,
        p: Prepared,
        reason: str | None,
        causes: tuple[str, ...],
    ) -> Value:
        t = p.value.type
        if p.needs_fill:
            why = reason or default_reason(op_type)
            t = self.fill_unknown(
                t,
                lambda axis: (Origin("fresh", why, site, name, axis, causes), (*site.key, k, axis)),
            )
        if name in frame.declared:
            t = self.refine_declared(frame, site, name, t)
        return self.settle(p.value, t, op_type)

    def fill_unknown(self, t: T.Type, origin_for: Callable[[int], tuple[Origin, Any]]) -> T.Type:
        """Replace unknown dims of tensor types by fresh variables (``origin_for(axis)`` gives the
        origin and the key that makes a re-walk name them the same)."""
        if isinstance(t, (T.TensorType, T.SparseTensorType)) and t.shape is not None:
            if any(d is None for d in t.shape):
                fresh = self.run.scope.fresh
                return type(t)(
                    t.elem, tuple(fresh(*origin_for(axis)) if d is None else d for axis, d in enumerate(t.shape))
                )
        elif isinstance(t, T.SequenceType):
            # A variable in an element type would claim one extent for every element (Clause
            # 6.5.2, note): an extent the elements may not share stays unnamed.
            return t
        elif isinstance(t, T.OptionalType):
            return T.OptionalType(self.fill_unknown(t.elem, origin_for))
        return t

    def refine_declared(self, frame: Frame, site: Site, name: str, t: T.Type) -> T.Type:
        """``t`` refined by what the graph declares for ``name`` (Clause 9.4); a declaration
        inference refutes is reported and the inferred part kept (it is what the operators
        compute); one it cannot refute but adopts is a listed assumption (``_Refinement``)."""
        tp = frame.declared.get(name)
        if tp is None:
            return t
        declared = self.declared_type(tp, name)
        judge = _Refinement(self, site, name, name in frame.record.outputs)
        out, clashes = T.refine(declared, t, judge.keep)
        location = Location(site.graph, site.node_index, site.node_name, site.op_type, value=name)
        for c in [*clashes, *judge.refuted]:
            self.run.report(
                "declared-type-clash",
                f"`{name}` is declared {declared} but {site.op_type} produces {t}: {c}",
                location,
                "fix or remove the value_info entry" if name not in frame.record.outputs else None,
            )
        for text in judge.unproven:
            self.run.report(
                "declared-name-unproven",
                f"`{name}` is declared {declared} and {site.op_type} produces {t}: {text}",
                location,
            )
        return out

    def meaning(self, d: Dim, i: Dim, where: str) -> Dim:
        """The extent a declared dim stands for: a name declared only on values that nodes
        produce stands for the extent ``i`` inferred where the model first declares it on a
        known extent (``where``); a graph input's variable or a spelled expression for itself."""
        name = D.variable_name(d)
        if name is None or self._names_input_variable(d):
            return d
        return self.meanings.setdefault(name, (i, where))[0]

    def _names_input_variable(self, d: Dim) -> bool:
        """Does ``d`` mention a variable declared on an input of the main graph?"""
        return bool(self._input_variables(d))

    def _over_inputs(self, d: Dim) -> bool:
        """Is ``d`` an integer or an expression over the main graph's inputs' variables only?"""
        return isinstance(d, int) or self._input_variables(d) == D.free_names(d)

    def _input_variables(self, d: Dim) -> set[str]:
        return {n for n in D.free_names(d) if n in self._input_dim_names}

    @property
    def _input_dim_names(self) -> frozenset[str]:
        """The ``dim_param`` names the main graph's inputs declare (in element types too)."""
        return self.run.table.inputs


class _Refinement:
    """What one value's declared extents add to the inferred ones (a ``types.DimRefine``).

    An extent inference could not determine takes the declaration. Against an inferred extent
    a declaration it refutes (an integer outside the extent's bounds) is collected in
    ``refuted``; a declared integer it cannot refute replaces the inferred extent under the
    listed assumption that they are equal (``floor(N/20) - 1 == 0``), which ``verify`` respects.
    A declared name keeps the inferred extent, and stands for one extent wherever it is
    declared (``Placement.meaning``): given to one proved different it is refuted; given to two
    extents the inputs determine that inference can prove neither equal nor different (two axes
    of one output named alike, inferred ``batch`` and ``L - 4``) it is in ``unproven``,
    reported once a name; either way it is a conflict, not written over the other extent.
    """

    def __init__(self, placement: Placement, site: Site, name: str, is_output: bool):
        self.placement, self.site, self.name, self.is_output = placement, site, name, is_output
        self.scope = placement.run.scope
        self.refuted: list[T.Clash] = []
        self.unproven: list[str] = []

    def keep(self, axis: int, d: Dim, i: Dim) -> Dim:
        if i is None or self.scope.is_fresh(i):  # (None: the inferred rank is unknown)
            return self._unknown(axis, d, i)
        if D.equal(d, i) is True:
            return i
        if isinstance(d, int):
            return self._integer(axis, d, i)
        m = self.placement.meaning(d, i, self._where(axis))
        same = True if m is i else D.equal(m, i)
        if same is False and T.zero_against_symbol(m, i):
            same = None  # a variable may denote an empty extent (Clause 6.5.1)
        if same is False:
            self.refuted.append(T.Clash("dim", D.to_str(d), D.to_str(i), axis))
            self._conflict(d, m)
        elif same is None and self.placement._over_inputs(m) and self.placement._over_inputs(i):
            # Two extents the inputs determine, which inference derives differently.
            self._unproven(d, m, i, axis)
        else:
            # Both hold; the model states the equality (a name it declares only on values nodes
            # produce stands for what it is declared on).
            self.scope.learn_equal(d, i, self.site)
        return i

    def _where(self, axis: int) -> str:
        graph = "" if self.site.graph == MAIN else f" in {self.site.graph}"
        return f"`{self.name}` axis {axis}{graph}"

    def _unknown(self, axis: int, d: Dim, i: Dim) -> Dim:
        """An extent inference could not determine takes what the model declares, except that a
        graph output's does not take a variable of the graph inputs (that would equate this
        extent with one of theirs on the declaration's word alone, and exporters name output
        axes after input axes of equal extent at export time: TorchScript declared `batch` on a
        height), nor does any extent take a name that already stands for another one (two
        NonZero counts named alike are not thereby equal)."""
        if isinstance(d, int):
            return d
        where = self._where(axis)
        name = D.variable_name(d)
        stood = self.placement.meanings.get(name) if name is not None else None
        if stood is not None and stood[1] != where:  # (the same place placed again takes it again)
            self._conflict(d, stood[0])
            return i
        self.placement.meaning(d, d, where)
        return i if self.is_output and self.placement._names_input_variable(d) else d

    def _conflict(self, d: Dim, m: Dim) -> str:
        """Record that the model gives ``d``, which stands for ``m``, to another extent."""
        key = D.variable_name(d) or D.to_str(d)
        self.placement.conflicts.setdefault(key, m)
        return key

    def _unproven(self, d: Dim, m: Dim, i: Dim, axis: int) -> None:
        """The model gives ``d`` to ``i`` at ``axis``, where it stands for ``m``: reported once a name."""
        seen = len(self.placement.conflicts)
        key = self._conflict(d, m)
        if len(self.placement.conflicts) == seen:
            return
        first = self.placement.meanings.get(key, (m, "a graph input"))[1]
        self.unproven.append(
            f"`{D.to_str(d)}` stands for {D.to_str(m)} ({first}), which inference cannot prove equal "
            f"to {D.to_str(i)} at axis {axis}; each keeps its inferred extent, and the name is not "
            "written over it"
        )

    def _integer(self, axis: int, d: int, i: Dim) -> Dim:
        """A declared integer against an inferred symbolic extent: refuted where the extent's
        bounds exclude it, else adopted under the assumption ``i == d``. A variable may denote
        0 (Clause 6.5.1), so a declared 0 is refuted only by the extent's least value with every
        variable at 0 or at what the model's validity requires of it."""
        if d == 0:
            least = self.scope.least_where_empty(i)
            refuted = least is not None and least > 0
        else:
            lo, hi = self.scope.bounds(i)
            refuted = (lo is not None and lo > d) or (hi is not None and hi < d)
        if refuted:
            self.refuted.append(T.Clash("dim", str(d), D.to_str(i), axis))
            return i
        self.scope.assume_range(i, d, d, self.site, f"`{self.name}` is declared {d} at axis {axis}")
        return d


_ABSENT = object()  # an absent input, in a key of ``_SCHEMA_TYPES``
# (id(sig), n, what each input's type is without its shape) -> (sig, output types). The signature
# is held so that its id is not reused while the entry lives. Bounded for long-lived processes.
_SCHEMA_TYPES: dict[tuple, tuple[Signature, tuple[T.Type, ...]]] = {}
_MAX_SCHEMA_TYPES = 1 << 12


def schema_types(sig: Signature | None, inputs: Sequence[Value | None], n: int) -> Sequence[T.Type]:
    """Output types as far as the type constraints decide them (shape unknown)."""
    if sig is None:
        return [T.UNKNOWN] * n
    # What ``_schema_types`` reads of an input is its type without the shape (a tensor's: its
    # element type), so nodes of one operator on inputs of the same element types share the answer.
    key = (
        id(sig),
        n,
        *(
            _ABSENT if v is None else v.type.elem if type(v.type) is T.TensorType else strip_shape(v.type)
            for v in inputs
        ),
    )
    hit = _SCHEMA_TYPES.get(key)
    if hit is not None and hit[0] is sig:
        return hit[1]
    out = tuple(_schema_types(sig, inputs, n))
    if len(_SCHEMA_TYPES) >= _MAX_SCHEMA_TYPES:
        _SCHEMA_TYPES.clear()
    _SCHEMA_TYPES[key] = (sig, out)
    return out


def _schema_types(sig: Signature, inputs: Sequence[Value | None], n: int) -> list[T.Type]:
    # A type variable is bound by any input whose type its constraint admits (``Add(x: float[N],
    # y: unknown)`` is float). An input of a type the constraint does not admit is a
    # type-mismatch (validation reports it) and binds nothing, so the schema's own type stands;
    # one whose element type is unknown binds only where nothing else does.
    bound: dict[str, T.Type] = {}
    partial: dict[str, T.Type] = {}
    for i, v in enumerate(inputs):
        formal = sig.input_formal(i)
        if v is None or formal is None or formal.type_str not in sig.constraints or formal.type_str in bound:
            continue
        if formal.option == "variadic" and not formal.homogeneous:
            continue  # each position of a heterogeneous variadic has a type of its own
        if isinstance(v.type, T.UnknownType):
            continue
        spelled = type_string(v.type)
        if spelled is None:
            partial.setdefault(formal.type_str, strip_shape(v.type))
        elif admits(sig.constraints[formal.type_str], spelled):
            bound[formal.type_str] = strip_shape(v.type)
    out: list[T.Type] = []
    for k in range(n):
        formal = sig.output_formal(k)
        if formal is None or (formal.option == "variadic" and not formal.homogeneous):
            out.append(T.UNKNOWN)
            continue
        ts = formal.type_str
        if ts in bound:
            out.append(bound[ts])
        elif ts in sig.constraints:
            allowed = sig.constraints[ts]
            out.append(parse_type_str(allowed[0]) if len(allowed) == 1 else partial.get(ts, T.UNKNOWN))
        else:
            out.append(parse_type_str(ts))
    return out


def to_value(spec: Any, base: T.Type) -> Value:
    """Turn what a rule returned for one output into a value, filling the schema's types."""
    known: Known | None = None
    span = None
    if isinstance(spec, Value):
        known, span = spec.known, spec.span
        spec = spec.type
    if spec is None:
        return Value(base)
    if isinstance(spec, (tuple, list)):
        elem = base.elem if isinstance(base, (T.TensorType, T.SparseTensorType)) else None
        cls = T.SparseTensorType if isinstance(base, T.SparseTensorType) else T.TensorType
        return Value(cls(elem, tuple(D.normalize(d) for d in spec)), known, span)
    if isinstance(spec, (T.TensorType, T.SparseTensorType)) and spec.elem is None:
        if isinstance(base, (T.TensorType, T.SparseTensorType)):
            spec = type(spec)(base.elem, spec.shape)
    if isinstance(spec, T.UnknownType):
        return Value(base, known, span)
    return Value(spec, known, span)


def strip_shape(t: T.Type) -> T.Type:
    """``t`` with its kinds and element types but no shapes."""
    if isinstance(t, T.TensorType):
        return T.TensorType(t.elem)
    if isinstance(t, T.SparseTensorType):
        return T.SparseTensorType(t.elem)
    if isinstance(t, T.SequenceType):
        return T.SequenceType(strip_shape(t.elem))
    if isinstance(t, T.OptionalType):
        return T.OptionalType(strip_shape(t.elem))
    return t


def with_empty_contents(v: Value) -> Value:
    """A tensor with no elements has known contents: none (an empty ``axes`` input, say)."""
    t = v.type
    if v.known is None and isinstance(t, T.TensorType) and t.shape is not None:
        # Integers only: a symbolic extent may or may not be 0.
        empty = False
        for d in t.shape:
            if not isinstance(d, int):
                return v
            empty = empty or d == 0
        if empty:
            return Value(t, Known(tuple(t.shape), ()))  # type: ignore[arg-type]
    return v


def default_reason(op_type: str) -> str:
    return f"the rule for {op_type} cannot determine this extent from its inputs"


_SMALL_INTS = frozenset({TensorProto.INT64, TensorProto.INT32})


_WIDE = (TensorProto.INT64, TensorProto.UINT64)  # a symbolic element is an int64 value already
_ASSUMABLE = (TensorProto.INT32, TensorProto.UINT32)  # an extent past 2^31 is rare: assumed, listed


def _narrow_symbolic(v: Value) -> tuple[Value, tuple[tuple[Dim, int], ...]]:
    """``v`` with the symbolic elements of a narrow integer tensor its type may not hold: in a
    32-bit type, kept and returned to be assumed within it; in an 8- or 16-bit type, made
    unknown (no assumption to make silently), unless the extent's syntax keeps it within."""
    t, known = v.type, v.known
    if known is None or type(t) is not T.TensorType or t.elem not in INT_RANGE or t.elem in _WIDE:
        return v, ()
    lo, hi = INT_RANGE[t.elem]
    doubtful = [e for e in known.elems if e is not None and D.is_symbolic(e) and not _within(e, lo, hi)]
    if not doubtful:
        return v, ()
    if t.elem in _ASSUMABLE:
        return v, tuple((e, t.elem) for e in dict.fromkeys(doubtful))
    gone = set(doubtful)
    return Value(t, Known(known.shape, tuple(None if e in gone else e for e in known.elems))), ()


def _within(e: Dim, lo: int, hi: int) -> bool:
    """Whether the syntax of ``e`` alone keeps it in ``[lo, hi]`` (every variable an extent)."""
    size = D.magnitude(e)
    return size is not None and size <= hi and (lo < 0 or D.less(e, 0) is False)


def _needs_note(v: Value) -> bool:
    t = v.type
    rank_unknown = isinstance(t, T.UnknownType) or (isinstance(t, T.TensorType) and t.shape is None)
    small_ints = (
        isinstance(t, T.TensorType)
        and t.elem in (TensorProto.INT64, TensorProto.INT32)
        and t.shape is not None
        and len(t.shape) <= 1
    )
    return (v.known is None and small_ints) or rank_unknown


def _known_fits(k: Known, t: T.Type) -> bool:
    if not isinstance(t, T.TensorType) or t.shape is None:
        return True
    if len(t.shape) != len(k.shape):
        return False
    return all(D.equal(a, b) is not False for a, b in zip(t.shape, k.shape))
