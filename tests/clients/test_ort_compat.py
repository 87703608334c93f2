"""The contract of ``infer.ort_compat``, the stand-in for onnxruntime's ``SymbolicShapeInference``."""

from __future__ import annotations

import sys

import onnx
import onnx.parser
import pytest
from onnx import ModelProto, helper

from infer import ort_compat
from infer.ort_compat import INCOMPLETE, IncompleteInference, SymbolicShapeInference, SymbolicShapeInferenceHelper
from infer.out.verify import Session
from tests.clients.common import ENTRIES, IDS, load

symbolic_shape_infer = pytest.importorskip("onnxruntime.tools.symbolic_shape_infer")


def _model(text: str) -> ModelProto:
    return onnx.parser.parse_model(text)


def _dims(vi: onnx.ValueInfoProto) -> list[int | str | None]:
    return [
        d.dim_value if d.HasField("dim_value") else d.dim_param if d.HasField("dim_param") else None
        for d in vi.type.tensor_type.shape.dim
    ]


def _node_outputs(g: onnx.GraphProto) -> list[str]:
    return [o for n in g.node for o in n.output if o]


IF_MODEL = _model("""
<ir_version: 8, opset_import: ["" : 17]>
g (float[N, 3] x, bool c) => (float[N, ?] y) {
    a = Relu(x)
    y = If(c) <
        then_branch = t () => (ty) { ty = Concat<axis = 1>(a, a) },
        else_branch = e () => (ey) { ey = Concat<axis = 1>(a, a) }
    >
}
""")


def test_returns_a_copy_with_every_node_output_listed_and_named() -> None:
    before = IF_MODEL.SerializeToString()
    out = SymbolicShapeInference.infer_shapes(IF_MODEL)
    assert IF_MODEL.SerializeToString() == before and out is not IF_MODEL
    listed = {vi.name: vi for vi in out.graph.value_info}
    # As onnxruntime's tool: graph outputs are listed in value_info too, and typed in place.
    assert set(_node_outputs(out.graph)) <= set(listed)
    assert _dims(listed["y"]) == _dims(out.graph.output[0]) == ["N", 6]
    assert _dims(listed["a"]) == ["N", 3]
    for attr in out.graph.node[1].attribute:  # subgraphs too
        sub = {vi.name: vi for vi in attr.g.value_info}
        assert _dims(sub[attr.g.output[0].name]) == ["N", 6]


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_corpus_complete_accepted_by_onnxruntime_and_a_fixed_point(entry) -> None:
    """Every corpus model is inferred completely (onnxruntime's own tool gives up on some at its
    default ``auto_merge=False``), onnxruntime loads the annotated model (it merges value_info
    with its own inference and refuses a contradiction), and inferring the output again writes
    the same model: tools that loop until the model stops changing are not kept looping."""
    model = load(entry)
    out = SymbolicShapeInference.infer_shapes(model)
    listed = {vi.name: vi for vi in out.graph.value_info}
    for name in _node_outputs(out.graph):
        assert name in listed, name
        assert all(d is not None for d in _dims(listed[name])), (name, _dims(listed[name]))
    onnx.checker.check_model(out, full_check=True)  # onnx's strict inference over our value_info
    Session(out)
    assert SymbolicShapeInference.infer_shapes(out).SerializeToString() == out.SerializeToString()


def test_incomplete_raises_as_onnxruntime_does(tmp_path, monkeypatch) -> None:
    """An operator nothing can type: onnxruntime's tool raises its generic Exception; ours an
    Exception with the same message first, naming the value, with the model so far."""
    model = _model("""
    <ir_version: 8, opset_import: ["" : 17, "custom" : 1]>
    g (float[N, 3] x) => (y) { a = Relu(x) y = custom.Mystery(a) }
    """)
    monkeypatch.chdir(tmp_path)  # onnxruntime's tool leaves sym_shape_infer_temp.onnx behind
    with pytest.raises(Exception, match=f"^{INCOMPLETE}$"):
        symbolic_shape_infer.SymbolicShapeInference.infer_shapes(model)
    with pytest.raises(IncompleteInference, match=f"^{INCOMPLETE}: `y`") as raised:
        SymbolicShapeInference.infer_shapes(model)
    assert raised.value.values == ["y"]
    partial = {vi.name: _dims(vi) for vi in raised.value.model.graph.value_info}
    assert partial["a"] == ["N", 3]
    # onnxruntime's tool saved its partial model (with external data); ours wrote nothing more.
    assert "sym_shape_infer_temp.onnx" in {p.name for p in tmp_path.iterdir()}
    left = {p.name for p in tmp_path.iterdir()}
    SymbolicShapeInference.infer_shapes(IF_MODEL)
    with pytest.raises(IncompleteInference):
        SymbolicShapeInference.infer_shapes(model)
    assert {p.name for p in tmp_path.iterdir()} == left


def test_bad_input_is_a_one_line_type_error() -> None:
    with pytest.raises(TypeError, match=r"^SymbolicShapeInference takes an onnx\.ModelProto, not str$"):
        SymbolicShapeInference.infer_shapes("model.onnx")


def test_domain_used_but_not_imported_is_read_at_version_1() -> None:
    """onnxruntime's transformers optimizer infers models halfway through fusing, before it
    imports com.microsoft for the fused operators; the result is not given the import."""
    model = _model("""
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N, 8] x) => (y) { a = Relu(x) y = com.microsoft.Gelu(a) }
    """)
    out = SymbolicShapeInference.infer_shapes(model)
    assert [(o.domain, o.version) for o in out.opset_import] == [("", 17)]
    assert _dims(out.graph.output[0]) == ["N", 8]
    assert out.graph.output[0].type.tensor_type.elem_type == onnx.TensorProto.FLOAT


def test_opset_below_7_is_inferred_not_refused() -> None:
    model = helper.make_model(
        helper.make_graph(
            [helper.make_node("Relu", ["x"], ["y"])],
            "g",
            [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["N", 2])],
            [helper.make_tensor_value_info("y", onnx.TensorProto.UNDEFINED, None)],
        ),
        opset_imports=[helper.make_opsetid("", 6)],
    )
    assert symbolic_shape_infer.SymbolicShapeInference.infer_shapes(model) is None  # onnxruntime refuses
    assert _dims(SymbolicShapeInference.infer_shapes(model).graph.output[0]) == ["N", 2]


def test_constructor_members_callers_build_on() -> None:
    """The members onnxruntime's transformers helper drives: _preprocess, run_, _infer_impl,
    known_vi_ and symbolic_dims_."""
    inference = SymbolicShapeInference(2**31 - 1, True, False, 0)
    inference._preprocess(IF_MODEL)
    runs = 0
    while inference.run_:
        assert inference._infer_impl() is True
        runs += 1
    assert runs == 1
    inference._update_output_from_vi()
    assert _dims(inference.known_vi_["a"]) == ["N", 3]
    assert inference.symbolic_dims_["N"].is_positive


def test_transformers_helper_binds_the_mapping() -> None:
    entry = next(e for e in ENTRIES if e["file"] == "bert_torchscript.onnx")
    h = SymbolicShapeInferenceHelper(load(entry))
    assert h.infer({"batch": 4, "not_in_the_model": 9}) is True
    assert h.get_edge_shape("last_hidden_state") == [4, "sequence", 32]
    assert h.compare_shape("last_hidden_state", "last_hidden_state")
    assert not h.compare_shape("last_hidden_state", "pooler_output")
    assert h.get_edge_shape("no such value") is None
    with pytest.raises(Exception, match="At least one shape is missed"):
        h.compare_shape("no such value", "last_hidden_state")


def test_install_patches_every_place_and_uninstall_restores() -> None:
    import onnxruntime.transformers.shape_infer_helper as pkg_helper

    originals = (symbolic_shape_infer.SymbolicShapeInference, pkg_helper.SymbolicShapeInferenceHelper)
    infer_shapes = onnx.shape_inference.infer_shapes
    with ort_compat.installed(onnx_shape_inference=True) as patched:
        assert "onnxruntime.tools.symbolic_shape_infer.SymbolicShapeInference" in patched
        assert "onnx.shape_inference.infer_shapes" in patched
        assert symbolic_shape_infer.SymbolicShapeInference is SymbolicShapeInference
        # The copies onnxruntime.transformers imports by file path, as top-level modules.
        assert sys.modules["symbolic_shape_infer"].SymbolicShapeInference is SymbolicShapeInference
        assert sys.modules["shape_infer_helper"].SymbolicShapeInferenceHelper is SymbolicShapeInferenceHelper
        assert pkg_helper.SymbolicShapeInferenceHelper is SymbolicShapeInferenceHelper
        ort_compat.install()  # twice: the originals are kept once
    assert (symbolic_shape_infer.SymbolicShapeInference, pkg_helper.SymbolicShapeInferenceHelper) == originals
    assert onnx.shape_inference.infer_shapes is infer_shapes
    with pytest.raises(RuntimeError), ort_compat.installed():
        raise RuntimeError
    assert symbolic_shape_infer.SymbolicShapeInference is originals[0]
