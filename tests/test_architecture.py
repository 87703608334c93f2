"""The shape of the code: layers that import downwards only, and rules that see only their context.

Edges are every import statement of ``infer/`` and ``signatures/`` (module level, inside
functions and under ``TYPE_CHECKING`` alike), resolved to modules of the tree. Each module
belongs to one layer, by its folder (docs/architecture.md):

    core < load < contract < check < rules < walk < out < front

and ``ALLOWED`` is the whitelist: which layers each layer may import (its own included). The
rules (``signatures``) import the contract and the core, and of those only ``RULE_MAY_IMPORT``;
the one way back from a rule to the walk is the ``Walker`` protocol that
``infer/contract/context.py`` declares, which the walk implements.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterable
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("infer", "signatures")
FRONT = {"infer", "infer.cli", "infer.onnx_compat", "infer.ort_compat", "infer.ir"}
LAYERS = ("core", "load", "contract", "check", "rules", "walk", "out", "front")
# Bottom-up: a layer imports itself and the layers below it, nothing above.
ALLOWED = {layer: set(LAYERS[: i + 1]) for i, layer in enumerate(LAYERS)}
# What a rule module may import of ``infer``: the lattice, extents, values, its context and the
# signature language; not the table, the scope, the walk or the loader.
RULE_MAY_IMPORT = {
    "infer.core.dims",
    "infer.core.types",
    "infer.core.values",
    "infer.contract.context",
    "infer.contract.signature",
}
KIT_MAY_ALSO_IMPORT = {"infer.core.dimparse"}  # the DSL reads dim text as the annotations do


def layer_of(module: str) -> str:
    """The layer of a module of the tree, by its folder."""
    if module in FRONT:
        return "front"
    if module.startswith("signatures"):
        return "rules"
    parts = module.split(".")
    if parts[0] == "infer" and len(parts) > 1 and parts[1] in LAYERS:
        return parts[1]
    raise AssertionError(f"{module} is in no layer: put it in one of infer/{{{', '.join(LAYERS[:-1])}}}/")


def violations(edges: Iterable[tuple[str, str]]) -> list[str]:
    """Every edge the whitelist forbids, as ``a -> b (layer -> layer)``."""
    bad = []
    for a, b in edges:
        la, lb = layer_of(a), layer_of(b)
        if lb not in ALLOWED[la]:
            bad.append(f"{a} -> {b} ({la} -> {lb})")
        elif la == "rules" and b.startswith("infer."):
            may = RULE_MAY_IMPORT | (KIT_MAY_ALSO_IMPORT if a.startswith("signatures.kit") else set())
            if b not in may:
                bad.append(f"{a} -> {b} (a rule reaches past its context)")
        elif a.startswith("signatures.kit") and b.startswith("signatures.") and not b.startswith("signatures.kit"):
            bad.append(f"{a} -> {b} (the kit imports a domain's rules)")
    return sorted(bad)


@functools.cache
def _modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for path in (ROOT / pkg).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            out[name] = path
    return out


@functools.cache
def _parsed(path: Path) -> ast.Module:
    """The module's syntax tree, parsed once for every test here (none changes it)."""
    return ast.parse(path.read_text())


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


@functools.cache
def _graph() -> nx.DiGraph:
    mods = _modules()
    g = nx.DiGraph()
    g.add_nodes_from(mods)

    def target(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    for mod, path in mods.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(_parsed(path)):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(mod, is_package, node)
                # ``from . import dims`` names a module; ``from .dims import Dim`` a name in one
                names = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            for n in names:
                t = target(n)
                if t is not None and t != mod:
                    g.add_edge(mod, t)
    return g


def test_no_import_circle():
    cycles = list(nx.simple_cycles(_graph()))
    assert not cycles, "\n".join(" -> ".join([*c, c[0]]) for c in sorted(cycles, key=len)[:10])


def test_every_import_keeps_to_the_layers():
    assert violations(_graph().edges) == []


def test_the_whitelist_refuses_what_it_should():
    """The check can fail: a rule importing the walk, the core importing the loader, the walk
    importing the output layer, a rule importing the table, the kit importing a domain."""
    edges = [
        ("signatures.ai_onnx.tensor", "infer.walk.engine"),
        ("signatures.kit.helpers", "infer.walk.graphs"),
        ("infer.core.values", "infer.load.nodeview"),
        ("infer.walk.engine", "infer.out.annotate"),
        ("infer.check.validate", "signatures.kit.registry"),
        ("signatures.ai_onnx.tensor", "infer.core.dimtable"),
        ("signatures.kit.dsl", "signatures.ai_onnx.tensor"),
    ]
    assert len(violations(edges)) == len(edges), violations(edges)
    assert violations([("infer.walk.engine", "signatures.kit.registry"), ("infer", "infer.out.result")]) == []


def test_every_layer_has_modules_and_every_module_a_layer():
    layers = {layer_of(m) for m in _modules()}
    assert layers == set(LAYERS)


def test_no_cycle_between_the_packages_of_the_two_trees():
    """``infer`` and ``signatures`` do not import each other as packages: at the granularity of
    subpackages (``infer.walk``, ``signatures.kit``, ``signatures.ai_onnx``, ...) the imports
    form no circle (the walk imports the rules, the rules the contract and the core)."""
    g = nx.DiGraph()
    for a, b in _graph().edges:
        pa, pb = ".".join(a.split(".")[:2]), ".".join(b.split(".")[:2])
        if pa != pb:
            g.add_edge(pa, pb)
    cycles = list(nx.simple_cycles(g))
    assert not cycles, cycles


def test_rules_do_not_reach_into_the_walker():
    # A rule asks its context (``ctx.wants_output(k)``, ``ctx.output_name(k)``, ``ctx.made_inside``),
    # never for the node, its site or the walk behind it (``node_of``/``site_of`` are the walk's).
    pattern = re.compile(r"ctx\._\w|\.engine\b|ctx\.(frame|node|site)\b|\b(node_of|site_of)\b")
    bad = []
    for path in (ROOT / "signatures").rglob("*.py"):
        for i, line in enumerate(path.read_text().splitlines(), 1):
            if pattern.search(line):
                bad.append(f"{path.relative_to(ROOT)}:{i}: {line.strip()}")
    assert not bad, "\n".join(bad)


def test_no_module_of_the_tree_is_imported_behind_the_graphs_back():
    """Every import is a statement the graph above sees: no ``importlib.import_module`` or
    ``__getattr__`` face hides an edge (a lazy import that dodges a circle is still a circle)."""
    hidden = []
    for mod, path in _modules().items():
        tree = _parsed(path)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "import_module":
                arg = node.args[0] if node.args else None
                name = arg.value if isinstance(arg, ast.Constant) else "?"
                if not isinstance(name, str) or name.split(".")[0] in PACKAGES or name.startswith("."):
                    hidden.append(f"{mod}: import_module({name!r})")
            if isinstance(node, ast.FunctionDef) and node.name == "__getattr__" and node in tree.body:
                hidden.append(f"{mod}: a module-level __getattr__")
    assert not hidden, hidden


def test_sympy_is_imported_at_the_edge_only():
    """Nothing computes with sympy (issue 23): the one module that imports it converts an extent
    for a caller who asks (``infer.core.dims.to_sympy``)."""
    edge = {"infer.core.dims.edge"}
    importers = set()
    for mod, path in _modules().items():
        for node in ast.walk(_parsed(path)):
            if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "sympy" for a in node.names):
                importers.add(mod)
            elif isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == "sympy":
                importers.add(mod)
    assert importers == edge, sorted(importers - edge)


def test_importing_infer_does_not_import_sympy():
    import subprocess
    import sys

    code = "import sys, infer; infer.infer_model; print('sympy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "False", out.stderr


def test_rules_ask_the_run_through_their_context():
    """Bounds, requirements and fresh variables are the run's (``DimScope``), which rules reach
    through ``RuleContext`` only: no rule imports the scope, the table of variables or the
    syntax-only bounds of the core (which know nothing of what the run required)."""
    g = _graph()
    reach = {"infer.core.dimscope", "infer.core.dimtable", "infer.core.dims.bounds"}
    bad = [(a, b) for a, b in g.edges if a.startswith("signatures") and b in reach]
    assert not bad, bad
    from infer.contract.context import RuleContext

    assert not hasattr(RuleContext, "dims")
    # Syntax-only bounds: the core, the scope built on them, and the two checks of a value past
    # int64 (which every run's facts could only raise).
    users = {a for a, b in g.edges if b == "infer.core.dims.bounds"}
    allowed = {
        "infer.core.dims",
        "infer.core.dims.canon",
        "infer.core.dimscope",
        "infer.contract.claims",
        "infer.core.dimwriter",
        "infer.check.domain",
    }
    assert users <= allowed, users


def test_the_index_of_rule_modules_is_what_the_modules_declare():
    """``signatures/index.py`` (what ``signatures.ensure`` imports for an operator) is current:
    regenerated in a fresh process, it is the same."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "signatures.kit.rule_index", "--check"], cwd=ROOT, check=False)
    assert out.returncode == 0, "signatures/index.py is stale: run python -m signatures.kit.rule_index"


def test_a_model_imports_the_rules_it_uses():
    import subprocess
    import sys

    families = "('signatures.ai_onnx.', 'signatures.com_microsoft.')"
    count = f"sum(m.startswith({families}) for m in sys.modules)"
    code = f"import sys, infer; infer.infer_model('examples/bert_tiny.onnx'); print({count})"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    from signatures import family_modules

    assert 0 < int(out.stdout) < len(family_modules()) // 3, out.stdout


def test_the_context_hands_out_no_node_site_or_table():
    """What a rule could read of its context is methods and its inputs, attributes and signature:
    no attribute holds the node, its site, the walker or the run's table."""
    from infer.contract.context import RuleContext

    public = {n for n in RuleContext.__slots__ if not n.startswith("_")}
    assert public == {"attrs", "causes", "inputs", "n_outputs", "opset", "reason", "sig", "version"}, public
    assert not {"node", "site", "dims", "table", "scope", "engine"} & set(dir(RuleContext))


def test_a_custom_domain_is_the_module_named_after_it():
    """``signatures.ensure`` finds a custom domain's rules by the domain's name alone: every
    operator a module of signatures/custom declares is of the domain the module is named after."""
    import signatures
    from signatures.kit.registry import REGISTRY

    signatures.load_all()
    custom = [e for e in REGISTRY.entries() if e.module.startswith("signatures.custom.")]
    assert custom
    for e in custom:
        assert e.module == signatures.custom_module(e.domain), (e.domain, e.op_type, e.module)
