"""Witness format 2.0: correctness and violation witnesses, checked against the schema's structure,
and correctness witnesses read back as `--invariant` arguments."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from quokka.verifier.verdict.results import Counterexample, InputValue, ProvenInvariant, Result, Verdict
from quokka.verifier.verdict.witnesses import (
    WitnessError,
    correctness_witness,
    function_ranges,
    input_file_name,
    invariant_arguments,
    violation_witness,
    witness_for,
    witness_invariants,
    write_witness,
)

SCHEMA = json.loads((Path(__file__).parent / "data" / "witness-2.0.schema.json").read_text())

SOURCE = """\
extern int __VERIFIER_nondet_int(void);
void reach_error() {}
/* a comment with main() { in it */
int helper(int n) {
  int s = 0;
  for (int k = 0; k < n; k++) { s += k; }
  return s;
}
int main() {
  int x = __VERIFIER_nondet_int(); int y = 0;
  while (y < x) {
    y++;
  }
  if (y == 7) { reach_error(); }
  return helper(y);
}
"""


def _validate(entries: list[dict[str, Any]]) -> None:
    validator = jsonschema.Draft202012Validator(SCHEMA, format_checker=jsonschema.FormatChecker())
    errors = sorted(validator.iter_errors(entries), key=str)
    assert not errors, [e.message for e in errors]
    for entry in entries:
        dt.datetime.fromisoformat(entry["metadata"]["creation_time"])


def _true_result() -> Result:
    return Result(
        verdict=Verdict.TRUE, reason="proved", file="p.c",
        invariants=(
            ProvenInvariant("main.1", 11, 3, "y >= 0", "houdini", "dynamic"),
            ProvenInvariant("main.1", 11, 3, "y <= x || x < 0", "houdini", "llm"),
            ProvenInvariant("helper.1", 6, 3, "s >= 0", "spacer", "spacer"),
            ProvenInvariant("helper.2", 6, 3, "k >= 0", "spacer", "spacer"),
        ),
    )


def _false_result() -> Result:
    cex = Counterexample(
        inputs=(InputValue("__VERIFIER_nondet_int", 10, 7), InputValue("uninitialised", 5, 0)),
        error_line=14, error_column=17, path_lines=(10, 11, 14), loop_heads=(), confirmed_by=("interpreter",),
    )
    return Result(verdict=Verdict.FALSE, reason="reached", file="p.c", counterexample=cex)


@pytest.fixture
def program(tmp_path: Path) -> Path:
    path = tmp_path / "p.c"
    path.write_text(SOURCE)
    return path


def test_correctness_witness_structure_and_content(program: Path) -> None:
    when = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
    entry = correctness_witness(_true_result(), program, data_model="ILP32", file_name="p.c",
                                creation_time=when)
    _validate([entry])
    meta = entry["metadata"]
    assert meta["task"]["input_file_hashes"] == {"p.c": hashlib.sha256(SOURCE.encode()).hexdigest()}
    assert meta["task"]["data_model"] == "ILP32" and meta["creation_time"] == "2026-01-02T03:04:05+00:00"
    items = [c["invariant"] for c in entry["content"]]
    assert [(i["location"]["line"], i["location"]["column"], i["location"]["function"], i["value"])
            for i in items] == [
        (6, 3, "helper", "(s >= 0) || (k >= 0)"),  # two inlined copies of one loop: disjunction
        (11, 3, "main", "y >= 0"),
        (11, 3, "main", "y <= x || x < 0"),
    ]
    again = correctness_witness(_true_result(), program, data_model="ILP32", file_name="p.c",
                                creation_time=when)
    assert again["metadata"]["uuid"] == meta["uuid"]  # deterministic


def test_violation_witness_has_nondet_waypoints_then_the_target(program: Path) -> None:
    entry = violation_witness(_false_result(), program, data_model="LP64", file_name="p.c")
    _validate([entry])
    waypoints = [seg["segment"][-1]["waypoint"] for seg in entry["content"]]
    assert [w["type"] for w in waypoints] == ["function_return", "target"]
    ret, target = waypoints
    assert ret["constraint"] == {"value": "\\result == 7", "format": "acsl_expression"}
    line = SOURCE.splitlines()[9]
    assert ret["location"]["line"] == 10 and line[ret["location"]["column"] - 1] == ")"
    assert target["location"] == {"file_name": "p.c", "line": 14, "column": 17, "function": "main"}
    assert all(w["action"] == "follow" for w in waypoints)


def test_violation_witness_stops_at_a_call_it_cannot_place(tmp_path: Path) -> None:
    path = tmp_path / "two.c"
    path.write_text(SOURCE.replace("int y = 0;", "int y = __VERIFIER_nondet_int();"))
    entry = violation_witness(_false_result(), path, data_model="LP64")
    _validate([entry])
    assert [s["segment"][0]["waypoint"]["type"] for s in entry["content"]] == ["target"]


def test_witness_for_dispatches_and_refuses_wrong_results(program: Path) -> None:
    unknown = Result(verdict=Verdict.UNKNOWN, reason="?", file="p.c")
    assert witness_for(unknown, program, data_model="LP64") is None
    with pytest.raises(WitnessError):
        correctness_witness(_false_result(), program, data_model="LP64")
    with pytest.raises(WitnessError):
        violation_witness(_true_result(), program, data_model="LP64")
    with pytest.raises(WitnessError, match="data model"):
        correctness_witness(_true_result(), program, data_model="ILP64")


def test_written_correctness_witness_reads_back_as_invariant_arguments(program: Path, tmp_path: Path) -> None:
    path = tmp_path / "out" / "w.yml"
    write_witness(correctness_witness(_true_result(), program, data_model="LP64"), path)
    entries = yaml.safe_load(path.read_text())
    _validate(entries)
    invariants = witness_invariants(path, program)
    assert invariant_arguments(invariants) == (
        "--invariant", "6:(s >= 0) || (k >= 0)",
        "--invariant", "11:y >= 0",
        "--invariant", "11:y <= x || x < 0",
    )


def test_reading_back_checks_the_program_hash(program: Path, tmp_path: Path) -> None:
    path = tmp_path / "w.yml"
    write_witness(correctness_witness(_true_result(), program, data_model="LP64"), path)
    program.write_text(SOURCE + "\n// changed\n")
    with pytest.raises(WitnessError, match="another version"):
        witness_invariants(path, program)
    (tmp_path / "bad.yml").write_text("entry_type: invariant_set\n")
    with pytest.raises(WitnessError, match="list of entries"):
        witness_invariants(tmp_path / "bad.yml")


def test_function_ranges_ignore_comments_and_strings() -> None:
    assert function_ranges(SOURCE) == [(2, 2, "reach_error"), (4, 8, "helper"), (9, 16, "main")]
    text = 'char *s = "int f() {";\nstruct S { int a; };\nint g(void)\n{\n  return 0;\n}\n'
    assert function_ranges(text) == [(4, 6, "g")]


def test_violation_target_is_the_reach_error_call_inside_an_assert_helper(tmp_path: Path) -> None:
    path = tmp_path / "c.c"
    path.write_text("void reach_error();\n"
                    "void assert(int c) { if (!c) { ERROR: { reach_error(); abort(); } } }\n"
                    "int main() {\n  int n;\n  assert(n < 0);\n}\n")
    cex = Counterexample(inputs=(InputValue("uninitialised", 4, 0),), error_line=5, error_column=3,
                         path_lines=(3, 4, 5, 2), loop_heads=(), confirmed_by=("interpreter", "gcc"))
    entry = violation_witness(Result(Verdict.FALSE, "reached", "c.c", counterexample=cex), path,
                              data_model="ILP32", file_name="c.c")
    _validate([entry])
    [segment] = entry["content"]
    assert segment["segment"][0]["waypoint"]["location"] == {
        "file_name": "c.c", "line": 2, "column": 41, "function": "assert"}


def test_input_file_name_is_relative_to_the_task_file_or_as_given(tmp_path: Path) -> None:
    assert input_file_name(tmp_path / "set" / "src" / "p.c", tmp_path / "set" / "p.yml") == "src/p.c"
    assert input_file_name(tmp_path / "c" / "p.c", tmp_path / "tasks" / "p.yml") == "../c/p.c"
    assert input_file_name(Path("tasks/../c/p.c"), Path("tasks/p.yml")) == "../c/p.c"
    assert input_file_name(Path("c/p.c")) == "c/p.c"
    assert input_file_name(tmp_path / "p.c", tmp_path / "p.c") == "p.c"  # a bare program: its own folder


@pytest.mark.parametrize(("given", "expected_name"), [("tasks/p.yml", "../src/p.c"), ("src/p.c", "src/p.c")])
def test_verify_witness_names_the_program_as_the_task_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: str, expected_name: str
) -> None:
    from quokka.verifier.cli import main

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "p.c").write_text(SOURCE)
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "p.prp").write_text("CHECK( init(main()), LTL(G ! call(reach_error())) )\n")
    (tmp_path / "tasks" / "p.yml").write_text(
        "format_version: '2.0'\ninput_files: '../src/p.c'\nproperties:\n  - property_file: p.prp\n"
        "    expected_verdict: false\noptions:\n  language: C\n  data_model: ILP32\n")
    monkeypatch.chdir(tmp_path)
    code = main(["verify", given, "--json", "--timeout", "20", "--engines", "bmc", "--witness", "w.yml"])
    assert code == 0
    [entry] = yaml.safe_load((tmp_path / "w.yml").read_text())
    _validate([entry])
    assert entry["metadata"]["task"]["input_files"] == [expected_name]
    assert list(entry["metadata"]["task"]["input_file_hashes"]) == [expected_name]
    assert {s["segment"][0]["waypoint"]["location"]["file_name"] for s in entry["content"]} == {expected_name}


def test_a_witness_names_the_property_its_result_is_about(program: Path) -> None:
    overflow = {"property": "no-overflow"}
    reach = "CHECK( init(main()), LTL(G ! call(reach_error())) )"
    for result, make in ((_true_result(), correctness_witness), (_false_result(), violation_witness)):
        assert make(result, program, data_model="LP64")["metadata"]["task"]["specification"] == reach
        entry = make(replace(result, extra=overflow), program, data_model="LP64")
        _validate([entry])
        assert entry["metadata"]["task"]["specification"] == "CHECK( init(main()), LTL(G ! overflow) )"
