"""Where the generator's decisions come from: a seeded PRNG, or hypothesis draws.

The generator only ever asks a ``Chooser`` for integers, so the same code is driven by a seed
(campaigns, the fixed CI slice) or by ``st.data()`` (hypothesis, which can then shrink a
program by shrinking its draws). Draws shrink towards their lower bound and towards the first
element of a choice, so generator code lists the simplest option first.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, Protocol, TypeVar

T = TypeVar("T")


class Chooser(Protocol):
    def integer(self, lo: int, hi: int) -> int:
        """An integer in ``[lo, hi]``."""
        ...


class RandomChooser:
    """Decisions from ``random.Random(seed)``."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)

    def integer(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)


class DrawChooser:
    """Decisions drawn from a hypothesis ``st.data()`` object, so hypothesis can shrink them."""

    def __init__(self, data: Any):
        from hypothesis import strategies as st

        self._data = data
        self._st = st

    def integer(self, lo: int, hi: int) -> int:
        return self._data.draw(self._st.integers(lo, hi))


def choice(c: Chooser, options: Sequence[T]) -> T:
    return options[c.integer(0, len(options) - 1)]


def chance(c: Chooser, percent: int) -> bool:
    """True with probability ``percent``/100 (shrinks to False)."""
    return c.integer(0, 99) >= 100 - percent


def weighted(c: Chooser, table: Sequence[tuple[T, int]]) -> T:
    total = sum(w for _, w in table)
    x = c.integer(0, total - 1)
    for item, w in table:
        if x < w:
            return item
        x -= w
    return table[-1][0]


def recent(c: Chooser, items: Sequence[T]) -> T:
    """An item biased towards the end of ``items`` (the most recently made values)."""
    n = len(items)
    back = min(c.integer(0, n - 1), c.integer(0, n - 1))
    return items[n - 1 - back]
