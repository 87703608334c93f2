"""Writing inferred dims into ``TypeProto``s: the one writer of ``dim_value`` and ``dim_param``.

An integer extent in int64's range is a ``dim_value``; a symbolic one a ``dim_param`` written in
one of three styles:

- ``expressions`` (``annotate``'s default): the extent's text, ``seq + 5``,
  ``floor((h - 3)/2) + 1``, which ``infer/core/dimparse.py`` reads back (a name that is no identifier
  is backquoted inside an expression);
- ``strict`` (``annotate --dims strict``): identifiers only; an expression gets a name defined
  once in the dimension table (``DimTable.name_for``), where its definition is listed;
- ``onnx`` (the drop-in, ``infer.onnx_compat``): what onnx's tools and onnxruntime's symbolic
  shape inference read (docs/onnx-compat.md). A declared variable keeps its name; an expression
  a declared ``dim_param`` spells is written with that spelling; every other symbolic extent gets
  an ``unk__`` name derived from its content, the only kind of name onnxruntime takes as unknown
  without having made it itself; and a ``dim_param`` a value already holds is kept where it
  denotes the same extent. Run on its own output, the drop-in thus writes it again unchanged.

``write_text`` is the style without a dimension table, for types the walk hands to onnx (a
schema's function body built for its inputs, ``infer.walk.dispatch``; a registered inference function,
``infer.walk.custom_schemas``) or reads back (declarations merged, ``infer.walk.graphs``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping

from onnx import GraphProto, ModelProto, NodeProto, TypeProto

from infer.core import dims as D
from infer.core import types as T
from infer.core.dimparse import is_identifier
from infer.core.dims import Dim
from infer.core.dims.bounds import lower as syntactic_lower
from infer.core.dimtable import DimTable
from infer.core.scopes import GraphPath, Step

STYLES = ("expressions", "strict", "onnx")
INT64_MAX = (1 << 63) - 1
UNKNOWN_PREFIX = "unk__"  # onnx's prefix for generated names; onnxruntime reads only these as unknown
_NAME_SPACE = 10**10  # generated names are UNKNOWN_PREFIX and a number below this

Written = int | str | None


def write_text(d: Dim) -> Written:
    """A dim as ``dim_value`` (an int in int64's range) or ``dim_param`` text; ``None`` if neither."""
    if d is None:
        return None
    if isinstance(d, int):
        return d if 0 <= d <= INT64_MAX else None
    return D.to_str(d)  # a variable alone is its name as declared


class DimWriter:
    """Writes dims in one style (see the module docstring); a ``types.DimWriter``.

    An extent past int64's range is written unknown and recorded in ``overflows`` with ``where``,
    the place being written, so that a caller can report it.
    """

    def __init__(
        self,
        table: DimTable,
        style: str = "expressions",
        model: ModelProto | None = None,
        conflicts: Mapping[str, Dim] | None = None,
        declared: Iterable[str] | None = None,
    ):
        """``declared``: every ``dim_param`` the model declares, where the caller knows them
        (``function_params`` says what a limits scan leaves out); by default read from ``model``."""
        if style not in STYLES:
            raise ValueError(f"dims style must be one of {STYLES}, not {style!r}")
        self.table = table
        # Declared names the model gives to extents inference does not prove equal, and what
        # each stands for (``Placement.conflicts``).
        self.conflicts = conflicts or {}
        self.style = style
        self.keeps_declared = style == "onnx"
        self.overflows: list[tuple[str, str]] = []
        self.where = ""
        self._names = _OnnxNames(table, model, declared) if style == "onnx" else None
        self._written: dict[Dim, Written] = {}
        self._too_large: set[Dim] = set()

    def __call__(self, d: Dim) -> Written:
        if d is None:
            return None
        if isinstance(d, int):
            if d > INT64_MAX:  # the model is wrong; strict mode says so
                self.overflows.append((self.where, str(d)))
                return None
            return d if d >= 0 else None
        if d in self._too_large:
            self.overflows.append((self.where, D.to_str(d)))
            return None
        out = self._written.get(d)
        if out is None:
            least = syntactic_lower(d)  # past int64 at every binding, whatever the run learned
            if least is not None and least > INT64_MAX:
                self._too_large.add(d)
                self.overflows.append((self.where, D.to_str(d)))
                return None
            out = self._written[d] = self._symbolic(d)
        return out

    def _symbolic(self, d: D.Expr) -> str:
        if self._names is not None:
            return self._names.name(d)
        if D.is_variable(d) or self.style == "expressions":
            return D.to_str(d)
        return self.table.name_for(d)

    # -- keeping what a value already declares ------------------------------------------------

    def keep_declared(self, t: T.Type, out: TypeProto, old: TypeProto) -> None:
        """In ``out`` (``t`` as written), put back each ``dim_param`` of ``old`` (what the value
        declared) that denotes the extent ``t`` has there.

        It does where the extent provably equals what the name reads as; where inference took the
        declaration at its word (neither provably equal nor different, and no fresh variable
        involved: the engine kept the declared name as an equality the model states); and where
        an unknown extent has the very name the ``onnx`` style derives from what it is (the
        drop-in wrote this place before). A declared name against a provably different extent,
        or one the engine would not let an unknown extent take, is replaced; so is a name the
        model gives to extents inference does not prove equal (``conflicts``), everywhere but
        over the one it stands for. An integer extent always replaces a name, as in onnx.
        """
        if isinstance(t, (T.TensorType, T.SparseTensorType)):
            kind = "tensor_type" if isinstance(t, T.TensorType) else "sparse_tensor_type"
            if old.WhichOneof("value") != kind or t.shape is None:
                return
            had, has = getattr(old, kind), getattr(out, kind)
            if not had.HasField("shape") or len(had.shape.dim) != len(t.shape):
                return
            for d, was, now in zip(t.shape, had.shape.dim, has.shape.dim):
                if was.dim_param and not now.HasField("dim_value") and was.dim_param != now.dim_param:
                    if self._denotes(was.dim_param, d):
                        now.dim_param = was.dim_param
        elif isinstance(t, (T.SequenceType, T.OptionalType)):
            kind = "sequence_type" if isinstance(t, T.SequenceType) else "optional_type"
            if old.WhichOneof("value") == kind and out.WhichOneof("value") == kind:
                inner_old, inner_out = getattr(old, kind), getattr(out, kind)
                if inner_old.HasField("elem_type") and inner_out.HasField("elem_type"):
                    self.keep_declared(t.elem, inner_out.elem_type, inner_old.elem_type)
        elif isinstance(t, T.MapType):
            if old.WhichOneof("value") == "map_type" and out.WhichOneof("value") == "map_type":
                if old.map_type.HasField("value_type") and out.map_type.HasField("value_type"):
                    self.keep_declared(t.value, out.map_type.value_type, old.map_type.value_type)

    def _denotes(self, name: str, d: Dim) -> bool:
        if d is None:
            return True  # nothing inferred: the declaration is all there is
        if isinstance(d, int):
            return False
        conflict = self.conflicts.get(name)
        read = conflict if conflict is not None else _read_declared(self.table, name)
        same = None if read is None else D.equal(read, d)
        if same is not None:
            return same
        if not self.table.is_fresh(d):
            return conflict is None
        # An unknown extent keeps the name it had when the drop-in wrote this place before.
        return self._names is not None and name == self._names.preferred(d)


def _read_declared(table: DimTable, name: str) -> Dim:
    """What a declared ``dim_param`` stands for, from variables the table already has (``None``
    if it names none of them or spells nothing they make up: ``DimTable.reading_of``)."""
    var = table.get(name)
    return var.symbol if var is not None else table.reading_of(name)


class TypeWriter:
    """Writes types into ``TypeProto`` fields, serializing each distinct type once.

    Repeated layers give thousands of values the same type (the engine shares the objects), and
    copying serialized bytes is cheaper than building the proto dim by dim. A type whose writing
    met an extent past int64 is written afresh each time, so that every place is reported.
    """

    def __init__(self, dims: DimWriter):
        self.dims = dims
        self.cache: dict[T.Type, bytes] = {}
        self._kept: dict[tuple[T.Type, bytes], bytes] = {}

    def serialized(self, t: T.Type) -> bytes:
        data = self.cache.get(t)
        if data is None:
            overflows = len(self.dims.overflows)
            data = _serialized(T.to_proto(t, self.dims))
            if len(self.dims.overflows) == overflows:
                self.cache[t] = data
        return data

    def write(self, t: T.Type, out: TypeProto, where: str = "") -> None:
        """Write ``t`` into ``out``; ``where`` names the place, should an extent overflow. In the
        ``onnx`` style, the ``dim_param``s ``out`` held are kept where they denote the same extent."""
        self.dims.where = where
        old = out.SerializeToString() if self.dims.keeps_declared and _has_dim_param(out) else b""
        if old:
            data = self._kept.get((t, old))
            if data is None:
                overflows = len(self.dims.overflows)
                was = TypeProto()
                was.CopyFrom(out)
                fresh = T.to_proto(t, self.dims)
                if fresh is None:  # UNKNOWN: a type with no field set
                    fresh = TypeProto()
                self.dims.keep_declared(t, fresh, was)
                data = fresh.SerializeToString()
                if len(self.dims.overflows) == overflows:
                    self._kept[(t, old)] = data
        else:
            data = self.serialized(t)
        out.Clear()
        out.MergeFromString(data)


def _serialized(tp: TypeProto | None) -> bytes:
    """``tp``'s bytes; ``None`` (``to_proto`` of ``UNKNOWN``) is a type with no field set: none."""
    return b"" if tp is None else tp.SerializeToString()


def _has_dim_param(tp: TypeProto) -> bool:
    kind = tp.WhichOneof("value")
    if kind in ("tensor_type", "sparse_tensor_type"):
        return any(d.dim_param for d in getattr(tp, kind).shape.dim)
    if kind in ("sequence_type", "optional_type"):
        inner = getattr(tp, kind)
        return inner.HasField("elem_type") and _has_dim_param(inner.elem_type)
    if kind == "map_type":
        return tp.map_type.HasField("value_type") and _has_dim_param(tp.map_type.value_type)
    return False


# -- the onnx style's names -----------------------------------------------------------------------


class _OnnxNames:
    """Names of symbolic extents as the drop-in writes them.

    A generated name is ``unk__`` and a number hashed from a key saying what the extent is: for a
    fresh variable, its node (the graph found by the outputs of the nodes holding it, not by
    position), output and axis; for an expression, its structure over such keys and declared
    names. No counter is involved, so an extent keeps its name when unrelated nodes come or go,
    and equal extents share one name. A name the model already uses, or that another key hashed
    to, is never given again: the number is advanced until it is free.
    """

    def __init__(self, table: DimTable, model: ModelProto | None, given: Iterable[str] | None = None):
        self.table = table
        self.model = model
        declared = set(given if given is not None else _dim_params(model) if model is not None else ())
        self.taken: dict[str, str] = dict.fromkeys(declared | set(table.reserved), "")
        self.spellings = self._spellings(declared)
        self._graph_keys: dict[str, str] = {}
        self._keys: dict[D.Expr, str] = {}
        self._names: dict[str, str] = {}  # key -> the name given
        # Fresh variables are named first, all at once, so that which name wins where two keys
        # hash alike does not depend on the order in which values are written.
        self._fresh_keys = self._keys_of_fresh()
        for key in self._fresh_keys.values():
            self._claim(key)

    def _spellings(self, declared: set[str]) -> dict[Dim, str]:
        """Expressions that declared names which are no identifiers spell (``past + seq``, or
        ``sequence + 5`` as onnxruntime writes its own), each to its spelling (the least, should
        two spell one extent)."""
        out: dict[Dim, str] = {}
        for name in sorted(declared):
            if is_identifier(name) or self.table.get(name) is not None:
                continue
            d = _read_declared(self.table, name)
            if D.is_symbolic(d) and not D.is_variable(d):
                out.setdefault(d, name)
        return out

    def name(self, d: D.Expr) -> str:
        var = D.variable_name(d)
        if var is not None and var not in self._fresh_keys:
            return var  # a declared variable
        if var is None:
            spelled = self.spellings.get(d)
            if spelled is not None:
                return spelled
        return self._claim(self.key(d))

    def preferred(self, d: D.Expr) -> str | None:
        """The name ``d``'s key hashes to, before any advance past a taken one: what the drop-in
        wrote for this extent where the name was still free (``None`` for a declared variable)."""
        var = D.variable_name(d)
        if var is not None and var not in self._fresh_keys:
            return None
        return UNKNOWN_PREFIX + str(_hash(self.key(d)))

    def key(self, d: D.Expr) -> str:
        """What ``d`` is, as text over fresh variables' keys and declared names, independent of
        the order of terms (which follows the variables' names, and fresh variables are named by
        a counter)."""
        out = self._keys.get(d)
        if out is None:
            out = self._keys[d] = D.key_text(d, self._fresh_keys)
        return out

    def _keys_of_fresh(self) -> dict[str, str]:
        """Every fresh variable's key, in the table's order; variables of one node, output and
        axis (a node's shared extents) are told apart by their order there."""
        counts: dict[str, int] = {}
        out: dict[str, str] = {}
        for var in self.table:
            if not var.is_fresh:
                continue
            o = var.origin
            if o.site is None:
                key = f"fresh|{var.name}"
            else:
                key = f"fresh|{self._graph_key(o.site.graph)}|{o.site.op_type}|{o.value}|{o.axis}"
            seen = counts.get(key, 0)
            counts[key] = seen + 1
            out[var.name] = key if not seen else f"{key}#{seen}"
        return out

    def _claim(self, key: str) -> str:
        name = self._names.get(key)
        if name is not None:
            return name
        h = _hash(key)
        while True:
            name = f"{UNKNOWN_PREFIX}{h}"
            if name not in self.taken:
                self.taken[name] = key
                self._names[key] = name
                return name
            h = (h + 1) % _NAME_SPACE

    def _graph_key(self, path: str) -> str:
        """``path`` with each node index replaced by that node's first output (its identity,
        which inserting or removing other nodes does not change)."""
        key = self._graph_keys.get(path)
        if key is None:
            key = self._graph_keys[path] = self._by_identity(GraphPath(path))
        return key

    def _by_identity(self, path: GraphPath) -> GraphPath:
        out = GraphPath(path.root)
        nodes: list[NodeProto] | None = list(self.model.graph.node) if self.model is not None else None
        for step in path.steps():
            node = nodes[step.index] if nodes is not None and step.index < len(nodes) else None
            ident = next((o for o in node.output if o), node.name) if node is not None else f"#{step.index}"
            out = out.down(step, ident)
            nodes = self._nodes_within(node, step)
        return out

    def _nodes_within(self, node: NodeProto | None, step: Step) -> list[NodeProto] | None:
        if node is None or self.model is None:
            return None
        if step.call:
            body = next((f for f in self.model.functions if f"{f.domain}.{f.name}" == step.name), None)
            return list(body.node) if body is not None else None
        graph = next((a.g for a in node.attribute if a.name == step.name and a.HasField("g")), None)
        return list(graph.node) if graph is not None else None


def _hash(key: str) -> int:
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest(), "big") % _NAME_SPACE


def _dim_params(model: ModelProto) -> Iterator[str]:
    """Every ``dim_param`` a model declares on values of its graphs and functions."""
    yield from _graph_params(model.graph)
    for f in model.functions:
        for vi in f.value_info:
            yield from type_params(vi.type)
    yield from function_params(model)


def function_params(model: ModelProto) -> Iterator[str]:
    """The ``dim_param`` names declared in graphs that nodes of ``model``'s functions hold: what
    the limits scan, which reads every other declaration, does not read."""
    for f in model.functions:
        for node in f.node:
            for g in _subgraphs(node):
                yield from _graph_params(g)


def _graph_params(g: GraphProto) -> Iterator[str]:
    stack = [g]
    while stack:
        g = stack.pop()
        for vi in (*g.input, *g.output, *g.value_info):
            yield from type_params(vi.type)
        for node in g.node:
            if node.attribute:  # (most nodes have no attribute to look through)
                stack.extend(_subgraphs(node))


def _subgraphs(node: NodeProto) -> Iterator[GraphProto]:
    for a in node.attribute:
        if a.HasField("g"):
            yield a.g
        yield from a.graphs


def type_params(tp: TypeProto) -> Iterator[str]:
    """The ``dim_param`` names a declared type holds, nested types' included."""
    kind = tp.WhichOneof("value")
    if kind in ("tensor_type", "sparse_tensor_type"):
        for d in getattr(tp, kind).shape.dim:
            if d.dim_param:
                yield d.dim_param
    elif kind in ("sequence_type", "optional_type"):
        inner = getattr(tp, kind)
        if inner.HasField("elem_type"):
            yield from type_params(inner.elem_type)
    elif kind == "map_type" and tp.map_type.HasField("value_type"):
        yield from type_params(tp.map_type.value_type)
