"""Fused attention: Attention, QAttention, MultiHeadAttention, GroupQueryAttention, RotaryEmbedding.

Shapes follow onnxruntime's ContribOperators documentation, each form checked against what the
CPU kernels return (tests/models/ms/attention_ops.onnx, group_query_attention.onnx):

- Attention: input (B, S, D_in), weights (D_in, D_q + D_k + D_v) -> output (B, S, D_v),
  present (2, B, N, P + S, D_k / N) where past is (2, B, N, P, D_k / N);
- MultiHeadAttention: output (B, S, D_v); present_key (B, N, P + L, H), L the key length;
- GroupQueryAttention: output (B, S, N * H); present (B, N_kv, max(total, P), H), which needs
  the contents of total_sequence_length when there is a past.

A head size is a hidden size divided by num_heads; the kernels reject hidden sizes that are not
multiples, so the quotient is exact for every model that runs. Attention's present holds K and V
in one tensor: where qkv_hidden_sizes gives them different widths its head size is V's on the CPU
kernel and K's on CUDA, so it is not claimed.
"""

from __future__ import annotations

from typing import Any

from infer.contract.context import RuleContext, RuleError
from infer.core import dims as D
from infer.core.dims import Dim
from infer.core.types import TensorType
from signatures.com_microsoft import F32, FLOAT, FLOAT_TYPES, INT, INT8_TYPES, INT32, INTS, MS, REQUIRED, STRING
from signatures.kit.helpers import same_dim
from signatures.kit.operator import case, operator

_MASK = {"mask_filter_value": (FLOAT, -10000.0), "scale": (FLOAT, None)}

# RoPE rotates pairs in place: the output has the input's shape (3-D or 4-D).
operator(
    "RotaryEmbedding",
    "input:T position_ids:M cos_cache:T sin_cache:T",
    "output:T",
    domain=MS,
    types={"T": FLOAT_TYPES, "M": ("tensor(int64)",)},
    attrs={
        "interleaved": (INT, 0),
        "num_heads": (INT, 0),
        "rotary_embedding_dim": (INT, 0),
        "scale": (FLOAT, 1.0),
        "is_packed_batching": (INT, 0),
    },
    rule="X[*s] -> Y[*s]",
    examples=[
        case(["float[B,S,32]", "int64[B,S]", "float[64,8]", "float[64,8]"], ["float[B,S,32]"], num_heads=2),
        case(["float16[B,N,S,16]", "int64[1]", "float16[64,8]", "float16[64,8]"], ["float16[B,N,S,16]"], interleaved=1),
    ],
)


def _heads(ctx: RuleContext, name: str = "num_heads") -> int:
    n = ctx.require(name)
    if not isinstance(n, int) or n <= 0:
        raise RuleError("bad-attribute", f"{name} must be a positive integer, is {n}")
    return n


def _per_head(ctx: RuleContext, hidden: Dim, n: int, what: str) -> Dim:
    """``hidden / n``, reporting a hidden size that is not a multiple of the head count."""
    if isinstance(hidden, int) and hidden % n:
        ctx.error("shape-mismatch", f"{ctx.op_type}: {what} {hidden} is not a multiple of {n} heads")
        return None
    return D.floordiv(hidden, n)


def _rank(ctx: RuleContext, i: int, ranks: tuple[int, ...], what: str) -> tuple[Dim, ...] | None:
    s = ctx.shape(i) if ctx.has(i) else None
    if s is not None and len(s) not in ranks:
        raise RuleError("shape-mismatch", f"{what} must have rank {' or '.join(map(str, ranks))}, has {len(s)}")
    return s


def _packed_attention(ctx: RuleContext, x_index: int, w_index: int, bias_index: int, past_index: int) -> list:
    """Attention and QAttention: one weight matrix holds the Q, K and V projections."""
    n = _heads(ctx)
    x = _rank(ctx, x_index, (3,), "input")
    w = _rank(ctx, w_index, (2,), "weights")
    bias = _rank(ctx, bias_index, (1,), "bias")
    past = _rank(ctx, past_index, (5,), "past")
    b, s = (x[0], x[1]) if x is not None else (None, None)
    total: Dim = w[1] if w is not None else None
    if bias is not None:
        total = bias[0] if total is None else same_dim(ctx, total, bias[0], "weights and bias widths")
    if x is not None and w is not None:
        same_dim(ctx, x[2], w[0], "input hidden size and weights")
    sizes = ctx.attr("qkv_hidden_sizes")
    if sizes:
        if len(sizes) != 3:
            raise RuleError("bad-attribute", f"qkv_hidden_sizes needs 3 entries, has {len(sizes)}")
        if total is not None:
            same_dim(ctx, total, sum(sizes), "weights width and the sum of qkv_hidden_sizes")
        k_hidden, v_hidden = sizes[1], sizes[2]
    else:
        if isinstance(total, int) and total % 3:
            ctx.error("shape-mismatch", f"{ctx.op_type}: weights width {total} is not divisible by 3")
        k_hidden = v_hidden = None if total is None else D.floordiv(total, 3)
    head = None if k_hidden is None else _per_head(ctx, k_hidden, n, "hidden size")
    if head is not None and ctx.equal(k_hidden, v_hidden) is not True:
        # present stacks K and V: its head size is V's on onnxruntime's CPU kernel and K's on CUDA.
        head = None
        ctx.because("present's head size when K and V have different hidden sizes differs between kernels")
    if past is None:
        length = s
    else:
        b = same_dim(ctx, b, past[1], "batch of input and past") if b is not None else past[1]
        # With a shared buffer the present is the buffer; onnxruntime's kernel rejects that
        # form here, so its extent is not claimed.
        length = None if ctx.attr("past_present_share_buffer", 0) else D.add(past[3], s) if s is not None else None
        if length is None:
            ctx.because("the present length of a shared past/present buffer is not claimed")
    return [(b, s, v_hidden), (2, b, n, length, head)][: ctx.n_outputs]


_X = "float[B,S,32]"


@operator(
    "Attention",
    "input:T weights:T bias?:T mask_index?:M past?:T attention_bias?:T past_sequence_length?:M",
    "output:T present?:T",
    domain=MS,
    types={"T": FLOAT_TYPES, "M": INT32},
    attrs={
        "num_heads": (INT, REQUIRED),
        "unidirectional": (INT, 0),
        "qkv_hidden_sizes": (INTS, None),
        "past_present_share_buffer": (INT, 0),
        "do_rotary": (INT, 0),
        "rotary_embedding_dim": (INT, None),
        **_MASK,
    },
    examples=[
        case([_X, "float[32,96]", "float[96]"], ["float[B,S,32]", "float[2,B,2,S,16]"], num_heads=2),
        case(
            [_X, "float[32,96]", "float[96]", "int32[B,P + S]", "float[2,B,2,P,16]"],
            ["float[B,S,32]", "float[2,B,2,P + S,16]"],
            num_heads=2,
            unidirectional=1,
        ),
        case(
            [_X, "float[32,80]", "float[80]"],
            ["float[B,S,16]", "float[2,B,2,S,?]"],
            num_heads=2,
            qkv_hidden_sizes=[32, 32, 16],
        ),
        case(["float16[B,S,D]", "float16[D,W]"], ["float16[B,S,W // 3]"], num_heads=4),
        case(
            [_X, "float[32,96]", "float[96]", "", "float[2,B,2,M,16]"],
            ["float[B,S,32]", "float[2,B,2,?,16]"],
            num_heads=2,
            past_present_share_buffer=1,
        ),
        case([_X, "float[32,96]", "float[90]"], ["float[B,S,32]"], num_heads=2, error="shape-mismatch"),
        case([_X, "float[32,96]"], ["float[B,S,32]"], num_heads=5, error="shape-mismatch"),
        case([_X, "float[32,96]"], ["float[*]"], error="bad-attribute"),
    ],
)
def attention(ctx: RuleContext) -> list:
    return _packed_attention(ctx, 0, 1, 2, 4)


@operator(
    "QAttention",
    "input:T1 weight:T2 bias:T3 input_scale:T3 weight_scale:T3 mask_index?:T4 input_zero_point?:T1 "
    "weight_zero_point?:T2 past?:T3",
    "output:T3 present?:T3",
    domain=MS,
    types={
        "T1": ("tensor(int8)", "tensor(uint8)"),
        "T2": ("tensor(int8)", "tensor(uint8)"),
        "T3": ("tensor(float)", "tensor(float16)"),
        "T4": INT32,
    },
    attrs={
        "num_heads": (INT, REQUIRED),
        "unidirectional": (INT, 0),
        "past_present_share_buffer": (INT, 0),
        "do_rotary": (INT, 0),
        **_MASK,
    },
    examples=[
        case(
            ["uint8[B,S,32]", "int8[32,96]", "float[96]", "float[]", "float[]", "int32[B]", "uint8[]", "int8[]"],
            ["float[B,S,32]", "float[2,B,2,S,16]"],
            num_heads=2,
        ),
        case(
            [
                "uint8[B,S,32]",
                "uint8[32,96]",
                "float16[96]",
                "float16[]",
                "float16[]",
                "",
                "",
                "",
                "float16[2,B,4,P,8]",
            ],
            ["float16[B,S,32]", "float16[2,B,4,P + S,8]"],
            num_heads=4,
        ),
    ],
)
def q_attention(ctx: RuleContext) -> list:
    return _packed_attention(ctx, 0, 1, 2, 8)


def _key_side(ctx: RuleContext, q: tuple[Dim, ...] | None, n: int) -> tuple[Dim, Dim, Dim, Dim]:
    """MultiHeadAttention's (key length, key head size, value hidden size, value head size)."""
    k = _rank(ctx, 1, (3, 4, 5), "key")
    v = _rank(ctx, 2, (3, 4), "value")
    if q is not None and len(q) == 5:  # packed QKV (B, S, N, 3, H)
        return q[1], q[4], D.mul(q[2], q[4]), q[4]
    if k is None:
        ctx.because("the key is not given (or of unknown rank) and the query is not packed", 1)
        return None, None, None, None
    if len(k) == 5:  # packed KV (B, L, N, 2, H)
        return k[1], k[4], D.mul(k[2], k[4]), k[4]
    if len(k) == 4:  # already projected and split into heads: (B, N, L, H)
        length, k_head = k[2], k[3]
    else:
        length, k_head = k[1], _per_head(ctx, k[2], n, "key hidden size")
    if v is None:
        return length, k_head, None, None
    if len(v) == 4:
        if len(k) == 4:  # the kernels require split K and V of one shape
            for i, what in ((0, "batch"), (1, "heads"), (2, "length"), (3, "head size")):
                same_dim(ctx, k[i], v[i], f"{what} of the split key and value")
        return length, k_head, D.mul(v[1], v[3]), v[3]
    return length, k_head, v[2], _per_head(ctx, v[2], n, "value hidden size")


@operator(
    "MultiHeadAttention",
    "query:T key?:T value?:T bias?:T key_padding_mask?:M attention_bias?:T past_key?:T past_value?:T "
    "past_sequence_length?:M cache_indirection?:M",
    "output:T present_key?:T present_value?:T qk?:QK",
    domain=MS,
    types={"T": FLOAT_TYPES, "QK": FLOAT_TYPES, "M": INT32},
    attrs={"num_heads": (INT, REQUIRED), "unidirectional": (INT, 0), **_MASK},
    examples=[
        case(
            [_X, "float[B,L,32]", "float[B,L,32]", "float[96]", "", "", "float[B,2,P,16]", "float[B,2,P,16]"],
            ["float[B,S,32]", "float[B,2,P + L,16]", "float[B,2,P + L,16]"],
            num_heads=2,
        ),
        case(
            [_X, "float[B,L,32]", "float[B,L,24]"], ["float[B,S,24]", "float[B,2,L,16]", "float[B,2,L,12]"], num_heads=2
        ),
        case(
            [_X, "float[B,2,L,16]", "float[B,2,L,16]", "", "", "", "float[B,2,P,16]", "float[B,2,P,16]"],
            ["float[B,S,32]", "float[B,2,P + L,16]", "float[B,2,P + L,16]"],
            num_heads=2,
        ),
        case(["float[B,S,2,3,16]"], ["float[B,S,32]", "float[B,2,S,16]"], num_heads=2),
        case([_X, "float[B,L,2,2,8]"], ["float[B,S,16]", "float[B,2,L,8]"], num_heads=2),
        case(
            [
                "float[B,1,32]",
                "float[B,1,32]",
                "float[B,1,32]",
                "",
                "",
                "",
                "float[B,2,M,16]",
                "float[B,2,M,16]",
                "int32[]",
            ],
            ["float[B,1,32]", "float[B,2,M,16]", "float[B,2,M,16]"],
            num_heads=2,
        ),
        case([_X, "float[B,L,30]", "float[B,L,30]"], ["float[B,S,30]"], num_heads=4, error="shape-mismatch"),
        case(["float[B,32]"], ["float[*]"], num_heads=2, error="shape-mismatch"),
    ],
)
def multi_head_attention(ctx: RuleContext) -> list:
    n = _heads(ctx)
    q = _rank(ctx, 0, (3, 5), "query")
    b, s = (q[0], q[1]) if q is not None else (None, None)
    length, k_head, v_hidden, v_head = _key_side(ctx, q, n)
    past_k = _rank(ctx, 6, (4,), "past_key")
    past_v = _rank(ctx, 7, (4,), "past_value")
    if ctx.has(8):  # past_sequence_length: the past buffers are the present ones (max length)
        present_k, present_v = past_k, past_v
        total = past_k[2] if past_k is not None else None
    else:
        total = length if past_k is None or length is None else D.add(past_k[2], length)
        present_k, present_v = (b, n, total, k_head), (b, n, total, v_head)
    return [(b, s, v_hidden), present_k, present_v, (b, n, s, total)][: ctx.n_outputs]


_GQA = {"num_heads": 4, "kv_num_heads": 2}


@operator(
    "GroupQueryAttention",
    "query:T key?:T value?:T past_key?:T_CACHE past_value?:T_CACHE seqlens_k:M total_sequence_length:M "
    "cos_cache?:T sin_cache?:T position_ids?:tensor(int64) attention_bias?:T head_sink?:T k_scale?:T_KV_SCALE "
    "v_scale?:T_KV_SCALE q_norm_weight?:T k_norm_weight?:T query_seqlens?:M",
    "output:T present_key?:T_CACHE present_value?:T_CACHE output_qk?:T",
    domain=MS,
    types={
        "T": ("tensor(float16)", "tensor(bfloat16)", "tensor(float)"),
        "T_CACHE": FLOAT_TYPES + INT8_TYPES[::-1] + ("tensor(float8e4m3fn)",),
        "T_KV_SCALE": F32,
        "M": INT32,
    },
    attrs={
        "num_heads": (INT, REQUIRED),
        "kv_num_heads": (INT, REQUIRED),
        "scale": (FLOAT, None),
        "softcap": (FLOAT, 0.0),
        "local_window_size": (INT, -1),
        "do_rotary": (INT, 0),
        "rotary_interleaved": (INT, 0),
        "causal": (INT, 1),
        "smooth_softmax": (INT, -1),
        "qk_output": (INT, 0),
        "sliding_window_cache": (INT, 0),
        "k_quant_type": (STRING, "NONE"),
        "v_quant_type": (STRING, "NONE"),
        "kv_cache_bit_width": (INT, None),
        "qk_norm_epsilon": (FLOAT, 1e-6),
        "q_norm_epsilon": (FLOAT, None),
        "k_norm_epsilon": (FLOAT, None),
    },
    examples=[
        case(
            ["float[B,S,64]", "float[B,S,32]", "float[B,S,32]", "", "", "int32[B]", "int32[]"],
            ["float[B,S,64]", "float[B,2,S,16]", "float[B,2,S,16]", "float[B,4,S,?]"],
            attrs=_GQA,
        ),
        case(
            ["float16[B,S,128]", "", "", "", "", "int32[B]", "int32[]={S}"],
            ["float16[B,S,64]", "float16[B,2,S,16]", "float16[B,2,S,16]", "float16[B,4,S,S]"],
            attrs=_GQA,
        ),
        case(
            [
                "float[B,1,64]",
                "float[B,1,32]",
                "float[B,1,32]",
                "float[B,2,P,16]",
                "float[B,2,P,16]",
                "int32[B]",
                "int32[]={P + 1}",
            ],
            ["float[B,1,64]", "float[B,2,P + 1,16]", "float[B,2,P + 1,16]"],
            attrs=_GQA,
        ),
        case(
            [
                "float[B,1,64]",
                "float[B,1,32]",
                "float[B,1,32]",
                "float[B,2,M,16]",
                "float[B,2,M,16]",
                "int32[B]",
                "int32[]",
            ],
            ["float[B,1,64]", "float[B,2,?,16]", "float[B,2,?,16]"],
            attrs=_GQA,
        ),
        case(
            ["float[B,S,64]", "float[B,S,48]", "float[B,S,48]", "", "", "int32[B]", "int32[]"],
            ["float[B,S,64]"],
            attrs=_GQA,
            error="shape-mismatch",
        ),
        case(
            ["float[B,S,64]", "float[B,S,32]", "float[B,S,32]", "", "", "int32[B]", "int32[]"],
            ["float[*]"],
            num_heads=4,
            error="bad-attribute",
        ),
        case(
            ["float[B,S,64]", "float[B,S,32]", "float[B,S,32]", "", "", "int32[B]", "int32[]"],
            ["float[B,S,64]", "float[B,2,S,16]"],
            attrs=_GQA,
            error="arity",
        ),
    ],
)
def group_query_attention(ctx: RuleContext) -> list:
    n, kv = _heads(ctx), _heads(ctx, "kv_num_heads")
    wanted = [ctx.wants_output(k) for k in (1, 2)]
    if wanted[0] != wanted[1]:
        ctx.error("arity", "GroupQueryAttention: present_key and present_value come together (onnxruntime's kernel)")
    q = _rank(ctx, 0, (3,), "query")
    k = _rank(ctx, 1, (3,), "key")
    past = _rank(ctx, 3, (4,), "past_key")
    b, s = (q[0], q[1]) if q is not None else (None, None)
    if not ctx.has(1):  # packed QKV: (B, S, (N + 2 N_kv) H)
        head = None if q is None else _per_head(ctx, q[2], n + 2 * kv, "packed QKV width")
        hidden = None if head is None else D.mul(n, head)
        kv_len = s
    else:
        hidden = None if q is None else q[2]
        head = None if q is None else _per_head(ctx, q[2], n, "query hidden size")
        if k is not None and head is not None:
            same_dim(ctx, k[2], D.mul(kv, head), "key hidden size and kv_num_heads * head size")
        kv_len = k[1] if k is not None else None
    # With right-padded query chunks (query_seqlens) the total is only an upper bound.
    total = None if ctx.has(16) else _scalar(ctx, 6)
    present_len = _present_length(ctx, past, total, kv_len)
    quantized = ctx.attr("k_quant_type", "NONE") != "NONE" or ctx.attr("v_quant_type", "NONE") != "NONE"
    # A 4-bit cache packs two values a byte. The present's type is the past's (the schema binds
    # it); without a past, an unquantized cache has the query's (checked for float and float16).
    present: Any = (b, kv, present_len, None if quantized else head)
    if past is None and not quantized:
        present = TensorType(ctx.elem(0), present)
    return [(b, s, hidden), present, present, (b, n, s, total)][: ctx.n_outputs]


def _scalar(ctx: RuleContext, i: int) -> Dim:
    dims = ctx.known_dims(i) if ctx.has(i) else None
    return dims[0] if dims is not None and len(dims) == 1 else None


def _present_length(ctx: RuleContext, past: tuple[Dim, ...] | None, total: Dim, kv_len: Dim) -> Dim:
    """max(total_sequence_length, past length): the cache grows to the total or is a larger buffer.

    Without a past the kernel requires total == the new key length. A window cache, right-padded
    query chunks and quantized caches change the rule, and are not claimed.
    """
    if ctx.attr("sliding_window_cache", 0) or ctx.has(16):
        ctx.because("the cache length of a window cache or of padded query chunks is not claimed")
        return None
    if past is None:
        return kv_len
    if total is None:
        ctx.contents_unknown(6, "the present length (max of total_sequence_length and the past length)")
        return None
    return D.dmax(total, past[2])


@operator(
    "RelativePositionBias",
    "bias_table:T query_length:U key_length:U",
    "output:T",
    domain=MS,
    types={"T": ("tensor(float)", "tensor(float16)"), "U": ("tensor(int64)",)},
    attrs={"max_distance": (INT, REQUIRED), "is_bidirectional": (INT, 0)},
    examples=[
        case(["float[32,8]", "int64[]={S}", "int64[]={S}"], ["float[1,8,S,S]"], max_distance=128, is_bidirectional=1),
        case(["float16[32,8]", "int64[]", "int64[]"], ["float16[1,8,?,?]"], max_distance=128),
    ],
)
def relative_position_bias(ctx: RuleContext) -> list:
    """T5's bias: (1, num_heads, query_length, key_length), the heads from bias_table (buckets, heads)."""
    table = _rank(ctx, 0, (2,), "bias_table")
    heads = table[1] if table is not None else None
    q, k = _scalar(ctx, 1), _scalar(ctx, 2)
    if q is None or k is None:
        ctx.because("the query and key lengths are read from inputs whose contents are not known", 1, 2)
    return [(1, heads, q, k)]
