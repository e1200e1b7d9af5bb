"""The smallest readable certificate: the conjuncts of a checked certificate that carry the proof.

Starting from what the assertions need, each needed conjunct pulls in what proves it: per
obligation, an unsat core over the conjuncts at the edge's source (tracked literals; the range
facts, which hold at every head by typing, are free). The closure is itself a proof: each of its
consecution and safety obligations was one of those unsat queries (with a subset of the closure
assumed), and its initiations are among those of the checked certificate. When a query is not
unsat in time, the full certificate is kept. (`simplify.readable_conjuncts` then shows a pair
of bounds `a <= b`, `b <= a` as `a == b`.)
"""

from __future__ import annotations

from collections.abc import Mapping

import z3
from quokka.verifier.encode import ENTRY, ERROR, Edge, Encoding, encode, range_facts
from quokka.verifier.engines.base import Budget
from quokka.verifier.engines.inductive import holds
from quokka.verifier.ir import Expr, Program, conjuncts
from quokka.verifier.ir.builder import conjunction

Needed = dict[str, set[int]]  # loop -> indices of its needed conjuncts


def minimal_certificate(program: Program, invariants: Mapping[str, Expr], budget: Budget) -> dict[str, Expr]:
    """A subset of `invariants` (loop id -> conjunction, a checked certificate of `program`) that
    still proves it; `invariants` when none is found in `budget`."""
    enc = encode(program)
    parts = {loop: conjuncts(inv) for loop, inv in invariants.items()}
    needed = _closure(enc, parts, budget)
    if needed is None:
        return dict(invariants)
    return {loop: conjunction([parts[loop][k] for k in sorted(ks)]) for loop, ks in needed.items() if ks}


def _closure(enc: Encoding, parts: Mapping[str, list[Expr]], budget: Budget) -> Needed | None:
    """The needed conjuncts: what the assertions need, then what proves each needed one."""
    needed: Needed = {loop: set() for loop in parts}
    todo: list[tuple[Edge, tuple[str, int] | None]] = [
        (e, None) for e in enc.edges if e.dst == ERROR and e.src != ENTRY
    ]
    while todo:
        edge, goal = todo.pop()
        core = _core(enc, edge, goal, parts, budget)
        if core is None:
            return None
        for k in core - needed[edge.src]:
            needed[edge.src].add(k)
            todo += [(e, (edge.src, k)) for e in enc.edges_into(edge.src) if e.src != ENTRY]
    return needed


def _core(enc: Encoding, edge: Edge, goal: tuple[str, int] | None, parts: Mapping[str, list[Expr]],
          budget: Budget) -> set[int] | None:
    """The indices of the source conjuncts an unsat core of the obligation uses (None: not unsat)."""
    if budget.expired or edge.src not in parts:
        return None
    solver = z3.Solver()
    solver.set("timeout", budget.z3_timeout_ms(cap_s=0.5))
    solver.set("core.minimize", True)
    solver.add(edge.guard, holds(enc, edge, "pre", list(range_facts(enc.program))))
    if goal is not None:
        loop, k = goal
        solver.add(z3.Not(holds(enc, edge, "post", [parts[loop][k]])))
    tracked = {z3.Bool(f"c!{k}"): k for k in range(len(parts[edge.src]))}
    for lit, k in tracked.items():
        solver.add(z3.Implies(lit, holds(enc, edge, "pre", [parts[edge.src][k]])))
    if solver.check(*tracked) != z3.unsat:
        return None
    return {tracked[lit] for lit in solver.unsat_core() if lit in tracked}
