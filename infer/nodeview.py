"""A node's fields, read from protobuf once.

Every access to a protobuf field builds a new Python object, and the limits scan, the ordering
check, the walk and the memo all read a node's names and attributes: a large model pays for
each read tens of thousands of times. A ``NodeView`` reads them once and is shared by all.
"""

from __future__ import annotations

from onnx import AttributeProto, NodeProto

_SUBGRAPH_TYPES = (AttributeProto.GRAPH, AttributeProto.GRAPHS)


class NodeView:
    """The fields of one ``NodeProto`` that inference reads, as plain Python values."""

    __slots__ = ("attrs", "domain", "has_ref", "has_subgraph", "inputs", "node", "op_type", "outputs")

    def __init__(self, node: NodeProto):
        self.node = node
        self.inputs: tuple[str, ...] = tuple(node.input)
        self.outputs: tuple[str, ...] = tuple(node.output)
        self.op_type: str = node.op_type
        domain = node.domain
        self.domain: str = "" if domain == "ai.onnx" else domain  # one default domain (Clause 5.3.2)
        self.attrs: tuple[AttributeProto, ...] = tuple(node.attribute)
        self.has_subgraph = False
        self.has_ref = False
        for a in self.attrs:
            if a.type in _SUBGRAPH_TYPES:
                self.has_subgraph = True
            if a.ref_attr_name:
                self.has_ref = True


def read_nodes(nodes: object) -> list[NodeView]:
    """Views of ``nodes`` (a repeated ``NodeProto`` field or a list of them), in order."""
    return [NodeView(n) for n in nodes]  # type: ignore[attr-defined]
