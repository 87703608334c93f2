"""The version of onnx-infer, which reports, the conformance statement and ``--version`` show."""

__version__ = "0.1.0"
