"""Checking ``result.cost`` against onnxruntime (issue 39), for tests/test_cost_runtime.py.

Every main-graph value is exposed and the model run; each value's claimed bytes is compared with
the array's ``nbytes``, the live bytes at each node with a liveness simulation written here apart
from the library's (from the model's node order and the real arrays), and the multiply-adds of
MatMul, Gemm and Conv with a formula over the runtime shapes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx

import infer
from infer.core import dims as D
from infer.core import types as T
from tests.support import runtime as R


@dataclass
class Tally:
    """What one model's runs checked, and every mismatch."""

    values: int = 0
    peaks: int = 0
    work: int = 0
    mismatches: list[str] = field(default_factory=list)
    unchecked: list[str] = field(default_factory=list)


def _fresh_bindings(result: infer.InferenceResult, arrays: Mapping[str, np.ndarray]) -> dict[str, int]:
    """The extent each variable standing alone on an axis takes in the run (fresh ones, and names
    the model declares on values that are not inputs)."""
    out: dict[str, int] = {}
    for name, v in result.graphs["main"].values.items():
        t, arr = v.type, arrays.get(name)
        if not isinstance(t, T.TensorType) or t.shape is None or not isinstance(arr, np.ndarray):
            continue
        for d, n in zip(t.shape, arr.shape):
            var = D.variable_name(d)
            if var is not None:
                out.setdefault(var, int(n))
    return out


def simulate(model: onnx.ModelProto, arrays: Mapping[str, np.ndarray]) -> list[int]:
    """Live bytes at each node of the model's order: a value from its producer (graph inputs from
    the first node) to its last reader (graph outputs to the last), initializers left out."""
    g = model.graph
    weights = {t.name for t in g.initializer}
    n = len(g.node)
    first: dict[str, int] = {i.name: 0 for i in g.input if i.name not in weights}
    for k, node in enumerate(g.node):
        for o in node.output:
            if o and o not in weights:
                first.setdefault(o, k)
    last = dict(first)
    for k, node in enumerate(g.node):
        for name in [*node.input, *_read_inside(node)]:
            if name in last:
                last[name] = max(last[name], k)
    for o in g.output:
        if o.name in last:
            last[o.name] = n - 1
    live = [0] * n
    for name, k in first.items():
        for i in range(k, last[name] + 1):
            live[i] += int(arrays[name].nbytes)
    return live


def _read_inside(node: onnx.NodeProto) -> list[str]:
    out: list[str] = []
    for a in node.attribute:
        for g in [a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs):
            for inner in g.node:
                out += [*inner.input, *_read_inside(inner)]
    return out


def runtime_macs(node: onnx.NodeProto, arrays: Mapping[str, np.ndarray], shapes: Mapping[str, tuple]) -> int | None:
    """Multiply-accumulates of a MatMul, Gemm or Conv from the shapes of the run."""

    def shape(name: str) -> tuple:
        return tuple(arrays[name].shape) if name in arrays else shapes[name]

    y = int(np.prod(shape(node.output[0]), dtype=object))
    a = shape(node.input[0])
    if node.op_type == "MatMul":
        return y * a[-1]
    if node.op_type == "Gemm":
        trans = any(x.name == "transA" and x.i for x in node.attribute)
        return y * (a[0] if trans else a[1])
    if node.op_type == "Conv":
        return y * int(np.prod(shape(node.input[1])[1:], dtype=object))
    return None


def check_model(entry: Mapping[str, Any], bindings: list[dict[str, int]], tally: Tally) -> None:
    """Run ``entry``'s model at each binding and compare the cost's claims with the run."""
    model = onnx.load(str(entry["path"]))
    result = infer.infer_model(model)
    cost = result.cost
    session = R.V.Session(R.expose_all(model))
    weights = {t.name: tuple(t.dims) for t in model.graph.initializer}
    where = entry["file"]
    for b in bindings:
        feeds = R.feeds_for(entry, b)
        try:
            arrays = {**feeds, **session.run(feeds)}
        except Exception as e:  # a binding the model does not run at (a sliding window): nothing to compare
            tally.unchecked.append(f"{where} at {b}: onnxruntime refused the run ({str(e)[:120]})")
            continue
        full = {**_fresh_bindings(result, arrays), **b}
        _check_values(cost, arrays, full, f"{where} at {b}", tally)
        _check_peak(cost, model, arrays, full, f"{where} at {b}", tally)
        _check_work(cost, model, arrays, weights, full, f"{where} at {b}", tally)


def _check_values(cost: Any, arrays: Mapping[str, np.ndarray], full: dict[str, int], where: str, tally: Tally) -> None:
    for s in cost.spans:
        arr = arrays.get(s.name)
        if not isinstance(arr, np.ndarray):
            tally.unchecked.append(f"{where}: `{s.name}` not fetched")
            continue
        claimed = s.bytes.at(full)
        if claimed is None:
            tally.unchecked.append(f"{where}: `{s.name}` {s.bytes}")
            continue
        tally.values += 1
        if claimed != arr.nbytes:
            tally.mismatches.append(f"{where}: `{s.name}` claimed {claimed} bytes, the run {arr.nbytes}")


def _check_peak(
    cost: Any, model: onnx.ModelProto, arrays: Mapping[str, np.ndarray], full: dict[str, int], where: str, tally: Tally
) -> None:
    ev = cost.at(full)
    if ev.peak is None:
        tally.unchecked.append(f"{where}: peak ({ev.why})")
        return
    live = simulate(model, arrays)
    tally.peaks += 1
    if ev.live != live:
        tally.mismatches.append(
            f"{where}: live bytes differ first at node "
            f"{next(i for i, (a, b) in enumerate(zip(ev.live, live)) if a != b)}"
        )
    term = (
        D.evaluate(cost.peak.term, full)
        if cost.peak.term is not None
        else max(D.evaluate(t, full) for _, t in cost.peak.candidates)
    )
    if term != max(live):
        tally.mismatches.append(f"{where}: peak term {term}, simulated {max(live)}")


def _check_work(
    cost: Any,
    model: onnx.ModelProto,
    arrays: Mapping[str, np.ndarray],
    weights: Mapping[str, tuple],
    full: dict[str, int],
    where: str,
    tally: Tally,
) -> None:
    for w, node in zip(cost.nodes, model.graph.node):
        if node.op_type not in ("MatMul", "Gemm", "Conv") or node.domain not in ("", "ai.onnx"):
            continue
        expected = runtime_macs(node, arrays, weights)
        claimed = D.evaluate(w.macs, full) if w.macs is not None else None
        if type(claimed) is not int:
            tally.unchecked.append(f"{where}: work of {node.op_type} `{node.name}` ({w.why or w.macs})")
            continue
        tally.work += 1
        if claimed != expected:
            tally.mismatches.append(f"{where}: {node.op_type} `{node.name}` claimed {claimed} MACs, runtime {expected}")


def bindings_for(entry: Mapping[str, Any]) -> list[dict[str, int]]:
    """Three bindings inside the entry's ranges, small enough to run quickly: the least sizes and
    two above them (odd steps, so floors and remainders are exercised)."""
    ranges = entry["dim_ranges"]
    given = [dict(b["dims"]) for b in entry.get("bindings", [])]  # bindings the manifest ran
    out = given + [{k: min(hi, lo + step) for k, (lo, hi) in ranges.items()} for step in (0, 5, 13)]
    out = [b for k, b in enumerate(out) if b not in out[:k]][:3]
    for inp in entry["inputs"]:  # an axis named for a sum of others (``past_sequence + sequence``)
        for d in inp["dims"]:
            parts = re.split(r"_plus_| \+ ", d) if isinstance(d, str) and d not in ranges else []
            for b in out if len(parts) > 1 else []:
                b[d] = sum(b[p] for p in parts)
    return out


def dynamic_entries() -> list[dict[str, Any]]:
    """The corpus's models with dynamic axes (both manifests)."""
    entries = R.manifest() + R.manifest(R.MODELS / "more")
    return [e for e in entries if e.get("dim_ranges")]
