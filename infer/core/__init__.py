"""The core: the type lattice, extents and their bounds, values, the dimension table and its
per-run scope, diagnostics and limits. It imports nothing else of onnx-infer."""
