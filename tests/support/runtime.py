"""Checking inferred claims against what onnxruntime computes, for the test suite.

The comparison itself is the library's (``infer.out.verify.check_run``): every dim, element type and
known element of every main-graph value, with fresh variables bound to the extents they take in
the run. This module adds what the tests share: the corpus manifest, its feeds, and a verdict
over several runs that also counts the values inferred exactly.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import infer
from infer.core import dims as D
from infer.core import types as T
from infer.out import verify as V
from infer.out.result import KNOWN, SYMBOLIC, classify

MODELS = Path(__file__).resolve().parents[1] / "models"

expose_all = V.exposed  # every main-graph node output exposed, declarations left to the check
run = V.run


def manifest(directory: Path = MODELS) -> list[dict[str, Any]]:
    """The entries of ``directory``'s manifest.json (the corpus by default), each with its ``path``."""
    entries = json.loads((directory / "manifest.json").read_text())["models"]
    return [{**e, "path": directory / e["file"]} for e in entries]


_NP = {
    "int64": np.int64, "int32": np.int32, "float32": np.float32, "float16": np.float16,
    "bool": np.bool_, "float64": np.float64,
}  # fmt: skip


def feeds_for(entry: dict[str, Any], bindings: Mapping[str, int], seed: int = 0) -> dict[str, np.ndarray]:
    """Random inputs of a manifest entry at the given dimension bindings."""
    rng = np.random.default_rng(seed)
    out = {}
    for inp in entry["inputs"]:
        shape = [bindings[d] if isinstance(d, str) else d for d in inp["dims"]]
        dtype = _NP[inp["elem_type"]]
        fill = inp["fill"]
        if fill["kind"] == "randint":
            out[inp["name"]] = rng.integers(fill["low"], fill["high"], size=shape).astype(dtype)
        elif fill["kind"] == "ones":
            out[inp["name"]] = np.ones(shape, dtype)
        elif fill["kind"] == "zeros":
            out[inp["name"]] = np.zeros(shape, dtype)
        else:
            out[inp["name"]] = rng.standard_normal(shape).astype(dtype)
    return out


@dataclass
class Check:
    """The verdict on every value of one model over one or more runs."""

    values: int = 0
    exact: int = 0
    wrong: list[str] = field(default_factory=list)
    not_exact: list[str] = field(default_factory=list)
    # Runs at sizes where an assumption inference recorded fails (a pooling window that does
    # not fit): claims resting on it are conditional, so those runs check nothing.
    skipped_runs: list[str] = field(default_factory=list)
    unchecked: int = 0  # claims no run could bind every variable of

    @property
    def ratio(self) -> float:
        return self.exact / self.values if self.values else 1.0


def check(result: infer.InferenceResult, runs: list[tuple[Mapping[str, int], Mapping[str, Any]]]) -> Check:
    """Compare every claim of ``result`` with observed values at each (bindings, outputs) run.

    A value is exact when every dim is an integer or an expression over declared variables and
    no run contradicts it.
    """
    from . import golden  # (golden reads this module)

    out = Check()
    contradicted: set[str] = set()
    for bindings, observed in runs:
        golden.require_contents(result, observed)
        rc = V.check_run(result, bindings, observed)
        if rc.skipped is not None:
            out.skipped_runs.append(f"{dict(bindings)}: {rc.skipped}")
            continue
        out.unchecked += rc.unchecked
        out.wrong += [c.message for c in rc.contradictions]
        contradicted |= {c.value for c in rc.contradictions}
    declared = set(result.dims.declared_names())
    for g, name, v in result.values():
        if g != "main":
            continue
        out.values += 1
        t = v.type
        if name in contradicted:
            continue
        if classify(t, result.dims) in (KNOWN, SYMBOLIC) and all(D.free_names(d) <= declared for d in T.dims_of(t)):
            out.exact += 1
        else:
            out.not_exact.append(f"{name}: {t}")
    return out


def check_value(result: infer.InferenceResult, name: str, observed: Any, bindings: Mapping[str, int]) -> list[str]:
    """What the runtime contradicts among the claims about one value ``name`` of ``result``."""
    rc = V.check_run(result, bindings, {name: observed})
    return [c.message for c in rc.contradictions if c.value == name]
