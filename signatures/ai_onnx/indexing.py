"""Element-wise indexing: GatherElements, ScatterElements, Scatter, ScatterND, OneHot, ReverseSequence.

Gathers take the indices' shape, scatters and ReverseSequence the data's. OneHot inserts an
axis of extent ``depth``, read from the contents of its ``depth`` input. Known contents (small
shape tensors) are followed through GatherElements and the scatters.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from infer.contract.context import RuleContext, RuleError
from infer.core.dims import Dim
from infer.core.types import TensorType
from infer.core.values import Known, SymFloat, Value
from signatures.kit import valueops as V
from signatures.kit.helpers import norm_axis, same_dim
from signatures.kit.registry import example, rule

Shape = tuple[Dim, ...]
# Scatter reductions (opset 16 added add and mul, opset 18 max and min).
# Sums and products of duplicate indices only where exact: their order is the runtime's.
REDUCTIONS: dict[str, str] = {"add": "add_exact", "mul": "mul_exact", "max": "max", "min": "min"}


def _arrays(*ks: Known) -> list[np.ndarray] | None:
    """The contents as numpy object arrays; ``None`` when numpy cannot hold one of them."""
    arrays = [V.as_array(k) for k in ks]
    return None if any(a is None for a in arrays) else arrays  # type: ignore[return-value]


def _known(arr: np.ndarray) -> Known:
    return Known(tuple(int(s) for s in arr.shape), tuple(arr.reshape(-1).tolist()))


def _same_shape(ctx: RuleContext, a: Shape | None, b: Shape | None, what: str) -> None:
    if a is None or b is None:
        return
    if len(a) != len(b):
        raise RuleError("shape-mismatch", f"{what} have ranks {len(a)} and {len(b)}")
    for i, (x, y) in enumerate(zip(a, b)):
        same_dim(ctx, x, y, f"{what} at axis {i}")


def _index(i: Any, n: int) -> int | None:
    """An index into an axis of extent ``n`` (negative counts from the end); ``None`` if out of range."""
    if not isinstance(i, int) or isinstance(i, bool) or not -n <= i < n:
        return None
    return i + n if i < 0 else i


# -- GatherElements -------------------------------------------------------------------------------


def _gather_elements_known(data: Known | None, idx: Known | None, axis: int) -> Known | None:
    if data is None or idx is None or len(idx.shape) != len(data.shape):
        return None
    arrays = _arrays(data, idx)
    if arrays is None:
        return None
    arr, ind = arrays
    out = np.empty(ind.shape, dtype=object)
    for pos in np.ndindex(ind.shape):
        i = _index(ind[pos], arr.shape[axis])
        if i is None or any(p >= arr.shape[j] for j, p in enumerate(pos) if j != axis):
            return None
        out[pos] = arr[pos[:axis] + (i,) + pos[axis + 1 :]]
    return _known(out)


@rule("GatherElements", since=11)
def gather_elements(ctx: RuleContext) -> list:
    s, idx = ctx.shape(0), ctx.shape(1)
    rank = len(s) if s is not None else (len(idx) if idx is not None else None)
    if rank is None:
        return [None]
    if s is not None and idx is not None and len(s) != len(idx):
        raise RuleError("shape-mismatch", f"data has rank {len(s)}, indices rank {len(idx)}")
    axis = norm_axis(ctx, ctx.attr("axis", 0), rank)
    if idx is None:
        return [(None,) * rank]
    return [Value(TensorType(None, idx), _gather_elements_known(ctx.known(0), ctx.known(1), axis))]


# -- scatters -------------------------------------------------------------------------------------


def _reduction(ctx: RuleContext) -> str:
    red: str = ctx.attr("reduction", "none") if ctx.version >= 16 else "none"
    if red != "none" and (red not in REDUCTIONS or (ctx.version < 18 and red in ("max", "min"))):
        raise RuleError("bad-attribute", f"reduction {red!r} is not defined at opset {ctx.version}")
    return red


def _put(out: np.ndarray, target: tuple, value: Any, red: str | V.Op, seen: set) -> bool:
    """Write one update (``red``: "none" or the reduction's element operation); ``False`` when
    the result is not determined (a repeated plain write)."""
    if isinstance(red, str):  # "none"
        if target in seen:
            return False  # duplicate indices without a reduction: the result is unspecified
        seen.add(target)
        out[target] = value
    else:
        out[target] = red(out[target], value)
    return True


def _reduction_op(ctx: RuleContext, red: str) -> str | V.Op:
    if red == "none":
        return red
    op: V.Op = getattr(V.ops_of(ctx), REDUCTIONS[red])
    return op


def _scatter_elements_known(ctx: RuleContext, axis: int, red: str) -> Known | None:
    data, idx, upd = ctx.known(0), ctx.known(1), ctx.known(2)
    if data is None or idx is None or upd is None or idx.shape != upd.shape or len(idx.shape) != len(data.shape):
        return None
    arrays = _arrays(data, idx, upd)
    if arrays is None:
        return None
    out, ind, up = arrays[0].copy(), arrays[1], arrays[2]
    red_op = _reduction_op(ctx, red)
    seen: set = set()
    for pos in np.ndindex(ind.shape):
        i = _index(ind[pos], out.shape[axis])
        if i is None or any(p >= out.shape[j] for j, p in enumerate(pos) if j != axis):
            return None
        if not _put(out, pos[:axis] + (i,) + pos[axis + 1 :], up[pos], red_op, seen):
            return None
    return _known(out)


@rule("Scatter", since=9)
@rule("ScatterElements", since=11)
def scatter_elements(ctx: RuleContext) -> list:
    s, idx, upd = ctx.shape(0), ctx.shape(1), ctx.shape(2)
    _same_shape(ctx, idx, upd, "indices and updates")
    red = _reduction(ctx)
    if s is None:
        return [None]
    if idx is not None and len(idx) != len(s):
        raise RuleError("shape-mismatch", f"data has rank {len(s)}, indices rank {len(idx)}")
    axis = norm_axis(ctx, ctx.attr("axis", 0), len(s))
    return [Value(TensorType(None, s), _scatter_elements_known(ctx, axis, red))]


def _scatter_nd_known(ctx: RuleContext, red: str) -> Known | None:
    data, idx, upd = ctx.known(0), ctx.known(1), ctx.known(2)
    if data is None or idx is None or upd is None or not idx.shape:
        return None
    arrays = _arrays(data, idx, upd)
    if arrays is None:
        return None
    out, ind, up = arrays[0].copy(), arrays[1], arrays[2]
    k = ind.shape[-1]
    if k > out.ndim or up.shape != ind.shape[:-1] + out.shape[k:]:
        return None
    red_op = _reduction_op(ctx, red)
    seen: set = set()
    for pos in np.ndindex(ind.shape[:-1]):
        target = tuple(_index(i, n) for i, n in zip(ind[pos], out.shape))
        if None in target:
            return None
        if out.ndim > k:  # a slice: write it element by element
            for rest in np.ndindex(out.shape[k:]):
                if not _put(out, target + rest, up[pos + rest], red_op, seen):
                    return None
        elif not _put(out, target, up[pos], red_op, seen):
            return None
    return _known(out)


@rule("ScatterND", since=11)
def scatter_nd(ctx: RuleContext) -> list:
    s, idx, upd = ctx.shape(0), ctx.shape(1), ctx.shape(2)
    red = _reduction(ctx)
    if idx is not None and not idx:
        raise RuleError("shape-mismatch", "indices must have rank >= 1")
    if s is not None and idx is not None and isinstance(idx[-1], int):
        k = idx[-1]
        if k > len(s):
            raise RuleError("shape-mismatch", f"indices address {k} axes of a rank-{len(s)} input")
        _same_shape(ctx, upd, idx[:-1] + s[k:], "updates and indices.shape[:-1] + data.shape[k:]")
    if s is None:
        return [None]
    return [Value(TensorType(None, s), _scatter_nd_known(ctx, red))]


# -- OneHot ---------------------------------------------------------------------------------------


def _depth(ctx: RuleContext) -> Dim:
    """The depth input's one element as an extent, or ``None`` (with the reason) if unknown."""
    ds = ctx.shape(1)
    if ds is not None and (len(ds) > 1 or (len(ds) == 1 and ctx.equal(ds[0], 1) is False)):
        raise RuleError("shape-mismatch", f"depth must be a scalar or hold one element, has shape {list(ds)}")
    k = ctx.known(1)
    e = k.scalar() if k is not None else None
    if e is None:
        ctx.contents_unknown(1, "the depth")
        return None
    if isinstance(e, float):
        if not e.is_integer():
            # Non-integral depth: onnxruntime truncates it, the reference evaluator does not.
            ctx.because(f"the depth {e} is not an integer and runtimes convert it differently", 1)
            return None
        e = int(e)
    if isinstance(e, SymFloat):
        if e.den != 1 or e.rounded:
            ctx.because("the depth is a float that may not be an integer", 1)
            return None
        e = e.num
    if isinstance(e, (bool, str)):
        ctx.because("the depth is not a number", 1)
        return None
    if isinstance(e, int) and e < 0:
        raise RuleError("shape-mismatch", f"depth {e} is negative")
    return e


@rule("OneHot", since=9)
def one_hot(ctx: RuleContext) -> list:
    s = ctx.shape(0)
    vs = ctx.shape(2)
    if vs is not None and (len(vs) != 1 or ctx.equal(vs[0], 2) is False):
        raise RuleError("shape-mismatch", f"values must hold two elements [off, on], has shape {list(vs)}")
    depth = _depth(ctx)
    if s is None:
        return [None]
    axis = ctx.attr("axis", -1)
    if not -len(s) - 1 <= axis <= len(s):
        raise RuleError("bad-attribute", f"axis {axis} is out of range for an output of rank {len(s) + 1}")
    axis = axis + len(s) + 1 if axis < 0 else axis
    return [s[:axis] + (depth,) + s[axis:]]


# -- ReverseSequence ------------------------------------------------------------------------------


@rule("ReverseSequence", since=10)
def reverse_sequence(ctx: RuleContext) -> list:
    s = ctx.shape(0)
    batch_axis, time_axis = ctx.attr("batch_axis", 1), ctx.attr("time_axis", 0)
    if {batch_axis, time_axis} != {0, 1}:
        raise RuleError("bad-attribute", f"batch_axis {batch_axis} and time_axis {time_axis} must be 0 and 1")
    if s is None:
        return [None]
    if len(s) < 2:
        raise RuleError("shape-mismatch", f"input must have rank >= 2, has rank {len(s)}")
    lens = ctx.shape(1)
    if lens is not None:
        if len(lens) != 1:
            raise RuleError("shape-mismatch", f"sequence_lens must be 1-D, has rank {len(lens)}")
        same_dim(ctx, s[batch_axis], lens[0], "the batch extent and the length of sequence_lens")
    return [s]


example("GatherElements", ["float[N,C]", "int64[N,K]"], ["float[N,K]"], attrs={"axis": 1})
example("GatherElements", ["float[N,C]", "int32[M,C]"], ["float[M,C]"], opset=11)
example("GatherElements", ["int64[2,2]={1,2,3,4}", "int64[2,2]={0,0,1,0}"], ["int64[2,2]={1,1,4,3}"], attrs={"axis": 1})
example("GatherElements", ["int64[3]={N,C,7}", "int64[2]={-1,0}"], ["int64[2]={7,N}"])
example("GatherElements", ["float[N,C]", "int64[K]"], ["float[*]"], error="shape-mismatch")
example("GatherElements", ["float[N,C]", "int64[N,K]"], ["float[*]"], attrs={"axis": 2}, error="bad-attribute")
example("ScatterElements", ["float[N,C]", "int64[K,L]", "float[K,L]"], ["float[N,C]"], attrs={"axis": 1}, opset=11)
example("ScatterElements", ["int64[3]={B,S,4}", "int64[1]={1}", "int64[1]={-1}"], ["int64[3]={B,-1,4}"], opset=13)
example(
    "ScatterElements",
    ["int64[3]={1,2,3}", "int64[2]={0,0}", "int64[2]={5,6}"],
    ["int64[3]={12,2,3}"],
    attrs={"reduction": "add"},
    opset=16,
)
example("ScatterElements", ["int64[3]={1,2,3}", "int64[2]={0,0}", "int64[2]={5,6}"], ["int64[3]"], opset=18)
example(
    "ScatterElements",
    ["int64[3]={1,2,3}", "int64[2]={2,0}", "int64[2]={0,6}"],
    ["int64[3]={6,2,3}"],
    attrs={"reduction": "max"},
    opset=18,
)
example(
    "ScatterElements",
    ["float[N]", "int64[2]", "float[2]"],
    ["float[*]"],
    attrs={"reduction": "max"},
    opset=16,
    error="bad-attribute",
)
example("ScatterElements", ["float[N,C]", "int64[K,2]", "float[K,3]"], ["float[N,C]"], error="shape-mismatch")
example("Scatter", ["float[N,C]", "int64[K,L]", "float[K,L]"], ["float[N,C]"], attrs={"axis": 1}, opset=9)
example("Scatter", ["float[N,C]", "int64[K,L]", "float[K,L]"], ["float[N,C]"], opset=11)
example("ScatterND", ["float[N,C,H]", "int64[K,2]", "float[K,H]"], ["float[N,C,H]"], opset=11)
example(
    "ScatterND", ["float[N,C,H]", "int64[K,2]", "float[K,H]"], ["float[N,C,H]"], attrs={"reduction": "mul"}, opset=16
)
example("ScatterND", ["int64[4]={B,S,12,64}", "int64[1,1]={2}", "int64[1]={768}"], ["int64[4]={B,S,768,64}"], opset=13)
example(
    "ScatterND",
    ["int64[2,2]={1,2,3,4}", "int64[1,1]={1}", "int64[1,2]={5,6}"],
    ["int64[2,2]={1,2,8,10}"],
    attrs={"reduction": "add"},
    opset=18,
)
example("ScatterND", ["float[N,4,5]", "int64[K,2]", "float[K,4]"], ["float[N,4,5]"], error="shape-mismatch")
example("ScatterND", ["float[N,C]", "int64[K,3]", "float[K]"], ["float[*]"], error="shape-mismatch")
example("OneHot", ["int64[N,S]", "int64[]={10}", "float[2]"], ["float[N,S,10]"], opset=9)
example("OneHot", ["int64[N,S]", "int64[1]={V}", "float[2]"], ["float[N,V,S]"], attrs={"axis": 1}, opset=11)
example("OneHot", ["int32[N]", "float[]={3.0}", "int64[2]"], ["int64[3,N]"], attrs={"axis": -2}, opset=28)
example("OneHot", ["int64[N]", "float[]={3.5}", "float[2]"], ["float[N,?]"])
example("OneHot", ["int64[N]", "int64[]", "float[2]"], ["float[N,?]"])
example("OneHot", ["int64[N]", "int64[]={3}", "float[2]"], ["float[*]"], attrs={"axis": 2}, error="bad-attribute")
example("OneHot", ["int64[N]", "int64[]={3}", "float[3]"], ["float[*]"], error="shape-mismatch")
example("ReverseSequence", ["float[T,B,C]", "int64[B]"], ["float[T,B,C]"], opset=10)
example(
    "ReverseSequence", ["float[B,T]", "int64[B]"], ["float[B,T]"], attrs={"batch_axis": 0, "time_axis": 1}, opset=28
)
example(
    "ReverseSequence",
    ["float[T,B]", "int64[B]"],
    ["float[*]"],
    attrs={"batch_axis": 1, "time_axis": 1},
    error="bad-attribute",
)
example("ReverseSequence", ["float[T,3]", "int64[4]"], ["float[T,3]"], error="shape-mismatch")
