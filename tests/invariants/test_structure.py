"""Reading the head of a loop: inlined assertions, exit tests, variable order, constants."""

from quokka.invariants.structure import (
    after_loop,
    assigned_in,
    comparisons,
    find_loop,
    loop_head,
    negate,
    preference,
    program_constants,
    substitute,
)
from quokka.verifier.builder import ProgramBuilder, add, eq, ge, le, lt, mul, not_, num
from quokka.verifier.ir import INT, Assert, Assign, Const, If, Return, Scope, Unary, Var
from quokka.verifier.printer import format_expr


def _inlined_assert(param: Var, cond) -> Scope:
    """What the frontend makes of `__VERIFIER_assert(cond)`."""
    fail = If(Unary("!", param, INT), (Assert(Const(0, INT)),), ())
    return Scope("__VERIFIER_assert", (Assign(param.name, cond), fail, Return()))


def _program():
    b = ProgramBuilder("p.c")
    x, y, n = b.var("x"), b.var("y"), b.var("n")
    c1, c2 = b.var("cond", kind="param"), b.var("cond_1", kind="param")
    b.havoc(n)
    with b.loop() as loop_id:
        b.emit(_inlined_assert(c1, eq(y, mul(num(2), x))))
        b.emit(_inlined_assert(c2, le(x, n)))
        b.if_break(not_(lt(x, n)))
        b.assign(x, add(x, num(1)))
        b.check(ge(x, num(1)))  # after a write: not a head assertion
        b.assign(y, add(y, num(2)))
    return b.build(), loop_id


def test_inlined_assertions_and_exit_tests_are_read_over_loop_variables():
    program, loop_id = _program()
    head = loop_head(find_loop(program, loop_id), frozenset({"x", "y", "n"}))
    assert [format_expr(e) for e in head.asserted] == ["y == 2*x", "x <= n"]
    assert [format_expr(e) for e in head.exits] == ["!(x < n)"]
    assert [format_expr(c) for c in comparisons(head.exits[0])] == ["x < n"]


def test_scanning_stops_at_the_first_write_to_a_loop_variable():
    program, loop_id = _program()
    head = loop_head(find_loop(program, loop_id), frozenset({"x", "y", "n", "cond"}))
    assert head.asserted == []  # `cond = ...` now writes a protected variable


def test_preference_puts_later_writes_first_and_parameters_last():
    program, loop_id = _program()
    loop = find_loop(program, loop_id)
    assert assigned_in(loop) == ["cond", "cond_1", "x", "y"]
    assert preference(["n", "x", "y"], loop) == ["y", "x", "n"]


def test_negate_and_substitute():
    x, y = Var("x", INT), Var("y", INT)
    assert format_expr(negate(lt(x, y))) == "x >= y"
    assert format_expr(negate(not_(eq(x, y)))) == "x == y"
    assert format_expr(negate(x)) == "!x"
    e = substitute(add(x, y), {"x": mul(num(3), y)})
    assert format_expr(e) == "3*y + y"


def test_program_constants():
    program, _ = _program()
    assert program_constants(program) == {0, 1, 2}


def test_assertions_after_the_loop_become_implications():
    b = ProgramBuilder("post.c")
    x, y, c = b.var("x"), b.var("y"), b.var("cond", kind="param")
    with b.loop() as loop_id:
        b.if_break(ge(x, num(5)))
        b.assign(x, add(x, num(1)))
    b.if_(eq(x, num(20)), (_inlined_assert(c, le(y, x)),))
    b.check(ge(x, num(0)))
    program = b.build()
    after = after_loop(program, loop_id, frozenset({"x", "y"}))
    assert [format_expr(e) for e in after] == ["x != 20 || y <= x", "x >= 0"]
