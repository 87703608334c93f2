"""Where graphs sit in a model and what each defines: graph paths, scopes, records, frames.

A model is a tree of graphs: the main graph, the graph attributes of its nodes (If branches,
Loop and Scan bodies), and function bodies at each call site. ``GraphPath`` names a place in
that tree (built by ``GraphPath.subgraph`` and ``GraphPath.call``, taken apart into ``Step``s);
``GraphRecord`` holds what inference found there; ``Scope`` resolves a name through
the enclosing graphs (Clause 5.4.3); ``Frame`` is the state of walking one graph.
``find_record`` is the one lookup of a name through enclosing graphs after a run.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from onnx import AttributeProto, GraphProto, ModelProto, NodeProto, TypeProto

from infer.core.dimtable import Site
from infer.core.values import Value


class GraphPath(str):
    """A place in a model's tree of graphs, written as the string records and sites are keyed by:
    ``main``; ``main/3:body``, the graph attribute ``body`` of node 3 of ``main``;
    ``main/0@local.f``, the body of function ``local.f`` as node 0 of ``main`` calls it.

    Paths are built and taken apart only here.
    """

    __slots__ = ()

    def subgraph(self, node: int | str, attr: str) -> GraphPath:
        """The graph attribute ``attr`` of node ``node`` (its index; its identity in a path that
        names nodes by identity, as ``Frame.ident`` does)."""
        return GraphPath(f"{self}/{node}:{attr}")

    def call(self, node: int | str, domain: str, name: str) -> GraphPath:
        """The body of function ``domain.name`` as node ``node`` calls it (see ``subgraph``)."""
        return GraphPath(f"{self}/{node}@{domain}.{name}")

    def down(self, step: Step, node: str | None = None) -> GraphPath:
        """This path one ``step`` further down; ``node``: the node named by its identity instead
        of the step's index (see ``subgraph``)."""
        at, sep = step.index if node is None else node, "@" if step.call else ":"
        return GraphPath(f"{self}/{at}{sep}{step.name}")

    @property
    def parent(self) -> GraphPath | None:
        """The enclosing graph's path; ``None`` for the main graph."""
        head, sep, _ = self.rpartition("/")
        return GraphPath(head) if sep else None

    @property
    def root(self) -> str:
        """The graph the path starts from: ``main`` (``node`` for one node inferred alone)."""
        return self.partition("/")[0]

    def steps(self) -> list[Step]:
        """The steps from the main graph down; ``ValueError`` if one is not written as a step."""
        out = []
        for text in self.split("/")[1:]:
            step = _step(text)
            if step is None:
                raise ValueError(f"graph path {str(self)!r}: {text!r} is no step")
            out.append(step)
        return out

    def last_step(self) -> tuple[GraphPath, Step] | None:
        """The enclosing graph's path and the step from it into this graph; ``None`` for the main
        graph (or a path whose last step is not written as one)."""
        head, sep, text = self.rpartition("/")
        step = _step(text) if sep else None
        return None if step is None else (GraphPath(head), step)

    def within(self, other: str) -> bool:
        """Is this ``other`` or a graph inside it?"""
        return self == other or self.startswith(other + "/")

    def inside_node(self, graph: str, node_index: int | None) -> bool:
        """Is this a graph that node ``node_index`` of ``graph`` walks (a graph attribute, a
        function it calls), or a graph inside those?"""
        prefix = f"{graph}/{node_index}"
        return self.startswith((prefix + ":", prefix + "@"))


@dataclass(frozen=True, slots=True)
class Step:
    """One step down a graph path: into the graph attribute ``name`` of node ``index``, or
    (``call``) into the body of the function ``name`` (``domain.name``) that node calls.

    A dataclass, not a ``NamedTuple``: a field ``index`` would hide ``tuple.index``."""

    index: int
    name: str
    call: bool = False


_STEP = re.compile(r"(\d+)([:@])(.*)", re.S)


def _step(text: str) -> Step | None:
    """A step as ``GraphPath`` writes it: ``3:body``, ``0@local.f``."""
    m = _STEP.fullmatch(text)
    return None if m is None else Step(int(m.group(1)), m.group(3), m.group(2) == "@")


MAIN = GraphPath("main")


def resolve_graph(model: ModelProto, path: str) -> GraphProto | None:
    """The graph at ``path`` (``main``, ``main/3:body``, ...) in ``model``."""
    p = GraphPath(path)
    try:
        steps = p.steps()
    except ValueError:
        return None
    if p.root != MAIN:
        return None
    g = model.graph
    for step in steps:
        if step.call or not step.name:
            return None  # a function body: not a graph of the model
        if step.index >= len(g.node):
            return None
        found = None
        for a in g.node[step.index].attribute:
            if a.name == step.name and a.type == AttributeProto.GRAPH:
                found = a.g
        if found is None:
            return None
        g = found
    return g


def find_record(records: Mapping[str, GraphRecord], path: str, name: str) -> GraphRecord | None:
    """The record of the graph that defines ``name`` as seen from ``path``: that graph's, or the
    nearest enclosing graph's that defines it."""
    p: GraphPath | None = GraphPath(path)
    while p is not None:
        rec = records.get(p)
        if rec is not None and name in rec.values:
            return rec
        p = p.parent
    return None


class Scope:
    """Names visible in one graph, with the enclosing graphs' behind it (Clause 5.4.3)."""

    __slots__ = ("parent", "values")

    def __init__(self, parent: Scope | None = None):
        self.values: dict[str, Value] = {}
        self.parent = parent

    def lookup(self, name: str) -> Value | None:
        s: Scope | None = self
        while s is not None:
            v = s.values.get(name)
            if v is not None:
                return v
            s = s.parent
        return None

    def visible_outside(self, name: str) -> bool:
        return self.parent is not None and self.parent.lookup(name) is not None


@dataclass
class ContentNote:
    """Why a value's contents are not known (for ``explain``)."""

    site: Site
    reason: str
    causes: tuple[str, ...] = ()


NodeIO = tuple[str, str, tuple[str, ...], tuple[str, ...]]  # (op_type, domain, inputs, outputs)


@dataclass
class GraphRecord:
    """What inference found in one graph (or one function body at one call site)."""

    path: str
    kind: str  # "graph" | "function"
    values: dict[str, Value] = field(default_factory=dict)
    producers: dict[str, int] = field(default_factory=dict)  # value -> node index
    nodes: Sequence[NodeProto] = field(default_factory=list)
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    initializers: set[str] = field(default_factory=set)
    notes: dict[str, ContentNote] = field(default_factory=dict)  # why type, rank or contents unknown
    holders: list[int] | None = None  # the nodes that hold a graph (set as the walk starts; None: not walked)
    # Each node's operator, domain, inputs and outputs as the walk read them (set with ``holders``):
    # a client that passes over every node (``result.cost``) reads these, not protobuf's fields again.
    node_io: list[NodeIO] | None = None

    def copy(self) -> GraphRecord:
        """A record whose containers are this one's copied (their items shared): changing one
        does not change the other."""
        return GraphRecord(
            self.path,
            self.kind,
            dict(self.values),
            dict(self.producers),
            self.nodes,
            list(self.inputs),
            list(self.outputs),
            set(self.initializers),
            dict(self.notes),
            self.holders,
            self.node_io,
        )


@dataclass
class Frame:
    """The state of walking one graph or function body."""

    path: GraphPath
    scope: Scope
    opsets: Mapping[str, int]
    declared: Mapping[str, TypeProto]
    record: GraphRecord
    depth: int
    functions_active: tuple[tuple[str, str, str], ...] = ()
    attr_refs: Mapping[str, AttributeProto] | None = None  # inside a function body
    # The graph named by its nodes' identities instead of their positions (a node's first output:
    # ``main/kv_loop:body``): what fresh variables are keyed on, so that a variable keeps its key
    # when nodes are inserted or removed before the node that made it (``Site.key``).
    ident: str = ""
