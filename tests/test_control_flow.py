"""Control flow, sequences and optionals (issue 5) checked against onnxruntime.

Every model here is inferred, run in onnxruntime with every top-level value exposed, and every
claim checked (``tests/support/runtime.check``; sequences element by element). A variable in a
sequence's element shape must denote one extent for every element (the note to Clause 6.5.2).
The annotated model must pass ``onnx.checker`` and run to the same outputs. Body values cannot
be exposed, so what a body claims is checked through the annotated model and by inspection.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import infer
from infer.core import dims as D
from infer.core import types as T
from tests.support.runtime import check, expose_all, run

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def test_the_engine_leaves_sequence_element_extents_unnamed() -> None:
    """An extent in which a sequence's elements differ is left out of its element type."""
    m = model(
        [node("SequenceConstruct", ["a", "b"], ["s"])], [vi("a", F, ["N", 3]), vi("b", F, ["N", 4])], [seq_vi("s", F)]
    )
    assert shape(infer.infer_model(m), "s") == "seq(float[N,?])"


# -- building and checking models -----------------------------------------------------------------


def vi(name: str, elem: int | None = None, shape: Any = None) -> onnx.ValueInfoProto:
    """A tensor value; without a shape, left untyped (the checker wants shapes on typed outputs)."""
    if elem is None or shape is None:
        return onnx.ValueInfoProto(name=name)
    return helper.make_tensor_value_info(name, elem, shape)


def seq_vi(name: str, elem: int, shape: Any = None) -> onnx.ValueInfoProto:
    return helper.make_value_info(name, helper.make_sequence_type_proto(helper.make_tensor_type_proto(elem, shape)))


def const(name: str, values: Any, dtype: Any = np.int64) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(values, dtype=dtype), name)


def node(op: str, ins: Sequence[str], outs: Sequence[str], **attrs: Any) -> onnx.NodeProto:
    return helper.make_node(op, list(ins), list(outs), **attrs)


def graph(nodes, inputs, outputs, inits=()) -> onnx.GraphProto:
    return helper.make_graph(list(nodes), "g", list(inputs), list(outputs), list(inits))


def model(
    nodes,
    inputs,
    outputs,
    inits=(),
    opset: int = 18,
    functions=(),
    ir: int = 10,
    imports: Sequence[tuple[str, int]] = (),
) -> onnx.ModelProto:
    g = graph(nodes, inputs, outputs, inits)
    ops = [helper.make_opsetid("", opset), *[helper.make_opsetid(d, v) for d, v in imports]]
    m = helper.make_model(g, opset_imports=ops, functions=list(functions))
    m.ir_version = ir
    return m


def _bindings(m: onnx.ModelProto, feeds: Mapping[str, Any]) -> dict[str, int]:
    """dim_param -> extent, from the shapes of the fed inputs (optionals and sequences too)."""
    out: dict[str, int] = {}

    def visit(tp: onnx.TypeProto, value: Any) -> None:
        kind = tp.WhichOneof("value")
        if kind == "optional_type" and value is not None:
            visit(tp.optional_type.elem_type, value)
        elif kind == "sequence_type" and isinstance(value, list):
            for item in value:
                visit(tp.sequence_type.elem_type, item)
        elif kind == "tensor_type":
            for axis, d in enumerate(tp.tensor_type.shape.dim):
                if d.dim_param:
                    out[d.dim_param] = int(np.asarray(value).shape[axis])

    for inp in m.graph.input:
        if inp.name in feeds:
            visit(inp.type, feeds[inp.name])
    return out


def _consistent(result: infer.InferenceResult, runs: list[tuple[dict[str, int], dict[str, Any]]]) -> list[str]:
    """Every variable denotes one extent in a run: across values and across sequence elements."""
    problems = []
    for bindings, observed in runs:
        seen: dict[str, tuple[int, str]] = {}

        def note(d: D.Dim, real: int, where: str) -> None:
            name = D.variable_name(d)
            if name is None or name in bindings:
                return
            prev = seen.setdefault(name, (real, where))
            if prev[0] != real:
                problems.append(f"`{d.name}` is {prev[0]} at {prev[1]} but {real} at {where}")

        for g, name, v in result.values():
            if g != "main" or name not in observed:
                continue
            t, obs = v.type, observed[name]
            if isinstance(t, T.OptionalType) and obs is not None:
                t = t.elem
            arrays = [np.asarray(obs)] if isinstance(t, T.TensorType) else []
            if isinstance(t, T.SequenceType) and isinstance(t.elem, T.TensorType):
                t, arrays = t.elem, [np.asarray(x) for x in obs]
            if not isinstance(t, T.TensorType) or t.shape is None:
                continue
            for i, arr in enumerate(arrays):
                if arr.ndim != len(t.shape):
                    continue
                for axis, (d, real) in enumerate(zip(t.shape, arr.shape)):
                    note(d, real, f"`{name}`[{i}] axis {axis}")
    return problems


def verify(
    m: onnx.ModelProto, feeds_list: Sequence[Mapping[str, np.ndarray]], errors_ok: bool = False
) -> infer.InferenceResult:
    """Infer ``m``, run it at every feed, check every claim and the annotated model."""
    result = infer.infer_model(m)
    if not errors_ok:
        errors = [str(d) for d in result.diagnostics if d.severity == "error"]
        assert not errors, errors
    exposed = expose_all(m)
    runs = [(_bindings(m, feeds), run(exposed, feeds)) for feeds in feeds_list]
    verdict = check(result, runs)
    assert not verdict.wrong, verdict.wrong
    assert not _consistent(result, runs)
    annotated = result.model
    if all(_checkable(o) for o in annotated.graph.output):
        onnx.checker.check_model(annotated)  # it needs a shape on every top-level tensor output
    outputs = [o.name for o in m.graph.output]
    for feeds, (_, observed) in zip(feeds_list, runs):
        again = run(annotated, feeds)
        for name in outputs:
            _same(again[name], observed[name], name)
    return result


def _checkable(o: onnx.ValueInfoProto) -> bool:
    kind = o.type.WhichOneof("value")
    return kind is not None and (kind != "tensor_type" or o.type.tensor_type.HasField("shape"))


def _same(a: Any, b: Any, name: str) -> None:
    if isinstance(b, list):
        assert isinstance(a, list) and len(a) == len(b), name
        for x, y in zip(a, b):
            _same(x, y, name)
    elif b is None:
        assert a is None, name
    elif np.asarray(b).size == 0:
        # After zero iterations onnxruntime shapes a Loop's scan output from what it inferred of
        # the body, so an annotated model may give (0, 2) where the original gave (0, 0).
        assert np.asarray(a).size == 0, name
    else:
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), err_msg=name)


def shape(result: infer.InferenceResult, name: str, graph: str | None = None) -> str:
    return str(result.type_of(name, graph))


def fresh_at(result: infer.InferenceResult, d: D.Dim) -> str:
    """The origin reason of fresh variable ``d``."""
    assert D.is_variable(d) and result.dims.is_fresh(d), d
    return result.dims.get(D.variable_name(d)).origin.reason


def floats(*shape_: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape_).astype(np.float32)


def body_path(result: infer.InferenceResult, attr: str = "body") -> str:
    paths = [p for p in result.graphs if p.endswith(f":{attr}")]
    assert len(paths) == 1, paths
    return paths[0]


def not_from_body(result: infer.InferenceResult, t: T.Type, path: str) -> None:
    """No dim of ``t`` names a variable made inside the body at ``path``."""
    for d in T.dims_of(t):
        for n in D.free_names(d):
            var = result.dims.get(n)
            if var is not None and var.origin.site is not None:
                g = var.origin.site.graph
                assert not (g == path or g.startswith(path + "/")), f"{t} names {n}, made in the body"


# -- If -------------------------------------------------------------------------------------------


def _branches(then_shape: list, else_shape: list, then_elem: int = F, else_elem: int = F):
    then = graph(
        [node("ConstantOfShape", ["ts"], ["t"], value=helper.make_tensor("v", then_elem, [1], [1]))],
        [],
        [vi("t", then_elem, None)],
        [const("ts", then_shape)],
    )
    other = graph(
        [node("ConstantOfShape", ["es"], ["e"], value=helper.make_tensor("v", else_elem, [1], [1]))],
        [],
        [vi("e", else_elem, None)],
        [const("es", else_shape)],
    )
    return then, other


def test_if_known_condition_selects_its_branch() -> None:
    then = graph([node("Add", ["x", "x"], ["t"])], [], [vi("t", F, None)])
    other = graph([node("Concat", ["x", "x"], ["e"], axis=0)], [], [vi("e", F, None)])
    for flag, want in ((True, "float[N,3]"), (False, "float[2*N,3]")):
        m = model(
            [node("If", ["c"], ["y"], then_branch=then, else_branch=other), node("Relu", ["y"], ["z"])],
            [vi("x", F, ["N", 3])],
            [vi("z", F, None)],
            [const("c", flag, np.bool_)],
        )
        r = verify(m, [{"x": floats(2, 3)}, {"x": floats(5, 3)}])
        assert shape(r, "y") == want
        walked = [p for p in r.graphs if p != "main"]
        assert walked == ["main/0:then_branch" if flag else "main/0:else_branch"]


def test_if_joins_branches_extent_by_extent() -> None:
    then = graph([node("Concat", ["x", "a"], ["t"], axis=1)], [], [vi("t", F, None)])
    other = graph([node("Concat", ["x", "b"], ["e"], axis=1)], [], [vi("e", F, None)])
    m = model(
        [node("If", ["c"], ["y"], then_branch=then, else_branch=other), node("Relu", ["y"], ["z"])],
        [vi("c", B, []), vi("x", F, ["N", 3]), vi("a", F, ["N", 1]), vi("b", F, ["N", 2])],
        [vi("z", F, None)],
    )
    feeds = [
        {"c": np.array(f), "x": floats(n, 3), "a": floats(n, 1), "b": floats(n, 2)} for f, n in ((True, 2), (False, 3))
    ]
    r = verify(m, feeds)
    n, d = r.shape_of("y")
    assert n == D.symbol("N")
    reason = fresh_at(r, d)
    assert "If chooses between" in reason and "4" in reason and "5" in reason and "`c`" in reason
    assert r.shape_of("z") == (n, d)


def test_if_branches_of_different_rank_or_kind() -> None:
    then, other = _branches([2, 3], [4])
    m = model([node("If", ["c"], ["y"], then_branch=then, else_branch=other)], [vi("c", B, [])], [vi("y", F, None)])
    r = verify(m, [{"c": np.array(True)}, {"c": np.array(False)}])
    assert shape(r, "y") == "float[*]"
    then = graph([node("SequenceConstruct", ["x"], ["t"])], [], [vi("t")])
    other = graph([node("Identity", ["x"], ["e"])], [], [vi("e", F, None)])
    m = model(
        [node("If", ["c"], ["y"], then_branch=then, else_branch=other)], [vi("c", B, []), vi("x", F, ["N"])], [vi("y")]
    )
    r = infer.infer_model(m)
    assert isinstance(r.type_of("y"), T.UnknownType)


def test_if_of_sequences_leaves_differing_element_extents_out() -> None:
    then = graph([node("SequenceConstruct", ["x", "x"], ["t"])], [], [vi("t")])
    other = graph([node("SequenceConstruct", ["w"], ["e"])], [], [vi("e")])
    m = model(
        [node("If", ["c"], ["y"], then_branch=then, else_branch=other), node("SequenceLength", ["y"], ["n"])],
        [vi("c", B, []), vi("x", F, ["N", 3]), vi("w", F, ["N", 4])],
        [vi("n", I64, None)],
    )
    feeds = [{"c": np.array(f), "x": floats(2, 3), "w": floats(2, 4)} for f in (True, False)]
    r = verify(m, feeds)
    assert shape(r, "y") == "seq(float[N,?])"


def test_if_known_contents_kept_where_branches_agree() -> None:
    then = graph([node("Constant", [], ["t"], value_ints=[2, 3])], [], [vi("t", I64, None)])
    other = graph([node("Constant", [], ["e"], value_ints=[2, 5])], [], [vi("e", I64, None)])
    m = model(
        [
            node("If", ["c"], ["s"], then_branch=then, else_branch=other),
            node("Reshape", ["x", "s"], ["y"], allowzero=0),
        ],
        [vi("c", B, []), vi("x", F, [2, 15])],
        [vi("y", F, None)],
    )
    r = infer.infer_model(m)
    assert r.value("s").known.elems == (2, None)
    assert r.shape_of("y")[0] == 2


# -- Loop -----------------------------------------------------------------------------------------


def _loop_body(
    nodes,
    carried: Sequence[onnx.ValueInfoProto],
    outs: Sequence[onnx.ValueInfoProto],
    inits=(),
    cond_out: str | None = None,
    prefix: str = "",
) -> onnx.GraphProto:
    """A Loop body: inputs (i, cond_in, *carried); outputs (cond_out, *outs)."""
    nodes = list(nodes)
    if cond_out is None:
        nodes.append(node("Identity", [prefix + "cond_in"], [prefix + "cond_out"]))
        cond_out = prefix + "cond_out"
    inputs = [vi(prefix + "i", I64, []), vi(prefix + "cond_in", B, []), *carried]
    return graph(nodes, inputs, [vi(cond_out, B, []), *outs], inits)


def test_loop_keeps_an_invariant_shape_and_counts_a_known_trip() -> None:
    body = _loop_body(
        [node("Add", ["x_in", "x_in"], ["x_out"]), node("ReduceSum", ["x_out"], ["s"], keepdims=0)],
        [vi("x_in")],
        [vi("x_out"), vi("s")],
    )
    m = model(
        [node("Loop", ["m", "", "x"], ["xf", "ss"], body=body), node("Relu", ["ss"], ["y"])],
        [vi("x", F, ["N", 3])],
        [vi("y", F, None), vi("xf", F, None)],
        [const("m", 4)],
    )
    r = verify(m, [{"x": floats(2, 3)}, {"x": floats(5, 3)}])
    assert shape(r, "xf") == "float[N,3]"
    assert shape(r, "ss") == "float[4]"
    path = body_path(r)
    assert shape(r, "x_out", path) == "float[N,3]"
    assert shape(r, "x_in", path) == "float[N,3]"


def test_loop_trip_count_from_a_shape_expression() -> None:
    body = _loop_body(
        [node("Identity", ["x_in"], ["x_out"]), node("Shape", ["x_in"], ["s"])], [vi("x_in")], [vi("x_out"), vi("s")]
    )
    nodes = [
        node("Shape", ["x"], ["sx"]),
        node("Gather", ["sx", "zero"], ["n"]),
        node("Loop", ["n", "t", "x"], ["xf", "ss"], body=body),
    ]
    m = model(
        nodes,
        [vi("x", F, ["N", 3])],
        [vi("ss", I64, None), vi("xf", F, None)],
        [const("zero", 0), const("t", True, np.bool_)],
    )
    r = verify(m, [{"x": floats(2, 3)}, {"x": floats(4, 3)}])
    assert shape(r, "ss") == "int64[N,2]"
    assert r.value("xf").type == r.value("x").type


def test_loop_does_not_claim_a_growing_shape() -> None:
    # The body input is declared with the initial value's type and the output with a name of
    # its own, as exporters write them: neither holds for every iteration.
    body = _loop_body(
        [node("Concat", ["x_in", "row"], ["x_out"], axis=0), node("Shape", ["x_out"], ["s"])],
        [vi("x_in", F, ["N", 3])],
        [vi("x_out", F, ["grown", 3]), vi("s")],
        [const("row", np.ones((1, 3)), np.float32)],
    )
    m = model(
        [node("Loop", ["m", "", "x"], ["xf", "ss"], body=body), node("Relu", ["xf"], ["y"])],
        [vi("x", F, ["N", 3])],
        [vi("y", F, None), vi("ss", I64, None)],
        [const("m", 3)],
    )
    r = verify(m, [{"x": floats(2, 3)}, {"x": floats(4, 3)}])
    grow, three = r.shape_of("xf")
    assert three == 3 and r.dims.is_fresh(grow)
    assert shape(r, "ss") == "int64[3,2]"
    path = body_path(r)
    entry = r.shape_of("x_in", path)[0]
    assert r.dims.is_fresh(entry) and "changes extent" in fresh_at(r, entry)
    assert r.shape_of("x_out", path)[0] == D.add(entry, 1)
    not_from_body(r, r.type_of("xf"), path)


def test_loop_widens_when_the_rounds_run_out() -> None:
    # v0 grows by a row each iteration and hands its extent down a chain v0 -> v1 -> ... -> v9,
    # one link per iteration: more rounds than MAX_ROUNDS to settle, so the types are widened.
    n = 10
    nodes = [node("Concat", ["v0_in", "row"], ["v0_out"], axis=0)]
    nodes += [node("Identity", [f"v{k - 1}_in"], [f"v{k}_out"]) for k in range(1, n)]
    body = _loop_body(
        nodes,
        [vi(f"v{k}_in") for k in range(n)],
        [vi(f"v{k}_out") for k in range(n)],
        [const("row", np.ones((1, 2)), np.float32)],
    )
    m = model(
        [node("Loop", ["m", "", *["x"] * n], [f"f{k}" for k in range(n)], body=body)],
        [vi("x", F, ["N", 2])],
        [vi(f"f{k}", F, None) for k in range(n)],
        [const("m", 12)],
    )
    r = verify(m, [{"x": floats(3, 2)}])
    for k in range(n):
        t = r.type_of(f"f{k}")
        assert t.shape is None or r.dims.is_fresh(t.shape[0]), t


def test_loop_whose_carried_value_changes_rank() -> None:
    body = _loop_body(
        [node("Unsqueeze", ["x_in", "ax"], ["x_out"])], [vi("x_in", F, [2])], [vi("x_out")], [const("ax", [0])]
    )
    m = model(
        [node("Loop", ["m", "", "x"], ["xf"], body=body), node("Shape", ["xf"], ["s"])],
        [vi("x", F, [2])],
        [vi("s", I64, None)],
        [const("m", 3)],
    )
    r = verify(m, [{"x": floats(2)}])
    assert shape(r, "xf") == "float[*]"
    assert shape(r, "x_in", body_path(r)) == "float[*]"


def test_loop_extent_made_inside_the_body_varies_per_iteration() -> None:
    # The body's Range has an extent only known at run time (a fresh variable of the body).
    # Every iteration makes another one, so the final value and the scan output must not name it.
    body = _loop_body(
        [
            node("Add", ["i", "one"], ["k"]),
            node("Range", ["zero", "k", "one"], ["r"]),
            node("Identity", ["r"], ["v_out"]),
            node("ReduceSum", ["r"], ["s"], keepdims=1),
        ],
        [vi("v_in")],
        [vi("v_out"), vi("s")],
        [const("one", 1), const("zero", 0)],
    )
    m = model(
        [node("Loop", ["m", "", "v"], ["vf", "ss"], body=body)],
        [vi("v", I64, [1]), vi("m", I64, [])],
        [vi("vf", I64, None), vi("ss", I64, None)],
    )
    feeds = [{"v": np.array([7]), "m": np.array(n)} for n in (0, 1, 3)]
    r = verify(m, feeds)
    path = body_path(r)
    inner = r.shape_of("r", path)[0]
    assert r.dims.is_fresh(inner)
    not_from_body(r, r.type_of("vf"), path)
    not_from_body(r, r.type_of("ss"), path)
    # M may be 0: the scan output's rank is left unknown (onnxruntime gives [0] then).
    assert shape(r, "ss") == "int64[*]"
    vf = r.shape_of("vf")[0]
    assert r.dims.is_fresh(vf)


def test_loop_scan_output_when_the_body_may_stop_early() -> None:
    body = _loop_body(
        [
            node("Less", ["i", "lim"], ["cond_out"]),
            node("Identity", ["x_in"], ["x_out"]),
            node("Identity", ["x_in"], ["sc"]),
        ],
        [vi("x_in")],
        [vi("x_out"), vi("sc")],
        [const("lim", 2)],
        cond_out="cond_out",
    )
    m = model(
        [node("Loop", ["m", "", "x"], ["xf", "ss"], body=body)],
        [vi("x", F, ["N", 3])],
        [vi("ss", F, None), vi("xf", F, None)],
        [const("m", 5)],
    )
    r = verify(m, [{"x": floats(2, 3)}])
    lead, n, three = r.shape_of("ss")
    assert n == D.symbol("N") and three == 3
    assert "stop early" in fresh_at(r, lead)


def test_loop_without_trip_count_runs_on_its_condition() -> None:
    body = _loop_body(
        [
            node("Less", ["i", "lim"], ["cond_out"]),
            node("Add", ["x_in", "x_in"], ["x_out"]),
            node("Shape", ["x_in"], ["sc"]),
        ],
        [vi("x_in")],
        [vi("x_out"), vi("sc")],
        [const("lim", 3)],
        cond_out="cond_out",
    )
    m = model(
        [node("Loop", ["", "c", "x"], ["xf", "ss"], body=body)],
        [vi("x", F, ["N", 3]), vi("c", B, [])],
        [vi("ss", I64, None), vi("xf", F, None)],
    )
    r = verify(m, [{"x": floats(2, 3), "c": np.array(True)}, {"x": floats(2, 3), "c": np.array(False)}])
    assert shape(r, "xf") == "float[N,3]"
    assert shape(r, "ss") == "int64[*]"  # may run zero times


def test_loop_carries_a_sequence_whose_element_type_is_the_join() -> None:
    # The expanded SequenceMap pattern: SequenceEmpty, then SequenceInsert in the body.
    body = _loop_body(
        [
            node("SequenceAt", ["xs", "i"], ["e"]),
            node("Relu", ["e"], ["f"]),
            node("SequenceInsert", ["s_in", "f"], ["s_out"]),
        ],
        [seq_vi("s_in", F)],
        [seq_vi("s_out", F)],
    )
    m = model(
        [
            node("SplitToSequence", ["x"], ["xs"], axis=1),
            node("SequenceLength", ["xs"], ["n"]),
            node("SequenceEmpty", [], ["s0"]),
            node("Loop", ["n", "", "s0"], ["sf"], body=body),
        ],
        [vi("x", F, ["N", 4])],
        [seq_vi("sf", F)],
    )
    r = verify(m, [{"x": floats(2, 4)}, {"x": floats(3, 4)}])
    assert shape(r, "sf") == "seq(float[N,1])"
    assert shape(r, "s_in", body_path(r)) == "seq(float[N,1])"


def test_loop_sequence_of_growing_elements() -> None:
    body = _loop_body(
        [
            node("Add", ["i", "one"], ["k"]),
            node("Range", ["nil", "k", "one"], ["r"]),
            node("SequenceInsert", ["s_in", "r"], ["s_out"]),
        ],
        [seq_vi("s_in", I64)],
        [seq_vi("s_out", I64)],
        [const("one", 1), const("nil", 0)],
    )
    m = model(
        [
            node("SequenceEmpty", [], ["s0"], dtype=I64),
            node("Loop", ["m", "", "s0"], ["sf"], body=body),
            node("SequenceAt", ["sf", "zero"], ["first"]),
            node("SequenceAt", ["sf", "last"], ["final"]),
        ],
        [vi("m", I64, [])],
        [seq_vi("sf", I64), vi("first", I64, None), vi("final", I64, None)],
        [const("zero", 0), const("last", -1)],
    )
    r = verify(m, [{"m": np.array(3)}, {"m": np.array(1)}])
    assert shape(r, "sf") == "seq(int64[?])"
    a, b = r.shape_of("first")[0], r.shape_of("final")[0]
    assert a != b and r.dims.is_fresh(a) and r.dims.is_fresh(b)


def test_loop_keeps_known_contents_that_do_not_change() -> None:
    body = _loop_body(
        [node("Identity", ["s_in"], ["s_out"]), node("Reshape", ["x_in", "s_in"], ["x_out"])],
        [vi("s_in"), vi("x_in")],
        [vi("s_out"), vi("x_out")],
    )
    m = model(
        [node("Loop", ["m", "", "s", "x"], ["sf", "xf"], body=body)],
        [vi("x", F, [6])],
        [vi("sf", I64, None), vi("xf", F, None)],
        [const("m", 2), const("s", [2, 3])],
    )
    r = verify(m, [{"x": floats(6)}])
    assert r.value("sf").known.elems == (2, 3)
    # x is [6] before the loop and [2, 3] after an iteration: in the body only its element type
    # holds; M = 2, so the final value is the last iteration's.
    assert shape(r, "x_in", body_path(r)) == "float[*]"
    assert shape(r, "x_out", body_path(r)) == "float[2,3]"
    assert shape(r, "xf") == "float[2,3]"


def test_loop_inside_a_loop() -> None:
    inner = _loop_body(
        [node("Concat", ["y_in", "row"], ["y_out"], axis=0)],
        [vi("y_in")],
        [vi("y_out")],
        [const("row", np.ones((1, 2)), np.float32)],
        prefix="inner_",
    )
    outer = _loop_body(
        [node("Loop", ["two", "", "x_in"], ["x_out"], body=inner), node("Shape", ["x_out"], ["s"])],
        [vi("x_in")],
        [vi("x_out"), vi("s")],
        [const("two", 2)],
    )
    m = model(
        [node("Loop", ["m", "", "x"], ["xf", "ss"], body=outer)],
        [vi("x", F, ["N", 2])],
        [vi("xf", F, None), vi("ss", I64, None)],
        [const("m", 3)],
    )
    r = verify(m, [{"x": floats(1, 2)}, {"x": floats(3, 2)}])
    assert shape(r, "ss") == "int64[3,2]"
    grow, two = r.shape_of("xf")
    assert two == 2 and r.dims.is_fresh(grow)
    for p in r.graphs:
        if p != "main":
            not_from_body(r, r.type_of("xf"), "main/0:body")


@pytest.mark.parametrize("opset", [11, 13, 16, 19, 21])
def test_loop_every_version(opset: int) -> None:
    body = _loop_body(
        [node("Add", ["x_in", "x_in"], ["x_out"]), node("Identity", ["x_out"], ["sc"])],
        [vi("x_in")],
        [vi("x_out"), vi("sc")],
    )
    m = model(
        [node("Loop", ["m", "", "x"], ["xf", "ss"], body=body)],
        [vi("x", F, ["N"])],
        [vi("xf", F, None), vi("ss", F, None)],
        [const("m", 3)],
        opset=opset,
        ir=8,
    )
    r = verify(m, [{"x": floats(4)}])
    assert shape(r, "ss") == "float[3,N]" and shape(r, "xf") == "float[N]"


def test_loop_body_arity_is_checked() -> None:
    body = _loop_body([node("Identity", ["x_in"], ["x_out"])], [vi("x_in")], [vi("x_out")])
    m = model(
        [node("Loop", ["m", "", "x", "x"], ["a", "b"], body=body)],
        [vi("x", F, [2])],
        [vi("a", F, None), vi("b", F, None)],
        [const("m", 3)],
    )
    r = infer.infer_model(m)
    assert "arity" in {d.code for d in r.diagnostics}


def test_loop_rounds_report_once() -> None:
    # A declared body input clashing with what enters it is reported once, by the final walk.
    body = _loop_body([node("Identity", ["x_in"], ["x_out"])], [vi("x_in", F, [5])], [vi("x_out")])
    m = model(
        [node("Loop", ["m", "", "x"], ["xf"], body=body)], [vi("x", F, [2])], [vi("xf", F, None)], [const("m", 3)]
    )
    r = infer.infer_model(m)
    assert [d.code for d in r.diagnostics].count("declared-type-clash") == 1


# -- Scan -----------------------------------------------------------------------------------------


def _scan_body() -> onnx.GraphProto:
    """state s [2] plus slice [2] -> s; scan output 2 * slice."""
    return graph(
        [node("Add", ["s_in", "x_i"], ["s_out"]), node("Add", ["x_i", "x_i"], ["y"])],
        [vi("s_in"), vi("x_i")],
        [vi("s_out"), vi("y")],
    )


@pytest.mark.parametrize("opset", [9, 11, 16, 19, 21])
def test_scan_every_version_from_9(opset: int) -> None:
    m = model(
        [node("Scan", ["s", "x"], ["sf", "ys"], body=_scan_body(), num_scan_inputs=1)],
        [vi("s", F, [2]), vi("x", F, ["L", 2])],
        [vi("sf", F, None), vi("ys", F, None)],
        opset=opset,
        ir=8,
    )
    r = verify(m, [{"s": floats(2), "x": floats(3, 2)}, {"s": floats(2), "x": floats(1, 2)}])
    assert shape(r, "sf") == "float[2]" and shape(r, "ys") == "float[L,2]"


def test_scan_axes_and_directions() -> None:
    m = model(
        [
            node(
                "Scan",
                ["s", "x"],
                ["sf", "ys"],
                body=_scan_body(),
                num_scan_inputs=1,
                scan_input_axes=[-1],
                scan_output_axes=[1],
                scan_input_directions=[1],
                scan_output_directions=[1],
            )
        ],
        [vi("s", F, ["K"]), vi("x", F, ["K", "L"])],
        [vi("sf", F, None), vi("ys", F, None)],
    )
    r = verify(m, [{"s": floats(2), "x": floats(2, 5)}])
    assert shape(r, "sf") == "float[K]" and shape(r, "ys") == "float[K,L]"


def test_scan_8_has_a_batch_axis() -> None:
    for lens in (True, False):
        ins = ["lens" if lens else "", "s", "x"]
        m = model(
            [node("Scan", ins, ["sf", "ys"], body=_scan_body(), num_scan_inputs=1)],
            [vi("lens", I64, ["B"]), vi("s", F, ["B", 2]), vi("x", F, ["B", "L", 2])],
            [vi("sf", F, None), vi("ys", F, None)],
            opset=8,
            ir=3,
        )
        feeds = {"lens": np.array([2, 4]), "s": floats(2, 2), "x": floats(2, 4, 2)}
        r = verify(m, [feeds])
        assert shape(r, "sf") == "float[B,2]" and shape(r, "ys") == "float[B,L,2]"


def test_scan_state_that_changes_shape_is_not_claimed() -> None:
    body = graph(
        [node("Concat", ["s_in", "x_i"], ["s_out"], axis=0), node("Identity", ["x_i"], ["y"])],
        [vi("s_in"), vi("x_i")],
        [vi("s_out"), vi("y")],
    )
    m = model(
        [node("Scan", ["s", "x"], ["sf", "ys"], body=body, num_scan_inputs=1)],
        [vi("s", F, [1]), vi("x", F, ["L", 1])],
        [vi("sf", F, None), vi("ys", F, None)],
    )
    r = infer.infer_model(m)  # onnxruntime refuses a state whose shape changes; we claim none
    (d,) = r.shape_of("sf")
    assert r.dims.is_fresh(d)
    assert shape(r, "ys") == "float[L,1]"


# -- SequenceMap ----------------------------------------------------------------------------------


def test_sequence_map_applies_its_body_per_element() -> None:
    # onnxruntime wants the body's inputs and outputs typed
    typed = [helper.make_tensor_value_info(n, F, None) for n in ("e", "t")]
    outs = [helper.make_tensor_value_info("s", I64, None), helper.make_tensor_value_info("u", F, None)]
    body = graph([node("Shape", ["e"], ["s"]), node("Add", ["e", "t"], ["u"])], typed, outs)
    m = model(
        [
            node("SplitToSequence", ["x", "sp"], ["xs"], axis=1),
            node("SequenceMap", ["xs", "b"], ["shapes", "sums"], body=body),
        ],
        [vi("x", F, ["N", 5]), vi("b", F, ["N", 1])],
        [seq_vi("shapes", I64), seq_vi("sums", F)],
        [const("sp", [1, 4])],
    )
    r = verify(m, [{"x": floats(3, 5), "b": floats(3, 1)}])
    assert shape(r, "shapes") == "seq(int64[2])"
    assert shape(r, "sums") == "seq(float[N,?])"


# -- sequences ------------------------------------------------------------------------------------


def test_sequence_operators_track_their_elements() -> None:
    nodes = [
        node("SequenceConstruct", ["a", "b"], ["s"]),
        node("SequenceInsert", ["s", "c"], ["s2"]),
        node("SequenceInsert", ["s2", "a", "zero"], ["s3"]),
        node("SequenceLength", ["s3"], ["n"]),
        node("SequenceAt", ["s3", "minus1"], ["last"]),
        node("SequenceAt", ["s3", "p"], ["any"]),
        node("SequenceErase", ["s3", "zero"], ["s4"]),
        node("SequenceErase", ["s4"], ["s5"]),
        node("ConcatFromSequence", ["s5"], ["cat"], axis=1),
        node("ConcatFromSequence", ["s"], ["stack"], axis=0, new_axis=1),
        node("ConcatFromSequence", ["s3"], ["cat_all"], axis=-1),
    ]
    m = model(
        nodes,
        [vi("a", F, ["N", 4]), vi("b", F, ["N", 4]), vi("c", F, ["N", 3]), vi("p", I64, [])],
        [
            seq_vi("s3", F),
            vi("n", I64, None),
            vi("last", F, None),
            vi("any", F, None),
            vi("cat", F, None),
            vi("stack", F, None),
            vi("cat_all", F, None),
        ],
        [const("zero", 0), const("minus1", -1)],
    )
    feeds = {"a": floats(2, 4), "b": floats(2, 4), "c": floats(2, 3), "p": np.array(1)}
    r = verify(m, [feeds, {**feeds, "p": np.array(-1)}])
    assert shape(r, "s") == "seq(float[N,4])"
    assert shape(r, "s2") == "seq(float[N,?])"
    assert r.value("n").known.elems == (4,)
    assert shape(r, "last") == "float[N,3]"
    n, d = r.shape_of("any")
    assert n == D.symbol("N") and r.dims.is_fresh(d)
    assert shape(r, "cat") == "float[N,8]"
    assert shape(r, "stack") == "float[2,N,4]"
    assert shape(r, "cat_all") == "float[N,15]"


def test_sequence_insert_into_an_unknown_sequence_joins_the_element_type() -> None:
    m = model(
        [node("SequenceInsert", ["s", "x"], ["s2"]), node("SequenceAt", ["s2", "zero"], ["e"])],
        [seq_vi("s", F, ["N", 4]), vi("x", F, ["N", 3])],
        [seq_vi("s2", F), vi("e", F, None)],
        [const("zero", 0)],
    )
    r = infer.infer_model(m)
    assert shape(r, "s2") == "seq(float[N,?])"
    n, d = r.shape_of("e")
    assert n == D.symbol("N") and r.dims.is_fresh(d)
    seq = [floats(2, 4), floats(2, 4)]
    verify(m, [{"s": seq, "x": floats(2, 3)}])


@pytest.mark.parametrize("opset", [11, 24])
def test_split_to_sequence(opset: int) -> None:
    nodes = [
        node("SplitToSequence", ["x"], ["ones"], axis=0),
        node("SplitToSequence", ["x"], ["flat"], axis=0, keepdims=0),
        node("SplitToSequence", ["x", "two"], ["twos"], axis=1),
        node("SplitToSequence", ["x", "four"], ["ragged"], axis=1),
        node("SplitToSequence", ["x", "sizes"], ["parts"], axis=1),
        node("SequenceAt", ["parts", "one"], ["part1"]),
        node("SequenceAt", ["ragged", "one"], ["tail"]),
    ]
    m = model(
        nodes,
        [vi("x", F, [3, 6])],
        [seq_vi(n, F) for n in ("ones", "flat", "twos", "ragged", "parts")] + [vi("part1"), vi("tail")],
        [const("two", 2), const("four", 4), const("sizes", [1, 5]), const("one", 1)],
        opset=opset,
    )
    r = verify(m, [{"x": floats(3, 6)}])
    assert shape(r, "ones") == "seq(float[1,6])"
    assert shape(r, "flat") == "seq(float[6])"
    assert shape(r, "twos") == "seq(float[3,2])"
    assert shape(r, "ragged") == "seq(float[3,?])"
    assert shape(r, "part1") == "float[3,5]"
    assert shape(r, "tail") == "float[3,2]"


def test_split_to_sequence_symbolic() -> None:
    nodes = [
        node("SplitToSequence", ["x"], ["rows"], axis=0, keepdims=0),
        node("SplitToSequence", ["x", "two"], ["chunks"], axis=0),
        node("ConcatFromSequence", ["rows"], ["back"], axis=0, new_axis=1),
    ]
    m = model(nodes, [vi("x", F, ["N", 3])], [seq_vi("rows", F), seq_vi("chunks", F), vi("back")], [const("two", 2)])
    r = verify(m, [{"x": floats(5, 3)}, {"x": floats(2, 3)}])
    assert shape(r, "rows") == "seq(float[3])"
    assert shape(r, "chunks") == "seq(float[?,3])"
    lead, three = r.shape_of("back")
    assert three == 3 and r.dims.is_fresh(lead)


# -- optionals ------------------------------------------------------------------------------------


def test_optional_presence_is_known_and_selects_a_branch() -> None:
    then = graph([node("OptionalGetElement", ["o"], ["t"])], [], [vi("t", F, None)])
    other = graph([node("Constant", [], ["e"], value_floats=[0.0])], [], [vi("e", F, None)])
    tp = helper.make_tensor_type_proto(F, ["N", 3])
    nodes = [
        node("Optional", ["x"], ["o"]),
        node("OptionalHasElement", ["o"], ["has"]),
        node("If", ["has"], ["y"], then_branch=then, else_branch=other),
        node("Optional", [], ["none"], type=tp),
        node("OptionalHasElement", ["none"], ["has_none"]),
        node("OptionalHasElement", ["x"], ["plain"]),
    ]
    m = model(nodes, [vi("x", F, ["N", 3])], [vi("y", F, None), vi("has_none", B, None), vi("plain", B, None)])
    r = verify(m, [{"x": floats(2, 3)}])
    assert r.value("has").known.elems == (True,)
    assert r.value("has_none").known.elems == (False,)
    assert r.value("plain").known.elems == (True,)
    assert shape(r, "y") == "float[N,3]"
    assert shape(r, "o") == "optional(float[N,3])"
    assert shape(r, "none") == "optional(float[N,3])"


def test_optional_graph_input() -> None:
    opt = helper.make_value_info("o", helper.make_optional_type_proto(helper.make_tensor_type_proto(F, ["N"])))
    nodes = [node("OptionalHasElement", ["o"], ["has"]), node("OptionalGetElement", ["o"], ["x"])]
    m = model(nodes, [opt], [vi("has", B, None), vi("x", F, None)])
    r = verify(m, [{"o": floats(3)}])
    assert r.value("has").known is None
    assert shape(r, "x") == "float[N]"


@pytest.mark.parametrize("opset", [15, 18])
def test_optional_versions(opset: int) -> None:
    nodes = [
        node("Optional", ["x"], ["o"]),
        node("OptionalGetElement", ["o"], ["y"]),
        node("OptionalHasElement", ["o"], ["h"]),
    ]
    m = model(nodes, [vi("x", F, ["N"])], [vi("y", F, None), vi("h", B, None)], opset=opset)
    r = verify(m, [{"x": floats(3)}])
    assert shape(r, "y") == "float[N]" and shape(r, "h") == "bool[]"


# -- scoping (Clause 5.4.3) -----------------------------------------------------------------------


def test_outer_names_are_visible_and_shadowing_is_reported() -> None:
    ok = graph([node("Relu", ["x"], ["t"])], [], [vi("t", F, None)])
    shadow_output = graph([node("Relu", ["x"], ["x2"]), node("Abs", ["x2"], ["z"])], [], [vi("z", F, None)])
    m = model(
        [node("Relu", ["x"], ["x2"]), node("If", ["c"], ["y"], then_branch=ok, else_branch=shadow_output)],
        [vi("c", B, []), vi("x", F, [2])],
        [vi("y", F, None), vi("x2", F, None)],
    )
    r = infer.infer_model(m)
    shadows = [d for d in r.diagnostics if d.code == "shadowing"]
    assert len(shadows) == 1 and shadows[0].location.value == "x2"
    assert shadows[0].location.graph == "main/1:else_branch"
    assert shape(r, "y") == "float[2]"

    body = _loop_body([node("Identity", ["x"], ["x_out"])], [vi("x")], [vi("x_out")])  # input named x
    m = model(
        [node("Loop", ["m", "", "x"], ["xf"], body=body)], [vi("x", F, [2])], [vi("xf", F, None)], [const("m", 2)]
    )
    r = infer.infer_model(m)
    assert [d.location.value for d in r.diagnostics if d.code == "shadowing"] == ["x"]

    body = _loop_body(
        [node("Add", ["x_in", "m"], ["x_out"])], [vi("x_in")], [vi("x_out")], [const("m", np.ones(2), np.float32)]
    )  # an initializer named m
    m = model(
        [node("Loop", ["m", "", "x"], ["xf"], body=body)], [vi("x", F, [2])], [vi("xf", F, None)], [const("m", 2)]
    )
    r = infer.infer_model(m)
    assert [d.location.value for d in r.diagnostics if d.code == "shadowing"] == ["m"]


# -- the onnx node conformance models of this family, run in onnxruntime --------------------------

# The cases onnxruntime runs whose declared inputs agree with their data (the sequence_map cases
# with two sequences declare one extent `N` for elements that differ; the optional cases are at
# opset 28, which onnxruntime 1.32 does not implement).
CONFORMANCE = """if if_seq if_opt loop11 loop13_seq loop16_seq_none range_float_type_positive_delta_expanded
range_int32_type_negative_delta_expanded scan_sum scan9_sum scan9_multi_state scan9_scalar
sequence_map_identity_1_sequence sequence_map_identity_1_sequence_expanded sequence_map_add_1_sequence_1_tensor
sequence_map_add_1_sequence_1_tensor_expanded sequence_map_extract_shapes sequence_map_extract_shapes_expanded
sequence_insert_at_back sequence_insert_at_front split_to_sequence_1 split_to_sequence_2
split_to_sequence_nokeepdims""".split()
# onnx's case modules that hold them (generated alone, not all the node cases: tests/conformance)
CASE_MODULES = ("if_", "loop", "rangeop", "scan", "sequence_map", "sequenceinsert", "splittosequence")


@pytest.mark.parametrize("name", CONFORMANCE)
def test_conformance_models_in_onnxruntime(name: str) -> None:
    from tests.conformance.scorer import _strip, cases_from

    (case,) = [c for c in cases_from(CASE_MODULES) if c.name == f"test_{name}"]
    m = _strip(case.model)
    inputs, _ = case.data_sets[0]
    feeds = {vi_.name: np.asarray(x) if isinstance(x, np.generic) else x for vi_, x in zip(m.graph.input, inputs)}
    verify(m, [feeds])


def test_data_dependent_nodes_alike_never_share_a_variable_through_the_memo():
    """Two NonZero of the same input, in a Loop body walked to a fixed point and in the main
    graph: each output extent is its own variable (a rule naming a variable after its node is
    never reused for another node)."""
    body = helper.make_graph(
        [
            helper.make_node("NonZero", ["x"], ["a"]),
            helper.make_node("NonZero", ["x"], ["b"]),
            helper.make_node("Identity", ["c"], ["c_out"]),
        ],
        "body",
        [helper.make_tensor_value_info("i", I64, []), helper.make_tensor_value_info("c", B, [])],
        [
            helper.make_tensor_value_info("c_out", B, []),
            helper.make_tensor_value_info("a", I64, None),
            helper.make_tensor_value_info("b", I64, None),
        ],
    )
    loop = helper.make_node("Loop", ["", "cond"], ["sa", "sb"], body=body)
    g = helper.make_graph(
        [loop, helper.make_node("NonZero", ["x"], ["m"]), helper.make_node("NonZero", ["x"], ["n"])],
        "g",
        [helper.make_tensor_value_info("x", F, ["N", 3]), helper.make_tensor_value_info("cond", B, [])],
        [helper.make_tensor_value_info(o, I64, None) for o in ("sa", "sb", "m", "n")],
    )
    r = infer.infer_model(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]))
    rec = r.graphs["main/0:body"]
    extents = [r.shape_of("m")[1], r.shape_of("n")[1], rec.values["a"].type.shape[1], rec.values["b"].type.shape[1]]
    assert len(set(extents)) == 4 and all(r.dims.get(str(e)).is_fresh for e in extents)
