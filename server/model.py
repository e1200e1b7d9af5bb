"""The server's view of one verification run: an `Outcome` (cached as JSON) and its per-loop reports."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from quokka.verifier.verdict.results import CandidateReport, Diagnostic, ProvenInvariant, Result, Verdict

STATUS_OK = "ok"  # the verifier answered with a Result
STATUS_ERROR = "error"  # bad input: `Outcome.diagnostic` says what and where
STATUS_FAILED = "failed"  # the verifier crashed, printed no JSON or ran past the wall-clock limit
STATUS_SKIPPED = "skipped"  # not run: the text is no program to verify (no `main`)

PROPOSER_LABELS = {
    "dynamic": "traces",
    "llm": "model sample",
    "model": "model sample",
    "annotation": "annotation",
    "annotations": "annotation",
    "spacer": "Spacer",
    "user": "your --invariant",
}


def proposer_label(source: str) -> str:
    return PROPOSER_LABELS.get(source.lower(), source or "engine")


@dataclass(frozen=True)
class Outcome:
    """What one verification run produced for one program text."""

    result: Result
    input_path: str  # the file the verifier read: locations in its messages name this path
    status: str = STATUS_OK
    from_cache: bool = False
    diagnostic: Diagnostic | None = None  # of bad input (STATUS_ERROR): what the verifier printed

    @property
    def verdict(self) -> Verdict:
        return self.result.verdict

    @property
    def cause(self) -> Diagnostic | None:
        """What made the run unknown or refused, with its place: the bad input, the unsupported feature."""
        return self.diagnostic or self.result.cause

    def to_json(self) -> dict[str, Any]:
        data = {"status": self.status, "input_path": self.input_path, "result": self.result.to_json()}
        return data if self.diagnostic is None else {**data, "diagnostic": self.diagnostic.to_json()}

    @staticmethod
    def from_json(data: dict[str, Any], from_cache: bool = False) -> Outcome:
        diagnostic = Diagnostic.from_json(data["diagnostic"]) if data.get("diagnostic") else None
        return Outcome(Result.from_json(data["result"]), data["input_path"], data["status"], from_cache,
                       diagnostic)


def failed(reason: str, input_path: str, time_s: float = 0.0, status: str = STATUS_FAILED) -> Outcome:
    return Outcome(Result(Verdict.UNKNOWN, reason, input_path, time_s), input_path, status)


def bad_input(diagnostic: Diagnostic, input_path: str) -> Outcome:
    """The outcome of a run that verified nothing: `diagnostic` says why."""
    result = Result(Verdict.UNKNOWN, diagnostic.reason, input_path)
    return Outcome(result, input_path, STATUS_ERROR, diagnostic=diagnostic)


@dataclass(frozen=True)
class LoopReport:
    """One loop: where its keyword is, the proven conjuncts, every candidate tried there."""

    loop: str
    line: int
    column: int  # 0 when only the line is known
    invariants: tuple[ProvenInvariant, ...]
    candidates: tuple[CandidateReport, ...]

    @property
    def conjuncts(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(inv.expr for inv in self.invariants))

    @property
    def rejected(self) -> tuple[CandidateReport, ...]:
        return tuple(c for c in self.candidates if c.status == "rejected")


def loop_reports(result: Result) -> tuple[LoopReport, ...]:
    """The loops the result speaks of, located by their proven invariants or by an `L<line>` id."""
    places: dict[str, tuple[int, int]] = {}
    for inv in result.invariants:
        places.setdefault(inv.loop, (inv.line, inv.column))
    for cand in result.candidates:
        if cand.loop not in places and (line := _line_of_id(cand.loop)) is not None:
            places[cand.loop] = (line, 0)
    return tuple(
        LoopReport(
            loop, line, column,
            tuple(i for i in result.invariants if i.loop == loop),
            tuple(c for c in result.candidates if c.loop == loop),
        )
        for loop, (line, column) in sorted(places.items(), key=lambda kv: kv[1])
    )


def _line_of_id(loop: str) -> int | None:
    match = re.fullmatch(r"L(\d+)", loop)
    return int(match.group(1)) if match else None


def loop_line(result: Result, loop: str) -> int | None:
    """The keyword line of `loop` as far as the result tells."""
    return next((r.line for r in loop_reports(result) if r.loop == loop), None)
