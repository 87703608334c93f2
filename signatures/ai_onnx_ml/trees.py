"""Tree ensembles: TreeEnsembleClassifier (1, 3, 5), TreeEnsembleRegressor (1, 3, 5), TreeEnsemble (5).

Inputs are ``[N, F]``; to the older operators a 1-D input is one row (onnxruntime and
onnx.reference agree where they run it). The classifier scores one column per class label, the
regressors one per target (``n_targets``). The ``*_as_tensor`` attributes of version 3 change
precision, not shapes.
"""

from __future__ import annotations

from onnx import TensorProto, helper

from infer.contract.context import RuleContext, RuleError
from infer.core.dims import Dim
from infer.core.types import TensorType
from signatures.ai_onnx_ml.common import ML, ROW_VECTOR, attr_len, class_labels, positive, rows
from signatures.kit.registry import example, rule


def _targets(ctx: RuleContext) -> Dim:
    n = ctx.attr("n_targets")
    if n is None:
        ctx.because(f"{ctx.op_type} has no n_targets attribute")
        return None
    return positive(int(n))


@rule("TreeEnsembleClassifier", domain=ML)
def tree_ensemble_classifier(ctx: RuleContext) -> list:
    """``Y[N]`` labels, ``Z[N, E]`` with one column per class label (binary models included)."""
    n = rows(ctx, ROW_VECTOR)
    elem, k = class_labels(ctx, "classlabels_int64s")
    if not k:
        ctx.because("TreeEnsembleClassifier has no class labels")
    return [TensorType(elem, (n,)), (n, positive(k))]


@rule("TreeEnsembleRegressor", domain=ML)
def tree_ensemble_regressor(ctx: RuleContext) -> list:
    """``Y[N, n_targets]``, float whatever the input's type."""
    return [(rows(ctx, ROW_VECTOR), _targets(ctx))]


@rule("TreeEnsemble", since=5, domain=ML)
def tree_ensemble(ctx: RuleContext) -> list:
    """``Y[N, n_targets]`` of the input's type; only ``[N, F]`` inputs (neither runtime takes 1-D)."""
    s = ctx.shape(0)
    if s is not None and len(s) != 2:
        raise RuleError("shape-mismatch", f"TreeEnsemble takes a [N, F] input, got rank {len(s)}")
    _same_lengths(ctx, _NODE_ATTRS)
    _same_lengths(ctx, _LEAF_ATTRS)
    elem = ctx.elem(0)
    for name in ("nodes_splits", "leaf_weights"):
        t = ctx.attr(name)
        # onnx's schema and onnxruntime require the input's element type (the reference does not).
        if isinstance(t, TensorProto) and elem is not None and t.data_type and t.data_type != elem:
            names = f"{TensorProto.DataType.Name(elem)}, has {TensorProto.DataType.Name(t.data_type)}"
            raise RuleError("bad-attribute", f"{name} must have the input's element type {names}")
    return [(None if s is None else s[0], _targets(ctx))]


_NODE_ATTRS = ("nodes_featureids", "nodes_splits", "nodes_modes", "nodes_truenodeids", "nodes_falsenodeids",
               "nodes_trueleafs", "nodes_falseleafs", "nodes_hitrates", "nodes_missing_value_tracks_true")  # fmt: skip
_LEAF_ATTRS = ("leaf_targetids", "leaf_weights")


def _same_lengths(ctx: RuleContext, names: tuple[str, ...]) -> None:
    """The ``nodes_*`` (and the ``leaf_*``) attributes encode tuples: they must have one length."""
    lengths = {name: attr_len(ctx, name) for name in names if ctx.has_attr(name)}
    if len(set(lengths.values())) > 1:
        listed = ", ".join(f"{k} {v}" for k, v in lengths.items())
        raise RuleError("bad-attribute", f"these attributes must have the same length: {listed}")


_TREE = {
    "nodes_treeids": [0, 0, 0],
    "nodes_nodeids": [0, 1, 2],
    "nodes_featureids": [0, 0, 0],
    "nodes_values": [0.5, 0.0, 0.0],
    "nodes_modes": ["BRANCH_LEQ", "LEAF", "LEAF"],
    "nodes_truenodeids": [1, 0, 0],
    "nodes_falsenodeids": [2, 0, 0],
}
_TEC = {**_TREE, "class_treeids": [0, 0], "class_nodeids": [1, 2], "class_ids": [0, 2], "class_weights": [1.0, 1.0]}
_TER = {**_TREE, "target_treeids": [0, 0], "target_nodeids": [1, 2], "target_ids": [0, 1], "target_weights": [1.0] * 2}
for _v in (1, 3, 5):
    example(
        "TreeEnsembleClassifier",
        ["float[N,3]"],
        ["int64[N]", "float[N,3]"],
        {**_TEC, "classlabels_int64s": [0, 1, 2]},
        opset=_v,
        domain=ML,
    )
    example("TreeEnsembleRegressor", ["double[N,3]"], ["float[N,2]"], {**_TER, "n_targets": 2}, opset=_v, domain=ML)
example(
    "TreeEnsembleClassifier",
    ["int64[N,3]"],
    ["string[N]", "float[N,2]"],
    {**_TEC, "class_ids": [1, 1], "classlabels_strings": ["a", "b"]},
    domain=ML,
)
example(
    "TreeEnsembleClassifier",
    ["float[3]"],
    ["int64[1]", "float[1,3]"],
    {**_TEC, "classlabels_int64s": [0, 1, 2]},
    domain=ML,
)
example(
    "TreeEnsembleClassifier",
    ["float[N,2,3]"],
    ["unknown", "float[*]"],
    {**_TEC, "classlabels_int64s": [0, 1, 2]},
    domain=ML,
    error="shape-mismatch",
)
example("TreeEnsembleRegressor", ["float[N,3]"], ["float[N,?]"], _TER, domain=ML)
example("TreeEnsembleRegressor", ["float[*]"], ["float[?,1]"], {**_TER, "n_targets": 1}, domain=ML)
_TE = {
    "n_targets": 2,
    "tree_roots": [0],
    "nodes_featureids": [0],
    "nodes_truenodeids": [0],
    "nodes_falsenodeids": [1],
    "nodes_trueleafs": [1],
    "nodes_falseleafs": [1],
    "leaf_targetids": [0, 1],
    "nodes_modes": helper.make_tensor("m", TensorProto.UINT8, [1], [0]),
    "nodes_splits": helper.make_tensor("s", TensorProto.DOUBLE, [1], [0.5]),
    "leaf_weights": helper.make_tensor("w", TensorProto.DOUBLE, [2], [1.0, 2.0]),
}
example("TreeEnsemble", ["double[N,F]"], ["double[N,2]"], _TE, opset=5, domain=ML)
example(
    "TreeEnsemble",
    ["double[N,F]"],
    ["double[N,?]"],
    {k: v for k, v in _TE.items() if k != "n_targets"},
    opset=5,
    domain=ML,
)
example("TreeEnsemble", ["float[F]"], ["float[*]"], _TE, opset=5, domain=ML, error="shape-mismatch")
example(
    "TreeEnsemble",
    ["double[N,F]"],
    ["double[*]"],
    {**_TE, "nodes_truenodeids": [0, 0]},
    opset=5,
    domain=ML,
    error="bad-attribute",
)
example(
    "TreeEnsemble",
    ["double[N,F]"],
    ["double[*]"],
    {**_TE, "leaf_targetids": [0]},
    opset=5,
    domain=ML,
    error="bad-attribute",
)
example("TreeEnsemble", ["float[N,F]"], ["float[*]"], _TE, opset=5, domain=ML, error="bad-attribute")
