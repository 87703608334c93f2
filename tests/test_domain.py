"""The input domain (``result.domain``, ``onnx-infer domain``): what a model requires of its
input sizes, simplified per variable, and checked against onnxruntime (``tests.domain_check``)."""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as h

import infer
from infer.cli import main

from .domain_check import CORPUS, check_model

ort = pytest.importorskip("onnxruntime")


def _model(nodes, inputs, outputs, inits=(), opset=17):
    g = h.make_graph(nodes, "g", inputs, outputs, list(inits))
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)])


def _conv_reshape() -> onnx.ModelProto:
    """A Conv whose window must fit (H, W >= 5), then a Reshape whose -1 must divide exactly."""
    x = h.make_tensor_value_info("x", TP.FLOAT, ["N", 3, "H", "W"])
    y = h.make_tensor_value_info("y", TP.FLOAT, None)
    w = h.make_tensor("w", TP.FLOAT, [8, 3, 5, 5], np.zeros(8 * 3 * 25, np.float32))
    s = h.make_tensor("s", TP.INT64, [4], [-1, 8, 4, 0])
    nodes = [h.make_node("Conv", ["x", "w"], ["c"], strides=[2, 2]), h.make_node("Reshape", ["c", "s"], ["y"])]
    return _model(nodes, [x], [y], [w, s])


def _positions(table: int = 16) -> onnx.ModelProto:
    """GPT-2's positions: Range(0, S) gathered from a table of ``table`` rows."""
    ids = h.make_tensor_value_info("ids", TP.INT64, ["B", "S"])
    y = h.make_tensor_value_info("y", TP.FLOAT, None)
    wpe = h.make_tensor("wpe", TP.FLOAT, [table, 4], np.zeros(table * 4, np.float32))
    nodes = [
        h.make_node("Shape", ["ids"], ["shape"], start=1, end=2),
        h.make_node("Squeeze", ["shape"], ["n"]),
        h.make_node("Constant", [], ["zero"], value=h.make_tensor("z", TP.INT64, [], [0])),
        h.make_node("Constant", [], ["one"], value=h.make_tensor("o", TP.INT64, [], [1])),
        h.make_node("Range", ["zero", "n", "one"], ["pos"]),
        h.make_node("Unsqueeze", ["pos", "axes"], ["pos2"]),
        h.make_node("Gather", ["wpe", "pos2"], ["y"]),
    ]
    axes = h.make_tensor("axes", TP.INT64, [1], [0])
    return _model(nodes, [ids], [y], [wpe, axes])


def _broadcast() -> onnx.ModelProto:
    a = h.make_tensor_value_info("a", TP.FLOAT, ["A", 4])
    b = h.make_tensor_value_info("b", TP.FLOAT, ["B", 1])
    c = h.make_tensor_value_info("c", TP.FLOAT, [3, 1])
    y = h.make_tensor_value_info("y", TP.FLOAT, None)
    z = h.make_tensor_value_info("z", TP.FLOAT, None)
    return _model([h.make_node("Add", ["a", "b"], ["y"]), h.make_node("Add", ["b", "c"], ["z"])], [a, b, c], [y, z])


def test_a_window_and_a_reshape_give_bounds_and_a_readable_divisibility():
    r = infer.infer_model(_conv_reshape())
    lines = str(r.domain).splitlines()
    assert lines == ["H >= 5", "W >= 5", "mod(N*floor((H + 1)/2) - 2*N, 4) == 0"]
    d = r.domain
    assert d.contains({"N": 4, "H": 5, "W": 5}) and d.contains({"N": 2, "H": 224, "W": 7})
    assert not d.contains({"N": 1, "H": 4, "W": 9}) and not d.contains({"N": 1, "H": 6, "W": 9})
    assert d.contains({"N": 1}) is None  # H and W unbound: undecided
    assert d.smallest() == {"N": 4, "H": 5, "W": 5}
    near = d.near({"N": 3, "H": 224, "W": 224})
    assert d.contains(near) and near["H"] == 224 and near["W"] == 224
    assert all(c.demands for c in d.constraints)
    assert "Conv" in str(d.constraints[0].demands[0])


def test_positions_from_a_range_bound_the_sequence_by_the_table():
    d = infer.infer_model(_positions(16)).domain
    assert [str(c) for c in d.constraints] == ["S <= 16"]
    assert "Gather" in str(d.constraints[0].demands[0])
    assert d.contains({"B": 2, "S": 16}) and not d.contains({"B": 2, "S": 17})
    assert d.outside(d.constraints[0], {"B": 2, "S": 4}) == {"B": 2, "S": 17}


def test_broadcast_alternatives_over_input_variables():
    d = infer.infer_model(_broadcast()).domain
    texts = {str(c) for c in d.constraints}
    assert texts == {"A == B or A == 1 or B == 1", "(B == 3 or B == 1)"}, texts
    assert d.contains({"A": 5, "B": 1}) and d.contains({"A": 3, "B": 3})
    assert not d.contains({"A": 5, "B": 3})  # B == 3 with the [3,1] input, but A is neither 3 nor 1
    assert d.smallest() == {"A": 1, "B": 1}


def test_a_requirement_on_a_data_dependent_extent_is_listed_as_not_expressed():
    x = h.make_tensor_value_info("x", TP.FLOAT, ["N"])
    k = h.make_tensor_value_info("k", TP.INT64, [1])
    y = h.make_tensor_value_info("y", TP.FLOAT, None)
    # The Expand's target comes from an input's contents: a fresh extent, broadcast with N.
    m = _model([h.make_node("Expand", ["x", "k"], ["e"]), h.make_node("Add", ["e", "x"], ["y"])], [x, k], [y])
    d = infer.infer_model(m).domain
    assert not d.constraints
    (n,) = d.not_expressed
    assert "N" in n.text and "broadcast" not in n.reason and "not an input size" in n.reason
    assert "Add" in str(n.demands[0])
    assert str(n).startswith("not expressed: ")


def test_a_requirement_inside_a_branch_is_conditional():
    x = h.make_tensor_value_info("x", TP.FLOAT, [1, 3, "H", "W"])
    cond = h.make_tensor_value_info("cond", TP.BOOL, [])
    y = h.make_tensor_value_info("y", TP.FLOAT, None)
    w = h.make_tensor("w", TP.FLOAT, [2, 3, 3, 3], np.zeros(54, np.float32))
    then = h.make_graph(
        [h.make_node("Conv", ["x", "w"], ["t"])], "then", [], [h.make_tensor_value_info("t", TP.FLOAT, None)], [w]
    )
    other = h.make_graph(
        [h.make_node("Identity", ["x"], ["e"])], "else", [], [h.make_tensor_value_info("e", TP.FLOAT, None)]
    )
    m = _model([h.make_node("If", ["cond"], ["y"], then_branch=then, else_branch=other)], [x, cond], [y])
    d = infer.infer_model(m).domain
    assert d.constraints and all(c.conditional for c in d.constraints)
    assert d.binding == () and d.contains({"H": 1, "W": 1})  # the else branch runs anywhere


def test_domain_on_the_command_line(capsys, tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save(_conv_reshape(), path)
    assert main(["domain", str(path), "--near", "H=224", "--near", "W=100", "--near", "N=3"]) == 0
    out = capsys.readouterr().out
    assert "H >= 5" in out and "by Conv" in out and "a valid binding near" in out
    assert main(["domain", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["variables"] == ["N", "H", "W"] and data["sample"] == {"N": 4, "H": 5, "W": 5}
    assert [c["text"] for c in data["constraints"]][:2] == ["H >= 5", "W >= 5"]


def test_check_names_a_binding_outside_the_domain(capsys, tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save(_conv_reshape(), path)
    assert main(["check", str(path), "--bind", "H=3"]) == 1
    assert "the binding H=3 is outside the model's domain: H >= 5" in capsys.readouterr().out
    main(["check", str(path), "--bind", "H=8", "--bind", "W=8", "--bind", "N=4"])
    assert "outside the model's domain" not in capsys.readouterr().out


@pytest.mark.parametrize("model", [lambda: _conv_reshape(), lambda: _positions(16), lambda: _broadcast()])
def test_inside_runs_and_outside_fails_in_onnxruntime(model, tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save(model(), path)
    c = check_model(path, sizes=(2, 5, 20))
    assert not c.findings, c.findings
    assert c.inside and c.inside_ran == c.inside and c.outside_refused == c.outside


# The CI slice of the campaign over the corpus (python -m tests.domain_check for all of it).
SLICE = ["bert_torchscript.onnx", "gpt2_dynamo.onnx", "segformer_dynamo.onnx", "swin_torchscript.onnx"]


@pytest.mark.parametrize("name", SLICE)
def test_campaign_slice_on_the_corpus(name):
    c = check_model(CORPUS / name, sizes=(3, 17, 70))
    assert not c.findings, c.findings
    assert c.inside_ran == c.inside > 0 and c.outside_refused == c.outside


def test_the_example_of_docs_domain_md_runs():
    import re

    from .domain_check import ROOT

    text = (ROOT / "docs" / "domain.md").read_text()
    (code,) = re.findall(r"```python\n(.*?)```", text, re.S)
    exec(compile(code, "docs/domain.md", "exec"), {})


TRACED_SWIN = CORPUS / "traced" / "swin_traced_torchscript.onnx"


def test_a_traced_swin_window_partition_is_exact_and_its_domain_drawn():
    """issue 24: the Swin pads its patch grid up to a multiple of the window (a Pad whose pads
    are ``(4 - x mod 4) mod 4``), reshapes it into windows and, traced at 32 x 32, reshapes it
    back without cropping. Read as ``4*ceil(x/4)``, every extent is exact (62 values held fresh
    variables), and the traced reshape's requirement is stated per variable, so that the
    domain draws bindings onnxruntime runs and refuses one that breaks it."""
    result = infer.infer_model(str(TRACED_SWIN))
    assert not [v for v in result.dims if v.is_fresh]
    dom = result.domain
    lines = {str(c) for c in dom.constraints}
    assert "4*floor((height + 12)/16) == floor(height/4)" in lines and not dom.not_expressed
    assert dom.smallest() == {"batch": 1, "height": 32, "width": 32}
    c = check_model(TRACED_SWIN, sizes=(3, 17, 70))
    assert not c.findings, c.findings
    assert c.inside_ran == c.inside > 0 and c.outside_refused == c.outside > 0


def test_verify_runs_a_traced_swin_at_every_binding_it_draws():
    report = infer.infer_model(str(TRACED_SWIN)).verify(samples=4)
    assert report.ok and not report.failed and len(report.checked_runs) == 4


def test_per_variable_equalities_split_only_where_every_part_is_ordered():
    """A product equality splits per variable where each part of one side is provably at least
    the other's and at least 1; with parts ordered both ways it stays whole (at h = w = 3,
    ``floor(h/2)*w == h*floor(w/2)`` holds, ``2*floor(h/2) == h`` does not)."""
    from infer.check.domain import Constraint, simplify
    from infer.core import dims as D

    hh, ww = D.symbol("h"), D.symbol("w")
    mixed = Constraint("equal", (D.mul(D.floordiv(hh, 2), ww), D.mul(hh, D.floordiv(ww, 2))))
    assert simplify([mixed], ["h", "w"], {"h": hh, "w": ww}) == [mixed]
    padded = Constraint("equal", (D.mul(16, D.mul(D.ceildiv(hh, 4), D.ceildiv(ww, 4))), D.mul(hh, ww)))
    split = simplify([padded], ["h", "w"], {"h": hh, "w": ww})
    assert [str(c) for c in split] == ["4*floor((h + 3)/4) == h", "4*floor((w + 3)/4) == w"]
    for hv in range(1, 13):
        for wv in range(1, 13):
            b = {"h": hv, "w": wv}
            assert padded.holds(b) == all(c.holds(b) for c in split)


def test_a_node_onnxruntime_refuses_is_in_the_domain_and_refused(capsys, tmp_path):
    """Pads not below the kernel (issue 24): the definition's shape, a warning, and a runtime's
    constraint that ``domain`` shows, no binding satisfies and onnxruntime confirms."""
    x = h.make_tensor_value_info("x", TP.FLOAT, ["N", 3, "H", "W"])
    y = h.make_tensor_value_info("y", TP.FLOAT, None)
    path = tmp_path / "m.onnx"
    onnx.save(_model([h.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], pads=[1, 1, 2, 2])], [x], [y]), path)
    result = infer.infer_model(str(path))
    assert [str(d) for d in result.shape_of("y")] == ["N", "3", "H + 2", "W + 2"]
    assert not result.domain.runnable
    assert main(["domain", str(path)]) == 0
    out = capsys.readouterr().out
    assert "onnxruntime refuses pads [1, 1, 2, 2] not below kernel_shape [2, 2]  [onnxruntime's]" in out
    assert "none (onnxruntime refuses the model at every one)" in out
    c = check_model(path)
    assert not c.findings and c.outside == c.outside_refused == 1
