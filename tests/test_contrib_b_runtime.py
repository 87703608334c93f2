"""The com.microsoft operators N to Z against onnxruntime (issue 18, part 3b).

Operators the CPU build runs: random valid nodes are run, and every claim inference makes of
them, with concrete input shapes and with every input dim symbolic, is checked against the run
(``tests.support.contrib_node.claims_hold``); concretely every dim must be an integer unless the
output's extent depends on the data. Nodes onnxruntime refuses must be errors of inference too.

Operators it has no kernel for: onnxruntime's own schema inference is asked instead (element
types and the extents it infers); every extent both state must agree, and a node inference
accepts must not be one that schema refuses.

``CONTRIB_B_EXAMPLES`` sets the random nodes per operator (3 in CI; 30 for a longer run).
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Callable

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import infer
import signatures
from infer.core import dims as D
from infer.core import types as T
from infer.core.dimtable import DimTable
from infer.walk.node import parse_value
from signatures.kit.registry import EXAMPLES
from tests.support.contrib_node import (
    MS,
    Case,
    HardwareRefused,
    Refused,
    claims_hold,
    cpu_kernels,
    errors,
    ort_run,
    ort_schema_inference,
    refusal,
    refused_too,
)
from tests.support.hardware import skip_lacking
from tests.support.onenode import In, const

signatures.load_all()
N_EXAMPLES = int(os.environ.get("CONTRIB_B_EXAMPLES", "3"))

F, H, I32, I64, I8, U8 = np.float32, np.float16, np.int32, np.int64, np.int8, np.uint8
Gen = Callable[[np.random.Generator], Case]


def _i(rng: np.random.Generator, lo: int, hi: int) -> int:
    return int(rng.integers(lo, hi + 1))


def _scale() -> In:
    return const(0.05, F)


def _zp(dtype=U8) -> In:
    return const(3 if dtype == U8 else 1, dtype)


# -- generators of valid nodes, one per operator -------------------------------------------------


def pad(rng):
    r = _i(rng, 1, 3)
    x = [_i(rng, 1, 4) for _ in range(r)]
    mode = str(rng.choice(["constant", "reflect", "edge"]))
    lowest = [-(d // 2) if mode == "constant" else 0 for d in x]
    pads = [_i(rng, lo, d - 1 if mode == "reflect" else 3) for lo, d in zip(lowest + lowest, x + x)]
    p = np.array(pads, I64).reshape((1, -1) if rng.random() < 0.3 else (-1,))
    inputs = [In(x), const(p)]  # (onnxruntime's kernel is for float only)
    if mode == "constant" and rng.random() < 0.5:
        inputs.append(const(1.5, inputs[0].dtype))
    return Case("Pad", inputs, {"mode": mode})


def range_ms(rng):
    dtype = rng.choice([I64, I32, np.int16, F, np.float64])
    start = _i(rng, -5, 5)
    limit = start + _i(rng, -2, 9)
    inputs = [const(start, dtype), const(limit, dtype)]
    if rng.random() < 0.5:
        inputs.append(const(rng.choice([1, 2, 3, -1, -2]), dtype))
    if np.issubdtype(dtype, np.floating) and rng.random() < 0.5:
        inputs[1] = const(limit + 0.5, dtype)
    return Case("Range", inputs)


def unique(rng):
    n = _i(rng, 1, 8)
    return Case("Unique", [In([n])], n_out=3, data_dependent=frozenset({0, 2}))


def unfold_tensor(rng):
    r = _i(rng, 1, 4)
    x = [_i(rng, 1, 6) for _ in range(r)]
    dim = _i(rng, -r, r - 1)
    size = _i(rng, 1, x[dim])
    attrs = {"size": size, "dim": dim}
    if rng.random() < 0.7:
        attrs["step"] = _i(rng, 1, 3)
    # (8-bit and bool data: the kernel is registered, and fails)
    return Case("UnfoldTensor", [In(x, rng.choice([F, I64, I32, np.float64]))], attrs)


def sample_op(rng):
    return Case("SampleOp", [In([_i(rng, 1, 4) for _ in range(_i(rng, 0, 3))])])


def sparse_to_dense_matmul(rng):
    m, k, n = _i(rng, 1, 4), _i(rng, 1, 4), _i(rng, 1, 4)
    dtype = rng.choice([F, I64, I32, np.float64])
    ta, tb = (int(rng.random() < 0.3), int(rng.random() < 0.3))
    if ta or tb:  # onnxruntime's schema multiplies untransposed, its kernel transposed: square operands
        m = n = k
    a = [k, m] if ta else [m, k]
    b = [n, k] if tb else [k, n]
    return Case(
        "SparseToDenseMatMul", [In(a, dtype), In(b, dtype)], {"transA": ta, "transB": tb}, sparse=frozenset({0})
    )


def _broadcastable(rng, r: int, n: int = 2) -> list[list[int]]:
    """``n`` shapes that broadcast (numpy rules), of ranks up to ``r``."""
    out = [_i(rng, 1, 4) for _ in range(r)]
    return [[d if rng.random() < 0.7 else 1 for d in out][_i(rng, 0, r) :] for _ in range(n)]


def _pick(rng, options: list):
    return options[_i(rng, 0, len(options) - 1)]


def qlinear_binary(op):
    def gen(rng):
        dt = rng.choice([U8, I8])
        a, b = _broadcastable(rng, 4)
        zp = [None, _zp(dt)] if rng.random() < 0.3 else [_zp(dt), _zp(dt)]
        return Case(op, [In(a, dt), _scale(), zp[1], In(b, dt), _scale(), _zp(dt), _scale(), _zp(dt)])

    return gen


def qlinear_unary(op, attrs=None):
    def gen(rng):
        dt = rng.choice([U8, I8])
        x = [_i(rng, 1, 4) for _ in range(_i(rng, 0, 4))]
        if op == "QLinearSoftmax":
            x = x or [3]
            a = {"opset": int(rng.choice([12, 13])), "axis": _i(rng, -len(x), len(x) - 1)}
        else:
            a = dict(attrs or {})
        return Case(op, [In(x, dt), _scale(), _zp(dt), _scale(), _zp(dt)], a)

    return gen


def qlinear_where(rng):
    dt = rng.choice([U8, I8])
    c, a, b = _broadcastable(rng, 3, 3)
    return Case(
        "QLinearWhere", [In(c, np.bool_), In(a, dt), _scale(), _zp(dt), In(b, dt), _scale(), _zp(dt), _scale(), _zp(dt)]
    )


def qlinear_concat(rng):
    dt = rng.choice([U8, I8])
    r = _i(rng, 1, 4)
    base = [_i(rng, 1, 4) for _ in range(r)]
    axis = _i(rng, -r, r - 1)
    inputs = [_scale(), _zp(dt)]
    for _ in range(_i(rng, 1, 3)):
        s = list(base)
        s[axis] = _i(rng, 1, 4)
        inputs += [In(s, dt), _scale(), _zp(dt)]
    return Case("QLinearConcat", inputs, {"axis": axis})


def qgemm(rng):
    m, k, n = _i(rng, 1, 4), _i(rng, 1, 5), _i(rng, 1, 4)
    ta, tb = int(rng.random() < 0.5), int(rng.random() < 0.5)
    ua = rng.random() < 0.5
    ta_dt, tb_dt = (U8, rng.choice([U8, I8])) if ua else (I8, I8)
    inputs = [
        In([k, m] if ta else [m, k], ta_dt),
        _scale(),
        _zp(ta_dt),
        In([n, k] if tb else [k, n], tb_dt),
        _scale(),
        _zp(tb_dt),
    ]
    inputs.append(In(_pick(rng, [[n], [m, n], [1, n]]), I32) if rng.random() < 0.5 else None)
    if rng.random() < 0.5:
        inputs += [_scale(), _zp(ta_dt)]
    while inputs[-1] is None:
        inputs.pop()
    return Case("QGemm", inputs, {"transA": ta, "transB": tb, "alpha": 0.5})


def qattention(rng):
    b, s, heads, head = _i(rng, 1, 3), _i(rng, 1, 4), _i(rng, 1, 3), int(rng.choice([2, 4]))
    d = _i(rng, 2, 8)
    hidden = heads * head
    inputs = [In([b, s, d], U8), In([d, 3 * hidden], I8), In([3 * hidden]), _scale(), _scale()]
    past = rng.random() < 0.5
    inputs += [In([b], I32) if rng.random() < 0.3 else None, _zp(U8), _zp(I8)]
    if past:
        inputs.append(In([2, b, heads, _i(rng, 1, 3), head]))
    return Case("QAttention", inputs, {"num_heads": heads, "unidirectional": int(past)}, n_out=2 if past else 1)


def qembed_layer_normalization(rng):
    b, s, hidden, vocab = _i(rng, 1, 3), _i(rng, 1, 4), int(rng.choice([4, 8])), 10
    dt = rng.choice([U8, I8])
    ids = const(rng.integers(0, vocab, size=(b, s)), I32)
    seg = rng.random() < 0.5
    inputs = [
        ids,
        const(rng.integers(0, 2, size=(b, s)), I32) if seg else None,
        In([vocab, hidden], dt),
        In([s + _i(rng, 0, 3), hidden], dt),
        In([2, hidden], dt) if seg else None,
        In([hidden], dt),
        In([hidden], dt),
        const(np.ones((b, s)), I32) if rng.random() < 0.5 else None,
        _scale(),
        _scale(),
        _scale() if seg else None,
        _scale(),
        _scale(),
        _zp(dt),
        _zp(dt),
        _zp(dt) if seg else None,
        _zp(dt),
        _zp(dt),
    ]
    return Case("QEmbedLayerNormalization", inputs, n_out=2)


def quantize_linear_ms(rng):
    x = [_i(rng, 1, 4) for _ in range(_i(rng, 1, 4))]
    dt = rng.choice([U8, I8, np.uint16, np.int16])
    if rng.random() < 0.5:
        axis = _i(rng, -len(x), len(x) - 1)
        n = x[axis]
        return Case("QuantizeLinear", [In(x), const(np.full(n, 0.1), F), const(np.zeros(n), dt)], {"axis": axis})
    inputs = [In(x), _scale()] + ([const(0, dt)] if rng.random() < 0.7 else [])
    return Case("QuantizeLinear", inputs)


def quick_gelu(rng):
    return Case("QuickGelu", [In([_i(rng, 1, 4) for _ in range(_i(rng, 0, 4))])], {"alpha": 1.5})


def rotary_embedding_ms(rng):
    b, s, heads, head = _i(rng, 1, 3), _i(rng, 1, 4), _i(rng, 1, 3), int(rng.choice([4, 8]))
    three_d = rng.random() < 0.5
    rot = int(rng.choice([0, head // 2, head])) if head > 4 and three_d else 0
    half = (rot or head) // 2
    m = s + _i(rng, 0, 4)
    dtype = rng.choice([F, H])
    attrs = {"interleaved": int(rng.random() < 0.5)}
    if three_d:
        x = In([b, s, heads * head], dtype)
        attrs["num_heads"] = heads
        if rot:
            attrs["rotary_embedding_dim"] = rot
    else:
        x = In([b, heads, s, head], dtype)
    ids = const(rng.integers(0, m - s + 1, size=(b, s)) if rng.random() < 0.5 else np.array([0]), I64)
    return Case("RotaryEmbedding", [x, ids, In([m, half], dtype), In([m, half], dtype)], attrs)


def skip_layer_normalization(op):
    def gen(rng):
        dtype = rng.choice([F, H])
        hidden = _i(rng, 1, 8)
        lead = [_i(rng, 1, 3), _i(rng, 1, 4)] if rng.random() < 0.7 else [_i(rng, 1, 5)]
        x = lead + [hidden]
        skip = list(x) if len(x) == 2 or rng.random() < 0.5 else _pick(rng, [[1] + x[1:], x[1:]])
        inputs = [In(x, dtype), In(skip, dtype), In([hidden], dtype)]
        if op == "SkipLayerNormalization":
            inputs.append(In([hidden], dtype) if rng.random() < 0.5 else None)
        inputs.append(In([hidden], dtype) if rng.random() < 0.5 else None)
        while inputs[-1] is None:
            inputs.pop()
        n_out = _i(rng, 1, 4)
        omit = frozenset(k for k in range(1, n_out - 1) if rng.random() < 0.3)
        return Case(op, inputs, n_out=n_out, omit=omit)

    return gen


def transpose_matmul(rng):
    batch = [_i(rng, 1, 3) for _ in range(_i(rng, 0, 2))]
    m, k, n = _i(rng, 1, 4), _i(rng, 1, 4), _i(rng, 1, 4)
    ta, tb = int(rng.random() < 0.5), int(rng.random() < 0.5)
    a = batch + ([k, m] if ta else [m, k])
    b = (batch if rng.random() < 0.5 else []) + ([n, k] if tb else [k, n])
    return Case("TransposeMatMul", [In(a), In(b)], {"transA": ta, "transB": tb})


def trilu_ms(rng):
    x = [_i(rng, 1, 4) for _ in range(_i(rng, 2, 4))]
    inputs = [In(x, rng.choice([F, np.float64, I64]))]
    if rng.random() < 0.5:
        inputs.append(const(_i(rng, -3, 3), I64))
    return Case("Trilu", inputs, {"upper": int(rng.random() < 0.5)})


def qlinear_conv(rng):
    n = _i(rng, 1, 2)
    group = _i(rng, 1, 2)
    c, m = group * _i(rng, 1, 2), group * _i(rng, 1, 2)
    k = [_i(rng, 1, 3) for _ in range(n)]
    strides, dil = [_i(rng, 1, 2) for _ in range(n)], [_i(rng, 1, 2) for _ in range(n)]
    pads = [_i(rng, 0, 2) for _ in range(2 * n)]
    x = [d * (kk - 1) + 1 - pads[i] - pads[i + n] + _i(rng, 0, 4) for i, (d, kk) in enumerate(zip(dil, k))]
    x = [max(v, 1) for v in x]
    last = int(rng.random() < 0.5)
    xs = [1, *x, c] if last else [1, c, *x]
    signed = rng.random() < 0.4
    xt, wt = (I8, I8) if signed else (U8, rng.choice([U8, I8]))
    inputs = [In(xs, xt), _scale(), _zp(xt), In([m, c // group, *k], wt), _scale(), _zp(wt), _scale(), _zp(xt)]
    if rng.random() < 0.5:
        inputs.append(In([m], I32))
    attrs = {"group": group, "strides": strides, "dilations": dil, "pads": pads, "channels_last": last}
    return Case("QLinearConv", inputs, attrs)


def _pool_attrs(rng, n: int, dilations: bool) -> tuple[list[int], dict]:
    k = [_i(rng, 1, 3) for _ in range(n)]
    attrs: dict = {"kernel_shape": k, "strides": [_i(rng, 1, 3) for _ in range(n)]}
    if rng.random() < 0.3:
        attrs["auto_pad"] = str(rng.choice(["SAME_UPPER", "SAME_LOWER", "VALID"]))
    else:
        attrs["pads"] = [_i(rng, 0, kk - 1) for kk in k + k]
    if rng.random() < 0.4:
        attrs["ceil_mode"] = 1
    if dilations and rng.random() < 0.4 and attrs.get("auto_pad", "NOTSET") not in ("SAME_UPPER", "SAME_LOWER"):
        attrs["dilations"] = [_i(rng, 1, 2) for _ in range(n)]
    d, p = attrs.get("dilations", [1] * n), attrs.get("pads", [0] * 2 * n)
    # Windows that fit (short ones: tests/test_flags_runtime.py, tests/test_windows.py).
    x = [max(1, dd * (kk - 1) + 1 - p[i] - p[i + n] + _i(rng, 0, 4)) for i, (dd, kk) in enumerate(zip(d, k))]
    return x, attrs


def qlinear_average_pool(rng):
    n = _i(rng, 1, 3)
    x, attrs = _pool_attrs(rng, n, dilations=False)
    last = int(rng.random() < 0.5)
    dt = rng.choice([U8, I8])
    c = _i(rng, 1, 3)
    attrs["channels_last"] = last
    attrs["count_include_pad"] = int(rng.random() < 0.5)
    return Case(
        "QLinearAveragePool", [In([1, *x, c] if last else [1, c, *x], dt), _scale(), _zp(dt), _scale(), _zp(dt)], attrs
    )


def qlinear_global_average_pool(rng):
    dt = rng.choice([U8, I8])
    x = [_i(rng, 1, 4) for _ in range(_i(rng, 3, 5))]
    return Case(
        "QLinearGlobalAveragePool",
        [In(x, dt), _scale(), _zp(dt), _scale(), _zp(dt)],
        {"channels_last": int(rng.random() < 0.5)},
    )


def nhwc_max_pool(rng):
    n = _i(rng, 1, 3)
    x, attrs = _pool_attrs(rng, n, dilations=True)
    return Case("NhwcMaxPool", [In([_i(rng, 1, 2), *x, _i(rng, 1, 3)], rng.choice([U8, I8]))], attrs)


def scaled_silu(rng):
    dt = rng.choice([F, H])
    inputs = [In([_i(rng, 1, 4) for _ in range(_i(rng, 0, 4))], dt)]
    if rng.random() < 0.5:
        inputs.append(const(1.5, rng.choice([F, H])))
    return Case("ScaledSiLU", inputs, {"alpha": 0.7})


def qmoe(rng):
    experts, hidden, inter = _i(rng, 1, 4), int(rng.choice([16, 32])), int(rng.choice([16, 32]))
    bits = int(rng.choice([4, 8]))
    dt = rng.choice([F, H])
    lead = [_i(rng, 1, 4)] if rng.random() < 0.5 else [_i(rng, 1, 2), _i(rng, 1, 3)]
    tokens = int(np.prod(lead))
    fuse = rng.random() < 0.3
    width = 2 * inter if fuse else inter
    pack = 8 // bits
    inputs = [
        In([*lead, hidden], dt),
        In([tokens, experts], dt),
        In([experts, width, hidden // pack], U8),
        In([experts, width], dt),
        None,
        In([experts, hidden, inter // pack], U8),
        In([experts, hidden], dt),
    ]
    attrs = {"k": _i(rng, 1, experts), "expert_weight_bits": bits}
    if fuse:
        attrs.update(activation_type="swiglu", swiglu_fusion=1)
    return Case("QMoE", inputs, attrs)


def sparse_attention(rng):
    b, s, kv, group = _i(rng, 1, 2), _i(rng, 1, 3), _i(rng, 1, 2), _i(rng, 1, 2)
    n, head, block = kv * group, int(rng.choice([8, 16])), 16
    m = block * _i(rng, 1, 3)
    dt = rng.choice([F, H])
    nb = m // block
    rows = const(np.array([list(range(nb + 1))]), I32)
    cols = const(np.array([list(range(nb))]), I32)
    past = [In([b, kv, m, head], dt), In([b, kv, m, head], dt)]
    tail = [rows, cols, const(s, I32), const(np.full(b, s), I32)]
    if rng.random() < 0.5:
        inputs = [In([b, s, (n + 2 * kv) * head], dt), None, None, *past, *tail]
    else:
        inputs = [In([b, s, n * head], dt), In([b, s, kv * head], dt), In([b, s, kv * head], dt), *past, *tail]
    attrs = {"num_heads": n, "kv_num_heads": kv, "sparse_block_size": block}
    # The kernel writes the caches in place: present_key and present_value are past's buffers.
    return Case("SparseAttention", inputs, attrs, n_out=3, shared=((3, 1), (4, 2)))


def _ngram_inputs(rng, ids_shape, dt):
    n, heads = _i(rng, 2, 4), _i(rng, 1, 3)
    width = (n - 1) * heads
    mult = const(rng.integers(1, 50, size=n + _i(rng, 0, 2)) * 2 + 1, dt)
    voc = const(rng.integers(5, 40, size=width), dt)
    ids = const(rng.integers(0, 30, size=ids_shape), dt)
    return n, width, [ids, mult, voc], {"pad_id": 0, "n_head_per_ngram": heads, "max_ngram_size": n}


def ngram_hash_mapping(rng):
    b, s = _i(rng, 1, 3), _i(rng, 1, 5)
    dt = rng.choice([I32, I64])
    n, width, inputs, attrs = _ngram_inputs(rng, (b, s), dt)
    extra = [
        const(rng.integers(0, 9, size=(b, n - 1)), dt) if rng.random() < 0.5 else None,
        const(rng.integers(0, 9, size=width), dt) if rng.random() < 0.5 else None,
        const(3, dt) if rng.random() < 0.5 else None,
        const(rng.integers(0, 2, size=(b, s)), I32) if rng.random() < 0.5 else None,
    ]
    inputs += extra
    while inputs[-1] is None:
        inputs.pop()
    return Case("NGramHashMapping", inputs, attrs, n_out=_i(rng, 1, 2))


def _lengths(rng, b: int) -> tuple[int, np.ndarray]:
    counts = rng.integers(1, 4, size=b)
    return int(counts.sum()), np.concatenate([[0], np.cumsum(counts)]).astype(I32)


def varlen_ngram_hash_mapping(rng):
    b = _i(rng, 1, 3)
    t, cum = _lengths(rng, b)
    dt = rng.choice([I32, I64])
    n, _, inputs, attrs = _ngram_inputs(rng, (t,), dt)
    cap = _i(rng, 0, 3)
    segments = rng.random() < 0.5
    inputs += [
        const(cum, I32),
        const(rng.integers(0, 9, size=(b, n - 1)), dt) if rng.random() < 0.5 else None,
        None,
        None,
        const(rng.integers(0, 2, size=t), I32) if segments else None,
        const(rng.integers(0, 2, size=(b, n - 1)), I32) if segments and rng.random() < 0.5 else None,
        const(np.full(b, 1), I32) if cap else None,
    ]
    while inputs[-1] is None:
        inputs.pop()
    attrs["state_update_capacity"] = cap
    n_out = 4 if cap else _i(rng, 1, 3)
    omit = frozenset() if segments or n_out < 3 else frozenset({2})
    return Case("VarlenNGramHashMapping", inputs, attrs, n_out=n_out, omit=omit)


def varlen_causal_conv_with_state(rng):
    b, c, k, d = _i(rng, 1, 3), _i(rng, 1, 4), _i(rng, 1, 4), _i(rng, 1, 2)
    t, cum = _lengths(rng, b)
    dt = rng.choice([F, H])
    cap = _i(rng, 0, 3)
    inputs = [
        In([t, c], dt),
        In([c, 1, k], dt),
        const(cum, I32),
        In([c], dt) if rng.random() < 0.5 else None,
        In([b, c, (k - 1) * d], dt),
        const(np.full(b, 1), I32) if cap else None,
    ]
    while inputs[-1] is None:
        inputs.pop()
    attrs = {"dilation": d, "state_update_capacity": cap, "activation": str(rng.choice(["none", "silu"]))}
    return Case("VarlenCausalConvWithState", inputs, attrs, n_out=3 if cap else 2)


def ngram_repeat_block(rng):
    b, s, v = _i(rng, 1, 3), _i(rng, 1, 6), _i(rng, 2, 9)
    ids = const(rng.integers(0, v, size=(b, s)), I64)
    return Case("NGramRepeatBlock", [ids, In([b, v])], {"ngram_size": _i(rng, 1, 3)})


_WORDS = ["a", "bc", "def", "gh ij", "k l m n", "", "opq rs"]


def tokenizer(rng):
    shape = [_i(rng, 1, 3)] if rng.random() < 0.5 else [_i(rng, 1, 2), _i(rng, 1, 3)]
    words = np.array([_WORDS[_i(rng, 0, len(_WORDS) - 1)] for _ in range(int(np.prod(shape)))], dtype=object)
    attrs = {"mark": int(rng.random() < 0.5), "pad_value": "#", "mincharnum": 1, "separators": [" "]}
    return Case("Tokenizer", [const(words.reshape(shape), object)], attrs, data_dependent=frozenset({0}))


def word_conv_embedding(rng):
    words, chars, emb, vocab = _i(rng, 1, 4), _i(rng, 2, 6), _i(rng, 1, 5), 9
    window, dim = _i(rng, 1, 2), _i(rng, 1, 4)
    seq = const(rng.integers(0, vocab, size=(words, chars)), I32)
    inputs = [seq, In([emb, 1, window, dim]), In([emb]), In([vocab, dim])]
    attrs = (
        {"embedding_size": emb, "conv_window_size": window, "char_embedding_size": dim} if rng.random() < 0.5 else {}
    )
    return Case("WordConvEmbedding", inputs, attrs)


# -- generation loops: decoder subgraphs of the shapes onnxruntime's kernels check ---------------


def _heads_of(name: str, table: str, weights: np.ndarray, heads: int, head: int, matmul: bool = False) -> list:
    """Nodes giving ``name`` (B, heads, L, head) from ``table`` (token ids, or hidden states)."""
    pre = name + "_"
    first = (
        helper.make_node("MatMul", [table, pre + "w"], [pre + "g"])
        if matmul
        else helper.make_node("Gather", [pre + "w", table], [pre + "g"])
    )
    return [
        helper.make_node("Constant", [], [pre + "w"], value=numpy_helper.from_array(weights)),
        first,
        helper.make_node("Constant", [], [pre + "s"], value=numpy_helper.from_array(np.array([0, 0, heads, head]))),
        helper.make_node("Reshape", [pre + "g", pre + "s"], [pre + "r"]),
        helper.make_node("Transpose", [pre + "r"], [name], perm=[0, 2, 1, 3]),
    ]


def _embedding(vocab: int, seed: int) -> list:
    table = np.random.default_rng(seed).standard_normal((vocab, vocab)).astype(F)
    return [helper.make_node("Constant", [], ["E"], value=numpy_helper.from_array(table))]


def gpt_decoder(vocab: int, heads: int = 2, head: int = 4) -> onnx.GraphProto:
    """GPT-2's decoder interface: ids, positions, mask and one layer's past in; logits and present out."""
    kv = np.ones((vocab, 2 * heads * head), F)
    nodes = _embedding(vocab, 0) + [
        helper.make_node("Gather", ["E", "input_ids"], ["logits"]),
        helper.make_node("Constant", [], ["kvw"], value=numpy_helper.from_array(kv)),
        helper.make_node("Gather", ["kvw", "input_ids"], ["kvg"]),
        helper.make_node("Constant", [], ["shp"], value=numpy_helper.from_array(np.array([0, 0, 2, heads, head]))),
        helper.make_node("Reshape", ["kvg", "shp"], ["kvr"]),
        helper.make_node("Transpose", ["kvr"], ["kvt"], perm=[2, 0, 3, 1, 4]),
        helper.make_node("Concat", ["past_0", "kvt"], ["present_0"], axis=3),
    ]
    ints = TensorProto.INT32
    inputs = [
        helper.make_tensor_value_info(n, ints, ["B", d])
        for n, d in (("input_ids", "S"), ("position_ids", "S"), ("attention_mask", "T"))
    ]
    inputs.append(helper.make_tensor_value_info("past_0", TensorProto.FLOAT, [2, "B", heads, "P", head]))
    outputs = [
        helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["B", "S", vocab]),
        helper.make_tensor_value_info("present_0", TensorProto.FLOAT, [2, "B", heads, "T", head]),
    ]
    return helper.make_graph(nodes, "decoder", inputs, outputs)


def whisper_graphs(vocab: int, features: int, heads: int = 2, head: int = 4) -> dict[str, onnx.GraphProto]:
    """Whisper's encoder (features and start ids in; logits, hidden states, self and cross caches
    out) and decoder (one token and the caches in; logits and the self caches out)."""
    w = np.ones((vocab, heads * head), F)
    x = np.ones((features, heads * head), F)
    enc = _embedding(vocab, 1) + [
        helper.make_node("Gather", ["E", "decoder_input_ids"], ["logits"]),
        helper.make_node("Transpose", ["encoder_input_ids"], ["encoder_hidden_states"], perm=[0, 2, 1]),
        *_heads_of("present_key_self_0", "decoder_input_ids", w, heads, head),
        *_heads_of("present_value_self_0", "decoder_input_ids", w, heads, head),
        *_heads_of("present_key_cross_0", "encoder_hidden_states", x, heads, head, matmul=True),
        *_heads_of("present_value_cross_0", "encoder_hidden_states", x, heads, head, matmul=True),
    ]
    fl = TensorProto.FLOAT
    caches = [
        helper.make_tensor_value_info(
            f"present_{kind}_{side}_0", fl, ["B", heads, "L" if side == "self" else "F", head]
        )
        for side in ("self", "cross")
        for kind in ("key", "value")
    ]
    encoder = helper.make_graph(
        enc,
        "encoder",
        [
            helper.make_tensor_value_info("encoder_input_ids", fl, ["B", features, "F"]),
            helper.make_tensor_value_info("decoder_input_ids", TensorProto.INT32, ["B", "L"]),
        ],
        [
            helper.make_tensor_value_info("logits", fl, ["B", "L", vocab]),
            helper.make_tensor_value_info("encoder_hidden_states", fl, ["B", "F", features]),
            *caches,
        ],
    )
    dec = _embedding(vocab, 2) + [
        helper.make_node("Gather", ["E", "input_ids"], ["logits"]),
        *_heads_of("new_key", "input_ids", w, heads, head),
        *_heads_of("new_value", "input_ids", w, heads, head),
        helper.make_node("Concat", ["past_key_self_0", "new_key"], ["present_key_self_0"], axis=2),
        helper.make_node("Concat", ["past_value_self_0", "new_value"], ["present_value_self_0"], axis=2),
    ]
    pasts = [
        helper.make_tensor_value_info(f"past_{kind}_{side}_0", fl, ["B", heads, "P" if side == "self" else "F", head])
        for side in ("self", "cross")
        for kind in ("key", "value")
    ]
    decoder = helper.make_graph(
        dec,
        "decoder",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT32, ["B", 1]),
            helper.make_tensor_value_info("encoder_hidden_states", fl, ["B", "F", features]),
            *pasts,
        ],
        [
            helper.make_tensor_value_info("logits", fl, ["B", 1, vocab]),
            *[
                helper.make_tensor_value_info(f"present_{k}_self_0", fl, ["B", heads, "T", head])
                for k in ("key", "value")
            ],
        ],
    )
    return {"encoder": encoder, "decoder": decoder}


def sampling(rng):
    vocab, b, s = _i(rng, 4, 9), _i(rng, 1, 3), _i(rng, 1, 3)
    ids = const(rng.integers(0, vocab, size=(b, s)), I32)
    inputs = [ids, const([s + _i(rng, 1, 5)], I32)]
    if rng.random() < 0.5:
        inputs += [None, None, const(np.ones(vocab), I32)]
    attrs = {"eos_token_id": _i(rng, 0, vocab - 1), "pad_token_id": 0, "model_type": 0}
    if rng.random() < 0.5:
        attrs["vocab_size"] = vocab
    return Case("Sampling", inputs, attrs, graphs={"decoder": gpt_decoder(vocab)})


def whisper_beam_search(rng):
    vocab, b, features, frames = _i(rng, 4, 9), _i(rng, 1, 3), _i(rng, 1, 4), _i(rng, 1, 5)
    beams = _i(rng, 1, 3)
    # (A single step, max_length = prompt + 1, fails inside onnxruntime's loop: not generated.)
    inputs = [
        In([b, features, frames]),
        const([_i(rng, 3, 8)], I32),
        const([1], I32),
        const([beams], I32),
        const([_i(rng, 1, beams)], I32),
        const([1.0], F),
        const([1.0], F),
    ]
    if rng.random() < 0.5:  # a decoder prompt (onnxruntime aborts on some other optional inputs)
        prompt = _i(rng, 1, 2)
        inputs[1] = const([prompt + _i(rng, 2, 6)], I32)
        inputs += [None, None, None, const(rng.integers(1, vocab, size=(b, prompt)), I32)]
    attrs = {"eos_token_id": vocab - 1, "pad_token_id": 0, "decoder_start_token_id": 1, "model_type": 2}
    return Case("WhisperBeamSearch", inputs, attrs, n_out=3, graphs=whisper_graphs(vocab, features))


GENERATORS: dict[str, Gen] = {
    "Pad": pad,
    "Range": range_ms,
    "Unique": unique,
    "UnfoldTensor": unfold_tensor,
    "SampleOp": sample_op,
    "SparseToDenseMatMul": sparse_to_dense_matmul,
    "QLinearAdd": qlinear_binary("QLinearAdd"),
    "QLinearMul": qlinear_binary("QLinearMul"),
    "QLinearSigmoid": qlinear_unary("QLinearSigmoid"),
    "QLinearLeakyRelu": qlinear_unary("QLinearLeakyRelu", {"alpha": 0.2}),
    "QLinearSoftmax": qlinear_unary("QLinearSoftmax"),
    "QLinearWhere": qlinear_where,
    "QLinearConcat": qlinear_concat,
    "QGemm": qgemm,
    "QAttention": qattention,
    "QEmbedLayerNormalization": qembed_layer_normalization,
    "QuantizeLinear": quantize_linear_ms,
    "QuickGelu": quick_gelu,
    "RotaryEmbedding": rotary_embedding_ms,
    "SkipLayerNormalization": skip_layer_normalization("SkipLayerNormalization"),
    "SkipSimplifiedLayerNormalization": skip_layer_normalization("SkipSimplifiedLayerNormalization"),
    "TransposeMatMul": transpose_matmul,
    "Trilu": trilu_ms,
    "QLinearConv": qlinear_conv,
    "QLinearAveragePool": qlinear_average_pool,
    "QLinearGlobalAveragePool": qlinear_global_average_pool,
    "NhwcMaxPool": nhwc_max_pool,
    "ScaledSiLU": scaled_silu,
    "QMoE": qmoe,
    "SparseAttention": sparse_attention,
    "NGramHashMapping": ngram_hash_mapping,
    "VarlenNGramHashMapping": varlen_ngram_hash_mapping,
    "VarlenCausalConvWithState": varlen_causal_conv_with_state,
    "NGramRepeatBlock": ngram_repeat_block,
    "Tokenizer": tokenizer,
    "WordConvEmbedding": word_conv_embedding,
    "Sampling": sampling,
    "WhisperBeamSearch": whisper_beam_search,
}

# -- operators without a CPU kernel: generators for onnxruntime's schema inference ---------------


def _bf16():
    import ml_dtypes  # onnx's dependency: numpy has no bfloat16

    return ml_dtypes.bfloat16


def s_conv(op):
    def gen(rng):
        n = _i(rng, 1, 2)
        group = _i(rng, 1, 2)
        c, m = group * _i(rng, 1, 2), group * _i(rng, 1, 2)
        k = [_i(rng, 1, 3) for _ in range(n)]
        strides, pads = [_i(rng, 1, 2) for _ in range(n)], [_i(rng, 0, 1) for _ in range(2 * n)]
        x = [kk - pads[i] - pads[i + n] + _i(rng, 0, 4) for i, kk in enumerate(k)]
        x = [max(v, 1) for v in x]
        w = [m, *k, c // group] if op == "NhwcConv" else [m, c // group, *k]
        inputs = [In([_i(rng, 1, 2), *x, c]), In(w), In([m]) if rng.random() < 0.5 else None]
        while inputs[-1] is None:
            inputs.pop()
        return Case(op, inputs, {"group": group, "strides": strides, "pads": pads})

    return gen


def s_packed_attention(rng):
    t, d, heads, head = _i(rng, 1, 9), _i(rng, 2, 16), _i(rng, 1, 4), _i(rng, 1, 8)
    sizes = [heads * head, heads * head, heads * _i(rng, 1, 8)]
    attrs: dict = {"num_heads": heads}
    if rng.random() < 0.5:
        attrs["qkv_hidden_sizes"] = sizes
    else:
        sizes = [sizes[0]] * 3
    w = sum(sizes)
    return Case("PackedAttention", [In([t, d]), In([d, w]), In([w]), In([2, 4], I32), In([3], I32)], attrs)


def s_packed_mha(rng):
    t, heads, head = _i(rng, 1, 9), _i(rng, 1, 4), _i(rng, 1, 8)
    if rng.random() < 0.5:
        inputs = [In([t, heads, 3, head]), None, None, None]
    else:
        inputs = [In([t, heads * head]), In([t, heads * head]), In([t, heads * _i(rng, 1, 8)]), None]
    return Case("PackedMultiHeadAttention", [*inputs, In([2, 4], I32), In([3], I32)], {"num_heads": heads})


def _paged_common(rng):
    t, kv, group, head = _i(rng, 1, 9), _i(rng, 1, 2), _i(rng, 1, 3), 8 * _i(rng, 1, 2)
    n = kv * group
    cache = [_i(rng, 2, 6), 16, kv, head]
    packed = rng.random() < 0.5
    q = In([t, (n + 2 * kv) * head], H) if packed else In([t, n * head], H)
    kvs = [None, None] if packed else [In([t, kv * head], H), In([t, kv * head], H)]
    return t, n, kv, [q, *kvs, In(cache, H), In(cache, H), In([3], I32), In([2], I32), In([2, 4], I32)]


def s_paged_attention(rng):
    """SEPARATE caches or a LATENT one; v_head_size at times written as its default, 0 (issue 26)."""
    if rng.random() < 0.3:
        return _paged_latent(rng)
    _, n, kv, inputs = _paged_common(rng)
    attrs = {"num_heads": n, "kv_num_heads": kv}
    if rng.random() < 0.3:
        attrs["v_head_size"] = 0
    return Case("PagedAttention", inputs, attrs, n_out=int(rng.choice([1, 3])))


def _paged_latent(rng):
    """One latent cache row per token; V is its leading v_head_size channels (0: all of them)."""
    t, n, head = _i(rng, 1, 9), _i(rng, 1, 4), 8 * _i(rng, 1, 4)
    v_head = 8 * _i(rng, 0, head // 8)
    cache = [_i(rng, 2, 6), 16, 1, head]
    inputs = [
        In([t, n * head], H),
        In([t, head], H),
        None,
        In(cache, H),
        None,
        In([3], I32),
        In([2], I32),
        In([2, 4], I32),
    ]
    attrs = {"num_heads": n, "kv_num_heads": 1, "kv_cache_layout": "LATENT"}
    if v_head or rng.random() < 0.5:
        attrs["v_head_size"] = v_head
    if v_head not in (0, head):
        attrs["scale"] = 0.125  # the schema asks for it where the widths differ
    return Case("PagedAttention", inputs, attrs, n_out=int(rng.choice([1, 2])))


def s_sparse_paged_attention(rng):
    t, n, kv, inputs = _paged_common(rng)
    inputs += [None, In([t, _i(rng, 1, 6)], I32), In([t], I32)]
    return Case("SparsePagedAttention", inputs, {"num_heads": n, "kv_num_heads": kv}, n_out=int(rng.choice([1, 3])))


def s_sparse_attention_indexer(rng):
    b, s, heads, head, past = _i(rng, 1, 3), _i(rng, 1, 5), _i(rng, 1, 4), 8, _i(rng, 1, 6)
    ratio = _i(rng, 1, 4)
    common = [
        In([b, s, heads * head]),
        None,
        In([head]),
        In([head]),
        In([20, 4]),
        In([20, 4]),
        None,
        In([b, past, head]),
    ]
    if rng.random() < 0.5:
        common[1] = In([b, s, head])
        if rng.random() < 0.5:
            common += [None, None, None, None, const([past], I32)]
        attrs = {"policy_mode": "qsa", "compress_ratio": ratio, "token_budget": ratio * _i(rng, 1, 3)}
        return Case("SparseAttentionIndexer", common, attrs, n_out=2)
    common[1] = In([b, s, 2 * head])
    common[4:6] = [In([20, 2]), In([20, 2])]
    common += [
        In([b, s, 2 * head]),
        In([ratio, 2 * head]),
        In([b, s, heads]),
        In([b, s], I64),
        None,
        In([2, b, _i(rng, 0, 2 * ratio - 1), 2 * head]),
    ]
    attrs = {"policy_mode": "csa", "compress_ratio": ratio, "index_topk": _i(rng, 1, 4)}
    return Case("SparseAttentionIndexer", common, attrs, n_out=3)


def s_packed_sparse_attention_indexer(rng):
    t, b, heads, head, ratio, cap = _i(rng, 1, 9), _i(rng, 1, 3), _i(rng, 1, 4), 8, _i(rng, 1, 3), _i(rng, 1, 8)
    common = [
        In([t, heads * head]),
        In([t, head]),
        In([head]),
        In([head]),
        In([20, 4]),
        In([20, 4]),
        In([b + 1], I32),
        In([b], I32),
        None,
        None,
        None,
        None,
        In([b, cap, head]),
        In([b, 2 * ratio - 1, head]),
        None,
        In([b, 2], I32),
    ]
    attrs = {"compress_ratio": ratio, "state_capacity": cap}
    if rng.random() < 0.5:
        update = _i(rng, 0, 3)
        if update:
            common.append(In([b], I32))
        attrs.update(policy_mode="qsa", token_budget=ratio * _i(rng, 1, 3), state_update_capacity=update)
        case = Case("PackedSparseAttentionIndexer", common, attrs, n_out=7 if update else 6, omit=frozenset({4}))
    else:
        common[1] = In([t, 2 * head])
        common[8:12] = [In([t, 2 * head]), In([ratio, 2 * head]), In([t, heads]), In([t], I64)]
        common[13] = In([b, 2 * ratio - 1, 2 * head])
        common[14] = In([b, 2 * ratio - 1, 2 * head])
        attrs.update(policy_mode="csa", index_topk=_i(rng, 1, 4))
        case = Case("PackedSparseAttentionIndexer", common, attrs, n_out=9, omit=frozenset({6, 7}))
    return _index_share(rng, case, b) if rng.random() < 0.3 else case


def _index_share(rng, case: Case, b: int) -> Case:
    """The IndexShare form: max_output_entries wide merged inputs (one row per request, or none)
    and the indexshare_status output."""
    a = case.attrs
    selected = a["token_budget"] + a["compress_ratio"] - 1 if a["policy_mode"] == "qsa" else a["index_topk"]
    width = selected + _i(rng, 0, 3)  # at least the selection's width
    rows = b if rng.random() < 0.7 else 0
    inputs = list(case.inputs) + [None] * (18 - len(case.inputs))
    inputs += [const([_i(rng, 0, 1)], I32), In([rows, width], I32), In([rows], I32), In([rows], I32)]
    omit = {4} if case.attrs["policy_mode"] == "qsa" else {6}
    if case.attrs["policy_mode"] == "qsa" and not case.attrs["state_update_capacity"]:
        omit.add(6)
    attrs = {**case.attrs, "max_output_entries": width}
    return Case(case.op, inputs, attrs, n_out=9, omit=frozenset(omit))


def s_packed_sparse_attention_indexer_merge(rng):
    r, c, n, width = _i(rng, 1, 4), _i(rng, 1, 5), _i(rng, 1, 7), _i(rng, 1, 9)
    base = [In([r, c], I32), In([r], I32), In([n], I32)]
    if rng.random() < 0.5:
        return Case(
            "PackedSparseAttentionIndexerMerge",
            [*base, In([n], I32), In([n], I32)],
            {"policy_mode": "append_range", "max_output_entries": width},
            n_out=3,
        )
    return Case(
        "PackedSparseAttentionIndexerMerge",
        [*base, None, None, In([n, _i(rng, 1, 4)], I32), In([n], I32)],
        {"policy_mode": "append_indices", "max_output_entries": width},
        n_out=3,
    )


def _q8(shape):
    return In(shape, I8)


def s_qordered(op):
    def gen(rng):
        sc = const(1.0, F)
        b, s, hidden = _i(rng, 1, 3), _i(rng, 1, 4), 8 * _i(rng, 1, 3)
        if op == "QuantizeWithOrder":
            return Case(
                op,
                [In([_i(rng, 1, 4) for _ in range(_i(rng, 1, 3))]), sc],
                {"order_input": 1, "order_output": int(rng.choice([1, 2]))},
            )
        if op == "QOrderedGelu":
            return Case(op, [_q8([_i(rng, 1, 4) for _ in range(_i(rng, 1, 3))]), sc, sc])
        if op == "QOrderedLayerNormalization":
            return Case(op, [_q8([b, s, hidden]), sc, In([hidden], H), In([hidden], H), sc])
        if op == "QOrderedMatMul":
            k, n = _i(rng, 1, 5), _i(rng, 1, 5)
            a = [b, s, k] if rng.random() < 0.7 else [s, k]
            w = [k, n] if rng.random() < 0.7 else [b, k, n]
            return Case(op, [_q8(a), sc, _q8(w), sc, sc], {"order_A": 1, "order_B": 0, "order_Y": 1})
        if op == "QOrderedAttention":
            heads = _i(rng, 1, 2)
            w = [_q8([hidden, hidden]) for _ in range(3)]
            inputs = [
                _q8([b, s, hidden]),
                sc,
                sc,
                sc,
                sc,
                *w,
                sc,
                sc,
                sc,
                In([hidden]),
                In([hidden]),
                In([hidden]),
                sc,
                sc,
                sc,
            ]
            return Case(op, inputs, {"num_heads": heads, "order_input": 1, "order_output": 1, "order_weight": 0})
        inputs = [
            _q8([b, s, hidden]),
            sc,
            _q8([hidden, 3 * hidden]),
            sc,
            In([3 * hidden]),
            sc,
            sc,
            In([b, s], H),
            _q8([hidden, 3 * hidden]),
            sc,
            In([3 * hidden]),
            sc,
            In([b, s], I32),
            sc,
        ]
        attrs = {
            "num_heads": 2,
            "window": 2,
            "order_input": 1,
            "order_output": 1,
            "order_weight": 0,
            "order_global_weight": 0,
        }
        return Case(op, inputs, attrs)

    return gen


def s_quantize_bfp(rng):
    return Case("QuantizeBFP", [In([_i(rng, 1, 5) for _ in range(_i(rng, 1, 4))])], {"bfp_type": 1}, n_out=3)


def s_rms_norm_rotary(rng):
    b, s, heads, stride = _i(rng, 1, 3), _i(rng, 1, 4), _i(rng, 1, 4), 8 * _i(rng, 1, 3)
    start = int(rng.choice([0, 0, 2]))
    width = int(rng.choice([0, stride - start - 2, stride - start])) if stride - start - 2 > 0 else 0
    eff = width or stride
    rot = 2 * _i(rng, 1, min(eff - start if not width else eff, 8) // 2)
    dt = _bf16() if rng.random() < 0.5 else H
    attrs = {
        "rotary_embedding_dim": rot,
        "input_start": start,
        "input_width": width,
        "output_fp16": int(rng.random() < 0.5),
        "flatten_batch": int(rng.random() < 0.5),
    }
    if start + eff > stride:
        attrs["input_start"] = 0
    pos = In([b, s], I64) if rng.random() < 0.5 else In([1], I64)
    cos = In([20, rot // 2], _bf16())
    return Case("RMSNormRotary", [In([b, s, heads, stride], dt), In([eff]), pos, cos, cos], attrs, n_out=_i(rng, 1, 2))


def s_reduce(op):
    def gen(rng):
        x = [_i(rng, 1, 4) for _ in range(_i(rng, 1, 4))]
        axes = sorted({_i(rng, -len(x), len(x) - 1) % len(x) for _ in range(_i(rng, 1, len(x)))})
        attrs = {"axes": axes, "keepdims": int(rng.random() < 0.5)}
        if op == "ReduceSumInteger":
            return Case(op, [In(x, I8)], attrs)
        return Case(op, [In(x, U8), _scale(), _zp(), _scale(), _zp()], attrs)

    return gen


def s_relative_position_bias(rng):
    q = _i(rng, 1, 6)
    return Case(
        "RelativePositionBias",
        [In([32, _i(rng, 1, 8)]), const(q, I64), const(q, I64)],
        {"max_distance": 16, "is_bidirectional": int(rng.random() < 0.5)},
    )


def s_remove_padding(rng):
    b = _i(rng, 1, 3)
    return Case("RemovePadding", [In([b, _i(rng, 1, 5), _i(rng, 1, 8)]), In([b], I32)], n_out=4)


def s_restore_padding(rng):
    return Case("RestorePadding", [In([_i(rng, 1, 9), _i(rng, 1, 8)]), In([_i(rng, 1, 3), _i(rng, 1, 5)], I32)])


def s_router_gate_up_proj(rng):
    k, router, inter = _i(rng, 1, 8), _i(rng, 1, 8), _i(rng, 1, 8)
    lead = [_i(rng, 1, 3) for _ in range(_i(rng, 0, 2))]
    return Case(
        "RouterGateUpProj", [In([*lead, k], H), In([k, router + 2 * inter], H)], {"router_size": router}, n_out=2
    )


def s_skip_group_norm(rng):
    n, h, w, groups = _i(rng, 1, 2), _i(rng, 1, 4), _i(rng, 1, 4), _i(rng, 1, 4)
    c = groups * _i(rng, 1, 3)
    skip = [n, h, w, c] if rng.random() < 0.5 else [n, 1, 1, c]
    inputs = [In([n, h, w, c]), In([c]), In([c]), In(skip), In([c]) if rng.random() < 0.5 else None]
    while inputs[-1] is None:
        inputs.pop()
    return Case("SkipGroupNorm", inputs, {"groups": groups, "activation": 0}, n_out=_i(rng, 1, 2))


def s_speculative_prefix_commit(rng):
    b, rows = _i(rng, 1, 3), _i(rng, 3, 8)
    one = b == 1 and rng.random() < 0.5
    shape = (lambda *d: [int(np.prod(d))]) if one else (lambda *d: list(d))
    inputs = [
        In(shape(b, rows), I64),
        In(shape(b, rows), I64),
        In([4], I32),
        In(shape(b, 16), I64),
        In(shape(b, 2), I64),
        In(shape(b, 2 * rows), I64),
        In([2], I64),
    ]
    return Case("SpeculativePrefixCommit", inputs, {"head_rows": rows}, n_out=3)


def s_swiglu(rng):
    x = [_i(rng, 1, 4) for _ in range(_i(rng, 0, 2))] + [2 * _i(rng, 1, 4)]
    dt = rng.choice([F, H])
    return Case("SwiGLU", [In(x, dt), In(x, dt)] if rng.random() < 0.5 else [In(x, dt)])


def s_torch_embedding(rng):
    idx = [_i(rng, 1, 4) for _ in range(_i(rng, 0, 3))]
    return Case("TorchEmbedding", [In([_i(rng, 2, 9), _i(rng, 1, 8)]), In(idx, I64)])


def s_rfft(rng):
    x = [_i(rng, 1, 4) for _ in range(_i(rng, 0, 2))] + [2 * _i(rng, 1, 4)]
    return Case("Rfft", [In(x)])


SCHEMA_GENERATORS: dict[str, Gen] = {
    "NhwcConv": s_conv("NhwcConv"),
    "NhwcFusedConv": s_conv("NhwcFusedConv"),
    "PackedAttention": s_packed_attention,
    "PackedMultiHeadAttention": s_packed_mha,
    "PagedAttention": s_paged_attention,
    "SparsePagedAttention": s_sparse_paged_attention,
    "SparseAttentionIndexer": s_sparse_attention_indexer,
    "PackedSparseAttentionIndexer": s_packed_sparse_attention_indexer,
    "PackedSparseAttentionIndexerMerge": s_packed_sparse_attention_indexer_merge,
    **{
        op: s_qordered(op)
        for op in (
            "QuantizeWithOrder",
            "QOrderedGelu",
            "QOrderedLayerNormalization",
            "QOrderedMatMul",
            "QOrderedAttention",
            "QOrderedLongformerAttention",
        )
    },
    "QuantizeBFP": s_quantize_bfp,
    "RMSNormRotary": s_rms_norm_rotary,
    "ReduceSumInteger": s_reduce("ReduceSumInteger"),
    "QLinearReduceMean": s_reduce("QLinearReduceMean"),
    "RelativePositionBias": s_relative_position_bias,
    "RemovePadding": s_remove_padding,
    "RestorePadding": s_restore_padding,
    "RouterGateUpProj": s_router_gate_up_proj,
    "SkipGroupNorm": s_skip_group_norm,
    "SpeculativePrefixCommit": s_speculative_prefix_commit,
    "SwiGLU": s_swiglu,
    "TorchEmbedding": s_torch_embedding,
    "Rfft": s_rfft,
}
# Where onnxruntime's schema inference and the kernels disagree, the rule follows the kernel.
SCHEMA_DIFFERS = {
    # The schema reads NhwcConv's weights as (M, C, kH, kW); the optimizer's fusion writes them
    # as (M, kH, kW, C), the layout the CUDA kernel takes (signatures/com_microsoft/conv.py).
    "NhwcConv": "weights layout",
}


_SEPARATE = [In([5, 64], H), In([5, 32], H), In([5, 32], H), In([3, 16, 2, 16], H), In([3, 16, 2, 16], H),
             In([3], I32), In([2], I32), In([2, 4], I32)]  # fmt: skip
_LATENT = [In([5, 256], H), In([5, 64], H), None, In([3, 16, 1, 64], H), None, In([3], I32), In([2], I32),
           In([2, 4], I32)]  # fmt: skip
_LAT = {"num_heads": 4, "kv_num_heads": 1, "kv_cache_layout": "LATENT"}
_PSAI = [In([3, 16]), In([3, 8]), In([8]), In([8]), In([20, 4]), In([20, 4]), In([3], I32), In([2], I32), None, None,
         None, None, In([2, 4, 8]), In([2, 3, 8]), None, In([2, 2], I32), None, None]  # fmt: skip
_SHARE = [const([1], I32), In([2, 7], I32), In([2], I32), In([2], I32)]
_QSA = {"policy_mode": "qsa", "compress_ratio": 2, "token_budget": 4, "state_capacity": 4}
# Nodes checked against onnxruntime's schema inference as written (the random ones may miss them).
SCHEMA_CASES: list[Case] = [
    # v_head_size written as its default, 0, is the head size (issue 26)
    Case("PagedAttention", _SEPARATE, {"num_heads": 4, "kv_num_heads": 2, "v_head_size": 0}, n_out=3),
    Case("PagedAttention", _LATENT, {**_LAT, "v_head_size": 0}, n_out=2),
    Case("PagedAttention", _LATENT, {**_LAT, "v_head_size": 32, "scale": 0.125}, n_out=2),
    # IndexShare: selected_indices is max_output_entries wide, its rows open
    Case(
        "PackedSparseAttentionIndexer",
        _PSAI + _SHARE,
        {**_QSA, "max_output_entries": 7},
        n_out=9,
        omit=frozenset({4, 6}),
    ),
    Case("PackedSparseAttentionIndexer", _PSAI, {**_QSA, "max_output_entries": 0}, n_out=6, omit=frozenset({4})),
]
# Nodes onnxruntime's schema inference refuses (each must be an error of inference too).
SCHEMA_REFUSED: list[Case] = [
    Case("PagedAttention", _LATENT, {**_LAT, "v_head_size": 128, "scale": 0.125}),  # wider than the head
    # IndexShare: a width without its inputs, inputs without a width, a width below the selection's,
    # two of its four inputs, no status output, merged_indices' rows not the batch
    Case("PackedSparseAttentionIndexer", _PSAI, {**_QSA, "max_output_entries": 7}, n_out=6, omit=frozenset({4})),
    Case("PackedSparseAttentionIndexer", _PSAI + _SHARE, _QSA, n_out=9, omit=frozenset({4, 6})),
    Case(
        "PackedSparseAttentionIndexer",
        _PSAI + _SHARE,
        {**_QSA, "max_output_entries": 4},
        n_out=9,
        omit=frozenset({4, 6}),
    ),
    Case(
        "PackedSparseAttentionIndexer",
        _PSAI + _SHARE[:2],
        {**_QSA, "max_output_entries": 7},
        n_out=9,
        omit=frozenset({4, 6}),
    ),
    Case(
        "PackedSparseAttentionIndexer", _PSAI + _SHARE, {**_QSA, "max_output_entries": 7}, n_out=6, omit=frozenset({4})
    ),
    Case(
        "PackedSparseAttentionIndexer",
        _PSAI + [_SHARE[0], In([3, 7], I32), *_SHARE[2:]],
        {**_QSA, "max_output_entries": 7},
        n_out=9,
        omit=frozenset({4, 6}),
    ),
]

# Nodes onnxruntime refuses (each must be an error of inference too).
REFUSED: list[Case] = [
    Case("Pad", [In([2, 3]), const(np.array([0, 3, 0, 0], I64))], {"mode": "reflect"}),
    Case("Pad", [In([0, 3]), const(np.array([1, 0, 0, 0], I64))], {"mode": "edge"}),
    Case("Pad", [In([2, 3]), const(np.array([0, -2, 0, -2], I64))]),
    Case("Pad", [In([2, 3]), const(np.array([[0, 1], [1, 2]], I64))]),
    Case("Range", [const(np.array([[2]], I64)), const(7, I64)]),
    Case("Range", [const(2, I32), const(7, I32), const(0, I32)]),
    Case("Unique", [In([2, 2])], n_out=3),
    Case("UnfoldTensor", [In([2, 2, 3])], {"size": 3, "dim": 1}),
    Case("UnfoldTensor", [In([2, 7])], {"size": 2, "step": 0}),
    Case("SparseToDenseMatMul", [In([3, 4]), In([5, 4])], {"transB": 1}, sparse=frozenset({0})),
    Case("SparseToDenseMatMul", [In([3, 4]), In([4, 4])], {"transA": 1}, sparse=frozenset({0})),
    Case("ScaledSiLU", [In([2, 3]), const([2.0], F)]),
    Case(
        "QMoE",
        [In([3, 16]), In([3, 2]), In([2, 16, 8], U8), In([2, 16]), None, In([2, 16, 8], U8), In([2, 16])],
        {"k": 3},
    ),
    Case("QMoE", [In([3, 16]), In([4, 2]), In([2, 16, 8], U8), In([2, 16]), None, In([2, 16, 8], U8), In([2, 16])]),
    Case("QMoE", [In([16]), In([1, 2]), In([2, 16, 8], U8), In([2, 16]), None, In([2, 16, 8], U8), In([2, 16])]),
    Case(
        "NGramHashMapping",
        [const(np.ones((2, 5)), I64), const([3, 5, 7], I64), const([11, 13, 17], I64)],
        {"pad_id": 0, "n_head_per_ngram": 2, "max_ngram_size": 3},
    ),
    Case(
        "NGramHashMapping",
        [const(np.ones((2, 5)), I64), const([3, 5], I64), const([11, 13, 17, 19], I64)],
        {"pad_id": 0, "n_head_per_ngram": 2, "max_ngram_size": 3},
    ),
    Case(
        "NGramHashMapping",
        [const(np.ones((2, 5)), I64), const([3, 5, 7], I64), const([11, 13, 17, 19], I64), const(np.ones((2, 3)), I64)],
        {"pad_id": 0, "n_head_per_ngram": 2, "max_ngram_size": 3},
        n_out=2,
    ),
    Case(
        "VarlenNGramHashMapping",
        [const(np.ones(5), I64), const([3, 5, 7], I64), const([11, 13, 17, 19], I64), const([0, 2, 5], I32)],
        {"pad_id": 0, "n_head_per_ngram": 2, "max_ngram_size": 3},
        n_out=3,
    ),
    Case("VarlenCausalConvWithState", [In([5, 4]), In([4, 1, 3]), const([0, 2, 5], I32), None, In([2, 4, 3])], n_out=2),
    Case("VarlenCausalConvWithState", [In([5, 4]), In([4, 2, 3]), const([0, 2, 5], I32), None, In([2, 4, 2])], n_out=2),
    Case(
        "VarlenCausalConvWithState",
        [In([5, 4]), In([4, 1, 3]), const([0, 2, 5], I32), None, In([2, 4, 2])],
        {"state_update_capacity": 2},
        n_out=2,
    ),
    Case("NGramRepeatBlock", [const(np.ones((2, 5)), I64), In([3, 9])], {"ngram_size": 2}),
    Case("NGramRepeatBlock", [const(np.ones((2, 5)), I64), In([2, 9])], {"ngram_size": 0}),
    Case(
        "Tokenizer",
        [const(np.array([[["a"]]], dtype=object), object)],
        {"mark": 0, "pad_value": "#", "mincharnum": 1, "separators": [" "]},
    ),
    Case("Tokenizer", [const(np.array(["a b"], dtype=object), object)], {"mark": 0, "pad_value": "#", "mincharnum": 1}),
    Case(
        "WordConvEmbedding",
        [const(np.ones((2, 5)), I32), In([4, 1, 2, 3]), In([4]), In([10, 3])],
        {"embedding_size": 5},
    ),
    Case("WordConvEmbedding", [const(np.ones((2, 5)), I32), In([4, 1, 6, 3]), In([4]), In([10, 3])]),
    Case("WordConvEmbedding", [const(np.ones((2, 5)), I32), In([4, 1, 2, 3]), In([5]), In([10, 3])]),
    Case(
        "Sampling",
        [const(np.ones((2, 3)), I32), const([3], I32)],
        {"eos_token_id": 6, "pad_token_id": 0},
        graphs={"decoder": gpt_decoder(7)},
    ),
]


# -- the tests -----------------------------------------------------------------------------------


def _schema_agrees(case: Case) -> list[str]:
    """Inference against onnxruntime's schema inference, concretely; the symbolic claims against
    the concrete ones at the same sizes."""
    si = ort_schema_inference(case)
    if si.error is not None:
        return [f"{case}: onnxruntime's schema refuses a node meant to be valid: {si.error[:200]}"]
    model, _ = case.model()
    concrete = infer.infer_model(model)
    problems = [f"{case}: error on a valid node: {e}" for e in errors(concrete)]
    smodel, bindings = case.model(symbolic=True)
    symbolic = infer.infer_model(smodel)
    problems += [f"{case} (symbolic): error on a valid node: {e}" for e in errors(symbolic)]
    for name in (o for o in case.outputs if o):
        ours = concrete.type_of(name)
        if not isinstance(ours, T.TensorType):
            problems.append(f"{case}: `{name}` is {ours}")
            continue
        elem, shape = si.elems.get(name), si.shapes.get(name)
        if elem is not None and ours.elem is not None and elem != ours.elem:
            problems.append(f"{case}: `{name}` is {ours}, onnxruntime's schema says element type {elem}")
        if shape is not None and case.op not in SCHEMA_DIFFERS:
            if ours.shape is None or len(ours.shape) != len(shape):
                problems.append(f"{case}: `{name}` is {ours}, onnxruntime's schema says {shape}")
            else:
                for axis, (d, want) in enumerate(zip(ours.shape, shape)):
                    if want >= 0 and d != want:
                        problems.append(f"{case}: `{name}` is {ours}, onnxruntime's schema says {shape} (axis {axis})")
        sym = symbolic.type_of(name)
        if 0 in bindings.values():
            continue  # declared extents are positive: claims say nothing of a binding to 0
        if isinstance(sym, T.TensorType) and sym.shape is not None and ours.shape is not None:
            for axis, (d, c) in enumerate(zip(sym.shape, ours.shape)):
                if d is not None and isinstance(c, int) and D.free_names(d) <= set(bindings):
                    if D.evaluate(d, bindings) != c:
                        problems.append(f"{case}: symbolic `{name}` {sym} is not {ours} at {bindings} (axis {axis})")
    return problems


@pytest.mark.parametrize("op", sorted(SCHEMA_GENERATORS))
def test_random_nodes_against_onnxruntime_schema_inference(op: str) -> None:
    assert (MS, op) not in cpu_kernels(), f"{op} has a CPU kernel: run it instead"
    rng = np.random.default_rng(zlib.crc32(op.encode()))
    problems: list[str] = []
    for _ in range(N_EXAMPLES):
        problems += _schema_agrees(SCHEMA_GENERATORS[op](rng))
    assert not problems, "\n".join(problems[:10])


@pytest.mark.parametrize("case", SCHEMA_CASES, ids=str)
def test_nodes_against_onnxruntime_schema_inference(case: Case) -> None:
    problems = _schema_agrees(case)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("case", SCHEMA_REFUSED, ids=str)
def test_nodes_onnxruntime_schema_inference_refuses_are_errors(case: Case) -> None:
    assert ort_schema_inference(case).error is not None, f"onnxruntime's schema inference accepts {case}"
    assert not refused_too(case)


@pytest.mark.parametrize("op", sorted(GENERATORS))
def test_random_nodes_against_onnxruntime(op: str) -> None:
    assert (MS, op) in cpu_kernels(), f"{op} has no CPU kernel: check it against the schema inference instead"
    rng = np.random.default_rng(zlib.crc32(op.encode()))
    problems = []
    lacking = []
    for _ in range(N_EXAMPLES):
        case = GENERATORS[op](rng)
        try:
            observed = ort_run(case)
        except HardwareRefused as e:
            lacking.append(f"{case}: {e}")
            continue
        except Refused as e:
            problems.append(f"{case}: onnxruntime refuses a node meant to be valid: {e}")
            continue
        problems += claims_hold(case, observed)
    assert not problems, "\n".join(problems[:10])
    skip_lacking(lacking, N_EXAMPLES)


# The rule modules of this half (their examples are run below where onnxruntime can run them).
MODULES = {
    f"signatures.com_microsoft.{m}"
    for m in (
        "onnx_forms",
        "swiglu_qmoe",
        "packed_attention",
        "sparse_indexer",
        "qordered",
        "sampling",
        "ngram_state",
        "text_ops",
        "no_shape_semantics",
        "conv",
    )
}


def _example_case(ex) -> Case | None:
    """The example as a runnable node when every input extent is concrete (contents as initializers)."""
    table = DimTable()
    inputs: list[In | None] = []
    for src in ex.inputs:
        if not src:
            inputs.append(None)
            continue
        v = parse_value(src, table)
        t = v.type
        if not isinstance(t, T.TensorType) or t.shape is None or not all(isinstance(d, int) for d in t.shape):
            return None
        dtype = object if t.elem == TensorProto.STRING else helper.tensor_dtype_to_np_dtype(t.elem)
        if v.known is not None:
            if any(not isinstance(e, (int, float, bool, str)) for e in v.known.elems):
                return None
            inputs.append(const(np.array(v.known.elems, dtype=dtype).reshape(t.shape), dtype))
        else:
            inputs.append(In(list(t.shape), dtype))
    return Case(ex.op_type, inputs, dict(ex.attrs), n_out=len(ex.outputs), domain=ex.domain)


def _runnable_examples(error: bool) -> list:
    out = []
    for ex in EXAMPLES:
        if ex.module in MODULES and (ex.error is not None) == error and (ex.domain, ex.op_type) in cpu_kernels():
            case = _example_case(ex)
            if case is not None:
                out.append(case)
    return out


@pytest.mark.parametrize("case", _runnable_examples(error=True), ids=str)
def test_error_examples_are_refused_by_onnxruntime(case: Case) -> None:
    """Each error example of these modules that onnxruntime can run is one it refuses."""
    if "NOT_IMPLEMENTED" in str(refusal(case)):
        pytest.skip("no kernel for these element types")


@pytest.mark.parametrize("case", _runnable_examples(error=False), ids=str)
def test_concrete_examples_hold_in_onnxruntime(case: Case) -> None:
    try:
        observed = ort_run(case)
    except HardwareRefused as e:
        skip_lacking([f"{case}: {e}"], 1)
        raise
    except Refused as e:
        if "NOT_IMPLEMENTED" in str(e):
            pytest.skip("no kernel for these element types")
        raise
    assert not claims_hold(case, observed)


@pytest.mark.parametrize("case", REFUSED, ids=str)
def test_refused_by_onnxruntime_and_by_inference(case: Case) -> None:
    refusal(case)
    assert not refused_too(case)


# -- the conformance statement -------------------------------------------------------------------


def test_ops_lists_every_operator_the_schemas_know() -> None:
    """``onnx-infer ops`` lists every operator version of onnx's and onnxruntime's schemas; every
    contrib operator of this half has a rule or a reason; a rule onnxruntime cannot run is marked."""
    import onnx.defs
    from onnxruntime.capi import onnxruntime_pybind11_state as C

    from infer.out import conformance
    from signatures.com_microsoft.no_shape_semantics import NO_SHAPE_SEMANTICS

    rows = conformance.statement()["operators"]
    listed = {(r["domain"], r["op_type"], r["since"]): r for r in rows}
    want = {(s.domain or "", s.name, s.since_version) for s in onnx.defs.get_all_schemas_with_history()}
    want |= {("" if s.domain == "ai.onnx" else s.domain, s.name, s.since_version) for s in C.get_all_operator_schema()}
    assert want <= listed.keys(), sorted(want - listed.keys())[:10]
    mine = sorted(n for d, n, _ in want if d == MS and n[0] >= "N")
    assert len(mine) >= 60
    for name in mine:
        row = listed[(MS, name, 1)]
        if name in NO_SHAPE_SEMANTICS:
            assert row["status"] == conformance.UNSUPPORTED and row["detail"] == NO_SHAPE_SEMANTICS[name]
        else:
            assert row["status"] == conformance.SUPPORTED, (name, row)
            assert (conformance.NOT_RUN in row["detail"]) == ((MS, name) not in cpu_kernels()), (name, row)
    for name in GENERATORS:
        assert (MS, name) in cpu_kernels()
    for name in SCHEMA_GENERATORS:
        assert (MS, name) not in cpu_kernels()
    covered = set(GENERATORS) | set(SCHEMA_GENERATORS) | set(NO_SHAPE_SEMANTICS)
    assert set(mine) <= covered, sorted(set(mine) - covered)
