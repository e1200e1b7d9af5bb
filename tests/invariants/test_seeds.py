"""The seed search on the control-flow graph: loops made by a backward `goto`."""

import random
import time

import z3
from quokka.verifier import ir
from quokka.verifier.encode.seeds import SeedSource, Target, targets
from quokka.verifier.errors import Coord

X, N = ir.Var("x", ir.INT), ir.Var("n", ir.INT)


def _num(v: int) -> ir.Const:
    return ir.Const(v, ir.INT)


def _op(op: str, a: ir.Var | ir.Const | ir.Binary, b: ir.Var | ir.Const | ir.Binary) -> ir.Binary:
    return ir.Binary(op, a, b, ir.INT)


def _goto_program(
    bound: int, after: tuple[ir.Stmt, ...] = (), loops: tuple[ir.LoopInfo, ...] = ()
) -> ir.Program:
    """x = nondet(); assume(10 <= x <= 20); n = 0; again: n++; if (n < bound) goto again; AFTER"""
    coord = Coord("goto.c", 3)
    body: tuple[ir.Stmt, ...] = (
        ir.Havoc("x"),
        ir.Assume(_op("&&", _op(">=", X, _num(10)), _op("<=", X, _num(20)))),
        ir.Assign("n", _num(0)),
        ir.Label("again", coord, loop="L1"),
        ir.Assign("n", _op("+", N, _num(1))),
        ir.If(_op("<", N, _num(bound)), (ir.Goto("again", coord),), ()),
        *after,
    )
    variables = (ir.VarDecl("x", ir.INT, "local", "x"), ir.VarDecl("n", ir.INT, "local", "n"))
    scope = (("x", "x"), ("n", "n"))
    info = ir.LoopInfo("L1", coord, 3, scope)
    return ir.Program("goto.c", "LP64", variables, (ir.Scope("main", body),), (info, *loops))


def test_a_goto_loop_head_is_a_target() -> None:
    program = _goto_program(5, (ir.Assert(_op(">=", N, _num(5))),))
    found = [t for t in targets(program) if t.loop_id == "L1"]
    assert len(found) == 1  # the paths back from the goto have reached the head before
    (target,) = found
    solver = z3.Solver()
    solver.add(*target.conds)
    (x,) = target.inputs
    assert solver.check(z3.Or(x < 10, x > 20)) == z3.unsat
    assert z3.simplify(target.state[1]).eq(z3.IntVal(0))  # n == 0 on the first arrival
    source = SeedSource(program, random.Random(0), time.monotonic() + 5)
    seeds = [source.next("L1") for _ in range(5)]
    assert all(s is not None and 10 <= s[0] <= 20 for s in seeds)


def test_a_goto_loop_is_unrolled_like_a_loop() -> None:
    """The loop after `again` is reached once the goto loop's body ran 3 times: unroll >= 3."""
    coord = Coord("goto.c", 7)
    inner = ir.Loop("L2", (ir.If(_op(">=", N, _num(9)), (), ()),), (), coord)
    program = _goto_program(3, (inner,), (ir.LoopInfo("L2", coord, 7, ()),))
    assert _feasible(targets(program, unroll=2), "L2") == []
    (found,) = _feasible(targets(program, unroll=3), "L2")
    assert z3.simplify(found.state[1]).eq(z3.IntVal(3))


def _feasible(found: list[Target], loop_id: str) -> list[Target]:
    """The targets of `loop_id` with a satisfiable path condition (branches are not pruned)."""
    return [t for t in found if t.loop_id == loop_id and z3.Solver().check(*t.conds) == z3.sat]
