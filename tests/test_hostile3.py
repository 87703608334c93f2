"""Hostile input, third round (issue 40): names that cannot crash or spoof, verify's options,
Ctrl-C at start-up, deep models through the drop-ins, and the smaller options.

1. A custom domain is looked up among the modules found once, never as a path built from its
   name: a 300-character domain is "no rule", the same on the first and the second call.
3. ``verify``: the clock is read before every candidate binding, a sampler that has tried every
   binding stops, and any integer is a seed.
4. Ctrl-C while the command starts (``onnx`` importing) is one line and exit status 2.
5. The drop-ins refuse a model nested too deeply with ``ValueError``, never ``RecursionError``.
6. Names are shown with control characters and bidi overrides escaped, on every verb's terminal
   text, in ``--json`` and in the report.
7. ``-o /dev/stdout``, ``domain --near``, ``--int-range -5:5``, an external location ending in
   ``/`` and a ``--bind`` past the supported extents.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid

import onnx
import pytest
from onnx import TensorProto, helper

import infer
import signatures
from infer import onnx_compat
from infer.ort_compat import SymbolicShapeInference
from infer.out.verify import Bounds
from tests.support import cli as C


def relu_model(path, name: str = "x", dims=("N", 3)):
    """``y = Relu(x[N, 3])``: fast to infer and to run."""
    g = helper.make_graph(
        [helper.make_node("Relu", [name], ["y"])],
        "g",
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, list(dims))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 8
    if path is not None:
        onnx.save(m, path)
    return m


# -- 1. a custom domain is never a path ------------------------------------------------------------


def long_domain_model(domain: str) -> onnx.ModelProto:
    """One node ``Foo`` of ``domain`` (imported at version 1) on ``x[N]``."""
    g = helper.make_graph(
        [helper.make_node("Foo", ["x"], ["y"], domain=domain)],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid(domain, 1)])
    m.ir_version = 8
    return m


@pytest.mark.parametrize("length", [300, 5000])
def test_a_long_custom_domain_is_no_rule_on_every_call(length):
    # 300 characters made the lookup's file name too long (OSError, exit 2), and the drop-ins
    # failed on the first call only: the domain was recorded as looked up before the lookup.
    domain = ("d" + uuid.uuid4().hex + "x" * length)[:length]  # new to this process
    model = long_domain_model(domain)
    for _ in range(2):
        codes = [d.code for d in infer.infer_model(model).diagnostics]
        assert "no-rule" in codes and "rule-crash" not in codes, codes
        assert onnx_compat.infer_shapes(model).graph.output[0].type.tensor_type.elem_type == TensorProto.FLOAT
        assert SymbolicShapeInference.infer_shapes(model) is not None


def test_a_long_custom_domain_through_every_verb(tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save(long_domain_model("d" * 300), path)
    verbs = (["check"], ["annotate", "-o", str(tmp_path / "a.onnx")], ["explain", "y"], ["domain"])
    for args in (*verbs, ["report", "-o", str(tmp_path / "r.html")]):
        status, _, err = C.run(args[0], str(path), *args[1:])
        assert status == 0 and "internal error" not in err, (args, err)


def test_a_custom_domain_is_recorded_as_looked_up_only_after_its_import(monkeypatch):
    # A module that fails to import fails the same way on the next call; it is not skipped as done.
    monkeypatch.setattr(signatures, "_custom_stems", lambda: frozenset({"zz_broken"}))
    monkeypatch.setattr(signatures, "_loaded", False)  # (a test before may have loaded every rule)
    for _ in range(2):
        with pytest.raises(ModuleNotFoundError):
            signatures.ensure("zz.broken", "Foo")
    assert ("zz.broken", "Foo") not in signatures._ensured


# -- 3. verify's options ---------------------------------------------------------------------------


@pytest.mark.timeout(120)
def test_verify_stops_when_every_binding_is_tried_or_at_its_clock(tmp_path):
    pytest.importorskip("onnxruntime")
    model = relu_model(tmp_path / "m.onnx")
    start = time.monotonic()
    huge = "99999999999999999999"
    status, out, err = C.run("verify", str(tmp_path / "m.onnx"), "--samples", huge, "--total-seconds", "5")
    assert time.monotonic() - start < 10, "verify ran past its clock"
    assert status == 0, err
    assert "every binding verify draws was tried" in out
    # And the library: the clock is read before each candidate, tried or not.
    result = infer.infer_model(model)
    start = time.monotonic()
    report = result.verify(samples=10**20, bounds=Bounds(total_seconds=0.5))
    assert time.monotonic() - start < 5 and report.runs


def test_verify_takes_any_integer_as_a_seed(tmp_path):
    pytest.importorskip("onnxruntime")
    relu_model(tmp_path / "m.onnx")
    runs = {}
    for seed in ("-1", str(2**64 - 1), "0", str(-(10**30))):
        status, out, err = C.run("verify", str(tmp_path / "m.onnx"), f"--seed={seed}", "--samples", "2", "--json")
        assert status == 0 and "internal error" not in err, err
        runs[seed] = out
    assert runs["-1"] == runs[str(2**64 - 1)]  # a seed is taken modulo 2**64 (docs/cli.md)
    status, _, err = C.run("verify", str(tmp_path / "m.onnx"), "--seed", "-1", "--samples", "1")
    assert status == 0, err
    status, _, err = C.run("verify", str(tmp_path / "m.onnx"), "--seed", "1.5")
    assert status == 2 and "--seed" in err and "Traceback" not in err


# -- 4. Ctrl-C while the command starts ------------------------------------------------------------


def _interrupt(args: list[str], delay: float) -> subprocess.CompletedProcess:
    """The console script's entry (``infer.start``) in a child, sent SIGINT after ``delay``
    seconds: while ``onnx`` and the package import (a few tenths of a second).

    The signal can miss that window either way, which no code of ours can help: on a loaded
    machine it can arrive before ``infer.start`` has installed its handler (in the interpreter's
    own start-up, ``site``, or while ``python -m`` imports the package face first: a
    ``KeyboardInterrupt`` raised outside ``infer/start.py``), and on a quick one after the command
    has done its work and printed it (then it may end the interpreter as it exits). Such a run is
    tried again, later or sooner."""
    env = {**os.environ, "PYTHONPATH": str(C.ROOT)}
    cmd = [sys.executable, "-m", "infer.start", *args]
    for _ in range(6):
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=C.ROOT, env=env)
        time.sleep(delay)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
        if "KeyboardInterrupt" in err and f"{os.sep}start.py" not in err:
            delay *= 2  # before our handler
        elif out:
            delay /= 2  # after the command printed what it found: it had finished
        else:
            break
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)


@pytest.mark.skipif(os.name != "posix", reason="POSIX signals")
@pytest.mark.parametrize("verb", ["annotate", "check", "domain", "explain", "report", "verify", "ops"])
def test_ctrl_c_while_the_command_starts_is_one_line_and_exit_2(tmp_path, verb):
    model = str(C.ROOT / "examples" / "bert_tiny.onnx")
    extra = {"annotate": ["-o", str(tmp_path / "a.onnx")], "report": ["-o", str(tmp_path / "r.html")]}
    args = [] if verb == "ops" else [model, "logits"] if verb == "explain" else [model, *extra.get(verb, [])]
    for delay in (0.2, 0.6) if verb == "check" else (0.4,):
        r = _interrupt([verb, *args], delay)
        assert r.returncode == 2, (delay, r.returncode, r.stderr[-400:])
        assert r.stderr == "onnx-infer: interrupted\n" and r.stdout == "", (delay, r.stderr[-400:])
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_the_console_script_is_the_start_module():
    text = (C.ROOT / "pyproject.toml").read_text()
    assert 'onnx-infer = "infer.start:main"' in text
    status, out, _ = C.run("--version")  # infer.cli.main itself still answers
    assert status == 0 and out.startswith("onnx-infer ")


# -- 5. the drop-ins on models nested too deeply -----------------------------------------------------


def nested_if(depth: int) -> onnx.ModelProto:
    """An If whose then-branch holds an If, ``depth`` levels, built in memory (a file cannot
    nest this deep: protobuf refuses to parse it)."""
    m = onnx.ModelProto(ir_version=8)
    m.opset_import.add(domain="", version=18)
    g = m.graph
    g.name = "main"
    g.input.append(helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N"]))
    g.input.append(helper.make_tensor_value_info("c", TensorProto.BOOL, []))
    cur = g
    for d in range(depth):
        n = cur.node.add(op_type="If", input=["c"], output=[f"y{d}"])
        a = n.attribute.add(name="else_branch", type=onnx.AttributeProto.GRAPH)
        a.g.name = f"e{d}"
        a.g.node.add(op_type="Identity", input=["x"], output=[f"e{d}"])
        a.g.output.add().name = f"e{d}"
        a = n.attribute.add(name="then_branch", type=onnx.AttributeProto.GRAPH)
        cur.output.add().name = f"y{d}"
        cur = a.g
        cur.name = f"t{d}"
    cur.node.add(op_type="Identity", input=["x"], output=["leaf"])
    cur.output.add().name = "leaf"
    return m


def nested_sequence(depth: int) -> onnx.ModelProto:
    """``y = Identity(s)`` with ``s`` a sequence of a sequence ... ``depth`` levels."""
    m = onnx.ModelProto(ir_version=8)
    m.opset_import.add(domain="", version=18)
    vi = m.graph.input.add(name="s")
    t = vi.type
    for _ in range(depth):
        t = t.sequence_type.elem_type
    t.tensor_type.elem_type = TensorProto.FLOAT
    m.graph.node.add(op_type="Identity", input=["s"], output=["y"])
    m.graph.output.add().name = "y"
    return m


DROPINS = {"onnx_compat": onnx_compat.infer_shapes, "ort_compat": SymbolicShapeInference.infer_shapes}


@pytest.mark.parametrize("dropin", sorted(DROPINS))
@pytest.mark.parametrize(("make", "why"), [(nested_if, "max_depth"), (nested_sequence, "type nests deeper")])
@pytest.mark.parametrize("depth", [65, 1000, 3000])
def test_a_drop_in_refuses_a_model_nested_too_deeply_with_a_value_error(dropin, make, why, depth):
    # 1,000 levels were a RecursionError from both drop-ins, where infer_model gives a `limit` error.
    model = make(depth)
    for _ in range(2):  # and the same on the next call
        with pytest.raises(ValueError, match=why) as caught:
            DROPINS[dropin](model)
        assert "\n" not in str(caught.value) and str(caught.value).startswith("the model is refused: ")
    assert [d.code for d in infer.infer_model(model).errors][:1] == ["limit"]


@pytest.mark.parametrize("dropin", sorted(DROPINS))
def test_a_drop_in_infers_a_model_nested_within_the_limits(dropin):
    model = nested_if(20)
    out = DROPINS[dropin](model)
    assert any(o.name == "y0" and o.type.tensor_type.elem_type == TensorProto.FLOAT for o in out.graph.output)


# -- 6. names cannot command the terminal ------------------------------------------------------------

# An OSC title, SGR colours, erase-display, a bell, OSC 52 (a clipboard write), a one-byte CSI,
# carriage return and newline, and bidi overrides and isolates.
SPOOF = "\x1b]0;PWNED\x07\x1b[31mRED\x1b[0m\x1b[2J\x1b]52;c;ZWNobyBwd25lZA==\x07\x9b2K\r\n\u202etxt.exe\u2066\u2069\x7f"
FORBIDDEN = ("\x1b", "\x9b", "\x07", "\r", "\x7f", *map(chr, range(0x202A, 0x202F)), *map(chr, range(0x2066, 0x206A)))


def spoofing_model(path) -> onnx.ModelProto:
    """Every name the verbs show spelled with ``SPOOF``: graph, inputs, ``dim_param``\\ s, nodes, a
    custom operator and its domain, outputs, the doc string and metadata."""
    x, y, n = "x" + SPOOF, "y" + SPOOF, "N" + SPOOF
    nodes = [
        helper.make_node("Relu", [x], ["r" + SPOOF], name="n" + SPOOF),
        helper.make_node("F" + SPOOF, ["r" + SPOOF], ["c" + SPOOF], domain="d" + SPOOF),
        helper.make_node("Reshape", [x, "shape"], [y], name=SPOOF),
    ]
    g = helper.make_graph(
        nodes,
        "g" + SPOOF,
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [n, 6])],
        [
            helper.make_tensor_value_info(y, TensorProto.FLOAT, [5, 5]),
            helper.make_tensor_value_info("c" + SPOOF, TensorProto.FLOAT, None),
        ],
        [helper.make_tensor("shape", TensorProto.INT64, [2], [4, -1])],
        doc_string=SPOOF,
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("d" + SPOOF, 1)])
    m.ir_version, m.doc_string = 8, SPOOF
    helper.set_model_props(m, {SPOOF: SPOOF})
    onnx.save(m, path)
    return m


def _clean(text: str) -> bool:
    return not any(c in text for c in FORBIDDEN)


def test_the_escaping_is_visible_and_leaves_other_text_alone():
    from infer.out.escape import escaped

    assert escaped("a\x1b[2Jb\u202ec\x9b\n\x00") == "a\\x1b[2Jb\\u202ec\\x9b\\x0a\\x00"
    assert escaped("batch_size + 1, ünïcødé, 日本, emoji 🙂") == "batch_size + 1, ünïcødé, 日本, emoji 🙂"
    assert _clean(escaped(SPOOF))


def _strings(doc) -> list[str]:
    """Every string of a JSON document, keys included."""
    if isinstance(doc, str):
        return [doc]
    if isinstance(doc, dict):
        return [*doc, *(x for v in doc.values() for x in _strings(v))]
    return [x for v in doc for x in _strings(v)] if isinstance(doc, list) else []


@pytest.mark.parametrize("verb", ["annotate", "check", "domain", "explain", "report", "verify"])
@pytest.mark.parametrize("json_output", [False, True])
def test_names_reach_no_verb_raw(tmp_path, verb, json_output):
    if verb == "verify":
        pytest.importorskip("onnxruntime")
    path = tmp_path / ("m" + SPOOF.replace("/", "") + ".onnx")  # the path too is shown
    spoofing_model(path)
    extra = {"annotate": ["-o", str(tmp_path / "a.onnx")], "report": ["-o", str(tmp_path / "r.html")]}
    args = [verb, str(path), *extra.get(verb, []), *(["y" + SPOOF] if verb == "explain" else [])]
    args += ["-v"] if verb == "check" else []
    for color in ("never", "always"):
        _, out, err = C.run(*args, "--color", color, *(["--json"] if json_output else []))
        assert "internal error" not in err and "Traceback" not in err, err
        # (--color always: the colour codes are the one ESC written, always as `ESC [ digits m`)
        shown = re.sub(r"\x1b\[[0-9;]*m", "", out) if color == "always" else out
        assert _clean(shown) and _clean(err), (verb, out, err)
        if not json_output and verb in ("check", "explain"):
            assert "\\x1b]0;PWNED\\x07" in out  # shown, escaped
    if json_output:  # --json keeps the names exact (they round-trip), written ASCII-only
        assert out.isascii()
        assert verb == "report" or any(SPOOF in text for text in _strings(json.loads(out)))  # (report's: counts)
    if verb == "report":
        page = (tmp_path / "r.html").read_text()
        assert _clean(page) and "\\\\x1b]0;PWNED" in page  # escaped, then written as JSON


def test_a_user_given_path_and_the_errors_naming_it_are_escaped(tmp_path):
    status, _, err = C.run("check", str(tmp_path / ("missing" + SPOOF)))
    assert status == 2 and _clean(err) and "\\x1b" in err and len(err.splitlines()) == 1


# -- 7. the smaller options ----------------------------------------------------------------------------


@pytest.mark.skipif(not os.path.exists("/dev/stdout"), reason="needs /dev/stdout")
@pytest.mark.parametrize("dest", ["/dev/stdout", "/dev/stderr", "/dev/fd/1", "/proc/self/fd/1"])
def test_an_output_that_is_a_standard_stream_is_refused_for_what_it_is(tmp_path, dest):
    # The link of /dev/stdout into a pipe names `pipe:[...]`, which was refused as a link to a file
    # that does not exist; into a regular file, a write by rename replaced the shell's file.
    if dest.startswith("/proc") and not os.path.isdir("/proc/self/fd"):
        pytest.skip("no /proc")
    relu_model(tmp_path / "m.onnx")
    for verb in ("annotate", "report"):
        r = C.spawn(verb, str(tmp_path / "m.onnx"), "-o", dest)
        assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
        assert "of onnx-infer" in r.stderr and "not a file by name" in r.stderr and "does not exist" not in r.stderr
        assert "pipe" in r.stderr  # what it is: a pipe here (a terminal, a file elsewhere)


@pytest.mark.skipif(not os.path.exists("/dev/stdout"), reason="needs /dev/stdout")
def test_an_output_that_is_standard_output_into_a_regular_file_is_refused_not_replaced(tmp_path):
    relu_model(tmp_path / "m.onnx")
    with open(tmp_path / "out", "w") as f:  # stdout a regular file: refused all the same, not replaced
        cmd = [sys.executable, "-m", "infer.cli", "annotate", str(tmp_path / "m.onnx"), "-o", "/dev/stdout"]
        r = subprocess.run(cmd, stdout=f, stderr=subprocess.PIPE, text=True, cwd=C.ROOT)
    assert r.returncode == 2 and "(a regular file)" in r.stderr and (tmp_path / "out").read_bytes() == b""


def test_near_names_only_the_models_variables_and_sizes_the_search_reaches(tmp_path):
    relu_model(tmp_path / "m.onnx")
    status, _, err = C.run("domain", str(tmp_path / "m.onnx"), "--near", "nosuch=3")
    assert status == 2 and "no input variable named nosuch" in err and "its variables: N" in err
    for big in ("100000000000000000000000000", str(2**20 + 1)):
        status, out, err = C.run("domain", str(tmp_path / "m.onnx"), "--near", f"N={big}")
        assert status == 2 and len(err.splitlines()) == 1 and "N=1" not in out, err
    status, out, _ = C.run("domain", str(tmp_path / "m.onnx"), "--near", f"N={2**20}")
    assert status == 0 and out.rstrip().endswith(f"N={2**20}")


@pytest.mark.parametrize("verb", ["check", "domain", "verify"])
def test_a_binding_past_int64_is_an_error(tmp_path, verb):
    relu_model(tmp_path / "m.onnx")
    status, _, err = C.run(verb, str(tmp_path / "m.onnx"), "--bind", f"N={10**23}")
    assert status == 2 and "past the largest extent" in err and len(err.splitlines()) == 1, err
    status, _, err = C.run("check", str(tmp_path / "m.onnx"), "--bind", f"N={2**63 - 1}")
    assert status == 0, err


def test_int_range_takes_a_negative_low_end(tmp_path):
    pytest.importorskip("onnxruntime")
    relu_model(tmp_path / "m.onnx")
    for args in (["--int-range", "-5:5"], ["--int-range=-5:5"], ["--int-range", "-9:-1"]):
        status, _, err = C.run("verify", str(tmp_path / "m.onnx"), *args, "--samples", "1")
        assert status == 0, (args, err)
    status, _, err = C.run("verify", str(tmp_path / "m.onnx"), "--int-range", "--seed", "3")
    assert status == 2 and "--int-range" in err  # a missing value is still one


@pytest.mark.parametrize("location", ["w.bin/", "w.bin/.", "w.bin\\"])
def test_an_external_location_ending_in_a_separator_is_no_file(tmp_path, location):
    import numpy as np

    t = TensorProto(name="shape", data_type=TensorProto.INT64, dims=[2], data_location=TensorProto.EXTERNAL)
    for k, v in {"location": location, "offset": "0", "length": "16"}.items():
        t.external_data.add(key=k, value=v)
    g = helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [t],
    )
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]), tmp_path / "m.onnx")
    (tmp_path / "w.bin").write_bytes(np.array([-1, 2], np.int64).tobytes())
    result = infer.infer_model(tmp_path / "m.onnx", read_external_data=True)
    problems = [d.message for d in result.diagnostics if d.code == "external-data"]
    assert any("ends in a path separator" in m for m in problems), problems
    assert result.value("shape").known is None  # not read as w.bin
