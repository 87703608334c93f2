"""What readers see of a cost: the tables of ``onnx-infer cost`` (``sections``) and the cost
section of the HTML report (``report_section``), with its plot of live memory along the node
order as inline SVG (``live_svg``)."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

from infer.core import dims as D
from infer.out.cost import Amount, Cost, Evaluation
from infer.out.sizes import Valuation, exact_bytes, human


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
    value = Valuation(ref)
    ev = cost.at_valuation(value)
    at = ", ".join(f"{k}={v}" for k, v in ref.items()) or "no variables"
    totals = [["quantity", f"at {at}", "term"]]
    for label, a in (("weights", cost.weights), ("inputs", cost.inputs), ("activations", cost.activations)):
        totals.append([label, human(value(a.term)), str(a)])
    peak = human(ev.peak) if ev.peak is not None else f"? ({ev.why})"
    totals.append(["peak live", peak, str(Amount(cost.peak.term, cost.peak.why))])
    suffix = f" (+{cost.unknown_work} nodes unknown)" if cost.unknown_work else ""
    for label, d in (("multiply-adds", cost.macs), ("FLOPs", cost.flops)):
        v = value(d)
        totals.append([label + suffix, "?" if v is None else f"{v:,}", D.to_str(d)])
    out = [("totals", totals)]
    if ev.peak_node is not None and cost.nodes:
        w = cost.nodes[ev.peak_node]
        out.append(("peak node", [["node", "op", "live", "name"], [str(w.index), w.op_type, human(ev.peak), w.name]]))
    out.append((f"top {top} nodes by output memory", _by_memory(cost, value, ev, top)))
    out.append((f"top {top} nodes by work", _by_work(cost, value, top)))
    return out


def _by_memory(cost: Cost, value: Valuation, ev: Evaluation, top: int) -> list[list[str]]:
    rows = [(value(s.bytes.term) or 0, s) for s in cost.spans if s.produced]
    rows.sort(key=lambda r: -r[0])
    out = [["node", "op", "bytes", "live at node", "output", "term"]]
    for v, s in rows[:top]:
        live = human(ev.live[s.start]) if ev.live else "?"
        out.append([str(s.start), cost.nodes[s.start].op_type, human(v), live, s.name, str(s.bytes)])
    return out


def _by_work(cost: Cost, value: Valuation, top: int) -> list[list[str]]:
    known = sorted((w for w in cost.nodes if w.known), key=lambda w: -(value(w.flops) or 0))
    out = [["node", "op", "FLOPs", "multiply-adds", "name", "FLOPs term"]]
    for w in known[:top]:
        f, m = value(w.flops), value(w.macs)
        row = [str(w.index), w.op_type, "?" if f is None else f"{f:,}", "?" if m is None else f"{m:,}"]
        out.append([*row, w.name, D.to_str(w.flops)])
    return out


# -- the report's cost section ------------------------------------------------------------------

MAX_POINTS = 20_000  # points the plot draws at most: past it each is the largest of a run of nodes
# The plot's frame in pixels: width, height, and the margins left, right, top and bottom.
WIDTH, HEIGHT, LEFT, RIGHT, TOP, BOTTOM = 900, 280, 92, 18, 16, 42


def plot_binding(cost: Cost, given: Mapping[str, int]) -> tuple[dict[str, int] | None, list[str], str]:
    """The binding the live memory is plotted at: ``given`` (input variables, or ones inference
    was run with), and each other input variable a value's size depends on at the greatest value
    the input domain allows (a note says so); ``None`` and why where the domain leaves one
    unbounded."""
    sizes = (s.bytes.term for s in cost.spans if s.bytes.term is not None)
    needed = set().union(*(D.free_names(t) for t in sizes if D.is_symbolic(t)))
    binding = dict(given)
    notes, open_ = [], []
    for v, (_, most) in cost.domain_bounds().items():
        if v in binding or v not in needed:
            continue
        if most is None:
            open_.append(v)
        else:
            binding[v] = most
            notes.append(f"{v}={most}: the greatest value the input domain allows (its worst case)")
    if open_:
        it, be = ("it", "is") if len(open_) == 1 else ("them", "are")
        why = f"{', '.join(open_)} {be} not bound and the input domain does not bound {it}"
        return None, [], f"{why}: bind {it} (--cost-bind {open_[0]}=N) to plot the live memory at each node"
    if binding and cost.domain.contains(binding) is False:
        notes.append("this binding is outside the input domain (onnx-infer domain): no valid run has it")
    return binding, notes, ""


def report_section(cost: Cost, given: Mapping[str, int], top: int = 10) -> tuple[dict[str, Any], str]:
    """The report's cost section: its data (JSON-ready; the page writes it as text) and the plot
    of the live memory at each node as inline SVG (``""`` where none is drawn: ``why`` says
    why). The tables are ``sections``' at the plotted binding, else at the reference one."""
    binding, notes, why = plot_binding(cost, given)
    ev = cost.at(binding) if binding is not None else None
    if ev is not None and ev.peak is None:
        why = f"the live memory has no value at {_text(binding or {})}: {ev.why}"
    plotted = ev is not None and ev.live is not None and ev.peak is not None
    data: dict[str, Any] = {
        "binding": binding,
        "bindingText": _text(binding) if binding is not None else None,
        "notes": notes,
        "plotted": plotted,
        "why": why or None,
        "tables": [{"title": t, "rows": rows} for t, rows in sections(cost, binding or given, top)],
        "notExpressed": cost.not_expressed,
    }
    if not plotted or ev is None or ev.live is None or ev.peak_node is None:
        return data, ""
    w = cost.nodes[ev.peak_node] if cost.nodes else None
    data["peak"] = {
        "bytes": ev.peak,
        "text": exact_bytes(ev.peak),
        "node": ev.peak_node,
        "op": w.op_type if w else "",
        "name": w.name if w else "",
    }
    data["nodesPerPoint"] = -(-len(ev.live) // MAX_POINTS)
    return data, live_svg(ev.live, ev.peak_node)


def _text(binding: Mapping[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in binding.items()) or "no variables (every size is an integer)"


def _points(live: Sequence[int]) -> list[tuple[int, int]]:
    """(node, bytes) for each node, or past ``MAX_POINTS`` for each run of nodes its largest."""
    k = -(-len(live) // MAX_POINTS)
    if k <= 1:
        return list(enumerate(live))
    return [(i, max(live[i : i + k])) for i in range(0, len(live), k)]


def live_svg(live: Sequence[int], peak_node: int) -> str:
    """The live bytes at each node as an SVG line: an inner ``svg`` whose user units are nodes
    across and bytes up (``viewBox``), so each point of the ``polyline`` is ``node,bytes`` exactly
    (the y axis flipped by its group's ``transform``); axes, ticks and labels around it in pixels.
    Only numbers and fixed words are written: nothing from the model."""
    n, most = len(live), max(max(live, default=0), 1)
    width, height = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    points = " ".join(f"{i},{v}" for i, v in _points(live))
    ticks = []
    for frac in (0, 0.5, 1):
        y = TOP + height * (1 - frac)
        label = html.escape(human(int(most * frac)))
        ticks.append(f'<line class="tick" x1="{LEFT - 4}" y1="{y:g}" x2="{LEFT}" y2="{y:g}"/>')
        ticks.append(f'<text class="ytick" x="{LEFT - 7}" y="{y + 4:g}" text-anchor="end">{label}</text>')
    return "".join(
        [
            f'<svg id="live-plot" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" ',
            'role="img" aria-label="live memory at each node, in the model\'s node order">',
            f'<svg class="data" x="{LEFT}" y="{TOP}" width="{width}" height="{height}" ',
            f'viewBox="0 0 {max(n - 1, 1)} {most}" preserveAspectRatio="none" overflow="visible">',
            f'<g transform="matrix(1 0 0 -1 0 {most})">',
            f'<polyline class="live" vector-effect="non-scaling-stroke" points="{points}"/>',
            f'<line class="peak" vector-effect="non-scaling-stroke" x1="{peak_node}" y1="0" '
            f'x2="{peak_node}" y2="{most}"/>',
            "</g></svg>",
            f'<line class="axis" x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{TOP + height}"/>',
            f'<line class="axis" x1="{LEFT}" y1="{TOP + height}" x2="{LEFT + width}" y2="{TOP + height}"/>',
            *ticks,
            f'<text class="xtick" x="{LEFT}" y="{TOP + height + 16}">0</text>',
            f'<text class="xtick" x="{LEFT + width}" y="{TOP + height + 16}" text-anchor="end">{max(n - 1, 0)}</text>',
            f'<text class="xlabel" x="{LEFT + width / 2:g}" y="{HEIGHT - 6}" text-anchor="middle">',
            "node, in the model's order (the dashed line: the peak)</text>",
            "</svg>",
        ]
    )
