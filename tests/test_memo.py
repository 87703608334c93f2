"""The memo of rule results: a reuse gives what a fresh run would, checked against the reference."""

from __future__ import annotations

import math

import numpy as np
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import infer
from infer.core import dims as D


def _const(name: str, value: float) -> object:
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.array([value], np.float32)))


def test_zero_and_negative_zero_contents_are_not_confused() -> None:
    # 0.0 == -0.0 (and they hash alike), yet they are different values: nodes alike but for a
    # zero's sign must not share a memoized result. Each product appears three times, so that the
    # memo stores a result and reuses it.
    nodes = [_const("one", 1.0)]
    outputs = []
    for k, zero in enumerate([0.0, -0.0, 0.0, -0.0, -0.0, 0.0]):
        nodes += [_const(f"z{k}", zero), helper.make_node("Mul", ["one", f"z{k}"], [f"m{k}"])]
        outputs.append(f"m{k}")
    graph = helper.make_graph(
        nodes, "g", [], [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs]
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    result = infer.infer_model(model)
    expected = ReferenceEvaluator(model).run(None, {})
    for name, value in zip(outputs, expected):
        known = result.value(name).known
        assert known is not None, name
        (ours,), (theirs,) = known.elems, value.tolist()
        assert ours == theirs and math.copysign(1.0, ours) == math.copysign(1.0, theirs), name
    # And they print as they are, whichever was printed first.
    assert [D.to_str(e) for e in (0.0, -0.0, 0.0)] == ["0.0", "-0.0", "0.0"]
