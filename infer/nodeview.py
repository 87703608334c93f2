"""A node's fields, read from protobuf once.

Every access to a protobuf field builds a new Python object, and the limits scan, the ordering
check, the walk and the memo all read a node's names and attributes: a large model pays for
each read tens of thousands of times. A ``NodeView`` reads them once and is shared by all.
"""

from __future__ import annotations

from collections.abc import Sequence

from onnx import AttributeProto, NodeProto

SUBGRAPH_TYPES = (AttributeProto.GRAPH, AttributeProto.GRAPHS)


def has_subgraph(node: NodeProto) -> bool:
    """Does ``node`` carry a graph attribute (If, Loop, Scan, ...)?"""
    return any(a.type in SUBGRAPH_TYPES for a in node.attribute)


class NodeView:
    """The fields of one ``NodeProto`` that inference reads, as plain Python values."""

    __slots__ = ("attr_types", "domain", "has_ref", "has_subgraph", "inputs", "memo_base", "node", "op_type", "outputs")

    def __init__(self, node: NodeProto, names: dict[str, str] | None = None):
        """``names``: strings already read (a graph's value names, operator types); equal ones
        read again are replaced by them, so that a name is held once however often it is used."""
        self.node = node
        if names is None:
            names = {}
        outputs = tuple(node.output)
        self.inputs: tuple[str, ...] = tuple([names.get(i, i) for i in node.input])
        for o in outputs:
            names.setdefault(o, o)
        self.outputs: tuple[str, ...] = outputs
        op_type = node.op_type
        self.op_type: str = names.setdefault(op_type, op_type)
        domain = node.domain
        # ``signatures.schema.canonical_domain``'s rule (importing it here would be circular:
        # the limits scan reads views, and the schema module imports the limits through dims).
        self.domain: str = "" if domain == "ai.onnx" else domain
        attrs = tuple(node.attribute)
        self.attr_types: tuple[int, ...] = tuple(a.type for a in attrs) if attrs else ()
        self.has_subgraph = any(t in SUBGRAPH_TYPES for t in self.attr_types)
        self.has_ref = any(a.ref_attr_name for a in attrs)
        # What the engine's memo of rule results keys on besides the opset and the inputs (see
        # ``Engine._memo_key``); ``None``: never memoized (subgraphs, attribute references).
        self.memo_base: tuple | None = (
            None
            if self.has_subgraph or self.has_ref
            else (self.domain, self.op_type, _presence(outputs),
                  tuple(a.SerializeToString() for a in attrs) if attrs else ())
        )  # fmt: skip


_ALL_PRESENT = [(True,) * n for n in range(8)]


def _presence(outputs: tuple[str, ...]) -> tuple[bool, ...]:
    """Which outputs are given; the usual all-given pattern is one shared tuple."""
    if len(outputs) < 8 and all(outputs):
        return _ALL_PRESENT[len(outputs)]
    return tuple(bool(o) for o in outputs)


def read_nodes(nodes: Sequence[NodeProto]) -> list[NodeView]:
    """Views of ``nodes`` (a repeated ``NodeProto`` field or a list of them), in order."""
    names: dict[str, str] = {}
    return [NodeView(n, names) for n in nodes]
