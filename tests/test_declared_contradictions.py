"""Declared graph-output and value_info extents against what the operators compute (issue 27
item 6).

A declared integer inference refutes is a ``declared-type-clash``, and the inferred extent is
kept; one it cannot refute is adopted under a listed assumption, which ``verify`` respects.
Ground truth is onnxruntime.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import infer
from infer import dims as D
from infer.verify import check_run, verify
from tests.support.runtime import run

F = TensorProto.FLOAT


def _model(nodes, inputs, outputs, inits=(), value_info=()) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits), value_info=list(value_info))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _vi(name: str, dims) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, F, dims)


def _dims(tp: onnx.TypeProto) -> list:
    return [d.dim_param or d.dim_value for d in tp.tensor_type.shape.dim]


def _output(m: onnx.ModelProto, name: str) -> list:
    return next(_dims(o.type) for o in m.graph.output if o.name == name)


def _codes(r: infer.InferenceResult) -> set[tuple[str, str | None]]:
    return {(d.code, d.location.value) for d in r.diagnostics}


# -- declared integers (issue 27 item 6) ----------------------------------------------------------


def floor_minus_one(where: str) -> onnx.ModelProto:
    """``y`` is ``[1, 1, floor(N/20) - 1]`` (an AveragePool of window and stride 20, then a
    Slice from 1), declared ``[1, 1, 0]`` on the graph output or in ``value_info``; ``z`` is
    computed from it."""
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
        assert all(20 <= rc.bindings["N"] < 40 for rc in within.checked_runs)


def test_a_declared_integer_the_extent_cannot_take_is_a_contradiction() -> None:
    pads = numpy_helper.from_array(np.array([0, 3], np.int64), "pads")
    m = _model([helper.make_node("Pad", ["x", "pads"], ["b"])], [_vi("x", ["N"])], [_vi("b", [0])], [pads])
    r = infer.infer_model(m)
    assert ("declared-type-clash", "b") in _codes(r)
    assert not r.assumptions and D.to_str(r.shape_of("b")[0]) == "N + 3"
    rc = check_run(r, {"N": 4}, run(m, {"x": np.ones(4, np.float32)}))
    assert rc.ok and rc.claims
