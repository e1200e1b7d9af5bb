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

MAX_FAILURES = 4  # unsatisfiable or unknown queries before a path condition is given up


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
    """A path condition under which the head of `loop_id` is reached, over `inputs` in order;
    `state` holds the values of the integer variables there (as terms over the inputs)."""

    loop_id: str
    conds: tuple[z3.BoolRef, ...]
    inputs: tuple[z3.ArithRef, ...]
    state: tuple[z3.ArithRef, ...] = ()


Outcome = list[tuple[_Path, str | None]]  # paths and how they left a block (None: fell through)


class _Explorer:
    def __init__(self, program: Program, unroll: int, max_paths: int, deadline: float) -> None:
        self.types = program.var_types
        self.unroll = unroll
        self.max_paths = max_paths
        self.deadline = deadline
        self.targets: list[Target] = []
        self.fresh = 0
        self.int_vars = [d.name for d in program.variables if isinstance(d.type, IntType)]

    def block(self, block: Block, paths: list[_Path]) -> Outcome:
        active, done = paths, []
        for stmt in block:
            results = [r for p in active for r in self.stmt(stmt, p)]
            done += [(q, signal) for q, signal in results if signal is not None]
            active = [q for q, signal in results if signal is None][: self.max_paths]
            if time.monotonic() > self.deadline:
                raise _GiveUp("time")
        out: Outcome = [(p, None) for p in active]
        return out + done

    def stmt(self, s: Stmt, p: _Path) -> Outcome:
        if isinstance(s, Assign):
            p.env[s.target] = Translator(p.env).term(s.value)
        elif isinstance(s, Havoc):
            self._havoc(s, p)
        elif isinstance(s, (Assume, Assert)):
            cond = Translator(p.env).formula(s.cond)
            if z3.is_false(z3.simplify(cond)):
                return []  # assume(0), abort(), or an assertion that fails on every path
            p.conds.append(cond)
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
                    state = tuple(h.env[v] for v in self.int_vars)
                    self.targets.append(Target(s.id, tuple(h.conds), tuple(h.inputs), state))
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


class _TargetSolver:
    """Models of one target's path condition, one at a time: after the first, the smallest and
    largest value of each input the loop-head state depends on (bounds such as `x <= 100` from
    `assume(x <= 100)` are reached), then distinct models in random boxes."""

    def __init__(self, target: Target, rng: random.Random, timeout_ms: int) -> None:
        self.target = target
        self.rng = rng
        self.timeout_ms = timeout_ms
        self.solver = z3.Solver()
        self.solver.set("timeout", timeout_ms)
        self.solver.set("random_seed", rng.randint(0, 1 << 30))
        self.solver.add(*target.conds)
        self.count = 0
        self.failures = 0
        self.exhausted = False
        used = _constants(target.state)
        self.relevant = {k for k, x in enumerate(target.inputs) if x.get_id() in used}
        self.extremes = [(k, up) for k in sorted(self.relevant) for up in (False, True)]

    def next(self) -> tuple[int, ...] | None:
        if self.exhausted:
            return None
        while self.count > 0 and self.extremes:
            extreme = self._extreme(*self.extremes.pop(0))
            if extreme is not None:
                self._block(extreme)
                return extreme
        inputs = self.target.inputs
        try:
            values = _model(self.solver, inputs, self.rng, radius=(4, 16, 64, 512)[self.count % 4])
        except z3.Z3Exception:
            values = None
        self.count += 1
        self.failures += values is None
        if self.failures >= MAX_FAILURES or not inputs:
            self.exhausted = True
        if values is not None and inputs:
            self._block(values)
        return values

    def _extreme(self, k: int, up: bool) -> tuple[int, ...] | None:
        """A model with input k as large (`up`) or as small as the path condition allows."""
        opt = z3.Optimize()
        opt.set("timeout", self.timeout_ms)
        opt.add(*self.target.conds)
        x = self.target.inputs[k]
        if up:
            opt.maximize(x)
        else:
            opt.minimize(x)
        try:
            if opt.check() != z3.sat:
                return None
            m = opt.model()
            return tuple(m.eval(y, model_completion=True).as_long() for y in self.target.inputs)
        except z3.Z3Exception:
            return None

    def _block(self, values: tuple[int, ...]) -> None:
        """Ask for other values of the inputs the state at the loop head depends on (inputs that
        are overwritten before the loop make no new state)."""
        relevant = self.relevant or set(range(len(values)))
        inputs = self.target.inputs
        self.solver.add(z3.Or([inputs[k] != values[k] for k in sorted(relevant)]))


def _constants(terms: Sequence[z3.ExprRef]) -> set[int]:
    """The ids of the constants (variables) the terms mention."""
    seen: set[int] = set()
    out: set[int] = set()
    stack = list(terms)
    while stack:
        t = stack.pop()
        if t.get_id() in seen:
            continue
        seen.add(t.get_id())
        if z3.is_const(t) and t.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            out.add(t.get_id())
        stack.extend(t.children())
    return out


class SeedSource:
    """Input prefixes reaching each loop head, made on demand from Z3 models.

    The symbolic exploration runs once, when the source is made (until `deadline`); each
    `next(loop_id)` asks the next of that loop's path conditions for a new distinct model.
    """

    def __init__(
        self, program: Program, rng: random.Random, deadline: float, unroll: int = 2, timeout_ms: int = 200
    ) -> None:
        self.by_loop: dict[str, list[_TargetSolver]] = {}
        for t in targets(program, unroll, deadline=deadline):
            self.by_loop.setdefault(t.loop_id, []).append(_TargetSolver(t, rng, timeout_ms))
        self._turn: dict[str, int] = {}

    def available(self, loop_id: str) -> bool:
        return any(not ts.exhausted for ts in self.by_loop.get(loop_id, ()))

    def next(self, loop_id: str) -> tuple[int, ...] | None:
        """A new input prefix for `loop_id` (its path conditions take turns), or None."""
        solvers = self.by_loop.get(loop_id, [])
        while self.available(loop_id):
            k = self._turn.get(loop_id, 0)
            self._turn[loop_id] = k + 1
            values = solvers[k % len(solvers)].next()
            if values is not None:
                return values
        return None


def models(target: Target, count: int, rng: random.Random, timeout_ms: int = 200) -> list[tuple[int, ...]]:
    """Up to `count` distinct input tuples satisfying the target's path condition."""
    solver = _TargetSolver(target, rng, timeout_ms)
    out = []
    for _ in range(count):
        values = solver.next()
        if values is None:
            break
        out.append(values)
    return out


def _model(
    solver: z3.Solver, inputs: Sequence[z3.ArithRef], rng: random.Random, radius: int
) -> tuple[int, ...] | None:
    """A model with about half the inputs in random boxes around small values if there is one,
    else any model (None when Z3 gives up: non-linear conditions)."""
    for boxed in (True, False):
        solver.push()
        if boxed:
            for x in inputs:
                if rng.random() < 0.5:
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
