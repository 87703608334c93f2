"""What one run has learned about its dimension variables, and every answer that depends on it.

The expression core (``infer.core.dims``) knows only what an extent's syntax says: declared variables
are at least 1, fresh ones at least 0. A run learns more as it walks: a Conv's window must fit
(``H + 2 >= 3``), a Reshape divides its element count exactly (``mod(C*H, 12) == 0``), claims
rest on integers staying exact in float32 (``H*W <= 2^24``). The ``DimScope`` of the run holds
these (with the node and the reason of each, for ``result.assumptions``), the run's table of
variables (``DimTable``: declared, fresh and defined ones with their origins), and the caches
of the answers they sharpen: a lower bound asked twice under the same facts is computed once,
and a new fact clears what it may change. Nothing here is shared between runs.

Rules reach it only through their ``RuleContext`` (``ctx.lower_bound``, ``ctx.equal``,
``ctx.less``, ``ctx.require_multiple``, ``ctx.fresh``): it is the one prover of extents they
use. The walker holds it for the run.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field

from infer.core import dims as D
from infer.core.dims import Dim
from infer.core.dims.bounds import bounds as syntactic_bounds
from infer.core.dims.bounds import is_monotone
from infer.core.dimtable import DimTable, Origin, Site, Variable

Bound = int | None
MAX_DEMANDERS = 8  # nodes named for one requirement (the same layer repeated says nothing more)


@dataclass(frozen=True, slots=True)
class Assumption:
    """A condition on dimension variables that some claims rest on: ``lower <= expr <= upper``.

    A Conv assumes its window fits (``H + 2 >= 3``); contents that detour through float32
    assume the integers they carry stay exactly representable (``H*W <= 2^24``). A run that
    violates one may contradict claims resting on it; ``verify`` does not bind such runs.
    """

    expr: Dim
    lower: int | None = None
    upper: int | None = None
    why: str = ""
    site: Site | None = field(default=None, compare=False)
    shown: str = field(default="", compare=False)  # an equivalent form easier to read, where one is

    def holds(self, bindings: Mapping[str, int]) -> bool | None:
        """Whether the condition holds at ``bindings``; ``None`` while a variable is unbound."""
        value = D.evaluate(self.expr, bindings)
        if not isinstance(value, int):
            return None
        return (self.lower is None or value >= self.lower) and (self.upper is None or value <= self.upper)

    def __str__(self) -> str:
        e = D.to_str(self.expr)
        if self.shown:
            text = self.shown
        elif self.lower is not None and self.lower == self.upper:
            text = f"{e} == {self.lower}"
        elif self.lower is not None and self.upper is not None:
            text = f"{self.lower} <= {e} <= {self.upper}"
        elif self.lower is not None:
            text = f"{e} >= {self.lower}"
        else:
            text = f"{e} <= {self.upper}"
        return text + (f" ({self.why})" if self.why else "")


_serials = itertools.count()


class DimScope:
    """The dimension variables of one run and what the run has learned of them."""

    def __init__(
        self, table: DimTable, minimums: Mapping[Dim, int] | None = None, var_minimums: Mapping[str, int] | None = None
    ):
        """``minimums`` and ``var_minimums``: what an earlier walk of the same model required
        (``carried``), so that this walk starts knowing it."""
        self.table = table
        self.serial = next(_serials)  # tells this scope from every other of the process (infer/walk/memo.py)
        self.minimums: dict[Dim, int] = dict(minimums or {})  # extents a valid run needs this large
        self.var_minimums: dict[str, int] = dict(var_minimums or {})  # least values they imply
        self.ranges: dict[Dim, tuple[Bound, Bound]] = {}  # assumed, not required
        # (a, b) where a valid run has b dividing a (a Reshape's element count by its other extents)
        self.divisible: dict[tuple[int | D.Expr, int | D.Expr], None] = {}
        # What each minimum or maximum rests on, for ``assumptions`` (the first reason given wins).
        self._reasons: dict[tuple[Dim, str], tuple[str, Site | None]] = {}
        # What a model that runs requires, as ``infer.check.domain`` reads it: a requirement (its kind
        # and extents) to the nodes that make it, with why (the first few of them).
        self.requirements: dict[tuple, list[tuple[str, Site | None]]] = {}
        # Graph inputs' names read as expressions (``assume_reading``): name -> (reading, why, site).
        self.readings: dict[str, tuple[Dim, str, Site | None]] = {}
        # Bumped whenever a fact that sharpens bounds or quotients is learned: rule results
        # computed before must not be reused after (the memo keys on it), and the caches go.
        self.epoch = 0
        self._required_at_least: set[tuple[Dim, int]] = set()  # learned by ``require_at_least``
        self._lower: dict[Dim, Bound] = {}
        self._exact: dict[Dim, Dim] = {}
        # Questions rules asked whose answers depend on what the run has learned (bounds, exact
        # forms) or on its table (which variables are fresh): a rule result that asked none is a
        # function of the node and its inputs alone, and may be reused by any walk (infer.walk.memo).
        self.fact_reads = 0
        self.table_reads = 0
        self._facts_key: tuple | None = None

    def carried(self) -> DimScope:
        """A scope for walking the same model again, knowing what this walk required."""
        t = self.table
        table = DimTable(reserved=t.reserved, bindings=t.bindings, inputs=t.inputs)
        return DimScope(table, self.minimums, self.var_minimums)

    def _learned(self) -> None:
        self.epoch += 1
        self._lower.clear()
        self._exact.clear()
        self._facts_key = None

    @property
    def facts_key(self) -> tuple:
        """What the run has learned that sharpens answers, as a value: two scopes with equal
        keys answer every bound and exact form alike."""
        k = self._facts_key
        if k is None:
            k = self._facts_key = (tuple(self.minimums.items()), tuple(self.divisible))
        return k

    # -- variables ------------------------------------------------------------------------------

    def fresh(self, origin: Origin, key: Hashable | None = None, prefix: str = "unk") -> D.Expr:
        """A new variable for an extent inference cannot determine (Clause 9.3); the same
        ``key`` gives the same variable, so re-inferring a subgraph is stable."""
        return self.table.fresh(origin, key, prefix)

    def is_fresh(self, d: Dim) -> bool:
        self.table_reads += 1
        return self.table.is_fresh(d)

    def variable(self, name: str) -> Variable | None:
        """The run's variable called ``name``, with its origin."""
        self.table_reads += 1
        return self.table.get(name)

    # -- bounds ---------------------------------------------------------------------------------

    def lower_bound(self, d: Dim) -> Bound:
        """The least value of ``d`` in a run of a valid model: its syntax's bound sharpened by
        what the run has required (the one lower bound rules use)."""
        if type(d) is not D.Expr:
            return d
        self.fact_reads += 1
        if not self.minimums:
            return syntactic_bounds(d)[0]
        try:
            return self._lower[d]
        except KeyError:
            out = self._lower[d] = self._sharpened(d)
            return out

    def _sharpened(self, d: D.Expr) -> Bound:
        candidates = [syntactic_bounds(d)[0], self.minimums.get(d)]
        const = D.constant_of(d)
        if const:
            rest = D.sub(d, const)
            if rest in self.minimums:
                candidates.append(self.minimums[rest] + const)
        kinds = D.least_values(d)
        if self.var_minimums and any(n in self.var_minimums for n in kinds) and is_monotone(d):
            least = D.evaluate(d, {n: self.var_minimums.get(n, lo) for n, lo in kinds.items()})
            candidates.append(least if isinstance(least, int) else None)
        known = [c for c in candidates if c is not None]
        return max(known) if known else None

    def bounds(self, d: Dim) -> tuple[Bound, Bound]:
        """(lower, upper) bounds of ``d``, the lower sharpened like ``lower_bound``."""
        if d is None or type(d) is int:
            return d, d
        negated = D.neg(d)  # None when past the expression limit
        least_negated = self.lower_bound(negated) if negated is not None else None
        return self.lower_bound(d), None if least_negated is None else -least_negated

    # -- comparisons: the one prover rules use -------------------------------------------------

    def equal(self, a: Dim, b: Dim) -> bool | None:
        """``True`` when ``a == b`` in every run of a valid model, ``False`` when in none, else
        ``None``: the syntax's answer, else the difference's bounds under what the run learned."""
        syntax = D.equal(a, b)
        if syntax is not None or not self._informed(a, b):
            return syntax
        lo, hi = self.bounds(D.sub(a, b))
        return False if (lo is not None and lo > 0) or (hi is not None and hi < 0) else None

    def less(self, a: Dim, b: Dim) -> bool | None:
        """``a < b`` in every run of a valid model (``True``), in none (``False``), else ``None``."""
        syntax = D.less(a, b)
        if syntax is not None or not self._informed(a, b):
            return syntax
        lo, hi = self.bounds(D.sub(a, b))
        return True if hi is not None and hi < 0 else False if lo is not None and lo >= 0 else None

    def _informed(self, a: Dim, b: Dim) -> bool:
        """Whether what the run learned may decide a comparison the syntax leaves open (it is
        read, and the answer rests on it, only then: a memoized rule result stays as reusable)."""
        return a is not None and b is not None and bool(self.minimums)

    def least_where_empty(self, d: Dim) -> Bound:
        """The least value of ``d`` where any variable may be 0 (Clause 6.5.1: a declared
        variable may denote an empty extent) but for what the run requires of it; ``None``
        unless ``d`` is monotone, which makes that its value with every variable at its least."""
        if d is None or type(d) is int:
            return d
        self.fact_reads += 1
        if not is_monotone(d):
            return None
        least = D.evaluate(d, {n: self.var_minimums.get(n, 0) for n in D.free_names(d)})
        return least if type(least) is int else None

    def exact(self, d: Dim) -> Dim:
        """``d`` with the quotients the model's validity makes exact (``require_multiple``)."""
        if d is None or type(d) is int:
            return d
        self.fact_reads += 1
        if not self.divisible:
            return d
        try:
            return self._exact[d]
        except KeyError:
            out = self._exact[d] = D.exact_quotients(d, self.divisible)
            return out

    # -- what a valid run requires, and what claims assume --------------------------------------

    def require_at_least(self, d: Dim, value: int, site: Site | None = None, why: str = "") -> None:
        """Record that a model which runs has ``d >= value`` (a Conv needs its kernel to fit).

        Like the broadcasting assumption this rests on the model being valid, and is listed
        with the assumptions; ``lower_bound`` uses it (an integer Div of ``d - value`` floors).
        """
        if d is None or type(d) is int:
            return
        if value <= (syntactic_bounds(d)[0] or 0):
            return
        self._demand(("at_least", d, value), why, site)
        if (d, value) not in self._required_at_least:
            # Once learned, the same requirement again (another node's, a reused result's
            # replay) teaches nothing: the caches it would clear stay.
            self._required_at_least.add((d, value))
            self.minimums[d] = max(value, self.minimums.get(d, value))
            self._learn_variable_minimum(d, value)
            self._learned()
        self._reasons.setdefault((d, "min"), (why, site))
        self.table.note("assumption", f"{D.to_str(d)} >= {value}" + (f" ({why})" if why else ""), (d,), site)

    def require_multiple(self, d: Dim, k: Dim, site: Site | None = None, why: str = "") -> None:
        """Record that a model which runs has ``d`` a multiple of ``k`` (Reshape divides its
        element count exactly): listed as the assumption ``mod(d, k) == 0``, and used by
        ``exact`` (``k*floor(d/k)`` is ``d``)."""
        parts = D.quotient_parts(d, k)
        remainder = D.mod(d, k)
        if remainder is not None and type(remainder) is not int:
            self._demand(("multiple", d, k), why, site)
        if parts is None or remainder is None or type(remainder) is int or parts in self.divisible:
            return
        self.divisible[parts] = None
        self._learned()
        self.assume_range(remainder, 0, 0, site, why)

    def assume_range(self, d: Dim, lower: Bound, upper: Bound, site: Site | None = None, why: str = "") -> None:
        """Record that claims assume ``lower <= d <= upper`` (an integer carried through float32
        stays exactly representable). Listed with the assumptions; unlike ``require_at_least``
        it sharpens no bound: nothing about the model's validity follows from it."""
        if d is None or type(d) is int or (lower is None and upper is None):
            return
        lo, hi = self.ranges.get(d, (None, None))
        new_lo = lower if lo is None else lo if lower is None else max(lo, lower)
        new_hi = upper if hi is None else hi if upper is None else min(hi, upper)
        if (new_lo, new_hi) == (lo, hi):
            return
        self.ranges[d] = (new_lo, new_hi)
        self._reasons.setdefault((d, "range"), (why, site))
        self.table.note("assumption", str(Assumption(d, new_lo, new_hi, why)), (d,), site)

    def require_at_most(
        self, d: Dim, value: int, site: Site | None = None, why: str = "", every_run: bool = True
    ) -> None:
        """Record that a model which runs has ``d <= value`` (an index within its axis); with
        ``every_run`` false, that it runs at every value of its inputs only then (some values
        may keep the index inside). Listed in the domain only: no bound is sharpened by it."""
        if d is None or type(d) is int:
            return
        if (hi := syntactic_bounds(d)[1]) is not None and hi <= value:
            return
        self._demand(("at_most" if every_run else "at_most_every_value", d, value), why, site)
        self.table.note("assumption", f"{D.to_str(d)} <= {value}" + (f" ({why})" if why else ""), (d,), site)

    def require_broadcast(self, ds: Iterable[Dim], text: str, site: Site | None = None, why: str = "") -> None:
        """Record that a model which runs has the extents ``ds`` broadcast (each 1 or equal to the
        others that are not 1); ``text`` is the note ``explain`` shows."""
        ds = tuple(dict.fromkeys(d for d in ds if d is not None and d != 1))
        if len(ds) > 1:
            self._demand(("broadcast", ds), why, site)
        self.table.note("assumption", text, ds, site)

    def require_equal(self, a: Dim, b: Dim, text: str, site: Site | None = None, why: str = "") -> None:
        """Record that a model which runs has ``a == b`` (a MatMul's inner extents)."""
        if a is not None and b is not None and a != b:
            self._demand(("equal", a, b), why, site)
        self.table.note("assumption", text, (a, b), site)

    def runtime_requires_at_least(self, d: Dim, value: int, site: Site | None = None, why: str = "") -> None:
        """Record that the runtime runs this node only where ``d >= value``, although the
        definition allows less (reflect padding of more than the extent less one): listed in the
        domain as a runtime's requirement; no bound is sharpened by it."""
        if d is None or type(d) is int or value <= (syntactic_bounds(d)[0] or 0):
            return
        self._demand(("runtime_at_least", d, value), why, site)

    def refused_by_runtime(self, text: str, site: Site | None = None) -> None:
        """Record that the runtime refuses this node although the definition allows it: the
        model runs nowhere there (``infer.check.domain`` lists it as a runtime's requirement)."""
        self._demand(("runtime", text), "the definition allows it", site)
        self.table.note("assumption", text, (), site)

    def require_unexpressed(self, text: str, reason: str, site: Site | None = None) -> None:
        """Record a requirement that cannot be stated over extents (indices whose values are not
        tracked must lie within their axis): the domain lists it as not expressed."""
        self._demand(("unexpressed", text, reason), reason, site)

    def _demand(self, key: tuple, why: str, site: Site | None) -> None:
        # (A rule result that made a requirement may be reused in any walk: the reuse makes the
        # requirement again at its own node, ``RuleContext.replay``.)
        seen = self.requirements.setdefault(key, [])
        if len(seen) < MAX_DEMANDERS and (why, site) not in seen:
            seen.append((why, site))

    def assume_reading(self, name: str, reading: Dim, site: Site | None = None, why: str = "") -> None:
        """Record that claims read the graph input's ``dim_param`` ``name`` as the expression
        ``reading`` (``past_sequence + sequence``). A runtime binds the name as an extent of its
        own, so those claims hold where it equals the reading: listed with the assumptions and in
        the domain, as ``name == reading``; it sharpens no bound."""
        self.readings.setdefault(name, (reading, why, site))

    def assume(self, text: str, dims: Iterable[Dim] = (), site: Site | None = None) -> None:
        """Record an assumption a conclusion rests on (e.g. ``N`` and ``M`` broadcast)."""
        self.table.note("assumption", text, dims, site)

    def learn_equal(self, a: Dim, b: Dim, site: Site | None = None) -> None:
        """Record that the model entails ``a == b`` (a declared name against an inferred extent)."""
        self.table.note("equality", f"{D.to_str(a)} == {D.to_str(b)}", (a, b), site)

    @property
    def assumptions(self) -> list[Assumption]:
        """Every bound on an expression that claims rest on, one per expression."""
        out = []
        for d in dict.fromkeys([*self.minimums, *self.ranges]):
            lo, hi = self.ranges.get(d, (None, None))
            least = self.minimums.get(d)
            if least is not None:
                lo = least if lo is None else max(lo, least)
            why, site = self._reasons.get((d, "min" if least is not None else "range"), ("", None))
            out.append(Assumption(d, lo, hi, why, site))
        for name, (reading, why, site) in self.readings.items():
            shown = f"{D.quote_name(name)} == {D.to_str(reading)}"
            out.append(Assumption(D.sub(D.symbol(name), reading), 0, 0, why, site, shown))
        return out

    def _learn_variable_minimum(self, d: Dim, value: int) -> None:
        """``d >= value`` for ``d`` monotone in one variable gives that variable a least value
        (``floor((h + 3)/4) >= 8`` gives ``h >= 29``), which bounds every monotone expression in
        it (``floor((h + 3)/32) >= 1``)."""
        if type(d) is not D.Expr or len(D.free_names(d)) != 1 or not is_monotone(d):
            return
        ((name, least),) = D.least_values(d).items()

        def at(v: int) -> int:  # d at name = v: an integer, d's one variable bound
            x = D.evaluate(d, {name: v})
            return x if type(x) is int else 0

        lo, hi = self.var_minimums.get(name, least), 1 << 40
        if at(lo) >= value or at(hi) < value:
            return
        while hi - lo > 1:  # the least v with d(v) >= value lies in (lo, hi]
            mid = (lo + hi) // 2
            if at(mid) >= value:
                hi = mid
            else:
                lo = mid
        self.var_minimums[name] = hi
