"""The BenchExec tool-info module, through BenchExec's own API and its `test_tool_info` checker."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from quokka.verifier.verdict.results import Diagnostic
from svcomp_helpers import FAKE, make_set

benchexec = pytest.importorskip("benchexec", reason="benchexec is a dependency")
from benchexec import model, result, util  # noqa: E402
from benchexec.tools.template import BaseTool2, UnsupportedFeatureException  # noqa: E402

MODULE = "quokka.svcomp.benchexec_tool"


@pytest.fixture(scope="module")
def tool() -> BaseTool2:
    config = SimpleNamespace(container=False)
    name, info = model.load_tool_info(MODULE, config)
    assert name == MODULE
    return info


@pytest.fixture
def tool_dir(tmp_path: Path) -> Path:
    """A folder with a `quokka` executable (the fake verifier behind a `verify` sub-command)."""
    exe = tmp_path / "quokka"
    exe.write_text(f"#!/bin/sh\n[ \"$1\" = verify ] && shift\nexec {sys.executable} {FAKE} \"$@\"\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return tmp_path


def _run(output: str, exit_code: int = 0, termination: str | None = None) -> BaseTool2.Run:
    return BaseTool2.Run(["quokka"], util.ProcessExitCode.create(value=exit_code),
                         BaseTool2.RunOutput(output.splitlines(keepends=True)), termination)


def test_name_executable_and_version(tool: BaseTool2, tool_dir: Path) -> None:
    assert tool.name() == "Quokka"
    exe = tool.executable(BaseTool2.ToolLocator(tool_directory=str(tool_dir)))
    assert Path(exe).name == "quokka"
    assert tool.version(exe) == "9.9.9"


def test_cmdline_takes_file_data_model_and_time_budget(tool: BaseTool2, tmp_path: Path) -> None:
    folder = make_set(tmp_path, {"a": ("true", "")})
    task = BaseTool2.Task.with_files([str(folder / "a.c")], property_file=str(tmp_path / "properties" /
                                     "unreach-call.prp"), options={"language": "C", "data_model": "ILP32"})
    limits = BaseTool2.ResourceLimits(cputime=900, walltime=None, memory=None, cpu_cores=2)
    cmd = tool.cmdline("quokka", ["--engines", "houdini"], task, limits)
    assert cmd == ["quokka", "verify", str(folder / "a.c"), "--json", "--engines", "houdini",
                   "--property", "unreach-call",
                   "--data-model", "ILP32", "--timeout", "405", "--witness", "witness.yml"]
    own = tool.cmdline("quokka", ["--witness", "out/w.yml", "--uninitialised", "nondet"], task, limits)
    assert own.count("--witness") == 1 and own[own.index("--witness") + 1] == "out/w.yml"
    assert own.count("--uninitialised") == 1 and own[own.index("--uninitialised") + 1] == "nondet"
    no_overflow = BaseTool2.Task.with_files([str(folder / "a.c")],
                                            property_file=str(tmp_path / "properties" / "no-overflow.prp"))
    overflow_cmd = tool.cmdline("quokka", [], no_overflow, limits)
    assert overflow_cmd[overflow_cmd.index("--property") + 1] == "no-overflow"
    (tmp_path / "properties" / "termination.prp").write_text("CHECK( init(main()), LTL(F end) )\n")
    termination = BaseTool2.Task.with_files([str(folder / "a.c")],
                                            property_file=str(tmp_path / "properties" / "termination.prp"))
    with pytest.raises(UnsupportedFeatureException, match="not termination"):
        tool.cmdline("quokka", [], termination, limits)


@pytest.mark.parametrize(
    ("payload", "code", "termination", "expected"),
    [
        ({"verdict": "true", "reason": "", "file": "a.c"}, 0, None, result.RESULT_TRUE_PROP),
        ({"verdict": "false", "reason": "", "file": "a.c"}, 0, None, result.RESULT_FALSE_REACH),
        ({"verdict": "unknown", "reason": "x", "file": "a.c"}, 1, None, result.RESULT_UNKNOWN),
        ({"verdict": "unknown", "reason": "x", "file": "a.c"}, 1, "cputime", result.RESULT_TIMEOUT),
        (Diagnostic("a.c", 1, 1, "parse error", "x").to_json(), 2, None, "ERROR (bad input)"),
        ({"verdict": "unknown", "status": "error", "reason": "a.c:1:1: x"}, 2, None,
         "ERROR (malformed output)"),
        (None, 0, "walltime", result.RESULT_TIMEOUT),
        (None, 3, None, "ERROR (exit code 3)"),
    ],
)
def test_determine_result(tool: BaseTool2, payload: dict[str, object] | None, code: int,
                          termination: str | None, expected: str) -> None:
    output = "some log line\n" + (json.dumps(payload) + "\n" if payload else "")
    assert tool.determine_result(_run(output, code, termination)) == expected
    if payload:
        assert result.get_result_classification(tool.determine_result(_run(output, code))) in (
            result.RESULT_CLASS_TRUE, result.RESULT_CLASS_FALSE, result.RESULT_CLASS_OTHER)


def test_get_value_from_output(tool: BaseTool2) -> None:
    line = json.dumps({"verdict": "true", "decided_by": "spacer", "time_s": 1.5}) + "\n"
    output = BaseTool2.RunOutput([line])
    assert tool.get_value_from_output(output, "decided_by") == "spacer"
    assert tool.get_value_from_output(output, "nothing") is None


def test_benchexec_test_tool_info_accepts_the_module(tmp_path: Path, tool_dir: Path) -> None:
    folder = make_set(tmp_path, {"a": ("true", "verdict=false")})
    out = tmp_path / "output.log"
    out.write_text(subprocess.run([str(tool_dir / "quokka"), "verify", str(folder / "a.c"), "--json"],
                                  capture_output=True, text=True).stdout)
    env = {**os.environ, "PATH": f"{tool_dir}:{os.environ['PATH']}"}
    proc = subprocess.run(
        [sys.executable, "-m", "benchexec.test_tool_info", MODULE, "--no-container",
         "--tool-directory", str(tool_dir), "--task-definition", str(folder / "a.yml"),
         "--tool-output", str(out)],
        capture_output=True, text=True, env=env, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Quokka" in proc.stderr and "9.9.9" in proc.stderr
    assert "false(unreach-call)" in proc.stderr
    assert "--data-model" in proc.stderr and "ILP32" in proc.stderr
    assert "--witness" in proc.stderr and "witness.yml" in proc.stderr  # SV-COMP scoring needs it


def test_the_witness_option_writes_a_witness_into_the_run_folder(tool: BaseTool2, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The command line BenchExec would run, run for real in a run folder: `witness.yml` appears."""
    from quokka.verifier.cli import main

    folder = make_set(tmp_path, {"a": ("true", "")})
    (folder / "a.c").write_text("void reach_error(void);\nint main(void) {\n  int x = 1;\n"
                                "  if (x != 1) { reach_error(); }\n  return 0;\n}\n")
    task = BaseTool2.Task.with_files(["../set/a.c"], property_file=str(tmp_path / "properties" /
                                     "unreach-call.prp"), options={"language": "C", "data_model": "ILP32"})
    limits = BaseTool2.ResourceLimits(cputime=None, walltime=20, memory=None, cpu_cores=1)
    run_folder = tmp_path / "run"
    run_folder.mkdir()
    monkeypatch.chdir(run_folder)
    cmd = tool.cmdline("quokka", ["--engines", "spacer"], task, limits)
    assert main(cmd[1:]) == 0
    [entry] = yaml.safe_load((run_folder / "witness.yml").read_text())
    assert entry["entry_type"] == "invariant_set"
    assert entry["metadata"]["task"]["input_files"] == ["../set/a.c"]  # as BenchExec gave it
