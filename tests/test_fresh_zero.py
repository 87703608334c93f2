"""Fresh extents (data-dependent counts) may be 0 at run time; claims over them must hold there.

Each model computes a count with NonZero (0, 1 or more at run time, chosen by the input's
values), then uses it as the engine would: in Min/Max, comparisons, Cast to bool, Reshape
targets, Slice extents. Checked in onnxruntime with inputs that make the count 0, 1 and 5.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as h

import infer
from tests.support.runtime import check, expose_all, run


def _count_model(tail: list, extra_inits: list = (), out_elem: int = TP.INT64) -> onnx.ModelProto:
    """``c`` = the number of non-zero elements of ``x`` (an int64 scalar), then ``tail``."""
    nodes = [
        h.make_node("NonZero", ["x"], ["nz"]),
        h.make_node("Shape", ["nz"], ["s"]),
        h.make_node("Gather", ["s", "one"], ["c"], axis=0),
        *tail,
    ]
    inits = [h.make_tensor("one", TP.INT64, [], [1]), h.make_tensor("zero1", TP.INT64, [1], [0]), *extra_inits]
    g = h.make_graph(
        nodes,
        "g",
        [h.make_tensor_value_info("x", TP.FLOAT, [8])],
        [h.make_tensor_value_info("y", out_elem, None)],
        inits,
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 18)], ir_version=8)


def _runs(model: onnx.ModelProto, counts: tuple[int, ...] = (0, 1, 5)) -> list:
    exposed = expose_all(model)
    out = []
    for count in counts:
        x = np.zeros(8, np.float32)
        x[:count] = 1.0
        out.append(({}, run(exposed, {"x": x})))
    return out


def _sound(model: onnx.ModelProto) -> infer.InferenceResult:
    result = infer.infer_model(model)
    verdict = check(result, _runs(model))
    assert not verdict.wrong, verdict.wrong
    return result


CASES = {
    "max-with-1": [h.make_node("Max", ["c", "one"], ["y"])],
    "min-with-1": [h.make_node("Min", ["c", "one"], ["y"])],
    "greater-than-0": [h.make_node("Greater", ["c", "zero"], ["y"])],
    "equal-0": [h.make_node("Equal", ["c", "zero"], ["y"])],
    "cast-to-bool": [h.make_node("Cast", ["c"], ["y"], to=TP.BOOL)],
    "abs": [h.make_node("Abs", ["c"], ["y"])],
    "sign": [h.make_node("Sign", ["c"], ["y"])],
    "reduce-min": [
        h.make_node("Unsqueeze", ["c", "zero1"], ["c1"]),
        h.make_node("Concat", ["c1", "one1"], ["v"], axis=0),
        h.make_node("ReduceMin", ["v"], ["y"], keepdims=0),
    ],
    "reduce-max": [
        h.make_node("Unsqueeze", ["c", "zero1"], ["c1"]),
        h.make_node("Concat", ["c1", "one1"], ["v"], axis=0),
        h.make_node("ReduceMax", ["v"], ["y"], keepdims=0),
    ],
    "div-by-count": [h.make_node("Max", ["c", "one"], ["c_pos"]), h.make_node("Div", ["c", "c_pos"], ["y"])],
    "sub-then-div": [h.make_node("Sub", ["c", "three"], ["d"]), h.make_node("Div", ["d", "two"], ["y"])],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_fresh_count_may_be_zero(name):
    inits = [
        h.make_tensor("zero", TP.INT64, [], [0]),
        h.make_tensor("one1", TP.INT64, [1], [1]),
        h.make_tensor("two", TP.INT64, [], [2]),
        h.make_tensor("three", TP.INT64, [], [3]),
    ]
    out_elem = TP.BOOL if name in ("greater-than-0", "equal-0", "cast-to-bool") else TP.INT64
    _sound(_count_model(CASES[name], inits, out_elem))


def test_reshape_to_a_count_that_may_be_zero():
    """Reshape(zeros[c, 4], [c, -1]) with allowzero=0."""
    tail = [
        h.make_node("Unsqueeze", ["c", "zero1"], ["c1"]),
        h.make_node("Concat", ["c1", "four"], ["shape"], axis=0),
        h.make_node("ConstantOfShape", ["shape"], ["z"]),
        h.make_node("Concat", ["c1", "minus1"], ["target"], axis=0),
        h.make_node("Reshape", ["z", "target"], ["y"]),
    ]
    inits = [h.make_tensor("four", TP.INT64, [1], [4]), h.make_tensor("minus1", TP.INT64, [1], [-1])]
    model = _count_model(tail, inits, TP.FLOAT)
    result = infer.infer_model(model)
    verdict = check(result, _runs(model, (1, 5)))  # [0, -1] of no elements is ill-formed
    assert not verdict.wrong, verdict.wrong


def test_reshape_with_a_copied_zero_entry():
    """target [u, 8] where u is 0 at run time copies the input's first extent (2)."""
    tail = [
        h.make_node("Unsqueeze", ["c", "zero1"], ["c1"]),
        h.make_node("Concat", ["c1", "eight"], ["target"], axis=0),
        h.make_node("Reshape", ["data", "target"], ["y"]),
    ]
    inits = [h.make_tensor("eight", TP.INT64, [1], [8]), h.make_tensor("data", TP.INT64, [1, 8], list(range(8)))]
    model = _count_model(tail, inits)
    result = infer.infer_model(model)
    exposed = expose_all(model)
    x = np.zeros(8, np.float32)
    runs = [({}, run(exposed, {"x": x}))]  # count 0: the target [0, 8] copies extent 1
    x[0] = 1.0
    runs.append(({}, run(exposed, {"x": x})))  # count 1: [1, 8]
    verdict = check(result, runs)
    assert not verdict.wrong, verdict.wrong
    assert result.shape_of("y")[1] == 8


EMPTY_SLICE_RESHAPE = """
<ir_version: 8, opset_import: ["" : 18]>
g (float[n,1,n] x) => (float[] y) {
  starts = Constant <value = int64[2] {-1, 0}> ()
  ends = Constant <value = int64[2] {0, -1}> ()
  axes = Constant <value = int64[2] {0, -1}> ()
  s = Slice (x, starts, ends, axes)
  shape = Shape (s)
  two = Constant <value_int = 2> ()
  last = Gather (shape, two)
  zero = Constant <value = int64[1] {0}> ()
  last1 = Unsqueeze (last, zero)
  target = Concat <axis = 0> (zero, last1)
  y = Reshape (s, target)
}
"""


@pytest.mark.parametrize("n", [1, 2, 5])
def test_reshape_of_no_elements_by_an_entry_that_may_be_zero(n):
    """From the oracle (seed 1046226): Reshape(s[0, 1, n - 1], [0, n - 1]). At n = 1 the entry
    n - 1 is 0 and copies extent 1, so y is [0, 1]: the element count, 0, fixes no entry."""
    model = onnx.parser.parse_model(EMPTY_SLICE_RESHAPE)
    result = infer.infer_model(model)
    x = np.zeros((n, 1, n), np.float32)
    verdict = check(result, [({"n": n}, run(expose_all(model), {"x": x}))])
    assert not verdict.wrong, verdict.wrong


ALLOWZERO_EMPTY = """
<ir_version: 8, opset_import: ["" : 18]>
g (float[S,S,H] x) => (float[] y) <int64[3] starts = {3, 4, 4}> {
  ends = Constant <value = int64[3] {-4, -5, -3}> ()
  axes = Constant <value = int64[3] {1, 2, 0}> ()
  steps = Constant <value = int64[3] {3, 2, 1}> ()
  s = Slice (x, starts, ends, axes, steps)
  shape = Shape (s)
  i0 = Constant <value = int64[1] {0}> ()
  d0 = Gather <axis = 0> (shape, i0)
  i2 = Constant <value = int64[1] {2}> ()
  d2 = Gather <axis = 0> (shape, i2)
  minus1 = Constant <value = int64[1] {-1}> ()
  target = Concat <axis = 0> (d0, d2, minus1)
  y = Reshape <allowzero = 1> (s, target)
}
"""


@pytest.mark.parametrize("bindings", [{"S": 1, "H": 1}, {"S": 2, "H": 3}, {"S": 5, "H": 8}, {"S": 8, "H": 6}])
def test_reshape_with_allowzero_where_an_entry_may_be_zero_beside_minus_one(bindings):
    """From an independent generator: with allowzero=1, a target of [0, 0, -1] (computed, so its
    zeros are not known) gives onnxruntime a 1 for the -1 (the definition calls 0 beside -1
    invalid); the quotient of the element counts was claimed, 0 at S = H = 1."""
    model = onnx.parser.parse_model(ALLOWZERO_EMPTY)
    x = np.zeros((bindings["S"], bindings["S"], bindings["H"]), np.float32)
    verdict = check(infer.infer_model(model), [(bindings, run(expose_all(model), {"x": x}))])
    assert not verdict.wrong, verdict.wrong


def test_reshape_with_allowzero_cancels_an_extent_input_and_target_share():
    """Reshape(zeros[c, 64], [c, -1, 16]) with allowzero=1, c a count that may be 0: onnxruntime
    divides the non-zero extents (64 by 16), so the -1 is 4 at every count, 0 included (dynamo
    exports write allowzero=1 on every Reshape of an attention head split)."""
    tail = [
        h.make_node("Unsqueeze", ["c", "zero1"], ["c1"]),
        h.make_node("Concat", ["c1", "sixty_four"], ["shape"], axis=0),
        h.make_node("ConstantOfShape", ["shape"], ["z"]),
        h.make_node("Concat", ["c1", "minus1", "sixteen"], ["target"], axis=0),
        h.make_node("Reshape", ["z", "target"], ["y"], allowzero=1),
    ]
    inits = [
        h.make_tensor("sixty_four", TP.INT64, [1], [64]),
        h.make_tensor("minus1", TP.INT64, [1], [-1]),
        h.make_tensor("sixteen", TP.INT64, [1], [16]),
    ]
    model = _count_model(tail, inits, TP.FLOAT)
    result = infer.infer_model(model)
    runs = _runs(model, (0, 1, 5))
    assert [r["y"].shape[1] for _, r in runs] == [4, 4, 4]
    verdict = check(result, runs)
    assert not verdict.wrong, verdict.wrong
    assert result.shape_of("y")[1:] == (4, 16)
