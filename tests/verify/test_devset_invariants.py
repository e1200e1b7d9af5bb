"""Wrong invariants on real dev-set tasks never change a verdict for the worse.

For `false` tasks of `quokka-dev`, UAutomizer's invariants of a `true` variant of the same program
(same text but the assertion) and mutants of them (flipped or weakened comparisons, constants off by
one, dropped conjuncts) are given as user invariants: the answer is never TRUE. For `true` tasks,
mutants of their own invariants never yield FALSE.
"""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from functools import cache

import pytest
from mutants import mutant_maps
from quokka.invariants.annotations import parse_user_invariants
from quokka.invariants.quokka_loop import user_invariant_strategy
from quokka.invariants.verify import resolve_input, verify_path
from quokka.verifier.engines.base import Budget, Status
from quokka.verifier.errors import QuokkaError
from quokka.verifier.frontend import lower
from quokka.verifier.ir import Expr, Program
from quokka.verifier.ir.printer import format_expr_c_names
from quokka.verifier.options import Options
from quokka.verifier.verdict.results import Verdict
from shared_data import BENCHMARKS

DEV = BENCHMARKS / "quokka-dev"
pytestmark = pytest.mark.skipif(
    not (DEV / "invariants.jsonl").is_file(), reason="shared benchmarks not present"
)

Records = list[tuple[int, str]]


def _stem(c_file: str) -> str:
    return c_file.rsplit("_", 1)[0]


@cache
def _tasks() -> dict[str, list[tuple[str, Records]]]:
    """expected verdict -> [(task file, invariant records)] with the sources the tests use."""
    by_file: dict[str, Records] = defaultdict(list)
    for line in (DEV / "invariants.jsonl").read_text().splitlines():
        record = json.loads(line)
        by_file[record["file"]].append((int(record["after_line"]), record["invariant"]))
    with open(DEV / "tasks.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    siblings: dict[str, Records] = defaultdict(list)
    for row in rows:
        if row["expected_verdict"] == "true":
            siblings[_stem(row["file"])] += by_file.get(row["file"], [])
    out: dict[str, list[tuple[str, Records]]] = {"true": [], "false": []}
    for row in sorted(rows, key=lambda r: r["task"]):
        verdict = row["expected_verdict"]
        source = by_file.get(row["file"]) if verdict == "true" else siblings.get(_stem(row["file"]))
        if source:
            out[verdict].append((row["task"], source))
    return out


def _program(task: str) -> Program | None:
    try:
        c_file, data_model = resolve_input(DEV / task, Options())
        return lower(c_file, data_model)
    except QuokkaError:
        return None


def _parsed(program: Program, records: Records) -> dict[str, Expr]:
    """The records that parse at a loop of `program`, one conjunction per loop."""
    good = []
    for record in records:
        try:
            parse_user_invariants(program, [record])
        except QuokkaError:
            continue
        good.append(record)
    return dict(parse_user_invariants(program, good))


def _usable(verdict: str, every: int) -> list[tuple[str, Program, dict[str, Expr]]]:
    out = []
    for task, records in _tasks()[verdict][::every]:
        program = _program(task)
        parsed = _parsed(program, records) if program is not None else {}
        if program is not None and parsed:
            out.append((task, program, parsed))
    return out


def _mutant(program: Program, right: dict[str, Expr], seed: int) -> dict[str, Expr]:
    """A mutant of `right` on its own loops (guesses for other loops may name internal variables)."""
    (mutant,) = mutant_maps(program, right, count=1, seed=seed)
    return {loop: e for loop, e in mutant.items() if loop in right}


def _as_options(program: Program, invariants: dict[str, Expr]) -> tuple[tuple[int, str], ...]:
    return tuple(
        (program.loop(loop).coord.line, format_expr_c_names(e, program, loop, readable=False))
        for loop, e in invariants.items()
    )


def test_the_sets_have_enough_tasks_with_invariants() -> None:
    assert len(_usable("false", 2)) >= 12
    assert len(_usable("true", 40)) >= 8


def test_sibling_invariants_and_mutants_never_prove_a_false_task() -> None:
    checked = 0
    for task, program, right in _usable("false", 2):
        for invariants in [right, _mutant(program, right, seed=5)]:
            result = user_invariant_strategy(invariants)(program, Budget.of(2))
            assert result.status is not Status.SAFE, (task, invariants)
            checked += 1
    assert checked >= 24


@pytest.mark.parametrize("verdict", ["false", "true"])
def test_verify_with_wrong_invariants_keeps_the_verdict_sound(verdict: str) -> None:
    wrong = Verdict.TRUE if verdict == "false" else Verdict.FALSE
    engines = ("houdini",) if verdict == "false" else ("houdini", "bmc")
    for task, program, right in _usable(verdict, 8 if verdict == "false" else 80)[:4]:
        mutant = _mutant(program, right, seed=7)
        options = Options(timeout_s=6, engines=engines, proposers=(), invariants=_as_options(program, mutant))
        result = verify_path(DEV / task, options)
        assert result.verdict is not wrong, (task, options.invariants, result.reason)
