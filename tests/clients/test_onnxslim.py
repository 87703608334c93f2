"""onnxslim on every corpus model, its shape inference (its copy of onnxruntime's symbolic
inference, then onnx's) replaced by onnx-infer: the slimmed model is valid and equivalent, and
onnxslim's optimize-and-infer loop takes no more iterations, nor leaves more nodes, than with
onnx's own inference. ``python -m tests.clients.measure onnxslim`` times the three modes."""

from __future__ import annotations

import pytest

from tests.clients import tools
from tests.clients.common import ENTRIES, IDS, assert_valid_and_equivalent, load, require

require("onnxslim")


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_onnxslim_with_the_drop_in(entry) -> None:
    model = load(entry)
    ours = tools.onnxslim(model, "dropin")
    theirs = tools.onnxslim(model, "onnx")
    assert_valid_and_equivalent(entry, ours.model, "onnxslim with onnx-infer")
    assert ours.passes <= theirs.passes, f"{ours.passes} iterations with onnx-infer, {theirs.passes} with onnx's"
    assert len(ours.model.graph.node) <= len(theirs.model.graph.node)
