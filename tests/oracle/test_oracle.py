"""The oracle in CI: a fixed slice of generated shape programs with no contradicted claim, and
tests of the generator (valid programs, every operator family, the bindings), the checker (it
does find a wrong claim), the onnxruntime child (an abort stays in the child) and the shrinker.

The long campaign is ``python -m tests.oracle --programs N`` (docs/oracle.md).
"""

from __future__ import annotations

import sys
from collections import Counter

import numpy as np
import onnx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

import infer
from infer.core import dims as D
from infer.core.types import TensorType

from .check import Finding, check, observe
from .generate import VARIABLES, Generator, Program, _evaluate, generate, op_census, programs
from .ortrun import OrtRunner
from .shrink import Shrinker, shrink

CENSUS = range(0, 300)  # seeds whose programs must together use every operator family
SLICE = CENSUS  # the fixed CI slice: the same programs, checked against onnxruntime

# Operators the brief names: every one must appear across the census seeds.
REQUIRED_OPS = {
    "Conv", "ConvTranspose", "MaxPool", "AveragePool", "LpPool", "Slice", "Pad", "Resize", "Shape", "Size",
    "Gather", "Concat", "Squeeze", "Unsqueeze", "Cast", "Add", "Sub", "Mul", "Div", "Mod", "Floor", "Ceil",
    "Round", "Neg", "Abs", "Min", "Max", "Sqrt", "Pow", "Reciprocal", "Range", "Where", "Less", "Greater",
    "Equal", "Not", "ReduceMin", "ReduceMax", "ReduceSum", "ReduceProd", "ReduceMean", "CumSum", "Expand",
    "Tile", "Identity", "Reshape", "NonZero", "ConstantOfShape", "TopK", "Split", "OneHot", "Constant",
}  # fmt: skip


@pytest.fixture(scope="module")
def runner():
    with OrtRunner() as r:
        yield r


@pytest.fixture(scope="module")
def census(runner) -> list[Program]:
    return [generate(s, runner=runner) for s in CENSUS]


def _attrs(node: onnx.NodeProto) -> dict[str, object]:
    return {a.name: h.get_attribute_value(a) for a in node.attribute}


# -- the fixed slice -------------------------------------------------------------------------------


def test_fixed_slice_has_no_contradicted_claim(runner, census):
    ran, claims, runs, problems = 0, 0, 0, []
    for seed, program in zip(SLICE, census):
        v = check(program, runner)
        assert v.ran, f"seed {seed}: onnxruntime refused a generated program: {v.error}"
        ran += 1
        runs += v.runs
        claims += v.claims
        if v.inference_crash:
            problems.append(f"seed {seed}: inference crashed: {v.inference_crash.splitlines()[-1]}")
        problems += [f"seed {seed}: {f.message}" for f in v.findings[:3]]
        # a contradiction reported of a declared name the program makes true at some binding
        problems += [f"seed {seed}: {e}" for e in v.inference_errors if "declared-type-clash" in e]
    print(f"{ran} programs, {runs} runs, {claims} claims checked")
    assert runs >= 5 * ran and claims > 100 * ran
    assert not problems, "\n".join(problems[:30])


# -- the generator ---------------------------------------------------------------------------------


def test_programs_match_the_reference_at_every_binding(census, runner):
    """The finished model, evaluated node by node from its own inputs and initializers, computes
    what generation recorded for every node (onnx.reference; constant-mode Pad with negative pads,
    which onnx.reference refuses, by the generator's own crop-then-pad; onnxruntime for the
    heavy operators)."""
    for p in census[:30]:
        onnx.checker.check_model(p.model)
        inits = {t.name: nh.to_array(t) for t in p.model.graph.initializer}
        env = [{**inits, **f} for f in p.feeds]
        for node in p.model.graph.node:
            ins = [[e[i] for e in env] if i else None for i in node.input]
            outs = _evaluate(node, ins, p.model.opset_import[0].version, len(env), runner)
            for name, arrays in zip(node.output, outs):
                for k, a in enumerate(arrays):
                    env[k][name] = a
                    want = p.expected[name][k]
                    assert a.shape == want.shape and np.array_equal(a, want, equal_nan=True), (p.seed, name)


@settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_drawn_programs_run_in_onnxruntime_at_every_binding(runner, data):
    program = data.draw(programs(max_nodes=14, runner=runner))
    outcome = observe(program.model, program.feeds, runner)
    assert outcome.outputs is not None, outcome.error
    assert len(outcome.outputs) == len(program.bindings) >= 5
    for k, observed in enumerate(outcome.outputs):
        for name, arrays in program.expected.items():
            if name in observed:
                assert np.asarray(observed[name]).ndim == arrays[k].ndim, (name, program.bindings[k])


def test_every_operator_family_appears(census):
    families = Counter(f for p in census for f in p.families)
    missing = [f for f, _ in Generator.FAMILIES if families[f] == 0]
    assert not missing, f"families never generated: {missing}"
    ops = op_census(census)
    assert REQUIRED_OPS <= set(ops), f"operators never generated: {sorted(REQUIRED_OPS - set(ops))}"


def test_the_variants_that_matter_appear(census):
    seen: Counter[str] = Counter()
    for p in census:
        for n in p.model.graph.node:
            a = _attrs(n)
            if n.op_type == "Cast":
                seen[f"Cast to {a['to']}"] += 1
            if n.op_type == "Mod":
                seen[f"fmod {a.get('fmod', 0)}"] += 1
            if n.op_type in ("MaxPool", "AveragePool", "LpPool") and a.get("ceil_mode"):
                seen["ceil_mode"] += 1
            if n.op_type == "Resize":
                seen[f"resize {a.get('coordinate_transformation_mode', b'half_pixel')!r}"] += 1
                seen[f"resize nearest {a.get('nearest_mode', b'round_prefer_floor')!r}"] += 1
            if n.op_type == "Reshape" and n.input[1] in p.expected:
                target = p.expected[n.input[1]]
                seen["reshape 0"] += any((t == 0).any() for t in target)
                seen["reshape -1"] += any((t == -1).any() for t in target)
            if n.op_type == "NonZero" and n.output[0] in p.expected:
                seen["nonzero empty"] += any(v.shape[1] == 0 for v in p.expected[n.output[0]])
    for to in (TP.INT32, TP.INT64, TP.FLOAT, TP.DOUBLE, TP.FLOAT16):
        assert seen[f"Cast to {to}"], f"no Cast to {to}"
    for key in ("fmod 0", "fmod 1", "ceil_mode", "reshape 0", "reshape -1", "nonzero empty"):
        assert seen[key], key
    for mode in ("half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel", "tf_crop_and_resize"):
        assert seen[f"resize {mode.encode()!r}"], mode
    for mode in ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil"):
        assert seen[f"resize nearest {mode.encode()!r}"], mode


def test_bindings_include_small_odd_and_even_extents(census):
    for p in census:
        assert len(p.bindings) >= 5
        for var in p.variables:
            values = [b[var] for b in p.bindings]
            if var not in VARIABLES:  # named like an expression: at some bindings the value it spells
                assert min(values) >= 1, (p.seed, var, values)
                continue
            assert {1, 2, 3} <= set(values), (p.seed, var, values)
            large = [v for v in values if v > 3]
            assert any(v % 2 for v in large) and any(v % 2 == 0 for v in large), (p.seed, var, values)
        dims = {d.dim_param for i in p.model.graph.input for d in i.type.tensor_type.shape.dim if d.dim_param}
        assert dims == set(p.variables), p.seed


def test_output_axes_get_declared_names_the_program_contradicts(census):
    """Issue 26: a third of the programs name output axes, mostly where the program contradicts
    the name (one name on axes that differ, an input's variable on an axis that is not it)."""
    named = [p for p in census if p.declared]
    assert len(named) >= len(census) // 5
    declared = [d for p in named for d in p.declared]
    assert sum(not all(d.holds) for d in declared) >= len(declared) // 2
    assert any(d.false_everywhere for d in declared) and any(all(d.holds) for d in declared)
    assert any(len(d.places) == 2 for d in declared) and any(d.name in p.variables for p in named for d in p.declared)
    for p in named:  # the names are in the model, where the record says
        dims = {o.name: o.type.tensor_type.shape.dim for o in p.model.graph.output}
        assert all(dims[value][axis].dim_param == d.name for d in p.declared for value, axis in d.places)


def test_a_contradiction_reported_where_the_declaration_holds_is_an_error(runner, census):
    """The checker accepts ``declared-type-clash`` only on a declared name the program contradicts
    at every binding; one on a name that holds somewhere is an inference error."""
    p = next(p for p in census if any(all(d.holds) for d in p.declared))
    value, axis = next(d for d in p.declared if all(d.holds)).places[0]
    result = infer.infer_model(p.model)
    before = check(p, runner, result=result)
    planted = infer.Diagnostic(
        "error",
        "declared-type-clash",
        "9.4",
        f"dim at axis {axis}: declared x, inferred y",
        infer.Location("main", value=value),
    )
    result.diagnostics.append(planted)
    v = check(p, runner, result=result)
    assert v.inference_errors == [*before.inference_errors, str(planted)]
    assert v.declared_clashes == before.declared_clashes


def test_same_seed_same_program(runner):
    a, b = generate(7, runner=runner), generate(7, runner=runner)
    assert a.model.SerializeToString() == b.model.SerializeToString()
    assert a.bindings == b.bindings


# -- the checker and the onnxruntime child ---------------------------------------------------------


def _symbolic_extents(model: onnx.ModelProto) -> bool:
    """Does inference give some value of ``model`` an extent over the inputs' variables?"""
    return any(
        D.is_symbolic(d)
        for _, _, v in infer.infer_model(model).values()
        if isinstance(v.type, TensorType) and v.type.shape
        for d in v.type.shape
    )


def test_checker_finds_a_wrong_claim(runner):
    """Inference of a model whose input says 7 where the program runs other extents is caught."""
    p = next(p for p in map(generate, range(3, 40)) if _symbolic_extents(p.model))
    wrong = onnx.ModelProto()
    wrong.CopyFrom(p.model)
    for inp in wrong.graph.input:
        for d in inp.type.tensor_type.shape.dim:
            if d.dim_param:
                d.Clear()
                d.dim_value = 7
    v = check(p, runner, result=infer.infer_model(wrong))
    assert v.ran and v.findings
    assert any(f.kind == "dim" for f in v.findings)


def test_an_onnxruntime_abort_stays_in_the_child():
    with OrtRunner(command=[sys.executable, "-c", "import os; os.abort()"]) as r:
        outcome = r.run(b"", [{}])
    assert outcome.crashed and outcome.outputs is None and "died" in (outcome.error or "")
    with OrtRunner() as r:  # and a healthy child answers after a refusal
        assert r.run(b"not a model", [{}]).error is not None
        p = generate(1)
        assert r.run(p.model.SerializeToString(), p.feeds).outputs is not None


# -- the shrinker ----------------------------------------------------------------------------------


class _PlantedBug(Shrinker):
    """A stand-in for inference with one planted bug: every Ceil whose result is odd somewhere."""

    def findings(self, model, bindings, observed):
        out = []
        for n in model.graph.node:
            if n.op_type != "Ceil":
                continue
            for k, (b, obs) in enumerate(zip(bindings, observed)):
                value = np.asarray(obs.get(n.output[0], np.zeros(0)))
                if value.size and (value.astype(np.int64) % 2).any():
                    out.append(Finding(n.output[0], "Ceil", "contents", "even", value.tolist(), b, "planted", run=k))
                    break
        return out


def test_shrinker_keeps_the_bug_and_drops_the_rest(runner, census):
    for p in census:
        found = _PlantedBug(runner, ("Ceil", "contents")).findings(p.model, p.bindings, p.expected_runs())
        if found and len(p.model.graph.node) >= 15:
            break
    else:
        pytest.fail("no program with a planted-bug Ceil")
    s = shrink(p.model, p.bindings, p.feeds, found[0], runner, budget=120, shrinker=_PlantedBug)
    ops = [n.op_type for n in s.state.model.graph.node]
    assert "Ceil" in ops
    assert s.nodes_after < s.nodes_before and s.nodes_after <= 6, ops
    again = _PlantedBug(runner, ("Ceil", "contents"))
    assert again.test(s.state.model, s.state.bindings, s.state.feeds) is not None
