"""The main graph's nodes as the walk read them, for the passes of a cost over every node.

Each access to a protobuf field builds a new Python object; the live spans, the work of each
node and the weights (which look for graphs held in nodes) each pass over every node. The walk
leaves each node's operator, domain and names on its record (``GraphRecord.node_io``) and which
nodes hold a graph (``holders``); these are read here, by column, and protobuf only for what the
walk did not keep (a node's name, its attributes) or for a record no walk set.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from onnx import NodeProto

from infer.core.scopes import GraphRecord
from infer.load.nodeview import has_subgraph


@dataclass(frozen=True, slots=True)
class NodeReads:
    """A graph's nodes by column, in order: ``inputs[i]`` are the ``i``-th node's input names;
    ``held`` the indices of those that hold a graph (If, Loop, Scan)."""

    source: Sequence[NodeProto]
    op_types: Sequence[str]
    domains: Sequence[str]
    inputs: Sequence[tuple[str, ...]]
    outputs: Sequence[tuple[str, ...]]
    held: frozenset[int]

    def __len__(self) -> int:
        return len(self.op_types)

    def node(self, i: int) -> NodeProto:
        return self.source[i]

    def name(self, i: int) -> str:
        return self.source[i].name


def read_nodes(rec: GraphRecord) -> NodeReads:
    """The nodes of ``rec`` as its walk read them, or from protobuf where no walk set them."""
    nodes = rec.nodes
    if rec.node_io is not None and rec.holders is not None and len(rec.node_io) == len(nodes):
        io = rec.node_io
        held = frozenset(rec.holders)
    else:
        io = [(n.op_type, n.domain, tuple(n.input), tuple(n.output)) for n in nodes]
        held = frozenset(i for i, n in enumerate(nodes) if has_subgraph(n))
    if not io:
        return NodeReads(nodes, (), (), (), (), held)
    ops, doms, ins, outs = zip(*io)
    return NodeReads(nodes, ops, doms, ins, outs, held)
