"""No function over 60 lines (issue 25), outside generated-doc builders and argument parsers;
``# fmt: skip`` only on literal data tables (issue 37), so the formatter, not hand-packing, decides
layout.

The limit is read off the syntax tree (``end_lineno - lineno + 1``, docstring and decorators'
body included). ``EXEMPT`` lists what is allowed past it and why; ``TO_SPLIT`` is what still has
to be split, each entry a debt: the test fails when one grows, when a new function passes the
limit, and when an entry is stale (the function is gone or back under the limit), so the list
only ever shrinks.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 60
EXEMPT = {
    "infer/out/conformance.py:markdown": "builds the generated conformance statement, one section after another",
    "infer/run.py:infer_model": "the public entry: a signature and docstring of every limit keyword, and a body "
    "that names each again (locals() does not see them where the module is compiled with mypyc)",
}
# Still too long, with the length they may not exceed until they are split.
TO_SPLIT: dict[str, int] = {}  # none left


def long_functions(source: str, where: str, limit: int = LIMIT) -> dict[str, int]:
    """``where:name`` -> length of every function of ``source`` longer than ``limit`` lines."""
    out = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = node.end_lineno - node.lineno + 1
            if length > limit and not node.name.startswith(("_parser", "build_parser")):
                out[f"{where}:{node.name}"] = length
    return out


@functools.cache
def _tree() -> dict[str, int]:
    found = {}
    for pkg in ("infer", "signatures"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            found.update(long_functions(path.read_text(), path.relative_to(ROOT).as_posix()))
    return found


def test_no_function_is_longer_than_the_limit():
    found = _tree()
    new = {k: v for k, v in found.items() if k not in EXEMPT and k not in TO_SPLIT}
    grown = {k: (v, TO_SPLIT[k]) for k, v in found.items() if k in TO_SPLIT and v > TO_SPLIT[k]}
    assert not new, f"functions over {LIMIT} lines: {new}"
    assert not grown, f"functions still to split grew (now, allowed): {grown}"


def test_the_lists_are_not_stale():
    found = _tree()
    stale = sorted(set(EXEMPT) - set(found)) + sorted(set(TO_SPLIT) - set(found))
    assert not stale, f"no longer over {LIMIT} lines, drop from the list: {stale}"
    shrunk = {k: (found[k], v) for k, v in TO_SPLIT.items() if k in found and found[k] < v}
    assert not shrunk, f"shorter now (now, listed): lower the listed length: {shrunk}"


def test_the_check_flags_a_long_function():
    body = "\n".join(f"    x{i} = {i}" for i in range(LIMIT))
    assert long_functions(f"def f():\n{body}\n", "m.py") == {"m.py:f": LIMIT + 1}
    short = "\n".join(f"    x{i} = {i}" for i in range(LIMIT - 1))
    assert long_functions(f"def f():\n{short}\n", "m.py") == {}


_LITERAL = (ast.Dict, ast.List, ast.Set, ast.Tuple)
_WRAPPERS = ("frozenset", "MappingProxyType", "dict", "tuple", "set")


def _is_table(value: ast.expr | None) -> bool:
    """A literal container, or one wrapped once in ``frozenset(...)`` and the like."""
    if isinstance(value, _LITERAL):
        return True
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id in _WRAPPERS
        and len(value.args) == 1
        and isinstance(value.args[0], _LITERAL)
    )


def skips_off_tables(source: str) -> list[int]:
    """Lines of ``source`` that carry ``# fmt: skip`` without ending a module- or class-level
    assignment of a literal table."""
    tree = ast.parse(source)
    tables = set()
    for scope in [tree, *(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef))]:
        for stmt in scope.body:
            if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and _is_table(stmt.value):
                tables.add(stmt.end_lineno)
    marked = (i for i, line in enumerate(source.splitlines(), 1) if line.rstrip().endswith("# fmt: skip"))
    return [i for i in marked if i not in tables]


def test_fmt_skip_marks_only_literal_tables():
    off = {}
    for pkg in ("infer", "signatures", "tests", "benchmarks", "examples"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            source = path.read_text()
            if "# fmt: skip" in source and (lines := skips_off_tables(source)):  # (parsed only if marked)
                off[path.relative_to(ROOT).as_posix()] = lines
    assert not off, f"`# fmt: skip` off a literal data table (let the formatter lay it out): {off}"


def test_the_skip_check_flags_packed_code():
    table = "T = {\n    'a': 1,  'b': 2,\n}  # fmt: skip\n"
    packed = "def f(a,\n      b):  # fmt: skip\n    return [a,\n            b]  # fmt: skip\n"
    assert skips_off_tables(table) == []
    assert skips_off_tables(packed) == [2, 4]
