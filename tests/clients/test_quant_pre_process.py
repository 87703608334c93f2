"""onnxruntime's ``quant_pre_process`` on every corpus model with ``infer.ort_compat`` in place of
its symbolic shape inference (which, at its default ``auto_merge=False``, gives up on some of
them): it succeeds, and the preprocessed model is valid and equivalent. A third of the models each
week by default, the others with ``-m slow`` (tests/clients/common.py)."""

from __future__ import annotations

import onnx
import pytest

from infer import ort_compat
from tests.clients.common import ENTRIES, IDS, assert_valid_and_equivalent, load, require
from tests.support.rotation import weekly_share

shape_inference = require("onnxruntime.quantization.shape_inference")


@pytest.mark.parametrize("entry", weekly_share(ENTRIES, IDS, "quant_pre_process"))
def test_quant_pre_process_with_ort_compat(entry, tmp_path, monkeypatch) -> None:
    calls = []
    annotate = ort_compat._annotate
    monkeypatch.setattr(ort_compat, "_annotate", lambda m: calls.append(1) or annotate(m))
    out = tmp_path / "preprocessed.onnx"
    with ort_compat.installed():
        shape_inference.quant_pre_process(load(entry), str(out))
    assert calls == [1], "quant_pre_process did not run onnx-infer's symbolic inference"
    assert_valid_and_equivalent(entry, onnx.load(str(out)), "quant_pre_process with ort_compat")
