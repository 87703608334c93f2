"""The library contract of DESIGN.md: infer_model, the result object, the dimension table."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
import sympy
from onnx import TensorProto, helper, numpy_helper

import infer
from infer.core import dims as D

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "bert_tiny.onnx"
F, I64 = TensorProto.FLOAT, TensorProto.INT64


def model(nodes, inputs, outputs, inits=(), opset=18, functions=(), value_info=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits), value_info=list(value_info))
    m = helper.make_model(
        g, opset_imports=[helper.make_opsetid("", opset), helper.make_opsetid("local", 1)], functions=list(functions)
    )
    return m


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def test_accepts_path_bytes_and_proto_without_modifying_it():
    proto = onnx.load(EXAMPLE)
    before = proto.SerializeToString()
    for src in (EXAMPLE, str(EXAMPLE), before, proto):
        r = infer.infer_model(src)
        assert r.shape_of("last_hidden_state") == (D.symbol("batch"), D.symbol("sequence"), 32)
    assert proto.SerializeToString() == before
    assert len(r.model.graph.value_info) > 200 and not proto.graph.value_info


def test_shapes_are_expressions_a_compiler_can_evaluate():
    m = model(
        [
            helper.make_node("Concat", ["a", "b"], ["c"], axis=1),
            helper.make_node("Conv", ["img", "w"], ["y"], strides=[2, 2]),
        ],
        [vi("a", F, ["batch", "seq"]), vi("b", F, ["batch", 5]), vi("img", F, [1, 3, "h", "w"])],
        [vi("c", F, None), vi("y", F, None)],
        [numpy_helper.from_array(np.zeros((8, 3, 3, 3), np.float32), "w")],
    )
    r = infer.infer_model(m)
    _, seq = r.shape_of("c")
    assert isinstance(seq, D.Expr) and D.to_str(seq) == "seq + 5" and str(seq) == "seq + 5"
    assert D.evaluate(seq, {"seq": 7}) == 12
    as_sympy = D.to_sympy(seq)  # sympy only where a caller asks for it
    assert isinstance(as_sympy, sympy.Expr) and as_sympy.subs({s: 7 for s in as_sympy.free_symbols}) == 12
    h = r.shape_of("y")[2]
    assert D.evaluate(h, {"h": 11}) == (11 - 3) // 2 + 1
    assert {v.name for v in r.dims} >= {"batch", "seq", "h", "w"}


def test_broadcasting_two_variables_records_the_assumption():
    m = model([helper.make_node("Add", ["a", "b"], ["c"])], [vi("a", F, ["N"]), vi("b", F, ["M"])], [vi("c", F, None)])
    r = infer.infer_model(m)
    assert D.to_str(r.shape_of("c")[0]) == "max(M, N)"
    assert any(f.kind == "assumption" and set(f.names) == {"M", "N"} for f in r.dims.facts)


def test_unknown_dims_are_fresh_variables_with_origin_and_explanation():
    m = model(
        [helper.make_node("NonZero", ["x"], ["nz"]), helper.make_node("Reshape", ["x", "p"], ["y"], name="n12")],
        [vi("x", F, ["N", 6]), vi("p", I64, [2])],
        [vi("y", F, None), vi("nz", I64, None)],
    )
    r = infer.infer_model(m)
    y = r.shape_of("y")
    assert len(y) == 2 and all(r.dims.is_fresh(d) for d in y)
    var = r.dims.get(D.variable_name(y[0]))
    assert var.origin.site.node_name == "n12" and "`p`" in var.origin.reason
    text = str(r.explain("y"))
    assert "Reshape" in text and "`p` is an input of the model" in text


def test_bindings_specialize_variables():
    r = infer.infer_model(EXAMPLE, dims={"batch": 2, "sequence": 7})
    assert r.shape_of("last_hidden_state") == (2, 7, 32)
    assert r.summary().counts.get("symbolic", 0) == 0


def test_declared_value_info_refines_and_contradictions_are_reported():
    m = model(
        [helper.make_node("Relu", ["x"], ["y"], name="r"), helper.make_node("Relu", ["y"], ["z"])],
        [vi("x", F, ["N", 3])],
        [vi("z", F, [7, 3])],
        value_info=[vi("y", F, ["N", 4])],
    )
    r = infer.infer_model(m)
    codes = [(d.code, d.location.value) for d in r.diagnostics]
    assert ("declared-type-clash", "y") in codes
    assert r.shape_of("z") == (7, 3)  # the declared output extent 7 for N is kept
    # ... under a listed assumption, never as a silent fact (issue 27)
    assert [str(a).split(" (")[0] for a in r.assumptions] == ["N == 7"]


def test_if_with_unknown_condition_joins_the_branches():
    then = helper.make_graph([helper.make_node("Identity", ["a"], ["t"])], "then", [], [vi("t", F, None)])
    other = helper.make_graph([helper.make_node("Identity", ["b"], ["e"])], "else", [], [vi("e", F, None)])
    m = model(
        [helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)],
        [vi("c", TensorProto.BOOL, []), vi("a", F, ["N", 3]), vi("b", F, ["N", 4])],
        [vi("y", F, None)],
    )
    r = infer.infer_model(m)
    y = r.shape_of("y")
    assert y[0] == D.symbol("N") and r.dims.is_fresh(y[1])
    assert r.type_of("t", graph="main/0:then_branch") == infer.TensorType(F, (D.symbol("N"), 3))
    sub = r.model.graph.node[0].attribute[0].g
    assert sub.output[0].type.tensor_type.shape.dim[1].dim_value in (3, 4)


def test_model_local_function_is_inferred_through_its_body():
    fn = helper.make_function(
        "local",
        "AddRelu",
        ["a", "b"],
        ["y"],
        [helper.make_node("Add", ["a", "b"], ["s"]), helper.make_node("Relu", ["s"], ["y"])],
        [helper.make_opsetid("", 18)],
    )
    m = model(
        [helper.make_node("AddRelu", ["x", "z"], ["y"], domain="local")],
        [vi("x", F, ["N", 1]), vi("z", F, [1, 4])],
        [vi("y", F, None)],
        functions=[fn],
    )
    r = infer.infer_model(m)
    assert r.shape_of("y") == (D.symbol("N"), 4)


def test_structural_problems_are_diagnostics_not_exceptions():
    m = model(
        [helper.make_node("Relu", ["missing"], ["y"]), helper.make_node("Frobnicate", ["y"], ["z"])],
        [vi("x", F, [2])],
        [vi("z", F, None)],
    )
    r = infer.infer_model(m)
    codes = {d.code for d in r.diagnostics}
    assert {"undefined-value", "unknown-operator"} <= codes


def test_nodes_out_of_order_are_sorted():
    m = model(
        [helper.make_node("Relu", ["y"], ["z"]), helper.make_node("Relu", ["x"], ["y"])],
        [vi("x", F, ["N"])],
        [vi("z", F, None)],
    )
    r = infer.infer_model(m)
    assert r.shape_of("z") == (D.symbol("N"),)
    assert "not-topological" in {d.code for d in r.diagnostics}


def test_cycles_are_reported():
    m = model(
        [helper.make_node("Add", ["x", "b"], ["a"]), helper.make_node("Relu", ["a"], ["b"])],
        [vi("x", F, [2])],
        [vi("b", F, None)],
    )
    r = infer.infer_model(m)
    assert "cycle" in {d.code for d in r.diagnostics}


def test_load_errors_are_model_load_errors(tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x00\x01garbage")
    with pytest.raises(infer.ModelLoadError):
        infer.infer_model(bad)
    with pytest.raises(infer.ModelLoadError):
        infer.infer_model(tmp_path / "missing.onnx")


def test_results_are_deterministic():
    a = infer.infer_model(EXAMPLE).model.SerializeToString()
    b = infer.infer_model(EXAMPLE).model.SerializeToString()
    assert a == b


def test_infer_node():
    out = infer.infer_node("Conv", ["float[N,3,H,W]", "float[8,3,3,3]"], {"pads": [1, 1, 1, 1]})
    assert str(out) == "float[N,8,H,W]"


def test_a_binding_that_contradicts_the_model_is_named():
    r = infer.infer_model(EXAMPLE, dims={"sequence": 100})  # the position table holds 64
    clash = [d for d in r.diagnostics if d.code == "binding-clash"]
    assert clash and "sequence=100" in clash[0].message and clash[0].location.node_name
    assert not [d for d in infer.infer_model(EXAMPLE, dims={"sequence": 10}).diagnostics if d.severity == "error"]


def test_the_collector_is_restored_and_a_programs_frozen_objects_stay_frozen() -> None:
    import gc

    model = onnx.load(EXAMPLE)
    assert gc.isenabled()
    infer.infer_model(model)
    assert gc.isenabled() and gc.get_freeze_count() == 0  # moved to the oldest generation, not frozen
    gc.disable()
    try:
        infer.infer_model(model)
        assert not gc.isenabled()  # left as the caller had it
    finally:
        gc.enable()
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        infer.infer_model(model)
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()


def test_a_small_run_owes_no_full_collection() -> None:
    """A run of few objects leaves them to Python's young collections: nothing is added to the
    account of moved objects that makes a full collection (a third of a one-node call's time)."""
    from infer.walk import engine, reuse

    node = onnx.helper.make_node("Relu", ["x"], ["y"])
    x = onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["N", 3])
    y = onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)
    small = onnx.helper.make_model(onnx.helper.make_graph([node], "g", [x], [y]))
    with reuse.disabled():
        infer.infer_model(small)
        before = engine._Moved.pending
        for _ in range(20):
            infer.infer_model(small)
        assert engine._Moved.pending == before
