"""Tensor manipulation: the operators that move, cut and compute shapes.

These are the rules that carry shapes through exported models (``Shape -> Gather -> Unsqueeze
-> Concat -> Reshape``), so each also follows its inputs' known contents.
"""

from __future__ import annotations

from fractions import Fraction

from onnx import TensorProto

from infer import dims as D
from infer.context import RuleContext, RuleError
from infer.dims import Dim
from infer.types import TensorType
from infer.values import Known, Value, known_vector

from .. import valueops as V
from ..helpers import broadcast, elements, norm_axes, norm_axis, same_dim
from ..registry import example, rule, shape_rule

# Ends at or past this are "to the end" in exported Slices (INT32_MAX, INT64_MAX). Symbolic
# extents are taken to be below it (docs/architecture.md, assumptions).
BIG = (1 << 31) - 1
INT32_MAX, INT64_MAX = (1 << 31) - 1, (1 << 63) - 1

_INT_TYPES = {TensorProto.INT8, TensorProto.INT16, TensorProto.INT32, TensorProto.INT64,
              TensorProto.UINT8, TensorProto.UINT16, TensorProto.UINT32, TensorProto.UINT64}  # fmt: skip
_FLOAT_TYPES = {TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.BFLOAT16}


def _vec(known: Known | None) -> Value:
    return Value(TensorType(None, None if known is None else known.shape), known)


def _out(shape: tuple[Dim, ...] | None, known: Known | None = None) -> Value:
    return Value(TensorType(None, shape), known)


# -- identity and casts ---------------------------------------------------------------------------


@rule("Identity")
def identity(ctx: RuleContext) -> list:
    v = ctx.value(0)
    return [v]


@rule("Cast")
def cast(ctx: RuleContext) -> list:
    to = ctx.require("to")
    to = int(to) if not isinstance(to, str) else TensorProto.DataType.Value(to.upper())
    known = V.cast(ctx.known(0), to in _FLOAT_TYPES, to in _INT_TYPES, to == TensorProto.BOOL)
    return [Value(TensorType(to, ctx.shape(0)), known)]


@rule("CastLike")
def cast_like(ctx: RuleContext) -> list:
    to = ctx.elem(1)
    known = None
    if to is not None:
        known = V.cast(ctx.known(0), to in _FLOAT_TYPES, to in _INT_TYPES, to == TensorProto.BOOL)
    return [Value(TensorType(to, ctx.shape(0)), known)]


# -- shape queries --------------------------------------------------------------------------------


def _clamp_index(i: int, rank: int) -> int:
    if i < 0:
        i += rank
    return min(max(i, 0), rank)


@rule("Shape")
def shape(ctx: RuleContext) -> list:
    s = ctx.shape(0)
    if s is None:
        ctx.because(f"`{ctx.input_name(0)}` has unknown rank", 0)
        return [(None,)]
    start = _clamp_index(ctx.attr("start", 0), len(s))
    end = _clamp_index(ctx.attr("end", len(s)), len(s))
    dims = list(s[start:end]) if end > start else []
    return [Value(TensorType(None, (len(dims),)), known_vector(dims))]


@rule("Size")
def size(ctx: RuleContext) -> list:
    n = elements(ctx.shape(0))
    return [Value(TensorType(None, ()), None if n is None else Known((), (n,)))]


# -- reshaping ------------------------------------------------------------------------------------


def reshape_dims(ctx: RuleContext, data: tuple[Dim, ...] | None, target: list[Dim], allowzero: bool) -> list[Dim]:
    """Resolve Reshape's 0 (copy) and -1 (infer) entries."""
    out: list[Dim] = []
    infer_at = None
    for i, t in enumerate(target):
        if isinstance(t, int) and t == 0 and not allowzero:
            if data is None or i >= len(data):
                if data is not None:
                    raise RuleError("shape-mismatch", f"target entry {i} is 0 but the input has rank {len(data)}")
                out.append(None)
            else:
                out.append(data[i])
        elif isinstance(t, int) and t == -1:
            if infer_at is not None:
                raise RuleError("shape-mismatch", "the target shape has more than one -1")
            infer_at = i
            out.append(None)
        elif isinstance(t, int) and t < -1:
            raise RuleError("shape-mismatch", f"target shape entry {t} is negative")
        else:
            out.append(t)
    total = elements(data)
    if infer_at is not None:
        rest = D.product(d for j, d in enumerate(out) if j != infer_at)
        if total is not None and rest is not None and rest != 0:
            q = D.floordiv(total, rest)
            if isinstance(total, int) and isinstance(rest, int) and total % rest:
                raise RuleError(
                    "shape-mismatch", f"{total} elements cannot be reshaped with the other dims giving {rest}"
                )
            out[infer_at] = q
        else:
            ctx.because("the element count needed to resolve -1 is not known")
    elif total is not None:
        got = D.product(out)
        if D.equal(total, got) is False:
            raise RuleError(
                "shape-mismatch",
                f"the input has {D.to_str(total)} elements, the target shape {[D.to_str(d) for d in out]} "
                f"holds {D.to_str(got)}",
            )
    return out


@rule("Reshape", since=5)
def reshape(ctx: RuleContext) -> list:
    target = ctx.known_dims(1)
    if target is None:
        ts = ctx.shape(1)
        ctx.contents_unknown(1, "the target shape")
        if ts is not None and len(ts) == 1 and isinstance(ts[0], int):
            return [(None,) * ts[0]]
        return [None]
    out = reshape_dims(ctx, ctx.shape(0), target, bool(ctx.attr("allowzero", 0)))
    k = ctx.known(0)
    known = V.reshape(k, out) if k is not None and all(isinstance(d, int) for d in out) else None
    return [_out(tuple(out), known)]


@rule("Reshape", since=1)
def reshape_v1(ctx: RuleContext) -> list:
    return [tuple(reshape_dims(ctx, ctx.shape(0), list(ctx.require("shape")), False))]


@rule("Flatten")
def flatten(ctx: RuleContext) -> list:
    s = ctx.shape(0)
    if s is None:
        return [(None, None)]
    axis = ctx.attr("axis", 1)
    if not -len(s) <= axis <= len(s):
        raise RuleError("bad-attribute", f"axis {axis} is out of range for rank {len(s)}")
    axis = axis + len(s) if axis < 0 else axis
    return [(D.product(s[:axis]), D.product(s[axis:]))]


@rule("Transpose")
def transpose(ctx: RuleContext) -> list:
    s = ctx.shape(0)
    if s is None:
        return [None]
    perm = ctx.attr("perm")
    perm = list(range(len(s)))[::-1] if perm is None else list(perm)
    if sorted(norm_axes(ctx, perm, len(s), "perm")) != list(range(len(s))) or len(perm) != len(s):
        raise RuleError("bad-attribute", f"perm {perm} is not a permutation of {len(s)} axes")
    perm = [p % len(s) for p in perm]
    known = V.transpose(ctx.known(0), perm) if ctx.known(0) is not None else None
    return [_out(tuple(s[p] for p in perm), known)]


def _axes(ctx: RuleContext, attr_before: int, input_index: int) -> list[int] | bool | None:
    """Axes from the attribute (opsets before ``attr_before``) or from an input.

    Returns the list, ``None`` when not given, or ``False`` when given but not known.
    """
    if ctx.version < attr_before:
        axes = ctx.attr("axes")
        return None if axes is None else list(axes)
    if not ctx.has(input_index):
        return None
    axes = ctx.known_ints(input_index)
    if axes is None:
        ctx.contents_unknown(input_index, "the axes")
        return False
    return axes


@rule("Squeeze")
def squeeze(ctx: RuleContext) -> list:
    s = ctx.shape(0)
    axes = _axes(ctx, 13, 1)
    if s is None:
        return [None]
    if axes is False:
        return [None]
    if axes is None:
        if any(not isinstance(d, int) for d in s):
            ctx.because("Squeeze without axes removes the dims equal to 1, and a symbolic dim may be 1")
            return [None]
        out = tuple(d for d in s if d != 1)
    else:
        ax = set(norm_axes(ctx, axes, len(s)))
        for a in ax:
            if isinstance(s[a], int) and s[a] != 1:
                raise RuleError("shape-mismatch", f"cannot squeeze axis {a} of extent {s[a]}")
        out = tuple(d for i, d in enumerate(s) if i not in ax)
    k = ctx.known(0)
    known = V.reshape(k, out) if k is not None and all(isinstance(d, int) for d in out) else None
    return [_out(out, known)]


@rule("Unsqueeze")
def unsqueeze(ctx: RuleContext) -> list:
    s = ctx.shape(0)
    axes = _axes(ctx, 13, 1)
    if axes is None:
        raise RuleError("bad-attribute", "Unsqueeze needs axes")
    if s is None or axes is False:
        return [None]
    rank = len(s) + len(axes)
    ax = set(norm_axes(ctx, axes, rank))
    it = iter(s)
    out = tuple(1 if i in ax else next(it) for i in range(rank))
    k = ctx.known(0)
    known = V.reshape(k, out) if k is not None else None
    return [_out(out, known)]


@rule("Concat", since=4)
def concat(ctx: RuleContext) -> list:
    shapes = [ctx.shape(i) for i in range(ctx.n_inputs) if ctx.has(i)]
    known_rank = next((s for s in shapes if s is not None), None)
    if known_rank is None:
        return [None]
    rank = len(known_rank)
    if any(s is not None and len(s) != rank for s in shapes):
        raise RuleError("shape-mismatch", "inputs have different ranks")
    axis = norm_axis(ctx, ctx.require("axis"), rank)
    out: list[Dim] = []
    for i in range(rank):
        col = [None if s is None else s[i] for s in shapes]
        if i == axis:
            out.append(D.total(col) if None not in col else None)
        else:
            d = col[0]
            for other in col[1:]:
                d = same_dim(ctx, d, other, f"non-axis dim {i}") if other is not None else d
            out.append(d)
    known = V.concat([ctx.known(i) for i in range(ctx.n_inputs) if ctx.has(i)], axis)
    return [_out(tuple(out), known)]


@rule("Split")
def split(ctx: RuleContext) -> list:
    s = ctx.shape(0)
    n = ctx.n_outputs
    if s is None:
        return [None] * n
    axis = norm_axis(ctx, ctx.attr("axis", 0), len(s))
    d = s[axis]
    if ctx.version >= 13 or (ctx.version < 11 and ctx.has(1)):
        sizes = ctx.known_ints(1) if ctx.has(1) else None
        if ctx.has(1) and sizes is None:
            ctx.contents_unknown(1, "the split sizes")
            parts: list[Dim] = [None] * n
            return [s[:axis] + (p,) + s[axis + 1 :] for p in parts]
    else:
        sizes = ctx.attr("split")
    if sizes is not None:
        sizes = list(sizes)
        if len(sizes) != n:
            raise RuleError("shape-mismatch", f"{len(sizes)} split sizes for {n} outputs")
        if isinstance(d, int) and sum(sizes) != d:
            raise RuleError("shape-mismatch", f"split sizes {sizes} do not add up to extent {d}")
        parts = list(sizes)
    elif ctx.version >= 18 and ctx.has_attr("num_outputs"):
        chunk = D.ceildiv(d, n)
        parts = [chunk] * (n - 1) + [D.sub(d, D.mul(chunk, n - 1))]
    else:
        if isinstance(d, int) and d % n:
            raise RuleError("shape-mismatch", f"extent {d} does not split evenly into {n}")
        parts = [D.floordiv(d, n)] * n
    return [s[:axis] + (p,) + s[axis + 1 :] for p in parts]


# -- slicing and gathering ------------------------------------------------------------------------


def _sign(x: Dim) -> int | None:
    if isinstance(x, int):
        return (x > 0) - (x < 0)
    if x is None:
        return None
    lb = D.lower_bound(x)
    if lb is not None and lb >= 0:
        return 1 if lb > 0 else None
    nlb = D.lower_bound(D.neg(x))  # type: ignore[arg-type]
    if nlb is not None and nlb > 0:
        return -1
    return None


def slice_extent(n: Dim, start: Dim, end: Dim, step: int) -> Dim:
    """Extent of ``x[start:end:step]`` along an axis of extent ``n`` (ONNX clamping rules)."""
    if n is None or start is None or end is None or step == 0:
        return None
    if step > 0:

        def clamp(i: Dim) -> Dim:
            if isinstance(i, int) and i >= BIG:
                return n
            sg = _sign(i)
            if sg is None:
                return None
            if sg < 0:
                return D.dmax(D.add(i, n), 0)
            return D.dmin(i, n)

        s, e = clamp(start), clamp(end)
        return D.dmax(D.ceildiv(D.sub(e, s), step), 0)

    if end in (INT32_MAX, INT64_MAX):
        # The definition clamps this end to n - 1 (an empty slice); onnxruntime reads these two
        # sentinels as "through the first element". Runtimes disagree, so claim nothing.
        return None

    def clamp_neg(i: Dim, low: int) -> Dim:
        if isinstance(i, int) and i >= BIG:
            return D.sub(n, 1)
        if isinstance(i, int) and i <= -BIG:
            return low
        sg = _sign(i)
        if sg is None:
            return None
        if sg < 0:
            return D.dmax(D.add(i, n), low)
        return D.dmin(i, D.sub(n, 1))

    s, e = clamp_neg(start, 0), clamp_neg(end, -1)
    return D.dmax(D.ceildiv(D.sub(s, e), -step), 0)


@rule("Slice", since=10)
def slice_(ctx: RuleContext) -> list:
    s = ctx.shape(0)
    starts, ends = ctx.known_dims(1), ctx.known_dims(2)
    axes = ctx.known_ints(3) if ctx.has(3) else None
    steps = ctx.known_ints(4) if ctx.has(4) else None
    if s is None:
        return [None]
    rank = len(s)
    if starts is None or ends is None or (ctx.has(3) and axes is None) or (ctx.has(4) and steps is None):
        which = next(i for i, ok in ((1, starts), (2, ends), (3, axes), (4, steps)) if ctx.has(i) and ok is None)
        ctx.contents_unknown(which, "a slice bound")
        if axes is not None:
            ax = set(norm_axes(ctx, axes, rank))
            return [tuple(None if i in ax else d for i, d in enumerate(s))]
        return [(None,) * rank]
    return [_slice(ctx, s, starts, ends, axes, steps)]


@rule("Slice", since=1)
def slice_v1(ctx: RuleContext) -> list:
    s = ctx.shape(0)
    if s is None:
        return [None]
    axes = ctx.attr("axes")
    return [_slice(ctx, s, list(ctx.require("starts")), list(ctx.require("ends")),
                   None if axes is None else list(axes), None)]  # fmt: skip


def _slice(ctx: RuleContext, s: tuple[Dim, ...], starts: list[Dim], ends: list[Dim],
           axes: list[int] | None, steps: list[int] | None) -> Value:  # fmt: skip
    rank = len(s)
    axes = list(range(len(starts))) if axes is None else axes
    steps = [1] * len(starts) if steps is None else steps
    if not len(starts) == len(ends) == len(axes) == len(steps):
        raise RuleError("shape-mismatch", "starts, ends, axes and steps differ in length")
    out = list(s)
    norm = norm_axes(ctx, axes, rank)
    for a, st, en, sp in zip(norm, starts, ends, steps):
        if sp == 0:
            raise RuleError("bad-attribute", "a slice step is 0")
        out[a] = slice_extent(s[a], st, en, sp)
    known = None
    k = ctx.known(0)
    if k is not None and all(isinstance(x, int) for x in (*starts, *ends)):
        known = V.slice_known(k, starts, ends, norm, steps)  # type: ignore[arg-type]
    return _out(tuple(out), known)


@rule("Gather")
def gather(ctx: RuleContext) -> list:
    s, idx = ctx.shape(0), ctx.shape(1)
    if s is None or idx is None:
        return [None]
    axis = norm_axis(ctx, ctx.attr("axis", 0), len(s))
    out = s[:axis] + idx + s[axis + 1 :]
    return [_out(out, V.take(ctx.known(0), ctx.known(1), axis))]


# -- growing --------------------------------------------------------------------------------------


@rule("Expand", since=8)
def expand(ctx: RuleContext) -> list:
    s = ctx.shape(0)
    target = ctx.known_dims(1)
    if target is None:
        ctx.contents_unknown(1, "the target shape")
        ts = ctx.shape(1)
        if s is None or ts is None or not isinstance(ts[0], int):
            return [None]
        rank = max(len(s), ts[0])
        padded = (1,) * (rank - len(s)) + s
        # Where the input extent is not 1 it wins (the target must be 1 or equal there).
        return [tuple(d if isinstance(d, int) and d != 1 else None for d in padded)]
    out = broadcast(ctx, s, target)
    known = None
    if ctx.known(0) is not None and out is not None and all(isinstance(d, int) for d in out):
        known = V.expand(ctx.known(0), out)  # type: ignore[arg-type]
    return [_out(out, known)]


@rule("Tile", since=6)
def tile(ctx: RuleContext) -> list:
    s = ctx.shape(0)
    reps = ctx.known_dims(1)
    if s is None:
        return [None]
    if reps is None:
        ctx.contents_unknown(1, "the repeats")
        return [(None,) * len(s)]
    if len(reps) != len(s):
        raise RuleError("shape-mismatch", f"{len(reps)} repeats for rank {len(s)}")
    return [tuple(D.mul(d, r) for d, r in zip(s, reps))]


@rule("Pad", since=2)
def pad(ctx: RuleContext) -> list:
    s = ctx.shape(0)
    if s is None:
        return [None]
    rank = len(s)
    if ctx.version < 11:
        pads = list(ctx.require("pads"))
        axes = list(range(rank))
    else:
        pads = ctx.known_dims(1)
        axes = ctx.known_ints(3) if ctx.has(3) else list(range(rank))
        if pads is None or axes is None:
            ctx.contents_unknown(1 if pads is None else 3, "the pads")
            if axes is not None:
                ax = set(norm_axes(ctx, axes, rank))
                return [tuple(None if i in ax else d for i, d in enumerate(s))]
            return [(None,) * rank]
    axes = norm_axes(ctx, axes, rank)
    if len(pads) != 2 * len(axes):
        raise RuleError("shape-mismatch", f"{len(pads)} pads for {len(axes)} axes")
    out = list(s)
    for j, a in enumerate(axes):
        out[a] = D.add(D.add(s[a], pads[j]), pads[j + len(axes)])
        if isinstance(out[a], int) and out[a] < 0:
            raise RuleError("shape-mismatch", f"padding makes axis {a} negative")
    return [tuple(out)]


shape_rule("Trilu", "X[*s, n, m] -> Y[*s, n, m]")


# -- Resize ---------------------------------------------------------------------------------------


def _scaled(d: Dim, scale: float) -> Dim:
    """``floor(d * scale)``, exact only for scales whose binary fraction is short."""
    if isinstance(d, int):
        return int(d * scale) if scale >= 0 else None
    f = Fraction(scale)
    if f.denominator > 1 << 16 or f.numerator > 1 << 16:
        return None
    return D.floordiv(D.mul(d, f.numerator), f.denominator)


@rule("Resize", since=10)
def resize(ctx: RuleContext) -> list:
    s = ctx.shape(0)
    if s is None:
        return [None]
    rank = len(s)
    if ctx.version < 11:
        scales_i, sizes_i = 1, None
    else:
        scales_i, sizes_i = 2, 3
    axes = ctx.attr("axes")
    axes = list(range(rank)) if axes is None else norm_axes(ctx, axes, rank)
    if sizes_i is not None and ctx.has(sizes_i) and ctx.rank(sizes_i) != 0 and ctx.shape(sizes_i) != (0,):
        sizes = ctx.known_dims(sizes_i)
        if sizes is None:
            ctx.contents_unknown(sizes_i, "the output sizes")
            return [tuple(None if i in axes else d for i, d in enumerate(s))]
        if len(sizes) != len(axes):
            raise RuleError("shape-mismatch", f"{len(sizes)} sizes for {len(axes)} axes")
        policy = ctx.attr("keep_aspect_ratio_policy", "stretch")
        out = list(s)
        if policy != "stretch":
            if not all(isinstance(d, int) for d in sizes) or not all(isinstance(s[a], int) for a in axes):
                ctx.because("keep_aspect_ratio_policy on symbolic extents is not followed")
                return [tuple(None if i in axes else d for i, d in enumerate(s))]
            ratios = [sz / s[a] for a, sz in zip(axes, sizes)]  # type: ignore[operator]
            r = min(ratios) if policy == "not_larger" else max(ratios)
            for a in axes:
                out[a] = int(r * s[a] + 0.5)  # type: ignore[operator]
            return [tuple(out)]
        for a, sz in zip(axes, sizes):
            out[a] = sz
        return [tuple(out)]
    if not ctx.has(scales_i):
        raise RuleError("bad-attribute", "Resize needs scales or sizes")
    k = ctx.known(scales_i)
    if k is None:
        ctx.contents_unknown(scales_i, "the scales")
        return [tuple(None if i in axes else d for i, d in enumerate(s))]
    scales = [float(x) for x in k.elems]
    if len(scales) != len(axes):
        raise RuleError("shape-mismatch", f"{len(scales)} scales for {len(axes)} axes")
    out = list(s)
    for a, sc in zip(axes, scales):
        out[a] = _scaled(s[a], sc)
    return [tuple(out)]


@rule("Upsample", since=7)
def upsample(ctx: RuleContext) -> list:
    s = ctx.shape(0)
    if s is None:
        return [None]
    if ctx.version < 9:
        scales = ctx.require("scales")
    else:
        k = ctx.known(1)
        if k is None:
            ctx.contents_unknown(1, "the scales")
            return [(None,) * len(s)]
        scales = [float(x) for x in k.elems]
    if len(scales) != len(s):
        raise RuleError("shape-mismatch", f"{len(scales)} scales for rank {len(s)}")
    return [tuple(_scaled(d, sc) for d, sc in zip(s, scales))]


@rule("GatherND")
def gather_nd(ctx: RuleContext) -> list:
    data, idx = ctx.shape(0), ctx.shape(1)
    if data is None or idx is None:
        return [None]
    b = ctx.attr("batch_dims", 0)
    if not idx:
        raise RuleError("shape-mismatch", "indices must have rank >= 1")
    last = idx[-1]
    if not isinstance(last, int):
        ctx.because("the last dim of the indices (how many axes each index addresses) is not known")
        return [None]
    if b + last > len(data):
        raise RuleError(
            "shape-mismatch", f"indices address {last} axes after {b} batch dims of a rank-{len(data)} input"
        )
    return [tuple(idx[:-1]) + tuple(data[b + last :])]


example("Identity", ["int64[2]={B,S}"], ["int64[2]={B,S}"])
example("Cast", ["int64[]={S}"], ["float[]={S}"], attrs={"to": TensorProto.FLOAT})
example("CastLike", ["float[N,3]", "float16[]"], ["float16[N,3]"])
example("Shape", ["float[B,S,64]"], ["int64[3]={B,S,64}"])
example("Shape", ["float[B,S,64]"], ["int64[2]={S,64}"], attrs={"start": 1}, opset=15)
example("Shape", ["float[*]"], ["int64[?]"])
example("Size", ["float[B,S,64]"], ["int64[]={64*B*S}"])
example("Reshape", ["float[B,S,768]", "int64[4]={0,0,12,64}"], ["float[B,S,12,64]"])
example("Reshape", ["float[B,S,768]", "int64[3]={B,-1,64}"], ["float[B,12*S,64]"])
example("Reshape", ["float[B,S,768]", "int64[2]"], ["float[?,?]"])
example("Reshape", ["float[2,3]", "int64[1]={7}"], ["float[7]"], error="shape-mismatch")
example("Flatten", ["float[N,C,H,W]"], ["float[N,C*H*W]"])
example("Flatten", ["float[N,C,H,W]"], ["float[N*C*H,W]"], attrs={"axis": -1})
example("Transpose", ["float[B,S,H,D]"], ["float[B,H,S,D]"], attrs={"perm": [0, 2, 1, 3]})
example("Transpose", ["float[A,B,C]"], ["float[C,B,A]"])
example("Squeeze", ["float[N,1,3]", "int64[1]={1}"], ["float[N,3]"])
example("Squeeze", ["float[N,1,3]"], ["float[N,3]"], attrs={"axes": [1]}, opset=11)
example("Squeeze", ["float[N,1,3]"], ["float[*]"])
example("Squeeze", ["float[N,2,3]", "int64[1]={1}"], ["float[*]"], error="shape-mismatch")
example("Unsqueeze", ["int64[]={S}", "int64[1]={0}"], ["int64[1]={S}"])
example("Unsqueeze", ["float[N,3]", "int64[2]={0,-1}"], ["float[1,N,3,1]"])
example("Concat", ["int64[1]={B}", "int64[1]={-1}", "int64[2]={12,64}"], ["int64[4]={B,-1,12,64}"],
        attrs={"axis": 0})  # fmt: skip
example("Concat", ["float[N,S,4]", "float[N,T,4]"], ["float[N,S + T,4]"], attrs={"axis": 1})
example("Concat", ["float[N,3]", "float[N,4]"], ["float[N,?]"], attrs={"axis": 0}, error="shape-mismatch")
example("Split", ["float[N,6]", "int64[2]={2,4}"], ["float[N,2]", "float[N,4]"], attrs={"axis": 1})
example("Split", ["float[N,3*D]"], ["float[N,D]", "float[N,D]", "float[N,D]"], attrs={"axis": 1}, opset=13)
example("Split", ["float[7]"], ["float[3]", "float[3]", "float[1]"], attrs={"num_outputs": 3}, opset=18)
example("Slice", ["float[N,10]", "int64[1]={1}", "int64[1]={9223372036854775807}", "int64[1]={0}"],
        ["float[N - 1,10]"])  # fmt: skip
example("Slice", ["float[N,10]", "int64[1]={2}", "int64[1]={-1}", "int64[1]={1}"], ["float[N,7]"])
example("Slice", ["float[N,10]", "int64[1]={0}", "int64[1]={S}", "int64[1]={0}"], ["float[min(N, S),10]"])
example("Slice", ["float[20,10]", "int64[1]={-1}", "int64[1]={-21}", "int64[1]={0}", "int64[1]={-2}"],
        ["float[10,10]"])  # fmt: skip
example("Slice", ["int64[4]={B,S,12,64}", "int64[1]={0}", "int64[1]={2}"], ["int64[2]={B,S}"])
example("Gather", ["int64[3]={B,S,768}", "int64[]={1}"], ["int64[]={S}"])
example("Gather", ["float[V,64]", "int64[B,S]"], ["float[B,S,64]"])
example("Gather", ["float[N,C,H]", "int64[K]"], ["float[N,K,H]"], attrs={"axis": 1})
example("GatherND", ["float[N,4,5]", "int64[M,2]"], ["float[M,5]"])
example("Expand", ["float[1,S,1]", "int64[3]={B,1,4}"], ["float[B,S,4]"])
example("Expand", ["float[3,1]", "int64[2]"], ["float[3,?]"])
example("Tile", ["float[N,3]", "int64[2]={2,2}"], ["float[2*N,6]"])
example("Pad", ["float[N,3,H,W]", "int64[8]={0,0,1,1,0,0,1,1}"], ["float[N,3,H + 2,W + 2]"])
example("Pad", ["float[N,3]"], ["float[N,5]"], attrs={"pads": [0, 1, 0, 1]}, opset=2)
example("Trilu", ["float[B,N,N]"], ["float[B,N,N]"])
example("Resize", ["float[N,3,H,W]", "", "float[4]={1.0,1.0,2.0,2.0}"], ["float[N,3,2*H,2*W]"], opset=13)
example("Resize", ["float[N,3,H,W]", "", "", "int64[4]={1,3,32,32}"], ["float[1,3,32,32]"], opset=13)
example("Resize", ["float[N,3,H,W]", "", "float[4]={1.0,1.0,0.5,0.5}"], ["float[N,3,floor(H/2),floor(W/2)]"],
        opset=13)  # fmt: skip
