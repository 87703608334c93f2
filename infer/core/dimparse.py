"""Reading dims written as text: the one reader of what ``dims.to_str`` writes, and of what a
declared ``dim_param`` may denote.

``3``, ``N``, ``seq + 5``, ``floor((h - 3)/2) + 1``, ``max(N, M)``, ``min(S, 64)``, ``mod(a, 4)``,
``seq**2``, ``ceil_div(H, 2)``, ``float32(h)``, and `` `past sequence` ``: a variable whose name
is no identifier, written in backquotes inside an expression so that it reads back as one
variable (a backquote in such a name is doubled). ``compile_dim`` parses once and gives a
function of a name lookup, so a pattern compiled at import time can be evaluated against each
node's variables. A variable is named by its exact text: Python's parser folds identifiers to
NFKC (``Ｎ`` and ``N``, ``ﬁ`` and ``fi``), this reader does not.

``read_name`` is the policy for a declared name that is no identifier (docs/architecture.md,
"Declared names"): it denotes the expression it spells only when that is a positive term that
is neither a constant nor one variable alone; otherwise it is one opaque variable.
"""

from __future__ import annotations

import ast
import re
import unicodedata
from collections.abc import Callable
from functools import lru_cache

from infer.core import dims as D
from infer.core.dims import Dim

Lookup = Callable[[str], Dim]
Compiled = Callable[[Lookup], Dim]

_QUOTED = re.compile(r"`((?:[^`]|``)*)`")
MAX_DEPTH = 200  # nesting a dim's text may have: deeper text is no dim (the parser and ours recurse)
# A declared name read as an expression is at most this long, and its least value is below
# INT32_MAX: symbolic extents are below 2^31 - 1 (docs/architecture.md, "Soundness").
MAX_NAME_TEXT = 1024
_LEAST_LIMIT = (1 << 31) - 1

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
    """Parse ``src`` once; ``ValueError`` if it is no dim expression (a comment, a line break or a
    control character outside backquotes, nesting past ``MAX_DEPTH``)."""
    quoted: list[str] = []
    # The placeholders must not be text ``src`` holds (a name ``__dim_quoted_0__`` is its own).
    mark = "__dim_quoted"
    while mark in src:
        mark += "_"
    placeholder = mark + "_{}__"

    def hold(m: re.Match[str]) -> str:
        quoted.append(m.group(1).replace("``", "`"))
        return f" {placeholder.format(len(quoted) - 1)} "  # a token of its own: `a`b is no name

    text = _QUOTED.sub(hold, src).strip()
    if any(ch in "#\\" or unicodedata.category(ch) == "Cc" for ch in text):
        raise ValueError(f"cannot read dim {src!r}")
    try:
        tree = ast.parse(text, mode="eval").body
        if _depth(tree) > MAX_DEPTH:
            raise SyntaxError
    except (SyntaxError, RecursionError, MemoryError):
        raise ValueError(f"cannot read dim {src!r}") from None
    names = {placeholder.format(i): q for i, q in enumerate(quoted)}
    return _compile(tree, _Source(text, names), src)


def _depth(tree: ast.AST) -> int:
    """How deep ``tree`` nests, without recursion."""
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, d = stack.pop()
        deepest = max(deepest, d)
        stack.extend((child, d + 1) for child in ast.iter_child_nodes(node))
    return deepest


class _Source:
    """The text parsed, and what its placeholders stand for: a name is read as written."""

    def __init__(self, text: str, quoted: dict[str, str]):
        self.text, self.quoted = text, quoted

    def name(self, node: ast.Name) -> str:
        """The variable ``node`` names: a quoted name, else the identifier as written (the
        parser's ``id`` is NFKC-folded; two texts that differ are two variables)."""
        if node.id in self.quoted:
            return self.quoted[node.id]
        return ast.get_source_segment(self.text, node) or node.id

    def written(self, node: ast.Name) -> bool:
        """Is the identifier written as the parser reads it (no fullwidth ``ｍａｘ``)?"""
        return ast.get_source_segment(self.text, node) == node.id


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
    except (ValueError, TypeError, ArithmeticError, RecursionError):
        return None
    return seen


def read_name(name: str, lookup: Lookup) -> Dim:
    """The expression a declared ``dim_param`` ``name`` stands for, its parts resolved by
    ``lookup`` (which raises ``KeyError`` for a part that may not be read), or ``None``: then
    ``name`` is one opaque variable, named by its exact text.

    A name is read only when it is no identifier, spells a dim expression that mentions other
    names, and that expression is a positive term which is neither a constant nor one variable
    alone: ``N*0``, ``N - N``, ``0*N + 1``, ``-N``, ``N - 1`` (0 at ``N = 1``) and ``floor(N/2)``
    are opaque; so are ``N + 0``, `` `N` ``, ``(N)`` and ``1*N``, which would make a second text
    one variable with ``N``, and ``Ｎ``, which is not ``N``. The reading is what the name means to
    the model's author, not to a runtime (onnxruntime binds each name of a graph input as its
    own extent): callers list it as an assumption (docs/architecture.md, "Declared names").
    """
    if is_identifier(name) or len(name) > MAX_NAME_TEXT:
        return None
    parts = names_in(name)
    if not parts or name in parts:
        return None
    try:
        d = parse_dim(name, lookup)
    except (ValueError, TypeError, KeyError, ArithmeticError, RecursionError):
        return None
    return d if is_positive_term(d) else None


def is_positive_term(d: Dim) -> bool:
    """Is ``d`` an expression, not one variable alone, whose least value is at least 1 (and below
    the least value no symbolic extent reaches)?"""
    # From the syntax alone (declared variables at least 1), never from what a run learned: what
    # a name denotes does not depend on the nodes that meet it.
    return type(d) is D.Expr and not D.is_variable(d) and D.less(0, d) is True and D.less(d, _LEAST_LIMIT) is not False


def _compile(node: ast.AST, source: _Source, src: str) -> Compiled:
    def sub(n: ast.AST) -> Compiled:
        return _compile(n, source, src)

    if isinstance(node, ast.Constant) and type(node.value) is int:
        value = node.value
        return lambda lookup: value
    if isinstance(node, ast.Name):
        name = source.name(node)
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
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and not node.keywords
        and source.written(node.func)
    ):
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
