"""The two-query check: proves with a helpful candidate, never proves an unsafe program, and its
certificate is checked on the original program."""

from __future__ import annotations

import pytest
from corpus import BY_NAME, UNSAFE, Example, doubling, twin
from mutants import mutant_maps
from quokka.verifier.engines import inductive, twoquery
from quokka.verifier.engines.base import Budget, Status
from quokka.verifier.exec.interp import run
from quokka.verifier.ir import Assert, Assume, transform, walk_stmts
from quokka.verifier.ir.builder import eq, le, mul, num


def test_program_rewrites() -> None:
    program, loop, x, _, n = doubling("t.c")
    cand = le(x, n)
    assumed = transform.assume_program(program, {loop: cand})
    asserted = transform.assert_program(program, {loop: cand})
    assert [s.cond for s in walk_stmts(assumed.body) if isinstance(s, Assume)][-1] == cand
    assert [s.cond for s in walk_stmts(asserted.body) if isinstance(s, Assert)] == [cand]
    assert sum(isinstance(s, Assert) for s in walk_stmts(assumed.body)) == 1


def test_a_partial_candidate_is_completed_by_spacer() -> None:
    program, loop, x, y, _ = doubling("t.c")
    result = twoquery.check(program, loop, eq(y, mul(num(2), x)), Budget.of(60))
    assert result.status is Status.SAFE, result.reason
    assert inductive.prove_with(program, result.invariants, Budget.of(30)).status is Status.SAFE


def test_a_false_candidate_is_rejected() -> None:
    program, loop, x, y, _ = doubling("t.c")
    result = twoquery.check(program, loop, eq(y, x), Budget.of(60))
    assert result.status is Status.UNKNOWN
    assert "not an invariant" in result.reason


def test_several_loops_at_once() -> None:
    example = BY_NAME["sequential_loops"]
    assert example.invariants is not None
    result = twoquery.check_many(example.program, dict(example.invariants), Budget.of(60))
    assert result.status is Status.SAFE, result.reason


def test_unknown_loop_is_unknown() -> None:
    program, _, x, _, n = doubling("t.c")
    assert twoquery.check(program, "nope", le(x, n), Budget.of(10)).status is Status.UNKNOWN


def _has_right_twin(example: Example) -> bool:
    right = twin(example)
    return right is not None and bool(right.invariants)


TWINNED = [e for e in UNSAFE if _has_right_twin(e)]


@pytest.mark.parametrize("example", TWINNED, ids=lambda e: e.name)
def test_two_query_never_proves_an_unsafe_example(example: Example) -> None:
    right = twin(example)
    assert right is not None and right.invariants is not None
    candidates = [dict(right.invariants), *mutant_maps(example.program, right.invariants, count=1, seed=2)]
    for cands in candidates:
        cands = {k: v for k, v in cands.items() if k in {i.id for i in example.program.loops}}
        if not cands:
            continue
        result = twoquery.check_many(example.program, cands, Budget.of(4))
        assert result.status is not Status.SAFE
        if result.status is Status.UNSAFE:
            assert result.inputs is not None and run(example.program, result.inputs).outcome == "error"

