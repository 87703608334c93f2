"""Reading a model from a path, bytes or a ``ModelProto``, with one-line errors.

Weights in external files are never read here (Clause 13): inference needs types, not data.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from google.protobuf.message import DecodeError
from onnx import ModelProto

ModelSource = ModelProto | bytes | bytearray | str | os.PathLike


class ModelLoadError(Exception):
    """The input is not a readable ONNX model. The message is one line, fit for a user."""


@dataclass(frozen=True)
class Loaded:
    model: ModelProto
    directory: Path | None  # where external data would be resolved; None for bytes and protos
    owned: bool  # True when we parsed the bytes ourselves and may annotate in place


def _parse(data: bytes, what: str) -> ModelProto:
    model = ModelProto()
    try:
        model.ParseFromString(data)
    except (DecodeError, ValueError, RuntimeError) as e:
        raise ModelLoadError(f"{what} is not an ONNX model: protobuf could not parse it ({e})") from None
    except RecursionError:
        raise ModelLoadError(f"{what} is not an ONNX model: its messages nest too deeply") from None
    if not model.HasField("graph"):
        raise ModelLoadError(f"{what} is not an ONNX model: it has no graph")
    return model


def load(source: ModelSource) -> Loaded:
    """Load ``source``; raise ``ModelLoadError`` with a one-line reason on failure."""
    if isinstance(source, ModelProto):
        if not source.HasField("graph"):
            raise ModelLoadError("the ModelProto has no graph")
        return Loaded(source, None, owned=False)
    if isinstance(source, (bytes, bytearray, memoryview)):
        return Loaded(_parse(bytes(source), "the given bytes"), None, owned=True)
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        try:
            data = path.read_bytes()
        except IsADirectoryError:
            raise ModelLoadError(f"{path} is a directory, not a model file") from None
        except FileNotFoundError:
            raise ModelLoadError(f"{path}: no such file") from None
        except OSError as e:
            raise ModelLoadError(f"{path}: cannot read ({e.strerror or e})") from None
        if not data:
            raise ModelLoadError(f"{path} is empty")
        return Loaded(_parse(data, str(path)), path.resolve().parent, owned=True)
    raise ModelLoadError(f"cannot load a model from a {type(source).__name__}")
