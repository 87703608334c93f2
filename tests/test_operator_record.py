"""The one registration record (``signatures.kit.operator.operator``): what each form registers."""

from __future__ import annotations

import pytest

from infer.contract import registry as table_home
from infer.contract import signature as schema
from infer.contract.context import RuleContext
from infer.contract.registry import Registry
from signatures.kit import registry
from signatures.kit.operator import case, formals, operator

DOMAIN = "com.example.records"
T = {"T": ("tensor(float)",)}
ONE = [case(["float[N]"], ["float[N]"])]


@pytest.fixture
def tables(monkeypatch):
    """A rule table, an example list and a table of declared signatures of the test's own."""
    table = Registry()
    monkeypatch.setattr(table_home, "REGISTRY", table)  # (the kit registers into it, the walk reads it)
    monkeypatch.setattr(registry, "EXAMPLES", [])
    monkeypatch.setattr(schema, "_custom", dict(schema._custom))
    yield table


def _same(ctx: RuleContext) -> list:
    return [ctx.shape(0)]


def test_formals_variadic_that_may_be_empty_and_of_mixed_types() -> None:
    (f,) = formals("inputs...?~:T")
    assert (f.option, f.min_arity, f.homogeneous) == ("variadic", 0, False)
    (g,) = formals("outputs...:T")
    assert (g.option, g.min_arity, g.homogeneous) == ("variadic", 1, True)
    with pytest.raises(ValueError, match="only a variadic"):
        formals("x~:T")


def test_each_form_registers_one_entry_with_its_module_purity_and_examples(tables: Registry) -> None:
    operator("Pattern", "X:T", "Y:T", domain=DOMAIN, types=T, rule="X[*s] -> Y[*s]", examples=ONE)
    operator("Opaque", "xs...?~:T", "ys...~:T", domain=DOMAIN, types=T, unsupported="a payload", examples=ONE)
    operator("Named", "X:T", "Y:T", domain=DOMAIN, types=T, rule=_same, pure=False, examples=ONE)

    @operator("Decorated", "X:T", "Y:T", domain=DOMAIN, types=T, since=2, examples=ONE)
    @operator("Decorated", "X:T", "Y:T", domain=DOMAIN, types=T, examples=ONE)
    def decorated(ctx: RuleContext) -> list:
        return [ctx.shape(0)]

    entries = {(e.op_type, e.since): e for e in tables.entries()}
    assert sorted(entries) == [("Decorated", 1), ("Decorated", 2), ("Named", 1), ("Opaque", 1), ("Pattern", 1)]
    assert {e.module for e in entries.values()} == {__name__}
    assert entries["Pattern", 1].pattern == "X[*s] -> Y[*s]" and entries["Pattern", 1].pure
    assert entries["Opaque", 1].reason == "a payload" and not entries["Opaque", 1].supported
    assert entries["Named", 1].rule is _same and not entries["Named", 1].pure
    assert entries["Decorated", 2].rule is decorated is entries["Decorated", 1].rule
    assert schema.signature(DOMAIN, "Opaque", 1).min_inputs == 0
    assert [s.since_version for s in schema._custom[DOMAIN, "Decorated"]] == [1, 2]
    assert {(x.op_type, x.module) for x in registry.EXAMPLES} == {(op, __name__) for op, _ in entries}


def test_a_record_refuses_what_it_cannot_mean(tables: Registry) -> None:
    with pytest.raises(ValueError, match="at least one example"):
        operator("NoExample", "X:T", "Y:T", domain=DOMAIN, types=T, rule="X[*s] -> Y[*s]")
    with pytest.raises(ValueError, match="not both"):
        operator("Both", "X:T", "Y:T", domain=DOMAIN, types=T, rule=_same, unsupported="why", examples=ONE)
    with pytest.raises(ValueError, match="only a rule function"):
        operator("Impure", "X:T", "Y:T", domain=DOMAIN, types=T, rule="X[*s] -> Y[*s]", pure=False, examples=ONE)
    done = operator("Done", "X:T", "Y:T", domain=DOMAIN, types=T, rule=_same, examples=ONE)
    with pytest.raises(TypeError, match="decorates no function"):
        done(_same)


def test_case_takes_an_attribute_named_like_its_own_parameters() -> None:
    c = case(["uint8[N]"], ["uint8[N]"], attrs={"opset": 13}, axis=1, opset=20)
    assert c.attrs == (("opset", 13), ("axis", 1)) and c.opset == 20
