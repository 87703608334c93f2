"""How a node is inferred: resolved once per (domain, operator, overload, opset) of a run.

In order of precedence:

1. a function the model defines (Clause 8.4) for a name no standard operator has at that opset;
2. the registry's rule for the operator version (``infer.contract.registry``), or the registry's word
   that it is not supported and why;
3. the body of a function-defined operator's schema, built for the node (``function``);
4. the inference function of a schema registered at run time (the drop-in only);
5. nothing: an operator the standard does not have (``unknown-operator``), a name none of the
   model's functions in that domain has (``unknown-function``), or an operator without a rule
   (``no-rule``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from onnx import FunctionProto, NodeProto, defs

from infer.contract import registry
from infer.contract.signature import STANDARD_DOMAINS, Signature, bodies_of, function_body, signature
from infer.core import types as T
from infer.core.dimwriter import write_text
from infer.core.values import Value
from infer.walk import custom_schemas

FUNCTION, RULE, SCHEMA_BODY, CUSTOM_SCHEMA, NONE = "function", "rule", "schema-body", "custom-schema", "none"


class How(NamedTuple):
    """How one kind of node is inferred; for ``NONE``, the diagnostic saying why not."""

    kind: str
    target: Any = None  # the FunctionProto, the rule, or the registered OpSchema
    code: str | None = None
    reason: str | None = None
    suggestion: str | None = None
    fallback: How | None = None  # for SCHEMA_BODY: when no body can be built for the node
    pure: bool = False  # for RULE: the rule declares its result a function of the node and inputs


class Dispatcher:
    """Resolves nodes of one model (whose functions take part), memoizing each answer."""

    def __init__(
        self,
        functions: Mapping[tuple[str, str, str], FunctionProto],
        function_domains: frozenset[str],
        custom_schemas: bool,
    ):
        self.functions = functions
        self.function_domains = function_domains
        self.custom_schemas = custom_schemas
        self._resolved: dict[tuple, tuple[Signature | None, How]] = {}

    def resolve(self, domain: str, op_type: str, overload: str, opset: int | None) -> tuple[Signature | None, How]:
        """The operator's signature at ``opset`` (``None`` outside an imported domain) and how to
        infer it."""
        key = (domain, op_type, overload, opset)
        hit = self._resolved.get(key)
        if hit is None:
            registry.ensure(domain, op_type)  # its rules and declared signatures
            sig = signature(domain, op_type, opset) if opset is not None else None
            hit = self._resolved[key] = (sig, self._how(domain, op_type, overload, opset, sig))
        return hit

    @property
    def depends_on_registrations(self) -> bool:
        """Did an answer depend on the operator schemas registered at run time (one asked, or
        none found where one could be registered later)? Then a result is not reused for a call
        that presents the same model (``infer.walk.reuse``)."""
        # (An operator unknown to ai.onnx counts: a schema registered later may add it there.)
        codes = ("no-rule", "unknown-function", "unknown-operator")
        return any(
            how.kind == CUSTOM_SCHEMA or (how.kind == NONE and how.code in codes) for _, how in self._resolved.values()
        )

    def _how(self, domain: str, op_type: str, overload: str, opset: int | None, sig: Signature | None) -> How:
        fn = self.functions.get((domain, op_type, overload))
        if fn is not None and (sig is None or domain not in STANDARD_DOMAINS):
            return How(FUNCTION, fn)
        if opset is None:
            return How(NONE, reason="its domain is not imported")
        if sig is None and domain in STANDARD_DOMAINS:
            reason = (
                f"{op_type} is not an operator of {domain or 'ai.onnx'} opset {opset}"
                if op_type
                else "the node names no operator (its op_type is empty)"
            )
            return How(NONE, None, "unknown-operator", reason, "check the operator name and the imported opset version")
        entry = registry.lookup(domain, op_type, sig.since_version if sig else opset)
        if entry is not None and entry.rule is not None:
            return How(RULE, entry.rule, pure=entry.pure)
        if entry is not None:
            return How(NONE, None, "unsupported", f"{op_type} is not supported: {entry.reason}")
        rest = self._without_body(domain, op_type, opset, sig)
        if sig is not None and _has_body(domain, op_type, opset):
            return How(SCHEMA_BODY, fallback=rest)
        return rest

    def _without_body(self, domain: str, op_type: str, opset: int, sig: Signature | None) -> How:
        if self.custom_schemas and (schema := custom_schemas.user_schema(domain, op_type, opset)) is not None:
            return How(CUSTOM_SCHEMA, schema)
        if sig is not None:
            return How(NONE, None, "no-rule", f"no inference rule for {op_type} at {domain or 'ai.onnx'} opset {opset}")
        if domain in self.function_domains:
            # The domain holds the model's own functions: a name none of them has is more likely
            # a mistake than an operator a runtime provides (onnxruntime refuses it).
            names = ", ".join(sorted(name for d, name, _ in self.functions if d == domain))
            reason = f"{op_type} is no function of this model, whose functions in '{domain}' are {names}"
            return How(NONE, None, "unknown-function", reason)
        reason = f"no signature or rule for {op_type} of domain '{domain}' (a custom operator)"
        return How(NONE, None, "no-rule", reason)


def schema_body(domain: str, node: NodeProto, opset: int, inputs: Sequence[Value | None]) -> FunctionProto | None:
    """The ``SCHEMA_BODY`` answer's body for this node (built for its input types if it must be);
    ``None`` where none can be built (then the answer's ``fallback`` holds)."""
    types = [None if v is None else T.to_proto(v.type, write_text) for v in inputs]
    return function_body(domain, node.op_type, opset, node, types)


def _has_body(domain: str, op_type: str, opset: int) -> bool:
    """Does the operator's schema define it by a function body (possibly built per node)?"""
    try:
        s = bodies_of(defs.get_schema(op_type, opset, "" if domain == "ai.onnx" else domain))
    except (defs.SchemaError, TypeError, OverflowError):
        return False
    return s.has_function or s.has_context_dependent_function
