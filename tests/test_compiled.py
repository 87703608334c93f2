"""The opt-in build compiled with mypyc (issue 42): the switch, the module list, and what the
compiled CI job (.ci/compiled) relies on.

The build backend is build_backend/onnx_infer_build.py. In the compiled job the suite runs with
``ONNX_INFER_EXPECT_COMPILED=1``, and every module of the list must then be imported compiled;
in any run, a package with some of them compiled and others not is a broken install.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "build_backend"))
import onnx_infer_build as build  # noqa: E402  (found through the path above, as setup.py finds it)

sys.path.remove(str(ROOT / "build_backend"))


def _compiled(module: str) -> bool:
    path = importlib.import_module(module).__file__ or ""
    return path.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))


def test_the_list_names_modules_of_the_package():
    missing = [m for m in build.MODULES if not (ROOT / build.source_path(m)).is_file()]
    assert not missing, f"build_backend/onnx_infer_build.py lists modules that are not there: {missing}"
    assert len(set(build.MODULES)) == len(build.MODULES)


def test_the_modules_are_all_compiled_or_none():
    compiled = [m for m in build.MODULES if _compiled(m)]
    if os.environ.get("ONNX_INFER_EXPECT_COMPILED"):
        assert compiled == build.MODULES, f"not compiled: {sorted(set(build.MODULES) - set(compiled))}"
    else:
        assert compiled in ([], build.MODULES), f"a partly compiled install: {compiled}"


def test_no_module_off_the_list_is_compiled():
    """A module compiled by an earlier build, since taken off the list, would be imported in place
    of its source (the backend builds in a directory of its own for this)."""
    import infer
    import signatures

    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    found = set()
    for package in (infer, signatures):
        base = Path(package.__file__ or "").parent
        for path in base.rglob("*"):
            if path.name.endswith(suffixes):
                stem = path.name.split(".")[0]
                parts = path.parent.relative_to(base.parent).parts
                found.add(".".join(parts if stem == "__init__" else (*parts, stem)))
    assert not found - set(build.MODULES), sorted(found - set(build.MODULES))


def test_the_switch_decides_the_build_requirements(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv(build.SWITCH, raising=False)
    assert not build.requested() and build.ext_modules() == []  # no mypy needed, none imported
    monkeypatch.setenv(build.SWITCH, "0")
    assert not build.requested()
    monkeypatch.setenv(build.SWITCH, "1")
    assert build.requested()
    with build._pure():  # an editable install, metadata, a source distribution
        assert not build.requested() and build.ext_modules() == []
    assert build.requested()


def test_mypyc_reads_the_hints_against_the_dependencies():
    tomllib = pytest.importorskip("tomllib")  # (Python 3.11)
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert set(project["dependencies"]) <= set(build.MYPYC_REQUIRES)
    mypy_range = next(r for r in project["optional-dependencies"]["test"] if r.startswith("mypy"))
    pinned = next(r for r in build.MYPYC_REQUIRES if r.startswith("mypy=="))
    assert mypy_range == "mypy>=2.4,<2.5" and pinned.startswith("mypy==2.4."), (mypy_range, pinned)


_BROKEN_RULE = textwrap.dedent(
    """
    import dataclasses
    import infer
    from infer.contract.registry import REGISTRY

    def broken(ctx):
        raise TypeError("int object expected; got str")

    infer.infer_node("Relu", ["float[2]"], opset=14)  # (Relu's rule loaded)
    key = ("", "Relu")
    REGISTRY._entries[key] = [dataclasses.replace(e, rule=broken) for e in REGISTRY._entries[key]]
    infer.walk.reuse.clear()  # (the result of the real rule, kept)
    try:
        out = infer.infer_node("Relu", ["float[2]"], opset=14)
    except TypeError as e:
        print("raised", e)
    else:
        print(*[d.code for d in out.diagnostics])
    """
)


@pytest.mark.parametrize("raise_type_errors", ["", "1"])
def test_a_type_error_in_a_rule_fails_where_asked(raise_type_errors: str):
    env = {**os.environ, "ONNX_INFER_RAISE_TYPE_ERRORS": raise_type_errors}
    env.pop("ONNX_INFER_DEBUG", None)
    out = subprocess.run(
        [sys.executable, "-c", _BROKEN_RULE], capture_output=True, text=True, check=True, cwd=ROOT, env=env
    )
    if raise_type_errors:
        assert out.stdout.strip() == "raised int object expected; got str", out.stdout + out.stderr
    else:
        assert "rule-crash" in out.stdout.split(), out.stdout + out.stderr
