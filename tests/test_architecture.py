"""The shape of the code: layers that import downwards only, at run time too, and rules that see
only their context.

Edges are every import statement of ``infer/`` and ``signatures/`` (module level, inside
functions and under ``TYPE_CHECKING`` alike), resolved to modules of the tree, plus what
importing a module runs first: the module-level imports of each package ``__init__`` above it,
and the names the package face imports on first use (``infer.NAMES``, ``infer.core.imports.PUBLIC``).
Each module belongs to one layer, by its folder (docs/architecture.md):

    core < load < contract < check < walk < out < front

and the rules (``signatures``) beside them, above the contract: they import the contract and the
core, and of those only ``RULE_MAY_IMPORT``. No layer of ``infer`` imports the rules: the walk
finds them in the contract layer's registry, which ``infer.core.imports`` (the one module that
imports by name) fills by asking the rules package. ``ALLOWED`` is the whitelist: which layers each
layer may import (its own included). The one way back from a rule to the walk is the ``Walker``
protocol that ``infer/contract/context.py`` declares, which the walk implements. Every module
imports alone in a fresh interpreter.
"""

from __future__ import annotations

import ast
import functools
import os
import re
from collections.abc import Iterable
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("infer", "signatures")
FRONT = {"infer", "infer.cli", "infer.onnx_compat", "infer.ort_compat", "infer.ir", "infer.run", "infer.start"}
LAYERS = ("core", "load", "contract", "check", "walk", "out", "front")
# Bottom-up: a layer imports itself and the layers below it, nothing above; nothing imports the
# rules, which import the contract and the core.
ALLOWED = {layer: set(LAYERS[: i + 1]) for i, layer in enumerate(LAYERS)} | {"rules": {"core", "contract", "rules"}}
LOADER = "infer.core.imports"  # the one module that imports by name (importlib, sys.modules)
FACE = "infer"  # the one module with a module-level __getattr__ (its names resolved by the loader)
# What a rule module may import of ``infer``: the lattice, extents, values, its context and the
# signature language; not the table, the scope, the walk or the loader.
RULE_MAY_IMPORT = {
    "infer.core.dims",
    "infer.core.types",
    "infer.core.values",
    "infer.contract.context",
    "infer.contract.signature",
}
# The DSL reads dim text as the annotations do; the kit registers into the contract's table; the
# rules package asks the loader to import its modules by name.
KIT_MAY_ALSO_IMPORT = {"infer.core.dimparse", "infer.contract.registry", LOADER}


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


def layer_violations(edges: Iterable[tuple[str, str]]) -> list[str]:
    """Every edge to a layer the whitelist does not allow, as ``a -> b (layer -> layer)``."""
    return sorted(
        f"{a} -> {b} ({layer_of(a)} -> {layer_of(b)})" for a, b in edges if layer_of(b) not in ALLOWED[layer_of(a)]
    )


def violations(edges: Iterable[tuple[str, str]]) -> list[str]:
    """Every edge the whitelist forbids, as ``a -> b (layer -> layer)``."""
    bad = []
    for a, b in edges:
        la, lb = layer_of(a), layer_of(b)
        if lb not in ALLOWED[la]:
            bad.append(f"{a} -> {b} ({la} -> {lb})")
        elif la == "rules" and b.startswith("infer."):
            kit = a.startswith("signatures.kit") or a == "signatures"
            may = RULE_MAY_IMPORT | (KIT_MAY_ALSO_IMPORT if kit else set())
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


def _imported(mod: str, tree: ast.Module, is_package: bool, eager: bool = False) -> list[str]:
    """The modules of the tree that ``mod``'s import statements name (``eager``: only those run when
    it is imported, at module level and not under ``if TYPE_CHECKING``)."""
    mods = _modules()

    def target(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    nodes = _eager_nodes(tree.body) if eager else ast.walk(tree)
    out = []
    for node in nodes:
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(mod, is_package, node)
            # ``from . import dims`` names a module; ``from .dims import Dim`` a name in one
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
        out += [t for n in names if (t := target(n)) is not None and t != mod]
    return out


def _eager_nodes(body: list[ast.stmt]) -> Iterable[ast.stmt]:
    """The statements of ``body`` that run at import, through ``if``/``try`` but not functions,
    classes or ``if TYPE_CHECKING``."""
    for node in body:
        if isinstance(node, ast.If):
            if "TYPE_CHECKING" not in ast.unparse(node.test):
                yield from _eager_nodes(node.body + node.orelse)
        elif isinstance(node, ast.Try):
            yield from _eager_nodes(node.body + node.orelse + node.finalbody)
        else:
            yield node


@functools.cache
def _graph() -> nx.DiGraph:
    """The import statements of every module, and the face's imports on first use."""
    mods = _modules()
    g = nx.DiGraph()
    g.add_nodes_from(mods)
    for mod, path in mods.items():
        g.add_edges_from((mod, t) for t in _imported(mod, _parsed(path), path.name == "__init__.py"))
    g.add_edges_from((FACE, m) for m in _face_targets())
    return g


@functools.cache
def _inherited() -> list[tuple[str, str, str]]:
    """``(module, target, package)``: importing ``module`` first runs the ``__init__`` of each
    ``package`` above it, whose module-level imports (``target``) it therefore also makes."""
    mods = _modules()
    eager = {m: _imported(m, _parsed(p), p.name == "__init__.py", eager=True) for m, p in mods.items()}
    out = []
    for mod in mods:
        parts = mod.split(".")
        for k in range(1, len(parts)):
            package = ".".join(parts[:k])
            out += [(mod, t, package) for t in eager.get(package, []) if t != mod]
    return out


def _face_targets() -> set[str]:
    """The modules the package face imports on first use of a name."""
    import infer
    from infer.core import imports

    return set(infer.NAMES.values()) | set(imports.PUBLIC.values())


def test_no_import_circle():
    """No circle of imports, counting what a package's ``__init__`` imports as imported by every
    module below it, except the package's own modules (its ``__init__`` imports them first)."""
    g = _graph().copy()
    g.add_edges_from((m, t) for m, t, package in _inherited() if not t.startswith(package + "."))
    cycles = list(nx.simple_cycles(g))
    assert not cycles, "\n".join(" -> ".join([*c, c[0]]) for c in sorted(cycles, key=len)[:10])


def test_every_import_keeps_to_the_layers():
    """Every import statement, and what importing a module runs in the packages above it."""
    inherited = [f"{v} (through {p}/__init__)" for m, t, p in _inherited() for v in layer_violations([(m, t)])]
    assert violations(_graph().edges) + inherited == []


def test_the_whitelist_refuses_what_it_should():
    """The check can fail: a rule importing the walk, the core importing the loader, the walk
    importing the output layer, a rule importing the table, the kit importing a domain."""
    edges = [
        ("signatures.ai_onnx.tensor", "infer.walk.engine"),
        ("signatures.kit.helpers", "infer.walk.graphs"),
        ("infer.core.values", "infer.load.nodeview"),
        ("infer.walk.engine", "infer.out.annotate"),
        ("infer.check.validate", "signatures.kit.registry"),
        ("infer.walk.engine", "signatures.kit.registry"),
        ("signatures.ai_onnx.tensor", "infer.core.dimtable"),
        ("signatures.kit.dsl", "signatures.ai_onnx.tensor"),
    ]
    assert len(violations(edges)) == len(edges), violations(edges)
    assert violations([("infer.walk.engine", "infer.contract.registry"), ("infer", "infer.out.result")]) == []


def test_every_layer_has_modules_and_every_module_a_layer():
    layers = {layer_of(m) for m in _modules()}
    assert layers == {*LAYERS, "rules"}


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


def hidden_imports(mod: str, tree: ast.Module) -> list[str]:
    """What in ``mod`` imports by name behind the graph's back: ``importlib``, ``__import__`` or
    ``sys.modules`` outside the one loader, a module-level ``__getattr__`` outside the face."""
    found = []
    for node in ast.walk(tree):
        if mod != LOADER:
            if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "importlib" for a in node.names):
                found.append(f"{mod}: imports importlib")
            elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "importlib":
                found.append(f"{mod}: imports from importlib")
            elif isinstance(node, ast.Name) and node.id == "__import__":
                found.append(f"{mod}: __import__")
            elif isinstance(node, ast.Attribute) and node.attr == "modules" and ast.unparse(node.value) == "sys":
                found.append(f"{mod}: sys.modules")
        if mod != FACE and isinstance(node, ast.FunctionDef) and node.name == "__getattr__" and node in tree.body:
            found.append(f"{mod}: a module-level __getattr__")
    return found


def test_nothing_imports_by_name_but_the_one_loader():
    """Every import is a statement the graph above sees, or goes through ``infer.core.imports``
    (whose by-name imports the graph also sees: the face's tables, the rules package)."""
    hidden = [h for mod, path in _modules().items() for h in hidden_imports(mod, _parsed(path))]
    assert not hidden, hidden
    import infer

    assert infer.__all__ == list(infer.NAMES)


def test_the_checks_fail_on_what_they_forbid():
    """A synthetic rule that reaches the walk by importlib, by ``__import__`` or through
    ``sys.modules``, and a lower layer importing the rules, are caught."""
    rule = "import importlib\ndef f(ctx):\n    return importlib.import_module('infer.walk.engine')\n"
    assert hidden_imports("signatures.ai_onnx.synthetic", ast.parse(rule))
    assert hidden_imports("signatures.ai_onnx.synthetic", ast.parse("x = __import__('infer.walk.engine')"))
    assert hidden_imports("signatures.ai_onnx.synthetic", ast.parse("import sys\nw = sys.modules['infer.walk']"))
    assert hidden_imports("infer.walk.engine", ast.parse("def __getattr__(name):\n    return name"))
    assert not hidden_imports(LOADER, ast.parse("import importlib\nimport sys\nsys.modules"))
    lower = [("infer.walk.dispatch", "signatures.kit.registry"), ("infer.out.conformance", "signatures")]
    assert len(violations(lower)) == len(lower), violations(lower)
    assert len(layer_violations([("infer.core.dims", "infer.walk.engine")])) == 1  # as a face importing the walk


_ALONE = """
import os, sys
import networkx, numpy, onnx  # third-party, imported once before the forks: no cycle runs through them
failed = []
for name in sys.argv[1:]:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            __import__(name)
        except BaseException as e:
            os.write(w, f"{type(e).__name__}: {e}".encode()[:400])
            os._exit(1)
        os._exit(0)
    os.close(w)
    message = os.read(r, 1000).decode()
    os.close(r)
    if os.waitpid(pid, 0)[1]:
        failed.append(f"{name}: {message}")
print("\\n".join(failed))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forks a fresh interpreter's state per module")
def test_every_module_imports_alone_in_a_fresh_interpreter():
    """Each module of ``infer`` and ``signatures`` imported first, in a process that has imported
    none of them (a fork of a fresh interpreter per module): no circle bites at run time."""
    import subprocess
    import sys

    names = sorted(_modules())
    out = subprocess.run([sys.executable, "-c", _ALONE, *names], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0 and not out.stdout.strip(), out.stdout + out.stderr[-2000:]


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
    # Syntax-only bounds: the core (a tally compares sums term by term with them), the scope built
    # on them, and the two checks of a value past int64 (which every run's facts could only
    # raise); the cost reads monotonicity alone (does a peak grow with its variables: the syntax's
    # answer holds in every run).
    users = {a for a, b in g.edges if b == "infer.core.dims.bounds"}
    allowed = {
        "infer.core.dims",
        "infer.core.dims.canon",
        "infer.core.dims.tally",
        "infer.core.dimscope",
        "infer.contract.claims",
        "infer.core.dimwriter",
        "infer.check.domain",
        "infer.out.cost",
    }
    assert users <= allowed, users


def test_rules_compare_extents_through_their_context_only():
    """One prover (issue 37): a rule compares extents with ``ctx.equal``/``ctx.less`` (the run's
    scope answers, with what it learned), never with the core's syntax-only ``equal``/``less``."""
    syntax_only = {"equal", "less"}
    bad = []
    for mod, path in _modules().items():
        if not mod.startswith("signatures"):
            continue
        tree = _parsed(path)
        aliases = set()
        for n in ast.walk(tree):
            if isinstance(n, ast.ImportFrom) and n.module == "infer.core":
                aliases |= {a.asname or a.name for a in n.names if a.name == "dims"}
            elif isinstance(n, ast.Import):
                aliases |= {a.asname or a.name for a in n.names if a.name == "infer.core.dims"}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "infer.core.dims":
                bad += [f"{mod}: imports {a.name}" for a in node.names if a.name in syntax_only]
            elif isinstance(node, ast.Attribute) and node.attr in syntax_only and ast.unparse(node.value) in aliases:
                bad.append(f"{mod}:{node.lineno}: {ast.unparse(node)}")
    assert not bad, bad


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
    assert public == {"attrs", "inputs", "n_outputs", "opset", "sig", "version"}, public
    assert not {"variable", "recorded_value"} & set(dir(RuleContext))  # no table record, no recorded value
    assert not {"node", "site", "dims", "table", "scope", "engine"} & set(dir(RuleContext))


def test_a_custom_domain_is_the_module_named_after_it():
    """``signatures.ensure`` finds a custom domain's rules by the domain's name alone: every
    operator a module of signatures/custom declares is of the domain the module is named after."""
    import signatures
    from infer.contract.registry import REGISTRY, load_all

    load_all()
    custom = [e for e in REGISTRY.entries() if e.module.startswith("signatures.custom.")]
    assert custom
    for e in custom:
        assert e.module == signatures.custom_module(e.domain), (e.domain, e.op_type, e.module)
