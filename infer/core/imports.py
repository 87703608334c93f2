"""The one place that imports modules by name.

Every other import in ``infer`` and ``signatures`` is a statement the architecture test sees
(tests/test_architecture.py). Three things need a name instead, and come here:

- the rules package (``RULES``): the contract layer's registry (``infer.contract.registry``)
  imports the rule modules of an operator when the walk first meets it, so that no lower layer
  imports ``signatures`` and a process imports the rules its models use;
- the package face: ``import infer`` is cheap, and each public name or short module name
  (``infer.dims`` for ``infer.core.dims``, ``PUBLIC``) is imported when it is first used;
- optional third-party modules (onnxruntime's tools, which the drop-in patches when installed).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Sequence
from types import ModuleType

RULES = "signatures"  # the package whose modules fill the registry when imported

# The modules a user imports by short names (``infer.dims``, ``from infer.verify import Bounds``,
# docs/library.md): each is one module of a layer, the same object under both names.
PUBLIC = {
    "diagnostics": "infer.core.diagnostics",
    "dims": "infer.core.dims",
    "domain": "infer.check.domain",
    "explain": "infer.out.explain",
    "external": "infer.load.external",
    "limits": "infer.core.limits",
    "report": "infer.out.report",
    "result": "infer.out.result",
    "reuse": "infer.walk.reuse",
    "types": "infer.core.types",
    "values": "infer.core.values",
    "verify": "infer.out.verify",
}


def module(name: str) -> ModuleType:
    """The module ``name``, imported if it is not yet."""
    return importlib.import_module(name)


def loaded(name: str) -> ModuleType | None:
    """The module ``name`` if this process has imported it, else ``None`` (nothing is imported)."""
    return sys.modules.get(name)


def optional(name: str) -> ModuleType | None:
    """The third-party module ``name`` if it is installed and imports, else ``None``."""
    try:
        if importlib.util.find_spec(name.split(".")[0]) is None:
            return None
        return importlib.import_module(name)
    except ImportError:  # installed without what it needs
        return None


class _ShortNames(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``infer.<short>`` as the module ``PUBLIC`` names: the module object itself, so that
    ``infer.dims is infer.core.dims`` and a patch through either name is seen through both."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        package, _, short = fullname.partition(".")
        if package != "infer" or short not in PUBLIC:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return module(PUBLIC[spec.name.partition(".")[2]])

    def exec_module(self, module: ModuleType) -> None:
        """Nothing: the module was executed under its own name."""


_FINDER = _ShortNames()


def install_short_names() -> None:
    """Let ``import infer.<short>`` find the module of ``PUBLIC`` (idempotent)."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.append(_FINDER)
