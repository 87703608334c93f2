"""Dequantization from layouts other than a plain tensor: DequantizeBFP, DequantizeWithOrder.

DequantizeBFP unpacks block floating point bytes into the tensor whose shape its ``shape`` input
holds; DequantizeWithOrder reads an int8 matrix in a cuBLASLt order and keeps its logical shape.
The output types are the ``dtype`` and ``to`` attributes. Neither has a CPU kernel: from the
schemas and onnxruntime's inference functions, not cross-checked by running.
"""

from __future__ import annotations

from onnx import TensorProto

from infer.contract.context import RuleContext, RuleError
from infer.core.types import TensorType
from signatures.ai_onnx.attention import check_rank
from signatures.com_microsoft import F32, FLOAT_TYPES, INT, MS, REQUIRED
from signatures.kit.helpers import vector_length
from signatures.kit.operator import case, operator

_BFP_OUT = (TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16)


@operator(
    "DequantizeBFP",
    "x:T1 shape:T2 strides:T2",
    "y:T3",
    domain=MS,
    types={"T1": ("tensor(uint8)",), "T2": ("tensor(int64)",), "T3": FLOAT_TYPES},
    attrs={"dtype": (INT, 1), "block_dim": (INT, -1), "bfp_type": (INT, REQUIRED)},
    examples=[
        case(["uint8[N]", "int64[2]={64,128}", "int64[2]"], ["float[64,128]"], bfp_type=1),
        case(["uint8[N]", "int64[3]", "int64[3]"], ["bfloat16[?,?,?]"], bfp_type=1, dtype=16),
        case(["uint8[N]", "int64[2]", "int64[2]"], ["unknown"], bfp_type=1, dtype=6, error="bad-attribute"),
    ],
)
def dequantize_bfp(ctx: RuleContext) -> list:
    """y has the shape ``shape`` holds, of type ``dtype`` (float by default)."""
    dtype = ctx.attr("dtype", TensorProto.FLOAT)
    if dtype not in _BFP_OUT:
        raise RuleError("bad-attribute", f"DequantizeBFP: dtype {dtype} is not float, float16 or bfloat16")
    check_rank(ctx, 0, 1, "x")
    check_rank(ctx, 1, 1, "shape")
    dims = ctx.known_dims(1)
    if dims is None:
        ctx.contents_unknown(1, "the dequantized shape")
        rank = vector_length(ctx, 1)
        return [TensorType(dtype, None if rank is None else (None,) * rank)]
    return [TensorType(dtype, tuple(dims))]


@operator(
    "DequantizeWithOrder",
    "input:Q scale_input:S",
    "output:F",
    domain=MS,
    types={"Q": ("tensor(int8)",), "F": ("tensor(float16)", "tensor(float)"), "S": F32},
    attrs={"to": (INT, REQUIRED), "order_output": (INT, REQUIRED), "order_input": (INT, REQUIRED)},
    examples=[
        case(["int8[B,R,C]", "float[]"], ["float16[B,R,C]"], to=10, order_input=1, order_output=1),
        case(["int8[R,C]", "float[]"], ["unknown"], to=6, order_input=1, order_output=1, error="bad-attribute"),
    ],
)
def dequantize_with_order(ctx: RuleContext) -> list:
    """The input's shape (an order is a memory layout), of type ``to`` (float or float16)."""
    to = ctx.require("to")
    if to not in (TensorProto.FLOAT, TensorProto.FLOAT16):
        raise RuleError("bad-attribute", f"DequantizeWithOrder: to {to} is not float or float16")
    return [TensorType(to, ctx.shape(0))]
