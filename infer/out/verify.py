"""Checking inference's claims against onnxruntime on the user's own model.

``check_run`` compares every claim of an ``InferenceResult`` about the main graph's values
(element type, rank, each dim, known contents element by element, and the bytes ``result.cost``
gives each) with the arrays one run produced. ``verify`` makes those runs: it picks bindings of
the declared dimension variables, builds random inputs, runs the model in onnxruntime with every
intermediate value exposed, and checks each run, the model's own declared types included. See
docs/verify.md.

onnxruntime is imported only when a model is run (``pip install 'onnx-infer[verify]'``).
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import onnx
from onnx import TensorProto, TypeProto, helper

from infer.core import dims as D
from infer.core import types as T
from infer.core.scopes import MAIN
from infer.load.external import ExternalDataError, external_tensors, read_all
from infer.out.runguard import Estimate, Guard, Stopped, default_max_memory, estimate, size_str

if TYPE_CHECKING:  # pragma: no cover
    from pathlib import Path

    from infer.check.domain import Domain
    from infer.core.dims import Dim
    from infer.core.dimscope import Assumption
    from infer.core.dimtable import DimTable
    from infer.core.scopes import GraphRecord
    from infer.out.cost import Cost


class InferenceResult(Protocol):
    """What verification reads of ``infer.InferenceResult`` (which calls it, as ``verify``)."""

    @property
    def dims(self) -> DimTable: ...
    @property
    def assumptions(self) -> list[Assumption]: ...
    @property
    def graphs(self) -> Mapping[str, GraphRecord]: ...
    @property
    def source(self) -> onnx.ModelProto: ...
    @property
    def source_annotated(self) -> bool: ...
    @property
    def directory(self) -> Path | None: ...
    @property
    def domain(self) -> Domain: ...
    @property
    def input_variables(self) -> list[str]: ...
    def shape_of(self, name: str, graph: str | None = None) -> tuple[Dim, ...] | None: ...
    @property
    def cost(self) -> Cost: ...


INSTALL_HINT = "pip install 'onnx-infer[verify]'"
KINDS = ("element-type", "rank", "dim", "contents", "fresh-variable", "bytes", "declared-type")

# Tolerances (rtol, atol) for float contents: inference computes in Python floats (double), the
# runtime in the element type, so a chain of operations differs by a few units in the last place.
FLOAT_TOLERANCE: dict[str, tuple[float, float]] = {
    "float16": (2e-3, 1e-3),
    "float32": (1e-5, 1e-6),
    "float64": (1e-9, 1e-12),
}
_DEFAULT_TOLERANCE = (1e-5, 1e-6)

# Extents tried, one list shared by every variable: the i-th run gives variable j the entry
# (i + j) % len, so the variables of one run differ, and small (1, 2, 3), odd and even larger
# extents all come up within five runs.
SCHEDULE = (2, 3, 1, 8, 5, 12, 7, 4, 13, 6, 16, 9)
DEFAULT_INT_RANGE = (0, 1)  # a valid token id, mask and token type id in typical models
MAX_EXTENT = 1 << 16  # no binding verify picks goes past this
MAX_INPUT_ELEMENTS = 1 << 22  # nor makes inputs of more elements than this, together
RUN_SECONDS = 60.0  # the default limit of one onnxruntime run
TOTAL_SECONDS = 600.0  # and of one verify, its runs together
MAX_EXTERNAL_BYTES = 512 << 20  # external data read in for the runs (held some five times over)
SEED_MODULUS = 1 << 64  # a seed is taken modulo this (numpy's generator wants one >= 0)
_SCALE_STEPS = 3  # a binding that does not run is retried at 4, 16 and 64 times its extents


class VerifyError(Exception):
    """A one-line reason why verification could not start (onnxruntime missing, bad options)."""


def require_onnxruntime() -> Any:
    """The onnxruntime module; ``VerifyError`` naming the extra to install when it is missing."""
    try:
        import onnxruntime as ort
    except ImportError as e:
        cause = e.__cause__ or e.__context__
        if isinstance(cause, KeyboardInterrupt):
            raise cause from None  # Ctrl-C during the import (an extension module turns it into this)
        if isinstance(e, ModuleNotFoundError) and e.name == "onnxruntime":
            raise VerifyError(f"onnxruntime is not installed: {INSTALL_HINT}") from None
        # Installed but broken (a missing shared library, a mismatched numpy): say what failed.
        raise VerifyError(f"onnxruntime is installed but could not be imported: {e}") from None
    ort.set_default_logger_severity(4)
    return ort


# -- what one run says ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Contradiction:
    """One claim the runtime contradicts."""

    value: str
    graph: str
    kind: str  # one of KINDS
    index: int | None  # the axis of a dim, the flat position of an element, else None
    claimed: str  # the claimed type, rank, extent or element, as written by inference
    bindings: dict[str, int]  # the declared variables' values and the fresh ones found in the run
    actual: Any  # what the runtime gave (JSON-ready: int, float, bool, str or a list)
    message: str  # one line
    item: int | None = None  # the element of a sequence the claim was checked on

    def to_dict(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "graph": self.graph,
            "kind": self.kind,
            "index": self.index,
            "item": self.item,
            "claimed": self.claimed,
            "bindings": dict(self.bindings),
            "actual": _jsonable(self.actual),
            "message": self.message,
        }

    def __str__(self) -> str:
        return self.message


@dataclass
class RunCheck:
    """The verdict on one run: how many claims were compared, and which the runtime contradicts."""

    bindings: dict[str, int]  # the declared variables' values
    fresh: dict[str, int] = field(default_factory=dict)  # other variables, bound to the run's extents
    claims: int = 0  # claims of inference compared with the run
    unchecked: int = 0  # claims that still mention a variable the run did not bind
    contradictions: list[Contradiction] = field(default_factory=list)
    skipped: str | None = None  # the assumption the run violates, or the bound it passed; nothing checked then
    skipped_by: str | None = None  # "assumption", "time" or "memory"
    unobserved: int = 0  # values with claims that the run did not return (no numpy type)
    declared_claims: int = 0  # the model's own declared dims and types compared (``verify``)
    unchecked_claims: list[str] = field(default_factory=list)  # which, for a reader
    estimated_bytes: int | None = None  # the values' memory at the binding, as far as their shapes say
    unsized_values: int = 0  # main-graph values of a size not known before the run

    @property
    def ok(self) -> bool:
        return not self.contradictions

    def to_dict(self) -> dict[str, Any]:
        return {
            "bindings": dict(self.bindings),
            "fresh": dict(self.fresh),
            "skipped": self.skipped,
            "skipped_by": self.skipped_by,
            "estimated_bytes": self.estimated_bytes,
            "unsized_values": self.unsized_values,
            "claims": self.claims,
            "declared_claims": self.declared_claims,
            "unchecked": self.unchecked,
            "unchecked_claims": list(self.unchecked_claims),
            "unobserved": self.unobserved,
            "contradictions": [c.to_dict() for c in self.contradictions],
        }


def _jsonable(x: Any) -> Any:
    if isinstance(x, (np.generic,)):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    if isinstance(x, (list, tuple)):
        return [_jsonable(e) for e in x]
    if isinstance(x, bytes):
        return x.decode("utf-8", errors="replace")
    if x is None or isinstance(x, (int, float, bool, str)):
        return x
    return str(x)


def _fmt_bindings(b: Mapping[str, int]) -> str:
    return "{" + ", ".join(f"{k}={v}" for k, v in b.items()) + "}"


# -- comparing one run ---------------------------------------------------------------------------


@dataclass(slots=True)
class _Claim:
    """A claim that mentions variables: a dim, or an element of known contents."""

    value: str
    kind: str  # "dim" | "contents"
    index: int
    item: int | None
    expr: Any  # a symbolic extent (``dims.Expr``), or an element with an ``evaluate(bindings)`` method
    actual: Any
    tolerance: tuple[float, float] | None  # float contents


_MISSING = object()


def _elem_of(arr: np.ndarray) -> int | None:
    if arr.dtype.kind in "OUS":
        return TensorProto.STRING
    try:
        return helper.np_dtype_to_tensor_dtype(arr.dtype)
    except (KeyError, ValueError, TypeError):
        return None


def _tolerance(arr: np.ndarray) -> tuple[float, float] | None:
    if arr.dtype.kind != "f":
        return None
    return FLOAT_TOLERANCE.get(arr.dtype.name, _DEFAULT_TOLERANCE)


def _py(x: Any) -> Any:
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, bytes):
        return x.decode("utf-8", errors="replace")
    return x


def _same(claimed: Any, actual: Any, tolerance: tuple[float, float] | None) -> bool:
    if isinstance(claimed, str) or isinstance(actual, str):
        return bool(claimed == actual)
    if tolerance is not None or isinstance(actual, float) or isinstance(claimed, float):
        rtol, atol = tolerance or _DEFAULT_TOLERANCE
        a, b = float(claimed), float(actual)
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        if math.isinf(a) or math.isinf(b):
            return a == b
        return abs(a - b) <= atol + rtol * abs(b)
    return bool(claimed == actual)  # Python scalars (_py), whose == is a bool


def _is_symbolic_elem(k: Any) -> bool:
    return D.is_symbolic(k) or callable(getattr(k, "evaluate", None))


def _elem_names(k: Any) -> frozenset[str] | None:
    """Variables an element mentions; ``None`` when the element does not say."""
    if D.is_symbolic(k):
        return D.free_names(k)
    num = getattr(k, "num", None)  # a float-domain element: an integer numerator over the variables
    if num is not None and (isinstance(num, int) or D.is_symbolic(num)):
        return D.free_names(num)
    names = getattr(k, "free_names", None)
    if names is not None:
        return frozenset(names() if callable(names) else names)
    return None


def _claim_names(c: _Claim) -> frozenset[str] | None:
    if c.kind == "dim":
        return D.free_names(c.expr)
    return _elem_names(c.expr)


def _evaluate(c: _Claim, full: Mapping[str, int], cache: dict[Any, Any]) -> Any:
    """The claim's value at ``full``: an int (dims, integer elements), a float, or ``None``."""
    k = c.expr
    if D.is_symbolic(k):
        try:
            v = cache[k]
        except KeyError:
            v = cache[k] = D.evaluate(k, full)
        return v if isinstance(v, int) else None
    try:
        v = k.evaluate(full)
    except Exception:  # an element that cannot be evaluated at this binding is unchecked
        return None
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _bare(c: _Claim) -> str | None:
    """The variable a claim is exactly (a dim ``N``, an element ``N``), else ``None``."""
    k = c.expr
    if D.is_variable(k):
        return D.variable_name(k)
    num = getattr(k, "num", None)
    if D.is_variable(num) and getattr(k, "den", None) == 1 and getattr(k, "evaluate", None):
        # A float element standing for one variable: exact while the float holds the integer.
        bits = getattr(k, "rounded", 0) or 53
        if isinstance(c.actual, float) and c.actual.is_integer() and abs(c.actual) < 2**bits:
            return D.variable_name(num)
    return None


def _integer_actual(c: _Claim) -> int | None:
    a = c.actual
    if isinstance(a, bool):
        return None
    if isinstance(a, int):
        return a
    if isinstance(a, float) and a.is_integer():
        return int(a)
    return None


def _solve(c: _Claim, name: str, full: Mapping[str, int]) -> tuple[str, int | None]:
    """Solve the claim for its one unbound variable: ("ok", x), ("none", None) when no extent
    satisfies it (a contradiction), ("unsolved", None) when it is not linear in ``name``."""
    k = c.expr
    if D.is_symbolic(k):
        expr = k
        target = _integer_actual(c)
    else:
        num, den, rounded = getattr(k, "num", None), getattr(k, "den", None), getattr(k, "rounded", 0)
        if not D.is_symbolic(num) or den != 1 or not isinstance(c.actual, float):
            return "unsolved", None
        if rounded and abs(c.actual) >= 2**rounded:
            return "unsolved", None  # the float may have rounded the integer
        expr, target = num, _integer_actual(c)
    if target is None:
        return ("none", None) if D.is_symbolic(k) and c.kind == "dim" else ("unsolved", None)
    bound = {n: v for n, v in full.items() if n != name}
    e = D.evaluate(expr, bound)
    if isinstance(e, int):
        return "unsolved", None
    linear = D.linear_in(e, name)
    if linear is None:
        return "unsolved", None
    coeff, const = linear
    if not isinstance(const, int):  # a term in other unbound names
        return "unsolved", None
    q, r = divmod(target - const, coeff)
    if r or q < 0:
        return "none", None
    return "ok", int(q)


@dataclass(frozen=True, slots=True)
class _Found:
    """A contradiction before the run's bindings are known."""

    value: str
    kind: str
    index: int | None
    item: int | None
    claimed: str
    actual: Any
    shown: str | None = None  # the claim with its value, where that says more (``seq + 1 = 8``)
    why: str | None = None

    def at(self, full: Mapping[str, int]) -> Contradiction:
        item = f" item {self.item}" if self.item is not None else ""
        where = {
            "element-type": " element type",
            "rank": " rank",
            "dim": f" dim {self.index}",
            "fresh-variable": f" dim {self.index}",
            "contents": f" element {self.index}" if self.index is not None else " contents",
            "bytes": " bytes",
        }[self.kind]
        text = f"`{self.value}`{item}{where}: claimed {self.shown or self.claimed} at {_fmt_bindings(full)}, "
        text += f"runtime {_jsonable(self.actual)}" + (f" ({self.why})" if self.why else "")
        return Contradiction(
            self.value, MAIN, self.kind, self.index, self.claimed, dict(full), self.actual, text, self.item
        )


class _RunChecker:
    """Compares one result with one run (``check_run``)."""

    def __init__(self, result: InferenceResult, bindings: Mapping[str, int], observed: Mapping[str, Any]):
        self.result = result
        self.given = {str(k): int(v) for k, v in bindings.items()}
        self.observed = observed
        self.out = RunCheck(dict(self.given))
        self.claims: list[_Claim] = []  # claims that mention variables
        self.direct: list[_Found] = []  # contradicted claims that mention none
        self.direct_claims = 0
        self.sizes: list[tuple[str, int]] = []  # each tensor value fetched, with its bytes in the run

    # -- collecting the claims of every value ------------------------------------------------

    def collect(self) -> None:
        rec = self.result.graphs[MAIN]
        for name in rec.producers:
            v = rec.values[name]
            obs = self.observed.get(name, _MISSING)
            if obs is _MISSING:
                if not isinstance(v.type, T.UnknownType):
                    self.out.unobserved += 1
                continue
            self._value(name, v.type, v.known, obs, None)

    def _compare(self, same: bool, found: _Found) -> None:
        self.direct_claims += 1
        if not same:
            self.direct.append(found)

    def _value(self, name: str, t: T.Type, known: Any, obs: Any, item: int | None) -> None:
        if isinstance(t, T.UnknownType):
            return
        if isinstance(t, T.OptionalType):
            if obs is not None:
                self._value(name, t.elem, None, obs, item)
            return
        if isinstance(t, T.SequenceType):
            self._compare(isinstance(obs, list), _Found(name, "element-type", None, item, str(t), _kind_of(obs)))
            for i, element in enumerate(obs if isinstance(obs, list) else ()):
                self._value(name, t.elem, None, element, i)
            return
        if isinstance(t, T.MapType):
            self._map(name, t, obs)
            return
        if not isinstance(t, T.TensorType):
            return  # sparse and opaque values: onnxruntime does not hand them to Python as arrays
        if isinstance(obs, (list, dict)) or obs is None:
            self._compare(False, _Found(name, "element-type", None, item, str(t), _kind_of(obs)))
            return
        self._tensor(name, t, known, np.asarray(obs), item)

    def _map(self, name: str, t: T.MapType, obs: Any) -> None:
        self._compare(isinstance(obs, dict), _Found(name, "element-type", None, None, str(t), _kind_of(obs)))
        if not isinstance(obs, dict):
            return
        for key, val in obs.items():
            if t.key is not None:
                fits = (t.key == TensorProto.STRING) == isinstance(key, str)
                self._compare(fits, _Found(name, "element-type", None, None, f"keys of {t}", f"key {key!r}"))
            vt = t.value
            if isinstance(val, (int, float)) and isinstance(vt, T.TensorType):
                # Map values come back as Python scalars: their element width is not observable.
                vt = T.TensorType(None, vt.shape)
            self._value(name, vt, None, val if isinstance(val, (list, dict)) else np.asarray(val), None)

    def _tensor(self, name: str, t: T.TensorType, known: Any, arr: np.ndarray, item: int | None) -> None:
        if item is None:
            self.sizes.append((name, int(arr.nbytes)))
        if t.elem is not None:
            claimed = T.elem_name(t.elem)
            self._compare(_elem_of(arr) == t.elem, _Found(name, "element-type", None, item, claimed, str(arr.dtype)))
        if t.shape is None:
            return
        shape = [int(n) for n in arr.shape]
        if len(t.shape) != arr.ndim:
            self._compare(False, _Found(name, "rank", None, item, str(len(t.shape)), shape, f"{len(t.shape)} ({t})"))
            return
        self.direct_claims += 1  # the rank
        for axis, (d, real) in enumerate(zip(t.shape, shape)):
            if isinstance(d, int):
                self._compare(d == real, _Found(name, "dim", axis, item, str(d), real))
            elif d is not None:
                self.claims.append(_Claim(name, "dim", axis, item, d, real, None))
        if known is None:
            return
        elems = known.elems
        if len(elems) != arr.size:
            self._compare(False, _Found(name, "contents", None, item, f"{len(elems)} elements", int(arr.size)))
            return
        tol = _tolerance(arr)
        for i, (k, real) in enumerate(zip(elems, arr.reshape(-1).tolist())):
            if k is None:
                continue
            real = _py(real)
            if _is_symbolic_elem(k):
                self.claims.append(_Claim(name, "contents", i, item, k, real, tol))
            else:
                self._compare(_same(k, real, tol), _Found(name, "contents", i, item, _elem_str(k), real))

    # -- binding the variables the run determines --------------------------------------------

    def bind(self) -> tuple[dict[str, int], dict[int, str], list[tuple[_Claim, str]]]:
        """Fresh values, the claims that fixed them (claim id -> variable), and claims no
        extent satisfies (with the variable solved for)."""
        fresh: dict[str, int] = {}
        defining: dict[int, str] = {}
        impossible: list[tuple[_Claim, str]] = []
        given = self.given

        def unbound(n: str) -> bool:
            return n not in given and n not in fresh

        # 1. bare occurrences as an extent; 2. bare occurrences in known contents
        for kind in ("dim", "contents"):
            for c in self.claims:
                if c.kind != kind:
                    continue
                n = _bare(c)
                if n is None or not unbound(n):
                    continue
                x = c.actual if kind == "dim" else _integer_actual(c)
                if x is None or x < 0:
                    continue
                fresh[n] = int(x)
                defining[id(c)] = n
        # 3. claims with one variable left, linear in it, until nothing more is found
        defined = [v for v in self.result.dims if v.definition is not None]
        done: set[int] = set(defining)
        progress = True
        while progress:
            progress = False
            full = {**given, **fresh}
            for var in defined:
                if unbound(var.name) and D.free_names(var.definition) <= full.keys():
                    value = D.evaluate(var.definition, full)
                    if isinstance(value, int):
                        fresh[var.name] = full[var.name] = value
                        progress = True
            for c in self.claims:
                if id(c) in done:
                    continue
                names = _claim_names(c)
                if names is None:
                    continue
                left = [n for n in names if unbound(n)]
                if len(left) != 1:
                    continue
                status, x = _solve(c, left[0], full)
                if status == "unsolved":
                    continue
                done.add(id(c))
                if status == "none":
                    impossible.append((c, left[0]))
                    continue
                fresh[left[0]] = full[left[0]] = int(x)  # type: ignore[arg-type]
                defining[id(c)] = left[0]
                progress = True
        return fresh, defining, impossible

    # -- the verdict ---------------------------------------------------------------------------

    def run(self) -> RunCheck:
        out = self.out
        self.collect()
        fresh, defining, impossible = self.bind()
        out.fresh = fresh
        full = {**self.given, **fresh}
        for a in self.result.assumptions:
            if a.holds(full) is False:
                out.skipped, out.skipped_by = str(a), "assumption"
                return out
        found = list(self.direct)
        claims = self.direct_claims
        for c, n in impossible:
            claims += 1
            found.append(self._found(c, None, f"no extent of `{n}` makes it hold"))
        source = {d: c for c in self.claims if (d := defining.get(id(c))) is not None}
        settled = set(defining) | {id(c) for c, _ in impossible}
        cache: dict[Any, Any] = {}
        for c in self.claims:
            if id(c) in settled:
                continue
            names = _claim_names(c)
            value = _evaluate(c, full, cache) if names is None or names <= full.keys() else None
            if value is None:
                out.unchecked += 1
                out.unchecked_claims.append(self._describe(c))
                continue
            claims += 1
            if _same(value, c.actual, c.tolerance):
                continue
            bare = _bare(c) if c.kind == "dim" else None
            if bare is not None and bare in fresh:
                s = source[bare]
                why = f"`{bare}` is {fresh[bare]} at `{s.value}` {'dim' if s.kind == 'dim' else 'element'} {s.index}"
                found.append(self._found(c, value, why, "fresh-variable"))
            else:
                found.append(self._found(c, value, None))
        claims += self._sizes(full, found)
        out.claims = claims
        out.contradictions = [f.at(full) for f in found]
        return out

    def _sizes(self, full: Mapping[str, int], found: list[_Found]) -> int:
        """Each fetched tensor's claimed bytes (``result.cost``) against the array's ``nbytes``:
        the claims compared (a value of unknown size claims nothing; one whose term mentions a
        variable the run did not bind is unchecked)."""
        cost, claims = self.result.cost, 0
        for name, nbytes in self.sizes:
            amount = cost.bytes_of(name)
            if amount.term is None:
                continue
            value = amount.at(full)
            if value is None:
                self.out.unchecked += 1
                self.out.unchecked_claims.append(f"`{name}` bytes: {amount}")
                continue
            claims += 1
            if value != nbytes:
                shown = None if type(amount.term) is int else f"{amount} = {value}"
                found.append(_Found(name, "bytes", None, None, str(amount), nbytes, shown))
        return claims

    @staticmethod
    def _describe(c: _Claim) -> str:
        item = f" item {c.item}" if c.item is not None else ""
        return f"`{c.value}`{item} {'dim' if c.kind == 'dim' else 'element'} {c.index}: {_elem_str(c.expr)}"

    @staticmethod
    def _found(c: _Claim, value: Any, why: str | None, kind: str | None = None) -> _Found:
        claimed = _elem_str(c.expr)
        shown = None if value is None or claimed == _elem_str(value) else f"{claimed} = {_elem_str(value)}"
        return _Found(c.value, kind or c.kind, c.index, c.item, claimed, c.actual, shown, why)


def _elem_str(k: Any) -> str:
    if D.is_symbolic(k):
        return D.to_str(k)
    if isinstance(k, float) and k.is_integer() and abs(k) < 1e16:
        return repr(k)
    return str(k)


def _kind_of(obs: Any) -> str:
    if obs is None:
        return "missing optional"
    if isinstance(obs, list):
        return "sequence"
    if isinstance(obs, dict):
        return "map"
    return "tensor"


def check_run(result: InferenceResult, bindings: Mapping[str, int], observed: Mapping[str, Any]) -> RunCheck:
    """Compare every claim of ``result`` about the main graph's values with one run.

    ``bindings`` gives the declared variables' values in the run, ``observed`` the runtime's
    value of each node output it returned (arrays; lists for sequences, dicts for maps, ``None``
    for an empty optional). Every other variable (fresh, or declared but not bound) is bound to
    the extent it takes in the run: from its bare occurrences as an extent, then in known
    contents, then by solving claims linear in it. A claim that still mentions an unbound
    variable is counted in ``unchecked``. A run at which one of ``result.assumptions`` fails is
    ``skipped`` and checks nothing.
    """
    return _RunChecker(result, bindings, observed).run()


# -- the model's own declarations ----------------------------------------------------------------


def check_declared(
    model: onnx.ModelProto, bindings: Mapping[str, int], observed: Mapping[str, Any]
) -> tuple[int, list[Contradiction]]:
    """Compare the types the main graph declares (outputs and ``value_info``) with one run.

    A ``dim_param`` not in ``bindings`` takes its first declared occurrence's extent; every other
    occurrence of that name must agree (one name, one extent: Clause 6.5.2).
    """
    full = dict(bindings)
    seen: dict[str, str] = {}
    claims = 0
    found: list[Contradiction] = []
    g = model.graph
    for vi in [*g.output, *g.value_info]:
        if vi.name not in observed or vi.type.WhichOneof("value") != "tensor_type":
            continue
        obs = observed[vi.name]
        if isinstance(obs, (list, dict)) or obs is None:
            continue
        claims += _check_declared_tensor(vi, np.asarray(obs), full, seen, found)
    return claims, found


def _check_declared_tensor(
    vi: onnx.ValueInfoProto, arr: np.ndarray, full: dict[str, int], seen: dict[str, str], found: list[Contradiction]
) -> int:
    """Compare the tensor type ``vi`` declares with its value ``arr`` in the run; the claims it makes.

    Contradictions are added to ``found``; a ``dim_param`` first met here is bound in ``full``
    to its extent, and ``seen`` says where (for the message of a later occurrence that differs).
    """
    tt = vi.type.tensor_type
    declared = _declared_str(vi.type)
    claims = 0
    if tt.elem_type:
        claims += 1
        if _elem_of(arr) != tt.elem_type:
            text = f"the runtime gives {arr.dtype}"
            found.append(_clash(vi.name, declared, full, None, T.elem_name(tt.elem_type), str(arr.dtype), text))
    if not tt.HasField("shape"):
        return claims
    claims += 1
    if len(tt.shape.dim) != arr.ndim:
        text = f"the runtime gives shape {list(arr.shape)}"
        found.append(_clash(vi.name, declared, full, None, str(len(tt.shape.dim)), list(arr.shape), text))
        return claims
    for axis, (d, real) in enumerate(zip(tt.shape.dim, arr.shape)):
        kind = d.WhichOneof("value")
        if kind == "dim_value":
            claims += 1
            if d.dim_value != real:
                text = f"axis {axis} is {real}"
                found.append(_clash(vi.name, declared, full, axis, str(d.dim_value), int(real), text))
        elif kind == "dim_param" and d.dim_param:
            name = d.dim_param
            if name not in full:
                full[name] = int(real)
                seen[name] = f"`{vi.name}` axis {axis}"
                continue
            claims += 1
            if full[name] != real:
                origin = f" (it is {full[name]} at {seen[name]})" if name in seen else ""
                text = f"axis {axis} is {real}{origin}"
                found.append(_clash(vi.name, declared, full, axis, name, int(real), text))
    return claims


def _clash(
    value: str, declared: str, full: Mapping[str, int], index: int | None, claimed: str, actual: Any, text: str
) -> Contradiction:
    """The run contradicts the type ``value`` is declared (``declared``): ``text`` says how.

    ``full`` is copied as it is now: later values bind more ``dim_param`` names into it.
    """
    message = f"`{value}` is declared {declared} but {text} at {_fmt_bindings(full)}"
    return Contradiction(value, MAIN, "declared-type", index, claimed, dict(full), actual, message)


def _declared_str(tp: TypeProto) -> str:
    tt = tp.tensor_type
    elem = T.elem_name(tt.elem_type) if tt.elem_type else "?"
    if not tt.HasField("shape"):
        return elem
    dims = [str(d.dim_value) if d.HasField("dim_value") else (d.dim_param or "?") for d in tt.shape.dim]
    return f"{elem}[{','.join(dims)}]"


# -- running a model -----------------------------------------------------------------------------

# Element types onnxruntime's Python API cannot return as numpy arrays: fetching one fails the run.
_NOT_FETCHABLE = re.compile(r"bfloat16|float8|float4|int4|int2|uint2")


def fetchable(type_text: str | None) -> bool:
    """Can onnxruntime's Python API return an output of this type (its ``NodeArg.type``, such
    as ``tensor(bfloat16)``) as a numpy array?"""
    return not _NOT_FETCHABLE.search(type_text or "")


def exposed(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of ``model`` for running: every main-graph node output is a graph output, and the
    main graph's declared types of outputs and ``value_info`` are dropped (they are checked
    against the run, not imposed on it)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    del g.value_info[:]
    inputs = {i.name for i in g.input} | {t.name for t in g.initializer}
    existing = set()
    for o in g.output:
        existing.add(o.name)
        if o.name not in inputs:
            o.ClearField("type")
    for n in g.node:
        for o in n.output:
            if o and o not in existing:
                g.output.append(onnx.ValueInfoProto(name=o))
                existing.add(o)
    return m


class Session:
    """One onnxruntime session on the CPU, graph optimizations off, run as often as needed."""

    def __init__(self, model: onnx.ModelProto | bytes):
        ort = require_onnxruntime()
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        so.log_severity_level = 4
        so.enable_cpu_mem_arena = False  # what a run frees goes back, so the next is watched from the same ground
        data = model if isinstance(model, bytes) else model.SerializeToString()
        self.session = ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])
        outs = self.session.get_outputs()
        self.fetch = [o.name for o in outs if fetchable(o.type)]
        self.not_fetched = [o.name for o in outs if not fetchable(o.type)]

    def run(self, feeds: Mapping[str, Any], run_options: Any = None) -> dict[str, Any]:
        """Every fetchable output by name; ``run_options`` (onnxruntime's) can stop the run."""
        return dict(zip(self.fetch, self.session.run(self.fetch, dict(feeds), run_options)))


def run(model: onnx.ModelProto, feeds: Mapping[str, Any]) -> dict[str, Any]:
    """Run ``model`` once in onnxruntime: every output it can return, by name."""
    return Session(model).run(feeds)


# -- picking bindings and inputs -----------------------------------------------------------------


@dataclass(frozen=True)
class _Input:
    name: str
    type: TypeProto


def _dims(tp: TypeProto) -> list[tuple[str | None, int | None]]:
    """(dim_param, dim_value or None) pairs of a tensor type (or a sequence's / optional's element)."""
    kind = tp.WhichOneof("value")
    if kind == "tensor_type":
        if not tp.tensor_type.HasField("shape"):
            return []
        return [
            (d.dim_param or None, d.dim_value if d.HasField("dim_value") else None) for d in tp.tensor_type.shape.dim
        ]
    if kind == "sequence_type":
        return _dims(tp.sequence_type.elem_type)
    if kind == "optional_type":
        return _dims(tp.optional_type.elem_type)
    return []


def _anonymous(name: str, axis: int) -> str:
    return f"{name}[{axis}]"


def domain_aliases(result: InferenceResult) -> dict[str, str]:
    """The input variables of ``result.domain`` by the names bindings give them here: a
    declared name as it is, the fresh variable of an anonymous input axis as ``input[axis]``."""
    out = {v: v for v in result.input_variables}
    for inp in _model_inputs(result.source):
        shape = result.shape_of(inp.name)
        dims = _dims(inp.type)
        for axis, d in enumerate(shape or ()):
            name = D.variable_name(d)
            if name is not None and axis < len(dims) and dims[axis] == (None, None):
                out[name] = _anonymous(inp.name, axis)
    return out


def _model_inputs(model: onnx.ModelProto) -> list[_Input]:
    inits = {t.name for t in model.graph.initializer} | {t.values.name for t in model.graph.sparse_initializer}
    return [_Input(i.name, i.type) for i in model.graph.input if i.name not in inits]


def _variables(inputs: Sequence[_Input]) -> tuple[list[str], list[str]]:
    """Declared variables of the inputs, and the names given to input axes with neither a
    ``dim_param`` nor a ``dim_value`` (each gets its own extent)."""
    declared: dict[str, None] = {}
    anonymous: dict[str, None] = {}
    for inp in inputs:
        for axis, (param, value) in enumerate(_dims(inp.type)):
            if param:
                declared[param] = None
            elif value is None:
                anonymous[_anonymous(inp.name, axis)] = None
    return list(declared), list(anonymous)


def _fixed_extents(inputs: Sequence[_Input], most: int = 3) -> list[int]:
    """The extents above 1 the inputs fix, most frequent first: a variable may have to match one."""
    counts: dict[int, int] = {}
    for inp in inputs:
        for _, value in _dims(inp.type):
            if value is not None and value > 1:
                counts[value] = counts.get(value, 0) + 1
    return sorted(counts, key=lambda k: -counts[k])[:most]


_NUMPY_FILL = {"f": "float", "i": "int", "u": "int", "b": "bool", "c": "float"}


def _tensor(elem: int, shape: list[int], rng: np.random.Generator, int_range: tuple[int, int], where: str) -> Any:
    if elem == TensorProto.STRING:
        return rng.choice(np.array(["a", "b", "c"], dtype=object), size=shape)
    try:
        dtype = helper.tensor_dtype_to_np_dtype(elem)
    except (KeyError, ValueError):
        raise VerifyError(f"cannot make an input of element type {T.elem_name(elem)} for `{where}`") from None
    if _NOT_FETCHABLE.search(T.elem_name(elem) or "") or dtype.kind not in _NUMPY_FILL:
        raise VerifyError(f"cannot make an input of element type {T.elem_name(elem)} for `{where}`")
    kind = _NUMPY_FILL[dtype.kind]
    # (np.asarray: numpy draws a scalar, not an array, for a rank-0 shape, which onnxruntime refuses)
    if kind == "float":
        return np.asarray(rng.standard_normal(shape), dtype=dtype)
    if kind == "bool":
        return np.asarray(rng.random(shape) < 0.5)
    lo, hi = int_range
    info = np.iinfo(dtype)
    lo, hi = max(lo, int(info.min)), min(hi, int(info.max))
    if lo > hi:
        raise VerifyError(f"the integer range {int_range} holds no value of {dtype} (input `{where}`)")
    return np.asarray(rng.integers(lo, hi, size=shape, endpoint=True), dtype=dtype)


def _feed(
    inp: _Input, tp: TypeProto, extents: Mapping[str, int], rng: np.random.Generator, int_range: tuple[int, int]
) -> Any:
    kind = tp.WhichOneof("value")
    if kind == "tensor_type":
        tt = tp.tensor_type
        if not tt.elem_type:
            raise VerifyError(f"input `{inp.name}` has no element type: cannot make a value for it")
        if not tt.HasField("shape"):
            shape = [extents[_anonymous(inp.name, 0)]] if _anonymous(inp.name, 0) in extents else [2]
        else:
            shape = []
            for axis, (param, value) in enumerate(_dims(tp)):
                shape.append(
                    extents[param] if param else value if value is not None else extents[_anonymous(inp.name, axis)]
                )
        return _tensor(tt.elem_type, shape, rng, int_range, inp.name)
    if kind == "sequence_type":
        return [_feed(inp, tp.sequence_type.elem_type, extents, rng, int_range) for _ in range(2)]
    if kind == "optional_type":
        return _feed(inp, tp.optional_type.elem_type, extents, rng, int_range)
    if kind == "map_type" and tp.map_type.value_type.WhichOneof("value") == "tensor_type":
        # Three entries, keys from the integer range (or a, b, c), scalar values.
        key, value = tp.map_type.key_type, tp.map_type.value_type.tensor_type.elem_type
        keys = _tensor(key, [3], rng, int_range if key != TensorProto.STRING else (0, 2), inp.name).tolist()
        return {k: v for k, v in zip(keys, _tensor(value, [3], rng, int_range, inp.name).tolist())}
    what = kind.replace("_type", "") if kind else "no type"
    raise VerifyError(f"cannot make a value of {what} for input `{inp.name}`")


def input_elements(model: onnx.ModelProto, extents: Mapping[str, int]) -> int:
    """How many elements the inputs ``make_feeds`` makes at ``extents`` hold together."""
    total = 0
    for inp in _model_inputs(model):
        n = 1
        for axis, (param, value) in enumerate(_dims(inp.type)):
            n *= (
                extents.get(param, 1)
                if param
                else value
                if value is not None
                else extents.get(_anonymous(inp.name, axis), 1)
            )
        total += n
    return total


def make_feeds(
    model: onnx.ModelProto,
    extents: Mapping[str, int],
    seed: int | Sequence[int] = 0,
    int_range: tuple[int, int] = DEFAULT_INT_RANGE,
) -> dict[str, Any]:
    """Random inputs for ``model`` at ``extents`` (declared variables, and anonymous input axes
    named ``input[axis]``): floats standard normal, integers uniform in ``int_range`` (both
    ends included), bools fair coins, strings from a three-letter alphabet."""
    rng = np.random.default_rng(seed)
    return {inp.name: _feed(inp, inp.type, extents, rng, int_range) for inp in _model_inputs(model)}


def _readings(result: InferenceResult, names: set[str]) -> dict[str, D.Dim]:
    """The inputs' names read as expressions over the other names in ``names``, each to its
    expression: a run binds such a name to that expression's value (``DimScope.assume_reading``)."""
    return {n: e for n, e in result.dims.readings.items() if n in names and D.free_names(e) <= names}


class _Planner:
    """Bindings of the input variables, in the order ``verify`` tries them."""

    def __init__(
        self, result: InferenceResult, variables: list[str], pinned: Mapping[str, int], fixed: Sequence[int] = ()
    ):
        self.variables = variables
        self.fixed = list(fixed)  # fixed extents of the inputs, most frequent first
        self.pinned = dict(pinned)
        names = set(variables)
        self.derived = _readings(result, names)
        self.free = [v for v in variables if v not in pinned and v not in self.derived]
        self.assumptions = [a for a in result.assumptions if D.free_names(a.expr) <= names]
        self.least = {v: self._least(v) for v in self.free}
        self.groups, self.single = self._facts(result, names)
        self.domain = result.domain
        self.alias = domain_aliases(result)  # domain variable -> the name bindings use here
        self.drawn = self.undrawable = 0

    def _least(self, var: str) -> int:
        """The smallest extent at which every assumption on ``var`` alone holds (1 if none)."""
        mine = [a for a in self.assumptions if D.free_names(a.expr) - self.pinned.keys() == {var}]
        if not mine:
            return 1
        tries: list[int] = [*range(1, 65), *(1 << k for k in range(7, 17))]
        for x in tries:
            env = {**self.pinned, var: x}
            if all(a.holds(env) is not False for a in mine):
                return x
        return 1

    @staticmethod
    def _facts(result: InferenceResult, names: set[str]) -> tuple[list[set[str]], dict[str, int]]:
        """Groups of variables the facts relate (broadcast, equal), and for a variable related
        only to a number, that number."""
        parent: dict[str, str] = {}

        def find(x: str) -> str:
            while parent.get(x, x) != x:
                x = parent[x]
            return x

        single: dict[str, int] = {}
        for f in result.dims.facts:
            if f.kind not in ("assumption", "equality"):
                continue
            vs = [n for n in f.names if n in names]
            if len(vs) >= 2:
                for other in vs[1:]:
                    parent[find(other)] = find(vs[0])
            elif len(vs) == 1 and len(f.names) == 1:
                m = re.match(r"^\s*(\S+) (?:==|and) (\S+)(?: |$)", f.text)
                if m and {m.group(1), m.group(2)} & {vs[0]}:
                    other = m.group(2) if m.group(1) == vs[0] else m.group(1)
                    if other.isdigit():
                        single.setdefault(vs[0], int(other))
        groups: dict[str, set[str]] = {}
        for n in {*parent, *parent.values()}:
            groups.setdefault(find(n), set()).add(n)
        return [g for g in groups.values() if len(g) > 1], single

    def candidate(self, i: int) -> dict[str, int]:
        out = dict(self.pinned)
        for j, v in enumerate(self.variables):
            if v in self.pinned or v in self.derived:
                continue
            base = SCHEDULE[(i + j) % len(SCHEDULE)]
            least = self.least[v]
            out[v] = base if base >= least else least + base - 1
        out = self._derive(out)
        return {v: out.get(v, 1) for v in self.variables}

    def _derive(self, b: dict[str, int]) -> dict[str, int]:
        """``b`` with each name read as an expression bound to that expression's value (unless
        pinned), so that the run lies inside the assumption the reading is."""
        for name, reading in self.derived.items():
            if name not in self.pinned and type(x := D.evaluate(reading, b)) is int:
                b[name] = x
        return b

    def respect(self, b: dict[str, int]) -> dict[str, int] | None:
        """``b`` adjusted until every assumption over the inputs holds and it lies inside the
        model's domain (the nearest binding there), or ``None``."""
        assumed = self._assumed(b)
        if assumed is None or not self.domain.binding:
            return assumed
        alias = self.alias
        want = {v: assumed.get(alias.get(v, v), 1) for v in self.domain.variables}
        fixed = {v: x for v, x in want.items() if alias.get(v, v) in self.pinned}
        inside = self.domain.near(want, fixed)
        if inside is None:
            self.undrawable += 1
            return None
        self.drawn += 1
        near = self._derive({**assumed, **{alias.get(v, v): x for v, x in inside.items()}})
        return near if all(a.holds(near) is not False for a in self.assumptions) else None

    def _assumed(self, b: dict[str, int]) -> dict[str, int] | None:
        """``b`` adjusted until every assumption over the inputs holds, or ``None``."""
        b = self._derive(dict(b))
        for _ in range(12):
            failing = [a for a in self.assumptions if a.holds(b) is False]
            if not failing:
                return b
            grow = [n for n in D.free_names(failing[0].expr) if n not in self.pinned and n not in self.derived]
            if not grow or failing[0].lower is None:
                return None
            for n in grow:
                b[n] = min(b[n] * 2, MAX_EXTENT)
            b = self._derive(b)
        return None

    def retries(self, b: Mapping[str, int]) -> Iterator[dict[str, int]]:
        """Other choices after ``b`` did not run: variables the facts relate made equal (and one
        related to a number set to it), every variable at one extent (the largest of ``b``, a
        fixed extent of the inputs, 1), then everything larger."""
        base = dict(b)
        for g in self.groups:
            top = max(base[n] for n in g)
            base.update({n: top for n in g if n not in self.pinned})
        base.update({n: k for n, k in self.single.items() if n not in self.pinned})
        yield base
        if self.free:
            for k in (max(b[n] for n in self.free), *self.fixed, 1):
                yield {**base, **{n: k for n in self.free}}
        for step in range(1, _SCALE_STEPS + 1):
            yield {n: v if n in self.pinned else min(v * 4**step, MAX_EXTENT) for n, v in base.items()}


# -- the report ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class FailedRun:
    """A binding onnxruntime could not run the model at."""

    bindings: dict[str, int]
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"bindings": dict(self.bindings), "reason": self.reason}


@dataclass
class VerifyReport:
    """Every run ``verify`` made and what each found."""

    runs: list[RunCheck] = field(default_factory=list)
    failed: list[FailedRun] = field(default_factory=list)
    error: str | None = None  # why no run could be made at all (one line)
    declarations_checked: bool = True
    notes: list[str] = field(default_factory=list)
    interrupted: bool = False  # Ctrl-C ended it: the runs are those made before

    @property
    def checked_runs(self) -> list[RunCheck]:
        return [r for r in self.runs if r.skipped is None]

    @property
    def claims(self) -> int:
        return sum(r.claims for r in self.runs)

    @property
    def declared_claims(self) -> int:
        return sum(r.declared_claims for r in self.runs)

    @property
    def unchecked(self) -> int:
        return sum(r.unchecked for r in self.runs)

    @property
    def contradictions(self) -> list[Contradiction]:
        return [c for r in self.runs for c in r.contradictions]

    @property
    def ok(self) -> bool:
        """No contradiction, at least one run made, and not interrupted."""
        return self.error is None and not self.contradictions and not self.interrupted

    def skipped(self, by: str) -> int:
        """Runs skipped for an ``"assumption"``, over the ``"time"`` or the ``"memory"`` limit."""
        return sum(r.skipped_by == by for r in self.runs)

    def summary(self) -> dict[str, int]:
        return {
            "runs": len(self.runs),
            "checked_runs": len(self.checked_runs),
            "skipped_runs": len(self.runs) - len(self.checked_runs),
            **{f"skipped_{by}": self.skipped(by) for by in SKIPPED_BY},
            "failed_bindings": len(self.failed),
            "claims": self.claims,
            "declared_claims": self.declared_claims,
            "unchecked": self.unchecked,
            "contradictions": len(self.contradictions),
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "error": self.error,
            "summary": self.summary(),
            "declarations_checked": self.declarations_checked,
            "interrupted": self.interrupted,
            "runs": [r.to_dict() for r in self.runs],
            "failed": [f.to_dict() for f in self.failed],
            "notes": list(self.notes),
        }

    def __str__(self) -> str:
        if self.error is not None:
            return f"cannot run the model: {self.error}"
        s = self.summary()
        runs = f"{s['checked_runs']} run{'' if s['checked_runs'] == 1 else 's'}"
        text = f"{s['claims']} claims checked in {runs}, {s['unchecked']} unchecked, {s['contradictions']} contradicted"
        if s["skipped_runs"]:
            text += f"; {s['skipped_runs']} skipped{skip_reasons(s)}"
        if s["failed_bindings"]:
            text += f"; {s['failed_bindings']} binding{'' if s['failed_bindings'] == 1 else 's'} did not run"
        return text


SKIPPED_BY = ("assumption", "time", "memory")
_SKIP_WORDS = {"assumption": "outside an assumption", "time": "over the time limit", "memory": "over the memory limit"}


def skip_reasons(summary: Mapping[str, int]) -> str:
    """`` (1 outside an assumption, 2 over the memory limit)``: why runs were skipped."""
    parts = [f"{summary[f'skipped_{by}']} {_SKIP_WORDS[by]}" for by in SKIPPED_BY if summary[f"skipped_{by}"]]
    return f" ({', '.join(parts)})" if parts else ""


# -- verify --------------------------------------------------------------------------------------


def _runtime_model(result: InferenceResult, read_external_data: bool, max_external_bytes: int) -> onnx.ModelProto:
    """The model the result was inferred from, with every tensor kept in external files read in
    (``infer.load.external.read_all``): onnxruntime is handed bytes, so nothing is left for it to
    resolve, against the working directory or anywhere else."""
    model = result.source
    tensors = external_tensors(model)
    if not tensors:
        return model
    if not read_external_data:
        raise VerifyError(
            f"the model keeps {len(tensors)} tensors in external files; reading them is opt-in: "
            "pass --read-external-data (read_external_data=True)"
        )
    if result.directory is None:
        raise VerifyError(
            "the model keeps tensors in external files and its directory is unknown: verify the model by its path"
        )
    try:
        return read_all(model, result.directory, max_external_bytes)
    except ExternalDataError as e:
        raise VerifyError(f"cannot read the model's external data: {e}") from None


_ORT_PREFIX = re.compile(r"^\[ONNXRuntimeError\] : \d+ : \w+ : ")
# Where in onnxruntime's sources a check failed: a path, a line and the C++ function's signature.
_ORT_SOURCE = re.compile(r"/onnxruntime_src/\S+:\d+ [^()]*\([^()]*\)(?: const)? ")


def _first_line(e: BaseException) -> str:
    """The reason an exception gives, on one line, without onnxruntime's source locations."""
    text = " ".join(line.strip() for line in str(e).strip().splitlines() if line.strip())
    text = _ORT_SOURCE.sub("", _ORT_PREFIX.sub("", text))
    if not text:
        return type(e).__name__
    return text if len(text) <= 300 else text[:299] + "…"


@dataclass(frozen=True)
class Bounds:
    """What one ``verify`` may spend (docs/limits.md#verify); seconds of 0 or ``None``: no limit."""

    run_seconds: float | None = RUN_SECONDS
    total_seconds: float | None = TOTAL_SECONDS
    max_memory: int = field(default_factory=default_max_memory)
    max_external_bytes: int = MAX_EXTERNAL_BYTES

    def __post_init__(self) -> None:
        for name in ("run_seconds", "total_seconds"):
            x = getattr(self, name)
            if x is not None and not (isinstance(x, (int, float)) and 0 <= x < math.inf):
                raise VerifyError(f"{_option(name)} must be a finite number of seconds, not {x!r} (0: no limit)")
        for name in ("max_memory", "max_external_bytes"):
            x = getattr(self, name)
            if not isinstance(x, int) or isinstance(x, bool) or x < 1:
                raise VerifyError(f"{_option(name)} must be a positive number of bytes, not {x!r}")


def _option(name: str) -> str:
    """A bound by its keyword and its command-line option: ``run_seconds (--run-seconds)``."""
    return f"{name} (--{name.replace('_', '-')})"


class _Sampler:
    """The runs of one ``verify``: bindings from the planner, each run bounded by the guard."""

    def __init__(
        self,
        result: InferenceResult,
        source: onnx.ModelProto,
        session: Session,
        planner: _Planner,
        variables: list[str],
        options: tuple[int, tuple[int, int], int | None],
        bounds: Bounds,
    ):
        self.result, self.source, self.session, self.planner = result, source, session, planner
        self.variables = variables
        self.seed, self.int_range, self.budget = options
        self.bounds = bounds
        self.report = VerifyReport()
        self.attempts = 0
        total = bounds.total_seconds or None
        self.deadline = None if total is None else time.monotonic() + total
        self.out_of_time = False
        self.exhausted = False  # every binding the planner draws was tried before `samples` were checked

    def sample(self, samples: int, guard: Guard) -> None:
        """Runs until ``samples`` are checked, the attempts or the time are spent."""
        planner, tried = self.planner, set()
        budget = self.budget if self.budget is not None else 8 * samples + 8
        idle = 0  # candidates in a row that gave no new binding
        for i in range(4 * samples + len(SCHEDULE)):
            if len(self.report.checked_runs) >= samples or self.attempts >= budget or self._late():
                break
            # Candidates repeat with the period of SCHEDULE (and their retries with them): a whole
            # period that tried nothing new means every binding there is has been tried, however
            # many samples were asked for.
            if idle >= len(SCHEDULE):
                self.exhausted = True
                break
            before = self.attempts
            first = planner.candidate(i)
            queue, retried = [first], False
            while queue and self.attempts < budget and not self._late():
                b = planner.respect(queue.pop(0))
                # A model without free variables is run at its one binding with other random inputs.
                if b is None:
                    continue
                binding = tuple(sorted(b.items()))
                key = binding if planner.free else (binding, i)
                if key in tried or input_elements(self.source, b) > MAX_INPUT_ELEMENTS:
                    continue
                tried.add(key)
                if self._late():
                    break
                self.attempts += 1
                if self.attempt(b, i, guard):
                    break
                if not retried:
                    queue.extend(planner.retries(first))
                    retried = True
            idle = idle + 1 if self.attempts == before else 0

    def _late(self) -> bool:
        """Past the deadline of ``total_seconds`` (then ``out_of_time`` says so)? Checked before
        every candidate, tried or not: skipping tried ones must not outlast the clock."""
        if not self.out_of_time and self.deadline is not None and time.monotonic() >= self.deadline:
            self.out_of_time = True
        return self.out_of_time

    def attempt(self, b: dict[str, int], i: int, guard: Guard) -> bool:
        """One run at ``b``: ``False`` when onnxruntime fails there (a binding to retry)."""
        feeds = make_feeds(self.source, b, (self.seed, i, self.attempts), self.int_range)
        declared = {k: v for k, v in b.items() if k in self.variables}
        alias = self.planner.alias
        env = {**self.result.dims.bindings, **{v: b[n] for v, n in alias.items() if n in b}}
        est = estimate(self.result.graphs, env, feeds)
        over = est.unbounded or self._over_memory(est.bytes)
        if over is not None:
            self._skip(declared, "memory", f"no memory bound: {over}" if est.unbounded else over, est)
            return True
        seconds, which = self._seconds()
        try:
            observed = guard.run(require_onnxruntime(), lambda ro: self.session.run(feeds, ro), seconds, which)
        except Stopped as e:
            self._skip(declared, e.kind, str(e), est)
            self.out_of_time = which == "total_seconds" and e.kind == "time"
            return True
        except VerifyError:
            raise
        except Exception as e:
            self.report.failed.append(FailedRun(dict(b), _first_line(e)))
            return False
        rc = check_run(self.result, declared, observed)
        if rc.skipped is None and self.report.declarations_checked:
            full = {**self.result.dims.bindings, **declared, **rc.fresh}
            rc.declared_claims, found = check_declared(self.result.source, full, observed)
            rc.contradictions.extend(found)
        rc.estimated_bytes, rc.unsized_values = est.bytes, len(est.unknown)
        self.report.runs.append(rc)
        return True

    def _over_memory(self, estimated: int) -> str | None:
        limit = self.bounds.max_memory
        if estimated <= limit:
            return None
        return f"its values need an estimated {size_str(estimated)}, over the limit of {size_str(limit)} (max_memory)"

    def _seconds(self) -> tuple[float | None, str]:
        """The time the next run may take, and which limit that is."""
        run = self.bounds.run_seconds or None
        if self.deadline is None:
            return run, "run_seconds"
        left = max(self.deadline - time.monotonic(), 0.0)
        return (left, "total_seconds") if run is None or left < run else (run, "run_seconds")

    def _skip(self, declared: dict[str, int], kind: str, reason: str, est: Estimate) -> None:
        rc = RunCheck(dict(declared), skipped=reason, skipped_by=kind)
        rc.estimated_bytes, rc.unsized_values = est.bytes, len(est.unknown)
        self.report.runs.append(rc)


def _pins(result: InferenceResult, variables: list[str], bind: Mapping[str, object] | None) -> dict[str, int]:
    """The variables ``bind`` and the result fix, checked against the inputs' variables (``bind`` is
    the caller's: its values are checked to be integers)."""
    pinned = {k: v for k, v in result.dims.bindings.items() if k in variables}
    for name, value in (bind or {}).items():
        if name not in variables:
            listed = ", ".join(variables) if variables else "none"
            raise VerifyError(f"no graph input has a dimension named {name!r} (the inputs' variables: {listed})")
        if not isinstance(value, int) or value < 1:
            raise VerifyError(f"{name} must be bound to a positive integer, not {value!r}")
        if name in pinned and pinned[name] != value:
            raise VerifyError(f"{name} is {pinned[name]} in the result, not {value}")
        pinned[name] = value
    return pinned


def _checked_options(samples: object, seed: object, int_range: tuple[int, int] | None) -> tuple[int, tuple[int, int]]:
    """``verify``'s ``samples``, ``seed`` and ``int_range`` checked (``VerifyError``): the seed as
    numpy's generator takes it, and the range. ``samples`` and ``seed`` are the caller's, of any
    type until checked."""
    if not isinstance(samples, int) or samples < 1:
        raise VerifyError(f"samples must be a positive integer, not {samples!r}")
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise VerifyError(f"seed must be an integer, not {seed!r}")
    lo, hi = DEFAULT_INT_RANGE if int_range is None else (int(int_range[0]), int(int_range[1]))
    if lo > hi:
        raise VerifyError(f"the integer range {lo}:{hi} is empty")
    # Any integer is a seed: numpy's generator takes only non-negative ones, so it gets the seed
    # modulo 2**64 (-1 draws as 2**64 - 1 does; seeds from 0 to 2**64 - 1 are used as they are).
    return seed % SEED_MODULUS, (lo, hi)


def verify(
    result: InferenceResult,
    *,
    samples: int = 5,
    bind: Mapping[str, int] | None = None,
    int_range: tuple[int, int] | None = None,
    seed: int = 0,
    max_attempts: int | None = None,
    bounds: Bounds | None = None,
    read_external_data: bool = False,
) -> VerifyReport:
    """Check the claims of ``result`` (``infer.infer_model``'s) against onnxruntime at
    ``samples`` bindings (also ``result.verify(...)``).

    ``bind`` pins declared variables; the others take small (1, 2, 3) and larger extents that
    respect ``result.assumptions``. Inputs are random: floats standard normal, integers uniform in
    ``int_range`` (both ends included; default ``(0, 1)``), bools fair coins. Bindings the model
    cannot run at are retried with other choices and listed in ``failed``; ``max_attempts``
    bounds the runs tried (default ``8 * samples + 8``). ``bounds`` (``Bounds``) limits each
    run's time and memory and the whole call's time: a run past one is skipped with the reason.
    ``seed`` is any integer, taken modulo 2**64. Tensors kept in external files are read only
    with ``read_external_data``. Ctrl-C ends the call with what was checked so far
    (``interrupted``). Raises ``VerifyError`` when onnxruntime is missing, an option is invalid
    or the external data cannot be read.
    """
    seed, (lo, hi) = _checked_options(samples, seed, int_range)
    bounds = Bounds() if bounds is None else bounds
    require_onnxruntime()  # before inference: say at once that it is missing
    source = _runtime_model(result, read_external_data, bounds.max_external_bytes)
    inputs = _model_inputs(source)
    variables, anonymous = _variables(inputs)
    pinned = _pins(result, variables, bind)
    try:
        session = Session(exposed(source))
    except VerifyError:
        raise
    except Exception as e:
        refusals = [c.text for c in result.domain.binding if c.kind == "runtime"]
        expected = f" (as the model's domain says: {refusals[0]})" if refusals else ""
        return VerifyReport(error=f"onnxruntime refuses the model{expected}: {_first_line(e)}")
    planner = _Planner(result, variables + anonymous, pinned, _fixed_extents(inputs))
    sampler = _Sampler(result, source, session, planner, variables, (seed, (lo, hi), max_attempts), bounds)
    report = sampler.report
    _notes(report, result, session)
    guard = Guard(bounds.max_memory)
    with guard:
        try:
            sampler.sample(samples, guard)
        except KeyboardInterrupt:
            report.interrupted = True
    report.interrupted = report.interrupted or guard.interrupted
    if sampler.exhausted:
        checked = len(report.checked_runs)
        report.notes.append(f"every binding verify draws was tried: {checked} runs checked of the {samples} asked for")
    _conclude(report, planner, sampler.out_of_time, bounds)
    return report


def _notes(report: VerifyReport, result: InferenceResult, session: Session) -> None:
    if result.source_annotated:
        # The result annotated its own copy in place: the declarations were overwritten.
        report.declarations_checked = False
        report.notes.append("the model's declared types were not checked: result.model overwrote them")
    if session.not_fetched:
        report.notes.append(
            f"{len(session.not_fetched)} values have element types onnxruntime cannot return "
            f"to Python; their claims are not checked"
        )


def _conclude(report: VerifyReport, planner: _Planner, out_of_time: bool, bounds: Bounds) -> None:
    """The notes on how bindings were drawn and why sampling stopped, and the error when no run
    was checked."""
    if planner.domain.binding:
        report.notes.append(
            f"bindings drawn inside the model's domain ({len(planner.domain.binding)} "
            f"requirements, `onnx-infer domain`): {planner.drawn} drawn, "
            f"{planner.undrawable} with no valid binding near them"
        )
    unsized = max((r.unsized_values for r in report.runs), default=0)
    if unsized:
        report.notes.append(
            f"the memory estimate leaves out up to {unsized} values of a size not known "
            "before the run (a Loop's, a NonZero's); resident memory is watched instead"
        )
    if out_of_time:
        report.notes.append(f"verify stopped at its time limit of {bounds.total_seconds:g} s (total_seconds)")
    if report.interrupted:
        report.notes.append("interrupted: the runs listed are those made before Ctrl-C")
        return
    if not report.runs:
        if report.failed:
            report.error = f"onnxruntime fails at every binding tried ({len(report.failed)}): {report.failed[0].reason}"
        else:
            report.error = "no binding of the input variables satisfies the result's assumptions"
    elif not report.checked_runs and all(r.skipped_by in ("time", "memory") for r in report.runs):
        report.error = f"every run was skipped ({len(report.runs)}): {report.runs[0].skipped}"
