"""The golden files of what onnxruntime returns on the committed models (tests/support/golden.py)
still answer for the models and for onnxruntime.

Every manifest entry of tests/models, tests/models/more and tests/models/ms has a current record
(the model's bytes, bindings and feeds as recorded, every value present), and no record is left
over. onnxruntime runs again on one model of each folder, a different one each ISO week (or the
one ``ONNX_INFER_GOLDEN_CASE=N`` picks, as the test id shows), and must return what the record
holds: the same values, element types and shapes, and the same contents wherever both hold them
(floats within the verifier's tolerance). ``python -m pytest -q -m slow`` runs it on every model.
"""

from __future__ import annotations

import pytest

from tests.models.refresh_runtime_golden import record_differences
from tests.support import golden as G
from tests.support.hardware import hardware_refusal, skip_lacking
from tests.support.rotation import weekly_and_every

FOLDERS = {d.relative_to(G.FOLDERS[0].parent).as_posix(): d for d in G.FOLDERS}  # "models", "models/more", ...
ENTRIES = {name: G.entries(d) for name, d in FOLDERS.items()}


ROTATING, EVERY = weekly_and_every(ENTRIES)


@pytest.mark.parametrize("folder", list(FOLDERS))
def test_every_model_has_a_current_record_and_no_record_is_left_over(folder):
    entries = ENTRIES[folder]
    for entry in entries:
        runs = G.runs(entry)  # raises StaleGolden for a changed model, binding, feed or value list
        assert len(runs) == len(entry["bindings"])
    left_over = set(G.load(FOLDERS[folder])["models"]) - {e["file"] for e in entries}
    assert not left_over, f"records of models no manifest lists: {sorted(left_over)}; refresh: {G.REFRESH}"


def _agrees(folder: str, entry: dict) -> None:
    stored = G.load(FOLDERS[folder])["models"][entry["file"]]
    try:
        fresh = G.record(entry)  # onnxruntime, now
    except Exception as e:  # onnxruntime's refusals are plain exceptions of several kinds
        if not hardware_refusal(str(e)):
            raise
        skip_lacking([f"{entry['file']}: {str(e).splitlines()[0][:200]}"], 1)
    diff = record_differences(stored, fresh, entry["path"], storage=False)
    assert not diff, f"onnxruntime no longer returns what the golden file holds ({G.REFRESH}):\n" + "\n".join(diff[:20])


@pytest.mark.parametrize("folder, entry", ROTATING)
def test_onnxruntime_still_returns_what_the_golden_file_holds(folder, entry):
    _agrees(folder, entry)


@pytest.mark.parametrize("folder, entry", EVERY)
def test_onnxruntime_still_returns_what_the_golden_file_holds_for_every_model(folder, entry):
    _agrees(folder, entry)


def test_a_claim_about_contents_the_file_does_not_hold_is_refused():
    """Where inference knows a value's contents, the record must hold them, or the check would
    compare the claim with an array of zeros standing in for them."""
    import infer
    from tests.support import runtime as R

    entry = next(e for e in ENTRIES["models"] if e["file"] == "mask_ops_dynamo.onnx")
    result = infer.infer_model(entry["path"])
    runs = G.runs(entry)
    main = result.graphs["main"]
    known = next(n for n in main.producers if main.values[n].known is not None and n not in runs[0][1].without_contents)
    runs[0][1].without_contents = runs[0][1].without_contents | {known}
    with pytest.raises(G.StaleGolden, match="does not hold"):
        R.check(result, runs)


def test_the_stored_values_are_checked_like_a_run():
    """A shape the record holds that differs from the claim is a contradiction, as from a run."""
    import numpy as np

    import infer
    from tests.support import runtime as R

    entry = next(e for e in ENTRIES["models"] if e["file"] == "mask_ops_dynamo.onnx")
    result = infer.infer_model(entry["path"])
    runs = G.runs(entry)
    assert not R.check(result, runs).wrong
    observed = runs[1][1]
    name = next(n for n, a in observed.items() if a.ndim >= 2 and n in result.graphs["main"].producers)
    observed[name] = np.zeros((observed[name].shape[0] + 1, *observed[name].shape[1:]), observed[name].dtype)
    assert any(f"`{name}`" in w for w in R.check(result, runs).wrong)
