"""Contrib operators whose outputs no rule can infer, and why: the one place such reasons live.

``NO_SHAPE_SEMANTICS`` maps each operator to the reason; every entry is registered as
unsupported (``signatures.kit.registry.unsupported``), which the engine reports at such a node and
the conformance statement (infer/out/conformance.py) lists. An operator belongs here only when its
outputs follow from nothing a model states: they are whatever an opaque payload computes.
"""

from __future__ import annotations

from infer.contract.signature import AttrSpec, Formal, Signature, declare
from signatures.com_microsoft import INT, MS, REQUIRED, STRING, op
from signatures.kit.registry import example, lookup, unsupported

NO_SHAPE_SEMANTICS: dict[str, str] = {
    "EPContext": "its outputs are those of a compiled graph held in an execution provider's binary context "
    "(ep_cache_context), which the model does not describe",
    "Snpe": "its outputs are those of the network in the SNPE DLC payload (the DLC attribute), which the "
    "model does not describe",
}

op("Snpe", "inputs...:T", "outputs...:T", {"T": ("tensor(uint8)", "tensor(uint16)", "tensor(float)")},
   {"DLC": (STRING, REQUIRED), "notes": (STRING, None), "snpe_version": (STRING, None),
    "target_device": (STRING, None)})  # fmt: skip
_EP_TYPES = ("tensor(bool)", "tensor(int8)", "tensor(int16)", "tensor(int32)", "tensor(int64)", "tensor(uint8)",
             "tensor(uint16)", "tensor(uint32)", "tensor(uint64)", "tensor(float16)", "tensor(float)", "tensor(double)",
             "tensor(bfloat16)")  # fmt: skip
_EP_ATTRS = {"embed_mode": (INT, 1), "ep_cache_context": (STRING, None), "ep_sdk_version": (STRING, None),
             "hardware_architecture": (STRING, None), "main_context": (INT, 1), "max_size": (INT, 0),
             "notes": (STRING, None), "onnx_model_filename": (STRING, None), "partition_name": (STRING, None),
             "source": (STRING, None)}  # fmt: skip
# EPContext's variadic inputs may be none at all, which ``op`` cannot say: declared in full.
declare(Signature(
    domain=MS, name="EPContext", since_version=1,
    inputs=(Formal("inputs", "T", "variadic", 0, False),), outputs=(Formal("outputs", "T", "variadic", 1, False),),
    constraints={"T": _EP_TYPES},
    attributes={n: AttrSpec(n, t, False, d) for n, (t, d) in _EP_ATTRS.items()},
    min_inputs=0, max_inputs=2147483647, min_outputs=1, max_outputs=2147483647,
))  # fmt: skip

for _name, _why in NO_SHAPE_SEMANTICS.items():
    if lookup(MS, _name, 1) is None:  # (a family module may have registered it already)
        unsupported(_name, _why, domain=MS)

example("Snpe", ["float[1,3,224,224]"], ["float[*]"], domain=MS, attrs={"DLC": "payload"}, error="unsupported")
example("EPContext", ["float[N,3]", "int64[N]"], ["unknown", "unknown"], domain=MS,
        attrs={"ep_cache_context": "context.bin", "source": "QNN"}, error="unsupported")  # fmt: skip
