"""The start of the ``onnx-infer`` command (its console script): Ctrl-C while it starts is one line.

Importing the package takes seconds (``onnx``, ``numpy``, ``sympy``), and a Ctrl-C there used to
print a Python traceback and kill the process by the signal. Importing this module imports only
the package face (``infer/__init__.py``, which imports nothing heavy: its names load on first
use) and the standard library; it installs a SIGINT handler that says ``onnx-infer: interrupted`` and exits 2 (the
status of every interrupted run, docs/cli.md), imports the command and hands over to
``infer.cli.main``, which handles Ctrl-C from then on (a run it ended so exits at once, with that
status, and the handler found at the start is put back).
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Sequence
from types import FrameType

# infer.cli's EXIT_FAILED: the status of an interrupted run, and of one that cannot start (docs/cli.md)
EXIT_FAILED = 2
MESSAGE = b"onnx-infer: interrupted\n"


def _interrupted_at_start(signum: int, frame: FrameType | None) -> None:
    """Ctrl-C during the imports: nothing is written yet, so there is nothing to clean up. Exit at
    once rather than raise: a ``KeyboardInterrupt`` inside a library's import can be caught and
    turned into another error there."""
    os.write(2, MESSAGE)
    os._exit(EXIT_FAILED)


_INTERRUPTED: list[bool] = []  # a Ctrl-C came while the command ran (``_interrupted_in_run``)


def _interrupted_in_run(signum: int, frame: FrameType | None) -> None:
    """Ctrl-C while the command runs: Python's own answer (a ``KeyboardInterrupt``, which the
    command turns into its one line and status 2), noted, so that the process then ends with
    that status at once (``_exit_now``): left to the interpreter's exit, such a run has been seen
    to end by the signal itself after printing its line (once, `report` on a loaded machine; the
    status is the interpreter's to decide after our code has returned)."""
    _INTERRUPTED.append(True)
    raise KeyboardInterrupt


def _exit_now(status: int) -> None:
    """End the process with ``status``, what it printed flushed first."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more can reach it
            pass
    os._exit(status)


def main(argv: Sequence[str] | None = None) -> int:
    """``onnx-infer ARGS``: ``infer.cli.main`` behind a start-up that Ctrl-C ends in one line."""
    previous = signal.getsignal(signal.SIGINT)
    # A SIGINT the parent ignores (``nohup``, a background job) stays ignored.
    guard = previous is signal.default_int_handler
    if guard:
        signal.signal(signal.SIGINT, _interrupted_at_start)
    try:
        from infer import cli
    except ImportError as e:  # a dependency missing or broken: one line, as every failure
        print(f"onnx-infer: cannot start: {e}", file=sys.stderr)
        return EXIT_FAILED
    finally:
        if guard:
            signal.signal(signal.SIGINT, previous)
    if guard:
        signal.signal(signal.SIGINT, _interrupted_in_run)
    try:
        status = cli.main(argv)
    finally:
        if guard:
            signal.signal(signal.SIGINT, previous)
    if _INTERRUPTED:
        _exit_now(status)
    return status


if __name__ == "__main__":
    sys.exit(main())
