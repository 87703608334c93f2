"""Validation (Clause 10): a node against its operator's signature, a graph's own declarations.

The engine calls ``check_node`` for every node before its rule runs and ``check_graph`` for every
graph it walks; contradictions between extents are found by the rules themselves and
contradictions with declared types by the engine's refinement. Every condition is reported, not
only the first, and none stops inference.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from onnx import AttributeProto, GraphProto, TensorProto

from signatures.schema import normalize_type_str

from . import types as T
from .diagnostics import Location

if TYPE_CHECKING:  # pragma: no cover
    from .context import RuleContext
    from .engine import Engine

_ATTR_TYPE_NAMES = {v: k.lower() for k, v in AttributeProto.AttributeType.items()}


def type_string(t: T.Type) -> str | None:
    """The schema spelling of a type (``tensor(float)``), or ``None`` if not fully known."""
    if isinstance(t, T.TensorType):
        return None if t.elem is None else f"tensor({T.elem_name(t.elem)})"
    if isinstance(t, T.SparseTensorType):
        return None if t.elem is None else f"sparse_tensor({T.elem_name(t.elem)})"
    if isinstance(t, T.SequenceType):
        inner = type_string(t.elem)
        return None if inner is None else f"seq({inner})"
    if isinstance(t, T.OptionalType):
        inner = type_string(t.elem)
        return None if inner is None else f"optional({inner})"
    if isinstance(t, T.MapType):
        inner = type_string(t.value)
        return None if inner is None or t.key is None else f"map({T.elem_name(t.key)},{inner})"
    return None


def _node_prefix(ctx: RuleContext) -> str:
    name = f" `{ctx.node.name}`" if ctx.node.name else ""
    return f"{ctx.op_type}{name} with inputs {ctx.input_types_str() or 'none'}"


def _check_key(ctx: RuleContext) -> tuple:
    """Everything ``check_node`` reads: a node with the key of a clean node is clean too."""
    node = ctx.node
    elems = tuple(
        None if v is None else v.type.elem if type(v.type) is T.TensorType else type_string(v.type) for v in ctx.inputs
    )
    attrs = tuple((a.name, a.type, bool(a.ref_attr_name)) for a in node.attribute)
    return (id(ctx.sig), tuple(bool(i) for i in node.input), len(node.output), attrs, elems)


def check_node(engine: Engine, ctx: RuleContext, loc: Location) -> None:
    """Arity, attributes and type constraints of one node (Clauses 7.3, 7.4, 10.3, 10.4)."""
    sig = ctx.sig
    if sig is None:
        return
    # Repeated layers repeat their nodes' checks: a combination found clean once is not checked
    # again (``engine.clean_checks`` lives as long as the engine, which keeps its signatures).
    key = _check_key(ctx)
    if key in engine.clean_checks:
        return
    n_diagnostics = len(engine.diagnostics)
    _check_node(engine, ctx, loc)
    if len(engine.diagnostics) == n_diagnostics:
        engine.clean_checks.add(key)


def _check_node(engine: Engine, ctx: RuleContext, loc: Location) -> None:
    sig, node = ctx.sig, ctx.node
    assert sig is not None
    prefix = _node_prefix(ctx)
    n_in, n_out = len(node.input), len(node.output)
    if n_in > sig.max_inputs:
        engine.report("arity", f"{prefix}: {n_in} inputs, the operator takes at most {sig.max_inputs}", loc)
    if n_out > sig.max_outputs:
        engine.report("arity", f"{prefix}: {n_out} outputs, the operator has at most {sig.max_outputs}", loc)
    if n_out < sig.min_outputs:
        engine.report("arity", f"{prefix}: {n_out} outputs, the operator needs at least {sig.min_outputs}", loc)
    for i, formal in enumerate(sig.inputs):
        if formal.option != "single":
            continue
        if i >= n_in or not node.input[i]:
            engine.report(
                "missing-input",
                f"{prefix}: required input {i} (`{formal.name}`) is not supplied",
                loc,
                "only inputs the operator marks optional may be left empty (Clause 7.3.3)",
            )
    if sig.inputs and sig.inputs[-1].option == "variadic":
        last = sig.inputs[-1]
        supplied = n_in - (len(sig.inputs) - 1)
        if supplied < last.min_arity:
            engine.report(
                "arity", f"{prefix}: variadic input `{last.name}` needs at least {last.min_arity} values", loc
            )
    _check_attributes(engine, ctx, loc, prefix)
    _check_types(engine, ctx, loc, prefix)


def _check_attributes(engine: Engine, ctx: RuleContext, loc: Location, prefix: str) -> None:
    sig = ctx.sig
    assert sig is not None
    seen: set[str] = set()
    for a in ctx.node.attribute:
        where = Location(loc.graph, loc.node_index, loc.node_name, loc.op_type, attribute=a.name)
        if a.name in seen:
            engine.report("duplicate-attribute", f"{prefix}: attribute '{a.name}' is given twice", where)
        seen.add(a.name)
        spec = sig.attributes.get(a.name)
        if spec is None:
            engine.report(
                "unknown-attribute",
                f"{prefix}: '{a.name}' is not an attribute of {ctx.op_type} version {sig.since_version}",
                where,
                "remove it, or check the opset version the model imports",
            )
            continue
        if a.ref_attr_name:
            continue  # resolved at the call site of the enclosing function
        if a.type == AttributeProto.UNDEFINED:
            # Which value field holds it cannot be told (onnxruntime refuses such a model).
            engine.report(
                "attribute-type",
                f"{prefix}: attribute '{a.name}' has no type; the operator expects "
                f"{_ATTR_TYPE_NAMES.get(spec.type, spec.type)}",
                where,
                "set the attribute's type field",
            )
        elif a.type != spec.type:
            engine.report(
                "attribute-type",
                f"{prefix}: attribute '{a.name}' is {_ATTR_TYPE_NAMES.get(a.type, a.type)}, "
                f"the operator expects {_ATTR_TYPE_NAMES.get(spec.type, spec.type)}",
                where,
            )
    for name, spec in sig.attributes.items():
        if spec.required and name not in seen:
            engine.report(
                "missing-attribute",
                f"{prefix}: required attribute '{name}' is missing",
                Location(loc.graph, loc.node_index, loc.node_name, loc.op_type, attribute=name),
            )


def _check_types(engine: Engine, ctx: RuleContext, loc: Location, prefix: str) -> None:
    """Each input's type is admitted by its constraint, and one type variable means one type."""
    sig = ctx.sig
    assert sig is not None
    bound: dict[str, tuple[str, int]] = {}
    for i, v in enumerate(ctx.inputs):
        formal = sig.input_formal(i)
        if v is None or formal is None:
            continue
        ts = type_string(v.type)
        if ts is None:
            continue
        allowed = sig.constraints.get(formal.type_str, (formal.type_str,))
        if ts not in _admitted(allowed):
            engine.report(
                "type-mismatch",
                f"{prefix}: input {i} (`{formal.name}`) is {ts}, which {formal.type_str} does not admit "
                f"(allowed: {', '.join(allowed)})",
                Location(loc.graph, loc.node_index, loc.node_name, loc.op_type, value=ctx.input_name(i)),
            )
            continue
        if formal.type_str not in sig.constraints:
            continue
        if formal.option == "variadic" and not formal.homogeneous:
            continue
        prev = bound.setdefault(formal.type_str, (ts, i))
        if prev[0] != ts:
            engine.report(
                "type-mismatch",
                f"{prefix}: type variable {formal.type_str} is {prev[0]} for input {prev[1]} but {ts} for input {i}",
                Location(loc.graph, loc.node_index, loc.node_name, loc.op_type, value=ctx.input_name(i)),
                "insert a Cast so both inputs have the same element type",
            )


@functools.lru_cache(maxsize=4096)
def _admitted(allowed: tuple[str, ...]) -> frozenset[str]:
    return frozenset(normalize_type_str(a) for a in allowed)


_ELEM_BYTES = {
    TensorProto.FLOAT: 4, TensorProto.UINT8: 1, TensorProto.INT8: 1, TensorProto.UINT16: 2,
    TensorProto.INT16: 2, TensorProto.INT32: 4, TensorProto.INT64: 8, TensorProto.BOOL: 1,
    TensorProto.FLOAT16: 2, TensorProto.DOUBLE: 8, TensorProto.UINT32: 4, TensorProto.UINT64: 8,
    TensorProto.COMPLEX64: 8, TensorProto.COMPLEX128: 16, TensorProto.BFLOAT16: 2,
    TensorProto.FLOAT8E4M3FN: 1, TensorProto.FLOAT8E4M3FNUZ: 1, TensorProto.FLOAT8E5M2: 1,
    TensorProto.FLOAT8E5M2FNUZ: 1,
}  # fmt: skip
_TYPED_FIELDS = ("float_data", "int32_data", "int64_data", "double_data", "uint64_data", "string_data")
# The one field each data type keeps its elements in when not in raw_data (onnx.proto).
_DATA_FIELD = {
    TensorProto.FLOAT: "float_data", TensorProto.COMPLEX64: "float_data", TensorProto.DOUBLE: "double_data",
    TensorProto.COMPLEX128: "double_data", TensorProto.INT64: "int64_data", TensorProto.UINT32: "uint64_data",
    TensorProto.UINT64: "uint64_data", TensorProto.STRING: "string_data", TensorProto.INT32: "int32_data",
    TensorProto.INT16: "int32_data", TensorProto.INT8: "int32_data", TensorProto.UINT16: "int32_data",
    TensorProto.UINT8: "int32_data", TensorProto.BOOL: "int32_data", TensorProto.FLOAT16: "int32_data",
    TensorProto.BFLOAT16: "int32_data",
}  # fmt: skip


def initializer_problem(t: TensorProto) -> str | None:
    """Why an initializer's stored data does not fit its dims (Clause 6.3.4), or ``None``."""
    if any(d < 0 for d in t.dims):
        return f"dims {list(t.dims)} include a negative extent"
    if t.data_location == TensorProto.EXTERNAL:
        return None
    count = 1
    for d in t.dims:
        count *= d
    if t.raw_data:
        size = _ELEM_BYTES.get(t.data_type)
        if size is None:
            return None  # packed sub-byte types: checked by the runtime
        if len(t.raw_data) != count * size:
            return f"holds {len(t.raw_data)} bytes of raw data, its dims {list(t.dims)} need {count * size}"
        return None
    field = _DATA_FIELD.get(t.data_type)
    if field is not None:
        # Elements in another type's field are not this tensor's elements: readers ignore them.
        wrong = [f for f in _TYPED_FIELDS if f != field and len(getattr(t, f))]
        if wrong:
            kind = TensorProto.DataType.Name(t.data_type)
            return f"holds data in {', '.join(wrong)}; its {kind} elements belong in {field}"
    stored = max(len(getattr(t, f)) for f in _TYPED_FIELDS)
    if t.data_type in (TensorProto.COMPLEX64, TensorProto.COMPLEX128):
        stored //= 2
    if stored != count and not (stored == 0 and count == 0):
        if t.data_type in (TensorProto.FLOAT16, TensorProto.BFLOAT16) or t.data_type >= 17:
            return None  # packed or widened storage: leave it to the runtime
        return f"holds {stored} elements, its dims {list(t.dims)} need {count}"
    return None


def check_graph(engine: Engine, graph: GraphProto, path: str, top_level: bool) -> None:
    """Declarations of one graph: names, initializers, top-level shapes (Clauses 5.4, 6.5, 7)."""
    inputs = [i.name for i in graph.input]
    for kind, names in (("input", inputs), ("output", [o.name for o in graph.output]),
                        ("initializer", [t.name for t in graph.initializer])):  # fmt: skip
        for idx, name in enumerate(names):
            if not name:
                engine.report("empty-name", f"graph {kind} {idx} has an empty name", Location(path))
        dup = {n for n in names if n and names.count(n) > 1}
        for name in sorted(dup):
            engine.report(
                "duplicate-definition", f"graph {kind} `{name}` is declared twice", Location(path, value=name)
            )
    for t in graph.initializer:
        problem = initializer_problem(t)
        if problem:
            engine.report("initializer-size", f"initializer `{t.name}` {problem}", Location(path, value=t.name))
    if top_level:
        for o in graph.output:
            t = o.type.tensor_type
            if o.type.WhichOneof("value") == "tensor_type" and not t.HasField("shape"):
                engine.report("missing-io-shape", f"graph output `{o.name}` has no shape", Location(path, value=o.name))
    else:
        clash = set(inputs) & {t.name for t in graph.initializer}
        if clash and engine.model.ir_version >= 4:
            for name in sorted(clash):
                engine.report(
                    "subgraph-init-clash",
                    f"`{name}` is both an input and an initializer of a subgraph",
                    Location(path, value=name),
                    "from IR version 4 a subgraph name may not be both (Clause 7.2)",
                )
