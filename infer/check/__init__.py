"""Checking a model against the spec and the runtime: validation (Clause 10), the input domain,
and ``verify`` (claims against onnxruntime). Below the rules and the walk, which report to it."""
