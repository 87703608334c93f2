"""Dropout with a bit-packed mask: BitmaskDropout and BitmaskBiasDropout (training kernels).

The output has the data's shape; the mask packs one bit per element into uint32 words, so it is
1-D with ``ceil(numel / 32)`` entries (what the CUDA kernel allocates: onnxruntime's schema
inference leaves the mask's shape unknown). No CPU kernel: from the schema and the CUDA kernel's
source, not cross-checked by running.
"""

from __future__ import annotations

from infer.contract.context import RuleContext
from infer.core import dims as D
from signatures.com_microsoft import FLOAT_DOUBLE_BF16, INT, MS
from signatures.com_microsoft.common import same_shape
from signatures.kit.helpers import elements, unidirectional
from signatures.kit.operator import case, operator

_RATIO = {"T1": FLOAT_DOUBLE_BF16, "T2": ("tensor(bool)",), "T3": ("tensor(uint32)",)}

_BITS = 32  # bits in one uint32 mask word


def _mask(x: tuple | None) -> tuple:
    n = elements(x)
    return (None if n is None else D.ceildiv(n, _BITS),)


@operator(
    "BitmaskDropout",
    "data:T ratio?:T1 training_mode?:T2",
    "output:T mask?:T3",
    domain=MS,
    types={"T": FLOAT_DOUBLE_BF16, **_RATIO},
    attrs={"seed": (INT, None)},
    examples=[
        case(["float[B,S,H]"], ["float[B,S,H]", "uint32[(B*H*S + 31) // 32]"]),
        case(["float16[4,40]", "float16[]", "bool[]"], ["float16[4,40]", "uint32[5]"]),
    ],
)
def bitmask_dropout(ctx: RuleContext) -> list:
    x = ctx.shape(0)
    return [x, _mask(x)][: ctx.n_outputs]


@operator(
    "BitmaskBiasDropout",
    "data:T bias:T residual?:T ratio?:T1 training_mode?:T2",
    "output:T mask?:T3",
    domain=MS,
    types={"T": FLOAT_DOUBLE_BF16, **_RATIO},
    attrs={"seed": (INT, None)},
    examples=[
        case(["float[B,S,64]", "float[64]", "float[B,S,64]"], ["float[B,S,64]", "uint32[2*B*S]"]),
        case(["float[B,S,64]", "float[32]"], ["float[B,S,64]"], error="shape-mismatch"),
    ],
)
def bitmask_bias_dropout(ctx: RuleContext) -> list:
    """data + bias (the last axis, or data's shape) + residual (data's shape)."""
    x = ctx.shape(0)
    unidirectional(ctx, x, ctx.shape(1))
    if ctx.has(2):
        x = same_shape(ctx, x, ctx.shape(2), "data and residual")
    return [x, _mask(x)][: ctx.n_outputs]
