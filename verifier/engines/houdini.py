"""Houdini: the largest inductive subset of candidate invariants, then safety.

One incremental solver per edge of the cutpoint graph holds the edge formula and the candidates
at the source guarded by assumption literals; a query adds the negation of its goals (target
candidates) only, so hard candidates it does not ask about cannot slow it down. A query asks for
a model where the kept source candidates hold and some goal fails; every goal false in that
model is dropped at once. Every query
has a time cap (`QUERY_CAP_S`), so one hard nonlinear query cannot eat the whole budget. When
the batched query is `unknown`, the goals are split in halves, cheap (low-degree) ones first,
down to single candidates; an `unknown` on a single candidate drops it. Edges out of a loop
whose candidates shrank are queued again, until nothing changes. The type-range facts of
`encode.range_facts` join every pool (and are left out of the certificate: `inductive` adds
them again).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import z3
from quokka.verifier.ir.builder import conjunction

from ..encode import ENTRY, ERROR, Edge, Encoding, encode, instantiate, range_facts
from ..ir import Binary, Expr, Forall, IntType, Program, Var, children, free_vars, operands, refusal, walk
from . import inductive
from .base import Budget, EngineResult, Status, Stopwatch, unknown
from .inductive import Cti, case_query, cti_of, describe, is_state_set

ENGINE = "houdini"
QUERY_CAP_S = 2.0  # seconds one batched solver query may take before its goals are split
SINGLE_CAP_S = 1.0  # seconds a query about one candidate may take before the candidate is dropped
# a query about quantified candidates (`ir.Forall`, asked apart): a false one mostly makes Z3
# answer unknown rather than find its counterexample, so it costs the whole cap
QUANTIFIED_CAP_S = 0.5
LAZY_ROUNDS = 4  # queries of one check, each with the instances the last model violated added
SETS_SHARE = 0.6  # of the time left, for checking the state sets of the pool alone (see `_state_sets_alone`)
POOL_SET_MAX = 400  # a wider set of states is only checked alone: in the joint fixpoint it slows every query


@dataclass(frozen=True)
class Dropped:
    """A candidate that is not part of the inductive subset, and why."""

    loop: str
    expr: Expr
    obligation: str  # "initiation" | "consecution" | "unknown" | "malformed"
    reason: str
    cti: Cti | None = None


@dataclass(frozen=True)
class HoudiniResult:
    """The inductive subset and what became of it.

    `kept`: loop -> the candidates of the largest inductive subset (pool order); proven inductive
    when `complete`, otherwise what survived until the budget ran out. `dropped` / `reasons`:
    the others, with the obligation that failed. `ctis`: loop -> pre-states (C names) of the
    consecution counterexamples at that loop's head; `reachable`: loop -> states at the loop's
    head that really occur (from failed initiations). `result` is SAFE when the kept invariants
    imply every assertion (certificate: their conjunction per loop).
    """

    kept: Mapping[str, tuple[Expr, ...]]
    dropped: tuple[Dropped, ...]
    result: EngineResult
    complete: bool = True
    ctis: Mapping[str, tuple[Mapping[str, int], ...]] = field(default_factory=dict)
    reachable: Mapping[str, tuple[Mapping[str, int], ...]] = field(default_factory=dict)

    @property
    def reasons(self) -> dict[tuple[str, Expr], str]:
        return {(d.loop, d.expr): d.reason for d in self.dropped}


class _EdgeSolver:
    """The incremental solver of one edge, with literals for source and target candidates.

    A quantified target's negation is skolemised (`encode.instantiate`), so that a model says
    whether it fails (Z3 cannot evaluate a quantifier in a model): one query drops every failing
    target at once. Quantified sources are instantiated by E-matching only, on the array reads
    the translator gives as patterns (model-based instantiation mostly spends the whole cap on a
    false candidate), and lazily: a model of an `unknown` answer (for want of instances) drops a
    target only where every assumed quantified source holds at the target's index terms; the
    instances it violates are added (each implied by its source) and the query asked again, up
    to `LAZY_ROUNDS` times. A target is only dropped on such a model, so `unsat` stays exact and
    a drop is at worst incomplete."""

    def __init__(
        self, enc: Encoding, edge: Edge, pool: Mapping[str, Sequence[Expr]], pre: dict[Expr, z3.BoolRef]
    ) -> None:
        """`pre`: the candidates' formulas in the pre-state, shared by the edges (one environment)."""
        self.enc, self.edge = enc, edge
        self.solver = z3.Solver()
        self.solver.add(edge.guard)
        self.pre: dict[Expr, z3.BoolRef] = {}
        self.post: dict[Expr, z3.BoolRef] = {}  # negated targets, added only to the queries asking for them
        self.foralls: dict[Expr, list[z3.QuantifierRef]] = {}  # source candidate -> its quantified conjuncts
        self.terms: dict[Expr, list[z3.ArithRef]] = {}  # quantified target -> index terms of its negation
        self.failed: list[Expr] = []  # the targets the last model shows failing
        self.formulas: dict[Expr, z3.BoolRef] = {}  # source candidate -> its formula
        self.guard_terms = instantiate.flat_terms(instantiate.index_terms([edge.guard]))
        self.quantified = any(quantified(c) for c in [*pool.get(edge.src, ()), *pool.get(edge.dst, ())])
        if self.quantified:
            self.solver.set("smt.mbqi", False)
        if edge.src != ENTRY:
            tr = enc.translator(edge, "pre")
            for i, c in enumerate(pool.get(edge.src, ())):
                self.pre[c] = z3.Bool(f"pre!{i}")
                f = pre[c] if c in pre else pre.setdefault(c, tr.formula(c))
                self.formulas[c] = f
                self.solver.add(z3.Implies(self.pre[c], f))
                if quantified(c):
                    self.foralls[c] = instantiate.top_foralls(f)
        if edge.dst != ERROR:
            self._targets(pool.get(edge.dst, ()))

    def _targets(self, goals: Sequence[Expr]) -> None:
        tr = self.enc.translator(self.edge, "post")
        skolem = instantiate.Instantiator(f"g{len(self.enc.edges)}")
        walked: set[int] = set()  # the post-state's terms, common to the targets: walked once
        shared = instantiate.flat_terms(instantiate.index_terms(self.edge.post.values(), seen=walked))
        for c in goals:
            negated = z3.Not(tr.formula(c))
            self.post[c] = skolem.skolemised(negated) if quantified(c) else negated
            if quantified(c):
                own = instantiate.index_terms([self.post[c]], seen=set(walked))
                self.terms[c] = instantiate.flat_terms(own) + shared

    def check(
        self,
        assumed: Sequence[Expr],
        goals: Sequence[Expr],
        budget: Budget,
        cap_s: float | None = None,
        case: Expr | None = None,
    ) -> tuple[z3.CheckSatResult, z3.ModelRef | None, str]:
        """Can the assumed source candidates (and `case`) hold while some goal (target candidate)
        fails? A model comes back only with a failing goal (in `failed`)."""
        for _ in range(LAZY_ROUNDS):
            if budget.expired:
                return z3.unknown, None, "budget exhausted"
            result, model, why = self._ask(assumed, goals, budget, cap_s)
            if result == z3.unknown and len(goals) == 1 and self.quantified:
                result = self._instantiated(assumed, goals[0], budget, cap_s) or result
            if model is None or result == z3.unsat:
                return result, None, why
            self.failed = [g for g in goals if z3.is_true(model.eval(self.post[g], model_completion=True))]
            terms = [t for g in self.failed for t in self.terms.get(g, ())] + self.guard_terms
            lemmas = self._violated(model, assumed, terms) if result != z3.sat else []
            if not lemmas:
                shown = self.failed or self.edge.dst == ERROR
                return (result, model, why) if shown else (z3.unknown, None, why)
            self.solver.add(*lemmas)
        return z3.unknown, None, "instances still missing"

    def _ask(
        self, assumed: Sequence[Expr], goals: Sequence[Expr], budget: Budget, cap_s: float | None
    ) -> tuple[z3.CheckSatResult, z3.ModelRef | None, str]:
        self.solver.set("timeout", budget.z3_timeout_ms(cap_s))
        self.solver.push()
        if self.edge.dst != ERROR:
            self.solver.add(z3.Or([self.post[g] for g in goals]))
        with budget.recorder.timed(f"houdini {self.edge.kind}") as call:
            result = self.solver.check(*[self.pre[a] for a in assumed])
            call.answer = str(result)
        model = self.solver.model() if result == z3.sat else self._candidate_model(result)
        why = self.solver.reason_unknown() if result == z3.unknown else ""
        self.solver.pop()
        return result, model, why

    def _instantiated(
        self, assumed: Sequence[Expr], goal: Expr, budget: Budget, cap_s: float | None
    ) -> z3.CheckSatResult | None:
        """unsat when the query about one goal is unsat with every quantified source instantiated
        at all the index terms at once (`instantiate`, in a fresh solver); else None."""
        query = [self.edge.guard, *(self.formulas[a] for a in assumed), self.post[goal]]
        weaker = instantiate.instantiate(query)
        if weaker is None or budget.expired:
            return None
        solver = z3.Solver()
        solver.set("timeout", budget.z3_timeout_ms(cap_s))
        solver.add(*weaker.assertions)
        with budget.recorder.timed(f"houdini {self.edge.kind}, instantiated") as call:
            result = solver.check()
            call.answer = str(result)
        return z3.unsat if result == z3.unsat else None

    def _violated(
        self, model: z3.ModelRef, assumed: Sequence[Expr], terms: Sequence[z3.ArithRef]
    ) -> list[z3.BoolRef]:
        """The instances of the assumed quantified sources at `terms` (the failing targets' and
        the edge's index terms) that `model` violates, each implied by its source's literal."""
        unique = list({t.get_id(): t for t in terms}.values())
        out = []
        for a in assumed:
            for q in self.foralls.get(a, ()):
                for inst in instantiate.violated(q, unique, model):
                    out.append(z3.Implies(self.pre[a], inst))
        return out

    def _candidate_model(self, result: z3.CheckSatResult) -> z3.ModelRef | None:
        """The model an `unknown` answer left (only where quantifiers made it incomplete)."""
        if result != z3.unknown or not self.quantified or "quantifiers" not in self.solver.reason_unknown():
            return None
        try:
            return self.solver.model()
        except z3.Z3Exception:
            return None

    def failing(self, model: z3.ModelRef, goals: Sequence[Expr]) -> list[Expr]:
        return [g for g in self.failed if g in goals]


class _Houdini:
    def __init__(self, program: Program, pool: Mapping[str, Sequence[Expr]], budget: Budget) -> None:
        self.program, self.budget = program, budget
        self.enc = encode(program)
        self.dropped: list[Dropped] = []
        self.ctis: dict[str, list[Mapping[str, int]]] = {}
        self.reachable: dict[str, list[Mapping[str, int]]] = {}
        self.facts = list(range_facts(program))
        self.kept = {info.id: self._clean(info.id, pool.get(info.id, ())) for info in program.loops}
        pre: dict[Expr, z3.BoolRef] = {}
        self.solvers = {id(e): _EdgeSolver(self.enc, e, self.kept, pre) for e in self.enc.edges}
        self.complete = True

    def _clean(self, loop: str, candidates: Sequence[Expr]) -> list[Expr]:
        names = {v.name for v in self.program.variables}
        out: list[Expr] = []
        for c in [*candidates, *self.facts]:
            if c in out:
                continue
            bad = sorted(free_vars(c) - names)
            if is_state_set(c) and len(operands(c, "||")) > POOL_SET_MAX:
                why = f"a set of more than {POOL_SET_MAX} states is checked only on its own"
                self.dropped.append(Dropped(loop, c, "unknown", why))
            elif bad or not isinstance(c.type, IntType):
                why = f"unknown variables {', '.join(bad)}" if bad else "not an integer expression"
                self.dropped.append(Dropped(loop, c, "malformed", why))
            else:
                out.append(c)
        return out

    def fixpoint(self) -> None:
        queue = deque(e for e in self.enc.edges if e.dst != ERROR)
        while queue:
            edge = queue.popleft()
            if self._refine(edge):
                again = (e for e in self.enc.edges if e.src == edge.dst and e.dst != ERROR)
                queue.extend(e for e in again if e not in queue)
            if self.budget.expired:
                self.complete = False
                return

    def _refine(self, edge: Edge) -> bool:
        """Drop the target candidates that fail along `edge`; True when any was dropped."""
        changed = False
        while self.kept[edge.dst]:
            goals = sorted(self.kept[edge.dst], key=degree)
            result, dropped = self._split(edge, goals)
            changed = changed or dropped
            if result == z3.unsat or not dropped:
                return changed
        return changed

    def _split(self, edge: Edge, goals: Sequence[Expr]) -> tuple[z3.CheckSatResult, bool]:
        """Check `goals` along `edge`, halving them on `unknown`; (unsat when all hold, anything dropped).
        Quantified goals are asked about apart from the others, with a shorter cap."""
        plain = [g for g in goals if not quantified(g)]
        if plain and len(plain) < len(goals):
            return self._halves(edge, plain, [g for g in goals if quantified(g)])
        solver = self.solvers[id(edge)]
        cap = SINGLE_CAP_S if len(goals) == 1 else QUERY_CAP_S
        result, model, why = solver.check(self.kept.get(edge.src, []), goals, self.budget,
                                          cap if plain else min(cap, QUANTIFIED_CAP_S))  # fmt: skip
        if self.budget.expired:
            return z3.unknown, False
        if model is not None:
            failing = solver.failing(model, goals)
            if failing:
                self._drop(edge, failing, cti_of(self.enc, edge, model))
                return z3.sat, True
            result = z3.unknown
        if result == z3.unsat:
            return z3.unsat, False
        if len(goals) == 1:
            reason = f"{describe(self.enc, edge)} unknown ({why or 'no failing candidate in the model'})"
            self._remove(Dropped(edge.dst, goals[0], "unknown", reason))
            return z3.unknown, True
        half = (len(goals) + 1) // 2
        return self._halves(edge, goals[:half], goals[half:])

    def _halves(
        self, edge: Edge, first: Sequence[Expr], rest: Sequence[Expr]
    ) -> tuple[z3.CheckSatResult, bool]:
        result, dropped_first = self._split(edge, first)
        rest = [g for g in rest if g in self.kept[edge.dst]]
        second, dropped_second = self._split(edge, rest) if rest else (z3.unsat, False)
        both = z3.unsat if result == second == z3.unsat else z3.unknown
        return both, dropped_first or dropped_second

    def _drop(self, edge: Edge, goals: Sequence[Expr], cti: Cti) -> None:
        if edge.src == ENTRY:
            self.reachable.setdefault(edge.dst, []).append(cti.post)
        else:
            self.ctis.setdefault(edge.src, []).append(cti.pre)
        reason = describe(self.enc, edge, cti)
        for goal in goals:
            self._remove(Dropped(edge.dst, goal, edge.kind, reason, cti))

    def _remove(self, d: Dropped) -> None:
        self.kept[d.loop].remove(d.expr)
        self.dropped.append(d)

    def safety(self) -> EngineResult | None:
        """None when the kept invariants imply every assertion, else the UNKNOWN result."""
        for edge in (e for e in self.enc.edges if e.dst == ERROR):
            result, model, why = self._safety_query(edge)
            if result == z3.sat and model is not None:
                return unknown(
                    ENGINE,
                    "the inductive candidates do not imply safety: "
                    + describe(self.enc, edge, cti_of(self.enc, edge, model)),
                )
            if result != z3.unsat:
                return unknown(ENGINE, f"{describe(self.enc, edge)} unknown ({why})")
        return None

    def _safety_query(self, edge: Edge) -> tuple[z3.CheckSatResult, z3.ModelRef | None, str]:
        """Safety from the kept candidates. A set of states among them (`inductive.is_state_set`)
        is tried first on its own, one disjunct at a time, in fresh solvers (see `inductive`): each
        case fixes the state, which an incremental solver full of nonlinear candidates cannot exploit."""
        solver, kept = self.solvers[id(edge)], self.kept.get(edge.src, [])
        wide = next((c for c in kept if is_state_set(c)), None)
        if wide is not None:
            alone = {edge.src: [wide, *self.facts]}
            cap = self.budget.sub(max(QUERY_CAP_S, SETS_SHARE * self.budget.remaining()))
            result, _, _ = case_query(self.enc, edge, alone, cap)
            if result == z3.unsat:
                return result, None, ""
        return solver.check(kept, [], self.budget)

    def certificate(self) -> dict[str, Expr]:
        out = {}
        for loop, kept in self.kept.items():
            parts = [c for c in kept if c not in self.facts]
            if parts:
                out[loop] = conjunction(parts)
        return out


def quantified(e: Expr) -> bool:
    return any(isinstance(n, Forall) for n in walk(e))


def degree(e: Expr) -> int:
    """The largest number of variables multiplied together in `e` (a cheap measure of difficulty)."""
    if isinstance(e, Binary):
        left, right = degree(e.left), degree(e.right)
        return left + right if e.op == "*" else max(left, right)
    if isinstance(e, Var):
        return 1
    return max((degree(c) for c in children(e)), default=0)


def _state_sets_alone(
    program: Program, pool: Mapping[str, Sequence[Expr]], budget: Budget, watch: Stopwatch
) -> HoudiniResult | None:
    """The sets of states in the pool (`inductive.is_state_set`), first one per loop, checked on
    their own when every loop has one: when they are exact they make the whole certificate,
    found in a fraction of the time the full pool takes (whose nonlinear candidates slow every
    query)."""
    sets = {}
    for loop, candidates in pool.items():
        wide = next((c for c in candidates if is_state_set(c)), None)
        if wide is not None:
            sets[loop] = wide
    if not sets or len(sets) < len(program.loops):
        return None
    cap = budget.sub(max(QUERY_CAP_S, SETS_SHARE * budget.remaining()))
    if not inductive.check(program, sets, cap).all_valid:
        return None
    reason = f"the sets of reachable states proposed for {len(sets)} loop(s) are inductive and imply safety"
    result = EngineResult(ENGINE, Status.SAFE, reason, sets, None, watch.elapsed(), {"kept": len(sets)})
    kept = {info.id: (sets[info.id],) if info.id in sets else () for info in program.loops}
    return HoudiniResult(kept=kept, dropped=(), result=result)


def houdini(program: Program, pool: Mapping[str, Sequence[Expr]], budget: Budget) -> HoudiniResult:
    """The largest inductive subset of `pool` (loop id -> candidates), and SAFE if it implies safety."""
    watch = Stopwatch()
    refused = refusal(program)
    if refused is not None:
        return HoudiniResult(kept={}, dropped=(), result=unknown(ENGINE, refused), complete=False)
    quick = _state_sets_alone(program, pool, budget, watch)
    if quick is not None:
        return quick
    h = _Houdini(program, pool, budget)
    h.fixpoint()
    stats = {"kept": sum(len(k) for k in h.kept.values()), "dropped": len(h.dropped)}
    if not h.complete:
        why = "budget exhausted before the inductive subset was found"
        result = unknown(ENGINE, why, watch.elapsed(), stats)
    else:
        failed = h.safety()
        if failed is None:
            reason = f"{stats['kept']} inductive candidates imply every assertion"
            result = EngineResult(ENGINE, Status.SAFE, reason, h.certificate(), None, watch.elapsed(), stats)
        else:
            result = unknown(ENGINE, failed.reason, watch.elapsed(), stats)
    return HoudiniResult(
        kept={loop: tuple(k) for loop, k in h.kept.items()},
        dropped=tuple(h.dropped),
        result=result,
        complete=h.complete,
        ctis={loop: tuple(s) for loop, s in h.ctis.items()},
        reachable={loop: tuple(s) for loop, s in h.reachable.items()},
    )
