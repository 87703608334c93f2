"""An ``onnx_ir`` pass that annotates a model in place with onnx-infer's types and shapes.

    import onnx_ir as ir
    from infer.ir import InferShapesPass

    model = ir.load("model.onnx")
    result = InferShapesPass()(model)      # a PassResult; result.model is model, annotated
    passes = ir.passes.PassManager([InferShapesPass(), *optimizer_passes])

For pipelines built on ``onnx_ir`` and onnxscript's optimizer, in place of
``onnx_ir.passes.common.ShapeInferencePass`` (onnx's inference). Every node output of every graph
(subgraphs included), and every subgraph input, gets the type and shape inference found for it;
graph inputs and initializers keep theirs. A symbolic extent becomes an ``ir.SymbolicDim``
written in the pass's dims style (``expressions``: ``seq + 5``, which ``onnx_ir`` parses into a
sympy expression for its dim arithmetic; ``strict``: identifiers only). Declared shapes are
honoured (inference refines them, as ``infer.infer_model`` does); a value inference leaves
untyped keeps what it had. Needs the optional ``ir`` extra (``pip install 'onnx-infer[ir]'``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING

import onnx
import onnx_ir as ir
from onnx import GraphProto, TypeProto

from infer import infer_model
from infer.core.limits import MAX_KNOWN_ELEMENTS, MAX_KNOWN_FLOAT_ELEMENTS

if TYPE_CHECKING:  # pragma: no cover
    from infer.out.result import InferenceResult

__all__ = ["InferShapesPass"]

# Element types whose contents the engine tracks only up to MAX_KNOWN_FLOAT_ELEMENTS elements.
_FLOATS = frozenset({
    ir.DataType.FLOAT, ir.DataType.DOUBLE, ir.DataType.FLOAT16, ir.DataType.BFLOAT16,
    ir.DataType.COMPLEX64, ir.DataType.COMPLEX128,
})  # fmt: skip
_PLACEHOLDER = "onnx-infer-weightless.bin"  # never opened: inference does not read external data


class InferShapesPass(ir.passes.InPlacePass):
    """Annotate every value of an ``onnx_ir.Model`` with onnx-infer's type and shape.

    ``dims_style``: how a symbolic extent is written (``"expressions"`` or ``"strict"``, as in
    ``infer.infer_model``); ``dims``: dimension variables bound to integers. ``result`` is the
    last run's ``InferenceResult`` (diagnostics, dimension table, explanations).
    """

    def __init__(self, *, dims_style: str = "expressions", dims: Mapping[str, int] | None = None):
        super().__init__()
        self.dims_style = dims_style
        self.dims = dict(dims) if dims else None
        self.result: InferenceResult | None = None

    def call(self, model: ir.Model) -> ir.passes.PassResult:
        with _weightless(model):
            proto = ir.serde.serialize_model(model)
        result = self.result = infer_model(proto, dims_style=self.dims_style, dims=self.dims)
        annotated = result.model
        modified = False
        for graph, graph_proto in _graph_pairs(model.graph, annotated.graph):
            modified |= _annotate_graph(graph, graph_proto, subgraph=graph is not model.graph)
        return ir.passes.PassResult(model, modified=modified)


@contextmanager
def _weightless(model: ir.Model) -> Iterator[None]:
    """The main graph's initializers whose contents inference does not track are serialized as
    references to external data that is never read, and restored afterwards: the model is
    serialized for the engine without copying its weights."""
    saved: list[tuple[ir.Value, ir.TensorProtocol]] = []
    try:
        for value in model.graph.initializers.values():
            tensor = value.const_value
            if tensor is None or _tracked(tensor) or isinstance(tensor, ir.ExternalTensor):
                continue
            saved.append((value, tensor))
            # A copy of the shape (a tensor's extents are ints): the placeholder freezes the one it
            # is given. An initializer has a name.
            shape, name = ir.Shape(tensor.shape.numpy()), value.name or ""
            value.const_value = ir.ExternalTensor(
                _PLACEHOLDER, offset=0, length=tensor.nbytes, dtype=tensor.dtype, shape=shape, name=name
            )
        yield
    finally:
        for value, tensor in saved:
            value.const_value = tensor


def _tracked(tensor: ir.TensorProtocol) -> bool:
    """Whether inference reads this tensor's contents (small enough to be a shape or a scalar)."""
    limit = MAX_KNOWN_FLOAT_ELEMENTS if tensor.dtype in _FLOATS else MAX_KNOWN_ELEMENTS
    return tensor.size <= limit


def _graph_pairs(graph: ir.Graph, proto: GraphProto) -> Iterator[tuple[ir.Graph, GraphProto]]:
    """Each graph of the model beside the same graph of its serialized, annotated copy (nodes
    and attributes are serialized in order, so they correspond one to one)."""
    yield graph, proto
    for node, node_proto in zip(graph, proto.node):
        for attr in node_proto.attribute:
            ir_attr = node.attributes.get(attr.name)
            if ir_attr is None:
                continue
            if attr.type == onnx.AttributeProto.GRAPH:
                yield from _graph_pairs(ir_attr.value, attr.g)
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for sub, sub_proto in zip(ir_attr.value, attr.graphs):
                    yield from _graph_pairs(sub, sub_proto)


def _annotate_graph(graph: ir.Graph, proto: GraphProto, subgraph: bool) -> bool:
    """Set the type and shape of ``graph``'s node outputs (and, in a ``subgraph``, its inputs,
    which the node binding them types) from the annotated ``proto``; whether anything changed."""
    types: dict[str, TypeProto] = {vi.name: vi.type for vi in (*proto.value_info, *proto.output)}
    values = [v for node in graph for v in node.outputs]
    if subgraph:
        types.update({vi.name: vi.type for vi in proto.input if vi.HasField("type")})
        values.extend(graph.inputs)
    modified = False
    for value in values:
        tp = types.get(value.name) if value.name else None
        if tp is None or tp.WhichOneof("value") is None:
            continue
        new_type = ir.serde.deserialize_type_proto_for_type(tp)
        new_shape = ir.serde.deserialize_type_proto_for_shape(tp)
        if new_type is not None and new_type != value.type:
            value.type = new_type
            modified = True
        if new_shape is not None and new_shape != value.shape:
            value.shape = new_shape
            modified = True
    return modified
