"""The graphs a node holds: walking a graph attribute with given inputs (If, Loop, Scan and
function bodies), and where a variable was made. A facet of ``RuleContext``."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from infer.contract.effects import Effects
from infer.contract.protocols import Walker
from infer.core.dimtable import Site
from infer.core.scopes import GraphPath
from infer.core.values import Value


class Walking:
    """Subgraph walks through the walker."""

    __slots__ = ()
    _effects: Effects
    _walker: Walker
    _where: Callable[[], Site]

    def subgraph(
        self, attr_name: str, inputs: Sequence[Value], quiet: bool = False, iterated: bool = False
    ) -> list[Value] | None:
        """Infer the graph attribute ``attr_name`` with ``inputs`` bound to its inputs.

        ``quiet`` drops what this walk reports (a round of a fixed point that is walked again);
        ``iterated``: the graph runs once per iteration or element, so a dim name declared in
        it is not read as one extent for every iteration.
        """
        self._effects.acted = True
        return self._walker.walk_subgraph(self, attr_name, list(inputs), quiet, iterated)

    def made_inside(self, name: str, attr_name: str) -> bool:
        """Was variable ``name`` made fresh by a node inside the graph attribute ``attr_name``
        (in it or in a graph nested in it)?"""
        var = self._walker.scope.variable(name)
        if var is None or not var.is_fresh or var.origin.site is None:
            return False
        site = self._where()
        path = GraphPath(site.graph).subgraph(site.node_index or 0, attr_name)
        return GraphPath(var.origin.site.graph).within(path)
