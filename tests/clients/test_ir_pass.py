"""``infer.ir.InferShapesPass``: onnx-infer's types and shapes written into an ``onnx_ir.Model``.

Checked on the corpus converted with ``onnx_ir.load`` / ``onnx_ir.from_proto``: the pass writes
what ``infer.infer_model`` infers for every node output, without serializing the weights; the
expressions it writes parse in ``onnx_ir`` and evaluate to the extents onnxruntime computes; and
onnxscript's optimizer, run on the annotated model, gives a valid, equivalent model with no more
nodes than after ``onnx_ir``'s own ``ShapeInferencePass`` (onnx's inference).
"""

from __future__ import annotations

import onnx
import onnx.parser
import pytest

import infer
from infer.core import dims as D
from infer.core import types as T
from tests.clients.common import ENTRIES, IDS, TORCHSCRIPT, assert_valid_and_equivalent, load, require
from tests.support import golden
from tests.support.rotation import weekly_share

ir = require("onnx_ir")
from infer.ir import InferShapesPass  # noqa: E402 (needs onnx_ir)


def _written(value) -> tuple[object, list[object] | None]:
    """(element type, dims as ints and strings) of an ``ir.Value``."""
    dims = None if value.shape is None else [d if isinstance(d, int) else d.value for d in value.shape]
    return value.dtype, dims


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_writes_what_infer_model_infers(entry) -> None:
    model = ir.load(str(entry["path"]))
    weights = {name: v.const_value for name, v in model.graph.initializers.items()}
    result = InferShapesPass()(model)
    assert result.model is model and result.modified
    # The weights were serialized as references that are never read, and are back as they were.
    assert {name: v.const_value for name, v in model.graph.initializers.items()} == weights
    expected = infer.infer_model(load(entry))  # the whole model, weights included
    for node in model.graph:
        for value in node.outputs:
            t = expected.type_of(value.name)
            assert isinstance(t, T.TensorType) and t.shape is not None, value.name
            dims = [d if isinstance(d, int) else D.to_str(d) for d in t.shape]
            assert _written(value) == (ir.DataType(t.elem), dims), value.name


def test_from_proto_in_place_idempotent_and_styles() -> None:
    entry = next(e for e in ENTRIES if e["file"] == "upsample_pad_torchscript.onnx")
    model = ir.from_proto(load(entry))
    assert InferShapesPass()(model).modified
    assert not InferShapesPass()(model).modified  # a second run finds nothing to change
    half = model.graph.outputs[1]
    assert _written(half)[1] == ["batch", 4, "floor(height/2)", "floor(width/2)"]
    strict = ir.from_proto(load(entry))
    InferShapesPass(dims_style="strict")(strict)
    assert all(isinstance(d, int) or d.value.isidentifier() for n in strict.graph for v in n.outputs for d in v.shape)
    bound = ir.from_proto(load(entry))
    InferShapesPass(dims={"batch": 2, "height": 9, "width": 10})(bound)
    assert _written(bound.graph.outputs[1])[1] == [2, 4, 4, 5]


def test_subgraph_values_and_inputs() -> None:
    model = ir.from_proto(
        onnx.parser.parse_model("""
        <ir_version: 8, opset_import: ["" : 17]>
        g (float[N, 3] x, int64 trip) => (float[N, 3] last, float[?, N, 3] scan) {
            cond = Constant<value = bool {1}>()
            last, scan = Loop(trip, cond, x) <body = body (int64 i, bool c, s) => (bool co, s2, y) {
                co = Identity(c)
                s2 = Relu(s)
                y = Add(s2, s2)
            }>
        }
        """)
    )
    InferShapesPass()(model)
    body = model.graph.node(1).attributes["body"].value
    assert _written(body.inputs[2]) == (ir.DataType.FLOAT, ["N", 3])  # typed by the Loop binding it
    assert _written(body.node(2).outputs[0]) == (ir.DataType.FLOAT, ["N", 3])
    scan = _written(model.graph.node(1).outputs[1])
    # The Loop may run no iteration, so inference leaves the scan output's rank open; the graph
    # output's declaration gives the rank, but not the input's `N` (nothing entails it there).
    assert scan[0] == ir.DataType.FLOAT and scan[1][1:] == [None, 3]


# Models whose extents are computed (strided convolutions and poolings, resizes, paddings,
# audio frames, masks): each written expression is held to what onnxruntime computes.
COMPUTED = [
    e
    for e in ENTRIES
    if e["model"] in {"upsample_pad", "wav2vec2", "segformer", "mobilenet_v2", "convnext", "mask_ops", "yolos"}
]


@pytest.mark.parametrize("entry", COMPUTED, ids=[e["file"] for e in COMPUTED])
def test_expressions_parse_in_onnx_ir_and_match_onnxruntime(entry) -> None:
    model = ir.load(str(entry["path"]))
    InferShapesPass()(model)
    declared = {d for i in entry["inputs"] for d in i["dims"] if isinstance(d, str)}
    checked = 0
    for binding, (_, observed) in zip(entry["bindings"], golden.runs(entry)):  # onnxruntime's values, stored
        for node in model.graph:
            for value in node.outputs:
                if value.name not in observed:
                    continue
                shape = observed[value.name].shape
                assert len(value.shape) == len(shape), value.name
                for d, actual in zip(value.shape, shape):
                    if isinstance(d, int):
                        assert d == actual, value.name
                    elif d.free_symbols() <= declared:  # onnx_ir parses our text into sympy
                        assert d.evaluate(binding["dims"]) == actual, (value.name, d.value, binding["dims"])
                        checked += 1
    assert checked > 0


ONNXSCRIPT_CASES = [e for e in TORCHSCRIPT if e["model"] in {"bert", "swin", "mobilevit", "upsample_pad", "yolos"}]


@pytest.mark.parametrize("entry", weekly_share(ONNXSCRIPT_CASES, [e["file"] for e in ONNXSCRIPT_CASES], "onnxscript"))
def test_onnxscript_optimizer_after_the_pass(entry) -> None:
    optimizer = require("onnxscript.optimizer")
    from onnx_ir.passes.common import ShapeInferencePass

    ours = ir.load(str(entry["path"]))
    InferShapesPass()(ours)
    optimizer.optimize(ours, onnx_shape_inference=False)  # shapes from the pass, not onnx's
    theirs = ir.load(str(entry["path"]))
    ShapeInferencePass()(theirs)
    optimizer.optimize(theirs)
    assert_valid_and_equivalent(entry, ir.to_proto(ours), "onnxscript's optimizer after InferShapesPass")
    assert len(ours.graph) <= len(theirs.graph)
