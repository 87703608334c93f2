"""Declared names that are not identifiers: what is written must read back as what was meant.

Exporters write ``dim_param``s such as ``past_sequence + sequence`` on an attention mask. Such a
name, when its parts are declared names of the model, stands for the expression it spells; any
other name is one variable, written in backquotes inside an expression (``2*`N + M```), never
as bare text that every reader would parse as another expression.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as h

import infer
from infer.core import dimparse
from infer.core import dims as D
from infer.core.dimtable import DimTable
from tests.support.runtime import check, expose_all, run


def _kv_model() -> onnx.ModelProto:
    nodes = [
        h.make_node("Concat", ["past", "new"], ["kv"], axis=2),
        h.make_node("Shape", ["kv"], ["kv_shape"]),
        h.make_node("Gather", ["kv_shape", "two"], ["total"], axis=0),
        h.make_node("Unsqueeze", ["mask", "ones"], ["m4"]),
        h.make_node("Cast", ["m4"], ["m4f"], to=TP.FLOAT),
        h.make_node("Mul", ["kv", "m4f"], ["y"]),
        h.make_node("Concat", ["odd", "odd"], ["odd2"], axis=0),
    ]
    inputs = [
        h.make_tensor_value_info("past", TP.FLOAT, ["batch", 2, "past_sequence", 4]),
        h.make_tensor_value_info("new", TP.FLOAT, ["batch", 2, "sequence", 4]),
        h.make_tensor_value_info("mask", TP.INT64, ["batch", "past_sequence + sequence"]),
        h.make_tensor_value_info("odd", TP.INT64, ["N + M"]),
    ]
    inits = [h.make_tensor("two", TP.INT64, [], [2]), h.make_tensor("ones", TP.INT64, [2], [1, 3])]
    outputs = [h.make_tensor_value_info("y", TP.FLOAT, None), h.make_tensor_value_info("odd2", TP.INT64, None)]
    g = h.make_graph(nodes, "g", inputs, outputs, inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 18)], ir_version=8)


def test_a_name_spelling_an_expression_over_declared_names_stands_for_it():
    result = infer.infer_model(_kv_model())
    p, s, b = D.symbol("past_sequence"), D.symbol("sequence"), D.symbol("batch")
    assert result.shape_of("kv") == (b, 2, p + s, 4)
    assert result.shape_of("y") == (b, 2, p + s, 4)  # the mask broadcasts: the same extent, no max
    assert "past_sequence + sequence" not in result.dims  # no opaque variable of that name
    assert any("stands for past_sequence + sequence" in str(f) for f in result.dims.facts)


def test_an_opaque_name_is_backquoted_inside_expressions():
    result = infer.infer_model(_kv_model())
    (d,) = result.shape_of("odd2")
    assert D.to_str(d) == "2*`N + M`"
    assert D.to_str(result.shape_of("odd")[0]) == "N + M"  # alone, the name as declared
    assert dimparse.names_in(D.to_str(d)) == {"N + M"}


@pytest.mark.parametrize("name", ["N + M", "a`b", "dim-0", "batch size", "2x", "seq"])
def test_every_written_expression_reads_back_as_itself(name):
    """A model declaring ``name``, ``seq`` and ``k``: each dim written from them, declared again
    (as value_info is when the annotated model is read), is the same dim."""
    declared = frozenset({name, "seq", "k"})
    table = DimTable(reserved=declared, inputs=declared)
    v, seq, k = (table.declared(n) for n in (name, "seq", "k"))
    for d in (v, D.mul(v, 2), D.add(v, seq), D.floordiv(D.add(v, 1), 2), D.dmax(v, k), D.mul(v, seq)):
        text = D.to_str(d)
        back = table.declared(text)
        assert back == d, f"{text!r} read back as {D.to_str(back)}"


def test_annotated_model_reads_back_with_the_same_claims():
    first = infer.infer_model(_kv_model())
    second = infer.infer_model(first.model)
    assert not [d for d in second.diagnostics if d.code == "declared-type-clash"]
    for name in ("kv", "y", "odd2"):
        assert second.type_of(name) == first.type_of(name), name


def test_claims_hold_in_onnxruntime():
    model = _kv_model()
    result = infer.infer_model(model)
    runs = []
    for b, p, s, n in ((1, 3, 2, 2), (2, 1, 5, 3)):
        feeds = {
            "past": np.zeros((b, 2, p, 4), np.float32),
            "new": np.zeros((b, 2, s, 4), np.float32),
            "mask": np.ones((b, p + s), np.int64),
            "odd": np.zeros(n, np.int64),
        }
        runs.append(({"batch": b, "past_sequence": p, "sequence": s}, run(expose_all(model), feeds)))
    verdict = check(result, runs)
    assert not verdict.wrong, verdict.wrong
