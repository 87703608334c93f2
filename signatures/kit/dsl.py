"""A one-line language for operators whose output shapes rearrange their inputs' dims.

    "A[*a, n, k], B[*b, k, m] -> Y[*broadcast(a, b), n, m]"

Inputs, left of ``->``, are matched in order against the node's inputs (inputs past the last
one written are not read):

- ``name`` binds one dim; a name written again requires an equal extent (a contradiction is a
  ``shape-mismatch``, an equality that cannot be proved is recorded as an assumption);
- ``*name`` binds the remaining dims, at most one per input and each name in one input only;
- ``_`` in place of a whole input skips it.

Outputs, right of ``->``, one per output of the node:

- ``*name`` splices a bound list; ``*broadcast(a, b, ...)`` broadcasts bound lists (Clause 6.6);
- any other item is a dim over names bound to one dim, read as ``infer.core.dimparse`` reads dims
  (``n``, ``n + m``); ``Y[]`` is a scalar.

Several forms are tried in order (a list of strings, or ``|`` between them); the first whose
input ranks fit wins. When none fits, the node is a ``shape-mismatch`` if the ranks it reads are
known, and its outputs are unknown either way. Element types are not written: they come from the
schema. A pattern that breaks these rules is a ``ValueError`` when it is compiled (at import).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from infer.contract.context import RuleContext
from infer.core.dimparse import compile_dim, names_in, split_top
from infer.core.dims import Dim
from signatures.kit.helpers import broadcast, same_dim

Env = dict[str, Dim]
Lists = dict[str, tuple[Dim, ...]]
Item = Callable[[RuleContext, Env, Lists], list[Dim]]

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_TENSOR_RE = re.compile(rf"^({_NAME})\s*\[(.*)\]$", re.S)
_BROADCAST_RE = re.compile(rf"^broadcast\(\s*({_NAME}(?:\s*,\s*{_NAME})*)\s*\)$")


def _items(src: str, where: str) -> list[str]:
    """The items between a tensor's brackets (none for a scalar)."""
    m = _TENSOR_RE.match(src.strip())
    if not m:
        raise ValueError(f"bad {where} {src!r}: write NAME[items]")
    return split_top(m.group(2))


@dataclass(frozen=True)
class _Input:
    index: int
    items: tuple[str, ...]  # names, and at most one ``*name``

    def fits(self, rank: int) -> bool:
        fixed = sum(1 for it in self.items if not it.startswith("*"))
        return rank >= fixed if len(self.items) > fixed else rank == fixed

    def bind(self, ctx: RuleContext, env: Env, lists: Lists, shape: tuple[Dim, ...]) -> None:
        rest = len(shape) - sum(1 for it in self.items if not it.startswith("*"))
        pos = 0
        for it in self.items:
            if it.startswith("*"):
                lists[it[1:]] = tuple(shape[pos : pos + rest])
                pos += rest
                continue
            d = shape[pos]
            pos += 1
            env[it] = d if it not in env else same_dim(ctx, env[it], d, f"dimension '{it}'")


def _compile_input(index: int, src: str, dims: set[str], stars: set[str]) -> _Input:
    items = _items(src, "input")
    starred = [it for it in items if it.startswith("*")]
    if len(starred) > 1:
        raise ValueError(f"input {src!r} has more than one *name")
    for it in items:
        name = it[1:].strip() if it.startswith("*") else it
        if not re.fullmatch(_NAME, name) or name == "_":
            raise ValueError(f"input {src!r}: {it!r} is no name (only names and one *name bind dims)")
        if it.startswith("*"):
            if name in stars or name in dims:
                raise ValueError(f"input {src!r}: *{name} is bound twice")
            stars.add(name)
        elif name in stars:
            raise ValueError(f"input {src!r}: {name} is bound to a list and to a dim")
        else:
            dims.add(name)
    return _Input(index, tuple("*" + it[1:].strip() if it.startswith("*") else it for it in items))


def _compile_item(src: str, dims: set[str], stars: set[str]) -> Item:
    if src.startswith("*"):
        body = src[1:].strip()
        call = _BROADCAST_RE.match(body)
        names = [n.strip() for n in call.group(1).split(",")] if call else [body]
        for n in names:
            if n not in stars:
                raise ValueError(f"output item {src!r}: *{n} is not bound by an input")
        if call:
            return lambda ctx, env, lists: _broadcast(ctx, [lists[n] for n in names])
        return lambda ctx, env, lists: list(lists[body])
    used = names_in(src)
    if used is None:
        raise ValueError(f"output item {src!r} is no dim expression")
    unbound = used - dims
    if unbound:
        raise ValueError(f"output item {src!r} names {', '.join(sorted(unbound))}, bound to no dim of an input")
    expr = compile_dim(src)
    return lambda ctx, env, lists: [expr(env.__getitem__)]


def _broadcast(ctx: RuleContext, shapes: list[tuple[Dim, ...]]) -> list[Dim]:
    out = broadcast(ctx, *shapes)
    assert out is not None  # bound lists have known lengths
    return list(out)


@dataclass(frozen=True)
class _Form:
    inputs: tuple[_Input, ...]
    outputs: tuple[tuple[Item, ...], ...]

    def fitting_shapes(self, ctx: RuleContext) -> list[tuple[Dim, ...]] | None:
        """The shapes of the inputs the form reads, where their ranks fit it; else ``None``."""
        shapes = []
        for pat in self.inputs:
            shape = ctx.shape(pat.index)
            if shape is None or not pat.fits(len(shape)):
                return None
            shapes.append(shape)
        return shapes

    def apply(self, ctx: RuleContext, shapes: list[tuple[Dim, ...]]) -> list[tuple[Dim, ...] | None]:
        """The outputs, from ``shapes``: the inputs' (``fitting_shapes``)."""
        env: Env = {}
        lists: Lists = {}
        for pat, shape in zip(self.inputs, shapes):
            pat.bind(ctx, env, lists, shape)
        return [tuple(d for item in items for d in item(ctx, env, lists)) for items in self.outputs]


def _compile_form(src: str) -> _Form:
    lhs, arrow, rhs = src.partition("->")
    if not arrow:
        raise ValueError(f"pattern needs '->': {src!r}")
    dims: set[str] = set()
    stars: set[str] = set()
    ins = tuple(_compile_input(i, part, dims, stars) for i, part in enumerate(split_top(lhs)) if part.strip() != "_")
    outs = tuple(tuple(_compile_item(it, dims, stars) for it in _items(part, "output")) for part in split_top(rhs))
    if not outs:
        raise ValueError(f"pattern has no output: {src!r}")
    return _Form(ins, outs)


def compile_pattern(src: str | Sequence[str]) -> Callable[[RuleContext], list[tuple[Dim, ...] | None]]:
    """Compile a pattern (or several forms) into a rule function."""
    sources = split_top(src, "|") if isinstance(src, str) else list(src)
    forms = [_compile_form(s) for s in sources]
    read = sorted({pat.index for form in forms for pat in form.inputs})
    n_out = {len(form.outputs) for form in forms}

    def dsl_rule(ctx: RuleContext) -> list[tuple[Dim, ...] | None]:
        for form in forms:
            shapes = form.fitting_shapes(ctx)
            if shapes is not None:
                return form.apply(ctx, shapes)
        unknown = [i for i in read if ctx.has(i) and ctx.rank(i) is None]
        if unknown:
            ctx.because("an input's rank is unknown", *unknown)
        elif all(ctx.has(i) for i in read):
            ranks = ", ".join(str(ctx.rank(i)) for i in read)
            ctx.error(
                "shape-mismatch",
                f"{ctx.op_type} with inputs {ctx.input_types_str()}: no form of the operator takes inputs of "
                f"ranks {ranks}",
            )
        else:
            ctx.because("an input the operator reads is absent")
        return [None] * ctx.n_outputs

    if len(n_out) > 1:
        raise ValueError(f"the forms of {sources!r} give different numbers of outputs")
    dsl_rule.__doc__ = " | ".join(sources)
    return dsl_rule
