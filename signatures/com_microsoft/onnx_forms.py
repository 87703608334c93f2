"""Contrib forms of tensor operators: Pad, Range, Unique, UnfoldTensor, TorchEmbedding, Rfft,
ReduceSumInteger, SampleOp, SparseToDenseMatMul.

onnxruntime kept these in its own domain before (or beside) their onnx counterparts, and they
differ from them: the contrib Pad takes a ``[1, 2 * rank]`` pads tensor, Range a missing delta,
Unique only 1-D data. Each rule is what the CPU kernel computes and refuses
(tests/test_contrib_b_runtime.py runs them); TorchEmbedding, Rfft and ReduceSumInteger have no
CPU kernel, and their rules follow the schema's documentation and inference (not run).
"""

from __future__ import annotations

import math

from onnx import TensorProto

from infer.contract.context import RuleContext, RuleError
from infer.core import dims as D
from infer.core.dims import Dim
from infer.core.types import TensorType
from infer.core.values import MAX_KNOWN_ELEMENTS, Known, SymFloat, Value
from signatures.ai_onnx.data_dependent import shared_unknown
from signatures.ai_onnx.generators import range_
from signatures.com_microsoft import FLOAT, FLOAT_DOUBLE, INT, INTS, MS, REQUIRED, STRING
from signatures.kit.helpers import NONZERO, flag, norm_axes, norm_axis, require_single, same_dim
from signatures.kit.operator import case, operator

_NUMERIC = ("tensor(uint8)", "tensor(uint16)", "tensor(uint32)", "tensor(uint64)", "tensor(int8)", "tensor(int16)",
            "tensor(int32)", "tensor(int64)")  # fmt: skip
_ALL = _NUMERIC + (
    "tensor(float16)",
    "tensor(float)",
    "tensor(double)",
    "tensor(string)",
    "tensor(bool)",
    "tensor(complex64)",
    "tensor(complex128)",
)
_PAD_MODES = ("constant", "reflect", "edge", "wrap")

_SPARSE = ("float", "double", "int64", "int32", "uint64", "uint32")


@operator(
    "Pad",
    "data:T pads:tensor(int64) value?:T",
    "output:T",
    domain=MS,
    types={"T": FLOAT_DOUBLE},
    attrs={"mode": (STRING, "constant")},
    examples=[
        case(["float[N,C]", "int64[4]={0,1,2,3}"], ["float[N + 2,C + 4]"]),
        case(["float[N,3]", "int64[1,4]={1,-1,1,-1}"], ["float[N + 2,1]"], mode="edge"),
        case(["double[N,C]", "int64[4]"], ["double[?,?]"]),
        case(["float[2,3]", "int64[4]={0,-2,0,-2}"], ["float[*]"], error="shape-mismatch"),
        case(["float[2,3]", "int64[4]={0,3,0,0}"], ["float[*]"], mode="reflect", error="shape-mismatch"),
        case(["float[2,3]", "int64[3]"], ["float[?,?]"], error="shape-mismatch"),
        case(["float[2,3]", "int64[4]={1,0,1,2}"], ["float[4,5]"], mode="wrap"),
        case(["float[2,3]", "int64[4]"], ["float[*]"], mode="mirror", error="bad-attribute"),
    ],
)
def pad(ctx: RuleContext) -> list:
    """Each axis grows by its begin and end pads (negative ones crop).

    pads is ``[2 * rank]`` or ``[1, 2 * rank]``; onnxruntime refuses a negative extent, a reflect
    pad past ``extent - 1``, and reflect or edge padding of an empty axis.
    """
    mode = ctx.attr("mode", "constant") or "constant"
    if mode not in _PAD_MODES:
        raise RuleError("bad-attribute", f"mode {mode!r} is none of {', '.join(_PAD_MODES)}")
    x, p = ctx.shape(0), ctx.shape(1)
    if p is not None and not (len(p) == 1 or (len(p) == 2 and ctx.equal(p[0], 1) is not False)):
        raise RuleError("shape-mismatch", f"pads must be [2 * rank] or [1, 2 * rank], has shape {list(p)}")
    if x is None:
        return [None]
    if p is not None:
        same_dim(ctx, p[-1], 2 * len(x), "pads length and twice the data's rank")
    pads = ctx.known_dims(1)
    if pads is None:
        ctx.contents_unknown(1, "the pads")
        return [(None,) * len(x)]
    r = len(x)
    if len(pads) != 2 * r:
        raise RuleError("shape-mismatch", f"{len(pads)} pads for rank {r}; they need {2 * r}")
    out = []
    for i, d in enumerate(x):
        begin, end = pads[i], pads[i + r]
        e = D.add(D.add(d, begin), end)
        if isinstance(e, int) and e < 0:
            raise RuleError("shape-mismatch", f"pads {pads} make axis {i} of extent {D.to_str(d)} negative")
        if mode != "constant" and isinstance(d, int):
            grows = [q for q in (begin, end) if not isinstance(q, int) or q > 0]
            if d == 0 and grows:
                raise RuleError("shape-mismatch", f"{mode} padding of axis {i}, which is empty")
            if mode == "reflect" and any(isinstance(q, int) and q > d - 1 for q in grows):
                raise RuleError("shape-mismatch", f"reflect pads {pads} exceed extent {d} - 1 on axis {i}")
        out.append(e)
    return [tuple(out)]


@operator(
    "Range",
    "start:T limit:T delta?:T",
    "Y:T",
    domain=MS,
    types={"T": ("tensor(float)", "tensor(double)", "tensor(int16)", "tensor(int32)", "tensor(int64)")},
    examples=[
        case(["int64[]={2}", "int64[]={7}"], ["int64[5]={2,3,4,5,6}"]),
        case(["int32[1]={0}", "int32[1]={N}"], ["int32[N]"]),
        case(["float[]={2.0}", "float[]={7.5}"], ["float[6]"]),
        case(["int64[]={1}", "int64[]={10}", "int64[]={3}"], ["int64[3]={1,4,7}"]),
        case(["int64[]={1}", "int64[]={10}", "int64[]={0}"], ["int64[*]"], error="bad-attribute"),
        case(["int64[1,1]", "int64[]"], ["int64[*]"], error="shape-mismatch"),
    ],
)
def range_ms(ctx: RuleContext) -> list:
    """onnx's Range, with a delta of 1 when none is given."""
    if ctx.has(2):
        return range_(ctx)
    for i, what in ((0, "start"), (1, "limit")):
        require_single(ctx, i, what)
    s, lim = (None if (k := ctx.known(i)) is None else k.scalar() for i in (0, 1))
    if s is None or lim is None:
        ctx.contents_unknown(0 if s is None else 1, "a Range bound")
        return [(None,)]
    if isinstance(s, int) and isinstance(lim, int):
        n = max(lim - s, 0)
        return [Value(TensorType(None, (n,)), Known((n,), tuple(range(s, lim))) if n <= MAX_KNOWN_ELEMENTS else None)]
    if isinstance(s, (int, float)) and isinstance(lim, (int, float)):
        if not (math.isfinite(s) and math.isfinite(lim)):
            raise RuleError("bad-attribute", f"Range with bounds {s}, {lim}")
        return [(max(math.ceil(lim - s), 0),)]
    s, lim = _integral(s), _integral(lim)
    if s is None or lim is None:
        ctx.because("a symbolic Range needs integral bounds")
        return [(None,)]
    return [(D.dmax(D.sub(lim, s), 0),)]


def _integral(x: object) -> Dim:
    """An integer bound: an integer expression, or a float element that is exactly one."""
    if isinstance(x, SymFloat):
        return x.num if x.den == 1 and not x.rounded else None
    return x if type(x) is int or D.is_symbolic(x) else None


@operator(
    "Unique",
    "x:T",
    "y:T idx:tensor(int64) counts:tensor(int64)",
    domain=MS,
    types={"T": _ALL},
    examples=[
        case(["float[N]"], ["float[?]", "int64[N]", "int64[?]"]),
        case(["int64[5]={3,1,3,2,1}"], ["int64[3]={3,1,2}", "int64[5]", "int64[3]={2,2,1}"]),
        case(["float[2,2]"], ["float[*]"], error="shape-mismatch"),
    ],
)
def unique(ctx: RuleContext) -> list:
    """The distinct values of a 1-D x in order of first occurrence, each one's index, their counts."""
    x = ctx.shape(0)
    if x is not None and len(x) != 1:
        raise RuleError("shape-mismatch", f"x must be 1-D (onnxruntime refuses others), has rank {len(x)}")
    n = None if x is None else x[0]
    k = ctx.known(0)
    if k is not None and all(type(e) in (int, bool, str) for e in k.elems):
        seen: dict = {}
        for e in k.elems:
            seen[e] = seen.get(e, 0) + 1
        u = len(seen)
        return [
            Value(TensorType(None, (u,)), Known((u,), tuple(seen))),
            (len(k.elems),),
            Value(TensorType(TensorProto.INT64, (u,)), Known((u,), tuple(seen.values()))),
        ]
    why = f"the number of distinct values of `{ctx.input_name(0)}`"
    distinct = n if n in (0, 1) else shared_unknown(ctx, "unique", why, 0)
    return [(distinct,), (n,), (distinct,)]


@operator(
    "UnfoldTensor",
    "input:T",
    "output:T",
    domain=MS,
    types={"T": _ALL[:8] + ("tensor(bfloat16)",) + _ALL[8:]},
    attrs={"dim": (INT, -1), "size": (INT, REQUIRED), "step": (INT, 1)},
    examples=[
        case(["float[B,L,C]"], ["float[B,floor((L - 3)/2) + 1,C,3]"], size=3, step=2, dim=1),
        case(["int64[7]"], ["int64[5,3]"], size=3),
        case(["float[2,2,3]"], ["float[*]"], size=3, dim=1, error="shape-mismatch"),
        case(["float[2,7]"], ["float[*]"], size=2, step=0, error="bad-attribute"),
    ],
)
def unfold_tensor(ctx: RuleContext) -> list:
    """The windows of ``size`` every ``step`` along ``dim``: that axis becomes the window count
    ``(extent - size) / step + 1`` and a last axis of ``size`` is added."""
    size, step = ctx.require("size"), ctx.attr("step", 1)
    if size <= 0 or step <= 0:
        raise RuleError("bad-attribute", f"size {size} and step {step} must be positive")
    x = ctx.shape(0)
    if x is None:
        return [None]
    axis = norm_axis(ctx, ctx.attr("dim", -1), len(x), "dim")
    d = x[axis]
    if isinstance(d, int) and d < size:
        raise RuleError("shape-mismatch", f"size {size} is larger than the extent {d} of axis {axis}")
    ctx.require_at_least(d, size, f"onnxruntime refuses an {ctx.op_type} window larger than its axis")
    windows = D.add(D.floordiv(D.sub(d, size), step), 1)
    return [x[:axis] + (windows,) + x[axis + 1 :] + (size,)]


@operator(
    "TorchEmbedding",
    "weight:T indices:tensor(int64) padding_idx?:tensor(int64) scale_grad_by_freq?:tensor(bool)",
    "Y:T",
    domain=MS,
    types={"T": ("tensor(float16)", "tensor(float)", "tensor(double)", "tensor(bfloat16)") + _NUMERIC},
    examples=[
        case(["float[V,64]", "int64[B,S]"], ["float[B,S,64]"]),
        case(["float[V,64,2]", "int64[B,S]"], ["float[*]"], error="shape-mismatch"),
    ],
)
def torch_embedding(ctx: RuleContext) -> list:
    """Rows of the (N, M) weight gathered by the indices: ``indices.shape + (M,)``. No CPU kernel."""
    w, idx = ctx.shape(0), ctx.shape(1)
    if w is not None and len(w) != 2:
        raise RuleError("shape-mismatch", f"weight must be 2-D, has rank {len(w)}")
    if idx is None:
        return [None]
    return [tuple(idx) + (None if w is None else w[1],)]


@operator(
    "Rfft",
    "X:T",
    "Y:T",
    domain=MS,
    types={"T": ("tensor(float)", "tensor(double)", "tensor(float16)")},
    attrs={"normalized": (INT, 0), "onesided": (INT, 1), "signal_ndim": (INT, 1)},
    examples=[
        case(["float[B,N]"], ["float[B,floor(N/2) + 1,2]"]),
        case(["float16[B,8,6]"], ["float16[B,8,4,2]"], signal_ndim=2),
        case(["float[8]"], ["float[*]"], signal_ndim=2, error="shape-mismatch"),
    ],
)
def rfft(ctx: RuleContext) -> list:
    """The one-sided transform: the last (signal) axis of n becomes ``n / 2 + 1`` and a last axis
    of 2 holds the real and imaginary parts. From the documentation; no CPU kernel, and
    onnxruntime's schema infers no shape."""
    ndim = ctx.attr("signal_ndim", 1)
    x = ctx.shape(0)
    if not 1 <= ndim <= 3:
        raise RuleError("bad-attribute", f"signal_ndim must be 1, 2 or 3, is {ndim}")
    if x is None:
        return [None]
    if len(x) < ndim:
        raise RuleError("shape-mismatch", f"input of rank {len(x)} for signal_ndim {ndim}")
    if not flag(ctx, "onesided", 1, NONZERO):
        ctx.because("a two-sided Rfft is not supported by its kernels")
        return [(None,) * (len(x) + 1)]
    return [x[:-1] + (D.add(D.floordiv(x[-1], 2), 1), 2)]


@operator(
    "ReduceSumInteger",
    "data:T1",
    "reduced:T2",
    domain=MS,
    types={"T1": ("tensor(int8)", "tensor(uint8)"), "T2": ("tensor(int32)", "tensor(uint32)")},
    attrs={"axes": (INTS, REQUIRED), "keepdims": (INT, REQUIRED)},
    examples=[case(["int8[N,C,L]"], ["unknown"], axes=[3], keepdims=0, error="bad-attribute")],
)
def reduce_sum_integer(ctx: RuleContext) -> list:
    """ReduceSum over ``axes`` (keepdims keeps them as 1). The output's element type (int32 or
    uint32) follows from nothing the node states, and is left open. No CPU kernel."""
    x = ctx.shape(0)
    if x is None:
        return [None]
    axes = set(norm_axes(ctx, ctx.require("axes"), len(x)))
    keep = flag(ctx, "keepdims", 1, NONZERO)
    return [tuple(1 if i in axes else d for i, d in enumerate(x) if keep or i not in axes)]


@operator(
    "SampleOp",
    "X:T",
    "Y:T",
    domain=MS,
    types={
        "T": (
            "tensor(uint32)",
            "tensor(uint64)",
            "tensor(int32)",
            "tensor(int64)",
            "tensor(float16)",
            "tensor(float)",
            "tensor(double)",
        )
    },
    examples=[case(["float[N,C]"], ["float[N,C]"])],
)
def sample_op(ctx: RuleContext) -> list:
    """An echo: Y is X (onnxruntime's CPU kernel is for float only)."""
    return [ctx.shape(0)]


@operator(
    "SparseToDenseMatMul",
    "A:T B:T1",
    "Y:T1",
    domain=MS,
    types={"T": tuple(f"sparse_tensor({t})" for t in _SPARSE), "T1": tuple(f"tensor({t})" for t in _SPARSE)},
    attrs={"alpha": (FLOAT, 1.0), "transA": (INT, 0), "transB": (INT, 0)},
    examples=[
        # (Example types are dense: the sparse operand is checked in tests/test_contrib_b_runtime.py.)
        case(["float[M,K]", "float[K,N]"], ["float[M,N]"], error="type-mismatch")
    ],
)
def sparse_to_dense_matmul(ctx: RuleContext) -> list:
    """A sparse 2-D A times a dense 2-D B, after the transposes: (M, N).

    onnxruntime checks the operands twice: its schema multiplies them untransposed (refusing
    the model when ``A[1] != B[0]``), its kernel transposed. A model runs only where both hold.
    """
    a, b = ctx.shape(0), ctx.shape(1)
    for what, s in (("A", a), ("B", b)):
        if s is not None and len(s) != 2:
            raise RuleError("shape-mismatch", f"{what} must be 2-D (onnxruntime's kernel), has rank {len(s)}")
    if a is None or b is None:
        ctx.because("an operand has unknown rank")
        return [None]
    same_dim(ctx, a[1], b[0], "A's columns and B's rows (onnxruntime's schema ignores transA and transB)")
    ta, tb = flag(ctx, "transA", 0, NONZERO), flag(ctx, "transB", 0, NONZERO)
    m, k = (a[1], a[0]) if ta else (a[0], a[1])
    k2, n = (b[1], b[0]) if tb else (b[0], b[1])
    same_dim(ctx, k, k2, "the inner dimensions after the transposes")
    return [(m, n)]
