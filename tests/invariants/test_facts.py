"""Facts as typed IR expressions: wide types, casts, C text; evaluation and canonical keys."""

import pytest
from quokka.invariants.canonical import key, polynomial
from quokka.invariants.evaluate import compile_expr, holds_on
from quokka.invariants.facts import INT128, ExprBuilder, Fact, equation, linear, wide_type
from quokka.verifier.ir import (
    INT,
    UINT,
    Assert,
    Binary,
    Cast,
    Const,
    IntType,
    Program,
    Var,
    VarDecl,
    int_types,
)
from quokka.verifier.ir.builder import add, eq, le, mul, num
from quokka.verifier.ir.printer import format_expr
from quokka.verifier.ir.typecheck import check_program

T = int_types("LP64")
LL, ULL, SHORT = T["long long"], T["unsigned long long"], T["short"]


def _decls(**types: IntType) -> dict[str, VarDecl]:
    return {n: VarDecl(n, t, "local", n) for n, t in types.items()}


def _well_typed(e, decls):
    program = Program("t.c", "LP64", tuple(decls.values()), (Assert(e),), ())
    check_program(program)


def _mono(v, e=1):
    return ((v, e),)


def test_same_signed_type_needs_no_casts():
    decls = _decls(z=LL, n=LL)
    fact = equation(((_mono("z"), 1), (_mono("n"), -6), ((), -6)), "z", "equality")
    e = ExprBuilder(decls).to_expr(fact)
    _well_typed(e, decls)
    assert format_expr(e) == "z == 6LL*n + 6LL"


def test_int_variables_stay_int_and_polynomials_read_well():
    decls = _decls(y=INT, n=INT)
    poly = ((_mono("y"), 1), (_mono("n", 2), -3), (_mono("n"), -3), ((), -1))
    e = ExprBuilder(decls).to_expr(equation(poly, "y", "equality"))
    _well_typed(e, decls)
    assert format_expr(e) == "y == 3*n*n + 3*n + 1"


def test_mixed_types_use_a_type_containing_all():
    decls = _decls(a=SHORT, u=UINT, n=LL)
    e = ExprBuilder(decls).to_expr(linear({"a": 1, "u": 1, "n": -1}, "<=", 7, "octagon"))
    _well_typed(e, decls)
    assert format_expr(e) == "(long long)a + (long long)u - n <= 7LL"


def test_unsigned_64_bit_variables_go_to_int128():
    decls = _decls(u=ULL, v=ULL)
    e = ExprBuilder(decls).to_expr(linear({"u": 1, "v": -1}, ">=", 0, "octagon"))
    _well_typed(e, decls)
    assert isinstance(e, Binary) and e.left.type == INT128
    # (u - v) in unsigned arithmetic would wrap; in the candidate it must not
    f = compile_expr(e)
    assert f({"u": 1, "v": 2}) == 0 and f({"u": 2, "v": 1}) == 1


def test_a_constant_too_large_for_int_widens_the_type():
    assert wide_type([INT], [1 << 40], LL) == LL
    assert wide_type([INT], [1 << 70], LL) == INT128
    with pytest.raises(ValueError):
        wide_type([INT], [1 << 200], LL)


def test_negative_leading_terms_and_congruences():
    decls = _decls(x=INT, y=INT)
    builder = ExprBuilder(decls)
    e = builder.to_expr(Fact(((_mono("x"), -1), (_mono("y"), -2)), "<=", (((), 3),), "bound"))
    assert format_expr(e) == "-x - 2*y <= 3"
    c = builder.to_expr(Fact(((_mono("x"), 1),), "==", (((), 1),), "congruence", 4))
    assert format_expr(c) == "x%4 == 1"
    _well_typed(c, decls)
    assert holds_on(c, [{"x": 5}, {"x": 9}]) and not holds_on(c, [{"x": -3}])


def test_non_solved_equations_put_negative_terms_on_the_right():
    fact = equation(((_mono("x"), 1), (_mono("y"), -1), ((), -12)), None, "equality")
    assert fact.lhs == ((_mono("x"), 1),) and fact.rhs == ((_mono("y"), 1), ((), 12))


def test_evaluation_follows_c_semantics():
    u = Var("u", UINT)
    wrapped = Binary("+", u, Const(1, UINT), UINT)
    assert compile_expr(wrapped)({"u": UINT.max}) == 0
    div = Binary("/", Var("x", INT), Const(2, INT), INT)
    assert compile_expr(div)({"x": -7}) == -3
    assert compile_expr(Cast(Var("x", INT), T["unsigned char"]))({"x": 300}) == 44
    assert not holds_on(Binary("/", Const(1, INT), Var("x", INT), INT), [{"x": 0}])


def test_canonical_keys_identify_rearrangements():
    x, y = Var("x", INT), Var("y", INT)
    assert key(eq(y, mul(num(2), x))) == key(eq(mul(num(2), x), y)) == key(eq(mul(num(2), y), mul(num(4), x)))
    assert key(le(x, y)) == key(Binary(">=", y, x, INT))
    assert key(Binary("<", x, y, INT)) == key(le(add(x, num(1)), y))
    assert key(le(x, y)) != key(le(y, x))
    wrapping = Binary("+", Var("u", UINT), Const(1, UINT), UINT)
    assert polynomial(wrapping) is None


def test_array_expressions_are_not_evaluated():
    from quokka.verifier.ir import ArrayType, Select

    read = Select(Var("a", ArrayType(INT, 4)), Const(0, INT), INT)
    with pytest.raises(TypeError):
        compile_expr(read)
    assert not holds_on(read, [{"a": 1}])
