"""Every rule diagnoses what it cannot infer and never fails (issue 19, "Hostile input").

1. The sweep (``tests/fuzz/sweep.py``): every registered rule, at every operator version it
   covers, on inputs of every rank from 0 to 5, with extreme contents and odd attribute values,
   through ``infer.infer_node``: no exception, no ``rule-crash``, no rank past the limit and no
   extent below 0 or past int64. The default run makes half of its calls, the other half with
   ``-m slow`` (the halves take turns by ISO week). ``FUZZ_LONG=1`` runs the long mode (every
   shape and value at every rank: 280,000 calls, about a minute).
2. One regression model per failure the fuzz campaign found: each is diagnosed (``attribute-type``,
   ``bad-attribute``, ``shape-mismatch``, ``limit``) and claims nothing it cannot know.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import AttributeProto, TensorProto, helper, numpy_helper

import infer
import signatures
from infer.contract.registry import REGISTRY
from tests.fuzz import sweep
from tests.support.rotation import weekly_share

LONG = bool(os.environ.get("FUZZ_LONG"))
INT64_MAX = 2**63 - 1


# -- 1. the sweep ---------------------------------------------------------------------------------


def test_the_sweep_covers_every_registered_rule():
    signatures.load_all()
    swept = {(domain, op) for domain, op, _ in sweep.versions()}
    registered = {(e.domain, e.op_type) for e in REGISTRY.entries() if e.rule is not None}
    assert swept == registered, sorted(registered - swept)
    assert any(domain == "com.microsoft" for domain, _ in swept)


# The default run makes one half of the fast sweep's calls (every rule at every version in each
# half), a different half each ISO week; -m slow makes the other. FUZZ_LONG=1 makes every call.
PARTS = 1 if LONG else 2


@pytest.mark.parametrize("part", weekly_share(range(PARTS), [f"half{k + 1}" for k in range(PARTS)], "sweep", PARTS))
def test_every_rule_at_every_version_rank_and_odd_attribute(part: int):
    made, findings = sweep.run(long=LONG, part=(part, PARTS))
    report = "\n".join(f"{key}\n    {call}\n    {problems[0]}" for key, (call, problems) in sorted(findings.items()))
    assert made > (250_000 if LONG else 40_000) // PARTS
    assert not findings, f"{len(findings)} distinct problems:\n{report}"


def test_the_sweep_detects_what_it_looks_for(monkeypatch: pytest.MonkeyPatch):
    """A crashing rule, an exception, a rank past the limit and a negative extent are all
    reported, or the sweep could pass by seeing nothing."""

    def broken(ctx: Any) -> list:
        raise IndexError("tuple index out of range")

    key = ("", "Relu")
    monkeypatch.setitem(REGISTRY._entries, key, [dataclasses.replace(e, rule=broken) for e in REGISTRY._entries[key]])
    infer.walk.reuse.clear()  # results of the real rule, kept from earlier calls (infer/walk/memo.py)
    assert sweep.Call("Relu", "", 14, ["float[2]"]).run() == [
        "rule-crash: rule for Relu failed: IndexError: tuple index out of range"
    ]
    assert sweep.Call("Relu", "", 14, ["float[2"]).run()[0].startswith("raised ValueError")
    huge = infer.core.types.TensorType(TensorProto.FLOAT, (1,) * 1025)
    assert sweep._claim_problems(huge) == ["rank 1025 claimed, past the rank limit 1024"]
    assert sweep._claim_problems(infer.core.types.TensorType(TensorProto.FLOAT, (3, -1))) == ["extent -1 at axis 1"]


# -- 2. regressions, one model each ---------------------------------------------------------------


def model(
    op: str,
    inputs: list[tuple[str, int, Any]],
    attributes: list[AttributeProto] = (),
    *,  # type: ignore[assignment]
    inits: list[TensorProto] = (),
    opset: int = 18,
    domain: str = "",
    n_outputs: int = 1,
) -> onnx.ModelProto:  # type: ignore[assignment]
    """One ``op`` node on graph inputs ``(name, elem, shape)`` and initializers."""
    node = helper.make_node(
        op,
        [name for name, _, _ in inputs] + [t.name for t in inits],
        [f"y{k}" for k in range(n_outputs)],
        domain=domain or None,
    )
    node.attribute.extend(attributes)
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info(name, elem, shape) for name, elem, shape in inputs],
        [onnx.ValueInfoProto(name=f"y{k}") for k in range(n_outputs)],
        list(inits),
    )
    imports = [helper.make_opsetid("", opset if not domain else 18)]
    if domain:
        imports.append(helper.make_opsetid(domain, 1))
    m = helper.make_model(graph, opset_imports=imports)
    m.ir_version = 9
    return m


def untyped(name: str, **value: Any) -> AttributeProto:
    """An attribute whose value is set and whose type field is UNDEFINED."""
    a = AttributeProto(name=name, **value)
    assert a.type == AttributeProto.UNDEFINED
    return a


def codes(result: infer.InferenceResult) -> set[str]:
    return {d.code for d in result.diagnostics}


F, I64, D64 = TensorProto.FLOAT, TensorProto.INT64, TensorProto.DOUBLE

UNTYPED = {
    "Constant.value": model("Constant", [], [untyped("value", t=numpy_helper.from_array(np.array([1], np.int64)))]),
    "Shape.start/end": model("Shape", [("x", F, [2, 3])], [untyped("start", i=1), untyped("end", i=2)], opset=21),
    "Flatten.axis": model("Flatten", [("x", F, [2, 3])], [untyped("axis", i=1)]),
    "OneHot.axis": model("OneHot", [("i", I64, [2]), ("d", I64, []), ("v", F, [2])], [untyped("axis", i=0)]),
    "EyeLike.k/dtype": model("EyeLike", [("x", F, [2, 3])], [untyped("k", i=1), untyped("dtype", i=7)]),
    "RandomNormalLike.dtype": model("RandomNormalLike", [("x", F, [2, 3])], [untyped("dtype", i=7)]),
}


@pytest.mark.parametrize("case", sorted(UNTYPED))
def test_an_attribute_without_a_type_is_diagnosed_and_never_read(case: str):
    result = infer.infer_model(UNTYPED[case])
    assert "rule-crash" not in codes(result), result.diagnostics
    assert "attribute-type" in codes(result)


def test_a_function_attribute_without_a_type_is_diagnosed_in_the_body():
    """A call site passes an untyped attribute that the body's Flatten takes by reference."""
    body = helper.make_node("Flatten", ["a"], ["b"])
    body.attribute.append(AttributeProto(name="axis", ref_attr_name="ax", type=AttributeProto.INT))
    fn = helper.make_function("local", "F", ["a"], ["b"], [body], [helper.make_opsetid("", 18)], ["ax"])
    m = model("F", [("x", F, [2, 3])], [untyped("ax", i=1)], domain="local")
    m.functions.append(fn)
    result = infer.infer_model(m)
    assert "rule-crash" not in codes(result)
    assert any(d.code == "attribute-type" and "'ax'" in d.message for d in result.diagnostics), result.diagnostics


SIX = [("x", F, [2, 3])]
REGRESSIONS: dict[str, tuple[onnx.ModelProto, str]] = {
    "Cast-1 to an unknown type": (model("Cast", [("x", F, [2])], [helper.make_attribute("to", "BOGUS")], opset=1),
                                  "bad-attribute"),
    "Conv on rank 2": (model("Conv", [("x", F, [2, 3]), ("w", F, [4, 3])]), "shape-mismatch"),
    "Conv on rank 1": (model("Conv", [("x", F, [2]), ("w", F, [4])]), "shape-mismatch"),
    "Conv on scalars": (model("Conv", [("x", F, []), ("w", F, [])]), "shape-mismatch"),
    "NhwcConv on scalars": (model("NhwcConv", [("x", F, []), ("w", F, [])], domain="com.microsoft"), "shape-mismatch"),
    "NhwcConv with scalar weights": (model("NhwcConv", [("x", F, [1, 4, 4, 3]), ("w", F, [])], domain="com.microsoft"),
                                     "shape-mismatch"),
    "FusedConv with scalar weights": (model("FusedConv", [("x", F, [1, 3, 4]), ("w", F, [])], domain="com.microsoft"),
                                      "shape-mismatch"),
    "QLinearConv on scalars": (
        model("QLinearConv", [("x", TensorProto.UINT8, []), ("xs", F, []), ("xz", TensorProto.UINT8, []),
                              ("w", TensorProto.UINT8, []), ("ws", F, []), ("wz", TensorProto.UINT8, []),
                              ("ys", F, []), ("yz", TensorProto.UINT8, [])], domain="com.microsoft"),
        "shape-mismatch"),
    "TransposeMatMul of a scalar and a vector": (
        model("TransposeMatMul", [("a", F, []), ("b", F, [2])], domain="com.microsoft"), "shape-mismatch"),
    "FusedMatMulActivation of a scalar and a vector": (
        model("FusedMatMulActivation", [("a", F, []), ("b", F, [2])], [helper.make_attribute("activation", "Relu")],
              domain="com.microsoft"), "shape-mismatch"),
    "MatMulInteger16 of a scalar and a vector": (
        model("MatMulInteger16", [("a", TensorProto.INT16, []), ("b", TensorProto.INT16, [2])], domain="com.microsoft"),
        "shape-mismatch"),
    "Range counting past int64": (
        model("Range", [], inits=[numpy_helper.from_array(np.array(v, np.float64), n)
                                  for n, v in (("s", 0.0), ("l", 1.0), ("d", 5e-324))]), "limit"),
    "Range of floats counting past int64": (
        model("Range", [], inits=[numpy_helper.from_array(np.array(v, np.float32), n)
                                  for n, v in (("s", -1e38), ("l", 3e38), ("d", 1e-30))]), "limit"),
    "Pad past int64": (model("Pad", [("x", F, ["N", 3])],
                             inits=[numpy_helper.from_array(np.array([0, 0, INT64_MAX, 0], np.int64), "p")]),
                     "integer-overflow"),
    "Pad-1 past int64": (model("Pad", [("x", F, [2, 3])], [helper.make_attribute("paddings", [2**62] * 4)], opset=1),
                         "integer-overflow"),
    "Unsqueeze to rank 1,030": (model("Unsqueeze", [("x", F, [2])],
                                      inits=[numpy_helper.from_array(np.arange(1029, dtype=np.int64), "a")]), "limit"),
    "Reshape-1 to rank 1,030": (model("Reshape", SIX, [helper.make_attribute("shape", [1] * 1029 + [6])], opset=1),
                                "limit"),
    "Expand to rank 1,030": (model("Expand", SIX, inits=[numpy_helper.from_array(np.ones(1030, np.int64), "s")]),
                             "limit"),
    "Einsum '......'": (model("Einsum", SIX, [helper.make_attribute("equation", "......")]), "bad-attribute"),
    "Einsum 'i1'": (model("Einsum", SIX, [helper.make_attribute("equation", "i1")]), "bad-attribute"),
    "Einsum repeating an output label": (model("Einsum", SIX, [helper.make_attribute("equation", "ij->jj")]),
                                         "bad-attribute"),
    "Einsum dropping the ellipsis": (model("Einsum", [("x", F, [4, 2, 3])], [helper.make_attribute("equation",
                                                                                                    "...ij->ij")]),
                                     "shape-mismatch"),
    "TopK with k = -1": (model("TopK", SIX, [helper.make_attribute("k", -1)], opset=1, n_outputs=2), "shape-mismatch"),
    "Tile by -1": (model("Tile", SIX, inits=[numpy_helper.from_array(np.array([1, -1], np.int64), "r")]),
                   "shape-mismatch"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(REGRESSIONS))
def test_a_node_no_rule_can_infer_is_diagnosed(case: str):
    m, code = REGRESSIONS[case]
    result = infer.infer_model(m)
    assert "rule-crash" not in codes(result), result.diagnostics
    assert code in codes(result), result.diagnostics
    for k in range(len(m.graph.output)):
        t = result.type_of(f"y{k}")
        shape = getattr(t, "shape", None)
        assert shape is None or len(shape) <= 1024
        for d in shape or ():
            assert not isinstance(d, int) or 0 <= d <= INT64_MAX, t


def test_an_extent_past_int64_is_left_unknown():
    m, _ = REGRESSIONS["Pad past int64"]
    shape = infer.infer_model(m).shape_of("y0")
    assert shape[1] == 3 and str(shape[0]).startswith("unk")  # a fresh variable, not N + 2^63 - 1


def test_slice_bounds_past_the_expression_limit():
    """``a0 + ... + a99 - b`` as a Slice start: its negation is past the expression limit."""
    names = [f"a{i}" for i in range(100)] + ["b"]
    nodes = [helper.make_node("Shape", ["x"], ["s"])]
    inits = [numpy_helper.from_array(np.array([i], np.int64), f"i{i}") for i in range(101)]
    for i in range(101):
        nodes.append(helper.make_node("Gather", ["s", f"i{i}"], [f"g{i}"]))
    total = "g0"
    for i in range(1, 100):
        nodes.append(helper.make_node("Add", [total, f"g{i}"], [f"t{i}"]))
        total = f"t{i}"
    nodes.append(helper.make_node("Sub", [total, "g100"], ["start"]))
    inits.append(numpy_helper.from_array(np.array([5], np.int64), "end"))
    nodes.append(helper.make_node("Slice", ["y", "start", "end"], ["z"]))
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", F, names), helper.make_tensor_value_info("y", F, ["N"])],
        [helper.make_tensor_value_info("z", F, None)],
        inits,
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    result = infer.infer_model(m)
    assert "rule-crash" not in codes(result), [d for d in result.diagnostics if d.code == "rule-crash"]
    assert len(result.shape_of("z")) == 1


def test_squeeze_with_empty_axes_claims_nothing_the_runtimes_disagree_on():
    """onnxruntime squeezes every extent of 1 when the axes are given but empty (as without axes),
    the reference evaluator none: the rank is not claimed unless no extent may be 1."""
    ort = pytest.importorskip("onnxruntime")
    empty = numpy_helper.from_array(np.zeros(0, np.int64), "axes")
    for shape, claimed in (([1, 3], None), (["N", 3], None), ([2, 3], (2, 3))):
        m = model("Squeeze", [("x", F, shape)], inits=[empty])
        assert infer.infer_model(m).shape_of("y0") == claimed
    m = model("Squeeze", [("x", F, [1, 3])], inits=[empty])
    session = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    assert session.run(None, {"x": np.zeros((1, 3), np.float32)})[0].shape == (3,)
    legacy = model(
        "Squeeze", [("x", F, [1, 3])], [helper.make_attribute("axes", [], attr_type=AttributeProto.INTS)], opset=11
    )
    assert infer.infer_model(legacy).shape_of("y0") is None


# -- infer_node never raises on attributes --------------------------------------------------------


def test_infer_node_types_an_empty_list_from_the_schema():
    out = infer.infer_node("ReduceSum", ["float[2,3]"], {"axes": []}, opset=11)
    assert out.types[0].shape == (1, 1) and not out.diagnostics  # empty axes: every axis
    out = infer.infer_node("Transpose", ["float[2,3]"], {"perm": []})
    assert not any(d.code == "rule-crash" for d in out.diagnostics)


def test_infer_node_diagnoses_an_attribute_whose_type_cannot_be_told():
    out = infer.infer_node("Flatten", ["float[2,3]"], {"axis": []})  # an int given as an empty list
    assert [d.code for d in out.diagnostics] == ["attribute-type"]
    out = infer.infer_node("Foo", ["float[2]"], {"x": []}, domain="custom")  # no schema to ask
    assert "attribute-type" in [d.code for d in out.diagnostics]
    out = infer.infer_node("Flatten", ["float[2,3]"], {"axis": {"not": "a value"}})
    assert [d.code for d in out.diagnostics] == ["attribute-type"]


def test_infer_node_takes_attribute_protos_and_any_opset():
    out = infer.infer_node("Flatten", ["float[2,3,4]"], {"axis": helper.make_attribute("whatever", 2)})
    assert out.types[0].shape == (6, 4)
    out = infer.infer_node("Flatten", ["float[2,3]"], {"axis": AttributeProto(name="axis", i=1)})
    assert [d.code for d in out.diagnostics] == ["attribute-type"]
    for opset in (2**70, -5, 0):
        infer.infer_node("Relu", ["float[2]"], opset=opset)  # diagnosed or inferred, never raised
