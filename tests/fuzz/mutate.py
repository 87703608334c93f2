"""Hypothesis strategies that mutate valid models into hostile ones.

``mutated(pool)`` draws a seed model and applies one to four mutations, each described in words
so a finding can be reproduced by reading it: bytes (truncation, flips, insertions), fields
(IR version, opset imports), names (dangling, duplicate, cyclic, empty), attributes (2^62,
negative, NaN, wrong type, huge lists), dims (2^63 - 1, negative, absurd names, ranks in the
thousands), operator types (swapped for others of different arity, unknown, custom domains),
initializers (dims that do not fit the data, external references out of the directory, extreme
contents), nesting (the graph wrapped in If / Loop bodies many levels deep, recursive functions),
and single-node models of any registered rule, contrib ones included, at input ranks 0 to 5 with
odd attributes (type fields left UNDEFINED, int64 extremes, denormals, infinities, NaN).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import onnx
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from onnx import AttributeProto, GraphProto, ModelProto, NodeProto, TensorProto, TypeProto

Draw = Callable[[st.SearchStrategy[Any]], Any]

INT64_MAX = 2**63 - 1
ABSURD_INTS = [2**62, -(2**62), INT64_MAX, -(2**63), -1, 0, 1, 2**31 - 1, -(2**31), 2**32, 10**12, 3]
ABSURD_FLOATS = [float("nan"), float("inf"), float("-inf"), -0.0, 1e38, -1e38, 1e-45, 0.5, 5e-324, -5e-324, 1e308,
                 -1e308, 3.4e38, 1e-300, 2.2e-308]  # fmt: skip
ABSURD_NAMES = ["", "N+1", "a b", "ünïcödé", "x" * 10_000, "0", "-1", "batch", "unk__0", "dim__1", "\x00", "../x"]
OP_TYPES = sorted({s.name for s in onnx.defs.get_all_schemas_with_history()})
EXTERNAL_LOCATIONS = ["/etc/passwd", "../secret.bin", "a/../../x", "sub/../../x", "C:\\x", "\\\\host\\share",
                      "shape.bin", "./shape.bin", "missing.bin", "", "dir/", "a\x00b", "..", "."]  # fmt: skip


# -- walking a model ------------------------------------------------------------------------------


def graphs(m: ModelProto) -> list[GraphProto]:
    """Every graph of the model (main first), subgraphs included, without recursion."""
    out, stack = [], [m.graph]
    while stack:
        g = stack.pop()
        out.append(g)
        for n in g.node:
            for a in n.attribute:
                if a.HasField("g"):
                    stack.append(a.g)
                stack.extend(a.graphs)
    return out


def node_lists(m: ModelProto) -> list[Any]:
    """The repeated node fields of every graph and function body."""
    return [g.node for g in graphs(m)] + [f.node for f in m.functions]


def all_nodes(m: ModelProto) -> list[NodeProto]:
    return [n for nodes in node_lists(m) for n in nodes]


def value_names(m: ModelProto) -> list[str]:
    names = []
    for g in graphs(m):
        names += [i.name for i in g.input] + [t.name for t in g.initializer]
        names += [o for n in g.node for o in n.output]
    return names or ["x"]


def type_protos(m: ModelProto) -> list[TypeProto]:
    out = []
    for g in graphs(m):
        out += [vi.type for vi in (*g.input, *g.output, *g.value_info)]
    return out


def tensor_types(m: ModelProto) -> list[Any]:
    out = []
    for tp in type_protos(m):
        kind = tp.WhichOneof("value")
        if kind == "tensor_type":
            out.append(tp.tensor_type)
    return out


# -- the mutations --------------------------------------------------------------------------------


def mutate_node(draw: Draw, m: ModelProto) -> str:
    nodes = all_nodes(m)
    if not nodes:
        return "no node"
    n = draw(st.sampled_from(nodes))
    names = value_names(m)
    what = draw(
        st.sampled_from(
            [
                "op",
                "op_custom",
                "input",
                "cycle",
                "dangling",
                "empty_in",
                "dup_out",
                "extra_in",
                "drop_in",
                "extra_out",
                "drop_out",
                "domain",
                "empty_out",
            ]
        )
    )
    if what == "op":
        n.op_type = draw(st.sampled_from(OP_TYPES))
        return f"{n.name or 'node'} op -> {n.op_type}"
    if what == "op_custom":
        n.op_type = draw(st.sampled_from(["", "Foo", "If", "Loop", "Scan", "Constant", "Conv"]))
        n.domain = draw(st.sampled_from(["", "custom", "ai.onnx", "com.microsoft", "ai.onnx.ml", "x" * 300]))
        return f"op -> {n.domain}:{n.op_type}"
    if what == "input" and n.input:
        k = draw(st.integers(0, len(n.input) - 1))
        n.input[k] = draw(st.sampled_from(names))
        return f"{n.op_type} input {k} -> {n.input[k][:20]}"
    if what == "cycle" and n.output:
        if n.input:
            n.input[0] = n.output[0]
        else:
            n.input.append(n.output[0])
        return f"{n.op_type} consumes its own output"
    if what == "dangling":
        if n.input:
            n.input[0] = "nowhere"
        return f"{n.op_type} input -> dangling"
    if what == "empty_in" and n.input:
        n.input[draw(st.integers(0, len(n.input) - 1))] = ""
        return f"{n.op_type} input emptied"
    if what == "dup_out" and n.output:
        n.output[0] = draw(st.sampled_from(names))
        return f"{n.op_type} output -> duplicate {n.output[0][:20]}"
    if what == "extra_in":
        for _ in range(draw(st.integers(1, 5))):
            n.input.append(draw(st.sampled_from(names + [""])))
        return f"{n.op_type} extra inputs"
    if what == "drop_in" and n.input:
        del n.input[draw(st.integers(0, len(n.input) - 1))]
        return f"{n.op_type} input dropped"
    if what == "extra_out":
        n.output.append(f"extra{draw(st.integers(0, 9))}")
        return f"{n.op_type} extra output"
    if what == "drop_out" and n.output:
        del n.output[-1]
        return f"{n.op_type} output dropped"
    if what == "domain":
        n.domain = draw(st.sampled_from(["custom", "ai.onnx.ml", "com.microsoft", "ai.onnx.preview.training"]))
        return f"{n.op_type} domain -> {n.domain}"
    if what == "empty_out" and n.output:
        n.output[0] = ""
        return f"{n.op_type} output emptied"
    return "node unchanged"


def mutate_structure(draw: Draw, m: ModelProto) -> str:
    lists = [nl for nl in node_lists(m) if len(nl)]
    if not lists:
        return "no nodes"
    nl = draw(st.sampled_from(lists))
    what = draw(st.sampled_from(["duplicate", "delete", "reverse", "swap", "many"]))
    if what == "duplicate":
        nl.add().CopyFrom(NodeProto.FromString(nl[draw(st.integers(0, len(nl) - 1))].SerializeToString()))
    elif what == "delete":
        del nl[draw(st.integers(0, len(nl) - 1))]
    elif what == "reverse":
        copies = [NodeProto.FromString(n.SerializeToString()) for n in nl][::-1]
        del nl[:]
        nl.extend(copies)
    elif what == "swap" and len(nl) > 1:
        i, j = draw(st.integers(0, len(nl) - 1)), draw(st.integers(0, len(nl) - 1))
        a, b = NodeProto.FromString(nl[i].SerializeToString()), NodeProto.FromString(nl[j].SerializeToString())
        nl[i].CopyFrom(b)
        nl[j].CopyFrom(a)
    elif what == "many":
        src = NodeProto.FromString(nl[draw(st.integers(0, len(nl) - 1))].SerializeToString())
        for _ in range(draw(st.integers(10, 300))):
            nl.add().CopyFrom(src)
    return f"nodes {what}"


def mutate_attribute(draw: Draw, m: ModelProto) -> str:
    nodes = all_nodes(m)
    if not nodes:
        return "no node"
    n = draw(st.sampled_from(nodes))
    if not n.attribute or draw(st.integers(0, 3)) == 0:
        a = n.attribute.add()
        names = [
            "axis",
            "perm",
            "kernel_shape",
            "pads",
            "strides",
            "to",
            "keepdims",
            "axes",
            "value",
            "body",
            "mode",
            "num_outputs",
            "bogus",
            "dilations",
            "group",
        ]
        a.name = draw(st.sampled_from(names))
        a.type = AttributeProto.INT
        a.i = draw(st.sampled_from(ABSURD_INTS))
        return f"{n.op_type} new attribute {a.name}={a.i}"
    a = draw(st.sampled_from(list(n.attribute)))
    what = draw(
        st.sampled_from(
            [
                "int",
                "ints",
                "long_ints",
                "float",
                "floats",
                "string",
                "type",
                "untyped",
                "empty",
                "delete",
                "tensor",
                "float_tensor",
                "graph",
            ]
        )
    )
    if what == "untyped":  # the value stays, the type field says UNDEFINED
        a.type = AttributeProto.UNDEFINED
    elif what == "empty":  # an empty list of the attribute's kind
        for repeated in (a.ints, a.floats, a.strings):
            del repeated[:]
        a.type = draw(st.sampled_from([AttributeProto.INTS, AttributeProto.FLOATS, AttributeProto.STRINGS]))
    elif what == "floats":
        del a.floats[:]
        a.floats.extend(draw(st.lists(st.sampled_from(ABSURD_FLOATS), min_size=1, max_size=6)))
        a.type = AttributeProto.FLOATS
    elif what == "float_tensor":
        a.type = AttributeProto.TENSOR
        a.t.Clear()
        a.t.data_type = draw(st.sampled_from([TensorProto.FLOAT, TensorProto.DOUBLE]))
        values = draw(st.lists(st.sampled_from(ABSURD_FLOATS), max_size=3))
        (a.t.float_data if a.t.data_type == TensorProto.FLOAT else a.t.double_data).extend(values)
        if len(values) != 1 or draw(st.booleans()):
            a.t.dims.append(len(values))
    elif what == "int":
        a.i = draw(st.sampled_from(ABSURD_INTS))
        if draw(st.booleans()):
            a.type = AttributeProto.INT
    elif what == "ints":
        del a.ints[:]
        a.ints.extend(draw(st.lists(st.sampled_from(ABSURD_INTS), max_size=8)))
        a.type = AttributeProto.INTS
    elif what == "long_ints":
        del a.ints[:]
        a.ints.extend([draw(st.sampled_from([0, 1, 2, -1]))] * draw(st.sampled_from([1000, 2000, 5000])))
        a.type = AttributeProto.INTS
    elif what == "float":
        a.f = draw(st.sampled_from(ABSURD_FLOATS))
        a.type = AttributeProto.FLOAT
    elif what == "string":
        a.s = draw(st.sampled_from([b"", b"NOTSET", b"SAME_UPPER", b"\xff\xfe", b"x" * 5000, b"VALID"]))
        a.type = AttributeProto.STRING
    elif what == "type":
        a.type = draw(st.sampled_from(list(AttributeProto.AttributeType.values())))
    elif what == "delete":
        n.attribute.remove(a)
    elif what == "tensor":
        a.type = AttributeProto.TENSOR
        a.t.Clear()
        a.t.data_type = draw(st.sampled_from([0, TensorProto.INT64, TensorProto.FLOAT, TensorProto.STRING, 40]))
        a.t.dims.extend(draw(st.lists(st.sampled_from(ABSURD_INTS), max_size=4)))
        a.t.int64_data.extend(draw(st.lists(st.sampled_from(ABSURD_INTS), max_size=4)))
    elif what == "graph":
        a.type = AttributeProto.GRAPH
        snapshot = GraphProto.FromString(m.graph.SerializeToString())  # ``a`` may lie inside it
        a.g.Clear()
        if draw(st.booleans()):
            a.g.CopyFrom(snapshot)
    return f"{n.op_type} attribute {a.name} {what}"


def mutate_dims(draw: Draw, m: ModelProto) -> str:
    tts = tensor_types(m)
    if not tts:
        return "no tensor type"
    t = draw(st.sampled_from(tts))
    what = draw(st.sampled_from(["value", "param", "rank", "clear", "elem", "huge_rank", "scalar", "rank_k"]))
    if what in ("value", "param") and len(t.shape.dim) == 0:
        what = "rank"
    if what == "rank_k":  # every rank from 0 to 5, extents from the absurd to the plain
        k = draw(st.integers(0, 5))
        t.shape.Clear()
        t.shape.SetInParent()
        for _ in range(k):
            d = t.shape.dim.add()
            if draw(st.booleans()):
                d.dim_param = draw(st.sampled_from(["N", "M", "batch"]))
            else:
                d.dim_value = draw(st.sampled_from([1, 2, 3, 0, INT64_MAX]))
        return f"rank -> {k}"
    if what == "value":
        d = t.shape.dim[draw(st.integers(0, len(t.shape.dim) - 1))]
        d.dim_value = draw(st.sampled_from(ABSURD_INTS))
        return f"dim_value -> {d.dim_value}"
    if what == "param":
        d = t.shape.dim[draw(st.integers(0, len(t.shape.dim) - 1))]
        d.dim_param = draw(st.sampled_from(ABSURD_NAMES))
        return f"dim_param -> {d.dim_param[:20]!r}"
    if what == "rank":
        for _ in range(draw(st.integers(1, 8))):
            t.shape.dim.add().dim_value = draw(st.sampled_from([1, 2, 0, -1, INT64_MAX]))
        return "rank grown"
    if what == "huge_rank":
        k = draw(st.sampled_from([900, 1023, 1025, 3000]))
        for _ in range(k):
            t.shape.dim.add().dim_value = 1
        return f"rank +{k}"
    if what == "clear":
        t.ClearField("shape")
        return "shape cleared"
    if what == "scalar":
        t.shape.Clear()
        return "shape -> scalar"
    t.elem_type = draw(st.sampled_from([0, 1, 7, 8, 9, 16, 23, 25, 26, 99, 2**31 - 1]))
    return f"elem_type -> {t.elem_type}"


def mutate_initializer(draw: Draw, m: ModelProto) -> str:
    inits = [t for g in graphs(m) for t in g.initializer]
    if not inits:
        return "no initializer"
    t = draw(st.sampled_from(inits))
    what = draw(st.sampled_from(["dims", "type", "raw", "external", "rank", "name", "extreme"]))
    if what == "extreme":  # denormals, infinities, NaN, int64 extremes, in the tensor's own type
        extreme_contents(draw, t)
    elif what == "dims":
        if t.dims:
            t.dims[draw(st.integers(0, len(t.dims) - 1))] = draw(st.sampled_from(ABSURD_INTS))
        else:
            t.dims.append(draw(st.sampled_from(ABSURD_INTS)))
    elif what == "type":
        t.data_type = draw(st.sampled_from([0, 1, 6, 7, 8, 9, 10, 16, 17, 21, 22, 23, 25, 99]))
    elif what == "raw":
        data = t.raw_data or b"\x01" * 8
        t.raw_data = data[: draw(st.integers(0, len(data)))] + draw(st.binary(max_size=9))
    elif what == "external":
        t.data_location = draw(st.sampled_from([TensorProto.EXTERNAL, TensorProto.DEFAULT]))
        del t.external_data[:]
        for key in draw(st.lists(st.sampled_from(["location", "offset", "length", "checksum", "bogus"]), max_size=5)):
            e = t.external_data.add()
            e.key = key
            e.value = draw(st.sampled_from(EXTERNAL_LOCATIONS + ["0", "-1", str(2**63), "16", "zz", "a" * 40]))
    elif what == "rank":
        t.dims.extend([1] * draw(st.sampled_from([3, 1030, 2000])))
    elif what == "name":
        t.name = draw(st.sampled_from(value_names(m) + [""]))
    return f"initializer {t.name[:20]} {what}"


def extreme_contents(draw: Draw, t: TensorProto) -> None:
    """Replace ``t``'s elements (as many as its dims hold, up to 16) by extreme values of its type."""
    import numpy as np
    from onnx import helper, numpy_helper

    count = 1
    for d in t.dims:
        count *= max(int(d), 0)
    if count > 16 or t.data_type not in _EXTREME_TYPES:
        t.dims[:] = [draw(st.integers(1, 3))] if t.dims else []
        count = t.dims[0] if t.dims else 1
        if t.data_type not in _EXTREME_TYPES:
            t.data_type = draw(st.sampled_from(sorted(_EXTREME_TYPES)))
    dtype = helper.tensor_dtype_to_np_dtype(t.data_type)
    pool = ABSURD_FLOATS if np.issubdtype(dtype, np.floating) else [int(v) for v in _int_extremes(dtype)]
    with np.errstate(over="ignore"):  # 1e308 as float16 is inf, as intended
        values = np.array(draw(st.lists(st.sampled_from(pool), min_size=count, max_size=count)), dtype=dtype)
    data = numpy_helper.from_array(values.reshape(tuple(t.dims)), t.name)
    t.CopyFrom(data)


_EXTREME_TYPES = frozenset({TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.INT64,
                            TensorProto.INT32})  # fmt: skip


def _int_extremes(dtype: Any) -> list[int]:
    import numpy as np

    info = np.iinfo(dtype)
    return [info.min, info.max, -1, 0, 1, info.max // 2 + 1]


def mutate_model_fields(draw: Draw, m: ModelProto) -> str:
    what = draw(st.sampled_from(["ir", "opset", "no_default", "dup_import", "domain_import"]))
    if what == "ir":
        m.ir_version = draw(st.sampled_from([0, 1, 3, 4, 7, 11, 99, -1, INT64_MAX]))
        return f"ir_version {m.ir_version}"
    if what == "opset" and m.opset_import:
        m.opset_import[0].version = draw(st.sampled_from([0, 1, 6, 7, 11, 13, 17, 23, 24, 10**9, -1, INT64_MAX]))
        return f"opset {m.opset_import[0].version}"
    if what == "no_default":
        del m.opset_import[:]
        return "no opset import"
    if what == "dup_import" and m.opset_import:
        dup = m.opset_import.add()
        dup.domain = m.opset_import[0].domain
        dup.version = draw(st.sampled_from([1, 7, 10**6]))
        return "duplicate opset import"
    imp = m.opset_import.add()
    imp.domain = draw(st.sampled_from(["custom", "com.microsoft", "ai.onnx.ml", "ai.onnx"]))
    imp.version = draw(st.sampled_from([0, 1, 5, 99]))
    return f"import {imp.domain} {imp.version}"


def mutate_nesting(draw: Draw, m: ModelProto) -> str:
    """Wrap the main graph's nodes into If or Loop bodies, ``levels`` deep."""
    levels = draw(st.sampled_from([1, 2, 3, 8, 20, 31, 40]))
    kind = draw(st.sampled_from(["If", "Loop", "Scan"]))
    outs = [o.name for o in m.graph.output]
    inner = GraphProto()
    inner.CopyFrom(m.graph)
    del inner.input[:]
    for _ in range(levels):
        node = NodeProto(op_type=kind, output=outs)
        if kind == "If":
            node.input.append("cond__")
            for branch in ("then_branch", "else_branch"):
                a = node.attribute.add(name=branch, type=AttributeProto.GRAPH)
                if branch == "then_branch" or levels <= 3:  # both, deep, would double at each level
                    a.g.CopyFrom(inner)
                else:
                    a.g.output.extend(m.graph.output)
        else:
            a = node.attribute.add(name="body", type=AttributeProto.GRAPH)
            a.g.CopyFrom(inner)
            if kind == "Loop":
                node.input.extend(["", "cond__"])
            else:
                node.attribute.add(name="num_scan_inputs", type=AttributeProto.INT, i=1)
        g = GraphProto(name="wrap", node=[node])
        g.output.extend(m.graph.output)
        inner = g
    del m.graph.node[:]
    m.graph.node.extend(inner.node)
    cond = m.graph.input.add(name="cond__")
    cond.type.tensor_type.elem_type = TensorProto.BOOL
    cond.type.tensor_type.shape.SetInParent()
    return f"wrapped in {levels} {kind}"


def mutate_functions(draw: Draw, m: ModelProto) -> str:
    what = draw(st.sampled_from(["recursive", "mutual", "doubling"]))
    names = ["F0", "F1"] if what == "mutual" else ["F0"]
    for k, name in enumerate(names):
        f = m.functions.add(name=name, domain="fz", input=["a"], output=["y"])
        f.opset_import.add(domain="", version=18)
        f.opset_import.add(domain="fz", version=1)
        callee = names[(k + 1) % len(names)]
        f.node.add(op_type=callee, domain="fz", input=["a"], output=["y"])
    if what == "doubling":  # G_k calls G_{k-1} twice: 2^depth walks of the innermost body
        depth = draw(st.sampled_from([5, 15, 30]))
        for k in range(depth):
            f = m.functions.add(name=f"G{k}", domain="fz", input=["a"], output=["y"])
            f.opset_import.add(domain="", version=18)
            f.opset_import.add(domain="fz", version=1)
            if k == 0:
                f.node.add(op_type="Relu", input=["a"], output=["y"])
            else:
                f.node.add(op_type=f"G{k - 1}", domain="fz", input=["a"], output=["t"])
                f.node.add(op_type=f"G{k - 1}", domain="fz", input=["t"], output=["y"])
        names = [f"G{depth - 1}"]
    m.opset_import.add(domain="fz", version=1)
    src = m.graph.input[0].name if m.graph.input else "x"
    m.graph.node.add(op_type=names[0], domain="fz", input=[src], output=["fz_out"])
    return f"function {what}"


@functools.cache
def _rule_versions() -> list[tuple[str, str, Any]]:
    from .sweep import versions

    return list(versions())


def mutate_rule(draw: Draw, m: ModelProto) -> str:
    """Replace the model by one node of a registered rule at some operator version (contrib rules
    included), its inputs of one rank from 0 to 5, perhaps odd attributes and extreme contents in
    its small inputs (initializers)."""
    from .sweep import CONCRETE, FLOAT_CONTENTS, INT_CONTENTS, ONES, SYMBOLIC, odd_values

    domain, op, sig = draw(st.sampled_from(_rule_versions()))
    rank = draw(st.integers(0, 5))
    dims = draw(st.sampled_from([CONCRETE, SYMBOLIC, ONES]))
    contents = draw(st.sampled_from([None, *INT_CONTENTS, *FLOAT_CONTENTS]))
    attributes: dict[str, Any] = {}
    for name in sorted(sig.attributes):  # each odd one time in three
        if draw(st.integers(0, 2)) == 0:
            attributes[name] = draw(st.sampled_from(odd_values(sig.attributes[name].type, rank, long=True)))
    rule_model(m, domain, op, sig, rank, dims, attributes, contents)
    shown = {k: (f"type {v.type}" if isinstance(v, AttributeProto) else str(v)[:40]) for k, v in attributes.items()}
    return f"one {domain or 'ai.onnx'}:{op}-{sig.since_version} at rank {rank} {shown} contents {contents}"


def rule_model(
    m: ModelProto,
    domain: str,
    op: str,
    sig: Any,
    rank: int,
    dims: tuple[str, ...],
    attributes: dict[str, Any],
    contents: tuple[Any, ...] | None,
) -> None:
    """``m`` made a model of one ``op`` node whose inputs are graph inputs of rank ``rank`` (or,
    where ``contents`` fit a small input, initializers holding them)."""
    import numpy as np
    from onnx import helper

    from infer.core.types import elem_from_name

    from .sweep import _fill, _formals, _representative

    m.graph.Clear()
    m.graph.name = "rule"
    del m.opset_import[:]
    del m.functions[:]
    m.opset_import.add(domain="", version=sig.since_version if domain == "" else 23)
    if domain:
        m.opset_import.add(domain=domain, version=sig.since_version)
    m.ir_version = 10
    shape = [int(d) if d.isdigit() else d for d in dims[:rank]]
    reps: dict[str, str] = {}
    names = []
    for k, (_, ts) in enumerate(_formals(sig, optional=True)):
        if not ts:
            names.append("")
            continue
        kind = reps.setdefault(ts, _representative(sig, ts))
        name = f"x{k}"
        names.append(name)
        filled = _fill(kind, contents[k % len(contents)]) if contents is not None and rank <= 1 else None
        if filled is not None:
            with np.errstate(over="ignore"):  # 1e308 as float16 is inf, as intended
                t = helper.make_tensor(name, elem_from_name(kind[7:-1]), [1] * rank, list(filled))  # type: ignore[arg-type]
            m.graph.initializer.append(t)
            continue
        vi = m.graph.input.add(name=name)
        vi.type.CopyFrom(_type_proto(kind, shape))
    n_out = max(len(sig.outputs), 1)
    node = helper.make_node(op, names, [f"y{j}" for j in range(n_out)], domain=domain or None)
    for name, value in attributes.items():
        node.attribute.append(_attribute(name, value, sig.attributes[name].type))
    m.graph.node.append(node)
    for j in range(n_out):
        m.graph.output.add(name=f"y{j}")


def _type_proto(kind: str, shape: list[Any]) -> TypeProto:
    """A schema type string (``tensor(float)``, ``seq(tensor(int64))``, ``map(string,tensor(float))``)
    as a ``TypeProto``, tensors of ``shape``."""
    from onnx import helper

    from infer.core.types import elem_from_name

    inner = kind[kind.index("(") + 1 : -1]
    if kind.startswith("tensor("):
        return helper.make_tensor_type_proto(elem_from_name(inner) or 0, shape)
    if kind.startswith("sparse_tensor("):
        return helper.make_sparse_tensor_type_proto(elem_from_name(inner) or 0, shape)
    if kind.startswith("seq("):
        return helper.make_sequence_type_proto(_type_proto(inner, shape))
    if kind.startswith("optional("):
        return helper.make_optional_type_proto(_type_proto(inner, shape))
    key, _, value = inner.partition(",")
    return helper.make_map_type_proto(elem_from_name(key) or 0, _type_proto(value, shape))


def _attribute(name: str, value: Any, spec_type: int) -> AttributeProto:
    """``value`` as attribute ``name``: an ``AttributeProto`` renamed, an empty list of the spec's
    type, a value of another type as ``helper`` types it (a string for an int, say)."""
    from onnx import helper

    if isinstance(value, AttributeProto):
        a = AttributeProto()
        a.CopyFrom(value)
        a.name = name
        return a
    if value == "wrong type":
        value = "s" if spec_type != AttributeProto.STRING else 1
    if isinstance(value, list) and not value:
        return helper.make_attribute(name, [], attr_type=spec_type if spec_type in _LISTS else AttributeProto.INTS)
    return helper.make_attribute(name, value)


_LISTS = frozenset({AttributeProto.INTS, AttributeProto.FLOATS, AttributeProto.STRINGS, AttributeProto.TENSORS,
                    AttributeProto.GRAPHS})  # fmt: skip


MUTATORS: dict[str, Callable[[Draw, ModelProto], str]] = {
    "node": mutate_node,
    "structure": mutate_structure,
    "attribute": mutate_attribute,
    "dims": mutate_dims,
    "initializer": mutate_initializer,
    "fields": mutate_model_fields,
    "nesting": mutate_nesting,
    "functions": mutate_functions,
}


def _field(tag: int, payload: bytes) -> bytes:
    """One length-delimited protobuf field (wire type 2)."""
    key, n, length = (tag << 3) | 2, len(payload), b""
    while True:
        byte, n = n & 0x7F, n >> 7
        length += bytes([byte | (0x80 if n else 0)])
        if not n:
            break
    return bytes([key]) + length + payload


def deep_nesting(levels: int) -> bytes:
    """A model whose graph nests ``levels`` If subgraphs, encoded by hand (protobuf refuses to
    build what it would refuse to parse)."""
    graph = _field(1, _field(4, b"Relu") + _field(1, b"x") + _field(2, b"y"))
    for _ in range(levels):
        attr = _field(1, b"then_branch") + bytes([0xA0, 0x01, 5]) + _field(6, graph)  # type = GRAPH
        graph = _field(1, _field(4, b"If") + _field(1, b"c") + _field(2, b"y") + _field(5, attr))
    opset = _field(8, bytes([0x10, 18]))
    return bytes([0x08, 8]) + _field(7, graph) + opset


def mutate_bytes(draw: Draw, data: bytes) -> tuple[str, bytes]:
    what = draw(st.sampled_from(["truncate", "flip", "insert", "splice", "empty", "deep"]))
    if what == "deep":
        levels = draw(st.sampled_from([30, 33, 50, 200, 2000]))
        return f"{levels} nested If encoded by hand", deep_nesting(levels)
    if not data or what == "empty":
        return "bytes emptied", b""
    rnd = draw(st.randoms(use_true_random=False))  # positions spread over the whole message
    i = rnd.randrange(len(data))
    if what == "truncate":
        return f"truncated at {i}", data[:i]
    if what == "flip":
        for _ in range(rnd.randint(1, 8)):
            j = rnd.randrange(len(data))
            data = data[:j] + bytes([data[j] ^ rnd.randint(1, 255)]) + data[j + 1 :]
        return "bytes flipped", data
    if what == "insert":
        return f"bytes inserted at {i}", data[:i] + draw(st.binary(min_size=1, max_size=16)) + data[i:]
    j = rnd.randint(i, len(data))
    return f"splice {i}:{j}", data[:j] + data[i:j] + data[j:]


@st.composite
def mutated(draw: Draw, pool: list[tuple[str, bytes]]) -> tuple[str, bytes]:
    """(description, serialized model): a seed from ``pool`` after one to four mutations, or
    (one time in four) a single-node model of a registered rule after at most one."""
    if draw(st.integers(0, 3)) == 0:
        m = ModelProto()
        steps = [mutate_rule(draw, m)]
        if draw(st.booleans()):
            kind = draw(st.sampled_from(sorted(MUTATORS)))
            try:
                steps.append(MUTATORS[kind](draw, m))
            except Exception as e:  # protobuf refused the mutation (depth, range)
                steps.append(f"{kind} failed: {type(e).__name__}")
        try:
            return "; ".join(steps), m.SerializeToString()
        except Exception as e:
            return "; ".join([*steps, f"serialize failed: {type(e).__name__}"]), b""
    name, data = draw(st.sampled_from(pool))
    steps: list[str] = [name]
    if draw(st.integers(0, 9)) > 0:
        m = ModelProto.FromString(data)
        for _ in range(draw(st.integers(1, 4))):
            kind = draw(st.sampled_from(sorted(MUTATORS)))
            try:
                steps.append(MUTATORS[kind](draw, m))
            except Exception as e:  # protobuf refused the mutation (depth, range)
                steps.append(f"{kind} failed: {type(e).__name__}")
        try:
            data = m.SerializeToString()
        except Exception as e:  # a mutation protobuf cannot even serialize
            steps.append(f"serialize failed: {type(e).__name__}")
    if draw(st.integers(0, 4)) == 0:
        desc, data = mutate_bytes(draw, data)
        steps.append(desc)
    return "; ".join(steps), data


def generate(pool: list[tuple[str, bytes]], count: int, seed_value: int) -> list[tuple[str, bytes]]:
    """``count`` mutated models, drawn by hypothesis from ``seed_value`` (reproducible)."""
    out: list[tuple[str, bytes]] = []
    while len(out) < count:  # hypothesis may stop early once it thinks it has seen enough
        before = len(out)
        _collector(pool, count - len(out), seed_value, out)()
        if len(out) == before:
            break
        seed_value += 1
    return out[:count]


def _collector(pool: list[tuple[str, bytes]], count: int, seed_value: int, out: list[tuple[str, bytes]]) -> Any:
    @settings(
        max_examples=count,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @seed(seed_value)
    @given(mutated(pool))
    def collect(case: tuple[str, bytes]) -> None:
        out.append(case)

    return collect
