"""Normalization layers: the data keeps its shape; statistics have the reduced shape."""

from __future__ import annotations

from onnx import TensorProto

from infer.contract.context import RuleContext, RuleError
from infer.core.dims import Dim
from infer.core.types import TensorType
from signatures.kit.helpers import ONE, flag, norm_axis
from signatures.kit.registry import example, rule, shape_rule


@rule("BatchNormalization")
def batch_normalization(ctx: RuleContext) -> list:
    """Y has X's shape; every other output (running or saved statistics) is ``[C]``.

    Before opset 9, ``spatial=0`` keeps statistics per activation: ``[C, D1, ..., Dn]``.
    """
    x = ctx.shape(0)
    # onnxruntime (BatchNormalization-7) is spatial only for exactly 1: 2 and -1 read as 0.
    per_activation = ctx.version < 9 and not flag(ctx, "spatial", 1, ONE)
    if not per_activation:
        for i in range(1, min(ctx.n_inputs, 5)):
            r = ctx.rank(i)
            if r is not None and r != 1:
                raise RuleError("shape-mismatch", f"input {i} (scale, bias, mean or var) must be [C], has rank {r}")
        _check_channels(ctx, x)
    stats: tuple[Dim, ...] | None
    if x is None:
        # The statistics are [C] like the scale, whatever the data's rank.
        vectors = (s for i in range(1, 5) if (s := ctx.shape(i)) is not None and len(s) == 1)
        stats = None if per_activation else (next((s[0] for s in vectors), None),)
    elif per_activation:
        stats = x[1:]
    else:
        stats = (x[1] if len(x) > 1 else None,)
    return [x] + [stats] * (ctx.n_outputs - 1)


def _check_channels(ctx: RuleContext, x: tuple | None) -> None:
    """Scale, bias, mean and var have one entry per channel: a known extent other than C is an error."""
    if x is None or len(x) < 2 or not isinstance(x[1], int):
        return
    for i, what in enumerate(("scale", "bias", "mean", "var"), start=1):
        s = ctx.shape(i) if i < ctx.n_inputs else None
        if s is not None and len(s) == 1 and isinstance(s[0], int) and s[0] != x[1]:
            ctx.error(
                "shape-mismatch",
                f"{ctx.op_type} with inputs {ctx.input_types_str()}: {what} has {s[0]} entries, "
                f"the input {x[1]} channels",
            )


def _stash_type(ctx: RuleContext) -> int | None:
    """The element type of Mean and InvStdDev: ``stash_type``, one of U = {float, bfloat16}.

    Another value breaks the schema: it is reported and the type left unknown (onnxruntime loads
    ``stash_type=0`` and computes float; the reference evaluator refuses anything but float).
    """
    stash = ctx.attr("stash_type", 1)
    if stash in (TensorProto.FLOAT, TensorProto.BFLOAT16):
        return int(stash)
    if stash is not None:
        ctx.error("bad-attribute", f"{ctx.op_type}: stash_type {stash!r} is neither float (1) nor bfloat16 (16)")
    return None


def _check_normalized(ctx: RuleContext, normalized: tuple) -> None:
    """Scale and bias broadcast to the normalized dims: a known extent other than 1 or theirs is an error."""
    for i, what in ((1, "scale"), (2, "bias")):
        s = ctx.shape(i) if i < ctx.n_inputs else None
        if s is None:
            continue
        for d, want in zip(reversed(s), reversed(normalized)):
            if isinstance(d, int) and isinstance(want, int) and d not in (1, want):
                ctx.error(
                    "shape-mismatch",
                    f"{ctx.op_type} with inputs {ctx.input_types_str()}: {what} extent {d} does not "
                    f"broadcast to the normalized extent {want}",
                )
                break


@rule("LayerNormalization", since=17)
def layer_normalization(ctx: RuleContext) -> list:
    """Mean and InvStdDev keep the dims before ``axis`` and are 1 after; their type is stash_type."""
    x = ctx.shape(0)
    stash = _stash_type(ctx)
    if x is None:
        return [None, TensorType(stash, None), TensorType(stash, None)][: ctx.n_outputs]
    axis = norm_axis(ctx, ctx.attr("axis", -1), len(x))
    _check_normalized(ctx, x[axis:])
    stats = x[:axis] + (1,) * (len(x) - axis)
    return [x, TensorType(stash, stats), TensorType(stash, stats)][: ctx.n_outputs]


shape_rule(["LpNormalization", "MeanVarianceNormalization", "LRN"], "X[*s] -> Y[*s]")
# One scale and one bias per channel (onnxruntime refuses other lengths).
shape_rule("InstanceNormalization", "X[n, c, *s], S[c], B[c] -> Y[n, c, *s]")
shape_rule("GroupNormalization", "X[n, c, *s] -> Y[n, c, *s]")


example(
    "BatchNormalization",
    ["float[N,C,H,W]", "float[C]", "float[C]", "float[C]", "float[C]"],
    ["float[N,C,H,W]"],
    opset=15,
)
example(
    "BatchNormalization",
    ["float[N,3,H,W]", "float[4]", "float[3]", "float[3]", "float[3]"],
    ["float[N,3,H,W]"],
    opset=15,
    error="shape-mismatch",
)
example(
    "BatchNormalization",
    ["float[N,3,L]", "float[3]", "float[3]", "float[3]", "float[2]"],
    ["float[N,3,L]"],
    opset=9,
    error="shape-mismatch",
)
example(
    "LayerNormalization", ["float[B,S,64]", "float[64]", "float[64]"], ["float[B,S,64]", "float[B,S,1]", "float[B,S,1]"]
)
example(
    "LayerNormalization",
    ["float16[B,S,64]", "float16[S,64]"],
    ["float16[B,S,64]", "float[B,1,1]", "float[B,1,1]"],
    attrs={"axis": 1},
)
example(
    "LayerNormalization",
    ["float[B,S,64]", "float[64]"],
    ["float[B,S,64]", "bfloat16[B,S,1]", "bfloat16[B,S,1]"],
    attrs={"stash_type": TensorProto.BFLOAT16},
)
example("LayerNormalization", ["float[B,S,64]", "float[64]"], ["float[*]"], attrs={"axis": 3}, error="bad-attribute")
example(
    "LayerNormalization",
    ["float[B,S,64]", "float[32]"],
    ["float[B,S,64]", "float[B,S,1]", "float[B,S,1]"],
    error="shape-mismatch",
)
example(
    "LayerNormalization",
    ["float[B,S,64]", "float[64]"],
    ["float[B,S,64]", "?[B,S,1]", "?[B,S,1]"],
    attrs={"stash_type": TensorProto.INT64},
    error="bad-attribute",
)
example(
    "BatchNormalization",
    ["float[N,C,H,W]", "float[C]", "float[C]", "float[C]", "float[C]"],
    ["float[N,C,H,W]", "float[C]", "float[C]"],
    attrs={"training_mode": 1},
    opset=15,
)
example(
    "BatchNormalization",
    ["float[N,C,H,W]", "float[C,H,W]", "float[C,H,W]", "float[C,H,W]", "float[C,H,W]"],
    ["float[N,C,H,W]", "float[C,H,W]", "float[C,H,W]", "float[C,H,W]", "float[C,H,W]"],
    attrs={"spatial": 0},
    opset=7,
)
example(
    "BatchNormalization",
    ["float[N,C,L]", "float[C]", "float[C]", "float[C]", "float[C]"],
    ["float[N,C,L]", "float[C]", "float[C]", "float[C]", "float[C]"],
    attrs={"consumed_inputs": [0, 0, 0, 1, 1]},
    opset=1,
)
example("InstanceNormalization", ["float[N,C,H,W]", "float[C]", "float[C]"], ["float[N,C,H,W]"])
example("InstanceNormalization", ["float[N,3,H,W]", "float[2]", "float[2]"], ["float[N,3,H,W]"], error="shape-mismatch")
example("LpNormalization", ["float[N,C]"], ["float[N,C]"], attrs={"axis": 1, "p": 1})
example("MeanVarianceNormalization", ["float[N,C,H,W]"], ["float[N,C,H,W]"], opset=9)
example("LRN", ["float[N,C,H,W]"], ["float[N,C,H,W]"], attrs={"size": 3})
example(
    "GroupNormalization",
    ["float[N,C,H,W]", "float[C]", "float[C]"],
    ["float[N,C,H,W]"],
    attrs={"num_groups": 2},
    opset=21,
)
