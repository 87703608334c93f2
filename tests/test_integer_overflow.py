"""Known contents computed past their element type's range are unknown, with a warning.

Arithmetic on known contents is exact; onnxruntime computes in the element type and wraps. An
element outside the type's range is therefore not claimed (Clause 9.4), and ``check`` warns.
"""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper, numpy_helper
from onnx.shape_inference import InferenceError

import infer
from infer import onnx_compat
from tests.support.runtime import run

INT64_MAX, INT64_MIN = (1 << 63) - 1, -(1 << 63)
INT32_MAX = (1 << 31) - 1


def _model() -> object:
    inits = [
        numpy_helper.from_array(np.array([INT64_MAX, 5], np.int64), "big"),
        numpy_helper.from_array(np.array([INT64_MIN, 5], np.int64), "small"),
        numpy_helper.from_array(np.array([1, 1], np.int64), "one"),
        numpy_helper.from_array(np.array([INT32_MAX, 7], np.int32), "big32"),
        numpy_helper.from_array(np.array([1, 1], np.int32), "one32"),
    ]
    nodes = [
        helper.make_node("Add", ["big", "one"], ["sum"], name="add64"),
        helper.make_node("Sub", ["small", "one"], ["diff"], name="sub64"),
        helper.make_node("Mul", ["big", "big"], ["square"], name="mul64"),
        helper.make_node("Add", ["big32", "one32"], ["sum32"], name="add32"),
    ]
    outs = [helper.make_tensor_value_info(n, t, [2]) for n, t in (("sum", 7), ("diff", 7), ("square", 7), ("sum32", 6))]
    graph = helper.make_graph(nodes, "overflow", [], outs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_overflowed_elements_are_unknown_and_in_range_ones_known() -> None:
    model = _model()
    result = infer.infer_model(model)
    observed = run(model, {})
    assert result.value("sum").known.elems == (None, 6)
    assert result.value("diff").known.elems == (None, 4)
    assert result.value("square").known.elems == (None, 25)
    assert result.value("sum32").known.elems == (None, 8)
    # What the runtime computes: the wrapped value where we claim nothing, ours elsewhere.
    assert observed["sum"].tolist() == [INT64_MIN, 6]
    assert observed["diff"].tolist() == [INT64_MAX, 4]
    assert observed["sum32"].tolist() == [-(1 << 31), 8]
    for name in ("sum", "diff", "square", "sum32"):
        for mine, real in zip(result.value(name).known.elems, observed[name].tolist()):
            assert mine is None or mine == real


def test_each_overflow_is_a_warning_at_its_node_and_value() -> None:
    result = infer.infer_model(_model())
    found = [
        (d.severity, d.location.node_name, d.location.value) for d in result.diagnostics if d.code == "integer-overflow"
    ]
    assert found == [
        ("warning", "add64", "sum"),
        ("warning", "sub64", "diff"),
        ("warning", "mul64", "square"),
        ("warning", "add32", "sum32"),
    ]
    assert "9223372036854775808" in next(d.message for d in result.diagnostics if d.code == "integer-overflow")
    assert not result.errors


def test_drop_in_fails_strict_mode_on_overflow_as_onnx_does() -> None:
    model = _model()
    with pytest.raises(InferenceError, match="integer-overflow"):
        onnx_compat.infer_shapes(model, strict_mode=True, data_prop=True)
    onnx_compat.infer_shapes(model, data_prop=True)  # not strict: no error
