"""Operator signatures and inference rules, by domain and family.

Each domain is a subpackage (``ai_onnx``, ``ai_onnx_ml``, ``com_microsoft``, ...) and each family
a module in it; importing a module registers its rules. ``load_all`` imports every module of
every domain package once, so a new family is a new file and nothing else.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

_loaded = False


def family_modules() -> list[str]:
    """Every rule module, in a stable order."""
    here = Path(__file__).parent
    names = []
    for pkg in sorted(p.name for p in here.iterdir() if (p / "__init__.py").exists()):
        for mod in sorted(m.name for m in pkgutil.iter_modules([str(here / pkg)])):
            names.append(f"signatures.{pkg}.{mod}")
    return names


def load_all() -> None:
    """Register every rule (idempotent)."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    for name in family_modules():
        importlib.import_module(name)
