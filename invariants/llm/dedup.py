"""Drop candidates that are semantically equal to an earlier one of the same loop.

Cheap first: identical IR, then a fingerprint (the truth value at a few fixed points, computed by
Z3's simplifier with the IR's exact semantics) groups the rest, and only candidates with equal
fingerprints get an equivalence query (Z3, a few milliseconds, variables within their types).
A query that times out counts as "different": both candidates stay.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import z3
from quokka.verifier.ir import Expr, IntType, Program, free_vars
from quokka.verifier.smt import Translator, const, in_range

from ..protocol import Candidate

POINTS = 6
QUERY_TIMEOUT_MS = 50
MAX_QUERIES = 200


@dataclass
class _Loop:
    """The accepted candidates of one loop with their Z3 formulas and fingerprints."""

    kept: list[tuple[Candidate, z3.BoolRef, tuple[bool | None, ...]]]


def _point_value(rng: random.Random, ty: IntType) -> int:
    value = rng.choice([rng.randint(-8, 8), rng.randint(-100, 100), rng.randint(0, 3)])
    return int(min(max(value, ty.min), ty.max))


class Deduplicator:
    """Remembers what it has kept, per loop; `fresh` says whether a candidate is new."""

    def __init__(self, program: Program, seed: int = 0) -> None:
        self.types = program.var_types
        self.env = {name: const(name, ty) for name, ty in self.types.items()}
        rng = random.Random(seed)
        ints = {n: t for n, t in self.types.items() if isinstance(t, IntType)}
        self.points = [
            [(self.env[n], z3.IntVal(_point_value(rng, t))) for n, t in ints.items()] for _ in range(POINTS)
        ]
        self.loops: dict[str, _Loop] = {}
        self.queries = 0

    def _fingerprint(self, f: z3.BoolRef) -> tuple[bool | None, ...]:
        out: list[bool | None] = []
        for point in self.points:
            v = z3.simplify(z3.substitute(f, *point)) if point else z3.simplify(f)
            out.append(True if z3.is_true(v) else False if z3.is_false(v) else None)
        return tuple(out)

    def _equivalent(self, a: Expr, fa: z3.BoolRef, b: Expr, fb: z3.BoolRef) -> bool:
        if self.queries >= MAX_QUERIES:
            return False
        self.queries += 1
        solver = z3.Solver()
        solver.set("timeout", QUERY_TIMEOUT_MS)
        for name in free_vars(a) | free_vars(b):
            ty = self.types[name]
            if isinstance(ty, IntType):
                solver.add(in_range(self.env[name], ty))
        solver.add(fa != fb)
        return bool(solver.check() == z3.unsat)

    def fresh(self, c: Candidate) -> bool:
        """True (and remembered) when `c` differs from every candidate kept for its loop."""
        loop = self.loops.setdefault(c.loop_id, _Loop([]))
        if any(k.expr == c.expr for k, _, _ in loop.kept):
            return False
        f = Translator(self.env).formula(c.expr)
        fp = self._fingerprint(f)
        same = [(k, fk) for k, fk, pk in loop.kept if pk == fp]
        if any(self._equivalent(c.expr, f, k.expr, fk) for k, fk in same):
            return False
        loop.kept.append((c, f, fp))
        return True


def deduplicate(
    candidates: Sequence[Candidate], program: Program, dedup: Deduplicator | None = None
) -> list[Candidate]:
    """`candidates` without semantic repeats; of rejections, one per loop, text and reason."""
    dedup = dedup or Deduplicator(program)
    seen: set[tuple[str, str | None, str]] = set()
    out = []
    for c in candidates:
        if c.rejected:
            key = (c.loop_id, c.raw, c.rejected)
            if key not in seen:
                seen.add(key)
                out.append(c)
        elif dedup.fresh(c):
            out.append(c)
    return out
