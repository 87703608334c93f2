"""Validation (Clause 10): a node against its operator's signature, a graph's own declarations.

The engine calls ``check_node`` for every node before its rule runs and ``check_graph`` for every
graph it walks; contradictions between extents are found by the rules themselves and
contradictions with declared types by the engine's refinement. Every condition is reported, not
only the first, and none stops inference.
"""

from __future__ import annotations

import functools
import itertools
from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

import numpy as np
from onnx import (
    AttributeProto,
    FunctionProto,
    GraphProto,
    ModelProto,
    SparseTensorProto,
    TensorProto,
    TypeProto,
    helper,
)

from infer.contract.context import node_of
from infer.contract.signature import Signature, canonical_domain, normalize_type_str
from infer.core import types as T
from infer.core.diagnostics import Diagnostic, Location
from infer.core.scopes import MAIN

if TYPE_CHECKING:  # pragma: no cover
    from infer.contract.context import RuleContext
    from infer.load.nodeview import NodeView
    from infer.load.scan import Scan


class Checker(Protocol):
    """What validation reads of the run that calls it (``infer.walk.state.RunState``), and where it
    reports."""

    # Read, never set: properties, so that a run holding them in plain attributes (a dict of
    # functions where a Mapping is read) is a Checker.
    @property
    def model(self) -> ModelProto: ...
    @property
    def diagnostics(self) -> list[Diagnostic]: ...
    @property
    def clean_checks(self) -> set[tuple]: ...  # keys of node checks that found nothing
    @property
    def functions(self) -> Mapping[tuple[str, str, str], FunctionProto]: ...
    @property
    def scan(self) -> Scan: ...  # the limits scan

    def report(self, code: str, message: str, location: Location, suggestion: str | None = None) -> None: ...


# Indices of a sparse initializer checked against its dims; a larger one (rare, and untrusted
# data) is left unchecked rather than decoded element by element.
MAX_CHECKED_INDICES = 1_000_000
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
    name = f" `{node_of(ctx).name}`" if node_of(ctx).name else ""
    return f"{ctx.op_type}{name} with inputs {ctx.input_types_str() or 'none'}"


class _Prefix:
    """``_node_prefix(ctx)``, spelled out only when a message is formatted: most nodes are clean,
    and spelling their input types (symbolic extents printed) would be wasted."""

    __slots__ = ("_ctx", "_text")

    def __init__(self, ctx: RuleContext):
        self._ctx = ctx
        self._text: str | None = None

    def __str__(self) -> str:
        if self._text is None:
            self._text = _node_prefix(self._ctx)
        return self._text

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)


def _check_key(ctx: RuleContext) -> tuple:
    """Everything ``check_node`` reads: a node with the key of a clean node is clean too."""
    node = node_of(ctx)
    tensor = T.TensorType
    elems = tuple(
        [None if v is None else v.type.elem if type(v.type) is tensor else type_string(v.type) for v in ctx.inputs]
    )
    attrs: tuple = ()
    if node.attribute:
        refs = ctx.attribute_references
        attrs = tuple(
            [(a.name, a.type, _ref_type(refs, a.ref_attr_name) if a.ref_attr_name else None) for a in node.attribute]
        )
    return (id(ctx.sig), tuple(map(bool, node.input)), tuple(map(bool, node.output)), attrs, elems)


def _view_key(ctx: RuleContext, view: NodeView) -> tuple:
    """``_check_key`` from the view's fields (a node without attribute references)."""
    tensor = T.TensorType
    elems = tuple(
        [None if v is None else v.type.elem if type(v.type) is tensor else type_string(v.type) for v in ctx.inputs]
    )
    return (id(ctx.sig), view.input_presence, view.output_presence, view.attrs_summary, elems)


_TENSOR_TYPES = frozenset({AttributeProto.TENSOR, AttributeProto.SPARSE_TENSOR})


def _ref_type(refs: Mapping[str, AttributeProto] | None, name: str) -> int:
    """What a reference to an enclosing function's attribute resolves to: its type, or -1 (none
    supplied and no default), or -2 (no enclosing function)."""
    if refs is None:
        return -2
    ref = refs.get(name)
    return -1 if ref is None else ref.type


# String attributes that take one of a closed set of values (the operator definitions; the union
# over their versions, so that no version's value is refused). onnxruntime refuses another value.
_AUTO_PAD = frozenset({"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"})
_REDUCTIONS = frozenset({"none", "add", "mul", "max", "min"})
CHOICES: dict[str, dict[str, frozenset[str]]] = {
    **{op: {"auto_pad": _AUTO_PAD}
       for op in ("Conv", "ConvTranspose", "ConvInteger", "QLinearConv", "MaxPool", "AveragePool", "LpPool")},
    "Resize": {
        "mode": frozenset({"nearest", "linear", "cubic"}),
        "coordinate_transformation_mode": frozenset({
            "half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric",
            "tf_half_pixel_for_nn", "tf_crop_and_resize",
        }),
        "nearest_mode": frozenset({"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}),
        "keep_aspect_ratio_policy": frozenset({"stretch", "not_larger", "not_smaller"}),
    },
    "Pad": {"mode": frozenset({"constant", "reflect", "edge", "wrap"})},
    "GridSample": {
        "mode": frozenset({"bilinear", "nearest", "bicubic", "linear", "cubic"}),
        "padding_mode": frozenset({"zeros", "border", "reflection"}),
    },
    "ScatterElements": {"reduction": _REDUCTIONS},
    "ScatterND": {"reduction": _REDUCTIONS},
    "Gelu": {"approximate": frozenset({"none", "tanh"})},
    "RoiAlign": {
        "mode": frozenset({"avg", "max"}),
        "coordinate_transformation_mode": frozenset({"half_pixel", "output_half_pixel"}),
    },
}  # fmt: skip


def _check_choices(run: Checker, ctx: RuleContext, loc: Location) -> None:
    """A string attribute of a closed set of values holds one of them (Clause 10.4)."""
    choices = CHOICES.get(node_of(ctx).op_type) if ctx.sig is not None and ctx.sig.domain == "" else None
    if choices is None:
        return
    for a in node_of(ctx).attribute:
        allowed = choices.get(a.name)
        if allowed is None or a.type != AttributeProto.STRING:
            continue
        value = a.s.decode("utf-8", errors="replace")
        if value not in allowed:
            run.report(
                "bad-attribute",
                f"{_node_prefix(ctx)}: {a.name} '{value}' is not one of {', '.join(sorted(allowed))}",
                Location(loc.graph, loc.node_index, loc.node_name, loc.op_type, attribute=a.name),
            )


def check_node(run: Checker, ctx: RuleContext, loc: Location, view: NodeView | None = None) -> None:
    """Arity, attributes and type constraints of one node (Clauses 7.3, 7.4, 10.3, 10.4).
    ``view``: the node's fields as the walk read them, when it has them (cheaper than protobuf's)."""
    sig = ctx.sig
    attr_types = view.attr_types if view is not None else None
    if attr_types is None or _TENSOR_TYPES.intersection(attr_types):
        _check_tensor_attributes(run, ctx, loc)
    if attr_types is None or attr_types:
        _check_choices(run, ctx, loc)
    if sig is None:
        _check_function_call(run, ctx, loc)
        return
    # Repeated layers repeat their nodes' checks: a combination found clean once is not checked
    # again (``run.clean_checks`` lives as long as the engine, which keeps its signatures).
    key = _check_key(ctx) if view is None or view.has_ref or view.attrs_summary is None else _view_key(ctx, view)
    if key in run.clean_checks:
        return
    n_diagnostics = len(run.diagnostics)
    _check_node(run, ctx, loc)
    if len(run.diagnostics) == n_diagnostics:
        run.clean_checks.add(key)


def _check_tensor_attributes(run: Checker, ctx: RuleContext, loc: Location) -> None:
    """A tensor held in an attribute (Constant's ``value``, ConstantOfShape's) fits its dims, as an
    initializer must (Clause 6.3.4). Checked before the clean-check cache: its key leaves out data."""
    for a in node_of(ctx).attribute:
        if a.type == AttributeProto.TENSOR:
            problem = initializer_problem(a.t)
        elif a.type == AttributeProto.SPARSE_TENSOR:
            problem = sparse_initializer_problem(a.sparse_tensor)
        else:
            continue
        if problem:
            run.report(
                "initializer-size",
                f"{_node_prefix(ctx)}: the tensor of attribute '{a.name}' {problem}",
                Location(loc.graph, loc.node_index, loc.node_name, loc.op_type, attribute=a.name),
            )


def _check_function_call(run: Checker, ctx: RuleContext, loc: Location) -> None:
    """The attributes of a call of a model-local function: its declared attribute parameters only."""
    node = node_of(ctx)
    fn = run.functions.get((canonical_domain(node.domain), node.op_type, node.overload))
    if fn is None:
        return
    declared = set(fn.attribute) | {a.name for a in fn.attribute_proto}
    seen: set[str] = set()
    for a in node.attribute:
        where = Location(loc.graph, loc.node_index, loc.node_name, loc.op_type, attribute=a.name)
        if a.name in seen:
            run.report("duplicate-attribute", f"{ctx.op_type} call: attribute '{a.name}' is given twice", where)
        seen.add(a.name)
        if a.name not in declared:
            run.report(
                "unknown-attribute",
                f"{ctx.op_type} call: '{a.name}' is not an attribute of the function {fn.domain}:{fn.name}",
                where,
                f"the function declares {', '.join(sorted(declared)) or 'no attributes'}",
            )


def _signature(ctx: RuleContext) -> Signature:
    """The node's signature: the engine checks only nodes it has one for."""
    assert ctx.sig is not None
    return ctx.sig


def _check_node(run: Checker, ctx: RuleContext, loc: Location) -> None:
    sig, node = _signature(ctx), node_of(ctx)
    prefix = _Prefix(ctx)
    n_in, n_out = len(node.input), len(node.output)
    if n_in > sig.max_inputs:
        run.report("arity", f"{prefix}: {n_in} inputs, the operator takes at most {sig.max_inputs}", loc)
    if n_out > sig.max_outputs:
        run.report("arity", f"{prefix}: {n_out} outputs, the operator has at most {sig.max_outputs}", loc)
    if n_out < sig.min_outputs:
        run.report("arity", f"{prefix}: {n_out} outputs, the operator needs at least {sig.min_outputs}", loc)
    for k, name in enumerate(node.output):
        formal = sig.output_formal(k)
        if not name and formal is not None and formal.option == "single":
            run.report(
                "empty-name",
                f"{prefix}: output {k} (`{formal.name}`) has an empty name, but the operator always computes it",
                loc,
                "only outputs the operator marks optional may be left unnamed (Clause 7.3.3)",
            )
    for i, formal in enumerate(sig.inputs):
        if formal.option != "single":
            continue
        if i >= n_in or not node.input[i]:
            run.report(
                "missing-input",
                f"{prefix}: required input {i} (`{formal.name}`) is not supplied",
                loc,
                "only inputs the operator marks optional may be left empty (Clause 7.3.3)",
            )
    if sig.inputs and sig.inputs[-1].option == "variadic":
        last = sig.inputs[-1]
        supplied = n_in - (len(sig.inputs) - 1)
        if supplied < last.min_arity:
            run.report("arity", f"{prefix}: variadic input `{last.name}` needs at least {last.min_arity} values", loc)
        # A variadic position is not optional: an empty name there leaves a value the operator
        # reads unsupplied (onnxruntime refuses such a Concat, and crashes on such an Einsum).
        for i in range(len(sig.inputs) - 1, n_in):
            if not node.input[i]:
                run.report(
                    "missing-input",
                    f"{prefix}: input {i}, a value of variadic input `{last.name}`, has an empty name",
                    loc,
                    "only inputs the operator marks optional may be left empty (Clause 7.3.3)",
                )
    _check_attributes(run, ctx, loc, prefix)
    _check_types(run, ctx, loc, prefix)


def _check_attributes(run: Checker, ctx: RuleContext, loc: Location, prefix: _Prefix) -> None:
    sig = _signature(ctx)
    seen: set[str] = set()
    for a in node_of(ctx).attribute:
        where = Location(loc.graph, loc.node_index, loc.node_name, loc.op_type, attribute=a.name)
        if a.name in seen:
            run.report("duplicate-attribute", f"{prefix}: attribute '{a.name}' is given twice", where)
        seen.add(a.name)
        spec = sig.attributes.get(a.name)
        if spec is None:
            run.report(
                "unknown-attribute",
                f"{prefix}: '{a.name}' is not an attribute of {ctx.op_type} version {sig.since_version}",
                where,
                "remove it, or check the opset version the model imports",
            )
            continue
        if a.ref_attr_name:
            _check_reference(run, ctx, a, spec.type, spec.required, where, prefix)
            continue
        if a.type == AttributeProto.UNDEFINED:
            # Which value field holds it cannot be told (onnxruntime refuses such a model).
            run.report(
                "attribute-type",
                f"{prefix}: attribute '{a.name}' has no type; the operator expects "
                f"{_ATTR_TYPE_NAMES.get(spec.type, spec.type)}",
                where,
                "set the attribute's type field",
            )
        elif a.type != spec.type:
            run.report(
                "attribute-type",
                f"{prefix}: attribute '{a.name}' is {_ATTR_TYPE_NAMES.get(a.type, a.type)}, "
                f"the operator expects {_ATTR_TYPE_NAMES.get(spec.type, spec.type)}",
                where,
            )
    for name, spec in sig.attributes.items():
        if spec.required and name not in seen:
            run.report(
                "missing-attribute",
                f"{prefix}: required attribute '{name}' is missing",
                Location(loc.graph, loc.node_index, loc.node_name, loc.op_type, attribute=name),
            )


def _check_reference(
    run: Checker,
    ctx: RuleContext,
    a: AttributeProto,
    expected: int,
    required: bool,
    where: Location,
    prefix: _Prefix,
) -> None:
    """An attribute that refers to an attribute of the enclosing function (Clause 8.4)."""
    refs = ctx.attribute_references
    if refs is None:
        run.report(
            "bad-attribute",
            f"{prefix}: attribute '{a.name}' refers to '{a.ref_attr_name}', but the node is not in a function body",
            where,
            "only nodes of a function body may refer to the function's attributes",
        )
        return
    ref = refs.get(a.ref_attr_name)
    if ref is None:
        if required:
            run.report(
                "missing-attribute",
                f"{prefix}: required attribute '{a.name}' refers to the function attribute "
                f"'{a.ref_attr_name}', which the call site does not supply and which has no default",
                where,
            )
        return
    if ref.type != expected:
        kind = _ATTR_TYPE_NAMES.get(ref.type, ref.type)
        what = "has no type" if ref.type == AttributeProto.UNDEFINED else f"is {kind}"
        run.report(
            "attribute-type",
            f"{prefix}: attribute '{a.name}' takes the function attribute '{a.ref_attr_name}', which {what}; "
            f"the operator expects {_ATTR_TYPE_NAMES.get(expected, expected)}",
            where,
        )


def _check_types(run: Checker, ctx: RuleContext, loc: Location, prefix: _Prefix) -> None:
    """Each input's type is admitted by its constraint, and one type variable means one type."""
    sig = _signature(ctx)
    bound: dict[str, tuple[str, int]] = {}
    for i, v in enumerate(ctx.inputs):
        formal = sig.input_formal(i)
        if v is None or formal is None:
            continue
        ts = type_string(v.type)
        if ts is None:
            continue
        allowed = sig.constraints.get(formal.type_str, (formal.type_str,))
        if not admits(allowed, ts):
            run.report(
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
            run.report(
                "type-mismatch",
                f"{prefix}: type variable {formal.type_str} is {prev[0]} for input {prev[1]} but {ts} for input {i}",
                Location(loc.graph, loc.node_index, loc.node_name, loc.op_type, value=ctx.input_name(i)),
                "insert a Cast so both inputs have the same element type",
            )


@functools.lru_cache(maxsize=4096)
def _admitted(allowed: tuple[str, ...]) -> frozenset[str]:
    return frozenset(normalize_type_str(a) for a in allowed)


def admits(allowed: tuple[str, ...], spelled: str) -> bool:
    """Does a type constraint of these ``allowed`` types admit the type spelled ``spelled``
    (as ``type_string`` spells it)?"""
    return spelled in _admitted(allowed)


_ELEM_BYTES: dict[int, int] = {
    TensorProto.FLOAT: 4, TensorProto.UINT8: 1, TensorProto.INT8: 1, TensorProto.UINT16: 2,
    TensorProto.INT16: 2, TensorProto.INT32: 4, TensorProto.INT64: 8, TensorProto.BOOL: 1,
    TensorProto.FLOAT16: 2, TensorProto.DOUBLE: 8, TensorProto.UINT32: 4, TensorProto.UINT64: 8,
    TensorProto.COMPLEX64: 8, TensorProto.COMPLEX128: 16, TensorProto.BFLOAT16: 2,
    TensorProto.FLOAT8E4M3FN: 1, TensorProto.FLOAT8E4M3FNUZ: 1, TensorProto.FLOAT8E5M2: 1,
    TensorProto.FLOAT8E5M2FNUZ: 1,
}  # fmt: skip
_TYPED_FIELDS = ("float_data", "int32_data", "int64_data", "double_data", "uint64_data", "string_data")
# The one field each data type keeps its elements in when not in raw_data (onnx.proto).
_DATA_FIELD: dict[int, str] = {
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
        if t.data_type == TensorProto.STRING:  # onnx.proto: strings are never raw data
            return "keeps STRING elements in raw_data; they belong in string_data"
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


def sparse_initializer_problem(st: SparseTensorProto) -> str | None:
    """Why a sparse initializer's values and indices do not fit its dims (Clause 6.3.4), or ``None``."""
    dims, values, indices = list(st.dims), st.values, st.indices
    if any(d < 0 for d in dims):
        return f"dims {dims} include a negative extent"
    problem = initializer_problem(values) or initializer_problem(indices)
    if problem:
        return problem
    if len(values.dims) != 1:
        return f"has values of dims {list(values.dims)}; they must be one list [NNZ]"
    nnz = values.dims[0]
    ind = list(indices.dims)
    if ind not in ([nnz], [nnz, len(dims)]) and not (nnz == 0 and not ind):
        return f"has {nnz} values but indices of dims {ind} (expected [{nnz}] or [{nnz}, {len(dims)}])"
    coords = _int_elements(indices)
    if not coords or not dims:
        return None
    if len(ind) == 1:
        total = 1
        for d in dims:
            total *= d
        bad = [c for c in coords if not 0 <= c < total]
        if bad:
            return f"has index {bad[0]} outside its {total} elements (dims {dims})"
        if any(a >= b for a, b in itertools.pairwise(coords)):
            return "has linear indices that are not strictly increasing"
        return None
    for k, c in enumerate(coords):
        if not 0 <= c < dims[k % len(dims)]:
            return f"has index {c} on axis {k % len(dims)} outside extent {dims[k % len(dims)]}"
    return None


_INT_DTYPES: dict[int, str] = {TensorProto.INT64: "<i8", TensorProto.INT32: "<i4"}


def _int_elements(t: TensorProto) -> list[int] | None:
    """The elements of an int64 (or int32) tensor stored in the model, or ``None`` (also for more
    than ``MAX_CHECKED_INDICES``: checking every index of a huge sparse tensor is not worth its cost)."""
    if t.data_location == TensorProto.EXTERNAL:
        return None
    if t.raw_data:
        dtype = _INT_DTYPES.get(t.data_type)
        if dtype is None or len(t.raw_data) > 8 * MAX_CHECKED_INDICES or len(t.raw_data) % int(dtype[-1]):
            return None
        elements: list[int] = np.frombuffer(t.raw_data, dtype=dtype).tolist()  # (numpy's tolist is unhinted)
        return elements
    data = (
        t.int64_data if t.data_type == TensorProto.INT64 else t.int32_data if t.data_type == TensorProto.INT32 else None
    )
    if data is None or len(data) > MAX_CHECKED_INDICES:
        return None
    return list(data)


def _malformed(tp: TypeProto) -> tuple[str, str] | None:
    """(code, what) of what makes ``tp`` (or a type it holds) malformed, or ``None``: an opaque
    type without the name Clause 6.8.4 requires (an error), or an extent below 0, which Clause
    6.5.1 rules out but exporters write for a dynamic axis and runtimes read as unknown (a
    warning; it is read so here too)."""
    kind = tp.WhichOneof("value")
    if kind == "opaque_type":
        return None if tp.opaque_type.name else ("malformed-type", "an opaque type without a name")
    if kind in ("tensor_type", "sparse_tensor_type"):
        t = getattr(tp, kind)
        for axis, d in enumerate(t.shape.dim):
            if d.HasField("dim_value") and d.dim_value < 0:
                return "negative-extent", f"an extent of {d.dim_value} at axis {axis}, read as unknown"
        return None
    if kind in ("sequence_type", "optional_type"):
        inner = getattr(tp, kind)
        return _malformed(inner.elem_type) if inner.HasField("elem_type") else None
    if kind == "map_type":
        return _malformed(tp.map_type.value_type) if tp.map_type.HasField("value_type") else None
    return None


def check_model(run: Checker, model: ModelProto) -> None:
    """What the model itself must carry (Clauses 5.3.1, 5.5)."""
    if not model.ir_version:
        run.report(
            "missing-ir-version",
            "the model states no IR version",
            Location(MAIN),
            "set ir_version to the version the producer wrote the model for (onnx.IR_VERSION, say)",
        )
    counts = Counter(p.key for p in model.metadata_props)
    for key in sorted(k for k, n in counts.items() if n > 1):
        run.report("duplicate-metadata-key", f"metadata key `{key}` is given {counts[key]} times", Location(MAIN))
    _check_versions(run, model)
    _check_functions(run, model)


# The newest versions this build knows: the IR version and each standard operator set's
# (onnx's release table: release, IR version, ai.onnx, ai.onnx.ml, ai.onnx.training).
_NEWEST_IR = max(row[1] for row in helper.VERSION_TABLE)
_NEWEST_OPSET = {
    "": max(row[2] for row in helper.VERSION_TABLE),
    "ai.onnx.ml": max(row[3] for row in helper.VERSION_TABLE),
    "ai.onnx.training": max(row[4] for row in helper.VERSION_TABLE if len(row) > 4),
}


def _check_versions(run: Checker, model: ModelProto) -> None:
    """Operator set imports (Clause 5.3.2) and the IR version they need (Clause 14)."""
    where = Location(MAIN)
    seen: dict[str, int] = {}
    for imp in model.opset_import:
        domain, version = canonical_domain(imp.domain), int(imp.version)
        label = domain or "ai.onnx"
        if version < 1:
            run.report(
                "bad-opset-import",
                f"operator set {label} is imported at version {version}",
                where,
                "an operator set version is a positive integer",
            )
        elif domain in _NEWEST_OPSET and version > _NEWEST_OPSET[domain]:
            run.report(
                "newer-version",
                f"operator set {label} {version} is newer than the newest this build "
                f"knows ({_NEWEST_OPSET[domain]}), whose operator definitions are used",
                where,
            )
        if domain in seen and seen[domain] != version:
            run.report(
                "duplicate-opset-import",
                f"operator set {label} is imported at versions {seen[domain]} and {version}; version {version} is used",
                where,
            )
        seen[domain] = version
    ir = model.ir_version
    if ir > _NEWEST_IR:
        run.report("newer-version", f"IR version {ir} is newer than the newest this build knows ({_NEWEST_IR})", where)
    elif ir:
        known = [
            imp for imp in model.opset_import if 1 <= imp.version <= _NEWEST_OPSET.get(canonical_domain(imp.domain), 0)
        ]
        needed = _min_ir_version(tuple((imp.domain, imp.version) for imp in known)) if known else 0
        if ir < needed:
            run.report(
                "ir-version-mismatch",
                f"IR version {ir} predates the operator sets the model imports, which need IR version {needed}",
                where,
                f"set ir_version to {needed} or later",
            )


@functools.lru_cache(maxsize=256)
def _min_ir_version(imports: tuple[tuple[str, int], ...]) -> int:
    """The IR version these (domain, version) imports need (0 for a version onnx's table does not
    list); a model imports the same few sets as the last, so it is looked up once."""
    try:
        return helper.find_min_ir_version_for([helper.make_opsetid(d, v) for d, v in imports])
    except (ValueError, KeyError, TypeError):
        return 0


def _repeated(names: list[str]) -> list[str]:
    """The non-empty names that occur more than once, in order of first occurrence."""
    if len(set(names)) == len(names):  # the usual case: no name twice
        return []
    counts = Counter(names)
    return [n for n in dict.fromkeys(names) if n and counts[n] > 1]


def _check_functions(run: Checker, model: ModelProto) -> None:
    """Model-local functions' declarations (Clause 8.4): one definition per identity, and names
    that are given and distinct."""
    seen: set[tuple[str, str, str]] = set()
    for idx, f in enumerate(model.functions):
        where = f"function {f.domain}.{f.name}" if f.name else f"function {idx}"
        if not f.name:
            run.report("empty-name", f"model-local function {idx} has no name", Location(where))
        key = (canonical_domain(f.domain), f.name, f.overload)
        if f.name and key in seen:
            overload = f" (overload `{f.overload}`)" if f.overload else ""
            run.report(
                "duplicate-definition",
                f"function {f.domain}.{f.name}{overload} is defined twice",
                Location(where),
                "keep one definition, or give the other an overload",
            )
        seen.add(key)
        for kind, names in (("input", list(f.input)), ("output", list(f.output))):
            for k, name in enumerate(names):
                if not name:
                    run.report("empty-name", f"{kind} {k} of the function has no name", Location(where))
            for name in _repeated(names):
                run.report(
                    "duplicate-definition", f"function {kind} `{name}` is declared twice", Location(where, value=name)
                )
        declared = [*f.attribute, *(a.name for a in f.attribute_proto)]
        for name in _repeated(declared):
            run.report(
                "duplicate-attribute", f"function attribute `{name}` is declared twice", Location(where, attribute=name)
            )
        for k, n in enumerate(f.node):
            for a in n.attribute:
                if a.ref_attr_name and a.ref_attr_name not in declared:
                    run.report(
                        "bad-attribute",
                        f"{n.op_type} in the body: attribute '{a.name}' refers to '{a.ref_attr_name}', "
                        "which the function does not declare",
                        Location(where, k, n.name, n.op_type, attribute=a.name),
                        f"declare '{a.ref_attr_name}' among the function's attributes",
                    )


def check_graph(run: Checker, graph: GraphProto, path: str, top_level: bool) -> None:
    """Declarations of one graph: names, initializers, top-level shapes (Clauses 5.4, 6.5, 7)."""
    _check_graph_names(run, graph, path)
    _check_initializers(run, graph, path)
    _check_declared_values(run, graph, path, top_level)
    if not top_level:
        clash = {i.name for i in graph.input} & {t.name for t in graph.initializer}
        if clash and run.model.ir_version >= 4:
            for name in sorted(clash):
                run.report(
                    "subgraph-init-clash",
                    f"`{name}` is both an input and an initializer of a subgraph",
                    Location(path, value=name),
                    "from IR version 4 a subgraph name may not be both (Clause 7.2)",
                )


def _check_graph_names(run: Checker, graph: GraphProto, path: str) -> None:
    """Every graph, input, output, initializer and value_info has a name, and one of its kind."""
    if not graph.name:
        run.report("empty-name", "the graph has no name", Location(path), "Clause 7.1 requires one")
    # Clause 5.4.1: node names are unique within a graph (the scan found the repeats).
    for idx in run.scan.renamed.get(path, ()):
        n = graph.node[idx]
        run.report(
            "duplicate-node-name",
            f"node name `{n.name}` is used by an earlier node too",
            Location(path, idx, n.name, n.op_type),
            "give each node its own name",
        )
    for kind, names in (
        ("input", [i.name for i in graph.input]),
        ("output", [o.name for o in graph.output]),
        ("initializer", [t.name for t in graph.initializer]),
    ):
        for idx, name in enumerate(names):
            if not name:
                run.report("empty-name", f"graph {kind} {idx} has an empty name", Location(path))
        for name in sorted(_repeated(names)):
            run.report("duplicate-definition", f"graph {kind} `{name}` is declared twice", Location(path, value=name))
    for idx, v in enumerate(graph.value_info):
        if not v.name:
            run.report("empty-name", f"value_info entry {idx} has an empty name", Location(path))


def _check_initializers(run: Checker, graph: GraphProto, path: str) -> None:
    """Dense and sparse initializers: an element type, a size their dims match, one name each."""
    for t in graph.initializer:
        if not t.data_type:
            run.report(
                "undefined-element-type",
                f"initializer `{t.name}` has element type 0 (UNDEFINED)",
                Location(path, value=t.name),
            )
            continue
        problem = initializer_problem(t)
        if problem:
            run.report("initializer-size", f"initializer `{t.name}` {problem}", Location(path, value=t.name))
    dense = {t.name for t in graph.initializer}
    sparse_seen: set[str] = set()
    for idx, st in enumerate(graph.sparse_initializer):
        name = st.values.name
        if not name:
            run.report("empty-name", f"sparse initializer {idx} has an empty name", Location(path))
        elif name in dense or name in sparse_seen:
            # Clause 7.5: a value is produced by exactly one initializer.
            other = "an initializer" if name in dense else "another sparse initializer"
            run.report(
                "duplicate-definition",
                f"sparse initializer `{name}` has the name of {other}",
                Location(path, value=name),
            )
        sparse_seen.add(name)
        problem = sparse_initializer_problem(st)
        if problem:
            run.report("initializer-size", f"sparse initializer `{name}` {problem}", Location(path, value=name or None))


def _check_declared_values(run: Checker, graph: GraphProto, path: str, top_level: bool) -> None:
    """The types the graph declares are well formed; the main graph's inputs and outputs declare
    what a caller needs (a type, an element type, an output's shape)."""
    odd = (("input", graph.input), ("output", graph.output), ("value_info", graph.value_info))
    for kind, vis in odd if run.scan.odd_types else ():  # the scan saw such a type somewhere
        for v in vis:
            problem = _malformed(v.type) if v.HasField("type") else None
            if problem:
                run.report(
                    problem[0], f"graph {kind} `{v.name}` declares {problem[1]}", Location(path, value=v.name or None)
                )
    if not top_level:
        return
    for kind, vis in (("input", graph.input), ("output", graph.output)):
        for v in vis:
            if not v.HasField("type"):
                run.report(
                    "missing-io-type",
                    f"graph {kind} `{v.name}` declares no type",
                    Location(path, value=v.name or None),
                    "declare its type and shape",
                )
    # The main graph's inputs are fed by the caller with values of their declared types (a
    # subgraph's may leave theirs open, Clause 7.1).
    for i in graph.input:
        which = i.type.WhichOneof("value")  # (None where the type is empty: not the str above)
        if which in ("tensor_type", "sparse_tensor_type") and not getattr(i.type, which).elem_type:
            run.report(
                "undefined-element-type",
                f"graph input `{i.name}` declares a tensor of element type 0 (UNDEFINED)",
                Location(path, value=i.name),
                "declare the element type the input is fed with",
            )
    for o in graph.output:
        t = o.type.tensor_type
        if o.type.WhichOneof("value") == "tensor_type" and not t.HasField("shape"):
            run.report("missing-io-shape", f"graph output `{o.name}` has no shape", Location(path, value=o.name))
