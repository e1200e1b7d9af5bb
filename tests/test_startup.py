"""The start-up import budget (issue 36): a command imports what it needs when it runs, so that
`quokka --help` and `quokka parse` start in about the time Python and Z3 take, and the heavy
libraries (results store, plots, tables, algebra, second solver, model) load only where used."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINEAR = ROOT / "examples" / "linear.c"
HEAVY = ("sqlite_utils", "numpy", "sympy", "matplotlib", "torch", "transformers", "cvc5", "rich")
NOT_FOR_VERIFY = ("torch", "transformers", "matplotlib", "sqlite_utils", "numpy", "cvc5")

# runs the `quokka` command line given after the output file, then writes the modules it loaded there
WRAPPER = """\
import json, sys
from quokka.verifier.cli import main
out, sys.argv[1:] = sys.argv[1], sys.argv[2:]
try:
    code = main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
with open(out, "w") as handle:
    json.dump({"code": code, "modules": sorted(sys.modules)}, handle)
"""


def _run(tmp_path: Path, *argv: str) -> tuple[object, set[str]]:
    out = tmp_path / "modules.json"
    subprocess.run([sys.executable, "-c", WRAPPER, str(out), *argv], cwd=tmp_path, check=False,
                   capture_output=True, text=True, timeout=120)  # fmt: skip
    found = json.loads(out.read_text())
    return found["code"], set(found["modules"])


def _loaded(modules: set[str], libraries: tuple[str, ...]) -> list[str]:
    """The `libraries` (or their submodules) among `modules`."""
    return sorted({m.split(".")[0] for m in modules} & set(libraries))


def test_help_lists_every_command_and_imports_no_heavy_library(tmp_path: Path) -> None:
    code, modules = _run(tmp_path, "--help")
    assert code == 0
    assert _loaded(modules, HEAVY) == []
    assert _loaded(modules, ("z3", "pycparser", "yaml")) == []
    assert "importlib.metadata" not in modules  # the entry points are read from the metadata itself


def test_help_shows_every_command(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "quokka.verifier.cli", "--help"], cwd=tmp_path,
                         capture_output=True, text=True, check=True, timeout=60)  # fmt: skip
    for name in ("batch", "bench", "dataset", "finetune", "lsp", "model", "parse", "report", "verify"):
        assert f"    {name} " in out.stdout


def test_parse_imports_no_heavy_library(tmp_path: Path) -> None:
    code, modules = _run(tmp_path, "parse", str(LINEAR))
    assert code == 0
    assert "pycparser" in modules  # it did parse
    assert _loaded(modules, HEAVY) == []
    assert not any(m.startswith(("quokka.invariants", "quokka.svcomp", "quokka.server")) for m in modules)


def test_verify_help_shows_every_option_and_imports_only_its_arguments(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "quokka.verifier.cli", "verify", "--help"], cwd=tmp_path,
                         capture_output=True, text=True, check=True, timeout=60)  # fmt: skip
    options = ("--timeout", "--engines", "--model", "--witness-in", "--double-check", "--profile", "--json")
    assert [o for o in options if o not in out.stdout] == []
    code, modules = _run(tmp_path, "verify", "--help")
    assert code == 0
    assert _loaded(modules, (*HEAVY, "z3", "pycparser", "yaml")) == []
    assert "quokka.invariants.verify" not in modules


def test_every_command_registers_without_heavy_libraries(tmp_path: Path) -> None:
    for command in ("batch", "bench", "report", "torture", "eval-model", "dataset", "finetune", "model",
                    "serve-model", "lsp"):  # fmt: skip
        code, modules = _run(tmp_path, command, "--help")
        assert code == 0, command
        assert _loaded(modules, (*HEAVY, "z3", "pycparser")) == [], command


def test_verify_of_a_simple_program_imports_no_model_plots_or_store(tmp_path: Path) -> None:
    """`-X importtime` reports the imports of the forked strategy processes too; the program's
    quick exit (`cli.console`) still flushes the whole JSON line and keeps the exit status."""
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "quokka.verifier.cli", "verify", str(LINEAR), "--json"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert out.returncode == 0
    assert json.loads(out.stdout.splitlines()[-1])["verdict"] == "true"
    imported = {line.rpartition("|")[2].strip() for line in out.stderr.splitlines()
                if line.startswith("import time:")}  # fmt: skip
    assert "z3" in imported  # the report is read
    assert _loaded(imported, NOT_FOR_VERIFY) == []


def test_the_quick_exit_keeps_a_bad_input_s_status_and_message(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "quokka.verifier.cli", "verify", "missing.c", "--json"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert out.returncode == 2
    assert "missing.c" in out.stderr and json.loads(out.stdout)["status"] == "error"


def test_the_dispatcher_reads_the_commands_pyproject_declares(monkeypatch: pytest.MonkeyPatch) -> None:
    """Read from the installed metadata without `importlib.metadata`: the same table as
    pyproject's (a stale install, e.g. after an entry point moved, shows here: `pip install -e .`);
    and the same through `importlib.metadata` where no metadata folder is found on the path."""
    import tomllib

    from quokka.verifier import cli

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"][cli.GROUP]
    assert cli.command_entry_points() == declared
    monkeypatch.setattr(cli, "_metadata_folder", lambda: None)
    assert cli.command_entry_points() == declared


def test_an_entry_points_file_is_read_by_section() -> None:
    from quokka.verifier.cli import entry_point_group

    text = "[console_scripts]\nquokka = a:b\n\n[quokka.commands]\nparse = m.n:register\n# x = y\nverify=p:q\n"
    assert entry_point_group(text, "quokka.commands") == {"parse": "m.n:register", "verify": "p:q"}
    assert entry_point_group(text, "other") == {}
