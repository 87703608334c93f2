"""Custom domains, one module each: operators that onnx and onnxruntime do not define.

A module here is named after its domain (dots as underscores) and declares its operators with
``signatures.kit.operator.operator`` (the signature, the rule and its examples in one record);
``signatures.ensure`` imports the module of a node's domain for an operator the index of the
built-in domains does not list, so a new domain touches nothing else
(docs/adding-an-operator.md walks through one).
"""
