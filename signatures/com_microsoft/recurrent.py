"""Recurrent layers of the contrib domain: CausalConvWithState, LinearAttention, LinearAttentionGate,
GatedDeltaNet, AttnLSTM, DynamicQuantizeLSTM, and the state-replay kernels ConvStateReplay,
GatedDeltaNetStateReplay and Mamba2Verify.

The state-space and linear-attention operators carry a recurrent state between decoding steps;
their outputs are the input's shape (or its heads re-packed) and the state's. Each rule follows
what onnxruntime's CPU kernel computes and refuses (tests/test_contrib_a_runtime.py runs them);
the forms only its GPU kernels run (a state window, CausalConvWithState's extended channel
selection, more than one spatial axis) and the three replay operators (WebGPU only) follow the
schema's documentation and its inference function, and are not cross-checked against a kernel.
"""

from __future__ import annotations

from infer.contract.context import RuleContext, RuleError
from infer.core import dims as D
from infer.core.dims import Dim
from infer.core.types import TensorType
from signatures.ai_onnx.attention import agree, at, check_rank, split_heads
from signatures.com_microsoft import (
    F32,
    FLOAT,
    FLOAT_TYPES,
    FLOATS,
    INT,
    INT8_TYPES,
    INT32,
    MS,
    REQUIRED,
    STRING,
    STRINGS,
)
from signatures.com_microsoft.common import choice, in_range
from signatures.kit.helpers import same_dim
from signatures.kit.operator import case, operator

Shape = tuple[Dim, ...]

_LSTM = {"direction": (STRING, "forward"), "hidden_size": (INT, None), "input_forget": (INT, 0),
         "clip": (FLOAT, None), "activation_beta": (FLOATS, None), "activation_alpha": (FLOATS, None),
         "activations": (STRINGS, None)}  # fmt: skip

_UPDATE_RULES = ("linear", "gated", "delta", "gated_delta")
_MAX_STATE_WINDOW = 8


# -- CausalConvWithState --------------------------------------------------------------------------


@operator(
    "CausalConvWithState",
    "input:T weight:T bias?:T past_state?:T",
    "output:T present_state:T state_update?:T",
    domain=MS,
    types={"T": FLOAT_TYPES},
    attrs={
        "dilation": (INT, 1),
        "ndim": (INT, 1),
        "activation": (STRING, "none"),
        "state_update_capacity": (INT, 0),
        "state_channels_last": (INT, -1),
        "state_window": (INT, 0),
        "state_length": (INT, 0),
        "input_channel_offset": (INT, 0),
        "channels_last": (INT, 0),
        "input_channels": (INT, 0),
    },
    examples=[
        case(["float[B,C,L]", "float[C,1,K]"], ["float[B,C,L]", "float[B,C,K - 1]"]),
        case(
            ["float16[B,8,L]", "float16[8,1,4]", "float16[8]", "float16[B,8,6]"],
            ["float16[B,8,L]", "float16[B,8,6]"],
            dilation=2,
            activation="silu",
        ),
        case(["float[B,S,3,2]", "float[6,1,4]"], ["float[B,S,3,2]", "float[B,3,3,2]"], channels_last=1),
        case(["float[B,C,H,W]", "float[C,1,2,4]"], ["float[B,C,H,W]", "float[B,C,H,3]"], ndim=2),
        case(["float[B,C,L]", "float[C,1,4]"], ["float[B,C,L]", "float[2,B,C,3]"], state_window=2),
        case(
            ["float[B,S,12]", "float[8,1,4]"],
            ["float[B,S,8]", "float[B,8,7]", "float[B,2,8]"],
            channels_last=1,
            input_channels=8,
            state_length=7,
            state_channels_last=0,
            state_update_capacity=2,
        ),
        case(["float[B,C,L]", "float[C,1,4]"], ["float[*]", "float[*]", "float[*]"], error="bad-attribute"),
        case(["float[B,3,L]", "float[3,2,4]"], ["float[*]", "float[*]"], error="shape-mismatch"),
        case(
            ["float[B,3,L]", "float[3,1,4]", "", "float[B,3,2]"],
            ["float[B,3,L]", "float[B,3,3]"],
            error="shape-mismatch",
        ),
        case(["float[B,3,L]", "float[3,1,4]"], ["float[*]", "float[*]"], state_window=9, error="bad-attribute"),
    ],
)
def causal_conv_with_state(ctx: RuleContext) -> list:
    """output has the input's shape; the carried state holds ``(k - 1) * dilation`` positions of the
    last (causal) axis: ``(B, C, spatial[:-1]..., L)``, or ``(B, L, d...)`` with ``channels_last``,
    with a leading window axis W when ``state_window`` is set (GPU kernels only).

    The extended attributes (a channel slice of a rank-3 channels-last input, an explicit state
    length and layout, the compact state_update output) are CUDA-only; their shapes follow the
    schema's inference function.
    """
    choice(ctx, "activation", "none", ("none", "silu", "swish"))
    ndim = in_range(ctx, "ndim", 1, 1, 3)
    dilation = ctx.attr("dilation", 1)
    if dilation < 1:
        raise RuleError("bad-attribute", f"dilation must be >= 1, is {dilation}")
    window = in_range(ctx, "state_window", 0, 0, _MAX_STATE_WINDOW)
    last = in_range(ctx, "channels_last", 0, 0, 1)
    extended = any(ctx.attr(a, 0) for a in ("input_channels", "input_channel_offset", "state_length"))
    extended = extended or ctx.attr("state_channels_last", -1) != -1 or ctx.attr("state_update_capacity", 0) != 0
    extended = extended or ctx.wants_output(2)
    if extended and (last != 1 or ndim != 1 or window != 0):
        raise RuleError(
            "bad-attribute",
            "the extended attributes (and state_update) need channels_last=1, ndim=1 and state_window=0",
        )
    if last and ndim != 1:
        raise RuleError("bad-attribute", "channels_last needs ndim=1")
    x = ctx.shape(0)
    w = check_rank(ctx, 1, ndim + 2, "weight")
    if w is not None and isinstance(w[1], int) and w[1] != 1:
        raise RuleError("shape-mismatch", f"weight must be depthwise (channels, 1, k...), its second extent is {w[1]}")
    kernel = at(w, ndim + 1)
    if isinstance(kernel, int) and kernel < 1:
        raise RuleError("shape-mismatch", f"the kernel size along the causal axis is {kernel}")
    carry = None if kernel is None else D.mul(D.sub(kernel, 1), dilation)
    if extended:
        return _extended(ctx, x, w, carry)
    if last:
        return _channels_last(ctx, x, w, carry, window)
    if x is not None and len(x) != ndim + 2:
        raise RuleError("shape-mismatch", f"input must have rank {ndim + 2} (batch, channels, {ndim} spatial)")
    channels = agree(ctx, "channels of input and weight", at(x, 1), at(w, 0), at(check_rank(ctx, 2, 1, "bias"), 0))
    if x is None:
        ctx.because("the input's shape is not known", 0)
        spatial: Shape = (None,) * (ndim - 1)
    else:
        spatial = x[2:-1]
    state = (at(x, 0), channels, *spatial, carry)
    return _with_past(ctx, [x, _windowed(state, window)])


def _channels_last(ctx: RuleContext, x: Shape | None, w: Shape | None, carry: Dim, window: int) -> list:
    """(B, S, d_1..d_n) activations; the state is (B, L, d_1..d_n); channels = d_1 * ... * d_n."""
    if x is not None and len(x) < 3:
        raise RuleError("shape-mismatch", f"a channels-last input must have rank >= 3, has {len(x)}")
    if x is not None and w is not None:
        same_dim(ctx, D.product(x[2:]), w[0], "channels (the product of the trailing axes) and weight channels")
    if x is None:
        ctx.because("the input's shape is not known", 0)
        return _with_past(ctx, [None, None])
    return _with_past(ctx, [x, _windowed((x[0], carry, *x[2:]), window)])


def _extended(ctx: RuleContext, x: Shape | None, w: Shape | None, carry: Dim) -> list:
    """The CUDA path: (B, S, W_in) input, channels = input_channels or W_in (not cross-checked)."""
    if x is not None and len(x) != 3:
        raise RuleError("shape-mismatch", f"the extended path needs a rank-3 input, has rank {len(x)}")
    channels = ctx.attr("input_channels", 0) or at(x, 2)
    if w is not None and channels is not None:
        same_dim(ctx, channels, w[0], "selected channels and weight channels")
    length = ctx.attr("state_length", 0) or carry
    layout = ctx.attr("state_channels_last", -1)
    b = at(x, 0)
    state = (b, channels, length) if layout == 0 else (b, length, channels)
    capacity = ctx.attr("state_update_capacity", 0)
    update = (b, capacity, channels) if capacity > 0 else None
    return [None if x is None else (b, x[1], channels), state, update][: ctx.n_outputs]


def _windowed(state: Shape, window: int) -> Shape:
    return (window, *state) if window > 0 else state


def _with_past(ctx: RuleContext, out: list) -> list:
    """past_state must have present_state's shape (the kernel compares them)."""
    past, present = ctx.shape(3) if ctx.has(3) else None, out[1]
    if past is not None and present is not None:
        if len(past) != len(present):
            raise RuleError("shape-mismatch", f"past_state must have rank {len(present)}, has {len(past)}")
        out[1] = tuple(agree(ctx, f"past_state extent {i}", d, p) for i, (d, p) in enumerate(zip(present, past)))
    return out[: ctx.n_outputs]


# -- LinearAttention ------------------------------------------------------------------------------

_LA = {"q_num_heads": 4, "kv_num_heads": 4}


@operator(
    "LinearAttention",
    "query:T key:T value:T past_state?:S decay?:T beta?:T",
    "output:T present_state:S",
    domain=MS,
    types={"T": FLOAT_TYPES, "S": FLOAT_TYPES},
    attrs={
        "chunk_size": (INT, 64),
        "kv_num_heads": (INT, REQUIRED),
        "state_window": (INT, 0),
        "q_num_heads": (INT, REQUIRED),
        "scale": (FLOAT, 0.0),
        "update_rule": (STRING, "gated_delta"),
    },
    examples=[
        case(
            ["float[B,T,32]", "float[B,T,32]", "float[B,T,32]", "", "float[B,T,4]", "float[B,T,1]"],
            ["float[B,T,32]", "float[B,4,8,8]"],
            attrs=_LA,
        ),
        case(
            ["float[B,T,16]", "float[B,T,32]", "float[B,T,V]"],
            ["float[B,T,V]", "float[B,4,8,V // 4]"],
            q_num_heads=2,
            kv_num_heads=4,
            update_rule="linear",
        ),
        case(
            ["float16[B,T,64]", "float16[B,T,32]", "float16[B,T,V]", "float[B,2,8,6]"],
            ["float16[B,T,4*V]", "float[B,2,8,6]"],
            q_num_heads=8,
            kv_num_heads=2,
            update_rule="linear",
        ),
        case(
            ["float[B,T,32]", "float[B,T,32]", "float[B,T,32]", "", "float[B,T,4]"],
            ["float[B,T,32]", "float[B,4,8,8]"],
            attrs={**_LA, "update_rule": "linear"},
        ),
        case(
            ["float[B,T,32]", "float[B,T,32]", "float[B,T,32]"],
            ["float[B,T,32]", "float[2,B,4,8,8]"],
            attrs={**_LA, "update_rule": "linear", "state_window": 2},
        ),
        case(
            ["float[B,T,32]", "float[B,T,32]", "float[B,T,32]"],
            ["float[B,T,32]", "float[B,4,8,8]"],
            attrs=_LA,
            error="missing-input",
        ),
        case(
            ["float[B,T,48]", "float[B,T,32]", "float[B,T,32]"],
            ["float[*]", "unknown"],
            q_num_heads=6,
            kv_num_heads=4,
            update_rule="linear",
            error="bad-attribute",
        ),
        case(
            ["float[B,T,32]", "float[B,T,32]", "float[B,T,32]", "", "float[B,T,4]", "float[B,T,3]"],
            ["float[*]", "unknown"],
            attrs=_LA,
            error="shape-mismatch",
        ),
    ],
)
def linear_attention(ctx: RuleContext) -> list:
    """(B, T, H * D) packed inputs; output (B, T, max(H_q, H_kv) * d_v), present_state
    (B, H_kv, d_k, d_v) (with a leading window axis W when ``state_window`` is set, GPU only).

    Unlike the default domain's operator this one allows inverse GQA (more key/value heads than
    query heads) and ignores a decay or beta the update rule does not use (the CPU kernel does).
    """
    hq, hkv = ctx.require("q_num_heads"), ctx.require("kv_num_heads")
    if hq <= 0 or hkv <= 0:
        raise RuleError("bad-attribute", f"q_num_heads and kv_num_heads must be positive, are {hq} and {hkv}")
    if max(hq, hkv) % min(hq, hkv):
        raise RuleError("bad-attribute", f"q_num_heads {hq} and kv_num_heads {hkv}: one must divide the other")
    update = choice(ctx, "update_rule", "gated_delta", _UPDATE_RULES)
    window = in_range(ctx, "state_window", 0, 0, _MAX_STATE_WINDOW)
    for i, name, needed in ((4, "decay", "gated" in update), (5, "beta", "delta" in update)):
        if needed and not ctx.has(i):
            ctx.error("missing-input", f"LinearAttention: update_rule {update!r} needs {name}")
    q, k, v = (check_rank(ctx, i, 3, name) for i, name in enumerate(("query", "key", "value")))
    past = check_rank(ctx, 3, 5 if window else 4, "past_state")
    decay, beta = check_rank(ctx, 4, 3, "decay"), check_rank(ctx, 5, 3, "beta")
    state_at = 1 if window else 0
    batch = agree(ctx, "batch sizes", *(at(s, 0) for s in (q, k, v, decay, beta)), at(past, state_at))
    steps = agree(ctx, "sequence lengths", *(at(s, 1) for s in (q, k, v, decay, beta)))
    if past is not None:
        agree(ctx, "key/value heads", at(past, state_at + 1), hkv)
    dk = agree(ctx, "key head sizes", at(past, state_at + 2), split_heads(at(q, 2), hq, "query hidden size"))
    key_width = at(k, 2)
    if isinstance(dk, int) and isinstance(key_width, int) and key_width % dk:
        raise RuleError("shape-mismatch", f"key hidden size {key_width} is not a multiple of d_k {dk}")
    dv = agree(ctx, "value head sizes", at(past, state_at + 3), split_heads(at(v, 2), hkv, "value hidden size"))
    _gate_widths(hkv, dk, at(decay, 2) if "gated" in update else None, at(beta, 2) if "delta" in update else None)
    width = at(v, 2) if hkv >= hq else (D.mul(hq // hkv, at(v, 2)) if at(v, 2) is not None else D.mul(hq, dv))
    state = _windowed((batch, hkv, dk, dv), window)
    if ctx.has(3):
        return [(batch, steps, width), state]
    # Without past_state the state has the query's type (the CPU kernel's S is its T).
    return [(batch, steps, width), TensorType(ctx.elem(0), state)]


def _gate_widths(hkv: int, dk: Dim, decay: Dim, beta: Dim) -> None:
    """decay: H_kv or H_kv * d_k per token; beta: H_kv or 1 (what the kernel refuses otherwise)."""
    if isinstance(decay, int) and decay != hkv and not (isinstance(dk, int) and decay == hkv * dk):
        if isinstance(dk, int) or decay % hkv:
            raise RuleError("shape-mismatch", f"decay's last extent {decay} is neither H_kv ({hkv}) nor H_kv * d_k")
    if isinstance(beta, int) and beta not in (1, hkv):
        raise RuleError("shape-mismatch", f"beta's last extent {beta} is neither 1 nor H_kv ({hkv})")


@operator(
    "LinearAttentionGate",
    "a:T dt_bias:TF decay_scale:TF b?:T",
    "decay:T beta?:T",
    domain=MS,
    types={"T": FLOAT_TYPES, "TF": F32},
    examples=[
        case(["float[B,T,H]", "float[H]", "float[H]", "float[B,T,H]"], ["float[B,T,H]", "float[B,T,H]"]),
        case(["float16[N,8]", "float[8]", "float[8]"], ["float16[N,8]"]),
        case(["float[B,T,8]", "float[4]", "float[8]"], ["float[B,T,8]"], error="shape-mismatch"),
        case(["float[B,T,8]", "float[8]", "float[8]"], ["float[B,T,8]", "float[B,T,8]"], error="missing-input"),
    ],
)
def linear_attention_gate(ctx: RuleContext) -> list:
    """decay and beta have a's shape (..., H); dt_bias and decay_scale hold H values, b is a's shape."""
    a = ctx.shape(0)
    if ctx.wants_output(1) and not ctx.has(3):
        ctx.error("missing-input", "LinearAttentionGate: the beta output needs the b input")
    if a is not None and not a:
        raise RuleError("shape-mismatch", "a must have rank >= 1")
    heads = at(a, -1) if a else None
    for i, what in ((1, "dt_bias"), (2, "decay_scale")):
        s = ctx.shape(i)
        if s is not None and heads is not None:
            same_dim(ctx, D.product(s), heads, f"{what}'s element count and a's last extent")
    b = ctx.shape(3) if ctx.has(3) else None
    if a is not None and b is not None:
        if len(a) != len(b):
            raise RuleError("shape-mismatch", f"b must have a's shape, has rank {len(b)} against {len(a)}")
        a = tuple(same_dim(ctx, x, y, f"extents {i} of a and b") for i, (x, y) in enumerate(zip(a, b)))
    return [a, a][: ctx.n_outputs]


# -- GatedDeltaNet --------------------------------------------------------------------------------


@operator(
    "GatedDeltaNet",
    "query:T key?:T value?:T cu_seqlens?:TI decay?:TG beta?:TG initial_state?:TS a_log?:TS dt_bias?:TS "
    "capture_count?:TI state_update_active?:TI",
    "output:T final_state?:TS state_update?:TS",
    domain=MS,
    types={"T": FLOAT_TYPES, "TS": F32, "TG": FLOAT_TYPES, "TI": INT32},
    attrs={
        "state_update_capacity": (INT, 0),
        "chunk_size": (INT, 64),
        "beta_activation": (STRING, "none"),
        "gate_activation": (STRING, "none"),
        "scale": (FLOAT, 0.0),
        "qk_l2_norm": (INT, 0),
        "gate_lower_bound": (FLOAT, -5.0),
        "update_rule": (STRING, "gated_delta"),
    },
    examples=[
        case(
            ["float[N,2,4]", "float[N,2,4]", "float[N,4,3]", "int32[B1]", "float[N,4]", "float[N,4]"],
            ["float[N,4,3]", "float[B1 - 1,4,3,4]"],
        ),
        case(
            [
                "float16[B,S,2,4]",
                "float16[B,S,2,4]",
                "float16[B,S,2,3]",
                "",
                "float[B,S,2]",
                "float[B,S,2]",
                "float[B,2,3,4]",
            ],
            ["float16[B,S,2,3]", "float[B,2,3,4]"],
        ),
        case(
            ["float[N,22]", "", "", "int32[3]", "float[N,2]", "float[N,2]", "float[2,2,3,4]"],
            ["float[N,2,3]", "float[2,2,3,4]"],
        ),
        case(
            [
                "float[N,2,4]",
                "float[N,2,4]",
                "float[N,2,3]",
                "int32[3]",
                "float[N,2,4]",
                "float[N,2]",
                "",
                "",
                "",
                "int32[2]",
            ],
            ["float[N,2,3]", "float[2,2,3,4]", "float[2,44]"],
            state_update_capacity=2,
        ),
        case(
            ["float[N,2,4]", "float[N,2,4]", "float[N,2,3]", "int32[3]"],
            ["float[N,2,3]", "float[2,2,3,4]", "float[2,0]"],
            update_rule="linear",
        ),
        case(
            ["float[N,2,4]", "float[N,2,4]", "float[N,2,3]", "int32[3]", "float[N,2]"],
            ["float[N,2,3]", "float[2,2,3,4]"],
            update_rule="linear",
            error="arity",
        ),
        case(
            ["float[N,4,4]", "float[N,4,4]", "float[N,2,3]", "int32[3]", "float[N,2]", "float[N,2]"],
            ["float[*]", "float[*]"],
            error="shape-mismatch",
        ),
        case(
            ["float[B,S,2,4]", "float[B,S,2,4]", "float[B,S,2,3]", "int32[3]", "float[B,S,2]", "float[B,S,2]"],
            ["float[*]", "float[*]"],
            error="shape-mismatch",
        ),
    ],
)
def gated_delta_net(ctx: RuleContext) -> list:
    """Token-major q/k/v ``(N, H, D)`` (or ``(B, S, H, D)``): output ``(..., H_v, d_v)``, final_state
    ``(batch, H_v, d_v, d_k)`` (float), state_update ``(batch, C * (decay width + H_k d_k + H_v d_v))``.

    The batch is ``len(cu_seqlens) - 1``, else initial_state's first extent, else the rank-4
    spelling's. A packed QKV query ``(..., 2 H_q d_k + H_v d_v)`` takes H_v, d_v and d_k from
    initial_state. H_v is a multiple of H_q, so the output has H_v heads.
    """
    update = choice(ctx, "update_rule", "gated_delta", _UPDATE_RULES)
    capacity = in_range(ctx, "state_update_capacity", 0, 0, _MAX_STATE_WINDOW)
    for i, name, needed in ((4, "decay", "gated" in update), (5, "beta", "delta" in update)):
        if needed != ctx.has(i):
            verb = "needs" if needed else "forbids"
            ctx.error("missing-input" if needed else "arity", f"GatedDeltaNet: update_rule {update!r} {verb} {name}")
    if (capacity > 0) != ctx.has(9):
        why = "capture_count must be given exactly when state_update_capacity is positive"
        ctx.error("missing-input" if capacity else "arity", f"GatedDeltaNet: {why}")
    packed = not ctx.has(1)
    token_rank = 2 if packed else 3  # the rank of the token-major spelling; (B, S) adds one
    q = ctx.shape(0)
    if q is not None and len(q) not in (token_rank, token_rank + 1):
        raise RuleError("shape-mismatch", f"query has rank {len(q)}")
    if ctx.has(3) and q is not None and len(q) != token_rank:
        raise RuleError("shape-mismatch", "cu_seqlens needs the token-major spelling of query, key and value")
    state = check_rank(ctx, 6, 4, "initial_state")
    lead: Shape | None = None if q is None else q[: len(q) - token_rank + 1]
    if lead is not None and len(lead) == 1 and not ctx.has(3) and not ctx.has(6):
        ctx.error("missing-input", "GatedDeltaNet: token-major inputs need cu_seqlens or initial_state for the batch")
    if packed:
        if not ctx.has(6):
            ctx.error("missing-input", "GatedDeltaNet: a packed QKV query needs initial_state for its head counts")
        hv, dv, dk = at(state, 1), at(state, 2), at(state, 3)
        qk_width = None  # H_q * d_k, from the packed width
        if q is not None and hv is not None and dv is not None:
            qk_width = D.floordiv(D.sub(q[-1], D.mul(hv, dv)), 2)
    else:
        k, v = ctx.shape(1), ctx.shape(2)
        for s, what in ((k, "key"), (v, "value")):
            if s is not None and q is not None and len(s) != len(q):
                raise RuleError("shape-mismatch", f"{what} must have the query's rank {len(q)}, has {len(s)}")
        hq = agree(ctx, "query and key heads", None if q is None else q[-2], None if k is None else k[-2])
        dk = agree(ctx, "key head sizes", None if q is None else q[-1], None if k is None else k[-1], at(state, 3))
        hv = agree(ctx, "value heads", None if v is None else v[-2], at(state, 1))
        dv = agree(ctx, "value head sizes", None if v is None else v[-1], at(state, 2))
        if isinstance(hq, int) and isinstance(hv, int) and (hv < hq or hv % hq):
            raise RuleError("shape-mismatch", f"value heads {hv} must be a positive multiple of query heads {hq}")
        qk_width = None if hq is None or dk is None else D.mul(hq, dk)
    cu = check_rank(ctx, 3, 1, "cu_seqlens")
    if ctx.has(3):
        batch = None if cu is None or cu[0] is None else D.sub(cu[0], 1)
        batch = agree(ctx, "batch of cu_seqlens and initial_state", batch, at(state, 0))
    else:
        batch = agree(
            ctx, "batch of query and initial_state", lead[0] if lead and len(lead) == 2 else None, at(state, 0)
        )
    output = None if lead is None else (*lead, hv, dv)
    return [output, (batch, hv, dv, dk), (batch, _update_width(ctx, capacity, lead, hv, dv, dk, qk_width))][
        : ctx.n_outputs
    ]


def _update_width(ctx: RuleContext, capacity: int, lead: Shape | None, hv: Dim, dv: Dim, dk: Dim, qk: Dim) -> Dim:
    """C * (decay width + H_k d_k + H_v d_v); the decay is per head, or per key dimension when it has one
    more axis."""
    decay = ctx.shape(4) if ctx.has(4) else None
    if capacity == 0:
        return 0
    if decay is None or lead is None or None in (hv, dv, dk, qk):
        ctx.because("the compact update's width needs the decay's layout and every head count")
        return None
    width = D.mul(hv, dk) if len(decay) == len(lead) + 2 else hv
    return D.mul(capacity, D.add(D.add(width, qk), D.mul(hv, dv)))


# -- LSTMs ----------------------------------------------------------------------------------------


def _lstm(ctx: RuleContext, w_hidden_axis: int) -> list:
    """Y (S, dirs, B, H), Y_h and Y_c (dirs, B, H); H is ``hidden_size`` (the kernels require it)."""
    direction = choice(ctx, "direction", "forward", ("forward", "reverse", "bidirectional"))
    dirs = 2 if direction == "bidirectional" else 1
    hidden = ctx.attr("hidden_size")
    if hidden is None or hidden <= 0:
        raise RuleError("bad-attribute", f"{ctx.op_type} needs a positive hidden_size (onnxruntime's kernel)")
    x = check_rank(ctx, 0, 3, "X")
    w, r = check_rank(ctx, 1, 3, "W"), check_rank(ctx, 2, 3, "R")
    for s, what in ((w, "W"), (r, "R")):
        if s is not None:
            same_dim(ctx, s[0], dirs, f"{what}'s dim 0 and num_directions")
    if w is not None:
        same_dim(ctx, w[w_hidden_axis], 4 * hidden, "W's gate extent and 4 * hidden_size")
    batch = agree(ctx, "batch sizes", at(x, 1), at(check_rank(ctx, 4, 1, "sequence_lens"), 0))
    y_h = (dirs, batch, hidden)
    return [(at(x, 0), dirs, batch, hidden), y_h, y_h][: ctx.n_outputs]


@operator(
    "AttnLSTM",
    "X:T W:T R:T B?:T sequence_lens?:T1 initial_h?:T initial_c?:T P?:T QW?:T MW?:T V?:T M?:T memory_seq_lens?:T1 AW?:T",
    "Y?:T Y_h?:T Y_c?:T",
    domain=MS,
    types={"T": ("tensor(float)", "tensor(double)"), "T1": INT32},
    attrs=_LSTM,
    examples=[
        case(
            [
                "float[S,B,3]",
                "float[1,20,10]",
                "float[1,20,5]",
                "",
                "",
                "",
                "",
                "",
                "float[1,5,8]",
                "float[1,7,8]",
                "float[1,8]",
                "float[B,M,7]",
            ],
            ["float[S,1,B,5]", "float[1,B,5]", "float[1,B,5]"],
            hidden_size=5,
        ),
        case(
            ["double[S,B,3]", "double[2,20,10]", "double[2,20,5]"],
            ["double[S,2,B,5]"],
            hidden_size=5,
            direction="bidirectional",
        ),
        case(["float[S,B,3]", "float[1,20,10]", "float[1,20,5]"], ["float[*]"], error="bad-attribute"),
    ],
)
def attn_lstm(ctx: RuleContext) -> list:
    """W is (dirs, 4H, input + attention size): the attention state is concatenated to X."""
    return _lstm(ctx, 1)


@operator(
    "DynamicQuantizeLSTM",
    "X:T W:T2 R:T2 B?:T sequence_lens?:T1 initial_h?:T initial_c?:T P?:T W_scale:T W_zero_point:T2 R_scale:T "
    "R_zero_point:T2",
    "Y?:T Y_h?:T Y_c?:T",
    domain=MS,
    types={"T": F32, "T1": INT32, "T2": INT8_TYPES},
    attrs=_LSTM,
    examples=[
        case(
            [
                "float[S,B,3]",
                "int8[1,3,20]",
                "int8[1,5,20]",
                "",
                "",
                "",
                "",
                "",
                "float[1]",
                "int8[1]",
                "float[1]",
                "int8[1]",
            ],
            ["float[S,1,B,5]", "float[1,B,5]", "float[1,B,5]"],
            hidden_size=5,
        ),
        case(
            [
                "float[S,B,3]",
                "uint8[1,3,20]",
                "uint8[1,5,20]",
                "",
                "",
                "",
                "",
                "",
                "float[1]",
                "uint8[1]",
                "float[1]",
                "uint8[1]",
            ],
            ["float[S,1,B,6]"],
            hidden_size=6,
            error="shape-mismatch",
        ),
    ],
)
def dynamic_quantize_lstm(ctx: RuleContext) -> list:
    """W is (dirs, input, 4H) and R (dirs, H, 4H): LSTM's weights transposed, quantized."""
    out = _lstm(ctx, 2)
    x, w = ctx.shape(0), check_rank(ctx, 1, 3, "W")
    if x is not None and w is not None:
        same_dim(ctx, x[2], w[1], "X's input size and W's dim 1")
    return out


# -- replay kernels (WebGPU only) -----------------------------------------------------------------


def _replay(ctx: RuleContext, fields: int) -> list:
    """destination_out is destination_backing's buffer: rank-1 backings, ``fields`` metadata values."""
    for i, what in ((0, "source"), (1, "capture"), (2, "destination")):
        check_rank(ctx, i, 1, f"{what} backing")
    meta = check_rank(ctx, 3, 1, "metadata")
    if meta is not None and isinstance(meta[0], int) and meta[0] != fields:
        raise RuleError("shape-mismatch", f"metadata must hold {fields} values, holds {meta[0]}")
    return [ctx.shape(2)]


@operator(
    "ConvStateReplay",
    "source_backing:T capture_backing:T destination_backing:T metadata:TI",
    "destination_out:T",
    domain=MS,
    types={"T": ("tensor(float16)", "tensor(float)"), "TI": ("tensor(int64)",)},
    examples=[
        case(["float16[S]", "float16[C]", "float16[D]", "int64[8]"], ["float16[D]"]),
        case(["float[S]", "float[C]", "float[D,2]", "int64[8]"], ["float[*]"], error="shape-mismatch"),
    ],
)
def conv_state_replay(ctx: RuleContext) -> list:
    """From the schema only (WebGPU kernel): the destination backing's shape."""
    return _replay(ctx, 8)


@operator(
    "GatedDeltaNetStateReplay",
    "source_backing:T capsule_backing:T destination_backing:T metadata:TI",
    "destination_out:T",
    domain=MS,
    types={"T": F32, "TI": ("tensor(int64)",)},
    examples=[
        case(["float[S]", "float[C]", "float[D]", "int64[11]"], ["float[D]"]),
        case(["float[S]", "float[C]", "float[D]", "int64[8]"], ["float[*]"], error="shape-mismatch"),
    ],
)
def gated_delta_net_state_replay(ctx: RuleContext) -> list:
    """From the schema only (WebGPU kernel): the destination backing's shape."""
    return _replay(ctx, 11)


@operator(
    "Mamba2Verify",
    "projection:T conv_state:T ssm_state:F conv_weight:T conv_bias:T dt_bias:F A_negative:F D:F norm_weight:F "
    "state_row:I",
    "Y:T conv_snapshots:T ssm_snapshots:F xbc?:T readout?:F",
    domain=MS,
    types={"T": ("tensor(bfloat16)",), "F": F32, "I": INT32},
    attrs={
        "epsilon": (FLOAT, 1e-5),
        "time_step_min": (FLOAT, 0.001),
        "d_state": (INT, 128),
        "head_dim": (INT, 64),
        "n_groups": (INT, REQUIRED),
        "heads": (INT, REQUIRED),
    },
    examples=[
        case(
            [
                "bfloat16[R,1028]",
                "bfloat16[2,768,3]",
                "float[2,4,128,64]",
                "bfloat16[768,4]",
                "bfloat16[768]",
                "float[4]",
                "float[4]",
                "float[4]",
                "float[256]",
                "int32[1]",
            ],
            ["bfloat16[R,256]", "bfloat16[2,768,3]", "float[2,4,128,64]", "bfloat16[R,768]", "float[R,256]"],
            heads=4,
            n_groups=2,
        ),
        case(
            [
                "bfloat16[R,1028]",
                "bfloat16[2,768,3]",
                "float[2,4,128,64]",
                "bfloat16[768,4]",
                "bfloat16[768]",
                "float[4]",
                "float[4]",
                "float[4]",
                "float[256]",
                "int32[1]",
            ],
            ["bfloat16[*]", "bfloat16[*]", "float[*]"],
            heads=4,
            n_groups=3,
            error="bad-attribute",
        ),
    ],
)
def mamba2_verify(ctx: RuleContext) -> list:
    """From the schema only (a GPU kernel): Y and readout (R, heads * head_dim), the snapshots the
    states' shapes, xbc (R, heads * head_dim + 2 * n_groups * d_state)."""
    heads, groups = ctx.require("heads"), ctx.require("n_groups")
    if heads <= 0 or groups <= 0 or heads % groups:
        raise RuleError("bad-attribute", f"n_groups {groups} must be positive and divide heads {heads}")
    inner = heads * ctx.attr("head_dim", 64)
    channels = inner + 2 * groups * ctx.attr("d_state", 128)
    rows = at(check_rank(ctx, 0, 2, "projection"), 0)
    conv, ssm = check_rank(ctx, 1, 3, "conv_state"), check_rank(ctx, 2, 4, "ssm_state")
    return [(rows, inner), conv, ssm, (rows, channels), (rows, inner)][: ctx.n_outputs]
