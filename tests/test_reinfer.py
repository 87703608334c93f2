"""Re-inference after an edit (``infer_model(edited, previous=result)``, issue 23) gives what a
fresh run of the edited model gives: every value's type, the diagnostics, the assumptions and
the domain, on every corpus model and three edits (a node renamed, an ``Identity`` inserted in
the middle of the graph, an input's dimension variable renamed, which changes every type
downstream of it, so no stale result may be taken). A third of the corpus in CI, all of it
with ``python -m pytest -q -m slow tests/test_reinfer.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import onnx
import pytest

import infer
from benchmarks.corpus import edited
from infer.walk import reuse

# A third of the corpus in CI (both exports of a model family fall apart); all of it with -m slow.
MODELS = [
    pytest.param(p, id=p.stem, marks=() if k % 3 == 0 else pytest.mark.slow)
    for k, p in enumerate(sorted((Path(__file__).parent / "models").glob("*.onnx")))
]


def _renamed_variable(model: onnx.ModelProto) -> onnx.ModelProto | None:
    """``model`` with the first dim_param of its inputs spelled otherwise, or ``None``."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    for x in out.graph.input:
        for d in x.type.tensor_type.shape.dim:
            if d.dim_param:
                old = d.dim_param
                for y in out.graph.input:
                    for e in y.type.tensor_type.shape.dim:
                        if e.dim_param == old:
                            e.dim_param = old + "_edited"
                return out
    return None


def _seen(result: infer.InferenceResult) -> dict[str, Any]:
    """What a user reads of a result, as text."""
    return {
        "types": {f"{g}/{name}": str(v.type) for g, name, v in result.values()},
        "diagnostics": [(d.code, d.severity, d.message, str(d.location)) for d in result.diagnostics],
        "assumptions": [str(a) for a in result.assumptions],
        "domain": str(result.domain),
    }


@pytest.mark.parametrize("path", MODELS)
def test_an_edited_model_inferred_with_previous_is_what_a_fresh_run_gives(path: Path) -> None:
    model = onnx.load(str(path))
    renamed, inserted = edited(model)
    edits = [renamed, inserted]
    if (variable := _renamed_variable(model)) is not None:
        edits.append(variable)
    reuse.clear()
    first = infer.infer_model(model)
    for edit in edits:
        again = infer.infer_model(edit, previous=first)
        with reuse.disabled():
            fresh = infer.infer_model(edit)
        assert _seen(again) == _seen(fresh)
    if variable is not None:  # (what is compared sees an edit: the variable's name is in the types)
        assert _seen(again)["types"] != _seen(first)["types"]
    reuse.clear()
