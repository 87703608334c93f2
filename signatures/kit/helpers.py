"""Shape algebra shared by the rules: broadcasting, axes, element counts, flag attributes.

Every helper takes the rule context so it can report contradictions at the node and record the
assumptions a result rests on (Clause 9.3: distinct variables are never silently equated).
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Sequence
from typing import Literal

from infer.contract.context import RuleContext, RuleError
from infer.core import dims as D
from infer.core.dims import Dim
from infer.core.types import TensorType
from infer.core.values import Value
from signatures.kit.spans import loose, span_of

Shape = tuple[Dim, ...]

# The largest rank a rule will build from a tensor's contents or length (Clause 15.4: a shape
# tensor of length 2^31 must not make inference allocate a shape of 2^31 dims).
MAX_RANK = 1024


def vector_length(ctx: RuleContext, i: int) -> int | None:
    """The length of 1-D input ``i`` (a shape, axes or pads tensor) when its type states it.

    A length past ``MAX_RANK`` is refused: it would be the rank of a shape built from it.
    """
    s = ctx.shape(i)
    if s is None or len(s) != 1 or not isinstance(s[0], int):
        return None
    if s[0] > MAX_RANK:
        raise RuleError("limit", f"input {i} has {s[0]} elements; ranks above {MAX_RANK} are refused")
    return s[0]


def require_rank(ctx: RuleContext, i: int, rank: int, what: str) -> None:
    """Input ``i``, when present and of known rank, has ``rank`` dims, as its definition says
    (a scalar bound, a 1-D shape); onnxruntime refuses another rank."""
    r = ctx.rank(i) if ctx.has(i) else None
    if r is not None and r != rank:
        want = "a scalar" if rank == 0 else f"{rank}-D"
        raise RuleError("shape-mismatch", f"{what} (input {i}) must be {want}, has rank {r}")


def require_single(ctx: RuleContext, i: int, what: str) -> None:
    """Input ``i``, when present, holds one value: a scalar by the definition, which onnxruntime's
    kernels and onnx's own function bodies (AffineGrid's Range) also give as shape ``[1]``."""
    s = ctx.shape(i) if ctx.has(i) else None
    if s is not None and (len(s) > 1 or (len(s) == 1 and isinstance(s[0], int) and s[0] != 1)):
        raise RuleError("shape-mismatch", f"{what} (input {i}) must be a scalar, has shape [{', '.join(map(str, s))}]")


def _drop_clamp(ctx: RuleContext, d: Dim) -> Dim:
    """``max(x, c)`` is ``x`` where what the model requires gives ``x >= c`` (a Slice's clamp)."""
    args = D.extremum_args(d, "max")
    if args is not None and len(args) == 2:
        x, c = args  # the constant comes last
        if isinstance(c, int) and (lb := ctx.lower_bound(x)) is not None and lb >= c:
            return x
    return d


def broadcast_dim(ctx: RuleContext, ds: Sequence[Dim]) -> Dim:
    """The extent of one broadcast position (Clause 6.6.2), given the extents present there."""
    ints = {d for d in ds if isinstance(d, int)}
    big = ints - {1}
    if len(big) > 1:
        ctx.error(
            "shape-mismatch",
            f"{ctx.op_type} with inputs {ctx.input_types_str()}: extents "
            f"{' and '.join(map(str, sorted(big)))} do not broadcast",
        )
        return None
    if big:
        k = big.pop()  # every other extent must be 1 or this one
        if symbolic := [d for d in ds if d is not None and not isinstance(d, int)]:
            shown = ", ".join(map(D.to_str, symbolic))
            ctx.require_broadcast([k, *symbolic], f"{shown} broadcast with {k} (each 1 or {k})")
        return k
    others = [d for d in ds if not (isinstance(d, int) and d == 1)]
    if not others:
        return 1
    if any(d is None for d in others):
        return None
    others = [_drop_clamp(ctx, d) for d in others]
    distinct = list(dict.fromkeys(others))
    if len(distinct) > D.EXTREMUM_COMPARED:
        return _broadcast_many(ctx, distinct)
    out = others[0]
    for d in others[1:]:
        if ctx.equal(out, d):
            continue
        ctx.require_broadcast((out, d), f"{D.to_str(out)} and {D.to_str(d)} broadcast (each equal or 1)")
        if not all((lb := ctx.lower_bound(e)) is not None and lb >= 1 for e in (out, d)):
            # An expression may be 0 (0 broadcasts only with 1, to 0): max would be wrong there.
            ctx.because(f"{D.to_str(out)} and {D.to_str(d)} broadcast, and one of them may be 0")
            return None
        out = D.dmax(out, d)
    return out


def _broadcast_many(ctx: RuleContext, ds: list[Dim]) -> Dim:
    """The extent where many distinct symbolic extents broadcast (a Max over hundreds of inputs).

    Folded one at a time, each would be compared with, and printed in an assumption beside, the
    maximum of all before it: quadratic in their count. Here each is read once: every one must
    be at least 1 (0 broadcasts only with 1), one assumption names them all, and the extent is
    their maximum, unreduced past ``dims.EXTREMUM_COMPARED`` arguments (exact all the same).
    """
    for d in ds:
        lb = ctx.lower_bound(d)
        if lb is None or lb < 1:
            ctx.because(f"{D.to_str(d)} and {len(ds) - 1} other extents broadcast, and {D.to_str(d)} may be 0")
            return None
    shown = ", ".join(D.to_str(d) for d in ds)
    ctx.require_broadcast(ds, f"{shown} broadcast (each 1 or equal to the largest)")
    return D.dmax_of(ds)


def broadcast(ctx: RuleContext, *shapes: Sequence[Dim] | None) -> Shape | None:
    """Multidirectional broadcasting of ``shapes``; ``None`` if any rank is unknown."""
    known = [s for s in shapes if s is not None]
    if len(known) < len(shapes):
        return None
    rank = max((len(s) for s in known), default=0)
    out = []
    for pos in range(rank):
        ds = [s[len(s) - rank + pos] for s in known if len(s) - rank + pos >= 0]
        D.tick(len(ds))  # (a variadic node's inputs, each compared: the node's clock)
        out.append(broadcast_dim(ctx, ds))
    return tuple(out)


def unidirectional(ctx: RuleContext, target: Sequence[Dim] | None, b: Sequence[Dim] | None) -> None:
    """Check that ``b`` broadcasts to ``target`` (Clause 6.6.3); report where it cannot."""
    if target is None or b is None:
        return
    if len(b) > len(target):
        ctx.error("shape-mismatch", f"{ctx.op_type}: rank {len(b)} does not broadcast to rank {len(target)}")
        return
    for t, d in zip(reversed(target), reversed(b)):
        if isinstance(t, int) and isinstance(d, int) and d not in (1, t):
            ctx.error(
                "shape-mismatch",
                f"{ctx.op_type} with inputs {ctx.input_types_str()}: extent {d} does not broadcast to {t}",
            )


def norm_axis(ctx: RuleContext, axis: int, rank: int, what: str = "axis") -> int:
    """``axis`` in ``[-rank, rank)`` as a non-negative index; out of range is a malformed node.

    An axis that is not an integer is refused the same way: an attribute whose type is left
    undefined reads as ``None`` (which value field holds it cannot be told). Callers reading
    axes from a tensor's contents check for symbolic elements first (those are unknown, not
    malformed).
    """
    try:
        axis = operator.index(axis)  # ints and numpy integers
    except TypeError:
        raise RuleError("bad-attribute", f"{ctx.op_type}: {what} {axis!r} is not an integer") from None
    if not -rank <= axis < rank:
        raise RuleError("bad-attribute", f"{ctx.op_type}: {what} {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


def norm_axes(ctx: RuleContext, axes: Iterable[int], rank: int, what: str = "axes") -> list[int]:
    out = [norm_axis(ctx, a, rank, what) for a in axes]
    if len(set(out)) != len(out):
        raise RuleError("bad-attribute", f"{ctx.op_type}: {what} {list(axes)} repeat an axis")
    return out


# How onnxruntime reads a 0/1 flag attribute given another integer (probed with 2 and -1 on
# onnxruntime 1.32, CPU): the definitions call these booleans and say nothing of other values.
FlagReading = Literal["one", "nonzero", "strict"]
ONE: FlagReading = "one"  # true only when exactly 1: 2 and -1 read as 0 (keepdims, ceil_mode)
NONZERO: FlagReading = "nonzero"  # true when not 0 (transA, onesided)
STRICT: FlagReading = "strict"  # onnxruntime refuses the node on anything but 0 and 1 (CumSum's exclusive)


def flag(ctx: RuleContext, name: str, default: int, reads: FlagReading) -> bool:
    """The 0/1 attribute ``name`` (absent: the schema's default, else ``default``) read as
    onnxruntime reads it; a value it refuses, or one that is not an integer, is a malformed node.

    ``reads`` records what onnxruntime does with another value; a rule never reads the flag one
    way while the runtime reads it another.
    """
    v = ctx.attr(name, default)
    try:
        v = operator.index(v)
    except TypeError:
        raise RuleError("bad-attribute", f"{ctx.op_type}: {name} {v!r} is not an integer") from None
    if v in (0, 1):
        return v == 1
    if reads == STRICT:
        raise RuleError("bad-attribute", f"{ctx.op_type}: {name} is {v}; it must be 0 or 1 (onnxruntime refuses it)")
    return reads == NONZERO


def same_dim(ctx: RuleContext, a: Dim, b: Dim, what: str) -> Dim:
    """Two extents the operator requires equal: report a contradiction, keep the better one."""
    eq = ctx.equal(a, b)
    if eq is False:
        ctx.error(
            "shape-mismatch",
            f"{ctx.op_type} with inputs {ctx.input_types_str()}: {what} {D.to_str(a)} and {D.to_str(b)} differ",
        )
        return a
    if a is None:
        return b
    if eq is None and b is not None:
        ctx.require_equal(a, b, f"{D.to_str(a)} == {D.to_str(b)} ({what})", what)
        # Either holds for a model that runs; an integer, then a non-fresh extent, says more.
        if isinstance(b, int) or (ctx.is_fresh(a) and not ctx.is_fresh(b)):
            return b
    return a


def elements(shape: Sequence[Dim] | None) -> Dim:
    """Number of elements of a shape, or ``None``."""
    return None if shape is None else D.product(shape)


def with_span(ctx: RuleContext, out: Value | tuple | None, i: int = 0, every: bool = True) -> Value | tuple | None:
    """``out`` (a shape or a value) given the element bounds of input ``i`` (``Value.span``),
    for an operator that moves elements without changing them (Reshape, Unsqueeze, Expand:
    ``every`` element; a Gather or a Slice takes some, which may miss the bounds)."""
    span = span_of(ctx.value(i))
    if span is None or out is None:
        return out
    span = span if every else loose(span)
    if isinstance(out, Value):
        return out if out.known is not None else Value(out.type, None, span)
    return Value(TensorType(None, tuple(out)), None, span)


def require_index_span(ctx: RuleContext, i: int, extent: Dim, axis: int) -> None:
    """Indices (input ``i``) whose bounds are known but not their values must lie within
    ``[-extent, extent - 1]``: a requirement of the model's domain (GPT-2's positions within
    its table of 1,024)."""
    v = ctx.value(i)
    if v is None or extent is None or v.known is not None:
        return  # (known indices are checked one by one)
    if v.span is None:
        ctx.require_unexpressed(
            f"the values of `{ctx.input_name(i)}` within [-{D.to_str(extent)}, "
            f"{D.to_str(D.sub(extent, 1))}] ({ctx.op_type} along axis {axis})",
            "the indices' values are not tracked",
        )
        return
    lo, hi, tight = v.span
    why = f"{ctx.op_type}'s indices within axis {axis} of extent {D.to_str(extent)}"
    if not tight:  # what every value of the inputs needs, not what each run does
        why += f" (at every value of the inputs `{ctx.input_name(i)}` is computed from)"
    if hi is not None and not isinstance(hi, int):
        if isinstance(extent, int):
            ctx.require_at_most(hi, extent - 1, why, tight)
        else:
            ctx.require_at_least(D.sub(D.sub(extent, 1), hi), 0, why)
    if lo is not None and not isinstance(lo, int):
        ctx.require_at_least(D.add(lo, extent), 0, why)
