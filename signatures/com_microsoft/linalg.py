"""Matrix products: FusedMatMul, FusedGemm, MatMulNBits and the integer MatMuls.

onnxruntime's graph optimizer folds Transpose and scaling into FusedMatMul; its quantizers
emit MatMulNBits (block-quantized weights) and the dynamic-quantization fusions
DynamicQuantizeMatMul and MatMulIntegerToFloat. All follow numpy matmul on the logical operands.
"""

from __future__ import annotations

from onnx import TensorProto

from infer.contract.context import RuleContext, RuleError
from infer.core.dims import Dim
from infer.core.types import TensorType
from signatures.ai_onnx.linalg import MATMUL, gemm_product
from signatures.com_microsoft import (
    F32,
    FLOAT,
    FLOAT_DOUBLE_BF16,
    FLOAT_TYPES,
    INT,
    INT8_TYPES,
    MS,
    REQUIRED,
    STRING,
    delegate,
)
from signatures.kit.helpers import broadcast, same_dim, unidirectional
from signatures.kit.operator import case, operator

_TRANS = {"transA": (INT, 0), "transB": (INT, 0), "alpha": (FLOAT, 1.0)}
_TRANS_BATCH = {"transBatchA": (INT, 0), "transBatchB": (INT, 0)}
_ACTIVATION = {"activation_alpha": (FLOAT, None), "activation_beta": (FLOAT, None),
               "activation_gamma": (FLOAT, None)}  # fmt: skip

operator(
    "MatMulIntegerToFloat",
    "A:T1 B:T2 a_scale:T3 b_scale:T3 a_zero_point?:T1 b_zero_point?:T2 bias?:T3",
    "Y:T3",
    domain=MS,
    types={
        "T1": ("tensor(int8)", "tensor(uint8)"),
        "T2": ("tensor(int8)", "tensor(uint8)"),
        "T3": ("tensor(float)", "tensor(float16)"),
    },
    rule=MATMUL,
    examples=[
        case(["uint8[B,S,32]", "int8[32,16]", "float[]", "float[16]"], ["float[B,S,16]"]),
        case(["int8[B,S,32]", "int8[32,16]", "float16[]", "float16[]"], ["float16[B,S,16]"]),
    ],
)
operator(
    "DynamicQuantizeMatMul",
    "A:T1 B:T2 b_scale:T1 b_zero_point?:T2 bias?:T1",
    "Y:T1",
    domain=MS,
    types={"T1": F32, "T2": ("tensor(int8)", "tensor(uint8)")},
    rule=MATMUL,
    examples=[case(["float[B,S,32]", "int8[32,16]", "float[]", "int8[]", "float[16]"], ["float[B,S,16]"])],
)
operator(
    "GemmFastGelu",
    "X:T W:T bias?:T",
    "Y:T",
    domain=MS,
    types={"T": FLOAT_TYPES},
    rule=MATMUL,
    examples=[case(["float16[B,S,32]", "float16[32,128]", "float16[128]"], ["float16[B,S,128]"])],
)


@operator(
    "FusedGemm",
    "A:T B:T C?:T",
    "Y:T",
    domain=MS,
    types={
        "T": (
            "tensor(float16)",
            "tensor(float)",
            "tensor(double)",
            "tensor(uint32)",
            "tensor(uint64)",
            "tensor(int32)",
            "tensor(int64)",
        )
    },
    attrs={**_TRANS, "beta": (FLOAT, 1.0), "activation": (STRING, None), **_ACTIVATION},
    examples=[case(["float[N,64]", "float[10,64]", "float[10]"], ["float[N,10]"], transB=1, activation="Relu")],
)
def gemm(ctx: RuleContext) -> list:
    """Gemm (opset 13 semantics): (M, K) x (K, N) after the transposes; C broadcasts to (M, N)."""
    m, n = gemm_product(ctx, ctx.shape(0), ctx.shape(1))
    if ctx.has(2):
        unidirectional(ctx, (m, n), ctx.shape(2))
    return [(m, n)]


def _logical(ctx: RuleContext, s: tuple[Dim, ...], batch: bool, trans: bool, which: str) -> tuple[Dim, ...] | None:
    """The operand FusedMatMul multiplies: dim 0 moved behind the batch dims, then the last two swapped.

    (Checked against onnxruntime for every flag combination at ranks 3 and 4.)
    """
    if batch:
        s = s[1:-1] + (s[0], s[-1])
    if trans:
        if len(s) < 2:
            ctx.because(f"trans{which} on a 1-D operand")
            return None
        s = s[:-2] + (s[-1], s[-2])
    return s


def matmul_dims(ctx: RuleContext, a: tuple[Dim, ...], b: tuple[Dim, ...]) -> tuple[Dim, ...] | None:
    """numpy matmul of two shapes (1-D operands promoted and the promoted axis dropped)."""
    if len(a) == 0 or len(b) == 0:
        raise RuleError("shape-mismatch", "matmul operands must have rank >= 1")
    if len(a) == 1 and len(b) == 1:
        same_dim(ctx, a[0], b[0], "inner dimensions")
        return ()
    if len(a) == 1:
        same_dim(ctx, a[0], b[-2], "inner dimensions")
        return b[:-2] + (b[-1],)
    if len(b) == 1:
        same_dim(ctx, a[-1], b[0], "inner dimensions")
        return a[:-1]
    same_dim(ctx, a[-1], b[-2], "inner dimensions")
    batch = broadcast(ctx, a[:-2], b[:-2])
    return None if batch is None else batch + (a[-2], b[-1])


@operator(
    "FusedMatMul",
    "A:T B:T",
    "Y:T",
    domain=MS,
    types={"T": FLOAT_DOUBLE_BF16},
    attrs={**_TRANS, **_TRANS_BATCH},
    examples=[
        case(["float[B,S,64]", "float[B,T,64]"], ["float[B,S,T]"], transB=1),
        case(["float[B,64,S]", "float[64,10]"], ["float[B,S,10]"], transA=1),
        case(["float[S,B,64]", "float[1,64,10]"], ["float[B,S,10]"], transBatchA=1),
        case(["float[2,3,5,7]", "float[2,3,5,11]"], ["float[3,5,7,11]"], transA=1, transBatchA=1, transBatchB=1),
        case(["float[K]", "float[K,N]"], ["float[N]"]),
        case(["float[S,B,64]", "float[64,10]"], ["float[*]"], transBatchA=1, error="shape-mismatch"),
        case(["float[3,4]", "float[5,6]"], ["float[3,6]"], error="shape-mismatch"),
    ],
)
@operator(
    "TransposeMatMul",
    "A:T B:T",
    "Y:T",
    domain=MS,
    types={"T": FLOAT_DOUBLE_BF16},
    attrs=_TRANS,
    examples=[case(["float16[B,K,M]", "float16[B,N,K]"], ["float16[B,M,N]"], transA=1, transB=1)],
)
@operator(
    "FusedMatMulActivation",
    "A:T B:T",
    "Y:T",
    domain=MS,
    types={"T": FLOAT_DOUBLE_BF16},
    attrs={**_TRANS, **_TRANS_BATCH, **_ACTIVATION, "activation": (STRING, REQUIRED), "activation_axis": (INT, None)},
    examples=[case(["float[M,K]", "float[K,N]"], ["float[M,N]"], activation="Relu")],
)
def fused_matmul(ctx: RuleContext) -> list:
    a, b = ctx.shape(0), ctx.shape(1)
    if a is None or b is None:
        ctx.because("an input has unknown rank")
        return [None]
    tba, tbb = bool(ctx.attr("transBatchA", 0)), bool(ctx.attr("transBatchB", 0))
    if (tba or tbb) and (len(a) != len(b) or len(a) < 3):
        raise RuleError("shape-mismatch", f"transBatch needs operands of one rank >= 3, got {len(a)} and {len(b)}")
    la = _logical(ctx, a, tba, bool(ctx.attr("transA", 0)), "A")
    lb = _logical(ctx, b, tbb, bool(ctx.attr("transB", 0)), "B")
    if la is None or lb is None:
        return [None]
    return [matmul_dims(ctx, la, lb)]


@operator(
    "MatMulInteger16",
    "A:T1 B:T2",
    "Y:T3",
    domain=MS,
    types={
        "T1": ("tensor(int16)", "tensor(uint16)"),
        "T2": ("tensor(int16)", "tensor(uint16)"),
        "T3": ("tensor(int32)", "tensor(uint32)"),
    },
    examples=[case(["int16[M,K]", "int16[K,N]"], ["int32[M,N]"])],
)
def matmul_integer16(ctx: RuleContext) -> list:
    """int16 times int16 accumulates in int32 (the kernel onnxruntime has); other pairs not claimed."""
    a, b = ctx.shape(0), ctx.shape(1)
    shape = matmul_dims(ctx, a, b) if a is not None and b is not None else None
    signed = ctx.elem(0) == TensorProto.INT16 and ctx.elem(1) == TensorProto.INT16
    return [TensorType(TensorProto.INT32 if signed else None, shape)]


@operator(
    "MatMulNBits",
    "A:T1 B:T2 scales:T1 zero_points?:T3 g_idx?:T4 bias?:T1",
    "Y:T1",
    domain=MS,
    types={
        "T1": FLOAT_TYPES,
        "T2": ("tensor(uint8)",),
        "T3": ("tensor(uint8)", "tensor(float16)", "tensor(float)", "tensor(bfloat16)"),
        "T4": ("tensor(int32)",),
    },
    attrs={
        "K": (INT, REQUIRED),
        "N": (INT, REQUIRED),
        "bits": (INT, 4),
        "block_size": (INT, REQUIRED),
        "accuracy_level": (INT, 0),
        "weight_prepacked": (INT, 0),
    },
    examples=[
        case(["float[B,S,32]", "uint8[16,2,8]", "float[16,2]"], ["float[B,S,16]"], K=32, N=16, bits=4, block_size=16),
        case(
            ["float16[T,64]", "uint8[96,2,16]", "float16[96,2]", "uint8[96,1]", "", "float16[96]"],
            ["float16[T,96]"],
            K=64,
            N=96,
            block_size=32,
        ),
        case(
            ["float[B,S,64]", "uint8[16,2,8]", "float[16,2]"],
            ["float[B,S,16]"],
            K=32,
            N=16,
            block_size=16,
            error="shape-mismatch",
        ),
        case(
            ["float[B,S,32]", "uint8[16,2,8]", "float[16,2]"], ["float[*]"], K=32, block_size=16, error="bad-attribute"
        ),
    ],
)
def matmul_nbits(ctx: RuleContext) -> list:
    """A (..., K) times the (K, N) weights the attributes describe: (..., N)."""
    a = ctx.shape(0)
    k, n = ctx.require("K"), ctx.require("N")
    if a is None:
        return [None]
    if not a:
        raise RuleError("shape-mismatch", "A must have rank >= 1")
    same_dim(ctx, a[-1], k, "A's last dimension and K")
    return [a[:-1] + (n,)]


@operator(
    "QGemm",
    "A:TA a_scale:T a_zero_point:TA B:TB b_scale:T b_zero_point:TB C?:TC y_scale?:T y_zero_point?:TYZ",
    "Y:TY",
    domain=MS,
    types={
        "T": F32,
        "TA": INT8_TYPES,
        "TB": INT8_TYPES,
        "TC": ("tensor(int32)",),
        "TYZ": INT8_TYPES,
        "TY": ("tensor(float)",) + INT8_TYPES,
    },
    attrs={"transA": (INT, 0), "transB": (INT, 0), "alpha": (FLOAT, 1.0)},
    examples=[
        case(
            ["uint8[N,64]", "float[]", "uint8[]", "int8[10,64]", "float[]", "int8[]", "int32[10]"],
            ["float[N,10]"],
            transB=1,
        ),
        case(
            ["uint8[N,64]", "float[]", "uint8[]", "int8[64,10]", "float[]", "int8[]", "", "float[]", "uint8[]"],
            ["uint8[N,10]"],
        ),
        case(
            ["uint8[N,64]", "float[]", "uint8[]", "int8[32,10]", "float[]", "int8[]"],
            ["float[N,10]"],
            error="shape-mismatch",
        ),
    ],
)
def qgemm(ctx: RuleContext) -> list:
    """Gemm of A (input 0) and B (input 3); float without y_scale, else y_zero_point's type."""
    out = delegate(ctx, gemm, (0, 3, 6))[0]
    if not ctx.has(7):
        return [TensorType(TensorProto.FLOAT, out)]
    return [TensorType(ctx.elem(8) if ctx.has(8) else None, out)]
