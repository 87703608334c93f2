"""Feature preprocessing: ArrayFeatureExtractor, Binarizer, Imputer, Normalizer, Scaler,
FeatureVectorizer, OneHotEncoder.

Element types: Binarizer and Imputer keep the input's (the schema binds ``T``); Normalizer,
Scaler, FeatureVectorizer and OneHotEncoder always give float (the schema says so and
onnxruntime agrees; ``onnx.reference`` keeps the input's type for Scaler and FeatureVectorizer,
which the schema contradicts).
"""

from __future__ import annotations

from onnx import TensorProto

from infer.contract.context import RuleContext, RuleError
from signatures.ai_onnx_ml.common import ML, attr_len, positive
from signatures.kit.helpers import elements, same_dim
from signatures.kit.registry import example, rule


@rule(["Binarizer", "Imputer"], domain=ML)
def same_shape(ctx: RuleContext) -> list:
    """Element-wise replacement: the output has the input's shape (any rank, in onnxruntime)."""
    return [ctx.shape(0)]


@rule("Scaler", domain=ML)
def scaler(ctx: RuleContext) -> list:
    s = ctx.shape(0)
    if s is None or len(s) == 0:
        # onnxruntime refuses a scalar; onnx.reference broadcasts it to the length of `scale`.
        ctx.because("a scalar input to Scaler is read differently by the runtimes", 0)
        return [None]
    return [s]


@rule("Normalizer", domain=ML)
def normalizer(ctx: RuleContext) -> list:
    s = ctx.shape(0)
    if s is None:
        return [None]
    if len(s) not in (1, 2):
        raise RuleError("shape-mismatch", f"Normalizer takes [N, C] or [C], got rank {len(s)}")
    return [s]


@rule("ArrayFeatureExtractor", domain=ML)
def array_feature_extractor(ctx: RuleContext) -> list:
    """Picks entries of the last axis; all of ``Y``'s elements are indices (flattened).

    A 1-D ``X`` gives ``[1, len]`` (onnxruntime and onnx.reference agree).
    """
    x, y = ctx.shape(0), ctx.shape(1)
    count = elements(y)
    if y is None:
        ctx.because(f"the index count comes from `{ctx.input_name(1)}`, of unknown rank", 1)
    if x is None:
        return [None]
    if len(x) == 0:
        raise RuleError("shape-mismatch", "ArrayFeatureExtractor needs an input of rank 1 or more")
    if len(x) == 1:
        return [(1, count)]
    return [(*x[:-1], count)]


@rule("OneHotEncoder", domain=ML)
def one_hot_encoder(ctx: RuleContext) -> list:
    """One more axis, as long as the category list (string inputs use ``cats_strings``)."""
    given = [name for name in ("cats_strings", "cats_int64s") if ctx.has_attr(name)]
    if len(given) != 1:
        raise RuleError("bad-attribute", f"one and only one of cats_strings and cats_int64s must be given, not {given}")
    n_str, n_int = attr_len(ctx, "cats_strings"), attr_len(ctx, "cats_int64s")
    elem = ctx.elem(0)
    if elem == TensorProto.STRING or (n_str and not n_int):
        n = n_str
    elif elem is not None or (n_int and not n_str):
        n = n_int
    else:
        n = n_str if n_str == n_int else 0
    if not n:
        ctx.because("the category count is not given by the attributes")
    s = ctx.shape(0)
    return [None if s is None else (*s, positive(n))]


@rule("FeatureVectorizer", domain=ML)
def feature_vectorizer(ctx: RuleContext) -> list:
    """Concatenates ``[N, C_i]`` inputs along axis 1, each cut or padded to ``inputdimensions[i]``.

    Inputs of rank 3 or more are flattened after the batch (onnxruntime). A 1-D input is one row
    to the definition and onnxruntime but a column to onnx.reference, so its batch stays unknown.
    """
    dims = ctx.attr("inputdimensions")
    width = positive(sum(dims)) if dims else None
    if dims is not None and len(dims) != ctx.n_inputs:
        raise RuleError("bad-attribute", f"inputdimensions has {len(dims)} entries for {ctx.n_inputs} inputs")
    if width is None:
        ctx.because("the output width comes from inputdimensions, which is not given")
    batch = None
    shapes = [ctx.shape(i) for i in range(ctx.n_inputs)]
    if shapes and all(s is not None and len(s) >= 2 for s in shapes):
        batch = shapes[0][0]  # type: ignore[index]
        for s in shapes[1:]:
            batch = same_dim(ctx, batch, s[0], "batch extents")  # type: ignore[index]
    elif any(s is not None and len(s) == 1 for s in shapes):
        ctx.because("runtimes disagree on the batch of a 1-D FeatureVectorizer input")
    return [(batch, width)]


# -- examples -------------------------------------------------------------------------------------

example("Binarizer", ["float[N,4]"], ["float[N,4]"], domain=ML)
example("Binarizer", ["float[*]"], ["float[*]"], domain=ML)
example("Imputer", ["int64[N,3,2]"], ["int64[N,3,2]"], {"imputed_value_int64s": [0]}, domain=ML)
example("Scaler", ["int32[N,4]"], ["float[N,4]"], {"scale": [2.0], "offset": [1.0]}, domain=ML)
example("Scaler", ["double[5]"], ["float[5]"], domain=ML)
example("Scaler", ["float[]"], ["float[*]"], domain=ML)
example("Normalizer", ["double[N,4]"], ["float[N,4]"], {"norm": "L2"}, domain=ML)
example("Normalizer", ["int64[C]"], ["float[C]"], domain=ML)
example("Normalizer", ["float[2,3,4]"], ["float[*]"], domain=ML, error="shape-mismatch")
example("ArrayFeatureExtractor", ["float[N,4]", "int64[2]"], ["float[N,2]"], domain=ML)
example("ArrayFeatureExtractor", ["string[B,N,4]", "int64[1,K]"], ["string[B,N,K]"], domain=ML)
example("ArrayFeatureExtractor", ["int64[4]", "int64[2,3]"], ["int64[1,6]"], domain=ML)
example("ArrayFeatureExtractor", ["float[N,4]", "int64[]"], ["float[N,1]"], domain=ML)
example("ArrayFeatureExtractor", ["float[N,4]", "int64[*]"], ["float[N,?]"], domain=ML)
example("ArrayFeatureExtractor", ["float[]", "int64[1]"], ["float[*]"], domain=ML, error="shape-mismatch")
example("OneHotEncoder", ["int64[N,2]"], ["float[N,2,3]"], {"cats_int64s": [1, 2, 3]}, domain=ML)
example("OneHotEncoder", ["string[N]"], ["float[N,2]"], {"cats_strings": ["a", "b"]}, domain=ML)
example("OneHotEncoder", ["double[]"], ["float[4]"], {"cats_int64s": [1, 2, 3, 4]}, domain=ML)
example("OneHotEncoder", ["int32[N,2]"], ["float[*]"], domain=ML, error="bad-attribute")
example(
    "OneHotEncoder",
    ["int64[N]"],
    ["float[*]"],
    {"cats_int64s": [1], "cats_strings": ["a"]},
    domain=ML,
    error="bad-attribute",
)
example("FeatureVectorizer", ["int64[N,2]", "int64[N,3]"], ["float[N,5]"], {"inputdimensions": [2, 3]}, domain=ML)
example("FeatureVectorizer", ["double[N,2,3]"], ["float[N,6]"], {"inputdimensions": [6]}, domain=ML)
example("FeatureVectorizer", ["float[4]", "float[3]"], ["float[?,7]"], {"inputdimensions": [4, 3]}, domain=ML)
example("FeatureVectorizer", ["float[N,2]"], ["float[N,?]"], domain=ML)
_FV_BAD = {"inputdimensions": [2, 3]}
example("FeatureVectorizer", ["float[5,2]", "float[3,3]"], ["float[5,5]"], _FV_BAD, domain=ML, error="shape-mismatch")
example(
    "FeatureVectorizer",
    ["float[N,2]", "float[N,3]"],
    ["float[*]"],
    {"inputdimensions": [2]},
    domain=ML,
    error="bad-attribute",
)
