"""The memo of rule results: a reuse gives what a fresh run would, checked against the reference."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import infer
from infer.core import dims as D


def _const(name: str, value: float) -> object:
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.array([value], np.float32)))


def test_zero_and_negative_zero_contents_are_not_confused() -> None:
    # 0.0 == -0.0 (and they hash alike), yet they are different values: nodes alike but for a
    # zero's sign must not share a memoized result. Each product appears three times, so that the
    # memo stores a result and reuses it.
    nodes = [_const("one", 1.0)]
    outputs = []
    for k, zero in enumerate([0.0, -0.0, 0.0, -0.0, -0.0, 0.0]):
        nodes += [_const(f"z{k}", zero), helper.make_node("Mul", ["one", f"z{k}"], [f"m{k}"])]
        outputs.append(f"m{k}")
    graph = helper.make_graph(
        nodes, "g", [], [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs]
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    result = infer.infer_model(model)
    expected = ReferenceEvaluator(model).run(None, {})
    for name, value in zip(outputs, expected):
        known = result.value(name).known
        assert known is not None, name
        (ours,), (theirs,) = known.elems, value.tolist()
        assert ours == theirs and math.copysign(1.0, ours) == math.copysign(1.0, theirs), name
    # And they print as they are, whichever was printed first.
    assert [D.to_str(e) for e in (0.0, -0.0, 0.0)] == ["0.0", "-0.0", "0.0"]


# Models whose layers repeat (each node's result is reused many times), and control flow.
_REPEATING = [
    "bert_torchscript.onnx",
    "gpt2_torchscript.onnx",
    "t5_torchscript.onnx",
    "gpt2_dynamo.onnx",
    "swin_torchscript.onnx",
]


def _everything(result: infer.InferenceResult) -> list[str]:
    """Every value's type and contents, every diagnostic and assumption, as text."""
    out = [
        f"{graph}/{name}: {v.type} {v.known.elems if v.known is not None else ''}" for graph, name, v in result.values()
    ]
    out += [f"{d.code} {d.message} {d.location}" for d in result.diagnostics]
    out += [str(a) for a in result.assumptions]
    # ... and what the model's domain requires, with the nodes that require it (a reused result
    # makes its rule's requirements again at its own node).
    out += [f"{c} <- {sorted(str(d) for d in c.demands)}" for c in result.domain.constraints]
    return out


def test_reused_results_are_what_every_rule_run_afresh_gives(monkeypatch) -> None:
    """A rule's result is reused only where it is declared pure and its context recorded no
    effect: with the memo never answering, every model infers to the same text."""
    import onnx

    from infer.walk import memo, reuse

    root = Path(__file__).parent / "models"
    for name in _REPEATING:
        model = onnx.load(str(root / name))
        with reuse.disabled():
            reused = _everything(infer.infer_model(model))
            with monkeypatch.context() as patch:
                patch.setattr(memo.Memo, "get", lambda self, key, scope: None)
                afresh = _everything(infer.infer_model(model))
        assert reused == afresh, name


def test_nodes_alike_that_make_fresh_extents_get_one_each() -> None:
    """NonZero's count is a fresh variable of its node: two NonZero nodes on one input must not
    share it (a reuse of the first's result would claim their counts equal)."""
    nodes = [helper.make_node("NonZero", ["x"], [f"nz{k}"]) for k in range(3)]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N"])],
        [helper.make_tensor_value_info(f"nz{k}", TensorProto.INT64, None) for k in range(3)],
    )
    result = infer.infer_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]))
    counts = [result.shape_of(f"nz{k}")[1] for k in range(3)]
    assert all(result.dims.is_fresh(c) for c in counts), counts
    assert len({D.to_str(c) for c in counts}) == 3, counts


def test_nodes_alike_each_report_what_they_find() -> None:
    """A rule that reports (extents that do not broadcast) does so at every node alike: a reuse
    would skip the second node's report."""
    nodes = [helper.make_node("Add", ["a", "b"], [f"s{k}"]) for k in range(3)]
    graph = helper.make_graph(
        nodes,
        "g",
        [
            helper.make_tensor_value_info("a", TensorProto.FLOAT, [3]),
            helper.make_tensor_value_info("b", TensorProto.FLOAT, [4]),
        ],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("s0", "s1", "s2")],
    )
    result = infer.infer_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]))
    mismatches = [d.location.node_index for d in result.diagnostics if d.code == "shape-mismatch"]
    assert mismatches == [0, 1, 2], result.diagnostics


def test_a_reused_result_requires_at_its_own_node_what_the_rule_required() -> None:
    """MatMul requires its inner extents equal (K == L); a reuse of the first node's result at
    the others must still list each of them as making the requirement (the domain says which
    nodes need what), as running the rule at each would."""
    nodes = [helper.make_node("MatMul", ["a", "b"], [f"y{k}"], name=f"mm{k}") for k in range(3)]
    graph = helper.make_graph(
        nodes,
        "g",
        [
            helper.make_tensor_value_info("a", TensorProto.FLOAT, ["N", "K"]),
            helper.make_tensor_value_info("b", TensorProto.FLOAT, ["L", "M"]),
        ],
        [helper.make_tensor_value_info(f"y{k}", TensorProto.FLOAT, None) for k in range(3)],
    )
    result = infer.infer_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]))
    (equal,) = [c for c in result.domain.constraints if c.kind == "equal"]
    assert sorted(d.site.node_name for d in equal.demands) == ["mm0", "mm1", "mm2"], equal.demands


def test_re_inference_after_an_edit_is_a_fresh_inference_of_the_edited_model(monkeypatch) -> None:
    """``previous=`` reuses the first call's rule results (a renamed node's, whose key has no
    names, too): what comes out, the domain's requiring nodes included, is what inferring the
    edited model with no result ever reused gives."""
    import onnx

    from benchmarks.corpus import edited
    from infer.walk import memo, reuse

    root = Path(__file__).parent / "models"
    for name in ["efficientnet_dynamo.onnx", "bert_torchscript.onnx"]:
        model = onnx.load(str(root / name))
        for edit in edited(model):
            reuse.clear()  # (rule results stay kept across calls: what ``previous=`` is for)
            again = _everything(infer.infer_model(edit, previous=infer.infer_model(model)))
            with reuse.disabled():
                with monkeypatch.context() as patch:
                    patch.setattr(memo.Memo, "get", lambda self, key, scope: None)
                    afresh = _everything(infer.infer_model(edit))
            assert again == afresh, name


def test_re_inference_after_a_rename_runs_no_rule(monkeypatch) -> None:
    """A renamed node presents its rule the same question (a key has no names), and every other
    node sees the same inputs: nothing is inferred afresh, though Conv's results made
    requirements and read what the run had learned (they hold where the run's facts are as
    they were when the rule began)."""
    import onnx

    from benchmarks.corpus import edited
    from infer.walk import reuse
    from infer.walk.engine import Engine

    model = onnx.load(str(Path(__file__).parent / "models" / "efficientnet_dynamo.onnx"))
    renamed, _ = edited(model)
    infer.infer_model(model)  # (every operator's module loaded: a later registration changes the keys)
    reuse.clear()
    first = infer.infer_model(model)
    afresh: list[str] = []
    real = Engine._infer_afresh
    monkeypatch.setattr(
        Engine,
        "_infer_afresh",
        lambda self, frame, idx, view, *rest: afresh.append(view.op_type) or real(self, frame, idx, view, *rest),
    )
    infer.infer_model(renamed, previous=first)
    assert afresh == []
