"""What each client tool does with onnx's own inference on the corpus, stored once (baselines.json).

The client tests compare a tool run with onnx-infer's drop-in against the same tool with onnx's
inference (``tools.X(model, "onnx")``): no more passes, no more nodes. That second run involves
no code of this project: its outcome is a function of the model's bytes and of the installed
tool, onnx, onnxruntime and numpy. It is stored here, as ``[passes, nodes]`` per tool and model,
with the model's sha256 and those versions. ``baseline`` returns the stored outcome when the
versions and the model are those recorded, and runs the tool otherwise (a different install is
checked against what it does, never against a stale file). tests/clients/test_baselines.py runs
the tools again on one model each (a different one each ISO week; every model with ``-m slow``).

Refresh after a model or a tool changes, with the ``clients`` extra installed::

    python -m tests.clients.baselines            # every tool
    python -m tests.clients.baselines onnxslim   # one
"""

from __future__ import annotations

import functools
import importlib.metadata
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.clients import tools
from tests.clients.common import ENTRIES, TORCHSCRIPT, load
from tests.support.golden import sha256

FILE = Path(__file__).with_name("baselines.json")
# tool -> (the distribution whose version decides its outcome, the entries its test runs on)
TOOLS: dict[str, tuple[str, list[dict[str, Any]]]] = {
    "onnxslim": ("onnxslim", ENTRIES),
    "polygraphy": ("polygraphy", ENTRIES),
    "graphsurgeon": ("onnx-graphsurgeon", TORCHSCRIPT),
    "onnxoptimizer": ("onnxoptimizer", TORCHSCRIPT),
}
REFRESH = "python -m tests.clients.baselines"


def versions(tool: str) -> dict[str, str]:
    return {d: importlib.metadata.version(d) for d in (TOOLS[tool][0], "onnx", "onnxruntime", "numpy")}


def measure(tool: str, entry: dict[str, Any]) -> tuple[int, int]:
    """The tool with onnx's inference on ``entry``, now: (passes, nodes)."""
    run = getattr(tools, tool)(load(entry), "onnx")
    return run.passes, len(run.model.graph.node)


@functools.cache
def _stored() -> dict[str, Any]:
    return json.loads(FILE.read_text()) if FILE.exists() else {}


def stored(tool: str, entry: dict[str, Any]) -> tuple[int, int] | None:
    """The recorded outcome, if it answers for this install and this model."""
    rec = _stored().get(tool)
    if rec is None or rec["versions"] != versions(tool):
        return None
    row = rec["models"].get(entry["file"])
    if row is None or row["sha256"] != sha256(entry["path"]):
        return None
    return row["passes"], row["nodes"]


def baseline(tool: str, entry: dict[str, Any]) -> tuple[int, int]:
    """(passes, nodes) of the tool with onnx's inference on ``entry``: stored, or run now."""
    return stored(tool, entry) or measure(tool, entry)


def main(argv: Sequence[str] | None = None) -> int:
    chosen = list(argv if argv is not None else sys.argv[1:]) or list(TOOLS)
    data = dict(_stored())
    for tool in chosen:
        print(f"{tool}:", file=sys.stderr, flush=True)
        models = {}
        for entry in TOOLS[tool][1]:
            passes, nodes = measure(tool, entry)
            models[entry["file"]] = {"sha256": sha256(entry["path"]), "passes": passes, "nodes": nodes}
        data[tool] = {"versions": versions(tool), "models": models}
    lines = ["{"]
    for i, (tool, rec) in enumerate(sorted(data.items())):
        lines.append(f'  "{tool}": {{"versions": {json.dumps(rec["versions"])}, "models": {{')
        rows = list(rec["models"].items())
        for k, (file, row) in enumerate(rows):
            lines.append(f"    {json.dumps(file)}: {json.dumps(row)}" + "," * (k < len(rows) - 1))
        lines.append("  }}" + "," * (i < len(data) - 1))
    lines.append("}")
    FILE.write_text("\n".join(lines) + "\n")
    print(f"wrote {FILE}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
