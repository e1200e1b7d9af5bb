"""The `quokka verify` process contract: one reading of a finished run for every caller."""

import json
import subprocess
import sys

import pytest
from quokka.verifier import cli
from quokka.verifier.verdict.contract import DEFAULT_COMMAND, Reading, VerifyExit, classify, verify_argv
from quokka.verifier.verdict.results import Diagnostic, Result, Verdict


def _result(verdict: str) -> str:
    return json.dumps({"verdict": verdict, "reason": "r", "file": "f.c"})


@pytest.mark.parametrize(
    ("code", "stdout", "stderr", "signal", "reading", "message"),
    [
        (0, _result("true"), "", None, Reading.RESULT, "r"),
        (1, "a log line\n" + _result("unknown"), "", None, Reading.RESULT, "r"),
        (1, _result("false"), "", None, Reading.INCONSISTENT, "exit code 1 does not match verdict false"),
        (2, json.dumps(Diagnostic("f.c", 3, 4, "parse error", "bad").to_json()), "", None, Reading.BAD_INPUT,
         "f.c:3:4: bad"),
        (2, _result("unknown"), "", None, Reading.BAD_INPUT, "r"),
        (0, _result("maybe"), "", None, Reading.MALFORMED, "malformed"),
        (0, "", "warning\nlast words\n", None, Reading.NO_RESULT, "exit code 0, no verdict: last words"),
        (3, _result("true"), "", None, Reading.CRASHED, "exit code 3, no verdict"),
        (None, "", "boom\n", "SIGSEGV", Reading.CRASHED, "killed by SIGSEGV, no verdict: boom"),
    ],
)
def test_every_ending_has_one_reading(code, stdout, stderr, signal, reading, message) -> None:
    found = classify(code, stdout, stderr, signal)
    assert found.reading is reading
    assert message in found.message


def test_a_result_is_kept_with_its_reading() -> None:
    found = classify(0, _result("true"))
    assert isinstance(found.output, Result) and found.output.verdict is Verdict.TRUE


def test_exit_codes_follow_the_verdict() -> None:
    assert [int(code) for code in VerifyExit] == [0, 1, 2, 3]
    assert cli.EXIT_BAD_INPUT == VerifyExit.BAD_INPUT  # the dispatcher's usage error, as argparse's
    assert VerifyExit.of(Result(Verdict.FALSE, "r", "f.c")) is VerifyExit.CONCLUSIVE
    assert VerifyExit.of(Result(Verdict.UNKNOWN, "r", "f.c")) is VerifyExit.UNKNOWN


def test_the_command_line() -> None:
    argv = verify_argv(DEFAULT_COMMAND, "p.c", 7.5, "--property", "unreach-call")
    assert argv[len(DEFAULT_COMMAND) :] == ("p.c", "--json", "--timeout", "7.5", "--property", "unreach-call")
    assert argv[: len(DEFAULT_COMMAND)] == DEFAULT_COMMAND and "--timeout" not in verify_argv(("q",), "p.c")


def test_a_bug_ends_at_the_one_boundary_with_its_traceback() -> None:
    code = "from quokka.verifier.cli import reporting_bugs; reporting_bugs(lambda _: {}['missing'], None)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == VerifyExit.INTERNAL_ERROR
    assert "Traceback" in done.stderr and "KeyError: 'missing'" in done.stderr
    assert "internal error" in done.stderr
    assert classify(done.returncode, done.stdout, done.stderr).reading is Reading.CRASHED
