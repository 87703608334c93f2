"""Faults found by comparing ``check`` with onnx's checker, each beside a valid twin.

Every fault is one onnxruntime refuses (checked here) or one the specification forbids; every
twin is a model that onnxruntime runs, and must get no error.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import infer
from infer.core.diagnostics import Location
from tests.validation.test_catalogue import init, model, node, vi

F, I32, I64 = TensorProto.FLOAT, TensorProto.INT32, TensorProto.INT64


def _codes_at(m: onnx.ModelProto) -> list[tuple[str, str, str | None, str | None]]:
    result = infer.infer_model(m)
    return [(d.severity, d.code, d.location.node_name or None, d.location.value) for d in result.diagnostics]


def _runs(m: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    session = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def _refused(m: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> bool:
    try:
        _runs(m, feeds)
    except Exception:  # onnxruntime raises its own exception types (Fail, InvalidGraph, ...)
        return True
    return False


def _branch_returning(name: str) -> onnx.GraphProto:
    return helper.make_graph([], "branch", [], [helper.make_tensor_value_info(name, F, [3])])


def _if_returning_outer(returns_outer: bool) -> onnx.ModelProto:
    if returns_outer:
        then, other = _branch_returning("s"), _branch_returning("p")
    else:
        then = helper.make_graph([node("Identity", ["s"], ["ts"])], "t", [], [vi("ts", F, [3])])
        other = helper.make_graph([node("Identity", ["p"], ["ep"])], "e", [], [vi("ep", F, [3])])
    nodes = [
        node("Add", ["x", "x"], ["s"], "add"),
        node("Mul", ["x", "x"], ["p"], "mul"),
        node("If", ["c"], ["y"], "if", then_branch=then, else_branch=other),
    ]
    return model(nodes, [vi("x", F, [3]), vi("c", TensorProto.BOOL, [])], [vi("y", F, [3])])


IF_FEEDS = {"x": np.ones(3, np.float32), "c": np.array(True)}


def test_subgraph_output_of_an_outer_value_is_a_warning_onnxruntime_refuses() -> None:
    bad = _if_returning_outer(True)
    assert ("warning", "outer-scope-output", None, "s") in _codes_at(bad)
    assert ("warning", "outer-scope-output", None, "p") in _codes_at(bad)
    assert not infer.infer_model(bad).errors
    assert _refused(bad, IF_FEEDS)
    good = _if_returning_outer(False)
    assert not [c for c in _codes_at(good) if c[1] == "outer-scope-output"]
    assert not _refused(good, IF_FEEDS)


def test_sparse_and_dense_initializers_of_one_name() -> None:
    m = model([node("Relu", ["w"], ["y"], "r")], [], [vi("y", F, [4])], [init("w", np.ones(4, np.float32), np.float32)])
    sparse = helper.make_sparse_tensor(
        helper.make_tensor("w", F, [1], [2.0]), helper.make_tensor("w_idx", I64, [1], [1]), [4]
    )
    m.graph.sparse_initializer.append(sparse)
    assert ("error", "duplicate-definition", None, "w") in _codes_at(m)
    m.graph.sparse_initializer[0].values.name = "w2"
    assert not [c for c in _codes_at(m) if c[1] == "duplicate-definition"]


def test_opaque_type_without_a_name() -> None:
    def opaque(name: str) -> onnx.ValueInfoProto:
        tp = onnx.TypeProto()
        tp.opaque_type.domain = "custom"
        tp.opaque_type.name = name
        return helper.make_value_info("h", tp)

    m = model([node("Identity", ["x"], ["y"])], [vi("x", F, [2])], [vi("y", F, [2])], value_info=[opaque("")])
    assert ("error", "malformed-type", None, "h") in _codes_at(m)
    m.graph.value_info[0].CopyFrom(opaque("Handle"))
    assert not [c for c in _codes_at(m) if c[1] == "malformed-type"]


@pytest.mark.parametrize(
    ("op", "x", "w", "group", "bad"),
    [
        ("ConvTranspose", [1, 32, 6, 6], [32, 4, 3, 3], 3, True),  # C = 32 is not divisible by 3
        ("ConvTranspose", [1, 33, 6, 6], [33, 4, 3, 3], 3, False),
        ("Conv", [1, 6, 6, 6], [5, 2, 3, 3], 3, True),  # M = 5 is not divisible by 3
        ("Conv", [1, 6, 6, 6], [6, 2, 3, 3], 3, False),
    ],
)
def test_channels_the_groups_do_not_divide(op: str, x: list[int], w: list[int], group: int, bad: bool) -> None:
    m = model([node(op, ["x", "w"], ["y"], "conv", group=group)], [vi("x", F, x), vi("w", F, w)], [vi("y", F, None)])
    feeds = {"x": np.ones(x, np.float32), "w": np.ones(w, np.float32)}
    flagged = ("error", "shape-mismatch", "conv", None) in _codes_at(m)
    assert flagged == bad
    assert _refused(m, feeds) == bad


def test_linear_classifier_with_too_few_coefficients() -> None:
    def classifier(n_coef: int) -> onnx.ModelProto:
        n = node(
            "LinearClassifier",
            ["x"],
            ["label", "score"],
            "lc",
            domain="ai.onnx.ml",
            coefficients=[0.5] * n_coef,
            intercepts=[0.0, 0.0],
            classlabels_ints=[1, 2],
        )
        outs = [vi("label", I64, [2]), vi("score", F, [2, 2])]
        return model([n], [vi("x", F, [2, 5])], outs, imports=[("", 18), ("ai.onnx.ml", 1)])

    feeds = {"x": np.ones((2, 5), np.float32)}
    assert ("error", "shape-mismatch", "lc", None) in _codes_at(classifier(2))
    assert _refused(classifier(2), feeds)
    assert not infer.infer_model(classifier(10)).errors
    assert not _refused(classifier(10), feeds)


def test_a_variable_may_denote_an_empty_extent() -> None:
    # Extents of 0 are permitted (Clause 6.5.1): `M` declared for an empty tensor is no clash,
    # though inference otherwise takes variables to be positive.
    empty = node("Constant", [], ["y"], "c")
    empty.attribute.append(helper.make_attribute("value_ints", [], attr_type=onnx.AttributeProto.INTS))
    m = model([empty], [vi("x", F, ["N"])], [vi("y", I64, ["M"])])
    assert not infer.infer_model(m).errors
    assert infer.infer_model(m).shape_of("y") == (0,)
    assert _runs(m, {"x": np.ones(2, np.float32)})[0].shape == (0,)


def _ir3_loop(extra_input_is_initializer: bool) -> onnx.ModelProto:
    """A Loop whose body lists a constant as a trailing input, as IR version 3 exporters did."""
    body_inputs = [vi("i", I64, []), vi("cond", TensorProto.BOOL, []), vi("acc", I32, [1]), vi("k", I32, [1])]
    body = helper.make_graph(
        [node("Add", ["acc", "k"], ["acc_out"]), node("Identity", ["cond"], ["cond_out"])],
        "body",
        body_inputs,
        [vi("cond_out", TensorProto.BOOL, []), vi("acc_out", I32, [1])],
        [numpy_helper.from_array(np.array([2], np.int32), "k" if extra_input_is_initializer else "other")],
    )
    nodes = [node("Loop", ["n", "", "a0"], ["a"], "loop", body=body)]
    inits = [init("n", 3), init("a0", [1], np.int32)]
    inputs = [vi("n", I64, []), vi("a0", I32, [1])]  # IR 3: every initializer is also an input
    return model(nodes, inputs, [vi("a", I32, [1])], inits, opset=8, ir=3)


def test_ir3_body_may_list_its_initializers_as_inputs() -> None:
    assert not infer.infer_model(_ir3_loop(True)).errors
    assert infer.infer_model(_ir3_loop(True)).shape_of("a") == (1,)
    assert _runs(_ir3_loop(True), {})[0].tolist() == [7]  # 1 + 3 * 2
    # An extra body input that no initializer gives is still one the node does not supply.
    assert ("error", "arity", "loop", None) in _codes_at(_ir3_loop(False))
    assert _refused(_ir3_loop(False), {})


def _relu() -> onnx.ModelProto:
    return model([node("Relu", ["x"], ["y"], "r")], [vi("x", F, [2])], [vi("y", F, [2])])


def _no_graph_name(m: onnx.ModelProto) -> None:
    m.graph.name = ""


def _no_ir_version(m: onnx.ModelProto) -> None:
    m.ClearField("ir_version")


def _same_node_names(m: onnx.ModelProto) -> None:
    m.graph.node.append(node("Abs", ["y"], ["z"], "r"))
    m.graph.output.append(vi("z", F, [2]))


def _twice_a_metadata_key(m: onnx.ModelProto) -> None:
    onnx.helper.set_model_props(m, {"author": "a"})
    m.metadata_props.append(onnx.StringStringEntryProto(key="author", value="b"))


def _untyped_initializer(m: onnx.ModelProto) -> None:
    t = numpy_helper.from_array(np.ones(2, np.float32), "w")
    t.data_type = TensorProto.UNDEFINED
    m.graph.initializer.append(t)


def _untyped_output(m: onnx.ModelProto) -> None:
    m.graph.output[0].ClearField("type")


@pytest.mark.parametrize(
    ("spoil", "expected"),
    [
        (_no_graph_name, ("error", "empty-name", None, None)),  # Clause 7.1: a graph has a name
        (_no_ir_version, ("error", "missing-ir-version", None, None)),  # Clause 5.3.1: mandatory
        (_same_node_names, ("error", "duplicate-node-name", "r", None)),  # Clause 5.4.1
        (_twice_a_metadata_key, ("error", "duplicate-metadata-key", None, None)),  # Clause 5.5
        (_untyped_initializer, ("error", "undefined-element-type", None, "w")),  # Clause 6.2
        (_untyped_output, ("warning", "missing-io-type", None, "y")),  # Clause 7.1
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_model_and_graph_declarations(spoil, expected) -> None:
    assert not [c for c in _codes_at(_relu()) if c[0] != "info"]  # the twin: nothing to report
    m = _relu()
    spoil(m)
    assert expected in _codes_at(m)


def _with_function(spoil=None) -> onnx.ModelProto:
    f = helper.make_function("local", "f", ["a"], ["b"], [node("Relu", ["a"], ["b"])], [helper.make_opsetid("", 18)])
    m = model(
        [node("f", ["x"], ["y"], "call", domain="local")],
        [vi("x", F, [2])],
        [vi("y", F, [2])],
        functions=[f],
        imports=[("", 18), ("local", 1)],
    )
    if spoil is not None:
        spoil(m)
    return m


def _defined_twice(m: onnx.ModelProto) -> None:
    m.functions.append(m.functions[0])


def _input_twice(m: onnx.ModelProto) -> None:
    m.functions[0].input.append("a")


def _attribute_twice(m: onnx.ModelProto) -> None:
    m.functions[0].attribute.extend(["alpha", "alpha"])


def _nameless(m: onnx.ModelProto) -> None:
    m.functions[0].name = ""


@pytest.mark.parametrize(
    ("spoil", "code", "where"),
    [
        (_defined_twice, "duplicate-definition", Location("function local.f")),
        (_input_twice, "duplicate-definition", Location("function local.f", value="a")),
        (_attribute_twice, "duplicate-attribute", Location("function local.f", attribute="alpha")),
        (_nameless, "empty-name", Location("function 0")),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_function_declarations(spoil, code, where) -> None:
    assert not infer.infer_model(_with_function()).diagnostics
    found = [d.location for d in infer.infer_model(_with_function(spoil)).diagnostics if d.code == code]
    assert where in found
