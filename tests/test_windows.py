"""One window reader for every convolution and pooling (signatures/kit/windows.py), against onnxruntime.

Each case of the grids below is one set of window attributes and shapes. For every convolution
(Conv, ConvInteger, QLinearConv of both domains, FusedConv, NhwcConv, NhwcFusedConv, DeformConv)
inference must refuse the case exactly when it refuses the Conv, and for every pooling
(MaxPool, AveragePool, LpPool, QLinearAveragePool, NhwcMaxPool) exactly when it refuses the
MaxPool. Where onnxruntime's CPU build runs the operator, it must refuse the case exactly when
inference does, and where it runs it every claim, concrete and symbolic, must hold.

Two readings differ on purpose. A dilated SAME convolution gets the definition's extent
``ceil(x / stride)`` (onnxruntime refuses it, the reference evaluator computes it), so those
cases are checked for agreement among the convolutions only. A DeformConv whose window does not
fit is read as onnxruntime's kernel reads it, as the pools are: the negative quotient truncated
toward zero (an error only once that is negative), where every other convolution is refused.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import infer
from tests.support.contrib_node import MS, Case, HardwareRefused, Refused, claims_hold, cpu_kernels, errors, ort_run
from tests.support.hardware import skip_lacking
from tests.support.onenode import In, const
from tests.support.runtime import check

F, U8, I8, I32 = np.float32, np.uint8, np.int8, np.int32


@dataclass(frozen=True)
class Window:
    """A convolution or pooling case in NCHW terms: data (N, C, spatial...), weights (M, C / group, k...)."""

    x: tuple[int, ...]
    attrs: dict[str, Any] = field(default_factory=dict)
    w: tuple[int, ...] | None = None  # convolutions only
    bias: int | None = None  # the bias length, if any
    why: str = ""

    def __str__(self) -> str:
        return f"{self.why}: x{list(self.x)} w{list(self.w or ())} b{self.bias} {self.attrs}"


def _nhwc(shape: tuple[int, ...]) -> list[int]:
    return [shape[0], *shape[2:], shape[1]]


def _short(case: Window) -> bool:
    """Some spatial axis is shorter than its (dilated, padded) window needs."""
    n = len(case.x) - 2
    k = case.attrs.get("kernel_shape") or list((case.w or ())[2:])
    if len(k) != n or case.attrs.get("auto_pad", "NOTSET") not in ("NOTSET", "VALID"):
        return False
    d = case.attrs.get("dilations", [1] * n)
    p = case.attrs.get("pads", [0] * 2 * n) if case.attrs.get("auto_pad", "NOTSET") == "NOTSET" else [0] * 2 * n
    try:
        return any(case.x[i + 2] + p[i] + p[i + n] < d[i] * (k[i] - 1) + 1 for i in range(n))
    except (IndexError, TypeError):
        return False


def _out_extents(case: Window) -> list[int]:
    """The definition's spatial extents (at least 1: an offset tensor needs some shape)."""
    n = len(case.x) - 2
    k = case.attrs.get("kernel_shape") or list(case.w[2:])  # type: ignore[index]
    s, d = case.attrs.get("strides", [1] * n), case.attrs.get("dilations", [1] * n)
    p = case.attrs.get("pads", [0] * 2 * n)
    out = []
    for i in range(n):
        try:
            span = case.x[i + 2] + p[i] + p[i + n] - d[i] * (k[i] - 1) - 1
            out.append(max(0, int(span / s[i]) + 1))  # onnxruntime's DeformConv truncates toward zero
        except (IndexError, ZeroDivisionError, TypeError):
            out.append(1)
    return out


CONVS = ["Conv", "ConvInteger", "QLinearConv", "ms.QLinearConv", "FusedConv", "NhwcConv", "NhwcFusedConv", "DeformConv"]
POOLS = ["MaxPool", "AveragePool", "LpPool", "QLinearAveragePool", "NhwcMaxPool"]


def conv_node(op: str, case: Window) -> Case | None:
    """``case`` as a node of convolution ``op``; ``None`` where the operator cannot express it."""
    w = np.ones(case.w, F)  # type: ignore[arg-type]
    bias = None if case.bias is None else np.ones(case.bias, F)
    attrs = dict(case.attrs)
    q = [const(0.1, F), const(1, U8)]
    if op == "Conv":
        return Case("Conv", [In(case.x), const(w, F), None if bias is None else const(bias, F)], attrs, domain="")
    if op == "ConvInteger":
        return None if bias is not None else Case("ConvInteger", [In(case.x, U8), const(w, U8)], attrs, domain="")
    if op in ("QLinearConv", "ms.QLinearConv"):
        b = None if bias is None else const(bias, I32)
        inputs = [In(case.x, U8), *q, const(w, I8), const(0.1, F), const(0, I8), *q, b]
        return Case("QLinearConv", inputs, attrs, domain="" if op == "QLinearConv" else MS)
    if op in ("FusedConv", "NhwcFusedConv"):
        attrs["activation"] = "Relu"
    if op in ("NhwcConv", "NhwcFusedConv"):
        if len(case.x) < 3 or len(case.w or ()) < 3:
            return None
        x = _nhwc(case.x)
        weights = np.ones(_nhwc(case.w), F) if op == "NhwcConv" else w  # type: ignore[arg-type]
        return Case(op, [In(x), const(weights, F), None if bias is None else const(bias, F)], attrs)
    if op == "FusedConv":
        return Case(op, [In(case.x), const(w, F), None if bias is None else const(bias, F)], attrs)
    # DeformConv: onnxruntime's kernel is 2-D, and the operator has no auto_pad.
    if len(case.x) != 4 or "auto_pad" in attrs:
        return None
    k = attrs.get("kernel_shape") or list(case.w[2:])  # type: ignore[index]
    offset = In(
        [case.x[0], 2 * int(np.prod(k)) if all(isinstance(v, int) and v > 0 for v in k) else 2, *_out_extents(case)]
    )
    return Case(
        "DeformConv",
        [In(case.x), const(w, F), offset, None if bias is None else const(bias, F)],
        attrs,
        domain="",
        opset=19,
    )


def pool_node(op: str, case: Window) -> Case | None:
    attrs = dict(case.attrs)
    q = [const(0.1, F), const(1, U8)]
    if op in ("MaxPool", "AveragePool", "LpPool"):
        if op == "LpPool" and "ceil_mode" in attrs:
            return None
        return Case(op, [In(case.x)], attrs, domain="", opset=19 if op != "LpPool" else 18)
    if op == "QLinearAveragePool":
        return None if "dilations" in attrs else Case(op, [In(case.x, U8), *q, *q], attrs)
    return None if len(case.x) < 3 else Case(op, [In(_nhwc(case.x), U8)], attrs)


# -- the grids -----------------------------------------------------------------------------------


def conv_cases() -> list[Window]:
    w1, w2 = (4, 2, 3), (4, 2, 3, 2)
    out = [
        Window((1, 2, 5), w=w1, why="fits"),
        Window((1, 2, 5, 6), w=w2, attrs={"strides": [2, 1]}, why="fits, 2-D"),
        Window((1, 2, 5, 6), w=w2, attrs={"pads": [1, 0, 1, 1], "dilations": [2, 1]}, why="padded, dilated"),
        Window((1, 2, 5, 6), w=w2, attrs={"pads": [-1, 0, 0, 0]}, why="a negative pad"),
        Window((1, 2, 5, 6), w=w2, attrs={"kernel_shape": [0, 2]}, why="a zero kernel"),
        Window((1, 2, 5, 6), w=w2, attrs={"kernel_shape": [2, 2]}, why="kernel_shape is not the weights'"),
        Window((1, 2, 5, 6), w=w2, attrs={"kernel_shape": [3, 2]}, why="kernel_shape is the weights'"),
        Window((1, 2, 2, 6), w=w2, why="a window longer than its input"),
        Window((1, 2, 2, 6), w=w2, attrs={"pads": [1, 0, 0, 0]}, why="a window the pads make fit"),
        Window((1, 2, 5, 1), w=w2, why="short along the second axis"),
        Window((1, 2, 5, 6), w=w2, attrs={"strides": [0, 1]}, why="a zero stride"),
        Window((1, 2, 5, 6), w=w2, attrs={"strides": [-1, 1]}, why="a negative stride"),
        Window((1, 2, 5, 6), w=w2, attrs={"dilations": [0, 1]}, why="a zero dilation"),
        Window((1, 2, 5, 6), w=w2, attrs={"pads": [1, 1]}, why="too few pads"),
        Window((1, 2, 5, 6), w=w2, attrs={"strides": [1]}, why="too few strides"),
        Window((1, 4, 5, 6), w=(3, 2, 3, 2), attrs={"group": 2}, why="groups that do not divide M"),
        Window((1, 4, 5, 6), w=(4, 2, 3, 2), attrs={"group": 2}, why="two groups"),
        Window((1, 3, 5, 6), w=w2, why="channels that are not the weights' times group"),
        Window((1, 2, 5, 6), w=w2, bias=5, why="a bias of the wrong length"),
        Window((1, 2, 5, 6), w=w2, bias=4, why="a bias"),
        Window((1, 2, 7, 7), w=w2, attrs={"auto_pad": "SAME_UPPER", "strides": [2, 2]}, why="SAME_UPPER"),
        Window((1, 2, 7, 7), w=w2, attrs={"auto_pad": "SAME_LOWER"}, why="SAME_LOWER"),
        Window((1, 2, 7, 7), w=w2, attrs={"auto_pad": "VALID", "strides": [2, 1]}, why="VALID"),
        Window((1, 2, 2, 7), w=w2, attrs={"auto_pad": "VALID"}, why="VALID and too short"),
        Window((1, 2, 7, 7), w=w2, attrs={"auto_pad": "SAME_UPPER", "dilations": [2, 1]}, why="dilated SAME"),
        Window((1, 2, 7, 7), w=w2, attrs={"auto_pad": "FOO"}, why="an unknown auto_pad"),
        Window((1, 2, 7, 7), w=w2, attrs={"auto_pad": "SAME_UPPER", "pads": [1, 1, 1, 1]}, why="pads beside SAME"),
        Window((1, 2, 7, 7), w=w2, attrs={"auto_pad": "VALID", "pads": [0, 0, 0, 0]}, why="pads beside VALID"),
        Window((1, 2, 7, 7), w=w2, attrs={"auto_pad": "NOTSET", "pads": [1, 0, 0, 1]}, why="pads beside NOTSET"),
        Window((1, 2, 5, 6), w=w2, attrs={"dilations": [1 << 62, 1]}, why="a dilation past int64"),
        Window((1, 2, 5), w=(4, 2, 3, 2), why="weights of another rank"),
        Window((1, 2), w=(4, 2), why="no spatial axis"),
        Window((1, 2, 5), w=w1, attrs={"pads": [3, 3]}, why="pads wider than the kernel"),
    ]
    # Short and long windows over strides, pads and dilations, at sizes around the fit.
    for x, k, s, p, d in itertools.product([1, 2, 3, 5], [1, 3], [1, 2], [(0, 0), (1, 0)], [1, 2]):
        out.append(
            Window(
                (1, 2, x, 4),
                w=(2, 2, k, 1),
                attrs={"strides": [s, 1], "pads": [p[0], 0, p[1], 0], "dilations": [d, 1]},
                why="sweep",
            )
        )
    return out


def pool_cases() -> list[Window]:
    k = {"kernel_shape": [3, 3]}
    out = [
        Window((1, 2, 5, 5), attrs=k, why="fits"),
        Window((1, 2, 6, 6), attrs={**k, "strides": [2, 2], "ceil_mode": 1}, why="ceil_mode"),
        Window((1, 2, 5, 5), attrs={**k, "pads": [-1, 0, 0, 0]}, why="a negative pad"),
        Window((1, 2, 5, 5), attrs={"kernel_shape": [0, 3]}, why="a zero kernel"),
        Window((1, 2, 5, 5), attrs={**k, "strides": [0, 1]}, why="a zero stride"),
        Window((1, 2, 5, 5), attrs={**k, "dilations": [0, 1]}, why="a zero dilation"),
        Window((1, 2, 5, 5), attrs={**k, "pads": [1, 1]}, why="too few pads"),
        Window((1, 2, 5, 5), attrs={"kernel_shape": [3]}, why="too short a kernel_shape"),
        Window((1, 2, 2, 5), attrs=k, why="short by less than a stride"),
        Window((1, 2, 1, 5), attrs=k, why="short by two strides"),
        Window((1, 2, 1, 5), attrs={"kernel_shape": [4, 3], "strides": [2, 1]}, why="short, a stride of 2"),
        Window((1, 2, 5, 5), attrs={**k, "auto_pad": "SAME_UPPER", "pads": [1, 1, 1, 1]}, why="pads beside SAME"),
        Window((1, 2, 5, 5), attrs={**k, "auto_pad": "FOO"}, why="an unknown auto_pad"),
        Window((1, 2, 5, 5), attrs={**k, "pads": [3, 0, 0, 0]}, why="a pad as wide as the kernel"),
        Window((1, 2, 4, 4), attrs={"kernel_shape": [2, 2], "pads": [1, 1, 2, 2]}, why="pads past the kernel"),
        Window((1, 2, 5, 5), attrs={**k, "pads": [2, 2, 2, 2]}, why="pads just below the kernel"),
        Window((1, 2, 5, 5), attrs={**k, "dilations": [1 << 62, 1]}, why="a dilation past int64"),
        Window((1, 2, 7, 7), attrs={**k, "auto_pad": "SAME_LOWER", "strides": [2, 2]}, why="SAME_LOWER"),
        Window((1, 2, 6), attrs={"kernel_shape": [3]}, why="1-D"),
        Window((1, 2, 4, 4, 4), attrs={"kernel_shape": [3, 3, 3]}, why="3-D"),
    ]
    return out


def _refuses(case: Case) -> bool:
    """Inference reports an error, or says onnxruntime refuses a node the definition allows."""
    result = infer.infer_model(case.model()[0])
    return bool(errors(result)) or not result.domain.runnable


def _agrees_with_onnxruntime(case: Case, refused: bool, dilated_same: bool, short: bool) -> list[str]:
    """onnxruntime refuses ``case`` exactly when inference does, and where it runs it every claim
    holds (a short window's symbolic claim rests on the window fitting, which that run violates:
    tests/test_flags_runtime.py checks those least extents)."""
    if (case.domain, case.op) not in cpu_kernels():
        return []
    try:
        observed = ort_run(case)
    except HardwareRefused as e:
        skip_lacking([f"{case}: {e}"], 1)
        raise
    except Refused as e:
        if "NOT_IMPLEMENTED" in str(e):
            return []
        if refused or dilated_same:
            return []
        return [f"{case}: onnxruntime refuses it ({e}), inference finds no error"]
    if refused:
        return [f"{case}: onnxruntime runs it, inference reports an error"]
    found = claims_hold(case, observed)
    return [p for p in found if not (short and "rests on an assumption" in p)]


@pytest.mark.parametrize("window", conv_cases(), ids=str)
def test_convolutions_refuse_what_conv_refuses(window: Window) -> None:
    reference = conv_node("Conv", window)
    assert reference is not None
    conv_refuses = _refuses(reference)
    dilated_same = window.attrs.get("auto_pad", "NOTSET").startswith("SAME") and window.attrs.get("dilations")
    problems = []
    for op in CONVS:
        case = conv_node(op, window)
        if case is None:
            continue
        refused = _refuses(case)
        if refused != conv_refuses and not (op == "DeformConv" and _short(window)):
            problems.append(f"{op}: inference {'refuses' if refused else 'accepts'} it, as it does not the Conv")
        problems += _agrees_with_onnxruntime(case, refused, bool(dilated_same), _short(window))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("window", pool_cases(), ids=str)
def test_poolings_refuse_what_maxpool_refuses(window: Window) -> None:
    reference = pool_node("MaxPool", window)
    assert reference is not None
    pool_refuses = _refuses(reference)
    problems = []
    for op in POOLS:
        case = pool_node(op, window)
        if case is None:
            continue
        refused = _refuses(case)
        if refused != pool_refuses:
            problems.append(f"{op}: inference {'refuses' if refused else 'accepts'} it, as it does not the MaxPool")
        problems += _agrees_with_onnxruntime(case, refused, False, _short(window))
    assert not problems, "\n".join(problems)


def test_the_grids_cover_refusals_and_runs() -> None:
    """Both grids hold cases onnxruntime refuses and cases it runs (no check that cannot fail)."""
    conv = [_refuses(conv_node("Conv", w)) for w in conv_cases()]  # type: ignore[arg-type]
    pool = [_refuses(pool_node("MaxPool", w)) for w in pool_cases()]  # type: ignore[arg-type]
    assert sum(conv) >= 15 and len(conv) - sum(conv) >= 15
    assert sum(pool) >= 8 and len(pool) - sum(pool) >= 6


# -- transposed convolutions: ConvTranspose and ConvTransposeWithDynamicPads share one reader ----


def transpose_cases() -> list[Window]:
    """Weights (C, M / group, k...): attributes onnxruntime refuses and runs, for both operators."""
    w = (2, 3, 3, 2)
    out = [
        Window((1, 2, 4, 5), w=w, why="fits"),
        Window((1, 2, 4, 5), w=w, attrs={"strides": [2, 2], "output_padding": [1, 1]}, why="output_padding"),
        Window(
            (1, 2, 4, 5), w=w, attrs={"strides": [2, 2], "output_padding": [2, 0]}, why="output_padding at the stride"
        ),
        Window((1, 2, 4, 5), w=w, attrs={"output_padding": [1, 0]}, why="output_padding past a stride of 1"),
        Window((1, 2, 4, 5), w=w, attrs={"dilations": [2, 1], "output_padding": [1, 0]}, why="below the dilation"),
        Window(
            (1, 2, 4, 5),
            w=w,
            attrs={"strides": [2, 1], "dilations": [3, 1], "output_padding": [2, 0]},
            why="at the stride, below the dilation",
        ),
        Window(
            (1, 2, 4, 5), w=w, attrs={"strides": [2, 1], "output_padding": [1, 0], "auto_pad": "SAME_UPPER"}, why="SAME"
        ),
        Window(
            (1, 2, 4, 5),
            w=w,
            attrs={"strides": [1, 1], "output_padding": [1, 0], "auto_pad": "VALID"},
            why="VALID, at the stride",
        ),
        Window(
            (1, 2, 4, 5), w=w, attrs={"strides": [3, 1], "output_padding": [2, 0], "pads": [1, 0, 1, 0]}, why="pads"
        ),
        Window((1, 2, 4, 5), w=w, attrs={"output_padding": [-1, 0]}, why="a negative output_padding"),
        Window((1, 2, 4, 5), w=w, attrs={"output_padding": [0]}, why="too short an output_padding"),
        Window((1, 2, 4, 5), w=w, attrs={"strides": [0, 1]}, why="a zero stride"),
        Window((1, 2, 4, 5), w=w, attrs={"kernel_shape": [2, 2]}, why="a kernel_shape other than the weights'"),
        Window((1, 4, 4, 5), w=(4, 3, 3, 2), attrs={"group": 2}, why="two groups"),
        Window((1, 3, 4, 5), w=(3, 3, 3, 2), attrs={"group": 2}, why="groups that do not divide C"),
        Window((1, 3, 4, 5), w=w, why="channels other than the weights' dim 0"),
        Window((1, 2, 4, 5), w=w, bias=3, why="a bias"),
        Window((1, 2, 4, 5), w=w, bias=4, why="a bias of the wrong length"),
        Window((1, 2, 4), w=w, why="weights of another rank"),
        Window((1, 2), w=(2, 3), why="no spatial axis"),
    ]
    return out


def transpose_node(op: str, case: Window) -> Case:
    w = const(np.ones(case.w, F), F)  # type: ignore[arg-type]
    bias = None if case.bias is None else const(np.ones(case.bias, F), F)
    if op == "ConvTranspose":
        return Case(op, [In(case.x), w, bias], dict(case.attrs), domain="")
    attrs = dict(case.attrs)  # the contrib operator reads its pads from an input
    pads = np.array(attrs.pop("pads", [0] * 2 * max(len(case.x) - 2, 1)), np.int64)
    return Case(op, [In(case.x), w, const(pads, np.int64), bias], attrs)


@pytest.mark.parametrize("window", transpose_cases(), ids=str)
def test_transposed_convolutions_refuse_alike_and_as_onnxruntime_does(window: Window) -> None:
    reference = _refuses(transpose_node("ConvTranspose", window))
    problems = []
    for op in ("ConvTranspose", "ConvTransposeWithDynamicPads"):
        case = transpose_node(op, window)
        refused = _refuses(case)
        if refused != reference:
            problems.append(
                f"{op}: inference {'refuses' if refused else 'accepts'} it, as it does not the ConvTranspose"
            )
        problems += _agrees_with_onnxruntime(case, refused, False, False)
    assert not problems, "\n".join(problems)


def test_the_transposed_grid_covers_refusals_and_runs() -> None:
    refused = [_refuses(transpose_node("ConvTranspose", w)) for w in transpose_cases()]
    assert sum(refused) >= 8 and len(refused) - sum(refused) >= 5


def _pool_on_empty_batch(op: str, x: int, k: int, pads: list[int], stride: int, ceil_mode: int) -> Case:
    attrs = {"kernel_shape": [k], "pads": pads, "strides": [stride], "ceil_mode": ceil_mode}
    return Case(op, [In((0, 1, x))], attrs, domain="", opset=19)


@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
def test_short_pooling_windows_on_an_empty_batch_as_onnxruntime_computes_them(op: str) -> None:
    """A batch of 0 lets onnxruntime pool a spatial axis shorter than the window (even of extent
    0): its extent truncates toward zero, and with ceil_mode a last window that would start in the
    end padding is dropped, as everywhere (an independent generator found 1 claimed for 0)."""
    problems, ran = [], 0
    for x, k, p0, p1, stride, ceil_mode in itertools.product(range(4), (3, 4), (0, 1), (0, 1), (1, 2, 3), (0, 1)):
        case = _pool_on_empty_batch(op, x, k, [p0, p1], stride, ceil_mode)
        refused = _refuses(case)
        problems += _agrees_with_onnxruntime(case, refused, False, False)
        ran += not refused
    assert ran >= 60 and not problems, "\n".join(problems)


# -- a pooling window that may not fit a symbolic extent ----------------------------------------


def _pool_on_symbolic(op: str, attrs: dict[str, Any], resized: bool) -> onnx.ModelProto:
    """``op`` over an input (1, 1, H, 4), or over it resized to half its height (nearest), whose
    height is a variable that may be shorter than the window."""
    nodes, inits, x = [], [], "X"
    if resized:
        inits.append(numpy_helper.from_array(np.array([1, 1, 0.5, 1], F), "scales"))
        nodes.append(helper.make_node("Resize", ["X", "", "scales"], ["R"], mode="nearest"))
        x = "R"
    nodes.append(helper.make_node(op, [x], ["Y"], **attrs))
    declared = [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 1, "H", 4])]
    graph = helper.make_graph(
        nodes, "g", declared, [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], inits
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    model.ir_version = 9
    return model


SHORT_POOLS = [
    # issue 24: floor((n + 1)/2) - 1 was claimed, 0 at n = 2 where onnxruntime computes 1
    {"kernel_shape": [5, 2], "dilations": [2, 1], "pads": [3, 1, 3, 1], "strides": [2, 2]},
    {"kernel_shape": [7, 1], "strides": [2, 1]},  # refused below n = 4
    {"kernel_shape": [4, 1], "strides": [3, 1], "pads": [1, 0, 0, 0]},
    {"kernel_shape": [3, 1], "strides": [2, 1]},
    {"kernel_shape": [5, 1], "strides": [2, 1], "ceil_mode": 1},
    {"kernel_shape": [6, 1], "strides": [3, 1], "pads": [0, 0, 1, 0], "ceil_mode": 1},
]


@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
@pytest.mark.parametrize("resized", [False, True], ids=["input", "resized"])
@pytest.mark.parametrize("attrs", SHORT_POOLS, ids=str)
def test_pooling_windows_short_of_a_symbolic_extent_as_onnxruntime_runs_them(
    op: str, resized: bool, attrs: dict[str, Any]
) -> None:
    """At every extent 1..8 the pooled extent claimed over the variable is onnxruntime's, and the
    domain holds the binding exactly where onnxruntime runs it (no window is required to fit
    where onnxruntime truncates a short one)."""
    ort = pytest.importorskip("onnxruntime")
    model = _pool_on_symbolic(op, attrs, resized)
    result = infer.infer_model(model)
    assert not errors(result)
    so = ort.SessionOptions()
    so.log_severity_level = 4
    session = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    problems, ran = [], 0
    for n in range(1, 9):
        h = 2 * n if resized else n
        try:
            (y,) = session.run(None, {"X": np.ones((1, 1, h, 4), F)})
        except Exception:  # onnxruntime refuses the binding
            y = None
        inside = result.domain.contains({"H": h})
        if inside != (y is not None):
            problems.append(
                f"H={h}: the domain says {'inside' if inside else 'outside'}, onnxruntime "
                f"{'runs' if y is not None else 'refuses'} it"
            )
        if y is not None:
            ran += 1
            verdict = check(result, [({"H": h}, {"Y": y})])
            problems += [f"H={h}: {w}" for w in [*verdict.wrong, *verdict.skipped_runs]]
    assert ran and not problems, f"{op} {attrs}:\n" + "\n".join(problems)


@pytest.mark.parametrize("op", ["MaxPool", "AveragePool", "LpPool"])
@pytest.mark.parametrize("symbolic", [False, True], ids=["known", "symbolic"])
def test_pads_not_below_the_kernel_get_the_definitions_shape_and_a_runtime_refusal(op: str, symbolic: bool) -> None:
    """The definition pools windows wholly in the padding (onnx's tests: [5,3,4,4], kernel 2, pads
    [1,1,2,2] give [5,3,6,6], as its reference evaluator computes); onnxruntime refuses the node
    when it loads it: a warning, and a runtime's constraint that leaves no valid binding."""
    case = Case(
        op,
        [In((5, 3, 4, 4))],
        {"kernel_shape": [2, 2], "pads": [1, 1, 2, 2]},
        domain="",
        opset=18 if op == "LpPool" else 19,
    )
    model, bindings = case.model(symbolic)
    result = infer.infer_model(model)
    assert not errors(result)
    assert "runtime-refuses" in {d.code for d in result.diagnostics if d.severity == "warning"}
    shape = result.type_of("y0").shape
    assert shape is not None and [infer.core.dims.evaluate(d, bindings) for d in shape] == [5, 3, 6, 6]
    if symbolic:
        assert [infer.core.dims.to_str(d) for d in shape[2:]] == ["d0_2 + 2", "d0_3 + 2"]
    dom = result.domain
    (c,) = dom.binding
    assert c.kind == "runtime" and c.runtime_only and "pads [1, 1, 2, 2]" in str(c)
    assert not dom.runnable and dom.smallest() is None and dom.contains(bindings) is False
    with pytest.raises(Refused, match="pool_attributes"):
        ort_run(case)
    if op != "MaxPool":  # onnx's reference evaluator reduces an empty window of a MaxPool
        from onnx.reference import ReferenceEvaluator

        (y,) = ReferenceEvaluator(case.model()[0]).run(None, case.feeds())
        assert y.shape == (5, 3, 6, 6)
