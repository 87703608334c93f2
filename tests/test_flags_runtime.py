"""0/1 flag attributes given other values, and sliding windows that do not fit, against onnxruntime.

The definitions call attributes such as ``keepdims`` or ``ceil_mode`` booleans and say nothing of
2 or -1; onnxruntime (1.32, CPU) reads some as true only when exactly 1, some as any non-zero, and
refuses the node on others. ``FLAGS`` records which, and each case checks both that onnxruntime
still does so and that inference claims nothing it contradicts: claims that hold concretely and
with every input dim symbolic where it runs, an error where it refuses the node.

Windows larger than their padded input: onnxruntime refuses such a Conv or ConvTranspose, and
pools it with the quotient truncated toward zero (refusing only a shortfall of two strides). The
sweeps check concrete extents, symbolic claims at those sizes, and the least extents recorded.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import infer
from infer.core import dims as D
from infer.core import types as T
from signatures.kit.helpers import NONZERO, ONE, STRICT, FlagReading
from tests.support.contrib_node import Case as NodeCase
from tests.support.onenode import In, const
from tests.support.runtime import check, run


@dataclass(frozen=True)
class Case(NodeCase):
    """One node, of the default domain unless ``domain`` says otherwise."""

    domain: str = ""

    def with_attrs(self, **attrs: Any) -> Case:
        return replace(self, attrs={**self.attrs, **attrs})

    def __str__(self) -> str:
        return f"{self.op} {self.attrs} opset {self.opset} on {_shapes(self.inputs)}"


def _shapes(inputs: Sequence[In | None]) -> list[Any]:
    return [None if x is None else (list(x.array.shape) if x.array is not None else list(x.shape)) for x in inputs]


def ort_outputs(case: Case) -> list[Any] | None:
    """onnxruntime's outputs, or ``None`` where it refuses the node (at load or at run)."""
    model, _ = case.model(symbolic=False)
    try:
        observed = run(model, case.feeds())
    except Exception:
        return None
    return [observed[f"y{k}"] for k in range(case.n_out)]


def errors(result: infer.InferenceResult) -> list[str]:
    return [f"{d.code}: {d.message}" for d in result.diagnostics if d.severity == "error"]


def claims_hold(case: Case, observed: list[Any], exact: bool = True) -> list[str]:
    """What inference gets wrong about a node onnxruntime runs, concretely and symbolically.

    Concretely every output dim must be an integer (``exact``); symbolically every claim must
    evaluate to the real extent (runs that violate a recorded assumption are reported too).
    """
    problems = []
    outputs = {f"y{k}": v for k, v in enumerate(observed)}
    for symbolic in (False, True):
        model, bindings = case.model(symbolic)
        result = infer.infer_model(model)
        problems += [f"{case} (symbolic={symbolic}): error on a node onnxruntime runs: {e}" for e in errors(result)]
        verdict = check(result, [(bindings, outputs)])
        problems += [f"{case}: {w}" for w in verdict.wrong]
        problems += [f"{case}: claims rest on an assumption this run violates: {s}" for s in verdict.skipped_runs]
        if exact and not symbolic:
            for name, real in outputs.items():
                t = result.type_of(name)
                if isinstance(t, T.TensorType) and (t.shape is None or any(not isinstance(d, int) for d in t.shape)):
                    problems.append(f"{case}: `{name}` is {t} with concrete inputs, runtime {np.shape(real)}")
    return problems


def refused_too(case: Case, symbolic: bool) -> list[str]:
    """Inference must report an error on a node onnxruntime refuses."""
    model, _ = case.model(symbolic)
    result = infer.infer_model(model)
    return [] if errors(result) else [f"{case} (symbolic={symbolic}): onnxruntime refuses it, inference found no error"]


def same_outputs(a: list[Any], b: list[Any]) -> bool:
    def eq(x: Any, y: Any) -> bool:
        if isinstance(x, list) or isinstance(y, list):
            return isinstance(x, list) and isinstance(y, list) and len(x) == len(y) and all(map(eq, x, y))
        x, y = np.asarray(x), np.asarray(y)
        if x.shape != y.shape or x.dtype != y.dtype:
            return False
        return bool(np.array_equal(x, y, equal_nan=x.dtype.kind == "f"))

    return len(a) == len(b) and all(map(eq, a, b))


# -- flag attributes ------------------------------------------------------------------------------

F, I64 = np.float32, np.int64
MS = "com.microsoft"
_Q = [const(0.1, F), const(0, np.uint8)]  # a scale and zero point

# (case without the flag, the flag, how onnxruntime reads 2 and -1)
# fmt: off
FLAGS: list[tuple[Case, str, FlagReading]] = [
    # reductions: keepdims and noop_with_empty_axes hold only for exactly 1
    (Case("ReduceMean", [In([2, 3])], {"axes": [1]}, opset=13), "keepdims", ONE),
    (Case("ReduceSum", [In([2, 3]), const([1])], opset=13), "keepdims", ONE),
    (Case("ReduceMax", [In([2, 3]), const([-1])]), "keepdims", ONE),
    (Case("ReduceMin", [In([2, 3])], {"axes": [0]}, opset=11), "keepdims", ONE),
    (Case("ReduceL1", [In([2, 3]), const([0])]), "keepdims", ONE),
    (Case("ReduceL2", [In([2, 3])]), "keepdims", ONE),
    (Case("ReduceLogSum", [In([2, 3])], {"axes": [1]}, opset=13), "keepdims", ONE),
    (Case("ReduceLogSumExp", [In([2, 3]), const([1])]), "keepdims", ONE),
    (Case("ReduceSumSquare", [In([2, 3]), const([0, 1])]), "keepdims", ONE),
    (Case("ReduceProd", [In(array=np.arange(1, 7, dtype=I64).reshape(2, 3)), const([1])]), "keepdims", ONE),
    (Case("ReduceSum", [In(array=np.arange(6, dtype=I64).reshape(2, 3))], {"axes": [0]}, opset=11),
     "keepdims", ONE),
    (Case("ReduceSum", [In([2, 3]), const([], I64)], opset=13), "noop_with_empty_axes", ONE),
    (Case("ReduceMean", [In([2, 3])]), "noop_with_empty_axes", ONE),
    (Case("ReduceMax", [In([2, 3]), const([], I64)], {"keepdims": 0}), "noop_with_empty_axes", ONE),
    (Case("ReduceL2", [In([2, 3]), In([0], I64)]), "noop_with_empty_axes", ONE),
    (Case("ArgMax", [In([2, 3])], {"axis": 1}, opset=13), "keepdims", ONE),
    (Case("ArgMin", [In([2, 3], I64)], {"axis": 0}, opset=11), "keepdims", ONE),
    (Case("ArgMax", [In(array=np.array([[1, 3, 3]], F))], {"axis": 1}, opset=12), "select_last_index", NONZERO),
    (Case("ArgMin", [In(array=np.array([[3, 1, 1]], F))], {"axis": 1}, opset=13), "select_last_index", NONZERO),
    (Case("TopK", [In(array=np.array([[1, 5, 3, 4]], F)), const([2])], opset=11, n_out=2), "largest", ONE),
    (Case("TopK", [In(array=np.array([[1, 5, 3, 4]], F)), const([3])], opset=11, n_out=2), "sorted", ONE),
    # pooling
    (Case("MaxPool", [In([1, 1, 5])], {"kernel_shape": [2], "strides": [2]}, opset=12), "ceil_mode", ONE),
    (Case("MaxPool", [In([1, 1, 5, 5])], {"kernel_shape": [2, 2], "strides": [2, 2]}, opset=22, n_out=2),
     "ceil_mode", ONE),
    (Case("AveragePool", [In([1, 1, 6, 5])], {"kernel_shape": [2, 2], "strides": [2, 2]}, opset=19),
     "ceil_mode", ONE),
    (Case("AveragePool", [In([1, 1, 6])], {"kernel_shape": [2], "strides": [3], "dilations": [2]}, opset=19),
     "ceil_mode", ONE),
    (Case("LpPool", [In([1, 1, 5])], {"kernel_shape": [2], "strides": [2]}), "ceil_mode", ONE),
    (Case("LpPool", [In([1, 1, 6])], {"kernel_shape": [3], "strides": [2], "pads": [1, 0]}), "ceil_mode", ONE),
    (Case("AveragePool", [In(array=np.ones((1, 1, 3), F))], {"kernel_shape": [2], "pads": [1, 1]}, opset=19),
     "count_include_pad", NONZERO),
    (Case("MaxPool", [In([1, 1, 4])], {"kernel_shape": [2]}, opset=12, n_out=2), "storage_order", STRICT),
    (Case("QLinearAveragePool", [In([1, 2, 5, 5], np.uint8), *_Q, *_Q], {"kernel_shape": [2, 2], "strides": [2, 2]},
          domain=MS), "ceil_mode", ONE),
    (Case("QLinearAveragePool", [In([1, 2, 4, 5], np.uint8), *_Q, *_Q], {"kernel_shape": [2, 2]}, domain=MS),
     "channels_last", NONZERO),
    (Case("QLinearGlobalAveragePool", [In([1, 2, 3, 5], np.uint8), *_Q, *_Q], domain=MS),
     "channels_last", NONZERO),
    # data-dependent and cumulative
    (Case("Unique", [In(array=np.array([3, 1, 3, 2, 1], I64))], opset=11, n_out=4), "sorted", ONE),
    (Case("Unique", [In(array=np.array([[3, 1], [1, 2], [3, 1]], I64))], {"axis": 0}, opset=11, n_out=4),
     "sorted", ONE),
    (Case("CumSum", [In(array=np.array([1, 2, 3, 4], I64)), const(0)], opset=14), "exclusive", STRICT),
    (Case("CumSum", [In([2, 3]), const(1)], opset=11), "reverse", STRICT),
    (Case("CumProd", [In(array=np.array([1, 2, 3], I64)), const(0)], opset=26), "exclusive", STRICT),
    (Case("CumProd", [In([2, 3]), const(0)], opset=26), "reverse", STRICT),
    # products
    (Case("Gemm", [In([3, 2]), In([3, 4])], opset=13), "transA", NONZERO),
    (Case("Gemm", [In([2, 3]), In([4, 3]), In([4])], opset=11), "transB", NONZERO),
    (Case("FusedMatMul", [In([3, 2]), In([3, 4])], domain=MS), "transA", NONZERO),
    (Case("FusedMatMul", [In([5, 2, 3]), In([3, 5, 4])], domain=MS), "transBatchB", NONZERO),
    # normalization and recurrences
    (Case("BatchNormalization", [In([2, 3, 4]), *(In([3, 4]) for _ in range(4))], opset=7), "spatial", ONE),
    (Case("RNN", [In([2, 3, 4]), In([1, 5, 4]), In([1, 5, 5])], {"hidden_size": 5}, opset=14, n_out=2),
     "layout", STRICT),
    (Case("GRU", [In([2, 3, 4]), In([1, 15, 4]), In([1, 15, 5])], {"hidden_size": 5}, opset=14, n_out=2),
     "layout", STRICT),  # onnxruntime's CPU kernels refuse layout 1 too
    # signal
    (Case("DFT", [In([1, 8, 1])], opset=17), "onesided", NONZERO),
    (Case("DFT", [In([1, 8, 1]), None, const(1)], opset=20), "onesided", NONZERO),
    (Case("DFT", [In([1, 8, 2])], opset=17), "inverse", NONZERO),
    (Case("DFT", [In([1, 5, 2]), None, const(1)], {"onesided": 1}, opset=20), "inverse", NONZERO),
    (Case("DFT", [In([1, 5, 2])], {"inverse": 1}, opset=17), "onesided", NONZERO),
    (Case("STFT", [In([1, 16, 1]), const(4), None, const(8)], opset=17), "onesided", NONZERO),
    (Case("HannWindow", [const(5)], opset=17), "periodic", NONZERO),
    (Case("BlackmanWindow", [const(6)], opset=17), "periodic", NONZERO),
    # others
    (Case("SplitToSequence", [In([2, 3])], {"axis": 0}, opset=13), "keepdims", NONZERO),
    (Case("StringNormalizer", [In(array=np.array(["Ab", "ab", "c"], object))], {"stopwords": ["ab"]}, opset=10),
     "is_case_sensitive", NONZERO),
    (Case("Trilu", [In(array=np.ones((2, 3), I64))], opset=14), "upper", NONZERO),
    (Case("IsInf", [In(array=np.array([-np.inf, np.inf, 1], F))], opset=20), "detect_negative", NONZERO),
    (Case("IsInf", [In(array=np.array([-np.inf, np.inf, 1], F))], opset=20), "detect_positive", NONZERO),
]
# fmt: on


@pytest.mark.parametrize("value", [2, -1])
@pytest.mark.parametrize(("case", "name", "reads"), [pytest.param(*f, id=f"{f[0].op}-{f[1]}") for f in FLAGS])
def test_flag_read_as_onnxruntime_reads_it(case: Case, name: str, reads: FlagReading, value: int):
    runs = [v for v in (0, 1) if ort_outputs(case.with_attrs(**{name: v})) is not None]
    assert runs, f"{case}: onnxruntime refuses the case with {name} 0 and 1"
    node = case.with_attrs(**{name: value})
    got = ort_outputs(node)
    if reads == STRICT:
        assert got is None, f"{node}: onnxruntime ran it; FLAGS says it refuses {name}={value}"
        assert not refused_too(node, symbolic=False) + refused_too(node, symbolic=True)
        return
    assert got is not None, f"{node}: onnxruntime refused it"
    as_read = ort_outputs(case.with_attrs(**{name: 1 if reads == NONZERO else 0}))
    assert as_read is not None and same_outputs(got, as_read), f"{node}: onnxruntime no longer reads {name} as {reads}"
    assert not claims_hold(node, got)


def test_concat_from_sequence_new_axis():
    """new_axis: any non-zero value inserts the axis (a sequence input, so a two-node model)."""
    for value in (2, -1):
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])
        nodes = [
            helper.make_node("SplitToSequence", ["x"], ["s"], axis=0, keepdims=1),
            helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0, new_axis=value),
        ]
        graph = helper.make_graph(nodes, "g", [x], [onnx.ValueInfoProto(name="y")])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 10
        real = run(model, {"x": np.ones((2, 3), F)})["y"]
        assert real.shape == (2, 1, 3)
        result = infer.infer_model(model)
        assert not errors(result)
        verdict = check(result, [({"N": 2}, {"y": real})])
        assert not verdict.wrong
        shape = result.shape_of("y")
        assert shape is not None and len(shape) == 3 and shape[1:] == (1, 3)


# -- windows that do not fit their padded input ---------------------------------------------------


def _pool_cases() -> list[Case]:
    cases = []
    grid = itertools.product(
        ["MaxPool", "AveragePool", "LpPool"],
        [1, 2, 3, 4],
        [2, 3, 5],
        [1, 2, 3],
        [(0, 0), (1, 0), (0, 1), (1, 1)],
        [1, 2],
        [0, 1],
    )
    for op, x, k, s, pads, d, ceil in grid:
        if d == 2 and (k == 5 or pads != (0, 0)):
            continue  # keeps the sweep short; dilated windows are covered by the others
        fit = d * (k - 1) + 1 - sum(pads)
        if x >= fit:
            continue
        attrs = {"kernel_shape": [k], "strides": [s], "pads": list(pads), "dilations": [d], "ceil_mode": ceil}
        cases.append(Case(op, [In([1, 2, x])], attrs, opset=19 if op != "LpPool" else 18))
    for op, x, k, s, ceil in itertools.product(["MaxPool", "AveragePool"], [1, 2, 3], [3, 5], [1, 2, 3], [0, 1]):
        if x < k:
            attrs = {"kernel_shape": [k], "strides": [s], "auto_pad": "VALID", "ceil_mode": ceil}
            cases.append(Case(op, [In([1, 2, x])], attrs, opset=19))
    cases.append(Case("MaxPool", [In([1, 1, 2, 7])], {"kernel_shape": [4, 3], "strides": [3, 1]}, opset=12, n_out=2))
    for x, s, ceil in itertools.product([1, 2], [1, 2], [0, 1]):
        attrs = {"kernel_shape": [3, 3], "strides": [s, s], "ceil_mode": ceil}
        cases.append(Case("QLinearAveragePool", [In([1, 2, x, x], np.uint8), *_Q, *_Q], attrs, domain=MS))
    return cases


def _rests_on_fit(case: Case) -> bool:
    """Whether a pooling case's symbolic claims may assume its window fits: some axis is short by
    a stride above 1 without ceil_mode, where onnxruntime truncates and the definition floors."""
    a = case.attrs
    x = case.inputs[0].shape[2:]  # type: ignore[union-attr]
    n = len(x)
    pads = a.get("pads", [0] * 2 * n)
    strides, dilations = a.get("strides", [1] * n), a.get("dilations", [1] * n)
    for i, (xi, k) in enumerate(zip(x, a["kernel_shape"])):
        if xi < dilations[i] * (k - 1) + 1 - pads[i] - pads[i + n] and strides[i] > 1 and a.get("ceil_mode", 0) != 1:
            return True
    return False


def test_pooling_windows_that_do_not_fit():
    """Concretely, onnxruntime's extent (or an error where it refuses); symbolically, claims right
    wherever they do not rest on an assumption the size violates, and that only for a stride
    above 1 without ceil_mode."""
    problems = []
    ran = refused = 0
    for case in _pool_cases():
        got = ort_outputs(case)
        if got is None:
            refused += 1
            problems += refused_too(case, symbolic=False)
            continue
        ran += 1
        found = claims_hold(case, got)
        if _rests_on_fit(case):
            found = [p for p in found if "assumption this run violates" not in p]
        problems += found
    assert ran > 50 and refused > 20
    assert not problems, "\n".join(problems[:20])


def _least(result: infer.InferenceResult, name: str) -> int | None:
    """The least value recorded for the variable ``name``, if any."""
    for a in result.assumptions:
        if D.variable_name(a.expr) == name:
            return a.lower
    return None


@pytest.mark.parametrize("op", ["MaxPool", "AveragePool", "LpPool", "Conv"])
def test_least_extent_recorded_is_where_onnxruntime_starts_running(op: str):
    """A stride of 1, ceil_mode or a Conv: the least extent recorded for a symbolic input is the
    least onnxruntime runs, and the claim holds from there (no assumption beyond running)."""
    problems = []
    for k, s, pads, ceil in itertools.product([3, 5], [1, 2, 3], [(0, 0), (1, 0)], [0, 1]):
        if op == "Conv" and ceil:
            continue
        if op != "Conv" and s > 1 and not ceil:
            continue  # the definition's floor: claims assume the window fits (test above)
        attrs: dict[str, Any] = {"strides": [s], "pads": list(pads)}
        if op != "Conv":
            attrs |= {"kernel_shape": [k], "ceil_mode": ceil}

        def make(x: int, k: int = k, attrs: dict[str, Any] = attrs) -> Case:
            if op == "Conv":
                return Case("Conv", [In([1, 1, x]), In(array=np.ones((1, 1, k), F))], attrs)
            return Case(op, [In([1, 1, x])], attrs, opset=19 if op != "LpPool" else 18)

        model, _ = make(8).model(symbolic=True)
        least = _least(infer.infer_model(model), "d0_2") or 1
        if least > 1 and ort_outputs(make(least - 1)) is not None:
            problems.append(f"{make(least - 1)}: recorded least extent {least}, onnxruntime runs at {least - 1}")
        for x in range(least, least + 2 * s + 1):
            got = ort_outputs(make(x))
            if got is None:
                problems.append(f"{make(x)}: onnxruntime refuses an extent at or above the least recorded {least}")
            else:
                problems += claims_hold(make(x), got)
    assert not problems, "\n".join(problems[:20])


def test_conv_window_that_does_not_fit_is_an_error():
    """onnxruntime refuses a Conv whose (dilated, padded) window does not fit, short by one or more."""
    problems = []
    for x, k, s, pads, d in itertools.product([1, 2, 3], [2, 3, 5], [1, 2, 3], [(0, 0), (1, 0), (1, 1)], [1, 2]):
        fit = d * (k - 1) + 1 - sum(pads)
        attrs = {"strides": [s], "pads": list(pads), "dilations": [d]}
        case = Case("Conv", [In([1, 1, x]), In(array=np.ones((1, 1, k), F))], attrs)
        got = ort_outputs(case)
        if x < fit:
            assert got is None, f"{case}: onnxruntime ran it"
            problems += refused_too(case, symbolic=False)
        else:
            assert got is not None
            problems += claims_hold(case, got)
    for x in (1, 2):  # onnxruntime's fused Conv refuses it too
        case = Case("FusedConv", [In([1, 1, x]), In(array=np.ones((1, 1, 3), F))], {"activation": "Relu"}, domain=MS)
        assert ort_outputs(case) is None
        problems += refused_too(case, symbolic=False)
    assert not problems, "\n".join(problems[:20])


def test_conv_transpose_extents_below_one():
    """Pads that leave no output element: onnxruntime refuses; an error concretely, and the least
    extent that leaves one recorded for a symbolic input (the claim holds from there)."""
    problems = []
    grid = itertools.product([1, 2, 3], [1, 2, 3], [1, 2, 3], [(1, 0), (1, 1), (2, 2), (3, 3)], [1, 2])
    for x, k, s, pads, d in grid:
        w = In(array=np.ones((1, 1, k), F))
        case = Case("ConvTranspose", [In([1, 1, x]), w], {"strides": [s], "pads": list(pads), "dilations": [d]})
        got = ort_outputs(case)
        out = s * (x - 1) + d * (k - 1) + 1 - sum(pads)
        if got is None:
            assert out <= 0, f"{case}: onnxruntime refused it"
            problems += refused_too(case, symbolic=False)
            continue
        problems += claims_hold(case, got)
        model, _ = case.model(symbolic=True)
        least = _least(infer.infer_model(model), "d0_2") or 1
        if least > 1 and ort_outputs(Case("ConvTranspose", [In([1, 1, least - 1]), w], case.attrs)) is not None:
            problems.append(f"{case}: recorded least extent {least}, onnxruntime runs below it")
    assert not problems, "\n".join(problems[:20])


def test_conv_transpose_output_padding_not_below_stride_and_dilation():
    """onnxruntime refuses output_padding >= max(stride, dilation); so does inference."""
    for pad, s, d in [(1, 1, 1), (2, 2, 1), (2, 1, 2), (3, 2, 3)]:
        attrs = {"strides": [s], "dilations": [d], "output_padding": [pad]}
        case = Case("ConvTranspose", [In([1, 1, 4]), In([1, 1, 2])], attrs)
        assert ort_outputs(case) is None
        for symbolic in (False, True):
            model, _ = case.model(symbolic)
            assert "bad-attribute" in {d.code for d in infer.infer_model(model).diagnostics}, case


def test_short_window_extents_read_as_onnxruntime_truncates():
    """Where the definition floors a negative quotient to 0 windows, onnxruntime gives 1."""
    r = infer.infer_node("MaxPool", ["float[1,1,1]"], {"kernel_shape": [2], "strides": [2]}, opset=12)
    assert r.types[0].shape == (1, 1, 1) and not [d for d in r.diagnostics if d.severity == "error"]
    # Symbolic, the truncated extent wherever L may fall short of the window (issue 24), so no
    # L >= 3 is assumed; where the window fits, the definition's floor.
    r = infer.infer_node("MaxPool", ["float[N,C,L]"], {"kernel_shape": [3], "strides": [2]}, opset=12)
    assert [D.evaluate(r.types[0].shape[2], {"L": n}) for n in range(1, 7)] == [0, 1, 1, 1, 2, 2]
    assert not any(str(a).startswith("L >=") for a in r.assumptions)
    r = infer.infer_node("MaxPool", ["float[N,C,L]"], {"kernel_shape": [3], "strides": [2], "pads": [1, 1]}, opset=12)
    assert D.to_str(r.types[0].shape[2]) == "floor((L + 1)/2)"
