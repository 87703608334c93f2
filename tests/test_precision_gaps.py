"""Precision gaps peers' test suites found (issue 18, item 5), each pinned by the graph that showed it.

Every shape claim is checked against onnxruntime at small sizes (1, 2, 3 where the model allows
them); every diagnosis of a malformed node is checked to be one onnxruntime refuses, and every
node it runs to be free of errors. Runs that could crash onnxruntime (an empty name inside
Einsum's or Sum's inputs) go to a child process.
"""

from __future__ import annotations

import itertools
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as h

import infer
from infer.core import dims as D
from infer.core import types as T
from infer.out import verify as V
from tests.support.runtime import Check, check, expose_all

INT64_MAX = 2**63 - 1


def _model(
    nodes: list,
    inputs: list,
    inits: Sequence = (),
    outputs: Sequence[str] = ("y",),
    opsets: Mapping[str, int] | None = None,
) -> onnx.ModelProto:
    graph = h.make_graph(nodes, "g", inputs, [onnx.ValueInfoProto(name=o) for o in outputs], list(inits))
    imports = [h.make_opsetid(d, v) for d, v in (opsets or {"": 18}).items()]
    return h.make_model(graph, opset_imports=imports, ir_version=8)


def _tensor(name: str, elem: int, shape: Sequence[Any]) -> onnx.ValueInfoProto:
    return h.make_tensor_value_info(name, elem, list(shape))


def _ints(name: str, values: Sequence[int]) -> onnx.TensorProto:
    return h.make_tensor(name, TP.INT64, [len(values)], list(values))


def _sound(
    model: onnx.ModelProto, runs: list[tuple[dict[str, int], dict[str, np.ndarray]]]
) -> tuple[infer.InferenceResult, Check]:
    """Infer ``model``, run it in onnxruntime at each (bindings, feeds), and require every claim
    to hold in every run."""
    result = infer.infer_model(model)
    session = V.Session(expose_all(model))
    verdict = check(result, [(b, session.run(f)) for b, f in runs])
    assert not verdict.wrong, verdict.wrong
    assert not verdict.skipped_runs, verdict.skipped_runs
    return result, verdict


def _errors(result: infer.InferenceResult) -> list[str]:
    return [d.code for d in result.diagnostics if d.severity == "error"]


def _exact(result: infer.InferenceResult, name: str) -> bool:
    """Every extent of ``name`` is an integer or an expression over declared variables."""
    declared = set(result.dims.declared_names())
    shape = result.shape_of(name)
    return shape is not None and all(d is not None and D.free_names(d) <= declared for d in shape)


_CHILD = """
import sys
import numpy as np
import onnxruntime as ort
so = ort.SessionOptions()
so.log_severity_level = 4
s = ort.InferenceSession(sys.argv[1], so, providers=["CPUExecutionProvider"])
s.run(None, dict(np.load(sys.argv[2])))
"""


def _runtime_runs(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray], where: Path) -> bool:
    """Does onnxruntime load and run ``model``? Asked in a child process: it crashes on some
    malformed nodes rather than refusing them."""
    where.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(where / "m.onnx"))
    np.savez(where / "feeds.npz", **feeds)
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, str(where / "m.onnx"), str(where / "feeds.npz")],
        capture_output=True,
        timeout=300,
    )
    return proc.returncode == 0


# -- 1. min(M, M + N) is M ----------------------------------------------------------------------


def test_an_extremum_drops_an_argument_another_provably_beats():
    M, N, K = D.symbol("M"), D.symbol("N"), D.symbol("K")
    u = D.fresh_symbol("u")
    exprs = [
        M,
        N,
        M + N,
        M + 1,
        2 * M,
        M + N + K,
        D.floordiv(M, 2),
        D.floordiv(M + N, 2),
        M * N,
        M + u,
        u,
        D.dmax(M, N),
        D.dmin(M, N),
        D.floordiv(M, 2) + N,
        N + M * K,
        D.mod(K, 2) + M,
        3,
        0,
    ]
    decided = 0
    for a, b in itertools.permutations(exprs, 2):
        if D.less(a, b) is True or D.less(b, a) is False:  # a <= b, provably
            decided += 1
            assert D.equal(D.dmin(a, b), a) is True, (a, b, D.dmin(a, b))
            assert D.equal(D.dmax(a, b), b) is True, (a, b, D.dmax(a, b))
    assert decided > 40
    assert D.dmin(M, M + N) == M and D.dmax(M, M + N) == M + N
    assert D.dmin(D.dmin(M, N), M + u) == D.dmin(M, N)  # no variable in common with u, yet beaten


def test_min_of_an_extent_and_a_larger_sum_in_a_model():
    """x[M], y[N]: Min(Shape(x), Shape(x) + Shape(y)) is M, and slicing x to M + N leaves M."""
    nodes = [
        h.make_node("Shape", ["x"], ["sx"]),
        h.make_node("Shape", ["y"], ["sy"]),
        h.make_node("Add", ["sx", "sy"], ["e"]),
        h.make_node("Min", ["sx", "e"], ["m"]),
        h.make_node("Max", ["e", "sx"], ["big"]),
        h.make_node("Slice", ["x", "zero", "e"], ["s"]),
        h.make_node("Expand", ["x", "m"], ["ex"]),
    ]
    model = _model(nodes, [_tensor("x", TP.FLOAT, ["M"]), _tensor("y", TP.FLOAT, ["N"])], [_ints("zero", [0])])
    runs = [
        ({"M": m, "N": n}, {"x": np.ones(m, np.float32), "y": np.ones(n, np.float32)})
        for m, n in itertools.product((1, 2, 3), repeat=2)
    ]
    result, _ = _sound(model, runs)
    M, N = D.symbol("M"), D.symbol("N")
    assert result.value("m").known.elems == (M,)
    assert result.value("big").known.elems == (M + N,)
    assert result.shape_of("s") == (M,) and result.shape_of("ex") == (M,)


# -- 2. Slice steps read from a Shape -------------------------------------------------------------

_FORWARD = [(0, 10), (1, 8), (-3, 100), (2, -1), (8, 2), (0, INT64_MAX), (-100, 3)]
_BACKWARD = [(-1, -100), (9, 0), (5, 1), (-2, -8), (3, 8), (INT64_MAX, -INT64_MAX)]


def _step_model(start: int, end: int, negative: bool, axis: int) -> onnx.ModelProto:
    """x: float[N, 10] sliced on ``axis`` by steps S (or -S) read from the shape of s: float[S]."""
    nodes = [h.make_node("Shape", ["s"], ["step"])]
    if negative:
        nodes.append(h.make_node("Neg", ["step"], ["nstep"]))
    nodes.append(h.make_node("Slice", ["x", "starts", "ends", "axes", "nstep" if negative else "step"], ["y"]))
    inits = [_ints("starts", [start]), _ints("ends", [end]), _ints("axes", [axis])]
    return _model(nodes, [_tensor("x", TP.FLOAT, ["N", 10]), _tensor("s", TP.FLOAT, ["S"])], inits)


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize(
    ("start", "end", "negative"), [(*b, False) for b in _FORWARD] + [(*b, True) for b in _BACKWARD]
)
def test_a_slice_step_from_a_shape_counts(start, end, negative, axis):
    """A step read from a Shape is at least 1 (or, negated, at most -1): the sliced extent is
    exact, and the other axis keeps its extent."""
    model = _step_model(start, end, negative, axis)
    runs = [
        ({"N": n, "S": k}, {"x": np.ones((n, 10), np.float32), "s": np.ones(k, np.float32)})
        for n, k in itertools.product((1, 2, 3), repeat=2)
    ]
    result, _ = _sound(model, runs)
    shape = result.shape_of("y")
    assert shape[1 - axis] == (D.symbol("N") if axis == 1 else 10)
    assert _exact(result, "y"), shape


def test_a_slice_step_of_unknown_contents_keeps_the_axes_it_does_not_touch():
    """Steps from a graph input: the sliced axis is unknown, the others keep their extents, with
    the axes given or defaulting to the first ones."""
    nodes = [
        h.make_node("Slice", ["x", "starts", "ends", "axes", "st"], ["y"]),
        h.make_node("Slice", ["x", "starts", "ends", "", "st"], ["z"]),
        h.make_node("Shape", ["s"], ["sst"]),
        h.make_node("Slice", ["x", "lo", "hi", "", "sst"], ["w"]),
    ]
    inputs = [
        _tensor("x", TP.FLOAT, ["N", 10, "M"]),
        _tensor("st", TP.INT64, [1]),
        _tensor("s", TP.FLOAT, ["S"]),
        _tensor("lo", TP.INT64, [1]),
        _tensor("hi", TP.INT64, [1]),
    ]
    inits = [_ints("starts", [0]), _ints("ends", [INT64_MAX]), _ints("axes", [1])]
    model = _model(nodes, inputs, inits, outputs=("y", "z", "w"))
    runs = []
    for n, m, k, step, lo, hi in [(1, 2, 1, 1, 0, 5), (2, 3, 2, 2, 1, -1), (3, 1, 3, -1, -1, -100), (2, 2, 1, 3, 2, 1)]:
        feeds = {
            "x": np.ones((n, 10, m), np.float32),
            "st": np.array([step], np.int64),
            "s": np.ones(k, np.float32),
            "lo": np.array([lo], np.int64),
            "hi": np.array([hi], np.int64),
        }
        runs.append(({"N": n, "M": m, "S": k}, feeds))
    result, _ = _sound(model, runs)
    N, M = D.symbol("N"), D.symbol("M")
    y, z, w = (result.shape_of(v) for v in ("y", "z", "w"))
    assert (y[0], y[2]) == (N, M) and result.dims.is_fresh(y[1])
    assert (z[1], z[2]) == (10, M) and result.dims.is_fresh(z[0])
    assert (w[1], w[2]) == (10, M) and result.dims.is_fresh(w[0])


@pytest.mark.parametrize("step", ["{S}", "{-S}", "{S - 2}", "{?}"])
def test_a_symbolic_step_counts_only_where_its_sign_is_known(step):
    out = infer.infer_node(
        "Slice", ["float[N,10,M]", "int64[1]={0}", "int64[1]={5}", "int64[1]={1}", f"int64[1]={step}"]
    )
    [t] = out.types
    assert t.shape[0] == D.symbol("N") and t.shape[2] == D.symbol("M")
    if step in ("{S}", "{-S}"):  # a declared variable is at least 1
        assert not out.dims.is_fresh(t.shape[1])
    else:
        assert out.dims.is_fresh(t.shape[1])


# -- 3. TopK's outputs share K --------------------------------------------------------------------


def test_topk_values_and_indices_share_one_unknown_k():
    model = _model(
        [h.make_node("TopK", ["x", "k"], ["values", "indices"], axis=1)],
        [_tensor("x", TP.FLOAT, ["B", 5]), _tensor("k", TP.INT64, [1])],
        outputs=("values", "indices"),
    )
    runs = [
        (
            {"B": b},
            {"x": np.random.default_rng(b).standard_normal((b, 5)).astype(np.float32), "k": np.array([k], np.int64)},
        )
        for b, k in itertools.product((1, 2, 3), (0, 1, 3))
    ]
    result, _ = _sound(model, runs)
    values, indices = result.shape_of("values"), result.shape_of("indices")
    assert values == indices
    assert values[0] == D.symbol("B") and result.dims.is_fresh(values[1])
    assert [v for v in result.dims if v.is_fresh] == [result.dims.get(str(values[1]))]


# -- 4. a type variable bound by any input of a known type ----------------------------------------


@pytest.mark.parametrize(
    ("op", "inputs"),
    [
        ("Add", ["float[N]", T.UNKNOWN]),
        ("Add", [T.UNKNOWN, "float[N]"]),
        ("Add", [T.TensorType(None, None), "float[N]"]),
        ("Add", ["float[N]", T.TensorType(None, None)]),
        ("Where", ["bool[N]", T.TensorType(None, None), "float16[N]"]),
        ("Concat", [T.TensorType(None, (D.symbol("N"),)), "double[N]"]),
    ],
)
def test_an_input_of_unknown_element_type_takes_it_from_the_type_variable(op, inputs):
    attrs = {"axis": 0} if op == "Concat" else {}
    out = infer.infer_node(op, inputs, attrs)
    known = next(t for t in inputs if isinstance(t, str) and not t.startswith("bool"))
    assert out.types[0].elem is not None
    assert T.elem_name(out.types[0].elem) == known.split("[")[0]
    assert not [d for d in out.diagnostics if d.severity == "error"]


def test_an_unknown_producer_does_not_hide_the_element_type_in_a_model():
    """y comes from an operator of an unknown domain (its type unknown): Add still gives float."""
    nodes = [h.make_node("Mystery", ["x"], ["y"], domain="example.custom"), h.make_node("Add", ["x", "y"], ["z"])]
    model = _model(nodes, [_tensor("x", TP.FLOAT, ["N"])], outputs=("z",), opsets={"": 18, "example.custom": 1})
    result = infer.infer_model(model)
    assert isinstance(result.type_of("y"), T.UnknownType)
    assert result.type_of("z").elem == TP.FLOAT


# -- 5. a Reshape valid only for an even extent ---------------------------------------------------


def _reshapes(targets: list[list[int]], extra_inputs: Sequence = ()) -> onnx.ModelProto:
    """x: float[c] reshaped to each target in turn (``S`` in a target: the extent of s), then back
    to [-1] and added to x."""
    nodes, inits, src = [], [], "x"
    if any("S" in t for t in targets):
        nodes.append(h.make_node("Shape", ["s"], ["sS"]))
    for i, target in enumerate(targets):
        if "S" in target:
            parts = []
            for j, e in enumerate(target):
                if e == "S":
                    parts.append("sS")
                else:
                    inits.append(_ints(f"t{i}_{j}", [e]))
                    parts.append(f"t{i}_{j}")
            nodes.append(h.make_node("Concat", parts, [f"t{i}"], axis=0))
        else:
            inits.append(_ints(f"t{i}", target))
        nodes.append(h.make_node("Reshape", [src, f"t{i}"], [f"r{i}"]))
        src = f"r{i}"
    inits.append(_ints("flat", [-1]))
    nodes += [
        h.make_node("Reshape", [src, "flat"], ["back"]),
        h.make_node("Add", ["back", "x"], ["y"]),
        h.make_node("Shape", ["back"], ["sb"]),
    ]
    return _model(nodes, [_tensor("x", TP.FLOAT, ["c"]), *extra_inputs], inits, outputs=("y",))


@pytest.mark.parametrize(
    ("targets", "k", "moduli"),
    [
        ([[2, -1]], 2, {2}),
        ([[2, -1], [2, 2, -1]], 4, {2, 4}),
        ([[-1, 3]], 3, {3}),
        ([[2, -1], [-1, 3]], 6, {2, 3}),
    ],
)
def test_reshaping_back_after_an_exact_division_is_the_extent(targets, k, moduli):
    model = _reshapes(targets)
    runs = [({"c": c}, {"x": np.arange(c, dtype=np.float32)}) for c in (k, 2 * k, 3 * k)]
    result, _ = _sound(model, runs)
    c = D.symbol("c")
    assert result.shape_of("back") == (c,) and result.shape_of("y") == (c,)
    assert result.value("sb").known.elems == (c,)
    # The requirement is visible and is the one onnxruntime enforces.
    reqs = [a for a in result.assumptions if a.lower == a.upper == 0]
    assert sorted(str(a) for a in reqs) == [
        f"mod(c, {m}) == 0 (Reshape divides the element count exactly)" for m in sorted(moduli)
    ]
    for c_value in range(1, 3 * k + 1):
        assert all(a.holds({"c": c_value}) for a in reqs) is (c_value % k == 0)
    with pytest.raises(Exception):  # noqa: B017 (onnxruntime's own error types)
        V.run(expose_all(model), {"x": np.arange(k + 1, dtype=np.float32)})


def test_reshaping_back_after_dividing_by_a_symbolic_extent():
    model = _reshapes([["S", -1]], [_tensor("s", TP.FLOAT, ["S"])])
    runs = [
        ({"c": c, "S": s}, {"x": np.arange(c, dtype=np.float32), "s": np.ones(s, np.float32)})
        for s in (1, 2, 3)
        for c in (s, 2 * s, 3 * s)
    ]
    result, _ = _sound(model, runs)
    assert result.shape_of("back") == (D.symbol("c"),)
    assert any(D.to_str(a.expr) == "mod(c, S)" for a in result.assumptions)


def test_a_division_already_exact_records_nothing():
    model = _reshapes([[2, -1]])
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_param = ""
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 6
    result = infer.infer_model(model)
    assert result.shape_of("back") == (6,) and not result.assumptions


# -- 6. an empty name inside a variadic input -----------------------------------------------------

_A = np.ones((2, 3), np.float32)
_VARIADIC = {
    "Concat": ({"axis": 0}, ["a", "", "b"]),
    "Concat-last": ({"axis": 0}, ["a", "b", ""]),
    "Sum": ({}, ["a", "", "b"]),
    "Max": ({}, ["a", "", "b"]),
    "Einsum": ({"equation": "ij,ij,ij->ij"}, ["a", "", "b"]),
    "SequenceConstruct": ({}, ["a", "", "b"]),
}


@pytest.mark.parametrize("case", sorted(_VARIADIC))
def test_an_empty_name_inside_a_variadic_input_is_diagnosed(case, tmp_path):
    attrs, names = _VARIADIC[case]
    op = case.split("-")[0]
    inputs = [_tensor("a", TP.FLOAT, [2, 3]), _tensor("b", TP.FLOAT, [2, 3])]
    feeds = {"a": _A, "b": _A}
    malformed = _model([h.make_node(op, names, ["y"], **attrs)], inputs)
    result = infer.infer_model(malformed)
    assert "missing-input" in _errors(result)
    assert not _runtime_runs(malformed, feeds, tmp_path / "malformed")
    # The same node with every name given runs, and is not diagnosed.
    whole = [n or "a" for n in names]
    fixed = _model([h.make_node(op, whole, ["y"], **attrs)], inputs)
    assert not _errors(infer.infer_model(fixed))
    assert _runtime_runs(fixed, feeds, tmp_path / "fixed")


def test_an_empty_name_inside_loop_carried_values_is_diagnosed():
    body = h.make_graph(
        [
            h.make_node("Identity", ["c"], ["co"]),
            h.make_node("Identity", ["a"], ["ao"]),
            h.make_node("Identity", ["b"], ["bo"]),
        ],
        "body",
        [
            _tensor("i", TP.INT64, []),
            _tensor("c", TP.BOOL, []),
            h.make_tensor_value_info("a", TP.FLOAT, None),
            h.make_tensor_value_info("b", TP.FLOAT, None),
        ],
        [
            _tensor("co", TP.BOOL, []),
            h.make_tensor_value_info("ao", TP.FLOAT, None),
            h.make_tensor_value_info("bo", TP.FLOAT, None),
        ],
    )
    loop = h.make_node("Loop", ["m", "", "x", ""], ["y", "z"], body=body)
    model = _model([loop], [_tensor("x", TP.FLOAT, [2])], [h.make_tensor("m", TP.INT64, [], [2])])
    assert "missing-input" in _errors(infer.infer_model(model))
    with pytest.raises(Exception):  # noqa: B017
        V.run(model, {"x": np.ones(2, np.float32)})


# -- 7. GatherND's batch_dims ---------------------------------------------------------------------

# (data shape, indices shape, batch_dims): what onnxruntime 1.32 runs and refuses. It gathers when
# the index tuples are a multiple of the batches (not only equal batch axes), and checks the
# batches only when the output is not empty.
_GATHER_ND = [
    ([2, 3, 4], [2, 1], 1), ([2, 3, 4], [3, 1], 1), ([2, 3, 4], [2], 1), ([2, 3], [2, 3, 1], 2),
    ([2, 3, 4], [2, 3, 1], 2), ([2, 3, 4], [2, 3, 1], 3), ([2, 3, 4], [2, 1], -1), ([2, 3, 4], [2, 2], 1),
    ([2, 3, 4], [1, 1], 1), ([1, 3, 4], [2, 1], 1), ([2, 3, 4], [4, 1], 1), ([2, 3, 4], [3, 2, 1], 2),
    ([2, 3], [2, 3, 0], 2), ([2, 3], [2, 4, 0], 2), ([2, 3, 4], [2, 1], 2), ([0, 3, 4], [2, 1], 1),
    ([0, 3, 4], [0, 1], 1), ([2, 1, 4], [2, 1], 2), ([2, 3], [6, 0], 2), ([3, 4], [6, 0], 2),
    ([3, 4], [1], 1), ([2, 3, 0], [3, 1], 1), ([0, 3, 0], [2, 1], 1), ([2, 0, 4], [3, 1], 1),
]  # fmt: skip


def _gather_nd(data: list, indices: list, batch_dims: int, names: tuple = ()) -> onnx.ModelProto:
    dshape = [names[i] if i < len(names) and names[i] else d for i, d in enumerate(data)]
    return _model(
        [h.make_node("GatherND", ["d", "i"], ["y"], batch_dims=batch_dims)],
        [_tensor("d", TP.FLOAT, dshape), _tensor("i", TP.INT64, indices)],
    )


@pytest.mark.parametrize(("data", "indices", "batch_dims"), _GATHER_ND)
def test_gather_nd_batches_are_diagnosed_where_onnxruntime_refuses_them(data, indices, batch_dims):
    model = _gather_nd(data, indices, batch_dims)
    feeds = {"d": np.ones(data, np.float32), "i": np.zeros(indices, np.int64)}
    try:
        observed = V.run(expose_all(model), feeds)
    except Exception:  # onnxruntime's own error types
        observed = None
    result = infer.infer_model(model)
    if observed is None:
        assert _errors(result), "onnxruntime refuses this node"
    else:
        assert not _errors(result), result.diagnostics
        assert not V.check_run(result, {}, observed).contradictions


def test_gather_nd_symbolic_batches():
    model = _gather_nd([0, 3, 4], ["N", 2, 1], 1, names=("N",))
    runs = [({"N": n}, {"d": np.ones((n, 3, 4), np.float32), "i": np.zeros((n, 2, 1), np.int64)}) for n in (1, 2, 3)]
    result, _ = _sound(model, runs)
    assert result.shape_of("y") == (D.symbol("N"), 2, 4) and not _errors(result)


# -- 8. an invalid input does not override a declared output type ---------------------------------

_EMBED = ["ids", "seg", "we", "pe", "se", "g", "b", "mask"]


def _embed(ids_elem: int) -> onnx.ModelProto:
    shapes = [["B", "S"], ["B", "S"], [10, 4], [8, 4], [2, 4], [4], [4], ["B", "S"]]
    elems = [ids_elem, ids_elem, *[TP.FLOAT] * 5, ids_elem]
    node = h.make_node("EmbedLayerNormalization", _EMBED, ["y", "mask_index", "sum"], domain="com.microsoft")
    model = _model(
        [node],
        [_tensor(n, e, s) for n, e, s in zip(_EMBED, elems, shapes)],
        outputs=("y", "mask_index", "sum"),
        opsets={"": 18, "com.microsoft": 1},
    )
    model.graph.value_info.append(_tensor("mask_index", TP.INT32, ["B"]))
    return model


def _embed_feeds(b: int, s: int, dtype: Any) -> dict[str, np.ndarray]:
    ids = np.zeros((b, s), dtype)
    return {
        "ids": ids,
        "seg": ids,
        "we": np.ones((10, 4), np.float32),
        "pe": np.ones((8, 4), np.float32),
        "se": np.ones((2, 4), np.float32),
        "g": np.ones(4, np.float32),
        "b": np.ones(4, np.float32),
        "mask": np.ones((b, s), dtype),
    }


def test_embed_layer_normalization_with_float_ids_keeps_the_declared_output_type():
    result = infer.infer_model(_embed(TP.FLOAT))
    assert result.type_of("mask_index") == T.TensorType(TP.INT32, (D.symbol("B"),))
    codes = [d.code for d in result.diagnostics if d.severity == "error"]
    assert "type-mismatch" in codes and "declared-type-clash" not in codes
    with pytest.raises(Exception):  # noqa: B017 (onnxruntime refuses the float ids)
        V.run(expose_all(_embed(TP.FLOAT)), _embed_feeds(2, 3, np.float32))


def test_embed_layer_normalization_with_int32_ids_against_onnxruntime():
    runs = [({"B": b, "S": s}, _embed_feeds(b, s, np.int32)) for b, s in itertools.product((1, 2, 3), (1, 3))]
    result, verdict = _sound(_embed(TP.INT32), runs)
    assert not _errors(result) and verdict.exact == verdict.values
