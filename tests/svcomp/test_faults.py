"""Fault trials of `quokka torture` (issue 20, "faults and limits"): each kind once, and the bugs
they found (engines left running after a wall kill or a closed document, a damaged store ending
in a traceback), each with a regression test."""

from __future__ import annotations

import os
import random
import sqlite3
import sys
import time
from pathlib import Path

import pytest
from proctree import alive
from quokka.svcomp.execution import Limits, RunningProcess, run_limited
from quokka.svcomp.qa import faults
from quokka.svcomp.qa.faults import DAMAGES, HARD, FaultTrials, Program, Report, Row, Violation
from quokka.svcomp.qa.torture import Campaign, Settings
from quokka.svcomp.tasks import load_tasks
from quokka.verifier.infra.processes import tagged_processes
from quokka.verifier.infra.store import Store, StoreError
from svcomp_helpers import FAKE_VERIFIER

SLOW_TASK = "extern void reach_error(void);\n// SVFAKE sleep=1\nint main(void) { return 0; }\n"


def _trials(tmp_path: Path, seed: int = 0, fake: bool = True, tasks: int = 0) -> FaultTrials:
    (tmp_path / "set").mkdir()
    for n in range(tasks):
        (tmp_path / "set" / f"slow{n}.c").write_text(SLOW_TASK)
    found = load_tasks([tmp_path / "set"]).tasks if tasks else ()
    return FaultTrials(tmp_path / "work", found, 5.0, random.Random(seed),
                       verifier=FAKE_VERIFIER if fake else None)


def _folder(trials: FaultTrials, name: str) -> Path:
    folder = trials.work / name
    folder.mkdir(parents=True)
    return folder


def _python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


# ----------------------------------------------------------------------------- kill -9 of a batch


@pytest.mark.parametrize("seed", [1, 2])
def test_kill_9_of_a_batch_then_resume_keeps_every_result_once(tmp_path: Path, seed: int) -> None:
    trials = _trials(tmp_path, seed, tasks=2)
    report = trials.kill_batch(_folder(trials, "kill"))
    assert report.injected == 1 and report.violations == [], report.log


def test_kill_9_of_a_batch_leaves_no_engine_of_the_real_verifier(tmp_path: Path) -> None:
    (tmp_path / "hard.c").write_text(HARD)
    command = [*faults.QUOKKA, "batch", str(tmp_path / "hard.c"), "--db", str(tmp_path / "r.sqlite"),
               "--timeout", "20", "--quiet"]
    process = RunningProcess(command, Limits.for_timeout(20))
    deadline = time.monotonic() + 30
    while len(tagged_processes(process.tag)) < 4 and time.monotonic() < deadline:  # batch, verify, engines
        time.sleep(0.05)
    time.sleep(1.0)  # all engines started
    faults._kill_group(process.pid)
    faults._wait_exit(process.pid, 10)
    report = Report("kill")
    faults._leftovers(report, process.tag, "after kill -9")
    process.wait()  # kills what was left
    assert report.violations == []


def test_the_checks_see_a_lost_or_doubled_result() -> None:
    report = Report("x")
    rows = [Row(1, 1, "a", "true", "correct", "t1"), Row(2, 1, "a", "true", "correct", "t2")]
    faults._each_task_once(report, rows, 2)
    faults._each_task_once(report, [Row(1, 1, "a", "true", "wrong", "t1")], 1)
    assert [v.kind for v in report.violations] == ["wrong", "wrong"]


# ----------------------------------------------------------------------------- a damaged store


@pytest.mark.parametrize("how", DAMAGES)
def test_a_damaged_store_recovers_or_stops_with_one_line(tmp_path: Path, how: str) -> None:
    trials = _trials(tmp_path)
    report = trials.damaged_store(_folder(trials, "store"), how)
    assert report.injected == 1 and report.violations == [], report.log


def test_store_open_refuses_an_overwritten_page_with_a_store_error(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    Store.open(db).close()
    with sqlite3.connect(db) as filled:  # pages past the schema's, to overwrite
        filled.execute("create table filler (x text)")
        filled.executemany("insert into filler values (?)", [(str(k) * 20,) for k in range(2000)])
    with db.open("r+b") as handle:  # page 2 onwards: the schema's tables
        handle.seek(4096)
        handle.write(random.Random(0).randbytes(4 * 4096))
    with pytest.raises(StoreError, match="cannot open the results database") as raised:
        Store.open(db)
    assert "\n" not in str(raised.value)


def test_an_unreadable_store_is_a_crash_finding(tmp_path: Path) -> None:
    (tmp_path / "r.sqlite").write_bytes(b"SQLite format 3\0" + b"\x01" * 200)
    report = Report("x")
    assert faults._results(report, tmp_path / "r.sqlite") == []
    assert [v.kind for v in report.violations] == ["crash"]


# ----------------------------------------------------------------------------- limits


def test_a_hanging_task_is_killed_at_the_wall_limit_and_recorded_as_timeout(tmp_path: Path) -> None:
    trials = _trials(tmp_path, fake=False)
    report = trials.hang(_folder(trials, "hang"))
    assert report.injected == 1 and report.violations == [], report.log


def test_a_wall_kill_also_kills_descendants_in_process_groups_of_their_own() -> None:
    code = ("import os, subprocess, sys, time\n"
            "p = subprocess.Popen([sys.executable, '-c', 'import os, time; os.setpgrp(); time.sleep(60)'])\n"
            "print(p.pid, flush=True)\ntime.sleep(60)\n")
    outcome = run_limited(_python(code), Limits(1, 1.5, 30, 1024))
    assert outcome.killed_for == "wall"
    time.sleep(0.2)
    assert not alive(int(outcome.stdout.split()[0]))


def test_a_process_left_behind_by_a_finished_command_is_killed() -> None:
    code = ("import subprocess, sys\n"
            "p = subprocess.Popen([sys.executable, '-c', 'import os, time; os.setpgrp(); time.sleep(60)'])\n"
            "print(p.pid, flush=True)\n")
    outcome = run_limited(_python(code), Limits(5, 10, 10, 1024))
    assert outcome.exit_code == 0
    time.sleep(0.2)
    assert not alive(int(outcome.stdout.split()[0]))


def test_a_task_out_of_memory_is_recorded_so_with_a_stand_in_verifier(tmp_path: Path) -> None:
    trials = _trials(tmp_path)
    hog = Program("hog.c", "// SVFAKE oom=1\nint main(void) { return 0; }\n")
    report = trials._limit_trial(_folder(trials, "oom"), hog, "out of memory", ("--memory", "300"), 20)
    assert report.injected == 1 and report.violations == [], report.log


@pytest.mark.slow
def test_a_program_that_exhausts_memory_in_the_real_verifier(tmp_path: Path) -> None:
    trials = _trials(tmp_path, fake=False)
    report = trials.out_of_memory(_folder(trials, "oom"))
    assert report.violations == [], report.log


# ----------------------------------------------------------------------------- the language server


def test_language_server_rapid_edits_close_while_verified_and_disconnect(tmp_path: Path) -> None:
    trials = _trials(tmp_path, fake=False)
    report = trials.language_server(_folder(trials, "lsp"))
    assert report.injected == 3 and report.violations == [], report.log


# ----------------------------------------------------------------------------- in the campaign


def test_fault_trials_are_counted_and_their_findings_saved(tmp_path: Path) -> None:
    campaign = Campaign(Settings(1, 0, 5.0, tmp_path / "out"), [], [])
    found = Report("fake fault", 2, [Violation("hang", "left")], ["log"])
    campaign.fault_trials.kinds = [lambda folder: found]
    campaign.fault(0)
    assert campaign.counts.faults == 2 and campaign.counts.hangs == 1 and campaign.counts.failed
    assert campaign.findings[0].trial == "fake fault"
    assert (tmp_path / "out" / "fault0.log").read_text() == "log"




def test_tagged_processes_finds_descendants_only() -> None:
    process = RunningProcess(_python("import time; time.sleep(30)"), Limits(5, 30, 30, 1024))
    try:
        assert tagged_processes(process.tag) == [process.pid]
        assert os.getpid() not in tagged_processes(process.tag)
    finally:
        process.kill()
        process.wait()
    assert tagged_processes(process.tag) == []
