"""Explain an unknown shape: why inference could not tell an extent, down to the root cause.

    python examples/explain_unknown.py

The model below reshapes ``x`` to a shape computed from the *data* (how many entries of ``mask``
are non-zero), so the output's first extent cannot be known before the model runs. Inference
gives it a fresh variable (``unk__0``) instead of guessing, and ``explain`` follows the
provenance back: a fresh variable made by NonZero, whose count depends on the contents of a
graph input. The script also saves the model as ``select_rows.onnx`` in the working directory,
so the same can be seen from the command line:

    onnx-infer explain select_rows.onnx z
    onnx-infer report select_rows.onnx -o select_rows.html
"""

from __future__ import annotations

import onnx
from onnx import TensorProto, helper

import infer


def build() -> onnx.ModelProto:
    nodes = [
        helper.make_node("NonZero", ["mask"], ["idx"], name="where_nonzero"),  # int64[1, count]
        helper.make_node("Transpose", ["idx"], ["idx_t"], name="to_rows"),  # int64[count, 1]
        helper.make_node("GatherND", ["x", "idx_t"], ["y"], name="pick_rows"),  # float[count, 16]
        helper.make_node("Relu", ["y"], ["z"], name="act"),
    ]
    graph = helper.make_graph(
        nodes,
        "select_rows",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["rows", 16]),
            helper.make_tensor_value_info("mask", TensorProto.BOOL, ["rows"]),
        ],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def main() -> None:
    model = build()
    onnx.save(model, "select_rows.onnx")
    result = infer.infer_model(model)
    print(result.summary())
    print("z:", result.type_of("z"))  # float[unk__0,16]: rank and one extent known

    explanation = result.explain("z")
    print()
    print(explanation)  # the same text as `onnx-infer explain`
    print()
    print("root causes:")
    for root in explanation.roots:
        print(" ", root)

    # The fresh variable is in the dimension table with its origin, like a declared one.
    for var in result.dims:
        if var.is_fresh:
            print(f"\n{var.name} was made at {var.origin.site}: {var.origin.reason}")

    # What is known is still exact: the second extent, and the relation between z and y.
    assert result.shape_of("z")[1] == 16 and result.shape_of("z") == result.shape_of("y")


if __name__ == "__main__":
    main()
