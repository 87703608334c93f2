"""Fused activations and other shape-keeping contrib operators.

FastGelu, BiasGelu, Gelu and QuickGelu are what the optimizer leaves of GELU and SiLU patterns;
a bias input is a 1-D tensor of the last axis, so the output has the data's shape (computed by
broadcasting, which also checks the bias against it).
"""

from __future__ import annotations

from infer.contract.context import RuleContext, RuleError
from infer.core import dims as D
from signatures.com_microsoft import FLOAT, FLOAT_DOUBLE, FLOAT_DOUBLE_BF16, INT, MS, REQUIRED, op
from signatures.kit.helpers import broadcast
from signatures.kit.registry import example, rule, shape_rule

_FLOAT_DOUBLE_BOTH = ("tensor(float)", "tensor(double)", "tensor(float16)", "tensor(bfloat16)")

op("FastGelu", "X:T bias?:T", "Y:T", {"T": _FLOAT_DOUBLE_BOTH})
op("BiasGelu", "A:T B:T", "C:T", {"T": FLOAT_DOUBLE_BF16})
op("Gelu", "X:T", "Y:T", {"T": FLOAT_DOUBLE_BF16})
op("QuickGelu", "X:T", "Y:T", {"T": FLOAT_DOUBLE_BF16}, {"alpha": (FLOAT, 1.702)})
op("BiasAdd", "X:T bias:T skip:T", "Y:T", {"T": ("tensor(float16)", "tensor(float)")})
op("BiasSplitGelu", "X:T bias:T", "Y:T", {"T": ("tensor(float16)", "tensor(float)")})
op("Inverse", "X:T", "Y:T", {"T": FLOAT_DOUBLE})
op("Trilu", "X:T k?:tensor(int64)", "Y:T",
   {"T": FLOAT_DOUBLE_BF16 + ("tensor(uint8)", "tensor(uint16)", "tensor(uint32)", "tensor(uint64)",
                              "tensor(int8)", "tensor(int16)", "tensor(int32)", "tensor(int64)", "tensor(bool)")},
   {"upper": (INT, 1)})  # fmt: skip


op("BiasSoftmax", "data:T bias:T", "output:T", {"T": FLOAT_DOUBLE},
   {"axis": (INT, 1), "is_inner_broadcast": (INT, REQUIRED)})  # fmt: skip
op("BiasDropout", "data:T bias:T residual?:T ratio?:T1 training_mode?:T2", "output:T mask?:T2",
   {"T": FLOAT_DOUBLE_BF16, "T1": FLOAT_DOUBLE_BF16, "T2": ("tensor(bool)",)}, {"seed": (INT, None)})  # fmt: skip
# The bias (a mask) broadcasts into the data; dropout's mask has the data's shape.
shape_rule("BiasSoftmax", "X[*s] -> Y[*s]", domain=MS)
shape_rule("BiasDropout", "X[*s] -> Y[*s], Mask[*s]", domain=MS)


@rule(["FastGelu", "BiasGelu", "BiasAdd"], domain=MS)
def biased(ctx: RuleContext) -> list:
    """The data's shape; the bias (and BiasAdd's skip) must broadcast to it."""
    shapes = [ctx.shape(i) for i in range(ctx.n_inputs) if ctx.has(i)]
    out = broadcast(ctx, *shapes)
    if out is None:
        ctx.because("an input has unknown rank")
    return [out]


shape_rule(["Gelu", "QuickGelu"], "X[*s] -> Y[*s]", domain=MS)
# Inverse inverts each trailing square matrix; Trilu zeroes a triangle (the k input is a count).
shape_rule("Inverse", "X[*b, n, n] -> Y[*b, n, n]", domain=MS)
shape_rule("Trilu", "X[*b, n, m] -> Y[*b, n, m]", domain=MS)


@rule("BiasSplitGelu", domain=MS)
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


example("FastGelu", ["float[B,S,128]", "float[128]"], ["float[B,S,128]"], domain=MS)
example("FastGelu", ["float16[B,S,H]"], ["float16[B,S,H]"], domain=MS)
example("FastGelu", ["float[B,S,H]", "float[128]"], ["float[B,S,128]"], domain=MS)
example("FastGelu", ["float[B,S,64]", "float[128]"], ["float[B,S,?]"], domain=MS, error="shape-mismatch")
example("BiasGelu", ["float[B,S,64]", "float[64]"], ["float[B,S,64]"], domain=MS)
example("Gelu", ["double[N,C]"], ["double[N,C]"], domain=MS)
example("QuickGelu", ["bfloat16[B,S,64]"], ["bfloat16[B,S,64]"], domain=MS, attrs={"alpha": 1.0})
example("BiasAdd", ["float16[N,HW,C]", "float16[C]", "float16[N,HW,C]"], ["float16[N,HW,C]"], domain=MS)
example("BiasSplitGelu", ["float16[N,HW,640]", "float16[640]"], ["float16[N,HW,320]"], domain=MS)
example("BiasSplitGelu", ["float[N,HW,D]", "float[D]"], ["float[N,HW,D // 2]"], domain=MS)
example("BiasSplitGelu", ["float[N,HW,5]", "float[5]"], ["float[*]"], domain=MS, error="shape-mismatch")
example("Inverse", ["float[B,4,4]"], ["float[B,4,4]"], domain=MS)
example("Inverse", ["double[N,N]"], ["double[N,N]"], domain=MS)
example("Inverse", ["float[3,4]"], ["float[3,3]"], domain=MS, error="shape-mismatch")
example("Trilu", ["int64[B,S,T]", "int64[]"], ["int64[B,S,T]"], domain=MS, attrs={"upper": 0})
example("Trilu", ["float[S]"], ["float[*]"], domain=MS, error="shape-mismatch")
example("BiasSoftmax", ["float16[B,N,S,T]", "float16[B,1,1,T]"], ["float16[B,N,S,T]"], domain=MS,
        attrs={"axis": 3, "is_inner_broadcast": 0})  # fmt: skip
example("BiasDropout", ["float[B,S,64]", "float[64]", "float[B,S,64]"], ["float[B,S,64]", "bool[B,S,64]"], domain=MS)
