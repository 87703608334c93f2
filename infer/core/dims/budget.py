"""What one run may spend on extents (Clause 15.4): their size, their integers, a node's time.

A model can make extents grow at every node (``x = concat(x, x)`` doubles a symbolic sum, a chain
of ``Mul`` squares an integer, a product of sums multiplies their term counts). Past these bounds a
result is ``None``: unknown, which the engine turns into a fresh variable. Unknown is always sound;
the operands of every operation stay small, and the work of an operation is bounded before it
starts (a product is refused from its operands' term counts), so no single operation takes long.

The clocks are read here too: the run's (``max_seconds``: the scan, the walk, the writing of an
annotated copy) and that of the node whose rule is running (``max_node_seconds``). ``tick`` is the
one way every loop that grows with the input reads them: it counts work, and reads the time once
every ``_TICKS`` units counted; past a deadline it raises ``NodeTimeout``, which the rule runner
turns into a diagnosis of that node, or the run's caller (the scan, the walk, the writer) into a
``limit`` diagnostic of the run.

This module sits at the bottom of the package: it imports nothing of ``infer``.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

_TICKS = 32  # units of work counted between two readings of the clock (a reading costs ~50 ns)
MAX_EXPRESSION_SIZE = 256  # terms of one symbolic extent; a larger one becomes a fresh variable
MAX_INT_MAGNITUDE = 1 << 128  # integers in extent arithmetic; beyond, the result is unknown
TOO_BIG = 1 << 62  # the size of anything past every bound


RUN = -1  # ``NodeTimeout.level`` when the run's own clock (``max_seconds``) is up


class NodeTimeout(BaseException):
    """A clock ran out: a rule ran past its node's time (``max_node_seconds``), or the run past
    its own (``max_seconds``, ``level`` ``RUN``). Raised by ``tick``, and turned by the rule
    runner into a ``limit`` diagnosis of that node, or by the run's caller into one of the run.

    A ``BaseException`` for the reason ``LimitExceeded`` is: a rule's ``except Exception`` must
    not swallow it. ``level``: the nesting of the rule whose time is up (rules run inside rules: a
    Loop's body's), which the runner at that level checks before it catches it; ``RUN`` passes
    every runner.
    """

    def __init__(self, level: int):
        super().__init__(level)
        self.level = level


class _State(threading.local):
    """What the run in progress in this thread may spend and has spent: its expression bound and
    the results it refused (the runs it interrupted are saved, innermost last), and the deadlines
    of the rules running (innermost last). One thread-local object, read by every operation on
    extents (a thread-local, not a context variable: setting one replaces the context's mapping,
    which frees objects a program may have frozen with ``gc.freeze``)."""

    def __init__(self) -> None:
        self.max_size = MAX_EXPRESSION_SIZE  # outside any run: the default bound
        self.refused = 0
        self.saved: list[tuple[int, int]] = []
        self.deadlines: list[float] = []
        self.run_deadline = math.inf  # the run's own clock (``max_seconds``), never paused
        self.run_seconds: float | None = None  # what it was set to, for the diagnostics
        self.ops = 0
        self.next_read = _TICKS  # ``ops`` at which the clock is read next
        self.earliest = math.inf  # the sooner of the run's deadline and the innermost rule's


state = _State()


def current() -> _State:
    """The budget of the run in progress (``max_size``, ``refused``)."""
    return state


@contextmanager
def expression_limit(max_size: int) -> Iterator[None]:
    """Refuse expressions of more than ``max_size`` terms while the block runs (one run's
    budget: ``overflow_count`` counts its refusals)."""
    s = state
    s.saved.append((s.max_size, s.refused))
    s.max_size, s.refused = max_size, 0
    try:
        yield
    finally:
        s.max_size, s.refused = s.saved.pop()


def overflow_count() -> int:
    """How many results the run in progress refused for their size."""
    return state.refused


def refuse() -> None:
    """Count one refused result; the result is ``None`` (unknown)."""
    state.refused += 1


# -- the time of one node ------------------------------------------------------------------------


_clock = state  # (the deadlines live in the same thread-local object)


def start_limit(seconds: float | None) -> int:
    """Bound the wall-clock time of what runs until the matching ``end_limit`` (one node's
    rule) to ``seconds`` (``None`` or 0: unbounded), the enclosing rule's clock paused meanwhile.
    Returns the level ``NodeTimeout.level`` names when its time is up."""
    c = _clock
    deadlines = c.deadlines
    level = len(deadlines)
    if level:
        now = time.monotonic()
        deadlines[-1] -= now  # what the enclosing rule has left, while this one runs
        deadlines.append(now + seconds if seconds else math.inf)
    else:
        deadlines.append(time.monotonic() + seconds if seconds else math.inf)
    c.earliest = min(deadlines[-1], c.run_deadline)
    return level


def end_limit() -> None:
    """The innermost limit ends; the enclosing rule's clock runs again."""
    c = _clock
    deadlines = c.deadlines
    deadlines.pop()
    if deadlines:
        deadlines[-1] += time.monotonic()
        c.earliest = min(deadlines[-1], c.run_deadline)
    else:
        c.earliest = c.run_deadline


class time_limit:
    """``with time_limit(seconds) as level``: ``start_limit`` and ``end_limit`` around a block."""

    __slots__ = ("seconds",)

    def __init__(self, seconds: float | None):
        self.seconds = seconds

    def __enter__(self) -> int:
        return start_limit(self.seconds)

    def __exit__(self, *exc: object) -> None:
        end_limit()


@contextmanager
def run_limit(seconds: float | None) -> Iterator[None]:
    """Bound the wall-clock time of the block (one run: the scan and the walk, or the writing of
    an annotated copy) to ``seconds`` (``None`` or 0: unbounded). Unlike a rule's limit it is
    never paused; a run inside a run (a drop-in called by a program's rule) keeps the sooner
    deadline."""
    c = _clock
    saved = c.run_deadline, c.run_seconds
    if seconds:
        deadline = time.monotonic() + seconds
        if deadline < c.run_deadline:
            c.run_deadline, c.run_seconds = deadline, seconds
    c.earliest = min(c.deadlines[-1], c.run_deadline) if c.deadlines else c.run_deadline
    try:
        yield
    finally:
        c.run_deadline, c.run_seconds = saved
        c.earliest = min(c.deadlines[-1], c.run_deadline) if c.deadlines else c.run_deadline


def run_seconds() -> float | None:
    """The ``max_seconds`` of the run in progress (``None``: none), for a diagnostic's text."""
    return _clock.run_seconds


def operations() -> int:
    """Units of work counted so far in this thread (while a clock runs): a measure of work that,
    unlike a clock, a loaded machine does not move."""
    return _clock.ops


def tick(units: int = 1) -> None:
    """Count ``units`` of work (one operation on extents, one term of a long loop, one input of a
    node); past a deadline, raise ``NodeTimeout``. Without a clock running, nothing is counted.

    The clock is read only once ``_TICKS`` units have passed since the last reading, so a tick in
    a loop costs a call and an addition; a loop whose steps are very cheap ticks once with their
    count instead."""
    c = _clock
    if c.earliest == math.inf:
        return
    c.ops += units
    if c.ops >= c.next_read:
        c.next_read = c.ops + _TICKS
        now = time.monotonic()
        if now > c.earliest:
            raise NodeTimeout(RUN if now > c.run_deadline else len(c.deadlines) - 1)
