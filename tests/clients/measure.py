"""Measure the clients on the corpus: ``python -m tests.clients.measure [--repeat N] [PART ...]``.

Parts (all by default):

- ``ort``: onnxruntime's ``SymbolicShapeInference`` (at ``auto_merge=False``, the default of
  ``quant_pre_process``, and ``True``, what onnxslim and polygraphy pass) against
  ``infer.ort_compat``: on how many corpus models each completes, and its CPU seconds;
- ``onnxslim``: onnxslim's CPU seconds and loop iterations over the corpus with onnx's inference,
  with the drop-in, and as it ships (each model's fastest of ``--repeat`` runs, modes alternated);
- ``polygraphy``: how often polygraphy's sanitize pipeline falls back to onnx's inference, as it
  ships and with the drop-in, and its folding passes;
- ``onnxscript``: nodes left by onnxscript's optimizer after ``infer.ir.InferShapesPass`` and after
  ``onnx_ir``'s ``ShapeInferencePass`` (onnx's inference), and its CPU seconds.

CPU seconds are this process's, so that other work on the machine does not count.
"""

from __future__ import annotations

import argparse
import logging
import os
import tempfile
import time

from infer import ort_compat
from tests.clients import tools
from tests.clients.common import ENTRIES, load

PARTS = ("ort", "onnxslim", "polygraphy", "onnxscript")


def measure_ort() -> None:
    from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference as Theirs

    rows = {"onnxruntime, auto_merge=False": (Theirs, False), "onnxruntime, auto_merge=True": (Theirs, True)}
    rows["infer.ort_compat"] = (ort_compat.SymbolicShapeInference, False)
    failed: dict[str, list[str]] = {}
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)  # onnxruntime's tool writes its partial model into the working directory
        try:
            _complete_counts(rows, failed)
        finally:
            os.chdir(cwd)
    print("  incomplete with onnxruntime's at auto_merge=False:", ", ".join(failed["onnxruntime, auto_merge=False"]))


def _complete_counts(rows: dict[str, tuple[type, bool]], failed: dict[str, list[str]]) -> None:
    for label, (cls, auto_merge) in rows.items():
        start, failed[label] = time.process_time(), []
        for entry in ENTRIES:
            try:
                cls.infer_shapes(load(entry), auto_merge=auto_merge)
            except Exception:
                failed[label].append(entry["file"])
        cpu = time.process_time() - start
        print(f"{label}: complete on {len(ENTRIES) - len(failed[label])} of {len(ENTRIES)}, {cpu:.1f} s CPU")


def measure_onnxslim(repeat: int) -> None:
    modes = ("onnx", "dropin", "stock")
    cpu = dict.fromkeys(modes, 0.0)
    inference = dict.fromkeys(modes, 0.0)
    passes = dict.fromkeys(modes, 0)
    for entry in ENTRIES:
        model = load(entry)
        best: dict[str, tools.Run] = {}
        for _ in range(repeat):
            for mode in modes:
                run = tools.onnxslim(model, mode)
                if mode not in best or run.cpu < best[mode].cpu:
                    best[mode] = run
        for mode in modes:
            cpu[mode] += best[mode].cpu
            inference[mode] += best[mode].inference_cpu
            passes[mode] += best[mode].passes
        cells = ", ".join(f"{m} {best[m].cpu:.2f} s, {best[m].passes} iterations" for m in modes)
        print(f"  {entry['file']}: {cells}", flush=True)
    for mode in modes:
        print(
            f"onnxslim, {mode}: {cpu[mode]:.1f} s CPU ({inference[mode]:.1f} s in shape inference), "
            f"{passes[mode]} iterations"
        )
    print(f"onnxslim, drop-in / onnx's inference: {cpu['dropin'] / cpu['onnx']:.2f}x")


def measure_polygraphy() -> None:
    from polygraphy.logger import G_LOGGER

    G_LOGGER.module_severity = G_LOGGER.ERROR  # its warnings say the same as the counts
    for mode in ("stock", "dropin", "onnx"):
        fallbacks = passes = 0
        fell_back = []
        for entry in ENTRIES:
            run = tools.polygraphy(load(entry), mode)
            fallbacks += run.fallbacks
            passes += run.passes
            if run.fallbacks:
                fell_back.append(entry["file"])
        print(f"polygraphy, {mode}: {fallbacks} fallbacks to onnx's inference, {passes} folding passes")
        if fell_back:
            print("  fell back on:", ", ".join(fell_back))


def measure_onnxscript() -> None:
    import onnx_ir as ir
    from onnx_ir.passes.common import ShapeInferencePass
    from onnxscript import optimizer

    from infer.ir import InferShapesPass

    nodes = {"InferShapesPass": 0, "ShapeInferencePass": 0}
    cpu = dict.fromkeys(nodes, 0.0)
    fewer, more = [], []
    for entry in ENTRIES:
        counts = {}
        for label, make, onnx_inference in (
            ("InferShapesPass", InferShapesPass, False),
            ("ShapeInferencePass", ShapeInferencePass, True),
        ):
            model = ir.load(str(entry["path"]))
            start = time.process_time()
            make()(model)
            optimizer.optimize(model, onnx_shape_inference=onnx_inference)
            cpu[label] += time.process_time() - start
            counts[label] = len(model.graph)
            nodes[label] += counts[label]
        ours, theirs = counts["InferShapesPass"], counts["ShapeInferencePass"]
        if ours != theirs:
            (fewer if ours < theirs else more).append(f"{entry['file']} {ours} vs {theirs}")
    for label in nodes:
        print(f"onnxscript's optimizer after {label}: {nodes[label]} nodes in all, {cpu[label]:.1f} s CPU")
    print("  fewer nodes after InferShapesPass:", "; ".join(fewer) or "none")
    print("  more nodes after InferShapesPass:", "; ".join(more) or "none")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("parts", nargs="*", metavar="PART", help=f"any of {', '.join(PARTS)} (default: all)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each model in each mode (onnxslim)")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.parts) - set(PARTS))
    if unknown:
        parser.error(f"unknown part {unknown[0]!r}: choose from {', '.join(PARTS)}")
    logging.disable(logging.WARNING)  # the tools log every fallback and fusion
    runs = {
        "ort": measure_ort,
        "onnxslim": lambda: measure_onnxslim(args.repeat),
        "polygraphy": measure_polygraphy,
        "onnxscript": measure_onnxscript,
    }
    for part in args.parts or PARTS:
        runs[part]()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
