"""Infer the shipped tiny BERT and read the result as a compiler would."""

from __future__ import annotations

from pathlib import Path

import infer
from infer import dims as D

MODEL = Path(__file__).with_name("bert_tiny.onnx")


def main() -> None:
    result = infer.infer_model(MODEL)
    print(result.summary())
    print("\nDimension variables:")
    for var in result.dims:
        print(" ", var)
    out = result.shape_of("last_hidden_state")
    print("\nlast_hidden_state:", [D.to_str(d) for d in out])
    print("at batch=4, sequence=9:", [D.evaluate(d, {"batch": 4, "sequence": 9}) for d in out])
    print("\nA few intermediate values:")
    for _, name, value in list(result.values())[40:46]:
        print(f"  {name}: {value}")
    for fact in result.dims.facts:
        print("assumed:", fact)


if __name__ == "__main__":
    main()
