"""Fused normalizations: SkipLayerNormalization, the RMS variants, EmbedLayerNormalization.

The optimizer folds ``Add -> LayerNormalization`` into SkipLayerNormalization, the RMSNorm
pattern into (Skip)SimplifiedLayerNormalization, and BERT's embedding sum into
EmbedLayerNormalization. Outputs keep the input's shape; the saved statistics keep every axis
but the normalized last one, which becomes 1 (what onnxruntime computes, checked in
tests/test_ms_models.py).
"""

from __future__ import annotations

from onnx import TensorProto

from infer.contract.context import RuleContext, RuleError
from infer.core.dims import Dim
from infer.core.types import TensorType
from signatures.com_microsoft import (
    F32,
    FLOAT,
    FLOAT_DOUBLE_BF16,
    FLOAT_TYPES,
    INT,
    INT8_TYPES,
    INT32,
    MS,
    REQUIRED,
)
from signatures.kit.helpers import norm_axis, same_dim
from signatures.kit.operator import case, operator

_SKIP_ATTRS = {"epsilon": (FLOAT, 1e-12)}

_GROUP_NORM = {"epsilon": (FLOAT, 1e-5), "groups": (INT, REQUIRED), "activation": (INT, REQUIRED),
               "channels_last": (INT, 1)}  # fmt: skip
_T_HALF = ("tensor(float16)", "tensor(float)")
# Diffusion models' group norms (NHWC by default): Y, and SkipGroupNorm's sum S, have X's shape.
operator(
    "GroupNorm",
    "X:T gamma:M beta:M",
    "Y:T",
    domain=MS,
    types={"T": _T_HALF, "M": _T_HALF},
    attrs=_GROUP_NORM,
    rule="X[n, h, w, c] -> Y[n, h, w, c], S[n, h, w, c]",
    examples=[
        case(["float16[N,H,W,320]", "float16[320]", "float16[320]"], ["float16[N,H,W,320]"], groups=32, activation=1),
        case(["float[N,C]", "float[C]", "float[C]"], ["float[*]"], groups=32, activation=0, error="shape-mismatch"),
    ],
)
operator(
    "SkipGroupNorm",
    "X:T gamma:M beta:M skip:T bias?:T",
    "Y:T S?:T",
    domain=MS,
    types={"T": _T_HALF, "M": _T_HALF},
    attrs=_GROUP_NORM,
    rule="X[n, h, w, c] -> Y[n, h, w, c], S[n, h, w, c]",
    examples=[
        case(
            ["float[N,H,W,C]", "float[C]", "float[C]", "float[N,1,1,C]", "float[C]"],
            ["float[N,H,W,C]", "float[N,H,W,C]"],
            groups=32,
            activation=0,
        )
    ],
)


@operator(
    "SkipLayerNormalization",
    "input:T skip:T gamma:T beta?:T bias?:T",
    "output:T mean?:U inv_std_var?:U input_skip_bias_sum?:T",
    domain=MS,
    types={"T": FLOAT_TYPES, "U": F32},
    attrs=_SKIP_ATTRS,
    examples=[
        case(
            ["float[B,S,32]", "float[B,S,32]", "float[32]", "float[32]"],
            ["float[B,S,32]", "float[B,S,1]", "float[B,S,1]", "float[B,S,32]"],
        ),
        case(["float16[T,32]", "float16[T,32]", "float16[32]"], ["float16[T,32]", "float[T,1]"]),
        case(["float[B,S,H]", "float[1,S,H]", "float[32]"], ["float[B,S,32]"]),
        case(["float[B,S,32]", "float[B,S,32]", "float[16]"], ["float[B,S,32]"], error="shape-mismatch"),
        case(["float[A,B,S,32]", "float[A,B,S,32]", "float[32]"], ["float[*]"], error="shape-mismatch"),
    ],
)
@operator(
    "SkipSimplifiedLayerNormalization",
    "input:T skip:T gamma:T bias?:T",
    "output:T mean?:U inv_std_var?:U input_skip_bias_sum?:T",
    domain=MS,
    types={"T": FLOAT_TYPES, "U": F32},
    attrs=_SKIP_ATTRS,
    examples=[
        case(
            ["float[B,S,32]", "float[B,S,32]", "float[32]"],
            ["float[B,S,32]", "float[B,S,1]", "float[B,S,1]", "float[B,S,32]"],
        )
    ],
)
def skip_layer_normalization(ctx: RuleContext) -> list:
    """output and the sum have the input's shape; mean and inv_std_var end in 1 (2-D or 3-D)."""
    x = ctx.shape(0)
    if x is None:
        return [None] * ctx.n_outputs
    if len(x) not in (2, 3):
        raise RuleError("shape-mismatch", f"input must be 2-D or 3-D, has rank {len(x)}")
    gamma = ctx.shape(2)
    if gamma is not None and len(gamma) == 1:
        x = x[:-1] + (same_dim(ctx, x[-1], gamma[0], "hidden size and gamma"),)
    stats = x[:-1] + (1,)
    return [x, stats, stats, x][: ctx.n_outputs]


# An onnxruntime operator registered in the default domain (onnx has no such operator).
@operator(
    "SimplifiedLayerNormalization",
    "X:T scale:V",
    "Y:V inv_std_var?:U",
    domain="",
    types={"T": FLOAT_DOUBLE_BF16, "U": ("tensor(float)", "tensor(double)"), "V": FLOAT_DOUBLE_BF16},
    attrs={"axis": (INT, -1), "epsilon": (FLOAT, 1e-5), "stash_type": (INT, 1)},
    examples=[
        case(["float[B,S,32]", "float[32]"], ["float[B,S,32]", "float[B,S,1]"]),
        case(["float16[B,S,32]", "float[S,32]"], ["float[B,S,32]", "float[B,1,1]"], axis=1),
        case(["double[B,S,32]", "double[32]"], ["double[B,S,32]", "float[B,S,1]"]),
        case(["float[B,S,32]", "float[32]"], ["float[*]"], axis=3, error="bad-attribute"),
    ],
)
def simplified_layer_normalization(ctx: RuleContext) -> list:
    """Y has X's shape; inv_std_var keeps the axes before ``axis`` and is 1 from there on.

    onnxruntime computes inv_std_var in float for stash_type 1 whatever X is (double and float16
    checked); other stash types are not claimed.
    """
    x = ctx.shape(0)
    stash = TensorProto.FLOAT if ctx.attr("stash_type", 1) == 1 else None
    if x is None:
        return [None, TensorType(stash, None)][: ctx.n_outputs]
    axis = norm_axis(ctx, ctx.attr("axis", -1), len(x))
    return [x, TensorType(stash, x[:axis] + (1,) * (len(x) - axis))][: ctx.n_outputs]


@operator(
    "EmbedLayerNormalization",
    "input_ids:T1 segment_ids?:T1 word_embedding:T position_embedding:T segment_embedding?:T gamma:T beta:T "
    "mask?:T1 position_ids?:T1",
    "output:T mask_index?:T1 embedding_sum?:T",
    domain=MS,
    types={"T1": INT32, "T": ("tensor(float)", "tensor(float16)")},
    attrs={"epsilon": (FLOAT, 1e-12), "mask_index_type": (INT, None)},
    examples=[
        case(
            [
                "int32[B,S]",
                "int32[B,S]",
                "float[100,32]",
                "float[64,32]",
                "float[2,32]",
                "float[32]",
                "float[32]",
                "int32[B,S]",
            ],
            ["float[B,S,32]", "int32[B]", "float[B,S,32]"],
        ),
        case(
            ["int32[B,S]", "", "float16[V,H]", "float16[64,H]", "", "float16[32]", "float16[32]"], ["float16[B,S,32]"]
        ),
    ],
)
def embed_layer_normalization(ctx: RuleContext) -> list:
    """output and embedding_sum are (batch, sequence, hidden); mask_index is (batch)."""
    ids = ctx.shape(0)
    hidden = _hidden(ctx, 2, 5)
    if ids is not None and len(ids) != 2:
        raise RuleError("shape-mismatch", f"input_ids must be 2-D, has rank {len(ids)}")
    b, s = ids if ids is not None else (None, None)
    return [(b, s, hidden), (b,), (b, s, hidden)][: ctx.n_outputs]


@operator(
    "QEmbedLayerNormalization",
    "input_ids:T1 segment_ids?:T1 word_embedding_quant:T2 position_embedding_quant:T2 segment_embedding?:T2 "
    "gamma_quant:T2 beta_quant:T2 mask?:T1 word_embedding_scale:T position_embedding_scale:T "
    "segment_embedding_scale?:T gamma_scale:T beta_scale:T word_embedding_zero_point:T2 "
    "position_embedding_zero_point:T2 segment_embedding_zero_point?:T2 gamma_zero_point:T2 beta_zero_point:T2",
    "layernorm_out:T mask_index_out:T1",
    domain=MS,
    types={"T1": INT32, "T2": INT8_TYPES, "T": F32},
    attrs={"epsilon": (FLOAT, 1e-12)},
    examples=[
        case(
            [
                "int32[B,S]",
                "int32[B,S]",
                "uint8[100,32]",
                "uint8[64,32]",
                "uint8[2,32]",
                "uint8[32]",
                "uint8[32]",
                "int32[B,S]",
                "float[]",
                "float[]",
                "float[]",
                "float[]",
                "float[]",
                "uint8[]",
                "uint8[]",
                "uint8[]",
                "uint8[]",
                "uint8[]",
            ],
            ["float[B,S,32]", "int32[B]"],
        )
    ],
)
def q_embed_layer_normalization(ctx: RuleContext) -> list:
    ids = ctx.shape(0)
    hidden = _hidden(ctx, 2, 5)
    b, s = ids if ids is not None and len(ids) == 2 else (None, None)
    return [(b, s, hidden), (b,)][: ctx.n_outputs]


def _hidden(ctx: RuleContext, table: int, gamma: int) -> Dim:
    """The hidden size: the embedding table's second axis, else gamma's length."""
    w, g = ctx.shape(table), ctx.shape(gamma)
    h = w[1] if w is not None and len(w) == 2 else None
    if g is not None and len(g) == 1:
        h = g[0] if h is None else same_dim(ctx, h, g[0], "hidden size and gamma")
    return h
