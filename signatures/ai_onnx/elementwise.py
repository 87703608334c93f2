"""Elementwise operators: unary maps, broadcasting binary and variadic ops, Where, Clip.

Binary ops broadcast multidirectionally from opset 7 (Clause 6.6.2); before that they took a
``broadcast`` attribute and the output had the shape of ``A``. Known contents (shape arithmetic
such as ``seq * 12``) are computed element by element.
"""

from __future__ import annotations

from collections.abc import Callable

from infer.contract.context import RuleContext, RuleError
from infer.core.types import TensorType
from infer.core.values import Elem, Known, Value
from signatures.kit import spans
from signatures.kit import valueops as V
from signatures.kit.helpers import STRICT, broadcast, flag, norm_axis, require_single, same_dim
from signatures.kit.registry import example, rule, shape_rule

UNARY = [
    "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "BitwiseNot", "Celu", "Cos",
    "Cosh", "Elu", "Erf", "Exp", "Gelu", "HardSigmoid", "HardSwish", "IsInf", "IsNaN",
    "LeakyRelu", "Log", "Mish", "Selu", "Shrink", "Sigmoid",
    "Sin", "Sinh", "Softplus", "Softsign", "Swish", "Tan", "Tanh", "ThresholdedRelu",
]  # fmt: skip

shape_rule(UNARY, "X[*s] -> Y[*s]")


BINARY = [
    "Add", "Sub", "Mul", "Div", "Pow", "Mod", "And", "Or", "Xor", "Equal", "Less", "Greater",
    "LessOrEqual", "GreaterOrEqual", "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor",
]  # fmt: skip


# Unary ops whose contents we follow (they appear in shape computations, e.g. Floor(H * 0.5)).
_UNARY_VALUES = {
    "Neg": "neg", "Abs": "abs", "Not": "logical_not", "Floor": "floor", "Ceil": "ceil", "Round": "round",
    "Relu": "relu", "Sign": "sign", "Sqrt": "sqrt", "Reciprocal": "reciprocal",
}  # fmt: skip


@rule(list(_UNARY_VALUES))
def unary_with_values(ctx: RuleContext) -> list:
    k = ctx.known(0)
    known = V.unary(getattr(V.ops_of(ctx), _UNARY_VALUES[ctx.op_type]), k) if k is not None else None
    return [Value(TensorType(None, ctx.shape(0)), known)]


_BINARY_VALUES = {
    "Add": "add", "Sub": "sub", "Mul": "mul", "Div": "div", "Pow": "pow", "Max": "max", "Min": "min",
    "Equal": "equal", "Less": "less", "Greater": "greater", "LessOrEqual": "less_equal",
    "GreaterOrEqual": "greater_equal",
}  # fmt: skip
_LOGIC = {"And": V.AND, "Or": V.OR, "Xor": V.XOR}


def _binary_op(ctx: RuleContext) -> V.Op | None:
    if ctx.op_type in _LOGIC:
        return _LOGIC[ctx.op_type]
    if ctx.op_type == "Mod":
        return V.ops_of(ctx).fmod if flag(ctx, "fmod", 0, STRICT) else V.ops_of(ctx).mod  # onnxruntime refuses 2
    name = _BINARY_VALUES.get(ctx.op_type)
    return None if name is None else getattr(V.ops_of(ctx), name)


@rule(BINARY, since=7)
def binary(ctx: RuleContext) -> list:
    """Multidirectional broadcasting; contents computed where the inputs are known."""
    shape = broadcast(ctx, ctx.shape(0), ctx.shape(1))
    if shape is None:
        ctx.because("an input has unknown rank")
    ka, kb = ctx.known(0), ctx.known(1)
    op = _binary_op(ctx) if ka is not None and kb is not None else None
    known = V.elementwise(op, ka, kb) if op is not None else None
    if known is None and ctx.op_type in _SPANNED and ctx.elem(0) in spans.INTS:
        a, b = spans.span_of(ctx.value(0)), spans.span_of(ctx.value(1))
        span = spans.mul(ctx, a, b) if ctx.op_type == "Mul" else spans.add(a, b, -1 if ctx.op_type == "Sub" else 1)
        return [Value(TensorType(None, shape), None, span)]
    return [Value(TensorType(None, shape), known)]


_SPANNED = frozenset({"Add", "Sub", "Mul"})  # element bounds followed (position indices)


@rule(["Add", "Sub", "Mul", "Div", "Pow", "And", "Or", "Xor", "Equal", "Less", "Greater"], since=1)
def binary_legacy(ctx: RuleContext) -> list:
    """Before opset 7 the output has A's shape.

    Without ``broadcast`` both inputs have the same shape; with ``broadcast=1`` B is broadcast
    to A, its dims matched against A's from ``axis`` (default: the trailing dims).
    """
    a, b = ctx.shape(0), ctx.shape(1)
    if not ctx.attr("broadcast", 0):
        if a is not None and b is not None:
            if len(a) != len(b):
                raise RuleError("shape-mismatch", f"ranks {len(a)} and {len(b)} differ and broadcast is not set")
            a = tuple(same_dim(ctx, x, y, f"dim {i}") for i, (x, y) in enumerate(zip(a, b)))
        out = a if a is not None else b
    else:
        out = a
        if a is not None and b is not None:
            if len(b) > len(a):
                raise RuleError("shape-mismatch", f"B of rank {len(b)} does not broadcast to A of rank {len(a)}")
            axis = ctx.attr("axis")
            start = len(a) - len(b) if axis is None else norm_axis(ctx, axis, len(a))
            if start + len(b) > len(a):
                raise RuleError("shape-mismatch", f"B of rank {len(b)} at axis {axis} overruns A of rank {len(a)}")
            for i, d in enumerate(b):
                t = a[start + i]
                if isinstance(t, int) and isinstance(d, int) and d not in (1, t):
                    raise RuleError("shape-mismatch", f"extent {d} of B does not broadcast to {t}")
    known = None
    ka, kb = ctx.known(0), ctx.known(1)
    # Contents where numpy's alignment is the operator's: equal shapes, or B a trailing block.
    if ka is not None and kb is not None and (op := _binary_op(ctx)) is not None:
        if ka.shape == kb.shape or (ctx.attr("broadcast", 0) and ctx.attr("axis") is None):
            known = V.elementwise(op, ka, kb)
    return [Value(TensorType(None, out), known)]


@rule(["Max", "Min", "Sum", "Mean"], since=8)
def variadic(ctx: RuleContext) -> list:
    shape = broadcast(ctx, *(ctx.shape(i) for i in range(ctx.n_inputs)))
    name = {"Sum": "add", "Max": "max", "Min": "min"}.get(ctx.op_type)  # Mean: not followed
    known = None
    if name is not None and all(ctx.known(i) is not None for i in range(ctx.n_inputs)):
        op = getattr(V.ops_of(ctx), name)
        known = ctx.known(0)
        for i in range(1, ctx.n_inputs):  # rounded at every step, as the runtime accumulates
            known = V.elementwise(op, known, ctx.known(i))
    return [Value(TensorType(None, shape), known)]


@rule(["Max", "Min", "Sum", "Mean"], since=1)
def variadic_legacy(ctx: RuleContext) -> list:
    """Before opset 8 every input has the same shape."""
    out = None
    for i in range(ctx.n_inputs):
        s = ctx.shape(i)
        if s is None:
            continue
        if out is None:
            out = s
            continue
        if len(s) != len(out):
            raise RuleError("shape-mismatch", f"inputs of ranks {len(out)} and {len(s)}: they must have one shape")
        out = tuple(same_dim(ctx, x, y, f"dim {j}") for j, (x, y) in enumerate(zip(out, s)))
    return [out]


# ``slope`` broadcasts unidirectionally to ``X`` (Clause 6.6.3): the output has X's shape.
shape_rule("PRelu", "X[*s], _ -> Y[*s]")


@rule("Where", since=9)
def where(ctx: RuleContext) -> list:
    shape = broadcast(ctx, ctx.shape(0), ctx.shape(1), ctx.shape(2))
    return [Value(TensorType(None, shape), V.where(ctx.known(0), ctx.known(1), ctx.known(2), ctx, shape))]


@rule("Clip")
def clip(ctx: RuleContext) -> list:
    """Y has X's shape; min and max (inputs from opset 11) hold one value each. Contents follow
    where each bound is known or absent: ``Clip(2*floor((h + 1)/2) - h + 1, min=0)`` of TF-style
    padding is its input, which is at least 1."""
    require_single(ctx, 1, "min")
    require_single(ctx, 2, "max")
    return [Value(TensorType(None, ctx.shape(0)), _clipped(ctx))]


def _against(op: V.Op, bound: Elem) -> Callable[[Elem], Elem]:
    """``op`` of each element and ``bound``."""
    return lambda e: op(e, bound)


def _clipped(ctx: RuleContext) -> Known | None:
    k = ctx.known(0)
    if k is None or any(isinstance(e, float) and e != e for e in k.elems):
        return None  # a NaN: which bound wins depends on the kernel's order of comparisons
    ops = V.ops_of(ctx)
    for i, attr, op in ((1, "min", ops.max), (2, "max", ops.min)):
        if ctx.version < 11:
            bound = ctx.attr(attr)
            if bound is not None:
                k = V.unary(_against(op, float(bound)), k)
        elif ctx.has(i):
            b = ctx.known(i)
            if b is None or b.size != 1:
                return None
            k = V.unary(_against(op, b.elems[0]), k)
    return k


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
example(
    "Where", ["bool[4]={false,true,false,false}", "int64[4]={1,1,1,1}", "int64[4]={B,-1,S,S}"], ["int64[4]={B,1,S,S}"]
)
example("Where", ["bool[N,1]", "float[1,3]", "float[]"], ["float[N,3]"])
example("PRelu", ["float[N,8,H,W]", "float[8,1,1]"], ["float[N,8,H,W]"])
example("Clip", ["float[N,3]", "float[]", "float[]"], ["float[N,3]"])
example("Floor", ["float[2]={1.5,-0.5}"], ["float[2]={1.0,-1.0}"])
example("Ceil", ["float[1]={1.25}"], ["float[1]={2.0}"], opset=6)
example("Round", ["float[3]={0.5,1.5,2.5}"], ["float[3]={0.0,2.0,2.0}"])
example("Relu", ["int64[2]={S,-3}"], ["int64[2]={S,0}"], opset=14)
example("Floor", ["float[N,3]"], ["float[N,3]"], attrs={"consumed_inputs": [0]}, opset=1)
example("Sign", ["float[2]={-2.0,0.0}"], ["float[2]={-1.0,0.0}"])
example("Elu", ["float[N,3]"], ["float[N,3]"], opset=1)
example("Add", ["float[N,3]", "float[N,3]"], ["float[N,3]"], opset=6)
example("Add", ["float[N,3]", "float[M,3]"], ["float[N,3]"], opset=1)
example("Mul", ["float[2,3,4]", "float[3]"], ["float[2,3,4]"], attrs={"broadcast": 1, "axis": 1}, opset=6)
example("Sub", ["float[2,3]", "float[4]"], ["float[*]"], attrs={"broadcast": 1}, opset=6, error="shape-mismatch")
example("Pow", ["float[2,3]", "float[3]"], ["float[2,3]"], attrs={"broadcast": 1}, opset=1)
example("Equal", ["int64[2]={S,1}", "int64[2]={S,2}"], ["bool[2]={true,false}"], opset=1)
example("Div", ["float[N,3]", "float[N,2]"], ["float[N,3]"], opset=6, error="shape-mismatch")
example("Sum", ["float[N,3]", "float[N,3]", "float[N,3]"], ["float[N,3]"], opset=6)
example("Max", ["float[N,3]", "float[3]"], ["float[*]"], opset=6, error="shape-mismatch")
example("Sum", ["float[2]={1.0,2.5}", "float[2]={2.0,0.5}"], ["float[2]={3.0,3.0}"])
example("Mod", ["int64[2]={7,-7}", "int64[]={3}"], ["int64[2]={1,2}"])
example("BitShift", ["uint8[N,3]", "uint8[3]"], ["uint8[N,3]"], attrs={"direction": "LEFT"})
example("Clip", ["float[N,3]"], ["float[N,3]"], attrs={"min": 0.0, "max": 6.0}, opset=6)
example("Clip", ["float[N,3]", "float[1]"], ["float[N,3]"])
example("Clip", ["float[N,3]", "float[2]"], ["float[*]"], error="shape-mismatch")
example("GreaterOrEqual", ["float[N,1]", "float[4]"], ["bool[N,4]"], opset=12)
example("Div", ["float[]={1.0}", "float[]={3.0}"], ["float[]={0.3333333432674408}"])
example("Div", ["double[]={1.0}", "double[]={3.0}"], ["double[]={0.3333333333333333}"])
# float16 results that need rounding are unknown: onnxruntime may keep a float32 intermediate.
example("Add", ["float16[]={1.0}", "float16[]={0.0001}"], ["float16[]={?}"])
example("Add", ["float16[]={1.0}", "float16[]={0.5}"], ["float16[]={1.5}"])
# Float contents that depend on variables: exact rationals, rounded at most once (floatops).
example("Div", ["float[]={H}", "float[]={2.0}"], ["float[]={H/2}"])
example("Ceil", ["float[]={H/2}"], ["float[]={floor((H + 1)/2)}"])
example("Mul", ["float[]={H}", "float[]={3.0}"], ["float[]={float32(3*H)}"])  # rounded past 2^24
example("Div", ["float[]={H}", "float[]={3.0}"], ["float[]={~(H/3)}"])
# Rounding carries H/3 across an integer once H passes 2^23: exact only where the run proves less.
example("Floor", ["float[]={~(H/3)}"], ["float[]={?}"])
example("Floor", ["float[]={~(min(H, 4096)/3)}"], ["float[]={floor(min(H, 4096)/3)}"])
example("Div", ["float[]={~(H/3)}", "float[]={3.0}"], ["float[]={?}"])  # a second rounding
example("Div", ["int64[]={H}", "int64[]={N}"], ["int64[]={floor(H/N)}"])
example("Max", ["float[2]={1.0,nan}", "float[2]={nan,1.0}"], ["float[2]={nan,nan}"])
example("Clip", ["int64[1]={H}", "int64[]={0}"], ["int64[1]={H}"])
example("Clip", ["float[]={H/2}", "float[]={0.0}", "float[]={1.0}"], ["float[]={?}"])
example("Pow", ["float[]={16.0}", "float[]={0.5}"], ["float[]={4.0}"])
example("Pow", ["float[]={2.0}", "float[]={0.5}"], ["float[]={?}"])
example("Mod", ["int64[2]={7,-7}", "int64[]={3}"], ["int64[*]"], attrs={"fmod": 2}, error="bad-attribute")
