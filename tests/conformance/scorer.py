"""Score the engine on the ONNX node conformance cases the installed onnx generates.

Every case of ``onnx.backend.test.case.node.collect_testcases()`` is inferred with its graph
outputs' types and all ``value_info`` cleared, and each output is compared with the expected
value of its first data set:

- **exact**: kind and element type right, every dim determined and right;
- **partial**: rank right, some dims unknown (fresh variables);
- **unknown**: untyped or unknown rank;
- **wrong**: any claim contradicts the expected value;
- **crash**: inference raised, or a rule failed internally at the node.

Two variants: *declared* (the inputs as the case declares them) and *symbolic* (every input dim
replaced by a fresh ``dim_param``; a dim counts as determined when it is an integer or an
expression over those variables, and is checked by evaluating it at the real extents).

    python -m tests.conformance.scorer [--variant declared|symbolic|both] [--reasons] [--cases REGEX]
"""

from __future__ import annotations

import argparse
import importlib
import re
import warnings
from collections import Counter, defaultdict
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, TypeProto

import infer
from infer.core import dims as D
from infer.core import types as T

VERDICTS = ("exact", "partial", "unknown", "wrong", "crash")


@dataclass(frozen=True)
class Score:
    case: str
    output: str
    variant: str
    verdict: str
    detail: str = ""
    reason: str = ""


@lru_cache(maxsize=1)
def cases() -> list[Any]:
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return list(collect_testcases())


def cases_from(modules: tuple[str, ...]) -> list[Any]:
    """The cases of some of onnx's node case modules (``"if_"``, ``"loop"``, ...), and of any
    imported before: onnx generates a module's cases, expected outputs included, when it is first
    imported, and ``cases()`` imports all of them (some ten seconds, pooling the most of it)."""
    from onnx.backend.test.case import node

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for m in modules:
            importlib.import_module(f"{node.__name__}.{m}")
    return list(node._NodeTestCases)  # (the list collect_testcases returns)


def _shape_of(value: Any) -> tuple[int, ...] | None:
    if isinstance(value, TensorProto):
        return tuple(int(d) for d in value.dims)
    if isinstance(value, np.ndarray):
        return tuple(int(d) for d in value.shape)
    if isinstance(value, (np.generic, int, float, bool)):
        return ()
    return None


def _strip(model: onnx.ModelProto) -> onnx.ModelProto:
    m = onnx.ModelProto()
    m.CopyFrom(model)
    del m.graph.value_info[:]
    for o in m.graph.output:
        o.ClearField("type")
    return m


def _symbolic(model: onnx.ModelProto, inputs: list[Any]) -> tuple[onnx.ModelProto, dict[str, int]]:
    """Every input dim becomes a dim_param; the binding maps each to the real extent."""
    bindings: dict[str, int] = {}

    def visit(tp: TypeProto, value: Any, prefix: str) -> None:
        kind = tp.WhichOneof("value")
        if kind == "tensor_type" and tp.tensor_type.HasField("shape"):
            shape = _shape_of(value)
            for j, d in enumerate(tp.tensor_type.shape.dim):
                name = f"{prefix}_{j}"
                if shape is not None and j < len(shape):
                    bindings[name] = shape[j]
                d.Clear()
                d.dim_param = name
        elif kind == "sequence_type" and isinstance(value, list) and value:
            shapes = {_shape_of(v) for v in value}
            if len(shapes) == 1:
                visit(tp.sequence_type.elem_type, value[0], prefix)
        elif kind == "optional_type" and value is not None:
            visit(tp.optional_type.elem_type, value, prefix)

    for i, inp in enumerate(model.graph.input):
        visit(inp.type, inputs[i] if i < len(inputs) else None, f"s{i}")
    return model, bindings


def _expected_type(tp: TypeProto) -> T.Type:
    return T.from_proto(tp, lambda t, i: None)


def _judge(claim: T.Type, declared: T.Type, value: Any, bindings: dict[str, int] | None, table) -> tuple[str, str]:
    """(verdict, detail) for one output."""
    if isinstance(claim, T.UnknownType):
        return "unknown", "untyped"
    if isinstance(declared, T.OptionalType):
        if not isinstance(claim, T.OptionalType):
            return "wrong", f"claimed {claim}, expected an optional"
        if value is None:
            return ("exact", "") if not isinstance(claim.elem, T.UnknownType) else ("partial", "element unknown")
        return _judge(claim.elem, declared.elem, value, bindings, table)
    if isinstance(declared, T.SequenceType):
        if not isinstance(claim, T.SequenceType):
            return "wrong", f"claimed {claim}, expected a sequence"
        shapes = [_shape_of(v) for v in (value or [])]
        return _judge_tensor(claim.elem, declared.elem, shapes, bindings, table)
    return _judge_tensor(claim, declared, [_shape_of(value)], bindings, table)


def _judge_tensor(claim: T.Type, declared: T.Type, shapes: list, bindings, table) -> tuple[str, str]:
    if isinstance(claim, T.UnknownType):
        return "unknown", "untyped"
    if not isinstance(claim, T.TensorType) or not isinstance(declared, T.TensorType):
        return "wrong", f"claimed {claim}, expected {declared}"
    if claim.elem is not None and claim.elem != declared.elem:
        return "wrong", f"element type {T.elem_name(claim.elem)}, expected {T.elem_name(declared.elem)}"
    if claim.shape is None:
        return "unknown", "unknown rank"
    complete = claim.elem is not None
    for shape in shapes:
        if shape is None:
            continue
        if len(claim.shape) != len(shape):
            return "wrong", f"claimed {claim}, runtime shape {list(shape)}"
    for axis, d in enumerate(claim.shape):
        reals = {s[axis] for s in shapes if s is not None}
        determined = d is not None and (
            isinstance(d, int) or (bindings is not None and D.free_names(d) <= set(bindings))
        )
        if not determined:
            complete = False
            continue
        val = d if isinstance(d, int) else D.evaluate(d, bindings or {})
        for r in reals:
            if val != r:
                return "wrong", f"dim {axis} = {D.to_str(d)} = {val}, expected {r} (claimed {claim})"
    return ("exact", "") if complete else ("partial", str(claim))


def score_case(case: Any, variant: str) -> list[Score]:
    inputs, outputs = case.data_sets[0]
    model = _strip(case.model)
    bindings: dict[str, int] | None = None
    if variant == "symbolic":
        model, bindings = _symbolic(model, list(inputs))
    try:
        result = infer.infer_model(model)
    except Exception as e:  # a crash of ours: counted, never hidden
        return [Score(case.name, o.name, variant, "crash", f"{type(e).__name__}: {e}") for o in case.model.graph.output]
    crashes = [d for d in result.diagnostics if d.code == "rule-crash"]
    scores = []
    for k, o in enumerate(case.model.graph.output):
        declared = _expected_type(o.type)
        value = outputs[k] if k < len(outputs) else None
        if crashes:
            scores.append(Score(case.name, o.name, variant, "crash", crashes[0].message))
            continue
        try:
            claim = result.type_of(o.name)
        except KeyError:
            claim = T.UNKNOWN
        verdict, detail = _judge(claim, declared, value, bindings, result.dims)
        reason = ""
        if verdict in ("partial", "unknown"):
            reason = _reason(result, o.name)
        scores.append(Score(case.name, o.name, variant, verdict, detail, reason))
    return scores


def _reason(result: infer.InferenceResult, name: str) -> str:
    """A short, groupable reason: the first root cause, with names and numbers removed."""
    for d in result.diagnostics:
        if d.code in ("no-rule", "unsupported", "unknown-operator"):
            return f"{d.code}: {d.location.op_type}"
    try:
        exp = result.explain(name)
    except KeyError:
        return "not produced"
    roots = exp.roots or [s.text for s in exp.steps]
    if not roots:
        return "element type unknown"
    text = re.sub(r"`[^`]*`", "`_`", roots[0])
    text = re.sub(r"\(node \d+ of [^)]*\)", "", text)
    return re.sub(r"\d+", "N", text)


def run(variants: tuple[str, ...] = ("declared", "symbolic"), pattern: str | None = None) -> list[Score]:
    rx = re.compile(pattern) if pattern else None
    out: list[Score] = []
    for case in cases():
        if rx and not rx.search(case.name):
            continue
        for v in variants:
            out.extend(score_case(case, v))
    return out


def table(scores: list[Score]) -> str:
    by_variant: dict[str, Counter] = defaultdict(Counter)
    for s in scores:
        by_variant[s.variant][s.verdict] += 1
    lines = [f"{'variant':<10} {'outputs':>7} " + " ".join(f"{v:>8}" for v in VERDICTS)]
    for variant, c in by_variant.items():
        lines.append(f"{variant:<10} {sum(c.values()):>7} " + " ".join(f"{c[v]:>8}" for v in VERDICTS))
    return "\n".join(lines)


def reasons(scores: list[Score], variant: str, top: int = 40) -> str:
    c = Counter(s.reason for s in scores if s.variant == variant and s.verdict in ("partial", "unknown"))
    return "\n".join(f"{n:>5}  {r}" for r, n in c.most_common(top))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--variant", choices=["declared", "symbolic", "both"], default="both")
    p.add_argument("--cases", help="only cases whose name matches this regular expression")
    p.add_argument("--reasons", action="store_true", help="group the partial and unknown outputs by reason")
    p.add_argument("--list", choices=VERDICTS, help="list the outputs with this verdict")
    args = p.parse_args()
    variants = ("declared", "symbolic") if args.variant == "both" else (args.variant,)
    scores = run(variants, args.cases)
    print(table(scores))
    if args.reasons:
        for v in variants:
            print(f"\nwhy not exact ({v}):\n{reasons(scores, v)}")
    if args.list:
        for s in scores:
            if s.verdict == args.list:
                print(f"{s.variant:<9} {s.case} {s.output}: {s.detail} {s.reason}")


if __name__ == "__main__":
    main()
