"""Array loops of the hard tail (issue 35 item 6): copy, init by a formula, a bubble pass, then a
checking loop, over arrays of 1,000 cells. The `arrays` proposer's candidates alone prove them
with Houdini, the certificate passes the inductive check (quantified hypotheses instantiated at
the index terms), and no mutant is proved."""

from __future__ import annotations

import pytest
from quokka.invariants import arrays
from quokka.invariants.structure import find_loop
from quokka.invariants.verify import verify_path
from quokka.verifier.engines import houdini, inductive
from quokka.verifier.engines.base import Budget, Status
from quokka.verifier.frontend import lower_source
from quokka.verifier.ir import Program
from quokka.verifier.options import Options
from quokka.verifier.properties import UNREACH_CALL
from quokka.verifier.verdict.results import Verdict

PRELUDE = """
extern void abort(void);
extern void reach_error(void);
extern int __VERIFIER_nondet_int(void);
void __VERIFIER_assert(int cond) { if (!(cond)) { reach_error(); abort(); } }
#define N 1000
"""

COPY = """
int a[N];
int b[N];
int main() {
  int i;
  for (i = 0; i < N; i++) { a[i] = __VERIFIER_nondet_int(); }
  for (i = 0; i < N; i++) { b[i] = a[i]; }
  for (i = 0; i < N; i++) { __VERIFIER_assert(b[i] == a[i]); }
  return 0;
}
"""

FORMULA = """
int a[N];
int main() {
  int i;
  for (i = 0; i < INIT_END; i++) { a[i] = 3 * i + 1; }
  WRITE
  for (i = 1; i < N; i++) { __VERIFIER_assert(a[i] == a[i - 1] + STEP); }
  return 0;
}
"""

BUBBLE = """
int main() {
  int a[N];
  int i, t;
  for (i = 0; i < N; i++) { a[i] = __VERIFIER_nondet_int(); }
  for (i = 0; i + 1 < N; i++) {
    if (a[i] > a[i + 1]) { t = a[i]; a[i] = a[i + 1]; a[i + 1] = t; }
  }
  for (i = 0; i < N; i++) { __VERIFIER_assert(a[i] <= a[LAST]); }
  return 0;
}
"""


COPY_SOME = """
int a1[N];
int a2[N];
int main() {
  int i, z = 700;
  for (i = 0; i < N; i++) { a1[i] = __VERIFIER_nondet_int(); a2[i] = __VERIFIER_nondet_int(); }
  for (i = 0; i < N; i++) { if (i != z) { a2[i] = a1[i]; } }
  for (i = 0; i < N; i++) { if (CHECKED) { __VERIFIER_assert(a1[i] == a2[i]); } }
  return 0;
}
"""


def formula(init_end: str = "N", step: str = "3", write: str = "") -> str:
    return FORMULA.replace("INIT_END", init_end).replace("STEP", step).replace("WRITE", write)


def lowered(text: str) -> Program:
    return lower_source(PRELUDE + text, "array_loop.c", "ILP32", UNREACH_CALL)


def proposed(program: Program) -> dict[str, list]:
    return {info.id: arrays.candidates(program, find_loop(program, info.id)) for info in program.loops}


def houdini_result(text: str, budget_s: float = 60) -> tuple[Program, houdini.HoudiniResult]:
    program = lowered(text)
    return program, houdini.houdini(program, proposed(program), Budget.of(budget_s))


PATTERNS = {
    "copy": COPY,
    "formula": formula(),
    "bubble": BUBBLE.replace("LAST", "N - 1"),
    "copy all but one": COPY_SOME.replace("CHECKED", "i != z"),  # a guarded store: `k == z || ...`
}


@pytest.mark.parametrize("text", list(PATTERNS.values()), ids=list(PATTERNS))
def test_each_pattern_is_proved_and_its_certificate_checks(text):
    program, found = houdini_result(text)
    assert found.result.status is Status.SAFE, found.result.reason
    check = inductive.prove_with(program, found.result.invariants, Budget.of(60))
    assert check.status is Status.SAFE, check.reason
    assert inductive.INSTANTIATED in check.reason  # the gate says how it checked the quantifiers


MUTANTS = {  # name -> (the correct program, its mutant; the same lines, so the same loop ids)
    "init stops a cell early": (formula(), formula(init_end="N - 1")),
    "wrong formula": (formula(), formula(step="2")),
    "a write inside the checked range": (formula(), formula(write="a[N / 2] = 0;")),
    "bubble: the wrong last cell": (BUBBLE.replace("LAST", "N - 1"), BUBBLE.replace("LAST", "N - 2")),
    "the cell not copied is checked": (
        COPY_SOME.replace("CHECKED", "i != z"),
        COPY_SOME.replace("CHECKED", "i != 5"),
    ),
}


@pytest.mark.parametrize(("correct", "mutant"), list(MUTANTS.values()), ids=list(MUTANTS))
def test_no_mutant_is_proved_not_even_with_the_correct_programs_certificate(correct, mutant):
    program, found = houdini_result(mutant, budget_s=30)
    assert found.result.status is not Status.SAFE, found.result.invariants
    _, proof = houdini_result(correct)
    assert proof.result.status is Status.SAFE, proof.result.reason
    obligations = inductive.check(program, proof.result.invariants, Budget.of(30))
    assert not obligations.all_valid
    assert any(o.status == "invalid" for o in obligations.items)  # a counterexample, not a give-up


@pytest.mark.slow
def test_a_false_array_program_is_not_called_true(tmp_path):
    path = tmp_path / "a.c"
    path.write_text(PRELUDE + formula(write="a[N / 2] = 0;"))
    result = verify_path(path, Options(timeout_s=20, property=UNREACH_CALL, data_model="ILP32"))
    assert result.verdict is not Verdict.TRUE, result.reason


@pytest.mark.slow
def test_the_formula_program_is_true_end_to_end(tmp_path):
    path = tmp_path / "a.c"
    path.write_text(PRELUDE + formula())
    result = verify_path(path, Options(timeout_s=30, property=UNREACH_CALL, data_model="ILP32"))
    assert result.verdict is Verdict.TRUE, result.reason
