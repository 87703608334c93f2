"""Export the onnx-infer test corpus: tiny real models, each exported two ways.

Every model is built from a config with random weights (``torch.manual_seed(0)``),
so nothing is downloaded from a model hub. Each architecture is exported with

* the TorchScript exporter (``torch.onnx.export(..., dynamo=False)``, opset 17,
  ``dynamic_axes``), saved as ``<name>_torchscript.onnx``;
* the dynamo exporter (``torch.onnx.export(..., dynamo=True)``, the exporter's
  default opset, ``dynamic_shapes`` built from ``torch.export.Dim``), saved as
  ``<name>_dynamo.onnx``.

After export, every ``graph.value_info`` entry is stripped (the engine under test
must infer intermediate shapes itself) while graph inputs and outputs are kept as
exported. Each file is then checked with ``onnx.checker.check_model``, its inputs
are checked to carry the symbolic dims as ``dim_param``, and it is run in
onnxruntime at two different bindings of those dims; the outputs are compared
against PyTorch. The results are written to ``manifest.json`` beside this script,
and the tiny BERT (TorchScript variant) is also copied to
``examples/bert_tiny.onnx``.

Run it with the export venv (see ``tests/models/README.md``)::

    /work/export-venv/bin/python tests/models/export_corpus.py
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import logging
import shutil
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import torch
import transformers
from torch import nn
from torch.export import Dim

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent.parent
EXAMPLE_BERT = REPO_ROOT / "examples" / "bert_tiny.onnx"

TORCHSCRIPT_OPSET = 17
SEED = 0
VOCAB = 100
MAX_POSITIONS = 64
ATOL = 1e-4
RTOL = 1e-3

log = logging.getLogger("export_corpus")

Binding = dict[str, int]


# --------------------------------------------------------------------------- #
# Input descriptions and filling
# --------------------------------------------------------------------------- #


@dataclass(frozen=True)
class InputSpec:
    """One graph input: its name, element type, dims and how to fill it.

    ``dims`` holds ints for fixed axes and strings for symbolic axes; the strings
    are the ``dim_param`` names the exported graph input must carry.
    ``fill`` is one of ``"randint"`` (uniform ints in ``[low, high)``),
    ``"ones"``, ``"zeros"`` or ``"randn"`` (standard normal floats).
    """

    name: str
    dtype: str
    dims: tuple[int | str, ...]
    fill: str
    low: int | None = None
    high: int | None = None

    def shape(self, binding: Binding) -> tuple[int, ...]:
        """Concrete shape of this input under ``binding``."""
        return tuple(d if isinstance(d, int) else binding[d] for d in self.dims)

    def fill_json(self) -> dict[str, Any]:
        """The manifest's description of how to fill this input."""
        out: dict[str, Any] = {"kind": self.fill}
        if self.fill == "randint":
            out["low"] = self.low
            out["high"] = self.high
        return out


def make_array(spec: InputSpec, binding: Binding, rng: np.random.Generator) -> np.ndarray:
    """Build one numpy input as described by ``spec`` (same rules the tests use)."""
    shape = spec.shape(binding)
    dtype = np.dtype(spec.dtype)
    if spec.fill == "randint":
        assert spec.low is not None and spec.high is not None
        return rng.integers(spec.low, spec.high, size=shape).astype(dtype)
    if spec.fill == "ones":
        return np.ones(shape, dtype=dtype)
    if spec.fill == "zeros":
        return np.zeros(shape, dtype=dtype)
    if spec.fill == "randn":
        return rng.standard_normal(shape).astype(dtype)
    raise ValueError(f"unknown fill kind {spec.fill!r}")


def make_feed(inputs: Sequence[InputSpec], binding: Binding, seed: int = SEED) -> dict[str, np.ndarray]:
    """Inputs for every graph input under ``binding``, from a seeded generator."""
    rng = np.random.default_rng(seed)
    return {spec.name: make_array(spec, binding, rng) for spec in inputs}


# --------------------------------------------------------------------------- #
# Models
# --------------------------------------------------------------------------- #


class BertWrapper(nn.Module):
    """BertModel returning plain tensors."""

    def __init__(self) -> None:
        super().__init__()
        config = transformers.BertConfig(
            vocab_size=VOCAB,
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=64,
            max_position_embeddings=MAX_POSITIONS,
            type_vocab_size=2,
        )
        self.model = transformers.BertModel(config)

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        token_type_ids: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        out = self.model(
            input_ids=input_ids,
            attention_mask=attention_mask,
            token_type_ids=token_type_ids,
            return_dict=True,
        )
        return out.last_hidden_state, out.pooler_output


class Gpt2Wrapper(nn.Module):
    """GPT2LMHeadModel (no KV cache) returning the logits."""

    def __init__(self) -> None:
        super().__init__()
        config = transformers.GPT2Config(
            vocab_size=VOCAB,
            n_positions=MAX_POSITIONS,
            n_embd=32,
            n_layer=2,
            n_head=2,
            bos_token_id=0,
            eos_token_id=0,
            use_cache=False,
        )
        self.model = transformers.GPT2LMHeadModel(config)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        out = self.model(
            input_ids=input_ids,
            attention_mask=attention_mask,
            use_cache=False,
            return_dict=True,
        )
        return out.logits


class LlamaWrapper(nn.Module):
    """LlamaForCausalLM (no KV cache, grouped-query attention, RoPE) -> logits."""

    def __init__(self) -> None:
        super().__init__()
        config = transformers.LlamaConfig(
            vocab_size=VOCAB,
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            max_position_embeddings=MAX_POSITIONS,
            use_cache=False,
        )
        self.model = transformers.LlamaForCausalLM(config)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        out = self.model(
            input_ids=input_ids,
            attention_mask=attention_mask,
            use_cache=False,
            return_dict=True,
        )
        return out.logits


class BasicBlock(nn.Module):
    """ResNet basic block: two 3x3 convs with batch norm and a residual."""

    def __init__(self, in_channels: int, out_channels: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, out_channels, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_channels)
        self.relu = nn.ReLU(inplace=True)
        self.downsample: nn.Module | None = None
        if stride != 1 or in_channels != out_channels:
            self.downsample = nn.Sequential(
                nn.Conv2d(in_channels, out_channels, 1, stride, bias=False),
                nn.BatchNorm2d(out_channels),
            )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + identity)


class TinyResNet(nn.Module):
    """A small ResNet: 7x7/2 stem + max pool, three basic blocks, avg pool, fc."""

    def __init__(self, num_classes: int = 10) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = BasicBlock(16, 16)
        self.layer2 = BasicBlock(16, 32, stride=2)
        self.layer3 = BasicBlock(32, 64, stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(64, num_classes)
        # Non-trivial running statistics, so batch norm is not an identity.
        for module in self.modules():
            if isinstance(module, nn.BatchNorm2d):
                n = module.num_features
                with torch.no_grad():
                    module.running_mean.copy_(0.1 * torch.randn(n))
                    module.running_var.copy_(1.0 + 0.1 * torch.rand(n))

    def forward(self, pixel_values: torch.Tensor) -> torch.Tensor:
        x = self.maxpool(self.relu(self.bn1(self.conv1(pixel_values))))
        x = self.layer3(self.layer2(self.layer1(x)))
        x = torch.flatten(self.avgpool(x), 1)
        return self.fc(x)


class VitWrapper(nn.Module):
    """ViTModel (32x32 images, 8x8 patches) returning plain tensors."""

    def __init__(self) -> None:
        super().__init__()
        config = transformers.ViTConfig(
            image_size=32,
            patch_size=8,
            num_channels=3,
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=64,
        )
        self.model = transformers.ViTModel(config)

    def forward(self, pixel_values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        out = self.model(pixel_values=pixel_values, return_dict=True)
        return out.last_hidden_state, out.pooler_output


WHISPER_MELS = 80
WHISPER_SOURCE_POSITIONS = 50


class WhisperEncoderWrapper(nn.Module):
    """Whisper's audio encoder (two convs + transformer) returning hidden states."""

    def __init__(self) -> None:
        super().__init__()
        config = transformers.WhisperConfig(
            vocab_size=VOCAB,
            num_mel_bins=WHISPER_MELS,
            d_model=32,
            encoder_layers=2,
            encoder_attention_heads=2,
            encoder_ffn_dim=64,
            decoder_layers=2,
            decoder_attention_heads=2,
            decoder_ffn_dim=64,
            max_source_positions=WHISPER_SOURCE_POSITIONS,
            max_target_positions=MAX_POSITIONS,
            pad_token_id=1,
            bos_token_id=2,
            eos_token_id=2,
            decoder_start_token_id=3,
            begin_suppress_tokens=None,
        )
        encoder_cls = transformers.models.whisper.modeling_whisper.WhisperEncoder
        self.model = encoder_cls(config)

    def forward(self, input_features: torch.Tensor) -> torch.Tensor:
        return self.model(input_features=input_features, return_dict=True).last_hidden_state


# --------------------------------------------------------------------------- #
# Corpus description
# --------------------------------------------------------------------------- #


@dataclass(frozen=True)
class ModelSpec:
    """One architecture of the corpus and how to export and exercise it."""

    name: str
    architecture: str
    build: Callable[[], nn.Module]
    inputs: tuple[InputSpec, ...]
    outputs: tuple[str, ...]
    # dim_param name -> (min, max) accepted by torch.export.Dim.
    dim_ranges: dict[str, tuple[int, int]]
    # Sizes used to trace/export; distinct from the two verified bindings.
    export_binding: Binding
    bindings: tuple[Binding, Binding]
    notes: str = ""
    # Output axes (by output name) that are dynamic, for the TorchScript exporter.
    output_axes: dict[str, dict[int, str]] = field(default_factory=dict)


def _token_inputs(with_token_types: bool) -> tuple[InputSpec, ...]:
    """input_ids / attention_mask (/ token_type_ids) of shape [batch, sequence]."""
    dims: tuple[int | str, ...] = ("batch", "sequence")
    specs = [
        InputSpec("input_ids", "int64", dims, "randint", 0, VOCAB),
        InputSpec("attention_mask", "int64", dims, "ones"),
    ]
    if with_token_types:
        specs.append(InputSpec("token_type_ids", "int64", dims, "zeros"))
    return tuple(specs)


_TEXT_RANGES = {"batch": (1, 64), "sequence": (2, MAX_POSITIONS)}
_TEXT_EXPORT = {"batch": 4, "sequence": 9}
_TEXT_BINDINGS: tuple[Binding, Binding] = (
    {"batch": 2, "sequence": 7},
    {"batch": 3, "sequence": 11},
)
_BS = {0: "batch", 1: "sequence"}

SPECS: tuple[ModelSpec, ...] = (
    ModelSpec(
        name="bert",
        architecture="BertModel",
        build=BertWrapper,
        inputs=_token_inputs(with_token_types=True),
        outputs=("last_hidden_state", "pooler_output"),
        dim_ranges=_TEXT_RANGES,
        export_binding=_TEXT_EXPORT,
        bindings=_TEXT_BINDINGS,
        output_axes={"last_hidden_state": _BS, "pooler_output": {0: "batch"}},
    ),
    ModelSpec(
        name="gpt2",
        architecture="GPT2LMHeadModel",
        build=Gpt2Wrapper,
        inputs=_token_inputs(with_token_types=False),
        outputs=("logits",),
        dim_ranges=_TEXT_RANGES,
        export_binding=_TEXT_EXPORT,
        bindings=_TEXT_BINDINGS,
        output_axes={"logits": _BS},
    ),
    ModelSpec(
        name="llama",
        architecture="LlamaForCausalLM",
        build=LlamaWrapper,
        inputs=_token_inputs(with_token_types=False),
        outputs=("logits",),
        dim_ranges=_TEXT_RANGES,
        export_binding=_TEXT_EXPORT,
        bindings=_TEXT_BINDINGS,
        output_axes={"logits": _BS},
    ),
    ModelSpec(
        name="resnet",
        architecture="TinyResNet (hand-written BasicBlock ResNet)",
        build=TinyResNet,
        inputs=(InputSpec("pixel_values", "float32", ("batch", 3, "height", "width"), "randn"),),
        outputs=("logits",),
        dim_ranges={"batch": (1, 64), "height": (32, 1024), "width": (32, 1024)},
        export_binding={"batch": 4, "height": 64, "width": 64},
        bindings=(
            {"batch": 2, "height": 64, "width": 64},
            {"batch": 3, "height": 96, "width": 80},
        ),
        output_axes={"logits": {0: "batch"}},
    ),
    ModelSpec(
        name="vit",
        architecture="ViTModel",
        build=VitWrapper,
        inputs=(InputSpec("pixel_values", "float32", ("batch", 3, 32, 32), "randn"),),
        outputs=("last_hidden_state", "pooler_output"),
        dim_ranges={"batch": (1, 64)},
        export_binding={"batch": 4},
        bindings=({"batch": 2}, {"batch": 3}),
        notes="image size fixed at 32x32 by the position embeddings",
        output_axes={"last_hidden_state": {0: "batch"}, "pooler_output": {0: "batch"}},
    ),
    ModelSpec(
        name="whisper_encoder",
        architecture="WhisperEncoder",
        build=WhisperEncoderWrapper,
        inputs=(
            InputSpec(
                "input_features",
                "float32",
                ("batch", WHISPER_MELS, 2 * WHISPER_SOURCE_POSITIONS),
                "randn",
            ),
        ),
        outputs=("last_hidden_state",),
        dim_ranges={"batch": (1, 64)},
        export_binding={"batch": 4},
        bindings=({"batch": 2}, {"batch": 3}),
        notes="time axis fixed at 2*max_source_positions by the position embeddings",
        output_axes={"last_hidden_state": {0: "batch"}},
    ),
)


# --------------------------------------------------------------------------- #
# Export
# --------------------------------------------------------------------------- #


def build_model(spec: ModelSpec) -> nn.Module:
    """Build ``spec``'s model deterministically from seed ``SEED`` in eval mode."""
    torch.manual_seed(SEED)
    model = spec.build()
    model.eval()
    return model


def torch_args(spec: ModelSpec, binding: Binding) -> tuple[torch.Tensor, ...]:
    """Positional torch inputs for ``spec`` under ``binding``."""
    feed = make_feed(spec.inputs, binding)
    return tuple(torch.from_numpy(feed[i.name]) for i in spec.inputs)


def export_torchscript(spec: ModelSpec, model: nn.Module) -> onnx.ModelProto:
    """Export with the TorchScript exporter (opset 17, ``dynamic_axes``)."""
    dynamic_axes: dict[str, dict[int, str]] = {}
    for inp in spec.inputs:
        axes = {i: d for i, d in enumerate(inp.dims) if isinstance(d, str)}
        if axes:
            dynamic_axes[inp.name] = axes
    dynamic_axes.update(spec.output_axes)
    buffer = io.BytesIO()
    torch.onnx.export(
        model,
        torch_args(spec, spec.export_binding),
        buffer,
        input_names=[i.name for i in spec.inputs],
        output_names=list(spec.outputs),
        opset_version=TORCHSCRIPT_OPSET,
        dynamic_axes=dynamic_axes,
        dynamo=False,
    )
    return onnx.load_from_string(buffer.getvalue())


def export_dynamo(spec: ModelSpec, model: nn.Module) -> onnx.ModelProto:
    """Export with the dynamo exporter (default opset, ``torch.export.Dim``)."""
    dims = {name: Dim(name, min=lo, max=hi) for name, (lo, hi) in spec.dim_ranges.items()}
    dynamic_shapes = {
        inp.name: {i: dims[d] for i, d in enumerate(inp.dims) if isinstance(d, str)} for inp in spec.inputs
    }
    program = torch.onnx.export(
        model,
        torch_args(spec, spec.export_binding),
        input_names=[i.name for i in spec.inputs],
        output_names=list(spec.outputs),
        dynamic_shapes=dynamic_shapes,
        dynamo=True,
        external_data=False,
    )
    assert program is not None
    return program.model_proto


EXPORTERS: dict[str, Callable[[ModelSpec, nn.Module], onnx.ModelProto]] = {
    "torchscript": export_torchscript,
    "dynamo": export_dynamo,
}


# --------------------------------------------------------------------------- #
# Post-processing and verification
# --------------------------------------------------------------------------- #


def _graphs(graph: onnx.GraphProto) -> Iterator[onnx.GraphProto]:
    """``graph`` and every subgraph nested in its nodes' attributes."""
    yield graph
    for node in graph.node:
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                yield from _graphs(attr.g)
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for sub in attr.graphs:
                    yield from _graphs(sub)


def strip_value_info(model: onnx.ModelProto) -> int:
    """Remove every intermediate ``value_info`` (graphs, subgraphs, functions).

    Returns how many entries were removed.
    """
    removed = 0
    for graph in _graphs(model.graph):
        removed += len(graph.value_info)
        del graph.value_info[:]
    for function in model.functions:
        removed += len(function.value_info)
        del function.value_info[:]
        for node in function.node:
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.GRAPH:
                    for sub in _graphs(attr.g):
                        removed += len(sub.value_info)
                        del sub.value_info[:]
    return removed


def strip_node_metadata(model: onnx.ModelProto) -> int:
    """Remove per-node ``metadata_props`` and ``doc_string`` (exporter debug info).

    The dynamo exporter records stack traces with absolute paths and FX node
    dumps on every node; they more than double the file size and tie the bytes
    to the machine that exported them. Returns how many nodes were cleaned.
    """
    cleaned = 0
    nodes = [n for g in _graphs(model.graph) for n in g.node]
    for function in model.functions:
        nodes.extend(function.node)
    for node in nodes:
        if node.metadata_props or node.doc_string:
            cleaned += 1
        del node.metadata_props[:]
        node.doc_string = ""
    return cleaned


def value_dims(value: onnx.ValueInfoProto) -> list[int | str | None]:
    """Dims of a graph input/output: int, dim_param name, or None if unknown."""
    dims: list[int | str | None] = []
    for dim in value.type.tensor_type.shape.dim:
        if dim.HasField("dim_value"):
            dims.append(dim.dim_value)
        elif dim.HasField("dim_param"):
            dims.append(dim.dim_param)
        else:
            dims.append(None)
    return dims


def default_opset(model: onnx.ModelProto) -> int:
    """The model's opset for the default ONNX domain."""
    for entry in model.opset_import:
        if entry.domain in ("", "ai.onnx"):
            return entry.version
    raise ValueError("model imports no default-domain opset")


def check_inputs(spec: ModelSpec, model: onnx.ModelProto) -> None:
    """Assert graph inputs match ``spec``: names, types, and dim_params."""
    got = {v.name: v for v in model.graph.input}
    initializers = {t.name for t in model.graph.initializer}
    real_inputs = [name for name in got if name not in initializers]
    expected = [i.name for i in spec.inputs]
    if real_inputs != expected:
        raise AssertionError(f"graph inputs {real_inputs} != expected {expected}")
    for inp in spec.inputs:
        value = got[inp.name]
        elem = onnx.helper.tensor_dtype_to_np_dtype(value.type.tensor_type.elem_type)
        if elem != np.dtype(inp.dtype):
            raise AssertionError(f"{inp.name}: element type {elem} != {inp.dtype}")
        if value_dims(value) != list(inp.dims):
            raise AssertionError(f"{inp.name}: dims {value_dims(value)} != {list(inp.dims)}")


def run_and_compare(spec: ModelSpec, model: nn.Module, data: bytes) -> list[dict[str, list[int]]]:
    """Run the ONNX model at both bindings; compare against torch.

    Returns, per binding, the concrete shape of every output.
    """
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
    output_names = [o.name for o in session.get_outputs()]
    if output_names != list(spec.outputs):
        raise AssertionError(f"outputs {output_names} != {list(spec.outputs)}")
    shapes: list[dict[str, list[int]]] = []
    for binding in spec.bindings:
        feed = make_feed(spec.inputs, binding)
        got = session.run(None, feed)
        with torch.no_grad():
            expected = model(*(torch.from_numpy(feed[i.name]) for i in spec.inputs))
        if isinstance(expected, torch.Tensor):
            expected = (expected,)
        for name, actual, ref in zip(output_names, got, expected, strict=True):
            ref_np = ref.numpy()
            if actual.shape != ref_np.shape:
                raise AssertionError(f"{name} at {binding}: shape {actual.shape} != torch {ref_np.shape}")
            np.testing.assert_allclose(actual, ref_np, rtol=RTOL, atol=ATOL, err_msg=f"{name} at {binding}")
        shapes.append({n: list(a.shape) for n, a in zip(output_names, got, strict=True)})
    return shapes


def op_counts(model: onnx.ModelProto) -> dict[str, int]:
    """Count nodes by ``domain::op_type`` over the graph, subgraphs and functions."""
    counts: dict[str, int] = {}
    nodes: list[onnx.NodeProto] = [n for g in _graphs(model.graph) for n in g.node]
    for function in model.functions:
        nodes.extend(function.node)
    for node in nodes:
        key = f"{node.domain or 'ai.onnx'}::{node.op_type}"
        counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items()))


def export_one(spec: ModelSpec, exporter: str, out_dir: Path) -> dict[str, Any]:
    """Export, strip, check, run and save one model; return its manifest entry."""
    model = build_model(spec)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        proto = EXPORTERS[exporter](spec, model)
    removed = strip_value_info(proto)
    strip_node_metadata(proto)
    onnx.checker.check_model(proto, full_check=False)
    check_inputs(spec, proto)
    data = proto.SerializeToString()
    output_shapes = run_and_compare(spec, model, data)

    file_name = f"{spec.name}_{exporter}.onnx"
    path = out_dir / file_name
    path.write_bytes(data)
    # Re-load from disk and check there too, as the tests will.
    onnx.checker.check_model(str(path))
    log.info(
        "%-32s %7d bytes %4d nodes (stripped %d value_info)",
        file_name,
        len(data),
        len(proto.graph.node),
        removed,
    )

    opsets = {e.domain or "ai.onnx": e.version for e in proto.opset_import}
    inputs_json = []
    for inp in spec.inputs:
        value = next(v for v in proto.graph.input if v.name == inp.name)
        inputs_json.append(
            {
                "name": inp.name,
                "elem_type": inp.dtype,
                "onnx_elem_type": value.type.tensor_type.elem_type,
                "dims": list(inp.dims),
                "fill": inp.fill_json(),
            }
        )
    outputs_json = [
        {
            "name": v.name,
            "elem_type": str(onnx.helper.tensor_dtype_to_np_dtype(v.type.tensor_type.elem_type)),
            "onnx_elem_type": v.type.tensor_type.elem_type,
            "dims": value_dims(v),
        }
        for v in proto.graph.output
    ]
    return {
        "file": file_name,
        "model": spec.name,
        "architecture": spec.architecture,
        "exporter": exporter,
        "opset": default_opset(proto),
        "opset_imports": dict(sorted(opsets.items())),
        "ir_version": proto.ir_version,
        "size_bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "node_count": len(proto.graph.node),
        "op_counts": op_counts(proto),
        "dim_ranges": {k: list(v) for k, v in spec.dim_ranges.items()},
        "inputs": inputs_json,
        "outputs": outputs_json,
        "bindings": [
            {"dims": dict(binding), "output_shapes": shapes}
            for binding, shapes in zip(spec.bindings, output_shapes, strict=True)
        ],
        "notes": spec.notes,
    }


# --------------------------------------------------------------------------- #
# Driver
# --------------------------------------------------------------------------- #


def versions() -> dict[str, str]:
    """Versions of the packages that shaped the exported files."""
    import onnxscript

    return {
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "onnx": onnx.__version__,
        "onnxscript": onnxscript.__version__,
        "onnxruntime": ort.__version__,
        "numpy": np.__version__,
    }


def _order(model: str, exporter: str) -> tuple[int, int]:
    """Sort key: corpus order of the model, then torchscript before dynamo."""
    model_index = next(i for i, s in enumerate(SPECS) if s.name == model)
    return model_index, ["torchscript", "dynamo"].index(exporter)


def merge_previous(
    manifest_path: Path, entries: list[dict[str, Any]], failures: list[dict[str, str]]
) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """Keep the old manifest's records for (model, exporter) pairs not redone now.

    This lets a partial run (``export_corpus.py gpt2``) update the manifest in
    place instead of dropping the other models from it.
    """
    redone = {(e["model"], e["exporter"]) for e in entries}
    redone |= {(f["model"], f["exporter"]) for f in failures}
    if manifest_path.exists():
        old = json.loads(manifest_path.read_text())
        known = {s.name for s in SPECS}
        for entry in old.get("models", []):
            key = (entry["model"], entry["exporter"])
            if key not in redone and entry["model"] in known:
                entries.append(entry)
        for failure in old.get("failed_exports", []):
            key = (failure["model"], failure["exporter"])
            if key not in redone and failure["model"] in known:
                failures.append(failure)
    entries.sort(key=lambda e: _order(e["model"], e["exporter"]))
    failures.sort(key=lambda f: _order(f["model"], f["exporter"]))
    return entries, failures


def main(argv: Sequence[str] | None = None) -> int:
    """Export the whole corpus (or the models named on the command line)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", help="model names to export (default: all)")
    parser.add_argument("--out-dir", type=Path, default=HERE, help="where to write the corpus")
    parser.add_argument(
        "--exporter",
        choices=sorted(EXPORTERS),
        action="append",
        help="restrict exporters",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    for noisy in ("torch", "onnxscript", "transformers", "torch.onnx"):
        logging.getLogger(noisy).setLevel(logging.ERROR)
    torch.use_deterministic_algorithms(True)

    names = set(args.models) or {s.name for s in SPECS}
    unknown = names - {s.name for s in SPECS}
    if unknown:
        parser.error(f"unknown models: {sorted(unknown)}")
    exporters = args.exporter or ["torchscript", "dynamo"]
    out_dir: Path = args.out_dir
    out_dir.mkdir(parents=True, exist_ok=True)

    entries: list[dict[str, Any]] = []
    failures: list[dict[str, str]] = []
    for spec in SPECS:
        if spec.name not in names:
            continue
        for exporter in exporters:
            try:
                entries.append(export_one(spec, exporter, out_dir))
            except Exception as exc:
                error = f"{type(exc).__name__}: {exc}"
                log.error("FAILED %s/%s: %s", spec.name, exporter, error)
                failures.append({"model": spec.name, "exporter": exporter, "error": error})

    manifest_path = out_dir / "manifest.json"
    entries, failures = merge_previous(manifest_path, entries, failures)
    manifest = {
        "description": "onnx-infer test corpus, made by tests/models/export_corpus.py",
        "seed": SEED,
        "versions": versions(),
        "fill_kinds": {
            "randint": "uniform integers in [low, high)",
            "ones": "all ones",
            "zeros": "all zeros",
            "randn": "standard normal floats",
        },
        "models": entries,
        "failed_exports": failures,
    }
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n")
    log.info("wrote %s (%d models, %d failures)", manifest_path, len(entries), len(failures))

    bert = out_dir / "bert_torchscript.onnx"
    if out_dir == HERE and bert.exists():
        EXAMPLE_BERT.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(bert, EXAMPLE_BERT)
        log.info("copied %s -> %s", bert.name, EXAMPLE_BERT)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
