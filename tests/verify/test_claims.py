"""The user's claims about loops are checked whatever the verdict (issue 19): each ACSL `loop
invariant` and `--invariant` is valid (part of an inductive set), refuted (a replayed execution
reaches its loop head where it is false) or unknown (with a counterexample to induction)."""

from __future__ import annotations

import json
from pathlib import Path

from corpus import Doubling, doubling
from quokka.invariants.verify import verify_path
from quokka.server.diagnostics import diagnostics
from quokka.server.model import STATUS_OK, Outcome
from quokka.server.text import SourceText
from quokka.verifier.engines.base import Budget
from quokka.verifier.ir import Goto, If
from quokka.verifier.ir.builder import ProgramBuilder, add, eq, le, lt, mul, num
from quokka.verifier.options import Options
from quokka.verifier.verdict.claims import Claim, check_claims
from quokka.verifier.verdict.results import Result

SOURCE = """extern int __VERIFIER_nondet_int(void);
extern void __VERIFIER_assert(int cond);
int main() {
  int n = __VERIFIER_nondet_int();
  if (n < 0 || n > 1000) return 0;
  int i = 0, s = 0;
  /*@ loop invariant s == 3*i;
      loop invariant i <= n; */
  while (i < n) {
    i++;
    s += 2;
  }
  __VERIFIER_assert(s == 2*n);
  return 0;
}
"""


def _counter() -> Doubling:
    """n in [0, 100]; i, s = 0; while (i < n) { i++; s += 2; } assert(s == 2 * n)."""
    return doubling("claims.c", "isn", upper=100, bound_first=True)


def test_a_wrong_claim_is_refuted_with_a_reachable_state_and_inputs() -> None:
    program, loop, i, s, _ = _counter()
    wrong = Claim(loop, eq(s, mul(num(3), i)), "s == 3*i", 7)
    [report] = check_claims(program, [wrong], Budget.of(30))
    assert report.status == "refuted", report
    state = dict(report.state)
    assert state["s"] != 3 * state["i"] and state["s"] == 2 * state["i"]
    assert len(report.inputs) == 1 and 1 <= report.inputs[0] <= 100


def test_true_claims_are_valid_alone_or_with_a_certificate_and_unknown_without() -> None:
    program, loop, i, s, n = _counter()
    inductive = Claim(loop, eq(s, mul(num(2), i)), "s == 2*i", 7)
    needs_help = Claim(loop, le(s, mul(num(2), n)), "s <= 2*n", 8)  # true, but not inductive alone
    alone = check_claims(program, [needs_help], Budget.of(30))
    assert [r.status for r in alone] == ["unknown"] and "consecution" in alone[0].reason
    assert alone[0].state, "an unknown claim shows its counterexample to induction"
    helped = check_claims(program, [needs_help], Budget.of(30), {loop: [eq(s, mul(num(2), i)), le(i, n)]})
    assert [r.status for r in helped] == ["valid"]
    both = check_claims(program, [inductive, needs_help], Budget.of(30))
    assert [r.status for r in both] == ["valid", "valid"]  # s <= 2*n is inductive given s == 2*i


def test_claims_on_a_goto_loop_are_checked_too() -> None:
    b = ProgramBuilder("goto_claims.c")
    x = b.var("x")
    loop = b.label("again", loop=True)
    assert loop is not None
    b.assign(x, add(x, num(1)))
    b.emit(If(lt(x, num(5)), (Goto("again"),), ()))
    program = b.build()
    reports = check_claims(program, [Claim(loop, le(x, num(4)), "x <= 4", 1),
                                     Claim(loop, le(x, num(2)), "x <= 2", 1)], Budget.of(30))
    assert [r.status for r in reports] == ["valid", "refuted"]
    assert dict(reports[1].state) == {"x": 3}


def test_verify_reports_every_annotation_whatever_decided_the_verdict(tmp_path: Path) -> None:
    path = tmp_path / "claims.c"
    path.write_text(SOURCE, encoding="utf-8")
    result = verify_path(path, Options(timeout_s=30, invariants=((9, "s >= 0"),)))
    assert result.verdict.value == "true"
    claims = {(c.expr, c.source): c for c in result.claims}
    assert claims[("s == 3*i", "annotation")].status == "refuted"
    assert claims[("s == 3*i", "annotation")].line == 8
    assert claims[("i <= n", "annotation")].status == "valid"
    assert claims[("s >= 0", "option")].status == "valid"
    again = Result.from_json(json.loads(json.dumps(result.to_json())))
    assert again.claims == result.claims


def test_the_editor_shows_a_refuted_annotation_on_its_line(tmp_path: Path) -> None:
    path = tmp_path / "claims.c"
    path.write_text(SOURCE, encoding="utf-8")
    result = verify_path(path, Options(timeout_s=30))
    outcome = Outcome(result, str(path), STATUS_OK)
    shown = diagnostics(path.as_uri(), SourceText(SOURCE), outcome)
    claim_diags = [d for d in shown if str(d.code).startswith("quokka.claim")]
    refuted = [d for d in claim_diags if d.code == "quokka.claim.refuted"]
    assert len(refuted) == 1 and refuted[0].range.start.line == 7  # 0-based: the annotation's line 8
    assert "s == 3*i" in refuted[0].message and "at the loop head with" in refuted[0].message
    assert [d.code for d in claim_diags if d is not refuted[0]] == ["quokka.claim.valid"]


def test_a_correctness_witness_is_checked_invariant_by_invariant(tmp_path: Path) -> None:
    from quokka.verifier.cli import main

    program = Path(__file__).resolve().parents[2] / "examples" / "linear.c"
    witness = tmp_path / "w.yml"
    assert main(["verify", str(program), "--timeout", "30", "--witness", str(witness)]) == 0
    result = verify_path(program, Options(timeout_s=30, witness_in=witness))
    assert result.claims and {(c.source, c.status) for c in result.claims} == {("witness", "valid")}
    wrong = tmp_path / "wrong.yml"
    wrong.write_text(witness.read_text(encoding="utf-8").replace("s == 2*i", "s == 3*i"), encoding="utf-8")
    checked = verify_path(program, Options(timeout_s=30, witness_in=wrong))
    assert {c.expr: c.status for c in checked.claims}["s == 3*i"] == "refuted"
