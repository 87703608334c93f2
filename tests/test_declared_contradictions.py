"""Declared graph-output and value_info extents against what the operators compute (issue 26
item 2, issue 27 item 6).

A declaration inference refutes is a ``declared-type-clash``, and the inferred extent is kept and
written; a declared integer it cannot refute is adopted under a listed assumption, which
``verify`` respects; a declared name given to extents the inputs determine that inference can
prove neither equal nor different is a ``declared-name-unproven`` warning, and the drop-ins do not
write it over the other extent (docs/onnx-compat.md). Ground truth is onnxruntime.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import infer
from infer import onnx_compat, ort_compat
from infer.core import dims as D
from infer.out.verify import check_run, verify
from tests.support.runtime import run

F = TensorProto.FLOAT


def _model(nodes, inputs, outputs, inits=(), value_info=()) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits), value_info=list(value_info))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _vi(name: str, dims) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, F, dims)


def vocoder_like() -> onnx.ModelProto:
    """The shape of issue 26's vocoder: a strided Conv1d over ``samples``, squeezed, its output
    ``audio`` declared ``[S, S]`` as the TorchScript export names it, where the axes are
    ``batch`` and ``floor((samples - 3)/2) + 1``."""
    w = numpy_helper.from_array(np.full((1, 1, 3), 0.5, np.float32), "w")
    axes = numpy_helper.from_array(np.array([1], np.int64), "axes")
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], strides=[2]),
        helper.make_node("Squeeze", ["c", "axes"], ["audio"]),
    ]
    name = "Squeezeaudio_dim_0"
    return _model(nodes, [_vi("x", ["batch", 1, "samples"])], [_vi("audio", [name, name])], [w, axes])


def _dims(tp: onnx.TypeProto) -> list:
    return [d.dim_param or d.dim_value for d in tp.tensor_type.shape.dim]


def _output(m: onnx.ModelProto, name: str) -> list:
    return next(_dims(o.type) for o in m.graph.output if o.name == name)


def _codes(r: infer.InferenceResult) -> set[tuple[str, str | None]]:
    return {(d.code, d.location.value) for d in r.diagnostics}


# -- one name, two extents (issue 26 item 2) -------------------------------------------------------


def test_the_vocoder_declaration_is_false_at_run_time_and_is_reported() -> None:
    m = vocoder_like()
    observed = run(m, {"x": np.ones((2, 1, 1253), np.float32)})
    assert observed["audio"].shape == (2, 626)  # what the declaration equates differs
    r = infer.infer_model(m)
    assert ("declared-name-unproven", "audio") in _codes(r)
    assert not r.errors  # neither equal nor different is provable: no contradiction claimed
    assert check_run(r, {"batch": 2, "samples": 1253}, observed).ok
    a, b = r.shape_of("audio")
    assert a != b


def test_the_drop_ins_do_not_write_one_name_over_two_extents() -> None:
    m = vocoder_like()
    for out in (onnx_compat.infer_shapes(m), ort_compat.SymbolicShapeInference.infer_shapes(m)):
        first, second = _output(out, "audio")
        assert first != second and second != "Squeezeaudio_dim_0", (first, second)
        again = onnx_compat.infer_shapes(out)  # and what they wrote is a fixed point
        assert again.SerializeToString() == onnx_compat.infer_shapes(again).SerializeToString()


def test_one_name_for_provably_different_extents_is_a_contradiction() -> None:
    pads = numpy_helper.from_array(np.array([0, 3], np.int64), "pads")
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Pad", ["x", "pads"], ["b"])]
    m = _model(nodes, [_vi("x", ["N"])], [_vi("a", ["D"]), _vi("b", ["D"])], [pads])
    observed = run(m, {"x": np.ones(4, np.float32)})
    assert (observed["a"].shape, observed["b"].shape) == ((4,), (7,))
    r = infer.infer_model(m)
    assert ("declared-type-clash", "b") in _codes(r)
    assert [D.to_str(d) for d in (*r.shape_of("a"), *r.shape_of("b"))] == ["N", "N + 3"]  # both kept
    out = onnx_compat.infer_shapes(m)
    assert _output(out, "a") == ["D"] and _output(out, "b") != ["D"]


def test_a_graph_input_variable_is_not_written_over_another_inputs_extent() -> None:
    m = _model([helper.make_node("Relu", ["z"], ["y"])], [_vi("x", ["N"]), _vi("z", ["M"])], [_vi("y", ["N"])])
    r = infer.infer_model(m)
    assert ("declared-name-unproven", "y") in _codes(r)
    for out in (onnx_compat.infer_shapes(m), ort_compat.SymbolicShapeInference.infer_shapes(m)):
        assert _output(out, "y") == ["M"]


def test_one_name_on_two_unknown_extents_does_not_equate_them() -> None:
    nodes = [
        helper.make_node("NonZero", ["x"], ["a"]),
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("NonZero", ["r"], ["b"]),
    ]
    i64 = [helper.make_tensor_value_info(n, TensorProto.INT64, [1, "K"]) for n in ("a", "b")]
    m = _model(nodes, [_vi("x", ["N"])], i64)
    observed = run(m, {"x": np.array([1.0, -2.0, 3.0, -4.0, 0.0], np.float32)})
    assert (observed["a"].shape, observed["b"].shape) == ((1, 4), (1, 2))
    r = infer.infer_model(m)
    assert r.shape_of("a")[1] != r.shape_of("b")[1]
    assert check_run(r, {"N": 5}, observed).ok
    out = onnx_compat.infer_shapes(m)
    assert _output(out, "a") == [1, "K"] and _output(out, "b")[1] != "K"


def test_a_name_is_not_adopted_where_the_inferred_rank_is_unknown_either() -> None:
    """``c`` has the rank of ``a``'s count (unknown): its declared ``K`` is not taken for the
    count either (the oracle, seed 103832)."""
    axes = numpy_helper.from_array(np.array([0], np.int64), "axes")
    nodes = [
        helper.make_node("NonZero", ["x"], ["a"]),
        helper.make_node("Squeeze", ["a", "axes"], ["s"]),
        helper.make_node("ConstantOfShape", ["s"], ["c"]),
    ]
    outputs = [helper.make_tensor_value_info("a", TensorProto.INT64, [1, "K"]), _vi("c", ["K"])]
    m = _model(nodes, [_vi("x", ["N"])], outputs, [axes])
    observed = run(m, {"x": np.array([0.0, 0.0, 5.0, 0.0], np.float32)})
    assert (observed["a"].shape, observed["c"].shape) == ((1, 1), (2,))
    r = infer.infer_model(m)
    assert check_run(r, {"N": 4}, observed).ok
    # nor is a graph input's variable, which nothing entails there
    m.graph.output[1].CopyFrom(_vi("c", ["N"]))
    r = infer.infer_model(m)
    assert r.shape_of("c") == (None,) and check_run(r, {"N": 4}, observed).ok


# -- declared integers (issue 27 item 6) ----------------------------------------------------------


def floor_minus_one(where: str) -> onnx.ModelProto:
    """``y`` is ``[1, 1, max(floor(N/20) - 1, 0)]`` (an AveragePool of window and stride 20, which
    onnxruntime runs short of the window as one, then a Slice from 1), declared ``[1, 1, 0]`` on
    the graph output or in ``value_info``; ``z`` is computed from it."""
    inits = [numpy_helper.from_array(np.array([v], np.int64), n) for n, v in (("s", 1), ("e", 1 << 20), ("a", 2))]
    nodes = [
        helper.make_node("AveragePool", ["x"], ["p"], kernel_shape=[20], strides=[20]),
        helper.make_node("Slice", ["p", "s", "e", "a"], ["y"]),
        helper.make_node("Relu", ["y"], ["z"]),
    ]
    declared = _vi("y", [1, 1, 0])
    outputs = [declared, _vi("z", [1, 1, "Z"])] if where == "output" else [_vi("z", [1, 1, "Z"])]
    return _model(nodes, [_vi("x", [1, 1, "N"])], outputs, inits, [] if where == "output" else [declared])


def test_an_adopted_declared_integer_is_a_listed_assumption() -> None:
    for where in ("output", "value_info"):
        r = infer.infer_model(floor_minus_one(where))
        assert r.shape_of("y") == (1, 1, 0) and r.shape_of("z") == (1, 1, 0)
        listed = [a for a in r.assumptions if "`y` is declared 0" in str(a)]
        assert len(listed) == 1, r.assumptions
        assert [listed[0].holds({"N": n}) for n in (25, 45)] == [True, False]


def test_verify_binds_no_run_the_adopted_declaration_excludes() -> None:
    for where in ("output", "value_info"):
        r = infer.infer_model(floor_minus_one(where))
        at_45 = verify(r, samples=1, bind={"N": 45})
        assert not any(rc.contradictions for rc in at_45.runs), at_45.runs
        assert not at_45.checked_runs and at_45.error is not None
        within = verify(r, samples=2)
        assert within.checked_runs and all(rc.ok for rc in within.runs), within.runs
        assert all(1 <= rc.bindings["N"] < 40 for rc in within.checked_runs)


def test_a_declared_integer_the_extent_cannot_take_is_a_contradiction() -> None:
    pads = numpy_helper.from_array(np.array([0, 3], np.int64), "pads")
    m = _model([helper.make_node("Pad", ["x", "pads"], ["b"])], [_vi("x", ["N"])], [_vi("b", [0])], [pads])
    r = infer.infer_model(m)
    assert ("declared-type-clash", "b") in _codes(r)
    assert not r.assumptions and D.to_str(r.shape_of("b")[0]) == "N + 3"
    rc = check_run(r, {"N": 4}, run(m, {"x": np.ones(4, np.float32)}))
    assert rc.ok and rc.claims


def test_an_input_variable_is_positive_wherever_it_is_met_first() -> None:
    """``S`` is declared on the input and on an output also listed in ``value_info`` (as
    ``ort_compat`` writes its models), which is read first: it stays a positive variable, so the
    Reshape's -1 beside it is still resolved (a fixed point of ``ort_compat`` on BERT)."""
    consts = [
        numpy_helper.from_array(np.array(v, np.int64), n) for n, v in (("one", [1]), ("two", [2]), ("ends", [-1, 16]))
    ]
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Slice", ["shape", "one", "two"], ["s"]),
        helper.make_node("Concat", ["ends", "s"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["y"]),
    ]
    plain = _model(nodes, [_vi("x", ["B", "S", 32])], [_vi("y", [None, 16, "S"])], consts)
    twice = _model(nodes, [_vi("x", ["B", "S", 32])], [_vi("y", [None, 16, "S"])], consts, [_vi("y", [None, 16, "S"])])
    for m in (plain, twice):
        assert [D.to_str(d) for d in infer.infer_model(m).shape_of("y")] == ["2*B", "16", "S"]
