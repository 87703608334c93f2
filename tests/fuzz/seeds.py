"""Valid seed models the fuzz campaign mutates: every structure the engine walks, small.

Each seed is a valid model (onnxruntime runs it) exercising one part of the engine: broadcasting
and MatMul, shapes computed in the graph, convolution and pooling, If / Loop / Scan, a
model-local function, sequences, data-dependent operators, and an external-data reference.
``pool()`` adds random valid models from ``tests.fuzz.randmodels`` and, in long mode, the BERT of
examples/.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

ROOT = Path(__file__).resolve().parents[2]
OPSET = 18

F = TP.FLOAT
I64 = TP.INT64


def _model(nodes, inputs, outputs, inits=(), functions=(), opset: int = OPSET, name: str = "seed") -> onnx.ModelProto:
    g = h.make_graph(nodes, name, inputs, outputs, list(inits))
    imports = [h.make_opsetid("", opset)] + [h.make_opsetid(f.domain, 1) for f in functions]
    m = h.make_model(g, opset_imports=imports, functions=list(functions))
    m.ir_version = 8
    return m


def vi(name: str, elem: int, shape) -> onnx.ValueInfoProto:
    return h.make_tensor_value_info(name, elem, shape)


def const(name: str, values, dtype=np.int64) -> onnx.TensorProto:
    return nh.from_array(np.asarray(values, dtype=dtype), name)


def mlp() -> onnx.ModelProto:
    nodes = [
        h.make_node("MatMul", ["x", "w1"], ["h1"]),
        h.make_node("Add", ["h1", "b1"], ["h2"]),
        h.make_node("Relu", ["h2"], ["h3"]),
        h.make_node("Gemm", ["h3", "w2"], ["h4"], transB=1),
        h.make_node("Softmax", ["h4"], ["y"], axis=-1),
        h.make_node("ReduceMean", ["y", "ax"], ["r"], keepdims=1),
        h.make_node("LayerNormalization", ["h3", "g", "b1"], ["ln"], axis=-1),
    ]
    inits = [
        nh.from_array(np.ones((8, 16), np.float32), "w1"),
        nh.from_array(np.ones((16,), np.float32), "b1"),
        nh.from_array(np.ones((16,), np.float32), "g"),
        nh.from_array(np.ones((4, 16), np.float32), "w2"),
        const("ax", [1]),
    ]
    return _model(nodes, [vi("x", F, ["batch", 8])], [vi("y", F, None), vi("r", F, None), vi("ln", F, None)], inits)


def reshape_chain() -> onnx.ModelProto:
    nodes = [
        h.make_node("Shape", ["x"], ["s"]),
        h.make_node("Gather", ["s", "i0"], ["d0"], axis=0),
        h.make_node("Gather", ["s", "i1"], ["d1"], axis=0),
        h.make_node("Mul", ["d1", "two"], ["d1x2"]),
        h.make_node("Unsqueeze", ["d0", "ax0"], ["u0"]),
        h.make_node("Concat", ["u0", "minus1"], ["shape"], axis=0),
        h.make_node("Reshape", ["x", "shape"], ["r"]),
        h.make_node("Transpose", ["r"], ["t"], perm=[1, 0]),
        h.make_node("Slice", ["t", "st", "en", "ax0", "step"], ["sl"]),
        h.make_node("Unsqueeze", ["sl", "ax0"], ["us"]),
        h.make_node("Squeeze", ["us", "ax0"], ["sq"]),
        h.make_node("Expand", ["sq", "shape2"], ["ex"]),
        h.make_node("Range", ["zero", "d1x2", "one"], ["rg"]),
        h.make_node("ConstantOfShape", ["s"], ["cs"], value=h.make_tensor("v", F, [1], [1.0])),
        h.make_node("Tile", ["x", "reps"], ["tl"]),
        h.make_node("Pad", ["x", "pads"], ["pd"], mode="constant"),
        h.make_node("Flatten", ["pd"], ["fl"], axis=1),
    ]
    inits = [
        const("i0", 0),
        const("i1", 1),
        const("two", 2),
        const("ax0", [0]),
        const("minus1", [-1]),
        const("st", [1]),
        const("en", [2**63 - 1]),
        const("step", [2]),
        const("shape2", [3, 1, 1]),
        const("zero", 0),
        const("one", 1),
        const("reps", [1, 2, 1]),
        const("pads", [0, 1, 0, 0, 1, 0]),
    ]
    outs = ["ex", "rg", "cs", "tl", "fl"]
    return _model(nodes, [vi("x", F, ["N", "M", 4])], [vi(o, F if o != "rg" else I64, None) for o in outs], inits)


def conv() -> onnx.ModelProto:
    nodes = [
        h.make_node("Conv", ["x", "w"], ["c"], strides=[2, 2], pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        h.make_node("BatchNormalization", ["c", "s", "b", "m", "v"], ["bn"]),
        h.make_node("MaxPool", ["bn"], ["p"], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1),
        h.make_node("AveragePool", ["p"], ["ap"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        h.make_node("ConvTranspose", ["ap", "wt"], ["ct"], strides=[2, 2]),
        h.make_node("GlobalAveragePool", ["ct"], ["g"]),
        h.make_node("Flatten", ["g"], ["f"]),
        h.make_node("Resize", ["p", "", "scales"], ["rs"], mode="nearest"),
    ]
    inits = [
        nh.from_array(np.ones((4, 3, 3, 3), np.float32), "w"),
        nh.from_array(np.ones((4, 2, 2, 2), np.float32), "wt"),
        *(nh.from_array(np.ones((4,), np.float32), n) for n in "sbmv"),
        nh.from_array(np.array([1, 1, 2, 2], np.float32), "scales"),
    ]
    return _model(nodes, [vi("x", F, ["N", 3, "H", "W"])], [vi("f", F, None), vi("rs", F, None)], inits)


def control_flow() -> onnx.ModelProto:
    then_g = h.make_graph([h.make_node("Add", ["x", "x"], ["t"])], "then", [], [vi("t", F, None)])
    else_g = h.make_graph([h.make_node("Concat", ["x", "x"], ["e"], axis=0)], "else", [], [vi("e", F, None)])
    body = h.make_graph(
        [
            h.make_node("Identity", ["cond_in"], ["cond_out"]),
            h.make_node("Concat", ["acc_in", "x"], ["acc_out"], axis=0),
            h.make_node("ReduceSum", ["acc_out"], ["scan_out"], keepdims=0),
        ],
        "body",
        [vi("i", I64, []), vi("cond_in", TP.BOOL, []), vi("acc_in", F, None)],
        [vi("cond_out", TP.BOOL, []), vi("acc_out", F, None), vi("scan_out", F, None)],
    )
    scan_body = h.make_graph(
        [h.make_node("Add", ["s_in", "row"], ["s_out"]), h.make_node("Identity", ["s_out"], ["y_row"])],
        "scan_body",
        [vi("s_in", F, [4]), vi("row", F, [4])],
        [vi("s_out", F, [4]), vi("y_row", F, [4])],
    )
    nodes = [
        h.make_node("ReduceMax", ["x"], ["mx"], keepdims=0),
        h.make_node("Greater", ["mx", "zero"], ["c"]),
        h.make_node("If", ["c"], ["iy"], then_branch=then_g, else_branch=else_g),
        h.make_node("Loop", ["trip", "true", "x"], ["acc", "scans"], body=body),
        h.make_node("Scan", ["s0", "x"], ["s_final", "ys"], body=scan_body, num_scan_inputs=1),
    ]
    inits = [
        nh.from_array(np.array(0.0, np.float32), "zero"),
        const("trip", 3),
        nh.from_array(np.array(True), "true"),
        nh.from_array(np.zeros((4,), np.float32), "s0"),
    ]
    outs = [vi(n, F, None) for n in ("iy", "acc", "scans", "s_final", "ys")]
    return _model(nodes, [vi("x", F, ["N", 4])], outs, inits)


def function() -> onnx.ModelProto:
    fn = h.make_function(
        "custom",
        "Block",
        ["a", "b"],
        ["y"],
        [
            h.make_node("MatMul", ["a", "b"], ["m"]),
            h.make_node("Relu", ["m"], ["r"]),
            h.make_node("Add", ["r", "a"], ["y"]),
        ],
        opset_imports=[h.make_opsetid("", OPSET)],
    )
    nodes = [
        h.make_node("Block", ["x", "w"], ["y1"], domain="custom"),
        h.make_node("Block", ["y1", "w"], ["y2"], domain="custom"),
    ]
    inits = [nh.from_array(np.eye(6, dtype=np.float32), "w")]
    return _model(nodes, [vi("x", F, ["N", 6])], [vi("y2", F, None)], inits, functions=[fn])


def sequences() -> onnx.ModelProto:
    nodes = [
        h.make_node("SplitToSequence", ["x", "split"], ["seq"], axis=1),
        h.make_node("SequenceAt", ["seq", "i0"], ["first"]),
        h.make_node("SequenceLength", ["seq"], ["n"]),
        h.make_node("ConcatFromSequence", ["seq"], ["cat"], axis=0),
        h.make_node("Split", ["x", "split"], ["p0", "p1"], axis=1),
        h.make_node("Where", ["cond", "p0", "p1"], ["w"]),
        h.make_node("TopK", ["x", "k"], ["tv", "ti"], axis=1),
        h.make_node("ArgMax", ["x"], ["am"], axis=1, keepdims=0),
        h.make_node("Cast", ["am"], ["amf"], to=F),
        h.make_node("NonZero", ["x"], ["nz"]),
        h.make_node("Einsum", ["x", "x"], ["es"], equation="ij,ij->i"),
    ]
    inits = [const("split", [2, 2]), const("i0", 0), const("k", [3]), nh.from_array(np.array([True, False]), "cond")]
    outs = [
        vi("first", F, None),
        vi("n", I64, None),
        vi("cat", F, None),
        vi("w", F, None),
        vi("tv", F, None),
        vi("ti", I64, None),
        vi("amf", F, None),
        vi("nz", I64, None),
        vi("es", F, None),
    ]
    return _model(nodes, [vi("x", F, ["N", 4])], outs, inits)


def external_reference() -> onnx.ModelProto:
    """A shape kept in an external file ``shape.bin`` (not written: mutations target the reference)."""
    shape = const("shape", [-1, 2])
    shape.ClearField("int64_data")
    shape.ClearField("raw_data")
    shape.data_location = TP.EXTERNAL
    for k, v in (("location", "shape.bin"), ("offset", "0"), ("length", "16")):
        e = shape.external_data.add()
        e.key, e.value = k, v
    nodes = [h.make_node("Reshape", ["x", "shape"], ["y"])]
    return _model(nodes, [vi("x", F, ["N", 4])], [vi("y", F, None)], [shape])


SEEDS: dict[str, Callable[[], onnx.ModelProto]] = {
    "mlp": mlp,
    "reshape_chain": reshape_chain,
    "conv": conv,
    "control_flow": control_flow,
    "function": function,
    "sequences": sequences,
    "external_reference": external_reference,
}


def pool(random_models: int = 8, bert: bool = False) -> list[tuple[str, bytes]]:
    """(name, serialized model) of every seed, plus random valid models and optionally BERT."""
    from .randmodels import random_model

    out = [(name, make().SerializeToString()) for name, make in SEEDS.items()]
    for seed in range(random_models):
        built = random_model(seed)
        if built is not None:
            out.append((f"random{seed}", built.model.SerializeToString()))
    if bert:
        out.append(("bert_tiny", (ROOT / "examples" / "bert_tiny.onnx").read_bytes()))
    return out
