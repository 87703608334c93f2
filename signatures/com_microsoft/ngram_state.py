"""Stateful decode helpers: NGramHashMapping, VarlenNGramHashMapping, VarlenCausalConvWithState.

Each carries explicit state between calls: the last ``max_ngram_size - 1`` token ids of every
request, or the last ``(kernel_size - 1) * dilation`` inputs of a causal convolution, and
optionally a compact record of the first ``state_update_capacity`` transitions. The ``Varlen``
forms take a packed token axis with ``cumulative_sequence_length`` (batch + 1) marking the
requests. All three have CPU kernels (tests/test_contrib_b_runtime.py runs them).
"""

from __future__ import annotations

from infer.contract.context import RuleContext, RuleError
from infer.core import dims as D
from infer.core.dims import Dim
from signatures.com_microsoft import FLOAT_TYPES, INT, INT32, MS, REQUIRED, STRING
from signatures.kit.helpers import same_dim
from signatures.kit.operator import case, operator

Shape = tuple[Dim, ...]
_M = ("tensor(int32)", "tensor(int64)")
_NGRAM = {"max_ngram_size": (INT, REQUIRED), "n_head_per_ngram": (INT, REQUIRED), "pad_id": (INT, REQUIRED),
          "reset_on_eos": (INT, 0)}  # fmt: skip
_IDS = "input_ids:M multipliers:M vocab_sizes:M"
_OPTIONAL = "head_offsets?:M eos_token_id?:M segment_ids?:tensor(int32)"


def _rank(ctx: RuleContext, i: int, rank: int, what: str) -> Shape | None:
    s = ctx.shape(i) if ctx.has(i) else None
    if s is not None and len(s) != rank:
        raise RuleError("shape-mismatch", f"{what} must have rank {rank}, has {len(s)}")
    return s


def _expect(ctx: RuleContext, i: int, want: Shape, what: str) -> None:
    """Input ``i``, when given and of known rank, has the shape ``want``."""
    s = _rank(ctx, i, len(want), what)
    if s is not None:
        for axis, (a, b) in enumerate(zip(s, want)):
            if b is not None:
                same_dim(ctx, a, b, f"{what}'s extent on axis {axis}")


def _capacity(ctx: RuleContext, capture_index: int) -> int:
    """state_update_capacity in [0, 8]; capture_count is given exactly when it is positive."""
    cap = ctx.attr("state_update_capacity", 0)
    if not 0 <= cap <= 8:
        raise RuleError("bad-attribute", f"state_update_capacity must be in [0, 8], is {cap}")
    if (cap > 0) != ctx.has(capture_index):
        raise RuleError("arity", "capture_count must be given exactly when state_update_capacity is positive")
    return int(cap)


def _ngram(ctx: RuleContext) -> tuple[int, int]:
    """(history length max_ngram_size - 1, heads (max_ngram_size - 1) * n_head_per_ngram); the
    multipliers and vocabulary sizes checked."""
    n, heads = ctx.require("max_ngram_size"), ctx.require("n_head_per_ngram")
    if n < 2 or heads <= 0:
        raise RuleError("bad-attribute", f"max_ngram_size {n} must be at least 2 and n_head_per_ngram {heads} positive")
    mult = _rank(ctx, 1, 1, "multipliers")
    if mult is not None and isinstance(mult[0], int) and mult[0] < n:
        raise RuleError("shape-mismatch", f"multipliers has {mult[0]} entries, needs at least max_ngram_size {n}")
    width = (n - 1) * heads
    _expect(ctx, 2, (width,), "vocab_sizes")
    return n - 1, width


_NG = {"pad_id": 0, "n_head_per_ngram": 2, "max_ngram_size": 3}


@operator(
    "NGramHashMapping",
    f"{_IDS} past_ids?:M {_OPTIONAL}",
    "hash_ids:M present_ids?:M",
    domain=MS,
    types={"M": _M},
    attrs=_NGRAM,
    examples=[
        case(["int64[B,S]", "int64[3]", "int64[4]"], ["int64[B,S,4]", "int64[B,2]"], attrs=_NG),
        case(
            ["int32[B,S]", "int32[4]", "int32[4]", "int32[B,2]", "int32[4]", "int32[]", "int32[B,S]"],
            ["int32[B,S,4]", "int32[B,2]"],
            attrs=_NG,
        ),
        case(["int64[B,S]", "int64[3]", "int64[3]"], ["int64[B,S,4]"], attrs=_NG, error="shape-mismatch"),
        case(["int64[B,S]", "int64[2]", "int64[4]"], ["int64[*]"], attrs=_NG, error="shape-mismatch"),
        case(
            ["int64[B,S]", "int64[3]", "int64[4]"],
            ["int64[*]"],
            attrs={**_NG, "max_ngram_size": 1},
            error="bad-attribute",
        ),
    ],
)
def ngram_hash_mapping(ctx: RuleContext) -> list:
    """input_ids (batch, sequence): hash_ids (batch, sequence, heads), present_ids (batch, history)."""
    history, width = _ngram(ctx)
    ids = _rank(ctx, 0, 2, "input_ids")
    b, s = ids if ids is not None else (None, None)
    _expect(ctx, 3, (b, history), "past_ids")
    _expect(ctx, 4, (width,), "head_offsets")
    _expect(ctx, 6, (b, s), "segment_ids")
    return [(b, s, width), (b, history)][: ctx.n_outputs]


@operator(
    "VarlenNGramHashMapping",
    f"{_IDS} cumulative_sequence_length:S past_ids?:M {_OPTIONAL} past_segment_ids?:S capture_count?:S",
    "hash_ids:M present_ids?:M present_segment_ids?:S state_update?:M",
    domain=MS,
    types={"M": _M, "S": INT32},
    attrs={**_NGRAM, "state_update_capacity": (INT, 0)},
    examples=[
        case(["int64[T]", "int64[3]", "int64[4]", "int32[B + 1]"], ["int64[T,4]", "int64[B,2]"], attrs=_NG),
        case(
            ["int64[T]", "int64[3]", "int64[4]", "int32[B + 1]", "", "", "", "int32[T]", "", "int32[B]"],
            ["int64[T,4]", "int64[B,2]", "int32[B,2]", "int64[B,3,2]"],
            attrs={**_NG, "state_update_capacity": 3},
        ),
        case(
            ["int64[T]", "int64[3]", "int64[4]", "int32[B + 1]"],
            ["int64[*]", "int64[*]", "int32[*]"],
            attrs=_NG,
            error="arity",
        ),
        case(
            ["int64[T]", "int64[3]", "int64[4]", "int32[3]", "int64[3,2]"],
            ["int64[T,4]", "int64[2,2]"],
            attrs=_NG,
            error="shape-mismatch",
        ),
    ],
)
def varlen_ngram_hash_mapping(ctx: RuleContext) -> list:
    """input_ids (tokens), cumulative_sequence_length (batch + 1): hash_ids (tokens, heads),
    present_ids and present_segment_ids (batch, history), state_update (batch, capacity, history).
    present_segment_ids needs segment_ids."""
    history, width = _ngram(ctx)
    cap = _capacity(ctx, 9)
    ids = _rank(ctx, 0, 1, "input_ids")
    cum = _rank(ctx, 3, 1, "cumulative_sequence_length")
    t = None if ids is None else ids[0]
    b = None if cum is None else D.sub(cum[0], 1)
    if ctx.wants_output(2) and not ctx.has(7):
        raise RuleError("arity", "present_segment_ids needs segment_ids")
    _expect(ctx, 4, (b, history), "past_ids")
    _expect(ctx, 5, (width,), "head_offsets")
    _expect(ctx, 7, (t,), "segment_ids")
    _expect(ctx, 8, (b, history), "past_segment_ids")
    _expect(ctx, 9, (b,), "capture_count")
    return [(t, width), (b, history), (b, history), (b, cap, history)][: ctx.n_outputs]


@operator(
    "VarlenCausalConvWithState",
    "input:T weight:T cumulative_sequence_length:M bias?:T initial_state:T capture_count?:M kernel_delta?:T "
    "previous_mask?:T",
    "output:T final_state:T state_update?:T",
    domain=MS,
    types={"T": FLOAT_TYPES, "M": INT32},
    attrs={
        "activation": (STRING, "none"),
        "delta_offset": (INT, 0),
        "dilation": (INT, 1),
        "group_size": (INT, 1),
        "state_update_capacity": (INT, 0),
    },
    examples=[
        case(["float[T,C]", "float[C,1,4]", "int32[B + 1]", "", "float[B,C,3]"], ["float[T,C]", "float[B,C,3]"]),
        case(
            ["float16[T,64]", "float16[64,1,3]", "int32[B + 1]", "float16[64]", "float16[B,64,4]", "int32[B]"],
            ["float16[T,64]", "float16[B,64,4]", "float16[B,2,64]"],
            dilation=2,
            state_update_capacity=2,
            activation="silu",
        ),
        case(
            ["float[T,4]", "float[4,1,3]", "int32[3]", "", "float[2,4,3]"],
            ["float[T,4]", "float[2,4,2]"],
            error="shape-mismatch",
        ),
        case(
            ["float[T,4]", "float[4,2,3]", "int32[3]", "", "float[2,4,2]"],
            ["float[T,4]", "float[2,4,2]"],
            error="shape-mismatch",
        ),
        case(
            ["float[T,4]", "float[4,1,3]", "int32[3]", "", "float[2,4,2]"],
            ["float[*]", "float[*]"],
            state_update_capacity=9,
            error="bad-attribute",
        ),
    ],
)
def varlen_causal_conv_with_state(ctx: RuleContext) -> list:
    """input (tokens, channels), weight (channels, 1, kernel): output (tokens, channels),
    final_state (batch, channels, (kernel - 1) * dilation), state_update (batch, capacity, channels)."""
    dilation, activation = ctx.attr("dilation", 1), ctx.attr("activation", "none")
    if dilation < 1:
        raise RuleError("bad-attribute", f"dilation must be >= 1, is {dilation}")
    if activation not in ("none", "silu", "swish"):
        raise RuleError("bad-attribute", f"activation must be 'none', 'silu' or 'swish', is {activation!r}")
    cap = _capacity(ctx, 5)
    x = _rank(ctx, 0, 2, "input")
    w = _rank(ctx, 1, 3, "weight")
    cum = _rank(ctx, 2, 1, "cumulative_sequence_length")
    c = None if x is None else x[1]
    state_len = None
    if w is not None:
        c = w[0] if c is None else same_dim(ctx, c, w[0], "input channels and weight's channels")
        same_dim(ctx, w[1], 1, "weight's second extent (a depthwise kernel)")
        state_len = D.mul(D.sub(w[2], 1), dilation)
    state = _rank(ctx, 4, 3, "initial_state")
    b = None if cum is None else D.sub(cum[0], 1)
    if state is not None:
        b = state[0] if b is None else same_dim(ctx, b, state[0], "batch of initial_state and of the lengths")
        c = state[1] if c is None else same_dim(ctx, c, state[1], "channels of initial_state")
        state_len = state[2] if state_len is None else same_dim(ctx, state_len, state[2], "initial_state's length")
    _expect(ctx, 3, (c,), "bias")
    t = None if x is None else x[0]
    return [(t, c), (b, c, state_len), (b, cap, c)][: ctx.n_outputs]
