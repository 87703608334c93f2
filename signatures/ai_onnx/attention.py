"""Attention and the layers around it: RoPE, RMSNorm, SwiGLU, KV-cache updates, linear attention.

Attention-style operators take Q, K and V either as 4-D ``(batch, heads, seq, head_size)`` or
packed as 3-D ``(batch, seq, heads * head_size)`` with the head counts given by the attributes
``q_num_heads`` and ``kv_num_heads``. The rules unpack both forms into one view per input, make
the inputs agree on the extents they share (a contradiction is reported, an unprovable equality
recorded as an assumption), and build the outputs from that view, so a symbolic sequence length
stays exact: ``present_key`` of ``Attention`` has ``past_seq + seq`` positions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import overload

from infer.contract.context import RuleContext, RuleError
from infer.core import dims as D
from infer.core.dims import Dim
from infer.core.types import TensorType
from signatures.kit.helpers import norm_axis, same_dim, unidirectional
from signatures.kit.registry import example, rule

Shape = tuple[Dim, ...]


# -- shared helpers -------------------------------------------------------------------------------


def agree(ctx: RuleContext, what: str, *ds: Dim) -> Dim:
    """One extent several inputs must share: contradictions are reported, a known one preferred."""
    out: Dim = None
    for d in ds:
        if d is None:
            continue
        out = d if out is None else same_dim(ctx, out, d, what)
    return out


def split_heads(hidden: Dim, heads: Dim, what: str) -> Dim:
    """``hidden / heads`` for a packed 3-D input; a remainder with known extents is malformed."""
    if hidden is None or heads is None:
        return None
    if isinstance(hidden, int) and isinstance(heads, int) and hidden % heads:
        raise RuleError("shape-mismatch", f"{what} {hidden} is not divisible by {heads} heads")
    return D.floordiv(hidden, heads)


def common_rank(ctx: RuleContext, inputs: tuple[int, ...], allowed: tuple[int, ...]) -> int | None:
    """The rank ``inputs`` must share (``None`` when none is known); one outside ``allowed`` is malformed."""
    ranks = {r for i in inputs if (r := ctx.rank(i)) is not None}
    if len(ranks) > 1:
        raise RuleError("shape-mismatch", f"inputs of ranks {sorted(ranks)} must have one rank")
    rank = ranks.pop() if ranks else None
    if rank is not None and rank not in allowed:
        raise RuleError("shape-mismatch", f"inputs must have rank {' or '.join(map(str, allowed))}, not {rank}")
    return rank


def check_rank(ctx: RuleContext, i: int, rank: int, what: str) -> Shape | None:
    """Input ``i``'s shape, which must have ``rank`` dims (``None`` if absent or of unknown rank)."""
    s = ctx.shape(i) if ctx.has(i) else None
    if s is not None and len(s) != rank:
        raise RuleError("shape-mismatch", f"{what} must have rank {rank}, has {len(s)}")
    return s


def at(s: Shape | None, axis: int) -> Dim:
    return None if s is None else s[axis]


@overload
def positive_heads(name: str, value: int) -> int: ...
@overload
def positive_heads(name: str, value: None) -> None: ...
def positive_heads(name: str, value: int | None) -> int | None:
    if value is not None and value <= 0:
        raise RuleError("bad-attribute", f"{name} must be positive, is {value}")
    return value


def check_groups(hq: Dim, hkv: Dim) -> None:
    """Query heads are shared out in groups over the key/value heads (GQA, MQA)."""
    if isinstance(hq, int) and isinstance(hkv, int) and hq % hkv:
        raise RuleError("shape-mismatch", f"{hq} query heads are not a multiple of {hkv} key/value heads")


def packed_heads(hidden: Dim, hq: Dim, hkv: Dim, head_size: Dim) -> Dim:
    """``hq * head_size`` where ``hidden = hkv * head_size``: kept in terms of ``hidden`` when exact."""
    if hidden is not None and isinstance(hq, int) and isinstance(hkv, int) and hq % hkv == 0:
        return D.mul(hq // hkv, hidden)
    return D.mul(hq, head_size)


# -- Attention ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _View:
    """A Q, K or V input as ``(batch, heads, seq, head_size)``; ``hidden`` is the packed 3-D extent."""

    batch: Dim = None
    heads: Dim = None
    seq: Dim = None
    size: Dim = None
    hidden: Dim = None


def _view(ctx: RuleContext, i: int, heads: int | None, what: str) -> _View:
    s = ctx.shape(i)
    if s is None:
        return _View(heads=heads)
    if len(s) == 4:
        return _View(s[0], s[1], s[2], s[3])
    return _View(s[0], heads, s[1], split_heads(s[2], heads, f"{what} hidden size"), s[2])


def _attention_heads(ctx: RuleContext, rank: int | None) -> tuple[int | None, int | None]:
    """``q_num_heads`` and ``kv_num_heads``: required with 3-D inputs, refused with 4-D from opset 25."""
    hq = positive_heads("q_num_heads", ctx.attr("q_num_heads"))
    hkv = positive_heads("kv_num_heads", ctx.attr("kv_num_heads"))
    if rank == 3 and (hq is None or hkv is None):
        raise RuleError("bad-attribute", "3-D Q, K and V need the attributes q_num_heads and kv_num_heads")
    if rank == 4 and ctx.version >= 25 and (hq is not None or hkv is not None):
        raise RuleError("bad-attribute", "q_num_heads and kv_num_heads must not be given with 4-D inputs")
    return hq, hkv


def _attention_25_checks(ctx: RuleContext) -> None:
    """Attention-25: window bounds are -1 (unbounded) or non-negative; the present caches come in pairs."""
    for name in ("left_window_size", "right_window_size"):
        w = ctx.attr(name, -1)
        if w < -1:
            raise RuleError("bad-attribute", f"{name} is {w}: it must be -1 (unbounded) or non-negative")
    wanted = [ctx.wants_output(i) for i in (1, 2)]
    if wanted[0] != wanted[1]:
        raise RuleError("arity", "present_key and present_value must be requested together")


@rule("Attention", since=23)
def attention(ctx: RuleContext) -> list:
    """Y is ``(B, Hq, S, Dv)`` (3-D: ``(B, S, Hq * Dv)``); the caches and scores have ``P + L`` keys."""
    rank = common_rank(ctx, (0, 1, 2), (3, 4))
    hq_attr, hkv_attr = _attention_heads(ctx, rank)
    if ctx.version >= 25:
        _attention_25_checks(ctx)
    if ctx.has(4) != ctx.has(5):
        raise RuleError("missing-input", "past_key and past_value must be given together")
    pk, pv = check_rank(ctx, 4, 4, "past_key"), check_rank(ctx, 5, 4, "past_value")
    nonpad = check_rank(ctx, 6, 1, "nonpad_kv_seqlen")
    if ctx.has(4) and ctx.has(6):
        ctx.error("arity", "Attention: nonpad_kv_seqlen cannot be combined with past_key and past_value")
    q, k, v = (_view(ctx, 0, hq_attr, "Q"), _view(ctx, 1, hkv_attr, "K"), _view(ctx, 2, hkv_attr, "V"))
    # Opsets 23 and 24 accept the head attributes with 4-D inputs too; they must then agree.
    batch = agree(ctx, "batch sizes", q.batch, k.batch, v.batch, at(pk, 0), at(pv, 0), at(nonpad, 0))
    hq = agree(ctx, "query heads", q.heads, hq_attr)
    hkv = agree(ctx, "key/value heads", k.heads, v.heads, at(pk, 1), at(pv, 1), hkv_attr)
    check_groups(hq, hkv)
    kv_seq = agree(ctx, "key and value sequence lengths", k.seq, v.seq)
    past = agree(ctx, "past key and value lengths", at(pk, 2), at(pv, 2)) if ctx.has(4) else 0
    total = D.add(past, kv_seq) if past is not None and kv_seq is not None else None
    k_size = agree(ctx, "key head sizes", at(pk, 3), k.size, q.size)
    v_size = agree(ctx, "value head sizes", at(pv, 3), v.size)

    if rank is None:
        ctx.because("the rank of Q, K and V is not known", 0, 1, 2)
        y: Shape | None = None
    elif rank == 4:
        y = (batch, hq, q.seq, v_size)
    else:
        y = (batch, q.seq, packed_heads(v.hidden, hq, hkv, v_size))
    if total is None:
        ctx.because("the total sequence length needs the key length and the past length", 1, 4)
    present_key = (batch, hkv, total, k_size)
    present_value = (batch, hkv, total, v_size)
    qk = (batch, hq, q.seq, total)
    if ctx.has(3):
        # The mask broadcasts to the scores; its last axis may be shorter than the total length.
        unidirectional(ctx, qk[:3] + (None,), ctx.shape(3))
    return [y, present_key, present_value, qk]


example("Attention", ["float[B,3,S,8]", "float[B,3,L,8]", "float[B,3,L,10]"], ["float[B,3,S,10]"], opset=23)
example(
    "Attention",
    ["float16[B,9,S,8]", "float16[B,3,L,8]", "float16[B,3,L,8]", "bool[S,L]"],
    ["float16[B,9,S,8]", "float16[B,3,L,8]", "float16[B,3,L,8]", "float16[B,9,S,L]"],
    opset=23,
)
example(
    "Attention",
    ["float[B,S,24]", "float[B,L,24]", "float[B,L,30]"],
    ["float[B,S,30]"],
    attrs={"q_num_heads": 3, "kv_num_heads": 3},
    opset=23,
)
example(
    "Attention",
    ["float[B,S,72]", "float[B,L,24]", "float[B,L,H]"],
    ["float[B,S,3*H]"],
    attrs={"q_num_heads": 9, "kv_num_heads": 3},
    opset=24,
)
example(
    "Attention",
    ["float[B,S,Q]", "float[B,L,K]", "float[B,L,V]", "", "float[B,3,P,E]", "float[B,3,P,F]"],
    ["float[B,S,V]", "float[B,3,P+L,E]", "float[B,3,P+L,F]", "float[B,3,S,P+L]"],
    attrs={"q_num_heads": 3, "kv_num_heads": 3},
    opset=23,
)
example(
    "Attention",
    ["float[2,3,4,8]", "float[2,3,6,8]", "float[2,3,6,8]", "float[4,18]", "float[2,3,12,8]", "float[2,3,12,8]"],
    ["float[2,3,4,8]", "float[2,3,18,8]", "float[2,3,18,8]", "float[2,3,4,18]"],
    opset=23,
)
example(
    "Attention",
    ["float[B,4,1,8]", "float[B,2,T,8]", "float[B,2,T,8]", "", "", "", "int64[B]"],
    ["float[B,4,1,8]", "float[B,2,T,8]", "float[B,2,T,8]", "float[B,4,1,T]"],
    attrs={"is_causal": 1},
    opset=24,
)
example(
    "Attention",
    ["float[B,S,32]", "float[B,L,8]", "float[B,L,6]"],
    ["float[B,S,24]"],
    attrs={"q_num_heads": 4, "kv_num_heads": 1, "is_causal": 1, "left_window_size": 2},
    opset=25,
)
example(
    "Attention",
    ["float[*]", "float[*]", "float[*]", "", "float[B,2,P,8]", "float[B,2,P,4]"],
    ["float[*]", "float[B,2,?,8]", "float[B,2,?,4]"],
    opset=25,
)
example(
    "Attention",
    ["float[2,3,4,8]", "float[2,3,6,8]", "float[2,3,6,8]"],
    ["float[2,3,4,8]"],
    attrs={"q_num_heads": 3, "kv_num_heads": 3},
    opset=24,
)
example(
    "Attention",
    ["float[2,3,4,8]", "float[2,3,6,8]", "float[2,3,6,8]"],
    ["float[2,3,4,8]"],
    attrs={"q_num_heads": 6, "kv_num_heads": 3},
    opset=23,
    error="shape-mismatch",
)
example(
    "Attention",
    ["float[2,3,4,8]", "float[2,3,6,8]", "float[2,3,6,8]", "", "float[2,3,1,8]", "float[2,3,1,8]", "int64[2]"],
    ["float[2,3,4,8]"],
    opset=24,
    error="arity",
)
example(
    "Attention",
    ["float[2,3,4,8]", "float[2,3,6,8]", "float[2,3,6,8]"],
    ["float[*]"],
    attrs={"q_num_heads": 3, "kv_num_heads": 3},
    opset=25,
    error="bad-attribute",
)
example("Attention", ["float[2,4,24]", "float[2,6,24]", "float[2,6,24]"], ["float[*]"], opset=23, error="bad-attribute")
example(
    "Attention", ["float[2,2,4,8]", "float[2,3,6,8]", "float[2,3,6,8]"], ["float[*]"], opset=23, error="shape-mismatch"
)
example(
    "Attention",
    ["float[2,3,4,8]", "float[3,3,6,8]", "float[2,3,6,8]"],
    ["float[2,3,4,8]"],
    opset=23,
    error="shape-mismatch",
)
example(
    "Attention",
    ["float[2,3,4,8]", "float[2,3,6,8]", "float[2,3,6,8]", "", "float[2,3,1,8]", ""],
    ["float[*]"],
    opset=23,
    error="missing-input",
)
example(
    "Attention",
    ["float[2,3,4,8]", "float[2,3,6,8]", "float[2,3,6,8]"],
    ["float[*]"],
    attrs={"left_window_size": -2},
    opset=25,
    error="bad-attribute",
)
example(
    "Attention",
    ["float[2,3,4,8]", "float[2,3,6,8]", "float[2,3,6,8]"],
    ["float[*]"],
    attrs={"right_window_size": -2},
    opset=25,
    error="bad-attribute",
)
example(
    "Attention",
    ["float[2,3,4,8]", "float[2,3,6,8]", "float[2,3,6,8]"],
    ["float[*]", "float[*]"],
    opset=25,
    error="arity",
)  # present_key without present_value
example(
    "Attention",
    ["float[2,3,4,8]", "float[2,3,6,8]", "float[2,3,6,8]"],
    ["float[2,3,4,8]", "float[2,3,6,8]", "float[2,3,6,8]"],
    attrs={"right_window_size": 0},
    opset=25,
)


# -- RotaryEmbedding ------------------------------------------------------------------------------


@rule("RotaryEmbedding", since=23)
def rotary_embedding(ctx: RuleContext) -> list:
    """Y has X's shape; the caches hold half the rotated width per position."""
    x = ctx.shape(0)
    if x is None:
        return [None]
    if len(x) not in (3, 4):
        raise RuleError("shape-mismatch", f"X must have rank 3 or 4, has {len(x)}")
    if len(x) == 3:
        heads = positive_heads("num_heads", ctx.attr("num_heads"))
        if heads is None:
            raise RuleError("bad-attribute", "a 3-D X needs the attribute num_heads")
        head_size = split_heads(x[2], heads, "the hidden size")
    else:
        head_size = x[3]
    rotary = ctx.attr("rotary_embedding_dim", 0) or head_size
    cache_rank = 2 if ctx.has(3) else 3  # (max_position, half) with position_ids, else (B, S, half)
    for i, name in ((1, "cos_cache"), (2, "sin_cache")):
        c = check_rank(ctx, i, cache_rank, name)
        if c is not None and rotary is not None:
            same_dim(ctx, c[-1], D.floordiv(rotary, 2), f"{name} width and half the rotary dimension")
    return [x]


example("RotaryEmbedding", ["float[B,H,S,64]", "float[B,S,32]", "float[B,S,32]"], ["float[B,H,S,64]"])
example(
    "RotaryEmbedding",
    ["float16[B,S,D]", "float16[M,R]", "float16[M,R]", "int64[B,S]"],
    ["float16[B,S,D]"],
    attrs={"num_heads": 4, "rotary_embedding_dim": 16, "interleaved": 1},
)
example("RotaryEmbedding", ["float[B,S,24]", "float[B,S,4]", "float[B,S,4]"], ["float[*]"], error="bad-attribute")
example("RotaryEmbedding", ["float[B,H,S,8]", "float[M,4]", "float[M,4]"], ["float[*]"], error="shape-mismatch")
example(
    "RotaryEmbedding", ["float[B,H,S,8]", "float[B,S,3]", "float[B,S,3]"], ["float[B,H,S,8]"], error="shape-mismatch"
)


# -- RMSNormalization -----------------------------------------------------------------------------


@rule("RMSNormalization", since=23)
def rms_normalization(ctx: RuleContext) -> list:
    """Y has X's shape (its element type is scale's, per the schema); scale broadcasts to X."""
    x = ctx.shape(0)
    if x is None:
        return [None]
    norm_axis(ctx, ctx.attr("axis", -1), len(x))
    unidirectional(ctx, x, ctx.shape(1))
    return [x]


example("RMSNormalization", ["float[B,S,64]", "float[64]"], ["float[B,S,64]"])
example("RMSNormalization", ["float16[N,C,H,W]", "float16[C,1,1]"], ["float16[N,C,H,W]"], attrs={"axis": 1})
example("RMSNormalization", ["float[B,S,64]", "float[32]"], ["float[B,S,64]"], error="shape-mismatch")
example("RMSNormalization", ["float[B,S,64]", "float[64]"], ["float[*]"], attrs={"axis": 3}, error="bad-attribute")


# -- SwiGLU ---------------------------------------------------------------------------------------


@rule("SwiGLU", since=28)
def swiglu(ctx: RuleContext) -> list:
    """A and B have one shape (no broadcasting), and so has Y."""
    a, b = ctx.shape(0), ctx.shape(1)
    if a is None or b is None:
        return [a if b is None else b]
    if len(a) != len(b):
        raise RuleError("shape-mismatch", f"A and B must have one shape, have ranks {len(a)} and {len(b)}")
    return [tuple(agree(ctx, f"extents of A and B on axis {i}", x, y) for i, (x, y) in enumerate(zip(a, b)))]


example("SwiGLU", ["float[B,S,F]", "float[B,S,F]"], ["float[B,S,F]"])
example("SwiGLU", ["bfloat16[B,S,?]", "bfloat16[B,S,64]"], ["bfloat16[B,S,64]"], attrs={"alpha": 1.702})
example("SwiGLU", ["float[2,3]", "float[2,1]"], ["float[2,3]"], error="shape-mismatch")


# -- TensorScatter --------------------------------------------------------------------------------


@rule("TensorScatter", since=24)
def tensor_scatter(ctx: RuleContext) -> list:
    """The present cache has the past cache's shape; the update differs only along ``axis``."""
    past, upd = ctx.shape(0), ctx.shape(1)
    mode = ctx.attr("mode", "linear")
    if mode not in ("linear", "circular"):
        raise RuleError("bad-attribute", f"mode {mode!r} is not 'linear' or 'circular'")
    ref = past if past is not None else upd
    if ref is None:
        return [None]
    if past is not None and upd is not None and len(past) != len(upd):
        raise RuleError("shape-mismatch", f"past_cache has rank {len(past)}, update rank {len(upd)}")
    axis = norm_axis(ctx, ctx.attr("axis", -2), len(ref))
    if axis == 0:
        raise RuleError("bad-attribute", "axis cannot be 0, the batch axis")
    out = []
    for i in range(len(ref)):
        p, u = at(past, i), at(upd, i)
        if i == axis:
            if isinstance(p, int) and isinstance(u, int) and u > p:
                raise RuleError("shape-mismatch", f"the update's {u} positions do not fit the cache's {p}")
            out.append(p)
        else:
            out.append(agree(ctx, f"cache and update extents on axis {i}", p, u))
    if ctx.has(2):
        out[0] = agree(
            ctx, "batch size and the length of write_indices", out[0], at(check_rank(ctx, 2, 1, "write_indices"), 0)
        )
    if out[axis] is None:
        ctx.because("the cache length is read from past_cache, whose shape is not known", 0)
    return [tuple(out)]


example("TensorScatter", ["float[B,H,M,D]", "float[B,H,S,D]", "int64[B]"], ["float[B,H,M,D]"], opset=24)
example(
    "TensorScatter",
    ["float16[B,M,H,D]", "float16[B,1,H,D]"],
    ["float16[B,M,H,D]"],
    attrs={"axis": 1, "mode": "circular"},
    opset=24,
)
example("TensorScatter", ["float[B,?,M,D]", "float[B,4,S,D]"], ["float[B,4,M,D]"], opset=24)
example("TensorScatter", ["float[2,3,4,8]", "float[2,3,5,8]"], ["float[*]"], opset=24, error="shape-mismatch")
example(
    "TensorScatter",
    ["float[2,3,4,8]", "float[2,3,1,8]"],
    ["float[*]"],
    attrs={"axis": 0},
    opset=24,
    error="bad-attribute",
)


# -- CausalConvWithState --------------------------------------------------------------------------

_ACTIVATIONS = ("none", "silu", "swish")


@rule("CausalConvWithState", since=27)
def causal_conv_with_state(ctx: RuleContext) -> list:
    """output has the input's shape ``(B, C, L)``; present_state is ``(B, C, k - 1)``."""
    if ctx.attr("activation", "none") not in _ACTIVATIONS:
        raise RuleError("bad-attribute", f"activation must be one of {', '.join(_ACTIVATIONS)}")
    x = check_rank(ctx, 0, 3, "input")
    w = check_rank(ctx, 1, 3, "weight")
    bias = check_rank(ctx, 2, 1, "bias")
    past = check_rank(ctx, 3, 3, "past_state")
    if w is not None and isinstance(w[1], int) and w[1] != 1:
        raise RuleError("shape-mismatch", f"weight must be (channels, 1, k), its second extent is {w[1]}")
    if w is not None and isinstance(w[2], int) and w[2] < 1:
        raise RuleError("shape-mismatch", f"the weight tensor's kernel size k is {w[2]}: it must be greater than zero")
    batch = agree(ctx, "batch sizes", at(x, 0), at(past, 0))
    channels = agree(ctx, "channels", at(x, 1), at(w, 0), at(bias, 0), at(past, 1))
    kernel = at(w, 2)
    carry = agree(
        ctx, "past_state length and kernel size - 1", at(past, 2), None if kernel is None else D.sub(kernel, 1)
    )
    if x is None:
        ctx.because("the input's shape is not known", 0)
    elif carry is None:
        ctx.because("the carried length is k - 1, and the kernel size k is not known", 1)
    return [(batch, channels, at(x, 2)), (batch, channels, carry)]


example("CausalConvWithState", ["float[B,C,L]", "float[C,1,K]"], ["float[B,C,L]", "float[B,C,K-1]"], opset=27)
example(
    "CausalConvWithState",
    ["float16[B,8,L]", "float16[8,1,4]", "float16[8]", "float16[B,8,P]"],
    ["float16[B,8,L]", "float16[B,8,3]"],
    attrs={"activation": "silu"},
    opset=27,
)
example("CausalConvWithState", ["float[2,3,5]", "float[3,1,1]"], ["float[2,3,5]", "float[2,3,0]"], opset=27)
example(
    "CausalConvWithState", ["float[2,3,5]", "float[3,1,0]"], ["float[*]", "float[*]"], opset=27, error="shape-mismatch"
)
example(
    "CausalConvWithState",
    ["float[2,3,1]", "float[3,1,4]", "", "float[2,3,2]"],
    ["float[2,3,1]", "float[2,3,2]"],
    opset=27,
    error="shape-mismatch",
)
example(
    "CausalConvWithState",
    ["float[2,3,5]", "float[3,1,3]"],
    ["float[*]", "float[*]"],
    attrs={"activation": "gelu"},
    opset=27,
    error="bad-attribute",
)


# -- LinearAttention ------------------------------------------------------------------------------

_UPDATE_RULES = ("linear", "gated", "delta", "gated_delta")


@rule("LinearAttention", since=27)
def linear_attention(ctx: RuleContext) -> list:
    """output is ``(B, T, Hq * dv)``; present_state is ``(B, Hkv, dk, dv)``, typed as past_state or query."""
    hq = positive_heads("q_num_heads", ctx.require("q_num_heads"))
    hkv = positive_heads("kv_num_heads", ctx.require("kv_num_heads"))
    check_groups(hq, hkv)
    update = ctx.attr("update_rule", "gated_delta")
    if update not in _UPDATE_RULES:
        raise RuleError("bad-attribute", f"update_rule must be one of {', '.join(_UPDATE_RULES)}")
    for i, name, needed in ((4, "decay", "gated" in update), (5, "beta", "delta" in update)):
        if needed and not ctx.has(i):
            ctx.error("missing-input", f"LinearAttention: update_rule {update!r} needs {name}")
        elif ctx.has(i) and not needed:
            # The reference implementation and onnxruntime refuse to run such a node.
            ctx.error("arity", f"LinearAttention: update_rule {update!r} forbids the {name} input")
    q, k, v = (check_rank(ctx, i, 3, name) for i, name in enumerate(("query", "key", "value")))
    past = check_rank(ctx, 3, 4, "past_state")
    decay, beta = check_rank(ctx, 4, 3, "decay"), check_rank(ctx, 5, 3, "beta")
    batch = agree(ctx, "batch sizes", *(at(s, 0) for s in (q, k, v, past, decay, beta)))
    steps = agree(ctx, "sequence lengths", *(at(s, 1) for s in (q, k, v, decay, beta)))
    agree(ctx, "key/value heads", at(past, 1), hkv)
    dk = agree(
        ctx,
        "key head sizes",
        at(past, 2),
        split_heads(at(q, 2), hq, "query hidden size"),
        split_heads(at(k, 2), hkv, "key hidden size"),
    )
    dv = agree(ctx, "value head sizes", at(past, 3), split_heads(at(v, 2), hkv, "value hidden size"))
    _gate_widths(hkv, dk, at(decay, 2), at(beta, 2))
    output = (batch, steps, packed_heads(at(v, 2), hq, hkv, dv))
    state = (batch, hkv, dk, dv)
    if ctx.has(3):
        return [output, state]  # present_state has past_state's type (S)
    # Without past_state the state is cast like the query (the function body, onnxruntime and
    # the reference implementation all agree), so S is T.
    return [output, TensorType(ctx.elem(0), state)]


def _gate_widths(hkv: int, dk: Dim, decay: Dim, beta: Dim) -> None:
    """decay is per head (H_kv) or per key dim (H_kv * d_k); beta per head (H_kv) or shared (1)."""
    if isinstance(decay, int) and decay != hkv and (not isinstance(dk, int) or decay != hkv * dk):
        if isinstance(dk, int) or decay % hkv:
            raise RuleError(
                "shape-mismatch",
                f"decay's last extent {decay} is neither kv_num_heads ({hkv}) "
                f"nor kv_num_heads * d_k ({'?' if dk is None else D.mul(hkv, dk)})",
            )
    if isinstance(beta, int) and beta not in (1, hkv):
        raise RuleError("shape-mismatch", f"beta's last extent {beta} is neither 1 nor kv_num_heads ({hkv})")


example(
    "LinearAttention",
    ["float[B,T,32]", "float[B,T,32]", "float[B,T,32]"],
    ["float[B,T,32]", "float[B,4,8,8]"],
    attrs={"q_num_heads": 4, "kv_num_heads": 4, "update_rule": "linear"},
    opset=27,
)
example(
    "LinearAttention",
    ["float[B,T,32]", "float[B,T,32]", "float[B,T,32]", "", "float[B,T,4]"],
    ["float[B,T,32]", "float[B,4,8,8]"],
    attrs={"q_num_heads": 4, "kv_num_heads": 4, "update_rule": "linear"},
    opset=27,
    error="arity",
)
example(
    "LinearAttention",
    ["float[B,T,32]", "float[B,T,32]", "float[B,T,32]", "", "", "float[B,T,4]"],
    ["float[B,T,32]", "float[B,4,8,8]"],
    attrs={"q_num_heads": 4, "kv_num_heads": 4, "update_rule": "gated"},
    opset=27,
    error="arity",
)
example(
    "LinearAttention",
    ["float[B,T,32]", "float[B,T,32]", "float[B,T,32]", "", "float[B,T,7]"],
    ["float[*]", "unknown"],
    attrs={"q_num_heads": 4, "kv_num_heads": 4, "update_rule": "gated"},
    opset=27,
    error="shape-mismatch",
)
example(
    "LinearAttention",
    ["float[B,T,32]", "float[B,T,32]", "float[B,T,32]", "", "float[B,T,32]", "float[B,T,3]"],
    ["float[*]", "unknown"],
    attrs={"q_num_heads": 4, "kv_num_heads": 4},
    opset=27,
    error="shape-mismatch",
)
example(
    "LinearAttention",
    ["float[B,T,Q]", "float[B,T,K]", "float[B,T,32]", "", "float[B,T,8]", "float[B,T,1]"],
    ["float[B,T,32]", "float[B,4,floor(Q/4),8]"],
    attrs={"q_num_heads": 4, "kv_num_heads": 4},
    opset=27,
)
example(
    "LinearAttention",
    ["float16[B,T,Q]", "float16[B,T,K]", "float16[B,T,V]", "", "float16[B,T,2]", "float16[B,T,1]"],
    ["float16[B,T,4*V]", "float16[B,2,floor(Q/8),floor(V/2)]"],
    attrs={"q_num_heads": 8, "kv_num_heads": 2},
    opset=27,
)
example(
    "LinearAttention",
    ["float16[B,1,64]", "float16[B,1,32]", "float16[B,1,32]", "float[B,4,8,8]", "float16[B,1,32]", "float16[B,1,4]"],
    ["float16[B,1,64]", "float[B,4,8,8]"],
    attrs={"q_num_heads": 8, "kv_num_heads": 4},
    opset=27,
)
example(
    "LinearAttention",
    ["float[B,T,32]", "float[B,T,32]", "float[B,T,32]"],
    ["float[*]", "unknown"],
    attrs={"q_num_heads": 6, "kv_num_heads": 4, "update_rule": "linear"},
    opset=27,
    error="shape-mismatch",
)
example(
    "LinearAttention",
    ["float[B,T,32]", "float[B,T,32]", "float[B,T,32]"],
    ["float[B,T,32]", "float[B,4,8,8]"],
    attrs={"q_num_heads": 4, "kv_num_heads": 4, "update_rule": "gated"},
    opset=27,
    error="missing-input",
)
