"""Convolution, pooling, softmax and dropout.

Output extents follow the operator definitions exactly, symbolic heights included:
``floor((h + pads - dilation*(k-1) - 1) / stride) + 1``.
"""

from __future__ import annotations

from infer import dims as D
from infer.context import RuleContext, RuleError
from infer.dims import Dim

from ..helpers import ONE, STRICT, flag, norm_axis, require_rank, same_dim
from ..registry import example, rule

INT64_MAX = (1 << 63) - 1


def _spatial_attrs(
    ctx: RuleContext, n: int, kernel: list[Dim] | None
) -> tuple[list[Dim], list[int], list[int], list[int]]:
    """kernel_shape, strides, dilations, pads (begin..., end...) with their defaults."""
    ks = ctx.attr("kernel_shape")
    k = list(ks) if ks is not None else kernel
    if k is None:
        raise RuleError("bad-attribute", "kernel_shape is needed and the weights' shape is unknown")
    if len(k) != n:
        raise RuleError("bad-attribute", f"kernel_shape {k} has {len(k)} entries for {n} spatial axes")
    if ks is not None and kernel is not None and len(kernel) == n:
        for x, w in zip(k, kernel):
            if isinstance(w, int) and x != w:  # onnxruntime refuses the node
                raise RuleError("shape-mismatch", f"kernel_shape {k} is not the weights' window {list(kernel)}")
    strides = list(ctx.attr("strides") or [1] * n)
    dilations = list(ctx.attr("dilations") or [1] * n)
    pads = list(ctx.attr("pads") or [0] * (2 * n))
    if len(strides) != n or len(dilations) != n or len(pads) != 2 * n:
        raise RuleError("bad-attribute", "strides, dilations or pads do not match the spatial rank")
    if any(s <= 0 for s in strides) or any(d <= 0 for d in dilations):
        raise RuleError("bad-attribute", "strides and dilations must be positive")
    if any(isinstance(x, int) and x <= 0 for x in k):
        raise RuleError("bad-attribute", f"kernel_shape {k} must be positive")
    for d, x in zip(dilations, k):
        if isinstance(x, int) and d * (x - 1) + 1 > INT64_MAX:
            # No input extent can hold such a window.
            raise RuleError("bad-attribute", f"the dilated kernel {d} * ({x} - 1) + 1 overflows int64")
    if any(p < 0 for p in pads):
        raise RuleError("bad-attribute", f"pads {pads} must not be negative")
    return k, strides, dilations, pads


def window_extent(
    x: Dim,
    k: Dim,
    stride: int,
    dilation: int,
    pad_begin: int,
    pad_end: int,
    auto_pad: str,
    ceil_mode: bool,
    dilated_same: bool = False,
) -> Dim:
    """Output extent of a sliding window along one axis (Conv and pooling).

    Where the window does not fit (``x + pads < dilated kernel``) the definition floors a negative
    quotient and onnxruntime truncates it: concrete extents there are not claimed here (Conv and
    the pools of this module give onnxruntime's, ``_short_window``), and symbolic ones hold as far
    as the rule records (``_require_fit``, ``DimTable.require_at_least``).
    ``dilated_same``: a dilated SAME window gives ``ceil(x / stride)`` as the definition says
    (true of Conv: onnxruntime refuses to run it, the reference evaluator agrees).
    """
    if isinstance(x, int) and isinstance(k, int) and auto_pad in ("NOTSET", "VALID"):
        pads = pad_begin + pad_end if auto_pad == "NOTSET" else 0
        span = x + pads - (dilation * (k - 1) + 1)
        if span < 0 and not (stride == 1 and span == -1):
            return None
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        if dilation != 1 and not dilated_same:
            return None  # onnxruntime pools a dilated SAME window to another extent than ceil(x / stride)
        # ceil_mode changes nothing here. (onnx's reference evaluator gets MaxPool SAME_LOWER
        # wrong, e.g. 1 for x=3, stride 2; the definition, onnxruntime and the onnx test data agree.)
        return D.ceildiv(x, stride)
    eff = D.add(D.mul(dilation, D.sub(k, 1)), 1)
    if auto_pad == "VALID":
        valid = D.add(D.floordiv(D.sub(x, eff), stride), 1)
        if not ceil_mode:
            return valid
        # With ceil_mode the definition and the reference evaluator keep this extent, onnxruntime
        # rounds up as with explicit zero pads: claim it only where the two agree.
        ort = window_extent(x, k, stride, dilation, 0, 0, "NOTSET", True)
        return valid if D.equal(valid, ort) is True else None
    span = D.sub(D.add(x, pad_begin + pad_end), eff)
    if not ceil_mode:
        return D.add(D.floordiv(span, stride), 1)
    out = D.add(D.ceildiv(span, stride), 1)
    # A window may not start in the end padding; drop the last one when it would.
    if isinstance(out, int) and isinstance(x, int):
        return out - 1 if (out - 1) * stride >= x + pad_begin else out
    if isinstance(eff, int) and stride <= eff - pad_end:
        return out  # the last window always starts inside the input
    if isinstance(eff, int) and pad_end <= eff:
        # Windows start at 0, stride, ... below x + pad_begin: ceil((x + pad_begin) / stride) of
        # them. With pad_end <= eff at most the last of the ``out`` windows starts past that, so
        # dropping it is taking the minimum.
        return D.dmin(out, D.ceildiv(D.add(x, pad_begin), stride))
    return None


def _pool_like(
    ctx: RuleContext, kernel_from_weights: list[Dim] | None = None, conv: bool = False
) -> tuple[Dim, ...] | None:
    """The spatial extents of a Conv (``conv``) or of a pooling node."""
    x = ctx.shape(0)
    if x is None:
        return None
    if len(x) < 3:
        raise RuleError("shape-mismatch", f"input must have rank >= 3, has {len(x)}")
    n = len(x) - 2
    k, strides, dilations, pads = _spatial_attrs(ctx, n, kernel_from_weights)
    auto_pad = ctx.attr("auto_pad", "NOTSET") or "NOTSET"
    # onnxruntime rounds up only for ceil_mode exactly 1: 2 and -1 floor, as 0 does.
    ceil_mode = not conv and flag(ctx, "ceil_mode", 0, ONE)
    out = []
    for i in range(n):
        window = (k[i], strides[i], dilations[i], pads[i], pads[i + n])
        e = sliding_extent(ctx, i, x[i + 2], *window, auto_pad, ceil_mode, conv)
        if e is None:
            ctx.because("ceil_mode on a symbolic extent: runtimes round the last window differently")
        out.append(e)
    return tuple(out)


def sliding_extent(ctx: RuleContext, axis: int, x: Dim, k: Dim, stride: int, dilation: int, pad_begin: int,
                   pad_end: int, auto_pad: str, ceil_mode: bool, conv: bool) -> Dim:  # fmt: skip
    """``window_extent`` along spatial axis ``axis`` of a Conv-like (``conv``) or pooling node, with
    what onnxruntime does where the window does not fit: a known extent gets its extent or an
    error (``_short_window``), a symbolic one the least extent the claim holds for (``_require_fit``).
    """
    if auto_pad in ("NOTSET", "VALID") and isinstance(k, int):
        fit = dilation * (k - 1) + 1 - (pad_begin + pad_end if auto_pad == "NOTSET" else 0)
        if isinstance(x, int) and x < fit:
            return _short_window(ctx, axis, x, fit, stride, conv)
        _require_fit(ctx, x, fit, stride, ceil_mode, conv)
    return window_extent(x, k, stride, dilation, pad_begin, pad_end, auto_pad, ceil_mode, dilated_same=conv)


def _short_window(ctx: RuleContext, axis: int, x: int, fit: int, stride: int, conv: bool) -> Dim:
    """The extent onnxruntime gives a known spatial extent ``x`` shorter than the window needs.

    onnxruntime refuses such a Conv. It pools it, truncating the negative quotient toward zero
    where the definition floors it (1 window where the definition has none when short by less
    than a stride), and refuses it once that extent is negative (short by two strides or more).
    """
    extent = 1 - (fit - x) // stride
    if conv or extent < 0:
        ctx.error(
            "shape-mismatch",
            f"{ctx.op_type} with inputs {ctx.input_types_str()}: spatial axis {axis} has extent {x}, "
            f"the (dilated, padded) window needs {fit}"
            + ("" if conv else f", and onnxruntime refuses a shortfall of two strides ({2 * stride}) or more"),
        )
        return None
    return extent


def _require_fit(ctx: RuleContext, x: Dim, fit: int, stride: int, ceil_mode: bool, conv: bool) -> None:
    """Record the least symbolic extent ``x`` that the claimed extent holds for.

    A Conv runs only where its window fits. A pooling node runs unless the window overshoots by two
    strides, and its claimed extent is onnxruntime's that far with a stride of 1 or ceil_mode; with
    a longer stride and no ceil_mode the claim (the definition's floor) assumes the window fits,
    since onnxruntime truncates the quotient toward zero short of that.
    """
    op = ctx.op_type
    if conv:
        least, why = fit, f"onnxruntime refuses a {op} whose window does not fit the padded input"
    elif ceil_mode or stride == 1:
        least, why = fit - 2 * stride + 1, f"onnxruntime refuses a {op} whose window overshoots by two strides"
    else:
        least, why = fit, f"the window of {op} fits; short of it onnxruntime truncates where the definition floors"
    ctx.dims.require_at_least(x, least, ctx.site, why)


def _check_divisible(ctx: RuleContext, channels: Dim, group: int, what: str) -> None:
    """Channels split into ``group`` groups: onnxruntime refuses a count the groups do not divide."""
    if isinstance(channels, int) and isinstance(group, int) and group > 0 and channels % group:
        ctx.error(
            "shape-mismatch",
            f"{ctx.op_type} with inputs {ctx.input_types_str()}: {what} {channels} is not divisible by group {group}",
        )


def _check_bias(ctx: RuleContext, channels: Dim) -> None:
    """The optional bias B is a vector of one entry per output channel (Conv and ConvTranspose)."""
    b = ctx.shape(2) if ctx.n_inputs > 2 and ctx.input_name(2) else None
    if b is None:
        return
    if len(b) != 1:
        raise RuleError("shape-mismatch", f"the bias has rank {len(b)}; it must be a vector")
    if channels is not None:
        same_dim(ctx, b[0], channels, "bias length and output channels")


@rule("Conv")
def conv(ctx: RuleContext) -> list:
    x, w = ctx.shape(0), ctx.shape(1)
    if x is None and w is None:
        return [None]
    rank = len(x) if x is not None else len(w)  # type: ignore[arg-type]
    if rank < 3:  # (N, C, spatial...) and (M, C/group, kernel...)
        which = "input" if x is not None else "weight tensor"
        raise RuleError("shape-mismatch", f"the {which} must have rank >= 3, has {rank}")
    group = ctx.attr("group", 1)
    if x is not None and w is not None:
        if len(w) != len(x):
            raise RuleError("shape-mismatch", f"the weight tensor has rank {len(w)}, the input rank {len(x)}")
        same_dim(ctx, x[1], D.mul(w[1], group), "input channels and weight channels * group")
    if w is not None:
        _check_divisible(ctx, w[0], group, "output channels M (weight dim 0)")
    _check_bias(ctx, w[0] if w is not None else None)
    if x is None:
        return [(None, w[0]) + (None,) * (rank - 2)]  # type: ignore[index]
    # A dilated SAME Conv: the definition's ceil(x / stride); onnxruntime refuses dilations with
    # SAME padding, and the reference evaluator gives that extent.
    spatial = _pool_like(ctx, list(w[2:]) if w is not None else None, conv=True)
    return [(x[0], None if w is None else w[0]) + tuple(spatial)]  # type: ignore[arg-type]


@rule("ConvTranspose")
def conv_transpose(ctx: RuleContext) -> list:
    x, w = ctx.shape(0), ctx.shape(1)
    if x is None:
        return [None]
    n = len(x) - 2
    if n < 1:
        raise RuleError("shape-mismatch", f"input must have rank >= 3, has {len(x)}")
    if w is not None and len(w) != len(x):
        raise RuleError("shape-mismatch", f"the weight tensor has rank {len(w)}, the input rank {len(x)}")
    group = ctx.attr("group", 1)
    channels = D.mul(w[1], group) if w is not None else None
    if w is not None:
        same_dim(ctx, x[1], w[0], "input channels and weight dim 0")
    _check_divisible(ctx, x[1], group, "input channels C")
    _check_bias(ctx, channels)
    if ctx.has_attr("pads") and (ctx.attr("auto_pad", "NOTSET") or "NOTSET") != "NOTSET":
        # The definition forbids it; onnxruntime refuses to load such a node.
        raise RuleError("bad-attribute", "the pads attribute cannot be used simultaneously with auto_pad")
    k, strides, dilations, pads = _spatial_attrs(ctx, n, list(w[2:]) if w is not None else None)
    out_pad = list(ctx.attr("output_padding") or [0] * n)
    if len(out_pad) != n or any(p < 0 for p in out_pad):
        raise RuleError("bad-attribute", f"output_padding {out_pad} must have {n} non-negative entries")
    for p, s, d in zip(out_pad, strides, dilations):
        if p >= max(s, d):  # onnxruntime refuses it (and from the stride on, whatever the dilation)
            raise RuleError("bad-attribute", f"output_padding {out_pad} must be below the strides or dilations")
    out_shape = ctx.attr("output_shape")
    if out_shape is not None:
        out_shape = list(out_shape)[-n:]
        if len(out_shape) != n or any(d <= 0 for d in out_shape):
            raise RuleError("bad-attribute", f"output_shape {list(ctx.attr('output_shape'))} does not fit")
        return [(x[0], channels) + tuple(out_shape)]
    auto_pad = ctx.attr("auto_pad", "NOTSET") or "NOTSET"
    spatial = []
    for i in range(n):
        eff = D.add(D.mul(dilations[i], D.sub(k[i], 1)), 1)
        full = D.add(D.add(D.mul(strides[i], D.sub(x[i + 2], 1)), out_pad[i]), eff)
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            # The definition says x * stride; runtimes reach it by padding, which cannot be
            # negative, so a kernel narrower than the stride gives the unpadded extent.
            spatial.append(D.dmin(D.mul(x[i + 2], strides[i]), full))
            continue
        total = pads[i] + pads[i + n] if auto_pad == "NOTSET" else 0
        spatial.append(_transposed_extent(ctx, i, x[i + 2], D.sub(full, total), strides[i], eff, out_pad[i], total))
    return [(x[0], channels) + tuple(spatial)]


def _transposed_extent(ctx: RuleContext, axis: int, x: Dim, out: Dim, stride: int, eff: Dim, out_pad: int,
                       pads: int) -> Dim:  # fmt: skip
    """ConvTranspose's extent ``out`` along one axis, which onnxruntime refuses unless positive.

    Pads wider than the full output leave none: a known extent there is an error; a symbolic
    ``x`` is recorded as at least the least extent that leaves one element.
    """
    if isinstance(out, int):
        if out <= 0:
            ctx.error(
                "shape-mismatch",
                f"{ctx.op_type} with inputs {ctx.input_types_str()}: pads of {pads} leave spatial axis {axis} "
                f"an extent of {out}; onnxruntime refuses an extent below 1",
            )
            return None
        return out
    if isinstance(eff, int):
        # stride * (x - 1) + out_pad + eff - pads >= 1
        least = 1 - (eff + out_pad - pads - 1) // stride
        ctx.dims.require_at_least(x, least, ctx.site, f"onnxruntime refuses a {ctx.op_type} output extent below 1")
    return out


@rule(["MaxPool", "AveragePool", "LpPool"])
def pool(ctx: RuleContext) -> list:
    """MaxPool (its Indices from opset 8 too), AveragePool and LpPool: sliding windows."""
    if ctx.op_type == "MaxPool" and ctx.version >= 8:
        flag(ctx, "storage_order", 0, STRICT)  # onnxruntime refuses another value; no shape depends on it
    x = ctx.shape(0)
    if x is not None and ctx.attr("kernel_shape") is None and ctx.op_type == "LpPool" and ctx.version < 2:
        # LpPool-1 leaves kernel_shape optional and says nothing of a default.
        ctx.because("LpPool-1 without kernel_shape: the window is not defined")
        return [x[:2] + (None,) * (len(x) - 2)]
    spatial = _pool_like(ctx)
    if x is None or spatial is None:
        return [None] * ctx.n_outputs
    out = (x[0], x[1]) + spatial
    return [out] * ctx.n_outputs  # MaxPool's Indices has the output's shape


@rule(["GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"])
def global_pool(ctx: RuleContext) -> list:
    x = ctx.shape(0)
    if x is None:
        return [None]
    if len(x) < 2:
        raise RuleError("shape-mismatch", f"input must have rank >= 2, has {len(x)}")
    return [x[:2] + (1,) * (len(x) - 2)]


@rule(["Softmax", "LogSoftmax", "Hardmax"])
def softmax(ctx: RuleContext) -> list:
    """The shape is kept; ``axis`` must name an axis (a scalar has none)."""
    x = ctx.shape(0)
    if x is not None:
        norm_axis(ctx, ctx.attr("axis", -1 if ctx.version >= 13 else 1), len(x))
    return [x]


@rule("Dropout")
def dropout(ctx: RuleContext) -> list:
    """Y and the optional mask have the data's shape; ratio and training_mode are scalars."""
    require_rank(ctx, 1, 0, "ratio")
    require_rank(ctx, 2, 0, "training_mode")
    s = ctx.shape(0)
    return [s, s]


example("Conv", ["float[N,3,H,W]", "float[8,3,3,3]"], ["float[N,8,H,W]"], attrs={"pads": [1, 1, 1, 1]})
example("Conv", ["float[N,3,H,W]", "float[8,3,3,3]"], ["float[N,8,floor((H - 3)/2) + 1,floor((W - 3)/2) + 1]"],
        attrs={"strides": [2, 2]})  # fmt: skip
example("Conv", ["float[N,3,H,W]", "float[8,3,7,7]"], ["float[N,8,floor((H - 1)/2) + 1,floor((W - 1)/2) + 1]"],
        attrs={"strides": [2, 2], "auto_pad": "SAME_UPPER"})  # fmt: skip
example("Conv", ["float[N,4,L]", "float[8,2,3]"], ["float[N,8,L - 4]"], attrs={"group": 2, "dilations": [2]})
example("Conv", ["float[N,4,L,65]", "float[8,4,3,4]"], ["float[N,8,floor((L - 1)/2) + 1,33]"],
        attrs={"auto_pad": "SAME_LOWER", "dilations": [2, 3], "strides": [2, 2]})  # fmt: skip
example("MaxPool", ["float[N,C,65]"], ["float[N,C,?]"], attrs={"kernel_shape": [4], "auto_pad": "SAME_UPPER",
        "dilations": [2]}, opset=12)  # fmt: skip
example("Conv", ["float[N,3,H,W]", "float[8,4,3,3]"], ["float[N,8,H - 2,W - 2]"], error="shape-mismatch")
example("Conv", ["float[N,2,3]", "float[4,2,5]"], ["float[N,4,?]"], error="shape-mismatch")
example("Conv", ["float[N,3,H,W]", "float[8,3,3,3]", "float[8]"], ["float[N,8,H - 2,W - 2]"])
example("Conv", ["float[N,3,H,W]", "float[8,3,3,3]", "float[9]"], ["float[N,8,H - 2,W - 2]"], error="shape-mismatch")
example("Conv", ["float[N,3,H,W]", "float[8,3,3,3]", "float[1,8]"], ["?"], error="shape-mismatch")
example("ConvTranspose", ["float[N,8,H,W]", "float[8,4,3,3]", "float[5]"], ["float[N,4,H + 2,W + 2]"],
        error="shape-mismatch")  # fmt: skip
example("MaxPool", ["float[N,2,8,3]"], ["float[N,2,6,?]"], attrs={"kernel_shape": [3, 5]}, error="shape-mismatch")
example("Conv", ["float[1,1,5]", "float[1,1,2]"], ["float[*]"], attrs={"dilations": [(1 << 63) - 1]},
        error="bad-attribute")  # fmt: skip
example("ConvTranspose", ["float[N,32,H,W]", "float[32,64,3,3]"], ["float[N,192,H + 2,W + 2]"], attrs={"group": 3},
        error="shape-mismatch")  # fmt: skip
example(
    "Conv", ["float[N,3,H,W]", "float[4,3,3,3]"], ["float[*]"], attrs={"kernel_shape": [5, 5]}, error="shape-mismatch"
)
example("Conv", ["float[N,6,H,W]", "float[5,2,3,3]"], ["float[N,5,H - 2,W - 2]"], attrs={"group": 3},
        error="shape-mismatch")  # fmt: skip
example("ConvTranspose", ["float[N,8,H,W]", "float[8,4,4,4]"], ["float[N,4,2*H,2*W]"],
        attrs={"strides": [2, 2], "pads": [1, 1, 1, 1]})  # fmt: skip
example("MaxPool", ["float[N,C,H,W]"], ["float[N,C,floor((H - 3)/2) + 1,floor((W - 3)/2) + 1]"],
        attrs={"kernel_shape": [3, 3], "strides": [2, 2]})  # fmt: skip
example("MaxPool", ["float[N,C,32,32]"], ["float[N,C,16,16]", "int64[N,C,16,16]"],
        attrs={"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]})  # fmt: skip
example(
    "MaxPool",
    ["float[1,1,5,5]"],
    ["float[1,1,3,3]"],
    attrs={"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1},
)
example("AveragePool", ["float[N,C,H,W]"],
        ["float[N,C,min(floor((H + 2)/3), floor(H/3) + 1),min(floor((W + 2)/3), floor(W/3) + 1)]"],
        attrs={"kernel_shape": [2, 2], "strides": [3, 3], "ceil_mode": 1})  # fmt: skip
example("AveragePool", ["float[N,C,L]"], ["float[N,C,floor((L - 1)/2) + 1]"],
        attrs={"kernel_shape": [3], "strides": [2], "pads": [1, 1], "count_include_pad": 1}, opset=7)  # fmt: skip
example("AveragePool", ["float[N,C,L]"], ["float[N,C,L - 4]"], attrs={"kernel_shape": [3], "dilations": [2]}, opset=19)
example("MaxPool", ["float[N,C,H,W]"], ["float[N,C,H - 1,W - 1]"], attrs={"kernel_shape": [2, 2]}, opset=1)
example("MaxPool", ["float[N,C,H,W]"], ["float[N,C,H - 1,W - 1]", "int64[N,C,H - 1,W - 1]"],
        attrs={"kernel_shape": [2, 2], "storage_order": 1}, opset=8)  # fmt: skip
example("MaxPool", ["float[N,C,L]"], ["float[N,C,L - 2]"], attrs={"kernel_shape": [2], "dilations": [2]}, opset=10)
example("MaxPool", ["float[N,C,L]"], ["float[N,C,floor((L - 1)/2) + 1]"],
        attrs={"kernel_shape": [3], "strides": [2], "auto_pad": "SAME_UPPER"}, opset=12)  # fmt: skip
example("MaxPool", ["float[N,C,3]"], ["float[N,C,?]"],
        attrs={"kernel_shape": [2], "strides": [2], "auto_pad": "VALID", "ceil_mode": 1}, opset=12)  # fmt: skip
example("MaxPool", ["float[N,C,L]"], ["float[N,C,L - 1]"],
        attrs={"kernel_shape": [2], "auto_pad": "VALID", "ceil_mode": 1}, opset=12)  # fmt: skip
example("AveragePool", ["float[N,C,L]"], ["float[N,C,floor((L + 2)/3)]"],
        attrs={"kernel_shape": [2], "strides": [3], "auto_pad": "SAME_LOWER", "ceil_mode": 1}, opset=19)  # fmt: skip
example("LpPool", ["float[N,C,H,W]"], ["float[N,C,?,?]"], opset=1)
example("LpPool", ["float[N,C,H,W]"], ["float[N,C,H - 2,W - 2]"], attrs={"kernel_shape": [3, 3], "p": 1}, opset=2)
example("LpPool", ["float[N,C,L]"], ["float[N,C,min(floor((L + 1)/2) + 1, floor(L/2) + 1)]"],
        attrs={"kernel_shape": [2], "strides": [2], "ceil_mode": 1, "pads": [1, 1]}, opset=18)  # fmt: skip
example("GlobalLpPool", ["float[N,C,H,W]"], ["float[N,C,1,1]"], attrs={"p": 3}, opset=2)
example("GlobalMaxPool", ["float[N,C,L]"], ["float[N,C,1]"], opset=22)
example("Conv", ["float[N,3,H,W]", "float[8,3,3,3]", "float[8]"], ["float[N,8,H - 2,W - 2]"], opset=1)
example("Conv", ["float[N,3,L]", "float[8,3,K]"], ["float[N,8,L - K + 1]"], opset=11)
example("ConvTranspose", ["float[N,8,L]", "float[8,4,3]"], ["float[N,4,10]"],
        attrs={"output_shape": [10], "strides": [2]})  # fmt: skip
example("ConvTranspose", ["float[N,8,L]", "float[8,2,3]"], ["float[N,4,L + 2]"], attrs={"group": 2}, opset=22)
example("ConvTranspose", ["float[N,8,L]", "float[8,2,3]"], ["float[*]"],
        attrs={"auto_pad": "SAME_UPPER", "pads": [0, 0]}, error="bad-attribute")  # fmt: skip
example("ConvTranspose", ["float[N,8,L]", "float[8,2,3]"], ["float[N,2,L + 1]"],
        attrs={"auto_pad": "NOTSET", "pads": [1, 0]})  # fmt: skip
example("Hardmax", ["float[N,10]"], ["float[N,10]"], attrs={"axis": 1}, opset=1)
example("Softmax", ["float[N,10]"], ["float[N,10]"], opset=1)
example("Dropout", ["float[N,10]"], ["float[N,10]", "float[N,10]"], attrs={"is_test": 0}, opset=1)
example("Dropout", ["float[N,10]", "float[]={0.1}", "bool[]={true}"], ["float[N,10]", "bool[N,10]"], opset=12)
example("Dropout", ["float[N,10]"], ["float[N,10]", "bool[N,10]"], opset=10)
example("Dropout", ["float[N,10]", "float[1]"], ["float[*]", "bool[*]"], opset=12, error="shape-mismatch")
example("AveragePool", ["float[N,C,H,W]"], ["float[N,C,floor((H + 1)/2),floor((W + 1)/2)]"],
        attrs={"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1})  # fmt: skip
example("AveragePool", ["float[N,C,H,W]"], ["float[N,C,floor(H/2),floor(W/2)]"],
        attrs={"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1})  # fmt: skip
example("GlobalAveragePool", ["float[N,C,H,W]"], ["float[N,C,1,1]"])
example("Softmax", ["float[B,H,S,S]"], ["float[B,H,S,S]"])
example("Softmax", ["float[]"], ["float[]"], error="bad-attribute")
example("LogSoftmax", ["float[N,10]"], ["float[N,10]"], attrs={"axis": 1})
example("Dropout", ["float[B,S,64]"], ["float[B,S,64]", "bool[B,S,64]"], opset=13)
# ceil_mode 2 floors in onnxruntime; a window longer than its input: onnxruntime truncates the
# quotient (1 window here) or refuses (Conv, ConvTranspose, or two strides short).
example("MaxPool", ["float[N,C,5]"], ["float[N,C,2]"], attrs={"kernel_shape": [2], "strides": [2], "ceil_mode": 2},
        opset=12)  # fmt: skip
example("MaxPool", ["float[N,C,1]"], ["float[N,C,1]"], attrs={"kernel_shape": [2], "strides": [2]}, opset=12)
example("AveragePool", ["float[N,C,1]"], ["float[N,C,?]"], attrs={"kernel_shape": [5], "strides": [2]},
        error="shape-mismatch")  # fmt: skip
example("MaxPool", ["float[N,C,L]"], ["float[*]"], attrs={"kernel_shape": [2], "storage_order": 2}, opset=12,
        error="bad-attribute")  # fmt: skip
example("Conv", ["float[N,1,2]", "float[1,1,3]"], ["float[N,1,?]"], error="shape-mismatch")
example("ConvTranspose", ["float[N,1,1]", "float[1,1,1]"], ["float[N,1,?]"], attrs={"pads": [1, 1]},
        error="shape-mismatch")  # fmt: skip
example("ConvTranspose", ["float[N,1,L]", "float[1,1,2]"], ["float[*]"], attrs={"output_padding": [1]},
        error="bad-attribute")  # fmt: skip
