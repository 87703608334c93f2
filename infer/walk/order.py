"""The order nodes are inferred in: producers first (Clause 7.5).

A graph's nodes are usually written in order; checking that is one pass. A graph out of order
is sorted (and reported: Clause 7.5 says SHALL), a cycle is reported and the rest walked in an
order that breaks it. A node's subgraphs read names of its graph (implicit inputs), which
count as inputs for ordering: ``SubgraphUses`` finds them once per node.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from onnx import AttributeProto, GraphProto, NodeProto

from infer.core.diagnostics import Location
from infer.core.scopes import Frame
from infer.load.nodeview import NodeView, has_subgraph

Report = Callable[..., None]  # (code, message, location, suggestion=None)

_NO_USES: frozenset[str] = frozenset()


class SubgraphUses:
    """Outer names a node's subgraphs read (its implicit inputs), found once per node."""

    def __init__(self) -> None:
        # id(node) -> (node, names); the node is kept so that its id stays its own
        self._uses: dict[int, tuple[NodeProto, frozenset[str]]] = {}

    def of(self, node: NodeProto) -> frozenset[str]:
        """Built bottom-up from the nested nodes' own (cached) uses, so each graph is read once
        however deep the nesting; reading every nested level again for every enclosing node
        costs the square of the depth (If in If in If ...)."""
        if not has_subgraph(node):
            return _NO_USES
        hit = self._uses.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1]
        used: set[str] = set()
        for a in node.attribute:
            if a.type == AttributeProto.GRAPH:
                used |= self._graph(a.g)
            elif a.type == AttributeProto.GRAPHS:
                for g in a.graphs:
                    used |= self._graph(g)
        uses = frozenset(used)
        self._uses[id(node)] = (node, uses)
        return uses

    def _graph(self, g: GraphProto) -> set[str]:
        """Names graph ``g`` reads from enclosing graphs (through its own subgraphs too)."""
        defined = {i.name for i in g.input}
        defined.update(t.name for t in g.initializer)
        defined.update(t.values.name for t in g.sparse_initializer)
        used: set[str] = set()
        for n in g.node:
            defined.update(n.output)
            used.update(n.input)
            if n.attribute:
                used |= self.of(n)
        used.update(o.name for o in g.output)
        used.discard("")
        return used - defined


def order(frame: Frame, views: list[NodeView], uses: SubgraphUses, report: Report) -> Sequence[int]:
    """Node indices in an order where producers come first.

    Only a name produced by this node or a later one of the same graph is out of order: a name
    nothing here produces is an outer one, or undefined (reported where it is consumed).
    """
    producer: dict[str, int] = {}
    for idx, v in enumerate(views):
        for o in v.outputs:
            if o:
                producer.setdefault(o, idx)
    defined, visible_outside = frame.record.values, frame.scope.visible_outside
    for idx, v in enumerate(views):
        for i in (*v.inputs, *uses.of(v.node)) if v.has_subgraph else v.inputs:
            if producer.get(i, -1) >= idx and i not in defined and not visible_outside(i):
                return _sorted(frame, [w.node for w in views], producer, uses, report, (idx, i))
    return range(len(views))


def _sorted(
    frame: Frame,
    nodes: list[NodeProto],
    producer: dict[str, int],
    uses: SubgraphUses,
    report: Report,
    first: tuple[int, str],
) -> list[int]:
    """A dependency order of a graph out of order (reported), or one that breaks its cycle."""
    import networkx as nx  # only for graphs out of order: its import costs a quarter second

    defined, visible_outside = frame.record.values, frame.scope.visible_outside
    g = nx.DiGraph()
    g.add_nodes_from(range(len(nodes)))
    for idx, n in enumerate(nodes):
        for i in (*n.input, *uses.of(n)):
            p = producer.get(i)
            # A node that consumes its own output is a cycle of one (unless the name is also
            # defined before the graph's nodes: then it is defined twice, reported elsewhere).
            if p is not None and (p != idx or (i not in defined and not visible_outside(i))):
                g.add_edge(p, idx)
    try:
        out = list(nx.lexicographical_topological_sort(g))
        idx, name = first
        report(
            "not-topological",
            f"nodes are not in topological order: `{name}` is consumed before it is produced; "
            "inferred in dependency order instead",
            Location(frame.path, idx, nodes[idx].name, nodes[idx].op_type, value=name),
            "sort the nodes so that each comes after the producers of its inputs",
        )
        return out
    except nx.NetworkXUnfeasible:
        cycle = nx.find_cycle(g)
        members = sorted({a for a, _ in cycle})
        names = ", ".join(f"{nodes[i].op_type} `{nodes[i].name}` (node {i})" for i in members)
        at = members[0]
        report(
            "cycle",
            f"the graph has a cycle through {names}",
            Location(frame.path, at, nodes[at].name, nodes[at].op_type),
        )
        # Walk what can be ordered; the rest in file order with unknown inputs.
        acyclic = g.copy()
        acyclic.remove_edges_from(cycle)
        try:
            return list(nx.lexicographical_topological_sort(acyclic))
        except nx.NetworkXUnfeasible:
            return list(range(len(nodes)))
