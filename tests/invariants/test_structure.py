"""Reading the head of a loop: inlined assertions, exit tests, variable order, constants."""

from quokka.invariants.structure import (
    after_loop,
    assigned_in,
    comparisons,
    enclosing_guards,
    find_loop,
    inner_assertions,
    loop_head,
    negate,
    path_facts,
    preference,
    program_constants,
    substitute,
)
from quokka.verifier.ir import INT, Assert, Assign, Assume, Const, If, Return, Scope, Unary, Var
from quokka.verifier.ir.builder import ProgramBuilder, add, eq, ge, le, lt, mul, not_, num
from quokka.verifier.ir.printer import format_expr


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


def _assume_abort_if_not(param: Var, cond) -> Scope:
    """What the frontend makes of `assume_abort_if_not(cond)`: abort is `assume(0)`."""
    stop = If(Unary("!", param, INT), (Assume(Const(0, INT)),), ())
    return Scope("assume_abort_if_not", (Assign(param.name, cond), stop, Return()))


def _early_return(param: Var, cond) -> Scope:
    """An inlined function that returns early when `cond` fails: its caller goes on."""
    return Scope("check", (Assign(param.name, cond), If(Unary("!", param, INT), (Return(),), ()), Return()))


def test_path_facts_are_the_assumptions_and_early_exits_on_the_way_to_the_loop():
    b = ProgramBuilder("path.c")
    x, n, m, k, t = b.var("x"), b.var("n"), b.var("m"), b.var("k"), b.var("t")
    c1, c2 = b.var("cond", kind="param"), b.var("cond_1", kind="param")
    for v in (n, m, k, t):
        b.havoc(v)
    b.if_(not_(le(n, num(100))), (Return(),))  # `if (!(n <= 100)) return;` in main
    b.emit(_assume_abort_if_not(c1, lt(num(0), m)))
    b.emit(_early_return(c2, ge(k, num(3))))  # returns from the helper only: k >= 3 is not known
    b.assume(ge(t, num(1)))
    b.assign(t, num(0))  # t written after its assumption: forgotten
    b.assign(x, num(0))
    with b.loop() as loop_id:
        b.if_break(ge(x, n))
        b.assign(x, add(x, num(1)))
    program = b.build()
    facts = path_facts(program, loop_id, frozenset({"x", "n", "m", "k", "t"}))
    assert [format_expr(e) for e in facts] == ["n <= 100", "0 < m"]


def test_path_facts_inside_a_branch_and_an_enclosing_loop():
    b = ProgramBuilder("branch.c")
    i, j, n = b.var("i"), b.var("j"), b.var("n")
    b.havoc(n)
    with b.loop() as outer:
        b.if_break(ge(i, n))
        b.assign(j, num(0))
        with b.block() as inner_body, b.loop() as inner:
            b.if_break(ge(j, num(10)))
            b.assign(j, add(j, num(1)))
        b.if_(lt(n, num(50)), tuple(inner_body))
        b.assign(i, add(i, num(1)))
    program = b.build()
    names = frozenset({"i", "j", "n"})
    assert [format_expr(e) for e in path_facts(program, inner, names)] == ["n < 50"]
    assert [format_expr(e) for e in enclosing_guards(program, inner, names)] == ["i < n"]
    assert enclosing_guards(program, outer, names) == []


def test_an_enclosing_guard_over_what_the_inner_loop_writes_is_no_candidate():
    b = ProgramBuilder("writes.c")
    x, y = b.var("x"), b.var("y")
    with b.loop():
        b.if_break(ge(x, num(100)))
        with b.loop() as inner:
            b.if_break(ge(y, num(10)))
            b.assign(x, add(x, num(1)))
            b.assign(y, add(y, num(1)))
    program = b.build()
    assert enclosing_guards(program, inner, frozenset({"x", "y"})) == []


def test_an_inner_loops_head_assertion_is_a_candidate_for_the_outer_loop():
    # while (b != 0) { c = a; while (1) { assert(a == y*r + x*p); ... } a = b; ... }
    b = ProgramBuilder("egcd.c")
    a, bb, c, x, y, r, p = (b.var(n) for n in ("a", "b", "c", "x", "y", "r", "p"))
    cond = b.var("cond", kind="param")
    with b.loop() as outer:
        b.if_break(eq(bb, num(0)))
        b.assign(c, a)
        with b.loop():
            b.emit(_inlined_assert(cond, eq(a, add(mul(y, r), mul(x, p)))))
            b.emit(_inlined_assert(cond, le(c, num(100))))  # c is written before the inner loop
            b.if_break(lt(c, bb))
            b.assign(c, add(c, num(-1)))
        b.assign(a, bb)
    program = b.build()
    names = frozenset({"a", "b", "c", "x", "y", "r", "p"})
    assert [format_expr(e) for e in inner_assertions(find_loop(program, outer), names)] == ["a == y*r + x*p"]
