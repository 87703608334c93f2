"""onnxruntime-extensions' string operators (domain ``ai.onnx.contrib``), as its text
pre-processing graphs use them.

``onnx.defs`` and onnxruntime's own schemas know none of them: onnxruntime runs them from the
extensions' custom-operator library, whose kernels fix the shapes below
(tests/test_custom_ai_onnx_contrib.py checks each against that library).
"""

from __future__ import annotations

from infer.contract.context import RuleContext, RuleError
from signatures.kit.helpers import same_dim
from signatures.kit.operator import INT, case, operator

CONTRIB = "ai.onnx.contrib"
STRING = {"T": ("tensor(string)",)}

operator(
    "StringLower",
    "X:T",
    "Y:T",
    domain=CONTRIB,
    types=STRING,
    rule="X[*s] -> Y[*s]",
    examples=[case(["string[N,S]"], ["string[N,S]"]), case(["string[]"], ["string[]"])],
)
operator(
    "StringUpper",
    "X:T",
    "Y:T",
    domain=CONTRIB,
    types=STRING,
    rule="X[*s] -> Y[*s]",
    examples=[case(["string[B]"], ["string[B]"])],
)
# The length of each string, element by element.
operator(
    "StringLength",
    "X:T",
    "Y:tensor(int64)",
    domain=CONTRIB,
    types=STRING,
    rule="X[*s] -> Y[*s]",
    examples=[case(["string[N,3]"], ["int64[N,3]"])],
)
# One pattern and one rewrite (scalars, or of shape [1]) for every string of the text.
operator(
    "StringRegexReplace",
    "text:T pattern:T rewrite:T",
    "output:T",
    domain=CONTRIB,
    types=STRING,
    attrs={"global_replace": (INT, 1)},
    rule="X[*s], _, _ -> Y[*s]",
    examples=[case(["string[N,S]", "string[]", "string[1]"], ["string[N,S]"], global_replace=0)],
)


@operator(
    "StringConcat",
    "x:T y:T",
    "z:T",
    domain=CONTRIB,
    types=STRING,
    examples=[
        case(["string[N,S]", "string[N,S]"], ["string[N,S]"]),
        case(["string[N,3]", "string[B,S]"], ["string[N,3]"]),
        case(["string[2,3]", "string[1,3]"], ["string[2,3]"], error="shape-mismatch"),
        case(["string[2,3]", "string[3]"], ["string[*]"], error="shape-mismatch"),
    ],
)
def string_concat(ctx: RuleContext) -> list:
    """Element by element: the two inputs must have one shape (the kernel does not broadcast)."""
    a, b = ctx.shape(0), ctx.shape(1)
    if a is None or b is None:
        if a is None and b is None:
            ctx.because("both inputs' ranks are unknown", 0, 1)
        return [a if b is None else b]
    if len(a) != len(b):
        raise RuleError(
            "shape-mismatch", f"StringConcat: inputs of ranks {len(a)} and {len(b)} (one shape is required)"
        )
    return [tuple(same_dim(ctx, x, y, f"axis {i}") for i, (x, y) in enumerate(zip(a, b)))]
