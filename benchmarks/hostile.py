"""Memory and time of hostile models: large constants, long attribute lists, long names, and
chains of nodes each adding symbolic extents (broadcasts, concatenations) for time.

    python -m benchmarks.hostile                          # every case at 1, 10 and 100 MB
    python -m benchmarks.hostile --sizes 1 10 300 --cases constant_raw long_names
    python -m benchmarks.hostile --via api check annotate --keep /tmp/hostile

Each case (``CASES``) builds a model of about the size asked for, writes it to a file and
measures it each way in (``--via``): ``infer.infer_model(path)`` (``api``), and the command
line's ``check`` and ``annotate`` (``infer.cli.main``, the code behind ``onnx-infer``). A fresh
process first reads a small model every way (imports, rules, signatures), then forks once per
measurement; what is reported is how far the fork's peak resident memory (``VmHWM``, reset before
the run, as ``benchmarks.run`` does) rose above its resident memory before the run, against the
size of the file, and the run's wall-clock time. Beside it, ``protobuf`` is what parsing the
file into an ``onnx.ModelProto`` costs on its own (the bytes read plus the parsed model), the
least any reader of the model in Python pays.

The models are written here byte by byte (``_field``): a list of a hundred million integers is
never a Python list, so building a model of hundreds of MB takes seconds.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.run import peak_rss, reset_peak_rss, rss
from infer.load.wire import varint

HERE = Path(__file__).resolve().parent
MB = 1_000_000

# -- the wire format, for building models without Python lists ---------------------------------


def _field(number: int, payload: bytes | int) -> bytes:
    """One field: a varint (``int``) or length-delimited (``bytes``)."""
    if isinstance(payload, int):
        return varint(number << 3) + varint(payload)
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def _text(number: int, s: str) -> bytes:
    return _field(number, s.encode())


# onnx.proto's field numbers used below.
_FLOAT, _INT64, _STRING = 1, 7, 8  # TensorProto.DataType
_ATTR_FLOATS, _ATTR_INTS, _ATTR_STRINGS, _ATTR_STRING, _ATTR_TENSOR, _ATTR_SPARSE = 6, 7, 8, 3, 4, 11  # AttributeType


def _attribute(name: str, kind: int, payload: bytes) -> bytes:
    """An AttributeProto: its name, the payload fields as given, its type."""
    return _text(1, name) + payload + _field(20, kind)


def _tensor(dims: list[int], data_type: int, data: bytes, name: str = "") -> bytes:
    """A TensorProto whose data fields are ``data`` (already encoded)."""
    return b"".join(_field(1, d) for d in dims) + _field(2, data_type) + (_text(8, name) if name else b"") + data


def _node(
    inputs: list[str],
    outputs: list[str],
    op_type: str,
    attributes: list[bytes] = (),
    domain: str = "",
    name: str = "",
    doc: str = "",
) -> bytes:
    out = b"".join(_text(1, i) for i in inputs) + b"".join(_text(2, o) for o in outputs)
    out += (_text(3, name) if name else b"") + _text(4, op_type)
    out += b"".join(_field(5, a) for a in attributes) + (_text(6, doc) if doc else b"")
    return out + (_text(7, domain) if domain else b"")


def _value_info(name: str, elem: int, dims: list[int | str] | None) -> bytes:
    shape = None
    if dims is not None:
        shape = b"".join(_field(1, _field(1, d) if isinstance(d, int) else _text(2, d)) for d in dims)
    tensor = _field(1, elem) + (b"" if shape is None else _field(2, shape))
    return _text(1, name) + _field(2, _field(1, tensor))


def _model(
    nodes: list[bytes],
    inputs: list[bytes],
    outputs: list[bytes],
    initializers: list[bytes] = (),
    doc: str = "",
    graph_doc: str = "",
) -> bytes:
    graph = b"".join(_field(1, n) for n in nodes) + _text(2, "g")
    graph += b"".join(_field(5, t) for t in initializers) + (_text(10, graph_doc) if graph_doc else b"")
    graph += b"".join(_field(11, i) for i in inputs) + b"".join(_field(12, o) for o in outputs)
    opsets = _field(8, _text(1, "") + _field(2, 21)) + _field(8, _text(1, "custom") + _field(2, 1))
    return _field(1, 10) + opsets + (_text(6, doc) if doc else b"") + _field(7, graph)


_X = _value_info("x", _FLOAT, ["N", 4])
_Y = _value_info("y", _FLOAT, None)


def _with_constant(attribute: bytes, elem: int) -> bytes:
    """``y = Identity(x)`` beside a Constant ``c`` of element type ``elem`` holding ``attribute``
    (a graph output too)."""
    nodes = [_node([], ["c"], "Constant", [attribute]), _node(["x"], ["y"], "Identity")]
    return _model(nodes, [_X], [_Y, _value_info("c", elem, None)])


def _with_custom(attribute: bytes) -> bytes:
    """``y = Relu(t)`` after ``t = custom.Foo(x)`` carrying ``attribute``, an operator no rule knows."""
    nodes = [_node(["x"], ["t"], "Foo", [attribute], domain="custom"), _node(["t"], ["y"], "Relu")]
    return _model(nodes, [_X], [_Y])


# -- the cases ---------------------------------------------------------------------------------


def constant_raw(size: int) -> bytes:
    """A float Constant, its data in ``raw_data`` (4 bytes an element)."""
    n = size // 4
    return _with_constant(
        _attribute("value", _ATTR_TENSOR, _field(5, _tensor([n], _FLOAT, _field(9, bytes(4 * n))))), _FLOAT
    )


def initializer_raw(size: int) -> bytes:
    """A float initializer in ``raw_data``, added to the input."""
    n = size // 4
    w = _tensor([n], _FLOAT, _field(9, bytes(4 * n)), name="w")
    return _model([_node(["x", "w"], ["y"], "Add")], [_value_info("x", _FLOAT, [n])], [_Y], [w])


def constant_float_data(size: int) -> bytes:
    """A float Constant, its data in ``float_data`` (packed, 4 bytes an element)."""
    n = size // 4
    return _with_constant(
        _attribute("value", _ATTR_TENSOR, _field(5, _tensor([n], _FLOAT, _field(4, bytes(4 * n))))), _FLOAT
    )


def constant_int64_data(size: int) -> bytes:
    """An int64 Constant, its data in ``int64_data`` (packed varints: 1 byte an element)."""
    n = size
    return _with_constant(
        _attribute("value", _ATTR_TENSOR, _field(5, _tensor([n], _INT64, _field(7, b"\x01" * n)))), _INT64
    )


def initializer_int64_data(size: int) -> bytes:
    """An int64 initializer in ``int64_data`` (packed varints: 1 byte an element), added to the input."""
    n = size
    w = _tensor([n], _INT64, _field(7, b"\x01" * n), name="w")
    nodes = [_node(["x", "w"], ["y"], "Add")]
    return _model(nodes, [_value_info("x", _INT64, [n])], [_value_info("y", _INT64, None)], [w])


def constant_string_data(size: int) -> bytes:
    """A string Constant of two-character elements in ``string_data`` (4 bytes an element)."""
    n = size // 4
    data = _field(6, b"ab") * n
    return _with_constant(_attribute("value", _ATTR_TENSOR, _field(5, _tensor([n], _STRING, data))), _STRING)


def constant_value_ints(size: int) -> bytes:
    """A Constant's ``value_ints`` (2 bytes an element, as onnx's helper writes them)."""
    return _with_constant(_attribute("value_ints", _ATTR_INTS, _field(8, 1) * (size // 2)), _INT64)


def constant_value_floats(size: int) -> bytes:
    """A Constant's ``value_floats`` (5 bytes an element)."""
    return _with_constant(
        _attribute("value_floats", _ATTR_FLOATS, (b"\x3d" + struct.pack("<f", 1.5)) * (size // 5)), _FLOAT
    )


def constant_value_strings(size: int) -> bytes:
    """A Constant's ``value_strings`` of two-character strings (4 bytes an element)."""
    return _with_constant(_attribute("value_strings", _ATTR_STRINGS, _field(9, b"ab") * (size // 4)), _STRING)


def custom_ints(size: int) -> bytes:
    """A custom operator's ``ints`` attribute (2 bytes an element)."""
    return _with_custom(_attribute("big", _ATTR_INTS, _field(8, 1) * (size // 2)))


def custom_floats(size: int) -> bytes:
    """A custom operator's ``floats`` attribute (5 bytes an element)."""
    return _with_custom(_attribute("big", _ATTR_FLOATS, (b"\x3d" + struct.pack("<f", 1.5)) * (size // 5)))


def custom_strings(size: int) -> bytes:
    """A custom operator's ``strings`` attribute of two-character strings (4 bytes an element)."""
    return _with_custom(_attribute("big", _ATTR_STRINGS, _field(9, b"ab") * (size // 4)))


def custom_string(size: int) -> bytes:
    """A custom operator's one long ``s`` (ASCII, with one character past the BMP at the end,
    which makes Python's decoded string 4 bytes a character)."""
    return _with_custom(_attribute("big", _ATTR_STRING, _field(4, b"a" * (size - 4) + "\U0001f600".encode())))


def constant_sparse(size: int) -> bytes:
    """A Constant's ``sparse_value``: float values and int64 linear indices, both in ``raw_data``."""
    n = size // 12
    values = _tensor([n], _FLOAT, _field(9, bytes(4 * n)))
    indices = _tensor([n], _INT64, _field(9, np.arange(0, 2 * n, 2, dtype="<i8").tobytes()))
    sparse = _field(1, values) + _field(2, indices) + _field(3, 2 * n)
    return _with_constant(_attribute("sparse_value", _ATTR_SPARSE, _field(22, sparse)), _FLOAT)


def long_names(size: int) -> bytes:
    """Eight Relu nodes whose node names, value names, doc strings and the input's dim_param are
    each about a thirty-second of the size (every value name is written twice: by its producer
    and its consumer), with the model's and the graph's doc strings as long."""
    k = max(1, size // 36)
    names = [f"v{i}_" + "a" * k for i in range(8)]
    nodes, prev = [], "x"
    for i, name in enumerate(names):
        nodes.append(_node([prev], [name], "Relu", name=f"n{i}_" + "b" * k, doc="d" * k))
        prev = name
    nodes.append(_node([prev], ["y"], "Identity"))
    x = _value_info("x", _FLOAT, ["N" + "c" * k, 4])
    return _model(nodes, [x], [_Y], doc="m" * k, graph_doc="g" * k)


def many_names(size: int) -> bytes:
    """A chain of Relu nodes with names of 4,000 characters (node and value names), as many as
    the size holds: every name is distinct, so nothing is shared."""
    k = 4000
    count = max(2, size // (3 * k))
    nodes, prev = [], "x"
    for i in range(count):
        name = f"{i}_" + "v" * k
        nodes.append(_node([prev], [name], "Relu", name=f"{i}_" + "n" * k))
        prev = name
    nodes.append(_node([prev], ["y"], "Identity"))
    return _model(nodes, [_X], [_Y])


def add_chain(size: int) -> bytes:
    """``Add`` nodes in a chain, each adding an input of its own symbolic extent ``d{i}``: the
    broadcast's extent is the maximum of every extent before it (about 50 bytes a node)."""
    count = max(2, size // 50)
    inputs = [_value_info(f"x{i}", _FLOAT, [f"d{i}"]) for i in range(count)]
    nodes, prev = [], "x0"
    for i in range(1, count):
        nodes.append(_node([prev, f"x{i}"], [f"s{i}"], "Add"))
        prev = f"s{i}"
    return _model(nodes, inputs, [_value_info(prev, _FLOAT, None)])


def max_wide(size: int) -> bytes:
    """``Max`` nodes over the same 250 inputs of distinct symbolic extents ``d{i}``, each node
    taking them in another order (about 1.2 KB a node): each broadcasts 250 extents at once."""
    width = 250
    inputs = [_value_info(f"x{i}", _FLOAT, [f"d{i}"]) for i in range(width)]
    count = max(1, (size - 20 * width) // (5 * width))
    nodes = [
        _node([f"x{(n * (2 * (n % 7) + 1) + j) % width}" for j in range(width)], [f"m{n}"], "Max") for n in range(count)
    ]
    return _model(nodes, inputs, [_value_info(f"m{count - 1}", _FLOAT, None)])


def where_chain(size: int) -> bytes:
    """``Where`` nodes in a chain, each selecting between the running result and an input of its
    own symbolic extent (three shapes broadcast at each node; about 70 bytes a node)."""
    count = max(2, size // 70)
    inputs = [_value_info("c", 9, ["C"])] + [_value_info(f"x{i}", _FLOAT, [f"d{i}"]) for i in range(count)]
    nodes, prev = [], "x0"
    for i in range(1, count):
        nodes.append(_node(["c", prev, f"x{i}"], [f"s{i}"], "Where"))
        prev = f"s{i}"
    return _model(nodes, inputs, [_value_info(prev, _FLOAT, None)])


def concat_chain(size: int) -> bytes:
    """``Concat`` nodes in a chain along an axis of symbolic extents: the running sum of every
    extent before it, until it outgrows ``max_expression_size`` (about 60 bytes a node)."""
    count = max(2, size // 60)
    inputs = [_value_info(f"x{i}", _FLOAT, [f"d{i}", 3]) for i in range(count)]
    axis = _attribute("axis", 2, _field(3, 0))  # AttributeProto.INT 0
    nodes, prev = [], "x0"
    for i in range(1, count):
        nodes.append(_node([prev, f"x{i}"], [f"s{i}"], "Concat", [axis]))
        prev = f"s{i}"
    return _model(nodes, inputs, [_value_info(prev, _FLOAT, None)])


def add2d_chain(size: int) -> bytes:
    """``add_chain`` with two broadcast axes, each input of two extents of its own."""
    count = max(2, size // 60)
    inputs = [_value_info(f"x{i}", _FLOAT, [f"a{i}", f"b{i}"]) for i in range(count)]
    nodes, prev = [], "x0"
    for i in range(1, count):
        nodes.append(_node([prev, f"x{i}"], [f"s{i}"], "Add"))
        prev = f"s{i}"
    return _model(nodes, inputs, [_value_info(prev, _FLOAT, None)])


CASES: dict[str, Callable[[int], bytes]] = {
    f.__name__: f
    for f in (
        constant_raw,
        initializer_raw,
        constant_float_data,
        constant_int64_data,
        initializer_int64_data,
        constant_string_data,
        constant_value_ints,
        constant_value_floats,
        constant_value_strings,
        custom_ints,
        custom_floats,
        custom_strings,
        custom_string,
        constant_sparse,
        long_names,
        many_names,
        add_chain,
        max_wide,
        where_chain,
        concat_chain,
        add2d_chain,
    )
}

# Lists of small numbers and of short strings, which protobuf's own model holds at 8 to 16 bytes
# an element however few bytes the file spends on each: the bound of 3 times the file is
# protobuf's parse plus the file's bytes for them (docs/limits.md).
PROTOBUF_BOUND = {"constant_int64_data", "initializer_int64_data", "constant_string_data", "constant_value_ints",
                  "constant_value_strings", "custom_ints", "custom_strings"}  # fmt: skip
# Many small Python objects (a node, a name and its dict entries cost more than 50 bytes of file):
# the benchmark reports them, for time; memory is bounded as docs/performance.md describes.
PER_NODE = {"add_chain", "max_wide", "where_chain", "concat_chain", "add2d_chain"}

# -- measuring ---------------------------------------------------------------------------------


def _run(path: Path, via: str, out: Path) -> None:
    if via == "api":
        import infer

        infer.infer_model(str(path))
    elif via == "protobuf":
        import onnx

        data = path.read_bytes()
        onnx.ModelProto.FromString(data)
    else:
        from infer.cli import main

        args = [via, str(path), "-q"] + (["-o", str(out)] if via == "annotate" else [])
        main(args)


VIAS = ("protobuf", "api", "check", "annotate")


def _warm(directory: Path) -> None:
    """Imports, rules and signatures, every way in: outside what is measured."""
    warm = directory / "warm.onnx"
    warm.write_bytes(long_names(1000))
    for via in VIAS:
        _run(warm, via, directory / "warm.out.onnx")


def _measure_warm(path: Path, via: str, directory: Path) -> dict[str, Any]:
    """Peak memory rise and time of reading ``path`` ``via`` one way, in this warmed process."""
    gc.collect()
    before = rss()
    exact = reset_peak_rss()
    start = time.perf_counter()
    _run(path, via, directory / "out.onnx")
    seconds = time.perf_counter() - start
    rise = max(0, peak_rss() - before)
    size = path.stat().st_size
    return {
        "path": str(path),
        "via": via,
        "bytes": size,
        "rise": rise,
        "ratio": rise / size,
        "seconds": seconds,
        "exact": exact,
    }


def _measure_forked(items: list[tuple[Path, str]]) -> list[dict[str, Any]]:
    """Each of ``items`` measured in a fork of this process, warmed once: a fork starts with the
    warm process's memory (shared until written), so each measurement sees none of the others."""
    directory = Path(tempfile.mkdtemp(prefix="onnx-infer-hostile-"))
    rows = []
    try:
        _warm(directory)
        for path, via in items:
            read, write = os.pipe()
            pid = os.fork()
            if pid == 0:  # the child: measure, report through the pipe, leave without cleanup
                os.close(read)
                try:
                    payload = json.dumps(_measure_warm(path, via, directory))
                except BaseException as e:  # reported to the parent, which raises
                    payload = json.dumps({"path": str(path), "via": via, "error": f"{type(e).__name__}: {e}"})
                os.write(write, payload.encode())
                os._exit(0)
            os.close(write)
            with os.fdopen(read, "rb") as f:
                payload = f.read()
            os.waitpid(pid, 0)
            row = json.loads(payload) if payload else {"path": str(path), "via": via, "error": "the child died"}
            if "error" in row:
                raise RuntimeError(f"measuring {path} via {via} failed: {row['error']}")
            rows.append(row)
    finally:
        for f in directory.iterdir():
            f.unlink()
        directory.rmdir()
    return rows


def measure(items: list[tuple[Path, str]]) -> list[dict[str, Any]]:
    """Peak memory rise (bytes, and against the file) and time of each (model file, way in), in
    a fresh process started for them (see ``_measure_forked``)."""
    run = subprocess.run(
        [sys.executable, "-m", "benchmarks.hostile", "--measure"],
        cwd=HERE.parent,
        text=True,
        input=json.dumps([[str(p), v] for p, v in items]),
        capture_output=True,
    )
    if run.returncode != 0:
        raise RuntimeError(f"measuring failed: {run.stderr.strip()[-2000:]}")
    return json.loads(run.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=float, nargs="*", default=[1, 10, 100], help="file sizes in MB")
    parser.add_argument("--cases", nargs="*", choices=sorted(CASES), default=list(CASES))
    parser.add_argument("--via", nargs="*", choices=VIAS, default=list(VIAS))
    parser.add_argument("--keep", type=Path, help="keep the models in this directory (default: a temporary one)")
    parser.add_argument("--json", action="store_true", help="one JSON document of every measurement")
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)  # (path, way) pairs on stdin
    args = parser.parse_args(argv)
    if args.measure:
        print(json.dumps(_measure_forked([(Path(p), v) for p, v in json.loads(sys.stdin.read())])))
        return 0
    directory = args.keep or Path(tempfile.mkdtemp(prefix="onnx-infer-hostile-"))
    directory.mkdir(parents=True, exist_ok=True)
    rows = []
    if not args.json:
        cols = "".join(f"{v + ' x':>12}" for v in args.via)
        print(f"{'case':<24}{'file MB':>9}{cols}{'api s':>8}{'check s':>9}")
    for size in args.sizes:
        for case in args.cases:
            path = directory / f"{case}_{size:g}MB.onnx"
            path.write_bytes(CASES[case](int(size * MB)))
            row: dict[str, Any] = {"case": case, "bytes": path.stat().st_size}
            for measured in measure([(path, via) for via in args.via]):
                row[measured["via"]] = measured
            rows.append(row)
            if not args.keep:
                path.unlink()
            if not args.json:
                ratios = "".join(f"{row[v]['ratio']:>12.2f}" for v in args.via)
                secs = "".join(
                    f"{row[v]['seconds']:>{w}.2f}" if v in row else f"{'':>{w}}" for v, w in (("api", 8), ("check", 9))
                )
                print(f"{case:<24}{row['bytes'] / MB:>9.1f}{ratios}{secs}", flush=True)
    if not args.keep:
        directory.rmdir()
    if args.json:
        print(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
