"""One run context owns the scope, the budget and the memo policy (issue 37).

``RunState`` holds all three for the run; the budget is made by ``infer.run`` and is the one the
rule runner blames refusals on; the operations on extents read the budget active in their thread,
which is the run's only while it runs.
"""

from __future__ import annotations

import threading

import pytest
from onnx import TensorProto as TP
from onnx import helper as h

import infer
from infer.core import dims as D
from infer.core.dims import budget as B
from infer.walk import reuse
from infer.walk.memo import Memo


def _model(rank: int = 1):
    """A Mul of an input's shape with itself: every call does some work on extents."""
    dims = [f"d{i}" for i in range(rank)]
    nodes = [h.make_node("Shape", ["x"], ["s"]), h.make_node("Mul", ["s", "s"], ["y"])]
    graph = h.make_graph(
        nodes,
        "g",
        [h.make_tensor_value_info("x", TP.FLOAT, dims)],
        [h.make_tensor_value_info("y", TP.INT64, None)],
    )
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 18)])


def test_the_run_owns_its_scope_budget_and_memo_policy():
    with reuse.disabled():
        result = infer.infer_model(_model(), max_expression_size=77)
    state = result._engine.state
    assert isinstance(state.budget, B.Budget) and state.budget.max_size == 77
    assert isinstance(state.memo, Memo) and 77 in state.memo.options  # the bound keys kept results
    assert state.visits.used >= 2 and state.scope.table is state.table
    assert B.current() is not state.budget  # active only while the run runs
    assert B.current().max_size == B.MAX_EXPRESSION_SIZE  # the thread's default is untouched


def test_a_runs_refusals_are_its_own():
    # Shape(x) + Shape(z): each element a sum of two variables, past a bound of one term.
    nodes = [
        h.make_node("Shape", ["x"], ["s"]),
        h.make_node("Shape", ["z"], ["t"]),
        h.make_node("Add", ["s", "t"], ["y"]),
    ]
    inputs = [h.make_tensor_value_info(n, TP.FLOAT, [f"{n}{i}" for i in range(3)]) for n in "xz"]
    graph = h.make_graph(nodes, "g", inputs, [h.make_tensor_value_info("y", TP.INT64, None)])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 18)])
    outside = B.overflow_count()
    with reuse.disabled():
        refused = infer.infer_model(model, max_expression_size=1)
        kept = infer.infer_model(model)
    assert refused._engine.state.budget.refused >= 3 and kept._engine.state.budget.refused == 0
    assert refused.value("y").known.elems == (None,) * 3 and None not in kept.value("y").known.elems
    assert [d.code for d in refused.diagnostics if d.code == "limit"] == ["limit"]
    assert B.overflow_count() == outside  # the thread's own budget saw none of it
    with B.Budget(1).active() as b:
        s = D.total([D.symbol("a"), D.symbol("b"), D.symbol("c")])
        assert D.mul(s, s) is None and b.refused == 1
    assert B.overflow_count() == outside


def test_a_run_inside_a_run_keeps_the_sooner_deadline():
    outer = B.Budget(seconds=0.05)
    with outer.active():
        inner = B.Budget(seconds=100)
        with inner.active():
            assert inner.run_deadline == outer.run_deadline and inner.earliest == outer.earliest
        assert B.current() is outer
    assert B.current() is not outer


def test_activating_the_active_budget_again_changes_nothing():
    b = B.Budget(seconds=5)
    with b.active():
        deadline = b.run_deadline
        with b.active() as again:
            assert again is b and b.run_deadline == deadline
        assert B.current() is b


def test_runs_in_two_threads_do_not_share_a_budget():
    seen: dict[str, B.Budget] = {}
    barrier = threading.Barrier(2)

    def run(tag: str, size: int) -> None:
        with B.Budget(size).active() as b:
            barrier.wait(timeout=10)
            seen[tag] = B.current()
            assert B.current().max_size == size and b is seen[tag]

    threads = [threading.Thread(target=run, args=(t, n)) for t, n in (("a", 5), ("b", 9))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=20)
    assert seen["a"] is not seen["b"] and (seen["a"].max_size, seen["b"].max_size) == (5, 9)


@pytest.mark.parametrize("rank", [1, 2])
def test_work_of_a_finished_run_is_counted_in_the_thread(rank):
    before = B.operations()
    with reuse.disabled():
        infer.infer_model(_model(rank), max_seconds=100)
    assert B.operations() > before
