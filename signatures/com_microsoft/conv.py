"""Convolutions and pooling: FusedConv, NhwcConv, QLinearConv, QLinearAveragePool, QLinearGlobalAveragePool.

onnxruntime's graph optimizer fuses Conv with its activation into FusedConv; its QOperator
quantizer emits the QLinear* pooling operators (and QLinearConv, with ``channels_last`` for
NHWC layouts). Spatial extents follow Conv and AveragePool exactly (``sliding_extent``); an NHWC
operator is the NCHW one with the channel axis moved last.
"""

from __future__ import annotations

from infer import dims as D
from infer.context import RuleContext, RuleError
from infer.dims import Dim

from ..ai_onnx.nn import sliding_extent
from ..helpers import ONE, flag, same_dim
from ..registry import example, rule
from . import FLOAT_DOUBLE, FLOATS, INT, INT8_TYPES, INTS, MS, REQUIRED, STRING, op

Shape = tuple[Dim, ...]

_CONV_ATTRS = {"auto_pad": (STRING, "NOTSET"), "kernel_shape": (INTS, None), "dilations": (INTS, None),
               "strides": (INTS, None), "pads": (INTS, None), "group": (INT, 1)}  # fmt: skip

op("FusedConv", "X:T W:T B?:T Z?:T", "Y:T", {"T": FLOAT_DOUBLE},
   {**_CONV_ATTRS, "activation": (STRING, None), "activation_params": (FLOATS, None)})  # fmt: skip
op("NhwcConv", "X:T W:T B?:T", "Y:T", {"T": FLOAT_DOUBLE}, _CONV_ATTRS)
op("QLinearConv", "x:T1 x_scale:tensor(float) x_zero_point:T1 w:T2 w_scale:tensor(float) w_zero_point:T2 "
   "y_scale:tensor(float) y_zero_point:T3 B?:T4", "y:T3",
   {"T1": ("tensor(int8)", "tensor(uint8)"), "T2": ("tensor(int8)", "tensor(uint8)"),
    "T3": ("tensor(int8)", "tensor(uint8)"), "T4": ("tensor(int32)",)},
   {**_CONV_ATTRS, "channels_last": (INT, 0)})  # fmt: skip
_Q_UNARY = "X:T x_scale:tensor(float) x_zero_point?:T y_scale:tensor(float) y_zero_point?:T"
op("QLinearAveragePool", _Q_UNARY, "Y:T", {"T": INT8_TYPES},
   {"auto_pad": (STRING, "NOTSET"), "ceil_mode": (INT, 0), "channels_last": (INT, 0), "count_include_pad": (INT, 0),
    "kernel_shape": (INTS, REQUIRED), "pads": (INTS, None), "strides": (INTS, None)})  # fmt: skip
op("QLinearGlobalAveragePool",
   "X:T x_scale:tensor(float) x_zero_point:T y_scale:tensor(float) y_zero_point:T", "Y:T",
   {"T": INT8_TYPES}, {"channels_last": (INT, 0)})  # fmt: skip


def _nchw(s: Shape, channels_last: bool) -> Shape:
    return (s[0], s[-1]) + s[1:-1] if channels_last else s


def _back(s: Shape, channels_last: bool) -> Shape:
    return (s[0],) + s[2:] + (s[1],) if channels_last else s


def _windows(ctx: RuleContext, x: Shape, kernel: list[Dim], dilated: bool) -> Shape:
    """Spatial output extents of a sliding window over x's spatial axes (NCHW order)."""
    n = len(x) - 2
    strides = list(ctx.attr("strides") or [1] * n)
    dilations = list(ctx.attr("dilations") or [1] * n) if dilated else [1] * n
    pads = list(ctx.attr("pads") or [0] * (2 * n))
    if len(kernel) != n or len(strides) != n or len(dilations) != n or len(pads) != 2 * n:
        raise RuleError("bad-attribute", "kernel_shape, strides, dilations or pads do not match the spatial rank")
    if any(s <= 0 for s in strides) or any(d <= 0 for d in dilations):
        raise RuleError("bad-attribute", "strides and dilations must be positive")
    auto_pad = ctx.attr("auto_pad", "NOTSET") or "NOTSET"
    # Pooling only; onnxruntime rounds up for exactly 1 (2 and -1 floor).
    ceil_mode = flag(ctx, "ceil_mode", 0, ONE) if not dilated else False
    out = []
    for i in range(n):
        window = (kernel[i], strides[i], dilations[i], pads[i], pads[i + n])
        e = sliding_extent(ctx, i, x[i + 2], *window, auto_pad, ceil_mode, conv=dilated)
        if e is None:
            ctx.because("ceil_mode on a symbolic extent: whether the last window starts in the padding depends on it")
        out.append(e)
    return tuple(out)


def conv_shape(ctx: RuleContext, x_index: int, w_index: int, channels_last: bool, w_last: bool = False) -> list:
    """Conv's output with data at ``x_index`` and weights (M, C / group, k...) at ``w_index``.

    ``channels_last``: data and output are (N, spatial..., C); ``w_last``: so are the weights.
    """
    x, w = ctx.shape(x_index), ctx.shape(w_index)
    if w is not None and w_last and w:  # (a scalar is refused below, for its rank)
        w = _nchw(w, True)
    if x is None and w is None:
        return [None]
    rank = len(x) if x is not None else len(w)  # type: ignore[arg-type]
    if rank < 3:
        raise RuleError("shape-mismatch", f"input must have rank >= 3, has {rank}")
    if w is not None and len(w) != rank:
        raise RuleError("shape-mismatch", f"weights of rank {len(w)} for input of rank {rank}")
    m = None if w is None else w[0]
    if x is None:
        return [_back((None, m) + (None,) * (rank - 2), channels_last)]
    x = _nchw(x, channels_last)
    if w is not None:
        same_dim(ctx, x[1], D.mul(w[1], ctx.attr("group", 1)), "input channels and weight channels * group")
    ks = ctx.attr("kernel_shape")
    kernel = list(ks) if ks else (list(w[2:]) if w is not None else None)
    if kernel is None:
        ctx.because("the kernel shape is neither an attribute nor known from the weights", w_index)
        return [_back((x[0], m) + (None,) * (rank - 2), channels_last)]
    return [_back((x[0], m) + _windows(ctx, x, kernel, True), channels_last)]


@rule("FusedConv", domain=MS)
def fused_conv(ctx: RuleContext) -> list:
    return conv_shape(ctx, 0, 1, False)


@rule("NhwcConv", domain=MS)
def nhwc_conv(ctx: RuleContext) -> list:
    """NHWC data, weights and output: the optimizer's FusionNhwcConv transposes Conv's weights
    (M, C, kH, kW) to (M, kH, kW, C) (the schema's prose, copied from Conv, says otherwise).
    There is no CPU kernel to check against.
    """
    return conv_shape(ctx, 0, 1, True, w_last=True)


@rule("QLinearConv", domain=MS)
def qlinear_conv(ctx: RuleContext) -> list:
    """With channels_last the data and output are NHWC; the weights stay (M, C, kH, kW) (checked)."""
    return conv_shape(ctx, 0, 3, bool(ctx.attr("channels_last", 0)))


@rule("QLinearAveragePool", domain=MS)
def qlinear_average_pool(ctx: RuleContext) -> list:
    x = ctx.shape(0)
    if x is None:
        return [None]
    if len(x) < 3:
        raise RuleError("shape-mismatch", f"input must have rank >= 3, has {len(x)}")
    last = bool(ctx.attr("channels_last", 0))
    nchw = _nchw(x, last)
    kernel = list(ctx.require("kernel_shape"))
    return [_back(nchw[:2] + _windows(ctx, nchw, kernel, False), last)]


@rule("QLinearGlobalAveragePool", domain=MS)
def qlinear_global_average_pool(ctx: RuleContext) -> list:
    """N and C keep their extents, every spatial axis becomes 1 (channels last or first)."""
    x = ctx.shape(0)
    if x is None:
        return [None]
    if len(x) < 3:
        raise RuleError("shape-mismatch", f"input must have rank >= 3, has {len(x)}")
    last = bool(ctx.attr("channels_last", 0))
    nchw = _nchw(x, last)
    return [_back(nchw[:2] + (1,) * (len(x) - 2), last)]


example("FusedConv", ["float[N,3,H,W]", "float[8,3,3,3]", "float[8]"],
        ["float[N,8,floor((H - 1)/2) + 1,floor((W - 1)/2) + 1]"], domain=MS,
        attrs={"strides": [2, 2], "pads": [1, 1, 1, 1], "activation": "Relu"})  # fmt: skip
example("FusedConv", ["float[N,3,H,W]", "float[8,3,7,7]", "", "float[N,8,H,W]"], ["float[N,8,H,W]"], domain=MS,
        attrs={"auto_pad": "SAME_UPPER", "activation": "Relu"})  # fmt: skip
example("FusedConv", ["float[N,3,H,W]", "float[8,4,3,3]"], ["float[N,8,H - 2,W - 2]"], domain=MS,
        error="shape-mismatch")  # fmt: skip
example("NhwcConv", ["float16[N,H,W,3]", "float16[8,3,5,3]"], ["float16[N,H - 2,W - 4,8]"], domain=MS)
example("NhwcConv", ["float[N,H,W,4]", "float[8,3,3,2]", "float[8]"], ["float[N,H,W,8]"], domain=MS,
        attrs={"group": 2, "pads": [1, 1, 1, 1]})  # fmt: skip
example("NhwcConv", ["float[N,H,W,4]", "float[8,4,3,3]"], ["float[N,?,?,8]"], domain=MS, error="shape-mismatch")
_QC = ["float[]", "uint8[]"]
example("QLinearConv", ["uint8[N,3,H,W]", *_QC, "int8[8,3,3,3]", "float[]", "int8[]", *_QC, "int32[8]"],
        ["uint8[N,8,H - 2,W - 2]"], domain=MS)  # fmt: skip
example("QLinearConv", ["uint8[N,H,W,3]", *_QC, "int8[8,3,3,5]", "float[8]", "int8[8]", *_QC],
        ["uint8[N,H,W - 2,8]"], domain=MS, attrs={"channels_last": 1, "pads": [1, 1, 1, 1]})  # fmt: skip
example("QLinearAveragePool", ["uint8[N,C,H,W]", *_QC, *_QC],
        ["uint8[N,C,floor((H - 1)/2) + 1,floor((W - 1)/2) + 1]"], domain=MS,
        attrs={"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]})  # fmt: skip
example("QLinearAveragePool", ["int8[N,H,W,C]", "float[]", "int8[]", "float[]", "int8[]"],
        ["int8[N,H - 1,W - 1,C]"], domain=MS, attrs={"kernel_shape": [2, 2], "channels_last": 1})  # fmt: skip
example("QLinearAveragePool", ["uint8[N,C,H,W]", *_QC, *_QC], ["uint8[*]"], domain=MS, error="bad-attribute")
example("QLinearGlobalAveragePool", ["uint8[N,C,H,W]", *_QC, *_QC], ["uint8[N,C,1,1]"], domain=MS)
example("QLinearGlobalAveragePool", ["uint8[N,H,W,C]", *_QC, *_QC], ["uint8[N,1,1,C]"], domain=MS,
        attrs={"channels_last": 1})  # fmt: skip
example("QLinearGlobalAveragePool", ["uint8[N,C]", *_QC, *_QC], ["uint8[*]"], domain=MS, error="shape-mismatch")
