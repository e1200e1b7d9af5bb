"""BenchExec tool-info module for Quokka: `benchexec --tool quokka.svcomp.benchexec_tool` style use.

In a benchmark definition: `<benchmark tool="quokka.svcomp.benchexec_tool" ...>` (BenchExec loads
a tool-info module by its full Python name when it contains a dot). Quokka runs as
`quokka verify FILE --json --property P [--data-model M] [--timeout S] --witness witness.yml`,
P the task's property file's (`unreach-call`: only reach_error() is the error, SV-COMP's reading;
`no-overflow`: a signed integer overflow is; others are not supported); add `--uninitialised
nondet` to the benchmark's options for SV-COMP's reading of uninitialised locals. The verdict is
read from its one JSON object (see `quokka.verifier.verdict.results.Result.to_json`): FALSE is
`false(unreach-call)` or `false(no-overflow)`, after the property it names.
The witness (SV-COMP format 2.0, backing a TRUE or FALSE verdict; none for UNKNOWN) is written
into the run's working directory, whose files BenchExec keeps as the run's result files (select
them with `<resultfiles>witness.yml</resultfiles>`); SV-COMP's scoring validates it. Needs
BenchExec installed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import benchexec.result as result
import benchexec.tools.template
from quokka.verifier.properties import NO_OVERFLOW, SUPPORTED, UNREACH_CALL, identify
from quokka.verifier.verdict.contract import Reading, classify, verify_argv
from quokka.verifier.verdict.results import (
    Diagnostic,
    Result,
    Verdict,
    verify_json_object,
)

_TIME_SHARE = 0.9  # of the CPU/wall budget given to Quokka's own --timeout, the rest for start-up
WITNESS_FILE = "witness.yml"  # in the run's working directory, as other SV-COMP verifiers write theirs


class Tool(benchexec.tools.template.BaseTool2):  # type: ignore[misc]
    """Quokka: loop invariants guessed and proven by Z3 (unreach-call and no-overflow)."""

    def executable(self, tool_locator: Any) -> str:
        path: str = tool_locator.find_executable("quokka")
        return path

    def name(self) -> str:
        return "Quokka"

    def project_url(self) -> str:
        return "https://github.com/quokka-verifier/quokka"

    def version(self, executable: str) -> str:
        text: str = self._version_from_tool(executable, line_prefix="quokka")
        return text.strip()

    def cmdline(self, executable: str, options: list[str], task: Any, rlimits: Any) -> list[str]:
        checked = _property_of(task.property_file)
        command = list(verify_argv((executable, "verify"), task.single_input_file, None, *options))
        if "--property" not in options:
            command += ["--property", checked]  # the task's, not a plain C file's `assert`
        data_model = (task.options or {}).get("data_model")
        if data_model and "--data-model" not in options:
            command += ["--data-model", str(data_model)]
        budget = _time_budget(rlimits)
        if budget is not None and "--timeout" not in options:
            command += ["--timeout", f"{budget:g}"]
        if "--witness" not in options:
            command += ["--witness", WITNESS_FILE]
        return command

    def determine_result(self, run: Any) -> str:
        code = getattr(run.exit_code, "value", run.exit_code)
        found = classify(code, run.output.text)
        if found.reading is Reading.MALFORMED:
            return f"{result.RESULT_ERROR} (malformed output)"
        if isinstance(found.output, Diagnostic):
            return f"{result.RESULT_ERROR} (bad input)"
        if not isinstance(found.output, Result):  # a Result stands even if the run was killed after it
            if run.was_timeout:
                return str(result.RESULT_TIMEOUT)
            return f"{result.RESULT_ERROR} ({_exit_text(run.exit_code)})"
        return _verdict_result(found.output, run.was_timeout, _command_property(run.cmdline))

    def get_value_from_output(self, output: Any, identifier: str) -> str | None:
        """A top-level field of Quokka's JSON output (e.g. `decided_by`, `time_s`)."""
        data = verify_json_object(output.text)
        if data is None or identifier not in data:
            return None
        return str(data[identifier])


def _property_of(property_file: str | None) -> str:
    """The property Quokka checks for a task with `property_file` (unreach-call without one)."""
    if not property_file:
        return UNREACH_CALL
    name = identify(Path(property_file))
    if name not in SUPPORTED:
        raise benchexec.tools.template.UnsupportedFeatureException(
            f"Quokka verifies only the {' and '.join(SUPPORTED)} properties, not {name}"
        )
    return name


def _command_property(cmdline: Any) -> str | None:
    """The value of `--property` in the command line of a run, if any."""
    args = list(cmdline or ())
    return next((args[i + 1] for i in range(len(args) - 1) if args[i] == "--property"), None)


def _time_budget(rlimits: Any) -> float | None:
    """Quokka's wall-clock budget: within the wall limit, and within the CPU-time limit when its
    engines run on all of the run's cores at once."""
    limits = []
    if rlimits.walltime:
        limits.append(rlimits.walltime)
    if rlimits.cputime:
        limits.append(rlimits.cputime / max(1, rlimits.cpu_cores or 1))
    return round(min(limits) * _TIME_SHARE, 1) if limits else None


def _verdict_result(output: Result, was_timeout: bool, checked: str | None = None) -> str:
    """The BenchExec result of Quokka's result; a FALSE is about the property the result names
    (`extra.property`), else the one the command line asked for (`checked`), else unreach-call."""
    if output.verdict is Verdict.TRUE:
        return str(result.RESULT_TRUE_PROP)
    if output.verdict is Verdict.FALSE:
        overflow = (output.extra.get("property") or checked) == NO_OVERFLOW
        return str(result.RESULT_FALSE_OVERFLOW if overflow else result.RESULT_FALSE_REACH)
    return str(result.RESULT_TIMEOUT if was_timeout else result.RESULT_UNKNOWN)


def _exit_text(exit_code: Any) -> str:
    if getattr(exit_code, "signal", None):
        return f"signal {exit_code.signal}"
    return f"exit code {getattr(exit_code, 'value', exit_code)}"
