"""Digests of what inference outputs, to compare two builds (issue 42: the compiled build must
answer byte for byte as the pure-Python one does).

    python -m benchmarks.outputs pure.json              # in one build's environment
    python -m benchmarks.outputs compiled.json          # in the other's
    python -m benchmarks.outputs --compare pure.json compiled.json

For every model under tests/models (subfolders included): the result of a first call as JSON
(``InferenceResult.to_json``: every value's type, the dimension table, the diagnostics), the
annotated copy's bytes (``result.model``), the drop-in's output (``onnx_compat.infer_shapes(model,
data_prop=True)``), and re-inference after renaming one node and after inserting an ``Identity``
(``previous=`` the first call's result, as ``benchmarks.corpus`` edits). Also the conformance
statement and the table of clauses (``infer.out.conformance``). Each is kept as its SHA-256;
``--compare`` lists what differs.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.machinery
import json
import sys
from pathlib import Path
from typing import Any

import onnx

import infer
from benchmarks.corpus import CORPUS, edited
from infer import onnx_compat
from infer.walk import reuse


def _digest(data: bytes | str | dict[str, Any]) -> str:
    if isinstance(data, dict):
        data = json.dumps(data, sort_keys=True, default=str)
    if isinstance(data, str):
        data = data.encode()
    return hashlib.sha256(data).hexdigest()


def model_digests(path: Path) -> dict[str, str]:
    """The digests of each output for the model at ``path``."""
    model = onnx.load(str(path), load_external_data=False)
    with reuse.disabled():
        first = infer.infer_model(model)
        out = {"infer_model": _digest(first.to_json()), "annotated": _digest(first.model.SerializeToString())}
        out["drop-in"] = _digest(onnx_compat.infer_shapes(model, data_prop=True).SerializeToString())
    if any(any(n.input) for n in model.graph.node):
        for name, changed in zip(("renamed", "inserted"), edited(model)):
            reuse.clear()
            previous = infer.infer_model(model)
            again = infer.infer_model(changed, previous=previous)
            out[name] = _digest(again.to_json())
            out[name + " annotated"] = _digest(again.model.SerializeToString())
    return out


def conformance_digests() -> dict[str, str]:
    """The conformance statement and the clause map, as ``python -m infer.out.conformance`` writes
    them (docs/conformance.md, docs/clauses.md)."""
    from infer.out import conformance

    return {"--markdown": _digest(conformance.markdown()), "--clauses": _digest(conformance.clause_map())}


def compiled() -> bool:
    import infer.walk.memo

    return (infer.walk.memo.__file__ or "").endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", nargs="?", type=Path, help="write the digests here (JSON)")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"), help="compare two files of digests")
    a = parser.parse_args(argv)
    if a.compare:
        left, right = (json.loads(p.read_text()) for p in a.compare)
        keys = sorted(set(left["digests"]) | set(right["digests"]))
        differ = [k for k in keys if left["digests"].get(k) != right["digests"].get(k)]
        print(f"{a.compare[0]} (compiled: {left['compiled']}) and {a.compare[1]} (compiled: {right['compiled']})")
        print(f"{len(keys)} outputs compared, {len(differ)} differ")
        for k in differ:
            print(f"  differs: {k}")
        return 1 if differ else 0
    if a.out is None:
        parser.error("give a file to write, or --compare A B")
    digests: dict[str, str] = {}
    paths = sorted(CORPUS.rglob("*.onnx"))
    for path in paths:
        name = str(path.relative_to(CORPUS))
        for what, digest in model_digests(path).items():
            digests[f"{name}: {what}"] = digest
    for what, digest in conformance_digests().items():
        digests[f"conformance {what}"] = digest
    a.out.write_text(json.dumps({"compiled": compiled(), "digests": digests}, indent=1, sort_keys=True))
    print(f"{len(paths)} models, {len(digests)} outputs, compiled: {compiled()} -> {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
