"""int8 operators in cuBLASLt layouts: QuantizeWithOrder, QOrderedMatMul, QOrderedGelu,
QOrderedLayerNormalization, QOrderedAttention, QOrderedLongformerAttention; and QuantizeBFP.

The ``order_*`` attributes name the memory order of a matrix (row, column, COL32, ...), not its
logical shape, so each output has the shape its float counterpart would have, in int8.
QuantizeBFP packs a tensor into block floating point bytes of a length its kernels decide, and
returns the tensor's shape and strides beside them. None has a CPU kernel: the rules follow the
schemas' documentation and agree with onnxruntime's schema inference, which
tests/test_contrib_b_runtime.py asks.
"""

from __future__ import annotations

from onnx import TensorProto

from infer.contract.context import RuleContext, RuleError
from infer.core.types import TensorType
from infer.core.values import Known, Value
from signatures.com_microsoft import F32, FLOAT, FLOAT_TYPES, INT, INT32, INTS, MS, REQUIRED
from signatures.com_microsoft.linalg import matmul_dims
from signatures.kit.helpers import norm_axis, same_dim
from signatures.kit.operator import case, operator

_Q, _S = ("tensor(int8)",), F32
_ORDERS = {f"order_{m}": (INT, REQUIRED) for m in ("input", "output", "weight")}
_GEMMS = "scale_Q_gemm:S scale_K_gemm:S scale_V_gemm:S"
_WEIGHTS = "Q_weight:Q K_weight:Q V_weight:Q scale_Q_weight:S scale_K_weight:S scale_V_weight:S"

_SC = "float[]"


@operator(
    "QuantizeWithOrder",
    "input:F scale_input:S",
    "output:Q",
    domain=MS,
    types={"Q": _Q, "F": ("tensor(float16)", "tensor(float)"), "S": _S},
    attrs={"order_input": (INT, REQUIRED), "order_output": (INT, REQUIRED)},
    examples=[case(["float16[B,R,C]", _SC], ["int8[B,R,C]"], order_input=1, order_output=2)],
)
@operator(
    "QOrderedGelu",
    "X:Q scale_X:S scale_Y:S",
    "Y:Q",
    domain=MS,
    types={"Q": _Q, "S": _S},
    attrs={"order_X": (INT, None), "order_Y": (INT, None)},
    examples=[case(["int8[B,S,H]", _SC, _SC], ["int8[B,S,H]"])],
)
def reordered(ctx: RuleContext) -> list:
    """The input's shape (an order changes the layout in memory only)."""
    return [ctx.shape(0)]


@operator(
    "QOrderedLayerNormalization",
    "X:Q scale_X:S scale:F B?:F scale_Y:S",
    "Y:Q",
    domain=MS,
    types={"F": ("tensor(float16)", "tensor(float)"), "S": _S, "Q": _Q},
    attrs={"axis": (INT, -1), "epsilon": (FLOAT, 1e-5), "order_X": (INT, 1), "order_Y": (INT, 1)},
    examples=[
        case(["int8[B,S,H]", _SC, "float16[H]", "float16[H]", _SC], ["int8[B,S,H]"]),
        case(["int8[B,S,H]", _SC, "float16[H]", "", _SC], ["int8[*]"], axis=3, error="bad-attribute"),
    ],
)
def qordered_layer_normalization(ctx: RuleContext) -> list:
    """X's shape; ``axis`` must name one of its axes."""
    x = ctx.shape(0)
    if x is not None:
        norm_axis(ctx, ctx.attr("axis", -1), len(x))
    return [x]


_ORD = {"order_A": 1, "order_B": 0, "order_Y": 1}


@operator(
    "QOrderedMatMul",
    "A:Q scale_A:S B:Q scale_B:S scale_Y:S bias?:S C?:Q scale_C?:S",
    "Y:Q",
    domain=MS,
    types={"Q": _Q, "S": _S},
    attrs={"order_A": (INT, REQUIRED), "order_B": (INT, REQUIRED), "order_Y": (INT, REQUIRED)},
    examples=[
        case(["int8[B,M,K]", _SC, "int8[K,N]", _SC, _SC], ["int8[B,M,N]"], attrs=_ORD),
        case(["int8[B,M,64]", _SC, "int8[32,N]", _SC, _SC], ["int8[B,M,N]"], attrs=_ORD, error="shape-mismatch"),
    ],
)
def qordered_matmul(ctx: RuleContext) -> list:
    """numpy matmul of A and B (B's order is its layout: a column-ordered B is (K, N) still)."""
    a, b = ctx.shape(0), ctx.shape(2)
    if a is None or b is None:
        ctx.because("an operand has unknown rank")
        return [None]
    return [matmul_dims(ctx, a, b)]


_QA = ["int8[B,S,64]", _SC, _SC, _SC, _SC, "int8[64,64]", "int8[64,64]", "int8[64,64]", _SC, _SC, _SC,
       "float[64]", "float[64]", "float[64]", _SC, _SC, _SC]  # fmt: skip
_QA_ORD = {"num_heads": 4, "order_input": 1, "order_output": 1, "order_weight": 0}


@operator(
    "QOrderedAttention",
    f"input:Q scale_input:S {_GEMMS} {_WEIGHTS} Q_bias:S K_bias:S V_bias:S scale_QKT_gemm?:S "
    "scale_QKT_softmax?:S scale_values_gemm:S mask_index?:G past?:Q attention_bias?:S",
    "output:Q",
    domain=MS,
    types={"Q": _Q, "S": _S, "G": INT32},
    attrs={"num_heads": (INT, REQUIRED), **_ORDERS, "qkv_hidden_sizes": (INTS, None), "unidirectional": (INT, 0)},
    examples=[
        case(_QA, ["int8[B,S,64]"], attrs=_QA_ORD),
        case(
            ["int8[B,S,64]", *_QA[1:5], "int8[64,32]", "int8[64,32]", "int8[64,32]", *_QA[8:]],
            ["int8[B,S,?]"],
            attrs=_QA_ORD,
        ),
        case(["int8[B,64]", *_QA[1:]], ["int8[*]"], attrs=_QA_ORD, error="shape-mismatch"),
    ],
)
def qordered_attention(ctx: RuleContext) -> list:
    """(batch, sequence, hidden). The documentation's hidden is the weights' width, onnxruntime's
    schema gives the input's: claimed where the two agree (the kernel supports nothing else)."""
    x, w = ctx.shape(0), ctx.shape(5)
    if x is not None and len(x) != 3:
        raise RuleError("shape-mismatch", f"input must be 3-D, has rank {len(x)}")
    if x is None:
        return [None]
    hidden = x[2] if w is not None and len(w) == 2 and ctx.equal(x[2], w[1]) is True else None
    if hidden is None:
        ctx.because("the hidden size is the weights' width by the documentation, the input's by the schema")
    return [(x[0], x[1], hidden)]


_LF = ["int8[B,S,64]", _SC, "int8[64,192]", _SC, "float[192]", _SC, _SC, "float16[B,S]", "int8[64,192]", _SC,
       "float[192]", _SC, "int32[B,S]", _SC]  # fmt: skip
_LF_ORD = {"num_heads": 4, "window": 32, "order_input": 1, "order_output": 1, "order_weight": 0,
           "order_global_weight": 0}  # fmt: skip


@operator(
    "QOrderedLongformerAttention",
    "input:Q scale_input:S weight:Q scale_weight:S bias:S scale_bias:S scale_qkv_gemm:S mask:F global_weight:Q "
    "scale_global_weight:S global_bias:S scale_global_gemm:S global:G scale_output:S",
    "output:Q",
    domain=MS,
    types={"Q": _Q, "S": _S, "G": INT32, "F": ("tensor(float16)",)},
    attrs={"num_heads": (INT, REQUIRED), "order_global_weight": (INT, REQUIRED), **_ORDERS, "window": (INT, REQUIRED)},
    examples=[
        case(_LF, ["int8[B,S,64]"], attrs=_LF_ORD),
        case([_LF[0], _LF[1], "int8[32,96]", *_LF[3:]], ["int8[B,S,64]"], attrs=_LF_ORD, error="shape-mismatch"),
    ],
)
def qordered_longformer_attention(ctx: RuleContext) -> list:
    """The input's (batch, sequence, hidden); the weights are (hidden, 3 * hidden)."""
    x, w = ctx.shape(0), ctx.shape(2)
    if x is not None and len(x) != 3:
        raise RuleError("shape-mismatch", f"input must be 3-D, has rank {len(x)}")
    if x is not None and w is not None and len(w) == 2:
        same_dim(ctx, w[0], x[2], "the weights' rows and the hidden size")
    return [x]


@operator(
    "QuantizeBFP",
    "x:T1",
    "y:T2 shape:T3 strides:T3",
    domain=MS,
    types={"T1": FLOAT_TYPES, "T2": ("tensor(uint8)",), "T3": ("tensor(int64)",)},
    attrs={"bfp_type": (INT, REQUIRED), "block_dim": (INT, -1)},
    examples=[
        case(["float[B,64]"], ["uint8[?]", "int64[2]={B,64}", "int64[2]"], bfp_type=1),
        case(["bfloat16[*]"], ["uint8[?]", "int64[?]", "int64[?]"], bfp_type=1),
    ],
)
def quantize_bfp(ctx: RuleContext) -> list:
    """y: 1-D bytes (their count depends on bfp_type's format); shape: x's shape as a tensor;
    strides: one per axis."""
    x = ctx.shape(0)
    ctx.because("the byte count of a BFP tensor depends on bfp_type's format")
    if x is None:
        return [(None,), (None,), (None,)]
    n = len(x)
    return [(None,), Value(TensorType(TensorProto.INT64, (n,)), Known((n,), tuple(x))), (n,)]
