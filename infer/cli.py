"""The ``onnx-infer`` command: annotate, check, explain, report, ops.

Exit status: 0 fine, 1 errors found in the model, 2 could not read the model or run.

Terminal manners: text from the model or the user is shown escaped (``infer.out.escape``: no
control character or bidi override reaches the terminal raw), colour only when the stream is a
terminal (``NO_COLOR`` and ``--color never`` turn it off), a progress bar on stderr only when
stderr is a terminal and a run takes long enough to wait for, ``--json`` on every verb (stdout
holds the JSON and nothing else) and ``--quiet`` on every verb.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypedDict

from infer import Limits, __version__, infer_model
from infer.check.domain import SEARCH_LIMIT
from infer.core.diagnostics import ERROR, INFO, WARNING
from infer.core.dims import free_names, is_symbolic
from infer.core.scopes import MAIN
from infer.load.loader import ModelLoadError
from infer.out.annotate import STYLES
from infer.out.escape import escaped
from infer.out.output import OutputRefused, destination, write_file

if TYPE_CHECKING:  # pragma: no cover
    from infer.out.result import InferenceResult

EXIT_OK, EXIT_ERRORS, EXIT_FAILED = 0, 1, 2


class CliError(Exception):
    """A one-line reason to stop with exit status 2."""


# -- terminal manners ----------------------------------------------------------------------------


class Painted(str):
    """Text ``Style`` has escaped and coloured: ``say`` writes it as it is."""


def say(*parts: str, file: IO[str] | None = None) -> None:
    """Print one line made of ``parts``: what ``Style`` made as it is, every other part escaped
    (names, messages and paths are the model's or the user's text: ``infer.out.escape``)."""
    print("".join(p if isinstance(p, Painted) else escaped(p) for p in parts), file=file or sys.stdout)


class Style:
    """ANSI colours, or plain text when the stream is not a terminal or colour is turned off. The
    text is escaped first (``infer.out.escape``): the colour codes are the only controls written."""

    CODES = {"red": "31", "yellow": "33", "green": "32", "blue": "34", "bold": "1", "dim": "2"}

    def __init__(self, enabled: bool):
        self.enabled = enabled

    @classmethod
    def for_stream(cls, stream: IO[str], mode: str = "auto") -> Style:
        if mode == "always":
            return cls(True)
        if mode == "never" or os.environ.get("NO_COLOR"):  # https://no-color.org: any non-empty value
            return cls(False)
        return cls(_isatty(stream) and os.environ.get("TERM") != "dumb")

    def __call__(self, color: str, text: str) -> Painted:
        text = escaped(text)
        return Painted(f"\x1b[{self.CODES[color]}m{text}\x1b[0m" if self.enabled and text else text)


SEVERITY_COLOR = {ERROR: "red", WARNING: "yellow", INFO: "dim"}
STATUS_COLOR = {"rule": "green", "function": "blue", "unsupported": "yellow", "no-rule": "red"}


def _isatty(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def table(
    rows: Sequence[Sequence[str]],
    style: Style,
    colors: Sequence[Callable[[str], str | None] | None] = (),
    width: int | None = None,
) -> Painted:
    """Rows as aligned columns. ``colors[i](cell)`` names a colour for a cell of column ``i``.

    Every column but the last is padded to its widest cell; the last is cut to ``width`` (the
    terminal's) when one is given, so a row stays on one line.
    """
    if not rows:
        return Painted("")
    rows = [[escaped(cell) for cell in r] for r in rows]  # widths are those of the text shown
    ncols = max(len(r) for r in rows)
    widths = [max(len(r[i]) if i < len(r) else 0 for r in rows) for i in range(ncols)]
    lines = []
    for r in rows:
        cells = []
        used = 0
        for i, cell in enumerate(r):
            last = i == len(r) - 1
            text = cell
            if last and width is not None and used + len(text) > width > used + 8:
                text = text[: width - used - 1] + "…"
            pad = "" if last else " " * (widths[i] - len(cell))
            paint = colors[i] if i < len(colors) else None
            color = paint(cell) if paint is not None else None
            cells.append((style(color, text) if color else text) + pad)
            used += len(text) + len(pad) + 2
        lines.append("  ".join(cells).rstrip())
    return Painted("\n".join(lines))


class Progress:
    """A one-line bar on stderr: shown only on a terminal, and only once a run has taken a while."""

    # Seconds before the bar appears, so small models never flicker (the environment variable
    # ONNX_INFER_PROGRESS_DELAY changes it: 0 shows the bar at once).
    DELAY = 0.5
    INTERVAL = 0.1  # seconds between redraws

    def __init__(self, stream: IO[str], enabled: bool, label: str = "inferring"):
        try:
            self.delay = max(0.0, float(os.environ.get("ONNX_INFER_PROGRESS_DELAY", self.DELAY)))
        except ValueError:
            self.delay = self.DELAY
        self.stream = stream
        self.enabled = enabled
        self.label = label
        self.start = time.monotonic()
        self.last = 0.0
        self.shown = False

    def update(self, done: int, total: int) -> None:
        if not self.enabled or total <= 0:
            return
        now = time.monotonic()
        if now - self.start < self.delay or (now - self.last < self.INTERVAL and done < total):
            return
        self.last = now
        cols = max(20, min(shutil.get_terminal_size((80, 24)).columns, 120))
        tail = f" {done}/{total} nodes {now - self.start:5.1f}s"
        head = f"{self.label} "
        bar = max(10, cols - len(head) - len(tail) - 3)
        filled = bar * min(done, total) // total
        self.stream.write(f"\r{head}[{'#' * filled}{'.' * (bar - filled)}]{tail}")
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            cols = shutil.get_terminal_size((80, 24)).columns
            self.stream.write("\r" + " " * (cols - 1) + "\r")
            self.stream.flush()
            self.shown = False


# -- shared pieces -------------------------------------------------------------------------------


# The largest extent a binding may give: a tensor's extent is an int64 (Clause 6.2). Past it a
# binding describes no tensor, so it is refused rather than inferred into overflow warnings.
MAX_BINDING = (1 << 63) - 1


def _bindings(items: Sequence[str], option: str = "--bind") -> dict[str, int]:
    """``NAME=INT`` pairs of ``option``: each an extent from 0 to ``MAX_BINDING``."""
    out: dict[str, int] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise CliError(f"{option} expects NAME=INT, got {item!r}")
        try:
            out[name] = int(value)
        except ValueError:
            raise CliError(f"{option} {name}: {value!r} is not an integer") from None
        if out[name] < 0:
            raise CliError(f"{option} {name}: an extent cannot be negative")
        if out[name] > MAX_BINDING:
            raise CliError(f"{option} {name}: {value} is past the largest extent a tensor can have, 2^63 - 1")
    return out


def _emit(data: Any) -> None:
    # One write: ``json.dump`` writes every token separately (millions for a large report).
    sys.stdout.write(json.dumps(data, indent=2, sort_keys=False) + "\n")


def _style(args: argparse.Namespace) -> Style:
    return Style.for_stream(sys.stdout, getattr(args, "color", "auto"))


LIMIT_NAMES = Limits.names()  # the fields of infer.Limits


def _limits(items: Sequence[str]) -> dict[str, int | float]:
    """``--limit NAME=VALUE`` pairs; the names are the fields of ``infer.Limits`` (keyword options
    of ``infer_model``). A count must be a positive integer; seconds a non-negative number, 0
    for no limit."""
    out: dict[str, int | float] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or name not in LIMIT_NAMES:
            raise CliError(f"--limit expects NAME=VALUE with NAME one of {', '.join(LIMIT_NAMES)}, got {item!r}")
        if Limits().kind(name) == "seconds":
            try:
                seconds = float(value)
            except ValueError:
                raise CliError(f"--limit {name}: {value!r} is not a number of seconds") from None
            if not 0 <= seconds < float("inf"):
                raise CliError(f"--limit {name}: seconds must be finite and not negative (0: no limit)")
            out[name] = seconds
            continue
        try:
            out[name] = int(value)
        except ValueError:
            raise CliError(f"--limit {name}: {value!r} is not an integer") from None
        if out[name] <= 0:
            raise CliError(f"--limit {name}: a limit must be positive")
    return out


def _infer(args: argparse.Namespace) -> InferenceResult:
    bindings = _bindings(getattr(args, "bind", None) or [])
    options = _limits(getattr(args, "limit", None) or [])
    progress = Progress(sys.stderr, enabled=not args.quiet and _isatty(sys.stderr))
    try:
        result = infer_model(
            args.model,
            dims_style=getattr(args, "dims", "expressions"),
            dims=bindings,
            read_external_data=getattr(args, "read_external_data", False),
            external_data_dir=getattr(args, "external_data_dir", None),
            progress=progress.update if progress.enabled else None,
            limits=Limits.from_overrides(options),
        )
    finally:
        progress.close()
    names = result.dims.reserved  # every dim_param of the model
    unused = sorted(n for n in bindings if names and n not in names)
    if unused and not args.quiet:
        known = sorted(names)
        listed = ", ".join(known[:12]) + (f" and {len(known) - 12} more" if len(known) > 12 else "")
        say(
            f"onnx-infer: warning: the model has no dimension variable named {', '.join(unused)}; it has {listed}",
            file=sys.stderr,
        )
    return result


# The one writer of every verb that writes (infer.out.output): regular files only, atomically.
write_atomically = write_file


def _write(data: bytes, out: Path, args: argparse.Namespace) -> None:
    """Write a verb's output; the input model is refused unless ``--in-place`` asked for it."""
    try:
        write_file(data, out, spare=None if getattr(args, "in_place", False) else args.model)
    except OutputRefused as e:
        raise CliError(_refusal(e, args)) from None
    except OSError as e:
        raise CliError(f"cannot write {out}: {e.strerror or e}") from None


def _refusal(e: OutputRefused, args: argparse.Namespace) -> str:
    """The writer's refusal, with the way to overwrite the input where the verb has one."""
    hint = "; pass --in-place to overwrite it" if hasattr(args, "in_place") and "is the input model" in str(e) else ""
    return f"{e}{hint}"


def _output_path(args: argparse.Namespace, suffix: str) -> Path:
    """Where a verb writes: ``-o``, the input itself with ``--in-place``, or MODEL<suffix>.

    The destination is checked here, before inference, and again by the writer: a directory, a
    device, a FIFO or a socket is refused, a symbolic link is followed to a regular file, and a
    destination that is the input (the same file by any name or link) is refused, ``--force``
    or not: only ``--in-place`` writes the input.
    """
    src = Path(args.model)
    if args.output is not None and not args.output:
        raise CliError("-o: the output path is empty")
    in_place = getattr(args, "in_place", False)
    if in_place:
        if args.output is not None:
            raise CliError("give either -o or --in-place, not both")
        out = src
    elif args.output is not None:
        out = Path(args.output)
    else:
        out = src.with_name(src.stem + suffix)
        if os.path.lexists(out) and not args.force:
            raise CliError(f"{out} exists; pass -o PATH to choose the output or --force to replace it")
    try:
        destination(out, spare=None if in_place else src)
    except OutputRefused as e:
        raise CliError(_refusal(e, args)) from None
    except OSError as e:
        raise CliError(f"cannot write {out}: {e.strerror or e}") from None
    return out


def _counts(diags: Sequence[Any]) -> dict[str, int]:
    return {s: sum(d.severity == s for d in diags) for s in (ERROR, WARNING, INFO)}


def _counts_line(counts: dict[str, int], style: Style) -> Painted:
    def part(n: int, word: str, color: str) -> str:
        text = f"{n} {word}{'' if n == 1 else 's'}"
        return style(color, text) if n else text

    parts = [
        part(counts[ERROR], "error", "red"),
        part(counts[WARNING], "warning", "yellow"),
        part(counts[INFO], "note", "dim"),
    ]
    return Painted(", ".join(parts))  # counts and words of ours: nothing to escape


# -- the verbs -----------------------------------------------------------------------------------


def cmd_annotate(args: argparse.Namespace) -> int:
    out = _output_path(args, ".inferred.onnx")
    result = _infer(args)
    try:
        data = result.model.SerializeToString()
    except ValueError as e:  # protobuf refuses messages over 2 GiB
        raise CliError(f"cannot serialize the annotated model: {e}") from None
    _write(data, out, args)
    errors = result.errors
    if args.json:
        _emit({"output": str(out), **result.to_json()})
    elif not args.quiet:
        style = _style(args)
        say(f"wrote {out}")
        say(str(result.summary()))
        if (
            result.model.graph.initializer
            and any(t.data_location == 1 for t in result.model.graph.initializer)
            and Path(args.model).resolve().parent != out.resolve().parent
        ):
            say(
                f"note: the model keeps tensors in external files; they are referenced relative to {out.parent}, "
                "so copy them there"
            )
        for d in errors:
            say(style("red", str(d)))
    return EXIT_ERRORS if errors else EXIT_OK


def cmd_check(args: argparse.Namespace) -> int:
    result = _infer(args)
    diags = [d for d in result.diagnostics if args.verbose or d.severity != INFO]
    errors = [d for d in diags if d.severity == ERROR]
    counts = _counts(result.diagnostics)
    assumptions = result.assumptions
    outside = _outside(args)
    if args.json:
        _emit(
            {
                "diagnostics": [d.to_dict() for d in diags],
                "summary": counts,
                "assumptions": [_assumption_dict(a) for a in assumptions],
                "outside_domain": [{"binding": b, "constraint": c.to_json()} for b, c in outside],
            }
        )
    elif not args.quiet:
        style = _style(args)
        for b, c in outside:
            by = f" (required by {c.demands[0]})" if c.demands else ""
            say(style("red", f"the binding {b} is outside the model's domain: {c}{by}"))
        for sev in (ERROR, WARNING, INFO):
            group = [d for d in diags if d.severity == sev]
            if not group:
                continue
            say(style(SEVERITY_COLOR[sev], f"{sev}s ({len(group)}):"))
            for d in group:
                say("  ", style("bold", "[" + d.code + "]"), f" {d.location}: {d.message} (Clause {d.clause})")
                if d.suggestion:
                    say(f"      suggestion: {d.suggestion}")
        if not diags:
            say(style("green", "no problems found"))
        if assumptions:
            # Claims rest on these; a run outside them is not covered (docs/verify.md).
            say(style("bold", f"assumptions ({len(assumptions)}):"))
            for a in assumptions:
                say(f"  {a}" + (f" at {a.site}" if a.site else ""))
        hidden = "" if args.verbose or not counts[INFO] else " (-v lists the notes)"
        say(f"{args.model}: ", _counts_line(counts, style), hidden)
    return EXIT_ERRORS if errors or outside else EXIT_OK


def _outside(args: argparse.Namespace) -> list[tuple[str, Any]]:
    """``check --bind``: the given binding against the model's domain (inferred without it),
    as (binding text, broken constraint) pairs."""
    bindings = _bindings(getattr(args, "bind", None) or [])
    if not bindings:
        return []
    free = _infer(argparse.Namespace(**{**vars(args), "bind": None, "quiet": True}))
    broken = free.domain.violated(bindings)
    shown = ", ".join(f"{k}={v}" for k, v in bindings.items())
    return [(shown, c) for c in broken]


def cmd_domain(args: argparse.Namespace) -> int:
    result = _infer(args)
    dom = result.domain
    near = _bindings(args.near or [], "--near")
    unknown = sorted(n for n in near if n not in dom.variables)
    if unknown:
        listed = ", ".join(dom.variables) or "none"
        raise CliError(f"--near: the model has no input variable named {', '.join(unknown)} (its variables: {listed})")
    far = [f"{k}={v}" for k, v in near.items() if v > SEARCH_LIMIT]
    if far:  # the search stays within SEARCH_LIMIT: past it, "near" would be an answer far away
        raise CliError(f"--near {', '.join(far)}: past the largest size the search reaches, {SEARCH_LIMIT} (2^20)")
    sample = dom.near(near) if near else dom.smallest()
    if args.json:
        _emit({**dom.to_json(), "sample": sample, "near": near or None})
        return EXIT_OK
    if args.quiet:
        return EXIT_OK
    style = _style(args)
    names = ", ".join(dom.variables) or "none"
    say(style("bold", "input variables"), f": {names}")
    if not dom.constraints and not dom.not_expressed:
        say(style("green", "no requirement found: every binding of them is inside"))
    for c in dom.constraints:
        say(f"  {c}")
        for d in c.demands[:3]:
            say(style("dim", f"      by {d}"))
        if len(c.demands) > 3:
            say(style("dim", f"      and {len(c.demands) - 3} more nodes"))
    for n in dom.not_expressed:
        say("  ", style("yellow", str(n)))
    what = (
        "a valid binding near " + ", ".join(f"{k}={v}" for k, v in near.items()) if near else "smallest valid binding"
    )
    if sample is None:
        say(
            style(
                "red",
                f"{what}: none" + (" (onnxruntime refuses the model at every one)" if not dom.runnable else " found"),
            )
        )
    elif dom.variables:
        say(f"{what}: " + ", ".join(f"{k}={v}" for k, v in sample.items()))
    return EXIT_OK


def cmd_explain(args: argparse.Namespace) -> int:
    result = _infer(args)
    try:
        exp = result.explain(args.value, graph=args.graph, dim=args.dim)
    except KeyError:
        raise CliError(f"the model has no value named {args.value!r}") from None
    shape = result.shape_of(args.value, args.graph) if args.graph or args.value in result.graphs[MAIN].values else None
    names = set().union(*(free_names(d) for d in shape or () if is_symbolic(d)))
    domain = [c for c in result.domain.constraints if c.variables & names]
    if args.json:
        _emit({**exp.to_dict(), "domain": [c.to_json() for c in domain]})
    elif not args.quiet:
        style = _style(args)
        say(style("bold", "`" + exp.value + "`"), f": {exp.type}")
        if exp.known:
            say(style("green", "every dim is known (as an integer or over declared variables)"))
        for s in exp.steps:
            say("  " * (s.depth + 1), style("red", "root: ") if s.root else "", s.text)
        if domain:  # where those variables may be (a run outside fails: `onnx-infer domain`)
            say(f"the model accepts its variables only where: {'; '.join(map(str, domain))}")
    return EXIT_OK


def cmd_report(args: argparse.Namespace) -> int:
    from infer.out.report import render

    out = _output_path(args, ".report.html")
    at = _bindings(args.cost_bind or [], "--cost-bind")
    result = _infer(args)
    variables = result.cost.variables
    unknown = sorted(set(at) - set(variables))
    if unknown:
        known = ", ".join(variables) or "none"
        raise CliError(f"--cost-bind: no input variable named {', '.join(unknown)} (the model has {known})")
    # The cost section's plot: the variables --bind fixed in inference, then those --cost-bind gives.
    page = render(result, args.title or Path(args.model).name, {**_bindings(args.bind or []), **at})
    _write(page.encode("utf-8"), out, args)
    counts = _counts(result.diagnostics)
    if args.json:
        _emit({"output": str(out), "summary": result.summary().to_dict(), "diagnostics": counts})
    elif not args.quiet:
        style = _style(args)
        say(f"wrote {out}")
        say(str(result.summary()))
        say("diagnostics: ", _counts_line(counts, style))
    return EXIT_ERRORS if counts[ERROR] else EXIT_OK


def _assumption_dict(a: Any) -> dict[str, Any]:
    from infer.core.dims import to_str

    return {
        "text": str(a),
        "expr": to_str(a.expr),
        "lower": a.lower,
        "upper": a.upper,
        "why": a.why,
        "site": str(a.site) if a.site else None,
    }


def _int_range(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    lo, sep, hi = text.partition(":")
    try:
        if not sep:
            raise ValueError
        bounds = int(lo), int(hi)
    except ValueError:
        raise CliError(f"--int-range expects LO:HI (two integers), got {text!r}") from None
    if bounds[0] > bounds[1]:
        raise CliError(f"--int-range {text}: LO is greater than HI")
    return bounds


def _size(text: str, option: str) -> int:
    """A number of bytes: an integer, or one with a suffix K, M or G (KiB, MiB, GiB)."""
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:].upper(), 1)
    digits = text[:-1] if scale > 1 else text
    try:
        n = int(digits) * scale
    except ValueError:
        raise CliError(f"{option}: {text!r} is not a size (bytes, or a number with K, M or G)") from None
    if n <= 0:
        raise CliError(f"{option}: a size must be positive")
    return n


class _GivenBounds(TypedDict, total=False):
    """The keywords of ``verify.Bounds`` given on the command line."""

    run_seconds: float
    total_seconds: float
    max_memory: int
    max_external_bytes: int


def _verify_bounds(args: argparse.Namespace) -> Any:
    from infer.out.verify import Bounds

    given: _GivenBounds = {}  # what is not given keeps the default of Bounds, which checks them
    if args.run_seconds is not None:
        given["run_seconds"] = args.run_seconds
    if args.total_seconds is not None:
        given["total_seconds"] = args.total_seconds
    if args.max_memory is not None:
        given["max_memory"] = _size(args.max_memory, "--max-memory")
    if args.max_external_bytes is not None:
        given["max_external_bytes"] = _size(args.max_external_bytes, "--max-external-bytes")
    return Bounds(**given)


def cmd_verify(args: argparse.Namespace) -> int:
    from infer.out.verify import VerifyError, require_onnxruntime, verify

    if args.samples < 1:
        raise CliError("--samples must be at least 1")
    pins = _bindings(args.pin or [])
    int_range = _int_range(args.int_range)
    try:
        bounds = _verify_bounds(args)
        require_onnxruntime()
        result = _infer(args)
        report = verify(
            result,
            samples=args.samples,
            bind=pins,
            int_range=int_range,
            seed=args.seed,
            bounds=bounds,
            read_external_data=args.read_external_data,
        )
    except VerifyError as e:
        raise CliError(str(e)) from None
    if args.json:
        _emit({"model": args.model, **report.to_dict()})
    elif not args.quiet:
        _print_verify(report, args)
    if report.interrupted:
        say("onnx-infer: interrupted (Ctrl-C): the report covers the runs made before", file=sys.stderr)
        return EXIT_FAILED
    if report.error is not None:
        say(f"onnx-infer: cannot run the model: {report.error}", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_ERRORS if report.contradictions else EXIT_OK


def _print_verify(report: Any, args: argparse.Namespace) -> None:
    """The bindings that did not run, the skipped runs, the notes, each contradiction, the count."""
    from infer.out.verify import skip_reasons

    style = _style(args)
    for f in report.failed[:5]:
        say(style("yellow", f"did not run at {_binding_str(f.bindings)}: {f.reason}"))
    if len(report.failed) > 5:
        say(style("yellow", f"... and at {len(report.failed) - 5} more bindings (--json lists them)"))
    skipped_runs = [r for r in report.runs if r.skipped is not None]
    for r in skipped_runs[:5]:
        why = f"it violates {r.skipped}" if r.skipped_by == "assumption" else r.skipped
        say(style("yellow", f"skipped the run at {_binding_str({**r.bindings, **r.fresh})}: {why}"))
    if len(skipped_runs) > 5:
        say(style("yellow", f"... and {len(skipped_runs) - 5} more skipped runs (--json lists them)"))
    for note in report.notes:
        say(style("dim", f"note: {note}"))
    contradictions = report.contradictions
    if contradictions:
        say(style("red", f"contradictions ({len(contradictions)}):"))
        for c in contradictions:
            say("  ", style("bold", "[" + c.kind + "]"), f" {c.message}")
    if report.error is not None:
        return
    s = report.summary()
    verdict = style("red", f"{len(contradictions)} contradicted") if contradictions else "none contradicted"
    runs = f"{s['checked_runs']} run{'' if s['checked_runs'] == 1 else 's'}"
    skipped = f", {s['skipped_runs']} skipped{skip_reasons(s)}" if s["skipped_runs"] else ""
    say(
        f"{args.model}: {s['claims']} claims checked in {runs}{skipped}, {s['unchecked']} unchecked, ",
        verdict,
        f"; {s['declared_claims']} declared dims and types checked",
    )


def _binding_str(b: dict[str, int]) -> str:
    return "{" + ", ".join(f"{k}={v}" for k, v in b.items()) + "}"


def cmd_cost(args: argparse.Namespace) -> int:
    """What the shapes cost (docs/cost.md): totals, the peak, top nodes; ``--fit`` solves for one
    variable under a budget."""
    at = _bindings(args.at or [])
    if (args.fit is None) != (args.vary is None):
        raise CliError("--fit and --vary go together: --fit SIZE --vary NAME")
    budget = None
    if args.fit is not None:
        from infer.out.sizes import parse_size

        try:
            budget = parse_size(args.fit)
        except ValueError as e:
            raise CliError(f"--fit: {e}") from None
    result = _infer(args)
    cost = result.cost
    unknown = sorted(set(at) - set(cost.variables))
    if unknown:
        known = ", ".join(cost.variables) or "none"
        raise CliError(f"--bind: no input variable named {', '.join(unknown)} (the model has {known})")
    fit = None
    if budget is not None:
        try:
            fit = cost.fit(budget, args.vary, at)
        except ValueError as e:
            raise CliError(f"--vary: {e}") from None
    if args.json:
        _emit({**cost.to_json(at), **({"fit": fit.to_json()} if fit else {})})
        return EXIT_OK
    if args.quiet:
        return EXIT_OK
    from infer.out.costview import sections

    style = _style(args)
    for title, rows in sections(cost, at, args.top):
        print(style("bold", title))
        print(table(rows, style))
        print()
    for note in cost.not_expressed:
        print(f"not expressed: {note}")
    worst, how = cost.worst()
    print(f"worst case over the input domain: {_peak_text(worst)} ({how})")
    if fit is not None:
        print(str(fit))
    return EXIT_OK


def _peak_text(ev: Any) -> str:
    if ev is None:
        return "not computed"
    return f"{ev.peak} bytes at {_binding_str(ev.bindings)}" if ev.peak is not None else f"unknown ({ev.why})"


def cmd_ops(args: argparse.Namespace) -> int:
    from infer.out.conformance import markdown, statement

    if args.markdown:
        sys.stdout.write(markdown())
        return EXIT_OK
    data = statement(args.domain)
    if args.status:
        data["operators"] = [r for r in data["operators"] if r["status"] == args.status]
    if args.json:
        _emit(data)
        return EXIT_OK
    if args.quiet:
        return EXIT_OK
    style = _style(args)
    rows = [["domain", "operator", "since", "status", "detail"]]
    rows += [
        [r["domain"] or "ai.onnx", r["op_type"], str(r["since"]), r["status"], r["detail"]] for r in data["operators"]
    ]
    width = shutil.get_terminal_size((100, 24)).columns if _isatty(sys.stdout) else None
    say(table(rows, style, [None, None, None, lambda s: STATUS_COLOR.get(s)], width))
    say(data["summary"])
    return EXIT_OK


# -- the parser ----------------------------------------------------------------------------------

EPILOG = "exit status: 0 fine, 1 errors found in the model, 2 could not read the model or run"


def _common_options(sp: argparse.ArgumentParser, infer_opts: bool = True) -> None:
    """The options every verb takes, and (``infer_opts``) those of the verbs that infer."""
    sp.add_argument("--json", action="store_true", help="machine-readable output on stdout (nothing else there)")
    sp.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors; no progress bar")
    sp.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour: auto (default) when stdout is a terminal and NO_COLOR is unset",
    )
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
        sp.add_argument(
            "--read-external-data",
            action="store_true",
            help="read small integer initializers kept in external files, after the Clause 15.3 "
            "checks (off: external data is never read)",
        )
        _external_data_dir_option(sp)
        sp.add_argument(
            "--limit",
            action="append",
            metavar="NAME=VALUE",
            help=f"override a resource limit (repeatable): {', '.join(LIMIT_NAMES)} (docs/limits.md)",
        )


def _external_data_dir_option(sp: argparse.ArgumentParser) -> None:
    sp.add_argument(
        "--external-data-dir", metavar="DIR", help="resolve external data against DIR instead of the model's directory"
    )


def _verify_options(v: argparse.ArgumentParser) -> None:
    """``verify``'s options: runs and inputs, bounds (docs/limits.md#verify), external data."""
    v.add_argument("model", help="path of the .onnx model")
    v.add_argument("--samples", type=int, default=5, metavar="K", help="runs to make (default 5)")
    v.add_argument(
        "--bind",
        action="append",
        dest="pin",
        metavar="NAME=INT",
        help="run with the input variable NAME at INT (repeatable); inference stays general",
    )
    v.add_argument("--int-range", metavar="LO:HI", help="values of integer inputs, LO to HI inclusive (default 0:1)")
    v.add_argument("--seed", type=int, default=0, metavar="S", help="seed of the random inputs (default 0)")
    v.add_argument(
        "--run-seconds", type=float, metavar="S", help="stop a run past S seconds and skip it (default 60; 0: no limit)"
    )
    v.add_argument(
        "--total-seconds",
        type=float,
        metavar="S",
        help="stop verifying past S seconds, runs included (default 600; 0: no limit)",
    )
    v.add_argument(
        "--max-memory",
        metavar="SIZE",
        help="skip a run whose values are estimated past SIZE bytes (K, M, G suffixes; "
        "default a quarter of physical memory)",
    )
    v.add_argument(
        "--read-external-data",
        action="store_true",
        help="read the tensors the model keeps in external files, after the Clause 15.3 checks "
        "(off: a model with external data is not run)",
    )
    _external_data_dir_option(v)
    v.add_argument(
        "--max-external-bytes",
        metavar="SIZE",
        help="refuse external data past SIZE bytes in all, before reading any (default 512M)",
    )
    _common_options(v, infer_opts=False)
    v.epilog = (
        "exit status: 0 no claim contradicted, 1 a claim contradicted (each is listed), 2 onnxruntime "
        "missing, the model cannot run, or interrupted"
    )


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="onnx-infer",
        description="Shape and type inference for ONNX models with symbolic dimensions.",
        epilog=EPILOG,
    )
    p.add_argument("--version", action="version", version=f"onnx-infer {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def verb(name: str, help: str, func: Callable[[argparse.Namespace], int]) -> argparse.ArgumentParser:
        sp = sub.add_parser(name, help=help, description=help[0].upper() + help[1:] + ".", epilog=EPILOG)
        sp.set_defaults(func=func)
        return sp

    a = verb("annotate", "write inferred value_info into a copy of the model", cmd_annotate)
    a.add_argument("model", help="path of the .onnx model")
    a.add_argument("-o", "--output", help="where to write (default: MODEL.inferred.onnx)")
    a.add_argument("--in-place", action="store_true", help="overwrite the input model")
    a.add_argument("--force", action="store_true", help="replace an existing default output file")
    _common_options(a)

    c = verb("check", "validate the model and report every problem found", cmd_check)
    c.add_argument("model", help="path of the .onnx model")
    c.add_argument("-v", "--verbose", action="store_true", help="also list informational notes")
    _common_options(c)

    dm = verb("domain", "which sizes of its inputs the model accepts (docs/domain.md)", cmd_domain)
    dm.add_argument("model", help="path of the .onnx model")
    dm.add_argument(
        "--near", action="append", metavar="NAME=INT", help="also give a valid binding near these sizes (repeatable)"
    )
    _common_options(dm)

    e = verb("explain", "explain why a value's shape is (partly) unknown", cmd_explain)
    e.add_argument("model", help="path of the .onnx model")
    e.add_argument("value", help="name of the value to explain")
    e.add_argument("--dim", type=int, metavar="K", help="only axis K")
    e.add_argument("--graph", metavar="PATH", help="graph path of a value inside a subgraph (e.g. main/3:body)")
    _common_options(e)

    r = verb("report", "write one self-contained HTML page about the model", cmd_report)
    r.add_argument("model", help="path of the .onnx model")
    r.add_argument("-o", "--output", help="where to write (default: MODEL.report.html)")
    r.add_argument("--force", action="store_true", help="replace an existing default output file")
    r.add_argument("--title", help="the page's title (default: the model's file name)")
    r.add_argument(
        "--cost-bind",
        action="append",
        metavar="NAME=INT",
        help="plot the live memory with the input variable NAME at INT (repeatable; inference stays general, "
        "as `cost --bind`); the others at the greatest value the input domain allows",
    )
    _common_options(r)

    v = verb("verify", "check inference's claims against onnxruntime on random inputs", cmd_verify)
    _verify_options(v)

    co = verb("cost", "what the shapes cost: bytes, work, weights and peak live memory (docs/cost.md)", cmd_cost)
    co.add_argument("model", help="path of the .onnx model")
    co.add_argument(
        "--bind",
        action="append",
        dest="at",
        metavar="NAME=INT",
        help="evaluate with the input variable NAME at INT (repeatable); inference stays general",
    )
    co.add_argument("--fit", metavar="SIZE", help="a memory budget (K, M, G suffixes): the largest --vary that fits")
    co.add_argument("--vary", metavar="NAME", help="the variable --fit solves for, the others bound with --bind")
    co.add_argument("--top", type=int, default=10, metavar="K", help="nodes listed per table (default 10)")
    _common_options(co, infer_opts=False)

    o = verb("ops", "the conformance statement: what is supported, per operator version", cmd_ops)
    o.add_argument("--domain", help="only this domain ('' or ai.onnx for the default)")
    o.add_argument("--status", choices=("rule", "function", "unsupported", "no-rule"), help="only this status")
    o.add_argument("--markdown", action="store_true", help="the whole statement as Markdown (docs/conformance.md)")
    _common_options(o, infer_opts=False)
    return p


def _joined(argv: Sequence[str]) -> list[str]:
    """``argv`` with ``--int-range -5:5`` read as ``--int-range=-5:5``: argparse takes a value that
    starts with ``-`` and is not a plain negative number for an option, so a negative LO would be
    refused as a missing argument."""
    out: list[str] = []
    args = iter(argv)
    for a in args:
        out.append(a)
        if a == "--int-range":
            value = next(args, None)
            if value is not None and value[:1] == "-" and value[1:2].isdigit():  # a negative LO
                out[-1] = f"--int-range={value}"
            elif value is not None:
                out.append(value)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """``onnx-infer ARGS``: the exit status (the console script, ``infer.start.main``, calls
    this once the package is imported)."""
    try:
        args = build_parser().parse_args(_joined(sys.argv[1:] if argv is None else argv))
        run: Callable[[argparse.Namespace], int] = args.func  # the subcommand's handler (set_defaults)
        return run(args)
    except (ModelLoadError, CliError) as e:
        say(f"onnx-infer: {e}", file=sys.stderr)
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
    except BrokenPipeError:  # `onnx-infer ops | head`: the reader left; nothing more to say
        try:  # the interpreter flushes stdout on exit: give it somewhere harmless to flush to
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except OSError:
            pass
        return EXIT_OK
    except Exception as e:  # a bug of ours: still one line, never a traceback
        say(
            f"onnx-infer: internal error: {type(e).__name__}: {e} (set ONNX_INFER_DEBUG=1 for details)", file=sys.stderr
        )
        if os.environ.get("ONNX_INFER_DEBUG"):
            raise
        return EXIT_FAILED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
