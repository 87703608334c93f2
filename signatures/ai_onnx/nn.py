"""Convolution, pooling, softmax and dropout.

Output extents follow the operator definitions exactly, symbolic heights included:
``floor((h + pads - dilation*(k-1) - 1) / stride) + 1``; the window attributes and extents of
Conv and the pools are read by ``signatures.kit.windows``, as those of every other convolution and
pooling are.
"""

from __future__ import annotations

from infer.contract.context import RuleContext, RuleError
from infer.core import dims as D
from infer.core.dims import Dim
from signatures.kit.helpers import STRICT, flag, norm_axis, require_rank
from signatures.kit.registry import example, rule
from signatures.kit.windows import conv_output, pool_output, transpose_window


@rule("Conv")
def conv(ctx: RuleContext) -> list:
    """(N, C, spatial...) and weights (M, C / group, kernel...): (N, M, windows...)."""
    return [conv_output(ctx, 0, 1, bias_index=2)]


@rule("ConvTranspose")
def conv_transpose(ctx: RuleContext) -> list:
    x, w = ctx.shape(0), ctx.shape(1)
    if x is None:
        return [None]
    t = transpose_window(ctx, x, w, bias_index=2)
    n, channels, window, out_pad = t.n, t.channels, t.window, t.output_padding
    k, strides, dilations, pads = window.kernel, window.strides, window.dilations, window.pads
    out_shape = ctx.attr("output_shape")
    if out_shape is not None:
        out_shape = list(out_shape)[-n:]
        if len(out_shape) != n or any(d <= 0 for d in out_shape):
            raise RuleError("bad-attribute", f"output_shape {list(ctx.attr('output_shape'))} does not fit")
        return [(x[0], channels) + tuple(out_shape)]
    auto_pad = window.auto_pad
    if k is None:
        ctx.because("the kernel shape is neither an attribute nor known from the weights", 1)
        return [(x[0], channels) + (None,) * n]
    spatial = []
    for i in range(n):
        eff = D.add(D.mul(dilations[i], D.sub(k[i], 1)), 1)
        full = D.add(D.add(D.mul(strides[i], D.sub(x[i + 2], 1)), out_pad[i]), eff)
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            # The definition says x * stride; runtimes reach it by padding, which cannot be
            # negative, so a kernel narrower than the stride gives the unpadded extent.
            spatial.append(D.dmin(D.mul(x[i + 2], strides[i]), full))
            continue
        total = pads[i] + pads[i + n] if auto_pad == "NOTSET" else 0
        spatial.append(_transposed_extent(ctx, i, x[i + 2], D.sub(full, total), strides[i], eff, out_pad[i], total))
    return [(x[0], channels) + tuple(spatial)]


def _transposed_extent(
    ctx: RuleContext, axis: int, x: Dim, out: Dim, stride: int, eff: Dim, out_pad: int, pads: int
) -> Dim:
    """ConvTranspose's extent ``out`` along one axis, which onnxruntime refuses unless positive.

    Pads wider than the full output leave none: a known extent there is an error; a symbolic
    ``x`` is recorded as at least the least extent that leaves one element.
    """
    if isinstance(out, int):
        if out <= 0:
            ctx.error(
                "shape-mismatch",
                f"{ctx.op_type} with inputs {ctx.input_types_str()}: pads of {pads} leave spatial axis {axis} "
                f"an extent of {out}; onnxruntime refuses an extent below 1",
            )
            return None
        return out
    if isinstance(eff, int):
        # stride * (x - 1) + out_pad + eff - pads >= 1
        least = 1 - (eff + out_pad - pads - 1) // stride
        ctx.require_at_least(x, least, f"onnxruntime refuses a {ctx.op_type} output extent below 1")
    return out


@rule(["MaxPool", "AveragePool", "LpPool"])
def pool(ctx: RuleContext) -> list:
    """MaxPool (its Indices from opset 8 too), AveragePool and LpPool: sliding windows."""
    if ctx.op_type == "MaxPool" and ctx.version >= 8:
        flag(ctx, "storage_order", 0, STRICT)  # onnxruntime refuses another value; no shape depends on it
    x = ctx.shape(0)
    if ctx.attr("kernel_shape") is None and ctx.op_type == "LpPool" and ctx.version < 2:
        # LpPool-1 leaves kernel_shape optional and says nothing of a default.
        ctx.because("LpPool-1 without kernel_shape: the window is not defined")
        return [None if x is None else x[:2] + (None,) * (len(x) - 2)]
    return [pool_output(ctx)] * ctx.n_outputs  # MaxPool's Indices has the output's shape


@rule(["GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"])
def global_pool(ctx: RuleContext) -> list:
    x = ctx.shape(0)
    if x is None:
        return [None]
    if len(x) < 2:
        raise RuleError("shape-mismatch", f"input must have rank >= 2, has {len(x)}")
    return [x[:2] + (1,) * (len(x) - 2)]


@rule(["Softmax", "LogSoftmax", "Hardmax"])
def softmax(ctx: RuleContext) -> list:
    """The shape is kept; ``axis`` must name an axis (a scalar has none)."""
    x = ctx.shape(0)
    if x is not None:
        norm_axis(ctx, ctx.attr("axis", -1 if ctx.version >= 13 else 1), len(x))
    return [x]


@rule("Dropout")
def dropout(ctx: RuleContext) -> list:
    """Y and the optional mask have the data's shape; ratio and training_mode are scalars."""
    require_rank(ctx, 1, 0, "ratio")
    require_rank(ctx, 2, 0, "training_mode")
    s = ctx.shape(0)
    return [s, s]


example("Conv", ["float[N,3,H,W]", "float[8,3,3,3]"], ["float[N,8,H,W]"], attrs={"pads": [1, 1, 1, 1]})
example(
    "Conv",
    ["float[N,3,H,W]", "float[8,3,3,3]"],
    ["float[N,8,floor((H - 3)/2) + 1,floor((W - 3)/2) + 1]"],
    attrs={"strides": [2, 2]},
)
example(
    "Conv",
    ["float[N,3,H,W]", "float[8,3,7,7]"],
    ["float[N,8,floor((H - 1)/2) + 1,floor((W - 1)/2) + 1]"],
    attrs={"strides": [2, 2], "auto_pad": "SAME_UPPER"},
)
example("Conv", ["float[N,4,L]", "float[8,2,3]"], ["float[N,8,L - 4]"], attrs={"group": 2, "dilations": [2]})
example(
    "Conv",
    ["float[N,4,L,65]", "float[8,4,3,4]"],
    ["float[N,8,floor((L - 1)/2) + 1,33]"],
    attrs={"auto_pad": "SAME_LOWER", "dilations": [2, 3], "strides": [2, 2]},
)
example(
    "MaxPool",
    ["float[N,C,65]"],
    ["float[N,C,?]"],
    attrs={"kernel_shape": [4], "auto_pad": "SAME_UPPER", "dilations": [2]},
    opset=12,
)
example("Conv", ["float[N,3,H,W]", "float[8,4,3,3]"], ["float[N,8,H - 2,W - 2]"], error="shape-mismatch")
example("Conv", ["float[N,2,3]", "float[4,2,5]"], ["float[N,4,?]"], error="shape-mismatch")
example("Conv", ["float[N,3,H,W]", "float[8,3,3,3]", "float[8]"], ["float[N,8,H - 2,W - 2]"])
example("Conv", ["float[N,3,H,W]", "float[8,3,3,3]", "float[9]"], ["float[N,8,H - 2,W - 2]"], error="shape-mismatch")
example("Conv", ["float[N,3,H,W]", "float[8,3,3,3]", "float[1,8]"], ["float[*]"], error="shape-mismatch")
example(
    "ConvTranspose",
    ["float[N,8,H,W]", "float[8,4,3,3]", "float[5]"],
    ["float[N,4,H + 2,W + 2]"],
    error="shape-mismatch",
)
example("MaxPool", ["float[N,2,8,3]"], ["float[N,2,6,?]"], attrs={"kernel_shape": [3, 5]}, error="shape-mismatch")
example(
    "Conv", ["float[1,1,5]", "float[1,1,2]"], ["float[*]"], attrs={"dilations": [(1 << 63) - 1]}, error="bad-attribute"
)
example(
    "ConvTranspose",
    ["float[N,32,H,W]", "float[32,64,3,3]"],
    ["float[N,192,H + 2,W + 2]"],
    attrs={"group": 3},
    error="shape-mismatch",
)
example(
    "Conv", ["float[N,3,H,W]", "float[4,3,3,3]"], ["float[*]"], attrs={"kernel_shape": [5, 5]}, error="shape-mismatch"
)
example(
    "Conv", ["float[N,6,H,W]", "float[5,2,3,3]"], ["float[N,5,H - 2,W - 2]"], attrs={"group": 3}, error="shape-mismatch"
)
example(
    "ConvTranspose",
    ["float[N,8,H,W]", "float[8,4,4,4]"],
    ["float[N,4,2*H,2*W]"],
    attrs={"strides": [2, 2], "pads": [1, 1, 1, 1]},
)
# H may be shorter than the window: onnxruntime's extent 1 + trunc((H - 3)/2), 1 at H = 2 (issue 24)
example(
    "MaxPool",
    ["float[N,C,H,W]"],
    [
        "float[N,C,max(floor((H + 1)/2) - 2, min(floor(H/2) - 1, 0)) + 1,"
        "max(floor((W + 1)/2) - 2, min(floor(W/2) - 1, 0)) + 1]"
    ],
    attrs={"kernel_shape": [3, 3], "strides": [2, 2]},
)
example(
    "MaxPool",
    ["float[N,C,32,32]"],
    ["float[N,C,16,16]", "int64[N,C,16,16]"],
    attrs={"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
)
example(
    "MaxPool",
    ["float[1,1,5,5]"],
    ["float[1,1,3,3]"],
    attrs={"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1},
)
example(
    "AveragePool",
    ["float[N,C,H,W]"],
    ["float[N,C,min(floor((H + 2)/3), floor(H/3) + 1),min(floor((W + 2)/3), floor(W/3) + 1)]"],
    attrs={"kernel_shape": [2, 2], "strides": [3, 3], "ceil_mode": 1},
)
example(
    "AveragePool",
    ["float[N,C,L]"],
    ["float[N,C,floor((L - 1)/2) + 1]"],
    attrs={"kernel_shape": [3], "strides": [2], "pads": [1, 1], "count_include_pad": 1},
    opset=7,
)
example("AveragePool", ["float[N,C,L]"], ["float[N,C,L - 4]"], attrs={"kernel_shape": [3], "dilations": [2]}, opset=19)
example("MaxPool", ["float[N,C,H,W]"], ["float[N,C,H - 1,W - 1]"], attrs={"kernel_shape": [2, 2]}, opset=1)
example(
    "MaxPool",
    ["float[N,C,H,W]"],
    ["float[N,C,H - 1,W - 1]", "int64[N,C,H - 1,W - 1]"],
    attrs={"kernel_shape": [2, 2], "storage_order": 1},
    opset=8,
)
example("MaxPool", ["float[N,C,L]"], ["float[N,C,L - 2]"], attrs={"kernel_shape": [2], "dilations": [2]}, opset=10)
example(
    "MaxPool",
    ["float[N,C,L]"],
    ["float[N,C,floor((L - 1)/2) + 1]"],
    attrs={"kernel_shape": [3], "strides": [2], "auto_pad": "SAME_UPPER"},
    opset=12,
)
example(
    "MaxPool",
    ["float[N,C,3]"],
    ["float[N,C,?]"],
    attrs={"kernel_shape": [2], "strides": [2], "auto_pad": "VALID", "ceil_mode": 1},
    opset=12,
)
example(
    "MaxPool",
    ["float[N,C,L]"],
    ["float[N,C,L - 1]"],
    attrs={"kernel_shape": [2], "auto_pad": "VALID", "ceil_mode": 1},
    opset=12,
)
example(
    "AveragePool",
    ["float[N,C,L]"],
    ["float[N,C,floor((L + 2)/3)]"],
    attrs={"kernel_shape": [2], "strides": [3], "auto_pad": "SAME_LOWER", "ceil_mode": 1},
    opset=19,
)
example("LpPool", ["float[N,C,H,W]"], ["float[N,C,?,?]"], opset=1)
example("LpPool", ["float[N,C,H,W]"], ["float[N,C,H - 2,W - 2]"], attrs={"kernel_shape": [3, 3], "p": 1}, opset=2)
example(
    "LpPool",
    ["float[N,C,L]"],
    ["float[N,C,min(floor((L + 1)/2) + 1, floor(L/2) + 1)]"],
    attrs={"kernel_shape": [2], "strides": [2], "ceil_mode": 1, "pads": [1, 1]},
    opset=18,
)
example("GlobalLpPool", ["float[N,C,H,W]"], ["float[N,C,1,1]"], attrs={"p": 3}, opset=2)
example("GlobalMaxPool", ["float[N,C,L]"], ["float[N,C,1]"], opset=22)
example("Conv", ["float[N,3,H,W]", "float[8,3,3,3]", "float[8]"], ["float[N,8,H - 2,W - 2]"], opset=1)
example("Conv", ["float[N,3,L]", "float[8,3,K]"], ["float[N,8,L - K + 1]"], opset=11)
example(
    "ConvTranspose", ["float[N,8,L]", "float[8,4,3]"], ["float[N,4,10]"], attrs={"output_shape": [10], "strides": [2]}
)
example("ConvTranspose", ["float[N,8,L]", "float[8,2,3]"], ["float[N,4,L + 2]"], attrs={"group": 2}, opset=22)
example(
    "ConvTranspose",
    ["float[N,8,L]", "float[8,2,3]"],
    ["float[*]"],
    attrs={"auto_pad": "SAME_UPPER", "pads": [0, 0]},
    error="bad-attribute",
)
example(
    "ConvTranspose",
    ["float[N,8,L]", "float[8,2,3]"],
    ["float[N,2,L + 1]"],
    attrs={"auto_pad": "NOTSET", "pads": [1, 0]},
)
example("Hardmax", ["float[N,10]"], ["float[N,10]"], attrs={"axis": 1}, opset=1)
example("Softmax", ["float[N,10]"], ["float[N,10]"], opset=1)
example("Dropout", ["float[N,10]"], ["float[N,10]", "float[N,10]"], attrs={"is_test": 0}, opset=1)
example("Dropout", ["float[N,10]", "float[]={0.1}", "bool[]={true}"], ["float[N,10]", "bool[N,10]"], opset=12)
example("Dropout", ["float[N,10]"], ["float[N,10]", "bool[N,10]"], opset=10)
example("Dropout", ["float[N,10]", "float[1]"], ["float[*]", "bool[*]"], opset=12, error="shape-mismatch")
example(
    "AveragePool",
    ["float[N,C,H,W]"],
    ["float[N,C,floor((H + 1)/2),floor((W + 1)/2)]"],
    attrs={"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1},
)
example(
    "AveragePool",
    ["float[N,C,H,W]"],
    ["float[N,C,floor(H/2),floor(W/2)]"],
    attrs={"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1},
)
example("GlobalAveragePool", ["float[N,C,H,W]"], ["float[N,C,1,1]"])
example("Softmax", ["float[B,H,S,S]"], ["float[B,H,S,S]"])
example("Softmax", ["float[]"], ["float[*]"], error="bad-attribute")
example("LogSoftmax", ["float[N,10]"], ["float[N,10]"], attrs={"axis": 1})
example("Dropout", ["float[B,S,64]"], ["float[B,S,64]", "bool[B,S,64]"], opset=13)
# ceil_mode 2 floors in onnxruntime; a window longer than its input: onnxruntime truncates the
# quotient (1 window here) or refuses (Conv, ConvTranspose, or two strides short).
example(
    "MaxPool", ["float[N,C,5]"], ["float[N,C,2]"], attrs={"kernel_shape": [2], "strides": [2], "ceil_mode": 2}, opset=12
)
example("MaxPool", ["float[N,C,1]"], ["float[N,C,1]"], attrs={"kernel_shape": [2], "strides": [2]}, opset=12)
example(
    "AveragePool",
    ["float[N,C,1]"],
    ["float[N,C,?]"],
    attrs={"kernel_shape": [5], "strides": [2]},
    error="shape-mismatch",
)
example(
    "MaxPool",
    ["float[N,C,L]"],
    ["float[*]"],
    attrs={"kernel_shape": [2], "storage_order": 2},
    opset=12,
    error="bad-attribute",
)
example("Conv", ["float[N,1,2]", "float[1,1,3]"], ["float[N,1,?]"], error="shape-mismatch")
example(
    "ConvTranspose", ["float[N,1,1]", "float[1,1,1]"], ["float[N,1,?]"], attrs={"pads": [1, 1]}, error="shape-mismatch"
)
example(
    "ConvTranspose",
    ["float[N,1,L]", "float[1,1,2]"],
    ["float[*]"],
    attrs={"output_padding": [1]},
    error="bad-attribute",
)
