"""Pad's copying modes in the domain, against onnxruntime (issue 24's campaign found them: an
upsampling model refused at small heights with a domain that said nothing).

onnxruntime pads by ``edge``, ``reflect`` or ``wrap`` only where the axis, after the negative
pads' slicing, holds an element to copy (``wrap`` even with no pad), and reflects only by less
than that many elements; the definition asks neither of a reflection. The domain states these as
onnxruntime's requirements; a concrete axis that breaks one gets a ``runtime-refuses`` warning.
Each case is swept over extents 1 to 4: the domain holds a binding exactly when onnxruntime runs
it, and the inferred extent is the one it computes.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import infer
from infer.core import dims as D

PADS = [[0, 1, 0, 0], [0, 0, 0, 2], [0, 2, 0, 2], [0, 3, 0, 0], [0, -1, 0, 1], [0, 0, 0, 0]]


def _model(mode: str, pads: list[int], n: int | str) -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("Pad", ["x", "p"], ["y"], mode=mode)],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, n])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array(pads, np.int64), "p")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])


def _ort(model: onnx.ModelProto, n: int) -> tuple[int, ...] | None:
    so = ort.SessionOptions()
    so.log_severity_level = 4
    session = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    try:
        return tuple(session.run(None, {"x": np.ones((2, n), np.float32)})[0].shape)
    except Exception:
        return None


@pytest.mark.parametrize("mode", ["edge", "reflect", "wrap", "constant"])
@pytest.mark.parametrize("pads", PADS, ids=lambda p: "_".join(map(str, p)))
def test_the_domain_holds_a_binding_exactly_where_onnxruntime_pads(mode: str, pads: list[int]) -> None:
    model = _model(mode, pads, "n")
    result = infer.infer_model(model)
    (extent,) = result.shape_of("y")[1:]
    for n in range(1, 5):
        shape = _ort(model, n)
        assert result.domain.contains({"n": n}) is (shape is not None), (n, shape, str(result.domain))
        if shape is not None:
            assert D.evaluate(extent, {"n": n}) == shape[1]


@pytest.mark.parametrize("mode", ["reflect", "edge"])
def test_a_concrete_axis_onnxruntime_cannot_pad_is_a_warning(mode: str) -> None:
    model = _model(mode, [0, 2, 0, 2], 2 if mode == "reflect" else 1)
    result = infer.infer_model(model)
    refused = [d for d in result.diagnostics if d.code == "runtime-refuses"]
    assert (_ort(model, 2 if mode == "reflect" else 1) is None) is bool(refused)
    assert result.shape_of("y") is not None  # the definition's shape all the same
