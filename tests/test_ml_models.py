"""ai.onnx.ml models (tests/models/ml): every claim checked against onnxruntime at two sizes.

The models are scikit-learn estimators converted by skl2onnx, plus a few built by hand for the
operators skl2onnx does not emit (tests/models/ml/make_ml_models.py makes them all; the tests
need neither scikit-learn nor skl2onnx). Every node output is exposed and compared with what
onnxruntime computes at ``N = 3`` and ``N = 7``. ``python -m tests.test_ml_models`` prints the
per-model numbers.

The end of the file checks the map and sequence types that the invocation examples beside the
rules cannot spell (type strings have no ``map``/``seq`` form).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto

import infer
from infer.core import types as T
from tests.support import runtime as R

ML_MODELS = Path(__file__).resolve().parent / "models" / "ml"
ENTRIES: list[dict[str, Any]] = json.loads((ML_MODELS / "manifest.json").read_text())["models"]

# The exact values each model must keep at least (what the engine achieves today); a value is exact
# when every dim is an integer or an expression over the inputs' variables and right at both sizes.
# Models not listed are exact throughout. The two below are exact where the model entails it:
# CastMap's DENSE output is as long as the input map, which its type does not say; DictVectorizer's
# rank differs between its definition ([V]) and onnxruntime ([1, V]).
MIN_EXACT: dict[str, int] = {"hand_cast_map.onnx": 2, "dict_vectorizer.onnx": 0}

# Diagnostics that are not the model's fault: infer/check/validate.py compares the schema's spelling of
# map types (``map(string, float)``) with ``map(string,tensor(float))`` and reports a mismatch.

_NP = {"float32": np.float32, "float64": np.float64, "int64": np.int64, "int32": np.int32}


def feeds_for(entry: dict[str, Any], bindings: Mapping[str, int], run: int) -> dict[str, Any]:
    """Inputs for one run: tensors at ``bindings``; a map has 3 keys in run 0 and all in run 1."""
    rng = np.random.default_rng(run)
    out: dict[str, Any] = {}
    for inp in entry["inputs"]:
        if inp["kind"] == "map":
            keys = inp["keys"] if run else inp["keys"][:3]
            out[inp["name"]] = {k: float(rng.standard_normal()) for k in keys}
            continue
        shape = [bindings[d] if isinstance(d, str) else d for d in inp["dims"]]
        fill = inp["fill"]
        if fill["kind"] == "choice":
            out[inp["name"]] = rng.choice(fill["values"], size=shape).astype(object)
        elif fill["kind"] == "randint":
            out[inp["name"]] = rng.integers(fill["low"], fill["high"], size=shape).astype(_NP[inp["elem_type"]])
        elif fill["kind"] == "uniform":
            out[inp["name"]] = rng.uniform(fill["low"], fill["high"], size=shape).astype(_NP[inp["elem_type"]])
        else:
            out[inp["name"]] = rng.standard_normal(shape).astype(_NP[inp["elem_type"]])
    return out


_ORT_ELEM = {"tensor(float)": np.float32, "tensor(double)": np.float64, "tensor(int64)": np.int64}


def _typed_map_values(value: Any, ort_type: str) -> Any:
    """onnxruntime hands map values to Python as Python numbers, losing their element type; give
    them back the type the session declares (``seq(map(int64,tensor(float)))`` -> float32)."""
    inner = ort_type.rsplit(",", 1)[-1].rstrip(")") + ")"
    cast = _ORT_ELEM.get(inner)
    if cast is None:
        return value
    if isinstance(value, dict):
        return {k: cast(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_typed_map_values(v, ort_type) for v in value]
    return value


def run_typed(model: onnx.ModelProto, feeds: Mapping[str, Any]) -> dict[str, Any]:
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 3
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    outs = sess.get_outputs()
    values = sess.run([o.name for o in outs], dict(feeds))
    return {o.name: _typed_map_values(v, o.type) if "map(" in o.type else v for o, v in zip(outs, values)}


def check_entry(entry: dict[str, Any]) -> tuple[infer.InferenceResult, R.Check]:
    model = onnx.load(str(ML_MODELS / entry["file"]))
    result = infer.infer_model(model)
    exposed = R.expose_all(model)
    runs = [(b, run_typed(exposed, feeds_for(entry, b, k))) for k, b in enumerate(entry["bindings"])]
    return result, R.check(result, runs)


@pytest.fixture(scope="module", params=ENTRIES, ids=[e["file"] for e in ENTRIES])
def checked(request):
    entry = request.param
    result, c = check_entry(entry)
    return entry, result, c


def test_no_claim_is_contradicted_by_onnxruntime(checked):
    _, _, c = checked
    assert not c.wrong, "\n".join(c.wrong[:20])


def test_every_value_is_typed(checked):
    _, result, _ = checked
    s = result.summary()
    assert s.counts.get("untyped", 0) == 0, s


def test_exact_values_do_not_regress(checked):
    entry, _, c = checked
    floor = MIN_EXACT.get(entry["file"], c.values)
    assert c.exact >= floor, f"{entry['file']}: {c.exact}/{c.values} exact; not exact: {c.not_exact[:10]}"


def test_valid_models_raise_no_errors(checked):
    _, result, _ = checked
    assert not result.errors, result.errors[:5]


def test_annotated_model_passes_the_checker_and_runs(checked):
    entry, result, _ = checked
    annotated = result.model
    onnx.checker.check_model(annotated)
    b = entry["bindings"][0]
    run_typed(annotated, feeds_for(entry, b, 0))


def test_every_ml_operator_appears_in_the_models():
    ops = {k.split("::")[1] for e in ENTRIES for k in e["op_counts"] if k.startswith("ai.onnx.ml::")}
    want = {
        "ArrayFeatureExtractor",
        "Binarizer",
        "CastMap",
        "CategoryMapper",
        "DictVectorizer",
        "FeatureVectorizer",
        "Imputer",
        "LabelEncoder",
        "LinearClassifier",
        "LinearRegressor",
        "Normalizer",
        "OneHotEncoder",
        "SVMClassifier",
        "SVMRegressor",
        "Scaler",
        "TreeEnsemble",
        "TreeEnsembleClassifier",
        "TreeEnsembleRegressor",
        "ZipMap",
    }
    assert want <= ops, want - ops


# -- map and sequence types (no type-string form for the invocation examples) ----------------------

ML = "ai.onnx.ml"
FLOAT_SCALAR = T.TensorType(TensorProto.FLOAT, ())


def _node(op: str, inputs: list[Any], attrs: dict[str, Any], opset: int = 3) -> infer.NodeInference:
    return infer.infer_node(op, inputs, attrs, domain=ML, opset=opset)


@pytest.mark.parametrize(
    ("attrs", "key"),
    [
        ({"classlabels_int64s": [0, 1, 2]}, TensorProto.INT64),
        ({"classlabels_strings": ["a", "b", "c"]}, TensorProto.STRING),
    ],
)
@pytest.mark.parametrize("x", ["float[N,3]", "float[3]"])
def test_zipmap_gives_a_sequence_of_maps(attrs, key, x):
    out = _node("ZipMap", [x], attrs)
    assert out.types == [T.SequenceType(T.MapType(key, FLOAT_SCALAR))]
    assert not out.diagnostics


@pytest.mark.parametrize(
    ("x", "attrs"),
    [
        ("float[N,4]", {"classlabels_int64s": [0, 1, 2]}),
        ("float[2,N,3]", {"classlabels_int64s": [0, 1, 2]}),
        ("float[N,3]", {}),
        ("float[N,3]", {"classlabels_int64s": [0, 1, 2], "classlabels_strings": ["a", "b", "c"]}),
    ],
)
def test_zipmap_rejects_malformed_nodes(x, attrs):
    out = _node("ZipMap", [x], attrs)
    assert {d.code for d in out.diagnostics} & {"shape-mismatch", "bad-attribute"}


MAP_FLOAT = T.MapType(TensorProto.INT64, T.TensorType(TensorProto.FLOAT))


@pytest.mark.parametrize(
    ("attrs", "want"),
    [
        ({}, (TensorProto.FLOAT, False)),
        ({"cast_to": "TO_STRING"}, (TensorProto.STRING, False)),
        ({"cast_to": "TO_INT64", "map_form": "SPARSE", "max_map": 9}, (TensorProto.INT64, 9)),
    ],
)
def test_cast_map(attrs, want):
    out = _node("CastMap", [MAP_FLOAT], attrs, opset=1)
    (t,) = out.types
    assert isinstance(t, T.TensorType) and t.elem == want[0] and t.rank == 2 and t.shape[0] == 1
    if want[1]:
        assert t.shape[1] == want[1]
    else:
        assert out.dims.is_fresh(t.shape[1])


def test_cast_map_rejects_an_unknown_form():
    out = _node("CastMap", [MAP_FLOAT], {"map_form": "PACKED"}, opset=1)
    assert "bad-attribute" in {d.code for d in out.diagnostics}


@pytest.mark.parametrize(
    ("value", "vocab"),
    [
        (TensorProto.FLOAT, {"int64_vocabulary": [1, 2, 3]}),
        (TensorProto.DOUBLE, {"int64_vocabulary": [1]}),
        (TensorProto.INT64, {"string_vocabulary": ["a", "b"]}),
    ],
)
def test_dict_vectorizer_keeps_the_value_type_and_leaves_the_rank(value, vocab):
    key = TensorProto.INT64 if "int64_vocabulary" in vocab else TensorProto.STRING
    out = _node("DictVectorizer", [T.MapType(key, T.TensorType(value))], vocab, opset=1)
    assert out.types == [T.TensorType(value, None)]


# -- one node at a time, every input dim symbolic, against onnxruntime ------------------------------

_ELEM = {"float": (TensorProto.FLOAT, np.float32), "double": (TensorProto.DOUBLE, np.float64),
         "int64": (TensorProto.INT64, np.int64), "int32": (TensorProto.INT32, np.int32),
         "string": (TensorProto.STRING, object)}  # fmt: skip


def _one_node(
    op: str, inputs: list[tuple[str, tuple[int, ...]]], attrs: dict[str, Any], n_out: int, ml_opset: int
) -> tuple[onnx.ModelProto, dict[str, int], dict[str, Any]]:
    """A one-node model whose every input dim is a dim_param, its bindings and random feeds."""
    rng = np.random.default_rng(0)
    graph_inputs, bindings, feeds = [], {}, {}
    for i, (elem, shape) in enumerate(inputs):
        dims = []
        for j, d in enumerate(shape):
            bindings[f"d{i}_{j}"] = d
            dims.append(f"d{i}_{j}")
        code, dtype = _ELEM[elem]
        graph_inputs.append(onnx.helper.make_tensor_value_info(f"x{i}", code, dims))
        if dtype is object:
            feeds[f"x{i}"] = rng.choice(["a", "b", "c"], size=shape).astype(object)
        elif np.issubdtype(dtype, np.integer):
            feeds[f"x{i}"] = rng.integers(0, 3, size=shape).astype(dtype)
        else:
            feeds[f"x{i}"] = rng.standard_normal(shape).astype(dtype)
    outs = [f"y{k}" for k in range(n_out)]
    node = onnx.helper.make_node(op, [f"x{i}" for i in range(len(inputs))], outs, domain=ML, **attrs)
    graph = onnx.helper.make_graph(node and [node], "g", graph_inputs, [onnx.ValueInfoProto(name=o) for o in outs])
    imports = [onnx.helper.make_opsetid("", 17), onnx.helper.make_opsetid(ML, ml_opset)]
    return onnx.helper.make_model(graph, opset_imports=imports, ir_version=9), bindings, feeds


_TREE = {"nodes_treeids": [0, 0, 0], "nodes_nodeids": [0, 1, 2], "nodes_featureids": [0, 1, 0],
         "nodes_values": [0.0, 0.0, 0.0], "nodes_modes": ["BRANCH_LEQ", "LEAF", "LEAF"],
         "nodes_truenodeids": [1, 0, 0], "nodes_falsenodeids": [2, 0, 0]}  # fmt: skip
_TEC = {**_TREE, "class_treeids": [0, 0], "class_nodeids": [1, 2], "class_weights": [1.0, 0.5]}
_TER = {**_TREE, "target_treeids": [0, 0], "target_nodeids": [1, 2], "target_weights": [1.0, 2.0]}


def _svc(k: int, prob: bool, post: str = "NONE", c: int = 3) -> dict[str, Any]:
    rng = np.random.default_rng(k)
    a = {
        "kernel_type": "RBF",
        "kernel_params": [0.3, 0.0, 3.0],
        "vectors_per_class": [2] * k,
        "support_vectors": rng.standard_normal(2 * k * c).tolist(),
        "coefficients": rng.standard_normal((k - 1) * 2 * k).tolist(),
        "rho": rng.standard_normal(k * (k - 1) // 2).tolist(),
        "post_transform": post,
        "classlabels_ints": list(range(k)),
    }
    if prob:
        a["prob_a"], a["prob_b"] = [-1.0] * (k * (k - 1) // 2), [0.1] * (k * (k - 1) // 2)
    return a


def _svr(c: int = 3) -> dict[str, Any]:
    rng = np.random.default_rng(c)
    return {
        "kernel_type": "RBF",
        "kernel_params": [0.3, 0.0, 3.0],
        "n_supports": 4,
        "coefficients": [1.0] * 4,
        "support_vectors": rng.standard_normal(4 * c).tolist(),
        "rho": [0.1],
    }


def _svm_linear(k: int, c: int = 3) -> dict[str, Any]:
    return {
        "kernel_type": "LINEAR",
        "kernel_params": [0.0, 0.0, 0.0],
        "coefficients": [0.1] * (k * c),
        "rho": [0.2] * k,
        "classlabels_strings": [f"c{i}" for i in range(k)],
    }


def _lc(k: int, labels: int, c: int = 4, strings: bool = False) -> dict[str, Any]:
    key = "classlabels_strings" if strings else "classlabels_ints"
    names = [f"c{i}" for i in range(labels)] if strings else list(range(labels))
    return {"coefficients": [0.1] * (k * c), "intercepts": [0.5] * k, key: names, "post_transform": "SOFTMAX"}


NODE_CASES = [
    ("ArrayFeatureExtractor", [("float", (5, 4)), ("int64", (2,))], {}, 1, 1),
    ("ArrayFeatureExtractor", [("string", (4,)), ("int64", (2, 2))], {}, 1, 1),
    ("ArrayFeatureExtractor", [("int64", (3, 5, 4)), ("int64", (1, 3))], {}, 1, 1),
    ("ArrayFeatureExtractor", [("float", (5, 4)), ("int64", ())], {}, 1, 1),
    ("Binarizer", [("float", (3, 5, 4))], {"threshold": 0.5}, 1, 1),
    ("Imputer", [("int64", (5, 2))], {"imputed_value_int64s": [9], "replaced_value_int64": 0}, 1, 1),
    ("Normalizer", [("int32", (5, 4))], {"norm": "L1"}, 1, 1),
    ("Normalizer", [("double", (4,))], {"norm": "MAX"}, 1, 1),
    ("Scaler", [("int64", (3, 5, 4))], {"scale": [2.0], "offset": [1.0]}, 1, 1),
    ("OneHotEncoder", [("int64", (2, 3, 4))], {"cats_int64s": [0, 1, 2]}, 1, 1),
    ("OneHotEncoder", [("string", (5,))], {"cats_strings": ["a", "b"]}, 1, 1),
    ("OneHotEncoder", [("float", (5, 1))], {"cats_int64s": [0, 1, 2, 3]}, 1, 1),
    ("FeatureVectorizer", [("float", (5, 2)), ("float", (5, 3))], {"inputdimensions": [1, 4]}, 1, 1),
    ("FeatureVectorizer", [("int64", (5, 2, 3))], {"inputdimensions": [6]}, 1, 1),
    ("FeatureVectorizer", [("double", (4,)), ("double", (3,))], {"inputdimensions": [4, 3]}, 1, 1),
    ("CategoryMapper", [("string", (2, 3))], {"cats_strings": ["a", "b"], "cats_int64s": [1, 2]}, 1, 1),
    ("CategoryMapper", [("int64", (5,))], {"cats_strings": ["a", "b"], "cats_int64s": [1, 2]}, 1, 1),
    ("LabelEncoder", [("string", (1, 3))], {"classes_strings": ["a", "b"]}, 1, 1),
    ("LabelEncoder", [("int64", (3,))], {"classes_strings": ["a", "b"]}, 1, 1),
    ("LabelEncoder", [("string", (4,))], {"keys_strings": ["a", "b"], "values_floats": [1.0, 2.0]}, 1, 2),
    ("LabelEncoder", [("float", (2, 2))], {"keys_floats": [1.0], "values_strings": ["x"]}, 1, 2),
    ("LabelEncoder", [("int64", (4,))], {"keys_int64s": [1, 2], "values_int64s": [3, 4]}, 1, 2),
    ("LinearClassifier", [("float", (5, 4))], _lc(3, 3), 2, 1),
    ("LinearClassifier", [("float", (5, 4))], _lc(1, 2, strings=True), 2, 1),
    ("LinearClassifier", [("int64", (4,))], _lc(2, 2), 2, 1),
    ("LinearClassifier", [("double", (5, 4))], _lc(2, 4), 2, 1),
    ("LinearRegressor", [("float", (5, 4))], {"coefficients": [0.1] * 12, "intercepts": [0.5] * 3, "targets": 3}, 1, 1),
    ("LinearRegressor", [("float", (4,))], {"coefficients": [0.1] * 8, "targets": 2}, 1, 1),
    ("SVMClassifier", [("float", (5, 3))], _svc(2, False), 2, 1),
    ("SVMClassifier", [("float", (5, 3))], _svc(2, False, "PROBIT"), 2, 1),
    ("SVMClassifier", [("float", (5, 3))], _svc(2, True), 2, 1),
    ("SVMClassifier", [("float", (5, 3))], _svc(3, False, "LOGISTIC"), 2, 1),
    ("SVMClassifier", [("float", (3,))], _svc(4, False), 2, 1),
    ("SVMClassifier", [("double", (5, 3))], _svc(4, True, "SOFTMAX"), 2, 1),
    ("SVMClassifier", [("float", (5, 3))], _svm_linear(3), 2, 1),
    ("SVMClassifier", [("int64", (5, 3))], _svm_linear(1), 2, 1),
    ("SVMRegressor", [("float", (5, 3))], _svr(), 1, 1),
    ("SVMRegressor", [("float", (3,))], _svr(), 1, 1),
    ("SVMRegressor", [("float", (5, 3))], {**_svr(), "one_class": 1}, 1, 1),
    ("TreeEnsembleClassifier", [("float", (5, 3))], {**_TEC, "class_ids": [0, 2], "classlabels_int64s": [0, 1, 2]},
     2, 1),
    ("TreeEnsembleClassifier", [("float", (5, 3))], {**_TEC, "class_ids": [1, 1], "classlabels_strings": ["a", "b"]},
     2, 3),
    ("TreeEnsembleClassifier", [("double", (1, 3))], {**_TEC, "class_ids": [0, 0], "classlabels_int64s": [7]}, 2, 3),
    ("TreeEnsembleRegressor", [("float", (5, 3))], {**_TER, "target_ids": [0, 2], "n_targets": 3}, 1, 1),
    ("TreeEnsembleRegressor", [("float", (3,))], {**_TER, "target_ids": [0, 0], "n_targets": 1}, 1, 1),
    ("TreeEnsembleRegressor", [("double", (5, 3))], {**_TER, "target_ids": [0, 1], "n_targets": 2}, 1, 3),
    ("ZipMap", [("float", (5, 2))], {"classlabels_int64s": [4, 7]}, 1, 1),
    ("ZipMap", [("float", (3,))], {"classlabels_strings": ["a", "b", "c"]}, 1, 1),
]  # fmt: skip


@pytest.mark.parametrize("case", NODE_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(NODE_CASES)])
def test_one_node_against_onnxruntime(case):
    op, inputs, attrs, n_out, ml_opset = case
    model, bindings, feeds = _one_node(op, inputs, attrs, n_out, ml_opset)
    result = infer.infer_model(model)
    assert not result.errors, result.errors[:3]
    observed = run_typed(model, feeds)
    c = R.check(result, [(bindings, observed)])
    assert not c.wrong, c.wrong
    for k in range(n_out):
        assert not isinstance(result.type_of(f"y{k}"), T.UnknownType), f"y{k} untyped"


def _report() -> None:
    total_values = total_exact = total_wrong = 0
    print(f"{'model':48} {'values':>6} {'exact':>6} {'wrong':>5}  not exact")
    for entry in ENTRIES:
        result, c = check_entry(entry)
        total_values, total_exact, total_wrong = (
            total_values + c.values,
            total_exact + c.exact,
            total_wrong + len(c.wrong),
        )
        print(f"{entry['file']:48} {c.values:6} {c.exact:6} {len(c.wrong):5}  {'; '.join(c.not_exact)[:160]}")
        for w in c.wrong[:5]:
            print("    WRONG", w)
        for d in result.diagnostics:
            if d.severity != "info":
                print("    ", d.severity, d.code, d.message[:160])
    print(f"{'total':48} {total_values:6} {total_exact:6} {total_wrong:5}  ({total_exact / total_values:.1%} exact)")


if __name__ == "__main__":
    _report()
