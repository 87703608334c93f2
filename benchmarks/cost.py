"""What ``result.cost`` adds to inference (issue 39): on every corpus model and the growing chain.

    python -m benchmarks.cost                       # the corpus, best of 3, interleaved
    python -m benchmarks.cost --chain 100000        # also the synthetic chain of that many nodes

For each model, taking turns (so drift in a shared machine's speed affects both alike), best of
``--repeat``: ``infer_model`` (a first call: ``infer.walk.reuse.disabled``), and ``cost`` on a fresh
result of that call. Prints each model's ratio cost / inference, the median and the worst.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import onnx

import infer
from infer.walk import reuse

MODELS = Path(__file__).resolve().parents[1] / "tests" / "models"


def measure(model: onnx.ModelProto, repeat: int) -> tuple[float, float]:
    """Best-of-``repeat`` seconds of inference and of ``result.cost`` on its result."""
    best_infer = best_cost = float("inf")
    for _ in range(repeat):
        with reuse.disabled():
            start = time.perf_counter()
            result = infer.infer_model(model)
            mid = time.perf_counter()
            result.cost  # noqa: B018 (computed on first access)
            end = time.perf_counter()
        best_infer, best_cost = min(best_infer, mid - start), min(best_cost, end - mid)
    return best_infer, best_cost


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--chain", type=int, default=0, metavar="N", help="also the growing chain of N nodes")
    p.add_argument("--models", nargs="*", help="model file stems (default: every corpus model)")
    args = p.parse_args()
    infer.infer_model(MODELS / "bert_dynamo.onnx").cost  # noqa: B018 (imports, outside what is measured)
    paths = sorted(MODELS.glob("*.onnx"))
    if args.models:
        paths = [q for q in paths if q.stem in args.models]
    ratios = []
    for path in paths:
        t_infer, t_cost = measure(onnx.load(str(path)), args.repeat)
        ratios.append(t_cost / t_infer)
        print(f"{path.stem:32s} infer {t_infer * 1e3:8.1f} ms  cost {t_cost * 1e3:7.1f} ms  {t_cost / t_infer:6.1%}")
    if ratios:
        print(f"median cost/infer {statistics.median(ratios):.1%}, worst {max(ratios):.1%} over {len(ratios)} models")
    if args.chain:
        from benchmarks.synthetic import growing_chain

        t_infer, t_cost = measure(growing_chain(args.chain), 1)
        print(f"chain of {args.chain} nodes: infer {t_infer:.2f} s, cost {t_cost:.2f} s, {t_cost / t_infer:.1%}")


if __name__ == "__main__":
    main()
