"""Hand-made results in the `quokka verify --json` wire format, for the bundled examples."""

from __future__ import annotations

from pathlib import Path

from quokka.server.model import STATUS_OK, Outcome
from quokka.verifier.verdict.results import (
    CandidateReport,
    Counterexample,
    Diagnostic,
    EngineRun,
    InputValue,
    ProvenInvariant,
    Result,
    Verdict,
)
from shared_data import BENCHMARKS

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
LINEAR = (EXAMPLES / "linear.c").read_text()
SUM_BUG = (EXAMPLES / "sum_bug.c").read_text()
COHENCU = (EXAMPLES / "cohencu.c").read_text()


def cohencu_program(folder: Path) -> Path:
    """`quokka-dev/cohencu_1.c` (with its task file) copied into `folder`; else the bundled linear.c."""
    source = BENCHMARKS / "quokka-dev" / "cohencu_1.c"
    if not source.exists():
        source = EXAMPLES / "linear.c"
    target = folder / source.name
    target.write_text(source.read_text())
    if source.with_suffix(".yml").exists():
        target.with_suffix(".yml").write_text(source.with_suffix(".yml").read_text())
    return target


def linear_true(path: str = "/tmp/linear.c") -> Outcome:
    result = Result(
        Verdict.TRUE, "invariants proven", path, 0.81,
        invariants=(
            ProvenInvariant("L9", 9, 5, "i <= n", "houdini", "dynamic"),
            ProvenInvariant("L9", 9, 5, "s == 2*i", "houdini", "llm"),
        ),
        engines=(EngineRun("houdini", "true", 0.42, ""), EngineRun("bmc", "unknown", 0.8, "cancelled")),
        candidates=(
            CandidateReport("L9", "i <= n", "dynamic", "proven"),
            CandidateReport("L9", "s == 2*i", "llm", "proven"),
            CandidateReport("L9", "s == i", "dynamic", "rejected", "not inductive"),
            CandidateReport("L9", "s <= i", "llm", "rejected", "not inductive"),
            CandidateReport("L9", "i < n", "dynamic", "rejected", "does not hold initially"),
        ),
        decided_by="houdini",
    )
    return Outcome(result, path, STATUS_OK)


def sum_bug_false(path: str = "/tmp/sum_bug.c") -> Outcome:
    cex = Counterexample(
        inputs=(InputValue("__VERIFIER_nondet_uint", 6, 86),),
        error_line=3, error_column=49,
        path_lines=(6, 7, 8, 9, 10, 9, 10, 9, 12, 3),
        loop_heads=(("L9", 0, (("i", 0), ("sum", 0))), ("L9", 1, (("i", 1), ("nd.1", 86), ("sum", 3)))),
        confirmed_by=("interpreter", "gcc"),
    )
    result = Result(Verdict.FALSE, "reach_error() is reachable", path, 0.3, counterexample=cex,
                    decided_by="bmc")
    return Outcome(result, path, STATUS_OK)


def unknown(reason: str, path: str = "/tmp/linear.c", cause: Diagnostic | None = None) -> Outcome:
    return Outcome(Result(Verdict.UNKNOWN, reason, path, 20.0, cause=cause), path, STATUS_OK)


def cohencu_true(path: str = "/tmp/cohencu.c") -> Outcome:
    conjuncts = ("z == 6*n + 6", "y == 3*n*n + 3*n + 1", "x == n*n*n")
    result = Result(
        Verdict.TRUE, "invariants proven", path, 1.2,
        invariants=tuple(ProvenInvariant("L32", 32, 5, c, "houdini", "dynamic") for c in conjuncts),
        decided_by="houdini",
    )
    return Outcome(result, path, STATUS_OK)
