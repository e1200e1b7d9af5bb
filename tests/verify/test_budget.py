"""The budget covers the whole run (issues 35, 40): reading the file (cpp, pycparser, lowering)
stops at the deadline with the stage in the reason, a check in the parent is killed at it, and
the `quokka verify` process ends within a second of `--timeout`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from proctree import alive
from quokka.verifier.errors import EngineError, OutOfTime
from quokka.verifier.frontend.coords import CoordMap
from quokka.verifier.frontend.lower import Frontend, lower_source, parse
from quokka.verifier.frontend.preprocess import preprocess
from quokka.verifier.infra.processes import ChildSetup, call_until, process_age_s
from shared_data import BENCHMARKS

ROOT = Path(__file__).resolve().parents[2]
HARDTAIL = BENCHMARKS / "hardtail-dev"


def _straight_line(statements: int) -> str:
    """A program of `statements` assignments in `main` (about 60 bytes each)."""
    lines = (f"  int x{i} = x{i - 1} + {i % 7};\n  if (x{i} < 0) x{i} = 0;\n" for i in range(1, statements))
    body = "".join(lines)
    return ("extern int __VERIFIER_nondet_int(void);\nextern void reach_error(void);\nint main(void) {\n"
            f"  int x0 = __VERIFIER_nondet_int();\n{body}  if (x{statements - 1} < 0) reach_error();\n"
            "  return 0;\n}\n")  # fmt: skip


def _stage(job: object) -> str:
    assert callable(job)
    with pytest.raises(OutOfTime) as raised:
        job()
    return raised.value.stage


def test_each_stage_of_reading_stops_at_the_deadline_and_says_which() -> None:
    text = _straight_line(200)
    past = time.monotonic() - 1
    assert _stage(lambda: lower_source(text, "big.c", deadline=past)) == "preprocessing"
    pre = preprocess(text, "big.c", "LP64")
    coords = CoordMap(pre)
    assert _stage(lambda: parse(pre, coords, deadline=past)) == "parsing"
    ast = parse(pre, coords)
    assert _stage(lambda: Frontend(ast, coords, "LP64", deadline=past).program()) == "lowering"
    assert str(OutOfTime("parsing")) == "timeout while parsing"


def test_without_a_deadline_the_same_program_lowers() -> None:
    program = lower_source(_straight_line(200), "big.c")
    assert program.file == "big.c" and len(program.variables) >= 200


def test_a_call_in_a_child_answers_fails_or_is_killed_with_what_it_started() -> None:
    setup = ChildSetup(detach="group", parent=os.getpid())
    assert call_until("sum", lambda: sum(range(10)), time.monotonic() + 20, setup) == 45
    with pytest.raises(EngineError, match="ZeroDivisionError"):
        call_until("fail", lambda: 1 // 0, time.monotonic() + 20, setup)
    marker = Path(f"/tmp/quokka-budget-test-{os.getpid()}")

    def slow() -> None:
        sleeper = subprocess.Popen(["sleep", "60"])
        marker.write_text(str(sleeper.pid))
        time.sleep(60)

    started = time.monotonic()
    assert call_until("slow", slow, time.monotonic() + 1.0, setup) is None
    assert time.monotonic() - started < 5
    sleeper = int(marker.read_text())
    marker.unlink()
    deadline = time.monotonic() + 5
    while alive(sleeper) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(sleeper)


def test_the_age_of_this_process_counts_its_start_up() -> None:
    age = process_age_s()
    assert 0.0 < age < time.monotonic()


def _verify(target: Path, timeout_s: int) -> tuple[float, dict[str, object]]:
    command = [sys.executable, "-m", "quokka.verifier.cli", "verify", str(target), "--json",
               "--timeout", str(timeout_s)]  # fmt: skip
    started = time.monotonic()
    out = subprocess.run(command, capture_output=True, text=True, check=False, timeout=120)
    data: dict[str, object] = json.loads(out.stdout)
    return time.monotonic() - started, data


@pytest.mark.slow
def test_a_megabyte_program_is_unknown_in_time_with_the_stage(tmp_path: Path) -> None:
    big = tmp_path / "big.c"
    big.write_text(_straight_line(19_000))  # about 1 MB: pycparser alone needs over 15 s
    assert big.stat().st_size > 1_000_000
    wall, data = _verify(big, 5)
    assert wall < 10
    assert data["verdict"] == "unknown"
    assert data["reason"] in ("timeout while parsing", "timeout while lowering")
    assert isinstance(data["time_s"], float) and 4.0 < data["time_s"] < wall


@pytest.mark.slow
@pytest.mark.skipif(not HARDTAIL.is_dir(), reason="shared benchmarks not present")
def test_a_task_that_times_out_ends_within_a_second_of_the_timeout() -> None:
    wall, data = _verify(HARDTAIL / "ml_chain.yml", 4)
    assert data["verdict"] == "unknown" and str(data["reason"]).startswith("timeout")
    assert wall < 4 + 1
