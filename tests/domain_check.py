"""The input domain checked against onnxruntime: runs inside it succeed, runs outside fail.

For each model: its domain (``result.domain``); bindings drawn inside it (the smallest, and
near a few sizes) must run in onnxruntime; for each requirement, a binding that breaks it and
keeps the others must be refused. A requirement onnxruntime does not refuse is a claim the
runtime contradicts: a finding. ::

    python -m tests.domain_check                  # every dynamic model of tests/models
    python -m tests.domain_check tests/models/more/*.onnx --json

``tests/test_domain.py`` runs a slice of it in CI; docs/domain.md has the full numbers.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import onnx

import infer
from infer.check.domain import Domain
from infer.core import dims as D
from infer.core.dimparse import parse_dim
from infer.out.verify import Session, domain_aliases, make_feeds
from tests.support.hardware import hardware_refusal

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "models"
SIZES = (2, 3, 5, 8, 17, 32, 70, 130)  # near which inside bindings are drawn (with the smallest)


@dataclass
class ModelCheck:
    """What one model's domain gave against onnxruntime."""

    model: str
    domain: list[str]
    inside_ran: int = 0
    inside: int = 0
    outside_refused: int = 0
    outside: int = 0
    undrawable: list[str] = field(default_factory=list)  # constraints no breaking binding was found for
    findings: list[str] = field(default_factory=list)  # inside refused, outside accepted
    # Inside bindings refused at a node whose requirement the domain lists as not expressed.
    explained: list[str] = field(default_factory=list)
    # Outside bindings of a requirement "for every input value" that ran with the values drawn.
    value_dependent: list[str] = field(default_factory=list)
    # Outside bindings of an assumption (a graph input's name read as an expression) that ran: the
    # model does not require it, only inference's claims rest on it.
    assumed_ran: list[str] = field(default_factory=list)
    # Bindings onnxruntime refused because this machine's CPU lacks a kernel: counted neither
    # inside nor outside, since the refusal says nothing of the domain (tests/support/hardware.py).
    hardware: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return self.__dict__


def _runs(
    session: Session, model: onnx.ModelProto, binding: Mapping[str, str | int], names: Mapping[str, str]
) -> str | None:
    """``None`` when onnxruntime runs the model at ``binding``, else its first line of refusal."""
    extents = {names.get(k, k): v for k, v in binding.items()}
    for inp in model.graph.input:  # a name that spells an expression (``past_sequence + sequence``)
        for d in inp.type.tensor_type.shape.dim:
            if d.dim_param and d.dim_param not in extents:
                value = D.evaluate(parse_dim(d.dim_param, D.symbol), binding)
                if isinstance(value, int):
                    extents[d.dim_param] = value
    try:
        session.run(make_feeds(model, extents, seed=0))
    except Exception as e:  # onnxruntime's refusals are plain exceptions of several kinds
        return str(e).splitlines()[0][:200] if str(e) else type(e).__name__
    return None


def check_model(path: Path, sizes: Sequence[int] = SIZES, seed: int = 0) -> ModelCheck:
    result = infer.infer_model(str(path))
    model = onnx.load(str(path))
    dom = result.domain
    out = ModelCheck(path.name, [str(c) for c in dom.constraints] + [str(n) for n in dom.not_expressed])
    if not dom.variables:
        return out
    names = domain_aliases(result)
    if not dom.runnable:
        return _refused_everywhere(out, model, dom, names)
    session = Session(model)
    rng = random.Random(seed)
    wanted = [{v: 1 for v in dom.variables}] + [{v: s + rng.randrange(3) for v in dom.variables} for s in sizes]
    inside = [b for w in wanted if (b := dom.near(w)) is not None]
    unexpressed = {d.site.node_name for n in dom.not_expressed for d in n.demands if d.site and d.site.node_name}
    for b in dict.fromkeys(tuple(sorted(b.items())) for b in inside):
        refusal = _runs(session, model, dict(b), names)
        if refusal is not None and hardware_refusal(refusal):
            out.hardware.append(f"inside {dict(b)}: {refusal}")
            continue
        out.inside += 1
        if refusal is None:
            out.inside_ran += 1
        elif any(f"Name:'{n}'" in refusal for n in unexpressed):
            out.explained.append(f"inside {dict(b)} refused: {refusal}")
        else:
            out.findings.append(f"inside {dict(b)} refused: {refusal}")
    for c in dom.binding:
        if c.kind == "runtime":
            continue
        b = dom.outside(c, {v: 4 for v in dom.variables})
        if b is None:
            out.undrawable.append(str(c))
            continue
        refusal = _runs(session, model, b, names)
        if refusal is not None and hardware_refusal(refusal):
            out.hardware.append(f"outside {b}: {refusal}")
            continue
        out.outside += 1
        if refusal is not None:
            out.outside_refused += 1
        elif c.every_value:  # needed at some values of the inputs, not at the random ones drawn
            out.value_dependent.append(f"outside {b} ran with the values drawn: {c}")
        elif c.assumed:
            out.assumed_ran.append(f"outside {b} ran: {c} is inference's assumption")
        elif c.runtime_only:
            out.findings.append(f"outside {b} ran, though onnxruntime is said to refuse: {c}")
        else:
            out.findings.append(f"outside {b} ran: {c} is not required")
    return out


def _refused_everywhere(out: ModelCheck, model: onnx.ModelProto, dom: Domain, names: Mapping[str, str]) -> ModelCheck:
    """A domain with a node onnxruntime refuses (a ``runtime`` constraint): the model must not
    load, or not run at a binding of every variable 1 (counted as one outside binding)."""
    try:
        refusal = _runs(Session(model), model, {v: 1 for v in dom.variables}, names)
    except Exception as e:  # refused when the session is made
        refusal = str(e).splitlines()[0][:200] if str(e) else type(e).__name__
    if refusal is not None and hardware_refusal(refusal):
        out.hardware.append(f"at every variable 1: {refusal}")
        return out
    out.outside += 1
    if refusal is not None:
        out.outside_refused += 1
    else:
        said = "; ".join(c.text for c in dom.binding if c.kind == "runtime")
        out.findings.append(f"onnxruntime runs the model, though it is said to refuse it: {said}")
    return out


def dynamic_models(paths: Sequence[Path]) -> list[Path]:
    """The models whose inputs declare a dimension variable."""
    out = []
    for p in paths:
        m = onnx.load(str(p), load_external_data=False)
        inits = {t.name for t in m.graph.initializer}
        if any(d.dim_param for i in m.graph.input if i.name not in inits for d in i.type.tensor_type.shape.dim):
            out.append(p)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("models", nargs="*", type=Path, help="models (default: tests/models and tests/models/more)")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    paths = args.models or sorted(CORPUS.glob("*.onnx")) + sorted((CORPUS / "more").glob("*.onnx"))
    checks = []
    for path in dynamic_models(paths):
        c = check_model(path)
        checks.append(c)
        if not args.json:
            head = f"{c.model}: inside {c.inside_ran}/{c.inside} ran, outside {c.outside_refused}/{c.outside} refused"
            tail = f" ({len(c.explained)} refused at a requirement not expressed); {len(c.domain)} lines"
            lacking = [f"not run here, the CPU lacks the kernel: {h}" for h in c.hardware]
            print(head + tail + "".join(f"\n    {f}" for f in c.findings + lacking), flush=True)
    totals = {k: sum(getattr(c, k) for c in checks) for k in ("inside_ran", "inside", "outside_refused", "outside")}
    totals["explained"] = sum(len(c.explained) for c in checks)
    totals["value_dependent"] = sum(len(c.value_dependent) for c in checks)
    totals["assumed_ran"] = sum(len(c.assumed_ran) for c in checks)
    totals["hardware"] = sum(len(c.hardware) for c in checks)
    if args.json:
        print(json.dumps({"models": [c.to_json() for c in checks], "totals": totals}, indent=1))
    else:
        print(
            f"{len(checks)} models: inside {totals['inside_ran']}/{totals['inside']} ran "
            f"({totals['explained']} refused at a requirement not expressed), outside "
            f"{totals['outside_refused']}/{totals['outside']} refused ({totals['value_dependent']} more ran with "
            f"the values drawn, of requirements for every input value, {totals['assumed_ran']} outside an "
            "assumption of inference); "
            f"{totals['hardware']} not run for a kernel this CPU lacks; "
            f"{sum(len(c.findings) for c in checks)} findings"
        )
    return 1 if any(c.findings for c in checks) else 0


if __name__ == "__main__":
    sys.exit(main())
