"""Matrix products: MatMul, Gemm, Einsum."""

from __future__ import annotations

import re

from infer.contract.context import RuleContext, RuleError
from infer.core.dims import Dim
from signatures.kit.helpers import NONZERO, Shape, broadcast, flag, same_dim, unidirectional
from signatures.kit.registry import example, rule, shape_rule

# numpy matmul semantics: 1-D operands are promoted and the promoted axis dropped again.
MATMUL = [
    "A[k], B[k] -> Y[]",
    "A[k], B[*b, k, m] -> Y[*b, m]",
    "A[*a, n, k], B[k] -> Y[*a, n]",
    "A[*a, n, k], B[*b, k, m] -> Y[*broadcast(a, b), n, m]",
]
shape_rule("MatMul", MATMUL)


def gemm_product(ctx: RuleContext, a: Shape | None, b: Shape | None) -> tuple[Dim, Dim]:
    """``(M, N)`` of ``op(A) @ op(B)`` with the transA/transB attributes; K must agree."""
    for i, s in ((0, a), (1, b)):
        if s is not None and len(s) != 2:
            raise RuleError("shape-mismatch", f"input {i} of {ctx.op_type} must be 2-D, has rank {len(s)}")
    m = k1 = k2 = n = None
    # Any non-zero transA/transB transposes, in onnxruntime's kernel and in onnx's inference.
    trans_a, trans_b = flag(ctx, "transA", 0, NONZERO), flag(ctx, "transB", 0, NONZERO)
    if a is not None:
        m, k1 = (a[1], a[0]) if trans_a else (a[0], a[1])
    if b is not None:
        k2, n = (b[1], b[0]) if trans_b else (b[0], b[1])
    if k1 is not None and k2 is not None:
        same_dim(ctx, k1, k2, "inner dimensions")
    return m, n


@rule("Gemm")
def gemm(ctx: RuleContext) -> list:
    m, n = gemm_product(ctx, ctx.shape(0), ctx.shape(1))
    c = ctx.shape(2) if ctx.has(2) else None
    if c is not None and ctx.version < 7 and not ctx.attr("broadcast", 0):
        # Before opset 7, C without broadcast=1 has the output's shape exactly.
        if len(c) != 2:
            raise RuleError("shape-mismatch", f"C of rank {len(c)} needs broadcast=1")
        return [(same_dim(ctx, m, c[0], "rows of A and C"), same_dim(ctx, n, c[1], "columns of B and C"))]
    if c is not None:
        unidirectional(ctx, (m, n), c)
        # C broadcasts to (M, N): an extent of C other than 1 is the output's extent there.
        if len(c) == 2 and isinstance(c[0], int) and c[0] != 1 and m is None:
            m = c[0]
        if 1 <= len(c) <= 2 and isinstance(c[-1], int) and c[-1] != 1 and n is None:
            n = c[-1]
    return [(m, n)]


_EINSUM_TERM = re.compile(r"[A-Za-z]*(?:\.\.\.)?[A-Za-z]*\Z")


def _check_grammar(eq: str) -> None:
    """The equation's grammar (Einsum's definition; onnxruntime hangs on some equations outside
    it): each term is letters with at most one ellipsis, and the output term names each label once."""
    eq = eq.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    for term in lhs.split(",") + ([rhs] if arrow else []):
        if not _EINSUM_TERM.match(term):
            raise RuleError(
                "bad-attribute",
                f"equation '{eq[:60]}': term '{term[:30]}' is not letters with at most one ellipsis ('...')",
            )
    out_labels = rhs.replace("...", "")
    if arrow and len(set(out_labels)) != len(out_labels):
        raise RuleError("bad-attribute", f"equation '{eq[:60]}': the output term '{rhs[:30]}' repeats a label")


def _parse_einsum(eq: str, ranks: list[int]) -> tuple[list[list[str]], list[str]]:
    """Terms as lists of labels, with ``...`` expanded to numbered batch labels."""
    eq = eq.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise RuleError("bad-attribute", f"equation has {len(terms)} operands, node has {len(ranks)}")
    widths = []
    for term, rank in zip(terms, ranks):
        fixed = len(term.replace("...", ""))
        if ("..." not in term and fixed != rank) or rank < fixed:
            raise RuleError("shape-mismatch", f"term {term} has {fixed} labels, input has rank {rank}")
        widths.append(rank - fixed if "..." in term else 0)
    # "Every occurrence of ellipsis in the equation must represent the same number of dimensions"
    # (the operator definition; onnxruntime refuses such a node, numpy would broadcast it).
    with_dots = [i for i, term in enumerate(terms) if "..." in term]
    for i in with_dots[1:]:
        if widths[i] != widths[with_dots[0]]:
            raise RuleError(
                "shape-mismatch",
                f"Ellipsis for input {i} represents {widths[i]} dimensions, but ellipsis for input "
                f"{with_dots[0]} represents {widths[with_dots[0]]} dimensions; every ellipsis must stand for "
                "the same number of dimensions",
            )
    n_ell = max(widths, default=0)
    if arrow and n_ell and "..." not in rhs:  # onnxruntime refuses it; numpy too
        raise RuleError(
            "shape-mismatch",
            f"the inputs' ellipsis stands for {n_ell} dimensions, and the output "
            f"term '{rhs[:30]}' has no ellipsis to hold them",
        )
    parsed: list[list[str]] = []
    for term, k in zip(terms, widths):
        before, dots, after = term.partition("...")
        # Ellipsis dims align to the right, as in broadcasting.
        batch = [f"...{n_ell - k + j}" for j in range(k)] if dots else []
        parsed.append(list(before) + batch + list(after))
    ell = [f"...{j}" for j in range(n_ell)]
    if arrow:
        out: list[str] = []
        if "..." in rhs:
            before, _, after = rhs.partition("...")
            out = list(before) + ell + list(after)
        else:
            out = list(rhs)
    else:
        counts: dict[str, int] = {}
        for labels in parsed:
            for lab in labels:
                if not lab.startswith("..."):
                    counts[lab] = counts.get(lab, 0) + 1
        out = ell + sorted(lab for lab, c in counts.items() if c == 1)
    return parsed, out


@rule("Einsum")
def einsum(ctx: RuleContext) -> list:
    equation = ctx.require("equation")
    _check_grammar(equation)
    shapes = [ctx.shape(i) for i in range(ctx.n_inputs)]
    if any(s is None for s in shapes):
        return [None]
    terms, out = _parse_einsum(equation, [len(s) for s in shapes])  # type: ignore[arg-type]
    # Ellipsis dims broadcast; named dims must agree.
    ell_shapes: list[list[Dim]] = []
    env: dict[str, Dim] = {}
    for labels, s in zip(terms, shapes):
        ell = [d for lab, d in zip(labels, s) if lab.startswith("...")]  # type: ignore[arg-type]
        ell_shapes.append(ell)
        for lab, d in zip(labels, s):  # type: ignore[arg-type]
            if not lab.startswith("..."):
                env[lab] = same_dim(ctx, env[lab], d, f"label '{lab}'") if lab in env else d
    width = max((len(e) for e in ell_shapes), default=0)
    bshape = broadcast(ctx, *ell_shapes) or ()
    for j in range(width):
        env[f"...{j}"] = bshape[j] if j < len(bshape) else None
    missing = [lab for lab in out if lab not in env]
    if missing:
        raise RuleError("bad-attribute", f"output labels {missing} appear in no input")
    return [tuple(env[lab] for lab in out)]


example("MatMul", ["float[B,S,768]", "float[768,10]"], ["float[B,S,10]"])
example("MatMul", ["float[B,H,S,D]", "float[B,H,D,T]"], ["float[B,H,S,T]"])
example("MatMul", ["float[K]", "float[K]"], ["float[]"])
example("MatMul", ["float[K]", "float[B,K,M]"], ["float[B,M]"])
example("MatMul", ["float[B,N,K]", "float[K]"], ["float[B,N]"])
example("MatMul", ["float[3,4]", "float[5,10]"], ["float[3,10]"], error="shape-mismatch")
example("Gemm", ["float[N,64]", "float[10,64]", "float[10]"], ["float[N,10]"], attrs={"transB": 1})
example("Gemm", ["float[64,N]", "float[64,10]"], ["float[N,10]"], attrs={"transA": 1})
example("Einsum", ["float[B,I,K]", "float[B,K,J]"], ["float[B,I,J]"], attrs={"equation": "bik,bkj->bij"})
example("Einsum", ["float[I,J]"], ["float[J,I]"], attrs={"equation": "ij->ji"})
example(
    "Einsum",
    ["float[B,H,S,D]", "float[B,H,T,D]"],
    ["float[B,H,S,T]"],
    attrs={"equation": "...sd,...td->...st"},
)
example("Einsum", ["float[I,K]", "float[K,J]"], ["float[I,J]"], attrs={"equation": "ik,kj"})
example("Gemm", ["float[*]", "float[*]", "float[4,5]"], ["float[4,5]"])
example("Gemm", ["float[N,K]", "float[K,M]", "float[N,M]"], ["float[N,M]"], opset=6)
example("Gemm", ["float[N,K]", "float[K,5]", "float[5]"], ["float[N,5]"], attrs={"broadcast": 1}, opset=6)
example("Gemm", ["float[N,K]", "float[K,M]"], ["float[N,M]"], opset=11)
example("Gemm", ["float[N,K]", "float[K,4]", "float[3]"], ["float[N,4]"], error="shape-mismatch")
example("MatMul", ["float[*]", "float[B,K,M]"], ["float[*]"])
example("Einsum", ["float[B,I,I]"], ["float[B,I]"], attrs={"equation": "bii->bi"})
example("Einsum", ["float[I]", "float[J]"], ["float[I,J]"], attrs={"equation": "i,j->ij"}, opset=12)
example("Einsum", ["float[]", "float[2,3]"], ["float[*]"], attrs={"equation": "...,...->..."}, error="shape-mismatch")
example(
    "Einsum",
    ["float[3,4]", "float[2,3,4]"],
    ["float[*]"],
    attrs={"equation": "...ij,...ij->...ij"},
    error="shape-mismatch",
)
example("Einsum", ["float[1,4]", "float[N,4]"], ["float[N,4]"], attrs={"equation": "...j,...j->...j"})
