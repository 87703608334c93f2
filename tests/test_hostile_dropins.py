"""The drop-ins on hostile input (issue 27, item 7): long integer lists cost about one copy of
the model, not several; a ModelProto past ``max_model_bytes`` is refused like a file; strings
that are not UTF-8 are inferred as onnx infers them, never an ``AttributeError``.

The cost is counted as work, not seconds: the bytes protobuf copies and serializes during one
call (``_protobuf_work``), against the size of the model. ``python -m benchmarks.lists`` times it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import onnx
import pytest
from onnx import GraphProto, ModelProto, NodeProto, TensorProto, helper
from onnx.shape_inference import InferenceError

import infer
from benchmarks import hostile
from infer import onnx_compat, ort_compat
from infer.load import loader, utf8
from infer.load.utf8 import weightless_bytes
from infer.walk import reuse

SIZE = 2_000_000  # bytes of list in each model: a million elements or more

# -- 1. long integer lists ------------------------------------------------------------------------

_CLASSES = (ModelProto, GraphProto, NodeProto, TensorProto)


@contextmanager
def _protobuf_work() -> Iterator[dict[str, int]]:
    """Counts, while inside, of the bytes protobuf serializes (``SerializeToString``, and
    ``ByteSize``, which upb computes by serializing) and copies (``CopyFrom``, ``MergeFrom``)
    on the model's messages, and of whole-model copies."""
    work = {"serialized": 0, "copied": 0, "model_copies": 0}
    saved = [
        (cls, name, getattr(cls, name))
        for cls in _CLASSES
        for name in ("SerializeToString", "ByteSize", "CopyFrom", "MergeFrom")
    ]

    def counting(cls: type, name: str, original):
        def serialize(self, *args, **kwargs):
            out = original(self, *args, **kwargs)
            work["serialized"] += out if isinstance(out, int) else len(out)
            return out

        def copy(self, other):
            work["copied"] += _size(other)
            work["model_copies"] += cls is ModelProto
            return original(self, other)

        return copy if name in ("CopyFrom", "MergeFrom") else serialize

    for cls, name, original in saved:
        setattr(cls, name, counting(cls, name, original))
    try:
        yield work
    finally:
        for cls, name, original in saved:
            setattr(cls, name, original)


_BYTE_SIZE = {cls: cls.ByteSize for cls in _CLASSES}  # the uncounted originals


def _size(message) -> int:
    return _BYTE_SIZE[type(message)](message)


LIST_CASES = ["custom_ints", "constant_value_ints", "constant_int64_data", "initializer_int64_data"]


@pytest.mark.parametrize("case", LIST_CASES)
@pytest.mark.parametrize("dropin", ["onnx_compat", "ort_compat"])
def test_a_long_integer_list_costs_one_copy_of_the_model(case, dropin):
    """A tool's first call copies the model once (its output) and serializes its text once (the
    key of ``infer.walk.reuse`` and the nodes the engine reads), the initializers measured once for
    the key: no second copy for the engine, none of the nodes for the weightless bytes, no
    second serialization of them to keep the answer."""
    model = ModelProto.FromString(hostile.CASES[case](SIZE))
    size = model.ByteSize()
    call = {
        "onnx_compat": lambda: onnx_compat.infer_shapes(model, data_prop=True),
        "ort_compat": lambda: ort_compat.SymbolicShapeInference.infer_shapes(model),
    }[dropin]
    reuse.clear()
    with _protobuf_work() as work:
        try:
            call()
        except ort_compat.IncompleteInference:  # a custom operator's output: incomplete, as it is
            assert case == "custom_ints" and dropin == "ort_compat"
    assert work["model_copies"] == 1, work
    assert work["copied"] <= 1.05 * size, work
    assert work["serialized"] <= 1.1 * size, work


# -- 2. a ModelProto past max_model_bytes ---------------------------------------------------------


def test_a_model_proto_past_max_model_bytes_is_refused_like_its_bytes():
    data = hostile.CASES["initializer_int64_data"](SIZE)
    model = ModelProto.FromString(data)
    for source in (data, model):
        with pytest.raises(infer.ModelLoadError, match="max_model_bytes"):
            infer.infer_model(source, max_model_bytes=SIZE // 2)
        assert infer.infer_model(source, max_model_bytes=2 * SIZE).value("y").type.elem == TensorProto.INT64


def test_the_size_of_a_model_proto_is_its_serialized_size():
    """``loader.model_bytes`` counts what protobuf would write (within the length prefix of the
    graph, which it leaves out), and stops counting once past the limit."""
    for case in ("initializer_int64_data", "initializer_raw", "constant_sparse", "long_names"):
        model = ModelProto.FromString(hostile.CASES[case](100_000))
        size = loader.model_bytes(model, weightless_bytes(model), 1 << 40)
        assert 0 <= model.ByteSize() - size <= 4, case


# -- 3. strings that are not UTF-8 ----------------------------------------------------------------

BAD = b"Q\xff\xfeQ"


def _with_bad_string(where: str) -> ModelProto:
    """``t = Relu(x); y = Relu(t)``, with the string ``where`` names not UTF-8 (written as
    ``QQQQ``, then patched in the serialized model)."""
    x = helper.make_tensor_value_info(
        "QQQQ" if where == "input" else "x", TensorProto.FLOAT, [2, "QQQQ" if where == "dim" else 3]
    )
    y = helper.make_tensor_value_info("QQQQ" if where == "output" else "y", TensorProto.FLOAT, None)
    first = helper.make_node(
        "QQQQ" if where == "op_type" else "Relu",
        [x.name],
        ["QQQQ" if where == "value" else "t"],
        name="QQQQ" if where == "node name" else "n",
        doc_string="QQQQ" if where == "doc" else None,
    )
    second = helper.make_node("Relu", [first.output[0]], [y.name])
    graph = helper.make_graph([first, second], "g", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    if where == "metadata":
        helper.set_model_props(model, {"k": "QQQQ"})
    data = model.SerializeToString()
    assert b"QQQQ" in data
    return ModelProto.FromString(data.replace(b"QQQQ", BAD))


WHERE = ["value", "input", "output", "dim", "node name", "doc", "op_type", "metadata"]


def _types(model: ModelProto) -> dict:
    g = model.graph
    return {vi.name: vi.type.SerializeToString() for vi in (*g.value_info, *g.output)}


@pytest.mark.parametrize("where", WHERE)
def test_a_string_that_is_not_utf8_is_inferred_as_onnx_infers_it(where, tmp_path):
    """onnx's inference returns such a model inferred, the bytes kept where they were: so do
    the drop-ins (``infer_model`` refuses it: ``ModelLoadError``)."""
    model = _with_bad_string(where)
    theirs = onnx.shape_inference.infer_shapes(model)
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    onnx_compat.infer_shapes_path(path, tmp_path / "out.onnx")
    reuse.clear()
    outputs = [
        onnx_compat.infer_shapes(model),
        onnx_compat.infer_shapes(model),  # the second one kept
        onnx_compat.infer_shapes(model.SerializeToString()),
        onnx_compat.infer_shapes(model, check_type=True, strict_mode=True, data_prop=True),
        onnx.load(tmp_path / "out.onnx"),
    ]
    if where != "op_type":  # (a node no operator set defines: incomplete, as onnxruntime's tool says)
        outputs.append(ort_compat.SymbolicShapeInference.infer_shapes(model))
    for ours in outputs:
        assert _types(ours) == _types(theirs)
        assert BAD in ours.SerializeToString()
        assert ours.graph.node[0] == model.graph.node[0] and ours.metadata_props == model.metadata_props
    with pytest.raises(infer.ModelLoadError, match="not valid UTF-8"):
        infer.infer_model(model)


def test_an_error_names_a_string_that_is_not_utf8_readably():
    """Where onnx fails (a node in a domain the model does not import, here one not UTF-8: onnx
    raises ``UnicodeDecodeError`` writing its message), the drop-ins raise ``InferenceError``."""
    model = _with_bad_string("value")
    model.graph.node[1].domain = "QQQQ"
    model = ModelProto.FromString(model.SerializeToString().replace(b"QQQQ", BAD))
    for call in (onnx_compat.infer_shapes, ort_compat.SymbolicShapeInference.infer_shapes):
        with pytest.raises(InferenceError, match=r"Q\\xff\\xfeQ") as e:
            call(model)
        assert "onnx_infer_non_utf8" not in str(e.value)


def test_a_name_spelled_like_a_placeholder_keeps_its_own_value():
    model = _with_bad_string("value")
    placeholders = utf8.text_only(ModelProto.FromString(model.SerializeToString()))
    (name,) = placeholders
    model.graph.node[0].name = name  # the model spells the placeholder its bad string would get
    out = onnx_compat.infer_shapes(model)
    assert out.graph.node[0].name == name and out.graph.node[0].output[0] == BAD
