"""Linear models: LinearClassifier, LinearRegressor.

The class or target count comes from the attributes: ``intercepts`` (one per class, as
onnxruntime reads it) or ``coefficients`` divided by the feature count (as onnx.reference does);
a valid model makes the two agree. A single score with two class labels is widened to two
columns (``[-s, s]``) by both runtimes.
"""

from __future__ import annotations

from infer.contract.context import RuleContext
from infer.core.dims import Dim
from infer.core.types import TensorType
from signatures.ai_onnx_ml.common import ML, ROW_VECTOR, attr_len, class_labels, features, positive, rows
from signatures.kit.registry import example, rule


def _score_count(ctx: RuleContext, n_labels: int) -> Dim:
    n_coef, c = attr_len(ctx, "coefficients"), features(ctx)
    k: int | None = attr_len(ctx, "intercepts") or None
    from_coef = n_coef // c if isinstance(c, int) and c > 0 and n_coef % c == 0 else None
    if k is None:
        k = from_coef
    elif isinstance(c, int) and n_coef < k * c:
        # onnxruntime refuses to run it; onnx.reference cannot shape the coefficients either.
        ctx.error(
            "shape-mismatch",
            f"{ctx.op_type} with inputs {ctx.input_types_str()}: {n_coef} coefficients are fewer than "
            f"{k} classes (one intercept each) times {c} features",
        )
        return None
    elif isinstance(c, int) and from_coef != k:
        # The runtimes read the class count from different attributes; here they disagree.
        ctx.because(f"{n_coef} coefficients for {c} features do not make {k} classes, as the intercepts say")
        return None
    if k is None:
        ctx.because("the class count needs intercepts or a known feature count")
        return None
    return 2 if k == 1 and n_labels == 2 else positive(k)


@rule("LinearClassifier", domain=ML)
def linear_classifier(ctx: RuleContext) -> list:
    """``Y[N]`` labels and ``Z[N, E]`` scores; a 1-D input is one row (onnxruntime)."""
    n = rows(ctx, ROW_VECTOR)
    elem, n_labels = class_labels(ctx, "classlabels_ints")
    return [TensorType(elem, (n,)), (n, _score_count(ctx, n_labels))]


@rule("LinearRegressor", domain=ML)
def linear_regressor(ctx: RuleContext) -> list:
    """``Y[N, targets]``. A 1-D input gives ``[1, targets]`` in onnxruntime but ``[targets]`` in
    onnx.reference, so only a 2-D input gets a shape."""
    s = ctx.shape(0)
    if s is None or len(s) != 2:
        ctx.because("LinearRegressor's output rank is only agreed on for a [N, C] input", 0)
        return [None]
    return [(s[0], positive(int(ctx.attr("targets", 1))))]


_LC = {"coefficients": [0.1] * 12, "intercepts": [0.0] * 3, "classlabels_ints": [0, 1, 2]}
example("LinearClassifier", ["float[N,4]"], ["int64[N]", "float[N,3]"], _LC, domain=ML)
example("LinearClassifier", ["double[4]"], ["int64[1]", "float[1,3]"], _LC, domain=ML)
_LC_BIN = {"coefficients": [0.1] * 4, "intercepts": [0.0], "classlabels_strings": ["no", "yes"]}
example("LinearClassifier", ["int64[N,4]"], ["string[N]", "float[N,2]"], _LC_BIN, domain=ML)
_LC_NOINT = {"coefficients": [0.1] * 8, "classlabels_ints": [4, 5]}
example("LinearClassifier", ["float[N,4]"], ["int64[N]", "float[N,2]"], _LC_NOINT, domain=ML)
example("LinearClassifier", ["float[N,C]"], ["int64[N]", "float[N,?]"], _LC_NOINT, domain=ML)
example("LinearClassifier", ["float[N,2,4]"], ["unknown", "float[*]"], _LC, domain=ML, error="shape-mismatch")
example("LinearRegressor", ["float[N,4]"], ["float[N,1]"], {"coefficients": [0.1] * 4}, domain=ML)
example("LinearRegressor", ["int32[N,4]"], ["float[N,2]"], {"coefficients": [0.1] * 8, "targets": 2}, domain=ML)
example("LinearRegressor", ["float[4]"], ["float[*]"], {"coefficients": [0.1] * 4}, domain=ML)
example("LinearClassifier", ["float[N,3]"], ["int64[N]", "float[N,?]"], _LC, domain=ML)  # 12 coefficients, 3 features
example("LinearClassifier", ["float[N,5]"], ["int64[N]", "float[N,?]"], _LC, domain=ML, error="shape-mismatch")
