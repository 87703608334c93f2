"""Control flow (Clause 7.6): If, Loop, Scan and SequenceMap, whose bodies the engine walks.

If: a condition known at inference time selects its branch; otherwise each output is the join
of the branches' (equal extents kept, a differing extent a fresh variable naming both).

Loop and Scan iterate their body on the loop-carried types until they are stable (at most
``MAX_ROUNDS`` walks, then widened), so an invariant shape is kept and a growing one is not
claimed. The body is then walked a final time with those types, which is what the annotated
model records: types valid in every iteration.

An extent that may differ from one iteration to the next is never claimed outside the body.
These are the extents named by a fresh variable made inside the body (its origin lies in the
body's graph), and the variables this node makes for a loop-carried extent that changes
(``Body.entry``). At the node's outputs such an extent becomes a fresh variable of the node;
inside a sequence element it is left out (a variable there would say every element has it).
"""

from __future__ import annotations

from collections.abc import Callable

from onnx import GraphProto, TensorProto

from infer.contract.context import Facts, RuleContext, RuleError
from infer.core import dims as D
from infer.core.dims import Dim
from infer.core.types import (
    UNKNOWN,
    MapType,
    OptionalType,
    SequenceType,
    SparseTensorType,
    TensorType,
    Type,
    UnknownType,
    elem_name,
)
from infer.core.values import Known, SymFloat, Value, is_container, join_values
from signatures.ai_onnx.sequence import element_type
from signatures.kit.registry import rule

MAX_ROUNDS = 8  # walks of a body before its loop-carried types are widened (Clause 15.4)

_INT64 = TensorType(TensorProto.INT64, ())
_BOOL = TensorType(TensorProto.BOOL, ())

Replace = Callable[[int, Dim], Dim]  # (axis, per-iteration dim) -> what stands for it


def _known_bool(v: Value | None) -> bool | None:
    """The value of a scalar condition whose contents are known, else ``None``."""
    if v is None or v.known is None or v.known.size != 1:
        return None
    c = v.known.elems[0]
    if isinstance(c, (bool, int, float)):
        return bool(c)
    return None


def _known_dim(v: Value | None) -> Dim:
    """A scalar's contents as a dim (an int or an expression), else ``None``."""
    if v is None or v.known is None or v.known.size != 1:
        return None
    ds = v.known.dims()
    return ds[0] if ds else None


def _at_least(d: Dim, n: int, facts: Facts) -> bool:
    if d is None:
        return False
    if isinstance(d, int):
        return d >= n
    lo = facts.lower_bound(d)
    return lo is not None and lo >= n


class Body:
    """One graph attribute of a node, walked by the engine, and its per-iteration extents."""

    def __init__(self, ctx: RuleContext, attr: str):
        self.ctx = ctx
        self.attr = attr
        graph = ctx.attrs.get(attr)
        if not isinstance(graph, GraphProto):
            raise RuleError("bad-attribute", f"{ctx.op_type} needs a graph attribute '{attr}'")
        self.graph = graph
        self.own: set[str] = set()  # variables this node made for per-iteration extents

    @property
    def inputs(self) -> list[str]:
        """The inputs the node supplies. Before IR version 4 a subgraph could also list its
        initializers as inputs, after those (Clause 7.2): they carry constants, not values bound."""
        names = [i.name for i in self.graph.input]
        if self.ctx.ir_version < 4:
            inits = {t.name for t in self.graph.initializer}
            while names and names[-1] in inits:
                names.pop()
        return names

    @property
    def outputs(self) -> list[str]:
        return [o.name for o in self.graph.output]

    def walk(self, inputs: list[Value], report: bool = True) -> list[Value] | None:
        """Walk the body (quietly for a round of a fixed point that is not reported)."""
        return self.ctx.subgraph(self.attr, inputs, quiet=not report, iterated=True)

    def varies(self, d: Dim) -> bool:
        """May ``d`` differ from one iteration (or element) to the next?"""
        for name in D.free_names(d):
            if name in self.own:
                return True
            if self.ctx.made_inside(name, self.attr):
                return True
        return False

    def fresh(self, key: tuple, value: str, axis: int, reason: str, own: bool = False) -> Dim:
        """A fresh variable of this node (``own``: one that stands for a per-iteration extent)."""
        var = self.ctx.fresh(reason, key, value, axis)
        name = D.variable_name(var) if own else None  # (a variable: it has a name)
        if name is not None:
            self.own.add(name)
        return var

    def entry(self, j: int, axis: int, what: str) -> Dim:
        """The extent of body input ``j`` at ``axis`` in the current iteration (it changes)."""
        name = self.inputs[j] if j < len(self.inputs) else f"input {j}"
        reason = f"{what} `{name}` of {self.ctx.op_type} changes extent at axis {axis} between iterations"
        return self.fresh((self.attr, "entry", j, axis), name, axis, reason, own=True)

    def output_dim(self, k: int, axis: int, what: str) -> Dim:
        """A fresh variable for output ``k`` of the node at ``axis``."""
        out = self.ctx.output_name(k)
        return self.fresh((k, axis), out, axis, what)

    # -- removing per-iteration extents ------------------------------------------------------

    def clean(self, v: Value, replace: Replace) -> Value:
        """``v`` with every per-iteration extent replaced (in a sequence element: left out)."""
        return Value(self._clean_type(v.type, replace, False), self._clean_known(v))

    def _clean_type(self, t: Type, replace: Replace, in_seq: bool) -> Type:
        if isinstance(t, (TensorType, SparseTensorType)) and t.shape is not None:
            shape = tuple(
                (None if in_seq else replace(axis, d)) if self.varies(d) else d for axis, d in enumerate(t.shape)
            )
            return type(t)(t.elem, shape)
        if isinstance(t, SequenceType):
            return SequenceType(self._clean_type(t.elem, replace, True))
        if isinstance(t, OptionalType):
            return OptionalType(self._clean_type(t.elem, replace, in_seq))
        if isinstance(t, MapType):
            return MapType(t.key, self._clean_type(t.value, replace, True))
        return t

    def _clean_known(self, v: Value) -> Known | None:
        k = v.known
        if k is None:
            return None
        if is_container(v.type):
            return Known(k.shape, tuple(self.clean(e, lambda a, d: None) for e in k.elems))
        elems = tuple(
            None if e is not None and not isinstance(e, (bool, float, str)) and self.varies(_integer_part(e)) else e
            for e in k.elems
        )
        return Known(k.shape, elems) if any(e is not None for e in elems) else None


def _integer_part(e: object) -> Dim:
    """The integer expression a symbolic element rests on (a float element's numerator)."""
    return e.num if isinstance(e, SymFloat) else e  # type: ignore[return-value]


def _top(t: Type) -> Type:
    """What is left of ``t`` when its extents and contents are given up (widening)."""
    if isinstance(t, (TensorType, SparseTensorType)):
        return type(t)(t.elem, None)
    if isinstance(t, SequenceType):
        return SequenceType(_top(t.elem))
    if isinstance(t, OptionalType):
        return OptionalType(_top(t.elem))
    if isinstance(t, MapType):
        return MapType(t.key, _top(t.value))
    return t


def _unknown_entry(entry: Callable[[int, Dim], Dim]) -> Callable[[int, Dim, Dim], Dim]:
    """Where two iterations disagree on an extent: ``entry`` of it unknown."""
    return lambda axis, a, b: entry(axis, None)


def fixed_point(
    body: Body, fixed: list[Value], state: list[Value], what: list[str], state_first: bool = False, pinned: int = 0
) -> tuple[list[Value], list[Value]]:
    """Iterate ``body`` (inputs: ``fixed`` then ``state``, or the state first; outputs: the new
    state then the rest).

    Returns the state valid at the entry of every iteration, and the body's outputs from the
    final walk with that state. ``what`` names each state entry for the reasons of variables;
    the first ``pinned`` entries have a type fixed by the operator (Loop's condition), which
    widening keeps. The first walk (the first iteration's types) and the final walk report
    what they find; the rounds between are quiet.
    """
    n = len(state)
    off = 0 if state_first else len(fixed)

    def order(state: list[Value]) -> list[Value]:
        return [*state, *fixed] if state_first else [*fixed, *state]

    with body.ctx.reporting_once():  # the first and the final walk often find the same problem
        for round_ in range(MAX_ROUNDS):
            outs = body.walk(order(state), report=round_ == 0)
            if outs is None:
                return state, []
            nxt = []
            for j in range(n):
                got = outs[j] if j < len(outs) else Value()

                def entry(axis: int, d: Dim, j: int = j) -> Dim:
                    return body.entry(off + j, axis, what[j])

                nxt.append(join_values(state[j], body.clean(got, entry), _unknown_entry(entry)))
            if nxt == state:
                if round_ == 0:
                    return state, outs  # that walk was the final one
                break
            state = nxt
        else:
            state = [Value(v.type if j < pinned else _top(v.type)) for j, v in enumerate(state)]
        outs = body.walk(order(state), report=True)
    return state, outs or []


def _finals(body: Body, initial: list[Value], last: list[Value], at_least_one: bool, offset: int = 0) -> list[Value]:
    """The node's loop-carried outputs (its first outputs): the last iteration's values, or
    where no iteration may run, their join with the initial ones. ``offset``: how many axes the
    node puts before these (Scan-8's batch axis)."""
    out = []
    for k, (init, got) in enumerate(zip(initial, last)):

        def var(axis: int, d: Dim, k: int = k) -> Dim:
            what = f"the final extent of loop-carried value {k} of {body.ctx.op_type} changes between iterations"
            return body.output_dim(k, axis + offset, what)

        def either(axis: int, x: Dim, y: Dim, k: int = k) -> Dim:
            what = (
                f"loop-carried value {k} of {body.ctx.op_type} ends as it began ({D.to_str(x)}) if no iteration "
                f"runs, else as the last iteration leaves it ({D.to_str(y)})"
            )
            return body.output_dim(k, axis + offset, what)

        v = body.clean(got, var)
        out.append(v if at_least_one else join_values(init, v, either))
    return out


def _arity(ctx: RuleContext, n_outputs: int, what: str) -> None:
    if ctx.n_outputs > n_outputs:
        raise RuleError("arity", f"{ctx.op_type} has {ctx.n_outputs} outputs but its body gives {what}")


# -- If -------------------------------------------------------------------------------------------


def _same_branch_types(ctx: RuleContext, then: list[Value], other: list[Value]) -> None:
    """Output ``k`` of If has one type: branches whose outputs differ in element type are an error."""
    for k, (a, b) in enumerate(zip(then, other)):
        ta, tb = a.type, b.type
        if type(ta) is TensorType and type(tb) is TensorType and ta.elem and tb.elem and ta.elem != tb.elem:
            ctx.error(
                "type-mismatch",
                f"If output {k}: the then branch gives {elem_name(ta.elem)}, the else branch {elem_name(tb.elem)}",
                "both branches must give each output the same type",
            )


@rule("If", pure=False)
def if_(ctx: RuleContext) -> list:
    """A condition known at inference time selects its branch; otherwise the branches join."""
    c = _known_bool(ctx.value(0))
    if c is not None:
        chosen = ctx.subgraph("then_branch" if c else "else_branch", [])
        if chosen is None:
            return [None] * ctx.n_outputs
        if len(chosen) != ctx.n_outputs:
            ctx.error("arity", f"If has {ctx.n_outputs} outputs, its {'then' if c else 'else'} branch {len(chosen)}")
        return list(chosen)
    then = ctx.subgraph("then_branch", [])
    other = ctx.subgraph("else_branch", [])
    if then is None or other is None:
        return [None] * ctx.n_outputs
    if len(then) != len(other) or len(then) != ctx.n_outputs:
        ctx.error("arity", f"If has {ctx.n_outputs} outputs, its branches {len(then)} and {len(other)}")
    _same_branch_types(ctx, then, other)
    cond = ctx.input_name(0)
    ctx.because(f"the branches of If differ and the condition `{cond}` is not known", 0)
    out = []
    for k, (a, b) in enumerate(zip(then, other)):
        name = ctx.output_name(k)

        def choice(axis: int, x: Dim, y: Dim, k: int = k, name: str = name) -> Dim:
            reason = (
                f"If chooses between the then branch's extent {D.to_str(x)} and the else branch's "
                f"{D.to_str(y)} at axis {axis} of `{name}`; the condition `{cond}` is not known"
            )
            return ctx.fresh(reason, (k, axis), name, axis, (cond,) if cond else ())

        out.append(join_values(a, b, choice))
    return out


# -- Loop -----------------------------------------------------------------------------------------


@rule("Loop", pure=False)
def loop(ctx: RuleContext) -> list:
    """Loop, every version: M and cond optional, loop-carried values, scan outputs."""
    body = Body(ctx, "body")
    n_carried = max(ctx.n_inputs - 2, 0)
    if len(body.inputs) != 2 + n_carried:
        raise RuleError(
            "arity",
            f"Loop has {n_carried} loop-carried values, its body {len(body.inputs)} inputs "
            f"(it needs {2 + n_carried}: iteration number, condition, the values)",
        )
    n_scan = len(body.outputs) - 1 - n_carried
    if n_scan < 0:
        raise RuleError("arity", f"the Loop body has {len(body.outputs)} outputs for {n_carried} loop-carried values")
    _arity(ctx, n_carried + n_scan, f"{n_carried} final values and {n_scan} scan outputs")

    m = ctx.value(0)
    cond0 = ctx.value(1)
    # An absent condition runs as true (onnxruntime also feeds true to the body's condition).
    starts = cond0 is None or _known_bool(cond0) is True
    cond_in = Value(_BOOL, Known((), (True,))) if starts else Value(_BOOL, None if cond0 is None else cond0.known)
    initial = [cond_in, *[ctx.value(2 + j) or Value() for j in range(n_carried)]]
    what = ["condition", *["loop-carried value"] * n_carried]
    state, outs = fixed_point(body, [Value(_INT64)], initial, what, pinned=1)
    if not outs:
        return [None] * ctx.n_outputs
    _same_carried_types(ctx, initial[1:], outs[1 : 1 + n_carried])

    trips = _known_dim(m) if m is not None else None
    # onnxruntime stops when the body's condition turns false even where the condition input is
    # absent, so the trip count is M only when that condition is provably true throughout.
    always = _known_bool(state[0]) is True
    exact = always and trips is not None and _at_least(trips, 0, ctx)
    at_least_one = starts and (m is None or _at_least(trips, 1, ctx))

    finals = _finals(body, initial[1:], outs[1 : 1 + n_carried], at_least_one)
    scans = []
    for j in range(n_scan):
        k = n_carried + j
        got = outs[1 + n_carried + j] if 1 + n_carried + j < len(outs) else Value()
        if exact:
            lead = trips
        else:
            why = "the body may stop early" if not always else "the trip count M is not known"
            lead = body.output_dim(k, 0, f"the number of Loop iterations is not known ({why})")
        if at_least_one:
            scans.append(_stacked(body, k, got, lead, 0, True))
        else:
            scans.append(_zero_trip_scan(body, k, got, lead))
    _explain_unknown(ctx, finals, scans, at_least_one)
    return [*finals, *scans]


def _same_carried_types(ctx: RuleContext, initial: list[Value], last: list[Value]) -> None:
    """A loop-carried value keeps its element type: the body gives back what the node passed in
    (onnxruntime and onnx's inference refuse a body that changes it)."""
    for j, (a, b) in enumerate(zip(initial, last)):
        ta, tb = a.type, b.type
        if type(ta) is TensorType and type(tb) is TensorType and ta.elem and tb.elem and ta.elem != tb.elem:
            ctx.error(
                "type-mismatch",
                f"Loop-carried value {j} (`{ctx.input_name(2 + j)}`) is {elem_name(ta.elem)}, "
                f"the body gives back {elem_name(tb.elem)}",
                "the body must return each loop-carried value with the element type it received",
            )


def _explain_unknown(ctx: RuleContext, finals: list[Value], scans: list[Type], at_least_one: bool) -> None:
    """Say why an output's rank or kind is unknown (for ``explain``)."""
    if not at_least_one and any(isinstance(t, TensorType) and t.shape is None for t in scans):
        m = ctx.input_name(0)
        ctx.because(
            "the Loop may run no iteration ("
            + (f"M `{m}` may be 0" if m else "its condition may be false")
            + "), and onnxruntime then gives its scan outputs shape [0] unless it inferred them itself",
            0,
            1,
        )
    elif any(
        isinstance(v.type, UnknownType) or (isinstance(v.type, TensorType) and v.type.shape is None) for v in finals
    ):
        ctx.because("a loop-carried value changes rank or kind between iterations")


def _declared_dims(body: Body, index: int) -> tuple[int | None, ...] | None:
    """The extents the body graph declares for its output ``index`` (``None``: no shape declared)."""
    if index >= len(body.graph.output):
        return None
    tp = body.graph.output[index].type
    if tp.WhichOneof("value") != "tensor_type" or not tp.tensor_type.HasField("shape"):
        return None
    return tuple(d.dim_value if d.HasField("dim_value") else None for d in tp.tensor_type.shape.dim)


def _zero_trip_scan(body: Body, k: int, got: Value, lead: Dim) -> Type:
    """Scan output ``k`` of a Loop that may run no iteration.

    The definition says ``[0, *shape]``; after no iteration onnxruntime gives ``[0]`` followed by
    the body output's extents as it knows them statically (0 where it does not), and ``[0]``
    alone where it does not know that output's rank. The rank is claimed only where the body
    graph declares it (onnxruntime then knows it) and inference agrees; an extent only where it
    is declared as an integer.
    """
    t = got.type
    declared = _declared_dims(body, 1 + k)
    if not isinstance(t, TensorType) or t.shape is None or not t.shape:
        return _stacked(body, k, got, lead, 0, False)
    if declared is None or len(declared) != len(t.shape):
        return TensorType(t.elem, None)
    inner: list[Dim] = []
    for a, (d, want) in enumerate(zip(t.shape, declared)):
        if want is None:
            inner.append(
                body.output_dim(
                    k,
                    a + 1,
                    f"scan output {k} of Loop may have no iteration, and this "
                    "extent of the body's output is not declared",
                )
            )
        elif isinstance(d, int) and d != want:
            return TensorType(t.elem, None)  # the declaration is contradicted: nothing is claimed
        else:
            inner.append(want)
    return TensorType(t.elem, (lead, *inner))


def _stacked(body: Body, k: int, got: Value, lead: Dim, axis: int, at_least_one: bool, offset: int = 0) -> Type:
    """Scan output ``k``: the per-iteration values of ``got``, stacked along ``axis`` (``offset``:
    how many axes the node puts before these, Scan-8's batch axis)."""
    t = got.type
    if not isinstance(t, TensorType):
        return UNKNOWN if not isinstance(t, UnknownType) else t
    if t.shape is None:
        return TensorType(t.elem, None)
    if not at_least_one and t.shape:
        # After no iteration onnxruntime gives shape [0] unless it inferred the body's output
        # shape itself; the definition says [0, *shape]. Only the element type holds for both.
        return TensorType(t.elem, None)

    def var(a: int, d: Dim) -> Dim:
        pos = (a if a < axis else a + 1) + offset
        return body.output_dim(
            k, pos, f"the extent of scan output {k} of {body.ctx.op_type} changes between iterations"
        )

    inner = body.clean(Value(t), var).type
    assert isinstance(inner, TensorType) and inner.shape is not None
    return TensorType(t.elem, inner.shape[:axis] + (lead,) + inner.shape[axis:])


# -- Scan -----------------------------------------------------------------------------------------


def _trip(ctx: RuleContext, extents: list[Dim]) -> Dim:
    """The common extent of the scanned axes (they must all be equal)."""
    known = [d for d in extents if d is not None]
    if not known:
        return None
    best: Dim = next((d for d in known if isinstance(d, int)), None)
    if best is None:
        best = next((d for d in known if not ctx.is_fresh(d)), known[0])
    for d in known:
        eq = ctx.equal(best, d)
        if eq is False:
            raise RuleError("shape-mismatch", f"scan inputs have sequence lengths {D.to_str(best)} and {D.to_str(d)}")
        if eq is None:
            ctx.require_equal(
                best, d, f"the scanned extents {D.to_str(best)} and {D.to_str(d)} are equal", "the scanned extents"
            )
    return best


def _drop(t: Type, axes: tuple[int, ...]) -> Type:
    """Tensor type ``t`` without ``axes`` (already normalized)."""
    if not isinstance(t, TensorType) or t.shape is None:
        return TensorType(t.elem if isinstance(t, TensorType) else None, None)
    return TensorType(t.elem, tuple(d for a, d in enumerate(t.shape) if a not in axes))


def _scan(
    ctx: RuleContext,
    body: Body,
    states: list[Value],
    slices: list[Value],
    n_out: int,
    at_least_one: bool,
    offset: int = 0,
) -> tuple[list[Value], list[Value]]:
    """The fixed point of a Scan body: (final states, per-iteration scan output values)."""
    n = len(states)
    if len(body.inputs) != n + len(slices):
        raise RuleError(
            "arity", f"Scan has {n} states and {len(slices)} scan inputs, its body {len(body.inputs)} inputs"
        )
    n_scan = len(body.outputs) - n
    if n_scan < 0:
        raise RuleError("arity", f"the Scan body has {len(body.outputs)} outputs for {n} loop state variables")
    _arity(ctx, n_out + n_scan, f"{n} final states and {n_scan} scan outputs")
    _, outs = fixed_point(body, slices, states, ["state"] * n, state_first=True)
    if not outs:
        return [], []
    return _finals(body, states, outs[:n], at_least_one, offset), outs[n:]


@rule("Scan", since=8, pure=False)
def scan_8(ctx: RuleContext) -> list:
    """Scan-8: a batch axis 0 on every input; the scanned axis is 1; sequence_lens optional."""
    body = Body(ctx, "body")
    m = ctx.require("num_scan_inputs")
    rest = [ctx.value(i) or Value() for i in range(1, ctx.n_inputs)]
    n = len(rest) - m
    if n < 0:
        raise RuleError("arity", f"Scan has {len(rest)} inputs after sequence_lens but num_scan_inputs is {m}")
    batch = _trip(ctx, [s[0] for v in rest if (s := _shape_of_rank(v.type, 1)) is not None])
    length = _trip(ctx, [s[1] for v in rest[n:] if (s := _shape_of_rank(v.type, 2)) is not None])
    states = [Value(_drop(v.type, (0,))) for v in rest[:n]]
    slices = [Value(_drop(v.type, (0, 1))) for v in rest[n:]]
    at_least_one = not ctx.has(0) and _at_least(length, 1, ctx)
    finals, per_step = _scan(ctx, body, states, slices, n, at_least_one, offset=1)
    if not per_step and not finals:
        return [None] * ctx.n_outputs
    lead_b = batch if batch is not None else body.output_dim(0, 0, "the batch extent of Scan is not known")
    out: list[Type] = []
    for v in finals:
        t = v.type
        out.append(
            TensorType(t.elem, (lead_b, *t.shape)) if isinstance(t, TensorType) and t.shape is not None else _top(t)
        )
    for j, got in enumerate(per_step):
        k = n + j
        seq_len = length if length is not None else body.output_dim(k, 1, "the sequence length of Scan is not known")
        t = _stacked(body, k, got, seq_len, 0, True, offset=1)
        if isinstance(t, TensorType) and t.shape is not None:
            t = TensorType(t.elem, (lead_b, *t.shape))
        out.append(t)
    return out


def _shape_of_rank(t: Type, r: int) -> tuple[Dim, ...] | None:
    """The shape of ``t`` when it is a tensor of rank ``r`` at least."""
    return t.shape if isinstance(t, TensorType) and t.shape is not None and len(t.shape) >= r else None


@rule("Scan", since=9, pure=False)
def scan_9(ctx: RuleContext) -> list:
    """Scan-9 and later: scan_input_axes, scan_output_axes and the directions (no batch axis)."""
    body = Body(ctx, "body")
    m = ctx.require("num_scan_inputs")
    values = [ctx.value(i) or Value() for i in range(ctx.n_inputs)]
    n = len(values) - m
    if n < 0 or m < 1:
        raise RuleError("arity", f"Scan has {len(values)} inputs but num_scan_inputs is {m}")
    in_axes = list(ctx.attr("scan_input_axes", None) or [0] * m)
    if len(in_axes) != m:
        raise RuleError("bad-attribute", f"scan_input_axes has {len(in_axes)} entries for {m} scan inputs")
    slices, extents = [], []
    for v, a in zip(values[n:], in_axes):
        t = v.type
        if isinstance(t, TensorType) and t.shape is not None:
            r = len(t.shape)
            if not -r <= a < r:
                raise RuleError("bad-attribute", f"scan input axis {a} is out of range for rank {r}")
            a = a + r if a < 0 else a
            extents.append(t.shape[a])
            slices.append(Value(_drop(t, (a,))))
        else:
            slices.append(Value(_drop(t, ())))
    trip = _trip(ctx, extents)
    # An empty scanned axis is an error in onnxruntime and in the reference evaluator alike.
    finals, per_step = _scan(ctx, body, values[:n], slices, n, _at_least(trip, 1, ctx))
    if not per_step and not finals:
        return [None] * ctx.n_outputs
    out_axes = list(ctx.attr("scan_output_axes", None) or [0] * len(per_step))
    if len(out_axes) != len(per_step):
        raise RuleError("bad-attribute", f"scan_output_axes has {len(out_axes)} entries for {len(per_step)} outputs")
    out: list = list(finals)
    for j, (got, a) in enumerate(zip(per_step, out_axes)):
        k = n + j
        t = got.type
        if isinstance(t, TensorType) and t.shape is not None:
            r = len(t.shape) + 1
            if not -r <= a < r:
                raise RuleError("bad-attribute", f"scan output axis {a} is out of range for rank {r}")
            a = a + r if a < 0 else a
        else:
            a = 0
        lead = trip if trip is not None else body.output_dim(k, a, "the sequence length of Scan is not known")
        out.append(_stacked(body, k, got, lead, a, True))
    return out


# -- SequenceMap ----------------------------------------------------------------------------------


@rule("SequenceMap", since=17, pure=False)
def sequence_map(ctx: RuleContext) -> list:
    """The body applied to each element (sequence inputs) with the tensor inputs as they are."""
    body = Body(ctx, "body")
    if len(body.inputs) != ctx.n_inputs:
        raise RuleError("arity", f"SequenceMap has {ctx.n_inputs} inputs, its body {len(body.inputs)}")
    _arity(ctx, len(body.outputs), f"{len(body.outputs)} outputs")
    inputs = []
    for i in range(ctx.n_inputs):
        t = ctx.type(i)
        if isinstance(t, SequenceType):
            e = element_type(ctx, i)
            if isinstance(e, TensorType) and e.shape is not None:
                shape = tuple(body.entry(i, a, "element") if d is None else d for a, d in enumerate(e.shape))
                e = TensorType(e.elem, shape)
            inputs.append(Value(e))
        elif i == 0 and not isinstance(t, UnknownType):
            raise RuleError("type-mismatch", f"input 0 of SequenceMap must be a sequence, not {t}")
        else:
            inputs.append(ctx.value(i) or Value())
    outs = body.walk(inputs)
    if outs is None:
        return [None] * ctx.n_outputs
    return [Value(SequenceType(body.clean(v, lambda a, d: None).type)) for v in outs]


# -- examples -------------------------------------------------------------------------------------


def _g(
    nodes: list, inputs: list[tuple[str, int, list | None]], outputs: list[str], inits: list | None = None
) -> GraphProto:
    """A small body or branch for the examples (inputs typed as given, outputs untyped)."""
    from onnx import ValueInfoProto, helper

    ins = [helper.make_tensor_value_info(n, e, s) for n, e, s in inputs]
    return helper.make_graph(nodes, "body", ins, [ValueInfoProto(name=o) for o in outputs], inits or [])


def _if_examples() -> None:
    import numpy as np
    from onnx import helper, numpy_helper

    from signatures.kit.registry import example

    n, i64 = helper.make_node, TensorProto.INT64

    def filled(*dims: int) -> GraphProto:
        shape = numpy_helper.from_array(np.asarray(dims, np.int64), "shape")
        return _g([n("ConstantOfShape", ["shape"], ["t"])], [], ["t"], [shape])

    branches = {"then_branch": filled(2, 6), "else_branch": filled(2, 3)}
    for v in (9, 11, 13, 16, 19, 21, 23, 24, 25):  # If-1 at opset 9, which has ConstantOfShape
        example("If", ["bool[]"], ["float[2,?]"], attrs=branches, opset=v)
    example("If", ["bool[]={true}"], ["float[2,6]"], attrs=branches)
    example("If", ["bool[]={false}"], ["float[2,3]"], attrs=branches)
    example("If", ["bool[]"], ["float[*]"], attrs={"then_branch": filled(2, 6), "else_branch": filled(12)})
    example("If", ["bool[]"], ["float[2,?]", "unknown"], attrs=branches, error="arity")
    shape = numpy_helper.from_array(np.asarray([2, 3], np.int64), "shape")
    ints = _g(
        [n("ConstantOfShape", ["shape"], ["t"], value=helper.make_tensor("v", i64, [1], [0]))], [], ["t"], [shape]
    )
    example(
        "If", ["bool[]"], ["?[2,3]"], attrs={"then_branch": filled(2, 3), "else_branch": ints}, error="type-mismatch"
    )


def _loop_examples() -> None:
    from onnx import helper

    from signatures.kit.registry import example

    n = helper.make_node
    bool_, i64, f32 = TensorProto.BOOL, TensorProto.INT64, TensorProto.FLOAT
    # x -> x + x, and the running sum as a scan output; cond passed through.
    keep = _g(
        [n("Add", ["x_in", "x_in"], ["x_out"]), n("Identity", ["x_out"], ["sc"]), n("Identity", ["c_in"], ["c_out"])],
        [("it", i64, []), ("c_in", bool_, []), ("x_in", f32, None)],
        ["c_out", "x_out", "sc"],
    )
    grow = _g(
        [n("Concat", ["x_in", "x_in"], ["x_out"], axis=0), n("Identity", ["c_in"], ["c_out"])],
        [("it", i64, []), ("c_in", bool_, []), ("x_in", f32, None)],
        ["c_out", "x_out"],
    )
    for v in (1, 11, 13, 16, 19, 21, 23, 24, 25):
        example(
            "Loop", ["int64[]={3}", "", "float[N,3]"], ["float[N,3]", "float[3,N,3]"], attrs={"body": keep}, opset=v
        )
    example(
        "Loop", ["int64[]={M}", "bool[]={true}", "float[N,3]"], ["float[N,3]", "float[M,N,3]"], attrs={"body": keep}
    )
    example("Loop", ["int64[]", "", "float[N,3]"], ["float[N,3]", "float[*]"], attrs={"body": keep})
    # The body declares its scan output's rank (and an extent): a Loop of no iteration keeps them.
    declared = GraphProto()
    declared.CopyFrom(keep)
    declared.output[2].CopyFrom(helper.make_tensor_value_info("sc", f32, [None, 3]))
    example("Loop", ["int64[]", "", "float[N,3]"], ["float[N,3]", "float[?,?,3]"], attrs={"body": declared})
    example("Loop", ["int64[]={2}", "", "float[N,3]"], ["float[?,3]"], attrs={"body": grow})
    recast = _g(
        [n("Cast", ["x_in"], ["x_out"], to=TensorProto.INT64), n("Identity", ["c_in"], ["c_out"])],
        [("it", i64, []), ("c_in", bool_, []), ("x_in", f32, None)],
        ["c_out", "x_out"],
    )
    example("Loop", ["int64[]={2}", "", "float[N,3]"], ["int64[N,3]"], attrs={"body": recast}, error="type-mismatch")
    example("Loop", ["int64[]={2}", "", "float[N,3]", "float[N]"], ["unknown"], attrs={"body": grow}, error="arity")


def _scan_examples() -> None:
    from onnx import helper

    from signatures.kit.registry import example

    n, f32 = helper.make_node, TensorProto.FLOAT
    step = _g(
        [n("Add", ["s_in", "x_i"], ["s_out"]), n("Add", ["x_i", "x_i"], ["y"])],
        [("s_in", f32, None), ("x_i", f32, None)],
        ["s_out", "y"],
    )
    for v in (9, 11, 16, 19, 21, 23, 24, 25):
        example(
            "Scan",
            ["float[2]", "float[L,2]"],
            ["float[2]", "float[L,2]"],
            attrs={"body": step, "num_scan_inputs": 1},
            opset=v,
        )
    example(
        "Scan",
        ["float[K]", "float[K,L]"],
        ["float[K]", "float[K,L]"],
        attrs={"body": step, "num_scan_inputs": 1, "scan_input_axes": [1], "scan_output_axes": [-1]},
    )
    example(
        "Scan",
        ["float[2]", "float[L,3]"],
        ["float[3]", "float[L,3]"],
        attrs={"body": step, "num_scan_inputs": 1},
        error="shape-mismatch",
    )
    example(
        "Scan",
        ["float[2]", "float[L,2]", "float[M,2]"],
        ["unknown", "unknown"],
        attrs={"body": step, "num_scan_inputs": 1},
        error="arity",
    )
    example(
        "Scan",
        ["int64[B]", "float[B,2]", "float[B,L,2]"],
        ["float[B,2]", "float[B,L,2]"],
        attrs={"body": step, "num_scan_inputs": 1},
        opset=8,
    )
    example(
        "Scan",
        ["", "float[B,2]", "float[B,L,2]"],
        ["float[B,2]", "float[B,L,2]"],
        attrs={"body": step, "num_scan_inputs": 1},
        opset=8,
    )


def _sequence_map_examples() -> None:
    from onnx import helper

    from signatures.kit.registry import example

    n, f32 = helper.make_node, TensorProto.FLOAT
    shapes = _g(
        [n("Shape", ["e"], ["s"]), n("Add", ["e", "t"], ["u"])], [("e", f32, None), ("t", f32, None)], ["s", "u"]
    )
    example(
        "SequenceMap", ["seq(float[N,?])", "float[N,1]"], ["seq(int64[2])", "seq(float[N,?])"], attrs={"body": shapes}
    )
    example(
        "SequenceMap",
        ["seq(float[N,4])", "seq(float[N,4])"],
        ["seq(int64[2])", "seq(float[N,4])"],
        attrs={"body": shapes},
    )


_if_examples()
_loop_examples()
_scan_examples()
_sequence_map_examples()
