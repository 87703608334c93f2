"""Rule results reused across nodes, walks and calls that present the same question.

Repeated layers present the same operator with the same input types, contents and attributes,
and a model inferred again after an edit presents most of its nodes unchanged: their rules run
(and their checks pass) once. A node's key is everything its checks and its rule read of the
node: its bytes without its names (``NodeView.memo_base``), the opset, its input values, the
positions of ``-0.0`` elements in float contents (equal to ``0.0``, yet they divide differently),
and the run's options a rule's result depends on (whether contents propagate, the expression and
rank bounds, the model's IR version).

A result is kept with what it rests on beyond its key (``DimScope``'s counters of the questions
the rule asked of the run):

- nothing: a function of the key alone, valid in any walk of any later call;
- what the run has learned (a bound, an exact form): valid where the run knows the same
  (``DimScope.facts_key``) as when the rule began (it would run as it did, and make again the
  requirements its reuse makes) or as when it ended;
- the run's table (whether a variable is fresh, where one was made): valid in that walk only.

What is never kept, and why:

- a run that reported, made or declared a variable, or walked a subgraph (its context records
  each, ``RuleContext.acted``), or that failed or refused an extent (it gives a reason): a reuse
  would skip that. What a run required or assumed is kept with its result and redone at the
  node that reuses it (``RuleContext.replay``), so each node's requirements stay its own;
- a rule registered ``pure=False``, whose result rests on more than its node and inputs (what
  the walk recorded where a variable was made);
- a node without a key: one with subgraphs or attribute references (whose values live in the
  calling function), and the first node of an implicit default domain (warned about once).

The store is shared by every run of the process and bounded (two generations of
``GENERATION`` entries: a full young one becomes the old one, and the old one goes); a run made
while ``infer.walk.reuse`` is disabled keeps a store of its own.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from onnx import TensorProto

from infer.core import types as T
from infer.core.values import Value
from infer.load.nodeview import NodeView

GENERATION = 1 << 14  # entries of each of the store's two generations

_FLOAT_ELEMS = frozenset({
    TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.BFLOAT16,
    TensorProto.COMPLEX64, TensorProto.COMPLEX128,
    *(getattr(TensorProto, n) for n in ("FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ",
                                        "FLOAT4E2M1", "FLOAT8E8M0") if hasattr(TensorProto, n)),
})  # fmt: skip

# What a kept result rests on beyond its key: nothing (``None``), ``(FACTS, (the scope's
# facts_key as the rule began, as it ended))`` or ``(WALK, the scope's serial number)``.
FACTS, WALK = "facts", "walk"


class Store:
    """Kept results by key, in two generations (a hit in the old one moves it to the young)."""

    def __init__(self, generation: int = GENERATION):
        self.generation = generation
        self.young: dict[tuple, tuple] = {}
        self.old: dict[tuple, tuple] = {}
        self._lock = threading.Lock()

    def get(self, key: tuple) -> tuple | None:
        entry = self.young.get(key)
        if entry is None:
            entry = self.old.get(key)
            if entry is not None:
                self.put(key, entry)
        return entry

    def put(self, key: tuple, entry: tuple) -> None:
        with self._lock:
            if len(self.young) >= self.generation:
                self.old, self.young = self.young, {}
            self.young[key] = entry

    def __len__(self) -> int:
        return len(self.young) + len(self.old)

    def clear(self) -> None:
        with self._lock:
            self.young, self.old = {}, {}


SHARED = Store()


class Memo:
    """The results one run reuses and keeps (in ``SHARED``, or in a store of its own)."""

    def __init__(self, options: tuple, store: Store | None = None):
        """``options``: what of the run's options a result depends on (see the module docstring)."""
        self.options = options
        self.store = SHARED if store is None else store

    def key(self, view: NodeView, opset: int | None, inputs: Sequence[Value | None]) -> tuple | None:
        """The key of a node with these inputs, or ``None`` when its result must not be reused."""
        base = view.memo_base
        if base is None or opset is None:
            return None
        signs: tuple = ()  # (input position, its -0.0 positions) where there are any
        for i, v in enumerate(inputs):
            if v is None:
                continue
            t = v.type
            if (
                type(t) is T.TensorType
                and (known := v.known) is not None
                and t.elem in _FLOAT_ELEMS
                and (zeros := known.negative_zeros())
            ):
                signs += ((i, zeros),)
        return (base, opset, tuple(inputs), signs, self.options)

    def get(self, key: tuple, scope: Any) -> tuple[list[Any], tuple[Value, ...] | None, tuple] | None:
        """The kept result of ``key`` that holds in ``scope`` (a ``DimScope``), if any."""
        entry = self.store.get(key)
        if entry is None:
            return None
        prepared, plain, rests_on, replay = entry
        if rests_on is not None:
            kind, what = rests_on
            if kind == WALK:
                if what != scope.serial:
                    return None
            elif scope.facts_key not in what:  # as the rule began, or as it left them
                return None
        return prepared, plain, replay

    def offer(
        self,
        key: tuple,
        prepared: list[Any],
        plain: tuple[Value, ...] | None,
        rests_on: tuple | None,
        replay: tuple = (),
    ) -> None:
        """Keep a clean, pure run's outputs with what they rest on beyond their key and the
        requirements it made (``replay``, redone where the result is reused)."""
        self.store.put(key, (prepared, plain, rests_on, replay))
