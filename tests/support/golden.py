"""What onnxruntime returns on the committed models, stored once instead of recomputed every run.

The tests that check every claim of a committed model against onnxruntime (tests/test_real_models.py,
tests/test_ms_models.py, tests/clients/test_ir_pass.py) read the runtime's values from a golden
file beside the models' manifest, ``runtime_golden.json`` (tests/models, tests/models/more,
tests/models/ms). For every model it holds the model file's sha256 and, for every binding of
its manifest entry, a digest of the inputs fed (``runtime.feeds_for``) and every value the
exposed model (``runtime.expose_all``: every main-graph node output) returned: element type,
shape, and the contents of every value that inference knew the contents of when the file was
written or that has at most ``CONTENTS_LIMIT`` integer or boolean elements. Those are all the
check reads (``infer.out.verify.check_run``: element types, dims, known contents); the contents are
exactly what the runtime returned (floats in the shortest text that gives the same float back).

Nothing is read blindly: a model whose bytes, feeds or bindings changed, a value missing, or a
claim about contents the file does not hold fails with the command that refreshes the file::

    python -m tests.models.refresh_runtime_golden          # every folder
    python -m tests.models.refresh_runtime_golden --check  # compare, write nothing

and tests/test_runtime_golden.py runs onnxruntime again on a few cases (a different few each
week; every case with ``-m slow``) and requires the same values.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnx

from . import runtime as R

FILE = "runtime_golden.json"
FOLDERS = (R.MODELS, R.MODELS / "more", R.MODELS / "ms")
CONTENTS_LIMIT = 16  # integer and boolean values this small are stored with their contents
REFRESH = "python -m tests.models.refresh_runtime_golden"


class StaleGolden(AssertionError):
    """The golden file does not answer for the model as it is: refresh it."""

    def __init__(self, what: str):
        super().__init__(f"{what}; refresh the golden file: {REFRESH}")


class Observed(dict):
    """One run's values by name, as ``runtime.run`` returns them, read from a golden file.

    ``without_contents`` names the values stored without contents: their arrays have the right
    element type and shape, and ``runtime.check`` refuses a claim about their contents.
    """

    without_contents: frozenset[str] = frozenset()


def entries(directory: Path) -> list[dict[str, Any]]:
    """The manifest entries of a golden folder, each with its ``path``."""
    return R.manifest(directory)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def feeds_digest(feeds: Mapping[str, np.ndarray]) -> str:
    h = hashlib.sha256()
    for name in sorted(feeds):
        a = np.ascontiguousarray(feeds[name])
        h.update(f"{name}:{a.dtype.str}:{list(a.shape)};".encode())
        h.update(a.tobytes())
    return h.hexdigest()[:16]


# -- writing ---------------------------------------------------------------------------------------


def _text(x: Any, dtype: np.dtype) -> Any:
    """One element as JSON: ints and bools as they are, floats in their shortest exact text."""
    if dtype.kind == "b":
        return bool(x)
    if dtype.kind in "iu":
        return int(x)
    f = float(x)
    if f != f or f in (float("inf"), float("-inf")):
        return repr(f)  # "nan", "inf", "-inf": JSON has no such numbers
    return float(str(dtype.type(x)))  # numpy's shortest text that reads back as this float


def encode_contents(arr: np.ndarray) -> list[Any]:
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"only numeric tensors are stored, not {arr.dtype}")
    return [_text(x, arr.dtype) for x in arr.reshape(-1).tolist()]


def wants_contents(arr: np.ndarray, known: bool) -> bool:
    return known or (arr.dtype.kind in "biu" and arr.size <= CONTENTS_LIMIT)


def encode_values(observed: Sequence[Mapping[str, Any]], known: set[str]) -> dict[str, list[Any]]:
    """Every value of the runs at once: ``name: [dtype, [shape of each run]]``, with a third item,
    the flat contents of each run (``"="``: those of the first run), where they are stored."""
    out: dict[str, list[Any]] = {}
    names = set(observed[0])
    if any(set(o) != names for o in observed):
        raise ValueError("the runs returned different values")
    for name in sorted(names):
        arrs = [o[name] for o in observed]
        if any(not isinstance(a, np.ndarray) or a.dtype != arrs[0].dtype for a in arrs):
            raise TypeError(f"`{name}`: only tensors of one element type in every run are stored")
        v: list[Any] = [arrs[0].dtype.name, [[int(n) for n in a.shape] for a in arrs]]
        if any(wants_contents(a, name in known) for a in arrs):
            first = encode_contents(arrs[0])
            v.append(
                [first]
                + [
                    "="
                    if np.array_equal(a, arrs[0], equal_nan=a.dtype.kind == "f") and a.shape == arrs[0].shape
                    else encode_contents(a)
                    for a in arrs[1:]
                ]
            )
        out[name] = v
    return out


def record(entry: dict[str, Any]) -> dict[str, Any]:
    """Run onnxruntime on ``entry`` at every binding of its manifest entry: the golden record."""
    import infer

    model = onnx.load(str(entry["path"]))
    result = infer.infer_model(model)
    main = result.graphs["main"]
    known = {n for n in main.producers if main.values[n].known is not None}
    session = R.V.Session(R.expose_all(model))
    feeds = [R.feeds_for(entry, b["dims"]) for b in entry["bindings"]]
    observed = [session.run(f) for f in feeds]
    values = encode_values(observed, known)
    names = value_names(entry["path"], session.not_fetched)
    if sorted(names) != sorted(values):
        raise ValueError(f"{entry['file']}: the runtime returned other values than the exposed model's outputs")
    return {
        "sha256": sha256(entry["path"]),
        "runs": [{"dims": b["dims"], "feeds": feeds_digest(f)} for b, f in zip(entry["bindings"], feeds)],
        "not_fetched": sorted(session.not_fetched),
        "values": [values[n] for n in names],
    }


def dumps(data: dict[str, Any]) -> str:
    """One value a line, in the order of ``value_names``: a refresh's diff shows what changed."""
    lines = ["{", f' "about": {json.dumps(data["about"])},', f' "versions": {json.dumps(data["versions"])},']
    lines.append(' "models": {')
    models = list(data["models"].items())
    for i, (file, rec) in enumerate(models):
        lines.append(f"  {json.dumps(file)}: {{")
        lines.append(f'   "sha256": {json.dumps(rec["sha256"])}, "not_fetched": {json.dumps(rec["not_fetched"])},')
        lines.append(f'   "runs": {json.dumps(rec["runs"])},')
        lines.append('   "values": [')
        items = rec["values"]
        for k, v in enumerate(items):
            comma = "," * (k < len(items) - 1)
            lines.append(f"    {json.dumps(v, separators=(',', ':'))}{comma}")
        lines.append("   ]")
        lines.append("  }" + ("," * (i < len(models) - 1)))
    lines += [" }", "}"]
    return "\n".join(lines) + "\n"


# -- reading ---------------------------------------------------------------------------------------


@functools.cache
def load(directory: Path) -> dict[str, Any]:
    path = directory / FILE
    if not path.exists():
        raise StaleGolden(f"{path} is missing")
    return json.loads(path.read_text())


def _element(x: Any) -> Any:
    return float(x) if isinstance(x, str) else x


def decode_value(dtype: str, shape: list[int], contents: list[Any] | None) -> np.ndarray:
    if contents is not None:
        return np.array([_element(x) for x in contents], dtype=np.dtype(dtype)).reshape(shape)
    return np.broadcast_to(np.zeros((), np.dtype(dtype)), tuple(shape))  # no memory: dtype and shape are read


def decode_run(values: Mapping[str, list[Any]], k: int) -> Observed:
    """Run ``k`` of a record's values, as ``runtime.run`` returned it."""
    out = Observed()
    for name, v in values.items():
        contents = None
        if len(v) > 2:
            contents = v[2][k] if v[2][k] != "=" else v[2][0]
        out[name] = decode_value(v[0], v[1][k], contents)
    out.without_contents = frozenset(name for name, v in values.items() if len(v) == 2)
    return out


def value_names(path: Path, not_fetched: Sequence[str] = ()) -> list[str]:
    """The values a run of the exposed model returns, in the order of its outputs: the order of a
    record's ``values`` (the model's sha256 pins it)."""
    model = onnx.load(str(path), load_external_data=False)
    skip = set(not_fetched)
    return [o.name for o in R.expose_all(model).graph.output if o.name not in skip]


def values_of(rec: Mapping[str, Any], path: Path) -> dict[str, list[Any]]:
    """A record's values by name."""
    names = value_names(path, rec["not_fetched"])
    if len(names) != len(rec["values"]):
        raise StaleGolden(f"the golden record of {path.name} has {len(rec['values'])} values, the model {len(names)}")
    return dict(zip(names, rec["values"]))


def runs(entry: dict[str, Any]) -> list[tuple[dict[str, int], Observed]]:
    """``[(bindings, observed)]`` at every binding of ``entry``, as onnxruntime returned them."""
    path: Path = entry["path"]
    rec = load(path.parent)["models"].get(entry["file"])
    if rec is None:
        raise StaleGolden(f"{path.parent / FILE} has no record of {entry['file']}")
    if rec["sha256"] != sha256(path):
        raise StaleGolden(f"{entry['file']} changed since its golden record was written")
    if [r["dims"] for r in rec["runs"]] != [b["dims"] for b in entry["bindings"]]:
        raise StaleGolden(f"the bindings of {entry['file']} changed since its golden record was written")
    values = values_of(rec, path)
    out = []
    for k, (b, r) in enumerate(zip(entry["bindings"], rec["runs"])):
        if r["feeds"] != feeds_digest(R.feeds_for(entry, b["dims"])):
            raise StaleGolden(f"the inputs fed to {entry['file']} at {b['dims']} changed")
        out.append((b["dims"], decode_run(values, k)))
    return out


def require_contents(result: Any, observed: Mapping[str, Any]) -> None:
    """Refuse a golden run that lacks the contents of a value ``result`` claims contents of."""
    lacking = getattr(observed, "without_contents", frozenset())
    if not lacking:
        return
    main = result.graphs["main"]
    short = sorted(n for n in lacking if n in main.values and main.values[n].known is not None)
    if short:
        raise StaleGolden(f"inference now knows the contents of {short[:5]}, which the golden file does not hold")
