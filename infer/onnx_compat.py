"""A drop-in for ``onnx.shape_inference.infer_shapes`` backed by this engine.

    from infer import onnx_compat
    model = onnx_compat.infer_shapes(model, strict_mode=True, data_prop=True)

Same arguments and return type as onnx's function (docs/onnx-compat.md):

- returns an inferred copy; the model passed in is never modified;
- ``check_type`` raises ``InferenceError`` where a node's inputs violate its operator's type
  constraints or arity; ``strict_mode`` raises it where inference finds an error onnx's strict
  mode also fails on (contradicting extents, bad attributes, a declared type that contradicts
  the inferred one in element type, rank or a known extent, a node input of unknown type);
- declared types (``value_info``, graph outputs) are honoured and refined, never dropped;
- ``value_info`` is added only for values whose type is known; graph outputs are typed in place;
- dims are written the way onnx's tools and onnxruntime's symbolic shape inference read them
  (infer/core/dimwriter.py, the ``onnx`` style): ``dim_value`` for integers, declared names as
  declared, one ``unk__`` name derived from content per other symbolic extent, and a name a
  value already declares kept where it denotes the same extent, so that the output is a fixed
  point: inferring it again gives it back unchanged;
- ``data_prop=False`` reads only constants' contents (initializers, Constant nodes), as onnx does.

An initializer that is also a graph input is read as a constant, as onnx reads it: a caller of
onnx's API asks for the shapes under the model's own values. Clause 7.2 makes it a default the
caller may override; ``initializers_as_constants=False`` reads it that way (its contents unknown,
only its declared type used), as the engine itself always does.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import onnx
from onnx import GraphProto, ModelProto, NodeProto, TypeProto, ValueInfoProto
from onnx.checker import ValidationError
from onnx.shape_inference import InferenceError

from infer.core import types as T
from infer.core.diagnostics import Diagnostic, Location
from infer.core.dimwriter import DimWriter, TypeWriter, function_params, type_params
from infer.core.scopes import MAIN, GraphPath, find_record, resolve_graph
from infer.core.values import Value
from infer.load.nodeview import light_nodes
from infer.load.utf8 import readable, restore, text_only, weightless_bytes
from infer.out.annotate import type_field, value_info_entry
from infer.walk import reuse
from infer.walk.engine import Engine, GraphRecord, Options, collector_paused

__all__ = ["InferenceError", "infer_shapes", "infer_shapes_path"]

# Diagnostic codes that fail strict mode: onnx's strict mode fails on the same conditions (and,
# stricter than onnx, on a node whose inputs or outputs do not fit its operator's arity).
STRICT_CODES = frozenset({
    "shape-mismatch", "bad-attribute", "missing-attribute", "attribute-type", "missing-input",
    "arity", "undefined-value", "initializer-size", "custom-inference",
})  # fmt: skip
# Warnings that fail strict mode all the same: onnx's data propagation fails on integer overflow.
STRICT_WARNINGS = frozenset({"integer-overflow"})
# Codes that fail ``check_type`` even outside strict mode (onnx checks a node's inputs against
# its schema there).
CHECK_TYPE_CODES = frozenset({"type-mismatch", "arity", "missing-input"})
# Codes onnx fails on whatever the mode.
ALWAYS_CODES = frozenset({"domain-not-imported"})
# Codes onnx reports as a ``ValidationError`` whatever the mode.
VALIDATION_CODES = frozenset({"recursion"})
# Further inferences of the written model at most, for subgraph output declarations to settle
# (one per level of loops nested in loop bodies).
SETTLE_PASSES = 4


@dataclass(frozen=True)
class _Problem:
    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


def infer_shapes(
    model: ModelProto | bytes,
    check_type: bool = False,
    strict_mode: bool = False,
    data_prop: bool = False,
    *,
    initializers_as_constants: bool = True,
) -> ModelProto:
    """Infer shapes like ``onnx.shape_inference.infer_shapes`` (see the module docstring).

    ``initializers_as_constants``: read an initializer that is also a graph input as a constant,
    as onnx does (the default); off, it is a default the caller may override (Clause 7.2) and its
    contents are unknown.

    A ``ModelProto`` whose content and arguments are those of a recent call gets that call's
    answer again (``infer.walk.reuse``): its output, or the same exception.
    """
    return inferred(model, (check_type, strict_mode, data_prop, initializers_as_constants), owned=False)


def inferred(model: ModelProto | bytes, arguments: tuple[bool, bool, bool, bool], owned: bool) -> ModelProto:
    """``infer_shapes(model, *arguments)``; ``owned``: ``model`` is the caller's to give up (its
    own copy), and is inferred in place instead of copied (``ort_compat``, ``infer_shapes_path``).
    The collector waits for the whole call, the reading and the writing too (``collector_paused``)."""
    with collector_paused():
        return _inferred(model, arguments, owned)


def _inferred(model: ModelProto | bytes, arguments: tuple[bool, bool, bool, bool], owned: bool) -> ModelProto:
    weightless = _weightless(model) if isinstance(model, ModelProto) else None
    key = _reuse_key(model, weightless, arguments)
    kept = reuse.RECENT.get(key) if key is not None else None
    if kept is not None:
        return _from_kept(kept, model)  # type: ignore[arg-type]
    proto = model if owned and isinstance(model, ModelProto) else _copy_of(model)
    placeholders = text_only(proto, weightless)  # strings that are not UTF-8, read as onnx reads them
    try:
        engine, nodes_written = _infer_shapes(proto, None if placeholders else weightless, *arguments)
    except RecursionError:  # a backstop: the limits refuse what nests too deeply before any recursion
        raise ValueError("the model nests too deeply to process") from None
    except (InferenceError, ValidationError) as e:
        if placeholders:  # the message names the strings the model holds
            e = _marked(type(e)(readable(str(e), placeholders)), getattr(e, "reusable", False))
        if key is not None and getattr(e, "reusable", False):
            reuse.RECENT.put(key, (type(e), str(e)))
        raise e from None
    restore(proto, placeholders)
    if key is not None and engine.reusable:
        # Kept without the main graph's initializers, and without its nodes where inference
        # wrote none of them (none holds a subgraph): both are the next caller's, unchanged.
        reuse.RECENT.put(key, _Kept(weightless_bytes(proto, nodes=nodes_written), nodes_written))
    return proto


@dataclass(frozen=True)
class _Kept:
    """A call's output kept for the next (``infer.walk.reuse``): serialized without the main graph's
    initializers, and without its nodes unless ``nodes``."""

    data: bytes
    nodes: bool


def _weightless(model: ModelProto) -> bytes | None:
    """``weightless_bytes(model)``, or ``None`` where protobuf cannot serialize it (the call
    reports why)."""
    try:
        return weightless_bytes(model)
    except Exception:  # protobuf raises EncodeError, or RuntimeError from upb
        return None


def _reuse_key(model: ModelProto | bytes, weightless: bytes | None, arguments: tuple) -> bytes | None:
    """The key of this call (``infer.walk.reuse``), where its answer may be kept: a ``ModelProto`` of
    at most ``MAX_KEPT_BYTES`` that protobuf can serialize."""
    if weightless is None or not isinstance(model, ModelProto) or not reuse.RECENT.enabled:
        return None
    if len(weightless) > reuse.MAX_KEPT_BYTES:
        return None
    # (The key measures the initializers as it goes: a model past the size is not measured twice.)
    key, size = reuse.model_key(model, weightless, ("onnx_compat", arguments))
    return key if size <= reuse.MAX_KEPT_BYTES else None


def _from_kept(kept: _Kept | tuple, model: ModelProto) -> ModelProto:
    """A recent call's answer for ``model``: its output (completed with ``model``'s initializers,
    and nodes where they were not kept) or its exception."""
    if isinstance(kept, tuple):
        error, message = kept
        raise error(message)
    out = ModelProto()
    out.ParseFromString(kept.data)
    if not kept.nodes:
        out.graph.node.extend(model.graph.node)
    out.graph.initializer.extend(model.graph.initializer)
    out.graph.sparse_initializer.extend(model.graph.sparse_initializer)
    return out


def _infer_shapes(
    proto: ModelProto,
    weightless: bytes | None,
    check_type: bool,
    strict_mode: bool,
    data_prop: bool,
    initializers_as_constants: bool,
) -> tuple[Engine, bool]:
    """``infer_shapes``' work on ``proto``, annotated in place (``weightless``: its
    ``weightless_bytes``, if made): the last run made, and whether the main graph's nodes may
    have been written (types on subgraphs: some node of the model holds one)."""
    engine = _engine(proto, weightless, data_prop, initializers_as_constants)
    refusals = engine.state.scan.refusals
    if refusals:
        # Past a limit of infer.Limits (subgraphs or types nested too deeply, too many nodes, a
        # rank too large) nothing is inferred: say so as onnx says that it cannot read a model
        # (ValueError), rather than return the copy untouched.
        reasons = list(dict.fromkeys(r.message for r in refusals))  # (one limit may be met twice)
        more = f" (and {len(reasons) - 1} more)" if len(reasons) > 1 else ""
        raise ValueError(f"the model is refused: {reasons[0]}{more}")
    validation = [d for d in engine.state.diagnostics if d.code in VALIDATION_CODES]
    if validation:
        raise _marked(ValidationError("\n".join(_describe(d) for d in validation)), engine.reusable)
    problems = _problems(proto, engine, check_type, strict_mode)
    # Only the graphs the run walked are written: without one, no subgraph's outputs change.
    walked = any(rec.kind == "graph" and path != MAIN for path, rec in engine.state.records.items())
    declared = _subgraph_outputs(proto) if walked else None
    writer = _dim_writer(proto, engine)
    _write(proto, engine, TypeWriter(writer))
    if strict_mode:
        problems += [_Problem(where, f"integer overflow: extent {v} exceeds int64") for where, v in writer.overflows]
    if problems:
        raise _marked(InferenceError("\n".join(str(p) for p in problems)), engine.reusable)
    # The types just written on subgraph outputs are declarations the next reader sees, and what
    # some operators give depends on them (after no iteration, a Loop's scan outputs have the
    # rank its body declares, in onnxruntime): infer again until they settle, so that inferring
    # the result once more gives it back unchanged.
    for _ in range(SETTLE_PASSES if declared is not None else 0):  # (nothing to settle without subgraphs)
        written = _subgraph_outputs(proto)
        if written == declared:
            break
        declared = written
        engine = _engine(proto, None, data_prop, initializers_as_constants)
        _write(proto, engine, TypeWriter(_dim_writer(proto, engine)))
    return engine, declared is not None


E = TypeVar("E", bound=Exception)


def _marked(e: E, reusable: bool) -> E:
    """``e``, marked as an answer later calls on the same model may be given (``infer.walk.reuse``)."""
    e.reusable = reusable  # type: ignore[attr-defined]  # a mark of our own on any exception, read by getattr
    return e


def _engine(proto: ModelProto, weightless: bytes | None, data_prop: bool, initializers_as_constants: bool) -> Engine:
    """The engine run on ``proto`` (an initializer that is also an input read as a constant if
    ``initializers_as_constants``); ``weightless``: ``proto``'s ``weightless_bytes``, if made."""
    if weightless is None:
        weightless = _weightless(proto)
    # The main graph's nodes are read faster from the weightless bytes (see nodeview); where
    # protobuf could not serialize them, the engine reads the nodes themselves.
    light = light_nodes(weightless) if weightless is not None else None
    with _defaulted_inputs_dropped(proto, initializers_as_constants):
        engine = Engine(proto, Options(propagate_values=data_prop, custom_schemas=True), light_nodes=light)
        engine.run()
    return engine


def _dim_writer(proto: ModelProto, engine: Engine) -> DimWriter:
    """The writer of ``engine``'s extents into ``proto``, told the names the model declares from
    what the limits scan read (no node's attributes read again), unless an attribute hid a graph
    from the scan (``Scan.hidden_graphs``: the writer reads the model)."""
    scan = engine.state.scan
    declared: set[str] | None = None
    if not scan.hidden_graphs:
        declared = set(scan.dim_params)
        declared.update(function_params(proto))
        for inp in proto.graph.input:  # (one an initializer defaults was left out of the run)
            declared.update(type_params(inp.type))
    return DimWriter(engine.state.table, "onnx", proto, engine.placement.conflicts, declared)


def _subgraph_outputs(model: ModelProto) -> list[bytes] | None:
    """The declared types of every subgraph's outputs, serialized; ``None`` for a model without
    subgraphs (writing types adds none)."""
    out: list[bytes] = []
    stack: list[GraphProto] = []
    _push_graph_attributes(model.graph.node, stack)
    for f in model.functions:
        _push_graph_attributes(f.node, stack)
    if not stack:
        return None
    while stack:
        g = stack.pop()
        out.extend(o.type.SerializeToString() for o in g.output)
        for n in g.node:
            stack.extend(_graph_attributes(n))
    return out


def _push_graph_attributes(nodes: Any, stack: list[GraphProto]) -> None:
    """The graphs held by attributes of ``nodes``, in order, appended to ``stack`` (as
    ``_graph_attributes`` gives them, without a generator per node: most nodes hold none, and
    every node of a model passes here)."""
    for n in nodes:
        attributes = n.attribute
        if not attributes:
            continue
        for a in attributes:
            if a.HasField("g"):
                stack.append(a.g)
            if a.graphs:
                stack.extend(a.graphs)


def _graph_attributes(node: NodeProto) -> Iterator[GraphProto]:
    for a in node.attribute:
        if a.HasField("g"):
            yield a.g
        yield from a.graphs


def infer_shapes_path(
    model_path: str | os.PathLike,
    output_path: str | os.PathLike = "",
    check_type: bool = False,
    strict_mode: bool = False,
    data_prop: bool = False,
    *,
    initializers_as_constants: bool = True,
) -> None:
    """Like ``onnx.shape_inference.infer_shapes_path``: read, infer, write (to the input if no output)."""
    if isinstance(model_path, ModelProto):
        raise TypeError("infer_shapes_path takes a model path (str or os.PathLike); use infer_shapes for a ModelProto")
    try:
        source, target = os.fspath(model_path), os.fspath(output_path)
    except TypeError as e:
        raise TypeError(f"infer_shapes_path takes paths as str or os.PathLike: {e}") from None
    try:
        model = onnx.load(source, load_external_data=False)
    except (OSError, ValueError) as e:  # onnx raises ValidationError for a file it cannot read
        raise ValidationError(f"cannot read a model from {source}: {e}") from None
    # The model just read is this call's own: inferred in place, not copied.
    out = inferred(model, (check_type, strict_mode, data_prop, initializers_as_constants), owned=True)
    onnx.save(out, target or source)


# -- input ----------------------------------------------------------------------------------------


def _copy_of(model: ModelProto | bytes) -> ModelProto:
    if isinstance(model, ModelProto):
        proto = ModelProto()
        proto.CopyFrom(model)
        return proto
    if isinstance(model, (bytes, bytearray)):
        proto = ModelProto()
        try:
            proto.ParseFromString(bytes(model))
        except Exception as e:  # protobuf raises DecodeError, or RuntimeError from the C++ parser
            raise ValueError(f"the bytes are not an ONNX model: protobuf could not parse them ({e})") from None
        return proto
    if isinstance(model, (str, os.PathLike)):
        raise TypeError(
            "infer_shapes takes a ModelProto or bytes. For Model paths (str or os.PathLike), use infer_shapes_path()."
        )
    raise TypeError(f"infer_shapes takes a ModelProto or bytes, not {type(model).__name__}")


@contextmanager
def _defaulted_inputs_dropped(model: ModelProto, dropped: bool) -> Iterator[None]:
    """With ``dropped``, ``model``'s top-level inputs that have an initializer are left out for
    the duration (the initializer is then a constant), and put back in order after: the model
    is the call's own copy, and copying it again would cost as much as the copy."""
    g = model.graph
    inits = {t.name for t in g.initializer} if dropped and len(g.input) else ()
    if not any(i.name in inits for i in g.input):
        yield
        return
    held = GraphProto()
    held.input.extend(g.input)  # small messages: copied, not the weights
    del g.input[:]
    g.input.extend(i for i in held.input if i.name not in inits)
    try:
        yield
    finally:
        del g.input[:]
        g.input.extend(held.input)


# -- errors ---------------------------------------------------------------------------------------


def _describe(d: Diagnostic) -> str:
    return f"[{d.code}] {d.location}: {d.message}"


def _problems(model: ModelProto, engine: Engine, check_type: bool, strict: bool) -> list[_Problem]:
    codes = ALWAYS_CODES | (STRICT_CODES | STRICT_WARNINGS if strict else frozenset())
    codes |= CHECK_TYPE_CODES if check_type else frozenset()
    out: list[_Problem] = []
    for d in _before_unsupported(engine.state.diagnostics):
        if d.code not in codes or (d.severity != "error" and not (strict and d.code in STRICT_WARNINGS)):
            continue
        if d.code == "undefined-value" and d.location.node_index is None:
            continue  # a graph output nothing produces: the checker's concern, not inference's
        out.append(_Problem(f"[{d.code}] {d.location}", d.message))
    if strict:
        out += _branch_clashes(model, engine, skip=_already_reported(out))
        out += _declared_clashes(model, engine)
        out += _untyped_inputs(model)
        out += _initializer_clashes(model.graph)
    return out


def _before_unsupported(diagnostics: list[Diagnostic]) -> Iterator[Diagnostic]:
    """The diagnostics up to the first operator no operator set defines.

    onnx cannot infer past an operator it does not know and reports nothing after it, so a model
    with a custom operator in the default domain still passes strict mode.
    """
    for d in diagnostics:
        if d.code == "unknown-operator":
            return
        yield d


def _already_reported(problems: list[_Problem]) -> frozenset[str]:
    return frozenset(p.where for p in problems)


def _branch_clashes(model: ModelProto, engine: Engine, skip: frozenset[str] = frozenset()) -> list[_Problem]:
    """If nodes whose branches give an output of different kinds or element types.

    onnx's strict mode fails on them (its If inference unites the branches' output types, which
    must agree in kind and element type, whichever branch runs); validation reports a tensor
    element type clash as a ``type-mismatch``, which alone fails only with ``check_type``. A
    branch the engine did not walk (its condition is known) counts with its declared output types.
    If nodes past the first operator no operator set defines are left alone, as onnx infers
    nothing there.
    """
    stops = _unknown_operator_sites(engine.state.diagnostics)
    seen: set[tuple[str, int]] = set()
    out: list[_Problem] = []
    for path in list(engine.state.records):
        last = GraphPath(path).last_step()
        if last is None or last[1].call or last[1].name not in ("then_branch", "else_branch"):
            continue
        head, index = last[0], last[1].index
        if (head, index) in seen:
            continue
        seen.add((head, index))
        parent = engine.state.records.get(head)
        if parent is None or _past_unknown_operator(head, index, stops) or index >= len(parent.nodes):
            continue
        node = parent.nodes[index]
        where = f"[type-mismatch] {Location(head, index, node.name, 'If')}"
        if node.op_type != "If" or where in skip:  # skipped: check_type reported the node already
            continue
        then = _branch_outputs(model, engine, head.subgraph(index, "then_branch"))
        other = _branch_outputs(model, engine, head.subgraph(index, "else_branch"))
        for k, (a, b) in enumerate(zip(then, other)):
            why = None if a is None or b is None else _union_clash(a, b)
            if why:
                out.append(_Problem(where, f"If output {k}: the then branch gives {why}"))
    return out


def _branch_outputs(model: ModelProto, engine: Engine, path: str) -> list[T.Type | None]:
    """The output types of the branch at ``path``: inferred if the engine walked it, else declared."""
    record = engine.state.records.get(path)
    if record is not None:
        values = [_lookup(engine, path, name) for name in record.outputs]
        return [None if v is None else v.type for v in values]
    g = resolve_graph(model, path)
    if g is None:
        return []
    return [T.from_proto(o.type, lambda t, axis: None) if o.HasField("type") else None for o in g.output]


def _union_clash(a: T.Type, b: T.Type) -> str | None:
    """How two branch outputs differ in kind or element type (``then ..., the else branch ...``)."""
    if isinstance(a, T.UnknownType) or isinstance(b, T.UnknownType):
        return None
    if type(a) is not type(b):
        return f"{a}, the else branch {b}"
    if isinstance(a, (T.TensorType, T.SparseTensorType)) and isinstance(b, (T.TensorType, T.SparseTensorType)):
        if a.elem and b.elem and a.elem != b.elem:
            return f"{T.elem_name(a.elem)}, the else branch {T.elem_name(b.elem)}"
        return None
    if isinstance(a, (T.SequenceType, T.OptionalType)) and isinstance(b, (T.SequenceType, T.OptionalType)):
        return _union_clash(a.elem, b.elem)
    if isinstance(a, T.MapType) and isinstance(b, T.MapType):
        if a.key and b.key and a.key != b.key:
            return f"map keys {T.elem_name(a.key)}, the else branch {T.elem_name(b.key)}"
        return _union_clash(a.value, b.value)
    return None


def _unknown_operator_sites(diagnostics: list[Diagnostic]) -> dict[str, int]:
    """Graph path -> index of the first node in it no operator set defines."""
    out: dict[str, int] = {}
    for d in diagnostics:
        if d.code == "unknown-operator" and d.location.node_index is not None:
            out.setdefault(str(d.location.graph), d.location.node_index)
    return out


def _past_unknown_operator(graph: str, index: int, stops: dict[str, int]) -> bool:
    """Is node ``index`` of ``graph`` at or after such a node of its graph or of a graph around it?"""
    while True:
        stop = stops.get(graph)
        if stop is not None and index >= stop:
            return True
        last = GraphPath(graph).last_step()
        if last is None:
            return False
        graph, index = last[0], last[1].index


def _declared_clashes(model: ModelProto, engine: Engine) -> list[_Problem]:
    """Declared types the inferred ones contradict in a way onnx also sees.

    onnx compares element types, ranks and integer extents; a declared name against an inferred
    expression is not a contradiction it can see (nor one every reader agrees on), so it is left
    to ``onnx-infer check``.
    """
    out: list[_Problem] = []
    for path, record, g in _graphs(model, engine):
        declared = {vi.name: vi.type for vi in (*g.value_info, *g.output) if vi.HasField("type")}
        for name in record.producers:
            tp = declared.get(name)
            v = record.values.get(name)
            if tp is not None and v is not None:
                why = _visible_clash(tp, v.type)
                if why:
                    out.append(_Problem(f"[declared-type-clash] {path}, value `{name}`", why))
        if path != MAIN:
            for inp in g.input:
                v = record.values.get(inp.name)
                if inp.HasField("type") and v is not None:
                    why = _visible_clash(inp.type, v.type, elem_only=True)
                    if why:
                        out.append(_Problem(f"[declared-type-clash] {path}, subgraph input `{inp.name}`", why))
    return out


def _visible_clash(tp: TypeProto, t: T.Type, elem_only: bool = False) -> str | None:
    """How a declared ``TypeProto`` and an inferred type differ in kind, element type, rank or an
    integer extent; ``None`` if they do not. ``elem_only``: compare kinds and element types."""
    kind = tp.WhichOneof("value")
    if kind is None or isinstance(t, T.UnknownType):
        return None
    if kind in ("tensor_type", "sparse_tensor_type"):
        cls = T.TensorType if kind == "tensor_type" else T.SparseTensorType
        if not isinstance(t, cls):
            return f"declared a {kind.replace('_type', '')}, inferred {t}"
        dt = getattr(tp, kind)
        if dt.elem_type and t.elem is not None and dt.elem_type != t.elem:
            return f"element type: declared {T.elem_name(dt.elem_type)}, inferred {T.elem_name(t.elem)}"
        if elem_only or not dt.HasField("shape") or t.shape is None:
            return None
        if len(dt.shape.dim) != len(t.shape):
            return f"rank: declared {len(dt.shape.dim)}, inferred {len(t.shape)}"
        for axis, (d, i) in enumerate(zip(dt.shape.dim, t.shape)):
            if d.HasField("dim_value") and isinstance(i, int) and d.dim_value != i:
                return f"extent at axis {axis}: declared {d.dim_value}, inferred {i}"
        return None
    if kind in ("sequence_type", "optional_type"):
        container = T.SequenceType if kind == "sequence_type" else T.OptionalType
        if not isinstance(t, container):
            return f"declared a {kind.replace('_type', '')}, inferred {t}"
        inner = getattr(tp, kind)
        return _visible_clash(inner.elem_type, t.elem, elem_only) if inner.HasField("elem_type") else None
    if kind == "map_type":
        if not isinstance(t, T.MapType):
            return f"declared a map, inferred {t}"
        if tp.map_type.key_type and t.key is not None and tp.map_type.key_type != t.key:
            return f"map key type: declared {T.elem_name(tp.map_type.key_type)}, inferred {T.elem_name(t.key)}"
        if not tp.map_type.HasField("value_type"):
            return None
        return _visible_clash(tp.map_type.value_type, t.value, elem_only)
    return None


def _untyped_inputs(model: ModelProto) -> list[_Problem]:
    """Top-level inputs and initializers of undefined element type that a node consumes.

    No operator can type its outputs from such a value; onnx's strict mode fails on it.
    """
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    typed_sparse = {t.values.name for t in g.sparse_initializer if t.values.data_type}
    untyped = {t.name for t in g.initializer if not t.data_type}
    untyped |= {
        i.name for i in g.input if i.name not in inits and i.name not in typed_sparse and not _has_elem_type(i.type)
    }
    if not untyped:
        return []
    used = {name for n in g.node for name in n.input}
    return [
        _Problem(f"`{name}`", "its element type is undefined, and a node consumes it")
        for name in sorted(untyped & used)
    ]


def _has_elem_type(tp: TypeProto) -> bool:
    kind = tp.WhichOneof("value")
    if kind in ("tensor_type", "sparse_tensor_type"):
        return bool(getattr(tp, kind).elem_type)
    return kind is not None


def _initializer_clashes(g: GraphProto) -> list[_Problem]:
    """Top-level inputs whose declared type contradicts the initializer giving their default."""
    inits = {t.name: t for t in g.initializer}
    out = []
    for inp in g.input:
        t = inits.get(inp.name)
        if t is None or not inp.HasField("type"):
            continue
        why = _visible_clash(inp.type, T.TensorType(t.data_type or None, tuple(int(d) for d in t.dims)))
        if why:
            out.append(_Problem(f"graph input `{inp.name}`", f"the initializer of that name differs: {why}"))
    return out


# -- writing --------------------------------------------------------------------------------------


def _writable(t: T.Type) -> bool:
    """Whether ``t`` can be written as a ``TypeProto`` onnx's tools accept: its kind and every
    element type are known."""
    if isinstance(t, (T.TensorType, T.SparseTensorType)):
        return t.elem is not None
    if isinstance(t, (T.SequenceType, T.OptionalType)):
        return _writable(t.elem)
    if isinstance(t, T.MapType):
        return t.key is not None and _writable(t.value)
    return isinstance(t, T.OpaqueType)


def _graphs(model: ModelProto, engine: Engine) -> Iterator[tuple[str, GraphRecord, GraphProto]]:
    for path, record in engine.state.records.items():
        if record.kind != "graph":
            continue
        g = resolve_graph(model, path)
        if g is not None:
            yield path, record, g


def _lookup(engine: Engine, path: str, name: str) -> Value | None:
    """The value ``name`` denotes in the graph at ``path``, enclosing graphs included."""
    record = find_record(engine.state.records, path, name)
    return None if record is None else record.values[name]


def _write(model: ModelProto, engine: Engine, types: TypeWriter) -> None:
    """Type every value the engine typed, in the graph where it lives (see the module docstring)."""
    for path, record, g in _graphs(model, engine):
        if path != MAIN:
            # Subgraph inputs may omit their types (Clause 7.1); the node binding them decides.
            for inp in g.input:
                v = record.values.get(inp.name)
                if v is not None and _writable(v.type):
                    types.write(v.type, inp.type, f"{path}, subgraph input `{inp.name}`")
        outputs = {o.name for o in g.output}
        entries = {vi.name: vi for vi in g.value_info}
        for o in g.output:
            v = _lookup(engine, path, o.name)
            if v is None or not _writable(v.type):
                continue
            untyped = not o.HasField("type")
            types.write(v.type, o.type, f"{path}, graph output `{o.name}`")
            if untyped or o.name in entries:
                # onnx lists an output the model left untyped in value_info as well.
                vi = entries.get(o.name) or g.value_info.add(name=o.name)
                entries[o.name] = vi
                vi.type.CopyFrom(o.type)
        added = _new_entries(path, record, outputs, entries, types)
        if added:
            g.MergeFromString(added)  # appended to g.value_info, in order


def _new_entries(
    path: str, record: GraphRecord, outputs: set[str], entries: dict[str, ValueInfoProto], types: TypeWriter
) -> bytes:
    """The ``value_info`` entries of the values ``record`` produced, serialized (a GraphProto
    fragment); a value the graph already lists (``entries``) is typed in place instead."""
    fields: dict[T.Type, bytes | None] = {}  # a type's field (``type_field``), or None: not writable
    added: list[bytes] = []
    values = record.values
    for name in record.producers:
        if name in outputs:
            continue
        t = values[name].type
        vi = entries.get(name) if entries else None
        if vi is not None:
            if _writable(t):
                types.write(t, vi.type, f"{path}, value `{name}`")
            continue
        field = fields.get(t, _UNSEEN)
        if field is _UNSEEN:
            if not _writable(t):
                field = fields[t] = None
            elif (data := types.cache.get(t)) is not None:
                field = fields[t] = type_field(data)
            else:  # written afresh: the place is named should an extent overflow
                types.dims.where = f"{path}, value `{name}`"
                overflows = len(types.dims.overflows)
                field = type_field(types.serialized(t))
                if len(types.dims.overflows) == overflows:  # (else each place is written, and named)
                    fields[t] = field
        if field is not None:
            added.append(value_info_entry(name, field))
    return b"".join(added)


_UNSEEN = b"unseen"  # a type not met yet (told apart by identity from every field)
