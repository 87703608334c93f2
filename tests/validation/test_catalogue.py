"""A catalogue of broken models: each fault detected with the right code and location.

Every entry builds a model with one fault (Clause 10) and names the diagnostic code and the node,
value or attribute it must point at. One model carries several independent faults and must get
all of them, and no fault may silence the rest of the graph.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import infer

F, I64, I8, B, S = TensorProto.FLOAT, TensorProto.INT64, TensorProto.INT8, TensorProto.BOOL, TensorProto.STRING


def vi(name: str, elem: int = F, shape: Any = None) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


def init(name: str, values: Any, dtype: Any = np.int64) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(values, dtype=dtype), name)


def node(op: str, ins: list[str], outs: list[str], name: str = "", domain: str = "", **attrs: Any) -> onnx.NodeProto:
    return helper.make_node(op, ins, outs, name=name or None, domain=domain or None, **attrs)


def model(nodes, inputs, outputs, inits=(), opset=18, value_info=(), functions=(), imports=None, ir=None):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits), value_info=list(value_info))
    ops = imports if imports is not None else [("", opset)]
    m = helper.make_model(g, opset_imports=[helper.make_opsetid(d, v) for d, v in ops], functions=list(functions))
    if ir is not None:
        m.ir_version = ir
    return m


@dataclass
class Fault:
    code: str
    node: str | None = None
    value: str | None = None
    attribute: str | None = None


@dataclass
class Case:
    name: str
    build: Callable[[], onnx.ModelProto]
    faults: list[Fault] = field(default_factory=list)


def _sub(nodes, outputs, inputs=(), inits=()) -> onnx.GraphProto:
    return helper.make_graph(nodes, "sub", list(inputs), outputs, list(inits))


CASES: list[Case] = [
    # -- structure (Clauses 5.4, 7.5, 10.2) ----------------------------------------------------
    Case(
        "cycle",
        lambda: model(
            [node("Add", ["x", "b"], ["a"], "n1"), node("Relu", ["a"], ["b"], "n2")], [vi("x", F, [2])], [vi("b")]
        ),
        [Fault("cycle")],
    ),
    Case(
        "undefined value",
        lambda: model([node("Relu", ["ghost"], ["y"], "r")], [vi("x", F, [2])], [vi("y")]),
        [Fault("undefined-value", "r", "ghost")],
    ),
    Case(
        "produced twice",
        lambda: model([node("Relu", ["x"], ["y"], "a"), node("Abs", ["x"], ["y"], "b")], [vi("x", F, [2])], [vi("y")]),
        [Fault("duplicate-definition", "b", "y")],
    ),
    Case(
        "empty input name",
        lambda: model([node("Relu", ["x"], ["y"], "r")], [vi("x", F, [2]), vi("", F, [2])], [vi("y")]),
        [Fault("empty-name")],
    ),
    Case(
        "out of order",
        lambda: model(
            [node("Relu", ["y"], ["z"], "second"), node("Relu", ["x"], ["y"], "first")], [vi("x", F, [2])], [vi("z")]
        ),
        [Fault("not-topological")],
    ),
    Case(
        "graph output not produced",
        lambda: model([node("Relu", ["x"], ["y"])], [vi("x", F, [2])], [vi("y"), vi("nowhere")]),
        [Fault("undefined-value", value="nowhere")],
    ),
    Case(
        "duplicate graph input",
        lambda: model([node("Relu", ["x"], ["y"])], [vi("x", F, [2]), vi("x", F, [2])], [vi("y")]),
        [Fault("duplicate-definition", value="x")],
    ),
    Case(
        "shadowing in a subgraph",
        lambda: model(
            [
                node(
                    "If",
                    ["c"],
                    ["y"],
                    "if",
                    then_branch=_sub([node("Relu", ["x"], ["x"], "shadow")], [vi("x")]),
                    else_branch=_sub([node("Abs", ["x"], ["e"])], [vi("e")]),
                )
            ],
            [vi("c", B, []), vi("x", F, [2])],
            [vi("y")],
        ),
        [Fault("shadowing", "shadow", "x")],
    ),
    Case(
        "subgraph input and initializer clash",
        lambda: model(
            [
                node(
                    "Loop",
                    ["", "c", "v"],
                    ["out"],
                    "loop",
                    body=_sub(
                        [node("Identity", ["cond"], ["cond_out"]), node("Identity", ["acc"], ["acc_out"])],
                        [vi("cond_out", B, []), vi("acc_out")],
                        [vi("i", I64, []), vi("cond", B, []), vi("acc", F, [2])],
                        [init("acc", [1.0, 2.0], np.float32)],
                    ),
                )
            ],
            [vi("c", B, []), vi("v", F, [2])],
            [vi("out")],
        ),
        [Fault("subgraph-init-clash", value="acc")],
    ),
    Case(
        "If branches disagree in arity",
        lambda: model(
            [
                node(
                    "If",
                    ["c"],
                    ["y"],
                    "if2",
                    then_branch=_sub([node("Relu", ["x"], ["t1"]), node("Abs", ["x"], ["t2"])], [vi("t1"), vi("t2")]),
                    else_branch=_sub([node("Abs", ["x"], ["e"])], [vi("e")]),
                )
            ],
            [vi("c", B, []), vi("x", F, [2])],
            [vi("y")],
        ),
        [Fault("arity", "if2")],
    ),
    Case(
        "recursive function",
        lambda: model(
            [node("Rec", ["x"], ["y"], "call", domain="local")],
            [vi("x", F, [2])],
            [vi("y")],
            imports=[("", 18), ("local", 1)],
            functions=[
                helper.make_function(
                    "local",
                    "Rec",
                    ["a"],
                    ["b"],
                    [node("Rec", ["a"], ["b"], domain="local")],
                    [helper.make_opsetid("", 18), helper.make_opsetid("local", 1)],
                )
            ],
        ),
        [Fault("recursion")],
    ),
    # -- operator sets (Clauses 5.3.2, 10.4) ---------------------------------------------------
    Case(
        "default domain not imported",
        lambda: model([node("Relu", ["x"], ["y"], "r")], [vi("x", F, [2])], [vi("y")], imports=[("ai.onnx.ml", 3)]),
        [Fault("default-opset-implicit", "r")],
    ),
    Case(
        "undeclared domain",
        lambda: model([node("Custom", ["x"], ["y"], "c", domain="com.example")], [vi("x", F, [2])], [vi("y")]),
        [Fault("domain-not-imported", "c")],
    ),
    Case(
        "operator not in the declared version",
        lambda: model([node("Gelu", ["x"], ["y"], "g")], [vi("x", F, [2])], [vi("y")], opset=18),
        [Fault("unknown-operator", "g")],
    ),
    Case(
        "unknown operator",
        lambda: model([node("Frobnicate", ["x"], ["y"], "f")], [vi("x", F, [2])], [vi("y")]),
        [Fault("unknown-operator", "f")],
    ),
    Case(
        "unknown attribute",
        lambda: model([node("Relu", ["x"], ["y"], "r", alpha=0.1)], [vi("x", F, [2])], [vi("y")]),
        [Fault("unknown-attribute", "r", attribute="alpha")],
    ),
    Case(
        "missing required attribute",
        lambda: model([node("Cast", ["x"], ["y"], "cast")], [vi("x", F, [2])], [vi("y")]),
        [Fault("missing-attribute", "cast", attribute="to")],
    ),
    Case(
        "attribute of the wrong type",
        lambda: model([node("Concat", ["x", "x"], ["y"], "cat", axis=1.5)], [vi("x", F, [2, 2])], [vi("y")]),
        [Fault("attribute-type", "cat", attribute="axis")],
    ),
    Case(
        "duplicated attribute", lambda: _duplicate_attribute(), [Fault("duplicate-attribute", "sm", attribute="axis")]
    ),
    Case(
        "required input left empty",
        lambda: model([node("Add", ["x", ""], ["y"], "add")], [vi("x", F, [2])], [vi("y")]),
        [Fault("missing-input", "add")],
    ),
    Case(
        "too many inputs",
        lambda: model([node("Relu", ["x", "x"], ["y"], "r")], [vi("x", F, [2])], [vi("y")]),
        [Fault("arity", "r")],
    ),
    Case(
        "too many outputs",
        lambda: model([node("Relu", ["x"], ["y", "z"], "r")], [vi("x", F, [2])], [vi("y")]),
        [Fault("arity", "r")],
    ),
    Case(
        "missing required input",
        lambda: model([node("MatMul", ["x"], ["y"], "mm")], [vi("x", F, [2, 2])], [vi("y")]),
        [Fault("missing-input", "mm")],
    ),
    # -- types (Clause 10.3) --------------------------------------------------------------------
    Case(
        "type constraint violated",
        lambda: model([node("MatMul", ["a", "b"], ["y"], "mm")], [vi("a", I8, [2, 2]), vi("b", I8, [2, 2])], [vi("y")]),
        [Fault("type-mismatch", "mm", "a")],
    ),
    Case(
        "type variable bound twice",
        lambda: model([node("Add", ["a", "b"], ["y"], "add")], [vi("a", F, [2]), vi("b", I64, [2])], [vi("y")]),
        [Fault("type-mismatch", "add", "b")],
    ),
    Case(
        "string into Concat with float",
        lambda: model(
            [node("Concat", ["a", "b"], ["y"], "cat", axis=0)], [vi("a", S, [2]), vi("b", F, [2])], [vi("y")]
        ),
        [Fault("type-mismatch", "cat", "b")],
    ),
    Case(
        "Where condition not bool",
        lambda: model([node("Where", ["c", "a", "a"], ["y"], "w")], [vi("c", F, [2]), vi("a", F, [2])], [vi("y")]),
        [Fault("type-mismatch", "w", "c")],
    ),
    # -- declared types against inferred ones (Clause 9.4) --------------------------------------
    Case(
        "value_info dim contradicts",
        lambda: model(
            [node("Relu", ["x"], ["y"], "r"), node("Abs", ["y"], ["z"])],
            [vi("x", F, [2, 3])],
            [vi("z")],
            value_info=[vi("y", F, [2, 4])],
        ),
        [Fault("declared-type-clash", "r", "y")],
    ),
    Case(
        "output element type contradicts",
        lambda: model([node("Relu", ["x"], ["y"], "r")], [vi("x", F, [2])], [vi("y", I64, [2])]),
        [Fault("declared-type-clash", "r", "y")],
    ),
    Case(
        "output rank contradicts",
        lambda: model([node("Relu", ["x"], ["y"], "r")], [vi("x", F, [2])], [vi("y", F, [2, 1])]),
        [Fault("declared-type-clash", "r", "y")],
    ),
    # -- contradictions between known extents ---------------------------------------------------
    Case(
        "broadcast 3 against 4",
        lambda: model([node("Add", ["a", "b"], ["y"], "add")], [vi("a", F, [2, 3]), vi("b", F, [4])], [vi("y")]),
        [Fault("shape-mismatch", "add")],
    ),
    Case(
        "MatMul inner dims",
        lambda: model([node("MatMul", ["a", "b"], ["y"], "n3")], [vi("a", F, [2, 3]), vi("b", F, [4, 5])], [vi("y")]),
        [Fault("shape-mismatch", "n3")],
    ),
    Case(
        "Gemm inner dims",
        lambda: model([node("Gemm", ["a", "b"], ["y"], "gemm")], [vi("a", F, [2, 3]), vi("b", F, [4, 5])], [vi("y")]),
        [Fault("shape-mismatch", "gemm")],
    ),
    Case(
        "Concat non-axis dims",
        lambda: model(
            [node("Concat", ["a", "b"], ["y"], "cat", axis=0)], [vi("a", F, [2, 3]), vi("b", F, [2, 4])], [vi("y")]
        ),
        [Fault("shape-mismatch", "cat")],
    ),
    Case(
        "Concat ranks differ",
        lambda: model(
            [node("Concat", ["a", "b"], ["y"], "cat", axis=0)], [vi("a", F, [2, 3]), vi("b", F, [2])], [vi("y")]
        ),
        [Fault("shape-mismatch", "cat")],
    ),
    Case(
        "Reshape element count",
        lambda: model([node("Reshape", ["x", "s"], ["y"], "rs")], [vi("x", F, [2, 3])], [vi("y")], [init("s", [7])]),
        [Fault("shape-mismatch", "rs")],
    ),
    Case(
        "Reshape with two -1",
        lambda: model(
            [node("Reshape", ["x", "s"], ["y"], "rs")], [vi("x", F, [2, 3])], [vi("y")], [init("s", [-1, -1])]
        ),
        [Fault("shape-mismatch", "rs")],
    ),
    Case(
        "Split sizes",
        lambda: model(
            [node("Split", ["x", "s"], ["a", "b"], "split", axis=0)],
            [vi("x", F, [6])],
            [vi("a"), vi("b")],
            [init("s", [2, 3])],
        ),
        [Fault("shape-mismatch", "split")],
    ),
    Case(
        "Split count",
        lambda: model(
            [node("Split", ["x", "s"], ["a", "b"], "split", axis=0)],
            [vi("x", F, [6])],
            [vi("a"), vi("b")],
            [init("s", [2, 2, 2])],
        ),
        [Fault("shape-mismatch", "split")],
    ),
    Case(
        "Split uneven before opset 18",
        lambda: model(
            [node("Split", ["x"], ["a", "b"], "split", axis=0)], [vi("x", F, [5])], [vi("a"), vi("b")], opset=13
        ),
        [Fault("shape-mismatch", "split")],
    ),
    Case(
        "Squeeze of a non-1 axis",
        lambda: model([node("Squeeze", ["x", "a"], ["y"], "sq")], [vi("x", F, [2, 3])], [vi("y")], [init("a", [1])]),
        [Fault("shape-mismatch", "sq")],
    ),
    Case(
        "Conv channels against weights",
        lambda: model(
            [node("Conv", ["x", "w"], ["y"], "conv")],
            [vi("x", F, [1, 3, 8, 8])],
            [vi("y")],
            [init("w", np.zeros((4, 2, 3, 3)), np.float32)],
        ),
        [Fault("shape-mismatch", "conv")],
    ),
    Case(
        "Conv kernel_shape length",
        lambda: model(
            [node("Conv", ["x", "w"], ["y"], "conv", kernel_shape=[3])],
            [vi("x", F, [1, 3, 8, 8])],
            [vi("y")],
            [init("w", np.zeros((4, 3, 3, 3)), np.float32)],
        ),
        [Fault("bad-attribute", "conv")],
    ),
    Case(
        "perm length",
        lambda: model([node("Transpose", ["x"], ["y"], "t", perm=[1, 0, 2])], [vi("x", F, [2, 3])], [vi("y")]),
        [Fault("bad-attribute", "t")],
    ),
    Case(
        "perm not a permutation",
        lambda: model([node("Transpose", ["x"], ["y"], "t", perm=[0, 0])], [vi("x", F, [2, 3])], [vi("y")]),
        [Fault("bad-attribute", "t")],
    ),
    Case(
        "Unsqueeze axis out of range",
        lambda: model([node("Unsqueeze", ["x", "a"], ["y"], "u")], [vi("x", F, [2])], [vi("y")], [init("a", [5])]),
        [Fault("bad-attribute", "u")],
    ),
    Case(
        "Gather axis out of range",
        lambda: model(
            [node("Gather", ["x", "i"], ["y"], "g", axis=3)], [vi("x", F, [2, 3]), vi("i", I64, [2])], [vi("y")]
        ),
        [Fault("bad-attribute", "g")],
    ),
    Case(
        "Concat axis out of range",
        lambda: model([node("Concat", ["a", "a"], ["y"], "cat", axis=2)], [vi("a", F, [2, 3])], [vi("y")]),
        [Fault("bad-attribute", "cat")],
    ),
    Case(
        "Flatten axis out of range",
        lambda: model([node("Flatten", ["x"], ["y"], "fl", axis=4)], [vi("x", F, [2, 3])], [vi("y")]),
        [Fault("bad-attribute", "fl")],
    ),
    Case(
        "Softmax-free reduce axes out of range",
        lambda: model([node("ReduceSum", ["x", "a"], ["y"], "rs")], [vi("x", F, [2, 3])], [vi("y")], [init("a", [2])]),
        [Fault("bad-attribute", "rs")],
    ),
    Case(
        "Slice step 0",
        lambda: model(
            [node("Slice", ["x", "s", "e", "ax", "st"], ["y"], "sl")],
            [vi("x", F, [4])],
            [vi("y")],
            [init("s", [0]), init("e", [4]), init("ax", [0]), init("st", [0])],
        ),
        [Fault("bad-attribute", "sl")],
    ),
    Case(
        "Tile repeats length",
        lambda: model([node("Tile", ["x", "r"], ["y"], "tile")], [vi("x", F, [2, 3])], [vi("y")], [init("r", [2])]),
        [Fault("shape-mismatch", "tile")],
    ),
    Case(
        "Expand incompatible",
        lambda: model([node("Expand", ["x", "s"], ["y"], "ex")], [vi("x", F, [3])], [vi("y")], [init("s", [2, 4])]),
        [Fault("shape-mismatch", "ex")],
    ),
    Case(
        "Where shapes",
        lambda: model(
            [node("Where", ["c", "a", "b"], ["y"], "w")], [vi("c", B, [2]), vi("a", F, [3]), vi("b", F, [3])], [vi("y")]
        ),
        [Fault("shape-mismatch", "w")],
    ),
    Case(
        "TopK larger than the axis",
        lambda: model(
            [node("TopK", ["x", "k"], ["v", "i"], "topk")], [vi("x", F, [2, 3])], [vi("v"), vi("i")], [init("k", [5])]
        ),
        [Fault("shape-mismatch", "topk")],
    ),
    Case(
        "Einsum label extents",
        lambda: model(
            [node("Einsum", ["a", "b"], ["y"], "es", equation="ij,jk->ik")],
            [vi("a", F, [2, 3]), vi("b", F, [4, 5])],
            [vi("y")],
        ),
        [Fault("shape-mismatch", "es")],
    ),
    Case(
        "ConstantOfShape negative extent",
        lambda: model([node("ConstantOfShape", ["s"], ["y"], "cos")], [], [vi("y")], [init("s", [2, -3])]),
        [Fault("shape-mismatch", "cos")],
    ),
    Case(
        "Constant with two values",
        lambda: model([node("Constant", [], ["y"], "k", value_float=1.0, value_int=2)], [], [vi("y")]),
        [Fault("bad-attribute", "k")],
    ),
    Case(
        "Range with delta 0",
        lambda: model(
            [node("Range", ["a", "b", "d"], ["y"], "rg")], [], [vi("y")], [init("a", 0), init("b", 5), init("d", 0)]
        ),
        [Fault("bad-attribute", "rg")],
    ),
    Case(
        "Pad to a negative extent",
        lambda: model([node("Pad", ["x", "p"], ["y"], "pad")], [vi("x", F, [2])], [vi("y")], [init("p", [-2, -1])]),
        [Fault("shape-mismatch", "pad")],
    ),
    # -- declarations -------------------------------------------------------------------------
    Case("initializer data length", lambda: _short_initializer(), [Fault("initializer-size", value="w")]),
    Case("initializer negative dims", lambda: _negative_dims_initializer(), [Fault("initializer-size", value="w")]),
    Case(
        "initializer data in another type's field",
        lambda: _misplaced_initializer(),
        [Fault("initializer-size", value="w")],
    ),
    Case(
        "input without shape",
        lambda: model([node("Relu", ["x"], ["y"])], [vi("x", F, None)], [vi("y", F, [2])]),
        [Fault("missing-io-shape", value="x")],
    ),
    Case(
        "output without shape",
        lambda: model([node("Relu", ["x"], ["y"])], [vi("x", F, [2])], [vi("y", F, None)]),
        [Fault("missing-io-shape", value="y")],
    ),
    Case(
        "unknown op inside a function",
        lambda: model(
            [node("Fn", ["x"], ["y"], "call", domain="local")],
            [vi("x", F, [2])],
            [vi("y")],
            imports=[("", 18), ("local", 1)],
            functions=[
                helper.make_function(
                    "local",
                    "Fn",
                    ["a"],
                    ["b"],
                    [node("NoSuchOp", ["a"], ["b"], "inner")],
                    [helper.make_opsetid("", 18)],
                )
            ],
        ),
        [Fault("unknown-operator", "inner")],
    ),
    # -- several independent faults in one model ------------------------------------------------
    Case(
        "several faults",
        lambda: model(
            [
                node("Relu", ["ghost"], ["a"], "undef"),
                node("Relu", ["x"], ["b"], "attr", alpha=1.0),
                node("MatMul", ["m1", "m2"], ["c"], "mm"),
                node("Abs", ["x"], ["d"], "declared"),
                node("Cast", ["x"], ["e"], "cast"),
            ],
            [vi("x", F, [2]), vi("m1", F, [2, 3]), vi("m2", F, [4, 5])],
            [vi("a"), vi("b"), vi("c"), vi("d", F, [3]), vi("e")],
        ),
        [
            Fault("undefined-value", "undef", "ghost"),
            Fault("unknown-attribute", "attr", attribute="alpha"),
            Fault("shape-mismatch", "mm"),
            Fault("declared-type-clash", "declared", "d"),
            Fault("missing-attribute", "cast", attribute="to"),
        ],
    ),
]


def _duplicate_attribute() -> onnx.ModelProto:
    n = node("Softmax", ["x"], ["y"], "sm", axis=1)
    n.attribute.append(helper.make_attribute("axis", 0))
    return model([n], [vi("x", F, [2, 3])], [vi("y")])


def _short_initializer() -> onnx.ModelProto:
    w = init("w", np.zeros((2, 3), np.float32), np.float32)
    w.raw_data = w.raw_data[:-4]
    return model([node("Add", ["x", "w"], ["y"])], [vi("x", F, [2, 3])], [vi("y")], [w])


def _misplaced_initializer() -> onnx.ModelProto:
    w = onnx.TensorProto(name="w", data_type=F, dims=[2], int64_data=[1, 2])  # FLOAT keeps float_data
    return model([node("Add", ["x", "w"], ["y"])], [vi("x", F, [2])], [vi("y")], [w])


def _negative_dims_initializer() -> onnx.ModelProto:
    w = onnx.TensorProto(name="w", data_type=F, dims=[2, -3])
    return model([node("Relu", ["x"], ["y"])], [vi("x", F, [2])], [vi("y")], [w])


def _matches(d: infer.Diagnostic, f: Fault) -> bool:
    loc = d.location
    return (
        d.code == f.code
        and (f.node is None or loc.node_name == f.node)
        and (f.value is None or loc.value == f.value)
        and (f.attribute is None or loc.attribute == f.attribute)
    )


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_fault_is_detected_and_located(case: Case) -> None:
    result = infer.infer_model(case.build())
    for f in case.faults:
        assert any(_matches(d, f) for d in result.diagnostics), f"{case.name}: expected {f}, got:\n" + "\n".join(
            str(d) for d in result.diagnostics
        )
    for d in result.diagnostics:
        assert d.clause and d.message and d.severity in ("error", "warning", "info")


def test_catalogue_is_large_enough() -> None:
    assert len(CASES) >= 60
    codes = {f.code for c in CASES for f in c.faults}
    assert len(codes) >= 20, sorted(codes)


def test_several_faults_all_reported() -> None:
    case = next(c for c in CASES if c.name == "several faults")
    result = infer.infer_model(case.build())
    assert len([d for d in result.diagnostics if d.severity == "error"]) >= len(case.faults)
