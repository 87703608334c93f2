"""Ring arithmetic on extents: sums, integer multiples, products, and exact quotients.

Every result is canonical (terms merged and sorted, zero coefficients dropped), so equal
polynomials are the same object. Products are expanded: ``(a + 1)*(b + 1)`` is
``a*b + a + b + 1``, which makes equality of polynomials syntactic; their work is bounded by the
caller from the operands' term counts before anything is multiplied (``work``).
"""

from __future__ import annotations

from math import gcd
from typing import Literal

from infer.core.dims.budget import tick
from infer.core.dims.terms import Expr, Mono, Terms, make, mono, mono_product

Ext = int | Expr


def _merge(ta: Terms, tb: Terms, sign: int = 1) -> Terms:
    """Two sorted term lists added (``sign`` -1: the second subtracted): like terms combined,
    zero coefficients dropped."""
    tick(len(ta) + len(tb))  # (a merge's steps are too cheap to tick one by one)
    if sign == -1:
        tb = tuple([(m, -c) for m, c in tb])
    out: list[tuple[Mono, int]] = []
    i = j = 0
    na, nb = len(ta), len(tb)
    while i < na and j < nb:
        ma, ca = ta[i]
        mb, cb = tb[j]
        if ma is mb:
            c = ca + cb
            if c:
                out.append((ma, c))
            i += 1
            j += 1
        elif ma.okey < mb.okey:
            out.append(ta[i])
            i += 1
        else:
            out.append(tb[j])
            j += 1
    if i < na:
        out.extend(ta[i:])
    elif j < nb:
        out.extend(tb[j:])
    return tuple(out)


def add(a: Ext, b: Ext) -> Ext:
    if type(a) is not Expr:
        if type(b) is not Expr:
            return a + b
        return make(b.terms, b.const + a) if a else b
    if type(b) is not Expr:
        return make(a.terms, a.const + b) if b else a
    return make(_merge(a.terms, b.terms), a.const + b.const)


def add_all(items: list[Ext], less: list[Ext] | tuple[()] = ()) -> Ext:
    """The sum of ``items`` less the sum of ``less``, every term merged at once: one canonical
    result, where folding ``add`` makes one per operand."""
    acc: dict[Mono, int] = {}
    const = 0
    for sign, group in ((1, items), (-1, less)):
        for a in group:
            if type(a) is not Expr:
                const += sign * a
                continue
            tick(len(a.terms))
            const += sign * a.const
            for m, c in a.terms:
                acc[m] = acc.get(m, 0) + sign * c
    terms = sorted(((m, c) for m, c in acc.items() if c), key=lambda t: t[0].okey)
    return make(tuple(terms), const)


def scale(a: Ext, k: int) -> Ext:
    """``k * a`` for an integer ``k``."""
    if type(a) is not Expr:
        return a * k
    if k == 1:
        return a
    if k == 0:
        return 0
    return make(tuple((m, c * k) for m, c in a.terms), a.const * k)


def sub(a: Ext, b: Ext) -> Ext:
    if type(b) is not Expr:
        return add(a, -b)
    if type(a) is not Expr:
        return make(tuple([(m, -c) for m, c in b.terms]), a - b.const)
    return make(_merge(a.terms, b.terms, -1), a.const - b.const)


def work(a: Ext, b: Ext) -> int:
    """The monomial products ``mul(a, b)`` computes."""
    na = len(a.terms) + (1 if a.const else 0) if type(a) is Expr else 1
    nb = len(b.terms) + (1 if b.const else 0) if type(b) is Expr else 1
    return na * nb


def mul(a: Ext, b: Ext) -> Ext:
    """``a * b`` expanded (the caller bounds ``work(a, b)``)."""
    if type(a) is not Expr:
        return scale(b, a)
    if type(b) is not Expr:
        return scale(a, b)
    if len(a.terms) == 1 and len(b.terms) == 1 and not a.const and not b.const:
        (ma, ca), (mb, cb) = a.terms[0], b.terms[0]
        return make(((mono_product(ma, mb), ca * cb),), 0)
    acc: dict[Mono, int] = {}
    for ma, ca in a.terms:
        tick(len(b.terms))  # a row of products (with the run's bound raised, a long one)
        for mb, cb in b.terms:
            m = mono_product(ma, mb)
            acc[m] = acc.get(m, 0) + ca * cb
        if b.const:
            acc[ma] = acc.get(ma, 0) + ca * b.const
    if a.const:
        for mb, cb in b.terms:
            acc[mb] = acc.get(mb, 0) + a.const * cb
    terms = sorted(((m, c) for m, c in acc.items() if c), key=lambda t: t[0].okey)
    return make(tuple(terms), a.const * b.const)


def content(a: Ext) -> int:
    """The largest integer dividing every coefficient and the constant (0 for 0)."""
    if type(a) is not Expr:
        return abs(a)
    g = abs(a.const)
    for _, c in a.terms:
        g = gcd(g, c)
        if g == 1:
            return 1
    return g


def divide_exact(a: Ext, k: int) -> Ext:
    """``a / k`` for a non-zero ``k`` dividing ``content(a)``."""
    if type(a) is not Expr:
        return a // k
    return make(tuple((m, c // k) for m, c in a.terms), a.const // k)


def _mono_quotient(m: Mono, d: Mono) -> Mono | Literal[True] | None:
    """``m / d`` when ``d`` divides ``m``: a monomial, ``True`` for 1; ``None`` when it does not."""
    exps = dict(m.factors)
    for f, e in d.factors:
        have = exps.get(f, 0)
        if have < e:
            return None
        exps[f] = have - e
    left = tuple((f, exps[f]) for f, _ in m.factors if exps[f])
    return mono(left) if left else True


def _times_term(m: Mono | Literal[True], c: int, b: Expr) -> Ext:
    """``c * m * b`` for a monomial ``m`` (``True``: 1)."""
    if m is True:
        return scale(b, c)
    return mul(make(((m, c),), 0), b)


_DIVISION_STEPS = 64  # quotient terms one exact division may produce before it gives up


def exact_quotient(a: Ext, b: Ext) -> Ext | None:
    """``a / b`` when ``b`` divides ``a`` as polynomials with an integer quotient, else ``None``
    (``None`` too when it would take more than ``_DIVISION_STEPS`` steps). Division by the
    leading term in the canonical (lexicographic) order, which is a monomial order."""
    if type(b) is not Expr:
        if b == 0:
            return None
        return divide_exact(a, b) if content(a) % b == 0 else None
    if type(a) is not Expr:
        return 0 if a == 0 else None
    lead, lc = b.terms[0]
    quotient: Ext = 0
    rest: Ext = a
    for _ in range(_DIVISION_STEPS):
        if type(rest) is not Expr:
            return quotient if rest == 0 else None
        m, c = rest.terms[0]
        q = _mono_quotient(m, lead)
        if q is None or c % lc:
            return None
        step = c // lc if q is True else make(((q, c // lc),), 0)
        quotient = add(quotient, step)
        rest = sub(rest, _times_term(q, c // lc, b))
    return None
