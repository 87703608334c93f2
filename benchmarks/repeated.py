"""Memory and time across repeated calls in one process (docs/limits.md, "Repeated calls").

    python -m benchmarks.repeated                       # 1,000 calls of each mode on examples/bert_tiny.onnx
    python -m benchmarks.repeated --calls 200 --model tests/models/gpt2_dynamo.onnx

Each mode runs in a fresh process and reports the resident memory and the number of objects the
garbage collector tracks after 10 calls and after the last, and the mean time of a call:

* ``same``: the same ``ModelProto`` again (a recent result is reused: ``infer.walk.reuse``);
* ``fresh``: every call a real inference (``infer.walk.reuse.disabled()``);
* ``alternate``: six models that differ in their ``doc_string`` in turn (more than
  ``infer.walk.reuse.KEPT``: each call infers again, the nodes' results come from the shared store);
* ``onnx_compat``, ``ort_compat``: the drop-ins, every call a real inference.

The bound is the issue's: after ``--calls`` calls, memory within 10% of what it is after 10.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODES = ("same", "fresh", "alternate", "onnx_compat", "ort_compat")
EARLY = 10  # calls after which the reference is measured


def rss_mb() -> float:
    """The process's resident memory now, in MB (Linux)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20


def _call(mode: str, path: Path) -> tuple[Callable[[int], object], contextlib.AbstractContextManager]:
    """The call a mode repeats (given the call's number) and the context it runs in."""
    import onnx

    import infer
    from infer import onnx_compat, ort_compat
    from infer.walk import reuse

    model = onnx.load(path)
    if mode == "same":
        return (lambda i: infer.infer_model(model)), contextlib.nullcontext()
    if mode == "fresh":
        return (lambda i: infer.infer_model(model)), reuse.disabled()
    if mode == "alternate":
        variants = []
        for k in range(reuse.KEPT + 2):
            m = onnx.ModelProto()
            m.CopyFrom(model)
            m.doc_string = f"variant {k}"
            variants.append(m)
        return (lambda i: infer.infer_model(variants[i % len(variants)])), contextlib.nullcontext()
    if mode == "onnx_compat":
        return (lambda i: onnx_compat.infer_shapes(model)), reuse.disabled()
    return (lambda i: ort_compat.SymbolicShapeInference.infer_shapes(model, auto_merge=True)), reuse.disabled()


def measure(mode: str, path: Path, calls: int) -> dict:
    """Run one mode in this process: memory after ``EARLY`` calls and after ``calls``, the mean
    CPU time of a call (less disturbed by other processes than the wall clock) and of it the
    time the garbage collector took."""
    call, context = _call(mode, path)
    out: dict = {"mode": mode, "calls": calls}
    collecting = [0.0]  # seconds in collections
    starts: list[float] = []

    def timed(phase: str, info: dict) -> None:
        if phase == "start":
            starts.append(time.process_time())
        elif starts:
            collecting[0] += time.process_time() - starts.pop()

    gc.callbacks.append(timed)
    with context:
        start = time.process_time()
        for i in range(1, calls + 1):
            call(i)
            if i == EARLY:
                out["rss_early_mb"], out["objects_early"] = rss_mb(), len(gc.get_objects())
        out["ms_per_call"] = (time.process_time() - start) * 1000 / calls
    gc.callbacks.remove(timed)
    out["gc_ms_per_call"] = collecting[0] * 1000 / calls
    out["rss_last_mb"], out["objects_last"] = rss_mb(), len(gc.get_objects())
    out["growth"] = out["rss_last_mb"] / out["rss_early_mb"] - 1
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--calls", type=int, default=1000)
    p.add_argument("--model", type=Path, default=ROOT / "examples" / "bert_tiny.onnx")
    p.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    p.add_argument("--measure-one", metavar="MODE", choices=MODES, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.measure_one:
        print(json.dumps(measure(a.measure_one, a.model, a.calls)))
        return 0
    worst = 0.0
    for mode in a.modes:  # each in a fresh process: no mode inherits another's heap
        command = [sys.executable, "-m", "benchmarks.repeated", "--measure-one", mode]
        command += ["--calls", str(a.calls), "--model", str(a.model)]
        run = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
        if run.returncode:
            print(f"{mode}: failed\n{run.stderr}", file=sys.stderr)
            return 1
        r = json.loads(run.stdout)
        worst = max(worst, r["growth"])
        memory = f"RSS {r['rss_early_mb']:6.1f} -> {r['rss_last_mb']:6.1f} MB ({100 * r['growth']:+5.1f}%)"
        print(
            f"{mode:12} {r['ms_per_call']:7.2f} ms/call ({r['gc_ms_per_call']:5.2f} collecting)  {memory}  "
            f"objects {r['objects_early']} -> {r['objects_last']}"
        )
    print(f"worst growth after {a.calls} calls: {100 * worst:+.1f}% (bound: 10%)")
    return 0 if worst <= 0.10 else 1


if __name__ == "__main__":
    sys.exit(main())
