"""Houdini: keeps the right invariants among junk, drops the wrong ones with reasons, never
proves an unsafe program."""

from __future__ import annotations

import pytest
from corpus import SAFE, UNSAFE, Example, doubling, twin
from mutants import conjuncts, guesses, mutant_maps
from quokka.verifier.engines.base import Budget, Status
from quokka.verifier.engines.houdini import houdini
from quokka.verifier.ir import Expr, Var
from quokka.verifier.ir.builder import add, and_, eq, le, lt, mul, num, or_
from state_sets import SQUARES, bounded_counter, points, reachable

WITH_INVARIANTS = [e for e in SAFE if e.invariants]


def _pool(example: Example, extra: int) -> dict[str, list[Expr]]:
    junk = guesses(example.program)[:extra]
    right = example.invariants or {}
    return {info.id: [*junk, *conjuncts(right[info.id])] if info.id in right else list(junk)
            for info in example.program.loops}


@pytest.mark.parametrize("example", WITH_INVARIANTS, ids=lambda e: e.name)
def test_right_conjuncts_survive_among_junk(example: Example) -> None:
    assert example.invariants is not None
    result = houdini(example.program, _pool(example, extra=12), Budget.of(60))
    assert result.complete
    assert result.result.status is Status.SAFE, result.result.reason
    for loop, inv in example.invariants.items():
        for part in conjuncts(inv):
            assert part in result.kept[loop]


@pytest.mark.parametrize("example", UNSAFE, ids=lambda e: e.name)
def test_houdini_never_proves_an_unsafe_example(example: Example) -> None:
    right = twin(example)
    pool: dict[str, list[Expr]] = {info.id: list(guesses(example.program)) for info in example.program.loops}
    for m in mutant_maps(example.program, right.invariants if right else None, count=6, seed=5):
        for loop, inv in m.items():
            pool[loop] += [p for p in conjuncts(inv) if p not in pool[loop]]
    if right is not None and right.invariants:
        for loop, inv in right.invariants.items():
            if loop in pool:
                pool[loop] += conjuncts(inv)
    result = houdini(example.program, pool, Budget.of(60))
    assert result.result.status is not Status.SAFE


def test_dropped_candidates_carry_the_failed_obligation() -> None:
    program, loop, x, y, n = doubling("t.c")
    wrong_init, wrong_step = eq(x, num(1)), le(y, num(5))
    result = houdini(program, {loop: [le(x, n), eq(y, mul(num(2), x)), wrong_init, wrong_step]},
                     Budget.of(30))
    assert result.result.status is Status.SAFE
    reasons = {d.expr: d for d in result.dropped}
    assert reasons[wrong_init].obligation == "initiation"
    assert reasons[wrong_step].obligation == "consecution"
    assert reasons[wrong_step].cti is not None
    assert result.reachable[loop] and result.ctis[loop]
    assert (loop, wrong_step) in result.reasons
    assert lt(x, n) not in result.kept[loop]


def test_safety_failure_is_unknown_with_reason() -> None:
    program, loop, x, _, n = doubling("t.c")
    result = houdini(program, {loop: [le(x, n)]}, Budget.of(30))
    assert result.complete and result.result.status is Status.UNKNOWN
    assert "do not imply safety" in result.result.reason
    assert le(x, n) in result.kept[loop]


def test_malformed_candidates_are_dropped() -> None:
    program, loop, x, _, n = doubling("t.c")
    bad = le(Var("ghost", x.type), n)
    result = houdini(program, {loop: [bad, le(x, n)]}, Budget.of(30))
    assert [d.obligation for d in result.dropped if d.expr == bad] == ["malformed"]


def test_exhausted_budget_is_incomplete_and_unknown() -> None:
    program, loop, x, y, n = doubling("t.c")
    result = houdini(program, {loop: [le(x, n), eq(y, mul(num(2), x))]}, Budget(0.0))
    assert not result.complete and result.result.status is Status.UNKNOWN


def test_degree_counts_multiplied_variables() -> None:
    from quokka.verifier.engines.houdini import degree

    _, _, x, y, n = doubling("t.c")
    assert degree(num(3)) == 0
    assert degree(le(x, n)) == 1
    assert degree(eq(mul(x, mul(y, n)), add(x, mul(num(2), y)))) == 3


def test_an_undecidable_candidate_is_dropped_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """A query the solver cannot answer is split until only the hard candidate is dropped."""
    import z3
    from quokka.verifier.engines import houdini as h

    program, loop, x, y, n = doubling("t.c")
    hard = eq(mul(x, mul(x, y)), mul(y, mul(y, x)))
    original = h._EdgeSolver.check

    def check(self: h._EdgeSolver, assumed: list[Expr], goals: list[Expr], budget: Budget,
              cap_s: float | None = None) -> tuple[z3.CheckSatResult, z3.ModelRef | None, str]:
        if hard in goals and self.edge.src == self.edge.dst:
            return z3.unknown, None, "timeout"
        return original(self, assumed, goals, budget, cap_s)

    monkeypatch.setattr(h._EdgeSolver, "check", check)
    result = houdini(program, {loop: [hard, le(x, n), eq(y, mul(num(2), x))]}, Budget.of(30))
    assert result.complete and result.result.status is Status.SAFE
    assert [d.obligation for d in result.dropped if d.expr == hard] == ["unknown"]
    assert set(result.kept[loop]) >= {le(x, n), eq(y, mul(num(2), x))}


def test_a_set_of_reachable_states_is_tried_alone_first() -> None:
    program, loop, x, n = bounded_counter(3, squares=True)
    y = SQUARES
    points = [and_(and_(eq(x, num(a)), eq(n, num(m))), eq(y, num(sum(k * k for k in range(a + 1)))))
              for m in range(4) for a in range(m + 1)]
    states = points[0]
    for p in points[1:]:
        states = or_(states, p)
    junk = [eq(mul(y, y), mul(x, n)), le(y, mul(x, x))]
    found = houdini(program, {loop: [*junk, states]}, Budget.of(20))
    assert found.result.status is Status.SAFE
    assert found.result.invariants == {loop: states}
    assert "sets of reachable states" in found.result.reason
    wrong = houdini(program, {loop: [*junk, points[0]]}, Budget.of(20))  # one point: not a set
    assert "sets of reachable states" not in wrong.result.reason


def test_a_wide_set_of_states_proves_alone_but_stays_out_of_the_joint_fixpoint() -> None:
    program, loop, x, n = bounded_counter(40)
    states = points(x, n, reachable(40))  # 861 states
    alone = houdini(program, {loop: [states]}, Budget.of(60))
    assert alone.result.status is Status.SAFE and alone.kept[loop] == (states,)
    gappy = points(x, n, reachable(40)[:-1])
    mixed = houdini(program, {loop: [gappy, le(x, n)]}, Budget.of(60))
    assert mixed.result.status is Status.SAFE and gappy not in mixed.kept[loop]
    assert "checked only on its own" in mixed.reasons[(loop, gappy)]
