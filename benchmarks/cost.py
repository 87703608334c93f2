"""What ``result.cost`` adds to inference (issue 39): on every corpus model and the growing chain.

    python -m benchmarks.cost                       # the corpus, best of 3, interleaved
    python -m benchmarks.cost --chain 100000        # also the synthetic chain of that many nodes (best of 3 too)

For each model, taking turns (so drift in a shared machine's speed affects both alike), best of
``--repeat``: ``infer_model`` (a first call: ``infer.walk.reuse.disabled``), and ``cost`` on a fresh
result of that call. Prints each model's ratio cost / inference, the median and the worst. Times
are the process's CPU time (``time.process_time``): on a machine other jobs share, the wall clock
also counts the time this process waits for a core, which is theirs, not the work measured.
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


def measure(model: onnx.ModelProto, repeat: int) -> tuple[float, float, float]:
    """Best-of-``repeat`` seconds of inference, of the peak at a binding (``result.cost.at``: the
    values' spans), and of the whole statement (``cost.to_json()``: the peak's simplified term,
    totals, every node's work)."""
    best = [float("inf")] * 3
    for _ in range(repeat):
        with reuse.disabled():
            t0 = time.process_time()
            result = infer.infer_model(model)
            t1 = time.process_time()
            cost = result.cost
            cost.at(dict.fromkeys(cost.variables, 8))
            t2 = time.process_time()
            cost.to_json()
            t3 = time.process_time()
        best = [min(b, t) for b, t in zip(best, (t1 - t0, t2 - t1, t3 - t1))]
    return best[0], best[1], best[2]


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
    at, full = [], []
    for path in paths:
        t_infer, t_at, t_full = measure(onnx.load(str(path)), args.repeat)
        at.append(t_at / t_infer)
        full.append(t_full / t_infer)
        print(
            f"{path.stem:32s} infer {t_infer * 1e3:8.1f} ms  peak at a binding {t_at * 1e3:7.1f} ms "
            f"({at[-1]:6.1%})  whole statement {t_full * 1e3:7.1f} ms ({full[-1]:6.1%})"
        )
    if at:
        print(
            f"median over {len(at)} models: peak at a binding {statistics.median(at):.1%} of inference "
            f"(worst {max(at):.1%}), whole statement {statistics.median(full):.1%} (worst {max(full):.1%})"
        )
    if args.chain:
        from benchmarks.synthetic import growing_chain

        t_infer, t_at, t_full = measure(growing_chain(args.chain), args.repeat)
        print(
            f"chain of {args.chain} nodes: infer {t_infer:.2f} s, peak at a binding {t_at:.2f} s "
            f"({t_at / t_infer:.1%}), whole statement {t_full:.2f} s ({t_full / t_infer:.1%})"
        )


if __name__ == "__main__":
    main()
