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
from torch.nn import functional as F

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
# Generic wrappers for transformers models (broadened corpus)
# --------------------------------------------------------------------------- #


def _pick(out: Any, names: tuple[str, ...]) -> torch.Tensor | tuple[torch.Tensor, ...]:
    """The named fields of a transformers output, as a tensor or a tuple of tensors."""
    picked = tuple(getattr(out, n) for n in names)
    return picked[0] if len(picked) == 1 else picked


class TextModel(nn.Module):
    """A transformers text model called with input_ids and attention_mask."""

    def __init__(self, model: nn.Module, outputs: tuple[str, ...], **call: Any) -> None:
        super().__init__()
        self.model = model
        self.outputs = outputs
        self.call = call

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> Any:
        out = self.model(input_ids=input_ids, attention_mask=attention_mask, return_dict=True, **self.call)
        return _pick(out, self.outputs)


class TextTypesModel(TextModel):
    """A BERT-like model called with input_ids, attention_mask and token_type_ids."""

    def forward(  # type: ignore[override]
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor
    ) -> Any:
        out = self.model(
            input_ids=input_ids,
            attention_mask=attention_mask,
            token_type_ids=token_type_ids,
            return_dict=True,
            **self.call,
        )
        return _pick(out, self.outputs)


class Seq2SeqModel(TextModel):
    """An encoder-decoder model: input_ids, attention_mask and decoder_input_ids."""

    def forward(  # type: ignore[override]
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, decoder_input_ids: torch.Tensor
    ) -> Any:
        out = self.model(
            input_ids=input_ids,
            attention_mask=attention_mask,
            decoder_input_ids=decoder_input_ids,
            return_dict=True,
            **self.call,
        )
        return _pick(out, self.outputs)


class TokensOnlyModel(TextModel):
    """A text model called with input_ids alone."""

    def forward(self, input_ids: torch.Tensor) -> Any:  # type: ignore[override]
        return _pick(self.model(input_ids=input_ids, return_dict=True, **self.call), self.outputs)


class PixelModel(TextModel):
    """A vision model called with pixel_values."""

    def forward(self, pixel_values: torch.Tensor) -> Any:  # type: ignore[override]
        return _pick(self.model(pixel_values=pixel_values, return_dict=True, **self.call), self.outputs)


class AudioModel(TextModel):
    """An audio model called with raw input_values."""

    def forward(self, input_values: torch.Tensor) -> Any:  # type: ignore[override]
        return _pick(self.model(input_values=input_values, return_dict=True, **self.call), self.outputs)


_HIDDEN = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2}
_DECODER = {
    "vocab_size": VOCAB,
    **_HIDDEN,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "max_position_embeddings": MAX_POSITIONS,
    "use_cache": False,
    "pad_token_id": 0,
    "bos_token_id": 1,
    "eos_token_id": 2,
}


def build_distilbert() -> nn.Module:
    config = transformers.DistilBertConfig(
        vocab_size=VOCAB, dim=32, n_layers=2, n_heads=2, hidden_dim=64, max_position_embeddings=MAX_POSITIONS
    )
    return TextModel(transformers.DistilBertModel(config), ("last_hidden_state",))


def build_roberta() -> nn.Module:
    # Position ids come from a cumsum over (input_ids != padding_idx).
    config = transformers.RobertaConfig(
        vocab_size=VOCAB,
        **_HIDDEN,
        num_attention_heads=2,
        max_position_embeddings=MAX_POSITIONS + 2,
        type_vocab_size=1,
        pad_token_id=1,
    )
    return TextModel(transformers.RobertaModel(config), ("last_hidden_state", "pooler_output"))


def build_albert() -> nn.Module:
    config = transformers.AlbertConfig(
        vocab_size=VOCAB,
        embedding_size=16,
        **_HIDDEN,
        num_attention_heads=2,
        max_position_embeddings=MAX_POSITIONS,
    )
    return TextTypesModel(transformers.AlbertModel(config), ("last_hidden_state", "pooler_output"))


def build_electra() -> nn.Module:
    config = transformers.ElectraConfig(
        vocab_size=VOCAB,
        embedding_size=16,
        **_HIDDEN,
        num_attention_heads=2,
        max_position_embeddings=MAX_POSITIONS,
    )
    return TextTypesModel(transformers.ElectraModel(config), ("last_hidden_state",))


def build_t5() -> nn.Module:
    # Relative position buckets: arange, abs/min, log, where over the sequence lengths.
    config = transformers.T5Config(
        vocab_size=VOCAB,
        d_model=32,
        d_kv=8,
        d_ff=64,
        num_layers=2,
        num_decoder_layers=2,
        num_heads=4,
        relative_attention_num_buckets=8,
        relative_attention_max_distance=16,
        use_cache=False,
        pad_token_id=0,
        eos_token_id=1,
        decoder_start_token_id=0,
    )
    return Seq2SeqModel(transformers.T5Model(config), ("last_hidden_state",), use_cache=False)


def build_bart() -> nn.Module:
    config = transformers.BartConfig(
        vocab_size=VOCAB,
        d_model=32,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        max_position_embeddings=MAX_POSITIONS,
        use_cache=False,
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
        decoder_start_token_id=2,
        forced_eos_token_id=None,
    )
    return Seq2SeqModel(
        transformers.BartModel(config), ("last_hidden_state", "encoder_last_hidden_state"), use_cache=False
    )


def build_opt() -> nn.Module:
    # Positions come from a cumsum over the attention mask.
    config = transformers.OPTConfig(
        vocab_size=VOCAB,
        hidden_size=32,
        ffn_dim=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        word_embed_proj_dim=32,
        max_position_embeddings=MAX_POSITIONS,
        use_cache=False,
        pad_token_id=1,
        bos_token_id=2,
        eos_token_id=2,
    )
    return TextModel(transformers.OPTForCausalLM(config), ("logits",), use_cache=False)


def build_gpt_neox() -> nn.Module:
    config = transformers.GPTNeoXConfig(
        vocab_size=VOCAB,
        **_HIDDEN,
        num_attention_heads=4,
        rotary_pct=0.5,
        max_position_embeddings=MAX_POSITIONS,
        use_cache=False,
        bos_token_id=0,
        eos_token_id=0,
    )
    return TextModel(transformers.GPTNeoXForCausalLM(config), ("logits",), use_cache=False)


def build_bloom() -> nn.Module:
    # ALiBi slopes times a cumsum over the attention mask.
    config = transformers.BloomConfig(
        vocab_size=VOCAB, hidden_size=32, n_layer=2, n_head=4, use_cache=False, bos_token_id=1, eos_token_id=2
    )
    return TextModel(transformers.BloomForCausalLM(config), ("logits",), use_cache=False)


def build_mistral() -> nn.Module:
    # A sliding window shorter than the sequences, so the window mask matters.
    config = transformers.MistralConfig(**_DECODER, sliding_window=4)
    return TextModel(transformers.MistralForCausalLM(config), ("logits",), use_cache=False)


def build_qwen2() -> nn.Module:
    config = transformers.Qwen2Config(**_DECODER)
    return TextModel(transformers.Qwen2ForCausalLM(config), ("logits",), use_cache=False)


def build_phi() -> nn.Module:
    # Partial rotary embedding (half of each head).
    config = transformers.PhiConfig(**_DECODER, partial_rotary_factor=0.5)
    return TextModel(transformers.PhiForCausalLM(config), ("logits",), use_cache=False)


def build_phi3() -> nn.Module:
    config = transformers.Phi3Config(**_DECODER)
    return TextModel(transformers.Phi3ForCausalLM(config), ("logits",), use_cache=False)


def build_gemma() -> nn.Module:
    config = transformers.GemmaConfig(**_DECODER, head_dim=8)
    return TextModel(transformers.GemmaForCausalLM(config), ("logits",), use_cache=False)


def build_clip_text() -> nn.Module:
    # The pooled output gathers at argmax(input_ids == eos) per row.
    config = transformers.CLIPTextConfig(
        vocab_size=VOCAB,
        **_HIDDEN,
        num_attention_heads=2,
        max_position_embeddings=MAX_POSITIONS,
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=3,
    )
    return TextModel(transformers.CLIPTextModel(config), ("last_hidden_state", "pooler_output"))


def _batch_norm_stats(model: nn.Module) -> nn.Module:
    """Give every batch norm non-trivial running statistics (so it is not an identity)."""
    for module in model.modules():
        if isinstance(module, nn.BatchNorm2d):
            n = module.num_features
            with torch.no_grad():
                module.running_mean.copy_(0.1 * torch.randn(n))
                module.running_var.copy_(1.0 + 0.1 * torch.rand(n))
    return model


def build_mobilenet_v2() -> nn.Module:
    # tf_padding=False: TF "same" padding branches on H % stride in Python, so the
    # TorchScript exporter bakes the export-time pads in and the dynamo exporter
    # specializes H and W to the export size (both checked; neither stays dynamic).
    config = transformers.MobileNetV2Config(
        num_channels=3,
        image_size=64,
        depth_multiplier=0.25,
        expand_ratio=2.0,
        finegrained_output=False,
        tf_padding=False,
    )
    model = _batch_norm_stats(transformers.MobileNetV2Model(config))
    return PixelModel(model, ("last_hidden_state", "pooler_output"))


def build_convnext() -> nn.Module:
    config = transformers.ConvNextConfig(
        num_channels=3, patch_size=4, num_stages=4, hidden_sizes=[8, 16, 24, 32], depths=[1, 1, 1, 1], image_size=64
    )
    return PixelModel(transformers.ConvNextModel(config), ("last_hidden_state", "pooler_output"))


def build_swin() -> nn.Module:
    config = transformers.SwinConfig(
        image_size=32,
        patch_size=4,
        num_channels=3,
        embed_dim=16,
        depths=[1, 2],
        num_heads=[2, 2],
        window_size=4,
        mlp_ratio=2.0,
        drop_path_rate=0.0,
    )
    return PixelModel(transformers.SwinModel(config), ("last_hidden_state", "pooler_output"))


def build_deit() -> nn.Module:
    config = transformers.DeiTConfig(
        image_size=32,
        patch_size=8,
        num_channels=3,
        **_HIDDEN,
        num_attention_heads=2,
    )
    return PixelModel(transformers.DeiTModel(config, add_pooling_layer=True), ("last_hidden_state", "pooler_output"))


def build_segformer() -> nn.Module:
    # The decode head resizes every stage to the first stage's H/4 x W/4.
    config = transformers.SegformerConfig(
        num_channels=3,
        num_encoder_blocks=4,
        depths=[1, 1, 1, 1],
        sr_ratios=[8, 4, 2, 1],
        hidden_sizes=[8, 16, 24, 32],
        num_attention_heads=[1, 1, 2, 2],
        mlp_ratios=[2, 2, 2, 2],
        decoder_hidden_size=16,
        drop_path_rate=0.0,
        num_labels=3,
    )
    model = _batch_norm_stats(transformers.SegformerForSemanticSegmentation(config))
    return PixelModel(model, ("logits",))


def build_clip_vision() -> nn.Module:
    config = transformers.CLIPVisionConfig(
        image_size=32,
        patch_size=8,
        num_channels=3,
        **_HIDDEN,
        num_attention_heads=2,
    )
    return PixelModel(transformers.CLIPVisionModel(config), ("last_hidden_state", "pooler_output"))


def build_wav2vec2() -> nn.Module:
    # Three strided convs over the raw audio, then a padded positional conv that drops its last frame.
    config = transformers.Wav2Vec2Config(
        vocab_size=VOCAB,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        conv_dim=(16, 16, 16),
        conv_stride=(5, 2, 2),
        conv_kernel=(10, 3, 3),
        num_conv_pos_embeddings=16,
        num_conv_pos_embedding_groups=4,
        feat_extract_norm="group",
        apply_spec_augment=False,
        layerdrop=0.0,
    )
    return AudioModel(transformers.Wav2Vec2Model(config), ("last_hidden_state", "extract_features"))


class UpsamplePad(nn.Module):
    """A UNet-like decoder step: interpolate by scale and to a size, then pad to match.

    Exercises ``F.interpolate(scale_factor=2)`` and ``F.interpolate(size=...)`` (the
    exporters' Shape -> Slice -> Cast -> Mul -> Floor -> Cast -> Resize detour) and ``F.pad``
    with pads computed from dynamic H and W (odd sizes make the pads non-zero).
    """

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.down = nn.Conv2d(8, 8, 3, stride=2, padding=1)
        self.mix = nn.Conv2d(24, 4, 1)

    def forward(self, pixel_values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = torch.relu(self.stem(pixel_values))
        d = F.max_pool2d(torch.relu(self.down(x)), 2)  # H/4 (floor) x W/4
        up = F.interpolate(d, scale_factor=2.0, mode="nearest")  # H/4*2
        dy = x.shape[2] - up.shape[2]
        dx = x.shape[3] - up.shape[3]
        up = F.pad(up, [dx // 2, dx - dx // 2, dy // 2, dy - dy // 2])
        sized = F.interpolate(d, size=x.shape[-2:], mode="bilinear", align_corners=False)
        reflect = F.pad(x, [1, 2, 2, 1], mode="reflect")[:, :, 2:-1, 1:-2]
        y = self.mix(torch.cat([up, sized, reflect], dim=1))
        half = F.interpolate(y, scale_factor=0.5, mode="bilinear", align_corners=False)
        return y, half


class MaskOps(nn.Module):
    """Masking and index arithmetic over a dynamic sequence.

    ``torch.where``, ``masked_fill``, ``cumsum``, ``arange`` (with a step, so extents are
    ceil divisions), causal masks from compared aranges, strided slicing and ``triu``.
    """

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 16)
        self.position = nn.Embedding(MAX_POSITIONS + 2, 16)
        self.proj = nn.Linear(16, 16)

    def forward(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        seq = input_ids.shape[1]
        positions = attention_mask.cumsum(-1) - 1
        positions = positions.masked_fill(attention_mask == 0, 1)
        h = self.embed(input_ids) + self.position(positions)
        steps = torch.arange(seq, device=input_ids.device)
        causal = steps[None, :] <= steps[:, None]
        scores = self.proj(h) @ h.transpose(1, 2)
        scores = scores.masked_fill(~causal, float("-inf"))
        keep = attention_mask[:, None, :].bool()
        scores = torch.where(keep, scores, torch.full_like(scores, -1e4))
        upper = torch.triu(torch.ones(seq, seq, dtype=torch.bool), diagonal=1)
        probs = torch.softmax(scores, dim=-1).masked_fill(upper, 0.0)
        mixed = probs @ h
        even = torch.arange(0, seq, 2, device=input_ids.device)  # ceil(seq / 2) entries
        strided = mixed[:, ::2] + mixed.index_select(1, even)
        reversed_ids = torch.arange(seq, 0, -1, device=input_ids.device)
        counts = torch.where(reversed_ids > seq // 2, reversed_ids, -reversed_ids).cumsum(0)
        return mixed, strided, counts


# --------------------------------------------------------------------------- #
# Extra architectures: relative positions, MQA, sinusoidal positions, windows
# --------------------------------------------------------------------------- #


def build_deberta_v2() -> nn.Module:
    # Disentangled attention: log-bucketed relative positions built from arange/sign/abs/log/where.
    config = transformers.DebertaV2Config(
        vocab_size=VOCAB,
        **_HIDDEN,
        num_attention_heads=2,
        max_position_embeddings=MAX_POSITIONS,
        type_vocab_size=2,
        relative_attention=True,
        position_buckets=8,
        max_relative_positions=16,
        pos_att_type=["p2c", "c2p"],
        position_biased_input=False,
        norm_rel_ebd="layer_norm",
        share_att_key=True,
    )
    return TextTypesModel(transformers.DebertaV2Model(config), ("last_hidden_state",))


def build_mpnet() -> nn.Module:
    # Relative position buckets (T5-like) computed from the sequence length.
    config = transformers.MPNetConfig(
        vocab_size=VOCAB,
        **_HIDDEN,
        num_attention_heads=2,
        max_position_embeddings=MAX_POSITIONS + 2,
        relative_attention_num_buckets=32,  # the bucket function uses 32 regardless
        pad_token_id=1,
    )
    return TextModel(transformers.MPNetModel(config), ("last_hidden_state", "pooler_output"))


def build_gpt_bigcode() -> nn.Module:
    # Multi-query attention: one key/value head shared by all query heads.
    config = transformers.GPTBigCodeConfig(
        vocab_size=VOCAB,
        n_positions=MAX_POSITIONS,
        n_embd=32,
        n_layer=2,
        n_head=4,
        n_inner=64,
        multi_query=True,
        use_cache=False,
        bos_token_id=0,
        eos_token_id=0,
    )
    return TextModel(transformers.GPTBigCodeForCausalLM(config), ("logits",), use_cache=False)


def build_falcon() -> nn.Module:
    config = transformers.FalconConfig(
        vocab_size=VOCAB,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_kv_heads=2,
        new_decoder_architecture=True,
        parallel_attn=True,
        alibi=False,
        max_position_embeddings=MAX_POSITIONS,
        use_cache=False,
        bos_token_id=0,
        eos_token_id=0,
    )
    return TextModel(transformers.FalconForCausalLM(config), ("logits",), use_cache=False)


def build_m2m100() -> nn.Module:
    # Sinusoidal positions offset by a cumsum over input_ids != pad, on both sides.
    config = transformers.M2M100Config(
        vocab_size=VOCAB,
        d_model=32,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        max_position_embeddings=MAX_POSITIONS,
        use_cache=False,
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
        decoder_start_token_id=2,
        encoder_layerdrop=0.0,
        decoder_layerdrop=0.0,
    )
    return Seq2SeqModel(
        transformers.M2M100Model(config), ("last_hidden_state", "encoder_last_hidden_state"), use_cache=False
    )


def build_longformer() -> nn.Module:
    # Pads the sequence to a multiple of the attention window, then chunks it.
    config = transformers.LongformerConfig(
        vocab_size=VOCAB,
        **_HIDDEN,
        num_attention_heads=2,
        attention_window=4,
        max_position_embeddings=MAX_POSITIONS * 2 + 2,
        pad_token_id=1,
        type_vocab_size=1,
    )
    return TextModel(transformers.LongformerModel(config), ("last_hidden_state",))


def build_funnel() -> nn.Module:
    # Pools the sequence between blocks (length halves, rounding up), then upsamples back.
    config = transformers.FunnelConfig(
        vocab_size=VOCAB,
        block_sizes=[1, 1],
        num_decoder_layers=1,
        d_model=32,
        n_head=2,
        d_head=16,
        d_inner=64,
    )
    return TextModel(transformers.FunnelModel(config), ("last_hidden_state",))


def build_mobilevit() -> nn.Module:
    config = transformers.MobileViTConfig(
        num_channels=3,
        image_size=64,
        patch_size=2,
        hidden_sizes=[8, 16, 16],
        neck_hidden_sizes=[8, 8, 8, 8, 16, 16, 24],
        num_attention_heads=2,
        mlp_ratio=2.0,
        expand_ratio=2.0,
    )
    model = _batch_norm_stats(transformers.MobileViTModel(config))
    return PixelModel(model, ("last_hidden_state", "pooler_output"))


def build_beit() -> nn.Module:
    # Relative position bias tables indexed per window.
    config = transformers.BeitConfig(
        vocab_size=VOCAB,
        **_HIDDEN,
        num_attention_heads=2,
        image_size=32,
        patch_size=8,
        num_channels=3,
        use_relative_position_bias=True,
        use_mean_pooling=True,
    )
    return PixelModel(transformers.BeitModel(config), ("last_hidden_state", "pooler_output"))


def build_efficientnet() -> nn.Module:
    config = transformers.EfficientNetConfig(
        num_channels=3,
        image_size=64,
        width_coefficient=0.1,
        depth_coefficient=0.3,
        expand_ratios=[1, 2, 2, 2, 2, 2, 2],
        hidden_dim=128,  # must equal round_filters(1280) for this width
    )
    model = _batch_norm_stats(transformers.EfficientNetModel(config))
    return PixelModel(model, ("last_hidden_state", "pooler_output"))


def build_yolos() -> nn.Module:
    # Position embeddings are interpolated to the runtime patch grid.
    config = transformers.YolosConfig(
        **_HIDDEN,
        num_attention_heads=2,
        image_size=[32, 32],
        patch_size=8,
        num_channels=3,
        num_detection_tokens=4,
    )
    return PixelModel(transformers.YolosModel(config, add_pooling_layer=False), ("last_hidden_state",))


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
    # Exporters not run for this model, with the reason (recorded in the manifest).
    skip: dict[str, str] = field(default_factory=dict)


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

_BHW_OUT = {0: "batch", 2: "out_height", 3: "out_width"}
_DYNAMO_VIEW_BUG = (
    "torch 2.13 dynamo exporter: run_decompositions raises 'Cannot view a tensor ... as a tensor with "
    "shape ...' at {what}: the reshape after the attention output's transpose().contiguous() was "
    "traced as a view, and in the decomposed graph that tensor is not contiguous"
)
_SEQ2SEQ_RANGES = {**_TEXT_RANGES, "decoder_sequence": (2, MAX_POSITIONS)}
_SEQ2SEQ_EXPORT = {**_TEXT_EXPORT, "decoder_sequence": 6}
_SEQ2SEQ_BINDINGS: tuple[Binding, Binding] = (
    {"batch": 2, "sequence": 7, "decoder_sequence": 5},
    {"batch": 3, "sequence": 11, "decoder_sequence": 4},
)
_IMAGE_RANGES = {"batch": (1, 64), "height": (32, 1024), "width": (32, 1024)}
_IMAGE_EXPORT = {"batch": 4, "height": 64, "width": 64}


def _text_axes(output: str) -> dict[int, str]:
    """Dynamic axes of a text model's output, by its usual transformers name."""
    if output in ("pooler_output",):
        return {0: "batch"}
    return dict(_BS)


def _text_spec(
    name: str,
    architecture: str,
    build: Callable[[], nn.Module],
    outputs: tuple[str, ...],
    token_types: bool = False,
    notes: str = "",
    output_axes: dict[str, dict[int, str]] | None = None,
    skip: dict[str, str] | None = None,
) -> ModelSpec:
    """A text model over input_ids/attention_mask (/token_type_ids) [batch, sequence]."""
    return ModelSpec(
        name=name,
        architecture=architecture,
        build=build,
        inputs=_token_inputs(with_token_types=token_types),
        outputs=outputs,
        dim_ranges=_TEXT_RANGES,
        export_binding=_TEXT_EXPORT,
        bindings=_TEXT_BINDINGS,
        notes=notes,
        output_axes=output_axes or {o: _text_axes(o) for o in outputs},
        skip=skip or {},
    )


def _seq2seq_spec(
    name: str,
    architecture: str,
    build: Callable[[], nn.Module],
    outputs: tuple[str, ...],
    skip: dict[str, str] | None = None,
) -> ModelSpec:
    """An encoder-decoder over input_ids/attention_mask and decoder_input_ids."""
    axes = {
        "last_hidden_state": {0: "batch", 1: "decoder_sequence"},
        "encoder_last_hidden_state": dict(_BS),
    }
    return ModelSpec(
        name=name,
        architecture=architecture,
        build=build,
        inputs=(
            *_token_inputs(with_token_types=False),
            InputSpec("decoder_input_ids", "int64", ("batch", "decoder_sequence"), "randint", 0, VOCAB),
        ),
        outputs=outputs,
        dim_ranges=_SEQ2SEQ_RANGES,
        export_binding=_SEQ2SEQ_EXPORT,
        bindings=_SEQ2SEQ_BINDINGS,
        notes="use_cache=False",
        output_axes={o: axes[o] for o in outputs},
        skip=skip or {},
    )


def _image_spec(
    name: str,
    architecture: str,
    build: Callable[[], nn.Module],
    outputs: tuple[str, ...],
    bindings: tuple[Binding, Binding] | None = None,
    output_axes: dict[str, dict[int, str]] | None = None,
    fixed_size: int | None = None,
    ranges: dict[str, tuple[int, int]] | None = None,
    notes: str = "",
    skip: dict[str, str] | None = None,
) -> ModelSpec:
    """A vision model over pixel_values [batch, 3, height, width] (or a fixed square size)."""
    if fixed_size is not None:
        return ModelSpec(
            name=name,
            architecture=architecture,
            build=build,
            inputs=(InputSpec("pixel_values", "float32", ("batch", 3, fixed_size, fixed_size), "randn"),),
            outputs=outputs,
            dim_ranges={"batch": (1, 64)},
            export_binding={"batch": 4},
            bindings=({"batch": 2}, {"batch": 3}),
            notes=notes,
            output_axes=output_axes or {o: {0: "batch"} for o in outputs},
            skip=skip or {},
        )
    assert bindings is not None and output_axes is not None
    return ModelSpec(
        name=name,
        architecture=architecture,
        build=build,
        inputs=(InputSpec("pixel_values", "float32", ("batch", 3, "height", "width"), "randn"),),
        outputs=outputs,
        dim_ranges=ranges or _IMAGE_RANGES,
        export_binding=_IMAGE_EXPORT,
        bindings=bindings,
        notes=notes,
        output_axes=output_axes,
        skip=skip or {},
    )


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
    # ----------------------------------------------------------------------- #
    # Broadened corpus: more text encoders, decoders, seq2seq, vision, audio.
    # ----------------------------------------------------------------------- #
    _text_spec("distilbert", "DistilBertModel", build_distilbert, ("last_hidden_state",)),
    _text_spec(
        "roberta",
        "RobertaModel",
        build_roberta,
        ("last_hidden_state", "pooler_output"),
        notes="position ids from a cumsum over input_ids != padding_idx",
    ),
    _text_spec("albert", "AlbertModel", build_albert, ("last_hidden_state", "pooler_output"), token_types=True),
    _text_spec("electra", "ElectraModel", build_electra, ("last_hidden_state",), token_types=True),
    _seq2seq_spec(
        "t5",
        "T5Model",
        build_t5,
        ("last_hidden_state",),
        skip={"dynamo": _DYNAMO_VIEW_BUG.format(what="T5Attention (sdpa and eager attention alike)")},
    ),
    _seq2seq_spec("bart", "BartModel", build_bart, ("last_hidden_state", "encoder_last_hidden_state")),
    _text_spec("opt", "OPTForCausalLM", build_opt, ("logits",)),
    _text_spec("gpt_neox", "GPTNeoXForCausalLM", build_gpt_neox, ("logits",)),
    _text_spec("bloom", "BloomForCausalLM", build_bloom, ("logits",)),
    _text_spec("mistral", "MistralForCausalLM", build_mistral, ("logits",), notes="sliding_window=4"),
    _text_spec("qwen2", "Qwen2ForCausalLM", build_qwen2, ("logits",)),
    _text_spec("phi", "PhiForCausalLM", build_phi, ("logits",), notes="partial_rotary_factor=0.5"),
    _text_spec("phi3", "Phi3ForCausalLM", build_phi3, ("logits",)),
    _text_spec("gemma", "GemmaForCausalLM", build_gemma, ("logits",)),
    _text_spec("clip_text", "CLIPTextModel", build_clip_text, ("last_hidden_state", "pooler_output")),
    _text_spec(
        "mask_ops",
        "MaskOps (hand-written: where, masked_fill, cumsum, arange, triu)",
        MaskOps,
        ("mixed", "strided", "counts"),
        output_axes={
            "mixed": _BS,
            "strided": {0: "batch", 1: "half_sequence"},
            "counts": {0: "sequence"},
        },
    ),
    _image_spec(
        "mobilenet_v2",
        "MobileNetV2Model",
        build_mobilenet_v2,
        ("last_hidden_state", "pooler_output"),
        bindings=({"batch": 2, "height": 64, "width": 72}, {"batch": 3, "height": 77, "width": 50}),
        output_axes={"last_hidden_state": _BHW_OUT, "pooler_output": {0: "batch"}},
        notes="tf_padding=False (TF same-padding branches on H % stride; neither exporter keeps it dynamic)",
    ),
    _image_spec(
        "convnext",
        "ConvNextModel",
        build_convnext,
        ("last_hidden_state", "pooler_output"),
        bindings=({"batch": 2, "height": 64, "width": 96}, {"batch": 3, "height": 71, "width": 50}),
        output_axes={"last_hidden_state": _BHW_OUT, "pooler_output": {0: "batch"}},
    ),
    _image_spec(
        "swin",
        "SwinModel",
        build_swin,
        ("last_hidden_state", "pooler_output"),
        fixed_size=32,
        notes=(
            "window_size=4; image size fixed at 32x32: with dynamic H and W the TorchScript export bakes "
            "the window padding and the dynamo export specializes the window reshapes (both fail in "
            "onnxruntime at another size)"
        ),
        skip={"dynamo": _DYNAMO_VIEW_BUG.format(what="SwinSelfAttention")},
    ),
    _image_spec(
        "deit",
        "DeiTModel",
        build_deit,
        ("last_hidden_state", "pooler_output"),
        fixed_size=32,
        notes="image size fixed at 32x32 by the position embeddings",
    ),
    _image_spec(
        "segformer",
        "SegformerForSemanticSegmentation",
        build_segformer,
        ("logits",),
        bindings=({"batch": 2, "height": 64, "width": 96}, {"batch": 3, "height": 70, "width": 45}),
        output_axes={"logits": _BHW_OUT},
        notes="decode head resizes every stage to H/4 x W/4",
    ),
    _image_spec(
        "clip_vision",
        "CLIPVisionModel",
        build_clip_vision,
        ("last_hidden_state", "pooler_output"),
        fixed_size=32,
        notes="image size fixed at 32x32 by the position embeddings",
    ),
    _image_spec(
        "upsample_pad",
        "UpsamplePad (hand-written: F.interpolate scale/size, F.pad)",
        UpsamplePad,
        ("features", "half"),
        ranges={"batch": (1, 64), "height": (8, 1024), "width": (8, 1024)},
        bindings=({"batch": 2, "height": 33, "width": 47}, {"batch": 3, "height": 64, "width": 50}),
        output_axes={
            "features": {0: "batch", 2: "height", 3: "width"},
            "half": {0: "batch", 2: "half_height", 3: "half_width"},
        },
    ),
    ModelSpec(
        name="wav2vec2",
        architecture="Wav2Vec2Model",
        build=build_wav2vec2,
        inputs=(InputSpec("input_values", "float32", ("batch", "audio"), "randn"),),
        outputs=("last_hidden_state", "extract_features"),
        dim_ranges={"batch": (1, 64), "audio": (400, 16000)},
        export_binding={"batch": 4, "audio": 1000},
        bindings=({"batch": 2, "audio": 800}, {"batch": 3, "audio": 1203}),
        notes="conv feature extractor (kernels 10/3/3, strides 5/2/2) gives a symbolic conv chain",
        output_axes={"last_hidden_state": {0: "batch", 1: "frames"}, "extract_features": {0: "batch", 1: "frames"}},
    ),
    # ----------------------------------------------------------------------- #
    # Extra architectures.
    # ----------------------------------------------------------------------- #
    _text_spec(
        "deberta_v2",
        "DebertaV2Model",
        build_deberta_v2,
        ("last_hidden_state",),
        token_types=True,
        notes="relative attention with log position buckets",
    ),
    _text_spec("mpnet", "MPNetModel", build_mpnet, ("last_hidden_state", "pooler_output")),
    _text_spec("gpt_bigcode", "GPTBigCodeForCausalLM", build_gpt_bigcode, ("logits",), notes="multi_query=True"),
    _text_spec("falcon", "FalconForCausalLM", build_falcon, ("logits",)),
    _seq2seq_spec("m2m100", "M2M100Model", build_m2m100, ("last_hidden_state", "encoder_last_hidden_state")),
    _text_spec(
        "longformer",
        "LongformerModel",
        build_longformer,
        ("last_hidden_state",),
        notes="attention_window=4",
        skip={
            "torchscript": (
                "the window padding and chunk counts are Python ints at trace time: onnxruntime fails "
                "(Gather index out of range) at another sequence length"
            ),
            "dynamo": (
                "torch.export fails: GuardOnDataDependentSymNode on the padded-length comparison "
                "4*u1 < s70 + Mod(4 - Mod(s70, 4), 4)"
            ),
        },
    ),
    _text_spec(
        "funnel",
        "FunnelModel",
        build_funnel,
        ("last_hidden_state",),
        skip={
            "torchscript": (
                "the pooled lengths and relative-position tables are Python ints at trace time: outputs "
                "differ from PyTorch at another sequence length"
            ),
            "dynamo": "the dynamo exporter specializes the sequence length to the export size (9)",
        },
    ),
    _image_spec(
        "mobilevit",
        "MobileViTModel",
        build_mobilevit,
        ("last_hidden_state", "pooler_output"),
        fixed_size=64,
        notes=(
            "image size fixed at 64x64: with dynamic H and W the TorchScript export bakes the unfold "
            "sizes (Reshape fails at another size) and the dynamo exporter specializes H and W"
        ),
    ),
    _image_spec(
        "beit",
        "BeitModel",
        build_beit,
        ("last_hidden_state", "pooler_output"),
        fixed_size=32,
        notes="relative position bias; image size fixed at 32x32",
        skip={"dynamo": _DYNAMO_VIEW_BUG.format(what="BeitSelfAttention")},
    ),
    _image_spec(
        "efficientnet",
        "EfficientNetModel",
        build_efficientnet,
        ("last_hidden_state", "pooler_output"),
        bindings=({"batch": 2, "height": 64, "width": 96}, {"batch": 3, "height": 71, "width": 50}),
        output_axes={"last_hidden_state": _BHW_OUT, "pooler_output": {0: "batch"}},
    ),
    _image_spec(
        "yolos",
        "YolosModel",
        build_yolos,
        ("last_hidden_state",),
        bindings=({"batch": 2, "height": 32, "width": 48}, {"batch": 3, "height": 40, "width": 32}),
        output_axes={"last_hidden_state": {0: "batch", 1: "out_tokens"}},
        notes="position embeddings interpolated to the runtime patch grid",
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
    # Pairs now skipped on purpose drop out of the manifest with their old records.
    redone |= {(s.name, e) for s in SPECS for e in s.skip}
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
            if exporter in spec.skip:
                log.info("skipped %s/%s: %s", spec.name, exporter, spec.skip[exporter])
                continue
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
        "skipped_exports": [
            {"model": s.name, "exporter": e, "reason": reason} for s in SPECS for e, reason in s.skip.items()
        ],
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
