"""Recurrent, data-dependent, random, indexing, scan and string operators against real runtimes.

Each case runs one node in onnxruntime (through ``check_node``, concrete and symbolic) or, where
onnxruntime has no kernel for the case, in ``onnx.reference.ReferenceEvaluator``; then every
claimed dim, element type and known content of both inference variants is compared with what
the runtime computed.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from onnx import TensorProto
from onnx.reference import ReferenceEvaluator

import infer
from infer.core import types as T
from tests.support.onenode import In, build, check_node, const
from tests.support.runtime import check_value, run

F32, I64, I32 = np.float32, np.int64, np.int32


class Fed(In):
    """A graph input fed with fixed data (strings, valid indices), not random values."""

    def __init__(self, value: Any):
        value = np.asarray(value)
        super().__init__(shape=list(value.shape), dtype=value.dtype)
        self.value = value

    def data(self, rng: np.random.Generator) -> np.ndarray:
        return self.value


def strings(*xs: Any) -> np.ndarray:
    return np.array(xs, dtype=object)


def _execute(model: Any, feeds: dict[str, np.ndarray], runtime: str) -> dict[str, np.ndarray]:
    if runtime == "ort":
        return run(model, feeds)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outs = ReferenceEvaluator(model).run(None, feeds)
    return {o.name: v for o, v in zip(model.graph.output, outs)}


def verify(
    op: str,
    inputs: list[In | None],
    attrs: dict[str, Any] | None = None,
    n_out: int = 1,
    opset: int = 18,
    runtime: str = "both",
    exact: bool = True,
    rank: bool = True,
) -> list[T.Type]:
    """Check shapes, element types and known contents of both variants; the concrete types.

    ``runtime`` is "ort", "ref" or "both" (every claim must hold for each runtime). ``check_node``
    runs for onnxruntime unless ``rank`` is false (it insists on a known rank).
    """
    attrs = attrs or {}
    runtimes = ("ort", "ref") if runtime == "both" else (runtime,)
    if "ort" in runtimes and rank:
        check_node(op, inputs, attrs, n_out, opset, exact=exact)
    rng = np.random.default_rng(0)
    model, _ = build(op, inputs, attrs, n_out, opset, symbolic=False)
    feeds = {f"x{i}": x.data(rng) for i, x in enumerate(inputs) if x is not None and x.array is None}
    observed = {rt: _execute(model, feeds, rt) for rt in runtimes}
    concrete: list[T.Type] = []
    for symbolic in (False, True):
        m, bindings = build(op, inputs, attrs, n_out, opset, symbolic=symbolic)
        result = infer.infer_model(m)
        assert not result.errors, result.errors
        assert not [d for d in result.diagnostics if d.code == "rule-crash"], result.diagnostics
        for k in range(n_out):
            name = f"y{k}"
            v = result.value(name)
            for rt, outs in observed.items():
                arr = np.asarray(outs[name])
                if arr.dtype.kind in "US":
                    arr = arr.astype(object)
                problems = check_value(result, name, arr, bindings)
                variant = "symbolic" if symbolic else "concrete"
                assert not problems, f"{op} {attrs} ({variant}, {rt}): {problems}"
            if not symbolic:
                concrete.append(v.type)
                if exact and rank:
                    assert all(isinstance(d, int) for d in v.type.shape), f"{op} {attrs}: {v.type} not exact"
    return concrete


def known_of(
    op: str, inputs: list[In | None], attrs: dict[str, Any] | None = None, n_out: int = 1, opset: int = 18
) -> list[Any]:
    model, _ = build(op, inputs, attrs or {}, n_out, opset, symbolic=False)
    result = infer.infer_model(model)
    return [result.value(f"y{k}").known for k in range(n_out)]


# -- RNN, GRU, LSTM -------------------------------------------------------------------------------

GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}


def _rnn_inputs(
    op: str, seq: int, batch: int, size: int, hidden: int, ndir: int, layout: int = 0, extras: bool = False
) -> list[In | None]:
    g = GATES[op]
    x = [seq, batch, size] if layout == 0 else [batch, seq, size]
    ins: list[In | None] = [In(x), In([ndir, g * hidden, size]), In([ndir, g * hidden, hidden])]
    if extras:
        h0 = [ndir, batch, hidden] if layout == 0 else [batch, ndir, hidden]
        ins += [In([ndir, 2 * g * hidden]), const(np.full(batch, seq), I32), In(h0)]
    return ins


@pytest.mark.parametrize("op", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_recurrent(op: str, direction: str) -> None:
    ndir = 2 if direction == "bidirectional" else 1
    n_out = 3 if op == "LSTM" else 2
    attrs = {"hidden_size": 5, "direction": direction}
    for opset in (7, 14, 22):
        verify(op, _rnn_inputs(op, 4, 3, 2, 5, ndir, extras=opset == 14), attrs, n_out, opset)
    verify(op, _rnn_inputs(op, 4, 3, 2, 5, ndir), attrs, 1, 22)


@pytest.mark.parametrize("op", ["RNN", "GRU", "LSTM"])
def test_recurrent_layout_1_and_implicit_hidden_size_reference(op: str) -> None:
    # onnxruntime refuses layout 1 and a missing hidden_size; the reference evaluator runs both.
    n_out = 3 if op == "LSTM" else 2
    ins = _rnn_inputs(op, 4, 3, 2, 5, 2, layout=1, extras=True)
    out = verify(op, ins, {"layout": 1, "direction": "bidirectional"}, n_out, 22, runtime="ref")
    assert out[0].shape == (3, 4, 2, 5)
    verify(op, _rnn_inputs(op, 4, 3, 2, 5, 1), {}, n_out, 7, runtime="ref")


# -- data-dependent -------------------------------------------------------------------------------


def test_nonzero() -> None:
    verify("NonZero", [In([3, 4], I64)], exact=False, opset=13)
    out = verify("NonZero", [const([[1, 0, 2], [0, 0, 3]])], opset=9)
    assert out[0].shape == (2, 3)
    verify("NonZero", [In([0, 3])], opset=13)


def test_unique() -> None:
    data = const([[1, 0, 0], [1, 0, 0], [2, 3, 4], [0, 1, 0]], F32)
    for attrs in ({}, {"axis": 0}, {"axis": -1}, {"axis": 0, "sorted": 0}):
        verify("Unique", [In([4, 3], I64)], attrs, 4, 11, exact=False)
        verify("Unique", [data], attrs, 4, 11)
    # Unsorted off axis 0: the reference evaluator builds Y along axis 0 (or fails on a 2-D input
    # without axis), so only the extents both readings share are claimed: no rank without axis.
    verify("Unique", [In([4, 3], I64)], {"sorted": 0}, 4, 11, exact=False, runtime="ort", rank=False)
    verify("Unique", [data], {"sorted": 0}, 4, 11, runtime="ort", rank=False)
    verify("Unique", [data], {"axis": 1, "sorted": 0}, 4, 11, exact=False)
    verify("Unique", [const([3, 1, 3, 2, 1])], {"sorted": 0}, 4, 11)
    verify("Unique", [const([3, 1, 3, 2, 1])], {}, 4, 11)
    verify("Unique", [Fed(strings("b", "a", "b", "c"))], {}, 4, 11, exact=False)
    verify("Unique", [const(np.array(["b", "a", "b"], dtype=object), object)], {}, 4, 11)
    verify("Unique", [In([3, 1])], {"axis": 1}, 4, 11)
    verify("Unique", [In([0, 3])], {"axis": 0}, 4, 11)


def test_compress() -> None:
    cond = np.array([True, False, True])
    verify("Compress", [In([3, 4]), Fed(cond)], {"axis": 0}, exact=False, opset=11)
    for attrs in ({}, {"axis": 0}, {"axis": -1}):
        verify("Compress", [In([3, 4]), const(cond, bool)], attrs, opset=11)
    # A condition longer than the axis: onnxruntime drops what lies past the end.
    verify("Compress", [In([2, 4]), const([True, False, True, True], bool)], {"axis": 0}, opset=11, runtime="ort")
    verify("Compress", [const([[1, 2], [3, 4]]), const([False, True, True], bool)], {}, opset=9)


def test_non_max_suppression() -> None:
    boxes = np.array([[[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, 5, 1, 6], [0, 10, 1, 11]]], F32)
    scores = np.array([[[0.9, 0.75, 0.6, 0.95]]], F32)
    # The reference evaluator needs every optional input.
    verify("NonMaxSuppression", [Fed(boxes), Fed(scores)], opset=11, runtime="ort")
    verify("NonMaxSuppression", [Fed(boxes), Fed(scores), const([0])], opset=10, runtime="ort")
    verify("NonMaxSuppression", [Fed(boxes), Fed(scores), const([3]), const([0.5], F32)], opset=11, exact=False)


# -- random ---------------------------------------------------------------------------------------


def test_random() -> None:
    # onnxruntime has no kernels of the opset-22 versions; the reference evaluator no Multinomial.
    for opset, rt in ((1, "both"), (22, "ref")):
        verify("RandomNormal", [], {"shape": [2, 3]}, opset=opset, runtime=rt)
        verify("RandomUniform", [], {"shape": [4], "dtype": TensorProto.DOUBLE}, opset=opset, runtime=rt)
        verify("RandomNormalLike", [In([2, 3])], {}, opset=opset, runtime=rt)
        verify("RandomUniformLike", [In([2, 3], np.float64)], {"dtype": TensorProto.FLOAT}, opset=opset, runtime=rt)
    verify("Multinomial", [In([2, 5])], {"sample_size": 3}, opset=7, runtime="ort")
    verify("Multinomial", [In([2, 5])], {"dtype": TensorProto.INT64}, opset=7, runtime="ort")
    for opset, rt in ((15, "both"), (22, "ref")):
        verify("Bernoulli", [Fed(np.full((3, 2), 0.5))], opset=opset, runtime=rt)
        verify("Bernoulli", [Fed(np.full((3, 2), 0.5, F32))], {"dtype": TensorProto.BOOL}, opset=opset, runtime=rt)


# -- indexing -------------------------------------------------------------------------------------


def test_gather_elements() -> None:
    idx = np.array([[0, 2], [1, -1], [2, 0]])
    verify("GatherElements", [In([3, 3]), const(idx)], {"axis": 1}, opset=11)
    # The reference evaluator wants the indices as large as the data off the axis.
    verify("GatherElements", [In([4, 2]), Fed(idx)], {"axis": 0}, opset=13, runtime="ort")
    data = const([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    verify("GatherElements", [data, const(idx)], {"axis": 1}, opset=13)
    verify("GatherElements", [data, const(idx)], {"axis": -1}, opset=13, runtime="ort")


def test_scatters() -> None:
    idx, upd = np.array([[1, 0], [-1, 2]]), np.array([[5, 6], [7, 8]], I64)
    data = np.arange(12, dtype=I64).reshape(3, 4)
    verify("Scatter", [In([3, 4], I64), const(idx), Fed(upd)], {"axis": 1}, opset=9, runtime="ort")
    verify("ScatterElements", [In([3, 4], I64), const(idx), Fed(upd)], {"axis": 1}, opset=11)
    for red, opset in (("none", 13), ("add", 16), ("mul", 16), ("max", 18), ("min", 18)):
        attrs = {"axis": 0, "reduction": red} if opset >= 16 else {"axis": 0}
        verify("ScatterElements", [const(data), const(idx), const(upd)], attrs, opset=opset)
        nd_attrs = {"reduction": red} if opset >= 16 else {}
        verify("ScatterND", [const(data), const([[1], [0]]), const(np.ones((2, 4), I64))], nd_attrs, opset=opset)
        verify("ScatterND", [In([3, 4], I64), const([[1, 2], [0, 0]]), const([9, 8])], nd_attrs, opset=opset)
    assert known_of("ScatterElements", [const(data), const([[0, 0]]), const([[1, 2]])], {"axis": 1})[0] is None


def test_one_hot() -> None:
    values = const([0.0, 1.0], F32)
    for opset in (9, 11):
        verify("OneHot", [const([[1, 2], [0, 4]]), const(5), values], {}, opset=opset)
        verify("OneHot", [In([2, 3], I64), const(4.0, F32), values], {"axis": 0}, opset=opset)
        verify("OneHot", [In([2, 3], I64), const(3), values], {"axis": -2}, opset=opset)
        # The reference evaluator takes no 1-element depth.
        verify("OneHot", [In([2, 3], I64), const([3]), values], {"axis": -2}, opset=opset, runtime="ort")
    verify("OneHot", [In([2], I64), Fed(np.array(3, I64)), values], {"axis": 1}, opset=11, exact=False)


def test_reverse_sequence() -> None:
    verify("ReverseSequence", [In([4, 3, 2]), const([4, 1, 2])], {}, opset=10)
    verify("ReverseSequence", [In([3, 4]), const([4, 1, 2])], {"batch_axis": 0, "time_axis": 1}, opset=10)


# -- scans, EyeLike, Det, TfIdfVectorizer ---------------------------------------------------------


@pytest.mark.parametrize("op,opset", [("CumSum", 11), ("CumSum", 14), ("CumProd", 26)])
def test_cumulative(op: str, opset: int) -> None:
    x = np.array([[1, 2, 3], [4, 5, 6]], I64)
    for attrs in ({}, {"exclusive": 1}, {"reverse": 1}, {"exclusive": 1, "reverse": 1}):
        verify(op, [In([2, 3]), const(1)], attrs, opset=opset)
        verify(op, [const(x), const(-1)], attrs, opset=opset)
        verify(op, [const(x.astype(F32)), const(0, I32)], attrs, opset=opset)


def test_eye_like_and_det() -> None:
    for opset in (9, 22):
        verify("EyeLike", [In([3, 4], I32)], {}, opset=opset)
        verify("EyeLike", [In([3, 2])], {"k": 1, "dtype": TensorProto.INT64}, opset=opset)
        verify("EyeLike", [In([2, 3], I64)], {"k": -1, "dtype": TensorProto.DOUBLE}, opset=opset)
    for opset in (11, 22):
        verify("Det", [In([2, 3, 3])], opset=opset)
        verify("Det", [In([4, 4])], opset=opset)


def test_tfidf() -> None:
    attrs = {
        "mode": "TF",
        "ngram_indexes": [0, 1, 2, 3, 4, 5, 6],
        "ngram_counts": [0, 4],
        "max_skip_count": 0,
        "min_gram_length": 2,
        "max_gram_length": 2,
        "pool_int64s": [2, 3, 5, 4, 5, 6, 7, 8, 6, 7],
    }
    verify("TfIdfVectorizer", [In([12], I32)], attrs, opset=9)
    verify("TfIdfVectorizer", [In([2, 6], I64)], attrs, opset=9)


# -- strings --------------------------------------------------------------------------------------


def test_string_concat_and_regex() -> None:
    verify("StringConcat", [Fed(strings(["a"], ["b"])), Fed(strings("x", "y", "z"))], opset=20)
    verify("StringConcat", [const(strings("a", "bc"), object), const(strings("!"), object)], opset=20)
    verify("RegexFullMatch", [Fed(strings(["ab", "b"], ["aab", ""]))], {"pattern": "a*b"}, opset=20)


def test_string_split() -> None:
    xs = strings(["a,b,,c", ""], [" x  y ", ",,"], ["   ", "p\tq"])
    for attrs in ({}, {"delimiter": ","}, {"delimiter": ",", "maxsplit": 1}, {"maxsplit": 0}):
        verify("StringSplit", [Fed(xs)], attrs, 2, 20, exact=False)
        verify("StringSplit", [const(xs, object)], attrs, 2, 20, exact=False)
        verify("StringSplit", [const(xs, object)], attrs, 2, 20, exact=False, runtime="ref")
    out = verify("StringSplit", [const(strings("a b", "c"), object)], {}, 2, 20)
    assert out[0].shape == (2, 2)
    verify("StringSplit", [Fed(np.array([], dtype=object))], {}, 2, 20)


def test_string_normalizer() -> None:
    # onnxruntime needs the en_US.UTF-8 locale for case folding; case-sensitive NONE runs anywhere.
    xs = strings("monday", "tuesday", "Monday")
    attrs = {"stopwords": ["monday"], "is_case_sensitive": 1}
    verify("StringNormalizer", [Fed(xs)], attrs, opset=10, exact=False)
    verify("StringNormalizer", [const(xs, object)], attrs, opset=10)
    verify("StringNormalizer", [const(strings(["monday", "monday"]), object)], attrs, opset=10)
    verify("StringNormalizer", [Fed(strings("", "a"))], {"is_case_sensitive": 1}, opset=10, exact=False)
    verify("StringNormalizer", [const(strings("", "a"), object)], {"is_case_sensitive": 1}, opset=10, exact=False)
    verify("StringNormalizer", [const(strings("a b", "a"), object)], attrs, opset=10, exact=False)
    upper = {"stopwords": ["MONDAY"], "case_change_action": "UPPER"}
    for x in (xs, xs.reshape(1, 3)):
        verify("StringNormalizer", [const(x, object)], upper, opset=10, runtime="ref")
        verify("StringNormalizer", [const(x, object)], {"stopwords": ["monday"]}, opset=10, runtime="ref", exact=False)


def test_a_sparse_initializer_is_a_dense_tensor_as_onnxruntime_runs_it() -> None:
    import onnxruntime as ort
    from onnx import helper, numpy_helper

    values = numpy_helper.from_array(np.array([5.0, 7.0], F32), "s")
    indices = numpy_helper.from_array(np.array([1, 4], I64), "i")
    sparse = helper.make_sparse_tensor(values, indices, [2, 3])
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "s"], ["y"]), helper.make_node("Identity", ["s"], ["z"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 1])],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("y", "z")],
        sparse_initializer=[sparse],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    result = infer.infer_model(model)
    assert not result.errors
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    y, z = session.run(None, {"x": np.zeros((2, 1), F32)})
    assert result.type_of("z") == T.TensorType(TensorProto.FLOAT, z.shape)
    assert str(result.type_of("y")) == "float[2,3]" and y.shape == (2, 3)
