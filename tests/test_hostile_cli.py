"""Hostile paths and names (issue 19): what the command line writes over, reads, and pastes.

1. Outputs: ``-o`` and ``--in-place`` write only regular files (a device, a FIFO, a socket or a
   directory is refused with exit 2), follow symbolic links to the file they name, notice a
   destination that changes during the write, remove their temporary file on SIGINT, SIGTERM
   and SIGHUP, and clean up after a SIGKILL on the next write.
2. Inputs: a directory, an empty path, a FIFO, a device, a dangling link or an unreadable file is
   a one-line ``ModelLoadError`` (exit 2), with no file descriptor leaked and no hang.
3. The report's template: no placeholder text in a title, a file name or the model reaches it.
4. External data: each file is hashed once per run, and hashing stops at a byte budget.
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import re
import signal
import socket
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import infer
from infer import cli
from infer.core import types as T
from infer.load import external
from infer.load.loader import ModelLoadError
from infer.out import output, report
from tests.support import cli as C

ROOT = Path(__file__).resolve().parents[1]
SHAPE = np.array([-1, 2], np.int64)
posix_only = pytest.mark.skipif(not hasattr(os, "O_NOFOLLOW") or os.name != "posix", reason="POSIX file semantics")
root_only = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root")
PLACEHOLDERS = ("__TITLE__", "__CSS__", "__JS__", "__DATA__")


def small_model(path: Path, name: str = "x") -> Path:
    """``y = Relu(x[N, 4])``: fast to infer, so each CLI run costs little."""
    g = helper.make_graph(
        [helper.make_node("Relu", [name], ["y"])],
        "g",
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]), path)
    return path


def run(*args: str) -> tuple[int, str]:
    """``onnx-infer ARGS`` in this process: (exit status, stderr)."""
    status, _, err = C.run(*args)
    return status, err


def temporaries(directory: Path) -> list[str]:
    """Hidden or ``.tmp`` entries: a writer's temporaries, whatever their naming."""
    return sorted(p.name for p in directory.iterdir() if p.name.startswith(".") or p.name.endswith(".tmp"))


def make_special(path: Path, kind: str) -> socket.socket | None:
    """Create a non-regular file of ``kind`` at ``path``; return the socket to close, if any."""
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    elif kind == "device":
        try:  # a private /dev/null twin: a test that failed must not clobber the real one
            os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        except PermissionError:
            pytest.skip("creating a device node needs root")
    elif kind == "socket":
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(path))
        return sock
    return None


KIND_TEST = {"fifo": stat.S_ISFIFO, "directory": stat.S_ISDIR, "device": stat.S_ISCHR, "socket": stat.S_ISSOCK}


# -- 1. outputs ----------------------------------------------------------------------------------


@posix_only
@pytest.mark.parametrize("verb", ["annotate", "report"])
@pytest.mark.parametrize("kind", ["fifo", "directory", "device", "socket"])
def test_an_output_that_is_not_a_regular_file_is_refused(tmp_path, verb, kind):
    model = small_model(tmp_path / "m.onnx")
    dest = tmp_path / "out"
    sock = make_special(dest, kind)
    try:
        code, err = run(verb, str(model), "-o", str(dest))
        assert code == 2, err
        assert len(err.strip().splitlines()) == 1 and "not a regular file" in err, err
        assert KIND_TEST[kind](os.lstat(dest).st_mode), "the destination was replaced"
        assert temporaries(tmp_path) == []
    finally:
        if sock is not None:
            sock.close()


@posix_only
def test_the_default_output_and_in_place_are_held_to_the_same_rules(tmp_path):
    model = small_model(tmp_path / "m.onnx")
    os.mkfifo(tmp_path / "m.inferred.onnx")
    code, err = run("annotate", str(model), "--force")
    assert code == 2 and "named pipe" in err
    assert stat.S_ISFIFO(os.lstat(tmp_path / "m.inferred.onnx").st_mode)
    os.mkfifo(tmp_path / "pipe.onnx")
    code, err = run("annotate", str(tmp_path / "pipe.onnx"), "--in-place")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert stat.S_ISFIFO(os.lstat(tmp_path / "pipe.onnx").st_mode)


def test_an_empty_output_path_is_an_error(tmp_path):
    model = small_model(tmp_path / "m.onnx")
    for verb, default in (("annotate", "m.inferred.onnx"), ("report", "m.report.html")):
        code, err = run(verb, str(model), "-o", "")
        assert code == 2 and "empty" in err, err
        assert not (tmp_path / default).exists()


@posix_only
def test_in_place_through_a_symlink_updates_the_file_it_names(tmp_path):
    real = small_model(tmp_path / "real.onnx")
    (tmp_path / "links").mkdir()
    link = tmp_path / "links" / "model.onnx"
    link.symlink_to(real)
    real.chmod(0o640)
    code, err = run("annotate", str(link), "--in-place", "-q")
    assert code == 0, err
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert len(onnx.load(real).graph.output[0].type.tensor_type.shape.dim) == 2  # the real model was annotated
    assert stat.S_IMODE(real.stat().st_mode) == 0o640  # and kept its permissions
    assert temporaries(tmp_path) == [] and temporaries(tmp_path / "links") == []


@posix_only
def test_an_output_symlink_is_followed_to_a_regular_file_only(tmp_path):
    model = small_model(tmp_path / "m.onnx")
    target = tmp_path / "target.html"
    target.write_text("old")
    (tmp_path / "to-file").symlink_to("target.html")
    code, err = run("report", str(model), "-o", str(tmp_path / "to-file"), "-q")
    assert code == 0, err
    assert (tmp_path / "to-file").is_symlink() and target.read_text().startswith("<!DOCTYPE html>")

    (tmp_path / "to-nothing").symlink_to("missing.html")
    code, err = run("report", str(model), "-o", str(tmp_path / "to-nothing"))
    assert code == 2 and "does not exist" in err and not (tmp_path / "missing.html").exists()

    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "to-pipe").symlink_to("pipe")
    code, err = run("annotate", str(model), "-o", str(tmp_path / "to-pipe"))
    assert code == 2 and "named pipe" in err and stat.S_ISFIFO(os.lstat(tmp_path / "pipe").st_mode)

    (tmp_path / "loop").symlink_to("loop")
    code, err = run("annotate", str(model), "-o", str(tmp_path / "loop"))
    assert code == 2 and "symbolic links" in err
    assert temporaries(tmp_path) == []


@posix_only
def test_an_output_symlink_naming_the_input_is_the_input(tmp_path):
    model = small_model(tmp_path / "m.onnx")
    before = model.read_bytes()
    (tmp_path / "alias.onnx").symlink_to("m.onnx")
    code, err = run("annotate", str(model), "-o", str(tmp_path / "alias.onnx"))
    assert code == 2 and "--in-place" in err and model.read_bytes() == before


@posix_only
@pytest.mark.parametrize(("verb", "suffix"), [("annotate", ".inferred.onnx"), ("report", ".report.html")])
@pytest.mark.parametrize("link", ["symbolic", "hard", "symbolic to a symbolic"])
def test_force_never_writes_the_input_through_a_link(tmp_path, verb, suffix, link):
    """Issue 27: the default output a link to the input is the input: refused, --force or not."""
    model = small_model(tmp_path / "m.onnx")
    before = model.read_bytes()
    default = tmp_path / f"m{suffix}"
    if link == "hard":
        os.link(model, default)
    elif link == "symbolic":
        default.symlink_to("m.onnx")
    else:
        (tmp_path / "alias").symlink_to("m.onnx")
        default.symlink_to("alias")
    for extra in (["--force"], ["-o", str(default)], ["-o", str(default), "--force"]):
        code, err = run(verb, str(model), *extra)
        assert code == 2 and len(err.strip().splitlines()) == 1 and "is the input model" in err, (extra, err)
        assert model.read_bytes() == before and os.path.samefile(default, model)
    assert temporaries(tmp_path) == []
    (tmp_path / "other").mkdir()
    code, err = run(verb, str(tmp_path / "other" / ".." / "m.onnx"), "-o", str(model))  # another spelling
    assert code == 2 and "is the input model" in err and model.read_bytes() == before


@posix_only
def test_the_writer_refuses_a_destination_made_a_link_to_the_input_meanwhile(tmp_path, monkeypatch):
    model = small_model(tmp_path / "m.onnx")
    before = model.read_bytes()
    dest = tmp_path / "out.onnx"
    dest.write_bytes(b"old")
    real_commit = output._commit

    def swapped(temp: str, target: output.Destination) -> None:
        dest.unlink()
        os.link(model, dest)  # between the check and the rename, the output becomes the input
        real_commit(temp, target)

    monkeypatch.setattr(output, "_commit", swapped)
    with pytest.raises(output.OutputRefused, match="is the input model"):
        output.write_file(b"new", dest, spare=model)
    assert model.read_bytes() == before and temporaries(tmp_path) == []


@root_only
def test_a_link_planted_in_a_shared_sticky_directory_is_not_followed(tmp_path):
    """The kernel's protected_symlinks rule, which a rename by path would otherwise bypass."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    link = shared / "out.html"
    link.symlink_to(victim)
    os.lchown(link, 65534, 65534)  # planted by another user
    with pytest.raises(output.OutputRefused, match="sticky"):
        output.write_file(b"x", link)
    assert victim.read_text() == "precious"


@root_only
def test_root_rewriting_a_users_file_keeps_it_the_users(tmp_path):
    dest = tmp_path / "model.onnx"
    dest.write_bytes(b"old")
    os.chown(dest, 65534, 65534)
    dest.chmod(0o4755)
    output.write_file(b"new", dest)
    st = os.stat(dest)
    assert dest.read_bytes() == b"new" and (st.st_uid, st.st_gid) == (65534, 65534)
    assert stat.S_IMODE(st.st_mode) == 0o755  # the set-user-id bit is not carried over


@posix_only
def test_a_destination_that_appears_while_writing_is_not_replaced(tmp_path, monkeypatch):
    dest = tmp_path / "out.onnx"
    real_fsync = os.fsync

    def fifo_appears(fd: int) -> None:
        real_fsync(fd)
        if not dest.exists():
            os.mkfifo(dest)

    monkeypatch.setattr(output.os, "fsync", fifo_appears)
    with pytest.raises(output.OutputRefused, match="named pipe"):
        output.write_file(b"data", dest)
    assert stat.S_ISFIFO(os.lstat(dest).st_mode)
    assert temporaries(tmp_path) == []


@posix_only
def test_a_regular_destination_swapped_for_a_directory_while_writing_is_not_replaced(tmp_path, monkeypatch):
    dest = tmp_path / "out.onnx"
    dest.write_bytes(b"old")
    real_fsync = os.fsync

    def swapped(fd: int) -> None:
        real_fsync(fd)
        if dest.is_file():
            dest.unlink()
            dest.mkdir()

    monkeypatch.setattr(output.os, "fsync", swapped)
    with pytest.raises(output.OutputRefused, match="directory"):
        output.write_file(b"data", dest)
    assert dest.is_dir() and temporaries(tmp_path) == []


def test_report_write_report_uses_the_same_writer(tmp_path):
    r = infer.infer_model(small_model(tmp_path / "m.onnx"))
    (tmp_path / "page.html").mkdir()
    with pytest.raises(output.OutputRefused):
        report.write_report(r, tmp_path / "page.html")
    assert report.write_report(r, tmp_path / "ok.html").read_text().startswith("<!DOCTYPE html>")
    assert cli.write_atomically is output.write_file


# A child that writes through the real writer, and signals itself while the temporary exists.
CHILD = """
import os, signal, sys
from infer import cli
from infer.out import output
real = os.fsync
def fsync(fd):
    real(fd)
    print("TEMP", [n for n in os.listdir({dir!r}) if n.endswith(output.TEMP_SUFFIX)], flush=True)
    os.kill(os.getpid(), {sig})
output.os.fsync = fsync
{body}
"""


def child(tmp_path: Path, sig: int, body: str) -> subprocess.CompletedProcess:
    script = CHILD.format(dir=str(tmp_path), sig=int(sig), body=textwrap.dedent(body))
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120)


@posix_only
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_a_caught_signal_removes_the_temporary_and_keeps_its_exit_status(tmp_path, sig):
    dest = tmp_path / "out.bin"
    dest.write_bytes(b"original")
    p = child(tmp_path, sig, f"output.write_file(b'x' * 1_000_000, {str(dest)!r})")
    assert p.returncode == -sig, (p.returncode, p.stderr)
    assert "TEMP ['." in p.stdout  # the temporary existed when the signal came
    assert dest.read_bytes() == b"original" and os.listdir(tmp_path) == ["out.bin"]


@posix_only
@pytest.mark.parametrize(
    "sig, status",
    [(signal.SIGINT, 2), (signal.SIGTERM, -signal.SIGTERM), (signal.SIGHUP, -signal.SIGHUP)],
    ids=["SIGINT", "SIGTERM", "SIGHUP"],
)
def test_a_signal_during_annotate_leaves_no_temporary(tmp_path, sig, status):
    """SIGINT is the command's ``interrupted`` (exit 2); the others kill it with their status."""
    model = small_model(tmp_path / "m.onnx")
    out = tmp_path / "out.onnx"
    body = f"sys.exit(cli.main(['annotate', {str(model)!r}, '-o', {str(out)!r}]))"
    p = child(tmp_path, sig, body)
    assert p.returncode == status, (p.returncode, p.stderr)
    assert os.listdir(tmp_path) == ["m.onnx"]


@posix_only
def test_the_next_write_removes_what_a_sigkill_left_and_only_that(tmp_path):
    dest = tmp_path / "out.onnx"
    p = child(tmp_path, signal.SIGKILL, f"output.write_file(b'x' * 1_000_000, {str(dest)!r})")
    assert p.returncode == -signal.SIGKILL
    left = temporaries(tmp_path)
    assert len(left) == 1 and left[0].startswith(".out.onnx.") and not dest.exists()
    # Beside it: a temporary of a live process (this one), one of another output, a stranger.
    dead_pid = left[0].split(".")[-4]
    live = left[0].replace(f".{dead_pid}.", f".{os.getpid()}.")
    other = left[0].replace(".out.onnx.", ".other.onnx.")
    for name in (live, other, "out.onnx.tmp"):
        (tmp_path / name).write_bytes(b"keep")
    output.write_file(b"new", dest)
    assert dest.read_bytes() == b"new"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([live, other, "out.onnx.tmp", "out.onnx"])


def test_temporary_names_stay_short_for_long_output_names(tmp_path):
    name = "m" * 250 + ".onnx"  # NAME_MAX is 255: the temporary cannot be the name plus a suffix
    assert len(output.temp_name(name)) < 100
    output.write_file(b"x", tmp_path / name[:250])
    assert (tmp_path / name[:250]).read_bytes() == b"x" and temporaries(tmp_path) == []


# -- 2. unreadable model paths -------------------------------------------------------------------


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts descriptors through /proc")
def test_unreadable_model_paths_are_load_errors_without_leaking_descriptors(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "dangling").symlink_to("nowhere.onnx")
    (tmp_path / "dir").mkdir()
    cases = {
        "": "empty",
        str(tmp_path / "dir"): "directory",
        str(tmp_path / "fifo"): "pipe",
        "/dev/null": "device",
        str(tmp_path / "dangling"): "symbolic link",
        str(tmp_path / "missing.onnx"): "no such file",
    }
    before = open_fds()
    for _ in range(3):
        for path, words in cases.items():
            with pytest.raises(ModelLoadError, match=words) as e:
                infer.infer_model(path)
            assert "\n" not in str(e.value)
    assert open_fds() == before


def test_a_permission_error_is_a_load_error(tmp_path, monkeypatch):
    model = small_model(tmp_path / "m.onnx")
    if os.geteuid() != 0:  # the real thing; root reads anything
        model.chmod(0)
        with pytest.raises(ModelLoadError, match="Permission denied"):
            infer.infer_model(model)
        model.chmod(0o644)

    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("infer.load.loader.os.open", denied)
    before = open_fds()
    with pytest.raises(ModelLoadError, match="cannot read"):
        infer.infer_model(model)
    assert open_fds() == before


def test_the_cli_says_one_line_for_unreadable_paths(tmp_path):
    (tmp_path / "dir").mkdir()
    for path in ("", str(tmp_path / "dir")):
        for verb in ("check", "annotate", "report"):
            code, err = run(verb, path, "-q") if verb == "check" else run(verb, path, "-o", str(tmp_path / "o"))
            assert code == 2, (verb, path, err)
            assert len(err.strip().splitlines()) == 1 and "internal error" not in err, err
            assert not (tmp_path / "o").exists()


@posix_only
def test_a_fifo_model_does_not_hang(tmp_path):
    os.mkfifo(tmp_path / "m.onnx")
    p = subprocess.run(
        [sys.executable, "-m", "infer.cli", "check", str(tmp_path / "m.onnx")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert p.returncode == 2 and "pipe" in p.stderr


# -- 3. the report's template --------------------------------------------------------------------


def placeholder_model(path: Path) -> Path:
    """Every placeholder as a value name, an op type, a node name, a domain and doc strings."""
    names = [f"v{p}" for p in PLACEHOLDERS]
    nodes = [helper.make_node("Relu", ["__DATA__"], [names[0]], name="__JS__", doc_string="__CSS__ __DATA__")]
    nodes += [
        helper.make_node(p, [names[k]], [names[k + 1]], domain="__TITLE__", doc_string=p)
        for k, p in enumerate(PLACEHOLDERS[1:])
    ]
    g = helper.make_graph(
        nodes,
        "__JS__",
        [helper.make_tensor_value_info("__DATA__", TensorProto.FLOAT, ["__CSS__"])],
        [helper.make_tensor_value_info(names[-1], TensorProto.FLOAT, None)],
        doc_string="__JS__",
    )
    m = helper.make_model(
        g,
        opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("__TITLE__", 1)],
        doc_string="__DATA__ __JS__",
    )
    onnx.save(m, path)
    return path


def assert_page_intact(page: str, title: str) -> None:
    assert page.count(report._CSS) == 1 and page.count(report._JS) == 1
    assert page.count("<title>") == 1 and page.count("<script") == 2 and page.count("<style>") == 1
    shown = re.search(r"<title>(.*?)</title>", page, re.S).group(1)
    assert shown == html.escape(f"{title}: onnx-infer report")
    data = json.loads(re.search(r'<script id="data" type="application/json">(.*?)</script>', page, re.S).group(1))
    assert data["title"] == title
    values = data["graphs"][0]["values"]
    assert "__DATA__" in values and {f"v{p}" for p in PLACEHOLDERS} <= set(values)
    assert [n[0] for n in data["graphs"][0]["nodes"]] == ["Relu", *PLACEHOLDERS[1:]]


@pytest.mark.parametrize("title", [None, *PLACEHOLDERS, "".join(PLACEHOLDERS)])
def test_no_user_or_model_string_reaches_the_template(tmp_path, title):
    model = placeholder_model(tmp_path / ("m" + "".join(PLACEHOLDERS) + ".onnx"))
    out = tmp_path / "page.html"
    args = ["report", str(model), "-o", str(out), "-q"] + (["--title", title] if title is not None else [])
    code, err = run(*args)
    assert code in (0, 1), err
    assert_page_intact(out.read_text(encoding="utf-8"), title if title is not None else model.name)


# -- 4. external data: hashed once, within a budget ----------------------------------------------


def external_shape(name: str, location: str, offset: int, checksum: str | None) -> TensorProto:
    t = TensorProto(name=name, data_type=TensorProto.INT64, dims=[2], data_location=TensorProto.EXTERNAL)
    entries = {"location": location, "offset": str(offset), "length": "16"}
    if checksum is not None:
        entries["checksum"] = checksum
    for k, v in entries.items():
        t.external_data.add(key=k, value=v)
    return t


def reshapes_model(path: Path, shapes: list[TensorProto]) -> Path:
    """``y{k} = Reshape(x[N, 4], shapes[k])`` for each shape tensor."""
    nodes = [helper.make_node("Reshape", ["x", t.name], [f"y{k}"]) for k, t in enumerate(shapes)]
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info(f"y{k}", TensorProto.FLOAT, None) for k in range(len(shapes))],
        shapes,
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 8
    path.write_bytes(m.SerializeToString())
    return path


def read_ok(result: infer.InferenceResult, name: str) -> bool:
    t = result.type_of(name)
    return isinstance(t, T.TensorType) and t.shape is not None and len(t.shape) == 2 and t.shape[1] == 2


def sparse_file(path: Path, size: int, offsets: list[int]) -> str:
    """A sparse file of ``size`` bytes holding SHAPE at each offset; returns its SHA-1."""
    with open(path, "wb") as f:
        f.truncate(size)
        for o in offsets:
            f.seek(o)
            f.write(SHAPE.tobytes())
    h = hashlib.sha1()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


@posix_only
def test_forty_references_into_one_file_hash_it_once(tmp_path, monkeypatch):
    size = 16 << 20
    offsets = [k * 4096 for k in range(40)]
    digest = sparse_file(tmp_path / "w.bin", size, offsets)
    shapes = [external_shape(f"s{k}", "w.bin", o, digest) for k, o in enumerate(offsets)]
    path = reshapes_model(tmp_path / "m.onnx", shapes)
    read_bytes = 0
    real_pread = os.pread

    def counted(fd: int, n: int, offset: int) -> bytes:
        nonlocal read_bytes
        chunk = real_pread(fd, n, offset)
        read_bytes += len(chunk)
        return chunk

    monkeypatch.setattr(external.os, "pread", counted)
    result = infer.infer_model(path, read_external_data=True)
    assert all(read_ok(result, f"y{k}") for k in range(40)), result.diagnostics
    assert read_bytes <= size + 40 * 16  # one hash of the file, then each tensor's 16 bytes


@posix_only
def test_hashing_stops_at_the_budget_with_a_warning(tmp_path, monkeypatch):
    a = sparse_file(tmp_path / "a.bin", 1 << 20, [0])
    b = sparse_file(tmp_path / "b.bin", 1 << 20, [0])
    shapes = [
        external_shape("sa", "a.bin", 0, a),
        external_shape("sb", "b.bin", 0, b),
        external_shape("sa2", "a.bin", 0, a),
        external_shape("sb_plain", "b.bin", 0, None),
    ]
    path = reshapes_model(tmp_path / "m.onnx", shapes)
    monkeypatch.setattr(external, "MAX_EXTERNAL_HASH_BYTES", (3 << 20) // 2)  # room for one file
    result = infer.infer_model(path, read_external_data=True)
    assert read_ok(result, "y0") and read_ok(result, "y2")  # a.bin, hashed once, within the budget
    assert not read_ok(result, "y1")  # b.bin would go past it: contents unknown
    assert read_ok(result, "y3")  # without a checksum nothing is hashed
    assert not [d for d in result.diagnostics if d.severity == "error"], result.diagnostics
    spent = [d for d in result.diagnostics if d.code == "external-data" and "budget" in d.message]
    assert len(spent) == 1 and spent[0].severity == "warning" and "`sb`" in spent[0].message
