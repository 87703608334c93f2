"""The conformance statement (Annex A): per domain and operator version, what is supported."""

from __future__ import annotations

from collections import Counter
from typing import Any

import signatures
from signatures.registry import lookup
from signatures.schema import all_signatures, canonical_domain, has_function_body

SUPPORTED = "rule"
FUNCTION = "function"  # inferred through the schema's function body
UNSUPPORTED = "unsupported"  # an explicit entry says why
MISSING = "no-rule"


def status(domain: str, op_type: str, since: int) -> tuple[str, str]:
    """(status, detail) of one operator version."""
    entry = lookup(domain, op_type, since)
    if entry is not None and entry.supported:
        return SUPPORTED, entry.pattern or f"{entry.module}"
    if entry is not None:
        return UNSUPPORTED, entry.reason or ""
    if has_function_body(domain, op_type, since):
        return FUNCTION, "inferred through the schema's function body"
    return MISSING, "no rule yet: outputs get their schema types only"


def statement(domain: str | None = None) -> dict[str, Any]:
    signatures.load_all()
    want = None if domain is None else canonical_domain(domain)
    rows = []
    for sig in all_signatures():
        if want is not None and sig.domain != want:
            continue
        st, detail = status(sig.domain, sig.name, sig.since_version)
        rows.append({"domain": sig.domain, "op_type": sig.name, "since": sig.since_version,
                     "status": st, "detail": detail})  # fmt: skip
    counts = Counter(r["status"] for r in rows)
    summary = ", ".join(f"{counts.get(s, 0)} {s}" for s in (SUPPORTED, FUNCTION, UNSUPPORTED, MISSING))
    return {"operators": rows, "summary": f"{len(rows)} operator versions: {summary}",
            "counts": dict(counts)}  # fmt: skip
