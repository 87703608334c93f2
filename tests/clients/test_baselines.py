"""The stored outcomes of the client tools with onnx's own inference (tests/clients/baselines.py)
are what the tools do: each tool runs again on one model (a different one each ISO week, or the one
``ONNX_INFER_GOLDEN_CASE=N`` picks, as the test id shows), and on every model with ``-m slow``."""

from __future__ import annotations

import importlib.util

import pytest

from tests.clients import baselines as B
from tests.support.rotation import weekly_and_every

MODULES = {"onnxslim": "onnxslim", "polygraphy": "polygraphy", "graphsurgeon": "onnx_graphsurgeon",
           "onnxoptimizer": "onnxoptimizer"}  # fmt: skip


ROTATING, EVERY = weekly_and_every({tool: es for tool, (_, es) in B.TOOLS.items()})


def _agrees(tool: str, entry: dict) -> None:
    if importlib.util.find_spec(MODULES[tool]) is None:
        pytest.skip(f"{MODULES[tool]} is not installed")
    stored = B.stored(tool, entry)
    if stored is None:
        pytest.skip(
            f"no stored outcome for {entry['file']} with {B.versions(tool)} (the tests run {tool} now); "
            f"refresh: {B.REFRESH} {tool}"
        )
    assert B.measure(tool, entry) == stored, f"{tool} no longer does what {B.FILE.name} holds; refresh: {B.REFRESH}"


@pytest.mark.parametrize("tool, entry", ROTATING)
def test_the_stored_outcome_is_what_the_tool_does(tool, entry):
    _agrees(tool, entry)


@pytest.mark.parametrize("tool, entry", EVERY)
def test_the_stored_outcome_is_what_the_tool_does_on_every_model(tool, entry):
    _agrees(tool, entry)
