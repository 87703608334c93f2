"""Results reused across calls (``infer.walk.reuse``, issue 23): a call on a model of the same content
and options is answered by the earlier one, and only then.

Work is counted, not timed: a reused result makes no operation on extents (the dims core counts
them while a rule's time limit runs).
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.shape_inference import InferenceError

import infer
from infer import onnx_compat
from infer.core import dims as D
from infer.core import types as T
from infer.core.values import Value
from infer.walk import reuse

F = TensorProto.FLOAT


def _model(shape_values: list[int], weight: np.ndarray | None = None, x: list | None = None) -> onnx.ModelProto:
    """``y = Reshape(x, shape)`` (``shape`` an initializer: its contents decide ``y``), plus a
    MatMul by ``weight`` when given (a large initializer whose contents nothing reads)."""
    inits = [numpy_helper.from_array(np.array(shape_values, np.int64), "shape")]
    nodes = [helper.make_node("Reshape", ["x", "shape"], ["y"])]
    if weight is not None:
        inits.append(numpy_helper.from_array(weight, "w"))
        nodes.append(helper.make_node("MatMul", ["y", "w"], ["z"]))
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", F, x or ["N", 12])],
        [helper.make_tensor_value_info("z" if weight is not None else "y", F, None)],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def _work(run) -> tuple[object, int]:
    before = D.budget.operations()
    out = run()
    return out, D.budget.operations() - before


@pytest.fixture(autouse=True)
def _fresh_memo():
    reuse.clear()
    yield
    reuse.clear()


def test_a_second_call_on_the_same_model_is_the_first_one_again():
    m = _model([-1, 3])
    first, work = _work(lambda: infer.infer_model(m))
    assert work > 0 and first.shape_of("y") == (D.mul(4, D.symbol("N")), 3)
    again, work = _work(lambda: infer.infer_model(m))
    assert work == 0 and again.shape_of("y") == first.shape_of("y") and again.diagnostics == first.diagnostics
    copy = onnx.ModelProto()
    copy.CopyFrom(m)  # another object of the same content
    _, work = _work(lambda: infer.infer_model(copy))
    assert work == 0


def test_what_inference_reads_is_in_the_key():
    m = _model([-1, 3])
    infer.infer_model(m)
    changed = _model([-1, 4])  # a small initializer's contents: a constant the rule reads
    r, work = _work(lambda: infer.infer_model(changed))
    assert work > 0 and r.shape_of("y") == (D.mul(3, D.symbol("N")), 4)
    _, work = _work(lambda: infer.infer_model(m, dims={"N": 2}))  # other options
    assert work > 0
    big = np.zeros((3, 5000), np.float32)
    infer.infer_model(_model([-1, 3], big))
    _, work = _work(lambda: infer.infer_model(_model([-1, 3], big + 1)))  # a weight's values: not read
    assert work == 0
    r = infer.infer_model(_model([-1, 3], np.zeros((3, 4999), np.float32)))  # a weight's dims: read
    assert r.shape_of("z") == (D.mul(4, D.symbol("N")), 4999)


def test_a_result_changed_by_its_caller_is_not_what_the_next_call_gets():
    m = _model([-1, 3])
    first = infer.infer_model(m)
    first.graphs["main"].values["y"] = Value(T.TensorType(F, (1,)))
    first.diagnostics.append(first.diagnostics[0] if first.diagnostics else None)
    again = infer.infer_model(m)
    assert again.shape_of("y") == (D.mul(4, D.symbol("N")), 3) and None not in again.diagnostics


def test_a_caller_changing_its_model_after_the_call_does_not_change_what_is_kept():
    m = _model([-1, 3])
    infer.infer_model(m)
    m.graph.node[0].output[0] = "renamed"  # the caller edits the model it passed
    r = infer.infer_model(_model([-1, 3]))
    assert r.shape_of("y") == (D.mul(4, D.symbol("N")), 3) and [n.output[0] for n in r.graphs["main"].nodes] == ["y"]


def test_previous_is_reused_whatever_the_size_and_only_when_equal():
    m = _model([-1, 3])
    with reuse.disabled():
        first = infer.infer_model(m)
    _, work = _work(lambda: infer.infer_model(m, previous=first))
    assert work == 0
    _, work = _work(lambda: infer.infer_model(_model([-1, 2]), previous=first))
    assert work > 0


def test_the_drop_in_answers_again_with_the_same_model_or_the_same_error():
    m = _model([-1, 3])
    with reuse.disabled():
        want = onnx_compat.infer_shapes(m, data_prop=True)
    onnx_compat.infer_shapes(m, data_prop=True)
    got, work = _work(lambda: onnx_compat.infer_shapes(m, data_prop=True))
    assert work == 0 and got.SerializeToString() == want.SerializeToString()
    bad = _model([4, 2], x=[2, 3])  # 6 elements are no [4, 2]: strict mode fails
    for _ in range(2):
        with pytest.raises(InferenceError, match="the input has 6 elements"):
            onnx_compat.infer_shapes(bad, strict_mode=True)


def test_nothing_is_kept_past_its_bound():
    for k in range(2 * reuse.KEPT):
        infer.infer_model(_model([-1, 3 if k % 2 else 2, k + 1]))
    assert len(reuse.RECENT) == reuse.KEPT


@pytest.mark.parametrize("domain", ["reuse.test", ""])  # a custom domain, and ai.onnx (an operator added to it)
def test_a_result_resting_on_a_schema_registered_at_run_time_is_not_kept(domain):
    from onnx import defs

    schema = defs.OpSchema(
        "ReuseProbe",
        domain,
        1,
        inputs=[defs.OpSchema.FormalParameter("x", "T")],
        outputs=[defs.OpSchema.FormalParameter("y", "T")],
        type_constraints=[("T", ["tensor(float)"], "")],
    )
    io = [helper.make_tensor_value_info("x", F, ["N"])], [helper.make_tensor_value_info("y", F, None)]
    graph = helper.make_graph([helper.make_node("ReuseProbe", ["x"], ["y"], domain=domain)], "g", *io)
    opsets = [helper.make_opsetid("", 18)] + ([helper.make_opsetid(domain, 1)] if domain else [])
    m = helper.make_model(graph, opset_imports=opsets)
    onnx_compat.infer_shapes(m)
    assert len(reuse.RECENT) == 0  # no schema: the answer may change once one is registered
    defs.register_schema(schema)
    try:
        out = onnx_compat.infer_shapes(m)
        assert len(reuse.RECENT) == 0  # asked a registered schema
        typed = [vi.type.tensor_type.elem_type for vi in [*out.graph.value_info, *out.graph.output] if vi.name == "y"]
        assert F in typed  # the registered schema's answer, not the first call's
    finally:
        defs.deregister_schema("ReuseProbe", 1, domain)
