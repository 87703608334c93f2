"""The documentation tells the truth: generated pages are current, links resolve, the commands
and options it shows exist, the JSON schemas of docs/cli.md match what every verb prints, and
the getting-started code runs."""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path
from typing import Any

import onnx
import pytest
from onnx import TensorProto, helper

import infer
from infer import cli
from infer.out import conformance
from tests.support import cli as C

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
EXAMPLE = ROOT / "examples" / "bert_tiny.onnx"
PAGES = [ROOT / "README.md", ROOT / "examples" / "README.md", *sorted(DOCS.glob("*.md"))]


# -- generated pages ---------------------------------------------------------------------------


def test_conformance_statement_is_current():
    committed = (DOCS / "conformance.md").read_text(encoding="utf-8")
    m = re.search(r"operator schemas of onnx (\S+) ", committed)
    if m and m.group(1) != onnx.__version__:
        pytest.skip(f"docs/conformance.md was generated with onnx {m.group(1)}, this is {onnx.__version__}")
    ort = re.search(r"and onnxruntime (\S+) ", committed)
    installed = conformance.onnxruntime_schemas()[0]
    if (ort.group(1) if ort else None) != installed:
        pytest.skip(f"docs/conformance.md lists onnxruntime {ort.group(1) if ort else 'none'}, installed {installed}")
    assert committed == conformance.markdown(), (
        "docs/conformance.md is stale: python -m infer.out.conformance --markdown > docs/conformance.md"
    )


def test_clause_map_is_current():
    committed = (DOCS / "clauses.md").read_text(encoding="utf-8")
    assert committed == conformance.clause_map(), (
        "docs/clauses.md is stale: python -m infer.out.conformance --clauses > docs/clauses.md"
    )


def test_clause_map_covers_every_code():
    page = (DOCS / "clauses.md").read_text(encoding="utf-8")
    from infer.core.diagnostics import CODES

    assert all(f"`{code}`" in page for code in CODES)


def _resolves(dotted: str) -> bool:
    """Does ``module.Name`` or ``module.Class.method`` name something that exists?"""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def test_clause_map_cites_code_that_exists():
    """Each place the clause map says implements a clause is there (a module, a name in one, a
    method of a class, or a file or folder of the tree), so that moving code cannot leave it stale."""
    cited = [c for _, _, where in conformance.RULE_CLAUSES for c in re.findall(r"`([^`]+)`", where)]
    assert len(cited) >= len(conformance.RULE_CLAUSES)
    paths = [c for c in cited if "/" in c]
    missing = [c for c in paths if not any(ROOT.glob(c.rstrip("/")))]
    missing += [c for c in cited if c not in paths and not _resolves(c)]
    assert not missing, f"the clause map cites what does not exist: {missing}"


def test_architecture_names_modules_that_exist():
    """Every ``infer/…`` and ``signatures/…`` path docs/architecture.md names is in the tree, and
    every module of ``infer/`` is described there."""
    page = (DOCS / "architecture.md").read_text(encoding="utf-8")
    named = set(re.findall(r"\b((?:infer|signatures)/[\w/]*\w(?:\.py)?/?)", page))
    assert len(named) > 30
    assert not [p for p in sorted(named) if not (ROOT / p).exists()], "docs/architecture.md names what is not there"
    modules = {f"infer/{p.name}" for p in (ROOT / "infer").glob("*.py")}
    assert not sorted(modules - named), "modules docs/architecture.md does not describe"


# -- links and commands ------------------------------------------------------------------------


def _anchors(page: Path) -> set[str]:
    """GitHub's anchors of a page's headings."""
    out = set()
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            out.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return out


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page: Path):
    text = page.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"^[a-z]+:", target):
            continue  # an absolute URL
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        assert dest.exists(), f"{page.name}: broken link {target}"
        if anchor and dest.suffix == ".md":
            assert anchor in _anchors(dest), f"{page.name}: no heading #{anchor} in {dest.name}"


def _options() -> dict[str, set[str]]:
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    return {verb: {o for a in sp._actions for o in a.option_strings} for verb, sp in sub.choices.items()}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_commands_shown_exist(page: Path):
    """Every `onnx-infer VERB --option` the docs show is a verb and an option the parser has."""
    options = _options()
    text = page.read_text(encoding="utf-8")
    for line in re.findall(r"onnx-infer [a-z][^\n`]*", text):
        words = line.split()
        verb = words[1]
        if verb.startswith("-"):
            continue  # onnx-infer --version
        if verb not in options:
            continue  # prose such as "onnx-infer is ..."
        for opt in re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", " ".join(words[2:])):
            assert opt in options[verb], f"{page.name}: `onnx-infer {verb}` has no option {opt} ({line})"


def test_every_verb_is_documented():
    page = (DOCS / "cli.md").read_text(encoding="utf-8")
    for verb, opts in _options().items():
        assert f"## {verb}" in page, f"docs/cli.md has no section for {verb}"
        section = page.split(f"## {verb}", 1)[1].split("\n## ", 1)[0]
        common = {
            "-h",
            "--help",
            "--json",
            "-q",
            "--quiet",
            "--color",
            "--dims",
            "--bind",
            "--read-external-data",
            "--external-data-dir",
            "--limit",
        }
        for opt in opts - common:
            assert opt in section, f"docs/cli.md: {verb} does not document {opt}"


# -- the JSON schemas of docs/cli.md -----------------------------------------------------------


def _schemas() -> dict[str, Any]:
    page = (DOCS / "cli.md").read_text(encoding="utf-8")
    found = re.findall(r"<!-- schema: (\w+) -->\s*```json\n(.*?)```", page, re.S)
    return {name: json.loads(body) for name, body in found}


_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def _validate(data: Any, schema: dict[str, Any], schemas: dict[str, Any], where: str = "$") -> None:
    """The part of JSON Schema the documented schemas use: type, enum, properties, required,
    additionalProperties, items and $ref (by schema name)."""
    if "$ref" in schema:
        _validate(data, schemas[schema["$ref"]], schemas, where)
        return
    if "enum" in schema:
        assert data in schema["enum"], f"{where}: {data!r} not in {schema['enum']}"
    if "type" in schema:
        kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        ok = any(
            (k == "integer" and isinstance(data, int) and not isinstance(data, bool))
            or (k != "integer" and isinstance(data, _TYPES[k]) and not (k != "boolean" and isinstance(data, bool)))
            for k in kinds
        )
        assert ok, f"{where}: {data!r} is not {kinds}"
    if isinstance(data, dict):
        for key in schema.get("required", []):
            assert key in data, f"{where}: missing {key}"
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, value in data.items():
            if key in props:
                _validate(value, props[key], schemas, f"{where}.{key}")
            elif extra is False:
                raise AssertionError(f"{where}: undocumented key {key}")
            elif isinstance(extra, dict):
                _validate(value, extra, schemas, f"{where}.{key}")
    if isinstance(data, list) and "items" in schema:
        for i, item in enumerate(data):
            _validate(item, schema["items"], schemas, f"{where}[{i}]")


def _unknown_model(path: Path) -> Path:
    g = helper.make_graph(
        [helper.make_node("Reshape", ["x", "p"], ["y"], name="r"), helper.make_node("MatMul", ["y", "w"], ["z"])],
        "g",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 6]),
            helper.make_tensor_value_info("p", TensorProto.INT64, [2]),
            helper.make_tensor_value_info("w", TensorProto.FLOAT, [3, 4]),
        ],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)],
    )
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]), path)
    return path


def _run(*argv: str) -> tuple[int, Any]:
    status, out, _ = C.run(*argv)
    return status, json.loads(out)


def test_json_output_matches_the_documented_schemas(tmp_path):
    schemas = _schemas()
    assert set(schemas) == {
        "diagnostic",
        "summary",
        "annotate",
        "check",
        "explain",
        "report",
        "ops",
        "verify",
        "contradiction",
    }
    model = str(_unknown_model(tmp_path / "m.onnx"))
    wrong = onnx.load(str(EXAMPLE))  # a declared output dim onnxruntime contradicts: verify lists it
    wrong.graph.output[0].type.tensor_type.shape.dim[2].dim_value = 33
    onnx.save(wrong, tmp_path / "wrong.onnx")
    runs = {
        "annotate": ["annotate", model, "-o", str(tmp_path / "o.onnx"), "--json", "--dims", "strict"],
        "check": ["check", model, "--json", "-v"],
        "explain": ["explain", model, "z", "--json"],
        "report": ["report", model, "-o", str(tmp_path / "r.html"), "--json"],
        "ops": ["ops", "--json", "--domain", "ai.onnx.ml"],
        "verify": ["verify", str(tmp_path / "wrong.onnx"), "--json", "--samples", "1"],
    }
    for verb, argv in runs.items():
        status, data = _run(*argv)
        assert status in (0, 1), verb
        _validate(data, schemas[verb], schemas, verb)
    # Every field of a diagnostic and of the dimension table appears at least once above.
    status, data = _run("annotate", model, "-o", str(tmp_path / "o2.onnx"), "--json")
    kinds = {v["kind"] for v in data["dims"]["variables"]}
    assert {"declared", "fresh"} <= kinds and data["diagnostics"]


# -- the code the docs show --------------------------------------------------------------------


def test_getting_started_python_runs(monkeypatch, capsys):
    page = (DOCS / "getting-started.md").read_text(encoding="utf-8")
    block = page.split("## 7. From Python", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(ROOT)
    exec(compile(block, "getting-started.md", "exec"), {})
    out = capsys.readouterr().out
    assert "[4, 9, 32]" in out and "batch: declared as 'batch'" in out


def test_infer_model_accepts_an_onnx_ir_model():
    """The optional `ir` extra: an onnx_ir.Model is inferred like its ModelProto."""
    ir = pytest.importorskip("onnx_ir")
    model = ir.load(str(EXAMPLE))
    result = infer.infer_model(model)
    assert str(result.type_of("last_hidden_state")) == "float[batch,sequence,32]"
    assert result.summary().values == 305 and len(result.model.graph.value_info) > 200


def _python_block(page: str, heading: str) -> str:
    return page.split(heading, 1)[1].split("```python\n", 1)[1].split("```", 1)[0]


def _run_record_block(monkeypatch, page: str) -> None:
    """The page's block of ``operator`` records, run into a rule table, an example list and a
    table of declared signatures of its own: each record registers its operator with its reason
    or rule, and each of its examples holds against what the walk then finds."""
    from infer.contract import registry as table_home
    from infer.contract import signature as schema
    from infer.contract.registry import Registry
    from signatures.kit import registry
    from tests.test_rule_examples import check_example

    table, examples = Registry(), []
    with monkeypatch.context() as patch:
        patch.setattr(table_home, "REGISTRY", table)  # (the kit registers into it, the walk reads it)
        patch.setattr(registry, "EXAMPLES", examples)
        patch.setattr(schema, "_custom", dict(schema._custom))
        exec(compile(_python_block(page, "## Any other domain: one record"), "adding-an-operator.md", "exec"), {})
        entries = {e.op_type: e for e in table.entries()}
        assert sorted(entries) == ["RunBlob", "ScaledTanh", "SplitHeads"], entries
        assert entries["ScaledTanh"].pattern and not entries["RunBlob"].supported
        assert {ex.op_type for ex in examples} == set(entries)
        for ex in examples:
            assert schema.signature(ex.domain, ex.op_type, 1) is not None
            check_example(ex)


def test_adding_an_operator_blocks_run(monkeypatch):
    """The page's DSL block, run into a rule table of its own, registers what the library
    registers, and the examples on the page hold against it; its block of records runs (see
    ``_run_record_block``); the examples of its last block hold against the library's rules (each
    checked as tests/test_rule_examples.py checks them)."""
    from signatures.kit import registry
    from tests.test_rule_examples import check_example

    page = (DOCS / "adding-an-operator.md").read_text(encoding="utf-8")
    from infer.contract import registry as contract_registry
    from infer.contract.registry import Registry

    table, examples = Registry(), []
    with monkeypatch.context() as patch:
        patch.setattr(contract_registry, "REGISTRY", table)
        patch.setattr(registry, "EXAMPLES", examples)
        exec(compile(_python_block(page, "## Dims rearranged"), "adding-an-operator.md", "exec"), {})
        assert table.entries() and examples
        for ex in examples:
            check_example(ex)
    for entry in table.entries():
        ours = registry.lookup(entry.domain, entry.op_type, entry.since)
        assert ours is not None and ours.pattern == entry.pattern, f"the page's {entry.op_type} is not the library's"
    _run_record_block(monkeypatch, page)
    tests: list = []
    with monkeypatch.context() as patch:
        patch.setattr(registry, "EXAMPLES", tests)
        exec(
            compile(_python_block(page, "## Its tests, beside it"), "adding-an-operator.md", "exec"),
            {"example": registry.example},
        )
    assert tests
    for ex in tests:
        check_example(ex)


def test_the_custom_domain_blocks_are_the_shipped_module():
    """docs/adding-an-operator.md shows a new domain's records as signatures/custom/ai_onnx_contrib.py
    has them (the file's examples run in tests/test_rule_examples.py, its kernels in
    tests/test_custom_ai_onnx_contrib.py)."""
    page = (DOCS / "adding-an-operator.md").read_text(encoding="utf-8")
    section = page.split("## A new custom domain: one file", 1)[1].split("\n## ", 1)[0]
    blocks = [b.split("```", 1)[0] for b in section.split("```python\n")[1:]]
    shipped = (ROOT / "signatures" / "custom" / "ai_onnx_contrib.py").read_text(encoding="utf-8")
    assert len(blocks) == 2
    for block in blocks:
        assert block in shipped, f"the page's block is not in the module:\n{block}"
