"""What batch/bench/report print: plain columns when piped, one-line errors (e.g. Ray missing)."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from quokka.svcomp.cli import main
from quokka.svcomp.summary import summarize
from quokka.svcomp.ui import print_error, print_table, summary_table
from quokka.verifier.infra.store import ResultRow, RunInfo
from rich.console import Console
from rich.table import Table
from svcomp_helpers import FAKE_VERIFIER, make_set


def _table() -> Table:
    runs = [RunInfo(id=1, signature="a", config="a-rather-long-configuration-name")]
    rows = [ResultRow(run_id=1, task="t", name="t", status="true", verdict="true", category="correct",
                      score=2, expected="true", cpu_s=1.25)]
    return summary_table(summarize(rows, runs), title="results per run")


def test_tables_are_plain_untruncated_columns_when_not_a_terminal() -> None:
    buffer = io.StringIO()
    print_table(Console(file=buffer, width=40), _table())
    lines = buffer.getvalue().splitlines()
    assert lines[0] == "results per run"
    assert lines[1].split() == ["run", "config", "tasks", "correct", "(true/false)", "wrong", "(true/false)",
                                "unknown", "error", "score", "CPU", "s", "CPU", "s", "correct"]
    assert len(lines[1]) == len(lines[2])  # aligned columns (the last one right-aligned)
    assert lines[2].split() == ["1", "a-rather-long-configuration-name", "1", "1", "1/0", "0", "0/0", "0",
                                "0", "2", "1.2", "1.2"]
    assert "…" not in buffer.getvalue() and "┃" not in buffer.getvalue()


def test_tables_are_drawn_by_rich_on_a_terminal() -> None:
    buffer = io.StringIO()
    print_table(Console(file=buffer, width=200, force_terminal=True), _table())
    assert "┃" in buffer.getvalue()


def test_errors_are_one_line_whatever_the_width() -> None:
    buffer = io.StringIO()
    print_error(Console(file=buffer, width=20), "a [long] message " * 5)
    assert buffer.getvalue() == "error: " + "a [long] message " * 5 + "\n"


def test_backend_ray_without_ray_names_the_extra_and_exits_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    monkeypatch.delitem(sys.modules, "quokka.svcomp.ray_backend", raising=False)
    folder = make_set(tmp_path, {"a": ("true", "")})
    code = main(["batch", str(folder), "--db", str(tmp_path / "r.sqlite"), "--backend", "ray", "-q",
                 "--verifier", " ".join(FAKE_VERIFIER)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.splitlines() == [
        "error: --backend ray needs the [ray] extra: pip install 'quokka-verifier[ray]' (cannot import ray)"]
    assert not (tmp_path / "r.sqlite").exists()
