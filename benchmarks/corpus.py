"""Time the drop-in the way tools call it, on every corpus model, against onnx's C++ inference.

    python -m benchmarks.corpus                   # the 75 models of tests/models, best of 3
    python -m benchmarks.corpus --repeat 5 --json out.json
    python -m benchmarks.corpus --models bert_torchscript segformer_dynamo

Each model is loaded once; then, taking turns (so drift in a shared machine's speed affects them
alike), best of ``--repeat``:

* ``onnx``: ``onnx.shape_inference.infer_shapes(model, data_prop=True)``;
* ``drop-in``: ``infer.onnx_compat.infer_shapes(model, data_prop=True)`` (a ``ModelProto`` in,
  an inferred ``ModelProto`` out, as onnxslim, polygraphy and onnxsim call it), a first call:
  nothing kept from an earlier one is reused (``infer.walk.reuse.disabled``);
* ``infer_model``: ``infer.infer_model(model)`` (Python objects, nothing written), a first call;
* ``floor``: reading each node's operator, inputs, outputs and attribute names through protobuf
  and mapping outputs to nodes, nothing inferred (``read_fields``): the least any engine in
  Python does, as a ratio to onnx's whole inference.

Then, each as its ratio to ``infer_model``'s first call:

* ``again``: a second call on the unchanged model (its result is the first's, ``infer.walk.reuse``);
* ``renamed`` and ``inserted``: ``infer_model(edited, previous=first)`` after renaming one node,
  or inserting an ``Identity`` before one (both in the middle of the graph), the first call's
  node results kept (what a compiler re-inferring after each rewrite sees).

Also the one-node call (a ``Relu`` through each, best of many; the drop-in's first call and its
repeated one) and the start-up of ``onnx-infer check`` on a one-node model (wall clock of a
fresh process). Prints a table and the median and worst ratios; ``--json`` writes every row.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import onnx
from onnx import TensorProto, helper, shape_inference

import infer
from infer import onnx_compat
from infer.walk import reuse

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "models"


def _best(run: Callable[[], Any], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def _turns(runs: dict[str, Callable[[], Any]], repeat: int) -> dict[str, float]:
    """Best time of each run, the runs taking turns ``repeat`` times."""
    best = dict.fromkeys(runs, float("inf"))
    for _ in range(repeat):
        for name, run in runs.items():
            start = time.perf_counter()
            run()
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def _first(run: Callable[[], Any]) -> Callable[[], Any]:
    """``run`` as a first call: nothing kept from an earlier call is reused."""

    def first() -> Any:
        with reuse.disabled():
            return run()

    return first


def edited(model: onnx.ModelProto) -> tuple[onnx.ModelProto, onnx.ModelProto]:
    """``model`` with the middle node renamed, and with an ``Identity`` inserted before it (its
    first input read through the new node)."""
    renamed, inserted = onnx.ModelProto(), onnx.ModelProto()
    renamed.CopyFrom(model)
    inserted.CopyFrom(model)
    k = len(model.graph.node) // 2
    while not any(model.graph.node[k].input):
        k += 1
    renamed.graph.node[k].name += "_renamed"
    node = inserted.graph.node[k]
    i = next(j for j, x in enumerate(node.input) if x)
    source, node.input[i] = node.input[i], node.input[i] + "_inserted"
    inserted.graph.node.insert(k, helper.make_node("Identity", [source], [source + "_inserted"]))
    return renamed, inserted


def _after(first: onnx.ModelProto, second: onnx.ModelProto, repeat: int) -> float:
    """Best seconds of ``infer_model(second, previous=...)`` right after a first call on ``first``."""
    best = float("inf")
    for _ in range(repeat):
        reuse.clear()
        previous = infer.infer_model(first)
        start = time.perf_counter()
        infer.infer_model(second, previous=previous)
        best = min(best, time.perf_counter() - start)
    return best


def read_fields(model: onnx.ModelProto) -> dict[str, tuple[str, list[str]]]:
    """The least an engine written in Python does with a model: read each node's operator,
    inputs, outputs and attribute names through protobuf, and map each output to its node (the
    ``floor`` row: how far below onnx's C++ inference no Python walk can go)."""
    produced: dict[str, tuple[str, list[str]]] = {}
    for node in model.graph.node:
        op, inputs = node.op_type, list(node.input)
        for a in node.attribute:
            a.name  # noqa: B018 (read, as a rule reads its attributes)
        for o in node.output:
            produced[o] = (op, inputs)
    return produced


def time_corpus_model(path: Path, repeat: int) -> dict[str, Any]:
    """Seconds of each way of inferring the model at ``path`` (see the module docstring)."""
    model = onnx.load(str(path))
    runs: dict[str, Callable[[], Any]] = {
        "onnx": lambda: shape_inference.infer_shapes(model, data_prop=True),
        "drop-in": _first(lambda: onnx_compat.infer_shapes(model, data_prop=True)),
        "infer_model": _first(lambda: infer.infer_model(model)),
        "floor": lambda: read_fields(model),
    }
    row: dict[str, Any] = {"model": path.stem, "nodes": len(model.graph.node)}
    row.update(_turns(runs, repeat))
    renamed, inserted = edited(model)
    row["again"] = _after(model, model, repeat)
    row["renamed"] = _after(model, renamed, repeat)
    row["inserted"] = _after(model, inserted, repeat)
    return row


def one_node_model() -> onnx.ModelProto:
    """``y = Relu(x)`` over ``float[N, 3]``."""
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "one",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def time_one_node(repeat: int = 200) -> dict[str, float]:
    """Milliseconds of one call on a one-node model (best of ``repeat``, after a warm-up): first
    calls, and the drop-in called again on the same model (as onnxruntime's tool calls it node
    after node)."""
    model = one_node_model()
    runs = {
        "onnx": lambda: shape_inference.infer_shapes(model, data_prop=True),
        "drop-in": _first(lambda: onnx_compat.infer_shapes(model, data_prop=True)),
        "drop-in again": lambda: onnx_compat.infer_shapes(model, data_prop=True),
        "infer_model": _first(lambda: infer.infer_model(model)),
    }
    for run in runs.values():
        run()
    return {name: 1000 * t for name, t in _turns(runs, repeat).items()}


def time_startup(tmp: Path, repeat: int = 3) -> float:
    """Wall-clock seconds of ``onnx-infer check`` on a one-node model, in a fresh process."""
    path = tmp / "one_node.onnx"
    onnx.save(one_node_model(), str(path))
    command = [sys.executable, "-m", "infer.cli", "check", str(path)]
    return _best(lambda: subprocess.run(command, capture_output=True, check=False), repeat)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="*", help="corpus model names (default: all of tests/models)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", type=Path, help="write every row here")
    a = parser.parse_args(argv)
    paths = sorted(CORPUS.glob("*.onnx"))
    if a.models:
        paths = [p for p in paths if p.stem in set(a.models)]
    rows = []
    for path in paths:
        row = time_corpus_model(path, a.repeat)
        rows.append(row)
        first = row["infer_model"]
        print(
            f"{row['model']:34} {row['nodes']:6} nodes  onnx {1000 * row['onnx']:8.1f} ms  "
            f"drop-in {1000 * row['drop-in']:8.1f} ms ({row['drop-in'] / row['onnx']:5.1f}x)  "
            f"infer_model {1000 * first:8.1f} ms  again {row['again'] / first:5.2f}  "
            f"renamed {row['renamed'] / first:5.2f}  inserted {row['inserted'] / first:5.2f}",
            flush=True,
        )
    summary: dict[str, Any] = {}
    if rows:
        ratios = sorted((r["drop-in"] / r["onnx"], r["model"]) for r in rows)
        summary = {
            "models": len(rows),
            "drop-in / onnx median": statistics.median(x for x, _ in ratios),
            "drop-in / onnx worst": ratios[-1],
            "models over 6x": [m for x, m in ratios if x > 6],
            "floor / onnx median": statistics.median(r["floor"] / r["onnx"] for r in rows),
            "floor / onnx worst": max((r["floor"] / r["onnx"], r["model"]) for r in rows),
        }
        for what in ("again", "renamed", "inserted"):
            each = sorted((r[what] / r["infer_model"], r["model"]) for r in rows)
            summary[f"{what} / first, median"] = statistics.median(x for x, _ in each)
            summary[f"{what} / first, worst"] = each[-1]
    summary["one node, ms"] = time_one_node()
    with tempfile.TemporaryDirectory() as tmp:
        summary["onnx-infer check, one node, s"] = time_startup(Path(tmp))
    for key, value in summary.items():
        print(f"{key}: {value}")
    if a.json:
        a.json.write_text(json.dumps({"rows": rows, "summary": summary}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
