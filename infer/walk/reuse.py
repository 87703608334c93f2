"""Results reused across calls: what a model's result depends on, as one key, and the results of
the last few models, for a caller that infers the same model again.

A compiler re-infers after every rewrite and an optimizer calls the drop-in again and again;
many of those calls see a model they have seen before. ``model_key`` digests everything
inference reads of a ``ModelProto``: the model without its main graph's initializers
(serialized: the bytes the loader's UTF-8 check is made on), each initializer's name, type,
dims and storage (its size, which fields hold its data, its external references), the contents of
those small enough to be read as constants, and the options of the run. Two calls with one key
give the same result, so the second is the first's.

``RECENT`` keeps the last few (``KEPT``) of those results, of models small enough that keeping
one alive costs little (``MAX_KEPT_BYTES``: a result holds its model's protobuf objects, weights
included). A run that consulted what can change between calls without changing the model (an
operator schema registered at run time, external data files) is not kept. ``infer_model(...,
previous=result)`` reuses ``result`` when the key is the same, whatever the model's size: the
caller holds it anyway.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from onnx import ModelProto, TensorProto

from infer.core.limits import MAX_KNOWN_ELEMENTS
from infer.core.scopes import resolve_graph
from infer.load.nodeview import DECODED
from infer.walk import memo

KEPT = 4  # results of this many distinct models and options are kept
MAX_KEPT_BYTES = 64 << 20  # ... each of a model of at most this many bytes in all

_TYPED_FIELDS = ("float_data", "int32_data", "string_data", "int64_data", "double_data", "uint64_data")


def _tensor_key(t: TensorProto) -> tuple[bytes, int]:
    """What inference reads of an initializer, and its size in bytes: all of a small one (its
    contents may be read as a constant), and of a large one what its checks read (dims, type,
    which fields hold how much data, external references), without touching its data.

    The size is protobuf's ``ByteSize``, measured once: with upb it serializes the tensor (as
    costly as ``SerializeToString``, without keeping the bytes).
    """
    count = 1
    for d in t.dims:
        count *= d
    if count <= MAX_KNOWN_ELEMENTS:
        data = t.SerializeToString()
        return b"s" + data, len(data)
    external = tuple((e.key, e.value) for e in t.external_data)
    size = t.ByteSize()
    key = repr(
        (
            t.name,
            t.data_type,
            tuple(t.dims),
            t.data_location,
            t.HasField("raw_data"),
            size,
            tuple(len(getattr(t, f)) for f in _TYPED_FIELDS),
            external,
        )
    )
    return b"l" + key.encode(), size


def model_key(model: ModelProto, weightless: bytes, options: tuple) -> tuple[bytes, int]:
    """``(key, bytes)``: the digest of what inference reads of ``model`` under ``options`` (a
    tuple describing the run's options, by its ``repr``), and the model's size in bytes (its
    weightless bytes and its initializers', without their framing)."""
    h = hashlib.blake2b(digest_size=32)
    size = len(weightless)

    def part(data: bytes) -> None:
        h.update(len(data).to_bytes(8, "little"))  # lengths first: no two sequences of parts collide
        h.update(data)

    part(repr(options).encode())
    part(weightless)
    graph = model.graph
    for t in graph.initializer:
        key, n = _tensor_key(t)
        part(key)
        size += n
    for st in graph.sparse_initializer:
        (values, n), (indices, m) = _tensor_key(st.values), _tensor_key(st.indices)
        part(repr(tuple(st.dims)).encode() + values + indices)
        size += n + m
    return h.digest(), size


class Recent:
    """The last ``KEPT`` values put, by key (least recently used dropped first); thread-safe."""

    def __init__(self, kept: int = KEPT):
        self.kept = kept
        self.enabled = True
        self._items: OrderedDict[Any, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Any) -> Any:
        if not self.enabled:
            return None
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: Any, value: Any) -> None:
        if not self.enabled:
            return
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.kept:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        return len(self._items)


RECENT = Recent()


def rebound(engine: Any, source: ModelProto) -> Any:
    """``engine``'s finished run (a call on a model of ``source``'s content) as a run of
    ``source``: what a result may change copied (``Engine.snapshot``), and its graphs' nodes and
    model those of ``source``, not of the earlier caller's model, which its caller may have
    changed since. (The nodes of a call of a model-local function are made per call site: a run
    of a model with functions is kept from a copy the caller does not hold.)"""
    out = engine.snapshot()
    if not len(source.functions):
        out.state.model = source
        for path, rec in out.state.records.items():
            graph = resolve_graph(source, path) if rec.kind == "graph" else None
            if graph is not None:
                rec.nodes = graph.node
    return out


def clear() -> None:
    """Forget everything kept across calls: whole models' results (``RECENT``), nodes' results
    (``memo``) and decoded nodes (``nodeview.DECODED``)."""
    RECENT.clear()
    memo.SHARED.clear()
    DECODED.clear()


@contextmanager
def disabled() -> Iterator[None]:
    """Nothing kept or reused across calls while the block runs (a benchmark of first calls):
    no model's result, no decoded node (``nodeview.DECODED``), and each run keeps its nodes'
    results to itself."""
    was = RECENT.enabled, DECODED.enabled
    RECENT.enabled = DECODED.enabled = False
    try:
        yield
    finally:
        RECENT.enabled, DECODED.enabled = was
