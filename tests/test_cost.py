"""What the shapes cost (issue 39): bytes, work, weights, the peak, fit; the CLI; hostile input."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import onnx
import pytest
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

import infer
from infer.core import dims as D
from infer.out import liveness as L
from infer.out import sizes as S
from tests.support import cli as CLI
from tests.support.properties import check, counts
from tests.test_dims import BINDINGS, expr_and_value

ROOT = Path(__file__).resolve().parents[1]
BERT = ROOT / "examples" / "bert_tiny.onnx"
MODELS = ROOT / "tests" / "models"
b, s = D.symbol("batch"), D.symbol("sequence")


def _model(nodes, inputs, outputs, inits=(), opset=18) -> onnx.ModelProto:
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def test_bytes_of_values_are_element_size_times_extents():
    cost = infer.infer_model(BERT).cost
    assert cost.bytes_of("input_ids").term == D.mul(8, D.mul(b, s))
    assert cost.bytes_of("last_hidden_state").term == D.mul(128, D.mul(b, s))
    assert cost.inputs.term == D.mul(24, D.mul(b, s))


def test_unknown_sizes_say_why():
    m = _model(
        [helper.make_node("Identity", ["x"], ["y"]), helper.make_node("NonZero", ["f"], ["z"])],
        [
            helper.make_tensor_value_info("x", TensorProto.STRING, ["N"]),
            helper.make_tensor_value_info("f", TensorProto.FLOAT, ["N"]),
        ],
        [
            helper.make_tensor_value_info("y", TensorProto.STRING, ["N"]),
            helper.make_tensor_value_info("z", TensorProto.INT64, None),
        ],
    )
    cost = infer.infer_model(m).cost
    assert cost.bytes_of("y").term is None and "string" in cost.bytes_of("y").why
    assert cost.peak.term is None and "unknown size" in cost.peak.why
    ev = cost.at({"N": 3})
    assert ev.peak is None and "string" in ev.why
    nz = cost.nodes[1]
    assert not nz.known and "NonZero" in nz.why


def test_weights_include_external_data_from_its_metadata(tmp_path):
    w = numpy_helper.from_array(np.zeros((1000, 8), "float32"), "w")
    m = _model(
        [helper.make_node("MatMul", ["x", "w"], ["y"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 1000])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 8])],
        [w],
    )
    onnx.save(
        m,
        tmp_path / "m.onnx",
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location="m.data",
        size_threshold=0,
    )
    loaded = onnx.load(str(tmp_path / "m.onnx"), load_external_data=False)
    assert loaded.graph.initializer[0].data_location == TensorProto.EXTERNAL
    (tmp_path / "m.data").write_bytes(b"")  # never read: the length comes from the metadata
    cost = infer.infer_model(tmp_path / "m.onnx").cost
    assert cost.weights.term == 32000 and cost.weight_count == 1
    assert cost.nodes[0].macs == D.mul(8000, D.symbol("N"))


def test_work_of_contractions_and_elementwise():
    m = _model(
        [
            helper.make_node("Conv", ["x", "w", "c"], ["y"], pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["y"], ["r"]),
            helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
            helper.make_node("Einsum", ["e", "f"], ["g"], equation="ij,jk->ik"),
        ],
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 8, 8]),
            helper.make_tensor_value_info("e", TensorProto.FLOAT, ["I", 5]),
            helper.make_tensor_value_info("f", TensorProto.FLOAT, [5, 7]),
        ],
        [
            helper.make_tensor_value_info("p", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("g", TensorProto.FLOAT, None),
        ],
        [
            numpy_helper.from_array(np.zeros((4, 3, 3, 3), "float32"), "w"),
            numpy_helper.from_array(np.zeros((4,), "float32"), "c"),
        ],
    )
    nodes = infer.infer_model(m).cost.nodes
    n = D.symbol("N")
    assert nodes[0].macs == D.mul(4 * 64 * 27, n) and nodes[0].flops == D.mul(2 * 4 * 64 * 27 + 4 * 64, n)
    assert (nodes[1].macs, nodes[1].flops) == (0, D.mul(256, n))
    assert nodes[2].flops == D.mul(4 * 16 * 4, n)
    assert nodes[3].macs == D.mul(35, D.symbol("I"))


def test_peak_is_a_max_simplified_by_the_prover_only():
    cost = infer.infer_model(BERT).cost
    peak = cost.peak
    assert peak.term is not None and peak.dropped > 0
    # Every candidate kept is evaluated as the sweep evaluates the live bytes, at any binding.
    for binding in ({"batch": 1, "sequence": 1}, {"batch": 3, "sequence": 64}, {"batch": 64, "sequence": 7}):
        ev = cost.at(binding)
        assert D.evaluate(peak.term, binding) == ev.peak == max(ev.live)


def test_simplify_max_keeps_what_it_cannot_prove():
    x, y = D.symbol("x"), D.symbol("y")
    peak = L.simplify_max([(0, D.mul(2, x)), (1, D.add(D.mul(2, x), 1)), (2, y), (3, 5)], None)
    assert sorted(D.to_str(t) for _, t in peak.candidates) == ["2*x + 1", "5", "y"]


@pytest.mark.parametrize("examples", counts(120))
def test_the_peak_narrowed_before_its_sums_are_built_is_the_max_of_every_node(examples):
    """Random spans of random sizes (any sign, floors, extrema): the max of the candidates the peak
    keeps, each at its node, is the largest live sum over all nodes, at any binding."""
    span = st.tuples(st.integers(0, 11), st.integers(0, 5), expr_and_value())

    @check(examples, st.lists(span, min_size=1, max_size=14), BINDINGS)
    def holds(drawn, env):
        spans = [L.Lifetime(f"v{k}", S.Amount(d), s, min(s + w, 11), True) for k, (s, w, (d, _)) in enumerate(drawn)]
        live = [sum(f(env) for s, w, (_, f) in drawn if s <= i <= min(s + w, 11)) for i in range(12)]
        peak = L.peak(spans, 12, None)
        if peak.why:  # a sum past the bound of extent arithmetic: nothing claimed
            return
        assert max(D.evaluate(t, env) for _, t in peak.candidates) == max(live)
        assert all(D.evaluate(t, env) == live[i] for i, t in peak.candidates)


def test_worst_case_over_a_bounded_domain():
    m = _model(
        [helper.make_node("Add", ["x", "p"], ["y"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", "S"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["B", "S"])],
        [numpy_helper.from_array(np.zeros((1, 64), "float32"), "p")],
    )
    cost = infer.infer_model(m).cost
    ev, how = cost.worst()
    assert ev is None and "does not bound B" in how
    fitted = cost.fit(1 << 20, "B", {"S": 64})
    assert fitted.exact and fitted.value == (1 << 20) // (8 * 64)


@pytest.mark.parametrize(
    ("path", "vary", "bind", "budget"),
    [
        (BERT, "batch", {"sequence": 64}, 8 << 30),
        (MODELS / "gpt2_dynamo.onnx", "sequence", {"batch": 8}, 1 << 20),
        (MODELS / "resnet_dynamo.onnx", "batch", {"height": 224, "width": 224}, 1 << 30),
    ],
)
def test_fit_is_exact(path, vary, bind, budget):
    cost = infer.infer_model(path).cost
    f = cost.fit(budget, vary, bind)
    assert f.value is not None and f.limited_by in ("budget", "domain") and f.exact, f
    assert cost.at({**bind, vary: f.value}).peak <= budget
    if f.limited_by == "budget":
        assert cost.at({**bind, vary: f.value + 1}).peak > budget
    else:
        assert f.value == cost.domain_bounds()[vary][1]


def test_fit_without_an_answer_and_bad_arguments():
    cost = infer.infer_model(BERT).cost
    f = cost.fit(10, "batch", {"sequence": 8})
    assert f.value is None and "at batch=1" in f.why
    with pytest.raises(ValueError, match="not an input variable"):
        cost.fit(1 << 30, "nope", {"sequence": 8})
    with pytest.raises(ValueError, match="bind sequence"):
        cost.fit(1 << 30, "batch", {})


def test_parse_size():
    assert S.parse_size("16GiB") == S.parse_size("16G") == 16 << 30
    assert S.parse_size("8GB") == 8 * 10**9 and S.parse_size("1.5K") == 1536 and S.parse_size("100") == 100
    for bad in ("-1G", "8XB", "", "G"):
        with pytest.raises(ValueError):
            S.parse_size(bad)


# -- the command line ----------------------------------------------------------------------------


def test_cli_table_and_json():
    status, out, err = CLI.run("cost", str(BERT), "--bind", "batch=2", "--bind", "sequence=16", "--top", "3")
    assert status == 0, err
    for part in ("totals", "peak node", "top 3 nodes by output memory", "top 3 nodes by work", "weights"):
        assert part in out
    status, out, _ = CLI.run("cost", str(BERT), "--json", "--bind", "sequence=64", "--fit", "8GiB", "--vary", "batch")
    data = json.loads(out)
    assert status == 0 and data["fit"]["value"] == 83886 and data["fit"]["exact"]
    assert data["weights"]["term"] == "91392" and data["peak"]["term"].startswith("max(")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--bind", "nope=3"], "no input variable named nope"),
        (["--bind", "batch=-1"], "cannot be negative"),
        (["--fit", "8XB", "--vary", "batch"], "is not a size"),
        (["--fit", "8G"], "--fit and --vary go together"),
        (["--fit", "8G", "--vary", "nope", "--bind", "sequence=3"], "not an input variable"),
        (["--fit", "8G", "--vary", "batch"], "bind sequence too"),
    ],
)
def test_cli_bad_input_is_one_line(argv, message):
    status, _out, err = CLI.run("cost", str(BERT), *argv)
    assert status == 2 and message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


# -- GPT-2 with 48 layers: the weights are the initializer bytes of the file -----------------------

GPT2_48 = ROOT / "benchmarks" / "models" / "gpt2_48.onnx"  # made by benchmarks/make_models.py (torch)


def _initializer_bytes(t: onnx.TensorProto) -> int:
    """An initializer's bytes worked out apart from the library: the length its external data's
    metadata states, else its element count times numpy's item size of its data type (and, for
    a tensor held inline, the length of its raw data agrees)."""
    if t.data_location == TensorProto.EXTERNAL:
        return int({e.key: e.value for e in t.external_data}["length"])
    n = int(np.prod(list(t.dims), dtype=object)) * helper.tensor_dtype_to_np_dtype(t.data_type).itemsize
    assert not t.raw_data or len(t.raw_data) == n
    return n


@pytest.mark.slow
def test_gpt2_48_weights_are_the_initializer_bytes_of_the_file(tmp_path):
    if not GPT2_48.exists():
        pytest.skip("benchmarks/models/gpt2_48.onnx is missing: make it with benchmarks/make_models.py (needs torch)")
    model = onnx.load(str(GPT2_48))
    expected = sum(_initializer_bytes(t) for t in model.graph.initializer)
    cost = infer.infer_model(GPT2_48).cost
    assert len(model.graph.node) > 10_000 and expected > 10_000_000
    assert (cost.weights.term, cost.weight_count) == (expected, len(model.graph.initializer))
    # The same model with every tensor in an external file, emptied: only the metadata is read.
    onnx.save_model(model, tmp_path / "m.onnx", save_as_external_data=True, location="w.bin", size_threshold=0)
    (tmp_path / "w.bin").write_bytes(b"")
    moved = onnx.load(str(tmp_path / "m.onnx"), load_external_data=False)
    assert all(t.data_location == TensorProto.EXTERNAL for t in moved.graph.initializer)
    assert sum(_initializer_bytes(t) for t in moved.graph.initializer) == expected
    assert infer.infer_model(tmp_path / "m.onnx").cost.weights.term == expected


# -- hostile input -------------------------------------------------------------------------------


def _many_candidates(k: int) -> onnx.ModelProto:
    """``k`` Concats of Tile(x, i+1) and Tile(w, k-i): live bytes n*(i+1) + m*(k-i), pairwise
    incomparable, so the peak is a max of about ``k`` terms."""
    nodes, inits = [], []
    for i in range(k):
        inits += [
            numpy_helper.from_array(np.array([i + 1]), f"r{i}"),
            numpy_helper.from_array(np.array([k - i]), f"q{i}"),
        ]
        nodes += [
            helper.make_node("Tile", ["x", f"r{i}"], [f"u{i}"]),
            helper.make_node("Tile", ["w", f"q{i}"], [f"v{i}"]),
            helper.make_node("Concat", [f"u{i}", f"v{i}"], [f"o{i}"], axis=0),
        ]
    return _model(
        nodes,
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"]),
            helper.make_tensor_value_info("w", TensorProto.FLOAT, ["m"]),
        ],
        [helper.make_tensor_value_info(f"o{k - 1}", TensorProto.FLOAT, None)],
        inits,
    )


def test_hostile_a_max_of_thousands_of_terms():
    result = infer.infer_model(_many_candidates(1000))
    start = time.monotonic()
    cost = result.cost
    assert time.monotonic() - start < 30
    assert len(cost.peak.candidates) >= 900
    assert cost.peak.term is None and "past the bound" in cost.peak.why  # stated, not written
    ev = cost.at({"n": 7, "m": 5})
    # At node 3i+2: x, w (read until node 3k-3 and 3k-2), u_i, v_i and o_i.
    last = 8 * (7 * 1000 + 5 * 1)
    assert ev.peak == max(last, *(4 * (7 + 5) + 8 * (7 * (i + 1) + 5 * (1000 - i)) for i in range(999)))
    f = cost.fit(1 << 30, "n", {"m": 5})
    assert f.exact and cost.at({"n": f.value + 1, "m": 5}).peak > 1 << 30 >= f.peak


def test_hostile_simplify_max_of_thousands_is_bounded():
    x, y = D.symbol("x"), D.symbol("y")
    cands = [(i, D.add(D.mul(i + 1, x), D.mul(5000 - i, y))) for i in range(5000)]
    start = time.monotonic()
    peak = L.simplify_max(cands, None)
    assert time.monotonic() - start < 30 and len(peak.candidates) == 5000


def test_hostile_a_loop_with_a_huge_trip_count():
    body = helper.make_graph(
        [helper.make_node("Add", ["v", "v"], ["v2"]), helper.make_node("Identity", ["c"], ["c2"])],
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("c", TensorProto.BOOL, []),
            helper.make_tensor_value_info("v", TensorProto.FLOAT, ["N"]),
        ],
        [
            helper.make_tensor_value_info("c2", TensorProto.BOOL, []),
            helper.make_tensor_value_info("v2", TensorProto.FLOAT, ["N"]),
        ],
    )
    m = _model(
        [helper.make_node("Loop", ["M", "", "x"], ["y"], body=body)],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N"])],
        [numpy_helper.from_array(np.array(10**18), "M")],
    )
    start = time.monotonic()
    cost = infer.infer_model(m).cost
    assert time.monotonic() - start < 30
    assert not cost.nodes[0].known and "control flow" in cost.nodes[0].why
    assert any("Loop" in n for n in cost.not_expressed)
    assert cost.at({"N": 10}).peak == 80


def test_a_graph_held_in_a_node_keeps_what_it_reads_live_and_its_weights_count():
    """An If whose branches read ``x`` from outside and hold an initializer: ``x`` lives until the
    If (node 2), not its last reader outside (node 0), and the branch's weight counts. The nodes
    that hold graphs and every node's names come from the walk (``GraphRecord.holders``,
    ``node_io``); read from protobuf instead (``None``: a record no walk set), the answer is the same."""

    def branch(name):
        w = numpy_helper.from_array(np.ones(3, np.float32), f"{name}_w")
        out = helper.make_tensor_value_info(f"{name}_o", TensorProto.FLOAT, ["N"])
        return helper.make_graph([helper.make_node("Add", ["x", f"{name}_w"], [f"{name}_o"])], name, [], [out], [w])

    m = _model(
        [
            helper.make_node("Relu", ["x"], ["r"]),
            helper.make_node("ReduceMax", ["r"], ["c"], keepdims=0),
            helper.make_node("Cast", ["c"], ["b"], to=TensorProto.BOOL),
            helper.make_node("If", ["b"], ["y"], then_branch=branch("then"), else_branch=branch("else")),
        ],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N"])],
    )
    result = infer.infer_model(m)
    cost = result.cost
    assert cost.rec.holders == [3]
    x = next(s for s in cost.spans if s.name == "x")
    assert (x.start, x.end) == (0, 3)
    assert cost.weights.term == 24 and cost.weight_count == 2
    walked = [(s.name, s.start, s.end) for s in cost.spans]
    assert cost.rec.node_io is not None and cost.rec.node_io[3] == ("If", "", ("b",), ("y",))
    again = infer.infer_model(m).cost
    again.rec.holders = again.rec.node_io = None
    assert [(s.name, s.start, s.end) for s in again.spans] == walked
    assert again.weights.term == 24 and [w.subgraphs for w in again.nodes] == [False, False, False, True]


def test_a_value_a_held_graph_outputs_as_it_is_stays_live_until_its_node():
    """Branches with no nodes whose outputs are outer values (``x``, ``r``): the If reads them,
    so both live until it (node 3), as the walk orders by them (``SubgraphUses``); reading only
    the branches' nodes' inputs ended them at nodes 0 and 1, and the peak at node 3 left them out."""

    def branch(name, out):
        return helper.make_graph([], name, [], [helper.make_tensor_value_info(out, TensorProto.FLOAT, ["N"])])

    m = _model(
        [
            helper.make_node("Relu", ["x"], ["r"]),
            helper.make_node("ReduceMax", ["r"], ["c"], keepdims=0),
            helper.make_node("Cast", ["c"], ["b"], to=TensorProto.BOOL),
            helper.make_node("If", ["b"], ["y"], then_branch=branch("then", "x"), else_branch=branch("else", "r")),
        ],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N"])],
    )
    cost = infer.infer_model(m).cost
    spans = {s.name: (s.start, s.end) for s in cost.spans}
    assert spans["x"] == (0, 3) and spans["r"] == (0, 3)
    assert cost.at({"N": 10}).live[3] == 4 * 10 * 3 + 1  # x, r and y, and the bool b


def test_hostile_a_value_of_a_quintillion_elements():
    m = _model(
        [helper.make_node("Relu", ["x"], ["y"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [10**9, 10**9])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [10**9, 10**9])],
    )
    cost = infer.infer_model(m).cost
    assert cost.bytes_of("y").term == 4 * 10**18 and cost.nodes[0].flops == 10**18
    assert cost.at({}).peak == 8 * 10**18
    assert S.human(8 * 10**18) == "6.939 EiB"


def test_hostile_cli_on_a_huge_value(tmp_path):
    m = _model(
        [helper.make_node("Relu", ["x"], ["y"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [10**9, 10**9])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [10**9, 10**9])],
    )
    onnx.save(m, tmp_path / "big.onnx")
    status, out, err = CLI.run("cost", str(tmp_path / "big.onnx"))
    assert status == 0 and "EiB" in out, err


# -- the example and the worked example of docs/cost.md ------------------------------------------


def test_largest_batch_example_prints_what_docs_say():
    r = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "largest_batch.py")],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert r.returncode == 0, r.stderr
    page = (ROOT / "docs" / "cost.md").read_text(encoding="utf-8")
    expected = page.split("<!-- largest_batch output -->", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    assert r.stdout == expected


def test_worked_example_of_docs_cost_md():
    page = (ROOT / "docs" / "cost.md").read_text(encoding="utf-8")
    block = page.split("<!-- worked example -->", 1)[1]
    code = block.split("```python\n", 1)[1].split("```", 1)[0]
    expected = block.split("```text\n", 1)[1].split("```", 1)[0]
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert r.stdout == expected
