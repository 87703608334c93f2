"""onnxruntime-extensions' string operators (signatures/custom/ai_onnx_contrib.py): one file is
the whole domain, and what it claims is what the extensions' kernels give."""

from __future__ import annotations

import importlib.util
import itertools
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import infer
from infer.core import dims as D

ROOT = Path(__file__).resolve().parents[1]
CONTRIB = "ai.onnx.contrib"
S = TensorProto.STRING


def _model() -> onnx.ModelProto:
    """Every operator of the domain on symbolic text ``[N, L]`` (and a ``[N, L]`` second text)."""
    nodes = [
        helper.make_node("StringLower", ["text"], ["lower"], domain=CONTRIB),
        helper.make_node("StringUpper", ["lower"], ["upper"], domain=CONTRIB),
        helper.make_node("StringRegexReplace", ["upper", "pattern", "rewrite"], ["replaced"], domain=CONTRIB),
        helper.make_node("StringConcat", ["replaced", "suffix"], ["joined"], domain=CONTRIB),
        helper.make_node("StringLength", ["joined"], ["length"], domain=CONTRIB),
    ]
    graph = helper.make_graph(
        nodes,
        "strings",
        [
            helper.make_tensor_value_info("text", S, ["N", "L"]),
            helper.make_tensor_value_info("pattern", S, []),
            helper.make_tensor_value_info("rewrite", S, [1]),
            helper.make_tensor_value_info("suffix", S, ["N", "L"]),
        ],
        [helper.make_tensor_value_info(n, t, None) for n, t in (("joined", S), ("length", TensorProto.INT64))],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(CONTRIB, 1)])


def test_the_index_of_built_in_rules_does_not_list_the_domain():
    from signatures.index import MODULES

    assert not [key for key in MODULES if key[0] == CONTRIB]


def test_a_fresh_process_finds_the_domain_from_its_one_file():
    """Nothing but signatures/custom/ai_onnx_contrib.py declares these operators: a process that has
    loaded no rule finds them for a model that uses them."""
    code = (
        "import sys, infer, onnx; r = infer.infer_model(onnx.load_model_from_string(sys.stdin.buffer.read()));"
        "print(r.type_of('length'), r.type_of('joined'), [d.code for d in r.diagnostics if d.severity == 'error'])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], input=_model().SerializeToString(), capture_output=True, check=True
    )
    assert out.stdout.decode().split() == ["int64[N,L]", "string[N,L]", "[]"], out.stdout


def compare_with_the_kernels() -> list[str]:
    """Every disagreement between the inferred shapes and those the extensions' kernels give, at
    bindings small ones included (run in a process of its own: the extensions' library, once
    loaded, stays in the process and its memory)."""
    import onnxruntime as ort
    import onnxruntime_extensions as ortx

    model = _model()
    result = infer.infer_model(model)
    bad = [str(d) for d in result.diagnostics if d.severity == "error"]
    options = ort.SessionOptions()
    options.register_custom_ops_library(ortx.get_library_path())
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    for n, length in itertools.product((1, 2, 5), (0, 1, 3)):
        text = np.array([[f"Ab{i}{j}" for j in range(length)] for i in range(n)], dtype=object).reshape(n, length)
        feeds = {
            "text": text,
            "pattern": np.array("B", dtype=object),
            "rewrite": np.array(["b"], dtype=object),
            "suffix": text.copy(),
        }
        for name, got in zip(("joined", "length"), session.run(["joined", "length"], feeds)):
            claimed = result.type_of(name).shape
            want = tuple(D.evaluate(d, {"N": n, "L": length}) for d in claimed)
            if want != got.shape:
                bad.append(f"{name} at N={n}, L={length}: inferred {claimed}, the kernel gives {got.shape}")
    return bad


def test_inferred_shapes_are_the_shapes_the_kernels_give():
    if importlib.util.find_spec("onnxruntime_extensions") is None:  # (not imported here: see above)
        pytest.skip("onnxruntime-extensions is not installed")
    code = "from tests.test_custom_ai_onnx_contrib import compare_with_the_kernels as c; print(repr(c()))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
