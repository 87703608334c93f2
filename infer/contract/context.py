"""What an inference rule sees of its node: ``RuleContext``, made of four facets: what it reads
of its node (``reading``), what it may ask of its run's extents (``proving``), what it does besides
computing its outputs (``effects``) and the graphs the node holds (``walking``).

A rule is ``rule(ctx) -> list`` with one entry per node output, each one of:

- a shape (tuple of dims; ``None`` dims are unknown): a tensor whose element type the schema
  decides;
- a ``Type`` (a tensor type with ``elem=None`` gets its element type from the schema);
- a ``Value`` (a type plus known contents);
- ``None``: nothing known beyond what the schema says.

Unknown dims become fresh variables with the reason the rule gave through ``because``.

A rule sees its node only through the context's methods. The walk and the checks, which made the
context, read the node and its site with ``node_of`` and ``site_of``; rules may not import those
(tests/test_architecture.py). What a rule does beyond computing its outputs goes through a
method that records it: a requirement or an assumption in ``replay`` (a reuse of the result at
another node redoes it there, ``replay_effects``), a report, a fresh or declared variable or a
subgraph walk in ``acted`` (the walk reuses no result of a rule that did any of it,
infer/walk/memo.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from onnx import NodeProto

from infer.contract.effects import Effecting, Effects, replay_effects
from infer.contract.protocols import Facts, RuleError, Walker
from infer.contract.proving import Proving
from infer.contract.reading import Reading
from infer.contract.signature import Signature
from infer.contract.walking import Walking
from infer.core.dimtable import Site
from infer.core.values import Value

__all__ = ["Facts", "RuleContext", "RuleError", "Walker", "node_of", "replay_effects", "site_of"]


class RuleContext(Reading, Proving, Effecting, Walking):
    """The node under inference, as a rule sees it."""

    __slots__ = (  # with Effecting's
        "_effects",
        "_frame",
        "_node",
        "_site",
        "_walker",
        "attrs",
        "inputs",
        "n_outputs",
        "opset",
        "sig",
        "version",
    )

    def __init__(
        self,
        node: NodeProto,
        site: Site | Callable[[], Site],
        sig: Signature | None,
        opset: int,
        inputs: list[Value | None],
        walker: Walker,
        frame: Any,
        attrs: dict[str, Any],
        effects: Effects | None = None,
    ):
        """``site``: the node's, or a function making it when first asked for (most nodes never
        need one). ``walker`` and ``frame`` (the graph being walked, opaque here) are for the
        walker's own calls back (``subgraph``); rules never read them. ``effects``: shared with
        the context this one is a view of (``view``)."""
        self._node = node
        self._site = site
        self._effects = Effects() if effects is None else effects
        self.sig = sig
        self.opset = opset
        self.version = sig.since_version if sig is not None else opset
        self.inputs = inputs
        self.n_outputs = len(node.output)
        self._walker = walker
        self._frame = frame
        self.attrs = attrs
        self._reason = None
        self._causes = ()

    def _where(self) -> Site:
        """The node in the model (graph path, position, name, operator, input types)."""
        s = self._site
        if not isinstance(s, Site):
            s = self._site = s()
        return s

    def view(self, indices: Sequence[int]) -> RuleContext:
        """This node as if its inputs were only ``indices`` of its own, in that order (a fused or
        quantized operator presenting its float counterpart's inputs to that one's rule)."""
        node = NodeProto()
        node.CopyFrom(self._node)
        del node.input[:]
        node.input.extend(self.input_name(i) for i in indices)
        inputs = [self.value(i) if self.has(i) else None for i in indices]
        return RuleContext(
            node, self._where(), self.sig, self.opset, inputs, self._walker, self._frame, self.attrs, self._effects
        )


def node_of(ctx: RuleContext) -> NodeProto:
    """The node a context presents (for the walk and the checks that made it; never for rules)."""
    return ctx._node


def site_of(ctx: RuleContext) -> Site:
    """The site of the node a context presents, made when first asked for (the walk's and the
    checks'; never for rules)."""
    return ctx._where()
