"""The ONNX node conformance cases: no wrong claim, no crash, and at least the exact counts reached.

The floors only ever rise; the targets of the conformance issue are 1,968 (declared) and 1,900
(symbolic) of 2,321 outputs. ``python -m tests.conformance.scorer --reasons`` prints the table
and why each remaining output is not exact.
"""

from __future__ import annotations

from collections import Counter

import pytest

from tests.conformance import scorer

# Symbolic was 1,919 until a Reshape target entry that may be 0 at run time (allowzero=0 then
# copies the input's extent) stopped being taken as the extent: two outputs of the expanded
# linear-attention cases rested on `floor(s2_2/4)`, which is 0 when s2_2 < 4 in that variant.
FLOOR = {"declared": 1976, "symbolic": 1917}


@pytest.fixture(scope="module")
def scores():
    return scorer.run()


@pytest.mark.parametrize("variant", ["declared", "symbolic"])
def test_conformance(scores, variant, capsys):
    mine = [s for s in scores if s.variant == variant]
    counts = Counter(s.verdict for s in mine)
    with capsys.disabled():
        print(f"\n{scorer.table(mine)}")
    bad = [f"{s.case}/{s.output}: {s.verdict}: {s.detail}" for s in mine if s.verdict in ("wrong", "crash")]
    assert not bad, "\n".join(bad[:30])
    assert counts["exact"] >= FLOOR[variant], scorer.table(mine)
    assert sum(counts.values()) == 2321 or len(scorer.cases()) != 1884  # every output scored
