"""Faults injected one at a time into real exported models: each detected with the right code and location.

The models are the committed corpus (tests/models/*.onnx, exported from PyTorch and transformers
with both exporters). Each injector makes one edit a broken export or a buggy graph rewrite would
make (a Reshape constant that cannot match, an axis out of range, a transposed weight, a dropped
or duplicated node, a contradicting value_info ...) and names the diagnostic code and the node,
value or attribute the report must point at. Run as a module (``python -m
tests.validation.test_injected_faults [--ort]``) it sweeps every model and every injector and
prints a table; with ``--ort`` each injected model is also run in onnxruntime.
"""

from __future__ import annotations

import functools
import glob
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import onnx
import pytest
from onnx import AttributeProto, TensorProto, helper, numpy_helper

import infer

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "models")


@dataclass(frozen=True)
class Expect:
    """A diagnostic the injected model must get: one of ``codes``, at the node of index ``node``
    (main graph) or naming ``value`` / ``attribute``; ``None`` fields are not checked."""

    codes: tuple[str, ...]
    node: int | None = None
    value: str | None = None
    attribute: str | None = None


@dataclass
class Injection:
    kind: str
    model: onnx.ModelProto
    expect: Expect


Injector = Callable[[onnx.ModelProto], Iterator[Injection]]

# -- reading the model ------------------------------------------------------------------------


def _copy(m: onnx.ModelProto) -> onnx.ModelProto:
    c = onnx.ModelProto()
    c.CopyFrom(m)
    return c


def _const(m: onnx.ModelProto, name: str) -> np.ndarray | None:
    """The contents of an initializer or a Constant node's output, else ``None``."""
    for t in m.graph.initializer:
        if t.name == name:
            return numpy_helper.to_array(t)
    for n in m.graph.node:
        if n.op_type == "Constant" and n.output[0] == name:
            for a in n.attribute:
                if a.name == "value":
                    return numpy_helper.to_array(a.t)
    return None


def _init(m: onnx.ModelProto, name: str) -> TensorProto | None:
    return next((t for t in m.graph.initializer if t.name == name), None)


def _fork(m: onnx.ModelProto, idx: int, k: int, arr: np.ndarray) -> None:
    """Feed input ``k`` of node ``idx`` from a new initializer holding ``arr`` (other consumers of
    the old constant keep theirs)."""
    n = m.graph.node[idx]
    name = f"{n.input[k]}__injected"
    m.graph.initializer.append(numpy_helper.from_array(arr, name))
    n.input[k] = name


def _attr(n: onnx.NodeProto, name: str) -> AttributeProto | None:
    return next((a for a in n.attribute if a.name == name), None)


def _set_attr(n: onnx.NodeProto, name: str, value: object) -> None:
    kept = [a for a in n.attribute if a.name != name]
    del n.attribute[:]
    n.attribute.extend(kept)
    n.attribute.append(helper.make_attribute(name, value))


def _nodes(m: onnx.ModelProto, *ops: str) -> list[int]:
    return [i for i, n in enumerate(m.graph.node) if n.op_type in ops]


def _consumers(m: onnx.ModelProto, value: str) -> list[int]:
    return [i for i, n in enumerate(m.graph.node) if value in n.input]


def _opset(m: onnx.ModelProto) -> int:
    return next(o.version for o in m.opset_import if o.domain in ("", "ai.onnx"))


@functools.lru_cache(maxsize=8)
def _inferred(path: str) -> infer.InferenceResult:
    return infer.infer_model(path)


# -- injectors --------------------------------------------------------------------------------


def reshape_count(m: onnx.ModelProto) -> Iterator[Injection]:
    """A Reshape constant whose element count cannot match its input's."""
    for idx in _nodes(m, "Reshape"):
        shape = _const(m, m.graph.node[idx].input[1])
        if shape is None or shape.size == 0 or (shape == -1).any():
            continue  # with -1 the count may divide for some extents
        pos = [k for k, v in enumerate(shape.tolist()) if v > 1]
        if not pos:
            continue
        bad = shape.copy()
        bad[pos[-1]] += 1
        c = _copy(m)
        _fork(c, idx, 1, bad)
        yield Injection("reshape-count", c, Expect(("shape-mismatch",), idx))
        return


def shape_piece(m: onnx.ModelProto) -> Iterator[Injection]:
    """A Reshape shape built by Concat from pieces (torchscript's pattern), one constant piece
    changed so the shape cannot fit the data."""
    for op in ("Reshape",):  # an Expand may broadcast a 1 to any extent: its fault shows later
        producer = {o: i for i, n in enumerate(m.graph.node) for o in n.output}
        for idx in _nodes(m, op):
            cat = producer.get(m.graph.node[idx].input[1])
            if cat is None or m.graph.node[cat].op_type != "Concat":
                continue
            pieces = [(k, _const(m, i)) for k, i in enumerate(m.graph.node[cat].input)]
            hit = [(k, a) for k, a in pieces if a is not None and a.size == 1 and int(a.reshape(-1)[0]) > 1]
            if not hit or len(_consumers(m, m.graph.node[cat].output[0])) != 1:
                continue
            k, arr = hit[-1]
            c = _copy(m)
            _fork(c, cat, k, arr + 1)
            yield Injection(f"shape-piece-{op}", c, Expect(("shape-mismatch",), idx))
            break


def cast_target(m: onnx.ModelProto) -> Iterator[Injection]:
    """A Cast before a float-only operator changed to cast to int64."""
    float_only = ("LayerNormalization", "Softmax", "Sqrt", "Erf", "Tanh", "Sigmoid", "Gelu", "Conv", "Reciprocal")
    for idx in _nodes(m, "Cast"):
        out = m.graph.node[idx].output[0]
        users = [i for i in _consumers(m, out) if m.graph.node[i].op_type in float_only]
        if users:
            c = _copy(m)
            _set_attr(c.graph.node[idx], "to", TensorProto.INT64)
            yield Injection("cast-to-int64", c, Expect(("type-mismatch",), users[0], out))
            return


def gather_index(m: onnx.ModelProto, path: str) -> Iterator[Injection]:
    """A constant Gather index past the known extent of its axis (onnxruntime refuses it)."""
    r = _inferred(path)
    for idx in _nodes(m, "Gather"):
        n = m.graph.node[idx]
        ind = _const(m, n.input[1])
        t = r.type_of(n.input[0])
        shape = getattr(t, "shape", None)
        axis = _attr(n, "axis")
        a = axis.i if axis is not None else 0
        if ind is None or not shape or ind.ndim != 0 or not isinstance(shape[a], int):
            continue
        c = _copy(m)
        _fork(c, idx, 1, np.asarray(shape[a] + 2, ind.dtype))
        yield Injection("gather-index", c, Expect(("shape-mismatch", "bad-attribute"), idx))
        return


_AXIS_ATTR = {"Concat": "axis", "Softmax": "axis", "Gather": "axis", "Flatten": "axis", "LayerNormalization": "axis",
              "Split": "axis", "ArgMax": "axis", "GatherElements": "axis", "LogSoftmax": "axis"}  # fmt: skip


def axis_attr(m: onnx.ModelProto) -> Iterator[Injection]:
    """An axis attribute past the input's rank (one injection per operator type)."""
    for op, attr in _AXIS_ATTR.items():
        for idx in _nodes(m, op):
            c = _copy(m)
            _set_attr(c.graph.node[idx], attr, 9)
            yield Injection(f"axis-{op}", c, Expect(("bad-attribute",), idx))
            break


_AXES_INPUT = {"ReduceMean": 1, "ReduceSum": 1, "Unsqueeze": 1, "Squeeze": 1, "CumSum": 1, "Slice": 3}


def axes_input(m: onnx.ModelProto) -> Iterator[Injection]:
    """Axes given as a constant input (or as the ``axes`` attribute at older opsets) out of range."""
    for op, k in _AXES_INPUT.items():
        for idx in _nodes(m, op):
            n = m.graph.node[idx]
            c = _copy(m)
            if _attr(n, "axes") is not None:
                _set_attr(c.graph.node[idx], "axes", [9])
            elif len(n.input) > k and n.input[k] and (axes := _const(m, n.input[k])) is not None:
                bad = np.full_like(axes, 9)
                _fork(c, idx, k, bad)
            else:
                continue
            yield Injection(f"axes-{op}", c, Expect(("bad-attribute",), idx))
            break


def transpose_perm(m: onnx.ModelProto) -> Iterator[Injection]:
    """A Transpose perm one entry short, and one that repeats an axis."""
    for idx in _nodes(m, "Transpose"):
        perm = _attr(m.graph.node[idx], "perm")
        if perm is None or len(perm.ints) < 2:
            continue
        short, dup = _copy(m), _copy(m)
        _set_attr(short.graph.node[idx], "perm", list(perm.ints)[:-1])
        _set_attr(dup.graph.node[idx], "perm", [perm.ints[1], *perm.ints[1:]])
        yield Injection("perm-length", short, Expect(("bad-attribute",), idx))
        yield Injection("perm-duplicate", dup, Expect(("bad-attribute",), idx))
        return


def transposed_weight(m: onnx.ModelProto) -> Iterator[Injection]:
    """A MatMul or Gemm weight stored transposed (dims swapped with the data)."""
    for op in ("MatMul", "Gemm"):
        for idx in _nodes(m, op):
            w = _init(m, m.graph.node[idx].input[1])
            if w is None or len(w.dims) != 2 or w.dims[0] == w.dims[1]:
                continue
            c = _copy(m)
            arr = numpy_helper.to_array(w).T.copy()
            _fork(c, idx, 1, arr)
            yield Injection(f"transposed-weight-{op}", c, Expect(("shape-mismatch",), idx))
            break


def _middle(m: onnx.ModelProto, pred: Callable[[int, onnx.NodeProto], bool]) -> int | None:
    cands = [i for i, n in enumerate(m.graph.node) if pred(i, n)]
    return cands[len(cands) // 2] if cands else None


def drop_node(m: onnx.ModelProto) -> Iterator[Injection]:
    """A node removed, so its first consumer reads a value nothing produces."""
    graph_outputs = {o.name for o in m.graph.output}
    for kind, ops in (("drop-node", None), ("drop-constant", ("Constant",))):
        idx = _middle(
            m,
            lambda i, n: (
                (n.op_type in ops if ops else n.op_type != "Constant")
                and n.output[0] not in graph_outputs
                and bool(_consumers(m, n.output[0]))
            ),
        )
        if idx is None:
            continue
        value = m.graph.node[idx].output[0]
        consumer = _consumers(m, value)[0]
        c = _copy(m)
        del c.graph.node[idx]
        yield Injection(kind, c, Expect(("undefined-value",), consumer - 1, value))


def duplicate_output(m: onnx.ModelProto) -> Iterator[Injection]:
    """A node's output renamed to an earlier node's output: one value produced twice."""
    idx = _middle(m, lambda i, n: i > 0 and n.op_type != "Constant")
    if idx is None:
        return
    first = m.graph.node[idx - 1].output[0]
    c = _copy(m)
    c.graph.node[idx].output[0] = first
    yield Injection("duplicate-output", c, Expect(("duplicate-definition",), idx, first))


def reorder(m: onnx.ModelProto) -> Iterator[Injection]:
    """A consumer moved before its producer."""
    idx = _middle(m, lambda i, n: n.op_type != "Constant" and bool(_consumers(m, n.output[0])))
    if idx is None:
        return
    consumer = _consumers(m, m.graph.node[idx].output[0])[0]
    c = _copy(m)
    nodes = list(c.graph.node)
    moved = nodes.pop(consumer)
    nodes.insert(idx, moved)
    del c.graph.node[:]
    c.graph.node.extend(nodes)
    yield Injection("reorder", c, Expect(("not-topological",), idx))


_REQUIRED = {"Cast": "to", "Concat": "axis"}


def attributes(m: onnx.ModelProto) -> Iterator[Injection]:
    """A required attribute deleted, given the wrong type, an unknown attribute added, Cast's
    ``to`` an element type that does not exist."""
    for op, name in _REQUIRED.items():
        idxs = _nodes(m, op)
        if not idxs:
            continue
        idx = idxs[len(idxs) // 2]
        gone, wrong = _copy(m), _copy(m)
        n = gone.graph.node[idx]
        kept = [a for a in n.attribute if a.name != name]
        del n.attribute[:]
        n.attribute.extend(kept)
        _set_attr(wrong.graph.node[idx], name, 1.5)
        yield Injection(f"missing-attribute-{op}", gone, Expect(("missing-attribute",), idx, attribute=name))
        yield Injection(f"attribute-type-{op}", wrong, Expect(("attribute-type",), idx, attribute=name))
    for idx in _nodes(m, "Transpose")[:1]:
        c = _copy(m)
        perm = _attr(c.graph.node[idx], "perm")
        if perm is not None:
            _set_attr(c.graph.node[idx], "perm", int(perm.ints[0]))
            yield Injection("attribute-type-perm", c, Expect(("attribute-type",), idx, attribute="perm"))
    idx = _middle(m, lambda i, n: n.op_type != "Constant")
    if idx is not None:
        c = _copy(m)
        _set_attr(c.graph.node[idx], "fused_activation", 1)
        yield Injection("unknown-attribute", c, Expect(("unknown-attribute",), idx, attribute="fused_activation"))
    for idx in _nodes(m, "Cast")[:1]:
        c = _copy(m)
        _set_attr(c.graph.node[idx], "to", 99)
        yield Injection("cast-to-invalid", c, Expect(("bad-attribute",), idx))


def initializer_data(m: onnx.ModelProto) -> Iterator[Injection]:
    """An initializer whose dims no longer fit its data; a Constant whose tensor's data is cut short."""
    for t in m.graph.initializer:
        if len(t.dims) >= 1 and t.raw_data:
            c = _copy(m)
            ct = _init(c, t.name)
            assert ct is not None
            ct.dims[0] += 1
            yield Injection("initializer-dims", c, Expect(("initializer-size",), value=t.name))
            break
    for idx in _nodes(m, "Constant"):
        a = _attr(m.graph.node[idx], "value")
        if a is None or not a.t.raw_data or len(a.t.dims) < 1 or a.t.dims[0] < 2:
            continue
        c = _copy(m)
        t = _attr(c.graph.node[idx], "value").t  # type: ignore[union-attr]
        t.raw_data = t.raw_data[: len(t.raw_data) // 2]
        yield Injection("constant-data", c, Expect(("initializer-size", "bad-attribute"), idx, attribute="value"))
        break


def input_type(m: onnx.ModelProto) -> Iterator[Injection]:
    """A graph input's element type changed (int64 ids fed as float, float pixels as int64)."""
    for inp in m.graph.input[:1]:
        if all(m.graph.node[i].op_type in ("Cast", "Shape") for i in _consumers(m, inp.name)):
            return  # a Cast takes any element type: the model stays valid
        t = inp.type.tensor_type
        new = TensorProto.FLOAT if t.elem_type == TensorProto.INT64 else TensorProto.INT64
        c = _copy(m)
        c.graph.input[0].type.tensor_type.elem_type = new
        yield Injection("input-element-type", c, Expect(("type-mismatch",)))


def opsets(m: onnx.ModelProto) -> Iterator[Injection]:
    """The default opset lowered below an operator the model uses; a node moved to a domain the
    model does not import."""
    version = _opset(m)
    newest = {}
    for i, n in enumerate(m.graph.node):
        first = min(s.since_version for s in _history(n.op_type))
        if first > 1:
            newest.setdefault(n.op_type, (first, i))
    if newest:
        op, (first, idx) = max(newest.items(), key=lambda kv: kv[1][0])
        if first <= version:
            c = _copy(m)
            for o in c.opset_import:
                if o.domain in ("", "ai.onnx"):
                    o.version = first - 1
            yield Injection("opset-too-old", c, Expect(("unknown-operator",), _nodes(m, op)[0]))
    idx = _middle(m, lambda i, n: n.op_type != "Constant")
    if idx is not None:
        c = _copy(m)
        c.graph.node[idx].domain = "com.microsoft"
        yield Injection("domain-not-imported", c, Expect(("domain-not-imported",), idx))
    idx = _middle(m, lambda i, n: n.op_type in ("MatMul", "Add", "Mul"))
    if idx is not None:
        c = _copy(m)
        c.graph.node[idx].op_type += "_"
        yield Injection("operator-typo", c, Expect(("unknown-operator",), idx))


@functools.cache
def _history(op: str) -> tuple:
    return tuple(s for s in onnx.defs.get_all_schemas_with_history() if s.name == op and s.domain == "")


def value_info(m: onnx.ModelProto, path: str) -> Iterator[Injection]:
    """A value_info (or graph output) that contradicts the inferred extent, rank or element type."""
    r = _inferred(path)
    producer = {o: i for i, n in enumerate(m.graph.node) for o in n.output}
    outputs = {o.name for o in m.graph.output}
    cands = []
    for i, n in enumerate(m.graph.node):
        if n.op_type in ("Constant", "Identity") or n.output[0] in outputs:
            continue
        t = r.type_of(n.output[0])
        shape = getattr(t, "shape", None)
        if shape and all(isinstance(d, int) for d in shape) and any(d > 1 for d in shape):
            cands.append((i, n.output[0], t))
    if cands:
        i, name, t = cands[len(cands) // 2]
        shape = list(t.shape)
        k = next(k for k, d in enumerate(shape) if d > 1)
        wrong_dim = [*shape[:k], shape[k] + 1, *shape[k + 1 :]]
        other = TensorProto.INT64 if t.elem != TensorProto.INT64 else TensorProto.FLOAT
        for kind, elem, dims in (
            ("value-info-extent", t.elem, wrong_dim),
            ("value-info-rank", t.elem, [*shape, 2]),
            ("value-info-element-type", other, shape),
        ):
            c = _copy(m)
            c.graph.value_info.append(helper.make_tensor_value_info(name, elem, dims))
            yield Injection(kind, c, Expect(("declared-type-clash",), i, name))
    out = m.graph.output[0]
    elem = out.type.tensor_type.elem_type
    c = _copy(m)
    c.graph.output[0].type.tensor_type.elem_type = TensorProto.INT64 if elem != TensorProto.INT64 else TensorProto.FLOAT
    yield Injection("output-element-type", c, Expect(("declared-type-clash",), producer.get(out.name), out.name))


def split_sizes(m: onnx.ModelProto) -> Iterator[Injection]:
    """Split sizes that no longer sum to the axis."""
    for idx in _nodes(m, "Split"):
        n = m.graph.node[idx]
        c = _copy(m)
        if (a := _attr(n, "split")) is not None:
            _set_attr(c.graph.node[idx], "split", [*a.ints[:-1], a.ints[-1] + 1])
        elif len(n.input) > 1 and (sizes := _const(m, n.input[1])) is not None:
            bad = sizes.copy()
            bad[-1] += 1
            _fork(c, idx, 1, bad)
        else:
            continue
        yield Injection("split-sizes", c, Expect(("shape-mismatch",), idx))
        return


def _resized(arr: np.ndarray, axis: int) -> np.ndarray:
    """``arr`` one longer on ``axis`` (the new slice a copy of the last)."""
    last = np.take(arr, [-1], axis=axis)
    return np.concatenate([arr, last], axis=axis)


def weights(m: onnx.ModelProto) -> Iterator[Injection]:
    """Conv weights with one input channel too many; a Conv bias or a LayerNormalization scale one
    element longer than the axis it meets."""
    for idx in _nodes(m, "Conv"):
        w = _init(m, m.graph.node[idx].input[1])
        if w is None:
            continue
        c = _copy(m)
        _fork(c, idx, 1, _resized(numpy_helper.to_array(w), 1))
        yield Injection("conv-channels", c, Expect(("shape-mismatch",), idx))
        break
    for op, k, kind in (("Conv", 2, "conv-bias"), ("LayerNormalization", 1, "layernorm-scale")):
        for idx in _nodes(m, op):
            n = m.graph.node[idx]
            arr = _const(m, n.input[k]) if len(n.input) > k and n.input[k] else None
            if arr is None or arr.ndim < 1 or arr.shape[-1] < 2:
                continue
            c = _copy(m)
            _fork(c, idx, k, _resized(arr, arr.ndim - 1))
            yield Injection(kind, c, Expect(("shape-mismatch",), idx))
            break


def broadcast_constants(m: onnx.ModelProto) -> Iterator[Injection]:
    """An Expand shape constant changed so broadcasting cannot succeed."""
    for idx in _nodes(m, "Expand"):
        shape = _const(m, m.graph.node[idx].input[1])
        if shape is None or not (shape > 1).any():
            continue
        c = _copy(m)
        _fork(c, idx, 1, np.where(shape > 1, shape + 1, shape))
        yield Injection("expand-shape", c, Expect(("shape-mismatch",), idx))
        break


def broadcast_conflict(m: onnx.ModelProto, path: str) -> Iterator[Injection]:
    """A constant operand of Where/Add/Mul reshaped so that it meets a known extent it cannot
    broadcast with (one axis one longer)."""
    r = _inferred(path)
    for op in ("Where", "Add", "Mul"):
        for idx in _nodes(m, op):
            n = m.graph.node[idx]
            k = next((k for k, i in enumerate(n.input) if i and _const(m, i) is not None), None)
            if k is None:
                continue
            known = [
                (j, list(t.shape))
                for j, i in enumerate(n.input)
                if j != k and (t := r.type_of(i)) is not None and getattr(t, "shape", None)
            ]
            hit = next(
                ((j, shape, a) for j, shape in known for a, d in enumerate(shape) if isinstance(d, int) and d > 1), None
            )
            if hit is None:
                continue
            _, shape, a = hit
            dims = [1] * len(shape)
            dims[a] = shape[a] + 1
            arr = _const(m, n.input[k])
            assert arr is not None
            c = _copy(m)
            _fork(c, idx, k, np.full(dims, arr.reshape(-1)[0], arr.dtype))
            yield Injection(f"broadcast-{op}", c, Expect(("shape-mismatch",), idx))
            break


def arity(m: onnx.ModelProto) -> Iterator[Injection]:
    """A binary node with its second input removed; a unary node with an extra input."""
    idx = _middle(m, lambda i, n: n.op_type in ("Add", "Mul", "MatMul"))
    if idx is not None:
        c = _copy(m)
        del c.graph.node[idx].input[1]
        yield Injection("missing-input", c, Expect(("missing-input", "arity"), idx))
    idx = _middle(m, lambda i, n: n.op_type in ("Relu", "Sigmoid", "Tanh", "Erf", "Sqrt", "Softmax"))
    if idx is not None:
        c = _copy(m)
        c.graph.node[idx].input.append(c.graph.node[idx].input[0])
        yield Injection("extra-input", c, Expect(("arity",), idx))


def initializer_type(m: onnx.ModelProto) -> Iterator[Injection]:
    """A float weight stored as double, so the consuming MatMul/Gemm/Conv binds T twice."""
    for idx in _nodes(m, "MatMul", "Gemm", "Conv"):
        name = m.graph.node[idx].input[1]
        w = _init(m, name)
        if w is None or w.data_type != TensorProto.FLOAT:
            continue
        c = _copy(m)
        _fork(c, idx, 1, numpy_helper.to_array(w).astype(np.float64))
        yield Injection("weight-element-type", c, Expect(("type-mismatch",), idx, c.graph.node[idx].input[1]))
        return


def shape_constants(m: onnx.ModelProto) -> Iterator[Injection]:
    """Pad pads, Slice starts and Tile repeats of the wrong length; a Gather index past the axis."""
    for op, k, kind in (("Pad", 1, "pad-length"), ("Slice", 1, "slice-starts-length"), ("Tile", 1, "tile-length")):
        for idx in _nodes(m, op):
            n = m.graph.node[idx]
            arr = _const(m, n.input[k]) if len(n.input) > k else None
            if arr is None or arr.ndim != 1:
                continue
            c = _copy(m)
            _fork(c, idx, k, np.concatenate([arr, arr[:1]]))
            yield Injection(kind, c, Expect(("shape-mismatch", "bad-attribute"), idx))
            break


INJECTORS: list[Injector] = [
    reshape_count, shape_piece, cast_target, axis_attr, axes_input, transpose_perm, transposed_weight, drop_node,
    duplicate_output, reorder, attributes, initializer_data, input_type, opsets, split_sizes, weights,
    broadcast_constants, arity, initializer_type, shape_constants,
]  # fmt: skip


def injections(path: str) -> Iterator[Injection]:
    m = onnx.load(path)
    for inj in INJECTORS:
        yield from inj(m)
    yield from value_info(m, path)
    yield from broadcast_conflict(m, path)
    yield from gather_index(m, path)


# -- matching ---------------------------------------------------------------------------------


def matches(d: infer.Diagnostic, e: Expect) -> bool:
    loc = d.location
    return (
        d.severity == "error"
        and d.code in e.codes
        and (e.node is None or (loc.graph == "main" and loc.node_index == e.node))
        and (e.value is None or loc.value == e.value)
        and (e.attribute is None or loc.attribute == e.attribute)
    )


def verdict(inj: Injection) -> tuple[str, list[infer.Diagnostic]]:
    """``located``, ``detected`` (an error, not the one expected) or ``missed``."""
    diags = infer.infer_model(inj.model).diagnostics
    if any(matches(d, inj.expect) for d in diags):
        return "located", diags
    if any(d.severity == "error" for d in diags):
        return "detected", diags
    return "missed", diags


# -- the test ---------------------------------------------------------------------------------

# A sample of the corpus that meets every injector at least once: both exporters, transformers
# and convolutional networks.
SAMPLE = ["bert_torchscript", "llama_dynamo", "resnet_dynamo", "mobilenet_v2_torchscript", "whisper_encoder_dynamo",
          "bloom_torchscript", "gpt2_dynamo", "upsample_pad_dynamo", "mask_ops_dynamo"]  # fmt: skip

# Injections no static check can locate, with the reason.
KNOWN: dict[str, str] = {
    # The edited shape is [-1, S, 33] for 32*B*S elements: the Reshape runs when 33 divides B, so
    # it is not provably wrong; the contradiction is reported where it becomes certain (the
    # MatMul that meets the 33 against its weight's 32).
    "gpt2_dynamo:shape-piece-Reshape": "conditional: reported downstream at the MatMul",
}


def _cases() -> list[tuple[str, Injection]]:
    out = []
    for stem in SAMPLE:
        for inj in injections(os.path.join(MODELS, f"{stem}.onnx")):
            if f"{stem}:{inj.kind}" not in KNOWN:
                out.append((f"{stem}:{inj.kind}", inj))
    return out


CASES = _cases()


@pytest.mark.parametrize("case", [c for _, c in CASES], ids=[i for i, _ in CASES])
def test_injected_fault_is_detected_and_located(case: Injection) -> None:
    found, diags = verdict(case)
    assert found == "located", f"{case.kind}: expected {case.expect}, got:\n" + "\n".join(str(d) for d in diags)


def test_every_injector_is_exercised() -> None:
    kinds = {c.kind for _, c in CASES}
    assert len(kinds) >= 40, sorted(kinds)


# -- the sweep --------------------------------------------------------------------------------


def _ort_verdict(model: onnx.ModelProto, stem: str) -> str:
    """``rejects`` or ``runs`` (onnxruntime on the manifest's inputs at its first binding)."""
    import onnxruntime as ort

    ort.set_default_logger_severity(4)
    from tests.support import runtime as R

    entry = next((e for e in R.manifest() if e["file"] == f"{stem}.onnx"), None)
    try:
        sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        if entry is not None:
            feeds = R.feeds_for(entry, entry["bindings"][0]["dims"])
            types = {i.name: i.type for i in sess.get_inputs()}
            feeds = {
                k: v.astype(np.float32)
                if types.get(k) == "tensor(float)"
                else v.astype(np.int64)
                if types.get(k) == "tensor(int64)"
                else v
                for k, v in feeds.items()
            }
            sess.run(None, feeds)
    except Exception:  # any refusal counts
        return "rejects"
    return "runs"


def sweep(with_ort: bool) -> None:
    from collections import Counter, defaultdict

    paths = sorted(glob.glob(os.path.join(MODELS, "*.onnx"))) + [
        os.path.join(HERE, "..", "..", "examples", "bert_tiny.onnx")
    ]
    by_kind: dict[str, Counter] = defaultdict(Counter)
    for path in paths:
        stem = os.path.basename(path)[:-5]
        for inj in injections(path):
            found, diags = verdict(inj)
            ort_v = _ort_verdict(inj.model, "bert_torchscript" if stem == "bert_tiny" else stem) if with_ort else "-"
            by_kind[inj.kind][found] += 1
            by_kind[inj.kind][f"ort-{ort_v}"] += 1
            if found != "located":
                errs = [str(d) for d in diags if d.severity == "error"][:2] or [str(d) for d in diags][:2]
                print(f"{found:8} ort={ort_v:7} {stem}:{inj.kind} expect={inj.expect}\n    " + "\n    ".join(errs))
    total: Counter = Counter()
    for kind in sorted(by_kind):
        c = by_kind[kind]
        total.update(c)
        print(
            f"{kind:28} n={sum(c[k] for k in ('located', 'detected', 'missed')):3} located={c['located']:3} "
            f"detected={c['detected']:3} missed={c['missed']:3} ort-runs={c['ort-runs']:3}"
        )
    print("total", dict(total))


if __name__ == "__main__":
    sweep("--ort" in sys.argv)
