"""Signal processing: DFT, STFT, the window generators and MelWeightMatrix.

Complex values are carried in a trailing axis of extent 2 (real, imaginary); a real signal has
a trailing axis of extent 1. Lengths that are inputs (``dft_length``, ``frame_step``, a window's
``size``) are read from known contents, so ``Shape -> Gather`` lengths stay symbolic.
"""

from __future__ import annotations

import math

import numpy as np
from onnx import TensorProto

from infer.contract.context import RuleContext, RuleError
from infer.core import dims as D
from infer.core.dims import Dim
from infer.core.types import TensorType
from infer.core.values import MAX_KNOWN_ELEMENTS, Known, Value
from signatures.kit.helpers import same_dim
from signatures.kit.registry import example, rule


def _scalar_dim(ctx: RuleContext, i: int, what: str) -> Dim:
    """The integer in scalar input ``i`` (possibly symbolic), or ``None`` with the reason."""
    dims = ctx.known_dims(i)
    if dims is None or len(dims) != 1 or dims[0] is None:
        ctx.contents_unknown(i, what)
        return None
    return dims[0]


def _complex_axis(ctx: RuleContext, d: Dim) -> None:
    if isinstance(d, int) and d not in (1, 2):
        raise RuleError("shape-mismatch", f"the last axis holds real (1) or complex (2) values, has extent {d}")


# -- DFT ------------------------------------------------------------------------------------------


def _dft_axis(ctx: RuleContext, rank: int) -> int | None:
    """The transformed axis: an attribute before opset 20 (default 1), then an input (default -2).

    Valid axes are ``[-rank, -2]`` and ``[0, rank - 2]``: never the trailing complex axis.
    """
    axis: int
    if ctx.version < 20:
        axis = ctx.attr("axis", 1)
    elif ctx.has(2):
        k = ctx.known_ints(2)
        if k is None or len(k) != 1:
            ctx.contents_unknown(2, "the DFT axis")
            return None
        axis = k[0]
    else:
        axis = -2
    if not (-rank <= axis <= -2 or 0 <= axis <= rank - 2):
        raise RuleError("bad-attribute", f"DFT axis {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


@rule("DFT", since=17)
def dft(ctx: RuleContext) -> list:
    x = ctx.shape(0)
    if x is None:
        return [None]
    if len(x) < 2:
        raise RuleError("shape-mismatch", f"input must have rank >= 2 (signal and complex axes), has {len(x)}")
    _complex_axis(ctx, x[-1])
    onesided, inverse = bool(ctx.attr("onesided", 0)), bool(ctx.attr("inverse", 0))
    irfft = onesided and inverse
    if onesided and isinstance(x[-1], int) and x[-1] != (2 if inverse else 1):
        # The definition: a one-sided forward DFT takes real input, a one-sided inverse complex.
        raise RuleError(
            "shape-mismatch",
            f"a one-sided {'inverse ' if inverse else ''}DFT takes "
            f"{'complex (last extent 2)' if inverse else 'real (last extent 1)'} input, "
            f"the last extent is {x[-1]}",
        )
    given = ctx.has(1)  # dft_length
    length = _scalar_dim(ctx, 1, "the DFT length") if given else None
    if isinstance(length, int) and length <= 0:
        raise RuleError("bad-attribute", f"dft_length must be positive, is {length}")
    axis = _dft_axis(ctx, len(x))
    last = 1 if irfft else 2
    if axis is None:
        if not given and not onesided:
            return [tuple(x[:-1]) + (last,)]  # every signal axis keeps its extent
        if given and not onesided:
            # Whichever axis it is becomes ``length``; one that already has it keeps it.
            return [tuple(d if ctx.equal(d, length) is True else None for d in x[:-1]) + (last,)]
        return [(None,) * (len(x) - 1) + (last,)]
    n = x[axis]
    if not given:
        length = D.mul(2, D.sub(n, 1)) if irfft else n
    out = D.add(D.floordiv(length, 2), 1) if onesided and not inverse else length
    return [tuple(out if i == axis else d for i, d in enumerate(x[:-1])) + (last,)]


# -- STFT -----------------------------------------------------------------------------------------


@rule("STFT", since=17)
def stft(ctx: RuleContext) -> list:
    """``[batch, frames, bins, 2]`` with ``frames = floor((signal - frame) / step) + 1``."""
    x = ctx.shape(0)
    if x is not None:
        if len(x) != 3:
            raise RuleError("shape-mismatch", f"the signal must have rank 3 [batch, length, 1 or 2], has {len(x)}")
        _complex_axis(ctx, x[2])
    batch, signal = (None, None) if x is None else (x[0], x[1])
    window = ctx.shape(2) if ctx.has(2) else None
    if window is not None and len(window) != 1:
        raise RuleError("shape-mismatch", f"the window must be 1-D, has rank {len(window)}")
    if ctx.has(3):
        frame = _scalar_dim(ctx, 3, "the frame length")
        if window is not None:  # the two must agree
            frame = same_dim(ctx, frame, window[0], "frame_length and the window length")
    elif ctx.has(2):
        frame = window[0] if window is not None else None
        if frame is None:
            ctx.because("the frame length is the window's length, which is not known", 2)
    else:
        frame = signal
    step = _scalar_dim(ctx, 1, "the frame step")
    if isinstance(step, int) and step <= 0:
        raise RuleError("bad-attribute", f"frame_step must be positive, is {step}")
    frames = D.add(D.floordiv(D.sub(signal, frame), step), 1)
    if isinstance(frames, int) and frames < 0:
        raise RuleError("shape-mismatch", f"frames of length {frame} do not fit a signal of length {signal}")
    bins = D.add(D.floordiv(frame, 2), 1) if ctx.attr("onesided", 1) else frame
    return [(batch, frames, bins, 2)]


# -- windows --------------------------------------------------------------------------------------

# Float outputs whose contents are worth computing; near zero a float32 runtime differs from
# float64 arithmetic by more than a relative tolerance, so small elements are left unknown.
_FLOAT_NP: dict[int, type[np.floating]] = {TensorProto.FLOAT: np.float32, TensorProto.DOUBLE: np.float64}
_SMALL = 0.05


def _hann(n: np.ndarray, span: int) -> np.ndarray:
    return 0.5 - 0.5 * np.cos(2 * math.pi * n / span)


def _hamming(n: np.ndarray, span: int) -> np.ndarray:
    alpha = 25 / 46
    return alpha - (1 - alpha) * np.cos(2 * math.pi * n / span)


def _blackman(n: np.ndarray, span: int) -> np.ndarray:
    return 0.42 - 0.5 * np.cos(2 * math.pi * n / span) + 0.08 * np.cos(4 * math.pi * n / span)


_WINDOWS = {"HannWindow": _hann, "HammingWindow": _hamming, "BlackmanWindow": _blackman}


def _window_contents(ctx: RuleContext, size: int, elem: int) -> Known | None:
    dtype = _FLOAT_NP.get(elem)
    span = size if ctx.attr("periodic", 1) else size - 1
    if dtype is None or span <= 0 or size > MAX_KNOWN_ELEMENTS:
        return None
    values = _WINDOWS[ctx.op_type](np.arange(size, dtype=np.float64), span).astype(dtype)
    return Known((size,), tuple(float(v) if abs(v) >= _SMALL else None for v in values))


@rule(["HannWindow", "HammingWindow", "BlackmanWindow"], since=17)
def window(ctx: RuleContext) -> list:
    """A vector of ``size`` elements of type ``output_datatype``; contents when ``size`` is known."""
    elem = int(ctx.attr("output_datatype", TensorProto.FLOAT))
    size = _scalar_dim(ctx, 0, "the window size")
    if isinstance(size, int) and size < 0:
        raise RuleError("shape-mismatch", f"window size {size} is negative")
    known = _window_contents(ctx, size, elem) if isinstance(size, int) else None
    return [Value(TensorType(elem, (size,)), known)]


@rule("MelWeightMatrix", since=17)
def mel_weight_matrix(ctx: RuleContext) -> list:
    """``[floor(dft_length / 2) + 1, num_mel_bins]`` of type ``output_datatype``."""
    elem = int(ctx.attr("output_datatype", TensorProto.FLOAT))
    bins = _scalar_dim(ctx, 0, "the number of mel bins")
    length = _scalar_dim(ctx, 1, "the DFT length")
    return [TensorType(elem, (D.add(D.floordiv(length, 2), 1), bins))]


# -- examples -------------------------------------------------------------------------------------

example("DFT", ["float[B,N,1]"], ["float[B,N,2]"], opset=17)
example("DFT", ["float[B,N,1]", "int64[]={16}"], ["float[B,16,2]"], opset=17)
example("DFT", ["float[B,N,M,2]"], ["float[B,N,M,2]"], attrs={"axis": 2, "inverse": 1}, opset=17)
example("DFT", ["float[B,N,1]"], ["float[B,floor(N/2) + 1,2]"], attrs={"onesided": 1}, opset=17)
example("DFT", ["float[B,N,2]"], ["float[B,2*N - 2,1]"], attrs={"onesided": 1, "inverse": 1}, opset=17)
example("DFT", ["float[B,N,3]"], ["float[*]"], opset=17, error="shape-mismatch")
example("DFT", ["float[B,N,2]"], ["float[*]"], attrs={"onesided": 1}, opset=17, error="shape-mismatch")
example(
    "DFT",
    ["float[B,N,1]", "", "int64[]={1}"],
    ["float[*]"],
    attrs={"onesided": 1, "inverse": 1},
    opset=20,
    error="shape-mismatch",
)
example("DFT", ["float[B,N,1]"], ["float[*]"], attrs={"axis": 2}, opset=17, error="bad-attribute")
example("DFT", ["float[B,N,M,1]"], ["float[B,N,M,2]"], opset=20)
example("DFT", ["float[B,N,M,1]", "", "int64[]={1}"], ["float[B,floor(N/2) + 1,M,2]"], attrs={"onesided": 1}, opset=20)
example("DFT", ["float[B,N,M,1]", "int64[]={L}", "int64[]={-3}"], ["float[B,L,M,2]"], opset=20)
example("DFT", ["float[B,N,M,2]", "", "int64[]"], ["float[B,N,M,2]"], attrs={"inverse": 1}, opset=20)
example("DFT", ["float[B,N,M,2]", "int32[]", ""], ["float[B,N,?,2]"], opset=20)
example("DFT", ["float[B,N,M,2]", "int32[]={8}", "int64[]"], ["float[?,?,?,2]"], opset=20)
example("STFT", ["float[B,L,1]", "int64[]={8}", "float[16]"], ["float[B,floor((L - 16)/8) + 1,9,2]"])
example(
    "STFT",
    ["float[B,L,2]", "int64[]={4}", "", "int64[]={W}"],
    ["float[B,floor((L - W)/4) + 1,W,2]"],
    attrs={"onesided": 0},
)
example("STFT", ["float[B,L,1]", "int64[]={S}", "float[W]"], ["float[B,floor((L - W)/S) + 1,floor(W/2) + 1,2]"])
example("STFT", ["float[B,L,1]", "int64[]"], ["float[B,?,floor(L/2) + 1,2]"])
example(
    "STFT", ["float[B,L,1]", "int64[]={2}", "float[W]", "int64[]"], ["float[B,floor((L - W)/2) + 1,floor(W/2) + 1,2]"]
)
example(
    "STFT",
    ["float[B,L,1]", "int64[]={4}", "float[16]", "int64[]={15}"],
    ["float[B,floor((L + 1)/4) - 3,8,2]"],
    error="shape-mismatch",
)
example("HannWindow", ["int64[]={4}"], ["float[4]"])
example("HannWindow", ["int64[]={S}"], ["double[S]"], attrs={"output_datatype": TensorProto.DOUBLE})
example("HammingWindow", ["int32[]"], ["int64[?]"], attrs={"output_datatype": TensorProto.INT64})
example("BlackmanWindow", ["int64[]={5}"], ["float[5]"], attrs={"periodic": 0})
example("HannWindow", ["int64[]={-1}"], ["unknown"], error="shape-mismatch")
example(
    "MelWeightMatrix",
    ["int64[]={8}", "int64[]={N}", "int64[]={16000}", "float[]={0.0}", "float[]={8000.0}"],
    ["float[floor(N/2) + 1,8]"],
)
example(
    "MelWeightMatrix",
    ["int32[]", "int32[]={64}", "int32[]", "float[]", "float[]"],
    ["float16[33,?]"],
    attrs={"output_datatype": TensorProto.FLOAT16},
)
