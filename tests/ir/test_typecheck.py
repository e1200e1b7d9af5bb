"""Each rule of the IR type checker, with a program that breaks it."""

from __future__ import annotations

import pytest
from quokka.verifier import ir
from quokka.verifier.errors import Coord, IRTypeError
from quokka.verifier.ir.builder import ProgramBuilder, add, and_, eq, ge, lt, num
from quokka.verifier.ir.typecheck import check_program

LL = ir.IntType("long long", 64, True)
AT = ir.ArrayType(ir.INT, 4)
C = Coord("t.c", 7, 3)


def program(*stmts, variables=(), loops=(), wrap_in_main=True) -> ir.Program:
    decls = (
        ir.VarDecl("x", ir.INT, "local", "x"),
        ir.VarDecl("y", LL, "local", "y"),
        ir.VarDecl("u", ir.UINT, "local", "u"),
        ir.VarDecl("a", AT, "local", "a"),
        *variables,
    )
    body = (ir.Scope("main", tuple(stmts), Coord("t.c", 1, 1)),) if wrap_in_main else tuple(stmts)
    return ir.Program("t.c", "LP64", decls, body, tuple(loops))


X, Y, U, A = ir.Var("x", ir.INT), ir.Var("y", LL), ir.Var("u", ir.UINT), ir.Var("a", AT)


def assign(target: str, value) -> ir.Assign:
    return ir.Assign(target, value, C)


def rejects(p: ir.Program, fragment: str) -> IRTypeError:
    with pytest.raises(IRTypeError) as info:
        check_program(p)
    assert fragment in str(info.value)
    return info.value


def test_well_typed_program_passes():
    b = ProgramBuilder("ok.c")
    x = b.var("x")
    s = b.var("s", LL)
    arr = b.var("arr", AT)
    b.havoc(x)
    b.assume(and_(ge(x, num(0)), lt(x, num(4))))
    with b.loop():
        b.if_break(ge(x, num(4)))
        b.assign(s, add(s, ir.Cast(ir.Select(arr, x, ir.INT), LL)))
        b.assign(arr, ir.Store(arr, x, ir.Ite(eq(x, num(0)), num(1), x, ir.INT), AT))
        b.assign(x, add(x, num(1)))
    b.check(ge(s, num(0, LL)))
    check_program(b.build())


@pytest.mark.parametrize(
    ("stmt", "fragment"),
    [
        (assign("x", ir.Var("nope", ir.INT)), "undeclared variable nope"),
        (assign("nope", num(1)), "undeclared variable nope"),
        (assign("x", ir.Var("y", ir.INT)), "variable y used as int, declared long long"),
        (assign("x", ir.Binary("+", X, Y, ir.INT)), "operands of + are int and long long"),
        (assign("x", ir.Binary("+", Y, Y, LL)), "assigning long long to x"),
        (assign("y", ir.Binary("*", X, X, LL)), "operands of * are int and int, operator long long"),
        (assign("x", ir.Binary("<", X, Y, ir.INT)), "operands of < have different types"),
        (assign("u", ir.Binary("==", U, U, ir.UINT)), "comparison == yields int"),
        (assign("u", ir.Binary("&&", X, Y, ir.UINT)), "&& yields int"),
        (assign("x", ir.Binary("<>", X, X, ir.INT)), "unknown binary operator"),
        (assign("u", ir.Unary("!", X, ir.UINT)), "! yields int"),
        (assign("x", ir.Unary("-", Y, ir.INT)), "operand of - is long long"),
        (assign("x", ir.Cast(A, ir.INT)), "operand of a cast must have an integer type"),
        (assign("x", ir.Ite(X, X, Y, ir.INT)), "branches of ?: are int and long long"),
        (assign("x", ir.Select(X, X, ir.INT)), "indexing a non-array"),
        (assign("y", ir.Select(A, X, LL)), "element of int[4] read as long long"),
        (assign("a", ir.Store(A, X, Y, AT)), "storing long long into int[4]"),
        (assign("a", ir.Store(A, A, X, AT)), "array index must have an integer type"),
        (assign("x", ir.Binary("+", A, X, ir.INT)), "left operand of + must have an integer type"),
        (assign("x", ir.Const(1 << 31, ir.INT)), "constant 2147483648 is not a value of int"),
        (assign("u", ir.Const(-1, ir.UINT)), "constant -1 is not a value of unsigned int"),
        (ir.If(A, (), (), C), "condition of If must have an integer type"),
        (ir.Havoc("nope", C), "undeclared variable nope"),
        (ir.Break(C), "break outside a loop"),
        (ir.Continue(C), "continue outside a loop"),
    ],
)
def test_rule_violations_are_located(stmt, fragment):
    error = rejects(program(stmt), fragment)
    assert error.coord == C
    assert str(error).startswith("t.c:7:3: ")


def test_violation_inside_nested_blocks_is_found():
    bad = assign("x", ir.Var("y", ir.INT))
    nested = ir.If(X, (ir.If(X, (), (bad,), C),), (), Coord("t.c", 2, 1))
    assert rejects(program(nested), "used as int").coord == C


def test_break_cannot_leave_an_inlined_function():
    info = ir.LoopInfo("L", C, 6, ())
    inlined = ir.Scope("f", (ir.Break(Coord("t.c", 9, 1)),), C)
    rejects(program(ir.Loop("L", (inlined,), (), C), loops=[info]), "break outside a loop")


def test_break_inside_loop_and_return_inside_scope_pass():
    info = ir.LoopInfo("L", C, 6, ())
    loop = ir.Loop("L", (ir.Break(C), ir.Continue(C), ir.Return(C)), (ir.Break(C),), C)
    check_program(program(loop, loops=[info]))


def test_return_outside_a_scope():
    rejects(program(ir.Return(C), wrap_in_main=False), "return outside a function scope")


def test_loop_ids_must_be_unique():
    info = ir.LoopInfo("L", C, 6, ())
    loops = (ir.Loop("L", (ir.Break(C),), (), C), ir.Loop("L", (ir.Break(C),), (), Coord("t.c", 8, 1)))
    assert rejects(program(*loops, loops=[info]), "loop id L used twice").coord == Coord("t.c", 8, 1)


def test_loop_needs_loop_info_and_vice_versa():
    rejects(program(ir.Loop("L", (ir.Break(C),), (), C)), "loop L has no LoopInfo")
    rejects(program(loops=[ir.LoopInfo("M", C, 6, ())]), "loop M has a LoopInfo but no Loop")
    twice = [ir.LoopInfo("L", C, 6, ()), ir.LoopInfo("L", C, 6, ())]
    rejects(program(ir.Loop("L", (ir.Break(C),), (), C), loops=twice), "has two LoopInfo entries")


def test_loop_scope_names_must_be_declared():
    info = ir.LoopInfo("L", C, 6, (("x", "x"), ("k", "k_3")))
    rejects(program(ir.Loop("L", (ir.Break(C),), (), C), loops=[info]), "scope maps k to undeclared k_3")


def test_variables_are_declared_once():
    rejects(program(variables=[ir.VarDecl("x", LL, "global", "x")]), "variable x declared twice")


def test_deep_nesting_does_not_exhaust_the_stack():
    stmt = assign("x", num(1))
    for _ in range(3000):
        stmt = ir.If(X, (stmt,), (), C)
    check_program(program(stmt))
    bad = assign("x", Y)
    for _ in range(3000):
        bad = ir.If(X, (bad,), (), C)
    rejects(program(bad), "assigning long long to x")


def test_store_chains_thousands_deep():
    big = ir.ArrayType(ir.INT, 5000)
    chain = ir.Var("b", big)
    for i in range(5000):
        chain = ir.Store(chain, num(i), num(i), big)
    decl = [ir.VarDecl("b", big, "local", "b")]
    check_program(program(assign("b", chain), variables=decl))
    bad = ir.Store(chain, num(0), Y, big)
    for i in range(100):
        bad = ir.Store(bad, num(i), num(i), big)
    rejects(program(assign("b", bad), variables=decl), "storing long long into int[5000]")


def test_deep_expressions_do_not_exhaust_the_stack():
    e = X
    for _ in range(5000):
        e = ir.Binary("+", e, num(1), ir.INT)
    check_program(program(assign("x", e)))
    rejects(program(assign("x", ir.Binary("+", e, Y, ir.INT))), "operands of + are int and long long")
