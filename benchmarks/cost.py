"""What ``result.cost`` adds to inference (issue 39): on every corpus model and the growing chain.

    python -m benchmarks.cost                       # the corpus, best of 3, interleaved
    python -m benchmarks.cost --chain 100000        # also the synthetic chain of that many nodes (best of 3 too)
    python -m benchmarks.cost --parts               # each part of the statement's share, corpus median

For each model, taking turns (so drift in a shared machine's speed affects both alike), best of
``--repeat``: ``infer_model`` (a first call: ``infer.walk.reuse.disabled``), and on a fresh result
of that call three stages, each including the one before: the peak at a binding (``cost.at``),
every quantity computed (each value's bytes, each node's work, the totals and the peak's term, as
objects, as ``infer_model`` returns its types), and the whole statement written out
(``cost.to_json()``: each term as text). Prints each model's ratios to inference, the median and
the worst. Times are the process's CPU time (``time.process_time``): on a machine other jobs
share, the wall clock also counts the time this process waits for a core, which is theirs.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import onnx

import infer
from infer.out.cost import Cost
from infer.walk import reuse

MODELS = Path(__file__).resolve().parents[1] / "tests" / "models"


STAGES = ("peak at a binding", "every quantity", "whole statement")

# ``--parts``: each part of the statement timed apart, in this order (each computed once, so a
# part's time excludes what an earlier one computed and it reuses).
PARTS: tuple[tuple[str, Callable[[Cost], object]], ...] = (
    ("values' bytes", lambda c: c.values),
    ("spans", lambda c: c.spans),
    ("nodes' work", lambda c: c.nodes),
    ("peak term", lambda c: c.peak),
    ("at a binding", lambda c: c.at(dict.fromkeys(c.variables, 8))),
    ("totals", lambda c: (c.weights, c.inputs, c.activations, c.flops)),
    ("worst case", lambda c: c.worst()),
    ("JSON", lambda c: c.to_json()),
)


def measure(model: onnx.ModelProto, repeat: int) -> tuple[float, list[float]]:
    """Best-of-``repeat`` seconds of inference and of each of ``STAGES`` after it."""
    best_infer, best = float("inf"), [float("inf")] * len(STAGES)
    for _ in range(repeat):
        with reuse.disabled():
            t0 = time.process_time()
            result = infer.infer_model(model)
            t1 = time.process_time()
            cost = result.cost
            cost.at(dict.fromkeys(cost.variables, 8))
            t2 = time.process_time()
            computed = (cost.values, cost.nodes, cost.peak, cost.weights, cost.inputs, cost.activations, cost.flops)
            computed += (cost.worst(),)
            t3 = time.process_time()
            cost.to_json()
            t4 = time.process_time()
        best_infer = min(best_infer, t1 - t0)
        best = [min(b, t) for b, t in zip(best, (t2 - t1, t3 - t1, t4 - t1))]
    return best_infer, best


def shares_of_parts(model: onnx.ModelProto, repeat: int) -> list[float]:
    """Each of ``PARTS``' seconds as a share of inference, from the run whose inference was fastest."""
    best: tuple[float, list[float]] = (float("inf"), [])
    for _ in range(repeat):
        with reuse.disabled():
            t0 = time.process_time()
            result = infer.infer_model(model)
            t_infer = time.process_time() - t0
            cost, times = result.cost, []
            for _, part in PARTS:
                t0 = time.process_time()
                part(cost)
                times.append(time.process_time() - t0)
        if t_infer < best[0]:
            best = (t_infer, times)
    return [t / best[0] for t in best[1]]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--chain", type=int, default=0, metavar="N", help="also the growing chain of N nodes")
    p.add_argument("--models", nargs="*", help="model file stems (default: every corpus model)")
    p.add_argument("--parts", action="store_true", help="instead: each part's median share of inference")
    args = p.parse_args()
    infer.infer_model(MODELS / "bert_dynamo.onnx").cost  # noqa: B018 (imports, outside what is measured)
    paths = sorted(MODELS.glob("*.onnx"))
    if args.models:
        paths = [q for q in paths if q.stem in args.models]
    if args.parts:
        shares = [shares_of_parts(onnx.load(str(path)), args.repeat) for path in paths]
        for k, (name, _) in enumerate(PARTS):
            print(f"{name:14s} median {statistics.median(s[k] for s in shares):6.1%} of inference")
        print(f"{'in all':14s} median {statistics.median(sum(s) for s in shares):6.1%} of inference")
        return
    ratios: list[list[float]] = [[] for _ in STAGES]
    for path in paths:
        t_infer, times = measure(onnx.load(str(path)), args.repeat)
        parts = []
        for k, t in enumerate(times):
            ratios[k].append(t / t_infer)
            parts.append(f"{STAGES[k]} {t * 1e3:7.1f} ms ({ratios[k][-1]:6.1%})")
        print(f"{path.stem:32s} infer {t_infer * 1e3:8.1f} ms  " + "  ".join(parts))
    if paths:
        summary = ", ".join(
            f"{name} {statistics.median(r):.1%} (worst {max(r):.1%})" for name, r in zip(STAGES, ratios)
        )
        print(f"median over {len(paths)} models, of inference: {summary}")
    if args.chain:
        from benchmarks.synthetic import growing_chain

        t_infer, times = measure(growing_chain(args.chain), args.repeat)
        summary = ", ".join(f"{name} {t:.2f} s ({t / t_infer:.1%})" for name, t in zip(STAGES, times))
        print(f"chain of {args.chain} nodes: infer {t_infer:.2f} s, {summary}")


if __name__ == "__main__":
    main()
