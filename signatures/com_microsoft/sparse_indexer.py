"""Sparse-attention indexers: SparseAttentionIndexer, PackedSparseAttentionIndexer,
PackedSparseAttentionIndexerMerge.

An indexer selects, for every query token, a fixed number of entries a following sparse
attention may read: ``token_budget + compress_ratio - 1`` under policy_mode ``qsa``, ``index_topk``
under ``csa``, padded with -1, so no extent depends on the data. Its state is explicit: the
packed form keeps fixed-capacity state (every ``present_*`` output is its ``past_*`` input), the
dense form grows its key cache by the entries this call emits. None has a CPU kernel; the rules
follow the schemas' documentation and agree with onnxruntime's schema inference, which the
tests ask (tests/test_contrib_b_runtime.py).
"""

from __future__ import annotations

from infer.contract.context import RuleContext, RuleError
from infer.core import dims as D
from infer.core.dims import Dim
from infer.core.types import TensorType
from signatures.com_microsoft import FLOAT, FLOAT_TYPES, INT, INT32, MS, REQUIRED, STRING
from signatures.kit.helpers import same_dim
from signatures.kit.operator import case, operator

Shape = tuple[Dim, ...]
_I64 = ("tensor(int64)",)
_POLICY = {"compress_ratio": (INT, REQUIRED), "epsilon": (FLOAT, 1e-6), "head_weight_scale": (FLOAT, None),
           "index_topk": (INT, None), "policy_mode": (STRING, REQUIRED), "scale": (FLOAT, None),
           "token_budget": (INT, None)}  # fmt: skip
_CSA_IN = "gate?:T position_bias?:T head_weights?:T position_ids?:I"


def _capacity(ctx: RuleContext) -> tuple[str, int, int]:
    """(policy_mode, compress_ratio, entries selected per query), the attributes checked."""
    mode, ratio = ctx.require("policy_mode"), ctx.require("compress_ratio")
    budget, topk = ctx.attr("token_budget"), ctx.attr("index_topk")
    if ratio <= 0:
        raise RuleError("bad-attribute", f"compress_ratio must be positive, is {ratio}")
    if mode == "qsa":
        if budget is None or budget <= 0 or budget % ratio:
            raise RuleError(
                "bad-attribute",
                f"policy_mode 'qsa' needs a positive token_budget divisible by compress_ratio {ratio}, has {budget}",
            )
        if topk is not None or ctx.has_attr("head_weight_scale"):
            raise RuleError("bad-attribute", "index_topk and head_weight_scale are for policy_mode 'csa' only")
        return mode, ratio, budget + ratio - 1
    if mode == "csa":
        if topk is None or topk <= 0:
            raise RuleError("bad-attribute", f"policy_mode 'csa' needs a positive index_topk, has {topk}")
        if budget is not None:
            raise RuleError("bad-attribute", "token_budget is for policy_mode 'qsa' only")
        for i in (1, 8):  # key and gate (onnxruntime's schema requires them)
            if not ctx.has(i):
                raise RuleError("arity", f"input {i} is required when policy_mode is 'csa'")
        return mode, ratio, topk
    raise RuleError("bad-attribute", f"policy_mode must be 'qsa' or 'csa', is {mode!r}")


def _outputs_for(ctx: RuleContext, mode: str, csa_only: tuple[int, ...]) -> None:
    """Outputs that exist only under policy_mode 'csa' must be omitted under 'qsa'."""
    for k in csa_only:
        if mode == "qsa" and ctx.wants_output(k):
            raise RuleError("arity", f"output {k} must be omitted when policy_mode is 'qsa'")


def _new_entries(ctx: RuleContext, b: Dim, s: Dim, ratio: int) -> tuple[Dim, Dim]:
    """(compressed entries a 'csa' call emits, its buffer's new length), from the buffer's length
    ``b`` and the new tokens ``s``. A buffer of at least ``ratio`` holds the previous complete
    window before its pending tokens; every ``ratio`` pending tokens close a window, and the last
    closed window stays in the buffer with the remainder."""
    over = ctx.less(b, ratio)
    if over is None:
        return None, None
    pending = D.add(D.sub(b, ratio) if over is False else b, s)
    closes = ctx.less(pending, ratio)
    if closes is None:
        return D.floordiv(pending, ratio), None
    return D.floordiv(pending, ratio), D.add(b, s) if closes else D.add(ratio, D.mod(pending, ratio))


_CSA = ["float[B,S,32]", "float[B,S,16]", "float[8]", "float[8]", "float[C,2]", "float[C,2]", "", "float[B,P,8]",
        "float[B,S,16]", "float[2,16]", "float[B,S,4]", "int64[B,S]", "", "float[2,B,1,16]"]  # fmt: skip
_CSA_ATTRS = {"policy_mode": "csa", "compress_ratio": 2, "index_topk": 3}
_CSA_OUT = ["int32[B,S,3]", "float[B,P + floor((S + 1)/2),8]", "float[2,B,mod(S + 1, 2) + 2,16]"]
_IDX = ["float[B,S,32]", "float[B,S,8]", "float[8]", "float[8]", "float[C,4]", "float[C,4]"]


@operator(
    "SparseAttentionIndexer",
    f"query:T key?:T query_norm_weight:T key_norm_weight:T cos_cache:T sin_cache:T mask?:TB past_key:T {_CSA_IN} "
    "past_sequence_length?:M past_proj_buffer?:T",
    "selected_indices:M present_key:T present_proj_buffer?:T",
    domain=MS,
    types={"T": FLOAT_TYPES, "TB": _I64, "I": _I64, "M": INT32},
    attrs=_POLICY,
    examples=[
        case(
            [*_IDX, "", "float[B,P,8]"],
            ["int32[B,S,5]", "float[B,P + S,8]"],
            policy_mode="qsa",
            compress_ratio=2,
            token_budget=4,
        ),
        case(
            [*_IDX, "", "float[B,M,8]", "", "", "", "", "int32[1]"],
            ["int32[B,S,5]", "float[B,M,8]"],
            policy_mode="qsa",
            compress_ratio=2,
            token_budget=4,
        ),
        case(_CSA, _CSA_OUT, attrs=_CSA_ATTRS),
        case([*_CSA[:13], "float[2,B,3,16]"], _CSA_OUT, attrs=_CSA_ATTRS),
        case(
            [
                "float[B,3,32]",
                "float[B,3,16]",
                *_IDX[2:],
                "",
                "float[B,5,8]",
                "float[B,3,16]",
                "float[2,16]",
                "float[B,3,4]",
                "int64[B,3]",
                "",
                "float[2,B,1,16]",
            ],
            ["int32[B,3,3]", "float[B,7,8]", "float[2,B,2,16]"],
            policy_mode="csa",
            compress_ratio=2,
            index_topk=3,
        ),
        case(
            [*_IDX, "", "float[B,P,8]"],
            ["int32[*]", "float[*]"],
            policy_mode="qsa",
            compress_ratio=2,
            token_budget=5,
            error="bad-attribute",
        ),
        case(
            [*_IDX, "", "float[B,P,8]"],
            ["int32[*]", "float[*]", "float[*]"],
            policy_mode="qsa",
            compress_ratio=2,
            token_budget=4,
            error="arity",
        ),
    ],
)
def sparse_attention_indexer(ctx: RuleContext) -> list:
    """selected_indices (batch, sequence, capacity); present_key the past cache when its valid
    length is an input (past_sequence_length), else grown by this call's entries: every new token
    ('qsa', raw keys) or every closed window ('csa', compressed keys); 'csa''s present_proj_buffer
    (2, batch, new buffer length, 2 * head_size)."""
    mode, ratio, capacity = _capacity(ctx)
    _outputs_for(ctx, mode, (2,))
    q, past = ctx.shape(0), ctx.shape(7)
    for what, given in (("query", q), ("past_key", past)):
        if given is not None and len(given) != 3:
            raise RuleError("shape-mismatch", f"{what} must be 3-D, has rank {len(given)}")
    b, s = (q[0], q[1]) if q is not None else (None, None)
    selected = (b, s, capacity)
    buffer = ctx.shape(13) if ctx.has(13) else None
    if buffer is not None and len(buffer) != 4:
        raise RuleError("shape-mismatch", f"past_proj_buffer must be 4-D, has rank {len(buffer)}")
    if past is None:
        present: Shape | None = None
    elif ctx.has(12):
        present = past
    elif mode == "qsa":
        present = (past[0], D.add(past[1], s), past[2])
    else:
        added, _ = _new_entries(ctx, 0 if buffer is None else buffer[2], s, ratio)
        present = (past[0], D.add(past[1], added), past[2])
    if mode == "qsa":
        return [selected, present]
    _, length = _new_entries(ctx, 0 if buffer is None else buffer[2], s, ratio)
    width = None if buffer is None else buffer[3]
    return [selected, present, (2, b, length, width)][: ctx.n_outputs]


_SHARE_INPUTS = range(18, 22)  # indexshare_mode, merged_indices, merged_counts, merged_status
_SHARE_STATUS = 7  # the indexshare_status output


def _index_share(ctx: RuleContext, batch: Dim, selected: int) -> int:
    """The IndexShare width: max_output_entries, 0 (its default) when IndexShare is off. Its
    inputs, its status output and a width of at least the ``selected`` entries come together
    (onnxruntime's schema); merged_indices is (batch, width)."""
    width: int = ctx.attr("max_output_entries", 0)
    given = [ctx.has(i) for i in _SHARE_INPUTS]
    wanted = ctx.wants_output(_SHARE_STATUS)
    if not (width or any(given) or wanted):
        return 0
    if width < selected:
        raise RuleError("bad-attribute", f"IndexShare needs max_output_entries of at least {selected}, has {width}")
    if not all(given) or not wanted:
        raise RuleError("arity", "IndexShare needs all four of its inputs, its status output and max_output_entries")
    merged = ctx.shape(19)
    if merged is not None:
        if len(merged) != 2:
            raise RuleError("shape-mismatch", f"merged_indices must be 2-D, has rank {len(merged)}")
        same_dim(ctx, merged[1], width, "merged_indices' width and max_output_entries")
        if ctx.equal(merged[0], 0) is not True and batch is not None:
            same_dim(ctx, merged[0], batch, "merged_indices' rows and the batch")
    return width


_CSA_P = {"policy_mode": "csa", "compress_ratio": 2, "index_topk": 3, "state_capacity": 6}
_PIDX = ["float[T,32]", "float[T,8]", "float[8]", "float[8]", "float[C,4]", "float[C,4]", "int32[B + 1]", "int32[B]",
         "", "", "", "", "float[B,6,8]", "float[B,3,8]", "", "int32[B,2]"]  # fmt: skip
# ('qsa' omits present_gate_buffer, the fifth of six or more outputs, which examples cannot
# express: tests/test_contrib_b_runtime.py checks that form against onnxruntime's schema.)
_PCSA = [*_PIDX[:1], "float[T,16]", *_PIDX[2:8], "float[T,16]", "float[2,16]", "float[T,4]", "int64[T]",
         "float[B,6,8]", "float[B,3,16]", "float[B,3,16]", "int32[B,2]"]  # fmt: skip
_PSAI_ERR = ["int32[*]", "int32[*]", "float[*]", "float[*]", "float[*]", "int32[*]"]
_QSA = {"policy_mode": "qsa", "compress_ratio": 2, "token_budget": 4, "state_capacity": 6}


@operator(
    "PackedSparseAttentionIndexer",
    "query:T key?:T query_norm_weight:T key_norm_weight:T cos_cache:T sin_cache:T cumulative_sequence_lengths:M "
    f"past_sequence_lengths:M {_CSA_IN} past_key_state:T_KEY past_kv_buffer:T past_gate_buffer?:T "
    "past_state_lengths:M state_update_capture_count?:M state_update_active?:M indexshare_mode?:M merged_indices?:M "
    "merged_counts?:M merged_status?:M",
    "selected_indices:M selected_counts:M present_key_state:T_KEY present_kv_buffer:T present_gate_buffer?:T "
    "present_state_lengths:M state_update?:T indexshare_status?:M state_status?:M",
    domain=MS,
    types={"T": FLOAT_TYPES, "T_KEY": FLOAT_TYPES, "I": _I64, "M": INT32},
    attrs={
        **_POLICY,
        "indexshare_state_policy": (STRING, "default"),
        "max_output_entries": (INT, 0),
        "state_capacity": (INT, REQUIRED),
        "state_update_capacity": (INT, 0),
    },
    examples=[
        case(
            _PCSA,
            ["int32[T,3]", "int32[T]", "float[B,6,8]", "float[B,3,16]", "float[B,3,16]", "int32[B,2]"],
            attrs=_CSA_P,
        ),
        case(_PCSA, _PSAI_ERR, attrs={**_CSA_P, "state_update_capacity": 9}, error="bad-attribute"),
        case(_PIDX, _PSAI_ERR, attrs=_QSA, error="arity"),
    ],
)
def packed_sparse_attention_indexer(ctx: RuleContext) -> list:
    """selected_indices (tokens, capacity), selected_counts (tokens); the fixed-capacity state
    outputs are their past inputs; state_update (batch, state_update_capacity, head_size);
    state_status (batch). With IndexShare (max_output_entries set) selected_indices is
    (rows, max_output_entries), and its rows, selected_counts' and indexshare_status' depend on
    the run (onnxruntime's schema leaves them open)."""
    mode, _, capacity = _capacity(ctx)
    _outputs_for(ctx, mode, (4,))
    cap = ctx.attr("state_update_capacity", 0)
    if not 0 <= cap <= 8:
        raise RuleError("bad-attribute", f"state_update_capacity must be in [0, 8], is {cap}")
    if ctx.require("state_capacity") <= 0:
        raise RuleError("bad-attribute", "state_capacity must be positive")
    q = ctx.shape(0)
    if q is not None and len(q) != 2:
        raise RuleError("shape-mismatch", f"query must be 2-D (tokens, width), has rank {len(q)}")
    tokens = None if q is None else q[0]
    cum, past_len = ctx.shape(6), ctx.shape(7)
    batch = past_len[0] if past_len is not None and len(past_len) == 1 else None
    if cum is not None and len(cum) == 1:
        batch = D.sub(cum[0], 1) if batch is None else same_dim(ctx, batch, D.sub(cum[0], 1), "batch of the lengths")
    norm = ctx.shape(2)
    head = norm[0] if norm is not None and len(norm) == 1 else None

    def state(i: int) -> TensorType | None:
        return TensorType(ctx.elem(i), ctx.shape(i)) if ctx.has(i) else None

    shared = _index_share(ctx, batch, capacity)
    selected: Shape
    rows: Shape
    if shared:
        ctx.because("the rows of an IndexShare selection are left open (so does onnxruntime's schema)")
        selected, rows = (None, shared), (None,)
    else:
        selected, rows = (tokens, capacity), (tokens,)
    return [selected, rows, state(12), state(13), state(14), state(15), (batch, cap, head), rows, (batch,)][
        : ctx.n_outputs
    ]


@operator(
    "PackedSparseAttentionIndexerMerge",
    "base_indices:T base_counts:T base_row_indices:T range_starts?:T range_ends?:T additional_indices?:T "
    "additional_counts?:T",
    "selected_indices:T selected_counts:T status:T",
    domain=MS,
    types={"T": INT32},
    attrs={"max_output_entries": (INT, REQUIRED), "policy_mode": (STRING, REQUIRED)},
    examples=[
        case(
            ["int32[R,C]", "int32[R]", "int32[N]", "int32[N]", "int32[N]"],
            ["int32[N,16]", "int32[N]", "int32[N]"],
            policy_mode="append_range",
            max_output_entries=16,
        ),
        case(
            ["int32[R,C]", "int32[R]", "int32[N]", "", "", "int32[N,A]", "int32[N]"],
            ["int32[N,16]", "int32[N]", "int32[N]"],
            policy_mode="append_indices",
            max_output_entries=16,
        ),
        case(
            ["int32[R,C]", "int32[R]", "int32[N]", "int32[N]", "int32[N]"],
            ["int32[*]"] * 3,
            policy_mode="append_indices",
            max_output_entries=16,
            error="arity",
        ),
        case(
            ["int32[3,5]", "int32[4]", "int32[7]", "int32[7]", "int32[7]"],
            ["int32[7,16]", "int32[7]", "int32[7]"],
            policy_mode="append_range",
            max_output_entries=16,
            error="shape-mismatch",
        ),
    ],
)
def packed_sparse_attention_indexer_merge(ctx: RuleContext) -> list:
    """(N, max_output_entries), (N), (N): N is base_row_indices' length, the output queries."""
    mode, width = ctx.require("policy_mode"), ctx.require("max_output_entries")
    if mode not in ("append_range", "append_indices") or not 1 <= width <= 1 << 30:
        raise RuleError("bad-attribute", f"policy_mode {mode!r} and max_output_entries {width} are not valid")
    ranges, extra = ctx.has(3) or ctx.has(4), ctx.has(5) or ctx.has(6)
    if (
        (mode == "append_range") != (ranges and not extra)
        or (ranges and not (ctx.has(3) and ctx.has(4)))
        or (extra and not (ctx.has(5) and ctx.has(6)))
    ):
        raise RuleError("arity", f"the merge inputs do not match policy_mode {mode!r}")
    base, counts, rows = ctx.shape(0), ctx.shape(1), ctx.shape(2)
    if base is not None and counts is not None and len(base) == 2 and len(counts) == 1:
        same_dim(ctx, base[0], counts[0], "base_indices' and base_counts' rows")
    n = rows[0] if rows is not None and len(rows) == 1 else None
    for i in (3, 4, 6):
        s = ctx.shape(i) if ctx.has(i) else None
        if s is not None and len(s) == 1:
            n = s[0] if n is None else same_dim(ctx, n, s[0], f"the rows of input {i} and base_row_indices")
    return [(n, width), (n,), (n,)]
