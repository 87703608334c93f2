"""What making the hints true changed in what the code does (issue 42): each is a call that
failed before (a TypeError or AttributeError the rule runner would have reported as a crash)."""

from __future__ import annotations

import importlib.util

import pytest
from onnx import TensorProto, helper

import infer
from infer.core import dims as D
from infer.core import types as T
from infer.core.dimtable import DimTable
from infer.core.dimwriter import DimWriter, TypeWriter
from infer.core.values import Known
from infer.out.runguard import estimate
from signatures.kit import valueops as V

H = D.symbol("H")


def test_every_binary_op_of_the_kit_takes_symbolic_elements():
    # valueops.DIV called _sym_div with two arguments where it takes three: a TypeError on every
    # symbolic element. Div is div_with(lower_bound), the run's prover deciding signs.
    ops = {name: op for name, op in vars(V).items() if name.isupper() and callable(op)}
    assert "DIV" not in ops and {"ADD", "SUB", "MUL", "MOD"} <= ops.keys()
    for op in ops.values():
        op(H, 2)  # raises nothing (the result may be unknown)
    assert V.ADD(H, 2) == D.add(H, 2)
    assert V.div_with(lambda d: 1)(D.mul(H, 4), 2) == D.mul(H, 2)


def test_a_writer_asked_for_the_unknown_type_writes_an_empty_one():
    # to_proto answers None for UNKNOWN, whose serialization failed with an AttributeError.
    writer = TypeWriter(DimWriter(DimTable()))
    assert writer.serialized(T.UNKNOWN) == b""
    assert writer.serialized(T.tensor(1, (2,))) != b""


def test_reshape_of_known_contents_to_a_symbolic_shape_is_unknown():
    # Its shape was multiplied out with the extents' operators, which answer None past the run's
    # bound (then None * 2 raised); symbolic extents are refused before any product.
    k = Known((2,), (1, 2))
    assert V.reshape(k, (H, 2)) is None
    with D.expression_limit(1):  # H*H is past the bound: None, and None * 2 raised
        assert V.reshape(k, (H, H, 2)) is None
    assert V.reshape(k, (2, 1)) == Known((2, 1), (1, 2))


def _scalar_string_model():
    vi = helper.make_tensor_value_info
    nodes = [helper.make_node("Identity", ["s"], ["t"]), helper.make_node("Identity", ["x"], ["y"])]
    ins = [vi("s", TensorProto.STRING, []), vi("x", TensorProto.FLOAT, [2])]
    outs = [vi("t", TensorProto.STRING, []), vi("y", TensorProto.FLOAT, [2])]
    graph = helper.make_graph(nodes, "g", ins, outs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_the_memory_estimate_of_a_scalar_string_is_unknown():
    # _value_bytes asked whether the element type's bits were known only inside the loop over
    # the extents, which a scalar skips: 1 * None, a TypeError for every scalar string.
    est = estimate(infer.infer_model(_scalar_string_model()).graphs, {}, {})
    assert est.bytes == 16 and est.unknown == ["s", "t"]  # x and y: two floats each


@pytest.mark.skipif(importlib.util.find_spec("onnxruntime") is None, reason="verify runs onnxruntime")
def test_verify_takes_a_model_with_a_scalar_string():
    from infer.out.verify import verify

    report = verify(infer.infer_model(_scalar_string_model()), samples=1)  # raised the TypeError above
    assert report.summary()["contradictions"] == 0


def test_a_type_string_with_contents_over_unknown_extents_is_a_value_error():
    # infer_node's type strings: contents over a shape of symbols or ``?`` were given to int(), a
    # TypeError where infer_node promises a ValueError for what it cannot read.
    for src in ("int64[N]={1,2}", "int64[?]={1,2}"):
        with pytest.raises(ValueError, match="contents need a shape of numbers"):
            infer.infer_node("Identity", [src])
    assert str(infer.infer_node("Identity", ["int64[2]={1,2}"]).values[0]) == "int64[2] = [1, 2]"
