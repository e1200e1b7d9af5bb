"""Differential test of BMC against the interpreter on random structured programs.

For each random program: an UNSAFE answer must replay (BMC checks that itself, a failure shows
as stats["replay"] == "failed"); a complete unwinding without error must agree with random
concrete runs (none may reach an error); and an error some random run reaches within the
bound must be found.
"""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from quokka.verifier import ir
from quokka.verifier.engines import bmc
from quokka.verifier.engines.base import Budget, Status
from quokka.verifier.errors import Coord
from quokka.verifier.exec.interp import run
from quokka.verifier.ir.builder import cast, num
from quokka.verifier.ir.printer import format_program

UCHAR = ir.IntType("unsigned char", 8, False)
MAX_BOUND = 8


class _Gen:
    """A random program: int x, y, z, unsigned char u; loops bounded by fresh counters."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.file = f"fuzz{seed}.c"
        self.vars = [ir.Var("x", ir.INT), ir.Var("y", ir.INT), ir.Var("z", ir.INT), ir.Var("u", UCHAR)]
        self.decls = [ir.VarDecl(v.name, v.type, "local", v.name) for v in self.vars]
        self.loops: list[ir.LoopInfo] = []
        self.line = 0

    def coord(self) -> Coord:
        self.line += 1
        return Coord(self.file, self.line, 1)

    def program(self) -> ir.Program:
        body = self.block(0, in_loop=False)
        main = ir.Scope("main", body, Coord(self.file, 0, 0))
        return ir.Program(self.file, "LP64", tuple(self.decls), (main,), tuple(self.loops))

    # --- expressions (all of type int)

    def leaf(self) -> ir.Expr:
        r = self.rng.random()
        if r < 0.6:
            v = self.rng.choice(self.vars)
            return v if v.type == ir.INT else cast(v, ir.INT)
        return num(self.rng.randint(-3, 5))

    def expr(self, depth: int = 0) -> ir.Expr:
        if depth >= 2 or self.rng.random() < 0.35:
            return self.leaf()
        kind = self.rng.random()
        a, b = self.expr(depth + 1), self.expr(depth + 1)
        if kind < 0.45:
            return ir.Binary(self.rng.choice("+-*+-"), a, b, ir.INT)
        if kind < 0.55:
            divisor = b if self.rng.random() < 0.2 else num(self.rng.choice([-3, -2, 2, 3, 5]))
            return ir.Binary(self.rng.choice("/%"), a, divisor, ir.INT)
        if kind < 0.75:
            return ir.Binary(self.rng.choice(["<", "<=", "==", "!=", ">", ">="]), a, b, ir.INT)
        if kind < 0.85:
            return ir.Binary(self.rng.choice(["&&", "||"]), a, b, ir.INT)
        if kind < 0.92:
            return ir.Ite(self.cond(), a, b, ir.INT)
        negated = ir.Unary("-", a, ir.INT)
        return self.rng.choice([negated, cast(cast(a, UCHAR), ir.INT), ir.Unary("!", a, ir.INT)])

    def cond(self) -> ir.Expr:
        op = self.rng.choice(["<", "<=", "==", "!=", ">", ">="])
        return ir.Binary(op, self.leaf(), self.expr(1), ir.INT)

    def weak_cond(self) -> ir.Expr:
        """A condition that most states satisfy: `e != k`."""
        return ir.Binary("!=", self.expr(1), num(self.rng.randint(-3, 12)), ir.INT)

    # --- statements

    def block(self, depth: int, in_loop: bool) -> tuple[ir.Stmt, ...]:
        size = self.rng.randint(4, 8) if depth == 0 else self.rng.randint(1, 4)
        return tuple(s for _ in range(size) for s in self.stmt(depth, in_loop))

    def stmt(self, depth: int, in_loop: bool) -> list[ir.Stmt]:
        r = self.rng.random()
        if r < 0.25:
            return [self.assign()]
        if r < 0.40:
            return self.havoc()
        if r < 0.55:
            return [ir.Assert(self.weak_cond(), self.coord(), None)]
        if r < 0.65 and depth < 3:
            then, orelse = self.block(depth + 1, in_loop), self.block(depth + 1, in_loop)
            return [ir.If(self.cond(), then, orelse, self.coord())]
        if r < 0.77 and depth < 2:
            return self.loop(depth)
        if r < 0.82 and depth < 2:
            return [self.scope(depth)]
        if r < 0.85:
            return [ir.Assume(self.weak_cond(), self.coord())]
        if r < 0.92 and in_loop:
            jump: ir.Stmt = self.rng.choice([ir.Break(self.coord()), ir.Continue(self.coord())])
            return [ir.If(self.cond(), (jump,), (), self.coord())]
        if r < 0.95:
            return [ir.If(self.cond(), (ir.Return(self.coord()),), (), self.coord())]
        return [self.assign()]

    def scope(self, depth: int) -> ir.Scope:
        return ir.Scope("f", self.block(depth + 1, False), self.coord())

    def assign(self) -> ir.Assign:
        target = self.rng.choice(self.vars)
        value = self.expr()
        return ir.Assign(target.name, value if target.type == ir.INT else cast(value, UCHAR), self.coord())

    def havoc(self) -> list[ir.Stmt]:
        target = self.rng.choice(self.vars)
        out: list[ir.Stmt] = [ir.Havoc(target.name, self.coord())]
        if target.type == ir.INT and self.rng.random() < 0.8:
            low = ir.Binary(">=", target, num(-3), ir.INT)
            high = ir.Binary("<=", target, num(4), ir.INT)
            out.append(ir.Assume(ir.Binary("&&", low, high, ir.INT), self.coord()))
        return out

    def loop(self, depth: int) -> list[ir.Stmt]:
        k = len(self.loops)
        counter = ir.Var(f"c{k}", ir.INT)
        self.decls.append(ir.VarDecl(counter.name, ir.INT, "local", counter.name))
        coord = self.coord()
        self.loops.append(ir.LoopInfo(f"L{k}", coord, coord.line - 1, ()))
        limit = self.rng.choice([num(self.rng.randint(0, 5)), self.rng.choice(self.vars[:3])])
        head = (
            ir.If(ir.Binary(">=", counter, limit, ir.INT), (ir.Break(self.coord()),), (), self.coord()),
            ir.Assign(counter.name, ir.Binary("+", counter, num(1), ir.INT), self.coord()),
        )
        body = head + self.block(depth + 1, in_loop=True)
        return [ir.Assign(counter.name, num(0), self.coord()), ir.Loop(f"L{k}", body, (), coord)]


class _GotoGen(_Gen):
    """Also loops made of a label and a backward goto, and gotos to the head or past the end of
    an enclosing goto loop (from inside nested loops too: exits of several levels at once, and
    straight to an outer loop's head)."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.targets: list[tuple[str, str]] = []  # (head, end) labels of the enclosing goto loops

    def stmt(self, depth: int, in_loop: bool) -> list[ir.Stmt]:
        r = self.rng.random()
        if r < 0.1 and self.targets:
            label = self.rng.choice(self.rng.choice(self.targets))
            # without a coordinate the goto's block is skipped: an inner loop's branch jumps
            # straight to the outer loop's head or end
            coord = self.coord() if self.rng.random() < 0.5 else None
            return [ir.If(self.cond(), (ir.Goto(label, coord),), (), self.coord())]
        if r < 0.18 and depth < 2:
            return self.goto_loop(depth, in_loop)
        return super().stmt(depth, in_loop)

    def scope(self, depth: int) -> ir.Scope:
        outer, self.targets = self.targets, []  # labels are local to a function
        try:
            return super().scope(depth)
        finally:
            self.targets = outer

    def goto_loop(self, depth: int, in_loop: bool) -> list[ir.Stmt]:
        k = len(self.loops)
        counter = ir.Var(f"c{k}", ir.INT)
        self.decls.append(ir.VarDecl(counter.name, ir.INT, "local", counter.name))
        coord = self.coord()
        self.loops.append(ir.LoopInfo(f"G{k}", coord, coord.line, ()))
        limit = self.rng.choice([num(self.rng.randint(0, 5)), self.rng.choice(self.vars[:3])])
        head, end = f"head{k}", f"end{k}"
        self.targets.append((head, end))
        body = self.block(depth + 1, in_loop)
        self.targets.pop()
        return [
            ir.Assign(counter.name, num(0), self.coord()),
            ir.Label(head, coord, f"G{k}"),
            ir.If(ir.Binary(">=", counter, limit, ir.INT), (ir.Goto(end, self.coord()),), (), self.coord()),
            ir.Assign(counter.name, ir.Binary("+", counter, num(1), ir.INT), self.coord()),
            *body,
            ir.Goto(head, self.coord()),
            ir.Label(end, self.coord()),
        ]


def _random_inputs(rng: random.Random) -> list[int]:
    return [rng.randint(-4, 5) for _ in range(200)]


def _max_iterations(heads: tuple[object, ...]) -> int:
    return max((h.iteration for h in heads), default=0)  # type: ignore[attr-defined]


def check_one(seed: int, runs: int = 150, solving: str = "incremental", gen: type[_Gen] = _Gen) -> str:
    program = gen(seed).program()
    result = bmc.check(program, Budget.of(20), max_bound=MAX_BOUND, solving=solving)
    assert result.stats.get("replay") != "failed", (seed, result.reason)
    assert "cannot unroll" not in result.reason, (seed, result.reason)
    rng = random.Random(seed)
    witness = None
    for _ in range(runs):
        ex = run(program, _random_inputs(rng), max_steps=20_000)
        if ex.outcome == "error" and not ex.overflows and _max_iterations(ex.loop_heads) < MAX_BOUND:
            witness = ex
            break
    if result.status is Status.UNSAFE:
        return "unsafe"
    if result.status is Status.SAFE:  # a complete unwinding without undefined behaviour
        assert witness is None and result.stats.get("complete"), (seed, witness)
        return "complete"
    assert result.status is Status.UNKNOWN
    if witness is not None:
        assert "gave up" in result.reason or "timeout" in result.reason, (seed, result.reason, witness)
        return "timeout"
    return "complete" if result.stats.get("complete") else "bounded"


@pytest.mark.parametrize("chunk", range(4))
def test_random_programs_agree_with_the_interpreter(chunk: int) -> None:
    outcomes = [check_one(seed) for seed in range(chunk * 25, chunk * 25 + 25)]
    assert outcomes.count("unsafe") >= 1  # the generator does produce reachable errors
    assert outcomes.count("complete") >= 10


def test_random_programs_agree_in_probing_mode() -> None:
    outcomes = [check_one(seed, solving="fresh") for seed in range(200, 230)]
    assert outcomes.count("unsafe") >= 1
    assert outcomes.count("complete") >= 10


def test_random_goto_programs_agree_with_the_interpreter() -> None:
    outcomes = [check_one(seed, gen=_GotoGen) for seed in range(20)]
    outcomes += [check_one(seed, solving="fresh", gen=_GotoGen) for seed in range(20, 30)]
    assert outcomes.count("unsafe") >= 1
    assert outcomes.count("complete") >= 10


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_many_random_programs() -> None:
    outcomes = [check_one(seed, runs=300) for seed in range(100, 600)]
    assert outcomes.count("unsafe") >= 50


def test_generator_is_deterministic() -> None:
    program = _Gen(7).program()
    assert program == _Gen(7).program()
    text = format_program(program).splitlines()  # seed 7's program, as random.Random(7) draws it
    assert text[6:8] == ["  if (-2 != y + (int)u) {", "    return;"]
    assert "    assert(x + (int)u != 9);" in text and program.loops == ()
    assert replace(_Gen(7).program(), file="x") != _Gen(8).program()
