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
from signatures.com_microsoft import FLOAT_DOUBLE, FLOATS, INT, INT8_TYPES, INTS, MS, REQUIRED, STRING
from signatures.kit.helpers import same_dim
from signatures.kit.operator import case, operator
from signatures.kit.windows import back, conv_output, nchw, pool_output

Shape = tuple[Dim, ...]

_CONV_ATTRS = {"auto_pad": (STRING, "NOTSET"), "kernel_shape": (INTS, None), "dilations": (INTS, None),
               "strides": (INTS, None), "pads": (INTS, None), "group": (INT, 1)}  # fmt: skip

_Q_UNARY = "X:T x_scale:tensor(float) x_zero_point?:T y_scale:tensor(float) y_zero_point?:T"


def _with_addend(ctx: RuleContext, y: Shape | None, z_index: int) -> Shape | None:
    """A fused Conv's optional Z is added to its output: onnxruntime needs the output's very shape
    (it refuses a Z that would broadcast)."""
    z = ctx.shape(z_index) if ctx.has(z_index) else None
    if z is None or y is None:
        return y if z is None else z
    if len(z) != len(y):
        raise RuleError("shape-mismatch", f"Z has rank {len(z)}, the output rank {len(y)}")
    return tuple(same_dim(ctx, a, b, f"output and Z extents on axis {i}") for i, (a, b) in enumerate(zip(y, z)))


@operator(
    "FusedConv",
    "X:T W:T B?:T Z?:T",
    "Y:T",
    domain=MS,
    types={"T": FLOAT_DOUBLE},
    attrs={**_CONV_ATTRS, "activation": (STRING, None), "activation_params": (FLOATS, None)},
    examples=[
        case(
            ["float[N,3,H,W]", "float[8,3,3,3]", "float[8]"],
            ["float[N,8,floor((H - 1)/2) + 1,floor((W - 1)/2) + 1]"],
            strides=[2, 2],
            pads=[1, 1, 1, 1],
            activation="Relu",
        ),
        case(
            ["float[N,3,H,W]", "float[8,3,7,7]", "", "float[N,8,H,W]"],
            ["float[N,8,H,W]"],
            auto_pad="SAME_UPPER",
            activation="Relu",
        ),
        case(["float[N,3,H,W]", "float[8,4,3,3]"], ["float[N,8,H - 2,W - 2]"], error="shape-mismatch"),
    ],
)
def fused_conv(ctx: RuleContext) -> list:
    """Conv, then the sum with Z (when given), then the activation."""
    return [_with_addend(ctx, conv_output(ctx, 0, 1, bias_index=2), 3)]


@operator(
    "NhwcConv",
    "X:T W:T B?:T",
    "Y:T",
    domain=MS,
    types={"T": FLOAT_DOUBLE},
    attrs=_CONV_ATTRS,
    examples=[
        case(["float16[N,H,W,3]", "float16[8,3,5,3]"], ["float16[N,H - 2,W - 4,8]"]),
        case(["float[N,H,W,4]", "float[8,3,3,2]", "float[8]"], ["float[N,H,W,8]"], group=2, pads=[1, 1, 1, 1]),
        case(["float[N,H,W,4]", "float[8,4,3,3]"], ["float[N,H - 3,W - 2,8]"], error="shape-mismatch"),
    ],
)
def nhwc_conv(ctx: RuleContext) -> list:
    """NHWC data, weights and output: the optimizer's FusionNhwcConv transposes Conv's weights
    (M, C, kH, kW) to (M, kH, kW, C) (the schema's prose, copied from Conv, says otherwise).
    There is no CPU kernel to check against.
    """
    return [conv_output(ctx, 0, 1, bias_index=2, channels_last=True, w_last=True)]


@operator(
    "NhwcFusedConv",
    "X:T W:T B?:T Z?:T",
    "Y:T",
    domain=MS,
    types={"T": ("tensor(float16)", "tensor(float)")},
    attrs={**_CONV_ATTRS, "activation": (STRING, None), "activation_params": (FLOATS, None)},
    examples=[
        case(
            ["float16[N,H,W,3]", "float16[8,3,3,3]", "float16[8]", "float16[N,H - 2,W - 2,8]"],
            ["float16[N,H - 2,W - 2,8]"],
            activation="Relu",
        ),
        case(
            ["float[N,H,W,3]", "float[8,3,3,3]", "", "float[N,H,W,8]"],
            ["float[N,H - 2,W - 2,8]"],
            error="shape-mismatch",
        ),
    ],
)
def nhwc_fused_conv(ctx: RuleContext) -> list:
    """FusedConv on NHWC data and output, the weights in Conv's (M, C / group, kH, kW) layout (as the
    schema says); Z has the output's layout. There is no CPU kernel to check against."""
    return [_with_addend(ctx, conv_output(ctx, 0, 1, bias_index=2, channels_last=True), 3)]


_QC = ["float[]", "uint8[]"]


@operator(
    "QLinearConv",
    "x:T1 x_scale:tensor(float) x_zero_point:T1 w:T2 w_scale:tensor(float) w_zero_point:T2 "
    "y_scale:tensor(float) y_zero_point:T3 B?:T4",
    "y:T3",
    domain=MS,
    types={
        "T1": ("tensor(int8)", "tensor(uint8)"),
        "T2": ("tensor(int8)", "tensor(uint8)"),
        "T3": ("tensor(int8)", "tensor(uint8)"),
        "T4": ("tensor(int32)",),
    },
    attrs={**_CONV_ATTRS, "channels_last": (INT, 0)},
    examples=[
        case(
            ["uint8[N,3,H,W]", *_QC, "int8[8,3,3,3]", "float[]", "int8[]", *_QC, "int32[8]"], ["uint8[N,8,H - 2,W - 2]"]
        ),
        case(
            ["uint8[N,H,W,3]", *_QC, "int8[8,3,3,5]", "float[8]", "int8[8]", *_QC],
            ["uint8[N,H,W - 2,8]"],
            channels_last=1,
            pads=[1, 1, 1, 1],
        ),
    ],
)
def qlinear_conv(ctx: RuleContext) -> list:
    """With channels_last the data and output are NHWC; the weights stay (M, C, kH, kW) (checked)."""
    return [conv_output(ctx, 0, 3, bias_index=8, channels_last=bool(ctx.attr("channels_last", 0)))]


@operator(
    "QLinearAveragePool",
    _Q_UNARY,
    "Y:T",
    domain=MS,
    types={"T": INT8_TYPES},
    attrs={
        "auto_pad": (STRING, "NOTSET"),
        "ceil_mode": (INT, 0),
        "channels_last": (INT, 0),
        "count_include_pad": (INT, 0),
        "kernel_shape": (INTS, REQUIRED),
        "pads": (INTS, None),
        "strides": (INTS, None),
    },
    examples=[
        case(
            ["uint8[N,C,H,W]", *_QC, *_QC],
            ["uint8[N,C,floor((H - 1)/2) + 1,floor((W - 1)/2) + 1]"],
            kernel_shape=[3, 3],
            strides=[2, 2],
            pads=[1, 1, 1, 1],
        ),
        case(
            ["int8[N,H,W,C]", "float[]", "int8[]", "float[]", "int8[]"],
            ["int8[N,H - 1,W - 1,C]"],
            kernel_shape=[2, 2],
            channels_last=1,
        ),
        case(["uint8[N,C,H,W]", *_QC, *_QC], ["uint8[*]"], error="bad-attribute"),
    ],
)
def qlinear_average_pool(ctx: RuleContext) -> list:
    return [pool_output(ctx, channels_last=bool(ctx.attr("channels_last", 0)), onnx_op=False)]


@operator(
    "NhwcMaxPool",
    "x:T",
    "y:T",
    domain=MS,
    types={"T": ("tensor(int8)", "tensor(uint8)")},
    attrs={
        "auto_pad": (STRING, "NOTSET"),
        "ceil_mode": (INT, 0),
        "dilations": (INTS, None),
        "kernel_shape": (INTS, REQUIRED),
        "pads": (INTS, None),
        "strides": (INTS, None),
    },
    examples=[
        case(
            ["uint8[N,H,W,C]"],
            ["uint8[N,floor((H - 1)/2) + 1,floor((W - 1)/2) + 1,C]"],
            kernel_shape=[3, 3],
            strides=[2, 2],
            pads=[1, 1, 1, 1],
        ),
        case(["int8[N,H,W,C]"], ["int8[*]"], kernel_shape=[3, 3], pads=[3, 0, 0, 0], error="bad-attribute"),
    ],
)
def nhwc_max_pool(ctx: RuleContext) -> list:
    """MaxPool on (N, spatial..., C) data."""
    return [pool_output(ctx, channels_last=True, onnx_op=False)]


@operator(
    "QLinearGlobalAveragePool",
    "X:T x_scale:tensor(float) x_zero_point:T y_scale:tensor(float) y_zero_point:T",
    "Y:T",
    domain=MS,
    types={"T": INT8_TYPES},
    attrs={"channels_last": (INT, 0)},
    examples=[
        case(["uint8[N,C,H,W]", *_QC, *_QC], ["uint8[N,C,1,1]"]),
        case(["uint8[N,H,W,C]", *_QC, *_QC], ["uint8[N,1,1,C]"], channels_last=1),
        case(["uint8[N,C]", *_QC, *_QC], ["uint8[*]"], error="shape-mismatch"),
    ],
)
def qlinear_global_average_pool(ctx: RuleContext) -> list:
    """N and C keep their extents, every spatial axis becomes 1 (channels last or first)."""
    x = ctx.shape(0)
    if x is None:
        return [None]
    if len(x) < 3:
        raise RuleError("shape-mismatch", f"input must have rank >= 3, has {len(x)}")
    last = bool(ctx.attr("channels_last", 0))
    return [back(nchw(x, last)[:2] + (1,) * (len(x) - 2), last)]
