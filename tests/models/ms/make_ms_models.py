"""Make the com.microsoft test models: the corpus run through onnxruntime's tools.

onnxruntime's transformer optimizer and quantizers rewrite models into its contrib operators
(domain ``com.microsoft``). This script takes the exported corpus (tests/models/*.onnx) and

* optimizes it with ``onnxruntime.transformers.optimizer.optimize_model`` (BERT, GPT-2, LLaMA,
  ViT, Whisper; plus a BERT exported with eager attention, whose attention the optimizer fuses),
  also converted to float16 and with MultiHeadAttention instead of Attention;
* quantizes it with ``quantize_dynamic`` (int8, then onnxruntime's own extended graph
  optimizations, which fuse DynamicQuantizeMatMul and MatMulIntegerToFloat), with
  ``MatMulNBitsQuantizer`` (4-bit MatMulNBits and GatherBlockQuantized) and with
  ``quantize_static`` over a tiny random calibration set (QOperator and QDQ formats, the ResNet
  and a small CNN that has the operators the QLinear* contrib kernels cover);
* saves onnxruntime's own extended optimizations of the ResNet (FusedConv) and of a float
  model with transposed MatMuls (FusedMatMul);
* builds small graphs by hand for the contrib operators no tool emits on these models
  (MultiHeadAttention, GroupQueryAttention, RotaryEmbedding, ...).

Every file is stripped of ``value_info`` (the engine must infer intermediate shapes) and of
doc strings, runs in onnxruntime at both bindings of ``manifest.json`` and keeps the symbolic
input dims. Run it with the export venv (it needs torch and transformers for the eager BERT and
onnxruntime's tools, which import torch at opt_level > 0)::

    /work/export-venv/bin/python tests/models/ms/make_ms_models.py
"""

from __future__ import annotations

import collections
import hashlib
import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parent
SEED = 0
MS = "com.microsoft"
FLOAT = TensorProto.FLOAT
INT64 = TensorProto.INT64
INT32 = TensorProto.INT32

TEXT_BINDINGS = [{"batch": 2, "sequence": 7}, {"batch": 3, "sequence": 11}]
IMAGE_BINDINGS = [{"batch": 2, "height": 64, "width": 64}, {"batch": 3, "height": 96, "width": 80}]


def corpus_entry(file: str) -> dict[str, Any]:
    entries = json.loads((CORPUS / "manifest.json").read_text())["models"]
    return next(e for e in entries if e["file"] == file)


# --------------------------------------------------------------------------- #
# Post-processing and the manifest
# --------------------------------------------------------------------------- #


def clean(model: onnx.ModelProto) -> onnx.ModelProto:
    """Strip value_info, doc strings and metadata the tools add; keep graph inputs/outputs."""
    del model.graph.value_info[:]
    model.doc_string = ""
    model.graph.doc_string = ""
    for n in model.graph.node:
        n.doc_string = ""
        del n.metadata_props[:]
    del model.metadata_props[:]
    model.producer_name = "onnx-infer tests/models/ms/make_ms_models.py"
    model.producer_version = ""
    return model


_NP_NAME = {
    TensorProto.INT64: "int64", TensorProto.INT32: "int32", TensorProto.FLOAT: "float32",
    TensorProto.FLOAT16: "float16", TensorProto.BOOL: "bool", TensorProto.DOUBLE: "float64",
}  # fmt: skip


def input_specs(model: onnx.ModelProto, fills: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Manifest inputs read from the model (optimizers may retype inputs, e.g. to int32)."""
    inits = {t.name for t in model.graph.initializer}
    out = []
    for inp in model.graph.input:
        if inp.name in inits:
            continue
        tt = inp.type.tensor_type
        dims = [d.dim_param if d.dim_param else int(d.dim_value) for d in tt.shape.dim]
        out.append(
            {
                "name": inp.name,
                "elem_type": _NP_NAME[tt.elem_type],
                "onnx_elem_type": tt.elem_type,
                "dims": dims,
                "fill": fills.get(inp.name, {"kind": "randn"}),
            }
        )
    return out


def make_feed(inputs: list[dict[str, Any]], binding: dict[str, int], seed: int = SEED) -> dict[str, np.ndarray]:
    """The same feeds tests/support/runtime.py ``feeds_for`` makes."""
    rng = np.random.default_rng(seed)
    feed = {}
    for inp in inputs:
        shape = [binding[d] if isinstance(d, str) else d for d in inp["dims"]]
        dtype = np.dtype(inp["elem_type"])
        fill = inp["fill"]
        if fill["kind"] == "randint":
            feed[inp["name"]] = rng.integers(fill["low"], fill["high"], size=shape).astype(dtype)
        elif fill["kind"] == "ones":
            feed[inp["name"]] = np.ones(shape, dtype)
        elif fill["kind"] == "zeros":
            feed[inp["name"]] = np.zeros(shape, dtype)
        else:
            feed[inp["name"]] = rng.standard_normal(shape).astype(dtype)
    return feed


def run(model: onnx.ModelProto, feed: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 3
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, feed)))


def check(model: onnx.ModelProto) -> None:
    """onnx.checker on a copy adjusted for what onnx cannot know.

    SimplifiedLayerNormalization is an onnxruntime operator in the default domain, unknown to
    onnx; the copy checks it as LayerNormalization (same attributes, a subset of the arity).
    Hand-built graphs declare only the element type of their outputs; the copy gives them a shape.
    """
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    for n in copy.graph.node:
        if n.op_type == "SimplifiedLayerNormalization" and n.domain in ("", "ai.onnx"):
            n.op_type = "LayerNormalization"
    for o in copy.graph.output:
        if o.type.HasField("tensor_type") and not o.type.tensor_type.HasField("shape"):
            o.type.tensor_type.shape.SetInParent()
    onnx.checker.check_model(copy)


def save(
    model: onnx.ModelProto,
    file: str,
    source: str,
    how: str,
    fills: dict[str, dict[str, Any]],
    bindings: list[dict[str, int]],
) -> dict[str, Any]:
    """Check, run at both bindings, write, and return the manifest entry."""
    model = clean(model)
    check(model)
    data = model.SerializeToString()
    (HERE / file).write_bytes(data)
    inputs = input_specs(model, fills)
    runs = []
    for b in bindings:
        out = run(model, make_feed(inputs, b))
        runs.append({"dims": b, "output_shapes": {k: list(v.shape) for k, v in out.items()}})
    counts = collections.Counter(f"{n.domain or 'ai.onnx'}::{n.op_type}" for n in model.graph.node)
    entry = {
        "file": file,
        "source": source,
        "how": how,
        "opset_imports": {i.domain or "ai.onnx": i.version for i in model.opset_import},
        "size_bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "node_count": len(model.graph.node),
        "op_counts": dict(sorted(counts.items())),
        "inputs": inputs,
        "bindings": runs,
    }
    ms = sorted(k for k in counts if not k.startswith("ai.onnx::"))
    print(f"{file}: {len(model.graph.node)} nodes, {len(data):,} bytes, {ms}", flush=True)
    return entry


# --------------------------------------------------------------------------- #
# The transformer optimizer
# --------------------------------------------------------------------------- #


def optimize(
    path: Path, model_type: str, num_heads: int, opt_level: int, fp16: bool = False, **fusion: Any
) -> onnx.ModelProto:
    from onnxruntime.transformers.fusion_options import FusionOptions
    from onnxruntime.transformers.optimizer import optimize_model

    options = FusionOptions(model_type)
    for k, v in fusion.items():
        setattr(options, k, v)
    opt = optimize_model(
        str(path),
        model_type=model_type,
        num_heads=num_heads,
        hidden_size=32,
        opt_level=opt_level,
        optimization_options=options,
        use_gpu=False,
    )
    if fp16:
        opt.convert_float_to_float16(keep_io_types=True)
    return opt.model


def export_eager_bert(path: Path) -> None:
    """BERT as in the corpus (export_corpus.py's config), with eager attention.

    transformers' default SDPA attention exports a pattern the optimizer does not fuse; the
    eager one is the classic BERT attention it turns into Attention and EmbedLayerNormalization.
    """
    import torch
    import transformers

    torch.manual_seed(SEED)
    config = transformers.BertConfig(
        vocab_size=100,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        type_vocab_size=2,
        attn_implementation="eager",
    )
    bert = transformers.BertModel(config).eval()

    class Wrapper(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = bert

        def forward(self, input_ids, attention_mask, token_type_ids):  # type: ignore[no-untyped-def]
            out = self.model(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
            return out.last_hidden_state, out.pooler_output

    names = ["input_ids", "attention_mask", "token_type_ids"]
    args = tuple(torch.ones(2, 7, dtype=torch.long) for _ in names)
    axes = {n: {0: "batch", 1: "sequence"} for n in names}
    axes["last_hidden_state"] = {0: "batch", 1: "sequence"}
    axes["pooler_output"] = {0: "batch"}
    torch.onnx.export(
        Wrapper(),
        args,
        str(path),
        input_names=names,
        output_names=["last_hidden_state", "pooler_output"],
        dynamic_axes=axes,
        opset_version=17,
        dynamo=False,
    )


# --------------------------------------------------------------------------- #
# Quantizers
# --------------------------------------------------------------------------- #


def ort_extended(model: onnx.ModelProto, work: Path, name: str) -> onnx.ModelProto:
    """onnxruntime's own extended (level 2) graph optimizations, saved: its fused contrib ops."""
    src, dst = work / f"{name}.in.onnx", work / f"{name}.out.onnx"
    onnx.save(model, str(src))
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    so.optimized_model_filepath = str(dst)
    so.log_severity_level = 3
    ort.InferenceSession(str(src), so, providers=["CPUExecutionProvider"])
    return onnx.load(str(dst))


def dynamic_int8(model: onnx.ModelProto, work: Path, name: str) -> onnx.ModelProto:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    src, dst = work / f"{name}.f.onnx", work / f"{name}.q.onnx"
    onnx.save(model, str(src))
    # Shape inference does not know the contrib ops the optimizer left: say what they produce.
    quantize_dynamic(
        str(src), str(dst), weight_type=QuantType.QInt8, extra_options={"DefaultTensorType": TensorProto.FLOAT}
    )
    return onnx.load(str(dst))


def int4(model: onnx.ModelProto, gather: bool = False) -> onnx.ModelProto:
    from onnxruntime.quantization import matmul_nbits_quantizer as nb

    ops = ("MatMul", "Gather") if gather else ("MatMul",)
    config = nb.DefaultWeightOnlyQuantConfig(
        block_size=16, is_symmetric=False, op_types_to_quantize=ops, quant_axes=(("MatMul", 0), ("Gather", 1))
    )
    q = nb.MatMulNBitsQuantizer(model, algo_config=config)
    q.process()
    return q.model.model


class RandomReader:
    """A tiny random calibration set (the quantizer's CalibrationDataReader protocol)."""

    def __init__(self, inputs: list[dict[str, Any]], bindings: list[dict[str, int]]):
        self.feeds = iter([make_feed(inputs, b, seed=SEED + i) for i, b in enumerate(bindings * 2)])

    def get_next(self) -> dict[str, np.ndarray] | None:
        return next(self.feeds, None)


def static(
    model: onnx.ModelProto,
    work: Path,
    name: str,
    fills: dict[str, Any],
    bindings: list[dict[str, int]],
    qdq: bool,
    ms_qdq: bool = False,
) -> onnx.ModelProto:
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static

    src, dst = work / f"{name}.f.onnx", work / f"{name}.q.onnx"
    onnx.save(model, str(src))
    reader = RandomReader(input_specs(model, fills), bindings)
    quantize_static(
        str(src),
        str(dst),
        reader,
        quant_format=QuantFormat.QDQ if qdq else QuantFormat.QOperator,
        activation_type=QuantType.QUInt8,
        weight_type=QuantType.QInt8,
        extra_options={"UseQDQContribOps": ms_qdq, "DefaultTensorType": TensorProto.FLOAT},
    )
    return onnx.load(str(dst))


def small_cnn() -> onnx.ModelProto:
    """A float CNN with the ops the QLinear* contrib kernels quantize.

    Conv, Sigmoid, LeakyRelu, Mul, Add, Concat, AveragePool, GlobalAveragePool, Softmax, Gemm.
    """
    rng = np.random.default_rng(SEED)

    def w(name: str, *shape: int) -> onnx.TensorProto:
        return numpy_helper.from_array((rng.standard_normal(shape) * 0.3).astype(np.float32), name)

    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Sigmoid", ["c1"], ["s1"]),
        helper.make_node("Conv", ["x", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("LeakyRelu", ["c2"], ["l2"], alpha=0.1),
        helper.make_node("Mul", ["s1", "l2"], ["m"]),
        helper.make_node("Add", ["m", "c1"], ["a"]),
        helper.make_node("Concat", ["a", "l2"], ["cat"], axis=1),
        helper.make_node("AveragePool", ["cat"], ["p"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("GlobalAveragePool", ["p"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "wf", "bf"], ["logits_raw"], transB=1),
        helper.make_node("Softmax", ["logits_raw"], ["probs"], axis=-1),
    ]
    inits = [w("w1", 8, 3, 3, 3), w("b1", 8), w("w2", 8, 3, 3, 3), w("b2", 8), w("wf", 10, 16), w("bf", 10)]
    x = helper.make_tensor_value_info("x", FLOAT, ["batch", 3, "height", "width"])
    y = helper.make_tensor_value_info("probs", FLOAT, ["batch", 10])
    graph = helper.make_graph(nodes, "small_cnn", [x], [y], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def transposed_matmuls() -> onnx.ModelProto:
    """Transpose -> MatMul and scaled MatMuls, which onnxruntime fuses into FusedMatMul."""
    nodes = [
        helper.make_node("Transpose", ["x"], ["xt"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["xt", "x"], ["gram"]),  # [B,32,S] @ [B,S,32]
        helper.make_node("Transpose", ["y"], ["yt"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["x", "yt"], ["xy"]),  # [B,S,32] @ [B,32,T]
        helper.make_node("Mul", ["xy", "half"], ["xy_scaled"]),
        helper.make_node("Transpose", ["x"], ["xb"], perm=[1, 0, 2]),  # [S,B,32]
        helper.make_node("MatMul", ["xb", "w"], ["xbw"]),
    ]
    inits = [
        numpy_helper.from_array(np.array(0.5, np.float32), "half"),
        numpy_helper.from_array(np.random.default_rng(SEED).standard_normal((32, 16)).astype(np.float32), "w"),
    ]
    graph = helper.make_graph(
        nodes,
        "transposed_matmuls",
        [
            helper.make_tensor_value_info("x", FLOAT, ["batch", "sequence", 32]),
            helper.make_tensor_value_info("y", FLOAT, ["batch", "past", 32]),
        ],
        [helper.make_tensor_value_info(n, FLOAT, None) for n in ("gram", "xy_scaled", "xbw")],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


# --------------------------------------------------------------------------- #
# Hand-built graphs of contrib operators
# --------------------------------------------------------------------------- #


_ORT_ELEM = {"tensor(float)": FLOAT, "tensor(int32)": INT32, "tensor(int64)": INT64,
             "tensor(float16)": TensorProto.FLOAT16, "tensor(uint8)": TensorProto.UINT8}  # fmt: skip


class Builder:
    """A small graph builder: constants as initializers, nodes in order."""

    def __init__(self, name: str, seed: int = SEED):
        self.name = name
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.inputs: list[onnx.ValueInfoProto] = []
        self.outputs: list[str] = []
        self.rng = np.random.default_rng(seed)
        self._n = 0

    def input(self, name: str, elem: int, dims: list[Any]) -> str:
        self.inputs.append(helper.make_tensor_value_info(name, elem, dims))
        return name

    def const(self, value: Any, dtype: Any = np.float32, name: str | None = None) -> str:
        self._n += 1
        name = name or f"c{self._n}"
        self.inits.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def randn(self, *shape: int, scale: float = 0.3) -> str:
        return self.const(self.rng.standard_normal(shape) * scale)

    def node(self, op: str, inputs: list[str], n_out: int = 1, domain: str = "", **attrs: Any) -> list[str]:
        self._n += 1
        outs = [f"{op.lower()}{self._n}_{k}" for k in range(n_out)]
        self.nodes.append(helper.make_node(op, inputs, outs, domain=domain or None, name=f"{op}_{self._n}", **attrs))
        return outs

    def ms(self, op: str, inputs: list[str], n_out: int = 1, **attrs: Any) -> list[str]:
        return self.node(op, inputs, n_out, domain=MS, **attrs)

    def output(self, *names: str) -> None:
        self.outputs.extend(names)

    def model(self) -> onnx.ModelProto:
        """The graph; outputs declare the element type onnxruntime gives them, and no shape."""
        untyped = [onnx.ValueInfoProto(name=n) for n in self.outputs]
        graph = helper.make_graph(self.nodes, self.name, self.inputs, untyped, self.inits)
        model = helper.make_model(
            graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)], ir_version=8
        )
        so = ort.SessionOptions()
        so.log_severity_level = 3
        sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
        elems = {o.name: _ORT_ELEM[o.type] for o in sess.get_outputs()}
        del model.graph.output[:]
        model.graph.output.extend(helper.make_tensor_value_info(n, elems[n], None) for n in self.outputs)
        return model

    def dim(self, x: str, axis: int, dtype: int = INT64) -> str:
        """Extent ``axis`` of ``x`` as a 1-element tensor (Shape -> Slice)."""
        (s,) = self.node("Shape", [x], start=axis, end=axis + 1)
        return s if dtype == INT64 else self.node("Cast", [s], to=dtype)[0]


def attention_graph() -> onnx.ModelProto:
    """Attention, MultiHeadAttention and RotaryEmbedding in their common forms."""
    b = Builder("attention_ops")
    x = b.input("x", FLOAT, ["batch", "sequence", 32])
    mem = b.input("memory", FLOAT, ["batch", "memory_length", 32])
    past = b.input("past", FLOAT, [2, "batch", 2, "past", 16])
    past_k = b.input("past_key", FLOAT, ["batch", 2, "past", 16])
    past_v = b.input("past_value", FLOAT, ["batch", 2, "past", 16])
    pos = b.input("position_ids", INT64, ["batch", "sequence"])
    w, bias = b.randn(32, 96), b.randn(96)
    # GPT-2 style: unidirectional with past -> present [2, B, N, P + S, H]
    out, present = b.ms("Attention", [x, w, bias, "", past], 2, num_heads=2, unidirectional=1)
    # BERT style with a raw 2-D mask and different V width.
    mask = b.node(
        "Cast",
        [b.node("Greater", [b.node("ReduceSum", [x, b.const([2], np.int64)], keepdims=0)[0], b.const(-1e9)])[0]],
        to=INT32,
    )[0]
    (out2,) = b.ms("Attention", [x, b.randn(32, 80), b.randn(80), mask], num_heads=2, qkv_hidden_sizes=[32, 32, 16])
    # MultiHeadAttention, cross attention with past key/value -> present [B, N, P + L, H] and qk.
    q = b.node("MatMul", [x, b.randn(32, 32)])[0]
    k = b.node("MatMul", [mem, b.randn(32, 32)])[0]
    v = b.node("MatMul", [mem, b.randn(32, 32)])[0]
    mha, pk, pv = b.ms("MultiHeadAttention", [q, k, v, b.randn(96), "", "", past_k, past_v], 3, num_heads=2)
    # (Packed QKV, (B, S, N, 3, H) without key and value, is not implemented on the CPU.)
    # MultiHeadAttention with key/value already in BNSH (cross attention over a cache).
    kb = b.node("Transpose", [b.node("Reshape", [k, b.const([0, 0, 2, 16], np.int64)])[0]], perm=[0, 2, 1, 3])[0]
    vb = b.node("Transpose", [b.node("Reshape", [v, b.const([0, 0, 2, 16], np.int64)])[0]], perm=[0, 2, 1, 3])[0]
    (mha_bnsh,) = b.ms("MultiHeadAttention", [q, kb, vb], num_heads=2)
    # RotaryEmbedding on (B, S, hidden) and on (B, N, S, H).
    cos, sin = b.randn(64, 8), b.randn(64, 8)
    (rot3,) = b.ms("RotaryEmbedding", [q, pos, cos, sin], num_heads=2)
    qb = b.node("Transpose", [b.node("Reshape", [q, b.const([0, 0, 2, 16], np.int64)])[0]], perm=[0, 2, 1, 3])[0]
    (rot4,) = b.ms("RotaryEmbedding", [qb, pos, cos, sin], interleaved=1)
    b.output(out, present, out2, mha, pk, pv, mha_bnsh, rot3, rot4)
    return b.model()


def gqa_graph() -> onnx.ModelProto:
    """GroupQueryAttention: a prompt without cache and a one-token step with a KV cache.

    seqlens_k and total_sequence_length are computed from shapes. The CPU kernel needs head sizes
    that are multiples of 16 (4 query heads and 2 KV heads of 16) and a batch of 1 for a
    multi-token step with a cache, hence a prompt without one.
    """
    b = Builder("group_query_attention")
    x = b.input("x", FLOAT, ["batch", "sequence", 32])
    step = b.input("step", FLOAT, ["batch", 1, 32])
    past_k = b.input("past_key", FLOAT, ["batch", 2, "past", 16])
    past_v = b.input("past_value", FLOAT, ["batch", 2, "past", 16])
    batch = b.dim(x, 0)

    def lengths(total: str) -> tuple[str, str]:
        scalar = b.node("Squeeze", [total, b.const([0], np.int64)])[0]
        seqlens = b.node("Expand", [b.node("Sub", [total, b.const([1], np.int32)])[0], batch])[0]
        return seqlens, scalar

    seqlens, total = lengths(b.dim(x, 1, INT32))
    q, k, v = (b.node("MatMul", [x, b.randn(32, n)])[0] for n in (64, 32, 32))
    out, pk, pv = b.ms("GroupQueryAttention", [q, k, v, "", "", seqlens, total], 3, num_heads=4, kv_num_heads=2)
    # Packed QKV and rotary inside the operator.
    qkv = b.node("MatMul", [x, b.randn(32, 128)])[0]
    cos, sin = b.randn(64, 8), b.randn(64, 8)
    out2, pk2, pv2 = b.ms(
        "GroupQueryAttention",
        [qkv, "", "", "", "", seqlens, total, cos, sin],
        3,
        num_heads=4,
        kv_num_heads=2,
        do_rotary=1,
    )
    # One token with a cache of `past`.
    seqlens1, total1 = lengths(b.node("Add", [b.dim(past_k, 2, INT32), b.const([1], np.int32)])[0])
    q1, k1, v1 = (b.node("MatMul", [step, b.randn(32, n)])[0] for n in (64, 32, 32))
    out3, pk3, pv3 = b.ms(
        "GroupQueryAttention", [q1, k1, v1, past_k, past_v, seqlens1, total1], 3, num_heads=4, kv_num_heads=2
    )
    b.output(out, pk, pv, out2, pk2, pv2, out3, pk3, pv3)
    return b.model()


def misc_graph() -> onnx.ModelProto:
    """Normalizations, activations, FusedMatMul, FusedConv, Inverse, Trilu, MatMulNBits, ..."""
    b = Builder("misc_ops")
    x = b.input("x", FLOAT, ["batch", "sequence", 32])
    skip = b.input("skip", FLOAT, ["batch", "sequence", 32])
    ids = b.input("input_ids", INT32, ["batch", "sequence"])
    img = b.input("image", FLOAT, ["batch", 3, "height", "width"])
    g, beta, hb = b.randn(32), b.randn(32), b.randn(32)
    outs: list[str] = []
    outs += b.ms("SkipLayerNormalization", [x, skip, g, beta, hb], 4, epsilon=1e-5)
    outs += b.ms("SkipSimplifiedLayerNormalization", [x, skip, g], 4)
    outs += b.node("SimplifiedLayerNormalization", [x, g], 2, axis=-1)
    outs += b.ms(
        "EmbedLayerNormalization", [ids, ids, b.randn(100, 32), b.randn(64, 32), b.randn(100, 32), g, beta, ids], 3
    )
    outs += b.ms("FastGelu", [x, hb])
    outs += b.ms("BiasGelu", [x, hb])
    outs += b.ms("Gelu", [x])
    outs += b.ms("QuickGelu", [x], alpha=1.0)
    # FusedMatMul: transposes of the last two and of the batch dims.
    outs += b.ms("FusedMatMul", [x, skip], transB=1, alpha=0.5)  # [B,S,S]
    outs += b.ms("FusedMatMul", [x, skip], transA=1)  # [B,32,32]
    outs += b.ms("FusedMatMul", [x, b.randn(1, 32, 16)], transBatchA=1)  # x as [S,B,32] -> [S,B,16]
    outs += b.ms("FusedMatMul", [x, skip], transBatchA=1, transBatchB=1, transB=1)  # [S,B,B]
    outs += b.ms(
        "FusedGemm", [b.node("Flatten", [x], axis=2)[0], b.randn(16, 32), b.randn(16)], transB=1, activation="Relu"
    )
    outs += b.ms(
        "FusedConv", [img, b.randn(8, 3, 3, 3), b.randn(8)], strides=[2, 2], pads=[1, 1, 1, 1], activation="Relu"
    )
    outs += b.ms(
        "Inverse", [b.node("Add", [b.node("FusedMatMul", [x, x], domain=MS, transA=1)[0], b.const(np.eye(32) * 40)])[0]]
    )
    outs += b.ms("Trilu", [x, b.const(1, np.int64)], upper=0)
    outs += b.ms("Trilu", [x])
    # MatMulNBits: 4-bit weights K=32, N=16, block 16 -> B (16, 2, 8).
    wq = b.const(b.rng.integers(0, 256, (16, 2, 8)), np.uint8)
    outs += b.ms("MatMulNBits", [x, wq, b.const(b.rng.random((16, 2)) * 0.1)], K=32, N=16, bits=4, block_size=16)
    b.output(*outs)
    return b.model()


def quant_graph() -> onnx.ModelProto:
    """Quantized contrib operators in the layouts and forms the quantizers' models do not show."""
    b = Builder("quant_ops")
    x = b.input("x", FLOAT, ["batch", "sequence", 32])
    img = b.input("image", FLOAT, ["batch", "height", "width", 3])  # NHWC
    outs: list[str] = []
    xq, xs, xz = b.node("DynamicQuantizeLinear", [x], 3)
    wq = b.const(b.rng.integers(-127, 127, (32, 16)), np.int8)
    outs += b.ms("MatMulIntegerToFloat", [xq, wq, xs, b.const(0.02), xz, "", b.randn(16)])
    (q_img,) = b.ms("QuantizeLinear", [img, b.const(0.05)])  # no zero point: uint8
    scale, zp = b.const(0.05), b.const(128, np.uint8)
    w_conv = b.const(b.rng.integers(-127, 127, (8, 3, 3, 3)), np.int8)
    conv_args = [q_img, scale, zp, w_conv, b.const(0.01), b.const(0, np.int8), b.const(0.1), zp]
    (conv,) = b.ms("QLinearConv", conv_args, channels_last=1, strides=[2, 2], pads=[1, 1, 1, 1])
    outs += [q_img, conv]
    outs += b.ms(
        "QLinearAveragePool",
        [conv, b.const(0.1), zp, b.const(0.1), zp],
        channels_last=1,
        kernel_shape=[3, 3],
        strides=[2, 2],
        pads=[1, 1, 1, 1],
    )
    outs += b.ms("QLinearGlobalAveragePool", [conv, b.const(0.1), zp, b.const(0.1), zp], channels_last=1)
    outs += b.ms("DequantizeLinear", [conv, b.const(0.1), zp])
    cond = b.node("Greater", [x, b.const(0.0)])[0]
    xq8 = b.ms("QuantizeLinear", [x, b.const(0.05), zp])[0]
    outs += b.ms("QLinearWhere", [cond, xq8, scale, zp, b.const(np.full(32, 7), np.uint8), scale, zp, scale, zp])
    outs += b.ms("QLinearSoftmax", [xq8, scale, zp, b.const(1.0 / 256), b.const(0, np.uint8)], opset=13)
    x16 = b.node("Cast", [b.node("Mul", [x, b.const(10.0)])[0]], to=TensorProto.INT16)[0]
    outs += b.ms("MatMulInteger16", [x16, b.const(b.rng.integers(-100, 100, (32, 8)), np.int16)])
    outs += b.ms("TransposeMatMul", [x, x], transB=1)
    b.output(*outs)
    return b.model()


# --------------------------------------------------------------------------- #
# The list
# --------------------------------------------------------------------------- #


def text_fills(file: str) -> dict[str, dict[str, Any]]:
    return {i["name"]: i["fill"] for i in corpus_entry(file)["inputs"]}


def versions() -> dict[str, str]:
    import importlib

    out = {"python": sys.version.split()[0]}
    for name in ("onnx", "onnxruntime", "numpy", "torch", "transformers", "onnx_ir"):
        try:
            out[name] = importlib.import_module(name).__version__
        except ImportError:
            pass
    return out


def merge(kept: list[dict[str, Any]], made: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The kept entries with the remade ones in their place, new ones at the end."""
    by_file = {e["file"]: e for e in made}
    out = [by_file.pop(e["file"], e) for e in kept]
    return out + [e for e in made if e["file"] in by_file]


def main(only: list[str]) -> int:
    """Make every model, or (with arguments) those whose file name contains one of them."""
    manifest_path = HERE / "manifest.json"
    kept = json.loads(manifest_path.read_text())["models"] if only and manifest_path.exists() else []
    entries: list[dict[str, Any]] = []
    work = Path(tempfile.mkdtemp(prefix="ms_models_"))

    def add(
        file: str,
        build: Callable[[], onnx.ModelProto],
        source: str,
        how: str,
        fills: dict[str, Any],
        bindings: list[dict[str, int]],
    ) -> onnx.ModelProto | None:
        if only and not any(o in file for o in only):
            return None
        try:
            model = build()
            entries.append(save(model, file, source, how, fills, bindings))
            return model
        except Exception as e:  # keep going: one tool's failure must not lose the others
            print(f"{file}: FAILED {type(e).__name__}: {e}", file=sys.stderr, flush=True)
            return None

    corpus = [
        ("bert_torchscript", "bert", 2, 1),
        ("bert_dynamo", "bert", 2, 1),
        ("gpt2_torchscript", "gpt2", 2, 1),
        ("llama_torchscript", "gpt2", 4, 2),
        ("llama_dynamo", "gpt2", 4, 2),
        ("vit_torchscript", "vit", 2, 1),
        ("whisper_encoder_torchscript", "bert", 2, 1),
    ]
    for stem, model_type, heads, level in corpus:
        src = CORPUS / f"{stem}.onnx"
        entry = corpus_entry(src.name)
        bindings = [b["dims"] for b in entry["bindings"]]
        add(
            f"{stem}.opt.onnx",
            lambda: optimize(src, model_type, heads, level),
            src.name,
            f"optimize_model(model_type={model_type!r}, num_heads={heads}, hidden_size=32, opt_level={level})",
            text_fills(src.name),
            bindings,
        )

    gpt2 = CORPUS / "gpt2_torchscript.onnx"
    gpt2_fills = text_fills(gpt2.name)
    add(
        "gpt2_torchscript.opt.fp16.onnx",
        lambda: optimize(gpt2, "gpt2", 2, 1, fp16=True),
        gpt2.name,
        "optimize_model(gpt2, opt_level=1), convert_float_to_float16(keep_io_types=True)",
        gpt2_fills,
        TEXT_BINDINGS,
    )
    add(
        "gpt2_torchscript.opt.int4.onnx",
        lambda: int4(optimize(gpt2, "gpt2", 2, 1), gather=True),
        gpt2.name,
        "optimize_model(gpt2, opt_level=1), MatMulNBitsQuantizer(4 bits, block 16, MatMul and Gather)",
        gpt2_fills,
        TEXT_BINDINGS,
    )
    llama = CORPUS / "llama_dynamo.onnx"
    add(
        "llama_dynamo.opt.int4.onnx",
        lambda: int4(optimize(llama, "gpt2", 4, 2)),
        llama.name,
        "optimize_model(gpt2, num_heads=4, opt_level=2), MatMulNBitsQuantizer(4 bits, block 16)",
        text_fills(llama.name),
        TEXT_BINDINGS,
    )

    # BERT with eager attention: Attention and EmbedLayerNormalization fuse.
    bert_fills = text_fills("bert_torchscript.onnx")
    eager = work / "bert_eager.onnx"
    eager_files = ("bert_eager.opt.onnx", "bert_eager.opt.fp16.onnx", "bert_eager.mha.onnx", "bert_eager.opt.qdyn.onnx")
    if not only or any(o in f for f in eager_files for o in only):
        try:
            export_eager_bert(eager)
        except Exception as e:
            print(f"eager BERT export FAILED {type(e).__name__}: {e}", file=sys.stderr)
    if eager.exists():
        how = "BertModel(attn_implementation='eager') exported by torch.onnx.export(dynamo=False, opset 17), "
        bert_opt = add(
            "bert_eager.opt.onnx",
            lambda: optimize(eager, "bert", 2, 1),
            "bert_eager (made here)",
            how + "optimize_model(bert, opt_level=1)",
            bert_fills,
            TEXT_BINDINGS,
        )
        add(
            "bert_eager.opt.fp16.onnx",
            lambda: optimize(eager, "bert", 2, 1, fp16=True),
            "bert_eager",
            how + "optimize_model(bert, opt_level=1), float16 (keep_io_types)",
            bert_fills,
            TEXT_BINDINGS,
        )
        add(
            "bert_eager.mha.onnx",
            lambda: optimize(eager, "bert", 2, 1, use_multi_head_attention=True),
            "bert_eager",
            how + "optimize_model(bert, opt_level=1, use_multi_head_attention=True)",
            bert_fills,
            TEXT_BINDINGS,
        )
        if bert_opt is not None:
            add(
                "bert_eager.opt.qdyn.onnx",
                lambda: ort_extended(dynamic_int8(bert_opt, work, "bert_q"), work, "bert_q"),
                "bert_eager",
                how + "optimize_model(bert), quantize_dynamic(QInt8), onnxruntime ORT_ENABLE_EXTENDED saved",
                bert_fills,
                TEXT_BINDINGS,
            )

    resnet = onnx.load(str(CORPUS / "resnet_torchscript.onnx"))
    img_fills = {"pixel_values": {"kind": "randn"}}
    add(
        "resnet_torchscript.qop.onnx",
        lambda: static(resnet, work, "resnet_qop", img_fills, IMAGE_BINDINGS, False),
        "resnet_torchscript.onnx",
        "quantize_static(QOperator, QUInt8 activations, QInt8 weights)",
        img_fills,
        IMAGE_BINDINGS,
    )
    add(
        "resnet_torchscript.qdq_ms.onnx",
        lambda: static(resnet, work, "resnet_qdq", img_fills, IMAGE_BINDINGS, True, ms_qdq=True),
        "resnet_torchscript.onnx",
        "quantize_static(QDQ, UseQDQContribOps=True)",
        img_fills,
        IMAGE_BINDINGS,
    )
    add(
        "resnet_torchscript.ort2.onnx",
        lambda: ort_extended(resnet, work, "resnet_ort"),
        "resnet_torchscript.onnx",
        "onnxruntime ORT_ENABLE_EXTENDED saved (FusedConv)",
        img_fills,
        IMAGE_BINDINGS,
    )
    cnn_fills = {"x": {"kind": "randn"}}
    add(
        "small_cnn.qop.onnx",
        lambda: static(small_cnn(), work, "cnn", cnn_fills, IMAGE_BINDINGS, False),
        "small_cnn (made here)",
        "quantize_static(QOperator)",
        cnn_fills,
        IMAGE_BINDINGS,
    )
    mm_bindings = [{"batch": 2, "sequence": 7, "past": 5}, {"batch": 3, "sequence": 11, "past": 4}]
    add(
        "transposed_matmuls.ort2.onnx",
        lambda: ort_extended(transposed_matmuls(), work, "tmm"),
        "transposed_matmuls (made here)",
        "onnxruntime ORT_ENABLE_EXTENDED saved (FusedMatMul)",
        {},
        mm_bindings,
    )

    text3 = [
        {"batch": 2, "sequence": 7, "past": 5, "memory_length": 4},
        {"batch": 3, "sequence": 11, "past": 3, "memory_length": 9},
    ]
    add(
        "attention_ops.onnx",
        attention_graph,
        "made here",
        "hand-built contrib attention nodes",
        {"position_ids": {"kind": "randint", "low": 0, "high": 64}},
        text3,
    )
    add("group_query_attention.onnx", gqa_graph, "made here", "hand-built GroupQueryAttention nodes", {}, text3)
    misc_bindings = [
        {"batch": 2, "sequence": 7, "height": 16, "width": 16},
        {"batch": 3, "sequence": 11, "height": 21, "width": 18},
    ]
    add(
        "misc_ops.onnx",
        misc_graph,
        "made here",
        "hand-built contrib nodes",
        {"input_ids": {"kind": "randint", "low": 0, "high": 2}},
        misc_bindings,
    )

    quant_bindings = [
        {"batch": 2, "sequence": 7, "height": 16, "width": 16},
        {"batch": 3, "sequence": 11, "height": 21, "width": 18},
    ]
    add("quant_ops.onnx", quant_graph, "made here", "hand-built quantized contrib nodes", {}, quant_bindings)

    manifest = {
        "description": "com.microsoft test models, made by tests/models/ms/make_ms_models.py",
        "seed": SEED,
        "versions": versions(),
        "models": merge(kept, entries),
    }
    (HERE / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
