"""The tests that run onnxruntime on a CPU that lacks a kernel (tests/support/hardware.py).

onnxruntime refuses ``com.microsoft.MatMulFpQ4`` on a CPU without AVX-512. Such a refusal is
forced here with a monkeypatched ``InferenceSession`` that refuses as onnxruntime does, so the
tests of the tests behave the same on every machine: the affected cases are skipped and named,
the others still checked, and a refusal of the node itself still fails.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import onnxruntime
import pytest

from tests import domain_check
from tests import test_contrib_a_runtime as contrib_a
from tests.support.contrib_node import MS, HardwareRefused, Refused, cpu_kernels, ort_run
from tests.support.hardware import hardware_refusal, skip_lacking
from tests.test_contrib_a_runtime import EXAMPLES, GENERATORS

# What onnxruntime 1.2x says on an AMD EPYC with AVX2 and FMA but no AVX-512 (issue 41).
AVX512_REFUSAL = (
    "[ONNXRuntimeError] : 1 : FAIL : Node () Op (MatMulFpQ4) [ShapeInferenceError] 4b quantization not yet "
    "supported on this hardware platform!"
)
NODE_REFUSAL = "[ONNXRuntimeError] : 1 : FAIL : Node () Op (MatMulFpQ4) [ShapeInferenceError] B's shape is wrong"


def test_a_cpu_refusal_is_told_from_a_refusal_of_the_node():
    assert hardware_refusal(AVX512_REFUSAL)
    assert hardware_refusal("this kernel requires AVX512F")
    for node in (
        NODE_REFUSAL,
        "[ONNXRuntimeError] : 9 : NOT_IMPLEMENTED : Could not find an implementation for MatMulFpQ4(1) node",
        "[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : Got invalid dimensions for input: x0",
        "[ONNXRuntimeError] : 10 : INVALID_GRAPH : This is an invalid model. Error: the platform string is empty",
    ):
        assert not hardware_refusal(node), node


def _refusing(monkeypatch: pytest.MonkeyPatch, message: str, op: str = "MatMulFpQ4", times: int = -1) -> None:
    """onnxruntime refuses every model with an ``op`` node (the first ``times`` only, if given)."""
    real = onnxruntime.InferenceSession
    left = [times]

    def session(data: Any, *args: Any, **kwargs: Any) -> Any:
        if left[0] != 0 and any(n.op_type == op for n in onnx.load_from_string(data).graph.node):
            left[0] -= 1
            raise RuntimeError(message)
        return real(data, *args, **kwargs)

    monkeypatch.setattr(onnxruntime, "InferenceSession", session)


def test_a_node_the_cpu_cannot_run_is_skipped_and_named(monkeypatch):
    _refusing(monkeypatch, AVX512_REFUSAL)
    with pytest.raises(pytest.skip.Exception) as skipped:
        contrib_a.test_random_nodes_agree_with_onnxruntime("MatMulFpQ4")
    reason = str(skipped.value)
    assert f"{EXAMPLES} of {EXAMPLES} cases need a kernel this CPU lacks" in reason
    assert "MatMulFpQ4 {'blk_quant_type'" in reason and "not yet supported on this hardware platform" in reason


def test_the_cases_the_cpu_can_run_are_still_checked(monkeypatch):
    """One case refused by the CPU, the others run (a wrong claim among them would fail first)."""
    if (MS, "MatMulFpQ4") not in cpu_kernels():
        pytest.skip("this onnxruntime build has no MatMulFpQ4 kernel at all")
    _refusing(monkeypatch, AVX512_REFUSAL, times=1)
    try:
        ort_run(GENERATORS["MatMulFpQ4"](np.random.default_rng(1)))
    except HardwareRefused:
        pass  # the forced refusal took the one case
    try:
        ort_run(GENERATORS["MatMulFpQ4"](np.random.default_rng(2)))
    except HardwareRefused:
        pytest.skip("this machine's CPU lacks the kernel: the cases cannot run here")
    _refusing(monkeypatch, AVX512_REFUSAL, times=1)
    with pytest.raises(pytest.skip.Exception, match=f"1 of {EXAMPLES} cases need a kernel this CPU lacks"):
        contrib_a.test_random_nodes_agree_with_onnxruntime("MatMulFpQ4")


def test_a_refusal_of_the_node_itself_still_fails(monkeypatch):
    _refusing(monkeypatch, NODE_REFUSAL)
    with pytest.raises(AssertionError, match="the generator made a node onnxruntime refuses"):
        contrib_a.test_random_nodes_agree_with_onnxruntime("MatMulFpQ4")


def test_this_machine_runs_the_kernel_or_refuses_it_for_the_cpu():
    """Unpatched: where the kernel is there the node runs, elsewhere the refusal is the CPU's."""
    if (MS, "MatMulFpQ4") not in cpu_kernels():
        pytest.skip("this onnxruntime build has no MatMulFpQ4 kernel at all")
    case = GENERATORS["MatMulFpQ4"](np.random.default_rng(0))
    try:
        ort_run(case)
    except HardwareRefused:
        pass
    except Refused as e:
        raise AssertionError(f"refused, and not for the CPU: {e}") from None


def test_skip_lacking_skips_only_when_something_was_not_run():
    skip_lacking([], 5)  # nothing lacking: the test goes on
    with pytest.raises(pytest.skip.Exception, match=r"2 of 5 cases .*: a \(and 1 more\)"):
        skip_lacking(["a", "b"], 5)


def test_the_domain_check_counts_a_cpu_refusal_neither_inside_nor_outside(monkeypatch, tmp_path):
    """A binding the CPU cannot run says nothing of the domain: it is listed, not a finding."""
    from tests.test_domain import _conv_reshape

    path = tmp_path / "m.onnx"
    onnx.save(_conv_reshape(), path)

    class Refusing(domain_check.Session):
        def run(self, feeds: Any, run_options: Any = None) -> dict[str, Any]:
            raise RuntimeError(AVX512_REFUSAL)

    monkeypatch.setattr(domain_check, "Session", Refusing)
    c = domain_check.check_model(path, sizes=(2, 5))
    assert not c.findings and c.hardware
    assert c.inside == c.inside_ran == 0 and c.outside == c.outside_refused == 0
