"""Bounded model checking: find a reachable error together with inputs that replay it.

Every loop is unrolled k times into a Z3 formula (`bmc_unroll`; k deepens as `_Session`
describes); a model of "some Assert fails" gives the Havoc values along the path the model
takes, in execution order: `EngineResult.inputs`. Before answering UNSAFE the inputs are
replayed in the concrete interpreter, which must reach that same Assert without signed
overflow (a mismatch would be a bug here; it is answered UNKNOWN, `stats["replay"] ==
"failed"`). BMC never answers SAFE (it has no certificate). When no error is reachable and
no path can run more than k iterations of any loop, the answer is UNKNOWN with
`stats["complete"] = True`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import z3
from quokka.verifier.encode.smt import INTEGERS, Domain
from quokka.verifier.exec.interp import Execution, run

from ..cfg import build_cfg
from ..errors import UnsupportedByEngine, UnsupportedFeature
from ..ir import ArrayType, Assert, Havoc, Program, VarDecl
from .base import Budget, EngineResult, Status, Stopwatch, unknown
from .bmc_unroll import (
    ErrorSite,
    Formula,
    FormulaTooLarge,
    HavocSite,
    OutOfTime,
    Settings,
    Unroller,
    UnsupportedShape,
)

ENGINE = "bmc"
_FRONTIER_SHARE = 0.1  # at most this share of the time left goes to one completeness query
_ONLY_FRONTIER_SHARE = 0.8  # ... when one bound only is asked about
_PREFERENCE_CAP_S = 5.0  # time for a nicer counterexample once one is found
_STEP_SHARE = 0.25  # an incremental query may take this share of the time left ...
_SLOW_S, _SLOW_SHARE = 1.0, 0.1  # ... but if it takes more than this, the session probes
_PROBE_SHARE = 0.3  # a probing query may take this share of the time left
_MIN_PROBE_S = 0.5  # no new probe with less time left


def check(
    program: Program,
    budget: Budget,
    *,
    max_bound: int = 256,
    start_bound: int = 1,
    no_overflow: bool = True,
    max_assertions: int = 400_000,
    solving: str = "incremental",
    domain: Domain = INTEGERS,
    engine: str = ENGINE,
) -> EngineResult:
    """Search for an error within growing unrollings, up to `max_bound` iterations per loop.

    `no_overflow` blocks paths with signed overflow (undefined behaviour, which the replay
    rejects); `max_assertions` caps the size of the formula. A complete unrolling (no path runs
    a loop more often) with no error and no undefined behaviour on any path is answered SAFE,
    with the empty certificate and `stats["complete"]`: where behaviour is defined, the integer
    encoding (with `no_overflow`) and the bit-precise one (`smt_bv.BITS`, `bitblast`) both mean
    what C does. `checks.certificate_result` unrolls such a program again, afresh.
    """
    watch = Stopwatch()
    # SAFE needs every path's behaviour defined: then each encoding means what C does (floats are
    # IEEE terms in both; a float's conversions go through bit-vectors of the integer's width)
    decides = domain is not INTEGERS or no_overflow
    settings = Settings(no_overflow, max_assertions, solving, domain, track_undefined=decides)
    try:
        session = _Session(program, budget, settings, engine)
    except (UnsupportedFeature, UnsupportedShape) as exc:
        return unknown(engine, f"cannot unroll: {exc}", watch.elapsed(), {"bound": 0, "complete": False})
    try:
        return session.run(max(1, start_bound), max_bound, watch)
    except FormulaTooLarge as exc:
        reason = f"formula too large at k={session.bound}: {exc}"
    except OutOfTime:
        reason = f"timeout at k={session.bound}"
    except UnsupportedByEngine as exc:  # met while unrolling (a quantified claim, bit-precisely)
        reason = f"cannot encode at k={session.bound}: {exc}"
    if session.gave_up:
        reason += f" (last query: {session.gave_up})"
    return unknown(engine, reason, watch.elapsed(), session.stats())


def next_bound(k: int) -> int:
    """The deepening schedule: +1 up to 16, then +25%."""
    return k + 1 if k < 16 else k + k // 4


@dataclass(frozen=True)
class _Counterexample:
    error: ErrorSite
    havocs: tuple[HavocSite, ...]
    values: tuple[int, ...]


class _Session:
    """One unroller, deepened until an answer or the budget runs out.

    Bounds first grow by `next_bound` with one incremental solver (what it learns at one bound
    helps at the next, and completeness is detected). Once a query is slow or gives up, the
    session *probes*: the bound doubles, and each bound is unrolled afresh (one-shot, exact
    joins) for a fresh pre-processing solver that gets part of the time left. A query that
    gives up does not stop the search: a deeper unrolling contains every shallower path, and a
    deep bug is often easier to find than the absence of shallow ones is to prove.
    """

    def __init__(self, program: Program, budget: Budget, settings: Settings, engine: str = ENGINE) -> None:
        self.program = program
        self.engine = engine
        self.budget = budget
        self.settings = settings
        self.cfg = build_cfg(program)
        self.fm = Formula(settings, _ticker(budget))
        self.backend: _Backend = _Incremental(self.fm)
        self.probing = False
        self.unroller = Unroller(program, self.fm, cfg=self.cfg)
        self.bound = self.start = 0
        self.checks = 0
        self.gave_up = ""
        self._any_error: z3.BoolRef | None = None

    def stats(self, **more: object) -> dict[str, object]:
        return {"bound": self.bound, "complete": False, "checks": self.checks,
                "assertions": self.fm.count, "probing": self.probing, **more}

    def run(self, start: int, max_bound: int, watch: Stopwatch) -> EngineResult:
        self.bound = self.start = start
        if self.settings.solving == "fresh":
            self._probe()
        else:
            self.unroller.build(start)
        while True:
            verdict = self._verdict(self._search(), max_bound, watch)
            if verdict is not None:
                return verdict
            if self.probing:
                if self.budget.remaining() < _MIN_PROBE_S:
                    raise OutOfTime
                self.bound = min(2 * self.bound, max_bound)
                self._probe()
            else:
                self.bound = min(next_bound(self.bound), max_bound)
                self.unroller.extend(self.bound)

    def _verdict(self, answer: z3.CheckSatResult, max_bound: int, watch: Stopwatch) -> EngineResult | None:
        """The answer after the error query at the current bound, or None to deepen."""
        if answer == z3.sat:
            return self._unsafe(self._preferred_model(), watch)
        if answer == z3.unsat and self._complete(only=self.bound == self.start == max_bound):
            if self.settings.track_undefined:
                return self._defined_everywhere(watch)
            reason = f"bounded: no error within complete unwinding k={self.bound}"
            return unknown(self.engine, reason, watch.elapsed(), self.stats(complete=True))
        if answer == z3.unknown and not self.unroller.loops:
            reason = f"solver gave up on the complete unwinding k={self.bound}: {self.gave_up}"
        elif self.bound < max_bound:
            return None
        elif answer == z3.unknown:
            reason = f"solver gave up at k={self.bound} (max_bound): {self.gave_up}"
        else:
            reason = f"no error within k={self.bound} iterations per loop (max_bound)"
        return unknown(self.engine, reason, watch.elapsed(), self.stats())

    def _defined_everywhere(self, watch: Stopwatch) -> EngineResult:
        """After no error on any path of a complete unrolling: SAFE when no path has undefined
        behaviour either (then every semantics of signed arithmetic agrees with this one)."""
        flags = [site.flag for site in self.unroller.undefined]
        answer = self._check([z3.Or(*flags)], what="undefined-behaviour") if flags else z3.unsat
        stats = self.stats(complete=True)
        if answer == z3.unsat:
            reason = f"no error and no undefined behaviour on any path ({self.settings.domain.name})"
            return EngineResult(self.engine, Status.SAFE, reason, {}, None, watch.elapsed(), stats)
        if answer == z3.unknown:
            reason = f"no error on paths with defined behaviour; solver gave up on the others: {self.gave_up}"
            return unknown(self.engine, reason, watch.elapsed(), stats)
        model = self.backend.model()
        where = next((site.coord for site in self.unroller.undefined
                      if z3.is_true(model.eval(site.flag, model_completion=True))), None)
        reason = f"no error on paths with defined behaviour, but undefined behaviour is possible at {where}"
        return unknown(self.engine, reason, watch.elapsed(), stats)

    def _probe(self) -> None:
        """A one-shot unrolling to the current bound, for a fresh solver."""
        self.probing = True
        self.fm = Formula(self.settings, self.fm.tick)
        self.unroller = Unroller(self.program, self.fm, incremental=False, cfg=self.cfg)
        self.unroller.build(self.bound)
        self.backend = _Fresh(self.fm)
        self._any_error = None

    # --- queries

    def _check(
        self, goal: Sequence[z3.BoolRef], cap_s: float | None = None, what: str = "error"
    ) -> z3.CheckSatResult:
        if self.budget.expired:
            raise OutOfTime
        self.checks += 1
        cut = [z3.Not(lit) for lit in self.unroller.open_literals()]
        mode = "probe" if self.probing else "incremental"
        with self.budget.recorder.timed(f"{self.engine} {what} query ({mode})") as call:
            answer = self.backend.check([*cut, *goal], self.budget.z3_timeout_ms(cap_s))
            call.answer = str(answer)
        if answer == z3.unknown:
            self.gave_up = self.backend.reason_unknown()
        return answer

    def _search(self) -> z3.CheckSatResult:
        """Whether some Assert can fail within the current bound."""
        new = self.unroller.new_errors
        if new:
            lit = self.fm.fresh("err")
            older = [self._any_error] if self._any_error is not None else []
            self.fm.add(z3.Implies(lit, z3.Or(*new, *older)))
            self._any_error = lit
            new.clear()
        if self._any_error is None:
            return z3.unsat
        left = self.budget.remaining()
        share = _PROBE_SHARE if self.probing else _STEP_SHARE
        final = not self.unroller.loops  # no deeper unrolling differs from this one
        started = time.monotonic()
        answer = self._check([self._any_error], None if final else left * share)
        if answer == z3.unknown or time.monotonic() - started > max(_SLOW_S, left * _SLOW_SHARE):
            self.probing = True
        return answer

    def _preferred_model(self) -> z3.ModelRef:
        """The last model, or one where uninitialised locals are 0 if there is one (quickly)."""
        model = self.backend.model()
        if not any(h.stmt.origin == "uninitialised" for h in self.unroller.havocs):
            return model
        try:
            preferred = [self._any_error, self.unroller.zero_uninitialised]
            if self._check(preferred, _PREFERENCE_CAP_S, what="preferred-model") == z3.sat:
                return self.backend.model()
        except OutOfTime:
            pass
        return model

    def _complete(self, only: bool) -> bool:
        """Whether no path can run more than `bound` iterations of a loop. When it is the `only`
        bound asked about (a certificate's, unrolled again), the query may take most of the time
        left."""
        frontiers = self.unroller.frontiers()
        if not frontiers:
            return True
        if any(z3.is_true(f) for f in frontiers):
            return False
        lit = self.fm.fresh("frontier")
        self.fm.add(z3.Implies(lit, z3.Or(*frontiers)))
        cap = max(0.5, self.budget.remaining() * (_ONLY_FRONTIER_SHARE if only else _FRONTIER_SHARE))
        return bool(self._check([lit], cap, what="completeness") == z3.unsat)

    # --- counterexamples

    def _extract(self, model: z3.ModelRef) -> _Counterexample | None:
        def holds(f: z3.BoolRef) -> bool:
            return bool(z3.is_true(model.eval(f, model_completion=True)))

        error = min((e for e in self.unroller.errors if holds(e.flag)), key=lambda e: e.key, default=None)
        if error is None:
            return None
        taken = sorted((h for h in self.unroller.havocs if h.key < error.key and holds(h.guard)),
                       key=lambda h: h.key)
        domain = self.settings.domain
        values = tuple(domain.value(model.eval(h.value, model_completion=True), h.type) for h in taken)
        return _Counterexample(error, tuple(taken), values)

    def _unsafe(self, model: z3.ModelRef, watch: Stopwatch) -> EngineResult:
        cex = self._extract(model)
        if cex is None:
            return unknown(self.engine, f"internal: a model at k={self.bound} fails no assertion",
                           watch.elapsed(), self.stats(replay="failed"))
        stmt = cex.error.stmt
        execution = run(self.program, _answers(cex))
        failure = _replay_failure(execution, stmt)
        if failure:
            stats = self.stats(replay="failed", model_inputs=cex.values)
            return unknown(self.engine, f"internal: the counterexample at k={self.bound} {failure}",
                           watch.elapsed(), stats)
        trace = [(h.coord, h.origin, v) for h, v in zip(execution.havocs, execution.inputs_used, strict=True)]
        where = stmt.site or stmt.coord
        reason = f"error reachable within k={self.bound} (assertion at {where})"
        stats = self.stats(error_coord=stmt.coord, error_site=stmt.site, trace=trace, replay="error")
        return EngineResult(self.engine, Status.UNSAFE, reason, inputs=execution.inputs_used,
                            time_s=watch.elapsed(), stats=stats)


def _answers(cex: _Counterexample) -> Callable[[VarDecl, Havoc], int]:
    """Inputs for the interpreter: the model's values in order (a float's: its IEEE encoding);
    array elements their fill value."""
    pairs = list(zip(cex.havocs, cex.values, strict=True))
    scalars = iter([v for h, v in pairs if not isinstance(h.type, ArrayType)])
    fills = {id(h.stmt): v for h, v in pairs if isinstance(h.type, ArrayType)}

    def answer(decl: VarDecl, stmt: Havoc) -> int:
        if isinstance(decl.type, ArrayType):
            return fills.get(id(stmt), 0)
        return next(scalars, 0)

    return answer


def _replay_failure(execution: Execution, error: Assert) -> str:
    """Why the replay does not confirm the error at `error` ('' when it does)."""
    if execution.outcome != "error":
        return f"replays to '{execution.outcome}' ({execution.message})"
    if execution.error is not error:
        where = execution.error.coord if execution.error else None
        return f"replays to a different assertion ({where})"
    if execution.overflows:
        return f"overflows at {execution.overflows[0]}"
    return ""


class _Backend:
    """Decides the unrolling's facts under assumptions (literals, or any formulas)."""

    def __init__(self, fm: Formula) -> None:
        self.fm = fm
        self.solver = z3.Solver()

    @staticmethod
    def configure(solver: z3.Solver, timeout_ms: int) -> None:
        solver.set("random_seed", 0)
        solver.set("timeout", timeout_ms)
        # Groebner bases of the high-degree polynomials deep unrollings produce (x * z**64)
        # ignore the timeout for minutes; without them z3 stops on time.
        solver.set("arith.nl.grobner", False)

    def check(self, assumptions: Sequence[z3.BoolRef], timeout_ms: int) -> z3.CheckSatResult:
        raise NotImplementedError

    def model(self) -> z3.ModelRef:
        return self.solver.model()

    def reason_unknown(self) -> str:
        return str(self.solver.reason_unknown())


class _Incremental(_Backend):
    """One solver for all queries: what it learns at one bound helps at the next."""

    def __init__(self, fm: Formula) -> None:
        super().__init__(fm)
        self._added = 0

    def check(self, assumptions: Sequence[z3.BoolRef], timeout_ms: int) -> z3.CheckSatResult:
        facts = self.fm.facts
        for fact in facts[self._added:]:
            self.solver.add(fact)
        self._added = len(facts)
        self.configure(self.solver, timeout_ms)
        return self.solver.check(*[_literal(self.solver, a) for a in assumptions])


class _Fresh(_Backend):
    """A new solver per query, whose pre-processing eliminates the SSA definitions first
    (several times faster on nonlinear unrollings than the incremental core)."""

    TACTIC = ("simplify", "propagate-values", "solve-eqs", "smt")

    def check(self, assumptions: Sequence[z3.BoolRef], timeout_ms: int) -> z3.CheckSatResult:
        self.solver = z3.Then(*self.TACTIC).solver()
        self.configure(self.solver, timeout_ms)
        self.solver.add(*self.fm.facts, *assumptions)
        return self.solver.check()


def _literal(solver: z3.Solver, f: z3.BoolRef) -> z3.BoolRef:
    """`f` itself when it is a (negated) constant, else a fresh literal implying it."""
    atom = f.arg(0) if z3.is_not(f) else f
    if z3.is_const(atom):
        return f
    lit = z3.FreshBool("a")
    solver.add(z3.Implies(lit, f))
    return lit


def _ticker(budget: Budget) -> Callable[[], None]:
    def tick() -> None:
        if budget.expired:
            raise OutOfTime

    return tick
