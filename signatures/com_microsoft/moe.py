"""Mixture of experts: MoE, MoEGroupRouter, MoEPacked.

Each token is routed to ``k`` experts whose outputs are summed, so the output has the input's
shape, (tokens, hidden) or (batch, sequence, hidden); the router's probabilities have one row per
token. MoE and MoEGroupRouter run on onnxruntime's CPU kernels (tests/test_contrib_a_runtime.py);
MoEPacked (packed-format expert weights) has a CUDA kernel only and follows its schema and
onnxruntime's inference function.
"""

from __future__ import annotations

from infer.contract.context import RuleContext, RuleError
from infer.core import dims as D
from infer.core.dims import Dim
from infer.core.types import TensorType
from signatures.ai_onnx.attention import agree, at, check_rank
from signatures.com_microsoft import F32, FLOAT, FLOAT_TYPES, INT, MS, REQUIRED, STRING
from signatures.kit.helpers import same_dim
from signatures.kit.operator import case, operator


def _tokens(x: tuple[Dim, ...] | None) -> Dim:
    return None if x is None else D.product(x[:-1])


_MOE = ["float[T,4]", "float[T,3]", "float[3,6,4]", "", "float[3,4,6]"]


@operator(
    "MoE",
    "input:T router_probs:T fc1_experts_weights:T fc1_experts_bias?:T fc2_experts_weights:T fc2_experts_bias?:T "
    "fc3_experts_weights?:T fc3_experts_bias?:T",
    "output:T",
    domain=MS,
    types={"T": FLOAT_TYPES},
    attrs={
        "use_sparse_mixer": (INT, 0),
        "k": (INT, 1),
        "activation_beta": (FLOAT, 0.0),
        "activation_alpha": (FLOAT, 1.0),
        "normalize_routing_weights": (INT, 0),
        "swiglu_limit": (FLOAT, None),
        "swiglu_fusion": (INT, 0),
        "swiglu_limit_after_activation": (INT, 0),
        "activation_type": (STRING, "relu"),
    },
    examples=[
        case(_MOE, ["float[T,4]"]),
        case(
            ["float16[B,S,H]", "float16[R,E]", "float16[E,12,H]", "", "float16[E,H,6]"],
            ["float16[B,S,H]"],
            k=2,
            activation_type="swiglu",
            swiglu_fusion=1,
        ),
        case(
            ["float[2,3,4]", "float[2,3,3]", "float[3,6,4]", "", "float[3,4,6]"], ["float[*]"], error="shape-mismatch"
        ),
        case(["float[5,4]", "float[6,3]", "float[3,6,4]", "", "float[3,4,6]"], ["float[5,4]"], error="shape-mismatch"),
        case(_MOE, ["float[*]"], k=4, error="bad-attribute"),
    ],
)
def moe(ctx: RuleContext) -> list:
    """The input's shape; router_probs is (tokens, experts), fc1 (experts, fusion * inter, hidden),
    fc2 (experts, hidden, inter)."""
    if ctx.attr("k", 1) <= 0:
        raise RuleError("bad-attribute", "MoE: k must be positive")
    x = ctx.shape(0)
    if x is not None and len(x) not in (2, 3):
        raise RuleError("shape-mismatch", f"input must be (tokens, hidden) or (batch, seq, hidden), has rank {len(x)}")
    probs = check_rank(ctx, 1, 2, "router_probs")
    fc1, fc2 = check_rank(ctx, 2, 3, "fc1_experts_weights"), check_rank(ctx, 4, 3, "fc2_experts_weights")
    if x is not None and probs is not None:
        same_dim(ctx, probs[0], _tokens(x), "router_probs' rows and the input's tokens")
    experts = agree(ctx, "experts", at(probs, 1), at(fc1, 0), at(fc2, 0))
    k = ctx.attr("k", 1)
    if isinstance(experts, int) and k > experts:
        raise RuleError("bad-attribute", f"MoE: k {k} exceeds the {experts} experts")
    hidden = agree(ctx, "hidden sizes", at(x, -1) if x else None, at(fc1, 2), at(fc2, 1))
    if x is not None:
        x = x[:-1] + (hidden,)
    return [x]


@operator(
    "MoEGroupRouter",
    "logits:T expert_bias:TF projection_weight?:T",
    "router_probs?:T selection_scores?:TF router_weights?:TF",
    domain=MS,
    types={"T": FLOAT_TYPES, "TF": F32},
    attrs={
        "router_sentinel": (FLOAT, -10000.0),
        "group_topk": (INT, 2),
        "topk_group": (INT, 1),
        "n_group": (INT, 1),
        "top_k": (INT, REQUIRED),
    },
    examples=[
        case(["float[B,S,8]", "float[8]"], ["float[B*S,8]"], top_k=2),
        case(["float[T,8]", "float[8]"], ["float[T,8]", "float[T,8]"], top_k=2, error="arity"),
        case(["float[T,100]", "float[E]", "float[E,100]"], ["float[*]"], top_k=2, error="shape-mismatch"),
    ],
)
def moe_group_router(ctx: RuleContext) -> list:
    """(tokens, experts) for each output: the logits' leading axes flattened; selection_scores and
    router_weights are float and cannot be asked for beside router_probs."""
    if ctx.require("top_k") <= 0:
        raise RuleError("bad-attribute", "MoEGroupRouter: top_k must be positive")
    full = ctx.wants_output(1) or ctx.wants_output(2)
    if full and ctx.wants_output(0):
        ctx.error("arity", "MoEGroupRouter: the full-score outputs cannot be combined with router_probs")
    logits = ctx.shape(0)
    bias = check_rank(ctx, 1, 1, "expert_bias")
    proj = check_rank(ctx, 2, 2, "projection_weight")
    if proj is not None:
        if logits is not None and len(logits) != 2:
            raise RuleError("shape-mismatch", "with projection_weight, logits are (tokens, width)")
        width = at(logits, 1) if logits is not None else None
        if isinstance(width, int) and width % 256:
            raise RuleError("shape-mismatch", f"the projected width {width} is not a multiple of 256")
        if width is not None:
            same_dim(ctx, width, proj[1], "the logits' width and projection_weight's")
        experts = agree(ctx, "experts", proj[0], at(bias, 0))
    else:
        experts = agree(ctx, "experts", at(logits, -1) if logits else None, at(bias, 0))
    shape = None if logits is None else (_tokens(logits), experts)
    return [shape, TensorType(None, shape), TensorType(None, shape)][: ctx.n_outputs]


@operator(
    "MoEPacked",
    "input:T router_probs:TR gate_experts_weights:T2 up_experts_weights?:T2 down_experts_weights:T2 router_weights?:TR",
    "output:T",
    domain=MS,
    types={"T": ("tensor(bfloat16)", "tensor(float16)"), "T2": ("tensor(uint8)",), "TR": FLOAT_TYPES},
    attrs={
        "gate_type": (INT, REQUIRED),
        "activation_type": (STRING, "swiglu"),
        "routing_epsilon": (FLOAT, 0.0),
        "down_type": (INT, REQUIRED),
        "up_type": (INT, -1),
        "routed_scaling_factor": (FLOAT, 1.0),
        "normalize_routing_weights": (INT, 1),
        "k": (INT, 1),
    },
    examples=[
        case(
            ["bfloat16[B,S,64]", "float[R,E]", "uint8[E,16,36]", "uint8[E,16,36]", "uint8[E,64,18]"],
            ["bfloat16[B,S,64]"],
            gate_type=2,
            up_type=2,
            down_type=2,
            k=2,
        )
    ],
)
def moe_packed(ctx: RuleContext) -> list:
    """From the schema only (CUDA kernel): the input's shape."""
    if not 1 <= ctx.attr("k", 1) <= 32:
        raise RuleError("bad-attribute", "MoEPacked: k must be 1 to 32")
    return [ctx.shape(0)]
