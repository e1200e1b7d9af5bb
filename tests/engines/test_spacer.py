"""Spacer: never a wrong verdict; SAFE certificates check; UNSAFE inputs replay to the error."""

from __future__ import annotations

import pytest
from corpus import BY_NAME, CORPUS, Example
from quokka.verifier.encode.z3_to_ir import subterms
from quokka.verifier.engines import inductive, spacer
from quokka.verifier.engines.base import Budget, Status
from quokka.verifier.exec.interp import run

# Solved in well under a second on every configuration measured (see spacer_sweep.py).
EASY_SAFE = ["counter", "continue_step", "break_even", "halving", "bool_loop", "assume_blocked",
             "array_constant_cell", "return_from_main", "trunc_division", "bool_cast"]


@pytest.mark.parametrize("example", CORPUS, ids=lambda e: e.name)
def test_spacer_is_never_wrong(example: Example) -> None:
    result = spacer.solve(example.program, Budget.of(2))
    if example.expected == "safe":
        assert result.status is not Status.UNSAFE, result.reason
    else:
        assert result.status is not Status.SAFE, result.reason
    if result.status is Status.SAFE:
        assert inductive.prove_with(example.program, result.invariants, Budget.of(30)).status is Status.SAFE
    if result.status is Status.UNSAFE:
        assert result.inputs is not None
        assert run(example.program, result.inputs).outcome == "error"


@pytest.mark.parametrize("name", EASY_SAFE)
def test_spacer_proves_easy_examples(name: str) -> None:
    result = spacer.solve(BY_NAME[name].program, Budget.of(20))
    assert result.status is Status.SAFE, result.reason
    assert set(result.invariants) == {info.id for info in BY_NAME[name].program.loops}


def test_spacer_finds_bugs_deep_in_a_loop() -> None:
    example = BY_NAME["nondet_loop_after_k"]
    result = spacer.solve(example.program, Budget.of(20))
    assert result.status is Status.UNSAFE and result.inputs is not None
    assert run(example.program, result.inputs).outcome == "error"


def test_exhausted_budget_is_unknown() -> None:
    result = spacer.solve(BY_NAME["cohencu"].program, Budget(0.0))
    assert result.status is Status.UNKNOWN


def test_quantifier_elimination_is_bounded_by_the_budget(monkeypatch):
    """`qe` may not return on nonlinear formulas: under a budget it is run with `TryFor`, and a
    formula it cannot finish is Unsupported (Spacer's answer is then UNKNOWN, never a hang)."""
    import z3
    from quokka.verifier.encode.z3_to_ir import Unsupported
    from quokka.verifier.engines import spacer
    from quokka.verifier.engines.base import Budget

    x, y = z3.Ints("x y")
    formula = z3.Exists([y], z3.And(x == 2 * y, y >= 0))
    assert not any(z3.is_quantifier(t) for t in subterms(spacer.eliminate_quantifiers(formula)))
    limits = []

    def canceled(tactic, ms):
        limits.append(ms)

        def run(goal):
            raise z3.Z3Exception("canceled")

        return run

    monkeypatch.setattr(spacer.z3, "TryFor", canceled)
    with pytest.raises(Unsupported, match="did not finish"):
        spacer.eliminate_quantifiers(formula, Budget.of(2.0))
    assert limits and 1 <= limits[0] <= 2000
