"""The batch runner with a fake verifier: statuses, the store, resume, witnesses, kill -9."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from quokka.svcomp.configs import Config, resolve
from quokka.svcomp.execution import Limits, Outcome
from quokka.svcomp.runner import (
    BatchSpec,
    LocalBackend,
    interpret,
    plan_jobs,
    proposer_stats,
    run_batch,
    task_command,
)
from quokka.svcomp.tasks import load_tasks
from quokka.verifier.infra.store import RunInfo, Store
from quokka.verifier.verdict.results import BAD_INPUT, Diagnostic
from svcomp_helpers import FAKE_VERIFIER, make_set

MALFORMED = "malformed verify --json output:"
LIMITS = Limits(timeout_s=5, wall_s=3, cpu_s=20, memory_mb=1024)


class Sink:
    def __init__(self) -> None:
        self.rows: list[str] = []
        self.started: tuple[int, int] | None = None

    def start(self, runs: object, total: int, done: list[object]) -> None:
        self.started = (total, len(done))

    def add(self, row: object) -> None:
        self.rows.append(row.task)

    def tick(self) -> None:
        pass

    def stop(self) -> None:
        pass


def _outcome(stdout: str = "", exit_code: int | None = 0, **kw: object) -> Outcome:
    data: dict[str, object] = {"command": ("x",), "exit_code": exit_code, "signal": None, "stdout": stdout,
                               "stderr_tail": "", "cpu_s": 0.5, "wall_s": 0.6, "max_rss_mb": 30.0}
    data.update(kw)
    return Outcome(**data)  # type: ignore[arg-type]


def _json(verdict: str, **kw: object) -> str:
    return json.dumps({"verdict": verdict, "reason": "r", "file": "f.c", **kw})


@pytest.mark.parametrize(
    ("outcome", "status"),
    [
        (_outcome(_json("true")), "true"),
        (_outcome("log line\n" + _json("false")), "false"),
        (_outcome(_json("unknown"), 1), "unknown"),
        (_outcome(_json("true"), 1), "error: exit code 1 does not match verdict true"),
        (_outcome(json.dumps(Diagnostic("f.c", 1, 1, BAD_INPUT, "bad").to_json()), 2), "error: f.c:1:1: bad"),
        (_outcome(_json("unknown"), 2), "error: r"),
        (_outcome(_json("maybe"), 0), f"error: {MALFORMED} ValueError 'maybe' is not a valid Verdict"),
        (_outcome('{"a": 1}', 0), "error: exit code 0, no verdict"),
        (_outcome("", None, signal=9, killed_for="wall"), "timeout"),
        (_outcome("", None, signal=24), "timeout"),
        (_outcome("", 1, stderr_tail="Traceback\nMemoryError\n"), "out of memory"),
        (_outcome("", 0, stderr_tail="Exception in thread T:\nMemoryError\n"), "out of memory"),
        (_outcome("", None, signal=6, stderr_tail="what():  std::bad_alloc\n"), "out of memory"),
        (_outcome("not json", 0), "error: exit code 0, no verdict"),
        (_outcome("", None, signal=11, stderr_tail="boom\n"), "error: killed by SIGSEGV, no verdict: boom"),
        (_outcome("", None, launch_error="cannot start q: no"), "error: cannot start q: no"),
    ],
)
def test_interpret_outcomes(outcome: Outcome, status: str) -> None:
    assert interpret(outcome, LIMITS).status == status


def test_command_and_interleaving(tmp_path: Path) -> None:
    folder = make_set(tmp_path, {"a": ("true", ""), "b": ("true", "")})
    tasks = load_tasks([folder]).tasks
    spec = BatchSpec(tasks=tasks, configs=resolve(["default", "spacer"]), limits=LIMITS,
                     verify_args=("--proposers", "none"), verifier=("qv",))
    command = task_command(spec, spec.configs[1], tasks[0])
    assert command == ("qv", str(tasks[0].program), "--json", "--timeout", "5", "--memory", "1024",
                       "--property", "unreach-call", "--data-model", "ILP32",
                       "--engines", "spacer",
                       "--proposers", "none")
    run_a = RunInfo(id=1, signature="a", config="default")
    run_b = RunInfo(id=2, signature="b", config="spacer")
    jobs = plan_jobs(spec, [(run_a, spec.configs[0], set()), (run_b, spec.configs[1], {tasks[0].key})])
    assert [(j.config, j.task.name) for j in jobs] == [
        ("default", "set/a.yml"), ("default", "set/b.yml"), ("spacer", "set/b.yml")]


def test_each_task_is_given_its_share_of_the_cores_unless_its_configuration_says(tmp_path: Path) -> None:
    (task,) = load_tasks([make_set(tmp_path, {"a": ("true", "")})]).tasks
    spec = BatchSpec(tasks=(), configs=resolve(["default", "race"]), limits=LIMITS, verifier=("qv",), cores=1)
    default, race = (task_command(spec, config, task) for config in spec.configs)
    assert default[default.index("--cores") + 1] == "1"
    assert race[-2:] == ("--cores", "0")  # the last one counts: the race's own


def test_the_reading_of_uninitialised_locals_is_the_verify_default_unless_asked(tmp_path: Path) -> None:
    folder = make_set(tmp_path, {"a": ("true", "")})
    spec = BatchSpec(tasks=(), configs=resolve(["default"]), limits=LIMITS, verifier=("qv",))
    (task,) = load_tasks([folder]).tasks
    assert "--uninitialised" not in task_command(spec, spec.configs[0], task)
    told = BatchSpec(tasks=(), configs=resolve(["default"]), limits=LIMITS, verifier=("qv",),
                     verify_args=("--uninitialised", "nondet"))  # fmt: skip
    assert task_command(told, told.configs[0], task)[-2:] == ("--uninitialised", "nondet")


def test_a_task_dying_of_memory_error_with_exit_code_0_is_out_of_memory(tmp_path: Path) -> None:
    folder = make_set(tmp_path, {"hog": ("true", "oom=thread")})
    # filling 1 GB takes seconds on a loaded machine: the 3 s wall limit would end it first
    roomy = Limits(timeout_s=5, wall_s=60, cpu_s=60, memory_mb=1024)
    with Store.open(tmp_path / "r.sqlite") as store:
        run_batch(_spec(folder, limits=roomy), store, LocalBackend(1), Sink())
        (row,) = store.results()
    assert (row.exit_code, row.status, row.category) == (0, "out of memory", "error")
    assert row.reason == "memory limit of 1024 MB reached"


TASKS = {
    "ok_true": ("true", "verdict=true"),
    "ok_false": ("false", "verdict=false"),
    "wrong": ("true", "verdict=false"),
    "dunno": ("true", "verdict=unknown"),
    "crash": ("true", "exit=3"),
    "slow": ("true", "sleep=30 child=1"),
}
EXPECTED = {"ok_true": ("true", "correct", 2), "ok_false": ("false", "correct", 1),
            "wrong": ("false", "wrong", -16), "dunno": ("unknown", "unknown", 0),
            "crash": ("error: exit code 3, no verdict", "error", 0), "slow": ("timeout", "error", 0)}


def _spec(folder: Path, **kw: object) -> BatchSpec:
    data: dict[str, object] = {"tasks": load_tasks([folder]).tasks, "configs": (Config("default"),),
                               "limits": LIMITS, "verifier": FAKE_VERIFIER, "sets": (str(folder),)}
    data.update(kw)
    return BatchSpec(**data)  # type: ignore[arg-type]


def test_batch_writes_every_result_and_resumes(tmp_path: Path) -> None:
    folder = make_set(tmp_path, TASKS)
    db = tmp_path / "r.sqlite"
    with Store.open(db) as store:
        first = run_batch(_spec(folder), store, LocalBackend(3), Sink())
        rows = {Path(r.task).stem: r for r in store.results()}
        assert (first.ran, first.resumed) == (6, 0)
        assert {k: (r.status, r.category, r.score) for k, r in rows.items()} == EXPECTED
        assert rows["ok_true"].invariants[0]["expr"] == "x >= 0"
        assert rows["ok_true"].proposer_stats == {
            "dynamic": {"proven": 1, "rejected": 1}, "llm": {"unused": 1}}
        assert rows["ok_false"].counterexample["inputs"][0]["value"] == -3
        assert rows["slow"].wall_s < 10 and rows["crash"].exit_code == 3
        sink = Sink()
        again = run_batch(_spec(folder), store, LocalBackend(3), sink)
        assert (again.ran, again.resumed, sink.started) == (0, 6, (6, 6))
        assert again.runs[0].id == first.runs[0].id
        fresh = run_batch(_spec(folder, rerun=True), store, LocalBackend(3), Sink())
        assert fresh.runs[0].id != first.runs[0].id and fresh.ran == 6
        runs = store.runs()
    assert [r.status for r in runs] == ["finished", "finished"]
    assert runs[0].ended_at and runs[0].machine["cores"] == os.cpu_count()


def test_witnesses_are_written_and_read_back_as_invariants(tmp_path: Path) -> None:
    folder = make_set(tmp_path, {"ok_true": ("true", "verdict=true inv=i<=10"),
                                 "ok_false": ("false", "verdict=false"),
                                 "dunno": ("true", "verdict=unknown")})
    witnesses, log = tmp_path / "w", tmp_path / "log"
    log.mkdir()
    with Store.open(tmp_path / "r.sqlite") as store:
        run_batch(_spec(folder, witness_dir=witnesses), store, LocalBackend(2), Sink())
        written = sorted(p.name for p in witnesses.iterdir())
        assert written == ["set__ok_false.yml.violation.yml", "set__ok_true.yml.correctness.yml"]
        entry = yaml.safe_load((witnesses / written[1]).read_text())[0]
        assert entry["content"][0]["invariant"]["value"] == "i<=10"
        assert entry["metadata"]["task"]["input_files"] == ["ok_true.c"]  # as its task file names it
        assert entry["content"][0]["invariant"]["location"]["file_name"] == "ok_true.c"
        os.environ["SVFAKE_LOG"] = str(log)
        try:
            run_batch(_spec(folder, invariants_from=witnesses), store, LocalBackend(2), Sink())
        finally:
            del os.environ["SVFAKE_LOG"]
        rows = {Path(r.task).stem: r for r in store.results([2])}
    argv = {Path(a[1]).stem: a for a in (json.loads(p.read_text())["argv"] for p in log.iterdir())}
    assert sorted(argv) == ["ok_true"]  # the others have no correctness witness: not run
    assert argv["ok_true"][-2:] == ["--invariant", "9:i<=10"]  # the loop keyword's line
    assert rows["ok_true"].status == "true"
    assert rows["dunno"].status.startswith("error: witness: no correctness witness")


def test_invariants_from_a_jsonl_file_are_passed_per_program(tmp_path: Path) -> None:
    folder = make_set(tmp_path, {"a": ("true", "verdict=true"), "b": ("true", "verdict=true")})
    records = [{"file": "a.c", "after_line": 9, "invariant": "i <= 10"},
               {"file": "a.c", "after_line": 9, "invariant": "0 <= i"}]
    source = folder / "invariants.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in records))
    log = tmp_path / "log"
    log.mkdir()
    os.environ["SVFAKE_LOG"] = str(log)
    try:
        with Store.open(tmp_path / "r.sqlite") as store:
            run_batch(_spec(folder, invariants_from=source), store, LocalBackend(2), Sink())
            rows = {Path(r.task).stem: r for r in store.results()}
    finally:
        del os.environ["SVFAKE_LOG"]
    argv = {Path(a[1]).stem: a for a in (json.loads(p.read_text())["argv"] for p in log.iterdir())}
    assert sorted(argv) == ["a"]
    assert argv["a"][-4:] == ["--invariant", "9:i <= 10", "--invariant", "9:0 <= i"]
    assert rows["b"].status.startswith("error: invariants: no invariant for b.c")


def test_kill_9_loses_only_tasks_in_flight_and_resume_finishes(tmp_path: Path) -> None:
    tasks = {f"t{i:02d}": ("true" if i % 3 else "false", "verdict=" + ("true" if i % 3 else "false")
                           + " sleep=0.4") for i in range(12)}
    folder = make_set(tmp_path, tasks)
    db, log = tmp_path / "r.sqlite", tmp_path / "log"
    log.mkdir()
    command = [sys.executable, "-m", "quokka.svcomp.cli", "batch", str(folder), "--db", str(db),
               "--jobs", "2", "--timeout", "5", "-q", "--verifier", " ".join(FAKE_VERIFIER)]
    env = {**os.environ, "SVFAKE_LOG": str(log)}
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _wait_for_rows(db, 4)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    killed_at = time.time()
    time.sleep(0.5)  # in-flight fakes die with their parent (PR_SET_PDEATHSIG)
    with Store.open(db, writer=False) as store:
        before = {r.task: r.finished_at for r in store.results()}
    assert 4 <= len(before) < 12
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    with Store.open(db, writer=False) as store:
        rows = store.results()
        runs = store.runs()
    assert len(runs) == 1 and len(rows) == 12 and len({r.task for r in rows}) == 12
    assert {r.task: r.finished_at for r in rows if r.task in before} == before
    assert all(r.session_id == 2 for r in rows if r.task not in before)
    with Store.open(db, writer=False) as store:
        sessions = store.db.execute("select id, status from sessions order by id").fetchall()
    assert sessions == [(1, "killed"), (2, "finished")]
    assert {Path(r.task).stem: r.status for r in rows} == {k: v[0] for k, v in tasks.items()}
    completed = [json.loads(p.read_text()) for p in log.iterdir()]
    programs = [c["argv"][1] for c in completed]
    assert len(programs) == len(set(programs)) == 12  # no task ran to its end twice
    finished_first = {r.program for r in rows if r.task in before}
    assert all(c["end"] <= killed_at for c in completed if c["argv"][1] in finished_first)


def _wait_for_rows(db: Path, count: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if db.exists():
            try:
                with Store.open(db, writer=False) as store:
                    if len(store.results()) >= count:
                        return
            except Exception:
                pass
        time.sleep(0.05)
    raise AssertionError("the batch wrote no results in time")


def test_acceptance_command_passes_on_a_small_set(tmp_path: Path) -> None:
    tasks = {f"t{i}": ("true" if i % 3 else "false", ("verdict=true inv=i<=10" if i % 3 else "verdict=false")
                       + " sleep=0.3") for i in range(6)}
    folder = make_set(tmp_path, tasks)
    proc = subprocess.run(
        [sys.executable, "-m", "quokka.svcomp.qa.acceptance", str(folder), "--out", str(tmp_path / "out"),
         "--kill-after", "2", "--timeout", "5", "--verifier", " ".join(FAKE_VERIFIER)],
        capture_output=True, text=True, timeout=180,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("[ok]") == 7 and "FAILED" not in proc.stdout
    assert "4 of 4 TRUE tasks re-verified" in proc.stdout


def test_a_candidate_counts_for_each_of_its_proposers() -> None:
    candidates = [
        {"proposer": "dynamic", "status": "proven", "also_proposed_by": ["llm"]},
        {"proposer": "dynamic", "status": "rejected"},
        {"proposer": "llm", "status": "unused", "also_proposed_by": []},
    ]
    assert proposer_stats(candidates) == {
        "dynamic": {"proven": 1, "rejected": 1}, "llm": {"proven": 1, "unused": 1}}
