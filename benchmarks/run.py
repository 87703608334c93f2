"""Time onnx-infer against its peers on large models, and measure how it scales.

    python -m benchmarks.run                 # everything (about 5 minutes on 2 cores)
    python -m benchmarks.run --models gpt2_48 --repeat 5
    python -m benchmarks.run --scaling-only

Engines, each called on an in-memory model in one process, best of ``--repeat`` runs (wall
clock; the engines take turns, so drift in the machine's speed affects them alike):

* ``onnx-infer``: ``infer.infer_model(model)`` (types, shapes, dimension table, diagnostics as
  Python objects), and ``+ annotate``: the same plus ``result.model``, the copy with every
  ``value_info`` written (what the other three return);
* ``onnx``: ``onnx.shape_inference.infer_shapes(model, data_prop=True)``;
* ``onnxruntime``: ``SymbolicShapeInference.infer_shapes(model, auto_merge=True)``;
* ``onnx-shape-inference``: ``infer_symbolic_shapes`` on an ``onnx_ir`` model converted
  beforehand (the conversion is not timed; it mutates the model, so each run gets a new one).

The large models come from ``benchmarks/make_models.py`` (run it once with the export venv);
missing ones are skipped with a note. The synthetic models (``benchmarks/synthetic.py``) are
built here. Scaling: inference time and peak memory of the synthetic chain from 1,000 to
100,000 nodes, each size in a fresh process, timed on its first run and again (its result
reused, ``infer.walk.reuse``); memory is the peak of Python allocations during inference
(``tracemalloc``), against the size of the serialized model without its weights. The large
models' memory is measured the same way, and as the rise of the process's peak resident memory
(which also counts protobuf's copies), each in a fresh process with its weights in a file.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import onnx

HERE = Path(__file__).resolve().parent
MODELS = HERE / "models"
LARGE = ["gpt2_48", "llama_32", "resnet152"]
SCALING_SIZES = [1_000, 3_000, 10_000, 30_000, 100_000]


# --------------------------------------------------------------------------- engines


def _first_call(run: Callable[[], Any]) -> Callable[[], Any]:
    """``run`` as a first call each time: nothing kept from an earlier call is reused
    (``infer.walk.reuse``), so that best-of-N times a first call, not a repeated one."""
    from infer.walk import reuse

    def first() -> Any:
        with reuse.disabled():
            return run()

    return first


def _onnx_infer(model: onnx.ModelProto) -> Callable[[], Any]:
    import infer

    return _first_call(lambda: infer.infer_model(model))


def _onnx_infer_annotate(model: onnx.ModelProto) -> Callable[[], Any]:
    import infer

    return _first_call(lambda: infer.infer_model(model).model)


def _onnx(model: onnx.ModelProto) -> Callable[[], Any]:
    from onnx import shape_inference

    return lambda: shape_inference.infer_shapes(model, data_prop=True)


def _onnxruntime(model: onnx.ModelProto) -> Callable[[], Any]:
    from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference

    return lambda: SymbolicShapeInference.infer_shapes(model, auto_merge=True)


class _IrRun:
    """onnx-shape-inference on a fresh ``onnx_ir`` model each run (conversion not timed)."""

    def __init__(self, model: onnx.ModelProto):
        import onnx_ir

        self.convert = lambda: onnx_ir.from_proto(model)
        self.next = self.convert()

    def __call__(self) -> Any:
        from onnx_shape_inference import infer_symbolic_shapes

        return infer_symbolic_shapes(self.next)

    def reset(self) -> None:
        self.next = self.convert()


ENGINES: dict[str, Callable[[onnx.ModelProto], Callable[[], Any]]] = {
    "onnx-infer": _onnx_infer,
    "onnx-infer + annotate": _onnx_infer_annotate,
    "onnx": _onnx,
    "onnxruntime": _onnxruntime,
    "onnx-shape-inference": _IrRun,
}


def best_time(run: Callable[[], Any], repeat: int) -> float:
    """The fastest of ``repeat`` runs, in seconds (a failure propagates)."""
    best = float("inf")
    for _ in range(repeat):
        if isinstance(run, _IrRun):
            run.reset()
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def time_model(name: str, model: onnx.ModelProto, repeat: int, engines: list[str]) -> dict[str, Any]:
    """Best time of each engine on ``model``; the engines take turns, so drift in the machine's
    speed (a shared virtual machine) affects them alike."""
    row: dict[str, Any] = {"model": name, "nodes": len(model.graph.node)}
    runs: dict[str, Callable[[], Any]] = {}
    for engine in engines:
        try:
            runs[engine] = ENGINES[engine](model)
            if engine.startswith("onnx-infer"):
                # Build the operator signatures this model uses, once per process (the peers'
                # are compiled in); the time of this first run is reported as "cold".
                start = time.perf_counter()
                runs[engine]()
                row.setdefault("onnx-infer cold", time.perf_counter() - start)
        except Exception as e:  # a peer that fails on a model is reported, not fatal
            row[engine] = _failure(e)
    for _ in range(repeat):
        for engine, run in list(runs.items()):
            try:
                t = best_time(run, 1)
            except Exception as e:
                row[engine] = _failure(e)
                del runs[engine]
                continue
            row[engine] = min(t, row.get(engine, float("inf")))
    return row


def _failure(e: Exception) -> str:
    first = str(e).splitlines()[0][:80] if str(e) else ""
    return f"failed: {type(e).__name__}: {first}"


def _fmt(v: Any) -> str:
    return f"{v:8.3f}" if isinstance(v, float) else str(v)


def print_table(rows: list[dict[str, Any]], engines: list[str]) -> None:
    print(f"{'model':<22}{'nodes':>8}  " + "  ".join(f"{e:>22}" for e in engines))
    for r in rows:
        print(f"{r['model']:<22}{r['nodes']:>8}  " + "  ".join(f"{_fmt(r.get(e, '-')):>22}" for e in engines))
    print("\nratios (onnx-infer time / peer time; below 1 is faster):")
    for r in rows:
        ours, annotated = r.get("onnx-infer"), r.get("onnx-infer + annotate")
        parts = []
        for peer in ("onnx", "onnxruntime", "onnx-shape-inference"):
            theirs = r.get(peer)
            if isinstance(ours, float) and isinstance(theirs, float) and theirs > 0:
                text = f"{peer} {ours / theirs:.2f}"
                if isinstance(annotated, float):
                    text += f" (annotated {annotated / theirs:.2f})"
                parts.append(text)
        print(f"  {r['model']:<20} " + "; ".join(parts))


# --------------------------------------------------------------------------- scaling


def weightless_size(model: onnx.ModelProto) -> int:
    """Bytes of ``model`` serialized with every initializer's data removed (dims kept)."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    for t in copy.graph.initializer:
        for f in ("raw_data", "float_data", "int32_data", "int64_data", "double_data", "uint64_data"):
            t.ClearField(f)
    return copy.ByteSize()


def measure_one(n_nodes: int) -> dict[str, Any]:
    """Time and memory of inferring the synthetic chain of ``n_nodes`` (run in a fresh process)."""
    import infer

    from .synthetic import growing_chain

    infer.infer_model(growing_chain(200))  # imports and signatures, outside what is measured
    return _three_runs(growing_chain(n_nodes))


def _three_runs(model: onnx.ModelProto) -> dict[str, Any]:
    """Infer ``model`` three times in this process: the first run is timed and its rise of
    resident memory measured, the second timed (a second call on the same model: its result is
    the first's again, ``infer.walk.reuse``), the third run, a first call again, under ``tracemalloc``
    (which slows it down) for the peak of Python allocations. Where the resident peak cannot be
    reset, the process's earlier peak bounds the rise (``rss_rise_is_bound``)."""
    import gc
    import tracemalloc

    import infer
    from infer.walk import reuse

    reuse.clear()  # (the warm-up's nodes)
    size = weightless_size(model)
    gc.collect()
    before = rss()
    reset = reset_peak_rss()
    start = time.perf_counter()
    infer.infer_model(model)
    first = time.perf_counter() - start
    rise = peak_rss() - before
    start = time.perf_counter()
    infer.infer_model(model)
    again = time.perf_counter() - start
    reuse.clear()
    tracemalloc.start()
    with reuse.disabled():
        infer.infer_model(model)
    _, python_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {
        "nodes": len(model.graph.node),
        "seconds": first,
        "seconds_again": again,
        "model_bytes_without_weights": size,
        "python_peak_bytes": python_peak,
        "rss_rise_bytes": max(0, rise),
        "rss_rise_is_bound": not reset,
    }


def scaling(sizes: list[int]) -> list[dict[str, Any]]:
    rows = []
    for n in sizes:
        out = subprocess.run(
            [sys.executable, "-m", "benchmarks.run", "--measure-one", str(n)],
            cwd=HERE.parent,
            capture_output=True,
            text=True,
            check=True,
        )
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(
        f"\n{'nodes':>8} {'first s':>9} {'again s':>9} {'us/node':>8} {'model MB':>9} {'python peak MB':>15} "
        f"{'x model':>8} {'RSS rise MB':>12} {'x model':>8}"
    )
    for r in rows:
        mb = r["model_bytes_without_weights"] / 1e6
        peak = r["python_peak_bytes"] / 1e6
        print(
            f"{r['nodes']:>8} {r['seconds']:>9.3f} {r['seconds_again']:>9.3f} "
            f"{1e6 * r['seconds'] / r['nodes']:>8.1f} {mb:>9.2f} {peak:>15.1f} {peak / mb:>8.2f} "
            f"{_rise(r, mb)}"
        )
    small = min(rows, key=lambda r: abs(r["nodes"] - 10_000))
    large = max(rows, key=lambda r: r["nodes"])
    if small is not large:
        for key, what in (("seconds", "first run"), ("seconds_again", "run again")):
            growth = large[key] / small[key]
            print(
                f"{what}: time at {large['nodes']} nodes / time at {small['nodes']} nodes: {growth:.1f} "
                f"(node ratio {large['nodes'] / small['nodes']:.1f})"
            )
    return rows


# --------------------------------------------------------------------------- memory of real models


def rss() -> int:
    """The process's resident memory now, in bytes (Linux)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def peak_rss() -> int:
    """The process's peak resident memory since it started or since ``reset_peak_rss``, in bytes."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise OSError("no VmHWM in /proc/self/status")


def reset_peak_rss() -> bool:
    """Start the peak over from the current resident memory (Linux 4.0+); whether it could."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def measure_memory(path: Path) -> dict[str, Any]:
    """Peak memory of inferring ``path`` (weights in an external file, not loaded), in this process
    (``_three_runs``): the peak of Python allocations, and how far the process's resident memory
    peaks above where it was before the first run, which also counts protobuf's own copies and
    the operator signatures this model makes the process build (once per process)."""
    import infer
    import signatures

    from .synthetic import growing_chain

    # Imports and the common signatures; every family of rules too, which a process imports as
    # its models first need them (code, not what a model costs).
    signatures.load_all()
    infer.infer_model(growing_chain(200))
    return _three_runs(onnx.load(str(path), load_external_data=False))


def memory(paths: list[Path]) -> None:
    """``measure_memory`` of each model, each in a fresh process, its weights moved to a file."""
    import tempfile

    print(f"\n{'model':<12} {'model MB':>9} {'python peak MB':>15} {'x model':>8} {'RSS rise MB':>12} {'x model':>8}")
    for path in paths:
        with tempfile.TemporaryDirectory() as tmp:
            target = Path(tmp) / "model.onnx"
            onnx.save_model(
                onnx.load(str(path)), str(target), save_as_external_data=True, location="weights.bin", size_threshold=0
            )
            out = subprocess.run(
                [sys.executable, "-m", "benchmarks.run", "--measure-memory", str(target)],
                cwd=HERE.parent,
                capture_output=True,
                text=True,
                check=True,
            )
        r = json.loads(out.stdout.strip().splitlines()[-1])
        mb = r["model_bytes_without_weights"] / 1e6
        peak = r["python_peak_bytes"] / 1e6
        print(f"{path.stem:<12} {mb:>9.2f} {peak:>15.1f} {peak / mb:>8.2f} {_rise(r, mb)}")


def _rise(r: dict[str, Any], mb: float) -> str:
    """The resident rise of a measurement and its ratio to the model, as table columns ("<=" when
    the peak could not be reset and an earlier one bounds it)."""
    rise = r["rss_rise_bytes"] / 1e6
    bound = "<=" if r["rss_rise_is_bound"] else ""
    return f"{bound + f'{rise:.1f}':>12} {rise / mb:>8.2f}"


# --------------------------------------------------------------------------- external data


def external_data(path: Path, gigabytes: int = 4, repeat: int = 3) -> None:
    """Time a model whose weights live in a file of several GB against the same without the file.

    The file is made sparse (``truncate``), so it takes no disk space; inference must not read
    it (Clause 13), so both times should be the same.
    """
    import tempfile

    import infer

    model = onnx.load(str(path))
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "model.onnx"
        onnx.save_model(model, str(target), save_as_external_data=True, location="weights.bin", size_threshold=0)
        data = Path(tmp) / "weights.bin"
        real = data.stat().st_size
        os.truncate(data, gigabytes << 30)
        with_file = best_time(lambda: infer.infer_model(target), repeat)
        data.unlink()
        without_file = best_time(lambda: infer.infer_model(target), repeat)
    print(
        f"\nexternal data ({path.stem}, {real / 1e6:.0f} MB of weights in a {gigabytes} GB file): "
        f"{with_file:.3f} s with the file, {without_file:.3f} s without it"
    )


# --------------------------------------------------------------------------- main


def environment() -> str:
    import numpy
    import onnxruntime
    import sympy

    try:
        from importlib.metadata import version

        osi = version("onnx-shape-inference")
    except Exception:
        osi = "not installed"
    return (
        f"{platform.python_implementation()} {platform.python_version()} on {platform.machine()}, "
        f"{os.cpu_count()} cores; onnx {onnx.__version__}, onnxruntime {onnxruntime.__version__}, "
        f"onnx-shape-inference {osi}, sympy {sympy.__version__}, numpy {numpy.__version__}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--models",
        nargs="*",
        default=[*LARGE, "synthetic_100k"],
        help="large models to time (default: all, and the 100,000-node synthetic chain)",
    )
    parser.add_argument("--engines", nargs="*", default=list(ENGINES), choices=list(ENGINES))
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--scaling-only", action="store_true")
    parser.add_argument("--no-scaling", action="store_true")
    parser.add_argument("--measure-one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--measure-memory", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure_one:
        print(json.dumps(measure_one(args.measure_one)))
        return 0
    if args.measure_memory:
        print(json.dumps(measure_memory(args.measure_memory)))
        return 0
    warnings.filterwarnings("ignore")
    print(environment())
    if not args.scaling_only:
        import infer

        from .synthetic import growing_chain

        infer.infer_model(growing_chain(200))  # import and warm-up, for every engine alike
        rows = []
        for name in args.models:
            if name == "synthetic_100k":
                model = growing_chain(100_000)
                rows.append(time_model(name, model, 1, args.engines))
                continue
            path = MODELS / f"{name}.onnx"
            if not path.exists():
                print(
                    f"{name}: {path} is missing; make it with "
                    "`/work/export-venv/bin/python benchmarks/make_models.py` (needs torch)"
                )
                continue
            rows.append(time_model(name, onnx.load(str(path)), args.repeat, args.engines))
        print()
        print_table(rows, args.engines)
        if (MODELS / "gpt2_48.onnx").exists():
            external_data(MODELS / "gpt2_48.onnx")
        memory([MODELS / f"{name}.onnx" for name in args.models if (MODELS / f"{name}.onnx").exists()])
    if not args.no_scaling:
        scaling(SCALING_SIZES)
    return 0


if __name__ == "__main__":
    sys.exit(main())
