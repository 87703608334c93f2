"""polygraphy's sanitize pipeline (shape inference, then constant folding to a fixed point) on
every corpus model, onnxruntime's symbolic inference replaced by onnx-infer: it never falls back
to onnx's inference, the folded model is valid and equivalent, and it takes no more folding
passes than with onnx's inference unless it folded more. A third of the models each week by
default, the others with ``-m slow`` (tests/clients/common.py)."""

from __future__ import annotations

import pytest

from tests.clients import baselines, tools
from tests.clients.common import ENTRIES, IDS, assert_valid_and_equivalent, load, require
from tests.support.rotation import weekly_share

require("polygraphy")


@pytest.mark.parametrize("entry", weekly_share(ENTRIES, IDS, "polygraphy"))
def test_polygraphy_sanitize_with_the_drop_in(entry) -> None:
    model = load(entry)
    ours = tools.polygraphy(model, "dropin")
    their_passes, their_nodes = baselines.baseline("polygraphy", entry)  # with onnx's inference
    assert ours.fallbacks == 0, "polygraphy fell back to onnx's inference"
    assert_valid_and_equivalent(entry, ours.model, "polygraphy with onnx-infer")
    nodes = len(ours.model.graph.node)
    assert nodes <= their_nodes
    # A pass that folds nothing ends the loop; more passes are fine only where they folded more.
    assert ours.passes <= their_passes or nodes < their_nodes, (ours.passes, their_passes, nodes)
