"""Time the drop-in the way tools call it, on every corpus model, against onnx's C++ inference.

    python -m benchmarks.corpus                   # the 75 models of tests/models, best of 3
    python -m benchmarks.corpus --repeat 5 --json out.json
    python -m benchmarks.corpus --models bert_torchscript segformer_dynamo

Each model is loaded once; then, taking turns (so drift in a shared machine's speed affects them
alike), best of ``--repeat``:

* ``onnx``: ``onnx.shape_inference.infer_shapes(model, data_prop=True)``;
* ``drop-in``: ``infer.onnx_compat.infer_shapes(model, data_prop=True)`` (a ``ModelProto`` in,
  an inferred ``ModelProto`` out, as onnxslim, polygraphy and onnxsim call it);
* ``infer_model``: ``infer.infer_model(model)`` (Python objects, nothing written), and
  ``infer_model again``: a second call on the same model in the same process.

Also the one-node call (a ``Relu`` through each, best of many) and the start-up of
``onnx-infer check`` on a one-node model (wall clock of a fresh process). Prints a table and the
median and worst ratios of the drop-in to onnx; ``--json`` writes every row.
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


def time_corpus_model(path: Path, repeat: int) -> dict[str, Any]:
    """Seconds of each way of inferring the model at ``path`` (``infer_model again`` is the
    second of two calls made back to back, best over ``repeat`` such pairs)."""
    model = onnx.load(str(path))
    runs: dict[str, Callable[[], Any]] = {
        "onnx": lambda: shape_inference.infer_shapes(model, data_prop=True),
        "drop-in": lambda: onnx_compat.infer_shapes(model, data_prop=True),
        "infer_model": lambda: infer.infer_model(model),
    }
    row: dict[str, Any] = {"model": path.stem, "nodes": len(model.graph.node)}
    row.update(_turns(runs, repeat))
    again = float("inf")
    for _ in range(repeat):
        infer.infer_model(model)
        start = time.perf_counter()
        infer.infer_model(model)
        again = min(again, time.perf_counter() - start)
    row["infer_model again"] = again
    return row


def one_node_model() -> onnx.ModelProto:
    """``y = Relu(x)`` over ``float[N, 3]``."""
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "one",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def time_one_node(repeat: int = 200) -> dict[str, float]:
    """Milliseconds of one call on a one-node model (best of ``repeat``, after a warm-up)."""
    model = one_node_model()
    runs = {
        "onnx": lambda: shape_inference.infer_shapes(model, data_prop=True),
        "drop-in": lambda: onnx_compat.infer_shapes(model, data_prop=True),
        "infer_model": lambda: infer.infer_model(model),
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
        print(
            f"{row['model']:34} {row['nodes']:6} nodes  onnx {1000 * row['onnx']:8.1f} ms  "
            f"drop-in {1000 * row['drop-in']:8.1f} ms ({row['drop-in'] / row['onnx']:5.1f}x)  "
            f"infer_model {1000 * row['infer_model']:8.1f} ms  again {1000 * row['infer_model again']:8.1f} ms",
            flush=True,
        )
    summary: dict[str, Any] = {}
    if rows:
        ratios = sorted((r["drop-in"] / r["onnx"], r["model"]) for r in rows)
        again = [r["infer_model again"] / r["infer_model"] for r in rows]
        summary = {
            "models": len(rows),
            "drop-in / onnx median": statistics.median(x for x, _ in ratios),
            "drop-in / onnx worst": ratios[-1],
            "second infer_model / first, median": statistics.median(again),
        }
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
