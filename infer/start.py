"""The start of the ``onnx-infer`` command (its console script): Ctrl-C while it starts is one line.

Importing the package takes seconds (``onnx``, ``numpy``, ``sympy``), and a Ctrl-C there used to
print a Python traceback and kill the process by the signal. Importing this module imports only
the package face (``infer/__init__.py``, which imports nothing heavy: its names load on first
use) and the standard library; it installs a SIGINT handler that says ``onnx-infer: interrupted`` and exits 2 (the
status of every interrupted run, docs/cli.md), imports the command, restores the handler and hands
over to ``infer.cli.main``, which handles Ctrl-C from then on.
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
    return cli.main(argv)


if __name__ == "__main__":
    sys.exit(main())
