"""Score onnx-infer on the real-model corpus, as tests/test_real_models.py checks it.

For every model in ``manifest.json``: infer with ``infer.infer_model``, run onnxruntime with
every intermediate value exposed at both bindings, and compare with ``tests/support/runtime
.check``. Prints, per model, values / exact / ratio / wrong, then every wrong claim and every
non-exact value with the producing node's op type, the claimed type and the runtime shapes.

Run with the dev venv from the repo root::

    python -m tests.models.score_corpus            # every model
    python -m tests.models.score_corpus bert gpt2  # file names containing any of these
    python -m tests.models.score_corpus --explain  # also the root causes of non-exact values
    python -m tests.models.score_corpus --json out.json
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import onnx

import infer
from tests.support import runtime as R

THRESHOLD = 0.99
_NAME = re.compile(r"`([^`]+)`")


def _producers(model: onnx.ModelProto) -> dict[str, onnx.NodeProto]:
    return {o: n for n in model.graph.node for o in n.output if o}


def _runtime_shapes(name: str, runs: list[tuple[dict[str, int], dict[str, Any]]]) -> str:
    shapes = []
    for _, observed in runs:
        arr = observed.get(name)
        shapes.append(str(list(getattr(arr, "shape", ()))) if arr is not None else "-")
    return " / ".join(shapes)


def _op(node: onnx.NodeProto | None) -> str:
    if node is None:
        return "?"
    return f"{node.domain + '::' if node.domain else ''}{node.op_type}"


def score(entry: dict[str, Any], explain: bool = False, models_dir: Path = R.MODELS) -> dict[str, Any]:
    """Check one manifest entry; return its numbers and its detailed problems."""
    model = onnx.load(str(models_dir / entry["file"]))
    start = time.perf_counter()
    result = infer.infer_model(model)
    infer_s = time.perf_counter() - start
    exposed = R.expose_all(model)
    runs = [(b["dims"], R.run(exposed, R.feeds_for(entry, b["dims"]))) for b in entry["bindings"]]
    c = R.check(result, runs)
    producers = _producers(model)

    not_exact = []
    for line in c.not_exact:
        name, _, claim = line.partition(": ")
        node = producers.get(name)
        item = {
            "value": name,
            "op": _op(node),
            "node": node.name if node is not None else "",
            "claim": claim,
            "runtime": _runtime_shapes(name, runs),
        }
        if explain:
            try:
                item["roots"] = result.explain(name).roots[:4]
            except Exception as exc:
                item["roots"] = [f"explain failed: {exc}"]
        not_exact.append(item)
    wrong = []
    for line in c.wrong:
        m = _NAME.search(line)
        name = m.group(1) if m else ""
        node = producers.get(name)
        wrong.append({"value": name, "op": _op(node), "node": node.name if node else "", "message": line})
    summary = result.summary()
    return {
        "file": entry["file"],
        "values": c.values,
        "exact": c.exact,
        "ratio": c.ratio,
        "wrong_count": len(c.wrong),
        "errors": [str(d) for d in result.errors][:5],
        "untyped_or_unknown_rank": summary.counts.get("untyped", 0) + summary.counts.get("unknown-rank", 0),
        "infer_seconds": round(infer_s, 2),
        "wrong": wrong,
        "not_exact": not_exact,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("filters", nargs="*", help="score only files whose name contains one of these")
    parser.add_argument("--explain", action="store_true", help="add root causes of non-exact values")
    parser.add_argument("--json", help="also write the full report to this file")
    parser.add_argument("--quiet", action="store_true", help="only the table")
    parser.add_argument("--dir", type=Path, default=R.MODELS, help="corpus directory (with manifest.json)")
    args = parser.parse_args(argv)

    manifest = json.loads((args.dir / "manifest.json").read_text())["models"]
    entries = [e for e in manifest if not args.filters or any(f in e["file"] for f in args.filters)]
    reports = []
    for entry in entries:
        try:
            rep = score(entry, args.explain, args.dir)
        except Exception as exc:
            rep = {"file": entry["file"], "crash": f"{type(exc).__name__}: {exc}"}
        reports.append(rep)
        if "crash" in rep:
            print(f"{rep['file']}: CRASH {rep['crash']}", file=sys.stderr, flush=True)
        else:
            print(
                f"{rep['file']}: {rep['exact']}/{rep['values']} exact, {rep['wrong_count']} wrong",
                file=sys.stderr,
                flush=True,
            )

    print(f"{'file':44} {'values':>6} {'exact':>6} {'ratio':>7} {'wrong':>5}  note")
    total_v = total_e = total_w = 0
    below = []
    for rep in reports:
        if "crash" in rep:
            print(f"{rep['file']:44} CRASH {rep['crash']}")
            below.append(rep["file"])
            continue
        total_v += rep["values"]
        total_e += rep["exact"]
        total_w += rep["wrong_count"]
        bad = rep["ratio"] < THRESHOLD or rep["wrong_count"] or rep["errors"] or rep["untyped_or_unknown_rank"]
        if bad:
            below.append(rep["file"])
        note = "FAIL" if bad else ""
        if rep["errors"]:
            note += f" errors={len(rep['errors'])}"
        if rep["untyped_or_unknown_rank"]:
            note += f" untyped/unknown-rank={rep['untyped_or_unknown_rank']}"
        print(
            f"{rep['file']:44} {rep['values']:6d} {rep['exact']:6d} {rep['ratio']:7.2%} {rep['wrong_count']:5d}  {note}"
        )
    ratio = total_e / total_v if total_v else 1.0
    print(f"{'TOTAL':44} {total_v:6d} {total_e:6d} {ratio:7.2%} {total_w:5d}")
    print(f"\nbelow the bar (< {THRESHOLD:.0%} exact, wrong, errors or crash): {len(below)}")
    for name in below:
        print(f"  {name}")

    if not args.quiet:
        ops: Counter[str] = Counter()
        for rep in reports:
            for item in rep.get("not_exact", []):
                ops[f"not-exact {item['op']}"] += 1
            for item in rep.get("wrong", []):
                ops[f"wrong {item['op']}"] += 1
        print("\nby producing op:")
        for key, n in ops.most_common():
            print(f"  {n:5d}  {key}")
        for rep in reports:
            if not rep.get("wrong") and not rep.get("not_exact") and not rep.get("errors"):
                continue
            print(f"\n== {rep['file']}")
            for err in rep.get("errors", []):
                print(f"  ERROR {err}")
            for item in rep.get("wrong", []):
                print(f"  WRONG [{item['op']}] {item['message']}")
            for item in rep.get("not_exact", []):
                roots = ""
                if item.get("roots"):
                    roots = "  <- " + " | ".join(item["roots"])
                print(f"  not exact [{item['op']}] {item['value']}: {item['claim']}  runtime {item['runtime']}{roots}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(reports, fh, indent=1)
    return 1 if below else 0


if __name__ == "__main__":
    raise SystemExit(main())
