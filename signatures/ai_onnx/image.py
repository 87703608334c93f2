"""Image operators: sampling grids, region pooling, block rearrangement, decoding, bit casts.

Most are fixed layouts (``[N, C, spatial...]``) whose output extents come from another input's
extents (a grid, the regions of interest), from attributes, or from a shape-carrying input's
contents (``AffineGrid``'s size, ``Col2Im``'s image shape, ``CenterCropPad``'s target).
"""

from __future__ import annotations

from onnx import TensorProto

from infer.contract.context import RuleContext, RuleError
from infer.core import dims as D
from infer.core.dims import Dim
from infer.core.types import TensorType
from signatures.kit.helpers import norm_axes, same_dim, vector_length
from signatures.kit.registry import example, rule
from signatures.kit.windows import check_bias, check_divisible, read_window, window_attrs, window_extent, window_extents

Shape = tuple[Dim, ...]
INT64_MAX = (1 << 63) - 1


def _rank_at_least(ctx: RuleContext, s: Shape | None, low: int, what: str) -> None:
    if s is not None and len(s) < low:
        raise RuleError("shape-mismatch", f"{what} must have rank >= {low}, has {len(s)}")


def _rank_is(ctx: RuleContext, s: Shape | None, rank: int, what: str) -> None:
    if s is not None and len(s) != rank:
        raise RuleError("shape-mismatch", f"{what} must have rank {rank}, has {len(s)}")


def _extent_is(ctx: RuleContext, d: Dim, want: int, what: str) -> None:
    if isinstance(d, int) and d != want:
        raise RuleError("shape-mismatch", f"{what} must be {want}, is {d}")


# -- sampling grids -------------------------------------------------------------------------------


@rule("GridSample", since=16)
def grid_sample(ctx: RuleContext) -> list:
    """``X[N, C, d1..dr]``, ``grid[N, o1..or, r]`` -> ``[N, C, o1..or]`` (opset 16: r = 2 only)."""
    x, grid = ctx.shape(0), ctx.shape(1)
    if ctx.version < 20:
        _rank_is(ctx, x, 4, "X")
        _rank_is(ctx, grid, 4, "grid")
    _rank_at_least(ctx, x, 3, "X")
    _rank_at_least(ctx, grid, 3, "grid")
    if grid is not None:
        _extent_is(ctx, grid[-1], len(grid) - 2, "the grid's last extent (number of spatial axes)")
        if x is None:
            return [(grid[0], None) + tuple(grid[1:-1])]
        if len(x) != len(grid):
            raise RuleError("shape-mismatch", f"X of rank {len(x)} and grid of rank {len(grid)}")
        n = same_dim(ctx, x[0], grid[0], "batch extents of X and grid")
        return [(n, x[1]) + tuple(grid[1:-1])]
    if x is not None:
        return [(x[0], x[1]) + (None,) * (len(x) - 2)]
    return [None]


@rule("AffineGrid", since=20)
def affine_grid(ctx: RuleContext) -> list:
    """``theta[N, 2, 3]``, ``size = (N, C, H, W)`` -> ``[N, H, W, 2]``; 3-D: ``[N, D, H, W, 3]``."""
    theta = ctx.shape(0)
    _rank_is(ctx, theta, 3, "theta")
    spatial: int | None = None
    if theta is not None and isinstance(theta[1], int):
        if theta[1] not in (2, 3):
            raise RuleError("shape-mismatch", f"theta must be [N, 2, 3] or [N, 3, 4], is {list(theta)}")
        spatial = theta[1]
        _extent_is(ctx, theta[2], spatial + 1, "theta's last extent")
    size = ctx.known_dims(1)
    if size is None:
        ctx.contents_unknown(1, "the output size")
        s = ctx.shape(1)
        if spatial is None and s is not None and len(s) == 1 and isinstance(s[0], int):
            spatial = s[0] - 2
        if spatial is None:
            return [None]
        return [(None if theta is None else theta[0],) + (None,) * spatial + (spatial,)]
    if len(size) not in (4, 5):
        raise RuleError("shape-mismatch", f"size must have 4 or 5 entries (N, C, spatial...), has {len(size)}")
    if spatial is not None and spatial != len(size) - 2:
        raise RuleError("shape-mismatch", f"theta {list(theta)} (rank-{spatial} grid) with size of {len(size)}")  # type: ignore[arg-type]
    n = size[0] if theta is None else same_dim(ctx, size[0], theta[0], "batch extents of size and theta")
    return [(n, *size[2:], len(size) - 2)]


# -- column blocks and crops ----------------------------------------------------------------------


@rule("Col2Im", since=18)
def col2im(ctx: RuleContext) -> list:
    """``[N, C * prod(block), L]`` -> ``[N, C, *image_shape]``."""
    x = ctx.shape(0)
    _rank_is(ctx, x, 3, "input")
    image, block = ctx.known_dims(1), ctx.known_dims(2)
    if image is None:
        ctx.contents_unknown(1, "the image shape")
        n = vector_length(ctx, 1)
        if n is None:
            return [None]
        image = [None] * n
    n_sp = len(image)
    if block is not None and len(block) != n_sp:
        raise RuleError("shape-mismatch", f"image_shape has {n_sp} entries, block_shape {len(block)}")
    if x is None:
        return [(None, None, *image)]
    channels: Dim = None
    if block is None:
        ctx.contents_unknown(2, "the block shape (dividing the channels)")
    else:
        prod = D.product(block)
        if isinstance(prod, int) and prod > INT64_MAX:
            raise RuleError("bad-attribute", f"the block shape {block} has {prod} elements, which overflows int64")
        if isinstance(x[1], int) and isinstance(prod, int) and prod > 0 and x[1] % prod:
            raise RuleError("shape-mismatch", f"channels {x[1]} are not a multiple of the block size {prod}")
        channels = D.floordiv(x[1], prod)
        _check_block_count(ctx, x[2], image, block)
    return [(x[0], channels, *image)]


def _check_block_count(ctx: RuleContext, count: Dim, image: list[Dim], block: list[Dim]) -> None:
    """The number of blocks ``L`` must be the product of the sliding-window counts."""
    n = len(image)
    strides, dilations, pads = window_attrs(ctx, n, mismatch="strides, dilations or pads do not match the image rank")
    blocks = D.product(
        window_extent(ctx, image[i], block[i], strides[i], dilations[i], pads[i], pads[i + n], "NOTSET", False)
        for i in range(n)
    )
    if ctx.equal(blocks, count) is False:
        ctx.error("shape-mismatch", f"Col2Im: the input holds {D.to_str(count)} blocks, the image {D.to_str(blocks)}")


@rule("CenterCropPad", since=18)
def center_crop_pad(ctx: RuleContext) -> list:
    """The input's shape with the extents along ``axes`` replaced by ``shape``'s contents."""
    x = ctx.shape(0)
    if x is None:
        return [None]
    axes_attr = ctx.attr("axes")
    axes = norm_axes(ctx, axes_attr, len(x)) if axes_attr else list(range(len(x)))
    target = ctx.known_dims(1)
    if target is None:
        ctx.contents_unknown(1, "the target extents")
        return [tuple(None if i in axes else d for i, d in enumerate(x))]
    if len(target) != len(axes):
        raise RuleError("shape-mismatch", f"{len(target)} target extents for {len(axes)} axes")
    out = list(x)
    for a, t in zip(axes, target):
        if isinstance(t, int) and t < 0:
            raise RuleError("shape-mismatch", f"target extent {t} is negative")
        out[a] = t
    return [tuple(out)]


# -- regions of interest --------------------------------------------------------------------------


def _rois(ctx: RuleContext, coords: int, *others: int) -> Dim:
    """The number of regions: ``rois[R, coords]`` and each of ``others`` (1-D of length R)."""
    rois = ctx.shape(1)
    _rank_is(ctx, rois, 2, "rois")
    r: Dim = None
    if rois is not None:
        _extent_is(ctx, rois[1], coords, "the rois' last extent")
        r = rois[0]
    for i in others:
        s = ctx.shape(i)
        _rank_is(ctx, s, 1, ctx.input_name(i) or f"input {i}")
        if s is not None:
            r = s[0] if r is None else same_dim(ctx, r, s[0], "number of regions")
    return r


@rule("RoiAlign", since=10)
def roi_align(ctx: RuleContext) -> list:
    """``[num_rois, C, output_height, output_width]``."""
    x = ctx.shape(0)
    _rank_is(ctx, x, 4, "X")
    r = _rois(ctx, 4, 2)
    return [(r, None if x is None else x[1], ctx.attr("output_height", 1), ctx.attr("output_width", 1))]


@rule("MaxRoiPool", since=1)
def max_roi_pool(ctx: RuleContext) -> list:
    """``[num_rois, C, pooled_shape[0], pooled_shape[1]]``; rois are ``[batch, x1, y1, x2, y2]``."""
    x = ctx.shape(0)
    _rank_is(ctx, x, 4, "X")
    pooled = list(ctx.require("pooled_shape"))
    if len(pooled) != 2:
        raise RuleError("bad-attribute", f"pooled_shape needs 2 entries, has {len(pooled)}")
    if any(p <= 0 for p in pooled):
        raise RuleError("bad-attribute", f"pooled_shape {pooled} must be greater than zero")
    return [(_rois(ctx, 5), None if x is None else x[1], *pooled)]


# -- unpooling and deformable convolution ---------------------------------------------------------


def _unpool_input(ctx: RuleContext) -> Shape | None:
    """X's shape, which the indices I must share (the definition; onnxruntime checks it)."""
    x, idx = ctx.shape(0), ctx.shape(1)
    _rank_at_least(ctx, x, 3, "X")
    _rank_at_least(ctx, idx, 3, "the indices I")
    if x is None or idx is None:
        return x if x is not None else idx
    if len(idx) != len(x):
        raise RuleError("shape-mismatch", f"the indices I must have X's shape; their ranks are {len(idx)} and {len(x)}")
    return tuple(same_dim(ctx, a, b, "the extents of X and the indices I") for a, b in zip(x, idx))


@rule("MaxUnpool", since=9)
def max_unpool(ctx: RuleContext) -> list:
    """``output_shape``'s contents when given; else ``(in - 1) * stride + kernel - pads`` per axis."""
    x = _unpool_input(ctx)
    if ctx.has(2):
        target = ctx.known_dims(2)
        if target is not None:
            if x is not None and len(target) != len(x):
                raise RuleError("shape-mismatch", f"output_shape has {len(target)} entries for rank {len(x)}")
            return [tuple(target)]
        ctx.contents_unknown(2, "the output shape")
        if x is not None:
            return [(None,) * len(x)]
        n = vector_length(ctx, 2)
        return [None if n is None else (None,) * n]
    if x is None:
        return [None]
    n = len(x) - 2
    kernel, strides, pads = window_attrs(
        ctx, n, ("kernel_shape", "strides", "pads"), "kernel_shape, strides or pads do not match the spatial rank"
    )
    spatial = [D.sub(D.add(D.mul(D.sub(x[i + 2], 1), strides[i]), kernel[i]), pads[i] + pads[i + n]) for i in range(n)]
    return [(x[0], x[1], *spatial)]


@rule("DeformConv", since=19)
def deform_conv(ctx: RuleContext) -> list:
    """Conv's output extents (explicit pads only: ``signatures.kit.windows``, Conv's checks, and a
    window that does not fit read as onnxruntime's kernel reads it, as the pools'); the offsets
    (and the mask) have the output's spatial extents."""
    x, w, offset = ctx.shape(0), ctx.shape(1), ctx.shape(2)
    known = next((s for s in (x, w, offset) if s is not None), None)
    if known is None:
        return [None]
    rank = len(known)
    for name, s in (("X", x), ("W", w), ("offset", offset), ("mask", ctx.shape(4) if ctx.has(4) else None)):
        _rank_is(ctx, s, rank, name)
    _rank_at_least(ctx, known, 3, "X")
    n = rank - 2
    group = ctx.attr("group", 1)
    if x is not None and w is not None:
        same_dim(ctx, x[1], D.mul(w[1], group), "input channels and weight channels * group")
    channels = None if w is None else w[0]
    if channels is not None:
        check_divisible(ctx, channels, group, "output channels M (weight dim 0)")
    check_bias(ctx, 3, channels)
    batch = x[0] if x is not None else (offset[0] if offset is not None else None)
    if x is not None and offset is not None:
        batch = same_dim(ctx, x[0], offset[0], "batch extents of X and offset")
    window = read_window(ctx, n, None if w is None else w[2:], conv=True)
    # onnxruntime's kernel truncates a short window's negative quotient, as its pools do.
    spatial = list(window_extents(ctx, x[2:], window, conv=True, truncates=True) if x is not None else (None,) * n)
    if offset is not None:
        for i in range(n):
            e, o = spatial[i], offset[i + 2]
            spatial[i] = o if e is None else same_dim(ctx, e, o, f"output and offset extents on axis {i}")
    return [(batch, channels, *spatial)]


# -- rearrangement, decoding, bit casts -----------------------------------------------------------


def _block_mode(ctx: RuleContext) -> int:
    mode = ctx.attr("mode", "DCR") or "DCR"
    if mode not in ("DCR", "CRD"):
        raise RuleError("bad-attribute", f"mode must be DCR or CRD, is {mode!r}")
    b = ctx.require("blocksize")
    if b <= 0:
        raise RuleError("bad-attribute", f"blocksize must be positive, is {b}")
    if b * b > INT64_MAX:
        # The block holds b^2 channels: no extent reaches that.
        raise RuleError("bad-attribute", f"blocksize {b}: the block area blocksize^2 = {b * b} overflows int64")
    return int(b)


@rule("DepthToSpace", since=1)
def depth_to_space(ctx: RuleContext) -> list:
    """``[N, C, H, W]`` -> ``[N, C / b^2, H * b, W * b]``."""
    b = _block_mode(ctx)
    x = ctx.shape(0)
    if x is None:
        return [None]
    _rank_is(ctx, x, 4, "input")
    n, c, h, w = x
    if isinstance(c, int) and c % (b * b):
        raise RuleError("shape-mismatch", f"channels {c} are not a multiple of blocksize^2 = {b * b}")
    return [(n, D.floordiv(c, b * b), D.mul(h, b), D.mul(w, b))]


@rule("SpaceToDepth", since=1)
def space_to_depth(ctx: RuleContext) -> list:
    """``[N, C, H, W]`` -> ``[N, C * b^2, H / b, W / b]``."""
    b = _block_mode(ctx)
    x = ctx.shape(0)
    if x is None:
        return [None]
    _rank_is(ctx, x, 4, "input")
    n, c, h, w = x
    for name, d in (("height", h), ("width", w)):
        if isinstance(d, int) and d % b:
            raise RuleError("shape-mismatch", f"{name} {d} is not a multiple of blocksize {b}")
    return [(n, D.mul(c, b * b), D.floordiv(h, b), D.floordiv(w, b))]


@rule("ImageDecoder", since=20)
def image_decoder(ctx: RuleContext) -> list:
    """``[H, W, C]``: rank 3 by definition; height and width are in the encoded stream.

    Grayscale has one channel. For RGB and BGR the definition means three, but the reference
    implementation returns the image's own channels (four for an RGBA PNG, and a rank-2 array
    for a grayscale JPEG), so the channel count is not claimed there.
    """
    ctx.because("the image's height and width are read from the encoded stream when it is decoded", 0)
    fmt = ctx.attr("pixel_format", "RGB") or "RGB"
    if fmt not in ("RGB", "BGR", "Grayscale"):
        raise RuleError("bad-attribute", f"pixel_format must be RGB, BGR or Grayscale, is {fmt!r}")
    return [(None, None, 1 if fmt == "Grayscale" else None)]


# Bits per element of every type BitCast accepts (the target must have the input's width).
_BITS: dict[int, int] = {
    TensorProto.BOOL: 8, TensorProto.INT8: 8, TensorProto.UINT8: 8, TensorProto.INT16: 16,
    TensorProto.UINT16: 16, TensorProto.INT32: 32, TensorProto.UINT32: 32, TensorProto.INT64: 64,
    TensorProto.UINT64: 64, TensorProto.FLOAT16: 16, TensorProto.BFLOAT16: 16, TensorProto.FLOAT: 32,
    TensorProto.DOUBLE: 64, TensorProto.COMPLEX64: 64, TensorProto.COMPLEX128: 128,
    TensorProto.FLOAT8E4M3FN: 8, TensorProto.FLOAT8E4M3FNUZ: 8, TensorProto.FLOAT8E5M2: 8,
    TensorProto.FLOAT8E5M2FNUZ: 8, TensorProto.FLOAT8E8M0: 8, TensorProto.UINT4: 4, TensorProto.INT4: 4,
    TensorProto.FLOAT4E2M1: 4, TensorProto.UINT2: 2, TensorProto.INT2: 2,
}  # fmt: skip


@rule("BitCast", since=26)
def bit_cast(ctx: RuleContext) -> list:
    """The input's shape, reinterpreted as ``to`` (which must have the same bit width)."""
    to = int(ctx.require("to"))
    if to not in _BITS:
        raise RuleError("bad-attribute", f"BitCast cannot produce type {to}")
    src = ctx.elem(0)
    if src is not None and src in _BITS and _BITS[src] != _BITS[to]:
        raise RuleError("bad-attribute", f"type {to} has {_BITS[to]} bits, the input {_BITS[src]}")
    return [TensorType(to, ctx.shape(0))]


# -- examples -------------------------------------------------------------------------------------

example("GridSample", ["float[N,C,H,W]", "float[N,P,Q,2]"], ["float[N,C,P,Q]"], opset=16)
example("GridSample", ["float[N,C,D,H,W]", "float[N,P,Q,R,3]"], ["float[N,C,P,Q,R]"], opset=20)
example("GridSample", ["float[N,C,D,H,W]", "float[N,P,Q,R,3]"], ["float[*]"], opset=16, error="shape-mismatch")
example("GridSample", ["float[N,C,L]", "double[N,P,1]"], ["float[N,C,P]"], opset=22)
example("GridSample", ["float[N,C,H,W]", "float[*]"], ["float[N,C,?,?]"], opset=22)
example("GridSample", ["float[N,C,H,W]", "float[N,P,Q,3]"], ["float[*]"], opset=22, error="shape-mismatch")
example("AffineGrid", ["float[N,2,3]", "int64[4]={N,3,H,W}"], ["float[N,H,W,2]"])
example("AffineGrid", ["float[N,3,4]", "int64[5]={N,3,D,H,W}"], ["float[N,D,H,W,3]"])
example("AffineGrid", ["float[N,2,3]", "int64[4]"], ["float[N,?,?,2]"])
example("AffineGrid", ["float[N,2,3]", "int64[5]={N,3,D,H,W}"], ["float[*]"], error="shape-mismatch")
example("Col2Im", ["float[N,24,L]", "int64[2]={H,W}", "int64[2]={2,3}"], ["float[N,4,H,W]"])
example(
    "Col2Im",
    ["float[1,10,4]", "int64[2]={5,5}", "int64[2]={1,5}"],
    ["float[1,2,5,5]"],
    attrs={"strides": [2, 1], "pads": [1, 0, 1, 0]},
)
example("Col2Im", ["float[1,10,13]", "int64[2]={5,5}", "int64[2]={1,5}"], ["float[1,2,5,5]"], error="shape-mismatch")
example("Col2Im", ["float[N,C,L]", "int64[3]", "int64[3]"], ["float[N,?,?,?,?]"])
example(
    "Col2Im",
    ["float[1,1,1]", "int64[2]={1,1}", "int64[2]={9223372036854775807,2}"],
    ["float[*]"],
    error="bad-attribute",
)
example("CenterCropPad", ["float[H,W,3]", "int64[2]={10,12}"], ["float[10,12,3]"], attrs={"axes": [0, 1]})
example("CenterCropPad", ["float[N,C,H,W]", "int64[4]={N,C,S,S}"], ["float[N,C,S,S]"])
example("CenterCropPad", ["float[N,C,H,W]", "int32[2]"], ["float[N,C,?,?]"], attrs={"axes": [-2, -1]})
example("CenterCropPad", ["float[N,C,H,W]", "int64[3]={1,2,3}"], ["float[*]"], error="shape-mismatch")
example(
    "RoiAlign",
    ["float[N,C,H,W]", "float[R,4]", "int64[R]"],
    ["float[R,C,7,7]"],
    attrs={"output_height": 7, "output_width": 7},
    opset=16,
)
example("RoiAlign", ["float[N,C,H,W]", "float[R,4]", "int64[R]"], ["float[R,C,1,1]"], opset=10)
example("RoiAlign", ["float[N,C,H,W]", "float[R,5]", "int64[R]"], ["float[*]"], opset=22, error="shape-mismatch")
example("MaxRoiPool", ["float[N,C,H,W]", "float[R,5]"], ["float[R,C,6,6]"], attrs={"pooled_shape": [6, 6]})
example("MaxRoiPool", ["float[N,C,H,W]", "float[R,5]"], ["float[R,C,6,6]"], attrs={"pooled_shape": [6, 6]}, opset=22)
example(
    "MaxRoiPool",
    ["float[N,C,H,W]", "float[R,5]"],
    ["float[*]"],
    attrs={"pooled_shape": [-1, 2]},
    opset=22,
    error="bad-attribute",
)
example(
    "MaxUnpool",
    ["float[N,C,H,W]", "int64[N,C,H,W]"],
    ["float[N,C,2*H,2*W]"],
    attrs={"kernel_shape": [2, 2], "strides": [2, 2]},
    opset=9,
)
example(
    "MaxUnpool",
    ["float[N,C,L]", "int64[N,C,L]"],
    ["float[N,C,3*L - 2]"],
    attrs={"kernel_shape": [3], "strides": [3], "pads": [1, 1]},
    opset=11,
)
example(
    "MaxUnpool",
    ["float[N,C,H,W]", "int64[N,C,H,W]", "int64[4]={N,C,5,5}"],
    ["float[N,C,5,5]"],
    attrs={"kernel_shape": [2, 2], "strides": [2, 2]},
    opset=22,
)
example(
    "MaxUnpool",
    ["float[N,C,H,W]", "int64[N,C,H,W]", "int64[4]"],
    ["float[?,?,?,?]"],
    attrs={"kernel_shape": [2, 2], "strides": [2, 2]},
)
example(
    "MaxUnpool",
    ["float[*]", "int64[N,C,H,W]"],
    ["float[N,C,2*H,2*W]"],
    attrs={"kernel_shape": [2, 2], "strides": [2, 2]},
)
example(
    "MaxUnpool",
    ["float[1,1,2,2]", "int64[]"],
    ["float[*]"],
    attrs={"kernel_shape": [2, 2], "strides": [2, 2]},
    opset=11,
    error="shape-mismatch",
)
example(
    "MaxUnpool",
    ["float[1,1,2,2]", "int64[1,1,2,3]"],
    ["float[1,1,4,4]"],
    attrs={"kernel_shape": [2, 2], "strides": [2, 2]},
    opset=11,
    error="shape-mismatch",
)
example(
    "DeformConv", ["float[N,4,H,W]", "float[8,4,3,3]", "float[N,18,H - 2,W - 2]"], ["float[N,8,H - 2,W - 2]"], opset=19
)
example(
    "DeformConv",
    ["float[N,4,H,W]", "float[8,2,2,2]", "float[N,16,?,?]", "float[8]", "float[N,8,?,?]"],
    ["float[N,8,floor((H - 1)/2) + 1,floor((W - 1)/2) + 1]"],
    attrs={"group": 2, "offset_group": 2, "strides": [2, 2], "pads": [1, 1, 0, 0]},
    opset=22,
)
example("DeformConv", ["float[*]", "float[8,4,3,3]", "float[N,18,P,Q]"], ["float[N,8,P,Q]"], opset=22)
example(
    "DeformConv",
    ["float[N,4,H,W]", "float[8,3,3,3]", "float[N,18,H - 2,W - 2]"],
    ["float[N,8,H - 2,W - 2]"],
    opset=22,
    error="shape-mismatch",
)
example("DepthToSpace", ["float[N,C,H,W]"], ["float[N,floor(C/4),2*H,2*W]"], attrs={"blocksize": 2}, opset=1)
example("DepthToSpace", ["float[N,18,H,W]"], ["float[N,2,3*H,3*W]"], attrs={"blocksize": 3, "mode": "CRD"}, opset=13)
example("DepthToSpace", ["float[N,18,H,W]"], ["float[*]"], attrs={"blocksize": 2}, opset=28, error="shape-mismatch")
example(
    "DepthToSpace",
    ["float[N,8,H,W]"],
    ["float[*]"],
    attrs={"blocksize": 2, "mode": "XYZ"},
    opset=11,
    error="bad-attribute",
)
example("SpaceToDepth", ["float[N,3,8,W]"], ["float[N,12,4,floor(W/2)]"], attrs={"blocksize": 2}, opset=13)
example("SpaceToDepth", ["uint8[N,3,9,9]"], ["uint8[N,27,3,3]"], attrs={"blocksize": 3, "mode": "CRD"}, opset=28)
example("SpaceToDepth", ["float[N,3,7,8]"], ["float[*]"], attrs={"blocksize": 2}, opset=1, error="shape-mismatch")
example("SpaceToDepth", ["float[1,1,1,1]"], ["float[*]"], attrs={"blocksize": 1 << 32}, opset=13, error="bad-attribute")
example("ImageDecoder", ["uint8[L]"], ["uint8[?,?,?]"])
example("ImageDecoder", ["uint8[L]"], ["uint8[?,?,1]"], attrs={"pixel_format": "Grayscale"})
example("BitCast", ["float[N,3]"], ["int32[N,3]"], attrs={"to": TensorProto.INT32})
example("BitCast", ["bool[]"], ["uint8[]"], attrs={"to": TensorProto.UINT8})
example("BitCast", ["float[N]"], ["unknown"], attrs={"to": TensorProto.INT64}, error="bad-attribute")
