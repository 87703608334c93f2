"""Extents evaluated with every variable bound, integer arithmetic only: ``dims.evaluate`` and
``dims.tally_values`` (a monomial at a time) call these."""

from __future__ import annotations

from collections.abc import Mapping

from infer.core.dims.terms import FLOAT_KINDS, Expr, Mono, Op, Var, round_to_bits


def value(d: int | Expr, env: Mapping[str, int], memo: dict) -> int:
    """``d`` at ``env``, every variable bound: integer arithmetic only."""
    if type(d) is not Expr:
        return d
    total_ = d.const
    for m, c in d.terms:
        x = c
        for f, e in m.factors:
            v = env[f.name] if type(f) is Var else op_value(f, env, memo)
            x *= v if e == 1 else v**e
        total_ += x
    return total_


def op_value(f: Op, env: Mapping[str, int], memo: dict) -> int:
    """The operation ``f`` at ``env``, kept in ``memo`` (raises at a divisor of 0)."""
    v = memo.get(f)
    if v is None:
        args = [value(a, env, memo) for a in f.args]
        if f.kind == "floor":
            v = args[0] // args[1]  # a divisor of 0 raises: no run has one
        elif f.kind == "mod":
            v = args[0] % args[1]
        elif f.kind in FLOAT_KINDS:
            v = round_to_bits(args[0], FLOAT_KINDS[f.kind])
            if v is None:
                raise OverflowError(f"{f.kind} of {args[0]} is infinite")
        else:
            v = max(args) if f.kind == "max" else min(args)
        memo[f] = v
    return v


def mono_value(m: Mono, env: Mapping[str, int], memo: dict) -> int | None:
    """The monomial ``m`` at ``env``; ``None`` where a variable is not bound or it is undefined
    there (a floor by 0, a float past the largest)."""
    try:
        x = 1
        for f, e in m.factors:
            v = env[f.name] if type(f) is Var else op_value(f, env, memo)
            x *= v if e == 1 else v**e
        return x
    except (KeyError, ZeroDivisionError, OverflowError):
        return None
