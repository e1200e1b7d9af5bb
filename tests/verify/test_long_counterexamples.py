"""Counterexamples longer than the interpreter's step limit (`checks._long_run`): the compiled
program, built with AddressSanitizer and UndefinedBehaviorSanitizer, must reach the error with no
report; a sanitizer report, a time-out or a run that ends elsewhere is no counterexample. The
interpreter's limit is lowered here so that the runs stay short; one test keeps the real one."""

from __future__ import annotations

from pathlib import Path

import pytest
from marks import needs_gcc
from quokka.verifier.engines import execute, fuzz
from quokka.verifier.engines.base import Budget, EngineResult, Status
from quokka.verifier.exec.interp import LONG_RUN_STEPS
from quokka.verifier.frontend.lower import lower
from quokka.verifier.ir import Program
from quokka.verifier.properties import UNREACH_CALL
from quokka.verifier.verdict import checks
from quokka.verifier.verdict.results import Counterexample

SHORT_LIMIT = 20_000  # interpreter steps, for these tests (a counter of 100,000 runs past it)
HEAD = "extern void reach_error(void);\nextern unsigned int __VERIFIER_nondet_uint(void);\n"
STRIDE = HEAD + """
int main(void) {
  unsigned int i = 0u;
  while (i <= BOUNDu) { i += 2u; }
  if (i != BOUNDu) reach_error();
  return 0;
}
"""
# every run ends with i == 100002: the error is unreachable, whatever an engine claims
NEVER = STRIDE.replace("if (i != BOUNDu)", "if (i != BOUNDu + 2u)")
# the error is reached only through a signed overflow, which gcc at -O0 wraps
OVERFLOW = HEAD + """
int main(void) {
  int k = 0;
  while (k < 100000) { k++; }
  int x = 2147483600;
  x = x + k;
  if (x < 0) reach_error();
  return 0;
}
"""
# the error is reached only through a read past the end of a heap block
HEAP = HEAD + """
#include <stdlib.h>
int main(void) {
  int *a = malloc(4 * sizeof(int));
  int k = 0;
  while (k < 100000) { k++; }
  a[k % 7] = 5;
  if (a[k % 7] == 5) reach_error();
  return 0;
}
"""
# the inputs are read after the interpreter's limit; an assumption discards some of them
LATE_INPUT = HEAD + """
extern void __VERIFIER_assume(int);
int main(void) {
  unsigned int i = 0u;
  while (i < 100000u) { i++; }
  unsigned int n = __VERIFIER_nondet_uint();
  __VERIFIER_assume(n > 5u);
  if (n == 7u) reach_error();
  return 0;
}
"""
LOOPING = HEAD + """
int main(void) {
  unsigned int i = 0u;
  while (i != 1u) { i += 2u; }
  reach_error();
  return 0;
}
"""


def _program(tmp_path: Path, text: str, name: str = "long.c") -> Program:
    path = tmp_path / name
    path.write_text(text.replace("BOUND", "100000"))
    return lower(path, "LP64", UNREACH_CALL)


def _confirm(program: Program, inputs: tuple[int, ...] = ()) -> tuple[Counterexample | None, str]:
    claimed = EngineResult("fuzz", Status.UNSAFE, "claimed", inputs=inputs)
    return checks.confirm_counterexample(program, claimed, Path(program.file))


@pytest.fixture
def short_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(checks, "LONG_RUN_STEPS", SHORT_LIMIT)


@needs_gcc
def test_an_error_past_the_step_limit_is_confirmed_by_the_sanitized_compiled_run(
    tmp_path: Path, short_limit: None
) -> None:
    cex, why = _confirm(_program(tmp_path, STRIDE))
    assert cex is not None, why
    assert cex.confirmed_by == (checks.LONG_RUN_CHECK,)
    limit = f"interpreter: the error not reached within {SHORT_LIMIT:,} steps (its limit)"
    assert cex.replay_notes[0] == limit
    assert cex.replay_notes[1].startswith(f"{checks.LONG_RUN_CHECK}: the program reached reach_error()")
    assert cex.error_state == () and cex.path_lines == ()
    assert cex.error_line == 7  # the program's only error: the reach_error() call


@needs_gcc
def test_a_run_that_ends_without_the_error_is_no_counterexample(tmp_path: Path, short_limit: None) -> None:
    cex, why = _confirm(_program(tmp_path, NEVER))
    assert cex is None
    assert "not_reached" in why and "exited with status 0" in why, why


@needs_gcc
def test_a_run_that_reaches_the_error_through_a_signed_overflow_is_no_counterexample(
    tmp_path: Path, short_limit: None
) -> None:
    cex, why = _confirm(_program(tmp_path, OVERFLOW))
    assert cex is None
    assert "a sanitizer reported" in why and "signed integer overflow" in why, why


@needs_gcc
def test_a_run_that_reaches_the_error_through_a_heap_overflow_is_no_counterexample(
    tmp_path: Path, short_limit: None
) -> None:
    cex, why = _confirm(_program(tmp_path, HEAP))
    assert cex is None
    assert "AddressSanitizer" in why, why


@needs_gcc
def test_a_run_that_does_not_end_is_no_counterexample(tmp_path: Path, short_limit: None,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setattr(checks, "LONG_RUN_S", 1.0)
    cex, why = _confirm(_program(tmp_path, LOOPING))
    assert cex is None
    assert "ran longer than 1.0 s" in why, why


@needs_gcc
def test_inputs_read_past_the_limit_are_listed_and_a_failed_assumption_discards_the_run(
    tmp_path: Path, short_limit: None
) -> None:
    program = _program(tmp_path, LATE_INPUT)
    cex, why = _confirm(program, (7,))
    assert cex is not None, why
    assert [(i.origin, i.value) for i in cex.inputs] == [(checks.LATER_INPUT, 7)]
    assert "(1 inputs read)" in cex.replay_notes[1]
    cex, why = _confirm(program, (3,))
    assert cex is None and "assumption (__VERIFIER_assume) failed" in why, why
    cex, why = _confirm(program, (6,))
    assert cex is None and "exited with status 0" in why, why


@needs_gcc
def test_under_the_strict_reading_a_local_that_may_be_read_uninitialised_blocks_the_long_run(
    tmp_path: Path, short_limit: None
) -> None:
    # j is read only past the interpreter's limit, where the compiled run has it at 0
    text = STRIDE.replace("unsigned int i = 0u;", "unsigned int j; unsigned int i = 0u;")
    cex, why = _confirm(_program(tmp_path, text.replace("if (i != BOUNDu)", "if (i != BOUNDu + j)")))
    assert cex is None and "may read an uninitialised local" in why and " j " in why, why
    # declared without a value, assigned before every read: no read of an uninitialised value
    assigned = text.replace("unsigned int i = 0u;", "unsigned int i; i = 0u;")
    assigned = assigned.replace("if (i != BOUNDu)", "j = 1u; if (i != BOUNDu * j)")
    cex, why = _confirm(_program(tmp_path, assigned))
    assert cex is not None, why


@needs_gcc
def test_the_fuzz_engine_runs_a_long_counter_plainly_first(tmp_path: Path) -> None:
    text = HEAD + """
int main(void) {
  unsigned int n = __VERIFIER_nondet_uint();
  unsigned int i = 0u;
  if (n > 100u) return 0;
  while (i <= 30000000u) { i += 2u; }
  if (i != 30000000u + n) reach_error();
  return 0;
}
"""
    program = _program(tmp_path, text)
    assert fuzz.long_loops(program)
    found = fuzz.check(program, Budget.of(20))
    assert found.status is Status.UNSAFE and found.stats["runs"] == 1, found.reason
    assert found.inputs == (0,)


@needs_gcc
@pytest.mark.slow
def test_a_long_counter_is_false_with_the_real_step_limit(tmp_path: Path) -> None:
    program = _program(tmp_path, STRIDE.replace("BOUND", "10000000"))
    cex, why = _confirm(program)
    assert cex is not None, why
    assert cex.confirmed_by == (checks.LONG_RUN_CHECK,)
    assert f"within {LONG_RUN_STEPS:,} steps" in cex.replay_notes[0]


@needs_gcc
def test_the_one_execution_of_a_long_counter_is_a_candidate_in_either_data_model(tmp_path: Path) -> None:
    path = tmp_path / "ilp32.c"
    path.write_text(STRIDE.replace("BOUND", "10000000"))
    program = lower(path, "ILP32", UNREACH_CALL)  # built natively (with a note) where -m32 does not link
    found = execute.check(program, Budget.of(20))
    assert found.status is Status.UNSAFE and found.inputs == (), found.reason
    safe = path.with_name("safe.c")
    safe.write_text(NEVER.replace("BOUND", "10000000"))
    assert execute.check(lower(safe, "ILP32", UNREACH_CALL), Budget.of(20)).status is not Status.UNSAFE


@needs_gcc
def test_inputs_read_after_the_mapped_prefix_follow_and_replay(tmp_path: Path) -> None:
    """fuzz reads a run's inputs back with `MAP_STEPS` interpreter steps; the one read later
    (after 100,000 iterations) follows, and the replay (with the real limit) reaches the error."""
    program = _program(tmp_path, LATE_INPUT)
    found = fuzz.check(program, Budget.of(20))
    assert found.status is Status.UNSAFE and found.inputs == (7,), (found.reason, found.inputs)
    cex, why = checks.confirm_counterexample(program, found, Path(program.file))
    assert cex is not None and cex.confirmed_by == ("interpreter", "gcc"), why


@needs_gcc
def test_the_sanitized_run_starts_under_a_batch_address_space_limit(tmp_path: Path) -> None:
    """AddressSanitizer reserves terabytes of shadow memory: under the soft RLIMIT_AS a batch sets
    (4 GB, the hard limit left in place) the run lifts it, so the long counterexample still stands."""
    import subprocess
    import sys

    source = tmp_path / "stride.c"
    source.write_text(STRIDE.replace("BOUND", "100001"))
    code = (
        "import resource, sys; from pathlib import Path\n"
        "from quokka.verifier.exec.replay import replay_sanitized\n"
        "resource.setrlimit(resource.RLIMIT_AS, (4096 << 20, resource.RLIM_INFINITY))\n"
        "found = replay_sanitized(Path(sys.argv[1]), [], 'LP64', timeout_s=20,\n"
        "                         property_name='unreach-call')\n"
        "print(found.status)\n"
    )
    command = [sys.executable, "-c", code, str(source)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "reached", done.stderr[-2000:]
