"""Make the large models the benchmark times (run once, with the export venv).

* ``gpt2_48.onnx``: GPT2LMHeadModel with 48 layers, exported by the TorchScript
  exporter (``dynamo=False``, opset 17) with dynamic ``batch`` and ``seq``;
  about 11,000 nodes.
* ``llama_32.onnx``: LlamaForCausalLM with 32 layers (grouped-query attention,
  RoPE), exported by the dynamo exporter with dynamic ``batch`` and ``seq``.
* ``resnet152.onnx``: a ResNet-152 (transformers' ResNetModel, depths 3-8-36-3)
  exported with dynamic ``batch``, ``height`` and ``width``.

The weights are random and narrow (the shapes of the graph are what is timed,
not the arithmetic), so the files stay small. The synthetic graphs of
``benchmarks/run.py`` need no export and are built there.

    /work/export-venv/bin/python benchmarks/make_models.py [--out benchmarks/models]
"""

from __future__ import annotations

import argparse
import logging
import warnings
from pathlib import Path

import onnx
import torch
import transformers
from torch import nn
from torch.export import Dim

HERE = Path(__file__).resolve().parent


class _Logits(nn.Module):
    """A causal language model called without cache, returning its logits."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        out = self.model(input_ids=input_ids, attention_mask=attention_mask, use_cache=False, return_dict=True)
        return out.logits


class _Features(nn.Module):
    """A vision backbone returning its last hidden state."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, pixel_values: torch.Tensor) -> torch.Tensor:
        return self.model(pixel_values=pixel_values, return_dict=True).last_hidden_state


def gpt2_48() -> nn.Module:
    config = transformers.GPT2Config(vocab_size=1000, n_positions=256, n_embd=64, n_layer=48, n_head=4, use_cache=False)
    return _Logits(transformers.GPT2LMHeadModel(config))


def llama_32() -> nn.Module:
    config = transformers.LlamaConfig(
        vocab_size=1000,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=32,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        use_cache=False,
    )
    return _Logits(transformers.LlamaForCausalLM(config))


def resnet152() -> nn.Module:
    config = transformers.ResNetConfig(
        embedding_size=16,
        hidden_sizes=[32, 64, 128, 256],
        depths=[3, 8, 36, 3],
        layer_type="bottleneck",
    )
    return _Features(transformers.ResNetModel(config))


def _export_lm(model: nn.Module, path: Path, dynamo: bool) -> None:
    ids = torch.randint(0, 1000, (2, 16))
    mask = torch.ones(2, 16, dtype=torch.int64)
    if dynamo:
        batch, seq = Dim("batch", min=1, max=64), Dim("seq", min=2, max=256)
        shapes = {"input_ids": {0: batch, 1: seq}, "attention_mask": {0: batch, 1: seq}}
        prog = torch.onnx.export(
            model,
            (ids, mask),
            dynamic_shapes=shapes,
            dynamo=True,
            input_names=["input_ids", "attention_mask"],
            output_names=["logits"],
        )
        prog.save(str(path))
        return
    axes = {
        "input_ids": {0: "batch", 1: "seq"},
        "attention_mask": {0: "batch", 1: "seq"},
        "logits": {0: "batch", 1: "seq"},
    }
    torch.onnx.export(
        model,
        (ids, mask),
        str(path),
        dynamo=False,
        opset_version=17,
        input_names=["input_ids", "attention_mask"],
        output_names=["logits"],
        dynamic_axes=axes,
    )


def _export_cnn(model: nn.Module, path: Path) -> None:
    pixels = torch.randn(1, 3, 64, 64)
    axes = {"pixel_values": {0: "batch", 2: "height", 3: "width"}, "features": {0: "batch"}}
    torch.onnx.export(
        model,
        (pixels,),
        str(path),
        dynamo=False,
        opset_version=17,
        input_names=["pixel_values"],
        output_names=["features"],
        dynamic_axes=axes,
    )


def _strip(path: Path) -> int:
    """Drop the exporter's ``value_info`` (the engines must infer them); return the node count."""
    model = onnx.load(str(path))
    del model.graph.value_info[:]
    onnx.save(model, str(path))
    return len(model.graph.node)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "models")
    parser.add_argument("names", nargs="*", default=["gpt2_48", "llama_32", "resnet152"])
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    torch.manual_seed(0)
    for name in args.names:
        path = args.out / f"{name}.onnx"
        model = {"gpt2_48": gpt2_48, "llama_32": llama_32, "resnet152": resnet152}[name]().eval()
        with torch.no_grad():
            if name == "resnet152":
                _export_cnn(model, path)
            else:
                _export_lm(model, path, dynamo=name == "llama_32")
        print(f"{path.name}: {_strip(path)} nodes, {path.stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
