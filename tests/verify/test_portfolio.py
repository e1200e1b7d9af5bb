"""The portfolio is the gate every verdict passes: claims are checked, engines race, failures are results."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import time

from corpus import CORPUS
from quokka.verifier.engines import bmc
from quokka.verifier.engines.base import Budget, EngineResult, Status, unknown
from quokka.verifier.infra.processes import paused
from quokka.verifier.ir import Assert, Assume, Program, walk_stmts
from quokka.verifier.ir.builder import ProgramBuilder, add, ge, ne, num
from quokka.verifier.ir.transform import at_loop_heads
from quokka.verifier.verdict.portfolio import YIELD_NICE, Portfolio, PortfolioConfig
from quokka.verifier.verdict.results import Verdict

SAFE = next(e for e in CORPUS if e.expected == "safe" and e.invariants and e.c_source is None)
UNSAFE = next(e for e in CORPUS if e.expected == "unsafe" and e.witness and e.c_source is None)
CONFIG = PortfolioConfig(timeout_s=10, replay_with_compiler=False)


def claims(status: Status, **fields: object):
    return lambda program, budget: EngineResult("claim", status, "claimed", **fields)  # type: ignore[arg-type]


def test_a_safe_claim_with_a_wrong_certificate_is_not_true():
    loop = SAFE.program.loops[0].id
    result = Portfolio(SAFE.program, CONFIG).run({"claim": claims(Status.SAFE, invariants={loop: num(0)})})
    assert result.verdict is Verdict.UNKNOWN
    assert any(run.engine == "certificate" and run.status == "rejected" for run in result.engines)


def test_a_safe_claim_on_an_unsafe_program_is_never_true():
    loop = UNSAFE.program.loops[0].id if UNSAFE.program.loops else "L0"
    result = Portfolio(UNSAFE.program, CONFIG).run({"claim": claims(Status.SAFE, invariants={loop: num(1)})})
    assert result.verdict is Verdict.UNKNOWN


def test_an_unsafe_claim_whose_inputs_do_not_reach_the_error_is_not_false():
    result = Portfolio(SAFE.program, CONFIG).run({"claim": claims(Status.UNSAFE, inputs=(0, 0, 0))})
    assert result.verdict is Verdict.UNKNOWN
    assert any(run.engine == "replay" and run.status == "rejected" for run in result.engines)


def test_checked_claims_become_verdicts_with_certificate_and_counterexample():
    safe = Portfolio(SAFE.program, CONFIG).run({"claim": claims(Status.SAFE, invariants=SAFE.invariants)})
    assert safe.verdict is Verdict.TRUE and safe.invariants and safe.decided_by == "claim"
    unsafe = Portfolio(UNSAFE.program, CONFIG).run({"claim": claims(Status.UNSAFE, inputs=UNSAFE.witness)})
    assert unsafe.verdict is Verdict.FALSE and unsafe.counterexample is not None


def test_the_first_checked_answer_wins_and_slow_engines_are_killed():
    def slow(program: Program, budget: Budget) -> EngineResult:
        time.sleep(60)
        return unknown("slow", "never")

    started = time.monotonic()
    result = Portfolio(SAFE.program, CONFIG).run(
        {"slow": slow, "claim": claims(Status.SAFE, invariants=SAFE.invariants)}
    )
    assert result.verdict is Verdict.TRUE and time.monotonic() - started < 8


def test_crashes_and_timeouts_are_unknown_with_reasons():
    def crash(program: Program, budget: Budget) -> EngineResult:
        raise RuntimeError("boom")

    def slow(program: Program, budget: Budget) -> EngineResult:
        time.sleep(60)
        return unknown("slow", "never")

    result = Portfolio(SAFE.program, PortfolioConfig(timeout_s=1.5)).run({"crash": crash, "slow": slow})
    assert result.verdict is Verdict.UNKNOWN and result.reason == "timeout"
    runs = {run.engine: run for run in result.engines}
    assert "boom" in runs["crash"].reason and runs["slow"].status == "timeout"


def test_yielding_strategies_run_at_a_lower_priority():
    def niceness(program: Program, budget: Budget) -> EngineResult:
        return unknown("probe", str(os.nice(0)))

    config = PortfolioConfig(timeout_s=10, yielding=frozenset({"low"}))
    result = Portfolio(SAFE.program, config).run({"low": niceness, "normal": niceness})
    reported = sorted(int(run.reason) for run in result.engines)
    assert reported[1] - reported[0] == YIELD_NICE


def test_a_strategy_over_its_memory_cap_is_unknown():
    def hog(program: Program, budget: Budget) -> EngineResult:
        block = bytearray(512 * 1024 * 1024)
        return unknown("hog", str(len(block)))

    result = Portfolio(SAFE.program, PortfolioConfig(timeout_s=10, memory_mb=256)).run({"hog": hog})
    assert result.verdict is Verdict.UNKNOWN and "out of memory" in result.reason


def test_a_reporting_strategy_is_awaited_for_its_report_but_does_not_decide():
    from quokka.verifier.verdict.results import CandidateReport

    report = CandidateReport(SAFE.program.loops[0].id, "x >= 0", "llm", "rejected", "consecution fails")

    def late(program: Program, budget: Budget) -> EngineResult:
        time.sleep(0.5)
        return unknown("quokka", "no proposed candidate proved the property", 0.5, {"candidates": [report]})

    config = PortfolioConfig(timeout_s=10, replay_with_compiler=False, reporting=frozenset({"quokka"}))
    result = Portfolio(SAFE.program, config).run(
        {"quokka": late, "claim": claims(Status.SAFE, invariants=SAFE.invariants)}
    )
    assert result.verdict is Verdict.TRUE and result.decided_by == "claim"
    assert result.candidates == (report,)
    assert [r.engine for r in result.engines] == ["claim", "quokka"]


def test_a_reporting_strategy_is_awaited_only_for_the_grace_period():
    def slow(program: Program, budget: Budget) -> EngineResult:
        time.sleep(60)
        return unknown("quokka", "never")

    config = PortfolioConfig(timeout_s=20, replay_with_compiler=False, reporting=frozenset({"quokka"}),
                             report_grace_s=1.0)  # fmt: skip
    started = time.monotonic()
    result = Portfolio(SAFE.program, config).run(
        {"quokka": slow, "claim": claims(Status.SAFE, invariants=SAFE.invariants)}
    )
    assert result.verdict is Verdict.TRUE and result.candidates == ()
    assert time.monotonic() - started < 8


def test_what_a_strategy_prints_itself_goes_to_standard_error(capfd):
    """A solver's own message on file descriptor 1 (Z3's "ASSERTION VIOLATION ...") must not
    reach standard output, which `verify --json` owns."""

    def noisy(program: Program, budget: Budget) -> EngineResult:
        os.write(1, b"NOISE FROM A SOLVER\n")
        return unknown("noisy", "said something")

    Portfolio(SAFE.program, CONFIG).run({"noisy": noisy})
    out, err = capfd.readouterr()
    assert "NOISE FROM A SOLVER" not in out and "NOISE FROM A SOLVER" in err


def test_a_program_without_an_error_location_is_true_without_running_an_engine():
    # every assertion becomes an assumption: nothing can fail
    program = at_loop_heads(SAFE.program, lambda loop, coord: (), assert_to_assume=True)
    assert not any(isinstance(s, Assert) for s in walk_stmts(program.body))
    assert any(isinstance(s, Assume) for s in walk_stmts(program.body))
    result = Portfolio(program, CONFIG).run({"claim": claims(Status.UNSAFE, inputs=(0,))})
    assert result.verdict is Verdict.TRUE and result.decided_by == "frontend", result.reason
    assert [run.engine for run in result.engines] == ["frontend"]


def test_paused_process_groups_are_stopped_and_continued():
    child = subprocess.Popen(["sleep", "30"], start_new_session=True)

    def state() -> str:
        with open(f"/proc/{child.pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0]

    try:
        with paused([child.pid]):
            time.sleep(0.2)
            assert state() == "T"
        time.sleep(0.2)
        assert state() == "S"
        with paused([child.pid, 2**22 + 7]):  # a group that is gone is skipped
            pass
        assert child.poll() is None
    finally:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()


def _ten_steps(bad: int) -> Program:
    """x counts from 0 to 10; the assertion x != bad fails after `bad` iterations (never for 11)."""
    b = ProgramBuilder("ten.c")
    x = b.var("x")
    b.assign(x, num(0))
    with b.loop():
        b.if_break(ge(x, num(10)))
        b.assign(x, add(x, num(1)))
        b.check(ne(x, num(bad)))
    return b.build()


def test_a_claimed_complete_unrolling_is_unrolled_again_before_it_is_true():
    safe = Portfolio(_ten_steps(11), CONFIG).run(
        {"claim": claims(Status.SAFE, invariants={}, stats={"complete": True, "bound": 11})}
    )
    assert safe.verdict is Verdict.TRUE and safe.invariants == () and safe.decided_by == "claim"
    short = Portfolio(_ten_steps(11), CONFIG).run(  # 3 iterations do not cover every path
        {"claim": claims(Status.SAFE, invariants={}, stats={"complete": True, "bound": 3})}
    )
    assert short.verdict is Verdict.UNKNOWN
    buggy = Portfolio(_ten_steps(7), CONFIG).run(
        {"claim": claims(Status.SAFE, invariants={}, stats={"complete": True, "bound": 11})}
    )
    assert buggy.verdict is Verdict.UNKNOWN
    assert any(run.engine == "certificate" and run.status == "rejected" for run in buggy.engines)


def test_bmc_proves_a_loop_it_can_unroll_completely():
    result = bmc.check(_ten_steps(11), Budget.of(10))
    assert result.status is Status.SAFE and result.stats["complete"] is True and result.stats["bound"] == 11
    assert "no undefined behaviour on any path" in result.reason
    assert bmc.check(_ten_steps(7), Budget.of(10)).status is Status.UNSAFE


def test_a_check_the_deadline_cuts_short_is_unknown_and_says_which() -> None:
    late = dataclasses.replace(CONFIG, deadline=time.monotonic() - 1)  # checks had to be done already
    safe = Portfolio(SAFE.program, late).run({"claim": claims(Status.SAFE, invariants=SAFE.invariants)})
    assert safe.verdict is Verdict.UNKNOWN and safe.reason == "timeout while checking claim's certificate"
    unsafe = Portfolio(UNSAFE.program, late).run({"claim": claims(Status.UNSAFE, inputs=UNSAFE.witness)})
    assert unsafe.verdict is Verdict.UNKNOWN
    assert unsafe.reason == "timeout while confirming claim's counterexample"
    # with time left, the same claims are checked in their child process and become verdicts
    timely = dataclasses.replace(CONFIG, deadline=time.monotonic() + 30)
    assert Portfolio(SAFE.program, timely).run(
        {"claim": claims(Status.SAFE, invariants=SAFE.invariants)}).verdict is Verdict.TRUE  # fmt: skip
