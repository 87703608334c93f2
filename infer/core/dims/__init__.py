"""Dimensions: integers, symbolic expressions over dimension variables, or unknown.

A dim is an ``int`` (a fixed extent), an ``Expr`` over dimension variables (Clause 6.5.2), or
``None`` (unknown). An ``Expr`` is this package's own term (``terms``): a canonical polynomial whose
factors are variables and ``floor``, ``mod``, ``max``, ``min`` of expressions, hash-consed, so that
equal extents are the same object. Everything outside the package treats expressions as opaque
values and goes through the functions here; ``to_sympy`` converts one for a caller that asks
for sympy (``infer.core.dims.edge``), the only place sympy is imported.

Declared variables (a ``dim_param``) are integer and positive: an extent of 0 on an axis the model
declares symbolic is treated as out of model (docs/architecture.md). Fresh variables (extents
inference could not compute: a data-dependent count, a Slice with computed bounds) are integer and
non-negative, since such an extent can be 0 at run time. Two distinct variables are never assumed
equal (Clause 9.3): comparisons return ``None`` when the answer depends on their values.

What a run has learned (``x >= 4`` because a window must fit) is never read here: canonical forms
hold in every run, so objects can be shared by all runs. Bounds are the run's to answer
(``infer.core.dimscope.DimScope``, which sharpens what an extent's syntax says, ``dims.bounds``, by
what the run has required); comparisons here use the syntax alone.

Integers stay Python ints on every path; every symbolic result is held to the run's expression
bound (``budget``), past which it is ``None``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Literal, TypeGuard

from infer.core.dims import canon, poly
from infer.core.dims.bounds import at_most_termwise as _at_most_termwise
from infer.core.dims.bounds import bounds as _bounds
from infer.core.dims.bounds import magnitude as _magnitude
from infer.core.dims.budget import (
    MAX_INT_MAGNITUDE,
    _slot,
    expression_limit,
    overflow_count,
    refuse,
    tick,
    time_limit,
)
from infer.core.dims.budget import current as _budget
from infer.core.dims.edge import to_sympy
from infer.core.dims.evaluation import mono_value as _mono_value
from infer.core.dims.evaluation import value as _value
from infer.core.dims.tally import Tally
from infer.core.dims.terms import (
    FLOAT_KINDS,
    Expr,
    Mono,
    Op,
    Var,
    as_op,
    as_var,
    free_names,
    free_vars,
    make,
    mono,
    mono_product,
    of_factor,
    quote_name,
    size_of,
    variable,
)

Dim = int | Expr | None
EXTREMUM_COMPARED = canon.EXTREMUM_COMPARED
FLOAT_KIND_OF_BITS = {bits: kind for kind, bits in FLOAT_KINDS.items()}

__all__ = [
    "Dim",
    "Expr",
    "symbol",
    "fresh_symbol",
    "is_int",
    "is_symbolic",
    "is_variable",
    "variable_name",
    "add",
    "sub",
    "mul",
    "neg",
    "floordiv",
    "ceildiv",
    "truncdiv",
    "mod",
    "dmax",
    "dmax_of",
    "sum_of",
    "at_most_termwise",
    "Tally",
    "tally_term",
    "tally_values",
    "dmin",
    "to_float",
    "magnitude",
    "equal",
    "less",
    "product",
    "content",
    "divide_exact",
    "constant_of",
    "least_values",
    "extremum_args",
    "split_coefficient",
    "parts_by_variable",
    "linear_in",
    "exact_quotients",
    "quotient_parts",
    "total",
    "exact_quotient",
    "free_names",
    "to_str",
    "quote_name",
    "key_text",
    "evaluate",
    "normalize",
    "expression_size",
    "expression_limit",
    "overflow_count",
    "time_limit",
    "tick",
    "to_sympy",
]

_INT_BOUND = MAX_INT_MAGNITUDE
_INF = float("inf")


def symbol(name: str) -> Expr:
    """The dim of a declared dimension variable (integer, positive)."""
    return variable(name, True)


def fresh_symbol(name: str) -> Expr:
    """The dim of a fresh variable (integer, non-negative: it may be 0 at run time)."""
    return variable(name, False)


def least_values(d: Dim) -> dict[str, int]:
    """Each variable of ``d`` with the least value its kind allows: 1 declared, 0 fresh."""
    if type(d) is not Expr:
        return {}
    return {v.name: v.lo for v in free_vars(d)}


def is_int(d: Dim) -> TypeGuard[int]:
    return type(d) is int


def is_symbolic(d: object) -> TypeGuard[Expr]:
    return type(d) is Expr


def is_variable(d: object) -> bool:
    """Is ``d`` one variable alone?"""
    return as_var(d) is not None


def variable_name(d: object) -> str | None:
    """The name of the variable ``d`` is, alone; else ``None``."""
    v = as_var(d)
    return None if v is None else v.name


def _bounded(r: Dim) -> Dim:
    """``r``, or ``None`` when it is past the run's bounds."""
    s = _slot.budget
    if s.earliest != _INF:
        tick()
    if r is None:
        return None
    if type(r) is Expr:
        if r.size <= s.max_size:
            return r
    elif -_INT_BOUND <= r <= _INT_BOUND:
        return r
    s.refused += 1
    return None


def add(a: Dim, b: Dim) -> Dim:
    if a is None or b is None:
        return None
    return _bounded(a + b if type(a) is int and type(b) is int else canon.ceilings(poly.add(a, b)))


def neg(a: Dim) -> Dim:
    if a is None:
        return None
    return _bounded(-a if type(a) is int else poly.scale(a, -1))


def sub(a: Dim, b: Dim) -> Dim:
    if a is None or b is None:
        return None
    return _bounded(a - b if type(a) is int and type(b) is int else canon.ceilings(poly.sub(a, b)))


def mul(a: Dim, b: Dim) -> Dim:
    if a is None or b is None:
        return 0 if a == 0 or b == 0 else None
    if type(a) is int:
        return _bounded(a * b if type(b) is int else poly.scale(b, a))
    if type(b) is int:
        return _bounded(poly.scale(a, b))
    if poly.work(a, b) > _slot.budget.max_size:
        # Bounded before the work starts: a product of sums multiplies their term counts.
        tick()
        refuse()
        return None
    return _bounded(canon.ceilings(poly.mul(a, b)))


def floordiv(a: Dim, b: Dim) -> Dim:
    """``floor(a / b)``; ``None`` when ``b`` is 0 or unknown. A symbolic ``b`` is positive."""
    if a is None or b is None or b == 0:
        return None
    if type(a) is int and type(b) is int:
        return a // b
    if type(b) is int and b < 0:
        return floordiv(neg(a), -b)
    return _bounded(canon.floordiv(a, b))


def ceildiv(a: Dim, b: Dim) -> Dim:
    """``ceil(a / b)`` for positive ``b``, kept as ``floor((a + b - 1) / b)``."""
    if type(b) is int and b < 0:
        return ceildiv(neg(a), -b)
    return floordiv(sub(add(a, b), 1), b)


def truncdiv(a: Dim, b: Dim) -> Dim:
    """``a / b`` truncated toward zero (C's integer division, onnxruntime's) for a positive
    ``b``: ``floor(a/b)`` from 0 up, ``ceil(a/b)`` below, which is
    ``max(floor(a/b), min(ceil(a/b), 0))`` for every integer ``a``."""
    if type(a) is int and type(b) is int and b > 0:
        return a // b if a >= 0 else -(-a // b)
    return dmax(floordiv(a, b), dmin(ceildiv(a, b), 0))


def mod(a: Dim, b: Dim) -> Dim:
    """``a mod b`` with the sign of ``b`` (Python semantics)."""
    if a is None or b is None or b == 0:
        return None
    if type(a) is int and type(b) is int:
        return a % b
    return _bounded(canon.mod(a, b))


def dmax(a: Dim, b: Dim) -> Dim:
    if a is None or b is None:
        return None
    if type(a) is int and type(b) is int:
        return a if a >= b else b
    return _bounded(canon.extremum("max", [a, b]))


def dmax_of(ds: Iterable[Dim], compare: bool = True) -> Dim:
    """The maximum of ``ds`` (at least one) built at once: one canonical form for all of them,
    where folding ``dmax`` would build one per argument; ``None`` if any is unknown. Not
    ``compare``: no argument is compared with another (the caller has, with the run's prover)."""
    args = list(ds)
    known = [d for d in args if d is not None]
    if not known or len(known) < len(args):
        return None
    ints = [d for d in known if type(d) is int]
    if len(ints) == len(known):
        return max(ints)
    return _bounded(canon.extremum("max", known, compare))


def sum_of(ds: Iterable[Dim], less: Iterable[Dim] = ()) -> Dim:
    """The sum of ``ds`` less the sum of ``less``, built at once: every term merged in one pass
    and one canonical form made, where folding ``add`` (``total``) makes one per operand;
    ``None`` if any is unknown."""
    ds, less = list(ds), list(less)
    if any(d is None for d in ds) or any(d is None for d in less):
        return None
    if all(type(d) is int for d in ds) and all(type(d) is int for d in less):
        return _bounded(sum(ds) - sum(less))  # type: ignore[arg-type]
    return _bounded(canon.ceilings(poly.add_all(ds, less)))  # type: ignore[arg-type]


def at_most_termwise(a: Dim, b: Dim) -> bool:
    """Whether ``a <= b`` shows term by term (``bounds.at_most_termwise``): cheaper than
    ``less``, which builds the difference; ``False`` says only that this test does not show it."""
    if a is None or b is None:
        return False
    return _at_most_termwise(a, b)


def tally_term(t: Tally) -> Dim:
    """The extent a ``Tally`` adds up to, in canonical form; ``None`` past the run's bounds."""
    return _bounded(canon.ceilings(make(*t.parts())))


def tally_values(tallies: Sequence[Tally], points: Sequence[Mapping[str, int]]) -> list[tuple[int | None, ...]]:
    """Each tally's value at each of ``points``, every monomial evaluated once per point;
    ``None`` where a value is undefined there (a floor by 0) or a variable is not bound."""
    monos = {m for t in tallies for m in t.coeffs}
    columns = []
    for env in points:
        memo: dict = {}
        values = {m: _mono_value(m, env, memo) for m in monos}
        column: list[int | None] = []
        for t in tallies:
            tick(len(t.coeffs))
            total_ = t.const
            for m, c in t.coeffs.items():
                v = values[m]
                if v is None:
                    column.append(None)
                    break
                total_ += c * v
            else:
                column.append(total_)
        columns.append(column)
    return list(zip(*columns))


def dmin(a: Dim, b: Dim) -> Dim:
    if a is None or b is None:
        return None
    if type(a) is int and type(b) is int:
        return a if a <= b else b
    return _bounded(canon.extremum("min", [a, b]))


EXTENT_MAX = (1 << 63) - 1  # every extent is an int64 (Clause 6.5.1), every variable an extent


def magnitude(d: Dim) -> int | None:
    """An upper bound of ``|d|`` in every run: each variable is an extent, below ``2^63``."""
    return None if d is None else _magnitude(d, EXTENT_MAX)


def to_float(a: Dim, bits: int) -> Dim:
    """The integer ``a`` as float32 (``bits`` 24) or double (53) holds it: rounded to nearest,
    ties to even, an integer again (``float32(h)``, which is ``h`` while ``h <= 2^24``); ``None``
    for another precision or where it rounds to infinity."""
    kind = FLOAT_KIND_OF_BITS.get(bits)
    if a is None or kind is None:
        return None
    return _bounded(canon.round_float(kind, a))


# Python's operators on an extent are the functions above, bound here where they are defined:
# ``2*h + 1`` is ``add(mul(2, h), 1)``, held to the run's bound like every other result (so it may
# be ``None``). Comparisons have no operator: ``equal`` and ``less`` answer ``None`` when unsure.
# (``Expr`` declares them with these signatures for the type checker; mypy refuses assigning to a
# method on principle, `method-assign`, while the types agree: each ignore is that one code.)
Expr.__add__ = Expr.__radd__ = add  # type: ignore[method-assign]
Expr.__mul__ = Expr.__rmul__ = mul  # type: ignore[method-assign]
Expr.__sub__ = sub  # type: ignore[method-assign]
Expr.__rsub__ = lambda a, b: sub(b, a)  # type: ignore[method-assign]
Expr.__neg__ = neg  # type: ignore[method-assign]
Expr.__floordiv__ = floordiv  # type: ignore[method-assign]
Expr.__rfloordiv__ = lambda a, b: floordiv(b, a)  # type: ignore[method-assign]
Expr.__mod__ = mod  # type: ignore[method-assign]
Expr.__rmod__ = lambda a, b: mod(b, a)  # type: ignore[method-assign]


# -- comparisons ---------------------------------------------------------------------------------


def equal(a: Dim, b: Dim) -> bool | None:
    """``True`` when provably equal, ``False`` when provably different, else ``None``."""
    if a is None or b is None:
        return None
    if a is b:
        return True
    if type(a) is int and type(b) is int:
        return a == b
    tick()
    d = canon.ceilings(poly.sub(a, b))
    if type(d) is int:
        return d == 0
    lo, hi = _bounds(d)
    if (lo is not None and lo > 0) or (hi is not None and hi < 0):
        return False
    return None


def less(a: Dim, b: Dim) -> bool | None:
    """``a < b`` when provable either way, else ``None``."""
    if a is None or b is None:
        return None
    if type(a) is int and type(b) is int:
        return a < b
    tick()
    lo, hi = _bounds(canon.ceilings(poly.sub(a, b)))
    if hi is not None and hi < 0:
        return True
    if lo is not None and lo >= 0:
        return False
    return None


# -- structure -----------------------------------------------------------------------------------


def content(d: Dim) -> int:
    """The largest integer dividing every coefficient of ``d`` (0 for 0; 1 if unknown)."""
    return 1 if d is None else poly.content(d)


def divide_exact(d: Dim, k: int) -> Dim:
    """``d / k`` for a non-zero ``k`` that divides ``content(d)``: every coefficient divided."""
    return None if d is None else poly.divide_exact(d, k)


def exact_quotient(a: Dim, b: Dim) -> Dim:
    """``a / b`` when ``b`` divides ``a`` as polynomials, else ``None``."""
    if a is None or b is None:
        return None
    return poly.exact_quotient(a, b)


def constant_of(d: Dim) -> int:
    """The constant term of ``d`` (``d`` itself for an integer, 0 when unknown)."""
    if d is None:
        return 0
    return d.const if type(d) is Expr else d


def extremum_args(d: Dim, kind: str) -> tuple[int | Expr, ...] | None:
    """The arguments of ``d`` when it is one ``max`` (``kind`` "max") or ``min``, alone:
    the symbolic ones sorted by their text, then at most one integer."""
    f = as_op(d, kind) if type(d) is Expr else None
    return None if f is None else f.args


def split_coefficient(d: int | Expr) -> tuple[int, int | Expr]:
    """``(c, rest)`` with ``d = c * rest``: the coefficient of a single term (``32*B*S`` is
    ``(32, B*S)``), else ``(1, d)``; an integer is ``(d, 1)``."""
    if type(d) is not Expr:
        return d, 1
    if len(d.terms) == 1 and not d.const:
        m, c = d.terms[0]
        return c, make(((m, 1),), 0)
    return 1, d


def parts_by_variable(d: Dim) -> tuple[int, dict[str, Expr]] | None:
    """``(c, parts)`` with ``d = c * product(parts.values())`` where ``d`` is a single term and
    each part is the product of its factors that mention the one variable named by its key
    (``16*b*floor(h/4)*floor(w/4)``: 16, b, floor(h/4), floor(w/4)); ``None`` where ``d`` is
    no single term or a factor mentions no or several variables."""
    if type(d) is not Expr or len(d.terms) != 1 or d.const:
        return None
    m, c = d.terms[0]
    monos: dict[str, Mono] = {}
    for f, e in m.factors:
        names = free_names(of_factor(f))
        if len(names) != 1:
            return None
        (name,) = names
        power = mono(((f, e),))
        monos[name] = mono_product(monos[name], power) if name in monos else power
    return c, {name: make(((part, 1),), 0) for name, part in monos.items()}


def linear_in(d: Dim, name: str) -> tuple[int, int | Expr] | None:
    """``(a, b)`` with ``d = a*x + b`` for the variable ``x`` called ``name``, where ``b`` does not
    mention it and ``a`` is a non-zero integer; ``None`` where ``d`` is not such."""
    if type(d) is not Expr:
        return None
    coeff, rest = 0, []
    for m, c in d.terms:
        f, e = m.factors[0]
        if len(m.factors) == 1 and e == 1 and type(f) is Var and f.name == name:
            coeff = c
        else:
            rest.append((m, c))
    b = make(tuple(rest), d.const)
    if not coeff or name in free_names(b):
        return None
    return coeff, b


def quotient_parts(d: Dim, k: Dim) -> tuple[int | Expr, int | Expr] | None:
    """``(a, b)`` such that ``k`` divides ``d`` exactly when ``b`` divides ``a``: the one
    ``floor(a/b)`` that ``floordiv(d, k)`` holds as a term, where ``d - k*floordiv(d, k)`` is
    provably ``a - b*floor(a/b)``; ``None`` otherwise."""
    if d is None or k is None:
        return None
    q = floordiv(d, k)
    if type(q) is not Expr or (type(d) is int and type(k) is int):
        return None
    floors = [
        f
        for m, c in q.terms
        if c == 1 and len(m.factors) == 1 and m.factors[0][1] == 1
        for f in (m.factors[0][0],)
        if type(f) is Op and f.kind == "floor"
    ]
    if len(floors) != 1:
        return None
    f = floors[0]
    rest = poly.sub(q, of_factor(f))
    if _holds(rest, "floor"):
        return None
    a, b = f.args
    if poly.sub(d, poly.mul(k, q)) is not poly.sub(a, poly.mul(b, of_factor(f))):
        return None
    return a, b


def _holds(d: int | Expr, kind: str) -> bool:
    """Does ``d`` hold an operation ``kind`` anywhere?"""
    if type(d) is not Expr:
        return False
    for m, _ in d.terms:
        for f, _ in m.factors:
            if type(f) is Op and (f.kind == kind or any(_holds(a, kind) for a in f.args)):
                return True
    return False


def exact_quotients(d: Dim, divisible: Iterable[tuple[int | Expr, int | Expr]]) -> Dim:
    """``d`` where each ``(a, b)`` of ``divisible`` has ``b`` dividing ``a``: ``floor(a/b)`` is
    ``a/b`` and ``mod(a, b)`` is 0, so ``2*floor(c/2)`` is ``c`` where ``c`` is even. Kept as it is
    where a fraction would be left (``floor(c/2)`` stays), or where the result is no smaller."""
    if type(d) is not Expr or not (_holds(d, "floor") or _holds(d, "mod")):
        return d
    pairs = {(a, b) for a, b in divisible}
    if not pairs:
        return d
    r = _exact(d, pairs)
    if r is None or r is d:
        return d
    return r if type(r) is not Expr or r.size <= d.size else d


Pairs = set[tuple[int | Expr, int | Expr]]  # (a, b): b divides a


def _exact(d: int | Expr, pairs: Pairs) -> int | Expr | None:
    """``d`` with the exact quotients of ``pairs`` put in; ``None`` where a fraction is left."""
    if type(d) is not Expr:
        return d
    acc: dict[Mono, Fraction] = {}
    const = Fraction(d.const)
    budget = _budget().max_size
    for m, c in d.terms:
        coeff = Fraction(c)
        part: int | Expr = 1  # the term's numerator ...
        divisor: int | Expr = 1  # ... and the symbolic divisors it must be divided by exactly
        for f, e in m.factors:
            value = _exact_factor(f, pairs)
            if value is None:
                return None
            if isinstance(value, int):  # 0
                coeff = Fraction(0)
                break
            num, den, sym = value
            for _ in range(e):
                if poly.work(part, num) > budget or poly.work(divisor, sym) > budget:
                    return None
                part, divisor = poly.mul(part, num), poly.mul(divisor, sym)
            coeff /= den**e
        if coeff == 0:
            continue
        if divisor != 1:
            quotient = poly.exact_quotient(part, divisor)
            if quotient is None:
                return None
            part = quotient
        if type(part) is not Expr:
            const += coeff * part
            continue
        for pm, pc in part.terms:
            acc[pm] = acc.get(pm, 0) + coeff * pc
        const += coeff * part.const
    if const.denominator != 1 or any(x.denominator != 1 for x in acc.values()):
        return None
    terms = sorted(((pm, int(x)) for pm, x in acc.items() if x), key=lambda t: t[0].okey)
    return canon.ceilings(make(tuple(terms), int(const)))


def _exact_factor(f: Var | Op, pairs: Pairs) -> tuple[int | Expr, int, int | Expr] | Literal[0] | None:
    """A factor as ``(numerator, integer divisor, symbolic divisor)``, or 0; ``None`` where its
    arguments leave a fraction."""
    if type(f) is Var:
        return of_factor(f), 1, 1
    if f.kind in ("floor", "mod") and (f.args[0], f.args[1]) in pairs:
        a, b = f.args
        if f.kind == "mod":
            return 0
        return (a, b, 1) if type(b) is int else (a, 1, b)
    args = [_exact(a, pairs) if type(a) is Expr else a for a in f.args]
    if any(a is None for a in args):
        return None
    if all(a is b for a, b in zip(args, f.args)):
        return of_factor(f), 1, 1
    rebuilt = _rebuilt(f.kind, args)
    return None if rebuilt is None else (rebuilt, 1, 1)


def _rebuilt(kind: str, args: list) -> int | Expr | None:
    """The operation ``kind`` of ``args`` in canonical form."""
    if kind in ("max", "min"):
        return canon.extremum(kind, args)
    if kind in FLOAT_KINDS:
        return canon.round_float(kind, args[0])
    return canon.floordiv(*args) if kind == "floor" else canon.mod(*args)


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


def to_str(d: object) -> str:
    """Human and ``dim_param`` form: ``batch``, ``seq + 5``, ``floor((h - 3)/2) + 1``."""
    return "?" if d is None else str(d)


def key_text(d: int | Expr, name_key: Mapping[str, str] | None = None) -> str:
    """``d``'s structure as text in which each variable is ``name_key[name]`` (or its quoted
    name) and the arguments of sums, products, max and min are sorted: the same text for the
    same structure whatever the variables are called."""
    if type(d) is not Expr:
        return str(d)
    keys = name_key or {}

    def factor(f: Var | Op) -> str:
        if type(f) is Var:
            return keys.get(f.name) or repr(f.name)
        args = [key_text(a, keys) for a in f.args]
        if f.kind in ("max", "min"):
            args.sort()
        return f"{f.kind}({','.join(args)})"

    terms = []
    for m, c in d.terms:
        parts = sorted(factor(f) + (f"**{e}" if e > 1 else "") for f, e in m.factors)
        terms.append("*".join([str(c), *parts]) if c != 1 else "*".join(parts))
    if d.const:
        terms.append(str(d.const))
    return f"Add({','.join(sorted(terms))})"


# -- values at bindings --------------------------------------------------------------------------


def evaluate(d: Dim, bindings: Mapping[str, int]) -> Dim:
    """Substitute variables by name; an integer when every variable is bound."""
    if d is None or type(d) is int:
        return d
    names = free_names(d)
    if not any(n in bindings for n in names):
        return d
    if all(n in bindings for n in names):
        return _value(d, bindings, {})
    return _substitute(d, bindings, {})


def _substitute(d: int | Expr, env: Mapping[str, int], memo: dict[Var | Op, int | Expr]) -> int | Expr:
    if type(d) is not Expr:
        return d
    out: int | Expr = d.const
    for m, c in d.terms:
        x: int | Expr = c
        for f, e in m.factors:
            v = _substitute_factor(f, env, memo)
            for _ in range(e):
                x = poly.mul(x, v)
        out = poly.add(out, x)
    return canon.ceilings(out)


def _substitute_factor(f: Var | Op, env: Mapping[str, int], memo: dict[Var | Op, int | Expr]) -> int | Expr:
    v = memo.get(f)
    if v is None:
        if type(f) is Var:
            v = env[f.name] if f.name in env else of_factor(f)
        else:
            a, *rest = args = [_substitute(a, env, memo) for a in f.args]
            if f.kind in ("floor", "mod"):
                b = rest[0]
                if b == 0:
                    raise ZeroDivisionError(f"{f.kind} by 0 at these bindings")
                if type(b) is int and b < 0 and f.kind == "floor":
                    a, b = poly.scale(a, -1), -b
                v = canon.floordiv(a, b) if f.kind == "floor" else canon.mod(a, b)
            elif f.kind in FLOAT_KINDS:
                v = canon.round_float(f.kind, a)
                if v is None:
                    raise OverflowError(f"{f.kind} of {a} is infinite")
            else:
                v = canon.extremum(f.kind, args)
        memo[f] = v
    return v


def normalize(d: Dim) -> Dim:
    """``d`` as a dim: a ``bool`` as its ``int``, everything else unchanged."""
    return int(d) if type(d) is bool else d


def expression_size(d: int | Expr) -> int:
    """Nodes of an extent's tree as sympy would hold it (a power counts its base once per
    factor); a huge integer counts as too big."""
    return size_of(d)
