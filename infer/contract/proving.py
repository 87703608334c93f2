"""What a rule may ask of the extents of its run: bounds, order and equality proved from the
syntax and from what the run has learned (the run's scope is the one prover), exact quotients,
and where a variable was made. A facet of ``RuleContext``."""

from __future__ import annotations

from infer.contract.protocols import Walker
from infer.core import dims as D
from infer.core.dims import Dim
from infer.core.types import SparseTensorType, TensorType


class Proving:
    """Questions about extents, answered by the run's scope."""

    __slots__ = ()
    _walker: Walker

    def lower_bound(self, d: Dim) -> int | None:
        """The least value of ``d`` in a run of a valid model (what the run has required
        included: a window that must fit makes its axis at least the window)."""
        return self._walker.scope.lower_bound(d)

    def bounds(self, d: Dim) -> tuple[int | None, int | None]:
        """(lower, upper) bounds of ``d``, sharpened like ``lower_bound``; ``None`` where unknown."""
        return self._walker.scope.bounds(d)

    def equal(self, a: Dim, b: Dim) -> bool | None:
        """``True`` when ``a == b`` in every run of a valid model, ``False`` when in none, else
        ``None`` (what the run has required included: the one comparison rules use)."""
        return self._walker.scope.equal(a, b)

    def less(self, a: Dim, b: Dim) -> bool | None:
        """``a < b`` in every run of a valid model (``True``), in none (``False``), else ``None``."""
        return self._walker.scope.less(a, b)

    def exact(self, d: Dim) -> Dim:
        """``d`` with the quotients the model's validity makes exact (``require_multiple``)."""
        return self._walker.scope.exact(d)

    def is_fresh(self, d: Dim) -> bool:
        """Does ``d`` mention a fresh variable (an extent inference could not determine)?"""
        return self._walker.scope.is_fresh(d)

    def made_for_elements(self, d: Dim) -> bool:
        """Does ``d`` mention a fresh variable made at a value that is no tensor (an extent of a
        sequence's elements, which each element may have its own of), rather than one that came
        with a tensor (one extent for every element)?"""
        scope = self._walker.scope
        for name in D.free_names(d):
            var = scope.variable(name)
            if var is None or not var.is_fresh:
                continue
            origin = var.origin
            graph = origin.site.graph if origin.site is not None else "main"
            v = self._walker.recorded_value(graph, origin.value) if origin.value else None
            if v is None or not isinstance(v.type, (TensorType, SparseTensorType)):
                return True
        return False
