"""Losses: SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss.

Scores are ``(N, C, d1, ..., dk)`` and labels ``(N, d1, ..., dk)``. Without reduction the loss
has the labels' shape; ``sum`` and ``mean`` reduce it to a scalar. SoftmaxCrossEntropyLoss's
optional ``log_prob`` has the scores' shape.
"""

from __future__ import annotations

from infer.contract.context import RuleContext, RuleError
from infer.core.dims import Dim
from signatures.kit.helpers import same_dim
from signatures.kit.registry import example, rule

_REDUCTIONS = ("none", "sum", "mean")


def _classes(ctx: RuleContext) -> Dim:
    """C, from the scores and the optional per-class weights."""
    scores = ctx.shape(0)
    if scores is not None and len(scores) < 2:
        raise RuleError("shape-mismatch", f"scores must be (N, C, d1, ..., dk), have rank {len(scores)}")
    c = None if scores is None else scores[1]
    weights = ctx.shape(2) if ctx.has(2) else None
    if weights is None:
        return c
    if len(weights) != 1:
        raise RuleError("shape-mismatch", f"weights must be a vector of C extents, have rank {len(weights)}")
    return weights[0] if c is None else same_dim(ctx, c, weights[0], "classes and weights")


def _per_sample(ctx: RuleContext) -> tuple[Dim, ...] | None:
    """The unreduced loss shape ``(N, d1, ..., dk)`` from the scores and the labels."""
    scores, labels = ctx.shape(0), ctx.shape(1)
    if labels is not None and not labels:
        raise RuleError("shape-mismatch", "labels must be (N, d1, ..., dk), are a scalar")
    from_scores = None if scores is None else (scores[0],) + tuple(scores[2:])
    if labels is None or from_scores is None:
        return from_scores if labels is None else labels
    if len(labels) != len(from_scores):
        raise RuleError("shape-mismatch", f"labels of rank {len(labels)} for scores of rank {len(from_scores) + 1}")
    return tuple(
        same_dim(ctx, a, b, f"scores and labels on axis {i}") for i, (a, b) in enumerate(zip(from_scores, labels))
    )


def _reduced(ctx: RuleContext, per_sample: tuple[Dim, ...] | None) -> tuple[Dim, ...] | None:
    reduction = ctx.attr("reduction", "mean")
    if reduction not in _REDUCTIONS:
        raise RuleError("bad-attribute", f"reduction {reduction!r} is not one of {', '.join(_REDUCTIONS)}")
    return per_sample if reduction == "none" else ()


@rule("SoftmaxCrossEntropyLoss", since=12)
def softmax_cross_entropy_loss(ctx: RuleContext) -> list:
    """The loss, and log_prob with the scores' shape ``(N, C, d1, ..., dk)``."""
    c = _classes(ctx)
    per_sample = _per_sample(ctx)
    log_prob = None if per_sample is None else (per_sample[0], c) + per_sample[1:]
    return [_reduced(ctx, per_sample), log_prob]


@rule("NegativeLogLikelihoodLoss", since=12)
def negative_log_likelihood_loss(ctx: RuleContext) -> list:
    _classes(ctx)
    return [_reduced(ctx, _per_sample(ctx))]


example("SoftmaxCrossEntropyLoss", ["float[N,C]", "int64[N]"], ["float[]", "float[N,C]"], opset=12)
example(
    "SoftmaxCrossEntropyLoss",
    ["bfloat16[N,C,D1,D2]", "int32[N,D1,D2]", "bfloat16[C]"],
    ["bfloat16[N,D1,D2]", "bfloat16[N,C,D1,D2]"],
    attrs={"reduction": "none", "ignore_index": -1},
    opset=13,
)
example(
    "SoftmaxCrossEntropyLoss",
    ["float[N,5,D]", "int64[?,D]", "float[5]"],
    ["float[]"],
    attrs={"reduction": "sum"},
    opset=13,
)
example(
    "SoftmaxCrossEntropyLoss",
    ["float[*]", "int64[N,D]", "float[7]"],
    ["float[N,D]", "float[N,7,D]"],
    attrs={"reduction": "none"},
    opset=13,
)
example("SoftmaxCrossEntropyLoss", ["float[N,C,D]", "int64[N]"], ["float[*]"], opset=13, error="shape-mismatch")
example(
    "SoftmaxCrossEntropyLoss",
    ["float[N,C]", "int64[N]"],
    ["float[*]"],
    attrs={"reduction": "max"},
    opset=13,
    error="bad-attribute",
)
example("NegativeLogLikelihoodLoss", ["float[N,C]", "int64[N]"], ["float[]"], opset=12)
example(
    "NegativeLogLikelihoodLoss",
    ["float16[N,C,D]", "int64[N,D]", "float16[C]"],
    ["float16[N,D]"],
    attrs={"reduction": "none"},
    opset=13,
)
example(
    "NegativeLogLikelihoodLoss", ["double[2,3,4]", "int32[2,?]"], ["double[2,4]"], attrs={"reduction": "none"}, opset=22
)
example("NegativeLogLikelihoodLoss", ["float[2,3,4]", "int64[2,5]"], ["float[]"], opset=22, error="shape-mismatch")
example("SoftmaxCrossEntropyLoss", ["float[*]", "int64[]"], ["float[*]"], opset=13, error="shape-mismatch")
example(
    "NegativeLogLikelihoodLoss", ["float[2,3]", "int64[2]", "float[4]"], ["float[]"], opset=22, error="shape-mismatch"
)
