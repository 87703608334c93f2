"""Control flow: If (Clause 7.6). Loop and Scan arrive with the subgraph work (issue 5)."""

from __future__ import annotations

from infer import types as T
from infer.context import RuleContext
from infer.values import Value

from ..registry import rule


@rule("If")
def if_(ctx: RuleContext) -> list:
    """A condition known at inference time selects its branch; otherwise the branches join."""
    cond = ctx.known(0)
    c = cond.scalar() if cond is not None else None
    if isinstance(c, (bool, int, float)) and not isinstance(c, str):
        chosen = ctx.subgraph("then_branch" if c else "else_branch", [])
        return list(chosen) if chosen is not None else [None] * ctx.n_outputs
    then = ctx.subgraph("then_branch", [])
    other = ctx.subgraph("else_branch", [])
    if then is None or other is None:
        return [None] * ctx.n_outputs
    if len(then) != len(other) or len(then) != ctx.n_outputs:
        ctx.error(
            "arity",
            f"If has {ctx.n_outputs} outputs, its branches {len(then)} and {len(other)}",
        )
    ctx.because("the branches of If give different extents and the condition is not known")
    out = []
    for a, b in zip(then, other):
        out.append(Value(T.join(a.type, b.type)))
    return out
