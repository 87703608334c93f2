"""Random generators: RandomNormal, RandomUniform, their ``*Like`` forms, Multinomial, Bernoulli.

Their output element type is not bound by an input: the ``dtype`` attribute decides it, else
(``*Like`` and Bernoulli) the input's element type, else the schema default. The values are
random, so no contents are ever known; the shapes are exact.
"""

from __future__ import annotations

from onnx import TensorProto

from infer.contract.context import RuleContext, RuleError
from infer.contract.signature import allowed_types
from infer.core.types import TensorType, elem_name
from signatures.kit.registry import example, rule


def _allowed(ctx: RuleContext) -> set[int] | None:
    """Element types the output's type constraint admits (``None``: no signature)."""
    sig = ctx.sig
    if sig is None or not sig.outputs:
        return None
    return {
        t.elem for t in allowed_types(sig, sig.outputs[0].type_str) if isinstance(t, TensorType) and t.elem is not None
    }


def output_elem(ctx: RuleContext, fallback: int | None) -> int | None:
    """The output element type: ``dtype`` if given, else ``fallback``; checked against the schema."""
    allowed = _allowed(ctx)
    if ctx.has_attr("dtype"):
        elem = int(ctx.attrs["dtype"])
        if allowed is not None and elem not in allowed:
            raise RuleError("bad-attribute", f"dtype {elem_name(elem)} is not an allowed output type")
        return elem
    if fallback is None:
        return None
    if allowed is not None and fallback not in allowed:
        raise RuleError(
            "type-mismatch",
            f"without dtype the output takes the input's type {elem_name(fallback)}, which the output does not admit",
            "set the dtype attribute",
        )
    return fallback


@rule(["RandomNormal", "RandomUniform"])
def random_shaped(ctx: RuleContext) -> list:
    shape = list(ctx.require("shape"))
    if any(d < 0 for d in shape):
        raise RuleError("bad-attribute", f"shape {shape} has a negative extent")
    return [TensorType(output_elem(ctx, ctx.attr("dtype", TensorProto.FLOAT)), tuple(shape))]


@rule(["RandomNormalLike", "RandomUniformLike"])
def random_like(ctx: RuleContext) -> list:
    return [TensorType(output_elem(ctx, ctx.elem(0)), ctx.shape(0))]


@rule("Bernoulli", since=15)
def bernoulli(ctx: RuleContext) -> list:
    return [TensorType(output_elem(ctx, ctx.elem(0)), ctx.shape(0))]


@rule("Multinomial", since=7)
def multinomial(ctx: RuleContext) -> list:
    s = ctx.shape(0)
    if s is not None and len(s) != 2:
        raise RuleError("shape-mismatch", f"input must be [batch_size, class_size], has rank {len(s)}")
    samples = ctx.attr("sample_size", 1)
    if samples < 0:
        raise RuleError("bad-attribute", f"sample_size {samples} is negative")
    elem = output_elem(ctx, ctx.attr("dtype", TensorProto.INT32))
    return [TensorType(elem, (None if s is None else s[0], samples))]


example("RandomNormal", [], ["float[2,3]"], attrs={"shape": [2, 3]}, opset=1)
example("RandomNormal", [], ["double[4]"], attrs={"shape": [4], "dtype": TensorProto.DOUBLE})
example("RandomNormal", [], ["bfloat16[1]"], attrs={"shape": [1], "dtype": TensorProto.BFLOAT16}, opset=22)
example("RandomNormal", [], ["unknown"], attrs={"shape": [2], "dtype": TensorProto.INT32}, error="bad-attribute")
example("RandomUniform", [], ["float16[1,5]"], attrs={"shape": [1, 5], "dtype": TensorProto.FLOAT16}, opset=1)
example("RandomUniform", [], ["float[5]"], attrs={"shape": [5]}, opset=22)
example("RandomNormalLike", ["double[N,C]"], ["double[N,C]"], opset=1)
example("RandomNormalLike", ["int64[N,C]"], ["float[N,C]"], attrs={"dtype": TensorProto.FLOAT}, opset=22)
example("RandomNormalLike", ["int64[N,C]"], ["unknown"], error="type-mismatch")
example("RandomUniformLike", ["float16[*]"], ["float16[*]"], opset=1)
example("RandomUniformLike", ["float[N]"], ["double[N]"], attrs={"dtype": TensorProto.DOUBLE}, opset=22)
example("Bernoulli", ["float[N,3]"], ["float[N,3]"], opset=15)
example("Bernoulli", ["double[N,3]"], ["bool[N,3]"], attrs={"dtype": TensorProto.BOOL}, opset=22)
example("Bernoulli", ["double[N]"], ["int32[N]"], attrs={"dtype": TensorProto.INT32}, opset=15)
example("Multinomial", ["float[B,10]"], ["int32[B,1]"], opset=7)
example("Multinomial", ["float[B,10]"], ["int64[B,5]"], attrs={"sample_size": 5, "dtype": TensorProto.INT64}, opset=22)
example("Multinomial", ["float[B,10]"], ["unknown"], attrs={"dtype": TensorProto.FLOAT}, error="bad-attribute")
example("Multinomial", ["float[10]"], ["unknown"], error="shape-mismatch")
