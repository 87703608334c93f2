"""Element bounds of integer tensors whose contents are not tracked (``Value.span``).

A position index is often computed, not read: ``Range(0, S)``, or RoBERTa's
``CumSum(Cast(input_ids != pad)) * mask + pad``. Its values are unknown, but they lie within
bounds over the extents, and a Gather must find them within its table: ``S + 1 <= 65``, a
requirement of the model's domain. Bounds are inclusive, each an extent or ``None`` (unbounded);
they are kept only for int64 and int32 tensors, through sums, products of non-negative parts
and running sums (an integer overflow, which needs extents far past any real model's, is not
modelled).
"""

from __future__ import annotations

from onnx import TensorProto

from infer.contract.context import Facts
from infer.core import dims as D
from infer.core.dims import Dim
from infer.core.values import Span, Value

INTS = frozenset({TensorProto.INT64, TensorProto.INT32})  # where element arithmetic keeps bounds


def span_of(v: Value | None) -> Span | None:
    """The bounds of ``v``'s elements: its span, or the least and greatest of known integer
    contents; ``None`` when nothing bounds them."""
    if v is None:
        return None
    if v.span is not None:
        return v.span
    k = v.known
    if k is not None and k.elems and all(type(e) is int for e in k.elems):
        return Span(min(k.elems), max(k.elems), True)
    return None


def loose(s: Span | None) -> Span | None:
    """``s`` as bounds only (elements taken from it, a Gather's or a Slice's, may miss them)."""
    return None if s is None else Span(s.lo, s.hi, False)


def _non_negative(facts: Facts, d: Dim) -> bool:
    if type(d) is int:
        return d >= 0
    lb = facts.lower_bound(d) if d is not None else None
    return lb is not None and lb >= 0


def add(a: Span | None, b: Span | None, sign: int = 1) -> Span | None:
    """Bounds of ``x + y`` (``x - y`` with ``sign`` -1)."""
    if a is None or b is None:
        return None
    lo2, hi2 = (b.lo, b.hi) if sign == 1 else (_neg(b.hi), _neg(b.lo))
    # Shifted by a constant, reached bounds stay reached.
    tight = (a.tight and b.tight and b.lo == b.hi) or (b.tight and a.tight and a.lo == a.hi)
    return Span(_sum(a.lo, lo2), _sum(a.hi, hi2), tight)


def mul(facts: Facts, a: Span | None, b: Span | None) -> Span | None:
    """Bounds of ``x * y`` where both are non-negative (a mask times a count)."""
    if a is None or b is None or not all(_non_negative(facts, d) for d in (a.lo, b.lo)):
        return None
    hi = None if a.hi is None or b.hi is None else D.mul(a.hi, b.hi)
    return Span(D.mul(a.lo, b.lo), hi, False)


def cumsum(facts: Facts, a: Span | None, n: Dim, exclusive: bool) -> Span | None:
    """Bounds of a running sum of at most ``n`` non-negative elements bounded by ``a``."""
    if a is None or n is None or not _non_negative(facts, a.lo) or a.hi is None:
        return None
    return Span(0 if exclusive else a.lo, D.mul(a.hi, n), False)


def union(a: Span | None, b: Span | None) -> Span | None:
    """Bounds of elements taken from either (Where, Concat)."""
    if a is None or b is None:
        return None
    lo = D.dmin(a.lo, b.lo) if a.lo is not None and b.lo is not None else None
    hi = D.dmax(a.hi, b.hi) if a.hi is not None and b.hi is not None else None
    return Span(lo, hi, False)


def _neg(d: Dim) -> Dim:
    return None if d is None else D.neg(d)


def _sum(a: Dim, b: Dim) -> Dim:
    return None if a is None or b is None else D.add(a, b)
