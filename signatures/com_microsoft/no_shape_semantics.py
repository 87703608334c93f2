"""Contrib operators whose outputs no rule can infer, and why: the one place such reasons live.

``NO_SHAPE_SEMANTICS`` maps each operator to the reason; each operator's record registers it as
unsupported with that reason (``operator(..., unsupported=...)``), which the engine reports at
such a node and the conformance statement (infer/out/conformance.py) lists. An operator belongs
here only when its outputs follow from nothing a model states: they are whatever an opaque
payload computes.
"""

from __future__ import annotations

from signatures.com_microsoft import INT, MS, REQUIRED, STRING
from signatures.kit.operator import case, operator

NO_SHAPE_SEMANTICS: dict[str, str] = {
    "EPContext": "its outputs are those of a compiled graph held in an execution provider's binary context "
    "(ep_cache_context), which the model does not describe",
    "Snpe": "its outputs are those of the network in the SNPE DLC payload (the DLC attribute), which the "
    "model does not describe",
}

operator(
    "Snpe",
    "inputs...:T",
    "outputs...:T",
    domain=MS,
    types={"T": ("tensor(uint8)", "tensor(uint16)", "tensor(float)")},
    attrs={
        "DLC": (STRING, REQUIRED),
        "notes": (STRING, None),
        "snpe_version": (STRING, None),
        "target_device": (STRING, None),
    },
    unsupported=NO_SHAPE_SEMANTICS["Snpe"],
    examples=[case(["float[1,3,224,224]"], ["float[*]"], DLC="payload", error="unsupported")],
)
_EP_TYPES = ("tensor(bool)", "tensor(int8)", "tensor(int16)", "tensor(int32)", "tensor(int64)", "tensor(uint8)",
             "tensor(uint16)", "tensor(uint32)", "tensor(uint64)", "tensor(float16)", "tensor(float)", "tensor(double)",
             "tensor(bfloat16)")  # fmt: skip
_EP_ATTRS = {"embed_mode": (INT, 1), "ep_cache_context": (STRING, None), "ep_sdk_version": (STRING, None),
             "hardware_architecture": (STRING, None), "main_context": (INT, 1), "max_size": (INT, 0),
             "notes": (STRING, None), "onnx_model_filename": (STRING, None), "partition_name": (STRING, None),
             "source": (STRING, None)}  # fmt: skip
# EPContext's inputs may be none at all (``...?``).
operator(
    "EPContext",
    "inputs...?~:T",
    "outputs...~:T",
    domain=MS,
    types={"T": _EP_TYPES},
    attrs=_EP_ATTRS,
    unsupported=NO_SHAPE_SEMANTICS["EPContext"],
    examples=[
        case(
            ["float[N,3]", "int64[N]"],
            ["unknown", "unknown"],
            ep_cache_context="context.bin",
            source="QNN",
            error="unsupported",
        ),
    ],
)
