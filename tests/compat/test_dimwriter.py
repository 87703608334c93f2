"""The one dim writer (infer/core/dimwriter.py) in its three styles: annotate's ``expressions`` and
``strict``, and the drop-in's ``onnx``."""

from __future__ import annotations

import re

import onnx.parser
import pytest
from onnx import ModelProto, TensorProto, TypeProto, helper

import infer
from infer.core import dims as D
from infer.core.dimparse import is_identifier, parse_dim
from infer.core.dimtable import DimTable
from infer.core.dimwriter import INT64_MAX, DimWriter, TypeWriter, write_text
from infer.onnx_compat import infer_shapes

GENERATED = re.compile(r"unk__\d+\Z")

MODEL = """
<ir_version: 8, opset_import: ["" : 17]>
g (float[N, 3] x, float["past sequence", 3] p, bool[N] mask) => (twice, joined, nz) {
  twice = Concat <axis = 0> (x, x)
  joined = Concat <axis = 0> (x, p)
  nz = NonZero(mask)
}
"""


def _dims(tp: TypeProto) -> list[int | str | None]:
    return [d.dim_value if d.HasField("dim_value") else d.dim_param or None for d in tp.tensor_type.shape.dim]


def _written(m: ModelProto) -> dict[str, list[int | str | None]]:
    return {vi.name: _dims(vi.type) for vi in (*m.graph.value_info, *m.graph.output) if vi.type.HasField("tensor_type")}


def test_write_text_is_what_dimparse_reads_back() -> None:
    n, past = D.symbol("N"), D.symbol("past sequence")
    assert [write_text(d) for d in (None, 0, 5, -1, INT64_MAX, INT64_MAX + 1)] == [None, 0, 5, None, INT64_MAX, None]
    assert write_text(n) == "N" and write_text(past) == "past sequence"  # alone, a name is as declared
    for d in (D.add(n, 5), D.mul(2, past), D.add(D.floordiv(D.sub(n, 3), 2), 1), D.dmax(n, past)):
        text = write_text(d)
        assert isinstance(text, str)
        assert parse_dim(text, lambda name: D.symbol(name)) == d, text


def test_an_unknown_style_is_refused() -> None:
    with pytest.raises(ValueError, match="dims style"):
        DimWriter(DimTable(), "pretty")


def test_extents_past_int64_are_unknown_and_reported_where_written() -> None:
    write = DimWriter(DimTable(), "expressions")
    write.where = "value `v`"
    huge = D.mul(D.symbol("N"), 1 << 63)
    assert write(INT64_MAX) == INT64_MAX
    assert write(INT64_MAX + 1) is None and write(huge) is None
    assert write.overflows == [("value `v`", str(INT64_MAX + 1)), ("value `v`", D.to_str(huge))]
    types = TypeWriter(write)
    out = TypeProto()
    types.write(infer.core.types.TensorType(TensorProto.FLOAT, (2, huge)), out, "value `w`")
    assert _dims(out) == [2, None] and write.overflows[-1][0] == "value `w`"


def test_expressions_style_writes_the_extents_text() -> None:
    out = _written(infer.infer_model(onnx.parser.parse_model(MODEL)).model)
    assert out["twice"] == ["2*N", 3]
    assert out["joined"] == ["N + `past sequence`", 3]
    assert GENERATED.match(out["nz"][1])  # a fresh variable, by the engine's name for it
    table = DimTable(reserved=frozenset({"N", "past sequence"}), inputs=frozenset({"N", "past sequence"}))
    table.declared("N")
    table.declared("past sequence")
    assert table.declared(out["joined"][0]) == D.add(D.symbol("N"), D.symbol("past sequence"))


def test_strict_style_writes_identifiers_defined_in_the_table() -> None:
    result = infer.infer_model(onnx.parser.parse_model(MODEL), dims_style="strict")
    out = _written(result.model)
    for name, expected in (
        ("twice", D.mul(2, D.symbol("N"))),
        ("joined", D.add(D.symbol("N"), D.symbol("past sequence"))),
    ):
        ident = out[name][0]
        assert isinstance(ident, str) and is_identifier(ident)
        assert result.dims.get(ident).definition == expected


def test_onnx_style_names_what_it_cannot_write_as_declared() -> None:
    out = _written(infer_shapes(onnx.parser.parse_model(MODEL)))
    generated = [out["twice"][0], out["joined"][0], out["nz"][1]]
    assert all(isinstance(g, str) and GENERATED.match(g) for g in generated)
    assert len(set(generated)) == 3
    assert out["nz"][0] == 1


def _declaring(text: str, *value_info: tuple[str, list[int | str | None]]) -> ModelProto:
    m = onnx.parser.parse_model(text)
    m.graph.value_info.extend(helper.make_tensor_value_info(n, TensorProto.FLOAT, dims) for n, dims in value_info)
    return m


KEEP = """
<ir_version: 8, opset_import: ["" : 17]>
g (float[N, 3] x, float[3, 3] w, float[past, 4] a, float[seq, 4] b, float["past + seq", 4] z, bool[N] mask)
  => (int64[1, N] nz) {
  e = Relu(x)
  f = Concat <axis = 0> (x, w)
  g = Relu(x)
  h = Concat <axis = 0> (a, b)
  nz = NonZero(mask)
}
"""


def test_onnx_style_keeps_a_declared_name_where_it_denotes_the_extent() -> None:
    m = _declaring(KEEP, ("e", ["K", 3]), ("f", ["N", 3]), ("g", ["K", "L"]))
    out = _written(infer_shapes(m))
    assert out["e"] == ["K", 3]  # taken at the model's word: the engine records K = N
    assert GENERATED.match(out["f"][0])  # N against N + 3: provably another extent
    assert out["g"] == ["K", 3]  # an integer extent replaces a name, as in onnx
    assert out["h"] == ["past + seq", 4]  # an expression a declared name spells, as spelled


def test_onnx_style_does_not_give_an_unknown_extent_a_graph_inputs_name() -> None:
    # The output declares N, the extent of a graph input, on NonZero's count: nothing entails it,
    # and exporters name output axes after input axes of equal extent at export time.
    nz = _written(infer_shapes(onnx.parser.parse_model(KEEP)))["nz"]
    assert nz[0] == 1 and GENERATED.match(nz[1])


def test_annotate_writes_what_inference_found_not_the_declaration() -> None:
    m = _declaring(KEEP, ("e", ["K", 3]))
    assert _written(infer.infer_model(m).model)["e"] == ["N", 3]


# -- the names a model declares, from the limits scan (issue 42) ---------------------------------


def _hidden_graph_model(light: bool) -> ModelProto:
    """A node whose INT attribute also holds a graph declaring ``hidden``: protobuf keeps the
    field, the limits scan does not read it (an INT's payload is its number). ``light``: the
    attribute small enough to be decoded from its bytes, else read through protobuf."""
    inner = helper.make_graph([], "inner", [], [helper.make_tensor_value_info("h", TensorProto.FLOAT, ["hidden"])])
    attr = helper.make_attribute("axis", 0)
    attr.g.CopyFrom(inner)
    if not light:
        attr.doc_string = "x" * 200  # (past the size whose fields the decoder walks)
    node = helper.make_node("Softmax", ["x"], ["y"])
    node.attribute.append(attr)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    return helper.make_model(helper.make_graph([node], "g", [x], [y]), opset_imports=[helper.make_opsetid("", 18)])


def _function_subgraph_model() -> ModelProto:
    """A model-local function whose If holds branches declaring ``in_branch``, called once, and
    an input defaulted by an initializer declaring ``defaulted``."""
    out = helper.make_tensor_value_info("b", TensorProto.FLOAT, ["in_branch"])
    branch = helper.make_graph([helper.make_node("Identity", ["a"], ["b"])], "branch", [], [out])
    body = [helper.make_node("If", ["c"], ["r"], then_branch=branch, else_branch=branch)]
    fn = helper.make_function("local", "F", ["a", "c"], ["r"], body, [helper.make_opsetid("", 18)])
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N"])
    c = helper.make_tensor_value_info("c", TensorProto.BOOL, ["defaulted"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    init = helper.make_tensor("c", TensorProto.BOOL, [], [True])
    graph = helper.make_graph([helper.make_node("F", ["x", "c"], ["y"], domain="local")], "g", [x, c], [y], [init])
    opsets = [helper.make_opsetid("", 18), helper.make_opsetid("local", 1)]
    return helper.make_model(graph, opset_imports=opsets, functions=[fn])


def _declared_by_the_writer(model: ModelProto, initializers_as_constants: bool = False) -> tuple[tuple, tuple]:
    """What the drop-in's writer takes as declared (names taken, spellings of extents), told by the
    scan and read from the whole model."""
    from infer import onnx_compat

    proto = ModelProto()
    proto.CopyFrom(model)
    engine = onnx_compat._engine(proto, None, True, initializers_as_constants)
    told = onnx_compat._dim_writer(proto, engine)._names
    read = DimWriter(engine.state.table, "onnx", proto, engine.placement.conflicts)._names
    assert told is not None and read is not None
    return (told.taken, told.spellings), (read.taken, read.spellings)


@pytest.mark.parametrize("light", [True, False])
def test_a_graph_hidden_in_a_scalar_attribute_sends_the_writer_to_the_model(light: bool) -> None:
    from infer.core.limits import Limits
    from infer.load.scan import scan

    model = _hidden_graph_model(light)
    assert scan(model, Limits()).hidden_graphs
    told, read = _declared_by_the_writer(model)
    assert "hidden" in told[0] and told == read


@pytest.mark.parametrize("as_constants", [False, True])
def test_names_declared_in_function_bodies_and_defaulted_inputs_are_taken(as_constants: bool) -> None:
    told, read = _declared_by_the_writer(_function_subgraph_model(), as_constants)
    assert {"in_branch", "defaulted", "N"} <= set(told[0]) and told == read


def test_the_writer_takes_what_the_model_declares_on_every_corpus_model() -> None:
    """The scan's names, completed, are the names reading every graph of the model gives."""
    from pathlib import Path

    for path in sorted((Path(__file__).parents[1] / "models").glob("*.onnx")):
        told, read = _declared_by_the_writer(onnx.load(str(path)))
        assert told == read, path.name
