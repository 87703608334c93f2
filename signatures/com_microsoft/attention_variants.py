"""Attention variants of particular models and decoders: DecoderMaskedMultiHeadAttention,
DecoderMaskedSelfAttention, DecoderAttention, LongformerAttention, GatedRelativePositionBias,
DynamicSparseAttention.

The decoder-masked operators decode one token at a time against a key/value cache; with
``past_present_share_buffer`` the cache is a buffer of the maximum length that the present
outputs alias, so present has past's shape. DecoderMaskedMultiHeadAttention runs on onnxruntime's
CPU kernel (tests/test_contrib_a_runtime.py: a shared buffer for self-attention, 4-D key and
value for cross-attention); the others have GPU kernels only and follow the schemas'
documentation and the inference functions onnxruntime registers, not a kernel.
"""

from __future__ import annotations

from onnx import TensorProto

from infer.contract.context import RuleContext, RuleError
from infer.core import dims as D
from infer.core.dims import Dim
from infer.core.types import TensorType
from signatures.ai_onnx.attention import agree, at, check_rank, split_heads
from signatures.com_microsoft import F32, FLOAT, FLOAT_TYPES, INT, INT32, MS, REQUIRED, STRING
from signatures.com_microsoft.common import Shape, choice
from signatures.kit.operator import case, operator

_T = ("tensor(float)", "tensor(float16)")
_MASK = {"mask_filter_value": (FLOAT, -10000.0), "scale": (FLOAT, None)}


def _heads(ctx: RuleContext, name: str = "num_heads") -> int:
    n: int = ctx.require(name)
    if n <= 0:
        raise RuleError("bad-attribute", f"{ctx.op_type}: {name} must be positive, is {n}")
    return n


def _one_token(ctx: RuleContext, q: Shape | None) -> None:
    """The decoder-masked kernels decode one position: a query sequence longer than 1 is refused."""
    if q is not None and isinstance(q[1], int) and q[1] != 1:
        raise RuleError("shape-mismatch", f"{ctx.op_type} decodes one token: the query's sequence length is {q[1]}")


def _shared(ctx: RuleContext) -> bool:
    return bool(ctx.attr("past_present_share_buffer", 0))


# -- decoder-masked attention ---------------------------------------------------------------------

_DM = {"num_heads": 2, "past_present_share_buffer": 1}


@operator(
    "DecoderMaskedMultiHeadAttention",
    "query:T key?:T value?:T mask_index?:M attention_bias?:T past_key?:T past_value?:T past_sequence_length?:M "
    "beam_width?:M cache_indirection?:M bias?:T",
    "output:T present_key?:T present_value?:T qk?:QK",
    domain=MS,
    types={"T": _T, "QK": _T, "M": INT32},
    attrs={**_MASK, "output_qk": (INT, 0), "past_present_share_buffer": (INT, 0), "num_heads": (INT, REQUIRED)},
    examples=[
        case(
            ["float[B,1,8]", "float[B,1,8]", "float[B,1,8]", "", "", "float[B,2,M,4]", "float[B,2,M,4]", "int32[]"],
            ["float[B,1,8]", "float[B,2,M,4]", "float[B,2,M,4]"],
            attrs=_DM,
        ),
        case(
            ["float16[B,1,8]", "float16[B,1,8]", "float16[B,1,8]", "", "", "float16[B,2,P,4]", "float16[B,2,P,4]"],
            ["float16[B,1,8]", "float16[B,2,P + 1,4]", "float16[B,2,P + 1,4]"],
            num_heads=2,
        ),
        case(["float[B,1,8]", "float[B,2,L,4]", "float[B,2,L,4]"], ["float[B,1,8]"], num_heads=2),
        case(["float[B,2,8]", "float[B,2,8]", "float[B,2,8]"], ["float[*]"], num_heads=2, error="shape-mismatch"),
    ],
)
def decoder_masked_multi_head_attention(ctx: RuleContext) -> list:
    """output (B, 1, v_hidden); present_key/value past's shape with a shared buffer, else
    (B, N, P + 1, H) (the CPU kernel refuses self-attention without a shared buffer); qk
    (B, N, 1, L) for cross-attention over L keys."""
    n = _heads(ctx)
    q = check_rank(ctx, 0, 3, "query")
    _one_token(ctx, q)
    k, v = ctx.shape(1) if ctx.has(1) else None, ctx.shape(2) if ctx.has(2) else None
    b = at(q, 0)
    cross = k is not None and len(k) == 4
    if k is not None and len(k) == 4:  # cross: the keys and values, already projected and split into heads
        v_hidden = None if v is None or len(v) != 4 else D.mul(v[1], v[3])
        total: Dim = k[2]
        head = k[3]
    elif ctx.has(1):
        v_hidden = at(v, 2) if v is not None and len(v) == 3 else None
        head = split_heads(at(q, 2), n, "query hidden size")
        total = None
    else:  # packed QKV: (B, 1, 2 D + D_v), the split not known without the key
        ctx.because("a packed QKV query does not say how its width splits into Q, K and V", 0)
        v_hidden = head = total = None
    past_k, past_v = check_rank(ctx, 5, 4, "past_key"), check_rank(ctx, 6, 4, "past_value")
    if past_k is not None and past_v is not None and not cross:
        agree(ctx, "head sizes of past_key and past_value", past_k[3], past_v[3], head)
    if _shared(ctx):
        present_k, present_v = past_k, past_v
    else:
        length = None if past_k is None else D.add(past_k[2], 1)
        present_k = present_v = (b, n, length, head)
    return [(b, at(q, 1), v_hidden), present_k, present_v, (b, n, 1, total)][: ctx.n_outputs]


@operator(
    "DecoderMaskedSelfAttention",
    "input:T weights:T bias:T mask_index?:M past:T attention_bias?:T past_sequence_length:M beam_width?:M "
    "cache_indirection?:M",
    "output:T present:T",
    domain=MS,
    types={"T": _T, "M": INT32},
    attrs={**_MASK, "do_rotary": (INT, 0), "past_present_share_buffer": (INT, 0), "num_heads": (INT, REQUIRED)},
    examples=[
        case(
            ["float[B,1,6]", "float[6,24]", "float[24]", "", "float[2,B,2,M,4]", "", "int32[]"],
            ["float[B,1,8]", "float[2,B,2,M,4]"],
            attrs=_DM,
        ),
        case(
            ["float[B,1,6]", "float[6,24]", "float[24]", "", "float[2,B,2,P,4]", "", "int32[]"],
            ["float[B,1,8]", "float[2,B,2,P + 1,4]"],
            num_heads=2,
        ),
        case(
            ["float[B,1,6]", "float[6,25]", "float[25]", "", "float[2,B,2,M,4]", "", "int32[]"],
            ["float[*]", "float[*]"],
            attrs=_DM,
            error="shape-mismatch",
        ),
    ],
)
def decoder_masked_self_attention(ctx: RuleContext) -> list:
    """From the schema only (CUDA kernel): output (B, 1, v_hidden) with the Q, K and V widths the
    merged weights' (D_in, 3 D) hold; present past's shape with a shared buffer, else (2, B, N, P + 1, H)."""
    n = _heads(ctx)
    x = check_rank(ctx, 0, 3, "input")
    _one_token(ctx, x)
    w = check_rank(ctx, 1, 2, "weights")
    past = check_rank(ctx, 4, 5, "past")
    width = agree(ctx, "weights and bias widths", at(w, 1), at(check_rank(ctx, 2, 1, "bias"), 0))
    if isinstance(width, int) and width % 3:
        raise RuleError("shape-mismatch", f"the merged Q, K, V width {width} is not divisible by 3")
    hidden = None if width is None else D.floordiv(width, 3)
    head = None if hidden is None else split_heads(hidden, n, "hidden size")
    if _shared(ctx):
        present = past
    else:
        present = (2, at(x, 0), n, None if past is None else D.add(past[3], 1), head)
    return [(at(x, 0), at(x, 1), hidden), present]


@operator(
    "DecoderAttention",
    "query:T key:T q_weight:T kv_weight:T bias:T key_padding_mask?:B key_cache?:T value_cache?:T static_kv:B "
    "use_past:B has_layer_state:B has_key_padding_mask:B",
    "output:T new_key_cache?:T new_value_cache?:T",
    domain=MS,
    types={"T": _T, "B": ("tensor(bool)",)},
    attrs={"mask_filter_value": (FLOAT, -10000.0), "num_heads": (INT, REQUIRED)},
    examples=[
        case(
            [
                "float[S,B,8]",
                "float[L,B,8]",
                "float[8,8]",
                "float[8,16]",
                "float[24]",
                "",
                "",
                "",
                "bool[]",
                "bool[]",
                "bool[]",
                "bool[]",
            ],
            ["float[S,B,8]", "float[B,2,?,4]", "float[B,2,?,4]"],
            num_heads=2,
        ),
        case(
            [
                "float[S,B,8]",
                "float[L,B,8]",
                "float[8,8]",
                "float[8,16]",
                "float[24]",
                "",
                "",
                "",
                "bool[]",
                "bool[]",
                "bool[]",
                "bool[]",
            ],
            ["float[*]"],
            num_heads=3,
            error="shape-mismatch",
        ),
    ],
)
def decoder_attention(ctx: RuleContext) -> list:
    """From the schema only (CUDA kernel): output has the query's shape (S, B, D); the new caches
    are (B, N, L, D / N), L depending on the static_kv and use_past flags (contents)."""
    n = _heads(ctx)
    q = check_rank(ctx, 0, 3, "query")
    check_rank(ctx, 1, 3, "key")
    head = None if q is None else split_heads(q[2], n, "hidden size")
    ctx.because("the new cache length depends on the static_kv and use_past inputs' values", 8, 9)
    cache = (at(q, 1), n, None, head)
    return [q, cache, cache][: ctx.n_outputs]


@operator(
    "LongformerAttention",
    "input:T weight:T bias:T mask:T global_weight:T global_bias:T global:G",
    "output:T",
    domain=MS,
    types={"T": _T, "G": INT32},
    attrs={"window": (INT, REQUIRED), "num_heads": (INT, REQUIRED)},
    examples=[
        case(
            [
                "float16[B,S,8]",
                "float16[8,24]",
                "float16[24]",
                "float16[B,S]",
                "float16[8,24]",
                "float16[24]",
                "int32[B,S]",
            ],
            ["float16[B,S,8]"],
            num_heads=2,
            window=2,
        )
    ],
)
def longformer_attention(ctx: RuleContext) -> list:
    """From the schema only (CUDA kernel): the output has the input's shape (B, S, D)."""
    _heads(ctx)
    if ctx.require("window") <= 0:
        raise RuleError("bad-attribute", "LongformerAttention: window must be positive")
    x = check_rank(ctx, 0, 3, "input")
    return [x]


@operator(
    "GatedRelativePositionBias",
    "query_layer:T query_bias:T rel_pos:T weight:T bias:T eco_a:T token_offset?:M",
    "output:T",
    domain=MS,
    types={"T": _T, "M": INT32},
    attrs={"num_heads": (INT, REQUIRED)},
    examples=[
        case(
            ["float[B,S,8]", "float[8]", "float[1,2,S,S]", "float[4,6]", "float[6]", "float[1,2,1,1]"],
            ["float[B,2,S,S]"],
            num_heads=2,
        ),
        case(
            ["float[T,8]", "float[8]", "float[1,2,S,S]", "float[4,6]", "float[6]", "float[1,2,1,1]", "int32[B,S]"],
            ["float[B,2,S,S]"],
            num_heads=2,
        ),
    ],
)
def gated_relative_position_bias(ctx: RuleContext) -> list:
    """From the schema only (CUDA kernel): (B, num_heads, S, S). With token_offset (B, S) the
    query layer is packed (tokens, D) and B and S come from token_offset."""
    n = _heads(ctx)
    q = ctx.shape(0)
    offset = check_rank(ctx, 6, 2, "token_offset")
    if q is not None and len(q) not in (2, 3):
        raise RuleError("shape-mismatch", f"query_layer must be (B, S, D) or (tokens, D), has rank {len(q)}")
    lead = offset if offset is not None else (q[:2] if q is not None and len(q) == 3 else None)
    b, s = (None, None) if lead is None else lead
    return [(b, n, s, s)]


# -- selector-driven sparse attention -------------------------------------------------------------

_DSA = {"num_heads": 2, "kv_num_heads": 1}


@operator(
    "DynamicSparseAttention",
    "query:TQuery key?:TQuery value?:TValue past_key?:TCache past_value?:TCache auxiliary_key?:T auxiliary_value?:T "
    "selected_indices:M selected_counts:M seqlens_k:M total_sequence_length:M cos_cache?:T sin_cache?:T "
    "position_ids?:tensor(int64) q_norm_weight?:T k_norm_weight?:T head_sink?:T committed_length?:M key_scale?:S "
    "value_scale?:S",
    "output:T present_key?:TCache present_value?:TCache validation_status?:M",
    domain=MS,
    types={
        "T": FLOAT_TYPES,
        "TQuery": FLOAT_TYPES,
        "TValue": FLOAT_TYPES,
        "TCache": ("tensor(float)", "tensor(float16)", "tensor(bfloat16)", "tensor(int8)"),
        "S": F32,
        "M": INT32,
    },
    attrs={
        "output_bf16": (INT, 0),
        "num_heads": (INT, REQUIRED),
        "qk_norm_epsilon": (FLOAT, 1e-6),
        "kv_num_heads": (INT, REQUIRED),
        "do_rotary": (INT, 0),
        "auxiliary_kv_shared": (INT, 0),
        "scale": (FLOAT, None),
        "rotary_offset": (INT, 0),
        "local_window_size": (INT, -1),
        "smooth_softmax": (INT, 0),
        "attention_mode": (STRING, "selected_only"),
        "is_causal": (INT, 1),
        "selected_kv_source": (STRING, "main"),
        "rotary_interleaved": (INT, 0),
    },
    examples=[
        case(
            [
                "float[B,S,8]",
                "float[B,S,4]",
                "float[B,S,4]",
                "float[B,1,M,4]",
                "float[B,1,M,4]",
                "",
                "",
                "int32[R,K]",
                "int32[R]",
                "int32[B]",
                "int32[]",
            ],
            ["float[B,S,8]", "float[B,1,M,4]", "float[B,1,M,4]", "int32[1]"],
            attrs=_DSA,
        ),
        case(
            ["float16[B,S,16]", "", "", "", "", "", "", "int32[R,K]", "int32[R]", "int32[B]", "int32[]"],
            ["bfloat16[B,S,8]", "float16[B,1,?,4]", "float16[B,1,?,4]"],
            attrs={**_DSA, "output_bf16": 1},
        ),
        case(
            [
                "float[B,S,8]",
                "float[B,S,4]",
                "float[B,S,4]",
                "",
                "",
                "",
                "",
                "int32[R,K]",
                "int32[R]",
                "int32[B]",
                "int32[]",
            ],
            ["unknown"],
            attrs={**_DSA, "attention_mode": "dense"},
            error="bad-attribute",
        ),
    ],
)
def dynamic_sparse_attention(ctx: RuleContext) -> list:
    """From the schema only (CUDA and WebGPU kernels): output (B, S, N * H); present_key/value the
    past caches' shapes (a contiguous buffer), or (B, N_kv, ?, H) without them; validation_status (1).

    The output has the query's type, or bfloat16 with ``output_bf16`` (for a float16 query).
    """
    n, kv = _heads(ctx), _heads(ctx, "kv_num_heads")
    choice(ctx, "attention_mode", "selected_only", ("selected_only", "local_plus_selected"))
    choice(ctx, "selected_kv_source", "main", ("main", "auxiliary"))
    q = check_rank(ctx, 0, 3, "query")
    if ctx.has(1):
        head = None if q is None else split_heads(q[2], n, "query hidden size")
    else:
        head = None if q is None else split_heads(q[2], n + 2 * kv, "packed QKV width")
    past_k, past_v = check_rank(ctx, 3, 4, "past_key"), check_rank(ctx, 4, 4, "past_value")
    head = agree(ctx, "head sizes", head, at(past_k, 3), at(past_v, 3))
    b = agree(ctx, "batch sizes", at(q, 0), at(past_k, 0), at(past_v, 0))
    # Without a past cache the present one has the query's type (onnxruntime's inference agrees).
    present_k = past_k if past_k is not None else TensorType(ctx.elem(0), (b, kv, None, head))
    present_v = past_v if past_v is not None else TensorType(ctx.elem(0), (b, kv, None, head))
    elem = ctx.elem(0)
    if ctx.attr("output_bf16", 0):
        elem = TensorProto.BFLOAT16 if elem == TensorProto.FLOAT16 else None
    out = TensorType(elem, None if q is None else (q[0], q[1], D.mul(n, head) if head is not None else None))
    return [out, present_k, present_v, (1,)][: ctx.n_outputs]
