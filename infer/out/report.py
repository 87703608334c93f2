"""One self-contained HTML page about an inferred model: ``onnx-infer report MODEL -o report.html``.

The page holds every value's type and shape (fresh and unknown dims highlighted), the
explanation of each value whose shape is not fully known, the diagnostics, the dimension table,
a picture of the graph around the selected value: its producer, its consumers and two hops
either way, laid out in layers by the page itself as an inline SVG, and what the shapes cost
(``infer.out.costview``): its tables, and a plot of the live memory at each node at one binding,
an inline SVG written here of numbers and fixed words only.

Nothing is fetched when the page is viewed: the CSS, the script and the data are inline, and a
Content-Security-Policy forbids every network request. Names from the model reach the page only
as JSON data and the script writes them with ``textContent``, never as markup; every string of
that data, and the title, is escaped first (``infer.out.escape``), so a control character or a
bidi override in a name shows as ``\x1b`` or ``\u202e`` and cannot reorder what the page shows.
"""

from __future__ import annotations

import html
import json
import re
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from infer.core import dims as D
from infer.core.scopes import MAIN, GraphPath, GraphRecord, find_record
from infer.core.values import Value
from infer.core.version import __version__
from infer.out.costview import report_section
from infer.out.escape import escaped
from infer.out.result import KNOWN, LEVELS, SYMBOLIC, InferenceResult, Summary, classify

MAX_STEPS = 60  # explanation steps kept per value (the rest are summarized)
MAX_CONTENTS = 16  # elements of known contents shown

# Statuses whose values get an explanation; known and symbolic ones need none.
_EXPLAINED = tuple(s for s in LEVELS if s not in (KNOWN, SYMBOLIC))


def _contents(v: Value) -> str | None:
    """Known contents as the CLI prints them (``= [batch, sequence]``), when small."""
    if v.known is None or v.known.size > MAX_CONTENTS:
        return None
    text = str(v)
    head = str(v.type)
    return text[len(head) :].lstrip(" =") if text.startswith(head) else None


def _explanation(result: InferenceResult, path: str, name: str) -> list[list[Any]]:
    exp = result.explain(name, graph=path)
    steps = [[s.depth, s.text, 1 if s.root else 0] for s in exp.steps[:MAX_STEPS]]
    if len(exp.steps) > MAX_STEPS:
        steps.append([0, f"... {len(exp.steps) - MAX_STEPS} more steps (see `onnx-infer explain`)", 0])
    return steps


def _graph_data(result: InferenceResult, rec: GraphRecord, explanations: list[Any]) -> dict[str, Any]:
    """Nodes and values of one graph, compact: the page reads them by position."""
    table = result.dims
    consumers: dict[str, list[int]] = {}
    for idx, node in enumerate(rec.nodes):
        for i in dict.fromkeys(x for x in node.input if x):
            consumers.setdefault(i, []).append(idx)
    values: dict[str, list[Any]] = {}

    def add(name: str, v: Value, kind: str, path: str) -> None:
        status = classify(v.type, table)
        expl = None
        if status in _EXPLAINED:
            try:
                expl = len(explanations)
                explanations.append(_explanation(result, path, name))
            except KeyError:  # pragma: no cover - every recorded value can be explained
                expl = None
        values[name] = [
            str(v.type),
            status,
            kind,
            rec.producers.get(name, -1),
            consumers.get(name, []),
            expl,
            _contents(v),
        ]

    for name, v in rec.values.items():
        if name in rec.producers:
            kind = "value"
        elif name in rec.initializers:
            kind = "initializer"
        else:
            kind = "input"
        add(name, v, kind, rec.path)
    # Names a node reads from an enclosing graph: shown with the type they have there.
    for name in consumers:
        parent = GraphPath(rec.path).parent
        if name in values or parent is None:
            continue
        outer = find_record(result.graphs, parent, name)
        if outer is not None:
            add(name, outer.values[name], "outer", outer.path)
    nodes = [[n.op_type, n.name, n.domain, list(n.input), list(n.output)] for n in rec.nodes]
    return {"path": rec.path, "nodes": nodes, "values": values, "inputs": rec.inputs, "outputs": rec.outputs}


def _initial(graphs: list[dict[str, Any]]) -> dict[str, Any]:
    """The value selected when the page opens: the first not fully known, else the first output."""
    main = graphs[0]
    for name, v in main["values"].items():
        if v[2] == "value" and v[1] in _EXPLAINED:
            return {"g": 0, "v": name}
    for name in main["outputs"]:
        if name in main["values"]:
            return {"g": 0, "v": name}
    names = list(main["values"])
    return {"g": 0, "v": names[0] if names else None}


def report_data(result: InferenceResult, title: str, cost_bindings: Mapping[str, int] | None = None) -> dict[str, Any]:
    """Everything the page shows, as JSON-ready data (the plot of live memory apart: ``render``)."""
    return _report(result, title, cost_bindings)[0]


def _report(result: InferenceResult, title: str, cost_bindings: Mapping[str, int] | None) -> tuple[dict[str, Any], str]:
    """The page's data, and its plot of live memory as inline SVG (``costview.report_section``)."""
    cost, plot = report_section(result.cost, cost_bindings or {})
    explanations: list[Any] = []
    records = [r for r in result.graphs.values() if r.kind == "graph"]
    records.sort(key=lambda r: (r.path != MAIN, r.path))
    graphs = [_graph_data(result, rec, explanations) for rec in records]
    # The summary from the statuses just computed (result.summary() would classify them again).
    counts = Counter(v[1] for g in graphs for v in g["values"].values() if v[2] == "value")
    summary = Summary(sum(counts.values()), dict(counts))
    variables = [
        {
            "name": var.name,
            "kind": var.origin.kind,
            "definition": None if var.definition is None else D.to_str(var.definition),
            "origin": var.origin.reason,
            "node": str(var.origin.site) if var.origin.site else None,
        }
        for var in result.dims
    ]
    return {
        "title": title,
        "tool": f"onnx-infer {__version__}",
        "summary": summary.to_dict(),
        "summaryText": str(summary),
        "levels": list(LEVELS),
        "fresh": sorted(v.name for v in result.dims if v.is_fresh),
        "graphs": graphs,
        "explanations": explanations,
        "diagnostics": [d.to_dict() for d in result.diagnostics],
        "dims": variables,
        "facts": [str(f) for f in result.dims.facts],
        "domain": [str(c) for c in result.domain.constraints] + [str(n) for n in result.domain.not_expressed],
        "initial": _initial(graphs) if graphs else None,
        "cost": cost,
    }, plot


def _shown(data: Any) -> Any:
    """``data`` with every string in it, keys included, ``escaped``: the same name escapes the same
    way wherever the page refers to it, so the page's lookups by name still meet."""
    if isinstance(data, str):
        return escaped(data)
    if isinstance(data, dict):
        return {escaped(k) if isinstance(k, str) else k: _shown(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [_shown(x) for x in data]
    return data


def _script_json(data: Any) -> str:
    """JSON that is safe inside a <script> element whatever the model's names contain."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def render(result: InferenceResult, title: str, cost_bindings: Mapping[str, int] | None = None) -> str:
    """The HTML page, as one string; its cost section plots the live memory at ``cost_bindings``
    (input variables), the others at the greatest value the input domain allows."""
    data, plot = _report(result, title, cost_bindings)
    blocks = {
        "TITLE": html.escape(escaped(f"{title}: onnx-infer report")),
        "CSS": _CSS,
        "JS": _JS,
        "DATA": _script_json(_shown(data)),
        "PLOT": plot,  # numbers and fixed words only (``costview.live_svg``)
    }
    # The page is assembled from the template's literal parts and the blocks in one pass: text
    # that came from the user or the model (a title of "__JS__", a value named "__DATA__") is
    # never searched for placeholders again.
    return "".join(blocks[part] if k % 2 else part for k, part in enumerate(_PAGE_PARTS))


def write_report(
    result: InferenceResult, dest: str | Path, title: str | None = None, cost_bindings: Mapping[str, int] | None = None
) -> Path:
    """Write the page to ``dest`` (``infer.out.output.write_file``: a regular file, atomically); return the path."""
    from infer.out.output import write_file

    dest = Path(dest)
    write_file(render(result, title or dest.stem, cost_bindings).encode("utf-8"), dest)
    return dest


# -- the page ----------------------------------------------------------------------------------
# Kept here rather than in asset files so the module is the whole feature. ``_PAGE_PARTS`` (at the
# end of the module) splits the template once: literal text at even positions, placeholder names
# at odd ones.

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy"
 content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>__TITLE__</title>
<style>__CSS__</style>
</head>
<body>
<header>
  <h1 id="title"></h1>
  <div id="summary" class="badges"></div>
</header>
<main>
  <section id="values-pane">
    <div class="controls">
      <input id="filter" type="search" placeholder="filter by name, type or operator" aria-label="filter">
      <select id="status" aria-label="status">
        <option value="">every status</option>
        <option value="!known">not fully known</option>
      </select>
      <label><input id="show-init" type="checkbox"> initializers</label>
      <span id="count"></span>
    </div>
    <div class="scroll">
      <table id="values">
        <colgroup>
          <col style="width:38%"><col style="width:30%"><col style="width:11%"><col style="width:21%">
        </colgroup>
        <thead><tr><th>value</th><th>type</th><th>status</th><th>produced by</th></tr></thead>
        <tbody></tbody>
      </table>
    </div>
  </section>
  <section id="detail-pane">
    <div id="detail"><p class="muted">Click a value to see its type, its explanation and the graph around it.</p></div>
    <div id="graph" class="graph"></div>
    <div id="explanation"></div>
  </section>
</main>
<section id="diagnostics-pane"><h2>Diagnostics</h2><div id="diagnostics"></div></section>
<section id="domain-pane"><h2>Input domain: the sizes the model accepts</h2><div id="domain"></div></section>
<section id="dims-pane"><h2>Dimension variables</h2><div id="dims"></div><div id="facts"></div></section>
<section id="cost-pane"><h2>What the shapes cost</h2><div id="cost-head"></div>
<div id="cost-plot" class="plot">__PLOT__</div><div id="cost"></div></section>
<footer id="footer"></footer>
<script id="data" type="application/json">__DATA__</script>
<script>__JS__</script>
</body>
</html>
"""

_CSS = """
:root { --fg:#1d2330; --muted:#667085; --line:#d9dee7; --bg:#f6f7f9; --panel:#fff;
  --known:#2e7d32; --symbolic:#1f5fbf; --partial:#c25e00; --bad:#b42318; --sel:#ffd84d; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;
  color:var(--fg); background:var(--bg); }
header { padding:10px 16px; background:#20283a; color:#fff; }
h1 { font-size:18px; margin:0 0 6px 0; font-weight:600; }
h2 { font-size:15px; margin:0 0 8px 0; }
.badges { display:flex; flex-wrap:wrap; gap:6px; }
.badge { border-radius:10px; padding:1px 9px; font-size:12px; background:#3a4560; color:#fff; cursor:pointer;
  border:1px solid transparent; }
.badge.known { background:var(--known); } .badge.symbolic { background:var(--symbolic); }
.badge.partial { background:var(--partial); } .badge.unknown-rank, .badge.untyped { background:var(--bad); }
.badge.active { border-color:#fff; }
main { display:grid; grid-template-columns:minmax(420px,1fr) minmax(420px,1.1fr); gap:12px; padding:12px 16px; }
section { background:var(--panel); border:1px solid var(--line); border-radius:6px; padding:10px; min-width:0; }
#diagnostics-pane, #domain-pane, #dims-pane, #cost-pane { margin:0 16px 12px 16px; }
#cost-pane h3 { font-size:13px; margin:12px 0 4px 0; }
.plot svg { display:block; width:100%; max-width:900px; height:auto; }
.plot polyline.live { fill:none; stroke:var(--symbolic); stroke-width:1.5; }
.plot line.peak { stroke:var(--bad); stroke-width:1; stroke-dasharray:4 3; }
.plot line.axis, .plot line.tick { stroke:#8b95a7; }
.plot text { font:11px system-ui,sans-serif; fill:var(--muted); }
.controls { display:flex; gap:8px; align-items:center; margin-bottom:8px; flex-wrap:wrap; }
.controls input[type=search] { flex:1; min-width:160px; padding:4px 6px; }
#count { color:var(--muted); font-size:12px; }
.scroll { max-height:72vh; overflow:auto; border-top:1px solid var(--line); }
table { border-collapse:collapse; width:100%; }
#values { table-layout:fixed; }
#values td.prod { white-space:nowrap; overflow:hidden; text-overflow:ellipsis; }
th, td { text-align:left; padding:3px 6px; border-bottom:1px solid #eef0f4; vertical-align:top; }
th { position:sticky; top:0; background:#fafbfc; font-weight:600; font-size:12px; color:var(--muted); }
#values tbody tr { cursor:pointer; }
#values tbody tr:hover { background:#f1f5ff; }
#values tbody tr.selected { background:#fff4c2; }
.mono, .type { font-family:ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace; font-size:12px; }
.name { font-family:ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace; font-size:12px; overflow-wrap:anywhere; }
.fresh { background:#ffe0b8; color:#8a3b00; border-radius:3px; padding:0 2px; }
.unknown { background:#ffd6d1; color:var(--bad); border-radius:3px; padding:0 2px; font-weight:600; }
.status { font-size:11px; border-radius:8px; padding:0 6px; color:#fff; white-space:nowrap; }
.status.known { background:var(--known); } .status.symbolic { background:var(--symbolic); }
.status.partial { background:var(--partial); } .status.unknown-rank, .status.untyped { background:var(--bad); }
.muted { color:var(--muted); }
#detail h2 { font-family:ui-monospace,"DejaVu Sans Mono",Menlo,monospace; word-break:break-all; }
#detail dl { display:grid; grid-template-columns:max-content 1fr; gap:2px 10px; margin:0 0 8px 0; }
#detail dt { color:var(--muted); } #detail dd { margin:0; }
a.link { color:var(--symbolic); cursor:pointer; text-decoration:underline; }
.graph { overflow:auto; max-height:62vh; border:1px solid var(--line); border-radius:4px; background:#fbfcfe; }
.graph svg { display:block; margin:0 auto; }
.graph .op rect { fill:#e8ecf5; stroke:#51607a; }
.graph .op text { font:600 12px system-ui,sans-serif; fill:#1d2330; }
.graph .op text.w { font:11px ui-monospace,"DejaVu Sans Mono",Menlo,monospace; fill:#475467; }
.graph .val rect { fill:#fff; stroke:#9aa4b5; }
.graph .val.symbolic rect { stroke:var(--symbolic); }
.graph .val.known rect { stroke:var(--known); }
.graph .val.partial rect { fill:#fff1e0; stroke:var(--partial); }
.graph .val.unknown-rank rect, .graph .val.untyped rect { fill:#ffe9e6; stroke:var(--bad); }
.graph .val.sel rect { stroke:#000; stroke-width:2.5; fill:var(--sel); }
.graph .val text { font:11px ui-monospace,"DejaVu Sans Mono",Menlo,monospace; fill:#1d2330; }
.graph .val text.t { fill:#475467; }
.graph tspan.fresh { fill:#c25e00; font-weight:700; } .graph tspan.unknown { fill:var(--bad); font-weight:700; }
.graph .more text { font:italic 11px system-ui,sans-serif; fill:var(--muted); }
.graph g.op, .graph g.val { cursor:pointer; }
.graph path.edge { fill:none; stroke:#8b95a7; stroke-width:1.2; }
#explanation ol { list-style:none; padding-left:0; margin:6px 0; }
#explanation li { font-size:13px; margin:2px 0; }
#explanation li.root { font-weight:600; }
#explanation li.root::before { content:"root cause: "; color:var(--bad); }
.sev-error { color:var(--bad); font-weight:600; } .sev-warning { color:#9a6700; font-weight:600; }
.sev-info { color:var(--muted); }
#diagnostics tr.clickable { cursor:pointer; } #diagnostics tr.clickable:hover { background:#f1f5ff; }
footer { color:var(--muted); font-size:12px; padding:0 16px 16px 16px; }
"""

_JS = r"""
(function () {
"use strict";
var DATA = JSON.parse(document.getElementById("data").textContent);
var FRESH = new Set(DATA.fresh);
var SVGNS = "http://www.w3.org/2000/svg";
var HOPS = 2, MAX_FANOUT = 6, MAX_OPS = 30, MAX_PORTS = 8;
var selected = null;

function el(tag, cls, text) {
  var e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = text;
  return e;
}
function sv(tag, attrs) {
  var e = document.createElementNS(SVGNS, tag);
  for (var k in attrs) e.setAttribute(k, attrs[k]);
  return e;
}
function clear(e) { while (e.firstChild) e.removeChild(e.firstChild); return e; }

// A type string with fresh variables and unknown parts highlighted.
function typeSpan(text) {
  var span = el("span", "type");
  var parts = String(text).split(/([A-Za-z_][A-Za-z0-9_]*|\[\*\]|\?)/);
  for (var i = 0; i < parts.length; i++) {
    var p = parts[i];
    if (!p) continue;
    if (FRESH.has(p)) {
      var f = el("span", "fresh", p);
      f.title = "fresh variable: an extent inference could not determine";
      span.appendChild(f);
    } else if (p === "?" || p === "[*]" || p === "unknown") {
      var u = el("span", "unknown", p);
      u.title = "unknown";
      span.appendChild(u);
    } else span.appendChild(document.createTextNode(p));
  }
  return span;
}
// A name that may wrap after its separators (exported names are long paths).
function nameSpan(text) {
  var span = el("span", "name"), parts = String(text).split(/(?<=[\/_.:])/);
  parts.forEach(function (p, i) {
    if (i) span.appendChild(document.createElement("wbr"));
    span.appendChild(document.createTextNode(p));
  });
  return span;
}
// The end of a long name: the start is usually a prefix every name shares.
function tail(text, n) { return text.length > n ? "\u2026" + text.slice(text.length - n + 1) : text; }
function statusSpan(s) { return el("span", "status " + s, s); }
function value(g, name) { return DATA.graphs[g].values[name]; }
function opLabel(g, idx) {
  var n = DATA.graphs[g].nodes[idx];
  return n[0] + (n[1] ? " `" + n[1] + "`" : "") + " (node " + idx + ")";
}

// -- header, summary, footer -------------------------------------------------------------------
function header() {
  document.getElementById("title").textContent = DATA.title + ": " + DATA.summaryText;
  var box = document.getElementById("summary");
  var labels = { "known": "fully known", "symbolic": "symbolic", "partial": "with unknown dims",
                 "unknown-rank": "of unknown rank", "untyped": "untyped" };
  DATA.levels.forEach(function (lv) {
    var b = el("span", "badge " + lv, DATA.summary[lv] + " " + labels[lv]);
    b.addEventListener("click", function () {
      var sel = document.getElementById("status");
      sel.value = sel.value === lv ? "" : lv;
      renderTable();
    });
    box.appendChild(b);
  });
  var d = DATA.diagnostics;
  var errs = d.filter(function (x) { return x.severity === "error"; }).length;
  var b2 = el("span", "badge", errs + " errors, " + (d.length - errs) + " other diagnostics");
  b2.addEventListener("click", function () { document.getElementById("diagnostics-pane").scrollIntoView(); });
  box.appendChild(b2);
  document.getElementById("footer").textContent = "Generated by " + DATA.tool +
    ". Fresh variables (highlighted) stand for extents inference could not determine; click a value for why.";
}

// -- the values table --------------------------------------------------------------------------
function renderTable() {
  var tbody = clear(document.querySelector("#values tbody"));
  var q = document.getElementById("filter").value.trim().toLowerCase();
  var st = document.getElementById("status").value;
  var showInit = document.getElementById("show-init").checked;
  var shown = 0, total = 0;
  DATA.graphs.forEach(function (g, gi) {
    var first = true;
    Object.keys(g.values).forEach(function (name) {
      var v = g.values[name];
      if (v[2] === "outer") return;
      if (v[2] === "initializer" && !showInit) return;
      total++;
      if (st === "!known" ? v[1] === "known" : st && v[1] !== st) return;
      var prod = v[3] >= 0 ? g.nodes[v[3]][0] : v[2];
      if (q && (name + " " + v[0] + " " + prod).toLowerCase().indexOf(q) < 0) return;
      if (first && DATA.graphs.length > 1) {
        var h = el("tr"), c = el("td", "muted", "graph " + g.path);
        c.colSpan = 4; h.appendChild(c); tbody.appendChild(h);
        first = false;
      }
      var tr = el("tr");
      tr.dataset.g = gi; tr.dataset.v = name;
      var nm = el("td"); nm.appendChild(nameSpan(name)); tr.appendChild(nm);
      var t = el("td"); t.appendChild(typeSpan(v[0])); tr.appendChild(t);
      var s = el("td"); s.appendChild(statusSpan(v[1])); tr.appendChild(s);
      var by = v[3] >= 0 ? prod + (g.nodes[v[3]][1] ? " " + g.nodes[v[3]][1] : "") : "(" + v[2] + ")";
      var pc = el("td", "mono prod", by);
      pc.title = pc.textContent; tr.appendChild(pc);
      tr.addEventListener("click", function () { select(gi, name, false); });
      if (selected && selected.g === gi && selected.v === name) tr.className = "selected";
      tbody.appendChild(tr);
      shown++;
    });
  });
  document.getElementById("count").textContent = shown + " of " + total + " values";
}

// -- the neighbourhood picture -----------------------------------------------------------------
// Ops within HOPS of the value, upstream through producers and downstream through consumers,
// with their inputs and outputs; laid out in layers (longest path), ordered by barycenters.
function neighbourhood(g, name) {
  var G = DATA.graphs[g], ops = [], seen = new Set(), more = {};
  function addOp(i) {
    if (seen.has(i) || ops.length >= MAX_OPS) return false;
    seen.add(i); ops.push(i); return true;
  }
  var up = [name];
  for (var h = 0; h < HOPS; h++) {
    var next = [];
    up.forEach(function (v) {
      var info = G.values[v];
      if (info && info[3] >= 0 && addOp(info[3])) next = next.concat(G.nodes[info[3]][3].filter(Boolean));
    });
    up = next;
  }
  var down = [name];
  for (var h2 = 0; h2 < HOPS; h2++) {
    var next2 = [];
    down.forEach(function (v) {
      var info = G.values[v];
      if (!info) return;
      var cs = info[4];
      cs.slice(0, MAX_FANOUT).forEach(function (c) {
        if (addOp(c)) next2 = next2.concat(G.nodes[c][4].filter(Boolean));
      });
      if (cs.length > MAX_FANOUT) more[v] = cs.length - MAX_FANOUT;
    });
    down = next2;
  }
  var items = {}, edges = [];
  function isWeight(v) { var info = G.values[v]; return v !== name && info && info[2] === "initializer"; }
  function item(key, kind, data) {
    if (!items[key]) items[key] = { key: key, kind: kind, data: data, ins: [], outs: [] };
    return items[key];
  }
  function link(a, b) { edges.push([a.key, b.key]); a.outs.push(b.key); b.ins.push(a.key); }
  item("v:" + name, "val", name);
  ops.forEach(function (i) {
    var o = item("o:" + i, "op", i), n = G.nodes[i];
    var ins = n[3].filter(function (v) { return v && !isWeight(v); }), outs = n[4].filter(Boolean);
    ins.slice(0, MAX_PORTS).forEach(function (v) { link(item("v:" + v, "val", v), o); });
    if (ins.length > MAX_PORTS) link(item("m:in" + i, "more", "+" + (ins.length - MAX_PORTS) + " inputs"), o);
    outs.slice(0, MAX_PORTS).forEach(function (v) { link(o, item("v:" + v, "val", v)); });
    if (outs.length > MAX_PORTS) link(o, item("m:out" + i, "more", "+" + (outs.length - MAX_PORTS) + " outputs"));
  });
  Object.keys(more).forEach(function (v) {
    if (items["v:" + v]) link(items["v:" + v], item("m:c" + v, "more", "+" + more[v] + " more consumers"));
  });
  return { items: items, edges: edges };
}

function measure(it, g) {
  if (it.kind === "op") {
    // The op with its weights (initializer inputs) listed inside, as viewers draw them.
    var G = DATA.graphs[g], n = G.nodes[it.data];
    var weights = n[3].filter(function (v) { var i = G.values[v]; return v && i && i[2] === "initializer"; });
    it.weights = weights.slice(0, 3).map(function (v) { return tail(v, 16) + ": " + tail(G.values[v][0], 22); });
    if (weights.length > 3) it.weights.push("+" + (weights.length - 3) + " more weights");
    it.label = [n[0]];
    var wmax = it.weights.reduce(function (m, w) { return Math.max(m, w.length); }, 0);
    it.w = Math.max(60, n[0].length * 7.6 + 22, wmax * 6.7 + 16); it.h = 26 + 14 * it.weights.length;
  } else if (it.kind === "val") {
    var v = value(g, it.data);
    var t = v ? v[0] : "(not recorded)";
    var name = tail(it.data, 34), type = t.length > 34 ? t.slice(0, 33) + "\u2026" : t;
    it.label = [name, type]; it.full = it.data + ": " + t; it.status = v ? v[1] : "untyped";
    it.w = Math.max(name.length, type.length) * 6.7 + 16; it.h = 34;
  } else { it.label = [it.data]; it.w = it.data.length * 6.3 + 12; it.h = 18; }
}

function layout(nb, g) {
  var items = nb.items, keys = Object.keys(items), layer = {}, indeg = {};
  keys.forEach(function (k) { measure(items[k], g); indeg[k] = items[k].ins.length; layer[k] = 0; });
  var queue = keys.filter(function (k) { return indeg[k] === 0; }), done = 0;
  while (queue.length) {
    var k = queue.shift(); done++;
    items[k].outs.forEach(function (o) {
      layer[o] = Math.max(layer[o], layer[k] + 1);
      if (--indeg[o] === 0) queue.push(o);
    });
  }
  // A cycle (a malformed model) leaves some items unvisited: they keep layer 0.
  // A source (a value made outside the picture) goes just above its first consumer.
  keys.forEach(function (k) {
    var it = items[k];
    if (it.ins.length || !it.outs.length) return;
    var first = Math.min.apply(null, it.outs.map(function (o) { return layer[o]; }));
    layer[k] = Math.max(0, first - 1);
  });
  var rows = [];
  keys.forEach(function (k) { (rows[layer[k]] = rows[layer[k]] || []).push(k); });
  rows = rows.filter(Boolean);
  var pos = {};
  function index() { rows.forEach(function (r) { r.forEach(function (k, i) { pos[k] = i; }); }); }
  index();
  function bary(k, dir) {
    var ns = dir > 0 ? items[k].ins : items[k].outs;
    if (!ns.length) return pos[k];
    return ns.reduce(function (s, n) { return s + pos[n]; }, 0) / ns.length;
  }
  for (var sweep = 0; sweep < 4; sweep++) {
    var down = sweep % 2 === 0;
    var order = down ? rows : rows.slice().reverse();
    order.forEach(function (r) {
      var b = {}; r.forEach(function (k) { b[k] = bary(k, down ? 1 : -1); });
      r.sort(function (a, c) { return b[a] - b[c]; });
      r.forEach(function (k, i) { pos[k] = i; });
    });
  }
  var GAP = 18, VGAP = 34, y = 12, width = 0;
  rows.forEach(function (r) {
    var w = r.reduce(function (s, k) { return s + items[k].w; }, 0) + GAP * (r.length - 1);
    width = Math.max(width, w);
  });
  width += 24;
  rows.forEach(function (r) {
    var w = r.reduce(function (s, k) { return s + items[k].w; }, 0) + GAP * (r.length - 1);
    var x = (width - w) / 2, h = 0;
    r.forEach(function (k) { var it = items[k]; it.x = x; it.y = y; x += it.w + GAP; h = Math.max(h, it.h); });
    r.forEach(function (k) { items[k].y += (h - items[k].h) / 2; });
    y += h + VGAP;
  });
  return { width: width, height: y - VGAP + 12 };
}

function drawGraph(g, name) {
  var box = clear(document.getElementById("graph"));
  var nb = neighbourhood(g, name), size = layout(nb, g);
  var svg = sv("svg", { width: size.width, height: size.height, viewBox: "0 0 " + size.width + " " + size.height,
                        role: "img", "aria-label": "the graph around " + name });
  var defs = sv("defs", {}), marker = sv("marker", { id: "arrow", viewBox: "0 0 8 8", refX: 8, refY: 4,
    markerWidth: 7, markerHeight: 7, orient: "auto" });
  marker.appendChild(sv("path", { d: "M0,0 L8,4 L0,8 z", fill: "#8b95a7" }));
  defs.appendChild(marker); svg.appendChild(defs);
  nb.edges.forEach(function (e) {
    var a = nb.items[e[0]], b = nb.items[e[1]];
    var x1 = a.x + a.w / 2, y1 = a.y + a.h, x2 = b.x + b.w / 2, y2 = b.y, m = (y1 + y2) / 2;
    var d = "M" + x1 + "," + y1 + " C" + x1 + "," + m + " " + x2 + "," + m + " " + x2 + "," + (y2 - 1);
    svg.appendChild(sv("path", { "class": "edge", d: d, "marker-end": "url(#arrow)" }));
  });
  Object.keys(nb.items).forEach(function (k) {
    var it = nb.items[k], grp;
    if (it.kind === "op") {
      grp = sv("g", { "class": "op" });
      grp.appendChild(sv("rect", { x: it.x, y: it.y, width: it.w, height: it.h, rx: 5 }));
      var t = sv("text", { x: it.x + it.w / 2, y: it.y + 17, "text-anchor": "middle" });
      t.textContent = it.label[0]; grp.appendChild(t);
      it.weights.forEach(function (w, i) {
        var wt = sv("text", { x: it.x + 8, y: it.y + 34 + 14 * i, "class": "w" });
        wt.textContent = w; grp.appendChild(wt);
      });
      var title = sv("title", {}); title.textContent = opLabel(g, it.data); grp.appendChild(title);
      grp.addEventListener("click", function () {
        var outs = DATA.graphs[g].nodes[it.data][4].filter(Boolean);
        if (outs.length) select(g, outs[0], true);
      });
    } else if (it.kind === "val") {
      grp = sv("g", { "class": "val " + it.status + (it.data === name ? " sel" : "") });
      grp.appendChild(sv("rect", { x: it.x, y: it.y, width: it.w, height: it.h, rx: 9 }));
      var t1 = sv("text", { x: it.x + 8, y: it.y + 14 }); t1.textContent = it.label[0]; grp.appendChild(t1);
      var t2 = sv("text", { x: it.x + 8, y: it.y + 28, "class": "t" });
      it.label[1].split(/([A-Za-z_][A-Za-z0-9_]*|\[\*\]|\?)/).forEach(function (p) {
        if (!p) return;
        var cls = FRESH.has(p) ? "fresh" : p === "?" || p === "[*]" ? "unknown" : null;
        var span = sv("tspan", cls ? { "class": cls } : {});
        span.textContent = p; t2.appendChild(span);
      });
      grp.appendChild(t2);
      var title2 = sv("title", {}); title2.textContent = it.full; grp.appendChild(title2);
      if (value(g, it.data)) grp.addEventListener("click", function () { select(g, it.data, true); });
    } else {
      grp = sv("g", { "class": "more" });
      var t3 = sv("text", { x: it.x + 4, y: it.y + 13 }); t3.textContent = it.label[0]; grp.appendChild(t3);
    }
    svg.appendChild(grp);
  });
  box.appendChild(svg);
  var me = nb.items["v:" + name];
  if (me) {
    box.scrollLeft = Math.max(0, me.x + me.w / 2 - box.clientWidth / 2);
    box.scrollTop = Math.max(0, me.y + me.h / 2 - box.clientHeight / 2);
  }
}

// -- the selected value ------------------------------------------------------------------------
function select(g, name, scroll) {
  var G = DATA.graphs[g], v = G.values[name];
  if (!v) return;
  selected = { g: g, v: name };
  var box = clear(document.getElementById("detail"));
  box.appendChild(el("h2", null, name));
  var dl = el("dl");
  function row(k, node) {
    dl.appendChild(el("dt", null, k));
    var dd = el("dd"); dd.appendChild(node); dl.appendChild(dd);
  }
  row("type", typeSpan(v[0]));
  row("status", statusSpan(v[1]));
  if (v[6]) row("contents", el("span", "mono", v[6]));
  row("graph", el("span", "mono", G.path));
  var def = v[3] >= 0 ? opLabel(g, v[3]) : v[2] === "outer" ? "an enclosing graph" : "graph " + v[2];
  row("defined by", document.createTextNode(def));
  var cons = el("span");
  if (!v[4].length) cons.textContent = G.outputs.indexOf(name) >= 0 ? "(a graph output)" : "(none)";
  v[4].slice(0, 12).forEach(function (c, i) {
    if (i) cons.appendChild(document.createTextNode(", "));
    var a = el("a", "link", G.nodes[c][0] + (G.nodes[c][1] ? " `" + G.nodes[c][1] + "`" : ""));
    a.addEventListener("click", function () {
      var o = G.nodes[c][4].filter(Boolean);
      if (o.length) select(g, o[0], true);
    });
    cons.appendChild(a);
  });
  if (v[4].length > 12) cons.appendChild(document.createTextNode(" and " + (v[4].length - 12) + " more"));
  row("consumed by", cons);
  box.appendChild(dl);
  drawGraph(g, name);
  var ex = clear(document.getElementById("explanation"));
  ex.appendChild(el("h2", null, "Why"));
  if (v[5] === null || v[5] === undefined) {
    ex.appendChild(el("p", "muted", v[1] === "known" || v[1] === "symbolic"
      ? "Every dim is known: an integer or an expression over declared variables."
      : "No explanation recorded."));
  } else {
    var ol = el("ol");
    DATA.explanations[v[5]].forEach(function (s) {
      var li = el("li", s[2] ? "root" : null, s[1]);
      li.style.paddingLeft = (s[0] * 18) + "px";
      ol.appendChild(li);
    });
    ex.appendChild(ol);
  }
  var mine = DATA.diagnostics.filter(function (d) {
    var l = d.location || {};
    return (l.graph || "main") === G.path && (l.value === name || (v[3] >= 0 && l.node_index === v[3]));
  });
  if (mine.length) {
    ex.appendChild(el("h2", null, "Diagnostics here"));
    mine.forEach(function (d) {
      ex.appendChild(el("p", "sev-" + d.severity, d.severity + " [" + d.code + "] " + d.message));
    });
  }
  document.querySelectorAll("#values tbody tr.selected").forEach(function (r) { r.className = ""; });
  var tr = null;
  document.querySelectorAll("#values tbody tr").forEach(function (r) {
    if (r.dataset.g === String(g) && r.dataset.v === name) { r.className = "selected"; tr = r; }
  });
  if (tr && scroll) tr.scrollIntoView({ block: "nearest" });
  var hash = "#g=" + g + "&v=" + encodeURIComponent(name);
  if (location.hash !== hash) history.replaceState(null, "", hash);
}

// -- diagnostics and the dimension table -------------------------------------------------------
function graphIndex(path) {
  for (var i = 0; i < DATA.graphs.length; i++) if (DATA.graphs[i].path === path) return i;
  return -1;
}
function renderDiagnostics() {
  var box = document.getElementById("diagnostics");
  if (!DATA.diagnostics.length) { box.appendChild(el("p", "muted", "No problems found.")); return; }
  var table = el("table"), head = el("tr");
  ["severity", "code", "clause", "where", "message"].forEach(function (h) { head.appendChild(el("th", null, h)); });
  table.appendChild(head);
  DATA.diagnostics.forEach(function (d) {
    var l = d.location || {}, tr = el("tr");
    tr.appendChild(el("td", "sev-" + d.severity, d.severity));
    tr.appendChild(el("td", "mono", d.code));
    tr.appendChild(el("td", null, d.clause));
    var where = [l.graph || "main"];
    if (l.node_index !== undefined) {
      var label = "node " + l.node_index + (l.op_type ? " " + l.op_type : "");
      where.push(label + (l.node_name ? " `" + l.node_name + "`" : ""));
    }
    if (l.value) where.push("value `" + l.value + "`");
    if (l.attribute) where.push("attribute `" + l.attribute + "`");
    tr.appendChild(el("td", "mono", where.join(", ")));
    tr.appendChild(el("td", null, d.message + (d.suggestion ? " (" + d.suggestion + ")" : "")));
    var g = graphIndex(l.graph || "main"), target = null;
    if (g >= 0 && l.value && DATA.graphs[g].values[l.value]) target = l.value;
    else if (g >= 0 && l.node_index !== undefined && DATA.graphs[g].nodes[l.node_index]) {
      var outs = DATA.graphs[g].nodes[l.node_index][4];
      target = outs.filter(function (o) { return o && DATA.graphs[g].values[o]; })[0] || null;
    }
    if (target) {
      tr.className = "clickable";
      tr.addEventListener("click", function () {
        select(g, target, true);
        document.getElementById("detail-pane").scrollIntoView();
      });
    }
    table.appendChild(tr);
  });
  box.appendChild(table);
}
function renderDims() {
  var box = document.getElementById("dims");
  var table = el("table"), head = el("tr");
  ["name", "kind", "meaning", "where"].forEach(function (h) { head.appendChild(el("th", null, h)); });
  table.appendChild(head);
  DATA.dims.forEach(function (d) {
    var tr = el("tr");
    tr.appendChild(el("td", d.kind === "fresh" ? "mono fresh" : "mono", d.name));
    tr.appendChild(el("td", null, d.kind));
    tr.appendChild(el("td", null, d.definition ? "= " + d.definition : d.origin));
    tr.appendChild(el("td", "mono", d.node || ""));
    table.appendChild(tr);
  });
  if (DATA.dims.length) box.appendChild(table); else box.appendChild(el("p", "muted", "No dimension variables."));
  var domain = document.getElementById("domain");
  if (DATA.domain.length) {
    var dl = el("ul");
    DATA.domain.forEach(function (c) { dl.appendChild(el("li", "mono", c)); });
    domain.appendChild(dl);
  } else domain.appendChild(el("p", "muted", "No requirement found: every size of the inputs is accepted."));
  var facts = document.getElementById("facts");
  if (DATA.facts.length) {
    facts.appendChild(el("h2", null, "Facts and assumptions inference relied on"));
    var ul = el("ul");
    DATA.facts.forEach(function (f) { ul.appendChild(el("li", "mono", f)); });
    facts.appendChild(ul);
  }
}

function renderCost() {
  var C = DATA.cost, head = document.getElementById("cost-head"), box = document.getElementById("cost");
  if (C.plotted) {
    head.appendChild(el("p", null, "Live memory at each node at " + C.bindingText + ": the peak is " + C.peak.text +
      " at node " + C.peak.node + " (" + C.peak.op + (C.peak.name ? " `" + C.peak.name + "`" : "") + ")" +
      (C.nodesPerPoint > 1 ? "; each point the largest of " + C.nodesPerPoint + " nodes." : ".")));
  } else {
    head.appendChild(el("p", "muted", "No plot of live memory: " + C.why + "."));
  }
  C.notes.forEach(function (n) { head.appendChild(el("p", "muted", n)); });
  C.tables.forEach(function (t) {
    box.appendChild(el("h3", null, t.title));
    var table = el("table");
    t.rows.forEach(function (r, i) {
      var tr = el("tr");
      r.forEach(function (c) { tr.appendChild(el(i ? "td" : "th", i ? "mono" : null, c)); });
      table.appendChild(tr);
    });
    box.appendChild(table);
  });
  C.notExpressed.forEach(function (n) { box.appendChild(el("p", "muted", "Not expressed: " + n)); });
}

function fromHash() {
  var m = /^#g=(\d+)&v=(.*)$/.exec(location.hash);
  if (!m) return null;
  try { return { g: Number(m[1]), v: decodeURIComponent(m[2]) }; } catch (e) { return null; }
}

function start() {
  header();
  var st = document.getElementById("status");
  DATA.levels.forEach(function (lv) { var o = el("option", null, lv); o.value = lv; st.appendChild(o); });
  document.getElementById("filter").addEventListener("input", renderTable);
  st.addEventListener("change", renderTable);
  document.getElementById("show-init").addEventListener("change", renderTable);
  renderTable();
  renderDiagnostics();
  renderDims();
  renderCost();
  var first = fromHash() || DATA.initial;
  if (first && DATA.graphs[first.g] && DATA.graphs[first.g].values[first.v]) select(first.g, first.v, true);
  document.body.dataset.ready = "1";
}
start();
})();
"""


_PAGE_PARTS = re.split(r"__(TITLE|CSS|JS|DATA|PLOT)__", _PAGE)
assert sorted(_PAGE_PARTS[1::2]) == ["CSS", "DATA", "JS", "PLOT", "TITLE"], "each placeholder appears once in _PAGE"
