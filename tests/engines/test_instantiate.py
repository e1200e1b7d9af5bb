"""Quantified queries made quantifier-free (`encode.instantiate`): hypotheses instantiated at the
index terms, goals skolemised. Only `unsat` of the weaker query may be believed."""

from __future__ import annotations

import z3
from quokka.verifier.encode import instantiate

A = z3.Array("a", z3.IntSort(), z3.IntSort())
IDX, K = z3.Int("i"), z3.Int("k")


def filled(hi: z3.ArithRef, value: z3.ArithRef | None = None) -> z3.BoolRef:
    """forall k in [0, hi): a[k] == 3k + 1 (or `value`)."""
    return z3.ForAll([K], z3.Implies(z3.And(K >= 0, hi > K), A[K] == (3 * K + 1 if value is None else value)))


def unsat(assertions: list[z3.BoolRef]) -> bool:
    weaker = instantiate.instantiate(assertions)
    assert weaker is not None
    assert not any(instantiate.has_quantifier(a) for a in weaker.assertions)
    solver = z3.Solver()
    solver.add(*weaker.assertions)
    return solver.check() == z3.unsat


def test_a_hypothesis_instantiated_at_the_goals_reads_proves_the_loop_step():
    post = z3.Store(A, IDX, 3 * IDX + 1)
    goal = z3.ForAll([K], z3.Implies(z3.And(K >= 0, K < IDX + 1), z3.Select(post, K) == 3 * K + 1))
    assert unsat([IDX >= 0, filled(IDX), z3.Not(goal)])


def test_the_checking_loop_reads_two_cells_and_both_are_instances():
    assert unsat([IDX >= 1, IDX < 100, filled(z3.IntVal(100)), z3.Not(A[IDX] == A[IDX - 1] + 3)])


def test_a_wrong_goal_is_not_proved():
    post = z3.Store(A, IDX, 3 * IDX + 2)  # the wrong formula
    goal = z3.ForAll([K], z3.Implies(z3.And(K >= 0, K < IDX + 1), z3.Select(post, K) == 3 * K + 1))
    assert not unsat([IDX >= 0, filled(IDX), z3.Not(goal)])


def test_an_off_by_one_range_is_not_proved():
    post = z3.Store(A, IDX, 3 * IDX + 1)
    goal = z3.ForAll([K], z3.Implies(z3.And(K >= 0, K < IDX + 2), z3.Select(post, K) == 3 * K + 1))
    assert not unsat([IDX >= 0, filled(IDX), z3.Not(goal)])


def test_a_goal_is_skolemised_never_weakened():
    """With no hypothesis, the goal `forall k. a[k] == 0` over an arbitrary array has a
    counterexample: skolemising keeps the query satisfiable (a weakened goal would not)."""
    goal = z3.ForAll([K], z3.Implies(z3.And(K >= 0, K < 10), A[K] == 0))
    assert not unsat([z3.Not(goal)])


def test_instances_are_taken_per_array():
    b = z3.Array("b", z3.IntSort(), z3.IntSort())
    hyp = z3.ForAll([K], z3.Implies(z3.And(K >= 0, K < 10), b[K] == 0))
    query = [hyp, A[IDX] == 1, b[IDX + 1] == 1, IDX >= 0, IDX < 5]
    weaker = instantiate.instantiate(query)
    assert weaker is not None and weaker.instances == 1  # at i + 1, the one read of b
    solver = z3.Solver()
    solver.add(*weaker.assertions)
    assert solver.check() == z3.unsat


def test_a_quantifier_of_mixed_polarity_is_left_to_the_solver():
    assert instantiate.instantiate([filled(IDX) == (IDX > 3)]) is None
    assert instantiate.instantiate([IDX > 3]) is None  # nothing to instantiate


def test_violated_instances_are_those_the_model_breaks():
    q = filled(z3.IntVal(10))
    solver = z3.Solver()
    solver.add(A[2] == 0, A[3] == 10)
    assert solver.check() == z3.sat
    bad = instantiate.violated(q, [z3.IntVal(2), z3.IntVal(3), z3.IntVal(20)], solver.model())
    assert len(bad) == 1 and z3.is_false(solver.model().eval(bad[0]))
