"""ConvTransposeWithDynamicPads and MaxpoolWithMask: a transposed convolution whose pads are an
input, and a max pooling that skips masked positions.

The window arithmetic is ``signatures.kit.windows``' (the attributes read and refused as onnxruntime
does); ConvTransposeWithDynamicPads reads its ``[begins..., ends...]`` pads from the Pads input's
contents. Both run on onnxruntime's CPU kernels (tests/test_contrib_a_runtime.py).
"""

from __future__ import annotations

from infer.contract.context import RuleContext, RuleError
from infer.core import dims as D
from infer.core.dims import Dim
from signatures.com_microsoft import FLOAT_DOUBLE, INT, INTS, MS, STRING
from signatures.kit.helpers import same_dim
from signatures.kit.operator import case, operator
from signatures.kit.windows import pool_output, transpose_window


@operator(
    "ConvTransposeWithDynamicPads",
    "X:T W:T Pads?:tensor(int64) B?:T",
    "Y:T",
    domain=MS,
    types={"T": FLOAT_DOUBLE},
    attrs={
        "group": (INT, 1),
        "auto_pad": (STRING, "NOTSET"),
        "strides": (INTS, None),
        "dilations": (INTS, None),
        "output_padding": (INTS, None),
        "kernel_shape": (INTS, None),
    },
    examples=[
        case(
            ["float[N,2,H,W]", "float[2,3,3,3]", "int64[4]={1,0,2,1}", "float[3]"],
            ["float[N,3,2*H - 2,2*W]"],
            strides=[2, 2],
        ),
        case(["float[N,2,H,W]", "float[2,3,3,3]", "int64[4]"], ["float[N,3,?,?]"]),
        case(
            ["float[N,2,H,W]", "float[2,3,3,3]", "int64[4]"],
            ["float[N,3,2*H,2*W]"],
            strides=[2, 2],
            auto_pad="SAME_UPPER",
        ),
        case(["float[N,2,H,W]", "float[2,3,3,3]", "int64[2]"], ["float[*]"], error="shape-mismatch"),
        case(["float[1,2,5,6]", "float[2,3,3,3]", "int64[4]={5,5,5,5}"], ["float[*]"], error="shape-mismatch"),
        case(["float[N,2,H,W]", "float[2,3,3,3]"], ["float[N,3,?,?]"], error="missing-input"),
    ],
)
def conv_transpose_with_dynamic_pads(ctx: RuleContext) -> list:
    """ConvTranspose's ``stride (x - 1) + output_padding + dilation (k - 1) + 1 - pads`` per
    spatial axis, the pads read from input 2: SAME auto_pad ignores them (``x * stride``), VALID
    does not (onnxruntime's kernel subtracts them, checked)."""
    if not ctx.has(2):
        ctx.error("missing-input", "ConvTransposeWithDynamicPads: onnxruntime's kernel needs the Pads input")
    x, w = ctx.shape(0), ctx.shape(1)
    if x is None:
        return [None]
    t = transpose_window(ctx, x, w, bias_index=3)
    n, channels, window, out_pad = t.n, t.channels, t.window, t.output_padding
    pads = _pads(ctx, n)
    if window.kernel is None:
        ctx.because("the kernel shape is neither an attribute nor known from the weights", 1)
        return [(x[0], channels) + (None,) * n]
    spatial: list[Dim] = []
    for i in range(n):
        eff = D.add(D.mul(window.dilations[i], D.sub(window.kernel[i], 1)), 1)
        full = D.add(D.add(D.mul(window.strides[i], D.sub(x[i + 2], 1)), out_pad[i]), eff)
        if window.auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            spatial.append(D.dmin(D.mul(x[i + 2], window.strides[i]), full))
        elif pads is None:
            spatial.append(None)
        else:
            spatial.append(_positive(ctx, i, D.sub(full, pads[i] + pads[i + n])))
    return [(x[0], channels) + tuple(spatial)]


def _pads(ctx: RuleContext, n: int) -> list[int] | None:
    s = ctx.shape(2) if ctx.has(2) else None
    if s is not None and (len(s) != 1 or (isinstance(s[0], int) and s[0] != 2 * n)):
        raise RuleError("shape-mismatch", f"Pads must be a vector of {2 * n} values (begins, ends), is {list(s)}")
    values = ctx.known_ints(2) if ctx.has(2) else None
    if values is None or any(v is None for v in values):
        ctx.contents_unknown(2, "the pads")
        return None
    return values


def _positive(ctx: RuleContext, axis: int, out: Dim) -> Dim:
    """The kernel refuses an extent below 1; a symbolic one is recorded as at least 1."""
    if isinstance(out, int):
        if out <= 0:
            raise RuleError("shape-mismatch", f"the pads leave spatial axis {axis} an extent of {out}")
        return out
    ctx.assume_range(out, 1, None, "onnxruntime refuses a transposed convolution extent below 1")
    return out


@operator(
    "MaxpoolWithMask",
    "X:T M:tensor(int32)",
    "Y:T",
    domain=MS,
    types={"T": ("tensor(float)",)},
    attrs={
        "strides": (INTS, None),
        "storage_order": (INT, 0),
        "pads": (INTS, None),
        "kernel_shape": (INTS, None),
        "auto_pad": (STRING, "NOTSET"),
    },
    examples=[
        case(["float[N,C,H,W]", "int32[N,C,H,W]"], ["float[N,C,H - 1,W - 1]"], kernel_shape=[2, 2]),
        case(
            ["float[N,C,H,W]", "int32[1,C,H,W]"],
            ["float[N,C,floor((H - 1)/2) + 1,floor((W - 1)/2) + 1]"],
            kernel_shape=[3, 3],
            strides=[2, 2],
            pads=[1, 1, 1, 1],
        ),
        case(["float[N,C,H,W]", "int32[N,C,H,W]"], ["float[*]"], error="bad-attribute"),
        case(["float[2,3,6,7]", "int32[2,3,6,8]"], ["float[2,3,5,6]"], kernel_shape=[2, 2], error="shape-mismatch"),
    ],
)
def maxpool_with_mask(ctx: RuleContext) -> list:
    """MaxPool's output; the mask M has the input's spatial extents (its N and C may be 1)."""
    out = pool_output(ctx, onnx_op=False)
    x, m = ctx.shape(0), ctx.shape(1)
    if x is not None and m is not None:
        if len(m) != len(x):
            raise RuleError("shape-mismatch", f"the mask has rank {len(m)}, X rank {len(x)}")
        for i in range(2, len(x)):
            same_dim(ctx, x[i], m[i], f"spatial extent {i} of X and the mask")
    return [out]
