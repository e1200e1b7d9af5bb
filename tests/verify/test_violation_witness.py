"""`--witness-in` with a violation witness (issue 19): its nondet values are replayed, in order and
on their lines, as SV-COMP's validators follow its waypoints. Confirmed: FALSE with the
counterexample, decided by "witness". Not confirmed: the verification runs as usual, and the
result says why the witness failed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from quokka.invariants.verify import verify_path
from quokka.verifier.errors import InputError
from quokka.verifier.options import Options
from quokka.verifier.verdict.results import Verdict
from quokka.verifier.verdict.witnesses import violation_waypoints, witness_for, write_witness

PROGRAM = """\
extern int __VERIFIER_nondet_int(void);
extern void reach_error(void);
void __VERIFIER_assert(int c) { if (!c) reach_error(); }
int main() {
  int x = __VERIFIER_nondet_int();
  int y = __VERIFIER_nondet_int();
  int s = 0;
  for (int i = 0; i < x && i < 100; i++) s += y;
  __VERIFIER_assert(s != 42);
  return 0;
}
"""
OPTIONS = Options(timeout_s=20, proposers=())


@pytest.fixture
def witnessed(tmp_path: Path) -> tuple[Path, Path]:
    program = tmp_path / "p.c"
    program.write_text(PROGRAM)
    result = verify_path(program, OPTIONS)
    assert result.verdict is Verdict.FALSE
    entry = witness_for(result, program, data_model="LP64")
    assert entry is not None
    witness = tmp_path / "p.violation.yml"
    write_witness(entry, witness)
    return program, witness


def test_a_witness_of_ours_is_confirmed_by_replaying_it(witnessed: tuple[Path, Path]) -> None:
    program, witness = witnessed
    values = violation_waypoints(witness, program)
    assert values is not None and [v.line for v in values] == [5, 6]
    result = verify_path(program, OPTIONS.with_(witness_in=witness))
    assert result.verdict is Verdict.FALSE and result.decided_by == "witness"
    assert result.reason.startswith("violation witness confirmed")
    assert result.counterexample is not None and [i.value for i in result.counterexample.inputs] == [
        v.value for v in values
    ]


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        (lambda t: t.replace("line: 6", "line: 7", 1), "is asked for at"),
        (lambda t: _shift_last_value(t), "ends with 'exit'"),
    ],
)
def test_a_wrong_witness_is_not_confirmed(witnessed: tuple[Path, Path], edit, why: str) -> None:  # type: ignore[no-untyped-def]
    program, witness = witnessed
    witness.write_text(edit(witness.read_text()))
    result = verify_path(program, OPTIONS.with_(witness_in=witness))
    assert result.decided_by != "witness"
    assert why in result.extra["violation_witness"]


def _shift_last_value(text: str) -> str:
    """The witness with its last nondet value one larger."""
    last = list(re.finditer(r"result == (-?\d+)", text))[-1]
    return text[: last.start(1)] + str(int(last.group(1)) + 1) + text[last.end(1) :]


def test_a_waypoint_the_validator_cannot_read_is_bad_input(witnessed: tuple[Path, Path]) -> None:
    program, witness = witnessed
    witness.write_text(witness.read_text().replace("\\result ==", "\\result >=", 1))
    with pytest.raises(InputError, match="function_return waypoint"):
        verify_path(program, OPTIONS.with_(witness_in=witness))
