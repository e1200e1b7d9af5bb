"""The smallest readable certificate: the conjuncts of a checked certificate that carry the proof.

Two steps, each keeping a proof. First, each loop's conjuncts lose those that the others still
kept imply at its head (definitions `v == f(...)` tried last, the others most complex first:
more variables, then products, then size): the conjunction means the same, so it is the same
certificate. Then, starting from what the
assertions need, each needed conjunct pulls in what proves it: per obligation, an unsat core over
the conjuncts at the edge's source (tracked literals; the range facts, which hold at every head by
typing, are free). The closure is itself a proof: each of its consecution and safety obligations
was one of those unsat queries (with a subset of the closure assumed), and its initiations are
among those of the checked certificate. When a core is not found, the first step's conjuncts are
kept. (`simplify.readable_conjuncts` then shows a pair of bounds `a <= b`, `b <= a` as `a == b`.)

Every query is limited by Z3's resource count (`rlimit`), not by the clock, and so is the whole
(`TOTAL_RLIMIT`): the same certificate gives the same rows on a busy machine as on an idle one.
The wall-clock `budget` only guards against a machine so slow that even that takes too long.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import z3
from quokka.verifier.encode import ENTRY, ERROR, Edge, Encoding, encode, range_facts
from quokka.verifier.encode.smt import Translator
from quokka.verifier.engines.base import Budget
from quokka.verifier.engines.inductive import holds
from quokka.verifier.ir import Binary, Const, Expr, Program, Var, conjuncts, free_vars, walk
from quokka.verifier.ir.builder import conjunction
from quokka.verifier.ir.simplify import readable

QUERY_RLIMIT = 300_000  # Z3's resource count for one query (about 0.1 s on a busy 2-core machine)
TOTAL_RLIMIT = 3_000_000  # ... and for all the queries of one certificate

Needed = dict[str, set[int]]  # loop -> indices of its needed conjuncts


@dataclass
class _Spent:
    """The resources the queries have used, against `TOTAL_RLIMIT` and the wall-clock budget."""

    budget: Budget
    rlimit: int = 0
    # a Z3 context of its own: what other queries left in a shared one changes how the nonlinear
    # solver goes, and with it the rows shown
    ctx: z3.Context = field(default_factory=z3.Context)

    @property
    def exhausted(self) -> bool:
        return self.rlimit >= TOTAL_RLIMIT or self.budget.expired

    def check(
        self, formulas: Sequence[z3.BoolRef], tracked: Sequence[z3.BoolRef] = ()
    ) -> tuple[z3.CheckSatResult, set[str]]:
        """Whether `formulas` (and the `tracked` literals) are satisfiable, and when they are not,
        the names of the tracked literals in a minimal unsat core."""
        ctx = self.ctx
        solver = z3.Solver(ctx=ctx)
        solver.set("rlimit", min(QUERY_RLIMIT, max(1, TOTAL_RLIMIT - self.rlimit)))
        solver.set("timeout", self.budget.z3_timeout_ms())
        solver.set("core.minimize", True)
        solver.add(*(f.translate(ctx) for f in formulas))
        before = _rlimit_count(solver)  # Z3 counts for the whole context, across solvers
        answer = solver.check(*(t.translate(ctx) for t in tracked))
        self.rlimit += _rlimit_count(solver) - before
        core = {str(lit) for lit in solver.unsat_core()} if answer == z3.unsat and tracked else set()
        return answer, core


def minimal_certificate(program: Program, invariants: Mapping[str, Expr], budget: Budget) -> dict[str, Expr]:
    """A subset of `invariants` (loop id -> conjunction, a checked certificate of `program`) that
    still proves it; the conjuncts the others do not imply when no smaller one is found in time."""
    enc = encode(program)
    spent = _Spent(budget)
    facts = list(range_facts(program))
    parts = {loop: _irredundant(enc, conjuncts(inv), facts, spent) for loop, inv in invariants.items()}
    needed = _closure(enc, parts, spent)
    if needed is None:
        return {loop: conjunction(ps) for loop, ps in parts.items()}
    return {loop: conjunction([parts[loop][k] for k in sorted(ks)]) for loop, ks in needed.items() if ks}


def _irredundant(enc: Encoding, parts: Sequence[Expr], facts: Sequence[Expr], spent: _Spent) -> list[Expr]:
    """`parts` without those the kept others (and `facts`) imply, in their order; tried for
    removal most complex first (`_complexity`)."""
    unique = list(dict.fromkeys(parts))
    kept = set(range(len(unique)))
    tr = Translator(enc.pre)
    formulas = [tr.formula(p) for p in unique]
    context = [tr.formula(f) for f in facts]
    for k in sorted(kept, key=lambda k: (_complexity(unique[k]), k), reverse=True):  # ties: the later
        if spent.exhausted:
            break
        others = [formulas[j] for j in sorted(kept - {k})]
        if spent.check([*context, *others, z3.Not(formulas[k])])[0] == z3.unsat:
            kept.discard(k)
    return [unique[k] for k in sorted(kept)]


def _complexity(e: Expr) -> tuple[bool, int, int, int, str]:
    """Whether `e` is no definition (`v == f(others)`), its variables, its products of variables,
    its size; then the text, so that the order is total (of the form shown: `readable`)."""
    shown = readable(e)
    nodes = list(walk(shown))
    products = sum(1 for n in nodes if isinstance(n, Binary) and n.op == "*" and not _constant_factor(n))
    return not _definition(shown), len(free_vars(shown)), products, len(nodes), repr(shown)


def _definition(e: Expr) -> bool:
    """`v == f(...)` (or mirrored) where `f` does not read `v`: the easiest kind to read."""
    if not (isinstance(e, Binary) and e.op == "=="):
        return False
    sides = ((e.left, e.right), (e.right, e.left))
    return any(isinstance(a, Var) and a.name not in free_vars(b) for a, b in sides)


def _constant_factor(e: Binary) -> bool:
    return isinstance(e.left, Const) or isinstance(e.right, Const)


def _closure(enc: Encoding, parts: Mapping[str, list[Expr]], spent: _Spent) -> Needed | None:
    """The needed conjuncts: what the assertions need, then what proves each needed one."""
    needed: Needed = {loop: set() for loop in parts}
    todo: list[tuple[Edge, tuple[str, int] | None]] = [
        (e, None) for e in enc.edges if e.dst == ERROR and e.src != ENTRY
    ]
    while todo:
        edge, goal = todo.pop()
        core = _core(enc, edge, goal, parts, spent)
        if core is None:
            return None
        for k in sorted(core - needed[edge.src]):
            needed[edge.src].add(k)
            todo += [(e, (edge.src, k)) for e in enc.edges_into(edge.src) if e.src != ENTRY]
    return needed


def _core(enc: Encoding, edge: Edge, goal: tuple[str, int] | None, parts: Mapping[str, list[Expr]],
          spent: _Spent) -> set[int] | None:
    """The indices of the source conjuncts an unsat core of the obligation uses (None: not unsat)."""
    if spent.exhausted or edge.src not in parts:
        return None
    formulas = [edge.guard, holds(enc, edge, "pre", list(range_facts(enc.program)))]
    if goal is not None:
        loop, k = goal
        formulas.append(z3.Not(holds(enc, edge, "post", [parts[loop][k]])))
    tracked = {f"c!{k}": k for k in range(len(parts[edge.src]))}
    for name, k in tracked.items():
        formulas.append(z3.Implies(z3.Bool(name), holds(enc, edge, "pre", [parts[edge.src][k]])))
    answer, core = spent.check(formulas, [z3.Bool(name) for name in tracked])
    if answer != z3.unsat:
        return None
    return {tracked[name] for name in core if name in tracked}


def _rlimit_count(solver: z3.Solver) -> int:
    """Z3's resource count so far in `solver`'s context (0 when it does not report it)."""
    try:
        return int(solver.statistics().get_key_value("rlimit count"))
    except z3.Z3Exception:
        return 0
