"""k-induction over the cutpoint graph, strengthened with invariants proven beforehand.

A state is a loop head (`loc`) and the values of the variables there; a transition is an edge
of the cutpoint graph (`encode`) between two loop heads, so nested and sequential loops are one
transition system. `P` says that no edge from the state's head to the error is enabled, for
any inputs (they are eliminated by `qe`, or quantified); `aux`
are invariants proven inductive (and the type-range facts), assumed at every state.

- base case (k): no error within k iterations of every loop instance: BMC's unrolling
  (`bmc_unroll`) to bound k, which covers every path through the first k head states (asked
  only once the step case holds at k: finding errors is BMC's job);
- step case (k): k consecutive states satisfying `aux` and `P`, linked by transitions, cannot
  reach a state (satisfying `aux`) where `P` fails.

Both together with `aux` inductive prove every assertion for executions without undefined
behaviour (the base case blocks signed overflow as BMC does; the step case reads integers as
the inductive checker does). A k-inductive proof is no 1-inductive certificate: a SAFE result
keeps `aux` in `invariants` and k in `stats["k_induction"]`, and `confirm` proves all three
parts again in fresh solvers (`checks.certificate_result`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import z3
from quokka.verifier.encode.smt import Translator
from quokka.verifier.ir.printer import format_expr

from ..encode import ENTRY, ERROR, Edge, Encoding, constants, encode
from ..errors import EngineError, UnsupportedFeature
from ..ir import Expr, Program
from .base import Budget, EngineResult, Status, Stopwatch, unknown
from .bmc_unroll import Formula, FormulaTooLarge, OutOfTime, Settings, Unroller, UnsupportedShape
from .inductive import Obligations, check, invariant_formulas

ENGINE = "kind"
MAX_K = 64
_QUERY_SHARE = 0.3  # one query may take this share of the time left
_QE_MS = 500  # for eliminating the inputs of an error edge


@dataclass(frozen=True)
class _Answer:
    k: int
    base: str
    step: str


def check_program(
    program: Program,
    budget: Budget,
    aux: Mapping[str, Expr] | None = None,
    *,
    max_k: int = MAX_K,
    dump_dir: Path | None = None,
    engine: str = ENGINE,
) -> EngineResult:
    """k-induction for k = 1..`max_k` (within `budget`), assuming `aux` (loop id -> invariant,
    checked inductive here first) and the type-range facts at every loop head. `dump_dir` gets
    the last step query (`stepK.smt2`) and `summary.json` (each k's answers)."""
    watch = Stopwatch()
    aux = dict(aux or {})
    if not program.loops:
        return unknown(engine, "no loops: nothing to induct over", watch.elapsed())
    prepared = _prepare(program, aux, budget)
    if isinstance(prepared, str):
        return unknown(engine, prepared, watch.elapsed())
    step = _Step(prepared[0], prepared[1])
    try:
        base = _Base(program, budget)
        return _search(program, aux, base, step, budget, max_k, dump_dir, watch, engine)
    except (UnsupportedFeature, UnsupportedShape) as exc:
        return unknown(engine, f"cannot unroll the base case: {exc}", watch.elapsed())
    except FormulaTooLarge as exc:
        return unknown(engine, f"base case too large: {exc}", watch.elapsed())
    except OutOfTime:
        return unknown(engine, "timeout while unrolling the base case", watch.elapsed())
    except z3.Z3Exception as exc:
        return unknown(engine, f"solver error: {exc}", watch.elapsed())


def _search(
    program: Program,
    aux: Mapping[str, Expr],
    base: _Base,
    step: _Step,
    budget: Budget,
    max_k: int,
    dump_dir: Path | None,
    watch: Stopwatch,
    engine: str,
) -> EngineResult:
    answers: list[_Answer] = []
    result = unknown(engine, f"not {max_k}-inductive", watch.elapsed())
    for k in range(1, max_k + 1):
        if budget.expired:
            result = unknown(engine, f"timeout at k={k}", watch.elapsed(), {"k": k})
            break
        step_answer = step.holds(k, budget)
        if step_answer == z3.sat:
            answers.append(_Answer(k, "not asked", str(step_answer)))
            continue
        if step_answer == z3.unknown:
            result = unknown(engine, f"solver gave up on the step case at k={k}", watch.elapsed(), {"k": k})
            answers.append(_Answer(k, "not asked", str(step_answer)))
            break
        base_answer = base.holds(k, budget)
        answers.append(_Answer(k, str(base_answer), str(step_answer)))
        if base_answer == z3.sat:
            result = unknown(engine, f"base case fails: an error is reachable within k={k}",
                             watch.elapsed(), {"k": k})  # fmt: skip
            break
        if base_answer == z3.unknown:
            result = unknown(engine, f"solver gave up on the base case at k={k}", watch.elapsed(), {"k": k})
            break
        result = _safe(program, aux, k, watch, engine)
        break
    if dump_dir is not None and answers:
        _write(dump_dir, f"step{answers[-1].k}.smt2", step.smtlib())
        _dump(dump_dir, aux, answers, result)
    return result


def _safe(program: Program, aux: Mapping[str, Expr], k: int, watch: Stopwatch, engine: str) -> EngineResult:
    loops = {info.id for info in program.loops}
    reason = f"{k}-inductive" + (f" with auxiliary invariants at {len(aux)} loop(s)" if aux else "")
    stats = {"k_induction": k}
    return EngineResult(engine, Status.SAFE, reason, {k_: v for k_, v in aux.items() if k_ in loops},
                        None, watch.elapsed(), stats)  # fmt: skip


def _prepare(
    program: Program, aux: Mapping[str, Expr], budget: Budget
) -> tuple[Encoding, dict[str, z3.BoolRef]] | str:
    """The encoding and each loop's auxiliary invariant (with the range facts) as a formula over
    the pre-state, once initiation and consecution are shown; else why not."""
    try:
        enc = encode(program)
        inv, problems = invariant_formulas(program, aux)
        if problems:
            return "auxiliary invariants: " + "; ".join(p.reason for p in problems)
        not_inductive = _not_inductive(check(program, aux, budget.fraction(_QUERY_SHARE), enc))
    except (EngineError, z3.Z3Exception) as exc:
        return f"cannot encode: {exc}"
    if not_inductive:
        return f"auxiliary invariants not inductive: {not_inductive}"
    tr = Translator(enc.pre)
    return enc, {loop: z3.And([tr.formula(e) for e in parts]) for loop, parts in inv.items()}


def _not_inductive(obligations: Obligations) -> str:
    return "; ".join(o.reason for o in obligations.items if o.kind != "safety" and not o.valid)


# ----------------------------------------------------------------------------- base case


class _Base:
    """BMC's incremental unrolling, deepened one bound at a time."""

    def __init__(self, program: Program, budget: Budget, incremental: bool = True) -> None:
        self.budget = budget
        self.fm = Formula(Settings(), _ticker(budget))
        self.unroller = Unroller(program, self.fm, incremental=incremental)
        self.solver = _solver()
        self.added = 0

    def holds(self, k: int, budget: Budget) -> z3.CheckSatResult:
        """unsat when no error is reachable within `k` iterations of every loop instance."""
        if self.unroller.bound == 0:
            self.unroller.build(k)
        else:
            self.unroller.extend(k)
        for fact in self.fm.facts[self.added:]:
            self.solver.add(fact)
        self.added = len(self.fm.facts)
        errors = [e.flag for e in self.unroller.errors]
        if not errors:
            return z3.unsat
        cut = [z3.Not(lit) for lit in self.unroller.open_literals()]
        goal = z3.FreshBool("base")
        self.solver.add(z3.Implies(goal, z3.Or(*errors)))
        return _timed(self.solver, [*cut, goal], budget, "kind base query")


# ----------------------------------------------------------------------------- step case


class _Step:
    """The cutpoint transition system unrolled from an arbitrary state at a loop head."""

    def __init__(self, enc: Encoding, aux: Mapping[str, z3.BoolRef]) -> None:
        self.enc = enc
        ends = [node for e in enc.edges for node in (e.src, e.dst) if node not in (ENTRY, ERROR)]
        self.heads = list(dict.fromkeys([*(info.id for info in enc.program.loops), *ends]))
        self.aux = aux
        self.moves = [e for e in enc.edges if e.src != ENTRY and e.dst != ERROR]
        self.errors = [e for e in enc.edges if e.src != ENTRY and e.dst == ERROR]
        self.solver = _solver()
        self.depth = 0  # states 0..depth carry their facts
        self.goal: z3.BoolRef = z3.BoolVal(False)
        self._extra = {id(e): _extra_constants(enc, e) for e in enc.edges}
        self._bad = {id(e): _error_states(e.guard, self._extra[id(e)]) for e in self.errors}
        self._assume(0)

    def holds(self, k: int, budget: Budget) -> z3.CheckSatResult:
        """unsat when k states satisfying the property force the next one to."""
        while self.depth < k:
            i = self.depth
            self.solver.add(self._no_error(i), self._transition(i))
            self.depth += 1
            self._assume(self.depth)
        self.goal = z3.FreshBool("step")
        self.solver.add(z3.Implies(self.goal, z3.Or(*self._error_at(k))))
        return _timed(self.solver, [self.goal], budget, "kind step query")

    def smtlib(self) -> str:
        """The last step query in SMT-LIB."""
        dump = z3.Solver()
        dump.add(*self.solver.assertions(), self.goal)
        return str(dump.sexpr()) + "(check-sat)\n"

    def _loc(self, i: int) -> z3.ArithRef:
        return z3.Int(f"@loc@{i}")

    def _at(self, i: int, head: str) -> z3.BoolRef:
        return self._loc(i) == self.heads.index(head)

    def _assume(self, i: int) -> None:
        self.solver.add(z3.Or(*[self._at(i, h) for h in self.heads]))
        for head in self.heads:
            if head in self.aux:
                self.solver.add(z3.Implies(self._at(i, head), self._copy(self.aux[head], None, i)))

    def _error_at(self, i: int) -> list[z3.BoolRef]:
        """The states at step `i` from which some inputs reach an error: the property says none
        does for any inputs (a fresh constant per step would let the solver choose harmless ones)."""
        return [z3.And(self._at(i, e.src), self._copy(self._bad[id(e)], None, i)) for e in self.errors]

    def _no_error(self, i: int) -> z3.BoolRef:
        return z3.Not(z3.Or(*self._error_at(i)))

    def _transition(self, i: int) -> z3.BoolRef:
        after = self._state(i + 1)
        cases = []
        for e in self.moves:
            values = [after[n] == self._copy(e.post[n], e, i) for n in self.enc.pre]
            move = [self._at(i, e.src), self._copy(e.guard, e, i), self._at(i + 1, e.dst)]
            cases.append(z3.And(*move, *values))
        return z3.Or(*cases)

    def _state(self, i: int) -> dict[str, z3.ExprRef]:
        return {n: z3.Const(f"{n}@{i}", c.sort()) for n, c in self.enc.pre.items()}

    def _copy(self, term: z3.ExprRef, edge: Edge | None, i: int) -> z3.ExprRef:
        """`term` over the state `i` (and, for an edge, its own fresh constants of step `i`)."""
        pairs = [(c, s) for c, s in zip(self.enc.pre.values(), self._state(i).values(), strict=True)]
        if edge is not None:
            pairs += [(c, z3.Const(f"{c}@{i}.{id(edge)}", c.sort())) for c in self._extra[id(edge)]]
        return z3.substitute(term, *pairs)


def _error_states(guard: z3.BoolRef, inputs: Sequence[z3.ExprRef]) -> z3.BoolRef:
    """`exists inputs. guard` over the pre-state: quantifier-free where `qe` manages quickly."""
    if not inputs:
        return guard
    bad = z3.Exists(list(inputs), guard)
    try:
        goals = z3.TryFor(z3.Tactic("qe"), _QE_MS).apply(bad)
    except z3.Z3Exception:
        return bad
    exact = goals.as_expr()  # the subgoals' disjunction
    return bad if _quantified(exact) else exact


def _quantified(e: z3.ExprRef) -> bool:
    return z3.is_quantifier(e) or any(_quantified(c) for c in e.children())


def _extra_constants(enc: Encoding, edge: Edge) -> list[z3.ExprRef]:
    """The constants of `edge` that are not pre-state variables (havocs, helpers)."""
    pre = set(enc.pre)
    return [c for name, c in constants([edge.guard, *edge.post.values()]).items() if name not in pre]


# ----------------------------------------------------------------------------- the re-check


def k_inductive(result: EngineResult) -> int | None:
    """k when `result` is SAFE by k-induction (`check_program`), else None."""
    k = result.stats.get("k_induction")
    return k if result.status is Status.SAFE and isinstance(k, int) else None


def confirm(program: Program, result: EngineResult, budget: Budget) -> EngineResult:
    """`result`'s k-inductive proof done again in fresh solvers: the auxiliary invariants
    inductive, the base case unrolled afresh (one-shot) to k, the step case at k."""
    watch = Stopwatch()
    k = k_inductive(result)
    if k is None:
        return unknown(ENGINE, "no k-induction proof to check", watch.elapsed())
    prepared = _prepare(program, result.invariants, budget)
    if isinstance(prepared, str):
        return unknown(ENGINE, prepared, watch.elapsed())
    try:
        base = _Base(program, budget, incremental=False).holds(k, budget)
        step = _Step(*prepared).holds(k, budget) if base == z3.unsat else z3.unknown
    except (UnsupportedFeature, UnsupportedShape, FormulaTooLarge, OutOfTime, z3.Z3Exception) as exc:
        why = str(exc) or "timeout"
        return unknown(ENGINE, f"k-induction not re-checked: {why}", watch.elapsed())
    if base != z3.unsat or step != z3.unsat:
        why = f"k-induction (k={k}) not confirmed: base {base}, step {step}"
        return unknown(ENGINE, why, watch.elapsed())
    reason = (f"k-induction re-checked in fresh solvers: base case and step case at k={k}, "
              "auxiliary invariants inductive")  # fmt: skip
    stats = {"k_induction": k}
    return EngineResult(ENGINE, Status.SAFE, reason, result.invariants, None, watch.elapsed(), stats)


# ----------------------------------------------------------------------------- helpers


def _solver() -> z3.Solver:
    solver = z3.Solver()
    solver.set("random_seed", 0)
    return solver


def _timed(
    solver: z3.Solver, assumptions: Sequence[z3.BoolRef], budget: Budget, what: str
) -> z3.CheckSatResult:
    if budget.expired:
        return z3.unknown
    solver.set("timeout", budget.z3_timeout_ms(max(0.5, budget.remaining() * _QUERY_SHARE)))
    with budget.recorder.timed(what) as call:
        answer = solver.check(*assumptions)
        call.answer = str(answer)
    return answer


def _ticker(budget: Budget) -> Callable[[], None]:
    def tick() -> None:
        if budget.expired:
            raise OutOfTime

    return tick


def _dump(dump_dir: Path, aux: Mapping[str, Expr], answers: Sequence[_Answer], result: EngineResult) -> None:
    """`summary.json`: the auxiliary invariants, each k's answers, the outcome."""
    payload = {
        "auxiliary": {loop: format_expr(e) for loop, e in aux.items()},
        "rounds": [{"k": a.k, "base": a.base, "step": a.step} for a in answers],
        "status": result.status.value,
        "reason": result.reason,
    }
    _write(dump_dir, "summary.json", json.dumps(payload, indent=2))


def _write(dump_dir: Path, name: str, text: str) -> None:
    dump_dir.mkdir(parents=True, exist_ok=True)
    (dump_dir / name).write_text(text, encoding="utf-8")
