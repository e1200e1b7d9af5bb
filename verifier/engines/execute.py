"""Programs that read no input, decided by running them once.

A program without a single `Havoc` (no nondet call, no uninitialised local) has exactly one
execution. When that execution, compiled by gcc with the replay harness and the undefined-
behaviour sanitizer, ends without reaching the error and without undefined behaviour, no
execution reaches the error: the program is SAFE, with the run as its proof (`stats["executed"]`).
This decides in a second what an unrolling or an invariant search cannot: `x = 0; while (x <
100000000) { x += x < 10000000 ? 1 : 2; }` has 55 million iterations and a disjunctive invariant.

The portfolio checks such an answer by building the program again at another optimisation level
and running it afresh (`confirm`): the same end, or no verdict. The proof needs the program's own
data model (no note from the build), no heap (out-of-bounds heap accesses would need AddressSanitizer,
which does not run under a memory limit), and a run that ends (a loop that never ends runs into
its time limit: UNKNOWN). A run that reaches the error is answered UNSAFE with no inputs (also
from a build without the program's data model: a candidate only), and replayed like any
counterexample (past the interpreter's step limit, by the sanitized compiled run: `checks`).
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from quokka.verifier.exec.replay import CompiledProgram, ReplayResult, compile_c

from ..ir import HEAP, Havoc, Program, walk_stmts
from ..properties import NO_OVERFLOW
from .base import Budget, EngineResult, Status, Stopwatch, unknown

ENGINE = "execute"
RUN_SHARE, MAX_RUN_S = 0.5, 20.0  # of the budget, for the one run
SANITIZE = ("-fsanitize=undefined", "-fno-sanitize-recover=all")
RECHECK_FLAGS = ("-O1",)  # the confirming build: other code for the same program
UB_MARK = "runtime error: "
Finished = subprocess.CompletedProcess[str]


def check(program: Program, budget: Budget) -> EngineResult:
    """SAFE (the one execution ends without error or undefined behaviour), UNSAFE, or UNKNOWN."""
    watch = Stopwatch()
    refused = refusal(program)
    if refused is not None:
        return unknown(ENGINE, refused, watch.elapsed())
    outcome = _run_once(program, budget, ())
    if outcome.status is Status.UNKNOWN:
        return unknown(ENGINE, outcome.reason, watch.elapsed())
    return EngineResult(ENGINE, outcome.status, outcome.reason, inputs=(), time_s=watch.elapsed(),
                        stats={"executed": True} if outcome.status is Status.SAFE else {})  # fmt: skip


def confirm(program: Program, budget: Budget) -> EngineResult:
    """The check of a SAFE answer of `check`: built again (`RECHECK_FLAGS`) and run afresh."""
    if refusal(program) is not None:
        return unknown(ENGINE, "not a program that one run decides")
    return _run_once(program, budget, RECHECK_FLAGS)


def refusal(program: Program) -> str | None:
    """Why one run cannot decide `program`, or None."""
    if program.property_name == NO_OVERFLOW:  # its sanitizer reports every undefined behaviour as the error
        return "no-overflow is decided by the other engines"
    if any(isinstance(s, Havoc) for s in walk_stmts(program.body)):
        return "the program reads input (or an uninitialised local): it has more than one execution"
    if any(d.kind == HEAP for d in program.variables):
        return "the program uses the heap (out-of-bounds accesses there need AddressSanitizer)"
    source = Path(program.file)
    if source.suffix not in (".c", ".i") or not source.is_file():
        return "no C file to compile"
    return None


def _run_once(program: Program, budget: Budget, flags: tuple[str, ...]) -> EngineResult:
    with tempfile.TemporaryDirectory(prefix="quokka-execute-") as tmp:
        built = compile_c(
            Path(program.file), program.data_model, Path(tmp),
            property_name=program.property_name, extra_flags=(*SANITIZE, *flags),
        )  # fmt: skip
        if isinstance(built, ReplayResult):
            return unknown(ENGINE, f"cannot build the program: {built.detail}")
        limit = min(MAX_RUN_S, RUN_SHARE * budget.remaining())
        judged = _judge(built, built.execute((), timeout_s=max(0.1, limit)), limit)
        if built.note and judged.status is not Status.UNSAFE:  # an error reached is a candidate still
            return unknown(ENGINE, f"the build does not have the program's data model{built.note}")
        return judged


def _judge(built: CompiledProgram, done: Finished | None, limit: float) -> EngineResult:
    if done is None:
        return unknown(ENGINE, f"the one execution ran longer than {limit:.1f} s")
    if built.reached(done):
        return EngineResult(ENGINE, Status.UNSAFE, f"the one execution reached {built.error}", inputs=())
    if UB_MARK in done.stderr:
        line = next(x for x in done.stderr.splitlines() if UB_MARK in x)
        return unknown(ENGINE, f"the one execution has undefined behaviour: {line.strip()}")
    if done.returncode < 0 and done.returncode != -6:  # SIGABRT: abort(), a failed assumption
        return unknown(ENGINE, f"the one execution was killed by signal {-done.returncode}")
    why = "the one execution (the program reads no input) ends without error or undefined behaviour"
    return EngineResult(ENGINE, Status.SAFE, why)
