"""FlexAttention (domain ai.onnx.preview): attention with score and probability modifier graphs."""

from __future__ import annotations

from onnx import TensorProto, helper

from infer.contract.context import RuleContext
from infer.core.types import TensorType
from infer.core.values import Value
from signatures.ai_onnx.attention import agree, at, check_groups, check_rank
from signatures.kit.registry import example, rule

PREVIEW = "ai.onnx.preview"


def _softmax_elem(ctx: RuleContext) -> int | None:
    """The modifiers' element type: softmax_precision, else double for double inputs, else float."""
    given = ctx.attr("softmax_precision")
    if given is not None:
        return int(given)
    elem = ctx.elem(0)
    if elem is None:
        return None
    return TensorProto.DOUBLE if elem == TensorProto.DOUBLE else TensorProto.FLOAT


def _modifier(ctx: RuleContext, name: str, scores: tuple) -> None:
    """Walk a modifier graph with the ``(B, Hq, L, S)`` scores; it must give one rank-4 tensor."""
    if name not in ctx.attrs:
        return
    out = ctx.subgraph(name, [Value(TensorType(_softmax_elem(ctx), scores))])
    if out is None:
        return
    if len(out) != 1:
        ctx.error("arity", f"FlexAttention: {name} must have one output, has {len(out)}")
        return
    t = out[0].type
    if isinstance(t, TensorType) and t.shape is not None and len(t.shape) != 4:
        ctx.error("shape-mismatch", f"FlexAttention: {name} must give a rank-4 tensor, gives {t}")


@rule("FlexAttention", since=1, domain=PREVIEW, pure=False)
def flex_attention(ctx: RuleContext) -> list:
    """Y is ``(B, Hq, L, Dv)`` for Q ``(B, Hq, L, D)``, K ``(B, Hkv, S, D)``, V ``(B, Hkv, S, Dv)``."""
    q, k, v = (check_rank(ctx, i, 4, name) for i, name in enumerate(("Q", "K", "V")))
    batch = agree(ctx, "batch sizes", at(q, 0), at(k, 0), at(v, 0))
    hq = at(q, 1)
    hkv = agree(ctx, "key/value heads", at(k, 1), at(v, 1))
    check_groups(hq, hkv)
    kv_seq = agree(ctx, "key and value sequence lengths", at(k, 2), at(v, 2))
    agree(ctx, "query and key head sizes", at(q, 3), at(k, 3))
    scores = (batch, hq, at(q, 2), kv_seq)
    _modifier(ctx, "score_mod", scores)
    _modifier(ctx, "prob_mod", scores)
    return [(batch, hq, at(q, 2), at(v, 3))]


example("FlexAttention", ["float[B,8,L,64]", "float[B,2,S,64]", "float[B,2,S,32]"], ["float[B,8,L,32]"], domain=PREVIEW)
example(
    "FlexAttention",
    ["float16[B,H,L,D]", "float16[B,H,S,D]", "float16[B,H,S,D]"],
    ["float16[B,H,L,D]"],
    attrs={"softmax_precision": 1, "scale": 0.125},
    domain=PREVIEW,
)
example(
    "FlexAttention",
    ["float16[B,H,L,D]", "float16[B,H,S,D]", "float16[B,H,S,E]"],
    ["float16[B,H,L,E]"],
    attrs={
        "score_mod": helper.make_graph(
            [helper.make_node("Neg", ["scores"], ["out"])],
            "score_mod",
            [helper.make_tensor_value_info("scores", TensorProto.FLOAT, ["b", "h", "l", "s"])],
            [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)],
        )
    },
    domain=PREVIEW,
)
example(
    "FlexAttention",
    ["float[B,6,L,8]", "float[B,4,S,8]", "float[B,4,S,8]"],
    ["float[*]"],
    domain=PREVIEW,
    error="shape-mismatch",
)
example(
    "FlexAttention",
    ["float[B,L,64]", "float[B,S,64]", "float[B,S,64]"],
    ["float[*]"],
    domain=PREVIEW,
    error="shape-mismatch",
)
