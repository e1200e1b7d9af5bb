"""Counterexamples are shrunk (issue 19): each input brought as near 0 as the failure allows, so
that the same bug gives the same small inputs whichever engine found it and with what values."""

from __future__ import annotations

from pathlib import Path

from quokka.invariants.verify import verify_path
from quokka.verifier.exec.shrink import shrink
from quokka.verifier.frontend import lower_source
from quokka.verifier.options import Options
from quokka.verifier.verdict.results import Verdict

SOURCE = """\
extern int __VERIFIER_nondet_int(void);
extern void reach_error(void);
int main() {
  int x = __VERIFIER_nondet_int();
  int y = __VERIFIER_nondet_int();
  int n = 0;
  for (int i = 0; i < y && i < 50; i++) n++;
  if (x > 1000 && n >= 3) reach_error();
  return 0;
}
"""


def test_inputs_shrink_to_the_same_smallest_failure() -> None:
    program = lower_source(SOURCE, "s.c")
    assert shrink(program, (5000, 77)) == shrink(program, (1234567, 9)) == (1001, 3)


def test_inputs_that_do_not_fail_are_kept() -> None:
    program = lower_source(SOURCE, "s.c")
    assert shrink(program, (5, 77)) == (5, 77)


def test_a_negative_input_keeps_its_sign() -> None:
    program = lower_source(SOURCE.replace("x > 1000", "x < -1000"), "s.c")
    assert shrink(program, (-99999, 10)) == (-1001, 3)


def test_verify_shows_the_shrunk_inputs(tmp_path: Path) -> None:
    path = tmp_path / "s.c"
    path.write_text(SOURCE)
    result = verify_path(path, Options(timeout_s=20, proposers=()))
    assert result.verdict is Verdict.FALSE and result.counterexample is not None
    assert [i.value for i in result.counterexample.inputs] == [1001, 3]
