"""Checking inferred claims against what onnxruntime actually computes.

Every intermediate value of a model is exposed as a graph output, the model is run at concrete
input sizes, and every dim the engine claims is evaluated with the input variables bound to
those sizes and compared with the real extent. Fresh variables cannot be evaluated, but every
occurrence of one must denote the same extent within a run (Clause 6.5.2); that is checked too.
Known contents (shape tensors tracked element by element) are compared element by element.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper

import infer
from infer import dims as D
from infer import types as T
from infer.result import KNOWN, SYMBOLIC, classify

MODELS = Path(__file__).resolve().parents[1] / "models"
ort.set_default_logger_severity(3)


def manifest() -> list[dict[str, Any]]:
    return json.loads((MODELS / "manifest.json").read_text())["models"]


def expose_all(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of ``model`` whose every node output (top-level graph) is a graph output."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    existing = {o.name for o in m.graph.output}
    for n in m.graph.node:
        for o in n.output:
            if o and o not in existing:
                m.graph.output.append(onnx.ValueInfoProto(name=o))
                existing.add(o)
    return m


def run(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 3
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, dict(feeds))))


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

    @property
    def ratio(self) -> float:
        return self.exact / self.values if self.values else 1.0


def _np_elem(arr: np.ndarray) -> int:
    return helper.np_dtype_to_tensor_dtype(arr.dtype)


def check(result: infer.InferenceResult, runs: list[tuple[Mapping[str, int], dict[str, np.ndarray]]]) -> Check:
    """Compare every claim of ``result`` with observed values at each (bindings, outputs) run."""
    out = Check()
    declared = set(result.dims.declared_names())
    names = [n for g, n, _ in result.values() if g == "main"]
    runs = [(b, obs) for b, obs in runs if not _violates_assumptions(result, b, out)]
    for name in names:
        v = result.value(name)
        t = v.type
        out.values += 1
        problems: list[str] = []
        for bindings, observed in runs:
            if name not in observed:
                continue
            problems += check_value(name, t, v.known, observed[name], bindings, result, declared)
        exact = classify(t, result.dims) in (KNOWN, SYMBOLIC) and all(D.free_names(d) <= declared for d in T.dims_of(t))
        if problems:
            out.wrong.extend(problems)
        elif exact:
            out.exact += 1
        else:
            out.not_exact.append(f"{name}: {t}")
    out.wrong += _fresh_consistency(result, names, runs)
    return out


def _violates_assumptions(result: infer.InferenceResult, bindings: Mapping[str, int], out: Check) -> bool:
    for d, least in result.dims.minimums.items():
        if D.free_names(d) <= set(bindings):
            value = D.evaluate(d, bindings)
            if isinstance(value, int) and value < least:
                out.skipped_runs.append(f"{dict(bindings)}: {D.to_str(d)} = {value} < {least}")
                return True
    return False


def check_value(name: str, t: T.Type, known: Any, observed: Any, bindings: Mapping[str, int],
                result: infer.InferenceResult, declared: set[str]) -> list[str]:  # fmt: skip
    """Problems with claim ``t`` for an observed runtime value (tensor, list, dict or None)."""
    where = f"`{name}` at {dict(bindings)}"
    if isinstance(t, T.UnknownType):
        return []
    if isinstance(t, T.OptionalType):
        if observed is None:
            return []
        return check_value(name, t.elem, None, observed, bindings, result, declared)
    if isinstance(t, T.SequenceType):
        if not isinstance(observed, list):
            return [f"{where}: claimed {t}, runtime gave {type(observed).__name__}"]
        return [p for item in observed for p in check_value(name, t.elem, None, item, bindings, result, declared)]
    if isinstance(t, T.MapType):
        if not isinstance(observed, dict):
            return [f"{where}: claimed {t}, runtime gave {type(observed).__name__}"]
        probs = []
        for key, val in observed.items():
            want_str = t.key == onnx.TensorProto.STRING
            if t.key is not None and want_str != isinstance(key, str):
                probs.append(f"{where}: map key {key!r} does not fit {t}")
            if isinstance(val, (int, float)) and isinstance(t.value, T.TensorType):
                # Map values come back as Python scalars: the element width is not observable.
                t_value = T.TensorType(None, t.value.shape)
                probs += check_value(name, t_value, None, np.asarray(val), bindings, result, declared)
            else:
                probs += check_value(name, t.value, None, np.asarray(val), bindings, result, declared)
        return probs
    if isinstance(observed, (list, dict)) or observed is None:
        return [f"{where}: claimed {t}, runtime gave {type(observed).__name__}"]
    return _check_one(name, t, known, np.asarray(observed), bindings, declared)


def _check_one(name: str, t: T.Type, known: Any, arr: np.ndarray, bindings: Mapping[str, int],
               declared: set[str]) -> list[str]:  # fmt: skip
    where = f"`{name}` at {dict(bindings)}"
    if not isinstance(t, T.TensorType):
        return [f"{where}: claimed {t}, runtime gave a tensor"]

    probs = []
    if t.elem is not None and t.elem != _np_elem(arr):
        probs.append(f"{where}: element type {T.elem_name(t.elem)}, runtime {arr.dtype}")
    if t.shape is None:
        return probs
    if len(t.shape) != arr.ndim:
        return probs + [f"{where}: rank {len(t.shape)} claimed {t}, runtime shape {arr.shape}"]
    for axis, (d, real) in enumerate(zip(t.shape, arr.shape)):
        if d is None or not D.free_names(d) <= declared:
            continue
        val = D.evaluate(d, bindings)
        if val != real:
            probs.append(f"{where}: dim {axis} is {D.to_str(d)} = {val}, runtime {real}")
    if known is not None:
        flat = arr.reshape(-1).tolist()
        if len(flat) != len(known.elems):
            probs.append(f"{where}: {len(known.elems)} known elements, runtime has {len(flat)}")
        else:
            for i, (k, real) in enumerate(zip(known.elems, flat)):
                if k is None:
                    continue
                if not isinstance(k, (int, float, bool, str)):
                    if not D.free_names(k) <= declared:
                        continue
                    k = D.evaluate(k, bindings)
                if isinstance(real, float) and isinstance(k, (int, float)):
                    ok = np.isclose(real, k, rtol=1e-5, equal_nan=True)
                else:
                    ok = k == real
                if not ok:
                    probs.append(f"{where}: element {i} known as {k}, runtime {real}")
                    break
    return probs


def _fresh_consistency(result: infer.InferenceResult, names: list[str],
                       runs: list[tuple[Mapping[str, int], dict[str, np.ndarray]]]) -> list[str]:  # fmt: skip
    """A fresh variable must denote one extent wherever it appears within a run."""
    probs = []
    for bindings, observed in runs:
        seen: dict[str, tuple[int, str]] = {}
        for name in names:
            t = result.type_of(name)
            if not isinstance(t, T.TensorType) or t.shape is None or name not in observed:
                continue
            shape = np.asarray(observed[name]).shape
            if len(shape) != len(t.shape):
                continue
            for d, real in zip(t.shape, shape):
                if d is not None and not isinstance(d, int) and d.is_Symbol and d.name not in bindings:
                    prev = seen.setdefault(d.name, (real, name))
                    if prev[0] != real:
                        probs.append(
                            f"fresh `{d.name}` is {prev[0]} at `{prev[1]}` but {real} at `{name}` "
                            f"(run {dict(bindings)})"
                        )
    return probs
