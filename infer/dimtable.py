"""The model-scoped table of dimension variables (Clause 6.5.2) and where each came from.

One variable per ``dim_param`` name across every graph of the model. Inference adds fresh
variables for extents it cannot determine (Clause 9.3), each with its origin: the node, output
and axis that made it and why. Facts learned on the way (``N`` and ``M`` broadcast, a declared
name equals an inferred expression) are kept beside the variables, so a report can say which
conclusions rest on them.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from . import dims as D
from .dimparse import is_identifier, names_in, parse_dim
from .dims import Dim


@dataclass(frozen=True, slots=True)
class Site:
    """A node in the model: graph path, position, name and operator."""

    graph: str
    node_index: int | None = None
    node_name: str = ""
    op_type: str = ""
    domain: str = ""
    # The node's input types when it ran (``None`` for an absent input); formatted only when an
    # explanation quotes them, so the walk does not pay for strings nobody reads.
    inputs: tuple | None = field(default=None, compare=False)

    def __str__(self) -> str:
        if self.node_index is None:
            return f"graph {self.graph}"
        name = f" `{self.node_name}`" if self.node_name else ""
        return f"{self.op_type}{name} (node {self.node_index} of {self.graph})"

    def describe(self) -> str:
        """The node with its input types, as explanations quote it."""
        if self.inputs is None:
            return str(self)
        types = ", ".join("-" if t is None else str(t) for t in self.inputs) or "none"
        return f"{self} with inputs {types}"


@dataclass(frozen=True, slots=True)
class Origin:
    """Why a variable exists."""

    kind: str  # "declared" | "fresh" | "defined"
    reason: str
    site: Site | None = None
    value: str | None = None
    axis: int | None = None
    causes: tuple[str, ...] = ()  # value names whose unknown contents or shapes led here


@dataclass(slots=True)
class Variable:
    name: str
    symbol: D.Expr  # the variable as a dim
    origin: Origin
    definition: Dim = None  # the expression a defined name stands for (strict output style)

    @property
    def is_fresh(self) -> bool:
        return self.origin.kind == "fresh"

    def __str__(self) -> str:
        if self.definition is not None:
            return f"{self.name} = {D.to_str(self.definition)}"
        return f"{self.name}: {self.origin.reason}"


@dataclass(frozen=True, slots=True)
class Fact:
    """Something inference relied on or learned: an assumption, an equality, a binding."""

    kind: str  # "assumption" | "equality" | "binding"
    text: str
    names: tuple[str, ...] = ()
    site: Site | None = None

    def __str__(self) -> str:
        where = f" at {self.site}" if self.site else ""
        return f"{self.kind}: {self.text}{where}"


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

    def holds(self, bindings: Mapping[str, int]) -> bool | None:
        """Whether the condition holds at ``bindings``; ``None`` while a variable is unbound."""
        value = D.evaluate(self.expr, bindings)
        if not isinstance(value, int):
            return None
        return (self.lower is None or value >= self.lower) and (self.upper is None or value <= self.upper)

    def __str__(self) -> str:
        e = D.to_str(self.expr)
        if self.lower is not None and self.lower == self.upper:
            text = f"{e} == {self.lower}"
        elif self.lower is not None and self.upper is not None:
            text = f"{self.lower} <= {e} <= {self.upper}"
        elif self.lower is not None:
            text = f"{e} >= {self.lower}"
        else:
            text = f"{e} <= {self.upper}"
        return text + (f" ({self.why})" if self.why else "")


@dataclass
class DimTable:
    """Owns every dimension variable of one model."""

    reserved: frozenset[str] = frozenset()
    bindings: Mapping[str, int] = field(default_factory=dict)
    variables: dict[str, Variable] = field(default_factory=dict)
    facts: list[Fact] = field(default_factory=list)
    _by_key: dict[Hashable, D.Expr] = field(default_factory=dict)
    _by_definition: dict[Dim, str] = field(default_factory=dict)
    _counter: int = 0
    _fact_set: set[Fact] = field(default_factory=set)
    minimums: dict[Dim, int] = field(default_factory=dict)  # extents a valid run needs this large
    ranges: dict[Dim, tuple[int | None, int | None]] = field(default_factory=dict)  # assumed, not required
    var_minimums: dict[str, int] = field(default_factory=dict)  # least values the minimums imply
    # (a, b) where a valid run has b dividing a (a Reshape's element count by its other extents)
    divisible: dict[tuple[Dim, Dim], None] = field(default_factory=dict)
    # What each minimum or maximum rests on, for ``assumptions`` (the first reason given wins).
    _bound_reasons: dict[tuple[Dim, str], tuple[str, Site | None]] = field(default_factory=dict)
    # Bumped whenever ``minimums`` changes: rule results computed under other minimums (which
    # sharpen lower bounds) must not be reused (the engine's memo keys on it).
    minimums_epoch: int = 0
    # Calls of ``fresh``, found or made: a rule that names a variable after its node must never
    # have its result reused for another node (the engine's memo checks this count).
    fresh_calls: int = 0

    # -- variables ------------------------------------------------------------------------------

    def declared(self, name: str, where: str = "", value: str | None = None, positive: bool = True) -> Dim:
        """The dim a ``dim_param`` names; a bound name gives its integer.

        A name that is no identifier but spells an expression over the model's other declared
        names (``past_sequence + sequence``, as exporters write on attention masks) stands for
        that expression; any other name is one variable: positive when the model's inputs declare
        it (``positive``; docs/architecture.md), else from 0, like a fresh one (a name on an
        intermediate value or an output, such as a tool's ``unk__3``, may stand for an empty
        extent). The first declaration of a name decides.
        """
        if name in self.bindings:
            return self.bindings[name]
        var = self.variables.get(name)
        if var is not None:
            return var.symbol
        spelled = self._spelled(name)
        if spelled is not None:
            self.note("equality", f"'{name}' {where} stands for {D.to_str(spelled)}".replace("  ", " "), (spelled,))
            return spelled
        origin = Origin("declared", f"declared as '{name}' {where}".rstrip(), value=value)
        var = Variable(name, D.symbol(name) if positive else D.fresh_symbol(name), origin)
        self.variables[name] = var
        return var.symbol

    def _spelled(self, name: str) -> Dim:
        """The expression a non-identifier ``name`` spells over the model's other declared names
        (identifiers, or names in backquotes as ``to_str`` writes them)."""
        if is_identifier(name) or not self.reserved:
            return None
        parts = names_in(name)
        if not parts or name in parts or not all(p in self.reserved for p in parts):
            return None
        try:
            d = parse_dim(name, lambda part: self.declared(part))
        except (ValueError, TypeError, ZeroDivisionError):
            return None
        return None if d is None or (isinstance(d, int) and d < 0) else d

    def _new_name(self, prefix: str) -> str:
        while True:
            name = f"{prefix}__{self._counter}"
            self._counter += 1
            if name not in self.reserved and name not in self.variables:
                return name

    def fresh(self, origin: Origin, key: Hashable | None = None, prefix: str = "unk") -> D.Expr:
        """A new variable for an extent inference cannot determine (Clause 9.3).

        The same ``key`` gives the same variable, so re-inferring a subgraph is stable.
        """
        self.fresh_calls += 1
        if key is not None and key in self._by_key:
            return self._by_key[key]
        name = self._new_name(prefix)
        var = Variable(name, D.fresh_symbol(name), origin)
        self.variables[name] = var
        if key is not None:
            self._by_key[key] = var.symbol
        return var.symbol

    def name_for(self, expr: Dim) -> str:
        """An identifier standing for ``expr`` (the strict output style), defined once."""
        name = D.variable_name(expr)
        if name is not None:
            return name
        name = self._by_definition.get(expr)
        if name is None:
            name = self._new_name("dim")
            origin = Origin("defined", f"stands for {D.to_str(expr)}")
            self.variables[name] = Variable(name, D.fresh_symbol(name), origin, definition=expr)
            self._by_definition[expr] = name
        return name

    def get(self, name: str) -> Variable | None:
        return self.variables.get(name)

    def __iter__(self) -> Iterator[Variable]:
        return iter(self.variables.values())

    def __len__(self) -> int:
        return len(self.variables)

    def __contains__(self, name: object) -> bool:
        return name in self.variables

    def is_fresh(self, d: Dim) -> bool:
        """True when ``d`` mentions a fresh variable (an extent inference could not determine)."""
        return any((v := self.variables.get(n)) is not None and v.is_fresh for n in D.free_names(d))

    def declared_names(self) -> list[str]:
        return [v.name for v in self if v.origin.kind == "declared"]

    # -- facts ----------------------------------------------------------------------------------

    def note(self, kind: str, text: str, dims: Iterable[Dim] = (), site: Site | None = None) -> None:
        names = tuple(sorted({n for d in dims for n in D.free_names(d)}))
        fact = Fact(kind, text, names, site)
        if fact not in self._fact_set:
            self._fact_set.add(fact)
            self.facts.append(fact)

    def require_at_least(self, d: Dim, value: int, site: Site | None = None, why: str = "") -> None:
        """Record that a model which runs has ``d >= value`` (a Conv needs its kernel to fit).

        Like the broadcasting assumption this rests on the model being valid, and is listed
        with the facts; ``lower_bound`` uses it (an integer Div of ``d - value`` floors).
        """
        if d is None or isinstance(d, int):
            return
        if value <= (D.lower_bound(d) or 0):
            return
        self.minimums[d] = max(value, self.minimums.get(d, value))
        self._learn_variable_minimum(d, value)
        self.minimums_epoch += 1
        self._bound_reasons.setdefault((d, "min"), (why, site))
        self.note("assumption", f"{D.to_str(d)} >= {value}" + (f" ({why})" if why else ""), (d,), site)

    def require_multiple(self, d: Dim, k: Dim, site: Site | None = None, why: str = "") -> None:
        """Record that a model which runs has ``d`` a multiple of ``k`` (Reshape divides its
        element count exactly): listed as the assumption ``mod(d, k) == 0``, and used by
        ``exact`` (``k*floor(d/k)`` is ``d``)."""
        parts = D.quotient_parts(d, k)
        remainder = D.mod(d, k)
        if parts is None or remainder is None or isinstance(remainder, int) or parts in self.divisible:
            return
        self.divisible[parts] = None
        self.minimums_epoch += 1  # rule results computed without it must not be reused
        self.assume_range(remainder, 0, 0, site, why)

    def exact(self, d: Dim) -> Dim:
        """``d`` with the quotients the model's validity makes exact (``require_multiple``)."""
        return D.exact_quotients(d, self.divisible) if self.divisible else d

    def assume_range(self, d: Dim, lower: int | None, upper: int | None, site: Site | None = None,
                     why: str = "") -> None:  # fmt: skip
        """Record that claims assume ``lower <= d <= upper`` (an integer carried through float32
        stays exactly representable). Listed with the assumptions; unlike ``require_at_least``
        it sharpens no bound: nothing about the model's validity follows from it."""
        if d is None or isinstance(d, int) or (lower is None and upper is None):
            return
        lo, hi = self.ranges.get(d, (None, None))
        new_lo = lower if lo is None else lo if lower is None else max(lo, lower)
        new_hi = upper if hi is None else hi if upper is None else min(hi, upper)
        if (new_lo, new_hi) == (lo, hi):
            return
        self.ranges[d] = (new_lo, new_hi)
        self._bound_reasons.setdefault((d, "range"), (why, site))
        self.note("assumption", str(Assumption(d, new_lo, new_hi, why)), (d,), site)

    @property
    def assumptions(self) -> list[Assumption]:
        """Every bound on an expression that claims rest on, one per expression."""
        out = []
        for d in dict.fromkeys([*self.minimums, *self.ranges]):
            lo, hi = self.ranges.get(d, (None, None))
            least = self.minimums.get(d)
            if least is not None:
                lo = least if lo is None else max(lo, least)
            why, site = self._bound_reasons.get((d, "min" if least is not None else "range"), ("", None))
            out.append(Assumption(d, lo, hi, why, site))
        return out

    def _learn_variable_minimum(self, d: Dim, value: int) -> None:
        """``d >= value`` for ``d`` monotone in one variable gives that variable a least value
        (``floor((h + 3)/4) >= 8`` gives ``h >= 29``), which bounds every monotone expression in
        it (``floor((h + 3)/32) >= 1``)."""
        if d is None or isinstance(d, int) or len(D.free_names(d)) != 1 or not D.is_monotone(d):
            return
        (name,) = D.free_names(d)
        lo, hi = self.var_minimums.get(name, self._least(name)), 1 << 40
        if (D.evaluate(d, {name: lo}) or 0) >= value or (D.evaluate(d, {name: hi}) or 0) < value:
            return
        while hi - lo > 1:  # the least v with d(v) >= value lies in (lo, hi]
            mid = (lo + hi) // 2
            if (D.evaluate(d, {name: mid}) or 0) >= value:
                hi = mid
            else:
                lo = mid
        self.var_minimums[name] = hi

    def _least(self, name: str) -> int:
        """The least value variable ``name`` takes by its kind: 1 declared, 0 fresh or unknown."""
        var = self.variables.get(name)
        return 1 if var is not None and D.lower_bound(var.symbol) == 1 else 0

    def lower_bound(self, d: Dim) -> int | None:
        """``dims.lower_bound`` sharpened by what the model's validity requires: the one lower
        bound rules use (``ctx.dims.lower_bound``)."""
        if d is None or isinstance(d, int):
            return d
        best = D.lower_bound(d)
        if not self.minimums:
            return best
        candidates = [best, self.minimums.get(d)]
        const = D.constant_of(d)
        if const:
            rest = D.sub(d, const)
            if rest in self.minimums:
                candidates.append(self.minimums[rest] + const)
        names = D.free_names(d)
        if self.var_minimums and any(n in self.var_minimums for n in names) and D.is_monotone(d):
            env = {n: self.var_minimums.get(n, self._least(n)) for n in names}
            least = D.evaluate(d, env)
            candidates.append(least if isinstance(least, int) else None)
        known = [c for c in candidates if c is not None]
        return max(known) if known else None

    def bounds(self, d: Dim) -> tuple[int | None, int | None]:
        """(lower, upper) bounds of ``d``, sharpened like ``lower_bound``; ``None`` where unknown."""
        if d is None or isinstance(d, int):
            return d, d
        negated = D.neg(d)  # None when past the expression limit
        least_negated = self.lower_bound(negated) if negated is not None else None
        return self.lower_bound(d), None if least_negated is None else -least_negated

    def rollback_facts(self, mark: int) -> None:
        """Forget the facts recorded since ``len(self.facts)`` was ``mark`` (a discarded walk)."""
        for fact in self.facts[mark:]:
            self._fact_set.discard(fact)
        del self.facts[mark:]

    def assume(self, text: str, dims: Iterable[Dim] = (), site: Site | None = None) -> None:
        """Record an assumption a conclusion rests on (e.g. ``N`` and ``M`` broadcast)."""
        self.note("assumption", text, dims, site)

    def learn_equal(self, a: Dim, b: Dim, site: Site | None = None) -> None:
        """Record that the model entails ``a == b`` (a declared name against an inferred extent)."""
        self.note("equality", f"{D.to_str(a)} == {D.to_str(b)}", (a, b), site)

    def summary(self) -> dict[str, list[str]]:
        return {
            "variables": [str(v) for v in self],
            "facts": [str(f) for f in self.facts],
        }
