"""Rules of the ``ai.onnx.ml`` domain (traditional machine learning), one module per family.

Most of these operators take a batch ``[N, C]`` and size their outputs from attributes (class
labels, targets, categories), and several decide their output element type from an attribute, so
the rules return full types. Where onnxruntime, ``onnx.reference`` and the operator definition
disagree, a rule claims only what holds for all of them and says which part it left unknown.
"""
