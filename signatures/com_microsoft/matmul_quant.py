"""Matrix products with quantized or packed weights, and the integer and float-8 products.

The weight-only quantized MatMuls describe their logical weight (K, N) by attributes or by the
packed weight's shape and multiply ``A (..., K)`` into ``Y (..., N)``. MatMulBnb4, MatMulFpQ4
and GatherPacked run on onnxruntime's CPU kernels (tests/test_contrib_a_runtime.py); the others
(MatMulBlockQuantizedFp4Weight/Fp8Weight, the fused MatMulNBitsMlp/Qkv/QLoRA, MatMulPacked,
GemmFloat8, MulInteger) have GPU kernels only, and their rules follow the schemas and the
inference functions onnxruntime registers with them, not a kernel.
"""

from __future__ import annotations

from onnx import TensorProto

from infer.contract.context import RuleContext, RuleError
from infer.core import dims as D
from infer.core.dims import Dim
from infer.core.types import TensorType
from signatures.ai_onnx.attention import check_rank
from signatures.ai_onnx.linalg import gemm_product
from signatures.com_microsoft import F32, FLOAT, FLOAT_TYPES, INT, INT8_TYPES, INT32, MS, REQUIRED, STRING
from signatures.com_microsoft.common import Shape, in_range
from signatures.kit.helpers import broadcast, same_dim
from signatures.kit.operator import case, operator

_U8 = ("tensor(uint8)",)
_HALF = ("tensor(float16)", "tensor(bfloat16)")
_F8_OR_FLOAT = ("tensor(float8e4m3fn)", "tensor(float8e5m2)", "tensor(float16)", "tensor(bfloat16)", "tensor(float)")

_NBITS = {"accuracy_level": (INT, 0), "block_size": (INT, REQUIRED), "bits": (INT, 4), "K": (INT, REQUIRED)}


def _vector_product(ctx: RuleContext, a: Shape | None, k: Dim, n: Dim) -> Shape | None:
    """``A (..., K)`` times a (K, N) weight: ``(..., N)``; a 1-D A gives ``(N,)``."""
    if a is None:
        return None
    if not a:
        raise RuleError("shape-mismatch", f"{ctx.op_type}: A must have rank >= 1")
    if k is not None:
        same_dim(ctx, a[-1], k, "A's last extent and K")
    return a[:-1] + (n,)


def _positive(ctx: RuleContext, *names: str) -> list[int]:
    values = [ctx.require(name) for name in names]
    for name, v in zip(names, values):
        if v <= 0:
            raise RuleError("bad-attribute", f"{ctx.op_type}: {name} must be positive, is {v}")
    return values


@operator(
    "MatMulBnb4",
    "A:T1 B:T2 absmax:T1",
    "Y:T1",
    domain=MS,
    types={"T1": FLOAT_TYPES, "T2": _U8},
    attrs={
        "transB": (INT, 1),
        "training_mode": (INT, 0),
        "block_size": (INT, REQUIRED),
        "quant_type": (INT, REQUIRED),
        "N": (INT, REQUIRED),
        "K": (INT, REQUIRED),
    },
    examples=[
        case(["float[B,S,32]", "uint8[128]", "float[16]"], ["float[B,S,8]"], K=32, N=8, block_size=16, quant_type=1),
        case(
            ["float16[B,S,8]", "uint8[128]", "float16[16]"],
            ["float16[B,S,32]"],
            K=32,
            N=8,
            block_size=16,
            quant_type=0,
            transB=0,
        ),
        case(
            ["float[B,S,33]", "uint8[128]", "float[16]"],
            ["float[B,S,8]"],
            K=32,
            N=8,
            block_size=16,
            quant_type=1,
            error="shape-mismatch",
        ),
        case(
            ["float[B,S,32]", "uint8[127]", "float[16]"],
            ["float[*]"],
            K=32,
            N=8,
            block_size=16,
            quant_type=1,
            error="shape-mismatch",
        ),
        case(
            ["float[B,S,32]", "uint8[128]", "float[16]"],
            ["float[*]"],
            K=32,
            N=8,
            block_size=16,
            quant_type=2,
            error="bad-attribute",
        ),
    ],
)
def matmul_bnb4(ctx: RuleContext) -> list:
    """transB (the default): A (..., K) -> (..., N); transB=0: A (..., N) -> (..., K).

    B packs N * K 4-bit values, two a byte; the kernel refuses fewer than ``ceil(N K / 2)`` bytes.
    """
    k, n = _positive(ctx, "K", "N")
    in_range(ctx, "quant_type", 0, 0, 1)  # FP4 or NF4
    b = ctx.shape(1)
    size = D.product(b) if b is not None and all(isinstance(d, int) for d in b) else None
    if isinstance(size, int) and size < (n * k + 1) // 2:
        raise RuleError("shape-mismatch", f"B holds {size} bytes; K={k} and N={n} need {(n * k + 1) // 2}")
    if ctx.attr("transB", 1):
        return [_vector_product(ctx, ctx.shape(0), k, n)]
    return [_vector_product(ctx, ctx.shape(0), n, k)]


# Bytes of one block of 32 values in MLAS's Q4 blob layouts: 0 symmetric (scale), 1 with a zero point.
_FPQ4_BLOCK_BYTES = {0: 20, 1: 21}


@operator(
    "MatMulFpQ4",
    "A:T1 B:T2 B_shape:T3",
    "Y:T1",
    domain=MS,
    types={"T1": F32, "T2": _U8, "T3": ("tensor(int64)",)},
    attrs={"blk_quant_type": (INT, 1)},
    examples=[
        case(["float[B,S,40]", "uint8[336]", "int64[2]={40,8}"], ["float[B,S,8]"]),
        case(["float[40]", "uint8[320]", "int64[2]={40,8}"], ["float[8]"], blk_quant_type=0),
        case(["float[B,S,K]", "uint8[X]", "int64[2]"], ["float[B,S,?]"]),
        case(["float[B,S,40]", "uint8[300]", "int64[2]={40,8}"], ["float[*]"], error="shape-mismatch"),
    ],
)
def matmul_fpq4(ctx: RuleContext) -> list:
    """A (..., K) times the (K, N) weight whose shape B_shape holds: (..., N)."""
    shape = ctx.known_dims(2)
    if shape is None:
        ctx.contents_unknown(2, "the weight's shape (K, N)")
        a = ctx.shape(0)
        return [None if a is None else a[:-1] + (None,)]
    if len(shape) != 2:
        raise RuleError("shape-mismatch", f"B_shape must hold (K, N), holds {len(shape)} values")
    k, n = shape
    blob = ctx.shape(1)
    per_block = _FPQ4_BLOCK_BYTES.get(ctx.attr("blk_quant_type", 1))
    if (
        per_block
        and blob is not None
        and all(isinstance(d, int) for d in blob)
        and isinstance(k, int)
        and isinstance(n, int)
    ):
        want = n * -(-k // 32) * per_block
        if D.product(blob) != want:
            raise RuleError(
                "shape-mismatch", f"the packed weight holds {D.product(blob)} bytes, (K, N) = ({k}, {n}) needs {want}"
            )
    return [_vector_product(ctx, ctx.shape(0), k, n)]


@operator(
    "MatMulBlockQuantizedFp4Weight",
    "A:T B:T1 weight_scale:T2 weight_scale_2:T3 input_scale?:T3 bias?:T",
    "Y:T",
    domain=MS,
    types={"T": _HALF, "T1": _U8, "T2": _U8, "T3": F32},
    attrs={"block_size": (INT, 16)},
    examples=[
        case(["float16[B,S,32]", "uint8[8,16]", "uint8[8,2]", "float[]"], ["float16[B,S,8]"]),
        case(["bfloat16[B,S,30]", "uint8[8,16]", "uint8[8,2]", "float[]"], ["bfloat16[B,S,8]"], error="shape-mismatch"),
    ],
)
def matmul_fp4_weight(ctx: RuleContext) -> list:
    """From the schema only (CUDA kernel): B (N, K/2) packs two values a byte; Y (..., N)."""
    b = check_rank(ctx, 1, 2, "B")
    n, k = (None, None) if b is None else (b[0], D.mul(b[1], 2))
    return [_vector_product(ctx, ctx.shape(0), k, n)]


@operator(
    "MatMulBlockQuantizedFp8Weight",
    "A:T B:T1 b_scale:T2 a_scale?:T2 bias?:T",
    "Y:T",
    domain=MS,
    types={"T": _HALF, "T1": ("tensor(float8e4m3fn)",), "T2": F32},
    attrs={"block_size": (INT, 128)},
    examples=[
        case(["bfloat16[T,K]", "float8e4m3fn[N,K]", "float[N,1]"], ["bfloat16[T,N]"]),
        case(["float16[T,32]", "float8e4m3fn[8,30]", "float[8,1]"], ["float16[T,8]"], error="shape-mismatch"),
    ],
)
def matmul_fp8_weight(ctx: RuleContext) -> list:
    """From the schema only (CUDA kernel): B (N, K); Y (..., N)."""
    b = check_rank(ctx, 1, 2, "B")
    n, k = (None, None) if b is None else (b[0], b[1])
    return [_vector_product(ctx, ctx.shape(0), k, n)]


_NB = {"K": 32, "N": 8, "block_size": 32}


@operator(
    "MatMulNBitsMlp",
    "A:T1 skip?:T1 norm_scale?:T1 gate_B:T2 gate_scales:T1 gate_bias?:T1 up_B:T2 up_scales:T1 up_bias?:T1",
    "Y:T1 input_skip_bias_sum?:T1",
    domain=MS,
    types={"T1": FLOAT_TYPES, "T2": _U8},
    attrs={**_NBITS, "activation": (STRING, REQUIRED), "N": (INT, REQUIRED), "epsilon": (FLOAT, 1e-5)},
    examples=[
        case(
            [
                "float[B,S,32]",
                "float[B,S,32]",
                "float[32]",
                "uint8[8,1,16]",
                "float[8,1]",
                "",
                "uint8[8,1,16]",
                "float[8,1]",
            ],
            ["float[B,S,8]", "float[B,S,32]"],
            attrs={**_NB, "activation": "silu"},
        )
    ],
)
def matmul_nbits_mlp(ctx: RuleContext) -> list:
    """From the schema only (WebGPU kernel): Y (..., N); the residual sum has A's shape."""
    k, n = _positive(ctx, "K", "N")
    a = ctx.shape(0)
    return [_vector_product(ctx, a, k, n), a][: ctx.n_outputs]


@operator(
    "MatMulNBitsQkv",
    "A:T1 skip?:T1 norm_scale:T1 q_B:T2 q_scales:T1 q_bias?:T1 k_B:T2 k_scales:T1 k_bias?:T1 v_B:T2 v_scales:T1 "
    "v_bias?:T1",
    "Q:T1 K:T1 V:T1 input_skip_bias_sum?:T1",
    domain=MS,
    types={"T1": FLOAT_TYPES, "T2": _U8},
    attrs={**_NBITS, "Nkv": (INT, REQUIRED), "Nq": (INT, REQUIRED), "epsilon": (FLOAT, 1e-6)},
    examples=[
        case(
            [
                "float16[B,S,32]",
                "",
                "float16[32]",
                "uint8[8,1,16]",
                "float16[8,1]",
                "",
                "uint8[4,1,16]",
                "float16[4,1]",
                "",
                "uint8[4,1,16]",
                "float16[4,1]",
            ],
            ["float16[B,S,8]", "float16[B,S,4]", "float16[B,S,4]"],
            K=32,
            Nq=8,
            Nkv=4,
            block_size=32,
        )
    ],
)
def matmul_nbits_qkv(ctx: RuleContext) -> list:
    """From the schema only (WebGPU kernel): Q (..., Nq), K and V (..., Nkv), the sum A's shape."""
    k, nq, nkv = _positive(ctx, "K", "Nq", "Nkv")
    a = ctx.shape(0)
    q, kv = _vector_product(ctx, a, k, nq), _vector_product(ctx, a, k, nkv)
    return [q, kv, kv, a][: ctx.n_outputs]


@operator(
    "MatMulNBitsQLoRA",
    "X:T W:TQ scales:T lora_A:TQ lora_A_scales:T lora_B:TQ lora_B_scales:T",
    "Y:T",
    domain=MS,
    types={"T": ("tensor(float16)", "tensor(float)"), "TQ": _U8},
    attrs={
        "lora_bits": (INT, 8),
        "accuracy_level": (INT, 0),
        "block_size": (INT, 32),
        "bits": (INT, 4),
        "lora_block_size": (INT, 32),
        "N": (INT, REQUIRED),
        "K": (INT, REQUIRED),
    },
    examples=[
        case(
            [
                "float[B,S,32]",
                "uint8[8,1,16]",
                "float[8,1]",
                "uint8[4,1,32]",
                "float[4,1]",
                "uint8[8,1,32]",
                "float[8,1]",
            ],
            ["float[B,S,8]"],
            K=32,
            N=8,
        ),
        case(
            [
                "float[B,S,30]",
                "uint8[8,1,16]",
                "float[8,1]",
                "uint8[4,1,32]",
                "float[4,1]",
                "uint8[8,1,32]",
                "float[8,1]",
            ],
            ["float[B,S,8]"],
            K=32,
            N=8,
            error="shape-mismatch",
        ),
    ],
)
def matmul_nbits_qlora(ctx: RuleContext) -> list:
    """From the schema only (GPU kernels): X (..., K) -> (..., N)."""
    k, n = _positive(ctx, "K", "N")
    return [_vector_product(ctx, ctx.shape(0), k, n)]


@operator(
    "MatMulPacked",
    "A:T1 B:T2 global_scale?:Tscale",
    "Y:T1",
    domain=MS,
    types={"T1": _HALF, "T2": _U8, "Tscale": F32},
    attrs={
        "activation_type": (STRING, "none"),
        "packed_type": (INT, REQUIRED),
        "N": (INT, REQUIRED),
        "K": (INT, REQUIRED),
    },
    examples=[case(["float16[B,S,32]", "uint8[8,20]"], ["float16[B,S,8]"], K=32, N=8, packed_type=2)],
)
def matmul_packed(ctx: RuleContext) -> list:
    """From the schema only (CUDA kernel): A (..., K) times the packed (N, K) weight: (..., N)."""
    k, n = _positive(ctx, "K", "N")
    b = check_rank(ctx, 1, 2, "B")
    if b is not None:
        same_dim(ctx, b[0], n, "B's rows and N")
    return [_vector_product(ctx, ctx.shape(0), k, n)]


# Row bytes of K values in the packed formats whose layout is fixed: the IDs are ggml's types
# (F32, F16, Q4_0, Q8_0, BF16): (block size, bytes per block).
_PACKED_ROWS = {0: (1, 4), 1: (1, 2), 2: (32, 18), 8: (32, 34), 30: (1, 2)}
_OUTPUT_DTYPES = (TensorProto.BFLOAT16, TensorProto.FLOAT16, TensorProto.FLOAT)


@operator(
    "GatherPacked",
    "data:T1 indices:Tind",
    "output:T2",
    domain=MS,
    types={
        "T1": _U8,
        "T2": ("tensor(bfloat16)", "tensor(float16)", "tensor(float)"),
        "Tind": ("tensor(int32)", "tensor(int64)"),
    },
    attrs={"packed_type": (INT, REQUIRED), "output_dtype": (INT, 16), "K": (INT, REQUIRED)},
    examples=[
        case(["uint8[V,18]", "int64[B,S]"], ["bfloat16[B,S,32]"], K=32, packed_type=2),
        case(["uint8[V,R]", "int32[N]"], ["float[N,64]"], K=64, packed_type=20, output_dtype=1),
        case(
            ["uint8[V,64]", "int64[B,S]"],
            ["float[B,S,32]"],
            K=32,
            packed_type=0,
            output_dtype=1,
            error="shape-mismatch",
        ),
        case(["uint8[V,64]", "int64[B,S]"], ["unknown"], K=32, packed_type=1, output_dtype=6, error="bad-attribute"),
    ],
)
def gather_packed(ctx: RuleContext) -> list:
    """Rows of the packed table ``data (vocab, row_bytes)`` dequantized: ``(*indices, K)``, of
    ``output_dtype`` (bfloat16 by default)."""
    (k,) = _positive(ctx, "K")
    dtype = ctx.attr("output_dtype", TensorProto.BFLOAT16)
    if dtype not in _OUTPUT_DTYPES:
        raise RuleError("bad-attribute", f"GatherPacked: output_dtype {dtype} is not bfloat16, float16 or float")
    data = check_rank(ctx, 0, 2, "data")
    layout = _PACKED_ROWS.get(ctx.attr("packed_type"))
    if layout is not None:
        block, size = layout
        if k % block:
            raise RuleError("bad-attribute", f"GatherPacked: K {k} is not a multiple of the format's block {block}")
        if data is not None:
            same_dim(ctx, data[1], k // block * size, "data's row bytes and the packed format's")
    idx = ctx.shape(1)
    return [TensorType(dtype, None if idx is None else (*idx, k))]


_GEMM_F8_TYPES = (TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT8E5M2, TensorProto.FLOAT16, TensorProto.BFLOAT16,
                  TensorProto.FLOAT)  # fmt: skip


@operator(
    "GemmFloat8",
    "A:TA B:TB C?:TC scaleA?:TS scaleB?:TS scaleY?:TS",
    "Y:TR",
    domain=MS,
    types={
        "TA": _F8_OR_FLOAT,
        "TB": _F8_OR_FLOAT,
        "TC": ("tensor(float16)", "tensor(bfloat16)", "tensor(float)"),
        "TR": _F8_OR_FLOAT,
        "TS": F32,
    },
    attrs={
        "activation": (STRING, None),
        "dtype": (INT, 1),
        "beta": (FLOAT, 0.0),
        "transB": (INT, 0),
        "alpha": (FLOAT, 1.0),
        "transA": (INT, 0),
    },
    examples=[
        case(["float8e4m3fn[M,K]", "float8e4m3fn[N,K]", "", "float[]", "float[]", "float[]"], ["float[M,N]"], transB=1),
        case(["float[K,M]", "float[N,K]"], ["float16[M,N]"], transA=1, transB=1, dtype=10),
        case(["float[M,K]", "float[K,N]"], ["unknown"], dtype=6, error="bad-attribute"),
    ],
)
def gemm_float8(ctx: RuleContext) -> list:
    """From the schema only (CUDA kernel): Gemm's (M, N), of the ``dtype`` attribute's type."""
    dtype = ctx.attr("dtype", TensorProto.FLOAT)
    if dtype not in _GEMM_F8_TYPES:
        raise RuleError("bad-attribute", f"GemmFloat8: dtype {dtype} is not one of the output types")
    m, n = gemm_product(ctx, ctx.shape(0), ctx.shape(1))
    return [TensorType(dtype, (m, n))]


@operator(
    "MulInteger",
    "A:T A_zero_point?:T B:T B_zero_point?:T",
    "C:T1",
    domain=MS,
    types={"T": INT8_TYPES, "T1": INT32},
    examples=[
        case(["uint8[N,C]", "", "uint8[C]"], ["int32[N,C]"]),
        case(["int8[N,3]", "int8[]", "int8[4]", "int8[]"], ["int32[N,?]"], error="shape-mismatch"),
    ],
)
def mul_integer(ctx: RuleContext) -> list:
    """From the schema only (no CPU kernel): A (input 0) and B (input 2) broadcast, int32."""
    out = broadcast(ctx, ctx.shape(0), ctx.shape(2))
    if out is None:
        ctx.because("an operand has unknown rank")
    return [out]
