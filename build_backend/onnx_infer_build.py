"""The build backend (PEP 517): setuptools', plus an opt-in build compiled with mypyc (issue 42).

    pip install .                              # pure Python: the default, and the fallback
    ONNX_INFER_COMPILE=1 pip install .         # the hot modules below compiled with mypyc

The switch is read at build time only. Off, nothing changes: setuptools builds the pure-Python
package and mypy is not needed. On, the backend asks the build environment for the pinned mypy
(its mypyc compiles) and ``setup.py`` passes the extension modules to setuptools; the wheel holds
each compiled module's ``.so`` beside its ``.py`` (Python imports the ``.so``). Editable installs
stay pure Python whatever the switch says: their source is the working tree, which a compiled
module beside it would shadow.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from setuptools import build_meta as _setuptools
from setuptools.build_meta import build_wheel  # noqa: F401  (the one hook that compiles)

SWITCH = "ONNX_INFER_COMPILE"
# The mypy whose mypyc compiles: the one tests/test_mypy.py holds the hints true against (the
# `test` extra's range); pinned, since what mypyc accepts and emits changes between releases. With
# it, what mypy reads the package's hints against, as tests/test_mypy.py does: the dependencies
# (pyproject.toml's, the same ranges; tests/test_compiled.py compares) and the `ir` extra, whose
# onnx_ir infer.load.loader names. Without their hints mypy would refuse the imports, or compile
# their names as Any.
MYPYC_REQUIRES = [
    "mypy==2.4.1",
    "onnx>=1.16",
    "sympy>=1.12",
    "networkx>=3.0",
    "numpy>=1.24",
    "ml_dtypes>=0.5,<0.7",
    "onnx-ir>=0.1",
]
ROOT = Path(__file__).resolve().parents[1]

# The compiled modules. Chosen by profiling a first call (cProfile's own time per file) on
# gpt2_dynamo, bert_torchscript, llama_dynamo and convnext_dynamo of tests/models and on
# benchmarks.synthetic.growing_chain(3000): every module of infer/ and signatures/ with 0.1% of
# the time or more, but those mypyc cannot compile as they are (issue 42 lists them):
# - infer.walk.engine (13% of the time): a kept run is a copy of its engine (Engine.snapshot,
#   copy.copy), and a compiled class cannot be made without running its __init__;
# - infer.load.nodeview (8%): Views subclasses list, which mypyc cannot compile;
# - infer.contract.context, reading, effects, proving (6%): RuleContext has four bases, where
#   mypyc allows one and traits (mypy_extensions.trait, not a dependency of the package);
# - infer.core.dims.terms (2%) and infer.core.dims itself (3%): the package binds Python's
#   operators to Expr after the class is made (`Expr.__add__ = add`), which a compiled class
#   refuses, and which binds nothing where `add` is compiled (a compiled function is no method:
#   `e + 1` called add(1));
# - rule families (signatures.ai_onnx.tensor, 5%, ...): they register with
#   signatures.kit.registry.shape_rule and unsupported, which read the calling module from its
#   frame, and compiled code has none;
# - infer.core.dims.slot: the thread's budget, a subclass of threading.local; compiled, its class
#   would be native, its attribute stored in the object past threading.local's per-thread storage
#   (one budget shared by every thread, and a crash where Python code read it);
# - infer/__init__.py (a module __getattr__ that imports on first use; never hot);
# - infer.run (infer_model) and infer.core.limits (Limits): what a caller passes is checked there
#   and refused with the ValueError their docstrings promise, where a compiled function or
#   dataclass refuses an argument of the wrong type with a TypeError of its own before the check
#   runs (infer_model(limits={...}), Limits(max_nodes="5")); each runs once a call, never hot.
# Tests that replace a function or method of a listed module (monkeypatch), which compiled callers
# do not see, are marked `incompatible_with_mypyc` (pyproject.toml) and left out of the compiled
# CI job (.ci/compiled); the pure-Python job runs them.
MODULES = [
    # the walk
    "infer.walk.placement",
    "infer.walk.memo",
    "infer.walk.rulerun",
    "infer.walk.order",
    "infer.walk.dispatch",
    "infer.walk.reuse",
    "infer.walk.state",
    "infer.walk.graphs",
    # the scan of the serialized model
    "infer.load.scan",
    "infer.load.utf8",
    "infer.load.wire",
    # the dims core, values and types
    "infer.core.dims.poly",
    "infer.core.dims.budget",
    "infer.core.dims.canon",
    "infer.core.dims.bounds",
    "infer.core.dims.evaluation",
    "infer.core.values",
    "infer.core.types",
    "infer.core.dimscope",
    "infer.core.dimtable",
    # the contract: claims, attributes, signatures and the registry
    "infer.contract.claims",
    "infer.contract.attributes",
    "infer.contract.signature",
    "infer.contract.registry",
    "infer.check.validate",
    # the rules' kit
    "signatures.kit.helpers",
    "signatures.kit.valueops",
    "signatures.kit.dsl",
    "signatures.kit.spans",
]


def requested() -> bool:
    """Whether this build compiles (the switch set to anything but empty or ``0``)."""
    return os.environ.get(SWITCH, "") not in ("", "0")


def source_path(module: str) -> str:
    """The file of a module of the list, relative to the project root."""
    path = Path(*module.split("."))
    return str(path / "__init__.py" if (ROOT / path).is_dir() else path.with_suffix(".py"))


def ext_modules() -> list[Any]:
    """The extension modules for setuptools: none unless the switch is on."""
    if not requested():
        return []
    from mypyc.build import mypycify  # only here: a pure build does not need mypy

    # Strict dunder typing off, asserts kept: the compiled build must behave as the pure one.
    return mypycify([source_path(m) for m in MODULES], opt_level="3", group_name="onnx_infer", target_dir=_scratch("c"))


def setup_options() -> dict[str, Any]:
    """setuptools' options: a compiled build works in a directory of its own, made afresh. In
    the tree's build/ a module compiled by an earlier build (since taken off the list) would be
    packed into the wheel and imported in place of its source."""
    return {"build": {"build_base": _scratch("build")}} if requested() else {}


_SCRATCH: list[str] = []


def _scratch(name: str) -> str:
    """A directory of this build's own under build/, removed when the build process ends; relative
    to the project root (setuptools refuses an absolute path to a source)."""
    if not _SCRATCH:
        (ROOT / "build").mkdir(exist_ok=True)
        path = tempfile.mkdtemp(prefix="compiled-", dir=ROOT / "build")
        atexit.register(shutil.rmtree, path, True)
        _SCRATCH.append(os.path.relpath(path, ROOT))
    return os.path.join(_SCRATCH[0], name)


@contextmanager
def _pure() -> Iterator[None]:
    """The switch off while setuptools runs ``setup.py`` for anything but a wheel: metadata, a
    source distribution and the build requirements (before mypy is there) need no extension; an
    editable install must not have one (see the module's docstring)."""
    saved = os.environ.pop(SWITCH, None)
    try:
        yield
    finally:
        if saved is not None:
            os.environ[SWITCH] = saved


def get_requires_for_build_wheel(config_settings: dict[str, Any] | None = None) -> list[str]:
    extra = MYPYC_REQUIRES if requested() else []
    with _pure():
        return [*_setuptools.get_requires_for_build_wheel(config_settings), *extra]


def prepare_metadata_for_build_wheel(metadata_directory: str, config_settings: dict[str, Any] | None = None) -> str:
    with _pure():
        return _setuptools.prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def get_requires_for_build_sdist(config_settings: dict[str, Any] | None = None) -> list[str]:
    with _pure():
        return _setuptools.get_requires_for_build_sdist(config_settings)


def build_sdist(sdist_directory: str, config_settings: dict[str, Any] | None = None) -> str:
    with _pure():
        return _setuptools.build_sdist(sdist_directory, config_settings)


def get_requires_for_build_editable(config_settings: dict[str, Any] | None = None) -> list[str]:
    with _pure():
        return _setuptools.get_requires_for_build_editable(config_settings)


def prepare_metadata_for_build_editable(metadata_directory: str, config_settings: dict[str, Any] | None = None) -> str:
    with _pure():
        return _setuptools.prepare_metadata_for_build_editable(metadata_directory, config_settings)


def build_editable(
    wheel_directory: str, config_settings: dict[str, Any] | None = None, metadata_directory: str | None = None
) -> str:
    with _pure():
        return _setuptools.build_editable(wheel_directory, config_settings, metadata_directory)
