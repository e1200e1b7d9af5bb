"""The CHC system and the SMT-LIB dumps: files Z3 reads back with the expected answers."""

from __future__ import annotations

from pathlib import Path

import z3
from corpus import BY_NAME
from quokka.verifier.encode import chc, encode
from quokka.verifier.verdict.dump import dump_conditions as dump


def _check_file(path: Path, logic: str | None = None) -> z3.CheckSatResult:
    solver = z3.SolverFor(logic) if logic else z3.Solver()
    solver.set("timeout", 20_000)
    solver.add(z3.parse_smt2_file(str(path)))
    return solver.check()


def test_dumped_vcs_of_right_invariants_are_unsat(tmp_path: Path) -> None:
    example = BY_NAME["two_var"]
    files = dump(example.program, tmp_path, example.invariants)
    vcs = [f for f in files if f.name.startswith("vc")]
    assert {f.name.split("_")[1] for f in vcs} == {"initiation", "consecution", "safety"}
    assert all(_check_file(f) == z3.unsat for f in vcs)
    assert _check_file(tmp_path / "chc.smt2", "HORN") == z3.sat  # satisfiable Horn clauses: safe


def test_dumped_vcs_without_invariants_fail_somewhere(tmp_path: Path) -> None:
    example = BY_NAME["two_var"]
    files = dump(example.program, tmp_path)
    assert any(_check_file(f) == z3.sat for f in files if f.name.startswith("vc"))


def test_chc_of_an_unsafe_program_is_unsat(tmp_path: Path) -> None:
    dump(BY_NAME["counter_off_by_one"].program, tmp_path)
    assert _check_file(tmp_path / "chc.smt2", "HORN") == z3.unsat


def test_predicates_range_over_live_variables() -> None:
    system = chc.build(encode(BY_NAME["nested"].program))
    assert {loop: len(args) for loop, args in system.args.items()} == {
        loop: pred.arity() for loop, pred in system.preds.items()
    }
    assert "j" not in system.args[BY_NAME["nested"].program.loops[0].id]
