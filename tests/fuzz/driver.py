"""Runs the command line on many models in one fresh process, reporting each outcome.

    python -m tests.fuzz.driver JOBS.jsonl START

Each line of JOBS is ``{"id", "path", "value"}``. For each job from index START the driver runs
``onnx-infer annotate PATH -o OUT --json`` (every job), ``check PATH --json`` (every second) and
``explain PATH VALUE`` (every fourth) through ``infer.cli.main`` in this process, and writes two
JSON lines to its standard output: ``{"start": id}`` before, and the outcome after. The parent
(``tests.fuzz.campaign``) kills the driver when a job takes too long, records a hang, and starts
a new driver after it.

An outcome is a crash when ``main`` lets an exception out, prints a traceback or an "internal
error", or exits with a status other than 0, 1 and 2; the traceback is then reproduced through
the library. Rules that failed (``rule-crash`` diagnostics, which the engine survives) are
recorded with the traceback of the first one.
"""

from __future__ import annotations

import io
import json
import os
import sys
import tempfile
import time
import traceback
from contextlib import redirect_stderr, redirect_stdout
from typing import Any

MEMORY_LIMIT = 4 << 30  # bytes of address space; past it an allocation is a MemoryError


def _limit_memory() -> None:
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    except (ImportError, ValueError, OSError):
        pass


def run_cli(argv: list[str]) -> dict[str, Any]:
    """One command: exit status, seconds, captured output, and whether it crashed."""
    from infer import cli

    out, err = io.StringIO(), io.StringIO()
    start = time.perf_counter()
    escaped = None
    try:
        with redirect_stdout(out), redirect_stderr(err):
            code: Any = cli.main(argv)
    except SystemExit as e:  # argparse refusing the arguments
        code = e.code
    except BaseException:  # exactly what must never happen
        code, escaped = "escaped", traceback.format_exc()
    seconds = time.perf_counter() - start
    stderr = err.getvalue()
    crash = escaped
    if crash is None and ("Traceback" in stderr or "internal error" in stderr):
        crash = stderr[-3000:]
    if crash is None and code not in (0, 1, 2):
        crash = f"exit status {code!r}: {stderr[-500:]}"
    return {
        "verb": argv[0],
        "exit": code if isinstance(code, int) else str(code),
        "seconds": round(seconds, 4),
        "crash": crash,
        "memory": "out of memory" in stderr,
        "stdout": out.getvalue(),
        "stderr": stderr[-300:],
    }


def reproduce(path: str, value: str) -> str | None:
    """The traceback of what made the command line fail, through the library."""
    import infer

    try:
        r = infer.infer_model(path)
        r.model.SerializeToString()
        r.to_json()
        try:
            r.explain(value)
        except KeyError:
            pass
    except infer.ModelLoadError:
        return None
    except BaseException:
        return traceback.format_exc()[-4000:]
    return None


def rule_crash_traceback(path: str) -> str | None:
    """The traceback of the first rule that fails on this model (rules raise in debug mode)."""
    import infer
    import infer.walk.rulerun as rulerun

    rulerun.DEBUG = True
    try:
        infer.infer_model(path)
    except infer.ModelLoadError:
        return None
    except BaseException:
        return traceback.format_exc()[-4000:]
    finally:
        rulerun.DEBUG = False
    return None


def run_job(job: dict[str, Any], workdir: str) -> dict[str, Any]:
    path, value = job["path"], job.get("value") or "y"
    out_path = os.path.join(workdir, f"{job['id']}.out.onnx")
    # annotate for every model (it infers, writes and reports); check and explain for some, since
    # each command infers again.
    results = [run_cli(["annotate", path, "-o", out_path, "--json"])]
    if job["id"] % 2 == 0:
        results.append(run_cli(["check", path, "--json"]))
    if job["id"] % 4 == 1:
        results.append(run_cli(["explain", path, value]))
    if os.path.exists(out_path):
        os.unlink(out_path)
    outcome: dict[str, Any] = {"id": job["id"], "verbs": [], "rule_crashes": [], "codes": {}}
    for r in results:
        outcome["verbs"].append({k: r[k] for k in ("verb", "exit", "seconds", "crash", "memory", "stderr")})
    if any(r["crash"] for r in results):
        outcome["traceback"] = reproduce(path, value)
    try:
        report = json.loads(results[0]["stdout"]) if results[0]["exit"] in (0, 1) else {}
    except ValueError:
        report = {}
    for d in report.get("diagnostics", []):
        outcome["codes"][d["code"]] = outcome["codes"].get(d["code"], 0) + 1
        if d["code"] == "rule-crash":
            outcome["rule_crashes"].append({"op": d.get("location", {}).get("op_type"), "message": d["message"]})
    if outcome["rule_crashes"]:
        outcome["rule_traceback"] = rule_crash_traceback(path)
    return outcome


def main(argv: list[str]) -> int:
    jobs_path, start = argv[0], int(argv[1])
    _limit_memory()
    with open(jobs_path) as f:
        jobs = [json.loads(line) for line in f if line.strip()]
    channel = sys.stdout
    import signatures

    signatures.load_all()  # before the first job is timed

    with tempfile.TemporaryDirectory(prefix="fuzz-driver-") as workdir:
        for job in jobs[start:]:
            channel.write(json.dumps({"start": job["id"]}) + "\n")
            channel.flush()
            channel.write(json.dumps(run_job(job, workdir)) + "\n")
            channel.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
