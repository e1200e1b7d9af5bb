"""Quantified claims over arrays of every kind (issue 40): each ends valid, refuted or unknown,
never in a traceback. A claim's cells `a[j]` are read under its bound variable, which BMC's bounds
check of a sized (global or local) array must handle as the quantifier does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from quokka.server.diagnostics import diagnostics
from quokka.server.model import STATUS_OK, Outcome
from quokka.server.text import SourceText
from quokka.server.verify_main import main as verify_main
from quokka.verifier import ir
from quokka.verifier.cli import main
from quokka.verifier.encode.smt_bv import BITS
from quokka.verifier.engines import bmc
from quokka.verifier.engines.base import Budget, Status
from quokka.verifier.exec.interp import run
from quokka.verifier.ir.builder import ProgramBuilder
from quokka.verifier.verdict.results import Result, read_verify_output

DECLARATIONS = {
    "global": ("int a[100];", ""),
    "local": ("", "int a[100];"),
    "heap": ("", "int *a = malloc(100 * sizeof(int));"),
}
LOOP_LINE = 8  # of `program`'s while


def program(kind: str, annotation: str = "") -> str:
    """A loop that sets a[0..99] to 5, its array global, local or a `malloc` block."""
    outside, inside = DECLARATIONS[kind]
    acsl = f"/*@ loop invariant {annotation}; */" if annotation else ""
    return f"""void *malloc(unsigned long size);
extern void __VERIFIER_assert(int cond);
{outside}
int main() {{
  {inside}
  int i = 0;
  {acsl}
  while (i < 100) {{
    a[i] = 5;
    i++;
  }}
  __VERIFIER_assert(a[50] == 5);
  return 0;
}}
"""


CLAIMS = [
    ("\\forall integer j; 0 <= j < i ==> a[j] == 5", "valid"),  # true and inductive
    ("\\forall integer j; 0 <= j < i ==> a[j] == 6", "refuted"),  # false after one iteration
    ("\\forall integer j; 0 <= j <= i ==> a[j] == 5", "refuted"),  # the issue's: a[i] is not set yet
    ("\\forall integer j; 0 <= j < 100 ==> a[j] == 5", "refuted"),  # not initiated
    ("\\forall integer j; 0 <= j < i ==> a[j] == 5 && j < 10", "refuted"),  # true for 10 iterations
]
KINDS = tuple(DECLARATIONS)


def _claims(out: str) -> list[dict[str, object]]:
    result = json.loads(out.splitlines()[0])
    assert result["verdict"] == "true", result  # the program is correct whatever is claimed
    claims: list[dict[str, object]] = result["claims"]
    return claims


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("claim", "status"), CLAIMS)
def test_a_quantified_option_claim_gets_its_status(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str, claim: str, status: str
) -> None:
    path = tmp_path / f"{kind}.c"
    path.write_text(program(kind), encoding="utf-8")
    code = main(["verify", str(path), "--invariant", f"{LOOP_LINE}:{claim}", "--json", "--timeout", "30"])
    assert code == 0
    [report] = _claims(capsys.readouterr().out)
    assert (report["source"], report["status"]) == ("option", status), report


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("claim", "status"), CLAIMS[1:4])
def test_a_quantified_acsl_claim_gets_its_status(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str, claim: str, status: str
) -> None:
    path = tmp_path / f"{kind}.c"
    path.write_text(program(kind, claim), encoding="utf-8")
    assert main(["verify", str(path), "--json", "--timeout", "30"]) == 0
    [report] = _claims(capsys.readouterr().out)
    assert (report["source"], report["status"]) == ("annotation", status), report


@pytest.mark.parametrize("kind", ("global", "local"))
def test_a_claim_reading_past_the_end_is_never_refuted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    """a[j + 200] is outside the array: evaluating the claim is undefined, so no run refutes it."""
    path = tmp_path / f"{kind}.c"
    path.write_text(program(kind), encoding="utf-8")
    claim = "\\forall integer j; 0 <= j < i ==> a[j + 200] == 0"
    args = ["verify", str(path), "--invariant", f"{LOOP_LINE}:{claim}", "--json", "--timeout", "20"]
    assert main(args) == 0
    [report] = _claims(capsys.readouterr().out)
    assert report["status"] == "unknown", report


K = ir.Var(ir.BOUND + "k", ir.INT)


def _asserting_cells_zero(hi: int, five_at: int | None = 2) -> ir.Program:
    """a = {0, 0, 5, 0} (5 at `five_at`); assert(forall k in [0, hi): a[k] == 0)."""
    b, cells = ProgramBuilder(), ir.ArrayType(ir.INT, 4)
    a = b.var("a", cells)
    if five_at is not None:
        b.assign(a, ir.Store(a, ir.Const(five_at, ir.INT), ir.Const(5, ir.INT), cells))
    zero = ir.Binary("==", ir.Select(a, K, ir.INT), ir.Const(0, ir.INT), ir.INT)
    b.check(ir.Forall(K, ir.Const(0, ir.INT), ir.Const(hi, ir.INT), zero))
    return b.build()


def test_bmc_checks_the_bounds_of_cells_a_quantifier_reads() -> None:
    failing = _asserting_cells_zero(3)
    found = bmc.check(failing, Budget.of(20))
    assert found.status is Status.UNSAFE and found.inputs is not None
    assert run(failing, found.inputs).outcome == "error"
    assert bmc.check(_asserting_cells_zero(2), Budget.of(20)).status is Status.SAFE


def test_bmc_reaches_no_error_through_a_quantifier_that_reads_past_the_end() -> None:
    past_end = _asserting_cells_zero(6, five_at=None)  # a[4], a[5]: undefined behaviour
    assert run(past_end, ()).outcome == "ub"
    assert bmc.check(past_end, Budget.of(20)).status is not Status.UNSAFE


def test_the_bit_precise_bmc_is_unknown_with_its_reason_for_a_quantifier() -> None:
    result = bmc.check(_asserting_cells_zero(3), Budget.of(20), domain=BITS, engine="bitblast")
    assert result.status is Status.UNKNOWN
    assert "quantified" in result.reason


def test_the_editor_shows_a_refuted_quantified_annotation_on_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The language server's worker (`server.verify_main`, what `quokka lsp` runs) and its diagnostics."""
    text = program("global", CLAIMS[2][0])
    path = tmp_path / "global.c"
    path.write_text(text, encoding="utf-8")
    assert verify_main([str(path), "--json", "--timeout", "30"]) == 0
    result = read_verify_output(capsys.readouterr().out)
    assert isinstance(result, Result)
    shown = diagnostics(path.as_uri(), SourceText(text), Outcome(result, str(path), STATUS_OK))
    [refuted] = [d for d in shown if d.code == "quokka.claim.refuted"]
    assert refuted.range.start.line == LOOP_LINE - 2 and "\\forall integer j" in refuted.message
