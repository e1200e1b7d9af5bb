"""Compiled fuzzing (`engines.fuzz`): the program built by gcc, run on sampled inputs. It finds
errors that need tens of thousands of iterations, says UNKNOWN (never SAFE) otherwise, and its
inputs replay in the interpreter."""

from __future__ import annotations

from pathlib import Path

from fuzzing import fuzz_text, fuzzed_error
from marks import needs_gcc
from quokka.verifier.engines import fuzz
from quokka.verifier.engines.base import Budget, Status
from quokka.verifier.exec.interp import LONG_RUN_STEPS, run
from quokka.verifier.ir.builder import ProgramBuilder, ne, num
from quokka.verifier.properties import UNREACH_CALL

DEEP = """
extern void reach_error(void);
extern unsigned short __VERIFIER_nondet_ushort(void);
int main(void) {
  unsigned short n = __VERIFIER_nondet_ushort();
  int i = 0;
  while (i < n) { i = i + 1; }
  if (i > 60000) reach_error();
  return 0;
}
"""


@needs_gcc
def test_an_error_after_sixty_thousand_iterations_is_found_and_replays(tmp_path: Path) -> None:
    program, inputs = fuzzed_error(tmp_path / "deep.c", DEEP, UNREACH_CALL)
    replayed = run(program, inputs, max_steps=LONG_RUN_STEPS)
    assert replayed.outcome == "error" and replayed.inputs_used[-1] > 60000


@needs_gcc
def test_a_safe_program_is_never_more_than_unknown(tmp_path: Path) -> None:
    _, found = fuzz_text(tmp_path / "safe.c", DEEP.replace("i > 60000", "i > 70000"), UNREACH_CALL, 2)
    assert found.status is Status.UNKNOWN and found.stats["runs"] > 10, found.reason


def test_a_program_without_a_c_file_is_not_fuzzed() -> None:
    b = ProgramBuilder("built.c")  # no such file: the program was built, not parsed
    b.check(ne(num(1), num(0)))
    found = fuzz.check(b.build(), Budget.of(2))
    assert found.status is Status.UNKNOWN and found.reason == "no C file to compile"
