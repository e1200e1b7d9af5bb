"""The results store: schema, one writer, read-only readers, durability, the generic cache."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from quokka.verifier.infra.store import ResultRow, RunInfo, Store, StoreError, content_key


def _row(run_id: int, task: str, **changes: object) -> ResultRow:
    data: dict[str, object] = {"run_id": run_id, "task": task, "name": task, "status": "true",
                               "verdict": "true", "category": "correct", "score": 2, "expected": "true"}
    data.update(changes)
    return ResultRow(**data)  # type: ignore[arg-type]


def test_runs_and_results_round_trip(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    with Store.open(db) as store:
        run = store.start_run(RunInfo(id=0, signature="sig", config="default", verify_args=("--x",),
                                      limits={"timeout_s": 5}, sets=("/a",), machine={"cores": 2}))
        invariants = [{"loop": "main.1", "line": 3, "column": 3, "expr": "x >= 0"}]
        store.add_result(_row(run.id, "t1", invariants=invariants, cpu_s=1.5, published=[{"tool": "u"}]))
        store.add_result(_row(run.id, "t2", status="timeout", verdict="unknown", category="error", score=0))
        assert store.done_tasks(run.id) == {"t1", "t2"}
        found = store.find_run("sig")
        assert found is not None and found.id == run.id
        assert found.verify_args == ("--x",) and found.limits == {"timeout_s": 5}
    with Store.open(db, writer=False) as reader:
        rows = reader.results([run.id])
    assert [r.task for r in rows] == ["t1", "t2"]
    assert rows[0].invariants == invariants and rows[0].cpu_s == 1.5
    assert rows[0].published == [{"tool": "u"}] and rows[1].invariants is None
    assert rows[1].status == "timeout" and rows[1].expected_bool is True


def test_a_task_has_one_result_per_run(tmp_path: Path) -> None:
    with Store.open(tmp_path / "r.sqlite") as store:
        run = store.start_run(RunInfo(id=0, signature="s", config="c"))
        store.add_result(_row(run.id, "t"))
        with pytest.raises(StoreError, match="already has a result"):
            store.add_result(_row(run.id, "t"))
        other = store.start_run(RunInfo(id=0, signature="s2", config="c"))
        store.add_result(_row(other.id, "t"))
        assert len(store.results()) == 2


def test_wal_mode_and_a_single_writer(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    with Store.open(db) as store:
        assert store.db.execute("pragma journal_mode").fetchone()[0] == "wal"
        with pytest.raises(StoreError, match="another writer"):
            Store.open(db)
        run = store.start_run(RunInfo(id=0, signature="s", config="c"))
        store.add_result(_row(run.id, "t"))
        with Store.open(db, writer=False) as reader:  # a reader while the writer is open
            assert [r.task for r in reader.results()] == ["t"]
    with Store.open(db) as again:  # the lock went with the first writer
        assert again.runs()[0].config == "c"


def test_reader_refuses_a_missing_or_foreign_database(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no such results database"):
        Store.open(tmp_path / "none.sqlite", writer=False)
    other = tmp_path / "other.sqlite"
    sqlite3.connect(other).execute("create table x (y)").connection.commit()
    with pytest.raises(StoreError, match="not a Quokka results database"):
        Store.open(other, writer=False)


def test_killed_writer_keeps_every_committed_result(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    script = textwrap.dedent(f"""
        import time
        from pathlib import Path
        from quokka.verifier.infra.store import ResultRow, RunInfo, Store
        store = Store.open(Path({str(db)!r}))
        run = store.start_run(RunInfo(id=0, signature="s", config="c"))
        for i in range(1000):
            store.add_result(ResultRow(run_id=run.id, task=f"t{{i}}", name="n", status="true",
                                       verdict="true", category="correct", score=2))
            print(i, flush=True)
            time.sleep(0.01)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    reported = [proc.stdout.readline() for _ in range(15)]
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    time.sleep(0.1)
    with Store.open(db) as store:  # the lock died with the writer
        tasks = store.done_tasks(1)
    assert len(reported) == 15 and {f"t{i}" for i in range(15)} <= tasks


def test_content_key_separates_parts() -> None:
    assert content_key("ab", "c") != content_key("a", "bc")
    assert content_key("x") == content_key(b"x")
