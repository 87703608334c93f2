"""Writing inferred types back into a model as ``value_info`` (subgraphs included).

Two styles for symbolic dims (DESIGN.md), written by infer/core/dimwriter.py: ``expressions`` writes
``seq + 5`` as the ``dim_param``, what compilers read; ``strict`` writes only identifier names
(Clause 6.5.2 SHOULD) and leaves each name's definition in the dimension table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from onnx import ModelProto

from infer.core import types as T
from infer.core.dims.budget import tick
from infer.core.dimwriter import DimWriter, TypeWriter
from infer.core.scopes import MAIN, resolve_graph
from infer.load.wire import varint

if TYPE_CHECKING:  # pragma: no cover
    from infer.walk.engine import Engine

STYLES = ("expressions", "strict")  # the dims styles of annotate (infer/core/dimwriter.py)


# Wire-format tags (onnx.proto): GraphProto.value_info is field 13, ValueInfoProto.name field 1
# and ValueInfoProto.type field 2, all length-delimited.
_GRAPH_VALUE_INFO, _VI_NAME, _VI_TYPE = b"\x6a", b"\x0a", b"\x12"


_SHORT_VARINTS = [varint(n) for n in range(1 << 14)]  # the lengths of names and of most types


def type_field(type_bytes: bytes) -> bytes:
    """The ``type`` field of a ``ValueInfoProto`` holding the serialized type ``type_bytes``: made
    once per distinct type, shared by every entry of that type (``value_info_entry``)."""
    n = len(type_bytes)
    return _VI_TYPE + (_SHORT_VARINTS[n] if n < len(_SHORT_VARINTS) else varint(n)) + type_bytes


def value_info_entry(name: str, field: bytes) -> bytes:
    """A ``value_info`` entry (``name`` of the type ``field``, a ``type_field``) as a GraphProto
    fragment: merged into a graph, it is appended to its ``value_info``."""
    short = _SHORT_VARINTS
    limit = len(short)
    raw = name.encode("utf-8")
    n = len(raw)
    head = _VI_NAME + (short[n] if n < limit else varint(n))
    size = len(head) + n + len(field)
    return b"".join((_GRAPH_VALUE_INFO, short[size] if size < limit else varint(size), head, raw, field))


def _value_infos(typed: list[tuple[str, T.Type]], write_type: TypeWriter) -> bytes:
    """``value_info`` entries serialized as a GraphProto fragment, to merge in one C call.

    Building ten thousand ``ValueInfoProto`` messages field by field from Python costs more than
    inference of a repeated layer; their bytes are a concatenation of cached pieces.
    """
    fields: dict[T.Type, bytes] = {}  # a type's whole field, tag and length included
    parts = []
    for name, t in typed:
        tick()  # the writer obeys the run's clock (``InferenceResult.model``)
        field = fields.get(t)
        if field is None:
            field = fields[t] = type_field(write_type.serialized(t))
        parts.append(value_info_entry(name, field))
    return b"".join(parts)


def write_annotations(model: ModelProto, engine: Engine, style: str = "expressions") -> None:
    """Write every typed value of every graph the engine walked into ``model`` in place."""
    if style not in STYLES:
        raise ValueError(f"dims style must be one of {STYLES}, not {style!r}")
    write_type = TypeWriter(DimWriter(engine.state.table, style))
    for path, record in engine.state.records.items():
        if record.kind != "graph":
            continue
        g = resolve_graph(model, path)
        if g is None:
            continue
        outputs = {o.name: o for o in g.output}
        if path != MAIN:
            # Subgraph inputs may omit their types (Clause 7.1); fill them in.
            for inp in g.input:
                v = record.values.get(inp.name)
                if v is not None and not isinstance(v.type, T.UnknownType):
                    write_type.write(v.type, inp.type)
        for name, o in outputs.items():
            tick()
            v = record.values.get(name)
            if v is not None and not isinstance(v.type, T.UnknownType):
                write_type.write(v.type, o.type)
        # ``producers`` has each name once; a graph output is typed in place above.
        typed = [
            (name, v.type)
            for name in record.producers
            if name not in outputs and not isinstance((v := record.values[name]).type, T.UnknownType)
        ]
        typed_names = {name for name, _ in typed}
        if any(vi.name in typed_names for vi in g.value_info):
            kept = [vi for vi in g.value_info if vi.name not in typed_names]
            del g.value_info[:]
            g.value_info.extend(kept)
        g.MergeFromString(_value_infos(typed, write_type))  # appended to g.value_info, in order
