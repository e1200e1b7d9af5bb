"""The acceleration proposer: loop-head candidates from the closed forms of `engines.accelerate`.

A summary says which states the head of a loop sees: in each phase, every variable is a closed form
of the iteration count `k`. One variable of the phase whose form is affine in `k` (the *driver*
`d = d0 + a*k`) stands for `k`; eliminating `k` turns the other forms into relations between
variables (`y == 2*x + 3`, `2*s == i*i - i`), and the driver gets its range (`d0 <= d <= d0 +
a*n`, with the phase's length `n`) and its congruence (`(d - d0) % a == 0`). A loop with one phase
gets these facts one by one and together; a loop with several gets the disjunction of the
phases' conjunctions and each fact guarded by its phase's range (`x < 1000000 || x > 3000000 ||
x == 1000000 + 3*y`). Unknown inputs enter only through variables the loop leaves unchanged.
Only guesses: Houdini and the certificate check decide.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import sympy as sp
from quokka.verifier.engines.accelerate import K, Phase, Summary, summaries
from quokka.verifier.ir import INT, Binary, Expr, IntType, Program, VarDecl
from quokka.verifier.ir.builder import conjunction
from quokka.verifier.ir.printer import c_names, format_expr
from quokka.verifier.verdict.dump import dump_json

from .facts import ExprBuilder, Fact, equation
from .polynomial import Poly
from .protocol import Candidate, LoopContext, ProposalContext

NAME = "accel"
BOUND = "accel-bound"  # the kind of a driver's range facts (not guarded again: they are their own guard)


class AccelProposer:
    """Proposes the phase facts of every loop `accelerate` summarizes (see the module docstring)."""

    name = NAME

    def __init__(self, dump_dir: Path | None = None) -> None:
        self.dump_dir = dump_dir
        self._cache: tuple[Program, dict[str, Summary]] | None = None

    def propose(self, context: ProposalContext) -> list[Candidate]:
        found = self._summaries(context.program)
        out: list[Candidate] = []
        for loop in context.loops:
            summary = found.get(loop.loop.id)
            if summary is not None:
                out += loop_candidates(context.program, loop, summary)
        return out

    def _summaries(self, program: Program) -> dict[str, Summary]:
        if self._cache is None or self._cache[0] is not program:
            self._cache = (program, summaries(program))
            if self.dump_dir is not None:
                dump_json(self.dump_dir / "accel", "summaries.json", summary_json(self._cache[1]))
        return self._cache[1]


def summary_json(found: Mapping[str, Summary]) -> dict[str, object]:
    """`--dump-dir`'s accel/summaries.json: per loop its entry, phases (closed forms) and exit."""
    return {
        loop: {
            "entry": _texts(s.entry),
            "phases": [
                {"path": p.path, "when": [f"{e} {op} 0" for e, op in s.body.paths[p.path].cond],
                 "iterations": p.count, "closed_forms": _texts(p.forms)}
                for p in s.phases
            ],
            "iterations": s.total,
            "exit": _texts(s.exit),
        }
        for loop, s in found.items()
    }  # fmt: skip


def _texts(values: Mapping[str, sp.Expr]) -> dict[str, str]:
    return {v: str(e) for v, e in values.items()}


def loop_candidates(program: Program, loop: LoopContext, summary: Summary) -> list[Candidate]:
    decls = {d.name: d for d in loop.variables if d.name not in summary.body.opaque}
    builder = ExprBuilder({d.name: d for d in program.variables})
    inputs = _inputs(summary, decls)
    per_phase = [_phase_facts(p, summary, decls, inputs) for p in summary.phases]
    if not per_phase or any(f is None for f in per_phase) or not any(facts for facts, _ in per_phase):  # type: ignore[misc]
        return []
    exprs = [[builder.to_expr(f) for f in facts] for facts, _ in per_phase if facts]  # type: ignore[misc]
    names = c_names(program, loop.loop.id)
    return [
        Candidate(loop.loop.id, e, format_expr(e, names, readable=True), NAME)
        for e in _combine(exprs, per_phase, builder)
    ]


def _combine(
    exprs: list[list[Expr]], per_phase: list[tuple[list[Fact], list[Fact]] | None], builder: ExprBuilder
) -> list[Expr]:
    if len(per_phase) == 1:
        return [*exprs[0], conjunction(exprs[0])] if len(exprs[0]) > 1 else exprs[0]
    # a phase without facts allows anything: no disjunction over the phases then
    whole = [_or([conjunction(p) for p in exprs])] if len(exprs) == len(per_phase) else []
    guarded = []
    for phase in per_phase:
        assert phase is not None
        facts, outside = phase
        for f in facts:
            if f.kind == BOUND:
                continue
            guarded.append(_or([*(builder.to_expr(o) for o in outside), builder.to_expr(f)]))
    return [*whole, *guarded]


def _or(parts: list[Expr]) -> Expr:
    out = parts[0]
    for p in parts[1:]:
        out = Binary("||", out, p, INT)
    return out


def _inputs(summary: Summary, decls: Mapping[str, VarDecl]) -> dict[sp.Symbol, sp.Symbol]:
    """Unknown entry symbols a variable the loop leaves unchanged still holds at its head."""
    assigned = {v for p in summary.body.paths for v in p.update} | summary.body.opaque
    return {
        e: sp.Symbol(v)
        for v, e in summary.entry.items()
        if v in decls and v not in assigned and isinstance(e, sp.Symbol)
    }


def _phase_facts(
    phase: Phase, summary: Summary, decls: Mapping[str, VarDecl], inputs: Mapping[sp.Symbol, sp.Symbol]
) -> tuple[list[Fact], list[Fact]] | None:
    """The phase's facts, and the facts that say a state is outside its range (None: no driver)."""
    conditions = [*summary.body.guard, *summary.body.paths[phase.path].cond]
    driver = _driver(phase, decls, {s.name for e, _ in conditions for s in e.free_symbols})
    if driver is None:
        return None
    d, a = driver
    d0 = phase.start[d].subs(inputs)
    k_of = (sp.Symbol(d) - d0) / a
    facts = []
    for v in decls:
        if v != d and v in phase.forms:
            relation = sp.Symbol(v) - phase.forms[v].subs(inputs).subs(K, k_of)
            facts.append(_equation(relation, v))
    lo, hi = sorted([d0, d0 + a * phase.count])
    facts += [_compare(sp.Symbol(d) - lo, ">=", BOUND), _compare(sp.Symbol(d) - hi, "<=", BOUND)]
    outside = [_compare(sp.Symbol(d) - lo, "<"), _compare(sp.Symbol(d) - hi, ">")]
    if abs(a) > 1:
        facts.append(_congruence(sp.Symbol(d) - d0, abs(a)))
    known = [f for f in facts if f is not None]
    return known, [f for f in outside if f is not None]


def _driver(phase: Phase, decls: Mapping[str, VarDecl], tested: set[str]) -> tuple[str, int] | None:
    """A variable whose closed form is `d0 + a*k` with a constant `a != 0`: one the loop's
    conditions test first, then the smallest |a|."""
    options = []
    for v, f in phase.forms.items():
        if v in decls and isinstance(decls[v].type, IntType) and f.is_polynomial(K):
            poly = sp.Poly(f, K)
            if poly.degree() == 1 and poly.coeff_monomial(K).is_Integer:
                a = int(poly.coeff_monomial(K))
                options.append((v not in tested, abs(a), v, a))
    if not options:
        return None
    *_, v, a = min(options)
    return v, a


def _poly(e: sp.Expr) -> Poly | None:
    """`e` times its denominators as a facts polynomial over program variables, or None when it
    keeps an unknown input or `k`, or is not a polynomial."""
    e = sp.together(sp.expand(e))
    numer, _ = sp.fraction(e)
    numer = sp.expand(numer)
    names = sorted(s.name for s in numer.free_symbols)
    if any("@" in n for n in names) or not numer.is_polynomial():
        return None
    if not names:
        return (((), int(numer)),) if numer != 0 else ()
    terms = sp.Poly(numer, *[sp.Symbol(n) for n in names]).terms()
    if not all(c.is_Integer for _, c in terms):
        return None
    return tuple(
        (tuple((n, int(x)) for n, x in zip(names, exps, strict=True) if x), int(c)) for exps, c in terms
    )


def _equation(relation: sp.Expr, solved: str) -> Fact | None:
    """`relation == 0` as a fact (the denominators cleared, the sign kept positive on `solved`)."""
    numer, denom = sp.fraction(sp.together(sp.expand(relation)))
    if denom.is_number and denom < 0:
        numer = -numer
    poly = _poly(numer)
    if not poly:
        return None
    lead = [c for m, c in poly if m == ((solved, 1),)]
    return equation(poly, solved if lead else None, NAME)


def _compare(e: sp.Expr, op: str, kind: str = NAME) -> Fact | None:
    poly = _poly(e)
    if poly is None:
        return None
    const = -sum(c for m, c in poly if not m)
    lhs = tuple((m, c) for m, c in poly if m)
    return Fact(lhs, op, (((), const),) if const else (), kind) if lhs else None


def _congruence(e: sp.Expr, modulus: int) -> Fact | None:
    poly = _poly(e)
    return None if not poly else Fact(poly, "==", (), NAME, modulus)
