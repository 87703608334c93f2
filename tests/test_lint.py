"""The code stays ruff-clean (the configuration is in pyproject.toml)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_clean():
    ruff = shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed (it comes with the test extra)")
    r = subprocess.run([ruff, "check", "--no-cache", str(ROOT)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    r = subprocess.run([ruff, "format", "--check", "--no-cache", str(ROOT)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_package_imports_without_test_dependencies():
    code = "import sys, signatures; signatures.load_all(); import infer; assert 'onnxruntime' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
