"""A node's fields, read from protobuf once.

Every access to a protobuf field builds a new Python object, and the limits scan, the ordering
check, the walk and the memo all read a node's names and attributes: a large model pays for
each read tens of thousands of times. A ``NodeView`` reads them once and is shared by all.
"""

from __future__ import annotations

from collections.abc import Sequence

from onnx import AttributeProto, NodeProto

_SUBGRAPH_TYPES = (AttributeProto.GRAPH, AttributeProto.GRAPHS)


class NodeView:
    """The fields of one ``NodeProto`` that inference reads, as plain Python values."""

    __slots__ = ("attr_types", "domain", "has_ref", "has_subgraph", "inputs", "memo_base", "node", "op_type", "outputs")

    def __init__(self, node: NodeProto):
        self.node = node
        self.inputs: tuple[str, ...] = tuple(node.input)
        self.outputs: tuple[str, ...] = tuple(node.output)
        self.op_type: str = node.op_type
        domain = node.domain
        self.domain: str = "" if domain == "ai.onnx" else domain  # one default domain (Clause 5.3.2)
        attrs = tuple(node.attribute)
        self.attr_types: tuple[int, ...] = tuple(a.type for a in attrs) if attrs else ()
        self.has_subgraph = any(t in _SUBGRAPH_TYPES for t in self.attr_types)
        self.has_ref = any(a.ref_attr_name for a in attrs)
        # What the engine's memo of rule results keys on besides the opset and the inputs (see
        # ``Engine._memo_key``); ``None``: never memoized (subgraphs, attribute references).
        self.memo_base: tuple | None = (
            None
            if self.has_subgraph or self.has_ref
            else (self.domain, self.op_type, tuple(bool(o) for o in self.outputs),
                  tuple(a.SerializeToString() for a in attrs))
        )  # fmt: skip


def read_nodes(nodes: Sequence[NodeProto]) -> list[NodeView]:
    """Views of ``nodes`` (a repeated ``NodeProto`` field or a list of them), in order."""
    return [NodeView(n) for n in nodes]
