"""Gated residual sums and norms: GatedAdd, GatedRMSNorm, EngramGate.

Each output has its main input's shape; the rules check what the CPU kernels check (run in
tests/test_contrib_a_runtime.py): a per-row gate ``(..., 1)`` with X's leading axes, a gate of
X's exact shape for GatedRMSNorm, Engram's ``(B, S, hc, H)`` keys and queries with ``(hc, H)``
scales.
"""

from __future__ import annotations

import math

from infer.contract.context import RuleContext, RuleError
from signatures.ai_onnx.attention import at, check_rank
from signatures.com_microsoft import FLOAT, FLOAT_TYPES, MS, STRING
from signatures.com_microsoft.common import choice, same_shape
from signatures.kit.helpers import same_dim
from signatures.kit.operator import case, operator


@operator(
    "GatedAdd",
    "X:T Y:T gate:T gate_weight?:T",
    "output:T",
    domain=MS,
    types={"T": FLOAT_TYPES},
    examples=[
        case(["float[B,S,C]", "float[B,S,C]", "float[B,S,1]"], ["float[B,S,C]"]),
        case(["bfloat16[B,S,C]", "bfloat16[B,S,C]", "bfloat16[B,S,K]", "bfloat16[K,1]"], ["bfloat16[B,S,C]"]),
        case(["float[2,3,8]", "float[2,3,8]", "float[2,3,4]"], ["float[*]"], error="shape-mismatch"),
        case(["float[2,3,8]", "float[2,3,8]", "float[2,3]"], ["float[*]"], error="shape-mismatch"),
        case(["float[2,3,8]", "float[2,1,8]", "float[2,3,1]"], ["float[2,3,8]"], error="shape-mismatch"),
    ],
)
def gated_add(ctx: RuleContext) -> list:
    """X + Y * gate: X's shape. The gate has X's leading axes and a last extent of 1, or K with the
    (K, 1) gate_weight (projected mode, which only CUDA implements)."""
    x = ctx.shape(0)
    if x is not None and not x:
        raise RuleError("shape-mismatch", "X must have rank >= 1")
    x = same_shape(ctx, x, ctx.shape(1), "X and Y")
    gate = ctx.shape(2)
    if x is not None and gate is not None:
        if len(gate) != len(x):
            raise RuleError("shape-mismatch", f"gate must have X's rank {len(x)}, has {len(gate)}")
        same_shape(ctx, x[:-1], gate[:-1], "the leading axes of X and gate")
        if not ctx.has(3) and isinstance(gate[-1], int) and gate[-1] != 1:
            raise RuleError("shape-mismatch", f"the gate's last extent must be 1, is {gate[-1]}")
    weight = check_rank(ctx, 3, 2, "gate_weight")
    if weight is not None and gate is not None and gate:
        same_dim(ctx, gate[-1], weight[0], "the gate's last extent and gate_weight's rows")
    return [x]


@operator(
    "GatedRMSNorm",
    "X:T scale:T gate:T",
    "Y:T",
    domain=MS,
    types={"T": FLOAT_TYPES},
    attrs={"activation": (STRING, "silu"), "epsilon": (FLOAT, 1e-5)},
    examples=[
        case(["float[B,T,32]", "float[8]", "float[B,T,32]"], ["float[B,T,32]"]),
        case(["float16[B,T,D]", "float16[8]", "float16[B,T,D]"], ["float16[B,T,D]"], activation="sigmoid"),
        case(["float[B,T,8]", "float[3]", "float[B,T,8]"], ["float[*]"], error="shape-mismatch"),
        case(["float[2,3,8]", "float[8]", "float[1,3,8]"], ["float[2,3,8]"], error="shape-mismatch"),
        case(["float[B,T,8]", "float[8]", "float[B,T,8]"], ["float[*]"], activation="relu", error="bad-attribute"),
    ],
)
def gated_rms_norm(ctx: RuleContext) -> list:
    """Y has X's shape; gate must have it too; X's last extent is a multiple of scale's length."""
    choice(ctx, "activation", "silu", ("silu", "swish", "sigmoid"))
    x = ctx.shape(0)
    if x is not None and not x:
        raise RuleError("shape-mismatch", "X must have rank >= 1")
    x = same_shape(ctx, x, ctx.shape(2), "X and gate")
    scale = ctx.shape(1)
    last = x[-1] if x is not None else None
    entries = [d for d in scale if isinstance(d, int)] if scale is not None else []
    if isinstance(last, int) and scale is not None and len(entries) == len(scale):
        length = math.prod(entries)
        if length == 0 or last % length:
            raise RuleError("shape-mismatch", f"X's last extent {last} is not a multiple of the scale's {length}")
    return [x]


@operator(
    "EngramGate",
    "key:T query:T value:T key_norm_scale:T query_norm_scale:T conv_norm_scale?:T",
    "output:T gated_value_normed?:T",
    domain=MS,
    types={"T": FLOAT_TYPES},
    attrs={"epsilon": (FLOAT, 1e-5)},
    examples=[
        case(
            ["float[B,S,4,8]", "float[B,S,4,8]", "float[B,S,8]", "float[4,8]", "float[4,8]", "float[4,8]"],
            ["float[B,S,4,8]", "float[B,S,4,8]"],
        ),
        case(
            ["float[B,S,4,8]", "float[B,S,4,8]", "float[B,S,8]", "float[4,8]", "float[4,8]"],
            ["float[B,S,4,8]", "float[B,S,4,8]"],
            error="missing-input",
        ),
        case(
            ["float[S,4,8]", "float[S,4,8]", "float[S,8]", "float[4,8]", "float[4,8]"],
            ["float[*]"],
            error="shape-mismatch",
        ),
        case(
            ["float[B,S,4,8]", "float[B,S,4,8]", "float[B,S,8]", "float[8]", "float[4,8]"],
            ["float[*]"],
            error="shape-mismatch",
        ),
    ],
)
def engram_gate(ctx: RuleContext) -> list:
    """output and gated_value_normed: the keys' shape ``(B, S, hc, H)``."""
    if ctx.wants_output(1) and not ctx.has(5):
        ctx.error("missing-input", "EngramGate: gated_value_normed needs conv_norm_scale")
    key = same_shape(ctx, check_rank(ctx, 0, 4, "key"), check_rank(ctx, 1, 4, "query"), "key and query")
    value = check_rank(ctx, 2, 3, "value")
    if key is not None and value is not None:
        same_shape(ctx, (key[0], key[1], key[3]), value, "value and the keys' (B, S, H)")
    for i, what in ((3, "key_norm_scale"), (4, "query_norm_scale"), (5, "conv_norm_scale")):
        s = check_rank(ctx, i, 2, what)
        if key is not None and s is not None:
            same_shape(ctx, (key[2], key[3]), s, f"{what} and (hc, H)")
    if key is None and value is not None:
        key = (value[0], value[1], at(ctx.shape(3), 0), value[2])
    return [key, key][: ctx.n_outputs]
