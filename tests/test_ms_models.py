"""Models rewritten by onnxruntime's tools (tests/models/ms): contrib operators checked at runtime.

Each model of tests/models/ms/manifest.json (the corpus optimized by onnxruntime's transformer
optimizer, quantized by its quantizers, and a few hand-built graphs of contrib operators) runs
in onnxruntime at two sizes with every node output exposed (the values stored in
tests/models/ms/runtime_golden.json, tests/support/golden.py); every claim is checked as in
tests/test_real_models.py. ``python -m tests.test_ms_models`` prints the exact ratio per model.

The signatures declared in signatures/com_microsoft are compared with the schemas the installed
onnxruntime registers (arity, options, type constraints, attributes and their defaults).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import onnx
import pytest
from onnx import AttributeProto, helper

import infer
import signatures
from infer.contract.registry import REGISTRY
from infer.contract.signature import all_signatures
from signatures.com_microsoft import MS
from signatures.kit.registry import EXAMPLES
from tests.support import golden
from tests.support import runtime as R

MS_DIR = Path(__file__).resolve().parent / "models" / "ms"
ENTRIES: list[dict[str, Any]] = json.loads((MS_DIR / "manifest.json").read_text())["models"]


def check_entry(entry: dict[str, Any]) -> tuple[infer.InferenceResult, R.Check]:
    """Inference's claims against onnxruntime's values (stored in tests/models/ms/runtime_golden.json)."""
    result = infer.infer_model(onnx.load(str(MS_DIR / entry["file"])))
    return result, R.check(result, golden.runs({**entry, "path": MS_DIR / entry["file"]}))


@pytest.fixture(scope="module", params=ENTRIES, ids=[e["file"] for e in ENTRIES])
def checked(request):
    entry = request.param
    result, c = check_entry(entry)
    return entry, result, c


def test_no_claim_is_contradicted_by_onnxruntime(checked):
    _, _, c = checked
    assert not c.wrong, "\n".join(c.wrong[:20])


def test_every_value_is_typed_with_a_rank(checked):
    _, result, _ = checked
    s = result.summary()
    assert s.counts.get("untyped", 0) == 0 and s.counts.get("unknown-rank", 0) == 0, s


def test_every_value_is_exact(checked):
    entry, _, c = checked
    assert c.ratio == 1.0, f"{entry['file']}: {c.exact}/{c.values} exact; not exact: {c.not_exact[:10]}"


def test_no_errors_and_every_node_has_a_rule(checked):
    _, result, _ = checked
    bad = [d for d in result.diagnostics if d.severity == "error" or d.code in ("no-rule", "unknown-operator")]
    assert not bad, bad[:5]


# -- the declared signatures against onnxruntime's schemas ---------------------------------------

signatures.load_all()
OURS = [s for s in all_signatures() if s.domain == MS or (s.domain == "" and s.name == "SimplifiedLayerNormalization")]


def _ort_schemas() -> dict[tuple[str, str], Any]:
    from onnxruntime.capi import onnxruntime_pybind11_state as C

    return {(s.domain, s.name): s for s in C.get_all_operator_schema() if s.domain in (MS, "")}


def _ort_default(a: Any) -> Any:
    raw = a._default_value
    if not raw:
        return None
    proto = AttributeProto()
    proto.ParseFromString(raw)
    if proto.type == AttributeProto.UNDEFINED:
        return None
    v = helper.get_attribute_value(proto)
    return v.decode() if isinstance(v, bytes) else v


_OPTION = {0: "single", 1: "optional", 2: "variadic"}


MADE_WITH = json.loads((MS_DIR / "manifest.json").read_text())["versions"]["onnxruntime"]


@pytest.mark.parametrize("sig", OURS, ids=[s.name for s in OURS])
def test_signature_matches_onnxruntime(sig) -> None:
    import onnxruntime

    if onnxruntime.__version__ != MADE_WITH:
        pytest.skip(f"declarations follow onnxruntime {MADE_WITH}; installed {onnxruntime.__version__}")
    ort_sig = _ort_schemas().get((sig.domain, sig.name))
    if ort_sig is None:
        pytest.skip(f"the installed onnxruntime has no schema for {sig.name}")
    problems = []
    for kind, ours, theirs in (("input", sig.inputs, ort_sig.inputs), ("output", sig.outputs, ort_sig.outputs)):
        got = [(f.name, f.type_str, f.option, f.homogeneous) for f in ours]
        want = [(p.name, p.typeStr, _OPTION[int(p.option.value)], p.isHomogeneous) for p in theirs]
        if got != want:
            problems.append(f"{kind}s: ours {got}\n  onnxruntime {want}")
    if (sig.min_inputs, sig.max_inputs, sig.min_outputs, sig.max_outputs) != (
        ort_sig.min_input,
        ort_sig.max_input,
        ort_sig.min_output,
        ort_sig.max_output,
    ):
        problems.append("arity differs")
    want_tc = {c.type_param_str: set(c.allowed_type_strs) for c in ort_sig.type_constraints}
    got_tc = {k: set(v) for k, v in sig.constraints.items()}
    if got_tc != want_tc:
        problems.append(f"type constraints: ours {got_tc}\n  onnxruntime {want_tc}")
    if set(sig.attributes) != set(ort_sig.attributes):
        problems.append(f"attributes: ours {sorted(sig.attributes)}, onnxruntime {sorted(ort_sig.attributes)}")
    for name, a in ort_sig.attributes.items():
        spec = sig.attributes.get(name)
        if spec is None:
            continue
        if spec.type != int(a.type.value) or spec.required != a.required:
            problems.append(f"attribute {name}: type/required differ")
        default = _ort_default(a)
        # Where onnxruntime records no default, ours is the one its documentation states.
        if default is not None and not _same(default, spec.default):
            problems.append(f"attribute {name}: default {spec.default!r}, onnxruntime {default!r}")
    assert not problems, f"{sig.name}:\n" + "\n".join(problems)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=1e-6)
    return a == b


def test_every_contrib_op_in_the_models_has_a_rule_and_an_example() -> None:
    ops = {k.split("::")[1] for e in ENTRIES for k in e["op_counts"] if k.startswith(f"{MS}::")}
    ops.add("SimplifiedLayerNormalization")
    for op_type in sorted(ops):
        domain = "" if op_type == "SimplifiedLayerNormalization" else MS
        assert (domain, op_type) in REGISTRY.operators(), op_type
        assert any(e.op_type == op_type and e.domain == domain for e in EXAMPLES), op_type


def test_every_declared_op_has_a_rule_and_an_example() -> None:
    for sig in OURS:
        assert (sig.domain, sig.name) in REGISTRY.operators(), sig.name
        assert any(e.op_type == sig.name and e.domain == sig.domain for e in EXAMPLES), sig.name


def main() -> None:
    """Print the exact ratio and the contrib operators of every model."""
    total_wrong = 0
    for entry in ENTRIES:
        _, c = check_entry(entry)
        total_wrong += len(c.wrong)
        ms = sorted(k.split("::")[1] for k in entry["op_counts"] if not k.startswith("ai.onnx::"))
        print(f"{entry['file']:40s} {c.exact:4d}/{c.values:<4d} exact ({c.ratio:.1%}), {len(c.wrong)} wrong; {ms}")
        for line in c.not_exact[:8]:
            print(f"    not exact: {line}")
        for line in c.wrong[:8]:
            print(f"    WRONG: {line}")
    print(f"wrong claims: {total_wrong}")


if __name__ == "__main__":
    main()
