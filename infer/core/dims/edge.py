"""The edge to sympy: an extent converted for a caller that asks for a sympy expression.

Nothing inside onnx-infer computes with sympy; this is the one module that imports it, and only
when a conversion is asked for (``to_sympy``), so that importing ``infer`` does not. Variables
become integer symbols, positive for declared ones and non-negative for fresh ones;
``floor(a/b)``, ``mod``, ``max`` and ``min`` become sympy's ``floor``, ``Mod``, ``Max`` and
``Min`` (which sympy may rewrite as it likes: the converted expression is the caller's);
``float32(a)`` and ``float64(a)`` become applications of undefined functions of those names.
"""

from __future__ import annotations

from typing import Any

from infer.core.dims.terms import Expr, Op, Var


def to_sympy(d: int | Expr | None) -> Any:
    """``d`` as a sympy expression (``None`` stays ``None``)."""
    if d is None:
        return None
    import sympy

    memo: dict[Any, Any] = {}

    def factor(f: Var | Op) -> Any:
        out = memo.get(f)
        if out is None:
            if type(f) is Var:
                out = (
                    sympy.Symbol(f.name, integer=True, positive=True)
                    if f.positive
                    else sympy.Symbol(f.name, integer=True, nonnegative=True)
                )
            else:
                args = [expr(a) for a in f.args]
                if f.kind == "floor":
                    out = sympy.floor(args[0] / args[1])
                elif f.kind == "mod":
                    out = sympy.Mod(args[0], args[1])
                elif f.kind in ("float32", "float64"):
                    out = sympy.Function(f.kind, integer=True)(args[0])
                else:
                    out = (sympy.Max if f.kind == "max" else sympy.Min)(*args)
            memo[f] = out
        return out

    def expr(e: int | Expr) -> Any:
        if type(e) is not Expr:
            return sympy.Integer(e)
        terms = [sympy.Integer(c) * sympy.Mul(*(factor(f) ** x for f, x in m.factors)) for m, c in e.terms]
        return sympy.Add(*terms, sympy.Integer(e.const))

    return expr(d)
