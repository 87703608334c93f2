"""Rule results reused across nodes that present the same question.

Repeated layers present the same operator with the same input types, contents and attributes,
so their rules run (and their checks pass) once. A node's key is everything its checks and its
rule read: the node's bytes without its names (``NodeView.memo_base``), the opset, its input
values, the epoch of the dimension table's minimums (which sharpen lower bounds), and the
positions of ``-0.0`` elements in float contents (equal to ``0.0``, yet they divide
differently).

What is never reused, and why:

- a run that reported, learned a fact, made a variable, walked a subgraph or refused an extent
  (the walker compares its side-effect counters around the rule): a reuse would skip that;
- a node whose inputs include sequences, optionals or maps: their rules consult where the
  variables in them were made, which the key does not hold;
- a node without a key: one with subgraphs or attribute references (whose values live in the
  calling function), and the first node of an implicit default domain (warned about once).

A key is stored the second time it is computed: most keys seen once are never seen again (a
model's unique nodes), and storing them costs memory. A bitset of key hashes, sized to the
model, records the first time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from onnx import TensorProto

from . import types as T
from .nodeview import NodeView
from .values import Value

# At most 2^20 bits (128 KB): about 8 bits a node, so few keys of a model share one.
_MAX_SEEN_BITS = 1 << 20

_FLOAT_ELEMS = frozenset({
    TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.BFLOAT16,
    TensorProto.COMPLEX64, TensorProto.COMPLEX128,
    *(getattr(TensorProto, n) for n in ("FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ",
                                        "FLOAT4E2M1", "FLOAT8E8M0") if hasattr(TensorProto, n)),
})  # fmt: skip


class Memo:
    """The reusable results of one walk (they name that walk's variables)."""

    def __init__(self, expanded_nodes: int):
        self._bits = min(_MAX_SEEN_BITS, 1 << max(12, (8 * expanded_nodes).bit_length()))
        self.reset()

    def reset(self) -> None:
        # key -> (the placed outputs, the plain values when placing them adds nothing)
        self._store: dict[tuple, tuple[list[Any], tuple[Value, ...] | None]] = {}
        self._seen = bytearray(self._bits // 8)

    def key(self, view: NodeView, opset: int | None, inputs: Sequence[Value | None], epoch: int) -> tuple | None:
        """The key of a node with these inputs, or ``None`` when its result must not be reused."""
        base = view.memo_base
        if base is None or opset is None:
            return None
        signs: tuple = ()  # (input position, its -0.0 positions) where there are any
        for i, v in enumerate(inputs):
            if v is None:
                continue
            t = v.type
            if type(t) is not T.TensorType:
                if not isinstance(t, T.UnknownType):
                    return None  # sequences, optionals, maps: see the module docstring
            elif (known := v.known) is not None and t.elem in _FLOAT_ELEMS and (zeros := known.negative_zeros()):
                signs += ((i, zeros),)
        return (base, opset, tuple(inputs), epoch, signs)

    def get(self, key: tuple) -> tuple[list[Any], tuple[Value, ...] | None] | None:
        return self._store.get(key)

    def offer(self, key: tuple, prepared: list[Any], plain: tuple[Value, ...] | None) -> None:
        """Keep a clean, pure run's outputs, from the second time its key is offered on (or that
        of another key with the same hash bits: stored early, harmless)."""
        h = hash(key) & (self._bits - 1)
        byte, bit = h >> 3, 1 << (h & 7)
        if self._seen[byte] & bit:
            self._store[key] = (prepared, plain)
        else:
            self._seen[byte] |= bit
