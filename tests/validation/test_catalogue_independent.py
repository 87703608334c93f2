"""The independent catalogue: every fault detected and its node, value or attribute named.

Three of its models are not faults for onnxruntime, which runs them (a pooling window wider than
the input gives an empty output; a 2-D shape input to Expand or ConstantOfShape is read flat):
those must get no error here, since claiming a fault the runtime does not see would be wrong.
"""

from __future__ import annotations

from typing import Any

import onnxruntime as ort
import pytest

import infer
from tests.validation.catalogue_independent import CATALOGUE

RUNS_IN_ONNXRUNTIME = {"s_maxpool_kernel", "s_expand_shape_2d", "s_constantofshape_2d"}
FAULTS = [c for c in CATALOGUE if c[0] not in RUNS_IN_ONNXRUNTIME]
TWINS = [c for c in CATALOGUE if c[4]]


def _names(v: Any) -> list[str]:
    return [] if v is None else v if isinstance(v, list) else [v]


def _names_the_fault(d: infer.Diagnostic, expected: dict[str, Any]) -> bool:
    loc = d.location
    if loc.node_name and loc.node_name in _names(expected.get("node")):
        return True
    if loc.value is not None and loc.value in _names(expected.get("value")):
        return True
    if loc.attribute is not None and loc.attribute in _names(expected.get("attribute")):
        return True
    # A fault of the model itself (its imports, its IR version) is located at the model.
    return bool(expected.get("model")) and loc.node_index is None and loc.value is None and not loc.node_name


@pytest.mark.parametrize("case", FAULTS, ids=[c[0] for c in FAULTS])
def test_fault_is_detected_and_named(case: tuple) -> None:
    name, _, description, build, _ = case
    model, expected = build()
    found = [d for d in infer.infer_model(model).diagnostics if d.severity in ("error", "warning")]
    assert found, f"{name} ({description}): nothing reported"
    assert any(_names_the_fault(d, expected) for d in found), f"{name}: {expected} not named in\n" + "\n".join(
        map(str, found)
    )


@pytest.mark.parametrize("name", sorted(RUNS_IN_ONNXRUNTIME))
def test_what_onnxruntime_runs_is_no_error(name: str) -> None:
    build = next(c[3] for c in CATALOGUE if c[0] == name)
    model, _ = build()
    ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    assert not infer.infer_model(model).errors


@pytest.mark.parametrize("case", TWINS, ids=[c[0] for c in TWINS])
def test_valid_twin_has_no_error(case: tuple) -> None:
    model, _ = case[3](fixed=True)
    ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    assert not infer.infer_model(model).errors


def test_the_catalogue_is_what_it_says() -> None:
    assert len(CATALOGUE) >= 180 and len(TWINS) >= 45
    assert len({c[0] for c in CATALOGUE}) == len(CATALOGUE)
