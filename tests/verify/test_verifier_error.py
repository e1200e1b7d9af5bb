"""The error function named by the property file (older SV-COMP tasks: `G ! call(__VERIFIER_error())`),
and `__VERIFIER_assume` in the compiled harness: a run whose assumption fails is discarded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from marks import needs_gcc
from quokka.verifier.cli import main
from quokka.verifier.engines.base import EngineResult, Status
from quokka.verifier.errors import UnsupportedFeature
from quokka.verifier.exec.replay import replay_with_compiler
from quokka.verifier.frontend.lower import lower
from quokka.verifier.ir import Assert, walk_stmts
from quokka.verifier.properties import UNREACH_CALL, UNREACH_VERIFIER_ERROR, identify
from quokka.verifier.verdict.checks import confirm_counterexample

OLD_PROPERTY = "CHECK( init(main()), LTL(G ! call(__VERIFIER_error())) )\n"
# as older sv-benchmarks tasks have it: __VERIFIER_error only declared, __VERIFIER_assert defined
OLD_STYLE = """\
extern void __VERIFIER_error(void) __attribute__((__noreturn__));
extern unsigned int __VERIFIER_nondet_uint(void);
extern void __VERIFIER_assume(int);
void __VERIFIER_assert(int cond) { if (!(cond)) { ERROR: __VERIFIER_error(); } return; }
int main(void) {
  unsigned int n = __VERIFIER_nondet_uint();
  __VERIFIER_assume(n <= 1000u);
  unsigned int i = 0u, s = 0u;
  while (i < n) { i++; s += 2u; }
  __VERIFIER_assert(s == 2u * n);
  return 0;
}
"""
OLD_STYLE_BUG = OLD_STYLE.replace("__VERIFIER_assert(s == 2u * n);", "__VERIFIER_assert(s != 14u);")
VERIFY = ("--engines", "bmc,spacer,houdini", "--timeout", "30")


def _task(folder: Path, name: str, program: str) -> Path:
    (folder / "properties").mkdir(parents=True, exist_ok=True)
    (folder / "properties" / "unreach-call.prp").write_text(OLD_PROPERTY)
    (folder / f"{name}.c").write_text(program)
    task = folder / f"{name}.yml"
    task.write_text(
        f"format_version: '2.0'\ninput_files: '{name}.c'\nproperties:\n"
        "  - property_file: properties/unreach-call.prp\noptions:\n  language: C\n  data_model: ILP32\n"
    )
    return task


def _verify(capsys: pytest.CaptureFixture[str], task: Path, *args: str) -> dict[str, Any]:
    main(["verify", str(task), "--json", *VERIFY, *args])
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    return out


def test_the_old_property_file_names_verifier_error(tmp_path: Path) -> None:
    prp = tmp_path / "p.prp"
    prp.write_text(OLD_PROPERTY)
    assert identify(prp) == UNREACH_VERIFIER_ERROR


def test_verifier_error_lowers_as_the_error_under_its_property_and_is_refused_under_reach_error(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.c"
    path.write_text(OLD_STYLE)
    program = lower(path, "ILP32", UNREACH_VERIFIER_ERROR)
    asserts = [s for s in walk_stmts(program.body) if isinstance(s, Assert)]
    assert len(asserts) == 1 and asserts[0].coord is not None and asserts[0].coord.line == 4
    with pytest.raises(UnsupportedFeature, match="function without a body"):
        lower(path, "ILP32", UNREACH_CALL)


@needs_gcc
def test_the_harness_reaches_verifier_error_only_under_its_property(tmp_path: Path) -> None:
    path = tmp_path / "old.c"
    path.write_text(OLD_STYLE_BUG)
    reached = replay_with_compiler(path, (7,), "ILP32", property_name=UNREACH_VERIFIER_ERROR)
    assert reached.status == "reached" and "__VERIFIER_error()" in reached.detail, reached.detail
    missed = replay_with_compiler(path, (8,), "ILP32", property_name=UNREACH_VERIFIER_ERROR)
    assert missed.status == "not_reached", missed.detail


@needs_gcc
def test_a_failed_assumption_in_the_compiled_run_discards_it(tmp_path: Path) -> None:
    path = tmp_path / "old.c"
    path.write_text(OLD_STYLE_BUG.replace("n <= 1000u", "n != 7u"))
    replayed = replay_with_compiler(path, (7,), "ILP32", property_name=UNREACH_VERIFIER_ERROR)
    assert replayed.status == "not_reached" and "assumption (__VERIFIER_assume) failed" in replayed.detail


@needs_gcc
def test_a_program_calling_verifier_assume_gets_a_gcc_confirmed_false(tmp_path: Path) -> None:
    path = tmp_path / "assume.c"
    path.write_text(OLD_STYLE_BUG.replace("__VERIFIER_error", "reach_error"))
    program = lower(path, "ILP32", UNREACH_CALL)
    claimed = EngineResult("bmc", Status.UNSAFE, "claimed", inputs=(7,))
    cex, why = confirm_counterexample(program, claimed, path)
    assert cex is not None, why
    assert cex.confirmed_by == ("interpreter", "gcc"), cex.replay_notes


@needs_gcc
def test_an_old_style_task_is_false_with_gcc_and_its_fixed_program_true(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    witness = tmp_path / "witness.yml"
    out = _verify(capsys, _task(tmp_path, "bug", OLD_STYLE_BUG), "--witness", str(witness))
    assert out["verdict"] == "false", out["reason"]
    assert "G ! call(__VERIFIER_error())" in witness.read_text()
    assert out["extra"]["property"] == UNREACH_VERIFIER_ERROR
    assert out["counterexample"]["confirmed_by"] == ["interpreter", "gcc"]
    assert [i["value"] for i in out["counterexample"]["inputs"]] == [7]
    out = _verify(capsys, _task(tmp_path, "fixed", OLD_STYLE))
    assert out["verdict"] == "true", out["reason"]
