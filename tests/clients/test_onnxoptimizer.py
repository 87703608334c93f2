"""onnxoptimizer's fuse-and-eliminate passes on the TorchScript exports annotated by onnx-infer's
drop-in: the result is valid and equivalent, with no more nodes than on onnx's annotations."""

from __future__ import annotations

import pytest

from tests.clients import baselines, tools
from tests.clients.common import TORCHSCRIPT, TORCHSCRIPT_IDS, assert_valid_and_equivalent, load, require
from tests.support.rotation import weekly_share

require("onnxoptimizer")


@pytest.mark.parametrize("entry", weekly_share(TORCHSCRIPT, TORCHSCRIPT_IDS, "onnxoptimizer"))
def test_onnxoptimizer_on_the_drop_in(entry) -> None:
    model = load(entry)
    ours = tools.onnxoptimizer(model, "dropin")
    _, their_nodes = baselines.baseline("onnxoptimizer", entry)  # on onnx's annotations
    assert_valid_and_equivalent(entry, ours.model, "onnxoptimizer on onnx-infer's annotations")
    assert len(ours.model.graph.node) <= their_nodes
