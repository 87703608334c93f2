"""The term language of extents: its objects, their one canonical order, and their text.

A symbolic extent is an ``Expr``: a sum of terms ``coefficient * monomial`` plus an integer
constant. A monomial (``Mono``) is a product of powers of factors; a factor is a variable
(``Var``) or an operation the ring cannot expand (``Op``): ``floor(a/b)``, ``mod(a, b)``,
``max(...)``, ``min(...)``, and ``float32(a)``, ``float64(a)``: the integer ``a`` rounded to the
nearest value of that float type (an integer again). Coefficients and constants are Python ints.

Every object is hash-consed: built only through the constructors here, which return the one live
object with that content (weak intern tables, so nothing outlives its last user). Equal content
is the same object, so ``==`` is ``is`` and hashing is by identity, both in C. Objects are
immutable; pickling rebuilds them through the constructors.

The order of terms is the order they print in, which is the order sympy prints the same
expression in (lexicographic over the factors, sympy's ``sort_key`` order): texts stay what
users and saved models have read so far. The one exception sympy makes, a positive constant
before a single negative term (``3 - h``), is made by the printer.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Hashable, Iterator
from typing import TYPE_CHECKING, Generic, TypeVar, final, overload
from weakref import KeyedRef

from infer.core.dims.budget import MAX_INT_MAGNITUDE, TOO_BIG, tick

# -- sort keys: sympy's ``sort_key`` for the shapes of expression we build ----------------------

_NUMBER = (1, 0, "Number")
_SYMBOL = (2, 0, "Symbol")
_MUL = (3, 0, "Mul")
_ADD = (3, 1, "Add")
# An operation's class key under sympy's Function.class_key (max and min take any number of
# arguments, which sympy sorts first).
OP_CLASS = {
    "floor": (4, 10000, "FloorDiv"),
    "mod": (4, 10000, "DimMod"),
    "max": (4, 0, "DimMax"),
    "min": (4, 0, "DimMin"),
    "float32": (4, 10000, "Float32"),
    "float64": (4, 10000, "Float64"),
}
# The float types an integer can be rounded to inside an extent, by kind: bits of precision, and
# the magnitude from which rounding gives infinity (the largest finite value plus half an ulp).
FLOAT_KINDS = {"float32": 24, "float64": 53}
_OVERFLOW_AT = {24: (1 << 128) - (1 << 103), 53: (1 << 1024) - (1 << 970)}


def round_to_bits(n: int, bits: int) -> int | None:
    """The integer ``n`` rounded to nearest, ties to even, with ``bits`` of precision (what a
    cast of an int64 to float32 or double holds: an integer again); ``None`` where the float
    type's range ends (infinity)."""
    m = -n if n < 0 else n
    if m <= 1 << bits:
        return n
    if m >= _OVERFLOW_AT[bits]:
        return None
    shift = m.bit_length() - bits
    q, r = m >> shift, m & ((1 << shift) - 1)
    half = 1 << (shift - 1)
    if r > half or (r == half and q & 1):
        q += 1
    m = q << shift
    return -m if n < 0 else m


def int_key(n: int) -> tuple:
    return (_NUMBER, (0, ()), (), n)


_ONE_KEY = int_key(1)
_END = (((9,),), 0)  # after every (factor key, exponent): a monomial that extends another sorts before it


# -- intern tables -------------------------------------------------------------------------------

_lock = threading.Lock()
_T = TypeVar("_T")


class _Interned(Generic[_T]):
    """Content -> the one live object with that content, held weakly."""

    __slots__ = ("_drop", "refs")

    def __init__(self) -> None:
        self.refs: dict[Hashable, KeyedRef[Hashable, _T]] = {}
        self._drop = self._remove

    def _remove(self, ref: KeyedRef[Hashable, _T]) -> None:
        refs = self.refs
        if refs.get(ref.key) is ref:
            del refs[ref.key]

    def get(self, key: Hashable) -> _T | None:
        ref = self.refs.get(key)
        return None if ref is None else ref()

    def put(self, key: Hashable, obj: _T) -> _T:
        """``obj``, or the object another thread interned with ``key`` meanwhile."""
        with _lock:
            ref = self.refs.get(key)
            old = None if ref is None else ref()
            if old is not None:
                return old
            self.refs[key] = KeyedRef(obj, self._drop, key)
            _RECENT[_recent_at[0]] = obj
            _recent_at[0] = (_recent_at[0] + 1) & (_RECENT_SIZE - 1)
            return obj

    def __len__(self) -> int:
        return len(self.refs)


# The last objects made, held strongly: an extent made, used and dropped at once (a difference
# compared with 0, a product on the way to an element count) is usually made again soon, and
# would otherwise be built from nothing each time. A fixed number, so nothing grows across runs.
_RECENT_SIZE = 1 << 13
_RECENT: list[object] = [None] * _RECENT_SIZE
_recent_at = [0]

_VARS: _Interned[Var] = _Interned()
_OPS: _Interned[Op] = _Interned()
_MONOS: _Interned[Mono] = _Interned()
_EXPRS: _Interned[Expr] = _Interned()

# The slots computed when first asked for (``_bounds``, ``_free``, ...) are ``None`` until then:
# none of them is ever ``None`` once computed.
Bound = int | None  # a least or greatest value; None: unbounded on that side
Interval = tuple[Bound, Bound]


def live_objects() -> int:
    """How many interned objects are alive (for tests of memory across runs)."""
    return len(_VARS) + len(_OPS) + len(_MONOS) + len(_EXPRS)


# -- factors -------------------------------------------------------------------------------------


# The four kinds of term are final: ``type(x) is Expr`` is the test of one (and what is not an
# ``Expr`` among extents is an ``int``).
@final
class Var:
    """A dimension variable: declared ones are positive, fresh ones may be 0."""

    __slots__ = ("__weakref__", "key", "lo", "name", "positive", "size")
    name: str
    positive: bool
    key: tuple
    lo: int  # the least value: 1 declared, 0 fresh
    size: int

    def __reduce__(self) -> tuple:
        return (var, (self.name, self.positive))

    def __repr__(self) -> str:
        return self.name


@final
class Op:
    """``floor(a/b)`` (``kind`` "floor"), ``mod(a, b)``, ``max(*args)``, ``min(*args)``,
    ``float32(a)`` or ``float64(a)``: its arguments are ints and ``Expr``s, in canonical form (the
    constructors of ``canon`` made it)."""

    __slots__ = ("__weakref__", "_bounds", "_free", "args", "key", "kind", "size")
    kind: str
    args: tuple[int | Expr, ...]
    key: tuple
    size: int
    _bounds: Interval | None
    _free: frozenset[Var] | None

    def __reduce__(self) -> tuple:
        return (op, (self.kind, self.args))


Factor = Var | Op


def var(name: str, positive: bool) -> Var:
    v = _VARS.get((name, positive))
    if v is None:
        v = Var.__new__(Var)
        v.name, v.positive = name, positive
        v.key = (_SYMBOL, (1, (name,)), _ONE_KEY, 1, positive)
        v.lo = 1 if positive else 0
        v.size = 1
        v = _VARS.put((name, positive), v)
    return v


def op(kind: str, args: tuple[int | Expr, ...]) -> Op:
    """The operation ``kind`` of ``args`` exactly as given: canonical forms are ``canon``'s."""
    key = (kind, args)
    o = _OPS.get(key)
    if o is None:
        o = Op.__new__(Op)
        o.kind, o.args = kind, args
        o.key = (OP_CLASS[kind], (len(args), tuple(sort_key(a) for a in args)), _ONE_KEY, 1)
        o.size = min(TOO_BIG, 1 + sum(size_of(a) for a in args))
        o._bounds = o._free = None
        o = _OPS.put(key, o)
    return o


# -- monomials -----------------------------------------------------------------------------------


@final
class Mono:
    """A product of powers of factors, ``((factor, exponent), ...)`` sorted by factor key."""

    __slots__ = ("__weakref__", "_bounds", "_free", "factors", "okey", "size")
    factors: tuple[tuple[Factor, int], ...]
    okey: tuple
    size: int
    _bounds: Interval | None
    _free: frozenset[Var] | None

    def __reduce__(self) -> tuple:
        return (mono, (self.factors,))


def mono(factors: tuple[tuple[Factor, int], ...]) -> Mono:
    """The monomial of ``factors``, already sorted by factor key, exponents positive."""
    m = _MONOS.get(factors)
    if m is None:
        m = Mono.__new__(Mono)
        m.factors = factors
        m.okey = (*((f.key, -e) for f, e in factors), _END)
        # As sympy's tree counts it: a power is a node over its base counted once per factor.
        size = sum(f.size * e + (e > 1) for f, e in factors) + (len(factors) > 1)
        m.size = min(TOO_BIG, size)
        m._bounds = m._free = None
        m = _MONOS.put(factors, m)
    return m


def mono_of(f: Factor) -> Mono:
    return mono(((f, 1),))


def mono_product(a: Mono, b: Mono) -> Mono:
    """``a * b``: the factor lists merged, exponents of a shared factor added."""
    fa, fb = a.factors, b.factors
    out: list[tuple[Factor, int]] = []
    i = j = 0
    while i < len(fa) and j < len(fb):
        (x, ex), (y, ey) = fa[i], fb[j]
        if x is y:
            out.append((x, ex + ey))
            i += 1
            j += 1
        elif x.key < y.key:
            out.append(fa[i])
            i += 1
        else:
            out.append(fb[j])
            j += 1
    out.extend(fa[i:])
    out.extend(fb[j:])
    return mono(tuple(out))


# -- expressions ---------------------------------------------------------------------------------

Terms = tuple[tuple[Mono, int], ...]  # ``(monomial, coefficient)`` pairs sorted by ``Mono.okey``

_INT_SIZE_BOUND = MAX_INT_MAGNITUDE


@final
class Expr:
    """A symbolic extent: ``sum(c * m for m, c in terms) + const``, terms in print order."""

    __slots__ = ("__weakref__", "_bounds", "_free", "_names", "_skey", "_text", "const", "size", "terms")
    terms: tuple[tuple[Mono, int], ...]
    const: int
    size: int
    _bounds: Interval | None
    _free: frozenset[Var] | None
    _names: frozenset[str] | None
    _skey: tuple | None
    _text: str | None

    if TYPE_CHECKING:
        # Python's operators on an extent: the functions of ``infer.core.dims``, bound to the class
        # there (they build through modules that import this one). Each may answer ``None`` (past
        # the run's bound; an unknown operand).
        def __add__(self, other: int | Expr | None) -> int | Expr | None: ...
        def __radd__(self, other: int | Expr | None) -> int | Expr | None: ...
        def __sub__(self, other: int | Expr | None) -> int | Expr | None: ...
        def __rsub__(self, other: int | Expr | None) -> int | Expr | None: ...
        def __mul__(self, other: int | Expr | None) -> int | Expr | None: ...
        def __rmul__(self, other: int | Expr | None) -> int | Expr | None: ...
        def __neg__(self) -> int | Expr | None: ...
        def __floordiv__(self, other: int | Expr | None) -> int | Expr | None: ...
        def __rfloordiv__(self, other: int | Expr | None) -> int | Expr | None: ...
        def __mod__(self, other: int | Expr | None) -> int | Expr | None: ...
        def __rmod__(self, other: int | Expr | None) -> int | Expr | None: ...

    def __reduce__(self) -> tuple:
        return (make, (self.terms, self.const))

    def __str__(self) -> str:
        return to_str(self)

    def __repr__(self) -> str:
        return to_str(self)


def int_size(n: int) -> int:
    return 1 if -_INT_SIZE_BOUND <= n <= _INT_SIZE_BOUND else TOO_BIG


def size_of(d: int | Expr) -> int:
    return d.size if type(d) is Expr else int_size(d)


@overload
def make(terms: tuple[tuple[Mono, int]], const: int) -> Expr: ...
@overload
def make(terms: tuple[tuple[Mono, int], ...], const: int) -> int | Expr: ...
def make(terms: tuple[tuple[Mono, int], ...], const: int) -> int | Expr:
    """The extent ``terms + const`` (terms sorted by ``Mono.okey``, coefficients non-zero)."""
    if not terms:
        return const
    key = (terms, const)
    e = _EXPRS.get(key)
    if e is None:
        tick(len(terms))
        e = Expr.__new__(Expr)
        e.terms, e.const = terms, const
        size = 0
        for m, c in terms:
            size += m.size if c == 1 else m.size + int_size(c) + (len(m.factors) == 1)
        parts = len(terms) + (1 if const else 0)
        size += (int_size(const) if const else 0) + (1 if parts > 1 else 0)
        e.size = min(TOO_BIG, size)
        e._bounds = e._free = e._names = e._skey = e._text = None
        e = _EXPRS.put(key, e)
    return e


def of_factor(f: Factor) -> Expr:
    """The extent that is the factor ``f`` alone."""
    return make(((mono_of(f), 1),), 0)


def variable(name: str, positive: bool) -> Expr:
    return of_factor(var(name, positive))


def as_factor(e: int | Expr) -> Factor | None:
    """The factor ``e`` is, alone (coefficient 1, no constant), else ``None``."""
    if type(e) is not Expr or e.const or len(e.terms) != 1:
        return None
    m, c = e.terms[0]
    if c != 1 or len(m.factors) != 1 or m.factors[0][1] != 1:
        return None
    return m.factors[0][0]


def as_var(e: object) -> Var | None:
    f = as_factor(e) if type(e) is Expr else None
    return f if type(f) is Var else None


def as_op(e: int | Expr, kind: str) -> Op | None:
    f = as_factor(e)
    return f if type(f) is Op and f.kind == kind else None


def factors_of(d: int | Expr) -> Iterator[Factor]:
    """Every factor ``d`` holds at its top level (not inside operations)."""
    if type(d) is not Expr:
        return
    for m, _ in d.terms:
        for f, _ in m.factors:
            yield f


def free_vars(d: int | Expr | Factor | Mono) -> frozenset[Var]:
    """The variables ``d`` mentions, anywhere."""
    if type(d) is Expr or type(d) is Mono or type(d) is Op:
        out = d._free
        if out is None:
            if type(d) is Expr:
                parts = [free_vars(m) for m, _ in d.terms]
            elif type(d) is Mono:
                parts = [free_vars(f) for f, _ in d.factors]
            else:
                parts = [free_vars(a) for a in d.args]
            out = d._free = parts[0].union(*parts[1:]) if len(parts) > 1 else (parts[0] if parts else frozenset())
        return out
    return frozenset((d,)) if type(d) is Var else frozenset()


def free_names(d: int | Expr | None) -> frozenset[str]:
    if type(d) is not Expr:
        return frozenset()
    out = d._names
    if out is None:
        out = d._names = frozenset(v.name for v in free_vars(d))
    return out


# -- sympy's sort key of an expression, and the order of printed terms ---------------------------


def _single_term_key(m: Mono, c: int) -> tuple:
    if len(m.factors) == 1:
        f, e = m.factors[0]
        return (f.key[0], f.key[1], _ONE_KEY if e == 1 else int_key(e), c)
    parts = tuple(f.key if e == 1 else (f.key[0], f.key[1], int_key(e), 1) for f, e in m.factors)
    return (_MUL, (len(parts), parts), _ONE_KEY, c)


def print_terms(e: Expr) -> list[tuple[Mono | None, int]]:
    """The terms of ``e`` in the order they print, the constant as ``(None, c)``: last, but for
    sympy's one exception, a positive constant before a single negative term (``3 - h``)."""
    terms: list[tuple[Mono | None, int]] = list(e.terms)
    if e.const:
        if e.const > 0 and len(e.terms) == 1 and e.terms[0][1] < 0:
            return [(None, e.const), *terms]
        terms.append((None, e.const))
    return terms


def sort_key(d: int | Expr) -> tuple:
    """sympy's ``sort_key`` of ``d`` as sympy would hold it: the order of a function's arguments
    inside a factor's key, and so of factors among themselves."""
    if type(d) is not Expr:
        return int_key(d)
    k = d._skey
    if k is None:
        if not d.const and len(d.terms) == 1:
            k = _single_term_key(*d.terms[0])
        else:
            parts = tuple(int_key(c) if m is None else _single_term_key(m, c) for m, c in print_terms(d))
            k = (_ADD, (len(parts), parts), _ONE_KEY, 1)
        d._skey = k
    return k


# -- text ----------------------------------------------------------------------------------------

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def quote_name(name: str) -> str:
    """A variable's name as written inside an expression: bare if it is an identifier, else in
    backquotes (``batch*`past sequence```), so that every reader parses one variable back."""
    return name if _IDENTIFIER.match(name) else "`" + name.replace("`", "``") + "`"


def _factor_text(f: Factor) -> str:
    if type(f) is Var:
        return quote_name(f.name)
    if f.kind == "floor":
        a, b = f.args
        num, den = text(a), text(b)
        return f"floor({num if _atomic(a) else f'({num})'}/{den if _atomic(b) else f'({den})'})"
    return f"{f.kind}({', '.join(text(a) for a in f.args)})"


def _atomic(d: int | Expr) -> bool:
    if type(d) is not Expr or as_var(d) is not None:
        return True
    f = as_factor(d)  # a rounding reads as one call: floor(float32(h)/2)
    return type(f) is Op and f.kind in FLOAT_KINDS


def _mono_text(m: Mono) -> str:
    return "*".join(_factor_text(f) if e == 1 else f"{_factor_text(f)}**{e}" for f, e in m.factors)


def text(d: int | Expr) -> str:
    """``d`` as written inside an expression (variables quoted where they are no identifiers)."""
    if type(d) is not Expr:
        return str(d)
    out = d._text
    if out is None:
        parts: list[str] = []
        for m, c in print_terms(d):
            tick()  # printing obeys the clock of what prints (a rule's message, the writer)
            if m is None:
                t = str(abs(c))
            else:
                t = _mono_text(m) if abs(c) == 1 else f"{abs(c)}*{_mono_text(m)}"
            parts.append(("- " if parts else "-") + t if c < 0 else ("+ " + t if parts else t))
        out = d._text = " ".join(parts)
    return out


def to_str(d: int | Expr) -> str:
    """Human and ``dim_param`` form: ``batch``, ``seq + 5``, ``floor((h - 3)/2) + 1``; a variable
    alone is its name as declared."""
    v = as_var(d)
    return v.name if v is not None else text(d)
