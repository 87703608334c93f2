"""Rotary embeddings beyond RotaryEmbedding: MRotaryEmbedding (multimodal M-RoPE) and
GemmaRotaryEmbedding.

Both rotate in place: the outputs have the input's shape. MRotaryEmbedding runs on onnxruntime's
CPU kernel (tests/test_contrib_a_runtime.py); GemmaRotaryEmbedding has a CUDA kernel only, which
writes both outputs with q's shape (so does the schema's inference).
"""

from __future__ import annotations

from infer.contract.context import RuleContext, RuleError
from signatures.ai_onnx.attention import check_rank
from signatures.com_microsoft import F32, FLOAT, FLOAT_TYPES, INT, INTS, MS, REQUIRED
from signatures.kit.helpers import same_dim
from signatures.kit.operator import case, operator


@operator(
    "MRotaryEmbedding",
    "input:T position_ids:M cos_cache:T sin_cache:T",
    "output:T",
    domain=MS,
    types={"T": FLOAT_TYPES, "M": ("tensor(int64)",)},
    attrs={
        "mrope_section": (INTS, REQUIRED),
        "num_heads": (INT, 0),
        "rotary_embedding_dim": (INT, 0),
        "interleaved": (INT, 0),
        "mrope_layout": (INT, 0),
        "is_packed_batching": (INT, 0),
        "scale": (FLOAT, 1.0),
    },
    examples=[
        case(
            ["float[B,S,16]", "int64[3,B,S]", "float[M,4]", "float[M,4]"],
            ["float[B,S,16]"],
            mrope_section=[2, 1, 1],
            num_heads=2,
        ),
        case(
            ["float16[B,N,S,H]", "int64[3,B,S]", "float16[M,2]", "float16[M,2]"],
            ["float16[B,N,S,H]"],
            mrope_section=[1, 1, 0],
            rotary_embedding_dim=4,
        ),
        case(
            ["float[B,S,16]", "int64[3,B,S]", "float[M,4]", "float[M,4]"],
            ["float[*]"],
            mrope_section=[2, 1, 1],
            error="bad-attribute",
        ),
        case(
            ["float[B,N,S,H]", "int64[3,B,S]", "float[M,4]", "float[M,4]"],
            ["float[*]"],
            mrope_section=[2, 1],
            error="bad-attribute",
        ),
        case(
            ["float[2,2,3,8]", "int64[3,2,4]", "float[M,4]", "float[M,4]"],
            ["float[2,2,3,8]"],
            mrope_section=[2, 1, 1],
            error="shape-mismatch",
        ),
    ],
)
def m_rotary_embedding(ctx: RuleContext) -> list:
    """The input's shape, (B, S, N * H) or (B, N, S, H); position_ids is (3, B, S): temporal,
    height and width positions."""
    sections = ctx.require("mrope_section")
    if len(sections) != 3 or any(s < 0 for s in sections):
        raise RuleError("bad-attribute", f"mrope_section must hold 3 non-negative sizes, is {list(sections)}")
    x = ctx.shape(0)
    if x is not None and len(x) not in (3, 4):
        raise RuleError("shape-mismatch", f"input must be (B, S, N*H) or (B, N, S, H), has rank {len(x)}")
    if x is not None and len(x) == 3 and ctx.attr("num_heads", 0) <= 0:
        raise RuleError("bad-attribute", "MRotaryEmbedding: a 3-D input needs num_heads")
    rot = ctx.attr("rotary_embedding_dim", 0)
    if rot > 0 and sum(sections) * 2 != rot:
        raise RuleError("bad-attribute", f"mrope_section sums to {sum(sections)}, rotary_embedding_dim is {rot}")
    pos = check_rank(ctx, 1, 3, "position_ids")
    if pos is not None:
        same_dim(ctx, pos[0], 3, "position_ids' streams (temporal, height, width)")
        if x is not None:
            same_dim(ctx, pos[1], x[0], "batch of position_ids and input")
            same_dim(ctx, pos[2], x[1] if len(x) == 3 else x[2], "sequence of position_ids and input")
    return [x]


@operator(
    "GemmaRotaryEmbedding",
    "emb:U q:T q_rot:T k:T k_rot:T",
    "output1:T output2:T",
    domain=MS,
    types={"T": ("tensor(float16)",), "U": F32},
    examples=[
        case(
            ["float[B,S,D]", "float16[B,N,S,D]", "float16[B,N,S,D]", "float16[B,K,S,D]", "float16[B,K,S,D]"],
            ["float16[B,N,S,D]", "float16[B,N,S,D]"],
        ),
        case(
            ["float[B,S,4]", "float16[B,N,S,8]", "float16[B,N,S,8]", "float16[B,N,S,8]", "float16[B,N,S,8]"],
            ["float16[B,N,S,8]", "float16[B,N,S,8]"],
            error="shape-mismatch",
        ),
    ],
)
def gemma_rotary_embedding(ctx: RuleContext) -> list:
    """From the CUDA kernel (not run): both outputs have q's shape (B, N, S, dim); emb is (B, S, dim)."""
    q = check_rank(ctx, 1, 4, "q")
    emb = check_rank(ctx, 0, 3, "emb")
    if q is not None and emb is not None:
        for a, b, what in ((emb[0], q[0], "batch"), (emb[1], q[2], "sequence"), (emb[2], q[3], "dim")):
            same_dim(ctx, a, b, f"{what} of emb and q")
    if q is None:
        q = ctx.shape(2)
    return [q, q]
