"""The input domain of a model: which sizes of its graph inputs it accepts.

Rules record what a model that runs requires of its extents (``ctx.require_at_least``, a window
that fits; ``ctx.require_multiple``, a Reshape that divides its element count; a broadcast, an
equality, an index within its axis; a node the runtime refuses). ``domain_of`` reads those of
one run, keeps the ones over the graph inputs' dimension variables, and simplifies them per
variable, so a person reads a few lines: ``height >= 4``, ``height mod 32 == 0``,
``batch == beams or beams == 1``. A requirement it cannot state over the inputs (it depends on
a fresh variable: the contents of a tensor, a data-dependent extent) is listed as not expressed,
never dropped; one made inside a subgraph is *conditional* (it holds where that branch or body
runs), listed, and not used to tell a binding inside from outside.

``Domain.contains`` tells whether a binding is inside, ``Domain.smallest`` and ``Domain.near``
draw valid bindings (``verify``, a benchmark, a min/opt/max profile).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from infer.core import dims as D
from infer.core.dims import Dim
from infer.core.dims.bounds import is_monotone
from infer.core.dimtable import Site
from infer.core.scopes import GraphPath

if TYPE_CHECKING:
    from infer.core.dimscope import DimScope

SEARCH_LIMIT = 1 << 20  # the largest extent the samplers try (and the step search's reach)
TRIES = 4096  # bindings the search for a valid one visits at most


@dataclass(frozen=True)
class Demand:
    """A node that makes a requirement, and why."""

    site: Site | None
    why: str

    def __str__(self) -> str:
        where = str(self.site) if self.site is not None else "the model"
        return f"{where}: {self.why}" if self.why else where


@dataclass(frozen=True)
class Constraint:
    """One requirement over the input variables.

    ``kind``: ``range`` (``lower <= exprs[0] <= upper``), ``multiple`` (``exprs[1]`` divides
    ``exprs[0]``), ``equal`` (``exprs[0] == exprs[1]``), ``broadcast`` (every extent of
    ``exprs`` is 1 or equal to the others that are not 1), ``runtime`` (a node onnxruntime
    refuses wherever it runs: ``text`` says which). ``runtime_only``: the definition allows what
    onnxruntime refuses. ``conditional``: made inside a subgraph, so it binds only where that
    graph runs.
    """

    kind: str
    exprs: tuple[Dim, ...] = ()
    lower: int | None = None
    upper: int | None = None
    text: str = ""
    demands: tuple[Demand, ...] = field(default=(), compare=False)
    conditional: bool = False
    runtime_only: bool = False
    shown: str = field(default="", compare=False)  # an equivalent form easier to read, where one is
    # What every value of the inputs needs, where some values run outside it too (an index
    # computed from the inputs' contents that reaches its bound only for some of them).
    every_value: bool = False
    # Not a requirement of the model but one of inference: a graph input's name read as the
    # expression it spells (``past_sequence + sequence``); outside it the model may run, and the
    # claims resting on the reading do not hold.
    assumed: bool = False

    @property
    def variables(self) -> frozenset[str]:
        return frozenset().union(*(D.free_names(e) for e in self.exprs if e is not None and type(e) is not int))

    def holds(self, bindings: Mapping[str, int]) -> bool | None:
        """Whether the requirement holds at ``bindings`` (``None`` while a variable is unbound;
        a ``runtime`` one never holds)."""
        if self.kind == "runtime":
            return False
        vals: list[int] = []
        for e in self.exprs:
            v = D.evaluate(e, bindings)
            if type(v) is not int:
                return None
            vals.append(v)
        if self.kind == "range":
            (v,) = vals
            return (self.lower is None or v >= self.lower) and (self.upper is None or v <= self.upper)
        if self.kind == "multiple":
            return vals[1] != 0 and vals[0] % vals[1] == 0
        if self.kind == "equal":
            return vals[0] == vals[1]
        return len({v for v in vals if v != 1}) <= 1  # broadcast

    def __str__(self) -> str:
        e = [D.to_str(x) for x in self.exprs]
        if self.shown:
            out = self.shown
        elif self.kind == "range":
            if self.lower is not None and self.lower == self.upper:
                out = f"{e[0]} == {self.lower}"
            elif self.lower is not None and self.upper is not None:
                out = f"{self.lower} <= {e[0]} <= {self.upper}"
            else:
                out = f"{e[0]} >= {self.lower}" if self.lower is not None else f"{e[0]} <= {self.upper}"
        elif self.kind == "multiple":
            out = f"{e[0]} mod {e[1]} == 0" if len(e[1]) < 4 or "(" not in e[1] else f"mod({e[0]}, {e[1]}) == 0"
        elif self.kind == "equal":
            out = f"{e[0]} == {e[1]}"
        elif self.kind == "broadcast":
            out = _broadcast_text(self.exprs)
        else:
            out = self.text
        marks = [
            m
            for m, on in (
                ("onnxruntime's", self.runtime_only),
                ("conditional", self.conditional),
                ("for every input value", self.every_value),
            )
            if on
        ]
        marks += ["assumed"] if self.assumed else []
        return out + (f"  [{', '.join(marks)}]" if marks else "")

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "text": str(self).split("  [")[0],
            "variables": sorted(self.variables),
            "conditional": self.conditional,
            "runtime_only": self.runtime_only,
            "every_value": self.every_value,
            "assumed": self.assumed,
            "demanded_by": [str(d) for d in self.demands],
        }


def _broadcast_text(ds: Sequence[Dim]) -> str:
    ints = [d for d in ds if type(d) is int]
    syms = [D.to_str(d) for d in ds if type(d) is not int]
    if ints:
        k = ints[0]
        return " and ".join(f"({s} == {k} or {s} == 1)" for s in syms)
    if len(syms) == 2:
        return f"{syms[0]} == {syms[1]} or {syms[0]} == 1 or {syms[1]} == 1"
    return f"{', '.join(syms)} broadcast (each 1 or equal to the others)"


@dataclass(frozen=True)
class NotExpressed:
    """A requirement that cannot be stated over the input variables, and why."""

    text: str
    reason: str
    demands: tuple[Demand, ...] = ()

    def __str__(self) -> str:
        return f"not expressed: {self.text} ({self.reason})"

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "reason": self.reason, "demanded_by": [str(d) for d in self.demands]}


@dataclass(frozen=True)
class Domain:
    """What a model requires of its input variables (``result.domain``)."""

    variables: tuple[str, ...]
    constraints: tuple[Constraint, ...]
    not_expressed: tuple[NotExpressed, ...] = ()

    @property
    def binding(self) -> tuple[Constraint, ...]:
        """The constraints that tell a binding inside from outside (not conditional)."""
        return tuple(c for c in self.constraints if not c.conditional)

    @property
    def runnable(self) -> bool:
        """False when onnxruntime refuses a node of the main graph at every binding."""
        return not any(c.kind == "runtime" for c in self.binding)

    def violated(self, bindings: Mapping[str, int]) -> list[Constraint]:
        """The constraints ``bindings`` break (an unbound variable breaks none)."""
        return [c for c in self.binding if c.holds(bindings) is False]

    def contains(self, bindings: Mapping[str, int]) -> bool | None:
        """Inside (True), outside (False), or ``None`` while a constrained variable is unbound."""
        if self.violated(bindings):
            return False
        return True if all(c.holds(bindings) for c in self.binding) else None

    def smallest(self, fixed: Mapping[str, int] | None = None) -> dict[str, int] | None:
        """The smallest valid binding (each variable as small as the others allow), or ``None``."""
        return self.near({v: 1 for v in self.variables}, fixed)

    def near(self, sizes: Mapping[str, int], fixed: Mapping[str, int] | None = None) -> dict[str, int] | None:
        """A valid binding near ``sizes`` (a variable not given starts at 1); ``fixed`` values
        are kept as they are. ``None`` when none is found within the search's reach."""
        fixed = dict(fixed or {})
        want = {v: fixed.get(v, max(1, int(sizes.get(v, 1)))) for v in self.variables}
        if not self.runnable:
            return None
        return _search(self.binding, self.variables, want, fixed)

    def outside(self, c: Constraint, sizes: Mapping[str, int] | None = None) -> dict[str, int] | None:
        """A binding that breaks ``c`` and keeps every other constraint, near ``sizes``: how a
        requirement is checked against the runtime. ``None`` when none is found."""
        want = {v: max(1, int((sizes or {}).get(v, 1))) for v in self.variables}
        others = [o for o in self.binding if o is not c and o.kind != "runtime"]
        return _search([*others, _Broken(c)], self.variables, want, {})

    def __str__(self) -> str:
        if not self.constraints and not self.not_expressed:
            return "every binding of the inputs' dimension variables (no requirement found)"
        return "\n".join([*map(str, self.constraints), *map(str, self.not_expressed)])

    def to_json(self) -> dict[str, Any]:
        return {
            "variables": list(self.variables),
            "constraints": [c.to_json() for c in self.constraints],
            "not_expressed": [n.to_json() for n in self.not_expressed],
        }


# -- reading a run's requirements ----------------------------------------------------------------


def domain_of(scope: DimScope, variables: Iterable[str]) -> Domain:
    """The domain of a run whose graph inputs have the dimension variables ``variables``."""
    names = tuple(dict.fromkeys(variables))
    inputs = frozenset(names)
    found: list[Constraint] = []
    missing: list[NotExpressed] = []
    for key, seen in scope.requirements.items():
        demands = tuple(Demand(site, why) for why, site in seen)
        conditional = bool(demands) and all(d.site is not None and _in_subgraph(d.site.graph) for d in demands)
        if key[0] == "unexpressed":
            missing.append(NotExpressed(key[1], key[2], demands))
            continue
        c = _constraint(key, demands, conditional)
        if c is None:
            continue
        outside = c.variables - inputs
        if outside:
            missing.append(NotExpressed(str(c), _why_not(scope, sorted(outside)), demands))
        else:
            found.append(c)
    symbols = {n: var.symbol for n in names if (var := scope.table.get(n)) is not None}
    constraints = [*simplify(found, names, symbols), *_readings(scope, inputs)]
    return Domain(names, tuple(constraints), tuple(_dedupe(missing)))


def _readings(scope: DimScope, inputs: frozenset[str]) -> list[Constraint]:
    """The graph inputs' names read as expressions, each an equality inference assumes
    (``DimScope.assume_reading``), kept apart from what simplifying may merge."""
    out = []
    for name, (reading, why, site) in scope.readings.items():
        shown = f"{D.quote_name(name)} == {D.to_str(reading)}"
        c = Constraint("equal", (D.symbol(name), reading), demands=(Demand(site, why),), assumed=True, shown=shown)
        if c.variables <= inputs:
            out.append(c)
    return out


def _in_subgraph(graph: str) -> bool:
    """Is a node of ``graph`` one that may not run (inside a branch or a loop body)? A function
    body called from the main graph runs whenever its call does."""
    return any(not step.call for step in GraphPath(graph).steps())


def _constraint(key: tuple, demands: tuple[Demand, ...], conditional: bool) -> Constraint | None:
    kind = key[0]
    if kind in ("broadcast", "equal") and len(key[1:] if kind == "equal" else key[1]) == 2:
        a, b = key[1:] if kind == "equal" else key[1]
        if (cap := _capped(a, b) or _capped(b, a)) is not None:
            # ``x`` against ``min(x, c)`` (a slice of a table of c rows): equal exactly when
            # x <= c; 1 against the other (broadcast) changes nothing for c >= 1
            if cap[1] >= 1:
                return Constraint("range", (cap[0],), upper=cap[1], demands=demands, conditional=conditional)
    if kind in ("at_least", "runtime_at_least"):
        return Constraint(
            "range",
            (key[1],),
            lower=key[2],
            demands=demands,
            conditional=conditional,
            runtime_only=kind == "runtime_at_least",
        )
    if kind in ("at_most", "at_most_every_value"):
        return Constraint(
            "range", (key[1],), upper=key[2], demands=demands, conditional=conditional, every_value=kind != "at_most"
        )
    if kind == "multiple":
        return Constraint("multiple", (key[1], key[2]), demands=demands, conditional=conditional)
    if kind == "equal":
        return Constraint("equal", (key[1], key[2]), demands=demands, conditional=conditional)
    if kind == "broadcast":
        return Constraint("broadcast", tuple(key[1]), demands=demands, conditional=conditional)
    if kind == "runtime":
        return Constraint("runtime", text=key[1], demands=demands, conditional=conditional, runtime_only=True)
    return None


def _capped(x: Dim, m: Dim) -> tuple[Dim, int] | None:
    """``(x, c)`` when ``m`` is ``min(x, c)`` with an integer ``c``."""
    args = D.extremum_args(m, "min")
    if args is None or len(args) != 2 or type(args[1]) is not int or args[0] != x:
        return None
    return x, args[1]


def _why_not(scope: DimScope, names: list[str]) -> str:
    parts = []
    for n in names[:3]:
        var = scope.table.get(n)
        if var is None:
            parts.append(f"{n} is no variable of the inputs")
        elif var.is_fresh:
            parts.append(f"{n} is not an input size: {var.origin.reason}")
        else:
            parts.append(f"{n} is declared on a value that is not a graph input")
    return "; ".join(parts) + (f"; and {len(names) - 3} more" if len(names) > 3 else "")


def _dedupe(items: Iterable[NotExpressed]) -> list[NotExpressed]:
    return list({n.text: n for n in items}.values())


# -- simplifying ---------------------------------------------------------------------------------


def simplify(found: Sequence[Constraint], variables: Sequence[str], symbols: Mapping[str, Dim]) -> list[Constraint]:
    """Per variable one lower and one upper bound and one modulus; the rest as found, without
    what those imply. Conditional ones are kept apart (they bind only where they run)."""
    out: list[Constraint] = []
    for conditional, every, runtime in itertools.product((False, True), repeat=3):
        group = [c for c in found if (c.conditional, c.every_value, c.runtime_only) == (conditional, every, runtime)]
        for c in _simplified(group, variables, symbols, conditional):
            out.append(replace(c, every_value=c.every_value or every, runtime_only=c.runtime_only or runtime))
    return out


def _simplified(
    group: Sequence[Constraint], variables: Sequence[str], symbols: Mapping[str, Dim], conditional: bool
) -> list[Constraint]:
    low: dict[str, tuple[int, list[Demand]]] = {}
    high: dict[str, tuple[int, list[Demand]]] = {}
    modulus: dict[str, tuple[int, list[Demand]]] = {}
    rest: list[Constraint] = []
    for c in group:
        plain = _per_variable(c)
        if plain is None:
            rest.append(c)
            continue
        name, lo, hi, k = plain
        for table, val, pick in ((low, lo, max), (high, hi, min), (modulus, k, math.lcm)):
            if val is not None:
                old, ds = table.get(name, (val, []))
                table[name] = (pick(old, val), [*ds, *c.demands][:8])
    out: list[Constraint] = []
    order = {v: i for i, v in enumerate(variables)}
    for name in sorted({*low, *high, *modulus}, key=lambda n: order.get(n, len(order))):
        v = symbols.get(name) or D.symbol(name)
        lo, hi = low.get(name, (None, []))[0], high.get(name, (None, []))[0]
        if lo is not None and lo <= D.least_values(v).get(name, 0):
            lo = None  # what the variable's kind says already (a declared input size is >= 1)
        if lo is not None or hi is not None:
            ds = [*low.get(name, (0, []))[1], *high.get(name, (0, []))[1]]
            out.append(Constraint("range", (v,), lo, hi, demands=tuple(ds), conditional=conditional))
        if name in modulus and modulus[name][0] > 1:
            out.append(
                Constraint("multiple", (v, modulus[name][0]), demands=tuple(modulus[name][1]), conditional=conditional)
            )
    least = {name: lo for name, (lo, _) in low.items()}
    rest = [r for c in rest if (r := _readable(c, least) if c.kind == "multiple" else c) is not None]
    rest = [s for c in rest for s in (_per_variable_equalities(c, least, symbols, order) if c.kind == "equal" else [c])]
    seen = {str(c) for c in out}
    for c in rest:
        if str(c) not in seen:
            seen.add(str(c))
            out.append(c)
    return out


def _readable(c: Constraint, least: Mapping[str, int]) -> Constraint | None:
    """``mod(d, c*p) == 0`` shown as ``mod(d/p, c) == 0`` where the polynomial ``p`` divides
    ``d`` and is at least 1 wherever the variables' own bounds hold (a Reshape's element count
    over its other extents: ``8*N*h*w`` over ``32*w`` is ``N*h`` over 4)."""
    d, k = c.exprs
    if type(k) is int or type(d) is int:
        return c
    g = D.content(k)
    p = D.divide_exact(k, g)
    q = D.exact_quotient(d, p)
    if q is None or not is_monotone(p):
        return c
    floor_of_p = D.evaluate(p, {n: least.get(n, lo) for n, lo in D.least_values(p).items()})
    if type(floor_of_p) is not int or floor_of_p < 1:
        return c
    common = math.gcd(D.content(q), g) if type(q) is not int else math.gcd(q, g)
    q, g = (D.divide_exact(q, common), g // common)
    if g == 1:
        return None  # holds wherever the variables' bounds do
    shown = f"mod({D.to_str(q)}, {g}) == 0"
    return Constraint(c.kind, c.exprs, demands=c.demands, conditional=c.conditional, shown=shown)


def _per_variable_equalities(
    c: Constraint, least: Mapping[str, int], symbols: Mapping[str, Dim], order: Mapping[str, int]
) -> list[Constraint]:
    """``a == b`` for two single terms whose factors each mention one variable, as one equality
    per variable, where that is exact: with ``a = prod(p_v)`` and ``b = prod(q_v)`` over the
    variables (coefficients shared out), ``p_v >= q_v >= 1`` for each ``v`` wherever its bounds
    hold makes the products equal exactly when every part is. A traced window partition
    (Swin's ``256*b*floor((h + 12)/16)*floor((w + 12)/16) == 16*b*floor(h/4)*floor(w/4)``) is
    ``4*floor((h + 12)/16) == floor(h/4)`` and the same in ``w``: what a sampler can meet one
    variable at a time. ``[c]`` where it is not such."""
    split_a, split_b = D.parts_by_variable(c.exprs[0]), D.parts_by_variable(c.exprs[1])
    if split_a is None or split_b is None or len(c.variables) < 2:
        return [c]
    (ca, pa), (cb, pb) = split_a, split_b
    if ca <= 0 or cb <= 0:
        return [c]
    ratios = {}
    for v in sorted(c.variables, key=lambda n: (order.get(n, len(order)), n)):
        p, q = pa.get(v, 1), pb.get(v, 1)
        ratio = _growth(p, q, v)
        if ratio is None or not (is_monotone(p) and is_monotone(q)):
            return [c]
        ratios[v] = (ratio, p, q)
    # With ca == cb*prod(num_v/den_v), a == b is prod(num_v*p_v) == prod(den_v*q_v).
    if cb * math.prod(r for r, *_ in ratios.values()) != ca:
        return [c]
    out = []
    for v, (ratio, p, q) in ratios.items():
        left, right = D.mul(p, ratio.numerator), D.mul(q, ratio.denominator)
        lo = least.get(v, D.least_values(symbols.get(v) or D.symbol(v)).get(v, 0))
        if D.less(left, right) is not False or _at(right, v, lo) < 1:  # left >= right >= 1, provably
            return [c]
        if left != right:
            out.append(Constraint("equal", (left, right), demands=c.demands, conditional=c.conditional))
    return out


def _growth(p: Dim, q: Dim, name: str) -> Fraction | None:
    """``q/p`` far out in the variable ``name`` (a small fraction), the factor that makes the two
    parts meet; ``None`` where either vanishes there."""
    at_p, at_q = _at(p, name, SEARCH_LIMIT), _at(q, name, SEARCH_LIMIT)
    if at_p <= 0 or at_q <= 0:
        return None
    return Fraction(at_q, at_p).limit_denominator(64)


def _per_variable(c: Constraint) -> tuple[str, int | None, int | None, int | None] | None:
    """A constraint on one variable alone as ``(name, least, most, modulus)``: a bound on an
    expression monotone in it becomes a bound on the variable, ``v mod k == 0`` a modulus;
    ``None`` for anything else."""
    if c.kind == "multiple":
        name = D.variable_name(c.exprs[0])
        k = c.exprs[1]
        if name is not None and type(k) is int and k > 0:
            return name, None, None, k
        return None
    if c.kind != "range" or len(c.variables) != 1 or not is_monotone(c.exprs[0]):
        return None
    (name,) = c.variables
    e = c.exprs[0]
    lo = _least_with(e, name, c.lower) if c.lower is not None else None
    hi = _most_with(e, name, c.upper) if c.upper is not None else None
    if (c.lower is not None and lo is None) or (c.upper is not None and hi is None):
        return None
    return name, lo, hi, None


def _least_with(e: Dim, name: str, value: int) -> int | None:
    """The least ``v`` with ``e(v) >= value`` (``e`` non-decreasing in ``v``)."""
    lo, hi = 0, SEARCH_LIMIT
    if _at(e, name, hi) < value:
        return None
    while hi - lo > 1:  # e(lo) may be < value, e(hi) >= value
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if _at(e, name, mid) >= value else (mid, hi)
    return 0 if _at(e, name, 0) >= value else hi


def _most_with(e: Dim, name: str, value: int) -> int | None:
    """The largest ``v`` with ``e(v) <= value`` (``e`` non-decreasing in ``v``); ``None`` when
    even 0 is too large or the search's reach is not."""
    if _at(e, name, 0) > value or _at(e, name, SEARCH_LIMIT) <= value:
        return None
    lo, hi = 0, SEARCH_LIMIT  # e(lo) <= value < e(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if _at(e, name, mid) <= value else (lo, mid)
    return lo


def _at(e: Dim, name: str, v: int) -> int:
    out = D.evaluate(e, {name: v})
    return out if type(out) is int else 0


# -- drawing valid bindings ----------------------------------------------------------------------


class _Broken:
    """A constraint turned around: it holds where ``c`` does not."""

    kind = "broken"
    exprs: tuple[Dim, ...] = ()

    def __init__(self, c: Constraint):
        self.c = c
        self.variables = c.variables

    def holds(self, bindings: Mapping[str, int]) -> bool | None:
        h = self.c.holds(bindings)
        return None if h is None else not h


def _search(
    cs: Sequence[Constraint | _Broken], variables: Sequence[str], want: Mapping[str, int], fixed: Mapping[str, int]
) -> dict[str, int] | None:
    """A binding satisfying ``cs``, each variable as near ``want`` as a bounded depth-first
    search over the candidates of each finds (the variables most constrained first)."""
    order = sorted(variables, key=lambda v: -sum(v in c.variables for c in cs))
    checks = {v: [c for c in cs if v in c.variables and c.variables <= set(order[: order.index(v) + 1])] for v in order}
    budget = [TRIES]
    out: dict[str, int] = {}

    def place(i: int) -> bool:
        if i == len(order):
            return True
        v = order[i]
        for x in _candidates(v, want[v], fixed, out, cs):
            budget[0] -= 1
            if budget[0] < 0:
                return False
            out[v] = x
            if all(c.holds(out) is not False for c in checks[v]) and place(i + 1):
                return True
        out.pop(v, None)
        return False

    return {v: out[v] for v in variables} if place(0) else None


def _candidates(
    v: str, want: int, fixed: Mapping[str, int], placed: Mapping[str, int], cs: Sequence[Constraint | _Broken]
) -> Iterator[int]:
    """Values to try for ``v``: as fixed; else ``want``, the values already placed that a
    constraint relates it to (equal, broadcast), then the values its own bounds and modulus
    allow, outward from ``want`` (up first), and 1, each once."""
    if v in fixed:
        yield fixed[v]
        return
    lo, hi, k = 1, SEARCH_LIMIT, 1
    for c in cs:
        if type(c) is Constraint and c.exprs and D.variable_name(c.exprs[0]) == v:  # (a _Broken has none)
            if c.kind == "range":
                lo = max(lo, c.lower if c.lower is not None else lo)
                hi = min(hi, c.upper if c.upper is not None else hi)
            elif c.kind == "multiple" and type(c.exprs[1]) is int:
                k = math.lcm(k, c.exprs[1])
    seen: set[int] = set()
    related = [
        x
        for c in cs
        if v in c.variables and c.kind in ("equal", "broadcast")
        for n in c.variables
        if n != v and (x := placed.get(n)) is not None
    ]
    first = -(-max(lo, want) // k) * k  # the least allowed value from ``want`` up
    for x in itertools.chain([want, *_solved(v, placed, cs), *related], _steps(first, k, lo, hi), [1]):
        if lo <= x <= hi and x % k == 0 and x not in seen:
            seen.add(x)
            yield x


def _solved(v: str, placed: Mapping[str, int], cs: Sequence[Constraint | _Broken]) -> Iterator[int]:
    """The value an equality ``v == e`` gives ``v`` where every variable of ``e`` is placed (a
    name read as an expression: ``past_sequence + sequence``)."""
    for c in cs:
        if c.kind != "equal" or len(c.exprs) != 2:
            continue
        for a, b in (c.exprs, c.exprs[::-1]):
            if D.variable_name(a) == v and type(x := D.evaluate(b, placed)) is int:
                yield x


def _steps(first: int, k: int, lo: int, hi: int) -> Iterator[int]:
    """Multiples of ``k`` in ``[lo, hi]``: from ``first`` up and below it down, alternating,
    then every doubling upward (a bound or a modulus far away)."""
    for step in range(256):
        yield first + step * k
        if first - (step + 1) * k >= lo:
            yield first - (step + 1) * k
    x = first + 256 * k
    while x <= hi:
        yield x
        x *= 2
