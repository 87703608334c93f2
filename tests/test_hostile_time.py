"""Time bounded by the model's size (issue 19): constructions that made the dims core quadratic or
worse, the per-node time limit, and the one ``Limits`` dataclass every way in reads.

1. Broadcasts and concatenations over many distinct symbolic extents (``benchmarks/hostile.py``)
   take time proportional to the model, with the results they had.
2. ``max_node_seconds``: a rule that runs past it is a ``limit`` warning on its node, its outputs
   unknown, and inference goes on; nested rules (an If's branches) each answer for their own time.
3. ``infer.Limits``: validation, the keyword arguments of ``infer_model``, ``--limit``, the table.
"""

from __future__ import annotations

import time
from dataclasses import FrozenInstanceError, fields, replace

import onnx
import pytest
from onnx import TensorProto, helper

import infer
from benchmarks import hostile
from infer import cli
from infer.contract import registry
from infer.core import dims as D
from infer.core import limits
from infer.core.dims.bounds import lower
from infer.core.dims.budget import NodeTimeout
from infer.core.limits import Limits
from infer.walk import reuse

# -- 1. constructions that were quadratic ---------------------------------------------------------


def _timed(data: bytes, **kwargs) -> tuple[infer.InferenceResult, float]:
    """The result and its wall-clock seconds (for the per-node time limit, which is a clock)."""
    start = time.perf_counter()
    result = infer.infer_model(data, **kwargs)
    return result, time.perf_counter() - start


def _work(data: bytes) -> tuple[infer.InferenceResult, int]:
    """The result, and how many operations on extents the run made (the dims core counts them for
    the per-node time limit): a measure of work that, unlike a clock, a loaded machine does not
    move."""
    before = D.budget.operations()
    result = infer.infer_model(data)
    return result, D.budget.operations() - before


def _grows_linearly(case, size: int) -> tuple[infer.InferenceResult, int, int]:
    """Work at ``size`` and at twice it; the larger result."""
    _, small = _work(case(size))
    result, large = _work(case(2 * size))
    return result, small, large


def test_max_over_many_distinct_extents_is_linear_in_them():
    # 80 Max nodes over 250 inputs each took 21 s (every extent compared with, and printed beside,
    # the maximum of all before it); now each extent is read once.
    result, small, large = _grows_linearly(hostile.max_wide, 50_000)
    assert large <= 2.5 * small, (small, large)
    (m0,) = result.shape_of("m0")
    env = {f"d{i}": (i * 37) % 101 + 1 for i in range(250)}
    assert len(D.extremum_args(m0, "max")) == 250 and D.evaluate(m0, env) == max(env.values())
    assumptions = [f for f in result.dims.facts if f.kind == "assumption"]
    assert len(assumptions) <= len(result.graphs["main"].nodes)  # one per node, not one per extent
    assert "d0, d1, d2" in assumptions[0].text and "broadcast" in assumptions[0].text


@pytest.mark.timeout(120)
@pytest.mark.parametrize("case", ["add_chain", "where_chain", "concat_chain", "add2d_chain"])
def test_chains_of_new_extents_take_work_proportional_to_the_model(case):
    # 300 KB (5,000 to 6,000 nodes): the Add chain took 15 s and more, 2 ms a node spent comparing
    # the running maximum with each new extent through sympy (the core before issue 23), more for
    # each node before it.
    result, small, large = _grows_linearly(hostile.CASES[case], 150_000)
    assert 0 < small and large <= 2.5 * small, (small, large)
    assert not [d for d in result.diagnostics if d.code == "rule-crash"]


def test_broadcast_results_are_unchanged_where_few_extents_meet():
    x = [helper.make_tensor_value_info(f"x{i}", TensorProto.FLOAT, [f"d{i}"]) for i in range(3)]
    nodes = [helper.make_node("Add", ["x0", "x1"], ["s"]), helper.make_node("Max", ["s", "x2", "x0"], ["m"])]
    graph = helper.make_graph(nodes, "g", x, [helper.make_tensor_value_info("m", TensorProto.FLOAT, None)])
    result = infer.infer_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]))
    assert D.to_str(result.shape_of("s")[0]) == "max(d0, d1)"
    assert D.to_str(result.shape_of("m")[0]) == "max(d0, d1, d2)"
    texts = [f.text for f in result.dims.facts if f.kind == "assumption"]
    assert "d0 and d1 broadcast (each equal or 1)" in texts


def test_many_extents_one_of_which_may_be_zero_leave_the_extent_unknown():
    # A fresh extent (a NonZero count) may be 0, which broadcasts only with 1: no maximum.
    x = [helper.make_tensor_value_info(f"x{i}", TensorProto.INT64, [f"d{i}"]) for i in range(20)]
    rest = [f"x{i}" for i in range(1, 20)]
    nodes = [helper.make_node("NonZero", ["x0"], ["nz"]), helper.make_node("Max", ["nz", *rest], ["m"])]
    result = infer.infer_model(_model(nodes, x, [helper.make_tensor_value_info("m", TensorProto.INT64, None)]))
    assert result.shape_of("nz")[0] == 1 and lower(result.shape_of("nz")[1]) == 0
    m = result.shape_of("m")
    assert m[0] == 1 and D.is_symbolic(m[1]) and D.extremum_args(m[1], "max") is None  # a fresh variable
    assert "may be 0" in str(result.explain("m", dim=1))


# -- 2. the per-node time limit -------------------------------------------------------------------


def _slow_rule(ctx):
    """Keeps the dims core busy for 30 s unless stopped (a rule made slow on purpose)."""
    a, b = D.symbol("a"), D.symbol("b")
    end = time.monotonic() + 30
    i = 0
    while time.monotonic() < end:
        D.equal(D.add(a, i), D.mul(b, i + 2))
        i += 1
    return [ctx.type(0)]


@pytest.fixture
def slow_relu(monkeypatch):
    """Relu's rule replaced by ``_slow_rule``, in the registry's entries (what the walk reads,
    compiled or not: not ``registry.lookup``, which a compiled caller calls directly), and run:
    no result of an earlier call to the real rule stands for it (reuse is off)."""
    registry.ensure("", "Relu")
    entries, key = registry.REGISTRY._entries, ("", "Relu")
    monkeypatch.setitem(entries, key, [replace(e, rule=_slow_rule, pure=True) for e in entries[key]])
    with reuse.disabled():
        yield


def _model(nodes, inputs, outputs, **kw) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, **kw)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


X = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])


@pytest.mark.timeout(60)
def test_a_node_past_its_time_is_diagnosed_and_inference_goes_on(slow_relu):
    nodes = [
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("Neg", ["x"], ["n"]),
        helper.make_node("Add", ["n", "x"], ["y"]),
    ]
    outs = [helper.make_tensor_value_info(v, TensorProto.FLOAT, None) for v in ("r", "y")]
    result, seconds = _timed(_model(nodes, [X], outs), max_node_seconds=0.3)
    assert seconds < 10
    (limit,) = [d for d in result.diagnostics if d.code == "limit"]
    assert limit.severity == "warning" and limit.location.node_index == 0
    assert "max_node_seconds" in limit.message and "0.3 s" in limit.message
    assert result.shape_of("r") is None
    assert "max_node_seconds" in str(result.explain("r"))
    assert D.to_str(result.shape_of("y")[0]) == "N" and result.shape_of("y")[1] == 4


@pytest.mark.timeout(60)
def test_a_slow_node_in_a_subgraph_is_diagnosed_there(slow_relu):
    then = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["t"])],
        "then",
        [],
        [helper.make_tensor_value_info("t", TensorProto.FLOAT, None)],
    )
    other = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["e"])],
        "else",
        [],
        [helper.make_tensor_value_info("e", TensorProto.FLOAT, None)],
    )
    nodes = [
        helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other),
        helper.make_node("Neg", ["x"], ["z"]),
    ]
    c = helper.make_tensor_value_info("c", TensorProto.BOOL, [])
    outs = [helper.make_tensor_value_info(v, TensorProto.FLOAT, None) for v in ("y", "z")]
    result, seconds = _timed(_model(nodes, [c, X], outs), max_node_seconds=0.3)
    assert seconds < 10
    (limit,) = [d for d in result.diagnostics if d.code == "limit"]
    assert limit.location.graph == "main/0:then_branch" and limit.location.op_type == "Relu"
    assert result.shape_of("z") == result.shape_of("x") and result.shape_of("y") is None


def test_a_node_that_runs_out_of_time_drops_the_records_of_its_subgraphs():
    from infer.core.scopes import GraphPath

    def inside(p: str) -> bool:  # what the rule runner drops when node 2 of main/3:body runs out of time
        return GraphPath(p).inside_node("main/3:body", 2)

    inner = ["main/3:body/2:then_branch", "main/3:body/2:else_branch/0:body", "main/3:body/2@local.f"]
    outside = ["main/3:body", "main/3:body/20:then_branch", "main/3:body/1:else_branch", "main"]
    assert all(inside(p) for p in inner) and not any(inside(p) for p in outside)


def test_time_limits_nest_and_pause_the_enclosing_clock():
    a = D.symbol("a")
    with D.time_limit(None):  # unbounded: nothing is ever raised
        for i in range(200):
            D.add(a, i)
    with D.time_limit(100) as outer:
        with pytest.raises(NodeTimeout) as caught, D.time_limit(0.01) as inner:
            while True:
                D.add(a, 1)
        assert (outer, inner, caught.value.level) == (0, 1, 1)
        D.add(a, 1)  # the outer block's time is not up
    with D.time_limit(0.2):
        with D.time_limit(None):  # the inner block's work does not count for the outer one
            end = time.monotonic() + 0.4
            while time.monotonic() < end:
                D.add(a, 1)
        for i in range(100):
            D.add(a, i)
        with pytest.raises(NodeTimeout) as caught:
            while True:
                D.add(a, 1)
        assert caught.value.level == 0
    assert D.budget.current().earliest == float("inf") and D.budget.current().deadlines == []


def test_a_normal_model_is_unaffected_by_the_time_limit():
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Add", ["r", "x"], ["y"])]
    model = _model(nodes, [X], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    default, off = infer.infer_model(model), infer.infer_model(model, max_node_seconds=0)
    assert default.to_json() == off.to_json()
    assert not [d for d in default.diagnostics if d.code == "limit"]


# -- 3. one Limits dataclass ----------------------------------------------------------------------


def test_limits_validate_names_and_values():
    assert Limits().max_node_seconds == limits.MAX_NODE_SECONDS and Limits().max_depth == limits.MAX_DEPTH
    assert Limits().replace(max_nodes=5).max_nodes == 5
    with pytest.raises(ValueError, match="'max_node' is not a limit; the limits are max_depth"):
        Limits.from_overrides({"max_node": 5})
    bad_values = [
        ("max_rank", -1),
        ("max_depth", None),
        ("max_nodes", 2.5),
        ("max_nodes", True),
        ("max_node_seconds", -1),
        ("max_node_seconds", float("inf")),
        ("max_node_seconds", "1"),
    ]
    for name, bad in bad_values:
        with pytest.raises(ValueError, match=name):
            Limits.from_overrides({name: bad})
    assert Limits(max_node_seconds=None).max_node_seconds is None and Limits(max_node_visits=None)
    # Made directly too, in either build (compiled, the dataclass would refuse it with a TypeError
    # before its check: infer.core.limits stays pure, build_backend/onnx_infer_build.py).
    with pytest.raises(ValueError, match="max_nodes"):
        Limits(max_nodes="5")  # type: ignore[arg-type]
    with pytest.raises(FrozenInstanceError):
        Limits().max_depth = 3  # type: ignore[misc]


def test_infer_model_reads_limits_and_its_keywords_override_them():
    model = _model([helper.make_node("Relu", ["x"], ["y"])], [X], [helper.make_tensor_value_info("y", 1, None)])
    refused = infer.infer_model(model, limits=Limits(max_nodes=0))
    assert any("max_nodes" in d.message for d in refused.diagnostics if d.code == "limit")
    allowed = infer.infer_model(model, limits=Limits(max_nodes=0), max_nodes=10)
    assert not [d for d in allowed.diagnostics if d.code == "limit"]
    with pytest.raises(ValueError, match="max_rank"):
        infer.infer_model(model, max_rank=-1)
    with pytest.raises(ValueError, match=r"infer\.Limits"):
        infer.infer_model(model, limits={"max_nodes": 5})  # type: ignore[arg-type]


def test_every_limit_keyword_of_infer_model_reaches_the_run():
    """Each ``max_*`` keyword is a limit and is read: a negative value is refused naming it (the
    keywords once went through ``locals()``, which a build compiled with mypyc does not fill, and
    every one of them was dropped there). Values of the wrong type are a ``ValueError`` too."""
    import inspect

    keywords = [p for p in inspect.signature(infer.infer_model).parameters if p.startswith("max_")]
    assert keywords == list(Limits.names())
    model = _model([helper.make_node("Relu", ["x"], ["y"])], [X], [helper.make_tensor_value_info("y", 1, None)])
    for name in keywords:
        with pytest.raises(ValueError, match=name):
            infer.infer_model(model, **{name: -1})
        with pytest.raises(ValueError, match=name):
            infer.infer_model(model, **{name: "1"})
    limited = infer.infer_model(model, max_node_visits=0)
    assert any("max_node_visits" in d.message for d in limited.diagnostics if d.code == "limit")


def test_the_table_and_the_command_line_read_the_dataclass():
    names = [f.name for f in fields(Limits)]
    rows = {row[0]: row for row in limits.TABLE}
    for f in fields(Limits):
        assert rows[f.name] == (f.name, f.metadata["shown"], f.metadata["bounds"], f.metadata["past"])
    assert list(cli.LIMIT_NAMES) == names
    assert cli._limits(["max_node_seconds=0.5", "max_nodes=7"]) == {"max_node_seconds": 0.5, "max_nodes": 7}
    assert cli._limits(["max_node_seconds=0"]) == {"max_node_seconds": 0.0}
    bad_items = [
        ("max_node_seconds=-1", "not negative"),
        ("max_node_seconds=x", "number of seconds"),
        ("max_nodes=0", "positive"),
        ("max_nodes=1.5", "not an integer"),
        ("nope=1", "NAME one of"),
    ]
    for bad, message in bad_items:
        with pytest.raises(cli.CliError, match=message):
            cli._limits([bad])
