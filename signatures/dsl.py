"""A one-line language for operators that are pure shape algebra.

    "A[*a, n, k], B[*b, k, m] -> Y[*broadcast(a, b), n, m]"

Inputs, left of ``->``, are matched in order against the node's inputs:

- ``name`` binds one dim; a name used twice requires equal extents (a contradiction is reported,
  an unprovable equality is recorded as an assumption);
- ``*name`` binds the remaining dims (at most one per input);
- an integer requires that extent; ``_`` matches any one dim;
- ``B?[...]`` marks an optional input; ``_`` alone skips an input entirely.

Outputs, right of ``->``, are shapes built from the bound names:

- ``*name`` splices a bound list, ``*broadcast(a, b, ...)`` broadcasts bound lists (Clause 6.6);
- any other item is an integer expression over bound dims and integer attributes of the node
  (a name not bound by an input is read as an attribute): ``+ - * // %``, ``max``, ``min``,
  ``ceil_div``; ``Y`` without brackets means its shape is not known.

Several forms are tried in order (a list of strings, or ``|`` between them); the first whose
input ranks fit wins. Element types are not written: they come from the schema.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from infer import dims as D
from infer.context import RuleContext, RuleError
from infer.dims import Dim

from .helpers import broadcast

Env = dict[str, Any]
_NO_MATCH = object()


@dataclass(frozen=True)
class _InPattern:
    optional: bool
    skip: bool
    items: tuple[str, ...] | None  # None: any shape (no brackets)


@dataclass(frozen=True)
class _OutPattern:
    build: Callable[[RuleContext, Env], tuple[Dim, ...] | None]


_TENSOR_RE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)?\s*(\?)?\s*(?:\[(.*)\])?\s*$", re.S)


def _split_top(s: str, sep: str = ",") -> list[str]:
    """Split at ``sep`` outside brackets and parentheses."""
    out, depth, cur = [], 0, []
    for ch in s:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == sep and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur))
    return [p.strip() for p in out]


def _parse_tensor(src: str) -> tuple[str, bool, list[str] | None]:
    m = _TENSOR_RE.match(src)
    if not m:
        raise ValueError(f"bad tensor pattern {src!r}")
    name, opt, body = m.groups()
    items = None if body is None else _split_top(body)
    return name or "_", bool(opt), items


# -- output expressions -------------------------------------------------------------------------

_BINOPS: dict[type, Callable[[Dim, Dim], Dim]] = {
    ast.Add: D.add,
    ast.Sub: D.sub,
    ast.Mult: D.mul,
    ast.FloorDiv: D.floordiv,
    ast.Mod: D.mod,
}
_CALLS: dict[str, Callable[..., Dim]] = {
    "max": D.dmax,
    "min": D.dmin,
    "ceil_div": D.ceildiv,
}


def _lookup(ctx: RuleContext, env: Env, name: str) -> Any:
    if name in env:
        return env[name]
    v = ctx.attr(name)
    if v is None:
        raise RuleError("bad-attribute", f"{ctx.op_type} needs attribute '{name}'")
    return v


def _compile_expr(node: ast.AST) -> Callable[[RuleContext, Env], Dim]:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        value = node.value
        return lambda ctx, env: value
    if isinstance(node, ast.Name):
        name = node.id
        return lambda ctx, env: _lookup(ctx, env, name)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _compile_expr(node.operand)
        return lambda ctx, env: D.neg(inner(ctx, env))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        op = _BINOPS[type(node.op)]
        left, right = _compile_expr(node.left), _compile_expr(node.right)
        return lambda ctx, env: op(left(ctx, env), right(ctx, env))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _CALLS:
        fn = _CALLS[node.func.id]
        args = [_compile_expr(a) for a in node.args]
        return lambda ctx, env: fn(*(a(ctx, env) for a in args))
    raise ValueError(f"unsupported expression {ast.dump(node)}")


def _compile_item(src: str) -> Callable[[RuleContext, Env], list[Dim]]:
    if src.startswith("*"):
        body = src[1:].strip()
        call = re.fullmatch(r"broadcast\((.*)\)", body)
        if call:
            names = [n.strip() for n in call.group(1).split(",")]

            def splice_broadcast(ctx: RuleContext, env: Env) -> list[Dim]:
                out = broadcast(ctx, *(env[n] for n in names))
                if out is None:
                    raise _UnknownRank
                return list(out)

            return splice_broadcast
        return lambda ctx, env: list(env[body])
    expr = _compile_expr(ast.parse(src, mode="eval").body)
    return lambda ctx, env: [expr(ctx, env)]


class _UnknownRank(Exception):
    pass


def _compile_output(src: str) -> _OutPattern:
    _, _, items = _parse_tensor(src)
    if items is None:
        return _OutPattern(lambda ctx, env: None)
    parts = [_compile_item(i) for i in items]

    def build(ctx: RuleContext, env: Env) -> tuple[Dim, ...] | None:
        out: list[Dim] = []
        try:
            for p in parts:
                out.extend(p(ctx, env))
        except _UnknownRank:
            return None
        return tuple(out)

    return _OutPattern(build)


# -- matching -----------------------------------------------------------------------------------


def _unify(ctx: RuleContext, env: Env, name: str, d: Dim) -> None:
    if name == "_":
        return
    if name not in env:
        env[name] = d
        return
    prev = env[name]
    eq = D.equal(prev, d)
    if eq is True:
        return
    if eq is False:
        ctx.error(
            "shape-mismatch",
            f"{ctx.op_type} with inputs {ctx.input_types_str()}: dimension '{name}' is "
            f"{D.to_str(prev)} in one place and {D.to_str(d)} in another",
        )
        return
    if prev is None or (isinstance(d, int) and not isinstance(prev, int)):
        if prev is not None:
            ctx.assume(f"{D.to_str(prev)} == {D.to_str(d)} ({ctx.op_type} dimension '{name}')", (prev, d))
        env[name] = d
    elif d is not None:
        ctx.assume(f"{D.to_str(prev)} == {D.to_str(d)} ({ctx.op_type} dimension '{name}')", (prev, d))


def _match_input(ctx: RuleContext, env: Env, pat: _InPattern, shape: tuple[Dim, ...]) -> bool:
    items = pat.items
    assert items is not None
    stars = [i for i, it in enumerate(items) if it.startswith("*")]
    if len(stars) > 1:
        raise ValueError("at most one *name per input")
    fixed = len(items) - len(stars)
    if (stars and len(shape) < fixed) or (not stars and len(shape) != fixed):
        return False
    pos = 0
    for it in items:
        if it.startswith("*"):
            n = len(shape) - fixed
            seg = list(shape[pos : pos + n])
            name = it[1:].strip()
            if name in env:
                prev = env[name]
                if len(prev) != len(seg):
                    return False
                merged = {}
                for j, d in enumerate(seg):
                    merged[str(j)] = prev[j]
                    _unify(ctx, merged, str(j), d)
                env[name] = [merged[str(j)] for j in range(len(seg))]
            else:
                env[name] = seg
            pos += n
            continue
        d = shape[pos]
        pos += 1
        if re.fullmatch(r"-?\d+", it):
            want = int(it)
            if D.equal(d, want) is False:
                ctx.error(
                    "shape-mismatch",
                    f"{ctx.op_type} with inputs {ctx.input_types_str()}: expected extent {want}, got {D.to_str(d)}",
                )
            continue
        _unify(ctx, env, it, d)
    return True


@dataclass(frozen=True)
class _Form:
    inputs: tuple[_InPattern, ...]
    outputs: tuple[_OutPattern, ...]

    def apply(self, ctx: RuleContext) -> Any:
        # First check ranks without side effects, so a form that does not fit reports nothing.
        for i, pat in enumerate(self.inputs):
            if pat.skip or pat.items is None:
                continue
            if not ctx.has(i):
                if pat.optional:
                    continue
                return _NO_MATCH
            shape = ctx.shape(i)
            if shape is None or not _rank_fits(pat.items, len(shape)):
                return _NO_MATCH
        env: Env = {}
        for i, pat in enumerate(self.inputs):
            if pat.skip or pat.items is None or not ctx.has(i):
                continue
            if not _match_input(ctx, env, pat, ctx.shape(i)):  # type: ignore[arg-type]
                return _NO_MATCH
        return [o.build(ctx, env) for o in self.outputs]


def _rank_fits(items: tuple[str, ...], rank: int) -> bool:
    stars = sum(1 for it in items if it.startswith("*"))
    fixed = len(items) - stars
    return rank >= fixed if stars else rank == fixed


def _compile_form(src: str) -> _Form:
    lhs, arrow, rhs = src.partition("->")
    if not arrow:
        raise ValueError(f"pattern needs '->': {src!r}")
    ins = []
    for part in _split_top(lhs):
        name, opt, items = _parse_tensor(part)
        ins.append(_InPattern(opt, name == "_" and items is None, None if items is None else tuple(items)))
    outs = tuple(_compile_output(p) for p in _split_top(rhs))
    return _Form(tuple(ins), outs)


def compile_pattern(src: str | Sequence[str]) -> Callable[[RuleContext], list[Any]]:
    """Compile a pattern (or several forms) into a rule function."""
    sources = _split_top(src, "|") if isinstance(src, str) else list(src)
    forms = [_compile_form(s) for s in sources]

    def dsl_rule(ctx: RuleContext) -> list[Any]:
        for form in forms:
            out = form.apply(ctx)
            if out is not _NO_MATCH:
                return out
        if all(ctx.rank(i) is not None for i in range(ctx.n_inputs) if ctx.has(i)):
            ctx.error(
                "shape-mismatch",
                f"{ctx.op_type} with inputs {ctx.input_types_str()}: no form of the operator "
                f"takes inputs of these ranks",
            )
        else:
            ctx.because("an input has unknown rank")
        return [None] * ctx.n_outputs

    dsl_rule.__doc__ = " | ".join(sources)
    return dsl_rule
