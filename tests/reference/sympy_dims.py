"""Dimensions: integers, symbolic expressions over dimension variables, or unknown.

A dim is an ``int`` (fixed extent), a ``sympy.Expr`` over dimension variables (Clause 6.5.2), or
``None`` (unknown). Everything outside this module treats expressions as opaque values and goes
through the functions here, so the expression engine could be swapped later.

Why our own ``FloorDiv``/``Mod``/``Max``/``Min``: sympy's ``floor`` rewrites ``floor((h-3)/2)``
into ``floor(h/2 - 1/2) - 1``, its ``Max`` runs an assumption search costing milliseconds per call,
and its ``Mod`` rewrites some products that hold a ``Mod`` wrongly (sympy 1.14:
``Mod(7*Mod(c, a), 3)`` becomes ``Mod(Mod(c, a)**2, 3)``). Ours canonicalize only what is cheap and
exact for integer-valued operands.

Declared variables (a ``dim_param``) are integer and positive: an extent of 0 on an axis the model
declares symbolic is treated as out of model (docs/architecture.md). Fresh variables (extents
inference could not compute: a data-dependent count, a Slice with computed bounds) are integer and
non-negative, since such an extent can be 0 at run time. Two distinct variables are never assumed
equal (Clause 9.3): comparisons return ``None`` when the answer depends on their values.
"""

from __future__ import annotations

import math
import re
import threading
import time
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from functools import cache, cmp_to_key, lru_cache

import sympy
from sympy.printing.str import StrPrinter

from infer.core.dims.budget import MAX_EXPRESSION_SIZE, MAX_INT_MAGNITUDE, NodeTimeout

Expr = sympy.Expr
Dim = int | Expr | None

__all__ = [
    "Dim",
    "Expr",
    "FloorDiv",
    "DimMod",
    "DimMax",
    "DimMin",
    "symbol",
    "fresh_symbol",
    "is_int",
    "is_symbolic",
    "add",
    "sub",
    "mul",
    "neg",
    "floordiv",
    "ceildiv",
    "mod",
    "dmax",
    "dmax_of",
    "dmin",
    "equal",
    "less",
    "bounds",
    "lower_bound",
    "is_monotone",
    "product",
    "content",
    "divide_exact",
    "exact_quotients",
    "total",
    "free_names",
    "to_str",
    "quote_name",
    "evaluate",
    "normalize",
    "expression_size",
    "expression_limit",
    "overflow_count",
    "time_limit",
]


@cache
def symbol(name: str) -> sympy.Symbol:
    """The interned symbol of a declared dimension variable (integer, positive)."""
    return sympy.Symbol(name, integer=True, positive=True)


@cache
def fresh_symbol(name: str) -> sympy.Symbol:
    """The interned symbol of a fresh variable (integer, non-negative: it may be 0 at run time)."""
    return sympy.Symbol(name, integer=True, nonnegative=True)


def _symbol_lower_bound(s: sympy.Symbol) -> int:
    return 1 if s.is_positive else 0


def _is_integer_valued(e: Expr) -> bool:
    # Every leaf we build is an integer symbol, an integer, or one of our integer functions, so
    # a term is integer-valued exactly when its numeric coefficient is an integer.
    coeff, _ = e.as_coeff_Mul()
    return coeff.is_Integer


def _is_integer_valued_sum(e: Expr) -> bool:
    return all(_is_integer_valued(t) for t in sympy.Add.make_args(e))


def _monomial(e: Expr) -> tuple[int, dict[Expr, int]] | None:
    """``(coefficient, {factor: power})`` of a product of an integer and positive factors."""
    coeff, rest = e.as_coeff_Mul()
    if not coeff.is_Integer:
        return None
    factors: dict[Expr, int] = {}
    for f in sympy.Mul.make_args(rest):
        if f == 1:
            continue
        base, exp = f.as_base_exp()
        if not (base.is_Symbol and exp.is_Integer and exp > 0):
            return None  # only variables (positive by construction) may be cancelled
        factors[base] = factors.get(base, 0) + int(exp)
    return int(coeff), factors


def _multiple_of(a: Expr, b: Expr) -> int | None:
    """``floor(a/b)`` when ``a = k*b + r`` with an integer ``k`` and ``0 <= r < b`` provably
    (``floor((189*A*B + 9*C)/(21*A*B + C)) = 9``): ``k`` from one pair of like terms."""
    if not isinstance(b, sympy.Add):
        return None
    cb, mb = sympy.Add.make_args(b)[-1].as_coeff_Mul()
    for term in sympy.Add.make_args(a):
        ca, ma = term.as_coeff_Mul()
        if ma == mb and ca.is_Integer and cb.is_Integer and cb != 0 and int(ca) % int(cb) == 0:
            k = int(ca) // int(cb)
            r = sympy.expand(a - k * b)
            if r.is_Integer and r >= 0:
                least = lower_bound(b)
                if least is not None and least > int(r):
                    return k
            return None
    return None


def _cancel_common(a: Expr, b: Expr) -> Expr | None:
    """``floor((g*a')/(g*b')) = floor(a'/b')`` for a positive common factor ``g``."""
    ma, mb = _monomial(a), _monomial(b)
    if ma is None or mb is None or mb[0] <= 0:
        return None
    g = math.gcd(ma[0], mb[0])
    common = {s: min(p, mb[1][s]) for s, p in ma[1].items() if s in mb[1]}
    if g == 1 and not common:
        return None
    divisor = sympy.Integer(g) * sympy.Mul(*(s**p for s, p in common.items()))
    return FloorDiv(sympy.expand(a / divisor), sympy.expand(b / divisor))


class FloorDiv(sympy.Function):
    """``floor(a / b)`` for integer ``a`` and positive integer ``b``."""

    is_integer = True

    @classmethod
    def eval(cls, a: Expr, b: Expr):
        if a.is_Integer and b.is_Integer:
            return sympy.Integer(int(a) // int(b))
        if b == 1:
            return a
        if a == b:
            return sympy.Integer(1)
        if a == 0:
            return sympy.Integer(0)
        if b.is_Integer and b > 0:
            k = int(b)
            if isinstance(a, FloorDiv) and a.args[1].is_Integer:
                return FloorDiv(a.args[0], a.args[1] * k)
            if isinstance(a, sympy.Add):
                # floor((floor(x/m) + r)/k) = floor((x + r*m)/(m*k)) for integer r: a ceiling of
                # a ceiling (``ceil(ceil(W/2)/2)``) is one ceiling.
                inner = [t for t in a.args if isinstance(t, FloorDiv) and t.args[1].is_Integer]
                if len(inner) == 1:
                    rest = a - inner[0]
                    if _is_integer_valued_sum(rest):
                        m = inner[0].args[1]
                        return FloorDiv(sympy.expand(inner[0].args[0] + rest * m), m * k)
            # Pull out every term that is an exact multiple of b (exact for integer terms).
            kept, pulled = [], []
            for term in sympy.Add.make_args(a):
                coeff, rest = term.as_coeff_Mul()
                if not coeff.is_Integer or not _is_integer_valued(term):
                    return None
                q, r = divmod(int(coeff), k)
                if q:
                    pulled.append(sympy.Integer(q) * rest)
                if r:
                    kept.append(sympy.Integer(r) * rest)
            if pulled:
                return sympy.Add(*pulled) + FloorDiv(sympy.Add(*kept), b)
            return None
        # Symbolic divisor: exact when b is a factor of a.
        q = a / b
        if q.is_integer is True and not q.has(sympy.Pow):
            return q
        k = _multiple_of(a, b)
        if k is not None:
            return sympy.Integer(k)
        return _cancel_common(a, b)

    def _sympystr(self, printer: StrPrinter) -> str:
        a, b = self.args
        num, den = printer._print(a), printer._print(b)
        return f"floor({num if a.is_Atom else f'({num})'}/{den if b.is_Atom else f'({den})'})"


class DimMod(sympy.Function):
    """``a mod b`` with the sign of ``b`` (Python's ``%``) for integer ``a`` and ``b``."""

    is_integer = True

    @classmethod
    def eval(cls, a: Expr, b: Expr):
        if a.is_Integer and b.is_Integer:
            return sympy.Integer(int(a) % int(b)) if b != 0 else None
        if a == 0 or a == b or b in (1, -1):
            return sympy.Integer(0)
        if b.is_Integer and b > 0:
            k = int(b)
            # (c*x + r) mod k = ((c mod k)*x + r) mod k for integer-valued x.
            kept, reduced = [], False
            for term in sympy.Add.make_args(a):
                coeff, rest = term.as_coeff_Mul()
                if not coeff.is_Integer or not _is_integer_valued(term):
                    return None
                c = int(coeff) % k
                reduced = reduced or c != int(coeff)
                if c:
                    kept.append(sympy.Integer(c) * rest)
            if reduced:
                return cls(sympy.Add(*kept), b)
            if isinstance(a, DimMod) and a.args[1].is_Integer and a.args[1] > 0:
                m = int(a.args[1])
                if m % k == 0:  # mod(mod(x, m), k) = mod(x, k) when k divides m
                    return cls(a.args[0], b)
                if m <= k:  # mod(x, m) already lies in [0, k - 1]
                    return a
            lo = lower_bound(a)
            if lo is not None and lo >= 0:
                hi = lower_bound(-a)
                if hi is not None and -hi < k:  # 0 <= a < k
                    return a
            return None
        # A symbolic modulus: exact when b is a factor of a.
        q = a / b
        if q.is_integer is True and not q.has(sympy.Pow):
            return sympy.Integer(0)
        return None

    def _sympystr(self, printer: StrPrinter) -> str:
        return "mod(" + ", ".join(printer._print(x) for x in self.args) + ")"


def lower_bound(e: Expr) -> int | None:
    """A cheap lower bound of an integer expression (declared variables are >= 1, fresh ones
    >= 0), or ``None``."""
    _tick()
    return _lower_bound(e)


@lru_cache(maxsize=65536)
def _lower_bound(e: Expr) -> int | None:
    # Cached: a sum grown one term at a time (a Concat chain) asks again for every older term.
    if e.is_Integer:
        return int(e)
    if e.is_Symbol:
        return _symbol_lower_bound(e)
    if isinstance(e, sympy.Add):
        lbs = [_lower_bound(t) for t in e.args]
        return _linear_lower_bound(e) if None in lbs else sum(lbs)  # type: ignore[arg-type]
    if isinstance(e, sympy.Mul):
        coeff, rest = e.as_coeff_Mul()
        if coeff.is_Integer and coeff > 0:
            lb = 1
            for f in sympy.Mul.make_args(rest):
                flb = _lower_bound(f)
                if flb is None or flb < 0:
                    return None
                lb *= flb
            return int(coeff) * lb
        return None
    if isinstance(e, FloorDiv) and e.args[1].is_Integer:
        lb = _lower_bound(e.args[0])
        return None if lb is None else lb // int(e.args[1])
    if isinstance(e, FloorDiv):
        # A symbolic divisor is positive; a non-negative dividend gives a non-negative quotient.
        lb = _lower_bound(e.args[0])
        return 0 if lb is not None and lb >= 0 and (_lower_bound(e.args[1]) or 0) >= 1 else None
    if isinstance(e, DimMod) and e.args[1].is_Integer and e.args[1] > 0:
        return 0
    if isinstance(e, DimMax):
        lbs = [_lower_bound(a) for a in e.args]
        known = [lb for lb in lbs if lb is not None]
        return max(known) if known else None
    if isinstance(e, DimMin):
        lbs = [_lower_bound(a) for a in e.args]
        return None if None in lbs else min(lbs)  # type: ignore[type-var]
    return None


def is_monotone(e: Dim) -> bool:
    """Is ``e`` non-decreasing in every variable (sums, products of non-negative parts, floors
    by positive integers, maxima and minima of such)? Its least value is then its value with
    every variable at its least."""
    if e is None or isinstance(e, int) or e.is_Integer or e.is_Symbol:
        return e is not None
    if isinstance(e, sympy.Add):
        return all(is_monotone(t) for t in e.args)
    if isinstance(e, sympy.Mul):
        coeff, rest = e.as_coeff_Mul()
        if not coeff.is_Integer or coeff < 0:
            return False
        return all(is_monotone(f) and (lower_bound(f) or 0) >= 0 for f in sympy.Mul.make_args(rest) if f != 1)
    if e.is_Pow:
        base, exp = e.args
        return exp.is_Integer and exp > 0 and is_monotone(base) and (lower_bound(base) or -1) >= 0
    if isinstance(e, FloorDiv):
        return e.args[1].is_Integer and e.args[1] > 0 and is_monotone(e.args[0])
    if isinstance(e, (DimMax, DimMin)):
        return all(is_monotone(a) for a in e.args)
    return False


def _relax(e: Expr, lower: bool) -> Expr | None:
    """A bound of ``e`` (lower or upper) without floors: ``floor(x/k)`` lies in ``[(x-k+1)/k, x/k]``.

    Products of variables stay as they are (each is >= 0); ``None`` where no bound is known.
    """
    if e.is_Integer or e.is_Symbol:
        return e
    if isinstance(e, sympy.Add):
        parts = [_relax(t, lower) for t in e.args]
        return None if any(p is None for p in parts) else sympy.Add(*parts)
    if isinstance(e, sympy.Mul):
        coeff, rest = e.as_coeff_Mul()
        if not coeff.is_Rational:
            return None
        if all(
            f.is_Symbol or (f.is_Pow and f.args[0].is_Symbol and f.args[1].is_Integer and f.args[1] > 0)
            for f in sympy.Mul.make_args(rest)
        ):
            return e
        if len(sympy.Mul.make_args(rest)) != 1:
            return None
        inner = _relax(rest, lower if coeff > 0 else not lower)
        return None if inner is None else coeff * inner
    if isinstance(e, FloorDiv) and e.args[1].is_Integer and e.args[1] > 0:
        k = e.args[1]
        inner = _relax(e.args[0], lower)
        if inner is None:
            return None
        return (inner - k + 1) / k if lower else inner / k
    if isinstance(e, DimMod) and e.args[1].is_Integer and e.args[1] > 0:
        return sympy.Integer(0) if lower else e.args[1] - 1
    if isinstance(e, (DimMax, DimMin)):
        # max is >= each argument, min <= each: the first argument bounds the right side.
        if isinstance(e, DimMax) == lower:
            return _relax(e.args[0], lower)
    return None


@lru_cache(maxsize=16384)
def _linear_lower_bound(e: Expr) -> int | None:
    """A lower bound from the floor-free relaxation: a polynomial with non-negative coefficients
    is at least its value with every variable at its own lower bound (1 declared, 0 fresh)."""
    relaxed = _relax(e, lower=True)
    if relaxed is None:
        return None
    relaxed = sympy.expand(relaxed)
    const, terms = relaxed.as_coeff_Add()
    total = const
    for t in sympy.Add.make_args(terms):
        if t == 0:
            continue
        coeff, rest = t.as_coeff_Mul()
        if not coeff.is_Rational or coeff < 0:
            return None
        least = 1
        for f in sympy.Mul.make_args(rest):
            base, _ = f.as_base_exp()
            if not base.is_Symbol:
                return None
            least *= _symbol_lower_bound(base)
        total += coeff * least
    return math.ceil(total)  # the expression is an integer


# Arguments of one max or min compared pairwise at most (Clause 15.4): a broadcast over hundreds
# of distinct extents would otherwise cost a comparison per pair at every step. Past it the
# arguments are kept as given (sorted, duplicates and constants merged): still exact.
EXTREMUM_COMPARED = 16


def _dominates(t: Expr, s: Expr, is_max: bool) -> bool:
    """``t >= s`` (``is_max``) or ``t <= s``, provably: then ``s`` adds nothing to the extremum.
    Only arguments that share a variable are compared (``M`` and ``M + N``, ``min(M, N)`` and
    ``M + u``): a cheap filter, since a difference over unrelated variables is rarely bounded."""
    _tick()
    if not (_free(t) & _free(s)):
        return False
    quick = _quick_difference(t, s) if is_max else _quick_difference(s, t)
    if quick is not None and quick[1]:
        return False  # the difference has no lower bound
    d = _difference(t, s) if is_max else _difference(s, t)
    if isinstance(d, int):
        return d >= 0
    lb = lower_bound(d)
    return lb is not None and lb >= 0


class _Extremum(sympy.Function):
    is_integer = True
    _is_max: bool

    @classmethod
    def eval(cls, *args: Expr):
        flat: list[Expr] = []
        for a in args:
            flat.extend(a.args if isinstance(a, cls) else (a,))
        pick = max if cls._is_max else min
        ints = [int(a) for a in flat if a.is_Integer]
        syms = sorted({a for a in flat if not a.is_Integer}, key=_expr_str)
        if not syms:
            return sympy.Integer(pick(ints))
        kept = syms
        if len(syms) <= EXTREMUM_COMPARED:
            # The opposite extremum of another argument adds nothing: max(a, min(a, b)) = a.
            other = DimMin if cls._is_max else DimMax
            syms = [s for s in syms if not (isinstance(s, other) and any(t in s.args for t in syms))]
            # Neither does an argument another one provably beats: min(M, M + N) = M. Of two
            # provably equal arguments the first stays.
            kept = []
            for i, s in enumerate(syms):
                beaten = False
                for j, t in enumerate(syms):
                    if i != j and _dominates(t, s, cls._is_max) and not (j > i and _dominates(s, t, cls._is_max)):
                        beaten = True
                        break
                if not beaten:
                    kept.append(s)
        consts: list[int] = []
        if ints:
            c = pick(ints)
            lbs = [lower_bound(s) for s in kept]
            if cls._is_max:
                # max(N, c) = N once N >= c is known.
                if not any(lb is not None and lb >= c for lb in lbs):
                    consts = [c]
            else:
                # min(N, c) = c once every argument is known >= c.
                if all(lb is not None and lb >= c for lb in lbs):
                    return sympy.Integer(c)
                consts = [c]
        out = kept + [sympy.Integer(c) for c in consts]
        if len(out) == 1:
            return out[0]
        if list(out) == list(args):
            return None  # already canonical: sorted, nothing to drop
        return cls(*out, evaluate=False)


class DimMax(_Extremum):
    """``max`` of integer extents."""

    _is_max = True

    def _sympystr(self, printer: StrPrinter) -> str:
        return "max(" + ", ".join(printer._print(a) for a in self.args) + ")"


class DimMin(_Extremum):
    """``min`` of integer extents."""

    _is_max = False

    def _sympystr(self, printer: StrPrinter) -> str:
        return "min(" + ", ".join(printer._print(a) for a in self.args) + ")"


def normalize(d: Dim) -> Dim:
    """Integers as ``int``, everything else unchanged."""
    if d is None or isinstance(d, int):
        return d
    if d.is_Integer:
        return int(d)
    return d


def is_int(d: Dim) -> bool:
    return isinstance(d, int)


def is_symbolic(d: Dim) -> bool:
    return d is not None and not isinstance(d, int)


def _wrap(d: int | Expr) -> Expr:
    return sympy.Integer(d) if isinstance(d, int) else d


# -- bounds on expressions (Clause 15.4) ---------------------------------------------------------
#
# A model can make extents grow at every node (``x = concat(x, x)`` doubles a symbolic sum, a
# chain of ``Mul`` squares an integer). Past these bounds a result is ``None``: unknown, which
# the engine turns into a fresh variable. Unknown is always sound; the operands of every
# operation stay small, so no single operation can take long.

_INT_BOUND = MAX_INT_MAGNITUDE  # no extent and no int64 element comes near it
_TOO_BIG = 1 << 62


class _Budget:
    """The expression bound of one run, and how many results it refused."""

    __slots__ = ("max_size", "refused")

    def __init__(self, max_size: int):
        self.max_size = max_size
        self.refused = 0


# The budgets of the runs in progress in each thread, innermost last (a thread-local stack, not a
# context variable: setting one replaces the context's mapping, which frees objects a program may
# have frozen with ``gc.freeze``), and the budget of calls made outside any run.
_runs = threading.local()
_OUTSIDE_RUNS = _Budget(MAX_EXPRESSION_SIZE)


def _current() -> _Budget:
    stack = getattr(_runs, "stack", None)
    return stack[-1] if stack else _OUTSIDE_RUNS


@contextmanager
def expression_limit(max_size: int) -> Iterator[None]:
    """Refuse expressions of more than ``max_size`` terms while the block runs (one run's
    budget: ``overflow_count`` counts its refusals)."""
    stack = getattr(_runs, "stack", None)
    if stack is None:
        stack = _runs.stack = []
    stack.append(_Budget(max_size))
    try:
        yield
    finally:
        stack.pop()


def overflow_count() -> int:
    """How many results the run in progress refused for their size."""
    return _current().refused


# -- the time of one node (Clause 15.4) ----------------------------------------------------------
#
# A rule's time goes into operations on extents, so the clock is read here, once every
# ``_TICKS`` operations: past the deadline of the node whose rule is running, the operation
# raises ``NodeTimeout`` and the rule runner turns it into a diagnosis of that node. A node's
# time is its own work: while a rule it runs (a Loop's body's) works, its clock is paused.

_clock = threading.local()
_TICKS = 32


@contextmanager
def time_limit(seconds: float | None) -> Iterator[int]:
    """Bound the wall-clock time of the block (one node's rule) to ``seconds`` (``None`` or 0:
    unbounded), the enclosing block's clock paused meanwhile. Yields the block's level, which
    ``NodeTimeout.level`` names when its time is up."""
    deadlines = getattr(_clock, "deadlines", None)
    if deadlines is None:
        deadlines = _clock.deadlines = []
        _clock.ops = 0
    level = len(deadlines)
    now = time.monotonic()
    paused = deadlines[-1] - now if deadlines else math.inf  # what the enclosing block has left
    deadlines.append(now + seconds if seconds else math.inf)
    _clock.earliest = deadlines[-1]
    try:
        yield level
    finally:
        deadlines.pop()
        if deadlines:
            deadlines[-1] = time.monotonic() + paused
        _clock.earliest = deadlines[-1] if deadlines else math.inf


def _tick() -> None:
    """Count one operation; past the deadline of the rule running, raise."""
    earliest = getattr(_clock, "earliest", math.inf)
    if earliest == math.inf:
        return
    _clock.ops += 1
    if _clock.ops % _TICKS == 0 and time.monotonic() > earliest:
        raise NodeTimeout(len(_clock.deadlines) - 1)


@lru_cache(maxsize=65536)
def expression_size(e: Expr) -> int:
    """Terms of an expression tree: a power counts its base once per factor, a huge integer
    counts as too big."""
    if e.is_Integer:
        return 1 if -_INT_BOUND <= int(e) <= _INT_BOUND else _TOO_BIG
    if e.is_Atom:
        return 1
    if e.is_Pow and e.args[1].is_Integer:
        k = abs(int(e.args[1]))
        return min(_TOO_BIG, 1 + expression_size(e.args[0]) * k) if k < _TOO_BIG else _TOO_BIG
    return min(_TOO_BIG, 1 + sum(expression_size(a) for a in e.args))


def _refused() -> None:
    _current().refused += 1
    return None


def _bounded(r: Dim) -> Dim:
    """``r``, or ``None`` when it is past the bounds."""
    _tick()
    if r is None:
        return None
    if isinstance(r, int):
        return r if -_INT_BOUND <= r <= _INT_BOUND else _refused()
    try:
        size = expression_size(r)
    except RecursionError:  # only with a limit raised far past the default
        size = _TOO_BIG
    return r if size <= _current().max_size else _refused()


_SORT_KEY = cmp_to_key(sympy.Basic.compare)  # the order sympy keeps a sum's terms in


def _plain_term(e: Expr) -> sympy.Symbol | None:
    """The variable of ``e`` when ``e`` is one, or an integer times one; else ``None``."""
    if e.is_Symbol:
        return e
    if e.is_Mul and len(e.args) == 2 and e.args[0].is_Integer and e.args[1].is_Symbol:
        return e.args[1]
    return None


def _insert_term(a: Expr, b: Expr) -> Expr | None:
    """``a + b`` for a sum ``a`` and a variable term ``b`` (``N``, ``3*N``) whose variable no term
    of ``a`` holds alone: ``b`` inserted where sympy's own sort puts it, so the result is the
    expression ``a + b`` builds, without sorting all of ``a``'s terms again (a sum of hundreds of
    extents grown one at a time, Concat after Concat). ``None`` where this does not apply."""
    var = _plain_term(b)
    if var is None or not isinstance(a, sympy.Add):
        return None
    args = a.args
    start = 1 if args[0].is_Number else 0
    if var in {_plain_term(t) for t in args[start:]}:
        return None  # like terms: sympy combines them
    key = _SORT_KEY(b)
    i = bisect_left(args, key, lo=start, key=_SORT_KEY)
    if any(sympy.Basic.compare(args[j], b) == 0 for j in (i - 1, i) if start <= j < len(args)):
        return None  # a tie sympy's sort would break by position
    return sympy.Add._from_args(args[:i] + (b,) + args[i:])


@lru_cache(maxsize=65536)
def _add(a: Expr, b: Expr) -> Dim:
    quick = _insert_term(a, b)
    if quick is None:
        quick = _insert_term(b, a)
    return normalize(a + b if quick is None else quick)


@lru_cache(maxsize=65536)
def _mul(a: Expr, b: Expr) -> Dim:
    return normalize(a * b)


@lru_cache(maxsize=65536)
def _floordiv(a: Expr, b: Expr) -> Dim:
    return normalize(FloorDiv(a, b))


@lru_cache(maxsize=65536)
def _mod(a: Expr, b: Expr) -> Dim:
    return normalize(DimMod(a, b))


@lru_cache(maxsize=65536)
def _max(a: Expr, b: Expr) -> Dim:
    return normalize(DimMax(a, b))


@lru_cache(maxsize=65536)
def _min(a: Expr, b: Expr) -> Dim:
    return normalize(DimMin(a, b))


def add(a: Dim, b: Dim) -> Dim:
    if a is None or b is None:
        return None
    if isinstance(a, int) and isinstance(b, int):
        r = a + b
        return r if -_INT_BOUND <= r <= _INT_BOUND else _refused()
    return _bounded(_add(_wrap(a), _wrap(b)))


def neg(a: Dim) -> Dim:
    return mul(a, -1)


def sub(a: Dim, b: Dim) -> Dim:
    return add(a, neg(b))


def mul(a: Dim, b: Dim) -> Dim:
    if a is None or b is None:
        if a == 0 or b == 0:
            return 0
        return None
    if isinstance(a, int) and isinstance(b, int):
        r = a * b
        return r if -_INT_BOUND <= r <= _INT_BOUND else _refused()
    return _bounded(_mul(_wrap(a), _wrap(b)))


def floordiv(a: Dim, b: Dim) -> Dim:
    """``floor(a / b)``; ``None`` when ``b`` is 0 or unknown."""
    if a is None or b is None or b == 0:
        return None
    if isinstance(a, int) and isinstance(b, int):
        return a // b
    if isinstance(b, int) and b < 0:
        return floordiv(neg(a), -b)
    return _bounded(_floordiv(_wrap(a), _wrap(b)))


def ceildiv(a: Dim, b: Dim) -> Dim:
    """``ceil(a / b)`` for positive ``b``, kept as ``floor((a + b - 1) / b)``."""
    if isinstance(b, int) and b < 0:
        return ceildiv(neg(a), -b)
    return floordiv(sub(add(a, b), 1), b)


def mod(a: Dim, b: Dim) -> Dim:
    """``a mod b`` with the sign of ``b`` (Python semantics)."""
    if a is None or b is None or b == 0:
        return None
    if isinstance(a, int) and isinstance(b, int):
        return a % b
    return _bounded(_mod(_wrap(a), _wrap(b)))


def dmax(a: Dim, b: Dim) -> Dim:
    if a is None or b is None:
        return None
    if isinstance(a, int) and isinstance(b, int):
        return max(a, b)
    return _bounded(_max(_wrap(a), _wrap(b)))


def dmax_of(ds: Iterable[Dim]) -> Dim:
    """The maximum of ``ds`` (at least one) built at once: one canonical form for all of them,
    where folding ``dmax`` would build one per argument; ``None`` if any is unknown."""
    ds = list(ds)
    if not ds or any(d is None for d in ds):
        return None
    if all(isinstance(d, int) for d in ds):
        return max(ds)  # type: ignore[type-var]
    return _bounded(normalize(DimMax(*(_wrap(d) for d in ds))))  # type: ignore[arg-type]


def dmin(a: Dim, b: Dim) -> Dim:
    if a is None or b is None:
        return None
    if isinstance(a, int) and isinstance(b, int):
        return min(a, b)
    return _bounded(_min(_wrap(a), _wrap(b)))


def bounds(d: Dim) -> tuple[int | None, int | None]:
    """Cheap (lower, upper) bounds of a dim; ``None`` where unbounded or unknown."""
    if d is None:
        return None, None
    if isinstance(d, int):
        return d, d
    lo = lower_bound(d)
    nlo = lower_bound(-d)
    return lo, None if nlo is None else -nlo


def _difference(a: int | Expr, b: int | Expr) -> Dim:
    """``a - b`` for a comparison: exact, never refused (both operands are within the bounds)."""
    return _add(_wrap(a), _wrap(_mul(_wrap(b), sympy.Integer(-1))))  # type: ignore[arg-type]


# -- comparisons without sympy's arithmetic ------------------------------------------------------
#
# Comparing two extents builds their difference with sympy and bounds it, a millisecond or more
# for a large maximum, and most comparisons a hostile model asks for (a new extent against the
# running broadcast result) have no answer. Read as terms with rational coefficients, a
# difference often settles the question first: every term cancelled leaves a constant, and a
# variable that occurs in one term only, alone or as an argument of a maximum, makes the
# difference unbounded on that term's side (variables are independent and unbounded above), so
# no bound on that side exists for the slow path to find.


@lru_cache(maxsize=65536)
def _terms(e: Expr) -> tuple[tuple[Expr, sympy.Rational], ...] | None:
    """``e`` as ``((term, coefficient), ...)``, the constant under the term ``1``; ``None`` if a
    coefficient is not rational."""
    out: list[tuple[Expr, sympy.Rational]] = []
    for t in sympy.Add.make_args(e):
        coeff, rest = t.as_coeff_Mul()
        if not coeff.is_Rational:
            return None
        out.append((rest, coeff))
    return tuple(out)


@lru_cache(maxsize=65536)
def _free(e: Expr) -> frozenset[sympy.Symbol]:
    return frozenset(e.free_symbols)


def _grows_with(t: Expr, lonely: set[sympy.Symbol]) -> bool:
    """``t`` grows without bound with one of ``lonely`` (each a non-negative variable, free to
    grow): it is one, or a maximum with one as an argument (a maximum is at least each)."""
    if t.is_Symbol:
        return t in lonely
    return isinstance(t, DimMax) and any(a.is_Symbol and a in lonely for a in t.args)


def _quick_difference(a: Expr, b: Expr) -> tuple[sympy.Rational | None, bool, bool] | None:
    """``(constant, unbounded below, unbounded above)`` of ``a - b`` read from the terms: the
    constant is the difference when every term cancels (else ``None``); ``None`` when a
    coefficient is not rational."""
    ta, tb = _terms(a), _terms(b)
    if ta is None or tb is None:
        return None
    terms: dict[Expr, sympy.Rational] = dict(ta)
    for t, c in tb:
        terms[t] = terms.get(t, 0) - c
    const = terms.pop(sympy.S.One, 0)
    terms = {t: c for t, c in terms.items() if c != 0}
    if not terms:
        return sympy.Rational(const), False, False
    seen: dict[sympy.Symbol, int] = {}
    for t in terms:
        for s in _free(t):
            seen[s] = seen.get(s, 0) + 1
    lonely = {s for s, k in seen.items() if k == 1 and s.is_nonnegative}
    below = above = False
    for t, c in terms.items():
        if lonely and _grows_with(t, lonely):
            if c > 0:
                above = True
            else:
                below = True
    return None, below, above


def equal(a: Dim, b: Dim) -> bool | None:
    """``True`` when provably equal, ``False`` when provably different, else ``None``."""
    if a is None or b is None:
        return None
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    if a == b:
        return True
    _tick()
    quick = _quick_difference(_wrap(a), _wrap(b))
    if quick is not None:
        const, below, above = quick
        if const is not None and const.is_Integer:
            return int(const) == 0
        if below and above:
            return None  # no bound on either side: the difference can be 0 and can be not
    d = _difference(a, b)
    if isinstance(d, int):
        return d == 0
    lo, hi = bounds(d)
    if (lo is not None and lo > 0) or (hi is not None and hi < 0):
        return False
    return None


def less(a: Dim, b: Dim) -> bool | None:
    """``a < b`` when provable either way, else ``None``."""
    if a is None or b is None:
        return None
    if isinstance(a, int) and isinstance(b, int):
        return a < b
    _tick()
    quick = _quick_difference(_wrap(a), _wrap(b))
    if quick is not None:
        const, below, above = quick
        if const is not None and const.is_Integer:
            return int(const) < 0
        if below and above:
            return None
    lo, hi = bounds(_difference(a, b))
    if hi is not None and hi < 0:
        return True
    if lo is not None and lo >= 0:
        return False
    return None


def content(d: Dim) -> int:
    """The largest integer dividing every term's coefficient of ``d`` (0 for 0; 1 if unknown)."""
    if d is None:
        return 1
    if isinstance(d, int):
        return abs(d)
    g = 0
    for term in sympy.Add.make_args(d):
        coeff, _ = term.as_coeff_Mul()
        if not coeff.is_Integer:
            return 1
        g = math.gcd(g, int(coeff))
        if g == 1:
            return 1
    return g


def divide_exact(d: Dim, k: int) -> Dim:
    """``d / k`` for a non-zero ``k`` that divides ``content(d)``: every coefficient divided."""
    if d is None:
        return None
    if isinstance(d, int):
        return d // k
    return normalize(sympy.Add(*(term / k for term in sympy.Add.make_args(d))))


def quotient_parts(d: Dim, k: Dim) -> tuple[Expr, Expr] | None:
    """``(a, b)`` such that ``k`` divides ``d`` exactly when ``b`` divides ``a``: the one
    ``floor(a/b)`` that ``floordiv(d, k)`` holds as a term, where ``d - k*floordiv(d, k)`` is
    provably ``a - b*floor(a/b)``; ``None`` otherwise."""
    q = floordiv(d, k)
    if q is None or isinstance(q, int) or (isinstance(d, int) and isinstance(k, int)):
        return None
    floors = [t for t in sympy.Add.make_args(q) if isinstance(t, FloorDiv)]
    if len(floors) != 1 or (q - floors[0]).has(FloorDiv):
        return None
    f = floors[0]
    a, b = f.args
    if sympy.expand(_wrap(d) - _wrap(k) * q - (a - b * f)) != 0:
        return None
    return a, b


def _integral(e: Expr) -> bool:
    """No fraction left in ``e``: every number an integer, every power a positive one."""
    return all(r.is_Integer for r in e.atoms(sympy.Rational)) and not any(
        p.args[1].is_negative is not False for p in e.atoms(sympy.Pow)
    )


def exact_quotients(d: Dim, divisible: Iterable[tuple[Expr, Expr]]) -> Dim:
    """``d`` where each ``(a, b)`` of ``divisible`` has ``b`` dividing ``a``: ``floor(a/b)`` is
    ``a/b`` and ``mod(a, b)`` is 0, so ``2*floor(c/2)`` is ``c`` where ``c`` is even. Kept as it is
    where a fraction would be left (``floor(c/2)`` stays)."""
    if d is None or isinstance(d, int) or not d.has(FloorDiv, DimMod):
        return d
    subs: dict[Expr, Expr] = {}
    for a, b in divisible:
        subs[FloorDiv(a, b, evaluate=False)] = a / b
        subs[DimMod(a, b, evaluate=False)] = sympy.Integer(0)
    if not subs:
        return d
    r = d.xreplace(subs)
    if r == d:
        return d
    if not _integral(r):
        r = sympy.expand(r)
        if not _integral(r):
            return d
    r = normalize(r)
    return r if isinstance(r, int) or expression_size(r) <= expression_size(d) else d


def product(ds: Iterable[Dim]) -> Dim:
    """Product of extents (1 for none); 0 wins over unknown."""
    out: Dim = 1
    unknown = False
    for d in ds:
        if d is None:
            unknown = True
            continue
        if d == 0:
            return 0
        out = mul(out, d)
    return None if unknown else out


def total(ds: Iterable[Dim]) -> Dim:
    out: Dim = 0
    for d in ds:
        out = add(out, d)
    return out


def free_names(d: Dim) -> frozenset[str]:
    """Names of the dimension variables a dim mentions."""
    if d is None or isinstance(d, int):
        return frozenset()
    return frozenset(s.name for s in d.free_symbols)


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def quote_name(name: str) -> str:
    """A variable's name as written inside an expression: bare if it is an identifier, else in
    backquotes (``batch*`past sequence```), so that every reader parses one variable back."""
    return name if _IDENTIFIER.match(name) else "`" + name.replace("`", "``") + "`"


class _DimPrinter(StrPrinter):
    def _print_Symbol(self, expr: sympy.Symbol) -> str:
        return quote_name(expr.name)


_printer = _DimPrinter()


@lru_cache(maxsize=65536)
def _expr_str(e: Expr) -> str:
    return _printer.doprint(e)


def to_str(d: Dim) -> str:
    """Human and ``dim_param`` form: ``batch``, ``seq + 5``, ``floor((h - 3)/2) + 1``."""
    if d is None:
        return "?"
    if isinstance(d, int):
        return str(d)
    if isinstance(d, sympy.Symbol):
        return d.name  # alone, a name is the dim_param as declared
    if not isinstance(d, sympy.Basic):
        # A float element of known contents: not through the cache, whose keys compare equal
        # for 0.0 and -0.0 (the first printed would be shown for both).
        return _printer.doprint(d)
    return _expr_str(d)


def evaluate(d: Dim, bindings: Mapping[str, int]) -> Dim:
    """Substitute variables by name; an integer when every variable is bound."""
    if d is None or isinstance(d, int):
        return d
    repl = {s: sympy.Integer(bindings[s.name]) for s in d.free_symbols if s.name in bindings}
    return normalize(d.xreplace(repl)) if repl else d
