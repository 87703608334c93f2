"""The contract of ``infer.onnx_compat``, the drop-in for ``onnx.shape_inference.infer_shapes``."""

from __future__ import annotations

from pathlib import Path

import onnx
import onnx.parser
import pytest
from onnx import ModelProto, TensorProto, TypeProto, helper

from infer import onnx_compat
from infer.onnx_compat import InferenceError, infer_shapes, infer_shapes_path


def _model(text: str) -> ModelProto:
    return onnx.parser.parse_model(text)


def _types(m: ModelProto) -> dict[str, str]:
    """name -> printable type, over outputs and value_info of the main graph."""
    out = {}
    for vi in (*m.graph.output, *m.graph.value_info):
        out.setdefault(vi.name, helper.printable_type(vi.type))
    return out


def _dims(tp: TypeProto) -> list[int | str | None]:
    out: list[int | str | None] = []
    for d in tp.tensor_type.shape.dim:
        kind = d.WhichOneof("value")
        out.append(d.dim_value if kind == "dim_value" else d.dim_param if kind == "dim_param" else None)
    return out


def _vi(m: ModelProto, name: str) -> TypeProto:
    for vi in (*m.graph.value_info, *m.graph.output):
        if vi.name == name:
            return vi.type
    raise KeyError(name)


RELU = _model("""
<ir_version: 8, opset_import: ["" : 17]>
g (float[N, 3] x) => (y, float[N, ?] z) { a = Relu(x) y = Relu(a) z = Relu(y) }
""")


def test_returns_an_inferred_copy_and_leaves_the_input_alone() -> None:
    before = RELU.SerializeToString()
    out = infer_shapes(RELU)
    assert isinstance(out, ModelProto) and out is not RELU
    assert RELU.SerializeToString() == before
    assert _types(out) == {"y": "FLOAT, Nx3", "z": "FLOAT, Nx3", "a": "FLOAT, Nx3"}


def test_bytes_in_model_out_and_paths_refused() -> None:
    out = infer_shapes(RELU.SerializeToString())
    assert isinstance(out, ModelProto) and _types(out)["a"] == "FLOAT, Nx3"
    with pytest.raises(TypeError, match=r"use infer_shapes_path\(\)"):
        infer_shapes(Path("model.onnx"))  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        infer_shapes(b"\xff\xff not a model")


def test_untyped_outputs_also_get_value_info_typed_outputs_are_typed_in_place() -> None:
    out = infer_shapes(RELU)
    names = [vi.name for vi in out.graph.value_info]
    assert sorted(names) == ["a", "y"]  # `y` had no type; `z` was declared, so only typed in place
    assert _dims(out.graph.output[1].type) == ["N", 3]


def test_value_info_only_for_values_it_types() -> None:
    m = _model("""
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N] x) => (float[N] y) { u = SomeCustomOp(x) y = Relu(x) }
    """)
    out = infer_shapes(m, strict_mode=True)  # onnx does not fail on an operator it does not know
    assert [vi.name for vi in out.graph.value_info] == []
    assert _types(out) == {"y": "FLOAT, N"}


def test_strict_mode_raises_inference_error_only_when_strict() -> None:
    m = _model("""
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2, 3] x, float[4, 5] w) => (y) { y = Add(x, w) }
    """)
    infer_shapes(m)  # not strict: no error
    with pytest.raises(InferenceError, match="shape-mismatch"):
        infer_shapes(m, strict_mode=True)


def test_check_type_raises_on_type_constraints_strict_mode_alone_does_not() -> None:
    m = _model("""
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[3] x, int64[3] k) => (y) { y = Add(x, k) }
    """)
    infer_shapes(m, strict_mode=True)
    with pytest.raises(InferenceError, match="type-mismatch"):
        infer_shapes(m, check_type=True)


def test_strict_mode_raises_on_declared_types_onnx_also_sees() -> None:
    clashes = [
        "g (float[N, 3] x) => (int64[N, 3] y) { y = Relu(x) }",  # element type
        "g (float[N, 3] x) => (float[N, 3, 1] y) { y = Relu(x) }",  # rank
        "g (float[N, 3] x) => (float[N, 4] y) { y = Relu(x) }",  # an integer extent
    ]
    for body in clashes:
        m = _model('<ir_version: 8, opset_import: ["" : 17]>\n' + body)
        infer_shapes(m)
        with pytest.raises(InferenceError, match="declared-type-clash"):
            infer_shapes(m, strict_mode=True)
    # A declared name against an inferred extent is not a contradiction onnx can see.
    m = _model("""
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N, 3] x) => (float[M, 3] y) { y = Relu(x) }
    """)
    infer_shapes(m, strict_mode=True)


def test_a_domain_not_imported_raises_in_any_mode_an_undefined_output_does_not() -> None:
    m = _model("""
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N] x) => (y) { y = custom.Foo(x) }
    """)
    with pytest.raises(InferenceError, match="domain-not-imported"):
        infer_shapes(m)
    m = _model("""
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N] x) => (y, float[2] q) { y = Relu(x) }
    """)
    infer_shapes(m, strict_mode=True)


def test_strict_mode_raises_on_an_input_of_undefined_element_type() -> None:
    m = _model("""
    <ir_version: 8, opset_import: ["" : 17]>
    g (x) => (y) { y = Relu(x) }
    """)
    infer_shapes(m)
    with pytest.raises(InferenceError, match="element type is undefined"):
        infer_shapes(m, strict_mode=True)


def test_declared_types_are_honoured() -> None:
    m = _model("""
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N, 8] x, int64[3] s) => (z) <float[N, 4, 2] r> { r = Reshape(x, s) z = Relu(r) }
    """)
    out = infer_shapes(m)
    assert _dims(_vi(out, "r")) == ["N", 4, 2] and _dims(_vi(out, "z")) == ["N", 4, 2]


def test_dims_are_integers_and_identifiers_one_per_expression() -> None:
    m = _model("""
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2, A] a, float[2, 3] b) => (c, d) { c = Concat<axis = 1>(a, b) d = Concat<axis = 1>(b, a) }
    """)
    out = infer_shapes(m, strict_mode=True)
    c, d = _dims(_vi(out, "c")), _dims(_vi(out, "d"))
    assert c[0] == 2 and isinstance(c[1], str) and c[1].isidentifier() and c[1] != "A"
    assert c == d  # A + 3 both times: one identifier


def test_data_prop_follows_computed_shapes_only_when_asked() -> None:
    m = _model("""
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[B, T, 8] x) => (y) {
        s = Shape(x)
        y = Reshape(x, s)
    }
    """)
    without = _dims(_vi(infer_shapes(m), "y"))
    assert len(without) == 3 and "B" not in without and 8 not in without
    assert _dims(_vi(infer_shapes(m, data_prop=True), "y")) == ["B", "T", 8]


def test_an_initializer_that_is_also_an_input_is_read_as_onnx_reads_it() -> None:
    m = _model("""
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2, 12] x, int64[2] s) => (y) <int64[2] s = {6, 4}> { y = Reshape(x, s) }
    """)
    # As onnx does: the initializer is read as a constant.
    assert _dims(_vi(infer_shapes(m), "y")) == [6, 4]
    assert _dims(_vi(infer_shapes(m, initializers_as_constants=True), "y")) == [6, 4]
    # Asked to, it is a default the caller may override (Clause 7.2): its contents are unknown.
    defaults = _dims(_vi(infer_shapes(m, initializers_as_constants=False), "y"))
    assert len(defaults) == 2 and all(isinstance(d, str) for d in defaults)


def test_infer_shapes_path_reads_initializers_as_onnx_does_unless_told(tmp_path: Path) -> None:
    m = _model("""
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2, 12] x, int64[2] s) => (y) <int64[2] s = {6, 4}> { y = Reshape(x, s) }
    """)
    src, out = tmp_path / "m.onnx", tmp_path / "out.onnx"
    onnx.save(m, src)
    infer_shapes_path(src, out)
    assert _dims(_vi(onnx.load(out), "y")) == [6, 4]
    infer_shapes_path(src, out, initializers_as_constants=False)
    assert all(isinstance(d, str) for d in _dims(_vi(onnx.load(out), "y")))


def test_an_extent_past_int64_is_an_error_in_strict_mode_and_unknown_otherwise() -> None:
    big = (1 << 63) - 1
    g = helper.make_graph(
        [helper.make_node("Concat", ["a", "b"], ["c"], axis=0)],
        "g",
        [
            helper.make_tensor_value_info("a", TensorProto.FLOAT, [big]),
            helper.make_tensor_value_info("b", TensorProto.FLOAT, [1]),
        ],
        [helper.make_tensor_value_info("c", TensorProto.FLOAT, None)],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    (d,) = _dims(_vi(infer_shapes(m), "c"))
    assert not isinstance(d, int)  # unknown: no name or a fresh one
    with pytest.raises(InferenceError, match="overflow"):
        infer_shapes(m, strict_mode=True)


def test_strict_mode_raises_on_initializer_data_in_the_wrong_field() -> None:
    bad = TensorProto(name="d", data_type=TensorProto.FLOAT, int64_data=[2])  # float data belongs in float_data
    g = helper.make_graph(
        [helper.make_node("Range", ["s", "l", "d"], ["y"])],
        "g",
        [],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [
            helper.make_tensor("s", TensorProto.FLOAT, (), [1.0]),
            helper.make_tensor("l", TensorProto.FLOAT, (), [5.0]),
            bad,
        ],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    infer_shapes(m)
    with pytest.raises(InferenceError, match="belong in float_data"):
        infer_shapes(m, strict_mode=True)


def test_infer_shapes_path_writes_the_inferred_model(tmp_path: Path) -> None:
    src = tmp_path / "m.onnx"
    onnx.save(RELU, src)
    infer_shapes_path(src, tmp_path / "out.onnx")
    assert _types(onnx.load(tmp_path / "out.onnx"))["a"] == "FLOAT, Nx3"
    infer_shapes_path(str(src))  # in place
    assert _types(onnx.load(src))["a"] == "FLOAT, Nx3"
    with pytest.raises(TypeError):
        infer_shapes_path(RELU)  # type: ignore[arg-type]


def test_exports() -> None:
    assert onnx_compat.InferenceError is onnx.shape_inference.InferenceError
