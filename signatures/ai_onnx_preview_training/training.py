"""Optimizers and Gradient.

The optimizers take ``R`` (learning rate), ``T`` (step count) and then ``k`` groups of ``n``
tensors each (Adagrad: X, G, H; Momentum: X, G, V; Adam: X, G, V, H) and return the updated
tensors of every group except the gradients G, in input order: ``X_new``, then ``H_new`` (or
``V_new``, ``H_new``). Each new tensor has the shape of the one it replaces (the definitions say
so; onnx.reference computes them element-wise). ``T3`` is a heterogeneous variadic, so each new
tensor takes the element type of the one it replaces.
"""

from __future__ import annotations

from onnx import TensorProto

from infer.contract.context import RuleContext, RuleError
from infer.core.types import TensorType
from signatures.kit.helpers import same_dim
from signatures.kit.registry import example, rule

TRAINING = "ai.onnx.preview.training"

# Per operator: how many tensor groups follow R and T.
_GROUPS = {"Adagrad": 3, "Momentum": 3, "Adam": 4}


def _check_same(ctx: RuleContext, a: int, b: int) -> None:
    """The gradient (or state) ``b`` must have the shape of the tensor ``a`` it goes with."""
    sa, sb = ctx.shape(a), ctx.shape(b)
    if sa is None or sb is None:
        return
    if len(sa) != len(sb):
        raise RuleError(
            "shape-mismatch",
            f"{ctx.op_type}: `{ctx.input_name(b)}` has rank {len(sb)}, `{ctx.input_name(a)}` rank {len(sa)}",
        )
    for x, y in zip(sa, sb):
        same_dim(ctx, x, y, "extents of an optimized tensor and its gradient or state")


@rule(list(_GROUPS), domain=TRAINING)
def optimizer(ctx: RuleContext) -> list:
    groups = _GROUPS[ctx.op_type]
    tensors = ctx.n_inputs - 2
    if tensors <= 0 or tensors % groups:
        raise RuleError("arity", f"{ctx.op_type} needs 2 + {groups}*n inputs, got {ctx.n_inputs}")
    n = tensors // groups
    if ctx.n_outputs != (groups - 1) * n:
        raise RuleError(
            "arity", f"{ctx.op_type} with {n} optimized tensors has {(groups - 1) * n} outputs, not {ctx.n_outputs}"
        )
    for i in range(n):
        for g in range(1, groups):
            _check_same(ctx, 2 + i, 2 + g * n + i)
    kept = [0, *range(2, groups)]  # every group but the gradients (group 1)
    sources = [2 + g * n + i for g in kept for i in range(n)]
    return [TensorType(ctx.elem(j), ctx.shape(j)) for j in sources]


_GRADIENT_TYPES = {TensorProto.FLOAT16, TensorProto.FLOAT, TensorProto.DOUBLE}


@rule("Gradient", domain=TRAINING)
def gradient(ctx: RuleContext) -> list:
    """``d y / d xs[i]``: shaped and typed like the i-th input (the value of ``xs[i]``).

    The element type is claimed only when it is one the schema allows for gradients.
    """
    xs = ctx.require("xs")
    if ctx.n_outputs != len(xs):
        raise RuleError("arity", f"Gradient has {len(xs)} names in xs but {ctx.n_outputs} outputs")
    if ctx.n_inputs < len(xs):
        raise RuleError("arity", f"Gradient has {len(xs)} names in xs but only {ctx.n_inputs} inputs")
    out = []
    for i in range(len(xs)):
        elem = ctx.elem(i)
        out.append(TensorType(elem if elem in _GRADIENT_TYPES else None, ctx.shape(i)))
    return out


_T = "int64[]"
example(
    "Adagrad", ["float[]", _T, "float[3,N]", "float[3,N]", "float[3,N]"], ["float[3,N]", "float[3,N]"], domain=TRAINING
)
example(
    "Adagrad",
    ["float[]", _T, "double[4]", "double[K]", "double[4]", "double[K]", "double[4]", "double[K]"],
    ["double[4]", "double[K]", "double[4]", "double[K]"],
    domain=TRAINING,
)
example(
    "Momentum",
    ["float[]", _T, "float[N]", "float[N]", "float[N]"],
    ["float[N]", "float[N]"],
    {"alpha": 0.9, "beta": 0.1, "mode": "nesterov", "norm_coefficient": 0.0},
    domain=TRAINING,
)
example(
    "Adam",
    ["float[]", _T, "float[2,N]", "float[2,N]", "float[2,N]", "float[2,N]"],
    ["float[2,N]", "float[2,N]", "float[2,N]"],
    domain=TRAINING,
)
example(
    "Adam",
    ["float[]", _T, "float[2]", "float[3]", "float[2]", "float[2]"],
    ["float[2]"] * 3,
    domain=TRAINING,
    error="shape-mismatch",
)
example("Adagrad", ["float[]", _T, "float[2]", "float[2]"], ["unknown"], domain=TRAINING, error="arity")
example(
    "Gradient",
    ["float[N,3]", "double[4]", "int64[N]"],
    ["float[N,3]", "double[4]"],
    {"xs": ["x", "w"], "zs": ["z"], "y": "loss"},
    domain=TRAINING,
)
example("Gradient", ["float[N]"], ["unknown"] * 2, {"xs": ["x", "w"], "y": "loss"}, domain=TRAINING, error="arity")
