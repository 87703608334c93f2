"""Support vector machines: SVMClassifier, SVMRegressor.

A 1-D input is one row to onnxruntime but a column of rows to onnx.reference, so its batch
stays unknown; the score widths below hold for both runtimes.
"""

from __future__ import annotations

from infer.contract.context import RuleContext
from infer.core.dims import Dim
from infer.core.types import TensorType
from signatures.ai_onnx_ml.common import ML, attr_len, class_labels, positive, rows
from signatures.kit.registry import example, rule


def _svm_score_count(ctx: RuleContext, k: int) -> Dim:
    """Columns of ``Z`` for ``k`` classes.

    Linear mode (no support vectors): one score per class. Kernel mode: one probability per
    class with ``prob_a``, else one score per pair of classes; a binary model's single pair score
    is widened to two columns, except under PROBIT where the runtimes disagree.
    """
    if k <= 0:
        ctx.because("SVMClassifier has no class labels")
        return None
    if not sum(ctx.attr("vectors_per_class") or []):
        return k
    if attr_len(ctx, "prob_a"):
        return k
    if k == 2:
        if ctx.attr("post_transform", "NONE") == "PROBIT":
            ctx.because("a binary SVMClassifier's PROBIT scores have 1 column in onnx.reference, 2 in onnxruntime")
            return None
        return 2
    return positive(k * (k - 1) // 2)


@rule("SVMClassifier", domain=ML)
def svm_classifier(ctx: RuleContext) -> list:
    n = rows(ctx, None)
    elem, k = class_labels(ctx, "classlabels_ints")
    return [TensorType(elem, (n,)), (n, _svm_score_count(ctx, k))]


@rule("SVMRegressor", domain=ML)
def svm_regressor(ctx: RuleContext) -> list:
    """One score per row: ``[N, 1]`` (regression and one-class alike)."""
    s = ctx.shape(0)
    if s is None or len(s) == 0:
        return [None]
    if len(s) != 2:
        ctx.because("runtimes disagree on the batch of an SVMRegressor input that is not [N, C]", 0)
        return [(None, 1)]
    return [(s[0], 1)]


def _svc(k: int, prob: bool, post: str = "NONE") -> dict:
    a = {
        "vectors_per_class": [1] * k,
        "support_vectors": [0.0] * (4 * k),
        "coefficients": [1.0] * (k - 1) * k,
        "rho": [0.0] * (k * (k - 1) // 2),
        "kernel_type": "RBF",
        "classlabels_ints": list(range(k)),
        "post_transform": post,
    }
    if prob:
        a["prob_a"] = a["prob_b"] = [1.0] * (k * (k - 1) // 2)
    return a


example("SVMClassifier", ["float[N,4]"], ["int64[N]", "float[N,6]"], _svc(4, False), domain=ML)
example("SVMClassifier", ["float[N,4]"], ["int64[N]", "float[N,4]"], _svc(4, True), domain=ML)
example("SVMClassifier", ["float[N,4]"], ["int64[N]", "float[N,2]"], _svc(2, False), domain=ML)
example("SVMClassifier", ["float[N,4]"], ["int64[N]", "float[N,?]"], _svc(2, False, "PROBIT"), domain=ML)
example("SVMClassifier", ["double[4]"], ["int64[?]", "float[?,3]"], _svc(3, True), domain=ML)
_LIN = {"coefficients": [0.1] * 12, "rho": [0.0] * 3, "kernel_type": "LINEAR", "classlabels_strings": ["a", "b", "c"]}
example("SVMClassifier", ["float[N,4]"], ["string[N]", "float[N,3]"], _LIN, domain=ML)
example("SVMClassifier", ["float[N,4]"], ["int64[N]", "float[N,?]"], {"coefficients": [0.1] * 4}, domain=ML)
example("SVMRegressor", ["float[N,4]"], ["float[N,1]"], {"coefficients": [1.0], "n_supports": 1}, domain=ML)
example("SVMRegressor", ["int64[4]"], ["float[?,1]"], {"coefficients": [1.0], "n_supports": 1}, domain=ML)
example("SVMRegressor", ["float[*]"], ["float[*]"], domain=ML)
