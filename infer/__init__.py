"""onnx-infer: shape and type inference for ONNX models with symbolic dimensions.

import infer
result = infer.infer_model("model.onnx")
result.shape_of("logits")      # (batch, seq, 50257)
result.dims                    # the model-wide table of dimension variables
result.explain("y")            # why a dim is unknown, down to the root cause
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

# Light modules only: importing ``infer.types`` must not pull in the engine, since the rule
# modules (imported by the engine) import ``infer.types`` themselves.
from .diagnostics import Diagnostic, Location
from .dimtable import DimTable
from .loader import ModelLoadError, ModelSource
from .types import (
    UNKNOWN,
    MapType,
    OpaqueType,
    OptionalType,
    SequenceType,
    SparseTensorType,
    TensorType,
    Type,
)
from .values import Known, Value

if TYPE_CHECKING:  # pragma: no cover
    from .explain import Explanation
    from .node import NodeInference
    from .result import InferenceResult, Summary

_LAZY = {
    "InferenceResult": "result",
    "Summary": "result",
    "Explanation": "explain",
    "NodeInference": "node",
    "infer_node": "node",
    "Engine": "engine",
    "Options": "engine",
}


def __getattr__(name: str) -> Any:
    """The engine-side names, imported on first use (PEP 562)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'infer' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f".{module}", __name__), name)


__version__ = "0.1.0"

__all__ = [
    "infer_model",
    "infer_node",
    "NodeInference",
    "InferenceResult",
    "ModelLoadError",
    "Diagnostic",
    "Location",
    "DimTable",
    "Explanation",
    "Summary",
    "Type",
    "TensorType",
    "SparseTensorType",
    "SequenceType",
    "MapType",
    "OptionalType",
    "OpaqueType",
    "UNKNOWN",
    "Value",
    "Known",
]


def infer_model(
    model: ModelSource,
    *,
    dims_style: str = "expressions",
    dims: Mapping[str, int] | None = None,
    max_depth: int = 64,
) -> InferenceResult:
    """Infer the type and shape of every value of ``model``.

    ``model`` is a ``ModelProto`` (never modified), serialized bytes, or a path. ``dims_style``
    chooses how symbolic dims are written into ``result.model`` (``"expressions"`` or
    ``"strict"``); ``dims`` binds dimension variables to integers. Raises ``ModelLoadError``
    when the input is not a readable model; everything wrong *inside* a model is reported in
    ``result.diagnostics`` instead.
    """
    from .annotate import STYLES
    from .engine import Engine, Options
    from .loader import load
    from .result import InferenceResult

    if dims_style not in STYLES:
        raise ValueError(f"dims_style must be one of {STYLES}, not {dims_style!r}")
    loaded = load(model)
    engine = Engine(loaded.model, Options(dims_style=dims_style, bindings=dict(dims or {}), max_depth=max_depth))
    engine.run()
    return InferenceResult(engine, loaded.model, loaded.owned, dims_style)
