"""Running one rule at one node: what it returns kept within what a tensor can be, its failures
reported, its symbolic extents within the run's expression bound."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from . import diagnostics as diag
from . import dims as D
from .claims import within_bounds
from .context import RuleContext, RuleError
from .diagnostics import Diagnostic, Location

DEBUG = bool(os.environ.get("ONNX_INFER_DEBUG"))

Report = Callable[..., None]  # (code, message, location, suggestion=None)


class RuleRunner:
    """Runs the rules of one walk."""

    def __init__(self, report: Report, diagnostics: Callable[[], list[Diagnostic]], max_rank: int,
                 max_expression_size: int):  # fmt: skip
        self.report = report
        self.diagnostics = diagnostics
        self.max_rank = max_rank
        self.max_expression_size = max_expression_size
        self._nested: list[int] = []  # size-limit refusals inside the rules running (a subgraph's)

    def run(self, fn: Callable[[RuleContext], Any], ctx: RuleContext, loc: Location) -> list[Any] | None:
        """``fn(ctx)``'s outputs; ``None`` where it failed (reported). A refusal of an extent for
        its size that this node made, not a subgraph it walked, is reported here."""
        before = D.overflow_count()
        self._nested.append(0)
        try:
            return self._guarded(fn, ctx, loc)
        finally:
            inner = self._nested.pop()
            total = D.overflow_count() - before
            if self._nested:
                self._nested[-1] += total
            if total > inner:
                limit = self.max_expression_size
                if ctx.reason is None:
                    ctx.because(f"its symbolic extent would grow past {limit} terms (limit max_expression_size)")
                self.diagnostics().append(diag.make(
                    "limit", f"{ctx.op_type}: a symbolic extent grew past {limit} terms (max_expression_size); "
                    "it is left unknown", loc, severity=diag.WARNING,
                ))  # fmt: skip

    def _guarded(self, fn: Callable[[RuleContext], Any], ctx: RuleContext, loc: Location) -> list[Any] | None:
        try:
            out = fn(ctx)
            if out is None:
                return None
            # What no tensor can be (a rank past the limit, an extent past int64 or below 0) is
            # left unknown and reported here, for every rule at once.
            out, problems = within_bounds(list(out), self.max_rank)
            for code, message in problems:
                self.report(code, f"{ctx.op_type} with inputs {ctx.input_types_str()}: {message}", loc)
            if problems and ctx.reason is None:
                ctx.because(problems[0][1])
            return out
        except RuleError as e:
            self.report(e.code, f"{ctx.op_type} with inputs {ctx.input_types_str()}: {e}", loc, e.suggestion)
            ctx.because(f"the node is malformed: {e}")
        except Exception as e:  # a bug in a rule must not stop the walk: report it, go on
            if DEBUG:
                raise
            self.report("rule-crash", f"rule for {ctx.op_type} failed: {type(e).__name__}: {e}", loc)
            ctx.because("its inference rule failed")
        return None
