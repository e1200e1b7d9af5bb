"""Each rule of the IR type checker, with a program that breaks it."""

from __future__ import annotations

import pytest
from quokka.verifier.builder import ProgramBuilder, add, and_, eq, ge, lt, num
from quokka.verifier.errors import Coord, IRTypeError
from quokka.verifier.ir import (
    INT,
    UINT,
    ArrayType,
    Assign,
    Binary,
    Break,
    Cast,
    Const,
    Continue,
    Havoc,
    If,
    IntType,
    Ite,
    Loop,
    LoopInfo,
    Program,
    Return,
    Scope,
    Select,
    Store,
    Unary,
    Var,
    VarDecl,
)
from quokka.verifier.typecheck import check_program

LL = IntType("long long", 64, True)
AT = ArrayType(INT, 4)
C = Coord("t.c", 7, 3)


def program(*stmts, variables=(), loops=(), wrap_in_main=True) -> Program:
    decls = (
        VarDecl("x", INT, "local", "x"),
        VarDecl("y", LL, "local", "y"),
        VarDecl("u", UINT, "local", "u"),
        VarDecl("a", AT, "local", "a"),
        *variables,
    )
    body = (Scope("main", tuple(stmts), Coord("t.c", 1, 1)),) if wrap_in_main else tuple(stmts)
    return Program("t.c", "LP64", decls, body, tuple(loops))


X, Y, U, A = Var("x", INT), Var("y", LL), Var("u", UINT), Var("a", AT)


def assign(target: str, value) -> Assign:
    return Assign(target, value, C)


def rejects(p: Program, fragment: str) -> IRTypeError:
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
        b.assign(s, add(s, Cast(Select(arr, x, INT), LL)))
        b.assign(arr, Store(arr, x, Ite(eq(x, num(0)), num(1), x, INT), AT))
        b.assign(x, add(x, num(1)))
    b.check(ge(s, num(0, LL)))
    check_program(b.build())


@pytest.mark.parametrize(
    ("stmt", "fragment"),
    [
        (assign("x", Var("nope", INT)), "undeclared variable nope"),
        (assign("nope", num(1)), "undeclared variable nope"),
        (assign("x", Var("y", INT)), "variable y used as int, declared long long"),
        (assign("x", Binary("+", X, Y, INT)), "operands of + are int and long long"),
        (assign("x", Binary("+", Y, Y, LL)), "assigning long long to x"),
        (assign("y", Binary("*", X, X, LL)), "operands of * are int and int, operator long long"),
        (assign("x", Binary("<", X, Y, INT)), "operands of < have different types"),
        (assign("u", Binary("==", U, U, UINT)), "comparison == yields int"),
        (assign("u", Binary("&&", X, Y, UINT)), "&& yields int"),
        (assign("x", Binary("<>", X, X, INT)), "unknown binary operator"),
        (assign("u", Unary("!", X, UINT)), "! yields int"),
        (assign("x", Unary("-", Y, INT)), "operand of - is long long"),
        (assign("x", Cast(A, INT)), "operand of a cast must have an integer type"),
        (assign("x", Ite(X, X, Y, INT)), "branches of ?: are int and long long"),
        (assign("x", Select(X, X, INT)), "indexing a non-array"),
        (assign("y", Select(A, X, LL)), "element of int[4] read as long long"),
        (assign("a", Store(A, X, Y, AT)), "storing long long into int[4]"),
        (assign("a", Store(A, A, X, AT)), "array index must have an integer type"),
        (assign("x", Binary("+", A, X, INT)), "left operand of + must have an integer type"),
        (assign("x", Const(1 << 31, INT)), "constant 2147483648 is not a value of int"),
        (assign("u", Const(-1, UINT)), "constant -1 is not a value of unsigned int"),
        (If(A, (), (), C), "condition of If must have an integer type"),
        (Havoc("nope", C), "undeclared variable nope"),
        (Break(C), "break outside a loop"),
        (Continue(C), "continue outside a loop"),
    ],
)
def test_rule_violations_are_located(stmt, fragment):
    error = rejects(program(stmt), fragment)
    assert error.coord == C
    assert str(error).startswith("t.c:7:3: ")


def test_violation_inside_nested_blocks_is_found():
    bad = assign("x", Var("y", INT))
    nested = If(X, (If(X, (), (bad,), C),), (), Coord("t.c", 2, 1))
    assert rejects(program(nested), "used as int").coord == C


def test_break_cannot_leave_an_inlined_function():
    info = LoopInfo("L", C, 6, ())
    inlined = Scope("f", (Break(Coord("t.c", 9, 1)),), C)
    rejects(program(Loop("L", (inlined,), (), C), loops=[info]), "break outside a loop")


def test_break_inside_loop_and_return_inside_scope_pass():
    info = LoopInfo("L", C, 6, ())
    check_program(program(Loop("L", (Break(C), Continue(C), Return(C)), (Break(C),), C), loops=[info]))


def test_return_outside_a_scope():
    rejects(program(Return(C), wrap_in_main=False), "return outside a function scope")


def test_loop_ids_must_be_unique():
    info = LoopInfo("L", C, 6, ())
    loops = (Loop("L", (Break(C),), (), C), Loop("L", (Break(C),), (), Coord("t.c", 8, 1)))
    assert rejects(program(*loops, loops=[info]), "loop id L used twice").coord == Coord("t.c", 8, 1)


def test_loop_needs_loop_info_and_vice_versa():
    rejects(program(Loop("L", (Break(C),), (), C)), "loop L has no LoopInfo")
    rejects(program(loops=[LoopInfo("M", C, 6, ())]), "loop M has a LoopInfo but no Loop")
    twice = [LoopInfo("L", C, 6, ()), LoopInfo("L", C, 6, ())]
    rejects(program(Loop("L", (Break(C),), (), C), loops=twice), "has two LoopInfo entries")


def test_loop_scope_names_must_be_declared():
    info = LoopInfo("L", C, 6, (("x", "x"), ("k", "k_3")))
    rejects(program(Loop("L", (Break(C),), (), C), loops=[info]), "scope maps k to undeclared k_3")


def test_variables_are_declared_once():
    rejects(program(variables=[VarDecl("x", LL, "global", "x")]), "variable x declared twice")


def test_deep_nesting_does_not_exhaust_the_stack():
    stmt = assign("x", num(1))
    for _ in range(3000):
        stmt = If(X, (stmt,), (), C)
    check_program(program(stmt))
    bad = assign("x", Y)
    for _ in range(3000):
        bad = If(X, (bad,), (), C)
    rejects(program(bad), "assigning long long to x")


def test_store_chains_thousands_deep():
    big = ArrayType(INT, 5000)
    chain = Var("b", big)
    for i in range(5000):
        chain = Store(chain, num(i), num(i), big)
    decl = [VarDecl("b", big, "local", "b")]
    check_program(program(assign("b", chain), variables=decl))
    bad = Store(chain, num(0), Y, big)
    for i in range(100):
        bad = Store(bad, num(i), num(i), big)
    rejects(program(assign("b", bad), variables=decl), "storing long long into int[5000]")


def test_deep_expressions_do_not_exhaust_the_stack():
    e = X
    for _ in range(5000):
        e = Binary("+", e, num(1), INT)
    check_program(program(assign("x", e)))
    rejects(program(assign("x", Binary("+", e, Y, INT))), "operands of + are int and long long")
