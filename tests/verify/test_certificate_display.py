"""`quokka verify` shows the conjuncts that carry the proof, bounds pairs as equalities; the whole
certificate with `--all-invariants` (issue 19)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _invariants(*extra: str) -> list[str]:
    command = [sys.executable, "-m", "quokka.verifier.cli", "verify", str(ROOT / "examples" / "linear.c")]
    arguments = [*command, "--json", "--timeout", "30", *extra]
    out = subprocess.run(arguments, capture_output=True, text=True, check=True)
    data = json.loads(out.stdout)
    assert data["verdict"] == "true"
    return [inv["expr"] for inv in data["invariants"]]


def test_the_minimal_certificate_is_shown_by_default_and_the_whole_one_on_request() -> None:
    minimal, whole = _invariants(), _invariants("--all-invariants")
    assert "s == 2*i" in minimal and "s <= 2*i" not in minimal
    assert {"s <= 2*i", "s >= 2*i"} <= set(whole)
    assert len(minimal) < len(whole)


def test_a_counterexample_prints_its_trace_in_c_names() -> None:
    command = [sys.executable, "-m", "quokka.verifier.cli", "verify", str(ROOT / "examples" / "sum_bug.c")]
    out = subprocess.run([*command, "--timeout", "30"], capture_output=True, text=True, check=False).stdout
    assert out.startswith("FALSE")
    trace = out[out.index("Trace"):]
    assert "loop L9, iteration 0" in trace and "loop-head states elided" in trace
    assert "assertion, line 12" in trace and "sum = " in trace
    assert "cond" not in trace and "nd." not in trace  # no parameters of __VERIFIER_assert, no temporaries


def test_double_check_confirms_a_certificate_with_cvc5() -> None:
    command = [sys.executable, "-m", "quokka.verifier.cli", "verify", str(ROOT / "examples" / "linear.c")]
    out = subprocess.run([*command, "--json", "--double-check"], capture_output=True, text=True, check=True)
    data = json.loads(out.stdout)
    assert data["verdict"] == "true" and data["extra"]["double_check"].startswith("confirmed: cvc5")
