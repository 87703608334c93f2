"""Quantized operators: the QLinear* elementwise family, QuantizeLinear/DequantizeLinear, GatherBlockQuantized.

The QOperator quantizer replaces float operators by these: each takes the tensor the float
operator took, with a scale and zero point beside it, and computes the same shape. Element
types: a QLinear* output has its input's 8-bit type; a dequantized output has the scale's.
"""

from __future__ import annotations

from onnx import TensorProto

from infer.contract.context import RuleContext, RuleError
from infer.core import dims as D
from infer.core.dims import Dim
from infer.core.types import TensorType
from signatures.com_microsoft import FLOAT, FLOAT_TYPES, INT, INT8_TYPES, INTS, MS, REQUIRED
from signatures.kit.helpers import broadcast, norm_axes, norm_axis, same_dim
from signatures.kit.operator import case, operator

_F = "tensor(float)"
_Q_UNARY = f"X:T X_scale:{_F} X_zero_point?:T Y_scale:{_F} Y_zero_point?:T"
_Q_BINARY = f"A:T A_scale:{_F} A_zero_point?:T B:T B_scale:{_F} B_zero_point?:T C_scale:{_F} C_zero_point?:T"

_QUANT = ("tensor(int8)", "tensor(uint8)", "tensor(int16)", "tensor(uint16)")

_QA = ["float[]", "uint8[]"]
# Elementwise maps keep the shape; Softmax normalizes along an axis.
operator(
    "QLinearSigmoid",
    _Q_UNARY,
    "Y:T",
    domain=MS,
    types={"T": INT8_TYPES},
    rule="X[*s] -> Y[*s]",
    examples=[case(["uint8[N,C,H,W]", *_QA, *_QA], ["uint8[N,C,H,W]"])],
)
operator(
    "QLinearLeakyRelu",
    _Q_UNARY,
    "Y:T",
    domain=MS,
    types={"T": INT8_TYPES},
    attrs={"alpha": (FLOAT, 0.01)},
    rule="X[*s] -> Y[*s]",
    examples=[case(["int8[N,C]", "float[]", "int8[]", "float[]", "int8[]"], ["int8[N,C]"], alpha=0.1)],
)
operator(
    "QLinearSoftmax",
    f"X:T X_scale:{_F} x_zero_point?:T y_scale:{_F} y_zero_point:T",
    "Y:T",
    domain=MS,
    types={"T": INT8_TYPES},
    attrs={"axis": (INT, -1), "opset": (INT, REQUIRED)},
    rule="X[*s] -> Y[*s]",
    examples=[case(["uint8[N,10]", *_QA, *_QA], ["uint8[N,10]"], attrs={"opset": 13})],
)
# DequantizeLinear keeps x's shape; its type is the scale's (bound by the schema).
operator(
    "DequantizeLinear",
    "x:T1 x_scale:T2 x_zero_point?:T1",
    "y:T2",
    domain=MS,
    types={"T1": _QUANT + ("tensor(int32)", "tensor(int4)", "tensor(uint4)"), "T2": ("tensor(float16)", _F)},
    attrs={"axis": (INT, None)},
    rule="X[*s] -> Y[*s]",
    examples=[
        case(["int8[N,C,H,W]", "float[]", "int8[]"], ["float[N,C,H,W]"]),
        case(["int32[C]", "float16[C]"], ["float16[C]"], axis=0),
    ],
)


@operator(
    "QLinearAdd",
    _Q_BINARY,
    "C:T",
    domain=MS,
    types={"T": INT8_TYPES},
    examples=[
        case(["uint8[N,C,H,W]", *_QA, "uint8[N,C,H,W]", *_QA, *_QA], ["uint8[N,C,H,W]"]),
        case(["uint8[N,3]", *_QA, "uint8[4]", *_QA, *_QA], ["uint8[N,?]"], error="shape-mismatch"),
    ],
)
@operator(
    "QLinearMul",
    _Q_BINARY,
    "C:T",
    domain=MS,
    types={"T": INT8_TYPES},
    examples=[
        case(
            ["int8[N,C,H,W]", "float[]", "int8[]", "int8[C,1,1]", "float[]", "int8[]", "float[]", "int8[]"],
            ["int8[N,C,H,W]"],
        )
    ],
)
def qlinear_binary(ctx: RuleContext) -> list:
    """Numpy broadcasting of A (input 0) and B (input 3)."""
    out = broadcast(ctx, ctx.shape(0), ctx.shape(3))
    if out is None:
        ctx.because("an operand has unknown rank")
    return [out]


@operator(
    "QLinearWhere",
    "condition:B X:T x_scale:TF x_zero_point:T Y:T y_scale:TF y_zero_point:T z_scale:TF z_zero_point:T",
    "Z:T",
    domain=MS,
    types={"B": ("tensor(bool)",), "TF": (_F,), "T": INT8_TYPES},
    examples=[case(["bool[N,1]", "uint8[C]", *_QA, "uint8[N,C]", *_QA, *_QA], ["uint8[N,C]"])],
)
def qlinear_where(ctx: RuleContext) -> list:
    out = broadcast(ctx, ctx.shape(0), ctx.shape(1), ctx.shape(4))
    if out is None:
        ctx.because("an operand has unknown rank")
    return [out]


@operator(
    "QuantizeLinear",
    "x:T1 y_scale:T1 y_zero_point?:T2",
    "y:T2",
    domain=MS,
    types={"T1": ("tensor(float16)", _F), "T2": _QUANT + ("tensor(int4)", "tensor(uint4)")},
    attrs={"axis": (INT, None)},
    examples=[
        case(["float[N,C]", "float[]"], ["uint8[N,C]"]),
        case(["float16[N,C]", "float16[C]", "int8[C]"], ["int8[N,C]"], axis=1),
        case(["float[N,C]", "float[]", "uint16[]"], ["uint16[N,C]"]),
    ],
)
def quantize_linear(ctx: RuleContext) -> list:
    """x's shape; the zero point's type, uint8 when there is none."""
    if ctx.has(2):
        return [ctx.shape(0)]
    return [TensorType(TensorProto.UINT8, ctx.shape(0))]


@operator(
    "QLinearConcat",
    "Y_scale:TF Y_zero_point:T8 inputs...~:TV",
    "Y:T8",
    domain=MS,
    types={"T8": INT8_TYPES, "TF": (_F,), "TV": INT8_TYPES + (_F,)},
    attrs={"axis": (INT, REQUIRED)},
    examples=[
        case(["float[]", "uint8[]", "uint8[N,8,H,W]", *_QA, "uint8[N,4,H,W]", *_QA], ["uint8[N,12,H,W]"], axis=1),
        case(["float[]", "uint8[]", "uint8[N,C,H,W]", *_QA, "uint8[N,D,H,W]", *_QA], ["uint8[N,C + D,H,W]"], axis=-3),
        case(["float[]", "uint8[]", "uint8[N,8,H,W]", *_QA, "uint8[N,4,5,W]", *_QA], ["uint8[N,12,5,W]"], axis=1),
        case(
            ["float[]", "uint8[]", "uint8[N,8]", *_QA, "uint8[N,4,5]", *_QA],
            ["uint8[*]"],
            axis=1,
            error="shape-mismatch",
        ),
        case(["float[]", "uint8[]", "uint8[N,8]", "float[]"], ["uint8[*]"], axis=1, error="arity"),
    ],
)
def qlinear_concat(ctx: RuleContext) -> list:
    """Concat of the tensors among (tensor, scale, zero point) triples after Y's scale and zero point."""
    if (ctx.n_inputs - 2) % 3:
        raise RuleError("arity", f"inputs after Y_scale and Y_zero_point come in triples, got {ctx.n_inputs - 2}")
    shapes = [ctx.shape(i) for i in range(2, ctx.n_inputs, 3)]
    return [concat_dims(ctx, shapes, ctx.require("axis"))]


def concat_dims(ctx: RuleContext, shapes: list[tuple[Dim, ...] | None], axis: int) -> tuple[Dim, ...] | None:
    """Concat's shape: extents add along ``axis`` and agree on every other axis."""
    known = [s for s in shapes if s is not None]
    if not known:
        ctx.because("every input has unknown rank")
        return None
    rank = len(known[0])
    if any(len(s) != rank for s in known):
        raise RuleError("shape-mismatch", f"inputs of ranks {sorted({len(s) for s in known})} cannot be concatenated")
    axis = norm_axis(ctx, axis, rank)
    out = list(known[0])
    for s in known[1:]:
        for i in range(rank):
            if i != axis:
                out[i] = same_dim(ctx, out[i], s[i], f"extents on axis {i}")
    out[axis] = None if len(known) < len(shapes) else D.total(s[axis] for s in known)
    return tuple(out)


@operator(
    "QLinearReduceMean",
    f"data:T data_scale:{_F} data_zero_point?:T reduced_scale:{_F} reduced_zero_point?:T",
    "reduced:T",
    domain=MS,
    types={"T": INT8_TYPES},
    attrs={"axes": (INTS, REQUIRED), "keepdims": (INT, REQUIRED)},
    examples=[
        case(["uint8[N,C,H,W]", *_QA, *_QA], ["uint8[N,C]"], axes=[2, -1], keepdims=0),
        case(["int8[N,C,H,W]", "float[]", "int8[]", "float[]", "int8[]"], ["int8[N,1,H,W]"], axes=[1], keepdims=1),
    ],
)
def qlinear_reduce_mean(ctx: RuleContext) -> list:
    """ReduceMean over ``axes``: each becomes 1 (keepdims) or is dropped."""
    x = ctx.shape(0)
    if x is None:
        return [None]
    axes = set(norm_axes(ctx, ctx.require("axes"), len(x)))
    keep = bool(ctx.require("keepdims"))
    return [tuple(1 if i in axes else d for i, d in enumerate(x) if keep or i not in axes)]


@operator(
    "GatherBlockQuantized",
    "data:T1 indices:Tind scales:T2 zero_points?:T1",
    "output:T2",
    domain=MS,
    types={
        "T1": (
            "tensor(int4)",
            "tensor(uint4)",
            "tensor(uint8)",
            "tensor(float8e4m3fn)",
            "tensor(float8e4m3fnuz)",
            "tensor(float8e5m2)",
            "tensor(float8e5m2fnuz)",
            "tensor(float4e2m1)",
        ),
        "T2": FLOAT_TYPES,
        "Tind": ("tensor(int32)", "tensor(int64)"),
    },
    attrs={"gather_axis": (INT, 0), "quantize_axis": (INT, 1), "block_size": (INT, 128), "bits": (INT, 4)},
    examples=[
        case(["uint4[100,32]", "int64[B,S]", "float[100,2]", "uint4[100,2]"], ["float[B,S,32]"], block_size=16),
        case(["uint8[100,16]", "int32[B,S]", "float16[100,2]"], ["float16[B,S,32]"], block_size=16, bits=4),
        case(["int4[V,64]", "int64[K]", "float[V,2]"], ["float[V,K]"], block_size=32, gather_axis=1, quantize_axis=0),
        case(["uint4[100,32]", "int64[B,S]", "float[100,2]"], ["float[*]"], gather_axis=2, error="bad-attribute"),
    ],
)
def gather_block_quantized(ctx: RuleContext) -> list:
    """Gather along gather_axis: data's shape with that axis replaced by the indices' shape.

    uint8 data with bits < 8 packs 8 / bits values a byte along the last axis.
    """
    data, idx = ctx.shape(0), ctx.shape(1)
    if data is None or idx is None:
        ctx.because("an input has unknown rank")
        return [None]
    if not data:
        raise RuleError("shape-mismatch", "data must have rank >= 1")
    bits = ctx.attr("bits", 4)
    if ctx.elem(0) == TensorProto.UINT8 and bits < 8:
        if bits not in (2, 4):
            raise RuleError("bad-attribute", f"bits must be 2, 4 or 8, is {bits}")
        data = data[:-1] + (D.mul(data[-1], 8 // bits),)
    axis = norm_axis(ctx, ctx.attr("gather_axis", 0), len(data), "gather_axis")
    return [data[:axis] + tuple(idx) + data[axis + 1 :]]
