"""Every loop that grows with the input obeys the clocks (issue 40, item 2).

Each case is sized to take about ten times its clock (0.5 s) if nothing stopped it, and checks
that the `limit` diagnostic arrives within twice the clock: the scan and the writing of the
annotated copy under the run's clock (``max_seconds``); a rule over many inputs, bounds,
simplification and printing under the node's (``max_node_seconds``). The inputs that exceed the
size limits (``max_node_values``, ``max_graph_values``) are refused before anything slow runs.
"""

from __future__ import annotations

import dataclasses
import time

import pytest
from onnx import TensorProto, helper

import infer
from infer.contract import registry
from infer.core import dims as D
from infer.core.dims import bounds as B
from infer.walk import reuse

CLOCK = 0.5


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | 0x80 if n else b)
        if not n:
            return bytes(out)


def _field(num: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field (models of a million parts are written as bytes: fast)."""
    return _varint(num << 3 | 2) + _varint(len(payload)) + payload


def _value_info(name: str, dims: list[str] | None) -> bytes:
    tensor = b"\x08\x01"  # elem_type FLOAT
    if dims is not None:
        tensor += _field(2, b"".join(_field(1, _field(2, d.encode())) for d in dims))
    return _field(1, name.encode()) + _field(2, _field(1, tensor))


def _model(graph: bytes) -> bytes:
    return b"\x08\x08" + _field(8, b"\x10\x12") + _field(7, graph)  # ir_version 8, opset 18


def _graph_inputs(n: int) -> bytes:
    """``n`` graph inputs, each of its own ``dim_param``, and one Relu."""
    relu = _field(1, _field(1, b"i0") + _field(2, b"y") + _field(4, b"Relu"))
    inputs = b"".join(_field(11, _value_info(f"i{i}", [f"d{i}"])) for i in range(n))
    return _model(_field(2, b"g") + relu + inputs + _field(12, _value_info("y", None)))


def _sum(n: int) -> bytes:
    """One Sum of ``n`` inputs (all the same graph input)."""
    node = _field(1, b"".join(_field(1, b"x") for _ in range(n)) + _field(2, b"y") + _field(4, b"Sum"))
    return _model(_field(2, b"g") + node + _field(11, _value_info("x", ["N"])) + _field(12, _value_info("y", None)))


def _limits(result: infer.InferenceResult) -> list[infer.Diagnostic]:
    return [d for d in result.diagnostics if d.code == "limit"]


# -- the size limits: refused at once -------------------------------------------------------------


def test_graph_values_past_the_limit_are_refused_before_their_types_are_read():
    data = _graph_inputs(2_001)
    start = time.perf_counter()
    result = infer.infer_model(data, max_graph_values=2_000)
    assert time.perf_counter() - start < 2
    (d,) = _limits(result)
    assert d.severity == "error" and "2002 graph inputs, outputs and initializers" in d.message
    assert "max_graph_values" in d.message and "--limit max_graph_values=" in d.suggestion
    assert not infer.infer_model(data, max_graph_values=2_002).errors


def test_a_node_of_too_many_inputs_is_refused_before_it_is_decoded():
    data = _sum(300)
    for source in (
        data,
        helper.make_model(
            helper.make_graph(
                [helper.make_node("Sum", ["x"] * 300, ["y"])],
                "g",
                [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N"])],
                [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
            )
        ),
    ):
        (d,) = _limits(infer.infer_model(source, max_node_values=200))
        assert "Sum has 301 inputs and outputs" in d.message and "max_node_values" in d.message
    assert not _limits(infer.infer_model(data, max_node_values=301))


# -- the run's clock: the scan, the writing ------------------------------------------------------


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_the_scan_obeys_the_runs_clock():
    # 600,000 declarations: the scan alone takes some 4 s (after the read, which protobuf does).
    data = _graph_inputs(600_000)
    start = time.perf_counter()
    result = infer.infer_model(data, max_graph_values=10**6, max_seconds=CLOCK)
    seconds = time.perf_counter() - start
    (d,) = _limits(result)
    assert "its scan took longer than 0.5 s (limit max_seconds)" in d.message and d.severity == "error"
    assert seconds < 2 * CLOCK + 0.5, seconds  # (+ the read: protobuf's parse of 17 MB, untimed)


def _big(n: int, tag: str) -> D.Expr:
    """A sum of ``n`` variables, new objects each time (bounds and text are cached on objects)."""
    monos = sorted((D.terms.mono_of(D.terms.var(f"{tag}{j}", True)) for j in range(n)), key=lambda m: m.okey)
    return D.terms.make(tuple((m, 1) for m in monos), 0)


RELU = ("", "Relu")  # (domain, operator): the registry's key


@pytest.fixture
def relu_rule(monkeypatch):
    """Relu's rule replaced by the function the test sets (``relu_rule.fn``), in the registry's
    entries (what the walk reads, compiled or not: not ``registry.lookup``, which a compiled
    caller calls directly)."""

    class Rule:
        @staticmethod
        def run(ctx):
            return Rule.fn(ctx)

    registry.ensure("", "Relu")
    entries = registry.REGISTRY._entries
    monkeypatch.setitem(entries, RELU, [dataclasses.replace(e, rule=Rule.run, pure=False) for e in entries[RELU]])
    with reuse.disabled():  # (each test's rule runs: no result of an earlier call stands for it)
        yield Rule


def _relus(n: int):
    nodes = [helper.make_node("Relu", ["x"], [f"r{i}"]) for i in range(n)]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N"])
    outs = [helper.make_tensor_value_info(f"r{i}", TensorProto.FLOAT, None) for i in range(n)]
    return helper.make_model(helper.make_graph(nodes, "g", [x], outs), opset_imports=[helper.make_opsetid("", 18)])


@pytest.mark.timeout(120)
def test_writing_the_annotated_copy_obeys_the_runs_clock(relu_rule):
    # 5,000 outputs of as many types: writing them takes some 0.05 s, ten times this clock (which
    # starts afresh for the writing; the run's is set once the walk is done, to time the writing only).
    n, clock = 5_000, CLOCK / 100
    relu_rule.fn = lambda ctx: [infer.TensorType(TensorProto.FLOAT, (int(ctx.node.output[0][1:]) + 1,))]
    result = infer.infer_model(_relus(n), max_node_seconds=0)
    options = result._engine.state.options
    options.limits = options.limits.replace(max_seconds=clock)
    start = time.perf_counter()
    model = result.model
    seconds = time.perf_counter() - start
    (d,) = _limits(result)
    assert "writing the annotated model stopped after 0.005 s (limit max_seconds)" in d.message
    assert seconds < 2 * clock + 0.05, seconds  # (+ the copy of the model, made before the clock)
    # Every output is typed whole or not at all.
    assert {len(o.type.tensor_type.shape.dim) for o in model.graph.output} <= {0, 1}


# -- the node's clock: a variadic rule, bounds, simplification, printing ---------------------------


@pytest.mark.timeout(60)
def test_a_rule_over_many_inputs_obeys_the_nodes_clock(monkeypatch):
    seconds: list[float] = []

    def timed(rule):
        def run(ctx):
            start = time.perf_counter()
            try:
                return rule(ctx)
            finally:
                seconds.append(time.perf_counter() - start)

        return run

    registry.ensure("", "Sum")  # (its rule timed in the registry's entries, which the walk reads, compiled or not)
    entries, key = registry.REGISTRY._entries, ("", "Sum")
    monkeypatch.setitem(entries, key, [dataclasses.replace(e, rule=timed(e.rule)) for e in entries[key]])
    # 300,000 inputs: the Sum's rule alone takes some 0.5 s, ten times this clock.
    clock = CLOCK / 10
    result = infer.infer_model(_sum(300_000), max_node_values=10**6, max_node_seconds=clock)
    (d,) = _limits(result)
    assert "Sum: inference of this node took longer than 0.05 s" in d.message
    assert seconds[-1] < 2 * clock, seconds
    assert result.shape_of("y") is None


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", [pytest.param("bounds", marks=pytest.mark.slow), "simplification", "printing"])
def test_extents_of_raised_size_obey_the_nodes_clock(relu_rule, kind):
    # Each 0.3 to 0.5 s unstopped, five to ten times this clock: the bounds of 400,000 terms, a
    # product of 400 by 400 terms, the text of 150,000 terms (their objects made before the clock
    # starts, some 20 microseconds a term, so the text, dearer a term than the bounds, gets fewer).
    clock = CLOCK / 10
    if kind == "simplification":
        a, b = _big(400, "a"), _big(400, "b")
        work = lambda: D.mul(a, b)
    else:
        e = _big(400_000 if kind == "bounds" else 150_000, "s")
        work = (lambda: B.lower(e)) if kind == "bounds" else (lambda: D.to_str(e))
    spent: list[float] = []

    def rule(ctx):
        start = time.perf_counter()
        try:
            work()
        finally:
            spent.append(time.perf_counter() - start)
        return [ctx.type(0)]

    relu_rule.fn = rule
    result = infer.infer_model(_relus(1), max_node_seconds=clock, max_expression_size=10**7)
    (d,) = _limits(result)
    assert "Relu: inference of this node took longer than 0.05 s (max_node_seconds)" in d.message
    assert spent[0] < 2 * clock, spent
