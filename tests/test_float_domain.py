"""Shape arithmetic that detours through float tensors, checked against onnxruntime.

Exporters compute sizes as ``ceil(Cast(H) / 32.0) * 32``, TF-style "same" padding, ``floor(H * 0.5)``.
Each program here runs in onnxruntime at many extents (small ones included, where a wrong
rounding shows first; large ones, past 2^24 and 2^53, made by arithmetic on the shape) with
every value exposed; every claim must hold. Nothing is assumed (issue 38): a value is exact where
the run proves it (``min(W, 4096)`` in float32), ``float32(W)`` where only the cast rounds, and
unknown where a rounding could carry it elsewhere; where exact, the final extent must be an
expression over the declared variable, not a fresh one.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as h

import infer
from infer.core import dims as D
from infer.core.values import SymFloat
from tests.support.runtime import check, expose_all, run

EXTENTS = [1, 2, 3, 4, 5, 7, 8, 31, 32, 33, 63, 64, 65, 97, 100]


def _model(nodes: list, inits: list, elem: int = TP.FLOAT, rank: int = 3) -> onnx.ModelProto:
    shape = [1] * (rank - 1) + ["W"]
    g = h.make_graph(
        nodes, "g", [h.make_tensor_value_info("x", elem, shape)], [h.make_tensor_value_info("y", elem, None)], inits
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 18)], ir_version=8)


def _width(out: str = "g", bound: int | None = None) -> list:
    """``out`` = the last extent of ``x`` (int64 scalar), or ``min(W, bound)``: a value whose
    bounds the run knows."""
    if bound is None:
        return [h.make_node("Shape", ["x"], ["s"]), h.make_node("Gather", ["s", "last"], [out], axis=0)]
    return [
        h.make_node("Shape", ["x"], ["s"]),
        h.make_node("Gather", ["s", "last"], ["w_all"], axis=0),
        h.make_node("Constant", [], ["w_max"], value=h.make_tensor("w_max_value", TP.INT64, [], [bound])),
        h.make_node("Min", ["w_all", "w_max"], [out]),
    ]


def _const(name: str, value: float | int, elem: int) -> onnx.TensorProto:
    return h.make_tensor(name, elem, [], [value])


def _check(
    model: onnx.ModelProto, final: str, extents=EXTENTS, elem=np.float32, exact: bool = True
) -> infer.InferenceResult:
    """Every claim of ``model`` holds at ``extents``, nothing is assumed of float exactness, and
    (``exact``) ``final``'s shape is an expression over ``W``."""
    result = infer.infer_model(model)
    assert not [a for a in result.assumptions if "float" in a.why or "rounding" in a.why], result.assumptions
    runs = []
    exposed = expose_all(model)
    for w in extents:
        feeds = {"x": np.zeros([1] * (len(model.graph.input[0].type.tensor_type.shape.dim) - 1) + [w], elem)}
        runs.append(({"W": w}, run(exposed, feeds)))
    verdict = check(result, runs)
    assert not verdict.wrong, verdict.wrong
    assert not verdict.skipped_runs, verdict.skipped_runs
    t = result.type_of(final)
    if exact:
        assert all(D.free_names(d) <= {"W"} for d in t.shape), f"{final}: {t} is not exact"
    return result


def _pad_to_multiple(k: float, elem: int = TP.FLOAT, bound: int | None = None) -> onnx.ModelProto:
    """Pads the last axis of x to a multiple of k: ceil(W / k) * k - W, through floats (of
    ``min(W, bound)`` with a bound)."""
    nodes = _width(bound=bound) + [
        h.make_node("Cast", ["g"], ["gf"], to=elem),
        h.make_node("Div", ["gf", "k"], ["d"]),
        h.make_node("Ceil", ["d"], ["c"]),
        h.make_node("Mul", ["c", "k"], ["m"]),
        h.make_node("Cast", ["m"], ["mi"], to=TP.INT64),
        h.make_node("Sub", ["mi", "g"], ["p"]),
        h.make_node("Unsqueeze", ["p", "zero"], ["p1"]),
        h.make_node("Concat", ["zeros5", "p1"], ["pads"], axis=0),
        h.make_node("Pad", ["x", "pads"], ["y"]),
    ]
    inits = [
        _const("last", 2, TP.INT64),
        _const("k", k, elem),
        h.make_tensor("zero", TP.INT64, [1], [0]),
        h.make_tensor("zeros5", TP.INT64, [5], [0] * 5),
    ]
    return _model(nodes, inits, elem)


def test_the_reported_case_ceil_of_a_strided_extent():
    """MaxPool stride 2, then ceil(W' / 2.0) * 2: the claim was 2*floor((W + 1)/4); at W = 1 the
    runtime gives 2."""
    nodes = [
        h.make_node("MaxPool", ["x"], ["p"], kernel_shape=[1], strides=[2]),
        h.make_node("Shape", ["p"], ["s"]),
        h.make_node("Gather", ["s", "last"], ["g"], axis=0),
        h.make_node("Cast", ["g"], ["gf"], to=TP.FLOAT),
        h.make_node("Div", ["gf", "two"], ["d"]),
        h.make_node("Ceil", ["d"], ["c"]),
        h.make_node("Mul", ["c", "two"], ["m"]),
        h.make_node("Cast", ["m"], ["mi"], to=TP.INT64),
        h.make_node("Unsqueeze", ["mi", "zero"], ["u"]),
        h.make_node("ConstantOfShape", ["u"], ["y"]),
    ]
    inits = [_const("last", 2, TP.INT64), _const("two", 2.0, TP.FLOAT), h.make_tensor("zero", TP.INT64, [1], [0])]
    result = _check(_model(nodes, inits), "y")
    assert D.evaluate(result.shape_of("y")[0], {"W": 1}) == 2


@pytest.mark.parametrize("k", [32.0, 8.0])
def test_pad_to_a_power_of_two_multiple(k):
    """Only the cast rounds: the extent is exact in every run, ``float32(W)`` in it."""
    result = _check(_pad_to_multiple(k), "y")
    assert "float32(W)" in D.to_str(result.shape_of("y")[2])
    for w in EXTENTS:
        assert D.evaluate(result.shape_of("y")[2], {"W": w}) == -(-w // int(k)) * int(k)


@pytest.mark.parametrize("k", [3.0, 14.0])
def test_pad_to_another_multiple(k):
    """``W / 3.0`` rounds: past 2^23 its ceiling can be one off, so without a bound on ``W`` the
    pad is unknown; with one (``min(W, 4096)``) it is exact and reads without ``float32``."""
    unbounded = _check(_pad_to_multiple(k), "y", exact=False)
    assert unbounded.value("p").known.elems == (None,)
    bounded = _check(_pad_to_multiple(k, bound=4096), "y")
    for w in EXTENTS:
        assert D.evaluate(bounded.shape_of("y")[2], {"W": w}) == -(-w // int(k)) * int(k)
    assert "float32" not in D.to_str(bounded.shape_of("y")[2])


@pytest.mark.parametrize("elem, np_elem", [(TP.DOUBLE, np.float64), (TP.FLOAT16, np.float16)])
def test_pad_to_a_multiple_in_other_float_types(elem, np_elem):
    _check(_pad_to_multiple(32.0, elem, bound=1024), "y", extents=[1, 2, 3, 31, 33, 100], elem=np_elem)


def test_float16_beyond_2048_is_not_claimed():
    """float16 holds integers exactly only to 2048, and onnxruntime computes float16 chains in
    float32: an unbounded ``W`` gives no claim, and no assumption stands in for one."""
    unbounded = _check(_pad_to_multiple(32.0, TP.FLOAT16), "y", extents=[1, 31, 100], elem=np.float16, exact=False)
    assert unbounded.value("p").known.elems == (None,)
    assert not unbounded.assumptions
    bounded = infer.infer_model(_pad_to_multiple(32.0, TP.FLOAT16, bound=2048))
    assert D.free_names(bounded.value("p").known.elems[0]) == {"W"}


def _tf_same_padding(bound: int | None) -> onnx.ModelProto:
    """pad = max((ceil(W / s) - 1) * s + k - W, 0) (of ``min(W, bound)``), split before and
    after, in float32, then a VALID MaxPool."""
    s, k = 2.0, 3.0
    nodes = _width(bound=bound) + [
        h.make_node("Cast", ["g"], ["gf"], to=TP.FLOAT),
        h.make_node("Div", ["gf", "stride"], ["q"]),
        h.make_node("Ceil", ["q"], ["cq"]),
        h.make_node("Sub", ["cq", "one"], ["cq1"]),
        h.make_node("Mul", ["cq1", "stride"], ["a"]),
        h.make_node("Add", ["a", "k"], ["b"]),
        h.make_node("Sub", ["b", "gf"], ["t"]),
        h.make_node("Max", ["t", "fzero"], ["total"]),
        h.make_node("Div", ["total", "ftwo"], ["half"]),
        h.make_node("Floor", ["half"], ["before"]),
        h.make_node("Sub", ["total", "before"], ["after"]),
        h.make_node("Concat", ["fzeros2", "before", "fzeros2", "after"], ["padsf"], axis=0),
        h.make_node("Cast", ["padsf"], ["pads"], to=TP.INT64),
        h.make_node("Pad", ["x", "pads"], ["xp"]),
        h.make_node("MaxPool", ["xp"], ["y"], kernel_shape=[int(k)], strides=[int(s)]),
    ]
    inits = [
        _const("last", 2, TP.INT64),
        _const("stride", s, TP.FLOAT),
        _const("k", k, TP.FLOAT),
        _const("one", 1.0, TP.FLOAT),
        _const("fzero", 0.0, TP.FLOAT),
        _const("ftwo", 2.0, TP.FLOAT),
        h.make_tensor("fzeros2", TP.FLOAT, [2], [0.0, 0.0]),
    ]
    # Concat needs 1-D pieces: make the scalars vectors.
    for n in nodes:
        if n.op_type == "Concat":
            n.input[1] = "before1"
            n.input[3] = "after1"
    nodes[-4:-4] = [
        h.make_node("Unsqueeze", ["before", "zero"], ["before1"]),
        h.make_node("Unsqueeze", ["after", "zero"], ["after1"]),
    ]
    inits.append(h.make_tensor("zero", TP.INT64, [1], [0]))
    return _model(nodes, inits)


def test_tf_same_padding_computed_at_run_time():
    """Past 2^24 the float32 pad is off (the rounded ``W`` and ``ceil`` disagree), so without a
    bound on ``W`` no pad is claimed; with one, the pooled extent is ``ceil(W/2)``."""
    _check(_tf_same_padding(None), "y", exact=False)
    result = _check(_tf_same_padding(4096), "y")
    for w in EXTENTS:
        assert D.evaluate(result.shape_of("y")[2], {"W": w}) == -(-w // 2)


@pytest.mark.parametrize("factor, np_round", [(0.5, np.floor), (0.25, np.floor), (1.5, np.floor)])
def test_floor_of_a_scaled_extent(factor, np_round):
    """A product with a dyadic result is the rounded numerator over a power of two: exact in
    every run (``floor(float32(3*float32(W))/2)`` for 1.5)."""
    nodes = _width() + [
        h.make_node("Cast", ["g"], ["gf"], to=TP.FLOAT),
        h.make_node("Mul", ["gf", "f"], ["m"]),
        h.make_node("Floor", ["m"], ["fl"]),
        h.make_node("Cast", ["fl"], ["n"], to=TP.INT64),
        h.make_node("Unsqueeze", ["n", "zero"], ["u"]),
        h.make_node("ConstantOfShape", ["u"], ["y"]),
    ]
    inits = [_const("last", 2, TP.INT64), _const("f", factor, TP.FLOAT), h.make_tensor("zero", TP.INT64, [1], [0])]
    result = _check(_model(nodes, inits), "y")
    for w in EXTENTS:
        assert D.evaluate(result.shape_of("y")[0], {"W": w}) == int(np_round(np.float32(w) * np.float32(factor)))


@pytest.mark.parametrize("op", ["Floor", "Ceil", "Round"])
@pytest.mark.parametrize("divisor", [3.0, 5.0, 7.0])
@pytest.mark.parametrize("bound", [None, 4096])
def test_integral_of_a_rounded_quotient(op, divisor, bound):
    """W / 3.0 is rounded in float32; its floor, ceil and round are exact where the run proves
    ``W < 2^23`` (``min(W, 4096)``), and not claimed otherwise."""
    nodes = _width(bound=bound) + [
        h.make_node("Cast", ["g"], ["gf"], to=TP.FLOAT),
        h.make_node("Div", ["gf", "d"], ["q"]),
        h.make_node(op, ["q"], ["r"]),
        h.make_node("Cast", ["r"], ["n"], to=TP.INT64),
        h.make_node("Unsqueeze", ["n", "zero"], ["u"]),
        h.make_node("ConstantOfShape", ["u"], ["y"]),
    ]
    inits = [_const("last", 2, TP.INT64), _const("d", divisor, TP.FLOAT), h.make_tensor("zero", TP.INT64, [1], [0])]
    result = _check(_model(nodes, inits), "y", extents=[*EXTENTS, 1000, 1001, 1002], exact=bound is not None)
    assert (result.value("n").known.elems[0] is None) == (bound is None)


def test_cast_to_int_truncates_toward_zero():
    """Cast(float -> int64) of (W - 10) / 4 truncates: negative quotients round up."""
    nodes = _width() + [
        h.make_node("Sub", ["g", "ten"], ["gm"]),
        h.make_node("Cast", ["gm"], ["gf"], to=TP.FLOAT),
        h.make_node("Div", ["gf", "four"], ["q"]),
        h.make_node("Cast", ["q"], ["n"], to=TP.INT64),
        h.make_node("Add", ["n", "ten"], ["n10"]),
        h.make_node("Unsqueeze", ["n10", "zero"], ["u"]),
        h.make_node("ConstantOfShape", ["u"], ["y"]),
    ]
    inits = [
        _const("last", 2, TP.INT64),
        _const("ten", 10, TP.INT64),
        _const("four", 4.0, TP.FLOAT),
        h.make_tensor("zero", TP.INT64, [1], [0]),
    ]
    result = infer.infer_model(_model(nodes, inits))
    runs = [({"W": w}, run(expose_all(_model(nodes, inits)), {"x": np.zeros([1, 1, w], np.float32)})) for w in EXTENTS]
    assert not check(result, runs).wrong  # the sign of W - 10 is unknown: unknown is the right answer


def test_a_second_rounding_is_unknown():
    """(W / 3.0) / 3.0 rounds twice: its floor is not floor(W / 9) in general."""
    nodes = _width() + [
        h.make_node("Cast", ["g"], ["gf"], to=TP.FLOAT),
        h.make_node("Div", ["gf", "d"], ["q1"]),
        h.make_node("Div", ["q1", "d"], ["q2"]),
        h.make_node("Floor", ["q2"], ["r"]),
    ]
    inits = [_const("last", 2, TP.INT64), _const("d", 3.0, TP.FLOAT)]
    result = infer.infer_model(_model(nodes, inits))
    assert result.value("q1").known.elems == (SymFloat(D.to_float(D.symbol("W"), 24), 3, 24),)
    assert result.value("q2").known.elems == (None,)
    assert result.value("r").known.elems == (None,)


# -- the reported cases (issue 38) and values past the exact range ------------------------------


def _run_at(model: onnx.ModelProto, extents: list[int], shape: list) -> list:
    exposed = expose_all(model)
    runs = []
    for w in extents:
        dims = [w if d == "W" else d for d in shape]
        runs.append(({"W": w}, run(exposed, {"x": np.zeros(dims, np.float32)})))
    return runs


def test_float16_cast_of_a_size_past_2048():
    """``Size(x)`` of ``x: float[1,3,W,W]`` through float16 and back: 11,904 at ``W = 63``, not
    ``3*W**2``. The cast's contents are unknown, with no assumption in their place."""
    nodes = [
        h.make_node("Size", ["x"], ["size"]),
        h.make_node("Cast", ["size"], ["half"], to=TP.FLOAT16),
        h.make_node("Cast", ["half"], ["y"], to=TP.INT64),
    ]
    g = h.make_graph(
        nodes,
        "g",
        [h.make_tensor_value_info("x", TP.FLOAT, [1, 3, "W", "W"])],
        [h.make_tensor_value_info("y", TP.INT64, [])],
    )
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)
    result = infer.infer_model(model)
    assert result.value("y").known.elems == (None,)
    assert not result.assumptions
    verdict = check(result, _run_at(model, [1, 26, 27, 63, 64], [1, 3, "W", "W"]))
    assert not verdict.wrong and not verdict.skipped_runs


def test_float16_product_read_two_ways():
    """``Shape -> Cast(float16) -> Mul(0.333251953125) -> Cast(int32)``: by the definition the
    float16 product at ``W = 15`` rounds to 10.0; onnxruntime's float32 chain gives 9.99755859375
    and 9. Neither is claimed; the constant element, exact in both readings, is."""
    nodes = [
        h.make_node("Shape", ["x"], ["s"]),
        h.make_node("Cast", ["s"], ["sh"], to=TP.FLOAT16),
        h.make_node("Mul", ["sh", "c"], ["m"]),
        h.make_node("Cast", ["m"], ["y"], to=TP.INT32),
    ]
    c = h.make_tensor("c", TP.FLOAT16, [], [0.333251953125])
    g = h.make_graph(
        nodes,
        "g",
        [h.make_tensor_value_info("x", TP.FLOAT, ["N", 2, "W"])],
        [h.make_tensor_value_info("y", TP.INT32, [3])],
        [c],
    )
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)
    result = infer.infer_model(model)
    assert result.value("y").known.elems == (None, 0, None)
    assert not result.assumptions
    exposed = expose_all(model)
    for w in range(1, 40):
        runs = [({"N": 2, "W": w}, run(exposed, {"x": np.zeros([2, 2, w], np.float32)}))]
        kept_only = run(model, {"x": np.zeros([2, 2, w], np.float32)})  # the optimized chain
        runs.append(({"N": 2, "W": w}, {"y": kept_only["y"]}))
        assert not check(result, runs).wrong


@pytest.mark.parametrize(
    "elem, np_elem, scale", [(TP.FLOAT, np.float32, 1_000_003), (TP.DOUBLE, np.float64, (1 << 42) + 1)]
)
def test_values_past_the_exact_range(elem, np_elem, scale):
    """``W * scale + 1`` (past 2^24 in float32, past 2^53 in double) cast to the float type,
    halved and floored: only the cast rounds, so every claim is exact (``float32(...)``) and
    holds where the rounding changes the value."""
    nodes = _width() + [
        h.make_node("Mul", ["g", "scale"], ["big"]),
        h.make_node("Add", ["big", "one"], ["odd"]),
        h.make_node("Cast", ["odd"], ["f"], to=elem),
        h.make_node("Div", ["f", "two"], ["half"]),
        h.make_node("Floor", ["half"], ["fl"]),
        h.make_node("Cast", ["fl"], ["n"], to=TP.INT64),
        h.make_node("Sub", ["n", "big"], ["y"]),
    ]
    inits = [
        _const("last", 2, TP.INT64),
        _const("scale", scale, TP.INT64),
        _const("one", 1, TP.INT64),
        _const("two", 2.0, elem),
    ]
    g = h.make_graph(
        nodes,
        "g",
        [h.make_tensor_value_info("x", TP.FLOAT, [1, 1, "W"])],
        [h.make_tensor_value_info("y", TP.INT64, [])],
        inits,
    )
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 18)], ir_version=8)
    result = infer.infer_model(model)
    claimed = result.value("y").known.elems[0]
    assert D.free_names(claimed) == {"W"} and not result.assumptions
    extents = [1, 2, 3, 16, 17, 33, 100, 1000, 5001]
    verdict = check(result, _run_at(model, extents, [1, 1, "W"]))
    assert not verdict.wrong and not verdict.skipped_runs
    # The rounding shows: y is not -floor(big/2) at every extent.
    assert any(D.evaluate(claimed, {"W": w}) != (w * scale + 1) // 2 - w * scale for w in extents)
