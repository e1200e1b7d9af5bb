"""SV-COMP property semantics: the property a task names decides what is checked.

`unreach-call` (only a call of reach_error() is the error; a failing assert() aborts) is what
Quokka checks for a task, else `no-overflow` (tests/verify/test_nooverflow.py); any other property
is UNKNOWN "property not supported: NAME", never TRUE/FALSE. A plain C file is checked for
`assert` (a failing assert() is an error too); `--property` overrides either. The interpreter
and the gcc replay agree on what the error is.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from quokka.svcomp.tasks import load_tasks
from quokka.verifier.cli import main
from quokka.verifier.errors import InputError, UnsupportedFeature
from quokka.verifier.exec.replay import gcc_available, replay_with_compiler
from quokka.verifier.frontend import lower_source
from quokka.verifier.infra.store import Store
from quokka.verifier.ir import INT, Assert, Assume, Const, walk_stmts
from quokka.verifier.options import Options
from quokka.verifier.properties import ASSERT, UNREACH_CALL, decide, identify
from quokka.verifier.task import read_task

# The contents of sv-benchmarks' c/properties/*.prp (as in ../shared/benchmarks/properties/).
PROPERTY_FILES = {
    "unreach-call": "CHECK( init(main()), LTL(G ! call(reach_error())) )\n",
    "no-overflow": "CHECK( init(main()), LTL(G ! overflow) )\n",
    "termination": "CHECK( init(main()), LTL(F end) )\n",
    "valid-memsafety": "CHECK( init(main()), LTL(G valid-free) )\nCHECK( init(main()), LTL(G valid-deref) )\n"
    "CHECK( init(main()), LTL(G valid-memtrack) )\n",
    "no-data-race": "CHECK( init(main()), LTL(G ! data-race) )\n",
}

OVERFLOW = """\
extern int __VERIFIER_nondet_int(void);
int main() {
  int y = __VERIFIER_nondet_int() + 1;
  return y;
}
"""

# Fails its assert() for x <= 0 (glibc aborts), never calls reach_error().
ASSERT_ONLY = """\
#include <assert.h>
extern int __VERIFIER_nondet_int(void);
void reach_error(void) { __assert_fail("0", "a.c", 3, "reach_error"); }
int main() {
  int x = __VERIFIER_nondet_int();
  assert(x > 0);
  if (x < 0) reach_error();
  return 0;
}
"""

# Calls reach_error() (whose body is __assert_fail, as in SV-COMP) for x < 0.
REACHES = ASSERT_ONLY.replace("assert(x > 0);", "assert(x != 7);")

VERIFY = ("--engines", "bmc,spacer", "--proposers", "none", "--timeout", "30")


def write_task(folder: Path, name: str, program: str, properties: dict[str, bool | None]) -> Path:
    """`folder/name.c` and `folder/name.yml` listing `properties` (name -> expected verdict), their
    property files in `folder/properties/`."""
    (folder / "properties").mkdir(parents=True, exist_ok=True)
    entries = []
    for prop, expected in properties.items():
        (folder / "properties" / f"{prop}.prp").write_text(PROPERTY_FILES.get(prop, "CHECK( mine )\n"))
        verdict = "" if expected is None else f"\n    expected_verdict: {str(expected).lower()}"
        entries.append(f"  - property_file: properties/{prop}.prp{verdict}")
    (folder / f"{name}.c").write_text(program)
    task = folder / f"{name}.yml"
    task.write_text(
        f"format_version: '2.0'\ninput_files: '{name}.c'\nproperties:\n"
        + "\n".join(entries)
        + "\noptions:\n  language: C\n  data_model: ILP32\n"
    )
    return task


def verify(capsys: pytest.CaptureFixture[str], target: Path, *args: str) -> tuple[int, dict[str, Any]]:
    code = main(["verify", str(target), "--json", *VERIFY, *args])
    return code, json.loads(capsys.readouterr().out)


def checked(out: dict[str, Any]) -> dict[str, Any]:
    """What an answer says it checked: its `extra` without the double check (conftest asks for one)."""
    return {key: value for key, value in out["extra"].items() if key != "double_check"}


def verify_false(
    capsys: pytest.CaptureFixture[str], target: Path, line: int, *args: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """`verify`, which must answer FALSE with a counterexample whose error is on `line`: the answer
    and the counterexample."""
    code, out = verify(capsys, target, *args)
    assert (code, out["verdict"]) == (0, "false"), out["reason"]
    cex = out["counterexample"]
    assert isinstance(cex, dict) and cex["error_line"] == line, cex
    return out, cex


# ----------------------------------------------------------------------------- the property decides


def test_a_no_overflow_task_is_checked_for_overflow(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    task = write_task(tmp_path, "ov", OVERFLOW, {"no-overflow": False})
    out, cex = verify_false(capsys, task, 3)
    assert out["extra"] == {"property": "no-overflow", "not_checked": [], "uninitialised": "strict"}
    assert [i["value"] for i in cex["inputs"]] == [2147483647]


@pytest.mark.parametrize("prop", ["termination", "valid-memsafety", "no-data-race", "my-property"])
def test_other_properties_are_unknown(tmp_path: Path, capsys: pytest.CaptureFixture[str], prop: str) -> None:
    task = write_task(tmp_path, "t", ASSERT_ONLY, {prop: True})
    code, out = verify(capsys, task)
    name = prop if prop in PROPERTY_FILES else f"{prop} (unrecognised formula)"
    assert (code, out["verdict"], out["reason"]) == (1, "unknown", f"property not supported: {name}")


def test_a_property_is_identified_by_its_formula_not_its_file_name(tmp_path: Path) -> None:
    wrong = tmp_path / "unreach-call.prp"
    wrong.write_text(PROPERTY_FILES["no-overflow"])
    assert identify(wrong) == "no-overflow"
    spaced = tmp_path / "x.prp"
    spaced.write_text("CHECK(init(main()),\n  LTL(G ! call(reach_error())))\n")
    assert identify(spaced) == UNREACH_CALL
    assert identify(tmp_path / "missing" / "termination.prp") == "termination"  # unreadable: its name


def test_decide() -> None:
    assert decide(None).checked == ASSERT
    assert decide(None, UNREACH_CALL).checked == UNREACH_CALL
    both = decide(["no-overflow", UNREACH_CALL])
    assert (both.checked, both.not_checked) == (UNREACH_CALL, ("no-overflow",))
    assert both.note == "checked unreach-call only; not checked: no-overflow"
    none = decide(["termination", "valid-memsafety"])
    assert none.checked is None and none.reason == "property not supported: termination, valid-memsafety"
    assert decide([]).reason == "the task names no property"


def test_several_properties_check_unreach_call_and_say_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    task = write_task(tmp_path, "b", REACHES, {"unreach-call": False, "no-overflow": True})
    spec = read_task(task)
    assert (spec.property, spec.expected) == (UNREACH_CALL, "false")
    code, out = verify(capsys, task)
    assert (code, out["verdict"]) == (0, "false")
    assert str(out["reason"]).endswith("(checked unreach-call only; not checked: no-overflow)")
    extra = {"property": UNREACH_CALL, "not_checked": ["no-overflow"], "uninitialised": "strict"}
    assert checked(out) == extra


# ----------------------------------------------------------------------------- __assert_fail vs reach_error


@pytest.mark.parametrize("replay", [(), ("--no-compiler-replay",)])
def test_unreach_call_task_failing_only_an_assert_is_true(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], replay: tuple[str, ...]
) -> None:
    task = write_task(tmp_path, "a", ASSERT_ONLY, {"unreach-call": True})
    code, out = verify(capsys, task, *replay)
    assert (code, out["verdict"]) == (0, "true"), out["reason"]


@pytest.mark.parametrize("replay", [(), ("--no-compiler-replay",)])
def test_the_same_program_as_a_c_file_is_false(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], replay: tuple[str, ...]
) -> None:
    write_task(tmp_path, "a", ASSERT_ONLY, {"unreach-call": True})
    out, cex = verify_false(capsys, tmp_path / "a.c", 6, *replay)
    assert checked(out) == {"property": ASSERT, "not_checked": [], "uninitialised": "strict"}
    if not replay and gcc_available():
        assert cex["confirmed_by"] == ["interpreter", "gcc"]


def test_reach_error_calling_assert_fail_is_the_error_under_unreach_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    task = write_task(tmp_path, "b", REACHES, {"unreach-call": False})
    _, cex = verify_false(capsys, task, 7)
    if gcc_available():
        assert cex["confirmed_by"] == ["interpreter", "gcc"]


def test_property_option_overrides(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    task = write_task(tmp_path, "a", ASSERT_ONLY, {"unreach-call": True})
    code, out = verify(capsys, tmp_path / "a.c", "--property", "unreach-call")
    extra = {"property": UNREACH_CALL, "not_checked": [], "uninitialised": "strict"}
    assert (code, out["verdict"], checked(out)) == (0, "true", extra)
    code, out = verify(capsys, task, "--property", "assert")
    assert (code, out["verdict"]) == (0, "false")
    assert str(out["reason"]).endswith("(checked assert (--property) only; not checked: unreach-call)")
    with pytest.raises(SystemExit):  # not a choice of --property
        main(["verify", str(task), "--property", "termination"])
    with pytest.raises(InputError, match="property must be"):
        Options().with_(property="termination")


# ----------------------------------------------------------------------------- frontend and gcc agree


def _asserts_and_assumes(text: str, prop: str) -> tuple[int, int]:
    program = lower_source(text, "p.c", "LP64", prop)
    stmts = list(walk_stmts(program.body))
    return sum(isinstance(s, Assert) for s in stmts), sum(isinstance(s, Assume) for s in stmts)


def test_the_frontend_reads_assert_by_the_property() -> None:
    assert _asserts_and_assumes(ASSERT_ONLY, ASSERT) == (2, 0)  # assert(), reach_error()
    assert _asserts_and_assumes(ASSERT_ONLY, UNREACH_CALL) == (1, 1)  # assert() aborts
    fail = 'extern void __assert_fail(const char *, const char *, unsigned, const char *);\n' \
           'int main() { __assert_fail("x", "p.c", 2, "main"); return 0; }\n'
    assert _asserts_and_assumes(fail, ASSERT) == (1, 0)
    program = lower_source(fail, "p.c", "LP64", UNREACH_CALL)
    (assume,) = [s for s in walk_stmts(program.body) if isinstance(s, Assume)]
    assert assume.cond == Const(0, INT) and program.property_name == UNREACH_CALL
    legacy = "void __VERIFIER_error(void);\nint main() { __VERIFIER_error(); return 0; }\n"
    assert _asserts_and_assumes(legacy, ASSERT) == (1, 0)
    with pytest.raises(UnsupportedFeature, match="without a body"):
        lower_source(legacy, "p.c", "LP64", UNREACH_CALL)  # not reach_error: no meaning of its own


@pytest.mark.needs_gcc
@pytest.mark.skipif(not gcc_available(), reason="no C compiler")
def test_gcc_replay_counts_the_same_errors(tmp_path: Path) -> None:
    path = tmp_path / "a.c"
    path.write_text(ASSERT_ONLY)
    failing = replay_with_compiler(path, [0], "LP64", property_name=ASSERT)
    assert failing.status == "reached", failing.detail
    aborted = replay_with_compiler(path, [0], "LP64", property_name=UNREACH_CALL)
    assert aborted.status == "not_reached" and "signal 6" in aborted.detail
    path.write_text(REACHES)
    for prop in (ASSERT, UNREACH_CALL):
        assert replay_with_compiler(path, [-1], "LP64", property_name=prop).status == "reached"
        assert replay_with_compiler(path, [1], "LP64", property_name=prop).status == "not_reached"


# ----------------------------------------------------------------------------- batch


def test_batch_skips_unsupported_properties_and_reads_tasks_as_unreach_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "set"
    folder.mkdir()
    write_task(folder, "t", OVERFLOW, {"termination": True})
    write_task(folder, "a", ASSERT_ONLY, {"unreach-call": True})
    tasks = load_tasks([folder])
    skipped = [(s.path.name, s.reason) for s in tasks.skipped]
    assert skipped == [("t.yml", "property not supported: termination")]
    db = tmp_path / "r.sqlite"
    code = main(["batch", str(folder), "--db", str(db), "--timeout", "30", "--quiet",
                 "--engines", "bmc,spacer", "--proposers", "none"])
    capsys.readouterr()
    with Store.open(db, writer=False) as store:
        rows = store.results()
    assert [(r.name, r.status, r.category) for r in rows] == [("set/a.yml", "true", "correct")]
    assert code == 0
