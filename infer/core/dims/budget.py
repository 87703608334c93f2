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

This module sits at the bottom of the package: it imports nothing of ``infer`` but the slot of
the thread's budget (``infer.core.dims.slot``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

from infer.core.dims.slot import Slot

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


class Budget:
    """What one run may spend and has spent: its expression bound and the results it refused, its
    own clock (``max_seconds``) and the deadlines of the rules running (innermost last).

    The run's context owns one (``infer.walk.state.RunState.budget``) and makes it the active
    budget of its thread while it runs (``active``). The operations on extents read the active
    one (``current``) rather than take it as an argument: every operation of the term algebra
    would need the parameter, and a run only ever computes in its own thread."""

    __slots__ = (
        "deadlines",
        "earliest",
        "max_size",
        "next_read",
        "ops",
        "refused",
        "run_deadline",
        "run_seconds",
        "seconds",
        "started",
    )

    def __init__(self, max_size: int = MAX_EXPRESSION_SIZE, seconds: float | None = None):
        """``max_size``: terms of one extent; ``seconds``: the run's clock (``None`` or 0: none),
        started when the budget is first made active."""
        self.max_size = max_size
        self.seconds = seconds
        self.started = False
        self.refused = 0
        self.deadlines: list[float] = []
        self.run_deadline = math.inf  # the run's own clock, never paused
        self.run_seconds: float | None = None  # what it was set to, for the diagnostics
        self.ops = 0
        self.next_read = _TICKS  # ``ops`` at which the clock is read next
        self.earliest = math.inf  # the sooner of the run's deadline and the innermost rule's

    @contextmanager
    def active(self) -> Iterator[Budget]:
        """This budget is the thread's while the block runs (again a no-op where it already is).
        Its clock starts the first time; a run inside a run (a drop-in called by a program's
        rule) keeps the sooner of its own deadline and what the enclosing one has left."""
        outer = _slot.budget
        if outer is self:
            yield self
            return
        if not self.started:
            self.started = True
            if self.seconds:
                self.run_deadline, self.run_seconds = time.monotonic() + self.seconds, self.seconds
        if outer.earliest < self.run_deadline:
            self.run_deadline, self.run_seconds = outer.earliest, outer.run_seconds
        self.earliest = min(self.deadlines[-1], self.run_deadline) if self.deadlines else self.run_deadline
        _slot.budget = self
        ops = self.ops
        try:
            yield self
        finally:
            _slot.budget = outer
            outer.ops += self.ops - ops  # (the thread's count of work, ``operations``, goes on)


# The active budget of this thread (a thread-local: infer/core/dims/slot.py says why there).
_slot: Slot[Budget] = Slot(Budget)


def current() -> Budget:
    """The budget of the run in progress in this thread (``max_size``, ``refused``)."""
    return _slot.budget


def expression_limit(max_size: int) -> AbstractContextManager[Budget]:
    """A budget refusing expressions of more than ``max_size`` terms, active while the block
    runs (its ``refused`` counts its refusals)."""
    return Budget(max_size).active()


def overflow_count() -> int:
    """How many results the run in progress refused for their size."""
    return _slot.budget.refused


def refuse() -> None:
    """Count one refused result; the result is ``None`` (unknown)."""
    _slot.budget.refused += 1


# -- the time of one node ------------------------------------------------------------------------


def start_limit(seconds: float | None) -> int:
    """Bound the wall-clock time of what runs until the matching ``end_limit`` (one node's
    rule) to ``seconds`` (``None`` or 0: unbounded), the enclosing rule's clock paused meanwhile.
    Returns the level ``NodeTimeout.level`` names when its time is up."""
    c = _slot.budget
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
    c = _slot.budget
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


def run_limit(seconds: float | None) -> AbstractContextManager[Budget]:
    """A clock of ``seconds`` (``None`` or 0: unbounded) over the block, on a budget of its own
    with the active one's expression bound: a phase after the run (the writing of an annotated
    copy) that has its own ``max_seconds``."""
    return Budget(_slot.budget.max_size, seconds).active()


def run_seconds() -> float | None:
    """The ``max_seconds`` of the run in progress (``None``: none), for a diagnostic's text."""
    return _slot.budget.run_seconds


def operations() -> int:
    """Units of work counted so far in this thread (while a clock runs; a finished run's work is
    added to the budget it ran inside): a measure of work that, unlike a clock, a loaded machine
    does not move."""
    return _slot.budget.ops


def tick(units: int = 1) -> None:
    """Count ``units`` of work (one operation on extents, one term of a long loop, one input of a
    node); past a deadline, raise ``NodeTimeout``. Without a clock running, nothing is counted.

    The clock is read only once ``_TICKS`` units have passed since the last reading, so a tick in
    a loop costs a call and an addition; a loop whose steps are very cheap ticks once with their
    count instead."""
    c = _slot.budget
    if c.earliest == math.inf:
        return
    c.ops += units
    if c.ops >= c.next_read:
        c.next_read = c.ops + _TICKS
        now = time.monotonic()
        if now > c.earliest:
            raise NodeTimeout(RUN if now > c.run_deadline else len(c.deadlines) - 1)
