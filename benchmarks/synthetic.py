"""Synthetic models of any size, for the scaling benchmark (no export needed).

A model is a chain of blocks over ``x: float[batch, seq, 64]``. Each block does what a
transformer layer does to shapes: a MatMul and an Add with shared weights, a Relu, a shape
computed from the input (``Shape -> Gather -> Unsqueeze -> Concat -> Reshape``), two Transposes,
a Softmax, a Reshape back and a Pad that lengthens the sequence by one. Because every block sees
a longer sequence (``seq + k``), no two blocks present the same input types: the engine's memo
of rule results does not help, so the time measured is the cost of inferring new nodes (real
models repeat their layers and run faster than this).
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

NODES_PER_BLOCK = 14
WIDTH = 64


def _const(name: str, values: list[int]) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def growing_chain(n_nodes: int, opset: int = 18) -> onnx.ModelProto:
    """A valid model of about ``n_nodes`` nodes (a whole number of blocks, at least one)."""
    blocks = max(1, n_nodes // NODES_PER_BLOCK)
    rng = np.random.default_rng(0)
    inits = [
        numpy_helper.from_array(rng.standard_normal((WIDTH, WIDTH)).astype(np.float32), "W"),
        numpy_helper.from_array(rng.standard_normal(WIDTH).astype(np.float32), "bias"),
        _const("one", [1]),
        _const("zero_axis", [0]),
        _const("heads", [4, WIDTH // 4]),
        _const("back", [0, -1, WIDTH]),
        _const("pads", [0, 0, 0, 0, 1, 0]),
    ]
    nodes = []
    x = "x"
    for b in range(blocks):
        p = f"b{b}_"
        nodes += [
            helper.make_node("MatMul", [x, "W"], [p + "mm"]),
            helper.make_node("Add", [p + "mm", "bias"], [p + "add"]),
            helper.make_node("Relu", [p + "add"], [p + "relu"]),
            helper.make_node("Shape", [x], [p + "shape"], end=2),
            helper.make_node("Gather", [p + "shape", "one"], [p + "seq"], axis=0),
            helper.make_node("Gather", [p + "shape", "zero_axis"], [p + "batch"], axis=0),
            helper.make_node("Concat", [p + "batch", p + "seq", "heads"], [p + "split_shape"], axis=0),
            helper.make_node("Reshape", [p + "relu", p + "split_shape"], [p + "split"]),
            helper.make_node("Transpose", [p + "split"], [p + "heads_first"], perm=[0, 2, 1, 3]),
            helper.make_node("Softmax", [p + "heads_first"], [p + "soft"], axis=-1),
            helper.make_node("Transpose", [p + "soft"], [p + "seq_first"], perm=[0, 2, 1, 3]),
            helper.make_node("Reshape", [p + "seq_first", "back"], [p + "merged"]),
            helper.make_node("Add", [p + "merged", x], [p + "residual"]),
            helper.make_node("Pad", [p + "residual", "pads"], [p + "out"]),
        ]
        x = p + "out"
    graph = helper.make_graph(
        nodes,
        "growing_chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", WIDTH])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, ["batch", "out_seq", WIDTH])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
