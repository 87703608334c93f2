"""Sliding windows: the one reader of Conv and pooling attributes, and their output extents.

Every convolution (Conv, ConvInteger, QLinearConv of both domains, DeformConv, FusedConv,
NhwcConv, NhwcFusedConv) goes through ``conv_output`` and every pooling (MaxPool, AveragePool,
LpPool, QLinearAveragePool, NhwcMaxPool) through ``pool_output``, so all of them refuse the same
attributes and the same windows. What is refused is what onnxruntime refuses (tests/test_windows.py
checks each case against it): non-positive kernels, strides and dilations, negative pads,
attribute lengths that do not match the spatial rank, an unknown ``auto_pad``, a kernel_shape
other than the weights' window, a window that does not fit its padded input (a convolution), or
that overshoots by two strides (a pooling, and DeformConv, whose kernel truncates a short window
as the pools do), ``pads`` beside a set ``auto_pad`` (a convolution). Pads not below the kernel
of an ONNX pooling are allowed by the definition and refused by onnxruntime: the definition's
extents with a ``runtime-refuses`` warning (``RuleContext.refused_by_runtime``); the contrib
poolings, which onnxruntime alone defines, refuse them. Col2Im and MaxUnpool read their windows'
attributes through ``window_attrs`` (defaults and lengths), as ``read_window`` does.

Extents follow the definitions, ``floor((x + pads - dilation*(k-1) - 1) / stride) + 1``, with
onnxruntime's reading where they differ (``window_extent``, ``sliding_extent``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from infer.contract.context import Facts, RuleContext, RuleError
from infer.core import dims as D
from infer.core.dims import Dim
from signatures.kit.helpers import ONE, flag, same_dim

Shape = tuple[Dim, ...]
INT64_MAX = (1 << 63) - 1
AUTO_PADS = ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")


@dataclass(frozen=True)
class Window:
    """A node's window along its spatial axes, attributes read and checked (``read_window``)."""

    kernel: tuple[Dim, ...] | None  # None: neither kernel_shape nor the weights' shape is known
    strides: tuple[int, ...]
    dilations: tuple[int, ...]
    pads: tuple[int, ...]  # begins..., ends...
    auto_pad: str
    ceil_mode: bool


def window_attrs(
    ctx: RuleContext, n: int, names: Sequence[str] = ("strides", "dilations", "pads"), mismatch: str | None = None
) -> tuple[tuple[int, ...], ...]:
    """The window attributes ``names`` of a node with ``n`` spatial axes, defaulted as the
    definitions default them (``kernel_shape`` required, ``strides`` and ``dilations`` 1, ``pads``
    0 at both ends of each axis), in the order asked for. Each must have an entry per axis (two,
    ``pads``): a ``bad-attribute`` error names the first that has not, or says ``mismatch``.

    Only the lengths are checked here: ``read_window`` checks the values of the windows it reads.
    """
    values = []
    for name in names:
        if name == "kernel_shape":
            values.append(tuple(ctx.require(name)))
        elif name == "pads":
            values.append(tuple(ctx.attr(name) or (0,) * (2 * n)))
        else:
            values.append(tuple(ctx.attr(name) or (1,) * n))
    for name, v in zip(names, values):
        length = 2 * n if name == "pads" else n
        if len(v) != length:
            raise RuleError("bad-attribute", mismatch or f"{name} {list(v)} has {len(v)} entries, needs {length}")
    return tuple(values)


def read_window(ctx: RuleContext, n: int, weights: Sequence[Dim] | None, conv: bool, onnx_op: bool = True) -> Window:
    """The window attributes of a node with ``n`` spatial axes, checked as onnxruntime checks them.

    ``weights``: the weights' spatial extents (a convolution whose weights' rank is known); a
    ``kernel_shape`` attribute must match them. Pooling nodes read ``ceil_mode`` (1 rounds up;
    onnxruntime floors for 2 and -1 as for 0); onnxruntime refuses them unless their pads are
    below the kernel: a runtime's constraint where ONNX defines the operator (``onnx_op``), an
    error for one onnxruntime alone defines (its kernel is the definition).
    """
    auto_pad = ctx.attr("auto_pad", "NOTSET") or "NOTSET"
    if auto_pad not in AUTO_PADS:
        raise RuleError("bad-attribute", f"auto_pad {auto_pad!r} is none of {', '.join(AUTO_PADS)}")
    if conv and auto_pad != "NOTSET" and ctx.has_attr("pads"):
        # The definition forbids it, and onnxruntime refuses to load such a convolution.
        raise RuleError("bad-attribute", f"pads cannot be given beside auto_pad {auto_pad}")
    attr = ctx.attr("kernel_shape")
    kernel = tuple(attr) if attr is not None else (tuple(weights) if weights is not None else None)
    if kernel is not None and len(kernel) != n:
        raise RuleError("bad-attribute", f"kernel_shape {list(kernel)} has {len(kernel)} entries for {n} spatial axes")
    strides, dilations, pads = window_attrs(ctx, n)
    if any(s <= 0 for s in strides) or any(d <= 0 for d in dilations):
        raise RuleError("bad-attribute", f"strides {list(strides)} and dilations {list(dilations)} must be positive")
    if any(p < 0 for p in pads):
        raise RuleError("bad-attribute", f"pads {list(pads)} must not be negative")
    if kernel is not None:
        if any(isinstance(k, int) and k <= 0 for k in kernel):
            raise RuleError("bad-attribute", f"kernel_shape {list(kernel)} must be positive")
        if attr is not None and weights is not None:
            for k, w in zip(kernel, weights):
                if isinstance(w, int) and k != w:  # onnxruntime refuses the node
                    raise RuleError("shape-mismatch", f"kernel_shape {list(kernel)} is not the weights' window")
        for d, k in zip(dilations, kernel):
            if isinstance(k, int) and d * (k - 1) + 1 > INT64_MAX:  # no input extent holds it
                raise RuleError("bad-attribute", f"the dilated kernel {d} * ({k} - 1) + 1 overflows int64")
        if not conv and any(isinstance(k, int) and max(pads[i], pads[i + n]) >= k for i, k in enumerate(kernel)):
            # ONNX's definition pools windows that lie wholly in the padding (onnx's tests do);
            # onnxruntime refuses the node when it loads it.
            text = f"pads {list(pads)} not below kernel_shape {list(kernel)}"
            if not onnx_op:
                raise RuleError("bad-attribute", f"onnxruntime refuses {text}")
            ctx.refused_by_runtime(f"onnxruntime refuses {text}")
    ceil_mode = False if conv else flag(ctx, "ceil_mode", 0, ONE)
    return Window(kernel, strides, dilations, pads, auto_pad, ceil_mode)


def window_extents(
    ctx: RuleContext, x: Sequence[Dim], window: Window, conv: bool, truncates: bool | None = None
) -> Shape:
    """Output extents over the spatial extents ``x`` (see ``sliding_extent``). ``truncates``: a
    window that does not fit gets the extent onnxruntime truncates to (its pools and DeformConv)
    rather than an error (its other convolutions); by default, for pools only."""
    n = len(x)
    if window.kernel is None:
        return (None,) * n
    out = []
    for i in range(n):
        e = sliding_extent(
            ctx,
            i,
            x[i],
            window.kernel[i],
            window.strides[i],
            window.dilations[i],
            window.pads[i],
            window.pads[i + n],
            window.auto_pad,
            window.ceil_mode,
            conv,
            not conv if truncates is None else truncates,
        )
        if e is None and ctx.reason is None:
            ctx.because(_why_unknown(window, i, conv))
        out.append(e)
    return tuple(out)


def _why_unknown(window: Window, i: int, conv: bool) -> str:
    if window.auto_pad in ("SAME_UPPER", "SAME_LOWER") and window.dilations[i] != 1 and not conv:
        return "a dilated SAME pooling window: onnxruntime pads it to another extent than the definition's"
    if window.ceil_mode:
        return "ceil_mode on a symbolic extent: runtimes round the last window differently"
    return "the window does not fit the input"


def nchw(s: Shape, channels_last: bool) -> Shape:
    """(N, spatial..., C) as (N, C, spatial...)."""
    return (s[0], s[-1]) + s[1:-1] if channels_last else s


def back(s: Shape, channels_last: bool) -> Shape:
    """(N, C, spatial...) as (N, spatial..., C)."""
    return (s[0],) + s[2:] + (s[1],) if channels_last else s


def conv_output(
    ctx: RuleContext,
    x_index: int,
    w_index: int,
    bias_index: int | None = None,
    channels_last: bool = False,
    w_last: bool = False,
) -> Shape | None:
    """A convolution's output: data at ``x_index``, weights (M, C / group, k...) at ``w_index``.

    ``channels_last``: data and output are (N, spatial..., C); ``w_last``: the weights are
    (M, k..., C / group). ``bias_index``: an optional bias of M entries.
    """
    x, w = ctx.shape(x_index), ctx.shape(w_index)
    if x is None and w is None:
        if ctx.attr("kernel_shape"):  # the attributes are checked all the same
            read_window(ctx, len(ctx.attr("kernel_shape")), None, conv=True)
        return None
    rank = len(x) if x is not None else len(w)  # type: ignore[arg-type]
    if rank < 3:  # (N, C, spatial...) and (M, C / group, kernel...)
        which = "input" if x is not None else "weight tensor"
        raise RuleError("shape-mismatch", f"the {which} must have rank >= 3, has {rank}")
    if x is not None and w is not None and len(w) != len(x):
        raise RuleError("shape-mismatch", f"the weight tensor has rank {len(w)}, the input rank {len(x)}")
    if x is not None:
        x = nchw(x, channels_last)
    if w is not None and w_last:
        w = nchw(w, True)
    group = ctx.attr("group", 1)
    m = None if w is None else w[0]
    if x is not None and w is not None:
        same_dim(ctx, x[1], D.mul(w[1], group), "input channels and weight channels * group")
    if m is not None:
        check_divisible(ctx, m, group, "output channels M (weight dim 0)")
    if bias_index is not None:
        check_bias(ctx, bias_index, m)
    window = read_window(ctx, rank - 2, None if w is None else w[2:], conv=True)
    if x is None:
        return back((None, m) + (None,) * (rank - 2), channels_last)
    if window.kernel is None:
        ctx.because("the kernel shape is neither an attribute nor known from the weights", w_index)
    return back((x[0], m) + window_extents(ctx, x[2:], window, conv=True), channels_last)


def pool_output(ctx: RuleContext, channels_last: bool = False, onnx_op: bool = True) -> Shape | None:
    """A pooling node's output (input 0, ``kernel_shape`` required): N and C kept. ``onnx_op``:
    ONNX defines the operator (see ``read_window``)."""
    x = ctx.shape(0)
    kernel = ctx.require("kernel_shape")
    if x is None:
        read_window(ctx, len(kernel), None, conv=False, onnx_op=onnx_op)
        return None
    if len(x) < 3:
        raise RuleError("shape-mismatch", f"input must have rank >= 3, has {len(x)}")
    x = nchw(x, channels_last)
    window = read_window(ctx, len(x) - 2, None, conv=False, onnx_op=onnx_op)
    return back(x[:2] + window_extents(ctx, x[2:], window, conv=False), channels_last)


def check_divisible(ctx: RuleContext, channels: Dim, group: int, what: str) -> None:
    """Channels split into ``group`` groups: onnxruntime refuses a count the groups do not divide."""
    if isinstance(channels, int) and group > 0 and channels % group:
        ctx.error(
            "shape-mismatch",
            f"{ctx.op_type} with inputs {ctx.input_types_str()}: {what} {channels} is not divisible by group {group}",
        )


def check_bias(ctx: RuleContext, i: int, channels: Dim) -> None:
    """The optional bias at input ``i`` is a vector of one entry per output channel."""
    b = ctx.shape(i) if ctx.has(i) else None
    if b is None:
        return
    if len(b) != 1:
        raise RuleError("shape-mismatch", f"the bias has rank {len(b)}; it must be a vector")
    if channels is not None:
        same_dim(ctx, b[0], channels, "bias length and output channels")


@dataclass(frozen=True)
class TransposeWindow:
    """A transposed convolution's inputs read and checked (``transpose_window``)."""

    n: int  # spatial axes
    channels: Dim  # output channels: the weights' dim 1 times group
    window: Window
    output_padding: tuple[int, ...]


def transpose_window(ctx: RuleContext, x: Shape, w: Shape | None, bias_index: int) -> TransposeWindow:
    """ConvTranspose's (and ConvTransposeWithDynamicPads') input ``x``, weights ``w`` (rank
    unknown: ``None``), bias, group and window attributes, checked as onnxruntime checks them:
    ``output_padding`` non-negative and below the stride on each axis."""
    n = len(x) - 2
    if n < 1:
        raise RuleError("shape-mismatch", f"the input must have rank >= 3, has {len(x)}")
    if w is not None and len(w) != len(x):
        raise RuleError("shape-mismatch", f"the weight tensor has rank {len(w)}, the input rank {len(x)}")
    group = ctx.attr("group", 1)
    channels = D.mul(w[1], group) if w is not None else None
    if w is not None:
        same_dim(ctx, x[1], w[0], "input channels and weight dim 0")
    check_divisible(ctx, x[1], group, "input channels C")
    check_bias(ctx, bias_index, channels)
    window = read_window(ctx, n, w[2:] if w is not None else None, conv=True)
    out_pad = tuple(ctx.attr("output_padding") or [0] * n)
    if len(out_pad) != n or any(p < 0 for p in out_pad):
        raise RuleError("bad-attribute", f"output_padding {list(out_pad)} must have {n} non-negative entries")
    for p, s in zip(out_pad, window.strides):
        # onnxruntime refuses it: from the stride on, the output no longer convolves back to the
        # input's extent (whatever the dilation, pads or auto_pad; checked in tests/test_windows.py).
        if p >= s:
            raise RuleError(
                "bad-attribute", f"output_padding {list(out_pad)} must be below the strides {list(window.strides)}"
            )
    return TransposeWindow(n, channels, window, out_pad)


# -- extents along one axis ----------------------------------------------------------------------


def window_extent(
    facts: Facts,
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
    quotient and onnxruntime truncates it: concrete extents there are not claimed here, and the
    rules give onnxruntime's through ``sliding_extent`` (``truncated_extent`` for a symbolic
    extent that may fall short).
    ``dilated_same``: a dilated SAME window gives ``ceil(x / stride)`` as the definition says
    (true of a convolution: onnxruntime refuses to run it, the reference evaluator agrees).
    """
    if isinstance(x, int) and isinstance(k, int) and auto_pad in ("NOTSET", "VALID"):
        pads = pad_begin + pad_end if auto_pad == "NOTSET" else 0
        known_span = x + pads - (dilation * (k - 1) + 1)
        if known_span < 0 and not (stride == 1 and known_span == -1):
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
        ort = window_extent(facts, x, k, stride, dilation, 0, 0, "NOTSET", True)
        return valid if facts.equal(valid, ort) is True else None
    span = D.sub(D.add(x, pad_begin + pad_end), eff)
    if not ceil_mode:
        return D.add(D.floordiv(span, stride), 1)
    out = D.add(D.ceildiv(span, stride), 1)
    if isinstance(out, int) and isinstance(x, int):
        return _without_window_in_end_padding(out, x, stride, pad_begin)
    if isinstance(eff, int) and stride <= eff - pad_end:
        return out  # the last window always starts inside the input
    if isinstance(eff, int) and pad_end <= eff:
        # Windows start at 0, stride, ... below x + pad_begin: ceil((x + pad_begin) / stride) of
        # them. With pad_end <= eff at most the last of the ``out`` windows starts past that, so
        # dropping it is taking the minimum.
        return D.dmin(out, D.ceildiv(D.add(x, pad_begin), stride))
    return None


def sliding_extent(
    ctx: RuleContext,
    axis: int,
    x: Dim,
    k: Dim,
    stride: int,
    dilation: int,
    pad_begin: int,
    pad_end: int,
    auto_pad: str,
    ceil_mode: bool,
    conv: bool,
    truncates: bool,
) -> Dim:
    """``window_extent`` along spatial axis ``axis`` of a convolution (``conv``) or pooling node,
    with what onnxruntime does where the window does not fit: a known extent gets the extent it
    truncates to (``truncates``) or an error (``_short_window``), a symbolic one the least extent
    it runs at (``_require_fit``) and, where it may fall short, the truncated extent
    (``truncated_extent``).
    """
    if auto_pad in ("NOTSET", "VALID") and k is not None:
        pads = pad_begin + pad_end if auto_pad == "NOTSET" else 0
        fit = D.sub(D.add(D.mul(dilation, D.sub(k, 1)), 1), pads)
        if isinstance(fit, int) and isinstance(x, int) and x < fit:
            extent = _short_window(ctx, axis, x, fit, stride, not truncates)
            return _without_window_in_end_padding(extent, x, stride, pad_begin) if ceil_mode and extent else extent
        if isinstance(fit, int):
            _require_fit(ctx, x, fit, stride, not truncates)
        if truncates and stride > 1 and not ceil_mode:
            short = D.sub(x, fit)
            least = ctx.lower_bound(short)
            if least is None or least < 0:  # the window may not fit: the definition's floor is not the runtime's
                return truncated_extent(short, stride)
    return window_extent(ctx, x, k, stride, dilation, pad_begin, pad_end, auto_pad, ceil_mode, dilated_same=conv)


def truncated_extent(span: Dim, stride: int) -> Dim:
    """onnxruntime's extent ``1 + trunc(span / stride)`` without ceil_mode: its integer division
    truncates toward zero where the definition floors, which differs for a negative ``span`` (the
    padded input less the dilated kernel) not a multiple of the stride."""
    return D.add(1, D.truncdiv(span, stride))


def _without_window_in_end_padding(out: int, x: int, stride: int, pad_begin: int) -> int:
    """``out`` ceil_mode windows less the last when it would start in the end padding (past
    ``x + pad_begin``), as the definition and onnxruntime drop it, short windows included."""
    return out - 1 if (out - 1) * stride >= x + pad_begin else out


def _short_window(ctx: RuleContext, axis: int, x: int, fit: int, stride: int, refuse: bool) -> int | None:
    """The extent onnxruntime gives a known spatial extent ``x`` shorter than the window needs.

    onnxruntime refuses such a convolution (``refuse``). It pools it (and runs a DeformConv),
    truncating the negative quotient toward zero where the definition floors it (1 window where the
    definition has none when short by less than a stride), and refuses it once that extent is
    negative (short by two strides or more).
    """
    extent = truncated_extent(x - fit, stride)  # (an int, but past the bound of extent arithmetic)
    if refuse or (type(extent) is int and extent < 0):
        ctx.error(
            "shape-mismatch",
            f"{ctx.op_type} with inputs {ctx.input_types_str()}: spatial axis {axis} has extent {x}, "
            f"the (dilated, padded) window needs {fit}"
            + ("" if refuse else f", and onnxruntime refuses a shortfall of two strides ({2 * stride}) or more"),
        )
        return None
    return extent if type(extent) is int else None


def _require_fit(ctx: RuleContext, x: Dim, fit: int, stride: int, refuse: bool) -> None:
    """Record the least symbolic extent ``x`` that onnxruntime runs the node at.

    A convolution runs only where its window fits (``refuse``). A pooling node (or a DeformConv)
    runs unless the window overshoots by two strides; short of the fit its extent is
    onnxruntime's truncated one (``truncated_extent``, and ceil_mode's rounds up the same).
    """
    op = ctx.op_type
    if refuse:
        least, why = fit, f"onnxruntime refuses a {op} whose window does not fit the padded input"
    else:
        least, why = fit - 2 * stride + 1, f"onnxruntime refuses a {op} whose window overshoots by two strides"
    ctx.require_at_least(x, least, why)
