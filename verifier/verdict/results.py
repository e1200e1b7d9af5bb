"""Verdicts and what backs them: frozen results with one JSON wire format (`Result.to_json`), the
`Diagnostic` that `quokka verify --json` prints instead for bad input, and the one reader of that
output (`read_verify_output`)."""

from __future__ import annotations

import enum
import json
from dataclasses import asdict, dataclass, field
from typing import Any

from quokka.verifier.errors import (
    Coord,
    InputError,
    LocatedError,
    MalformedRecord,
    QuokkaError,
    ToolMissing,
    UnsupportedFeature,
    decoded,
)
from quokka.verifier.infra.profile import Timing
from quokka.verifier.ir import DOUBLE, FLOAT, fpsem

FLOAT_INPUTS = {"__VERIFIER_nondet_float": FLOAT, "__VERIFIER_nondet_double": DOUBLE}


class Verdict(enum.Enum):
    TRUE = "true"  # the error location is unreachable: a checked certificate backs it
    FALSE = "false"  # reachable: a replayed counterexample backs it
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class ProvenInvariant:
    """One conjunct of a checked certificate, at a loop head."""

    loop: str
    line: int
    column: int
    expr: str  # C expression over the program's C names
    proved_by: str  # engine that found it (the certificate is always re-checked inductively)
    source: str = ""  # proposer that suggested it ("dynamic", "llm", "annotation", "spacer", ...)
    # it speaks of the heap model (object numbers, field arrays: `frontend.memory`), whose
    # values are not C's addresses: shown, but never written into a witness
    model_only: bool = False


@dataclass(frozen=True)
class InputValue:
    origin: str  # e.g. "__VERIFIER_nondet_int", "uninitialised"
    line: int
    value: int  # of __VERIFIER_nondet_float/double: the IEEE encoding (`fpsem`)

    @property
    def text(self) -> str:
        """The value as people read it: a float input as the float (`1.5`, `-inf`, `nan (bits ...)`)."""
        ty = FLOAT_INPUTS.get(self.origin)
        return str(self.value) if ty is None else fpsem.describe(self.value, ty)


@dataclass(frozen=True)
class Counterexample:
    inputs: tuple[InputValue, ...]
    error_line: int
    error_column: int
    path_lines: tuple[int, ...]
    loop_heads: tuple[tuple[str, int, tuple[tuple[str, int], ...]], ...]  # (loop, iteration, C state)
    confirmed_by: tuple[str, ...]  # "interpreter", "gcc"
    # "file:line:col name" of each uninitialised local whose arbitrary value the path reads (only
    # under the nondet reading: under strict such a path is no counterexample)
    uninitialised_reads: tuple[str, ...] = ()
    replay_notes: tuple[str, ...] = ()  # why a replay did not confirm it (e.g. gcc unavailable)
    error_state: tuple[tuple[str, int], ...] = ()  # the C variables' values at the failing assertion


@dataclass(frozen=True)
class EngineRun:
    engine: str
    status: str
    time_s: float
    reason: str


@dataclass(frozen=True)
class CandidateReport:
    """One candidate invariant and what became of it. `proposer` proposed it first; the others
    that proposed the same expression are in `also_proposed_by`, in the order they did."""

    loop: str
    expr: str
    proposer: str
    status: str  # "proven" | "rejected" | "unused"
    reason: str = ""
    also_proposed_by: tuple[str, ...] = ()

    @property
    def proposers(self) -> tuple[str, ...]:
        return (self.proposer, *self.also_proposed_by)


@dataclass(frozen=True)
class ClaimReport:
    """What became of a user's claim about a loop (an ACSL `loop invariant`, `--invariant`).

    `status`: "valid" (part of an inductive set: holds at every reachable head state), "refuted"
    (`state` is a reachable head state where it is false, reached with `inputs`) or "unknown"
    (`state`, if any, is a counterexample to induction, which need not be reachable).
    """

    loop: str
    line: int  # where the claim is written
    column: int
    expr: str
    source: str  # "annotation" | "option" | "witness"
    status: str
    reason: str
    state: tuple[tuple[str, int], ...] = ()
    inputs: tuple[int, ...] = ()

    def detail(self) -> str:
        """The reason, with the state that backs it."""
        state = ", ".join(f"{name} = {value}" for name, value in self.state)
        if not state or self.status == "valid":
            return self.reason
        where = "at the loop head with" if self.status == "refuted" else "e.g."
        return f"{self.reason}; {where} {state}"


@dataclass(frozen=True)
class Result:
    verdict: Verdict
    reason: str
    file: str
    time_s: float = 0.0
    invariants: tuple[ProvenInvariant, ...] = ()
    counterexample: Counterexample | None = None
    engines: tuple[EngineRun, ...] = ()
    candidates: tuple[CandidateReport, ...] = ()
    overflow_sites: tuple[str, ...] = ()
    decided_by: str = ""
    claims: tuple[ClaimReport, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)
    profile: tuple[Timing, ...] = ()  # where the time went (`profile`)
    peak_rss_mb: tuple[tuple[str, float], ...] = ()  # each strategy process's peak memory
    cause: Diagnostic | None = None  # of an UNKNOWN: the unsupported feature, where it is (line 0: unknown)

    @property
    def conclusive(self) -> bool:
        return self.verdict is not Verdict.UNKNOWN

    def to_json(self) -> dict[str, Any]:
        """The wire format of CLI `--json`, the batch store, the LSP worker and BenchExec."""
        data = asdict(self)
        data["verdict"] = self.verdict.value
        data["time_s"] = round(self.time_s, 3)
        return data

    @staticmethod
    def from_json(data: dict[str, Any]) -> Result:
        cex = data.get("counterexample")
        return Result(
            verdict=Verdict(data["verdict"]),
            reason=data["reason"],
            file=data["file"],
            time_s=data.get("time_s", 0.0),
            invariants=tuple(ProvenInvariant(**i) for i in data.get("invariants", ())),
            counterexample=_cex_from_json(cex) if cex else None,
            engines=tuple(EngineRun(**e) for e in data.get("engines", ())),
            candidates=tuple(_candidate_from_json(c) for c in data.get("candidates", ())),
            overflow_sites=tuple(data.get("overflow_sites", ())),
            decided_by=data.get("decided_by", ""),
            claims=tuple(_claim_from_json(c) for c in data.get("claims", ())),
            extra=dict(data.get("extra", {})),
            profile=tuple(_timing_from_json(t) for t in data.get("profile", ())),
            peak_rss_mb=tuple((name, mb) for name, mb in data.get("peak_rss_mb", ())),
            cause=Diagnostic.from_json(data["cause"]) if data.get("cause") else None,
        )


def _candidate_from_json(data: dict[str, Any]) -> CandidateReport:
    return CandidateReport(**{**data, "also_proposed_by": tuple(data.get("also_proposed_by", ()))})


def _timing_from_json(data: dict[str, Any]) -> Timing:
    return Timing(**{**data, "answers": tuple((a, n) for a, n in data.get("answers", ()))})


def _claim_from_json(data: dict[str, Any]) -> ClaimReport:
    state = tuple((name, value) for name, value in data.get("state", ()))
    return ClaimReport(**{**data, "state": state, "inputs": tuple(data.get("inputs", ()))})


def _cex_from_json(data: dict[str, Any]) -> Counterexample:
    return Counterexample(
        inputs=tuple(InputValue(**i) for i in data["inputs"]),
        error_line=data["error_line"],
        error_column=data["error_column"],
        path_lines=tuple(data["path_lines"]),
        loop_heads=tuple(
            (loop, it, tuple((n, v) for n, v in state)) for loop, it, state in data["loop_heads"]
        ),
        confirmed_by=tuple(data["confirmed_by"]),
        uninitialised_reads=tuple(data.get("uninitialised_reads", ())),
        replay_notes=tuple(data.get("replay_notes", ())),
        error_state=tuple((name, value) for name, value in data.get("error_state", ())),
    )


# ----------------------------------------------------------------------------- bad input

ERROR_STATUS = "error"  # the `status` that marks the JSON of a `Diagnostic`
PARSE_ERROR, UNSUPPORTED_FEATURE, TOOL_MISSING, BAD_INPUT = (
    "parse error", "unsupported feature", "tool missing", "bad input")


@dataclass(frozen=True)
class Diagnostic:
    """Why `quokka verify` verified nothing (exit code 2): the input is bad, unreadable or unsupported."""

    file: str  # the file the position is in; the input, when there is no position
    line: int  # 1-based; 0 when the error has no position
    column: int  # 0 when unknown
    kind: str  # PARSE_ERROR, UNSUPPORTED_FEATURE, TOOL_MISSING or BAD_INPUT
    message: str  # without the position

    @property
    def reason(self) -> str:
        """`file:line:col: message`, as Quokka's located errors are rendered."""
        return f"{Coord(self.file, self.line, self.column)}: {self.message}" if self.line else self.message

    @staticmethod
    def of_error(exc: QuokkaError, input_file: str) -> Diagnostic:
        """The diagnostic of `exc`, raised on `input_file`; its `reason` is `str(exc)`."""
        if isinstance(exc, LocatedError) and exc.coord is not None and exc.coord.line:
            where = exc.coord
            return Diagnostic(where.file, where.line, where.column, _kind(exc), exc.message)
        return Diagnostic(input_file, 0, 0, _kind(exc), str(exc))

    def to_json(self) -> dict[str, Any]:
        """`verdict`, `status` and `reason` tell it from a `Result` (and keep older readers reading)."""
        return {"verdict": Verdict.UNKNOWN.value, "status": ERROR_STATUS, "reason": self.reason,
                **asdict(self)}

    @staticmethod
    def from_json(data: dict[str, Any]) -> Diagnostic:
        return Diagnostic(str(data["file"]), int(data["line"]), int(data["column"]), str(data["kind"]),
                          str(data["message"]))


def _kind(exc: QuokkaError) -> str:
    if isinstance(exc, UnsupportedFeature):
        return UNSUPPORTED_FEATURE
    if isinstance(exc, ToolMissing):
        return TOOL_MISSING
    if isinstance(exc, InputError) and "parse error: " in str(exc):  # the frontend's wording
        return PARSE_ERROR
    return BAD_INPUT


# ----------------------------------------------------------------------------- reading the output


class UnreadableOutput(ValueError):
    """`quokka verify --json` printed a JSON object with a verdict that is no Result or Diagnostic."""


def read_verify_output(stdout: str) -> Result | Diagnostic | None:
    """What `quokka verify --json` printed on `stdout` (the Diagnostic of bad input, else a Result);
    None when it printed no JSON object with a verdict. Raises `UnreadableOutput` when the object
    does not fit either."""
    data = verify_json_object(stdout)
    if data is None:
        return None
    decode = Diagnostic.from_json if data.get("status") == ERROR_STATUS else Result.from_json
    try:
        return decoded(lambda: decode(data), "malformed verify --json output")
    except MalformedRecord as exc:
        raise UnreadableOutput(str(exc)) from None


def verify_json_object(stdout: str) -> dict[str, Any] | None:
    """The JSON object with a verdict in `stdout`: the whole text, else its last line that is one."""
    candidates = [stdout.strip(), *(line for line in reversed(stdout.splitlines()) if line.startswith("{"))]
    for text in candidates:
        try:
            data = json.loads(text)
        except ValueError:
            continue
        if isinstance(data, dict) and "verdict" in data:
            return data
    return None
