"""What the client tests share: the corpus, a tool's output checked against the original model.

Each client test runs a real tool (onnxruntime's quantization preprocessing and transformers
optimizer, onnxslim, polygraphy, onnx-graphsurgeon, onnxoptimizer, onnxsim) on the corpus of
tests/models with onnx-infer in place of the shape inference the tool calls, and holds every
output to three things: onnx's checker passes, onnxruntime runs it, and its outputs on the
manifest's feeds are the original model's. The tools are the optional ``clients`` extra
(pyproject.toml); a test whose tool is not installed skips. What a tool does with onnx's own
inference, which the tests compare with, is stored in tests/clients/baselines.json
(tests/clients/baselines.py) for the versions recorded there, and run afresh for any other.

A tool's run on each model takes seconds (the tool's own work, mostly), so the default run takes
a third of the models each ISO week, a different third for each tool, and ``-m slow`` the
others (``weekly_share`` in tests/support/rotation.py; docs/testing.md): over three weeks every
model goes through every tool in CI.
"""

from __future__ import annotations

import functools
import importlib
import os
from typing import Any

import numpy as np
import onnx
import pytest

from infer.out.verify import Session
from tests.support import runtime as R

ENTRIES: list[dict[str, Any]] = R.manifest()
IDS = [e["file"] for e in ENTRIES]
# The TorchScript exports: their shape arithmetic is computed at run time (Shape, Gather,
# Concat), where inference decides what a tool can fold; the representative subset for the tools
# whose run over the whole corpus would take minutes.
TORCHSCRIPT = [e for e in ENTRIES if e["exporter"] == "torchscript"]
TORCHSCRIPT_IDS = [e["file"] for e in TORCHSCRIPT]

RTOL, ATOL = 1e-3, 1e-4  # as the corpus is checked against PyTorch (tests/models/README.md)


def load(entry: dict[str, Any]) -> onnx.ModelProto:
    return onnx.load(str(entry["path"]))


@functools.cache
def reference_outputs(file: str) -> tuple[dict[str, np.ndarray], ...]:
    """The original model's outputs at each binding of its manifest entry (computed once)."""
    entry = next(e for e in ENTRIES if e["file"] == file)
    model = load(entry)
    names = [o.name for o in model.graph.output]
    session = Session(model)
    return tuple(
        {k: v for k, v in session.run(R.feeds_for(entry, b["dims"])).items() if k in names} for b in entry["bindings"]
    )


def assert_valid_and_equivalent(entry: dict[str, Any], model: onnx.ModelProto, what: str) -> None:
    """``model`` (a tool's output for ``entry``) passes onnx's checker and computes the original
    model's outputs on the manifest's feeds at every binding."""
    try:
        onnx.checker.check_model(model)
    except onnx.checker.ValidationError as e:
        pytest.fail(f"{what}: onnx's checker rejects the output of {entry['file']}: {str(e).splitlines()[0]}")
    session = Session(model)
    for binding, expected in zip(entry["bindings"], reference_outputs(entry["file"])):
        got = session.run(R.feeds_for(entry, binding["dims"]))
        for name, want in expected.items():
            assert name in got, f"{what}: output `{name}` of {entry['file']} is gone"
            np.testing.assert_allclose(
                got[name], want, rtol=RTOL, atol=ATOL, err_msg=f"{what}: {entry['file']}, `{name}` at {binding['dims']}"
            )


def require(module: str) -> Any:
    """The client module; without it a skip, except in CI (``CI=true``), where .ci/run installs
    the ``clients`` extra and a missing client is a failure, not a quiet skip."""
    if os.environ.get("CI", "").lower() in ("1", "true"):
        return importlib.import_module(module)
    return pytest.importorskip(module, reason=f"{module} is not installed (pip install -e '.[clients]')")
