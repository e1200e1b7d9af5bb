"""Questions about what an IR expression means, answered by Z3 under the IR's semantics (every
variable a value of its type): whether it holds for every value, and whether two are equivalent.

`Equivalence` answers the second cheaply first: a fingerprint (the truth value at a few fixed
points, computed by Z3's simplifier) tells most different expressions apart, and only those with
equal fingerprints get a solver query. A query that does not finish in time counts as "different".
"""

from __future__ import annotations

import random
from collections.abc import Mapping

import z3
from quokka.verifier.encode.smt import Translator, const, in_range
from quokka.verifier.ir import Expr, IntType, Type, free_vars

Fingerprint = tuple[bool | None, ...]
SolverError = z3.Z3Exception  # what a solver call may raise, for callers that do not import z3


def always_true(types: Mapping[str, Type], e: Expr, timeout_ms: int = 1000) -> bool:
    """`e` holds for every value of every variable (False also when Z3 does not decide in time)."""
    env = {name: const(name, ty) for name, ty in types.items()}
    solver = z3.Solver()
    solver.set(timeout=timeout_ms)
    for name, ty in types.items():
        if isinstance(ty, IntType):
            solver.add(in_range(env[name], ty))  # type: ignore[arg-type]
    try:
        solver.add(z3.Not(Translator(env).formula(e)))
        return bool(solver.check() == z3.unsat)
    except z3.Z3Exception:
        return False


class Equivalence:
    """Equivalence of expressions over the variables `types`; `fingerprint` is the cheap filter."""

    def __init__(
        self, types: Mapping[str, Type], seed: int = 0, points: int = 6, timeout_ms: int = 50
    ) -> None:
        self.types = dict(types)
        self.env = {name: const(name, ty) for name, ty in self.types.items()}
        self.timeout_ms = timeout_ms
        rng = random.Random(seed)
        ints = {n: t for n, t in self.types.items() if isinstance(t, IntType)}
        self.points = [
            [(self.env[n], z3.IntVal(_point_value(rng, t))) for n, t in ints.items()] for _ in range(points)
        ]
        self.formulas: dict[Expr, z3.BoolRef] = {}
        self.queries = 0

    def formula(self, e: Expr) -> z3.BoolRef:
        if e not in self.formulas:
            self.formulas[e] = Translator(self.env).formula(e)
        return self.formulas[e]

    def fingerprint(self, e: Expr) -> Fingerprint:
        """The truth value of `e` at each fixed point (None where the simplifier cannot tell)."""
        f, out = self.formula(e), []
        for point in self.points:
            v = z3.simplify(z3.substitute(f, *point)) if point else z3.simplify(f)
            out.append(True if z3.is_true(v) else False if z3.is_false(v) else None)
        return tuple(out)

    def equivalent(self, a: Expr, b: Expr) -> bool:
        """`a` and `b` agree on every value of their variables (False: not shown in time)."""
        self.queries += 1
        solver = z3.Solver()
        solver.set("timeout", self.timeout_ms)
        for name in free_vars(a) | free_vars(b):
            ty = self.types[name]
            if isinstance(ty, IntType):
                solver.add(in_range(self.env[name], ty))
        solver.add(self.formula(a) != self.formula(b))
        return bool(solver.check() == z3.unsat)


def _point_value(rng: random.Random, ty: IntType) -> int:
    value = rng.choice([rng.randint(-8, 8), rng.randint(-100, 100), rng.randint(0, 3)])
    return int(min(max(value, ty.min), ty.max))
