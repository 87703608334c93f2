"""The type lattice (Clause 6): tensor, sparse tensor, sequence, map, optional, opaque, unknown.

Types are immutable and hashable. ``UNKNOWN`` is the top of the lattice: a value about which
nothing is known, not even its kind. A tensor type with ``shape=None`` has unknown rank
(Clause 6.5.1); ``elem=None`` means its element type is unknown.

``join`` is the least upper bound (what both branches of an ``If`` can be); ``refine`` combines a
declared type with an inferred one and reports every clash instead of raising.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from onnx import TensorProto, TensorShapeProto, TypeProto
from onnx.helper import tensor_dtype_to_np_dtype

from infer.core import dims as D
from infer.core.dims import Dim

Shape = tuple[Dim, ...]


class Type:
    """Base of the lattice."""

    __slots__ = ()

    def __str__(self) -> str:  # pragma: no cover - overridden
        return "?"


@dataclass(frozen=True, slots=True)
class UnknownType(Type):
    """Top: nothing is known."""

    def __str__(self) -> str:
        return "unknown"


UNKNOWN = UnknownType()


@dataclass(frozen=True, slots=True)
class TensorType(Type):
    elem: int | None
    shape: Shape | None = None
    # Hashing a shape of symbolic extents is not free, and the engine's memo hashes the same
    # shared types at every node of a repeated layer: computed once.
    _hash: int | None = field(default=None, init=False, repr=False, compare=False)

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            h = hash((self.elem, self.shape))
            object.__setattr__(self, "_hash", h)
        return h

    @property
    def rank(self) -> int | None:
        return None if self.shape is None else len(self.shape)

    def __str__(self) -> str:
        return f"{elem_name(self.elem)}{shape_str(self.shape)}"


@dataclass(frozen=True, slots=True)
class SparseTensorType(Type):
    elem: int | None
    shape: Shape | None = None

    @property
    def rank(self) -> int | None:
        return None if self.shape is None else len(self.shape)

    def __str__(self) -> str:
        return f"sparse {elem_name(self.elem)}{shape_str(self.shape)}"


@dataclass(frozen=True, slots=True)
class SequenceType(Type):
    elem: Type = UNKNOWN

    def __str__(self) -> str:
        return f"seq({self.elem})"


@dataclass(frozen=True, slots=True)
class MapType(Type):
    key: int | None
    value: Type = UNKNOWN

    def __str__(self) -> str:
        return f"map({elem_name(self.key)}, {self.value})"


@dataclass(frozen=True, slots=True)
class OptionalType(Type):
    elem: Type = UNKNOWN

    def __str__(self) -> str:
        return f"optional({self.elem})"


@dataclass(frozen=True, slots=True)
class OpaqueType(Type):
    domain: str
    name: str

    def __str__(self) -> str:
        return f"opaque({self.domain}.{self.name})" if self.domain else f"opaque({self.name})"


def tensor(elem: int | None, shape: Iterable[Dim] | None = None) -> TensorType:
    """Build a tensor type; ints in ``shape`` stay ints, bools become ints."""
    return TensorType(elem, None if shape is None else tuple(D.normalize(d) for d in shape))


_ELEM_NAMES: dict[int, str] = {v: k.lower() for k, v in TensorProto.DataType.items()}
_ELEM_BY_NAME = {k.lower(): v for k, v in TensorProto.DataType.items() if v}


def elem_name(elem: int | None) -> str:
    if elem is None:
        return "?"
    return _ELEM_NAMES.get(elem, f"type{elem}")


# Bits one element takes where the type packs elements (raw_data holds them packed); every other
# numeric type takes its numpy width (Clause 13: external data is raw_data in a file).
_PACKED_NAMES = {"UINT4": 4, "INT4": 4, "FLOAT4E2M1": 4, "UINT2": 2, "INT2": 2, "FLOAT6E2M3": 6, "FLOAT6E3M2": 6}
_PACKED_BITS = {getattr(TensorProto, n): b for n, b in _PACKED_NAMES.items() if hasattr(TensorProto, n)}


def elem_bits(elem: int | None) -> int | None:
    """Bits one element of ``elem`` takes stored raw; ``None`` for strings and unknown types."""
    if elem in _PACKED_BITS:
        return _PACKED_BITS[elem]
    if elem is None or elem in (TensorProto.UNDEFINED, TensorProto.STRING):
        return None
    try:
        return 8 * tensor_dtype_to_np_dtype(elem).itemsize
    except (KeyError, ValueError, TypeError):
        return None


def elem_from_name(name: str) -> int | None:
    """``"float"`` -> ``TensorProto.FLOAT``; ``None`` for an unknown name."""
    return _ELEM_BY_NAME.get(name.lower())


def shape_str(shape: Shape | None) -> str:
    if shape is None:
        return "[*]"
    return "[" + ",".join(D.to_str(d) for d in shape) + "]"


def is_tensor(t: Type) -> bool:
    return isinstance(t, TensorType)


# ---------------------------------------------------------------------------------------------
# join and refine

# (axis, a, b) -> the extent two differing dims join to, outside any sequence element.
DimJoin = Callable[[int, Dim, Dim], Dim]


def _no_dim(axis: int, a: Dim, b: Dim) -> Dim:
    return None


def join(a: Type, b: Type, dim_join: DimJoin = _no_dim, in_seq: bool = False) -> Type:
    """Least upper bound: what both types allow (the one join of the lattice; control flow joins
    branches and iterations with it, sequences their elements).

    Differing element types give an unknown one, different ranks an unknown rank, differing dims
    ``dim_join(axis, a, b)`` (default: unknown), save inside a sequence element, where a
    variable would claim one extent for every element: there they are unknown.
    """
    if a == b:
        return a
    if in_seq:
        dim_join = _no_dim
    if (isinstance(a, TensorType) and isinstance(b, TensorType)) or (
        isinstance(a, SparseTensorType) and isinstance(b, SparseTensorType)
    ):
        elem = a.elem if a.elem == b.elem else None
        shape = None
        if a.shape is not None and b.shape is not None and len(a.shape) == len(b.shape):
            shape = tuple(
                x if D.equal(x, y) is True else dim_join(axis, x, y)
                for axis, (x, y) in enumerate(zip(a.shape, b.shape))
            )
        return type(a)(elem, shape)
    if isinstance(a, SequenceType) and isinstance(b, SequenceType):
        return SequenceType(join(a.elem, b.elem, in_seq=True))
    if isinstance(a, OptionalType) and isinstance(b, OptionalType):
        return OptionalType(join(a.elem, b.elem, dim_join, in_seq))
    if isinstance(a, MapType) and isinstance(b, MapType):
        return MapType(a.key if a.key == b.key else None, join(a.value, b.value, in_seq=True))
    return UNKNOWN


@dataclass(frozen=True, slots=True)
class Clash:
    """One place where a declared type and an inferred type disagree."""

    what: str  # "kind", "element type", "rank", "dim"
    declared: str
    inferred: str
    axis: int | None = None

    def __str__(self) -> str:
        where = f" at axis {self.axis}" if self.axis is not None else ""
        return f"{self.what}{where}: declared {self.declared}, inferred {self.inferred}"


# (axis, declared dim, inferred dim, None where the inferred rank is unknown) -> kept dim; lets the
# engine record facts such as N == 3.
DimRefine = Callable[[int, Dim, Dim], Dim]


def _refine_dim_default(axis: int, declared: Dim, inferred: Dim) -> Dim:
    return inferred if inferred is not None else declared


def _refine_elem(declared: int | None, inferred: int | None, clashes: list[Clash]) -> int | None:
    if declared is not None and inferred is not None and declared != inferred:
        clashes.append(Clash("element type", elem_name(declared), elem_name(inferred)))
        return inferred
    return inferred if inferred is not None else declared


def zero_against_symbol(d: Dim, i: Dim) -> bool:
    """An extent 0 against a symbolic one: no contradiction. Inference takes variables to be
    positive, but an extent of 0 is permitted (Clause 6.5.1) and a variable may denote it, so a
    model declaring ``M`` for an empty tensor is valid."""
    return (d == 0 and D.is_symbolic(i)) or (i == 0 and D.is_symbolic(d))


def refine_shape(
    declared: Shape | None,
    inferred: Shape | None,
    clashes: list[Clash],
    refine_dim: DimRefine = _refine_dim_default,
) -> Shape | None:
    if declared is None:
        return inferred
    if inferred is None:  # every declared extent is taken, as ``refine_dim`` decides
        return tuple(None if d is None else refine_dim(axis, d, None) for axis, d in enumerate(declared))
    if len(declared) != len(inferred):
        clashes.append(Clash("rank", str(len(declared)), str(len(inferred))))
        return inferred
    out: list[Dim] = []
    for axis, (d, i) in enumerate(zip(declared, inferred)):
        if d is not None and i is not None and D.equal(d, i) is False and not zero_against_symbol(d, i):
            clashes.append(Clash("dim", D.to_str(d), D.to_str(i), axis))
            out.append(i)
        elif d is None or i is None:
            out.append(i if d is None else d)
        else:
            out.append(refine_dim(axis, d, i))
    return tuple(out)


def refine(declared: Type, inferred: Type, refine_dim: DimRefine = _refine_dim_default) -> tuple[Type, list[Clash]]:
    """Combine what the model declares with what inference derived (Clause 9.4).

    Returns the combined type and the clashes; on a clash the inferred part is kept, since it is
    what the operators compute, and the clash is for validation to report.
    """
    clashes: list[Clash] = []
    if isinstance(declared, UnknownType):
        return inferred, clashes
    if isinstance(inferred, UnknownType):
        return declared, clashes
    if isinstance(declared, TensorType) and isinstance(inferred, TensorType):
        elem = _refine_elem(declared.elem, inferred.elem, clashes)
        return TensorType(elem, refine_shape(declared.shape, inferred.shape, clashes, refine_dim)), clashes
    if isinstance(declared, SparseTensorType) and isinstance(inferred, SparseTensorType):
        elem = _refine_elem(declared.elem, inferred.elem, clashes)
        shape = refine_shape(declared.shape, inferred.shape, clashes, refine_dim)
        return SparseTensorType(elem, shape), clashes
    if isinstance(declared, SequenceType) and isinstance(inferred, SequenceType):
        item, inner = refine(declared.elem, inferred.elem, refine_dim)
        return SequenceType(item), inner
    if isinstance(declared, OptionalType) and isinstance(inferred, OptionalType):
        item, inner = refine(declared.elem, inferred.elem, refine_dim)
        return OptionalType(item), inner
    if isinstance(declared, MapType) and isinstance(inferred, MapType):
        key = _refine_elem(declared.key, inferred.key, clashes)
        value, inner = refine(declared.value, inferred.value, refine_dim)
        return MapType(key, value), clashes + inner
    if isinstance(declared, OpaqueType) and isinstance(inferred, OpaqueType) and declared == inferred:
        return inferred, clashes
    clashes.append(Clash("kind", type(declared).__name__, type(inferred).__name__))
    return inferred, clashes


# ---------------------------------------------------------------------------------------------
# TypeProto conversion

DimReader = Callable[[TypeProto.Tensor | TypeProto.SparseTensor, int], Dim]


def _read_shape(t: TypeProto.Tensor | TypeProto.SparseTensor, read_dim: DimReader) -> Shape | None:
    if not t.HasField("shape"):
        return None
    return tuple(read_dim(t, i) for i in range(len(t.shape.dim)))


def from_proto(tp: TypeProto, read_dim: DimReader) -> Type:
    """Convert a ``TypeProto``; ``read_dim(tensor_type, axis)`` maps each dim (see DimTable)."""
    kind = tp.WhichOneof("value")
    if kind == "tensor_type":
        t = tp.tensor_type
        return TensorType(t.elem_type or None, _read_shape(t, read_dim))
    if kind == "sparse_tensor_type":
        t = tp.sparse_tensor_type
        return SparseTensorType(t.elem_type or None, _read_shape(t, read_dim))
    if kind == "sequence_type":
        inner = tp.sequence_type
        return SequenceType(from_proto(inner.elem_type, read_dim) if inner.HasField("elem_type") else UNKNOWN)
    if kind == "optional_type":
        inner = tp.optional_type
        return OptionalType(from_proto(inner.elem_type, read_dim) if inner.HasField("elem_type") else UNKNOWN)
    if kind == "map_type":
        m = tp.map_type
        value = from_proto(m.value_type, read_dim) if m.HasField("value_type") else UNKNOWN
        return MapType(m.key_type or None, value)
    if kind == "opaque_type":
        return OpaqueType(tp.opaque_type.domain, tp.opaque_type.name)
    return UNKNOWN


DimWriter = Callable[[Dim], "int | str | None"]


def _write_shape(shape_proto: TensorShapeProto, shape: Shape, write_dim: DimWriter) -> None:
    shape_proto.Clear()
    for d in shape:
        out = shape_proto.dim.add()
        w = write_dim(d)
        if isinstance(w, int):
            out.dim_value = w
        elif isinstance(w, str):
            out.dim_param = w


def to_proto(t: Type, write_dim: DimWriter, out: TypeProto | None = None) -> TypeProto | None:
    """Write ``t`` into ``out`` (or a new ``TypeProto``); ``None`` for ``UNKNOWN``.

    ``write_dim`` returns an int (``dim_value``), a string (``dim_param``) or ``None`` (no value).
    """
    if isinstance(t, UnknownType):
        return None
    tp = out if out is not None else TypeProto()
    tp.Clear()
    if isinstance(t, TensorType):
        tt = tp.tensor_type
        tt.SetInParent()
        tt.elem_type = t.elem or 0
        if t.shape is not None:
            _write_shape(tt.shape, t.shape, write_dim)
    elif isinstance(t, SparseTensorType):
        st = tp.sparse_tensor_type
        st.SetInParent()
        st.elem_type = t.elem or 0
        if t.shape is not None:
            _write_shape(st.shape, t.shape, write_dim)
    elif isinstance(t, SequenceType):
        seq = tp.sequence_type
        seq.SetInParent()
        if to_proto(t.elem, write_dim, seq.elem_type) is None:
            seq.ClearField("elem_type")
    elif isinstance(t, OptionalType):
        opt = tp.optional_type
        opt.SetInParent()
        if to_proto(t.elem, write_dim, opt.elem_type) is None:
            opt.ClearField("elem_type")
    elif isinstance(t, MapType):
        m = tp.map_type
        m.SetInParent()
        m.key_type = t.key or 0
        if to_proto(t.value, write_dim, m.value_type) is None:
            m.ClearField("value_type")
    elif isinstance(t, OpaqueType):
        tp.opaque_type.domain = t.domain
        tp.opaque_type.name = t.name
    return tp


def dims_of(t: Type) -> Iterable[Dim]:
    """Every dim a type mentions, nested types included."""
    if isinstance(t, (TensorType, SparseTensorType)):
        if t.shape is not None:
            yield from t.shape
    elif isinstance(t, (SequenceType, OptionalType)):
        yield from dims_of(t.elem)
    elif isinstance(t, MapType):
        yield from dims_of(t.value)
