"""Diagnostics: what validation and inference report (Clause 10.5).

Every diagnostic has a severity, a stable code, the clause of the spec it rests on, a location
and a message that quotes the types involved. Codes are stable: tools may match on them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

ERROR = "error"
WARNING = "warning"
INFO = "info"

# code -> (severity, clause, one-line meaning). The table is the documentation of the codes.
CODES: dict[str, tuple[str, str, str]] = {
    # structure (Clause 7, 10.2)
    "undefined-value": (ERROR, "7.5", "a node consumes a value no graph input, initializer or node produces"),
    "duplicate-definition": (ERROR, "7.5", "a value is produced more than once in one graph"),
    "cycle": (ERROR, "7.5", "the graph is not acyclic"),
    # An error: Clause 7.5 says nodes SHALL be sorted; inference still goes on in dependency order.
    "not-topological": (ERROR, "7.5", "nodes are not in topological order"),
    "empty-name": (ERROR, "5.4.1", "a name is empty where one is required"),
    "duplicate-node-name": (ERROR, "5.4.1", "two nodes of one graph have the same name"),
    "missing-ir-version": (ERROR, "5.3.1", "the model states no IR version"),
    "duplicate-metadata-key": (ERROR, "5.5", "a metadata key is given more than once"),
    # Clause 7.1 says SHALL; a warning like missing-io-shape, since models routinely reach
    # inference with untyped outputs (filling them is its job) and runtimes accept them.
    "missing-io-type": (WARNING, "7.1", "a top-level input or output declares no type"),
    "shadowing": (ERROR, "5.4.3", "a subgraph redefines a name visible from an enclosing graph"),
    "missing-io-shape": (WARNING, "6.5.1", "a top-level input or output has no shape"),
    "undefined-element-type": (ERROR, "6.2", "a declared tensor type has element type 0 (UNDEFINED)"),
    "malformed-type": (ERROR, "6.8.4", "a declared type is malformed (an opaque type without a name)"),
    "negative-extent": (WARNING, "6.5.1", "a declared extent is negative; it is read as unknown"),
    "outer-scope-output": (WARNING, "7.6", "a subgraph output is a value of an enclosing graph; onnxruntime refuses"),
    # operator sets (Clause 5.3.2, 10.4)
    "domain-not-imported": (ERROR, "5.3.2", "a node uses a domain the model does not import"),
    "default-opset-implicit": (WARNING, "5.3.2", "the default domain is used without an imported version"),
    "bad-opset-import": (ERROR, "5.3.2", "an operator set is imported at a version below 1"),
    "duplicate-opset-import": (WARNING, "5.3.2", "a domain is imported at two versions; the last is used"),
    "newer-version": (WARNING, "14", "the IR or an operator set version is newer than this build knows"),
    "ir-version-mismatch": (WARNING, "14", "the IR version predates the imported operator set versions"),
    "unknown-operator": (ERROR, "10.4", "no operator of that name exists in the declared opset"),
    "arity": (ERROR, "7.3", "a node has too few or too many inputs or outputs"),
    "missing-input": (ERROR, "7.3.3", "a required input is not supplied"),
    "unknown-attribute": (ERROR, "10.4", "an attribute the operator does not define"),
    "missing-attribute": (ERROR, "10.4", "a required attribute is absent"),
    "attribute-type": (ERROR, "7.4", "an attribute has the wrong type"),
    "duplicate-attribute": (ERROR, "7.4", "an attribute name appears twice in one node"),
    "initializer-size": (ERROR, "6.3.4", "an initializer's data does not fit its dims"),
    "subgraph-init-clash": (ERROR, "7.2", "a subgraph name is both an input and an initializer"),
    # inference (Clause 9)
    "declared-type-clash": (ERROR, "9.4", "a declared type contradicts the inferred one"),
    # A warning: the model states an equality its operators do not entail, and it may hold.
    "declared-name-unproven": (WARNING, "9.4", "a declared name stands for extents inference cannot prove equal"),
    "shape-mismatch": (ERROR, "10.3", "known extents contradict each other"),
    "type-mismatch": (ERROR, "10.3", "input types violate the operator's type constraints"),
    "bad-attribute": (ERROR, "10.4", "an attribute is missing, of the wrong type or out of range"),
    # A warning: the node is valid, so inference goes on; the domain lists the refusal.
    "runtime-refuses": (WARNING, "10.4", "the definition allows the node; onnxruntime refuses it"),
    "no-rule": (INFO, "9.4", "no inference rule for this operator version; outputs unknown"),
    "custom-inference": (ERROR, "9.4", "the inference function registered for an operator failed; outputs unknown"),
    "unsupported": (INFO, "9.4", "the operator is declared unsupported; outputs unknown"),
    "rule-crash": (WARNING, "9.4", "an inference rule failed internally; outputs left unknown"),
    "recursion": (ERROR, "8.4", "a function calls itself"),
    "unknown-function": (WARNING, "8.4", "a node in the domain of the model's functions names none of them"),
    "limit": (ERROR, "15.4", "a resource limit was reached; inference refused that part"),
    "external-data": (WARNING, "13", "the model keeps tensors in external files"),
    "binding-clash": (ERROR, "9.3", "a user binding of a dimension contradicts the model"),
    "integer-overflow": (WARNING, "6.2", "computed contents exceed their integer element type; left unknown"),
}


class Location(NamedTuple):
    """Where in the model: graph path, node, and the value or attribute concerned (a named
    tuple: made at every node that reports, and cheaper so than a frozen dataclass)."""

    graph: str = "main"
    node_index: int | None = None
    node_name: str = ""
    op_type: str = ""
    value: str | None = None
    attribute: str | None = None

    def __str__(self) -> str:
        parts = [self.graph]
        if self.node_index is not None:
            label = f"node {self.node_index}"
            if self.op_type:
                label += f" {self.op_type}"
            if self.node_name:
                label += f" `{self.node_name}`"
            parts.append(label)
        if self.value is not None:
            parts.append(f"value `{self.value}`")
        if self.attribute is not None:
            parts.append(f"attribute `{self.attribute}`")
        return ", ".join(parts)


_LOCATION_FIELDS = ("graph", "node_index", "node_name", "op_type", "value", "attribute")
MODEL = Location()  # the model as a whole (the main graph, no node)


@dataclass(frozen=True, slots=True)
class Diagnostic:
    severity: str
    code: str
    clause: str
    message: str
    location: Location = MODEL
    suggestion: str | None = None

    def __str__(self) -> str:
        s = f"{self.severity} [{self.code}] {self.location}: {self.message} (Clause {self.clause})"
        if self.suggestion:
            s += f"; {self.suggestion}"
        return s

    def to_dict(self) -> dict[str, Any]:
        # By hand: ``dataclasses.asdict`` deep-copies every field, and a model may have 10^5 of these.
        loc = self.location
        where = {k: v for k in _LOCATION_FIELDS if (v := getattr(loc, k)) is not None and v != ""}
        d: dict[str, Any] = {
            "severity": self.severity,
            "code": self.code,
            "clause": self.clause,
            "message": self.message,
            "location": where,
        }
        if self.suggestion is not None:
            d["suggestion"] = self.suggestion
        return d


def make(
    code: str,
    message: str,
    location: Location = MODEL,
    suggestion: str | None = None,
    severity: str | None = None,
) -> Diagnostic:
    """A diagnostic of a registered code; severity and clause come from ``CODES``."""
    sev, clause, _ = CODES[code]
    return Diagnostic(severity or sev, code, clause, message, location, suggestion)
