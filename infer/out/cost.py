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

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, wraps
from typing import Any, TypeVar

from onnx import ModelProto

from infer.check.domain import Domain
from infer.core import dims as D
from infer.core import types as T
from infer.core.dims import Dim
from infer.core.dims.bounds import is_monotone
from infer.core.dimscope import DimScope
from infer.core.dimtable import DimTable
from infer.core.scopes import MAIN, GraphRecord
from infer.out import liveness, nodework
from infer.out.liveness import Lifetime, Peak, lifetimes
from infer.out.noderead import NodeReads, read_nodes
from infer.out.sizes import Amount, ElementCounts, Valuation, exact_bytes, human, tensor_bytes, weights_of
from infer.walk.engine import collector_paused

FIT_CAP = 1 << 40  # the largest value ``fit`` tries for a variable
_R = TypeVar("_R")


def _paused(f: Callable[..., _R]) -> Callable[..., _R]:
    """``f`` run with Python's cyclic collector paused, as inference runs (``collector_paused``):
    a cost builds many small objects and no cycles, and a collection meanwhile would traverse
    everything alive, the finished inference included (a third of the time on a large model)."""

    @wraps(f)
    def paused(*args: Any, **kwargs: Any) -> _R:
        with collector_paused():
            return f(*args, **kwargs)

    return paused


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
            "budget": f"at {self.vary}={self.value + 1} it is {exact_bytes(self.next_peak)}",
            "domain": f"the input domain allows no larger {self.vary}",
            "search cap": f"the search stops at {self.vary}={self.value}",
        }[self.limited_by]
        note = "" if self.exact or self.limited_by != "budget" else f" ({self.why})"
        fits = f"peak {exact_bytes(self.peak)} <= {exact_bytes(self.budget)}"
        return f"largest {self.vary} = {self.value}: {fits}; {tail}{note}"

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
        self._monotone: bool | None = None  # monotone(), once computed
        self._counts = ElementCounts()
        self._sizes: dict[T.Type, Amount] = {}

    def _size(self, t: T.Type) -> Amount:
        """``tensor_bytes(t)``, once per type and with the shared element counts."""
        out = self._sizes.get(t)
        if out is None:
            out = self._sizes[t] = tensor_bytes(t, self._counts)
        return out

    @cached_property
    @_paused
    def values(self) -> dict[tuple[str, str], Amount]:
        """(graph, name) -> bytes of every value that is not an initializer, subgraphs' too."""
        out: dict[tuple[str, str], Amount] = {}
        sizes, size = self._sizes, self._size  # (the memo read here: a call per value is a third of this)
        for g, r in self.records.items():
            if r.kind != "graph":
                continue
            weights = r.initializers
            for name, v in r.values.items():
                if name not in weights:
                    t = v.type
                    out[(g, name)] = sizes.get(t) or size(t)
        return out

    @cached_property
    @_paused
    def _read(self) -> NodeReads:
        return read_nodes(self.rec)

    @cached_property
    @_paused
    def spans(self) -> list[Lifetime]:
        return lifetimes(self.rec, self._read, self._size)

    @cached_property
    @_paused
    def nodes(self) -> list[nodework.NodeWork]:
        rec, count = self.rec, self._counts
        nodes = self._read
        return [nodework.node_work(rec, i, nodes, count) for i in range(len(nodes))]

    @cached_property
    @_paused
    def peak(self) -> Peak:
        return liveness.peak(self.spans, self.node_count, self.scope)

    @cached_property
    def _weights(self) -> tuple[Amount, int]:
        nodes = self._read
        return weights_of(self.source, [nodes.node(i) for i in sorted(nodes.held)])

    @property
    def weights(self) -> Amount:
        """The bytes of every initializer (external data by its stated length)."""
        return self._weights[0]

    @property
    def weight_count(self) -> int:
        return self._weights[1]

    @cached_property
    @_paused
    def inputs(self) -> Amount:
        return _sum((s for s in self.spans if not s.produced), "graph inputs")

    @cached_property
    @_paused
    def activations(self) -> Amount:
        """The bytes of every node output of the main graph (no memory reused)."""
        return _sum((s for s in self.spans if s.produced), "node outputs")

    @cached_property
    @_paused
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
        return self.at_valuation(Valuation(bindings))

    def at_valuation(self, value: Valuation) -> Evaluation:
        """``at`` with the terms' values kept in ``value`` (shared with a caller that also
        evaluates the values' or nodes' terms at its binding)."""
        b = value.bindings
        n = max(self.node_count, 1)
        delta = [0] * (n + 1)
        for s in self.spans:
            t = s.bytes.term
            if t is None:
                return Evaluation(b, None, None, None, f"`{s.name}` has unknown size ({s.bytes.why})")
            v = value.raw(t)
            if type(v) is not int:
                why = v if isinstance(v, str) else self._unbound(v)
                return Evaluation(b, None, None, None, f"`{s.name}` ({D.to_str(t)}): {why}")
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
        fresh = [(x, v) for x in names if (v := self.table.get(x)) is not None and v.is_fresh]
        if fresh:
            x, v = fresh[0]
            return f"depends on `{x}`, an extent inference could not determine ({v.origin.reason})"
        return f"depends on {', '.join(names)}, not bound"

    def domain_bounds(self) -> dict[str, tuple[int, int | None]]:
        """Each input variable's (least, greatest) value the domain states alone (greatest
        ``None`` when unbounded)."""
        out: dict[str, tuple[int, int | None]] = {v: (1, None) for v in self.variables}
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
        if self._monotone is None:
            self._monotone = all(is_monotone(s.bytes.term) for s in self.spans)
        return self._monotone

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

    @_paused
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
    terms = []
    for s in spans:
        if s.bytes.term is None:
            return Amount(None, f"`{s.name}` has unknown size ({s.bytes.why})")
        terms.append(s.bytes.term)
    total = D.sum_of(terms)
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


def cost_json(cost: Cost, bindings: Mapping[str, int] | None = None) -> dict[str, Any]:
    """What ``onnx-infer cost --json`` prints."""
    b = dict(bindings or {})
    value = Valuation(b)
    seen: dict[int, dict[str, Any]] = {}  # values of one type share one Amount: its fields made once

    def amount(a: Amount) -> dict[str, Any]:
        out = seen.get(id(a))
        if out is None:
            out = seen[id(a)] = {**a.to_json(), **({"bytes": value(a.term)} if b else {})}
        return out

    text = nodework.texts()
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
        "nodes": [w.to_json(text, name) for w, name in zip(cost.nodes, [n.name for n in cost.rec.nodes])],
    }
    if b:
        out["at"] = cost.at_valuation(value).to_json()
        out["at"]["macs"], out["at"]["flops"] = value(cost.macs), value(cost.flops)
    return out
