"""Reading a model from a path, bytes or a ``ModelProto``, with one-line errors.

Weights in external files are never read here (Clause 13): inference needs types, not data (the
engine may read a few small integer tensors, on request, through ``infer.load.external``). A path is
read only if it names a regular file no larger than the limit (Clause 15.4): a FIFO, a device or
a file of many gigabytes is refused before anything is allocated.
"""

from __future__ import annotations

import itertools
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.protobuf.message import DecodeError
from onnx import ModelProto

from infer.core.limits import MAX_MODEL_BYTES
from infer.load.nodeview import NodeBytes, light_nodes, split_model
from infer.load.utf8 import bad_initializer, non_utf8_field, verify_pieces, walk_non_utf8_field, weightless_bytes
from infer.load.wire import varint

ModelSource = ModelProto | bytes | bytearray | str | os.PathLike


class ModelLoadError(Exception):
    """The input is not a readable ONNX model. The message is one line, fit for a user."""


@dataclass(frozen=True)
class Loaded:
    model: ModelProto
    directory: Path | None  # where external data would be resolved; None for bytes and protos
    owned: bool  # True when we parsed the bytes ourselves and may annotate in place
    # The main graph's nodes as byte ranges of the bytes the model was parsed from, or each
    # serialized (from the copy without weights the UTF-8 check of a ``ModelProto`` is made on);
    # the engine's scan reads the nodes from them (``nodeview``), and releases them.
    light_nodes: NodeBytes | list[bytes | None] | None = None
    # The model serialized without its main graph's initializers, where the loader made it (the
    # UTF-8 check of a ``ModelProto``): what ``infer.walk.reuse`` keys a result on.
    weightless: bytes | None = None


def _parse(data: bytes, what: str) -> tuple[ModelProto, Any]:
    """The model in ``data``, and the main graph's nodes as ``nodeview`` reads them.

    Memory: the bytes and the parsed model are the two copies held at once (Clause 15.4). The
    text is checked first, in place (``utf8.verify_pieces``), and the nodes are byte ranges of
    ``data``; only when the bytes hold what that walk does not read is the model serialized
    again without its weights for the check (``_check_strings``).
    """
    pieces = split_model(data)
    verified = verify_pieces(data, pieces) if pieces is not None else None
    model = ModelProto()
    try:
        model.ParseFromString(data)
    except (DecodeError, ValueError, RuntimeError) as e:
        raise ModelLoadError(f"{what} is not an ONNX model: protobuf could not parse it ({e})") from None
    except RecursionError:
        raise ModelLoadError(f"{what} is not an ONNX model: its messages nest too deeply") from None
    if not model.HasField("graph"):
        raise ModelLoadError(f"{what} is not an ONNX model: it has no graph")
    if pieces is None or verified is None:
        return model, _check_strings(model, what)[0]
    if not verified or bad_initializer(model):
        field = walk_non_utf8_field(model)
        if field is not None:
            raise ModelLoadError(f"{what} is not an ONNX model: the string {field} is not valid UTF-8")
    return model, pieces.nodes


def _check_strings(model: ModelProto, what: str) -> tuple[Any, bytes | None]:
    """Every string field must be UTF-8 (names are text); protobuf hands back ``bytes`` otherwise.

    Returns the main graph's light nodes (``nodeview.light_nodes``), parsed from the copy of the
    model the check is made on, or ``None``; and that copy's bytes (the model without its main
    graph's initializers), or ``None``.
    """
    try:
        weightless: bytes | None = weightless_bytes(model)
    except Exception:  # protobuf could not serialize it: the check walks the fields instead
        weightless = None
    field = non_utf8_field(model, weightless)
    if field is not None:
        raise ModelLoadError(f"{what} is not an ONNX model: the string {field} is not valid UTF-8")
    return (None, None) if weightless is None else (light_nodes(weightless), weightless)


def model_bytes(model: ModelProto, weightless: bytes, limit: int) -> int:
    """The bytes ``model`` serializes to (``weightless``: its ``weightless_bytes``), but for the
    growth of its graph's length prefix (at most 4 bytes), counted until past ``limit``.

    The initializers are measured one by one (``ByteSize``, which with upb serializes each
    without keeping the bytes), so a model far past the limit is not measured whole.
    """
    size = len(weightless)
    g = model.graph
    for t in itertools.chain(g.initializer, g.sparse_initializer):
        if size > limit:
            break
        n = t.ByteSize()
        size += 1 + len(varint(n)) + n  # the field's one-byte tag and its length
    return size


def _not_a_file(path: Path, mode: int) -> ModelLoadError:
    if stat.S_ISDIR(mode):
        return ModelLoadError(f"{path} is a directory, not a model file")
    kind = "a pipe (FIFO)" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"
    return ModelLoadError(f"{path} is {kind}, not a regular file; save the model to a file")


def _missing(path: Path) -> ModelLoadError:
    try:
        return ModelLoadError(f"{path} is a symbolic link to {os.readlink(path)}, which does not exist")
    except OSError:  # not a link
        pass
    return ModelLoadError(f"{path}: no such file")


def _read_file(path: Path, max_bytes: int) -> bytes:
    """The bytes of the regular file ``path``.

    Its type is checked before it is opened (a FIFO would block, a device could do anything on
    open) and again on the open file, with the size; the descriptor is closed on every path out.
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise _missing(path) from None
    except OSError as e:
        raise ModelLoadError(f"{path}: cannot read ({e.strerror or e})") from None
    if not stat.S_ISREG(st.st_mode):
        raise _not_a_file(path, st.st_mode)
    try:
        # O_NONBLOCK: a FIFO swapped in after the check opens without waiting for a writer.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise _missing(path) from None
    except OSError as e:
        raise ModelLoadError(f"{path}: cannot read ({e.strerror or e})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _not_a_file(path, st.st_mode)
        if st.st_size > max_bytes:
            raise ModelLoadError(
                f"{path} has {st.st_size} bytes, above the limit of {max_bytes} (max_model_bytes, Clause 15.4)"
            )
        with os.fdopen(fd, "rb", closefd=False) as f:
            # Read the size fstat gave, plus one byte to see whether the file grew meanwhile.
            data = f.read(st.st_size + 1)
            if len(data) > st.st_size:
                data += f.read(max_bytes + 1 - len(data))
    except OSError as e:
        raise ModelLoadError(f"{path}: cannot read ({e.strerror or e})") from None
    finally:
        os.close(fd)
    if len(data) > max_bytes:  # it grew while being read
        raise ModelLoadError(f"{path} is larger than the limit of {max_bytes} bytes (max_model_bytes)")
    return data


def load(source: ModelSource, max_bytes: int = MAX_MODEL_BYTES) -> Loaded:
    """Load ``source``; raise ``ModelLoadError`` with a one-line reason on failure."""
    if isinstance(source, ModelProto):
        return _from_proto(source, "the ModelProto", max_bytes, owned=False)
    if isinstance(source, (bytes, bytearray, memoryview)):
        if len(source) > max_bytes:
            raise ModelLoadError(f"the given bytes are {len(source)}, above the limit of {max_bytes} (max_model_bytes)")
        if not len(source):
            raise ModelLoadError("the given bytes are empty")
        model, light = _parse(bytes(source), "the given bytes")
        return Loaded(model, None, owned=True, light_nodes=light)
    if isinstance(source, (str, os.PathLike)):
        text = os.fsdecode(source)
        if not text:  # Path("") would be the working directory
            raise ModelLoadError("the model path is empty")
        if "\0" in text:
            raise ModelLoadError("the path contains a NUL character")
        path = Path(text)
        data = _read_file(path, max_bytes)
        if not data:
            raise ModelLoadError(f"{path} is empty")
        model, light = _parse(data, str(path))
        del data  # ``light`` holds the bytes until the scan has read the nodes: then they are released
        return Loaded(model, path.resolve().parent, owned=True, light_nodes=light)
    proto = _from_onnx_ir(source)
    if proto is not None:
        return _from_proto(proto, "the onnx_ir model", max_bytes, owned=True)
    raise ModelLoadError(f"cannot load a model from a {type(source).__name__}")


def _from_proto(model: ModelProto, what: str, max_bytes: int, owned: bool) -> Loaded:
    """``model`` checked as the bytes of a file are: a graph, text in UTF-8, at most ``max_bytes``."""
    if not model.HasField("graph"):
        raise ModelLoadError(f"{what} has no graph")
    light, weightless = _check_strings(model, what)
    # (Where protobuf cannot serialize the model it cannot measure it either; the scan's limits
    # refuse what it holds.)
    size = model_bytes(model, weightless, max_bytes) if weightless is not None else 0
    if size > max_bytes:
        raise ModelLoadError(f"{what} has {size} bytes or more, above the limit of {max_bytes} (max_model_bytes)")
    return Loaded(model, None, owned=owned, light_nodes=light, weightless=weightless)


def _from_onnx_ir(source: object) -> ModelProto | None:
    """An ``onnx_ir.Model`` (the optional ``ir`` extra) as a ModelProto, else ``None``."""
    if not type(source).__module__.startswith("onnx_ir"):
        return None  # onnx_ir is imported only for its own objects: it stays optional
    import onnx_ir

    if not isinstance(source, onnx_ir.Model):
        return None
    try:
        return onnx_ir.serde.serialize_model(source)
    except Exception as e:  # onnx_ir raises various errors for models it cannot serialize
        raise ModelLoadError(f"cannot convert the onnx_ir model to a ModelProto: {e}") from None
