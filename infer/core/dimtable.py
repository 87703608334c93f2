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

from infer.core import dims as D
from infer.core.dimparse import read_name
from infer.core.dims import Dim


class Site:
    """A node in the model: graph path, position, name and operator. Immutable by convention
    (a plain class: one is made for every node that names a variable or records a fact, and a
    frozen dataclass costs four times as much to make)."""

    __slots__ = ("domain", "graph", "inputs", "key", "node_index", "node_name", "op_type")

    def __init__(
        self,
        graph: str,
        node_index: int | None = None,
        node_name: str = "",
        op_type: str = "",
        domain: str = "",
        inputs: tuple | None = None,
        key: tuple | None = None,
    ):
        self.graph = graph
        self.node_index = node_index
        self.node_name = node_name
        self.op_type = op_type
        self.domain = domain
        # The node's input types when it ran (``None`` for an absent input); formatted only when
        # an explanation quotes them, so the walk does not pay for strings nobody reads. Not part
        # of what a site is (equality and hash leave it out).
        self.inputs = inputs
        # The node as fresh variables made at it are keyed: its graph and itself by identity, not
        # by position (``Frame.ident``); the position where none is given.
        self.key = key if key is not None else (graph, node_index)

    def _key(self) -> tuple:
        return (self.graph, self.node_index, self.node_name, self.op_type, self.domain)

    def __eq__(self, other: object) -> bool:
        return type(other) is Site and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Site{self._key()!r}"

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


@dataclass
class DimTable:
    """Owns every dimension variable of one model."""

    reserved: frozenset[str] = frozenset()
    bindings: Mapping[str, int] = field(default_factory=dict)
    # The ``dim_param`` names the main graph's inputs declare: the sizes a caller chooses, the
    # only names a declared name is read as an expression over.
    inputs: frozenset[str] = frozenset()
    variables: dict[str, Variable] = field(default_factory=dict)
    facts: list[Fact] = field(default_factory=list)
    # Declared names read as the expressions they spell (``read_name``), each to its expression.
    readings: dict[str, Dim] = field(default_factory=dict)
    _by_key: dict[Hashable, D.Expr] = field(default_factory=dict)
    _by_definition: dict[Dim, str] = field(default_factory=dict)
    _counter: int = 0
    _fact_set: set[Fact] = field(default_factory=set)
    # An earlier run's fresh variables by key (``seed``), taken up when a node asks again.
    _seeds: dict[Hashable, D.Expr] = field(default_factory=dict)

    # -- variables ------------------------------------------------------------------------------

    def declared(self, name: str, where: str = "", value: str | None = None, positive: bool = True) -> Dim:
        """The dim a ``dim_param`` names; a bound name gives its integer.

        A name that is no identifier but spells a positive expression over the graph inputs'
        names (``past_sequence + sequence``, as exporters write on attention masks) stands for
        that expression (``dimparse.read_name`` says which; a graph input's is an assumption the
        walk lists, ``DimScope.assume_reading``); any other name is one variable, named by its
        exact text: positive when the model's inputs declare it (``positive``;
        docs/architecture.md), else from 0, like a fresh one (a name on an intermediate value or
        an output, such as a tool's ``unk__3``, may stand for an empty extent). The first
        declaration of a name decides.
        """
        if name in self.bindings:
            return self.bindings[name]
        var = self.variables.get(name)
        if var is not None:
            return var.symbol
        reading = self.reading_of(name, declare=True)
        if reading is not None:
            self.readings[name] = reading
            self.note("equality", f"'{name}' {where} stands for {D.to_str(reading)}".replace("  ", " "), (reading,))
            return reading
        origin = Origin("declared", f"declared as '{name}' {where}".rstrip(), value=value)
        var = Variable(name, D.symbol(name) if positive else D.fresh_symbol(name), origin)
        self.variables[name] = var
        return var.symbol

    def reading_of(self, name: str, declare: bool = False) -> Dim:
        """The expression the declared name ``name`` is read as, or ``None`` (it is one variable).
        Its parts are the graph inputs' names: declared on the way with ``declare``, else only
        those the table has."""
        if name in self.readings:
            return self.readings[name]
        if not self.inputs or name in self.variables:
            return None

        def part(p: str) -> Dim:
            if p not in self.inputs or not (declare or p in self.variables or p in self.readings or p in self.bindings):
                raise KeyError(p)
            return self.declared(p)

        reading = read_name(name, part)
        if reading is not None and name in self.inputs and D.sub(D.symbol(name), reading) is None:
            return None  # past the expression limit, no assumption could state it
        return reading

    def seed(self, earlier: DimTable) -> None:
        """Take up ``earlier``'s fresh variables (an earlier run of this model, or of a version of
        it before an edit): a node that asks for a variable under a key an earlier run used gets
        that run's variable, so its name stays what it was; new ones are numbered past them."""
        self._seeds = dict(earlier._by_key)
        self._counter = max(self._counter, earlier._counter)

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
        if key is not None:
            if key in self._by_key:
                return self._by_key[key]
            seeded = self._seeds.get(key)
            name = None if seeded is None else D.variable_name(seeded)
            if seeded is not None and name is not None and name not in self.reserved and name not in self.variables:
                self.variables[name] = Variable(name, seeded, origin)
                self._by_key[key] = seeded
                return seeded
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

    def rollback_facts(self, mark: int) -> None:
        """Forget the facts recorded since ``len(self.facts)`` was ``mark`` (a discarded walk)."""
        for fact in self.facts[mark:]:
            self._fact_set.discard(fact)
        del self.facts[mark:]

    def summary(self) -> dict[str, list[str]]:
        return {
            "variables": [str(v) for v in self],
            "facts": [str(f) for f in self.facts],
        }
