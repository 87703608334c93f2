"""Reading dims written as text: the one reader of what ``dims.to_str`` writes.

``3``, ``N``, ``seq + 5``, ``floor((h - 3)/2) + 1``, ``max(N, M)``, ``min(S, 64)``, ``mod(a, 4)``,
``seq**2``, ``ceil_div(H, 2)``, ``float32(h)``, and `` `past sequence` ``: a variable whose name
is no identifier, written in backquotes inside an expression so that it reads back as one
variable (a backquote in such a name is doubled). ``compile_dim`` parses once and gives a
function of a name lookup, so a pattern compiled at import time can be evaluated against each
node's variables.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from functools import lru_cache

from infer.core import dims as D
from infer.core.dims import Dim

Lookup = Callable[[str], Dim]
Compiled = Callable[[Lookup], Dim]

_QUOTED = re.compile(r"`((?:[^`]|``)*)`")
_PLACEHOLDER = "__dim_quoted_{}__"

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
    "mod": D.mod,
    "ceil_div": D.ceildiv,
    "float32": lambda a: D.to_float(a, 24),
    "float64": lambda a: D.to_float(a, 53),
}


def split_top(text: str, sep: str = ",") -> list[str]:
    """``text`` split at each ``sep`` outside parentheses and brackets (``N, C*H, W``, the dims of
    ``float[N,max(a, b)]``), each part stripped; a blank last part is dropped (``""`` has none).
    The one splitter of dim lists written as text."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == sep and depth == 0:
            out.append(text[start:i].strip())
            start = i + 1
    last = text[start:].strip()
    if last:
        out.append(last)
    return out


def is_identifier(name: str) -> bool:
    return D.quote_name(name) == name


@lru_cache(maxsize=4096)
def compile_dim(src: str) -> Compiled:
    """Parse ``src`` once; ``ValueError`` if it is no dim expression."""
    quoted: list[str] = []

    def hold(m: re.Match[str]) -> str:
        quoted.append(m.group(1).replace("``", "`"))
        return _PLACEHOLDER.format(len(quoted) - 1)

    text = _QUOTED.sub(hold, src.strip())
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError:
        raise ValueError(f"cannot read dim {src!r}") from None
    names = {_PLACEHOLDER.format(i): q for i, q in enumerate(quoted)}
    return _compile(tree, names, src)


def parse_dim(src: str, lookup: Lookup) -> Dim:
    """``src`` as a dim, its variables resolved by ``lookup``; ``?`` is unknown."""
    if src.strip() == "?":
        return None
    return compile_dim(src)(lookup)


def names_in(src: str) -> set[str] | None:
    """The variable names ``src`` mentions, or ``None`` if it is no dim expression."""
    seen: set[str] = set()

    def record(name: str) -> Dim:
        seen.add(name)
        return 1

    try:
        compile_dim(src)(record)
    except (ValueError, TypeError):
        return None
    return seen


def _compile(node: ast.AST, names: dict[str, str], src: str) -> Compiled:
    def sub(n: ast.AST) -> Compiled:
        return _compile(n, names, src)

    if isinstance(node, ast.Constant) and type(node.value) is int:
        value = node.value
        return lambda lookup: value
    if isinstance(node, ast.Name):
        name = names.get(node.id, node.id)
        return lambda lookup: lookup(name)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = sub(node.operand)
        if isinstance(node.op, ast.UAdd):
            return inner
        return lambda lookup: D.neg(inner(lookup))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        base, exp = sub(node.left), node.right
        if isinstance(exp, ast.Constant) and type(exp.value) is int and 0 <= exp.value <= 64:
            k = exp.value
            return lambda lookup: _power(base(lookup), k)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        op, left, right = _BINOPS[type(node.op)], sub(node.left), sub(node.right)
        return lambda lookup: op(left(lookup), right(lookup))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        fn = node.func.id
        if fn == "floor" and len(node.args) == 1:
            arg = node.args[0]
            if isinstance(arg, ast.BinOp) and isinstance(arg.op, ast.Div):  # floor(a/b): how FloorDiv prints
                a, b = sub(arg.left), sub(arg.right)
                return lambda lookup: D.floordiv(a(lookup), b(lookup))
            return sub(arg)
        if fn in _CALLS and node.args:
            f, args = _CALLS[fn], [sub(a) for a in node.args]
            if fn in ("max", "min"):
                return lambda lookup: _fold(f, [a(lookup) for a in args])
            return lambda lookup: f(*(a(lookup) for a in args))
    raise ValueError(f"cannot read dim {src!r}")


def _power(d: Dim, k: int) -> Dim:
    out: Dim = 1
    for _ in range(k):
        out = D.mul(out, d)
    return out


def _fold(f: Callable[[Dim, Dim], Dim], ds: list[Dim]) -> Dim:
    out = ds[0]
    for d in ds[1:]:
        out = f(out, d)
    return out
