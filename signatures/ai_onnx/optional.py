"""Optionals (Clause 6.8): Optional, OptionalHasElement, OptionalGetElement, every version.

An optional ``Value`` built here tracks whether it holds an element the way a sequence tracks
its elements (``signatures/ai_onnx/sequence.py``): ``Known((1,), (element,))`` or
``Known((0,), ())``, so ``OptionalHasElement`` gives a known condition (an ``If`` on it picks
its branch) and ``OptionalGetElement`` gives the element back with its contents.
From version 18 both query operators also accept a plain tensor or sequence (it is present),
and ``OptionalHasElement`` an absent input (it is not).
"""

from __future__ import annotations

from onnx import TensorProto, TypeProto, helper

from infer.contract.context import RuleContext, RuleError
from infer.core.types import OptionalType, SequenceType, SparseTensorType, TensorType, UnknownType
from infer.core.values import Known, Value, items
from signatures.kit.registry import example, rule

_BOOL = TensorType(TensorProto.BOOL, ())


@rule("Optional", since=15)
def optional(ctx: RuleContext) -> list:
    if ctx.has(0):
        v = ctx.value(0)
        assert v is not None
        return [Value(OptionalType(v.type), Known((1,), (v,)))]
    tp = ctx.attr("type")
    if tp is None:
        raise RuleError("bad-attribute", "Optional without an input needs attribute 'type'")
    out = ctx.output_name(0)
    return [Value(OptionalType(ctx.declared_type(tp, out)), Known((0,), ()))]


def _plain(ctx: RuleContext) -> bool:
    """Is input 0 a tensor or sequence (not an optional)? Allowed from version 18."""
    t = ctx.type(0)
    if isinstance(t, (TensorType, SparseTensorType, SequenceType)):
        if ctx.version < 18:
            raise RuleError("type-mismatch", f"{ctx.op_type}-{ctx.version} needs an optional input, not {t}")
        return True
    if not isinstance(t, (OptionalType, UnknownType)):
        raise RuleError("type-mismatch", f"{ctx.op_type} needs an optional input, not {t}")
    return False


@rule("OptionalHasElement", since=15)
def optional_has_element(ctx: RuleContext) -> list:
    if not ctx.has(0):
        if ctx.version < 18:
            raise RuleError("missing-input", "OptionalHasElement-15 needs its input")
        return [Value(_BOOL, Known((), (False,)))]  # no input: no element
    if _plain(ctx):
        return [Value(_BOOL, Known((), (True,)))]
    have = items(ctx.value(0))
    if have is None:
        ctx.contents_unknown(0, "whether the optional holds an element")
        return [_BOOL]
    return [Value(_BOOL, Known((), (len(have) == 1,)))]


@rule("OptionalGetElement", since=15)
def optional_get_element(ctx: RuleContext) -> list:
    if _plain(ctx):
        return [ctx.value(0)]
    have = items(ctx.value(0))
    if have is not None:
        if not have:
            raise RuleError("shape-mismatch", f"`{ctx.input_name(0)}` is an optional known to be empty")
        return [have[0]]
    t = ctx.type(0)
    return [t.elem if isinstance(t, OptionalType) else None]


def _tp_seq_int64_2() -> TypeProto:
    return helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.INT64, [2]))


example("Optional", ["float[N,3]"], ["optional(float[N,3])"], opset=15)
example("Optional", ["float[N,3]"], ["optional(float[N,3])"], opset=28)
example("Optional", [], ["optional(seq(int64[2]))"], attrs={"type": _tp_seq_int64_2()}, opset=18)
example("OptionalHasElement", ["optional(float[N])"], ["bool[]"], opset=15)
example("OptionalHasElement", ["float[N]"], ["bool[]={true}"], opset=18)
example("OptionalHasElement", [""], ["bool[]={false}"], opset=18)
example("OptionalHasElement", ["float[N]"], ["bool[*]"], opset=15, error="type-mismatch")
example("OptionalHasElement", ["seq(float[N])"], ["bool[]={true}"], opset=28)
example("OptionalGetElement", ["optional(float[N,3])"], ["float[N,3]"], opset=15)
example("OptionalGetElement", ["optional(seq(float[N]))"], ["seq(float[N])"], opset=18)
example("OptionalGetElement", ["float[N,3]"], ["float[N,3]"], opset=18)
example("OptionalGetElement", ["float[N,3]"], ["unknown"], opset=15, error="type-mismatch")
example("OptionalGetElement", ["optional(float[2])"], ["float[2]"], opset=28)
