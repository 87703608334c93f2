"""A third catalogue of small broken ONNX models, each with exactly one deliberate fault.

Written by a helper from the ONNX specification and operator definitions without reading this
project's code or its other catalogues, as a stand-in for the held-out catalogue of issue 6.
Of its 180 models, onnx's checker or strict inference flags 144 (measured with onnx 1.23.2);
``tests/validation/test_catalogue_independent.py`` runs them all.

Every builder is a function ``build(fixed=False) -> (model, expected_location)``.
``expected_location`` is a dict with any of the keys
    'node'      : name or list of names of the faulty node(s)
    'value'     : name or list of names of the faulty value(s)
    'attribute' : name or list of names of the faulty attribute(s)
    'model'     : True when the fault is model-level (no node/value/attribute)
Builders registered with ``twin=True`` return the fixed (valid) model when ``fixed=True``.

Written from the ONNX specification, independently of the project's own tests.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

CATALOGUE: list[tuple[str, str, str, object, bool]] = []  # (name, category, description, builder, has_twin)


def case(category, description, twin=False):
    def deco(fn):
        CATALOGUE.append((fn.__name__, category, description, fn, twin))
        return fn

    return deco


# ----------------------------------------------------------------- helpers
def vi(name, et=T.FLOAT, shape=None):
    """shape: list of dims, or an int k meaning k fresh symbolic dims (the checker requires
    main-graph inputs/outputs to carry a shape field, so unknown outputs get symbolic dims)."""
    if isinstance(shape, int):
        shape = [f"{name}_d{i}" for i in range(shape)]
    return h.make_tensor_value_info(name, et, shape)


def init(name, arr, dtype=None):
    a = np.asarray(arr, dtype=dtype) if dtype is not None else np.asarray(arr)
    return nh.from_array(a, name)


def i64(name, vals):
    return init(name, np.array(vals, dtype=np.int64))


def f32(name, vals):
    return init(name, np.array(vals, dtype=np.float32))


def N(op, ins, outs, name, domain=None, **kw):
    n = h.make_node(op, ins, outs, name=name, **kw)
    if domain:
        n.domain = domain
    return n


def IR(opset):
    return 8 if opset <= 18 else (9 if opset <= 20 else 10)


def model(
    nodes, inputs, outputs, inits=(), vinfo=(), opset=17, extra_opsets=(), functions=(), ir=None, gname="g", sparse=()
):
    g = h.make_graph(
        list(nodes),
        gname,
        list(inputs),
        list(outputs),
        initializer=list(inits),
        value_info=list(vinfo),
        sparse_initializer=list(sparse),
    )
    ops = []
    if opset is not None:
        ops.append(h.make_opsetid("", opset))
    ops += [h.make_opsetid(d, v) for d, v in extra_opsets]
    m = h.make_model(g, opset_imports=ops, functions=list(functions))
    m.ir_version = IR(opset or 17) if ir is None else ir
    return m


def graph(nodes, name, inputs, outputs, inits=()):
    return h.make_graph(list(nodes), name, list(inputs), list(outputs), initializer=list(inits))


def raw_tensor(name, dtype, dims, **fields):
    t = T()
    t.name = name
    t.data_type = dtype
    t.dims.extend(dims)
    for k, v in fields.items():
        if k == "raw_data":
            t.raw_data = v
        else:
            getattr(t, k).extend(v)
    return t


def unary(op, opset=17, et=T.FLOAT, shape=(2, 3), out_et=None, out_shape=None, name=None, **attrs):
    name = name or op.lower() + "0"
    return model(
        [N(op, ["x"], ["y"], name, **attrs)],
        [vi("x", et, list(shape))],
        [vi("y", out_et if out_et is not None else et, len(shape) if out_shape is None else out_shape)],
        opset=opset,
    )


# =================================================================== GRAPH STRUCTURE
@case("graph", "cycle: Add consumes Relu's output, Relu consumes Add's output", twin=True)
def g_cycle(fixed=False):
    nodes = [N("Add", ["x", "x" if fixed else "b"], ["a"], "add_cycle"), N("Relu", ["a"], ["b"], "relu_cycle")]
    return (
        model(nodes, [vi("x", T.FLOAT, [2, 3])], [vi("b", T.FLOAT, [2, 3])]),
        {"node": ["add_cycle", "relu_cycle"], "value": ["a", "b"]},
    )


@case("graph", "node input 'bias_missing' is never defined (typo'd initializer name)", twin=True)
def g_undefined_input(fixed=False):
    inits = [f32("bias_missing", [1, 2, 3])] if fixed else [f32("bias", [1, 2, 3])]
    nodes = [N("Add", ["x", "bias_missing"], ["y"], "add_undef")]
    return (
        model(nodes, [vi("x", T.FLOAT, [2, 3])], [vi("y", T.FLOAT, [2, 3])], inits=inits),
        {"node": "add_undef", "value": "bias_missing"},
    )


@case("graph", "two nodes write the same output name 'y'", twin=True)
def g_duplicate_output(fixed=False):
    nodes = [N("Relu", ["x"], ["y"], "relu_a"), N("Sigmoid", ["x"], ["y2" if fixed else "y"], "sigmoid_b")]
    outs = [vi("y", T.FLOAT, [2, 3])] + ([vi("y2", T.FLOAT, [2, 3])] if fixed else [])
    return (model(nodes, [vi("x", T.FLOAT, [2, 3])], outs), {"node": "sigmoid_b", "value": "y"})


@case("graph", "nodes not topologically sorted: consumer listed before producer", twin=True)
def g_out_of_order(fixed=False):
    a = N("Relu", ["t"], ["y"], "relu_late")
    b = N("Neg", ["x"], ["t"], "neg_early")
    nodes = [b, a] if fixed else [a, b]
    return (
        model(nodes, [vi("x", T.FLOAT, [2, 3])], [vi("y", T.FLOAT, [2, 3])]),
        {"node": ["relu_late", "neg_early"], "value": "t"},
    )


@case("graph", "graph output 'z' is declared but nothing produces it")
def g_output_not_produced(fixed=False):
    nodes = [N("Relu", ["x"], ["y"], "relu0")]
    return (
        model(nodes, [vi("x", T.FLOAT, [2, 3])], [vi("y", T.FLOAT, [2, 3]), vi("z", T.FLOAT, [2, 3])]),
        {"value": "z"},
    )


@case("graph", "graph input name 'x' declared twice")
def g_duplicate_graph_input(fixed=False):
    nodes = [N("Add", ["x", "x"], ["y"], "add0")]
    return (
        model(nodes, [vi("x", T.FLOAT, [2, 3]), vi("x", T.FLOAT, [2, 3])], [vi("y", T.FLOAT, [2, 3])]),
        {"value": "x"},
    )


@case("graph", "node output 'w' reuses the name of an initializer (SSA violation)")
def g_output_shadows_initializer(fixed=False):
    nodes = [N("Relu", ["x"], ["w"], "relu_w"), N("Add", ["w", "x"], ["y"], "add0")]
    return (
        model(nodes, [vi("x", T.FLOAT, [3])], [vi("y", T.FLOAT, [3])], inits=[f32("w", [1, 2, 3])]),
        {"node": "relu_w", "value": "w"},
    )


@case("graph", "node output 'x' reuses the name of a graph input (SSA violation)")
def g_output_shadows_input(fixed=False):
    nodes = [N("Relu", ["x"], ["x"], "relu_x"), N("Neg", ["x"], ["y"], "neg0")]
    return (model(nodes, [vi("x", T.FLOAT, [3])], [vi("y", T.FLOAT, [3])]), {"node": "relu_x", "value": "x"})


def _if_model(then_g, else_g, outs=("y",), out_vis=None, cond_et=T.BOOL, pre=(), name="if0", opset=17, extra_inputs=()):
    nodes = list(pre) + [N("If", ["cond"], list(outs), name, then_branch=then_g, else_branch=else_g)]
    ins = [vi("cond", cond_et, []), vi("x", T.FLOAT, [3])] + list(extra_inputs)
    return model(nodes, ins, out_vis or [vi(o, T.FLOAT, [3]) for o in outs], opset=opset)


@case("graph", "If then_branch node output 't' shadows an outer-scope value 't'", twin=True)
def g_if_shadowing(fixed=False):
    tname = "t_then" if fixed else "t"
    then_g = graph([N("Relu", ["x"], [tname], "then_relu")], "then", [], [vi(tname, T.FLOAT, [3])])
    else_g = graph([N("Neg", ["x"], ["e"], "else_neg")], "else", [], [vi("e", T.FLOAT, [3])])
    pre = [N("Abs", ["x"], ["t"], "abs_outer")]
    nodes = pre + [
        N("If", ["cond"], ["r"], "if0", then_branch=then_g, else_branch=else_g),
        N("Add", ["r", "t"], ["y"], "add_out"),
    ]
    m = model(nodes, [vi("cond", T.BOOL, []), vi("x", T.FLOAT, [3])], [vi("y", T.FLOAT, [3])])
    return m, {"node": "then_relu", "value": "t"}


@case("graph", "Loop body subgraph output 'v' shadows an outer value (SSA across scopes)")
def g_loop_shadowing(fixed=False):
    body = graph(
        [N("Identity", ["c"], ["c_out"], "b_id"), N("Relu", ["v_in"], ["v"], "b_relu_shadow")],
        "body",
        [vi("i", T.INT64, []), vi("c", T.BOOL, []), vi("v_in", T.FLOAT, [3])],
        [vi("c_out", T.BOOL, []), vi("v", T.FLOAT, [3])],
    )
    nodes = [N("Neg", ["x"], ["v"], "neg_outer"), N("Loop", ["M", "cond", "v"], ["y"], "loop0", body=body)]
    m = model(
        nodes, [vi("x", T.FLOAT, [3])], [vi("y", T.FLOAT, [3])], inits=[i64("M", 3), init("cond", np.array(True))]
    )
    return m, {"node": "b_relu_shadow", "value": "v"}


def _loop(body, nodes_extra=(), carried=("v0",), outs=("vf",), out_vis=None, M_et=T.INT64, name="loop0"):
    M = i64("M", 3) if M_et == T.INT64 else f32("M", 3.0)
    nodes = list(nodes_extra) + [N("Loop", ["M", "cond"] + list(carried), list(outs), name, body=body)]
    return model(
        nodes,
        [vi("v0", T.FLOAT, [3])],
        out_vis or [vi(o, T.FLOAT, [3]) for o in outs],
        inits=[M, init("cond", np.array(True))],
    )


def _good_loop_body(extra_input=False, drop_output=False, out_cast=False):
    ins = [vi("i", T.INT64, []), vi("c", T.BOOL, []), vi("v", T.FLOAT, [3])]
    if extra_input:
        ins.append(vi("extra", T.FLOAT, [3]))
    nodes = [N("Identity", ["c"], ["c_out"], "body_id"), N("Relu", ["v"], ["v_out"], "body_relu")]
    outs = [vi("c_out", T.BOOL, [])]
    if out_cast:
        nodes.append(N("Cast", ["v_out"], ["v_cast"], "body_cast", to=T.INT64))
        outs.append(vi("v_cast", T.INT64, [3]))
    elif not drop_output:
        outs.append(vi("v_out", T.FLOAT, [3]))
    return graph(nodes, "body", ins, outs)


@case("graph", "Loop body declares 4 inputs but the Loop supplies iter, cond and 1 carried value", twin=True)
def g_loop_body_inputs(fixed=False):
    return _loop(_good_loop_body(extra_input=not fixed)), {"node": "loop0", "attribute": "body"}


@case("graph", "Loop body returns only the condition, missing the loop-carried output")
def g_loop_body_outputs(fixed=False):
    return _loop(_good_loop_body(drop_output=True)), {"node": "loop0", "attribute": "body"}


@case("graph", "Loop-carried value changes type: body input float, body output int64")
def g_loop_carried_type(fixed=False):
    return _loop(_good_loop_body(out_cast=True)), {
        "node": ["loop0", "body_cast"],
        "attribute": "body",
        "value": ["v_cast", "vf"],
    }


@case("graph", "Loop trip count M is float instead of int64", twin=True)
def g_loop_M_float(fixed=False):
    return _loop(_good_loop_body(), M_et=T.INT64 if fixed else T.FLOAT), {"node": "loop0", "value": "M"}


@case("graph", "If branches produce different numbers of outputs (then:1, else:2)")
def g_if_arity(fixed=False):
    then_g = graph([N("Relu", ["x"], ["t1"], "then_relu")], "then", [], [vi("t1", T.FLOAT, [3])])
    else_g = graph(
        [N("Neg", ["x"], ["e1"], "else_neg"), N("Abs", ["x"], ["e2"], "else_abs")],
        "else",
        [],
        [vi("e1", T.FLOAT, [3]), vi("e2", T.FLOAT, [3])],
    )
    return _if_model(then_g, else_g), {"node": "if0", "attribute": ["then_branch", "else_branch"]}


@case("graph", "If node declares 2 outputs but both branches produce 1")
def g_if_node_outputs(fixed=False):
    then_g = graph([N("Relu", ["x"], ["t1"], "then_relu")], "then", [], [vi("t1", T.FLOAT, [3])])
    else_g = graph([N("Neg", ["x"], ["e1"], "else_neg")], "else", [], [vi("e1", T.FLOAT, [3])])
    return _if_model(then_g, else_g, outs=("y", "y2")), {
        "node": "if0",
        "attribute": ["then_branch", "else_branch"],
        "value": "y2",
    }


@case("graph", "If branches produce different element types (float vs int64)")
def g_if_branch_types(fixed=False):
    then_g = graph([N("Relu", ["x"], ["t1"], "then_relu")], "then", [], [vi("t1", T.FLOAT, [3])])
    else_g = graph([N("Cast", ["x"], ["e1"], "else_cast", to=T.INT64)], "else", [], [vi("e1", T.INT64, [3])])
    return _if_model(then_g, else_g), {"node": ["if0", "else_cast"], "attribute": ["then_branch", "else_branch"]}


@case("graph", "If condition is a float tensor instead of bool", twin=True)
def g_if_cond_float(fixed=False):
    then_g = graph([N("Relu", ["x"], ["t1"], "then_relu")], "then", [], [vi("t1", T.FLOAT, [3])])
    else_g = graph([N("Neg", ["x"], ["e1"], "else_neg")], "else", [], [vi("e1", T.FLOAT, [3])])
    return _if_model(then_g, else_g, cond_et=T.BOOL if fixed else T.FLOAT), {"node": "if0", "value": "cond"}


@case("graph", "outer-graph node consumes 'inner_v', a value local to the If then_branch")
def g_outer_uses_inner(fixed=False):
    then_g = graph([N("Relu", ["x"], ["inner_v"], "then_relu")], "then", [], [vi("inner_v", T.FLOAT, [3])])
    else_g = graph([N("Neg", ["x"], ["e1"], "else_neg")], "else", [], [vi("e1", T.FLOAT, [3])])
    nodes = [
        N("If", ["cond"], ["r"], "if0", then_branch=then_g, else_branch=else_g),
        N("Add", ["r", "inner_v"], ["y"], "add_outer"),
    ]
    m = model(nodes, [vi("cond", T.BOOL, []), vi("x", T.FLOAT, [3])], [vi("y", T.FLOAT, [3])])
    return m, {"node": "add_outer", "value": "inner_v"}


@case("graph", "If then_branch output 'nope' is produced by nothing")
def g_subgraph_output_undefined(fixed=False):
    then_g = graph([N("Relu", ["x"], ["t1"], "then_relu")], "then", [], [vi("nope", T.FLOAT, [3])])
    else_g = graph([N("Neg", ["x"], ["e1"], "else_neg")], "else", [], [vi("e1", T.FLOAT, [3])])
    return _if_model(then_g, else_g), {"value": "nope", "node": "if0"}


def _scan_body(n_inputs=2):
    ins = [vi("s", T.FLOAT, [2]), vi("xi", T.FLOAT, [2])]
    if n_inputs == 3:
        ins.append(vi("bogus", T.FLOAT, [2]))
    nodes = [N("Add", ["s", "xi"], ["s_out"], "scan_add"), N("Identity", ["s_out"], ["yo"], "scan_id")]
    return graph(nodes, "sbody", ins, [vi("s_out", T.FLOAT, [2]), vi("yo", T.FLOAT, [2])])


def _scan_model(body, **attrs):
    attrs.setdefault("num_scan_inputs", 1)
    nodes = [N("Scan", ["s0", "xs"], ["sf", "ys"], "scan0", body=body, **attrs)]
    return model(
        nodes, [vi("s0", T.FLOAT, [2]), vi("xs", T.FLOAT, [4, 2])], [vi("sf", T.FLOAT, [2]), vi("ys", T.FLOAT, [4, 2])]
    )


@case("graph", "Scan body has 3 inputs but the Scan provides 1 state + 1 scan input", twin=True)
def g_scan_arity(fixed=False):
    return _scan_model(_scan_body(2 if fixed else 3)), {"node": "scan0", "attribute": "body"}


@case("graph", "Scan scan_input_axes has 2 entries for 1 scan input")
def g_scan_axes_len(fixed=False):
    return _scan_model(_scan_body(), scan_input_axes=[0, 0]), {"node": "scan0", "attribute": "scan_input_axes"}


@case("graph", "Scan num_scan_inputs=3 but the node has only 2 inputs")
def g_scan_num_inputs(fixed=False):
    return _scan_model(_scan_body(), num_scan_inputs=3), {"node": "scan0", "attribute": "num_scan_inputs"}


# =================================================================== OPERATOR SETS
@case("opset", "model imports only 'com.microsoft', no default ONNX domain, but uses Relu")
def o_no_default_import(fixed=False):
    m = model(
        [N("Relu", ["x"], ["y"], "relu0")],
        [vi("x", T.FLOAT, [3])],
        [vi("y", T.FLOAT, [3])],
        opset=None,
        extra_opsets=[("com.microsoft", 1)],
        ir=8,
    )
    return m, {"node": "relu0", "model": True}


@case("opset", "unknown operator 'Reluu' (typo)", twin=True)
def o_unknown_op(fixed=False):
    return unary("Relu" if fixed else "Reluu", name="act0"), {"node": "act0"}


@case("opset", "LayerNormalization used at opset 16 (introduced in 17)", twin=True)
def o_layernorm_too_early(fixed=False):
    nodes = [N("LayerNormalization", ["x", "sc", "bi"], ["y"], "ln0", axis=-1)]
    m = model(
        nodes,
        [vi("x", T.FLOAT, [2, 4])],
        [vi("y", T.FLOAT, [2, 4])],
        inits=[f32("sc", [1] * 4), f32("bi", [0] * 4)],
        opset=17 if fixed else 16,
    )
    return m, {"node": "ln0"}


@case("opset", "Gelu used at opset 17 (introduced in 20)")
def o_gelu_too_early(fixed=False):
    return unary("Gelu", opset=17, name="gelu0"), {"node": "gelu0"}


@case("opset", "Squeeze with 'axes' attribute at opset 13 (moved to an input in 13)", twin=True)
def o_squeeze_axes_attr(fixed=False):
    if fixed:
        nodes = [N("Squeeze", ["x", "ax"], ["y"], "sq0")]
        inits = [i64("ax", [0])]
    else:
        nodes = [N("Squeeze", ["x"], ["y"], "sq0", axes=[0])]
        inits = []
    return model(nodes, [vi("x", T.FLOAT, [1, 3])], [vi("y", T.FLOAT, [3])], inits=inits, opset=13), {
        "node": "sq0",
        "attribute": "axes",
    }


@case("opset", "Split with 'split' attribute at opset 13 (moved to an input)", twin=True)
def o_split_attr(fixed=False):
    if fixed:
        nodes = [N("Split", ["x", "sp"], ["a", "b"], "split0", axis=0)]
        inits = [i64("sp", [1, 3])]
    else:
        nodes = [N("Split", ["x"], ["a", "b"], "split0", axis=0, split=[1, 3])]
        inits = []
    return model(
        nodes, [vi("x", T.FLOAT, [4])], [vi("a", T.FLOAT, [1]), vi("b", T.FLOAT, [3])], inits=inits, opset=13
    ), {"node": "split0", "attribute": "split"}


@case("opset", "ReduceMean with 'axes' attribute at opset 18 (moved to an input in 18)")
def o_reducemean_axes_attr(fixed=False):
    return unary("ReduceMean", opset=18, name="rm0", out_shape=1, axes=[1], keepdims=0), {
        "node": "rm0",
        "attribute": "axes",
    }


@case("opset", "Unsqueeze at opset 11 given axes as a second input (attribute required before 13)")
def o_unsqueeze_input_at_11(fixed=False):
    nodes = [N("Unsqueeze", ["x", "ax"], ["y"], "unsq0")]
    return model(nodes, [vi("x", T.FLOAT, [3])], [vi("y", T.FLOAT, [1, 3])], inits=[i64("ax", [0])], opset=11), {
        "node": "unsq0",
        "attribute": "axes",
        "value": "ax",
    }


@case("opset", "DequantizeLinear 'axis' attribute at opset 10 (added in 13)")
def o_dql_axis_at_10(fixed=False):
    nodes = [N("DequantizeLinear", ["x", "s", "zp"], ["y"], "dql0", axis=1)]
    return model(
        nodes,
        [vi("x", T.UINT8, [2, 3])],
        [vi("y", T.FLOAT, [2, 3])],
        inits=[f32("s", 0.5), init("zp", np.uint8(0))],
        opset=10,
        ir=5,
    ), {"node": "dql0", "attribute": "axis"}


@case("opset", "Concat 'axis' given as a float attribute", twin=True)
def o_concat_axis_float(fixed=False):
    n = N("Concat", ["a", "b"], ["y"], "concat0", axis=1 if fixed else 1.0)
    return model([n], [vi("a", T.FLOAT, [2, 3]), vi("b", T.FLOAT, [2, 3])], [vi("y", T.FLOAT, [2, 6])]), {
        "node": "concat0",
        "attribute": "axis",
    }


@case("opset", "Concat without its required 'axis' attribute")
def o_concat_missing_axis(fixed=False):
    n = N("Concat", ["a", "b"], ["y"], "concat0")
    return model([n], [vi("a", T.FLOAT, [2, 3]), vi("b", T.FLOAT, [2, 3])], [vi("y", T.FLOAT, 2)]), {
        "node": "concat0",
        "attribute": "axis",
    }


@case("opset", "AveragePool without its required 'kernel_shape' attribute")
def o_avgpool_missing_kernel(fixed=False):
    n = N("AveragePool", ["x"], ["y"], "ap0")
    return model([n], [vi("x", T.FLOAT, [1, 1, 4, 4])], [vi("y", T.FLOAT, 4)]), {
        "node": "ap0",
        "attribute": "kernel_shape",
    }


@case("opset", "Cast without its required 'to' attribute")
def o_cast_missing_to(fixed=False):
    return unary("Cast", name="cast0", out_et=T.INT64), {"node": "cast0", "attribute": "to"}


@case("opset", "Concat axis=-5 out of range for rank-2 inputs", twin=True)
def o_concat_axis_range(fixed=False):
    n = N("Concat", ["a", "b"], ["y"], "concat0", axis=-1 if fixed else -5)
    return model([n], [vi("a", T.FLOAT, [2, 3]), vi("b", T.FLOAT, [2, 3])], [vi("y", T.FLOAT, [2, 6])]), {
        "node": "concat0",
        "attribute": "axis",
    }


@case("opset", "Transpose perm [0,0,1] is not a permutation", twin=True)
def o_transpose_bad_perm(fixed=False):
    return unary("Transpose", shape=(2, 3, 4), name="tr0", perm=[0, 2, 1] if fixed else [0, 0, 1]), {
        "node": "tr0",
        "attribute": "perm",
    }


@case("opset", "Transpose perm has 2 entries for a rank-3 input")
def o_transpose_perm_len(fixed=False):
    return unary("Transpose", shape=(2, 3, 4), name="tr0", out_shape=2, perm=[1, 0]), {
        "node": "tr0",
        "attribute": "perm",
    }


@case("opset", "Transpose perm entry 3 out of range for rank 3")
def o_transpose_perm_range(fixed=False):
    return unary("Transpose", shape=(2, 3, 4), name="tr0", perm=[0, 3, 1]), {"node": "tr0", "attribute": "perm"}


def _conv(xshape=(1, 3, 8, 8), wshape=(4, 3, 3, 3), bshape=None, et=T.FLOAT, **attrs):
    ins = ["x", "w"] + (["b"] if bshape else [])
    inits = [init("w", np.ones(wshape, np.float32))]
    if bshape:
        inits.append(init("b", np.zeros(bshape, np.float32)))
    n = N("Conv", ins, ["y"], "conv0", **attrs)
    return model([n], [vi("x", et, list(xshape))], [vi("y", et, 4)], inits=inits)


@case("opset", "Conv 2-D with pads of length 3 (needs 4)", twin=True)
def o_conv_pads_len(fixed=False):
    return _conv(pads=[1, 1, 1, 1] if fixed else [1, 1, 1]), {"node": "conv0", "attribute": "pads"}


@case("opset", "Conv 2-D with strides of length 3 (needs 2)")
def o_conv_strides_len(fixed=False):
    return _conv(strides=[1, 1, 1]), {"node": "conv0", "attribute": "strides"}


@case("opset", "Conv 2-D with dilations of length 1 (needs 2)")
def o_conv_dilations_len(fixed=False):
    return _conv(dilations=[1]), {"node": "conv0", "attribute": "dilations"}


@case("opset", "Conv auto_pad='SAME' (valid: NOTSET, SAME_UPPER, SAME_LOWER, VALID)")
def o_conv_autopad_value(fixed=False):
    return _conv(auto_pad="SAME"), {"node": "conv0", "attribute": "auto_pad"}


@case("opset", "Conv with negative pads")
def o_conv_negative_pads(fixed=False):
    return _conv(pads=[-1, 0, 0, 0]), {"node": "conv0", "attribute": "pads"}


@case("opset", "node in domain 'com.acme' whose domain is not imported")
def o_custom_domain_not_imported(fixed=False):
    n = N("FancyOp", ["x"], ["y"], "fancy0", domain="com.acme")
    return model([n], [vi("x", T.FLOAT, [3])], [vi("y", T.FLOAT, [3])]), {"node": "fancy0"}


@case("opset", "Relu given an unknown attribute 'alpha'", twin=True)
def o_unknown_attr(fixed=False):
    return (unary("Relu", name="relu0") if fixed else unary("Relu", name="relu0", alpha=0.1)), {
        "node": "relu0",
        "attribute": "alpha",
    }


@case("opset", "Softmax axis=3 out of range for a rank-2 input")
def o_softmax_axis(fixed=False):
    return unary("Softmax", name="sm0", axis=3), {"node": "sm0", "attribute": "axis"}


@case("opset", "Cast to=100, not a TensorProto.DataType")
def o_cast_bad_to(fixed=False):
    return unary("Cast", name="cast0", out_et=T.INT64, to=100), {"node": "cast0", "attribute": "to"}


@case("opset", "Gather axis=2 out of range for rank-2 data", twin=True)
def o_gather_axis(fixed=False):
    n = N("Gather", ["x", "idx"], ["y"], "gather0", axis=1 if fixed else 2)
    return model([n], [vi("x", T.FLOAT, [2, 3])], [vi("y", T.FLOAT, [2, 2])], inits=[i64("idx", [0, 1])]), {
        "node": "gather0",
        "attribute": "axis",
    }


@case("opset", "LeakyRelu 'alpha' given as an INT attribute")
def o_leakyrelu_alpha_int(fixed=False):
    return unary("LeakyRelu", name="lrelu0", alpha=1), {"node": "lrelu0", "attribute": "alpha"}


@case("opset", "Gemm 'transA' given as a FLOAT attribute")
def o_gemm_transA_float(fixed=False):
    n = N("Gemm", ["a", "b"], ["y"], "gemm0", transA=1.0)
    return model([n], [vi("a", T.FLOAT, [3, 2]), vi("b", T.FLOAT, [3, 4])], [vi("y", T.FLOAT, [2, 4])]), {
        "node": "gemm0",
        "attribute": "transA",
    }


@case("opset", "Flatten axis=3 out of range for rank 2 (allowed [-2,2])")
def o_flatten_axis(fixed=False):
    return unary("Flatten", name="flat0", axis=3), {"node": "flat0", "attribute": "axis"}


@case("opset", "ArgMax axis=-3 out of range for rank 2")
def o_argmax_axis(fixed=False):
    return unary("ArgMax", name="argmax0", out_et=T.INT64, axis=-3), {"node": "argmax0", "attribute": "axis"}


@case("opset", "Concat node carries the 'axis' attribute twice")
def o_duplicate_attr(fixed=False):
    n = N("Concat", ["a", "b"], ["y"], "concat0", axis=0)
    n.attribute.append(h.make_attribute("axis", 1))
    return model([n], [vi("a", T.FLOAT, [2, 3]), vi("b", T.FLOAT, [2, 3])], [vi("y", T.FLOAT, 2)]), {
        "node": "concat0",
        "attribute": "axis",
    }


@case("opset", "main-graph node attribute uses ref_attr_name (only legal inside functions)")
def o_ref_attr_in_main(fixed=False):
    n = N("Softmax", ["x"], ["y"], "sm0")
    a = onnx.AttributeProto()
    a.name = "axis"
    a.ref_attr_name = "my_axis"
    a.type = onnx.AttributeProto.INT
    n.attribute.append(a)
    return model([n], [vi("x", T.FLOAT, [2, 3])], [vi("y", T.FLOAT, [2, 3])]), {"node": "sm0", "attribute": "axis"}


@case("opset", "Resize mode='bicubic' (valid: nearest, linear, cubic)")
def o_resize_mode(fixed=False):
    n = N("Resize", ["x", "", "sc"], ["y"], "resize0", mode="bicubic")
    return model(
        [n], [vi("x", T.FLOAT, [1, 1, 4, 4])], [vi("y", T.FLOAT, [1, 1, 8, 8])], inits=[f32("sc", [1, 1, 2, 2])]
    ), {"node": "resize0", "attribute": "mode"}


@case("opset", "Pad mode='mirror' (valid: constant, reflect, edge, wrap)")
def o_pad_mode(fixed=False):
    n = N("Pad", ["x", "p"], ["y"], "pad0", mode="mirror")
    return model([n], [vi("x", T.FLOAT, [2, 3])], [vi("y", T.FLOAT, [4, 5])], inits=[i64("p", [1, 1, 1, 1])]), {
        "node": "pad0",
        "attribute": "mode",
    }


@case("opset", "default-domain opset version 99 (does not exist)")
def o_opset_too_new(fixed=False):
    return unary("Relu", opset=99, name="relu0"), {"model": True, "node": "relu0"}


@case("opset", "LSTM direction='backwards' (valid: forward, reverse, bidirectional)")
def o_lstm_direction(fixed=False):
    n = N("LSTM", ["x", "w", "r"], ["y"], "lstm0", hidden_size=4, direction="backwards")
    return model(
        [n],
        [vi("x", T.FLOAT, [5, 1, 3])],
        [vi("y", T.FLOAT, 4)],
        inits=[init("w", np.zeros((1, 16, 3), np.float32)), init("r", np.zeros((1, 16, 4), np.float32))],
    ), {"node": "lstm0", "attribute": "direction"}


@case("opset", "Squeeze axes input entry 2 out of range for rank 2")
def o_squeeze_axis_range(fixed=False):
    n = N("Squeeze", ["x", "ax"], ["y"], "sq0")
    return model([n], [vi("x", T.FLOAT, [1, 3])], [vi("y", T.FLOAT, 1)], inits=[i64("ax", [2])], opset=13), {
        "node": "sq0",
        "value": "ax",
    }


# =================================================================== TYPE CONSTRAINTS
def binop(op, et_a, et_b, sa=(2, 3), sb=(2, 3), out_et=None, out_shape=None, name=None, opset=17, **attrs):
    name = name or op.lower() + "0"
    return model(
        [N(op, ["a", "b"], ["y"], name, **attrs)],
        [vi("a", et_a, list(sa)), vi("b", et_b, list(sb))],
        [vi("y", out_et if out_et is not None else et_a, max(len(sa), len(sb)) if out_shape is None else out_shape)],
        opset=opset,
    )


@case("type", "Add of float and int64 (type variable T bound to two types)", twin=True)
def t_add_mixed(fixed=False):
    return binop("Add", T.FLOAT, T.FLOAT if fixed else T.INT64, out_shape=[2, 3]), {"node": "add0"}


@case("type", "Concat of float and double inputs")
def t_concat_mixed(fixed=False):
    return binop("Concat", T.FLOAT, T.DOUBLE, axis=0), {"node": "concat0"}


@case("type", "Sum (variadic) of float and double")
def t_sum_mixed(fixed=False):
    n = N("Sum", ["a", "b", "c"], ["y"], "sum0")
    return model(
        [n], [vi("a", T.FLOAT, [3]), vi("b", T.FLOAT, [3]), vi("c", T.DOUBLE, [3])], [vi("y", T.FLOAT, [3])]
    ), {"node": "sum0", "value": "c"}


@case("type", "Sqrt on int64 (T is float types only)", twin=True)
def t_sqrt_int(fixed=False):
    return unary("Sqrt", et=T.FLOAT if fixed else T.INT64, name="sqrt0"), {"node": "sqrt0"}


@case("type", "Softmax on int32")
def t_softmax_int(fixed=False):
    return unary("Softmax", et=T.INT32, name="sm0"), {"node": "sm0"}


@case("type", "And on float inputs (T is bool)")
def t_and_float(fixed=False):
    return binop("And", T.FLOAT, T.FLOAT, out_et=T.BOOL), {"node": "and0"}


@case("type", "Not on float input")
def t_not_float(fixed=False):
    return unary("Not", et=T.FLOAT, out_et=T.BOOL, name="not0"), {"node": "not0"}


@case("type", "MatMul on bool tensors")
def t_matmul_bool(fixed=False):
    return binop("MatMul", T.BOOL, T.BOOL, sa=(2, 3), sb=(3, 4)), {"node": "matmul0"}


@case("type", "Conv on int64 data")
def t_conv_int(fixed=False):
    n = N("Conv", ["x", "w"], ["y"], "conv0")
    return model([n], [vi("x", T.INT64, [1, 1, 4, 4]), vi("w", T.INT64, [1, 1, 3, 3])], [vi("y", T.INT64, 4)]), {
        "node": "conv0"
    }


@case("type", "Gather indices given as float", twin=True)
def t_gather_float_idx(fixed=False):
    n = N("Gather", ["x", "idx"], ["y"], "gather0", axis=0)
    idx = i64("idx", [0, 1]) if fixed else f32("idx", [0, 1])
    return model([n], [vi("x", T.FLOAT, [3, 4])], [vi("y", T.FLOAT, [2, 4])], inits=[idx]), {
        "node": "gather0",
        "value": "idx",
    }


@case("type", "Where condition is float instead of bool")
def t_where_cond_float(fixed=False):
    n = N("Where", ["c", "a", "b"], ["y"], "where0")
    return model([n], [vi("c", T.FLOAT, [3]), vi("a", T.FLOAT, [3]), vi("b", T.FLOAT, [3])], [vi("y", T.FLOAT, [3])]), {
        "node": "where0",
        "value": "c",
    }


@case("type", "Reshape 'shape' input is a float initializer", twin=True)
def t_reshape_shape_float(fixed=False):
    n = N("Reshape", ["x", "shp"], ["y"], "reshape0")
    shp = i64("shp", [3, 2]) if fixed else f32("shp", [3, 2])
    return model([n], [vi("x", T.FLOAT, [2, 3])], [vi("y", T.FLOAT, [3, 2])], inits=[shp]), {
        "node": "reshape0",
        "value": "shp",
    }


@case("type", "Mul of float input by an INT32 initializer")
def t_mul_int32_init(fixed=False):
    n = N("Mul", ["x", "k"], ["y"], "mul0")
    return model(
        [n], [vi("x", T.FLOAT, [3])], [vi("y", T.FLOAT, [3])], inits=[init("k", np.array([2, 2, 2], np.int32))]
    ), {"node": "mul0", "value": "k"}


@case("type", "Clip min is an int64 scalar while the input is float")
def t_clip_min_type(fixed=False):
    n = N("Clip", ["x", "lo"], ["y"], "clip0")
    return model([n], [vi("x", T.FLOAT, [3])], [vi("y", T.FLOAT, [3])], inits=[i64("lo", 0)]), {
        "node": "clip0",
        "value": "lo",
    }


@case("type", "Range with float start and int64 limit/delta")
def t_range_mixed(fixed=False):
    n = N("Range", ["s", "l", "d"], ["y"], "range0")
    return model([n], [vi("s", T.FLOAT, [])], [vi("y", T.FLOAT, 1)], inits=[i64("l", 5), i64("d", 1)]), {
        "node": "range0"
    }


@case("type", "graph output declared FLOAT but Cast produces INT64", twin=True)
def t_cast_output_decl(fixed=False):
    return unary("Cast", name="cast0", out_et=T.INT64 if fixed else T.FLOAT, out_shape=[2, 3], to=T.INT64), {
        "value": "y",
        "node": "cast0",
    }


@case("type", "Shape output declared as float (Shape yields int64)")
def t_shape_output_float(fixed=False):
    return unary("Shape", name="shape0", out_et=T.FLOAT, out_shape=[2]), {"value": "y", "node": "shape0"}


@case("type", "Equal output declared float (Equal yields bool)")
def t_equal_output_float(fixed=False):
    return binop("Equal", T.FLOAT, T.FLOAT, out_et=T.FLOAT, out_shape=[2, 3]), {"value": "y", "node": "equal0"}


@case("type", "intermediate value_info declares 't' as int64 but Relu(float) produces float", twin=True)
def t_value_info_dtype(fixed=False):
    nodes = [N("Relu", ["x"], ["t"], "relu0"), N("Neg", ["t"], ["y"], "neg0")]
    return model(
        nodes, [vi("x", T.FLOAT, [3])], [vi("y", T.FLOAT, [3])], vinfo=[vi("t", T.FLOAT if fixed else T.INT64, [3])]
    ), {"value": "t", "node": "relu0"}


@case("type", "graph input 'x' has elem_type UNDEFINED (0)")
def t_input_undefined_type(fixed=False):
    return unary("Relu", et=T.UNDEFINED, out_et=T.FLOAT, name="relu0"), {"value": "x"}


@case("type", "Loop-free: MatMulInteger with float inputs (T1 is int8/uint8)")
def t_matmulinteger_float(fixed=False):
    return binop("MatMulInteger", T.FLOAT, T.FLOAT, sa=(2, 3), sb=(3, 4), out_et=T.INT32), {"node": "matmulinteger0"}


# =================================================================== SHAPES
@case("shape", "Add broadcast clash: [2,3] + [4,3]", twin=True)
def s_broadcast(fixed=False):
    return binop("Add", T.FLOAT, T.FLOAT, sa=(2, 3), sb=(1, 3) if fixed else (4, 3), out_shape=[2, 3]), {"node": "add0"}


@case("shape", "MatMul inner dims differ: [2,3] x [4,5]", twin=True)
def s_matmul_inner(fixed=False):
    return binop("MatMul", T.FLOAT, T.FLOAT, sa=(2, 3), sb=(3, 5) if fixed else (4, 5), out_shape=[2, 5]), {
        "node": "matmul0"
    }


@case("shape", "MatMul batch dims do not broadcast: [2,3,4] x [5,4,6]")
def s_matmul_batch(fixed=False):
    return binop("MatMul", T.FLOAT, T.FLOAT, sa=(2, 3, 4), sb=(5, 4, 6)), {"node": "matmul0"}


@case("shape", "MatMul with a scalar (rank-0) operand")
def s_matmul_scalar(fixed=False):
    return binop("MatMul", T.FLOAT, T.FLOAT, sa=(), sb=(3, 4)), {"node": "matmul0"}


@case("shape", "Concat along axis 0 with non-axis dims 3 vs 4", twin=True)
def s_concat_dims(fixed=False):
    return binop("Concat", T.FLOAT, T.FLOAT, sa=(2, 3), sb=(2, 3) if fixed else (2, 4), axis=0, out_shape=[4, 3]), {
        "node": "concat0"
    }


@case("shape", "Concat of rank-2 and rank-3 inputs")
def s_concat_rank(fixed=False):
    return binop("Concat", T.FLOAT, T.FLOAT, sa=(2, 3), sb=(2, 3, 1), axis=0), {"node": "concat0"}


@case("shape", "Reshape [2,3] (6 elements) to [4,2] (8 elements)", twin=True)
def s_reshape_count(fixed=False):
    n = N("Reshape", ["x", "shp"], ["y"], "reshape0")
    return model(
        [n], [vi("x", T.FLOAT, [2, 3])], [vi("y", T.FLOAT, 2)], inits=[i64("shp", [3, 2] if fixed else [4, 2])]
    ), {"node": "reshape0", "value": "shp"}


@case("shape", "Reshape target with two -1 entries")
def s_reshape_two_minus1(fixed=False):
    n = N("Reshape", ["x", "shp"], ["y"], "reshape0")
    return model([n], [vi("x", T.FLOAT, [2, 3])], [vi("y", T.FLOAT, 2)], inits=[i64("shp", [-1, -1])]), {
        "node": "reshape0",
        "value": "shp",
    }


@case("shape", "Reshape 'shape' input is 2-D")
def s_reshape_shape_2d(fixed=False):
    n = N("Reshape", ["x", "shp"], ["y"], "reshape0")
    return model([n], [vi("x", T.FLOAT, [2, 3])], [vi("y", T.FLOAT, 2)], inits=[i64("shp", [[3, 2]])]), {
        "node": "reshape0",
        "value": "shp",
    }


@case("shape", "Split sizes [2,2] do not sum to dim 5", twin=True)
def s_split_sum(fixed=False):
    n = N("Split", ["x", "sp"], ["a", "b"], "split0", axis=0)
    return model(
        [n],
        [vi("x", T.FLOAT, [5])],
        [vi("a", T.FLOAT, 1), vi("b", T.FLOAT, 1)],
        inits=[i64("sp", [2, 3] if fixed else [2, 2])],
        opset=13,
    ), {"node": "split0", "value": "sp"}


@case("shape", "Split num_outputs=3 but the node has 2 outputs (opset 18)")
def s_split_num_outputs(fixed=False):
    n = N("Split", ["x"], ["a", "b"], "split0", axis=0, num_outputs=3)
    return model([n], [vi("x", T.FLOAT, [6])], [vi("a", T.FLOAT, 1), vi("b", T.FLOAT, 1)], opset=18), {
        "node": "split0",
        "attribute": "num_outputs",
    }


@case("shape", "Squeeze axis 0 of shape [2,3] (extent is not 1)", twin=True)
def s_squeeze_non1(fixed=False):
    n = N("Squeeze", ["x", "ax"], ["y"], "sq0")
    return model(
        [n], [vi("x", T.FLOAT, [1, 3] if fixed else [2, 3])], [vi("y", T.FLOAT, 1)], inits=[i64("ax", [0])], opset=13
    ), {"node": "sq0", "value": "ax"}


@case("shape", "Unsqueeze with duplicate axes [0,0]")
def s_unsqueeze_dup(fixed=False):
    n = N("Unsqueeze", ["x", "ax"], ["y"], "unsq0")
    return model([n], [vi("x", T.FLOAT, [3])], [vi("y", T.FLOAT, 3)], inits=[i64("ax", [0, 0])], opset=13), {
        "node": "unsq0",
        "value": "ax",
    }


@case("shape", "Gather on rank-0 data")
def s_gather_scalar(fixed=False):
    n = N("Gather", ["x", "idx"], ["y"], "gather0", axis=0)
    return model([n], [vi("x", T.FLOAT, [])], [vi("y", T.FLOAT, 1)], inits=[i64("idx", [0])]), {
        "node": "gather0",
        "value": "x",
    }


@case("shape", "GatherElements indices rank 1 for rank-2 data")
def s_gatherelements_rank(fixed=False):
    n = N("GatherElements", ["x", "idx"], ["y"], "ge0", axis=0)
    return model([n], [vi("x", T.FLOAT, [2, 3])], [vi("y", T.FLOAT, 1)], inits=[i64("idx", [0, 1])]), {
        "node": "ge0",
        "value": "idx",
    }


@case("shape", "Conv: input has 3 channels, weight expects 2 (group=1)", twin=True)
def s_conv_channels(fixed=False):
    return _conv(wshape=(4, 3, 3, 3) if fixed else (4, 2, 3, 3)), {"node": "conv0", "value": "w"}


@case("shape", "Conv group=2 does not divide 3 input channels")
def s_conv_group(fixed=False):
    return _conv(wshape=(4, 1, 3, 3), group=2), {"node": "conv0", "attribute": "group"}


@case("shape", "Conv kernel_shape [5,5] contradicts weight spatial dims [3,3]")
def s_conv_kernel_attr(fixed=False):
    return _conv(kernel_shape=[5, 5]), {"node": "conv0", "attribute": "kernel_shape"}


@case("shape", "Conv weight has rank 3 for a rank-4 input")
def s_conv_weight_rank(fixed=False):
    return _conv(wshape=(4, 3, 3)), {"node": "conv0", "value": "w"}


@case("shape", "Conv bias has 5 entries for 4 output channels")
def s_conv_bias(fixed=False):
    return _conv(bshape=(5,)), {"node": "conv0", "value": "b"}


@case("shape", "MaxPool kernel 5x5 on a 4x4 input without padding", twin=True)
def s_maxpool_kernel(fixed=False):
    n = N("MaxPool", ["x"], ["y"], "mp0", kernel_shape=[3, 3] if fixed else [5, 5])
    return model([n], [vi("x", T.FLOAT, [1, 1, 4, 4])], [vi("y", T.FLOAT, 4)]), {
        "node": "mp0",
        "attribute": "kernel_shape",
    }


@case("shape", "MaxPool kernel_shape has 1 entry for a 2-D spatial input")
def s_maxpool_kernel_len(fixed=False):
    n = N("MaxPool", ["x"], ["y"], "mp0", kernel_shape=[2])
    return model([n], [vi("x", T.FLOAT, [1, 1, 4, 4])], [vi("y", T.FLOAT, 4)]), {
        "node": "mp0",
        "attribute": "kernel_shape",
    }


@case("shape", "GlobalAveragePool on a rank-1 input")
def s_gap_rank(fixed=False):
    return unary("GlobalAveragePool", shape=(4,), name="gap0"), {"node": "gap0", "value": "x"}


@case("shape", "Gemm: A [2,3], B [4,5] — K mismatch", twin=True)
def s_gemm(fixed=False):
    return binop("Gemm", T.FLOAT, T.FLOAT, sa=(2, 3), sb=(3, 5) if fixed else (4, 5), out_shape=[2, 5]), {
        "node": "gemm0"
    }


@case("shape", "Gemm bias C [3,4] not broadcastable to [2,4]")
def s_gemm_bias(fixed=False):
    n = N("Gemm", ["a", "b", "c"], ["y"], "gemm0")
    return model(
        [n],
        [vi("a", T.FLOAT, [2, 3]), vi("b", T.FLOAT, [3, 4])],
        [vi("y", T.FLOAT, 2)],
        inits=[init("c", np.zeros((3, 4), np.float32))],
    ), {"node": "gemm0", "value": "c"}


@case("shape", "Gemm with a rank-3 A")
def s_gemm_rank(fixed=False):
    return binop("Gemm", T.FLOAT, T.FLOAT, sa=(2, 2, 3), sb=(3, 4)), {"node": "gemm0", "value": "a"}


@case("shape", "Expand [2,3] to constant shape [4,3]", twin=True)
def s_expand(fixed=False):
    n = N("Expand", ["x", "shp"], ["y"], "expand0")
    return model(
        [n], [vi("x", T.FLOAT, [2, 3])], [vi("y", T.FLOAT, 2)], inits=[i64("shp", [2, 3] if fixed else [4, 3])]
    ), {"node": "expand0", "value": "shp"}


@case("shape", "Expand 'shape' input is 2-D")
def s_expand_shape_2d(fixed=False):
    n = N("Expand", ["x", "shp"], ["y"], "expand0")
    return model([n], [vi("x", T.FLOAT, [2, 3])], [vi("y", T.FLOAT, 2)], inits=[i64("shp", [[2, 3]])]), {
        "node": "expand0",
        "value": "shp",
    }


@case("shape", "Tile repeats of length 3 for a rank-2 input", twin=True)
def s_tile(fixed=False):
    n = N("Tile", ["x", "rep"], ["y"], "tile0")
    return model(
        [n], [vi("x", T.FLOAT, [2, 3])], [vi("y", T.FLOAT, 2)], inits=[i64("rep", [2, 2] if fixed else [2, 2, 2])]
    ), {"node": "tile0", "value": "rep"}


@case("shape", "Slice axes [3] out of range for rank 2", twin=True)
def s_slice_axes(fixed=False):
    n = N("Slice", ["x", "st", "en", "ax"], ["y"], "slice0")
    return model(
        [n],
        [vi("x", T.FLOAT, [2, 3])],
        [vi("y", T.FLOAT, 2)],
        inits=[i64("st", [0]), i64("en", [2]), i64("ax", [1] if fixed else [3])],
    ), {"node": "slice0", "value": "ax"}


@case("shape", "Slice starts has 2 entries, ends has 1")
def s_slice_len(fixed=False):
    n = N("Slice", ["x", "st", "en"], ["y"], "slice0")
    return model([n], [vi("x", T.FLOAT, [2, 3])], [vi("y", T.FLOAT, 2)], inits=[i64("st", [0, 0]), i64("en", [1])]), {
        "node": "slice0",
        "value": ["st", "en"],
    }


@case("shape", "Slice with repeated axis [1,1]")
def s_slice_dup_axes(fixed=False):
    n = N("Slice", ["x", "st", "en", "ax"], ["y"], "slice0")
    return model(
        [n],
        [vi("x", T.FLOAT, [2, 3])],
        [vi("y", T.FLOAT, 2)],
        inits=[i64("st", [0, 0]), i64("en", [1, 2]), i64("ax", [1, 1])],
    ), {"node": "slice0", "value": "ax"}


@case("shape", "Pad pads length 2 for a rank-2 input (needs 4)", twin=True)
def s_pad_len(fixed=False):
    n = N("Pad", ["x", "p"], ["y"], "pad0")
    return model(
        [n],
        [vi("x", T.FLOAT, [2, 3])],
        [vi("y", T.FLOAT, 2)],
        inits=[i64("p", [1, 1, 1, 1] if fixed else [1, 1])],
        opset=13,
    ), {"node": "pad0", "value": "p"}


@case("shape", "Resize scales of length 2 for a rank-4 input", twin=True)
def s_resize_scales(fixed=False):
    n = N("Resize", ["x", "", "sc"], ["y"], "resize0", mode="nearest")
    return model(
        [n],
        [vi("x", T.FLOAT, [1, 1, 4, 4])],
        [vi("y", T.FLOAT, 4)],
        inits=[f32("sc", [1, 1, 2, 2] if fixed else [2, 2])],
    ), {"node": "resize0", "value": "sc"}


@case("shape", "Resize given both scales and sizes")
def s_resize_both(fixed=False):
    n = N("Resize", ["x", "", "sc", "sz"], ["y"], "resize0", mode="nearest")
    return model(
        [n],
        [vi("x", T.FLOAT, [1, 1, 4, 4])],
        [vi("y", T.FLOAT, 4)],
        inits=[f32("sc", [1, 1, 2, 2]), i64("sz", [1, 1, 8, 8])],
    ), {"node": "resize0", "value": ["sc", "sz"]}


@case("shape", "BatchNormalization scale has 4 entries for 3 channels", twin=True)
def s_batchnorm(fixed=False):
    c = 3 if fixed else 4
    n = N("BatchNormalization", ["x", "sc", "b", "m", "v"], ["y"], "bn0")
    inits = [f32("sc", [1] * c), f32("b", [0] * 3), f32("m", [0] * 3), f32("v", [1] * 3)]
    return model([n], [vi("x", T.FLOAT, [1, 3, 4, 4])], [vi("y", T.FLOAT, [1, 3, 4, 4])], inits=inits), {
        "node": "bn0",
        "value": "sc",
    }


@case("shape", "InstanceNormalization scale has 2 entries for 3 channels")
def s_instnorm(fixed=False):
    n = N("InstanceNormalization", ["x", "sc", "b"], ["y"], "in0")
    return model(
        [n], [vi("x", T.FLOAT, [1, 3, 4, 4])], [vi("y", T.FLOAT, 4)], inits=[f32("sc", [1, 1]), f32("b", [0, 0, 0])]
    ), {"node": "in0", "value": "sc"}


@case("shape", "LayerNormalization scale [3] for normalized dim 4")
def s_layernorm_scale(fixed=False):
    n = N("LayerNormalization", ["x", "sc"], ["y"], "ln0", axis=-1)
    return model([n], [vi("x", T.FLOAT, [2, 4])], [vi("y", T.FLOAT, 2)], inits=[f32("sc", [1, 1, 1])]), {
        "node": "ln0",
        "value": "sc",
    }


@case("shape", "Where operands do not broadcast: [3] vs [4]")
def s_where_broadcast(fixed=False):
    n = N("Where", ["c", "a", "b"], ["y"], "where0")
    return model([n], [vi("c", T.BOOL, [3]), vi("a", T.FLOAT, [3]), vi("b", T.FLOAT, [4])], [vi("y", T.FLOAT, 1)]), {
        "node": "where0"
    }


@case("shape", "Sum (variadic) operands do not broadcast: [3],[3],[2]")
def s_sum_broadcast(fixed=False):
    n = N("Sum", ["a", "b", "c"], ["y"], "sum0")
    return model([n], [vi("a", T.FLOAT, [3]), vi("b", T.FLOAT, [3]), vi("c", T.FLOAT, [2])], [vi("y", T.FLOAT, 1)]), {
        "node": "sum0"
    }


@case("shape", "value_info declares Relu output 't' as [2,4] but input is [2,3]", twin=True)
def s_value_info_shape(fixed=False):
    nodes = [N("Relu", ["x"], ["t"], "relu0"), N("Neg", ["t"], ["y"], "neg0")]
    return model(
        nodes,
        [vi("x", T.FLOAT, [2, 3])],
        [vi("y", T.FLOAT, [2, 3])],
        vinfo=[vi("t", T.FLOAT, [2, 3] if fixed else [2, 4])],
    ), {"value": "t", "node": "relu0"}


@case("shape", "graph output declared rank 1 [2] but Relu of [2,3] is rank 2", twin=True)
def s_output_rank(fixed=False):
    return unary("Relu", name="relu0", out_shape=[2, 3] if fixed else [2]), {"value": "y", "node": "relu0"}


@case("shape", "graph output declared [2,5] but MatMul yields [2,4]")
def s_output_dim(fixed=False):
    return binop("MatMul", T.FLOAT, T.FLOAT, sa=(2, 3), sb=(3, 4), out_shape=[2, 5]), {"value": "y", "node": "matmul0"}


@case("shape", "ReduceSum axes [2] out of range for rank 2 (opset 13)")
def s_reducesum_axes(fixed=False):
    n = N("ReduceSum", ["x", "ax"], ["y"], "rs0")
    return model([n], [vi("x", T.FLOAT, [2, 3])], [vi("y", T.FLOAT, 2)], inits=[i64("ax", [2])], opset=13), {
        "node": "rs0",
        "value": "ax",
    }


@case("shape", "Einsum 'ij,jk->ik' with a rank-3 first operand")
def s_einsum_rank(fixed=False):
    n = N("Einsum", ["a", "b"], ["y"], "einsum0", equation="ij,jk->ik")
    return model([n], [vi("a", T.FLOAT, [2, 3, 4]), vi("b", T.FLOAT, [3, 4])], [vi("y", T.FLOAT, 2)]), {
        "node": "einsum0",
        "attribute": "equation",
    }


@case("shape", "DepthToSpace blocksize 2 with 3 channels (needs a multiple of 4)")
def s_depthtospace(fixed=False):
    return unary("DepthToSpace", shape=(1, 3, 2, 2), name="d2s0", blocksize=2), {
        "node": "d2s0",
        "attribute": "blocksize",
    }


@case("shape", "SpaceToDepth blocksize 2 with H=3")
def s_spacetodepth(fixed=False):
    return unary("SpaceToDepth", shape=(1, 1, 3, 4), name="s2d0", blocksize=2), {
        "node": "s2d0",
        "attribute": "blocksize",
    }


@case("shape", "LSTM hidden_size=4 but W is [1,12,3] (needs 4*4=16 rows)")
def s_lstm_hidden(fixed=False):
    n = N("LSTM", ["x", "w", "r"], ["y"], "lstm0", hidden_size=4)
    return model(
        [n],
        [vi("x", T.FLOAT, [5, 1, 3])],
        [vi("y", T.FLOAT, 4)],
        inits=[init("w", np.zeros((1, 12, 3), np.float32)), init("r", np.zeros((1, 16, 4), np.float32))],
    ), {"node": "lstm0", "value": "w", "attribute": "hidden_size"}


@case("shape", "Range with a non-scalar start [2]")
def s_range_nonscalar(fixed=False):
    n = N("Range", ["s", "l", "d"], ["y"], "range0")
    return model([n], [vi("s", T.INT64, [2])], [vi("y", T.INT64, 1)], inits=[i64("l", 5), i64("d", 1)]), {
        "node": "range0",
        "value": "s",
    }


@case("shape", "TopK K=5 on an axis of size 3")
def s_topk_k(fixed=False):
    n = N("TopK", ["x", "k"], ["v", "i"], "topk0", axis=-1)
    return model([n], [vi("x", T.FLOAT, [2, 3])], [vi("v", T.FLOAT, 2), vi("i", T.INT64, 2)], inits=[i64("k", [5])]), {
        "node": "topk0",
        "value": "k",
    }


@case("shape", "ConstantOfShape input is 2-D")
def s_constantofshape_2d(fixed=False):
    n = N("ConstantOfShape", ["shp"], ["y"], "cos0")
    return model([n], [], [vi("y", T.FLOAT, 2)], inits=[i64("shp", [[2, 3]])]), {"node": "cos0", "value": "shp"}


@case("shape", "ScatterElements updates shape [2] differs from indices shape [3]")
def s_scatter_shape(fixed=False):
    n = N("ScatterElements", ["x", "idx", "u"], ["y"], "scat0", axis=0)
    return model(
        [n], [vi("x", T.FLOAT, [5])], [vi("y", T.FLOAT, 1)], inits=[i64("idx", [0, 1, 2]), f32("u", [1, 2])]
    ), {"node": "scat0", "value": "u"}


@case("shape", "graph input has a negative dim_value -2")
def s_negative_dim(fixed=False):
    return unary("Relu", shape=(-2, 3), name="relu0"), {"value": "x"}


@case("shape", "Clip max is a [2] tensor instead of a scalar")
def s_clip_nonscalar(fixed=False):
    n = N("Clip", ["x", "lo", "hi"], ["y"], "clip0")
    return model([n], [vi("x", T.FLOAT, [3])], [vi("y", T.FLOAT, [3])], inits=[f32("lo", 0.0), f32("hi", [1, 2])]), {
        "node": "clip0",
        "value": "hi",
    }


@case("shape", "OneHot depth is a [2] tensor instead of a scalar")
def s_onehot_depth(fixed=False):
    n = N("OneHot", ["idx", "d", "vals"], ["y"], "oh0")
    return model(
        [n], [vi("idx", T.INT64, [3])], [vi("y", T.FLOAT, 2)], inits=[i64("d", [4, 4]), f32("vals", [0, 1])]
    ), {"node": "oh0", "value": "d"}


@case("shape", "Constant node has no value attribute")
def s_constant_no_value(fixed=False):
    return model([N("Constant", [], ["c"], "const0"), N("Relu", ["c"], ["y"], "relu0")], [], [vi("y", T.FLOAT, 1)]), {
        "node": "const0"
    }


@case("shape", "Constant node has both 'value' and 'value_float'")
def s_constant_two_values(fixed=False):
    n = N("Constant", [], ["y"], "const0", value=nh.from_array(np.array([1.0], np.float32)), value_float=2.0)
    return model([n], [], [vi("y", T.FLOAT, 1)]), {"node": "const0"}


# =================================================================== INITIALIZERS
@case("init", "initializer float_data has 5 values for dims [2,3]", twin=True)
def i_float_data_len(fixed=False):
    w = raw_tensor("w", T.FLOAT, [2, 3], float_data=[1.0] * (6 if fixed else 5))
    return model(
        [N("Add", ["x", "w"], ["y"], "add0")], [vi("x", T.FLOAT, [2, 3])], [vi("y", T.FLOAT, [2, 3])], inits=[w]
    ), {"value": "w"}


@case("init", "INT64 initializer stores its data in float_data", twin=True)
def i_wrong_field(fixed=False):
    if fixed:
        s = raw_tensor("shp", T.INT64, [2], int64_data=[3, 2])
    else:
        s = raw_tensor("shp", T.INT64, [2], float_data=[3.0, 2.0])
    return model(
        [N("Reshape", ["x", "shp"], ["y"], "reshape0")],
        [vi("x", T.FLOAT, [2, 3])],
        [vi("y", T.FLOAT, [3, 2])],
        inits=[s],
    ), {"value": "shp"}


@case("init", "initializer raw_data has 12 bytes for FLOAT [2,3] (needs 24)", twin=True)
def i_raw_len(fixed=False):
    w = raw_tensor("w", T.FLOAT, [2, 3], raw_data=np.ones(6 if fixed else 3, np.float32).tobytes())
    return model(
        [N("Add", ["x", "w"], ["y"], "add0")], [vi("x", T.FLOAT, [2, 3])], [vi("y", T.FLOAT, [2, 3])], inits=[w]
    ), {"value": "w"}


@case("init", "STRING initializer stored in raw_data")
def i_string_raw(fixed=False):
    s = raw_tensor("s", T.STRING, [1], raw_data=b"abc")
    return model([N("Identity", ["s"], ["y"], "id0")], [], [vi("y", T.STRING, [1])], inits=[s]), {"value": "s"}


@case("init", "INT32 initializer stores data in int64_data")
def i_int32_in_int64(fixed=False):
    s = raw_tensor("k", T.INT32, [2], int64_data=[1, 2])
    return model([N("Identity", ["k"], ["y"], "id0")], [], [vi("y", T.INT32, [2])], inits=[s]), {"value": "k"}


@case("init", "initializer with data_type UNDEFINED")
def i_undefined_type(fixed=False):
    s = raw_tensor("w", T.UNDEFINED, [2], raw_data=b"\0" * 8)
    return model([N("Identity", ["w"], ["y"], "id0")], [], [vi("y", T.FLOAT, [2])], inits=[s]), {"value": "w"}


@case("init", "initializer with a negative dim")
def i_negative_dim(fixed=False):
    s = raw_tensor("w", T.FLOAT, [-1], float_data=[])
    return model([N("Identity", ["w"], ["y"], "id0")], [], [vi("y", T.FLOAT, 1)], inits=[s]), {"value": "w"}


@case("init", "initializer 'w' also a graph input, declared [3] but the initializer is [4]", twin=True)
def i_input_shape_conflict(fixed=False):
    n = N("Add", ["x", "w"], ["y"], "add0")
    return model(
        [n],
        [vi("x", T.FLOAT, [4]), vi("w", T.FLOAT, [4] if fixed else [3])],
        [vi("y", T.FLOAT, [4])],
        inits=[f32("w", [1, 2, 3, 4])],
    ), {"value": "w"}


@case("init", "initializer 'w' also a graph input, declared INT64 but the initializer is FLOAT")
def i_input_type_conflict(fixed=False):
    n = N("Add", ["x", "w"], ["y"], "add0")
    return model(
        [n], [vi("x", T.FLOAT, [4]), vi("w", T.INT64, [4])], [vi("y", T.FLOAT, [4])], inits=[f32("w", [1, 2, 3, 4])]
    ), {"value": "w"}


@case("init", "sparse initializer index 7 out of range for dense shape [4]")
def i_sparse_index(fixed=False):
    vals = f32("sp", [1.0, 2.0])
    idx = i64("", [1, 7])
    sp = h.make_sparse_tensor(vals, idx, [4])
    return model([N("Relu", ["sp"], ["y"], "relu0")], [], [vi("y", T.FLOAT, [4])], sparse=[sp]), {"value": "sp"}


@case("init", "sparse initializer indices not sorted")
def i_sparse_unsorted(fixed=False):
    vals = f32("sp", [1.0, 2.0])
    idx = i64("", [3, 1])
    sp = h.make_sparse_tensor(vals, idx, [4])
    return model([N("Relu", ["sp"], ["y"], "relu0")], [], [vi("y", T.FLOAT, [4])], sparse=[sp]), {"value": "sp"}


@case("init", "Constant node's tensor has 2 float_data values for dims [3]")
def i_constant_tensor_len(fixed=False):
    t = raw_tensor("", T.FLOAT, [3], float_data=[1.0, 2.0])
    n = N("Constant", [], ["c"], "const0", value=t)
    return model([n, N("Relu", ["c"], ["y"], "relu0")], [], [vi("y", T.FLOAT, [3])]), {
        "node": "const0",
        "attribute": "value",
        "value": "c",
    }


@case("init", "initializer with an empty name")
def i_empty_name(fixed=False):
    w = f32("", [1, 2, 3])
    return model([N("Relu", ["x"], ["y"], "relu0")], [vi("x", T.FLOAT, [3])], [vi("y", T.FLOAT, [3])], inits=[w]), {
        "value": "",
        "model": True,
    }  # the faulty element has no name: a model-level location is the best possible


@case("init", "two initializers with the same name 'w'")
def i_duplicate_name(fixed=False):
    return model(
        [N("Add", ["x", "w"], ["y"], "add0")],
        [vi("x", T.FLOAT, [3])],
        [vi("y", T.FLOAT, [3])],
        inits=[f32("w", [1, 2, 3]), f32("w", [4, 5, 6])],
    ), {"value": "w"}


# =================================================================== FUNCTIONS
DOM = "local.fn"


def _fn(name, inputs, outputs, nodes, attributes=(), opset=17, extra=()):
    return h.make_function(
        DOM,
        name,
        list(inputs),
        list(outputs),
        list(nodes),
        [h.make_opsetid("", opset)] + [h.make_opsetid(d, v) for d, v in extra],
        attributes=list(attributes),
    )


def _fn_model(fns, call_inputs=("x",), call_name="call0", fn_name="F", opset_fn=True, attrs=None, n_out=1):
    call = N(
        fn_name, list(call_inputs), ["y"] + [f"y{i}" for i in range(1, n_out)], call_name, domain=DOM, **(attrs or {})
    )
    extra = [(DOM, 1)] if opset_fn else []
    ins = [vi(n, T.FLOAT, [3]) for n in dict.fromkeys(call_inputs) if n]
    return model(
        [call],
        ins,
        [vi("y", T.FLOAT, 1)] + [vi(f"y{i}", T.FLOAT, 1) for i in range(1, n_out)],
        extra_opsets=extra,
        functions=fns,
    )


@case("function", "function F calls itself (recursion)", twin=True)
def f_recursion(fixed=False):
    body = [
        N("Relu", ["a"], ["t"], "F_relu"),
        N("Neg" if fixed else "F", ["t"], ["b"], "F_self", domain=None if fixed else DOM),
    ]
    return _fn_model([_fn("F", ["a"], ["b"], body, extra=[(DOM, 1)])]), {"node": ["F_self", "call0"]}


@case("function", "mutual recursion F -> G -> F")
def f_mutual_recursion(fixed=False):
    F = _fn("F", ["a"], ["b"], [N("G", ["a"], ["b"], "F_calls_G", domain=DOM)], extra=[(DOM, 1)])
    G = _fn("G", ["a"], ["b"], [N("F", ["a"], ["b"], "G_calls_F", domain=DOM)], extra=[(DOM, 1)])
    return _fn_model([F, G]), {"node": ["F_calls_G", "G_calls_F", "call0"]}


@case("function", "2-input function F called with 3 inputs", twin=True)
def f_arity(fixed=False):
    F = _fn("F", ["a", "b"], ["c"], [N("Add", ["a", "b"], ["c"], "F_add")])
    return _fn_model([F], call_inputs=("x", "x2") if fixed else ("x", "x2", "x3")), {"node": "call0"}


@case("function", "1-output function F called with 2 outputs")
def f_out_arity(fixed=False):
    F = _fn("F", ["a"], ["c"], [N("Relu", ["a"], ["c"], "F_relu")])
    return _fn_model([F], n_out=2), {"node": "call0"}


@case("function", "function body reads an undefined name 'zz'")
def f_body_undefined(fixed=False):
    F = _fn("F", ["a"], ["c"], [N("Add", ["a", "zz"], ["c"], "F_add")])
    return _fn_model([F]), {"node": ["F_add", "call0"], "value": "zz"}


@case("function", "function output 'c' is never produced in the body")
def f_output_unproduced(fixed=False):
    F = _fn("F", ["a"], ["c"], [N("Relu", ["a"], ["t"], "F_relu")])
    return _fn_model([F]), {"node": "call0", "value": "c"}


@case("function", "function's domain is not in the model's opset_import")
def f_domain_not_imported(fixed=False):
    F = _fn("F", ["a"], ["c"], [N("Relu", ["a"], ["c"], "F_relu")])
    return _fn_model([F], opset_fn=False), {"node": "call0"}


@case("function", "call to an undefined function 'G' in the function domain")
def f_undefined_function(fixed=False):
    F = _fn("F", ["a"], ["c"], [N("Relu", ["a"], ["c"], "F_relu")])
    return _fn_model([F], fn_name="G"), {"node": "call0"}


@case("function", "function body: Add of its float input and an int64 Constant")
def f_body_type_clash(fixed=False):
    F = _fn(
        "F",
        ["a"],
        ["c"],
        [
            N("Constant", [], ["k"], "F_const", value=nh.from_array(np.array([1], np.int64))),
            N("Add", ["a", "k"], ["c"], "F_add"),
        ],
    )
    return _fn_model([F]), {"node": ["F_add", "call0"]}


@case("function", "function body uses unknown op 'Rellu'")
def f_body_unknown_op(fixed=False):
    F = _fn("F", ["a"], ["c"], [N("Rellu", ["a"], ["c"], "F_op")])
    return _fn_model([F]), {"node": ["F_op", "call0"]}


@case("function", "function body node's ref_attr_name refers to an undeclared attribute")
def f_ref_attr_undeclared(fixed=False):
    n = N("Softmax", ["a"], ["c"], "F_sm")
    a = onnx.AttributeProto()
    a.name = "axis"
    a.ref_attr_name = "ax"
    a.type = onnx.AttributeProto.INT
    n.attribute.append(a)
    F = _fn("F", ["a"], ["c"], [n], attributes=["other"])
    return _fn_model([F]), {"node": ["F_sm", "call0"], "attribute": ["axis", "ax"]}


@case("function", "two functions with the same (domain, name)")
def f_duplicate(fixed=False):
    F1 = _fn("F", ["a"], ["c"], [N("Relu", ["a"], ["c"], "F_relu")])
    F2 = _fn("F", ["a"], ["c"], [N("Neg", ["a"], ["c"], "F_neg")])
    return _fn_model([F1, F2]), {"node": "call0", "model": True}


# =================================================================== MISC / STRUCTURE
@case("misc", "model ir_version is 0 (unset)")
def m_ir_zero(fixed=False):
    m = unary("Relu", name="relu0")
    m.ir_version = 0
    return m, {"model": True}


@case("misc", "ir_version 3 with opset 17 (opset 17 needs IR >= 8)")
def m_ir_too_old(fixed=False):
    m = unary("Relu", name="relu0")
    m.ir_version = 3
    return m, {"model": True}


@case("misc", "graph has an empty name")
def m_graph_no_name(fixed=False):
    m = unary("Relu", name="relu0")
    m.graph.name = ""
    return m, {"model": True}


@case("misc", "node with an empty op_type")
def m_empty_op_type(fixed=False):
    return unary("", name="blank0"), {"node": "blank0"}


@case("misc", "Relu given 2 inputs")
def m_too_many_inputs(fixed=False):
    return binop("Relu", T.FLOAT, T.FLOAT, name="relu0"), {"node": "relu0"}


@case("misc", "Add given 1 input", twin=True)
def m_too_few_inputs(fixed=False):
    n = N("Add", ["x", "x"] if fixed else ["x"], ["y"], "add0")
    return model([n], [vi("x", T.FLOAT, [3])], [vi("y", T.FLOAT, [3])]), {"node": "add0"}


@case("misc", "Relu given 2 outputs")
def m_too_many_outputs(fixed=False):
    n = N("Relu", ["x"], ["y", "y2"], "relu0")
    return model([n], [vi("x", T.FLOAT, [3])], [vi("y", T.FLOAT, [3]), vi("y2", T.FLOAT, [3])]), {"node": "relu0"}


@case("misc", "required input given as empty name: Add('', x)")
def m_empty_required_input(fixed=False):
    n = N("Add", ["", "x"], ["y"], "add0")
    return model([n], [vi("x", T.FLOAT, [3])], [vi("y", T.FLOAT, [3])]), {"node": "add0"}


@case("misc", "main-graph output 'y' has no type")
def m_output_no_type(fixed=False):
    m = unary("Relu", name="relu0")
    m.graph.output[0].ClearField("type")
    return m, {"value": "y"}


@case("misc", "main-graph input 'x' has no type")
def m_input_no_type(fixed=False):
    m = unary("Relu", name="relu0")
    m.graph.input[0].ClearField("type")
    return m, {"value": "x"}


@case("misc", "node attribute with an empty name")
def m_attr_empty_name(fixed=False):
    n = N("Relu", ["x"], ["y"], "relu0")
    n.attribute.append(h.make_attribute("", 1))
    return model([n], [vi("x", T.FLOAT, [3])], [vi("y", T.FLOAT, [3])]), {"node": "relu0", "attribute": ""}


@case("misc", "attribute whose declared type (INTS) does not match its filled field (f)")
def m_attr_type_field(fixed=False):
    n = N("Softmax", ["x"], ["y"], "sm0")
    a = onnx.AttributeProto()
    a.name = "axis"
    a.type = onnx.AttributeProto.INTS
    a.f = 1.0
    n.attribute.append(a)
    return model([n], [vi("x", T.FLOAT, [2, 3])], [vi("y", T.FLOAT, [2, 3])]), {"node": "sm0", "attribute": "axis"}


@case("misc", "Dropout ratio input is a [2] tensor instead of a scalar")
def m_dropout_ratio(fixed=False):
    n = N("Dropout", ["x", "r"], ["y"], "drop0")
    return model([n], [vi("x", T.FLOAT, [3])], [vi("y", T.FLOAT, [3])], inits=[f32("r", [0.5, 0.5])]), {
        "node": "drop0",
        "value": "r",
    }


@case("misc", "Loop body declares the iteration number as float")
def m_loop_iter_float(fixed=False):
    body = graph(
        [N("Identity", ["c"], ["c_out"], "body_id"), N("Relu", ["v"], ["v_out"], "body_relu")],
        "body",
        [vi("i", T.FLOAT, []), vi("c", T.BOOL, []), vi("v", T.FLOAT, [3])],
        [vi("c_out", T.BOOL, []), vi("v_out", T.FLOAT, [3])],
    )
    return _loop(body), {"node": "loop0", "attribute": "body", "value": "i"}


@case("misc", "Loop body declares carried input as [4] while the Loop supplies [3]")
def m_loop_carried_shape(fixed=False):
    body = graph(
        [N("Identity", ["c"], ["c_out"], "body_id"), N("Relu", ["v"], ["v_out"], "body_relu")],
        "body",
        [vi("i", T.INT64, []), vi("c", T.BOOL, []), vi("v", T.FLOAT, [4])],
        [vi("c_out", T.BOOL, []), vi("v_out", T.FLOAT, [4])],
    )
    return _loop(body), {"node": "loop0", "attribute": "body", "value": ["v", "v0"]}
