"""The command line, run as a user would: exit statuses, outputs, and bad input.

Outputs and exit statuses are checked in this process (``tests.support.cli.run`` calls
``infer.cli.main``); every verb also runs once as a fresh process, and so do the tests of
terminals and pipes.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.support import cli as C

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "bert_tiny.onnx"


# What the command prints and returns is checked in this process (tests.support.cli.run); the
# tests about the process itself (each verb started afresh, terminals, pipes) start a child.
cli = C.run


def _unknown_reshape_model(path: Path) -> Path:
    """x[N,6] reshaped to a shape computed by NonZero-free but data-dependent input ``p``."""
    g = helper.make_graph(
        [helper.make_node("Reshape", ["x", "p"], ["y"], name="n12"), helper.make_node("Relu", ["y"], ["z"])],
        "g",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 6]),
            helper.make_tensor_value_info("p", TensorProto.INT64, [2]),
        ],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)],
    )
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]), path)
    return path


def _mismatch_model(path: Path) -> Path:
    g = helper.make_graph(
        [helper.make_node("MatMul", ["a", "b"], ["y"], name="n3")],
        "g",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.zeros((4, 5), np.float32), "b")],
    )
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]), path)
    return path


def test_annotate_writes_a_valid_model(tmp_path):
    out = tmp_path / "bert.onnx"
    r = cli("annotate", str(EXAMPLE), "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert "values" in r.stdout and "typed" in r.stdout
    m = onnx.load(out)
    onnx.checker.check_model(m)
    assert len(m.graph.value_info) > 200
    dims = {d.dim_param for vi in m.graph.value_info for d in vi.type.tensor_type.shape.dim if d.dim_param}
    assert {"batch", "sequence"} <= dims


def test_annotate_default_output_and_no_overwrite(tmp_path):
    src = tmp_path / "m.onnx"
    src.write_bytes(EXAMPLE.read_bytes())
    r = cli("annotate", str(src))
    assert r.returncode == 0 and (tmp_path / "m.inferred.onnx").exists()
    r = cli("annotate", str(src))
    assert r.returncode == 2 and "exists" in r.stderr
    r = cli("annotate", str(src), "-o", str(src))
    assert r.returncode == 2 and "--in-place" in r.stderr
    assert src.read_bytes() == EXAMPLE.read_bytes()  # the input is untouched
    r = cli("annotate", str(src), "--in-place")
    assert r.returncode == 0 and len(onnx.load(src).graph.value_info) > 200


def test_annotate_json_and_strict_dims(tmp_path):
    out = tmp_path / "o.onnx"
    r = cli("annotate", str(_unknown_reshape_model(tmp_path / "u.onnx")), "-o", str(out), "--json", "--dims", "strict")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["summary"]["values"] == 2
    assert {v["name"] for v in report["dims"]["variables"]} >= {"N"}
    ident = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
    m = onnx.load(out)
    params = [d.dim_param for vi in m.graph.value_info for d in vi.type.tensor_type.shape.dim if d.dim_param]
    assert params and all(ident.match(p) for p in params)


@pytest.mark.parametrize(
    "content",
    [b"this is not a model", EXAMPLE.read_bytes()[:5000], b""],
    ids=["garbage", "truncated", "empty"],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, content):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(content)
    for verb in ("annotate", "check", "explain"):
        args = [verb, str(bad)] + (["x"] if verb == "explain" else [])
        r = cli(*args)
        assert r.returncode == 2, (verb, r.stdout, r.stderr)
        assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "bad.inferred.onnx").exists()


def test_missing_file_and_directory(tmp_path):
    for path in (tmp_path / "nope.onnx", tmp_path):
        r = cli("check", str(path))
        assert r.returncode == 2 and "Traceback" not in r.stderr


def test_check_reports_errors_with_exit_1(tmp_path):
    r = cli("check", str(_mismatch_model(tmp_path / "bad.onnx")))
    assert r.returncode == 1
    assert "MatMul" in r.stdout and "shape-mismatch" in r.stdout
    r = cli("check", str(_mismatch_model(tmp_path / "bad2.onnx")), "--json")
    data = json.loads(r.stdout)
    d = next(d for d in data["diagnostics"] if d["code"] == "shape-mismatch")
    assert d["severity"] == "error" and d["location"]["node_name"] == "n3" and d["clause"]
    assert data["summary"]["error"] >= 1
    assert cli("check", str(EXAMPLE)).returncode == 0


def test_explain_names_the_root_cause(tmp_path):
    model = _unknown_reshape_model(tmp_path / "u.onnx")
    r = cli("explain", str(model), "z")
    assert r.returncode == 0, r.stderr
    assert "`p` is an input of the model" in r.stdout and "Reshape" in r.stdout
    r = cli("explain", str(model), "z", "--json")
    assert any("`p`" in root for root in json.loads(r.stdout)["roots"])
    assert cli("explain", str(model), "nope").returncode == 2


def test_bind_specializes(tmp_path):
    out = tmp_path / "o.onnx"
    r = cli("annotate", str(EXAMPLE), "-o", str(out), "--bind", "batch=2", "--bind", "sequence=7", "--json")
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)["summary"]
    assert s["known"] == s["values"]
    assert cli("annotate", str(EXAMPLE), "--bind", "batch").returncode == 2


def test_ops_statement():
    r = cli("ops", "--json", "--domain", "ai.onnx")
    rows = json.loads(r.stdout)["operators"]
    matmul = [x for x in rows if x["op_type"] == "MatMul"]
    assert matmul and all(x["status"] == "rule" for x in matmul)
    assert cli("ops").returncode == 0


VERBS = ("annotate", "check", "domain", "explain", "report", "verify", "ops", "cost")


def _relu_model(path: Path) -> Path:
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])],
    )
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]), path)
    return path


@pytest.mark.parametrize("verb", VERBS)
def test_every_verb_runs_in_a_fresh_process(tmp_path, verb):
    """``python -m infer.cli VERB``: a fresh interpreter starts, imports what the verb needs, prints
    and exits with the verb's status (the other tests call ``main`` in this process)."""
    relu = str(_relu_model(tmp_path / "relu.onnx"))
    argv, status, shown = {
        "annotate": (["annotate", relu, "-o", str(tmp_path / "o.onnx"), "--json"], 0, '"summary"'),
        "check": (["check", str(_mismatch_model(tmp_path / "bad.onnx"))], 1, "shape-mismatch"),
        "domain": (["domain", relu, "--json"], 0, "{"),
        "explain": (["explain", str(_unknown_reshape_model(tmp_path / "u.onnx")), "z"], 0, "`p` is an input"),
        "report": (["report", relu, "-o", str(tmp_path / "r.html")], 0, "r.html"),
        "verify": (["verify", relu, "--samples", "1"], 0, "none contradicted"),
        "ops": (["ops", "--json", "--domain", "ai.onnx"], 0, '"MatMul"'),
        "cost": (["cost", relu, "--bind", "N=4"], 0, "peak live"),
    }[verb]
    r = C.spawn(*argv)
    assert r.returncode == status, (r.stdout, r.stderr)
    assert shown in r.stdout and "Traceback" not in r.stderr, (r.stdout, r.stderr)


def test_every_verb_answers_help_and_json(capsys):
    from infer.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert set(sub.choices) == set(VERBS)
    for verb in VERBS:
        with pytest.raises(SystemExit) as e:
            main([verb, "--help"])
        out = capsys.readouterr().out
        assert e.value.code == 0 and "usage" in out and "--json" in out and "--quiet" in out and "exit status" in out


def main(argv: list[str]) -> int:
    from infer.cli import main as cli_main

    return cli_main(argv)


def test_quiet_prints_nothing(tmp_path, capsys):
    model = str(_unknown_reshape_model(tmp_path / "u.onnx"))
    for argv in (
        ["annotate", model, "-o", str(tmp_path / "o.onnx"), "-q"],
        ["check", model, "-q"],
        ["explain", model, "z", "-q"],
        ["report", model, "-o", str(tmp_path / "r.html"), "-q"],
        ["ops", "-q"],
    ):
        assert main(argv) == 0, argv
        out = capsys.readouterr()
        assert out.out == "" and out.err == "", argv


def test_ops_filters_and_markdown(capsys):
    assert main(["ops", "--json", "--status", "rule", "--domain", "ai.onnx.preview.training"]) == 0
    rows = json.loads(capsys.readouterr().out)["operators"]
    assert rows and all(r["status"] == "rule" and r["domain"] == "ai.onnx.preview.training" for r in rows)
    assert main(["ops", "--domain", "ai.onnx.preview.training"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["domain", "operator", "since", "status", "detail"]
    assert len({line.index("rule") for line in lines[1:-1]}) == 1  # an aligned column
    assert main(["ops", "--markdown"]) == 0
    assert capsys.readouterr().out.startswith("<!-- Generated by `python -m infer.out.conformance --markdown`")


def test_bind_of_an_unknown_name_warns(capsys):
    assert main(["check", str(EXAMPLE), "--bind", "nosuch=3"]) == 0
    err = capsys.readouterr().err
    assert "no dimension variable named nosuch" in err and "batch, sequence" in err


def test_color_only_on_a_terminal_and_never_with_no_color(tmp_path, capsys):
    model = str(_mismatch_model(tmp_path / "bad.onnx"))
    main(["check", model])
    assert "\x1b[" not in capsys.readouterr().out  # not a terminal: plain
    main(["check", model, "--color", "always"])
    assert "\x1b[31m" in capsys.readouterr().out
    out = _on_a_terminal([sys.executable, "-m", "infer.cli", "check", model])
    assert "\x1b[31m" in out  # a terminal: coloured
    out = _on_a_terminal([sys.executable, "-m", "infer.cli", "check", model], {"NO_COLOR": "1"})
    assert "\x1b[" not in out and "shape-mismatch" in out


def _on_a_terminal(argv: list[str], env: dict[str, str] | None = None, stderr_only: bool = False) -> str:
    """Run ``argv`` with stdout (or only stderr) on a pseudo-terminal; return what it wrote there."""
    import os
    import pty

    main_fd, side_fd = pty.openpty()
    full_env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"} | {"TERM": "xterm"} | (env or {})
    streams = {"stderr": side_fd, "stdout": subprocess.DEVNULL} if stderr_only else {"stdout": side_fd}
    proc = subprocess.Popen(argv, cwd=ROOT, env=full_env, stdin=subprocess.DEVNULL, **streams)
    os.close(side_fd)
    chunks = []
    while True:
        try:
            data = os.read(main_fd, 1 << 16)
        except OSError:  # the other side closed
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=300)
    os.close(main_fd)
    return b"".join(chunks).decode("utf-8", "replace")


def test_progress_bar_on_a_terminal_only(tmp_path):
    nodes, prev = [], "x"
    for i in range(3000):
        nodes.append(helper.make_node("Relu" if i % 2 else "Neg", [prev], [f"v{i}"]))
        prev = f"v{i}"
    g = helper.make_graph(
        nodes,
        "chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])],
        [helper.make_tensor_value_info(prev, TensorProto.FLOAT, ["N", 3])],
    )
    path = tmp_path / "chain.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]), path)
    argv = [sys.executable, "-m", "infer.cli", "check", str(path)]
    err = _on_a_terminal(argv, stderr_only=True, env={"ONNX_INFER_PROGRESS_DELAY": "0"})
    assert "nodes" in err and "/3000" in err and "\r" in err
    assert _on_a_terminal([*argv, "-q"], stderr_only=True) == ""
    piped = C.spawn("check", str(path))
    assert piped.returncode == 0 and piped.stderr == ""  # never into a pipe


def test_a_closed_pipe_ends_quietly():
    proc = subprocess.Popen(
        [sys.executable, "-m", "infer.cli", "ops"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 0 and b"Traceback" not in err and b"Error" not in err
