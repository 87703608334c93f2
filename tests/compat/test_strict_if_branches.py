"""Strict mode fails where an If's branches give an output of different kinds or element types,
as onnx's does; each case is checked against onnx's own verdict."""

from __future__ import annotations

import onnx.parser
import onnx.shape_inference
import pytest
from onnx import ModelProto

from infer.onnx_compat import InferenceError, infer_shapes

HEAD = '<ir_version: 8, opset_import: ["" : 17]>\n'
CASES = {
    "tensor element types": """g (bool c, float[N] x, int64[N] k) => (y) {
        y = If (c) <then_branch = t () => (float[N] a) { a = Identity(x) },
                    else_branch = e () => (int64[N] b) { b = Identity(k) }> }""",
    "a tensor and a sequence": """g (bool c, float[N] x) => (y) {
        y = If (c) <then_branch = t () => (a) { a = Identity(x) },
                    else_branch = e () => (b) { b = SequenceConstruct(x) }> }""",
    "sequence element types": """g (bool c, float[N] x, int64[N] k) => (y) {
        y = If (c) <then_branch = t () => (a) { a = SequenceConstruct(x) },
                    else_branch = e () => (b) { b = SequenceConstruct(k) }> }""",
    "optional element types": """g (bool c, float[N] x, int64[N] k) => (y) {
        y = If (c) <then_branch = t () => (a) { a = Optional(x) },
                    else_branch = e () => (b) { b = Optional(k) }> }""",
    "a known condition": """g (float[N] x, int64[N] k) => (y) {
        c = Constant <value = bool[1] {1}> ()
        y = If (c) <then_branch = t () => (float[N] a) { a = Identity(x) },
                    else_branch = e () => (int64[N] b) { b = Identity(k) }> }""",
    "an If inside a branch": """g (bool c, float[N] x, int64[N] k) => (y) {
        y = If (c) <then_branch = t () => (a) {
                        a = If (c) <then_branch = t2 () => (a2) { a2 = Identity(x) },
                                    else_branch = e2 () => (b2) { b2 = Identity(k) }> },
                    else_branch = e () => (b) { b = Identity(x) }> }""",
    "the same types": """g (bool c, float[N] x) => (y) {
        y = If (c) <then_branch = t () => (a) { a = Identity(x) },
                    else_branch = e () => (b) { b = Relu(x) }> }""",
    "the same element type, other ranks": """g (bool c, float[N] x, float[N, 2] z) => (y) {
        y = If (c) <then_branch = t () => (a) { a = Identity(x) },
                    else_branch = e () => (b) { b = Identity(z) }> }""",
    "past an operator no operator set defines": """g (bool c, float[N] x, int64[N] k) => (y) {
        u = NotAnOperator(x)
        y = If (c) <then_branch = t () => (a) { a = Identity(u) },
                    else_branch = e () => (b) { b = Identity(k) }> }""",
}


def _model(name: str) -> ModelProto:
    return onnx.parser.parse_model(HEAD + CASES[name])


def _fails(infer, model: ModelProto, **options) -> bool:
    try:
        infer(model, **options)
    except onnx.shape_inference.InferenceError:
        return True
    return False


@pytest.mark.parametrize("name", list(CASES))
def test_strict_mode_fails_where_onnx_does(name: str) -> None:
    model = _model(name)
    assert _fails(infer_shapes, model, strict_mode=True) == _fails(
        onnx.shape_inference.infer_shapes, model, strict_mode=True
    )
    assert not _fails(infer_shapes, model)  # not strict: the output is left unknown


def test_the_error_names_the_node_and_both_types() -> None:
    with pytest.raises(
        InferenceError,
        match=r"main, node 0 If: If output 0: the then branch gives float, "
        r"the else branch int64",
    ):
        infer_shapes(_model("tensor element types"), strict_mode=True)
    with pytest.raises(InferenceError, match=r"main/0:then_branch, node 0 If"):
        infer_shapes(_model("an If inside a branch"), strict_mode=True)


def test_check_type_reports_the_node_once() -> None:
    with pytest.raises(InferenceError) as caught:
        infer_shapes(_model("tensor element types"), strict_mode=True, check_type=True)
    assert len(str(caught.value).splitlines()) == 1
