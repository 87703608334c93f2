"""A sum of extents kept as the coefficient of each monomial (``Tally``), for a caller that adds
and removes many extents and compares the sums along the way (the live bytes along a model's
node order): adding an extent costs its own terms, comparing two tallies term by term costs their
length, and no term is built until one is asked for (``dims.tally_term``)."""

from __future__ import annotations

from infer.core.dims.bounds import covered, nonnegative
from infer.core.dims.budget import tick
from infer.core.dims.terms import Expr, Mono


class Tally:
    """A sum of extents: a coefficient per monomial (none zero) and a constant."""

    __slots__ = ("coeffs", "const")

    def __init__(self, coeffs: dict[Mono, int] | None = None, const: int = 0):
        self.coeffs: dict[Mono, int] = {} if coeffs is None else coeffs
        self.const = const

    def add(self, d: int | Expr, sign: int = 1) -> None:
        """Add ``d`` (``sign`` -1: subtract it)."""
        if type(d) is not Expr:
            self.const += sign * d
            return
        tick(len(d.terms))
        self.const += sign * d.const
        coeffs = self.coeffs
        for m, c in d.terms:
            v = coeffs.get(m, 0) + sign * c
            if v:
                coeffs[m] = v
            else:
                del coeffs[m]

    def copy(self) -> Tally:
        return Tally(dict(self.coeffs), self.const)

    def at_most(self, other: Tally) -> bool:
        """Whether ``self <= other`` shows term by term (as ``bounds.at_most_termwise``): each
        term of the difference is at least 0 (a coefficient of at least 0 on a monomial that is
        never negative, 0 on every other; a constant of at least 0), or a negative one is paid
        for by positive terms on its multiples (``bounds.covered``). ``False`` says only that
        this does not show it."""
        mine, theirs = self.coeffs, other.coeffs
        tick(len(mine) + len(theirs))
        const = other.const - self.const
        short: list[tuple[Mono | None, int]] = [] if const >= 0 else [(None, -const)]
        spare: list[tuple[Mono, int]] = []
        for m, c in theirs.items():
            diff = c - mine.get(m, 0)
            if diff and not nonnegative(m):
                return False
            if diff > 0:
                spare.append((m, diff))
            elif diff < 0:
                short.append((m, -diff))
        for m, c in mine.items():
            if m not in theirs:
                if not nonnegative(m):
                    return False
                if c > 0:
                    short.append((m, c))
                else:
                    spare.append((m, -c))
        return not short or (bool(spare) and covered(short, spare))

    def parts(self) -> tuple[tuple[tuple[Mono, int], ...], int]:
        """The terms (sorted as an ``Expr`` holds them) and the constant."""
        return tuple(sorted(self.coeffs.items(), key=lambda t: t[0].okey)), self.const
