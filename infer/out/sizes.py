"""The bytes of values and weights as terms over dimension variables (a part of
``infer.out.cost``): an ``Amount`` (a term, or unknown with why), element sizes, a tensor type's
bytes, an initializer's (external data by the length its metadata states, never read), and how
sizes are written and read (``human``, ``parse_size``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from onnx import AttributeProto, GraphProto, ModelProto, NodeProto, TensorProto

from infer.core import dims as D
from infer.core import types as T
from infer.core.dims import Dim

ELEM_BITS = {
    TensorProto.FLOAT: 32,
    TensorProto.UINT8: 8,
    TensorProto.INT8: 8,
    TensorProto.UINT16: 16,
    TensorProto.INT16: 16,
    TensorProto.INT32: 32,
    TensorProto.INT64: 64,
    TensorProto.BOOL: 8,
    TensorProto.FLOAT16: 16,
    TensorProto.DOUBLE: 64,
    TensorProto.UINT32: 32,
    TensorProto.UINT64: 64,
    TensorProto.COMPLEX64: 64,
    TensorProto.COMPLEX128: 128,
    TensorProto.BFLOAT16: 16,
    17: 8,
    18: 8,
    19: 8,
    20: 8,
    21: 4,
    22: 4,
    23: 4,
    24: 8,
    25: 2,
    26: 2,
    27: 6,
    28: 6,
}
UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")


@dataclass(frozen=True)
class Amount:
    """A quantity as a term over dimension variables, or unknown (``term is None``) with why."""

    term: Dim
    why: str = ""

    @property
    def known(self) -> bool:
        return self.term is not None

    def at(self, bindings: Mapping[str, int]) -> int | None:
        """The quantity at ``bindings``; ``None`` when unknown, a variable is unbound or the term
        is undefined there."""
        v = evaluated(self.term, bindings)
        return v if type(v) is int else None

    def __str__(self) -> str:
        return D.to_str(self.term) if self.term is not None else f"unknown ({self.why})"

    def to_json(self) -> dict[str, Any]:
        return {"term": None if self.term is None else D.to_str(self.term), "why": self.why or None}


def evaluated(term: Dim, bindings: Mapping[str, int]) -> Dim | str:
    """``term`` at ``bindings`` (``D.evaluate``), or why it has no value there: a floor or mod by
    0, or a float conversion past the largest float, at a binding no valid run has."""
    try:
        return D.evaluate(term, bindings)
    except (ZeroDivisionError, OverflowError) as e:
        return f"undefined at this binding ({e})"


class Valuation:
    """Terms' values at one binding, each distinct term evaluated once: the values of a model
    share few terms (every activation of a layer, every node of a repeated block)."""

    def __init__(self, bindings: Mapping[str, int]):
        self.bindings = dict(bindings)
        self._memo: dict[Dim, Dim | str] = {}

    def raw(self, term: Dim) -> Dim | str:
        """``evaluated(term, self.bindings)``, kept."""
        v = self._memo.get(term)
        if v is None:
            v = self._memo[term] = evaluated(term, self.bindings)
        return v

    def __call__(self, term: Dim) -> int | None:
        """The value of ``term`` (an ``Amount.at``); ``None`` where it has none."""
        v = self.raw(term) if term is not None else None
        return v if type(v) is int else None


def human(n: int | None) -> str:
    """``n`` bytes as text: ``1.5 GiB``."""
    if n is None:
        return "?"
    x, unit = float(n), 0
    while abs(x) >= 1024 and unit < len(UNITS) - 1:
        x, unit = x / 1024, unit + 1
    return f"{n} B" if unit == 0 else f"{x:.4g} {UNITS[unit]}"


_SCALE = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40, "P": 1 << 50}


def parse_size(text: str) -> int:
    """A number of bytes written ``8589934592``, ``8G``, ``8GiB`` (binary) or ``8GB`` (decimal)."""
    t = text.strip()
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMGTP]?)(i?B?)", t, re.IGNORECASE)
    if m is None:
        raise ValueError(f"{text!r} is not a size (bytes, or a number with K, M, G, T; KiB or KB)")
    unit, tail = m.group(2).upper(), m.group(3).lower()
    scale = 1000 ** " KMGTP".index(unit) if unit and tail == "b" else _SCALE[unit]
    return int(Fraction(m.group(1)) * scale)


def exact_bytes(n: int | None) -> str:
    """``n`` bytes in full and as ``human`` writes them: ``8,589,934,592 B (8 GiB)``."""
    return "?" if n is None else f"{n:,} B ({human(n)})"


class ElementCounts:
    """Element counts of fully known shapes, memoized for one cost: the integer extents
    multiplied apart and the symbolic ones as a memoized prefix times the last, so the values of
    a layer (``[batch, seq, 64]``, ``[batch, seq, 4, 16]``) share one product of ``batch*seq``
    and each count is one multiplication by an integer. The same term as ``D.product``."""

    def __init__(self) -> None:
        self._prefix: dict[tuple[Dim, ...], Dim] = {(): 1}
        self._whole: dict[tuple[Dim, ...], Dim] = {}  # each shape asked for (a node's output, its bytes)

    def __call__(self, shape: Sequence[Dim]) -> Dim:
        key = tuple(shape)
        out = self._whole.get(key, 0)
        if out == 0:
            out = self._whole[key] = self._count(key)
        return out

    def _count(self, shape: tuple[Dim, ...]) -> Dim:
        if 0 in shape:  # 0 wins over unknown, as in ``D.product``
            return 0
        if None in shape:
            return None
        k, symbolic = 1, []
        for d in shape:
            if type(d) is int:
                k *= d
            else:
                symbolic.append(d)
        return D.mul(self._product(tuple(symbolic)), k)

    def _product(self, key: tuple[Dim, ...]) -> Dim:
        out = self._prefix.get(key, 0)
        if out == 0:
            out = self._prefix[key] = D.mul(self._product(key[:-1]), key[-1])
        return out


def tensor_bytes(t: T.Type, count: Callable[[Sequence[Dim]], Dim] = D.product) -> Amount:
    """The bytes of a value of type ``t``: element size times its extents (``count`` multiplies
    them: ``D.product`` or an ``ElementCounts``)."""
    if isinstance(t, T.SequenceType):
        return Amount(None, "a sequence: its length and items are not sized")
    if isinstance(t, T.MapType):
        return Amount(None, "a map: its entries are not sized")
    if isinstance(t, T.OptionalType):
        return Amount(None, "an optional: whether it holds a value is decided at run time")
    if not isinstance(t, T.TensorType):
        return Amount(None, f"a value of type {t} is not sized")
    if t.elem == TensorProto.STRING:
        return Amount(None, "a string tensor: its strings' lengths are not known")
    bits = ELEM_BITS.get(t.elem) if t.elem is not None else None
    if bits is None:
        return Amount(None, "its element type is unknown")
    if t.shape is None:
        return Amount(None, "its rank is unknown")
    if any(d is None for d in t.shape):
        return Amount(None, "an extent is unknown")
    n = count(t.shape)
    b = D.mul(n, bits // 8) if bits % 8 == 0 else D.ceildiv(D.mul(n, bits), 8)
    return Amount(b, "" if b is not None else "past the bound of extent arithmetic")


def initializer_bytes(t: TensorProto) -> Amount:
    """An initializer's bytes: its external data's ``length`` where stated (never read), else
    element size times its dims."""
    if t.data_location == TensorProto.EXTERNAL:
        for e in t.external_data:
            if e.key == "length" and e.value.isdigit():
                return Amount(int(e.value))
    bits = ELEM_BITS.get(t.data_type)
    if bits is None:
        return tensor_bytes(T.TensorType(t.data_type, tuple(int(d) for d in t.dims)))  # says why
    b = D.add(0, -(-math.prod(t.dims) * bits // 8))  # held to the bound of extent arithmetic
    return Amount(b, "" if b is not None else "past the bound of extent arithmetic")


def _graph_initializers(g: GraphProto, holders: Iterable[NodeProto] | None = None) -> Iterable[TensorProto]:
    """Every initializer of ``g`` and of the graphs nested in its nodes (in ``holders``, its nodes
    that hold graphs, where the caller knows them)."""
    yield from g.initializer
    for node in g.node if holders is None else holders:
        for a in node.attribute:
            if a.type == AttributeProto.GRAPH:
                yield from _graph_initializers(a.g)
            elif a.type == AttributeProto.GRAPHS:
                for sub in a.graphs:
                    yield from _graph_initializers(sub)


def weights_of(model: ModelProto, holders: Iterable[NodeProto] | None = None) -> tuple[Amount, int]:
    """The bytes of every initializer (subgraphs' too) and how many there are; ``holders``: the
    main graph's nodes that hold graphs, where known (else every node is looked at)."""
    total: Dim = 0
    n = 0
    for t in _graph_initializers(model.graph, holders):
        n += 1
        b = initializer_bytes(t)
        if b.term is None:
            return Amount(None, f"initializer `{t.name}`: {b.why}"), n
        total = D.add(total, b.term)
    return Amount(total), n
