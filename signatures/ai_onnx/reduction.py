"""Reductions: ReduceX (axes as attribute or, from opset 13/18, as an input), ArgMax/Min, TopK."""

from __future__ import annotations

from infer.contract.context import RuleContext, RuleError
from infer.core.dims import Dim
from infer.core.types import TensorType
from infer.core.values import Value
from signatures.ai_onnx.data_dependent import shared_unknown
from signatures.kit import valueops as V
from signatures.kit.helpers import ONE, flag, norm_axes, norm_axis
from signatures.kit.registry import example, rule

# The opset from which each reduction takes its axes as an input instead of an attribute.
AXES_INPUT_SINCE = {
    "ReduceSum": 13, "ReduceMean": 18, "ReduceMax": 18, "ReduceMin": 18, "ReduceProd": 18,
    "ReduceL1": 18, "ReduceL2": 18, "ReduceLogSum": 18, "ReduceLogSumExp": 18, "ReduceSumSquare": 18,
}  # fmt: skip
# Sums and products only where no rounding happens: onnxruntime picks the order of a float
# reduction (vectorized, pairwise), and only exact results are the same in every order.
_VALUE_OPS = {"ReduceSum": "add_exact", "ReduceProd": "mul_exact", "ReduceMax": "max", "ReduceMin": "min"}


def reduced_shape(shape: tuple[Dim, ...], axes: list[int] | None, keepdims: bool) -> tuple[Dim, ...]:
    ax = set(range(len(shape))) if axes is None else set(axes)
    if keepdims:
        return tuple(1 if i in ax else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in ax)


@rule(list(AXES_INPUT_SINCE))
def reduce(ctx: RuleContext) -> list:
    """Axes from the attribute, or (ReduceSum from 13, the others from 18) from an input."""
    x = ctx.shape(0)
    # onnxruntime keeps the reduced axes, and skips an empty reduction, only for exactly 1 (2 and
    # -1 read as 0); the definition calls both booleans.
    keepdims = flag(ctx, "keepdims", 1, ONE)
    noop = flag(ctx, "noop_with_empty_axes", 0, ONE)
    if ctx.version >= AXES_INPUT_SINCE[ctx.op_type]:
        axes = ctx.known_ints(1) if ctx.has(1) else None
        if ctx.has(1) and axes is None:
            ctx.contents_unknown(1, "the axes")
            return [_unknown_axes(ctx, x, keepdims, noop)]
    else:
        axes = ctx.attr("axes")
    if x is None:
        return [None]
    if not axes:
        if noop and ctx.version >= AXES_INPUT_SINCE[ctx.op_type]:
            return [Value(TensorType(None, x), ctx.known(0))]
        axes = None
    norm = None if axes is None else norm_axes(ctx, axes, len(x))
    out = reduced_shape(x, norm, keepdims)
    name, k = _VALUE_OPS.get(ctx.op_type), ctx.known(0)
    known = None
    if name is not None and k is not None and not any(isinstance(e, float) and e != e for e in k.elems):
        # (NaN: which one a max or min returns depends on the order; left unknown)
        op = getattr(V.ops_of(ctx), name)
        known = V.reduce(k, op, norm, keepdims)
    return [Value(TensorType(None, out), known)]


def _unknown_axes(ctx: RuleContext, x: tuple[Dim, ...] | None, keepdims: bool, noop: bool) -> tuple | None:
    """The output when the axes input's contents are unknown (its length may be known)."""
    if x is None:
        return None
    a = ctx.shape(1)
    n = a[0] if a is not None and len(a) == 1 and isinstance(a[0], int) else None
    if n == 0:  # no axes: every axis is reduced, or none with noop_with_empty_axes
        return x if noop else reduced_shape(x, None, keepdims)
    if keepdims:
        return tuple(1 if d == 1 else None for d in x)  # a reduced axis becomes 1, an extent 1 stays 1
    return None if n is None or n > len(x) else (None,) * (len(x) - n)


@rule(["ArgMax", "ArgMin"])
def arg_reduce(ctx: RuleContext) -> list:
    x = ctx.shape(0)
    if x is None:
        return [None]
    axis = norm_axis(ctx, ctx.attr("axis", 0), len(x))
    # keepdims as for the reductions: only 1 keeps the axis in onnxruntime. select_last_index
    # (any non-zero value is true there) changes no shape.
    return [reduced_shape(x, [axis], flag(ctx, "keepdims", 1, ONE))]


@rule("TopK")
def topk(ctx: RuleContext) -> list:
    x = ctx.shape(0)
    if ctx.version < 10:
        k: Dim = ctx.require("k")
    else:
        kk = ctx.known_dims(1)
        if kk is None or len(kk) != 1:
            ctx.contents_unknown(1, "K")
            k = None
        else:
            k = kk[0]
    if x is None:
        return [None, None]
    # largest and sorted (onnxruntime reads only 1 as true) change no shape.
    axis = norm_axis(ctx, ctx.attr("axis", -1), len(x))
    extent = x[axis]
    if isinstance(k, int) and isinstance(extent, int) and k > extent:
        raise RuleError("shape-mismatch", f"K={k} exceeds the extent {x[axis]} of axis {axis}")
    if k is None:
        # One K for both outputs: the values and their indices have one extent, whatever it is.
        k = shared_unknown(ctx, "k", "TopK's K is not known", 1)
    out = x[:axis] + (k,) + x[axis + 1 :]
    return [out, out]


example("ReduceMean", ["float[B,S,64]", "int64[1]={-1}"], ["float[B,S,1]"], opset=18)
example("ReduceMean", ["float[B,S,64]"], ["float[B,S]"], attrs={"axes": [-1], "keepdims": 0}, opset=13)
example("ReduceSum", ["float[B,S,64]", "int64[1]={1}"], ["float[B,64]"], attrs={"keepdims": 0})
example("ReduceSum", ["float[B,S,64]"], ["float[1,1,1]"])
example("ReduceSum", ["float[B,S,64]", "int64[0]={}"], ["float[B,S,64]"], attrs={"noop_with_empty_axes": 1})
example("ReduceMax", ["float[B,S,64]", "int64[1]"], ["float[?,?,?]"], opset=18)
example("ReduceMin", ["float[B,S,64]"], ["float[B,S,1]"], attrs={"axes": [2]}, opset=13)
example("ReduceProd", ["int64[3]={B,S,64}"], ["int64[1]={64*B*S}"], opset=18)
example("ArgMax", ["float[B,S,V]"], ["int64[B,S,1]"], attrs={"axis": -1})
example("ArgMax", ["float[B,S,V]"], ["int64[B,S]"], attrs={"axis": 2, "keepdims": 0})
example("TopK", ["float[B,V]", "int64[1]={5}"], ["float[B,5]", "int64[B,5]"])
example("ReduceSum", ["float[B,1,64]", "int64[2]"], ["float[?,1,?]"], opset=13)
example("ReduceSum", ["float[B,1,64]", "int64[2]"], ["float[?]"], attrs={"keepdims": 0}, opset=13)
example("ReduceSum", ["float[B,1,64]", "int64[0]"], ["float[]"], attrs={"keepdims": 0}, opset=13)
example("ReduceL2", ["float[B,S,64]"], ["float[B,S]"], attrs={"axes": [2], "keepdims": 0}, opset=1)
example("ReduceLogSumExp", ["float[B,S,64]", "int64[1]={0}"], ["float[1,S,64]"], opset=18)
example("ReduceSumSquare", ["float[B,S,64]"], ["float[1,1,1]"], opset=18)
example("ReduceMin", ["float[B,S,64]", "int64[0]={}"], ["float[B,S,64]"], attrs={"noop_with_empty_axes": 1}, opset=18)
example("ArgMin", ["float[B,S,V]"], ["int64[1,S,V]"], opset=1)
example("ArgMax", ["float[B,S,V]"], ["int64[B,V]"], attrs={"axis": -2, "keepdims": 0, "select_last_index": 1}, opset=12)
example("TopK", ["float[B,V]"], ["float[B,3]", "int64[B,3]"], attrs={"k": 3}, opset=1)
example("TopK", ["float[B,V]", "int64[1]"], ["float[B,?]", "int64[B,?]"], opset=11)
example("TopK", ["float[B,V]", "int64[1]={K}"], ["float[K,V]", "int64[K,V]"], attrs={"axis": 0}, opset=24)
example("TopK", ["float[B,4]", "int64[1]={5}"], ["float[*]", "int64[*]"], error="shape-mismatch")
# keepdims and noop_with_empty_axes other than 0 and 1 read as onnxruntime reads them: as 0.
example("ReduceMean", ["float[B,S,64]", "int64[1]={-1}"], ["float[B,S]"], attrs={"keepdims": 2}, opset=18)
example("ReduceSum", ["float[B,S,64]", "int64[0]={}"], ["float[]"], attrs={"keepdims": -1, "noop_with_empty_axes": 2})
example("ArgMax", ["float[B,S,V]"], ["int64[B,S]"], attrs={"axis": -1, "keepdims": 2}, opset=13)
# Float sums only where exact: onnxruntime picks the order of the additions.
example("ReduceSum", ["float[2]={1.5,2.25}", "int64[1]={0}"], ["float[1]={3.75}"])
example("ReduceSum", ["float[3]={0.1,0.2,0.3}", "int64[1]={0}"], ["float[1]={?}"])
