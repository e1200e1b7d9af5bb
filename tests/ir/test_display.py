"""Readable invariants (`simplify.readable`, `format_expr(readable=True)`): the expected texts,
and the key property: the printed text parses back to an equivalent expression (proved with Z3
over the variables' type ranges) that prints to the same text."""

from __future__ import annotations

import random

import pytest
import z3
from quokka.verifier import ir
from quokka.verifier.encode import smt
from quokka.verifier.encode.z3_to_ir import to_ir
from quokka.verifier.frontend import parse_invariant
from quokka.verifier.ir import cexpr
from quokka.verifier.ir.builder import ProgramBuilder, add, and_, eq, le, lt, mul, ne, not_, num, or_
from quokka.verifier.ir.cexpr import CTypes
from quokka.verifier.ir.printer import format_expr, format_expr_c_names
from quokka.verifier.ir.simplify import MAX_DEPTH, readable

TYPE_NAMES = ("int", "short", "unsigned int", "unsigned char", "long long", "unsigned long")
CAST_ONLY = ("_Bool", "signed char", "unsigned short", "long", "unsigned long long")
LP64 = ir.int_types("LP64")
LL, UINT, SHORT, UCHAR = LP64["long long"], LP64["unsigned int"], LP64["short"], LP64["unsigned char"]


def program_with(types: dict[str, ir.Type], data_model: str = "LP64") -> tuple[ir.Program, str]:
    b = ProgramBuilder("display.c", data_model)
    for name, ty in types.items():
        b.havoc(b.var(name, ty))
    with b.loop("L") as loop_id:
        b.if_break(num(1))
    return b.build(), loop_id


def assert_round_trip(e: ir.Expr, program: ir.Program, loop_id: str) -> str:
    """The readable text of `e`: it parses back to an equivalent expression printing the same."""
    text = format_expr(e, readable=True)
    back = parse_invariant(text, program, loop_id)
    env = {v.name: smt.const(v.name, v.type) for v in program.variables}
    tr = smt.Translator(env)
    # sums of monomials first (som): equal polynomials become one term, sparing nonlinear search
    solver = z3.Then(z3.With("simplify", som=True, arith_lhs=True), "smt").solver()
    solver.set(timeout=20_000)
    for v in program.variables:
        if isinstance(v.type, ir.IntType):
            solver.add(smt.in_range(env[v.name], v.type))
    solver.add(tr.term(e) != tr.term(back))
    verdict = solver.check()
    assert verdict == z3.unsat, (format_expr(e), text, verdict, verdict == z3.sat and solver.model())
    assert format_expr(back, readable=True) == text, (format_expr(e), text)
    return text


# ----------------------------------------------------------------------------- expected texts

COHENCU = {"a": SHORT, "n": LL, "x": LL, "y": LL, "z": LL}


def ll(name: str, ty: ir.IntType) -> ir.Expr:
    """A variable as the dynamic proposer and `z3_to_ir` use it: cast to long long if needed."""
    return ir.Var(name, ty) if ty == LL else ir.Cast(ir.Var(name, ty), LL)


def k(value: int) -> ir.Const:
    return ir.Const(value, LL)


def spacer(formula: z3.BoolRef, types: dict[str, ir.IntType]) -> ir.Expr:
    return to_ir(formula, {n: ir.Var(n, ty) for n, ty in types.items()})


def test_dynamic_proposer_shapes_lose_their_suffixes_and_casts():
    program, loop = program_with(COHENCU)
    n, y, z, a = ll("n", LL), ll("y", LL), ll("z", LL), ll("a", SHORT)
    cases = {
        eq(z, add(mul(k(6), n), k(6))): "z == 6*n + 6",
        eq(y, add(add(mul(mul(k(3), n), n), mul(k(3), n)), k(1))): "y == 3*n*n + 3*n + 1",
        or_(le(n, add(a, k(1))), eq(n, k(0))): "n <= a + 1 || n == 0",
        eq(ir.Binary("%", add(ll("x", LL), n), k(2), LL), k(0)): "(x + n)%2 == 0",
    }
    for e, want in cases.items():
        assert assert_round_trip(e, program, loop) == want
    # without the option, format_expr prints the IR as it is
    assert format_expr(eq(z, add(mul(k(6), n), k(6)))) == "z == 6LL*n + 6LL"


def test_spacer_normal_forms_read_like_hand_written_invariants():
    program, loop = program_with(COHENCU)
    a, n, x, y, z = (z3.Int(v) for v in "anxyz")
    cases = {
        z3.Or(x == 0, z + -6 * a == 12, a + -1 * n >= 0): "x == 0 || z == 6*a + 12 || a >= n",
        3 * (n * n) + -1 * y + 3 * n <= -1: "y >= 3*n*n + 3*n + 1",
        n + -1 * a <= 0: "n <= a",
        z3.Or(n + -1 * a <= 0, 6 * a + -1 * z == -12): "n <= a || z == 6*a + 12",
        x + -1 * (n * n * n) <= 0: "x <= n*n*n",
        z + -6 * n >= 6: "z >= 6*n + 6",
        z3.Not(x + -1 * y <= 5): "x > y + 5",
    }
    for f, want in cases.items():
        assert assert_round_trip(spacer(f, COHENCU), program, loop) == want


def test_strict_comparisons_with_constant_one_become_non_strict():
    types = {"n": ir.INT, "i": ir.INT, "s": ir.INT}
    program, loop = program_with(types)
    n, i, s = (z3.Int(v) for v in "nis")
    cases = {
        2 * n + -1 * s > -1: "s <= 2*n",
        2 * i + -1 * s < 1: "s >= 2*i",
        i > -1: "i >= 0",
        i < 1: "i <= 0",
        i < 5: "i < 5",
        i + -1 * n < 0: "i < n",
    }
    for f, want in cases.items():
        assert assert_round_trip(spacer(f, types), program, loop) == want


def test_sums_products_and_negation():
    types = {"a": ir.INT, "b": ir.INT, "c": ir.INT, "x": ir.INT, "y": ir.INT}
    program, loop = program_with(types)
    a, b, c, x, y = (ir.Var(v, ir.INT) for v in "abcxy")
    cases = {
        add(a, mul(num(-1), b)): "a - b",
        add(a, ir.Unary("-", c, ir.INT)): "a - c",
        mul(num(-1), b): "-b",
        mul(num(5), mul(x, y)): "5*x*y",
        add(mul(num(3), y), y): "4*y",
        mul(num(2), add(x, num(1))): "2*(x + 1)",
        mul(num(-1), add(x, num(1))): "-x - 1",
        mul(num(3), num(4)): "12",
        mul(add(x, num(1)), add(y, num(-1))): "(x + 1)*(y - 1)",
        mul(num(3), ir.Binary("/", x, num(2), ir.INT)): "3*(x/2)",
        add(x, ir.Unary("-", x, ir.INT)): "0",
        not_(lt(x, y)): "x >= y",
        not_(not_(lt(x, y))): "x < y",
        and_(a, and_(b, c)): "a && b && c",
        eq(add(x, y), add(a, b)): "x + y == a + b",
        eq(add(mul(x, y), sub_(x, a)), sub_(add(y, b), num(4))): "x*y + x == a + y + b - 4",
        le(add(num(7), x), y): "x <= y - 7",
    }
    for e, want in cases.items():
        assert assert_round_trip(e, program, loop) == want


def sub_(p: ir.Expr, q: ir.Expr) -> ir.Expr:
    return ir.Binary("-", p, q, ir.INT)


def test_casts_stay_where_c_would_compute_differently():
    types = {"u": UINT, "c": UCHAR, "x": ir.INT, "n": LL}
    program, loop = program_with(types)
    u, c, x, n = ir.Var("u", UINT), ir.Var("c", UCHAR), ir.Var("x", ir.INT), ir.Var("n", LL)
    wide = add(ir.Cast(x, LL), k(1))
    cases = {
        # u + 1 would wrap in unsigned arithmetic: the cast stays, the suffix goes
        le(add(ir.Cast(u, LL), k(1)), n): "(long long)u <= n - 1",
        # unsigned char promotes to int: no cast needed
        le(add(ir.Cast(c, LL), k(1)), n): "c <= n - 1",
        # unsigned arithmetic keeps its type; a constant operand loses its suffix
        ir.Binary("<=", ir.Binary("+", u, ir.Const(1, UINT), UINT), ir.Const(7, UINT), ir.INT): "u + 1 <= 7",
        # a wrapping cast must still wrap: (int)(x + 1) would not for x == INT_MAX
        ir.Cast(wide, ir.INT): "(int)(long long)(x + 1)",
        ir.Binary("&", wide, k(6), LL): "(long long)(x + 1) & 6",
        ir.Cast(ir.Binary("*", ir.Cast(x, LL), ir.Cast(x, LL), LL), UINT): "(unsigned int)(x*x)",
    }
    for e, want in cases.items():
        assert assert_round_trip(e, program, loop) == want


def test_array_indices_and_truth_values_drop_value_preserving_casts():
    types = {"u": UINT, "i": ir.INT, "n": LL}
    program, loop = program_with({**types, "arr": ir.ArrayType(ir.INT, 8)})
    u, i, n = ir.Var("u", UINT), ir.Var("i", ir.INT), ir.Var("n", LL)
    arr = ir.Var("arr", ir.ArrayType(ir.INT, 8))
    cases = {
        ir.Select(arr, add(ir.Cast(i, LL), k(1)), ir.INT): "arr[i + 1]",
        le(ir.Cast(ir.Select(arr, ir.Cast(u, LL), ir.INT), LL), add(n, k(-1))): "arr[u] <= n - 1",
        and_(ir.Cast(u, LL), ne(n, k(0))): "u && n != 0",
        not_(ir.Cast(u, LL)): "!u",
        ir.Ite(ir.Cast(u, LL), n, k(3), LL): "u ? n : 3",
    }
    for e, want in cases.items():
        assert assert_round_trip(e, program, loop) == want


def test_c_names_print_readable_by_default():
    program, loop = program_with(COHENCU)
    e = eq(ir.Var("z", LL), add(mul(k(6), ir.Var("n", LL)), k(6)))
    assert format_expr_c_names(e, program, loop) == "z == 6*n + 6"
    assert format_expr_c_names(e, program, loop, readable=False) == "z == 6LL*n + 6LL"


def test_deep_expressions_are_left_as_they_are():
    x = ir.Var("x", LL)
    e: ir.Expr = x
    for _ in range(MAX_DEPTH + 5):
        e = add(e, k(1))
    assert readable(e) is e
    chain: ir.Expr = eq(x, k(0))
    for i in range(3 * MAX_DEPTH):
        chain = and_(chain, eq(x, k(i)))
    assert format_expr(chain, readable=True).startswith("x == 0 && x == 0 && x == 1")


# ----------------------------------------------------------------------------- random expressions


class RandomExprs:
    """Well-typed expressions as the frontend builds them (C's conversions, folding) over variables
    of mixed types, with explicit widening casts and long long constants as the proposers use."""

    ARITH = ("+", "+", "-", "-", "*", "*", "/", "%", "&", "|", "^", "<<", ">>")
    COMPARE = ("<", "<=", ">", ">=", "==", "!=")

    def __init__(self, rng: random.Random, ct: CTypes, names: dict[str, ir.IntType]) -> None:
        self.rng, self.ct, self.names = rng, ct, names
        self.types = [ct.named(t) for t in (*TYPE_NAMES, *CAST_ONLY)]

    def leaf(self) -> ir.Expr:
        r = self.rng
        if r.random() < 0.65:
            name = r.choice(sorted(self.names))
            v: ir.Expr = ir.Var(name, self.names[name])
            return cexpr.convert(v, self.ct.named("long long")) if r.random() < 0.4 else v
        ty = r.choice([ir.INT, ir.INT, self.ct.named("long long"), self.ct.named("unsigned int")])
        value = r.choice([0, 1, 2, 3, 6, 12, r.randint(-20, 20)])
        return ir.Const(value if ty.signed else abs(value), ty)

    def expr(self, depth: int) -> ir.Expr:
        r = self.rng
        if depth == 0 or r.random() < 0.2:
            return self.leaf()
        roll = r.random()
        if roll < 0.5:
            return self.arith(depth)
        if roll < 0.7:
            return cexpr.binary(self.ct, r.choice(self.COMPARE), self.expr(depth - 1), self.expr(depth - 1))
        if roll < 0.78:
            return cexpr.unary(self.ct, r.choice(["-", "-", "~", "!"]), self.expr(depth - 1))
        if roll < 0.88:
            return cexpr.convert(self.expr(depth - 1), r.choice(self.types))
        if roll < 0.94:
            return cexpr.binary(self.ct, r.choice(["&&", "||"]), self.expr(depth - 1), self.expr(depth - 1))
        return cexpr.conditional(self.ct, self.expr(depth - 1), self.expr(depth - 1), self.expr(depth - 1))

    def arith(self, depth: int) -> ir.Expr:
        op = self.rng.choice(self.ARITH)
        left = self.expr(depth - 1)
        if op in ("<<", ">>"):
            right: ir.Expr = ir.Const(self.rng.randint(0, 5), ir.INT)
        elif op in ("/", "%"):
            right = ir.Const(self.rng.choice([2, 3, 6, -4]), ir.INT)
        else:
            right = self.expr(depth - 1)
        return cexpr.binary(self.ct, op, left, right)


def random_types(rng: random.Random, ct: CTypes) -> dict[str, ir.IntType]:
    return {name: ct.named(rng.choice(TYPE_NAMES)) for name in ("a", "b", "c", "d")}


@pytest.mark.parametrize("data_model", ["LP64", "ILP32"])
def test_random_expressions_round_trip(data_model: str):
    rng = random.Random(20240611)
    ct = CTypes(data_model)
    for _ in range(20):
        types = random_types(rng, ct)
        program, loop = program_with(types, data_model)
        gen = RandomExprs(rng, ct, types)
        for _ in range(15):
            assert_round_trip(gen.expr(rng.randint(1, 4)), program, loop)


def random_polynomial(rng: random.Random, names: list[str]) -> z3.ArithRef:
    terms = []
    for _ in range(rng.randint(1, 4)):
        factors = [z3.Int(rng.choice(names)) for _ in range(rng.randint(0, 2))]
        coef = rng.choice([-12, -6, -3, -2, -1, -1, 1, 1, 2, 3, 6])
        terms.append(z3.IntVal(coef) * z3.Product(*factors) if factors else z3.IntVal(coef))
    return z3.Sum(*terms)


def test_random_spacer_formulas_round_trip():
    # 64-bit unsigned variables make z3_to_ir compute in __int128, which no C parser reads back
    rng = random.Random(7)
    ct = CTypes("ILP32")
    compare = [
        lambda p, q: p <= q,
        lambda p, q: p < q,
        lambda p, q: p >= q,
        lambda p, q: p > q,
        lambda p, q: p == q,
        lambda p, q: z3.Not(p <= q),
    ]
    for _ in range(10):
        types = random_types(rng, ct)
        program, loop = program_with(types)
        for _ in range(15):
            atoms = [
                rng.choice(compare)(random_polynomial(rng, sorted(types)), rng.randint(-3, 3))
                for _ in range(rng.randint(1, 3))
            ]
            formula = z3.Or(*atoms) if len(atoms) > 1 and rng.random() < 0.5 else z3.And(*atoms)
            assert_round_trip(to_ir(formula, {n: ir.Var(n, t) for n, t in types.items()}), program, loop)
