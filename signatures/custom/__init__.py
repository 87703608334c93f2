"""Custom domains, one module each: a model's own operators that onnx and onnxruntime do not define.

A module here declares its domain's operators with ``signatures.kit.operator.operator`` (the
signature, the rule and its examples in one record); ``signatures.ensure`` imports these modules
for an operator the index of the built-in domains does not list, so a new domain touches nothing
else (docs/adding-an-operator.md walks through one).
"""
