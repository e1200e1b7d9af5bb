"""Which signed-overflow sites the proven invariants do not rule out.

The frontend records every signed operation that could overflow (`Program.overflow_sites`, at the
operation's coordinate). Once a certificate is checked, and strengthened by the bounds on the
variables that Houdini proves inductive with it, each statement and branch is executed
symbolically from every cutpoint (`encode.explore`), with those invariants (and the range facts)
assumed at loop heads: when no state there lets one of its signed operations leave its type, the
statement cannot overflow. A site is dropped only when every statement on its line is shown safe;
a site on a line with a statement not shown safe, or with none the walk saw, is kept.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

import z3
from quokka.verifier.encode import ENTRY, Observer, State, explore, range_facts
from quokka.verifier.encode.smt import Translator, in_range
from quokka.verifier.engines.base import Budget
from quokka.verifier.engines.houdini import houdini
from quokka.verifier.errors import Coord
from quokka.verifier.ir import INT, Binary, Const, Expr, IntType, Program, Var, conjuncts, constants, walk
from quokka.verifier.ir.builder import conjunction
from quokka.verifier.ir.cexpr import may_overflow

QUERY_CAP_S = 0.5  # seconds one query may take (an unknown answer keeps the site)
BOUNDS_SHARE = 0.5  # of the budget, for proving bounds on the variables at the loop heads
MAX_CONSTANTS = 12  # bounds tried per variable: the program's constants closest to 0
MAX_VARIABLES = 10  # variables bounded per loop (those visible at its head, first declared first)


def unproven_overflows(program: Program, invariants: Mapping[str, Expr], budget: Budget) -> tuple[Coord, ...]:
    """The overflow sites of `program` that `invariants` (a checked certificate), strengthened by
    the bounds that Houdini proves, do not rule out."""
    if not program.overflow_sites:
        return ()
    invariants = _with_bounds(program, invariants, budget.fraction(BOUNDS_SHARE))
    safe: set[int] = set()
    risky: set[int] = set()
    facts = range_facts(program)

    def watch(start: str, pre: Mapping[str, z3.ExprRef]) -> Observer:
        known = [] if start == ENTRY else [*facts, *([invariants[start]] if start in invariants else [])]
        assumed = z3.And([Translator(pre).formula(e) for e in known])

        def observe(coord: Coord | None, exprs: tuple[Expr, ...], state: State) -> None:
            ops = [e for x in exprs for e in walk(x) if may_overflow(e)]
            if coord is not None and ops:
                answer = _solve([state.guard, assumed, _leaves_type(ops, state)], budget)
                (safe if answer == z3.unsat else risky).add(coord.line)

        return observe

    explore(program, watch)
    return tuple(c for c in program.overflow_sites if c.line not in safe or c.line in risky)


def _with_bounds(program: Program, invariants: Mapping[str, Expr], budget: Budget) -> Mapping[str, Expr]:
    """`invariants` with the candidate bounds `v <= k`, `v >= k` (k a constant of the program) and
    `v <= w` that are inductive together with them; `invariants` if Houdini does not finish."""
    constants = _constants(program)
    pool: dict[str, list[Expr]] = {loop: conjuncts(inv) for loop, inv in invariants.items()}
    for info in program.loops:
        names = [ir for _, ir in info.scope if isinstance(program.var(ir).type, IntType)][:MAX_VARIABLES]
        pool.setdefault(info.id, []).extend(_candidates(program, names, constants))
    result = houdini(program, pool, budget)
    if not result.complete:
        return invariants
    return {loop: conjunction(kept) for loop, kept in result.kept.items() if kept}


def _constants(program: Program) -> list[int]:
    return sorted(constants(program) | {0}, key=abs)[:MAX_CONSTANTS]


def _candidates(program: Program, names: Sequence[str], constants: Sequence[int]) -> list[Expr]:
    out: list[Expr] = []
    for name in names:
        ty = program.var(name).type
        assert isinstance(ty, IntType)
        v = Var(name, ty)
        fitting = [k for k in constants if ty.min <= k <= ty.max]
        out += [Binary(op, v, Const(k, ty), INT) for k in fitting for op in ("<=", ">=")]
    for a, b in itertools.combinations(names, 2):
        va, vb = Var(a, program.var(a).type), Var(b, program.var(b).type)
        if va.type == vb.type:
            out += [Binary("<=", va, vb, INT), Binary(">=", va, vb, INT)]
    return out


def _leaves_type(ops: Sequence[Expr], state: State) -> z3.BoolRef:
    """Some operation in `ops` yields a value outside its type (or is `INT_MIN % -1`)."""
    tr = Translator(state.env)
    out = []
    for e in ops:
        ty = e.type
        assert isinstance(ty, IntType)
        out.append(z3.Not(in_range(tr.term(e), ty)))
        if isinstance(e, Binary) and e.op == "%":
            out.append(z3.And(tr.term(e.left) == ty.min, tr.term(e.right) == -1))
    return z3.Or(out)


def _solve(query: list[z3.BoolRef], budget: Budget) -> z3.CheckSatResult:
    if budget.expired:
        return z3.unknown
    solver = z3.Solver()
    solver.set("timeout", budget.z3_timeout_ms(cap_s=QUERY_CAP_S))
    solver.add(*query)
    return solver.check()
