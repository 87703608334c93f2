"""Which stored cases a test runs afresh (golden files, client baselines): one case of each group,
a different one each ISO week, or the one ``ONNX_INFER_GOLDEN_CASE=N`` picks (the test id shows
which), and every case in the slow set."""

from __future__ import annotations

import datetime
import os
from collections.abc import Mapping, Sequence
from typing import Any

import pytest


def pick(count: int) -> int:
    """The index of this week's case among ``count``."""
    chosen = os.environ.get("ONNX_INFER_GOLDEN_CASE")
    return (int(chosen) if chosen else datetime.date.today().isocalendar().week) % count


def weekly_and_every(groups: Mapping[str, Sequence[dict[str, Any]]]) -> tuple[list[Any], list[Any]]:
    """``(group, entry)`` parameters: this week's entry of each group, and every entry (slow)."""
    weekly = [
        pytest.param(name, es[pick(len(es))], id=f"{name}/{es[pick(len(es))]['file']}") for name, es in groups.items()
    ]
    every = [
        pytest.param(name, e, id=f"{name}/{e['file']}", marks=pytest.mark.slow)
        for name, es in groups.items()
        for e in es
    ]
    return weekly, every
