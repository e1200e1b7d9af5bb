"""Model answers -> candidates: find `After line X, insert assume(COND);`, parse COND with the C parser.

A regular expression only finds the `After line X, insert assume(` prefix; a small scanner finds
the matching `)` (skipping quoted text, bounding length and nesting), and the expression between
goes to the frontend's `parse_invariant`, which rejects side effects, calls and unknown names.
Every segment that cannot become a candidate is kept as a rejected candidate with its reason.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from quokka.verifier.errors import LocatedError, QuokkaError
from quokka.verifier.frontend import parse_invariant
from quokka.verifier.ir import Const, Expr, IntType, LoopInfo, Program, conjuncts
from quokka.verifier.ir.builder import num
from quokka.verifier.ir.printer import format_expr_c_names

from ..protocol import Candidate

PROPOSER = "llm"
MAX_ANSWER_CHARS = 8000
MAX_EXPR_CHARS = 600
MAX_DEPTH = 40
RAW_EXCERPT = 200

_PREFIX = re.compile(r"after\s+line\s+(\d{1,9})\s*[,:]?\s*insert\s+assume\s*\(", re.IGNORECASE)
_COT_BLOCK = re.compile(r"/\*@(.*?)@\*/", re.DOTALL)


@dataclass(frozen=True)
class Segment:
    """One `After line X, insert assume(...)` occurrence; `problem` is set when it is unusable."""

    line: int
    expr_text: str
    raw: str
    problem: str | None = None


@dataclass(frozen=True)
class Scan:
    """The segments of one answer, or the reason the whole answer is unusable."""

    segments: tuple[Segment, ...]
    problem: str | None = None


def _closing_paren(text: str, start: int, stop: int) -> int | str:
    """Index of the `)` closing the `(` just before `start`, or why there is none before `stop`."""
    depth, i = 1, start
    while i < stop:
        if i - start > MAX_EXPR_CHARS:
            return f"expression longer than {MAX_EXPR_CHARS} characters"
        ch = text[i]
        if ch in "'\"":
            i = _skip_quoted(text, i, stop)
            continue
        if ch == "(":
            depth += 1
            if depth > MAX_DEPTH:
                return f"parentheses nested deeper than {MAX_DEPTH}"
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return "unbalanced parentheses"


def _skip_quoted(text: str, i: int, stop: int) -> int:
    quote, i = text[i], i + 1
    while i < stop and text[i] != quote:
        i += 2 if text[i] == "\\" else 1
    return i + 1


def _regions(answer: str) -> list[str]:
    """The `/*@ ... @*/` blocks of a chain-of-thought answer, else the whole answer."""
    blocks = _COT_BLOCK.findall(answer)
    return blocks if blocks else [answer]


def _scan_region(text: str) -> list[Segment]:
    matches = list(_PREFIX.finditer(text))
    out = []
    for k, m in enumerate(matches):
        stop = matches[k + 1].start() if k + 1 < len(matches) else len(text)
        end = _closing_paren(text, m.end(), stop)
        line = int(m.group(1))
        if isinstance(end, str):
            raw = text[m.start() : min(stop, m.start() + RAW_EXCERPT)]
            out.append(Segment(line, "", raw, end))
        else:
            out.append(Segment(line, text[m.end() : end], text[m.start() : end + 1]))
    return out


def scan_answer(answer: str) -> Scan:
    """Find the invariant segments of one model answer (never raises)."""
    if len(answer) > MAX_ANSWER_CHARS:
        return Scan((), f"answer too long ({len(answer)} characters > {MAX_ANSWER_CHARS})")
    segments = [s for region in _regions(answer) for s in _scan_region(region)]
    if not segments:
        return Scan((), "no 'After line X, insert assume(COND);' in the answer")
    return Scan(tuple(segments))


def _loop_after(program: Program, line: int) -> LoopInfo | None:
    return next((info for info in program.loops if info.insert_after_line == line), None)


def _rejected(loop_id: str, raw: str, sample: int, reason: str) -> Candidate:
    return Candidate(loop_id, num(1), "", PROPOSER, sample, raw[:RAW_EXCERPT], reason)


def _parse(text: str, program: Program, loop_id: str) -> Expr | str:
    """The IR of `text` at the head of `loop_id`, or the reason it is not an integer expression."""
    try:
        expr = parse_invariant(text, program, loop_id)
    except LocatedError as exc:
        return exc.message
    except QuokkaError as exc:
        return str(exc)
    except RecursionError:
        return "expression too deeply nested"
    if not isinstance(expr.type, IntType):
        return f"not an integer expression (type {expr.type})"
    return expr


def segment_candidates(segment: Segment, program: Program, sample: int) -> list[Candidate]:
    """The candidates of one segment: one per top-level conjunct, or one rejection."""
    if segment.problem:
        return [_rejected("", segment.raw, sample, segment.problem)]
    info = _loop_after(program, segment.line)
    if info is None:
        points = ", ".join(str(i.insert_after_line) for i in program.loops) or "none"
        reason = f"line {segment.line} is not an insertion point (insertion points: {points})"
        return [_rejected("", segment.raw, sample, reason)]
    expr = _parse(segment.expr_text, program, info.id)
    if isinstance(expr, str):
        return [_rejected(info.id, segment.raw, sample, expr)]
    parts = [e for e in conjuncts(expr) if not (isinstance(e, Const) and e.value != 0)]
    if not parts:
        return [_rejected(info.id, segment.raw, sample, "trivially true")]
    text = [format_expr_c_names(e, program, info.id) for e in parts]
    return [Candidate(info.id, e, t, PROPOSER, sample, segment.raw) for e, t in zip(parts, text, strict=True)]


def answer_candidates(answer: str, program: Program, sample: int) -> list[Candidate]:
    """Every candidate and every rejection of one answer."""
    scan = scan_answer(answer)
    if scan.problem:
        return [_rejected("", answer[:RAW_EXCERPT], sample, scan.problem)]
    return [c for seg in scan.segments for c in segment_candidates(seg, program, sample)]


def parse_answers(answers: Sequence[str], program: Program) -> list[Candidate]:
    """The candidates of all answers, sample index = position in `answers`."""
    return [c for i, a in enumerate(answers) for c in answer_candidates(a, program, i)]
