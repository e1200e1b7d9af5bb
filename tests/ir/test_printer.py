"""The pretty-printer: precedence, constants, C names, statements."""

from __future__ import annotations

from quokka.verifier.builder import ProgramBuilder, add, and_, eq, ge, mul, num, or_, sub
from quokka.verifier.errors import Coord
from quokka.verifier.ir import (
    INT,
    UINT,
    ArrayType,
    Assign,
    Binary,
    Cast,
    Const,
    If,
    IntType,
    Ite,
    Loop,
    LoopInfo,
    Program,
    Scope,
    Select,
    Store,
    Unary,
    Var,
    VarDecl,
    int_types,
)
from quokka.verifier.printer import (
    format_const,
    format_expr,
    format_expr_c_names,
    format_program,
    format_stmt,
)

T = int_types("LP64")
LL, UC, SH = T["long long"], T["unsigned char"], T["short"]
x, y, z, n = (Var(v, INT) for v in "xyzn")


def test_invariant_style():
    inv = and_(
        eq(z, add(mul(num(6), n), num(6))),
        eq(y, add(add(mul(mul(num(3), n), n), mul(num(3), n)), num(1))),
    )
    assert format_expr(inv) == "z == 6*n + 6 && y == 3*n*n + 3*n + 1"


def test_minimal_parentheses_keep_the_tree():
    assert format_expr(sub(x, sub(y, z))) == "x - (y - z)"
    assert format_expr(sub(sub(x, y), z)) == "x - y - z"
    assert format_expr(mul(add(x, y), z)) == "(x + y)*z"
    assert format_expr(mul(x, mul(y, z))) == "x*(y*z)"
    assert format_expr(Binary("/", x, Binary("%", y, z, INT), INT)) == "x/(y%z)"
    assert format_expr(or_(and_(x, y), z)) == "x && y || z"
    assert format_expr(and_(or_(x, y), z)) == "(x || y) && z"
    assert format_expr(Binary("&", x, eq(y, z), INT)) == "x & y == z"
    assert format_expr(eq(Binary("&", x, y, INT), z)) == "(x & y) == z"
    assert format_expr(Binary("<<", num(1), add(x, y), INT)) == "1 << x + y"


def test_unary_and_negative_constants():
    assert format_expr(Unary("-", Unary("-", x, INT), INT)) == "-(-x)"
    assert format_expr(Unary("-", num(-3), INT)) == "-(-3)"
    assert format_expr(sub(x, num(-3))) == "x - -3"
    assert format_expr(mul(x, num(-3))) == "x*-3"
    assert format_expr(Unary("!", ge(x, y), INT)) == "!(x >= y)"
    assert format_expr(Unary("~", add(x, y), INT)) == "~(x + y)"
    assert format_expr(Unary("-", Unary("~", x, INT), INT)) == "-~x"


def test_constants_reparse_to_the_same_value_and_type():
    assert format_const(4294967295, UINT) == "4294967295u"
    assert format_const(-2147483648, INT) == "(-2147483647 - 1)"
    assert format_const(-(1 << 63), LL) == "(-9223372036854775807LL - 1LL)"
    assert format_const(5, T["long"]) == "5L"
    assert format_const(7, T["unsigned long long"]) == "7uLL"
    assert format_const(5, SH) == "(short)5"
    assert format_const(-5, SH) == "(short)-5"
    assert format_const(1, T["_Bool"]) == "(_Bool)1"


def test_casts_ite_select_store():
    arr = Var("a", ArrayType(INT, 3))
    assert format_expr(Cast(add(x, y), LL)) == "(long long)(x + y)"
    assert format_expr(mul(Cast(x, LL), Cast(y, LL))) == "(long long)x*(long long)y"
    assert format_expr(Cast(Cast(x, UC), INT)) == "(int)(unsigned char)x"
    assert format_expr(Ite(ge(x, y), x, y, INT)) == "x >= y ? x : y"
    nested = Ite(Ite(x, y, z, INT), Ite(x, y, z, INT), Ite(x, y, z, INT), INT)
    assert format_expr(nested) == "(x ? y : z) ? x ? y : z : x ? y : z"
    assert format_expr(add(Ite(x, y, z, INT), num(1))) == "(x ? y : z) + 1"
    assert format_expr(Select(arr, add(x, num(1)), INT)) == "a[x + 1]"
    store = Store(arr, num(0), x, arr.type)
    assert format_expr(Select(store, num(0), INT)) == "store(a, 0, x)[0]"


def test_renaming_to_c_names():
    decls = (
        VarDecl("x_1", INT, "local", "x"),
        VarDecl("x_2", INT, "local", "x"),
        VarDecl("i_1", INT, "local", "i"),
    )
    c = Coord("f.c", 3, 5)
    loop = Loop("L1", (), (), c)
    info = LoopInfo("L1", c, 2, (("x", "x_2"), ("i", "i_1")))
    p = Program("f.c", "LP64", decls, (Scope("main", (loop,)),), (info,))
    e = add(add(Var("x_1", INT), Var("x_2", INT)), Var("i_1", INT))
    assert format_expr(e, {"x_1": "X"}) == "X + x_2 + i_1"
    # Without a loop, the ambiguous C name `x` is not used; at L1, x means x_2.
    assert format_expr_c_names(e, p) == "x_1 + x_2 + i"
    assert format_expr_c_names(e, p, "L1") == "x_1 + x + i"


def test_statements_and_program():
    b = ProgramBuilder("p.c")
    i = b.var("i")
    b.havoc(i)
    with b.loop("L"):
        b.if_break(ge(i, num(3)))
        b.if_continue(eq(i, num(1)))
        b.assign(i, add(i, num(1)))
    b.check(ge(i, num(3)))
    text = format_program(b.build())
    assert text == (
        "// p.c (LP64)\n"
        "int i;  // local\n"
        "// loop L at p.c:2:1 in main, insert after line 2; scope: i=i\n"
        "{  // function main\n"
        "  havoc i;  // nondet\n"
        "  while (1) {  // loop L\n"
        "    if (i >= 3) {\n"
        "      break;\n"
        "    }\n"
        "    if (i == 1) {\n"
        "      continue;\n"
        "    }\n"
        "    i = i + 1;\n"
        "  }\n"
        "  assert(i >= 3);\n"
        "}\n"
    )
    stmt = If(x, (Assign("x", num(1)),), (Assign("x", num(2)),))
    assert format_stmt(stmt, 1) == "  if (x) {\n    x = 1;\n  } else {\n    x = 2;\n  }"
    step = Loop("L9", (Assign("x", num(1)),), (Assign("x", add(x, num(1))),))
    assert "// step of L9 (continue jumps here)" in format_stmt(step)


def test_deep_nesting_prints():
    stmt = Assign("x", num(1))
    for _ in range(2000):
        stmt = If(x, (stmt,), ())
    lines = format_stmt(stmt).split("\n")
    assert len(lines) == 2 * 2000 + 1
    assert lines[2000] == "  " * 2000 + "x = 1;"


def test_constant_types_print_distinctly():
    assert format_expr(Const(3, UINT)) != format_expr(Const(3, INT))
    assert format_expr(Const(3, IntType("long", 32, True))) == "3L"


def test_store_chains_print_without_recursion():
    at = ArrayType(INT, 3000)
    chain = Var("a", at)
    for i in range(3000):
        chain = Store(chain, num(i), num(-i), at)
    text = format_expr(Select(chain, x, INT))
    assert text.startswith("store(" * 3000 + "a, 0, 0), 1, -1), 2, -2)")
    assert text.endswith(", 2999, -2999)[x]")


def test_deep_expressions_print_without_recursion():
    e = x
    for _ in range(5000):
        e = add(e, num(1))
    assert format_expr(e) == "x" + " + 1" * 5000
    e = x
    for _ in range(5000):
        e = Unary("-", e, INT)
    assert format_expr(e) == "-(" * 4999 + "-x" + ")" * 4999
