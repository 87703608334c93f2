"""onnx-graphsurgeon's fold-and-clean-up loop on the TorchScript exports (whose shape arithmetic
is computed at run time), shapes from onnx-infer's drop-in instead of onnx's inference: the
result is valid and equivalent, with no more passes and no more nodes than with onnx's."""

from __future__ import annotations

import pytest

from tests.clients import baselines, tools
from tests.clients.common import TORCHSCRIPT, TORCHSCRIPT_IDS, assert_valid_and_equivalent, load, require
from tests.support.rotation import weekly_share

require("onnx_graphsurgeon")


@pytest.mark.parametrize("entry", weekly_share(TORCHSCRIPT, TORCHSCRIPT_IDS, "graphsurgeon"))
def test_graphsurgeon_folds_with_the_drop_in(entry) -> None:
    model = load(entry)
    ours = tools.graphsurgeon(model, "dropin")
    their_passes, their_nodes = baselines.baseline("graphsurgeon", entry)  # with onnx's inference
    assert_valid_and_equivalent(entry, ours.model, "onnx-graphsurgeon with onnx-infer")
    assert ours.passes <= their_passes
    assert len(ours.model.graph.node) <= their_nodes
