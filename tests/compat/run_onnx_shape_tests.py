"""Run onnx's shape-inference test files against the drop-in ``infer.onnx_compat``.

    python -m tests.compat.run_onnx_shape_tests /path/to/onnx/tests/python [--initializers-as-defaults]
        [-- extra pytest args]

The test files come from a checkout of the onnx repository (they are not vendored here). The same
files pass 1,015 tests against onnx 1.23.2 itself. By default the drop-in reads an initializer
that is also a graph input as a constant, the way onnx does (``--initializers-as-constants`` says
so explicitly); ``--initializers-as-defaults`` runs them with ``infer_shapes(...,
initializers_as_constants=False)``, reading it as a default the caller may override (Clause 7.2).
At the end, passed and failed tests are counted per file.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

FILES = [
    "shape_inference_test.py",
    "data_propagation_test.py",
    "symbolic_shape_test.py",
    "function_inference_test.py",
    "model_inference_test.py",
]
ROOT = Path(__file__).resolve().parents[2]
CONSTANTS_FLAG = "--initializers-as-constants"
DEFAULTS_FLAG = "--initializers-as-defaults"


def per_file_counts(junit_xml: Path) -> dict[str, Counter[str]]:
    """file -> Counter of passed / failed / skipped, from a junit XML report."""
    counts: dict[str, Counter[str]] = {}
    for case in ET.parse(junit_xml).getroot().iter("testcase"):
        file = case.get("classname", "").split(".")[0] + ".py"
        outcome = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed"
            elif child.tag == "skipped":
                outcome = "skipped"
        counts.setdefault(file, Counter())[outcome] += 1
    return counts


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    tests = Path(argv[0])
    ours, extra = argv[1:], []
    if "--" in ours:
        cut = ours.index("--")
        ours, extra = ours[:cut], ours[cut + 1 :]
    missing = [f for f in FILES if not (tests / f).exists()]
    if missing:
        print(f"not found in {tests}: {', '.join(missing)}")
        return 2
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(tests), os.environ.get("PYTHONPATH", "")]))
    if CONSTANTS_FLAG in ours and DEFAULTS_FLAG in ours:
        print(f"{CONSTANTS_FLAG} and {DEFAULTS_FLAG} contradict each other")
        return 2
    env.pop("ONNX_COMPAT_INITIALIZERS_AS_CONSTANTS", None)  # unset: the drop-in's default
    if CONSTANTS_FLAG in ours or DEFAULTS_FLAG in ours:
        env["ONNX_COMPAT_INITIALIZERS_AS_CONSTANTS"] = "1" if CONSTANTS_FLAG in ours else "0"
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.xml"
        cmd = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "tests.compat.onnx_tests_plugin",
            f"--junitxml={report}",
            *FILES,
            *extra,
        ]
        status = subprocess.call(cmd, cwd=tests, env=env)
        if report.exists():
            counts = per_file_counts(report)
            total: Counter[str] = Counter()
            for file in FILES:
                c = counts.get(file, Counter())
                total.update(c)
                print(f"{file:28} {c['passed']:5} passed {c['failed']:5} failed {c['skipped']:5} skipped")
            print(f"{'total':28} {total['passed']:5} passed {total['failed']:5} failed {total['skipped']:5} skipped")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
