"""What the shapes cost: bytes of values, work of nodes, weights, and the peak of live memory.

A client of a finished inference (``result.cost``): nothing is run. Every quantity is a term over
the model's dimension variables (``infer.core.dims``), or unknown with a reason; a term is
evaluated at a binding, at the worst case of the input domain, or solved for the largest value of
one variable under a memory budget (``Cost.fit``). docs/cost.md states the conventions.

Live memory follows the main graph's node order: a value counts at node ``i`` when its producer
is at or before ``i`` and its last consumer at or after ``i``; graph inputs live from the first
node, graph outputs to the last; initializers are weights, not live memory. The peak is a ``max``
of one sum per node, simplified only by what the run's scope proves (a candidate is dropped when
another is proven at least as large), so it never claims less than the model entails.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import Any

from onnx import AttributeProto, GraphProto, ModelProto, NodeProto, TensorProto

from infer.check.domain import Domain
from infer.core import dims as D
from infer.core import types as T
from infer.core.dims import Dim
from infer.core.dims.bounds import is_monotone
from infer.core.dimscope import DimScope
from infer.core.dimtable import DimTable
from infer.core.scopes import MAIN, GraphRecord
from infer.out import nodework

ELEM_BITS = {
    TensorProto.FLOAT: 32,
    TensorProto.UINT8: 8,
    TensorProto.INT8: 8,
    TensorProto.UINT16: 16,
    TensorProto.INT16: 16,
    TensorProto.INT32: 32,
    TensorProto.INT64: 64,
    TensorProto.BOOL: 8,
    TensorProto.FLOAT16: 16,
    TensorProto.DOUBLE: 64,
    TensorProto.UINT32: 32,
    TensorProto.UINT64: 64,
    TensorProto.COMPLEX64: 64,
    TensorProto.COMPLEX128: 128,
    TensorProto.BFLOAT16: 16,
    17: 8,
    18: 8,
    19: 8,
    20: 8,
    21: 4,
    22: 4,
    23: 4,
    24: 8,
    25: 2,
    26: 2,
    27: 6,
    28: 6,
}
# Comparisons the peak's simplification may make: past them the remaining candidates are kept
# as they are (keeping one is always sound), so a max of thousands of terms takes bounded time.
MAX_COMPARISONS = 20_000
FIT_CAP = 1 << 40  # the largest value ``fit`` tries for a variable
UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")


@dataclass(frozen=True)
class Amount:
    """A quantity as a term over dimension variables, or unknown (``term is None``) with why."""

    term: Dim
    why: str = ""

    @property
    def known(self) -> bool:
        return self.term is not None

    def at(self, bindings: Mapping[str, int]) -> int | None:
        """The quantity at ``bindings``; ``None`` when unknown or a variable is unbound."""
        v = D.evaluate(self.term, bindings)
        return v if type(v) is int else None

    def __str__(self) -> str:
        return D.to_str(self.term) if self.term is not None else f"unknown ({self.why})"

    def to_json(self) -> dict[str, Any]:
        return {"term": None if self.term is None else D.to_str(self.term), "why": self.why or None}


def human(n: int | None) -> str:
    """``n`` bytes as text: ``1.5 GiB``."""
    if n is None:
        return "?"
    x, unit = float(n), 0
    while abs(x) >= 1024 and unit < len(UNITS) - 1:
        x, unit = x / 1024, unit + 1
    return f"{n} B" if unit == 0 else f"{x:.4g} {UNITS[unit]}"


_SCALE = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40, "P": 1 << 50}


def parse_size(text: str) -> int:
    """A number of bytes written ``8589934592``, ``8G``, ``8GiB`` (binary) or ``8GB`` (decimal)."""
    t = text.strip()
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMGTP]?)(i?B?)", t, re.IGNORECASE)
    if m is None:
        raise ValueError(f"{text!r} is not a size (bytes, or a number with K, M, G, T; KiB or KB)")
    unit, tail = m.group(2).upper(), m.group(3).lower()
    scale = 1000 ** " KMGTP".index(unit) if unit and tail == "b" else _SCALE[unit]
    return int(Fraction(m.group(1)) * scale)


def _exact(n: int | None) -> str:
    return "?" if n is None else f"{n:,} B ({human(n)})"


def tensor_bytes(t: T.Type) -> Amount:
    """The bytes of a value of type ``t``: element size times its extents."""
    if isinstance(t, T.SequenceType):
        return Amount(None, "a sequence: its length and items are not sized")
    if isinstance(t, T.MapType):
        return Amount(None, "a map: its entries are not sized")
    if isinstance(t, T.OptionalType):
        return Amount(None, "an optional: whether it holds a value is decided at run time")
    if not isinstance(t, T.TensorType):
        return Amount(None, f"a value of type {t} is not sized")
    if t.elem == TensorProto.STRING:
        return Amount(None, "a string tensor: its strings' lengths are not known")
    bits = ELEM_BITS.get(t.elem) if t.elem is not None else None
    if bits is None:
        return Amount(None, "its element type is unknown")
    if t.shape is None:
        return Amount(None, "its rank is unknown")
    if any(d is None for d in t.shape):
        return Amount(None, "an extent is unknown")
    n = D.product(t.shape)
    b = D.mul(n, bits // 8) if bits % 8 == 0 else D.ceildiv(D.mul(n, bits), 8)
    return Amount(b, "" if b is not None else "past the bound of extent arithmetic")


def initializer_bytes(t: TensorProto) -> Amount:
    """An initializer's bytes: its external data's ``length`` where stated (never read), else
    element size times its dims."""
    if t.data_location == TensorProto.EXTERNAL:
        for e in t.external_data:
            if e.key == "length" and e.value.isdigit():
                return Amount(int(e.value))
    return tensor_bytes(T.TensorType(t.data_type, tuple(int(d) for d in t.dims)))


def _graph_initializers(g: GraphProto) -> Iterable[TensorProto]:
    """Every initializer of ``g`` and of the graphs nested in its nodes."""
    yield from g.initializer
    for node in g.node:
        for a in node.attribute:
            if a.type == AttributeProto.GRAPH:
                yield from _graph_initializers(a.g)
            elif a.type == AttributeProto.GRAPHS:
                for sub in a.graphs:
                    yield from _graph_initializers(sub)


def weights_of(model: ModelProto) -> tuple[Amount, int]:
    """The bytes of every initializer (subgraphs' too) and how many there are."""
    total: Dim = 0
    n = 0
    for t in _graph_initializers(model.graph):
        n += 1
        b = initializer_bytes(t)
        if b.term is None:
            return Amount(None, f"initializer `{t.name}`: {b.why}"), n
        total = D.add(total, b.term)
    return Amount(total), n


def _outer_names(g: GraphProto) -> set[str]:
    """Names the nodes of ``g`` (and graphs nested in them) read: a node holding ``g`` consumes
    those of them its own graph defines."""
    out: set[str] = set()
    for node in g.node:
        out.update(n for n in node.input if n)
        for a in node.attribute:
            for sub in [a.g] if a.type == AttributeProto.GRAPH else a.graphs:
                out |= _outer_names(sub)
    return out


def subgraphs_of(node: NodeProto) -> list[GraphProto]:
    out: list[GraphProto] = []
    for a in node.attribute:
        if a.type == AttributeProto.GRAPH:
            out.append(a.g)
        elif a.type == AttributeProto.GRAPHS:
            out.extend(a.graphs)
    return out


@dataclass(frozen=True)
class Lifetime:
    """One value of the main graph with its bytes and the node positions it is live at."""

    name: str
    bytes: Amount
    start: int
    end: int
    produced: bool  # a node's output (else a graph input)


def lifetimes(rec: GraphRecord) -> list[Lifetime]:
    """The live span of every non-weight value of ``rec`` along its node order."""
    n = len(rec.nodes)
    last = max(n - 1, 0)
    start: dict[str, int] = {}
    for i, node in enumerate(rec.nodes):
        for o in node.output:
            if o and o not in rec.initializers:
                start.setdefault(o, i)
    produced = set(start)
    for name in rec.inputs:
        if name not in rec.initializers:
            start.setdefault(name, 0)
    end = dict(start)
    for i, node in enumerate(rec.nodes):
        used = set(node.input)
        for g in subgraphs_of(node):
            used |= _outer_names(g)
        for name in used:
            if name in end and end[name] < i:
                end[name] = i
    for name in rec.outputs:
        if name in end:
            end[name] = last
    out = []
    for name, s in start.items():
        v = rec.values.get(name)
        b = tensor_bytes(v.type) if v is not None else Amount(None, "no type was inferred")
        out.append(Lifetime(name, b, s, end[name], name in produced))
    return out


@dataclass
class Peak:
    """The peak of live memory: ``max`` of ``candidates`` (node index, term), simplified."""

    term: Dim
    candidates: list[tuple[int, Dim]]
    why: str = ""  # why ``term`` is unknown, where it is
    dropped: int = 0  # candidates proven dominated
    unproven: bool = False  # the comparison budget ran out before every pair was tried

    def to_json(self) -> dict[str, Any]:
        return {
            "term": None if self.term is None else D.to_str(self.term),
            "why": self.why or None,
            "candidates": [{"node": i, "term": D.to_str(t)} for i, t in self.candidates[:64]],
            "candidate_count": len(self.candidates),
            "dropped_as_dominated": self.dropped,
            "comparison_budget_spent": self.unproven,
        }


def live_terms(spans: Sequence[Lifetime], n: int) -> list[Dim] | str:
    """The symbolic live bytes at each node position, or why they cannot be written."""
    born: list[list[Dim]] = [[] for _ in range(max(n, 1))]
    dies: list[list[Dim]] = [[] for _ in range(max(n, 1))]
    for s in spans:
        if s.bytes.term is None:
            return f"`{s.name}` has unknown size ({s.bytes.why})"
        born[s.start].append(s.bytes.term)
        dies[s.end].append(s.bytes.term)
    out: list[Dim] = []
    live: Dim = 0
    for i in range(max(n, 1)):
        live = D.add(live, D.total(born[i]))
        out.append(live)
        live = D.sub(live, D.total(dies[i]))
        if live is None:
            return "the live sum is past the bound of extent arithmetic"
    return out


def _probe_points(terms: Iterable[Dim]) -> list[dict[str, int]]:
    """Bindings a candidate is evaluated at before a proof: every variable at 1, 2, 64, 1024,
    and each of the first few variables large with the others small and the reverse."""
    names = sorted({n for t in terms if D.is_symbolic(t) for n in D.free_names(t)})
    points = [dict.fromkeys(names, p) for p in (1024, 64, 2, 1)]
    for v in names[:6]:
        points += [{**dict.fromkeys(names, 1), v: 1024}, {**dict.fromkeys(names, 1024), v: 1}]
    return points


def _probe(term: Dim, points: Sequence[dict[str, int]]) -> tuple[int, ...]:
    """``term`` at each of ``points``. It decides nothing: it orders the candidates (largest
    first, so most are dropped after one comparison) and spares the prover pairs it cannot
    prove (a proof is tried only where ``a <= b`` at every point; skipping one keeps a
    candidate, which is always sound)."""
    if not D.is_symbolic(term):
        return (term,) * len(points)  # type: ignore[return-value]
    out = []
    for p in points:
        v = D.evaluate(term, p)
        out.append(v if type(v) is int else 0)
    return tuple(out)


def simplify_max(cands: Sequence[tuple[int, Dim]], scope: DimScope | None) -> Peak:
    """Candidates of a max, each proven at most another dropped (by ``scope``, the run's
    prover), within ``MAX_COMPARISONS``."""
    first: dict[Dim, int] = {}
    for i, t in cands:
        first.setdefault(t, i)
    points = _probe_points(first)
    probes = {t: _probe(t, points) for t in first}
    order = sorted(first, key=probes.__getitem__, reverse=True)
    kept: list[Dim] = []
    budget = MAX_COMPARISONS
    for t in order:
        if budget <= 0:
            kept.append(t)
            continue
        budget -= len(kept)
        if any(_at_most(t, k, probes, scope) for k in kept):
            continue
        kept = [k for k in kept if not _at_most(k, t, probes, scope)]
        kept.append(t)
    dropped = len(first) - len(kept)
    term = D.dmax_of(kept) if kept else 0
    why = "" if term is not None else f"a max of {len(kept)} terms is past the bound of extent arithmetic"
    pairs = sorted(((first[t], t) for t in kept), key=lambda p: p[0])
    return Peak(term, pairs, why, dropped, budget <= 0)


def _at_most(a: Dim, b: Dim, probes: Mapping[Dim, tuple[int, ...]], scope: DimScope | None) -> bool:
    """Is ``a <= b`` in every run of a valid model, as the run's scope proves it (``b < a`` in
    none)? Tried only where the probes allow it."""
    if not all(x <= y for x, y in zip(probes[a], probes[b])):
        return False
    if scope is None:
        return D.less(b, a) is False
    return scope.less(b, a) is False


@dataclass
class Evaluation:
    """The cost at one binding: totals in bytes and FLOPs, the live bytes at each node."""

    bindings: dict[str, int]
    peak: int | None
    peak_node: int | None
    live: list[int] | None
    why: str = ""  # why the peak is unknown at this binding

    def to_json(self) -> dict[str, Any]:
        return {
            "bindings": self.bindings,
            "peak_bytes": self.peak,
            "peak_node": self.peak_node,
            "why": self.why or None,
        }


@dataclass
class Fit:
    """The largest value of ``vary`` whose peak fits ``budget`` with the others bound."""

    vary: str
    budget: int
    value: int | None
    peak: int | None = None  # the peak at ``value``
    next_peak: int | None = None  # the peak at ``value + 1``
    limited_by: str = ""  # "budget", "domain" or "search cap"
    exact: bool = False  # peak(value) <= budget < peak(value + 1) and the peak is monotone in vary
    why: str = ""

    def __str__(self) -> str:
        if self.value is None:
            return f"no {self.vary} fits {human(self.budget)}: {self.why}"
        tail = {
            "budget": f"at {self.vary}={self.value + 1} it is {_exact(self.next_peak)}",
            "domain": f"the input domain allows no larger {self.vary}",
            "search cap": f"the search stops at {self.vary}={self.value}",
        }[self.limited_by]
        note = "" if self.exact or self.limited_by != "budget" else f" ({self.why})"
        return f"largest {self.vary} = {self.value}: peak {_exact(self.peak)} <= {_exact(self.budget)}; {tail}{note}"

    def to_json(self) -> dict[str, Any]:
        return {
            "vary": self.vary,
            "budget": self.budget,
            "value": self.value,
            "peak_bytes": self.peak,
            "next_peak_bytes": self.next_peak,
            "limited_by": self.limited_by or None,
            "exact": self.exact,
            "why": self.why or None,
        }


class Cost:
    """What the shapes of one inferred model cost (``result.cost``). Each part is computed when
    first asked for: evaluating the peak at a binding or fitting a budget needs the values' spans
    only, not the peak's term, whose simplification is the dearest part."""

    def __init__(
        self,
        records: Mapping[str, GraphRecord],
        scope: DimScope | None,
        domain: Domain,
        source: ModelProto,
        table: DimTable,
        variables: Sequence[str],
    ):
        self.records, self.scope, self.domain, self.source = records, scope, domain, source
        self.table, self.variables = table, list(variables)
        self.rec = records[MAIN]
        self._memo: dict[Any, Any] = {}

    @cached_property
    def values(self) -> dict[tuple[str, str], Amount]:
        """(graph, name) -> bytes of every value that is not an initializer, subgraphs' too."""
        return {
            (g, name): tensor_bytes(v.type)
            for g, r in self.records.items()
            if r.kind == "graph"
            for name, v in r.values.items()
            if name not in r.initializers
        }

    @cached_property
    def spans(self) -> list[Lifetime]:
        return lifetimes(self.rec)

    @cached_property
    def nodes(self) -> list[nodework.NodeWork]:
        return [nodework.node_work(self.rec, i, node) for i, node in enumerate(self.rec.nodes)]

    @cached_property
    def peak(self) -> Peak:
        terms = live_terms(self.spans, len(self.rec.nodes))
        return Peak(None, [], terms) if isinstance(terms, str) else simplify_max(list(enumerate(terms)), self.scope)

    @cached_property
    def _weights(self) -> tuple[Amount, int]:
        return weights_of(self.source)

    @property
    def weights(self) -> Amount:
        """The bytes of every initializer (external data by its stated length)."""
        return self._weights[0]

    @property
    def weight_count(self) -> int:
        return self._weights[1]

    @cached_property
    def inputs(self) -> Amount:
        return _sum((s for s in self.spans if not s.produced), "graph inputs")

    @cached_property
    def activations(self) -> Amount:
        """The bytes of every node output of the main graph (no memory reused)."""
        return _sum((s for s in self.spans if s.produced), "node outputs")

    @cached_property
    def _work(self) -> tuple[Dim, Dim, int]:
        flops, unknown = nodework.total(self.nodes, "flops")
        return flops, nodework.total(self.nodes, "macs")[0], unknown

    @property
    def flops(self) -> Dim:
        """FLOPs over the nodes whose work is known (``unknown_work`` counts the others)."""
        return self._work[0]

    @property
    def macs(self) -> Dim:
        return self._work[1]

    @property
    def unknown_work(self) -> int:
        return self._work[2]

    @cached_property
    def not_expressed(self) -> list[str]:
        return [
            f"values made inside {w.op_type} `{w.name}` (node {w.index}) are not in the peak"
            for w in self.nodes
            if w.subgraphs
        ]

    @property
    def node_count(self) -> int:
        return len(self.rec.nodes)

    def bytes_of(self, name: str, graph: str = MAIN) -> Amount:
        """The bytes of value ``name`` (of ``graph``, the main graph by default)."""
        return self.values[(graph, name)]

    # -- evaluation ---------------------------------------------------------------------------

    def at(self, bindings: Mapping[str, int]) -> Evaluation:
        """The live bytes at each node and their peak at ``bindings``, by summing the values'
        bytes (the same numbers as the peak term, without building it)."""
        b = dict(bindings)
        n = max(self.node_count, 1)
        delta = [0] * (n + 1)
        memo: dict[Dim, Dim] = {}
        for s in self.spans:
            t = s.bytes.term
            if t is None:
                return Evaluation(b, None, None, None, f"`{s.name}` has unknown size ({s.bytes.why})")
            v = memo.get(t)
            if v is None:
                v = memo[t] = D.evaluate(t, b)
            if type(v) is not int:
                return Evaluation(b, None, None, None, f"`{s.name}` ({D.to_str(t)}): {self._unbound(v)}")
            delta[s.start] += v
            delta[s.end + 1] -= v
        live, run = [], 0
        for i in range(n):
            run += delta[i]
            live.append(run)
        top = max(range(n), key=live.__getitem__)
        return Evaluation(b, live[top], top, live)

    def _unbound(self, d: Dim) -> str:
        names = sorted(D.free_names(d))
        fresh = [x for x in names if (v := self.table.get(x)) is not None and v.is_fresh]
        if fresh:
            v = self.table.get(fresh[0])
            return f"depends on `{fresh[0]}`, an extent inference could not determine ({v.origin.reason})"
        return f"depends on {', '.join(names)}, not bound"

    def domain_bounds(self) -> dict[str, tuple[int, int | None]]:
        """Each input variable's (least, greatest) value the domain states alone (greatest
        ``None`` when unbounded)."""
        out = {v: (1, None) for v in self.variables}
        for c in self.domain.binding:
            name = D.variable_name(c.exprs[0]) if c.kind == "range" and c.exprs else None
            if name not in out:
                continue
            lo, hi = out[name]
            if c.lower is not None:
                lo = max(lo, c.lower)
            if c.upper is not None:
                hi = c.upper if hi is None else min(hi, c.upper)
            out[name] = (lo, hi)
        return out

    def monotone(self) -> bool:
        """Is every value's bytes non-decreasing in every variable (so is the peak)?"""
        if "monotone" not in self._memo:
            self._memo["monotone"] = all(is_monotone(s.bytes.term) for s in self.spans)
        return self._memo["monotone"]

    def worst(self) -> tuple[Evaluation | None, str]:
        """The peak at the worst case of the input domain, with how it is known; ``None`` and
        why where the domain does not bound every variable or the peak is not monotone."""
        bounds = self.domain_bounds()
        open_ = [v for v, (_, hi) in bounds.items() if hi is None]
        if open_:
            return None, f"the input domain does not bound {', '.join(open_)}"
        if not self.monotone():
            return None, "the peak is not provably non-decreasing in the variables"
        corner = {v: hi for v, (_, hi) in bounds.items() if hi is not None}
        ev = self.at(corner)
        if self.domain.contains(corner) is not True:
            return ev, "an upper bound: the corner of the per-variable bounds is outside the domain"
        return ev, "exact: the peak is non-decreasing and the corner is inside the domain"

    def fit(self, budget: int, vary: str, bindings: Mapping[str, int] | None = None) -> Fit:
        """The largest value of ``vary`` keeping the peak within ``budget`` bytes, the other
        variables at ``bindings``; exact where the peak is monotone, else found by search and
        checked at the answer and the answer plus one."""
        return fit(self, budget, vary, dict(bindings or {}))

    def to_json(self, bindings: Mapping[str, int] | None = None) -> dict[str, Any]:
        return cost_json(self, bindings)


def build(
    records: Mapping[str, GraphRecord],
    scope: DimScope | None,
    domain: Domain,
    source: ModelProto,
    table: DimTable,
    variables: Sequence[str],
) -> Cost:
    """The cost of a finished inference (``InferenceResult.cost``); nothing computed yet."""
    return Cost(records, scope, domain, source, table, variables)


def _sum(spans: Iterable[Lifetime], what: str) -> Amount:
    total: Dim = 0
    for s in spans:
        if s.bytes.term is None:
            return Amount(None, f"`{s.name}` has unknown size ({s.bytes.why})")
        total = D.add(total, s.bytes.term)
    return Amount(total, "" if total is not None else f"the sum of {what} is past the bound of extent arithmetic")


class _Unknown(Exception):
    """The peak is unknown at a binding the search tried."""


def fit(cost: Cost, budget: int, vary: str, bindings: dict[str, int]) -> Fit:
    """``Cost.fit``: exponential then binary search on the peak at ``bindings`` with ``vary``
    varied, within the domain's bounds of ``vary`` and ``FIT_CAP``."""
    _check_fit(cost, budget, vary, bindings)
    lo, hi = cost.domain_bounds()[vary]
    cap = hi if hi is not None else FIT_CAP

    def peak(x: int) -> int:
        ev = cost.at({**bindings, vary: x})
        if ev.peak is None:
            raise _Unknown(ev.why)
        return ev.peak

    try:
        if peak(lo) > budget:
            why = f"at {vary}={lo}, the least the domain allows, the peak is {human(peak(lo))}"
            return Fit(vary, budget, None, why=why)
        good, bad = lo, None
        while bad is None and good < cap:
            x = min(max(2 * good, good + 1), cap)
            if peak(x) > budget:
                bad = x
            else:
                good = x
        while bad is not None and bad - good > 1:
            mid = (good + bad) // 2
            good, bad = (mid, bad) if peak(mid) <= budget else (good, mid)
        out = Fit(vary, budget, good, peak(good), None if bad is None else peak(bad))
    except _Unknown as e:
        return Fit(vary, budget, None, why=f"the peak is unknown: {e}")
    out.limited_by = "budget" if bad is not None else ("domain" if hi is not None else "search cap")
    out.exact = out.limited_by != "search cap" and cost.monotone()
    if not cost.monotone():
        out.why = f"the peak is not provably non-decreasing in {vary}: a larger value may fit again"
    if cost.domain.contains({**bindings, vary: good}) is False:
        out.why = (out.why + "; " if out.why else "") + "the binding at the answer is outside the input domain"
    return out


def _check_fit(cost: Cost, budget: int, vary: str, bindings: Mapping[str, int]) -> None:
    if vary not in cost.variables:
        raise ValueError(f"`{vary}` is not an input variable of the model (it has {', '.join(cost.variables)})")
    if budget < 0:
        raise ValueError("a budget cannot be negative")
    unbound = [v for v in cost.variables if v != vary and v not in bindings]
    if unbound:
        raise ValueError(f"bind {', '.join(unbound)} too: the other variables must be bound to fit {vary}")


def reference_binding(cost: Cost, given: Mapping[str, int]) -> dict[str, int]:
    """``given`` completed for ranking: each unbound variable at the domain's bound of it, else
    128, then moved to a valid binding near that (the ranking is only an order)."""
    bounds = cost.domain_bounds()
    want = {v: given.get(v, bounds[v][1] or 128) for v in cost.variables}
    near = cost.domain.near(want, fixed={k: v for k, v in given.items() if k in cost.variables})
    return {**want, **(near or {}), **given}


def cost_json(cost: Cost, bindings: Mapping[str, int] | None = None) -> dict[str, Any]:
    """What ``onnx-infer cost --json`` prints."""
    b = dict(bindings or {})

    def amount(a: Amount) -> dict[str, Any]:
        return {**a.to_json(), **({"bytes": a.at(b)} if b else {})}

    worst, how = cost.worst()
    out: dict[str, Any] = {
        "weights": {**amount(cost.weights), "initializers": cost.weight_count},
        "inputs": amount(cost.inputs),
        "activations": amount(cost.activations),
        "macs": D.to_str(cost.macs),
        "flops": D.to_str(cost.flops),
        "nodes_with_unknown_work": cost.unknown_work,
        "peak": cost.peak.to_json(),
        "not_expressed": cost.not_expressed,
        "worst_case": {**(worst.to_json() if worst else {}), "how": how},
        "values": [{"graph": g, "name": n, **amount(a)} for (g, n), a in cost.values.items()],
        "nodes": [w.to_json() for w in cost.nodes],
    }
    if b:
        out["at"] = cost.at(b).to_json()
        out["at"]["macs"], out["at"]["flops"] = Amount(cost.macs).at(b), Amount(cost.flops).at(b)
    return out


def sections(cost: Cost, bindings: Mapping[str, int], top: int = 10) -> list[tuple[str, list[list[str]]]]:
    """The tables of ``onnx-infer cost``: totals, the peak, the top nodes by memory and by work,
    each (title, rows) with the first row the header and the long terms last."""
    ref = reference_binding(cost, bindings)
    ev = cost.at(ref)
    at = ", ".join(f"{k}={v}" for k, v in ref.items()) or "no variables"
    totals = [["quantity", f"at {at}", "term"]]
    for label, a in (("weights", cost.weights), ("inputs", cost.inputs), ("activations", cost.activations)):
        totals.append([label, human(a.at(ref)), str(a)])
    peak = human(ev.peak) if ev.peak is not None else f"? ({ev.why})"
    totals.append(["peak live", peak, str(Amount(cost.peak.term, cost.peak.why))])
    suffix = f" (+{cost.unknown_work} nodes unknown)" if cost.unknown_work else ""
    for label, d in (("multiply-adds", cost.macs), ("FLOPs", cost.flops)):
        v = Amount(d).at(ref)
        totals.append([label + suffix, "?" if v is None else f"{v:,}", D.to_str(d)])
    out = [("totals", totals)]
    if ev.peak_node is not None and cost.nodes:
        w = cost.nodes[ev.peak_node]
        out.append(("peak node", [["node", "op", "live", "name"], [str(w.index), w.op_type, human(ev.peak), w.name]]))
    out.append((f"top {top} nodes by output memory", _by_memory(cost, ref, ev, top)))
    out.append((f"top {top} nodes by work", _by_work(cost, ref, top)))
    return out


def _by_memory(cost: Cost, ref: Mapping[str, int], ev: Evaluation, top: int) -> list[list[str]]:
    rows = [(s.bytes.at(ref) or 0, s) for s in cost.spans if s.produced]
    rows.sort(key=lambda r: -r[0])
    out = [["node", "op", "bytes", "live at node", "output", "term"]]
    for v, s in rows[:top]:
        live = human(ev.live[s.start]) if ev.live else "?"
        out.append([str(s.start), cost.nodes[s.start].op_type, human(v), live, s.name, str(s.bytes)])
    return out


def _by_work(cost: Cost, ref: Mapping[str, int], top: int) -> list[list[str]]:
    known = sorted((w for w in cost.nodes if w.known), key=lambda w: -(Amount(w.flops).at(ref) or 0))
    out = [["node", "op", "FLOPs", "multiply-adds", "name", "FLOPs term"]]
    for w in known[:top]:
        f, m = Amount(w.flops).at(ref), Amount(w.macs).at(ref)
        row = [str(w.index), w.op_type, "?" if f is None else f"{f:,}", "?" if m is None else f"{m:,}"]
        out.append([*row, w.name, D.to_str(w.flops)])
    return out
