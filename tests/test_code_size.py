"""No function over 60 lines (issue 25), outside generated-doc builders and argument parsers.

The limit is read off the syntax tree (``end_lineno - lineno + 1``, docstring and decorators'
body included). ``EXEMPT`` lists what is allowed past it and why; ``TO_SPLIT`` is what still has
to be split, each entry a debt: the test fails when one grows, when a new function passes the
limit, and when an entry is stale (the function is gone or back under the limit), so the list
only ever shrinks.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 60
EXEMPT = {
    "infer/out/conformance.py:markdown": "builds the generated conformance statement, one section after another",
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
