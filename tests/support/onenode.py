"""One-node models checked against onnxruntime, concretely and symbolically.

``check_node`` builds a model with one node, runs it in onnxruntime on random data, then infers
it twice: once with the real input shapes, where every output dim must be exactly right, and once
with every dim of every data input replaced by a fresh ``dim_param``, where every claimed dim is
evaluated with those variables bound to the real extents and must be right (unknown is allowed).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import infer
from infer.core import dims as D
from infer.core import types as T

from .runtime import run


@dataclass
class In:
    """A node input: random data of ``shape`` (a graph input), or a constant ``array``."""

    shape: Sequence[int] | None = None
    dtype: Any = np.float32
    array: np.ndarray | None = None  # set: an initializer whose contents inference may read

    def data(self, rng: np.random.Generator) -> np.ndarray:
        if self.array is not None:
            return self.array
        if np.issubdtype(self.dtype, np.integer):
            return rng.integers(0, 3, size=self.shape).astype(self.dtype)
        if self.dtype == np.bool_:
            return rng.integers(0, 2, size=self.shape).astype(bool)
        return rng.standard_normal(self.shape).astype(self.dtype)


def graph_inputs(
    inputs: Sequence[In | None], symbolic: bool, sparse: frozenset[int] = frozenset()
) -> tuple[list[str], list[onnx.ValueInfoProto], list[onnx.TensorProto], dict[str, int]]:
    """A node's input names (input ``i`` is ``x{i}``, ``""`` where absent), the graph inputs and
    initializers that supply them, and for the symbolic variant the binding of each dim_param
    (``d{i}_{j}``). Inputs in ``sparse`` are declared sparse tensors."""
    names, declared, inits = [], [], []
    bindings: dict[str, int] = {}
    for i, x in enumerate(inputs):
        if x is None:
            names.append("")
            continue
        name = f"x{i}"
        names.append(name)
        if x.array is not None:
            inits.append(numpy_helper.from_array(x.array, name))
            continue
        dims: list[int | str] = list(x.shape)  # type: ignore[arg-type]
        if symbolic:
            for j, d in enumerate(dims):
                param = f"d{i}_{j}"
                bindings[param] = int(d)
                dims[j] = param
        elem = helper.np_dtype_to_tensor_dtype(np.dtype(x.dtype))
        make = helper.make_sparse_tensor_value_info if i in sparse else helper.make_tensor_value_info
        declared.append(make(name, elem, dims))
    return names, declared, inits, bindings


def build(
    op: str, inputs: Sequence[In | None], attrs: dict[str, Any], n_out: int, opset: int, symbolic: bool
) -> tuple[onnx.ModelProto, dict[str, int]]:
    """The model, and for the symbolic variant the binding of each dim_param."""
    names, declared, inits, bindings = graph_inputs(inputs, symbolic)
    outs = [f"y{k}" for k in range(n_out)]
    node = helper.make_node(op, names, outs, **attrs)
    graph = helper.make_graph([node], "g", declared, [onnx.ValueInfoProto(name=o) for o in outs], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = min(model.ir_version, 10)
    return model, bindings


class InvalidCase(Exception):
    """onnxruntime refused to run the node (e.g. a negative output extent)."""


@dataclass
class Outcome:
    real: list[tuple[int, ...]]
    concrete: list[T.Type]
    symbolic: list[T.Type]
    determined: int  # symbolic dims that were ints or expressions over the inputs' variables
    dims: int


def check_node(
    op: str,
    inputs: Sequence[In | None],
    attrs: dict[str, Any] | None = None,
    n_out: int = 1,
    opset: int = 18,
    exact: bool = True,
) -> Outcome:
    """Run, infer, compare; raise ``AssertionError`` on any wrong claim.

    With ``exact`` every dim of the concrete inference must be an integer; without, an unknown
    extent is accepted there too (for the few cases where runtimes disagree).
    """
    attrs = attrs or {}
    rng = np.random.default_rng(0)
    model, _ = build(op, inputs, attrs, n_out, opset, symbolic=False)
    feeds = {f"x{i}": x.data(rng) for i, x in enumerate(inputs) if x is not None and x.array is None}
    try:
        observed = run(model, feeds)
    except Exception as e:  # the runtime rejects the case: not a valid node, nothing to compare
        raise InvalidCase(str(e)) from None
    real = [tuple(np.asarray(observed[f"y{k}"]).shape) for k in range(n_out)]
    real_types = [helper.np_dtype_to_tensor_dtype(np.asarray(observed[f"y{k}"]).dtype) for k in range(n_out)]

    concrete = infer.infer_model(model)
    bad = [d for d in concrete.diagnostics if d.severity == "error"]
    assert not bad, f"{op} {attrs}: errors on a valid node: {bad}"
    ctypes = [concrete.type_of(f"y{k}") for k in range(n_out)]
    for k, t in enumerate(ctypes):
        assert isinstance(t, T.TensorType), f"{op} {attrs}: output {k} untyped"
        assert t.elem == real_types[k], f"{op} {attrs}: output {k} element type {t}, runtime {real_types[k]}"
        assert t.shape is not None and len(t.shape) == len(real[k]), f"{op} {attrs}: {t} vs runtime {real[k]}"
        for axis, (d, r) in enumerate(zip(t.shape, real[k])):
            if not exact and not isinstance(d, int):
                continue
            assert isinstance(d, int), f"{op} {attrs}: output {k} dim {axis} is {D.to_str(d)} with concrete inputs"
            assert d == r, f"{op} {attrs}: output {k} is {t}, runtime {real[k]} (inputs {_shapes(inputs)})"

    smodel, bindings = build(op, inputs, attrs, n_out, opset, symbolic=True)
    sym = infer.infer_model(smodel)
    stypes = [sym.type_of(f"y{k}") for k in range(n_out)]
    determined = total = 0
    for k, t in enumerate(stypes):
        if not isinstance(t, T.TensorType):
            continue
        assert t.elem in (None, real_types[k]), f"{op} {attrs}: symbolic output {k} element type {t}"
        if t.shape is None:
            continue
        assert len(t.shape) == len(real[k]), f"{op} {attrs}: symbolic {t} vs runtime {real[k]}"
        for axis, (d, r) in enumerate(zip(t.shape, real[k])):
            total += 1
            if d is None or not D.free_names(d) <= set(bindings):
                continue
            determined += 1
            v = D.evaluate(d, bindings)
            assert v == r, (
                f"{op} {attrs}: symbolic output {k} dim {axis} = {D.to_str(d)} = {v} at {bindings}, "
                f"runtime {r} (inputs {_shapes(inputs)})"
            )
    return Outcome(real, ctypes, stypes, determined, total)


def _shapes(inputs: Sequence[In | None]) -> list[Any]:
    return [None if x is None else (x.array.tolist() if x.array is not None else list(x.shape)) for x in inputs]


def const(values: Sequence[Any], dtype: Any = np.int64) -> In:
    return In(array=np.asarray(values, dtype=dtype))


__all__ = ["In", "InvalidCase", "Outcome", "TensorProto", "check_node", "const"]
