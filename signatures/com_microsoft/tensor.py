"""Tensor utilities of the contrib domain: ExpandDims, GatherND, GridSample, CropAndResize, CDist,
DynamicTimeWarping, BifurcationDetector, MurmurHash3, IsAllFinite.

Most are older forms of operators onnx adopted later (GatherND, GridSample) or small kernels
onnxruntime keeps for converted TensorFlow and speech models. Each rule is what the CPU kernel
computes and refuses (tests/test_contrib_a_runtime.py runs them); IsAllFinite has no CPU kernel.
"""

from __future__ import annotations

from onnx import TensorProto

from infer.contract.context import RuleContext, RuleError
from infer.core import dims as D
from infer.core.types import TensorType
from signatures.ai_onnx.attention import at, check_rank
from signatures.ai_onnx.image import grid_sample
from signatures.ai_onnx.tensor import gather_nd
from signatures.com_microsoft import F32, FLOAT, FLOAT_DOUBLE, FLOAT_DOUBLE_BF16, INT, INT32, MS, STRING
from signatures.kit.helpers import same_dim
from signatures.kit.operator import case, operator

ALL_TYPES = ("tensor(uint8)", "tensor(uint16)", "tensor(uint32)", "tensor(uint64)", "tensor(int8)", "tensor(int16)",
             "tensor(int32)", "tensor(int64)", "tensor(float16)", "tensor(float)", "tensor(double)", "tensor(string)",
             "tensor(bool)", "tensor(complex64)", "tensor(complex128)")  # fmt: skip

# Indices address the leading axes of data (no batch_dims in this older form).
operator(
    "GatherND",
    "data:T indices:Tind",
    "output:T",
    domain=MS,
    types={"T": ALL_TYPES, "Tind": ("tensor(int32)", "tensor(int64)")},
    rule=gather_nd,
    examples=[
        case(["float[A,B,C]", "int64[N,2]"], ["float[N,C]"]),
        case(["int32[A,B,C]", "int32[N,M,0]"], ["int32[N,M,A,B,C]"]),
        case(["float[A,B,C]", "int64[N,4]"], ["float[*]"], error="shape-mismatch"),
    ],
)

_FLOAT_OUT = {TensorProto.FLOAT16, TensorProto.FLOAT, TensorProto.DOUBLE}


@operator(
    "ExpandDims",
    "X:T axis:tensor(int32)",
    "Y:T",
    domain=MS,
    types={"T": ALL_TYPES},
    examples=[
        case(["float[N,C]", "int32[]={1}"], ["float[N,1,C]"]),
        case(["string[N,C]", "int32[1]={-1}"], ["string[N,C,1]"]),
        case(["float[]", "int32[]={-1}"], ["float[1]"]),
        case(["int64[A,B,C]", "int32[]"], ["int64[?,?,?,?]"]),
        case(["float[N,C]", "int32[]={3}"], ["float[*]"], error="bad-attribute"),
        case(["float[N,C]", "int32[2]={0,1}"], ["float[*]"], error="shape-mismatch"),
    ],
)
def expand_dims(ctx: RuleContext) -> list:
    """A 1 inserted at the axis held by the one-element ``axis`` input, in ``[-r - 1, r]``."""
    x = ctx.shape(0)
    axes = ctx.known_ints(1)
    if axes is not None and len(axes) != 1:
        raise RuleError("shape-mismatch", f"axis must hold one value, holds {len(axes)}")
    if axes is None or axes[0] is None:
        ctx.contents_unknown(1, "the inserted axis")
        return [None if x is None else (None,) * (len(x) + 1)]
    if x is None:
        return [None]
    axis, rank = axes[0], len(x)
    if not -rank - 1 <= axis <= rank:
        raise RuleError("bad-attribute", f"ExpandDims: axis {axis} is out of range for rank {rank}")
    axis = axis + rank + 1 if axis < 0 else axis
    return [x[:axis] + (1,) + x[axis:]]


@operator(
    "GridSample",
    "X:T1 Grid:T1",
    "Y:T2",
    domain=MS,
    types={"T1": ALL_TYPES, "T2": FLOAT_DOUBLE},
    attrs={"align_corners": (INT, 0), "padding_mode": (STRING, "zeros"), "mode": (STRING, "bilinear")},
    examples=[
        case(["float[N,C,H,W]", "float[N,P,Q,2]"], ["float[N,C,P,Q]"], mode="bicubic", padding_mode="border"),
        case(["float[N,C,D,H,W]", "float[N,P,Q,R,3]"], ["unknown"], error="shape-mismatch"),
        case(["float[N,C,H,W]", "float[N,P,Q,3]"], ["unknown"], error="shape-mismatch"),
    ],
)
def grid_sample_ms(ctx: RuleContext) -> list:
    """GridSample-16's shape (4-D only); Y has X's type (the kernels compute T -> T, float only on CPU)."""
    shape = grid_sample(ctx)[0]
    return [TensorType(ctx.elem(0) if ctx.elem(0) in _FLOAT_OUT else None, shape)]


@operator(
    "CropAndResize",
    "X:T1 rois:T1 batch_indices:T2 crop_size:T2",
    "Y:T1",
    domain=MS,
    types={"T1": FLOAT_DOUBLE, "T2": INT32},
    attrs={"extrapolation_value": (FLOAT, 0.0), "mode": (STRING, "bilinear")},
    examples=[
        case(["float[N,C,H,W]", "float[R,4]", "int32[R]", "int32[2]={7,5}"], ["float[R,C,7,5]"]),
        case(["float16[N,C,H,W]", "float16[R,4]", "int32[R]", "int32[2]"], ["float16[R,C,?,?]"], mode="nearest"),
        case(["float[N,C,H,W]", "float[R,5]", "int32[R]", "int32[2]"], ["float[*]"], error="shape-mismatch"),
        case(
            ["float[N,C,H,W]", "float[4,4]", "int32[3]", "int32[2]={7,5}"], ["float[4,C,7,5]"], error="shape-mismatch"
        ),
        case(["float[N,C,H,W]", "float[R,4]", "int32[R]", "int32[2]={0,5}"], ["float[*]"], error="shape-mismatch"),
    ],
)
def crop_and_resize(ctx: RuleContext) -> list:
    """(num_rois, C, crop_height, crop_width); the crop size is read from ``crop_size``'s contents."""
    x = check_rank(ctx, 0, 4, "X")
    rois = check_rank(ctx, 1, 2, "rois")
    idx = check_rank(ctx, 2, 1, "batch_indices")
    size = check_rank(ctx, 3, 1, "crop_size")
    if rois is not None and isinstance(rois[1], int) and rois[1] != 4:
        raise RuleError("shape-mismatch", f"rois must be (num_rois, 4), has {rois[1]} columns")
    if size is not None and isinstance(size[0], int) and size[0] != 2:
        raise RuleError("shape-mismatch", f"crop_size must hold 2 values, holds {size[0]}")
    n = at(rois, 0)
    if idx is not None:
        n = idx[0] if n is None else same_dim(ctx, n, idx[0], "num_rois of rois and batch_indices")
    crop = ctx.known_dims(3)
    if crop is None or len(crop) != 2:
        ctx.contents_unknown(3, "the crop size")
        crop = [None, None]
    for c in crop:
        if isinstance(c, int) and c <= 0:
            raise RuleError("shape-mismatch", f"crop_size values must be positive, got {c}")
    return [(n, at(x, 1), crop[0], crop[1])]


_METRICS = ("sqeuclidean", "euclidean")


@operator(
    "CDist",
    "A:T B:T",
    "C:T",
    domain=MS,
    types={"T": ("tensor(float)", "tensor(double)")},
    attrs={"metric": (STRING, "sqeuclidean")},
    examples=[
        case(["float[M,D]", "float[K,D]"], ["float[M,K]"]),
        case(["double[3,4]", "double[5,4]"], ["double[3,5]"], metric="euclidean"),
        case(["float[3,4]", "float[5,3]"], ["float[3,5]"], error="shape-mismatch"),
        case(["float[M,D]", "float[K,D]"], ["float[*]"], metric="cosine", error="bad-attribute"),
    ],
)
def cdist(ctx: RuleContext) -> list:
    """A (M, N) and B (K, N) -> (M, K). The kernel implements the two Euclidean metrics only."""
    if ctx.attr("metric", "sqeuclidean") not in _METRICS:
        raise RuleError("bad-attribute", f"CDist: metric must be one of {', '.join(_METRICS)} (onnxruntime's kernel)")
    a, b = check_rank(ctx, 0, 2, "A"), check_rank(ctx, 1, 2, "B")
    if a is not None and b is not None:
        same_dim(ctx, a[1], b[1], "feature extents of A and B")
    return [(at(a, 0), at(b, 0))]


@operator(
    "DynamicTimeWarping",
    "input:F",
    "output:I",
    domain=MS,
    types={"F": F32, "I": INT32},
    examples=[
        case(["float[M,N]"], ["int32[2,?]"]),
        case(["float[1,M,N]"], ["int32[2,?]"]),
        case(["float[2,M,N]"], ["int32[*]"], error="shape-mismatch"),
    ],
)
def dynamic_time_warping(ctx: RuleContext) -> list:
    """(2, x): the path's length x lies between max(M, N) and M + N - 1 and depends on the costs."""
    x = ctx.shape(0)
    if x is not None and (len(x) not in (2, 3) or (len(x) == 3 and isinstance(x[0], int) and x[0] != 1)):
        raise RuleError("shape-mismatch", f"input must be (M, N) or (1, M, N), is [{', '.join(map(D.to_str, x))}]")
    ctx.because("the warping path's length depends on the costs")
    return [(2, None)]


@operator(
    "BifurcationDetector",
    "src_tokens:T cur_tokens:T prev_suffix_match_idx:T pred_tokens?:T",
    "tokens:T suffix_match_idx:T",
    domain=MS,
    types={"T": ("tensor(int64)",)},
    attrs={"max_ngram_size": (INT, 3), "min_ngram_size": (INT, 1)},
    examples=[
        case(["int64[S]", "int64[T]", "int64[]"], ["int64[T]", "int64[]"]),
        case(["int64[S]", "int64[T]", "int64[1]", "int64[P]"], ["int64[?]", "int64[1]"]),
        case(["int64[S]", "int64[1,T]", "int64[]"], ["int64[*]", "int64[*]"], error="shape-mismatch"),
        case(
            ["int64[S]", "int64[T]", "int64[]"],
            ["int64[*]", "int64[*]"],
            min_ngram_size=4,
            max_ngram_size=2,
            error="bad-attribute",
        ),
    ],
)
def bifurcation_detector(ctx: RuleContext) -> list:
    """tokens: cur_tokens, extended by the matched prefix of pred_tokens when given (its length
    depends on the tokens); suffix_match_idx has prev_suffix_match_idx's shape."""
    low, high = ctx.attr("min_ngram_size", 1), ctx.attr("max_ngram_size", 3)
    if low <= 0 or high <= 0 or high < low:
        raise RuleError("bad-attribute", f"n-gram sizes must be positive with min <= max, are {low} and {high}")
    cur = check_rank(ctx, 1, 1, "cur_tokens")
    if ctx.has(3):
        ctx.because("how many predicted tokens are appended depends on where they diverge from the source", 3)
        tokens: tuple[D.Dim, ...] | None = None if cur is None else (None,)
    else:
        tokens = cur
    return [tokens, ctx.shape(2)]


@operator(
    "MurmurHash3",
    "X:T1",
    "Y:T2",
    domain=MS,
    types={
        "T1": (
            "tensor(uint32)",
            "tensor(int32)",
            "tensor(uint64)",
            "tensor(int64)",
            "tensor(float)",
            "tensor(double)",
            "tensor(string)",
        ),
        "T2": ("tensor(uint32)", "tensor(int32)"),
    },
    attrs={"positive": (INT, 1), "seed": (INT, 0)},
    examples=[case(["string[N]"], ["uint32[N]"]), case(["int64[N,M]"], ["int32[N,M]"], positive=0, seed=42)],
)
def murmur_hash3(ctx: RuleContext) -> list:
    """X's shape; uint32 when ``positive`` is 1, int32 for any other value (as the kernel reads it)."""
    elem = TensorProto.UINT32 if ctx.attr("positive", 1) == 1 else TensorProto.INT32
    return [TensorType(elem, ctx.shape(0))]


@operator(
    "IsAllFinite",
    "input...:V",
    "output:T",
    domain=MS,
    types={"V": FLOAT_DOUBLE_BF16, "T": ("tensor(bool)",)},
    attrs={"isnan_only": (INT, 0), "isinf_only": (INT, 0)},
    examples=[case(["float[N,C]", "float[K]"], ["bool[]"])],
)
def is_all_finite(ctx: RuleContext) -> list:
    """One boolean for all inputs: a scalar. No CPU kernel; the schema's inference says so too."""
    return [()]
