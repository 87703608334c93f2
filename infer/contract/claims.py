"""What no tensor can be: the bounds every output a rule claims is checked against.

A tensor has at most ``max_rank`` axes (the rank limit, Clause 15.4) and every extent is an
integer from 0 to 2^63 - 1 (shapes are int64 in every runtime and in the model format). A rule
computing past these from odd attributes or contents (an Unsqueeze to rank 1,030, a Pad by
2^62 on both sides, a TopK with k = -1) claims what no run can produce; the engine makes such
a rank or extent unknown and reports it, once, where a rule's outputs are placed.
"""

from __future__ import annotations

from typing import Any

from infer.core import dims as D
from infer.core import types as T
from infer.core.dims import Dim
from infer.core.dims.bounds import lower as syntactic_lower
from infer.core.values import Value

INT64_MAX = (1 << 63) - 1

Problem = tuple[str, str]  # (diagnostic code, message)


def within_bounds(raw: list[Any], max_rank: int) -> tuple[list[Any], list[Problem]]:
    """``raw`` (what a rule returned, one entry per output) with every rank past ``max_rank`` and
    every extent that is provably negative or past int64 made unknown, and what was found."""
    problems: list[Problem] = []
    out = raw
    for k, spec in enumerate(raw):
        fixed = _output(spec, k, max_rank, problems)
        if fixed is not spec:
            if out is raw:
                out = list(raw)
            out[k] = fixed
    return out, problems


def _output(spec: Any, k: int, max_rank: int, problems: list[Problem]) -> Any:
    if spec is None:
        return None
    if isinstance(spec, (tuple, list)):
        return _shape(tuple(spec), k, max_rank, problems) if _suspect(spec, max_rank) else spec
    if isinstance(spec, Value):
        t = _type(spec.type, k, max_rank, problems)
        return spec if t is spec.type else Value(t)  # contents of another shape do not fit
    if isinstance(spec, T.Type):
        return _type(spec, k, max_rank, problems)
    return spec


def _type(t: T.Type, k: int, max_rank: int, problems: list[Problem]) -> T.Type:
    if isinstance(t, (T.TensorType, T.SparseTensorType)):
        if t.shape is None or not _suspect(t.shape, max_rank):
            return t
        return type(t)(t.elem, _shape(t.shape, k, max_rank, problems))
    if isinstance(t, (T.SequenceType, T.OptionalType)):
        inner = _type(t.elem, k, max_rank, problems)
        return t if inner is t.elem else type(t)(inner)
    return t


def _suspect(shape: tuple[Dim, ...] | list[Dim], max_rank: int) -> bool:
    """Cheap first look (every output of every rule passes here): anything to check closely?"""
    if len(shape) > max_rank:
        return True
    for d in shape:
        if d is None:
            continue
        if isinstance(d, int):
            if d < 0 or d > INT64_MAX:
                return True
        elif _past_int64(d):
            return True
    return False


def _past_int64(d: Dim) -> bool:
    """Is ``d`` past int64 at every binding? (Its syntax's bound suffices: computed once per
    expression, and a run's facts only raise it.)"""
    if d is None:
        return False
    if isinstance(d, int):
        return d > INT64_MAX
    low = syntactic_lower(d)
    return low is not None and low > INT64_MAX


def _shape(shape: tuple[Dim, ...], k: int, max_rank: int, problems: list[Problem]) -> tuple[Dim, ...] | None:
    if len(shape) > max_rank:
        problems.append(
            (
                "limit",
                f"output {k} would have rank {len(shape)}, past the rank limit {max_rank} "
                "(max_rank); its rank is left unknown",
            )
        )
        return None
    out = list(shape)
    for axis, d in enumerate(shape):
        if isinstance(d, int) and d < 0:
            problems.append(
                (
                    "shape-mismatch",
                    f"output {k} would have extent {d} at axis {axis}; an extent is "
                    "never negative, so the node cannot run as given",
                )
            )
            out[axis] = None
        elif _past_int64(d):
            problems.append(
                (
                    "integer-overflow",
                    f"output {k} would have extent {D.to_str(d)} at axis {axis}, "
                    "which overflows int64 (no tensor has it); it is left unknown",
                )
            )
            out[axis] = None
    return tuple(out)
