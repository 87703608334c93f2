"""Make the ai.onnx.ml test models in this folder, and manifest.json.

Most models are real scikit-learn estimators and pipelines converted by skl2onnx; a few are
built by hand with onnx.helper for the ml operators skl2onnx does not emit (CastMap,
CategoryMapper, FeatureVectorizer, LabelEncoder 4, TreeEnsemble 5, ...). Every tensor input has
a symbolic batch dimension ``N``. Data are iris and small seeded random arrays; nothing is
downloaded. Two runs give byte-identical files.

Needs scikit-learn and skl2onnx (only to make the files; the tests read the committed files):

    python tests/models/ml/make_ml_models.py
"""

from __future__ import annotations

import hashlib
import json
import warnings
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper

HERE = Path(__file__).resolve().parent
SEED = 0
BINDINGS = [{"N": 3}, {"N": 7}]
ML = "ai.onnx.ml"


# -- helpers ------------------------------------------------------------------------------------------


def _iris() -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_iris

    x, y = load_iris(return_X_y=True)
    return x.astype(np.float32), y


def _convert(est: Any, inputs: list[tuple[str, Any]], ml_opset: int = 3, options: Any = None) -> onnx.ModelProto:
    from skl2onnx import convert_sklearn

    return convert_sklearn(
        est, initial_types=inputs, target_opset={"": 17, ML: ml_opset}, options=options, naming="", verbose=0
    )


def _float(n_features: int) -> list[tuple[str, Any]]:
    from skl2onnx.common.data_types import FloatTensorType

    return [("X", FloatTensorType([None, n_features]))]


def _tensor_input(name: str, elem: str, dims: list[Any], fill: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "kind": "tensor", "elem_type": elem, "dims": dims, "fill": fill}


IRIS = {"kind": "uniform", "low": 0.0, "high": 8.0}  # the range of the iris features
RANDN = {"kind": "randn"}


def _tidy(m: onnx.ModelProto, name: str) -> onnx.ModelProto:
    """Inputs' unnamed dims named ``N`` (skl2onnx leaves the batch unnamed); deterministic metadata;
    duplicate opset imports (skl2onnx repeats '') merged; the graph named after the file (skl2onnx
    names it with a random uuid)."""
    m.graph.name = name
    for inp in m.graph.input:
        if inp.type.HasField("tensor_type"):
            for d in inp.type.tensor_type.shape.dim:
                if not d.HasField("dim_value") and not d.dim_param:
                    d.dim_param = "N"
    seen: dict[str, int] = {}
    for imp in m.opset_import:
        seen[imp.domain] = max(seen.get(imp.domain, 0), imp.version)
    del m.opset_import[:]
    for domain, version in sorted(seen.items()):
        m.opset_import.append(helper.make_opsetid(domain, version))
    m.producer_name, m.producer_version, m.doc_string = "onnx-infer tests/models/ml", "1", ""
    del m.metadata_props[:]
    return m


def _hand_model(
    nodes: list[onnx.NodeProto],
    inputs: list[onnx.ValueInfoProto],
    outputs: dict[str, Any],
    ml_opset: int,
    inits: list[onnx.TensorProto] = (),
) -> onnx.ModelProto:
    """A graph of ``nodes``; ``outputs`` maps each graph output to ``(element type, rank)`` (a tensor
    whose extents are left unnamed, as skl2onnx declares its outputs) or to a full ``TypeProto``."""
    outs = []
    for name, t in outputs.items():
        if not isinstance(t, onnx.TypeProto):
            t = helper.make_tensor_type_proto(t[0], [None] * t[1])
        outs.append(helper.make_value_info(name, t))
    graph = helper.make_graph(nodes, "hand", inputs, outs, initializer=list(inits))
    return helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(ML, ml_opset)], ir_version=9
    )


# -- scikit-learn models ---------------------------------------------------------------------------

Builder = Callable[[], tuple[onnx.ModelProto, list[dict[str, Any]], str]]
MODELS: dict[str, Builder] = {}


def model(name: str) -> Callable[[Builder], Builder]:
    def wrap(fn: Builder) -> Builder:
        MODELS[name] = fn
        return fn

    return wrap


def _iris_classifier(est: Any, labels: Any = None) -> tuple[onnx.ModelProto, list[dict[str, Any]]]:
    x, y = _iris()
    est.fit(x, y if labels is None else labels)
    return _convert(est, _float(4)), [_tensor_input("X", "float32", ["N", 4], IRIS)]


@model("logistic_regression")
def _logreg():
    from sklearn.linear_model import LogisticRegression

    m, ins = _iris_classifier(LogisticRegression(max_iter=500))
    return m, ins, "LogisticRegression, 3 classes, int labels, ZipMap"


@model("logistic_regression_binary_strings")
def _logreg_bin():
    from sklearn.linear_model import LogisticRegression

    _, y = _iris()
    m, ins = _iris_classifier(LogisticRegression(max_iter=500), np.where(y == 0, "setosa", "other"))
    return m, ins, "LogisticRegression, 2 classes, string labels (one intercept widened to 2 scores)"


@model("random_forest")
def _rf():
    from sklearn.ensemble import RandomForestClassifier

    m, ins = _iris_classifier(RandomForestClassifier(n_estimators=3, max_depth=3, random_state=SEED))
    return m, ins, "RandomForestClassifier, 3 trees, ZipMap"


@model("decision_tree_strings")
def _dt():
    from sklearn.tree import DecisionTreeClassifier

    _, y = _iris()
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    m, ins = _iris_classifier(DecisionTreeClassifier(max_depth=3, random_state=SEED), names)
    return m, ins, "DecisionTreeClassifier, string labels, ZipMap with string keys"


@model("svc_probability")
def _svc():
    from sklearn.svm import SVC

    m, ins = _iris_classifier(SVC(probability=True, random_state=SEED))
    return m, ins, "SVC(probability=True), RBF kernel, ZipMap"


@model("svc_decision_function")
def _svc_dec():
    from sklearn.svm import SVC

    m, ins = _iris_classifier(SVC(random_state=SEED))
    return m, ins, "SVC without probabilities: pairwise scores, ArrayFeatureExtractor voting"


@model("gradient_boosting")
def _gb():
    from sklearn.ensemble import GradientBoostingClassifier

    m, ins = _iris_classifier(GradientBoostingClassifier(n_estimators=4, max_depth=2, random_state=SEED))
    return m, ins, "GradientBoostingClassifier, 3 classes, ZipMap"


@model("gradient_boosting_binary")
def _gb_bin():
    from sklearn.ensemble import GradientBoostingClassifier

    _, y = _iris()
    m, ins = _iris_classifier(GradientBoostingClassifier(n_estimators=4, max_depth=2, random_state=SEED), y == 2)
    return m, ins, "GradientBoostingClassifier, binary (one class id, two labels)"


@model("kneighbors_classifier")
def _knn():
    from sklearn.neighbors import KNeighborsClassifier

    m, ins = _iris_classifier(KNeighborsClassifier(n_neighbors=3))
    return m, ins, "KNeighborsClassifier: Scan, TopK, ArrayFeatureExtractor, ZipMap"


@model("linear_svc")
def _linsvc():
    from sklearn.svm import LinearSVC

    m, ins = _iris_classifier(LinearSVC(random_state=SEED))
    return m, ins, "LinearSVC (LinearClassifier without ZipMap)"


@model("linear_regression_2_targets")
def _linreg():
    from sklearn.linear_model import LinearRegression

    x, _ = _iris()
    est = LinearRegression().fit(x[:, :2], x[:, 2:])
    return _convert(est, _float(2)), [_tensor_input("X", "float32", ["N", 2], RANDN)], "LinearRegression, 2 targets"


@model("svr")
def _svr():
    from sklearn.svm import SVR

    x, _ = _iris()
    est = SVR().fit(x[:, 1:], x[:, 0])
    return _convert(est, _float(3)), [_tensor_input("X", "float32", ["N", 3], RANDN)], "SVR, RBF kernel"


@model("random_forest_regressor")
def _rfr():
    from sklearn.ensemble import RandomForestRegressor

    x, _ = _iris()
    est = RandomForestRegressor(n_estimators=3, max_depth=3, random_state=SEED).fit(x[:, 1:], x[:, 0])
    m = _convert(est, _float(3))
    return m, [_tensor_input("X", "float32", ["N", 3], RANDN)], "RandomForestRegressor, 3 trees"


@model("one_class_svm")
def _ocsvm():
    from sklearn.svm import OneClassSVM

    x, _ = _iris()
    est = OneClassSVM(nu=0.2).fit(x)
    return _convert(est, _float(4)), [_tensor_input("X", "float32", ["N", 4], IRIS)], "OneClassSVM (SVMRegressor)"


@model("kmeans")
def _kmeans():
    from sklearn.cluster import KMeans

    x, _ = _iris()
    est = KMeans(n_clusters=3, n_init=1, random_state=SEED).fit(x)
    return _convert(est, _float(4)), [_tensor_input("X", "float32", ["N", 4], IRIS)], "KMeans, 3 clusters"


@model("kneighbors_regressor")
def _knnr():
    from sklearn.neighbors import KNeighborsRegressor

    x, _ = _iris()
    est = KNeighborsRegressor(n_neighbors=2).fit(x[:40, 1:], x[:40, 0])
    m = _convert(est, _float(3))
    return m, [_tensor_input("X", "float32", ["N", 3], RANDN)], "KNeighborsRegressor"


@model("pipeline_scaler_logistic")
def _pipe_std():
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    m, ins = _iris_classifier(make_pipeline(StandardScaler(), LogisticRegression(max_iter=500)))
    return m, ins, "StandardScaler (Scaler) then LogisticRegression"


@model("pipeline_impute_minmax_pca_forest")
def _pipe_pca():
    from sklearn.decomposition import PCA
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MinMaxScaler

    est = make_pipeline(
        SimpleImputer(),
        MinMaxScaler(),
        PCA(n_components=2, random_state=SEED),
        RandomForestClassifier(n_estimators=2, max_depth=2, random_state=SEED),
    )
    m, ins = _iris_classifier(est)
    return m, ins, "SimpleImputer (Imputer), MinMaxScaler, PCA, RandomForestClassifier"


@model("column_transformer_normalizer_binarizer")
def _ct():
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import Binarizer, Normalizer

    ct = ColumnTransformer([("norm", Normalizer(), [0, 1]), ("bin", Binarizer(threshold=1.5), [2, 3])])
    m, ins = _iris_classifier(make_pipeline(ct, LogisticRegression(max_iter=500)))
    return m, ins, "ColumnTransformer (ArrayFeatureExtractor): Normalizer, Binarizer; LogisticRegression"


@model("one_hot_encoder_strings")
def _ohe():
    from skl2onnx.common.data_types import StringTensorType
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    rng = np.random.default_rng(SEED)
    x = np.stack([rng.choice(["red", "green", "blue"], 60), rng.choice(["s", "m", "l", "xl"], 60)], axis=1)
    y = (x[:, 0] == "red").astype(np.int64) + (x[:, 1] == "xl")
    est = make_pipeline(OneHotEncoder(handle_unknown="ignore"), LogisticRegression(max_iter=500)).fit(x, y)
    m = _convert(est, [("X", StringTensorType([None, 2]))])
    fill = {"kind": "choice", "values": ["red", "green", "blue", "s", "m", "l", "xl"]}
    return m, [_tensor_input("X", "string", ["N", 2], fill)], "OneHotEncoder on strings, LogisticRegression"


@model("label_encoder")
def _le():
    from skl2onnx.common.data_types import StringTensorType
    from sklearn.preprocessing import LabelEncoder

    est = LabelEncoder().fit(["cat", "dog", "fish"])
    m = _convert(est, [("X", StringTensorType([None]))])
    fill = {"kind": "choice", "values": ["cat", "dog", "fish"]}
    return m, [_tensor_input("X", "string", ["N"], fill)], "LabelEncoder (ai.onnx.ml LabelEncoder 2)"


@model("dict_vectorizer")
def _dv():
    from skl2onnx.common.data_types import DictionaryType, FloatTensorType, StringTensorType
    from sklearn.feature_extraction import DictVectorizer

    est = DictVectorizer(sparse=False).fit([{"a": 1.0, "b": 2.0}, {"c": 3.0, "d": 1.0}])
    m = _convert(est, [("X", DictionaryType(StringTensorType([]), FloatTensorType([])))])
    inp = {"name": "X", "kind": "map", "key_type": "string", "value_type": "float32", "keys": ["a", "b", "c", "d"]}
    return m, [inp], "DictVectorizer over a map(string, float)"


# -- hand-built models for operators skl2onnx does not emit -----------------------------------------


def _vi(name: str, elem: int, dims: list[Any]) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, dims)


@model("hand_category_mapper_label_encoder_v4")
def _hand_cat():
    nodes = [
        helper.make_node(
            "CategoryMapper",
            ["X"],
            ["codes"],
            domain=ML,
            cats_strings=["a", "b", "c"],
            cats_int64s=[1, 2, 3],
            default_int64=0,
        ),
        helper.make_node(
            "CategoryMapper",
            ["codes"],
            ["names"],
            domain=ML,
            cats_strings=["a", "b", "c"],
            cats_int64s=[1, 2, 3],
            default_string="?",
        ),
        helper.make_node(
            "LabelEncoder",
            ["names"],
            ["weights"],
            domain=ML,
            keys_strings=["a", "b", "c"],
            values_tensor=helper.make_tensor("v", TensorProto.DOUBLE, [3], [0.5, 1.5, 2.5]),
            default_tensor=helper.make_tensor("d", TensorProto.DOUBLE, [1], [-1.0]),
        ),
        helper.make_node(
            "LabelEncoder", ["codes"], ["scores"], domain=ML, keys_int64s=[1, 2, 3], values_floats=[0.1, 0.2, 0.3]
        ),
        helper.make_node("OneHotEncoder", ["names"], ["onehot"], domain=ML, cats_strings=["a", "b", "c"]),
    ]
    m = _hand_model(
        nodes,
        [_vi("X", TensorProto.STRING, ["N", 2])],
        {"weights": (TensorProto.DOUBLE, 2), "scores": (TensorProto.FLOAT, 2), "onehot": (TensorProto.FLOAT, 3)},
        4,
    )
    fill = {"kind": "choice", "values": ["a", "b", "c", "z"]}
    return m, [_tensor_input("X", "string", ["N", 2], fill)], "CategoryMapper both ways, LabelEncoder 4, OneHotEncoder"


@model("hand_feature_vectorizer_imputer")
def _hand_fv():
    nodes = [
        helper.make_node("Imputer", ["A"], ["A_imp"], domain=ML, imputed_value_int64s=[7], replaced_value_int64=0),
        helper.make_node("Cast", ["A_imp"], ["A_f"], to=TensorProto.FLOAT),
        helper.make_node("FeatureVectorizer", ["A_f", "B", "C"], ["features"], domain=ML, inputdimensions=[2, 3, 4]),
        helper.make_node("Normalizer", ["features"], ["normed"], domain=ML, norm="MAX"),
        helper.make_node("Scaler", ["normed"], ["scaled"], domain=ML, scale=[2.0], offset=[0.5]),
        helper.make_node("Binarizer", ["scaled"], ["binary"], domain=ML, threshold=0.0),
        helper.make_node("ArrayFeatureExtractor", ["binary", "picks"], ["picked"], domain=ML),
    ]
    inputs = [
        _vi("A", TensorProto.INT64, ["N", 2]),
        _vi("B", TensorProto.FLOAT, ["N", 3]),
        _vi("C", TensorProto.FLOAT, ["N", 2, 2]),
    ]
    picks = helper.make_tensor("picks", TensorProto.INT64, [1, 4], [0, 3, 5, 8])
    m = _hand_model(nodes, inputs, {"picked": (TensorProto.FLOAT, 2)}, 1, [picks])
    ins = [
        _tensor_input("A", "int64", ["N", 2], {"kind": "randint", "low": 0, "high": 3}),
        _tensor_input("B", "float32", ["N", 3], RANDN),
        _tensor_input("C", "float32", ["N", 2, 2], RANDN),
    ]
    return m, ins, "Imputer, FeatureVectorizer (a 3-D input), Normalizer, Scaler, Binarizer, ArrayFeatureExtractor"


def _random_tree_v5(rng: np.random.Generator, n_features: int, n_targets: int, elem: int) -> dict[str, Any]:
    """Two depth-1 trees in TreeEnsemble 5's encoding (every branch ends in a leaf)."""
    roots, feats, splits, leaf_t, leaf_w = [0, 1], [0, 2 % n_features], rng.standard_normal(2).tolist(), [], []
    for _ in range(4):
        leaf_t.append(int(rng.integers(0, n_targets)))
        leaf_w.append(float(rng.standard_normal()))
    return dict(
        n_targets=n_targets,
        tree_roots=roots,
        nodes_featureids=feats,
        nodes_modes=helper.make_tensor("m", TensorProto.UINT8, [2], [0, 1]),
        nodes_splits=helper.make_tensor("s", elem, [2], splits),
        nodes_truenodeids=[0, 2],
        nodes_trueleafs=[1, 1],
        nodes_falsenodeids=[1, 3],
        nodes_falseleafs=[1, 1],
        leaf_targetids=leaf_t,
        leaf_weights=helper.make_tensor("w", elem, [4], leaf_w),
    )


@model("hand_tree_ensemble_v5")
def _hand_te5():
    rng = np.random.default_rng(SEED)
    nodes = [
        helper.make_node("TreeEnsemble", ["X"], ["Y"], domain=ML, **_random_tree_v5(rng, 3, 2, TensorProto.DOUBLE)),
        helper.make_node("ArgMax", ["Y"], ["top"], axis=1, keepdims=0),
        helper.make_node(
            "LabelEncoder", ["top"], ["label"], domain=ML, keys_int64s=[0, 1], values_strings=["lo", "hi"]
        ),
    ]
    m = _hand_model(
        nodes,
        [_vi("X", TensorProto.DOUBLE, ["N", 3])],
        {"Y": (TensorProto.DOUBLE, 2), "label": (TensorProto.STRING, 1)},
        5,
    )
    return m, [_tensor_input("X", "float64", ["N", 3], RANDN)], "TreeEnsemble 5 (double), ArgMax, LabelEncoder 4"


@model("hand_trees_v3")
def _hand_trees_v3():
    """skl2onnx's tree ensembles with the ai.onnx.ml import raised to 3 (their attributes are valid there)."""
    from sklearn.ensemble import RandomForestClassifier

    m, ins = _iris_classifier(RandomForestClassifier(n_estimators=2, max_depth=2, random_state=SEED))
    for imp in m.opset_import:
        if imp.domain == ML:
            imp.version = 3
    return m, ins, "RandomForestClassifier with ai.onnx.ml 3 (TreeEnsembleClassifier 3)"


@model("hand_svm_linear_zipmap_strings")
def _hand_svm():
    rng = np.random.default_rng(SEED)
    nodes = [
        helper.make_node(
            "SVMClassifier",
            ["X"],
            ["label", "scores"],
            domain=ML,
            kernel_type="LINEAR",
            kernel_params=[0.0, 0.0, 0.0],
            coefficients=rng.standard_normal(12).tolist(),
            rho=rng.standard_normal(3).tolist(),
            classlabels_strings=["x", "y", "z"],
            post_transform="SOFTMAX",
        ),
        helper.make_node("ZipMap", ["scores"], ["probabilities"], domain=ML, classlabels_strings=["x", "y", "z"]),
        helper.make_node(
            "LinearRegressor", ["X"], ["reg"], domain=ML, coefficients=[0.5] * 8, intercepts=[1.0, 2.0], targets=2
        ),
    ]
    zipped = helper.make_sequence_type_proto(
        helper.make_map_type_proto(TensorProto.STRING, helper.make_tensor_type_proto(TensorProto.FLOAT, None))
    )
    outs = {"label": (TensorProto.STRING, 1), "probabilities": zipped, "reg": (TensorProto.FLOAT, 2)}
    m = _hand_model(nodes, [_vi("X", TensorProto.FLOAT, ["N", 4])], outs, 1)
    return m, [_tensor_input("X", "float32", ["N", 4], RANDN)], "SVMClassifier in linear mode, ZipMap with string keys"


@model("hand_cast_map")
def _hand_cast_map():
    map_type = helper.make_map_type_proto(TensorProto.INT64, helper.make_tensor_type_proto(TensorProto.FLOAT, None))
    nodes = [
        helper.make_node("CastMap", ["M"], ["dense"], domain=ML),
        helper.make_node("CastMap", ["M"], ["sparse"], domain=ML, map_form="SPARSE", max_map=10, cast_to="TO_INT64"),
        helper.make_node("ReduceSum", ["dense"], ["total"], keepdims=0),
    ]
    m = _hand_model(
        nodes,
        [helper.make_value_info("M", map_type)],
        {"dense": (TensorProto.FLOAT, 2), "sparse": (TensorProto.INT64, 2), "total": (TensorProto.FLOAT, 0)},
        1,
    )
    inp = {"name": "M", "kind": "map", "key_type": "int64", "value_type": "float32", "keys": list(range(10))}
    return m, [inp], "CastMap, DENSE (as long as the map) and SPARSE (max_map)"


# -- writing ----------------------------------------------------------------------------------------


def _op_counts(m: onnx.ModelProto) -> dict[str, int]:
    return dict(sorted(Counter(f"{n.domain or 'ai.onnx'}::{n.op_type}" for n in m.graph.node).items()))


def main() -> None:
    warnings.filterwarnings("ignore")
    import onnxruntime
    import skl2onnx
    import sklearn

    entries = []
    for name, build in MODELS.items():
        m, inputs, description = build()
        m = _tidy(m, name)
        onnx.checker.check_model(m)
        data = m.SerializeToString(deterministic=True)
        path = HERE / f"{name}.onnx"
        path.write_bytes(data)
        entries.append(
            {
                "file": path.name,
                "description": description,
                "source": "hand" if name.startswith("hand_") else "skl2onnx",
                "opset_imports": {imp.domain or "ai.onnx": imp.version for imp in m.opset_import},
                "size_bytes": len(data),
                "sha256": hashlib.sha256(data).hexdigest(),
                "node_count": len(m.graph.node),
                "op_counts": _op_counts(m),
                "inputs": inputs,
                "bindings": BINDINGS,
            }
        )
        print(f"{path.name}: {len(data)} bytes, {len(m.graph.node)} nodes")
    manifest = {
        "description": "ai.onnx.ml test models, made by tests/models/ml/make_ml_models.py",
        "seed": SEED,
        "versions": {
            "scikit-learn": sklearn.__version__,
            "skl2onnx": skl2onnx.__version__,
            "onnx": onnx.__version__,
            "onnxruntime": onnxruntime.__version__,
            "numpy": np.__version__,
        },
        "fill_kinds": {
            "uniform": "uniform floats in [low, high)",
            "randn": "standard normal floats",
            "randint": "uniform integers in [low, high)",
            "choice": "strings drawn uniformly from values",
            "map": "a map input: the first `size` keys of `keys`, size 3 in the first run and all keys in the second",
        },
        "models": entries,
    }
    (HERE / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")


if __name__ == "__main__":
    main()
