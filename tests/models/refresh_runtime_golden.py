"""Write the golden files of what onnxruntime returns on the committed models (tests/support/golden.py).

Run after a model, its manifest entry or the feeds change, after onnxruntime is upgraded, or when
a test says the golden file is stale, with the dev venv from the repository's root::

    python -m tests.models.refresh_runtime_golden              # every folder
    python -m tests.models.refresh_runtime_golden more ms      # some folders (tests/models/...)
    python -m tests.models.refresh_runtime_golden --check      # compare with a fresh run, write nothing

``--check`` exits 1 if a file would change (the dims, element types or stored contents of a value,
a value gained or lost, a model added or removed); floats are compared within the verifier's
tolerance, as tests/test_runtime_golden.py does.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tests.support import golden as G
from tests.support.hardware import hardware_refusal


def versions() -> dict[str, str]:
    import onnx
    import onnxruntime

    return {"onnxruntime": onnxruntime.__version__, "onnx": onnx.__version__, "numpy": np.__version__}


def build(directory: Path) -> dict[str, Any]:
    models = {}
    kept = G.load(directory)["models"] if (directory / G.FILE).exists() else {}
    for entry in G.entries(directory):
        print(f"  {entry['file']}", file=sys.stderr, flush=True)
        try:
            models[entry["file"]] = G.record(entry)
        except Exception as e:  # onnxruntime's refusals are plain exceptions of several kinds
            if not hardware_refusal(str(e)) or entry["file"] not in kept:
                raise
            # This CPU lacks a kernel the model needs: the record made where it exists stands.
            print(f"    kept its record: this CPU lacks a kernel ({str(e).splitlines()[0][:120]})", file=sys.stderr)
            models[entry["file"]] = kept[entry["file"]]
    return {
        "about": f"What onnxruntime returned on these models at their manifest's bindings; written by "
        f"`{G.REFRESH}` (tests/support/golden.py says what is stored).",
        "versions": versions(),
        "models": models,
    }


def differences(old: dict[str, Any], new: dict[str, Any], directory: Path) -> list[str]:
    """What differs between two golden files' models (floats within the verifier's tolerance)."""
    out = []
    for file in sorted(set(old["models"]) | set(new["models"])):
        a, b = old["models"].get(file), new["models"].get(file)
        if a is None or b is None:
            out.append(f"{file}: {'added' if a is None else 'removed'}")
            continue
        out += [f"{file}: {d}" for d in record_differences(a, b, directory / file)]
    return out


def record_differences(a: dict[str, Any], b: dict[str, Any], path: Path, storage: bool = True) -> list[str]:
    """What differs between two records of ``path``: the stored ``a`` and a fresh ``b``; without
    ``storage``, only what the runtime returned (a value's contents stored in one record and not
    the other is no difference: which are stored follows what inference knows)."""
    out = [f"{key} differs" for key in ("sha256", "not_fetched", "runs") if a[key] != b[key]]
    try:
        va, vb = G.values_of(a, path), G.values_of(b, path)
    except G.StaleGolden as e:
        return [*out, str(e)]
    out += [f"`{n}` is gone" for n in sorted(set(va) - set(vb))]
    out += [f"`{n}` is new" for n in sorted(set(vb) - set(va))]
    for name in sorted(set(va) & set(vb)):
        x, y = va[name], vb[name]
        if x[:2] != y[:2]:
            out.append(f"`{name}`: {x[0]} {x[1]}, now {y[0]} {y[1]}")
        elif len(x) != len(y):
            if storage:
                out.append(f"`{name}`: contents {'no longer' if len(x) > 2 else 'now'} stored")
        elif len(x) > 2:
            for k in range(len(x[1])):
                ax, ay = G.decode_run({name: x}, k)[name], G.decode_run({name: y}, k)[name]
                if not _same(ax, ay):
                    out.append(f"`{name}`: the contents of run {k} differ")
    return out


def _same(ax: np.ndarray, ay: np.ndarray) -> bool:
    if ax.dtype.kind != "f":
        return bool(np.array_equal(ax, ay))
    return bool(np.allclose(ax, ay, rtol=1e-4, atol=1e-5, equal_nan=True))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="*", help="models, more, ms (default: all)")
    parser.add_argument("--check", action="store_true", help="compare with a fresh run; write nothing")
    args = parser.parse_args(argv)
    names = {"models": G.FOLDERS[0], **{d.name: d for d in G.FOLDERS[1:]}}
    chosen = [names[f] for f in args.folders] if args.folders else list(G.FOLDERS)
    status = 0
    for directory in chosen:
        print(f"{directory}:", file=sys.stderr)
        data = build(directory)
        path = directory / G.FILE
        if args.check:
            old = G.load(directory)
            diff = differences(old, data, directory)
            for line in diff[:50]:
                print(f"  {line}")
            status |= bool(diff)
            continue
        path.write_text(G.dumps(data))
        print(f"wrote {path} ({path.stat().st_size:,} bytes)", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
