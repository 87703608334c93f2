"""Every value's inferred type, dumped for two versions of onnx-infer and compared.

Made for the change of the expression core (issue 23): the corpus is inferred by each version
(the older one from a checkout of its commit) and the type texts compared value by value. A
difference is *canonical* when reading the older extent's text into the current core gives
exactly the current extent (the same value in the current canonical form: products expanded, a
floor's common factor reduced, an extremum's argument dropped that cannot win); anything else is
listed for a person to read::

    python -m tests.models.compare_types dump OUT.json [MODEL ...]   # with the version to dump
    python -m tests.models.compare_types compare OLD.json NEW.json   # with the current version

A model is a path to an ``.onnx`` file or a directory of them (default: tests/models and its
subfolders); dumps name models by absolute path, so that a checkout elsewhere can dump the same
files (run the older version from its own checkout: ``cd OLD && python /path/to/compare_types.py
dump old.json /path/to/tests/models``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import infer

ROOT = Path(__file__).resolve().parent


def _models(paths: list[str]) -> list[Path]:
    out: list[Path] = []
    for p in map(Path, paths or [str(ROOT)]):
        out.extend(sorted(p.rglob("*.onnx")) if p.is_dir() else [p])
    return out


def dump(paths: list[str]) -> dict[str, dict[str, str]]:
    """``{model: {graph/value: type text}}`` for every value inference records."""
    out: dict[str, dict[str, str]] = {}
    for path in _models(paths):
        result = infer.infer_model(str(path))
        out[str(path.resolve())] = {f"{graph}/{name}": str(value.type) for graph, name, value in result.values()}
    return out


def _split(text: str) -> list[str] | None:
    """The extents of a tensor type's text (``float[batch,seq + 5]``), else ``None``."""
    from infer.core.dimparse import split_top  # here, as in _canonical: ``dump`` may run an older core

    if not text.endswith("]") or "[" not in text:
        return None
    return split_top(text[text.index("[") + 1 : -1])


def _canonical(old: str, new: str, positive: set[str]) -> bool:
    """Does reading each extent of ``old`` into the current core give ``new``'s?"""
    from infer.core import dims as D
    from infer.core.dimparse import parse_dim

    a, b = _split(old), _split(new)
    if a is None or b is None or len(a) != len(b) or old[: old.index("[")] != new[: new.index("[")]:
        return False

    def var(name: str) -> D.Dim:
        return D.symbol(name) if name in positive else D.fresh_symbol(name)

    for x, y in zip(a, b):
        if x == y:
            continue
        try:
            if D.to_str(parse_dim(x, var)) != y:
                return False
        except (ValueError, TypeError, KeyError, ZeroDivisionError):
            return False
    return True


def compare(old: dict, new: dict) -> int:
    counts: Counter[str] = Counter()
    listed = 0
    for model in sorted(set(old) | set(new)):
        a, b = old.get(model), new.get(model)
        if a is None or b is None:
            counts["model in one dump only"] += 1
            continue
        positive = {v.name for v in infer.infer_model(model).dims if not v.is_fresh}
        for value in sorted(set(a) | set(b)):
            x, y = a.get(value), b.get(value)
            if x == y:
                counts["same text"] += 1
            elif x is None or y is None:
                counts["value in one dump only"] += 1
            elif _canonical(x, y, positive):
                counts["canonical form of the same extents"] += 1
            else:
                counts["other"] += 1
                if listed < 50:
                    print(f"{model} {value}:\n  old {x}\n  new {y}")
                    listed += 1
    for k, n in counts.most_common():
        print(f"{n:8d}  {k}")
    return 1 if counts["other"] else 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="verb", required=True)
    d = sub.add_parser("dump")
    d.add_argument("out", type=Path)
    d.add_argument("models", nargs="*")
    c = sub.add_parser("compare")
    c.add_argument("old", type=Path)
    c.add_argument("new", type=Path)
    args = p.parse_args(argv)
    if args.verb == "dump":
        args.out.write_text(json.dumps(dump(args.models), indent=0, sort_keys=True))
        return 0
    return compare(json.loads(args.old.read_text()), json.loads(args.new.read_text()))


if __name__ == "__main__":
    sys.exit(main())
