"""The largest batch at 2,048 tokens that fits in 8 GiB of live memory (docs/cost.md).

Nothing is run: the peak of live memory is a term over the model's dimension variables, solved
for ``batch`` with ``sequence`` bound. Llama from the test corpus (rotary positions, so no bound on
``sequence``); the shipped BERT accepts at most 64 tokens, which the script says too.
"""

from __future__ import annotations

from pathlib import Path

import infer

ROOT = Path(__file__).resolve().parents[1]
BUDGET = 8 << 30  # 8 GiB
TOKENS = 2048

for path in (ROOT / "tests" / "models" / "llama_dynamo.onnx", ROOT / "examples" / "bert_tiny.onnx"):
    cost = infer.infer_model(path).cost
    _, most = cost.domain_bounds()["sequence"]
    if most is not None and most < TOKENS:
        print(f"{path.name}: sequence={TOKENS} is outside the input domain (sequence <= {most})")
        continue
    fit = cost.fit(BUDGET, "batch", {"sequence": TOKENS})
    print(f"{path.name}: {fit}")
    if fit.value is not None:
        at = cost.at({"batch": fit.value, "sequence": TOKENS})
        node = cost.nodes[at.peak_node]
        print(f"  the peak is at node {node.index} ({node.op_type} `{node.name}`)")
