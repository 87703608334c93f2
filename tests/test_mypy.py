"""The type hints are true: mypy, configured in pyproject.toml, finds nothing in infer/ and
signatures/ but in the files still listed below (issue 42).

Hints are more than documentation here: a build compiled with mypyc (planned, issue 42) checks them
at run time, so a wrong one would be a ``TypeError`` there, which the rule runner reports as a ``rule-crash``. One
mypy run over both packages, as ``mypy`` alone runs it; every file not in ``NOT_YET`` must be
clean, and every file in it must still have an error (remove it once it is clean): the list only
shrinks, and a new file starts clean. The cache is the user's (``~/.cache/onnx-infer/mypy``, or
under ``XDG_CACHE_HOME``), shared by every checkout, as pip's is, so that a fresh clone's run is
not a first one: a first run takes some 15 to 25 s, a run after it a few; mypy checks each cached
module against its source.

Fixing one: a wrong hint is fixed to say what the code passes and returns, or the code is fixed;
a ``# type: ignore[code]`` only where mypy is provably wrong, with the reason beside it.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Files with errors left, each to be fixed by its owner (then taken off this list).
NOT_YET: set[str] = set()

_ERROR = re.compile(r"^(?P<file>[^:\s]+\.py):\d+: error: ")


def _cache_dir() -> Path:
    """The user's cache of mypy's results, else (where it cannot be made) the repository's."""
    home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    path = Path(home) / "onnx-infer" / "mypy"
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return ROOT / ".mypy_cache"
    return path if os.access(path, os.W_OK) else ROOT / ".mypy_cache"


def _mypy_errors() -> dict[str, list[str]]:
    """The errors of one ``mypy`` run (pyproject.toml's configuration), by file."""
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (it comes with the test extra)")
    cmd = [sys.executable, "-m", "mypy", "--cache-dir", str(_cache_dir()), "--no-error-summary"]
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    if r.returncode not in (0, 1):  # 2: mypy itself failed (a bad configuration, a crash)
        pytest.fail(f"mypy failed (exit {r.returncode}):\n{r.stdout}{r.stderr}")
    errors: dict[str, list[str]] = {}
    for line in r.stdout.splitlines():
        m = _ERROR.match(line)
        if m:
            errors.setdefault(m["file"], []).append(line)
    assert errors or r.returncode == 0, r.stdout + r.stderr  # every error is a file's
    return errors


def test_hints_are_true():
    errors = _mypy_errors()
    unexpected = [line for f in sorted(errors) if f not in NOT_YET for line in errors[f]]
    assert not unexpected, "mypy finds errors in files that were clean:\n" + "\n".join(unexpected)
    cleaned = sorted(NOT_YET - errors.keys())
    assert not cleaned, f"now clean: take these off NOT_YET in {Path(__file__).name}: {cleaned}"


def test_the_list_names_files():
    missing = sorted(f for f in NOT_YET if not (ROOT / f).is_file())
    assert not missing, f"NOT_YET names files that are gone: {missing}"
