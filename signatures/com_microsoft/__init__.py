"""onnxruntime's contrib operators (domain ``com.microsoft``), emitted by its tools.

onnxruntime's transformer optimizer fuses attention, normalization and activation patterns into
these operators, and its quantizers emit the QLinear*, MatMulNBits and GatherBlockQuantized
families. ``onnx.defs`` knows none of them, so each module declares the signatures of the
operators it has rules for (``op`` below) next to the rules. The facts come from onnxruntime's
ContribOperators documentation and its registered schemas (tests/test_ms_models.py compares
every declaration here with the schemas of the installed onnxruntime).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from onnx import AttributeProto

from infer.contract.context import RuleContext
from infer.contract.signature import AttrSpec, Formal, Signature, declare

MS = "com.microsoft"

INT, FLOAT, STRING = AttributeProto.INT, AttributeProto.FLOAT, AttributeProto.STRING
INTS, FLOATS, STRINGS = AttributeProto.INTS, AttributeProto.FLOATS, AttributeProto.STRINGS
REQUIRED = object()  # an attribute default meaning "the node must give it"

# Type constraint lists that recur across the contrib schemas.
FLOAT_TYPES = ("tensor(float)", "tensor(float16)", "tensor(bfloat16)")
FLOAT_DOUBLE = ("tensor(float16)", "tensor(float)", "tensor(double)")
FLOAT_DOUBLE_BF16 = ("tensor(float16)", "tensor(float)", "tensor(double)", "tensor(bfloat16)")
INT8_TYPES = ("tensor(uint8)", "tensor(int8)")
INT32 = ("tensor(int32)",)
F32 = ("tensor(float)",)

_VARIADIC_MAX = 2147483647


def _formals(spec: str) -> tuple[Formal, ...]:
    """``"input:T bias?:T inputs...:TV"``: ``?`` optional, ``...`` variadic, ``...~`` heterogeneous."""
    out = []
    for item in spec.split():
        name, _, type_str = item.rpartition(":")
        if name.endswith("...~"):
            out.append(Formal(name[:-4], type_str, "variadic", 1, False))
        elif name.endswith("..."):
            out.append(Formal(name[:-3], type_str, "variadic", 1, True))
        elif name.endswith("?"):
            out.append(Formal(name[:-1], type_str, "optional"))
        else:
            out.append(Formal(name, type_str, "single"))
    return tuple(out)


def _arity(formals: tuple[Formal, ...]) -> tuple[int, int]:
    """(min, max) count: up to the last required formal; unbounded when the last is variadic."""
    required = [i for i, f in enumerate(formals) if f.option != "optional"]
    low = required[-1] + 1 if required else 0
    if formals and formals[-1].option == "variadic":
        return low - 1 + formals[-1].min_arity, _VARIADIC_MAX
    return low, len(formals)


def op(
    name: str,
    inputs: str,
    outputs: str,
    types: Mapping[str, Sequence[str]] | None = None,
    attrs: Mapping[str, tuple[int, Any]] | None = None,
    domain: str = MS,
    since: int = 1,
) -> Signature:
    """Declare one operator's signature.

    ``inputs``/``outputs``: ``name:Type`` items (see ``_formals``); a type that is not a key of
    ``types`` is a literal such as ``tensor(int64)``. ``attrs``: name -> (AttributeProto type,
    default), the default ``REQUIRED`` for a required attribute or ``None`` for none.
    """
    ins, outs = _formals(inputs), _formals(outputs)
    min_in, max_in = _arity(ins)
    min_out, max_out = _arity(outs)
    specs = {n: AttrSpec(n, t, d is REQUIRED, None if d is REQUIRED else d) for n, (t, d) in (attrs or {}).items()}
    return declare(
        Signature(
            domain=domain,
            name=name,
            since_version=since,
            inputs=ins,
            outputs=outs,
            constraints={k: tuple(v) for k, v in (types or {}).items()},
            attributes=specs,
            min_inputs=min_in,
            max_inputs=max_in,
            min_outputs=min_out,
            max_outputs=max_out,
        )
    )


def delegate(ctx: RuleContext, rule_fn: Callable[[RuleContext], Sequence[Any]], indices: Sequence[int]) -> list:
    """Run a default-domain rule on a view of ``ctx`` whose inputs are ``indices`` of the node.

    The QLinear* and fused operators interleave scales and zero points with the tensors their
    float counterparts take; the view presents only those tensors, in the float operator's order.
    """
    sub = ctx.view(indices)
    out = list(rule_fn(sub))
    if sub.reason is not None:
        ctx.reason, ctx.causes = sub.reason, sub.causes
    return out
