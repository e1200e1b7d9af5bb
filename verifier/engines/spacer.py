"""Z3's Spacer on the CHC system of the program (`chc`).

SAFE: the per-loop invariants are read from Spacer's model, translated to IR (`z3_to_ir`) and
re-checked by `inductive.prove_with`; a certificate that does not check is UNKNOWN.
UNSAFE: only with the havoc inputs in execution order, found by solving the path of edges
along Spacer's derivation (rule names `e<i>`); otherwise UNKNOWN.

Settings: see `SCHEDULE` (measurements in the comment above it).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace

import z3
from quokka.verifier.encode import chc
from quokka.verifier.encode.z3_to_ir import Unsupported, subterms, to_ir

from ..encode import ENTRY, ERROR, Edge, Encoding, encode
from ..ir import Expr, Program, Var, refusal
from . import inductive
from .base import Budget, EngineResult, Status, Stopwatch, unknown

ENGINE = "spacer"

IUC: Mapping[str, object] = {"spacer.use_iuc": True}
NO_IUC: Mapping[str, object] = {"spacer.use_iuc": False}
NO_INLINING: Mapping[str, object] = {
    "xform.inline_linear": False,
    "xform.inline_eager": False,
    "xform.slice": False,
}

# Measured with tests/engines/spacer_sweep.py (one task at a time, the same 30 random tasks
# each of code2inv / quokka-dev / svcomp-nla-dev; solved = SAFE or UNSAFE; 7 + 1 of the
# quokka-dev / nla tasks do not lower: pointers, floats). With an 8 s cap:
#   Fixedpoint, use_iuc=True (Z3's default)       27 / 7 / 2
#   Fixedpoint, use_iuc=False                      23 / 16 / 10
#   Fixedpoint, use_iuc=False, no inlining         23 / 16 / 12
#   Solver("HORN"), use_iuc=True / False           27 / 7 / 1  and  23 / 18 / 10
#   this schedule                                  27 / 17 / 11
# and this schedule with a 30 s cap: 27 / 18 / 14 (median time of the solved 0.5 / 2.2 /
# 1.6 s, at most 10 s); no wrong verdict (code2inv 62 and 75, labelled true, reach the error
# in the IR semantics: their `n`/`y` are uninitialised, i.e. nondet).
# Neither setting dominates: interpolating cores solve linear code2inv tasks that time out
# without them, use_iuc=False solves the polynomial tasks (cohencu, hard2, ps2, geo) that
# time out with them; a Solver over Horn clauses decides like the Fixedpoint with the same
# setting (no faster overall) but gives no derivation for inputs, so we use the Fixedpoint.
# Spacer on polynomial tasks often gives up within a fraction of a second ("unknown", not a
# timeout) and then succeeds with another `spacer.random_seed` (also with `spacer.global`,
# `spacer.eq_prop=False` or no slicing, just as erratically). So `solve` runs the two
# settings in turns with geometrically growing slices (1 s each, then 3 s, 9 s, ...), and
# within a slice retries a quick give-up with the next seed.
SCHEDULE: tuple[tuple[str, Mapping[str, object]], ...] = (("iuc", IUC), ("no-iuc", NO_IUC))
FIRST_SLICE_S = 1.0
GROWTH = 3.0
MAX_SEEDS_PER_SLICE = 8
CHECK_MIN_S = 5.0  # time allowed to re-check a certificate found just before the deadline


def solve(
    program: Program,
    budget: Budget,
    params: Mapping[str, object] | None = None,
    encoding: Encoding | None = None,
    check: bool = True,
) -> EngineResult:
    """Spacer on `program`; SAFE results carry invariants that passed `inductive.prove_with`.

    `params` (Fixedpoint parameters) runs one configuration for the whole budget instead of
    the `SCHEDULE`; `check=False` skips the re-check (for callers that check a combined
    certificate themselves).
    """
    watch = Stopwatch()
    refused = refusal(program)
    if refused is not None:
        return unknown(ENGINE, refused)
    enc = encoding or encode(program)
    runner = _Runner(program, enc, chc.build(enc), budget, check)
    for name, settings, piece in _slices(params, budget):
        if runner.run_slice(name, settings, piece):
            break
    last = runner.last
    stats = {**last.stats, "attempts": runner.attempts}
    return EngineResult(ENGINE, last.status, last.reason, last.invariants, last.inputs,
                        watch.elapsed(), stats)


class _Runner:
    """Runs Spacer attempts on one CHC system, remembering the seeds used and the last answer."""

    def __init__(self, program: Program, enc: Encoding, system: chc.ChcSystem, budget: Budget,
                 check: bool) -> None:
        self.program, self.enc, self.system = program, enc, system
        self.budget, self.check = budget, check
        self.attempts: list[str] = []
        self.seeds: dict[str, int] = {}
        self.last = unknown(ENGINE, "budget exhausted before spacer ran")

    def run_slice(self, name: str, settings: Mapping[str, object], piece: Budget) -> bool:
        """Attempts until `piece` ends, a new seed after each quick give-up; True when decided."""
        for _ in range(MAX_SEEDS_PER_SLICE):
            seed = self.seeds[name] = self.seeds.get(name, -1) + 1
            with_seed = {**settings, "spacer.random_seed": seed}
            self.last = self.attempt(with_seed, piece)
            self.attempts.append(f"{name}/{seed} {self.last.time_s:.1f}s: {self.last.status.value}")
            if self.last.status is not Status.UNKNOWN or self.last.stats.get("reachable"):
                return True
            if piece.expired or "canceled" in self.last.reason:
                return False
        return False

    def attempt(self, settings: Mapping[str, object], piece: Budget) -> EngineResult:
        """One Spacer run; a model that inlined predicates away may hide invariants behind
        quantifiers that `qe` cannot remove (nonlinear ones), so then it runs again without
        inlining."""
        result = self.run(settings, piece)
        if result.stats.get("unexpressible") and any(settings.get(k) is not False for k in NO_INLINING):
            again = self.run({**settings, **NO_INLINING}, piece)
            return replace(again, time_s=result.time_s + again.time_s)
        return result

    def run(self, settings: Mapping[str, object], piece: Budget) -> EngineResult:
        watch, system = Stopwatch(), self.system
        fp = chc.fixedpoint(system, {**settings, "timeout": piece.z3_timeout_ms()})
        with self.budget.recorder.timed("spacer query") as call:
            answer, why = query(fp, system)
            call.answer = str(answer)
        stats: dict[str, object] = {"params": dict(settings), "levels": _levels(fp, system)}
        if answer == z3.unsat:
            check_budget = Budget.of(max(self.budget.remaining(), CHECK_MIN_S))
            return _safe(self.program, system, fp, check_budget, watch, stats, self.check)
        if answer == z3.sat:
            return _unsafe(self.enc, system, fp, self.budget, watch, stats)
        return unknown(ENGINE, why, watch.elapsed(), stats)


def _slices(params: Mapping[str, object] | None, budget: Budget
            ) -> Iterator[tuple[str, Mapping[str, object], Budget]]:
    if params is not None:
        yield "custom", params, budget
        return
    length = FIRST_SLICE_S
    while True:
        for name, settings in SCHEDULE:
            left = budget.remaining()
            if left <= 0:
                return
            yield name, settings, budget if left < 1.5 * length else budget.sub(length)
        length *= GROWTH


def query(fp: z3.Fixedpoint, system: chc.ChcSystem) -> tuple[z3.CheckSatResult, str]:
    """`fp.query` of the error predicate and, when unknown, why (a timeout raises "canceled")."""
    try:
        answer = fp.query(system.error())
    except z3.Z3Exception as exc:
        return z3.unknown, f"spacer: {exc.value.decode() if isinstance(exc.value, bytes) else exc}"
    return answer, "" if answer != z3.unknown else f"spacer: {fp.reason_unknown() or 'unknown'}"


def _levels(fp: z3.Fixedpoint, system: chc.ChcSystem) -> dict[str, int]:
    return {loop: fp.get_num_levels(pred) for loop, pred in system.preds.items()}


# ----------------------------------------------------------------------------- SAFE


def invariants_of(
    system: chc.ChcSystem, fp: z3.Fixedpoint, budget: Budget | None = None
) -> dict[str, z3.BoolRef]:
    """Each loop's invariant from Spacer's model, over the pre-state constants (quantifier-free).

    The model is read from `get_answer()`, which also covers predicates that Spacer's
    preprocessing inlined away (their `get_cover_delta` is just `true`).
    """
    answer = _answer_definitions(fp.get_answer(), system)
    out = {}
    for loop, pred in system.preds.items():
        if loop in answer:
            formula = answer[loop]
        else:
            formula = z3.substitute_vars(fp.get_cover_delta(-1, pred), *system.pre_args(loop))
        out[loop] = eliminate_quantifiers(formula, budget)
    return out


def _answer_definitions(answer: z3.ExprRef, system: chc.ChcSystem) -> dict[str, z3.BoolRef]:
    """loop -> its predicate's definition in `answer` (conjuncts `forall xs. P(xs) == body`)."""
    by_name = {pred.name(): loop for loop, pred in system.preds.items()}
    out = {}
    for part in answer.children() if z3.is_and(answer) else [answer]:
        body = part.body() if z3.is_quantifier(part) and part.is_forall() else part
        defined = _definition(body, by_name)
        if defined is not None:
            head, value = defined
            loop = by_name[head.decl().name()]
            indices = [z3.get_var_index(a) for a in head.children()]
            if sorted(indices) == list(range(len(indices))):
                slots = dict(zip(indices, system.pre_args(loop), strict=True))
                out[loop] = z3.substitute_vars(value, *[slots[i] for i in range(len(indices))])
    return out


def _definition(body: z3.ExprRef, preds: Mapping[str, str]) -> tuple[z3.ExprRef, z3.BoolRef] | None:
    def is_head(t: z3.ExprRef) -> bool:
        return z3.is_app(t) and t.decl().name() in preds and all(z3.is_var(a) for a in t.children())

    if is_head(body):
        return body, z3.BoolVal(True)
    if z3.is_not(body) and is_head(body.arg(0)):
        return body.arg(0), z3.BoolVal(False)
    if z3.is_eq(body) and is_head(body.arg(0)):
        return body.arg(0), body.arg(1)
    return None


def eliminate_quantifiers(formula: z3.BoolRef, budget: Budget | None = None) -> z3.BoolRef:
    """`formula` without quantifiers where Z3's `qe` manages (Spacer's models may project with `exists`).

    `qe` on nonlinear formulas can run for ever: with `budget` it is cut off, and the formula is
    `Unsupported` (as when quantifiers remain)."""
    if not any(z3.is_quantifier(t) for t in subterms(formula)):
        return formula
    tactic = z3.Then(z3.Tactic("qe"), z3.Tactic("simplify"))
    if budget is not None:
        tactic = z3.TryFor(tactic, budget.z3_timeout_ms())
    try:
        goals = tactic(formula)
    except z3.Z3Exception as exc:
        raise Unsupported(f"quantifier elimination did not finish: {exc}") from exc
    return z3.Or([g.as_expr() for g in goals]) if len(goals) != 1 else goals[0].as_expr()


def invariants_to_ir(program: Program, formulas: Mapping[str, z3.BoolRef]) -> dict[str, Expr]:
    """The invariants as IR expressions; raises `Unsupported` when one has no exact translation."""
    variables = {v.name: Var(v.name, v.type) for v in program.variables}
    return {loop: to_ir(f, variables) for loop, f in formulas.items()}


def _safe(program: Program, system: chc.ChcSystem, fp: z3.Fixedpoint, budget: Budget,
          watch: Stopwatch, stats: dict[str, object], check: bool) -> EngineResult:
    try:
        invariants = invariants_to_ir(program, invariants_of(system, fp, budget))
    except Unsupported as exc:
        stats["unexpressible"] = True
        why = f"spacer proved safety, but its invariant is not expressible: {exc}"
        return unknown(ENGINE, why, watch.elapsed(), stats)
    if check:
        checked = inductive.prove_with(program, invariants, budget)
        if checked.status is not Status.SAFE:
            why = f"spacer's invariants did not check: {checked.reason}"
            return unknown(ENGINE, why, watch.elapsed(), stats)
    reason = "spacer found inductive invariants"
    return EngineResult(ENGINE, Status.SAFE, reason, invariants, None, watch.elapsed(), stats)


# ----------------------------------------------------------------------------- UNSAFE


def _unsafe(enc: Encoding, system: chc.ChcSystem, fp: z3.Fixedpoint, budget: Budget, watch: Stopwatch,
            stats: dict[str, object]) -> EngineResult:
    path = trace_edges(enc, fp.get_rule_names_along_trace()) or _retrace(enc, budget)
    inputs = path_inputs(enc, path, budget) if path else None
    if path is None or inputs is None:
        stats["reachable"] = True
        why = "spacer found the error reachable but produced no input"
        if system.abstracted:
            why += " (its CHC system over-approximates non-constant division or bitwise operators)"
        return unknown(ENGINE, why, watch.elapsed(), stats)
    reason = f"spacer found the error reachable along {len(path)} edges"
    return EngineResult(ENGINE, Status.UNSAFE, reason, {}, inputs, watch.elapsed(), stats)


def _retrace(enc: Encoding, budget: Budget) -> list[Edge] | None:
    """Ask again without rule inlining, so that the trace names the original rules."""
    system = chc.build(enc)
    fp = chc.fixedpoint(system, {**NO_IUC, **NO_INLINING, "timeout": budget.z3_timeout_ms()})
    with budget.recorder.timed("spacer retrace") as call:
        answer = query(fp, system)[0]
        call.answer = str(answer)
    if answer != z3.sat:
        return None
    return trace_edges(enc, fp.get_rule_names_along_trace())


def trace_edges(enc: Encoding, names: Sequence[str]) -> list[Edge] | None:
    """The edges named along Spacer's trace (listed from the query back), if they form a path."""
    path = []
    for name in reversed(list(names)):
        if name == "<null>":
            continue
        if not (name.startswith("e") and name[1:].isdigit() and int(name[1:]) < len(enc.edges)):
            return None
        path.append(enc.edges[int(name[1:])])
    connected = all(a.dst == b.src for a, b in itertools.pairwise(path))
    if not path or path[0].src != ENTRY or path[-1].dst != ERROR or not connected:
        return None
    return path


Havocs = list[tuple[z3.BoolRef, z3.ExprRef]]


def _chain(enc: Encoding, path: Sequence[Edge]) -> tuple[list[z3.BoolRef], Havocs]:
    """The path formula of `path` (one guard per edge, states passed along, havocs renamed per
    step) and every havoc on it as (when it runs, its value), in execution order."""
    state: dict[str, z3.ExprRef] = dict(enc.pre)
    guards: list[z3.BoolRef] = []
    havocs: Havocs = []
    for i, edge in enumerate(path):
        renaming = [(site.const, z3.FreshConst(site.const.sort(), f"s{i}")) for site in edge.havocs]
        subst = [(enc.pre[v], state[v]) for v in enc.pre if not state[v].eq(enc.pre[v])] + renaming
        guards.append(z3.substitute(edge.guard, *subst))
        for site, (_, new) in zip(edge.havocs, renaming, strict=True):
            havocs.append((z3.substitute(site.guard, *subst), new))
        state = {v: z3.substitute(t, *subst) for v, t in edge.post.items()}
    return guards, havocs


def path_inputs(enc: Encoding, path: Sequence[Edge], budget: Budget) -> tuple[int, ...] | None:
    """The havoc values, in execution order, of an execution along `path` (None if none found)."""
    guards, havocs = _chain(enc, path)
    result, model, _ = inductive.solve(guards, budget)
    if result != z3.sat or model is None:
        return None
    inputs = []
    for runs, value in havocs:
        if z3.is_true(model.eval(runs, model_completion=True)):
            if not z3.is_int(value):
                return None  # an array havoc: the interpreter draws its elements lazily
            inputs.append(model.eval(value, model_completion=True).as_long())
    return tuple(inputs)
