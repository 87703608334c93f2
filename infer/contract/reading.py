"""What a rule reads of its node: its inputs (types, shapes, known contents), its outputs'
names and its attributes (with the schema's defaults). A facet of ``RuleContext``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from onnx import AttributeProto, NodeProto

from infer.contract.protocols import MISSING, RuleError, Walker
from infer.contract.signature import Signature
from infer.core.dims import Dim
from infer.core.dims.budget import tick
from infer.core.types import UNKNOWN, OptionalType, SequenceType, SparseTensorType, TensorType, Type
from infer.core.values import Known, Value


class Reading:
    """The node's inputs, outputs and attributes."""

    __slots__ = ()
    _node: NodeProto
    _walker: Walker
    _frame: Any
    inputs: list[Value | None]
    attrs: dict[str, Any]
    sig: Signature | None

    @property
    def op_type(self) -> str:
        return self._node.op_type

    @property
    def n_inputs(self) -> int:
        return len(self.inputs)

    def has(self, i: int) -> bool:
        """Is input ``i`` supplied (present and not an empty name, Clause 7.3.3)?"""
        return i < len(self.inputs) and self.inputs[i] is not None

    def value(self, i: int) -> Value | None:
        return self.inputs[i] if i < len(self.inputs) else None

    def type(self, i: int) -> Type:
        tick()  # a rule over variadic inputs reads each: it obeys the node's clock however many
        v = self.value(i)
        return UNKNOWN if v is None else v.type

    def shape(self, i: int) -> tuple[Dim, ...] | None:
        """Shape of tensor input ``i``; ``None`` if absent, not a tensor or of unknown rank."""
        t = self.type(i)
        if isinstance(t, (TensorType, SparseTensorType)):
            return t.shape
        return None

    def rank(self, i: int) -> int | None:
        s = self.shape(i)
        return None if s is None else len(s)

    def elem(self, i: int) -> int | None:
        t = self.type(i)
        return t.elem if isinstance(t, (TensorType, SparseTensorType)) else None

    def known(self, i: int) -> Known | None:
        """Contents of tensor input ``i``, if tracked. A sequence's or optional's tracked items are
        no tensor's contents: a rule reading elements (an Add given a sequence) never sees them."""
        v = self.value(i)
        if v is None or isinstance(v.type, (SequenceType, OptionalType)):
            return None
        return v.known

    def known_dims(self, i: int) -> list[Dim] | None:
        """Contents of input ``i`` as dims (a shape tensor), if tracked."""
        k = self.known(i)
        return None if k is None else k.dims()

    def known_ints(self, i: int) -> list[int] | None:
        k = self.known(i)
        return None if k is None else k.ints()

    def output_name(self, k: int) -> str:
        """The name of output ``k`` ("" where the node leaves it out)."""
        out = self._node.output
        return out[k] if k < len(out) else ""

    def wants_output(self, k: int) -> bool:
        """Does the node ask for output ``k`` (an optional output left out is not computed)?"""
        return self.output_name(k) != ""

    def input_name(self, i: int) -> str:
        return self._node.input[i] if i < len(self._node.input) else ""

    def input_types_str(self) -> str:
        tick(len(self.inputs))  # (a variadic node's inputs, each written: the node's clock)
        return ", ".join("-" if v is None else str(v.type) for v in self.inputs)

    def attr(self, name: str, default: Any = MISSING) -> Any:
        """The node's attribute, else the schema default, else ``default`` (else ``None``)."""
        if name in self.attrs:
            return self.attrs[name]
        if self.sig is not None:
            spec = self.sig.attributes.get(name)
            if spec is not None and spec.default is not None:
                return spec.default
        return None if default is MISSING else default

    def has_attr(self, name: str) -> bool:
        return name in self.attrs

    def require(self, name: str) -> Any:
        """A required attribute; its absence is a malformed node."""
        v = self.attr(name)
        if v is None:
            raise RuleError("bad-attribute", f"{self.op_type} needs attribute '{name}'")
        return v

    @property
    def ir_version(self) -> int:
        return self._walker.ir_version

    @property
    def attribute_references(self) -> Mapping[str, AttributeProto] | None:
        """Inside a function body, the calling node's attributes its ``ref_attr_name``s read."""
        return getattr(self._frame, "attr_refs", None)
