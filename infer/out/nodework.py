"""The arithmetic work of a node, from its inferred shapes (a part of ``infer.out.cost``).

Convention (docs/cost.md): ``macs`` counts the multiply-accumulates of contractions (MatMul and
its quantized and contrib forms, Gemm, Conv, ConvTranspose, attention, Einsum) and is 0 for every
other operator; ``flops`` is 2 per multiply-accumulate, plus one per output element for a bias
added, plus for other operators: one per output element (elementwise), one per input element
(reductions), one per window element per output element (pooling), a stated constant per input
element (normalizations, Softmax), 0 for operators that only move or reshape data. Anything else
is unknown, with the reason.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from onnx import AttributeProto, NodeProto, helper

from infer.core import dims as D
from infer.core import types as T
from infer.core.dims import Dim
from infer.core.scopes import GraphRecord
from infer.out.noderead import NodeReads

ELEMENTWISE = frozenset(
    "Abs Acos Acosh Add And Asin Asinh Atan Atanh BitShift BitwiseAnd BitwiseNot BitwiseOr BitwiseXor Cast "
    "CastLike Ceil Celu Clip Cos Cosh DequantizeLinear Div Elu Equal Erf Exp Floor Gelu Greater GreaterOrEqual "
    "HardSigmoid HardSwish IsInf IsNaN LeakyRelu Less LessOrEqual Log Max Mean Min Mish Mod Mul Neg Not Or "
    "PRelu Pow QuantizeLinear Reciprocal Relu Round Selu Shrink Sigmoid Sign Sin Sinh Softplus Softsign Sqrt "
    "Sub Sum Tan Tanh ThresholdedRelu Trilu Where Xor BiasGelu FastGelu QuickGelu BiasAdd Range "
    "DynamicQuantizeLinear".split()
)
REDUCTIONS = frozenset(
    "ReduceSum ReduceMean ReduceMax ReduceMin ReduceProd ReduceL1 ReduceL2 ReduceLogSum ReduceLogSumExp "
    "ReduceSumSquare ArgMax ArgMin CumSum".split()
)
MOVES = frozenset(
    "Reshape Flatten Squeeze Unsqueeze Identity Shape Size Transpose Gather GatherElements GatherND Concat "
    "Slice Split Expand Tile Pad Constant ConstantOfShape DepthToSpace SpaceToDepth ScatterND ScatterElements "
    "Dropout EyeLike OneHot".split()
)
# FLOPs per input element: mean, variance, normalize, scale, shift (what each form does).
PER_ELEMENT = {
    "BatchNormalization": 2,
    "InstanceNormalization": 5,
    "LayerNormalization": 5,
    "GroupNormalization": 5,
    "SimplifiedLayerNormalization": 4,
    "RMSNormalization": 4,
    "SkipLayerNormalization": 6,
    "SkipSimplifiedLayerNormalization": 5,
    "LpNormalization": 3,
    "MeanVarianceNormalization": 5,
    "Softmax": 3,
    "LogSoftmax": 4,
    "Hardmax": 1,
}
POOLS = frozenset("MaxPool AveragePool LpPool".split())
GLOBAL_POOLS = frozenset("GlobalMaxPool GlobalAveragePool GlobalLpPool".split())
CONTROL = frozenset("If Loop Scan SequenceMap".split())


@dataclass(slots=True)  # not frozen: a frozen one takes four times as long to make, once per node
class NodeWork:
    """One node of the main graph: its multiply-accumulates and FLOPs, or why not known."""

    index: int
    op_type: str
    domain: str
    macs: Dim
    flops: Dim
    why: str = ""  # why the work is unknown
    subgraphs: bool = False  # holds a graph (If, Loop, Scan): its values are not in the peak
    # The graph's nodes, for the name: read from protobuf when asked for (the walk keeps no names).
    source: Sequence[NodeProto] = field(default=(), repr=False, compare=False)

    @property
    def name(self) -> str:
        return self.source[self.index].name if self.index < len(self.source) else ""

    @property
    def known(self) -> bool:
        return self.flops is not None

    def to_json(self, text: Callable[[Dim], str | None] | None = None, name: str | None = None) -> dict[str, Any]:
        """``text``: a term's text (a caller writing many nodes passes a memo of ``_text``, since
        a repeated layer repeats its terms); ``name``: the node's, where the caller has read it."""
        text = text or _text
        return {
            "node": self.index,
            "name": self.name if name is None else name,
            "op_type": self.op_type,
            "domain": self.domain,
            "macs": text(self.macs),
            "flops": text(self.flops),
            "why": self.why or None,
        }


def _text(d: Dim) -> str | None:
    return None if d is None else D.to_str(d)


def texts() -> Callable[[Dim], str | None]:
    """``_text`` with a memo, for one statement's terms."""
    seen: dict[Dim, str | None] = {}

    def text(d: Dim) -> str | None:
        if d in seen:
            return seen[d]
        out = seen[d] = _text(d)
        return out

    return text


Counter = Callable[[tuple[Dim, ...]], Dim]  # the element count of a fully known shape


class _Shapes:
    """A node's input and output shapes (``None`` when absent or not fully known), attributes,
    and the element count of a shape (``count``: the caller's, memoized across nodes)."""

    __slots__ = ("_attrs", "count", "index", "inputs", "nodes", "outputs", "rec")

    def __init__(self, rec: GraphRecord, nodes: NodeReads, index: int, count: Counter):
        self.rec, self.nodes, self.index, self.count = rec, nodes, index, count
        self.inputs, self.outputs = nodes.inputs[index], nodes.outputs[index]
        self._attrs: dict[str, AttributeProto] | None = None

    def _shape(self, names: Sequence[str], k: int) -> tuple[Dim, ...] | None:
        v = self.rec.values.get(names[k]) if k < len(names) else None
        t = None if v is None else v.type
        if type(t) is not T.TensorType or t.shape is None or None in t.shape:
            return None
        return t.shape

    def inp(self, k: int) -> tuple[Dim, ...] | None:
        return self._shape(self.inputs, k)

    def out(self, k: int) -> tuple[Dim, ...] | None:
        return self._shape(self.outputs, k)

    def has_input(self, k: int) -> bool:
        return k < len(self.inputs) and bool(self.inputs[k])

    def attr(self, name: str, default: Any = None) -> Any:
        if self._attrs is None:
            self._attrs = {a.name: a for a in self.nodes.node(self.index).attribute}
        a = self._attrs.get(name)
        return default if a is None or a.ref_attr_name else helper.get_attribute_value(a)

    def elements(self, shape: tuple[Dim, ...] | None) -> Dim:
        return None if shape is None else self.count(shape)


Formula = Callable[[_Shapes], "tuple[Dim, Dim] | str"]


def _contraction(s: _Shapes, out: tuple[Dim, ...] | None, k: Dim, bias: Dim = 0) -> tuple[Dim, Dim] | str:
    """Work of ``out``'s elements each a dot product of length ``k``, plus ``bias`` FLOPs."""
    if out is None or k is None:
        return "a shape it needs is not fully known"
    macs = D.mul(s.count(out), k)
    return macs, D.add(D.mul(macs, 2), bias)


def _matmul(a_index: int) -> Formula:
    def formula(s: _Shapes) -> tuple[Dim, Dim] | str:
        a = s.inp(a_index)
        if s.attr("transBatchA", 0) or s.attr("transBatchB", 0):
            return "a batch transposition is not costed"
        if not a:
            return "a shape it needs is not fully known"
        k = a[-2] if s.attr("transA", 0) and len(a) >= 2 else a[-1]
        return _contraction(s, s.out(0), k)

    return formula


def _gemm(s: _Shapes) -> tuple[Dim, Dim] | str:
    a, y = s.inp(0), s.out(0)
    if a is None or len(a) != 2:
        return "a shape it needs is not fully known"
    bias = s.elements(y) if s.has_input(2) else 0
    return _contraction(s, y, a[0] if s.attr("transA", 0) else a[1], bias)


def _conv(w_index: int, bias_index: int, transposed: bool = False) -> Formula:
    def formula(s: _Shapes) -> tuple[Dim, Dim] | str:
        w, y = s.inp(w_index), s.out(0)
        if w is None or y is None:
            return "a shape it needs is not fully known"
        bias = s.elements(y) if s.has_input(bias_index) else 0
        if not transposed:
            return _contraction(s, y, s.count(w[1:]), bias)
        # Each input element is scattered to (output channels / group) * window outputs.
        x = s.inp(0)
        if x is None:
            return "a shape it needs is not fully known"
        macs = D.mul(s.count(x), s.count(w[1:]))
        return macs, D.add(D.mul(macs, 2), bias)

    return formula


def _attention(s: _Shapes) -> tuple[Dim, Dim] | str:
    """com.microsoft Attention: the QKV projection, then Q.K^T and the weights times V over the
    total (past and new) sequence."""
    x, w, y = s.inp(0), s.inp(1), s.out(0)
    if x is None or w is None or y is None or len(x) != 3 or len(w) != 2 or len(y) != 3:
        return "a shape it needs is not fully known"
    if s.attr("past_present_share_buffer", 0):
        return "the attended length is decided at run time"
    present = s.out(1)
    if present is not None and len(present) == 5:
        total = present[3]
    elif not s.has_input(4):
        total = x[1]
    else:
        return "the attended length is not known"
    sizes = s.attr("qkv_hidden_sizes") or []
    qk, v = (sizes[0], sizes[2]) if len(sizes) == 3 else (y[2], y[2])
    proj = D.mul(s.count(x), w[1])
    core = D.mul(D.mul(D.mul(x[0], x[1]), total), D.add(qk, v))
    macs = D.add(proj, core)
    return macs, D.mul(macs, 2)


def _multi_head(s: _Shapes) -> tuple[Dim, Dim] | str:
    """com.microsoft MultiHeadAttention with separate query, key and value: Q.K^T and the
    weights times V."""
    q, k, y = s.inp(0), s.inp(1), s.out(0)
    if q is None or k is None or y is None or len(q) != 3 or len(y) != 3:
        return "a packed or not fully known query, key or output is not costed"
    present = s.out(1)
    if present is not None and len(present) == 4:
        total = present[2]
    elif s.has_input(6):
        return "the attended length (past and new) is not known"
    elif len(k) == 3:
        total = k[1]
    elif len(k) == 4:
        total = k[2]
    else:
        return "a packed key is not costed"
    macs = D.mul(D.mul(D.mul(q[0], q[1]), total), D.add(q[2], y[2]))
    return macs, D.mul(macs, 2)


def _einsum(s: _Shapes) -> tuple[Dim, Dim] | str:
    """Einsum: the product of every index's extent (the loop nest), times operands - 1."""
    raw = s.attr("equation", b"")
    eq = (raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw or "")).replace(" ", "")
    lhs = eq.split("->")[0]
    terms = lhs.split(",")
    if not eq or any("." in t for t in terms) or len(terms) != len(s.inputs):
        return "an equation with an ellipsis or not matching its inputs is not costed"
    extents: dict[str, Dim] = {}
    for k, letters in enumerate(terms):
        shape = s.inp(k)
        if shape is None or len(shape) != len(letters) or not re.fullmatch(r"[A-Za-z]*", letters):
            return "a shape it needs is not fully known"
        for c, d in zip(letters, shape):
            if extents.setdefault(c, d) != d and D.equal(extents[c], d) is not True:
                return f"the extents of index {c} are not proven equal"
    space = D.product(extents.values())
    if len(terms) == 1:
        return 0, space
    macs = D.mul(space, len(terms) - 1)
    return macs, D.mul(macs, 2)


def _pool(s: _Shapes) -> tuple[Dim, Dim] | str:
    kernel = s.attr("kernel_shape")
    y = s.out(0)
    if not kernel or y is None:
        return "a shape it needs is not fully known"
    return 0, D.mul(s.count(y), D.product(kernel))


CONTRACTIONS: dict[str, Formula] = {
    "MatMul": _matmul(0),
    "MatMulInteger": _matmul(0),
    "QLinearMatMul": _matmul(0),
    "FusedMatMul": _matmul(0),
    "MatMulNBits": _matmul(0),
    "MatMulBnb4": _matmul(0),
    "MatMulIntegerToFloat": _matmul(0),
    "DynamicQuantizeMatMul": _matmul(0),
    "Gemm": _gemm,
    "Conv": _conv(1, 2),
    "ConvInteger": _conv(1, 99),
    "QLinearConv": _conv(3, 8),
    "FusedConv": _conv(1, 2),
    "ConvTranspose": _conv(1, 2, transposed=True),
    "Attention": _attention,
    "MultiHeadAttention": _multi_head,
    "Einsum": _einsum,
}


@lru_cache(maxsize=1024)
def _formula(op: str) -> Formula | None:
    """The formula of ``op`` (of the default or com.microsoft domain), ``None`` where none."""
    if op in MOVES:
        return _MOVES
    if op in CONTRACTIONS:
        return CONTRACTIONS[op]
    if op in POOLS:
        return _pool
    for ops, pick, per in (
        (ELEMENTWISE, "out", 1),
        (REDUCTIONS, "inp", 1),
        (GLOBAL_POOLS, "inp", 1),
        (PER_ELEMENT, "inp", None),
    ):
        if op in ops:
            return _per_element(pick, PER_ELEMENT[op] if per is None else per)
    return None


def _moves(s: _Shapes) -> tuple[Dim, Dim]:
    return 0, 0


_MOVES: Formula = _moves  # operators that only move data: no shape read


def _per_element(pick: str, per: int) -> Formula:
    def formula(s: _Shapes) -> tuple[Dim, Dim] | str:
        n = s.elements(s.out(0) if pick == "out" else s.inp(0))
        if n is None:
            return "a shape it needs is not fully known"
        return 0, n if per == 1 else D.mul(n, per)

    return formula


def node_work(rec: GraphRecord, index: int, nodes: NodeReads, count: Counter = D.product) -> NodeWork:
    """The work of the ``index``-th of ``nodes`` (``rec``'s, as read), by the conventions of this
    module; ``count`` gives a shape's element count (``D.product``, or a memo of it)."""
    op, dom = nodes.op_types[index], nodes.domains[index]
    held = index in nodes.held
    got: tuple[Dim, Dim] | str
    if held or op in CONTROL:
        got = "control flow: the work of its body is not counted"
    elif (formula := _formula(op) if dom in ("", "ai.onnx", "com.microsoft") else None) is None:
        got = f"no cost formula for {dom + '::' if dom else ''}{op}"
    elif formula is _MOVES:
        got = (0, 0)
    else:
        got = formula(_Shapes(rec, nodes, index, count))
        if not isinstance(got, str) and (got[0] is None or got[1] is None):
            got = "past the bound of extent arithmetic"
    if isinstance(got, str):
        return NodeWork(index, op, dom, None, None, got, held, nodes.source)
    return NodeWork(index, op, dom, got[0], got[1], "", held, nodes.source)


def total(nodes: Sequence[NodeWork], what: str) -> tuple[Dim, int]:
    """The sum of ``what`` (``macs`` or ``flops``) over the nodes whose work is known, and how
    many are not (the sum is then a lower bound)."""
    known = [d for w in nodes if (d := getattr(w, what)) is not None]
    return D.sum_of(known), len(nodes) - len(known)
