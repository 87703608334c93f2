"""Fused activations and other shape-keeping contrib operators.

FastGelu, BiasGelu, Gelu and QuickGelu are what the optimizer leaves of GELU and SiLU patterns;
a bias input is a 1-D tensor of the last axis, so the output has the data's shape (computed by
broadcasting, which also checks the bias against it).
"""

from __future__ import annotations

from infer.contract.context import RuleContext, RuleError
from infer.core import dims as D
from signatures.com_microsoft import FLOAT, FLOAT_DOUBLE, FLOAT_DOUBLE_BF16, INT, MS, REQUIRED
from signatures.kit.helpers import broadcast
from signatures.kit.operator import case, operator

_FLOAT_DOUBLE_BOTH = ("tensor(float)", "tensor(double)", "tensor(float16)", "tensor(bfloat16)")

# The bias (a mask) broadcasts into the data; dropout's mask has the data's shape.
operator(
    "BiasSoftmax",
    "data:T bias:T",
    "output:T",
    domain=MS,
    types={"T": FLOAT_DOUBLE},
    attrs={"axis": (INT, 1), "is_inner_broadcast": (INT, REQUIRED)},
    rule="X[*s] -> Y[*s]",
    examples=[case(["float16[B,N,S,T]", "float16[B,1,1,T]"], ["float16[B,N,S,T]"], axis=3, is_inner_broadcast=0)],
)
operator(
    "BiasDropout",
    "data:T bias:T residual?:T ratio?:T1 training_mode?:T2",
    "output:T mask?:T2",
    domain=MS,
    types={"T": FLOAT_DOUBLE_BF16, "T1": FLOAT_DOUBLE_BF16, "T2": ("tensor(bool)",)},
    attrs={"seed": (INT, None)},
    rule="X[*s] -> Y[*s], Mask[*s]",
    examples=[case(["float[B,S,64]", "float[64]", "float[B,S,64]"], ["float[B,S,64]", "bool[B,S,64]"])],
)


@operator(
    "FastGelu",
    "X:T bias?:T",
    "Y:T",
    domain=MS,
    types={"T": _FLOAT_DOUBLE_BOTH},
    examples=[
        case(["float[B,S,128]", "float[128]"], ["float[B,S,128]"]),
        case(["float16[B,S,H]"], ["float16[B,S,H]"]),
        case(["float[B,S,H]", "float[128]"], ["float[B,S,128]"]),
        case(["float[B,S,64]", "float[128]"], ["float[B,S,?]"], error="shape-mismatch"),
    ],
)
@operator(
    "BiasGelu",
    "A:T B:T",
    "C:T",
    domain=MS,
    types={"T": FLOAT_DOUBLE_BF16},
    examples=[case(["float[B,S,64]", "float[64]"], ["float[B,S,64]"])],
)
@operator(
    "BiasAdd",
    "X:T bias:T skip:T",
    "Y:T",
    domain=MS,
    types={"T": ("tensor(float16)", "tensor(float)")},
    examples=[case(["float16[N,HW,C]", "float16[C]", "float16[N,HW,C]"], ["float16[N,HW,C]"])],
)
def biased(ctx: RuleContext) -> list:
    """The data's shape; the bias (and BiasAdd's skip) must broadcast to it."""
    shapes = [ctx.shape(i) for i in range(ctx.n_inputs) if ctx.has(i)]
    out = broadcast(ctx, *shapes)
    if out is None:
        ctx.because("an input has unknown rank")
    return [out]


operator(
    "Gelu",
    "X:T",
    "Y:T",
    domain=MS,
    types={"T": FLOAT_DOUBLE_BF16},
    rule="X[*s] -> Y[*s]",
    examples=[case(["double[N,C]"], ["double[N,C]"])],
)
operator(
    "QuickGelu",
    "X:T",
    "Y:T",
    domain=MS,
    types={"T": FLOAT_DOUBLE_BF16},
    attrs={"alpha": (FLOAT, 1.702)},
    rule="X[*s] -> Y[*s]",
    examples=[case(["bfloat16[B,S,64]"], ["bfloat16[B,S,64]"], alpha=1.0)],
)
# Inverse inverts each trailing square matrix; Trilu zeroes a triangle (the k input is a count).
operator(
    "Inverse",
    "X:T",
    "Y:T",
    domain=MS,
    types={"T": FLOAT_DOUBLE},
    rule="X[*b, n, n] -> Y[*b, n, n]",
    examples=[
        case(["float[B,4,4]"], ["float[B,4,4]"]),
        case(["double[N,N]"], ["double[N,N]"]),
        case(["float[3,4]"], ["float[3,3]"], error="shape-mismatch"),
    ],
)
operator(
    "Trilu",
    "X:T k?:tensor(int64)",
    "Y:T",
    domain=MS,
    types={
        "T": FLOAT_DOUBLE_BF16
        + (
            "tensor(uint8)",
            "tensor(uint16)",
            "tensor(uint32)",
            "tensor(uint64)",
            "tensor(int8)",
            "tensor(int16)",
            "tensor(int32)",
            "tensor(int64)",
            "tensor(bool)",
        )
    },
    attrs={"upper": (INT, 1)},
    rule="X[*b, n, m] -> Y[*b, n, m]",
    examples=[
        case(["int64[B,S,T]", "int64[]"], ["int64[B,S,T]"], upper=0),
        case(["float[S]"], ["float[*]"], error="shape-mismatch"),
    ],
)


@operator(
    "BiasSplitGelu",
    "X:T bias:T",
    "Y:T",
    domain=MS,
    types={"T": ("tensor(float16)", "tensor(float)")},
    examples=[
        case(["float16[N,HW,640]", "float16[640]"], ["float16[N,HW,320]"]),
        case(["float[N,HW,D]", "float[D]"], ["float[N,HW,D // 2]"]),
        case(["float[N,HW,5]", "float[5]"], ["float[*]"], error="shape-mismatch"),
    ],
)
def bias_split_gelu(ctx: RuleContext) -> list:
    """(N, S, D) plus bias (D), split in halves along D: (N, S, D / 2)."""
    x, bias = ctx.shape(0), ctx.shape(1)
    if x is None:
        return [None]
    if len(x) != 3:
        raise RuleError("shape-mismatch", f"X must be 3-D, has rank {len(x)}")
    full = broadcast(ctx, x, bias) if bias is not None else x
    d = full[2] if full is not None else x[2]
    if isinstance(d, int) and d % 2:
        raise RuleError("shape-mismatch", f"the hidden dimension {d} is odd and cannot be split in halves")
    return [(x[0], x[1], D.floordiv(d, 2))]
