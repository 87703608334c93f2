"""Run every invocation example declared beside the rules (``signatures.kit.registry.example``)."""

from __future__ import annotations

import pytest

import infer
import signatures
from infer.contract.registry import REGISTRY
from infer.core import dims as D
from infer.core import types as T
from infer.core.values import SymFloat
from infer.walk.node import parse_value
from signatures.kit.registry import EXAMPLES

signatures.load_all()


def _matches(got: infer.Value, want: infer.Value, table) -> str | None:
    gt, wt = got.type, want.type
    if isinstance(wt, (T.SequenceType, T.OptionalType)):
        if type(gt) is not type(wt):
            return f"type {gt}, expected {wt}"
        return _matches(infer.Value(gt.elem), infer.Value(wt.elem), table)
    if not isinstance(wt, T.TensorType):
        return None if gt == wt else f"type {gt}, expected {wt}"
    if not isinstance(gt, T.TensorType) or gt.elem != wt.elem:
        return f"type {gt}, expected {wt}"
    if wt.shape is None:
        return None if gt.shape is None else f"shape {gt}, expected unknown rank"
    if gt.shape is None or len(gt.shape) != len(wt.shape):
        return f"shape {gt}, expected {wt}"
    for axis, (g, w) in enumerate(zip(gt.shape, wt.shape)):
        if w is None:
            if g is not None and not table.is_fresh(g):
                return f"dim {axis} is {D.to_str(g)}, expected unknown ({gt} vs {wt})"
        elif D.equal(g, w) is not True:
            return f"dim {axis} is {D.to_str(g)}, expected {D.to_str(w)} ({gt} vs {wt})"
    if want.known is not None:
        if got.known is None:
            return f"contents unknown, expected {want.known.elems}"
        if len(got.known.elems) != len(want.known.elems):
            return f"contents {got.known.elems}, expected {want.known.elems}"
        for g, w in zip(got.known.elems, want.known.elems):
            if w is None:
                same = g is None  # an element stated unknown must be unknown
            elif isinstance(w, float) and w != w:
                same = isinstance(g, float) and g != g  # NaN
            elif isinstance(w, SymFloat):
                same = isinstance(g, SymFloat) and (g.den, g.rounded) == (w.den, w.rounded) and D.equal(g.num, w.num)
            else:
                same = D.equal(g, w) is True if not isinstance(w, (float, bool, str)) else g == w
            if not same:
                return f"contents {got.known.elems}, expected {want.known.elems}"
    return None


def _id(ex) -> str:
    return f"{ex.op_type}-{','.join(ex.inputs)}"


def read_stated(src: str, table) -> infer.Value:
    """A stated output: a type string, or one of the two forms ``str`` writes for what a type
    string cannot say: ``unknown`` (nothing is known) and ``?[...]`` (a tensor of unknown element
    type), also inside ``seq(...)`` and ``optional(...)``."""
    s = src.strip()
    if s == "unknown":
        return infer.Value(T.UNKNOWN)
    for prefix, make in (("seq(", T.SequenceType), ("optional(", T.OptionalType)):
        if s.startswith(prefix) and s.endswith(")"):
            return infer.Value(make(read_stated(s[len(prefix) : -1], table).type))
    if s.startswith("?["):
        v = parse_value("float" + s[1:], table)
        return infer.Value(T.TensorType(None, v.type.shape), v.known)  # type: ignore[union-attr]
    return parse_value(s, table)


def check_example(ex) -> None:
    """Run one example: its diagnostics, and every output it states (an input or output string
    that does not read fails it)."""
    out = infer.infer_node(
        ex.op_type, list(ex.inputs), dict(ex.attrs), opset=ex.opset, domain=ex.domain, n_outputs=len(ex.outputs)
    )
    codes = {d.code for d in out.diagnostics}
    if ex.error:
        assert ex.error in codes, f"expected diagnostic {ex.error}, got {out.diagnostics}"
    else:
        bad = [d for d in out.diagnostics if d.severity != "info"]
        assert not bad, bad
    # A node with an error still has outputs: the example states them as inference gives them
    # (unknown where the rule leaves them unknown).
    wanted = [read_stated(src, out.dims) for src in ex.outputs]
    assert len(out.values) == len(wanted), f"{len(out.values)} outputs, the example states {len(wanted)}"
    for k, (want, got) in enumerate(zip(wanted, out.values)):
        problem = _matches(got, want, out.dims)
        assert problem is None, f"output {k}: {problem}"


@pytest.mark.parametrize("ex", EXAMPLES, ids=[_id(e) for e in EXAMPLES])
def test_example(ex) -> None:
    check_example(ex)


FOUNDATION_OPS = """Add Sub Mul Div Pow Equal Not Relu Erf Gelu Sqrt MatMul Gemm Conv ConvTranspose MaxPool
AveragePool GlobalAveragePool BatchNormalization LayerNormalization Softmax LogSoftmax Reshape Flatten Transpose
Squeeze Unsqueeze Concat Split Slice Gather Expand Tile Pad ReduceMean ReduceSum ReduceMax ReduceMin Cast CastLike
Constant ConstantOfShape Shape Size Range Where Identity Dropout Trilu Einsum TopK ArgMax Resize""".split()


@pytest.mark.parametrize("op", FOUNDATION_OPS)
def test_every_foundation_op_has_a_rule_and_an_example(op: str) -> None:
    assert ("", op) in REGISTRY.operators(), f"no rule registered for {op}"
    assert any(e.op_type == op for e in EXAMPLES), f"no invocation example for {op}"


def _written_defaults() -> list:
    """(example, attribute, default) for every attribute an accepted example leaves out whose
    signature states a default (a list default only when it is not empty)."""
    from onnx import AttributeProto as A

    from infer.contract.signature import ONNX_OPSET, signature

    out = []
    for ex in EXAMPLES:
        if ex.error:
            continue
        opset = ex.opset if ex.opset is not None else (ONNX_OPSET if ex.domain in ("", "ai.onnx") else 1)
        sig = signature(ex.domain, ex.op_type, opset)
        given = dict(ex.attrs)
        for name, spec in (sig.attributes if sig is not None else {}).items():
            simple = spec.type in (A.INT, A.FLOAT, A.STRING) or (spec.type in (A.INTS, A.FLOATS) and spec.default)
            if name not in given and not spec.required and spec.default is not None and simple:
                out.append((ex, name, spec.default))
    return out


def _outcome(ex, attrs: dict) -> tuple:
    out = infer.infer_node(
        ex.op_type, list(ex.inputs), attrs, opset=ex.opset, domain=ex.domain, n_outputs=len(ex.outputs)
    )
    return [str(v.type) for v in out.values], sorted({d.code for d in out.diagnostics if d.severity != "info"})


def test_writing_a_default_changes_nothing() -> None:
    """An attribute written with its default value (0 meaning "the head size", -1 "unused") is
    read as if omitted (issue 26): the same outputs and the same diagnostics."""
    cases = _written_defaults()
    assert len(cases) > 500
    bad = []
    for ex, name, default in cases:
        base = _outcome(ex, dict(ex.attrs))
        if _outcome(ex, {**dict(ex.attrs), name: default}) != base:
            bad.append(f"{_id(ex)} with {name}={default!r}")
    assert not bad, bad[:10]
