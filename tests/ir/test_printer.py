"""The pretty-printer: precedence, constants, C names, statements."""

from __future__ import annotations

from quokka.verifier import ir
from quokka.verifier.errors import Coord
from quokka.verifier.ir.builder import ProgramBuilder, add, and_, eq, ge, mul, num, or_, sub
from quokka.verifier.ir.printer import (
    format_const,
    format_expr,
    format_expr_c_names,
    format_program,
    format_stmt,
)

T = ir.int_types("LP64")
LL, UC, SH = T["long long"], T["unsigned char"], T["short"]
x, y, z, n = (ir.Var(v, ir.INT) for v in "xyzn")


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
    assert format_expr(ir.Binary("/", x, ir.Binary("%", y, z, ir.INT), ir.INT)) == "x/(y%z)"
    assert format_expr(or_(and_(x, y), z)) == "x && y || z"
    assert format_expr(and_(or_(x, y), z)) == "(x || y) && z"
    assert format_expr(ir.Binary("&", x, eq(y, z), ir.INT)) == "x & y == z"
    assert format_expr(eq(ir.Binary("&", x, y, ir.INT), z)) == "(x & y) == z"
    assert format_expr(ir.Binary("<<", num(1), add(x, y), ir.INT)) == "1 << x + y"


def test_unary_and_negative_constants():
    assert format_expr(ir.Unary("-", ir.Unary("-", x, ir.INT), ir.INT)) == "-(-x)"
    assert format_expr(ir.Unary("-", num(-3), ir.INT)) == "-(-3)"
    assert format_expr(sub(x, num(-3))) == "x - -3"
    assert format_expr(mul(x, num(-3))) == "x*-3"
    assert format_expr(ir.Unary("!", ge(x, y), ir.INT)) == "!(x >= y)"
    assert format_expr(ir.Unary("~", add(x, y), ir.INT)) == "~(x + y)"
    assert format_expr(ir.Unary("-", ir.Unary("~", x, ir.INT), ir.INT)) == "-~x"


def test_constants_reparse_to_the_same_value_and_type():
    assert format_const(4294967295, ir.UINT) == "4294967295u"
    assert format_const(-2147483648, ir.INT) == "(-2147483647 - 1)"
    assert format_const(-(1 << 63), LL) == "(-9223372036854775807LL - 1LL)"
    assert format_const(5, T["long"]) == "5L"
    assert format_const(7, T["unsigned long long"]) == "7uLL"
    assert format_const(5, SH) == "(short)5"
    assert format_const(-5, SH) == "(short)-5"
    assert format_const(1, T["_Bool"]) == "(_Bool)1"


def test_casts_ite_select_store():
    arr = ir.Var("a", ir.ArrayType(ir.INT, 3))
    assert format_expr(ir.Cast(add(x, y), LL)) == "(long long)(x + y)"
    assert format_expr(mul(ir.Cast(x, LL), ir.Cast(y, LL))) == "(long long)x*(long long)y"
    assert format_expr(ir.Cast(ir.Cast(x, UC), ir.INT)) == "(int)(unsigned char)x"
    assert format_expr(ir.Ite(ge(x, y), x, y, ir.INT)) == "x >= y ? x : y"
    nested = ir.Ite(ir.Ite(x, y, z, ir.INT), ir.Ite(x, y, z, ir.INT), ir.Ite(x, y, z, ir.INT), ir.INT)
    assert format_expr(nested) == "(x ? y : z) ? x ? y : z : x ? y : z"
    assert format_expr(add(ir.Ite(x, y, z, ir.INT), num(1))) == "(x ? y : z) + 1"
    assert format_expr(ir.Select(arr, add(x, num(1)), ir.INT)) == "a[x + 1]"
    store = ir.Store(arr, num(0), x, arr.type)
    assert format_expr(ir.Select(store, num(0), ir.INT)) == "store(a, 0, x)[0]"


def test_renaming_to_c_names():
    decls = (
        ir.VarDecl("x_1", ir.INT, "local", "x"),
        ir.VarDecl("x_2", ir.INT, "local", "x"),
        ir.VarDecl("i_1", ir.INT, "local", "i"),
    )
    c = Coord("f.c", 3, 5)
    loop = ir.Loop("L1", (), (), c)
    info = ir.LoopInfo("L1", c, 2, (("x", "x_2"), ("i", "i_1")))
    p = ir.Program("f.c", "LP64", decls, (ir.Scope("main", (loop,)),), (info,))
    e = add(add(ir.Var("x_1", ir.INT), ir.Var("x_2", ir.INT)), ir.Var("i_1", ir.INT))
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
    stmt = ir.If(x, (ir.Assign("x", num(1)),), (ir.Assign("x", num(2)),))
    assert format_stmt(stmt, 1) == "  if (x) {\n    x = 1;\n  } else {\n    x = 2;\n  }"
    step = ir.Loop("L9", (ir.Assign("x", num(1)),), (ir.Assign("x", add(x, num(1))),))
    assert "// step of L9 (continue jumps here)" in format_stmt(step)


def test_deep_nesting_prints():
    stmt = ir.Assign("x", num(1))
    for _ in range(2000):
        stmt = ir.If(x, (stmt,), ())
    lines = format_stmt(stmt).split("\n")
    assert len(lines) == 2 * 2000 + 1
    assert lines[2000] == "  " * 2000 + "x = 1;"


def test_constant_types_print_distinctly():
    assert format_expr(ir.Const(3, ir.UINT)) != format_expr(ir.Const(3, ir.INT))
    assert format_expr(ir.Const(3, ir.IntType("long", 32, True))) == "3L"


def test_store_chains_print_without_recursion():
    at = ir.ArrayType(ir.INT, 3000)
    chain = ir.Var("a", at)
    for i in range(3000):
        chain = ir.Store(chain, num(i), num(-i), at)
    text = format_expr(ir.Select(chain, x, ir.INT))
    assert text.startswith("store(" * 3000 + "a, 0, 0), 1, -1), 2, -2)")
    assert text.endswith(", 2999, -2999)[x]")


def test_deep_expressions_print_without_recursion():
    e = x
    for _ in range(5000):
        e = add(e, num(1))
    assert format_expr(e) == "x" + " + 1" * 5000
    e = x
    for _ in range(5000):
        e = ir.Unary("-", e, ir.INT)
    assert format_expr(e) == "-(" * 4999 + "-x" + ")" * 4999
