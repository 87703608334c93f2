"""A declared name read as an expression is an assumption; a name that is not read is one variable.

onnxruntime binds every ``dim_param`` of a graph input as an extent of its own. Reading
``N+1`` as ``N + 1`` is what the model's author meant, not what the runtime does, so it is an
assumption (listed, in the domain, bound by ``verify``), and only a positive term that is neither
a constant nor one variable alone is read (``dimparse.read_name``): ``N*0`` is no empty extent,
``-N`` no negative one, and ``N+0``, `` `N` `` and ``Ｎ`` (fullwidth) are not ``N``. Two names are
one variable only when their texts are identical (issue 38 B; its six hostile repros are built
here as they were filed).
"""

from __future__ import annotations

import json
from pathlib import Path

import onnx
import pytest
from hypothesis import strategies as st
from onnx import TensorProto as TP
from onnx import helper as h

import infer
from infer.core import dimparse
from infer.core import dims as D
from infer.core import types as T
from infer.core.dims.bounds import lower
from infer.core.dimtable import DimTable
from infer.onnx_compat import infer_shapes
from tests.support import cli as C
from tests.support.properties import check, counts

# Where the repros were filed (``../shared/repros/hostile3`` beside the repository), when present.
FILED = Path(__file__).resolve().parents[2] / "shared" / "repros" / "hostile3"
# The filed repros: b's name, and what follows the difference of the shapes: ``const`` (the
# difference the other way, and ``ConstantOfShape(Shape(b))``), ``add`` (``Add(a, b)``), ``sub``.
CASES = {
    "expr_dim_nx0": ("N*0", "const"),
    "expr_dim_np1": ("N+1", "const"),
    "alias_plus0": ("N+0", "add"),
    "alias_backq": ("`N`", "add"),
    "u_fullwidthN": ("Ｎ", "sub"),
    "u_minusN": ("-N", "sub"),
}
INPUT_NAMES = {"N", "M", "fi"}  # the identifiers the models here declare beside the drawn name


def named(name: str, tail: str = "const", first: str = "N", declared: str | None = None) -> onnx.ModelProto:
    """Inputs ``a: float[first]`` and ``b: float[name]``, ``y`` the difference of their shapes,
    then ``tail`` (``CASES``); with ``declared``, also ``nz = NonZero(a)``, declared ``[1, declared]``
    in ``value_info`` (an extent inference cannot determine takes the declaration)."""
    nodes = [h.make_node("Shape", ["a"], ["sa"]), h.make_node("Shape", ["b"], ["sb"])]
    nodes.append(h.make_node("Sub", ["sb", "sa"] if tail == "const" else ["sa", "sb"], ["y"]))
    outputs = [h.make_tensor_value_info("y", TP.INT64, None)]
    if tail in ("const", "add"):
        op = h.make_node("ConstantOfShape", ["sb"], ["z"]) if tail == "const" else h.make_node("Add", ["a", "b"], ["z"])
        nodes.append(op)
        outputs.append(h.make_tensor_value_info("z", TP.FLOAT, None))
    value_info = []
    if declared is not None:
        nodes.append(h.make_node("NonZero", ["a"], ["nz"]))
        outputs.append(h.make_tensor_value_info("nz", TP.INT64, None))
        value_info.append(h.make_tensor_value_info("nz", TP.INT64, [1, declared]))
    inputs = [h.make_tensor_value_info("a", TP.FLOAT, [first]), h.make_tensor_value_info("b", TP.FLOAT, [name])]
    g = h.make_graph(nodes, "g", inputs, outputs, value_info=value_info)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 18)], ir_version=8)


def extents_from(result: infer.InferenceResult) -> dict[str, list[D.Dim]]:
    """The extents b's name gives, by value: b's, its Shape's element, z's, and NonZero's count
    where the model declares it."""
    out = {"b": list(result.shape_of("b") or ())}
    known = result.value("sb").known
    out["sb"] = list(known.elems) if known is not None else []
    made = {name for _, name, _ in result.values()}
    for value in ("z", "nz"):
        if value in made:
            out[value] = list((result.shape_of(value) or ())[-1:])
    return out


def assert_sound(result: infer.InferenceResult, name: str) -> None:
    """No extent a name gives is a constant, 0 or negative; a name not read is one variable named
    by its exact text; a graph input's name that is read is a listed assumption, in the domain."""
    (b,) = result.shape_of("b")
    reading = result.dims.readings.get(name)
    if reading is None:
        assert b == D.symbol(name), f"{name!r} is {D.to_str(b)}"
        assert not result.assumptions, [str(a) for a in result.assumptions]
    else:
        assert b == reading and dimparse.is_positive_term(b) and D.free_names(b) <= INPUT_NAMES, D.to_str(b)
        shown = f"{D.quote_name(name)} == {D.to_str(reading)}"
        assert [a.shown for a in result.assumptions] == [shown]
        assert [str(c) for c in result.domain.constraints if c.assumed] == [f"{shown}  [assumed]"]
        assert name in result.input_variables
    for _, value, v in result.values():
        assert not any(type(d) is int and d < 0 for d in T.dims_of(v.type)), f"`{value}` is {v.type}"
    for value, ds in extents_from(result).items():
        for d in ds:
            assert type(d) is not int, f"`{value}` is claimed {d}, a constant extent, from {name!r}"
            assert (lower(d) or 0) >= (0 if value == "nz" else 1), f"`{value}` is {D.to_str(d)}"


def dropin_dims(model: onnx.ModelProto) -> dict[str, list[int | str]]:
    """What the drop-in writes for each value: the dim_value or the dim_param of each axis."""
    out = infer_shapes(model, data_prop=True)
    written = [*out.graph.value_info, *out.graph.output]
    return {vi.name: [d.dim_param or d.dim_value for d in vi.type.tensor_type.shape.dim] for vi in written}


# -- the six repros -------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES)
def test_repro_is_built_as_filed(case):
    path = FILED / f"{case}.onnx"
    if not path.exists():
        pytest.skip("the filed repros are not on this machine")
    assert onnx.printer.to_text(named(*CASES[case]).graph) == onnx.printer.to_text(onnx.load(path).graph)


@pytest.mark.parametrize("case", CASES)
def test_repro_claims_no_constant_zero_or_negative_extent(case):
    name, tail = CASES[case]
    result = infer.infer_model(named(name, tail))
    assert_sound(result, name)
    assert (name in result.dims.readings) == (name == "N+1")


@pytest.mark.parametrize("case", CASES)
def test_check_lists_the_reading_or_keeps_the_variable(case, tmp_path):
    name, tail = CASES[case]
    path = tmp_path / f"{case}.onnx"
    onnx.save(named(name, tail), path)
    status, out, _ = C.run("check", "-v", str(path))
    assert status == 0, out
    assumptions = json.loads(C.run("check", "--json", str(path)).stdout)["assumptions"]
    if name == "N+1":
        assert "assumptions (1):\n  `N+1` == N + 1 (graph input `b` axis 0 is declared 'N+1'" in out
        assert [a["text"].split(" (")[0] for a in assumptions] == ["`N+1` == N + 1"]
        assert "`N+1` == N + 1  [assumed]" in C.run("domain", str(path)).stdout
    else:
        assert "assumptions" not in out and assumptions == []


@pytest.mark.parametrize("case", CASES)
def test_dropin_writes_no_zero_and_no_negative_extent(case):
    name, tail = CASES[case]
    written = dropin_dims(named(name, tail))
    assert all(type(d) is str or d > 0 for ds in written.values() for d in ds), written
    if tail in ("const", "add"):
        (z,) = written["z"]
        assert type(z) is str and (z == name or tail == "add"), written  # Add's is max(N, b's): a new name


@pytest.mark.parametrize("case", CASES)
def test_verify_finds_no_contradiction(case):
    pytest.importorskip("onnxruntime")
    name, tail = CASES[case]
    report = infer.infer_model(named(name, tail)).verify(samples=5)
    assert report.error is None and not report.contradictions, [str(c) for c in report.contradictions]
    assert len(report.checked_runs) == 5
    if name == "N+1":  # every run inside the assumption: the name bound to its reading's value
        assert all(r.bindings["N+1"] == r.bindings["N"] + 1 for r in report.checked_runs)
    else:  # the name an extent of its own, which the runs vary apart from N
        assert any(r.bindings[name] != r.bindings["N"] for r in report.checked_runs)


def test_a_ligature_is_not_its_letters():
    """``ﬁ`` is NFKC ``fi``: Python's parser would read both as one identifier."""
    result = infer.infer_model(named("ﬁ", "sub", first="fi"))
    assert result.shape_of("a") == (D.symbol("fi"),) and result.shape_of("b") == (D.symbol("ﬁ"),)
    assert dimparse.names_in("ﬁ + fi") == {"ﬁ", "fi"}
    assert dimparse.names_in("ｍａｘ(N, M)") is None  # no function but those written as they are read


def test_a_reading_the_walk_relies_on_is_bound_by_verify_also_when_declared_first_on_an_output():
    """A graph input's name read where an output declares it first is still its input's assumption."""
    model = named("2*N", "const")
    model.graph.output[1].CopyFrom(h.make_tensor_value_info("z", TP.FLOAT, ["2*N"]))
    result = infer.infer_model(model)
    assert result.shape_of("z") == (D.mul(D.symbol("N"), 2),)
    assert [a.shown for a in result.assumptions] == ["`2*N` == 2*N"]


# -- names on values nodes produce ----------------------------------------------------------------


@pytest.mark.parametrize("declared", ["N*0", "N-N", "-N", "0*N+1", "N - 1", "N+0", "`N`", "Ｎ", "N**1"])
def test_a_value_info_name_gives_no_constant_zero_or_negative_extent(declared):
    """NonZero's count is unknown to inference and takes what ``value_info`` declares: here each
    name is one variable named by its text, from 0 (no graph input declares it)."""
    model = named("M", "sub", declared=declared)
    result = infer.infer_model(model)
    assert result.shape_of("nz") == (1, D.fresh_symbol(declared)), result.type_of("nz")
    assert_sound(result, "M")
    assert dropin_dims(model)["nz"] == [1, declared]


# -- generated names ------------------------------------------------------------------------------

# Atoms of generated names and whole names: the inputs' names, constants large and small,
# confusables of N (fullwidth, mathematical bold, Cyrillic, a ligature), whitespace, quotes and
# parentheses; names that spell degenerate expressions, aliases of N, and expressions read.
ATOMS = [
    *["N", "M", "N", "M", "0", "1", "2", "7", "2**31", "10**30"],
    *["Ｎ", "𝐍", "Н", "ﬁ", "fi", " N", "N\t", "\u00a0N", "`N`", "``N``", "`N + M`", "(N)", "+N"],
]
DEGENERATE = [
    *["N*0", "N-N", "0*N+1", "-N", "N/N", "N//N", "N%N", "N - 1", "floor(N/2)", "mod(N, 2)", "min(N, 1)"],
    *["N*1", "1*N", "N**1", "N+0", "(N)", "`N`", "max(N, N)", "N + M - M", "ceil_div(N, N)", "Ｎ+1"],
    *["N*10**30", "N + 2**31", "N - 2**40", "N # 1", "N\n+1"],
    *["N  +  1", "N+1", "2*N", "N*M", "max(N, M)", "N + `M`"],
]


@st.composite
def names(draw, depth: int = 0) -> str:
    """A ``dim_param``: degenerate, expression-shaped, confusable, spaced or quoted text."""
    kind = draw(st.integers(0, 5 if depth < 3 else 1))
    if kind == 0:
        return draw(st.sampled_from(ATOMS))
    if kind == 1:
        return draw(st.sampled_from(DEGENERATE))
    a, b = draw(names(depth + 1)), draw(names(depth + 1))
    if kind == 2:
        return f"{a}{draw(st.sampled_from(['+', '-', '*', '//', '%', '/', '**', ' + ', ' * ']))}{b}"
    if kind == 3:
        return f"{draw(st.sampled_from(['max', 'min', 'mod', 'ceil_div', 'floor', 'ｍａｘ']))}({a}, {b})"
    if kind == 4:
        return f"-{a}" if draw(st.booleans()) else f"({a})"
    return "`" + a.replace("`", "``") + "`"


@pytest.mark.parametrize("examples", counts(800))
def test_generated_names_in_a_table(examples):
    """Declared beside ``N`` and ``M`` (in either order, all as inputs' names), a name is either
    one variable named by its exact text or a positive term over the other inputs' names, never
    a constant; two different texts are never one variable."""

    @check(examples, names(), names(), st.booleans(), st.integers(1, 9), st.integers(1, 9))
    def holds(first: str, second: str, early: bool, n: int, m: int):
        table = DimTable(inputs=frozenset({"N", "M", first, second}))
        if early:
            table.declared("N"), table.declared("M")
        for name in (first, second):
            d = table.declared(name)
            if name in table.readings:
                assert dimparse.is_positive_term(d) and D.free_names(d) <= table.inputs - {name}, (name, D.to_str(d))
                value = D.evaluate(d, {v: (n if v == "N" else m) for v in table.inputs})
                assert value >= 1, (name, D.to_str(d), value)
            else:
                assert d == D.symbol(name), (name, D.to_str(d))
        if first != second and first not in table.readings and second not in table.readings:
            assert table.declared(first) != table.declared(second)


@pytest.mark.parametrize("examples", counts(400))
def test_generated_names_are_read_as_written(examples):
    """Every name ``names_in`` finds is in the text as written (no folding of identifiers)."""

    @check(examples, names())
    def holds(text: str):
        for name in dimparse.names_in(text) or ():
            assert name in text or name.replace("`", "``") in text, (text, name)


@pytest.mark.parametrize("examples", counts(40, 10))
def test_generated_names_in_models(examples):
    """The repros' shape with a drawn name on b (and on NonZero's count): sound claims, a listed
    assumption for a reading, a drop-in that writes no empty or negative extent."""

    @check(examples, names(), st.sampled_from(["const", "add", "sub"]), st.none() | names())
    def holds(name: str, tail: str, declared: str | None):
        model = named(name, tail, declared=declared)
        result = infer.infer_model(model)
        assert_sound(result, name)
        written = dropin_dims(model)
        assert all(type(d) is str or d > 0 for v, ds in written.items() if v != "nz" for d in ds), written
