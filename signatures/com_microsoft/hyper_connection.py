"""Hyper-connections: C residual streams of width H mixed around each block.

The streams are grouped ``(..., C, H)`` or flattened ``(..., C * H)``, the latter whenever
``num_branches`` (C) is set. BranchwiseRMSNorm and HyperConnectionPostMix keep the streams' shape,
HyperConnectionPreMix reduces them to ``(..., H)``; HyperConnectionLowRankMix (no CPU kernel, so
from the schema and its inference function, not cross-checked) also returns the post-mix gate
``(..., C)``. What the CPU kernels refuse (tests/test_contrib_a_runtime.py) is refused here: gates
whose leading axes are not the streams', or whose suffix is not ``(C)``, ``(C, 1)``, ``(C, H)`` (or
``(C * H)`` for flattened streams), scales not ``(H)``, ``(C * H)`` or ``(C, H)``.
"""

from __future__ import annotations

from dataclasses import dataclass

from infer.contract.context import RuleContext, RuleError
from infer.core import dims as D
from infer.core.dims import Dim
from signatures.com_microsoft import FLOAT, FLOAT_TYPES, INT, MS, REQUIRED
from signatures.com_microsoft.common import Shape, same_shape
from signatures.kit.helpers import same_dim
from signatures.kit.operator import case, operator


@dataclass(frozen=True)
class Streams:
    """The streams' leading axes, branch count C and width H (``None`` where not known)."""

    lead: Shape
    c: Dim
    h: Dim
    flat: bool


def streams(ctx: RuleContext, i: int) -> Streams | None:
    """Input ``i`` read as streams: flattened when ``num_branches`` is set, else grouped."""
    s = ctx.shape(i)
    branches = ctx.attr("num_branches", 0)
    if branches < 0 or (branches == 0 and ctx.op_type == "HyperConnectionLowRankMix"):
        raise RuleError("bad-attribute", f"{ctx.op_type}: num_branches must be positive, is {branches}")
    if s is None:
        return None
    if branches:
        if not s:
            raise RuleError("shape-mismatch", f"{ctx.op_type}: flattened streams need rank >= 1")
        width = s[-1]
        if isinstance(width, int) and (width <= 0 or width % branches):
            raise RuleError("shape-mismatch", f"{ctx.op_type}: stream width {width} is not a multiple of {branches}")
        return Streams(s[:-1], branches, D.floordiv(width, branches), True)
    if len(s) < 2:
        raise RuleError("shape-mismatch", f"{ctx.op_type}: grouped streams (..., C, H) need rank >= 2, have {len(s)}")
    return Streams(s[:-2], s[-2], s[-1], False)


def _lead(ctx: RuleContext, st: Streams, g: Shape, what: str) -> Shape:
    """``g``'s axes after the streams' leading ones, which must be the streams' own."""
    k = len(st.lead)
    if len(g) < k + 1:
        raise RuleError("shape-mismatch", f"{ctx.op_type}: {what} of rank {len(g)} lacks the streams' leading axes")
    for i, (a, b) in enumerate(zip(st.lead, g[:k])):
        same_dim(ctx, a, b, f"leading axis {i} of the streams and {what}")
    return g[k:]


def check_gate(ctx: RuleContext, st: Streams, i: int, what: str, flat_ok: bool) -> None:
    """A gate ``(..., C)``, ``(..., C, 1)``, ``(..., C, H)``, or ``(..., C * H)`` for flattened streams."""
    g = ctx.shape(i)
    if g is None:
        return
    suffix = _lead(ctx, st, g, what)
    if len(suffix) > 2:
        raise RuleError("shape-mismatch", f"{ctx.op_type}: {what} has {len(suffix)} axes past the leading ones")
    c, h = st.c, st.h
    if not (isinstance(c, int) and isinstance(h, int) and all(isinstance(d, int) for d in suffix)):
        return
    allowed = [(c,), (c, 1), (c, h)] + ([(c * h,)] if flat_ok and st.flat else [])
    if tuple(suffix) not in allowed:
        raise RuleError("shape-mismatch", f"{ctx.op_type}: {what} must end in (C), (C, 1) or (C, H), ends in {suffix}")


def check_scale(ctx: RuleContext, st: Streams, i: int) -> None:
    s = ctx.shape(i) if ctx.has(i) else None
    c, h = st.c, st.h
    if s is None or not (isinstance(c, int) and isinstance(h, int) and all(isinstance(d, int) for d in s)):
        return
    if tuple(s) not in ((h,), (c * h,), (c, h)):
        raise RuleError("shape-mismatch", f"{ctx.op_type}: scale must be (H), (C * H) or (C, H), is {list(s)}")


@operator(
    "BranchwiseRMSNorm",
    "X:T scale?:M",
    "Y:T",
    domain=MS,
    types={"T": FLOAT_TYPES, "M": FLOAT_TYPES},
    attrs={"num_branches": (INT, 0), "epsilon": (FLOAT, 1e-5)},
    examples=[
        case(["float[B,S,C,H]", "float[C,H]"], ["float[B,S,C,H]"]),
        case(["float16[B,S,32]", "float[8]"], ["float16[B,S,32]"], num_branches=4),
        case(["float[B,S,30]"], ["float[*]"], num_branches=4, error="shape-mismatch"),
        case(["float[8]"], ["float[*]"], error="shape-mismatch"),
        case(["float[B,S,4,8]", "float[5]"], ["float[*]"], error="shape-mismatch"),
    ],
)
def branchwise_rms_norm(ctx: RuleContext) -> list:
    """RMS normalization of each branch: Y has X's shape."""
    st = streams(ctx, 0)
    if st is not None:
        check_scale(ctx, st, 1)
    return [ctx.shape(0)]


@operator(
    "HyperConnectionPreMix",
    "streams:T pre_mix:M",
    "output:T",
    domain=MS,
    types={"T": FLOAT_TYPES, "M": FLOAT_TYPES},
    attrs={"reduction_scale": (FLOAT, 1.0), "num_branches": (INT, 0)},
    examples=[
        case(["float[B,S,C,H]", "float[B,S,C]"], ["float[B,S,H]"]),
        case(["float[B,S,32]", "float[B,S,4,1]"], ["float[B,S,8]"], num_branches=4),
        case(["float[B,S,W]", "float[B,S,4]"], ["float[B,S,W // 4]"], num_branches=4),
        case(["float[2,3,4,8]", "float[1,3,4]"], ["float[2,3,8]"], error="shape-mismatch"),
        case(["float[2,3,4,8]", "float[2,3,4,2]"], ["float[*]"], error="shape-mismatch"),
    ],
)
def hyper_connection_pre_mix(ctx: RuleContext) -> list:
    """The C streams reduced to one: ``(..., H)``."""
    st = streams(ctx, 0)
    if st is None:
        return [None]
    check_gate(ctx, st, 1, "pre_mix", flat_ok=True)
    return [(*st.lead, st.h)]


@operator(
    "HyperConnectionPostMix",
    "streams:T block_output:T post_mix:M stream_mix?:M",
    "output:T",
    domain=MS,
    types={"T": FLOAT_TYPES, "M": FLOAT_TYPES},
    attrs={"num_branches": (INT, 0)},
    examples=[
        case(["float[B,S,C,H]", "float[B,S,H]", "float[B,S,C,H]", "float[B,S,C,C]"], ["float[B,S,C,H]"]),
        case(["float[B,S,32]", "float[B,S,8]", "float[B,S,4]"], ["float[B,S,32]"], num_branches=4),
        case(
            ["float[2,3,4,8]", "float[2,3,8]", "float[2,3,4]", "float[2,3,4,3]"],
            ["float[2,3,4,8]"],
            error="shape-mismatch",
        ),
        case(["float[2,3,4,8]", "float[1,3,8]", "float[2,3,4]"], ["float[2,3,4,8]"], error="shape-mismatch"),
    ],
)
def hyper_connection_post_mix(ctx: RuleContext) -> list:
    """The streams mixed and the block output injected: the streams' shape."""
    st = streams(ctx, 0)
    if st is not None:
        block = ctx.shape(1)
        if block is not None:
            same_shape(ctx, (*st.lead, st.h), block, "block_output and the streams' (..., H)")
        check_gate(ctx, st, 2, "post_mix", flat_ok=False)
        mix = ctx.shape(3) if ctx.has(3) else None
        if mix is not None:
            suffix = _lead(ctx, st, mix, "stream_mix")
            if len(suffix) != 2:
                raise RuleError("shape-mismatch", "stream_mix must have shape (..., C, C)")
            for d in suffix:
                same_dim(ctx, d, st.c, "stream_mix extents and C")
    return [ctx.shape(0)]


@operator(
    "HyperConnectionLowRankMix",
    "streams:T norm_scale:T down_weight:T up_weight:T inject_weight:T prev_block_output?:T prev_post_gate?:T",
    "pre_output:T post_gate:T streams_out?:T",
    domain=MS,
    types={"T": FLOAT_TYPES},
    attrs={
        "gate_mul": (FLOAT, 1.0),
        "gate_div": (FLOAT, 1.0),
        "silu_alpha": (FLOAT, 1.0),
        "reduction_scale": (FLOAT, 1.0),
        "epsilon": (FLOAT, 1e-5),
        "num_branches": (INT, REQUIRED),
    },
    examples=[
        case(
            ["float[B,S,32]", "float[32]", "float[32,R]", "float[R,32]", "float[32,4]"],
            ["float[B,S,8]", "float[B,S,4]", "float[B,S,32]"],
            num_branches=4,
        ),
        case(
            ["float[B,S,32]", "float[32]", "float[32,R]", "float[R,32]", "float[32,4]"],
            ["float[*]", "float[*]"],
            error="bad-attribute",
        ),
    ],
)
def hyper_connection_low_rank_mix(ctx: RuleContext) -> list:
    """From the schema only (no CPU kernel): pre_output ``(..., H)``, post_gate ``(..., C)``,
    streams_out the streams' shape. The streams are always flattened ``(..., C * H)``."""
    st = streams(ctx, 0)
    if st is None:
        return [None, None, None][: ctx.n_outputs]
    return [(*st.lead, st.h), (*st.lead, st.c), ctx.shape(0)][: ctx.n_outputs]
