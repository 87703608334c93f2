"""The active budget of each thread (``infer.core.dims.budget``), in a module of its own.

A thread-local, not a context variable: setting one replaces the context's mapping, which frees
objects a program may have frozen with ``gc.freeze``. It lives apart from ``budget`` because the
compiled build (issue 42) compiles ``budget`` with mypyc and leaves this module pure: mypyc makes a
class native, with attributes stored in the object itself, and a native subclass of
``threading.local`` bypasses the per-thread storage (every thread would share one budget) and
crashes where Python reads the attribute (build_backend/onnx_infer_build.py).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Slot(threading.local, Generic[T]):
    """The active budget of this thread (a ``T``: ``budget.Budget``, which this module does not
    import); outside any run, a default one, ``make()``: each thread runs ``__init__`` with the
    arguments the slot was made with, on its first use."""

    budget: T

    def __init__(self, make: Callable[[], T]) -> None:
        self.budget = make()
