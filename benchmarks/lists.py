"""Time the drop-ins against ``onnx.load`` on models of long integer lists (issue 27, item 7).

    python -m benchmarks.lists                         # 10 MB, best of 5
    python -m benchmarks.lists --sizes 10 50 --repeat 3 --json

Each model is one of ``benchmarks.hostile``'s cases holding a list of millions of integers
(``custom_ints``: a custom operator's ``ints`` attribute; ``constant_value_ints``: a Constant's
``value_ints``; ``constant_int64_data`` and ``initializer_int64_data``: an int64 Constant's or
initializer's ``int64_data``), written to a file.
Then, taking turns (so drift in a shared machine's speed affects them alike), best of
``--repeat``, each as its ratio to the first:

* ``load``: ``onnx.load(path)``, what any Python reader of the model pays;
* ``onnx``: ``onnx.shape_inference.infer_shapes(model, data_prop=True)``, for comparison;
* ``drop-in``: ``infer.onnx_compat.infer_shapes(model, data_prop=True)``, a tool's first call
  (nothing kept from an earlier one: ``infer.walk.reuse`` cleared, not disabled, so that the call
  pays for its key and for keeping its answer, as a tool's call does);
* ``ort``: ``infer.ort_compat.SymbolicShapeInference.infer_shapes(model)``, a first call too (a
  custom operator's output is incomplete: the time is the call's until it raises);
* ``path``: ``infer.onnx_compat.infer_shapes_path(path, out)`` (reads and writes the file, so
  against ``load`` it includes a save).

Taking turns in one process flatters ``load``: protobuf's parse reuses the memory the calls before
it freed, where the drop-ins' copy of the model does less so. ``--fresh`` measures each call
instead as a tool's first call in a process is: best of ``--repeat`` processes, each warmed on
a small model (imports, rules) and then timing one call.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import onnx
from onnx import shape_inference

from benchmarks.corpus import _turns
from benchmarks.hostile import CASES, MB
from infer import onnx_compat, ort_compat
from infer.walk import reuse

ROOT = Path(__file__).resolve().parents[1]
LIST_CASES = ("custom_ints", "constant_value_ints", "constant_int64_data", "initializer_int64_data")


def _fresh(run: Callable[[], Any]) -> Callable[[], Any]:
    """``run`` as a tool's first call: nothing kept from an earlier call, reuse left on."""

    def first() -> Any:
        reuse.clear()
        try:
            return run()
        except ort_compat.IncompleteInference:  # the call's time until it raised is what a tool pays
            return None

    return first


def _runs(path: Path, out: Path, model: onnx.ModelProto) -> dict[str, Callable[[], Any]]:
    return {
        "load": lambda: onnx.load(str(path)),
        "onnx": lambda: shape_inference.infer_shapes(model, data_prop=True),
        "drop-in": _fresh(lambda: onnx_compat.infer_shapes(model, data_prop=True)),
        "ort": _fresh(lambda: ort_compat.SymbolicShapeInference.infer_shapes(model)),
        "path": _fresh(lambda: onnx_compat.infer_shapes_path(path, out)),
    }


def _time_once(path: Path, way: str) -> float:
    """Seconds of one call ``way`` on the model at ``path``, in this process warmed first."""
    out = path.with_suffix(".inferred.onnx")
    warm = ROOT / "examples" / "bert_tiny.onnx"
    for run in _runs(warm, out, onnx.load(str(warm))).values():
        run()
    model = onnx.load(str(path))
    run = _runs(path, out, model)[way]
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def _time_fresh(path: Path, ways: list[str], repeat: int) -> dict[str, float]:
    """Best seconds of each way over ``repeat`` processes each timing one call, taking turns."""
    best = dict.fromkeys(ways, float("inf"))
    for _ in range(repeat):
        for way in ways:
            command = [sys.executable, "-m", "benchmarks.lists", "--once", str(path), way]
            run = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True)
            best[way] = min(best[way], float(run.stdout.strip().splitlines()[-1]))
    return best


def time_case(case: str, size: int, repeat: int, directory: Path, fresh: bool = False) -> dict[str, Any]:
    """Best seconds of each way of reading the model of ``case`` at ``size`` bytes (see the
    module docstring), and each as its ratio to ``load``."""
    path = directory / f"{case}.onnx"
    path.write_bytes(CASES[case](size))
    out = path.with_suffix(".inferred.onnx")
    runs = _runs(path, out, onnx.load(str(path)))
    best = _time_fresh(path, list(runs), repeat) if fresh else _turns(runs, repeat)
    path.unlink()
    out.unlink(missing_ok=True)
    row: dict[str, Any] = {"case": case, "bytes": size, "fresh": fresh, "seconds": best}
    row["ratio"] = {name: t / best["load"] for name, t in best.items()}
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=float, nargs="*", default=[10], help="file sizes in MB")
    parser.add_argument("--cases", nargs="*", choices=LIST_CASES, default=list(LIST_CASES))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--fresh", action="store_true", help="each call a first call in a new process")
    parser.add_argument("--json", action="store_true", help="one JSON document of every measurement")
    parser.add_argument("--once", nargs=2, help=argparse.SUPPRESS)  # (path, way): print its seconds
    args = parser.parse_args(argv)
    if args.once:
        print(_time_once(Path(args.once[0]), args.once[1]))
        return 0
    rows = []
    with tempfile.TemporaryDirectory(prefix="onnx-infer-lists-") as tmp:
        if not args.json:
            ways = "".join(f"{k + ' x':>11}" for k in ("onnx", "drop-in", "ort", "path"))
            print(f"{'case':<24}{'MB':>4}{'load ms':>9}{ways}")
        for size in args.sizes:
            for case in args.cases:
                row = time_case(case, int(size * MB), args.repeat, Path(tmp), args.fresh)
                rows.append(row)
                if not args.json:
                    ratios = "".join(f"{row['ratio'][k]:>11.2f}" for k in ("onnx", "drop-in", "ort", "path"))
                    print(f"{case:<24}{size:>4g}{1000 * row['seconds']['load']:>9.0f}{ratios}", flush=True)
    if args.json:
        print(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
