"""The main graph's nodes read from protobuf once, for the passes of a cost over every node.

Each access to a protobuf field builds a new Python object; the live spans, the work of each
node and the weights (which look for graphs held in nodes) each read every node, so they read
these instead. A cost makes them when first asked for and drops them with itself: the walk's own
views are dropped as it goes, to keep a run's memory low.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from onnx import NodeProto

from infer.load.nodeview import has_subgraph


@dataclass(slots=True)  # not frozen: a frozen one takes four times as long to make, once per node
class NodeRead:
    """One node's fields: names as tuples, ``held`` whether it holds a graph (If, Loop, Scan)."""

    node: NodeProto
    name: str
    op_type: str
    domain: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    held: bool


def read_nodes(nodes: Sequence[NodeProto], holders: Collection[int] | None) -> list[NodeRead]:
    """``nodes`` read once, in order; ``holders``: the indices of those that hold a graph where
    the walk said (``GraphRecord.holders``: reading every node's attributes to find them costs
    more than the rest of this), ``None`` to read them."""
    out = []
    for i, node in enumerate(nodes):
        held = i in holders if holders is not None else has_subgraph(node)
        out.append(NodeRead(node, node.name, node.op_type, node.domain, tuple(node.input), tuple(node.output), held))
    return out
