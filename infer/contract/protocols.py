"""The interfaces a rule context is made of: the prover of extents (``Facts``), what it may ask
of the walk it runs in (``Walker``), and the error a rule raises on a malformed node
(``RuleError``). What it reads of its operator's signature is the engine's ``Signature``
(``infer.contract.signature``) itself."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from onnx import TypeProto

from infer.core.dims import Dim
from infer.core.dimscope import DimScope
from infer.core.dimtable import Site
from infer.core.types import Type
from infer.core.values import Value

MISSING = object()  # an argument not given (``attr``'s default)


class Facts(Protocol):
    """What decides the signs, sizes and order of extents in a run (``RuleContext``, ``DimScope``):
    bounds read from an extent's syntax, sharpened by what the run has required; comparisons
    proved from them (the one prover rules use)."""

    def lower_bound(self, d: Dim) -> int | None: ...

    def bounds(self, d: Dim) -> tuple[int | None, int | None]: ...

    def equal(self, a: Dim, b: Dim) -> bool | None: ...

    def less(self, a: Dim, b: Dim) -> bool | None: ...


class Walker(Protocol):
    """What a rule may ask of the walk it runs in; the engine implements it.

    This is the only way back from a rule to the walker: subgraphs are walked through it (the
    recursion of If, Loop, Scan and function calls), and everything else a rule learns comes in
    its ``RuleContext``.
    """

    @property
    def scope(self) -> DimScope: ...

    @property
    def ir_version(self) -> int: ...

    def report_at(self, site: Site, code: str, message: str, suggestion: str | None = None) -> None: ...

    def walk_subgraph(
        self, ctx: Any, attr: str, inputs: list[Value], quiet: bool, iterated: bool
    ) -> list[Value] | None: ...

    def declared_type(self, tp: TypeProto, value: str) -> Type: ...

    def recorded_value(self, graph: str, name: str) -> Value | None: ...

    @contextmanager
    def reporting_once(self) -> Iterator[None]: ...


class RuleError(Exception):
    """A rule found the node malformed; the engine reports it and leaves outputs unknown."""

    def __init__(self, code: str, message: str, suggestion: str | None = None):
        super().__init__(message)
        self.code = code
        self.suggestion = suggestion
