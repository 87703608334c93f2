"""Clause 15: every threat of Table 14 has a test that shows the defence, and every limit refuses.

External data (Clauses 13, 15.3): path traversal, absolute paths, symbolic links (the file and a
directory on the way), hard links, files shorter than declared, a file changed between its check
and its opening, a FIFO, checksums, and the opt-in. Resource exhaustion and unbounded recursion
(Clause 15.4): huge dims, ranks, node counts, function call trees, loop nests, expressions that
double at every node, integers squared at every node, deep nesting, oversized and non-regular
model files. Nothing the user gave is lost when writing fails.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import infer
from infer.core import limits
from infer.core import types as T
from infer.load import external
from tests.support import cli as C

ROOT = Path(__file__).resolve().parents[1]
SHAPE = np.array([-1, 2], np.int64)  # x[N, 4] reshaped to [2N, 2]

posix_only = pytest.mark.skipif(not hasattr(os, "O_NOFOLLOW"), reason="needs POSIX openat semantics")


# -- building models -----------------------------------------------------------------------------


def reshape_model(location: str, length: int | None = 16, checksum: str | None = None, **extra: str) -> onnx.ModelProto:
    """``y = Reshape(x[N,4], shape)`` with ``shape`` kept externally at ``location``."""
    t = TensorProto(name="shape", data_type=TensorProto.INT64, dims=[2], data_location=TensorProto.EXTERNAL)
    entries = {"location": location, "offset": "0", **extra}
    if length is not None:
        entries["length"] = str(length)
    if checksum is not None:
        entries["checksum"] = checksum
    for k, v in entries.items():
        e = t.external_data.add()
        e.key, e.value = k, v
    g = helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [t],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 8
    return m


def save(model: onnx.ModelProto, directory: Path, name: str = "model.onnx") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_bytes(model.SerializeToString())
    return path


def infer_external(path: Path, **kwargs) -> infer.InferenceResult:
    return infer.infer_model(path, read_external_data=True, **kwargs)


def was_read(result: infer.InferenceResult) -> bool:
    """Did inference use the external shape? (``y`` is then exactly [2N, 2].)"""
    t = result.type_of("y")
    return isinstance(t, T.TensorType) and t.shape is not None and len(t.shape) == 2 and t.shape[1] == 2


def refusals(result: infer.InferenceResult) -> list[str]:
    return [d.message for d in result.diagnostics if d.code == "external-data" and d.severity == "error"]


# -- external data: the good case and the opt-in -------------------------------------------------


@posix_only
def test_a_safe_reference_is_read_when_opted_in(tmp_path):
    (tmp_path / "shape.bin").write_bytes(SHAPE.tobytes())
    path = save(reshape_model("shape.bin"), tmp_path)
    result = infer_external(path)
    assert was_read(result) and not refusals(result)
    assert str(result.type_of("y")) == "float[2*N,2]"


@posix_only
def test_a_reference_in_a_subdirectory_with_offset_and_checksum(tmp_path):
    data = b"\x00" * 8 + SHAPE.tobytes()
    (tmp_path / "weights").mkdir()
    (tmp_path / "weights" / "all.bin").write_bytes(data)
    model = reshape_model("weights/all.bin", checksum=hashlib.sha1(data).hexdigest())
    model.graph.initializer[0].external_data[1].value = "8"  # offset
    result = infer_external(save(model, tmp_path))
    assert was_read(result) and not refusals(result)


def test_external_data_is_not_read_by_default(tmp_path):
    (tmp_path / "shape.bin").write_bytes(SHAPE.tobytes())
    result = infer.infer_model(save(reshape_model("shape.bin"), tmp_path))
    assert not was_read(result)
    notes = [d for d in result.diagnostics if d.code == "external-data"]
    assert notes and notes[0].severity == "info" and "opt-in" in notes[0].message


def test_bytes_input_has_no_directory_unless_given(tmp_path):
    (tmp_path / "shape.bin").write_bytes(SHAPE.tobytes())
    data = reshape_model("shape.bin").SerializeToString()
    result = infer.infer_model(data, read_external_data=True)
    assert not was_read(result)
    assert any("no directory" in d.message for d in result.diagnostics)
    if hasattr(os, "O_NOFOLLOW"):
        assert was_read(infer.infer_model(data, read_external_data=True, external_data_dir=tmp_path))


# -- Table 14: path traversal ---------------------------------------------------------------------


@pytest.mark.parametrize("location", ["../secret.bin", "sub/../../secret.bin", "..\\secret.bin", ".."])
def test_path_traversal_is_refused(tmp_path, location):
    (tmp_path / "secret.bin").write_bytes(SHAPE.tobytes())
    (tmp_path / "model" / "sub").mkdir(parents=True)
    result = infer_external(save(reshape_model(location), tmp_path / "model"))
    assert not was_read(result)
    assert any("parent-directory" in m for m in refusals(result)), result.diagnostics


@pytest.mark.parametrize("absolute", [True, False])
def test_absolute_path_is_refused(tmp_path, absolute):
    secret = tmp_path / "secret.bin"
    secret.write_bytes(SHAPE.tobytes())
    location = str(secret) if absolute else "C:\\secret.bin"
    result = infer_external(save(reshape_model(location), tmp_path / "model"))
    assert not was_read(result)
    assert any("absolute" in m for m in refusals(result))


def test_references_are_checked_without_reading(tmp_path):
    """Every model gets the checks that need no file system: keys, location, numbers."""
    model = reshape_model("../x.bin", bogus="1")
    result = infer.infer_model(model)
    messages = [d.message for d in result.diagnostics if d.code == "external-data" and d.severity == "error"]
    assert any("parent-directory" in m or "bogus" in m for m in messages)
    both = reshape_model("shape.bin")
    both.graph.initializer[0].raw_data = SHAPE.tobytes()
    assert any("carries contents" in d.message for d in infer.infer_model(both).diagnostics)
    bad_number = reshape_model("shape.bin", length=None, offset="-4")
    assert any("not a non-negative integer" in d.message for d in infer.infer_model(bad_number).diagnostics)


# -- Table 14: symbolic link traversal ------------------------------------------------------------


@posix_only
def test_symbolic_link_file_is_refused(tmp_path):
    (tmp_path / "secret.bin").write_bytes(SHAPE.tobytes())
    model_dir = tmp_path / "model"
    path = save(reshape_model("shape.bin"), model_dir)
    (model_dir / "shape.bin").symlink_to(tmp_path / "secret.bin")
    result = infer_external(path)
    assert not was_read(result)
    assert any("symbolic link" in m for m in refusals(result))


@posix_only
def test_symbolic_link_inside_the_directory_is_refused_too(tmp_path):
    """Even a link to a file inside the model directory: any link is refused (Clause 15.3)."""
    model_dir = tmp_path / "model"
    path = save(reshape_model("shape.bin"), model_dir)
    (model_dir / "real.bin").write_bytes(SHAPE.tobytes())
    (model_dir / "shape.bin").symlink_to("real.bin")
    assert any("symbolic link" in m for m in refusals(infer_external(path)))


@posix_only
def test_symbolic_link_directory_component_is_refused(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "shape.bin").write_bytes(SHAPE.tobytes())
    model_dir = tmp_path / "model"
    path = save(reshape_model("sub/shape.bin"), model_dir)
    (model_dir / "sub").symlink_to(outside, target_is_directory=True)
    result = infer_external(path)
    assert not was_read(result)
    assert any("sub is a symbolic link" in m for m in refusals(result))


# -- Table 14: hard link exposure -----------------------------------------------------------------


@posix_only
def test_hard_link_is_refused(tmp_path):
    secret = tmp_path / "secret.bin"
    secret.write_bytes(SHAPE.tobytes())
    model_dir = tmp_path / "model"
    path = save(reshape_model("shape.bin"), model_dir)
    os.link(secret, model_dir / "shape.bin")
    result = infer_external(path)
    assert not was_read(result)
    assert any("hard links" in m for m in refusals(result))


# -- Table 14: resource exhaustion through external data ------------------------------------------


@posix_only
def test_file_shorter_than_declared_is_refused_before_allocating(tmp_path):
    (tmp_path / "shape.bin").write_bytes(SHAPE.tobytes()[:12])
    result = infer_external(save(reshape_model("shape.bin"), tmp_path))
    assert not was_read(result)
    assert any("shorter than offset 0 plus length 16" in m for m in refusals(result))


@posix_only
def test_huge_declared_offset_and_length_are_refused(tmp_path):
    (tmp_path / "shape.bin").write_bytes(SHAPE.tobytes())
    model = reshape_model("shape.bin", length=None)
    model.graph.initializer[0].external_data[1].value = str(2**62)  # offset
    result = infer_external(save(model, tmp_path))
    assert any("shorter than offset" in m for m in refusals(result))
    wrong_length = reshape_model("shape.bin", length=2**40)
    result = infer_external(save(wrong_length, tmp_path, "m2.onnx"))
    assert any("does not fit its dims" in m for m in refusals(result))


@posix_only
def test_checksum_mismatch_is_refused(tmp_path):
    (tmp_path / "shape.bin").write_bytes(SHAPE.tobytes())
    result = infer_external(save(reshape_model("shape.bin", checksum="0" * 40), tmp_path))
    assert not was_read(result)
    assert any("checksum" in m for m in refusals(result))


@posix_only
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifo_is_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "shape.bin")
    start = time.monotonic()
    result = infer_external(save(reshape_model("shape.bin"), tmp_path))
    assert time.monotonic() - start < 30
    assert any("not a regular file" in m for m in refusals(result))


# -- Table 14: a file changed between its check and its opening -----------------------------------


def _swap_before_open(monkeypatch, swap) -> None:
    """Run ``swap`` just before ``infer.load.external`` opens the final component (the race window)."""
    real_open = os.open

    def racing_open(path, flags, *args, **kwargs):
        if kwargs.get("dir_fd") is not None and not flags & os.O_DIRECTORY:
            swap()
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(external.os, "open", racing_open)


@posix_only
def test_file_replaced_by_a_link_after_the_check_is_refused(tmp_path, monkeypatch):
    secret = tmp_path / "secret.bin"
    secret.write_bytes(SHAPE.tobytes())
    model_dir = tmp_path / "model"
    path = save(reshape_model("shape.bin"), model_dir)
    target = model_dir / "shape.bin"
    target.write_bytes(SHAPE.tobytes())

    def swap() -> None:  # the attacker replaces the checked file with a link outside
        target.unlink()
        target.symlink_to(secret)

    _swap_before_open(monkeypatch, swap)
    result = infer_external(path)
    assert not was_read(result)
    assert any("replaced by a link" in m or "changed between" in m for m in refusals(result))


@posix_only
def test_file_replaced_by_another_file_after_the_check_is_refused(tmp_path, monkeypatch):
    model_dir = tmp_path / "model"
    path = save(reshape_model("shape.bin"), model_dir)
    target = model_dir / "shape.bin"
    target.write_bytes(SHAPE.tobytes())
    other = model_dir / "other.bin"
    other.write_bytes(np.array([4, -1], np.int64).tobytes())

    def swap() -> None:  # a different file (another inode) takes the checked name
        os.replace(other, target)

    _swap_before_open(monkeypatch, swap)
    result = infer_external(path)
    assert not was_read(result)
    assert any("changed between its check and its opening" in m for m in refusals(result))


@posix_only
def test_directory_replaced_by_a_link_after_the_check_is_refused(tmp_path, monkeypatch):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "shape.bin").write_bytes(SHAPE.tobytes())
    model_dir = tmp_path / "model"
    path = save(reshape_model("sub/shape.bin"), model_dir)
    (model_dir / "sub").mkdir()
    (model_dir / "sub" / "shape.bin").write_bytes(SHAPE.tobytes())
    real_open = os.open
    swapped = []

    def racing_open(p, flags, *args, **kwargs):
        if kwargs.get("dir_fd") is not None and flags & os.O_DIRECTORY and not swapped:
            swapped.append(True)
            os.rename(model_dir / "sub", model_dir / "old")
            (model_dir / "sub").symlink_to(outside, target_is_directory=True)
        return real_open(p, flags, *args, **kwargs)

    monkeypatch.setattr(external.os, "open", racing_open)
    result = infer_external(path)
    assert swapped and not was_read(result)
    assert refusals(result)


# -- Table 14: resource exhaustion and unbounded recursion (Clause 15.4) -------------------------


def _chain(op: str, n: int, first: str, **attrs) -> list[onnx.NodeProto]:
    nodes, prev = [], first
    for k in range(n):
        nodes.append(helper.make_node(op, [prev, prev], [f"v{k}"], **attrs))
        prev = f"v{k}"
    return nodes


def _model(nodes, inputs, outputs, inits=(), functions=(), opset=18) -> onnx.ModelProto:
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    imports = [helper.make_opsetid("", opset)] + [helper.make_opsetid(f.domain, 1) for f in functions]
    m = helper.make_model(g, opset_imports=imports, functions=list(functions))
    m.ir_version = 8
    return m


def _limit_errors(result: infer.InferenceResult) -> list[str]:
    return [d.message for d in result.diagnostics if d.code == "limit" and d.severity == "error"]


def _absurd_model() -> onnx.ModelProto:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2**63 - 1, -5, 0, "N"])
    nodes = [
        helper.make_node("Transpose", ["x"], ["t"], perm=[3, 2, 1, 0]),
        helper.make_node("Flatten", ["t"], ["f"], axis=2**62),
        helper.make_node("Pad", ["x", "pads"], ["p"]),
        helper.make_node("Tile", ["x", "reps"], ["tl"]),
        helper.make_node("ConstantOfShape", ["big"], ["c"]),
        helper.make_node("LeakyRelu", ["x"], ["l"], alpha=float("nan")),
    ]
    inits = [
        numpy_helper.from_array(np.array([2**62, -(2**62), 0, 1] * 2, np.int64), "pads"),
        numpy_helper.from_array(np.array([2**62, 2**62, 2**62, 2**62], np.int64), "reps"),
        numpy_helper.from_array(np.array([2**62, 2**62], np.int64), "big"),
    ]
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("f", "p", "tl", "c", "l")]
    return _model(nodes, [x], outs, inits)


def test_absurd_dims_and_attributes_do_not_crash():
    result = infer.infer_model(_absurd_model())
    assert isinstance(result.type_of("tl"), T.TensorType)
    # 2^63 - 1 + 2^62 * 2 is past int64: no runtime has it, so it is an `integer-overflow`, left unknown.
    assert not isinstance(result.type_of("p").shape[0], int)
    assert any(d.code == "integer-overflow" and "Pad" in d.message for d in result.diagnostics)


def test_annotating_absurd_extents_does_not_crash():
    infer.infer_model(_absurd_model()).model.SerializeToString()


def test_strings_that_are_not_utf8_are_refused():
    data = reshape_model("x.bin").SerializeToString().replace(b"Reshape", b"Resh\xffpe")
    with pytest.raises(infer.ModelLoadError, match="op_type is not valid UTF-8"):
        infer.infer_model(data)


def _with_subgraph_names() -> onnx.ModelProto:
    """A model whose text lives in a subgraph, a dim_param and an attribute (for the UTF-8 check)."""
    branch = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["t"], name="Inner")],
        "then",
        [],
        [helper.make_tensor_value_info("t", TensorProto.FLOAT, ["Batch"])],
    )
    node = helper.make_node("If", ["c"], ["y"], then_branch=branch, else_branch=branch)
    return _model(
        [node],
        [
            helper.make_tensor_value_info("c", TensorProto.BOOL, []),
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["Batch"]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )


@pytest.mark.parametrize(
    ("text", "field"), [(b"Inner", "node[0].name"), (b"Batch", "dim_param"), (b"then", "graph.node[0].attribute")]
)
def test_the_fast_utf8_check_agrees_with_the_walk(text, field):
    from infer.load import utf8

    assert utf8._verifying_model_class() is not None  # this protobuf verifies at C speed
    good = _with_subgraph_names()
    assert utf8.non_utf8_field(good) is None and utf8.walk_non_utf8_field(good) is None
    bad = onnx.ModelProto.FromString(good.SerializeToString().replace(text, text[:-1] + b"\xff"))
    found = utf8.walk_non_utf8_field(bad)
    assert found is not None and field in found
    assert utf8.non_utf8_field(bad) == found
    with pytest.raises(infer.ModelLoadError, match="not valid UTF-8"):
        infer.infer_model(bad)


def test_initializer_names_are_checked_though_weights_are_not_serialized():
    from infer.load import utf8

    model = reshape_model("x.bin")
    weight = numpy_helper.from_array(np.zeros((2, 2), np.float32), "Weight")
    weight.external_data.add(key="location", value="Place")
    model.graph.initializer.append(weight)
    for text, field in ((b"Weight", "initializer[1].name"), (b"Place", "external_data[0].value")):
        bad = onnx.ModelProto.FromString(model.SerializeToString().replace(text, text[:-1] + b"\xff"))
        assert field in utf8.non_utf8_field(bad)


@pytest.mark.parametrize("version", [2**63 - 1, 2**31, -(2**63), 0])
def test_absurd_opset_versions_do_not_crash(version):
    model = reshape_model("x.bin")
    model.opset_import[0].version = version
    result = infer.infer_model(model)
    assert isinstance(result.type_of("y"), T.TensorType)


def test_rank_in_the_thousands_is_refused():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1] * 3000)
    m = _model([helper.make_node("Relu", ["x"], ["y"])], [x], [helper.make_tensor_value_info("y", 1, None)])
    result = infer.infer_model(m)
    assert any("rank 3000" in e and "max_rank" in e for e in _limit_errors(result))
    assert infer.infer_model(m, max_rank=4000).type_of("y").rank == 3000  # the limit is the caller's


def test_too_many_nodes_are_refused():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N"])
    nodes = [helper.make_node("Relu", ["x" if k == 0 else f"v{k - 1}"], [f"v{k}"]) for k in range(50)]
    m = _model(nodes, [x], [helper.make_tensor_value_info("v49", 1, None)])
    assert any("max_nodes" in e for e in _limit_errors(infer.infer_model(m, max_nodes=20)))
    assert not _limit_errors(infer.infer_model(m))


def test_function_calls_doubling_at_each_level_are_refused_at_once():
    """G_k calls G_{k-1} twice: 2^40 walks of G_0 from a model of 80 nodes."""
    functions = [
        helper.make_function(
            "fz", "G0", ["a"], ["y"], [helper.make_node("Relu", ["a"], ["y"])], [helper.make_opsetid("", 18)]
        )
    ]
    for k in range(1, 40):
        body = [
            helper.make_node(f"G{k - 1}", ["a"], ["t"], domain="fz"),
            helper.make_node(f"G{k - 1}", ["t"], ["y"], domain="fz"),
        ]
        functions.append(
            helper.make_function(
                "fz", f"G{k}", ["a"], ["y"], body, [helper.make_opsetid("", 18), helper.make_opsetid("fz", 1)]
            )
        )
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N"])
    m = _model(
        [helper.make_node("G39", ["x"], ["y"], domain="fz")],
        [x],
        [helper.make_tensor_value_info("y", 1, None)],
        functions=functions,
    )
    start = time.monotonic()
    result = infer.infer_model(m)
    assert time.monotonic() - start < 20
    assert any("function calls expand" in e for e in _limit_errors(result))


def _nested_loops(depth: int) -> onnx.ModelProto:
    """Loops nested ``depth`` deep, each carrying a tensor that grows (so fixed points iterate)."""
    inner = helper.make_graph(
        [
            helper.make_node("Identity", ["c_in"], ["c_out"]),
            helper.make_node("Concat", ["v_in", "v_in"], ["v_out"], axis=0),
        ],
        "body0",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
            helper.make_tensor_value_info("v_in", TensorProto.FLOAT, None),
        ],
        [
            helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("v_out", TensorProto.FLOAT, None),
        ],
    )
    for k in range(1, depth):
        loop = helper.make_node("Loop", ["", "c_in", "v_in"], ["v_out"], body=inner)
        inner = helper.make_graph(
            [helper.make_node("Identity", ["c_in"], ["c_out"]), loop],
            f"body{k}",
            list(inner.input),
            list(inner.output),
        )
    top = helper.make_node("Loop", ["", "c", "x"], ["y"], body=inner)
    ins = [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N"]),
        helper.make_tensor_value_info("c", TensorProto.BOOL, []),
    ]
    return _model([top], ins, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])


def test_nested_loops_stop_at_the_node_budget():
    start = time.monotonic()
    result = infer.infer_model(_nested_loops(12), max_node_visits=2000)
    assert time.monotonic() - start < 60
    errors = _limit_errors(result)
    assert any("max_node_visits" in e for e in errors), result.diagnostics
    assert result.graphs.keys() == {"main"}  # half-walked loop bodies are not kept


def test_nested_loops_within_the_default_budget_are_bounded():
    start = time.monotonic()
    infer.infer_model(_nested_loops(12))
    assert time.monotonic() - start < 120


def test_expressions_that_double_at_every_node_stay_bounded():
    """Concat(x, x) sixty times: the extent doubles each time; time and size stay small."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N"])
    nodes = _chain("Concat", 60, "x", axis=0)
    start = time.monotonic()
    result = infer.infer_model(_model(nodes, [x], [helper.make_tensor_value_info("v59", 1, None)]))
    assert time.monotonic() - start < 20
    assert str(result.type_of("v59")) == f"float[{2**60}*N]"


def test_an_expression_past_the_size_limit_becomes_a_fresh_variable():
    """A sum over 300 distinct variables: past 256 terms the extent is a fresh variable."""
    ins = [helper.make_tensor_value_info(f"x{k}", TensorProto.FLOAT, [f"n{k}"]) for k in range(300)]
    nodes = [helper.make_node("Concat", [f"x{k}" for k in range(300)], ["y"], axis=0)]
    nodes += [helper.make_node("Concat", ["x0", "x1"], ["z"], axis=0)]
    outs = [helper.make_tensor_value_info("y", 1, None), helper.make_tensor_value_info("z", 1, None)]
    result = infer.infer_model(_model(nodes, ins, outs))
    (d,) = result.shape_of("y")
    var = result.dims.get(str(d))
    assert var is not None and var.is_fresh and "max_expression_size" in var.origin.reason
    assert str(result.type_of("z")) == "float[n0 + n1]"
    warnings = [w for w in result.diagnostics if w.code == "limit"]
    assert warnings and all(w.severity == "warning" for w in warnings)
    wide = infer.infer_model(_model(nodes, ins, outs), max_expression_size=1000)
    assert str(wide.shape_of("y")[0]).count("+") == 299


def test_integers_squared_at_every_node_stay_bounded():
    """Mul(c, c) forty times on a known shape tensor: 3^(2^40) would never finish."""
    nodes = _chain("Mul", 40, "c") + [helper.make_node("ConstantOfShape", ["v39"], ["z"])]
    inits = [numpy_helper.from_array(np.array([3], np.int64), "c")]
    start = time.monotonic()
    result = infer.infer_model(_model(nodes, [], [helper.make_tensor_value_info("z", 1, None)], inits))
    assert time.monotonic() - start < 20
    assert result.type_of("z").rank == 1


def test_subgraphs_nested_past_the_depth_limit_are_refused():
    from tests.fuzz.mutate import deep_nesting

    result = infer.infer_model(deep_nesting(12), max_depth=8)
    assert any("nest 9 deep" in e and "max_depth" in e for e in _limit_errors(result))
    with pytest.raises(infer.ModelLoadError, match=r"nest|parse"):
        infer.infer_model(deep_nesting(2000))  # the parser's own limit: one line, no traceback


def test_recursive_functions_are_reported():
    f = helper.make_function(
        "fz",
        "F",
        ["a"],
        ["y"],
        [helper.make_node("F", ["a"], ["y"], domain="fz")],
        [helper.make_opsetid("", 18), helper.make_opsetid("fz", 1)],
    )
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N"])
    m = _model(
        [helper.make_node("F", ["x"], ["y"], domain="fz")],
        [x],
        [helper.make_tensor_value_info("y", 1, None)],
        functions=[f],
    )
    assert any(d.code == "recursion" for d in infer.infer_model(m).diagnostics)


def test_model_file_past_the_size_limit_is_not_read(tmp_path):
    path = save(reshape_model("shape.bin"), tmp_path)
    with pytest.raises(infer.ModelLoadError, match="max_model_bytes"):
        infer.infer_model(path, max_model_bytes=100)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_model_path_that_is_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "model.onnx"
    os.mkfifo(fifo)
    done = []
    t = threading.Thread(target=lambda: done.append(_load_error(fifo)), daemon=True)
    t.start()
    t.join(timeout=30)
    assert done and "not a regular file" in done[0]


def _load_error(path: Path) -> str:
    try:
        infer.infer_model(path)
    except infer.ModelLoadError as e:
        return str(e)
    return ""


def test_limits_are_validated_and_documented():
    with pytest.raises(ValueError, match="max_rank"):
        infer.infer_model(reshape_model("x.bin"), max_rank=-1)
    doc = (ROOT / "docs" / "limits.md").read_text()
    for name, *_ in limits.TABLE:
        assert f"`{name}`" in doc, f"{name} is not documented in docs/limits.md"


# -- the command line: hostile input, one line, exit 0, 1 or 2 -----------------------------------


_cli = C.run  # in this process: what is checked is the exit status and the one line on stderr


def test_cli_on_hostile_models_exits_cleanly(tmp_path):
    from tests.fuzz.mutate import deep_nesting

    (tmp_path / "secret.bin").write_bytes(SHAPE.tobytes())
    cases = {
        "deep.onnx": deep_nesting(500),
        "traversal.onnx": reshape_model("../secret.bin").SerializeToString(),
        "truncated.onnx": reshape_model("x.bin").SerializeToString()[:37],
        "rank.onnx": _model(
            [helper.make_node("Relu", ["x"], ["y"])],
            [helper.make_tensor_value_info("x", 1, [1] * 2000)],
            [helper.make_tensor_value_info("y", 1, None)],
        ).SerializeToString(),
    }
    (tmp_path / "m").mkdir()
    for name, data in cases.items():
        (tmp_path / "m" / name).write_bytes(data)
        p = _cli("check", f"m/{name}", cwd=tmp_path)
        assert p.returncode in (0, 1, 2), (name, p.returncode, p.stderr)
        assert "Traceback" not in p.stderr and "internal error" not in p.stderr, (name, p.stderr)
        assert len(p.stderr.strip().splitlines()) <= 1, (name, p.stderr)


# -- nothing the user gave is lost ----------------------------------------------------------------


def test_output_equal_to_input_is_refused_and_the_input_kept(tmp_path):
    path = save(reshape_model("x.bin"), tmp_path)
    before = path.read_bytes()
    p = _cli("annotate", str(path), "-o", str(path), cwd=tmp_path)
    assert p.returncode == 2 and "--in-place" in p.stderr
    assert path.read_bytes() == before


def test_a_failed_write_leaves_the_destination_intact(tmp_path, monkeypatch):
    from infer import cli

    dest = tmp_path / "model.onnx"
    dest.write_bytes(b"original")

    def failing_fsync(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cli.os, "fsync", failing_fsync)
    with pytest.raises(OSError):
        cli.write_atomically(b"new contents", dest)
    assert dest.read_bytes() == b"original"
    assert [p.name for p in tmp_path.iterdir()] == ["model.onnx"]  # no temporary file left


# -- fuzz findings: malformed nodes and absurd extents get diagnostics, not rule crashes ----------


def _codes(result: infer.InferenceResult) -> set[str]:
    return {d.code for d in result.diagnostics}


def test_an_attribute_of_undefined_type_is_an_attribute_type_error_not_a_crash():
    node = helper.make_node("LayerNormalization", ["x", "s"], ["y"])
    a = node.attribute.add()
    a.name, a.i = "axis", 1  # the type field left UNDEFINED: its value reads as None
    m = _model(
        [node],
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4]),
            helper.make_tensor_value_info("s", TensorProto.FLOAT, [4]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        opset=17,
    )
    codes = _codes(infer.infer_model(m))
    assert "rule-crash" not in codes and "attribute-type" in codes  # and the rule never reads it


@pytest.mark.parametrize("inputs", [["x", "st", "", "ax"], ["x", "", "en"], ["x", "st"], ["x", "", ""]])
def test_a_slice_without_its_bounds_is_a_missing_input_not_a_crash(inputs):
    inits = [helper.make_tensor(n, TensorProto.INT64, [1], [v]) for n, v in (("st", 1), ("en", 5), ("ax", 1))]
    m = _model(
        [helper.make_node("Slice", inputs, ["y"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 10])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [t for t in inits if t.name in inputs],
    )
    codes = _codes(infer.infer_model(m))
    assert "rule-crash" not in codes and "missing-input" in codes


@pytest.mark.parametrize(
    "op, shape, other",
    [
        ("Gather", [1, 3, 2**63 - 1, 1, 0], helper.make_tensor("o", TensorProto.INT64, [], [0])),
        ("Expand", [2**62, 0], helper.make_tensor("o", TensorProto.INT64, [1], [1])),
        ("Expand", [1, 0], helper.make_tensor("o", TensorProto.INT64, [2], [2**62, 1])),
        ("Concat", [2**59, 0], helper.make_tensor("o", TensorProto.INT64, [2**59, 0], [])),
        ("Add", [2**62, 0], helper.make_tensor("o", TensorProto.INT64, [1], [1])),
        ("Transpose", [2**62, 0], None),
        ("ReduceSum", [2**62, 0], helper.make_tensor("o", TensorProto.INT64, [1], [1])),
    ],
)
def test_empty_tensors_with_huge_extents_do_not_crash_rules(op, shape, other):
    """numpy cannot hold an array of shape [2^62, 0]: such contents are left unknown."""
    attrs = {"axis": 0} if op == "Concat" else {}
    node = helper.make_node(op, ["x", "o"] if other is not None else ["x"], ["y"], **attrs)
    m = _model(
        [node],
        [helper.make_tensor_value_info("x", TensorProto.INT64, shape)],
        [helper.make_tensor_value_info("y", TensorProto.INT64, None)],
        [other] if other is not None else [],
    )
    r = infer.infer_model(m)
    assert "rule-crash" not in _codes(r), r.diagnostics
    assert isinstance(r.type_of("y"), T.TensorType) and r.type_of("y").shape is not None


def test_value_ops_leave_unrepresentable_contents_unknown():
    from infer.core.values import Known
    from signatures.kit import valueops as V

    huge = Known((1, 3, 2**63 - 1, 1, 0), ())
    one = Known((1,), (0,))
    assert V.take(huge, Known((), (0,)), 0) is None
    assert V.take(Known((2,), (1, 2)), Known((2**40, 2**40, 0), ()), 0) is None
    assert V.expand(one, (2**62, 0)) is None and V.expand(Known((2**62, 0), ()), (1,)) is None
    assert V.elementwise(V.ADD, huge, one) is None
    assert V.concat([huge, huge], 0) is None and V.transpose(huge, (4, 3, 2, 1, 0)) is None
    assert V.slice_known(huge, [0], [1], [0], [1]) is None and V.reduce(huge, V.ADD, None, True) is None
    assert V.expand(Known((2,), (1, 2)), (3, 2)) == Known((3, 2), (1, 2, 1, 2, 1, 2))  # small ones still work


@pytest.mark.parametrize(
    "op, extra, attrs",
    [
        ("CumSum", [helper.make_tensor("a", TensorProto.INT64, [], [0])], {}),
        ("GatherElements", [helper.make_tensor("a", TensorProto.INT64, [1, 0], [])], {}),
        ("ScatterElements", [helper.make_tensor("a", TensorProto.INT64, [1, 0], [])] * 2, {}),
        ("Unique", [], {"axis": 1}),
        ("Compress", [helper.make_tensor("a", TensorProto.BOOL, [1], [True])], {"axis": 0}),
    ],
)
def test_rules_computing_contents_with_numpy_refuse_unholdable_shapes(op, extra, attrs):
    """CumSum, GatherElements, ScatterElements, Unique and Compress share valueops.as_array."""
    names = ["x", *(t.name for t in extra)]
    m = _model(
        [helper.make_node(op, names, ["y"], **attrs)],
        [helper.make_tensor_value_info("x", TensorProto.INT64, [2**62, 0])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, None)],
        extra[:1],
    )
    r = infer.infer_model(m)
    assert "rule-crash" not in _codes(r), r.diagnostics
    assert isinstance(r.type_of("y"), T.TensorType)


def test_an_attribute_without_a_type_is_an_error():
    node = helper.make_node("LayerNormalization", ["x"], ["y"])
    node.attribute.add(name="axis", i=-1)  # no type set
    m = _model(
        [node],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    r = infer.infer_model(m)
    bad = [d for d in r.diagnostics if d.code == "attribute-type"]
    assert bad and "no type" in bad[0].message and bad[0].location.attribute == "axis"
    assert "rule-crash" not in _codes(r)
