"""Convolutions and pooling: FusedConv, NhwcConv, NhwcFusedConv, QLinearConv, the QLinear pools, NhwcMaxPool.

onnxruntime's graph optimizer fuses Conv with its activation into FusedConv (NhwcFusedConv for
channels-last layouts); its QOperator quantizer emits the QLinear* pooling operators (and
QLinearConv, with ``channels_last`` for NHWC layouts), its NHWC transformer NhwcMaxPool. Windows
are read and checked as Conv's and MaxPool's are (``signatures.kit.windows``); an NHWC operator is the
NCHW one with the channel axis moved last.
"""

from __future__ import annotations

from infer.contract.context import RuleContext, RuleError
from infer.core.dims import Dim
from signatures.com_microsoft import FLOAT_DOUBLE, FLOATS, INT, INT8_TYPES, INTS, MS, REQUIRED, STRING, op
from signatures.kit.helpers import same_dim
from signatures.kit.registry import example, rule
from signatures.kit.windows import back, conv_output, nchw, pool_output

Shape = tuple[Dim, ...]

_CONV_ATTRS = {"auto_pad": (STRING, "NOTSET"), "kernel_shape": (INTS, None), "dilations": (INTS, None),
               "strides": (INTS, None), "pads": (INTS, None), "group": (INT, 1)}  # fmt: skip

op("FusedConv", "X:T W:T B?:T Z?:T", "Y:T", {"T": FLOAT_DOUBLE},
   {**_CONV_ATTRS, "activation": (STRING, None), "activation_params": (FLOATS, None)})  # fmt: skip
op("NhwcConv", "X:T W:T B?:T", "Y:T", {"T": FLOAT_DOUBLE}, _CONV_ATTRS)
op("NhwcFusedConv", "X:T W:T B?:T Z?:T", "Y:T", {"T": ("tensor(float16)", "tensor(float)")},
   {**_CONV_ATTRS, "activation": (STRING, None), "activation_params": (FLOATS, None)})  # fmt: skip
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
op("NhwcMaxPool", "x:T", "y:T", {"T": ("tensor(int8)", "tensor(uint8)")},
   {"auto_pad": (STRING, "NOTSET"), "ceil_mode": (INT, 0), "dilations": (INTS, None),
    "kernel_shape": (INTS, REQUIRED), "pads": (INTS, None), "strides": (INTS, None)})  # fmt: skip


def _with_addend(ctx: RuleContext, y: Shape | None, z_index: int) -> Shape | None:
    """A fused Conv's optional Z is added to its output: onnxruntime needs the output's very shape
    (it refuses a Z that would broadcast)."""
    z = ctx.shape(z_index) if ctx.has(z_index) else None
    if z is None or y is None:
        return y if z is None else z
    if len(z) != len(y):
        raise RuleError("shape-mismatch", f"Z has rank {len(z)}, the output rank {len(y)}")
    return tuple(same_dim(ctx, a, b, f"output and Z extents on axis {i}") for i, (a, b) in enumerate(zip(y, z)))


@rule("FusedConv", domain=MS)
def fused_conv(ctx: RuleContext) -> list:
    """Conv, then the sum with Z (when given), then the activation."""
    return [_with_addend(ctx, conv_output(ctx, 0, 1, bias_index=2), 3)]


@rule("NhwcConv", domain=MS)
def nhwc_conv(ctx: RuleContext) -> list:
    """NHWC data, weights and output: the optimizer's FusionNhwcConv transposes Conv's weights
    (M, C, kH, kW) to (M, kH, kW, C) (the schema's prose, copied from Conv, says otherwise).
    There is no CPU kernel to check against.
    """
    return [conv_output(ctx, 0, 1, bias_index=2, channels_last=True, w_last=True)]


@rule("NhwcFusedConv", domain=MS)
def nhwc_fused_conv(ctx: RuleContext) -> list:
    """FusedConv on NHWC data and output, the weights in Conv's (M, C / group, kH, kW) layout (as the
    schema says); Z has the output's layout. There is no CPU kernel to check against."""
    return [_with_addend(ctx, conv_output(ctx, 0, 1, bias_index=2, channels_last=True), 3)]


@rule("QLinearConv", domain=MS)
def qlinear_conv(ctx: RuleContext) -> list:
    """With channels_last the data and output are NHWC; the weights stay (M, C, kH, kW) (checked)."""
    return [conv_output(ctx, 0, 3, bias_index=8, channels_last=bool(ctx.attr("channels_last", 0)))]


@rule("QLinearAveragePool", domain=MS)
def qlinear_average_pool(ctx: RuleContext) -> list:
    return [pool_output(ctx, channels_last=bool(ctx.attr("channels_last", 0)), onnx_op=False)]


@rule("NhwcMaxPool", domain=MS)
def nhwc_max_pool(ctx: RuleContext) -> list:
    """MaxPool on (N, spatial..., C) data."""
    return [pool_output(ctx, channels_last=True, onnx_op=False)]


@rule("QLinearGlobalAveragePool", domain=MS)
def qlinear_global_average_pool(ctx: RuleContext) -> list:
    """N and C keep their extents, every spatial axis becomes 1 (channels last or first)."""
    x = ctx.shape(0)
    if x is None:
        return [None]
    if len(x) < 3:
        raise RuleError("shape-mismatch", f"input must have rank >= 3, has {len(x)}")
    last = bool(ctx.attr("channels_last", 0))
    return [back(nchw(x, last)[:2] + (1,) * (len(x) - 2), last)]


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
example("NhwcConv", ["float[N,H,W,4]", "float[8,4,3,3]"], ["float[N,H - 3,W - 2,8]"], domain=MS, error="shape-mismatch")
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
example("NhwcFusedConv", ["float16[N,H,W,3]", "float16[8,3,3,3]", "float16[8]", "float16[N,H - 2,W - 2,8]"],
        ["float16[N,H - 2,W - 2,8]"], domain=MS, attrs={"activation": "Relu"})  # fmt: skip
example("NhwcFusedConv", ["float[N,H,W,3]", "float[8,3,3,3]", "", "float[N,H,W,8]"], ["float[N,H - 2,W - 2,8]"],
        domain=MS, error="shape-mismatch")  # fmt: skip
example("NhwcMaxPool", ["uint8[N,H,W,C]"], ["uint8[N,floor((H - 1)/2) + 1,floor((W - 1)/2) + 1,C]"], domain=MS,
        attrs={"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]})  # fmt: skip
example("NhwcMaxPool", ["int8[N,H,W,C]"], ["int8[*]"], domain=MS, attrs={"kernel_shape": [3, 3], "pads": [3, 0, 0, 0]},
        error="bad-attribute")  # fmt: skip
example("QLinearGlobalAveragePool", ["uint8[N,C,H,W]", *_QC, *_QC], ["uint8[N,C,1,1]"], domain=MS)
example("QLinearGlobalAveragePool", ["uint8[N,H,W,C]", *_QC, *_QC], ["uint8[N,1,1,C]"], domain=MS,
        attrs={"channels_last": 1})  # fmt: skip
example("QLinearGlobalAveragePool", ["uint8[N,C]", *_QC, *_QC], ["uint8[*]"], domain=MS, error="shape-mismatch")
