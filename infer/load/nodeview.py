"""A node's fields, read from protobuf once.

Every access to a protobuf field builds a new Python object, and the limits scan, the ordering
check, the walk and the memo all read a node's names and attributes: a large model pays for
each read tens of thousands of times. A ``NodeView`` reads them once and is shared by all.

The main graph's views can also be decoded from the model's bytes as read (``split_model`` finds
each node's byte range without copying it) or from the model serialized without its weights
(``light_nodes``): a node's bytes are decoded here faster than protobuf hands out its fields, with
its attributes already serialized, as the memo keys on them. Attributes of more than
``LARGE_ATTRIBUTE`` bytes in all (a long list, a tensor, thousands of attributes) are not
copied here and their node is not memoized; a long attribute is not walked either: protobuf,
which holds it anyway, gives its type.
"""

from __future__ import annotations

import functools
from array import array
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
from onnx import AttributeProto, NodeProto

from infer.core.dims.budget import tick
from infer.load.wire import read_varint, read_varint_from

SUBGRAPH_TYPES = (AttributeProto.GRAPH, AttributeProto.GRAPHS)
_SUBGRAPH_SET = frozenset(SUBGRAPH_TYPES)
# Attribute types whose payload carries no graph or tensor to measure: the limits scan reads
# nothing more of them (``infer.load.scan``), whatever else a malformed one sets.
SCALAR_TYPES = frozenset({
    AttributeProto.FLOAT, AttributeProto.INT, AttributeProto.STRING, AttributeProto.FLOATS,
    AttributeProto.INTS, AttributeProto.STRINGS, AttributeProto.TYPE_PROTO, AttributeProto.TYPE_PROTOS,
})  # fmt: skip
# ... and with a TENSOR, what the scan reads of an attribute is its tensor, never a graph.
_GRAPH_UNREAD = SCALAR_TYPES | {AttributeProto.TENSOR}
_ATTRIBUTE_TYPES = frozenset(AttributeProto.AttributeType.values())
_LIST_TYPES = {AttributeProto.INTS: "ints", AttributeProto.FLOATS: "floats", AttributeProto.STRINGS: "strings"}


def has_subgraph(node: NodeProto) -> bool:
    """Does ``node`` carry a graph attribute (If, Loop, Scan, ...)?"""
    return any(a.type in SUBGRAPH_TYPES for a in node.attribute)


class NodeView:
    """The fields of one ``NodeProto`` that inference reads, as plain Python values.

    The ``NodeProto`` itself is fetched from its graph only when asked for (``node``): a view
    that holds one keeps a protobuf wrapper alive per node, and a repeated layer's nodes are
    mostly inferred from the memo without it.
    """

    # (Not the node's name: a diagnostic reads it from the node; held here, names were a sixth
    # of GPT-2's views, which are all alive at once before the walk.)
    __slots__ = ("attr_types", "domain", "has_ref", "has_subgraph", "index", "inputs", "memo_base", "op_type",
                 "outputs", "overload", "source")  # fmt: skip

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
        attrs: tuple[bytes, ...] | None,
        shared: dict[Any, Any],
    ):
        """``attrs``: the attributes serialized, ``None`` when they take more than
        ``LARGE_ATTRIBUTE`` bytes in all (such a node is not memoized: its key would hold them).
        ``shared``: values already made by the views of this read (names, attribute types,
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
        self.overload = overload
        # ``infer.contract.signature.canonical_domain``'s rule (importing it here would be circular:
        # the limits scan reads views, and the schema module imports the limits through dims).
        self.domain: str = "" if domain == "ai.onnx" else domain
        self.attr_types: tuple[int, ...] = shared.setdefault(attr_types, attr_types) if attr_types else ()
        self.has_subgraph: bool = bool(attr_types) and not _SUBGRAPH_SET.isdisjoint(attr_types)
        self.has_ref = has_ref
        # What the memo of rule results keys on besides the opset and the inputs (see
        # ``Memo.key``, infer/walk/memo.py); ``None``: never memoized (subgraphs, attribute references,
        # large attributes).
        if self.has_subgraph or has_ref or attrs is None:
            self.memo_base: tuple | None = None
        else:
            presence = _ALL_PRESENT[1] if len(outs) == 1 and outs[0] else _presence(outs)  # the usual case first
            base = (self.domain, self.op_type, overload, presence, attrs)
            self.memo_base = shared.setdefault(base, base)

    @property
    def node(self) -> NodeProto:
        return self.source[self.index]

    def at(self, source: Sequence[NodeProto], index: int) -> NodeView:
        """This view's fields for the node at ``index`` of ``source`` (a node of the same bytes
        read before: its fields are not worked out again)."""
        v = object.__new__(NodeView)
        v.source, v.index = source, index
        v.inputs, v.outputs, v.op_type, v.overload = self.inputs, self.outputs, self.op_type, self.overload
        v.domain, v.attr_types, v.has_subgraph, v.has_ref, v.memo_base = (
            self.domain,
            self.attr_types,
            self.has_subgraph,
            self.has_ref,
            self.memo_base,
        )
        return v

    def renamed(
        self, source: Sequence[NodeProto], index: int, inputs: tuple[str, ...], outputs: tuple[str, ...], shared: dict
    ) -> NodeView:
        """The view of the node at ``index`` of ``source``, whose bytes are this one's but for its
        inputs, outputs and name (a repeated layer's): what ``__init__`` would make of them."""
        v = object.__new__(NodeView)
        v.source, v.index, v.inputs, v.outputs = source, index, tuple([shared.get(i, i) for i in inputs]), outputs
        for o in outputs:
            shared.setdefault(o, o)
        v.op_type, v.overload, v.domain, v.attr_types = self.op_type, self.overload, self.domain, self.attr_types
        v.has_subgraph, v.has_ref, v.memo_base = self.has_subgraph, self.has_ref, self.memo_base
        base = self.memo_base
        if base is not None:
            presence = _ALL_PRESENT[1] if len(outputs) == 1 and outputs[0] else _presence(outputs)
            if presence != base[3]:
                other = (base[0], base[1], base[2], presence, base[4])
                v.memo_base = shared.setdefault(other, other)
        return v

    @property
    def input_presence(self) -> tuple[bool, ...]:
        """Which inputs are supplied (a non-empty name)."""
        return tuple([bool(i) for i in self.inputs])

    @property
    def output_presence(self) -> tuple[bool, ...]:
        return self.memo_base[3] if self.memo_base is not None else _presence(self.outputs)

    @property
    def attrs_summary(self) -> tuple[bytes, ...] | None:
        """The attributes serialized (what a check of them reads, and more), when the view keeps
        them (``None``: large attributes, references or subgraphs)."""
        return None if self.memo_base is None else self.memo_base[4]


_ALL_PRESENT = [(True,) * n for n in range(8)]


def _presence(outputs: tuple[str, ...]) -> tuple[bool, ...]:
    """Which outputs are given; the usual all-given pattern is one shared tuple."""
    if len(outputs) < 8 and all(outputs):
        return _ALL_PRESENT[len(outputs)]
    return tuple(bool(o) for o in outputs)


# A list attribute of more elements is handed to rules as an ``AttributeList``: its elements stay
# in protobuf's container (8 or 16 bytes each) instead of becoming Python objects (32 or more).
LONG_LIST = 4096


class AttributeList(Sequence):
    """The elements of a long list attribute (``ints``, ``floats`` or ``strings``, the last
    decoded as UTF-8), read from protobuf's container as they are asked for.

    A read-only sequence: its length is known at once, and an element or a slice is made when
    read; it equals a list or tuple of the same elements.
    """

    __slots__ = ("_items", "_text")

    def __init__(self, items: Sequence[Any], text: bool):
        self._items = items
        self._text = text

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, k: Any) -> Any:
        if isinstance(k, slice):
            items = self._items[k]
            return [x.decode("utf-8", errors="replace") for x in items] if self._text else list(items)
        x = self._items[k]
        return x.decode("utf-8", errors="replace") if self._text else x

    def __iter__(self) -> Any:
        if self._text:
            return (x.decode("utf-8", errors="replace") for x in self._items)
        return iter(self._items)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, (list, tuple, AttributeList)) or len(other) != len(self):
            return False
        return all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]  # like a list

    def __add__(self, other: Any) -> list:
        return [*self, *other]

    def __radd__(self, other: Any) -> list:
        return [*other, *self]

    def __repr__(self) -> str:
        return f"AttributeList(<{len(self)} elements>)"


def long_list(a: AttributeProto) -> AttributeList | None:
    """``a``'s elements as an ``AttributeList`` when it is a list of more than ``LONG_LIST``, else ``None``."""
    field = _LIST_TYPES.get(a.type)
    if field is None:
        return None
    items = getattr(a, field)
    return AttributeList(items, a.type == AttributeProto.STRINGS) if len(items) > LONG_LIST else None


class Attributes(Mapping):
    """A node's attributes by name, each made a Python value (``decode``) the first time it is
    read: an attribute no rule reads (a custom operator's, a long string) never becomes one."""

    __slots__ = ("_decode", "_given", "_values")

    def __init__(self, given: dict[str, AttributeProto], decode: Callable[[AttributeProto], Any]):
        self._given = given
        self._decode = decode
        self._values: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        values = self._values
        if name in values:
            return values[name]
        value = values[name] = self._decode(self._given[name])
        return value

    def __contains__(self, name: object) -> bool:
        return name in self._given

    def __iter__(self) -> Iterator[str]:
        return iter(self._given)

    def __len__(self) -> int:
        return len(self._given)

    def __repr__(self) -> str:
        return f"Attributes({', '.join(self._given)})"


class Views(list):
    """A graph's node views, in order, and the nodes whose name an earlier node has
    (``renamed``: their indexes; Clause 5.4.1 makes node names unique within a graph).
    ``hidden_graphs``: some attribute of a type whose payload is no graph (``_GRAPH_UNREAD``)
    holds one anyway, which the limits scan does not read (a malformed model)."""

    __slots__ = ("hidden_graphs", "renamed")

    def __init__(self, views: list[NodeView], renamed: tuple[int, ...] = (), hidden_graphs: bool = False):
        super().__init__(views)
        self.renamed = renamed
        self.hidden_graphs = hidden_graphs


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


# A node whose attributes take more bytes in all has them neither copied into its view nor into
# the memo's keys (it is not memoized); an attribute of more than ``_WALKED_ATTRIBUTE`` bytes has
# its type read through protobuf rather than from its bytes: a list of millions of numbers is
# millions of fields to walk in Python.
LARGE_ATTRIBUTE = 1024
_WALKED_ATTRIBUTE = 64
_KINDS_KEPT = 1 << 16  # distinct serialized attributes whose types are remembered in one read


def _serialized(a: AttributeProto) -> bytes | None:
    """``a`` serialized, or ``None`` when it is larger than ``LARGE_ATTRIBUTE`` (a long list is
    seen so by its length, without serializing it)."""
    field = _LIST_TYPES.get(a.type)
    if field is not None and len(getattr(a, field)) > LARGE_ATTRIBUTE // 2:
        return None
    data = a.SerializeToString()
    return data if len(data) <= LARGE_ATTRIBUTE else None


def read_nodes(nodes: Sequence[NodeProto]) -> Views:
    """Views of ``nodes`` (a repeated ``NodeProto`` field or a list of them), in order."""
    shared: dict[Any, Any] = {}
    out = []
    names = _NameHashes()
    hidden = False
    for index, node in enumerate(nodes):
        names.add(node.name)
        attrs = tuple(node.attribute)
        serialized: tuple[bytes, ...] | None = ()
        if attrs:
            hidden = hidden or any(_hides_graph(a) for a in attrs)
            each: list[bytes] = []
            for a in attrs:
                data = _serialized(a)
                if data is None:
                    serialized = None
                    break
                each.append(data)
            else:
                serialized = tuple(each) if sum(map(len, each)) <= LARGE_ATTRIBUTE else None
        out.append(
            NodeView(
                nodes,
                index,
                node.input,
                node.output,
                node.op_type,
                node.domain,
                node.overload,
                tuple(a.type for a in attrs),
                any(a.ref_attr_name for a in attrs),
                serialized,
                shared,
            )
        )
    return Views(out, names.repeated(nodes), hidden)


def _hides_graph(a: AttributeProto) -> bool:
    """Does ``a`` hold a graph the limits scan does not read (see ``Views``)?"""
    return a.type in _GRAPH_UNREAD and (a.HasField("g") or len(a.graphs) > 0)


class NodeBytes:
    """The main graph's nodes as byte ranges of the serialized model they were parsed from (no
    node is copied), for ``read_light_nodes``, which consumes them: the model's bytes are
    released once its nodes are read."""

    __slots__ = ("data", "ranges")

    def __init__(self, data: bytes, ranges: array[int]):
        self.data: bytes | None = data
        self.ranges = ranges  # start and end of each node, flat

    def __len__(self) -> int:
        return len(self.ranges) // 2


class ModelPieces:
    """Where a serialized ``ModelProto`` keeps what ``split_model`` looks for: the byte ranges of
    the main graph's nodes, and runs of the model's fields that hold all its text but the main
    graph's initializers (top-level fields other than the graph, and the graph's own fields other
    than its initializers), for the UTF-8 check."""

    __slots__ = ("graph_runs", "model_runs", "nodes")

    def __init__(self, nodes: NodeBytes, model_runs: list[tuple[int, int]], graph_runs: list[tuple[int, int]]):
        self.nodes = nodes
        self.model_runs = model_runs
        self.graph_runs = graph_runs


# Tags (field number << 3 | wire type) the split looks for, all length-delimited: ModelProto.graph
# (7); GraphProto.node (1), initializer (5), sparse_initializer (15).
_MODEL_GRAPH, _GRAPH_NODE, _GRAPH_INITIALIZER, _GRAPH_SPARSE = 0x3A, 0x0A, 0x2A, 0x7A


def split_model(data: bytes) -> ModelPieces | None:
    """The pieces of the serialized ``ModelProto`` ``data``, found by walking its top-level fields
    and its graph's (one Python step a field, nothing copied), or ``None`` where the bytes hold
    what this walk leaves to protobuf (groups, a malformed field)."""
    try:
        model_runs: list[tuple[int, int]] = []
        graphs: list[tuple[int, int]] = []
        if not _walk(data, 0, len(data), {_MODEL_GRAPH: graphs}, model_runs):
            return None
        graph_runs: list[tuple[int, int]] = []
        ranges = array("q")
        for start, end in graphs:  # a graph given in several pieces is their merge
            nodes: list[tuple[int, int]] = []
            weights: list[tuple[int, int]] = []
            if not _walk(
                data,
                start,
                end,
                {_GRAPH_NODE: nodes, _GRAPH_INITIALIZER: weights, _GRAPH_SPARSE: weights},
                graph_runs,
                split_at=weights,
            ):
                return None
            for s, e in nodes:
                ranges.append(s)
                ranges.append(e)
    except IndexError:  # truncated: protobuf says what is wrong
        return None
    return ModelPieces(NodeBytes(data, ranges), model_runs, graph_runs)


def _walk(
    data: bytes,
    i: int,
    n: int,
    wanted: dict[int, list[tuple[int, int]]],
    runs: list[tuple[int, int]],
    split_at: list[tuple[int, int]] | None = None,
) -> bool:
    """Walk the fields of one message, ``data[i:n]``: the contents of each field whose tag is in
    ``wanted`` go to its list; ``runs`` gets the stretches of the other fields (those of
    ``split_at``'s list excepted, so ``wanted`` fields not in it stay inside the runs). False
    for a wire type this walk does not read (groups) or a field past the end."""
    run = i
    skipped = wanted if split_at is None else {tag for tag, found in wanted.items() if found is split_at}
    while i < n:
        field_start = i
        tag = data[i]
        i += 1
        if tag > 0x7F:
            tag, i = read_varint_from(data, i, tag)
        wire = tag & 7
        if wire == 2:
            length = data[i]
            i += 1
            if length > 0x7F:
                length, i = read_varint_from(data, i, length)
            end = i + length
        elif wire == 0:
            while data[i] > 0x7F:
                i += 1
            end = i + 1
        elif wire == 5:
            end = i + 4
        elif wire == 1:
            end = i + 8
        else:
            return False
        if end > n:
            return False
        found = wanted.get(tag) if wire == 2 else None
        if found is not None:
            found.append((i, end))
            if tag in skipped:
                if run < field_start:
                    runs.append((run, field_start))
                run = end
        i = end
    if run < n:
        runs.append((run, n))
    return True


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


def read_light_nodes(
    nodes: Sequence[NodeProto], serialized: list[bytes | None] | NodeBytes, max_values: int | None = None
) -> Views | None:
    """Views of the main graph's ``nodes``, decoded from their serialized bytes (``light_nodes`` or
    ``split_model``, dropped as they are read), which costs less than protobuf's fields; a node read
    before is not decoded again (``DECODED``). ``None`` when the bytes are not these nodes or hold
    what this decoder leaves to protobuf, or a node has more than ``max_values`` inputs and outputs
    (``max_node_values``, which the scan refuses: protobuf's fields are read, without copying)."""
    # Each input or output takes two bytes at least: a smaller node is within the limit.
    least = (2 * max_values) if max_values is not None else None
    if len(serialized) != len(nodes):
        return None
    in_place, sources = isinstance(serialized, NodeBytes), _taken(serialized)
    if sources is None:
        return None  # read before
    data, ranges, listed = sources
    shared: dict[Any, Any] = {}
    kinds: dict[bytes, tuple[int, bool, bool] | None] = {}  # serialized attribute -> ``_attribute_kind``
    rests: dict[bytes, list] = {}  # a node's bytes after its names -> [fields, template] (``_decode``)
    out = []
    names = _NameHashes()
    add_hash = names.hashes.append  # per named node: no method call
    decoded, hidden = DECODED, False
    try:
        for index in range(len(nodes)):
            if in_place:
                b, i, n = data, ranges[2 * index], ranges[2 * index + 1]
            else:
                item = listed[index]
                if item is None:
                    return None  # read before
                listed[index] = None
                b, i, n = item, 0, len(item)
            # A small node's bytes are its key among the nodes read before; a large one (a long
            # attribute) is neither copied nor kept.
            small = n - i <= _REMEMBERED_NODE
            if not small and _past_limit(nodes[index], n - i, least, max_values):
                return None
            if not index & 255:
                tick(256)  # (in steps: a node costs some microseconds)
            if small and in_place:
                b, i, n = b[i:n], 0, n - i
            seen = decoded.get(b) if small else None
            if seen is not None:
                view, name_hash, hides = seen
                out.append(view.at(nodes, index))
            else:
                made = _new_view(b, i, n, nodes, index, kinds, rests, shared)
                if made is None:
                    return None
                view, name_hash, hides = made
                if small and decoded.enabled:
                    decoded.put(b, (view.at((), 0), name_hash, hides))  # (held without the model's nodes)
                out.append(view)
            if name_hash is not None:
                add_hash(name_hash)
            hidden = hidden or hides
    except (IndexError, UnicodeDecodeError):  # not what protobuf wrote: let protobuf read them
        return None
    return Views(out, names.repeated(nodes), hidden)


def _new_view(
    b: bytes, i: int, n: int, nodes: Sequence[NodeProto], index: int, kinds: dict, rests: dict, shared: dict
) -> tuple[NodeView, int | None, bool] | None:
    """The view of a node not read before, decoded from ``b[i:n]``, its name's hash, and whether
    it hides a graph (see ``Views``)."""
    decoded = _decode(b, i, n, nodes, index, kinds, rests)
    if decoded is None:
        return None
    ins, outs, name_hash, rest = decoded
    fields, template = rest
    more_ins, more_outs, op_type, domain, overload, types, has_ref, attrs, later_hash, hides = fields
    if later_hash is not None:  # (a name after the operator: protobuf keeps the last)
        name_hash = later_hash
    if more_ins or more_outs:  # (fields out of protobuf's order)
        ins, outs, template = ins + more_ins, outs + more_outs, None
    if template is not None:
        return template.renamed(nodes, index, ins, outs, shared), name_hash, hides
    view = NodeView(nodes, index, ins, outs, op_type, domain, overload, types, has_ref, attrs, shared)
    rest[1] = view  # (the template of the next node of these bytes in this read)
    return view, name_hash, hides


def _taken(serialized: list[bytes | None] | NodeBytes) -> tuple[bytes, array[int], list[bytes | None]] | None:
    """Where the nodes' bytes are: ``(data, ranges, [])``, dropped from a ``NodeBytes`` (read once),
    or ``(b"", [], serialized)`` for a list of each node's; ``None`` for a ``NodeBytes`` read before."""
    if not isinstance(serialized, NodeBytes):
        return b"", array("q"), serialized
    data, ranges = serialized.data, serialized.ranges
    serialized.data = None
    return None if data is None else (data, ranges, [])


def _past_limit(node: NodeProto, size: int, least: int | None, max_values: int | None) -> bool:
    """Whether a long node (``size`` bytes) has more than ``max_values`` inputs and outputs (read
    from protobuf only where its bytes could hold that many: ``least``); ticks for its decoding."""
    if max_values is not None and least is not None and size > least:
        if len(node.input) + len(node.output) > max_values:
            return True
    tick(size >> 6)  # a long node: its decoding, about a microsecond for 64 bytes
    return False


class _Decoded:
    """Decoded nodes by their bytes, in two generations of ``size`` (a full young one becomes the
    old one, and the old one goes): bounded, and shared by every read of the process."""

    def __init__(self, size: int = 1 << 15):
        self.size = size
        self.enabled = True  # off: nothing kept (``infer.walk.reuse.disabled``)
        self.young: dict[bytes, tuple] = {}
        self.old: dict[bytes, tuple] = {}

    def get(self, b: bytes) -> tuple | None:
        if not self.enabled:
            return None
        fields = self.young.get(b)
        if fields is None:
            fields = self.old.get(b)
            if fields is not None:
                self.put(b, fields)
        return fields

    def put(self, b: bytes, fields: tuple) -> None:
        if not self.enabled:
            return
        if len(self.young) >= self.size:
            self.old, self.young = self.young, {}
        self.young[b] = fields

    def clear(self) -> None:
        self.young, self.old = {}, {}


DECODED = _Decoded()


_REMEMBERED_NODE = 1 << 12  # bytes of a node kept among the decoded ones at most


def _decode(b: bytes, i: int, n: int, nodes: Sequence[NodeProto], index: int, kinds: dict, rests: dict) -> tuple | None:
    """The node serialized in ``b[i:n]`` (the ``index``-th of ``nodes``): its leading inputs and
    outputs, its name's hash, and ``[fields, template]`` of the rest of its bytes (operator,
    attributes, domain: protobuf writes the fields in order of number), decoded once per
    distinct bytes in a read (``rests``), since the nodes of repeated layers differ in their
    names only: ``_fields``' tuple of them, and the first view made of them (``NodeView.renamed``
    makes the others'). ``None`` for what this decoder leaves to protobuf."""
    ins: list[str] = []
    outs: list[str] = []
    name_hash = None
    while i < n:
        tag = b[i]
        if tag != _INPUT and tag != _OUTPUT and tag != _NAME:
            break
        length = b[i + 1]
        i += 2
        if length > 0x7F:  # a varint of more bytes
            length, i = read_varint_from(b, i, length)
        end = i + length
        if end > n:
            return None
        if tag == _INPUT:
            ins.append(b[i:end].decode())
        elif tag == _OUTPUT:
            outs.append(b[i:end].decode())
        elif end > i:
            name_hash = hash(b[i:end])  # (the name itself is read from the node where one is reported)
        i = end
    if i >= n:
        return tuple(ins), tuple(outs), name_hash, [_NO_FIELDS, None]
    if n - i > _REMEMBERED_NODE:  # a long attribute: decoded in place, neither copied nor kept
        fields = _fields(b, i, n, nodes, index, kinds)
        return None if fields is None else (tuple(ins), tuple(outs), name_hash, [fields, None])
    tail = b[i:n]
    rest = rests.get(tail)
    if rest is None:
        fields = _fields(tail, 0, n - i, nodes, index, kinds)
        if fields is None:
            return None
        rest = [fields, None]
        if len(rests) < _KINDS_KEPT:
            rests[tail] = rest
    return tuple(ins), tuple(outs), name_hash, rest


_NO_FIELDS = ((), (), "", "", "", (), False, (), None, False)  # a node of names only


def _fields(b: bytes, i: int, n: int, nodes: Sequence[NodeProto], index: int, kinds: dict) -> tuple | None:
    """The fields of the node's bytes ``b[i:n]``, whatever their order, as ``NodeView`` takes them,
    with its name's hash and whether it hides a graph (``Views``); ``None`` for what this
    decoder leaves to protobuf."""
    ins: list[str] = []
    outs: list[str] = []
    spans: list[tuple[int, int]] = []  # each attribute's bytes
    op_type = domain = overload = ""
    name_hash = None
    while i < n:
        tag = b[i]
        if tag & 7 != 2 or tag > 0x7F:
            return None
        length = b[i + 1]
        i += 2
        if length > 0x7F:  # a varint of more bytes
            length, i = read_varint_from(b, i, length)
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
            spans.append((i, end))
        elif tag == _DOMAIN:
            domain = b[i:end].decode()
        elif tag == _OVERLOAD:
            overload = b[i:end].decode()
        elif tag == _NAME and end > i:
            raw = b[i:end]
            name_hash = hash(raw)  # (the name itself is read from the node where one is reported)
        i = end
    if not spans:
        return tuple(ins), tuple(outs), op_type, domain, overload, (), False, (), name_hash, False
    attributes = _attribute_fields(b, spans, nodes, index, kinds)
    if attributes is None:
        return None
    types, has_ref, attrs, hides = attributes
    return tuple(ins), tuple(outs), op_type, domain, overload, types, has_ref, attrs, name_hash, hides


def _attribute_fields(
    b: bytes, spans: list[tuple[int, int]], nodes: Sequence[NodeProto], index: int, kinds: dict
) -> tuple[tuple[int, ...], bool, tuple[bytes, ...] | None, bool] | None:
    """(types, has a reference, serialized or ``None`` when large, hides a graph) of the
    attributes at ``spans`` of ``b`` (the ``index``-th node of ``nodes``); ``None`` for what this
    decoder leaves to protobuf.

    ``kinds``: (type, has a reference, hides a graph) by serialized attribute, filled here for
    the next nodes.
    """
    # The attributes are kept (for the memo's key) only when small in all.
    keep = sum(e - s for s, e in spans) <= LARGE_ATTRIBUTE
    found: list[int] = []
    kept: list[bytes] = []
    has_ref = hides = False
    for k, (s, e) in enumerate(spans):
        a = b[s:e] if keep or e - s <= _WALKED_ATTRIBUTE else None
        kind = kinds.get(a) if a is not None else None
        if kind is None:
            if a is not None and e - s <= _WALKED_ATTRIBUTE:
                kind = _attribute_kind(a)
                if kind is None:
                    return None
            else:  # protobuf holds it parsed: its type is a field read
                proto = nodes[index].attribute[k]
                kind = (proto.type, bool(proto.ref_attr_name), _hides_graph(proto))
            if a is not None and len(kinds) < _KINDS_KEPT:
                kinds[a] = kind
        if keep and a is not None:  # (kept, a is every attribute's bytes)
            kept.append(a)
        found.append(kind[0])
        has_ref = has_ref or kind[1]
        hides = hides or kind[2]
    return tuple(found), has_ref, (tuple(kept) if keep else None), hides


# -- the light message ------------------------------------------------------------------------

# AttributeProto field numbers (onnx.proto): ``type`` is a varint, ``ref_attr_name`` a string,
# ``g`` and ``graphs`` messages.
_ATTR_TYPE, _ATTR_REF, _ATTR_G, _ATTR_GRAPHS = 20, 21, 6, 11


def _attribute_kind(data: bytes) -> tuple[int, bool, bool] | None:
    """(``type``, has a non-empty ``ref_attr_name``, hides a graph: see ``Views``) of one
    serialized ``AttributeProto``, read from its top-level fields as protobuf reads them;
    ``None`` for what it would not parse."""
    kind, ref, graph, i, n = 0, False, False, 0, len(data)
    try:
        while i < n:
            tag, i = read_varint(data, i)
            field, wire = tag >> 3, tag & 7
            if wire == 0:
                value, i = read_varint(data, i)
                if field == _ATTR_TYPE and value in _ATTRIBUTE_TYPES:  # an unknown enum value is
                    kind = value  # kept aside by protobuf, and ``type`` reads as UNDEFINED
            elif wire == 2:
                length, i = read_varint(data, i)
                if field == _ATTR_REF:
                    ref = length > 0
                elif field == _ATTR_G or field == _ATTR_GRAPHS:
                    graph = True  # (an empty ``g`` is present all the same: ``HasField``)
                i += length
            elif wire == 5:
                i += 4
            elif wire == 1:
                i += 8
            else:
                return None
    except IndexError:
        return None
    return (kind, ref, graph and kind in _GRAPH_UNREAD) if i == n else None


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
        # The graph's class held too: upb makes a sub-message's class as it is first read and
        # holds it weakly, so each read would make one more, a cycle freed only by a full
        # collection of the heap.
        _LIGHT_CLASSES.append(message_factory.GetMessageClass(pool.FindMessageTypeByName("onnx_infer_light.Graph")))
        return message_factory.GetMessageClass(pool.FindMessageTypeByName("onnx_infer_light.Model"))
    except Exception:  # an unusual protobuf: the nodes are read from the model instead
        return None


_LIGHT_CLASSES: list[Any] = []
