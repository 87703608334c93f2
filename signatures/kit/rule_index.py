"""Build ``signatures/index.py``: which rule modules declare which operators.

    python -m signatures.kit.rule_index          # rewrite signatures/index.py
    python -m signatures.kit.rule_index --check  # exit 1 if it is not what the modules declare

Each module of the domain packages (not ``signatures/custom``'s, which ``signatures.ensure``
imports for any operator the index does not list) is imported in turn (in a fresh process,
nothing loaded before); what the import adds to the registry of rules and to the declared
signatures is that module's (an import that pulls in another module declares that one's
operators too: importing it is enough for them).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "index.py"


def _collect() -> dict[tuple[str, str], list[str]]:
    from infer.contract import signature as schema
    from infer.contract.registry import REGISTRY
    from infer.core import imports
    from signatures import family_modules

    found: dict[tuple[str, str], list[str]] = {}
    for name in family_modules(indexed=True):
        before = set(REGISTRY.operators()) | set(schema._custom)
        counts = {k: len(v) for k, v in REGISTRY._entries.items()}
        imports.module(name)
        now = set(REGISTRY.operators()) | set(schema._custom)
        grown = {k for k, v in REGISTRY._entries.items() if len(v) != counts.get(k, 0)}
        for key in sorted((now - before) | grown):
            found.setdefault(key, []).append(name)
    return found


def render() -> str:
    found = _collect()
    lines = [
        '"""Which rule modules declare which operators (generated: ``python -m signatures.kit.rule_index``).',
        "",
        "``signatures.ensure`` imports these for a node's operator before its rule or signature is",
        "looked up, so that a process imports the rules its models use, not all of them;",
        "``tests/test_architecture.py`` checks that this is what the modules declare.",
        '"""',
        "",
        "MODULES: dict[tuple[str, str], tuple[str, ...]] = {",
    ]
    for (domain, op), mods in sorted(found.items()):
        quoted = "".join(f'"{m}", ' for m in mods).rstrip()  # (as ruff formats it)
        lines.append(f'    ("{domain}", "{op}"): ({quoted}),')
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="only check that the index is current")
    parser.add_argument("--print", action="store_true", help=argparse.SUPPRESS)  # (the fresh process)
    args = parser.parse_args(argv)
    if args.print:
        sys.stdout.write(render())
        return 0
    text = subprocess.run(
        [sys.executable, "-m", "signatures.kit.rule_index", "--print"],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    ).stdout
    if args.check:
        return 0 if OUT.read_text() == text else 1
    OUT.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
