"""Export a held-out-like evaluation set: small real models of the kinds onnx-infer is judged on.

The set resembles the held-out evaluation sets rather than the repository's corpus
(tests/models/export_corpus.py): decoders with a KV cache (``past_key_values`` inputs and an
attention mask of extent ``past_sequence + sequence``), timm CNNs (TF "same" padding computed at
run time among them), torchvision detection and segmentation, diffusers UNets and VAEs at tiny
configs, hand-written modules with the float detours exporters produce for size arithmetic
(``math.ceil(h / 32) * 32``, ``torch.ceil(h.float() / 32) * 32``, ``(h * 0.5).floor()``,
``F.interpolate(scale_factor=...)``), and derived variants of some exports: onnxruntime's
transformer optimizer (fused ``Attention``, ``SkipLayerNormalization``, ...), ``quantize_dynamic``,
static QDQ quantization and float16 conversion (onnxconverter-common's and onnxruntime's).

Every model is built in code with random weights (``torch.manual_seed(0)`` before each build);
nothing comes from a model hub. Base models are exported with the TorchScript exporter (opset
17, ``dynamic_axes``) and, where it works, the dynamo exporter (``torch.export.Dim``). Every
file has its ``value_info`` and per-node debug metadata stripped, passes ``onnx.checker``, and
runs in onnxruntime at the two bindings of its manifest entry (base exports are compared with
PyTorch there). Files go to ``--out-dir`` (default /work/heldout-like, outside the repository:
some are large) with a ``manifest.json`` in the format of tests/models/manifest.json, plus
``failed_exports`` recording every export or run that failed and why.

A binding names every dimension variable of the model's inputs. An input dim may be a sum of
variables (``past_sequence + sequence``, as the TorchScript export names it, or
``past_sequence_plus_sequence`` from the dynamo export, where a ``Dim`` cannot be a sum): the
binding gives its value too, so a scorer can feed and check the model from the binding alone.

Run it with the export venv (never the project's venv: it needs torch)::

    /work/venv-export/bin/python tests/models/export_heldout_like.py            # everything
    /work/venv-export/bin/python tests/models/export_heldout_like.py gpt2_kv    # some models
    /work/venv-export/bin/python tests/models/export_heldout_like.py --list
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import io
import json
import logging
import math
import signal
import sys
import tempfile
import time
import traceback
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import torch
from torch import nn
from torch.export import Dim
from torch.nn import functional as F

DEFAULT_OUT = Path("/work/heldout-like")
TORCHSCRIPT_OPSET = 17
SEED = 0
VOCAB = 100
MAX_POSITIONS = 64
ATOL = 1e-3
RTOL = 1e-3

log = logging.getLogger("export_heldout_like")

Binding = dict[str, int]

# --------------------------------------------------------------------------- #
# Inputs
# --------------------------------------------------------------------------- #


@dataclass(frozen=True)
class InputSpec:
    """One graph input: name, numpy element type, dims (ints, variable names or sums) and fill."""

    name: str
    dtype: str
    dims: tuple[int | str, ...]
    fill: str
    low: int | None = None
    high: int | None = None

    def fill_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.fill}
        if self.fill == "randint":
            out["low"], out["high"] = self.low, self.high
        return out


def dim_value(dim: int | str, binding: Binding) -> int:
    """The extent of ``dim`` under ``binding``: a sum (``a + b`` or ``a_plus_b``) adds its parts."""
    if isinstance(dim, int):
        return dim
    if dim in binding:
        return binding[dim]
    parts = dim.split(" + ") if " + " in dim else dim.split("_plus_")
    if len(parts) < 2:
        raise KeyError(f"binding {binding} has no value for dim {dim!r}")
    return sum(binding[p] for p in parts)


def make_feed(inputs: Sequence[InputSpec], binding: Binding, seed: int = SEED) -> dict[str, np.ndarray]:
    """Seeded inputs under ``binding``, filled as tests/support/runtime.feeds_for fills them."""
    rng = np.random.default_rng(seed)
    out = {}
    for spec in inputs:
        shape = [dim_value(d, binding) for d in spec.dims]
        dtype = np.dtype(spec.dtype)
        if spec.fill == "randint":
            out[spec.name] = rng.integers(spec.low, spec.high, size=shape).astype(dtype)
        elif spec.fill == "ones":
            out[spec.name] = np.ones(shape, dtype)
        elif spec.fill == "zeros":
            out[spec.name] = np.zeros(shape, dtype)
        elif spec.fill == "randn":
            out[spec.name] = rng.standard_normal(shape).astype(dtype)
        else:
            raise ValueError(f"unknown fill {spec.fill!r}")
    return out


def dynamo_dim_name(dim: str) -> str:
    """The dynamo export's name for a dim: a ``Dim`` is one identifier, so sums are spelled out."""
    return dim.replace(" + ", "_plus_")


# --------------------------------------------------------------------------- #
# Specs
# --------------------------------------------------------------------------- #


@dataclass
class Spec:
    """One base model: how to build it, its inputs, bindings and exports."""

    name: str
    category: str
    architecture: str
    build: Callable[[], nn.Module]
    inputs: tuple[InputSpec, ...]
    outputs: tuple[str, ...]
    export_binding: Binding
    bindings: tuple[Binding, Binding]
    dim_ranges: dict[str, tuple[int, int]]
    output_axes: dict[str, dict[int, str]] = field(default_factory=dict)
    exporters: tuple[str, ...] = ("torchscript", "dynamo")
    # "values": outputs match torch (allclose); "shapes": only shapes (data-dependent counts
    # from NMS may differ between the two); "none": run only.
    compare: str = "values"
    notes: str = ""
    # Derived variants made from the TorchScript export: names in DERIVATIONS.
    derived: tuple[str, ...] = ()


# --------------------------------------------------------------------------- #
# Model builders: transformers
# --------------------------------------------------------------------------- #


def _transformers() -> Any:
    import transformers

    transformers.logging.set_verbosity_error()
    return transformers


def _pick(out: Any, names: tuple[str, ...]) -> Any:
    picked = tuple(getattr(out, n) for n in names)
    return picked[0] if len(picked) == 1 else picked


class TextModel(nn.Module):
    """A transformers model over input_ids and attention_mask (and token_type_ids if asked)."""

    def __init__(self, model: nn.Module, outputs: tuple[str, ...], token_types: bool = False) -> None:
        super().__init__()
        self.model, self.outputs, self.token_types = model, outputs, token_types

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, *rest: torch.Tensor) -> Any:
        extra = {"token_type_ids": rest[0]} if self.token_types else {}
        out = self.model(input_ids=input_ids, attention_mask=attention_mask, return_dict=True, **extra)
        return _pick(out, self.outputs)


class PixelModel(nn.Module):
    """A vision model over pixel_values."""

    def __init__(self, model: nn.Module, outputs: tuple[str, ...], **call: Any) -> None:
        super().__init__()
        self.model, self.outputs, self.call = model, outputs, call

    def forward(self, pixel_values: torch.Tensor) -> Any:
        return _pick(self.model(pixel_values=pixel_values, return_dict=True, **self.call), self.outputs)


class KVDecoder(nn.Module):
    """A causal LM with a KV cache as flat tensors: logits and present keys/values per layer."""

    def __init__(self, model: nn.Module, layers: int) -> None:
        super().__init__()
        self.model, self.layers = model, layers

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, *past: torch.Tensor) -> Any:
        from transformers import DynamicCache

        pairs = [(past[2 * i], past[2 * i + 1]) for i in range(self.layers)]
        cache = DynamicCache(ddp_cache_data=pairs, config=self.model.config)
        out = self.model(
            input_ids=input_ids, attention_mask=attention_mask, past_key_values=cache, use_cache=True, return_dict=True
        )
        result = [out.logits]
        for layer in out.past_key_values.layers:
            result += [layer.keys, layer.values]
        return tuple(result)


_HID = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2}
_TOKENS = {"vocab_size": VOCAB, "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2}


def build_bert() -> nn.Module:
    t = _transformers()
    cfg = t.BertConfig(**_HID, vocab_size=VOCAB, num_attention_heads=2, max_position_embeddings=MAX_POSITIONS)
    return TextModel(t.BertModel(cfg), ("last_hidden_state", "pooler_output"), token_types=True)


def build_gpt2() -> nn.Module:
    t = _transformers()
    cfg = t.GPT2Config(vocab_size=VOCAB, n_positions=MAX_POSITIONS, n_embd=32, n_layer=2, n_head=2, use_cache=False)
    return TextModel(t.GPT2LMHeadModel(cfg), ("logits",))


def build_mobilebert() -> nn.Module:
    t = _transformers()
    cfg = t.MobileBertConfig(
        vocab_size=VOCAB,
        hidden_size=32,
        embedding_size=16,
        intra_bottleneck_size=16,
        true_hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        num_feedforward_networks=2,
        max_position_embeddings=MAX_POSITIONS,
    )
    return TextModel(t.MobileBertModel(cfg), ("last_hidden_state", "pooler_output"), token_types=True)


def build_squeezebert() -> nn.Module:
    t = _transformers()
    cfg = t.SqueezeBertConfig(
        vocab_size=VOCAB,
        hidden_size=32,
        embedding_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=MAX_POSITIONS,
        q_groups=2,
        k_groups=2,
        v_groups=2,
        post_attention_groups=2,
        intermediate_groups=2,
        output_groups=2,
    )
    return TextModel(t.SqueezeBertModel(cfg), ("last_hidden_state",))


def build_xlm_roberta() -> nn.Module:
    t = _transformers()
    cfg = t.XLMRobertaConfig(
        **_HID, vocab_size=VOCAB, num_attention_heads=2, max_position_embeddings=MAX_POSITIONS + 2, pad_token_id=1
    )
    return TextModel(t.XLMRobertaModel(cfg), ("last_hidden_state", "pooler_output"))


def build_vit_interp() -> nn.Module:
    t = _transformers()
    cfg = t.ViTConfig(
        image_size=32, patch_size=8, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64
    )
    return PixelModel(t.ViTModel(cfg), ("last_hidden_state",), interpolate_pos_encoding=True)


def build_dinov2() -> nn.Module:
    t = _transformers()
    cfg = t.Dinov2Config(
        image_size=32, patch_size=8, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, mlp_ratio=2
    )
    return PixelModel(t.Dinov2Model(cfg), ("last_hidden_state", "pooler_output"))


def build_swin_dynamic() -> nn.Module:
    t = _transformers()
    cfg = t.SwinConfig(image_size=32, patch_size=4, embed_dim=16, depths=[1, 1], num_heads=[2, 2], window_size=4)
    return PixelModel(t.SwinModel(cfg), ("last_hidden_state", "pooler_output"))


def build_hf_resnet() -> nn.Module:
    t = _transformers()
    cfg = t.ResNetConfig(embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], layer_type="basic")
    return PixelModel(t.ResNetModel(cfg), ("last_hidden_state", "pooler_output"))


def build_poolformer() -> nn.Module:
    t = _transformers()
    cfg = t.PoolFormerConfig(
        hidden_sizes=[16, 32],
        depths=[1, 1],
        num_encoder_blocks=2,
        patch_sizes=[7, 3],
        strides=[4, 2],
        padding=[2, 1],
        pool_size=3,
    )
    return PixelModel(t.PoolFormerModel(cfg), ("last_hidden_state",))


def _kv_builder(arch: str, **extra: Any) -> Callable[[], nn.Module]:
    def build() -> nn.Module:
        t = _transformers()
        config_cls = getattr(t, f"{arch}Config")
        model_cls = getattr(t, f"{arch}ForCausalLM")
        cfg = config_cls(**{**_HID, **_TOKENS, "max_position_embeddings": MAX_POSITIONS, **extra})
        return KVDecoder(model_cls(cfg), layers=2)

    return build


def build_gpt2_kv() -> nn.Module:
    t = _transformers()
    cfg = t.GPT2Config(vocab_size=VOCAB, n_positions=MAX_POSITIONS, n_embd=32, n_layer=2, n_head=2)
    return KVDecoder(t.GPT2LMHeadModel(cfg), layers=2)


def build_opt_kv() -> nn.Module:
    t = _transformers()
    cfg = t.OPTConfig(
        vocab_size=VOCAB,
        hidden_size=32,
        ffn_dim=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        word_embed_proj_dim=32,
        max_position_embeddings=MAX_POSITIONS,
        pad_token_id=1,
    )
    return KVDecoder(t.OPTForCausalLM(cfg), layers=2)


# --------------------------------------------------------------------------- #
# Model builders: timm, torchvision, diffusers
# --------------------------------------------------------------------------- #


def _timm_builder(name: str, **kwargs: Any) -> Callable[[], nn.Module]:
    def build() -> nn.Module:
        import timm

        return timm.create_model(name, pretrained=False, num_classes=10, **kwargs)

    return build


class Detector(nn.Module):
    """A torchvision detector over one image [3, H, W]; outputs in sorted key order."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, image: torch.Tensor) -> Any:
        det = self.model([image])[0]
        return tuple(det[k] for k in sorted(det))


def _detector(name: str, **kwargs: Any) -> Callable[[], nn.Module]:
    def build() -> nn.Module:
        from torchvision.models import detection

        return Detector(getattr(detection, name)(weights=None, weights_backbone=None, num_classes=5, **kwargs))

    return build


class Segmenter(nn.Module):
    """A torchvision segmentation model's ``out`` map."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, pixel_values: torch.Tensor) -> torch.Tensor:
        return self.model(pixel_values)["out"]


def _segmenter(name: str, **kwargs: Any) -> Callable[[], nn.Module]:
    def build() -> nn.Module:
        from torchvision.models import segmentation

        model = getattr(segmentation, name)(weights=None, weights_backbone=None, num_classes=5, **kwargs)
        return Segmenter(model)

    return build


class UNet2DWrap(nn.Module):
    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, sample: torch.Tensor, timestep: torch.Tensor) -> torch.Tensor:
        return self.model(sample, timestep, return_dict=False)[0]


class UNetCondWrap(UNet2DWrap):
    def forward(self, sample: torch.Tensor, timestep: torch.Tensor, encoder_hidden_states: torch.Tensor) -> Any:  # type: ignore[override]
        return self.model(sample, timestep, encoder_hidden_states=encoder_hidden_states, return_dict=False)[0]


class VaeWrap(nn.Module):
    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, sample: torch.Tensor) -> Any:
        latent = self.model.encode(sample).latent_dist.mode()
        return latent, self.model.decode(latent).sample


def build_unet2d() -> nn.Module:
    from diffusers import UNet2DModel

    model = UNet2DModel(
        sample_size=16,
        in_channels=3,
        out_channels=3,
        layers_per_block=1,
        block_out_channels=(32, 64),
        down_block_types=("DownBlock2D", "AttnDownBlock2D"),
        up_block_types=("AttnUpBlock2D", "UpBlock2D"),
        norm_num_groups=8,
        attention_head_dim=8,
    )
    return UNet2DWrap(model)


def build_unet2d_condition() -> nn.Module:
    from diffusers import UNet2DConditionModel

    model = UNet2DConditionModel(
        sample_size=16,
        in_channels=4,
        out_channels=4,
        layers_per_block=1,
        block_out_channels=(32, 64),
        down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
        up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"),
        cross_attention_dim=32,
        attention_head_dim=8,
        norm_num_groups=8,
    )
    return UNetCondWrap(model)


def build_vae() -> nn.Module:
    from diffusers import AutoencoderKL

    model = AutoencoderKL(
        in_channels=3,
        out_channels=3,
        down_block_types=("DownEncoderBlock2D", "DownEncoderBlock2D"),
        up_block_types=("UpDecoderBlock2D", "UpDecoderBlock2D"),
        block_out_channels=(16, 32),
        layers_per_block=1,
        latent_channels=4,
        norm_num_groups=8,
        sample_size=32,
    )
    return VaeWrap(model)


# --------------------------------------------------------------------------- #
# Hand-written modules: the float detours exporters produce for size arithmetic
# --------------------------------------------------------------------------- #


def _size(x: torch.Tensor, axis: int) -> torch.Tensor:
    """A 0-d int64 tensor holding ``x.shape[axis]`` (traced as Shape/Gather by both exporters)."""
    return torch._shape_as_tensor(x)[axis]


class PadMultipleMath(nn.Module):
    """Pad H, W up to a multiple of 32 with ``math.ceil(h / 32) * 32``; stride-32 conv; crop back."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.down = nn.Conv2d(8, 8, 32, stride=32)

    def forward(self, pixel_values: torch.Tensor) -> Any:
        h, w = pixel_values.shape[-2], pixel_values.shape[-1]
        ph = math.ceil(h / 32) * 32 - h
        pw = math.ceil(w / 32) * 32 - w
        x = F.pad(self.stem(pixel_values), (0, pw, 0, ph))
        z = self.down(x)
        up = F.interpolate(z, size=(x.shape[-2], x.shape[-1]), mode="nearest")
        return up[..., :h, :w], z


class PadMultipleTensor(nn.Module):
    """torchvision's traced batching: ``torch.ceil(h.float() / 32) * 32`` then pad into zeros."""

    def __init__(self) -> None:
        super().__init__()
        self.down = nn.Conv2d(3, 8, 32, stride=32)

    def forward(self, pixel_values: torch.Tensor) -> Any:
        h = _size(pixel_values, 2).to(torch.float32)
        w = _size(pixel_values, 3).to(torch.float32)
        hp = (torch.ceil(h / 32) * 32).to(torch.int64)
        wp = (torch.ceil(w / 32) * 32).to(torch.int64)
        pad_h = hp - _size(pixel_values, 2)
        pad_w = wp - _size(pixel_values, 3)
        padded = F.pad(pixel_values, (0, pad_w, 0, pad_h))  # type: ignore[arg-type]
        return self.down(padded), padded


class TFSamePad(nn.Module):
    """TF-style "same" padding computed from the input size at run time, before strided convs.

    Traced (TorchScript) it computes on size tensors in float, as timm's and TF ports do when
    tracing; otherwise on Python ints, which the dynamo exporter turns into symbolic float math.
    """

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, stride=2)
        self.conv2 = nn.Conv2d(8, 8, 5, stride=2)
        self.pool = nn.MaxPool2d(3, 2)

    @staticmethod
    def same(x: torch.Tensor, k: int, s: int, d: int = 1) -> torch.Tensor:
        if torch.jit.is_tracing():
            ih, iw = _size(x, -2), _size(x, -1)
            pad_h = torch.clamp((torch.ceil(ih.float() / s) - 1) * s + (k - 1) * d + 1 - ih, min=0).long()
            pad_w = torch.clamp((torch.ceil(iw.float() / s) - 1) * s + (k - 1) * d + 1 - iw, min=0).long()
        else:
            ih, iw = x.shape[-2:]
            pad_h = max((math.ceil(ih / s) - 1) * s + (k - 1) * d + 1 - ih, 0)
            pad_w = max((math.ceil(iw / s) - 1) * s + (k - 1) * d + 1 - iw, 0)
        pads = [pad_w // 2, pad_w - pad_w // 2, pad_h // 2, pad_h - pad_h // 2]
        return F.pad(x, pads)  # type: ignore[arg-type]

    def forward(self, pixel_values: torch.Tensor) -> Any:
        x = self.conv1(self.same(pixel_values, 3, 2))
        x = self.conv2(self.same(x, 5, 2))
        return self.pool(self.same(x, 3, 2))


class PatchPadResize(nn.Module):
    """Pad a feature map to a multiple of the patch size (Swin-style), then Resize to sizes from it."""

    def __init__(self, patch: int = 7) -> None:
        super().__init__()
        self.patch = patch
        self.stem = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.embed = nn.Conv2d(8, 16, patch, stride=patch)

    def forward(self, pixel_values: torch.Tensor) -> Any:
        x = self.stem(pixel_values)
        h, w = x.shape[-2], x.shape[-1]
        pad_b = (self.patch - h % self.patch) % self.patch
        pad_r = (self.patch - w % self.patch) % self.patch
        x = F.pad(x, (0, pad_r, 0, pad_b))
        tokens = self.embed(x)
        grid = F.interpolate(tokens, size=(x.shape[-2], x.shape[-1]), mode="bilinear", align_corners=False)
        back = F.interpolate(grid[..., :h, :w], size=pixel_values.shape[-2:], mode="bilinear", align_corners=False)
        return tokens, back


class InterpScale(nn.Module):
    """``F.interpolate(scale_factor=...)`` with recompute_scale_factor both ways, and size=."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, pixel_values: torch.Tensor) -> Any:
        x = self.conv(pixel_values)
        a = F.interpolate(x, scale_factor=1.5, mode="bilinear", align_corners=False, recompute_scale_factor=True)
        b = F.interpolate(x, scale_factor=1.5, mode="bilinear", align_corners=False, recompute_scale_factor=False)
        c = F.interpolate(x, scale_factor=0.5, mode="nearest")
        d = F.interpolate(x, scale_factor=(0.75, 1.25), mode="nearest", recompute_scale_factor=True)
        e = F.interpolate(c, size=x.shape[-2:], mode="bilinear", align_corners=True)
        return a, b, c, d, e


class FloorHalf(nn.Module):
    """Sizes from float arithmetic on extents: floor, round, ceil and truncation.

    Traced, on 0-d size tensors cast to float; otherwise on Python ints (symbolic under dynamo).
    """

    def forward(self, pixel_values: torch.Tensor) -> Any:
        if torch.jit.is_tracing():
            h, w = _size(pixel_values, 2), _size(pixel_values, 3)
            half = (h.to(torch.float32) * 0.5).floor().to(torch.int64)
            third = torch.round(w.to(torch.float32) / 3).to(torch.int64)
            quarter_up = torch.ceil(h.to(torch.float32) / 4).to(torch.int64)
            trunc = (w.to(torch.float32) * 0.75).to(torch.int64)
            mixed = (torch.div(h, 3, rounding_mode="floor") + torch.div(w, 2, rounding_mode="trunc")).reshape(1)
        else:
            h, w = pixel_values.shape[2], pixel_values.shape[3]
            half = math.floor(h * 0.5)
            third = int(w / 3 + 0.5)  # the dynamo exporter has no ONNX function for round()
            quarter_up = math.ceil(h / 4)
            trunc = int(w * 0.75)
            mixed = torch.full((1,), h // 3 + w // 2, dtype=torch.int64)
        a = pixel_values[:, :, :half]
        b = pixel_values[:, :, :, :third]
        c = torch.arange(0, quarter_up, dtype=torch.int64)
        d = pixel_values[:, :, :, :trunc]
        return a, b, c, d, mixed


class Letterbox(nn.Module):
    """YOLO-style letterbox: scale by min(S/h, S/w) in float, Resize with that scale, pad to S x S.

    Traced, the scale is a float tensor handed to F.interpolate as torchvision's detection
    transform does when tracing; otherwise a Python float (symbolic under dynamo).
    """

    def __init__(self, size: int = 64) -> None:
        super().__init__()
        self.size = size
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, pixel_values: torch.Tensor) -> Any:
        if torch.jit.is_tracing():
            h = _size(pixel_values, 2).to(torch.float32)
            w = _size(pixel_values, 3).to(torch.float32)
            scale: Any = torch.minimum(self.size / h, self.size / w)
        else:
            scale = min(self.size / pixel_values.shape[2], self.size / pixel_values.shape[3])
        resized = F.interpolate(
            pixel_values, scale_factor=scale, mode="bilinear", align_corners=False, recompute_scale_factor=True
        )
        pad_h = self.size - resized.shape[-2]
        pad_w = self.size - resized.shape[-1]
        boxed = F.pad(resized, (pad_w // 2, pad_w - pad_w // 2, pad_h // 2, pad_h - pad_h // 2), value=0.5)
        return self.conv(boxed), resized


class PyramidPool(nn.Module):
    """PSP-style pyramid: avg pools at ceil-mode strides, upsampled back to the input size."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, stride=2, padding=1)

    def forward(self, pixel_values: torch.Tensor) -> Any:
        x = self.conv(pixel_values)
        outs = [x]
        for k in (2, 3, 5):
            p = F.avg_pool2d(x, k, stride=k, ceil_mode=True, count_include_pad=False)
            outs.append(F.interpolate(p, size=x.shape[-2:], mode="bilinear", align_corners=False))
        y = torch.cat(outs, 1)
        return y, F.max_pool2d(x, 3, 2, ceil_mode=True)


# --------------------------------------------------------------------------- #
# The set
# --------------------------------------------------------------------------- #

_TEXT_BINDINGS = ({"batch": 1, "sequence": 7}, {"batch": 2, "sequence": 13})
_TEXT_EXPORT = {"batch": 3, "sequence": 9}
_TEXT_RANGES = {"batch": (1, 64), "sequence": (2, 64)}
_BS = {0: "batch", 1: "sequence"}

_IMG_BINDINGS = ({"batch": 1, "height": 65, "width": 97}, {"batch": 2, "height": 130, "width": 75})
_IMG_EXPORT = {"batch": 2, "height": 96, "width": 128}
_IMG_RANGES = {"batch": (1, 16), "height": (32, 512), "width": (32, 512)}

_KV_BINDINGS = (
    {"batch": 1, "sequence": 1, "past_sequence": 8},
    {"batch": 2, "sequence": 7, "past_sequence": 13},
)
_KV_EXPORT = {"batch": 3, "sequence": 5, "past_sequence": 6}
_KV_RANGES = {"batch": (1, 64), "sequence": (1, 32), "past_sequence": (1, 32)}


def _tokens(token_types: bool = False) -> tuple[InputSpec, ...]:
    out = [
        InputSpec("input_ids", "int64", ("batch", "sequence"), "randint", 3, VOCAB),
        InputSpec("attention_mask", "int64", ("batch", "sequence"), "ones"),
    ]
    if token_types:
        out.append(InputSpec("token_type_ids", "int64", ("batch", "sequence"), "zeros"))
    return tuple(out)


def text(
    name: str,
    arch: str,
    build: Callable[[], nn.Module],
    outputs: tuple[str, ...],
    token_types: bool = False,
    derived: tuple[str, ...] = (),
    notes: str = "",
) -> Spec:
    axes = {o: (dict(_BS) if o in ("last_hidden_state", "logits") else {0: "batch"}) for o in outputs}
    return Spec(
        name,
        "transformer",
        arch,
        build,
        _tokens(token_types),
        outputs,
        _TEXT_EXPORT,
        _TEXT_BINDINGS,
        _TEXT_RANGES,
        axes,
        derived=derived,
        notes=notes,
    )


def kv(
    name: str,
    arch: str,
    build: Callable[[], nn.Module],
    kv_heads: int,
    head_dim: int,
    derived: tuple[str, ...] = (),
    notes: str = "",
) -> Spec:
    total = "past_sequence + sequence"
    inputs = [
        InputSpec("input_ids", "int64", ("batch", "sequence"), "randint", 3, VOCAB),
        InputSpec("attention_mask", "int64", ("batch", total), "ones"),
    ]
    outputs = ["logits"]
    axes: dict[str, dict[int, str]] = {"logits": dict(_BS)}
    for i in range(2):
        for part in ("key", "value"):
            inputs.append(
                InputSpec(
                    f"past_key_values.{i}.{part}", "float32", ("batch", kv_heads, "past_sequence", head_dim), "randn"
                )
            )
            outputs.append(f"present.{i}.{part}")
            axes[f"present.{i}.{part}"] = {0: "batch", 2: total}
    return Spec(
        name,
        "kv-decoder",
        arch,
        build,
        tuple(inputs),
        tuple(outputs),
        _KV_EXPORT,
        _KV_BINDINGS,
        _KV_RANGES,
        axes,
        derived=derived,
        notes=notes,
    )


def image(
    name: str,
    category: str,
    arch: str,
    build: Callable[[], nn.Module],
    outputs: tuple[str, ...],
    axes: dict[str, dict[int, str]] | None = None,
    bindings: tuple[Binding, Binding] = _IMG_BINDINGS,
    export: Binding = _IMG_EXPORT,
    exporters: tuple[str, ...] = ("torchscript", "dynamo"),
    derived: tuple[str, ...] = (),
    notes: str = "",
    compare: str = "values",
    ranges: dict[str, tuple[int, int]] | None = None,
) -> Spec:
    inputs = (InputSpec("pixel_values", "float32", ("batch", 3, "height", "width"), "randn"),)
    axes = axes if axes is not None else {o: {0: "batch"} for o in outputs}
    return Spec(
        name,
        category,
        arch,
        build,
        inputs,
        outputs,
        export,
        bindings,
        ranges or _IMG_RANGES,
        axes,
        exporters=exporters,
        derived=derived,
        notes=notes,
        compare=compare,
    )


def detector(name: str, fn: str, outputs: tuple[str, ...], notes: str = "", **kwargs: Any) -> Spec:
    inputs = (InputSpec("image", "float32", (3, "height", "width"), "randn"),)
    bindings = ({"height": 65, "width": 97}, {"height": 130, "width": 75})
    return Spec(
        name,
        "detection",
        fn,
        _detector(fn, **kwargs),
        inputs,
        outputs,
        {"height": 96, "width": 128},
        bindings,
        {"height": (32, 512), "width": (32, 512)},
        {o: {0: "detections"} for o in outputs},
        exporters=("torchscript", "dynamo"),
        compare="shapes",
        notes=notes,
    )


_BHW = {0: "batch", 2: "height", 3: "width"}
_DET = ("boxes", "labels", "scores")

SPECS: tuple[Spec, ...] = (
    # -- transformers (encoders, decoders without cache, vision) --------------------------
    text(
        "bert",
        "BertModel",
        build_bert,
        ("last_hidden_state", "pooler_output"),
        token_types=True,
        derived=("ort_opt_bert", "ort_opt_bert_fp16", "qdyn", "qdq", "fp16", "fp16_ort"),
    ),
    text("gpt2", "GPT2LMHeadModel", build_gpt2, ("logits",), derived=("ort_opt_gpt2", "qdyn", "fp16_ort")),
    text(
        "mobilebert",
        "MobileBertModel",
        build_mobilebert,
        ("last_hidden_state", "pooler_output"),
        token_types=True,
        derived=("ort_opt_bert",),
    ),
    text("squeezebert", "SqueezeBertModel", build_squeezebert, ("last_hidden_state",)),
    text(
        "xlm_roberta",
        "XLMRobertaModel",
        build_xlm_roberta,
        ("last_hidden_state", "pooler_output"),
        derived=("ort_opt_bert", "qdyn"),
    ),
    image(
        "vit_interp",
        "transformer",
        "ViTModel(interpolate_pos_encoding=True)",
        build_vit_interp,
        ("last_hidden_state",),
        derived=("ort_opt_vit", "fp16"),
        notes="position embeddings interpolated to the runtime patch grid (patch 8)",
    ),
    image(
        "dinov2",
        "transformer",
        "Dinov2Model",
        build_dinov2,
        ("last_hidden_state", "pooler_output"),
        notes="bicubic interpolation of position embeddings with a scale factor",
    ),
    image(
        "swin_dynamic",
        "transformer",
        "SwinModel (dynamic H, W)",
        build_swin_dynamic,
        ("last_hidden_state", "pooler_output"),
        derived=("ort_opt_swin",),
        notes="window padding to a multiple of window_size at run time",
    ),
    image(
        "hf_resnet",
        "cnn",
        "ResNetModel",
        build_hf_resnet,
        ("last_hidden_state", "pooler_output"),
        derived=("qdq", "fp16"),
    ),
    image(
        "poolformer",
        "cnn",
        "PoolFormerModel",
        build_poolformer,
        ("last_hidden_state",),
        axes={"last_hidden_state": _BHW},
    ),
    # -- decoders with a KV cache -----------------------------------------------------------
    kv("gpt2_kv", "GPT2LMHeadModel + cache", build_gpt2_kv, 2, 16, derived=("ort_opt_gpt2", "fp16_ort")),
    kv(
        "llama_kv",
        "LlamaForCausalLM + cache",
        _kv_builder("Llama", num_attention_heads=4, num_key_value_heads=2),
        2,
        8,
        derived=("qdyn", "fp16", "fp16_ort"),
    ),
    kv(
        "mistral_kv",
        "MistralForCausalLM + cache",
        _kv_builder("Mistral", num_attention_heads=4, num_key_value_heads=2, sliding_window=4),
        2,
        8,
        notes="sliding_window=4",
    ),
    kv(
        "qwen2_kv", "Qwen2ForCausalLM + cache", _kv_builder("Qwen2", num_attention_heads=4, num_key_value_heads=2), 2, 8
    ),
    kv("phi_kv", "PhiForCausalLM + cache", _kv_builder("Phi", num_attention_heads=4, partial_rotary_factor=0.5), 4, 8),
    kv(
        "gpt_neox_kv",
        "GPTNeoXForCausalLM + cache",
        _kv_builder("GPTNeoX", num_attention_heads=4, rotary_pct=0.5, use_parallel_residual=True),
        4,
        8,
    ),
    kv("opt_kv", "OPTForCausalLM + cache", build_opt_kv, 2, 16),
    # -- timm CNNs ---------------------------------------------------------------------------
    image(
        "timm_resnet10t",
        "timm",
        "timm resnet10t",
        _timm_builder("resnet10t"),
        ("logits",),
        derived=("qdq", "qdyn", "fp16"),
    ),
    image(
        "timm_mobilenetv3",
        "timm",
        "timm mobilenetv3_small_050",
        _timm_builder("mobilenetv3_small_050"),
        ("logits",),
        derived=("fp16",),
    ),
    image(
        "timm_tf_mobilenetv3",
        "timm",
        "timm tf_mobilenetv3_small_minimal_100",
        _timm_builder("tf_mobilenetv3_small_minimal_100"),
        ("logits",),
        derived=("qdq",),
        notes="TF 'same' padding computed from the input size at run time",
    ),
    image(
        "timm_tf_efficientnet",
        "timm",
        "timm tf_efficientnet_b0",
        _timm_builder("tf_efficientnet_b0"),
        ("logits",),
        notes="TF 'same' padding computed from the input size at run time",
    ),
    image("timm_regnetx", "timm", "timm regnetx_002", _timm_builder("regnetx_002"), ("logits",)),
    image("timm_convnext", "timm", "timm convnext_atto", _timm_builder("convnext_atto"), ("logits",)),
    image(
        "timm_vit_dynamic",
        "timm",
        "timm vit_tiny_patch16_224 (dynamic_img_size, dynamic_img_pad)",
        _timm_builder("vit_tiny_patch16_224", dynamic_img_size=True, dynamic_img_pad=True, depth=2),
        ("logits",),
        notes="pads to a multiple of the patch size; position embeddings resampled",
    ),
    image(
        "timm_hrnet",
        "timm",
        "timm hrnet_w18_small",
        _timm_builder("hrnet_w18_small"),
        ("logits",),
        bindings=({"batch": 1, "height": 64, "width": 96}, {"batch": 2, "height": 128, "width": 160}),
        notes="branches fused with F.interpolate(scale_factor=2**k): sizes must divide by 32",
    ),
    # -- torchvision detection and segmentation -------------------------------------------------
    detector(
        "fasterrcnn", "fasterrcnn_mobilenet_v3_large_320_fpn", _DET, min_size=96, max_size=160, box_score_thresh=0.0
    ),
    detector("retinanet", "retinanet_resnet50_fpn", _DET, min_size=96, max_size=160, score_thresh=0.0),
    detector("ssdlite", "ssdlite320_mobilenet_v3_large", _DET, score_thresh=0.0),
    detector("fcos", "fcos_resnet50_fpn", _DET, min_size=96, max_size=160, score_thresh=0.0),
    detector(
        "maskrcnn",
        "maskrcnn_resnet50_fpn",
        ("boxes", "labels", "masks", "scores"),
        min_size=96,
        max_size=160,
        box_score_thresh=0.0,
    ),
    image(
        "deeplabv3",
        "segmentation",
        "deeplabv3_mobilenet_v3_large",
        _segmenter("deeplabv3_mobilenet_v3_large"),
        ("out",),
        axes={"out": _BHW},
        derived=("fp16",),
    ),
    image("fcn", "segmentation", "fcn_resnet50", _segmenter("fcn_resnet50"), ("out",), axes={"out": _BHW}),
    image(
        "lraspp",
        "segmentation",
        "lraspp_mobilenet_v3_large",
        _segmenter("lraspp_mobilenet_v3_large"),
        ("out",),
        axes={"out": _BHW},
    ),
    # -- diffusers -------------------------------------------------------------------------------
    Spec(
        "unet2d",
        "diffusers",
        "UNet2DModel (tiny)",
        build_unet2d,
        (
            InputSpec("sample", "float32", ("batch", 3, "height", "width"), "randn"),
            InputSpec("timestep", "int64", (), "randint", 0, 1000),
        ),
        ("out_sample",),
        {"batch": 2, "height": 16, "width": 16},
        ({"batch": 1, "height": 16, "width": 24}, {"batch": 2, "height": 8, "width": 40}),
        {"batch": (1, 16), "height": (4, 256), "width": (4, 256)},
        {"out_sample": _BHW},
        notes="one downsampling: H and W even",
    ),
    Spec(
        "unet2d_condition",
        "diffusers",
        "UNet2DConditionModel (tiny)",
        build_unet2d_condition,
        (
            InputSpec("sample", "float32", ("batch", 4, "height", "width"), "randn"),
            InputSpec("timestep", "int64", (), "randint", 0, 1000),
            InputSpec("encoder_hidden_states", "float32", ("batch", "text_sequence", 32), "randn"),
        ),
        ("out_sample",),
        {"batch": 2, "height": 16, "width": 16, "text_sequence": 6},
        (
            {"batch": 1, "height": 16, "width": 24, "text_sequence": 7},
            {"batch": 2, "height": 8, "width": 40, "text_sequence": 5},
        ),
        {"batch": (1, 16), "height": (4, 256), "width": (4, 256), "text_sequence": (1, 77)},
        {"out_sample": _BHW},
        derived=("ort_opt_unet",),
        notes=(
            "one downsampling: H and W even (odd sizes take the forward_upsample_size branch, which both "
            "exporters bake at the export size: the Concat of the up block then fails in onnxruntime)"
        ),
    ),
    image(
        "vae",
        "diffusers",
        "AutoencoderKL (tiny)",
        build_vae,
        ("latent", "reconstruction"),
        axes={"latent": _BHW, "reconstruction": _BHW},
        bindings=({"batch": 1, "height": 32, "width": 48}, {"batch": 2, "height": 64, "width": 40}),
        notes="one downsampling with asymmetric (0,1,0,1) padding",
    ),
    # -- hand-written float detours ----------------------------------------------------------------
    image(
        "pad32_math",
        "float-detour",
        "PadMultipleMath: math.ceil(h / 32) * 32",
        PadMultipleMath,
        ("features", "coarse"),
        axes={"features": _BHW, "coarse": {0: "batch"}},
    ),
    image(
        "pad32_tensor",
        "float-detour",
        "PadMultipleTensor: torch.ceil(h.float() / 32) * 32",
        PadMultipleTensor,
        ("coarse", "padded"),
        axes={"coarse": {0: "batch"}, "padded": {0: "batch"}},
    ),
    image(
        "tf_same_pad",
        "float-detour",
        "TFSamePad: TF 'same' padding from the input size",
        TFSamePad,
        ("features",),
        axes={"features": {0: "batch"}},
    ),
    image(
        "patch_pad_resize",
        "float-detour",
        "PatchPadResize: pad to a multiple of 7, Resize to it",
        PatchPadResize,
        ("tokens", "back"),
        axes={"tokens": {0: "batch"}, "back": _BHW},
    ),
    image(
        "interp_scale",
        "float-detour",
        "InterpScale: F.interpolate(scale_factor=...) both ways",
        InterpScale,
        ("a", "b", "c", "d", "e"),
        axes={k: {0: "batch"} for k in "abcde"},
    ),
    image(
        "floor_half",
        "float-detour",
        "FloorHalf: (h * 0.5).floor(), round, ceil, truncation",
        FloorHalf,
        ("a", "b", "c", "d", "e"),
        axes={"a": {0: "batch"}, "b": {0: "batch"}, "c": {0: "quarter"}, "d": {0: "batch"}, "e": {}},
        compare="none",
        notes=(
            "run only, not compared with torch: the dynamo export bakes int(w / 3 + 0.5) and int(w * 0.75) at the "
            "export width (43 and 96; an exporter bug); the file is kept, its ONNX semantics is what counts"
        ),
    ),
    image(
        "letterbox",
        "float-detour",
        "Letterbox: min(S/h, S/w) scale, Resize with it, pad",
        Letterbox,
        ("features", "resized"),
        axes={"features": {0: "batch"}, "resized": {0: "batch"}},
        compare="none",
        notes=(
            "run only, not compared with torch: the exported size floor(97 * min(64/65, 64/97)) is computed in "
            "float32 (63) where torch computes in double (64); the ONNX semantics is what counts"
        ),
    ),
    image(
        "pyramid_pool",
        "float-detour",
        "PyramidPool: ceil-mode pools resized back",
        PyramidPool,
        ("features", "pooled"),
        axes={"features": {0: "batch"}, "pooled": {0: "batch"}},
    ),
)


# --------------------------------------------------------------------------- #
# Export
# --------------------------------------------------------------------------- #


def build_model(spec: Spec) -> nn.Module:
    torch.manual_seed(SEED)
    model = spec.build()
    model.eval()
    return model


def torch_args(spec: Spec, binding: Binding) -> tuple[torch.Tensor, ...]:
    feed = make_feed(spec.inputs, binding)
    return tuple(torch.from_numpy(feed[i.name]) for i in spec.inputs)


def export_torchscript(spec: Spec, model: nn.Module) -> onnx.ModelProto:
    dynamic_axes: dict[str, dict[int, str]] = {}
    for inp in spec.inputs:
        axes = {i: d for i, d in enumerate(inp.dims) if isinstance(d, str)}
        if axes:
            dynamic_axes[inp.name] = axes
    dynamic_axes.update({k: v for k, v in spec.output_axes.items() if v})
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


def _dynamo_dims(spec: Spec) -> dict[str, Dim]:
    dims: dict[str, Dim] = {name: Dim(name, min=lo, max=hi) for name, (lo, hi) in spec.dim_ranges.items()}
    for inp in spec.inputs:
        for d in inp.dims:
            if isinstance(d, str) and d not in dims:
                parts = d.split(" + ")
                lo = sum(spec.dim_ranges[p][0] for p in parts)
                hi = sum(spec.dim_ranges[p][1] for p in parts)
                dims[d] = Dim(dynamo_dim_name(d), min=lo, max=hi)
    return dims


def export_dynamo(spec: Spec, model: nn.Module) -> onnx.ModelProto:
    dims = _dynamo_dims(spec)
    shapes = [{i: dims[d] for i, d in enumerate(inp.dims) if isinstance(d, str)} or None for inp in spec.inputs]
    # Positional dynamic shapes: wrappers with *past take the trailing inputs as one tuple
    # (torch counts an empty *rest as no input at all).
    params = list(inspect.signature(model.forward).parameters.values())
    fixed = len(params) - 1
    if params and params[-1].kind == params[-1].VAR_POSITIONAL and len(shapes) > fixed:
        dynamic_shapes: Any = (*shapes[:fixed], tuple(shapes[fixed:]))
    else:
        dynamic_shapes = tuple(shapes)
    program = torch.onnx.export(
        model,
        torch_args(spec, spec.export_binding),
        input_names=[i.name for i in spec.inputs],
        output_names=list(spec.outputs),
        dynamic_shapes=dynamic_shapes,
        dynamo=True,
        external_data=False,
        verbose=False,
    )
    assert program is not None
    return program.model_proto


EXPORTERS: dict[str, Callable[[Spec, nn.Module], onnx.ModelProto]] = {
    "torchscript": export_torchscript,
    "dynamo": export_dynamo,
}


# --------------------------------------------------------------------------- #
# Derived variants (from the TorchScript export's file)
# --------------------------------------------------------------------------- #


def _heads(spec: Spec) -> tuple[int, int]:
    """(num_heads, hidden_size) for the transformer optimizer; 0, 0 lets it detect them."""
    return {"bert": (2, 32), "gpt2": (2, 32), "gpt2_kv": (2, 32), "xlm_roberta": (2, 32)}.get(spec.name, (0, 0))


def _ort_optimize(model_type: str, fp16: bool = False) -> Callable[[Spec, onnx.ModelProto], onnx.ModelProto]:
    def derive(spec: Spec, proto: onnx.ModelProto) -> onnx.ModelProto:
        from onnxruntime.transformers.optimizer import optimize_model

        heads, hidden = _heads(spec)
        with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
            path = Path(tmp) / "in.onnx"
            onnx.save(proto, str(path))
            opt = optimize_model(str(path), model_type=model_type, num_heads=heads, hidden_size=hidden, opt_level=0)
            if fp16:
                opt.convert_float_to_float16(keep_io_types=True)
            return opt.model

    return derive


class _RandomReader:
    """A calibration data reader: a few seeded random feeds at the export binding and both bindings."""

    def __init__(self, spec: Spec) -> None:
        bindings = [spec.export_binding, *spec.bindings]
        self.feeds = iter([make_feed(spec.inputs, b, seed=SEED + k) for k, b in enumerate(bindings)])

    def get_next(self) -> dict[str, np.ndarray] | None:
        return next(self.feeds, None)

    def rewind(self) -> None:  # pragma: no cover - the calibrator may call it
        pass


def _quantize(kind: str) -> Callable[[Spec, onnx.ModelProto], onnx.ModelProto]:
    def derive(spec: Spec, proto: onnx.ModelProto) -> onnx.ModelProto:
        from onnxruntime.quantization import (
            CalibrationDataReader,
            QuantFormat,
            QuantType,
            quantize_dynamic,
            quantize_static,
        )

        with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
            src, dst = Path(tmp) / "in.onnx", Path(tmp) / "out.onnx"
            onnx.save(proto, str(src))
            if kind == "dynamic":
                quantize_dynamic(str(src), str(dst), weight_type=QuantType.QInt8)
            else:
                reader = _RandomReader(spec)
                CalibrationDataReader.register(_RandomReader)
                quantize_static(
                    str(src),
                    str(dst),
                    reader,
                    quant_format=QuantFormat.QDQ,  # type: ignore[arg-type]
                    activation_type=QuantType.QUInt8,
                    weight_type=QuantType.QInt8,
                )
            return onnx.load(str(dst))

    return derive


def _fp16(spec: Spec, proto: onnx.ModelProto) -> onnx.ModelProto:
    from onnxconverter_common import float16

    return float16.convert_float_to_float16(proto, keep_io_types=True)


def _fp16_ort(spec: Spec, proto: onnx.ModelProto) -> onnx.ModelProto:
    from onnxruntime.transformers import float16
    from onnxruntime.transformers.onnx_model import OnnxModel

    # The converter appends the input casts at the end of the node list; sort as its own
    # optimizer does before saving.
    converted = OnnxModel(float16.convert_float_to_float16(proto, keep_io_types=True))
    converted.topological_sort()
    return converted.model


DERIVATIONS: dict[str, Callable[[Spec, onnx.ModelProto], onnx.ModelProto]] = {
    "ort_opt_bert": _ort_optimize("bert"),
    "ort_opt_bert_fp16": _ort_optimize("bert", fp16=True),
    "ort_opt_gpt2": _ort_optimize("gpt2"),
    "ort_opt_vit": _ort_optimize("vit"),
    "ort_opt_swin": _ort_optimize("swin"),
    "ort_opt_unet": _ort_optimize("unet"),
    "qdyn": _quantize("dynamic"),
    "qdq": _quantize("static"),
    "fp16": _fp16,
    "fp16_ort": _fp16_ort,
}
DERIVATION_NOTES = {
    "ort_opt_bert": "onnxruntime.transformers.optimizer.optimize_model(model_type='bert', opt_level=0)",
    "ort_opt_bert_fp16": "optimize_model(model_type='bert') then convert_float_to_float16(keep_io_types=True)",
    "ort_opt_gpt2": "optimize_model(model_type='gpt2', opt_level=0)",
    "ort_opt_vit": "optimize_model(model_type='vit', opt_level=0)",
    "ort_opt_swin": "optimize_model(model_type='swin', opt_level=0)",
    "ort_opt_unet": "optimize_model(model_type='unet', opt_level=0)",
    "qdyn": "onnxruntime.quantization.quantize_dynamic(weight_type=QInt8)",
    "qdq": "quantize_static(QDQ, activations QUInt8, weights QInt8, 3 random calibration feeds)",
    "fp16": "onnxconverter_common.float16.convert_float_to_float16(keep_io_types=True)",
    "fp16_ort": "onnxruntime.transformers.float16.convert_float_to_float16(keep_io_types=True)",
}


# --------------------------------------------------------------------------- #
# Post-processing, checks, manifest entries
# --------------------------------------------------------------------------- #


def _graphs(graph: onnx.GraphProto) -> Iterator[onnx.GraphProto]:
    yield graph
    for node in graph.node:
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                yield from _graphs(attr.g)
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for sub in attr.graphs:
                    yield from _graphs(sub)


def strip(model: onnx.ModelProto) -> None:
    """Drop intermediate value_info and per-node debug metadata (stack traces, doc strings).

    Also import every domain a node uses: onnxruntime's optimizer can add com.microsoft nodes to
    a model without importing the domain, which the checker rejects (onnxruntime runs it).
    """
    imported = {e.domain for e in model.opset_import}
    used = {n.domain for g in _graphs(model.graph) for n in g.node}
    for domain in sorted(used - imported - {"ai.onnx"}):
        model.opset_import.append(onnx.helper.make_opsetid(domain, 1))
    for graph in _graphs(model.graph):
        del graph.value_info[:]
        for node in graph.node:
            del node.metadata_props[:]
            node.doc_string = ""
    for function in model.functions:
        del function.value_info[:]
        for node in function.node:
            del node.metadata_props[:]
            node.doc_string = ""


def value_dims(value: onnx.ValueInfoProto) -> list[int | str | None]:
    dims: list[int | str | None] = []
    for dim in value.type.tensor_type.shape.dim:
        dims.append(
            dim.dim_value if dim.HasField("dim_value") else dim.dim_param if dim.HasField("dim_param") else None
        )
    return dims


def check_inputs(spec: Spec, model: onnx.ModelProto, exporter: str) -> None:
    """Graph inputs are the spec's, with its dims (sums spelled as the exporter spells them)."""
    initializers = {t.name for t in model.graph.initializer}
    got = {v.name: v for v in model.graph.input if v.name not in initializers}
    if list(got) != [i.name for i in spec.inputs]:
        raise AssertionError(f"graph inputs {list(got)} != {[i.name for i in spec.inputs]}")
    for inp in spec.inputs:
        want = [dynamo_dim_name(d) if isinstance(d, str) and exporter == "dynamo" else d for d in inp.dims]
        if value_dims(got[inp.name]) != want:
            raise AssertionError(f"{inp.name}: dims {value_dims(got[inp.name])} != {want}")


def session(data: bytes) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.log_severity_level = 3
    return ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])


def run_both(spec: Spec, data: bytes, model: nn.Module | None) -> list[dict[str, list[int]]]:
    """Run at both bindings; with a torch model, compare as ``spec.compare`` says."""
    sess = session(data)
    names = [o.name for o in sess.get_outputs()]
    shapes = []
    for binding in spec.bindings:
        feed = make_feed(spec.inputs, binding)
        got = sess.run(None, feed)
        if model is not None and spec.compare != "none":
            with torch.no_grad():
                ref = model(*(torch.from_numpy(feed[i.name]) for i in spec.inputs))
            ref = (ref,) if isinstance(ref, torch.Tensor) else tuple(ref)
            for name, actual, expected in zip(names, got, ref, strict=True):
                exp = expected.numpy()
                if spec.compare == "values" and actual.shape != exp.shape:
                    raise AssertionError(f"{name} at {binding}: shape {actual.shape} != torch {exp.shape}")
                if spec.compare == "values":
                    np.testing.assert_allclose(actual, exp, rtol=RTOL, atol=ATOL, err_msg=f"{name} at {binding}")
                elif actual.ndim != exp.ndim or actual.shape[1:] != exp.shape[1:]:
                    raise AssertionError(f"{name} at {binding}: shape {actual.shape} != torch {exp.shape}")
        shapes.append({n: list(a.shape) for n, a in zip(names, got, strict=True)})
    return shapes


def op_counts(model: onnx.ModelProto) -> dict[str, int]:
    counts: dict[str, int] = {}
    for graph in _graphs(model.graph):
        for node in graph.node:
            key = f"{node.domain or 'ai.onnx'}::{node.op_type}"
            counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items()))


def binding_for(spec: Spec, binding: Binding, model: onnx.ModelProto) -> Binding:
    """The binding with a value for every dim name the model's inputs use (sums included)."""
    out = dict(binding)
    for value in model.graph.input:
        for d in value_dims(value):
            if isinstance(d, str) and d not in out:
                out[d] = dim_value(d, binding)
    return out


def entry(
    spec: Spec,
    file_name: str,
    exporter: str,
    proto: onnx.ModelProto,
    data: bytes,
    shapes: list[dict[str, list[int]]],
    transform: str = "",
    derived_from: str = "",
) -> dict[str, Any]:
    inputs_by_name = {v.name: v for v in proto.graph.input}
    inputs = []
    for inp in spec.inputs:
        value = inputs_by_name[inp.name]
        inputs.append(
            {
                "name": inp.name,
                "elem_type": inp.dtype,
                "onnx_elem_type": value.type.tensor_type.elem_type,
                "dims": value_dims(value),
                "fill": inp.fill_json(),
            }
        )
    outputs = [
        {
            "name": v.name,
            "elem_type": str(onnx.helper.tensor_dtype_to_np_dtype(v.type.tensor_type.elem_type)),
            "onnx_elem_type": v.type.tensor_type.elem_type,
            "dims": value_dims(v),
        }
        for v in proto.graph.output
    ]
    opsets = {e.domain or "ai.onnx": e.version for e in proto.opset_import}
    return {
        "file": file_name,
        "model": spec.name,
        "category": spec.category,
        "architecture": spec.architecture,
        "exporter": exporter,
        "transform": transform,
        "derived_from": derived_from,
        "opset": opsets.get("ai.onnx", 0),
        "opset_imports": dict(sorted(opsets.items())),
        "ir_version": proto.ir_version,
        "size_bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "node_count": len(proto.graph.node),
        "op_counts": op_counts(proto),
        "dim_ranges": {k: list(v) for k, v in spec.dim_ranges.items()},
        "inputs": inputs,
        "outputs": outputs,
        "bindings": [
            {"dims": binding_for(spec, b, proto), "output_shapes": s}
            for b, s in zip(spec.bindings, shapes, strict=True)
        ],
        "notes": spec.notes,
    }


def save(proto: onnx.ModelProto, path: Path) -> bytes:
    data = proto.SerializeToString()
    path.write_bytes(data)
    onnx.checker.check_model(str(path))
    return data


def export_base(spec: Spec, exporter: str, out_dir: Path) -> tuple[dict[str, Any], onnx.ModelProto]:
    model = build_model(spec)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        proto = EXPORTERS[exporter](spec, model)
    strip(proto)
    onnx.checker.check_model(proto, full_check=False)
    check_inputs(spec, proto, exporter)
    data = proto.SerializeToString()
    shapes = run_both(spec, data, model)
    file_name = f"{spec.name}_{exporter}.onnx"
    data = save(proto, out_dir / file_name)
    return entry(spec, file_name, exporter, proto, data, shapes), proto


def export_derived(spec: Spec, kind: str, base: onnx.ModelProto, base_file: str, out_dir: Path) -> dict[str, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        proto = DERIVATIONS[kind](spec, base)
    strip(proto)
    onnx.checker.check_model(proto, full_check=False)
    data = proto.SerializeToString()
    shapes = run_both(spec, data, None)
    file_name = f"{spec.name}_torchscript.{kind}.onnx"
    data = save(proto, out_dir / file_name)
    return entry(spec, file_name, "torchscript", proto, data, shapes, DERIVATION_NOTES[kind], base_file)


# --------------------------------------------------------------------------- #
# Driver
# --------------------------------------------------------------------------- #


def versions() -> dict[str, str]:
    import importlib.metadata as md

    out = {"python": sys.version.split()[0]}
    for pkg in (
        "torch",
        "torchvision",
        "transformers",
        "timm",
        "diffusers",
        "onnx",
        "onnxscript",
        "onnxruntime",
        "onnxconverter-common",
        "numpy",
    ):
        try:
            out[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            out[pkg] = "absent"
    return out


def _short(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip()
    # Exporter errors carry pages of advice; the first lines say what failed.
    lines = [ln for ln in text.splitlines() if ln.strip()][:6]
    return "\n".join(lines)[:1500]


class ExportTimeout(Exception):
    """An export ran past ``--timeout`` seconds (sympy can spin on nested ceil guards)."""


def _alarm(signum: int, frame: Any) -> None:
    raise ExportTimeout("export took longer than the timeout")


def write_manifest(
    path: Path, entries: list[dict[str, Any]], failures: list[dict[str, str]], redone: set[tuple[str, str]]
) -> None:
    """Write the manifest: this run's records, and the old records of (model, exporter) pairs not redone.

    A derived variant belongs to the exporter it was derived from (``torchscript``).
    """
    old = json.loads(path.read_text()) if path.exists() else {}
    order = {s.name: i for i, s in enumerate(SPECS)}

    def keep(record: dict[str, Any]) -> bool:
        key = (record["model"], record["exporter"].split(".")[0])
        return record["model"] in order and key not in redone

    entries = entries + [e for e in old.get("models", []) if keep(e)]
    failures = failures + [f for f in old.get("failed_exports", []) if keep(f)]
    entries.sort(key=lambda e: (order[e["model"]], e["file"]))
    failures.sort(key=lambda f: (order[f["model"]], f["exporter"]))
    manifest = {
        "description": "held-out-like evaluation set, made by tests/models/export_heldout_like.py",
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
    path.write_text(json.dumps(manifest, indent=2) + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", help="model names (default: all)")
    parser.add_argument("--out-dir", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--exporter", choices=sorted(EXPORTERS), action="append", help="restrict exporters")
    parser.add_argument("--list", action="store_true", help="list the models and exit")
    parser.add_argument("--timeout", type=int, default=300, help="seconds allowed for one export (default 300)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s", force=True)
    for noisy in ("torch", "onnxscript", "transformers", "torch.onnx", "onnxruntime"):
        logging.getLogger(noisy).setLevel(logging.ERROR)
    if args.list:
        for spec in SPECS:
            print(f"{spec.name:22} {spec.category:13} {','.join(spec.exporters):22} {','.join(spec.derived)}")
        return 0
    names = set(args.models) or {s.name for s in SPECS}
    unknown = names - {s.name for s in SPECS}
    if unknown:
        parser.error(f"unknown models: {sorted(unknown)}")
    out_dir: Path = args.out_dir
    out_dir.mkdir(parents=True, exist_ok=True)
    manifest_path = out_dir / "manifest.json"
    # Models are exported one at a time; the manifest is rewritten after each, so an
    # interrupted run keeps what it finished.
    signal.signal(signal.SIGALRM, _alarm)

    entries: list[dict[str, Any]] = []
    failures: list[dict[str, str]] = []
    redone: set[tuple[str, str]] = set()
    for spec in SPECS:
        if spec.name not in names:
            continue
        for exporter in args.exporter or spec.exporters:
            if exporter not in spec.exporters:
                continue
            redone.add((spec.name, exporter))
            start = time.perf_counter()
            signal.alarm(args.timeout)
            try:
                record, proto = export_base(spec, exporter, out_dir)
            except Exception as exc:
                failures.append({"model": spec.name, "exporter": exporter, "stage": "export", "error": _short(exc)})
                log.error("FAILED %s/%s: %s", spec.name, exporter, _short(exc).splitlines()[0])
                log.debug("%s", traceback.format_exc())
                continue
            finally:
                signal.alarm(0)
            entries.append(record)
            log.info(
                "%-36s %9d bytes %5d nodes %6.1fs",
                record["file"],
                record["size_bytes"],
                record["node_count"],
                time.perf_counter() - start,
            )
            if exporter != "torchscript":
                continue
            for kind in spec.derived:
                try:
                    derived = export_derived(spec, kind, proto, record["file"], out_dir)
                except Exception as exc:
                    failures.append(
                        {"model": spec.name, "exporter": f"torchscript.{kind}", "stage": "derive", "error": _short(exc)}
                    )
                    log.error("FAILED %s/torchscript.%s: %s", spec.name, kind, _short(exc).splitlines()[0])
                    continue
                entries.append(derived)
                log.info("%-36s %9d bytes %5d nodes", derived["file"], derived["size_bytes"], derived["node_count"])
        write_manifest(manifest_path, entries, failures, redone)

    write_manifest(manifest_path, entries, failures, redone)
    log.info("wrote %s (%d models, %d failures)", manifest_path, len(entries), len(failures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
