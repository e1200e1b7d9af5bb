"""The certificate checker: right invariants prove every safe example; nothing proves an unsafe one."""

from __future__ import annotations

import pytest
import z3
from corpus import C_ERRORS, CORPUS, SAFE, UNSAFE, Example, twin
from mutants import mutant_maps
from quokka.verifier.encode.smt import Translator
from quokka.verifier.engines import inductive
from quokka.verifier.engines.base import Budget, Status
from quokka.verifier.ir import Expr, Program, Var, free_vars
from quokka.verifier.ir.builder import ProgramBuilder, add, and_, ge, le, num
from state_sets import bounded_counter, points

WITH_INVARIANTS = [e for e in SAFE if e.invariants is not None]


@pytest.mark.parametrize("example", WITH_INVARIANTS, ids=lambda e: e.name)
def test_given_invariants_prove_safe_examples(example: Example) -> None:
    assert example.invariants is not None
    obligations = inductive.check(example.program, example.invariants, Budget.of(30))
    assert obligations.all_valid, obligations.summary()
    result = inductive.prove_with(example.program, example.invariants, Budget.of(30))
    assert result.status is Status.SAFE
    assert dict(result.invariants) == dict(example.invariants)


@pytest.mark.parametrize("example", UNSAFE, ids=lambda e: e.name)
def test_no_invariant_proves_an_unsafe_example(example: Example) -> None:
    right = twin(example)
    maps = mutant_maps(example.program, right.invariants if right else None, count=12, seed=3)
    if right is not None and right.invariants is not None:
        maps.append(dict(right.invariants))
    maps.append({})
    for invariants in maps:
        result = inductive.prove_with(example.program, invariants, Budget.of(10))
        assert result.status is not Status.SAFE, invariants


def _holds(e: Expr, state: dict[str, int]) -> bool:
    value = z3.simplify(Translator({k: z3.IntVal(v) for k, v in state.items()}).formula(e))
    assert z3.is_true(value) or z3.is_false(value)
    return z3.is_true(value)


@pytest.mark.parametrize("example", WITH_INVARIANTS, ids=lambda e: e.name)
def test_counterexamples_to_induction_are_real(example: Example) -> None:
    assert example.invariants is not None
    for invariants in mutant_maps(example.program, example.invariants, count=6, seed=11):
        for ob in inductive.check(example.program, invariants, Budget.of(10)).failed:
            if ob.cti is None or ob.kind not in ("initiation", "consecution") or ob.status != "invalid":
                continue
            if ob.dst in invariants and set(ob.cti.post) >= free_vars(invariants[ob.dst]):
                assert not _holds(invariants[ob.dst], dict(ob.cti.post)), ob.reason
            pre_known = ob.src in invariants and set(ob.cti.pre) >= free_vars(invariants[ob.src])
            if ob.kind == "consecution" and pre_known:
                assert _holds(invariants[ob.src], dict(ob.cti.pre)), ob.reason


def _counter() -> tuple[Program, str, Var, Var]:
    b = ProgramBuilder("c.c")
    x, n = b.var("x"), b.var("n")
    b.havoc(n)
    b.assume(ge(n, num(0)))
    with b.loop() as loop:
        b.if_break(ge(x, n))
        b.assign(x, add(x, num(1)))
    b.check(le(x, n))
    return b.build(), loop, x, n


def test_obligations_are_reported_per_edge() -> None:
    program, loop, x, _ = _counter()
    obligations = inductive.check(program, {loop: le(x, num(3))}, Budget.of(10))
    kinds = {o.kind: o for o in obligations.items}
    assert set(kinds) == {"initiation", "consecution", "safety"}
    assert kinds["initiation"].valid
    assert kinds["consecution"].status == "invalid"
    assert kinds["consecution"].cti is not None and kinds["consecution"].cti.post["x"] == 4
    assert kinds["safety"].status == "invalid"
    assert not obligations.all_valid and "consecution" in obligations.summary()


def test_missing_invariant_means_true() -> None:
    program, loop, x, n = _counter()
    assert not inductive.check(program, {}, Budget.of(10)).all_valid
    assert inductive.check(program, {loop: le(x, n)}, Budget.of(10)).all_valid


def test_exhausted_budget_is_never_valid() -> None:
    program, loop, x, n = _counter()
    result = inductive.prove_with(program, {loop: le(x, n)}, Budget(0.0))
    assert result.status is Status.UNKNOWN and "budget" in result.reason


@pytest.mark.parametrize("bad", ["unknown variable", "unknown loop"])
def test_malformed_invariants_are_rejected_without_raising(bad: str) -> None:
    program, loop, x, n = _counter()
    inv = {loop: le(Var("zz", x.type), n)} if bad == "unknown variable" else {"nope": le(x, n)}
    result = inductive.prove_with(program, inv, Budget.of(10))
    assert result.status is Status.UNKNOWN


def test_corpus_is_labelled_consistently() -> None:
    assert not C_ERRORS
    assert any(e.c_source for e in CORPUS)
    assert len(CORPUS) >= 30
    assert {e.expected for e in CORPUS} == {"safe", "unsafe"}
    assert len({e.name for e in CORPUS}) == len(CORPUS)


def test_a_wide_disjunction_is_checked_case_by_case_with_the_same_answers() -> None:
    program, loop, x, n = bounded_counter(4)
    reachable = [(a, b) for b in range(5) for a in range(b + 1)]
    assert len(reachable) >= inductive.SPLIT_MIN
    exact = inductive.check(program, {loop: points(x, n, reachable)}, Budget.of(20))
    assert exact.all_valid
    missing = [s for s in reachable if s != (1, 3)]  # reached from (0, 3), and on to (2, 3)
    gap = {o.kind: o for o in inductive.check(program, {loop: points(x, n, missing)}, Budget.of(20)).items}
    assert gap["consecution"].status == "invalid"
    assert gap["consecution"].cti is not None and gap["consecution"].cti.post == {"x": 1, "n": 3}
    assert gap["safety"].valid and gap["initiation"].valid


def test_a_large_set_of_states_is_checked_by_lookup_and_a_gap_is_still_found() -> None:
    program, loop, x, n = bounded_counter(30)
    reachable = [(a, b) for b in range(31) for a in range(b + 1)]
    assert inductive.check(program, {loop: points(x, n, reachable)}, Budget.of(60)).all_valid
    missing = [s for s in reachable if s != (17, 29)]
    gap = {o.kind: o for o in inductive.check(program, {loop: points(x, n, missing)}, Budget.of(60)).items}
    assert gap["consecution"].status == "invalid"
    assert gap["consecution"].cti is not None and gap["consecution"].cti.post == {"x": 17, "n": 29}


def _counter_with_a_coin() -> tuple[Program, str, Var, Var]:
    """x counts to 5 while y is redrawn from {0, 1} in every iteration."""
    b = ProgramBuilder("coin.c")
    x, y = b.var("x"), b.var("y")
    b.assign(x, num(0))
    b.assign(y, num(0))
    with b.loop() as loop:
        b.if_break(ge(x, num(5)))
        b.assign(x, add(x, num(1)))
        b.havoc(y)
        b.assume(and_(ge(y, num(0)), le(y, num(1))))
    b.check(le(y, num(1)))
    return b.build(), loop, x, y


def test_a_nondeterministic_successor_is_left_to_the_solver() -> None:
    program, loop, x, y = _counter_with_a_coin()
    both = [(a, c) for a in range(6) for c in (0, 1)]
    assert inductive.check(program, {loop: points(x, y, both)}, Budget.of(20)).all_valid
    heads = [(a, 0) for a in range(6)]  # misses y == 1, which the havoc allows
    obligations = inductive.check(program, {loop: points(x, y, heads)}, Budget.of(20))
    (bad,) = obligations.failed
    assert bad.kind == "consecution" and bad.cti is not None and bad.cti.post["y"] == 1
