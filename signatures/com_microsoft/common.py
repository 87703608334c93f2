"""Small readers shared by the contrib rules: closed attribute choices, ranges, whole shapes."""

from __future__ import annotations

from collections.abc import Sequence

from infer.contract.context import RuleContext, RuleError
from infer.core.dims import Dim
from signatures.ai_onnx.attention import agree

Shape = tuple[Dim, ...]


def choice(ctx: RuleContext, name: str, default: str, allowed: Sequence[str]) -> str:
    """A string attribute with a closed set of values (the kernel refuses any other)."""
    v: str = ctx.attr(name, default)
    if v not in allowed:
        raise RuleError("bad-attribute", f"{ctx.op_type}: {name} {v!r} is not one of {', '.join(allowed)}")
    return v


def in_range(ctx: RuleContext, name: str, default: int, low: int, high: int) -> int:
    """An integer attribute the kernel (or the schema's inference) accepts only in ``[low, high]``."""
    v: int = ctx.attr(name, default)
    if not low <= v <= high:
        raise RuleError("bad-attribute", f"{ctx.op_type}: {name} must be in [{low}, {high}], is {v}")
    return v


def same_shape(ctx: RuleContext, a: Shape | None, b: Shape | None, what: str) -> Shape | None:
    """Two shapes the kernel requires identical: a rank or extent that differs is an error."""
    if a is None or b is None:
        return a if b is None else b
    if len(a) != len(b):
        raise RuleError("shape-mismatch", f"{ctx.op_type}: {what} have ranks {len(a)} and {len(b)}")
    return tuple(agree(ctx, f"{what} (axis {i})", x, y) for i, (x, y) in enumerate(zip(a, b)))
