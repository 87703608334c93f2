"""What flows along an edge: a type, and where known, the contents of a small tensor.

Shapes are computed in models (``Shape -> Gather -> Concat -> Reshape``), so small integer
tensors are tracked element by element as dims: ``Known((4,), (batch, seq, 12, 64))``. Constant
floats and bools are tracked too (Resize scales, Where conditions). Only tensors up to
``MAX_KNOWN_ELEMENTS`` elements are tracked (Clause 15.4: bounded memory), and floating-point
initializers and constants only up to ``MAX_KNOWN_FLOAT_ELEMENTS`` (larger ones are weights).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from math import copysign
from typing import Any, NamedTuple

import numpy as np
from onnx import TensorProto, numpy_helper

from infer.core import dims as D
from infer.core.dims.budget import MAX_INT_MAGNITUDE
from infer.core.limits import MAX_KNOWN_ELEMENTS, MAX_KNOWN_FLOAT_ELEMENTS
from infer.core.types import UNKNOWN, DimJoin, OptionalType, SequenceType, TensorType, Type, join, tensor

Elem = Any  # int | float | bool | str | dims.Expr (a symbolic integer) | SymFloat

# The values each integer element type holds (Clause 6.2): the same for every tensor of that type.
INT_RANGE: dict[int, tuple[int, int]] = {
    TensorProto.INT8: (-(1 << 7), (1 << 7) - 1), TensorProto.INT16: (-(1 << 15), (1 << 15) - 1),
    TensorProto.INT32: (-(1 << 31), (1 << 31) - 1), TensorProto.INT64: (-(1 << 63), (1 << 63) - 1),
    TensorProto.UINT8: (0, (1 << 8) - 1), TensorProto.UINT16: (0, (1 << 16) - 1),
    TensorProto.UINT32: (0, (1 << 32) - 1), TensorProto.UINT64: (0, (1 << 64) - 1),
}  # fmt: skip
MAX_STRING = 1 << 16  # characters of a tracked string element
# A bound on integer elements that keeps arithmetic on them cheap (Clause 15.4). It is far past
# every element type's range, so an element computed past its type's range is still seen as such
# (``without_overflow``) and reported before it is made unknown.
_INT_MIN, _INT_MAX = -MAX_INT_MAGNITUDE, MAX_INT_MAGNITUDE


# Bits of precision of the float element types: the integers each holds exactly run to 2^bits.
FLOAT_BITS: dict[int, int] = {
    TensorProto.FLOAT: 24, TensorProto.DOUBLE: 53, TensorProto.FLOAT16: 11, TensorProto.BFLOAT16: 8,
}  # fmt: skip
_NP_OF_BITS: dict[int, type[np.floating[Any]]] = {24: np.float32, 53: np.float64, 11: np.float16}
# Magnitudes from which rounding to the type gives infinity (its largest finite value plus half
# an ulp): checked first, so that no conversion overflows and no numpy error state is entered
# (entering one replaces context objects, which frees ones a program may have frozen).
_OVERFLOW_AT = {24: 3.4028235677973366e38, 11: 65520.0}


def round_float(x: float, bits: int) -> float | None:
    """``x`` rounded to nearest (ties to even) with ``bits`` of precision: float32, float16 or
    double; ``None`` for another width (numpy has no such type)."""
    t = _NP_OF_BITS.get(bits)
    if t is None:
        return None
    limit = _OVERFLOW_AT.get(bits)
    if limit is not None and abs(x) >= limit and x == x:
        return math.copysign(math.inf, x)
    return float(t(x))


@dataclass(frozen=True, slots=True)
class SymFloat:
    """A floating-point element that depends on dimension variables (``Cast(H) / 32.0``).

    Its value is exactly ``num / den`` when ``rounded`` is 0; otherwise that quotient rounded once,
    to nearest with ties to even, to ``rounded`` bits of precision (what one IEEE operation on
    exact operands gives). ``num`` is an integer dim (an ``int`` or a symbolic extent over
    dimension variables), ``den`` a positive ``int``, the fraction in lowest terms. Contents of an
    integer tensor are never a ``SymFloat``, and contents of a float tensor are never a bare symbolic
    expression: the domain of every element is its tensor's (``in_domain``).
    """

    num: Any
    den: int = 1
    rounded: int = 0

    def evaluate(self, bindings: Any) -> float | None:
        """The element's value at ``bindings`` (a mapping of variable names to ints), if all bound."""
        n = D.evaluate(self.num, bindings)
        if not isinstance(n, int):
            return None
        q = Fraction(n, self.den)
        return float(q) if not self.rounded else round_float(float(q), self.rounded)

    def __str__(self) -> str:
        num = D.to_str(self.num)
        text = num if self.den == 1 else (f"({num})" if " " in num else num) + f"/{self.den}"
        return f"~({text})" if self.rounded else text


def _bounded(e: Elem) -> Elem:
    if type(e) is int and not _INT_MIN <= e <= _INT_MAX:
        return None
    if type(e) is str and len(e) > MAX_STRING:
        return None
    return e


@dataclass(frozen=True, slots=True)
class Known:
    """Contents of a tensor: its shape and its elements, flat in row-major order."""

    shape: tuple[int, ...]
    elems: tuple[Elem, ...]
    # The memo of rule results hashes inputs' contents at every node; a tuple does not keep its hash.
    _hash: int | None = field(default=None, init=False, compare=False, repr=False)
    _negative_zeros: tuple[int, ...] | None = field(default=None, init=False, compare=False, repr=False)

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            h = hash((self.shape, self.elems))
            object.__setattr__(self, "_hash", h)
        return h

    def negative_zeros(self) -> tuple[int, ...]:
        """Positions of the elements that are ``-0.0``: equal to ``0.0``, yet they divide
        differently, so contents that compare equal differ when these do."""
        z = self._negative_zeros
        if z is None:
            z = tuple(i for i, e in enumerate(self.elems) if type(e) is float and e == 0.0 and copysign(1.0, e) < 0)
            object.__setattr__(self, "_negative_zeros", z)
        return z

    def __post_init__(self) -> None:
        # Clause 15.4: an element past the bounds is unknown. A chain of ``Mul`` nodes squares an
        # integer at every node (3^(2^40) after 40), and no model needs a string of more than
        # MAX_STRING characters to compute a shape.
        for e in self.elems:
            if (type(e) is int and not _INT_MIN <= e <= _INT_MAX) or (type(e) is str and len(e) > MAX_STRING):
                object.__setattr__(self, "elems", tuple(_bounded(x) for x in self.elems))
                return

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return len(self.elems)

    def scalar(self) -> Elem:
        """The single element of a tensor of size 1, else ``None``."""
        return self.elems[0] if len(self.elems) == 1 else None

    def dims(self) -> list[D.Dim] | None:
        """The elements as dims (ints or integer expressions); ``None`` if any is not one."""
        out: list[D.Dim] = []
        for e in self.elems:
            if isinstance(e, bool):
                out.append(int(e))
            elif isinstance(e, int):
                out.append(e)
            elif isinstance(e, float):
                if not e.is_integer():
                    return None
                out.append(int(e))
            elif e is None:
                out.append(None)
            elif D.is_symbolic(e):
                out.append(e)
            else:
                return None
        return out

    def ints(self) -> list[int] | None:
        """The elements as plain ints, when every one is an integer."""
        ds = self.dims()
        if ds is None or not all(isinstance(d, int) for d in ds):
            return None
        return ds  # type: ignore[return-value]

    def is_fully_known(self) -> bool:
        return all(e is not None for e in self.elems)


def known_vector(elems: Sequence[Elem]) -> Known:
    return Known((len(elems),), tuple(elems))


def known_scalar(elem: Elem) -> Known:
    return Known((), (elem,))


class Span(NamedTuple):
    """Bounds of a tensor's integer elements (inclusive; an extent or ``None``). ``tight``: both
    are reached whenever the tensor has elements (a Range's first and last), so what they
    require holds at every input value; else some values may stay inside them (a running sum of
    a mask reaches its bound only where the mask is all ones)."""

    lo: D.Dim
    hi: D.Dim
    tight: bool = False


@dataclass(frozen=True, slots=True)
class Value:
    """A value's type and, where tracked, its contents."""

    type: Type = UNKNOWN
    known: Known | None = None
    # Where contents are not tracked, bounds every integer element lies within (inclusive, each
    # an extent or ``None``): a Range's indices, which a Gather must find within its axis
    # (what ``infer.check.domain`` reads); ``None`` where nothing is known.
    span: Span | None = None
    _hash: int | None = field(default=None, init=False, compare=False, repr=False)  # see Known

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            h = hash((self.type, self.known, self.span))
            object.__setattr__(self, "_hash", h)
        return h

    def __str__(self) -> str:
        if self.known is None or self.known.size > 16:
            return str(self.type)
        elems = ", ".join(
            "?" if e is None else D.to_str(e) if not isinstance(e, str) else repr(e) for e in self.known.elems
        )
        return f"{self.type} = [{elems}]"


def _py(x: Any) -> Elem:
    if isinstance(x, (np.bool_, bool)):
        return bool(x)
    if isinstance(x, (np.integer, int)):
        return int(x)
    if isinstance(x, (np.floating, float)):
        return float(x)
    if isinstance(x, bytes):
        return x.decode("utf-8", errors="replace")
    return x


_TRACKED = {
    TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.BFLOAT16,
    TensorProto.INT8, TensorProto.INT16, TensorProto.INT32, TensorProto.INT64,
    TensorProto.UINT8, TensorProto.UINT16, TensorProto.UINT32, TensorProto.UINT64,
    TensorProto.BOOL, TensorProto.STRING,
}  # fmt: skip


_FLOATS = {TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.BFLOAT16}


def known_from_array(arr: np.ndarray) -> Known | None:
    if arr.size > MAX_KNOWN_ELEMENTS:
        return None
    flat = arr.reshape(-1).tolist()  # numpy's own conversion to Python bool, int and float
    shape = tuple(int(s) for s in arr.shape)
    if arr.dtype.kind in "biuf":
        # Elements of a numeric array are within the int64/uint64 ranges ``Known`` enforces:
        # the per-element check is skipped (weights of a few thousand elements are common).
        known = Known.__new__(Known)  # (not object's: a class compiled with mypyc makes its own)
        object.__setattr__(known, "shape", shape)
        object.__setattr__(known, "elems", tuple(flat))
        object.__setattr__(known, "_hash", None)
        object.__setattr__(known, "_negative_zeros", None)
        return known
    return Known(shape, tuple(_py(x) for x in flat))


# TensorProto's fields of elements other than raw_data: protobuf gives their lengths at once.
_DATA_FIELDS = ("float_data", "int32_data", "string_data", "int64_data", "double_data", "uint64_data")


def tensor_element_count(t: TensorProto) -> int:
    n = 1
    for d in t.dims:
        n *= d
    return n


def value_from_tensor(t: TensorProto, read_contents: bool = True) -> Value:
    """Type and (for small tensors stored in the model) contents of an initializer or attribute.

    External data is never read here (Clause 13): such a tensor gets its type only (the engine
    reads the few it may, see ``infer.load.external``). A negative extent is unknown.
    """
    typ: TensorType = tensor(t.data_type or None, tuple(int(d) if d >= 0 else None for d in t.dims))
    if (
        not read_contents
        or t.data_type not in _TRACKED
        or t.data_location == TensorProto.EXTERNAL
        or any(d < 0 for d in t.dims)
        or tensor_element_count(t) > (MAX_KNOWN_FLOAT_ELEMENTS if t.data_type in _FLOATS else MAX_KNOWN_ELEMENTS)
    ):
        return Value(typ)
    count = tensor_element_count(t)
    if any(len(getattr(t, f)) > 2 * count for f in _DATA_FIELDS):
        # More elements stored than the dims hold (complex ones take two): malformed, and not
        # worth reading element by element to find out.
        return Value(typ)
    try:
        arr = numpy_helper.to_array(t)
    except Exception:  # malformed contents: the type still stands, the contents are unknown
        return Value(typ)
    if arr.size != count:
        return Value(typ)
    return Value(typ, known_from_array(arr))


def without_overflow(v: Value) -> tuple[Value, int | None]:
    """``v`` with each integer element its element type cannot hold made unknown, and the first
    such element (``None`` if there is none).

    Arithmetic on known contents is exact; a runtime computing in the element type wraps instead
    (``INT64_MAX + 1`` is ``INT64_MIN`` in onnxruntime), and the operator definitions do not say
    which, so the element is unknown.
    """
    t, known = v.type, v.known
    if known is None or not isinstance(t, TensorType) or t.elem not in INT_RANGE:
        return v, None
    lo, hi = INT_RANGE[t.elem]
    first = next((e for e in known.elems if type(e) is int and not lo <= e <= hi), None)
    if first is None:
        return v, None
    elems = tuple(None if type(e) is int and not lo <= e <= hi else e for e in known.elems)
    return Value(t, Known(known.shape, elems)), first


def _in_domain(e: Elem, kind: str) -> bool:
    if e is None:
        return True
    t = type(e)
    if kind == "float":
        return t is float or t is SymFloat
    if kind == "int":
        return t is int or (t is not SymFloat and t not in (float, bool, str))  # dims.Expr: integer dims
    if kind == "bool":
        return t is bool
    return t is str


def _kind(elem: int | None) -> str | None:
    if elem in FLOAT_BITS or elem in _FLOAT_ONLY:
        return "float"
    if elem in INT_RANGE:
        return "int"
    if elem == TensorProto.BOOL:
        return "bool"
    if elem == TensorProto.STRING:
        return "str"
    return None


_FLOAT_ONLY = {
    TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT8E4M3FNUZ, TensorProto.FLOAT8E5M2, TensorProto.FLOAT8E5M2FNUZ,
}  # fmt: skip


def in_domain(v: Value) -> Value:
    """``v`` with every element its element type cannot hold made unknown.

    Rules compute element by element; this is the engine's guard that no element crosses a
    domain unnoticed: a symbolic integer in a float tensor would claim exact integer arithmetic
    where the runtime rounds (``Cast(H) / 2.0`` is not ``floor(H/2)``).
    """
    t, known = v.type, v.known
    if known is None or not isinstance(t, TensorType):
        return v
    kind = _kind(t.elem)
    if kind is None or all(_in_domain(e, kind) for e in known.elems):
        return v
    if kind == "float":
        # An integer in a float tensor is its float while exactly representable.
        limit = 1 << FLOAT_BITS.get(t.elem, 0)  # type: ignore[arg-type]
        elems = tuple(
            e if _in_domain(e, kind) else float(e) if type(e) is int and -limit <= e <= limit else None
            for e in known.elems
        )
    else:
        elems = tuple(e if _in_domain(e, kind) else None for e in known.elems)
    return Value(t, Known(known.shape, elems))


def is_container(t: Type) -> bool:
    return isinstance(t, (SequenceType, OptionalType))


def items(v: Value | None) -> tuple[Value, ...] | None:
    """The elements of a sequence (or optional) whose contents are tracked, else ``None``."""
    if v is None or v.known is None or not is_container(v.type):
        return None
    return v.known.elems


def is_empty(v: Value) -> bool:
    it = items(v)
    return it is not None and len(it) == 0


def join_values(a: Value, b: Value, dim_join: DimJoin | None = None, in_seq: bool = False) -> Value:
    """Least upper bound of two values: types joined (``types.join``), contents kept where both
    agree."""
    if isinstance(a.type, SequenceType) and isinstance(b.type, SequenceType):
        # An empty sequence has no element to describe: the other side's element type stands.
        if is_empty(a) and not is_empty(b):
            return Value(b.type)
        if is_empty(b) and not is_empty(a):
            return Value(a.type)
    t = join(a.type, b.type, dim_join, in_seq) if dim_join is not None else join(a.type, b.type, in_seq=in_seq)
    return Value(t, _join_known(a, b))


def _join_known(a: Value, b: Value) -> Known | None:
    ka, kb = a.known, b.known
    if ka is None or kb is None or ka.shape != kb.shape:
        return None
    if ka == kb:
        return ka
    if is_container(a.type) and is_container(b.type):
        # Same length: element by element (each element is one tensor: differing dims unknown).
        return Known(ka.shape, tuple(join_values(x, y) for x, y in zip(ka.elems, kb.elems)))
    if is_container(a.type) or is_container(b.type):
        return None
    elems = tuple(x if _same_elem(x, y) else None for x, y in zip(ka.elems, kb.elems))
    return Known(ka.shape, elems) if any(e is not None for e in elems) else None


def _same_elem(x: object, y: object) -> bool:
    if x is None or y is None:
        return False
    if isinstance(x, (bool, float, str, SymFloat)) or isinstance(y, (bool, float, str, SymFloat)):
        return type(x) is type(y) and x == y
    return D.equal(x, y) is True  # type: ignore[arg-type]


def type_only(v: Value | None) -> Type:
    return UNKNOWN if v is None else v.type
