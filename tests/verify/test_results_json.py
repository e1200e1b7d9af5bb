"""One schema, one reader (issue 21): what `quokka verify --json` prints, a Result or, for bad
input, a Diagnostic, read back by `read_verify_output`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from quokka.verifier.errors import Coord, InputError, QuokkaError, UnsupportedFeature
from quokka.verifier.verdict.results import (
    BAD_INPUT,
    PARSE_ERROR,
    UNSUPPORTED_FEATURE,
    CandidateReport,
    ClaimReport,
    Counterexample,
    Diagnostic,
    EngineRun,
    InputValue,
    ProvenInvariant,
    Result,
    UnreadableOutput,
    Verdict,
    read_verify_output,
)

RESULT = Result(
    verdict=Verdict.FALSE, reason="a counterexample", file="p.c", time_s=1.25,
    invariants=(ProvenInvariant("main.1", 3, 5, "x >= 0", "houdini", "dynamic"),),
    counterexample=Counterexample(
        inputs=(InputValue("__VERIFIER_nondet_int", 2, -3),), error_line=7, error_column=3,
        path_lines=(2, 3, 7), loop_heads=(("main.1", 0, (("x", -3),)),), confirmed_by=("interpreter",),
        error_state=(("x", -3),)),
    engines=(EngineRun("bmc", "unsafe", 0.5, "cex"),),
    candidates=(CandidateReport("main.1", "x >= 0", "dynamic", "proven", "", ("llm",)),),
    overflow_sites=("p.c:4:7",), decided_by="bmc",
    claims=(ClaimReport("main.1", 3, 5, "x >= 0", "annotation", "valid", "inductive", (("x", 1),), (1,)),),
    extra={"property": "unreach-call"},
)
PARSE = Diagnostic("p.c", 1, 11, PARSE_ERROR, "parse error: syntax error before: {")


def _printed(data: dict[str, object]) -> str:
    return json.dumps(data) + "\n"


def test_a_result_reads_back_as_itself() -> None:
    assert read_verify_output(_printed(RESULT.to_json())) == RESULT


def test_a_diagnostic_reads_back_as_itself_and_keeps_the_old_keys() -> None:
    data = PARSE.to_json()
    assert (data["verdict"], data["status"], data["file"]) == ("unknown", "error", "p.c")
    assert data["reason"] == PARSE.reason == "p.c:1:11: parse error: syntax error before: {"
    assert read_verify_output(_printed(data)) == PARSE


def test_noise_before_the_json_is_skipped() -> None:
    noise = "loading model\n{not json either\n"
    assert read_verify_output(noise + _printed(RESULT.to_json())) == RESULT
    assert read_verify_output(noise + _printed(PARSE.to_json()) + "  \n") == PARSE


@pytest.mark.parametrize("stdout", ["", "no json here\n", '{"a": 1}\n', "[1, 2]\n", '{"verdict": "true"'])
def test_no_verify_object_is_none(stdout: str) -> None:
    assert read_verify_output(stdout) is None


@pytest.mark.parametrize(
    ("data", "why"),
    [
        ({"verdict": "maybe", "reason": "", "file": "p.c"}, "ValueError"),
        ({"verdict": "true"}, "KeyError 'reason'"),
        ({**RESULT.to_json(), "invariants": [{"loop": "main.1"}]}, "TypeError"),
        ({**RESULT.to_json(), "profile": [1]}, "TypeError"),
        ({"verdict": "unknown", "status": "error", "reason": "p.c:1:1: x", "file": "p.c"}, "KeyError 'line'"),
        ({**PARSE.to_json(), "line": "one"}, "ValueError"),
    ],
)
def test_a_malformed_object_raises(data: dict[str, object], why: str) -> None:
    with pytest.raises(UnreadableOutput, match=f"malformed verify --json output: {why}"):
        read_verify_output(_printed(data))


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (InputError(Coord("p.c", 2, 4), "parse error: x"),
         Diagnostic("p.c", 2, 4, PARSE_ERROR, "parse error: x")),
        (UnsupportedFeature(Coord("h.h", 3), "recursion"),
         Diagnostic("h.h", 3, 0, UNSUPPORTED_FEATURE, "unsupported feature: recursion")),
        (InputError(None, "p.c: cannot read the file"),
         Diagnostic("in.c", 0, 0, BAD_INPUT, "p.c: cannot read the file")),
        (QuokkaError("timeout_s: expected a number"),
         Diagnostic("in.c", 0, 0, BAD_INPUT, "timeout_s: expected a number")),
    ],
)
def test_a_diagnostic_of_an_error_renders_as_the_error(error: QuokkaError, expected: Diagnostic) -> None:
    diagnostic = Diagnostic.of_error(error, "in.c")
    assert diagnostic == expected and diagnostic.reason == str(error)


def _verify_json(path: Path, text: str) -> subprocess.CompletedProcess[str]:
    """`quokka verify PATH --json` on `text`, written to `path`."""
    path.write_text(text)
    return subprocess.run([sys.executable, "-m", "quokka.verifier.cli", "verify", str(path), "--json"],
                          capture_output=True, text=True, timeout=120)


def test_the_cli_bad_input_reads_back_as_a_located_diagnostic(tmp_path: Path) -> None:
    bad = tmp_path / "bad.c"
    proc = _verify_json(bad, "int main(void) {\n  int x = 1;\n  x = (2 +;\n}\n")
    output = read_verify_output(proc.stdout)
    assert proc.returncode == 2 and isinstance(output, Diagnostic)
    assert (output.file, output.line, output.column, output.kind) == (str(bad), 3, 11, PARSE_ERROR)
    assert proc.stderr.strip() == f"quokka verify: {output.reason}"
    assert json.loads(proc.stdout)["status"] == "error"


def test_a_result_with_a_cause_reads_back_and_one_without_reads_as_none() -> None:
    cause = Diagnostic("p.c", 3, 10, UNSUPPORTED_FEATURE, "unsupported feature: recursion")
    unknown = Result(Verdict.UNKNOWN, cause.reason, "p.c", 0.5, cause=cause)
    data = json.loads(json.dumps(unknown.to_json()))
    assert data["cause"] == {"file": "p.c", "line": 3, "column": 10, "kind": UNSUPPORTED_FEATURE,
                             "message": "unsupported feature: recursion"}
    assert read_verify_output(_printed(data)) == unknown
    older = {key: value for key, value in RESULT.to_json().items() if key != "cause"}
    assert Result.from_json(older) == RESULT and RESULT.cause is None


def test_the_cli_unsupported_feature_is_an_unknown_with_its_located_cause(tmp_path: Path) -> None:
    program = tmp_path / "ptr.c"
    proc = _verify_json(program, "int main() {\n  int **p = 0;\n  return p[1];\n}\n")
    output = read_verify_output(proc.stdout)
    assert isinstance(output, Result) and output.verdict is Verdict.UNKNOWN
    message = "unsupported feature: pointer to a pointer (variable p)"
    assert output.cause == Diagnostic(str(program), 3, 10, UNSUPPORTED_FEATURE, message)
    assert output.reason == output.cause.reason == f"{program}:3:10: {message}"
