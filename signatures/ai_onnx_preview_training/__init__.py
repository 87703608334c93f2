"""Rules of the ``ai.onnx.preview.training`` domain: optimizers (Adagrad, Adam, Momentum) and
Gradient. Every output has the shape of the input it updates or differentiates by."""
