"""Bounds of extents read from their syntax alone, computed once per object.

Declared variables are at least 1 and fresh ones at least 0, and nothing else is known of them
here: the facts a run learns (``x >= 4`` because a window must fit) are the run's scope's, never
this module's, so a bound cached on an object holds in every run.

Two ways, the second where the first finds nothing: interval arithmetic over the terms, and a
linear relaxation, where every ``floor(x/k)`` is replaced by ``(x - k + 1)/k`` or ``x/k`` and every
``mod`` by its range, so that terms which cancel (``h - floor(h/2)``) do (``h/2 >= 1/2``).
"""

from __future__ import annotations

import math
from fractions import Fraction

from infer.core.dims.budget import tick
from infer.core.dims.terms import FLOAT_KINDS, Bound, Expr, Interval, Mono, Op, Var, as_var, round_to_bits

_INF = math.inf


def bounds(d: int | Expr) -> Interval:
    """``(least, greatest)`` of ``d`` over every binding of its variables; ``None`` where none
    is known on that side."""
    if type(d) is not Expr:
        return d, d
    b = d._bounds
    if b is None:
        b = d._bounds = _expr_bounds(d)
    return b


def lower(d: int | Expr) -> Bound:
    return bounds(d)[0]


def upper(d: int | Expr) -> Bound:
    return bounds(d)[1]


# -- intervals -----------------------------------------------------------------------------------


def _x(b: Bound, low: bool) -> float | int:
    return (-_INF if low else _INF) if b is None else b


def _b(x: float | int) -> Bound:
    return None if x in (_INF, -_INF) else int(x)


def _times(x: float | int, y: float | int) -> float | int:
    return 0 if x == 0 or y == 0 else x * y


def _mul(a: Interval, b: Interval) -> Interval:
    (a0, a1), (b0, b1) = a, b
    if a0 is not None and b0 is not None and a0 >= 0 and b0 >= 0:
        hi = None if (a1 is None and b1 != 0) or (b1 is None and a1 != 0) else (a1 or 0) * (b1 or 0)
        return a0 * b0, hi
    corners = [_times(x, y) for x in (_x(a0, True), _x(a1, False)) for y in (_x(b0, True), _x(b1, False))]
    return _b(min(corners)), _b(max(corners))


def _power(b: Interval, e: int) -> Interval:
    lo, hi = b
    if lo is not None and lo >= 0:
        return lo**e, None if hi is None else hi**e
    if e % 2:
        return None if lo is None else lo**e, None if hi is None else hi**e
    return 0, None if lo is None or hi is None else max(lo**e, hi**e)


def _factor_bounds(f: Var | Op) -> Interval:
    if type(f) is Var:
        return f.lo, None
    b = f._bounds
    if b is None:
        b = f._bounds = _op_bounds(f)
    return b


def _mono_bounds(m: Mono) -> Interval:
    b = m._bounds
    if b is None:
        b = (1, 1)
        for f, e in m.factors:
            fb = _factor_bounds(f)
            b = _mul(b, fb if e == 1 else _power(fb, e))
        m._bounds = b
    return b


def _floor(b: Bound, k: int) -> Bound:
    return None if b is None else b // k


def _op_bounds(f: Op) -> Interval:
    kind, args = f.kind, f.args
    if kind == "max":
        lows = [lower(a) for a in args]
        highs = [upper(a) for a in args]
        known, known_highs = [x for x in lows if x is not None], [x for x in highs if x is not None]
        return (max(known) if known else None), (max(known_highs) if len(known_highs) == len(highs) else None)
    if kind == "min":
        lows = [lower(a) for a in args]
        highs = [upper(a) for a in args]
        known, known_lows = [x for x in highs if x is not None], [x for x in lows if x is not None]
        return (min(known_lows) if len(known_lows) == len(lows) else None), (min(known) if known else None)
    if kind in FLOAT_KINDS:  # rounding to nearest is monotone
        bits = FLOAT_KINDS[kind]
        lo, hi = bounds(args[0])
        return (None if lo is None else round_to_bits(lo, bits)), (None if hi is None else round_to_bits(hi, bits))
    a, b = args
    lo_a, hi_a = bounds(a)
    if kind == "floor":
        if type(b) is int and b > 0:
            return _floor(lo_a, b), _floor(hi_a, b)
        least_b = lower(b)
        if least_b is None or least_b < 1:
            return None, None
        # a divisor >= 1 moves a quotient toward 0: between a and 0
        lo = 0 if lo_a is not None and lo_a >= 0 else lo_a
        hi = hi_a if hi_a is None or hi_a >= 0 else -1
        return lo, hi
    # mod, with the sign of its modulus
    if type(b) is not Expr:
        if b > 0:
            return 0, (b - 1 if hi_a is None or lo_a is None or lo_a < 0 else min(b - 1, hi_a))
        return b + 1, 0
    lo_b, hi_b = bounds(b)
    if lo_b is None or lo_b < 1:
        return None, None
    top = None if hi_b is None else hi_b - 1
    if lo_a is not None and lo_a >= 0 and hi_a is not None:
        top = hi_a if top is None else min(top, hi_a)
    return 0, top


def _expr_bounds(e: Expr) -> Interval:
    lo: float | int = e.const
    hi: float | int = e.const
    for m, c in e.terms:
        tick()
        m0, m1 = _mono_bounds(m)
        if c > 0:
            lo += _times(c, _x(m0, True))
            hi += _times(c, _x(m1, False))
        else:
            lo += _times(c, _x(m1, False))
            hi += _times(c, _x(m0, True))
    low, high = _b(lo), _b(hi)
    if any(type(f) is Op for m, _ in e.terms for f, _ in m.factors):
        # Terms of operations may cancel where intervals cannot see it (h - floor(h/2)).
        relaxed = _relaxed_bound(e, True)
        if relaxed is not None and (low is None or relaxed > low):
            low = relaxed
        relaxed = _relaxed_bound(e, False)
        if relaxed is not None and (high is None or relaxed < high):
            high = relaxed
    return low, high


def nonnegative(m: Mono) -> bool:
    """Whether the monomial ``m`` is never negative (its interval starts at 0 or above)."""
    lo = _mono_bounds(m)[0]
    return lo is not None and lo >= 0


def at_most_termwise(a: int | Expr, b: int | Expr) -> bool:
    """Whether ``a <= b`` shows term by term, with nothing built: each term of ``b - a`` is at
    least 0 (a coefficient of at least 0 on a monomial that is never negative, 0 on every
    other; a constant of at least 0), or a negative one is paid for by positive terms on its
    multiples (``covered``: ``256*b*s - 24*s >= 0`` with ``b >= 1``). ``False`` says only that
    this test does not show it (``less`` may). Its work is the term lists' length, and their
    product where a term is negative."""
    ta = a.terms if type(a) is Expr else ()
    tb = b.terms if type(b) is Expr else ()
    const = (b.const if type(b) is Expr else b) - (a.const if type(a) is Expr else a)
    tick(len(ta) + len(tb))
    short: list[tuple[Mono | None, int]] = [] if const >= 0 else [(None, -const)]
    spare: list[tuple[Mono, int]] = []
    i = j = 0
    while i < len(ta) or j < len(tb):
        if j == len(tb) or (i < len(ta) and ta[i][0].okey < tb[j][0].okey):
            m, c = ta[i][0], -ta[i][1]
            i += 1
        elif i == len(ta) or tb[j][0].okey < ta[i][0].okey:
            m, c = tb[j]
            j += 1
        else:
            m, c = ta[i][0], tb[j][1] - ta[i][1]
            i += 1
            j += 1
        if c and not nonnegative(m):
            return False
        if c > 0:
            spare.append((m, c))
        elif c < 0:
            short.append((m, -c))
    return not short or (bool(spare) and covered(short, spare))


def covered(short: list[tuple[Mono | None, int]], spare: list[tuple[Mono, int]]) -> bool:
    """Whether a sum ``sum(c*p for p, c in spare) - sum(c*m for m, c in short)`` of never
    negative monomials (``None`` in ``short``: the constant 1) is at least 0 because each
    ``c*m`` is paid for by part of a ``c*p`` where ``p`` is ``m`` times factors of at least 1,
    so ``p >= m`` in every run. Greedy: ``False`` says only that no payment was found."""
    left = [c for _, c in spare]
    if sum(left) < sum(c for _, c in short):
        return False  # each unit of a positive term pays for at most one of a negative one
    tick(len(short) * len(spare))
    for m, need in short:
        for k, (p, _) in enumerate(spare):
            if left[k] and _multiple(p, m):
                take = min(left[k], need)
                left[k] -= take
                need -= take
                if not need:
                    break
        if need:
            return False
    return True


def _multiple(p: Mono, m: Mono | None) -> bool:
    """Whether ``p`` is ``m`` (``None``: 1) times factors each at least 1."""
    if m is None:
        return all(_at_least_one(f) for f, _ in p.factors)
    if len(m.factors) > len(p.factors):
        return False
    have = dict(m.factors)
    for f, e in p.factors:
        e_m = have.pop(f, 0)
        if e < e_m or (e > e_m and not _at_least_one(f)):
            return False
    return not have


def _at_least_one(f: Var | Op) -> bool:
    lo = _factor_bounds(f)[0]
    return lo is not None and lo >= 1


# -- the linear relaxation -----------------------------------------------------------------------

Linear = tuple[dict[Mono, Fraction], Fraction]  # monomials of variables only, and a constant


def _relax(d: int | Expr, low: bool) -> Linear | None:
    """A bound of ``d`` without operations: a lower one (``low``) or an upper one."""
    if type(d) is not Expr:
        return {}, Fraction(d)
    acc: dict[Mono, Fraction] = {}
    const = Fraction(d.const)
    for m, c in d.terms:
        tick()
        part = _relax_mono(m, low if c > 0 else not low)
        if part is None:
            return None
        terms, k = part
        const += c * k
        for v, x in terms.items():
            acc[v] = acc.get(v, 0) + c * x
    return acc, const


def _relax_mono(m: Mono, low: bool) -> Linear | None:
    if all(type(f) is Var for f, _ in m.factors):
        return {m: Fraction(1)}, Fraction(0)
    f = m.factors[0][0]
    if len(m.factors) != 1 or m.factors[0][1] != 1 or type(f) is not Op:
        return None  # a product holding an operation: no cheap bound
    kind = f.kind
    if kind in ("floor", "mod"):
        k = f.args[1]
        if type(k) is Expr or k <= 0:
            return None
        if kind == "mod":
            return {}, Fraction(0 if low else k - 1)
        inner = _relax(f.args[0], low)
        if inner is None:
            return None
        terms, const = inner
        shift = Fraction(1 - k) if low else Fraction(0)
        return {v: x / k for v, x in terms.items()}, (const + shift) / k
    if kind in FLOAT_KINDS:
        # A non-negative x rounds to within x*2^-bits of itself: float32(h) <= h*(1 + 2^-24).
        x = f.args[0]
        if type(x) is not Expr or (lower(x) or -1) < 0:
            return None
        inner = _relax(x, low)
        if inner is None:
            return None
        terms, const = inner
        eps = Fraction(1, 1 << FLOAT_KINDS[kind])
        scale = 1 - eps if low else 1 + eps
        return {v: c * scale for v, c in terms.items()}, const * scale
    # max is at least its first argument, min at most its first
    if (kind == "max") == low:
        return _relax(f.args[0], low)
    return None


def _relaxed_bound(e: Expr, low: bool) -> Bound:
    relaxed = _relax(e, low)
    if relaxed is None:
        return None
    terms, total = relaxed
    for m, c in terms.items():
        if c == 0:
            continue
        if (c < 0) == low:
            return None  # a term unbounded on the side asked for
        least = 1
        for v, x in m.factors:
            if type(v) is not Var:
                return None  # (never: the relaxation keeps monomials of variables alone)
            least *= v.lo**x
        total += c * least
    return math.ceil(total) if low else math.floor(total)  # the expression is an integer


# -- magnitudes -----------------------------------------------------------------------------------


def magnitude(d: int | Expr, var_max: int) -> int:
    """An upper bound of ``|d|`` where every variable lies in ``[0, var_max]`` (every extent is
    below ``2^63``: how large a value computed from extents can grow, for a float type's range)."""
    if type(d) is not Expr:
        return -d if d < 0 else d
    total = abs(d.const)
    for m, c in d.terms:
        part = abs(c)
        for f, e in m.factors:
            part *= _factor_magnitude(f, var_max) ** e
        total += part
    return total


def _factor_magnitude(f: Var | Op, var_max: int) -> int:
    if type(f) is Var:
        return var_max
    args = [magnitude(a, var_max) for a in f.args]
    if f.kind == "mod":
        return args[1]  # below the modulus (with its sign)
    if f.kind in FLOAT_KINDS:
        return 2 * args[0]  # rounding moves a value by less than itself
    return max(args)  # floor by a divisor of at least 1 shrinks; max and min pick an argument


# -- monotonicity --------------------------------------------------------------------------------


def is_monotone(d: int | Expr | None) -> bool:
    """Is ``d`` non-decreasing in every variable (sums and products of non-negative parts with
    non-negative coefficients, floors by positive integers, maxima, minima and roundings of such)? Its least
    value is then its value with every variable at its least."""
    if d is None:
        return False
    if type(d) is not Expr or as_var(d) is not None:
        return True
    for m, c in d.terms:
        if c < 0:
            return False
        for f, _ in m.factors:
            if type(f) is Var:
                continue
            if f.kind == "floor":
                if not (type(f.args[1]) is int and f.args[1] > 0 and is_monotone(f.args[0])):
                    return False
            elif f.kind in ("max", "min") or f.kind in FLOAT_KINDS:
                if not all(is_monotone(a) for a in f.args):
                    return False
            else:
                return False
            if len(m.factors) > 1 or m.factors[0][1] > 1:
                lo = _factor_bounds(f)[0]
                if lo is None or lo < 0:
                    return False  # a product is monotone where its factors are non-negative
    return True
