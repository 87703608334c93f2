"""The fuzz campaign: mutated models through the command line, random valid models against
onnxruntime.

    python -m tests.fuzz.campaign --mutated 10000 --random 1000          # the long mode
    python -m tests.fuzz.campaign --mutated 500 --separate 10 --random 30  # about what CI runs

Mutated models (``tests.fuzz.mutate``, drawn by hypothesis from the seeds of
``tests.fuzz.seeds``) run in fresh driver processes (``tests.fuzz.driver``), several models per
process, with a per-model timeout: a model that takes longer is a hang, and the driver is
replaced. ``--separate`` more run each as their own ``onnx-infer check`` process. Random valid
models (``tests.fuzz.randmodels``) are inferred and every claim is checked against onnxruntime.

Prints the numbers, and writes every finding (the model and what happened) under ``--findings``.
Exit status 1 when there is a crash, a hang or a contradicted claim.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Outcome:
    id: int
    description: str
    status: str = "ok"  # ok | crash | hang | memory
    seconds: float = 0.0
    exits: list[Any] = field(default_factory=list)
    detail: str | None = None
    rule_crashes: list[dict[str, Any]] = field(default_factory=list)
    rule_traceback: str | None = None
    codes: dict[str, int] = field(default_factory=dict)


def _value_name(data: bytes) -> str:
    """A value of the model to ``explain`` (any name will do when the model does not parse)."""
    import onnx

    try:
        m = onnx.ModelProto.FromString(data)
        for n in m.graph.node:
            for o in n.output:
                # (A name that is not UTF-8 comes out as bytes: the job file is JSON, and the
                # command line takes text, so such a name is passed with its bytes escaped.)
                if o:
                    return o if type(o) is str else o.decode("utf-8", "backslashreplace")
    except Exception:
        pass
    return "y"


def _driver(jobs_file: Path, start: int) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("ONNX_INFER_DEBUG", None)
    return subprocess.Popen(
        [sys.executable, "-m", "tests.fuzz.driver", str(jobs_file), str(start)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=ROOT,
        env=env,
        start_new_session=True,
    )


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, 9)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.wait()


def _run_chunk(
    jobs: list[dict[str, Any]],
    jobs_file: Path,
    timeout: float,
    results: dict[int, Outcome],
    descriptions: dict[int, str],
) -> None:
    """Run ``jobs`` through drivers, replacing a driver after a hang or a death."""
    with open(jobs_file, "w") as f:
        for job in jobs:
            f.write(json.dumps(job) + "\n")
    position = {job["id"]: k for k, job in enumerate(jobs)}
    index = 0
    while index < len(jobs):
        proc = _driver(jobs_file, index)
        assert proc.stdout is not None
        lines: list[str] = []
        ready = threading.Event()

        def reader(stream: Any = proc.stdout, lines: list[str] = lines, ready: threading.Event = ready) -> None:
            for line in stream:
                lines.append(line)
                ready.set()
            ready.set()

        thread = threading.Thread(target=reader, daemon=True)
        thread.start()
        current: int | None = None
        deadline = time.monotonic() + timeout + 60  # the first job waits for the start-up too
        consumed = 0
        while True:
            got = ready.wait(timeout=max(0.0, deadline - time.monotonic()))
            ready.clear()
            if not thread.is_alive():  # end of its output: the driver is exiting
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    pass
            if proc.poll() is not None:
                thread.join(timeout=5)
            while consumed < len(lines):
                msg = json.loads(lines[consumed])
                consumed += 1
                if "start" in msg:
                    current, deadline = msg["start"], time.monotonic() + timeout
                    continue
                results[msg["id"]] = _outcome(msg, descriptions[msg["id"]])
                index, current = position[msg["id"]] + 1, None
            if not got and time.monotonic() >= deadline:  # a hang (or a driver stalled between jobs)
                if current is None and index >= len(jobs):
                    break
                stuck = current if current is not None else jobs[index]["id"]
                o = results.setdefault(stuck, Outcome(stuck, descriptions[stuck]))
                o.status, o.seconds, o.detail = "hang", timeout, f"no answer in {timeout} s"
                index = position[stuck] + 1
                break
            if proc.poll() is not None and not thread.is_alive() and consumed == len(lines):
                if current is not None:  # the driver died inside a job
                    o = results.setdefault(current, Outcome(current, descriptions[current]))
                    o.status, o.detail = "crash", f"the driver process died (status {proc.returncode})"
                    index = position[current] + 1
                break
        if proc.poll() is None:
            _kill(proc)


def _outcome(msg: dict[str, Any], description: str) -> Outcome:
    o = Outcome(msg["id"], description)
    o.seconds = max(v["seconds"] for v in msg["verbs"])
    o.exits = [v["exit"] for v in msg["verbs"]]
    crashes = [v["crash"] for v in msg["verbs"] if v["crash"]]
    if crashes:
        o.status, o.detail = "crash", msg.get("traceback") or crashes[0]
    elif any(v["memory"] for v in msg["verbs"]):
        o.status, o.detail = "memory", "out of memory"
    o.rule_crashes = msg["rule_crashes"]
    o.rule_traceback = msg.get("rule_traceback")
    o.codes = msg["codes"]
    return o


def run_mutated(
    cases: list[tuple[str, bytes]], workdir: Path, timeout: float = 10.0, processes: int = 2
) -> list[Outcome]:
    """Every case through the command line in fresh driver processes (``processes`` at once)."""
    workdir.mkdir(parents=True, exist_ok=True)
    jobs, descriptions = [], {}
    for i, (desc, data) in enumerate(cases):
        path = workdir / f"case{i}.onnx"
        path.write_bytes(data)
        jobs.append({"id": i, "path": str(path), "value": _value_name(data)})
        descriptions[i] = desc
    results: dict[int, Outcome] = {}
    chunks = [jobs[k::processes] for k in range(processes)]
    threads = [
        threading.Thread(target=_run_chunk, args=(chunk, workdir / f"jobs{k}.jsonl", timeout, results, descriptions))
        for k, chunk in enumerate(chunks)
        if chunk
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return [results.get(i, Outcome(i, descriptions[i], "crash", detail="never ran")) for i in range(len(cases))]


def onnx_infer_command() -> list[str]:
    exe = shutil.which("onnx-infer", path=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    return [exe] if exe else [sys.executable, "-m", "infer.cli"]


def run_separate(cases: list[tuple[str, bytes]], workdir: Path, timeout: float = 10.0) -> list[Outcome]:
    """Each case as its own ``onnx-infer check`` process (start-up included in the timeout)."""
    workdir.mkdir(parents=True, exist_ok=True)
    out = []
    for i, (desc, data) in enumerate(cases):
        path = workdir / f"separate{i}.onnx"
        path.write_bytes(data)
        o = Outcome(i, desc)
        start = time.monotonic()
        try:
            p = subprocess.run(
                [*onnx_infer_command(), "check", str(path), "--json"],
                capture_output=True,
                text=True,
                timeout=timeout + 20,
                cwd=workdir,
            )
            o.exits = [p.returncode]
            if p.returncode not in (0, 1, 2) or "Traceback" in p.stderr or "internal error" in p.stderr:
                o.status, o.detail = "crash", p.stderr[-3000:]
        except subprocess.TimeoutExpired:
            o.status, o.detail = "hang", f"no answer in {timeout + 20} s"
        o.seconds = time.monotonic() - start
        out.append(o)
    return out


@dataclass
class Summary:
    total: int = 0
    statuses: Counter = field(default_factory=Counter)
    exits: Counter = field(default_factory=Counter)
    max_seconds: float = 0.0
    mean_seconds: float = 0.0
    over_2s: int = 0
    rule_crashes: dict[str, dict[str, Any]] = field(default_factory=dict)  # signature -> example
    limits: int = 0

    def lines(self) -> list[str]:
        return [
            f"models: {self.total}; outcomes: {dict(self.statuses)}; exit statuses: {dict(self.exits)}",
            f"slowest model: {self.max_seconds:.2f} s (one command); mean {self.mean_seconds:.3f} s; "
            f"{self.over_2s} over 2 s",
            f"models with a `limit` diagnostic: {self.limits}; distinct rule crashes: {len(self.rule_crashes)}",
        ]


def summarize(outcomes: list[Outcome]) -> Summary:
    s = Summary(total=len(outcomes))
    for o in outcomes:
        s.statuses[o.status] += 1
        for e in o.exits:
            s.exits[e] += 1
        s.max_seconds = max(s.max_seconds, o.seconds)
        s.over_2s += o.seconds > 2
        s.limits += "limit" in o.codes
        for rc in o.rule_crashes:
            sig = f"{rc['op']}: {rc['message'].split(':', 1)[-1].strip()[:120]}"
            if sig not in s.rule_crashes:
                s.rule_crashes[sig] = {"case": o.id, "description": o.description, "traceback": o.rule_traceback}
    s.mean_seconds = sum(o.seconds for o in outcomes) / max(1, len(outcomes))
    return s


def write_findings(directory: Path, cases: list[tuple[str, bytes]], outcomes: list[Outcome], kind: str) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for o in outcomes:
        if o.status == "ok":
            continue
        stem = directory / f"{kind}-{o.status}-{o.id}"
        stem.with_suffix(".onnx").write_bytes(cases[o.id][1])
        stem.with_suffix(".txt").write_text(f"{o.description}\n\n{o.detail}\n")


def run_soundness(count: int, first_seed: int = 0, timeout: float = 300.0) -> dict[str, Any]:
    """``count`` random valid models checked against onnxruntime, in worker processes.

    A worker runs onnxruntime in process, and onnxruntime can abort on a valid model (an assertion
    of its own): the seed is then recorded as not run and a new worker goes on after it. A seed
    taking longer than ``timeout`` seconds is recorded the same way.
    """
    ran = values = exact = 0
    wrong: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    runtime_failures: list[int] = []
    seed, end = first_seed, first_seed + count
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    while seed < end:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.fuzz.randmodels", str(seed), str(end - seed)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            cwd=ROOT,
            env=env,
        )
        assert proc.stdout is not None
        current = None
        watchdog: threading.Timer | None = None
        try:
            for line in proc.stdout:
                msg = json.loads(line)
                if watchdog is not None:
                    watchdog.cancel()
                if "start" in msg:
                    current = msg["start"]
                    watchdog = threading.Timer(timeout, _kill, [proc])  # a hang ends the worker
                    watchdog.start()
                    continue
                current, seed = None, msg["seed"] + 1
                if not msg["ran"]:
                    continue
                ran += 1
                values += msg["values"]
                exact += msg["exact"]
                if msg["wrong"]:
                    wrong.append({"seed": msg["seed"], "wrong": msg["wrong"][:5], "ops": msg["ops"]})
                if msg["errors"]:
                    errors.append({"seed": msg["seed"], "errors": msg["errors"][:3]})
        finally:
            if watchdog is not None:
                watchdog.cancel()
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                _kill(proc)
        if current is not None:  # the worker died on this seed (onnxruntime aborted) or hung
            runtime_failures.append(current)
            seed = current + 1
    return {
        "built": count,
        "ran": ran,
        "values": values,
        "exact": exact,
        "wrong": wrong,
        "errors": errors,
        "aborted": runtime_failures,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.fuzz.campaign", description=__doc__.split("\n\n")[0])
    p.add_argument("--mutated", type=int, default=500, help="mutated models through the command line")
    p.add_argument("--separate", type=int, default=10, help="of those, also run as separate onnx-infer processes")
    p.add_argument("--random", type=int, default=30, help="random valid models checked against onnxruntime")
    p.add_argument("--seed", type=int, default=0, help="hypothesis seed of the mutations, first random seed")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds per model before it counts as a hang")
    p.add_argument("--processes", type=int, default=2, help="driver processes at once")
    p.add_argument("--bert", action="store_true", help="mutate examples/bert_tiny.onnx too")
    p.add_argument("--findings", type=Path, default=Path(tempfile.gettempdir()) / "onnx-infer-fuzz")
    args = p.parse_args(argv)

    from .mutate import generate
    from .seeds import pool

    failed = False
    start = time.monotonic()
    if args.mutated:
        cases = generate(pool(random_models=8, bert=args.bert), args.mutated, args.seed)
        print(f"generated {len(cases)} mutated models in {time.monotonic() - start:.0f} s", flush=True)
        with tempfile.TemporaryDirectory(prefix="onnx-infer-fuzz-") as tmp:
            t0 = time.monotonic()
            outcomes = run_mutated(cases, Path(tmp), args.timeout, args.processes)
            print(f"in-process drivers: {time.monotonic() - t0:.0f} s")
            s = summarize(outcomes)
            print("\n".join(s.lines()))
            write_findings(args.findings, cases, outcomes, "mutated")
            (args.findings / "rule-crashes.json").write_text(json.dumps(s.rule_crashes, indent=2))
            failed |= bool(s.statuses.keys() - {"ok"})
            if args.separate:
                t0 = time.monotonic()
                separate = run_separate(cases[: args.separate], Path(tmp) / "separate", args.timeout)
                ss = summarize(separate)
                print(
                    f"separate processes ({time.monotonic() - t0:.0f} s): {dict(ss.statuses)}; "
                    f"exit statuses {dict(ss.exits)}"
                )
                write_findings(args.findings, cases, separate, "separate")
                failed |= bool(ss.statuses.keys() - {"ok"})
    if args.random:
        t0 = time.monotonic()
        sound = run_soundness(args.random, args.seed)
        print(
            f"random valid models: {sound['built']} built, {sound['ran']} run by onnxruntime, "
            f"{sound['values']} values checked, {sound['exact']} exact, {len(sound['wrong'])} with a "
            f"contradicted claim, {len(sound['errors'])} with error diagnostics, "
            f"{len(sound['aborted'])} aborted or hung (seeds {sound['aborted'][:10]}) "
            f"({time.monotonic() - t0:.0f} s)"
        )
        args.findings.mkdir(parents=True, exist_ok=True)
        (args.findings / "soundness.json").write_text(json.dumps(sound, indent=2))
        failed |= bool(sound["wrong"])
    print(f"total {time.monotonic() - start:.0f} s; findings in {args.findings}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
