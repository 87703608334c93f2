"""The ``onnx-infer`` command: annotate, check, explain, ops.

Exit status: 0 fine, 1 errors found in the model, 2 could not read the model or run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import __version__, infer_model
from .annotate import STYLES
from .diagnostics import ERROR, INFO, WARNING
from .loader import ModelLoadError

EXIT_OK, EXIT_ERRORS, EXIT_FAILED = 0, 1, 2


class CliError(Exception):
    """A one-line reason to stop with exit status 2."""


def _bindings(items: Sequence[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise CliError(f"--bind expects NAME=INT, got {item!r}")
        try:
            out[name] = int(value)
        except ValueError:
            raise CliError(f"--bind {name}: {value!r} is not an integer") from None
        if out[name] < 0:
            raise CliError(f"--bind {name}: an extent cannot be negative")
    return out


def _emit(data: Any) -> None:
    json.dump(data, sys.stdout, indent=2, sort_keys=False)
    sys.stdout.write("\n")


def _infer(args: argparse.Namespace):
    return infer_model(
        args.model,
        dims_style=getattr(args, "dims", "expressions"),
        dims=_bindings(getattr(args, "bind", None) or []),
    )


def write_atomically(data: bytes, dest: Path) -> None:
    """Write ``data`` to ``dest`` through a temporary file in the same directory and a rename."""
    directory = dest.parent if str(dest.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, dest)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _output_path(args: argparse.Namespace) -> Path:
    src = Path(args.model)
    if args.in_place:
        if args.output:
            raise CliError("give either -o or --in-place, not both")
        return src
    if args.output:
        out = Path(args.output)
        if out.exists() and src.exists() and os.path.samefile(out, src):
            raise CliError(f"{out} is the input model; pass --in-place to overwrite it")
        return out
    out = src.with_name(src.stem + ".inferred.onnx")
    if out.exists() and not args.force:
        raise CliError(f"{out} exists; pass -o PATH to choose the output or --force to replace it")
    return out


def cmd_annotate(args: argparse.Namespace) -> int:
    out = _output_path(args)
    result = _infer(args)
    try:
        data = result.model.SerializeToString()
    except ValueError as e:  # protobuf refuses messages over 2 GiB
        raise CliError(f"cannot serialize the annotated model: {e}") from None
    try:
        write_atomically(data, out)
    except OSError as e:
        raise CliError(f"cannot write {out}: {e.strerror or e}") from None
    summary = result.summary()
    errors = result.errors
    if args.json:
        _emit({"output": str(out), **result.to_json()})
    elif not args.quiet:
        print(f"wrote {out}")
        print(summary)
        if (
            result.model.graph.initializer
            and any(t.data_location == 1 for t in result.model.graph.initializer)
            and Path(args.model).resolve().parent != out.resolve().parent
        ):
            print("note: the model keeps tensors in external files; they are referenced relative to "
                  f"{out.parent}, so copy them there")  # fmt: skip
        for d in errors:
            print(d)
    return EXIT_ERRORS if errors else EXIT_OK


def cmd_check(args: argparse.Namespace) -> int:
    result = _infer(args)
    diags = [d for d in result.diagnostics if args.verbose or d.severity != INFO]
    errors = [d for d in diags if d.severity == ERROR]
    if args.json:
        counts = {s: sum(d.severity == s for d in result.diagnostics) for s in (ERROR, WARNING, INFO)}
        _emit({"diagnostics": [d.to_dict() for d in diags], "summary": counts})
    elif not args.quiet:
        for sev in (ERROR, WARNING, INFO):
            group = [d for d in diags if d.severity == sev]
            if not group:
                continue
            print(f"{sev}s ({len(group)}):")
            for d in group:
                print(f"  [{d.code}] {d.location}: {d.message} (Clause {d.clause})")
                if d.suggestion:
                    print(f"      suggestion: {d.suggestion}")
        if not diags:
            print("no problems found")
    return EXIT_ERRORS if errors else EXIT_OK


def cmd_explain(args: argparse.Namespace) -> int:
    result = _infer(args)
    try:
        exp = result.explain(args.value, graph=args.graph, dim=args.dim)
    except KeyError:
        raise CliError(f"the model has no value named {args.value!r}") from None
    if args.json:
        _emit(exp.to_dict())
    else:
        print(exp)
    return EXIT_OK


def cmd_ops(args: argparse.Namespace) -> int:
    from .conformance import statement

    rows = statement(args.domain)
    if args.json:
        _emit(rows)
        return EXIT_OK
    for row in rows["operators"]:
        domain = row["domain"] or "ai.onnx"
        print(f"{domain:<24} {row['op_type']:<32} {row['since']:>3}  {row['status']:<11} {row['detail']}")
    print(rows["summary"])
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="onnx-infer",
        description="Shape and type inference for ONNX models with symbolic dimensions.",
    )
    p.add_argument("--version", action="version", version=f"onnx-infer {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def common(sp: argparse.ArgumentParser, infer_opts: bool = True) -> None:
        sp.add_argument("--json", action="store_true", help="machine-readable output on stdout")
        sp.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
        if infer_opts:
            sp.add_argument(
                "--dims",
                choices=STYLES,
                default="expressions",
                help="how symbolic dims are written: 'seq + 5', or identifier names only (strict)",
            )
            sp.add_argument(
                "--bind",
                action="append",
                metavar="NAME=INT",
                help="fix a dimension variable to an integer (repeatable)",
            )

    a = sub.add_parser("annotate", help="write inferred value_info into a copy of the model")
    a.add_argument("model", help="path of the .onnx model")
    a.add_argument("-o", "--output", help="where to write (default: MODEL.inferred.onnx)")
    a.add_argument("--in-place", action="store_true", help="overwrite the input model")
    a.add_argument("--force", action="store_true", help="replace an existing default output file")
    common(a)
    a.set_defaults(func=cmd_annotate)

    c = sub.add_parser("check", help="validate the model and report every problem found")
    c.add_argument("model")
    c.add_argument("-v", "--verbose", action="store_true", help="also list informational notes")
    common(c)
    c.set_defaults(func=cmd_check)

    e = sub.add_parser("explain", help="explain why a value's shape is (partly) unknown")
    e.add_argument("model")
    e.add_argument("value", help="name of the value to explain")
    e.add_argument("--dim", type=int, help="only this axis")
    e.add_argument("--graph", help="graph path for a value inside a subgraph (e.g. main/3:body)")
    common(e)
    e.set_defaults(func=cmd_explain)

    o = sub.add_parser("ops", help="the conformance statement: what is supported, per opset")
    o.add_argument("--domain", help="only this domain ('' or ai.onnx for the default)")
    common(o, infer_opts=False)
    o.set_defaults(func=cmd_ops)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (ModelLoadError, CliError) as e:
        print(f"onnx-infer: {e}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        print("onnx-infer: interrupted", file=sys.stderr)
        return EXIT_FAILED
    except RecursionError:
        print("onnx-infer: the model nests too deeply to process", file=sys.stderr)
        return EXIT_FAILED
    except MemoryError:
        print("onnx-infer: out of memory", file=sys.stderr)
        return EXIT_FAILED
    except Exception as e:  # a bug of ours: still one line, never a traceback
        print(f"onnx-infer: internal error: {type(e).__name__}: {e} (set ONNX_INFER_DEBUG=1 for details)",
              file=sys.stderr)  # fmt: skip
        if os.environ.get("ONNX_INFER_DEBUG"):
            raise
        return EXIT_FAILED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
