"""The fuzz campaign in CI: hostile models never crash or hang the command line, and random
valid models get only claims onnxruntime confirms.

CI runs a fast subset (500 mutated models in fresh driver processes, 5 of them also as separate
``onnx-infer`` processes, 20 random valid models against onnxruntime). A mutated model must not
make a rule fail either (``rule-crash``). The default run takes half of the mutated models (every
other one, in both tests), the halves taking turns by ISO week; ``-m slow`` takes the other half.
``FUZZ_LONG=1`` runs the long mode (10,000 mutated models, 1,000 random models, every one); so
does ``python -m tests.fuzz.campaign --mutated 10000 --random 1000 --bert`` (docs/limits.md).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.rotation import weekly_share

from .campaign import run_mutated, run_separate, run_soundness, summarize
from .mutate import generate
from .seeds import pool

LONG = bool(os.environ.get("FUZZ_LONG"))
MUTATED = 10_000 if LONG else 500
SEPARATE = 100 if LONG else 5
RANDOM = 1_000 if LONG else 20
TIMEOUT = 10.0 if LONG else 30.0  # CI machines are shared: margin against false hangs
PARTS = 1 if LONG else 2
HALVES = weekly_share(range(PARTS), [f"half{k + 1}" for k in range(PARTS)], "mutated", PARTS)


@pytest.fixture(scope="module")
def cases() -> list[tuple[str, bytes]]:
    return generate(pool(random_models=8, bert=LONG), MUTATED, seed_value=0)


def _report(outcomes) -> str:
    s = summarize(outcomes)
    bad = [o for o in outcomes if o.status != "ok"]
    lines = s.lines() + [f"{o.status}: {o.description}\n{o.detail}" for o in bad[:5]]
    return "\n".join(lines)


@pytest.mark.parametrize("part", HALVES)
def test_mutated_models_never_crash_or_hang(cases, tmp_path: Path, part: int):
    mine = cases[part::PARTS]
    outcomes = run_mutated(mine, tmp_path, TIMEOUT, processes=2)
    print(_report(outcomes))
    assert len(outcomes) == len(mine) == MUTATED // PARTS
    assert all(o.status == "ok" for o in outcomes), _report(outcomes)
    assert all(e in (0, 1, 2) for o in outcomes for e in o.exits)
    # Every rule diagnoses what it cannot infer: a rule that raises is a bug even though the
    # engine survives it (reported as `rule-crash`).
    crashes = summarize(outcomes).rule_crashes
    assert not crashes, "\n".join(f"{sig}\n  {ex['description']}\n{ex['traceback']}" for sig, ex in crashes.items())


@pytest.mark.parametrize("part", HALVES)
def test_mutated_models_as_separate_processes(cases, tmp_path: Path, part: int):
    outcomes = run_separate(cases[:SEPARATE][part::PARTS], tmp_path, TIMEOUT)
    assert outcomes
    assert all(o.status == "ok" for o in outcomes), _report(outcomes)


def test_random_valid_models_agree_with_onnxruntime():
    sound = run_soundness(RANDOM, first_seed=1000)
    print(f"{sound['ran']} of {sound['built']} random models run; {sound['values']} values checked")
    assert sound["ran"] >= RANDOM // 2
    assert not sound["wrong"], sound["wrong"]
