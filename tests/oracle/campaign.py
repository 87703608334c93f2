"""The oracle's campaign: many programs, every claim checked, every contradiction shrunk and saved.

    python -m tests.oracle --programs 2000 --seed 0 --jobs 2 --out /tmp/oracle

Programs are generated from consecutive seeds, so any one can be rebuilt with
``generate(seed, max_nodes, OrtRunner())``. Workers (``--jobs``) each keep one onnxruntime child process. A program with
a contradiction is shrunk (``tests.oracle.shrink``) to a minimal model, saved under
``OUT/findings`` as ``.onnx`` with a ``.txt`` paragraph saying what was claimed and what ran;
``OUT/summary.json`` holds the numbers. Exit status 1 when there is a contradiction.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import tempfile
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx

_RUNNER: Any = None


def _runner() -> Any:
    global _RUNNER
    if _RUNNER is None:
        from .ortrun import OrtRunner

        _RUNNER = OrtRunner()
    return _RUNNER


def run_program(seed: int, max_nodes: int) -> dict[str, Any]:
    """Generate, run and check the program of ``seed``; a JSON-ready summary."""
    from .check import check
    from .generate import generate

    t0 = time.perf_counter()
    try:
        program = generate(seed, max_nodes, _runner())
    except Exception:
        return {"seed": seed, "built": False, "generator_error": traceback.format_exc()[-1500:]}
    gen_seconds = time.perf_counter() - t0
    v = check(program, _runner())
    return {
        "seed": seed,
        "built": True,
        "nodes": len(program.model.graph.node),
        "bindings": len(program.bindings),
        "ops": sorted(program.ops),
        "ran": v.ran,
        "error": v.error,
        "crashed": v.crashed,
        "runs": v.runs,
        "claims": v.claims,
        "unchecked": v.unchecked,
        "skipped": v.skipped,
        "findings": [
            {
                "value": f.value,
                "op_type": f.op_type,
                "kind": f.kind,
                "message": f.message,
                "reference_agrees": f.reference_agrees,
            }
            for f in v.findings
        ],
        "inference_errors": v.inference_errors,
        "declared": [v.declared, v.declared_false, v.declared_clashes],
        "inference_crash": v.inference_crash,
        "reference_mismatches": v.reference_mismatches,
        "seconds": {
            "generate": gen_seconds,
            "infer": v.infer_seconds,
            "ort": v.ort_seconds,
            "total": time.perf_counter() - t0,
        },
    }


def shrink_program(seed: int, max_nodes: int, budget: float) -> dict[str, Any]:
    """Rebuild the program of ``seed``, shrink its first contradiction; the model and its story."""
    from .check import check
    from .generate import generate
    from .shrink import shrink

    program = generate(seed, max_nodes, _runner())
    v = check(program, _runner())
    if not v.findings:
        return {"seed": seed, "shrunk": False}
    order = {o: i for i, n in enumerate(program.model.graph.node) for o in n.output}
    first = min(v.findings, key=lambda f: order.get(f.value, 1 << 30))
    try:
        s = shrink(program.model, program.bindings, program.feeds, first, _runner(), budget)
    except Exception:  # a bug of the shrinker must not lose the finding: keep the program whole
        from .shrink import Shrunk, State

        n = len(program.model.graph.node)
        s = Shrunk(State(program.model, program.bindings, program.feeds, first), n, n, 0, 0.0)
        first.message += " [not shrunk: " + traceback.format_exc().splitlines()[-1] + "]"
    return {
        "seed": seed,
        "shrunk": True,
        "signature": list(first.signature),
        "model": s.state.model.SerializeToString(),
        "description": describe(s, seed, first),
        "nodes_before": s.nodes_before,
        "nodes_after": s.nodes_after,
        "attempts": s.attempts,
        "seconds": s.seconds,
    }


def describe(s: Any, seed: int, original: Any) -> str:
    """One paragraph: what inference claimed, what onnxruntime computed, at which binding."""
    f = s.state.finding
    ref = _reference_value(s.state, f)
    ops = ", ".join(n.op_type for n in s.state.model.graph.node)
    inputs = "; ".join(
        f"{i.name}: {onnx.helper.tensor_dtype_to_string(i.type.tensor_type.elem_type).replace('TensorProto.', '')}"
        f"[{', '.join(d.dim_param or str(d.dim_value) for d in i.type.tensor_type.shape.dim)}]"
        for i in s.state.model.graph.input
    )
    what = {
        "dim": f"extent {f.index}",
        "contents": f"element {f.index}",
        "fresh-variable": f"extent {f.index}",
        "element-type": "element type",
        "rank": "rank",
    }.get(f.kind, f.kind)
    text = (
        f"onnx-infer claims the {what} of `{f.value}` (the output of {f.op_type}) is {f.claimed}; at "
        f"{_fmt(f.bindings)} onnxruntime computed {f.actual} ({f.message}). "
        f"onnx.reference computes {ref} there. "
        f"Minimized from oracle program seed {seed} ({s.nodes_before} nodes, first contradiction on "
        f"`{original.value}` from {original.op_type}) to {s.nodes_after} nodes in {s.attempts} attempts. "
        f"Inputs: {inputs or 'none'}. Nodes: {ops}."
    )
    return text


def _reference_value(state: Any, f: Any) -> str:
    from onnx.reference import ReferenceEvaluator

    try:
        out = ReferenceEvaluator(state.model).run([f.value], state.feeds[f.run])[0]
    except Exception as e:
        return f"nothing (it fails: {str(e).splitlines()[0][:120]})"
    arr = np.asarray(out)
    if f.kind in ("dim", "fresh-variable", "rank"):
        return f"shape {list(arr.shape)}"
    if f.kind == "contents" and f.index is not None and f.index < arr.size:
        return f"element {f.index} = {arr.reshape(-1)[f.index].item()}"
    return f"{arr.dtype} {list(arr.shape)}"


def _fmt(b: dict[str, int]) -> str:
    return "{" + ", ".join(f"{k}={v}" for k, v in b.items()) + "}"


def _init_worker() -> None:
    import warnings

    warnings.filterwarnings("ignore")


def _call(args: tuple[str, tuple[Any, ...]]) -> dict[str, Any]:
    what, rest = args
    return run_program(*rest) if what == "program" else shrink_program(*rest)


@dataclass
class Totals:
    built: int = 0
    ran: int = 0
    not_built: int = 0
    refused: Counter[str] = field(default_factory=Counter)  # onnxruntime's reasons, first line
    crashed: int = 0
    runs: int = 0
    bindings: Counter[int] = field(default_factory=Counter)
    claims: int = 0
    unchecked: int = 0
    skipped: int = 0
    contradictions: int = 0
    programs_with_contradictions: list[int] = field(default_factory=list)
    signatures: Counter[str] = field(default_factory=Counter)
    inference_errors: list[tuple[int, str]] = field(default_factory=list)
    inference_crashes: list[tuple[int, str]] = field(default_factory=list)
    reference_mismatch_programs: int = 0
    declared: Counter[str] = field(default_factory=Counter)  # names on output axes (issue 26)
    generator_errors: list[tuple[int, str]] = field(default_factory=list)
    nodes: int = 0
    ops: Counter[str] = field(default_factory=Counter)
    seconds: Counter[str] = field(default_factory=Counter)

    def add(self, r: dict[str, Any]) -> None:
        if not r["built"]:
            self.not_built += 1
            self.generator_errors.append((r["seed"], r["generator_error"]))
            return
        self.built += 1
        self.nodes += r["nodes"]
        self.ops.update(r["ops"])
        self.seconds.update(r["seconds"])
        if not r["ran"]:
            if r["crashed"]:
                self.crashed += 1
            self.refused[(r["error"] or "?").splitlines()[0][:160]] += 1
            return
        self.ran += 1
        self.runs += r["runs"]
        self.bindings[r["bindings"]] += 1
        self.claims += r["claims"]
        self.unchecked += r["unchecked"]
        self.skipped += len(r["skipped"])
        self.contradictions += len(r["findings"])
        if r["findings"]:
            self.programs_with_contradictions.append(r["seed"])
            self.signatures.update({f"{f['op_type']}/{f['kind']}" for f in r["findings"]})
        if r["inference_errors"]:
            self.inference_errors.append((r["seed"], r["inference_errors"][0]))
        if r["inference_crash"]:
            self.inference_crashes.append((r["seed"], r["inference_crash"]))
        self.reference_mismatch_programs += bool(r["reference_mismatches"])
        names, false, clashes = r.get("declared", (0, 0, 0))
        self.declared.update(programs=bool(names), names=names, false=false, clashes=clashes)

    def lines(self, seconds: float) -> list[str]:
        b = ", ".join(f"{k}" for k in sorted(self.bindings)) or "-"
        return [
            f"programs built:        {self.built} ({self.not_built} generator errors), {self.nodes} nodes",
            f"programs run:          {self.ran} ({self.built - self.ran} refused by onnxruntime, "
            f"{self.crashed} crashed it)",
            f"bindings per program:  {b}",
            f"runs:                  {self.runs}",
            f"claims checked:        {self.claims} ({self.unchecked} unchecked: unbound variables)",
            f"contradictions:        {self.contradictions} in {len(self.programs_with_contradictions)} programs",
            f"skipped runs:          {self.skipped} (outside the result's assumptions)",
            f"inference errors:      {len(self.inference_errors)} programs with error diagnostics, "
            f"{len(self.inference_crashes)} crashes",
            f"reference mismatches:  {self.reference_mismatch_programs} programs where onnxruntime and "
            f"onnx.reference differ",
            f"declared names:        {self.declared['names']} on output axes of {self.declared['programs']} "
            f"programs, {self.declared['false']} contradicted at some binding, {self.declared['clashes']} "
            "reported as contradictions",
            f"time:                  {seconds:.1f} s, {self.built / seconds if seconds else 0:.2f} programs/s "
            f"(generate {self.seconds['generate']:.0f} s, infer {self.seconds['infer']:.0f} s, "
            f"onnxruntime {self.seconds['ort']:.0f} s, summed over workers)",
        ]


def campaign(
    programs: int,
    seed: int = 0,
    jobs: int = 1,
    out: Path | None = None,
    max_nodes: int = 30,
    shrink_budget: float = 90.0,
    shrink_limit: int = 3,
    quiet: bool = False,
) -> Totals:
    """Run ``programs`` programs from ``seed`` on; shrink and save the contradictions under ``out``."""
    from .generate import MAX_NODES

    max_nodes = max_nodes or MAX_NODES
    start = time.perf_counter()
    totals = Totals()
    results: list[dict[str, Any]] = []
    tasks = [("program", (s, max_nodes)) for s in range(seed, seed + programs)]
    pool = multiprocessing.get_context("spawn").Pool(jobs, _init_worker) if jobs > 1 else None
    try:
        it = pool.imap_unordered(_call, tasks, chunksize=4) if pool else map(_call, tasks)
        for done, r in enumerate(it, 1):
            totals.add(r)
            results.append(r)
            if not quiet and done % 100 == 0:
                print(f"  {done}/{programs} programs, {totals.contradictions} contradictions", file=sys.stderr)
        elapsed = time.perf_counter() - start
        shrunk: list[dict[str, Any]] = []
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
            _write_summary(out, programs, seed, jobs, elapsed, totals, results, shrunk)
            findings = out / "findings"
            findings.mkdir(parents=True, exist_ok=True)
            per_signature: Counter[str] = Counter()
            picks = []
            for r in sorted(results, key=lambda r: r["seed"]):
                if r.get("findings"):
                    sig = f"{r['findings'][0]['op_type']}/{r['findings'][0]['kind']}"
                    per_signature[sig] += 1
                    if per_signature[sig] <= shrink_limit:
                        picks.append(("shrink", (r["seed"], max_nodes, shrink_budget)))
            it2 = pool.imap_unordered(_call, picks) if pool else map(_call, picks)
            for s in it2:
                if not s.get("shrunk"):
                    continue
                stem = f"seed{s['seed']}_{s['signature'][0]}_{s['signature'][1]}"
                (findings / f"{stem}.onnx").write_bytes(s.pop("model"))
                (findings / f"{stem}.txt").write_text(s["description"] + "\n")
                shrunk.append(s)
                if not quiet:
                    print(
                        f"  shrunk seed {s['seed']}: {s['nodes_before']} -> {s['nodes_after']} nodes", file=sys.stderr
                    )
            _write_summary(out, programs, seed, jobs, elapsed, totals, results, shrunk)
    finally:
        if pool:
            pool.close()
            pool.join()
    if not quiet:
        for line in totals.lines(elapsed):
            print(line)
        for sig, n in totals.signatures.most_common():
            print(f"  contradicted: {sig} in {n} programs")
        for reason, n in totals.refused.most_common(8):
            print(f"  refused ({n}): {reason}")
        for s_, text in totals.generator_errors[:3]:
            print(f"  generator error at seed {s_}: {text.splitlines()[-1]}")
        for s_, text in totals.inference_crashes[:3]:
            print(f"  inference crash at seed {s_}: {text.splitlines()[-1]}")
        for s_, text in totals.inference_errors[:3]:
            print(f"  inference error at seed {s_}: {text[:200]}")
    return totals


def _write_summary(
    out: Path,
    programs: int,
    seed: int,
    jobs: int,
    elapsed: float,
    totals: Totals,
    results: list[dict[str, Any]],
    shrunk: list[dict[str, Any]],
) -> None:
    summary = {
        "programs": programs,
        "seed": seed,
        "jobs": jobs,
        "seconds": elapsed,
        "lines": totals.lines(elapsed),
        "results": results,
        "shrunk": shrunk,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=1, default=str))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.oracle", description=__doc__.split("\n\n")[0])
    p.add_argument("--programs", type=int, default=200, help="how many programs (default 200)")
    p.add_argument("--seed", type=int, default=0, help="the first program's seed (default 0)")
    p.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    p.add_argument(
        "--out",
        type=Path,
        default=Path(tempfile.gettempdir()) / "onnx-infer-oracle",
        help="where findings/ and summary.json go (default: $TMPDIR/onnx-infer-oracle)",
    )
    p.add_argument("--max-nodes", type=int, default=30, help="a program stops growing at this many nodes")
    p.add_argument("--shrink-budget", type=float, default=90.0, help="seconds to shrink one finding")
    p.add_argument("--shrink-limit", type=int, default=3, help="findings shrunk per operator and kind")
    a = p.parse_args(argv)
    if a.programs < 1 or a.jobs < 1:
        p.error("--programs and --jobs must be positive")
    totals = campaign(a.programs, a.seed, a.jobs, a.out, a.max_nodes, a.shrink_budget, a.shrink_limit)
    return 1 if totals.contradictions or totals.inference_crashes else 0
