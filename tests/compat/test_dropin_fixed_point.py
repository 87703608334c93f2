"""The drop-in is a fixed point, and names extents by what they are (docs/onnx-compat.md, "Naming").

Inferring the drop-in's own output gives it back byte for byte, on every model of the corpus
(tests/models and tests/models/more); the names it writes survive unrelated edits of the graph;
and onnxruntime's symbolic shape inference reads them, both on the drop-in's output and when it
calls the drop-in for each node in place of onnx's inference (as it does once a tool has swapped
``onnx.shape_inference.infer_shapes``), and contradicts none of the shapes the drop-in wrote.
The default run takes a third of the models for the checks on each (the same third for all, a
different one each ISO week), ``-m slow`` the others (tests/support/rotation.py).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import onnx
import onnx.parser
import onnx.shape_inference
import pytest
from onnx import ModelProto, TypeProto, helper

from infer import onnx_compat
from infer.onnx_compat import infer_shapes
from tests.support.rotation import weekly_share
from tests.support.runtime import MODELS, manifest

SymbolicShapeInference = pytest.importorskip("onnxruntime.tools.symbolic_shape_infer").SymbolicShapeInference

CORPUS = [e["path"] for e in manifest(MODELS)]
MORE = [e["path"] for e in manifest(MODELS / "more")]
INCOMPLETE = "Incomplete symbolic shape inference"  # what onnxruntime raises where it cannot finish


def _ids(paths: list[Path]) -> list[str]:
    return [str(p.relative_to(MODELS)) for p in paths]


# The models the default run takes, a third by ISO week, the same third for every test here (the
# drop-in's output of each is computed once); -m slow takes the others. tests/clients/
# test_ort_compat.py holds the fixed point of the same writer on every corpus model in every run.
WEEKLY = weekly_share(CORPUS + MORE, _ids(CORPUS + MORE), "drop-in")


@cache
def _model(path: Path) -> ModelProto:
    return onnx.load(str(path), load_external_data=False)


@cache
def _inferred(path: Path) -> bytes:
    return infer_shapes(_model(path)).SerializeToString()


def _parsed(data: bytes) -> ModelProto:
    m = ModelProto()
    m.ParseFromString(data)
    return m


def _types(m: ModelProto) -> dict[str, bytes]:
    """name -> serialized type, over value_info and outputs of every graph."""
    out: dict[str, bytes] = {}
    for path, g in _graphs(m.graph, "main"):
        for vi in (*g.input, *g.value_info, *g.output):
            if vi.HasField("type"):
                out[f"{path}:{vi.name}"] = vi.type.SerializeToString()
    return out


def _graphs(g: onnx.GraphProto, path: str) -> Iterator[tuple[str, onnx.GraphProto]]:
    yield path, g
    for node in g.node:
        for a in node.attribute:
            if a.HasField("g"):
                yield from _graphs(a.g, f"{path}/{node.output[0]}:{a.name}")


# -- the fixed point ------------------------------------------------------------------------------


@pytest.mark.parametrize("path", WEEKLY)
def test_inferring_the_output_again_changes_nothing(path: Path) -> None:
    once = _inferred(path)
    assert infer_shapes(_parsed(once)).SerializeToString() == once


@pytest.mark.parametrize("path", CORPUS[::4], ids=_ids(CORPUS[::4]))
def test_fixed_point_with_data_propagation_and_initializers_as_defaults(path: Path) -> None:
    for options in ({"data_prop": True}, {"initializers_as_constants": False}):
        once = infer_shapes(_model(path), **options).SerializeToString()
        assert infer_shapes(_parsed(once), **options).SerializeToString() == once, options


CONTROL_FLOW = """
<ir_version: 8, opset_import: ["" : 17]>
g (float[N, 4] x, bool c, int64 trips, bool[N] mask) => (y, z, w) {
  nz = NonZero(mask)
  y = If (c) <then_branch = t () => (t_out) { t_out = Concat <axis = 0> (x, x) },
              else_branch = e () => (e_out) { e_out = Identity(x) }>
  cond = Identity(c)
  z, w = Loop (trips, cond, x) <body = b (int64 i, bool ci, float[K, 4] acc) => (co, grown, scan) {
    co = Identity(ci)
    grown = Concat <axis = 0> (acc, x)
    scan = Shape(grown)
  }>
}
"""


def test_fixed_point_through_subgraphs_and_unknown_extents() -> None:
    once = infer_shapes(onnx.parser.parse_model(CONTROL_FLOW))
    assert any(d.dim_param.startswith("unk__") for vi in once.graph.value_info for d in vi.type.tensor_type.shape.dim)
    assert infer_shapes(once).SerializeToString() == once.SerializeToString()


MAY_BE_ZERO = """
<ir_version: 8, opset_import: ["" : 17]>
g (bool[N] mask) => (z) {
  nz = NonZero(mask)
  shape = Shape(nz)
  one = Constant <value = int64 {1}> ()
  count = Gather(shape, one)
  at_most_one = Min(count, one)
  zero = Constant <value = int64[1] {0}> ()
  extent = Unsqueeze(at_most_one, zero)
  z = ConstantOfShape(extent)
}
"""


def test_fixed_point_where_an_unknown_extent_may_be_zero() -> None:
    once = infer_shapes(onnx.parser.parse_model(MAY_BE_ZERO), data_prop=True)
    assert infer_shapes(once, data_prop=True).SerializeToString() == once.SerializeToString()


# -- names that survive edits ---------------------------------------------------------------------


def _with_unrelated_nodes(m: ModelProto) -> ModelProto:
    """``m`` with a NonZero (an extent no one knows) and a Shape of it put before every node."""
    out = ModelProto()
    out.CopyFrom(m)
    first = out.graph.input[0].name
    out.graph.node.insert(0, helper.make_node("Shape", ["__unrelated_nz"], ["__unrelated_shape"]))
    out.graph.node.insert(0, helper.make_node("NonZero", [first], ["__unrelated_nz"]))
    return out


def _same_names(a: ModelProto, b: ModelProto) -> list[str]:
    """The values typed in both whose written types differ."""
    ta, tb = _types(a), _types(b)
    return [name for name in ta.keys() & tb.keys() if ta[name] != tb[name]]


@pytest.mark.parametrize("path", WEEKLY[: len(CORPUS)])
def test_names_survive_adding_or_removing_an_unrelated_node(path: Path) -> None:
    plain = _parsed(_inferred(path))
    edited = infer_shapes(_with_unrelated_nodes(_model(path)))
    assert any(
        d.dim_param
        for vi in edited.graph.value_info
        if vi.name == "__unrelated_nz"
        for d in vi.type.tensor_type.shape.dim
    )
    assert _same_names(plain, edited) == []


def test_names_in_subgraphs_survive_nodes_put_before_their_node() -> None:
    m = onnx.parser.parse_model(CONTROL_FLOW)
    plain = infer_shapes(m)
    edited = infer_shapes(_with_unrelated_nodes(m))  # the If and the Loop move down two places
    assert _same_names(plain, edited) == []
    assert len(_types(plain)) > 10


def test_equal_extents_share_a_name_and_distinct_ones_do_not() -> None:
    m = onnx.parser.parse_model("""
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N, 3] x, float[M, 3] u) => (a, b, c) {
      a = Concat <axis = 0> (x, x)
      b = Concat <axis = 0> (x, x)
      c = Concat <axis = 0> (x, u)
    }
    """)
    out = {vi.name: vi.type.tensor_type.shape.dim[0].dim_param for vi in infer_shapes(m).graph.value_info}
    assert out["a"] == out["b"] != out["c"]
    assert all(name.startswith("unk__") for name in out.values())


# -- onnxruntime's symbolic shape inference ------------------------------------------------------


@pytest.fixture
def quiet_ort(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """onnxruntime writes the partial model to the working directory when it gives up, and logs
    a warning for each extent it cannot merge."""
    monkeypatch.chdir(tmp_path)
    logging.disable(logging.WARNING)
    yield
    logging.disable(logging.NOTSET)


def _ort(m: ModelProto, auto_merge: bool) -> tuple[str, ModelProto | None]:
    """onnxruntime's verdict: ``ok`` and its model, or the exception it raised."""
    try:
        return "ok", SymbolicShapeInference.infer_shapes(m, auto_merge=auto_merge)
    except Exception as e:  # onnxruntime raises bare Exceptions and assertions
        return f"{type(e).__name__}: {e}", None


def _tensor_types(m: ModelProto) -> dict[str, tuple[int, list[int | str | None] | None]]:
    out = {}
    for vi in (*m.graph.value_info, *m.graph.output):
        if vi.type.WhichOneof("value") == "tensor_type":
            tt = vi.type.tensor_type
            dims = [d.dim_value if d.HasField("dim_value") else d.dim_param or None for d in tt.shape.dim]
            out[vi.name] = (tt.elem_type, dims if tt.HasField("shape") else None)
    return out


def _contradictions(ours: ModelProto, theirs: ModelProto) -> list[str]:
    """Values whose element type, rank or an integer extent onnxruntime gives otherwise."""
    mine = _tensor_types(ours)
    out = []
    for name, (elem, dims) in _tensor_types(theirs).items():
        if name not in mine:
            continue
        my_elem, my_dims = mine[name]
        if elem and my_elem and elem != my_elem:
            out.append(f"{name}: element type {my_elem} against {elem}")
        elif dims is not None and my_dims is not None:
            if len(dims) != len(my_dims):
                out.append(f"{name}: rank {len(my_dims)} against {len(dims)}")
            elif any(isinstance(a, int) and isinstance(b, int) and a != b for a, b in zip(my_dims, dims)):
                out.append(f"{name}: {my_dims} against {dims}")
    return out


@pytest.mark.usefixtures("quiet_ort")
@pytest.mark.parametrize("path", WEEKLY)
def test_onnxruntime_reads_the_output_and_agrees(path: Path) -> None:
    ours = _parsed(_inferred(path))
    for auto_merge in (False, True):
        verdict, theirs = _ort(ours, auto_merge)
        if theirs is None:
            # Only where onnxruntime gives up as well after onnx's own inference.
            assert verdict == _ort(onnx.shape_inference.infer_shapes(_model(path)), auto_merge)[0], verdict
            assert INCOMPLETE in verdict
            continue
        assert _contradictions(ours, theirs) == [], auto_merge


@pytest.mark.slow
@pytest.mark.usefixtures("quiet_ort")
@pytest.mark.parametrize("path", CORPUS, ids=_ids(CORPUS))
def test_onnxruntime_calling_the_drop_in_for_each_node(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """onnxruntime runs ``onnx.shape_inference.infer_shapes`` on a one-node model per node; with
    the drop-in swapped in it reads the drop-in's names (``unk__`` as unknown, its own spellings
    such as ``sequence + 5`` as its own) and must not fail where it does not after onnx."""
    original = onnx.shape_inference.infer_shapes
    model = _model(path)
    for auto_merge in (False, True):
        with monkeypatch.context() as patch:
            patch.setattr(onnx.shape_inference, "infer_shapes", onnx_compat.infer_shapes)
            verdict, theirs = _ort(model, auto_merge)
        if theirs is None:
            assert verdict == _ort(original(model), auto_merge)[0], verdict
            continue
        assert _contradictions(_parsed(_inferred(path)), theirs) == [], auto_merge


def test_onnxruntime_spellings_on_inputs_come_back_as_they_were() -> None:
    """A one-node model as onnxruntime builds it: its dims are the strings it computed with sympy,
    which it matches by text; a dim passed through is written back unchanged."""
    dims_a = [1, "sequence + 5", "floor(h/2) + 1", "unk__3"]
    dims_b = ["Max(a, b)", 1, "floor(h/2) + 1", "unk__3"]
    for extra in ([], [helper.make_tensor_value_info("s", onnx.TensorProto.FLOAT, ["sequence", "h"])]):
        g = helper.make_graph(
            [helper.make_node("Add", ["a", "b"], ["c"]), helper.make_node("Relu", ["a"], ["r"])],
            "one_node",
            [
                helper.make_tensor_value_info("a", onnx.TensorProto.FLOAT, dims_a),
                helper.make_tensor_value_info("b", onnx.TensorProto.FLOAT, dims_b),
                *extra,
            ],
            [
                helper.make_tensor_value_info("c", onnx.TensorProto.FLOAT, None),
                helper.make_tensor_value_info("r", onnx.TensorProto.FLOAT, None),
            ],
        )
        out = infer_shapes(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))
        shapes = {o.name: _dims(o.type) for o in out.graph.output}
        assert shapes == {"c": ["Max(a, b)", "sequence + 5", "floor(h/2) + 1", "unk__3"], "r": dims_a}, extra


def _dims(tp: TypeProto) -> list[int | str | None]:
    return [d.dim_value if d.HasField("dim_value") else d.dim_param or None for d in tp.tensor_type.shape.dim]
