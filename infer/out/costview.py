"""What readers see of a cost: the tables of ``onnx-infer cost`` (``sections``) and the cost
section of the HTML report (``report_section``), with its plot of live memory along the node
order as inline SVG (``live_svg``)."""

from __future__ import annotations

from collections.abc import Mapping

from infer.core import dims as D
from infer.out.cost import Amount, Cost, Evaluation
from infer.out.sizes import human


def reference_binding(cost: Cost, given: Mapping[str, int]) -> dict[str, int]:
    """``given`` completed for ranking: each unbound variable at the domain's bound of it, else
    128, then moved to a valid binding near that (the ranking is only an order)."""
    bounds = cost.domain_bounds()
    want = {v: given.get(v, bounds[v][1] or 128) for v in cost.variables}
    near = cost.domain.near(want, fixed={k: v for k, v in given.items() if k in cost.variables})
    return {**want, **(near or {}), **given}


def sections(cost: Cost, bindings: Mapping[str, int], top: int = 10) -> list[tuple[str, list[list[str]]]]:
    """The tables of ``onnx-infer cost``: totals, the peak, the top nodes by memory and by work,
    each (title, rows) with the first row the header and the long terms last."""
    ref = reference_binding(cost, bindings)
    ev = cost.at(ref)
    at = ", ".join(f"{k}={v}" for k, v in ref.items()) or "no variables"
    totals = [["quantity", f"at {at}", "term"]]
    for label, a in (("weights", cost.weights), ("inputs", cost.inputs), ("activations", cost.activations)):
        totals.append([label, human(a.at(ref)), str(a)])
    peak = human(ev.peak) if ev.peak is not None else f"? ({ev.why})"
    totals.append(["peak live", peak, str(Amount(cost.peak.term, cost.peak.why))])
    suffix = f" (+{cost.unknown_work} nodes unknown)" if cost.unknown_work else ""
    for label, d in (("multiply-adds", cost.macs), ("FLOPs", cost.flops)):
        v = Amount(d).at(ref)
        totals.append([label + suffix, "?" if v is None else f"{v:,}", D.to_str(d)])
    out = [("totals", totals)]
    if ev.peak_node is not None and cost.nodes:
        w = cost.nodes[ev.peak_node]
        out.append(("peak node", [["node", "op", "live", "name"], [str(w.index), w.op_type, human(ev.peak), w.name]]))
    out.append((f"top {top} nodes by output memory", _by_memory(cost, ref, ev, top)))
    out.append((f"top {top} nodes by work", _by_work(cost, ref, top)))
    return out


def _by_memory(cost: Cost, ref: Mapping[str, int], ev: Evaluation, top: int) -> list[list[str]]:
    rows = [(s.bytes.at(ref) or 0, s) for s in cost.spans if s.produced]
    rows.sort(key=lambda r: -r[0])
    out = [["node", "op", "bytes", "live at node", "output", "term"]]
    for v, s in rows[:top]:
        live = human(ev.live[s.start]) if ev.live else "?"
        out.append([str(s.start), cost.nodes[s.start].op_type, human(v), live, s.name, str(s.bytes)])
    return out


def _by_work(cost: Cost, ref: Mapping[str, int], top: int) -> list[list[str]]:
    known = sorted((w for w in cost.nodes if w.known), key=lambda w: -(Amount(w.flops).at(ref) or 0))
    out = [["node", "op", "FLOPs", "multiply-adds", "name", "FLOPs term"]]
    for w in known[:top]:
        f, m = Amount(w.flops).at(ref), Amount(w.macs).at(ref)
        row = [str(w.index), w.op_type, "?" if f is None else f"{f:,}", "?" if m is None else f"{m:,}"]
        out.append([*row, w.name, D.to_str(w.flops)])
    return out
