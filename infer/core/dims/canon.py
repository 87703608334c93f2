"""Canonical forms of the operations the ring cannot expand: ``floor``, ``mod``, ``max``, ``min``,
the roundings ``float32`` and ``float64``, and of a sum that pads an extent up to a multiple
(``ceilings``).

Each constructor simplifies only what is cheap and exact for integer operands, and reads nothing
but the operands (their syntactic bounds included), so a result holds in every run: whatever a
run has learned is its scope's to apply. Operands are canonical, divisors positive; the public
functions of the package handle integers, signs, and the run's budget.
"""

from __future__ import annotations

from math import gcd

from infer.core.dims import poly
from infer.core.dims.bounds import bounds, lower
from infer.core.dims.budget import tick
from infer.core.dims.terms import (
    FLOAT_KINDS,
    Expr,
    Factor,
    Mono,
    Op,
    Var,
    as_factor,
    as_op,
    free_vars,
    make,
    mono,
    of_factor,
    op,
    round_to_bits,
    text,
)

Ext = int | Expr

# Arguments of one max or min compared pairwise at most (Clause 15.4): a broadcast over hundreds
# of distinct extents would otherwise cost a comparison per pair at every step. Past it the
# arguments are kept as given (sorted, duplicates and constants merged): still exact.
EXTREMUM_COMPARED = 16


# -- floor ---------------------------------------------------------------------------------------


def floordiv(a: Ext, b: Ext) -> Ext:
    """``floor(a / b)`` for a positive ``b``."""
    if type(a) is int and type(b) is int:
        return a // b
    a, b = ceilings(a), ceilings(b)  # arguments read the same however they were built
    if b == 1:
        return a
    if a is b:
        return 1
    if a == 0:
        return 0
    if type(b) is not Expr:
        return _floor_by_int(a, b) if type(a) is Expr else a // b
    return _floor_by_expr(a, b)


def _floor_by_int(a: Expr, k: int) -> Ext:
    inner = _floor_parts(as_op(a, "floor"))
    if inner is not None:  # floor(floor(x/m)/k) = floor(x/(m*k))
        return floordiv(inner[0], inner[1] * k)
    if len(a.terms) + (1 if a.const else 0) > 1:
        # floor((floor(x/m) + r)/k) = floor((x + r*m)/(m*k)) for integer r: a ceiling of a
        # ceiling (``ceil(ceil(W/2)/2)``) is one ceiling.
        floors = [parts for m, c in a.terms if c == 1 for parts in (_int_floor(m),) if parts is not None]
        if len(floors) == 1:
            f, x, w = floors[0]
            rest = poly.sub(a, of_factor(f))
            return floordiv(poly.add(x, poly.scale(rest, w)), w * k)
    # Pull out every term that is an exact multiple of k (exact for integer terms).
    pulled: list[tuple[Mono, int]] = []
    kept: list[tuple[Mono, int]] = []
    tick(len(a.terms))
    for m, c in a.terms:
        q, r = divmod(c, k)
        if q:
            pulled.append((m, q))
        if r:
            kept.append((m, r))
    qc, rc = divmod(a.const, k)
    if pulled or qc:
        return ceilings(poly.add(make(tuple(pulled), qc), floordiv(make(tuple(kept), rc), k)))
    g = gcd(poly.content(a), k)
    if g > 1:  # floor(g*x/(g*k)) = floor(x/k)
        return floordiv(poly.divide_exact(a, g), k // g)
    return of_factor(op("floor", (a, k)))


def _int_floor(m: Mono) -> tuple[Factor, Ext, int] | None:
    """``(f, x, k)`` where ``m`` is one ``f = floor(x/k)`` by an integer ``k``, else ``None``."""
    if len(m.factors) != 1 or m.factors[0][1] != 1:
        return None
    f = m.factors[0][0]
    parts = _floor_parts(f)
    return None if parts is None else (f, parts[0], parts[1])


def _floor_parts(f: Factor | None) -> tuple[Ext, int] | None:
    """``(x, k)`` where ``f`` is ``floor(x/k)`` by an integer ``k``, else ``None``."""
    if type(f) is not Op or f.kind != "floor":
        return None
    x, k = f.args
    return (x, k) if type(k) is int else None


def _floor_by_expr(a: Ext, b: Expr) -> Ext:
    q = poly.exact_quotient(a, b)
    if q is not None:
        return q
    k = _multiple_of(a, b)
    if k is not None:
        return k
    common = _common_factor(a, b)
    if common is not None:
        return floordiv(*common)
    return of_factor(op("floor", (a, b)))


def _multiple_of(a: Ext, b: Expr) -> int | None:
    """``floor(a/b)`` when ``a = k*b + r`` with an integer ``k`` and ``0 <= r < b`` provably
    (``floor((189*A*B + 9*C)/(21*A*B + C)) = 9``): ``k`` from b's leading term."""
    if type(a) is not Expr or (len(b.terms) == 1 and not b.const):
        return None
    mb, cb = b.terms[0]
    tick(len(a.terms))
    for m, c in a.terms:
        if m is mb:
            if c % cb:
                return None
            k = c // cb
            r = poly.sub(a, poly.scale(b, k))
            least = lower(b)
            if type(r) is int and r >= 0 and least is not None and least > r:
                return k
            return None
    return None


def _common_factor(a: Ext, b: Expr) -> tuple[Ext, Ext] | None:
    """``(a', b')`` with ``a = g*a'`` and ``b = g*b'`` for a positive integer or a product of
    variables ``g`` shared by every term of both, where there is one: the quotient is the same."""
    g = gcd(poly.content(a), poly.content(b))
    shared = _shared_variables(a, b)
    if g <= 1 and not shared:
        return None
    num, den = (poly.divide_exact(a, g), poly.divide_exact(b, g)) if g > 1 else (a, b)
    if shared:
        m = make(((shared, 1),), 0)
        qa, qb = poly.exact_quotient(num, m), poly.exact_quotient(den, m)
        if qa is None or qb is None:
            return None
        num, den = qa, qb
    return num, den


def _shared_variables(a: Ext, b: Expr) -> Mono | None:
    """The product of variable powers dividing every term of ``a`` and ``b`` (no constant), else
    ``None``."""
    if type(a) is not Expr or a.const or b.const:
        return None
    common: dict[Var, int] = {}
    first = True
    for e in (a, b):
        for m, _ in e.terms:
            here = {f: x for f, x in m.factors if type(f) is Var}
            if first:
                common, first = here, False
            else:
                common = {f: min(x, here[f]) for f, x in common.items() if f in here}
            if not common:
                return None
    return mono(tuple(sorted(common.items(), key=lambda fx: fx[0].key)))


# -- mod -----------------------------------------------------------------------------------------


def mod(a: Ext, b: Ext) -> Ext:
    """``a mod b`` with the sign of ``b`` (Python's ``%``), ``b`` non-zero."""
    if type(a) is int and type(b) is int:
        return a % b
    a, b = ceilings(a), ceilings(b)
    if a == 0 or a is b or b in (1, -1):
        return 0
    if type(b) is not Expr:
        if type(a) is not Expr:
            return a % b
        if b > 0:
            return _mod_by_int(a, b)
    elif poly.exact_quotient(a, b) is not None:
        return 0
    return of_factor(op("mod", (a, b)))


def _mod_by_int(a: Expr, k: int) -> Ext:
    # (c*x + r) mod k = ((c mod k)*x + r mod k) mod k for integer x
    reduced = tuple((m, c % k) for m, c in a.terms if c % k)
    if reduced != a.terms or a.const % k != a.const:
        return mod(make(reduced, a.const % k), k)
    read = _inner_mods_read_through(a, k)
    if read is not a:
        return mod(read, k)
    inner = _int_mod(as_op(a, "mod"))
    if inner is not None:
        x, m = inner
        if m % k == 0:  # mod(mod(x, m), k) = mod(x, k) when k divides m
            return mod(x, k)
        if m <= k:  # mod(x, m) already lies in [0, k - 1]
            return a
    lo, hi = bounds(a)
    if lo is not None and lo >= 0 and hi is not None and hi < k:  # 0 <= a < k
        return a
    return of_factor(op("mod", (a, k)))


def _inner_mods_read_through(a: Expr, k: int) -> Ext:
    """``a`` with each factor ``mod(y, m)`` of a term (to the first power) read as ``y`` where
    ``k`` divides ``m``: the same modulo ``k``, since ``mod(y, m) = y - m*floor(y/m)``
    (``mod(3*mod(x, 4), 4)``, a padding's ``(4 - x mod 4) mod 4``, is ``mod(3*x, 4)``)."""
    out: Ext = a.const
    changed = False
    for m, c in a.terms:
        found = _mod_of_multiple(m, k)
        if found is None:
            out = poly.add(out, make(((m, c),), 0))
            continue
        changed = True
        f, y = found
        others = tuple((g, e) for g, e in m.factors if g is not f)
        out = poly.add(out, poly.mul(make(((mono(others), c),), 0), y) if others else poly.scale(y, c))
    return out if changed else a


def _mod_of_multiple(m: Mono, k: int) -> tuple[Factor, Expr] | None:
    """``(f, y)`` for the first factor ``f = mod(y, w)`` of ``m`` (to the first power) with ``k``
    dividing ``w``, else ``None``."""
    for f, e in m.factors:
        parts = _int_mod(f) if e == 1 else None
        if parts is not None and parts[1] % k == 0:
            return f, parts[0]
    return None


def _int_mod(f: Factor | None) -> tuple[Expr, int] | None:
    """``(u, w)`` where ``f`` is a ``mod(u, w)`` of a symbolic ``u`` by a positive integer ``w``,
    else ``None``."""
    if type(f) is not Op or f.kind != "mod":
        return None
    u, w = f.args
    return (u, w) if type(w) is int and w > 0 and type(u) is Expr else None


# -- rounding to a float type -------------------------------------------------------------------


def round_float(kind: str, a: Ext) -> Ext | None:
    """``a`` rounded to the nearest value of float type ``kind`` ("float32" or "float64"), ties
    to even: an integer again. ``a`` itself where its bounds keep it within ``2^bits`` (every
    such integer is exact), ``None`` where an integer ``a`` rounds to infinity."""
    bits = FLOAT_KINDS[kind]
    if type(a) is int:
        return round_to_bits(a, bits)
    a = ceilings(a)
    lo, hi = bounds(a)
    if lo is not None and hi is not None and -(1 << bits) <= lo and hi <= 1 << bits:
        return a
    inner = as_factor(a)
    if type(inner) is Op and inner.kind in FLOAT_KINDS and FLOAT_KINDS[inner.kind] <= bits:
        return a  # a value of a narrower (or the same) type is exact in this one
    return of_factor(op(kind, (a,)))


# -- a sum that pads up to a multiple ------------------------------------------------------------

_CEILING_STEPS = 8  # rewrites one sum may take (each lightens it; a bound all the same)


def ceilings(e: Ext) -> Ext:
    """``e`` with an extent padded up to a multiple written as the one ceiling it is: for a
    positive integer ``w``, ``t + mod(-t, w)`` is ``w*ceil(t/w)`` for every integer ``t``
    (``floor(-t/w) = -ceil(t/w)``), so ``x + mod(3*x, 4)``, the padding of a window partition, is
    ``4*floor((x + 3)/4)``. Of the two forms of a term ``c*mod(-t, w)`` (or ``c*w*floor((t + w -
    1)/w)``), the one kept leaves the smaller coefficients on the monomials of ``t`` elsewhere
    in the sum, the mod on a tie (``4*floor((x + 3)/4) - x`` is ``mod(3*x, 4)``), so that a sum
    reads the same however it was built. (A ceiling merged into a floor it divides,
    ``4*floor((h + 12)/16)`` for ``floor(h/4)``, is not split again: there the form may depend
    on the order the sum was built in, never its value.) The sums the package's functions
    return pass through here."""
    for _ in range(_CEILING_STEPS):
        if type(e) is not Expr:
            return e
        out = _one_ceiling(e)
        if out is None:
            return e
        e = out
    return e


def _one_ceiling(e: Expr) -> Ext | None:
    """``e`` with one term rewritten as ``ceilings`` says, or ``None`` where none lightens it."""
    tick(len(e.terms))  # (a simplification's scan of a sum: the clock of whatever builds it)
    for m, c in e.terms:
        if len(m.factors) != 1 or m.factors[0][1] != 1:
            continue
        f = m.factors[0][0]
        mod_parts = _int_mod(f)
        if mod_parts is not None:  # c*mod(u, w) = c*w*ceil(t/w) - c*t, with t = -u reduced mod w
            u, w = mod_parts
            # (an Expr: u's coefficients are non-zero mod w, as mod's canonical form has them)
            t = make(tuple((mu, -a % w) for mu, a in u.terms), -u.const % w)
            if type(t) is Expr and _weight(e, t, -c) < _weight(e, t, 0):
                ceiling = poly.scale(floordiv(poly.add(t, w - 1), w), c * w)
                return poly.add(poly.sub(e, make(((m, c),), 0)), poly.sub(ceiling, poly.scale(t, c)))
            continue
        floor_parts = _floor_parts(f)
        if floor_parts is not None and c % floor_parts[1] == 0:
            n, w = floor_parts  # c*floor(n/w) = k*w*ceil(t/w) = k*t + k*mod(-t, w), with t = n - w + 1
            k, t = c // w, poly.sub(n, w - 1)
            if type(t) is Expr and _weight(e, t, k) <= _weight(e, t, 0):  # a tie: the mod
                rest = poly.add(poly.sub(e, make(((m, c),), 0)), poly.scale(t, k))
                return poly.add(rest, poly.scale(mod(poly.scale(t, -1), w), k))
    return None


def _weight(e: Expr, t: Expr, k: int) -> int:
    """The coefficients ``e + k*t`` leaves on the monomials of ``t``, summed by magnitude."""
    have = dict(e.terms)
    return sum(abs(have.get(m, 0) + k * a) for m, a in t.terms)


# -- max and min ---------------------------------------------------------------------------------


def _dominates(t: Expr, s: Expr, is_max: bool) -> bool:
    """``t >= s`` (``is_max``) or ``t <= s``, provably: then ``s`` adds nothing to the extremum.
    Only arguments that share a variable are compared (``M`` and ``M + N``, ``min(M, N)`` and
    ``M + u``) or whose ranges do not overlap: a difference over unrelated variables is
    rarely bounded otherwise."""
    if is_max:
        lo, hi = lower(t), bounds(s)[1]
    else:
        lo, hi = lower(s), bounds(t)[1]
    if lo is not None and hi is not None and lo >= hi:
        return True
    if not (free_vars(t) & free_vars(s)):
        return False
    d = poly.sub(t, s) if is_max else poly.sub(s, t)
    least = lower(d)
    return least is not None and least >= 0


def extremum(kind: str, args: list[Ext], compare: bool = True) -> Ext:
    """``max(*args)`` (``kind`` "max") or ``min(*args)``: nested ones flattened, integers merged,
    the others sorted by their text, and arguments that cannot be the extremum dropped (the
    symbolic ones compared pairwise only where ``compare``: a caller that compared them with a
    stronger prover already says not to)."""
    is_max = kind == "max"
    flat: list[Ext] = []
    for a in map(ceilings, args):
        nested = as_op(a, kind) if type(a) is Expr else None
        flat.extend(nested.args if nested is not None else (a,))
    ints = [a for a in flat if type(a) is int]
    syms: list[Expr] = sorted(dict.fromkeys(a for a in flat if type(a) is Expr), key=text)
    pick = max if is_max else min
    if not syms:
        return pick(ints)
    kept = syms
    if compare and len(syms) <= EXTREMUM_COMPARED:
        # The opposite extremum of another argument adds nothing: max(a, min(a, b)) = a.
        other = "min" if is_max else "max"
        syms = [s for s in syms if not ((o := as_op(s, other)) is not None and any(t in o.args for t in syms))]
        # Neither does an argument another one provably beats: min(M, M + N) = M. Of two
        # provably equal arguments the first stays.
        kept = [
            s
            for i, s in enumerate(syms)
            if not any(
                i != j and _dominates(t, s, is_max) and not (j > i and _dominates(s, t, is_max))
                for j, t in enumerate(syms)
            )
        ]
    consts: list[int] = []
    if ints:
        c = pick(ints)
        ranges = [bounds(s) for s in kept]
        if is_max:
            if all(hi is not None and hi <= c for _, hi in ranges):
                return c  # max(N, c) = c once every argument is known <= c
            # An argument known <= c adds nothing; c adds nothing once one is known >= c.
            kept = [s for s, (_, hi) in zip(kept, ranges) if hi is None or hi > c]
            if not any(lo is not None and lo >= c for lo, _ in ranges):
                consts = [c]
        else:
            if all(lo is not None and lo >= c for lo, _ in ranges):
                return c  # min(N, c) = c once every argument is known >= c
            kept = [s for s, (lo, _) in zip(kept, ranges) if lo is None or lo < c]
            if not any(hi is not None and hi <= c for _, hi in ranges):
                consts = [c]
    out: list[Ext] = [*kept, *consts]
    if len(out) == 1:
        return out[0]
    return of_factor(op(kind, tuple(out)))
