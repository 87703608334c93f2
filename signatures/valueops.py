"""Computing on known contents: the partial values that carry shapes (DESIGN.md, values).

Elements are ints, floats, bools, strings, sympy integer expressions (a dim read by ``Shape``)
or ``None`` (that element unknown). Arithmetic on dims goes through ``infer.dims`` so symbolic
extents stay exact; anything that cannot be computed exactly yields ``None``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from infer import dims as D
from infer.values import MAX_KNOWN_ELEMENTS, Elem, Known

Op = Callable[..., Elem]


def _is_sym(x: Any) -> bool:
    return x is not None and not isinstance(x, (bool, int, float, str))


def _num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def lift(int_op: Callable[[Any, Any], Any], num_op: Callable[[Any, Any], Any]) -> Op:
    """A binary op on elements: dims arithmetic when symbolic, plain arithmetic otherwise."""

    def op(a: Elem, b: Elem) -> Elem:
        if a is None or b is None:
            return None
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


def _sym_div(a: Any, b: Any, lower_bound: Callable[[Any], int | None] = D.lower_bound) -> Any:
    """Integer ``Div`` truncates toward zero; on non-negative extents that is floor division."""
    if isinstance(b, int) and b < 0:
        return D.neg(_sym_div(a, -b, lower_bound))
    if isinstance(a, int) and a < 0:
        return D.neg(_sym_div(-a, b, lower_bound))
    lb = a if isinstance(a, int) else lower_bound(a)
    return D.floordiv(a, b) if lb is not None and lb >= 0 else None


def div_with(lower_bound: Callable[[Any], int | None]) -> Op:
    """``Div`` on elements, deciding signs with ``lower_bound`` (e.g. a model's DimTable)."""
    return lift(lambda a, b: _sym_div(a, b, lower_bound), _trunc_div)


def _fmod_int(a: Any, b: Any) -> Any:
    if b == 0:
        return None
    return a % b


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


ADD = lift(D.add, lambda a, b: a + b)
SUB = lift(D.sub, lambda a, b: a - b)
MUL = lift(D.mul, lambda a, b: a * b)
DIV = lift(_sym_div, _trunc_div)
MOD = lift(D.mod, lambda a, b: _fmod_int(a, b) if isinstance(a, int) and isinstance(b, int) else math.fmod(a, b))
MAX = lift(D.dmax, max)
MIN = lift(D.dmin, min)
EQUAL = _cmp(D.equal, lambda a, b: a == b)
LESS = _cmp(D.less, lambda a, b: a < b)
GREATER = _cmp(lambda a, b: D.less(b, a), lambda a, b: a > b)
LESS_EQUAL = _cmp(lambda a, b: _not(D.less(b, a)), lambda a, b: a <= b)
GREATER_EQUAL = _cmp(lambda a, b: _not(D.less(a, b)), lambda a, b: a >= b)


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
    if a is None:
        return None
    return D.neg(a) if _is_sym(a) else -a


def absolute(a: Elem) -> Elem:
    if a is None:
        return None
    if _is_sym(a):
        return a if D.lower_bound(a) is not None and D.lower_bound(a) >= 0 else None  # type: ignore[operator]
    return abs(a)


def logical_not(a: Elem) -> Elem:
    if a is None or _is_sym(a):
        return None
    return not a


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
    """Apply ``op`` element by element with multidirectional broadcasting (Clause 6.6)."""
    if any(k is None for k in knowns):
        return None
    try:
        shape = np.broadcast_shapes(*(k.shape for k in knowns))  # type: ignore[union-attr]
    except ValueError:
        return None
    if math.prod(shape) > MAX_KNOWN_ELEMENTS or not fits_numpy(shape):
        return None
    arrays = [as_array(k) for k in knowns]  # type: ignore[arg-type]
    if any(a is None for a in arrays):
        return None
    return _from_array(np.frompyfunc(op, len(arrays), 1)(*arrays))


def unary(op: Callable[[Elem], Elem], k: Known | None) -> Known | None:
    if k is None:
        return None
    return Known(k.shape, tuple(op(e) for e in k.elems))


def reshape(k: Known | None, shape: Sequence[int]) -> Known | None:
    if k is None or math.prod(shape) != k.size:
        return None
    return Known(tuple(shape), k.elems)


def cast(k: Known | None, to_float: bool, to_int: bool, to_bool: bool) -> Known | None:
    """Contents after ``Cast``; symbolic integers survive a detour through floats."""
    if k is None:
        return None

    def conv(e: Elem) -> Elem:
        if e is None:
            return None
        if _is_sym(e):
            return None if to_bool else e
        if isinstance(e, str):
            if to_float or to_int:
                try:
                    f = float(e)
                except ValueError:
                    return None
                return int(f) if to_int else f
            return None
        if to_bool:
            return bool(e)
        if to_int:
            if isinstance(e, float) and not math.isfinite(e):
                return None
            return int(e)
        if to_float:
            return float(e)
        return None

    return Known(k.shape, tuple(conv(e) for e in k.elems))


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
    if any(k is None for k in ks) or not ks:
        return None
    arrays = [as_array(k) for k in ks]  # type: ignore[arg-type]
    if any(a is None for a in arrays):
        return None
    try:
        return _from_array(np.concatenate(arrays, axis=axis))
    except ValueError:
        return None


def slice_known(k: Known | None, starts: Sequence[int], ends: Sequence[int], axes: Sequence[int],
                steps: Sequence[int]) -> Known | None:  # fmt: skip
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


def where(cond: Known | None, x: Known | None, y: Known | None) -> Known | None:
    def pick(c: Elem, a: Elem, b: Elem) -> Elem:
        if c is None or _is_sym(c):
            return None
        return a if c else b

    return elementwise(pick, cond, x, y)


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
    """Reduce contents with a binary ``op`` over ``axes`` (all when ``None``)."""
    arr = None if k is None else as_array(k)
    if arr is None:
        return None
    axes_t = tuple(range(arr.ndim)) if axes is None else tuple(axes)
    if any(arr.shape[a] == 0 for a in axes_t):
        return None
    ufunc = np.frompyfunc(op, 2, 1)
    out = arr
    for a in sorted(axes_t, reverse=True):
        out = ufunc.reduce(out, axis=a, keepdims=True)
    if not keepdims:
        out = out.reshape([s for i, s in enumerate(out.shape) if i not in axes_t])
    return _from_array(out)
