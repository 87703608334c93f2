"""Shared pieces of the ``ai.onnx.ml`` rules: the batch axis, class labels, attribute lengths."""

from __future__ import annotations

from typing import Any

from onnx import TensorProto

from infer.contract.context import RuleContext, RuleError
from infer.core.dims import Dim

ML = "ai.onnx.ml"

ROW_VECTOR = 1  # the batch of a 1-D input that onnxruntime reads as one row ``[1, C]``


def rows(ctx: RuleContext, one_d: Dim, max_rank: int = 2) -> Dim:
    """The batch ``N`` of input 0, read as ``[N, C]`` (or ``[C]``, whose batch is ``one_d``).

    Ranks outside 1..``max_rank`` are malformed for these operators (onnxruntime refuses them).
    ``None`` means unknown (the rank is unknown, or the runtimes disagree on a 1-D input).
    """
    s = ctx.shape(0)
    if s is None:
        ctx.because(f"`{ctx.input_name(0)}` has unknown rank", 0)
        return None
    if not 1 <= len(s) <= max_rank:
        raise RuleError("shape-mismatch", f"{ctx.op_type} takes a [N, C] or [C] input, got rank {len(s)}")
    if len(s) == 1:
        if one_d is None:
            ctx.because(f"runtimes disagree on the batch of a 1-D input to {ctx.op_type}", 0)
        return one_d
    return s[0]


def features(ctx: RuleContext) -> Dim:
    """The feature count ``C`` of input 0 (its last extent), or ``None``."""
    s = ctx.shape(0)
    return s[-1] if s else None


def attr_len(ctx: RuleContext, name: str) -> int:
    """Length of a list attribute (0 when absent); a tensor attribute counts its elements."""
    v = ctx.attr(name)
    if v is None:
        return 0
    if isinstance(v, TensorProto):
        n = 1
        for d in v.dims:
            n *= d
        return n
    return len(v)


def class_labels(ctx: RuleContext, ints_name: str) -> tuple[int | None, int]:
    """Element type and count of the class labels (``classlabels_strings`` or ``ints_name``).

    String labels make string outputs; otherwise the labels are int64 (onnxruntime and the
    reference evaluator both emit int64 when only integer labels, or none, are given).
    """
    n_str = attr_len(ctx, "classlabels_strings")
    n_int = attr_len(ctx, ints_name)
    if n_str and n_int:
        raise RuleError("bad-attribute", f"{ctx.op_type} has both classlabels_strings and {ints_name}")
    if n_str:
        return TensorProto.STRING, n_str
    return TensorProto.INT64, n_int


def positive(n: int) -> int | None:
    """``n`` as an extent, or ``None`` when the attributes do not give a positive count."""
    return n if n > 0 else None


def tensor_elem(t: Any) -> int | None:
    """Element type of a TENSOR attribute value."""
    return t.data_type or None if isinstance(t, TensorProto) else None
