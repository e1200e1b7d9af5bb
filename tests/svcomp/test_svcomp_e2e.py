"""End to end with the real `quokka verify` on a few code2inv tasks (skipped while verify does not run)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml
from quokka.svcomp.configs import DEFAULT_VERIFIER, resolve
from quokka.svcomp.execution import Limits
from quokka.svcomp.runner import BatchSpec, LocalBackend, run_batch
from quokka.svcomp.tasks import load_tasks
from quokka.verifier.infra.store import Store
from quokka.verifier.verdict.results import Result, UnreadableOutput, read_verify_output
from svcomp_helpers import BENCHMARKS, REPO, QuietSink

TASKS = ("1.yml", "2.yml", "3.yml", "5.yml")


def _verify_works() -> str:
    """'' when `quokka verify --json` answers on a bundled example, else why not."""
    try:
        proc = subprocess.run([*DEFAULT_VERIFIER, str(REPO / "examples" / "linear.c"), "--json", "--timeout",
                               "20"], capture_output=True, text=True, timeout=90)
    except subprocess.TimeoutExpired:
        return "quokka verify did not answer in 90 s"
    try:
        output = read_verify_output(proc.stdout)
    except UnreadableOutput as exc:
        return f"quokka verify does not run yet: {exc}"
    if not isinstance(output, Result) or proc.returncode not in (0, 1):
        return f"quokka verify does not run yet: {(proc.stderr.strip().splitlines() or ['?'])[-1]}"
    return ""


@pytest.fixture(scope="module")
def verify_ok() -> None:
    if not BENCHMARKS.is_dir():
        pytest.skip("shared benchmarks not present")
    why = _verify_works()
    if why:
        pytest.skip(why)


def test_code2inv_tasks_witnesses_and_readback(verify_ok: None, tmp_path: Path) -> None:
    tasks = load_tasks([BENCHMARKS / "code2inv" / name for name in TASKS]).tasks
    witnesses = tmp_path / "w"
    limits = Limits.for_timeout(10, 4096)
    spec = BatchSpec(tasks=tasks, configs=resolve(["default"]), limits=limits, witness_dir=witnesses)
    with Store.open(tmp_path / "r.sqlite") as store:
        run_batch(spec, store, LocalBackend(2), QuietSink())
        rows = store.results()
        assert len(rows) == len(TASKS)
        assert not [r.name for r in rows if r.category == "wrong"]  # code2inv is all TRUE
        proved = [r for r in rows if r.status == "true"]
        assert proved, [(r.name, r.status, r.reason) for r in rows]
        for row in proved:
            entry = yaml.safe_load(Path(row.witness).read_text())[0]
            assert entry["entry_type"] == "invariant_set"
            # a complete unrolling needs no invariant (task 3's loop runs 5 times)
            assert entry["content"] or "no undefined behaviour on any path" in row.reason, row.reason
        proved = [r for r in proved if yaml.safe_load(Path(r.witness).read_text())[0]["content"]]
        assert proved
        check = BatchSpec(tasks=tuple(t for t in tasks if t.key in {r.task for r in proved}),
                          configs=resolve(["check-invariants"]), limits=limits, invariants_from=witnesses)
        run_batch(check, store, LocalBackend(2), QuietSink())
        again = store.results([2])
    assert {r.task: r.status for r in again} == {r.task: "true" for r in proved}
