"""Running one rule at one node: what it returns kept within what a tensor can be, its failures
reported, its symbolic extents within the run's expression bound."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from infer.contract.claims import within_bounds
from infer.contract.context import RuleContext, RuleError
from infer.core import diagnostics as diag
from infer.core.diagnostics import Diagnostic, Location
from infer.core.dims.budget import Budget, NodeTimeout, end_limit, start_limit
from infer.core.limits import Limits
from infer.core.scopes import GraphPath

DEBUG = bool(os.environ.get("ONNX_INFER_DEBUG"))
# A TypeError in a rule raised, not reported as `rule-crash`: where the build compiled with mypyc
# is tested (.ci/compiled), a value that contradicts a hint is such a TypeError, and must fail the
# test that met it rather than quietly leave outputs unknown.
RAISE_TYPE_ERRORS = bool(os.environ.get("ONNX_INFER_RAISE_TYPE_ERRORS"))

Report = Callable[..., None]  # (code, message, location, suggestion=None)


class RuleRunner:
    """Runs the rules of one walk."""

    def __init__(
        self,
        report: Report,
        diagnostics: Callable[[], list[Diagnostic]],
        limits: Limits,
        records: Callable[[], dict[str, Any]],
        budget: Budget,
    ):
        """``records``: the walk's graph records, of which a node that ran out of time drops
        those its rule had begun (a Loop body walked for some rounds only); ``budget``: the run's,
        whose refusals of extents for their size a rule's result is blamed for."""
        self.report = report
        self.diagnostics = diagnostics
        self.max_rank = limits.max_rank
        self.max_expression_size = limits.max_expression_size
        self.max_node_seconds = limits.max_node_seconds
        self.records = records
        self.budget = budget
        self._nested: list[int] = []  # size-limit refusals inside the rules running (a subgraph's)

    def run(self, fn: Callable[[RuleContext], Any], ctx: RuleContext, loc: Location) -> list[Any] | None:
        """``fn(ctx)``'s outputs; ``None`` where it failed (reported). A refusal of an extent for
        its size that this node made, not a subgraph it walked, is reported here, and so is a
        rule that ran past ``max_node_seconds``."""
        budget = self.budget
        before = budget.refused
        self._nested.append(0)
        level = start_limit(self.max_node_seconds)
        try:
            return self._guarded(fn, ctx, loc)
        except NodeTimeout as e:
            if e.level != level:
                raise  # an enclosing node's time is up, not this one's
            self._timed_out(ctx, loc)
            return None
        finally:
            end_limit()
            inner = self._nested.pop()
            total = budget.refused - before
            if self._nested:
                self._nested[-1] += total
            if total > inner:
                limit = self.max_expression_size
                if ctx.reason is None:
                    ctx.because(f"its symbolic extent would grow past {limit} terms (limit max_expression_size)")
                self.diagnostics().append(
                    diag.make(
                        "limit",
                        f"{ctx.op_type}: a symbolic extent grew past {limit} terms (max_expression_size); "
                        "it is left unknown",
                        loc,
                        severity=diag.WARNING,
                    )
                )

    def _timed_out(self, ctx: RuleContext, loc: Location) -> None:
        # What the rule's subgraph walks recorded holds only the part walked before the time ran
        # out (one round of a Loop's body): dropped, like everything the rule would have given.
        records = self.records()
        for path in [p for p in records if GraphPath(p).inside_node(loc.graph, loc.node_index)]:
            del records[path]
        seconds = f"{self.max_node_seconds:g}"
        ctx.because(f"its inference ran past {seconds} s (limit max_node_seconds)")
        self.diagnostics().append(
            diag.make(
                "limit",
                f"{ctx.op_type}: inference of this node took longer than {seconds} s (max_node_seconds); its "
                "outputs are left unknown",
                loc,
                severity=diag.WARNING,
            )
        )

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
            if DEBUG or (RAISE_TYPE_ERRORS and isinstance(e, TypeError)):
                raise
            self.report("rule-crash", f"rule for {ctx.op_type} failed: {type(e).__name__}: {e}", loc)
            ctx.because("its inference rule failed")
        return None
