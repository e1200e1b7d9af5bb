"""Claims users make about loops (ACSL `loop invariant`, `--invariant`, witness invariants), each
checked whatever the program's verdict: valid, refuted, or unknown.

* **valid**: the claim belongs to an inductive set of invariants (Houdini over all the claims and
  the certificate of a TRUE verdict), so it holds at every reachable state of its loop head.
* **refuted**: an execution reaches the loop head in a state where the claim is false: bounded
  model checking of the program whose assertions are assumed and whose unsettled claims are
  asserted at their heads, replayed by the interpreter (the state and inputs are reported).
* **unknown**: neither, within the budget; the reason names the obligation that failed (initiation
  or consecution) and its counterexample to induction, which need not be reachable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from quokka.verifier.engines import bmc
from quokka.verifier.engines.base import Budget
from quokka.verifier.engines.houdini import Dropped, HoudiniResult, houdini
from quokka.verifier.errors import Coord
from quokka.verifier.exec.interp import run
from quokka.verifier.ir import Assert, Block, Expr, Program, bounded_recursion
from quokka.verifier.ir.transform import at_loop_heads
from quokka.verifier.verdict.checks import confirm_counterexample
from quokka.verifier.verdict.results import ClaimReport, Counterexample

HOUDINI_SHARE = 0.4  # of the budget, for the proof; the rest for the search of a refutation
VALID, REFUTED, UNKNOWN = "valid", "refuted", "unknown"


@dataclass(frozen=True)
class Claim:
    """`expr` claimed to hold at the head of `loop`, written at `line`:`column` as `text`."""

    loop: str
    expr: Expr
    text: str
    line: int
    column: int = 0
    source: str = "annotation"  # "annotation" | "option" | "witness"


Support = Mapping[str, Sequence[Expr]]


def check_claims(
    program: Program, claims: Sequence[Claim], budget: Budget, support: Support | None = None
) -> tuple[ClaimReport, ...]:
    """Each claim's status. `support`: invariants already proven (a certificate), which may make a
    claim that is not inductive on its own part of an inductive set."""
    if not claims:
        return ()
    proof = _prove(program, claims, budget.fraction(HOUDINI_SHARE), support or {})
    reports = {c: _from_proof(c, proof) for c in claims}
    open_claims = [c for c in claims if reports[c].status != VALID]
    for claim, cex in _refute(program, open_claims, budget).items():
        reports[claim] = _refuted(claim, cex)
    bounded = bounded_recursion(program)
    if bounded is not None:  # proven of the inlined calls only
        reports = {c: _report(c, UNKNOWN, bounded) if r.status == VALID else r for c, r in reports.items()}
    return tuple(reports[c] for c in claims)


def _prove(program: Program, claims: Sequence[Claim], budget: Budget, support: Support) -> HoudiniResult:
    pool: dict[str, list[Expr]] = {loop: list(exprs) for loop, exprs in support.items()}
    for c in claims:
        pool.setdefault(c.loop, [])
        if c.expr not in pool[c.loop]:
            pool[c.loop].append(c.expr)
    return houdini(program, pool, budget)


def _from_proof(claim: Claim, proof: HoudiniResult) -> ClaimReport:
    dropped = {(d.loop, d.expr): d for d in proof.dropped}
    if proof.complete and claim.expr in proof.kept.get(claim.loop, ()):
        return _report(claim, VALID, "inductive (with the other claims and proven invariants)")
    why = dropped.get((claim.loop, claim.expr))
    if why is None:
        return _report(claim, UNKNOWN, "the budget ran out before it was proved or refuted")
    return _report(claim, UNKNOWN, f"not proved: {why.reason}", _cti_state(why))


def _cti_state(dropped: Dropped) -> tuple[tuple[str, int], ...]:
    if dropped.cti is None:
        return ()
    state = dropped.cti.pre or dropped.cti.post
    return tuple(state.items())


def _refute(program: Program, claims: Sequence[Claim], budget: Budget) -> dict[Claim, Counterexample]:
    """Counterexamples for as many `claims` as BMC finds within `budget` (first failures first)."""
    found: dict[Claim, Counterexample] = {}
    left = list(claims)
    while left and not budget.expired:
        asserted, checks = _asserting(program, left)
        result = bmc.check(asserted, budget)
        if not result.unsafe or result.inputs is None:
            break
        cex, _ = confirm_counterexample(asserted, result, None)
        failed = run(asserted, result.inputs).error
        claim = checks.get(id(failed))
        if cex is None or claim is None:
            break
        found[claim] = cex
        left.remove(claim)
    return found


def _asserting(program: Program, claims: Sequence[Claim]) -> tuple[Program, dict[int, Claim]]:
    """`program` with its assertions assumed and each claim asserted at its loop head, and the
    claim of each such assertion (by identity)."""
    checks: dict[int, Claim] = {}

    def at_head(loop_id: str, coord: Coord | None) -> Block:
        stmts = []
        for c in claims:
            if c.loop == loop_id:
                stmts.append(Assert(c.expr, coord, coord))
                checks[id(stmts[-1])] = c
        return tuple(stmts)

    return at_loop_heads(program, at_head, assert_to_assume=True), checks


def _refuted(claim: Claim, cex: Counterexample) -> ClaimReport:
    state = cex.loop_heads[-1][2] if cex.loop_heads else ()
    inputs = tuple(v.value for v in cex.inputs)
    reason = "false at a reachable state of its loop head (replayed)"
    return replace(_report(claim, REFUTED, reason, tuple(state)), inputs=inputs)


def _report(claim: Claim, status: str, reason: str, state: tuple[tuple[str, int], ...] = ()) -> ClaimReport:
    return ClaimReport(claim.loop, claim.line, claim.column, claim.text, claim.source, status, reason, state)
