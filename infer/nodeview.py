"""A node's fields, read from protobuf once.

Every access to a protobuf field builds a new Python object, and the limits scan, the ordering
check, the walk and the memo all read a node's names and attributes: a large model pays for
each read tens of thousands of times. A ``NodeView`` reads them once and is shared by all.

The main graph's views can also be decoded from the model serialized without its weights (which
the UTF-8 check makes anyway): protobuf splits it into the bytes of each node, and a node's
bytes are decoded here faster than protobuf hands out its fields, with its attributes already
serialized, as the memo keys on them.
"""

from __future__ import annotations

import functools
from array import array
from collections.abc import Sequence
from typing import Any

import numpy as np
from onnx import AttributeProto, NodeProto

SUBGRAPH_TYPES = (AttributeProto.GRAPH, AttributeProto.GRAPHS)
_SUBGRAPH_SET = frozenset(SUBGRAPH_TYPES)
_ATTRIBUTE_TYPES = frozenset(AttributeProto.AttributeType.values())


def has_subgraph(node: NodeProto) -> bool:
    """Does ``node`` carry a graph attribute (If, Loop, Scan, ...)?"""
    return any(a.type in SUBGRAPH_TYPES for a in node.attribute)


class NodeView:
    """The fields of one ``NodeProto`` that inference reads, as plain Python values.

    The ``NodeProto`` itself is fetched from its graph only when asked for (``node``): a view
    that holds one keeps a protobuf wrapper alive per node, and a repeated layer's nodes are
    mostly inferred from the memo without it.
    """

    __slots__ = ("attr_types", "domain", "has_ref", "has_subgraph", "index", "inputs", "memo_base", "op_type",
                 "outputs", "source")  # fmt: skip

    def __init__(
        self,
        source: Sequence[NodeProto],
        index: int,
        inputs: Sequence[str],
        outputs: Sequence[str],
        op_type: str,
        domain: str,
        overload: str,
        attr_types: tuple[int, ...],
        has_ref: bool,
        attrs: tuple[bytes, ...],
        shared: dict[Any, Any],
    ):
        """``shared``: values already made by the views of this read (names, attribute types,
        memo keys); an equal one is replaced by it, so that it is held once however often used
        (a name an earlier node produced is read again as its consumers' input)."""
        self.source = source
        self.index = index
        self.inputs: tuple[str, ...] = tuple([shared.get(i, i) for i in inputs])
        outs: tuple[str, ...] = tuple(outputs)
        self.outputs = outs
        for o in outs:
            shared.setdefault(o, o)
        self.op_type: str = shared.setdefault(op_type, op_type)
        # ``signatures.schema.canonical_domain``'s rule (importing it here would be circular:
        # the limits scan reads views, and the schema module imports the limits through dims).
        self.domain: str = "" if domain == "ai.onnx" else domain
        self.attr_types: tuple[int, ...] = shared.setdefault(attr_types, attr_types) if attr_types else ()
        self.has_subgraph: bool = bool(attr_types) and not _SUBGRAPH_SET.isdisjoint(attr_types)
        self.has_ref = has_ref
        # What the engine's memo of rule results keys on besides the opset and the inputs (see
        # ``Engine._inputs_and_key``); ``None``: never memoized (subgraphs, attribute references).
        if self.has_subgraph or has_ref:
            self.memo_base: tuple | None = None
        else:
            presence = _ALL_PRESENT[1] if len(outs) == 1 and outs[0] else _presence(outs)  # the usual case first
            base = (self.domain, self.op_type, overload, presence, attrs)
            self.memo_base = shared.setdefault(base, base)

    @property
    def node(self) -> NodeProto:
        return self.source[self.index]


_ALL_PRESENT = [(True,) * n for n in range(8)]


def _presence(outputs: tuple[str, ...]) -> tuple[bool, ...]:
    """Which outputs are given; the usual all-given pattern is one shared tuple."""
    if len(outputs) < 8 and all(outputs):
        return _ALL_PRESENT[len(outputs)]
    return tuple(bool(o) for o in outputs)


class Views(list):
    """A graph's node views, in order, and the nodes whose name an earlier node has
    (``renamed``: their indexes; Clause 5.4.1 makes node names unique within a graph)."""

    __slots__ = ("renamed",)

    def __init__(self, views: list[NodeView], renamed: tuple[int, ...] = ()):
        super().__init__(views)
        self.renamed = renamed


class _NameHashes:
    """Hashes of node names, a machine word each, from which repeated names are found without
    holding every name (a large graph has tens of thousands)."""

    def __init__(self) -> None:
        self.hashes = array("q")

    def add(self, name: str | bytes) -> None:
        if name:
            self.hashes.append(hash(name))

    def repeated(self, nodes: Sequence[NodeProto]) -> tuple[int, ...]:
        """Indexes of the nodes whose name an earlier node has. Only when two hashes are equal
        are the names read again, and compared: a collision of hashes is never a repeat."""
        h = np.frombuffer(self.hashes, dtype=np.int64)
        if len(h) < 2 or len(np.unique(h)) == len(h):
            return ()
        seen: set[str] = set()
        out = []
        for index, node in enumerate(nodes):
            name = node.name
            if name and name in seen:
                out.append(index)
            seen.add(name)
        return tuple(out)


def read_nodes(nodes: Sequence[NodeProto]) -> Views:
    """Views of ``nodes`` (a repeated ``NodeProto`` field or a list of them), in order."""
    shared: dict[Any, Any] = {}
    out = []
    names = _NameHashes()
    for index, node in enumerate(nodes):
        names.add(node.name)
        attrs = tuple(node.attribute)
        out.append(NodeView(
            nodes, index, node.input, node.output, node.op_type, node.domain, node.overload,
            tuple(a.type for a in attrs), any(a.ref_attr_name for a in attrs),
            tuple(a.SerializeToString() for a in attrs), shared,
        ))  # fmt: skip
    return Views(out, names.repeated(nodes))


def light_nodes(weightless: bytes) -> list[bytes | None] | None:
    """The main graph's nodes of ``weightless`` (a model serialized without its main graph's
    initializers), each as its serialized bytes, for ``read_light_nodes``; ``None`` if protobuf
    cannot split them."""
    light = _light_model_class()
    if light is None:
        return None
    try:
        return list(light.FromString(weightless).graph.node)
    except Exception:  # protobuf read it as a model a moment ago; should this fail, read the model
        return None


# NodeProto's fields (onnx.proto) as their one-byte tags: all are length-delimited.
_INPUT, _OUTPUT, _NAME, _OP_TYPE, _ATTRIBUTE, _DOMAIN, _OVERLOAD = 0x0A, 0x12, 0x1A, 0x22, 0x2A, 0x3A, 0x42


def read_light_nodes(nodes: Sequence[NodeProto], serialized: list[bytes | None]) -> Views | None:
    """Views of the main graph's ``nodes``, decoded from their serialized bytes (see
    ``light_nodes``), which are dropped from ``serialized`` as they are read (so that the bytes
    and the views are not all held at once); ``None`` when those are not the same nodes or hold
    what this decoder leaves to protobuf (a field of another wire type, a field number past 15).

    Decoding the bytes of a node here costs less than reading its fields through protobuf, which
    builds a Python object for every repeated field it hands out.
    """
    if len(serialized) != len(nodes):
        return None
    shared: dict[Any, Any] = {}
    kinds: dict[bytes, tuple[int, bool] | None] = {}  # serialized attribute -> (type, has a reference)
    out = []
    names = _NameHashes()
    add_hash = names.hashes.append  # per named node: no method call
    try:
        for index in range(len(serialized)):
            b = serialized[index]
            if b is None:
                return None  # read before
            serialized[index] = None
            ins: list[str] = []
            outs: list[str] = []
            attrs: list[bytes] = []
            op_type = domain = overload = ""
            i, n = 0, len(b)
            while i < n:
                tag = b[i]
                if tag & 7 != 2 or tag > 0x7F:
                    return None
                length = b[i + 1]
                i += 2
                if length > 0x7F:  # a varint of more bytes
                    length &= 0x7F
                    shift = 7
                    while True:
                        c = b[i]
                        i += 1
                        length |= (c & 0x7F) << shift
                        if c < 0x80:
                            break
                        shift += 7
                end = i + length
                if end > n:
                    return None
                if tag == _INPUT:
                    ins.append(b[i:end].decode())
                elif tag == _OUTPUT:
                    outs.append(b[i:end].decode())
                elif tag == _OP_TYPE:
                    op_type = b[i:end].decode()
                elif tag == _ATTRIBUTE:
                    attrs.append(b[i:end])
                elif tag == _DOMAIN:
                    domain = b[i:end].decode()
                elif tag == _OVERLOAD:
                    overload = b[i:end].decode()
                elif tag == _NAME and end > i:
                    add_hash(hash(b[i:end]))
                i = end
            types: tuple[int, ...] = ()
            has_ref = False
            if attrs:
                found = []
                for a in attrs:
                    kind = kinds.get(a)
                    if kind is None:
                        kind = kinds[a] = _attribute_kind(a)
                        if kind is None:
                            return None
                    found.append(kind[0])
                    has_ref = has_ref or kind[1]
                types = tuple(found)
            out.append(NodeView(nodes, index, ins, outs, op_type, domain, overload, types, has_ref, tuple(attrs),
                                shared))  # fmt: skip
    except (IndexError, UnicodeDecodeError):  # not what protobuf wrote: let protobuf read them
        return None
    return Views(out, names.repeated(nodes))


# -- the light message ------------------------------------------------------------------------

# AttributeProto field numbers (onnx.proto): ``type`` is a varint, ``ref_attr_name`` a string.
_ATTR_TYPE, _ATTR_REF = 20, 21


def _attribute_kind(data: bytes) -> tuple[int, bool] | None:
    """(``type``, has a non-empty ``ref_attr_name``) of one serialized ``AttributeProto``, read
    from its top-level fields as protobuf reads them; ``None`` for what it would not parse."""
    kind, ref, i, n = 0, False, 0, len(data)
    try:
        while i < n:
            tag, i = _varint(data, i)
            field, wire = tag >> 3, tag & 7
            if wire == 0:
                value, i = _varint(data, i)
                if field == _ATTR_TYPE and value in _ATTRIBUTE_TYPES:  # an unknown enum value is
                    kind = value  # kept aside by protobuf, and ``type`` reads as UNDEFINED
            elif wire == 2:
                length, i = _varint(data, i)
                if field == _ATTR_REF:
                    ref = length > 0
                i += length
            elif wire == 5:
                i += 4
            elif wire == 1:
                i += 8
            else:
                return None
    except IndexError:
        return None
    return (kind, ref) if i == n else None


def _varint(data: bytes, i: int) -> tuple[int, int]:
    result, shift = 0, 0
    while True:
        b = data[i]
        i += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, i
        shift += 7


@functools.cache
def _light_model_class() -> Any:
    """A message class reading only the main graph's nodes of a serialized ``ModelProto``, each
    as its serialized bytes; ``None`` if protobuf cannot build it."""
    try:
        from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

        F = descriptor_pb2.FieldDescriptorProto
        fdp = descriptor_pb2.FileDescriptorProto(name="onnx_infer_light.proto", package="onnx_infer_light")
        fdp.syntax = "proto2"

        def message(name: str, fields: list[tuple[str, int, int, int, str]]) -> None:
            m = fdp.message_type.add(name=name)
            for fname, number, kind, label, type_name in fields:
                f = m.field.add(name=fname, number=number, type=kind, label=label)
                if type_name:
                    f.type_name = type_name

        # GraphProto's nodes (field 1) as the bytes of each; the rest of the model is left unread.
        message("Graph", [("node", 1, F.TYPE_BYTES, F.LABEL_REPEATED, "")])
        message("Model", [("graph", 7, F.TYPE_MESSAGE, F.LABEL_OPTIONAL, ".onnx_infer_light.Graph")])
        pool = descriptor_pool.DescriptorPool()
        pool.Add(fdp)
        return message_factory.GetMessageClass(pool.FindMessageTypeByName("onnx_infer_light.Model"))
    except Exception:  # an unusual protobuf: the nodes are read from the model instead
        return None
