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


# -- comparisons read from the terms, and sums grown one term at a time (issue 19) ---------------


@settings(max_examples=300, deadline=None)
@given(expr_and_value(), expr_and_value(), BINDINGS)
def test_quick_comparison_claims_what_the_slow_path_and_integers_confirm(p, q, env):
    """Whatever ``_quick_difference`` says of ``a - b`` holds: a constant is the difference; a
    side it calls unbounded has no bound the slow path finds, and pushing one variable far makes
    the difference pass any bound on that side, at integers."""
    (a, fa), (b, fb) = p, q
    if isinstance(a, int) and isinstance(b, int):
        return
    quick = D._quick_difference(D._wrap(a), D._wrap(b))
    if quick is None:
        return
    const, below, above = quick
    d = D._difference(a, b)
    if const is not None:
        assert d == const and fa(env) - fb(env) == const
        return
    lo, hi = D.bounds(d)
    assert not (below and lo is not None), f"{D.to_str(d)}: unbounded below, yet >= {lo}"
    assert not (above and hi is not None), f"{D.to_str(d)}: unbounded above, yet <= {hi}"
    for unbounded, sign in ((below, -1), (above, 1)):
        if unbounded:
            far = [{**env, s.name: 10**40} for s in d.free_symbols]  # past every product of the others
            assert any(sign * (fa(e) - fb(e)) > 10**38 for e in far), f"{D.to_str(d)} is bounded ({sign})"


def test_quick_comparisons():
    n, m, u = D.symbol("n"), D.symbol("m"), D.fresh_symbol("u")
    big = D.symbol("x0")
    for i in range(1, 40):
        big = D.dmax(big, D.symbol(f"x{i}"))
    assert D._quick_difference(n, m) == (None, True, True)
    assert D._quick_difference(D.add(n, 3), D.add(n, 1))[0] == 2
    assert D._quick_difference(big, n) == (None, True, True)  # max(x0..x39) - n: no bound at all
    assert D._quick_difference(n, D.add(n, u)) == (None, True, False)  # -u: bounded above by 0
    assert D._quick_difference(D.floordiv(n, 2), n) == (None, False, False)  # n in both terms
    assert D.equal(big, n) is None and D.less(n, big) is None and D.less(n, D.add(n, 1)) is True
    assert D.equal(D.add(n, m), D.add(m, D.add(n, 0))) is True and D.equal(D.add(n, 2), n) is False


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from([-3, -1, 1, 2, 5]), st.integers(0, 30)), min_size=2, max_size=25),
    st.integers(-3, 3),
    st.tuples(st.sampled_from([-2, -1, 1, 3]), st.integers(0, 35), st.booleans()),
)
def test_a_term_inserted_into_a_sum_is_the_sum_sympy_builds(terms, const, extra):
    import sympy

    def var(i: int, fresh: bool = False) -> sympy.Symbol:
        return D.fresh_symbol(f"u{i}") if fresh else D.symbol(f"x{i}")

    a = sympy.Add(*(c * var(i) for c, i in terms), const)
    c, i, fresh = extra
    b = c * var(i, fresh)
    quick = D._insert_term(a, b)
    if quick is not None:
        built = sympy.Add(a, b)
        assert quick == built and quick.args == built.args, (a, b)
    assert D._add(a, b) == sympy.Add(a, b)


@pytest.mark.timeout(60)
def test_a_sum_grown_one_extent_at_a_time_stays_cheap():
    d: D.Dim = D.symbol("x0")
    for i in range(1, 250):
        d = D.add(d, D.symbol(f"x{i}"))
    assert len(d.args) == 250 and D.lower_bound(d) == 250
    env = {f"x{i}": i + 1 for i in range(250)}
    assert D.evaluate(d, env) == sum(env.values())
