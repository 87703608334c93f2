"""Property tests (hypothesis) at two counts: a quarter of the examples in the default run, the
full count in the slow set (``python -m pytest -q -m slow``).

    @pytest.mark.parametrize("examples", counts(400))
    def test_simplification_is_sound(examples):
        @check(examples, expr_and_value(), BINDINGS)
        def holds(pair, env): ...

The body is the same in both; only how many examples hypothesis draws differs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis.strategies import SearchStrategy


def counts(full: int, default: int | None = None) -> list[Any]:
    """``[default, full]`` as parameters: ``default`` (a quarter of ``full`` unless given) in the
    default run, ``full`` marked slow."""
    small = default if default is not None else max(1, full // 4)
    return [
        pytest.param(small, id=f"{small}-examples"),
        pytest.param(full, id=f"{full}-examples", marks=pytest.mark.slow),
    ]


def check(examples: int, *strategies: SearchStrategy[Any]) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Run the decorated function now as a hypothesis test of ``examples`` examples."""

    def run(body: Callable[..., None]) -> Callable[..., None]:
        settings(max_examples=examples, deadline=None)(given(*strategies)(body))()
        return body

    return run
