"""Validate models in CI: fail the build when a model has errors or an output shape is lost.

    python examples/validate_in_ci.py [MODEL ...] [--require-known-outputs]

Without arguments it checks every ``.onnx`` file beside this script. Exit status 0 when every
model passes, 1 when one does not, so a CI step is just this command. The command-line
equivalent of the first check is ``onnx-infer check MODEL`` (exit 1 on errors; ``--json`` for
a machine-readable list). In a GitHub Actions job, with this repository checked out in
``onnx-infer/``::

    - run: python -m pip install ./onnx-infer
    - run: python onnx-infer/examples/validate_in_ci.py models/*.onnx --require-known-outputs

``--require-known-outputs`` also fails a model whose graph outputs are not fully known (every
extent an integer or an expression over the declared input dims): a guard against an export
change that silently turns a static output shape dynamic.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from infer.result import KNOWN, SYMBOLIC, classify

import infer

HERE = Path(__file__).resolve().parent


def check(path: Path, require_known_outputs: bool) -> list[str]:
    """The problems that fail ``path``; an empty list when it passes."""
    try:
        result = infer.infer_model(path)
    except infer.ModelLoadError as e:  # not a readable model at all
        return [str(e)]
    problems = [str(d) for d in result.errors]
    if require_known_outputs:
        main = result.graphs["main"]
        for name in main.outputs:
            t = result.type_of(name)
            if classify(t, result.dims) not in (KNOWN, SYMBOLIC):
                problems.append(f"output `{name}` is {t}: {result.explain(name).roots or 'unknown'}")
    return problems


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("models", nargs="*", type=Path, help="models to check (default: examples/*.onnx)")
    p.add_argument("--require-known-outputs", action="store_true", help="fail outputs with unknown extents")
    args = p.parse_args(argv)
    models = args.models or sorted(HERE.glob("*.onnx"))
    failed = 0
    for path in models:
        problems = check(path, args.require_known_outputs)
        print(f"{'FAIL' if problems else 'ok  '}  {path.name}")
        for problem in problems:
            print(f"      {problem}")
        failed += bool(problems)
    print(f"{len(models)} models checked: {len(models) - failed} ok, {failed} failing")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
