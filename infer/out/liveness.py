"""Live memory along the node order and its peak (a part of ``infer.out.cost``).

A value of the main graph is live from its producer (a graph input from the first node) to its
last reader (a graph output to the last); ``lifetimes`` gives each one's span. The live bytes at a
node are the sum of the bytes of the values live there, and the peak is their ``max`` over the
nodes, simplified only by what is proven: a node's sum shown term by term at most a neighbour's,
or that of a node kept so far, is dropped before any sum is built (``peak``), and the others'
sums, built, are compared term by term and with the run's prover (``simplify_max``). A candidate
that could dominate is never dropped.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from infer.core import dims as D
from infer.core import types as T
from infer.core.dims import Dim
from infer.core.dimscope import DimScope
from infer.core.scopes import GraphRecord
from infer.out.noderead import NodeReads
from infer.out.sizes import Amount, evaluated, tensor_bytes
from infer.walk.order import SubgraphUses

Sized = int | D.Expr  # a size that is known, as an integer or a term

# Pairs of candidates the peak's simplification may look at, and proofs it may ask the run's
# prover for (the dear part): past the first the remaining candidates are kept as they are, past
# the second only the term-by-term test drops one (keeping one is always sound), so a max of
# thousands of terms takes bounded time.
MAX_COMPARISONS = 1_000_000
MAX_PROOFS = 20_000
# Proofs stop after this many fail in a row. What the term-by-term test leaves (the probes say
# ``a <= b`` everywhere they look) the prover rarely settles: on the corpus 4 of 978 proofs
# succeeded, each among the first 13 its model tried, and a failed one costs a hundred times
# the term-by-term test (two differences built and bounded).
MAX_FAILED_IN_A_ROW = 32


@dataclass(slots=True)  # not frozen: a frozen one takes four times as long to make, once per node
class Lifetime:
    """One value of the main graph with its bytes and the node positions it is live at."""

    name: str
    bytes: Amount
    start: int
    end: int
    produced: bool  # a node's output (else a graph input)


def lifetimes(rec: GraphRecord, nodes: NodeReads, size: Callable[[T.Type], Amount] = tensor_bytes) -> list[Lifetime]:
    """The live span of every non-weight value of ``rec`` along its node order (``nodes``, its
    nodes as read), its bytes by ``size`` (``tensor_bytes``, or a memo of it)."""
    weights = rec.initializers
    start: dict[str, int] = {}
    for i, outs in enumerate(nodes.outputs):
        for o in outs:
            if o and o not in start and o not in weights:
                start[o] = i
    produced = len(start)
    for name in rec.inputs:
        if name not in weights:
            start.setdefault(name, 0)
    end = dict(start)
    for i, ins in enumerate(nodes.inputs):
        for name in ins:
            if end.get(name, i) < i:
                end[name] = i
    uses = SubgraphUses()
    for i in sorted(nodes.held):  # what its graphs read of this one, as the walk orders by it (outputs too)
        for name in uses.of(nodes.node(i)):
            if end.get(name, i) < i:
                end[name] = i
    for name in rec.outputs:
        if name in end:
            end[name] = max(len(nodes) - 1, 0)
    out = []
    values, none = rec.values, Amount(None, "no type was inferred")
    for k, (name, s) in enumerate(start.items()):
        v = values.get(name)
        out.append(Lifetime(name, none if v is None else size(v.type), s, end[name], k < produced))
    return out


@dataclass
class Peak:
    """The peak of live memory: ``max`` of ``candidates`` (node index, term), simplified."""

    term: Dim
    candidates: list[tuple[int, Dim]]
    why: str = ""  # why ``term`` is unknown, where it is
    dropped: int = 0  # nodes whose live bytes are proven at most another's (equal ones too)
    unproven: bool = False  # a budget ran out before every pair was tried (``MAX_COMPARISONS``, ``MAX_PROOFS``)

    def to_json(self) -> dict[str, Any]:
        return {
            "term": None if self.term is None else D.to_str(self.term),
            "why": self.why or None,
            "candidates": [{"node": i, "term": D.to_str(t)} for i, t in self.candidates[:64]],
            "candidate_count": len(self.candidates),
            "dropped_as_dominated": self.dropped,
            "comparison_budget_spent": self.unproven,
        }


def peak(spans: Sequence[Lifetime], n: int, scope: DimScope | None) -> Peak:
    """The peak of the live bytes over the ``n`` node positions (at least one), its candidates
    narrowed cheapest first: a node a neighbour is shown term by term to be at least as large as
    (``_undominated``), then one another node kept so far is (``_unbeaten``, on the sums kept as
    tallies), is left out before its sum is built; the others' sums are built and their max
    simplified with the run's prover (``simplify_max``)."""
    flows = _flows(spans, max(n, 1))
    if isinstance(flows, str):
        return Peak(None, [], flows)
    born, dies = flows
    keep, tallies = _unbeaten(*_tallies_at(born, dies, _undominated(born, dies)))
    terms = [D.tally_term(t) for t in tallies]
    if None in terms:
        return Peak(None, [], "the live sum is past the bound of extent arithmetic")
    probes = [tuple(0 if v is None else v for v in p) for p in D.tally_values(tallies, _probe_points(terms))]
    out = simplify_max(list(zip(keep, terms)), scope, probes)
    out.dropped = len(born) - len(out.candidates)
    return out


def _flows(spans: Sequence[Lifetime], n: int) -> tuple[list[list[Sized]], list[list[Sized]]] | str:
    """The bytes that become live at each position and those that stop being live after it."""
    born: list[list[Sized]] = [[] for _ in range(n)]
    dies: list[list[Sized]] = [[] for _ in range(n)]
    for s in spans:
        if s.bytes.term is None:
            return f"`{s.name}` has unknown size ({s.bytes.why})"
        born[s.start].append(s.bytes.term)
        dies[s.end].append(s.bytes.term)
    return born, dies


def _tally(terms: list[Sized]) -> D.Tally:
    """The sum of ``terms``, kept as a tally."""
    out = D.Tally()
    for d in terms:
        out.add(d)
    return out


def _undominated(born: list[list[Sized]], dies: list[list[Sized]]) -> list[int]:
    """The positions no neighbour is shown, term by term, to be at least as large as.

    ``live(i + 1) = live(i) - dies[i] + born[i + 1]``, so comparing the two sums is comparing
    ``dies[i]`` with ``born[i + 1]``, usually a term or two (``D.at_most_termwise``, which holds
    in every run). Each pair of neighbours drops at most one of them, the smaller, so the drops
    form no cycle: every dropped position is at most a kept one, through a path of neighbours."""
    gone = [False] * len(born)
    seen: dict[tuple[tuple[Sized, ...], tuple[Sized, ...]], int] = {}  # a repeated layer's steps repeat
    for i in range(len(born) - 1):
        key = (tuple(dies[i]), tuple(born[i + 1]))
        smaller = seen.get(key)
        if smaller is None:
            smaller = seen[key] = _smaller(dies[i], born[i + 1])
        if smaller:
            gone[i if smaller < 0 else i + 1] = True
    return [i for i, g in enumerate(gone) if not g]


def _smaller(a: list[Sized], b: list[Sized]) -> int:
    """-1 where the sum of ``a`` is shown term by term at most that of ``b``, else 1 where the
    reverse is, else 0."""
    if len(a) <= 1 and len(b) <= 1:
        x, y = a[0] if a else 0, b[0] if b else 0
        if x is y:  # the usual step: an output as large as the input that stops being live
            return -1
        return -1 if D.at_most_termwise(x, y) else 1 if D.at_most_termwise(y, x) else 0
    tx, ty = _tally(a), _tally(b)
    return -1 if tx.at_most(ty) else 1 if ty.at_most(tx) else 0


def _tallies_at(born: list[list[Sized]], dies: list[list[Sized]], keep: list[int]) -> tuple[list[int], list[D.Tally]]:
    """The live bytes at each position of ``keep`` (ascending), as tallies: one running sum,
    each extent added where it becomes live and taken away after it stops, copied at ``keep``."""
    out: list[D.Tally] = []
    live = D.Tally()
    wanted = iter(keep)
    nxt = next(wanted, None)
    for i in range(len(born)):
        for d in born[i]:
            live.add(d)
        if i == nxt:
            out.append(live.copy())
            nxt = next(wanted, None)
        for d in dies[i]:
            live.add(d, -1)
    return keep, out


def _unbeaten(keep: list[int], tallies: list[D.Tally]) -> tuple[list[int], list[D.Tally]]:
    """The positions of ``keep`` that no other is shown, term by term, to be at least as large
    as, in one pass with a stack of those kept so far: each new one drops the kept ones it is at
    least, or is dropped by the last kept one. A dropped one is at most one kept at the time,
    which is dropped later if at all, so every dropped one is at most one kept at the end."""
    stack: list[int] = []
    for k, t in enumerate(tallies):
        while stack and tallies[stack[-1]].at_most(t):
            stack.pop()
        if stack and t.at_most(tallies[stack[-1]]):
            continue
        stack.append(k)
    return [keep[k] for k in stack], [tallies[k] for k in stack]


def _probe_points(terms: Iterable[Dim]) -> list[dict[str, int]]:
    """Bindings a candidate is evaluated at before a proof: every variable at 1, 2, 64, 1024,
    and each of the first few variables large with the others small and the reverse."""
    names = sorted({n for t in terms if D.is_symbolic(t) for n in D.free_names(t)})
    points = [dict.fromkeys(names, p) for p in (1024, 64, 2, 1)]
    for v in names[:6]:
        points += [{**dict.fromkeys(names, 1), v: 1024}, {**dict.fromkeys(names, 1024), v: 1}]
    unique = {tuple(p.values()): p for p in points}  # (two variables: each large alone, twice)
    return list(unique.values())


def _probe(term: Dim, points: Sequence[dict[str, int]]) -> tuple[int, ...]:
    """``term`` at each of ``points``. It decides nothing: it orders the candidates (largest
    first, so most are dropped after one comparison) and spares the prover pairs it cannot
    prove (a proof is tried only where ``a <= b`` at every point; skipping one keeps a
    candidate, which is always sound)."""
    if not D.is_symbolic(term):
        return (term,) * len(points)  # type: ignore[return-value]
    out = []
    for p in points:
        v = evaluated(term, p)
        out.append(v if type(v) is int else 0)
    return tuple(out)


def simplify_max(
    cands: Sequence[tuple[int, Dim]], scope: DimScope | None, probes: Sequence[tuple[int, ...]] | None = None
) -> Peak:
    """Candidates of a max, each proven at most another dropped (by ``scope``, the run's
    prover), within ``MAX_COMPARISONS`` and ``MAX_PROOFS``. ``probes``: the candidates' values
    at the ``_probe_points`` of them where the caller has them (else evaluated here)."""
    first: dict[Dim, int] = {}
    for i, t in cands:
        first.setdefault(t, i)
    if probes is None:
        points = _probe_points(first)
        at = {t: _probe(t, points) for t in first}
    else:
        at = {t: p for (_, t), p in zip(cands, probes)}
    order = sorted(first, key=at.__getitem__, reverse=True)
    kept: list[Dim] = []
    dominance = _Dominance(at, scope)
    for t in order:
        if dominance.pairs <= 0:
            kept.append(t)
            continue
        # Every kept candidate shown term by term first (it builds nothing), then proven.
        if any(dominance.shown(t, k) for k in kept) or any(dominance.proven(t, k) for k in kept):
            continue
        # A kept candidate comes before ``t`` in the order, so its probes are at least ``t``'s
        # (lexicographically): it is at most ``t`` at every probe only where they are equal.
        kept = [k for k in kept if at[k] != at[t] or not dominance.at_most(k, t)]
        kept.append(t)
    dropped = len(first) - len(kept)
    # Compared above with the run's prover, stronger than the canonical form's syntactic test.
    term = D.dmax_of(kept, compare=False) if kept else 0
    why = "" if term is not None else f"a max of {len(kept)} terms is past the bound of extent arithmetic"
    pairs = sorted(((first[t], t) for t in kept), key=lambda p: p[0])
    return Peak(term, pairs, why, dropped, dominance.pairs <= 0 or dominance.proofs <= 0)


class _Dominance:
    """Whether one candidate of the max is at most another, within ``MAX_COMPARISONS`` pairs
    looked at and ``MAX_PROOFS`` proofs asked of the prover (none after ``MAX_FAILED_IN_A_ROW``
    failed in a row)."""

    def __init__(self, probes: Mapping[Dim, tuple[int, ...]], scope: DimScope | None):
        self.probes, self.scope = probes, scope
        self.pairs, self.proofs = MAX_COMPARISONS, MAX_PROOFS
        self.failed = 0  # proofs failed since the last that succeeded

    def at_most(self, a: Dim, b: Dim) -> bool:
        """Is ``a <= b`` in every run of a valid model: ``shown``, else ``proven``?"""
        return self.shown(a, b) or self.proven(a, b)

    def _allowed(self, a: Dim, b: Dim) -> bool:
        self.pairs -= 1
        return all(map(operator.le, self.probes[a], self.probes[b]))

    def shown(self, a: Dim, b: Dim) -> bool:
        """``a <= b`` term by term (``D.at_most_termwise``, which builds nothing), tried only
        where the probes allow it."""
        return self._allowed(a, b) and D.at_most_termwise(a, b)

    def proven(self, a: Dim, b: Dim) -> bool:
        """``a <= b`` proven by the run's scope (``b < a`` in no run), tried only where the
        probes allow it, while proofs are left."""
        if self.proofs <= 0 or not self._allowed(a, b):
            return False
        proven = self._prove(a, b)
        self.failed = 0 if proven else self.failed + 1
        if self.failed >= MAX_FAILED_IN_A_ROW:
            self.proofs = 0
        return proven

    def _prove(self, a: Dim, b: Dim) -> bool:
        self.proofs -= 1
        if self.scope is None:
            return D.less(b, a) is False
        return self.scope.less(b, a) is False
