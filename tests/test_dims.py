"""The expression core: canonical forms, and soundness of every simplification (hypothesis).

Random expressions are built through ``infer.dims`` and, separately, computed with plain
integers at random bindings (declared variables positive, fresh ones from 0); the two must always
agree.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from infer import dims as D

NAMES = ("a", "b", "c")
FRESH = ("u", "v")  # fresh variables: they may be 0 at run time
BINDINGS = st.fixed_dictionaries({**{n: st.integers(1, 40) for n in NAMES}, **{n: st.integers(0, 40) for n in FRESH}})


@st.composite
def expr_and_value(draw, depth: int = 0):
    """A (dim, function from bindings to int) pair built from the same random tree."""
    if depth > 3 or draw(st.integers(0, 3)) == 0:
        if draw(st.booleans()):
            n = draw(st.integers(-6, 12))
            return n, lambda env, n=n: n
        name = draw(st.sampled_from(NAMES + FRESH))
        sym = D.fresh_symbol(name) if name in FRESH else D.symbol(name)
        return sym, lambda env, name=name: env[name]
    op = draw(st.sampled_from(["add", "sub", "mul", "floordiv", "ceildiv", "mod", "max", "min"]))
    a, fa = draw(expr_and_value(depth + 1))
    if op in ("floordiv", "ceildiv", "mod"):
        k = draw(st.integers(1, 5))
        b, fb = draw(
            st.sampled_from(
                [
                    (k, lambda env, k=k: k),
                    (D.symbol("a"), lambda env: env["a"]),
                    (D.add(D.mul(D.symbol("a"), D.symbol("b")), k), lambda env, k=k: env["a"] * env["b"] + k),
                ]
            )
        )
    else:
        b, fb = draw(expr_and_value(depth + 1))
    ops = {
        "add": (D.add, lambda x, y: x + y),
        "sub": (D.sub, lambda x, y: x - y),
        "mul": (D.mul, lambda x, y: x * y),
        "floordiv": (D.floordiv, lambda x, y: x // y),
        "ceildiv": (D.ceildiv, lambda x, y: -((-x) // y)),
        "mod": (D.mod, lambda x, y: x % y),
        "max": (D.dmax, max),
        "min": (D.dmin, min),
    }
    sym, num = ops[op]
    return sym(a, b), lambda env: num(fa(env), fb(env))


@settings(max_examples=400, deadline=None)
@given(expr_and_value(), BINDINGS)
def test_simplification_is_sound(pair, env):
    d, f = pair
    assert D.evaluate(d, env) == f(env), f"{D.to_str(d)} at {env}"


@settings(max_examples=200, deadline=None)
@given(expr_and_value(), expr_and_value(), BINDINGS)
def test_comparisons_are_sound(p, q, env):
    (a, fa), (b, fb) = p, q
    eq, lt = D.equal(a, b), D.less(a, b)
    if eq is not None:
        assert eq == (fa(env) == fb(env)), f"equal({D.to_str(a)}, {D.to_str(b)}) = {eq} at {env}"
    if lt is not None:
        assert lt == (fa(env) < fb(env)), f"less({D.to_str(a)}, {D.to_str(b)}) = {lt} at {env}"


def test_readable_forms():
    h, s = D.symbol("h"), D.symbol("seq")
    assert D.to_str(D.add(s, 5)) == "seq + 5"
    assert D.to_str(D.add(D.floordiv(D.sub(h, 3), 2), 1)) == "floor((h + 1)/2) - 1"
    assert D.to_str(D.ceildiv(h, 2)) == "floor((h + 1)/2)"
    assert D.to_str(D.dmax(h, s)) == "max(h, seq)"


def test_canonical_forms_compare_equal():
    h, w = D.symbol("h"), D.symbol("w")
    assert D.equal(D.dmin(h, w), D.dmin(w, h)) is True
    assert D.equal(D.floordiv(D.mul(4, h), 2), D.mul(2, h)) is True
    assert D.equal(D.floordiv(D.mul(h, w), w), h) is True
    assert D.dmax(h, D.dmin(h, 64)) == h
    assert D.dmax(h, 1) == h and D.dmin(h, 1) == 1


def test_distinct_variables_are_never_equated():
    n, m = D.symbol("n"), D.symbol("m")
    assert D.equal(n, m) is None  # Clause 9.3
    assert D.equal(n, 3) is None
    assert D.equal(n, 0) is False and D.equal(n, -1) is False  # extents are positive


def test_integer_fast_paths_stay_int():
    assert D.add(2, 3) == 5 and isinstance(D.mul(2, 3), int)
    assert D.floordiv(7, 2) == 3 and D.ceildiv(7, 2) == 4 and D.floordiv(7, 0) is None
    assert D.product([2, 3, None]) is None and D.product([0, None]) == 0


def test_mod_of_products_holding_a_mod():
    # sympy 1.14's Mod squares an inner Mod of another modulus (sympy issue 28744) and pulls a
    # factor out of a nested Mod (issue 29757); each of these was found wrong that way.
    a, b, c = D.symbol("a"), D.symbol("b"), D.symbol("c")
    cases = [
        (D.mod(D.mul(7, D.mod(c, a)), 3), lambda e: (7 * (e["c"] % e["a"])) % 3),
        (D.mod(D.mul(b, D.mod(D.add(c, 4), a)), 3), lambda e: (e["b"] * ((e["c"] + 4) % e["a"])) % 3),
        (D.mod(D.mod(D.mul(D.mod(a, 4), 2), 4), a), lambda e: (((e["a"] % 4) * 2) % 4) % e["a"]),
        (D.mod(D.mul(128, D.mod(a, 3)), 356), lambda e: (128 * (e["a"] % 3)) % 356),
    ]
    for d, f in cases:
        for env in ({"a": 3, "b": 1, "c": 1}, {"a": 7, "b": 3, "c": 2}, {"a": 5, "b": 2, "c": 8}):
            assert D.evaluate(d, env) == f(env), f"{D.to_str(d)} at {env}"


def test_mod_canonical_forms():
    h = D.symbol("h")
    assert D.mod(D.add(D.mul(4, h), 6), 4) == 2
    assert D.mod(D.mod(h, 8), 4) == D.mod(h, 4)
    assert D.mod(D.mod(h, 3), 4) == D.mod(h, 3)
    assert D.mod(D.mul(3, h), h) == 0
    assert D.to_str(D.mod(D.add(h, 5), 4)) == "mod(h + 1, 4)"


def test_an_argument_another_provably_beats_is_dropped():
    m, n, u = D.symbol("M"), D.symbol("N"), D.fresh_symbol("u")
    assert D.dmin(m, D.add(m, n)) == m
    assert D.dmax(m, D.add(m, n)) == D.add(m, n)
    assert D.dmax(m, D.add(m, u)) == D.add(m, u)  # u >= 0
    assert D.dmin(m, D.add(m, u)) == m
    assert D.to_str(D.dmin(m, n)) == "min(M, N)"  # unrelated: both stay


def test_fresh_variables_may_be_zero():
    u = D.fresh_symbol("u")
    assert D.lower_bound(u) == 0
    assert D.to_str(D.dmax(u, 1)) == "max(u, 1)"
    assert D.less(0, u) is None
    assert D.lower_bound(D.add(D.symbol("N"), u)) == 1


@pytest.mark.timeout(60)  # pairwise at every step, it took minutes
def test_extremum_of_many_arguments_is_not_compared_pairwise():
    """A max folded over 200 distinct extents: past EXTREMUM_COMPARED the arguments are kept as
    given (sorted, merged), still exact."""
    d: D.Dim = D.symbol("x0")
    for i in range(1, 200):
        d = D.dmax(d, D.symbol(f"x{i}"))
    assert len(d.args) == 200
    env = {f"x{i}": (i * 37) % 101 + 1 for i in range(200)}
    assert D.evaluate(d, env) == max(env.values())
