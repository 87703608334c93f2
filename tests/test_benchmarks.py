"""The benchmark's synthetic models are valid and inferred exactly; its scaling probe runs; the
measure of repeated calls reports memory and time."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort

import infer
from benchmarks.synthetic import NODES_PER_BLOCK, growing_chain

ROOT = Path(__file__).resolve().parents[1]


def test_the_growing_chain_runs_and_every_value_is_inferred_exactly():
    model = growing_chain(5 * NODES_PER_BLOCK)
    result = infer.infer_model(model)
    assert not result.errors
    out = model.graph.output[0].name
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for batch, seq in ((1, 3), (2, 7)):
        (y,) = session.run([out], {"x": np.zeros((batch, seq, 64), np.float32)})
        dims = [infer.core.dims.evaluate(d, {"batch": batch, "seq": seq}) for d in result.shape_of(out)]
        assert dims == list(y.shape) == [batch, seq + 5, 64]


def test_the_scaling_probe_reports_time_and_memory():
    run = subprocess.run(
        [sys.executable, "-m", "benchmarks.run", "--measure-one", "300"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    row = json.loads(run.stdout.strip().splitlines()[-1])
    assert row["nodes"] == 294 and row["seconds"] > 0 and row["seconds_again"] > 0 and row["python_peak_bytes"] > 0
    assert row["model_bytes_without_weights"] > 0


def test_the_corpus_benchmark_times_each_way_of_inferring_a_model():
    from benchmarks.corpus import CORPUS, time_corpus_model, time_one_node

    row = time_corpus_model(CORPUS / "resnet_dynamo.onnx", repeat=1)
    assert row["model"] == "resnet_dynamo" and row["nodes"] == 23
    assert all(row[k] > 0 for k in ("onnx", "drop-in", "infer_model", "again", "renamed", "inserted"))
    one = time_one_node(repeat=3)
    assert set(one) == {"onnx", "drop-in", "drop-in again", "infer_model"} and all(t > 0 for t in one.values())


def test_the_edits_the_corpus_benchmark_times_are_real_edits():
    from benchmarks.corpus import CORPUS, edited

    model = onnx.load(str(CORPUS / "resnet_dynamo.onnx"))
    renamed, inserted = edited(model)
    assert [n.name for n in renamed.graph.node] != [n.name for n in model.graph.node]
    assert len(inserted.graph.node) == len(model.graph.node) + 1
    first = infer.infer_model(model)
    for m in (renamed, inserted):  # each still infers to the same outputs, from scratch or not
        again = infer.infer_model(m, previous=first)
        assert [str(again.type_of(o.name)) for o in m.graph.output] == [
            str(first.type_of(o.name)) for o in model.graph.output
        ]


def test_the_repeated_calls_benchmark_reports_memory_and_time():
    from benchmarks.repeated import EARLY, measure

    row = measure("same", ROOT / "examples" / "bert_tiny.onnx", EARLY + 2)
    assert row["rss_early_mb"] > 0 and row["rss_last_mb"] > 0 and row["objects_early"] > 0
    assert row["ms_per_call"] > 0 and row["gc_ms_per_call"] >= 0 and abs(row["growth"]) < 1


def test_the_cost_benchmark_times_inference_and_the_cost_on_its_result():
    from benchmarks.cost import MODELS, measure

    infer_s, (at_s, computed_s, whole_s) = measure(onnx.load(str(MODELS / "resnet_dynamo.onnx")), repeat=1)
    assert infer_s > 0 and 0 < at_s <= computed_s <= whole_s  # each stage includes the one before


def test_the_cost_benchmark_times_each_part_of_the_statement_apart():
    from benchmarks.cost import MODELS, PARTS, shares_of_parts

    shares = shares_of_parts(onnx.load(str(MODELS / "resnet_dynamo.onnx")), repeat=1)
    assert len(shares) == len(PARTS) and all(s >= 0 for s in shares)
    assert shares[[name for name, _ in PARTS].index("peak term")] > 0  # the peak is built there, not before


def test_the_output_digests_compare_two_builds(tmp_path):
    """``benchmarks.outputs``: the same model gives the same digests in two runs, and ``--compare``
    names an output that differs."""
    from benchmarks.corpus import CORPUS
    from benchmarks.outputs import main, model_digests

    first, again = (model_digests(CORPUS / "resnet_dynamo.onnx") for _ in range(2))
    assert first == again and {"infer_model", "annotated", "drop-in", "renamed", "inserted"} <= set(first)
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps({"compiled": False, "digests": first}))
    b.write_text(json.dumps({"compiled": True, "digests": {**first, "annotated": "0"}}))
    assert main(["--compare", str(a), str(a)]) == 0
    assert main(["--compare", str(a), str(b)]) == 1
