"""Which cases of a long list the default run takes, a different share each ISO week, the rest
running in the slow set (``python -m pytest -q -m slow``).

``weekly_and_every``: the stored cases a test runs afresh (golden files, client baselines): one
case of each group, a different one each ISO week, or the one ``ONNX_INFER_GOLDEN_CASE=N`` picks
(the test id shows which), and every case in the slow set.

``weekly_share``: the corpus models a heavy test runs on (the client tools): a third of them (one
in ``share``) each week, the others marked slow, so that the default run and the slow set
together run every model, and over ``share`` weeks the default run has run each of them.
``ONNX_INFER_GOLDEN_CASE=N`` picks the share as it picks a case.
"""

from __future__ import annotations

import datetime
import os
import zlib
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


def weekly_share(entries: Sequence[Any], ids: Sequence[str], salt: str, share: int = 3) -> list[Any]:
    """``entries`` as parameters (named by ``ids``): this week's one in ``share`` in the default
    run, the others marked slow. Entry ``k`` is in this week's share when ``k + offset`` is
    ``pick(share)`` modulo ``share``, ``offset`` fixed by ``salt`` (the tool's name): tools that
    run on the same corpus take different models the same week. Neighbours in the list (the two
    exports of a model family) fall into different shares."""
    offset = zlib.crc32(salt.encode()) % share  # (the same in every process, as collection needs)
    week = pick(share)
    return [
        pytest.param(e, id=i, marks=() if (k + offset) % share == week else pytest.mark.slow)
        for k, (e, i) in enumerate(zip(entries, ids, strict=True))
    ]
