"""Polynomial equalities from hand-made state lists."""

import time

from quokka.invariants.polynomial import EqualityConfig, column_order, equalities, monomials, solved_variable


def _cohencu_states() -> list[dict[str, int]]:
    states = []
    for a in range(-3, 40):
        n, x, y, z = 0, 0, 1, 6
        while True:
            states.append({"a": a, "n": n, "x": x, "y": y, "z": z})
            if not n <= a:
                break
            n, x, y, z = n + 1, x + y, y + z, z + 6
    return states


def _as_dict(eq):
    return {m: c for m, c in eq.poly}


def test_cohencu_gives_exactly_the_three_defining_equations():
    start = time.monotonic()
    eqs = equalities(["z", "y", "x", "n", "a"], _cohencu_states())
    assert time.monotonic() - start < 2.0
    assert [e.solved for e in eqs] == ["z", "y", "x"]
    z, y, x = (_as_dict(e) for e in eqs)
    assert z == {(("z", 1),): 1, (("n", 1),): -6, (): -6}
    assert y == {(("y", 1),): 1, (("n", 2),): -3, (("n", 1),): -3, (): -1}
    assert x == {(("x", 1),): 1, (("n", 3),): -1}


def test_a_linear_two_variable_loop():
    states = [{"x": k, "y": 2 * k + 3, "n": n} for n in range(8) for k in range(n + 1)]
    (eq,) = equalities(["y", "x", "n"], states)
    assert eq.solved == "y" and eq.degree == 1
    assert _as_dict(eq) == {(("y", 1),): 1, (("x", 1),): -2, (): -3}


def test_sum_of_squares_is_found_at_degree_three_with_a_rational_leading_coefficient():
    states = []
    for n in range(0, 30):
        y = 0
        for x in range(n + 1):
            states.append({"x": x, "y": y, "n": n})
            y += (x + 1) * (x + 1)
    (eq,) = equalities(["y", "x", "n"], states)
    # 6*y == 2*x^3 + 3*x^2 + x
    assert _as_dict(eq) == {(("y", 1),): 6, (("x", 3),): -2, (("x", 2),): -3, (("x", 1),): -1}


def test_degree_four_when_few_variables_remain():
    states = []
    for k in range(0, 25):
        y = x = c = 0
        while True:
            states.append({"k": k, "y": y, "x": x, "c": c})
            if not c < k:
                break
            c, y = c + 1, y + 1
            x = y * y * y + x
    eqs = equalities(["x", "y", "c", "k"], states)
    assert [e.solved for e in eqs] == ["y", "x"]
    assert _as_dict(eqs[1]) == {(("x", 1),): 4, (("c", 4),): -1, (("c", 3),): -2, (("c", 2),): -1}
    capped = equalities(["x", "y", "c", "k"], states, EqualityConfig(high_degree=3))
    assert [e.solved for e in capped] == ["y"]


def test_multiples_of_a_relation_are_not_reported_again():
    # x*y == 12 on every state (not solvable for a variable): degree 2 finds it once, degree 3
    # has (x*y - 12)*x and (x*y - 12)*y in its null space, which are not news.
    divisors = (1, 2, 3, 4, 6, 12, -1, -2, -3, -4, -6, -12)
    states = [{"x": d, "y": 12 // d, "w": w} for d in divisors for w in range(5)]
    eqs = equalities(["x", "y", "w"], states)
    assert len(eqs) == 1
    assert eqs[0].solved is None and _as_dict(eqs[0]) == {(("x", 1), ("y", 1)): 1, (): -12}


def test_powers_beyond_the_number_of_distinct_values_are_left_out():
    # b is a flag: b*b == b holds but says nothing; no relation involves anything else.
    states = [{"i": i, "b": i % 2, "m": m} for i in range(20) for m in range(4)]
    assert all(e.degree == 1 or (("b", 2),) not in _as_dict(e) for e in equalities(["i", "b", "m"], states))
    expected = [(("b", 1),), (("i", 1),), (("b", 1), ("i", 1)), (("i", 2),)]
    assert monomials(["b", "i"], 2, {"b": 1, "i": 2}) == expected


def test_too_few_states_give_no_relations():
    states = [{"x": k, "y": k * k, "z": k + 1} for k in range(4)]
    assert equalities(["y", "x", "z"], states) == []


def test_column_order_puts_preferred_variables_last():
    cols = column_order(["z", "n"], monomials(["z", "n"], 2, {"z": 5, "n": 5}))
    assert cols[0] == ()
    assert cols[-1] == (("z", 1),) and cols[-2] == (("n", 1),)


def test_solved_variable_requires_a_purely_linear_occurrence():
    assert solved_variable(((( ("y", 1),), 1), ((("n", 2),), -3))) == "y"
    assert solved_variable((((("y", 1),), 1), ((("y", 1), ("n", 1)), -3))) is None
