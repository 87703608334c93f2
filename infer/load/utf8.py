"""Is every string field of a model valid UTF-8? (Names are text; protobuf hands back ``bytes``.)

ONNX's messages are proto2, whose parser accepts any bytes in a string field. The check parses
the model's text as a copy of its message types whose string fields protobuf validates (edition
2023, ``utf8_validation = VERIFY``): that runs at C speed. The copy leaves out the fields that
hold numbers and bytes (tensor data, attribute values), which protobuf then keeps as they are
instead of building a list of them: a list of small integers would take 8 bytes an element.
The text is either the model's bytes as read, in pieces without its main graph's initializers
(``verify_pieces``), or the model serialized without them (``weightless_bytes``). Only when that
parse fails, or the copy cannot be built (an older protobuf), are the fields walked in Python,
which names the field at fault.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from onnx import GraphProto, ModelProto

from infer.load.wire import varint

if TYPE_CHECKING:  # pragma: no cover
    from infer.load.nodeview import ModelPieces

# Fields holding no text, left out of the verifying copy (onnx.proto's field numbers).
_NO_TEXT = {
    "TensorProto": {1, 4, 5, 6, 7, 9, 10, 11},  # dims, float/int32/string/int64_data, raw_data, double/uint64_data
    "AttributeProto": {2, 3, 4, 7, 8, 9},  # f, i, s, floats, ints, strings
}
# onnx.proto's field numbers, for ``weightless_bytes``.
_MODEL_GRAPH = 7
_MODEL_GRAPH_TAG = varint(_MODEL_GRAPH << 3 | 2)
_GRAPH_NODE = varint(1 << 3 | 2)
_GRAPH_WEIGHTS_AND_NODES = frozenset({1, 5, 15})  # node, initializer, sparse_initializer


@functools.cache
def _verifying_classes() -> tuple[Any, Any] | None:
    """ModelProto and GraphProto with UTF-8 validation on every string field and without the
    fields that hold no text (``_NO_TEXT``), or ``None`` if protobuf cannot build them."""
    try:
        from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

        fdp = descriptor_pb2.FileDescriptorProto()
        ModelProto.DESCRIPTOR.file.CopyToProto(fdp)
        old, new = f".{fdp.package}.", ".onnx_infer_utf8_check."
        fdp.name, fdp.package = "onnx_infer_utf8_check.proto", new.strip(".")
        fdp.syntax, fdp.edition = "editions", descriptor_pb2.EDITION_2023
        fs = descriptor_pb2.FeatureSet
        # proto2's semantics in edition terms, except that strings are verified.
        features = fdp.options.features
        features.field_presence = fs.EXPLICIT
        features.enum_type = fs.CLOSED
        features.repeated_field_encoding = fs.EXPANDED
        features.message_encoding = fs.LENGTH_PREFIXED
        features.json_format = fs.LEGACY_BEST_EFFORT
        features.utf8_validation = fs.VERIFY
        stack = list(fdp.message_type)
        while stack:
            msg = stack.pop()
            stack.extend(msg.nested_type)
            numbers = _NO_TEXT.get(msg.name, ())
            kept = [f for f in msg.field if f.number not in numbers]
            if len(kept) < len(msg.field):
                del msg.field[:]
                msg.field.extend(kept)
            for f in msg.field:
                if f.type_name.startswith(old):
                    f.type_name = new + f.type_name[len(old) :]
                if f.label == f.LABEL_REQUIRED:
                    f.label = f.LABEL_OPTIONAL
                    f.options.features.field_presence = fs.LEGACY_REQUIRED
                if f.options.HasField("packed"):
                    packed = f.options.packed
                    f.options.ClearField("packed")
                    f.options.features.repeated_field_encoding = fs.PACKED if packed else fs.EXPANDED
        pool = descriptor_pool.DescriptorPool()
        pool.Add(fdp)
        model, graph = (
            message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{fdp.package}.{name}"))
            for name in ("ModelProto", "GraphProto")
        )
        return model, graph
    except Exception:  # any protobuf without editions: the Python walk does the job
        return None


def _verifying_model_class() -> Any:
    """ModelProto with UTF-8 validation on every string field, or ``None`` if protobuf cannot."""
    classes = _verifying_classes()
    return None if classes is None else classes[0]


def verify_pieces(data: bytes, pieces: ModelPieces) -> bool | None:
    """Is every string of the serialized model ``data`` outside its main graph's initializers
    valid UTF-8? Each run of fields ``pieces`` found is parsed in place (nothing is copied but
    what protobuf keeps of it while parsing, and that is dropped at once). ``None``: this
    protobuf cannot tell (``non_utf8_field`` walks the parsed model instead). The initializers'
    own strings are checked on the parsed model (``bad_initializer``)."""
    classes = _verifying_classes()
    if classes is None:
        return None
    model, graph = classes
    view = memoryview(data)
    try:
        for start, end in pieces.model_runs:
            model.FromString(view[start:end])
        for start, end in pieces.graph_runs:
            graph.FromString(view[start:end])
    except Exception:  # a string that is not UTF-8 (or bytes protobuf refuses): the walk says which
        return False
    finally:
        view.release()
    return True


def bad_initializer(model: ModelProto) -> bool:
    """Does a string of the main graph's initializers fail to be UTF-8?"""
    graph = model.graph
    return any(_bad_tensor(t) for t in graph.initializer) or any(
        walk_non_utf8_field(t) for t in graph.sparse_initializer
    )


_NODES_JOINED = 256  # nodes serialized and joined at a time: their pieces are not all held at once


def weightless_bytes(model: ModelProto, nodes: bool = True) -> bytes:
    """``model`` serialized without its main graph's initializers (everything else kept, but the
    main graph's nodes unless ``nodes``): the bytes protobuf would give for a copy without them,
    made without copying the main graph's nodes (a node holding a list of millions of integers
    would be copied whole), each of which is serialized where it is. Fields are written in
    field-number order, as protobuf writes them."""
    if not model.HasField("graph"):
        # (the type stated: protobuf is unhinted here, its results Any)
        whole: bytes = _shell(model, ModelProto, lambda n: True).SerializeToString()
        return whole
    g = model.graph
    before = _shell(model, ModelProto, lambda n: n < _MODEL_GRAPH).SerializeToString()
    parts = [before, _MODEL_GRAPH_TAG, b""]  # the graph's length goes in the third place
    node_list = g.node if nodes else ()
    for start in range(0, len(node_list), _NODES_JOINED):  # GraphProto.node is field 1: first
        chunk: list[bytes] = []
        for node in node_list[start : start + _NODES_JOINED]:
            data = node.SerializeToString()
            chunk += (_GRAPH_NODE, varint(len(data)), data)
        parts.append(b"".join(chunk))  # (a node's bytes, its length and protobuf's wrapper go here)
    parts.append(_shell(g, GraphProto, lambda n: n not in _GRAPH_WEIGHTS_AND_NODES).SerializeToString())
    parts[2] = varint(sum(map(len, parts)) - len(before) - len(_MODEL_GRAPH_TAG))
    parts.append(_shell(model, ModelProto, lambda n: n > _MODEL_GRAPH).SerializeToString())
    # One join of the chunks: no joined graph beside them, nor every node's bytes and wrapper
    # (GPT-2's 1.8 MB made a 7.0 MB peak that way).
    return b"".join(parts)


def non_utf8_field(model: ModelProto, weightless: bytes | None = None) -> str | None:
    """The path of the first string field of ``model`` that is not UTF-8, else ``None``.

    ``weightless``: ``weightless_bytes(model)``, if the caller has made it.
    """
    verifying = _verifying_model_class()
    if verifying is not None:
        try:
            # The weights are left out: they hold no text, and serializing them would take time
            # and as much memory again as the model. Initializers' own strings are walked.
            verifying.FromString(weightless_bytes(model) if weightless is None else weightless)
            if not bad_initializer(model):
                return None
        except Exception:
            pass  # some string is not UTF-8 (or protobuf objects): the walk says which
    return walk_non_utf8_field(model)


def _repeated(fd: FieldDescriptor) -> bool:
    # ``is_repeated`` in protobuf >= 6; ``label`` before (and removed since).
    return bool(fd.is_repeated if hasattr(fd, "is_repeated") else fd.label == FieldDescriptor.LABEL_REPEATED)


def _shell(src: Message, cls: Any, keep: Callable[[int], bool]) -> Message:
    """A new ``cls`` holding the set fields of ``src`` whose numbers ``keep`` keeps (C-level copies)."""
    dst = cls()
    for fd, value in src.ListFields():
        if not keep(fd.number):
            continue
        if _repeated(fd):
            getattr(dst, fd.name).extend(value)
        elif fd.type == FieldDescriptor.TYPE_MESSAGE:
            getattr(dst, fd.name).CopyFrom(value)
        else:
            setattr(dst, fd.name, value)
    return dst


def _bad_tensor(t: Message) -> bool:
    """Does an initializer hold a string that is not UTF-8? (Its data fields are bytes, not text.)"""
    if type(t.name) is bytes or type(t.doc_string) is bytes:
        return True
    return bool(len(t.external_data) or len(t.metadata_props)) and walk_non_utf8_field(t) is not None


class _Plan:
    """The string and message fields of one message type, for the walk."""

    __slots__ = ("messages", "repeated_messages", "repeated_strings", "strings")

    def __init__(self, descriptor: Any):
        self.strings: list[str] = []
        self.repeated_strings: list[str] = []
        self.messages: list[str] = []
        self.repeated_messages: list[str] = []
        for fd in descriptor.fields:
            repeated = _repeated(fd)
            if fd.type == FieldDescriptor.TYPE_STRING:
                (self.repeated_strings if repeated else self.strings).append(fd.name)
            elif fd.type == FieldDescriptor.TYPE_MESSAGE:
                (self.repeated_messages if repeated else self.messages).append(fd.name)


_PLANS: dict[Any, _Plan] = {}


def _plan(descriptor: Any) -> _Plan:
    plan = _PLANS.get(descriptor)
    if plan is None:
        plan = _PLANS[descriptor] = _Plan(descriptor)
    return plan


Trail = tuple | None  # (parent trail, field name, index or None): a path built only when needed


def walk_non_utf8_field(model: Message) -> str | None:
    """``non_utf8_field`` by visiting every message in Python, without recursion."""
    stack: list[tuple[Message, Trail]] = [(model, None)]
    while stack:
        msg, trail = stack.pop()
        plan = _plan(msg.DESCRIPTOR)
        for name in plan.strings:
            if type(getattr(msg, name)) is bytes:
                return _path((trail, name, None))
        for name in plan.repeated_strings:
            for k, v in enumerate(getattr(msg, name)):
                if type(v) is bytes:
                    return _path((trail, name, k))
        for name in plan.messages:
            if msg.HasField(name):
                stack.append((getattr(msg, name), (trail, name, None)))
        for name in plan.repeated_messages:
            values = getattr(msg, name)
            if values:
                stack.extend((v, (trail, name, k)) for k, v in enumerate(values))
    return None


def _path(trail: Trail) -> str:
    """``model.graph.node[3].name`` from a trail."""
    parts: list[str] = []
    while trail is not None:
        trail, name, index = trail
        parts.append(f".{name}" if index is None else f".{name}[{index}]")
    return "model" + "".join(reversed(parts))


# -- strings that are not UTF-8, for the drop-ins ------------------------------------------------


def text_only(model: ModelProto, weightless: bytes | None = None) -> dict[str, bytes]:
    """Replace, in place, every string of ``model`` that is not UTF-8 by a placeholder name (one
    for each distinct string, an identifier no string of the model is), and return each
    placeholder's bytes; ``{}`` when every string is UTF-8 (``weightless``: its
    ``weightless_bytes``, if made, for the check).

    onnx's inference reads such a model and writes its types (names are bytes to it); the
    engine reads text, so the drop-ins infer the model with placeholders, and ``restore`` puts
    the bytes back in what they return.
    """
    if non_utf8_field(model, weightless) is None:
        return {}
    texts: set[str] = set()
    raw: set[bytes] = set()

    def collect(v: str | bytes) -> None:
        (texts if type(v) is str else raw).add(v)  # type: ignore[arg-type]

    _rewrite_strings(model, collect)
    names: dict[bytes, str] = {}
    for b in sorted(raw):
        name, salt = _placeholder(b, 0), 0
        while name in texts:  # a model may spell a placeholder itself
            salt += 1
            name = _placeholder(b, salt)
        names[b] = name
    _rewrite_strings(model, lambda v: names.get(v) if type(v) is bytes else None)
    return {name: b for b, name in names.items()}


def restore(model: ModelProto, placeholders: dict[str, bytes]) -> None:
    """Put back, in place, the bytes each of ``placeholders`` (from ``text_only``) stands for."""
    if placeholders:
        _rewrite_strings(model, lambda v: placeholders.get(v) if type(v) is str else None)


def readable(text: str, placeholders: dict[str, bytes]) -> str:
    """``text`` (a message) with each placeholder written as its bytes, invalid ones escaped."""
    for name, b in placeholders.items():
        text = text.replace(name, b.decode("utf-8", "backslashreplace"))
    return text


def _placeholder(b: bytes, salt: int) -> str:
    digest = hashlib.sha256(salt.to_bytes(4, "little") + b).hexdigest()[:16]
    return f"onnx_infer_non_utf8_{digest}"


def _rewrite_strings(root: Message, change: Callable[[str | bytes], str | bytes | None]) -> None:
    """Each string of ``root`` and the messages in it (without recursion) set to ``change(value)``,
    where that is not ``None``."""
    stack = [root]
    while stack:
        msg = stack.pop()
        plan = _plan(msg.DESCRIPTOR)
        for name in plan.strings:
            new = change(getattr(msg, name))
            if new is not None:
                _set_strings(msg, name, [new])
        for name in plan.repeated_strings:
            values = getattr(msg, name)
            if values:
                changed = [change(v) for v in values]
                if any(v is not None for v in changed):
                    _set_strings(msg, name, [v if c is None else c for v, c in zip(values, changed)])
        for name in plan.messages:
            if msg.HasField(name):
                stack.append(getattr(msg, name))
        for name in plan.repeated_messages:
            stack.extend(getattr(msg, name))


def _set_strings(msg: Message, name: str, values: list[str | bytes]) -> None:
    """Set the string field ``name`` of ``msg`` (repeated or not) to ``values``. Protobuf refuses
    to assign bytes that are not UTF-8 to a string field, but parses them: those are merged in
    serialized."""
    fd = msg.DESCRIPTOR.fields_by_name[name]
    msg.ClearField(name)
    if not _repeated(fd) and type(values[0]) is str:
        setattr(msg, name, values[0])
        return
    tag = varint(fd.number << 3 | 2)
    data = [v.encode() if isinstance(v, str) else v for v in values]
    msg.MergeFromString(b"".join(tag + varint(len(d)) + d for d in data))
