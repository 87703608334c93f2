"""Quantization: QuantizeLinear, DequantizeLinear and the integer / quantized linear operators.

The (de)quantizers keep their input's shape; what varies across versions is the element type
(``output_dtype``, the zero point's type, the scale's type) and which scale shapes are accepted
(per-tensor, per-axis, blocked). The convolutions are Conv's (``signatures.kit.windows``).
"""

from __future__ import annotations

from onnx import TensorProto

from infer.contract.context import RuleContext, RuleError
from infer.core import dims as D
from infer.core.dims import Dim
from infer.core.types import TensorType
from signatures.kit.helpers import norm_axis, same_dim
from signatures.kit.registry import example, rule, shape_rule
from signatures.kit.windows import conv_output

Shape = tuple[Dim, ...]

# The element types a dequantized output may have when it follows the scale (T3 of opset 23+).
_DEQUANT_OUT = {TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16}


# -- scale and zero-point shapes ------------------------------------------------------------------


def _check_granularity(ctx: RuleContext, x: Shape | None, scale_i: int, zp_i: int) -> None:
    """Report scale (and zero-point) shapes that fit no granularity the operator allows.

    Per-tensor: a scalar (onnxruntime also takes a 1-element vector). Per-axis: a vector as long
    as ``x`` along ``axis``. Blocked (``block_size`` > 0, opset 21+): ``x``'s rank, ``x``'s extents
    except along ``axis``, where ``block_size`` must lie in ``[ceil(D/S), ceil(D/(S-1)) - 1]``.
    """
    scale, zp = ctx.shape(scale_i), ctx.shape(zp_i) if ctx.has(zp_i) else None
    if scale is not None and zp is not None:
        # Runtimes take a 1-element tensor of any rank where a scalar is expected.
        if len(scale) == len(zp):
            for a, b in zip(scale, zp):
                same_dim(ctx, a, b, "scale and zero-point extents")
        elif all(isinstance(D.product(s), int) and D.product(s) != 1 for s in (scale, zp)):
            raise RuleError("shape-mismatch", f"scale of rank {len(scale)} and zero point of rank {len(zp)}")
    if not x or not scale or D.product(scale) == 1:
        return  # unknown, or per-tensor (a scalar or 1-element scale, or a scalar input)
    block = ctx.attr("block_size", 0) if ctx.version >= 21 else 0
    if ctx.version < 13:
        return  # scalars only, nothing to relate to x
    axis = norm_axis(ctx, ctx.attr("axis", 1), len(x))
    if block and block > 0:
        if len(scale) != len(x):
            raise RuleError("shape-mismatch", f"blocked scale of rank {len(scale)} for an input of rank {len(x)}")
        for i, (a, b) in enumerate(zip(x, scale)):
            if i != axis:
                same_dim(ctx, a, b, f"input and scale extents on axis {i}")
        d, s = x[axis], scale[axis]
        if isinstance(d, int) and isinstance(s, int) and s > 0:
            low, high = -(-d // s), (-(-d // (s - 1)) - 1 if s > 1 else None)
            if block < low or (high is not None and block > high):
                raise RuleError(
                    "shape-mismatch", f"block_size {block} does not fit {s} blocks over extent {d} on axis {axis}"
                )
        return
    if len(scale) != 1:
        raise RuleError("shape-mismatch", f"scale of rank {len(scale)} without block_size (scalar or 1-D)")
    d, s = x[axis], scale[0]
    # A 1-element vector works as per-tensor, so a symbolic length may be 1: only ints can clash.
    if isinstance(d, int) and isinstance(s, int) and s != d:
        raise RuleError("shape-mismatch", f"per-axis scale of length {s} for extent {d} on axis {axis}")


def _dtype_attr(ctx: RuleContext, since: int) -> int | None:
    """The ``output_dtype`` attribute when the version has it and it is set (0 means unset)."""
    if ctx.version < since:
        return None
    v = ctx.attr("output_dtype", 0)
    return int(v) if v else None


@rule("QuantizeLinear", since=10)
def quantize_linear(ctx: RuleContext) -> list:
    """Same shape as ``x``; the type is ``output_dtype``, else the zero point's, else uint8."""
    x = ctx.shape(0)
    _check_granularity(ctx, x, 1, 2)
    attr = _dtype_attr(ctx, 21)
    zp = ctx.elem(2) if ctx.has(2) else None
    if attr is not None and zp is not None and attr != zp:
        raise RuleError("bad-attribute", f"output_dtype {attr} differs from the zero point's type {zp}")
    if attr is not None:
        elem: int | None = attr
    elif ctx.has(2):
        elem = zp  # unknown when the zero point's type is
    else:
        elem = TensorProto.UINT8
    return [TensorType(elem, x)]


@rule("DequantizeLinear", since=10)
def dequantize_linear(ctx: RuleContext) -> list:
    """Same shape as ``x``; float before opset 19, then the scale's type or ``output_dtype``."""
    x = ctx.shape(0)
    _check_granularity(ctx, x, 1, 2)
    if ctx.version < 19:
        return [TensorType(TensorProto.FLOAT, x)]
    attr = _dtype_attr(ctx, 23)
    scale = ctx.elem(1)
    if attr is not None:
        elem: int | None = attr
    elif ctx.version < 23 or scale in _DEQUANT_OUT:
        elem = scale
    else:
        elem = None  # e.g. a float8e8m0 scale: no output type follows from it
    return [TensorType(elem, x)]


@rule("DynamicQuantizeLinear", since=11)
def dynamic_quantize_linear(ctx: RuleContext) -> list:
    return [ctx.shape(0), (), ()]


# -- products -------------------------------------------------------------------------------------

# MatMul's four forms (numpy semantics) on inputs at positions 0 and ``b``; the rest are skipped.
_MATMUL_FORMS = [
    ("A[k]", "B[k]", "Y[]"),
    ("A[k]", "B[*b, k, m]", "Y[*b, m]"),
    ("A[*a, n, k]", "B[k]", "Y[*a, n]"),
    ("A[*a, n, k]", "B[*b, k, m]", "Y[*broadcast(a, b), n, m]"),
]


def _matmul_forms(b_index: int) -> list[str]:
    gap = ", _" * (b_index - 1)
    return [f"{a}{gap}, {b} -> {y}" for a, b, y in _MATMUL_FORMS]


shape_rule("MatMulInteger", _matmul_forms(1), since=10)
shape_rule("QLinearMatMul", _matmul_forms(3), since=10)


@rule("ConvInteger", since=10)
def conv_integer(ctx: RuleContext) -> list:
    """Conv's output shape (``signatures.kit.windows``: the same checks as Conv's)."""
    return [conv_output(ctx, 0, 1)]


@rule("QLinearConv", since=10)
def qlinear_conv(ctx: RuleContext) -> list:
    """Conv's output shape with the weights at input 3 and the bias at input 8."""
    return [conv_output(ctx, 0, 3, bias_index=8)]


# -- examples -------------------------------------------------------------------------------------

example("QuantizeLinear", ["float[N,3]", "float[]"], ["uint8[N,3]"], opset=10)
example("QuantizeLinear", ["float[N,3]", "float[]", "int8[]"], ["int8[N,3]"], opset=10)
example("QuantizeLinear", ["float[N,3,H]", "float[3]", "uint8[3]"], ["uint8[N,3,H]"], opset=13)
example("QuantizeLinear", ["float[N,3,H]", "float[4]", "uint8[4]"], ["uint8[*]"], opset=13, error="shape-mismatch")
example("QuantizeLinear", ["float[N,3]", "float[]", "float8e4m3fn[]"], ["float8e4m3fn[N,3]"], opset=19)
example("QuantizeLinear", ["float[N,3]", "float[]"], ["int4[N,3]"], attrs={"output_dtype": TensorProto.INT4}, opset=21)
example(
    "QuantizeLinear",
    ["float[N,3]", "float[]", "int8[]"],
    ["int8[*]"],
    attrs={"output_dtype": TensorProto.INT4},
    opset=21,
    error="bad-attribute",
)
example(
    "QuantizeLinear",
    ["float[3,N]", "float[3,2]", "int8[3,2]"],
    ["int8[3,N]"],
    attrs={"block_size": 3, "axis": 1},
    opset=21,
)
example(
    "QuantizeLinear",
    ["float[3,7]", "float[3,2]"],
    ["unknown"],
    attrs={"block_size": 2, "axis": 1},
    opset=21,
    error="shape-mismatch",
)
example("QuantizeLinear", ["float[B,4]", "float16[]", "uint2[]"], ["uint2[B,4]"], opset=25)
example("QuantizeLinear", ["float[*]", "float[]"], ["uint8[*]"], opset=23)
example("DequantizeLinear", ["int8[N,3]", "float[]", "int8[]"], ["float[N,3]"], opset=10)
example("DequantizeLinear", ["uint8[N,3,H]", "float[3]"], ["float[N,3,H]"], attrs={"axis": 1}, opset=13)
example("DequantizeLinear", ["float8e5m2[N,3]", "float16[]"], ["float16[N,3]"], opset=19)
example(
    "DequantizeLinear", ["int4[N,6]", "bfloat16[N,2]"], ["bfloat16[N,6]"], attrs={"axis": 1, "block_size": 3}, opset=21
)
example(
    "DequantizeLinear",
    ["int8[N,3]", "float[]"],
    ["float16[N,3]"],
    attrs={"output_dtype": TensorProto.FLOAT16},
    opset=23,
)
example("DequantizeLinear", ["int8[N,3]", "float[]", "uint8[]"], ["float[N,3]"], opset=13, error="type-mismatch")
example("DequantizeLinear", ["int8[N,3]", "float[2]", "int8[3]"], ["float[*]"], opset=13, error="shape-mismatch")
example("DynamicQuantizeLinear", ["float[B,S]"], ["uint8[B,S]", "float[]", "uint8[]"])
example("MatMulInteger", ["uint8[B,S,K]", "int8[K,M]"], ["int32[B,S,M]"])
example("MatMulInteger", ["uint8[B,S,K]", "int8[K,M]", "uint8[]", "int8[M]"], ["int32[B,S,M]"])
example(
    "QLinearMatMul",
    ["uint8[N,K]", "float[]", "uint8[]", "int8[B,K,M]", "float[]", "int8[]", "float[]", "uint8[]"],
    ["uint8[B,N,M]"],
    opset=10,
)
example(
    "QLinearMatMul",
    ["int8[K]", "float16[]", "int8[]", "int8[K,M]", "float16[]", "int8[]", "float16[]", "int8[]"],
    ["int8[M]"],
    opset=21,
)
example(
    "QLinearMatMul",
    ["int8[3,4]", "float[]", "int8[]", "int8[5,6]", "float[]", "int8[]", "float[]", "int8[]"],
    ["int8[3,6]"],
    opset=21,
    error="shape-mismatch",
)
example("ConvInteger", ["uint8[N,3,H,W]", "uint8[8,3,3,3]"], ["int32[N,8,H - 2,W - 2]"])
example(
    "ConvInteger",
    ["uint8[N,4,L]", "int8[8,2,3]", "uint8[]"],
    ["int32[N,8,floor((L - 1)/2) + 1]"],
    attrs={"group": 2, "strides": [2], "pads": [1, 1]},
)
example("ConvInteger", ["uint8[N,3,H,W]", "uint8[8,4,3,3]"], ["int32[N,8,H - 2,W - 2]"], error="shape-mismatch")
example(
    "QLinearConv",
    ["uint8[N,3,H,W]", "float[]", "uint8[]", "int8[8,3,3,3]", "float[8]", "int8[8]", "float[]", "uint8[]"],
    ["uint8[N,8,floor((H - 1)/2) + 1,floor((W - 1)/2) + 1]"],
    attrs={"strides": [2, 2], "auto_pad": "SAME_UPPER"},
)
example(
    "QLinearConv",
    ["int8[N,3,H,W]", "float[]", "int8[]", "int8[*]", "float[]", "int8[]", "float[]", "int8[]"],
    ["int8[N,?,?,?]"],
)
