"""A second catalogue of broken models, written apart from ``test_catalogue.py``.

The same checks (Clause 10) met through other operators, other opset versions, symbolic dims,
subgraphs (If, Loop, Scan, two deep), model-local functions and non-tensor types. Each entry
names the diagnostic code and the node, value or attribute it must point at; its valid twin,
where it has one, must get no error at all.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import infer
from tests.validation.test_catalogue import Case, Fault, _matches, init, model, node, vi

F, I64, I32, B, S = TensorProto.FLOAT, TensorProto.INT64, TensorProto.INT32, TensorProto.BOOL, TensorProto.STRING
F16, D64 = TensorProto.FLOAT16, TensorProto.DOUBLE


def sub(nodes, outputs, inputs=(), inits=(), value_info=()) -> onnx.GraphProto:
    return helper.make_graph(nodes, "body", list(inputs), outputs, list(inits), value_info=list(value_info))


def fn(name: str, ins: list[str], outs: list[str], nodes, opset: int = 18, attributes=()) -> onnx.FunctionProto:
    return helper.make_function(
        "local",
        name,
        ins,
        outs,
        nodes,
        [helper.make_opsetid("", opset), helper.make_opsetid("local", 1)],
        attributes=list(attributes),
    )


def local_model(nodes, inputs, outputs, functions, opset: int = 18, **kw: Any) -> onnx.ModelProto:
    return model(nodes, inputs, outputs, imports=[("", opset), ("local", 1)], functions=functions, **kw)


def if_node(cond: str, outs: list[str], then_g, else_g, name: str = "if") -> onnx.NodeProto:
    return node("If", [cond], outs, name, then_branch=then_g, else_branch=else_g)


def loop_body(nodes, carried_in, carried_out, extra_outputs=(), inits=()) -> onnx.GraphProto:
    """A Loop body: (iteration, cond, carried...) -> (cond, carried..., scan outputs...)."""
    return sub(
        [node("Identity", ["cond"], ["cond_out"]), *nodes],
        [vi("cond_out", B, []), *carried_out, *extra_outputs],
        [vi("iter", I64, []), vi("cond", B, []), *carried_in],
        inits,
    )


def loop_model(body: onnx.GraphProto, name: str = "loop") -> onnx.ModelProto:
    """``out = Loop(n, c, v)`` over ``body``, with ``v`` and ``out`` float[2]."""
    return model(
        [node("Loop", ["n", "c", "v"], ["out"], name, body=body)],
        [vi("n", I64, []), vi("c", B, []), vi("v", F, [2])],
        [vi("out", F, [2])],
    )


def with_attr(n: onnx.NodeProto, name: str, value: Any) -> onnx.NodeProto:
    n.attribute.append(helper.make_attribute(name, value))
    return n


# -- structure (Clauses 5.4, 7.5, 10.2) ------------------------------------------------------------


def _three_node_cycle() -> onnx.ModelProto:
    return model(
        [
            node("Mul", ["x", "c"], ["a"], "mul"),
            node("Sigmoid", ["a"], ["b"], "sig"),
            node("Neg", ["b"], ["c"], "neg"),
        ],
        [vi("x", F, [2])],
        [vi("c")],
    )


def _undefined_in_branch() -> onnx.ModelProto:
    then_g = sub([node("Mul", ["x", "phantom"], ["t"], "then_mul")], [vi("t")])
    else_g = sub([node("Neg", ["x"], ["e"], "else_neg")], [vi("e")])
    return model([if_node("c", ["y"], then_g, else_g)], [vi("c", B, []), vi("x", F, [2])], [vi("y")])


def _undefined_two_deep() -> onnx.ModelProto:
    inner_then = sub([node("Add", ["acc", "nowhere"], ["t"], "deep_add")], [vi("t", F, [2])])
    inner_else = sub([node("Identity", ["acc"], ["e"], "deep_id")], [vi("e", F, [2])])
    body = loop_body(
        [if_node("cond", ["acc_out"], inner_then, inner_else, "inner_if")],
        [vi("acc", F, [2])],
        [vi("acc_out", F, [2])],
    )
    return loop_model(body)


def _redefines_graph_input() -> onnx.ModelProto:
    return model(
        [node("Relu", ["x"], ["y"], "r"), node("Neg", ["y"], ["x"], "overwrite")], [vi("x", F, [2])], [vi("y")]
    )


def _redefines_initializer() -> onnx.ModelProto:
    return model(
        [node("Neg", ["x"], ["w"], "clobber"), node("Add", ["x", "w"], ["y"], "add")],
        [vi("x", F, [2])],
        [vi("y")],
        [init("w", [1.0, 2.0], np.float32)],
    )


def _twice_in_branch() -> onnx.ModelProto:
    then_g = sub([node("Neg", ["x"], ["t"], "first"), node("Abs", ["x"], ["t"], "again")], [vi("t")])
    else_g = sub([node("Abs", ["x"], ["e"])], [vi("e")])
    return model([if_node("c", ["y"], then_g, else_g)], [vi("c", B, []), vi("x", F, [2])], [vi("y")])


def _empty_initializer_name() -> onnx.ModelProto:
    return model([node("Relu", ["x"], ["y"], "r")], [vi("x", F, [2])], [vi("y")], [init("", [1.0, 2.0], np.float32)])


def _empty_output_name() -> onnx.ModelProto:
    return model([node("Relu", ["x"], ["y"], "r")], [vi("x", F, [2])], [vi("y"), vi("", F, [2])])


def _out_of_order_in_branch() -> onnx.ModelProto:
    then_g = sub([node("Neg", ["t0"], ["t1"], "late"), node("Abs", ["x"], ["t0"], "early")], [vi("t1")])
    else_g = sub([node("Abs", ["x"], ["e"])], [vi("e")])
    return model([if_node("c", ["y"], then_g, else_g)], [vi("c", B, []), vi("x", F, [2])], [vi("y")])


def _loop_input_shadows() -> onnx.ModelProto:
    body = sub(
        [node("Identity", ["cond"], ["cond_out"]), node("Neg", ["x"], ["x_out"], "body_neg")],
        [vi("cond_out", B, []), vi("x_out", F, [2])],
        [vi("iter", I64, []), vi("cond", B, []), vi("x", F, [2])],
    )
    return model(
        [node("Loop", ["n", "c", "x"], ["y"], "loop", body=body)],
        [vi("n", I64, []), vi("c", B, []), vi("x", F, [2])],
        [vi("y", F, [2])],
    )


def _branch_initializer_shadows() -> onnx.ModelProto:
    then_g = sub([node("Add", ["x", "k"], ["t"], "then_add")], [vi("t")], inits=[init("k", [1.0, 1.0], np.float32)])
    else_g = sub([node("Abs", ["x"], ["e"])], [vi("e")])
    return model(
        [node("Relu", ["x"], ["k"], "outer_k"), if_node("c", ["y"], then_g, else_g)],
        [vi("c", B, []), vi("x", F, [2])],
        [vi("y"), vi("k")],
    )


def _shadow_two_deep() -> onnx.ModelProto:
    inner_then = sub([node("Neg", ["acc"], ["v"], "deep_shadow")], [vi("v", F, [2])])
    inner_else = sub([node("Abs", ["acc"], ["e2"])], [vi("e2", F, [2])])
    body = loop_body(
        [if_node("cond", ["acc_out"], inner_then, inner_else, "inner_if")],
        [vi("acc", F, [2])],
        [vi("acc_out", F, [2])],
    )
    return loop_model(body)


def _scan_init_clash() -> onnx.ModelProto:
    body = sub(
        [node("Add", ["s", "xi"], ["s_out"], "acc"), node("Identity", ["s_out"], ["y_out"])],
        [vi("s_out", F, [2]), vi("y_out", F, [2])],
        [vi("s", F, [2]), vi("xi", F, [2])],
        [init("xi", [0.0, 0.0], np.float32)],
    )
    return model(
        [node("Scan", ["s0", "xs"], ["s_final", "ys"], "scan", body=body, num_scan_inputs=1)],
        [vi("s0", F, [2]), vi("xs", F, [3, 2])],
        [vi("s_final", F, [2]), vi("ys", F, [3, 2])],
    )


def _loop_body_too_few_outputs() -> onnx.ModelProto:
    body = sub(
        [node("Identity", ["cond"], ["cond_out"])],
        [vi("cond_out", B, [])],
        [vi("iter", I64, []), vi("cond", B, []), vi("acc", F, [2])],
    )
    return loop_model(body, "bad_loop")


def _loop_body_too_few_inputs() -> onnx.ModelProto:
    body = sub(
        [node("Identity", ["cond"], ["cond_out"]), node("Identity", ["cond"], ["flag"])],
        [vi("cond_out", B, []), vi("flag", B, [])],
        [vi("iter", I64, []), vi("cond", B, [])],
    )
    return loop_model(body, "bad_loop")


def _if_both_branches_two_outputs() -> onnx.ModelProto:
    then_g = sub([node("Neg", ["x"], ["a"]), node("Abs", ["x"], ["b"])], [vi("a"), vi("b")])
    else_g = sub([node("Abs", ["x"], ["c2"]), node("Neg", ["x"], ["d"])], [vi("c2"), vi("d")])
    return model([if_node("c", ["y"], then_g, else_g, "if_arity")], [vi("c", B, []), vi("x", F, [2])], [vi("y")])


def _scan_body_arity() -> onnx.ModelProto:
    body = sub(
        [node("Add", ["s", "xi"], ["s_out"], "acc")],
        [vi("s_out", F, [2])],
        [vi("s", F, [2]), vi("xi", F, [2])],
    )
    return model(
        [node("Scan", ["s0", "xs"], ["s_final", "ys"], "scan", body=body, num_scan_inputs=1)],
        [vi("s0", F, [2]), vi("xs", F, [3, 2])],
        [vi("s_final", F, [2]), vi("ys", F, [3, 2])],
    )


def _mutual_recursion() -> onnx.ModelProto:
    return local_model(
        [node("Ping", ["x"], ["y"], "call", domain="local")],
        [vi("x", F, [2])],
        [vi("y")],
        [
            fn("Ping", ["a"], ["b"], [node("Pong", ["a"], ["b"], "to_pong", domain="local")]),
            fn("Pong", ["a"], ["b"], [node("Ping", ["a"], ["b"], "to_ping", domain="local")]),
        ],
    )


# -- operator sets (Clauses 5.3.2, 10.4) -----------------------------------------------------------


def _duplicate_perm() -> onnx.ModelProto:
    n = with_attr(node("Transpose", ["x"], ["y"], "tr", perm=[1, 0]), "perm", [0, 1])
    return model([n], [vi("x", F, [2, 3])], [vi("y")])


def _duplicate_in_function() -> onnx.ModelProto:
    inner = with_attr(node("Gemm", ["a", "b"], ["c"], "fgemm", transA=0), "transA", 1)
    return local_model(
        [node("G", ["x", "w"], ["y"], "call", domain="local")],
        [vi("x", F, [2, 2]), vi("w", F, [2, 2])],
        [vi("y")],
        [fn("G", ["a", "b"], ["c"], [inner])],
    )


# -- declarations ----------------------------------------------------------------------------------


def _short_int64_initializer() -> onnx.ModelProto:
    s = onnx.TensorProto(name="shape", data_type=I64, dims=[3], int64_data=[2, 3])
    return model([node("Reshape", ["x", "shape"], ["y"], "rs")], [vi("x", F, [6])], [vi("y")], [s])


def _long_raw_initializer() -> onnx.ModelProto:
    w = init("w", np.zeros(4, np.float32), np.float32)
    w.raw_data = w.raw_data + b"\0\0\0\0"
    return model([node("Mul", ["x", "w"], ["y"], "mul")], [vi("x", F, [4])], [vi("y")], [w])


def _short_initializer_in_loop() -> onnx.ModelProto:
    bad = onnx.TensorProto(name="bias", data_type=F, dims=[2], float_data=[1.0])
    body = loop_body(
        [node("Add", ["acc", "bias"], ["acc_out"], "body_add")],
        [vi("acc", F, [2])],
        [vi("acc_out", F, [2])],
        inits=[bad],
    )
    return loop_model(body)


def _sparse_out_of_range() -> onnx.ModelProto:
    values = helper.make_tensor("sp", F, [2], [1.0, 2.0])
    indices = helper.make_tensor("sp_idx", I64, [2], [1, 9])  # 9 is past the 4 elements
    sparse = helper.make_sparse_tensor(values, indices, [4])
    m = model([node("Identity", ["x"], ["y"], "id")], [vi("x", F, [4])], [vi("y")])
    m.graph.sparse_initializer.append(sparse)
    return m


def _sparse_count_mismatch() -> onnx.ModelProto:
    values = helper.make_tensor("sp", F, [3], [1.0, 2.0, 3.0])
    indices = helper.make_tensor("sp_idx", I64, [2], [0, 1])  # three values, two indices
    sparse = helper.make_sparse_tensor(values, indices, [4])
    m = model([node("Identity", ["x"], ["y"], "id")], [vi("x", F, [4])], [vi("y")])
    m.graph.sparse_initializer.append(sparse)
    return m


# -- inside functions ------------------------------------------------------------------------------


def _fn_attr_type() -> onnx.ModelProto:
    return local_model(
        [node("Act", ["x"], ["y"], "call", domain="local")],
        [vi("x", F, [2])],
        [vi("y")],
        [fn("Act", ["a"], ["b"], [node("LeakyRelu", ["a"], ["b"], "leaky", alpha=[0.1, 0.2])])],
    )


def _fn_shape_mismatch() -> onnx.ModelProto:
    return local_model(
        [node("Proj", ["x", "w"], ["y"], "call", domain="local")],
        [vi("x", F, [2, 3]), vi("w", F, [5, 4])],
        [vi("y")],
        [fn("Proj", ["a", "b"], ["c"], [node("MatMul", ["a", "b"], ["c"], "fmm")])],
    )


def _fn_missing_attr() -> onnx.ModelProto:
    return local_model(
        [node("ToInt", ["x"], ["y"], "call", domain="local")],
        [vi("x", F, [2])],
        [vi("y")],
        [fn("ToInt", ["a"], ["b"], [node("Cast", ["a"], ["b"], "fcast")])],
    )


def _fn_undefined() -> onnx.ModelProto:
    return local_model(
        [node("Use", ["x"], ["y"], "call", domain="local")],
        [vi("x", F, [2])],
        [vi("y")],
        [fn("Use", ["a"], ["b"], [node("Add", ["a", "missing_in_fn"], ["b"], "fadd")])],
    )


def _fn_unknown_attribute() -> onnx.ModelProto:
    return local_model(
        [node("Act", ["x"], ["y"], "call", domain="local")],
        [vi("x", F, [2])],
        [vi("y")],
        [fn("Act", ["a"], ["b"], [node("Sigmoid", ["a"], ["b"], "fsig", beta=1.0)])],
    )


def _ref_outside_function() -> onnx.ModelProto:
    n = node("LeakyRelu", ["x"], ["y"], "leaky")
    n.attribute.append(helper.make_attribute_ref("alpha", onnx.AttributeProto.FLOAT))
    return model([n], [vi("x", F, [2])], [vi("y")])


def _fn_ref(call_attrs: dict[str, Any], inner_attr: str = "to", op: str = "Cast") -> onnx.ModelProto:
    inner = node(op, ["a"], ["b"], "inner")
    inner.attribute.append(helper.make_attribute_ref(inner_attr, onnx.AttributeProto.INT, ref_attr_name="target"))
    return local_model(
        [node("Conv2", ["x"], ["y"], "call", domain="local", **call_attrs)],
        [vi("x", F, [2])],
        [vi("y")],
        [fn("Conv2", ["a"], ["b"], [inner], attributes=["target"])],
    )


def _fn_call_unknown_attribute() -> onnx.ModelProto:
    return local_model(
        [node("Act", ["x"], ["y"], "call", domain="local", gamma=2.0)],
        [vi("x", F, [2])],
        [vi("y")],
        [fn("Act", ["a"], ["b"], [node("Relu", ["a"], ["b"], "frelu")])],
    )


def _empty_value_info_name() -> onnx.ModelProto:
    return model(
        [node("Relu", ["x"], ["h"], "r"), node("Neg", ["h"], ["y"])],
        [vi("x", F, [2])],
        [vi("y")],
        value_info=[vi("", F, [2])],
    )


CASES: list[Case] = [
    # -- structure ----------------------------------------------------------------------------
    Case("cycle through three nodes", _three_node_cycle, [Fault("cycle")]),
    Case(
        "undefined second input",
        lambda: model([node("Mul", ["x", "nope"], ["y"], "mul")], [vi("x", F, [2])], [vi("y")]),
        [Fault("undefined-value", "mul", "nope")],
    ),
    Case("undefined value in an If branch", _undefined_in_branch, [Fault("undefined-value", "then_mul", "phantom")]),
    Case("undefined value two deep", _undefined_two_deep, [Fault("undefined-value", "deep_add", "nowhere")]),
    Case("node redefines a graph input", _redefines_graph_input, [Fault("duplicate-definition", "overwrite", "x")]),
    Case("node redefines an initializer", _redefines_initializer, [Fault("duplicate-definition", "clobber", "w")]),
    Case("value produced twice in a branch", _twice_in_branch, [Fault("duplicate-definition", "again", "t")]),
    Case("empty initializer name", _empty_initializer_name, [Fault("empty-name")]),
    Case("empty graph output name", _empty_output_name, [Fault("empty-name")]),
    Case("out of order inside a branch", _out_of_order_in_branch, [Fault("not-topological")]),
    Case("Loop body input shadows an outer value", _loop_input_shadows, [Fault("shadowing", value="x")]),
    Case("branch initializer shadows an outer value", _branch_initializer_shadows, [Fault("shadowing", value="k")]),
    Case("shadowing two deep", _shadow_two_deep, [Fault("shadowing", "deep_shadow", "v")]),
    Case("Scan body input and initializer clash", _scan_init_clash, [Fault("subgraph-init-clash", value="xi")]),
    Case("Loop body with too few outputs", _loop_body_too_few_outputs, [Fault("arity", "bad_loop")]),
    Case("Loop body with too few inputs", _loop_body_too_few_inputs, [Fault("arity", "bad_loop")]),
    Case("If branches with more outputs than the node", _if_both_branches_two_outputs, [Fault("arity", "if_arity")]),
    Case("Scan body arity", _scan_body_arity, [Fault("arity", "scan")]),
    Case("mutually recursive functions", _mutual_recursion, [Fault("recursion")]),
    # -- operator sets ------------------------------------------------------------------------
    Case(
        "no opset import at all",
        lambda: model([node("Sigmoid", ["x"], ["y"], "s")], [vi("x", F, [2])], [vi("y")], imports=[]),
        [Fault("default-opset-implicit", "s")],
    ),
    Case(
        "ai.onnx.ml operator without its import",
        lambda: model(
            [node("Binarizer", ["x"], ["y"], "bin", domain="ai.onnx.ml", threshold=0.5)],
            [vi("x", F, [2])],
            [vi("y")],
        ),
        [Fault("domain-not-imported", "bin")],
    ),
    Case(
        "LayerNormalization before opset 17",
        lambda: model(
            [node("LayerNormalization", ["x", "g"], ["y"], "ln")],
            [vi("x", F, [2, 4]), vi("g", F, [4])],
            [vi("y")],
            opset=13,
        ),
        [Fault("unknown-operator", "ln")],
    ),
    Case(
        "HardSwish at opset 11",
        lambda: model([node("HardSwish", ["x"], ["y"], "hs")], [vi("x", F, [2])], [vi("y")], opset=11),
        [Fault("unknown-operator", "hs")],
    ),
    Case(
        "Conv with a misspelt attribute",
        lambda: model(
            [node("Conv", ["x", "w"], ["y"], "conv", padding=[1, 1, 1, 1])],
            [vi("x", F, [1, 1, 4, 4]), vi("w", F, [1, 1, 3, 3])],
            [vi("y")],
        ),
        [Fault("unknown-attribute", "conv", attribute="padding")],
    ),
    Case(
        "ReduceSum axes attribute at opset 13",
        lambda: model([node("ReduceSum", ["x"], ["y"], "rsum", axes=[1])], [vi("x", F, [2, 3])], [vi("y")], opset=13),
        [Fault("unknown-attribute", "rsum", attribute="axes")],
    ),
    Case(
        "Squeeze axes attribute at opset 21",
        lambda: model([node("Squeeze", ["x"], ["y"], "sq", axes=[0])], [vi("x", F, [1, 3])], [vi("y")], opset=21),
        [Fault("unknown-attribute", "sq", attribute="axes")],
    ),
    Case(
        "Split num_outputs before opset 18",
        lambda: model(
            [node("Split", ["x"], ["a", "b"], "split", axis=0, num_outputs=2)],
            [vi("x", F, [4])],
            [vi("a"), vi("b")],
            opset=13,
        ),
        [Fault("unknown-attribute", "split", attribute="num_outputs")],
    ),
    Case(
        "Concat without axis",
        lambda: model([node("Concat", ["x", "x"], ["y"], "cat")], [vi("x", F, [2])], [vi("y")], opset=11),
        [Fault("missing-attribute", "cat", attribute="axis")],
    ),
    Case(
        "DepthToSpace without blocksize",
        lambda: model([node("DepthToSpace", ["x"], ["y"], "d2s")], [vi("x", F, [1, 4, 2, 2])], [vi("y")]),
        [Fault("missing-attribute", "d2s", attribute="blocksize")],
    ),
    Case(
        "Transpose perm of floats",
        lambda: model([node("Transpose", ["x"], ["y"], "tr", perm=[1.0, 0.0])], [vi("x", F, [2, 3])], [vi("y")]),
        [Fault("attribute-type", "tr", attribute="perm")],
    ),
    Case(
        "Cast to given as a string",
        lambda: model([node("Cast", ["x"], ["y"], "cast", to="float16")], [vi("x", F, [2])], [vi("y")]),
        [Fault("attribute-type", "cast", attribute="to")],
    ),
    Case(
        "Gemm alpha as an int",
        lambda: model(
            [node("Gemm", ["a", "b"], ["y"], "gemm", alpha=2)], [vi("a", F, [2, 3]), vi("b", F, [3, 4])], [vi("y")]
        ),
        [Fault("attribute-type", "gemm", attribute="alpha")],
    ),
    Case(
        "Conv strides as one int",
        lambda: model(
            [node("Conv", ["x", "w"], ["y"], "conv", strides=2)],
            [vi("x", F, [1, 1, 4, 4]), vi("w", F, [1, 1, 3, 3])],
            [vi("y")],
        ),
        [Fault("attribute-type", "conv", attribute="strides")],
    ),
    Case(
        "Softmax axis as a string at opset 11",
        lambda: model([node("Softmax", ["x"], ["y"], "sm", axis="1")], [vi("x", F, [2, 3])], [vi("y")], opset=11),
        [Fault("attribute-type", "sm", attribute="axis")],
    ),
    Case("duplicated perm", _duplicate_perm, [Fault("duplicate-attribute", "tr", attribute="perm")]),
    Case(
        "duplicated attribute in a function",
        _duplicate_in_function,
        [Fault("duplicate-attribute", "fgemm", attribute="transA")],
    ),
    Case(
        "Gather indices left empty",
        lambda: model([node("Gather", ["x", ""], ["y"], "g")], [vi("x", F, [2, 3])], [vi("y")]),
        [Fault("missing-input", "g")],
    ),
    Case(
        "Where condition left empty",
        lambda: model([node("Where", ["", "a", "a"], ["y"], "w")], [vi("a", F, [2])], [vi("y")]),
        [Fault("missing-input", "w")],
    ),
    Case(
        "Conv weights left empty at opset 11",
        lambda: model([node("Conv", ["x", ""], ["y"], "conv")], [vi("x", F, [1, 1, 4, 4])], [vi("y")], opset=11),
        [Fault("missing-input", "conv")],
    ),
    Case(
        "Reshape shape left empty",
        lambda: model([node("Reshape", ["x", ""], ["y"], "rs")], [vi("x", F, [2, 3])], [vi("y")]),
        [Fault("missing-input", "rs")],
    ),
    # -- types --------------------------------------------------------------------------------
    Case(
        "Sqrt of int64",
        lambda: model([node("Sqrt", ["x"], ["y"], "sqrt")], [vi("x", I64, [2])], [vi("y")]),
        [Fault("type-mismatch", "sqrt", "x")],
    ),
    Case(
        "Relu of bool",
        lambda: model([node("Relu", ["x"], ["y"], "relu")], [vi("x", B, [2])], [vi("y")], opset=14),
        [Fault("type-mismatch", "relu", "x")],
    ),
    Case(
        "Reshape shape of int32",
        lambda: model([node("Reshape", ["x", "s"], ["y"], "rs")], [vi("x", F, [2, 3]), vi("s", I32, [2])], [vi("y")]),
        [Fault("type-mismatch", "rs", "s")],
    ),
    Case(
        "Gather indices of float",
        lambda: model([node("Gather", ["x", "i"], ["y"], "g")], [vi("x", F, [2, 3]), vi("i", F, [2])], [vi("y")]),
        [Fault("type-mismatch", "g", "i")],
    ),
    Case(
        "MatMul float against double",
        lambda: model([node("MatMul", ["a", "b"], ["y"], "mm")], [vi("a", F, [2, 3]), vi("b", D64, [3, 2])], [vi("y")]),
        [Fault("type-mismatch", "mm", "b")],
    ),
    Case(
        "Concat of float16 and float at opset 11",
        lambda: model(
            [node("Concat", ["a", "b"], ["y"], "cat", axis=0)],
            [vi("a", F16, [2]), vi("b", F, [2])],
            [vi("y")],
            opset=11,
        ),
        [Fault("type-mismatch", "cat", "b")],
    ),
    Case(
        "Where branches differ in type at opset 17",
        lambda: model(
            [node("Where", ["c", "a", "b"], ["y"], "w")],
            [vi("c", B, [2]), vi("a", I64, [2]), vi("b", I32, [2])],
            [vi("y")],
            opset=17,
        ),
        [Fault("type-mismatch", "w", "b")],
    ),
    Case(
        "Add of bools in a Loop body",
        lambda: model(
            [
                node(
                    "Loop",
                    ["n", "c", "v"],
                    ["out"],
                    "loop",
                    body=loop_body(
                        [node("Add", ["acc", "acc"], ["acc_out"], "bool_add")],
                        [vi("acc", B, [2])],
                        [vi("acc_out", B, [2])],
                    ),
                )
            ],
            [vi("n", I64, []), vi("c", B, []), vi("v", B, [2])],
            [vi("out", B, [2])],
        ),
        [Fault("type-mismatch", "bool_add", "acc")],
    ),
    Case(
        "SequenceAt with a float position",
        lambda: model(
            [node("SequenceConstruct", ["x", "x"], ["seq"], "mk"), node("SequenceAt", ["seq", "p"], ["y"], "at")],
            [vi("x", F, [2]), vi("p", F, [])],
            [vi("y")],
        ),
        [Fault("type-mismatch", "at", "p")],
    ),
    Case(
        "SequenceInsert of a float into a sequence of int64",
        lambda: model(
            [
                node("SequenceConstruct", ["a"], ["seq"], "mk"),
                node("SequenceInsert", ["seq", "b"], ["seq2"], "ins"),
            ],
            [vi("a", I64, [2]), vi("b", F, [2])],
            [helper.make_tensor_sequence_value_info("seq2", I64, None)],
        ),
        [Fault("type-mismatch", "ins")],
    ),
    Case(
        "ConcatFromSequence of a tensor",
        lambda: model([node("ConcatFromSequence", ["x"], ["y"], "cfs", axis=0)], [vi("x", F, [2, 3])], [vi("y")]),
        [Fault("type-mismatch", "cfs", "x")],
    ),
    Case(
        "OptionalGetElement of a plain tensor at opset 15",
        lambda: model([node("OptionalGetElement", ["x"], ["y"], "get")], [vi("x", F, [2])], [vi("y")], opset=15),
        [Fault("type-mismatch", "get", "x")],
    ),
    Case(
        "If branches give different element types",
        lambda: model(
            [
                if_node(
                    "c",
                    ["y"],
                    sub([node("Neg", ["x"], ["t"])], [vi("t")]),
                    sub([node("Shape", ["x"], ["e"])], [vi("e", I64)]),
                    "mixed_if",
                )
            ],
            [vi("c", B, []), vi("x", F, [2])],
            [vi("y")],
        ),
        [Fault("type-mismatch", "mixed_if")],
    ),
    # -- declared types against inferred ones -------------------------------------------------
    Case(
        "Shape declared float",
        lambda: model(
            [node("Shape", ["x"], ["s"], "shape"), node("Identity", ["s"], ["y"])],
            [vi("x", F, [2, 3])],
            [vi("y")],
            value_info=[vi("s", F, [2])],
        ),
        [Fault("declared-type-clash", "shape", "s")],
    ),
    Case(
        "value_info rank contradicts",
        lambda: model(
            [node("Sigmoid", ["x"], ["h"], "sig"), node("Neg", ["h"], ["y"])],
            [vi("x", F, [2, 3])],
            [vi("y")],
            value_info=[vi("h", F, [2, 3, 1])],
        ),
        [Fault("declared-type-clash", "sig", "h")],
    ),
    Case(
        "value_info extent contradicts a symbolic transpose",
        lambda: model(
            [node("Transpose", ["x"], ["t"], "tr", perm=[1, 0]), node("Neg", ["t"], ["y"])],
            [vi("x", F, ["N", 3])],
            [vi("y")],
            value_info=[vi("t", F, [4, "N"])],
        ),
        [Fault("declared-type-clash", "tr", "t")],
    ),
    Case(
        "value_info in an If branch contradicts",
        lambda: model(
            [
                if_node(
                    "c",
                    ["y"],
                    sub(
                        [node("Neg", ["x"], ["t"], "then_neg"), node("Abs", ["t"], ["t2"])],
                        [vi("t2")],
                        value_info=[vi("t", F, [3])],
                    ),
                    sub([node("Abs", ["x"], ["e"])], [vi("e")]),
                )
            ],
            [vi("c", B, []), vi("x", F, [2])],
            [vi("y")],
        ),
        [Fault("declared-type-clash", "then_neg", "t")],
    ),
    Case(
        "output declared a sequence",
        lambda: model(
            [node("Relu", ["x"], ["y"], "relu")],
            [vi("x", F, [2])],
            [helper.make_tensor_sequence_value_info("y", F, [2])],
        ),
        [Fault("declared-type-clash", "relu", "y")],
    ),
    Case(
        "output declared int32 at opset 21",
        lambda: model(
            [node("ReduceMax", ["x"], ["y"], "rmax", keepdims=0)], [vi("x", F, [2, 3])], [vi("y", I32, [])], opset=21
        ),
        [Fault("declared-type-clash", "rmax", "y")],
    ),
    Case(
        "Loop output declared with the wrong extent",
        lambda: model(
            [
                node(
                    "Loop",
                    ["n", "c", "v"],
                    ["out"],
                    "loop",
                    body=loop_body(
                        [node("Neg", ["acc"], ["acc_out"], "body_neg")],
                        [vi("acc", F, [2])],
                        [vi("acc_out", F, [2])],
                    ),
                )
            ],
            [vi("n", I64, []), vi("c", B, []), vi("v", F, [2])],
            [vi("out", F, [5])],
        ),
        [Fault("declared-type-clash", "loop", "out")],
    ),
    # -- contradictions between known extents -------------------------------------------------
    Case(
        "Mul broadcast 3 against 5",
        lambda: model([node("Mul", ["a", "b"], ["y"], "mul")], [vi("a", F, [4, 3]), vi("b", F, [5])], [vi("y")]),
        [Fault("shape-mismatch", "mul")],
    ),
    Case(
        "Sub with symbolic batch and clashing features",
        lambda: model([node("Sub", ["a", "b"], ["y"], "sub")], [vi("a", F, ["N", 3]), vi("b", F, ["N", 4])], [vi("y")]),
        [Fault("shape-mismatch", "sub")],
    ),
    Case(
        "Where value branches do not broadcast",
        lambda: model(
            [node("Where", ["c", "a", "b"], ["y"], "w")],
            [vi("c", B, [1]), vi("a", F, [2, 3]), vi("b", F, [2, 2])],
            [vi("y")],
        ),
        [Fault("shape-mismatch", "w")],
    ),
    Case(
        "Expand to an incompatible leading shape",
        lambda: model(
            [node("Expand", ["x", "s"], ["y"], "ex")], [vi("x", F, [3, 1])], [vi("y")], [init("s", [2, 2, 4])]
        ),
        [Fault("shape-mismatch", "ex")],
    ),
    Case(
        "Add at opset 11 with rank-3 clash",
        lambda: model(
            [node("Add", ["a", "b"], ["y"], "add")], [vi("a", F, [2, 3, 4]), vi("b", F, [3, 5])], [vi("y")], opset=11
        ),
        [Fault("shape-mismatch", "add")],
    ),
    Case(
        "batched MatMul batch clash",
        lambda: model(
            [node("MatMul", ["a", "b"], ["y"], "bmm")], [vi("a", F, [2, 3, 4]), vi("b", F, [5, 4, 6])], [vi("y")]
        ),
        [Fault("shape-mismatch", "bmm")],
    ),
    Case(
        "MatMul symbolic rows, clashing inner dims",
        lambda: model(
            [node("MatMul", ["a", "b"], ["y"], "mm")], [vi("a", F, ["B", "S", 64]), vi("b", F, [32, 16])], [vi("y")]
        ),
        [Fault("shape-mismatch", "mm")],
    ),
    Case(
        "MatMul vector against matrix",
        lambda: model([node("MatMul", ["a", "b"], ["y"], "mv")], [vi("a", F, [3]), vi("b", F, [4, 2])], [vi("y")]),
        [Fault("shape-mismatch", "mv")],
    ),
    Case(
        "Gemm transB inner dims",
        lambda: model(
            [node("Gemm", ["a", "b"], ["y"], "gemm", transB=1)], [vi("a", F, [2, 3]), vi("b", F, [4, 5])], [vi("y")]
        ),
        [Fault("shape-mismatch", "gemm")],
    ),
    Case(
        "Concat on the last axis with a clashing batch",
        lambda: model(
            [node("Concat", ["a", "b"], ["y"], "cat", axis=-1)],
            [vi("a", F, [2, 3, 4]), vi("b", F, [3, 3, 5])],
            [vi("y")],
        ),
        [Fault("shape-mismatch", "cat")],
    ),
    Case(
        "Reshape 6 elements into 8",
        lambda: model(
            [node("Reshape", ["x", "s"], ["y"], "rs")], [vi("x", F, [2, 3])], [vi("y")], [init("s", [4, 2])], opset=13
        ),
        [Fault("shape-mismatch", "rs")],
    ),
    Case(
        "Reshape with a copied dim and a wrong count",
        lambda: model(
            [node("Reshape", ["x", "s"], ["y"], "rs")], [vi("x", F, [2, 3, 4])], [vi("y")], [init("s", [0, 5])]
        ),
        [Fault("shape-mismatch", "rs")],
    ),
    Case(
        "Reshape with -1 that does not divide",
        lambda: model(
            [node("Reshape", ["x", "s"], ["y"], "rs")], [vi("x", F, [2, 5])], [vi("y")], [init("s", [-1, 3])]
        ),
        [Fault("shape-mismatch", "rs")],
    ),
    Case(
        "Split attribute sizes at opset 11",
        lambda: model(
            [node("Split", ["x"], ["a", "b"], "split", axis=1, split=[2, 3])],
            [vi("x", F, [2, 6])],
            [vi("a"), vi("b")],
            opset=11,
        ),
        [Fault("shape-mismatch", "split")],
    ),
    Case(
        "Squeeze attribute axis of extent 3 at opset 11",
        lambda: model([node("Squeeze", ["x"], ["y"], "sq", axes=[1])], [vi("x", F, [1, 3])], [vi("y")], opset=11),
        [Fault("shape-mismatch", "sq")],
    ),
    Case(
        "Squeeze of a symbolic-shaped input's known axis",
        lambda: model([node("Squeeze", ["x", "a"], ["y"], "sq")], [vi("x", F, ["N", 4])], [vi("y")], [init("a", [-1])]),
        [Fault("shape-mismatch", "sq")],
    ),
    Case(
        "grouped Conv channels",
        lambda: model(
            [node("Conv", ["x", "w"], ["y"], "gconv", group=2)],
            [vi("x", F, [1, 4, 8, 8])],
            [vi("y")],
            [init("w", np.zeros((4, 3, 3, 3)), np.float32)],
        ),
        [Fault("shape-mismatch", "gconv")],
    ),
    Case(
        "Conv channels with a symbolic batch",
        lambda: model(
            [node("Conv", ["x", "w"], ["y"], "conv", pads=[1, 1, 1, 1])],
            [vi("x", F, ["N", 16, "H", "W"]), vi("w", F, [32, 8, 3, 3])],
            [vi("y")],
        ),
        [Fault("shape-mismatch", "conv")],
    ),
    Case(
        "ConvTranspose channels against weights",
        lambda: model(
            [node("ConvTranspose", ["x", "w"], ["y"], "deconv")],
            [vi("x", F, [1, 3, 4, 4]), vi("w", F, [5, 2, 3, 3])],
            [vi("y")],
        ),
        [Fault("shape-mismatch", "deconv")],
    ),
    Case(
        "Conv1d kernel larger than the padded input",
        lambda: model(
            [node("Conv", ["x", "w"], ["y"], "conv1d")], [vi("x", F, [1, 2, 3]), vi("w", F, [4, 2, 5])], [vi("y")]
        ),
        [Fault("shape-mismatch", "conv1d")],
    ),
    Case(
        "BatchNormalization scale length",
        lambda: model(
            [node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], "bn")],
            [vi("x", F, [2, 3, 4]), vi("s", F, [4]), vi("b", F, [3]), vi("m", F, [3]), vi("v", F, [3])],
            [vi("y")],
        ),
        [Fault("shape-mismatch", "bn")],
    ),
    Case(
        "LayerNormalization scale of another extent",
        lambda: model(
            [node("LayerNormalization", ["x", "g"], ["y"], "ln")], [vi("x", F, ["B", 4]), vi("g", F, [5])], [vi("y")]
        ),
        [Fault("shape-mismatch", "ln")],
    ),
    # -- axes and perms out of range ----------------------------------------------------------
    Case(
        "ReduceMean axes attribute out of range at opset 13",
        lambda: model([node("ReduceMean", ["x"], ["y"], "rmean", axes=[3])], [vi("x", F, [2, 3])], [vi("y")], opset=13),
        [Fault("bad-attribute", "rmean")],
    ),
    Case(
        "ReduceSum negative axis out of range",
        lambda: model(
            [node("ReduceSum", ["x", "a"], ["y"], "rsum")], [vi("x", F, ["N", 3])], [vi("y")], [init("a", [-3])]
        ),
        [Fault("bad-attribute", "rsum")],
    ),
    Case(
        "Softmax axis out of range",
        lambda: model([node("Softmax", ["x"], ["y"], "sm", axis=2)], [vi("x", F, [2, 3])], [vi("y")]),
        [Fault("bad-attribute", "sm")],
    ),
    Case(
        "LogSoftmax negative axis out of range at opset 11",
        lambda: model([node("LogSoftmax", ["x"], ["y"], "lsm", axis=-3)], [vi("x", F, [2, 3])], [vi("y")], opset=11),
        [Fault("bad-attribute", "lsm")],
    ),
    Case(
        "Unsqueeze attribute axis out of range at opset 11",
        lambda: model([node("Unsqueeze", ["x"], ["y"], "u", axes=[4])], [vi("x", F, [2, 3])], [vi("y")], opset=11),
        [Fault("bad-attribute", "u")],
    ),
    Case(
        "Unsqueeze repeated axis",
        lambda: model([node("Unsqueeze", ["x", "a"], ["y"], "u")], [vi("x", F, [2])], [vi("y")], [init("a", [0, 0])]),
        [Fault("bad-attribute", "u")],
    ),
    Case(
        "Flatten negative axis out of range",
        lambda: model([node("Flatten", ["x"], ["y"], "fl", axis=-3)], [vi("x", F, [2, 3])], [vi("y")]),
        [Fault("bad-attribute", "fl")],
    ),
    Case(
        "Concat negative axis out of range",
        lambda: model([node("Concat", ["a", "a"], ["y"], "cat", axis=-3)], [vi("a", F, [2, 3])], [vi("y")]),
        [Fault("bad-attribute", "cat")],
    ),
    Case(
        "Gather negative axis out of range",
        lambda: model(
            [node("Gather", ["x", "i"], ["y"], "g", axis=-3)], [vi("x", F, [2, 3]), vi("i", I64, [1])], [vi("y")]
        ),
        [Fault("bad-attribute", "g")],
    ),
    Case(
        "ArgMax axis out of range",
        lambda: model([node("ArgMax", ["x"], ["y"], "am", axis=2)], [vi("x", F, [2, 3])], [vi("y")]),
        [Fault("bad-attribute", "am")],
    ),
    Case(
        "CumSum axis out of range",
        lambda: model(
            [node("CumSum", ["x", "a"], ["y"], "cs")], [vi("x", F, [2, 3])], [vi("y")], [init("a", np.int64(2))]
        ),
        [Fault("bad-attribute", "cs")],
    ),
    Case(
        "Transpose perm too short on a symbolic input",
        lambda: model(
            [node("Transpose", ["x"], ["y"], "tr", perm=[1, 0])], [vi("x", F, ["B", "S", 8])], [vi("y")], opset=13
        ),
        [Fault("bad-attribute", "tr")],
    ),
    Case(
        "Transpose perm entry out of range",
        lambda: model([node("Transpose", ["x"], ["y"], "tr", perm=[0, 2])], [vi("x", F, [2, 3])], [vi("y")]),
        [Fault("bad-attribute", "tr")],
    ),
    Case(
        "Pad with pads of the wrong length",
        lambda: model([node("Pad", ["x", "p"], ["y"], "pad")], [vi("x", F, [2, 3])], [vi("y")], [init("p", [1, 1])]),
        [Fault("shape-mismatch", "pad")],
    ),
    Case(
        "Slice starts and ends of different lengths",
        lambda: model(
            [node("Slice", ["x", "s", "e"], ["y"], "sl")],
            [vi("x", F, [4, 4])],
            [vi("y")],
            [init("s", [0, 0]), init("e", [2])],
        ),
        [Fault("shape-mismatch", "sl")],
    ),
    # -- declarations -------------------------------------------------------------------------
    Case(
        "int64 initializer shorter than its dims", _short_int64_initializer, [Fault("initializer-size", value="shape")]
    ),
    Case("raw data longer than the dims", _long_raw_initializer, [Fault("initializer-size", value="w")]),
    Case("short initializer in a Loop body", _short_initializer_in_loop, [Fault("initializer-size", value="bias")]),
    Case(
        "input without shape at opset 13, others symbolic",
        lambda: model(
            [node("Add", ["a", "b"], ["y"], "add")],
            [vi("a", F, ["N", 3]), vi("b", F, None)],
            [vi("y", F, ["N", 3])],
            opset=13,
        ),
        [Fault("missing-io-shape", value="b")],
    ),
    Case(
        "second output without shape",
        lambda: model(
            [node("TopK", ["x", "k"], ["v", "i"], "topk")],
            [vi("x", F, [5])],
            [vi("v", F, [2]), vi("i", I64, None)],
            [init("k", [2])],
        ),
        [Fault("missing-io-shape", value="i")],
    ),
    # -- inside model-local functions ---------------------------------------------------------
    Case("wrong-type attribute in a function", _fn_attr_type, [Fault("attribute-type", "leaky", attribute="alpha")]),
    Case("MatMul mismatch inside a function", _fn_shape_mismatch, [Fault("shape-mismatch", "fmm")]),
    Case(
        "missing attribute inside a function", _fn_missing_attr, [Fault("missing-attribute", "fcast", attribute="to")]
    ),
    Case("undefined value inside a function", _fn_undefined, [Fault("undefined-value", "fadd", "missing_in_fn")]),
    Case(
        "unknown attribute inside a function",
        _fn_unknown_attribute,
        [Fault("unknown-attribute", "fsig", attribute="beta")],
    ),
    Case(
        "attribute reference outside a function",
        _ref_outside_function,
        [Fault("bad-attribute", "leaky", attribute="alpha")],
    ),
    Case(
        "required attribute refers to an unsupplied one",
        lambda: _fn_ref({}),
        [Fault("missing-attribute", "inner", attribute="to")],
    ),
    Case(
        "attribute reference of the wrong type",
        lambda: _fn_ref({"target": "float"}),
        [Fault("attribute-type", "inner", attribute="to")],
    ),
    Case(
        "function call with an undeclared attribute",
        _fn_call_unknown_attribute,
        [Fault("unknown-attribute", "call", attribute="gamma")],
    ),
    Case(
        "TopK indices output left unnamed",
        lambda: model(
            [node("TopK", ["x", "k"], ["v", ""], "topk")], [vi("x", F, [5])], [vi("v", F, [2])], [init("k", [2])]
        ),
        [Fault("empty-name", "topk")],
    ),
    Case("value_info entry with an empty name", _empty_value_info_name, [Fault("empty-name")]),
    # -- sparse initializers ------------------------------------------------------------------
    Case("sparse initializer index out of range", _sparse_out_of_range, [Fault("initializer-size", value="sp")]),
    Case("sparse initializer counts differ", _sparse_count_mismatch, [Fault("initializer-size", value="sp")]),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_heldout_fault_is_detected_and_located(case: Case) -> None:
    result = infer.infer_model(case.build())
    for f in case.faults:
        assert any(_matches(d, f) for d in result.diagnostics), f"{case.name}: expected {f}, got:\n" + "\n".join(
            str(d) for d in result.diagnostics
        )


# -- valid twins: the same constructions without the fault get no error ---------------------------


def _sparse_ok() -> onnx.ModelProto:
    values = helper.make_tensor("sp", F, [2], [1.0, 2.0])
    indices = helper.make_tensor("sp_idx", I64, [2], [1, 3])
    m = model([node("Identity", ["x"], ["y"], "id")], [vi("x", F, [4])], [vi("y", F, [4])])
    m.graph.sparse_initializer.append(helper.make_sparse_tensor(values, indices, [4]))
    return m


def _sparse_coordinates_ok() -> onnx.ModelProto:
    values = helper.make_tensor("sp", F, [2], [1.0, 2.0])
    indices = helper.make_tensor("sp_idx", I64, [2, 2], [0, 1, 1, 2])
    m = model([node("Identity", ["x"], ["y"], "id")], [vi("x", F, [2, 3])], [vi("y", F, [2, 3])])
    m.graph.sparse_initializer.append(helper.make_sparse_tensor(values, indices, [2, 3]))
    return m


def _fn_ref_ok(with_default: bool) -> onnx.ModelProto:
    inner = node("Cast", ["a"], ["b"], "inner")
    inner.attribute.append(helper.make_attribute_ref("to", onnx.AttributeProto.INT, ref_attr_name="target"))
    f = fn("ToT", ["a"], ["b"], [inner], attributes=[] if with_default else ["target"])
    if with_default:
        f.attribute_proto.append(helper.make_attribute("target", TensorProto.INT64))
    call = node("ToT", ["x"], ["y"], "call", domain="local", **({} if with_default else {"target": TensorProto.INT64}))
    return local_model([call], [vi("x", F, [2])], [vi("y", I64, [2])], [f])


def _loop_ok() -> onnx.ModelProto:
    body = loop_body([node("Neg", ["acc"], ["acc_out"], "body_neg")], [vi("acc", F, [2])], [vi("acc_out", F, [2])])
    return loop_model(body)


VALID: list[tuple[str, Any]] = [
    (
        "Split into more outputs than elements",
        lambda: model(
            [node("Split", ["x"], ["a", "b", "c"], "split", axis=0, num_outputs=3)],
            [vi("x", F, [2])],
            [vi("a", F, [1]), vi("b", F, [1]), vi("c", F, [0])],
        ),
    ),
    (
        "BatchNormalization with matching statistics",
        lambda: model(
            [node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], "bn")],
            [vi("x", F, ["N", 3, 4]), *(vi(n, F, [3]) for n in "sbmv")],
            [vi("y", F, ["N", 3, 4])],
        ),
    ),
    (
        "Conv whose kernel just fits",
        lambda: model(
            [node("Conv", ["x", "w"], ["y"], "conv")],
            [vi("x", F, [1, 2, 5]), vi("w", F, [4, 2, 5])],
            [vi("y", F, [1, 4, 1])],
        ),
    ),
    (
        "MaxPool with padding that makes the window fit",
        lambda: model(
            [node("MaxPool", ["x"], ["y"], "mp", kernel_shape=[5], pads=[1, 1])],
            [vi("x", F, [1, 2, 3])],
            [vi("y", F, [1, 2, 1])],
        ),
    ),
    (
        "SequenceInsert of the sequence's element type",
        lambda: model(
            [node("SequenceConstruct", ["a"], ["seq"], "mk"), node("SequenceInsert", ["seq", "a"], ["seq2"], "ins")],
            [vi("a", I64, [2])],
            [helper.make_tensor_sequence_value_info("seq2", I64, [2])],
        ),
    ),
    ("sparse initializer with linear indices", _sparse_ok),
    ("sparse initializer with coordinates", _sparse_coordinates_ok),
    ("function attribute supplied at the call", lambda: _fn_ref_ok(False)),
    ("function attribute from its default", lambda: _fn_ref_ok(True)),
    (
        "optional outputs left unnamed",
        lambda: model(
            [node("Dropout", ["x"], ["y", ""], "drop"), node("MaxPool", ["y"], ["p", ""], "mp", kernel_shape=[2])],
            [vi("x", F, [1, 2, 4])],
            [vi("p", F, [1, 2, 3])],
        ),
    ),
    ("Loop whose body matches", _loop_ok),
    (
        "LayerNormalization with a broadcast scale",
        lambda: model(
            [node("LayerNormalization", ["x", "g"], ["y"], "ln", axis=1)],
            [vi("x", F, ["B", 3, 4]), vi("g", F, [1, 4])],
            [vi("y", F, ["B", 3, 4])],
        ),
    ),
    (
        "Squeeze at opset 11 of a unit axis",
        lambda: model(
            [node("Squeeze", ["x"], ["y"], "sq", axes=[0])], [vi("x", F, [1, 3])], [vi("y", F, [3])], opset=11
        ),
    ),
]


@pytest.mark.parametrize("build", [b for _, b in VALID], ids=[n for n, _ in VALID])
def test_valid_twin_has_no_error(build: Any) -> None:
    result = infer.infer_model(build())
    errors = [str(d) for d in result.diagnostics if d.severity == "error"]
    assert not errors, "\n".join(errors)


def test_heldout_catalogue_is_large_enough() -> None:
    assert len(CASES) >= 60


def test_undefined_element_type_of_a_main_graph_input() -> None:
    m = model([node("Relu", ["x"], ["y"])], [vi("x", 0, [2])], [vi("y", F, [2])])
    found = [(d.code, d.location.value) for d in infer.infer_model(m).diagnostics if d.severity == "error"]
    assert found == [("undefined-element-type", "x")]


def test_loop_body_changing_a_carried_element_type() -> None:
    body = loop_body([node("Cast", ["v"], ["v_out"], to=I64)], [vi("v", F, [2])], [vi("v_out", I64, [2])])
    m = model(
        [node("Loop", ["M", "", "x"], ["y"], "loop", body=body)], [vi("M", I64, []), vi("x", F, [2])], [vi("y", F, [2])]
    )
    found = [(d.code, d.location.node_index) for d in infer.infer_model(m).diagnostics if d.severity == "error"]
    assert ("type-mismatch", 0) in found
