"""onnxruntime's contrib operators (domain ``com.microsoft``), emitted by its tools.

onnxruntime's transformer optimizer fuses attention, normalization and activation patterns into
these operators, and its quantizers emit the QLinear*, MatMulNBits and GatherBlockQuantized
families. ``onnx.defs`` knows none of them, so each operator version is one record
(``signatures.kit.operator.operator``, ``domain=MS``) beside its rule: its signature, its rule (a
function the record decorates, a pattern, or a reason it is unsupported) and its examples. The
facts come from onnxruntime's ContribOperators documentation and its registered schemas
(tests/test_ms_models.py compares every declaration here with the schemas of the installed
onnxruntime). This module holds what the family modules share: the domain's name, recurring type
constraint lists and ``delegate``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from infer.contract.context import RuleContext
from signatures.kit.operator import FLOAT, FLOATS, INT, INTS, REQUIRED, STRING, STRINGS

__all__ = ["FLOAT", "FLOATS", "INT", "INTS", "REQUIRED", "STRING", "STRINGS"]  # (re-exported for the family modules)

MS = "com.microsoft"

# Type constraint lists that recur across the contrib schemas.
FLOAT_TYPES = ("tensor(float)", "tensor(float16)", "tensor(bfloat16)")
FLOAT_DOUBLE = ("tensor(float16)", "tensor(float)", "tensor(double)")
FLOAT_DOUBLE_BF16 = ("tensor(float16)", "tensor(float)", "tensor(double)", "tensor(bfloat16)")
INT8_TYPES = ("tensor(uint8)", "tensor(int8)")
INT32 = ("tensor(int32)",)
F32 = ("tensor(float)",)


def delegate(ctx: RuleContext, rule_fn: Callable[[RuleContext], Sequence[Any]], indices: Sequence[int]) -> list:
    """Run a default-domain rule on a view of ``ctx`` whose inputs are ``indices`` of the node.

    The QLinear* and fused operators interleave scales and zero points with the tensors their
    float counterparts take; the view presents only those tensors, in the float operator's order.
    """
    sub = ctx.view(indices)
    out = list(rule_fn(sub))
    if sub.reason is not None:
        ctx.because_of(sub)
    return out
