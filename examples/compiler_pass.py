"""Use inference in a compiler pass: plan memory symbolically, rewrite a node, re-infer it.

    python examples/compiler_pass.py

A compiler reads the result as Python objects: every dim is an ``int`` or an ``infer.dims.Expr``
over the model's dimension variables (``batch``, ``sequence``), so sizes can be planned once for
every input size and evaluated when the sizes are known. After a rewrite, the new nodes are
inferred one at a time with ``infer.infer_node`` from the types the model already has.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx

import infer
from infer import dims as D
from infer import types as T

MODEL = Path(__file__).resolve().with_name("bert_tiny.onnx")


def activation_bytes(result: infer.InferenceResult) -> D.Dim:
    """Bytes of every value a node computes, as one expression over the dimension variables."""
    total: D.Dim = 0
    for _, _, value in result.values():
        t = value.type
        if isinstance(t, T.TensorType) and t.shape is not None and t.elem is not None:
            itemsize = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(t.elem)).itemsize
            total = D.add(total, D.mul(D.product(t.shape), itemsize))  # exact integer arithmetic
    return total


def lower_matmul_to_gemm(result: infer.InferenceResult, model: onnx.ModelProto) -> None:
    """Rewrite a batched MatMul by a weight as Reshape -> Gemm -> Reshape, inferring each new node."""
    weights = {t.name: t for t in model.graph.initializer}
    node = next(n for n in model.graph.node if n.op_type == "MatMul" and n.input[1] in weights)
    x = result.type_of(node.input[0])  # float[batch,sequence,32]: Type objects, dims.Expr dims
    w = result.type_of(node.input[1])  # float[32,32]
    print(f"rewriting {node.name}: MatMul({x}, {w}) -> {result.type_of(node.output[0])}")
    *lead, k = x.shape
    n = w.shape[1]

    # 1. Flatten the leading axes: a Reshape whose target shape is a known constant.
    flat = infer.infer_node("Reshape", [x, f"int64[2]={{-1,{k}}}"])
    print("  Reshape ->", flat)
    # 2. The 2-D product.
    gemm = infer.infer_node("Gemm", [flat.types[0], w])
    print("  Gemm    ->", gemm)
    # 3. Restore the leading axes: the target shape's contents are symbolic (batch, sequence, n),
    #    as a Shape -> Concat chain in the graph would compute them.
    target = infer.Value(T.tensor(onnx.TensorProto.INT64, (len(lead) + 1,)), infer.Known((len(lead) + 1,), (*lead, n)))
    back = infer.infer_node("Reshape", [gemm.types[0], target])
    print("  Reshape ->", back)

    # The rewrite keeps the type: check it exactly, as a pass should before it commits.
    before = result.type_of(node.output[0])
    after = back.types[0]
    same = before.elem == after.elem and all(D.equal(a, b) for a, b in zip(before.shape, after.shape))
    print("  same type as before the rewrite:", same)
    assert same


def main() -> None:
    model = onnx.load(MODEL)
    result = infer.infer_model(model)

    size = activation_bytes(result)
    print("activation bytes:", D.to_str(size))
    for batch, sequence in [(1, 16), (8, 64)]:
        print(f"  at batch={batch}, sequence={sequence}: {D.evaluate(size, {'batch': batch, 'sequence': sequence})}")

    # Specializing: bind a variable and every extent that depends on it becomes an integer.
    fixed = infer.infer_model(model, dims={"batch": 1, "sequence": 16})
    print("specialized:", fixed.summary())
    print("  last_hidden_state:", fixed.type_of("last_hidden_state"))

    lower_matmul_to_gemm(result, model)

    # A weight that does not fit is reported, not raised: the pass can refuse the rewrite.
    bad = infer.infer_node("Gemm", ["float[N,32]", "float[64,8]"])
    for d in bad.diagnostics:
        print("refused:", d)


if __name__ == "__main__":
    main()
