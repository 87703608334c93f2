"""Shape arithmetic that detours through float tensors, checked against onnxruntime.

Exporters compute sizes as ``ceil(Cast(H) / 32.0) * 32``, TF-style "same" padding, ``floor(H * 0.5)``.
Each program here runs in onnxruntime at many extents (small ones included, where a wrong
rounding shows first) with every value exposed; every claim must hold, and the final extent must
be exact (an expression over the declared variable, not a fresh one).
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
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", elem, shape)],
                     [h.make_tensor_value_info("y", elem, None)], inits)  # fmt: skip
    return h.make_model(g, opset_imports=[h.make_opsetid("", 18)], ir_version=8)


def _width(out: str = "g") -> list:
    """``out`` = the last extent of ``x`` (int64 scalar)."""
    return [h.make_node("Shape", ["x"], ["s"]), h.make_node("Gather", ["s", "last"], [out], axis=0)]


def _const(name: str, value: float | int, elem: int) -> onnx.TensorProto:
    return h.make_tensor(name, elem, [], [value])


def _check(model: onnx.ModelProto, final: str, extents=EXTENTS, elem=np.float32) -> infer.InferenceResult:
    result = infer.infer_model(model)
    runs = []
    exposed = expose_all(model)
    for w in extents:
        feeds = {"x": np.zeros([1] * (len(model.graph.input[0].type.tensor_type.shape.dim) - 1) + [w], elem)}
        runs.append(({"W": w}, run(exposed, feeds)))
    verdict = check(result, runs)
    assert not verdict.wrong, verdict.wrong
    assert not verdict.skipped_runs, verdict.skipped_runs
    t = result.type_of(final)
    assert all(D.free_names(d) <= {"W"} for d in t.shape), f"{final}: {t} is not exact"
    return result


def _pad_to_multiple(k: float, elem: int = TP.FLOAT) -> onnx.ModelProto:
    """Pads the last axis of x to a multiple of k: ceil(W / k) * k - W, through floats."""
    nodes = _width() + [
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
    inits = [_const("last", 2, TP.INT64), _const("k", k, elem), h.make_tensor("zero", TP.INT64, [1], [0]),
             h.make_tensor("zeros5", TP.INT64, [5], [0] * 5)]  # fmt: skip
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


@pytest.mark.parametrize("k", [32.0, 8.0, 3.0, 14.0])
def test_pad_to_a_multiple(k):
    result = _check(_pad_to_multiple(k), "y")
    for w in EXTENTS:
        assert D.evaluate(result.shape_of("y")[2], {"W": w}) == -(-w // int(k)) * int(k)


@pytest.mark.parametrize("elem, np_elem", [(TP.DOUBLE, np.float64), (TP.FLOAT16, np.float16)])
def test_pad_to_a_multiple_in_other_float_types(elem, np_elem):
    _check(_pad_to_multiple(32.0, elem), "y", extents=[1, 2, 3, 31, 33, 100], elem=np_elem)


def test_float16_beyond_2048_is_assumed_away():
    """float16 holds integers exactly only to 2048: the claim says so in its assumptions."""
    result = infer.infer_model(_pad_to_multiple(32.0, TP.FLOAT16))
    bounds = [a for a in result.assumptions if a.upper == 2048]
    assert bounds and all(a.holds({"W": 2048}) and not a.holds({"W": 2049}) for a in bounds)


def test_tf_same_padding_computed_at_run_time():
    """pad = max((ceil(W / s) - 1) * s + k - W, 0), split before and after, in float32."""
    s, k = 2.0, 3.0
    nodes = _width() + [
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
    inits = [_const("last", 2, TP.INT64), _const("stride", s, TP.FLOAT), _const("k", k, TP.FLOAT),
             _const("one", 1.0, TP.FLOAT), _const("fzero", 0.0, TP.FLOAT),
             _const("ftwo", 2.0, TP.FLOAT), h.make_tensor("fzeros2", TP.FLOAT, [2], [0.0, 0.0])]  # fmt: skip
    # Concat needs 1-D pieces: make the scalars vectors.
    for n in nodes:
        if n.op_type == "Concat":
            n.input[1] = "before1"
            n.input[3] = "after1"
    nodes[-4:-4] = [h.make_node("Unsqueeze", ["before", "zero"], ["before1"]),
                    h.make_node("Unsqueeze", ["after", "zero"], ["after1"])]  # fmt: skip
    inits.append(h.make_tensor("zero", TP.INT64, [1], [0]))
    result = _check(_model(nodes, inits), "y")
    for w in EXTENTS:
        assert D.evaluate(result.shape_of("y")[2], {"W": w}) == -(-w // 2)


@pytest.mark.parametrize("factor, np_round", [(0.5, np.floor), (0.25, np.floor), (1.5, np.floor)])
def test_floor_of_a_scaled_extent(factor, np_round):
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
def test_integral_of_a_rounded_quotient(op, divisor):
    """W / 3.0 is rounded in float32; its floor, ceil and round are still exact below 2^23."""
    nodes = _width() + [
        h.make_node("Cast", ["g"], ["gf"], to=TP.FLOAT),
        h.make_node("Div", ["gf", "d"], ["q"]),
        h.make_node(op, ["q"], ["r"]),
        h.make_node("Cast", ["r"], ["n"], to=TP.INT64),
        h.make_node("Unsqueeze", ["n", "zero"], ["u"]),
        h.make_node("ConstantOfShape", ["u"], ["y"]),
    ]
    inits = [_const("last", 2, TP.INT64), _const("d", divisor, TP.FLOAT), h.make_tensor("zero", TP.INT64, [1], [0])]
    result = _check(_model(nodes, inits), "y", extents=[*EXTENTS, 1000, 1001, 1002])
    assert any(a.upper == (1 << 23) - 1 for a in result.assumptions)


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
    inits = [_const("last", 2, TP.INT64), _const("ten", 10, TP.INT64), _const("four", 4.0, TP.FLOAT),
             h.make_tensor("zero", TP.INT64, [1], [0])]  # fmt: skip
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
    assert result.value("q1").known.elems == (SymFloat(D.symbol("W"), 3, 24),)
    assert result.value("q2").known.elems == (None,)
    assert result.value("r").known.elems == (None,)
