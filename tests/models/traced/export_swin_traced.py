"""Export the Swin of the input-domain issue: a TorchScript export with dynamic height and width
whose window partition was traced at 32 x 32, so it runs only where the patch grid is a multiple
of the window (what ``onnx-infer domain`` must find and ``verify`` must draw inside).

    /work/export-venv/bin/python tests/models/traced/export_swin_traced.py

export_heldout_like.py refuses this export (it does not match PyTorch at other sizes): that is
the point here. Deterministic (``torch.manual_seed(0)``, random weights, no hub).
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import onnx
import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from export_heldout_like import build_swin_dynamic, strip  # noqa: E402


def main() -> None:
    torch.manual_seed(0)
    model = build_swin_dynamic().eval()
    x = torch.randn(1, 3, 32, 32)
    buf = io.BytesIO()
    axes = {"pixel_values": {0: "batch", 2: "height", 3: "width"}}
    torch.onnx.export(
        model,
        (x,),
        buf,
        input_names=["pixel_values"],
        output_names=["last_hidden_state", "pooler_output"],
        dynamic_axes=axes,
        opset_version=17,
        dynamo=False,
    )
    m = onnx.load_from_string(buf.getvalue())
    strip(m)
    onnx.checker.check_model(m)
    onnx.save(m, HERE / "swin_traced_torchscript.onnx")


if __name__ == "__main__":
    main()
