"""Reading an uninitialised local: undefined behaviour (`strict`, a C file's default: a
counterexample that reads one never gives FALSE) or an arbitrary value (`nondet`, SV-COMP's reading
and a task file's default: the counterexample stands, replays, and says what it read).

The first program is Code2Inv's benchmark 26, labelled `true` in that set: under "uninitialised
means nondet" its error is reachable with n == 0, but only by reading `n` before it has a value.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from marks import needs_gcc
from quokka.invariants.verify import verify_path
from quokka.verifier.cli import main
from quokka.verifier.errors import InputError
from quokka.verifier.exec.interp import run
from quokka.verifier.exec.replay import InputDeclaration, gcc_available, instrument, replay_with_compiler
from quokka.verifier.frontend import lower, lower_source
from quokka.verifier.infra.store import Store
from quokka.verifier.ir.definedness import NONDET
from quokka.verifier.options import Options
from quokka.verifier.properties import UNREACH_CALL
from quokka.verifier.verdict.results import Counterexample, InputValue, Verdict

CODE2INV_26 = """\
void assert(int cond) { if (!(cond)) { ERROR : { reach_error(); abort(); } } }
int main() {
  int n;
  int x;
  (x = {init});
  while ((x > 1)) { (x = (x - 1)); }
  if ((x != 1)) { assert((n < 0)); }
}
"""
OPTIONS = Options(timeout_s=20, engines=("bmc", "spacer"), proposers=())


def write(tmp_path: Path, init: str, declare: str = "int n;") -> Path:
    path = tmp_path / "p.c"
    text = CODE2INV_26.replace("{init}", init).replace("int n;", declare)
    path.write_text("extern int __VERIFIER_nondet_int(void);\n" + text)
    return path


def test_error_reached_only_through_an_uninitialised_read_is_unknown(tmp_path):
    result = verify_path(write(tmp_path, "n"), OPTIONS)
    assert result.verdict is Verdict.UNKNOWN
    assert "reads the uninitialised variable n" in result.reason
    assert "undefined behaviour" in result.reason


@pytest.mark.parametrize("declare", ["int n = __VERIFIER_nondet_int();", "int n = 0;"])
def test_the_same_program_with_n_given_a_value_is_false(tmp_path, declare):
    result = verify_path(write(tmp_path, "n", declare), OPTIONS)
    assert result.verdict is Verdict.FALSE
    assert result.counterexample is not None


def test_an_uninitialised_variable_that_is_overwritten_first_is_no_obstacle(tmp_path):
    path = tmp_path / "p.c"
    path.write_text(
        "extern int __VERIFIER_nondet_int(void);\nvoid reach_error(void);\n"
        "int main() { int i; int n = __VERIFIER_nondet_int(); i = 0;\n"
        "  while (i < n) { i = i + 1; }\n  if (i == 3) reach_error();\n  return 0; }\n"
    )
    result = verify_path(path, OPTIONS)
    assert result.verdict is Verdict.FALSE


# ----------------------------------------------------------------------------- the nondet reading
# SV-COMP reads an uninitialised local as an arbitrary value of its type (`--uninitialised nondet`,
# a task file's default); a plain C file keeps `strict` (reading it is undefined behaviour).

PROPERTY = "CHECK( init(main()), LTL(G ! call(reach_error())) )\n"
HARNESS = (
    "extern void abort(void);\nvoid reach_error(void);\n"
    "void __VERIFIER_assert(int cond) { if (!(cond)) { ERROR: {reach_error();abort();} } return; }\n"
)
# The error needs x == 1000001 on entry: every other value leaves the loop with x == 1000000 or more.
NEEDS_A_VALUE = HARNESS + """\
int main() {
  unsigned int x;
  while (x < 1000000) {
    x++;
  }
  __VERIFIER_assert(x != 1000001);
  return 0;
}
"""
# x is read, but the assertion holds whatever its value.
DOES_NOT_MATTER = HARNESS + """\
int main() {
  unsigned int x;
  unsigned int unused;
  while (x < 10) {
    x++;
  }
  __VERIFIER_assert(x >= 10);
  return 0;
}
"""


PROVING = Options(timeout_s=30, engines=("houdini", "bmc", "spacer"), proposers=("dynamic",))


def write_task(folder: Path, name: str, program: str, expected: bool) -> Path:
    (folder / "properties").mkdir(parents=True, exist_ok=True)
    (folder / "properties" / "unreach-call.prp").write_text(PROPERTY)
    (folder / f"{name}.c").write_text(program)
    task = folder / f"{name}.yml"
    task.write_text(
        f"format_version: '2.0'\ninput_files: '{name}.c'\nproperties:\n"
        f"  - property_file: properties/unreach-call.prp\n    expected_verdict: {str(expected).lower()}\n"
        "options:\n  language: C\n  data_model: ILP32\n"
    )
    return task


def test_a_false_task_needing_an_uninitialised_value_is_false_when_read_as_svcomp_does(tmp_path):
    task = write_task(tmp_path, "count", NEEDS_A_VALUE, False)
    result = verify_path(task, OPTIONS.with_(uninitialised="nondet"))
    assert result.verdict is Verdict.FALSE, result.reason
    declared = f"{tmp_path / 'count.c'}:5:16 x"
    assert result.extra["uninitialised"] == "nondet"
    assert result.extra["uninitialised_reads"] == [declared]
    note = f"(reads uninitialised locals as arbitrary values (--uninitialised nondet): {declared})"
    assert result.reason.endswith(note)
    cex = result.counterexample
    assert cex is not None and cex.uninitialised_reads == (declared,)
    assert cex.inputs == (InputValue("uninitialised", 5, 1000001),)
    # the interpreter replays it: the value is an input ...
    program = lower(tmp_path / "count.c", "ILP32", UNREACH_CALL, NONDET)
    assert run(program, [value.value for value in cex.inputs]).outcome == "error"
    assert run(program, [1000002]).outcome == "exit"
    # ... and so does gcc, on a copy whose declaration takes it from the inputs
    if gcc_available():
        assert cex.confirmed_by == ("interpreter", "gcc"), cex.replay_notes


def test_the_same_task_read_strictly_by_default_is_unknown(tmp_path):
    task = write_task(tmp_path, "count", NEEDS_A_VALUE, False)
    result = verify_path(task, OPTIONS)
    assert result.verdict is Verdict.UNKNOWN
    assert "reads the uninitialised variable x" in result.reason and "undefined behaviour" in result.reason
    assert result.extra["uninitialised"] == "strict" and "uninitialised_reads" not in result.extra


def test_a_c_file_is_read_strictly_unless_told(tmp_path):
    write_task(tmp_path, "count", NEEDS_A_VALUE, False)
    program = tmp_path / "count.c"
    strict = verify_path(program, OPTIONS)
    assert strict.verdict is Verdict.UNKNOWN and strict.extra["uninitialised"] == "strict"
    assert "--uninitialised nondet reads it as an arbitrary value" in strict.reason
    nondet = verify_path(program, OPTIONS.with_(uninitialised="nondet"))
    assert nondet.verdict is Verdict.FALSE, nondet.reason


@pytest.mark.parametrize("reading", ["nondet", "strict"])
def test_a_true_task_whose_uninitialised_local_does_not_matter_is_true(tmp_path, reading):
    task = write_task(tmp_path, "grow", DOES_NOT_MATTER, True)
    result = verify_path(task, PROVING.with_(uninitialised=reading))
    assert result.verdict is Verdict.TRUE, result.reason
    assert result.extra["uninitialised"] == reading


def test_the_option_on_the_command_line_and_in_pyproject(tmp_path, capsys):
    write_task(tmp_path, "count", NEEDS_A_VALUE, False)
    program = str(tmp_path / "count.c")
    args = ["verify", program, "--json", "--engines", "bmc,spacer", "--proposers", "none", "--timeout", "30"]
    assert main([*args, "--uninitialised", "nondet"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"] == "false" and out["extra"]["uninitialised_reads"] == [f"{program}:5:16 x"]
    assert out["counterexample"]["uninitialised_reads"] == [f"{program}:5:16 x"]
    assert main(args) == 1
    assert json.loads(capsys.readouterr().out)["verdict"] == "unknown"
    (tmp_path / "pyproject.toml").write_text('[tool.quokka]\nuninitialised = "nondet"\n')
    assert main(args) == 0
    capsys.readouterr()
    with pytest.raises(SystemExit) as info:
        main([*args, "--uninitialised", "zero"])
    assert info.value.code == 2
    (tmp_path / "pyproject.toml").write_text('[tool.quokka]\nuninitialised = "zero"\n')
    assert main(args) == 2
    assert "uninitialised must be nondet or strict, got 'zero'" in capsys.readouterr().err


def test_options_and_lowering_check_the_reading():
    with pytest.raises(InputError, match="uninitialised must be nondet or strict"):
        Options().with_(uninitialised="zero")
    with pytest.raises(InputError, match="uninitialised must be nondet or strict"):
        lower_source("int main() { return 0; }", "p.c", uninitialised="zero")
    assert lower_source("int main() { return 0; }", "p.c").uninitialised == "strict"
    assert lower_source("int main() { return 0; }", "p.c", uninitialised="nondet").uninitialised == "nondet"


def test_batch_passes_the_svcomp_reading_on_when_asked(tmp_path, capsys):
    folder = tmp_path / "set"
    folder.mkdir()
    write_task(folder, "count", NEEDS_A_VALUE, False)
    write_task(folder, "grow", DOES_NOT_MATTER, True)
    db = tmp_path / "r.sqlite"
    code = main(["batch", str(folder), "--db", str(db), "--timeout", "30", "--quiet",
                 "--engines", "houdini,bmc,spacer", "--proposers", "dynamic",
                 "--verify-arg=--uninitialised", "--verify-arg=nondet"])  # fmt: skip
    capsys.readouterr()
    with Store.open(db, writer=False) as store:
        rows = store.results()
    assert sorted((r.name, r.status, r.category) for r in rows) == [
        ("set/count.yml", "false", "correct"),
        ("set/grow.yml", "true", "correct"),
    ]
    assert code == 0


# ----------------------------------------------------------------------------- replay under nondet

TWICE = """\
extern int __VERIFIER_nondet_int(void);
void reach_error(void);
unsigned int get(void) {
  unsigned int v;
  return v;
}
int main() {
  int n = __VERIFIER_nondet_int();
  unsigned int a = get(), b;
  b = get();
  if (n == 2 && a == 3 && b == 4) reach_error();
  return 0;
}
"""


def _nondet_counterexample(tmp_path: Path, name: str, source: str) -> tuple[Path, Counterexample]:
    """`source` written to `name` and verified reading uninitialised values as nondet: FALSE."""
    path = tmp_path / name
    path.write_text(source)
    result = verify_path(path, OPTIONS.with_(uninitialised="nondet"))
    assert result.verdict is Verdict.FALSE, result.reason
    assert result.counterexample is not None
    return path, result.counterexample


def test_inputs_and_uninitialised_values_replay_in_order(tmp_path):
    path, cex = _nondet_counterexample(tmp_path, "twice.c", TWICE)
    # n, then v in the first get(), v in the second get(); b (declared without a value, never
    # read) is no input (issue 19)
    assert [(i.origin, i.line) for i in cex.inputs] == [
        ("__VERIFIER_nondet_int", 8), ("uninitialised", 4), ("uninitialised", 4),
    ]  # fmt: skip
    assert [i.value for i in cex.inputs] == [2, 3, 4]
    assert cex.uninitialised_reads == (f"{path}:4:16 v",)
    if gcc_available():
        assert cex.confirmed_by == ("interpreter", "gcc"), cex.replay_notes


def test_the_replayed_copy_initialises_the_declarations():
    source = "int main() {\n  unsigned int x, y /* y */ ;\n  int z[2];\n  return x + y;\n}\n"
    declarations = (InputDeclaration(2, 16, "x"), InputDeclaration(2, 19, "y"))
    text = instrument(source, (), "p.c", declarations)
    assert "  unsigned int x = __quokka_uninit(), y = __quokka_uninit() /* y */ ;\n" in text
    assert text.startswith('unsigned long long __quokka_uninit(void);\n#line 1 "p.c"\n')
    for wrong in (InputDeclaration(2, 17, "x"), InputDeclaration(3, 7, "z"), InputDeclaration(9, 1, "x")):
        with pytest.raises(ValueError):
            instrument(source, (), "p.c", (wrong,))


@needs_gcc
def test_gcc_follows_the_initialised_copy(tmp_path):
    path = tmp_path / "count.c"
    path.write_text(NEEDS_A_VALUE)
    declaration = (InputDeclaration(5, 16, "x"),)
    assert replay_with_compiler(path, [1000001], "LP64", initialise=declaration).status == "reached"
    assert replay_with_compiler(path, [7], "LP64", initialise=declaration).status == "not_reached"


ARRAY = HARNESS + """\
int main() {
  int a[4];
  if (a[2] == 7) reach_error();
  return 0;
}
"""


def test_an_uninitialised_array_element_is_false_under_nondet_without_gcc(tmp_path):
    path, cex = _nondet_counterexample(tmp_path, "array.c", ARRAY)
    assert cex.confirmed_by == ("interpreter",)
    assert cex.uninitialised_reads == (f"{path}:5:7 a[]",)
    assert any(note.startswith("gcc replay skipped: a (uninitialised) is 7") for note in cex.replay_notes)
    assert verify_path(path, OPTIONS).verdict is Verdict.UNKNOWN  # strict: gcc cannot follow it


NO_RETURN = HARNESS + """\
int f(int a) {
  if (a) return 1;
}
int main() {
  int r = f(0);
  if (r == 5) reach_error();
  return 0;
}
"""


def test_nondet_covers_uninitialised_locals_only(tmp_path):
    # the value of a function that ends without `return` is another undefined behaviour
    path = tmp_path / "noreturn.c"
    path.write_text(NO_RETURN)
    result = verify_path(path, OPTIONS.with_(uninitialised="nondet"))
    assert result.verdict is Verdict.UNKNOWN
    assert "no return value" in result.reason


def test_a_declaration_assigned_before_it_is_read_is_no_input(tmp_path):
    """`short a;` then `a = nondet();`: the counterexample's inputs are the nondet value only
    (issue 19: plain declarations are not "uninitialised inputs")."""
    path = tmp_path / "d.c"
    path.write_text("extern int __VERIFIER_nondet_int(void);\nextern void reach_error(void);\n"
                    "int main() {\n  int a, b;\n  a = __VERIFIER_nondet_int();\n  b = a + 1;\n"
                    "  if (b == 8) reach_error();\n  return 0;\n}\n")
    result = verify_path(path, OPTIONS.with_(property=UNREACH_CALL))
    assert result.verdict is Verdict.FALSE and result.counterexample is not None
    assert result.counterexample.inputs == (InputValue("__VERIFIER_nondet_int", 5, 7),)
