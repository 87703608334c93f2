"""infer.load.nodeview: node views decoded from serialized bytes equal those read through protobuf."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from onnx import AttributeProto, helper

import infer
from infer.load.nodeview import _attribute_kind, light_nodes, read_light_nodes, read_nodes
from infer.load.utf8 import weightless_bytes

MODELS = Path(__file__).parent / "models"
FIELDS = ("inputs", "outputs", "op_type", "domain", "attr_types", "has_subgraph", "has_ref", "memo_base")


def _fields(views: list) -> list[tuple]:
    return [tuple(getattr(v, f) for f in FIELDS) + (v.node,) for v in views]


def _both(model: onnx.ModelProto) -> tuple[list, list | None]:
    light = light_nodes(weightless_bytes(model))
    assert light is not None
    return read_nodes(model.graph.node), read_light_nodes(model.graph.node, light)


EXPORTED = sorted(MODELS.glob("*_torchscript.onnx"))[:6] + [MODELS.parent.parent / "examples" / "bert_tiny.onnx"]


@pytest.mark.parametrize("path", EXPORTED, ids=lambda p: p.stem)
def test_decoded_views_equal_protobuf_views_on_exported_models(path: Path) -> None:
    model = onnx.load(path, load_external_data=False)
    by_protobuf, decoded = _both(model)
    assert decoded is not None
    assert _fields(decoded) == _fields(by_protobuf)


def _model(nodes: list[onnx.NodeProto]) -> onnx.ModelProto:
    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)
    return helper.make_model(helper.make_graph(nodes, "g", [x], [y]))


def test_every_kind_of_attribute_and_field() -> None:
    body = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["z"])],
        "b",
        [],
        [helper.make_tensor_value_info("z", onnx.TensorProto.FLOAT, None)],
    )
    ref = AttributeProto(name="alpha", ref_attr_name="a", type=AttributeProto.FLOAT)
    long_name = "n" * 300  # a length of two varint bytes
    nodes = [
        helper.make_node("If", ["c"], ["y"], then_branch=body, else_branch=body),
        helper.make_node("Constant", [], ["k"], value=helper.make_tensor("v", 1, [2], [1.0, 2.0])),
        helper.make_node("Split", ["x", ""], [long_name, "", "w"], axis=0, domain="ai.onnx", name="s"),
        helper.make_node("Custom", ["x"], ["q"], domain="my.domain", overload="v2", names=["a", "b"]),
    ]
    nodes[3].attribute.append(ref)
    by_protobuf, decoded = _both(_model(nodes))
    assert decoded is not None and _fields(decoded) == _fields(by_protobuf)
    assert [v.has_subgraph for v in decoded] == [True, False, False, False]
    assert decoded[3].has_ref and decoded[3].memo_base is None
    assert decoded[2].domain == "" and decoded[2].outputs == (long_name, "", "w")


def test_what_the_decoder_leaves_to_protobuf() -> None:
    model = _model([helper.make_node("Relu", ["x"], ["y"])])
    light = light_nodes(weightless_bytes(model))
    assert light is not None and read_light_nodes(model.graph.node, list(light)) is not None
    # An unknown varint field (number 11) in a node: not decoded here.
    odd = [light[0] + bytes([11 << 3, 1])]
    assert read_light_nodes(model.graph.node, odd) is None
    # Another number of nodes than the model has.
    assert read_light_nodes(model.graph.node, []) is None
    # The views consume the bytes they are read from.
    light = light_nodes(weightless_bytes(model))
    assert read_light_nodes(model.graph.node, light) is not None and light == [None]


def test_attribute_kind_reads_type_and_reference() -> None:
    a = helper.make_attribute("axis", 1)
    assert _attribute_kind(a.SerializeToString()) == (AttributeProto.INT, False, False)
    r = AttributeProto(name="axis", ref_attr_name="ax", type=AttributeProto.INT)
    assert _attribute_kind(r.SerializeToString()) == (AttributeProto.INT, True, False)
    empty_ref = AttributeProto(name="axis", ref_attr_name="", type=AttributeProto.INT, i=3)
    assert _attribute_kind(empty_ref.SerializeToString()) == (AttributeProto.INT, False, False)
    untyped = AttributeProto(name="axis", i=3)
    assert _attribute_kind(untyped.SerializeToString()) == (AttributeProto.UNDEFINED, False, False)
    assert _attribute_kind(b"\x0a\x05ab") is None  # truncated


def test_attribute_kind_tells_a_graph_the_scan_does_not_read() -> None:
    """A graph held by an attribute whose type carries none (``Views.hidden_graphs``), whether in
    ``g`` (even empty) or in ``graphs``; a GRAPH or GRAPHS attribute's is the scan's to read."""
    hidden = AttributeProto(name="axis", type=AttributeProto.INT, i=1)
    hidden.g.SetInParent()
    assert _attribute_kind(hidden.SerializeToString()) == (AttributeProto.INT, False, True)
    listed = AttributeProto(name="t", type=AttributeProto.TENSOR)
    listed.graphs.add()
    assert _attribute_kind(listed.SerializeToString()) == (AttributeProto.TENSOR, False, True)
    body = helper.make_attribute("body", helper.make_graph([], "b", [], []))
    assert _attribute_kind(body.SerializeToString()) == (AttributeProto.GRAPH, False, False)


def test_inference_is_the_same_either_way() -> None:
    model = onnx.load(MODELS.parent.parent / "examples" / "bert_tiny.onnx", load_external_data=False)
    decoded = infer.infer_model(model)  # the loader hands the engine the serialized nodes
    from infer.walk.engine import Engine

    engine = Engine(model)  # reads the nodes through protobuf
    engine.run()
    assert {n: str(v.type) for n, v in engine.state.records["main"].values.items()} == {
        n: str(decoded.type_of(n)) for n in engine.state.records["main"].values
    }


def test_repeated_node_names_either_way() -> None:
    names = ["a", "b", "a", "", "", "c", "a", "b"]  # empty names are no names: never repeats
    nodes = [helper.make_node("Relu", [f"x{k}"], [f"x{k + 1}"], name=n or None) for k, n in enumerate(names)]
    by_protobuf, decoded = _both(_model(nodes))
    assert by_protobuf.renamed == (2, 6, 7)
    assert decoded is not None and decoded.renamed == (2, 6, 7)
    unique = [helper.make_node("Relu", [f"x{k}"], [f"x{k + 1}"], name=f"n{k}") for k in range(50)]
    assert read_nodes(unique).renamed == ()


# -- nodes that differ in their names only (issue 42) -------------------------------------------


def _layers(n: int) -> list[onnx.NodeProto]:
    """``n`` repeated layers: their nodes differ in their names only, but one output left out."""
    nodes = []
    for k in range(n):
        nodes.append(helper.make_node("Softmax", [f"x{k}"], [f"s{k}"], axis=-1, name=f"/l{k}/softmax"))
        outs = [f"a{k}", f"b{k}"] if k % 3 else [f"a{k}", ""]  # (another output given: another memo key)
        nodes.append(helper.make_node("Split", [f"s{k}"], outs, axis=0, name=f"/l{k}/split"))
        nodes.append(helper.make_node("Add", [f"a{k}", f"b{k}"], [f"x{k + 1}"], name=f"/l{k}/add"))
    return nodes


def test_what_follows_the_names_is_decoded_once_a_read(monkeypatch: pytest.MonkeyPatch) -> None:
    from infer.load import nodeview

    model = _model(_layers(20))
    light = light_nodes(weightless_bytes(model))
    assert light is not None
    calls: list[int] = []
    fields = nodeview._fields
    monkeypatch.setattr(nodeview, "_fields", lambda *a: calls.append(1) or fields(*a))
    monkeypatch.setattr(nodeview.DECODED, "enabled", False)
    decoded = read_light_nodes(model.graph.node, light)
    assert len(calls) == 3  # the operator and attributes of Softmax, Split and Add
    assert decoded is not None and _fields(decoded) == _fields(read_nodes(model.graph.node))
    split = [v for v in decoded if v.op_type == "Split"]
    assert split[0].memo_base is not None and split[0].memo_base[3] == (True, False)
    assert split[1].memo_base is not None and split[1].memo_base[3] == (True, True)
    assert split[3].memo_base is split[0].memo_base  # (one object for equal keys)


def test_fields_out_of_protobufs_order_are_decoded_where_they_are() -> None:
    """A writer may put an input after the operator, or a name after the attributes: protobuf
    appends the input in order and keeps the last name, and so does the decoder."""
    from benchmarks import hostile
    from infer.load import nodeview

    axis = helper.make_attribute("axis", 0).SerializeToString()
    late = hostile._node(["x"], ["t"], "Concat", [axis], name="zero") + hostile._text(1, "x2")
    named = hostile._node(["t"], ["y"], "Identity", name="first") + hostile._text(3, "last")
    again = hostile._node(["t2"], ["y2"], "Concat", [axis]) + hostile._text(1, "x3")
    last = hostile._node(["y"], ["y3"], "Identity", name="last")
    data = hostile._model([late, named, again, last], [hostile._X], [hostile._Y])
    model = onnx.ModelProto.FromString(data)
    assert list(model.graph.node[0].input) == ["x", "x2"] and model.graph.node[1].name == "last"
    pieces = nodeview.split_model(data)
    assert pieces is not None
    decoded = read_light_nodes(model.graph.node, pieces.nodes)
    assert decoded is not None and _fields(decoded) == _fields(read_nodes(model.graph.node))
    assert decoded[2].inputs == ("t2", "x3")
    assert decoded.renamed == read_nodes(model.graph.node).renamed == (3,)
