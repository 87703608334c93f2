"""Real exported models: every claim checked against onnxruntime at two sizes.

Two sets: the corpus (tests/models, made by tests/models/export_corpus.py from PyTorch and
transformers with both exporters and dynamic axes) and the small models of a second, wider set
(tests/models/more, made by tests/models/export_heldout_like.py: decoders with a KV cache, float
detours in padding and resizing, models as onnxruntime's optimizer, quantizer and float16
converters leave them). A value is exact when every dim is an integer or an expression over the
inputs' dimension variables and is right at both sizes; no claim may be wrong. What onnxruntime
returns at those sizes is read from the folders' golden files (tests/support/golden.py;
tests/test_runtime_golden.py runs onnxruntime again on some of them); the annotated model is run
in onnxruntime here.
"""

from __future__ import annotations

import onnx
import pytest

import infer
from tests.support import golden
from tests.support import runtime as R

ENTRIES = R.manifest() + R.manifest(R.MODELS / "more")


@pytest.fixture(scope="module", params=ENTRIES, ids=[str(e["path"].relative_to(R.MODELS)) for e in ENTRIES])
def checked(request):
    entry = request.param
    model = onnx.load(str(entry["path"]))
    result = infer.infer_model(model)
    return entry, result, R.check(result, golden.runs(entry))  # onnxruntime's values, stored


def test_no_claim_is_contradicted_by_onnxruntime(checked):
    _, _, c = checked
    assert not c.wrong, "\n".join(c.wrong[:20])


def test_every_value_is_typed_with_a_rank(checked):
    _, result, _ = checked
    s = result.summary()
    assert s.counts.get("untyped", 0) == 0 and s.counts.get("unknown-rank", 0) == 0, s


def test_at_least_99_percent_exact(checked):
    """99% of the values exact, or the floor the manifest states with its reason."""
    entry, _, c = checked
    floor = entry.get("exact_floor", 0.99)
    assert c.ratio >= floor, f"{entry['file']}: {c.exact}/{c.values} exact; not exact: {c.not_exact[:10]}"


def test_valid_models_raise_no_errors(checked):
    """No error, but those the manifest expects (a declaration the exporter got wrong)."""
    entry, result, _ = checked
    errors = [d for d in result.errors if d.code not in entry.get("expected_errors", {})]
    assert not errors, errors[:5]


def test_annotated_model_passes_the_checker_and_runs(checked, tmp_path):
    entry, result, _ = checked
    annotated = result.model
    onnx.checker.check_model(annotated)
    names = {vi.name for vi in annotated.graph.value_info}
    produced = {o for n in annotated.graph.node for o in n.output if o}
    outputs = {o.name for o in annotated.graph.output}
    assert produced - outputs <= names
    b = entry["bindings"][0]
    out = R.run(annotated, R.feeds_for(entry, b["dims"]))
    for name, shape in b["output_shapes"].items():
        assert list(out[name].shape) == shape
