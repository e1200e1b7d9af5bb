"""Where a run's time went (issue 18): solver calls timed by kind per strategy, a strategy killed
in the middle of a call included, the portfolio's own checks, `--profile` and the JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from corpus import CORPUS
from quokka.verifier.engines.base import Budget, EngineResult, Status, unknown
from quokka.verifier.infra.profile import Recorder, Timing
from quokka.verifier.ir import Program
from quokka.verifier.verdict.portfolio import Portfolio, PortfolioConfig
from quokka.verifier.verdict.results import Result, Verdict

SAFE = next(e for e in CORPUS if e.expected == "safe" and e.invariants and e.c_source is None)


def test_calls_are_counted_by_kind_with_their_answers():
    recorder = Recorder()
    for answer in ("sat", "unsat", "unsat"):
        with recorder.timed("query") as call:
            time.sleep(0.01)
            call.answer = answer
    with recorder.timed("other"):
        pass
    (query, other) = recorder.snapshot("bmc")
    assert (query.who, query.what, query.count) == ("bmc", "query", 3)
    assert query.answers == (("sat", 1), ("unsat", 2))
    assert query.total_s >= 0.03 and query.max_s >= 0.01 and query.total_s >= query.max_s
    assert (other.what, other.count, other.answers) == ("other", 1, (("done", 1),))


def test_a_call_in_progress_is_in_the_snapshot_as_running():
    recorder = Recorder()
    with recorder.timed("slow query"):
        time.sleep(0.05)
        (row,) = recorder.snapshot("spacer")
    assert row.answers == (("running", 1),) and row.total_s >= 0.05
    (row,) = recorder.snapshot("spacer")
    assert row.answers == (("done", 1),)


def test_derived_budgets_share_the_recorder():
    budget = Budget.of(10)
    with budget.sub(1).recorder.timed("a"), budget.fraction(0.5).recorder.timed("b"):
        pass
    assert {t.what for t in budget.recorder.snapshot("x")} == {"a", "b"}


def _stuck(program: Program, budget: Budget) -> EngineResult:
    with budget.recorder.timed("quick query") as call:
        call.answer = "unknown"
    with budget.recorder.timed("stuck query"):
        time.sleep(60)
    return unknown("stuck", "never")


def _claim(program: Program, budget: Budget) -> EngineResult:
    time.sleep(1.5)
    return EngineResult("claim", Status.SAFE, "claimed", invariants=SAFE.invariants)


def test_a_strategy_killed_in_a_call_still_shows_it():
    config = PortfolioConfig(timeout_s=10, replay_with_compiler=False)
    result = Portfolio(SAFE.program, config).run({"stuck": _stuck, "claim": _claim})
    assert result.verdict is Verdict.TRUE
    rows = {(t.who, t.what): t for t in result.profile}
    stuck = rows["stuck", "stuck query"]
    assert stuck.answers == (("running", 1),) and stuck.total_s >= 0.5
    assert rows["stuck", "quick query"].answers == (("unknown", 1),)
    assert rows["portfolio", "certificate check"].answers == (("checked", 1),)


def test_the_profile_survives_the_wire_format():
    timing = Timing("bmc", "error query", 2, 1.5, 1.0, (("sat", 1), ("unsat", 1)))
    result = Result(Verdict.UNKNOWN, "r", "f.c", profile=(timing,))
    assert Result.from_json(json.loads(json.dumps(result.to_json()))) == result


# n is unbounded, so no unrolling is complete (bmc cannot decide it before spacer does)
COUNTER = """extern void reach_error(void); extern int __VERIFIER_nondet_int(void);
int main(void) { int n = __VERIFIER_nondet_int(), i = 0; while (i < n) { i = i + 1; }
  if (n >= 0 && i != n) reach_error(); return 0; }
"""


def _verify(path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "quokka.verifier.cli", "verify", str(path), "--timeout", "30",
               "--property", "unreach-call", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False,
                          env={**os.environ, "COLUMNS": "200"})


def test_verify_profile_prints_the_engines_and_their_calls(tmp_path):
    program = tmp_path / "counter.c"
    program.write_text(COUNTER)
    done = _verify(program, "--profile", "--engines", "bmc,spacer")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Profile: where the time went" in done.stdout
    assert "spacer query" in done.stdout and "certificate check" in done.stdout
    profile = json.loads(_verify(program, "--json", "--engines", "spacer").stdout)["profile"]
    check = next(row for row in profile if row["what"] == "certificate check")
    assert check["who"] == "portfolio" and check["answers"] == [["checked", 1]]
    assert any(row["who"] == "spacer" and row["what"] == "spacer query" for row in profile)
