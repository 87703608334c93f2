"""What a rule does besides computing its outputs: requirements and assumptions (kept with a
reusable result and redone where it is reused, ``replay_effects``), fresh variables, reasons,
reports and declared types (which no reuse could redo, ``acted``). A facet of ``RuleContext``."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from onnx import NodeProto, TypeProto

from infer.contract.protocols import Walker
from infer.core.dims import Dim
from infer.core.dimscope import DimScope
from infer.core.dimtable import Origin, Site
from infer.core.types import Type


class Effects:
    """What a rule did besides computing its outputs, shared by a context and its views:
    ``acted`` (what a reuse of its result could not redo) and ``replay`` (what it redoes)."""

    __slots__ = ("acted", "replay")

    def __init__(self) -> None:
        self.acted = False
        self.replay: list[tuple[str, tuple, dict[str, Any]]] = []


class Effecting:
    """The effects of a rule, each recorded for the memo (``acted``, ``replay``)."""

    __slots__ = ("_causes", "_reason")  # the one facet with slots of its own: what only it sets
    _node: NodeProto
    _effects: Effects
    _walker: Walker
    _reason: str | None
    _causes: tuple[str, ...]
    _where: Callable[[], Site]
    input_name: Callable[[int], str]
    input_types_str: Callable[[], str]

    def _acting(self) -> Site:
        """The site of an effect the rule is about to have that a reuse of its result could not
        redo (``acted``)."""
        self._effects.acted = True
        return self._where()

    def _replayed(self, method: str, args: tuple, **kw: Any) -> None:
        """Have the scope's ``method`` (a requirement, an assumption) at this node, and record it
        for a reuse of this result to redo at its own node (``replay``)."""
        self._effects.replay.append((method, args, kw))
        getattr(self._walker.scope, method)(*args, site=self._where(), **kw)

    @property
    def acted(self) -> bool:
        """Has the rule reported, made or declared a variable, or walked a subgraph?"""
        return self._effects.acted

    @property
    def replay(self) -> tuple[tuple[str, tuple, dict[str, Any]], ...]:
        """The requirements and assumptions the rule made, as (scope method, arguments,
        keywords): what a reuse of its result redoes (``replay_effects``)."""
        return tuple(self._effects.replay)

    @property
    def reason(self) -> str | None:
        """Why this node's unknown extents are unknown, as the rule said (``because``)."""
        return self._reason

    @property
    def causes(self) -> tuple[str, ...]:
        """The inputs responsible for ``reason``."""
        return self._causes

    def because(self, reason: str, *inputs: int) -> None:
        """Why this node's unknown extents are unknown; ``inputs`` name the inputs responsible."""
        self._reason = reason
        self._causes = tuple(self.input_name(i) for i in inputs if self.input_name(i))

    def contents_unknown(self, i: int, what: str) -> None:
        """The usual reason: ``what`` is read from input ``i`` whose contents are not known."""
        name = self.input_name(i)
        self.because(f"{what} comes from `{name}`, whose contents are not known", i)

    def because_of(self, other: Effecting) -> None:
        """Take the reason another context (a ``view`` of this node) was given."""
        self._reason, self._causes = other._reason, other._causes

    def require_at_least(self, d: Dim, value: int, why: str) -> None:
        """A model that runs has ``d >= value`` here (a window fits its axis): listed in
        ``result.assumptions``, and it sharpens ``lower_bound`` from now on."""
        self._replayed("require_at_least", (d, value), why=why)

    def require_multiple(self, d: Dim, k: Dim, why: str) -> None:
        """A model that runs has ``k`` dividing ``d`` here (a Reshape's element count): listed as
        ``mod(d, k) == 0``, and ``exact`` uses it."""
        self._replayed("require_multiple", (d, k), why=why)

    def require_at_most(self, d: Dim, value: int, why: str, every_run: bool = True) -> None:
        """A model that runs has ``d <= value`` here (an index within its axis): listed in the
        model's domain; ``every_run`` false where only some values of the inputs need it (the
        bound is what every value needs)."""
        self._replayed("require_at_most", (d, value), why=why, every_run=every_run)

    def require_broadcast(self, ds: Sequence[Dim], text: str, why: str = "broadcast") -> None:
        """A model that runs has the extents ``ds`` broadcast (each 1 or equal to the others):
        listed in the domain; ``text`` is the assumption ``explain`` shows."""
        self._replayed("require_broadcast", (tuple(ds), text), why=why)

    def require_equal(self, a: Dim, b: Dim, text: str, why: str) -> None:
        """A model that runs has ``a == b`` here (a MatMul's inner extents): listed in the domain."""
        self._replayed("require_equal", (a, b, text), why=why)

    def require_unexpressed(self, text: str, reason: str) -> None:
        """A model that runs needs ``text``, which no constraint over extents states (the values
        of computed indices): listed in the domain as not expressed, with ``reason``."""
        self._replayed("require_unexpressed", (text, reason))

    def runtime_requires_at_least(self, d: Dim, value: int, why: str) -> None:
        """onnxruntime runs this node only where ``d >= value``, which the definition does not
        require: a runtime's requirement in the domain; ``lower_bound`` does not use it."""
        self._replayed("runtime_requires_at_least", (d, value), why=why)

    def refused_by_runtime(self, text: str) -> None:
        """onnxruntime refuses this node although the definition allows it (``text`` says why):
        a ``runtime-refuses`` warning, and a runtime's requirement in the domain (the model
        runs nowhere there). Inference goes on with the definition's outputs."""
        self._walker.scope.refused_by_runtime(text, self._acting())
        message = f"{self._node.op_type} with inputs {self.input_types_str()}: {text}; the definition allows it"
        self._walker.report_at(self._where(), "runtime-refuses", message)

    def fresh(
        self,
        reason: str,
        key: tuple = (),
        value: str | None = None,
        axis: int | None = None,
        causes: tuple[str, ...] = (),
    ) -> Dim:
        """A fresh variable of this node for an extent it cannot determine, with ``reason``; the
        same ``key`` at this node gives the same variable (a subgraph walked again)."""
        site = self._acting()
        origin = Origin("fresh", reason, site, value, axis, causes)
        return self._walker.scope.fresh(origin, key=(*site.key, *key))

    def error(self, code: str, message: str, suggestion: str | None = None) -> None:
        """Report a contradiction found at this node (e.g. extents 3 and 4 cannot broadcast)."""
        self._walker.report_at(self._acting(), code, message, suggestion)

    def assume(self, text: str, dims: Sequence[Dim] = ()) -> None:
        self._replayed("assume", (text, tuple(dims)))

    def assume_range(self, d: Dim, lower: int | None, upper: int | None, why: str) -> None:
        """Record that this node's claims assume ``lower <= d <= upper`` (``result.assumptions``)."""
        self._replayed("assume_range", (d, lower, upper), why=why)

    def declared_type(self, tp: TypeProto, value: str) -> Type:
        """A type the model writes (a TypeProto attribute), its dim names read as declarations
        (which may name variables: an effect)."""
        self._effects.acted = True
        return self._walker.declared_type(tp, value)

    @contextmanager
    def reporting_once(self) -> Iterator[None]:
        """Within the block, a diagnostic reported again (by the first and the final walk of a
        fixed point) is kept once."""
        with self._walker.reporting_once():
            yield


def replay_effects(scope: DimScope, effects: Sequence[tuple[str, tuple, dict[str, Any]]], site: Site) -> None:
    """Redo at ``site`` the requirements and assumptions a rule made at another node whose
    result is reused here (``RuleContext.replay``)."""
    for method, args, kw in effects:
        getattr(scope, method)(*args, site=site, **kw)
