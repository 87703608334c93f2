"""``onnx-infer ARGS`` for the tests: in this process, or as a real child process.

``run`` calls ``infer.cli.main`` here (no interpreter start, no import of the package again: a
child costs about 1.5 s) and returns what a ``subprocess.run`` would: the exit status, stdout and
stderr. Use it wherever the test is about what the command prints and returns. ``spawn`` starts
``python -m infer.cli ARGS`` for the tests about the process itself: signals, pipes and
terminals, a fresh interpreter's start-up, the environment it inherits.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

from infer import cli

ROOT = Path(__file__).resolve().parents[2]


class Ran(NamedTuple):
    """What one command did: ``returncode``, ``stdout`` and ``stderr`` (as text); it unpacks as
    ``status, out, err``."""

    returncode: int
    stdout: str
    stderr: str


def run(*args: str, cwd: Path | str | None = None) -> Ran:
    """``onnx-infer ARGS`` in this process, from ``cwd`` (by default the current directory).

    The exit status is ``main``'s return value, or the code of the ``SystemExit`` argparse raises
    (``--help``, a bad option); stdout and stderr are captured here, so this works with and
    without pytest's own capture. Neither is a terminal, as with a child writing into a pipe.
    """
    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    os.chdir(cwd or here)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = cli.main(list(args))
            except SystemExit as e:
                status = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    finally:
        os.chdir(here)
    return Ran(int(status), out.getvalue(), err.getvalue())


def spawn(*args: str, cwd: Path | str | None = None, timeout: float = 120, **kwargs) -> subprocess.CompletedProcess:
    """``python -m infer.cli ARGS`` as a child process (text, captured), from ``cwd``."""
    return subprocess.run(
        [sys.executable, "-m", "infer.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd or ROOT,
        timeout=timeout,
        **kwargs,
    )
