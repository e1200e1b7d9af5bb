"""The independent checker (cvc5 over its own encoding of the CFG) agrees with the main one: it
confirms every certificate of the corpus, and never confirms one that the main checker rejects
(issue 20)."""

from __future__ import annotations

import pytest
from corpus import SAFE, UNSAFE, Example
from mutants import mutant_maps
from quokka.verifier.engines.base import Budget, Status
from quokka.verifier.engines.inductive import prove_with
from quokka.verifier.engines.spacer import solve
from quokka.verifier.verdict.doublecheck import CONFIRMED, REFUTED, double_check

WITH_INVARIANTS = [e for e in SAFE if e.invariants is not None]


@pytest.mark.parametrize("example", WITH_INVARIANTS, ids=lambda e: e.name)
def test_every_corpus_certificate_is_confirmed(example: Example) -> None:
    assert example.invariants is not None
    check = double_check(example.program, example.invariants, Budget.of(30))
    assert check.status == CONFIRMED, check.reason


@pytest.mark.parametrize("example", WITH_INVARIANTS[::3], ids=lambda e: e.name)
def test_a_spacer_certificate_is_confirmed(example: Example) -> None:
    result = solve(example.program, Budget.of(30))
    if result.status is Status.SAFE:
        assert double_check(example.program, result.invariants, Budget.of(30)).status == CONFIRMED


@pytest.mark.parametrize("example", [*WITH_INVARIANTS, *UNSAFE], ids=lambda e: e.name)
def test_it_never_confirms_what_the_main_checker_rejects(example: Example) -> None:
    for invariants in mutant_maps(example.program, example.invariants, count=6, seed=11):
        main = prove_with(example.program, invariants, Budget.of(30)).status
        second = double_check(example.program, invariants, Budget.of(30)).status
        if main is Status.SAFE:
            assert second != REFUTED, f"cvc5 refutes a certificate z3 proves: {invariants}"
        else:
            assert second != CONFIRMED, f"cvc5 confirms a certificate z3 rejects: {invariants}"
    if example.expected == "unsafe":  # no certificate of an unsafe program can be confirmed
        assert double_check(example.program, {}, Budget.of(30)).status == REFUTED
