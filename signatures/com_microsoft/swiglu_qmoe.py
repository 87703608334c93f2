"""SwiGLU-family activations and quantized experts: ScaledSiLU, SwiGLU, RouterGateUpProj, QMoE.

A mixture-of-experts layer routes each token to ``k`` experts and sums their outputs, so QMoE's
output has its input's shape whatever the weights' quantization; the router's probabilities
have one row per token. ScaledSiLU and QMoE are checked against onnxruntime's CPU kernels
(tests/test_contrib_b_runtime.py); SwiGLU and RouterGateUpProj have none, and follow the
schema's documentation and inference.
"""

from __future__ import annotations

from infer.contract.context import RuleContext, RuleError
from infer.core import dims as D
from signatures.com_microsoft import F32, FLOAT, FLOAT_TYPES, INT, MS, REQUIRED, STRING
from signatures.kit.helpers import same_dim
from signatures.kit.operator import case, operator

_HALF_FLOAT = ("tensor(float16)", "tensor(bfloat16)", "tensor(float)")
_SWIGLU = {"activation_alpha": (FLOAT, 1.0), "activation_beta": (FLOAT, 0.0), "limit": (FLOAT, 0.0)}

_FC = (
    "fc1_experts_weights:T1 fc1_scales?:T2 fc1_experts_bias?:T fc2_experts_weights:T1 fc2_scales?:T2 "
    "fc2_experts_bias?:T fc3_experts_weights?:T1 fc3_scales?:T2 fc3_experts_bias?:T fc1_zero_points?:T1 "
    "fc2_zero_points?:T1 fc3_zero_points?:T1"
)


@operator(
    "ScaledSiLU",
    "X:T scale?:M",
    "Y:T",
    domain=MS,
    types={"T": FLOAT_TYPES, "M": FLOAT_TYPES},
    attrs={"alpha": (FLOAT, 1.0)},
    examples=[
        case(["float16[B,S,H]"], ["float16[B,S,H]"]),
        case(["float[B,S,H]", "bfloat16[]"], ["float[B,S,H]"]),
        case(["float[B,S,H]", "float[1]"], ["float[*]"], error="shape-mismatch"),
    ],
)
def scaled_silu(ctx: RuleContext) -> list:
    """X's shape; the optional scale must be a scalar (onnxruntime refuses even a 1-element vector)."""
    s = ctx.shape(1) if ctx.has(1) else None
    if s is not None and len(s) != 0:
        raise RuleError("shape-mismatch", f"scale must be a scalar, has shape {list(s)}")
    return [ctx.shape(0)]


@operator(
    "SwiGLU",
    "gate:T up?:T",
    "output:T",
    domain=MS,
    types={"T": _HALF_FLOAT},
    attrs={**_SWIGLU, "round_activation": (INT, 0)},
    examples=[
        case(["float16[T,2048]"], ["float16[T,1024]"]),
        case(["bfloat16[B,S,I]", "bfloat16[B,S,I]"], ["bfloat16[B,S,I]"]),
        case(["float[B,S,2*I]"], ["float[B,S,I]"]),
        case(["float[B,S,7]"], ["float[*]"], error="shape-mismatch"),
    ],
)
def swiglu(ctx: RuleContext) -> list:
    """With ``up`` the gate's shape; without, the gate holds both halves along its last axis,
    which is halved. No CPU kernel: onnxruntime's schema inference says the same."""
    g = ctx.shape(0)
    if g is None:
        return [None]
    if not g:
        raise RuleError("shape-mismatch", "gate must not be a scalar")
    if ctx.has(1):
        return [g]
    last = g[-1]
    if isinstance(last, int) and last % 2:
        raise RuleError("shape-mismatch", f"the gate's last extent {last} must be even (it holds both halves)")
    return [g[:-1] + (D.floordiv(last, 2),)]


@operator(
    "RouterGateUpProj",
    "X:T W:T",
    "router:T activated:T",
    domain=MS,
    types={"T": ("tensor(bfloat16)", "tensor(float16)")},
    attrs={**_SWIGLU, "activation": (STRING, "swiglu"), "router_size": (INT, REQUIRED)},
    examples=[
        case(["bfloat16[T,64]", "bfloat16[64,40]"], ["bfloat16[T,8]", "bfloat16[T,16]"], router_size=8),
        case(["float16[B,S,K]", "float16[K,W]"], ["float16[B,S,8]", "float16[B,S,floor((W - 8)/2)]"], router_size=8),
        case(["float16[T,64]", "float16[64,31]"], ["float16[*]", "float16[*]"], router_size=8, error="shape-mismatch"),
    ],
)
def router_gate_up_proj(ctx: RuleContext) -> list:
    """One GEMM ``X (.., K) * W (K, router_size + 2 * inter)``, split into the router logits
    ``(.., router_size)`` and the activated shared expert ``(.., inter)``. No CPU kernel."""
    x, w = ctx.shape(0), ctx.shape(1)
    size = ctx.require("router_size")
    if w is not None and len(w) != 2:
        raise RuleError("shape-mismatch", f"W must be 2-D, has rank {len(w)}")
    if x is not None and not x:
        raise RuleError("shape-mismatch", "X must have rank >= 1")
    inter = None
    if w is not None:
        rest = D.sub(w[1], size)
        if isinstance(rest, int) and (rest <= 0 or rest % 2):
            raise RuleError("shape-mismatch", f"W's width {w[1]} is not router_size {size} plus an even positive count")
        inter = D.floordiv(rest, 2)
        if x is not None:
            same_dim(ctx, x[-1], w[0], "X's last extent and W's rows")
    if x is None:
        return [None, None]
    return [x[:-1] + (size,), x[:-1] + (inter,)]


_Q4 = ["uint8[4,32,8]", "float[4,32]", "", "uint8[4,16,16]", "float[4,16]"]


@operator(
    "QMoE",
    f"input:T router_probs:T {_FC} router_weights?:T fc1_global_scale?:T4 fc2_global_scale?:T4 "
    "fc1_act_scale?:T4 fc2_act_scale?:T4 fc1_act_block_scale?:T2 fc2_act_block_scale?:T2",
    "output:T",
    domain=MS,
    types={
        "T": FLOAT_TYPES,
        "T1": ("tensor(uint8)", "tensor(float8e4m3fn)"),
        "T2": ("tensor(float)", "tensor(float16)", "tensor(bfloat16)", "tensor(float8e8m0)", "tensor(float8e4m3fn)"),
        "T4": F32,
    },
    attrs={
        "accuracy_level": (INT, 0),
        "activation_alpha": (FLOAT, 1.0),
        "activation_beta": (FLOAT, 0.0),
        "activation_type": (STRING, "relu"),
        "block_size": (INT, None),
        "expert_weight_bits": (INT, 4),
        "fc1_expert_weight_bits": (INT, None),
        "fc2_expert_weight_bits": (INT, None),
        "fc3_expert_weight_bits": (INT, None),
        "k": (INT, 1),
        "normalize_routing_weights": (INT, 0),
        "quant_type": (STRING, "int"),
        "swiglu_fusion": (INT, 0),
        "swiglu_limit": (FLOAT, None),
        "swiglu_limit_after_activation": (INT, 0),
        "use_sparse_mixer": (INT, 0),
        "weights_prepacked": (INT, -1),
    },
    examples=[
        case(["float[T,16]", "float[T,4]", *_Q4], ["float[T,16]"], k=2),
        case(["float[B,S,16]", "float[B*S,4]", *_Q4], ["float[B,S,16]"]),
        case(["float[3,16]", "float[4,4]", *_Q4], ["float[3,16]"], error="shape-mismatch"),
        case(["float[T,16]", "float[T,4]", *_Q4], ["float[*]"], k=5, error="bad-attribute"),
        case(["float[16]", "float[1,4]", *_Q4], ["float[*]"], error="shape-mismatch"),
    ],
)
def qmoe(ctx: RuleContext) -> list:
    """The input's shape: (tokens, hidden) or (batch, sequence, hidden). router_probs is
    (tokens, experts), the experts as many as fc1's weights hold, and ``k`` at most that."""
    x, probs, w1 = ctx.shape(0), ctx.shape(1), ctx.shape(2)
    if x is not None and len(x) not in (2, 3):
        raise RuleError("shape-mismatch", f"input must be 2-D or 3-D, has rank {len(x)}")
    if probs is not None and len(probs) != 2:
        raise RuleError("shape-mismatch", f"router_probs must be 2-D, has rank {len(probs)}")
    if w1 is not None and len(w1) != 3:
        raise RuleError("shape-mismatch", f"fc1_experts_weights must be 3-D, has rank {len(w1)}")
    experts = None if w1 is None else w1[0]
    if probs is not None:
        experts = probs[1] if experts is None else same_dim(ctx, probs[1], experts, "router_probs' and fc1's experts")
        if x is not None:
            same_dim(ctx, probs[0], D.product(x[:-1]), "router_probs' rows and the input's tokens")
    k = ctx.attr("k", 1)
    if isinstance(experts, int) and not 0 < k <= experts:
        raise RuleError("bad-attribute", f"k {k} must be between 1 and the number of experts {experts}")
    return [x]
