"""Deliberately wrong invariants for soundness tests: mutations of right ones and generic guesses."""

from __future__ import annotations

import random
from collections.abc import Mapping

from quokka.verifier.ir import INT, Binary, Const, Expr, IntType, Program, Unary, Var, conjuncts
from quokka.verifier.ir.builder import conjunction

_FLIP = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}
_WEAKEN = {"<": "<=", ">": ">=", "==": "<=", "<=": "<", ">=": ">"}


conjoin = conjunction


def _mutate_once(e: Expr, rng: random.Random) -> Expr:
    """One random local change: flip or weaken a comparison, or move a constant by one."""
    if isinstance(e, Binary) and e.op in _FLIP and rng.random() < 0.4:
        table = _FLIP if rng.random() < 0.5 else _WEAKEN
        return Binary(table.get(e.op, e.op), e.left, e.right, e.type)
    if isinstance(e, Const) and isinstance(e.type, IntType):
        value = e.value + rng.choice((-1, 1))
        return Const(value, e.type) if e.type.min <= value <= e.type.max else e
    if isinstance(e, Binary):
        if rng.random() < 0.5:
            return Binary(e.op, _mutate_once(e.left, rng), e.right, e.type)
        return Binary(e.op, e.left, _mutate_once(e.right, rng), e.type)
    if isinstance(e, Unary):
        return Unary(e.op, _mutate_once(e.operand, rng), e.type)
    return e


def mutate(inv: Expr, rng: random.Random) -> Expr:
    """A mutant of `inv`: a dropped conjunct or a local change."""
    parts = conjuncts(inv)
    if len(parts) > 1 and rng.random() < 0.3:
        parts.pop(rng.randrange(len(parts)))
        return conjoin(parts)
    return conjoin([_mutate_once(p, rng) if rng.random() < 0.6 else p for p in parts])


def guesses(program: Program) -> list[Expr]:
    """Simple candidate invariants over the program's int variables (most are wrong)."""
    ints = [Var(v.name, v.type) for v in program.variables if v.type == INT]
    out: list[Expr] = []
    for a in ints:
        for c in (-1, 0, 1, 5):
            out += [Binary(op, a, Const(c, INT), INT) for op in ("<=", ">=", "==")]
        for b in ints:
            if a.name < b.name:
                out += [Binary(op, a, b, INT) for op in ("<", "<=", "==", ">=")]
    return out


def mutant_maps(
    program: Program, right: Mapping[str, Expr] | None, count: int, seed: int
) -> list[dict[str, Expr]]:
    """`count` invariant maps: mutants of `right` where given, else random guesses per loop."""
    rng = random.Random(seed)
    pool = guesses(program)
    loops = [info.id for info in program.loops]
    maps: list[dict[str, Expr]] = []
    for _ in range(count):
        m: dict[str, Expr] = {}
        for loop in loops:
            if right and loop in right:
                m[loop] = mutate(right[loop], rng)
            elif pool:
                m[loop] = conjoin(rng.sample(pool, min(len(pool), rng.randint(1, 3))))
        maps.append(m)
    return maps
