"""Random valid shape programs: symbolic inputs, floor and ceiling extents, shape arithmetic.

A program starts from one or two inputs whose dims are ``dim_param`` variables (one to three)
and fixed extents, passes them through operators that make floor and ceiling extents (Conv and
the pools with strides, pads, dilations and ``ceil_mode``; Slice with negative steps; Pad;
Resize with scales), and then grows a DAG of shape computations (Shape, Gather, arithmetic,
float detours, comparisons, reductions, ...) whose results become extents again through
ConstantOfShape, Reshape, Expand, Tile, Range, Slice, Pad, Resize, TopK, Split and OneHot.

Every candidate node is evaluated at once with ``onnx.reference`` at every binding of the
variables (eight: 1, 2, 3, larger odd and even values, and thousands), so the generator knows every
value and keeps only nodes that are valid at all of them. Decisions come from a ``Chooser``:
``generate(seed)`` for campaigns, ``programs()`` for hypothesis (which can then shrink them).
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh
from onnx.reference import ReferenceEvaluator

from .choices import Chooser, DrawChooser, RandomChooser, chance, choice, recent, weighted

OPSETS = (13, 17, 18, 18, 19, 21)
IR_VERSION = {13: 7, 17: 8, 18: 8, 19: 9, 21: 10}
VARIABLES = ("n", "h", "w")
MAX_ELEMENTS = 20_000  # per value, at every binding: programs stay quick to run
MAX_INPUT_ELEMENTS = 24_000
MAX_INT = 1 << 28  # magnitude of the integers kept (no int32 overflow; past float32's exact range)
MAX_NODES = 30  # shape computations per program, at most
INT64_MAX, INT64_MIN, INT32_MAX, INT32_MIN = 2**63 - 1, -(2**63), 2**31 - 1, -(2**31)

INT_TYPES = (TP.INT64, TP.INT32)
NP_OF = {TP.INT64: np.int64, TP.INT32: np.int32, TP.FLOAT: np.float32, TP.DOUBLE: np.float64,
         TP.FLOAT16: np.float16, TP.BOOL: np.bool_}  # fmt: skip


class Reject(Exception):
    """A candidate node is invalid at some binding, or too large."""


@dataclass
class Val:
    """A value of the program with its contents at every binding."""

    name: str
    arrays: list[np.ndarray]

    @property
    def dtype(self) -> np.dtype:
        return self.arrays[0].dtype

    @property
    def rank(self) -> int:
        return self.arrays[0].ndim

    @property
    def elem(self) -> int:
        return h.np_dtype_to_tensor_dtype(self.dtype)

    def extents(self, axis: int) -> list[int]:
        return [a.shape[axis] for a in self.arrays]

    def fixed(self, axis: int) -> int | None:
        e = self.extents(axis)
        return e[0] if len(set(e)) == 1 else None

    @property
    def is_int(self) -> bool:
        return self.dtype.kind in "iu"

    @property
    def is_float(self) -> bool:
        return self.dtype.kind == "f"

    @property
    def is_bool(self) -> bool:
        return self.dtype.kind == "b"

    @property
    def small(self) -> bool:
        """A shape-like value: rank 0 or 1 with at most 8 elements at every binding."""
        return self.rank <= 1 and max(a.size for a in self.arrays) <= 8

    @property
    def scalar(self) -> bool:
        """One element at every binding (rank 0 or shape [1])."""
        return self.rank <= 1 and all(a.size == 1 for a in self.arrays)

    def lo(self) -> float:
        return min(float(a.min()) for a in self.arrays if a.size) if any(a.size for a in self.arrays) else 0.0

    def hi(self) -> float:
        return max(float(a.max()) for a in self.arrays if a.size) if any(a.size for a in self.arrays) else 0.0

    @property
    def data(self) -> bool:
        """A tensor extents can be taken from (rank at least 1, the same at every binding: an If
        whose branches differ in rank gives a value of another rank at some bindings)."""
        return self.rank >= 1 and all(a.ndim == self.rank for a in self.arrays)


@dataclass(frozen=True)
class Declared:
    """A ``dim_param`` the generator put on graph output axes (``places``: value and axis), and at
    which bindings the program makes it true: its places' extents all equal (to the binding of
    the variable, for a name the inputs declare)."""

    name: str
    places: tuple[tuple[str, int], ...]
    holds: tuple[bool, ...]  # one per binding

    @property
    def false_everywhere(self) -> bool:
        """Contradicted at every binding: a contradiction inference may prove and report."""
        return not any(self.holds)


@dataclass
class Program:
    """A generated model with its bindings, input feeds and the reference value of every output."""

    model: onnx.ModelProto
    bindings: list[dict[str, int]]
    feeds: list[dict[str, np.ndarray]]
    expected: dict[str, list[np.ndarray]]
    families: list[str] = field(default_factory=list)
    seed: int | None = None
    declared: list[Declared] = field(default_factory=list)  # names on output axes (``declare``)

    @property
    def ops(self) -> set[str]:
        return {n.op_type for n in self.model.graph.node}

    @property
    def variables(self) -> list[str]:
        return sorted(self.bindings[0])

    def expected_runs(self) -> list[dict[str, np.ndarray]]:
        """The reference value of every node output, one dictionary per binding."""
        return [{n: a[k] for n, a in self.expected.items()} for k in range(len(self.bindings))]


def make_bindings(c: Chooser, variables: Sequence[str]) -> list[dict[str, int]]:
    """Eight bindings: all 1; three rows of a Latin square of 1, 2, 3 (each variable takes every
    small extent, and the variables of one run differ); larger odd, larger even, any up to 64,
    and one of thousands."""
    small = [(2, 3, 1), (3, 1, 2), (1, 2, 3)]
    out = [{v: 1 for v in variables}]
    for row in small:
        out.append({v: row[i % 3] for i, v in enumerate(variables)})
    out.append({v: 2 * c.integer(2, 20) + 1 for v in variables})  # odd, 5..41
    out.append({v: 2 * c.integer(2, 24) for v in variables})  # even, 4..48
    out.append({v: c.integer(4, 64) for v in variables})
    # Past float16's exact integers (2048): a run where shape values leave every narrow float's
    # exact range (inputs too large for it are shrunk, see ``make_inputs``).
    out.append({v: c.integer(2000, 4500) for v in variables})
    return out


_STRIDED = ("Conv", "MaxPool", "AveragePool", "LpPool", "Resize")

# Names a model may give an input axis that look like an expression over another variable, or
# like that variable itself (issue 38): (the name, the value it spells, or None for none).
ALIASES: tuple[tuple[str, Callable[[int], int] | None], ...] = (
    ("{v}+1", lambda n: n + 1),
    ("2*{v}", lambda n: 2 * n),
    ("{v} + {v}", lambda n: 2 * n),
    ("{v}*0", None),
    ("{v}-{v}", None),
    ("{v}+0", None),
    ("`{v}`", None),
    ("({v})", None),
    ("-{v}", None),
    ("{v} - 1", None),
    ("{wide}", None),  # the variable's letter in fullwidth, which Python's parser reads as it
    ("\ufb01", None),  # the ligature fi
)


def add_alias(c: Chooser, variables: list[str], bindings: list[dict[str, int]]) -> None:
    """A fourth variable named like an expression over (or a spelling of) the first: at each
    binding it takes the value the name spells, or one of its own, so that a reading of the name
    is an assumption some runs keep and some break."""
    template, spelled = choice(c, ALIASES)
    v = variables[0]
    name = template.format(v=v, wide="".join(chr(ord(ch) - ord("a") + 0xFF41) for ch in v))
    variables.append(name)
    own = make_bindings(c, [name])
    for b, o in zip(bindings, own):
        value = spelled(b[v]) if spelled is not None and chance(c, 60) else o[name]
        b[name] = max(1, value)


class Generator:
    """Grows one program; every emitter either adds valid nodes or raises ``Reject``."""

    def __init__(self, c: Chooser, max_nodes: int = MAX_NODES, runner: Any = None):
        self.c = c
        self.runner = runner
        self.opset = choice(c, OPSETS)
        self.variables = list(VARIABLES[: c.integer(1, 3)])
        self.bindings = make_bindings(c, self.variables)
        if chance(c, 15):
            add_alias(c, self.variables, self.bindings)
        self.k = len(self.bindings)
        self.np_rng = np.random.default_rng(c.integer(0, 2**31))
        self.max_nodes = max_nodes
        self.inputs: list[onnx.ValueInfoProto] = []
        self.feeds: list[dict[str, np.ndarray]] = [{} for _ in range(self.k)]
        self.nodes: list[onnx.NodeProto] = []
        self.consts: dict[str, np.ndarray] = {}
        self.const_nodes: set[str] = set()
        self.pool: list[Val] = []
        self.by_name: dict[str, Val] = {}
        self.counter = 0
        self.families: list[str] = []

    # -- names, constants, inputs --------------------------------------------------------------

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}_{self.counter}"

    def const(self, values: Any, dtype: Any = np.int64) -> str:
        """An initializer (or, one time in four, a Constant node) holding ``values``."""
        arr = np.asarray(values, dtype=dtype)
        name = self.fresh("c")
        self.consts[name] = arr
        if chance(self.c, 25):
            self.const_nodes.add(name)
        return name

    def arrays_of(self, name: str) -> list[np.ndarray]:
        if name in self.by_name:
            return self.by_name[name].arrays
        return [self.consts[name]] * self.k

    def add_input(self, dims: list[int | str], elem: int) -> Val:
        name = self.fresh("in")
        self.inputs.append(h.make_tensor_value_info(name, elem, dims))
        arrays = []
        for k, b in enumerate(self.bindings):
            shape = [b[d] if isinstance(d, str) else d for d in dims]
            if elem == TP.INT64:
                arr = self.np_rng.integers(0, 6, size=shape).astype(np.int64)
            else:
                arr = self.np_rng.standard_normal(shape).astype(np.float32)
            self.feeds[k][name] = arr
            arrays.append(arr)
        v = Val(name, arrays)
        self.pool.append(v)
        self.by_name[name] = v
        return v

    def make_inputs(self) -> None:
        c = self.c
        shapes: list[list[int | str]] = []
        for _ in range(c.integer(1, 2)):
            kind = choice(c, ("image", "sequence", "volume", "flat", "image"))
            var = lambda: choice(c, self.variables)
            if kind == "image":
                dims: list[int | str] = [
                    choice(c, (1, var())),
                    choice(c, (1, 2, 3, 4)),
                    var(),
                    choice(c, (var(), 5, 7, 8)),
                ]
            elif kind == "volume":
                dims = [choice(c, (1, 2, var())), choice(c, (1, 2, 3)), var()]
            elif kind == "sequence":
                dims = [var(), choice(c, (var(), 3, 6)), choice(c, (4, 8, 6))]
            else:
                dims = [choice(c, (var(), 6))] * 1 + ([var()] if chance(c, 50) else [])
            shapes.append(dims)
        for v in self.variables:  # every variable appears in some input
            counts = Counter(d for s in shapes for d in s if isinstance(d, str))
            if counts[v]:
                continue
            spots = [
                (i, a)
                for i, s in enumerate(shapes)
                for a in reversed(range(len(s)))
                if not (a == 1 and len(s) >= 3) and (isinstance(s[a], int) or counts[s[a]] > 1)
            ]
            short = [s for s in shapes if len(s) < 4]
            if spots:
                shapes[spots[0][0]][spots[0][1]] = v
            elif short:
                short[0].append(v)
            else:
                shapes.append([v])
        for b in self.bindings[4:]:
            for s in shapes:
                while np.prod([b[d] if isinstance(d, str) else d for d in s]) > MAX_INPUT_ELEMENTS:
                    big = max((d for d in s if isinstance(d, str)), key=lambda d: b[d])
                    b[big] = max(4 + b[big] % 2, b[big] // 2 // 2 * 2 + b[big] % 2)  # halved, parity kept
        for i, s in enumerate(shapes):
            elem = TP.INT64 if i == 1 and chance(c, 40) else TP.FLOAT
            self.add_input(s, elem)

    # -- evaluating candidates -----------------------------------------------------------------

    def node(self, op: str, inputs: Sequence[str], n_out: int = 1, **attrs: Any) -> onnx.NodeProto:
        outs = [self.fresh(op.lower()) for _ in range(n_out)]
        return h.make_node(op, list(inputs), outs, **{k: v for k, v in attrs.items() if v is not None})

    def emit(self, node: onnx.NodeProto) -> list[Val]:
        """Evaluate ``node`` at every binding; keep it and return its outputs, or ``Reject``."""
        ins = [self.arrays_of(i) if i else None for i in node.input]
        _precheck(node, ins)
        outs = _evaluate(node, ins, self.opset, self.k, self.runner)
        vals = []
        for name, arrays in zip(node.output, outs):
            for a in arrays:
                _postcheck(node, a)
            vals.append(Val(name, arrays))
        if node.op_type in _STRIDED and any(a.size == 0 for v in vals for a in v.arrays):
            raise Reject("empty output of a strided operator")  # onnx.reference and onnxruntime differ
        if node.op_type == "Resize" and len(node.input) > 3 and node.input[3] not in self.consts:
            self._onnx_propagates(node)
        self.nodes.append(node)
        for v in vals:
            self.pool.append(v)
            self.by_name[v.name] = v
        return vals

    def _onnx_propagates(self, node: onnx.NodeProto) -> None:
        """``Reject`` a node whose computed input onnx's data propagation (which onnxruntime runs
        when it loads a model) gets wrong: Resize sizes made through Shape of a Shape and Max
        propagate as an empty shape, and onnxruntime refuses the valid program."""
        used = {i for n in [*self.nodes, node] for i in n.input if i}
        inits = [nh.from_array(a, k) for k, a in self.consts.items() if k in used]
        graph = h.make_graph([*self.nodes, node], "g", self.inputs, [], inits)
        model = h.make_model(graph, opset_imports=[h.make_opsetid("", self.opset)])
        model.ir_version = IR_VERSION[self.opset]
        try:
            onnx.shape_inference.infer_shapes(model, strict_mode=True, data_prop=True)
        except onnx.shape_inference.InferenceError as e:
            raise Reject(f"onnx's data propagation refuses it: {e}") from None

    def op(self, op: str, inputs: Sequence[str], **attrs: Any) -> Val:
        return self.emit(self.node(op, inputs, **attrs))[0]

    # -- picking values ------------------------------------------------------------------------

    def pick(self, pred: Callable[[Val], bool]) -> Val:
        cands = [v for v in self.pool if pred(v)]
        if not cands:
            raise Reject("no operand")
        return recent(self.c, cands)

    def data(self, pred: Callable[[Val], bool] = lambda v: True) -> Val:
        """A tensor of rank >= 1, not empty at every binding, that ``pred`` accepts."""
        return self.pick(lambda v: v.data and max(a.size for a in v.arrays) > 0 and pred(v))

    def float_data(self, ranks: Sequence[int]) -> Val:
        return self.data(lambda v: v.dtype == np.float32 and v.rank in ranks)

    def dim(self, x: Val | None = None, as_vector: bool | None = None) -> Val:
        """One extent of a tensor as an int64 scalar (0-D) or a [1] vector, the exporters' way."""
        c = self.c
        x = x or self.data()
        axis = c.integer(0, x.rank - 1)
        as_vector = chance(c, 35) if as_vector is None else as_vector
        if self.opset >= 15 and chance(c, 25):
            shape = self.op("Shape", [x.name], start=axis - x.rank * c.integer(0, 1), end=axis + 1)
            return shape if as_vector else self.op("Squeeze", [shape.name, self.const([0])])
        shape = self.op("Shape", [x.name])
        idx = axis - x.rank * c.integer(0, 1)
        if as_vector:
            if chance(c, 50):
                return self.op("Gather", [shape.name, self.const([idx])], axis=0)
            end = idx + 1 if idx != -1 else INT64_MAX
            return self.op("Slice", [shape.name, self.const([idx]), self.const([end])])
        return self.op("Gather", [shape.name, self.const(idx)], axis=0)

    def int_scalar(self, reuse: int = 60) -> Val:
        """An integer scalar of the program (reused, or a fresh extent)."""
        if chance(self.c, reuse):
            try:
                return self.pick(lambda v: v.is_int and v.scalar)
            except Reject:
                pass
        return self.dim()

    def int_small(self) -> Val:
        """An integer scalar or short vector of the program."""
        if chance(self.c, 60):
            try:
                return self.pick(lambda v: v.is_int and v.small)
            except Reject:
                pass
        if chance(self.c, 50):
            return self.dim()
        x = self.data()
        if self.opset >= 15 and chance(self.c, 50):
            return self.op("Shape", [x.name], start=self.c.integer(-x.rank, x.rank), end=self.c.integer(-x.rank, 6))
        return self.op("Shape", [x.name])

    def as_vector(self, v: Val) -> Val:
        if v.rank == 1:
            return v
        return self.op("Unsqueeze", [v.name, self.const([0])])

    def as_scalar(self, v: Val) -> Val:
        if v.rank == 0:
            return v
        if chance(self.c, 50):
            return self.op("Squeeze", [v.name, self.const([0])])
        return self.op("Squeeze", [v.name]) if chance(self.c, 50) else self.op("ReduceMax", [v.name], keepdims=0)

    def cast(self, v: Val, to: int) -> Val:
        return v if v.elem == to else self.op("Cast", [v.name], to=to)

    def vector_of(self, parts: list[Val]) -> Val:
        """Concatenate int64 scalars or vectors into one vector."""
        vecs = [self.as_vector(self.cast(p, TP.INT64)) for p in parts]
        if len(vecs) == 1:
            return vecs[0]
        return self.op("Concat", [v.name for v in vecs], axis=choice(self.c, (0, -1)))

    def nonneg(self, v: Val, cap: int = 12) -> Val:
        """``v`` made a small non-negative integer the way exporters clamp: Max/Min/Abs/Mod."""
        c = self.c
        how = choice(c, ("as is", "abs", "clip", "mod"))
        if how == "abs" or (how == "as is" and v.lo() < 0):
            v = self.op("Abs", [v.name])
        if how == "clip" or v.hi() > cap:
            if chance(c, 50):
                v = self.op("Min", [v.name, self.const(cap, v.dtype)])
                v = self.op("Max", [v.name, self.const(0, v.dtype)])
            else:
                v = self.op("Mod", [v.name, self.const(choice(c, (2, 3, 5, cap)), v.dtype)], fmod=0)
        return v

    # -- extent makers -------------------------------------------------------------------------

    def e_conv(self) -> None:
        c = self.c
        x = self.float_data((3, 4))
        ch = x.fixed(1)
        if ch is None:
            raise Reject("channels vary")
        nd = x.rank - 2
        group = choice(c, (1, 1, ch)) if ch > 1 else 1
        m = group * c.integer(1, 2)
        k = [c.integer(1, 4) for _ in range(nd)]
        attrs: dict[str, Any] = {"strides": [c.integer(1, 3) for _ in range(nd)] if chance(c, 80) else None}
        auto = weighted(c, (("NOTSET", 6), ("SAME_UPPER", 1), ("SAME_LOWER", 1), ("VALID", 1)))
        if not auto.startswith("SAME") and chance(c, 30):
            attrs["dilations"] = [c.integer(1, 2) for _ in range(nd)]  # onnxruntime: not with SAME_*
        if auto == "NOTSET":
            attrs["pads"] = [c.integer(0, kk) for kk in k] + [c.integer(0, kk) for kk in k]
        else:
            attrs["auto_pad"] = auto
        if chance(c, 70):
            attrs["kernel_shape"] = k
        if group > 1:
            attrs["group"] = group
        w = self.np_rng.standard_normal((m, ch // group, *k)).astype(np.float32)
        ins = [x.name, self.const(w, np.float32)]
        if chance(c, 30):
            ins.append(self.const(np.zeros(m), np.float32))
        self.op("Conv", ins, **attrs)

    def e_pool(self) -> None:
        c = self.c
        x = self.float_data((3, 4))
        nd = x.rank - 2
        op = choice(c, ("MaxPool", "AveragePool", "LpPool"))
        k = [c.integer(1, 4) for _ in range(nd)]
        attrs: dict[str, Any] = {"kernel_shape": k}
        if chance(c, 80):
            attrs["strides"] = [c.integer(1, 3) for _ in range(nd)]
        dil_ok = op == "MaxPool" or (op == "AveragePool" and self.opset >= 19) or (op == "LpPool" and self.opset >= 18)
        if dil_ok and chance(c, 30):
            attrs["dilations"] = [c.integer(1, 2) for _ in range(nd)]
        auto = weighted(c, (("NOTSET", 6), ("SAME_UPPER", 1), ("SAME_LOWER", 1), ("VALID", 1)))
        if auto == "NOTSET":
            # onnxruntime wants each pad smaller than the kernel
            attrs["pads"] = [c.integer(0, kk - 1) for kk in k] + [c.integer(0, kk - 1) for kk in k]
            if (op != "LpPool" or self.opset >= 18) and chance(c, 50):
                attrs["ceil_mode"] = 1
        else:
            attrs["auto_pad"] = auto
        if op == "AveragePool" and chance(c, 40):
            attrs["count_include_pad"] = 1
        if op == "LpPool":
            attrs["p"] = choice(c, (2, 1, 3))
        n_out = 2 if op == "MaxPool" and chance(c, 20) else 1
        self.emit(self.node(op, [x.name], n_out, **attrs))

    def e_conv_transpose(self) -> None:
        c = self.c
        x = self.float_data((3, 4))
        ch = x.fixed(1)
        if ch is None:
            raise Reject("channels vary")
        nd = x.rank - 2
        k = [c.integer(1, 4) for _ in range(nd)]
        s = [c.integer(1, 3) for _ in range(nd)]
        attrs: dict[str, Any] = {"strides": s, "kernel_shape": k if chance(c, 60) else None}
        if chance(c, 25):
            attrs["dilations"] = [c.integer(1, 2) for _ in range(nd)]
        auto = weighted(c, (("NOTSET", 6), ("SAME_UPPER", 1), ("SAME_LOWER", 1), ("VALID", 1)))
        if auto == "NOTSET":
            attrs["pads"] = [c.integer(0, kk - 1) for kk in k] * 2
        else:
            attrs["auto_pad"] = auto
        if chance(c, 30):
            attrs["output_padding"] = [c.integer(0, ss - 1) for ss in s]
        w = self.np_rng.standard_normal((ch, c.integer(1, 2), *k)).astype(np.float32)
        self.op("ConvTranspose", [x.name, self.const(w, np.float32)], **attrs)

    def _slice_bound(self, step: int, start: bool) -> int:
        c = self.c
        if step > 0:
            pool = (0, 1, 2, -1, -2, -3, 4) if start else (1, 2, 3, -1, -2, 100, INT64_MAX, INT32_MAX)
        else:
            pool = (-1, -2, 0, 1, 3, INT64_MAX, INT32_MAX) if start else (0, -3, -4, 1, INT64_MIN, INT32_MIN, -100)
        return choice(c, pool)

    def e_slice_data(self) -> None:
        c = self.c
        x = self.data()
        axes = sorted({c.integer(0, x.rank - 1) for _ in range(c.integer(1, min(2, x.rank)))})
        steps = [choice(c, (1, 2, -1, 3, -2)) for _ in axes]
        starts = [self._slice_bound(s, True) for s in steps]
        ends = [self._slice_bound(s, False) for s in steps]
        ins = [x.name, self.const(starts), self.const(ends)]
        if chance(c, 85) or any(a != i for i, a in enumerate(axes)):
            ins.append(self.const([a - x.rank * c.integer(0, 1) for a in axes]))
            if chance(c, 85) or any(s != 1 for s in steps):
                ins.append(self.const(steps))
        self.op("Slice", ins)

    def e_pad_data(self) -> None:
        c = self.c
        x = self.data(lambda v: v.rank <= 4)
        mode = weighted(c, (("constant", 4), ("edge", 1), ("reflect", 1), ("wrap", 1 if self.opset >= 19 else 0)))
        lo = -2 if mode == "constant" else 0
        if self.opset >= 18 and chance(c, 40):
            axes = sorted({c.integer(0, x.rank - 1) for _ in range(c.integer(1, x.rank))})
            pads = [c.integer(lo, 3) for _ in axes] * 2
            ins = [x.name, self.const(pads), "", self.const([a - x.rank * c.integer(0, 1) for a in axes])]
        else:
            ins = [x.name, self.const([c.integer(lo, 3) for _ in range(2 * x.rank)])]
            if chance(c, 30) and x.is_float:
                ins.append(self.const(1.5, x.dtype))
        self.op("Pad", ins, mode=mode)

    def _resize_attrs(self, sizes: bool, rank: int) -> dict[str, Any]:
        c = self.c
        modes = ["half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel", "tf_crop_and_resize"]
        if self.opset >= 19:
            modes.append("half_pixel_symmetric")
        attrs = {
            "mode": choice(c, ("nearest", "linear", "cubic") if rank == 4 else ("nearest", "linear")),
            "coordinate_transformation_mode": choice(c, modes),
            "nearest_mode": choice(c, ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")),
        }
        if sizes and self.opset >= 18 and chance(c, 50):
            attrs["keep_aspect_ratio_policy"] = choice(c, ("stretch", "not_larger", "not_smaller"))
        if self.opset >= 18 and attrs["mode"] != "nearest" and chance(c, 20):
            attrs["antialias"] = 1
        return attrs

    def _resize(self, x: Val, scales: str, sizes: str, axes: list[int] | None, attrs: dict[str, Any]) -> None:
        n = len(axes) if axes is not None else x.rank
        roi = ""
        if attrs["coordinate_transformation_mode"] == "tf_crop_and_resize":
            starts = [choice(self.c, (0.0, 0.0, 0.1, 0.25)) for _ in range(n)]
            ends = [choice(self.c, (1.0, 1.0, 0.8, 0.5, 0.9)) for _ in range(n)]
            roi = self.const(starts + ends, np.float32)
        ins = [x.name, roi, scales, sizes]
        if axes is not None:
            attrs = dict(attrs, axes=axes)
        while ins and ins[-1] == "":
            ins.pop()
        self.op("Resize", ins, **attrs)

    def e_resize_scales(self) -> None:
        c = self.c
        x = self.float_data((3, 4))
        attrs = self._resize_attrs(sizes=False, rank=x.rank)
        table = (2.0, 0.5, 1.5, 3.0, 0.75, 1.0, 0.6, 1.25, 0.3, 0.7, 1.7, 2.5, 0.25, 1 / 3)
        spatial = list(range(2, x.rank))
        if self.opset >= 18 and chance(c, 30):
            axes = [a - x.rank * c.integer(0, 1) for a in spatial]
            scales = [choice(c, table) for _ in axes]
        else:
            axes = None
            scales = [1.0, 1.0] + [choice(c, table) for _ in spatial]
        self._resize(x, self.const(scales, np.float32), "", axes, attrs)

    def e_data_misc(self) -> None:
        """Transpose, Flatten, Concat, broadcasting Add, Unsqueeze: extents moved and combined."""
        c = self.c
        x = self.data()
        what = choice(c, ("transpose", "flatten", "concat", "add", "unsqueeze", "squeeze"))
        if what == "transpose":
            perm = list(self.np_rng.permutation(x.rank))
            self.op("Transpose", [x.name], perm=perm)
        elif what == "flatten":
            self.op("Flatten", [x.name], axis=c.integer(-x.rank, x.rank))
        elif what == "concat":
            axis = c.integer(0, x.rank - 1)
            others = [
                v
                for v in self.pool
                if v.rank == x.rank
                and v.dtype == x.dtype
                and all(
                    v.arrays[k].shape[:axis] + v.arrays[k].shape[axis + 1 :]
                    == x.arrays[k].shape[:axis] + x.arrays[k].shape[axis + 1 :]
                    for k in range(self.k)
                )
            ]
            y = recent(c, others)
            self.op("Concat", [x.name, y.name], axis=axis - x.rank * c.integer(0, 1))
        elif what == "add":
            if x.is_bool:
                raise Reject("no arithmetic on bool")  # onnx.reference takes it, onnxruntime not
            y = self.pick(lambda v: v.dtype == x.dtype and _broadcastable(v, x))
            self.op(choice(c, ("Add", "Mul", "Max")), [x.name, y.name])
        elif what == "squeeze":
            # without axes: every extent 1 goes, so the rank can differ between bindings
            self.op("Squeeze", [x.name])
        else:
            self.op("Unsqueeze", [x.name, self.const([c.integer(-x.rank - 1, x.rank)])])

    # -- shape sources ---------------------------------------------------------------------------

    def e_shape(self) -> None:
        c = self.c
        x = self.data()
        if self.opset >= 15 and chance(c, 40):
            attrs = {"start": c.integer(-x.rank - 1, x.rank)} if chance(c, 70) else {}
            if chance(c, 60):
                attrs["end"] = c.integer(-x.rank, x.rank + 1)
            self.op("Shape", [x.name], **attrs)
        elif chance(c, 30):
            self.op("Size", [x.name])
        else:
            self.dim(x)

    def e_nonzero(self) -> None:
        """Data-dependent extents: NonZero, Compress, Unique, counts; some are 0 at run time."""
        c = self.c
        x = self.data(lambda v: (v.is_float or v.is_int) and v.rank <= 3)
        thr = choice(c, (0.0, 0.5, 1.0, 2.5, 4.0, 10.0)) if x.is_float else choice(c, (2, 0, 4, 9))
        cond = self.op(choice(c, ("Greater", "Less")), [x.name, self.const(thr, x.dtype)])
        what = choice(c, ("nonzero", "count", "compress", "unique"))
        if what == "nonzero":
            nz = self.op("NonZero", [cond.name])
            if chance(c, 60):
                self.dim(nz)
        elif what == "count":
            n = self.op("Cast", [cond.name], to=TP.INT64)
            self.op("ReduceSum", [n.name], keepdims=c.integer(0, 1))
        elif what == "compress":
            if cond.rank != 1:
                cond = self.op("Reshape", [cond.name, self.const([-1])])
            y = self.pick(lambda v: v.data and v.rank >= 1)
            axis = choice(c, [a for a in range(y.rank)] + [None])
            if axis is not None and any(y.arrays[k].shape[axis] < cond.arrays[k].size for k in range(self.k)):
                raise Reject("condition longer than the axis")
            if axis is None and any(y.arrays[k].size < cond.arrays[k].size for k in range(self.k)):
                raise Reject("condition longer than the tensor")
            self.op("Compress", [y.name, cond.name], axis=axis)
        else:
            src = self.cast(x, TP.INT64) if x.is_int else self.op("Floor", [x.name])  # no int32 kernel
            attrs = {"axis": c.integer(0, src.rank - 1)} if chance(c, 30) else {}
            self.emit(self.node("Unique", [src.name], 4, sorted=c.integer(0, 1), **attrs))

    def e_fresh(self) -> None:
        """A data-dependent count (0 at some runs), used at once in arithmetic and as an extent."""
        c = self.c
        x = self.data(lambda v: v.is_float and v.rank <= 3)
        cond = self.op("Greater", [x.name, self.const(choice(c, (0.5, 1.0, 2.0, 0.0, 3.0)), np.float32)])
        if chance(c, 50):
            nz = self.op("NonZero", [cond.name])
            n = (
                self.dim(nz)
                if chance(c, 40)
                else self.op("Gather", [self.op("Shape", [nz.name]).name, self.const(1)], axis=0)
            )
        else:
            n = self.op("ReduceSum", [self.op("Cast", [cond.name], to=TP.INT64).name], keepdims=0)
        op = choice(c, ("Max", "Sub", "Min", "Add", "Mul", "Div", "Mod", "Where", "Identity"))
        if op == "Where":
            zero = self.op("Equal", [n.name, self.const(0)])
            n = self.op("Where", [zero.name, self.const(1), n.name])
        elif op == "Identity":
            pass
        else:
            k = choice(c, (1, 2, 3))
            other = self.int_scalar() if chance(c, 30) else None
            b = self.cast(other, n.elem).name if other is not None and op != "Div" else self.const(k, n.dtype)
            n = self.op(op, [n.name, b], **({"fmod": 0} if op == "Mod" else {}))
        sink = choice(c, ("constant_of_shape", "range", "reshape", "tile"))
        if sink == "range":
            self.op("Range", [self.const(0), self.as_scalar(n).name, self.const(1)])
        elif sink == "reshape":
            y = self.data()
            target = self.vector_of([self.nonneg(n, 64), self.op("Identity", [self.const([-1])])])
            self.op("Reshape", [y.name, target.name])
        elif sink == "tile":
            y = self.data(lambda v: v.rank == 1)
            self.op("Tile", [y.name, self.vector_of([self.nonneg(n, 4)]).name])
        else:
            self.op("ConstantOfShape", [self.vector_of([self.nonneg(n, 64)]).name])

    # -- integer arithmetic ------------------------------------------------------------------------

    def e_int_binary(self) -> None:
        c = self.c
        a = self.int_small()
        op = weighted(
            c, (("Add", 3), ("Sub", 3), ("Mul", 3), ("Div", 4), ("Mod", 2), ("Min", 2), ("Max", 2), ("Pow", 1))
        )
        if op == "Pow":
            b = self.const(choice(c, (2, 0, 1, 3)), a.dtype)
        elif chance(c, 45):
            other = self.pick(lambda v: v.is_int and v.small and v.dtype == a.dtype and _broadcastable(v, a))
            if chance(c, 40):  # an operand that is negative or zero at some bindings
                other = self.op("Sub", [other.name, self.const(choice(c, (2, 3, 5)), other.dtype)])
            b = other.name
        else:
            b = self.const(choice(c, (2, 1, 3, 4, 8, 16, 32, -1, -2, -3, 5, 7, 1000, 2049, -7)), a.dtype)
        ins = [a.name, b] if chance(c, 75) else [b, a.name]
        if op in ("Min", "Max") and chance(c, 25):
            ins.append(self.const(choice(c, (1, 0, 4)), a.dtype))
        attrs = {"fmod": c.integer(0, 1)} if op == "Mod" else {}
        self.op(op, ins, **attrs)

    def e_int_unary(self) -> None:
        c = self.c
        a = self.int_small()
        op = choice(c, ("Neg", "Abs", "Identity", "Cast", "Sign", "Bool"))
        if op == "Cast":
            self.op("Cast", [a.name], to=TP.INT32 if a.elem == TP.INT64 else TP.INT64)
        elif op == "Bool":  # through bool and back: min(|x|, 1)
            self.op("Cast", [self.op("Cast", [a.name], to=TP.BOOL).name], to=a.elem)
        else:
            self.op(op, [a.name])

    # -- float detours -----------------------------------------------------------------------------

    def _float_type(self) -> int:
        return weighted(self.c, ((TP.FLOAT, 4), (TP.DOUBLE, 2), (TP.FLOAT16, 2)))

    def _fconst(self, value: float, like: Val) -> str:
        return self.const(value, like.dtype)

    def _back_to_int(self, f: Val) -> Val:
        return self.cast(f, choice(self.c, (TP.INT64, TP.INT64, TP.INT32)))

    def e_float_chain(self) -> None:
        """Cast to a float type, one to three float operations, often Cast back to an integer."""
        c = self.c
        v = self.int_small()
        if chance(c, 25):  # past 2048 float16 rounds integers; past 2^24 float32 does
            big = choice(c, (37, 100, 1000, 4099, 65537, 262147, 1000003))
            v = self.op("Mul", [v.name, self.int_scalar().name if chance(c, 50) else self.const(big, v.dtype)])
        f = self.cast(v, self._float_type())
        for _ in range(c.integer(1, 3)):
            op = weighted(
                c,
                (
                    ("Div", 4),
                    ("Mul", 3),
                    ("Add", 2),
                    ("Sub", 1),
                    ("Floor", 3),
                    ("Ceil", 3),
                    ("Round", 2),
                    ("Sqrt", 1),
                    ("Reciprocal", 1),
                    ("Pow", 1),
                    ("Neg", 1),
                    ("Abs", 1),
                    ("Max", 1),
                    ("Min", 1),
                    ("DivVar", 2),
                    ("Mod", 1),
                ),
            )
            if op == "Div":
                k = choice(c, (2.0, 32.0, 3.0, 4.0, 8.0, 16.0, 0.5, 1.5, 2.5, 0.1, 0.3, 10.0, 7.0, -2.0))
                f = self.op("Div", [f.name, self._fconst(k, f)])
            elif op == "Mul":
                k = choice(c, (0.5, 2.0, 0.25, 1.5, 0.75, 1 / 3, 1.25, 0.1, 0.3, 0.7, 1.1, 0.2, -0.5))
                f = self.op("Mul", [f.name, self._fconst(k, f)])
            elif op in ("Add", "Sub"):
                f = self.op(op, [f.name, self._fconst(choice(c, (0.5, 1.0, -1.0, -0.5, 2.0)), f)])
            elif op in ("Max", "Min"):
                f = self.op(op, [f.name, self._fconst(choice(c, (1.0, 0.0, 4.5)), f)])
            elif op == "Pow":
                f = self.op("Pow", [f.name, self._fconst(choice(c, (2.0, 0.5)), f)])
            elif op == "Mod":
                f = self.op("Mod", [f.name, self._fconst(choice(c, (2.0, 3.0, 1.5)), f)], fmod=1)
            elif op == "DivVar":
                g = self.cast(self.int_scalar(), f.elem)
                f = self.op("Div", [f.name, g.name] if chance(c, 70) else [g.name, f.name])
            else:
                f = self.op(op, [f.name])
        if chance(c, 80):
            f = self._back_to_int(f)

    def e_ceil_multiple(self) -> None:
        """``ceil(d / m) * m`` in float, as exporters pad to a multiple; often Pad to it."""
        c = self.c
        x = self.data()
        d = self.dim(x, as_vector=False) if chance(c, 70) else self.int_scalar()
        m = choice(c, (32, 8, 2, 4, 16, 3, 64))
        f = self.cast(d, self._float_type())
        how = choice(c, ("div", "mul"))
        if how == "div":
            q = self.op("Div", [f.name, self._fconst(float(m), f)])
        else:
            q = self.op("Mul", [f.name, self._fconst(1.0 / m, f)])
        q = self.op(choice(c, ("Ceil", "Ceil", "Floor")), [q.name])
        if chance(c, 50):
            r = self.op("Mul", [q.name, self._fconst(float(m), q)])
            r = self._back_to_int(r)
        else:
            r = self.op("Mul", [self.cast(q, TP.INT64).name, self.const(m)])
        if chance(c, 60):
            # pad the axis up to the multiple: extent ceil(d/m)*m when d is that axis's extent
            extra = self.op("Sub", [self.cast(r, TP.INT64).name, self.cast(d, TP.INT64).name])
            if extra.lo() < 0:
                raise Reject("negative pad")
            axis = c.integer(0, x.rank - 1)
            parts = []
            for i in range(2 * x.rank):
                parts.append(extra if i == x.rank + axis else self.op("Identity", [self.const(0)]))
            pads = self.vector_of(parts)
            self.op("Pad", [x.name, pads.name])

    def e_tf_same(self) -> None:
        """TensorFlow's "same" padding computed at run time, then a VALID Conv or pool."""
        c = self.c
        x = self.float_data((3, 4))
        nd = x.rank - 2
        k = [c.integer(1, 5) for _ in range(nd)]
        s = [c.integer(1, 3) for _ in range(nd)]
        dil = [c.integer(1, 2) for _ in range(nd)] if chance(c, 25) else [1] * nd
        shape = self.op("Shape", [x.name])
        begins, ends = [], []
        for i in range(nd):
            d = self.op("Gather", [shape.name, self.const(2 + i)], axis=0)
            if chance(c, 60):
                f = self.cast(d, self._float_type())
                out = self.op("Ceil", [self.op("Div", [f.name, self._fconst(float(s[i]), f)]).name])
                out = self.cast(out, TP.INT64)
            else:
                out = self.op("Div", [self.op("Add", [d.name, self.const(s[i] - 1)]).name, self.const(s[i])])
            need = self.op(
                "Sub",
                [
                    self.op(
                        "Add",
                        [
                            self.op("Mul", [self.op("Sub", [out.name, self.const(1)]).name, self.const(s[i])]).name,
                            self.const((k[i] - 1) * dil[i] + 1),
                        ],
                    ).name,
                    d.name,
                ],
            )
            total = self.op("Max", [need.name, self.const(0)])
            if chance(c, 50):
                beg = self.op("Div", [total.name, self.const(2)])
            else:
                half = self.op("Mul", [self.cast(total, TP.FLOAT).name, self.const(0.5, np.float32)])
                beg = self.cast(self.op("Floor", [half.name]), TP.INT64)
            end = self.op("Sub", [total.name, beg.name])
            begins.append(beg)
            ends.append(end)
        zero = self.op("Identity", [self.const(0)])
        pads = self.vector_of([zero, zero, *begins, zero, zero, *ends])
        padded = self.op("Pad", [x.name, pads.name])
        op = choice(c, ("Conv", "MaxPool", "AveragePool"))
        attrs: dict[str, Any] = {"kernel_shape": k, "strides": s}
        if op == "Conv":
            ch = x.fixed(1)
            if ch is None:
                raise Reject("channels vary")
            w = self.np_rng.standard_normal((2, ch, *k)).astype(np.float32)
            self.op("Conv", [padded.name, self.const(w, np.float32)], dilations=dil, **attrs)
        else:
            if op == "MaxPool":
                attrs["dilations"] = dil
            self.op(op, [padded.name], **attrs)

    def e_half(self) -> None:
        """``floor(d * 0.5)`` and its cousins (truncating Cast, Round), used as an extent or index."""
        c = self.c
        d = self.int_scalar()
        f = self.cast(d, self._float_type())
        f = self.op("Mul", [f.name, self._fconst(choice(c, (0.5, 0.5, 0.25, 1.5)), f)])
        how = choice(c, ("floor", "trunc", "round", "ceil"))
        if how != "trunc":
            f = self.op(how.capitalize(), [f.name])
        self._back_to_int(f)

    def e_narrow_cast(self) -> None:
        """An integer through bfloat16 or a float8 type and back (onnxruntime has no arithmetic
        kernels for them on the CPU): exact only within the type's integers (bfloat16 to 256,
        float8 e4m3 to 16), rounded or saturated past them."""
        c = self.c
        types = [TP.BFLOAT16] + ([TP.FLOAT8E4M3FN, TP.FLOAT8E5M2] if self.opset >= 19 else [])
        v = self.int_small()
        if chance(c, 50):
            v = self.op("Mul", [v.name, self.const(choice(c, (3, 17, 129, 1000)), v.dtype)])
        narrow = self.cast(v, choice(c, types))
        back = self._back_to_int(narrow)
        self.pool.remove(narrow)  # nothing computes on it: no kernel would run
        if back.hi() > MAX_INT:
            raise Reject("integer too large")

    def e_roundtrip(self) -> None:
        c = self.c
        v = self.int_small()
        f = self.cast(v, self._float_type())
        if chance(c, 40):
            f = self.cast(f, self._float_type())
        self._back_to_int(f)

    # -- logic, vectors, reductions --------------------------------------------------------------

    def e_compare_where(self) -> None:
        c = self.c
        a = self.int_small() if chance(c, 70) else self.pick(lambda v: v.is_float and v.small)
        if chance(c, 50):
            b = self.pick(lambda v: v.dtype == a.dtype and v.small and _broadcastable(v, a)).name
        else:
            b = self.const(choice(c, (1, 2, 0, 4, 8)), a.dtype)
        op = choice(c, ("Less", "Greater", "Equal", "LessOrEqual", "GreaterOrEqual"))
        cond = self.op(op, [a.name, b])
        if chance(c, 25):
            cond = self.op("Not", [cond.name])
        if chance(c, 15):
            other = self.pick(lambda v: v.is_bool and v.small and _broadcastable(v, cond))
            cond = self.op(choice(c, ("And", "Or", "Xor")), [cond.name, other.name])
        x = self.pick(lambda v: v.small and (v.is_int or v.is_float) and _broadcastable(v, cond))
        y = self.pick(lambda v: v.dtype == x.dtype and v.small and _broadcastable(v, cond) and _broadcastable(v, x))
        self.op("Where", [cond.name, x.name, y.name])

    def e_vector(self) -> None:
        c = self.c
        what = weighted(
            c,
            (
                ("concat", 4),
                ("unsqueeze", 1),
                ("squeeze", 1),
                ("slice", 3),
                ("gather", 3),
                ("reshape", 1),
                ("expand", 1),
                ("tile", 1),
                ("cumsum", 1),
                ("reduce", 3),
                ("range", 2),
                ("identity", 1),
                ("shape_of_shape", 1),
            ),
        )
        if what == "concat":
            parts = [self.int_small() for _ in range(c.integer(2, 3))]
            if chance(c, 30):
                parts.insert(c.integer(0, len(parts)), self.op("Identity", [self.const([choice(c, (-1, 0, 1, 2))])]))
            self.vector_of(parts)
        elif what == "unsqueeze":
            v = self.int_small()
            self.op(
                "Unsqueeze", [v.name, self.const([choice(c, (0, -1))] + ([1] if v.rank == 0 and chance(c, 20) else []))]
            )
        elif what == "squeeze":
            v = self.pick(lambda v: v.is_int and v.scalar and v.rank == 1)
            self.as_scalar(v)
        elif what == "slice":
            v = self.pick(lambda v: (v.is_int or v.is_float) and v.small and v.rank == 1)
            step = choice(c, (1, -1, 2, -2))
            start = self._slice_bound(step, True)
            end = self._slice_bound(step, False)
            if chance(c, 30):
                # a computed bound, as exporters slice shapes with computed indices
                ends = self.as_vector(self.cast(self.int_scalar(), TP.INT64))
                self.op("Slice", [v.name, self.const([start]), ends.name, self.const([0]), self.const([step])])
            else:
                self.op("Slice", [v.name, self.const([start]), self.const([end]), self.const([0]), self.const([step])])
        elif what == "gather":
            v = self.pick(lambda v: v.small and v.rank == 1 and min(a.size for a in v.arrays) > 0)
            n = min(a.size for a in v.arrays)
            if chance(c, 30):
                idx = self.nonneg(self.int_scalar(), n - 1)
                if idx.hi() >= n:
                    raise Reject("index out of range")
                self.op("Gather", [v.name, idx.name], axis=0)
            else:
                shape = choice(c, ((), (1,), (2,)))
                idx = self.np_rng.integers(-n, n, size=shape)
                self.op("Gather", [v.name, self.const(idx)], axis=0)
        elif what == "reshape":
            v = self.pick(lambda v: v.small and not v.is_bool)
            self.op("Reshape", [v.name, self.const(choice(c, ([-1], [1, -1], [-1, 1])))])
        elif what == "expand":
            v = self.pick(lambda v: v.scalar and (v.is_int or v.is_float))
            self.op("Expand", [v.name, self.const([c.integer(1, 3)])])
        elif what == "tile":
            v = self.pick(lambda v: v.small and v.rank == 1)
            self.op("Tile", [v.name, self.const([c.integer(1, 3)])])
        elif what == "cumsum":
            v = self.pick(lambda v: v.small and v.rank == 1 and (v.is_int or v.is_float))
            self.op("CumSum", [v.name, self.const(0)], exclusive=c.integer(0, 1), reverse=c.integer(0, 1))
        elif what == "reduce":
            v = self.pick(
                lambda v: v.small and v.rank == 1 and (v.is_int or v.is_float) and min(a.size for a in v.arrays) > 0
            )
            op = choice(c, ("ReduceProd", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceMean"))
            attrs: dict[str, Any] = {"keepdims": c.integer(0, 1)}
            ins = [v.name]
            if chance(c, 50):
                if op == "ReduceSum" or self.opset >= 18:
                    ins.append(self.const([choice(c, (0, -1))]))
                else:
                    attrs["axes"] = [choice(c, (0, -1))]
            self.op(op, ins, **attrs)
        elif what == "range":
            self._range(sink=False)
        elif what == "identity":
            self.op("Identity", [self.int_small().name])
        else:
            v = self.int_small()
            self.op("Shape", [v.name])

    def e_reduce_data(self) -> None:
        """Reductions over data tensors with axes and keepdims: extents drop or become 1."""
        c = self.c
        x = self.data(lambda v: v.is_float)
        op = choice(c, ("ReduceSum", "ReduceMax", "ReduceMean", "ReduceMin", "ReduceProd"))
        axes = sorted({c.integer(-x.rank, x.rank - 1) % x.rank for _ in range(c.integer(1, x.rank))})
        axes = [a - x.rank * c.integer(0, 1) for a in axes]
        attrs: dict[str, Any] = {"keepdims": c.integer(0, 1)}
        if op == "ReduceSum" or self.opset >= 18:
            ins = [x.name, self.const(axes)] if chance(c, 80) else [x.name]
        else:
            ins = [x.name]
            attrs["axes"] = axes
        if any(min(x.extents(a)) == 0 for a in axes) and op in ("ReduceMax", "ReduceMin"):
            raise Reject("empty reduction")
        self.op(op, ins, **attrs)

    # -- sinks: computed values become extents ----------------------------------------------------

    def _shape_vector(self, length: int | None = None, cap: int = 12) -> Val:
        """A small non-negative int64 vector computed from the program."""
        c = self.c
        if chance(c, 40):
            try:
                v = self.pick(
                    lambda v: (
                        v.is_int
                        and v.rank == 1
                        and 0 < v.arrays[0].size <= 4
                        and v.lo() >= 0
                        and v.hi() <= cap
                        and (length is None or all(a.size == length for a in v.arrays))
                    )
                )
                return self.cast(v, TP.INT64)
            except Reject:
                pass
        n = length or c.integer(1, 3)
        parts = []
        for _ in range(n):
            parts.append(
                self.nonneg(self.int_scalar(), cap)
                if chance(c, 75)
                else self.op("Identity", [self.const([c.integer(1, 3)])])
            )
        return self.vector_of(parts)

    def _varying_length(self) -> Val:
        """A vector whose length depends on the binding: ``range(1, min(d, 3) + 1)`` or
        ``min(d, 3)`` ones, so whatever takes it as a shape has a rank that varies."""
        c = self.c
        k = self.op("Min", [self.cast(self.as_scalar(self.int_scalar()), TP.INT64).name, self.const(3)])
        k = self.op("Max", [k.name, self.const(0)])
        if chance(c, 50):
            return self.op("Range", [self.const(1), self.op("Add", [k.name, self.const(1)]).name, self.const(1)])
        return self.op("Expand", [self.const([1]), self.as_vector(k).name])

    def e_constant_of_shape(self) -> None:
        c = self.c
        shape = self._varying_length() if chance(c, 20) else self._shape_vector()
        dtype = weighted(
            c, ((None, 2), (TP.FLOAT, 2), (TP.INT64, 2), (TP.INT32, 1), (TP.BOOL, 1), (TP.FLOAT16, 1), (TP.DOUBLE, 1))
        )
        attrs = {}
        if dtype is not None:
            attrs["value"] = h.make_tensor("value", dtype, [1], [1])
        self.op("ConstantOfShape", [shape.name], **attrs)

    def e_reshape(self) -> None:
        c = self.c
        x = self.data()
        how = choice(c, ("flatten_tail", "copy_dims", "merge", "computed", "zero_target"))
        if how == "flatten_tail":
            keep = c.integer(0, x.rank - 1)
            shape = self.op("Shape", [x.name])
            head = self.op("Slice", [shape.name, self.const([0]), self.const([keep])])
            target = self.vector_of([head, self.op("Identity", [self.const([-1])])])
        elif how == "copy_dims":
            # 0 copies the input's extent, -1 takes the rest; the others taken from Shape
            entries = []
            minus = c.integer(0, x.rank - 1)
            for i in range(x.rank):
                if i == minus:
                    entries.append(self.op("Identity", [self.const([-1])]))
                elif chance(c, 50):
                    entries.append(self.op("Identity", [self.const([0])]))
                else:
                    shape = self.op("Shape", [x.name])
                    entries.append(self.op("Gather", [shape.name, self.const([i])], axis=0))
            target = self.vector_of(entries)
        elif how == "merge":
            if x.rank < 2:
                raise Reject("rank 1")
            i = c.integer(0, x.rank - 2)
            shape = self.op("Shape", [x.name])
            a = self.op("Gather", [shape.name, self.const(i)], axis=0)
            b = self.op("Gather", [shape.name, self.const(i + 1)], axis=0)
            merged = self.op("Mul", [a.name, b.name])
            head = self.op("Slice", [shape.name, self.const([0]), self.const([i])])
            tail = self.op("Slice", [shape.name, self.const([i + 2]), self.const([INT64_MAX])])
            target = self.vector_of([head, merged, tail])
        elif how == "zero_target":
            # an entry that is 0 at some binding: "copy the input extent" unless allowzero
            d = self.int_scalar()
            entry = self.op("Sub", [d.name, self.const(choice(c, (1, 2)), d.dtype)])
            entry = self.nonneg(entry, 64)
            rest = self.op("Identity", [self.const([-1])])
            target = self.vector_of([entry, rest] if chance(c, 50) else [rest, entry])
        else:
            target = self.vector_of([self.int_small() for _ in range(c.integer(1, 3))])
        attrs = {"allowzero": 1} if self.opset >= 14 and chance(c, 15) else {}
        self.op("Reshape", [x.name, target.name], **attrs)

    def e_expand(self) -> None:
        c = self.c
        x = self.data(lambda v: v.rank <= 3)
        if chance(c, 15):  # to a shape of varying length: the rank varies with the binding
            self.op("Expand", [x.name, self._varying_length().name])
            return
        shape = self.op("Shape", [x.name])
        parts = []
        for _ in range(c.integer(0, 1)):
            parts.append(self.nonneg(self.int_scalar(), 6))
        for i in range(x.rank):
            ext = x.extents(i)
            if (min(ext) == 1 and max(ext) == 1 and chance(c, 60)) or chance(c, 15):
                parts.append(self.nonneg(self.int_scalar(), 6))
            else:
                g = self.op("Gather", [shape.name, self.const([i])], axis=0)
                parts.append(g if chance(c, 70) else self.op("Identity", [self.const([1])]))
        target = self.vector_of(parts)
        self.op("Expand", [x.name, target.name])

    def e_tile(self) -> None:
        x = self.data(lambda v: v.rank <= 3)
        reps = self._shape_vector(length=x.rank, cap=3)
        self.op("Tile", [x.name, reps.name])

    def _range(self, sink: bool = True) -> None:
        c = self.c
        start = self.int_scalar() if chance(c, 50) else None
        limit = self.int_scalar()
        delta_v = choice(c, (1, 2, -1, 3, -2))
        kind = choice(c, ("int", "float", "int"))
        ft = choice(c, (TP.FLOAT, TP.DOUBLE)) if kind == "float" else TP.INT64
        scalars = []
        for v in (start, limit):
            if v is None:
                scalars.append(self.const(0, NP_OF[ft]))
            else:
                scalars.append(self.cast(self.as_scalar(v), ft).name)
        if kind == "float" and chance(c, 50):
            delta = self.const(choice(c, (0.5, 1.5, 2.0, -0.5, 0.1, 0.3, 1 / 3)), NP_OF[ft])
        else:
            delta = self.const(delta_v, NP_OF[ft])
        self.op("Range", [*scalars, delta])

    def e_range(self) -> None:
        self._range()

    def e_slice_computed(self) -> None:
        c = self.c
        x = self.data()
        axis = c.integer(0, x.rank - 1)
        step = choice(c, (1, 1, 2, -1))
        start = self.as_vector(self.cast(self.int_scalar(), TP.INT64)) if chance(c, 60) else None
        end = self.as_vector(self.cast(self.int_scalar(), TP.INT64)) if chance(c, 70) or start is None else None
        if end is not None and chance(c, 40):
            end = self.op(choice(c, ("Sub", "Add", "Div")), [end.name, self.const([choice(c, (1, 2))])])
        ins = [
            x.name,
            start.name if start else self.const([self._slice_bound(step, True)]),
            end.name if end else self.const([self._slice_bound(step, False)]),
            self.const([axis - x.rank * c.integer(0, 1)]),
            self.const([step]),
        ]
        self.op("Slice", ins)

    def e_pad_computed(self) -> None:
        c = self.c
        x = self.data(lambda v: v.rank <= 4)
        parts = []
        for _ in range(2 * x.rank):
            if chance(c, 40):
                parts.append(self.nonneg(self.int_scalar(), 4))
            else:
                parts.append(self.op("Identity", [self.const([choice(c, (0, 0, 1, -1))])]))
        pads = self.vector_of(parts)
        self.op("Pad", [x.name, pads.name])

    def e_resize_sizes(self) -> None:
        c = self.c
        x = self.float_data((3, 4))
        attrs = self._resize_attrs(sizes=True, rank=x.rank)
        shape = self.op("Shape", [x.name])
        spatial = list(range(2, x.rank))
        outs = []
        for i in spatial:
            d = self.op("Gather", [shape.name, self.const([i])], axis=0)
            how = choice(c, ("scale", "scale", "computed", "same"))
            if how == "scale":
                f = self.cast(d, self._float_type())
                f = self.op("Mul", [f.name, self._fconst(choice(c, (2.0, 0.5, 1.5, 0.75, 3.0)), f)])
                f = self.op(choice(c, ("Floor", "Ceil", "Round")), [f.name])
                outs.append(self.op("Max", [self.cast(f, TP.INT64).name, self.const([1])]))
            elif how == "computed":
                v = self.nonneg(self.int_scalar(), 24)
                outs.append(self.op("Max", [self.cast(self.as_vector(v), TP.INT64).name, self.const([1])]))
            else:
                outs.append(d)
        if self.opset >= 18 and chance(c, 40):
            sizes = self.vector_of(outs)
            self._resize(x, "", sizes.name, [a - x.rank * c.integer(0, 1) for a in spatial], attrs)
        else:
            head = self.op("Slice", [shape.name, self.const([0]), self.const([2])])
            sizes = self.vector_of([head, *outs])
            attrs.pop("keep_aspect_ratio_policy", None) if chance(c, 50) else None
            self._resize(x, "", sizes.name, None, attrs)

    def e_resize_scales_computed(self) -> None:
        """Scales computed at run time as a ratio of float extents (target / current)."""
        c = self.c
        x = self.float_data((3, 4))
        shape = self.op("Shape", [x.name])
        cur = self.cast(self.op("Slice", [shape.name, self.const([2]), self.const([x.rank])]), TP.FLOAT)
        target = self.op("Mul", [cur.name, self.const(choice(c, (2.0, 0.5, 1.5, 3.0)), np.float32)])
        if chance(c, 50):
            target = self.op("Floor", [target.name])
        ratio = self.op("Div", [target.name, cur.name])
        scales = self.op("Concat", [self.const([1.0, 1.0], np.float32), ratio.name], axis=0)
        attrs = self._resize_attrs(sizes=False, rank=x.rank)
        self._resize(x, scales.name, "", None, attrs)

    def e_topk(self) -> None:
        c = self.c
        x = self.data(lambda v: (v.is_float or v.is_int) and v.rank <= 3)
        axis = c.integer(0, x.rank - 1)
        k = self.nonneg(self.int_scalar(), min(x.extents(axis)))
        if any(k.arrays[i].max(initial=0) > x.arrays[i].shape[axis] for i in range(self.k)):
            raise Reject("k too large")
        k = self.as_vector(self.cast(k, TP.INT64))
        attrs = {"largest": c.integer(0, 1), "sorted": 1} if chance(c, 30) else {}
        self.emit(self.node("TopK", [x.name, k.name], 2, axis=axis - x.rank * c.integer(0, 1), **attrs))

    def e_split(self) -> None:
        c = self.c
        x = self.data(lambda v: v.rank <= 4)
        axis = c.integer(0, x.rank - 1)
        how = choice(c, ("computed", "num_outputs", "equal"))
        if how == "num_outputs" and self.opset >= 18:
            n = c.integer(1, 4)
            self.emit(self.node("Split", [x.name], n, axis=axis, num_outputs=n))
        elif how == "equal":
            n = choice(c, (1, 2, 3))
            if any(e % n for e in x.extents(axis)):
                raise Reject("not divisible")
            extra = {"num_outputs": n} if self.opset >= 18 else {}
            self.emit(self.node("Split", [x.name], n, axis=axis, **extra))
        else:
            shape = self.op("Shape", [x.name])
            d = self.op("Gather", [shape.name, self.const([axis])], axis=0)
            first = self.op(choice(c, ("Div", "Sub", "Min")), [d.name, self.const([choice(c, (2, 1, 3))])])
            first = self.nonneg(first, 64)
            rest = self.op("Sub", [d.name, first.name])
            self.emit(self.node("Split", [x.name, self.vector_of([first, rest]).name], 2, axis=axis))

    def e_onehot(self) -> None:
        c = self.c
        idx = self.pick(lambda v: v.is_int and 1 <= v.rank <= 2 and max(a.size for a in v.arrays) <= 64)
        idx = self.cast(idx, TP.INT64)
        depth = self.cast(self.nonneg(self.int_scalar(), 16), TP.INT64)
        if depth.lo() < 1:
            depth = self.op("Add", [depth.name, self.const(1, depth.dtype)])
        if chance(c, 30):
            depth = self.cast(depth, TP.FLOAT)
        values = self.const([0.0, 1.0], np.float32)
        self.op("OneHot", [idx.name, depth.name, values], axis=choice(c, (-1, 0)))

    # -- the program ------------------------------------------------------------------------------

    FAMILIES: tuple[tuple[str, int], ...] = (
        ("conv", 3), ("conv_transpose", 1), ("pool", 3), ("slice_data", 2), ("pad_data", 2),
        ("resize_scales", 2), ("data_misc", 2), ("fresh", 4), ("shape", 3), ("nonzero", 3),
        ("int_binary", 6), ("int_unary", 2), ("float_chain", 6), ("ceil_multiple", 3), ("tf_same", 2),
        ("half", 2), ("roundtrip", 2), ("narrow_cast", 1), ("compare_where", 2), ("vector", 6), ("reduce_data", 1),
        ("constant_of_shape", 3), ("reshape", 4), ("expand", 2), ("tile", 2), ("range", 2),
        ("slice_computed", 2), ("pad_computed", 2), ("resize_sizes", 2), ("resize_scales_computed", 1),
        ("topk", 1), ("split", 2), ("onehot", 1),
    )  # fmt: skip
    MAKERS = ("conv", "pool", "slice_data", "pad_data", "resize_scales", "tf_same", "conv_transpose")

    def attempt(self, family: str) -> bool:
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                getattr(self, "e_" + family)()
            self.families.append(family)
            return True
        except Reject:
            return False  # the nodes an emitter added before failing are valid: they stay

    def build(self) -> Program:
        c = self.c
        self.make_inputs()
        for _ in range(c.integer(0, 2)):
            self.attempt(choice(c, self.MAKERS))
        budget = c.integer(6, self.max_nodes)
        tries = 0
        while len(self.nodes) < budget and tries < budget * 4:
            tries += 1
            self.attempt(weighted(c, self.FAMILIES))
        return self.finish()

    def finish(self) -> Program:
        used = {i for n in self.nodes for i in n.input if i}
        const_nodes, inits = [], []
        for name, arr in self.consts.items():
            if name not in used:
                continue
            if name in self.const_nodes:
                const_nodes.append(_constant_node(name, arr))
            else:
                inits.append(nh.from_array(arr, name))
        outputs = []
        for n in self.nodes:
            for o in n.output:
                v = self.by_name[o]
                if o not in used and len({a.ndim for a in v.arrays}) == 1:
                    # element type and rank declared, extents left to inference (or ``declare``d)
                    outputs.append(h.make_tensor_value_info(o, v.elem, [None] * v.rank))
        declared = self.declare(outputs)
        graph = h.make_graph(const_nodes + self.nodes, "shape_program", self.inputs, outputs, inits)
        model = h.make_model(graph, opset_imports=[h.make_opsetid("", self.opset)])
        model.ir_version = IR_VERSION[self.opset]
        expected = {v.name: v.arrays for v in self.by_name.values() if v.name not in self.feeds[0]}
        for name in self.const_nodes & used:
            expected[name] = [self.consts[name]] * self.k
        return Program(model, self.bindings, self.feeds, expected, self.families, declared=declared)

    def declare(self, outputs: list[onnx.ValueInfoProto]) -> list[Declared]:
        """Name some axes of the graph outputs (in about a third of the programs), the way
        exporters do and mostly where the program contradicts it (issue 26): one new name on two
        axes whose extents differ at some binding, or an input's variable on an axis that is
        not that variable everywhere; sometimes on axes where the name holds."""
        c = self.c
        free = [(vi, a) for vi in outputs for a in range(len(vi.type.tensor_type.shape.dim))]
        if not free or not chance(c, 35):
            return []
        out: list[Declared] = []
        for _ in range(c.integer(1, 3)):
            if len(free) >= 2 and chance(c, 60):
                pairs = [(x, y) for i, x in enumerate(free) for y in free[i + 1 :]]
                differ = [(x, y) for x, y in pairs if self._extents(x) != self._extents(y)]
                places, name = list(choice(c, differ if differ and chance(c, 80) else pairs)), f"decl_{len(out)}"
            elif free:
                name = choice(c, self.variables)
                wrong = [p for p in free if any(e != b[name] for e, b in zip(self._extents(p), self.bindings))]
                places = [choice(c, wrong if wrong and chance(c, 80) else free)]
            else:
                break
            for p in places:
                p[0].type.tensor_type.shape.dim[p[1]].dim_param = name
                free.remove(p)
            columns = zip(*(self._extents(p) for p in places))
            holds = tuple(
                len(set(col)) == 1 and (name not in b or col[0] == b[name]) for col, b in zip(columns, self.bindings)
            )
            out.append(Declared(name, tuple((vi.name, a) for vi, a in places), holds))
        return out

    def _extents(self, place: tuple[onnx.ValueInfoProto, int]) -> list[int]:
        return self.by_name[place[0].name].extents(place[1])


def _constant_node(name: str, arr: np.ndarray) -> onnx.NodeProto:
    if arr.dtype == np.int64 and arr.ndim == 1:
        return h.make_node("Constant", [], [name], value_ints=arr.tolist())
    if arr.dtype == np.int64 and arr.ndim == 0:
        return h.make_node("Constant", [], [name], value_int=int(arr))
    if arr.dtype == np.float32 and arr.ndim == 0:
        return h.make_node("Constant", [], [name], value_float=float(arr))
    return h.make_node("Constant", [], [name], value=nh.from_array(arr, name))


def _broadcastable(a: Val, b: Val) -> bool:
    try:
        for x, y in zip(a.arrays, b.arrays):
            np.broadcast_shapes(x.shape, y.shape)
    except (ValueError, RuntimeError):  # RuntimeError: numpy's 32-dimension limit
        return False
    return True


def _precheck(node: onnx.NodeProto, ins: list[list[np.ndarray] | None]) -> None:
    """What onnx.reference accepts but onnxruntime crashes on or computes undefined results for."""
    op = node.op_type
    if op in ("Div", "Mod") and ins[1] is not None and ins[1][0].dtype.kind in "iu":
        if any((a == 0).any() for a in ins[1]):
            raise Reject("integer division by zero")  # SIGFPE in onnxruntime
    if op == "Mod" and ins[0] is not None and ins[0][0].dtype.kind == "f":
        if not any(a.name == "fmod" and a.i == 1 for a in node.attribute):
            raise Reject("float Mod needs fmod=1")
    if op == "Cast":
        to = next(a.i for a in node.attribute if a.name == "to")
        src = ins[0]
        if src is not None and src[0].dtype.kind == "f" and to in INT_TYPES:
            limit = 2**31 if to == TP.INT32 else 2**62
            if any((~np.isfinite(a)).any() or (np.abs(a) >= limit).any() for a in src):
                raise Reject("float to integer out of range")
    if op in ("Range", "CumSum") and ins[0] is not None and ins[0][0].dtype == np.float16:
        raise Reject("float16 Range or CumSum")  # onnxruntime has no kernel
    if op in ("Sum", "Mean") and ins[0] is not None and ins[0][0].dtype.kind in "iu":
        raise Reject("integer Sum/Mean")  # onnxruntime has no kernel
    if op == "Pow" and ins[1] is not None and ins[0] is not None and ins[0][0].dtype.kind in "iu":
        if any((a < 0).any() for a in ins[1]):
            raise Reject("negative integer exponent")
    if op == "Pad" and ins[0] is not None and any(a.size == 0 for a in ins[0]):
        if any(a.name == "mode" and a.s != b"constant" for a in node.attribute):
            raise Reject("edge, reflect or wrap of an empty tensor")  # onnxruntime refuses it
    if op == "Slice" and len(ins) > 3 and ins[3] is not None and ins[0] is not None:
        if any(len({int(a) % x.ndim for a in axes}) < axes.size for x, axes in zip(ins[0], ins[3]) if x.ndim):
            raise Reject("Slice axes repeated")
    if op == "Range" and any(a is None or any(v.ndim for v in a) for a in ins):
        raise Reject("Range bounds must be scalars")
    if op == "Range":
        for s, lim, d in zip(*ins):  # type: ignore[misc]
            if float(d) == 0:
                raise Reject("Range delta 0")
            if np.ceil((float(lim) - float(s)) / float(d)) > MAX_ELEMENTS:
                raise Reject("Range too long")
    if op == "Pad" and any(a.name == "mode" and a.s == b"reflect" for a in node.attribute):
        if ins[0] is not None and any(min(a.shape, default=2) < 2 for a in ins[0]):
            raise Reject("reflect on an extent below 2")  # onnxruntime refuses it
        if ins[0] is not None and ins[1] is not None:
            axes_in = ins[3] if len(ins) > 3 and ins[3] is not None else None
            for b, (x, pads) in enumerate(zip(ins[0], ins[1])):
                axes = [int(a) % x.ndim for a in axes_in[b]] if axes_in is not None else list(range(x.ndim))
                if any(p >= x.shape[axes[i % len(axes)]] for i, p in enumerate(pads.tolist())):
                    raise Reject("reflect pad past the extent")  # onnxruntime refuses it
    if op in ("Conv", "MaxPool", "AveragePool", "LpPool", "ConvTranspose") and ins[0] is not None:
        auto = next((a.s for a in node.attribute if a.name == "auto_pad"), b"NOTSET")
        if auto.startswith(b"SAME"):
            attrs = {a.name: list(a.ints) for a in node.attribute if a.type == onnx.AttributeProto.INTS}
            for x in ins[0]:
                spatial = x.shape[2:]
                k = attrs.get("kernel_shape")
                if k is None and len(ins) > 1 and ins[1] is not None:
                    k = list(ins[1][0].shape[2:])
                k = k or [1] * len(spatial)
                st = attrs.get("strides", [1] * len(spatial))
                dl = attrs.get("dilations", [1] * len(spatial))
                for d, kk, ss, dd in zip(spatial, k, st, dl):
                    if op != "ConvTranspose" and (-(-d // ss) - 1) * ss + (kk - 1) * dd + 1 - d < 0:
                        raise Reject("SAME padding would be negative")  # onnxruntime refuses it
    if op == "Split" and any(a.name == "num_outputs" for a in node.attribute) and ins[0] is not None:
        n = next(a.i for a in node.attribute if a.name == "num_outputs")
        axis = next((a.i for a in node.attribute if a.name == "axis"), 0)
        for a in ins[0]:
            d = a.shape[axis]
            if -(-d // n) * (n - 1) > d:
                raise Reject("uneven split with an empty or negative last chunk")  # the spec is silent
    if op == "Reshape" and ins[1] is not None and ins[0] is not None:
        allowzero = any(a.name == "allowzero" and a.i for a in node.attribute)
        for x, t in zip(ins[0], ins[1]):
            t = t.reshape(-1)
            if (t < -1).any() or (t == -1).sum() > 1:
                raise Reject("Reshape entry below -1, or two -1")  # numpy takes any negative as -1
            if not allowzero and any(i >= x.ndim for i in np.flatnonzero(t == 0)):
                raise Reject("Reshape copies an axis the input does not have")
    if op == "Split" and len(ins) > 1 and ins[1] is not None and any((a < 0).any() for a in ins[1]):
        raise Reject("negative split")  # onnx.reference takes it
    if op == "Unique" and any(a.name == "axis" for a in node.attribute) and ins[0] is not None:
        if any(a.size == 0 for a in ins[0]):
            raise Reject("Unique along an axis of an empty tensor")  # onnxruntime aborts
    if op in ("TopK", "Tile") and ins[1] is not None and any((a < 0).any() for a in ins[1]):
        raise Reject("negative k or repeats")
    if op == "Tile" and ins[0] is not None and ins[1] is not None:
        if any(r.size != x.ndim for x, r in zip(ins[0], ins[1])):
            raise Reject("repeats of another length than the rank")  # numpy's tile takes it
    if op == "OneHot" and ins[1] is not None and any((a < 1).any() for a in ins[1]):
        raise Reject("OneHot depth below 1")
    if op == "Pad" and ins[1] is not None and any((a < 0).any() for a in ins[1]):
        mode = next((a.s.decode() for a in node.attribute if a.name == "mode"), "constant")
        if mode != "constant":
            raise Reject("negative pads outside constant mode")


def _postcheck(node: onnx.NodeProto, a: np.ndarray) -> None:
    if a.size > MAX_ELEMENTS or a.ndim > 8:
        raise Reject("too large")
    if a.dtype.kind == "f" and a.size and not np.isfinite(a).all():
        raise Reject("not finite")
    if a.dtype.kind in "iu" and a.size and np.abs(a.astype(np.int64)).max() > MAX_INT:
        raise Reject("integer too large")


# Operators onnx.reference computes slowly in Python (and, for pools with ceil_mode and Resize
# with sizes, with other extents than onnxruntime): given a runner, onnxruntime evaluates them.
HEAVY = frozenset({"Conv", "ConvTranspose", "MaxPool", "AveragePool", "LpPool", "Resize"})


def _evaluate(
    node: onnx.NodeProto, ins: list[list[np.ndarray] | None], opset: int, k: int, runner: Any = None
) -> list[list[np.ndarray]]:
    """The outputs of ``node`` at each of ``k`` bindings: onnx.reference, our own Pad for negative
    pads, and onnxruntime (``runner``, an ``OrtRunner``) for the ``HEAVY`` operators."""
    names = [f"i{j}" if a is not None else "" for j, a in enumerate(ins)]
    node2 = onnx.NodeProto()
    node2.CopyFrom(node)
    del node2.input[:]
    node2.input.extend(names)
    vis = [
        h.make_tensor_value_info(n, h.np_dtype_to_tensor_dtype(a[0].dtype), None)
        for n, a in zip(names, ins)
        if a is not None
    ]
    outs = [onnx.ValueInfoProto(name=o) for o in node2.output]
    m = h.make_model(h.make_graph([node2], "one", vis, outs), opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = IR_VERSION[opset]
    negative_pad = node.op_type == "Pad" and ins[1] is not None and any((a < 0).any() for a in ins[1])
    if runner is not None and node.op_type in HEAVY:
        feeds_k = [{n: a[b] for n, a in zip(names, ins) if a is not None} for b in range(k)]
        outcome = runner.run(m.SerializeToString(), feeds_k)
        if outcome.outputs is None:
            raise Reject(f"{node.op_type}: {outcome.error}")
        return [[np.asarray(run[o]) for run in outcome.outputs] for o in node2.output]
    own = _pad if negative_pad else _slice if node.op_type == "Slice" else None
    try:
        ev = None if own is not None else ReferenceEvaluator(m)
        results: list[list[np.ndarray]] = [[] for _ in node.output]
        for b in range(k):
            feeds = {n: a[b] for n, a in zip(names, ins) if a is not None}
            got = own(node, [a[b] if a is not None else None for a in ins]) if own else ev.run(None, feeds)
            for j, g in enumerate(got):
                results[j].append(np.asarray(g))
        return results
    except Reject:
        raise
    except Exception as e:  # the reference refused the node at some binding
        raise Reject(f"{node.op_type}: {e}") from None


def _slice(node: onnx.NodeProto, ins: list[np.ndarray | None]) -> list[np.ndarray]:
    """Slice as the definition clamps it (onnx.reference clamps a negative step's start below the
    extent to -1 instead of 0, and so empties slices onnxruntime and the definition keep)."""
    x, starts, ends = ins[0], ins[1], ins[2]
    assert x is not None and starts is not None and ends is not None
    axes = ins[3] if len(ins) > 3 and ins[3] is not None else np.arange(len(starts))
    steps = ins[4] if len(ins) > 4 and ins[4] is not None else np.ones(len(starts), np.int64)
    index: list[slice] = [slice(None)] * x.ndim
    for start, end, axis, step in zip(starts.tolist(), ends.tolist(), axes.tolist(), steps.tolist()):
        if step == 0 or not -x.ndim <= axis < x.ndim:
            raise Reject("invalid Slice")
        d = x.shape[axis]
        start, end = start + d if start < 0 else start, end + d if end < 0 else end
        if step > 0:
            start, end = min(max(start, 0), d), min(max(end, 0), d)
        else:
            start, end = min(max(start, 0), d - 1), min(max(end, -1), d - 1)
        index[axis % x.ndim] = slice(start, None if end < 0 else end, step)
    return [x[tuple(index)]]


def _pad(node: onnx.NodeProto, ins: list[np.ndarray | None]) -> list[np.ndarray]:
    """Constant-mode Pad with negative pads (onnx.reference refuses them): crop, then pad."""
    x, pads = ins[0], ins[1]
    assert x is not None and pads is not None
    value = ins[2] if len(ins) > 2 and ins[2] is not None else np.zeros((), x.dtype)
    axes = list(range(x.ndim)) if len(ins) < 4 or ins[3] is None else [int(a) % x.ndim for a in ins[3]]
    n = len(axes)
    begin = {a: int(pads[i]) for i, a in enumerate(axes)}
    end = {a: int(pads[i + n]) for i, a in enumerate(axes)}
    index = tuple(slice(max(0, -begin.get(a, 0)), x.shape[a] - max(0, -end.get(a, 0))) for a in range(x.ndim))
    if any(s.stop < s.start for s in index):
        raise Reject("pad crops past the extent")
    cropped = x[index]
    widths = [(max(0, begin.get(a, 0)), max(0, end.get(a, 0))) for a in range(x.ndim)]
    return [np.pad(cropped, widths, constant_values=value.item())]


def generate(seed: int, max_nodes: int = MAX_NODES, runner: Any = None) -> Program:
    """The program of ``seed`` (with a runner, heavy operators are evaluated by onnxruntime: the
    same seed can give another program without one)."""
    p = Generator(RandomChooser(seed), max_nodes, runner).build()
    p.seed = seed
    return p


def programs(max_nodes: int = MAX_NODES, runner: Any = None) -> Any:
    """A hypothesis strategy of programs (drawn through ``st.data``-style draws, so they shrink)."""
    from hypothesis import strategies as st

    @st.composite
    def _programs(draw: Any) -> Program:
        return Generator(DrawChooser(_Drawer(draw)), max_nodes, runner).build()

    return _programs()


class _Drawer:
    """Gives a composite's ``draw`` the ``data.draw`` shape ``DrawChooser`` expects."""

    def __init__(self, draw: Any):
        self.draw = draw


def op_census(progs: Sequence[Program]) -> Counter[str]:
    """How many programs use each operator."""
    out: Counter[str] = Counter()
    for p in progs:
        out.update(p.ops)
    return out
