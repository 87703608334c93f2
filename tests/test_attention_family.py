"""The attention, normalization and loss rules against the runtimes, over random shapes.

onnxruntime runs every operator here except SwiGLU (its function body needs Swish, which
onnxruntime lacks) and FlexAttention (a preview-domain operator it does not know); those two are
checked against ``onnx.reference.ReferenceEvaluator`` instead, concretely and symbolically alike.
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import onnx
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st
from onnx import helper
from onnx.reference import ReferenceEvaluator

import infer
from infer.core import dims as D
from infer.core import types as T
from tests.support.onenode import In, InvalidCase, build, check_node, const

SETTINGS = settings(
    max_examples=int(os.environ.get("PROPERTY_EXAMPLES_ATTENTION", "20")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
small = st.integers(1, 4)


def check(*args, **kwargs):
    """``check_node``, discarding the cases onnxruntime refuses."""
    try:
        return check_node(*args, **kwargs)
    except InvalidCase:
        reject()


def check_reference(
    op: str, inputs: list[In | None], attrs: dict, n_out: int, opset: int, domain: str = "", graphs: dict | None = None
) -> None:
    """Like ``check_node``, with the reference evaluator as the runtime (and any domain)."""
    rng = np.random.default_rng(0)
    feeds = {f"x{i}": x.data(rng) for i, x in enumerate(inputs) if x is not None and x.array is None}
    real = None
    for symbolic in (False, True):
        model, bindings = build(op, inputs, attrs, n_out, opset, symbolic)
        node = model.graph.node[0]
        node.domain = domain
        for name, g in (graphs or {}).items():
            node.attribute.append(helper.make_attribute(name, g))
        if domain:
            model.opset_import.append(helper.make_opsetid(domain, 1))
        if real is None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                real = [np.asarray(y) for y in ReferenceEvaluator(model).run(None, feeds)]
        result = infer.infer_model(model)
        assert not [d for d in result.diagnostics if d.severity == "error"], result.diagnostics
        for k, r in enumerate(real):
            t = result.type_of(f"y{k}")
            assert isinstance(t, T.TensorType) and t.elem == helper.np_dtype_to_tensor_dtype(r.dtype), (t, r.dtype)
            assert t.shape is not None and len(t.shape) == r.ndim, (t, r.shape)
            for d, e in zip(t.shape, r.shape):
                if symbolic:
                    assert d is not None and D.free_names(d) <= set(bindings), t
                    assert D.evaluate(d, bindings) == e, (t, r.shape, bindings)
                else:
                    assert d == e, (t, r.shape)


# -- Attention ------------------------------------------------------------------------------------


@SETTINGS
@given(st.data())
def test_attention(data):
    draw = data.draw
    opset = draw(st.sampled_from([23, 24, 25]))
    rank = draw(st.sampled_from([3, 4]))
    b, hkv, group, sq, skv = draw(small), draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(small), draw(small)
    hq = hkv * group
    d, dv = draw(st.sampled_from([2, 4, 8])), draw(st.sampled_from([2, 6]))
    past = draw(st.sampled_from([0, 0, 1, 3]))
    nonpad = opset >= 24 and not past and draw(st.booleans())
    total = past + skv
    mask = draw(st.sampled_from([None, (sq, total), (b, 1, sq, total), (1, hq, sq, total), (hq, sq, total)]))
    mask_type = draw(st.sampled_from([np.float32, np.bool_]))
    n_out = draw(st.integers(1, 4)) if not past else draw(st.integers(3, 4))
    attrs: dict = {"is_causal": int(draw(st.booleans()))}
    if n_out == 4:
        attrs["qk_matmul_output_mode"] = draw(st.integers(0, 3))
    if rank == 3:
        attrs.update(q_num_heads=hq, kv_num_heads=hkv)
        q, k, v = In([b, sq, hq * d]), In([b, skv, hkv * d]), In([b, skv, hkv * dv])
    else:
        q, k, v = In([b, hq, sq, d]), In([b, hkv, skv, d]), In([b, hkv, skv, dv])
    inputs: list[In | None] = [q, k, v, None if mask is None else In(mask, mask_type)]
    if past:
        inputs += [In([b, hkv, past, d]), In([b, hkv, past, dv])]
    elif nonpad:
        inputs += [None, None, const(draw(st.lists(st.integers(1, skv), min_size=b, max_size=b)))]
    while inputs[-1] is None:
        inputs.pop()
    out = check("Attention", inputs, attrs, n_out=n_out, opset=opset)
    assert out.determined == out.dims  # every output extent is exact over the input variables


# -- RoPE, RMSNorm, SwiGLU ------------------------------------------------------------------------


@SETTINGS
@given(st.data())
def test_rotary_embedding(data):
    draw = data.draw
    b, s, heads = draw(small), draw(small), draw(small)
    head = draw(st.sampled_from([2, 4, 8]))
    rot = draw(st.sampled_from([0] + [r for r in (2, 4, 6, 8) if r <= head]))
    half = (rot or head) // 2
    attrs = {"interleaved": int(draw(st.booleans()))}
    if rot:
        attrs["rotary_embedding_dim"] = rot
    if draw(st.booleans()):
        x = In([b, s, heads * head])
        attrs["num_heads"] = heads
    else:
        x = In([b, heads, s, head])
    if draw(st.booleans()):
        m = s + 2
        ids = np.random.default_rng(0).integers(0, m, size=(b, s))
        inputs = [x, In([m, half]), In([m, half]), const(ids)]
    else:
        inputs = [x, In([b, s, half]), In([b, s, half])]
    check("RotaryEmbedding", inputs, attrs, opset=23)


@SETTINGS
@given(st.lists(small, min_size=1, max_size=4), st.data())
def test_rms_normalization(shape, data):
    r = len(shape)
    axis = data.draw(st.integers(-r, r - 1))
    tail = shape[axis % r :]
    keep = data.draw(st.integers(1, len(tail)))
    scale = [e if data.draw(st.booleans()) else 1 for e in tail[len(tail) - keep :]]
    dtype = data.draw(st.sampled_from([np.float32, np.float16]))
    check("RMSNormalization", [In(shape, dtype), In(scale, dtype)], {"axis": axis}, opset=23)


@settings(max_examples=5, deadline=None)
@given(st.lists(small, min_size=0, max_size=3), st.floats(0.5, 2.0))
def test_swiglu_against_reference(shape, alpha):
    check_reference("SwiGLU", [In(shape), In(shape)], {"alpha": alpha}, 1, 28)


# -- caches and recurrent layers ------------------------------------------------------------------


@SETTINGS
@given(st.data())
def test_tensor_scatter(data):
    draw = data.draw
    shape = draw(st.lists(small, min_size=3, max_size=4))
    r = len(shape)
    axis = draw(st.integers(1, r - 1))
    seq = draw(st.integers(1, shape[axis]))
    update = list(shape)
    update[axis] = seq
    mode = draw(st.sampled_from(["linear", "circular"]))
    attrs = {"axis": axis - r if draw(st.booleans()) else axis, "mode": mode}
    inputs = [In(shape), In(update)]
    if draw(st.booleans()):
        top = shape[axis] - seq if mode == "linear" else shape[axis] + 2
        inputs.append(const(draw(st.lists(st.integers(0, top), min_size=shape[0], max_size=shape[0]))))
    check("TensorScatter", inputs, attrs, opset=24)


@SETTINGS
@given(small, small, small, st.integers(1, 4), st.booleans(), st.booleans(), st.sampled_from(["none", "silu"]))
def test_causal_conv_with_state(b, c, length, k, bias, past, activation):
    inputs: list[In | None] = [In([b, c, length]), In([c, 1, k]), In([c]) if bias else None]
    if past:
        inputs.append(In([b, c, k - 1]))
    while inputs[-1] is None:
        inputs.pop()
    check("CausalConvWithState", inputs, {"activation": activation}, n_out=2, opset=27)


@SETTINGS
@given(st.data())
def test_linear_attention(data):
    draw = data.draw
    b, t, hkv, group = draw(st.integers(1, 2)), draw(small), draw(st.integers(1, 2)), draw(st.integers(1, 2))
    hq, dk, dv = hkv * group, draw(st.sampled_from([2, 4])), draw(st.sampled_from([2, 3]))
    rule = draw(st.sampled_from(["linear", "gated", "delta", "gated_delta"]))
    inputs: list[In | None] = [In([b, t, hq * dk]), In([b, t, hkv * dk]), In([b, t, hkv * dv])]
    dtype = draw(st.sampled_from([np.float32, np.float16]))
    inputs.append(In([b, hkv, dk, dv], dtype) if draw(st.booleans()) else None)
    inputs.append(In([b, t, draw(st.sampled_from([hkv, hkv * dk]))]) if "gated" in rule else None)
    inputs.append(In([b, t, draw(st.sampled_from([hkv, 1]))]) if "delta" in rule else None)
    while inputs[-1] is None:
        inputs.pop()
    attrs = {"q_num_heads": hq, "kv_num_heads": hkv, "update_rule": rule}
    check("LinearAttention", inputs, attrs, n_out=2, opset=27)


# -- losses ---------------------------------------------------------------------------------------


@SETTINGS
@given(
    small,
    st.integers(2, 4),
    st.lists(small, max_size=2),
    st.sampled_from(["none", "sum", "mean"]),
    st.booleans(),
    st.sampled_from([12, 13, 22]),
    st.booleans(),
)
def test_losses(n, c, extra, reduction, weighted, opset, sce):
    labels = np.random.default_rng(0).integers(0, c, size=[n, *extra])
    inputs = [In([n, c, *extra]), const(labels)] + ([In([c])] if weighted else [])
    attrs = {"reduction": reduction}
    if sce:
        check("SoftmaxCrossEntropyLoss", inputs, attrs, n_out=2, opset=min(opset, 13))
    else:
        check("NegativeLogLikelihoodLoss", inputs, attrs, opset=opset)


# -- FlexAttention (ai.onnx.preview) --------------------------------------------------------------


def _score_mod() -> onnx.GraphProto:
    bias = helper.make_tensor("bias", onnx.TensorProto.FLOAT, [], [0.5])
    return helper.make_graph(
        [helper.make_node("Add", ["scores", "bias"], ["scores_out"])],
        "score_mod",
        [helper.make_tensor_value_info("scores", onnx.TensorProto.FLOAT, ["B", "H", "L", "S"])],
        [helper.make_tensor_value_info("scores_out", onnx.TensorProto.FLOAT, ["B", "H", "L", "S"])],
        [bias],
    )


@settings(max_examples=8, deadline=None)
@given(
    small,
    st.integers(1, 2),
    st.integers(1, 2),
    small,
    small,
    st.sampled_from([2, 4]),
    st.sampled_from([2, 3]),
    st.booleans(),
)
def test_flex_attention_against_reference(b, hkv, group, lq, s, d, dv, modified):
    inputs = [In([b, hkv * group, lq, d]), In([b, hkv, s, d]), In([b, hkv, s, dv])]
    graphs = {"score_mod": _score_mod()} if modified else None
    check_reference("FlexAttention", inputs, {}, 1, 26, domain="ai.onnx.preview", graphs=graphs)
