"""onnxslim on every corpus model, its shape inference (its copy of onnxruntime's symbolic
inference, then onnx's) replaced by onnx-infer: the slimmed model is valid and equivalent, and
onnxslim's optimize-and-infer loop takes no more iterations, nor leaves more nodes, than with
onnx's own inference. ``python -m tests.clients.measure onnxslim`` times the three modes. A third
of the models each week by default, the others with ``-m slow`` (tests/clients/common.py)."""

from __future__ import annotations

import pytest

from tests.clients import baselines, tools
from tests.clients.common import ENTRIES, IDS, assert_valid_and_equivalent, load, require
from tests.support.rotation import weekly_share

require("onnxslim")


@pytest.mark.parametrize("entry", weekly_share(ENTRIES, IDS, "onnxslim"))
def test_onnxslim_with_the_drop_in(entry) -> None:
    model = load(entry)
    ours = tools.onnxslim(model, "dropin")
    their_passes, their_nodes = baselines.baseline("onnxslim", entry)  # with onnx's inference
    assert_valid_and_equivalent(entry, ours.model, "onnxslim with onnx-infer")
    assert ours.passes <= their_passes, f"{ours.passes} iterations with onnx-infer, {their_passes} with onnx's"
    assert len(ours.model.graph.node) <= their_nodes
