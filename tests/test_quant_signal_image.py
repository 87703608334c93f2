"""Quantization, signal and image rules against the runtimes (``tests/support/onenode.py``).

onnxruntime where it implements the operator version; ``onnx.reference.ReferenceEvaluator``
where it does not (RoiAlign 22, 1-D GridSample, CenterCropPad's padding of batch axes, ...).
Window contents are compared element by element with onnxruntime.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper, numpy_helper

import infer
import tests.support.onenode as onenode
from tests.support.onenode import In, check_node, const
from tests.support.runtime import run

F32 = np.float32


def _q(x: list[int], w: list[int]) -> list[In]:
    """QLinearConv inputs: uint8 data, int8 weights, scalar scales and zero points."""
    return [
        In(x, np.uint8),
        const(0.1, F32),
        const(1, np.uint8),
        In(w, np.int8),
        const(0.1, F32),
        const(0, np.int8),
        const(0.2, F32),
        const(3, np.uint8),
    ]


def _qmm(a: list[int], b: list[int]) -> list[In]:
    return [
        In(a, np.uint8),
        const(0.1, F32),
        const(1, np.uint8),
        In(b, np.uint8),
        const(0.1, F32),
        const(1, np.uint8),
        const(0.2, F32),
        const(3, np.uint8),
    ]


Case = tuple[str, list[Any], dict[str, Any], int, int]


def c(op: str, opset: int, inputs: list[Any], n_out: int = 1, **attrs: Any) -> Case:
    """One node: ``op`` at ``opset`` with ``inputs`` (``In`` or ``None``) and attributes."""
    return op, inputs, attrs, n_out, opset


ROIS = const(np.array([[0, 0, 4, 4], [1, 1, 6, 7], [2, 2, 9, 9]]), F32)
ROIS5 = const(np.array([[0, 0, 0, 4, 4], [1, 1, 1, 6, 7]]), F32)
BLOCKS = const(np.ones((3, 2)), F32)

ORT_CASES: list[Case] = [
    c("QuantizeLinear", 10, [In([2, 3]), const(0.5, F32)]),
    c("QuantizeLinear", 13, [In([2, 3]), const(0.5, F32), const([1], np.int8)]),
    c("QuantizeLinear", 19, [In([2, 3, 4]), const([0.5, 1, 2], F32), const([1, 2, 3], np.uint8)], axis=1),
    c("QuantizeLinear", 21, [In([3, 5]), BLOCKS, const(np.zeros((3, 2)), np.int8)], axis=1, block_size=3),
    c("QuantizeLinear", 23, [In([2, 3]), const(0.5, F32)], output_dtype=TP.UINT16),
    c("QuantizeLinear", 25, [In([2, 3], np.float16), const(0.5, F32)], precision=TP.FLOAT),
    c("DequantizeLinear", 10, [In([2, 3], np.int32), const(0.5, F32)]),
    c("DequantizeLinear", 13, [In([2, 3, 4], np.int8), const([0.5, 1, 2], F32), const([1, 2, 3], np.int8)], axis=1),
    c("DequantizeLinear", 19, [In([2, 3], np.uint8), const(0.5, np.float16), const(0, np.uint8)]),
    c("DequantizeLinear", 21, [In([3, 5], np.int8), BLOCKS], axis=1, block_size=3),
    c("DequantizeLinear", 25, [In([2, 3], np.int8), const(0.5, F32)], output_dtype=TP.FLOAT16),
    c("DynamicQuantizeLinear", 11, [In([3, 4])], n_out=3),
    c("MatMulInteger", 10, [In([2, 1, 3, 4], np.uint8), In([5, 4, 2], np.int8)]),
    c("MatMulInteger", 10, [In([4], np.uint8), In([4, 5], np.uint8), const(1, np.uint8), const(2, np.uint8)]),
    c("QLinearMatMul", 10, _qmm([2, 3, 4], [4, 5])),
    c("QLinearMatMul", 21, _qmm([3, 4], [4])),
    c(
        "ConvInteger",
        10,
        [In([2, 4, 8, 9], np.uint8), In([6, 2, 2, 3], np.int8), const(1, np.uint8)],
        group=2,
        strides=[2, 2],
        pads=[1, 0, 1, 2],
    ),
    c("ConvInteger", 10, [In([1, 2, 9], np.uint8), In([3, 2, 3], np.uint8)], dilations=[2]),
    c("QLinearConv", 10, _q([1, 2, 8, 8], [2, 2, 3, 3]), auto_pad="SAME_UPPER", strides=[2, 3]),
    c("QLinearConv", 10, _q([1, 2, 4, 5, 6], [2, 2, 2, 2, 2]), auto_pad="VALID"),
    c("DFT", 17, [In([2, 5, 6, 2])], axis=-3, inverse=1),
    c("DFT", 17, [In([2, 7, 1]), const(10)], onesided=1),
    c("DFT", 19, [In([2, 5, 2]), const(4, np.int32)], onesided=1, inverse=1),
    c("DFT", 20, [In([2, 5, 6, 1]), const(3), const(1)]),
    c("DFT", 20, [In([4, 6, 1]), const(10), const(0)], onesided=1),
    c("DFT", 20, [In([2, 5, 6, 2]), None, const(1)], onesided=1, inverse=1),
    c("STFT", 17, [In([2, 32, 1]), const(8), In([16])]),
    c("STFT", 17, [In([2, 32, 2]), const(5), None, const(16)], onesided=0),
    c("HannWindow", 17, [const(10)], periodic=0, output_datatype=TP.DOUBLE),
    c("BlackmanWindow", 17, [const(5, np.int32)], output_datatype=TP.INT32),
    c("MelWeightMatrix", 17, [const(8), const(64), const(16000), const(0.0, F32), const(8000.0, F32)]),
    c("GridSample", 16, [In([2, 3, 5, 6]), In([2, 4, 7, 2])]),
    c("GridSample", 20, [In([2, 3, 4, 5, 6]), In([2, 2, 3, 4, 3])], mode="nearest"),
    c("AffineGrid", 20, [In([1, 3, 4]), const([1, 2, 3, 4, 5])], align_corners=1),
    c("Col2Im", 18, [In([2, 12, 9]), const([5, 6]), const([2, 3])], strides=[2, 2], pads=[1, 1, 1, 1]),
    c("Col2Im", 18, [In([1, 8, 16]), const([4, 4, 4]), const([2, 2, 2])], strides=[1, 2, 2], pads=[0, 0, 0, 1, 1, 1]),
    c("CenterCropPad", 18, [In([5, 6, 3]), const([3, 8])], axes=[0, 1]),
    c("RoiAlign", 16, [In([2, 3, 10, 12]), ROIS, const([0, 1, 1])], output_height=3, output_width=4),
    c("MaxRoiPool", 1, [In([2, 3, 10, 12]), ROIS5], pooled_shape=[2, 3]),
    c(
        "MaxUnpool",
        11,
        [In([1, 2, 3, 4]), const(np.zeros((1, 2, 3, 4)))],
        kernel_shape=[3, 2],
        strides=[2, 1],
        pads=[1, 0, 1, 0],
    ),
    c(
        "MaxUnpool",
        22,
        [In([1, 2, 3, 3]), const(np.zeros((1, 2, 3, 3))), const([1, 2, 7, 7])],
        kernel_shape=[2, 2],
        strides=[2, 2],
    ),
    c(
        "DeformConv",
        22,
        [In([2, 4, 7, 7]), In([6, 2, 2, 2]), In([2, 16, 4, 4]), In([6]), In([2, 8, 4, 4])],
        group=2,
        offset_group=2,
        strides=[2, 2],
        pads=[1, 1, 1, 1],
    ),
    c("DepthToSpace", 1, [In([2, 8, 3, 4])], blocksize=2),
    c("DepthToSpace", 28, [In([2, 8, 3, 4])], blocksize=2, mode="CRD"),
    c("SpaceToDepth", 13, [In([2, 3, 4, 6])], blocksize=2),
    c("SpaceToDepth", 28, [In([2, 3, 4, 6])], blocksize=2, mode="CRD"),
    c("BitCast", 26, [In([2, 3], np.float16)], to=TP.INT16),
]

# Operator versions onnxruntime does not implement, or behaviour only the reference shows.
REFERENCE_CASES: list[Case] = [
    c("RoiAlign", 22, [In([2, 3, 10, 12]), ROIS, const([0, 1, 1])], output_height=3, output_width=4),
    c("GridSample", 22, [In([2, 3, 6]), In([2, 4, 1])]),
    c("CenterCropPad", 18, [In([4, 5, 6]), const([2, 7, 6])]),
    c(
        "MaxUnpool",
        22,
        [In([1, 2, 3, 3]), const(np.zeros((1, 2, 3, 3))), const([2, 3, 7, 7])],
        kernel_shape=[2, 2],
        strides=[2, 2],
    ),
    c("STFT", 17, [In([2, 32, 1]), const(8)]),
    c("BitCast", 26, [In([2, 3], np.bool_)], to=TP.UINT8),
]


def _ids(cases: list[Case]) -> list[str]:
    return [f"{c[0]}-{c[4]}-{i}" for i, c in enumerate(cases)]


@pytest.mark.parametrize("case", ORT_CASES, ids=_ids(ORT_CASES))
def test_against_onnxruntime(case: Case) -> None:
    op, inputs, attrs, n_out, opset = case
    out = check_node(op, inputs, attrs, n_out=n_out, opset=opset)
    assert out.determined == out.dims, f"{op}: {out.symbolic} not fully determined"


def _reference_run(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    from onnx.reference import ReferenceEvaluator

    names = [o.name for o in model.graph.output]
    return dict(zip(names, ReferenceEvaluator(model).run(None, dict(feeds))))


@contextmanager
def _reference_runtime() -> Iterator[None]:
    saved = onenode.run
    onenode.run = _reference_run  # check_node runs whatever ``run`` its module holds
    try:
        yield
    finally:
        onenode.run = saved


@pytest.mark.parametrize("case", REFERENCE_CASES, ids=_ids(REFERENCE_CASES))
def test_against_reference(case: Case) -> None:
    op, inputs, attrs, n_out, opset = case
    with _reference_runtime():
        out = check_node(op, inputs, attrs, n_out=n_out, opset=opset)
    assert out.determined == out.dims, f"{op}: {out.symbolic} not fully determined"


@pytest.mark.parametrize("op", ["HannWindow", "HammingWindow", "BlackmanWindow"])
def test_window_contents(op: str) -> None:
    """Known window elements match onnxruntime's (small ones are left unknown)."""
    checked = 0
    for size in (1, 2, 7, 64, 1000):
        for periodic in (0, 1):
            for elem in (TP.FLOAT, TP.DOUBLE):
                node = helper.make_node(op, ["s"], ["y"], periodic=periodic, output_datatype=elem)
                init = numpy_helper.from_array(np.array(size, np.int64), "s")
                graph = helper.make_graph([node], "g", [], [onnx.ValueInfoProto(name="y")], [init])
                model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
                model.ir_version = 10
                real = run(model, {})["y"].tolist()
                known = infer.infer_model(model).value("y").known
                if known is None:
                    continue
                for i, (k, r) in enumerate(zip(known.elems, real)):
                    if k is not None:
                        checked += 1
                        assert np.isclose(r, k, rtol=1e-5), f"{op} size {size} periodic {periodic}: [{i}] {k} vs {r}"
    assert checked > 1000
