"""Complex products and the inverse real FFT: ComplexMul, ComplexMulConj, Irfft.

Complex tensors are real tensors whose last axis (of extent 2) holds the real and imaginary
parts. The products broadcast their operands; Irfft maps the ``n // 2 + 1`` one-sided
coefficients of the last signal axis back to ``2 m - 1`` real samples (what onnxruntime's cuFFT
kernel computes; the schema has no inference function). CUDA kernels only: from the kernels'
source, not cross-checked by running.
"""

from __future__ import annotations

from infer.contract.context import RuleContext, RuleError
from infer.core import dims as D
from signatures.com_microsoft import INT, MS, REQUIRED
from signatures.kit.helpers import broadcast
from signatures.kit.operator import case, operator

_T = {"T": ("tensor(float)", "tensor(double)", "tensor(float16)")}


@operator(
    "ComplexMul",
    "A:T B:T",
    "C:T",
    domain=MS,
    types=_T,
    examples=[
        case(["float[B,S,2]", "float[S,2]"], ["float[B,S,2]"]),
        case(["float[B,S,3]", "float[S,2]"], ["float[*]"], error="shape-mismatch"),
    ],
)
@operator(
    "ComplexMulConj",
    "A:T B:T",
    "C:T",
    domain=MS,
    types=_T,
    examples=[case(["float16[B,1,2]", "float16[T,2]"], ["float16[B,T,2]"])],
)
def complex_mul(ctx: RuleContext) -> list:
    """A * B (or A * conj(B)) elementwise: the broadcast shape; each last axis must be 2."""
    for i in (0, 1):
        s = ctx.shape(i)
        if s is not None and (not s or (isinstance(s[-1], int) and s[-1] != 2)):
            raise RuleError("shape-mismatch", f"input {i} must end in an axis of 2 (real, imaginary), is {list(s)}")
    out = broadcast(ctx, ctx.shape(0), ctx.shape(1))
    if out is None:
        ctx.because("an operand has unknown rank")
    return [out]


@operator(
    "Irfft",
    "X:T",
    "Y:T",
    domain=MS,
    types=_T,
    attrs={"onesided": (INT, 1), "normalized": (INT, 0), "signal_ndim": (INT, REQUIRED)},
    examples=[
        case(["float[B,M,2]"], ["float[B,2*M - 1]"], signal_ndim=1),
        case(["double[B,H,M,2]"], ["double[B,H,M]"], signal_ndim=2, onesided=0),
        case(["float[B,M,3]"], ["float[*]"], signal_ndim=1, error="shape-mismatch"),
    ],
)
def irfft(ctx: RuleContext) -> list:
    """(..., m, 2) -> (..., 2 m - 1) one-sided; (..., m, 2) -> (..., m) two-sided."""
    ndim = ctx.require("signal_ndim")
    if ndim < 1:
        raise RuleError("bad-attribute", f"signal_ndim must be positive, is {ndim}")
    x = ctx.shape(0)
    if x is None:
        return [None]
    if len(x) < ndim + 1:
        raise RuleError("shape-mismatch", f"a {ndim}-D complex signal needs rank >= {ndim + 1}, has {len(x)}")
    if isinstance(x[-1], int) and x[-1] != 2:
        raise RuleError("shape-mismatch", f"the last axis holds (real, imaginary) and must be 2, is {x[-1]}")
    if ctx.attr("onesided", 1):
        return [x[:-2] + (D.sub(D.mul(x[-2], 2), 1),)]
    return [x[:-1]]
