"""onnxsim on the TorchScript exports annotated by onnx-infer's drop-in. onnxsim runs onnx's
own inference (in C++) over the value_info it is given, so this checks that onnx accepts every
annotation: the simplified model is valid and equivalent. Node counts are not compared: with more
shapes known, onnxsim rewrites more MatMuls into Gemm with the Reshapes around them."""

from __future__ import annotations

import pytest

from tests.clients import tools
from tests.clients.common import TORCHSCRIPT, TORCHSCRIPT_IDS, assert_valid_and_equivalent, load, require
from tests.support.rotation import weekly_share

require("onnxsim")


@pytest.mark.parametrize("entry", weekly_share(TORCHSCRIPT, TORCHSCRIPT_IDS, "onnxsim"))
def test_onnxsim_on_the_drop_in(entry) -> None:
    ours = tools.onnxsim(load(entry), "dropin")
    assert_valid_and_equivalent(entry, ours.model, "onnxsim on onnx-infer's annotations")
