"""Operator signatures and inference rules, by domain and family.

Importing a family module registers its rules; ``load_all`` imports every family once.
"""

from __future__ import annotations

import importlib

FAMILIES = (
    "signatures.ai_onnx.elementwise",
    "signatures.ai_onnx.generators",
    "signatures.ai_onnx.linalg",
    "signatures.ai_onnx.nn",
    "signatures.ai_onnx.normalization",
    "signatures.ai_onnx.reduction",
    "signatures.ai_onnx.tensor",
    "signatures.ai_onnx.control_flow",
)

_loaded = False


def load_all() -> None:
    """Register every rule (idempotent)."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    for name in FAMILIES:
        importlib.import_module(name)
