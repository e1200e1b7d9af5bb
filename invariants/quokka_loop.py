"""The Quokka loop: propose candidates, keep the inductive ones (Houdini), then the two-query check.

Proposers only suggest; every answer that leaves here as SAFE is re-checked by the portfolio.
Counterexamples to induction go back to the proposers for the next round. A proposer that fails
(an unreachable endpoint, a model that cannot load) is reported once per failure: on standard
error (a logging warning), as a rejected candidate, and in the reason of an UNKNOWN answer.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from quokka.verifier.engines import algebra, houdini, inductive, kinduction, twoquery
from quokka.verifier.engines.base import Budget, EngineResult, Status, Stopwatch, unknown
from quokka.verifier.errors import QuokkaError
from quokka.verifier.ir import ArrayType, Expr, Program
from quokka.verifier.ir.builder import conjunction
from quokka.verifier.options import Options
from quokka.verifier.verdict.dump import dump_json
from quokka.verifier.verdict.portfolio import Strategy
from quokka.verifier.verdict.results import CandidateReport

from . import arrays
from .protocol import Candidate, ProposalContext, Proposer, loop_contexts

ROUNDS = 3
QUICK_SHARE = 0.3  # of the budget, for a first Houdini on the `arrays` proposer's candidates alone
TWO_QUERY_LIMIT = 6
KIND_SHARE = 0.3  # of the time left: k-induction strengthened with what Houdini kept
KIND_MAX_K = 16
NOT_PROVED = "no proposed candidate proved the property"

_log = logging.getLogger(__name__)


@dataclass
class CandidatePool:
    """Candidates per loop, deduplicated by their IR expression, in arrival order. A candidate's
    first proposer is its `proposer`; `also` names the others that proposed the same expression."""

    by_loop: dict[str, dict[Expr, Candidate]] = field(default_factory=dict)
    also: dict[tuple[str, Expr], list[str]] = field(default_factory=dict)
    rejected: list[Candidate] = field(default_factory=list)
    failures: list[tuple[str, str]] = field(default_factory=list)  # (proposer, message), each once

    def note_failure(self, proposer: str, message: str) -> list[Candidate]:
        """The rejected candidate standing for a proposer's failure, reported on standard error;
        nothing when the proposer already failed so (an unreachable endpoint fails every round)."""
        if (proposer, message) in self.failures:
            return []
        self.failures.append((proposer, message))
        _log.warning("quokka: the %s proposer failed: %s", proposer, message)
        return [_failed(proposer, message)]

    def unknown_reason(self) -> str:
        """Why no candidate proved the property, with the proposers' failures."""
        failed = "; ".join(f"the {name} proposer failed: {message}" for name, message in self.failures)
        return f"{NOT_PROVED} ({failed})" if failed else NOT_PROVED

    def add(self, candidates: Sequence[Candidate]) -> int:
        added = 0
        for c in candidates:
            if c.rejected:
                self.rejected.append(c)
                continue
            slot = self.by_loop.setdefault(c.loop_id, {})
            if c.expr not in slot:
                slot[c.expr] = c
                added += 1
            else:
                self._second(slot[c.expr], c)
        return added

    def _second(self, first: Candidate, again: Candidate) -> None:
        others = self.also.setdefault((first.loop_id, first.expr), [])
        if again.proposer != first.proposer and again.proposer not in others:
            others.append(again.proposer)

    def also_proposed_by(self, loop_id: str, e: Expr) -> tuple[str, ...]:
        return tuple(self.also.get((loop_id, e), ()))

    def exprs(self) -> dict[str, list[Expr]]:
        return {loop: list(cands) for loop, cands in self.by_loop.items()}

    def source_of(self, loop_id: str, e: Expr) -> Candidate | None:
        return self.by_loop.get(loop_id, {}).get(e)


class QuokkaLoop:
    """A portfolio strategy: rounds of proposing and Houdini, then two-query on the leftovers."""

    def __init__(self, proposers: Sequence[Proposer], options: Options, source: str | None) -> None:
        self.proposers = list(proposers)
        self.options = options
        self.source = source

    def run(self, program: Program, budget: Budget) -> EngineResult:
        watch, pool = Stopwatch(), CandidatePool()
        ctis: dict[str, tuple[Mapping[str, int], ...]] = {}
        last: houdini.HoudiniResult | None = None
        tried: dict[str, list[Expr]] = {}  # the equalities algebra was last given
        quick = self._quick(program, pool, budget)
        if quick is not None and quick.result.status is Status.SAFE:
            return self._finish(quick.result, pool, quick, watch)
        for round_no in range(ROUNDS):
            context = ProposalContext(
                program,
                self.source,
                loop_contexts(program),
                ctis,
                budget.remaining(),
                self.options.seed + round_no,
            )
            if not pool.add(self._propose(context, pool, budget)) and last is not None:
                break
            equalities = algebra.equalities_of(pool.exprs())
            algebraic = self._algebra(program, equalities, budget) if equalities != tried else None
            tried = equalities  # the same candidates fail the same way
            if algebraic is not None:
                return self._finish(algebraic, pool, last, watch)
            last = houdini.houdini(program, pool.exprs(), budget.fraction(0.5))
            self._dump(round_no, pool, last)
            if last.result.status is Status.SAFE:
                return self._finish(last.result, pool, last, watch)
            ctis = _merge_ctis(ctis, last.ctis)
            if budget.expired:
                break
        strengthened = self._k_induction(program, last, budget)
        if strengthened is not None:
            return self._finish(strengthened, pool, last, watch)
        return self._two_query(program, pool, last, budget, watch)

    def _k_induction(
        self, program: Program, last: houdini.HoudiniResult | None, budget: Budget
    ) -> EngineResult | None:
        """With `kind` among the engines: k-induction assuming the invariants Houdini proved
        (`kinduction`); SAFE, or None."""
        if "kind" not in self.options.engines or last is None or not last.complete:
            return None
        aux = {loop: conjunction(kept) for loop, kept in last.kept.items() if kept}
        if not aux:
            return None  # the plain `kind` engine tries that
        dump = None if self.options.dump_dir is None else self.options.dump_dir / "kinduction-houdini"
        with budget.recorder.timed("k-induction (Houdini's invariants)") as call:
            result = kinduction.check_program(program, budget.fraction(KIND_SHARE), aux,
                                              max_k=KIND_MAX_K, dump_dir=dump)  # fmt: skip
            call.answer = result.status.value
        return result if result.status is Status.SAFE else None

    def _quick(self, program: Program, pool: CandidatePool, budget: Budget) -> houdini.HoudiniResult | None:
        """For a program with arrays: Houdini on the `arrays` proposer's candidates (quantified
        cells, the counters' bounds) before any proposer that runs the program, which takes
        seconds on loops over 100,000 cells. The candidates stay in the pool for the rounds."""
        cheap = [p for p in self.proposers if p.name == arrays.NAME]
        if not cheap or not any(isinstance(v.type, ArrayType) for v in program.variables):
            return None
        loops = loop_contexts(program)
        context = ProposalContext(program, self.source, loops, {}, budget.remaining(), self.options.seed)
        if not pool.add(self._propose(context, pool, budget, cheap)):
            return None
        found = houdini.houdini(program, pool.exprs(), budget.fraction(QUICK_SHARE))
        self._dump("quick", pool, found)
        return found

    def _algebra(
        self, program: Program, equalities: dict[str, list[Expr]], budget: Budget
    ) -> EngineResult | None:
        """The proof by algebra (`algebra`) with the pool's equalities, where some are nonlinear
        (Z3's integers give up on those): SAFE, or None."""
        if "algebra" not in self.options.engines or not algebra.nonlinear_equalities(equalities):
            return None
        with budget.recorder.timed("algebra (proposed equalities)") as call:
            result = algebra.check(program, budget.fraction(0.3), equalities)
            call.answer = result.status.value
        return result if result.status is Status.SAFE else None

    def _dump(self, round_no: int | str, pool: CandidatePool, last: houdini.HoudiniResult) -> None:
        """`--dump-dir`'s proposals/roundK.json: every candidate so far, who proposed it, and
        what Houdini made of it in this round (`roundquick.json`: the first Houdini, on the
        `arrays` proposer's candidates alone)."""
        if self.options.dump_dir is None:
            return
        dropped = {(d.loop, d.expr): d for d in last.dropped}
        rows = []
        for loop, candidates in pool.by_loop.items():
            for e, c in candidates.items():
                why = dropped.get((loop, e))
                status = "kept" if why is None else f"dropped ({why.obligation})"
                rows.append(
                    {
                        "loop": loop,
                        "invariant": c.text,
                        "proposer": c.proposer,
                        "also_proposed_by": list(pool.also_proposed_by(loop, e)),
                        "houdini": status,
                        "reason": "" if why is None else why.reason,
                    }
                )
        rejected = [
            {"proposer": c.proposer, "text": c.raw or c.text, "reason": c.rejected} for c in pool.rejected
        ]
        payload = {
            "round": round_no,
            "proved": last.result.status is Status.SAFE,
            "candidates": rows,
            "rejected": rejected,
        }
        dump_json(self.options.dump_dir / "proposals", f"round{round_no}.json", payload)

    def _propose(
        self, context: ProposalContext, pool: CandidatePool, budget: Budget, only: Sequence[Proposer] = ()
    ) -> list[Candidate]:
        out: list[Candidate] = []
        for proposer in only or self.proposers:
            with budget.recorder.timed(f"propose ({proposer.name})") as call:
                try:
                    out.extend(proposer.propose(context))
                except QuokkaError as exc:
                    call.answer = "failed"
                    out.extend(pool.note_failure(proposer.name, str(exc)))
        return out

    def _two_query(
        self,
        program: Program,
        pool: CandidatePool,
        last: houdini.HoudiniResult | None,
        budget: Budget,
        watch: Stopwatch,
    ) -> EngineResult:
        kept = dict(last.kept) if last else {}
        for loop_id, candidate in _two_query_order(pool, kept)[:TWO_QUERY_LIMIT]:
            if budget.expired:
                break
            result = twoquery.check(
                program, loop_id, _with_kept(candidate.expr, kept.get(loop_id, ())), budget.fraction(0.5)
            )
            if result.status is Status.SAFE:
                return self._finish(result, pool, last, watch)
        stats = {"candidates": _reports(pool, last, None)}
        return unknown("quokka", pool.unknown_reason(), watch.elapsed(), stats)

    def _finish(
        self, result: EngineResult, pool: CandidatePool, last: houdini.HoudiniResult | None, watch: Stopwatch
    ) -> EngineResult:
        stats = dict(result.stats)
        stats["candidates"] = _reports(pool, last, result)
        stats["sources"] = _sources(pool)
        return EngineResult(
            result.engine, result.status, result.reason, result.invariants, None, watch.elapsed(), stats
        )


def _failed(name: str, message: str) -> Candidate:
    from quokka.verifier.ir.builder import num

    return Candidate("", num(1), "", name, rejected=f"proposer failed: {message}")


def _merge_ctis(
    old: Mapping[str, tuple[Mapping[str, int], ...]], new: Mapping[str, Sequence[Mapping[str, int]]]
) -> dict[str, tuple[Mapping[str, int], ...]]:
    merged = dict(old)
    for loop, states in new.items():
        merged[loop] = (*merged.get(loop, ()), *states)
    return merged


def _with_kept(candidate: Expr, kept: Sequence[Expr]) -> Expr:
    from quokka.verifier.ir.builder import and_

    out = candidate
    for k in kept:
        out = and_(out, k)
    return out


def _two_query_order(pool: CandidatePool, kept: Mapping[str, Sequence[Expr]]) -> list[tuple[str, Candidate]]:
    """Non-inductive candidates, those from models and annotations first (they are the expensive guesses)."""
    rank = {"annotation": 0, "llm": 1, "completion": 2}
    leftovers = [
        (loop, c)
        for loop, cands in pool.by_loop.items()
        for e, c in cands.items()
        if e not in kept.get(loop, ())
    ]
    return sorted(leftovers, key=lambda lc: rank.get(lc[1].proposer, 3))


def _sources(pool: CandidatePool) -> dict[tuple[str, Expr], str]:
    """(loop id, candidate expression) -> the proposer that suggested it."""
    return {(loop, e): c.proposer for loop, cands in pool.by_loop.items() for e, c in cands.items()}


def _reports(
    pool: CandidatePool, last: houdini.HoudiniResult | None, final: EngineResult | None
) -> list[CandidateReport]:
    kept = dict(last.kept) if last else {}
    dropped = dict(last.reasons) if last else {}
    out = []
    for loop, cands in pool.by_loop.items():
        for e, c in cands.items():
            proven = e in kept.get(loop, ())
            status = "proven" if proven else "rejected" if (loop, e) in dropped else "unused"
            also = pool.also_proposed_by(loop, e)
            out.append(CandidateReport(loop, c.text, c.proposer, status, dropped.get((loop, e), ""), also))
    out.extend(
        CandidateReport(c.loop_id, c.text or (c.raw or "")[:200], c.proposer, "rejected", c.rejected or "")
        for c in pool.rejected
    )
    return out


def user_invariant_strategy(parsed: Mapping[str, Expr]) -> Strategy:
    """Check user-given invariants (already parsed, per loop): inductive first, then the two-query check."""

    def strategy(program: Program, budget: Budget) -> EngineResult:
        obligations = inductive.check(program, parsed, budget.fraction(0.3))
        if obligations.all_valid:
            return EngineResult(
                "user",
                Status.SAFE,
                "the given invariants are inductive and imply safety",
                parsed,
                time_s=0.0,
                stats={"sources": {}},
            )
        result = twoquery.check_many(program, parsed, budget)
        why = obligations.summary()
        if result.status is Status.SAFE:
            return EngineResult(
                "user", Status.SAFE, f"two-query check proved them ({why})", result.invariants
            )
        return unknown("user", f"{why}; two-query: {result.reason}")

    return strategy
