"""A node's fields, read from protobuf once.

Every access to a protobuf field builds a new Python object, and the limits scan, the ordering
check, the walk and the memo all read a node's names and attributes: a large model pays for
each read tens of thousands of times. A ``NodeView`` reads them once and is shared by all.

The main graph's views can also be read from the model serialized without its weights (which
the UTF-8 check makes anyway): parsed as a light message whose attributes are plain ``bytes``,
a node's attributes come out already serialized, as the memo keys on them, instead of one
message object and one serialization per attribute.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from onnx import AttributeProto, NodeProto

SUBGRAPH_TYPES = (AttributeProto.GRAPH, AttributeProto.GRAPHS)
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
        self.has_subgraph: bool = bool(attr_types) and any(t in SUBGRAPH_TYPES for t in attr_types)
        self.has_ref = has_ref
        # What the engine's memo of rule results keys on besides the opset and the inputs (see
        # ``Engine._memo_key``); ``None``: never memoized (subgraphs, attribute references).
        if self.has_subgraph or has_ref:
            self.memo_base: tuple | None = None
        else:
            base = (self.domain, self.op_type, overload, _presence(outs), attrs)
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


def read_nodes(nodes: Sequence[NodeProto]) -> list[NodeView]:
    """Views of ``nodes`` (a repeated ``NodeProto`` field or a list of them), in order."""
    shared: dict[Any, Any] = {}
    out = []
    for index, node in enumerate(nodes):
        attrs = tuple(node.attribute)
        out.append(NodeView(
            nodes, index, node.input, node.output, node.op_type, node.domain, node.overload,
            tuple(a.type for a in attrs), any(a.ref_attr_name for a in attrs),
            tuple(a.SerializeToString() for a in attrs), shared,
        ))  # fmt: skip
    return out


def light_nodes(weightless: bytes) -> Sequence[Any] | None:
    """The main graph's nodes of ``weightless`` (a model serialized without its main graph's
    initializers), parsed as light messages for ``read_light_nodes``; ``None`` if protobuf cannot."""
    light = _light_model_class()
    if light is None:
        return None
    try:
        return light.FromString(weightless).graph.node
    except Exception:  # protobuf read it as a model a moment ago; should this fail, read the model
        return None


def read_light_nodes(nodes: Sequence[NodeProto], parsed: Sequence[Any]) -> list[NodeView] | None:
    """Views of the main graph's ``nodes``, read from their light copies ``parsed`` (see
    ``light_nodes``); ``None`` when those are not the same nodes."""
    if len(parsed) != len(nodes):
        return None
    shared: dict[Any, Any] = {}
    kinds: dict[bytes, tuple[int, bool] | None] = {}  # serialized attribute -> (type, has a reference)
    out = []
    for index, n in enumerate(parsed):
        attrs = tuple(n.attribute)
        types: tuple[int, ...] = ()
        has_ref = False
        if attrs:
            found = []
            for a in attrs:
                kind = kinds.get(a)
                if kind is None:
                    kind = kinds[a] = _attribute_kind(a)
                    if kind is None:
                        return None  # a field protobuf would read otherwise: let it read them all
                found.append(kind[0])
                has_ref = has_ref or kind[1]
            types = tuple(found)
        out.append(NodeView(nodes, index, n.input, n.output, n.op_type, n.domain, n.overload, types, has_ref,
                            attrs, shared))  # fmt: skip
    return out


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
    """A message class reading only the main graph's nodes of a serialized ``ModelProto``, with
    each attribute as its serialized bytes; ``None`` if protobuf cannot build it."""
    try:
        from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

        F = descriptor_pb2.FieldDescriptorProto
        fdp = descriptor_pb2.FileDescriptorProto(name="onnx_infer_light.proto", package="onnx_infer_light")
        fdp.syntax = "proto2"  # as onnx.proto: strings are not checked here (utf8 has done it)

        def message(name: str, fields: list[tuple[str, int, int, int, str]]) -> None:
            m = fdp.message_type.add(name=name)
            for fname, number, kind, label, type_name in fields:
                f = m.field.add(name=fname, number=number, type=kind, label=label)
                if type_name:
                    f.type_name = type_name

        rep, opt, string = F.LABEL_REPEATED, F.LABEL_OPTIONAL, F.TYPE_STRING
        # NodeProto's numbers; fields not named here (name, doc_string, ...) are skipped over.
        message("Node", [("input", 1, string, rep, ""), ("output", 2, string, rep, ""),
                         ("op_type", 4, string, opt, ""), ("attribute", 5, F.TYPE_BYTES, rep, ""),
                         ("domain", 7, string, opt, ""), ("overload", 8, string, opt, "")])  # fmt: skip
        message("Graph", [("node", 1, F.TYPE_MESSAGE, rep, ".onnx_infer_light.Node")])
        message("Model", [("graph", 7, F.TYPE_MESSAGE, opt, ".onnx_infer_light.Graph")])
        pool = descriptor_pool.DescriptorPool()
        pool.Add(fdp)
        return message_factory.GetMessageClass(pool.FindMessageTypeByName("onnx_infer_light.Model"))
    except Exception:  # an unusual protobuf: the nodes are read from the model instead
        return None
