"""onnx-infer: shape and type inference for ONNX models with symbolic dimensions.

import infer
result = infer.infer_model("model.onnx")
result.shape_of("logits")      # (batch, seq, 50257)
result.dims                    # the model-wide table of dimension variables
result.explain("y")            # why a dim is unknown, down to the root cause

``import infer`` imports nothing else: each name below, and each short module name
(``infer.dims`` for ``infer.core.dims``, ``infer.core.imports.PUBLIC``), is imported when first
used, so that every module of the package imports alone and the layers hold at run time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from infer.core import imports
from infer.core.version import __version__ as __version__

if TYPE_CHECKING:  # what the names below are, for type checkers (nothing is imported at run time)
    from infer.core.diagnostics import Diagnostic, Location
    from infer.core.dimtable import DimTable
    from infer.core.limits import Limits
    from infer.core.types import (
        UNKNOWN,
        MapType,
        OpaqueType,
        OptionalType,
        SequenceType,
        SparseTensorType,
        TensorType,
        Type,
    )
    from infer.core.values import Known, Value
    from infer.load.loader import ModelLoadError
    from infer.out.explain import Explanation
    from infer.out.result import InferenceResult, Summary
    from infer.run import infer_model
    from infer.walk.node import NodeInference, infer_node

# Each public name and the module that defines it.
NAMES = {
    "infer_model": "infer.run",
    "infer_node": "infer.walk.node",
    "NodeInference": "infer.walk.node",
    "InferenceResult": "infer.out.result",
    "Summary": "infer.out.result",
    "ModelLoadError": "infer.load.loader",
    "Limits": "infer.core.limits",
    "Diagnostic": "infer.core.diagnostics",
    "Location": "infer.core.diagnostics",
    "DimTable": "infer.core.dimtable",
    "Explanation": "infer.out.explain",
    "Type": "infer.core.types",
    "TensorType": "infer.core.types",
    "SparseTensorType": "infer.core.types",
    "SequenceType": "infer.core.types",
    "MapType": "infer.core.types",
    "OptionalType": "infer.core.types",
    "OpaqueType": "infer.core.types",
    "UNKNOWN": "infer.core.types",
    "Value": "infer.core.values",
    "Known": "infer.core.values",
}
__all__ = [
    "infer_model",
    "infer_node",
    "NodeInference",
    "InferenceResult",
    "Summary",
    "ModelLoadError",
    "Limits",
    "Diagnostic",
    "Location",
    "DimTable",
    "Explanation",
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
]  # the keys of NAMES (tests/test_architecture.py checks)

imports.install_short_names()


def __getattr__(name: str) -> Any:
    """A public name or short module name, imported on first use (then kept as an attribute)."""
    if name in NAMES:
        value = getattr(imports.module(NAMES[name]), name)
    elif name in imports.PUBLIC:
        value = imports.module(imports.PUBLIC[name])
    else:
        raise AttributeError(f"module 'infer' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *NAMES, *imports.PUBLIC})
