"""Score onnx-infer (and, for reference, onnx's own shape inference) against onnxruntime.

For every model of a manifest (default: the held-out-like set that
tests/models/export_heldout_like.py writes to /work/heldout-like): infer with
``infer.infer_model``, run onnxruntime at both bindings of the entry with every intermediate
value exposed, and count per model

* values: every value of the main graph;
* exact: every dim an integer or an expression over the run's bound variables, and every claim
  (element type, rank, dims, known contents) confirmed at both runs;
* not exact: no claim contradicted, but some dim unknown or over a fresh variable;
* WRONG: some claim contradicted (element type, rank, a dim, a known element), or a fresh
  variable that denotes two extents within one run;
* crash: inference raised (the model counts as a crash; its values are not counted).

Claims are checked by ``infer.out.verify.check_run`` (the logic of tests.support.runtime.check). A
variable declared only on a graph output (``detections``) has no value in a binding: each run
binds it to the extent it takes there, so claims over it are checked like any other.

The same values are also scored for ``onnx.shape_inference.infer_shapes(model, data_prop=True)``
(onnx's C++ inference): exact and wrong by the same rules, so the two can be read side by side.

Run with the project's venv from the repository root::

    python -m tests.models.score_runtime                          # the held-out-like set
    python -m tests.models.score_runtime --manifest tests/models/manifest.json
    python -m tests.models.score_runtime gpt2 llama --details     # files containing these
    python -m tests.models.score_runtime --json report.json       # machine-readable report
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx

import infer
from infer.core import dims as D
from infer.core import types as T
from infer.out.result import KNOWN, SYMBOLIC, classify
from infer.out.verify import check_run
from tests.support import runtime as R

DEFAULT_MANIFEST = Path("/work/heldout-like/manifest.json")

Run = tuple[dict[str, int], dict[str, Any]]


@dataclass
class Verdict:
    """Every main-graph value of one model, judged over its runs."""

    names: list[str]
    exact: list[str] = field(default_factory=list)
    not_exact: list[str] = field(default_factory=list)  # "name: claimed type"
    wrong: dict[str, list[str]] = field(default_factory=dict)  # value -> messages
    skipped_runs: list[str] = field(default_factory=list)
    unchecked_claims: int = 0  # claims over a variable no run could bind (check_run only)


def _exact_claim(result: infer.InferenceResult, name: str, declared: set[str]) -> bool:
    """Every dim of ``name`` an integer or an expression over declared variables."""
    t = result.value(name, "main").type
    return classify(t, result.dims) in (KNOWN, SYMBOLIC) and all(D.free_names(d) <= declared for d in T.dims_of(t))


def judge(result: infer.InferenceResult, runs: Sequence[Run]) -> Verdict:
    """Every main-graph value judged over ``runs``, by the rules of tests.support.runtime.check.

    Contradictions come from ``infer.out.verify.check_run``, which also binds every variable a run
    leaves unbound (fresh ones, and names declared only on graph outputs) to the extent it takes.
    """
    names = [n for g, n, _ in result.values() if g == "main"]
    declared = set(result.dims.declared_names())
    out = Verdict(names)
    for bindings, observed in runs:
        rc = check_run(result, bindings, observed)
        if rc.skipped:
            out.skipped_runs.append(f"{dict(bindings)}: {rc.skipped}")
            continue
        out.unchecked_claims += rc.unchecked
        for c in rc.contradictions:
            out.wrong.setdefault(c.value, []).append(c.message)
    for name in names:
        if name in out.wrong:
            continue
        if _exact_claim(result, name, declared):
            out.exact.append(name)
        else:
            out.not_exact.append(f"{name}: {result.value(name, 'main').type}")
    return out


def _elem_np(elem_type: int) -> np.dtype | None:
    try:
        return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(elem_type))
    except (KeyError, TypeError, ValueError):
        return None


def run_bindings(model: onnx.ModelProto, binding: Mapping[str, int], observed: Mapping[str, Any]) -> dict[str, int]:
    """The entry's binding, plus each variable declared only on a graph output, bound to that
    output's extent in this run (such a variable has no value until the model runs)."""
    out = dict(binding)
    for value in model.graph.output:
        arr = observed.get(value.name)
        shape = getattr(arr, "shape", None)
        dims = value.type.tensor_type.shape.dim
        if shape is None or len(shape) != len(dims):
            continue
        for dim, real in zip(dims, shape):
            if dim.HasField("dim_param") and dim.dim_param not in out:
                out[dim.dim_param] = int(real)
    return out


def _producers(model: onnx.ModelProto) -> dict[str, onnx.NodeProto]:
    return {o: n for n in model.graph.node for o in n.output if o}


def _op(node: onnx.NodeProto | None) -> str:
    if node is None:
        return "(graph input or initializer)"
    return f"{node.domain + '::' if node.domain else ''}{node.op_type}"


def _runtime_shapes(name: str, runs: Sequence[Run]) -> str:
    shapes = []
    for _, observed in runs:
        arr = observed.get(name)
        shapes.append(str(list(arr.shape)) if hasattr(arr, "shape") else "-")
    return " / ".join(shapes)


# --------------------------------------------------------------------------- #
# onnx's C++ inference, scored by the same rules
# --------------------------------------------------------------------------- #


def onnx_claims(model: onnx.ModelProto) -> tuple[dict[str, onnx.TypeProto], str]:
    """Types onnx's shape inference (data propagation on) gives every main-graph value."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model, data_prop=True)
        note = ""
    except Exception as exc:
        inferred, note = model, f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
    types: dict[str, onnx.TypeProto] = {}
    for init in inferred.graph.initializer:
        t = onnx.TypeProto()
        t.tensor_type.elem_type = init.data_type
        for d in init.dims:
            t.tensor_type.shape.dim.add().dim_value = d
        types[init.name] = t
    for vi in (*inferred.graph.input, *inferred.graph.value_info, *inferred.graph.output):
        if vi.type.WhichOneof("value") is not None:
            types[vi.name] = vi.type
    return types, note


def score_onnx(types: Mapping[str, onnx.TypeProto], names: Sequence[str], runs: Sequence[Run]) -> dict[str, Any]:
    """Exact and wrong counts of onnx's claims over ``names``."""
    exact = wrong = 0
    wrong_examples: list[str] = []
    # A dim_param bound in no run is a variable of onnx's own (unk__N or an output's name): it
    # must denote one extent per run.
    seen: list[dict[str, tuple[int, str]]] = [{} for _ in runs]
    for name in names:
        t = types.get(name)
        problems: list[str] = []
        known = False
        if t is not None and t.WhichOneof("value") == "tensor_type":
            tt = t.tensor_type
            has_shape = tt.HasField("shape")
            dims = list(tt.shape.dim) if has_shape else []
            known = has_shape and all(
                d.HasField("dim_value") or (d.HasField("dim_param") and all(d.dim_param in b for b, _ in runs))
                for d in dims
            )
            for k, (bindings, observed) in enumerate(runs):
                arr = observed.get(name)
                if not hasattr(arr, "shape"):
                    continue
                want = _elem_np(tt.elem_type) if tt.elem_type else None
                if want is not None and want != arr.dtype:
                    problems.append(f"`{name}`: element type {want}, runtime {arr.dtype}")
                if not has_shape:
                    continue
                if len(dims) != arr.ndim:
                    problems.append(f"`{name}`: rank {len(dims)}, runtime shape {list(arr.shape)}")
                    continue
                for axis, (d, real) in enumerate(zip(dims, arr.shape)):
                    if d.HasField("dim_value") and d.dim_value != real:
                        problems.append(f"`{name}` dim {axis}: {d.dim_value}, runtime {real} at {bindings}")
                    elif d.HasField("dim_param"):
                        if d.dim_param in bindings:
                            if bindings[d.dim_param] != real:
                                problems.append(f"`{name}` dim {axis}: {d.dim_param}, runtime {real} at {bindings}")
                        else:
                            prev = seen[k].setdefault(d.dim_param, (real, name))
                            if prev[0] != real:
                                problems.append(
                                    f"`{name}` dim {axis}: {d.dim_param} is {prev[0]} at `{prev[1]}`, here {real}"
                                )
        elif t is not None and t.WhichOneof("value") is not None:
            known = False  # sequences, maps, optionals: counted, not scored in detail
        if problems:
            wrong += 1
            wrong_examples.extend(problems[:1])
        elif known:
            exact += 1
    return {"exact": exact, "wrong": wrong, "wrong_examples": wrong_examples[:5]}


# --------------------------------------------------------------------------- #
# One model
# --------------------------------------------------------------------------- #


def score(entry: dict[str, Any], models_dir: Path, details: bool = True, with_onnx: bool = True) -> dict[str, Any]:
    """Check one manifest entry; its numbers, and its problems value by value."""
    rep: dict[str, Any] = {
        "file": entry["file"],
        "category": entry.get("category", ""),
        "transform": entry.get("transform", ""),
    }
    model = onnx.load(str(models_dir / entry["file"]))
    exposed = R.expose_all(model)
    runs: list[Run] = []
    extended: list[Run] = []
    for b in entry["bindings"]:
        try:
            observed = R.run(exposed, R.feeds_for(entry, b["dims"]))
        except Exception as exc:
            rep["runtime_error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"
            return rep
        runs.append((dict(b["dims"]), observed))
        extended.append((run_bindings(model, b["dims"], observed), observed))
    producers = _producers(model)

    if with_onnx:
        start = time.perf_counter()
        types, note = onnx_claims(model)
        produced = list(dict.fromkeys(o for n in model.graph.node for o in n.output if o))
        rep["onnx"] = {
            **score_onnx(types, produced, extended),
            "error": note,
            "seconds": round(time.perf_counter() - start, 2),
        }

    start = time.perf_counter()
    try:
        result = infer.infer_model(model)
    except Exception as exc:
        rep["crash"] = f"{type(exc).__name__}: {exc}"[:500]
        return rep
    rep["infer_seconds"] = round(time.perf_counter() - start, 2)
    v = judge(result, runs)
    rep.update(
        values=len(v.names),
        exact=len(v.exact),
        not_exact=len(v.not_exact),
        wrong=len(v.wrong),
        skipped_runs=v.skipped_runs,
        unchecked_claims=v.unchecked_claims,
        errors=[str(d) for d in result.errors][:5],
    )
    if details:
        items = []
        for line in v.not_exact:
            name, _, claim = line.partition(": ")
            node = producers.get(name)
            item = {"value": name, "op": _op(node), "claim": claim, "runtime": _runtime_shapes(name, runs)}
            try:
                item["roots"] = result.explain(name).roots[:3]
            except Exception as exc:
                item["roots"] = [f"explain failed: {type(exc).__name__}: {exc}"]
            items.append(item)
        rep["not_exact_values"] = items
        rep["wrong_values"] = [
            {"value": n, "op": _op(producers.get(n)), "messages": msgs[:3]} for n, msgs in v.wrong.items()
        ]
    return rep


# --------------------------------------------------------------------------- #
# Driver
# --------------------------------------------------------------------------- #


def _table(reports: Sequence[dict[str, Any]], with_onnx: bool) -> str:
    head = f"{'file':48} {'values':>6} {'exact':>6} {'ratio':>7} {'!exact':>6} {'WRONG':>5}"
    if with_onnx:
        head += f" | {'onnx ex':>7} {'onnx ratio':>10} {'onnx W':>6}"
    lines = [head]
    tot = Counter()
    for rep in reports:
        if "crash" in rep or "runtime_error" in rep:
            what = "CRASH " + rep["crash"] if "crash" in rep else "ORT CANNOT RUN " + rep["runtime_error"]
            lines.append(f"{rep['file']:48} {what[:150]}")
            tot["crash" if "crash" in rep else "unrunnable"] += 1
            if "crash" not in rep:
                continue
        if "values" not in rep:
            continue
        v, e = rep["values"], rep["exact"]
        line = f"{rep['file']:48} {v:6d} {e:6d} {e / v if v else 1:7.2%} {rep['not_exact']:6d} {rep['wrong']:5d}"
        if with_onnx and "onnx" in rep:
            o = rep["onnx"]
            line += f" | {o['exact']:7d} {o['exact'] / v if v else 1:10.2%} {o['wrong']:6d}"
            tot["onnx_exact"] += o["exact"]
            tot["onnx_wrong"] += o["wrong"]
        lines.append(line)
        for key in ("values", "exact", "not_exact", "wrong"):
            tot[key] += rep[key]
    v = tot["values"]
    ratio = tot["exact"] / v if v else 1
    line = f"{'TOTAL':48} {v:6d} {tot['exact']:6d} {ratio:7.2%} {tot['not_exact']:6d} {tot['wrong']:5d}"
    if with_onnx:
        line += f" | {tot['onnx_exact']:7d} {tot['onnx_exact'] / v if v else 1:10.2%} {tot['onnx_wrong']:6d}"
    lines.append(line)
    lines.append(f"models: {len(reports)}, crashes: {tot['crash']}, not runnable in onnxruntime: {tot['unrunnable']}")
    return "\n".join(lines)


def _details(reports: Sequence[dict[str, Any]]) -> str:
    lines = []
    ops: Counter[str] = Counter()
    for rep in reports:
        for item in rep.get("not_exact_values", []):
            ops[f"not exact  {item['op']}"] += 1
        for item in rep.get("wrong_values", []):
            ops[f"WRONG      {item['op']}"] += 1
    if ops:
        lines.append("\nby producing operator:")
        lines += [f"  {n:5d}  {key}" for key, n in ops.most_common()]
    for rep in reports:
        if not rep.get("wrong_values") and not rep.get("not_exact_values") and not rep.get("errors"):
            continue
        lines.append(f"\n== {rep['file']}")
        lines += [f"  error: {e}" for e in rep.get("errors", [])]
        for item in rep.get("wrong_values", []):
            lines.append(f"  WRONG [{item['op']}] {item['messages'][0]}")
        for item in rep.get("not_exact_values", []):
            roots = ("  <- " + " | ".join(item["roots"])) if item.get("roots") else ""
            lines.append(
                f"  not exact [{item['op']}] {item['value']}: {item['claim']}  runtime {item['runtime']}{roots}"
            )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("filters", nargs="*", help="score only files whose name contains one of these")
    parser.add_argument("--manifest", type=Path, default=DEFAULT_MANIFEST, help="manifest.json (models beside it)")
    parser.add_argument("--json", help="write the full report to this file")
    parser.add_argument("--details", action="store_true", help="print every wrong and non-exact value")
    parser.add_argument("--no-onnx", action="store_true", help="skip onnx's shape inference")
    args = parser.parse_args(argv)
    if not args.manifest.exists():
        print(f"score_runtime: no manifest at {args.manifest}", file=sys.stderr)
        return 2
    entries = json.loads(args.manifest.read_text())["models"]
    entries = [e for e in entries if not args.filters or any(f in e["file"] for f in args.filters)]
    reports = []
    for entry in entries:
        try:
            rep = score(entry, args.manifest.parent, details=True, with_onnx=not args.no_onnx)
        except Exception as exc:
            rep = {"file": entry["file"], "runtime_error": f"scorer: {type(exc).__name__}: {exc}"[:300]}
        reports.append(rep)
        brief = (
            f"{rep.get('exact')}/{rep.get('values')} exact, {rep.get('wrong')} wrong"
            if "values" in rep
            else rep.get("crash") or rep.get("runtime_error")
        )
        print(f"{rep['file']}: {brief}", file=sys.stderr, flush=True)
    print(_table(reports, not args.no_onnx))
    if args.details:
        print(_details(reports))
    if args.json:
        Path(args.json).write_text(json.dumps(reports, indent=1) + "\n")
    bad = any(r.get("wrong") or "crash" in r for r in reports)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
