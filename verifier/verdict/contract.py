"""The `quokka verify` process contract: its command line, its exit codes, and how a finished run reads.

The one definition for everyone who runs `quokka verify` as a process and reads what it left: batch
runs, the language server, BenchExec's tool-info module, torture and fault injection. Each maps the
`Finished` reading onto its own statuses; none parses the output or restates the exit codes itself.
"""

from __future__ import annotations

import enum
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from quokka.verifier.verdict.results import (
    Diagnostic,
    Result,
    UnreadableOutput,
    Verdict,
    read_verify_output,
)

# `quokka verify` run by this Python, whatever is on PATH
DEFAULT_COMMAND: tuple[str, ...] = (sys.executable, "-m", "quokka.verifier.cli", "verify")


class VerifyExit(enum.IntEnum):
    """The exit codes of `quokka verify`."""

    CONCLUSIVE = 0  # a TRUE or FALSE Result (on stdout with --json)
    UNKNOWN = 1  # an UNKNOWN Result
    BAD_INPUT = 2  # a located one-line error on stderr (and a Diagnostic with --json)
    INTERNAL_ERROR = 3  # a bug in Quokka: its traceback on stderr (`cli.reporting_bugs`)

    @classmethod
    def of(cls, result: Result) -> VerifyExit:
        return cls.UNKNOWN if result.verdict is Verdict.UNKNOWN else cls.CONCLUSIVE


def verify_argv(
    command: Sequence[str], program: str, timeout_s: float | None = None, *options: str
) -> tuple[str, ...]:
    """The command line of one `--json` verification of `program`: `command` (the verifier, up to and
    including `verify`), the file, `--json`, the budget when given, then `options`."""
    budget = ("--timeout", f"{timeout_s:g}") if timeout_s is not None else ()
    return (*command, program, "--json", *budget, *options)


class Reading(enum.Enum):
    """What a finished run left behind."""

    RESULT = "result"  # a Result whose exit code matches its verdict
    BAD_INPUT = "bad input"  # a Diagnostic, or the bad-input exit code
    INCONSISTENT = "inconsistent"  # a Result with an exit code that contradicts its verdict
    MALFORMED = "malformed"  # a JSON object with a verdict that fits neither schema
    NO_RESULT = "no result"  # a known exit code and no Result
    CRASHED = "crashed"  # an exit code `quokka verify` never uses, or a signal


@dataclass(frozen=True)
class Finished:
    reading: Reading
    output: Result | Diagnostic | None
    message: str  # the reason: the Result's or Diagnostic's, else what went wrong


def classify(
    exit_code: int | None, stdout: str, stderr_tail: str = "", signal_name: str | None = None
) -> Finished:
    """The reading of a run that ended with `exit_code` (None: killed by `signal_name`)."""
    try:
        output = read_verify_output(stdout)
    except UnreadableOutput as exc:
        if _known(exit_code):
            return Finished(Reading.MALFORMED, None, str(exc))
        return Finished(Reading.CRASHED, None, crash_message(exit_code, stderr_tail, signal_name))
    if output is None or not _known(exit_code):
        kind = Reading.NO_RESULT if output is None and _known(exit_code) else Reading.CRASHED
        return Finished(kind, output, crash_message(exit_code, stderr_tail, signal_name))
    if isinstance(output, Diagnostic) or exit_code == VerifyExit.BAD_INPUT:
        return Finished(Reading.BAD_INPUT, output, output.reason or "bad input")
    if exit_code != VerifyExit.of(output):
        message = f"exit code {exit_code} does not match verdict {output.verdict.value}"
        return Finished(Reading.INCONSISTENT, output, message)
    return Finished(Reading.RESULT, output, output.reason)


def _known(exit_code: int | None) -> bool:
    known = (VerifyExit.CONCLUSIVE, VerifyExit.UNKNOWN, VerifyExit.BAD_INPUT)  # a bug's exit is a crash
    return exit_code in known


def crash_message(exit_code: int | None, stderr_tail: str, signal_name: str | None = None) -> str:
    """`exit code N` or `killed by SIG...`, `no verdict`, and the last line the run wrote on stderr."""
    last = next((line for line in reversed(stderr_tail.splitlines()) if line.strip()), "")
    how = f"killed by {signal_name}" if signal_name else f"exit code {exit_code}"
    return f"{how}, no verdict" + (f": {last.strip()}" if last else "")
