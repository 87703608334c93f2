"""Issue 27, items 4 and 5: ``verify`` bounds its own work and reads external data as the rest does.

Hostile models are built here, small: a Loop of 2^40 trips (time), a Loop whose carried state
grows with every trip (memory no shape bounds), an Expand to a gigabyte (memory the shapes show).
Every limit in these tests is small, so no test allocates more than some tens of megabytes or runs
more than a few seconds: a run past a limit is stopped or never started.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import infer
from infer import cli
from infer.out.runguard import resident_bytes
from infer.out.verify import Bounds, VerifyError, verify
from tests.support import cli as C

ROOT = Path(__file__).resolve().parents[1]
F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
TRIPS = 1 << 40


def _vi(name: str, elem: int, shape: list | None) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


def _model(nodes: list[onnx.NodeProto], inits: list[onnx.TensorProto], outputs: list[str]) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", [_vi("x", F, ["N"])], [_vi(o, F, None) for o in outputs], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _loop(body_nodes: list[onnx.NodeProto], body_inits: list[onnx.TensorProto], trips: int) -> onnx.ModelProto:
    """``y = Loop(M=trips, x)`` whose body maps the carried ``y`` to ``yo``."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["c"], ["co"]), *body_nodes],
        "body",
        [_vi("i", I64, []), _vi("c", B, []), _vi("y", F, None)],
        [_vi("co", B, []), _vi("yo", F, None)],
        body_inits,
    )
    loop = helper.make_node("Loop", ["M", "", "x"], ["y"], body=body)
    return _model([loop], [helper.make_tensor("M", I64, [], [trips])], ["y"])


def slow_loop() -> onnx.ModelProto:
    """2^40 trips of ``y + 1``: memory stays small, time does not end."""
    return _loop([helper.make_node("Add", ["y", "one"], ["yo"])], [helper.make_tensor("one", F, [], [1.0])], TRIPS)


def growing_loop(trips: int, row: int) -> onnx.ModelProto:
    """Each trip appends ``row`` floats to the carried state: its extent is no shape's."""
    nodes = [helper.make_node("ConstantOfShape", ["n"], ["r"]), helper.make_node("Concat", ["y", "r"], ["yo"], axis=0)]
    return _loop(nodes, [helper.make_tensor("n", I64, [1], [row])], trips)


def big_expand() -> onnx.ModelProto:
    """``Expand(x, [2^28, 1])``: a gigabyte a unit of N, which the inferred shape shows."""
    return _model(
        [helper.make_node("Expand", ["x", "s"], ["y"])], [helper.make_tensor("s", I64, [2], [1 << 28, 1])], ["y"]
    )


# -- item 4 (a): time --------------------------------------------------------------------------


def test_a_run_past_its_time_limit_is_stopped_and_skipped_with_the_reason() -> None:
    start = time.monotonic()
    report = verify(infer.infer_model(slow_loop()), samples=1, bounds=Bounds(run_seconds=0.3, total_seconds=2))
    assert time.monotonic() - start < 8
    assert report.runs and all(r.skipped_by == "time" for r in report.runs)
    assert "0.3 s (run_seconds)" in report.runs[0].skipped
    assert report.summary()["skipped_time"] == len(report.runs)
    assert report.error is not None and report.error.startswith("every run was skipped")


def test_the_whole_verify_stops_at_its_time_limit() -> None:
    start = time.monotonic()
    report = verify(infer.infer_model(slow_loop()), samples=3, bounds=Bounds(run_seconds=0, total_seconds=0.5))
    assert time.monotonic() - start < 6
    assert [r.skipped_by for r in report.runs] == ["time"]
    assert "(total_seconds)" in report.runs[0].skipped
    assert any("total_seconds" in n for n in report.notes)


def test_cli_reports_runs_past_the_time_limit(tmp_path) -> None:
    path = tmp_path / "slow.onnx"
    onnx.save(slow_loop(), path)
    status, out, err = C.run("verify", str(path), "--run-seconds", "0.3", "--total-seconds", "1.5")
    assert status == cli.EXIT_FAILED, (out, err)
    assert "skipped the run at {N=2}: it took longer than 0.3 s (run_seconds)" in out
    assert "every run was skipped" in err and "Traceback" not in err


@pytest.mark.parametrize("option", ["--run-seconds=-1", "--total-seconds=inf", "--max-memory=0", "--max-memory=lots"])
def test_cli_refuses_bad_bounds(tmp_path, option: str) -> None:
    path = tmp_path / "slow.onnx"
    onnx.save(slow_loop(), path)
    status, _, err = C.run("verify", str(path), option)
    assert status == cli.EXIT_FAILED and "Traceback" not in err
    assert err.startswith("onnx-infer: ") and option.partition("=")[0] in err, err


def test_bad_bounds_are_verify_errors() -> None:
    with pytest.raises(VerifyError, match="run_seconds"):
        Bounds(run_seconds=-1)
    with pytest.raises(VerifyError, match="max_memory"):
        Bounds(max_memory=0)


# -- item 4 (b): memory ------------------------------------------------------------------------


def test_a_run_whose_shapes_need_too_much_memory_is_never_started(monkeypatch) -> None:
    from infer.out import verify as V

    def never(*args: object) -> None:
        raise AssertionError("onnxruntime was asked to run a model over the memory limit")

    monkeypatch.setattr(V.Session, "run", never)
    report = verify(infer.infer_model(big_expand()), samples=2, bounds=Bounds(max_memory=64 << 20))
    assert report.runs and all(r.skipped_by == "memory" for r in report.runs), report.to_dict()
    first = report.runs[0]
    assert first.estimated_bytes >= 1 << 30 and "over the limit of 64.0 MiB (max_memory)" in first.skipped
    assert report.summary()["skipped_memory"] == len(report.runs)


def test_an_unknown_extent_of_a_loop_of_huge_trip_count_is_not_taken_for_small(monkeypatch) -> None:
    from infer.out import verify as V

    def never(*args: object) -> None:
        raise AssertionError("onnxruntime was asked to run a Loop whose memory has no bound")

    monkeypatch.setattr(V.Session, "run", never)
    report = verify(infer.infer_model(growing_loop(TRIPS, 1024)), samples=1)
    assert report.runs and all(r.skipped_by == "memory" for r in report.runs)
    assert "no memory bound" in report.runs[0].skipped and str(TRIPS) in report.runs[0].skipped
    assert report.runs[0].unsized_values == 1


@pytest.mark.skipif(resident_bytes() is None, reason="resident memory is read from /proc/self/statm (Linux)")
def test_memory_growth_no_shape_shows_is_stopped_during_the_run() -> None:
    # 2,000 trips of 256 KiB each would end at 500 MB; the watch stops the run past 32 MiB.
    before = resident_bytes()
    bounds = Bounds(run_seconds=10, total_seconds=20, max_memory=32 << 20)
    report = verify(infer.infer_model(growing_loop(2000, 1 << 16)), samples=1, bounds=bounds, max_attempts=1)
    assert [r.skipped_by for r in report.runs] == ["memory"], report.to_dict()
    assert "resident memory grew by more than 32.0 MiB" in report.runs[0].skipped
    assert resident_bytes() - before < 200 << 20


def test_cli_counts_the_skipped_runs_by_reason(tmp_path) -> None:
    path = tmp_path / "big.onnx"
    onnx.save(big_expand(), path)
    status, out, err = C.run("verify", str(path), "--max-memory", "64M", "--samples", "1")
    assert status == cli.EXIT_FAILED and "Traceback" not in err
    assert "over the limit of 64.0 MiB (max_memory)" in out
    status, out, _ = C.run("verify", str(path), "--max-memory", "64M", "--samples", "1", "--json")
    import json

    data = json.loads(out)
    assert data["summary"]["skipped_memory"] == data["summary"]["skipped_runs"] == len(data["runs"]) > 0


# -- item 4 (c): Ctrl-C ------------------------------------------------------------------------


def _guard_entered(pid: int) -> bool:
    """The verify process has entered its guard: it holds the socket SIGINT wakes the watchdog by."""
    try:
        return any(os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:") for fd in os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="waits for the run through /proc")
def test_ctrl_c_stops_the_run_and_verify_says_what_it_checked(tmp_path) -> None:
    path = tmp_path / "slow.onnx"
    onnx.save(slow_loop(), path)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "infer.cli", "verify", str(path), "--run-seconds", "60", "--total-seconds", "60"]
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 60
        while not _guard_entered(p.pid) and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)  # inside the first run, a Loop of 2^40 trips
        assert p.poll() is None, p.communicate()
        sent = time.monotonic()
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=20)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert time.monotonic() - sent < 10
    assert p.returncode == cli.EXIT_FAILED, (out, err)
    assert "onnx-infer: interrupted (Ctrl-C)" in err and "Traceback" not in err
    assert "0 claims checked in 0 runs" in out


# -- item 5: external data ---------------------------------------------------------------------


def _external_model(
    directory: Path,
    *,
    constant: bool = False,
    location: str = "w.bin",
    dims: tuple[int, ...] = (4,),
    data: bytes | None = None,
) -> Path:
    """``y = x + w`` (x of 4 floats) with ``w`` in external file ``location``: an initializer,
    or a ``Constant``'s value."""
    w = TensorProto(name="w", data_type=F, dims=dims, data_location=TensorProto.EXTERNAL)
    w.external_data.add(key="location", value=location)
    target = directory / location
    if ".." not in location and not Path(location).is_absolute() and not os.path.lexists(target):
        target.write_bytes(np.arange(4, dtype=np.float32).tobytes() if data is None else data)
    nodes = [helper.make_node("Add", ["x", "w"], ["y"])]
    inits = [w]
    if constant:
        nodes.insert(0, helper.make_node("Constant", [], ["w"], value=w))
        inits = []
    graph = helper.make_graph(nodes, "g", [_vi("x", F, [4])], [_vi("y", F, [4])], inits)
    path = directory / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def test_external_data_is_read_only_when_asked(tmp_path) -> None:
    path = _external_model(tmp_path)
    status, _, err = C.run("verify", str(path), "--samples", "1")
    assert status == cli.EXIT_FAILED and "--read-external-data" in err, err
    with pytest.raises(VerifyError, match="opt-in"):
        verify(infer.infer_model(path), samples=1)
    status, out, err = C.run("verify", str(path), "--samples", "1", "--read-external-data")
    assert status == cli.EXIT_OK, (out, err)
    assert "claims checked in 1 run" in out


def test_a_constants_external_tensor_is_resolved_against_the_models_directory(tmp_path, monkeypatch) -> None:
    model_dir, elsewhere = tmp_path / "model", tmp_path / "elsewhere"
    model_dir.mkdir()
    elsewhere.mkdir()
    path = _external_model(model_dir, constant=True)
    (elsewhere / "w.bin").write_bytes(b"\0" * 3)  # a decoy in the working directory, of the wrong size
    monkeypatch.chdir(elsewhere)
    status, _, err = C.run("verify", str(path), "--samples", "1")
    assert status == cli.EXIT_FAILED and "--read-external-data" in err, err
    status, out, err = C.run("verify", str(path), "--samples", "1", "--read-external-data")
    assert status == cli.EXIT_OK, (out, err)
    assert "claims checked in 1 run" in out


def test_external_data_past_the_limit_is_refused_before_any_read(tmp_path, monkeypatch) -> None:
    from infer.load import external

    with open(tmp_path / "big.bin", "wb") as f:
        f.truncate(1 << 30)  # sparse: a gigabyte that costs no disk
    path = _external_model(tmp_path, location="big.bin", dims=(1 << 28,))

    def never(*args: object, **kwargs: object) -> bytes:
        raise AssertionError("external data was read past the limit")

    monkeypatch.setattr(external, "read", never)
    status, _, err = C.run("verify", str(path), "--read-external-data")
    assert status == cli.EXIT_FAILED, err
    assert "need 1073741824 bytes, over the limit of 536870912 (max_external_bytes)" in err
    status, _, err = C.run("verify", str(path), "--read-external-data", "--max-external-bytes", "1K")
    assert status == cli.EXIT_FAILED and "over the limit of 1024" in err


@pytest.mark.parametrize(
    ("location", "message"),
    [("../outside.bin", "parent-directory component"), ("/etc/passwd", "absolute path"), ("link.bin", "symbolic link")],
)
def test_refusals_of_external_data_are_verify_errors(tmp_path, location: str, message: str) -> None:
    (tmp_path / "real.bin").write_bytes(np.arange(4, dtype=np.float32).tobytes())
    (tmp_path / "link.bin").symlink_to(tmp_path / "real.bin")
    path = _external_model(tmp_path, location=location)
    result = infer.infer_model(path)
    with pytest.raises(VerifyError, match="opt-in"):
        verify(result, samples=1)
    with pytest.raises(VerifyError, match=message):
        verify(result, samples=1, read_external_data=True)
    status, _, err = C.run("verify", str(path), "--read-external-data")
    assert status == cli.EXIT_FAILED and "cannot read the model's external data" in err and message in err
    assert "internal error" not in err
