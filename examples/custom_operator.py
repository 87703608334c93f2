"""Add a custom operator: its signature, its rule and its examples in one record, then use it.

    python examples/custom_operator.py

A model may use operators of its own domain (here ``com.example``) that ``onnx.defs`` does not
know. Without a signature and a rule their outputs are unknown; with them they are inferred like
any standard operator, symbolic extents included. Put this code in a module of yours and import
it before calling ``infer.infer_model`` (the rules live in one process-wide table).
"""

from __future__ import annotations

import onnx
from onnx import TensorProto, helper

import infer
from infer.contract.context import RuleContext, RuleError
from infer.core import dims as D
from signatures.kit.operator import FLOAT, INT, REQUIRED, case, operator

DOMAIN = "com.example"
FLOATS = {"T": ("tensor(float)", "tensor(float16)", "tensor(bfloat16)")}

# -- 1. One record per operator: its signature (arity from the formals, type constraints,
#       attributes with defaults), its rule and its examples ---------------------------------

# Pure shape algebra is one line of the pattern language: Y has X's shape.
operator(
    "ScaledGelu",
    "X:T",
    "Y:T",
    domain=DOMAIN,
    types=FLOATS,
    attrs={"scale": (FLOAT, 1.0)},
    rule="X[*s] -> Y[*s]",
    examples=[case(["float[N,S,64]"], ["float[N,S,64]"], scale=0.5)],
)


# -- 2. A rule that computes: the output element types come from the constraints --------------


@operator(
    "Patchify",
    "image:T",
    "patches:T",
    domain=DOMAIN,
    types=FLOATS,
    attrs={"patch": (INT, REQUIRED)},
    examples=[
        case(["float[B,3,224,224]"], ["float[B,196,768]"], patch=16),
        case(["float[1,3,100,100]"], ["float[*]"], patch=16, error="shape-mismatch"),
    ],
)
def patchify(ctx: RuleContext) -> list:
    """[N, C, H, W] -> [N, (H / p) * (W / p), C * p * p]; H and W must be multiples of p."""
    s = ctx.shape(0)
    if s is None:
        ctx.because("the image's rank is unknown", 0)
        return [None]  # unknown rank stays unknown
    if len(s) != 4:
        raise RuleError("shape-mismatch", f"the image must be 4-D, it has rank {len(s)}")
    n, c, h, w = s
    p = ctx.require("patch")
    for name, extent in (("height", h), ("width", w)):
        if isinstance(extent, int) and extent % p:
            raise RuleError("shape-mismatch", f"the {name} {extent} is not a multiple of the patch {p}")
    # infer.dims keeps symbolic extents exact: floor(H/16)*floor(W/16), never a guess.
    count = D.mul(D.floordiv(h, p), D.floordiv(w, p))
    return [(n, count, D.mul(c, p * p))]


# -- 3. Use: a model importing the custom domain ------------------------------------------------


def build() -> onnx.ModelProto:
    nodes = [
        helper.make_node("Patchify", ["image"], ["patches"], domain=DOMAIN, patch=16),
        helper.make_node("ScaledGelu", ["patches"], ["act"], domain=DOMAIN, scale=0.5),
        helper.make_node("ReduceMean", ["act"], ["pooled"], axes=[1], keepdims=0),
    ]
    graph = helper.make_graph(
        nodes,
        "vit_stem",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["N", 3, "H", "W"])],
        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, None)],
    )
    imports = [helper.make_opsetid("", 17), helper.make_opsetid(DOMAIN, 1)]
    return helper.make_model(graph, opset_imports=imports)


def main() -> None:
    result = infer.infer_model(build())
    for name in ("patches", "act", "pooled"):
        print(f"{name}: {result.type_of(name)}")
    print("at H=W=224:", [D.evaluate(d, {"N": 2, "H": 224, "W": 224}) for d in result.shape_of("patches")])
    assert not result.errors, result.errors

    # -- 4. Tests: the records' examples (tests/test_rule_examples.py runs the library's this way)
    from signatures.kit.registry import EXAMPLES

    for ex in (e for e in EXAMPLES if e.domain == DOMAIN):
        out = infer.infer_node(ex.op_type, list(ex.inputs), dict(ex.attrs), domain=DOMAIN, opset=1)
        codes = [d.code for d in out.diagnostics if d.severity == "error"]
        print(f"{ex.op_type} on {', '.join(ex.inputs)}: {out}" + (f" ({codes[0]})" if codes else ""))
        assert [str(v.type) for v in out.values] == list(ex.outputs), (ex, out)
        assert codes == ([ex.error] if ex.error else []), (ex, out.diagnostics)


if __name__ == "__main__":
    main()
