"""Elementwise operators: unary maps, broadcasting binary and variadic ops, Where, Clip.

Binary ops broadcast multidirectionally from opset 7 (Clause 6.6.2); before that they took a
``broadcast`` attribute and the output had the shape of ``A``. Known contents (shape arithmetic
such as ``seq * 12``) are computed element by element.
"""

from __future__ import annotations

from infer.context import RuleContext
from infer.types import TensorType
from infer.values import Value

from .. import valueops as V
from ..helpers import broadcast
from ..registry import example, rule, shape_rule

UNARY = [
    "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "BitwiseNot", "Ceil", "Celu", "Cos",
    "Cosh", "Elu", "Erf", "Exp", "Floor", "Gelu", "HardSigmoid", "HardSwish", "IsInf", "IsNaN",
    "LeakyRelu", "Log", "Mish", "Reciprocal", "Relu", "Round", "Selu", "Shrink", "Sigmoid", "Sign",
    "Sin", "Sinh", "Softplus", "Softsign", "Sqrt", "Swish", "Tan", "Tanh", "ThresholdedRelu",
]  # fmt: skip

shape_rule(UNARY, "X[*s] -> Y[*s]")

# Unary ops whose contents we follow (they appear in shape computations).
_UNARY_VALUES = {"Neg": V.neg, "Abs": V.absolute, "Not": V.logical_not}


@rule(["Neg", "Abs", "Not"])
def unary_with_values(ctx: RuleContext) -> list:
    op = _UNARY_VALUES[ctx.op_type]
    return [Value(TensorType(None, ctx.shape(0)), V.unary(op, ctx.known(0)))]


_BINARY_VALUES = {
    "Add": V.ADD, "Sub": V.SUB, "Mul": V.MUL, "Div": V.DIV, "Max": V.MAX, "Min": V.MIN,
    "Equal": V.EQUAL, "Less": V.LESS, "Greater": V.GREATER, "LessOrEqual": V.LESS_EQUAL,
    "GreaterOrEqual": V.GREATER_EQUAL, "And": V.AND, "Or": V.OR, "Xor": V.XOR,
}  # fmt: skip

BINARY = [
    "Add", "Sub", "Mul", "Div", "Pow", "Mod", "And", "Or", "Xor", "Equal", "Less", "Greater",
    "LessOrEqual", "GreaterOrEqual", "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor",
]  # fmt: skip


@rule(BINARY, since=7)
def binary(ctx: RuleContext) -> list:
    """Multidirectional broadcasting; contents computed where the inputs are known."""
    shape = broadcast(ctx, ctx.shape(0), ctx.shape(1))
    if shape is None:
        ctx.because("an input has unknown rank")
    op = _BINARY_VALUES.get(ctx.op_type)
    if ctx.op_type == "Mod":
        op = None if ctx.attr("fmod", 0) else V.MOD  # fmod=1 takes the dividend's sign: not tracked
    known = V.elementwise(op, ctx.known(0), ctx.known(1)) if op is not None else None
    return [Value(TensorType(None, shape), known)]


@rule(["Add", "Sub", "Mul", "Div", "Pow", "And", "Or", "Xor", "Equal", "Less", "Greater"], since=1)
def binary_legacy(ctx: RuleContext) -> list:
    """Before opset 7: with ``broadcast=1`` B is broadcast to A; either way the output is A's shape."""
    if not ctx.attr("broadcast", 0):
        return [broadcast(ctx, ctx.shape(0), ctx.shape(1))]
    return [ctx.shape(0)]


@rule(["Max", "Min", "Sum", "Mean"], since=8)
def variadic(ctx: RuleContext) -> list:
    shape = broadcast(ctx, *(ctx.shape(i) for i in range(ctx.n_inputs)))
    op = _BINARY_VALUES.get(ctx.op_type)
    known = None
    if op is not None:
        known = ctx.known(0)
        for i in range(1, ctx.n_inputs):
            known = V.elementwise(op, known, ctx.known(i))
    return [Value(TensorType(None, shape), known)]


@rule(["Max", "Min", "Sum", "Mean"], since=1)
def variadic_legacy(ctx: RuleContext) -> list:
    """Before opset 8 every input has the same shape."""
    shapes = [ctx.shape(i) for i in range(ctx.n_inputs)]
    return [next((s for s in shapes if s is not None), None)]


# ``slope`` broadcasts unidirectionally to ``X`` (Clause 6.6.3): the output has X's shape.
shape_rule("PRelu", "X[*s], _ -> Y[*s]")


@rule("Where", since=9)
def where(ctx: RuleContext) -> list:
    shape = broadcast(ctx, ctx.shape(0), ctx.shape(1), ctx.shape(2))
    return [Value(TensorType(None, shape), V.where(ctx.known(0), ctx.known(1), ctx.known(2)))]


shape_rule("Clip", "X[*s] -> Y[*s]")

example("Relu", ["float[N,3]"], ["float[N,3]"])
example("Erf", ["float16[B,S,64]"], ["float16[B,S,64]"])
example("Sqrt", ["double[*]"], ["double[*]"])
example("Gelu", ["float[B,S,64]"], ["float[B,S,64]"], opset=20)
example("Not", ["bool[4]={true,false,true,true}"], ["bool[4]={false,true,false,false}"])
example("Neg", ["int64[2]={N,3}"], ["int64[2]={-N,-3}"])
example("Add", ["float[N,1,5]", "float[3,1]"], ["float[N,3,5]"])
example("Add", ["float[N,5]", "float[M,5]"], ["float[max(N, M),5]"])
example("Add", ["float[2,3]", "float[4,3]"], ["float[?,3]"], error="shape-mismatch")
example("Sub", ["int64[]={S}", "int64[1]={1}"], ["int64[1]={S - 1}"])
example("Mul", ["int64[]={S}", "int64[]={12}"], ["int64[]={12*S}"])
example("Div", ["int64[2]={B*S,768}", "int64[]={64}"], ["int64[2]={floor(B*S/64),12}"])
example("Pow", ["float[N,3]", "float[]"], ["float[N,3]"])
example("Equal", ["int64[4]={B,-1,S,S}", "int64[4]={-1,-1,-1,-1}"], ["bool[4]={false,true,false,false}"])
example("Add", ["float[2,3]", "float[3]"], ["float[2,3]"], attrs={"broadcast": 1}, opset=6)
example("Max", ["float[N,1]", "float[1,4]", "float[4]"], ["float[N,4]"])
example("Where", ["bool[4]={false,true,false,false}", "int64[4]={1,1,1,1}", "int64[4]={B,-1,S,S}"],
        ["int64[4]={B,1,S,S}"])  # fmt: skip
example("Where", ["bool[N,1]", "float[1,3]", "float[]"], ["float[N,3]"])
example("PRelu", ["float[N,8,H,W]", "float[8,1,1]"], ["float[N,8,H,W]"])
example("Clip", ["float[N,3]", "float[]", "float[]"], ["float[N,3]"])
