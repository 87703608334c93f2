"""Computing on known contents: the partial values that carry shapes (DESIGN.md, values).

Elements are ints, floats, bools, strings, symbolic integers (``dims.Expr``, a dim read by ``Shape``),
``SymFloat`` (a float that depends on dimension variables, ``signatures.kit.floatops``) or ``None``
(that element unknown). The domain of an element is its tensor's element type: integer tensors
hold ints and symbolic integers, float tensors floats and ``SymFloat``s. ``arith(elem, ...)`` gives
the operations of one element type; arithmetic on dims goes through ``infer.core.dims`` so symbolic
extents stay exact, and anything that cannot be computed exactly yields ``None``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from onnx import TensorProto

from infer.contract.context import Facts, RuleContext
from infer.core import dims as D
from infer.core.values import FLOAT_BITS, INT_RANGE, MAX_KNOWN_ELEMENTS, Elem, Known, SymFloat
from signatures.kit.floatops import FloatArith

Op = Callable[..., Elem]


def _is_sym(x: Any) -> bool:
    """A symbolic integer (an expression over dimension variables)."""
    return D.is_symbolic(x)


def _num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def lift(int_op: Callable[[Any, Any], Any], num_op: Callable[[Any, Any], Any]) -> Op:
    """A binary op on elements: dims arithmetic when symbolic, plain arithmetic otherwise."""

    def op(a: Elem, b: Elem) -> Elem:
        if a is None or b is None or type(a) is SymFloat or type(b) is SymFloat:
            return None  # a float element that depends on variables: ``FloatArith``'s
        if _is_sym(a) or _is_sym(b):
            # Symbolic values are integers; a float operand must be integral to stay exact.
            a2 = int(a) if isinstance(a, float) and a.is_integer() else a
            b2 = int(b) if isinstance(b, float) and b.is_integer() else b
            if isinstance(a2, float) or isinstance(b2, float) or isinstance(a2, str) or isinstance(b2, str):
                return None
            return int_op(int(a2) if isinstance(a2, bool) else a2, int(b2) if isinstance(b2, bool) else b2)
        try:
            return num_op(a, b)
        except (ArithmeticError, ValueError, TypeError):
            return None

    return op


def _trunc_div(a: Any, b: Any) -> Any:
    if isinstance(a, int) and isinstance(b, int):
        if b == 0:
            return None
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b > 0) else -q
    return a / b


def _sym_div(a: Any, b: Any, lower_bound: Callable[[Any], int | None]) -> Any:
    """Integer ``Div`` truncates toward zero: for a divisor known positive (a symbolic one may be
    0 or negative at run time), floor division where the dividend's sign is known, else the
    truncated quotient (``D.truncdiv``)."""
    if isinstance(b, int):
        if b < 0:
            return D.neg(_sym_div(a, -b, lower_bound))
    elif (lower_bound(b) or 0) < 1:
        return None
    lb = a if isinstance(a, int) else lower_bound(a)
    if lb is not None and lb >= 0:
        return D.floordiv(a, b)
    if isinstance(a, int):
        nlb: int | None = -a
    else:
        negated = D.neg(a)  # None when past the expression limit
        nlb = None if negated is None else lower_bound(negated)
    if nlb is not None and nlb >= 0:  # a <= 0: -floor(-a / b)
        return D.neg(D.floordiv(D.neg(a), b))
    return D.truncdiv(a, b)


def div_with(lower_bound: Callable[[Any], int | None]) -> Op:
    """``Div`` on elements, deciding signs with ``lower_bound`` (the run's, ``Facts``)."""
    return lift(lambda a, b: _sym_div(a, b, lower_bound), _trunc_div)


def _fmod_int(a: Any, b: Any) -> Any:
    if b == 0:
        return None
    return a % b


def _c_remainder(a: Any, b: Any, lower_bound: Callable[[Any], int | None] | None = None) -> Any:
    """``Mod`` with ``fmod=1`` on integers: C's remainder, with the dividend's sign."""
    if isinstance(a, int) and isinstance(b, int):
        if b == 0:
            return None
        r = abs(a) % abs(b)
        return r if a >= 0 else -r
    if lower_bound is None:
        return None  # (the integer path, through ``lift``)
    lba = lower_bound(a) if _is_sym(a) else a
    lbb = lower_bound(b) if _is_sym(b) else b
    if lba is not None and lba >= 0 and lbb is not None and lbb >= 1:
        return D.mod(a, b)  # both positive: C's remainder is Python's
    return None


def _int_pow(a: Any, b: Any) -> Any:
    """Integer ``Pow``: exact for a small non-negative exponent."""
    if not isinstance(b, int) or isinstance(b, bool) or not 0 <= b <= 64:
        return None
    if isinstance(a, int):
        return a**b if abs(a) < (1 << 64) else None
    out: Any = 1
    for _ in range(b):
        out = D.mul(out, a)
    return out


def _cmp(rel: Callable[[Any, Any], bool | None], num: Callable[[Any, Any], bool]) -> Op:
    def op(a: Elem, b: Elem) -> Elem:
        if a is None or b is None:
            return None
        if _is_sym(a) or _is_sym(b):
            if isinstance(a, (str, float)) or isinstance(b, (str, float)):
                return None
            return rel(a, b)
        return bool(num(a, b))

    return op


def _nan_max(pick: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """onnxruntime's Max and Min propagate NaN whatever the argument order; Python's do not."""

    def op(a: Any, b: Any) -> Any:
        for x in (a, b):
            if isinstance(x, float) and math.isnan(x):
                return x
        return pick(a, b)

    return op


ADD = lift(D.add, lambda a, b: a + b)
SUB = lift(D.sub, lambda a, b: a - b)
MUL = lift(D.mul, lambda a, b: a * b)
MOD = lift(D.mod, lambda a, b: _fmod_int(a, b) if isinstance(a, int) and isinstance(b, int) else math.fmod(a, b))


def _extremum(facts: Facts, larger: bool) -> Callable[[Any, Any], Any]:
    """Max (``larger``) or Min of two integers: the one the run proves it is, else the term."""

    def op(a: Any, b: Any) -> Any:
        a_first = facts.less(a, b)  # True: a < b; False: a >= b
        if a_first is None and facts.less(b, a) is False:  # b >= a
            a_first = True
        if a_first is None:
            return D.dmax(a, b) if larger else D.dmin(a, b)
        return (b if a_first else a) if larger else (a if a_first else b)

    return op


def _comparisons(facts: Facts) -> dict[str, Op]:
    """The comparisons of integers, decided by what the run proves (``facts``)."""
    less, equal = facts.less, facts.equal
    return {
        "equal": _cmp(equal, lambda a, b: a == b),
        "less": _cmp(less, lambda a, b: a < b),
        "greater": _cmp(lambda a, b: less(b, a), lambda a, b: a > b),
        "less_equal": _cmp(lambda a, b: _not(less(b, a)), lambda a, b: a <= b),
        "greater_equal": _cmp(lambda a, b: _not(less(a, b)), lambda a, b: a >= b),
    }


def _not(x: bool | None) -> bool | None:
    return None if x is None else not x


def _logic(f: Callable[[bool, bool], bool]) -> Op:
    def op(a: Elem, b: Elem) -> Elem:
        if a is None or b is None or _is_sym(a) or _is_sym(b):
            return None
        return f(bool(a), bool(b))

    return op


AND = _logic(lambda a, b: a and b)
OR = _logic(lambda a, b: a or b)
XOR = _logic(lambda a, b: a != b)


def neg(a: Elem) -> Elem:
    if a is None or isinstance(a, (str, bool, SymFloat)):
        return None
    return D.neg(a) if _is_sym(a) else -a


Bounds = Callable[[Any], "tuple[int | None, int | None]"]


def _sign_of(a: Any, bounds: Bounds) -> int | None:
    lo, hi = bounds(a)
    if lo is not None and lo >= 1:
        return 1
    if hi is not None and hi <= -1:
        return -1
    if lo == 0 and hi == 0:
        return 0
    return None


def absolute(a: Elem, bounds: Bounds) -> Elem:
    if a is None or isinstance(a, (str, bool, SymFloat)):
        return None
    if _is_sym(a):
        lo, hi = bounds(a)
        if lo is not None and lo >= 0:
            return a
        return D.neg(a) if hi is not None and hi <= 0 else None
    return abs(a)


def _relu(a: Elem, bounds: Bounds) -> Elem:
    if a is None or isinstance(a, (str, bool, SymFloat)):
        return None
    if _is_sym(a):
        lo, hi = bounds(a)
        return a if lo is not None and lo >= 0 else 0 if hi is not None and hi <= 0 else None
    return max(a, 0)


def _sign(a: Elem, bounds: Bounds) -> Elem:
    if a is None or isinstance(a, (str, bool, SymFloat)):
        return None
    if _is_sym(a):
        return _sign_of(a, bounds)
    return (a > 0) - (a < 0)


def logical_not(a: Elem) -> Elem:
    if a is None or type(a) is not bool:
        return None
    return not a


def _same(a: Elem) -> Elem:
    """Floor, Ceil and Round of an integer element."""
    return None if a is None or isinstance(a, (str, bool, SymFloat, float)) else a


def _none(*_: Elem) -> Elem:
    return None


@dataclass(frozen=True, slots=True)
class Arith:
    """The element operations of one element type (``arith``)."""

    add: Op
    add_exact: Op  # add where no rounding happens: for reductions in an order the runtime picks
    mul_exact: Op
    sub: Op
    mul: Op
    div: Op
    mod: Op
    fmod: Op
    pow: Op
    max: Op
    min: Op
    equal: Op
    less: Op
    greater: Op
    less_equal: Op
    greater_equal: Op
    neg: Op
    abs: Op
    relu: Op
    sign: Op
    floor: Op
    ceil: Op
    round: Op
    sqrt: Op
    reciprocal: Op
    logical_not: Op


def _float_cmp(fa: FloatArith, want: Callable[[int], bool], nan: bool) -> Op:
    def op(a: Elem, b: Elem) -> Elem:
        if a is None or b is None:
            return None
        if (type(a) is float and math.isnan(a)) or (type(b) is float and math.isnan(b)):
            return nan  # every comparison with NaN is false (NotEqual is not an operator)
        s = fa.compare(a, b)
        return None if s is None else want(s)

    return op


def arith(elem: int | None, facts: Facts) -> Arith:
    """The element operations of tensors of element type ``elem``.

    Signs, and whether a float result is exact, are decided by ``facts`` (the run's bounds: they
    know what its convolutions require); nothing is assumed.
    """
    lower_bound, bounds = facts.lower_bound, facts.bounds
    bits = FLOAT_BITS.get(elem)  # type: ignore[arg-type]
    if bits is not None:
        f = FloatArith(bits, bounds)
        ops = {name: _guard(getattr(f, name)) for name in _FLOAT_METHODS}
        compare = {name: _float_cmp(f, want, False) for name, want in _COMPARISONS.items()}
        return Arith(**ops, **compare, abs=_guard(f.absolute), mod=_none, logical_not=_none)
    if elem is not None and elem not in INT_RANGE and elem != TensorProto.BOOL:
        return _UNTRACKED  # float8, strings, ...: contents of such types are not computed on
    g = _int_guard
    remainder = lift(lambda a, b: _c_remainder(a, b, lower_bound), _c_remainder)
    compare = {name: g(op) for name, op in _comparisons(facts).items()}
    return Arith(
        add=g(ADD),
        add_exact=g(ADD),
        mul_exact=g(MUL),
        sub=g(SUB),
        mul=g(MUL),
        div=g(div_with(lower_bound)),
        mod=g(MOD),
        fmod=g(remainder),
        pow=g(lift(_int_pow, _int_pow)),
        max=g(lift(_extremum(facts, True), _nan_max(max))),
        min=g(lift(_extremum(facts, False), _nan_max(min))),
        neg=g(neg),
        abs=g(lambda a: absolute(a, bounds)),
        relu=g(lambda a: _relu(a, bounds)),
        sign=g(lambda a: _sign(a, bounds)),
        floor=g(_same),
        ceil=g(_same),
        round=g(_same),
        sqrt=_none,
        reciprocal=_none,
        logical_not=logical_not,
        **compare,
    )


def ops_of(ctx: RuleContext, i: int = 0) -> Arith:
    """The element operations of the rule's input ``i``: its element type, signs and exactness
    decided by what the run knows of its extents."""
    return arith(ctx.elem(i), ctx)


_FLOAT_METHODS = ("add", "add_exact", "mul_exact", "sub", "mul", "div", "fmod", "pow", "max", "min", "neg", "relu",
                  "sign", "floor", "ceil", "round", "sqrt", "reciprocal")  # fmt: skip
_COMPARISONS: dict[str, Callable[[int], bool]] = {
    "equal": lambda s: s == 0, "less": lambda s: s < 0, "greater": lambda s: s > 0,
    "less_equal": lambda s: s <= 0, "greater_equal": lambda s: s >= 0,
}  # fmt: skip


def _int_guard(f: Callable[..., Elem]) -> Op:
    """``f`` on the integer domain: a float element in an integer (or untyped) tensor is no
    integer to compute on."""

    def op(*args: Elem) -> Elem:
        for a in args:
            if type(a) is float or type(a) is SymFloat or type(a) is str:
                return None
        return f(*args)

    return op


_UNTRACKED = Arith(*([_none] * len(Arith.__dataclass_fields__)))


def _guard(f: Callable[..., Elem]) -> Op:
    """``f`` on present elements of the float domain; anything else (a stray integer
    expression, a string, an unknown element) gives ``None``."""

    def op(*args: Elem) -> Elem:
        for a in args:
            if a is None or not (type(a) is float or type(a) is SymFloat or type(a) is int):
                return None
        return f(*args)

    return op


# numpy refuses an array whose extents, zeros left out, multiply past its largest size in bytes,
# and an empty tensor may declare any extents beside its 0 (``[2^62, 0]``): such contents are left
# unknown rather than computed on (Clause 15.4).
_NP_MAX_SLOTS = np.iinfo(np.intp).max // np.dtype(object).itemsize


def fits_numpy(shape: Sequence[int]) -> bool:
    """Can numpy hold an object array of ``shape``?"""
    n = 1
    for d in shape:
        if d < 0:
            return False
        if d:
            n *= d
    return n <= _NP_MAX_SLOTS


def as_array(k: Known) -> np.ndarray | None:
    """The contents as an object array; ``None`` when numpy cannot hold its shape."""
    if not fits_numpy(k.shape):
        return None
    arr = np.empty(len(k.elems), dtype=object)
    arr[:] = list(k.elems)
    return arr.reshape(k.shape)


def _from_array(arr: np.ndarray | Elem) -> Known:
    if not isinstance(arr, np.ndarray):  # numpy unwraps 0-d object results
        return Known((), (arr,))
    return Known(tuple(int(s) for s in arr.shape), tuple(arr.reshape(-1).tolist()))


def elementwise(op: Op, *knowns: Known | None) -> Known | None:
    """Apply ``op`` element by element with multidirectional broadcasting (Clause 6.6).

    A Python loop over broadcast positions rather than a numpy ufunc over object arrays: a ufunc
    checks the processor's floating-point flags afterwards and warns when an element is NaN.
    """
    ks = [k for k in knowns if k is not None]
    if len(ks) != len(knowns):
        return None
    try:
        shape = np.broadcast_shapes(*(k.shape for k in ks))
    except ValueError:
        return None
    n = math.prod(shape)
    if n > MAX_KNOWN_ELEMENTS or not fits_numpy(shape):
        return None
    columns = []
    for k in ks:
        if k.shape == shape:
            columns.append(k.elems)
        elif k.size == 1:
            columns.append(k.elems * n)
        else:  # positions into the smaller tensor, broadcast (integers only: no float flags)
            where = np.broadcast_to(np.arange(k.size).reshape(k.shape), shape).reshape(-1).tolist()
            columns.append(tuple(k.elems[i] for i in where))
    return Known(tuple(int(d) for d in shape), tuple(op(*args) for args in zip(*columns)))


def unary(op: Callable[[Elem], Elem], k: Known | None) -> Known | None:
    if k is None:
        return None
    return Known(k.shape, tuple(op(e) for e in k.elems))


def reshape(k: Known | None, shape: Sequence[D.Dim]) -> Known | None:
    """``k`` in ``shape``; ``None`` where an extent of it is not an integer or the sizes differ."""
    ints = [d for d in shape if isinstance(d, int)]
    if k is None or len(ints) < len(shape) or math.prod(ints) != k.size:
        return None
    return Known(tuple(ints), k.elems)


def take(k: Known | None, indices: Known | None, axis: int) -> Known | None:
    """``Gather`` on contents."""
    if k is None or indices is None or not k.shape:
        return None
    idx = indices.ints()
    if idx is None:
        return None
    arr = as_array(k)
    if arr is None or not fits_numpy((*k.shape[:axis], *indices.shape, *k.shape[axis + 1 :])):
        return None
    n = arr.shape[axis]
    if any(not -n <= i < n for i in idx):
        return None
    ind = np.array(idx, dtype=np.int64).reshape(indices.shape)
    return _from_array(np.take(arr, ind, axis=axis))


def concat(ks: Sequence[Known | None], axis: int) -> Known | None:
    arrays = []
    for k in ks:
        a = None if k is None else as_array(k)
        if a is None:
            return None
        arrays.append(a)
    if not arrays:
        return None
    try:
        return _from_array(np.concatenate(arrays, axis=axis))
    except ValueError:
        return None


def slice_known(
    k: Known | None, starts: Sequence[int], ends: Sequence[int], axes: Sequence[int], steps: Sequence[int]
) -> Known | None:
    if k is None:
        return None
    arr = as_array(k)
    if arr is None:
        return None
    index = [slice(None)] * arr.ndim
    for s, e, a, st in zip(starts, ends, axes, steps):
        index[a] = slice(s, e, st)
    return _from_array(arr[tuple(index)])


def transpose(k: Known | None, perm: Sequence[int]) -> Known | None:
    arr = None if k is None else as_array(k)
    if arr is None:
        return None
    return _from_array(np.transpose(arr, perm))


def where(cond: Known | None, x: Known | None, y: Known | None, facts: Facts, shape: Any = None) -> Known | None:
    """Where on contents: the chosen element, or where the condition is unknown, the element both
    branches hold (two integers the run proves equal). ``shape`` is the output's: a condition
    whose contents are all unknown gives contents only where it does not broadcast the branches."""
    if cond is None:
        if x is None or y is None or x.shape != y.shape or tuple(shape or ()) != x.shape or shape is None:
            return None
        elems = tuple(_both_hold(facts, a, b) for a, b in zip(x.elems, y.elems))
        return Known(x.shape, elems) if any(e is not None for e in elems) else None
    return elementwise(functools.partial(_pick, facts), cond, x, y)


# Functions of the module, not nested in ``where``: compiled with mypyc, a nested function that
# another one calls is kept in their shared environment, which then refers to itself through it,
# a cycle holding ``facts`` and with it the whole run until a full collection of the heap.
def _both_hold(facts: Facts, a: Elem, b: Elem) -> Elem:
    if (_is_sym(a) or type(a) is int) and (_is_sym(b) or type(b) is int) and facts.equal(a, b) is True:
        return a
    return None


def _pick(facts: Facts, c: Elem, a: Elem, b: Elem) -> Elem:
    return _both_hold(facts, a, b) if c is None or _is_sym(c) else a if c else b


def fill(shape: Sequence[int], value: Elem) -> Known | None:
    n = math.prod(shape)
    if n > MAX_KNOWN_ELEMENTS:
        return None
    return Known(tuple(shape), (value,) * n)


def expand(k: Known | None, shape: Sequence[int]) -> Known | None:
    if k is None:
        return None
    try:
        out = np.broadcast_shapes(k.shape, tuple(shape))
    except ValueError:
        return None
    arr = as_array(k)
    if math.prod(out) > MAX_KNOWN_ELEMENTS or arr is None or not fits_numpy(out):
        return None
    return _from_array(np.broadcast_to(arr, out).copy())


def reduce(k: Known | None, op: Op, axes: Sequence[int] | None, keepdims: bool) -> Known | None:
    """Reduce contents with a binary ``op`` over ``axes`` (all when ``None``), folding in Python
    (see ``elementwise``)."""
    arr = None if k is None else as_array(k)
    if arr is None:
        return None
    axes_t = tuple(range(arr.ndim)) if axes is None else tuple(axes)
    if any(arr.shape[a] == 0 for a in axes_t):
        return None
    kept = [a for a in range(arr.ndim) if a not in axes_t]
    moved = np.transpose(arr, kept + list(axes_t))
    rows = moved.reshape(math.prod(arr.shape[a] for a in kept), math.prod(arr.shape[a] for a in axes_t))
    folded = [functools.reduce(op, row.tolist()) for row in rows]
    out_shape = (
        [1 if a in axes_t else arr.shape[a] for a in range(arr.ndim)] if keepdims else [arr.shape[a] for a in kept]
    )
    return Known(tuple(out_shape), tuple(folded))
