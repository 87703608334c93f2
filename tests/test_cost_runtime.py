"""``result.cost`` against onnxruntime (issue 39): bytes, live memory and contraction work.

The default run checks a few small dynamic models of the corpus at three bindings each; the slow
run checks every dynamic model of both manifests. Each must have 0 mismatches: every value's
claimed bytes equal the array's ``nbytes``, the live bytes at every node equal a liveness
simulation over the real arrays (and the peak term its maximum), and the multiply-accumulates of
every MatMul, Gemm and Conv equal the formula over the runtime shapes.
"""

from __future__ import annotations

import pytest

from tests import cost_runtime as CR

pytest.importorskip("onnxruntime")

ENTRIES = {e["path"].relative_to(CR.R.MODELS).as_posix(): e for e in CR.dynamic_entries()}
DEFAULT = ["bert_dynamo.onnx", "gpt2_dynamo.onnx", "resnet_dynamo.onnx", "more/gpt2_kv_dynamo.onnx"]


def _check(entry: dict) -> CR.Tally:
    tally = CR.Tally()
    CR.check_model(entry, CR.bindings_for(entry), tally)
    assert not tally.mismatches, tally.mismatches[:10]
    return tally


@pytest.mark.parametrize("name", DEFAULT)
def test_cost_matches_the_runtime(name):
    tally = _check(ENTRIES[name])
    assert tally.values > 0 and tally.peaks == 3 and tally.work > 0 and not tally.unchecked


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(set(ENTRIES) - set(DEFAULT)))
def test_cost_matches_the_runtime_on_every_dynamic_model(name):
    tally = _check(ENTRIES[name])
    assert tally.values > 0
