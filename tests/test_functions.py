"""Model-local functions (Clause 8.4) checked against onnxruntime.

A call is inferred by walking the function body with the call site's input types and
attributes: attribute references (``ref_attr_name``) take the call site's value, else the
function's default (``attribute_proto``), else the attribute is omitted. Calls nest, overloads
(IR 10) are told apart, recursion is reported, and the body's values are typed per call site.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
from onnx import AttributeProto, helper

import infer
from tests.test_control_flow import I64, F, const, floats, graph, model, node, shape, verify, vi

LOCAL = [("local", 1)]


def function(
    name: str,
    inputs: list[str],
    outputs: list[str],
    nodes: list[onnx.NodeProto],
    attributes=(),
    defaults: dict[str, Any] | None = None,
    overload: str = "",
    opset: int = 18,
    value_info=(),
    calls_local: bool = False,
) -> onnx.FunctionProto:
    imports = [helper.make_opsetid("", opset)] + ([helper.make_opsetid("local", 1)] if calls_local else [])
    fn = helper.make_function("local", name, inputs, outputs, nodes, imports, list(attributes))
    for key, value in (defaults or {}).items():
        fn.attribute_proto.append(helper.make_attribute(key, value))
    if overload:
        fn.overload = overload
    fn.value_info.extend(value_info)
    return fn


def call(name: str, ins: list[str], outs: list[str], overload: str = "", **attrs: Any) -> onnx.NodeProto:
    n = helper.make_node(name, ins, outs, domain="local", **attrs)
    if overload:
        n.overload = overload
    return n


def ref(name: str, refers_to: str, kind: int) -> AttributeProto:
    a = AttributeProto(name=name, ref_attr_name=refers_to, type=kind)
    return a


def function_records(result: infer.InferenceResult, name: str) -> list[str]:
    return sorted(p for p, rec in result.graphs.items() if rec.kind == "function" and p.endswith(f"local.{name}"))


def test_a_function_is_typed_per_call_site() -> None:
    fn = function("Double", ["a"], ["b"], [node("Add", ["a", "a"], ["t"]), node("Relu", ["t"], ["b"])])
    m = model(
        [call("Double", ["x"], ["y"]), call("Double", ["w"], ["z"])],
        [vi("x", F, ["N", 3]), vi("w", F, ["M"])],
        [vi("y", F, ["N", 3]), vi("z", F, ["M"])],
        functions=[fn],
        imports=LOCAL,
    )
    r = verify(m, [{"x": floats(2, 3), "w": floats(5)}])
    assert shape(r, "y") == "float[N,3]" and shape(r, "z") == "float[M]"
    first, second = function_records(r, "Double")
    assert shape(r, "t", first) == "float[N,3]"
    assert shape(r, "t", second) == "float[M]"


def test_attribute_references_defaults_and_omission() -> None:
    body = [
        node("Concat", ["a", "a"], ["c"], axis=0),
        node("Transpose", ["c"], ["b"]),
    ]
    body[0].attribute[0].CopyFrom(ref("axis", "along", AttributeProto.INT))
    perm = ref("perm", "order", AttributeProto.INTS)
    body[1].attribute.append(perm)
    fn = function("CatT", ["a"], ["b"], body, attributes=["order"], defaults={"along": 1})
    m = model(
        [
            call("CatT", ["x"], ["given"], along=0, order=[1, 0]),  # both supplied
            call("CatT", ["x"], ["default"], order=[1, 0]),  # along from the default
            call("CatT", ["x"], ["omitted"], along=0),
        ],  # order omitted: Transpose reverses
        [vi("x", F, ["N", 3])],
        [vi(n, F, [None, None]) for n in ("given", "default", "omitted")],
        functions=[fn],
        imports=LOCAL,
    )
    r = verify(m, [{"x": floats(2, 3)}])
    assert shape(r, "given") == "float[3,2*N]"
    assert shape(r, "default") == "float[6,N]"
    assert shape(r, "omitted") == "float[3,2*N]"


def test_nested_calls_pass_attributes_through() -> None:
    inner_body = [node("Flatten", ["p"], ["q"])]
    inner_body[0].attribute.append(ref("axis", "ax", AttributeProto.INT))
    inner = function("Inner", ["p"], ["q"], inner_body, attributes=[], defaults={"ax": 2})
    outer_call = call("Inner", ["u"], ["v"])
    outer_call.attribute.append(ref("ax", "which", AttributeProto.INT))
    outer = function(
        "Outer", ["u"], ["w"], [outer_call, node("Relu", ["v"], ["w"])], attributes=["which"], calls_local=True
    )
    m = model(
        [call("Outer", ["x"], ["y"], which=1), call("Outer", ["x"], ["z"])],
        [vi("x", F, ["N", 3, 4])],
        [vi("y", F, [None, None]), vi("z", F, [None, None])],
        functions=[inner, outer],
        imports=LOCAL,
    )
    r = verify(m, [{"x": floats(2, 3, 4)}])
    assert shape(r, "y") == "float[N,12]"  # which=1 reaches Flatten through two references
    assert shape(r, "z") == "float[3*N,4]"  # which absent: the inner function's default, 2
    inner_paths = function_records(r, "Inner")
    outer_paths = function_records(r, "Outer")
    assert [p.rsplit("/", 1)[0] for p in inner_paths] == outer_paths
    assert shape(r, "q", inner_paths[0]) == "float[N,12]"


def test_overloads_are_told_apart() -> None:
    grow = function("F", ["a"], ["b"], [node("Concat", ["a", "a"], ["b"], axis=0)], overload="grow")
    keep = function("F", ["a"], ["b"], [node("Relu", ["a"], ["b"])], overload="keep")
    m = model(
        [call("F", ["x"], ["y"], overload="grow"), call("F", ["x"], ["z"], overload="keep")],
        [vi("x", F, ["N"])],
        [vi("y", F, [None]), vi("z", F, [None])],
        functions=[grow, keep],
        imports=LOCAL,
    )
    r = verify(m, [{"x": floats(3)}])
    assert shape(r, "y") == "float[2*N]" and shape(r, "z") == "float[N]"


def test_recursion_is_reported() -> None:
    rec = function("Rec", ["a"], ["b"], [call("Rec", ["a"], ["b"])], calls_local=True)
    ping = function("Ping", ["a"], ["b"], [call("Pong", ["a"], ["b"])], calls_local=True)
    pong = function("Pong", ["a"], ["b"], [call("Ping", ["a"], ["b"])], calls_local=True)
    m = model(
        [call("Rec", ["x"], ["y"]), call("Ping", ["x"], ["z"])],
        [vi("x", F, [2])],
        [vi("y", F, [2]), vi("z", F, [2])],
        functions=[rec, ping, pong],
        imports=LOCAL,
    )
    r = infer.infer_model(m)
    rec_diags = [d for d in r.diagnostics if d.code == "recursion"]
    assert len(rec_diags) == 2
    assert any("Rec" in d.message for d in rec_diags) and any("Ping" in d.message for d in rec_diags)


def test_omitted_optional_inputs_are_absent_in_the_body() -> None:
    fn = function("Clamp", ["a", "lo", "hi"], ["b"], [node("Clip", ["a", "lo", "hi"], ["b"])])
    m = model(
        [call("Clamp", ["x", "", "top"], ["y"]), call("Clamp", ["x"], ["z"])],
        [vi("x", F, ["N"])],
        [vi("y", F, [None]), vi("z", F, [None])],
        [const("top", 0.5, np.float32)],
        functions=[fn],
        imports=LOCAL,
    )
    r = verify(m, [{"x": floats(4)}])
    assert shape(r, "y") == "float[N]" and shape(r, "z") == "float[N]"


def test_control_flow_inside_a_function() -> None:
    then = graph([node("Add", ["a", "a"], ["t"])], [], [helper.make_tensor_value_info("t", F, None)])
    cat = node("Concat", ["a", "a"], ["e"])
    cat.attribute.append(ref("axis", "along", AttributeProto.INT))  # a reference inside a subgraph
    other = graph([cat], [], [helper.make_tensor_value_info("e", F, None)])
    acc_in, acc_out = (helper.make_tensor_value_info(n, F, None) for n in ("acc_in", "acc_out"))
    body = graph(
        [node("Add", ["acc_in", "a"], ["acc_out"])],
        [vi("i", I64, []), vi("c", onnx.TensorProto.BOOL, []), acc_in],
        [vi("c", onnx.TensorProto.BOOL, []), acc_out],
    )
    fn = function(
        "Ctl",
        ["a", "flag", "m"],
        ["b", "s"],
        [
            node("If", ["flag"], ["b"], then_branch=then, else_branch=other),
            node("Loop", ["m", "", "a"], ["s"], body=body),
        ],
        attributes=["along"],
    )
    m = model(
        [call("Ctl", ["x", "f", "k"], ["y", "acc"], along=0)],
        [vi("x", F, ["N"]), vi("f", onnx.TensorProto.BOOL, []), vi("k", I64, [])],
        [vi("y", F, [None]), vi("acc", F, [None])],
        functions=[fn],
        imports=LOCAL,
    )
    feeds = [{"x": floats(3), "f": np.array(b), "k": np.array(2)} for b in (True, False)]
    r = verify(m, feeds)
    (d,) = r.shape_of("y")
    assert r.dims.is_fresh(d)
    assert shape(r, "acc") == "float[N]"


def test_function_value_info_is_local_to_the_call() -> None:
    # The body's `t` has an extent only known at run time; the function names it `rows`. That
    # name is the function's, not a model-wide variable: the two calls must not share it.
    fn = function(
        "Nz",
        ["a"],
        ["b"],
        [node("NonZero", ["a"], ["t"]), node("Identity", ["t"], ["b"])],
        value_info=[helper.make_tensor_value_info("t", I64, [1, "rows"])],
    )
    m = model(
        [call("Nz", ["x"], ["y"]), call("Nz", ["w"], ["z"])],
        [vi("x", F, ["N"]), vi("w", F, ["N"])],
        [vi("y", I64, [1, None]), vi("z", I64, [1, None])],
        functions=[fn],
        imports=LOCAL,
        ir=10,
    )
    x, w = np.array([1, 0, 2], np.float32), np.array([1, 1, 1], np.float32)
    r = verify(m, [{"x": x, "w": w}])
    (_, a), (_, b) = r.shape_of("y"), r.shape_of("z")
    assert a != b and r.dims.is_fresh(a) and r.dims.is_fresh(b)


def test_a_function_in_an_unimported_domain_still_runs() -> None:
    fn = function("Id", ["a"], ["b"], [node("Identity", ["a"], ["b"])])
    m = model([call("Id", ["x"], ["y"])], [vi("x", F, ["N"])], [vi("y", F, [None])], functions=[fn])
    r = infer.infer_model(m)
    assert shape(r, "y") == "float[N]"


def test_calls_that_do_not_fit_the_function_are_reported() -> None:
    fn = function("Id", ["a"], ["b", "c"], [node("Identity", ["a"], ["b"])])
    m = model(
        [call("Id", ["x", "x"], ["y"]), call("Id", ["x"], ["z", "w"])],
        [vi("x", F, ["N"])],
        [vi("y", F, [None]), vi("w", F, [None])],
        functions=[fn],
        imports=LOCAL,
    )
    r = infer.infer_model(m)
    codes = [d.code for d in r.diagnostics]
    assert codes.count("arity") == 1
    assert "undefined-value" in codes
    assert shape(r, "y") == "float[N]"


def test_a_call_with_fewer_outputs_than_the_function_is_an_arity_error():
    model = onnx.parser.parse_model(
        """
        <ir_version: 8, opset_import: [ "" : 18, "local" : 1 ]>
        agraph (float[1] X) => (float[1] Y) { Y = local.F (X) }
        <opset_import: [ "" : 18 ], domain: "local">
        F (x) => (y1, y2) { y1 = Identity(x) y2 = Identity(x) }
        """
    )
    result = infer.infer_model(model)
    assert [d.code for d in result.errors] == ["arity"]
    assert "1 outputs" in result.errors[0].message and result.shape_of("Y") == (1,)
