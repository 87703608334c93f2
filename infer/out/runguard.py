"""The bounds of ``verify``'s onnxruntime runs (docs/limits.md#verify).

``estimate`` says, before a run, how much memory its values take at the binding, from the
inferred shapes. ``Guard`` watches each run: a thread sets onnxruntime's ``RunOptions.terminate``
(checked between nodes, inside Loop and Scan bodies too) when the run's deadline passes, when the
process's resident memory grows past the limit, or when Ctrl-C arrives. Python runs a signal's
handler only once the main thread is back in Python, which a run can put off for ever, so SIGINT
reaches the thread through ``signal.set_wakeup_fd``, which the C-level handler writes at once.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NoReturn, TypeVar

from infer.core import dims as D
from infer.core import types as T
from infer.core.scopes import MAIN

R = TypeVar("R")

# A Loop that may run more iterations than this and makes a value of unknown size has no memory
# bound worth the name: its run is skipped (a body that adds one row a trip stays far below).
MAX_LOOP_TRIPS = 4096
_POLL = 0.02  # seconds between the watchdog's looks at the clock and the resident memory


def default_max_memory() -> int:
    """A quarter of physical memory (2 GiB when the platform does not say)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 4
    except (AttributeError, ValueError, OSError):
        return 2 << 30


def size_str(n: int) -> str:
    """``1.5 GiB``, ``12.0 MiB``, ``900 bytes``."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):.1f} {unit}"
    return f"{n} bytes"


def resident_bytes() -> int | None:
    """The process's resident memory now (Linux); ``None`` where it cannot be read."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        return None


# -- the estimate --------------------------------------------------------------------------------


@dataclass
class Estimate:
    """The memory the values of one run take, as far as their inferred shapes say."""

    bytes: int = 0  # values whose size is known at the binding (inputs and initializers included)
    unknown: list[str] = field(default_factory=list)  # main-graph values whose size is not
    unbounded: str | None = None  # why no bound holds at all (a Loop of a huge trip count)


def _value_bytes(t: T.Type, env: Mapping[str, int]) -> int | None:
    if isinstance(t, T.OptionalType):
        return _value_bytes(t.elem, env)
    if not isinstance(t, T.TensorType) or t.shape is None:
        return None  # sequences and maps: their length is not in the type
    bits = T.elem_bits(t.elem)
    if bits is None:  # strings, an unknown element type: checked before the loop, which a scalar skips
        return None
    count = 1
    for d in t.shape:
        x = D.evaluate(d, env) if d is not None else None
        if not isinstance(x, int):
            return None
        count *= x
    return (count * bits + 7) // 8


def _trips(node: Any, rec: Any, env: Mapping[str, int], feeds: Mapping[str, Any]) -> int | None:
    """The trip count a Loop node's ``M`` gives at the binding, when it is known."""
    m = node.input[0] if node.input else ""
    if not m:
        return None  # stopped by its condition only
    if m in feeds:
        arr = feeds[m]
        return int(arr.reshape(-1)[0]) if getattr(arr, "size", 0) == 1 else None
    v = rec.values.get(m)
    known = getattr(v, "known", None)
    if known is None or len(known.elems) != 1:
        return None
    x = known.elems[0]
    x = D.evaluate(x, env) if D.is_symbolic(x) else x
    return x if isinstance(x, int) and not isinstance(x, bool) else None


def estimate(graphs: Mapping[str, Any], env: Mapping[str, int], feeds: Mapping[str, Any]) -> Estimate:
    """The bytes of every value of every graph (``result.graphs``) at ``env``, each counted once,
    and which main-graph values have no size known before the run."""
    out = Estimate()
    for path, rec in graphs.items():
        for name, v in rec.values.items():
            n = _value_bytes(v.type, env)
            if n is not None:
                out.bytes += n
            elif path == MAIN and not isinstance(v.type, T.UnknownType):
                out.unknown.append(name)
    main = graphs[MAIN]
    unknown = set(out.unknown)
    for node in main.nodes:
        grown = [o for o in node.output if o in unknown]
        if node.op_type != "Loop" or node.domain not in ("", "ai.onnx") or not grown:
            continue
        trips = _trips(node, main, env, feeds)
        if trips is not None and trips > MAX_LOOP_TRIPS:
            out.unbounded = (
                f"`{grown[0]}` has an extent no shape bounds, made by a Loop of {trips} iterations "
                f"(more than {MAX_LOOP_TRIPS})"
            )
            break
    return out


# -- watching runs -------------------------------------------------------------------------------


class Stopped(Exception):
    """A run the guard stopped: ``kind`` is ``"time"`` or ``"memory"``; the message says why."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


@dataclass
class _Armed:
    options: Any  # the run's onnxruntime.RunOptions
    deadline: float | None
    rss_limit: int | None
    why: tuple[str, str] | None = None  # (kind, message) once stopped


class Guard:
    """Watches the onnxruntime runs of one ``verify``: ``with Guard(...) as g: g.run(...)``.

    Inside the block Ctrl-C (in the main thread, while Python's default SIGINT handler is in
    place) stops the run in progress and raises ``KeyboardInterrupt`` when it has returned.
    """

    def __init__(self, max_memory: int):
        self.max_memory = max_memory
        self.interrupted = False
        self._armed: _Armed | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._restore: list[Callable[[], object]] = []  # what each undo returns is dropped
        self._wake: socket.socket | None = None
        self._forward = -1  # the wakeup fd that was in place: it gets the signals we read
        self._rss_limit: int | None = None
        self._closing = False
        self._thread = threading.Thread(target=self._watch, name="onnx-infer verify watchdog", daemon=True)

    def __enter__(self) -> Guard:
        # Growth is counted from here, across runs: memory a run leaves allocated counts for the next.
        rss = resident_bytes()
        self._rss_limit = None if rss is None else rss + self.max_memory
        self._take_sigint()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._closing = True  # a SIGINT still pending is only recorded now (signal.signal runs it)
        self._stop.set()
        self._thread.join(timeout=1)
        for undo in reversed(self._restore):
            undo()
        self._restore.clear()

    def _take_sigint(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
            return  # the program handles Ctrl-C itself
        read, write = socket.socketpair()
        read.setblocking(False)
        write.setblocking(False)
        try:
            self._forward = signal.set_wakeup_fd(write.fileno(), warn_on_full_buffer=False)
        except (ValueError, OSError):
            read.close()
            write.close()
            return
        signal.signal(signal.SIGINT, self._on_sigint)
        self._wake = read
        self._restore += [
            read.close,
            write.close,
            lambda: signal.set_wakeup_fd(self._forward),
            lambda: signal.signal(signal.SIGINT, signal.default_int_handler),
        ]

    def _on_sigint(self, signum: int, frame: object) -> None:
        # Python may run this long after the signal (once the main thread is back in Python, and
        # after the watchdog read it): a Ctrl-C already seen has been acted on; raise only for a new one.
        seen, self.interrupted = self.interrupted, True
        if not seen and self._armed is None and not self._closing:
            raise KeyboardInterrupt

    def _stop_run(self, armed: _Armed | None, kind: str, message: str) -> None:
        """Stop the run ``armed`` if it is still the one in progress (the watchdog looked at it
        before this call; the next run must not be stopped for what this one did)."""
        with self._lock:
            if armed is not None and armed is self._armed and armed.why is None:
                armed.why = (kind, message)
                armed.options.terminate = True

    def _watch(self) -> None:
        while not self._stop.is_set():
            if self._wake is None:
                self._stop.wait(_POLL)
            else:
                self._read_signals()
            armed = self._armed
            if armed is None:
                continue
            if armed.deadline is not None and time.monotonic() > armed.deadline:
                self._stop_run(armed, "time", "")
            if armed.rss_limit is not None and (rss := resident_bytes()) is not None and rss > armed.rss_limit:
                self._stop_run(
                    armed, "memory", f"resident memory grew by more than {size_str(self.max_memory)} (max_memory)"
                )

    def _read_signals(self) -> None:
        assert self._wake is not None
        try:
            ready, _, _ = select.select([self._wake], [], [], _POLL)
            data = self._wake.recv(64) if ready else b""
        except (OSError, ValueError):  # closed as the guard ends
            return
        if self._forward != -1 and data:
            with contextlib.suppress(OSError):
                os.write(self._forward, data)
        if signal.SIGINT in data:
            self.interrupted = True
            self._stop_run(self._armed, "interrupt", "interrupted")

    def run(self, ort: Any, call: Callable[[Any], R], seconds: float | None, over: str) -> R:
        """``call(run_options)``, stopped after ``seconds`` (``over`` names that limit) or once
        resident memory has grown by more than ``max_memory`` since the guard began: ``Stopped``
        then, and ``KeyboardInterrupt`` on Ctrl-C."""
        if self.interrupted:  # Ctrl-C the watchdog read between runs
            raise KeyboardInterrupt
        options = ort.RunOptions()
        deadline = None if seconds is None else time.monotonic() + seconds
        armed = _Armed(options, deadline, self._rss_limit)
        with self._lock:
            self._armed = armed
        try:
            result = call(options)
        except Exception:
            if armed.why is None and not self.interrupted:
                raise  # onnxruntime's own failure
            self._raise_stopped(armed.why, seconds, over)
        finally:
            with self._lock:
                self._armed = None
        if self.interrupted:
            raise KeyboardInterrupt
        return result  # a run that finished as it was stopped still counts

    def _raise_stopped(self, why: tuple[str, str] | None, seconds: float | None, over: str) -> NoReturn:
        """End a run that failed as it was stopped: ``KeyboardInterrupt`` on Ctrl-C (``why`` is
        ``None`` only then), else ``Stopped``; neither chained to onnxruntime's failure, which
        the stop caused."""
        if self.interrupted or why is None:
            raise KeyboardInterrupt from None
        kind, message = why
        raise Stopped(kind, message or f"it took longer than {seconds:.3g} s ({over})") from None
