"""Operator signatures derived from ``onnx.defs`` (never retyped by hand).

For the standard domains the arity, optional and variadic inputs, attribute defaults and type
constraints of every operator version come from the schemas the installed ``onnx`` carries.
Custom domains (``com.microsoft``) declare a ``Signature`` of their own with the same shape.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache
from typing import Any, Protocol

import onnx
from onnx import AttributeProto, defs, helper

from infer.core.types import (
    UNKNOWN,
    MapType,
    OptionalType,
    SequenceType,
    SparseTensorType,
    TensorType,
    Type,
    elem_from_name,
)
from infer.load.nodeview import long_list

STANDARD_DOMAINS = ("", "ai.onnx.ml", "ai.onnx.preview.training", "ai.onnx.preview")


def canonical_domain(domain: str) -> str:
    """``ai.onnx`` and the empty string name the same default domain (Clause 5.3.2)."""
    return "" if domain in ("", "ai.onnx") else domain


@dataclass(frozen=True, slots=True)
class Formal:
    """A formal input or output."""

    name: str
    type_str: str
    option: str  # "single" | "optional" | "variadic"
    min_arity: int = 1
    homogeneous: bool = True


@dataclass(frozen=True, slots=True)
class AttrSpec:
    name: str
    type: int  # AttributeProto.AttributeType
    required: bool
    default: Any = None  # the Python value of the default, or None


@dataclass(frozen=True)
class Signature:
    """What a node of one operator version must look like."""

    domain: str
    name: str
    since_version: int
    inputs: tuple[Formal, ...] = ()
    outputs: tuple[Formal, ...] = ()
    constraints: dict[str, tuple[str, ...]] = field(default_factory=dict)
    attributes: dict[str, AttrSpec] = field(default_factory=dict)
    min_inputs: int = 0
    max_inputs: int = 0
    min_outputs: int = 0
    max_outputs: int = 0
    has_function: bool = False
    deprecated: bool = False

    def input_formal(self, i: int) -> Formal | None:
        """The formal a node's ``i``-th input binds to (the last one when variadic)."""
        if i < len(self.inputs):
            return self.inputs[i]
        if self.inputs and self.inputs[-1].option == "variadic":
            return self.inputs[-1]
        return None

    def output_formal(self, i: int) -> Formal | None:
        if i < len(self.outputs):
            return self.outputs[i]
        if self.outputs and self.outputs[-1].option == "variadic":
            return self.outputs[-1]
        return None


_OPTION = {
    defs.OpSchema.FormalParameterOption.Single: "single",
    defs.OpSchema.FormalParameterOption.Optional: "optional",
    defs.OpSchema.FormalParameterOption.Variadic: "variadic",
}


def _formal(p: defs.OpSchema.FormalParameter) -> Formal:
    return Formal(p.name, p.type_str, _OPTION[p.option], p.min_arity, p.is_homogeneous)


def attribute_value(a: AttributeProto) -> Any:
    """The Python value of an attribute; strings decoded as UTF-8 (lists of them too). A list of
    more than ``LONG_LIST`` elements is a read-only sequence over protobuf's own (Clause 15.4:
    no Python object per element of a list no rule may read)."""
    long = long_list(a)
    if long is not None:
        return long
    v = helper.get_attribute_value(a)
    if isinstance(v, bytes):
        return v.decode("utf-8", errors="replace")
    if isinstance(v, list) and v and isinstance(v[0], bytes):
        return [x.decode("utf-8", errors="replace") for x in v]
    return v


def _attr_spec(name: str, a: defs.OpSchema.Attribute) -> AttrSpec:
    default = None
    dv = a.default_value  # never None: an attribute without a default has an UNDEFINED one
    if dv.type != AttributeProto.UNDEFINED:
        default = attribute_value(dv)
    # onnx's stub gives AttrType no int conversion; it is an IntEnum (a pybind11 enum before 1.18)
    return AttrSpec(name, int(a.type), a.required, default)  # type: ignore[call-overload]


def _from_schema(s: defs.OpSchema) -> Signature:
    return Signature(
        domain=canonical_domain(s.domain),
        name=s.name,
        since_version=s.since_version,
        inputs=tuple(_formal(p) for p in s.inputs),
        outputs=tuple(_formal(p) for p in s.outputs),
        constraints={c.type_param_str: tuple(c.allowed_type_strs) for c in s.type_constraints},
        attributes={n: _attr_spec(n, a) for n, a in s.attributes.items()},
        min_inputs=s.min_input,
        max_inputs=s.max_input,
        min_outputs=s.min_output,
        max_outputs=s.max_output,
        has_function=bodies_of(s).has_function or bodies_of(s).has_context_dependent_function,
        deprecated=s.deprecated,
    )


_custom: dict[tuple[str, str], list[Signature]] = {}


def declare(sig: Signature) -> Signature:
    """Declare the signature of a custom-domain operator version."""
    versions = _custom.setdefault((canonical_domain(sig.domain), sig.name), [])
    versions.append(sig)
    versions.sort(key=lambda s: s.since_version)
    return sig


def _declared(domain: str, op_type: str, opset: int) -> tuple[Signature | None, defs.OpSchema | None]:
    """What declares ``op_type`` at ``opset``: a signature declared here, or onnx's schema (one of
    the two, or neither)."""
    domain = canonical_domain(domain)
    custom = _custom.get((domain, op_type))
    if custom:
        fitting = [s for s in custom if s.since_version <= opset]
        return (fitting[-1] if fitting else None), None
    if domain not in STANDARD_DOMAINS:
        return None, None
    try:
        return None, defs.get_schema(op_type, opset, domain)
    except defs.SchemaError:
        return None, None


# Signatures of the schemas onnx ships, by what identifies one: a shipped schema never changes.
_SHIPPED: dict[tuple[str, str, int, str, int], Signature] = {}


def signature(domain: str, op_type: str, opset: int) -> Signature | None:
    """The signature in force for ``op_type`` when ``domain`` is imported at ``opset``, as the
    schemas are now: a schema registered or deregistered at run time (``onnx.defs.register_schema``)
    since an earlier call is seen. onnx's registry says nothing when it changes, so each lookup
    asks it which schema is in force (a few microseconds; a run asks once per operator version,
    ``infer.walk.dispatch``); the signature built from a schema onnx ships is kept, by its name,
    version and place of definition, for as long as that schema is the one in force."""
    sig, schema = _declared(domain, op_type, opset)
    if schema is None:
        return sig
    if schema.line == 0:  # built in Python (registered at run time): no place of definition to key on
        return _from_schema(schema)
    key = (schema.domain, schema.name, schema.since_version, schema.file, schema.line)
    sig = _SHIPPED.get(key)
    if sig is None:
        sig = _SHIPPED[key] = _from_schema(schema)
    return sig


class Bodies(Protocol):
    """What an ``OpSchema`` says of its function bodies (``bodies_of``)."""

    @property
    def has_function(self) -> bool: ...
    @property
    def has_context_dependent_function(self) -> bool: ...
    @property
    def function_opset_versions(self) -> list[int]: ...
    @property
    def context_dependent_function_opset_versions(self) -> list[int]: ...
    @property
    def function_body(self) -> onnx.FunctionProto: ...
    def get_function_with_opset_version(self, opset: int) -> bytes: ...
    def get_context_dependent_function_with_opset_version(
        self, opset: int, node: bytes, input_types: list[bytes]
    ) -> bytes: ...


def bodies_of(s: defs.OpSchema) -> Bodies:
    """``s`` as what it says of its function bodies: onnx's stub of ``OpSchema``
    (onnx_cpp2py_export/defs.pyi) leaves these members out, which the compiled class has."""
    return s  # type: ignore[return-value]  # the stub lacks Bodies' members, the class has them


def function_body(
    domain: str, op_type: str, opset: int, node: onnx.NodeProto | None = None, input_types: Sequence[Any] = ()
) -> onnx.FunctionProto | None:
    """The schema's function body in force at ``opset``, or ``None``.

    Context-dependent bodies are built for ``node`` (a ``NodeProto``) and its ``input_types``
    (``TypeProto`` or ``None`` per input); without a node they are not available.
    """
    types = tuple(b"" if t is None else t.SerializeToString() for t in input_types)
    node_bytes = node.SerializeToString() if node is not None else b""
    return _function_body(canonical_domain(domain), op_type, opset, node_bytes, types)


@lru_cache(maxsize=4096)
def _function_body(
    domain: str, op_type: str, opset: int, node: bytes, types: tuple[bytes, ...]
) -> onnx.FunctionProto | None:
    try:
        s = bodies_of(defs.get_schema(op_type, opset, domain))
    except defs.SchemaError:
        return None
    try:
        if s.has_function:
            versions = [v for v in s.function_opset_versions if v <= opset]
            if versions:
                return _as_function(s.get_function_with_opset_version(max(versions)))
            return _as_function(s.function_body)
        if s.has_context_dependent_function and node:
            versions = [v for v in s.context_dependent_function_opset_versions if v <= opset]
            if versions and all(types):
                body = s.get_context_dependent_function_with_opset_version(max(versions), node, list(types))
                return _as_function(body)
    except Exception:  # onnx raises various errors for bodies it cannot build
        return None
    return None


def _as_function(body: bytes | onnx.FunctionProto) -> onnx.FunctionProto | None:
    fn: onnx.FunctionProto = onnx.FunctionProto.FromString(body) if isinstance(body, bytes) else body
    return fn if len(fn.node) else None


def has_function_body(domain: str, op_type: str, opset: int) -> bool:
    """Whether a body exists (context-dependent ones count: they are built per node)."""
    try:
        s = bodies_of(defs.get_schema(op_type, opset, canonical_domain(domain)))
    except defs.SchemaError:
        return False
    return s.has_function or s.has_context_dependent_function


def all_signatures() -> list[Signature]:
    """Every version of every operator that ``onnx.defs`` knows, plus the custom ones."""
    out = [_from_schema(s) for s in defs.get_all_schemas_with_history()]
    out.extend(s for versions in _custom.values() for s in versions)
    out.sort(key=lambda s: (s.domain, s.name, s.since_version))
    return out


# -- type strings ---------------------------------------------------------------------------------

_TYPE_RE = re.compile(r"^(tensor|sparse_tensor|seq|optional|map)\((.*)\)$")


def normalize_type_str(s: str) -> str:
    """One spelling per type: no spaces, and a bare element name means a tensor.

    The schemas write both ``map(string, tensor(int64))`` and ``seq(map(int64, float))``, and a
    formal parameter may name its type as just ``float`` (onnx reads it as ``tensor(float)``).
    """
    s = s.replace(" ", "")
    m = _TYPE_RE.match(s)
    if not m:
        return f"tensor({s})" if elem_from_name(s) is not None else s
    kind, inner = m.groups()
    if kind == "map":
        key, _, value = inner.partition(",")
        return f"map({key},{normalize_type_str(value)})"
    if kind in ("seq", "optional"):
        return f"{kind}({normalize_type_str(inner)})"
    return s


@cache
def parse_type_str(s: str) -> Type:
    """``tensor(float)`` -> ``TensorType(FLOAT, None)``; nested kinds too; unknown -> ``UNKNOWN``."""
    m = _TYPE_RE.match(normalize_type_str(s))
    if not m:
        return UNKNOWN
    kind, inner = m.groups()
    if kind == "tensor":
        return TensorType(elem_from_name(inner))
    if kind == "sparse_tensor":
        return SparseTensorType(elem_from_name(inner))
    if kind == "seq":
        return SequenceType(parse_type_str(inner))
    if kind == "optional":
        return OptionalType(parse_type_str(inner))
    key, _, value = inner.partition(",")
    return MapType(elem_from_name(key), parse_type_str(value))


def allowed_types(sig: Signature, type_str: str) -> tuple[Type, ...]:
    """The types a formal with ``type_str`` admits."""
    strs = sig.constraints.get(type_str, (type_str,))
    return tuple(parse_type_str(t) for t in strs)


ONNX_OPSET = onnx.defs.onnx_opset_version()
