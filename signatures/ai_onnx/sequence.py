"""Sequences (Clause 6.8.1): construction, insertion, erasure, access, splitting, concatenation.

A sequence type names one element type for all its elements, so its dims say what holds for
every element: a variable in an element shape means every element has that extent, and an
extent in which elements differ is left out (``None``) rather than given a variable (the
spec's note to Clause 6.5.2). The element type is the join of what enters the sequence.

Where a sequence is built from values the model fixes (``SequenceConstruct``, a split of a
known extent), its contents are tracked too: a sequence ``Value``'s ``known`` then holds its
elements, one ``Value`` each (``Known((n,), (v0, v1, ...))``), so ``SequenceAt`` at a known
position, ``SequenceLength`` and ``ConcatFromSequence`` are exact. An empty sequence with
known contents contributes nothing to a join (it has no elements to describe).
Optionals use the same representation (``signatures/ai_onnx/optional.py``): no element or one.
"""

from __future__ import annotations

from collections.abc import Sequence

from onnx import TensorProto

from infer.contract.context import RuleContext, RuleError
from infer.core import dims as D
from infer.core.dims import Dim
from infer.core.types import (
    UNKNOWN,
    OptionalType,
    SequenceType,
    SparseTensorType,
    TensorType,
    Type,
    UnknownType,
    elem_name,
    join,
)
from infer.core.values import Known, Value, items
from signatures.kit.helpers import norm_axis, same_dim
from signatures.kit.registry import example, rule

MAX_ITEMS = 64  # elements tracked one by one (Clause 15.4: bounded memory)


def join_all(ts: Sequence[Type], in_seq: bool = True) -> Type | None:
    """Join of several element types; ``None`` for none (the bottom: nothing to describe)."""
    out: Type | None = None
    for t in ts:
        out = t if out is None else join(out, t, in_seq=in_seq)
    return out


# -- building sequence values ---------------------------------------------------------------------


def seq_of(elems: Sequence[Value], empty_elem: Type = UNKNOWN) -> Value:
    """A sequence holding exactly ``elems`` (contents tracked when few enough)."""
    elem = join_all([e.type for e in elems])
    t = SequenceType(elem if elem is not None else empty_elem)
    if len(elems) > MAX_ITEMS:
        return Value(t)
    return Value(t, Known((len(elems),), tuple(elems)))


def element_type(ctx: RuleContext, i: int) -> Type:
    """The element type of sequence input ``i``, with only the extents every element shares."""
    t = ctx.type(i)
    if isinstance(t, OptionalType):
        t = t.elem
    if not isinstance(t, SequenceType):
        return UNKNOWN
    e = t.elem
    if isinstance(e, (TensorType, SparseTensorType)) and e.shape is not None:
        return type(e)(e.elem, tuple(None if ctx.made_for_elements(d) else d for d in e.shape))
    return e


def _check_insert_elem(ctx: RuleContext, e: Type, t: Type) -> None:
    """A sequence holds tensors of one element type: inserting another is an error."""
    if isinstance(e, TensorType) and isinstance(t, TensorType) and e.elem and t.elem and e.elem != t.elem:
        ctx.error(
            "type-mismatch",
            f"{ctx.op_type} with inputs {ctx.input_types_str()}: a tensor of {elem_name(t.elem)} "
            f"cannot join a sequence of {elem_name(e.elem)}",
            "insert a Cast so the tensor has the sequence's element type",
        )


def _require_seq(ctx: RuleContext, i: int) -> None:
    t = ctx.type(i)
    if not isinstance(t, (SequenceType, UnknownType)):
        raise RuleError("type-mismatch", f"input {i} of {ctx.op_type} must be a sequence, not {t}")


def _position(ctx: RuleContext, i: int) -> Dim | None:
    """The scalar position given by input ``i``, when its contents are known."""
    k = ctx.known(i)
    if k is None or k.size != 1:
        if ctx.has(i):
            ctx.contents_unknown(i, "the position")
        return None
    ds = k.dims()
    return ds[0] if ds else None


def _index(ctx: RuleContext, pos: Dim, n: int, allow_end: bool) -> int | None:
    """Normalize an int position against length ``n``; out of range is an error."""
    if not isinstance(pos, int):
        return None
    hi = n if allow_end else n - 1
    if pos < -n or pos > hi:
        raise RuleError("shape-mismatch", f"position {pos} is out of range for a sequence of {n} elements")
    return pos + n if pos < 0 else pos


_DIFFER = "the elements of the sequence differ in this extent (an element type names what all share)"


# -- the operators --------------------------------------------------------------------------------


@rule("SequenceEmpty", since=11)
def sequence_empty(ctx: RuleContext) -> list:
    dtype = ctx.attr("dtype", TensorProto.FLOAT)
    return [seq_of([], TensorType(int(dtype), None))]


@rule("SequenceConstruct", since=11)
def sequence_construct(ctx: RuleContext) -> list:
    ctx.because(_DIFFER, *range(ctx.n_inputs))
    if not ctx.n_inputs:
        raise RuleError("arity", "SequenceConstruct needs at least one input")
    elems = [ctx.value(i) or Value() for i in range(ctx.n_inputs)]
    return [seq_of(elems)]


@rule("SequenceInsert", since=11)
def sequence_insert(ctx: RuleContext) -> list:
    _require_seq(ctx, 0)
    x = ctx.value(1) or Value()
    _check_insert_elem(ctx, element_type(ctx, 0), x.type)
    have = items(ctx.value(0))
    pos = _position(ctx, 2) if ctx.has(2) else None
    ctx.because(_DIFFER, 0, 1)
    if have is not None and (not ctx.has(2) or pos is not None):
        at = len(have) if not ctx.has(2) else _index(ctx, pos, len(have), allow_end=True)
        if at is not None:
            return [seq_of([*have[:at], x, *have[at:]])]
    if have is not None and not have:
        return [seq_of([x])]  # into an empty sequence every valid position gives the same
    elem = join(element_type(ctx, 0), x.type, in_seq=True)
    return [Value(SequenceType(elem))]


@rule("SequenceErase", since=11)
def sequence_erase(ctx: RuleContext) -> list:
    _require_seq(ctx, 0)
    have = items(ctx.value(0))
    if have is not None and not have:
        raise RuleError("shape-mismatch", "SequenceErase of an empty sequence")
    pos = _position(ctx, 1) if ctx.has(1) else -1
    if have is not None and pos is not None:
        at = _index(ctx, pos, len(have), allow_end=False)
        if at is not None:
            rest = [*have[:at], *have[at + 1 :]]
            return [seq_of(rest, element_type(ctx, 0))]
    return [Value(ctx.type(0))]  # fewer elements of the same type


@rule("SequenceAt", since=11)
def sequence_at(ctx: RuleContext) -> list:
    _require_seq(ctx, 0)
    have = items(ctx.value(0))
    pos = _position(ctx, 1)
    if have is not None and not have:
        raise RuleError("shape-mismatch", "SequenceAt of an empty sequence")
    if have is not None and pos is not None:
        at = _index(ctx, pos, len(have), allow_end=False)
        if at is not None:
            return [have[at]]
    ctx.because(f"the elements of `{ctx.input_name(0)}` differ in this extent and the position is not known", 0, 1)
    return [element_type(ctx, 0)]


@rule("SequenceLength", since=11)
def sequence_length(ctx: RuleContext) -> list:
    _require_seq(ctx, 0)
    have = items(ctx.value(0))
    return [Value(TensorType(TensorProto.INT64, ()), None if have is None else Known((), (len(have),)))]


def _split_sizes(ctx: RuleContext, extent: Dim) -> list[Dim] | None:
    """The chunk extents of SplitToSequence along its axis, when the model fixes them."""
    if not ctx.has(1):
        return None  # chunks of 1: handled by the caller (keepdims)
    k = ctx.known(1)
    if k is None:
        ctx.contents_unknown(1, "the split sizes")
        return None
    sizes = k.dims()
    if sizes is None:
        return None
    if k.rank == 0:
        s = sizes[0]
        if isinstance(s, int) and s <= 0:
            raise RuleError("shape-mismatch", f"the scalar split size is {s}: it must be greater than zero")
        if isinstance(s, int) and isinstance(extent, int):
            n, last = divmod(extent, s)
            chunks: list[Dim] = [s] * n
            return chunks + ([last] if last else [])
        if ctx.equal(s, extent) is True:
            return [s]
        ctx.because(f"how many chunks of {D.to_str(s)} fit in extent {D.to_str(extent)} is not known", 0, 1)
        return None
    if any(isinstance(s, int) and s < 0 for s in sizes):
        raise RuleError("shape-mismatch", f"split sizes {sizes} have a negative entry")
    total = D.total(sizes)
    if ctx.equal(total, extent) is False:
        raise RuleError(
            "shape-mismatch",
            f"split sizes {[D.to_str(s) for s in sizes]} add up to {D.to_str(total)}, not {D.to_str(extent)}",
        )
    return sizes


@rule("SplitToSequence", since=11)
def split_to_sequence(ctx: RuleContext) -> list:
    elem = ctx.elem(0)
    s = ctx.shape(0)
    if s is None:
        return [Value(SequenceType(TensorType(elem, None)))]
    axis = norm_axis(ctx, ctx.attr("axis", 0), len(s))
    extent = s[axis]
    if not ctx.has(1):
        keep = bool(ctx.attr("keepdims", 1))
        piece = TensorType(elem, s[:axis] + ((1,) if keep else ()) + s[axis + 1 :])
        if isinstance(extent, int) and extent <= MAX_ITEMS:
            return [seq_of([Value(piece)] * extent, piece)]
        return [Value(SequenceType(piece))]
    ctx.because(_DIFFER, 0, 1)
    sizes = _split_sizes(ctx, extent)
    if sizes is None:
        return [Value(SequenceType(TensorType(elem, s[:axis] + (None,) + s[axis + 1 :])))]
    pieces = [Value(TensorType(elem, s[:axis] + (p,) + s[axis + 1 :])) for p in sizes]
    return [seq_of(pieces, TensorType(elem, s))]


def _concat(ctx: RuleContext, shapes: list[tuple[Dim, ...]], axis: int, new_axis: bool) -> tuple[Dim, ...]:
    """The shape of concatenating (or stacking) tensors of ``shapes``, all of one rank."""
    first = shapes[0]
    out: list[Dim] = []
    for a in range(len(first)):
        ds = [sh[a] for sh in shapes]
        if not new_axis and a == axis:
            out.append(D.total(ds))
            continue
        d = ds[0]
        for other in ds[1:]:
            d = same_dim(ctx, d, other, f"the elements' extents at axis {a}")
        out.append(d)
    if new_axis:
        out.insert(axis, len(shapes))
    return tuple(out)


@rule("ConcatFromSequence", since=11)
def concat_from_sequence(ctx: RuleContext) -> list:
    _require_seq(ctx, 0)
    new_axis = bool(ctx.attr("new_axis", 0))
    axis = ctx.require("axis")
    have = items(ctx.value(0))
    e = element_type(ctx, 0)
    elem = e.elem if isinstance(e, TensorType) else None
    if have is not None and not have:
        raise RuleError("shape-mismatch", "ConcatFromSequence of an empty sequence")
    if have is not None:
        shapes = [v.type.shape for v in have if isinstance(v.type, TensorType)]
        if len(shapes) == len(have) and all(sh is not None for sh in shapes):
            ranks = {len(sh) for sh in shapes}  # type: ignore[arg-type]
            if len(ranks) > 1:
                raise RuleError("shape-mismatch", f"elements have ranks {sorted(ranks)}")
            rank = ranks.pop()
            a = norm_axis(ctx, axis, rank + new_axis)
            return [TensorType(elem, _concat(ctx, shapes, a, new_axis))]  # type: ignore[arg-type]
    if not isinstance(e, TensorType) or e.shape is None:
        return [TensorType(elem, None)]
    a = norm_axis(ctx, axis, len(e.shape) + new_axis)
    ctx.because(f"the number of elements of `{ctx.input_name(0)}` is not known", 0)
    if new_axis:
        return [TensorType(elem, e.shape[:a] + (None,) + e.shape[a:])]
    return [TensorType(elem, e.shape[:a] + (None,) + e.shape[a + 1 :])]


example("SequenceEmpty", [], ["seq(float[*])"])
example("SequenceEmpty", [], ["seq(int64[*])"], attrs={"dtype": TensorProto.INT64})
example("SequenceConstruct", ["float[N,3]", "float[N,3]"], ["seq(float[N,3])"])
example("SequenceConstruct", ["float[N,3]", "float[N,4]"], ["seq(float[N,?])"])
example("SequenceConstruct", ["float[N,3]", "float[N]"], ["seq(float[*])"])
example("SequenceInsert", ["seq(float[N,4])", "float[N,3]"], ["seq(float[N,?])"])
example("SequenceInsert", ["seq(float[N,4])", "float[N,4]", "int64[]={0}"], ["seq(float[N,4])"])
example("SequenceInsert", ["seq(int64[N,4])", "float[N,4]"], ["seq(?[N,4])"], error="type-mismatch")
example("SequenceErase", ["seq(float[N,4])"], ["seq(float[N,4])"])
example("SequenceErase", ["seq(float[N,4])", "int64[]={1}"], ["seq(float[N,4])"])
example("SequenceAt", ["seq(float[N,4])", "int64[]"], ["float[N,4]"])
example("SequenceAt", ["seq(float[N,?])", "int64[]={0}"], ["float[N,?]"])
example("SequenceAt", ["float[N,4]", "int64[]={0}"], ["unknown"], error="type-mismatch")
example("SequenceLength", ["seq(float[N,4])"], ["int64[]"])
example("SplitToSequence", ["float[6,N]"], ["seq(float[1,N])"])
example("SplitToSequence", ["float[6,N]"], ["seq(float[N])"], attrs={"keepdims": 0})
example("SplitToSequence", ["float[6,N]", "int64[]={4}"], ["seq(float[?,N])"])
example("SplitToSequence", ["float[6,N]", "int64[]={3}"], ["seq(float[3,N])"])
example("SplitToSequence", ["float[6,N]", "int64[2]={2,4}"], ["seq(float[?,N])"], opset=24)
example("SplitToSequence", ["float[6,N]", "int64[2]={2,3}"], ["unknown"], error="shape-mismatch")
example("SplitToSequence", ["float[M,N]", "int64[]={2}"], ["seq(float[?,N])"], attrs={"axis": 0})
example("SplitToSequence", ["float[M,N]"], ["seq(float[M,1])"], attrs={"axis": -1})
example("ConcatFromSequence", ["seq(float[N,4])"], ["float[?,4]"], attrs={"axis": 0})
example("ConcatFromSequence", ["seq(float[N,4])"], ["float[N,?,4]"], attrs={"axis": 1, "new_axis": 1})
example("ConcatFromSequence", ["seq(float[N,4])"], ["float[N,?]"], attrs={"axis": -1})
example("ConcatFromSequence", ["seq(float[N,4])"], ["unknown"], attrs={"axis": 2}, error="bad-attribute")
