"""A counterexample that reads an uninitialised local (undefined behaviour in C) never gives FALSE.

The program is Code2Inv's benchmark 26, labelled `true` in that set: under "uninitialised means
nondet" its error is reachable with n == 0, but only by reading `n` before it has a value.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from quokka.invariants.verify import verify_path
from quokka.verifier.options import Options
from quokka.verifier.results import Verdict

CODE2INV_26 = """\
void assert(int cond) { if (!(cond)) { ERROR : { reach_error(); abort(); } } }
int main() {
  int n;
  int x;
  (x = {init});
  while ((x > 1)) { (x = (x - 1)); }
  if ((x != 1)) { assert((n < 0)); }
}
"""
OPTIONS = Options(timeout_s=20, engines=("bmc", "spacer"), proposers=())


def write(tmp_path: Path, init: str, declare: str = "int n;") -> Path:
    path = tmp_path / "p.c"
    text = CODE2INV_26.replace("{init}", init).replace("int n;", declare)
    path.write_text("extern int __VERIFIER_nondet_int(void);\n" + text)
    return path


def test_error_reached_only_through_an_uninitialised_read_is_unknown(tmp_path):
    result = verify_path(write(tmp_path, "n"), OPTIONS)
    assert result.verdict is Verdict.UNKNOWN
    assert "reads the uninitialised variable n" in result.reason
    assert "undefined behaviour" in result.reason


@pytest.mark.parametrize("declare", ["int n = __VERIFIER_nondet_int();", "int n = 0;"])
def test_the_same_program_with_n_given_a_value_is_false(tmp_path, declare):
    result = verify_path(write(tmp_path, "n", declare), OPTIONS)
    assert result.verdict is Verdict.FALSE
    assert result.counterexample is not None


def test_an_uninitialised_variable_that_is_overwritten_first_is_no_obstacle(tmp_path):
    path = tmp_path / "p.c"
    path.write_text(
        "extern int __VERIFIER_nondet_int(void);\nvoid reach_error(void);\n"
        "int main() { int i; int n = __VERIFIER_nondet_int(); i = 0;\n"
        "  while (i < n) { i = i + 1; }\n  if (i == 3) reach_error();\n  return 0; }\n"
    )
    result = verify_path(path, OPTIONS)
    assert result.verdict is Verdict.FALSE
