"""``infer.out.verify`` and ``onnx-infer verify``: inference's claims checked against onnxruntime.

Every corpus model must verify clean; a wrong declaration, a tampered claim, a fresh variable
that takes two extents and a claim no extent satisfies must each be named; a claim the run
cannot bind is counted, a run outside an assumption is skipped. ``ONNX_INFER_VERIFY_SAMPLES``
sets the runs per corpus model (2 in CI). The default run verifies a third of the corpus, a
different third each ISO week, and ``-m slow`` the others (tests/support/rotation.py): the
claims on every corpus model are checked against onnxruntime's values by
tests/test_real_models.py in every run.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import infer
from infer.core import dims as D
from infer.core import types as T
from infer.core.values import Known, Value
from infer.out import sizes
from infer.out.verify import INSTALL_HINT, VerifyError, check_run, exposed, require_onnxruntime, run, verify
from infer.walk import reuse
from tests.support import cli as C
from tests.support import runtime as R
from tests.support.rotation import weekly_share

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "bert_tiny.onnx"
ENTRIES = R.manifest()
SAMPLES = int(os.environ.get("ONNX_INFER_VERIFY_SAMPLES", "2"))
F, I64 = TensorProto.FLOAT, TensorProto.INT64


def _model(
    nodes: list[onnx.NodeProto],
    inputs: list[onnx.ValueInfoProto],
    outputs: list[onnx.ValueInfoProto],
    inits: list[onnx.TensorProto] = (),
    domains: dict[str, int] | None = None,
) -> onnx.ModelProto:
    opsets = [helper.make_opsetid(d, v) for d, v in {"": 18, **(domains or {})}.items()]
    return helper.make_model(helper.make_graph(nodes, "g", inputs, outputs, list(inits)), opset_imports=opsets)


def _nonzero_model() -> onnx.ModelProto:
    """A data-dependent extent (NonZero) flowing into a concatenation and a strided pool."""
    nodes = [
        helper.make_node("NonZero", ["x"], ["nz"]),
        helper.make_node("Cast", ["nz"], ["f"], to=F),
        helper.make_node("Unsqueeze", ["f", "axes"], ["u"]),
        helper.make_node("MaxPool", ["u"], ["p"], kernel_shape=[2], strides=[2]),
        helper.make_node("Shape", ["p"], ["s"]),
        helper.make_node("Concat", ["f", "f"], ["cc"], axis=1),
    ]
    outputs = [helper.make_tensor_value_info(n, t, None) for n, t in (("p", F), ("s", I64), ("cc", F))]
    axes = helper.make_tensor("axes", I64, [1], [0])
    return _model(nodes, [helper.make_tensor_value_info("x", I64, ["N"])], outputs, [axes])


def _declared_extent_model() -> onnx.ModelProto:
    """``Neg(x)`` of ``x: int64[N]``, its result declared ``[3]``: the claims adopt the declaration
    as the assumption ``N == 3``, which a run at another length breaks."""
    nodes = [helper.make_node("Neg", ["x"], ["y"]), helper.make_node("Shape", ["y"], ["s"])]
    outputs = [helper.make_tensor_value_info("s", I64, None)]
    m = _model(nodes, [helper.make_tensor_value_info("x", I64, ["N"])], outputs)
    m.graph.value_info.append(helper.make_tensor_value_info("y", I64, [3]))
    return m


def _observe(model: onnx.ModelProto, x: list[int]) -> dict[str, Any]:
    return run(exposed(model), {"x": np.array(x, np.int64)})


def _tamper(result: infer.InferenceResult, name: str, value: Value) -> None:
    """Replace inference's claim about ``name`` (main graph) by ``value``."""
    result.graphs["main"].values[name] = value


# -- the corpus -------------------------------------------------------------------------------


@pytest.mark.parametrize("entry", weekly_share(ENTRIES, [e["file"] for e in ENTRIES], "verify"))
def test_corpus_model_verifies_without_contradiction(entry: dict[str, Any]) -> None:
    report = verify(infer.infer_model(R.MODELS / entry["file"]), samples=SAMPLES)
    assert report.error is None, report.error
    assert not report.contradictions, "\n".join(c.message for c in report.contradictions[:20])
    assert len(report.checked_runs) == SAMPLES, [f.reason for f in report.failed]
    assert report.claims > 0 and report.declared_claims > 0
    # The bindings differ from one run to the next, and within a run where the variables allow.
    bindings = [tuple(sorted(r.bindings.items())) for r in report.runs]
    assert len(set(bindings)) == len(bindings)


# -- contradictions are named -----------------------------------------------------------------


def test_a_wrong_declared_output_shape_is_named() -> None:
    m = onnx.load(str(EXAMPLE))
    m.graph.output[0].type.tensor_type.shape.dim[2].dim_value = 33  # last_hidden_state is [batch, sequence, 32]
    report = verify(infer.infer_model(m), samples=2)
    found = [c for c in report.contradictions if c.kind == "declared-type"]
    assert len(found) == 2 and len(report.contradictions) == 2, report.contradictions
    c = found[0]
    assert (c.value, c.index, c.claimed, c.actual) == ("last_hidden_state", 2, "33", 32)
    assert "`last_hidden_state`" in c.message and "batch=" in c.message

    m = onnx.load(str(EXAMPLE))
    m.graph.output[0].type.tensor_type.shape.dim[1].dim_param = "batch"  # [batch, batch, 32]
    report = verify(infer.infer_model(m), samples=2)
    wrong = {(c.value, c.index, c.claimed) for c in report.contradictions}
    assert wrong == {("last_hidden_state", 1, "batch")}, report.contradictions


def test_tampered_claims_of_every_kind_are_caught() -> None:
    result = infer.infer_model(str(EXAMPLE))
    batch, sequence = D.symbol("batch"), D.symbol("sequence")
    shapes = [
        n for g, n, v in result.values() if g == "main" and v.known is not None and v.known.dims() == [batch, sequence]
    ]
    assert shapes, "the model computes Shape(input_ids) somewhere"
    pooled = result.value("pooler_output")
    _tamper(result, "last_hidden_state", Value(T.TensorType(F, (batch, D.add(sequence, 1), 32))))
    _tamper(result, "pooler_output", Value(T.TensorType(TensorProto.DOUBLE, pooled.type.shape)))
    _tamper(result, shapes[0], Value(result.value(shapes[0]).type, Known((2,), (sequence, batch))))
    report = result.verify(samples=2, bind={"batch": 2})
    kinds = {(c.value, c.kind, c.index) for c in report.contradictions}
    assert ("last_hidden_state", "dim", 1) in kinds
    assert ("pooler_output", "element-type", None) in kinds
    assert (shapes[0], "contents", 0) in kinds and (shapes[0], "contents", 1) in kinds
    c = next(c for c in report.contradictions if c.value == "last_hidden_state")
    assert c.claimed == "sequence + 1" and c.actual == c.bindings["sequence"]
    assert f"sequence + 1 = {c.actual + 1}" in c.message
    assert all(r.bindings["batch"] == 2 for r in report.runs)


def test_a_tampered_rank_is_caught() -> None:
    m = _nonzero_model()
    result = infer.infer_model(m)
    _tamper(result, "u", Value(T.TensorType(F, (1, D.fresh_symbol("unk__0")))))
    rc = check_run(result, {"N": 4}, _observe(m, [1, 2, 3, 4]))
    assert [(c.value, c.kind, c.claimed, c.actual) for c in rc.contradictions] == [("u", "rank", "2", [1, 1, 4])]


class _Element:
    """A float-domain element over dimension variables: anything with ``evaluate(bindings)``."""

    def __init__(self, scale: float, fails: bool = False):
        self.num, self.den, self.scale, self.fails = D.symbol("N"), 1, scale, fails

    def evaluate(self, bindings: dict[str, int]) -> float:
        if self.fails:
            raise ValueError("cannot evaluate")
        return bindings["N"] * self.scale

    def __str__(self) -> str:
        return f"N*{self.scale}"


def test_float_elements_over_variables_are_evaluated() -> None:
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Cast", ["s"], ["f"], to=F),
        helper.make_node("Div", ["f", "two"], ["h"]),
    ]
    two = helper.make_tensor("two", F, [], [2.0])
    m = _model(
        nodes, [helper.make_tensor_value_info("x", F, ["N"])], [helper.make_tensor_value_info("h", F, None)], [two]
    )
    result = infer.infer_model(m)
    observed = run(exposed(m), {"x": np.zeros(5, np.float32)})
    assert not check_run(result, {"N": 5}, observed).contradictions
    h = result.value("h")
    _tamper(result, "h", Value(h.type, Known((1,), (_Element(0.5),))))
    rc = check_run(result, {"N": 5}, observed)
    assert not rc.contradictions and rc.unchecked == 0
    _tamper(result, "h", Value(h.type, Known((1,), (_Element(1 / 3),))))  # 5/3 where the run has 2.5
    [c] = check_run(result, {"N": 5}, observed).contradictions
    assert (c.value, c.kind, c.index, c.claimed, c.actual) == ("h", "contents", 0, f"N*{1 / 3}", 2.5)
    _tamper(result, "h", Value(h.type, Known((1,), (_Element(0.5, fails=True),))))
    rc = check_run(result, {"N": 5}, observed)
    assert rc.unchecked == 1 and not rc.contradictions


# -- fresh variables ----------------------------------------------------------------------------


def test_fresh_variables_are_bound_to_the_run() -> None:
    m = _nonzero_model()
    result = infer.infer_model(m)
    (unk,) = D.free_names(result.shape_of("nz")[1])
    assert result.dims.get(unk).is_fresh
    assert result.shape_of("cc")[1] == D.mul(2, D.fresh_symbol(unk))
    rc = check_run(result, {"N": 5}, _observe(m, [0, 3, 0, 5, 6]))
    assert rc.fresh == {unk: 3} and rc.skipped is None and rc.unchecked == 0 and not rc.contradictions
    # Every dim and known element of every value: nz, f, u, p, s and cc.
    assert rc.claims >= 20

    # Solved from a claim linear in it when no bare occurrence was returned.
    partial = {k: v for k, v in _observe(m, [1, 1, 1, 0, 1]).items() if k in ("cc", "s")}
    rc = check_run(result, {"N": 5}, partial)
    assert rc.fresh == {unk: 4} and rc.unobserved == 4 and not rc.contradictions


def test_a_fresh_variable_with_two_extents_is_a_contradiction() -> None:
    m = _nonzero_model()
    result = infer.infer_model(m)
    (unk,) = D.free_names(result.shape_of("nz")[1])
    _tamper(result, "cc", Value(T.TensorType(F, (1, D.fresh_symbol(unk)))))  # cc is twice as long
    rc = check_run(result, {"N": 5}, _observe(m, [0, 3, 0, 5, 6]))
    c, size = rc.contradictions  # the extent, and the bytes the tampered type claims (4*unk)
    assert (c.value, c.kind, c.index, c.claimed, c.actual) == ("cc", "fresh-variable", 1, unk, 6)
    assert c.bindings == {"N": 5, unk: 3} and "`nz` dim 1" in c.message
    assert (size.value, size.kind, size.claimed, size.actual) == ("cc", "bytes", f"4*{unk}", 24)


def test_a_claim_no_extent_satisfies_is_a_contradiction() -> None:
    m = _nonzero_model()
    result = infer.infer_model(m)
    (unk,) = D.free_names(result.shape_of("nz")[1])
    _tamper(result, "cc", Value(T.TensorType(F, (1, D.mul(4, D.fresh_symbol(unk))))))
    observed = {k: v for k, v in _observe(m, [0, 3, 0, 5, 6]).items() if k == "cc"}  # 6 is not 4 * anything
    rc = check_run(result, {"N": 5}, observed)
    [c] = rc.contradictions
    assert (c.value, c.kind, c.claimed, c.actual) == ("cc", "dim", f"4*{unk}", 6) and "no extent" in c.message


def test_a_claim_the_run_cannot_bind_is_counted_unchecked() -> None:
    m = _nonzero_model()
    result = infer.infer_model(m)
    assert D.is_symbolic(result.shape_of("p")[2]) and not D.is_variable(result.shape_of("p")[2])
    observed = {k: v for k, v in _observe(m, [0, 3, 0, 5, 6]).items() if k in ("p", "s")}
    rc = check_run(result, {"N": 5}, observed)
    # floor(unk/2) is not linear in unk: the pooled extent, the Shape element and p's bytes stay
    # unchecked.
    assert rc.unchecked == 3 and rc.fresh == {} and not rc.contradictions, rc.unchecked_claims
    assert {u.split(":")[0] for u in rc.unchecked_claims} == {"`p` dim 2", "`s` element 2", "`p` bytes"}


# -- the bytes of each value (result.cost) ------------------------------------------------------


def test_the_bytes_of_each_value_are_checked_against_the_arrays(monkeypatch) -> None:
    m = _nonzero_model()
    observed = _observe(m, [0, 3, 0, 5, 6])
    result = infer.infer_model(m)
    rc = check_run(result, {"N": 5}, observed)
    assert not rc.contradictions and rc.fresh
    # Each fetched value's claimed bytes at the run's binding is the array's nbytes.
    full = {"N": 5, **rc.fresh}
    sized = [n for n, a in observed.items() if result.cost.bytes_of(n).at(full) is not None]
    assert sorted(sized) == ["cc", "f", "nz", "p", "s", "u"]
    assert all(result.cost.bytes_of(n).at(full) == observed[n].nbytes for n in sized)
    # A mutant whose float is 2 bytes claims half of every float value's bytes, and only that.
    monkeypatch.setitem(sizes.ELEM_BITS, F, 16)
    with reuse.disabled():
        mutant = infer.infer_model(m)
    rc = check_run(mutant, {"N": 5}, observed)
    assert {(c.value, c.kind) for c in rc.contradictions} == {(n, "bytes") for n in ("f", "u", "p", "cc")}
    (unk,) = rc.fresh
    c = next(c for c in rc.contradictions if c.value == "f")  # float[1, unk]: 3 elements in this run
    assert (c.claimed, c.actual, observed["f"].nbytes) == (f"2*{unk}", 12, 12)
    assert f"`f` bytes: claimed 2*{unk} = 6 at" in c.message and "runtime 12" in c.message


def test_verify_compares_bytes_on_a_real_model_and_a_mutant_fails(monkeypatch) -> None:
    report = infer.infer_model(EXAMPLE).verify(samples=2)
    assert report.ok and report.claims > 0
    monkeypatch.setitem(sizes.ELEM_BITS, F, 16)
    with reuse.disabled():
        report = infer.infer_model(EXAMPLE).verify(samples=2)
    assert not report.ok and len(report.checked_runs) == 2
    kinds = {c.kind for c in report.contradictions}
    assert kinds == {"bytes"}
    # Every float value the runs fetched, in each run: the shipped BERT's are float but for 4 int64.
    wrong = {c.value for c in report.contradictions}
    assert "last_hidden_state" in wrong and "input_ids" not in wrong
    c = next(c for c in report.contradictions if c.value == "last_hidden_state")
    b = c.bindings
    assert c.claimed == "64*batch*sequence" and c.actual == 128 * b["batch"] * b["sequence"]


def test_a_run_outside_an_assumption_is_skipped() -> None:
    m = _declared_extent_model()
    result = infer.infer_model(m)
    assert result.assumptions, "the extent is adopted from the declaration"
    rc = check_run(result, {"N": 5}, _observe(m, [1] * 5))  # 5 elements, not the 3 declared
    violated = [str(a) for a in result.assumptions if a.holds({"N": 5, **rc.fresh}) is False]
    assert rc.skipped == violated[0] and rc.claims == 0 and not rc.contradictions
    report = verify(infer.infer_model(m), samples=4, int_range=(0, 1), seed=1)
    assert report.error is None and not report.contradictions
    assert all(r.skipped is None or r.skipped in {str(a) for a in result.assumptions} for r in report.runs)


# -- picking bindings -----------------------------------------------------------------------------


def test_bindings_are_drawn_inside_the_domain() -> None:
    x = helper.make_tensor_value_info("x", F, ["N", 4])
    y = helper.make_tensor_value_info("y", F, ["M", 4])
    m = _model([helper.make_node("Add", ["x", "y"], ["z"])], [x, y], [helper.make_tensor_value_info("z", F, None)])
    report = verify(infer.infer_model(m), samples=3)
    assert report.error is None and not report.contradictions and len(report.checked_runs) == 3
    # N and M must broadcast: every binding drawn is one onnxruntime runs (none is refused).
    assert not report.failed
    assert all(r.bindings["N"] == r.bindings["M"] or 1 in r.bindings.values() for r in report.runs)
    assert any("inside the model's domain" in n and "3 drawn" in n for n in report.notes), report.notes


def test_bindings_respect_the_assumptions_and_pins() -> None:
    x = helper.make_tensor_value_info("x", F, [1, 1, "H"])
    pool = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[5])
    m = _model([pool], [x], [helper.make_tensor_value_info("y", F, None)])
    result = infer.infer_model(m)
    least = max((a.lower for a in result.assumptions if D.to_str(a.expr) == "H" and a.lower), default=None)
    assert least is not None and least > 3, result.assumptions  # more than the first extents tried
    report = verify(result, samples=5)
    assert not report.failed and all(r.bindings["H"] >= least for r in report.runs)
    assert len({r.bindings["H"] % 2 for r in report.runs}) == 2  # odd and even extents
    report = verify(result, samples=1, bind={"H": 9})
    assert [r.bindings for r in report.runs] == [{"H": 9}]
    with pytest.raises(VerifyError, match="no graph input has a dimension named 'W'"):
        verify(result, bind={"W": 3})


def test_a_model_onnxruntime_cannot_load_reports_why() -> None:
    x = helper.make_tensor_value_info("x", F, ["N"])
    node = helper.make_node("Foo", ["x"], ["y"], domain="my.domain")
    m = _model([node], [x], [helper.make_tensor_value_info("y", F, ["N"])], domains={"my.domain": 1})
    report = verify(infer.infer_model(m))
    assert report.error is not None and "my.domain" in report.error and not report.runs
    assert "\n" not in report.error


# -- the command line -----------------------------------------------------------------------------


def test_cli_exit_0_with_counts_and_json(tmp_path) -> None:
    status, out, err = C.run("verify", str(R.MODELS / "mask_ops_dynamo.onnx"), "--samples", "2")
    assert status == 0, err
    assert "claims checked in 2 runs" in out and "0 unchecked" in out and "none contradicted" in out
    status, out, _ = C.run(
        "verify",
        str(R.MODELS / "mask_ops_dynamo.onnx"),
        "--samples",
        "2",
        "--json",
        "--bind",
        "batch=3",
        "--int-range",
        "0:5",
        "--seed",
        "7",
    )
    data = json.loads(out)
    assert status == 0 and data["ok"] and data["error"] is None and data["summary"]["checked_runs"] == 2
    assert data["summary"]["claims"] == sum(r["claims"] for r in data["runs"]) > 0
    assert all(r["bindings"]["batch"] == 3 for r in data["runs"])
    assert C.run("verify", str(R.MODELS / "mask_ops_dynamo.onnx"), "-q", "--samples", "1")[1:] == ("", "")


def test_cli_exit_1_lists_each_contradiction(tmp_path) -> None:
    m = onnx.load(str(EXAMPLE))
    m.graph.output[0].type.tensor_type.shape.dim[2].dim_value = 33
    path = tmp_path / "wrong.onnx"
    onnx.save(m, path)
    status, out, _ = C.run("verify", str(path), "--samples", "2")
    assert status == 1
    lines = [line for line in out.splitlines() if "[declared-type]" in line]
    assert len(lines) == 2 and all("`last_hidden_state`" in line and "axis 2 is 32" in line for line in lines)
    assert "2 contradicted" in out
    status, out, _ = C.run("verify", str(path), "--samples", "1", "--json")
    data = json.loads(out)
    assert status == 1 and not data["ok"]
    [c] = data["runs"][0]["contradictions"]
    assert c["kind"] == "declared-type" and c["value"] == "last_hidden_state" and c["actual"] == 32


def test_cli_exit_2_when_the_model_cannot_run(tmp_path) -> None:
    x = helper.make_tensor_value_info("x", F, ["N"])
    node = helper.make_node("Foo", ["x"], ["y"], domain="my.domain")
    path = tmp_path / "custom.onnx"
    onnx.save(_model([node], [x], [helper.make_tensor_value_info("y", F, ["N"])], domains={"my.domain": 1}), path)
    status, out, err = C.run("verify", str(path))
    assert status == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "cannot run the model" in err and "my.domain" in err
    status, out, err = C.run("verify", str(path), "--json")
    assert status == 2 and json.loads(out)["error"] and "cannot run the model" in err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--int-range", "5"], "--int-range expects LO:HI"),
        (["--int-range", "3:1"], "LO is greater than HI"),
        (["--samples", "0"], "--samples must be at least 1"),
        (["--bind", "nosuch=3"], "no graph input has a dimension named 'nosuch'"),
        (["--bind", "batch"], "--bind expects NAME=INT"),
    ],
)
def test_cli_exit_2_on_bad_options(argv: list[str], message: str) -> None:
    status, out, err = C.run("verify", str(EXAMPLE), *argv)
    assert status == 2 and out == "" and message in err and len(err.strip().splitlines()) == 1


def test_without_onnxruntime_the_extra_is_named(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # `import onnxruntime` raises ImportError
    with pytest.raises(VerifyError, match="verify"):
        verify(infer.infer_model(EXAMPLE))
    status, _, err = C.run("verify", str(EXAMPLE))
    assert status == 2 and INSTALL_HINT in err


def _import_of_onnxruntime_raises(monkeypatch, make_error) -> None:
    import builtins

    real = builtins.__import__

    def fake(name, *args, **kwargs):
        if name == "onnxruntime":
            raise make_error()
        return real(name, *args, **kwargs)

    monkeypatch.delitem(sys.modules, "onnxruntime", raising=False)
    monkeypatch.setattr(builtins, "__import__", fake)


def test_a_broken_onnxruntime_is_not_called_missing(monkeypatch) -> None:
    _import_of_onnxruntime_raises(monkeypatch, lambda: ImportError("libonnxruntime.so: cannot open shared object"))
    with pytest.raises(VerifyError, match=r"installed but could not be imported: libonnxruntime\.so") as e:
        require_onnxruntime()
    assert "not installed" not in str(e.value)


def test_ctrl_c_while_onnxruntime_imports_stays_an_interrupt(monkeypatch) -> None:
    def interrupted() -> ImportError:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as k:
            e = ImportError("initialization failed")
            e.__context__ = k
            return e

    _import_of_onnxruntime_raises(monkeypatch, interrupted)
    with pytest.raises(KeyboardInterrupt):
        require_onnxruntime()


def test_check_lists_the_assumptions(tmp_path) -> None:
    path = tmp_path / "nz.onnx"
    onnx.save(_declared_extent_model(), path)
    texts = [str(a) for a in infer.infer_model(str(path)).assumptions]
    assert texts
    status, out, _ = C.run("check", str(path))
    assert status == 0 and f"assumptions ({len(texts)}):" in out and all(t in out for t in texts)
    status, out, _ = C.run("check", str(path), "--json")
    listed = json.loads(out)["assumptions"]
    assert [a["text"] for a in listed] == texts and listed[0]["upper"] == 3 and listed[0]["site"]
