"""A node's attributes as its rule reads them: Python values, references resolved (Clause 8.4)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from onnx import AttributeProto, NodeProto, helper

from infer.contract.signature import Signature, attribute_value

# Attribute kinds a rule reads as onnx's own objects (a graph, a tensor, a type).
_AS_PROTO = (AttributeProto.GRAPH, AttributeProto.GRAPHS, AttributeProto.TENSOR, AttributeProto.SPARSE_TENSOR,
             AttributeProto.TYPE_PROTO)  # fmt: skip


def rule_attributes(
    node: NodeProto,
    sig: Signature | None,
    attr_refs: Mapping[str, AttributeProto] | None,
    serialized: tuple[bytes, ...] | None = None,
) -> dict[str, Any]:
    """The node's attributes as Python values, the ``ref_attr_name``s of a function body read from
    ``attr_refs`` (its call site's). What a rule must not read is left out, so that it falls back
    to the schema default or refuses the node cleanly: an attribute without a type (which value
    field holds it cannot be told), and one whose type is not the schema's (a rule would take a
    string for an int). Validation reports both (``attribute-type``).

    ``serialized``: the attributes as the node's view keeps them (none a reference), when it does:
    the values read from them are kept for the next node with the same attributes (a fresh
    dict, its lists copied: a rule may change what it was handed), unless one is a protobuf
    message (a tensor), which holds its whole model alive."""
    if serialized is not None and not serialized:
        return {}
    key = None if serialized is None else (id(sig), serialized)
    if key is not None:
        hit = _DECODED.get(key)
        if hit is not None and hit[0] is sig:
            return {k: list(v) if type(v) is list else v for k, v in hit[1].items()}
    attrs = _decoded(node, sig, attr_refs)
    if key is not None and not any(a.type in _AS_PROTO for a in node.attribute):
        if len(_DECODED) >= _MAX_DECODED:
            _DECODED.clear()
        _DECODED[key] = (sig, {k: list(v) if type(v) is list else v for k, v in attrs.items()})
    return attrs


# (id(signature), serialized attributes) -> (the signature, the values a rule reads). The
# signature is held so that its id is not reused while the entry lives; bounded for long-lived
# processes. What it holds depends on the attributes and the schema alone.
_DECODED: dict[tuple, tuple[Signature | None, dict[str, Any]]] = {}
_MAX_DECODED = 1 << 12


def _decoded(node: NodeProto, sig: Signature | None, attr_refs: Mapping[str, AttributeProto] | None) -> dict[str, Any]:
    attrs: dict[str, Any] = {}
    if not node.attribute:
        return attrs
    specs = sig.attributes if sig is not None else None
    for a in node.attribute:
        name, given = a.name, a
        if a.ref_attr_name:
            given = (attr_refs or {}).get(a.ref_attr_name)
            if given is None:
                continue  # no value at the call site and no default: omitted (Clause 8.4)
        if given.type == AttributeProto.UNDEFINED or given.ref_attr_name:
            continue  # no type, or a reference the call site left unresolved
        spec = specs.get(name) if specs is not None else None
        if spec is not None and given.type != spec.type:
            continue
        attrs[name] = helper.get_attribute_value(given) if given.type in _AS_PROTO else attribute_value(given)
    return attrs
