"""What a verification run leaves behind, and what it used (issue 20): strategies killed when
another one decides leave no temporary files (gcc's included), and each strategy's peak
resident memory is measured and stays under the memory limit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from corpus import CORPUS
from marks import needs_gcc
from quokka.verifier.engines.base import Budget, EngineResult, Status
from quokka.verifier.ir import Program
from quokka.verifier.verdict.portfolio import Portfolio, PortfolioConfig
from quokka.verifier.verdict.results import Result, Verdict

SAFE = next(e for e in CORPUS if e.expected == "safe" and e.invariants and e.c_source is None)

# safe, and n is unbounded: fuzz compiles and runs the program until spacer's proof ends the run
COUNTER = """extern void reach_error(void); extern int __VERIFIER_nondet_int(void);
int main(void) { int n = __VERIFIER_nondet_int(), i = 0; while (i < n) { i = i + 1; }
  if (n >= 0 && i != n) reach_error(); return 0; }
"""


def _litter(program: Program, budget: Budget) -> EngineResult:
    with tempfile.NamedTemporaryFile(delete=False, prefix="left-behind-"):
        pass
    time.sleep(60)  # killed long before
    raise AssertionError("not reached")


def _claim(program: Program, budget: Budget) -> EngineResult:
    time.sleep(1.0)
    return EngineResult("claim", Status.SAFE, "claimed", invariants=SAFE.invariants)


def _files_under(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file()]


def test_a_killed_strategys_temporary_files_are_removed(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    config = PortfolioConfig(timeout_s=20, replay_with_compiler=False)
    result = Portfolio(SAFE.program, config).run({"litter": _litter, "claim": _claim})
    assert result.verdict is Verdict.TRUE
    assert list(tmp_path.iterdir()) == []  # the run's scratch folder, and the litter in it, are gone


def test_each_strategys_peak_memory_is_reported():
    config = PortfolioConfig(timeout_s=20, replay_with_compiler=False, memory_mb=1024)
    result = Portfolio(SAFE.program, config).run({"litter": _litter, "claim": _claim})
    peaks = dict(result.peak_rss_mb)
    assert set(peaks) == {"litter", "claim"}  # the one killed is measured too
    assert all(0 < mb <= 1024 for mb in peaks.values())
    assert Result.from_json(json.loads(json.dumps(result.to_json()))).peak_rss_mb == result.peak_rss_mb


@needs_gcc
def test_verify_leaves_no_temporary_files_and_holds_the_memory_limit(tmp_path):
    program = tmp_path / "counter.c"
    program.write_text(COUNTER)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    command = [sys.executable, "-m", "quokka.verifier.cli", "verify", str(program), "--timeout", "30",
               "--memory", "700", "--json", "--cores", "0"]  # all strategies at once: fuzz builds too
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False,
                          env={**os.environ, "TMPDIR": str(scratch)})
    data = json.loads(done.stdout)
    assert data["verdict"] == "true", done.stderr
    peaks = dict(data["peak_rss_mb"])
    assert "fuzz" in peaks and "spacer" in peaks
    assert all(0 < mb <= 700 for mb in peaks.values()), peaks
    assert _files_under(scratch) == []
