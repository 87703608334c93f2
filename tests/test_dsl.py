"""The signature DSL (``signatures/kit/dsl.py``): what its patterns accept, what they refuse when
compiled, and where each entry says it was declared.

The registered patterns are run by their examples (tests/test_rule_examples.py); here the
language itself is checked through the engine, with patterns registered in a private table.
"""

from __future__ import annotations

import importlib
import inspect
import re

import pytest

import infer
import signatures
from infer.contract import registry as contract_registry
from infer.contract.registry import REGISTRY, Registry
from infer.core import types as T
from signatures.kit import registry
from signatures.kit.dsl import compile_pattern
from signatures.kit.registry import shape_rule

signatures.load_all()


@pytest.fixture
def private_registry(monkeypatch: pytest.MonkeyPatch) -> Registry:
    """An empty rule table in place of the library's, for the length of one test."""
    table = Registry()
    monkeypatch.setattr(contract_registry, "REGISTRY", table)
    monkeypatch.setattr(registry, "EXAMPLES", [])
    return table


# -- where an entry was declared ---------------------------------------------------------------


def test_every_dsl_entry_names_the_module_that_declared_it():
    entries = [e for e in REGISTRY.entries() if e.pattern is not None]
    assert entries
    for e in entries:
        source = inspect.getsource(importlib.import_module(e.module))
        # (a pattern comes with shape_rule, or with an operator's record: operator(..., rule=...))
        declared = "shape_rule(" in source or re.search(rf'operator\(\s*"{e.op_type}"', source) is not None
        assert declared, f"{e.domain}:{e.op_type} says it was declared in {e.module}"


def test_an_unsupported_entry_names_the_module_that_declared_it():
    entries = [e for e in REGISTRY.entries() if not e.supported]
    assert entries
    for e in entries:
        source = inspect.getsource(importlib.import_module(e.module))
        record = re.search(rf'operator\(\s*"{e.op_type}"', source) and "unsupported=" in source  # (its record)
        assert "unsupported(" in source or record, e


def test_a_pattern_registered_here_is_declared_here(private_registry: Registry):
    shape_rule("Sin", "X[*s] -> Y[*s]")
    (entry,) = private_registry.entries()
    assert entry.module == __name__ and entry.pattern == "X[*s] -> Y[*s]"


# -- what a pattern may say --------------------------------------------------------------------


@pytest.mark.parametrize(
    "pattern",
    [
        "X[*a, *b] -> Y[*a]",  # two lists in one input
        "X[*s], Z[*s] -> Y[*s]",  # one list bound twice
        "X[n, *n] -> Y[n]",  # one name for a dim and a list
        "X[*s] -> Y[*s, n]",  # an output dim no input binds
        "X[n] -> Y[*s]",  # an output list no input binds
        "X[n] -> Y[*broadcast(n, s)]",  # broadcast of a dim
        "X[3, n] -> Y[n]",  # an integer extent in an input
        "X[_, n] -> Y[n]",  # a wildcard dim
        "X[n], B?[n] -> Y[n]",  # an optional input
        "X[n] -> Y",  # an output without brackets
        "X[n] -> Y[n +]",  # no dim expression
        "X[n] -> Y[axis]",  # an attribute
        "X[n] Y[n]",  # no arrow
        "X[n] -> Y[n] | X[n, m] -> Y[n], Z[m]",  # forms with different numbers of outputs
    ],
)
def test_a_pattern_outside_the_language_is_refused_when_compiled(pattern: str):
    with pytest.raises(ValueError):
        compile_pattern(pattern)


def test_output_dims_are_read_as_type_strings_read_dims(private_registry: Registry):
    shape_rule("MatMul", "A[n, k], B[k, m] -> Y[n * m, max(n, m), floor(k/2) + 1]")
    out = infer.infer_node("MatMul", ["float[N,K]", "float[K,M]"])
    assert str(out) == "float[M*N,max(M, N),floor(K/2) + 1]", out


def test_a_name_written_twice_must_agree(private_registry: Registry):
    shape_rule("MatMul", "A[n, k], B[k, m] -> Y[n, m, k]")
    out = infer.infer_node("MatMul", ["float[2,3]", "float[4,5]"])
    assert [d.code for d in out.diagnostics] == ["shape-mismatch"]
    assert "dimension 'k' 3 and 4 differ" in out.diagnostics[0].message
    # Distinct variables are not equated: an assumption is recorded, the first kept.
    out = infer.infer_node("MatMul", ["float[N,K]", "float[J,M]"])
    assert not out.diagnostics and str(out) == "float[N,M,K]"
    assert any("K == J" in f.text for f in out.dims.facts if f.kind == "assumption")
    # An integer says more than a variable.
    out = infer.infer_node("MatMul", ["float[N,K]", "float[8,M]"])
    assert str(out) == "float[N,M,8]"


def test_forms_are_tried_in_order_and_a_skipped_input_is_not_read(private_registry: Registry):
    shape_rule("Gemm", ["A[n], _, C[n] -> Y[n]", "A[*a], B[*b] -> Y[*broadcast(a, b)]", "A[] -> Y[]"])
    assert str(infer.infer_node("Gemm", ["float[N]", "float[*]", "float[N]"])) == "float[N]"
    assert str(infer.infer_node("Gemm", ["float[N,1]", "float[3]"])) == "float[N,3]"


def test_no_form_fits_known_ranks_is_a_shape_mismatch(private_registry: Registry):
    shape_rule("MatMul", ["A[k], B[k] -> Y[]", "A[n, k], B[k, m] -> Y[n, m]"])
    out = infer.infer_node("MatMul", ["float[2,3]", "float[3]"])
    assert [d.code for d in out.diagnostics] == ["shape-mismatch"]
    assert "ranks 2, 1" in out.diagnostics[0].message
    assert out.types == [T.tensor(T.elem_from_name("float"), None)]


def test_an_input_of_unknown_rank_leaves_the_outputs_unknown(private_registry: Registry):
    shape_rule("MatMul", ["A[k], B[k] -> Y[]", "A[n, k], B[k, m] -> Y[n, m]"])
    out = infer.infer_node("MatMul", ["float[*]", "float[3,4]"])
    assert not out.diagnostics
    assert out.types == [T.tensor(T.elem_from_name("float"), None)]


def test_several_outputs(private_registry: Registry):
    shape_rule("Dropout", "X[*s] -> Y[*s], M[*s]", since=13)
    out = infer.infer_node("Dropout", ["float[B,S]"], n_outputs=2)
    assert str(out) == "float[B,S], bool[B,S]"
