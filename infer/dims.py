"""Dimensions: integers, symbolic expressions over dimension variables, or unknown.

A dim is an ``int`` (fixed extent), a ``sympy.Expr`` over dimension variables (Clause 6.5.2), or
``None`` (unknown). Everything outside this module treats expressions as opaque values and goes
through the functions here, so the expression engine could be swapped later.

Why our own ``FloorDiv``/``Max``/``Min``: sympy's ``floor`` rewrites ``floor((h-3)/2)`` into
``floor(h/2 - 1/2) - 1`` and its ``Max`` runs an assumption search costing milliseconds per call.
Ours canonicalize only what is cheap and exact for integer-valued operands.

Variables are integer and positive (an extent of 0 in a dynamic axis is treated as out of model).
Two distinct variables are never assumed equal (Clause 9.3): comparisons return ``None`` when the
answer depends on their values.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache, lru_cache

import sympy
from sympy.printing.str import StrPrinter

Expr = sympy.Expr
Dim = int | Expr | None

__all__ = [
    "Dim",
    "Expr",
    "FloorDiv",
    "DimMax",
    "DimMin",
    "symbol",
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
    "dmin",
    "equal",
    "less",
    "bounds",
    "lower_bound",
    "product",
    "total",
    "free_names",
    "to_str",
    "evaluate",
    "normalize",
]


@cache
def symbol(name: str) -> sympy.Symbol:
    """The interned symbol of a dimension variable (integer, positive)."""
    return sympy.Symbol(name, integer=True, positive=True)


def _is_integer_valued(e: Expr) -> bool:
    # Every leaf we build is an integer symbol, an integer, or one of our integer functions, so
    # a term is integer-valued exactly when its numeric coefficient is an integer.
    coeff, _ = e.as_coeff_Mul()
    return coeff.is_Integer


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
        return None

    def _sympystr(self, printer: StrPrinter) -> str:
        a, b = self.args
        num, den = printer._print(a), printer._print(b)
        return f"floor({num if a.is_Atom else f'({num})'}/{den if b.is_Atom else f'({den})'})"


def lower_bound(e: Expr) -> int | None:
    """A cheap lower bound of an integer expression (variables are >= 1), or ``None``."""
    if e.is_Integer:
        return int(e)
    if e.is_Symbol:
        return 1
    if isinstance(e, sympy.Add):
        lbs = [lower_bound(t) for t in e.args]
        return None if None in lbs else sum(lbs)  # type: ignore[arg-type]
    if isinstance(e, sympy.Mul):
        coeff, rest = e.as_coeff_Mul()
        if coeff.is_Integer and coeff > 0:
            lb = 1
            for f in sympy.Mul.make_args(rest):
                flb = lower_bound(f)
                if flb is None or flb < 0:
                    return None
                lb *= flb
            return int(coeff) * lb
        return None
    if isinstance(e, FloorDiv) and e.args[1].is_Integer:
        lb = lower_bound(e.args[0])
        return None if lb is None else lb // int(e.args[1])
    if isinstance(e, DimMax):
        lbs = [lower_bound(a) for a in e.args]
        known = [lb for lb in lbs if lb is not None]
        return max(known) if known else None
    if isinstance(e, DimMin):
        lbs = [lower_bound(a) for a in e.args]
        return None if None in lbs else min(lbs)  # type: ignore[type-var]
    return None


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
        # Drop a symbolic argument that another one beats by a known constant, or that is the
        # opposite extremum of another argument: max(a, min(a, b)) = a, min(a, max(a, b)) = a.
        other = DimMin if cls._is_max else DimMax
        syms = [s for s in syms if not (isinstance(s, other) and any(t in s.args for t in syms))]
        kept = []
        for s in syms:
            beaten = False
            for t in syms:
                if t is s or t.free_symbols != s.free_symbols:
                    continue
                d = t - s
                if d.is_Integer and d != 0 and (d > 0) == cls._is_max:
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


@lru_cache(maxsize=65536)
def _add(a: Expr, b: Expr) -> Dim:
    return normalize(a + b)


@lru_cache(maxsize=65536)
def _mul(a: Expr, b: Expr) -> Dim:
    return normalize(a * b)


@lru_cache(maxsize=65536)
def _floordiv(a: Expr, b: Expr) -> Dim:
    return normalize(FloorDiv(a, b))


@lru_cache(maxsize=65536)
def _mod(a: Expr, b: Expr) -> Dim:
    return normalize(sympy.Mod(a, b))


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
        return a + b
    return _add(_wrap(a), _wrap(b))


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
        return a * b
    return _mul(_wrap(a), _wrap(b))


def floordiv(a: Dim, b: Dim) -> Dim:
    """``floor(a / b)``; ``None`` when ``b`` is 0 or unknown."""
    if a is None or b is None or b == 0:
        return None
    if isinstance(a, int) and isinstance(b, int):
        return a // b
    if isinstance(b, int) and b < 0:
        return floordiv(neg(a), -b)
    return _floordiv(_wrap(a), _wrap(b))


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
    return _mod(_wrap(a), _wrap(b))


def dmax(a: Dim, b: Dim) -> Dim:
    if a is None or b is None:
        return None
    if isinstance(a, int) and isinstance(b, int):
        return max(a, b)
    return _max(_wrap(a), _wrap(b))


def dmin(a: Dim, b: Dim) -> Dim:
    if a is None or b is None:
        return None
    if isinstance(a, int) and isinstance(b, int):
        return min(a, b)
    return _min(_wrap(a), _wrap(b))


def bounds(d: Dim) -> tuple[int | None, int | None]:
    """Cheap (lower, upper) bounds of a dim; ``None`` where unbounded or unknown."""
    if d is None:
        return None, None
    if isinstance(d, int):
        return d, d
    lo = lower_bound(d)
    nlo = lower_bound(-d)
    return lo, None if nlo is None else -nlo


def equal(a: Dim, b: Dim) -> bool | None:
    """``True`` when provably equal, ``False`` when provably different, else ``None``."""
    if a is None or b is None:
        return None
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    if a == b:
        return True
    d = sub(a, b)
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
    lo, hi = bounds(sub(a, b))
    if hi is not None and hi < 0:
        return True
    if lo is not None and lo >= 0:
        return False
    return None


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


class _DimPrinter(StrPrinter):
    def _print_Symbol(self, expr: sympy.Symbol) -> str:
        return expr.name

    def _print_Mod(self, expr: sympy.Mod) -> str:
        return "mod(" + ", ".join(self._print(a) for a in expr.args) + ")"


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
    return _expr_str(d)


def evaluate(d: Dim, bindings: Mapping[str, int]) -> Dim:
    """Substitute variables by name; an integer when every variable is bound."""
    if d is None or isinstance(d, int):
        return d
    repl = {s: sympy.Integer(bindings[s.name]) for s in d.free_symbols if s.name in bindings}
    return normalize(d.xreplace(repl)) if repl else d
