"""Inputs that reach a loop head, from Z3 models of the path leading there.

Random inputs rarely satisfy preconditions such as `assume(x >= 1 && x <= 100)` or
`if (!(a > 0)) return 0;`. This module executes the program symbolically on its control-flow
graph (forking at each branch, unrolling each loop at most `unroll` times, giving up on arrays
and on programs with floating point)
and records, for each loop, the path condition of the first arrivals at its head. Z3 models of
those conditions, pushed towards random small boxes for variety, give input prefixes in the order
the interpreter takes them. The interpreter has the last word: a seed that does not really reach
the loop is harmless.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import z3
from quokka.verifier.cfg import Branch, Cfg, Jump, Simple, build_cfg
from quokka.verifier.encode import constants
from quokka.verifier.encode.smt import Translator, const, in_range
from quokka.verifier.ir import Assign, Havoc, IntType, Program, uses_floats

MAX_FAILURES = 4  # unsatisfiable or unknown queries before a path condition is given up


class _GiveUp(Exception):
    """The path uses something the seed search does not model, or the search ran too long."""


@dataclass
class _Path:
    """One symbolic path; `rank` lists its branch choices (0: taken, 1: not taken)."""

    env: dict[str, z3.ExprRef]
    conds: list[z3.BoolRef] = field(default_factory=list)
    inputs: list[z3.ArithRef] = field(default_factory=list)
    reached: set[str] = field(default_factory=set)
    rank: tuple[int, ...] = ()

    def fork(self, cond: z3.BoolRef, choice: int) -> _Path:
        return _Path(
            dict(self.env), [*self.conds, cond], list(self.inputs), set(self.reached), (*self.rank, choice)
        )


@dataclass(frozen=True)
class Target:
    """A path condition under which the head of `loop_id` is reached, over `inputs` in order;
    `state` holds the values of the integer variables there (as terms over the inputs)."""

    loop_id: str
    conds: tuple[z3.BoolRef, ...]
    inputs: tuple[z3.ArithRef, ...]
    state: tuple[z3.ArithRef, ...] = ()


class _Explorer:
    """Runs all paths together, block by block in the graph's order, keeping at each block the
    first `max_paths` arrivals (by their branch choices, taken branch first).

    A loop runs in rounds: its entering paths, then those back at its head after each pass over
    its body, at most `unroll` passes. The paths that leave it wait at their targets, which come
    later in the order. `regions[loop]` lists the blocks a pass runs: those of the loop outside
    its inner loops, and the heads of its inner loops (`None`: the code outside every loop).
    """

    def __init__(self, cfg: Cfg, unroll: int, max_paths: int, deadline: float) -> None:
        self.cfg = cfg
        self.types = cfg.program.var_types
        self.unroll = unroll
        self.max_paths = max_paths
        self.deadline = deadline
        self.targets: list[Target] = []
        self.fresh = 0
        self.int_vars = [d.name for d in cfg.program.variables if isinstance(d.type, IntType)]
        self.waiting: dict[int, list[_Path]] = {}
        self.regions: dict[str | None, list[int]] = {}
        for b in cfg.order:
            self.regions.setdefault(self._region(b), []).append(b)

    def _region(self, block: int) -> str | None:
        loop: str | None = self.cfg.loop_of(block)
        if loop is not None and self.cfg.head(loop) == block:
            loop = self.cfg.loops[loop].parent
        return loop

    def explore(self, start: _Path) -> None:
        self.waiting[self.cfg.entry] = [start]
        self._pass(None)

    def _pass(self, region: str | None) -> None:
        for b in self.regions.get(region, ()):
            paths = self._take(b)
            head = self.cfg.blocks[b].head
            if paths and head is not None:
                self._loop(head, paths)
            elif paths:
                self._run(b, paths)

    def _take(self, block: int) -> list[_Path]:
        return sorted(self.waiting.pop(block, []), key=lambda p: p.rank)[: self.max_paths]

    def _loop(self, loop_id: str, paths: list[_Path]) -> None:
        head = self.cfg.head(loop_id)
        for iteration in range(self.unroll + 1):
            for p in paths:
                self._arrive(loop_id, p)
            if iteration == self.unroll:
                return
            self._run(head, paths)
            self._pass(loop_id)
            paths = self._take(head)

    def _arrive(self, loop_id: str, p: _Path) -> None:
        if loop_id not in p.reached:
            p.reached.add(loop_id)
            state = tuple(p.env[v] for v in self.int_vars)
            self.targets.append(Target(loop_id, tuple(p.conds), tuple(p.inputs), state))

    def _run(self, block: int, paths: list[_Path]) -> None:
        """Run the block's statements on `paths`, then send them on to its successors."""
        bb = self.cfg.blocks[block]
        for s in bb.stmts:
            paths = [p for p in paths if self._stmt(s, p)]
        if time.monotonic() > self.deadline:
            raise _GiveUp("time")
        end = bb.end
        if isinstance(end, Jump):
            self.waiting.setdefault(end.target, []).extend(paths)
        elif isinstance(end, Branch):
            for p in paths:
                cond = Translator(p.env).formula(end.cond)
                self.waiting.setdefault(end.then, []).append(p.fork(cond, 0))
                self.waiting.setdefault(end.orelse, []).append(p.fork(z3.Not(cond), 1))

    def _stmt(self, s: Simple, p: _Path) -> bool:
        """Run `s` on `p`; False when the path ends there."""
        if isinstance(s, Assign):
            p.env[s.target] = Translator(p.env).term(s.value)
        elif isinstance(s, Havoc):
            self._havoc(s, p)
        else:
            cond = Translator(p.env).formula(s.cond)
            if z3.is_false(z3.simplify(cond)):
                return False  # assume(0), abort(), or an assertion that fails on every path
            p.conds.append(cond)
        return True

    def _havoc(self, s: Havoc, p: _Path) -> None:
        ty = self.types[s.target]
        if not isinstance(ty, IntType):
            raise _GiveUp("array input")
        self.fresh += 1
        x = const(f"input{self.fresh}", ty)
        p.conds.append(in_range(x, ty))
        p.inputs.append(x)
        p.env[s.target] = x


def targets(
    program: Program, unroll: int = 2, max_paths: int = 32, deadline: float = float("inf")
) -> list[Target]:
    """Path conditions of arrivals at loop heads (possibly incomplete: see the module docstring)."""
    if uses_floats(program):
        return []
    explorer = _Explorer(build_cfg(program), unroll, max_paths, deadline)
    zero_array = z3.K(z3.IntSort(), z3.IntVal(0))
    env = {d.name: z3.IntVal(0) if isinstance(d.type, IntType) else zero_array for d in program.variables}
    with contextlib.suppress(_GiveUp, RecursionError, KeyError, z3.Z3Exception):
        explorer.explore(_Path(env))
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
        used = {c.get_id() for c in constants(target.state).values()}
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
