"""A generative oracle: random valid shape programs, run in onnxruntime, every claim checked."""
