"""Running a program in onnxruntime at every binding and checking every claim inference makes.

One InferenceSession per program (every intermediate value exposed), one run per binding, in a
child process (``OrtRunner``). Each run is compared with the inference result by
``infer.out.verify.check_run``: element types, extents, known contents, fresh variables bound to the
extents they take in that run. A run outside ``result.assumptions`` is skipped and counted.
onnxruntime's values are also compared with what ``onnx.reference`` computed while generating:
where they differ, a contradiction may be onnxruntime's fault rather than inference's.
"""

from __future__ import annotations

import re
import time
import traceback
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx

import infer
from infer.out.verify import check_run, exposed

from .generate import Program
from .ortrun import OrtRunner


@dataclass
class Finding:
    """One contradicted claim."""

    value: str  # the value whose claim is contradicted
    op_type: str  # the operator that produced it
    kind: str  # element-type | rank | dim | contents | fresh-variable
    claimed: str
    actual: Any
    bindings: dict[str, int]
    message: str
    index: int | None = None  # the axis of a dim, the flat position of an element
    run: int = 0  # which binding (position in the program's list) the run was made at
    reference_agrees: bool | None = None  # onnx.reference computed what inference claimed

    @property
    def signature(self) -> tuple[str, str]:
        """What a shrunk program must still show to count as the same finding."""
        return (self.op_type, self.kind)

    @classmethod
    def of(cls, c: Any, producers: dict[str, str], run: int) -> Finding:
        """The finding of verify's contradiction ``c`` in the run at binding ``run``."""
        op_type = producers.get(c.value, "?")
        return cls(c.value, op_type, c.kind, str(c.claimed), c.actual, dict(c.bindings), c.message, c.index, run)


@dataclass
class Verdict:
    """The outcome of checking one program."""

    seed: int | None
    ran: bool = False
    error: str | None = None  # why onnxruntime did not run it (or inference crashed)
    crashed: bool = False  # onnxruntime died on it
    runs: int = 0
    claims: int = 0
    unchecked: int = 0
    skipped: list[str] = field(default_factory=list)  # runs outside the result's assumptions
    findings: list[Finding] = field(default_factory=list)  # contradicted claims
    inference_errors: list[str] = field(default_factory=list)  # error diagnostics on a valid program
    declared: int = 0  # names the generator put on output axes (``Program.declared``)
    declared_false: int = 0  # of which the program contradicts at some binding
    declared_clashes: int = 0  # declared-type-clash reports of names it contradicts at every binding
    inference_crash: str | None = None
    reference_mismatches: list[str] = field(default_factory=list)  # onnxruntime != onnx.reference
    seconds: float = 0.0
    infer_seconds: float = 0.0
    ort_seconds: float = 0.0


def observe(model: onnx.ModelProto, feeds: list[dict[str, np.ndarray]], runner: OrtRunner) -> Any:
    """Every node output of ``model`` at each feed dictionary, or the ``OrtOutcome`` failure."""
    return runner.run(exposed(model).SerializeToString(), feeds)


def check(program: Program, runner: OrtRunner, result: Any = None) -> Verdict:
    """Run ``program`` at every binding and compare every claim of inference with each run."""
    start = time.perf_counter()
    v = Verdict(program.seed)
    outcome = observe(program.model, program.feeds, runner)
    v.ort_seconds = time.perf_counter() - start
    if outcome.outputs is None:
        v.error, v.crashed = outcome.error, outcome.crashed
        v.seconds = time.perf_counter() - start
        return v
    v.ran = True
    t0 = time.perf_counter()
    if result is None:
        try:
            result = infer.infer_model(program.model)
        except Exception:
            v.inference_crash = traceback.format_exc()[-2000:]
            v.seconds = time.perf_counter() - start
            return v
    v.infer_seconds = time.perf_counter() - t0
    v.declared = len(program.declared)
    v.declared_false = sum(not all(d.holds) for d in program.declared)
    skipped: set[int] = set()
    producers = {o: n.op_type for n in program.model.graph.node for o in n.output}
    for k, (bindings, observed) in enumerate(zip(program.bindings, outcome.outputs)):
        try:
            rc = check_run(result, bindings, observed)
        except Exception:  # evaluating a claim failed: as much a finding as a wrong claim
            v.inference_crash = f"check_run at {_fmt(bindings)}:\n" + traceback.format_exc()[-2000:]
            break
        v.runs += 1
        if rc.skipped is not None:
            v.skipped.append(f"{_fmt(bindings)}: {rc.skipped}")
            skipped.add(k)
            continue
        v.claims += rc.claims
        v.unchecked += rc.unchecked
        v.findings += [Finding.of(c, producers, k) for c in rc.contradictions]
    v.inference_errors, v.declared_clashes = _errors(program, result, skipped)
    v.reference_mismatches = _reference_mismatches(program, outcome.outputs)
    for f in v.findings:
        f.reference_agrees = _reference_agrees(program, f)
    v.seconds = time.perf_counter() - start
    return v


def _errors(program: Program, result: Any, skipped: set[int]) -> tuple[list[str], int]:
    """The error diagnostics of a valid program, but ``declared-type-clash``es of an output axis
    whose declared name the program contradicts at every binding inside the result's assumptions
    (not ``skipped``; counted): a clash reported where the name holds in such a run is an error
    like any other (issue 26)."""
    refuted = {
        place
        for d in program.declared
        for place in d.places
        if not any(held for k, held in enumerate(d.holds) if k not in skipped)
    }
    errors, clashes = [], 0
    for d in result.errors:
        axis = re.search(r"at axis (\d+): declared", d.message)
        if d.code == "declared-type-clash" and axis and (d.location.value, int(axis.group(1))) in refuted:
            clashes += 1
        else:
            errors.append(str(d))
    return errors, clashes


def _fmt(b: Mapping[str, int]) -> str:
    return "{" + ", ".join(f"{k}={x}" for k, x in b.items()) + "}"


def _reference_mismatches(program: Program, outputs: list[dict[str, np.ndarray]]) -> list[str]:
    """Values whose shape (or integer contents) onnxruntime and onnx.reference disagree on."""
    out = []
    for name, expected in program.expected.items():
        for k, (ref, observed) in enumerate(zip(expected, outputs)):
            got = observed.get(name)
            if got is None:
                continue
            got = np.asarray(got)
            if got.shape != ref.shape:
                out.append(f"`{name}` at {_fmt(program.bindings[k])}: onnxruntime {got.shape}, reference {ref.shape}")
                break
            if ref.dtype.kind in "iub" and got.dtype.kind in "iub" and not np.array_equal(ref, got):
                out.append(f"`{name}` at {_fmt(program.bindings[k])}: contents differ")
                break
    return out


def _reference_agrees(program: Program, f: Finding) -> bool | None:
    """Whether onnx.reference's value supports the claim onnxruntime contradicts."""
    ref = program.expected.get(f.value)
    if ref is None:
        return None
    arr = ref[f.run]
    claimed = _claimed_value(f)
    if claimed is None or f.index is None:
        return None
    if f.kind in ("dim", "fresh-variable") and f.index < arr.ndim:
        return arr.shape[f.index] == claimed
    if f.kind == "contents" and f.index < arr.size:
        return bool(np.isclose(float(arr.reshape(-1)[f.index]), claimed))
    return None


def _claimed_value(f: Finding) -> float | None:
    """The number a claim evaluates to in its run (its message says ``claimed E = V at``)."""
    m = re.search(r"claimed (?:.* = )?(-?[0-9.]+(?:e-?[0-9]+)?) at ", f.message)
    if m is None:
        return None
    try:
        return float(m.group(1))
    except ValueError:
        return None
