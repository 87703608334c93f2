"""Annotate a model: write the inferred type and shape of every value into a copy of it.

    python examples/annotate_model.py [MODEL] [OUT]

The same as ``onnx-infer annotate MODEL -o OUT``, from Python. Tools that read ``value_info``
(optimizers, quantizers, converters, Netron) then see every intermediate shape, with symbolic
extents written as ``dim_param`` strings such as ``batch`` or ``sequence + 1``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import onnx

import infer

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    src = Path(argv[0]) if argv else HERE / "bert_tiny.onnx"
    dest = Path(argv[1]) if len(argv) > 1 else Path(src.stem + ".annotated.onnx")  # in the working directory

    result = infer.infer_model(src)  # the input file is never modified
    print(result.summary())
    for d in result.errors:  # everything wrong inside the model is a diagnostic, not an exception
        print(d)

    # ``result.model`` is an annotated copy; ``dims_style="strict"`` would write identifier
    # names only (``dim__3``) for tools that cannot read expressions.
    onnx.save(result.model, dest)
    print(f"wrote {dest}")

    # Read it back as any other tool would.
    annotated = onnx.load(dest)
    onnx.checker.check_model(annotated)
    symbolic = [vi for vi in annotated.graph.value_info if any(d.dim_param for d in vi.type.tensor_type.shape.dim)]
    print(f"{len(annotated.graph.value_info)} value_info entries, {len(symbolic)} with symbolic dims, such as:")
    for vi in symbolic[:6]:
        dims = [d.dim_param or str(d.dim_value) for d in vi.type.tensor_type.shape.dim]
        print(f"  {vi.name}: [{', '.join(dims)}]")
    return 1 if result.errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
