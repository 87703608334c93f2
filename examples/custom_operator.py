"""Add a rule for a custom operator: declare its signature, register its rule, test it.

    python examples/custom_operator.py

A model may use operators of its own domain (here ``com.example``) that ``onnx.defs`` does not
know. Without a signature and a rule their outputs are unknown; with them they are inferred like
any standard operator, symbolic extents included. Put this code in a module of yours and import
it before calling ``infer.infer_model`` (the rules live in one process-wide table).
"""

from __future__ import annotations

import onnx
from onnx import AttributeProto, TensorProto, helper

import infer
from infer.contract.context import RuleContext, RuleError
from infer.contract.signature import AttrSpec, Formal, Signature, declare
from infer.core import dims as D
from signatures.kit.registry import rule, shape_rule

DOMAIN = "com.example"
FLOATS = ("tensor(float)", "tensor(float16)", "tensor(bfloat16)")

# -- 1. Signatures: arity, type constraints, attributes (what onnx.defs gives standard ops) ------

declare(Signature(
    domain=DOMAIN, name="ScaledGelu", since_version=1,
    inputs=(Formal("X", "T", "single"),), outputs=(Formal("Y", "T", "single"),),
    constraints={"T": FLOATS},
    attributes={"scale": AttrSpec("scale", AttributeProto.FLOAT, required=False, default=1.0)},
    min_inputs=1, max_inputs=1, min_outputs=1, max_outputs=1,
))  # fmt: skip
declare(Signature(
    domain=DOMAIN, name="Patchify", since_version=1,
    inputs=(Formal("image", "T", "single"),), outputs=(Formal("patches", "T", "single"),),
    constraints={"T": FLOATS},
    attributes={"patch": AttrSpec("patch", AttributeProto.INT, required=True)},
    min_inputs=1, max_inputs=1, min_outputs=1, max_outputs=1,
))  # fmt: skip

# -- 2. Rules: the output element types come from the constraints; rules give shapes -------------

# Pure shape algebra is one line of the pattern language: Y has X's shape.
shape_rule("ScaledGelu", "X[*s] -> Y[*s]", domain=DOMAIN)


@rule("Patchify", domain=DOMAIN)
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
        nodes, "vit_stem",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["N", 3, "H", "W"])],
        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, None)],
    )  # fmt: skip
    imports = [helper.make_opsetid("", 17), helper.make_opsetid(DOMAIN, 1)]
    return helper.make_model(graph, opset_imports=imports)


def main() -> None:
    result = infer.infer_model(build())
    for name in ("patches", "act", "pooled"):
        print(f"{name}: {result.type_of(name)}")
    print("at H=W=224:", [D.evaluate(d, {"N": 2, "H": 224, "W": 224}) for d in result.shape_of("patches")])
    assert not result.errors, result.errors

    # -- 4. Tests: the same checks `example(...)` runs beside the library's own rules ----------
    one = infer.infer_node("Patchify", ["float[B,3,224,224]"], {"patch": 16}, domain=DOMAIN, opset=1)
    print("Patchify on float[B,3,224,224]:", one)
    assert str(one) == "float[B,196,768]"
    bad = infer.infer_node("Patchify", ["float[1,3,100,100]"], {"patch": 16}, domain=DOMAIN, opset=1)
    print("and on float[1,3,100,100]:", bad.diagnostics[0].message)
    assert bad.diagnostics[0].code == "shape-mismatch"


if __name__ == "__main__":
    main()
