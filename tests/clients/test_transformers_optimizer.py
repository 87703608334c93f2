"""onnxruntime's transformers optimizer (``optimize_model``, Python fusions only) on the encoders
and vision transformers of the corpus, its ``SymbolicShapeInferenceHelper`` replaced by
``infer.ort_compat``'s. The fusions that ask the helper for shapes (SkipLayerNormalization,
EmbedLayerNormalization) get complete answers on the models halfway through fusing; the
optimized model is valid and equivalent, with at least the fused operators the optimizer makes
with onnxruntime's own helper."""

from __future__ import annotations

import onnx
import pytest

from infer import ort_compat
from tests.clients.common import ENTRIES, assert_valid_and_equivalent, load, require
from tests.support.rotation import weekly_share

optimizer = require("onnxruntime.transformers.optimizer")

# Architecture to the optimizer's model type. Left out: decoders whose fusions emit operators
# onnx's checker does not know in the default domain (LLaMA, T5: SimplifiedLayerNormalization)
# and models the optimizer itself fails on (GPT-2 dynamo, Phi), with either helper.
MODEL_TYPES = {
    "bert": "bert", "distilbert": "bert", "roberta": "bert", "albert": "bert", "electra": "bert",
    "mpnet": "bert", "vit": "vit", "deit": "vit", "clip_text": "clip", "clip_vision": "clip",
    "bart": "bart", "swin": "swin", "gpt2": "gpt2",
}  # fmt: skip
OPTIMIZER_FAILS = {"gpt2_dynamo.onnx"}
CASES = [e for e in ENTRIES if e["model"] in MODEL_TYPES and e["file"] not in OPTIMIZER_FAILS]
# Fusions the stock helper enables and ours does not, with the reason.
SHORTFALLS = {
    ("distilbert_dynamo.onnx", "EmbedLayerNormalization"): (
        "the position embeddings are sliced to min(sequence, 64) rows, written as a name of its own;"
        " onnxruntime's tool writes `sequence` (it assumes sequence <= 64)"
    ),
}


def _optimize(entry, tmp_path, name) -> tuple[onnx.ModelProto, dict[str, int]]:
    model_type = MODEL_TYPES[entry["model"]]
    opt = optimizer.optimize_model(load(entry), model_type=model_type, num_heads=0, hidden_size=0, opt_level=0)
    path = tmp_path / name
    opt.save_model_to_file(str(path))  # imports com.microsoft for the fused operators
    return onnx.load(str(path)), {k: v for k, v in opt.get_fused_operator_statistics().items() if v}


@pytest.mark.parametrize("entry", weekly_share(CASES, [e["file"] for e in CASES], "transformers_optimizer"))
def test_transformers_optimizer_with_ort_compat(entry, tmp_path, monkeypatch) -> None:
    _, stock_fused = _optimize(entry, tmp_path, "stock.onnx")
    answers: list[bool] = []
    infer = ort_compat.SymbolicShapeInferenceHelper.infer

    def answered(self, *args):
        answers.append(infer(self, *args))
        return answers[-1]

    monkeypatch.setattr(ort_compat.SymbolicShapeInferenceHelper, "infer", answered)
    with ort_compat.installed():
        ours, fused = _optimize(entry, tmp_path, "ours.onnx")
    assert answers and all(answers), f"the helper answered {answers}"
    assert_valid_and_equivalent(entry, ours, "the transformers optimizer with ort_compat")
    for op, n in stock_fused.items():
        if (entry["file"], op) in SHORTFALLS:
            assert fused.get(op, 0) < n, f"{op} is fused now: remove it from SHORTFALLS"
            continue
        assert fused.get(op, 0) >= n, f"{op}: {fused.get(op, 0)} fused with onnx-infer, {n} with onnxruntime's helper"
