"""Programs that read no input, decided by their one execution (`engines.execute`): a run of the
compiled program with the undefined-behaviour sanitizer, confirmed by a second build."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from marks import needs_gcc
from quokka.verifier.engines import execute
from quokka.verifier.engines.base import Budget, Status
from quokka.verifier.frontend.lower import lower
from quokka.verifier.properties import UNREACH_CALL

HEADER = """extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *);
void reach_error(void) { __assert_fail("0", "t.c", 3, "reach_error"); }
void __VERIFIER_assert(int cond) { if (!(cond)) { ERROR: { reach_error(); abort(); } } }
extern int __VERIFIER_nondet_int(void);
"""

# 55 million iterations, and a disjunctive invariant (x < 10000000 || x % 2 == 0)
PHASES = """int main(void) {
  unsigned int x = 0;
  while (x < 100000000) { if (x < 10000000) x++; else x += 2; }
  __VERIFIER_assert(x % 2 == 0);
  return 0; }"""


def _write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "t.c"
    path.write_text(HEADER + body)
    return path


def _check(tmp_path: Path, body: str, seconds: float = 20):
    program = lower(_write(tmp_path, body), "LP64", UNREACH_CALL)
    return program, execute.check(program, Budget.of(seconds))


@needs_gcc
def test_a_long_deterministic_loop_is_decided_by_running_it(tmp_path):
    program, result = _check(tmp_path, PHASES)
    assert result.status is Status.SAFE and result.stats == {"executed": True}, result.reason
    assert execute.confirm(program, Budget.of(20)).status is Status.SAFE


@needs_gcc
def test_verify_answers_true_by_the_one_execution_and_checks_it(tmp_path):
    path = _write(tmp_path, PHASES)
    command = [sys.executable, "-m", "quokka.verifier.cli", "verify", str(path), "--json", "--timeout", "30",
               "--property", "unreach-call"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    data = json.loads(done.stdout)
    assert data["verdict"] == "true" and data["decided_by"] == "execute", data["reason"]
    assert data["invariants"] == []


@needs_gcc
def test_the_error_of_a_deterministic_program_is_found(tmp_path):
    _, result = _check(tmp_path, "int main(void) { int s = 0; for (int i = 0; i < 1000; i++) s += i;\n"
                                 "  __VERIFIER_assert(s != 499500); return 0; }")
    assert result.status is Status.UNSAFE and result.inputs == ()


@needs_gcc
@pytest.mark.parametrize(("body", "why"), [
    # a signed overflow on the one execution: undefined behaviour, no proof
    ("int main(void) { int x = 2147483600; for (int i = 0; i < 100; i++) x++;\n"
     "  __VERIFIER_assert(x != 5); return 0; }", "undefined behaviour"),
    # a division by zero
    ("int main(void) { int z = 0; for (int i = 0; i < 3; i++) z += i - 1;\n"
     "  int q = 10 / z; __VERIFIER_assert(q != 5); return 0; }", "undefined behaviour"),
    # a run that does not end within its share of the budget
    ("int main(void) { unsigned int x = 0; while (1) { x++; }\n"
     "  __VERIFIER_assert(0); return 0; }", "longer than"),
])
def test_never_safe_without_a_finished_defined_execution(tmp_path, body, why):
    _, result = _check(tmp_path, body, seconds=4)
    assert result.status is Status.UNKNOWN and why in result.reason


@pytest.mark.parametrize(("body", "why"), [
    ("int main(void) { int n = __VERIFIER_nondet_int();\n"
     "  __VERIFIER_assert(n != 7); return 0; }", "reads input"),
    ("int main(void) { int x; if (x) x = 1; __VERIFIER_assert(1); return 0; }", "reads input"),
])
def test_programs_with_more_than_one_execution_are_refused(tmp_path, body, why):
    program, result = _check(tmp_path, body)
    assert result.status is Status.UNKNOWN and why in result.reason
    assert execute.refusal(program) is not None


@needs_gcc
@pytest.mark.parametrize("chunk", range(2))
def test_random_deterministic_programs_agree_with_the_interpreter(tmp_path, chunk):
    # torture's generated programs with their two inputs fixed: the interpreter's one run (of the
    # IR, not gcc's build) must end as the execution engine says
    import random

    from quokka.svcomp.qa.torture import generated_program
    from quokka.verifier.exec.interp import run

    verdicts = []
    for seed in range(chunk * 12, chunk * 12 + 12):
        rng = random.Random(seed)
        text = generated_program(rng).replace("__VERIFIER_nondet_int()", str(rng.randint(-4, 4)))
        path = tmp_path / f"d{seed}.c"
        path.write_text(text)
        program = lower(path, "LP64", UNREACH_CALL)
        result = execute.check(program, Budget.of(20))
        truth = run(program, [], max_steps=100_000)
        assert truth.outcome in ("error", "exit", "blocked") and not truth.overflows, (seed, truth.outcome)
        expected = Status.UNSAFE if truth.outcome == "error" else Status.SAFE
        assert result.status is expected, (seed, result.reason)
        verdicts.append(result.status)
    assert Status.SAFE in verdicts and Status.UNSAFE in verdicts


def test_no_overflow_is_left_to_the_other_engines(tmp_path):
    # under no-overflow the harness's sanitizer makes every undefined behaviour "the error"
    from quokka.verifier.properties import NO_OVERFLOW

    program = lower(_write(tmp_path, PHASES), "LP64", NO_OVERFLOW)
    assert execute.refusal(program) == "no-overflow is decided by the other engines"
