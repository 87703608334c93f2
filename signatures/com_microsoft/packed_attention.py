"""Attention over packed and paged tokens: PackedAttention, PackedMultiHeadAttention, PagedAttention,
SparsePagedAttention, SparseAttention; RemovePadding and RestorePadding, which pack and unpack;
RMSNormRotary, the normalization and rotation in front of them.

Packed operators take the real tokens of a batch concatenated along one axis (``token_count``)
instead of a padded (batch, sequence) pair, so their outputs are (token_count, hidden). Paged
and sparse caches are updated in place: each ``*_cache_out`` / ``present_*`` output is its input
cache, shape and type. Of these only SparseAttention has a CPU kernel (checked in
tests/test_contrib_b_runtime.py); the others follow the schemas' documentation and agree with
onnxruntime's schema inference where it infers (checked there too).
"""

from __future__ import annotations

from onnx import TensorProto

from infer.contract.context import RuleContext, RuleError
from infer.core import dims as D
from infer.core.dims import Dim
from infer.core.types import TensorType
from signatures.com_microsoft import F32, FLOAT, FLOAT_TYPES, INT, INT32, INTS, MS, REQUIRED, STRING
from signatures.kit.helpers import NONZERO, flag, same_dim
from signatures.kit.operator import case, operator

Shape = tuple[Dim, ...]
_F_F16 = ("tensor(float)", "tensor(float16)")
_HALF = ("tensor(float16)", "tensor(bfloat16)")
_PAGED_T = {"T": _HALF, "T_KV_SCALE": F32, "S": INT32}
_QUANT = {"k_quant_type": (STRING, "NONE"), "v_quant_type": (STRING, "NONE")}

_PAGED_IN = "cumulative_sequence_length:S past_seqlens:S block_table:S"
_NORMS = "q_norm_weight?:T k_norm_weight?:T k_scale?:T_KV_SCALE v_scale?:T_KV_SCALE attention_metadata?:S"


def _heads(ctx: RuleContext, name: str) -> int:
    n = ctx.require(name)
    if n <= 0:
        raise RuleError("bad-attribute", f"{name} must be positive, is {n}")
    return int(n)


def _shape(ctx: RuleContext, i: int, ranks: tuple[int, ...], what: str) -> Shape | None:
    """Input ``i``'s shape when supplied and known, checked to have one of ``ranks``."""
    s = ctx.shape(i) if ctx.has(i) else None
    if s is not None and len(s) not in ranks:
        raise RuleError("shape-mismatch", f"{what} must have rank {' or '.join(map(str, ranks))}, has {len(s)}")
    return s


def _divide(ctx: RuleContext, total: Dim, n: int, what: str) -> Dim:
    """``total / n``; a known total that ``n`` does not divide is refused by the kernels."""
    if isinstance(total, int) and total % n:
        raise RuleError("shape-mismatch", f"{what} {total} is not a multiple of {n}")
    return D.floordiv(total, n)


def _caches_together(ctx: RuleContext) -> None:
    """The updated key and value caches are asked for together or not at all (onnxruntime's
    schema refuses one without the other); a LATENT cache has no value cache to return."""
    wanted = [ctx.wants_output(k) for k in (1, 2)]
    if ctx.has(4) and wanted[0] != wanted[1]:
        raise RuleError("arity", "key_cache_out and value_cache_out must be both present or both absent")
    if not ctx.has(4) and wanted[1]:
        raise RuleError("arity", "value_cache_out needs a value_cache input")


def _cache_out(ctx: RuleContext, i: int) -> TensorType | Shape | None:
    """An in-place cache output: the input cache's shape and element type."""
    if not ctx.has(i):
        return None
    return TensorType(ctx.elem(i), ctx.shape(i))


@operator(
    "PackedAttention",
    "input:T weights:T bias:T token_offset:M cumulative_sequence_length:M attention_bias?:T",
    "output:T",
    domain=MS,
    types={"T": _F_F16, "M": INT32},
    attrs={"num_heads": (INT, REQUIRED), "qkv_hidden_sizes": (INTS, None), "scale": (FLOAT, None)},
    examples=[
        case(["float[T,32]", "float[32,96]", "float[96]", "int32[B,S]", "int32[B + 1]"], ["float[T,32]"], num_heads=4),
        case(
            ["float16[T,32]", "float16[32,80]", "float16[80]", "int32[B,S]", "int32[B + 1]"],
            ["float16[T,16]"],
            num_heads=2,
            qkv_hidden_sizes=[32, 32, 16],
        ),
        case(
            ["float[T,32]", "float[32,96]", "float[90]", "int32[B,S]", "int32[B + 1]"],
            ["float[T,32]"],
            num_heads=4,
            error="shape-mismatch",
        ),
    ],
)
def packed_attention(ctx: RuleContext) -> list:
    """(token_count, v_hidden): Attention on packed tokens; v_hidden is qkv_hidden_sizes[2],
    else a third of the weights' width."""
    _heads(ctx, "num_heads")
    x = _shape(ctx, 0, (2,), "input")
    w = _shape(ctx, 1, (2,), "weights")
    b = _shape(ctx, 2, (1,), "bias")
    width = w[1] if w is not None else (b[0] if b is not None else None)
    if w is not None and b is not None:
        same_dim(ctx, w[1], b[0], "weights' and bias' widths")
    if x is not None and w is not None:
        same_dim(ctx, x[1], w[0], "input hidden size and weights' rows")
    sizes = ctx.attr("qkv_hidden_sizes")
    if sizes:
        if len(sizes) != 3:
            raise RuleError("bad-attribute", f"qkv_hidden_sizes needs 3 entries, has {len(sizes)}")
        if width is not None:
            same_dim(ctx, width, sum(sizes), "weights' width and the sum of qkv_hidden_sizes")
        v_hidden: Dim = sizes[2]
    else:
        v_hidden = None if width is None else _divide(ctx, width, 3, "the weights' width")
    return [(None if x is None else x[0], v_hidden)]


@operator(
    "PackedMultiHeadAttention",
    "query:T key?:T value?:T bias?:T token_offset:M cumulative_sequence_length:M attention_bias?:T",
    "output:T",
    domain=MS,
    types={"T": _F_F16, "M": INT32},
    attrs={"mask_filter_value": (FLOAT, None), "num_heads": (INT, REQUIRED), "scale": (FLOAT, None)},
    examples=[
        case(
            ["float[T,32]", "float[T,32]", "float[T,48]", "", "int32[B,S]", "int32[B + 1]"],
            ["float[T,48]"],
            num_heads=4,
        ),
        case(["float16[T,4,3,8]", "", "", "", "int32[B,S]", "int32[B + 1]"], ["float16[T,32]"], num_heads=4),
        case(
            ["float[T,32,1]", "", "", "", "int32[B,S]", "int32[B + 1]"],
            ["float[*]"],
            num_heads=4,
            error="shape-mismatch",
        ),
    ],
)
def packed_multi_head_attention(ctx: RuleContext) -> list:
    """(token_count, v_hidden): the value's width, or N * H of a packed (T, N, 3, H) query."""
    _heads(ctx, "num_heads")
    q = _shape(ctx, 0, (2, 4), "query")
    if q is not None and len(q) == 4:
        return [(q[0], D.mul(q[1], q[3]))]
    v = _shape(ctx, 2, (2,), "value")
    k = _shape(ctx, 1, (2,), "key")
    if q is not None and k is not None:
        same_dim(ctx, q[1], k[1], "query and key hidden sizes")
    tokens = q[0] if q is not None else None
    return [(tokens, None if v is None else v[1])]


def _paged_head_size(ctx: RuleContext, q: Shape | None, n: int, kv: int) -> Dim:
    """The head size: query's width over num_heads, or over num_heads + 2 kv_num_heads (packed QKV)."""
    if q is None:
        return None
    if ctx.has(1):
        return _divide(ctx, q[1], n, "query's width over num_heads")
    return _divide(ctx, q[1], n + 2 * kv, "packed QKV's width over num_heads + 2 * kv_num_heads")


def _v_head_size(ctx: RuleContext, layout: str, head: Dim) -> Dim:
    """The value head's width: v_head_size, where 0 (its default, also written explicitly) means
    the head size; a narrower one is valid only with a LATENT cache."""
    v_head: int = ctx.attr("v_head_size", 0)
    if v_head < 0:
        raise RuleError("bad-attribute", f"v_head_size must not be negative, is {v_head}")
    if v_head == 0:
        return head
    if layout != "LATENT":
        raise RuleError("bad-attribute", "v_head_size is valid only with kv_cache_layout LATENT")
    if head is not None and ctx.less(head, v_head) is True:
        raise RuleError("bad-attribute", f"v_head_size {v_head} exceeds the head size {D.to_str(head)}")
    return v_head


_PAGED = ["int32[B + 1]", "int32[B]", "int32[B,P]"]


@operator(
    "PagedAttention",
    f"query:T key?:T value?:T key_cache:T_CACHE value_cache?:T_CACHE {_PAGED_IN} cos_cache?:T sin_cache?:T "
    f"slot_mapping?:S head_sink?:T {_NORMS}",
    "output:T key_cache_out?:T_CACHE value_cache_out?:T_CACHE",
    domain=MS,
    types={**_PAGED_T, "T_CACHE": _HALF + ("tensor(int8)", "tensor(float8e4m3fn)", "tensor(uint8)")},
    attrs={
        "do_rotary": (INT, None),
        "is_causal": (INT, 1),
        "k_cache_dtype": (STRING, ""),
        **_QUANT,
        "kv_cache_layout": (STRING, "SEPARATE"),
        "kv_num_heads": (INT, REQUIRED),
        "local_window_size": (INT, -1),
        "num_heads": (INT, REQUIRED),
        "qk_norm_epsilon": (FLOAT, None),
        "rotary_interleaved": (INT, None),
        "rotary_offset": (INT, None),
        "scale": (FLOAT, None),
        "softcap": (FLOAT, None),
        "v_cache_dtype": (STRING, ""),
        "v_head_size": (INT, 0),
    },
    examples=[
        case(
            ["float16[T,64]", "float16[T,32]", "float16[T,32]", "float16[N,16,2,16]", "float16[N,16,2,16]", *_PAGED],
            ["float16[T,64]", "float16[N,16,2,16]", "float16[N,16,2,16]"],
            num_heads=4,
            kv_num_heads=2,
        ),
        case(
            ["bfloat16[T,128]", "", "", "int8[N,16,2,8]", "int8[N,16,2,8]", *_PAGED],
            ["bfloat16[T,64]", "int8[N,16,2,8]", "int8[N,16,2,8]"],
            num_heads=4,
            kv_num_heads=2,
        ),
        case(
            ["float16[T,256]", "float16[T,64]", "", "float16[N,16,1,64]", "", *_PAGED],
            ["float16[T,128]", "float16[N,16,1,64]"],
            num_heads=4,
            kv_num_heads=1,
            kv_cache_layout="LATENT",
            v_head_size=32,
        ),
        case(
            ["float16[T,62]", "float16[T,32]", "float16[T,32]", "float16[N,16,2,16]", "float16[N,16,2,16]", *_PAGED],
            ["float16[*]"],
            num_heads=4,
            kv_num_heads=2,
            error="shape-mismatch",
        ),
        case(
            ["float16[T,64]", "float16[T,32]", "float16[T,32]", "float16[N,16,2,16]", "float16[N,16,2,16]", *_PAGED],
            ["float16[*]"],
            num_heads=4,
            kv_num_heads=2,
            v_head_size=8,
            error="bad-attribute",
        ),
        case(
            ["float16[T,64]", "float16[T,32]", "float16[T,32]", "float16[N,16,2,16]", "float16[N,16,2,16]", *_PAGED],
            ["float16[*]", "float16[*]"],
            num_heads=4,
            kv_num_heads=2,
            error="arity",
        ),
    ],
)
def paged_attention(ctx: RuleContext) -> list:
    """(num_tokens, num_heads * v_head_size), v_head_size the head size unless a LATENT cache
    names a narrower one; the caches are updated in place."""
    n, kv = _heads(ctx, "num_heads"), _heads(ctx, "kv_num_heads")
    q = _shape(ctx, 0, (2,), "query")
    _shape(ctx, 3, (4,), "key_cache")
    head = _paged_head_size(ctx, q, n, kv)
    layout = ctx.attr("kv_cache_layout", "SEPARATE") or "SEPARATE"
    if layout not in ("SEPARATE", "LATENT"):
        raise RuleError("bad-attribute", f"kv_cache_layout {layout!r} is neither SEPARATE nor LATENT")
    v_head = _v_head_size(ctx, layout, head)
    if layout == "LATENT" and (ctx.has(2) or ctx.has(4)):
        raise RuleError("bad-attribute", "a LATENT cache has no value nor value_cache input")
    _caches_together(ctx)
    width = D.mul(n, v_head)
    tokens = None if q is None else q[0]
    return [(tokens, width), _cache_out(ctx, 3), _cache_out(ctx, 4)][: ctx.n_outputs]


@operator(
    "SparsePagedAttention",
    f"query:T key?:T value?:T key_cache:T_CACHE value_cache:T_CACHE {_PAGED_IN} slot_mapping?:S "
    "selected_indices:S selected_counts:S auxiliary_key?:T auxiliary_value?:T auxiliary_lengths?:S cos_cache?:T "
    f"sin_cache?:T head_sink?:T {_NORMS}",
    "output:T key_cache_out?:T_CACHE value_cache_out?:T_CACHE",
    domain=MS,
    types={**_PAGED_T, "T_CACHE": _HALF + ("tensor(int8)",)},
    attrs={
        "attention_mode": (STRING, "selected_only"),
        "auxiliary_cache_layout": (STRING, "contiguous"),
        "auxiliary_kv_shared": (INT, 0),
        "do_rotary": (INT, 0),
        "is_causal": (INT, 1),
        **_QUANT,
        "kv_num_heads": (INT, REQUIRED),
        "local_window_size": (INT, -1),
        "num_heads": (INT, REQUIRED),
        "qk_norm_epsilon": (FLOAT, 1e-6),
        "rotary_interleaved": (INT, 0),
        "rotary_offset": (INT, 0),
        "scale": (FLOAT, None),
        "selected_kv_source": (STRING, "main"),
        "softcap": (FLOAT, None),
    },
    examples=[
        case(
            [
                "float16[T,64]",
                "float16[T,32]",
                "float16[T,32]",
                "float16[N,16,2,16]",
                "float16[N,16,2,16]",
                *_PAGED,
                "",
                "int32[T,E]",
                "int32[T]",
            ],
            ["float16[T,64]", "float16[N,16,2,16]", "float16[N,16,2,16]"],
            num_heads=4,
            kv_num_heads=2,
        ),
        case(
            [
                "float16[T,64]",
                "float16[T,32]",
                "float16[T,32]",
                "float16[N,16,2,16]",
                "float16[N,16,2,16]",
                *_PAGED,
                "",
                "int32[U,E]",
                "int32[U]",
            ],
            ["float16[*]"],
            num_heads=3,
            kv_num_heads=2,
            error="shape-mismatch",
        ),
    ],
)
def sparse_paged_attention(ctx: RuleContext) -> list:
    """(token_count, num_heads * head_size); the caches are updated in place."""
    n, kv = _heads(ctx, "num_heads"), _heads(ctx, "kv_num_heads")
    q = _shape(ctx, 0, (2,), "query")
    head = _paged_head_size(ctx, q, n, kv)
    _caches_together(ctx)
    sel = _shape(ctx, 9, (2,), "selected_indices")
    tokens = None if q is None else q[0]
    if sel is not None:
        tokens = sel[0] if tokens is None else same_dim(ctx, tokens, sel[0], "query tokens and selected_indices rows")
    return [(tokens, D.mul(n, head)), _cache_out(ctx, 3), _cache_out(ctx, 4)][: ctx.n_outputs]


_SPARSE = ["int32[1,3]", "int32[1,2]", "int32[]", "int32[B]"]


@operator(
    "SparseAttention",
    "query:T key?:T value?:T past_key:T past_value:T block_row_indices:M block_col_indices:M total_sequence_length:M "
    "key_total_sequence_lengths:M cos_cache?:T sin_cache?:T",
    "output:T present_key:T present_value:T",
    domain=MS,
    types={"T": FLOAT_TYPES, "M": INT32},
    attrs={
        "do_rotary": (INT, None),
        "kv_num_heads": (INT, REQUIRED),
        "num_heads": (INT, REQUIRED),
        "rotary_interleaved": (INT, None),
        "scale": (FLOAT, None),
        "sparse_block_size": (INT, REQUIRED),
    },
    examples=[
        case(
            ["float[B,S,32]", "float[B,S,8]", "float[B,S,8]", "float[B,1,M,8]", "float[B,1,M,8]", *_SPARSE],
            ["float[B,S,32]", "float[B,1,M,8]", "float[B,1,M,8]"],
            num_heads=4,
            kv_num_heads=1,
            sparse_block_size=16,
        ),
        case(
            ["float16[B,S,48]", "", "", "float16[B,1,M,8]", "float16[B,1,M,8]", *_SPARSE],
            ["float16[B,S,32]", "float16[B,1,M,8]", "float16[B,1,M,8]"],
            num_heads=4,
            kv_num_heads=1,
            sparse_block_size=16,
        ),
        case(
            ["float[B,S,32]", "float[B,S,8]", "float[B,S,8]", "float[B,1,M,16]", "float[B,1,M,16]", *_SPARSE],
            ["float[B,S,64]", "float[B,1,M,16]", "float[B,1,M,16]"],
            num_heads=4,
            kv_num_heads=1,
            sparse_block_size=16,
            error="shape-mismatch",
        ),
    ],
)
def sparse_attention(ctx: RuleContext) -> list:
    """(batch, sequence, num_heads * head_size); present_key and present_value are the past
    buffers (onnxruntime's kernel writes them in place: the outputs must share their memory)."""
    n, kv = _heads(ctx, "num_heads"), _heads(ctx, "kv_num_heads")
    q = _shape(ctx, 0, (3,), "query")
    pk = _shape(ctx, 3, (4,), "past_key")
    pv = _shape(ctx, 4, (4,), "past_value")
    block = ctx.require("sparse_block_size")
    if block <= 0:
        raise RuleError("bad-attribute", f"sparse_block_size must be positive, is {block}")
    if n % kv:
        raise RuleError("bad-attribute", f"num_heads {n} is not a multiple of kv_num_heads {kv}")
    head = None if pk is None else pk[3]
    if q is not None:
        packed = not ctx.has(1)
        per = _divide(ctx, q[2], n + 2 * kv if packed else n, "query's width over its heads")
        head = per if head is None else same_dim(ctx, head, per, "the head size of query and past_key")
    for what, s in (("past_key", pk), ("past_value", pv)):
        if s is not None:
            same_dim(ctx, s[1], kv, f"{what}'s heads and kv_num_heads")
    out = None if q is None else (q[0], q[1], D.mul(n, head))
    return [out, pk, pv]


@operator(
    "RemovePadding",
    "input:T sequence_token_count:M",
    "output:T token_offset:M cumulated_seq_len:M max_seq_len:M",
    domain=MS,
    types={"T": _F_F16, "M": INT32},
    examples=[
        case(["float[B,S,64]", "int32[B]"], ["float[?,64]", "int32[B,S]", "int32[B + 1]", "int32[1]"]),
        case(["float16[2,S,64]", "int32[2]={3,S}"], ["float16[S + 3,64]", "int32[2,S]", "int32[3]", "int32[1]"]),
    ],
)
def remove_padding(ctx: RuleContext) -> list:
    """(total_tokens, hidden), token_offset (batch, sequence), cumulated_seq_len (batch + 1),
    max_seq_len (1); total_tokens is the sum of sequence_token_count's contents."""
    x = _shape(ctx, 0, (3,), "input")
    counts = ctx.known_dims(1)
    total = None
    if counts is not None:
        total = D.total(counts)
    else:
        ctx.contents_unknown(1, "the number of tokens")
    b, s, hidden = x if x is not None else (None, None, None)
    return [(total, hidden), (b, s), (D.add(b, 1),), (1,)]


@operator(
    "RestorePadding",
    "input:T token_offset:M",
    "output:T",
    domain=MS,
    types={"T": _F_F16, "M": INT32},
    examples=[
        case(["float[T,64]", "int32[B,S]"], ["float[B,S,64]"]),
        case(["float[T,64,1]", "int32[B,S]"], ["float[*]"], error="shape-mismatch"),
    ],
)
def restore_padding(ctx: RuleContext) -> list:
    """(batch, sequence, hidden): batch and sequence from token_offset, hidden from the input."""
    x = _shape(ctx, 0, (2,), "input")
    offsets = _shape(ctx, 1, (2,), "token_offset")
    b, s = offsets if offsets is not None else (None, None)
    return [(b, s, None if x is None else x[1])]


_ROT = ["float[H]", "int64[B,S]", "bfloat16[C,4]", "bfloat16[C,4]"]


@operator(
    "RMSNormRotary",
    "X:T scale:F position_ids:I cosine:TCos sine:TCos prefill_numerics?:TI",
    "Y:TOut normalized_fp32?:F",
    domain=MS,
    types={
        "T": ("tensor(bfloat16)", "tensor(float16)"),
        "TCos": ("tensor(bfloat16)", "tensor(float)"),
        "TOut": ("tensor(bfloat16)", "tensor(float16)"),
        "F": F32,
        "I": ("tensor(int64)",),
        "TI": INT32,
    },
    attrs={
        "epsilon": (FLOAT, 1e-6),
        "flatten_batch": (INT, 0),
        "input_start": (INT, 0),
        "input_width": (INT, 0),
        "output_fp16": (INT, 0),
        "rotary_embedding_dim": (INT, REQUIRED),
        "use_fp32_arithmetic": (INT, 1),
    },
    examples=[
        case(["bfloat16[B,S,4,16]", *_ROT], ["bfloat16[B,S,64]", "float[B,S,4,16]"], rotary_embedding_dim=8),
        case(
            ["float16[B,S,4,16]", *_ROT],
            ["float16[1,B*S,48]", "float[B,S,4,12]"],
            rotary_embedding_dim=8,
            input_width=12,
            input_start=2,
            output_fp16=1,
            flatten_batch=1,
        ),
        case(["bfloat16[B,S,4,16]", *_ROT], ["unknown"], rotary_embedding_dim=8, input_start=2, error="shape-mismatch"),
        case(["bfloat16[B,S,4,16]", *_ROT], ["unknown"], rotary_embedding_dim=9, error="bad-attribute"),
    ],
)
def rms_norm_rotary(ctx: RuleContext) -> list:
    """X (B, S, heads, stride): Y (B, S, heads * width), or (1, B * S, heads * width) with
    flatten_batch, in bfloat16 (float16 with output_fp16); normalized_fp32 (B, S, heads, width).
    ``width`` is input_width, else the stride; ``[input_start, input_start + width)`` must lie in
    the stride and the (positive, even) rotary_embedding_dim in the width."""
    x = _shape(ctx, 0, (4,), "X")
    rot, start, width = ctx.require("rotary_embedding_dim"), ctx.attr("input_start", 0), ctx.attr("input_width", 0)
    if rot <= 0 or rot % 2 or start < 0 or width < 0:
        raise RuleError(
            "bad-attribute",
            f"rotary_embedding_dim {rot} must be positive and even, input_start and input_width not negative",
        )
    elem = TensorProto.FLOAT16 if flag(ctx, "output_fp16", 0, NONZERO) else TensorProto.BFLOAT16
    if x is None:
        return [TensorType(elem, None), None][: ctx.n_outputs]
    b, s, heads, stride = x
    w: Dim = width or stride
    for need, what in ((D.add(w, start), "input_start + the width"), (rot, "rotary_embedding_dim")):
        if ctx.less(stride if what != "rotary_embedding_dim" else w, need) is True:
            raise RuleError("shape-mismatch", f"{what} exceeds the input's width")
    lead = (1, D.mul(b, s)) if flag(ctx, "flatten_batch", 0, NONZERO) else (b, s)
    return [TensorType(elem, lead + (D.mul(heads, w),)), (b, s, heads, w)][: ctx.n_outputs]
