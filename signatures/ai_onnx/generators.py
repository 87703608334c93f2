"""Operators that make tensors from attributes or shapes: Constant, ConstantOfShape, Range."""

from __future__ import annotations

import math

import numpy as np
from onnx import TensorProto, helper

from infer.contract.context import RuleContext, RuleError
from infer.core import dims as D
from infer.core.types import TensorType
from infer.core.values import (
    MAX_KNOWN_ELEMENTS,
    MAX_KNOWN_FLOAT_ELEMENTS,
    Elem,
    Known,
    Span,
    SymFloat,
    Value,
    value_from_tensor,
)
from signatures.kit import valueops as V
from signatures.kit.helpers import require_single, vector_length
from signatures.kit.registry import example, rule

_SCALAR_ATTRS = {
    "value_float": (TensorProto.FLOAT, False),
    "value_floats": (TensorProto.FLOAT, True),
    "value_int": (TensorProto.INT64, False),
    "value_ints": (TensorProto.INT64, True),
    "value_string": (TensorProto.STRING, False),
    "value_strings": (TensorProto.STRING, True),
}


@rule("Constant")
def constant(ctx: RuleContext) -> list:
    given = [name for name in ("value", "sparse_value", *_SCALAR_ATTRS) if ctx.has_attr(name)]
    if len(given) != 1:
        raise RuleError("bad-attribute", f"Constant needs exactly one value attribute, has {given or 'none'}")
    name = given[0]
    v = ctx.attr(name)
    if name == "value":
        return [value_from_tensor(v)]
    if name == "sparse_value":
        # The output is a dense tensor (the schema's T; onnxruntime densifies the value).
        return [TensorType(v.values.data_type or None, tuple(int(d) for d in v.dims))]
    elem, is_list = _SCALAR_ATTRS[name]
    if is_list:
        # Contents are kept as a ``value`` tensor's are: up to the limit of its element type. A
        # longer list (an ``AttributeList``) is not read at all, only its length.
        n = len(v)
        limit = MAX_KNOWN_FLOAT_ELEMENTS if elem == TensorProto.FLOAT else MAX_KNOWN_ELEMENTS
        return [Value(TensorType(elem, (n,)), Known((n,), tuple(v)) if n <= limit else None)]
    return [Value(TensorType(elem, ()), Known((), (v,)))]


@rule("ConstantOfShape")
def constant_of_shape(ctx: RuleContext) -> list:
    fill = ctx.attr("value")
    elem: int | None = TensorProto.FLOAT
    scalar: Elem = 0.0
    if fill is not None:
        fv = value_from_tensor(fill)
        elem = fv.type.elem if isinstance(fv.type, TensorType) else None  # (a tensor's: always one)
        scalar = fv.known.elems[0] if fv.known is not None and fv.known.size == 1 else None
    if ctx.rank(0) == 0:  # a 1-D shape; onnxruntime refuses a scalar (and reads 2-D ones flat)
        raise RuleError("shape-mismatch", "the shape (input 0) must be 1-D, is a scalar")
    if ctx.elem(0) not in (TensorProto.INT64, None):
        # The shape must be int64 (the schema's only T1): another type is not read as one.
        ctx.because("the shape input is not int64, as ConstantOfShape requires", 0)
        return [TensorType(elem, None)]
    dims = ctx.known_dims(0)
    if dims is None:
        ctx.contents_unknown(0, "the output shape")
        try:
            n = vector_length(ctx, 0)
        except RuleError as e:
            if e.code != "limit":
                raise
            # A rank past the limit is not built (Clause 15.4), but the element type is known.
            ctx.error(e.code, str(e))
            n = None
        return [TensorType(elem, None if n is None else (None,) * n)]
    if any(isinstance(d, int) and d < 0 for d in dims):
        raise RuleError("shape-mismatch", f"the output shape {dims} has a negative extent")
    ints = [d for d in dims if isinstance(d, int)]
    known = V.fill(ints, scalar) if len(ints) == len(dims) else None
    return [Value(TensorType(elem, tuple(dims)), known)]


_INT64_MAX = (1 << 63) - 1
_NP_OF: dict[int | None, type[np.floating]] = {
    TensorProto.FLOAT: np.float32,
    TensorProto.DOUBLE: np.float64,
    TensorProto.FLOAT16: np.float16,
}


@rule("Range")
def range_(ctx: RuleContext) -> list:
    for i, what in enumerate(("start", "limit", "delta")):
        require_single(ctx, i, what)
    start, limit, delta = (ctx.known(i) for i in range(3))
    if start is None or limit is None or delta is None:
        missing = next(i for i, k in enumerate((start, limit, delta)) if k is None)
        ctx.contents_unknown(missing, "a Range bound")
        return [(None,)]
    s, lim, d = start.scalar(), limit.scalar(), delta.scalar()
    if s is None or lim is None or d is None:
        ctx.because("a Range bound is not fully known")
        return [(None,)]
    if all(isinstance(x, int) and not isinstance(x, bool) for x in (s, lim, d)):
        if d == 0:
            raise RuleError("bad-attribute", "Range with delta 0")
        n = max(-((s - lim) // d), 0)  # ceil((lim - s) / d), exact
        known = Known((n,), tuple(range(s, lim, d))) if n <= MAX_KNOWN_ELEMENTS else None
        return [Value(TensorType(None, (n,)), known)]
    if all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (s, lim, d)):
        return [_float_range(ctx, float(s), float(lim), float(d))]
    # Symbolic bounds: integers (possibly carried through a float Cast) with an integer step.
    s, lim, d = _integral(s), _integral(lim), _integral(d)
    if s is None or lim is None or not isinstance(d, int) or d == 0:
        ctx.because("a symbolic Range needs integral bounds and a non-zero integer delta")
        return [(None,)]
    n = D.dmax(D.ceildiv(D.sub(lim, s), d), 0)
    if ctx.elem(0) not in (TensorProto.INT64, TensorProto.INT32, TensorProto.INT16):
        return [(n,)]
    # Every element lies between start and the last value before limit (none when n is 0);
    # with a step of 1 both are reached.
    span = Span(s, D.sub(lim, 1), d == 1) if d > 0 else Span(D.add(lim, 1), s, d == -1)
    return [Value(TensorType(None, (n,)), None, span)]


def _float_range(ctx: RuleContext, s: float, lim: float, d: float) -> Value | tuple:
    """Floating-point Range: the count as the runtimes compute it, the values where they agree."""
    if d == 0 or not all(math.isfinite(x) for x in (s, lim, d)):
        raise RuleError("bad-attribute", f"Range with bounds {s}, {lim}, {d}")
    # onnxruntime and the reference evaluator both count in double: ceil((limit - start) / delta).
    # Half precision may count in float32 (Range-27 stash_type) or in half: claim only a count
    # every precision agrees on.
    q = (lim - s) / d
    if not q <= _INT64_MAX:  # a denormal delta, say (or an infinite quotient)
        ctx.error(
            "limit",
            f"{ctx.op_type} with bounds {s}, {lim}, {d} would count {q:.6g} elements, past the "
            "largest extent a tensor can have (2^63 - 1)",
        )
        ctx.because("the Range would count more elements than any tensor can hold")
        return (None,)
    counts = {math.ceil(q) if q > 0 else 0}  # (-inf where the delta points away: no elements)
    elem = ctx.elem(0)
    if elem in (TensorProto.FLOAT16, TensorProto.BFLOAT16):
        with np.errstate(all="ignore"):
            for t in (np.float32, np.float16):
                tq = (t(lim) - t(s)) / t(d)  # (not q: a numpy float, where q is Python's)
                counts.add(max(math.ceil(float(tq)), 0) if np.isfinite(tq) else -1)
    if len(counts) != 1:
        ctx.because("the element count differs between float precisions (runtimes differ)")
        return (None,)
    n = counts.pop()
    known = None
    ft = _NP_OF.get(elem)
    if ft is not None and n <= MAX_KNOWN_ELEMENTS:
        # onnxruntime accumulates (v += delta), the definition computes start + i * delta: keep
        # the values only where both give the same numbers in the output type.
        with np.errstate(all="ignore"):
            direct = [ft(s) + ft(i) * ft(d) for i in range(n)]
            acc, v = [], ft(s)
            for _ in range(n):
                acc.append(v)
                v = ft(v + ft(d))
        if all(a == b for a, b in zip(direct, acc)):
            known = Known((n,), tuple(float(a) for a in direct))
    return Value(TensorType(None, (n,)), known)


def _integral(x: object) -> D.Dim:
    """An integer bound: an int, an integral float, an integer expression, or a float element
    that is exactly an integer expression (``Cast(H)`` to float)."""
    if isinstance(x, bool) or isinstance(x, str):
        return None
    if isinstance(x, float):
        return int(x) if x.is_integer() else None
    if isinstance(x, SymFloat):
        return x.num if x.den == 1 and not x.rounded else None
    return x  # type: ignore[return-value]


_SPARSE = helper.make_sparse_tensor(
    helper.make_tensor("v", TensorProto.INT64, (2,), [13, 17]),
    helper.make_tensor("i", TensorProto.INT64, (2,), [9, 27]),
    [100],
)
example("Constant", [], ["int64[100]"], attrs={"sparse_value": _SPARSE})  # a dense output
example("ConstantOfShape", ["int64[3]={B,S,4}"], ["float[B,S,4]"])
example("ConstantOfShape", ["int64[2]"], ["float[?,?]"])
example("ConstantOfShape", ["int32[2]={4,3}"], ["float[*]"], error="type-mismatch")  # not read as a shape
example("ConstantOfShape", ["int64[4096]"], ["float[*]"], error="limit")  # rank past the limit: float[*]
example("ConstantOfShape", ["int64[2]={2,2}"], ["float[2,2]={0.0,0.0,0.0,0.0}"])
example("Range", ["int64[]={0}", "int64[]={S}", "int64[]={1}"], ["int64[S]"])
example("Range", ["int64[]={0}", "int64[]={10}", "int64[]={3}"], ["int64[4]={0,3,6,9}"])
example("Range", ["float[]={1.0}", "float[]={2.0}", "float[]={0.25}"], ["float[4]={1.0,1.25,1.5,1.75}"])
example("Constant", [], ["int64[3]={1,2,3}"], attrs={"value_ints": [1, 2, 3]})
example("Constant", [], ["float[]={0.5}"], attrs={"value_float": 0.5})
example("Range", ["int32[]={10}", "int32[]={1}", "int32[]={-3}"], ["int32[3]={10,7,4}"])
example("Range", ["float[]={0.0}", "float[]={1.0}", "float[]={0.5}"], ["float[2]={0.0,0.5}"], opset=27)
example("Range", ["float[]", "float[]={1.0}", "float[]={0.5}"], ["float[?]"])
example("Range", ["float[]={0.0}", "float[]={1.0}", "float[]={0.0}"], ["float[*]"], error="bad-attribute")
example("Range", ["int64[]={S}", "int64[]={0}", "int64[]={-2}"], ["int64[floor((S + 1)/2)]"])
example("Range", ["int64[2]={0,1}", "int64[]={4}", "int64[]={1}"], ["int64[*]"], error="shape-mismatch")
example("Range", ["int64[1]={0}", "int64[1]={4}", "int64[]={1}"], ["int64[4]={0,1,2,3}"])
example("ConstantOfShape", ["int64[0]={}"], ["float[]"])
example("Constant", [], ["string[2]"], attrs={"value_strings": ["a", "b"]})
