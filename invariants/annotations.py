"""Invariants the user wrote: ACSL `/*@ loop invariant E; */` comments and `--invariant LINE:EXPR`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from quokka.verifier.errors import InputError
from quokka.verifier.frontend import find_acsl_invariants, parse_invariant
from quokka.verifier.ir import Expr, LoopInfo, Program
from quokka.verifier.ir.builder import and_, num
from quokka.verifier.verdict.claims import Claim
from quokka.verifier.verdict.results import ProvenInvariant

from .protocol import Candidate, ProposalContext


def loop_at_line(program: Program, line: int) -> LoopInfo | None:
    """The loop whose keyword is on `line`, or whose invariant is inserted after `line`."""
    for info in program.loops:
        if line in (info.coord.line, info.insert_after_line):
            return info
    return None


def parse_user_invariants(program: Program, invariants: Sequence[tuple[int, str]]) -> Mapping[str, Expr]:
    """`(line, expression)` pairs as one conjunction per loop; raises `InputError` on a bad one."""
    out: dict[str, Expr] = {}
    for line, text in invariants:
        info = loop_at_line(program, line)
        if info is None:
            where = _loop_lines(program)
            raise InputError(None, f"--invariant {line}:{text}: no loop on line {line} ({where})")
        expr = parse_invariant(text, program, info.id)
        out[info.id] = and_(out[info.id], expr) if info.id in out else expr
    return out


def user_claims(program: Program, source: str | None, invariants: Sequence[tuple[int, str]],
                witness: Sequence[tuple[int, str]] = ()) -> list[Claim]:
    """The claims to check: the ACSL loop invariants in `source` that parse, the `--invariant`s,
    then the loop invariants of a correctness witness (raises `InputError` on a bad one)."""
    out = []
    for line, text in find_acsl_invariants(source or ""):
        info = _loop_below(program, line)
        if info is not None:
            try:
                out.append(Claim(info.id, parse_invariant(text, program, info.id), text, line))
            except InputError:
                continue  # reported as a rejected candidate by the annotation proposer
    for source_name, given in (("option", invariants), ("witness", witness)):
        for line, text in given:
            info = loop_at_line(program, line)
            if info is None:
                what = "--invariant" if source_name == "option" else "witness invariant"
                where = _loop_lines(program)
                raise InputError(None, f"{what} {line}:{text}: no loop on line {line} ({where})")
            out.append(Claim(info.id, parse_invariant(text, program, info.id), text, line, 0, source_name))
    return out


def certificate_exprs(program: Program, invariants: Sequence[ProvenInvariant]) -> dict[str, list[Expr]]:
    """A certificate's conjuncts back in the IR (each was printed from it, so each parses)."""
    out: dict[str, list[Expr]] = {}
    for inv in invariants:
        try:
            out.setdefault(inv.loop, []).append(parse_invariant(inv.expr, program, inv.loop))
        except InputError:
            continue  # a conjunct that does not parse back only weakens the support
    return out


def _loop_lines(program: Program) -> str:
    """The lines `loop_at_line` looks up, for a message: `LINE must be a loop's line: 12, 31`."""
    if not program.loops:
        return "the program has no loops"
    shown = []
    for info in sorted(program.loops, key=lambda i: (i.coord.line, i.coord.column)):
        after = info.insert_after_line
        shown.append(f"{info.coord.line}" + (f" (or {after})" if after != info.coord.line else ""))
    return f"LINE must be a loop's line: {', '.join(dict.fromkeys(shown))}"


class AnnotationProposer:
    """Proposes the ACSL loop invariants written in the source, each as a candidate."""

    name = "annotation"

    def propose(self, context: ProposalContext) -> list[Candidate]:
        if context.source is None:
            return []
        out = []
        for line, text in find_acsl_invariants(context.source):
            info = _loop_below(context.program, line)
            if info is None:
                continue
            try:
                expr = parse_invariant(text, context.program, info.id)
            except InputError as exc:
                out.append(Candidate(info.id, num(1), text, self.name, raw=text, rejected=str(exc)))
                continue
            out.append(Candidate(info.id, expr, text, self.name, raw=text))
        return out


def _loop_below(program: Program, line: int) -> LoopInfo | None:
    below = [info for info in program.loops if info.coord.line > line]
    return min(below, key=lambda info: info.coord.line) if below else None
