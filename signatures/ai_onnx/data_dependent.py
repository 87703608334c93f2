"""Operators whose output extents depend on the data: NonZero, Unique, Compress, NonMaxSuppression.

Rank and element type are always known. An extent that counts something in the data is unknown
(a fresh variable whose reason names what it counts) unless the data is known at inference time
(small constant tensors tracked as ``Known`` contents): then the exact result is computed,
contents included where they are cheap.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from infer.contract.context import Facts, RuleContext, RuleError
from infer.core import dims as D
from infer.core.dims import Dim
from infer.core.types import TensorType
from infer.core.values import MAX_KNOWN_ELEMENTS, Known, SymFloat, Value
from signatures.kit import valueops as V
from signatures.kit.helpers import ONE, elements, flag, norm_axis, same_dim
from signatures.kit.registry import example, rule


def shared_unknown(ctx: RuleContext, tag: str, reason: str, *inputs: int) -> Dim:
    """One fresh variable for an extent several outputs share (Unique's number of values).

    The engine gives each unknown extent a variable of its own; an extent that is provably the
    same in several outputs gets one here, keyed by the node so re-inference is stable.
    """
    ctx.because(reason, *inputs)
    out = next((o for o in map(ctx.output_name, range(ctx.n_outputs)) if o), None)
    return ctx.fresh(reason, (tag,), out, None, ctx.causes)


def _concrete(k: Known | None) -> bool:
    """Every element is a plain number, bool or string (no symbolic or unknown element)."""
    return k is not None and all(isinstance(e, (bool, int, float, str)) for e in k.elems)


def _known(arr: np.ndarray) -> Known | None:
    if arr.size > MAX_KNOWN_ELEMENTS:
        return None
    return Known(tuple(int(s) for s in arr.shape), tuple(arr.reshape(-1).tolist()))


# -- NonZero --------------------------------------------------------------------------------------


def _is_nonzero(e: Any, facts: Facts) -> bool | None:
    """Whether one element counts as non-zero; ``None`` when that is not known."""
    if e is None or isinstance(e, str):
        return None  # strings: onnxruntime has no kernel, the reference tests for non-empty
    if isinstance(e, (bool, int, float)):
        return e != 0  # NaN is non-zero in every runtime
    if isinstance(e, SymFloat):
        e = e.num  # a non-zero quotient stays non-zero in the float (no underflow at these sizes)
    lo, hi = facts.bounds(e)
    return True if (lo is not None and lo > 0) or (hi is not None and hi < 0) else None


@rule("NonZero", since=9)
def nonzero(ctx: RuleContext) -> list:
    s = ctx.shape(0)
    k = ctx.known(0)
    # A scalar input: onnxruntime answers with 1 row, the reference evaluator with 0.
    rows: Dim = len(s) if s is not None and s else None
    flags = [_is_nonzero(e, ctx) for e in k.elems] if k is not None else None
    if flags is not None and None not in flags:
        count: Dim = sum(bool(f) for f in flags)
        if rows is None:
            return [(rows, count)]
        coords = np.argwhere(np.array(flags, dtype=bool).reshape(k.shape)).T  # type: ignore[union-attr]
        return [Value(TensorType(None, (rows, count)), _known(coords.astype(object)))]
    if elements(s) == 0:
        return [(rows, 0)]
    ctx.because(f"the number of non-zero elements of `{ctx.input_name(0)}`", 0)
    return [(rows, None)]


# -- Unique ---------------------------------------------------------------------------------------


def _unique_known(k: Known, axis: int | None, sort: bool) -> list[Value] | None:
    """Unique's four outputs computed from known contents; ``None`` where runtimes disagree."""
    if any(isinstance(e, float) and math.isnan(e) for e in k.elems):
        return None  # onnxruntime merges NaNs, the reference evaluator keeps them apart
    if len({type(e) for e in k.elems}) > 1 and not all(isinstance(e, (int, float)) for e in k.elems):
        return None
    arr = V.as_array(k)
    if arr is None:
        return None
    if axis is None:
        items: list[Any] = list(arr.reshape(-1))
    else:
        if arr.shape[axis] > 0 and arr.size == 0:
            return None  # slices of no elements, all equal: onnxruntime aborts on this
        moved = np.moveaxis(arr, axis, 0)
        items = [tuple(row) for row in moved.reshape(moved.shape[0], math.prod(moved.shape[1:]))]
    first: dict[Any, int] = {}
    for i, it in enumerate(items):
        first.setdefault(it, i)
    order = sorted(first) if sort else list(first)  # slices compare lexicographically
    pos = {it: j for j, it in enumerate(order)}
    idx = [first[it] for it in order]
    inverse = [pos[it] for it in items]
    counts = [0] * len(order)
    for it in items:
        counts[pos[it]] += 1
    u = len(order)
    if axis is None:
        y = np.array(order, dtype=object).reshape(u)
    else:
        picked = np.moveaxis(arr, axis, 0)[idx] if u else np.moveaxis(arr, axis, 0)[:0]
        y = np.moveaxis(picked, 0, axis)
    y_value = Value(TensorType(None, tuple(int(d) for d in y.shape)), _known(y))
    return [y_value, _vector(idx), _vector(inverse), _vector(counts)]


def _vector(xs: list[int]) -> Value:
    return Value(TensorType(None, (len(xs),)), Known((len(xs),), tuple(xs)))


def _reference_y(
    ctx: RuleContext, s: tuple[Dim, ...] | None, y: tuple[Dim, ...] | None, u: Dim
) -> tuple[Dim, ...] | None:
    """What ``Y`` holds for both readings of ``sorted=0``: the definition's and the reference's.

    The reference evaluator (onnx 1.23) reorders an unsorted result by taking from ``X`` along
    axis 0 whatever the axis, so its ``Y`` is ``[u, *X.shape[1:]]``; onnxruntime follows the
    definition. Only the extents the two share are claimed.
    """
    if s is None or y is None or not s:
        return None
    ref = (u, *s[1:])
    if len(ref) != len(y):
        return None
    return tuple(a if ctx.equal(a, b) is True else None for a, b in zip(y, ref))


@rule("Unique", since=11)
def unique(ctx: RuleContext) -> list:
    s = ctx.shape(0)
    axis = ctx.attr("axis")
    sort = flag(ctx, "sorted", 1, ONE)  # onnxruntime sorts only for exactly 1: 2 and -1 keep the input's order
    name = ctx.input_name(0)
    if axis is not None and s is not None:
        axis = norm_axis(ctx, axis, len(s))
    k = ctx.known(0)
    # Unsorted results agree across runtimes only along axis 0 or for a 1-D input (_reference_y).
    agreed = sort or axis == 0 or (axis is None and s is not None and len(s) == 1)
    if _concrete(k) and agreed and (axis is None or s is not None):
        out = _unique_known(k, axis, sort)  # type: ignore[arg-type]
        if out is not None:
            return out[: ctx.n_outputs]
    if axis is None:
        n = elements(s)
        u = n if n in (0, 1) else shared_unknown(ctx, "unique", f"the number of distinct elements of `{name}`", 0)
        along: Dim = n
        y: tuple[Dim, ...] | None = (u,)
    else:
        along = s[axis] if s is not None else None
        if along in (0, 1):
            u = along
        else:
            u = shared_unknown(ctx, "unique", f"the number of distinct slices of `{name}` along axis {axis}", 0)
        y = None if s is None else s[:axis] + (u,) + s[axis + 1 :]
    if not agreed:
        y = _reference_y(ctx, s, y, u)
    return [y, (u,), (along,), (u,)][: ctx.n_outputs]


# -- Compress -------------------------------------------------------------------------------------


def _selected(positions: Sequence[int], extent: Dim) -> Dim:
    """How many of the true ``positions`` fall inside an axis of ``extent``.

    A condition longer than the axis is out of the definition: onnxruntime drops the positions
    past the end, the reference evaluator fails. Counting only those inside holds for both.
    """
    if not positions:
        return 0
    if extent is None:
        return None
    if isinstance(extent, int):
        return sum(1 for p in positions if p < extent)
    return D.total(D.dmin(1, D.dmax(0, D.sub(extent, p))) for p in positions)


@rule("Compress", since=9)
def compress(ctx: RuleContext) -> list:
    s = ctx.shape(0)
    cs = ctx.shape(1)
    if cs is not None and len(cs) != 1:
        raise RuleError("shape-mismatch", f"condition must be 1-D, has rank {len(cs)}")
    axis = ctx.attr("axis")
    if axis is not None:
        if s is None:
            return [None]
        axis = norm_axis(ctx, axis, len(s))
        extent = s[axis]
    else:
        extent = elements(s)
    cond = ctx.known(1)
    count: Dim = None
    positions: list[int] | None = None
    if cond is not None and all(isinstance(e, (bool, int)) for e in cond.elems):
        positions = [i for i, e in enumerate(cond.elems) if e]
        count = _selected(positions, extent)
    if count is None:
        ctx.because(f"the number of true elements of `{ctx.input_name(1)}`", 1)
    shape = (count,) if axis is None else s[:axis] + (count,) + s[axis + 1 :]  # type: ignore[index]
    known = None
    x = ctx.known(0)
    arr = V.as_array(x) if x is not None and positions is not None and isinstance(count, int) else None
    if arr is not None and positions is not None:
        keep = [p for p in positions if p < (arr.size if axis is None else arr.shape[axis])]
        known = _known(arr.reshape(-1)[keep] if axis is None else np.take(arr, keep, axis=axis))
    return [Value(TensorType(None, shape), known)]


# -- NonMaxSuppression ----------------------------------------------------------------------------


@rule("NonMaxSuppression", since=10)
def non_max_suppression(ctx: RuleContext) -> list:
    boxes, scores = ctx.shape(0), ctx.shape(1)
    if boxes is not None and (len(boxes) != 3 or ctx.equal(boxes[2], 4) is False):
        raise RuleError("shape-mismatch", f"boxes must be [batches, boxes, 4], is {list(boxes)}")
    if scores is not None and len(scores) != 3:
        raise RuleError("shape-mismatch", f"scores must be [batches, classes, boxes], has rank {len(scores)}")
    if boxes is not None and scores is not None:
        same_dim(ctx, boxes[0], scores[0], "the batches of boxes and scores")
        same_dim(ctx, boxes[1], scores[2], "the boxes of boxes and scores")
    # Without max_output_boxes_per_class (default 0) nothing is selected.
    limit = ctx.known(2) if ctx.has(2) else Known((), (0,))
    empty = (limit is not None and limit.scalar() == 0) or any(
        d == 0 for s in (boxes, scores) if s is not None for d in s
    )
    if empty:
        return [(0, 3)]
    ctx.because(
        f"the number of boxes selected depends on the values of `{ctx.input_name(0)}` and `{ctx.input_name(1)}`",
        0,
        1,
    )
    return [(None, 3)]


example("NonZero", ["float[N,C]"], ["int64[2,?]"], opset=13)
example("NonZero", ["float[*]"], ["int64[?,?]"])
example("NonZero", ["int64[2,2]={1,0,0,3}"], ["int64[2,2]={0,1,0,1}"], opset=9)
example("NonZero", ["int64[3]={N,0,M}"], ["int64[1,2]={0,2}"])
example("NonZero", ["float[0,3]"], ["int64[2,0]"])
example("NonZero", ["float[]={2.0}"], ["int64[?,1]"])
example("Unique", ["float[N,C]"], ["float[?]", "int64[?]", "int64[N*C]", "int64[?]"])
example("Unique", ["float[N,C]"], ["float[?,C]", "int64[?]", "int64[N]", "int64[?]"], attrs={"axis": 0}, opset=11)
example(
    "Unique", ["float[N,C,H]"], ["float[?,?,H]", "int64[?]", "int64[C]", "int64[?]"], attrs={"axis": 1, "sorted": 0}
)
example("Unique", ["float[N,C]"], ["float[*]", "int64[?]", "int64[N*C]", "int64[?]"], attrs={"sorted": 0})
example("Unique", ["float[N]"], ["float[?]", "int64[?]", "int64[N]", "int64[?]"], attrs={"sorted": 0})
example("Unique", ["float[N,C]"], ["float[N,?]", "int64[?]", "int64[C]", "int64[?]"], attrs={"axis": -1}, opset=28)
example("Unique", ["float[N,1]"], ["float[N,1]", "int64[1]", "int64[1]", "int64[1]"], attrs={"axis": 1})
example(
    "Unique",
    ["int64[5]={3,1,3,2,1}"],
    ["int64[3]={1,2,3}", "int64[3]={1,3,0}", "int64[5]={2,0,2,1,0}", "int64[3]={2,1,2}"],
)
example(
    "Unique",
    ["int64[5]={3,1,3,2,1}"],
    ["int64[3]={3,1,2}", "int64[3]={0,1,3}", "int64[5]={0,1,0,2,1}", "int64[3]={2,2,1}"],
    attrs={"sorted": 0},
)
example(
    "Unique",
    ["int64[3,2]={1,2,0,5,1,2}"],
    ["int64[2,2]={0,5,1,2}", "int64[2]={1,0}", "int64[3]={1,0,1}", "int64[2]={1,2}"],
    attrs={"axis": 0},
)
example("Unique", ["float[N,C]"], ["float[*]"], attrs={"axis": 2}, error="bad-attribute")
example("Compress", ["float[N,C]", "bool[K]"], ["float[?]"], opset=9)
example("Compress", ["float[N,C]", "bool[K]"], ["float[N,?]"], attrs={"axis": 1})
example("Compress", ["float[3,C]", "bool[3]={true,false,true}"], ["float[2,C]"], attrs={"axis": 0})
example("Compress", ["float[2,C]", "bool[3]={true,false,true}"], ["float[1,C]"], attrs={"axis": 0}, opset=11)
example(
    "Compress", ["float[N,C]", "bool[3]={true,false,true}"], ["float[min(max(N - 2, 0), 1) + 1,C]"], attrs={"axis": 0}
)
example("Compress", ["int64[2,2]={1,2,3,4}", "bool[4]={false,true,true,false}"], ["int64[2]={2,3}"], opset=28)
example("Compress", ["float[N,C]", "bool[2,2]"], ["float[*]"], error="shape-mismatch")
example("NonMaxSuppression", ["float[B,N,4]", "float[B,C,N]", "int64[1]"], ["int64[?,3]"])
example("NonMaxSuppression", ["float[B,N,4]", "float[B,C,N]"], ["int64[0,3]"], opset=10)
example("NonMaxSuppression", ["float[B,N,4]", "float[B,C,N]", "int64[1]={0}"], ["int64[0,3]"])
example("NonMaxSuppression", ["float[B,N,5]", "float[B,C,N]", "int64[1]"], ["int64[*]"], error="shape-mismatch")
example(
    "Unique",
    ["int64[5]={3,1,3,2,1}"],
    ["int64[3]={3,1,2}", "int64[3]={0,1,3}", "int64[5]={0,1,0,2,1}", "int64[3]={2,2,1}"],
    attrs={"sorted": 2},
)
