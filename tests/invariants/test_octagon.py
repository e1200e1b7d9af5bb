"""Octagonal bounds, the support rule, and congruences."""

from quokka.invariants.facts import Fact, holds
from quokka.invariants.octagon import Observations, OctagonConfig, congruences, pair_bounds, unary_bounds
from quokka.verifier.ir import INT, UINT


def _text(f: Fact) -> str:
    lhs = " + ".join(f"{c}*{m[0][0]}" for m, c in f.lhs)
    if f.modulus:
        lhs = f"{lhs} % {f.modulus}"
    return f"{lhs} {f.op} {f.rhs[0][1] if f.rhs else 0}"


def _texts(facts):
    return {_text(f) for f in facts}


def _counter_states(runs=range(1, 9)):
    # i runs from 0 to n; one state per run per iteration
    return [{"i": i, "n": n} for n in runs for i in range(n + 1)]


def _counter_runs():
    return [(n,) for n in range(1, 9) for _ in range(n + 1)]


def test_unary_bounds_skip_type_edges_and_unsupported_extremes():
    states = _counter_states()
    obs = Observations.of(states, _counter_runs())
    facts = unary_bounds(["i", "n"], obs, {"i": INT, "n": INT})
    # i >= 0 is plausible; i <= 8 and n <= 8 are reached by one run only; n >= 1 is plausible
    assert _texts(facts) == {"1*i >= 0", "1*n >= 1"}
    unsigned = unary_bounds(["i"], Observations.of([{"i": 0}, {"i": 3}]), {"i": UINT})
    assert _texts(unsigned) == set()  # 0 is the type's minimum, 3 is unsupported


def test_bounds_reached_by_many_runs_are_kept():
    states = [{"x": x} for x in range(11)]
    obs = Observations.of(states, [(1, 2)] * 11)
    assert _texts(unary_bounds(["x"], obs, {"x": INT})) == {"1*x >= 0", "1*x <= 10"}
    obs_consts = Observations.of(states, [(1,)] * 11, constants=frozenset({10}))
    assert "1*x <= 10" in _texts(unary_bounds(["x"], obs_consts, {"x": INT}))


def test_pair_bounds_only_when_tighter_than_the_unary_ones():
    states = _counter_states()
    facts = pair_bounds(["i", "n"], Observations.of(states))
    assert _texts(facts) == {"1*i + -1*n <= 0"}
    assert all(holds(f, s) for f in facts for s in states)


def test_pair_bounds_with_large_constants_are_dropped():
    states = [{"x": k, "y": k + 100 + (k % 3)} for k in range(50)]
    assert pair_bounds(["x", "y"], Observations.of(states)) == []
    wide = pair_bounds(["x", "y"], Observations.of(states), OctagonConfig(pair_constant_limit=200))
    assert _texts(wide) == {"1*x + -1*y >= -102", "1*x + -1*y <= -100"}


def test_congruences_from_the_gcd_of_differences():
    states = [{"z": 6 * k + 6, "w": 4 * k + 1, "v": k} for k in range(10)]
    facts = congruences(["z", "w", "v"], Observations.of(states))
    assert _texts(facts) == {"1*z % 6 == 0", "1*w % 4 == 1"}
    assert all(holds(f, s) for f in facts for s in states)


def test_a_large_modulus_is_a_program_constant_that_divides_the_gcd():
    # x += 1048576 * n: the runs' gcd may be any multiple of 2**20; the program's constant is kept
    states = [{"x": (1 << 21) * k, "y": 1000 * k + 7} for k in (1, 3, 4, 9)]
    facts = congruences(["x", "y"], Observations.of(states, constants=frozenset({1 << 20, 5})))
    assert _texts(facts) == {"1*x % 1048576 == 0"}  # y: gcd 1000 is too large, 5 too small to stand for it
    assert congruences(["x"], Observations.of(states)) == []  # no such constant: no claim


def test_congruence_respects_c_remainders_of_negative_values():
    # -3, -1, 1, 3: gcd of differences 2, but C's % gives -1 and 1: no common residue
    states = [{"x": v} for v in (-3, -1, 1, 3)]
    assert congruences(["x"], Observations.of(states)) == []
    neg = [{"x": v} for v in (-7, -5, -3)]
    (fact,) = congruences(["x"], Observations.of(neg))
    assert fact.modulus == 2 and fact.rhs == (((), -1),)


def test_parity_of_sums():
    states = [{"x": a, "y": b} for a in range(6) for b in range(6) if (a + b) % 2 == 0]
    facts = congruences(["x", "y"], Observations.of(states))
    assert _texts(facts) == {"1*x + 1*y % 2 == 0"}
    mixed = [{"x": a, "y": b} for a in range(-3, 4) for b in range(0, 7) if (a + b) % 2 == 1]
    # x + y takes -1 and 1 as C remainders; x - y ... as well: no single residue
    assert congruences(["x", "y"], Observations.of(mixed)) == []


def test_holds_uses_truncating_remainder():
    fact = Fact(((((("x", 1),), 1),)), "==", (((), -1),), "congruence", 2)
    assert holds(fact, {"x": -3}) and not holds(fact, {"x": 3})


def test_unsupported_extremes_widen_to_a_nearby_program_constant():
    states = [{"x": x, "y": y} for x in range(8) for y in range(3)]
    obs = Observations.of(states, [(k,) for k in range(len(states))], constants=frozenset({10}))
    # x's largest value 7 is reached in several runs: kept as it is
    assert "1*x <= 7" in _texts(unary_bounds(["x"], obs, {"x": INT}))
    lonely = Observations.of(states, [(0,)] * len(states), constants=frozenset({10, 40}))
    # one run only: 7 is widened to 9 (10 - 1 is plausible too); nothing within reach of 40
    assert _texts(unary_bounds(["x"], lonely, {"x": INT})) == {"1*x >= 0", "1*x <= 9"}
    no_constants = Observations.of(states, [(0,)] * len(states))
    assert _texts(unary_bounds(["x"], no_constants, {"x": INT})) == {"1*x >= 0"}
