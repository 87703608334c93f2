"""onnxruntime in a child process, so that its aborts end the child and never the caller.

``OrtRunner.run(model, feeds)`` creates one InferenceSession for the model and runs it once per
feed dictionary (one per binding), returning every output by name. The child is started on first
use, reused across programs, and restarted after it dies or hangs. ``python -m
tests.oracle.ortrun`` is the child: length-prefixed pickles on standard input and output.
"""

from __future__ import annotations

import os
import pickle
import select
import struct
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class OrtOutcome:
    outputs: list[dict[str, np.ndarray]] | None  # one dict per feed dictionary
    error: str | None = None  # onnxruntime refused the model or a run
    crashed: bool = False  # the child died (an abort) or hung


class OrtRunner:
    """A persistent onnxruntime child process."""

    def __init__(self, timeout: float = 120.0, command: list[str] | None = None):
        self.timeout = timeout
        self.command = command or [sys.executable, "-m", "tests.oracle.ortrun"]
        self.proc: subprocess.Popen | None = None
        self.sessions = 0

    def _start(self) -> subprocess.Popen:
        env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        env.setdefault("OMP_NUM_THREADS", "1")
        return subprocess.Popen(
            self.command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=ROOT,
            env=env,
        )

    def run(self, model: bytes, feeds: list[dict[str, np.ndarray]]) -> OrtOutcome:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = self._start()
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.sessions += 1
        try:
            _send(self.proc.stdin, (model, feeds))
            reply = _receive(self.proc.stdout, self.timeout)
        except (BrokenPipeError, EOFError, TimeoutError, OSError) as e:
            what = "hung" if isinstance(e, TimeoutError) else f"died ({self.proc.poll()})"
            self.close()
            return OrtOutcome(None, f"onnxruntime {what}", crashed=True)
        if isinstance(reply, str):
            return OrtOutcome(None, reply)
        return OrtOutcome(reply)

    def close(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
            self.proc = None

    def __enter__(self) -> OrtRunner:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _send(stream: Any, obj: Any) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


def _read_exactly(stream: Any, n: int, deadline: float | None) -> bytes:
    import time

    out = b""
    fd = stream.fileno()
    while len(out) < n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError
        chunk = os.read(fd, n - len(out))
        if not chunk:
            raise EOFError
        out += chunk
    return out


def _receive(stream: Any, timeout: float | None) -> Any:
    import time

    deadline = None if timeout is None else time.monotonic() + timeout
    (size,) = struct.unpack("<Q", _read_exactly(stream, 8, deadline))
    return pickle.loads(_read_exactly(stream, size, deadline))


def _serve() -> None:
    import onnxruntime as ort

    from infer.out.verify import fetchable

    ort.set_default_logger_severity(4)
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        try:
            model, feeds = _receive(stdin, None)
        except EOFError:
            return
        try:
            so = ort.SessionOptions()
            so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
            so.intra_op_num_threads = 1
            so.inter_op_num_threads = 1
            so.log_severity_level = 4
            sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
            names = [o.name for o in sess.get_outputs() if fetchable(o.type)]
            reply: Any = [dict(zip(names, sess.run(names, f))) for f in feeds]
        except Exception as e:
            reply = f"{type(e).__name__}: {str(e)[:400]}"
        _send(stdout, reply)


if __name__ == "__main__":
    _serve()
