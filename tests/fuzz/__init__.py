"""The fuzz campaign: hostile mutated models through the command line, random valid models
against onnxruntime (docs/limits.md)."""
