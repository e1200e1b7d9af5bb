"""The Quokka two-query check of candidate invariants that are not inductive on their own.

For candidates C (loop id -> expression):
* the *assume* query: is the program safe when C is assumed at each loop head?
* the *assert* query: does C hold at each loop head of the program whose assertions are
  turned into assumes?
Both are solved by Spacer, in two child processes (Z3 objects cannot be shared). If both
succeed with invariants I1 and I2, then I1 /\\ I2 /\\ C is inductive for the original program
and implies safety; that certificate is re-checked by `inductive.prove_with` (else UNKNOWN).
An execution that reaches the error with C assumed also reaches it without the assumption, so
an UNSAFE answer of the assume query (with inputs) is reported as UNSAFE.
"""

from __future__ import annotations

import functools
import multiprocessing.connection as mpc
import os
from collections.abc import Mapping

from quokka.verifier.infra.processes import Child, ChildSetup, start_child
from quokka.verifier.ir.transform import assert_program, assume_program

from ..ir import INT, Binary, Expr, Program, refusal
from . import inductive, spacer
from .base import Budget, EngineResult, Status, Stopwatch, unknown

ENGINE = "twoquery"
_GRACE_S = 2.0  # how long to wait past the deadline for a child's answer
_CHECK_MIN_S = 5.0  # time allowed to check a certificate found just before the deadline


# ----------------------------------------------------------------------------- processes


def _child(program: Program, deadline: float, setup: ChildSetup, conn: mpc.Connection) -> None:
    setup()
    try:
        conn.send(spacer.solve(program, Budget(deadline), check=False))
    except Exception as exc:  # reported to the parent as UNKNOWN
        conn.send(unknown(spacer.ENGINE, f"spacer failed: {type(exc).__name__}: {exc}"))
    finally:
        conn.close()


def _solve_both(assume: Program, asserted: Program, budget: Budget) -> dict[str, EngineResult]:
    """Spacer on both programs in parallel; stops early when one answer already decides."""
    setup = ChildSetup(parent=os.getpid())  # each dies with the process that started it
    running = [
        start_child(name, functools.partial(_child, prog, budget.deadline, setup), daemon=True)
        for name, prog in (("assume", assume), ("assert", asserted))
    ]
    results: dict[str, EngineResult] = {}
    try:
        _collect(running, results, budget)
    finally:
        for child in running:
            child.kill()
            child.close()
    return results


def _collect(running: list[Child], results: dict[str, EngineResult], budget: Budget) -> None:
    pending = list(running)
    while pending:
        ready = mpc.wait([child.conn for child in pending], timeout=budget.remaining() + _GRACE_S)
        if not ready:
            return
        for child in [c for c in pending if c.conn in ready]:
            pending.remove(child)
            results[child.name] = _receive(child.conn)
            if results[child.name].status is not Status.SAFE:
                return


def _receive(conn: mpc.Connection) -> EngineResult:
    try:
        message = conn.recv()
    except (EOFError, OSError):
        return unknown(spacer.ENGINE, "spacer process ended without an answer")
    if not isinstance(message, EngineResult):
        return unknown(spacer.ENGINE, f"unexpected answer {type(message).__name__}")
    return message


# ----------------------------------------------------------------------------- the check


def _conj(parts: list[Expr]) -> Expr:
    out = parts[0]
    for p in parts[1:]:
        out = Binary("&&", out, p, INT)
    return out


def _certificate(program: Program, candidates: Mapping[str, Expr], assume: EngineResult,
                 asserted: EngineResult) -> dict[str, Expr]:
    out = {}
    for info in program.loops:
        parts = [r.invariants[info.id] for r in (assume, asserted) if info.id in r.invariants]
        parts += [candidates[info.id]] if info.id in candidates else []
        if parts:
            out[info.id] = _conj(parts)
    return out


def check_many(program: Program, candidates: Mapping[str, Expr], budget: Budget) -> EngineResult:
    """The two-query check of `candidates` (loop id -> candidate) on `program`."""
    watch = Stopwatch()
    refused = refusal(program)
    if refused is not None:
        return unknown(ENGINE, refused)
    missing = sorted(set(candidates) - {info.id for info in program.loops})
    if missing:
        return unknown(ENGINE, f"no loop {', '.join(missing)} in the program", watch.elapsed())
    results = _solve_both(assume_program(program, candidates), assert_program(program, candidates), budget)
    assume, asserted = results.get("assume"), results.get("assert")
    stats = {k: f"{r.status.value}: {r.reason}" for k, r in results.items()}
    if assume is not None and assume.status is Status.UNSAFE and assume.inputs is not None:
        why = f"the error is reachable even with the candidate assumed ({assume.reason})"
        return EngineResult(ENGINE, Status.UNSAFE, why, {}, assume.inputs, watch.elapsed(), stats)
    if asserted is not None and asserted.status is Status.UNSAFE:
        why = "the candidate is not an invariant (assert query failed)"
        return unknown(ENGINE, why, watch.elapsed(), stats)
    if assume is None or asserted is None or not (assume.safe and asserted.safe):
        why = "; ".join(f"{k} query: {r.reason}" for k, r in results.items() if not r.safe) or "timeout"
        return unknown(ENGINE, why, watch.elapsed(), stats)
    certificate = _certificate(program, candidates, assume, asserted)
    checked = inductive.prove_with(program, certificate, Budget.of(max(budget.remaining(), _CHECK_MIN_S)))
    if checked.status is not Status.SAFE:
        why = f"the combined certificate did not check: {checked.reason}"
        return unknown(ENGINE, why, watch.elapsed(), stats)
    reason = "both queries proved by spacer; the combined invariants are inductive"
    return EngineResult(ENGINE, Status.SAFE, reason, certificate, None, watch.elapsed(), stats)


def check(program: Program, loop_id: str, candidate: Expr, budget: Budget) -> EngineResult:
    """The two-query check of one candidate invariant at loop `loop_id`."""
    return check_many(program, {loop_id: candidate}, budget)
