"""Operator schemas registered at run time with a Python inference function.

A tool may define an operator of its own with ``onnx.defs.register_schema(schema)`` after
``schema.set_type_and_shape_inference_function(fn)``. For such an operator the tool's function is
the only definition of its output types, so where onnx-infer has no rule of its own the engine
may ask it (``Options.custom_schemas``). This module finds such schemas and runs their function
through ``onnx.shape_inference.infer_node_outputs``; it never runs onnx's inference for an
operator onnx itself defines (those schemas are told apart by where they were defined).

What the function sees is what ``infer_node_outputs`` gives it: the input types, the contents of
inputs passed as ``TensorProto``, the attributes, and a graph inferencer for graph attributes
(onnx infers the subgraph itself when the function asks for it). ``get_symbolic_input`` always
returns ``None`` there: ``infer_node_outputs`` carries no propagated shape data.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import onnx
import onnx.shape_inference
from onnx import NodeProto, OperatorSetIdProto, TensorProto, TypeProto, defs, helper, numpy_helper

from infer.contract.context import RuleContext, RuleError, node_of
from infer.core import types as T
from infer.core.dims import Dim
from infer.core.dimwriter import INT64_MAX, write_text
from infer.core.values import Known

if TYPE_CHECKING:  # pragma: no cover
    from infer.core.scopes import Frame

MAX_MESSAGE = 500  # characters of a user function's error message kept in a diagnostic

# Where onnx's own schemas say nothing of their definition: a schema built in Python has no
# source file or line (onnx fills in these placeholders).
_UNDEFINED_FILES = frozenset({"", "unknown"})


# -- which schemas -------------------------------------------------------------------------------


def registered_at_run_time(schema: defs.OpSchema) -> bool:
    """Whether ``schema`` was built in Python (``register_schema``), not shipped with onnx.

    onnx's own schemas record the C++ file and line that define them; a schema built in Python
    has neither.
    """
    return schema.line == 0 and schema.file in _UNDEFINED_FILES


def user_schema(domain: str, op_type: str, opset: int) -> defs.OpSchema | None:
    """The schema onnx has in force for ``op_type`` at ``opset`` of ``domain``, if it was
    registered at run time and carries an inference function; else ``None``.

    Looked up afresh each time (a dictionary lookup in onnx): a schema registered or
    deregistered since the last call is seen as it is now.
    """
    try:
        schema = defs.get_schema(op_type, opset, "" if domain == "ai.onnx" else domain)
    except (defs.SchemaError, TypeError, OverflowError):
        return None
    if not schema.has_type_and_shape_inference_function or not registered_at_run_time(schema):
        return None
    return schema


# -- running the function ------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """What a registered inference function gave for one node.

    ``outputs[k]`` is the type of the node's ``k``-th output, ``None`` where the function set
    none (or the output is absent); ``error`` says why nothing was inferred (then every output is
    ``None``).
    """

    outputs: tuple[TypeProto | None, ...]
    error: str | None = None


def run_inference(
    schema: defs.OpSchema,
    node: NodeProto,
    input_types: Sequence[TypeProto | None],
    input_data: Sequence[TensorProto | None] = (),
    opsets: Mapping[str, int] | None = None,
    ir_version: int = 0,
    outer_types: Mapping[str, TypeProto] | None = None,
) -> Outcome:
    """Run ``schema``'s registered inference function for ``node``.

    ``input_types[i]`` is the type of ``node.input[i]`` (``None``: unknown, or the input is
    absent); ``input_data[i]`` its contents where known. ``opsets`` are the imports in force
    (domain -> version), ``ir_version`` the model's (0: onnx's current one). ``outer_types``:
    types of names the node's graph attributes read from enclosing graphs, for the graph
    inferencer. Never raises: whatever the function (or onnx checking what it set) raises
    becomes ``Outcome.error``.
    """
    n = len(node.output)
    try:
        types, untyped = _types_by_name(node, input_types, outer_types or {})
        data = {name: t for name, t in zip(node.input, input_data) if name and t is not None}
        imports = [_opset_id(d, v) for d, v in (opsets or {}).items()]
        ir = ir_version or onnx.IR_VERSION
        if untyped:
            raw = _infer_with_untyped(schema, node, types, data, imports, ir)
        else:
            raw = onnx.shape_inference.infer_node_outputs(
                schema, node, types, data, opset_imports=imports, ir_version=ir
            )
    except Exception as e:  # the user's code: any exception is its failure, reported, never raised
        return Outcome((None,) * n, _describe(schema, e))
    return Outcome(tuple(raw.get(name) if name else None for name in node.output))


def _types_by_name(
    node: NodeProto, input_types: Sequence[TypeProto | None], outer: Mapping[str, TypeProto]
) -> tuple[dict[str, TypeProto], bool]:
    """Input types by name (outer names first, so the node's own inputs win), and whether a
    present input has no known type."""
    types = dict(outer)
    untyped = False
    for i, name in enumerate(node.input):
        if not name:
            continue
        tp = input_types[i] if i < len(input_types) else None
        if tp is None:
            untyped = True
            types.pop(name, None)
        else:
            types[name] = tp
    return types, untyped


def _infer_with_untyped(
    schema: defs.OpSchema,
    node: NodeProto,
    types: Mapping[str, TypeProto],
    data: Mapping[str, TensorProto],
    imports: list[OperatorSetIdProto],
    ir: int,
) -> dict[str, TypeProto]:
    """``infer_node_outputs`` for a node with an input of unknown type.

    The public function insists on a type for every input name; the binding it wraps takes the
    input as untyped, and the function then sees ``None`` for it, as under onnx's own
    ``infer_shapes``. Without that binding the node is not inferred.
    """
    call = getattr(schema, "_infer_node_outputs", None)
    if call is None:
        raise RuntimeError("an input's type is unknown, and this onnx cannot pass an untyped input")
    raw = call(
        node.SerializeToString(),
        {k: v.SerializeToString() for k, v in types.items()},
        {k: v.SerializeToString() for k, v in data.items()},
        {},
        {o.domain: o.version for o in imports},
        ir,
    )
    return {k: TypeProto.FromString(v) for k, v in raw.items()}


def _opset_id(domain: str, version: int) -> OperatorSetIdProto:
    return helper.make_opsetid(domain, version)


def _describe(schema: defs.OpSchema, e: Exception) -> str:
    message = str(e).strip().replace("\n", " ")
    if len(message) > MAX_MESSAGE:
        message = message[:MAX_MESSAGE] + "..."
    op = f"{schema.domain or 'ai.onnx'}:{schema.name}-{schema.since_version}"
    return f"the inference function registered for {op} failed: {type(e).__name__}: {message}"


# -- types and contents as onnx's protos -----------------------------------------------------------


@dataclass
class DimNames:
    """Writes dims into ``TypeProto``s for a user function and reads its answer back.

    An integer extent is a ``dim_value``; a symbolic one a ``dim_param`` naming it (a variable by
    its name, an expression by its text: ``dimwriter.write_text``, made unique where two extents
    print alike, since the name is read back). A ``dim_param`` the function returns is read back as
    the extent written under that name; a name it made up is an unknown extent, not a variable:
    it could be any name the model also uses for another extent.
    """

    _by_name: dict[str, Dim] = field(default_factory=dict)
    _by_dim: dict[Dim, str] = field(default_factory=dict)

    def write(self, d: Dim) -> int | str | None:
        # An integer past int64's range is a name here, where ``write_text`` writes it unknown:
        # the name is read back as the extent, which no ``dim_value`` can hold.
        base = str(d) if isinstance(d, int) and not 0 <= d <= INT64_MAX else write_text(d)
        if not isinstance(base, str):
            return base  # a dim_value, or nothing
        name = self._by_dim.get(d)
        if name is None:
            name = base
            k = 1
            while name in self._by_name:  # two extents printed alike stay apart
                k += 1
                name = f"{base}#{k}"
            self._by_name[name] = d
            self._by_dim[d] = name
        return name

    def read(self, t: TypeProto.Tensor | TypeProto.SparseTensor, axis: int) -> Dim:
        d = t.shape.dim[axis]
        kind = d.WhichOneof("value")
        if kind == "dim_value":
            return int(d.dim_value) if d.dim_value >= 0 else None
        if kind == "dim_param":
            return self._by_name.get(d.dim_param)
        return None

    def to_proto(self, t: T.Type) -> TypeProto | None:
        """``t`` as a ``TypeProto`` (``None`` for an unknown type)."""
        return T.to_proto(t, self.write)

    def from_proto(self, tp: TypeProto | None) -> T.Type:
        """A ``TypeProto`` the function set, as a type (``UNKNOWN`` for ``None`` or no kind)."""
        return T.UNKNOWN if tp is None else T.from_proto(tp, self.read)


def infer_outputs(
    ctx: RuleContext, schema: defs.OpSchema, frame: Frame, outer_names: Iterable[str], ir_version: int
) -> list[T.Type] | None:
    """Outputs of ``ctx``'s node as the inference function registered with ``schema`` gives them:
    a rule the dispatcher's ``custom-schema`` answer runs. ``outer_names``: what the node's graph
    attributes read from enclosing graphs (looked up in ``frame``'s scope)."""
    names = DimNames()
    types = [None if v is None else names.to_proto(v.type) for v in ctx.inputs]
    data = [
        tensor_from_known(v.known, v.type.elem) if v is not None and isinstance(v.type, T.TensorType) else None
        for v in ctx.inputs
    ]
    outer: dict[str, TypeProto] = {}
    for name in outer_names:
        v = frame.scope.lookup(name)
        tp = None if v is None else names.to_proto(v.type)
        if tp is not None:
            outer[name] = tp
    out = run_inference(schema, node_of(ctx), types, data, frame.opsets, ir_version, outer)
    if out.error is not None:
        raise RuleError("custom-inference", out.error)
    results = [names.from_proto(tp) for tp in out.outputs]
    if any(not isinstance(t, T.TensorType) or t.shape is None or None in t.shape for t in results):
        ctx.because("the inference function registered for it leaves this unknown")
    return results


# Element types whose contents numpy holds exactly as ``Known`` keeps them.
_NUMPY_ELEMS = frozenset({
    TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.INT8, TensorProto.INT16, TensorProto.INT32,
    TensorProto.INT64, TensorProto.UINT8, TensorProto.UINT16, TensorProto.UINT32, TensorProto.UINT64,
    TensorProto.BOOL,
})  # fmt: skip


def tensor_from_known(known: Known | None, elem: int | None, name: str = "") -> TensorProto | None:
    """Known contents as a ``TensorProto``, when every element is a concrete value of a plain
    numeric, boolean or string element type; else ``None`` (a symbolic element has no value)."""
    if known is None or elem is None or not known.is_fully_known():
        return None
    if any(not isinstance(e, (bool, int, float, str)) for e in known.elems):
        return None
    try:
        if elem == TensorProto.STRING:
            if not all(isinstance(e, str) for e in known.elems):
                return None
            return helper.make_tensor(name, elem, known.shape, [e.encode("utf-8") for e in known.elems])
        if elem not in _NUMPY_ELEMS or any(isinstance(e, str) for e in known.elems):
            return None
        arr = np.array(known.elems, dtype=helper.tensor_dtype_to_np_dtype(elem)).reshape(known.shape)
        return numpy_helper.from_array(arr, name)
    except (ValueError, OverflowError, TypeError):  # an element the element type cannot hold
        return None
