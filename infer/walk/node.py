"""Inferring one node without a model: for compiler passes that rewrite a graph.

    out = infer.infer_node("Conv", ["float[N,3,H,W]", "float[8,3,3,3]"], {"pads": [1, 1, 1, 1]})
    out.types        # [float[N,8,H,W]]

Inputs are ``Type``s, ``Value``s (a type plus known contents), type strings, or ``None`` for an
unsupplied optional input. Variables named in type strings live in the node's own table.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from onnx import AttributeProto, ModelProto, NodeProto, helper

from infer.core import diagnostics as diag
from infer.core import dimparse, limits
from infer.core import dims as D
from infer.core import types as T
from infer.core.diagnostics import Diagnostic, Location
from infer.core.dimscope import Assumption
from infer.core.dimtable import DimTable
from infer.core.scopes import Frame, GraphPath, GraphRecord, Scope
from infer.core.values import FLOAT_BITS, Known, SymFloat, Value
from infer.walk.engine import Engine, Options

if TYPE_CHECKING:  # pragma: no cover
    from infer.contract.signature import AttrSpec

_TYPE_RE = re.compile(r"^\s*([a-z0-9_]+)\s*(\[(.*?)\])?\s*(=\s*\{(.*)\})?\s*$", re.S)


def _attribute(name: str, given: Any, spec: AttrSpec | None) -> AttributeProto:
    """``given`` as the attribute ``name``: an ``AttributeProto`` as it is (renamed), a Python
    value typed as ``onnx.helper`` types it, an empty list typed by the schema (``helper`` cannot
    tell the type of an empty list). A value whose type cannot be told is an attribute without a
    type, which validation reports and no rule reads."""
    if isinstance(given, AttributeProto):
        a = AttributeProto()
        a.CopyFrom(given)
        a.name = name
        return a
    try:
        if isinstance(given, (list, tuple)) and not given:
            if spec is not None and spec.type in _LIST_TYPES:
                return helper.make_attribute(name, [], attr_type=spec.type)
        else:
            return helper.make_attribute(name, given)
    except (TypeError, ValueError, OverflowError):  # not a value of any attribute type
        pass
    return AttributeProto(name=name, type=AttributeProto.UNDEFINED)


_LIST_TYPES = frozenset({
    AttributeProto.FLOATS, AttributeProto.INTS, AttributeProto.STRINGS, AttributeProto.TENSORS,
    AttributeProto.GRAPHS, AttributeProto.SPARSE_TENSORS, AttributeProto.TYPE_PROTOS,
})  # fmt: skip


@dataclass
class NodeInference:
    values: list[Value]
    diagnostics: list[Diagnostic]
    dims: DimTable
    assumptions: list[Assumption]  # what the claims rest on (``InferenceResult.assumptions``)

    @property
    def types(self) -> list[T.Type]:
        return [v.type for v in self.values]

    def __str__(self) -> str:
        return ", ".join(str(t) for t in self.types)


def parse_dim(src: str, table: DimTable) -> D.Dim:
    """``3``, ``N``, ``N + 5``, ``floor(H/2)``, ``?`` (unknown) -> a dim; names are declared in ``table``."""
    return dimparse.parse_dim(src, lambda name: table.declared(name, "in a type string"))


def _top_level_slash(src: str) -> int:
    """Where the last ``/`` outside parentheses is, or -1."""
    depth, at = 0, -1
    for i, ch in enumerate(src):
        depth += ch == "("
        depth -= ch == ")"
        if ch == "/" and depth == 0:
            at = i
    return at


def _parse_symbolic(src: str, elem: int | None, table: DimTable) -> Any:
    """A symbolic element as ``str`` writes it: an integer dim in an integer tensor; in a float
    tensor a ``SymFloat``: ``H``, ``(H + 1)/3`` (exact), ``~((H + 1)/3)`` (rounded once to the
    tensor's precision)."""
    bits = FLOAT_BITS.get(elem)  # type: ignore[arg-type]
    if bits is None:
        return parse_dim(src, table)
    rounded = src.startswith("~(") and src.endswith(")")
    body = src[2:-1] if rounded else src
    at = _top_level_slash(body)
    num = parse_dim(body[:at] if at >= 0 else body, table)
    den = int(body[at + 1 :]) if at >= 0 else 1
    return SymFloat(num, den, bits if rounded else 0)


def parse_value(src: str, table: DimTable) -> Value:
    """``float[N,3]``, ``int64[4]={0,0,12,64}``, ``float[*]`` (unknown rank), ``int64[]={N}``,
    ``seq(float[N,?])``, ``optional(int64[2])``."""
    s = src.strip()
    for prefix, make in (("seq(", T.SequenceType), ("optional(", T.OptionalType)):
        if s.startswith(prefix) and s.endswith(")"):
            return Value(make(parse_value(s[len(prefix) : -1], table).type))
    m = _TYPE_RE.match(src)
    if not m:
        raise ValueError(f"cannot read type {src!r}")
    elem_name, bracket, body, _, contents = m.groups()
    elem = T.elem_from_name(elem_name)
    if elem is None:
        raise ValueError(f"unknown element type {elem_name!r}")
    if bracket is None or body.strip() == "*":
        shape = None
    else:
        shape = tuple(parse_dim(d, table) for d in dimparse.split_top(body)) if body.strip() else ()
    known = None
    if contents is not None:
        items = dimparse.split_top(contents)
        elems: list[Any] = []
        for it in items:
            if it in ("true", "false", "True", "False"):
                elems.append(it.lower() == "true")
            elif it == "?":
                elems.append(None)
            else:
                try:
                    elems.append(int(it) if elem not in FLOAT_BITS else float(it))
                except ValueError:
                    try:
                        elems.append(float(it))
                    except ValueError:
                        elems.append(_parse_symbolic(it, elem, table))
        kshape = (len(elems),) if shape is None else tuple(d for d in shape if type(d) is int)
        if shape is not None and len(kshape) != len(shape):
            raise ValueError(f"cannot read type {src!r}: contents need a shape of numbers")
        known = Known(kshape, tuple(elems))
    return Value(T.tensor(elem, shape), known)


def _input_value(x: T.Type | Value | str | None, table: Any) -> Value | None:
    """One input of ``infer_node``: a value, a type, a type string (``""``: unsupplied) or ``None``."""
    if x is None or isinstance(x, Value):
        return x
    if isinstance(x, str):
        return parse_value(x, table) if x else None
    return Value(x)


def _add_attributes(node: NodeProto, attributes: Mapping[str, Any], sig: Any, diagnostics: list) -> None:
    """``infer_node``'s attributes on ``node``, typed by the signature where a value does not say
    (an attribute whose type cannot be told is reported against a schema that lacks it)."""
    for name, given in attributes.items():
        if given is None:
            continue  # absent, as onnx.helper.make_node reads it
        a = _attribute(name, given, sig.attributes.get(name) if sig is not None else None)
        if a.type == AttributeProto.UNDEFINED and (sig is None or name not in sig.attributes):
            # Validation reports an attribute without a type only against a schema that has it.
            diagnostics.append(
                diag.make(
                    "attribute-type",
                    f"{node.op_type}: the type of attribute '{name}' cannot be told from {given!r:.60}",
                    Location("node", 0, "", node.op_type, attribute=name),
                    "pass an onnx.AttributeProto",
                )
            )
        node.attribute.append(a)


def infer_node(
    op_type: str,
    inputs: Sequence[T.Type | Value | str | None],
    attributes: Mapping[str, Any] | None = None,
    *,
    opset: int | None = None,
    domain: str = "",
    n_outputs: int | None = None,
    opsets: Mapping[str, int] | None = None,
) -> NodeInference:
    """Infer the outputs of one node from its input types and attributes.

    ``attributes`` maps names to Python values (typed as ``onnx.helper.make_attribute`` types
    them; an empty list as the operator's schema types it) or to ``onnx.AttributeProto``s.
    Problems with the node are diagnostics, never exceptions; only an input type string that
    cannot be read raises ``ValueError``.
    """
    from infer.contract import registry
    from infer.contract.signature import ONNX_OPSET, signature

    model = ModelProto()
    engine = Engine(model, Options())
    imports = {"": ONNX_OPSET, **(opsets or {})}
    if opset is not None:
        imports[domain] = opset
    elif domain not in imports:
        imports[domain] = 1
    # As the engine reads a model's imports: onnx.defs takes a C ``int``.
    imports = {d: min(max(int(v), 0), limits.OPSET_CEILING) for d, v in imports.items()}
    engine.implicit_default = False  # the imports are the ones given here
    engine.state.diagnostics.clear()
    values = [_input_value(x, engine.state.table) for x in inputs]
    names = [f"in{i}" if v is not None else "" for i, v in enumerate(values)]
    registry.ensure(domain, op_type)  # a custom domain's signature is declared with its rules
    sig = signature(domain, op_type, imports[domain])
    if n_outputs is None:
        n_outputs = max(len(sig.outputs), 1) if sig is not None else 1
    node = helper.make_node(op_type, names, [f"out{k}" for k in range(n_outputs)], domain=domain or None)
    _add_attributes(node, attributes or {}, sig, engine.state.diagnostics)
    scope = Scope()
    for name, v in zip(names, values):
        if v is not None:
            scope.values[name] = v
    record = GraphRecord("node", "graph", values=dict(scope.values), nodes=[node])
    engine.state.records["node"] = record
    frame = Frame(GraphPath("node"), scope, imports, {}, record, 0)
    outs = engine.infer_node(frame, 0, node)
    return NodeInference(outs, engine.state.diagnostics, engine.state.table, engine.scope.assumptions)
