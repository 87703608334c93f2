"""infer.walk.custom_schemas: running the inference function of a schema registered at run time."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import pytest
from onnx import TensorProto, TypeProto, defs, helper, numpy_helper
from onnx.defs import OpSchema

from infer.core import dims as D
from infer.core import types as T
from infer.core.values import Known
from infer.walk import custom_schemas as C

DOMAIN = "onnx_infer.test.custom"
Variadic = OpSchema.FormalParameterOption.Variadic
Optional = OpSchema.FormalParameterOption.Optional
InferFn = Callable[[object], None]


@pytest.fixture
def register() -> Iterator[Callable[..., OpSchema]]:
    """Register schemas in a test-only domain; every one is deregistered afterwards."""
    registered: list[tuple[str, int]] = []

    def add(op: str, fn: InferFn | None, version: int = 1, **kwargs: object) -> OpSchema:
        kwargs.setdefault("inputs", [OpSchema.FormalParameter("x", "T")])
        kwargs.setdefault("outputs", [OpSchema.FormalParameter("y", "T")])
        kwargs.setdefault("type_constraints", [("T", ["tensor(float)", "tensor(int64)"], "")])
        schema = OpSchema(op, DOMAIN, version, **kwargs)
        if fn is not None:
            schema.set_type_and_shape_inference_function(fn)
        assert not defs.has(op, DOMAIN)
        defs.register_schema(schema)
        registered.append((op, version))
        return schema

    yield add
    for op, version in registered:
        with contextlib.suppress(defs.SchemaError):
            defs.deregister_schema(op, version, DOMAIN)


def _node(op: str, inputs: list[str], outputs: list[str] | None = None, **attrs: object):
    return helper.make_node(op, inputs, outputs or ["y"], domain=DOMAIN, **attrs)


def _copy_input(ctx) -> None:
    ctx.set_output_type(0, ctx.get_input_type(0))


def _append_len(ctx) -> None:
    """y = x's type with one more axis of extent ``len`` (an attribute)."""
    t = ctx.get_input_type(0)
    out = TypeProto()
    out.CopyFrom(t)
    out.tensor_type.shape.dim.add().dim_value = ctx.get_attribute("len").i
    ctx.set_output_type(0, out)


def _dims(tp: TypeProto) -> list[int | str | None]:
    return [d.dim_value if d.HasField("dim_value") else d.dim_param or None for d in tp.tensor_type.shape.dim]


# -- finding schemas -------------------------------------------------------------------------------


def test_registered_schema_with_function_is_found(register) -> None:
    register("Probe", _copy_input)
    schema = C.user_schema(DOMAIN, "Probe", 1)
    assert schema is not None and schema.name == "Probe"
    assert C.registered_at_run_time(schema)


def test_schema_without_function_is_not_used(register) -> None:
    register("Plain", None)
    assert C.user_schema(DOMAIN, "Plain", 1) is None


def test_onnx_own_schemas_are_never_used() -> None:
    add = defs.get_schema("Add", 14, "")
    assert add.has_type_and_shape_inference_function
    assert not C.registered_at_run_time(add)
    assert C.user_schema("", "Add", 14) is None
    assert C.user_schema("", "NoSuchOperator", 21) is None
    assert C.user_schema(DOMAIN, "NoSuchOperator", 1) is None


def test_registration_and_deregistration_are_seen_at_once(register) -> None:
    assert C.user_schema(DOMAIN, "Late", 1) is None
    register("Late", _copy_input)
    assert C.user_schema(DOMAIN, "Late", 1) is not None
    defs.deregister_schema("Late", 1, DOMAIN)
    assert C.user_schema(DOMAIN, "Late", 1) is None


# -- running the function ------------------------------------------------------------------------


def test_outputs_by_position(register) -> None:
    schema = register("Append", _append_len, attributes=[OpSchema.Attribute("len", OpSchema.AttrType.INT)])
    x = helper.make_tensor_type_proto(TensorProto.FLOAT, [2, 3])
    out = C.run_inference(schema, _node("Append", ["x"], len=7), [x], opsets={DOMAIN: 1})
    assert out.error is None
    (y,) = out.outputs
    assert y.tensor_type.elem_type == TensorProto.FLOAT
    assert _dims(y) == [2, 3, 7]


def test_variadic_outputs_and_unset_ones(register) -> None:
    def first_only(ctx) -> None:
        ctx.set_output_type(0, ctx.get_input_type(0))

    schema = register("Split2", first_only, outputs=[OpSchema.FormalParameter("y", "T", param_option=Variadic)])
    x = helper.make_tensor_type_proto(TensorProto.INT64, [4])
    out = C.run_inference(schema, _node("Split2", ["x"], ["a", "b"]), [x])
    assert out.error is None and len(out.outputs) == 2
    assert _dims(out.outputs[0]) == [4]
    # onnx fills in the element type its type constraint binds; the shape stays unknown.
    b = out.outputs[1]
    assert b is None or not b.tensor_type.HasField("shape")


def test_function_that_raises_gives_an_error_string(register) -> None:
    def broken(ctx) -> None:
        raise ValueError("no shape for you\nsecond line")

    schema = register("Broken", broken)
    x = helper.make_tensor_type_proto(TensorProto.FLOAT, [2])
    out = C.run_inference(schema, _node("Broken", ["x"]), [x])
    assert out.outputs == (None,)
    assert out.error is not None
    assert "ValueError" in out.error and "no shape for you" in out.error and "\n" not in out.error
    assert f"{DOMAIN}:Broken-1" in out.error


def test_function_setting_a_type_its_constraint_forbids_is_an_error(register) -> None:
    def wrong(ctx) -> None:
        ctx.set_output_type(0, helper.make_tensor_type_proto(TensorProto.STRING, [1]))

    schema = register("Wrong", wrong)
    out = C.run_inference(schema, _node("Wrong", ["x"]), [helper.make_tensor_type_proto(TensorProto.FLOAT, [1])])
    assert out.outputs == (None,) and "unsupported type" in (out.error or "")


def test_node_that_does_not_fit_the_schema_is_an_error(register) -> None:
    schema = register("One", _copy_input)
    x = helper.make_tensor_type_proto(TensorProto.FLOAT, [1])
    out = C.run_inference(schema, _node("One", ["x", "x", "x"]), [x, x, x])
    assert out.outputs == (None,) and "input size" in (out.error or "")


def test_long_messages_are_cut(register) -> None:
    def verbose(ctx) -> None:
        raise RuntimeError("x" * 10_000)

    schema = register("Verbose", verbose)
    out = C.run_inference(schema, _node("Verbose", ["x"]), [helper.make_tensor_type_proto(TensorProto.FLOAT, [1])])
    assert out.error is not None and len(out.error) < C.MAX_MESSAGE + 200


def test_untyped_and_absent_inputs(register) -> None:
    seen: dict[str, object] = {}

    def look(ctx) -> None:
        seen["type0"] = ctx.get_input_type(0)
        seen["has1"] = ctx.has_input(1)

    schema = register(
        "Look",
        look,
        inputs=[OpSchema.FormalParameter("x", "T"), OpSchema.FormalParameter("z", "T", param_option=Optional)],
    )
    out = C.run_inference(schema, _node("Look", ["x"]), [None])
    assert out.error is None
    assert seen == {"type0": None, "has1": False}  # unknown type: None, as under onnx's infer_shapes
    seen.clear()
    out = C.run_inference(schema, _node("Look", ["x", ""]), [helper.make_tensor_type_proto(TensorProto.FLOAT, [])])
    assert out.error is None and seen["has1"] is False


def test_input_contents_reach_the_function(register) -> None:
    def from_contents(ctx) -> None:
        data = ctx.get_input_data(0)
        shape = numpy_helper.to_array(data).tolist() if data is not None else []
        ctx.set_output_type(0, helper.make_tensor_type_proto(TensorProto.INT64, shape))

    schema = register("FromContents", from_contents)
    contents = C.tensor_from_known(Known((2,), (4, 5)), TensorProto.INT64)
    x = helper.make_tensor_type_proto(TensorProto.INT64, [2])
    out = C.run_inference(schema, _node("FromContents", ["s"]), [x], [contents])
    assert out.error is None and _dims(out.outputs[0]) == [4, 5]


def test_symbolic_input_is_not_available(register) -> None:
    # infer_node_outputs carries no propagated shape data: get_symbolic_input is always None.
    seen: dict[str, object] = {}

    def look(ctx) -> None:
        seen["sym"] = ctx.get_symbolic_input(0)
        ctx.set_output_type(0, ctx.get_input_type(0))

    schema = register("Symbolic", look)
    contents = C.tensor_from_known(Known((2,), (2, 3)), TensorProto.INT64)
    x = helper.make_tensor_type_proto(TensorProto.INT64, [2])
    out = C.run_inference(schema, _node("Symbolic", ["s"]), [x], [contents])
    assert out.error is None and seen == {"sym": None}


def test_graph_attribute_inferencer(register) -> None:
    """A function may ask onnx to infer a graph attribute; onnx infers the subgraph's nodes."""
    register("Append", _append_len, attributes=[OpSchema.Attribute("len", OpSchema.AttrType.INT)])

    def through_graph(ctx) -> None:
        inferred = ctx.get_graph_attribute_inferencer("body").do_inferencing([ctx.get_input_type(0)], [None])
        for k, t in enumerate(inferred):
            ctx.set_output_type(k, t)

    schema = register("Wrap", through_graph, attributes=[OpSchema.Attribute("body", OpSchema.AttrType.GRAPH)])
    body = helper.make_graph(
        [_node("Append", ["bx"], ["by"], len=5)],
        "body",
        [helper.make_tensor_value_info("bx", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("by", TensorProto.FLOAT, None)],
    )
    x = helper.make_tensor_type_proto(TensorProto.FLOAT, [3, "N"])
    out = C.run_inference(schema, _node("Wrap", ["x"], body=body), [x], opsets={"": 21, DOMAIN: 1})
    assert out.error is None
    assert _dims(out.outputs[0]) == [3, "N", 5]


# -- types as protos -------------------------------------------------------------------------------


def test_dims_round_trip_through_the_function(register) -> None:
    schema = register("Copy", _copy_input)
    n, s = D.symbol("N"), D.symbol("seq")
    t = T.tensor(TensorProto.FLOAT, (n, None, 3, D.add(s, 5), D.mul(n, s)))
    names = C.DimNames()
    tp = names.to_proto(t)
    assert _dims(tp) == ["N", None, 3, "seq + 5", "N*seq"]
    out = C.run_inference(schema, _node("Copy", ["x"]), [tp])
    assert out.error is None
    back = names.from_proto(out.outputs[0])
    assert back == t


def test_names_the_function_makes_up_are_unknown() -> None:
    names = C.DimNames()
    names.to_proto(T.tensor(TensorProto.FLOAT, (D.symbol("N"),)))
    made = helper.make_tensor_type_proto(TensorProto.FLOAT, ["N", "M", -1, 4])
    made.tensor_type.shape.dim[2].dim_value = -1
    assert names.from_proto(made) == T.tensor(TensorProto.FLOAT, (D.symbol("N"), None, None, 4))


def test_unknown_and_nested_types() -> None:
    names = C.DimNames()
    assert names.to_proto(T.UNKNOWN) is None
    assert names.from_proto(None) == T.UNKNOWN
    assert names.from_proto(TypeProto()) == T.UNKNOWN
    rankless = T.TensorType(TensorProto.FLOAT, None)
    assert names.from_proto(names.to_proto(rankless)) == rankless
    seq = T.SequenceType(T.tensor(TensorProto.INT64, (D.symbol("K"), 2)))
    assert names.from_proto(names.to_proto(seq)) == seq


def test_extents_printed_alike_stay_apart() -> None:
    names = C.DimNames()
    a, b = D.symbol("a"), D.symbol("b")
    # a variable whose name is the text of an expression over others
    odd = D.symbol("a + b")
    tp = names.to_proto(T.tensor(TensorProto.FLOAT, (D.add(a, b), odd)))
    first, second = _dims(tp)
    assert first != second
    assert names.from_proto(tp) == T.tensor(TensorProto.FLOAT, (D.add(a, b), odd))


def test_extents_past_int64_are_names() -> None:
    names = C.DimNames()
    big = 1 << 70
    tp = names.to_proto(T.tensor(TensorProto.FLOAT, (big,)))
    assert tp.tensor_type.shape.dim[0].HasField("dim_param")
    assert names.from_proto(tp) == T.tensor(TensorProto.FLOAT, (big,))


def test_tensor_from_known() -> None:
    t = C.tensor_from_known(Known((2, 2), (1, 2, 3, 4)), TensorProto.INT64, "c")
    assert t is not None and t.name == "c" and list(t.dims) == [2, 2]
    assert numpy_helper.to_array(t).tolist() == [[1, 2], [3, 4]]
    f = C.tensor_from_known(Known((), (0.5,)), TensorProto.FLOAT)
    assert f is not None and float(numpy_helper.to_array(f)) == 0.5
    s = C.tensor_from_known(Known((1,), ("hi",)), TensorProto.STRING)
    assert s is not None and list(s.string_data) == [b"hi"]
    assert C.tensor_from_known(Known((2,), (D.symbol("N"), 3)), TensorProto.INT64) is None
    assert C.tensor_from_known(Known((2,), (None, 3)), TensorProto.INT64) is None
    assert C.tensor_from_known(Known((1,), (-1,)), TensorProto.UINT8) is None
    assert C.tensor_from_known(Known((1,), (1,)), None) is None
    assert C.tensor_from_known(None, TensorProto.INT64) is None


# -- through the engine and the drop-in ----------------------------------------------------------


def _custom_model(op: str) -> object:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    graph = helper.make_graph([_node(op, ["x"], ["y"], len=4)], "g", [x], [y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid(DOMAIN, 1)])


def test_drop_in_asks_a_registered_function_and_the_engine_does_not(register) -> None:
    import infer
    from infer import onnx_compat

    model = _custom_model("Grow")
    register("Grow", _append_len, attributes=[OpSchema.Attribute("len", OpSchema.AttrType.INT)])
    out = onnx_compat.infer_shapes(model, strict_mode=True)
    assert _dims(out.graph.output[0].type) == ["N", 3, 4]  # the symbol is kept by name
    # The library call infers with its own rules only (Options.custom_schemas is off).
    result = infer.infer_model(model)
    assert [d.code for d in result.diagnostics if d.location.node_index == 0] == ["no-rule"]
    assert result.type_of("y").shape is None


def test_a_failing_registered_function_fails_strict_mode_only(register) -> None:
    from onnx.shape_inference import InferenceError

    from infer import onnx_compat

    def broken(ctx) -> None:
        raise KeyError("oops")

    register("Broken", broken, attributes=[OpSchema.Attribute("len", OpSchema.AttrType.INT)])
    model = _custom_model("Broken")
    with pytest.raises(InferenceError, match="custom-inference"):
        onnx_compat.infer_shapes(model, strict_mode=True)
    out = onnx_compat.infer_shapes(model)  # not strict: the output stays untyped
    assert not out.graph.output[0].type.tensor_type.HasField("shape")


def test_a_formal_typed_by_a_bare_element_name() -> None:
    # ``FormalParameter("x", "float")`` admits tensor(float), as onnx reads it: check_type must
    # not call a float input a violation. In the default domain, whose schemas the engine checks.
    from infer import onnx_compat

    op = "OnnxInferTestBare"
    schema = OpSchema(
        op,
        "",
        1,
        inputs=[OpSchema.FormalParameter("x", "float")],
        outputs=[OpSchema.FormalParameter("y", "float")],
        attributes=[OpSchema.Attribute("len", OpSchema.AttrType.INT)],
    )
    schema.set_type_and_shape_inference_function(_append_len)
    defs.register_schema(schema)
    try:
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
        graph = helper.make_graph([helper.make_node(op, ["x"], ["y"], len=4)], "g", [x], [y])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
        out = onnx_compat.infer_shapes(model, check_type=True, strict_mode=True)
        assert _dims(out.graph.output[0].type) == ["N", 3, 4]
    finally:
        defs.deregister_schema(op, 1, "")


# -- signatures as the schemas are now ----------------------------------------------------------


def test_signatures_of_shipped_schemas_are_kept_across_calls_of_both_entries(monkeypatch) -> None:
    """Neither entry rebuilds the signature of a schema onnx ships once it has been built: the
    drop-in no longer clears what ``infer_model`` reads (issue 42)."""
    import infer
    from infer import onnx_compat
    from infer.contract import signature as S
    from infer.walk import reuse

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Softmax", ["r"], ["y"])]
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [y]), opset_imports=[helper.make_opsetid("", 18)])
    with reuse.disabled():
        infer.infer_model(model)
        built: list[str] = []
        real = S._from_schema
        monkeypatch.setattr(S, "_from_schema", lambda s: built.append(s.name) or real(s))
        for _ in range(2):
            onnx_compat.infer_shapes(model, data_prop=True)
            infer.infer_model(model)
    assert built == []


def test_a_schema_registered_or_deregistered_is_seen_by_the_next_lookup() -> None:
    """Nothing kept outlives the schema it was built from: ``signature`` asks onnx which schema
    is in force at each lookup (an operator of the default domain registered at run time)."""
    from infer.contract.signature import signature

    op = "OnnxInferTestLate"
    assert signature("", op, 18) is None
    formal = {"inputs": [OpSchema.FormalParameter("x", "T")], "outputs": [OpSchema.FormalParameter("y", "T")]}
    schema = OpSchema(op, "", 1, type_constraints=[("T", ["tensor(float)"], "")], **formal)
    defs.register_schema(schema)
    try:
        sig = signature("", op, 18)
        assert sig is not None and sig.name == op and sig.max_inputs == 1
    finally:
        defs.deregister_schema(op, 1, "")
    assert signature("", op, 18) is None
