"""Inputs that reach a loop head, from Z3 models of the path leading there.

Random inputs rarely satisfy preconditions such as `assume(x >= 1 && x <= 100)` or
`if (!(a > 0)) return 0;`. This module executes the program symbolically (forking at each `if`,
unrolling each loop at most `unroll` times, giving up on arrays) and records, for each loop,
the path condition of the first arrivals at its head. Z3 models of those conditions, pushed
towards random small boxes for variety, give input prefixes in the order the interpreter takes
them. The interpreter has the last word: a seed that does not really reach the loop is harmless.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import z3
from quokka.verifier.ir import (
    Assert,
    Assign,
    Assume,
    Block,
    Break,
    Continue,
    Havoc,
    If,
    IntType,
    Loop,
    Program,
    Return,
    Scope,
    Stmt,
)
from quokka.verifier.smt import Translator, const, in_range


class _GiveUp(Exception):
    """The path uses something the seed search does not model, or the search ran too long."""


@dataclass
class _Path:
    env: dict[str, z3.ExprRef]
    conds: list[z3.BoolRef] = field(default_factory=list)
    inputs: list[z3.ArithRef] = field(default_factory=list)
    reached: set[str] = field(default_factory=set)

    def fork(self, cond: z3.BoolRef) -> _Path:
        return _Path(dict(self.env), [*self.conds, cond], list(self.inputs), set(self.reached))


@dataclass(frozen=True)
class Target:
    """A path condition under which the head of `loop_id` is reached, over `inputs` in order."""

    loop_id: str
    conds: tuple[z3.BoolRef, ...]
    inputs: tuple[z3.ArithRef, ...]


Outcome = list[tuple[_Path, str | None]]  # paths and how they left a block (None: fell through)


class _Explorer:
    def __init__(self, program: Program, unroll: int, max_paths: int, deadline: float) -> None:
        self.types = program.var_types
        self.unroll = unroll
        self.max_paths = max_paths
        self.deadline = deadline
        self.targets: list[Target] = []
        self.fresh = 0

    def block(self, block: Block, paths: list[_Path]) -> Outcome:
        active, done = paths, []
        out: Outcome
        for stmt in block:
            nxt: list[_Path] = []
            for p in active:
                for q, signal in self.stmt(stmt, p):
                    (nxt.append(q) if signal is None else done.append((q, signal)))
            active = nxt[: self.max_paths]
            if time.monotonic() > self.deadline:
                raise _GiveUp("time")
        out = [(p, None) for p in active]
        return out + done

    def stmt(self, s: Stmt, p: _Path) -> Outcome:
        if isinstance(s, Assign):
            p.env[s.target] = Translator(p.env).term(s.value)
        elif isinstance(s, Havoc):
            self._havoc(s, p)
        elif isinstance(s, (Assume, Assert)):
            p.conds.append(Translator(p.env).formula(s.cond))
        elif isinstance(s, If):
            cond = Translator(p.env).formula(s.cond)
            return self.block(s.then, [p.fork(cond)]) + self.block(s.orelse, [p.fork(z3.Not(cond))])
        elif isinstance(s, Loop):
            return self._loop(s, p)
        elif isinstance(s, Scope):
            return [(q, None if sig == "return" else sig) for q, sig in self.block(s.body, [p])]
        elif isinstance(s, (Break, Continue, Return)):
            return [(p, type(s).__name__.lower())]
        return [(p, None)]

    def _havoc(self, s: Havoc, p: _Path) -> None:
        ty = self.types[s.target]
        if not isinstance(ty, IntType):
            raise _GiveUp("array input")
        self.fresh += 1
        x = const(f"input{self.fresh}", ty)
        p.conds.append(in_range(x, ty))
        p.inputs.append(x)
        p.env[s.target] = x

    def _loop(self, s: Loop, p: _Path) -> Outcome:
        heads, out = [p], []
        for iteration in range(self.unroll + 1):
            for h in heads:
                if s.id not in h.reached:
                    h.reached.add(s.id)
                    self.targets.append(Target(s.id, tuple(h.conds), tuple(h.inputs)))
            if iteration == self.unroll:
                break
            back = []
            for q, sig in self.block(s.body, heads):
                if sig in ("break", "return"):
                    out.append((q, None if sig == "break" else sig))
                else:
                    back.append(q)
            stepped = self.block(s.step, back)
            heads = [q for q, sig in stepped if sig is None]
            out += [(q, sig) for q, sig in stepped if sig == "return"]
        return out


def targets(
    program: Program, unroll: int = 2, max_paths: int = 32, deadline: float = float("inf")
) -> list[Target]:
    """Path conditions of arrivals at loop heads (possibly incomplete: see the module docstring)."""
    explorer = _Explorer(program, unroll, max_paths, deadline)
    zero_array = z3.K(z3.IntSort(), z3.IntVal(0))
    env = {d.name: z3.IntVal(0) if isinstance(d.type, IntType) else zero_array for d in program.variables}
    with contextlib.suppress(_GiveUp, RecursionError, KeyError, z3.Z3Exception):
        explorer.block(program.body, [_Path(env)])
    return explorer.targets


def models(target: Target, count: int, rng: random.Random, timeout_ms: int = 200) -> list[tuple[int, ...]]:
    """Up to `count` distinct input tuples satisfying the target's path condition."""
    solver = z3.Solver()
    solver.set("timeout", timeout_ms)
    solver.set("random_seed", rng.randint(0, 1 << 30))
    solver.add(*target.conds)
    out: list[tuple[int, ...]] = []
    for k in range(count):
        values = _model(solver, target.inputs, rng, radius=(4, 16, 64, 512)[k % 4])
        if values is None:
            break
        out.append(values)
        if not target.inputs:
            break
        solver.add(z3.Or([x != v for x, v in zip(target.inputs, values, strict=True)]))
    return out


def _model(
    solver: z3.Solver, inputs: Sequence[z3.ArithRef], rng: random.Random, radius: int
) -> tuple[int, ...] | None:
    """A model inside a random box around small values if there is one, else any model."""
    for boxed in (True, False):
        solver.push()
        if boxed:
            for x in inputs:
                center = rng.randint(-radius, radius)
                solver.add(x >= center - radius, x <= center + radius)
        result = solver.check()
        if result == z3.sat:
            m = solver.model()
            values = tuple(m.eval(x, model_completion=True).as_long() for x in inputs)
            solver.pop()
            return values
        solver.pop()
    return None


def seed_inputs(
    program: Program, rng: random.Random, deadline: float, per_loop: int = 12, unroll: int = 2
) -> list[tuple[int, ...]]:
    """Input prefixes that reach the loop heads, `per_loop` for each loop (interleaved)."""
    found = targets(program, unroll, deadline=deadline)
    by_loop: dict[str, list[tuple[int, ...]]] = {}
    for t in found:
        have = by_loop.setdefault(t.loop_id, [])
        if len(have) < per_loop and time.monotonic() < deadline:
            try:
                have.extend(models(t, per_loop - len(have), rng))
            except z3.Z3Exception:
                continue
    columns = list(by_loop.values())
    return [col[i] for i in range(per_loop) for col in columns if i < len(col)]
