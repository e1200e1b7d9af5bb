"""The batch acceptance run as one command: interrupt, resume, compare, and check the witnesses.

    python -m quokka.svcomp.qa.acceptance ../shared/benchmarks/code2inv --out acceptance --jobs 2

1. `quokka batch SET --db OUT/interrupted.sqlite` is killed with SIGKILL after `--kill-after`
   results, then the same command runs again to the end;
2. the same batch runs uninterrupted into OUT/reference.sqlite, writing witnesses to
   OUT/witnesses;
3. the correctness witnesses are read back: a batch with `--invariants-from OUT/witnesses` and the
   `check-invariants` configuration (no proposers, no other engines: only the witness invariants
   can prove TRUE) into OUT/readback.sqlite.

It prints what it checked and exits 0 when every check holds: one result per task, none run
twice (results finished before the kill are unchanged, the others come from the second
session), the same verdicts as the uninterrupted run, and every TRUE task re-verified from its
witness. Verdicts near the time limit can legitimately differ between two runs; those are listed.
"""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from quokka.svcomp.configs import DEFAULT_VERIFIER
from quokka.verifier.cli_args import positive_int, seconds
from quokka.verifier.infra.store import ResultRow, Store, StoreError
from rich.console import Console


def _batch(set_path: Path, db: Path, args: argparse.Namespace, *extra: str) -> list[str]:
    return [sys.executable, "-m", "quokka.svcomp.cli", "batch", str(set_path), "--db", str(db),
            "--jobs", str(args.jobs), "--timeout", f"{args.timeout:g}", "--verifier", args.verifier, "-q",
            *extra]


def _rows(db: Path) -> list[ResultRow]:
    try:
        with Store.open(db, writer=False) as store:
            return store.results()
    except StoreError:
        return []


def _interrupt(command: list[str], db: Path, after: int, log: Path) -> tuple[float, dict[str, str]]:
    """Start the batch, SIGKILL it once `after` results are stored; the results it had then."""
    with log.open("w") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
        while len(_rows(db)) < after and proc.poll() is None:
            time.sleep(0.2)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    killed_at = time.time()
    return killed_at, {r.task: r.finished_at for r in _rows(db)}


def _run(command: list[str], log: Path) -> None:
    with log.open("a") as out:
        subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, check=False)


class Checks:
    def __init__(self, console: Console) -> None:
        self.console = console
        self.failed = 0

    def check(self, ok: bool, text: str) -> None:
        self.failed += 0 if ok else 1
        self.say(f"[{'ok' if ok else 'FAILED'}] {text}")

    def say(self, text: str) -> None:
        self.console.print(text, markup=False, highlight=False)


def _resume_checks(checks: Checks, rows: list[ResultRow], before: dict[str, str], total: int) -> None:
    tasks = [r.task for r in rows]
    checks.check(len(rows) == total, f"{len(rows)} result rows for {total} tasks")
    checks.check(len(set(tasks)) == len(tasks), "one result per task (no task stored twice)")
    unchanged = all(r.finished_at == before[r.task] for r in rows if r.task in before)
    checks.check(unchanged, f"the {len(before)} results stored before the kill are unchanged")
    later = {r.session_id for r in rows if r.task not in before}
    first = {r.session_id for r in rows if r.task in before}
    others = total - len(before)
    checks.check(not (later & first), f"the other {others} results come from the resumed session")


def _compare(checks: Checks, rows: list[ResultRow], reference: list[ResultRow]) -> None:
    ours = {r.task: r.status for r in rows}
    theirs = {r.task: r.status for r in reference}
    differ = sorted(t for t in theirs if ours.get(t) != theirs[t])
    checks.check(not differ, f"same verdicts as the uninterrupted run ({len(theirs) - len(differ)} of "
                 f"{len(theirs)} agree)")
    for task in differ:
        checks.say(f"    {Path(task).name}: resumed {ours.get(task)}, uninterrupted {theirs[task]}")


def _readback(checks: Checks, reference: list[ResultRow], readback: list[ResultRow]) -> None:
    true_tasks = {r.task for r in reference if r.status == "true"}
    witnesses = {r.task for r in reference if r.status == "true" and r.witness.endswith(".yml")}
    checks.check(witnesses == true_tasks, f"correctness witnesses written for {len(witnesses)} of "
                 f"{len(true_tasks)} TRUE tasks")
    again = {r.task: r for r in readback if r.task in true_tasks}
    proved = sorted(t for t, r in again.items() if r.status == "true")
    checks.check(len(proved) == len(true_tasks), f"{len(proved)} of {len(true_tasks)} TRUE tasks re-verified "
                 "from their witness invariants alone")
    for task in sorted(true_tasks - set(proved)):
        row = again.get(task)
        what = f"{row.status} {row.reason[:120]}" if row else "no result"
        checks.say(f"    {Path(task).name}: {what}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m quokka.svcomp.qa.acceptance", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("set", type=Path, help="the task set (e.g. ../shared/benchmarks/code2inv)")
    parser.add_argument("--out", type=Path, default=Path("acceptance"), help="folder for databases and logs")
    parser.add_argument("--jobs", type=positive_int, default=2)
    parser.add_argument("--timeout", type=seconds, default=10.0)
    parser.add_argument("--kill-after", type=positive_int, default=20)
    parser.add_argument("--verifier", default=shlex.join(DEFAULT_VERIFIER))
    args = parser.parse_args(argv)
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    for name in ("interrupted", "reference", "readback"):
        for suffix in ("", "-wal", "-shm", ".lock"):
            (out / f"{name}.sqlite{suffix}").unlink(missing_ok=True)
    log = out / "batch.log"
    command = _batch(args.set, out / "interrupted.sqlite", args)
    checks = Checks(Console())
    killed_at, before = _interrupt(command, out / "interrupted.sqlite", args.kill_after, log)
    checks.say(f"killed the batch with SIGKILL after {len(before)} results")
    _run(command, log)
    witnesses = out / "witnesses"
    _run(_batch(args.set, out / "reference.sqlite", args, "--witness-dir", str(witnesses)), log)
    _run(_batch(args.set, out / "readback.sqlite", args, "--invariants-from", str(witnesses),
                "--config", "check-invariants"), log)
    reference = _rows(out / "reference.sqlite")
    _resume_checks(checks, _rows(out / "interrupted.sqlite"), before, len(reference))
    _compare(checks, _rows(out / "interrupted.sqlite"), reference)
    _readback(checks, reference, _rows(out / "readback.sqlite"))
    stamp = time.strftime("%H:%M:%S", time.localtime(killed_at))
    checks.say(f"killed at {stamp}; databases and log in {out}")
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main())
