from fractions import Fraction
from pathlib import Path

import pytest
from llm_programs import LINE, SOURCE
from quokka.invariants.completion import (
    CompletionProposer,
    collect_states,
    complete,
    fit_bound,
    fit_equalities,
    fitted_texts,
    render_bound,
    to_poly,
)
from quokka.invariants.llm.answers import parse_answers
from quokka.invariants.protocol import ProposalContext, loop_contexts
from quokka.verifier.frontend import lower
from quokka.verifier.ir import INT, Var
from quokka.verifier.ir.builder import add, binop, eq, mul, num, sub

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def poly(pairs):
    return {tuple(sorted(m.items())): Fraction(c) for m, c in pairs}


def test_to_poly_expands_products_and_differences():
    n, x = Var("n", INT), Var("x", INT)
    e = sub(mul(add(n, num(1)), add(n, num(1))), x)  # (n+1)*(n+1) - x
    assert to_poly(e) == poly([({"n": 2}, 1), ({"n": 1}, 2), ({}, 1), ({"x": 1}, -1)])


def test_to_poly_refuses_division_and_comparisons():
    n = Var("n", INT)
    assert to_poly(add(n, binop("/", n, num(2)))) is None
    assert to_poly(eq(n, num(0))) is None
    assert to_poly(add(n, num(0))) == poly([({"n": 1}, 1)])


def test_fit_equality_recovers_the_right_coefficient():
    states = [{"s": 6 * i, "i": i} for i in range(10)]
    diff = poly([({"s": 1}, 1), ({"i": 1}, -9)])  # s - 9*i
    (fitted,) = fit_equalities(diff, states)
    ratio = fitted[(("s", 1),)]
    assert {m: c / ratio for m, c in fitted.items()} == poly([({"s": 1}, 1), ({"i": 1}, -6)])


def test_fit_equality_needs_enough_distinct_states():
    diff = poly([({"s": 1}, 1), ({"i": 1}, -9)])
    assert fit_equalities(diff, [{"s": 0, "i": 0}, {"s": 6, "i": 1}] * 20) == []


def test_exhaustive_states_need_no_spare_ones():
    states = [{"a": 1, "q": 0}, {"a": 0, "q": 0}]  # every state of a small input box
    diff = poly([({"a": 1}, 1), ({"q": 1}, 1)])  # a + q == 0: false, but q == 0 holds
    assert fit_equalities(diff, states) == []
    (fitted,) = fit_equalities(diff, states, exhaustive=True)
    assert set(fitted) == {(("q", 1),)}
    assert fit_equalities(diff, [], exhaustive=True) == []


def test_fit_equality_returns_nothing_when_the_candidate_already_fits():
    states = [{"s": 6 * i, "i": i} for i in range(10)]
    assert fit_equalities(poly([({"s": 1}, 1), ({"i": 1}, -6)]), states) == []


def test_fit_bound_moves_the_constant_to_the_tightest_value():
    states = [{"x": 2 * n + (n % 3), "n": n} for n in range(20)]
    diff = poly([({"x": 1}, 1), ({"n": 1}, -2), ({}, -5)])  # x - 2n - 5 <= 0
    _, rel, bound = fit_bound(diff, "<=", states)
    assert (rel, bound) == ("<=", 2)
    assert fit_bound(poly([({"x": 1}, 1), ({"n": 1}, -2), ({}, -2)]), "<=", states) is None


def test_fitted_texts_render_readable_c():
    names = {"s": "s", "i": "i", "n": "n"}
    s, i = Var("s", INT), Var("i", INT)
    states = [{"s": 3 * k * k + 3 * k + 1, "i": k, "n": 50} for k in range(12)]
    shape = eq(s, add(add(mul(num(2), mul(i, i)), mul(num(5), i)), num(1)))
    assert fitted_texts(shape, states, names) == ["s == 3*i*i + 3*i + 1"]


@pytest.mark.parametrize(
    ("pairs", "rel", "bound", "text"),
    [
        ([({"x": 1}, 1), ({"n": 1}, -5)], "<=", 7, "x <= 5*n + 7"),
        ([({"x": 1}, 1), ({"n": 1}, -1)], "<=", -2, "x <= n - 2"),
        ([({"x": 1}, -1)], "<=", 5, "x >= -5"),
        ([({"z": 1}, 1)], ">=", 6, "z >= 6"),
    ],
)
def test_render_bound_moves_negative_terms_right(pairs, rel, bound, text):
    assert render_bound(poly(pairs), rel, bound, {"x": "x", "n": "n", "z": "z"}) == text


def test_complete_fixes_the_constant_of_a_model_candidate(program):
    cands = parse_answers([f"After line {LINE}, insert assume(s == 9*i && i <= n + 4);"], program)
    states = collect_states(program, seed=1)
    out = complete(cands, states, program)
    assert [c.text for c in out] == ["s == 3*i", "i <= n"]
    assert all(c.proposer == "completion" and c.raw in ("s == 9*i", "i <= n + 4") for c in out)


def test_collect_states_only_records_reachable_states(program):
    states = collect_states(program, seed=3)[program.loops[0].id]
    assert len(states) > 20
    assert all(s["s"] == 3 * s["i"] and 0 <= s["i"] <= s["n"] <= 100 for s in states)


def test_cohencu_cubes_are_refitted():
    program = lower(EXAMPLES / "cohencu.c", "LP64")
    line = program.loops[0].insert_after_line
    answer = f"After line {line}, insert assume(z == 9*n + 6 && y == 3*n*n + 2*n + 1 && x == 2*n*n*n);"
    out = complete(parse_answers([answer], program), collect_states(program), program)
    assert [c.text for c in out] == ["z == 6*n + 6", "y == 3*n*n + 3*n + 1", "x == n*n*n"]


class _Fixed:
    name = "llm"

    def __init__(self, answer):
        self.answer = answer

    def propose(self, context):
        return parse_answers([self.answer], context.program)


def test_completion_proposer_adds_fitted_versions(program):
    inner = _Fixed(f"After line {LINE}, insert assume(s == 9*i); After line {LINE}, insert assume(i = 2);")
    proposer = CompletionProposer(inner)
    out = proposer.propose(ProposalContext(program, SOURCE, loop_contexts(program)))
    assert [(c.proposer, c.text) for c in out if not c.rejected] == [
        ("llm", "s == 9*i"),
        ("completion", "s == 3*i"),
    ]
    assert len([c for c in out if c.rejected]) == 1


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("garbage", [("llm", "", True)]),
        (f"After line {LINE}, insert assume(i % 2 == 0);", [("llm", "i%2 == 0", False)]),
    ],
)
def test_completion_proposer_leaves_non_polynomial_or_rejected_alone(program, answer, expected):
    proposer = CompletionProposer(_Fixed(answer))
    out = proposer.propose(ProposalContext(program, SOURCE, loop_contexts(program)))
    assert [(c.proposer, c.text, c.rejected is not None) for c in out] == expected  # nothing added
