"""The HTML report: self-contained, safe with hostile names, and working in a real browser.

The browser tests drive headless Chromium (Debian's ``chromium`` package) through the DevTools
protocol over ``--remote-debugging-pipe`` with the small client below: no network, no port, no
browser download. They skip when no Chromium is installed. Set ``ONNX_INFER_SCREENSHOTS=DIR``
to keep the screenshots they take.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import re
import select
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import onnx
import pytest
from onnx import TensorProto, helper

import infer
from infer.out.escape import escaped
from infer.out.report import render
from tests.support import cli as C

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "bert_tiny.onnx"

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--remote-debugging-pipe",
]


def chromium_path() -> str | None:
    explicit = os.environ.get("ONNX_INFER_CHROMIUM")
    if explicit:
        return explicit
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


class Chromium:
    """A headless Chromium driven over the DevTools pipe (fd 3 in, fd 4 out, NUL-separated JSON)."""

    def __init__(self, exe: str, profile: Path):
        cmd_r, cmd_w = os.pipe()  # we write commands; the browser reads them on its fd 3
        out_r, out_w = os.pipe()  # the browser writes on its fd 4; we read
        # Out of the way of 3 and 4, so the child's dup2 cannot clobber one with the other.
        hi_r, hi_w = fcntl.fcntl(cmd_r, fcntl.F_DUPFD, 10), fcntl.fcntl(out_w, fcntl.F_DUPFD, 10)
        os.close(cmd_r)
        os.close(out_w)

        def child_fds() -> None:
            os.dup2(hi_r, 3)
            os.dup2(hi_w, 4)

        self.log = open(profile.with_suffix(".log"), "wb")  # closed in close()
        self.proc = subprocess.Popen(
            [exe, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=self.log,
            pass_fds=(3, 4),
            preexec_fn=child_fds,
        )
        os.close(hi_r)
        os.close(hi_w)
        self.wfd, self.rfd = cmd_w, out_r
        self.buf = b""
        self.next_id = 0
        self.events: list[dict[str, Any]] = []
        self.session: str | None = None

    def _recv(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no answer from Chromium")
            ready, _, _ = select.select([self.rfd], [], [], left)
            if ready:
                chunk = os.read(self.rfd, 1 << 16)
                if not chunk:
                    raise EOFError("Chromium closed the DevTools pipe")
                self.buf += chunk
        msg, _, self.buf = self.buf.partition(b"\0")
        return json.loads(msg)

    def call(self, method: str, params: dict[str, Any] | None = None, timeout: float = 60) -> dict[str, Any]:
        self.next_id += 1
        msg: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if self.session and not method.startswith(("Target.", "Browser.")):
            msg["sessionId"] = self.session
        data = json.dumps(msg).encode() + b"\0"
        while data:
            data = data[os.write(self.wfd, data) :]
        deadline = time.monotonic() + timeout
        while True:
            m = self._recv(deadline)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)

    def wait_for(self, method: str, timeout: float = 60) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            for i, e in enumerate(self.events):
                if e.get("method") == method:
                    return self.events.pop(i)
            self.events.append(self._recv(deadline))

    def open(self, url: str, width: int = 1400, height: int = 1000) -> None:
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable")
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )
        self.call("Page.navigate", {"url": url})
        self.wait_for("Page.loadEventFired")

    def eval(self, expression: str) -> Any:
        r = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expression}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def screenshot(self, dest: Path) -> Path:
        data = self.call("Page.captureScreenshot", {"format": "png"})["data"]
        dest.write_bytes(base64.b64decode(data))
        return dest

    def problems(self) -> list[str]:
        """Console errors and warnings, uncaught exceptions and browser log errors so far."""
        out = []
        for e in self.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "warning", "assert"):
                out.append(f"console.{p['type']}: {[a.get('value', a.get('description')) for a in p['args']]}")
            elif m == "Runtime.exceptionThrown":
                d = p["exceptionDetails"]
                out.append(f"exception: {d.get('exception', {}).get('description', d.get('text'))}")
            elif m == "Log.entryAdded" and p["entry"]["level"] in ("error", "warning"):
                out.append(f"log {p['entry']['level']}: {p['entry']['text']} {p['entry'].get('url', '')}")
        return out

    def close(self) -> None:
        try:
            self.call("Browser.close", timeout=10)
        except (OSError, EOFError, TimeoutError, RuntimeError):
            pass
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self.wfd, self.rfd):
            try:
                os.close(fd)
            except OSError:
                pass
        self.log.close()


@pytest.fixture
def browser(tmp_path):
    exe = chromium_path()
    if exe is None:
        pytest.skip("no Chromium installed (apt-get install chromium)")
    b = Chromium(exe, tmp_path / "profile")
    try:
        yield b
    finally:
        b.close()


def _keep(shot: Path) -> None:
    where = os.environ.get("ONNX_INFER_SCREENSHOTS")
    if where:
        Path(where).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(where) / shot.name)


def _unknown_model(path: Path, weird: str = "y") -> Path:
    """x[N,6] reshaped by a shape ``p`` known only at run time: the output's dims are fresh."""
    g = helper.make_graph(
        [
            helper.make_node("Reshape", ["x", "p"], [weird], name="reshape"),
            helper.make_node("Relu", [weird], ["z"], name="relu"),
        ],
        "g",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 6]),
            helper.make_tensor_value_info("p", TensorProto.INT64, [2]),
        ],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)],
    )
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]), path)
    return path


# -- without a browser -------------------------------------------------------------------------


def test_page_is_self_contained():
    page = render(infer.infer_model(EXAMPLE), "bert_tiny.onnx")
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    # Nothing to fetch: no external scripts, styles, images or fonts.
    assert not re.search(r"<(link|img|iframe|object|embed)\b", page)
    assert not re.search(r"<script[^>]*\bsrc=", page)
    assert not re.search(r"url\((?!#)", page) and "@import" not in page  # url(#arrow) is in-page
    data = json.loads(re.search(r'<script id="data" type="application/json">(.*?)</script>', page, re.S).group(1))
    main = data["graphs"][0]
    assert main["values"]["last_hidden_state"][0] == "float[batch,sequence,32]"
    assert data["summary"]["values"] == 305


def test_hostile_names_stay_data(tmp_path):
    weird = '</script><script>alert("x")</script><b>&amp;'
    page = render(infer.infer_model(_unknown_model(tmp_path / "m.onnx", weird)), "<i>title</i>")
    assert "<script>alert" not in page and "<b>&amp;" not in page and "<i>title</i>" not in page
    body = re.search(r'<script id="data" type="application/json">(.*?)</script>', page, re.S).group(1)
    assert weird in json.loads(body)["graphs"][0]["values"]


def test_report_verb(tmp_path):
    out = tmp_path / "r.html"
    r = C.run("report", str(EXAMPLE), "-o", str(out), "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["output"] == str(out) and data["summary"]["values"] == 305 and data["diagnostics"]["error"] == 0
    assert out.stat().st_size > 10_000 and out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    src = tmp_path / "m.onnx"
    src.write_bytes(EXAMPLE.read_bytes())
    r = C.run("report", str(src), "-q")
    assert r.returncode == 0 and r.stdout == "" and (tmp_path / "m.report.html").exists()
    r = C.run("report", str(src))
    assert r.returncode == 2 and "--force" in r.stderr


# -- the cost section --------------------------------------------------------------------------

SVG = {"s": "http://www.w3.org/2000/svg"}


def _data(page: str) -> dict[str, Any]:
    return json.loads(re.search(r'<script id="data" type="application/json">(.*?)</script>', page, re.S).group(1))


def _plot(page: str) -> tuple[list[tuple[int, int]], int, tuple[int, int]]:
    """The plot parsed as XML: its points (node, bytes), the peak line's node, and the user units
    of the data (nodes across, bytes up)."""
    start = page.index('<svg id="live-plot"')
    root = ElementTree.fromstring(page[start : page.index("</div>", start)])
    points = root.find(".//s:polyline", SVG).get("points")
    peak = int(root.find(".//s:line[@class='peak']", SVG).get("x1"))
    _, _, across, up = root.find("s:svg", SVG).get("viewBox").split()
    return [tuple(map(int, p.split(","))) for p in points.split()], peak, (int(across), int(up))


def test_cost_section_plots_the_live_memory_at_the_binding():
    result = infer.infer_model(EXAMPLE)
    binding = {"batch": 3, "sequence": 7}
    page = render(result, "bert_tiny.onnx", binding)
    ev = result.cost.at(binding)
    points, peak, (across, up) = _plot(page)
    assert points == list(enumerate(ev.live)) and len(points) == result.cost.node_count == 305
    assert peak == ev.peak_node and up == ev.peak == max(ev.live) and across == 304
    cost = _data(page)["cost"]
    assert cost["plotted"] and cost["binding"] == binding and cost["notes"] == [] and cost["why"] is None
    assert (cost["peak"]["bytes"], cost["peak"]["node"]) == (ev.peak, ev.peak_node)
    assert cost["peak"]["op"] == result.cost.nodes[ev.peak_node].op_type
    totals = {r[0]: r[1:] for r in cost["tables"][0]["rows"]}
    assert totals["weights"] == ["89.25 KiB", "91392"] and totals["inputs"][1] == "24*batch*sequence"
    titles = [t["title"] for t in cost["tables"]]
    assert titles == ["totals", "peak node", "top 10 nodes by output memory", "top 10 nodes by work"]


def test_cost_section_takes_the_rest_from_the_domain():
    result = infer.infer_model(EXAMPLE)
    page = render(result, "bert_tiny.onnx", {"batch": 2})  # the position table bounds sequence by 64
    cost = _data(page)["cost"]
    assert cost["binding"] == {"batch": 2, "sequence": 64} and "sequence=64" in cost["notes"][0]
    points, _, _ = _plot(page)
    assert [v for _, v in points] == result.cost.at({"batch": 2, "sequence": 64}).live
    cost = _data(render(result, "bert_tiny.onnx", {"batch": 2, "sequence": 65}))["cost"]
    assert cost["plotted"] and "outside the input domain" in cost["notes"][0]


def test_cost_section_without_a_binding_says_why_and_keeps_the_terms():
    result = infer.infer_model(EXAMPLE)
    page = render(result, "bert_tiny.onnx")
    assert 'id="live-plot"' not in page
    cost = _data(page)["cost"]
    assert not cost["plotted"] and cost["binding"] is None and "peak" not in cost
    assert "batch is not bound" in cost["why"] and "--cost-bind batch=N" in cost["why"]
    totals = {r[0]: r[2] for r in cost["tables"][0]["rows"][1:]}
    assert totals["activations"].startswith("78*batch*sequence**2") and totals["peak live"].startswith("max(")
    # A size inference could not determine: bound or not, nothing to plot, and why.
    unknown = infer.infer_model(_unknown_model_bytes())
    cost = _data(render(unknown, "m", {"N": 4}))["cost"]
    assert not cost["plotted"] and "an extent inference could not determine" in cost["why"]


def _unknown_model_bytes() -> bytes:
    g = helper.make_graph(
        [helper.make_node("Reshape", ["x", "p"], ["y"])],
        "g",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 6]),
            helper.make_tensor_value_info("p", TensorProto.INT64, [2]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]).SerializeToString()


def test_cost_section_keeps_hostile_names_as_data(tmp_path):
    weird = '</svg></div><script>alert("x")</script>\x1b[2J\u202e'
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], [weird], name=weird), helper.make_node("Neg", [weird], ["z"], name="n")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, ["N", 4])],
    )
    result = infer.infer_model(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]))
    page = render(result, "m", {"N": 5})
    assert "<script>alert" not in page and "\x1b[2J" not in page and "\u202e" not in page
    points, peak, _ = _plot(page)  # the plot holds numbers only
    assert points == [(0, 160), (1, 160)] and peak == 0
    cost = _data(page)["cost"]
    cells = [c for t in cost["tables"] for r in t["rows"] for c in r]
    assert cost["peak"]["name"] == escaped(weird) and escaped(weird) in cells


def test_report_verb_cost_bind(tmp_path):
    out = tmp_path / "r.html"
    r = C.run("report", str(EXAMPLE), "-o", str(out), "--cost-bind", "batch=2", "--cost-bind", "sequence=3", "-q")
    assert r.returncode == 0, r.stderr
    points, _, _ = _plot(out.read_text(encoding="utf-8"))
    assert [v for _, v in points] == infer.infer_model(EXAMPLE).cost.at({"batch": 2, "sequence": 3}).live
    r = C.run("report", str(EXAMPLE), "-o", str(tmp_path / "s.html"), "--bind", "batch=2", "--bind", "sequence=3", "-q")
    assert r.returncode == 0 and _data((tmp_path / "s.html").read_text(encoding="utf-8"))["cost"]["plotted"]
    for argv, message in (
        (["--cost-bind", "batch=x"], "not an integer"),
        (["--cost-bind", "b=2"], "no input variable"),
    ):
        r = C.run("report", str(EXAMPLE), "-o", str(tmp_path / "t.html"), *argv)
        assert r.returncode == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1


# -- in headless Chromium ----------------------------------------------------------------------


def test_example_report_in_chromium(browser, tmp_path):
    out = tmp_path / "bert_tiny.report.html"
    r = C.run("report", str(EXAMPLE), "-o", str(out), "--cost-bind", "batch=8")
    assert r.returncode == 0, r.stderr
    browser.open(out.as_uri())
    assert browser.eval("document.body.dataset.ready") == "1"
    assert browser.problems() == []
    title = browser.eval("document.getElementById('title').textContent")
    assert "305 values" in title
    rows = browser.eval("document.querySelectorAll('#values tbody tr').length")
    assert rows >= 305  # every computed value and the graph inputs
    # The initial selection is a graph output; its picture holds its producer and its shape.
    assert browser.eval("document.querySelector('#detail h2').textContent") == "last_hidden_state"
    svg_text = browser.eval("document.querySelector('#graph svg').textContent")
    assert "float[batch,sequence,32]" in svg_text
    assert browser.eval("document.querySelectorAll('#graph svg g.op').length") >= 2
    assert browser.eval("document.querySelectorAll('#graph svg g.val').length") >= 3
    shot = browser.screenshot(tmp_path / "bert_tiny_report.png")
    assert shot.stat().st_size > 20_000
    _keep(shot)
    # Clicking a row selects that value; clicking an operator in the picture selects its output.
    browser.eval("""(() => { const r = [...document.querySelectorAll('#values tbody tr')]
        .find(r => r.dataset.v && r.dataset.v !== 'last_hidden_state' && r.dataset.v.includes('MatMul'));
        r.click(); return r.dataset.v; })()""")
    chosen = browser.eval("document.querySelector('#detail h2').textContent")
    assert "MatMul" in chosen
    browser.eval("document.querySelector('#graph svg g.op').dispatchEvent(new MouseEvent('click', {bubbles: true}))")
    assert browser.eval("location.hash").startswith("#g=0&v=")
    # The filter narrows the table.
    browser.eval(
        "const f = document.getElementById('filter'); f.value = 'input_ids'; f.dispatchEvent(new Event('input'))"
    )
    assert 1 <= browser.eval("document.querySelectorAll('#values tbody tr').length") < 20
    # The cost section: the plot drawn (its line has a length on screen) and the tables written.
    head = browser.eval("document.getElementById('cost-head').textContent")
    assert "at batch=8, sequence=64: the peak is 821,536 B" in head and "greatest value" in head
    assert browser.eval("document.querySelector('#live-plot polyline').getBoundingClientRect().width") > 500
    assert browser.eval("document.querySelectorAll('#cost table').length") == 4
    assert browser.problems() == []


def test_unknown_shape_report_explains_in_chromium(browser, tmp_path):
    model = _unknown_model(tmp_path / "unknown.onnx")
    out = tmp_path / "unknown.report.html"
    infer_result = infer.infer_model(model)
    out.write_text(render(infer_result, "unknown.onnx"), encoding="utf-8")
    browser.open(out.as_uri())
    assert browser.problems() == []
    # The page opens on the first value not fully known, with its fresh dims highlighted.
    assert browser.eval("document.querySelector('#detail h2').textContent") == "y"
    assert browser.eval("document.querySelectorAll('#detail .fresh').length") == 2
    assert browser.eval("document.querySelectorAll('#values .fresh').length") >= 4
    why = browser.eval("document.getElementById('explanation').textContent")
    assert "`p` is an input of the model" in why and "root cause" not in why  # the marker is CSS
    assert browser.eval("document.querySelectorAll('#explanation li.root').length") >= 1
    # Explanation on click: select z (Relu of y) from the table.
    browser.eval("[...document.querySelectorAll('#values tbody tr')].find(r => r.dataset.v === 'z').click()")
    assert "`p` is an input of the model" in browser.eval("document.getElementById('explanation').textContent")
    diag = browser.eval("document.getElementById('diagnostics').textContent")
    assert "missing-io-shape" in diag
    assert "No plot of live memory: " in browser.eval("document.getElementById('cost-head').textContent")
    assert browser.eval("document.querySelector('#live-plot')") is None
    shot = browser.screenshot(tmp_path / "unknown_report.png")
    _keep(shot)
    assert browser.problems() == []
