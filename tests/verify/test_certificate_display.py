"""`quokka verify` shows the conjuncts that carry the proof, bounds pairs as equalities; the whole
certificate with `--all-invariants` (issue 19)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from quokka.verifier.engines import inductive
from quokka.verifier.engines.base import Budget, Status
from quokka.verifier.frontend import lower
from quokka.verifier.frontend.invariant import parse_invariant
from quokka.verifier.ir import conjuncts
from quokka.verifier.ir.builder import conjunction
from quokka.verifier.ir.printer import format_expr_c_names
from quokka.verifier.verdict.minimize import minimal_certificate

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


# the certificate Houdini finds for examples/cohencu.c (issue 40: it was shown whole, 22 rows)
COHENCU_CERTIFICATE = (
    "z == 6*n + 6", "y == 3*n*n + 3*n + 1", "x == n*n*n", "y*z + 2*z == 18*x + 12*y + 6",
    "z*z == 12*y + 6*z - 12", "2*y*y + 3*z == 3*x*z + 18*x + 10*y + 10", "n <= a + 1 || n == 0",
    "x*z <= 6*a*x + 12*x", "a*z + 2*z >= 6*a + 2*y + 10", "z >= 6", "y >= 1", "x >= 0", "n >= 0",
    "z%6 == 0", "y%6 == 1", "(x + n)%2 == 0",
)


def test_the_minimal_certificate_of_cohencu_is_its_definitions_and_is_a_proof() -> None:
    program = lower(ROOT / "examples" / "cohencu.c")
    (loop,) = [info.id for info in program.loops]
    whole = {loop: conjunction([parse_invariant(text, program, loop) for text in COHENCU_CERTIFICATE])}
    assert inductive.prove_with(program, whole, Budget.of(60)).status is Status.SAFE
    smaller = minimal_certificate(program, whole, Budget.of(60))
    texts = [format_expr_c_names(c, program, loop) for c in conjuncts(smaller[loop])]
    assert len(texts) <= 6 and len(set(texts)) == len(texts)
    assert {"z == 6*n + 6", "y == 3*n*n + 3*n + 1", "x == n*n*n"} <= set(texts)
    assert inductive.prove_with(program, smaller, Budget.of(60)).status is Status.SAFE
    assert minimal_certificate(program, whole, Budget.of(60)) == smaller  # the same every time


def test_a_conjunct_the_others_imply_is_left_out_and_one_they_do_not_is_kept() -> None:
    program = lower(ROOT / "examples" / "linear.c")
    (loop,) = [info.id for info in program.loops]
    texts = ("s == 2*i", "s <= 2*n", "s >= 0 || i < 0", "s - 2*i == 0")
    whole = {loop: conjunction([parse_invariant(text, program, loop) for text in texts])}
    if inductive.prove_with(program, whole, Budget.of(30)).status is not Status.SAFE:
        pytest.skip("not a certificate of linear.c")
    smaller = minimal_certificate(program, whole, Budget.of(30))
    shown = [format_expr_c_names(c, program, loop) for c in conjuncts(smaller[loop])]
    assert "s == 2*i" in shown and "s - 2*i == 0" not in shown and len(shown) < len(texts)


@pytest.mark.slow
def test_cohencu_is_shown_with_at_most_six_invariants_none_twice() -> None:
    command = [sys.executable, "-m", "quokka.verifier.cli", "verify", str(ROOT / "examples" / "cohencu.c")]
    out = subprocess.run([*command, "--json", "--timeout", "120"], capture_output=True, text=True, check=True)
    data = json.loads(out.stdout)
    assert data["verdict"] == "true"
    shown = [inv["expr"] for inv in data["invariants"]]
    assert 0 < len(shown) <= 6 and len(set(shown)) == len(shown)
