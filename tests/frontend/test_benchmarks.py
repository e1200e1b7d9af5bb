"""Acceptance: every benchmark program lowers (or is rejected with a located, named feature), fast.

Measured targets: quokka-dev >= 83% lowered (the rest use pointers, heap, structs, ...),
code2inv 100%. svcomp-nla-dev: 300/300 (the 15 of the freire1 family compute with `double`: IEEE
floating point, which only bounded model checking handles).
"""

from __future__ import annotations

import csv
import time
from pathlib import Path

import pytest
from quokka.verifier.errors import UnsupportedFeature
from quokka.verifier.frontend import lower
from quokka.verifier.ir import Program, uses_floats
from quokka.verifier.ir.typecheck import check_program
from quokka.verifier.task import read_task
from shared_data import BENCHMARKS

TARGETS = {"quokka-dev": 0.83, "svcomp-nla-dev": 0.95, "code2inv": 1.0}
MAX_CPU_S = 2.0
MAX_WALL_S = 10.0  # a hang detector; the machine running the suite may be busy


pytestmark = pytest.mark.skipif(not BENCHMARKS.is_dir(), reason="shared benchmarks not present")


def _tasks(name: str) -> list[Path]:
    with open(BENCHMARKS / name / "tasks.csv", newline="") as f:
        return [BENCHMARKS / name / row["task"] for row in csv.DictReader(f)]


def _lower_set(name: str) -> list[tuple[Path, Program | UnsupportedFeature]]:
    out: list[tuple[Path, Program | UnsupportedFeature]] = []
    for task_file in _tasks(name):
        task = read_task(task_file)
        cpu, wall = time.process_time(), time.monotonic()
        try:
            result: Program | UnsupportedFeature = lower(task.file, task.data_model)
        except UnsupportedFeature as exc:
            result = exc
        assert time.process_time() - cpu < MAX_CPU_S, task.file
        assert time.monotonic() - wall < MAX_WALL_S, task.file
        if isinstance(result, Program):
            assert result.data_model == task.data_model
        out.append((task.file, result))
    return out


@pytest.fixture(scope="module")
def outcomes() -> dict[str, list[tuple[Path, Program | UnsupportedFeature]]]:
    return {name: _lower_set(name) for name in TARGETS}


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_benchmark_set_lowers(name: str, outcomes: dict[str, list[tuple[Path, object]]]) -> None:
    results = outcomes[name]
    programs = [r for _, r in results if isinstance(r, Program)]
    for program in programs:
        check_program(program)
    for file, r in results:
        if isinstance(r, UnsupportedFeature):
            assert r.coord is not None and r.coord.file == str(file) and r.coord.line > 0, str(r)
            assert r.feature and r.feature in str(r)
    assert len(programs) / len(results) >= TARGETS[name], f"{name}: {len(programs)}/{len(results)} lowered"


def test_svcomp_nla_lowers_entirely(outcomes: dict[str, list[tuple[Path, object]]]) -> None:
    rejected = [str(r) for _, r in outcomes["svcomp-nla-dev"] if isinstance(r, UnsupportedFeature)]
    assert rejected == []
    floating = [f.name for f, r in outcomes["svcomp-nla-dev"] if isinstance(r, Program) and uses_floats(r)]
    assert len(floating) == 15 and all(name.startswith("freire1") for name in floating)
