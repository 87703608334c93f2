"""Random valid models from supported operators, and checking every claim against onnxruntime.

``random_model(seed)`` grows a graph node by node from one or two inputs with symbolic dims.
Each candidate node is evaluated at once (``onnx.reference``) at two bindings of the dimension
variables, so the generator knows every intermediate tensor, values included, and only keeps a
node valid at both. The finished model is run in onnxruntime at both bindings with every value
exposed, and ``check_soundness`` compares every claim inference makes (element type, rank,
every dim evaluated at the binding, known contents, fresh variables consistent) with what
onnxruntime computed (``tests.support.runtime.check``).

Shape arithmetic is the point: Shape -> Gather -> arithmetic -> Concat -> Reshape / Expand /
ConstantOfShape / Range chains appear often, as do Slice with extreme ends, pooling with
``ceil_mode``, broadcasting against size-1 and symbolic dims, and If branches.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh
from onnx.reference import ReferenceEvaluator

OPSET = 18
MAX_ELEMENTS = 20_000
PARAMS = ("a", "b", "c")


@dataclass
class Tensor:
    name: str
    values: list[np.ndarray]  # at binding 0 and binding 1

    @property
    def shapes(self) -> list[tuple[int, ...]]:
        return [v.shape for v in self.values]

    @property
    def rank(self) -> int:
        return self.values[0].ndim

    @property
    def dtype(self) -> np.dtype:
        return self.values[0].dtype

    def fixed(self, axis: int) -> int | None:
        """The extent of ``axis`` when it is the same at both bindings."""
        a, b = (s[axis] for s in self.shapes)
        return a if a == b else None


@dataclass
class Built:
    model: onnx.ModelProto
    bindings: list[dict[str, int]]
    feeds: list[dict[str, np.ndarray]]
    ops: list[str] = field(default_factory=list)


class Generator:
    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.np_rng = np.random.default_rng(seed)
        self.bindings: list[dict[str, int]] = [{}, {}]
        for p in PARAMS:
            a = self.rng.choice([1, 2, 3, 3, 4, 5, 6, 7])
            b = self.rng.choice([v for v in (1, 2, 3, 4, 5, 6, 8) if v != a])
            self.bindings[0][p], self.bindings[1][p] = a, b
        self.inputs: list[onnx.ValueInfoProto] = []
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.tensors: list[Tensor] = []
        self.feeds: list[dict[str, np.ndarray]] = [{}, {}]
        self.counter = 0
        self.ops: list[str] = []

    # -- names, constants, inputs -------------------------------------------------------------

    def name(self, prefix: str = "v") -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def const(self, values: Any, dtype: Any = np.int64) -> str:
        arr = np.asarray(values, dtype=dtype)
        name = self.name("k")
        self.inits.append(nh.from_array(arr, name))
        return name

    def add_input(self) -> None:
        rank = self.rng.choice([1, 2, 2, 3, 3, 4, 4])
        dims: list[int | str] = []
        for _ in range(rank):
            dims.append(self.rng.choice(PARAMS) if self.rng.random() < 0.6 else self.rng.choice([1, 2, 3, 4, 5]))
        name = self.name("in")
        self.inputs.append(h.make_tensor_value_info(name, TP.FLOAT, dims))
        values = []
        for k in range(2):
            shape = [self.bindings[k][d] if isinstance(d, str) else d for d in dims]
            arr = self.np_rng.standard_normal(shape).astype(np.float32)
            self.feeds[k][name] = arr
            values.append(arr)
        self.tensors.append(Tensor(name, values))

    # -- evaluating a candidate ---------------------------------------------------------------

    def values_of(self, name: str) -> list[np.ndarray] | None:
        for t in self.tensors:
            if t.name == name:
                return t.values
        for init in self.inits:
            if init.name == name:
                arr = nh.to_array(init)
                return [arr, arr]
        return None

    def try_nodes(self, nodes: list[onnx.NodeProto], op: str) -> list[Tensor] | None:
        """Evaluate ``nodes`` at both bindings; keep them (and return their outputs) if valid."""
        env: list[dict[str, np.ndarray]] = [{}, {}]
        produced: list[Tensor] = []
        for node in nodes:
            outs_k = []
            for k in range(2):
                feeds = {}
                for i in node.input:
                    if not i:
                        continue
                    if i in env[k]:
                        feeds[i] = env[k][i]
                        continue
                    vals = self.values_of(i)
                    if vals is None:
                        return None
                    feeds[i] = vals[k]
                try:
                    outs = _evaluate(node, feeds)
                except Exception:
                    return None
                if any(not isinstance(o, np.ndarray) or o.size > MAX_ELEMENTS for o in outs):
                    return None
                if any(o.dtype.kind == "f" and not np.all(np.isfinite(o)) and o.size for o in outs):
                    pass  # NaN and infinities are fine: only shapes and integer contents are claimed
                outs_k.append(outs)
                for name, arr in zip(node.output, outs):
                    env[k][name] = arr
            for j, name in enumerate(node.output):
                if name:
                    produced.append(Tensor(name, [outs_k[0][j], outs_k[1][j]]))
        self.nodes.extend(nodes)
        self.tensors.extend(produced)
        self.ops.append(op)
        return produced

    # -- picking operands ---------------------------------------------------------------------

    def pick(self, pred: Callable[[Tensor], bool] = lambda t: True, floats: bool = True) -> Tensor | None:
        cands = [t for t in self.tensors if (not floats or t.dtype == np.float32) and pred(t)]
        if not cands:
            return None
        # Prefer recent tensors so chains grow deep.
        weights = [1 + i for i in range(len(cands))]
        return self.rng.choices(cands, weights)[0]

    def node(self, op: str, inputs: list[str], n_out: int = 1, **attrs: Any) -> onnx.NodeProto:
        return h.make_node(op, inputs, [self.name() for _ in range(n_out)], **attrs)

    # -- the emitters -------------------------------------------------------------------------

    def unary(self) -> Any:
        x = self.pick()
        op = self.rng.choice(["Relu", "Neg", "Abs", "Sigmoid", "Tanh", "Floor", "Identity", "Softplus", "Exp"])
        return x and self.try_nodes([self.node(op, [x.name])], op)

    def binary(self) -> Any:
        x = self.pick()
        if x is None:
            return None
        op = self.rng.choice(["Add", "Sub", "Mul", "Div", "Max", "Min", "Pow"])
        others = [t for t in self.tensors if t.dtype == np.float32 and _broadcasts(x, t)]
        if others and self.rng.random() < 0.6:
            y = self.rng.choice(others).name
        else:
            shape = [x.fixed(a) or 1 if self.rng.random() < 0.7 else 1 for a in range(x.rank)]
            shape = shape[self.rng.randint(0, len(shape)) :] if shape else []
            if self.rng.random() < 0.2:
                shape = [self.rng.choice([1, 2])] + shape
            y = self.const(self.np_rng.standard_normal(shape).astype(np.float32) if shape else 0.5, np.float32)
        ins = [x.name, y] if self.rng.random() < 0.5 else [y, x.name]
        return self.try_nodes([self.node(op, ins)], op)

    def matmul(self) -> Any:
        x = self.pick(lambda t: t.rank >= 1)
        if x is None:
            return None
        k = x.fixed(x.rank - 1)
        if k is not None and self.rng.random() < 0.6:
            w = self.const(self.np_rng.standard_normal((k, self.rng.randint(1, 5))).astype(np.float32), np.float32)
            return self.try_nodes([self.node("MatMul", [x.name, w])], "MatMul")
        if x.rank >= 2:
            perm = list(range(x.rank - 2)) + [x.rank - 1, x.rank - 2]
            t = self.node("Transpose", [x.name], perm=perm)
            return self.try_nodes([t, self.node("MatMul", [x.name, t.output[0]])], "MatMul")
        return None

    def transpose(self) -> Any:
        x = self.pick(lambda t: t.rank >= 2)
        if x is None:
            return None
        perm = list(range(x.rank))
        self.rng.shuffle(perm)
        return self.try_nodes([self.node("Transpose", [x.name], perm=perm)], "Transpose")

    def reshape_computed(self) -> Any:
        """Shape -> Slice/Gather -> (arith) -> Concat -> Reshape: the value propagation path."""
        x = self.pick(lambda t: t.rank >= 2)
        if x is None:
            return None
        shape = self.node("Shape", [x.name])
        keep = self.rng.randint(1, x.rank - 1)
        head = self.node("Slice", [shape.output[0], self.const([0]), self.const([keep])])
        nodes = [shape, head]
        tail = self.const([-1])
        if self.rng.random() < 0.4:
            # Merge the last two axes explicitly: d[-2] * d[-1] computed in the graph.
            g1 = self.node("Gather", [shape.output[0], self.const([x.rank - 2])], axis=0)
            g2 = self.node("Gather", [shape.output[0], self.const([x.rank - 1])], axis=0)
            mul = self.node("Mul", [g1.output[0], g2.output[0]])
            nodes += [g1, g2, mul]
            tail = mul.output[0]
            if keep != x.rank - 2:
                return None
        cat = self.node("Concat", [head.output[0], tail], axis=0)
        nodes += [cat, self.node("Reshape", [x.name, cat.output[0]])]
        return self.try_nodes(nodes, "Reshape")

    def reshape_const(self) -> Any:
        x = self.pick(lambda t: t.rank >= 1)
        if x is None:
            return None
        target = [0] * min(x.rank, self.rng.randint(0, 2)) + [-1]
        if self.rng.random() < 0.3:
            target = target + [1]
        return self.try_nodes([self.node("Reshape", [x.name, self.const(target)])], "Reshape")

    def flatten(self) -> Any:
        x = self.pick()
        if x is None:
            return None
        return self.try_nodes([self.node("Flatten", [x.name], axis=self.rng.randint(-x.rank, x.rank))], "Flatten")

    def unsqueeze(self) -> Any:
        x = self.pick(lambda t: t.rank <= 4)
        if x is None:
            return None
        r = x.rank + 1
        axes = sorted(self.rng.sample(range(-r, r), 1))
        return self.try_nodes([self.node("Unsqueeze", [x.name, self.const(axes)])], "Unsqueeze")

    def squeeze(self) -> Any:
        x = self.pick(lambda t: any(t.fixed(a) == 1 for a in range(t.rank)))
        if x is None:
            return None
        ones = [a for a in range(x.rank) if x.fixed(a) == 1]
        axes = [self.rng.choice(ones)]
        ins = [x.name, self.const(axes)] if self.rng.random() < 0.7 else [x.name]
        return self.try_nodes([self.node("Squeeze", ins)], "Squeeze")

    def concat(self) -> Any:
        x = self.pick(lambda t: t.rank >= 1)
        if x is None:
            return None
        axis = self.rng.randrange(x.rank)
        others = [
            t
            for t in self.tensors
            if t.dtype == x.dtype
            and t.rank == x.rank
            and all(t.shapes[k][a] == x.shapes[k][a] for k in range(2) for a in range(x.rank) if a != axis)
        ]
        y = self.rng.choice(others) if others else x
        return self.try_nodes(
            [self.node("Concat", [x.name, y.name], axis=axis - x.rank * self.rng.randint(0, 1))], "Concat"
        )

    def slice(self) -> Any:
        x = self.pick(lambda t: t.rank >= 1)
        if x is None:
            return None
        axis = self.rng.randrange(x.rank)
        big = [2**63 - 1, 2**31 - 1, -(2**63)]
        start = self.rng.choice([0, 1, 2, -1, -2, -3, 5, *big])
        end = self.rng.choice([0, 1, 2, 3, -1, -2, 100, *big])
        step = self.rng.choice([1, 1, 2, 3, -1, -2])
        ins = [x.name, self.const([start]), self.const([end]), self.const([axis]), self.const([step])]
        return self.try_nodes([self.node("Slice", ins)], "Slice")

    def reduce(self) -> Any:
        x = self.pick(lambda t: t.rank >= 1)
        if x is None:
            return None
        op = self.rng.choice(["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd"])
        axes = sorted(set(self.rng.sample(range(x.rank), self.rng.randint(1, x.rank))))
        keep = self.rng.randint(0, 1)
        ins = [x.name, self.const(axes)]
        if op == "ReduceSum" or OPSET >= 18:
            return self.try_nodes([self.node(op, ins, keepdims=keep)], op)
        return None

    def softmax(self) -> Any:
        x = self.pick(lambda t: t.rank >= 1)
        op = self.rng.choice(["Softmax", "LogSoftmax"])
        return x and self.try_nodes([self.node(op, [x.name], axis=self.rng.randint(-x.rank, x.rank - 1))], op)

    def gather(self) -> Any:
        x = self.pick(lambda t: t.rank >= 1)
        if x is None:
            return None
        axis = self.rng.randrange(x.rank)
        n = min(s[axis] for s in x.shapes)
        if n == 0:
            return None
        shape = self.rng.choice([(), (2,), (1, 3)])
        idx = self.np_rng.integers(-n, n, size=shape)
        return self.try_nodes([self.node("Gather", [x.name, self.const(idx)], axis=axis)], "Gather")

    def expand(self) -> Any:
        x = self.pick()
        if x is None:
            return None
        shape = [self.rng.choice([1, 2, 3])] + [1] * x.rank
        return self.try_nodes([self.node("Expand", [x.name, self.const(shape)])], "Expand")

    def expand_computed(self) -> Any:
        """Expand a broadcastable tensor to another's computed shape."""
        x = self.pick(lambda t: t.rank >= 1)
        if x is None:
            return None
        y = self.pick(lambda t: _broadcasts(t, x) and t.rank <= x.rank)
        if y is None:
            return None
        shape = self.node("Shape", [x.name])
        return self.try_nodes([shape, self.node("Expand", [y.name, shape.output[0]])], "Expand")

    def tile(self) -> Any:
        x = self.pick(lambda t: t.rank >= 1)
        if x is None:
            return None
        reps = [self.rng.randint(1, 3) for _ in range(x.rank)]
        return self.try_nodes([self.node("Tile", [x.name, self.const(reps)])], "Tile")

    def pad(self) -> Any:
        x = self.pick(lambda t: t.rank >= 1)
        if x is None:
            return None
        pads = [self.rng.randint(0, 2) for _ in range(2 * x.rank)]
        mode = self.rng.choice(["constant", "constant", "edge", "reflect"])
        return self.try_nodes([self.node("Pad", [x.name, self.const(pads)], mode=mode)], "Pad")

    def conv_like(self) -> Any:
        x = self.pick(lambda t: t.rank == 4 and t.fixed(1) is not None)
        if x is None:
            return None
        c = x.fixed(1)
        op = self.rng.choice(["Conv", "MaxPool", "AveragePool", "LpPool"])
        k = [self.rng.randint(1, 3), self.rng.randint(1, 3)]
        attrs: dict[str, Any] = {"kernel_shape": k, "strides": [self.rng.randint(1, 3), self.rng.randint(1, 3)]}
        auto = self.rng.choice(["NOTSET", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"])
        if auto == "NOTSET":
            attrs["pads"] = [self.rng.randint(0, k[0] - 1), self.rng.randint(0, k[1] - 1)] * 2
        else:
            attrs["auto_pad"] = auto
        if op in ("Conv", "MaxPool") and self.rng.random() < 0.3:
            attrs["dilations"] = [self.rng.randint(1, 2), self.rng.randint(1, 2)]
        if op in ("MaxPool", "AveragePool") and self.rng.random() < 0.4 and auto == "NOTSET":
            attrs["ceil_mode"] = 1
        ins = [x.name]
        if op == "Conv":
            w = self.np_rng.standard_normal((self.rng.randint(1, 4), c, *k)).astype(np.float32)
            ins.append(self.const(w, np.float32))
        return self.try_nodes([self.node(op, ins, **attrs)], op)

    def global_pool(self) -> Any:
        x = self.pick(lambda t: t.rank >= 3)
        op = self.rng.choice(["GlobalAveragePool", "GlobalMaxPool"])
        return x and self.try_nodes([self.node(op, [x.name])], op)

    def split(self) -> Any:
        x = self.pick(lambda t: t.rank >= 1)
        if x is None:
            return None
        axis = self.rng.randrange(x.rank)
        n = x.fixed(axis)
        if n is not None and n >= 2 and self.rng.random() < 0.5:
            first = self.rng.randint(1, n - 1)
            return self.try_nodes([self.node("Split", [x.name, self.const([first, n - first])], 2, axis=axis)], "Split")
        parts = self.rng.randint(1, 3)
        return self.try_nodes([self.node("Split", [x.name], parts, axis=axis, num_outputs=parts)], "Split")

    def cast(self) -> Any:
        x = self.pick()
        if x is None:
            return None
        to = self.rng.choice([TP.INT64, TP.DOUBLE, TP.FLOAT16, TP.INT32, TP.BOOL])
        nodes = [self.node("Cast", [x.name], to=to)]
        nodes.append(self.node("Cast", [nodes[0].output[0]], to=TP.FLOAT))
        return self.try_nodes(nodes, "Cast")

    def shape_ops(self) -> Any:
        """Shape (with start/end), Size, ConstantOfShape, Range from computed extents."""
        x = self.pick()
        if x is None:
            return None
        choice = self.rng.randint(0, 3)
        if choice == 0:
            attrs = {}
            if self.rng.random() < 0.5 and x.rank:
                attrs["start"] = self.rng.randint(-x.rank, x.rank)
            s = self.node("Shape", [x.name], **attrs)
            fill = h.make_tensor("value", TP.FLOAT, [1], [1.5])
            return self.try_nodes([s, self.node("ConstantOfShape", [s.output[0]], value=fill)], "ConstantOfShape")
        if choice == 1:
            size = self.node("Size", [x.name])
            delta = self.rng.choice([1, 2, 3])
            r = self.node("Range", [self.const(0), size.output[0], self.const(delta)])
            return self.try_nodes([size, r, self.node("Cast", [r.output[0]], to=TP.FLOAT)], "Range")
        if choice == 2 and x.rank >= 1:
            s = self.node("Shape", [x.name])
            g = self.node("Gather", [s.output[0], self.const(self.rng.randrange(x.rank))], axis=0)
            op = self.rng.choice(["Add", "Sub", "Mul", "Div", "Max", "Min"])
            k = self.rng.choice([1, 2, 3])
            arith = self.node(op, [g.output[0], self.const(k)])
            if op == "Sub":
                arith = self.node("Add", [g.output[0], self.const(k)])
            u = self.node("Unsqueeze", [arith.output[0], self.const([0])])
            fill = h.make_tensor("value", TP.FLOAT, [1], [0.0])
            return self.try_nodes([s, g, arith, u, self.node("ConstantOfShape", [u.output[0]], value=fill)], op)
        s = self.node("Shape", [x.name])
        return self.try_nodes([s, self.node("Cast", [s.output[0]], to=TP.FLOAT)], "Shape")

    def where(self) -> Any:
        x = self.pick()
        if x is None:
            return None
        y = self.pick(lambda t: _broadcasts(x, t))
        cond = self.node("Greater", [x.name, self.const(0.0, np.float32)])
        return y and self.try_nodes([cond, self.node("Where", [cond.output[0], x.name, y.name])], "Where")

    def topk(self) -> Any:
        x = self.pick(lambda t: t.rank >= 1)
        if x is None:
            return None
        axis = self.rng.randrange(x.rank)
        n = min(s[axis] for s in x.shapes)
        if n < 1:
            return None
        node = self.node("TopK", [x.name, self.const([self.rng.randint(1, n)])], 2, axis=axis)
        return self.try_nodes([node, self.node("Cast", [node.output[1]], to=TP.FLOAT)], "TopK")

    def argmax(self) -> Any:
        x = self.pick(lambda t: t.rank >= 1)
        if x is None:
            return None
        op = self.rng.choice(["ArgMax", "ArgMin"])
        node = self.node(op, [x.name], axis=self.rng.randrange(x.rank), keepdims=self.rng.randint(0, 1))
        return self.try_nodes([node, self.node("Cast", [node.output[0]], to=TP.FLOAT)], op)

    def if_(self) -> Any:
        x = self.pick()
        if x is None:
            return None
        red = self.node("ReduceSum", [x.name], keepdims=0)
        cond = self.node("Greater", [red.output[0], self.const(0.0, np.float32)])
        same = self.rng.random() < 0.6
        t_out, e_out = self.name("t"), self.name("e")
        then_g = h.make_graph(
            [h.make_node("Relu", [x.name], [t_out])], "then", [], [h.make_tensor_value_info(t_out, TP.FLOAT, None)]
        )
        other = (
            h.make_node("Neg", [x.name], [e_out]) if same else h.make_node("Concat", [x.name, x.name], [e_out], axis=0)
        )
        if not same and x.rank == 0:
            return None
        else_g = h.make_graph([other], "else", [], [h.make_tensor_value_info(e_out, TP.FLOAT, None)])
        node = self.node("If", [cond.output[0]], then_branch=then_g, else_branch=else_g)
        return self.try_nodes([red, cond, node], "If")

    def resize(self) -> Any:
        x = self.pick(lambda t: t.rank in (3, 4))
        if x is None:
            return None
        scales = [1.0, 1.0] + [self.rng.choice([0.5, 1.0, 1.5, 2.0, 3.0]) for _ in range(x.rank - 2)]
        ins = [x.name, "", self.const(scales, np.float32)]
        return self.try_nodes([self.node("Resize", ins, mode="nearest")], "Resize")

    def depth_space(self) -> Any:
        x = self.pick(lambda t: t.rank == 4 and t.fixed(1) is not None and t.fixed(1) % 4 == 0)
        return x and self.try_nodes([self.node("DepthToSpace", [x.name], blocksize=2)], "DepthToSpace")

    def cumsum(self) -> Any:
        x = self.pick(lambda t: t.rank >= 1)
        if x is None:
            return None
        op = self.rng.choice(["CumSum", "Trilu"])
        if op == "Trilu":
            if x.rank < 2:
                return None
            return self.try_nodes([self.node("Trilu", [x.name], upper=self.rng.randint(0, 1))], op)
        return self.try_nodes([self.node("CumSum", [x.name, self.const(self.rng.randrange(x.rank))])], op)

    EMITTERS = (
        "unary", "binary", "binary", "matmul", "transpose", "reshape_computed", "reshape_computed",
        "reshape_const", "flatten", "unsqueeze", "squeeze", "concat", "slice", "slice", "reduce", "softmax",
        "gather", "expand", "expand_computed", "tile", "pad", "conv_like", "conv_like", "global_pool",
        "split", "cast", "shape_ops", "shape_ops", "where", "topk", "argmax", "if_", "resize",
        "depth_space", "cumsum",
    )  # fmt: skip

    def build(self, n_nodes: int) -> Built | None:
        for _ in range(self.rng.randint(1, 2)):
            self.add_input()
        attempts = 0
        while len(self.ops) < n_nodes and attempts < n_nodes * 6:
            attempts += 1
            getattr(self, self.rng.choice(self.EMITTERS))()
        if not self.nodes:
            return None
        outputs = [h.make_tensor_value_info(self.nodes[-1].output[0], TP.UNDEFINED, None)]
        outputs[0].ClearField("type")
        graph = h.make_graph(self.nodes, "random", self.inputs, outputs, self.inits)
        model = h.make_model(graph, opset_imports=[h.make_opsetid("", OPSET)])
        model.ir_version = 8
        return Built(model, self.bindings, self.feeds, self.ops)


_EVAL_CACHE: dict[bytes, ReferenceEvaluator] = {}


def _evaluate(node: onnx.NodeProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    inputs = [h.make_tensor_value_info(k, h.np_dtype_to_tensor_dtype(v.dtype), v.shape) for k, v in feeds.items()]
    outputs = [h.make_tensor_value_info(o, TP.UNDEFINED, None) for o in node.output if o]
    g = h.make_graph([node], "one", inputs, outputs)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", OPSET)])
    m.ir_version = 8
    return list(ReferenceEvaluator(m).run(None, feeds))


def _broadcasts(a: Tensor, b: Tensor) -> bool:
    try:
        for k in range(2):
            np.broadcast_shapes(a.shapes[k], b.shapes[k])
    except ValueError:
        return False
    return True


def random_model(seed: int, n_nodes: int | None = None) -> Built | None:
    """A random valid model (``None`` when the generator found nothing valid to build)."""
    gen = Generator(seed)
    return gen.build(n_nodes if n_nodes is not None else gen.rng.randint(4, 16))


@dataclass
class Soundness:
    """The verdict on one random model."""

    seed: int
    ran: bool  # onnxruntime ran it at both bindings
    values: int = 0
    exact: int = 0
    wrong: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # error diagnostics on a valid model
    ops: list[str] = field(default_factory=list)
    model: onnx.ModelProto | None = None


def check_soundness(seed: int, n_nodes: int | None = None) -> Soundness:
    """Build the random model of ``seed``, run it in onnxruntime, check every inferred claim."""
    import infer
    from tests.support.runtime import check, expose_all, run

    built = random_model(seed, n_nodes)
    if built is None:
        return Soundness(seed, ran=False)
    exposed = expose_all(built.model)
    runs = []
    try:
        for k in range(2):
            runs.append((built.bindings[k], run(exposed, built.feeds[k])))
    except Exception:
        return Soundness(seed, ran=False, ops=built.ops, model=built.model)
    result = infer.infer_model(built.model)
    verdict = check(result, runs)
    errors = [str(d) for d in result.diagnostics if d.severity == "error"]
    return Soundness(seed, True, verdict.values, verdict.exact, verdict.wrong, errors, built.ops, built.model)


def main(argv: list[str]) -> int:
    """``python -m tests.fuzz.randmodels FIRST COUNT``: one JSON line per seed (see campaign)."""
    import json
    import sys

    import onnxruntime as ort

    ort.set_default_logger_severity(4)
    first, count = int(argv[0]), int(argv[1])
    for seed in range(first, first + count):
        print(json.dumps({"start": seed}), flush=True)
        r = check_soundness(seed)
        verdict = {k: getattr(r, k) for k in ("seed", "ran", "values", "exact", "wrong", "errors", "ops")}
        sys.stdout.write(json.dumps(verdict) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
