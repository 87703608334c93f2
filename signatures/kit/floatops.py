"""Float elements that depend on dimension variables: exact rationals, rounded at most once.

Exporters compute sizes through float tensors: ``ceil(Cast(H) / 32.0) * 32``, TF-style "same"
padding ``(ceil(H / s) - 1) * s + k - H``, ``floor(Cast(H) * 0.5)``. Such an element is a
``SymFloat``: exactly ``num/den``, or that quotient rounded once to the tensor's precision ``p``.
Nothing here is assumed: a value is claimed only where it holds in every run of the model.

- An IEEE operation (+, -, *, /) on exact operands rounds its exact result once. Where the run's
  bounds keep a dyadic result (a power-of-two ``den``) within ``2^p``, no rounding happens. Past
  that, float32 and double round it to the integer ``float32(num)`` (``float64``), a term of
  the extent language, so ``Cast(H)`` in float32 is ``float32(H)``, which reads ``H`` wherever
  ``H <= 2^24`` is proven and stays exact everywhere else. Any other result is that quotient
  rounded once; an operation on it would round a second time: its result is unknown.
- ``float16`` and ``bfloat16`` results are claimed only where no rounding happens at all:
  onnxruntime computes chains of such operations in float32 (see ``FloatArith.__init__``), so
  a rounded value is one reading among two.
- ``Floor``, ``Ceil``, ``Round`` and casts to integers turn a value back into an exact integer
  expression: exactly for an exact value, and for a once-rounded one where the run proves
  ``|num| < 2^(p-1)`` and ``den < 2^(p-1)``. Then the quotient, when not an integer or a half, is
  at least ``1/(2 den)`` from every integer and half, farther than the rounding error
  ``|num|/den * 2^-p``, so rounding cannot carry it across one.
- A value that may reach the type's infinity (a product of several large extents in float32)
  is unknown: every variable is an extent, below ``2^63``, which bounds what it can reach.

Anything else (``Sqrt``, ``Pow`` to a fraction, ``Reciprocal`` of a variable, float ``Mod``) on a
symbolic element is unknown. Literal floats are computed as before (in double, rounded to the
tensor's type: one rounding, since double carries more than twice the precision of the narrower
types).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any, TypeGuard

import numpy as np

from infer.core import dims as D
from infer.core.dims import Dim
from infer.core.values import Elem, SymFloat, round_float

_NP_OF_BITS = {24: np.float32, 53: np.float64, 11: np.float16}
_NAMES = {24: "float32", 53: "double", 11: "float16", 8: "bfloat16"}
# Magnitudes from which rounding to the type gives infinity (its largest finite value plus half an ulp).
_OVERFLOW_AT = {24: (1 << 128) - (1 << 103), 53: (1 << 1024) - (1 << 970)}
# Denominators a value may be scaled down to: a non-zero one stays far above the smallest normal
# float32 (2^-126), where scaling by a power of two would start to lose bits.
_SCALED_DEN_MAX = 1 << 100


def _is_num(x: object) -> TypeGuard[int | float]:
    return type(x) is float or type(x) is int


def _rational(x: Elem) -> tuple[Dim, int, int] | None:
    """``(num, den, rounded)`` of an element: a ``SymFloat``, or a finite literal exactly."""
    if type(x) is SymFloat:
        return x.num, x.den, x.rounded
    if type(x) is float:
        if not math.isfinite(x):
            return None
        q = Fraction(x)
        return q.numerator, q.denominator, 0
    if type(x) is int:
        return x, 1, 0
    return None


class FloatArith:
    """Element operations of one float element type of ``bits`` bits of precision."""

    def __init__(self, bits: int, bounds: Callable[[Dim], tuple[int | None, int | None]]):
        """``bounds`` decides signs and magnitudes (the run's, ``Facts.bounds``)."""
        self.bits = bits
        self.bounds = bounds
        # onnxruntime runs a 16-bit float operator it has no kernel for in float32, with casts
        # around it that it then merges away: a chain of such operators keeps float32
        # intermediates (100h * 0.1h feeds Pow with 9.9976, not 10.0). Only results that need
        # no rounding are the same both ways.
        self.exact_only = bits < 24
        self.name = _NAMES.get(bits, f"{bits}-bit float")

    # -- making values --------------------------------------------------------------------------

    def literal(self, x: float) -> float | None:
        """A Python float rounded to this type (``None`` where numpy has no such type)."""
        return round_float(x, self.bits)

    def _within(self, num: Dim, bound: int) -> bool:
        """Do the run's bounds prove ``|num| <= bound``?"""
        lo, hi = self.bounds(num)
        return lo is not None and hi is not None and -bound <= lo and hi <= bound

    def _finite(self, num: Dim, den: int) -> bool:
        """Does ``num/den`` stay below the type's infinity in every run?"""
        limit = _OVERFLOW_AT.get(self.bits)
        top = D.magnitude(num)
        return limit is not None and top is not None and top < limit * den

    def make(self, num: Dim, den: int, rounded: bool, may_round: bool = True) -> Elem:
        """The element ``num/den`` as one operation on exact operands leaves it in this type;
        ``rounded``: an operand was already rounded (the result would be rounded twice);
        ``may_round`` false: only a result that needs no rounding."""
        if num is None or den <= 0:
            return None
        g = math.gcd(D.content(num), den)
        if g > 1:
            num, den = D.divide_exact(num, g), den // g
        if isinstance(num, int):
            return None if rounded else self.literal(num / den) if abs(num) < (1 << 1000) else None
        if rounded:
            return None
        p = self.bits
        dyadic = den & (den - 1) == 0
        if dyadic and den <= 1 << p and self._within(num, 1 << p):
            return SymFloat(num, den, 0)  # no rounding: every such quotient is a value of the type
        if self.exact_only or not may_round or not self._finite(num, den):
            return None  # see __init__ for the narrow types
        if dyadic:
            # A power of two scales a value without rounding it (far from the type's smallest
            # exponents), so the rounded quotient is the rounded numerator over ``den``.
            rounded_num = D.to_float(num, p) if den <= 1 << p else None
            return None if rounded_num is None else SymFloat(rounded_num, den, 0)
        return SymFloat(num, den, p)

    def from_integer(self, e: Dim) -> Elem:
        """An integer (a symbolic extent) cast to this type."""
        return self.make(e, 1, False)

    def convert(self, x: SymFloat) -> Elem:
        """``x`` (of another float type) cast to this type."""
        if x.rounded:
            # A wider type holds the rounded value exactly; a narrower one rounds it again.
            return x if x.rounded <= self.bits else None
        return self.make(x.num, x.den, False)

    # -- arithmetic -----------------------------------------------------------------------------

    def _numeric(self, f: Callable[[Any, Any], Any], a: Any, b: Any) -> Elem:
        try:
            r = f(a, b)
        except (ArithmeticError, ValueError, TypeError):
            return None
        out = self.literal(r) if isinstance(r, (int, float)) else None
        if out is None or not self.exact_only:
            return out
        try:
            exact = f(Fraction(a), Fraction(b))  # the same arithmetic without rounding
        except (ArithmeticError, ValueError, TypeError, OverflowError):
            return None
        return out if math.isfinite(out) and Fraction(out) == exact else None

    def add(self, a: Elem, b: Elem) -> Elem:
        if _is_num(a) and _is_num(b):
            return self._numeric(lambda x, y: x + y, a, b)
        ra, rb = _rational(a), _rational(b)
        if ra is None or rb is None:
            return None
        (na, da, pa), (nb, db, pb) = ra, rb
        return self.make(D.add(D.mul(na, db), D.mul(nb, da)), da * db, bool(pa or pb))

    def sub(self, a: Elem, b: Elem) -> Elem:
        if _is_num(a) and _is_num(b):
            return self._numeric(lambda x, y: x - y, a, b)
        return self.add(a, self.neg(b))

    def _scaled(self, x: Elem, factor: Elem, divide: bool) -> Elem:
        """``x * factor`` (``x / factor`` with ``divide``) for a value ``x`` of this type and a
        power of two ``factor``: exact, and a once-rounded ``x`` stays rounded once (scaling by
        a power of two commutes with rounding), while the result stays far from the type's
        smallest exponents and its infinity; ``NotImplemented`` for other operands."""
        if type(x) is not SymFloat or type(factor) is not float or self.exact_only:
            return NotImplemented
        mantissa, exponent = math.frexp(factor)
        if abs(mantissa) != 0.5:
            return NotImplemented
        shift = (exponent - 1) * (-1 if divide else 1)
        num, den = D.mul(x.num, -1 if mantissa < 0 else 1), x.den
        if shift >= 0:
            num = D.mul(num, 1 << shift)
        else:
            den <<= -shift
        if num is None or den > _SCALED_DEN_MAX or not self._finite(num, den):
            return None
        g = math.gcd(D.content(num), den)
        return SymFloat(D.divide_exact(num, g), den // g, x.rounded) if g > 1 else SymFloat(num, den, x.rounded)

    def mul(self, a: Elem, b: Elem) -> Elem:
        if _is_num(a) and _is_num(b):
            return self._numeric(lambda x, y: x * y, a, b)
        for x, y in ((a, b), (b, a)):
            scaled = self._scaled(x, y, False)
            if scaled is not NotImplemented:
                return scaled
        ra, rb = _rational(a), _rational(b)
        if ra is None or rb is None:
            return None
        (na, da, pa), (nb, db, pb) = ra, rb
        if na == 0 or nb == 0:
            # 0 * x is 0 (or -0.0): exact whatever x is, but the sign of a zero is not tracked.
            return None
        return self.make(D.mul(na, nb), da * db, bool(pa or pb))

    def div(self, a: Elem, b: Elem) -> Elem:
        if _is_num(a) and _is_num(b):
            return self._numeric(lambda x, y: x / y, a, b)
        scaled = self._scaled(a, b, True)
        if scaled is not NotImplemented:
            return scaled
        ra, rb = _rational(a), _rational(b)
        if ra is None or rb is None:
            return None
        (na, da, pa), (nb, db, pb) = ra, rb
        if not isinstance(nb, int) or nb == 0:
            return None  # a symbolic divisor makes no polynomial over a constant
        sign = 1 if nb > 0 else -1
        return self.make(D.mul(na, db * sign), da * abs(nb), bool(pa or pb))

    def _exact(self, a: Elem, b: Elem, combine: Callable[[Fraction, Fraction], Fraction], op: str) -> Elem:
        ra, rb = _rational(a), _rational(b)
        if ra is None or rb is None or ra[2] or rb[2]:
            return None
        if isinstance(ra[0], int) and isinstance(rb[0], int):
            q = combine(Fraction(ra[0], ra[1]), Fraction(rb[0], rb[1]))
            r = self.literal(float(q)) if abs(q) < (1 << 1000) else None
            return r if r is not None and math.isfinite(r) and Fraction(r) == q else None
        (na, da, _), (nb, db, _) = ra, rb
        if op == "mul" and (na == 0 or nb == 0):
            return None  # the sign of a zero is not tracked (see ``mul``)
        num = D.add(D.mul(na, db), D.mul(nb, da)) if op == "add" else D.mul(na, nb)
        out = self.make(num, da * db, False, may_round=False)
        return out if type(out) is SymFloat else None

    def add_exact(self, a: Elem, b: Elem) -> Elem:
        """``a + b`` only where no rounding happens: a reduction whose order the runtime chooses
        (pairwise, vectorized) gives the same result in every order only then."""
        return self._exact(a, b, lambda x, y: x + y, "add")

    def mul_exact(self, a: Elem, b: Elem) -> Elem:
        return self._exact(a, b, lambda x, y: x * y, "mul")

    def neg(self, a: Elem) -> Elem:
        if type(a) is SymFloat:
            return SymFloat(D.neg(a.num), a.den, a.rounded)  # rounding to nearest is symmetric
        return -a if _is_num(a) else None

    def _sign(self, a: Elem) -> int | None:
        """-1, 0 or 1 when the sign of ``a`` is certain."""
        if _is_num(a):
            return None if math.isnan(a) else (a > 0) - (a < 0)
        if type(a) is not SymFloat:
            return None
        if a.num == 0:
            return 0
        lo, hi = self.bounds(a.num)
        if lo is not None and lo >= 1:
            return 1
        if hi is not None and hi <= -1:
            return -1
        if lo is not None and lo >= 0 and hi is not None and hi <= 0:
            return 0
        return None

    def absolute(self, a: Elem) -> Elem:
        if _is_num(a):
            return abs(a)
        s = self._sign(a)
        return None if s is None else a if s >= 0 else self.neg(a)

    def relu(self, a: Elem) -> Elem:
        if _is_num(a):
            return max(a, 0.0) if not math.isnan(a) else a
        s = self._sign(a)
        return None if s is None else a if s > 0 else 0.0

    def sign(self, a: Elem) -> Elem:
        if _is_num(a) and math.isnan(a):
            return a
        s = self._sign(a)
        return None if s is None else float(s)

    def _difference_sign(self, a: Elem, b: Elem) -> int | None:
        """The sign of ``a - b`` for two finite values, exact or rounded: rounding to nearest is
        monotonic, so a strict order of the exact values orders the rounded ones weakly."""
        ra, rb = _rational(a), _rational(b)
        if ra is None or rb is None:
            return None
        (na, da, _), (nb, db, _) = ra, rb
        diff = D.sub(D.mul(na, db), D.mul(nb, da))
        if diff is None:
            return None
        if isinstance(diff, int):
            return (diff > 0) - (diff < 0)
        lo, hi = self.bounds(diff)
        if lo is not None and lo >= 0 and hi is not None and hi <= 0:
            return 0
        if lo is not None and lo >= 0:
            return 1  # a >= b
        if hi is not None and hi <= 0:
            return -1  # a <= b
        return None

    def _extremum(self, a: Elem, b: Elem, want_max: bool) -> Elem:
        for x, y in ((a, b), (b, a)):
            if type(x) is float and not math.isfinite(x):
                if math.isnan(x):
                    return x  # onnxruntime propagates NaN, whatever the order
                return x if (x > 0) == want_max else y
        if _is_num(a) and _is_num(b):
            return self.literal(max(a, b) if want_max else min(a, b))
        s = self._difference_sign(a, b)
        if s is None:
            return None
        # a >= b (s >= 0): max is a; the values are equal when s == 0, so either serves.
        return (a if s >= 0 else b) if want_max else (b if s >= 0 else a)

    def max(self, a: Elem, b: Elem) -> Elem:
        return self._extremum(a, b, True)

    def min(self, a: Elem, b: Elem) -> Elem:
        return self._extremum(a, b, False)

    def compare(self, a: Elem, b: Elem) -> int | None:
        """The sign of ``a - b`` where certain (NaN compares as ``None``): exact values only,
        since rounding can make distinct values equal."""
        if _is_num(a) and _is_num(b):
            if math.isnan(a) or math.isnan(b):
                return None
            return (a > b) - (a < b)
        for x in (a, b):
            if type(x) is SymFloat and x.rounded:
                return None
            if type(x) is float and not math.isfinite(x):
                return None
        s = self._difference_sign(a, b)
        if s is None:
            return None
        ra, rb = _rational(a), _rational(b)
        # ``_difference_sign`` says >= or <=; strictness needs the difference to be non-zero.
        diff = D.sub(D.mul(ra[0], rb[1]), D.mul(rb[0], ra[1]))  # type: ignore[index]
        if s == 0:
            return 0
        lo, hi = self.bounds(diff)
        if s > 0 and lo is not None and lo >= 1:
            return 1
        if s < 0 and hi is not None and hi <= -1:
            return -1
        return None

    def is_nan(self, a: Elem) -> bool | None:
        if type(a) is float:
            return math.isnan(a)
        return False if type(a) is SymFloat else None

    # -- back to integers -----------------------------------------------------------------------

    def _settled(self, x: SymFloat) -> bool:
        """Can floor, ceil, round and trunc of ``x`` be taken of its exact quotient?"""
        if not x.rounded:
            return True
        bound = (1 << (x.rounded - 1)) - 1
        return x.den <= bound and self._within(x.num, bound)

    def floor_int(self, x: Elem) -> Dim:
        """``floor`` of ``x`` as an integer dim, or ``None``."""
        if type(x) is not SymFloat or not self._settled(x):
            return None
        return D.floordiv(x.num, x.den)

    def ceil_int(self, x: Elem) -> Dim:
        if type(x) is not SymFloat or not self._settled(x):
            return None
        return D.ceildiv(x.num, x.den)

    def round_int(self, x: Elem) -> Dim:
        """Round half to even; only where no half can occur (an odd ``den``) or ``den`` is 1."""
        if type(x) is not SymFloat or x.den % 2 == 0 or not self._settled(x):
            return None
        return D.floordiv(D.add(x.num, (x.den - 1) // 2), x.den)

    def trunc_int(self, x: Elem) -> Dim:
        """Toward zero, as a cast to an integer type truncates."""
        if type(x) is not SymFloat or not self._settled(x):
            return None
        lo, hi = self.bounds(x.num)
        if lo is not None and lo >= 0:
            return D.floordiv(x.num, x.den)
        if hi is not None and hi <= 0:
            return D.ceildiv(x.num, x.den)
        return None

    def _integral(self, f: Callable[[float], float], to_int: Callable[[Elem], Dim]) -> Callable[[Elem], Elem]:
        def op(x: Elem) -> Elem:
            if type(x) is float:
                return float(f(x)) if math.isfinite(x) else x
            i = to_int(x)
            # The integer is no larger than the value it came from, exact in this type already.
            return None if i is None else (float(i) if isinstance(i, int) else SymFloat(i, 1, 0))

        return op

    @property
    def floor(self) -> Callable[[Elem], Elem]:
        return self._integral(math.floor, self.floor_int)

    @property
    def ceil(self) -> Callable[[Elem], Elem]:
        return self._integral(math.ceil, self.ceil_int)

    @property
    def round(self) -> Callable[[Elem], Elem]:
        return self._integral(lambda v: float(np.round(v)), self.round_int)

    # -- functions of literals only -------------------------------------------------------------

    def sqrt(self, a: Elem) -> Elem:
        # IEEE square roots are correctly rounded: double then the type is one rounding.
        if type(a) is float and a >= 0:
            r = self.literal(math.sqrt(a))
            return r if not self.exact_only or (r is not None and Fraction(r) ** 2 == Fraction(a)) else None
        return None if type(a) is not float else (a if math.isnan(a) else None)

    def reciprocal(self, a: Elem) -> Elem:
        return self._numeric(lambda x, y: x / y, 1.0, a) if _is_num(a) else None

    def fmod(self, a: Elem, b: Elem) -> Elem:
        # fmod is exact in IEEE arithmetic; C's fmod of a literal is Python's math.fmod.
        if _is_num(a) and _is_num(b) and b != 0 and math.isfinite(a) and math.isfinite(b):
            return self.literal(math.fmod(a, b))
        return None

    def pow(self, a: Elem, b: Elem) -> Elem:
        """``a ** b`` only where exact: an integral exponent from 0 to 8, or 0.5 of a perfect square,
        and a representable result (runtimes call ``pow``, which is not correctly rounded in general)."""
        if _is_num(b) and b == 0.5 and type(a) is float:
            # A square root that is exact (16.0 ** 0.5, as exporters compute a patch grid).
            r = self.literal(math.sqrt(a)) if a >= 0 else None
            return r if r is not None and Fraction(r) ** 2 == Fraction(a) else None
        if not _is_num(b) or not float(b).is_integer() or not 0 <= b <= 8:
            return None
        k = int(b)
        ra = _rational(a)
        if ra is None or ra[2]:
            return None
        num: Dim = 1
        den = 1
        for _ in range(k):
            num, den = D.mul(num, ra[0]), den * ra[1]
        if isinstance(num, int):
            q = Fraction(num, den)
            r = self.literal(float(q))
            return r if r is not None and Fraction(r) == q else None
        out = self.make(num, den, False, may_round=False)
        return out if type(out) is SymFloat else None
