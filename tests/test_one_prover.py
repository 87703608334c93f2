"""Rules compare extents through their context, which answers from what the run learned (issue 37).

A Conv with a 3x3 kernel and no pads requires its spatial extents to be at least 3; a comparison,
Min, Max or Where of those extents downstream is then decided, where the syntax of ``H`` alone
(at least 1) leaves it open. Each claim is checked against onnxruntime at several bindings.
"""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper as h

import infer

COMPARE = ("Less", "Greater", "Equal", "LessOrEqual", "GreaterOrEqual", "Max", "Min")


def _model(op: str, constant: int, before: bool = False):
    """``op(Shape(x)[2], constant)`` beside a 3x3 Conv of ``x``, the Conv first unless ``before``."""
    conv = h.make_node("Conv", ["x", "w"], ["y"])
    rest = [
        h.make_node("Shape", ["x"], ["s"]),
        h.make_node("Gather", ["s", "i2"], ["hh"]),
        h.make_node(op, ["hh", "c"], ["out"]),
        h.make_node("Where", ["cond", "hh", "hh2"], ["picked"]),
        h.make_node("Max", ["hh", "three"], ["hh2"]),
    ]
    nodes = [*rest, conv] if before else [conv, *rest]
    inits = [
        h.make_tensor("w", TP.FLOAT, [4, 2, 3, 3], np.zeros(72, np.float32)),
        h.make_tensor("i2", TP.INT64, [], [2]),
        h.make_tensor("c", TP.INT64, [], [constant]),
        h.make_tensor("three", TP.INT64, [], [3]),
    ]
    inputs = [
        h.make_tensor_value_info("x", TP.FLOAT, ["N", 2, "H", "W"]),
        h.make_tensor_value_info("cond", TP.BOOL, []),
    ]
    outputs = [h.make_tensor_value_info(n, TP.UNDEFINED, None) for n in ("y", "out", "picked")]
    graph = h.make_graph(nodes, "g", inputs, outputs, inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _contents(result: infer.InferenceResult, name: str) -> object:
    known = result.graphs["main"].values[name].known
    return None if known is None else known.elems[0]


@pytest.mark.parametrize("op", COMPARE)
def test_what_a_conv_requires_decides_a_comparison_downstream(op):
    result = infer.infer_model(_model(op, 2))
    expected = {"Less": False, "Greater": True, "Equal": False, "LessOrEqual": False, "GreaterOrEqual": True}
    got = _contents(result, "out")
    if op in expected:
        assert got is expected[op], got
    else:
        assert str(got) == ("H" if op == "Max" else "2"), got
    # Where with an unknown condition: both branches are H once H >= 3 is known (Max(H, 3) is H)
    assert str(_contents(result, "picked")) == "H"


def test_the_syntax_alone_leaves_it_open_before_the_conv_is_walked():
    """Nothing is claimed from a fact the run learns only later in its order."""
    result = infer.infer_model(_model("Less", 2, before=True))
    assert _contents(result, "out") is None


@pytest.mark.parametrize("op", COMPARE)
@pytest.mark.parametrize("constant", [2, 3, 4])
def test_every_claim_holds_in_onnxruntime(op, constant):
    pytest.importorskip("onnxruntime")
    report = infer.infer_model(_model(op, constant)).verify(samples=4)
    assert report.ok and not report.failed, report.summary()
