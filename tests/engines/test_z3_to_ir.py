"""Z3 terms back to IR: the IR expression means exactly the Z3 term and obeys the IR's typing."""

from __future__ import annotations

import random

import pytest
import z3
from quokka.verifier.encode.smt import Translator
from quokka.verifier.encode.z3_to_ir import INT128, LLONG, Unsupported, arith_type, to_ir
from quokka.verifier.ir import INT, UINT, ArrayType, Assume, Expr, Var, int_types
from quokka.verifier.ir.builder import ProgramBuilder
from quokka.verifier.ir.typecheck import check_program

ULONG = int_types("LP64")["unsigned long"]
X, Y = z3.Ints("x y")
VARS = {"x": Var("x", INT), "y": Var("y", UINT)}


def _equivalent(formula: z3.BoolRef, e: Expr, env: dict[str, z3.ExprRef]) -> bool:
    solver = z3.Solver()
    solver.add(formula != Translator(env).formula(e))
    return solver.check() == z3.unsat


def _well_typed(e: Expr, variables: dict[str, Var]) -> None:
    b = ProgramBuilder("t.c")
    for v in variables.values():
        b.var(v.name, v.type)
    b.emit(Assume(e))
    check_program(b.build())


FORMULAS = [
    X / 3 == Y, X % 3 == Y, X / -3 == Y, X % -7 == Y, X / 1 == Y,
    z3.Not(X + 2 * Y >= 1), z3.Implies(X > 0, Y == X * X), z3.If(X > Y, X, Y) == 2,
    z3.Distinct(X, Y, 3), z3.Xor(X > 0, Y > 0), z3.And(), z3.Or(), X - Y - 3 < -X,
    z3.If(X > 0, Y > 1, Y < -1), (X > 0) == (Y > 0), X * 4294967296 <= Y,
]


@pytest.mark.parametrize("formula", FORMULAS, ids=str)
def test_translation_is_exact_and_well_typed(formula: z3.BoolRef) -> None:
    e = to_ir(formula, VARS)
    assert _equivalent(formula, e, {"x": X, "y": Y})
    _well_typed(e, VARS)


def test_random_euclidean_divisions_are_exact() -> None:
    rng = random.Random(4)
    for _ in range(20):
        k = rng.choice([-5, -3, -2, -1, 1, 2, 3, 7])
        a = X * rng.randint(-3, 3) + Y + rng.randint(-10, 10)
        formula = z3.And(a / k <= Y, a % k != X) if rng.random() < 0.5 else a / k + a % k == X
        assert _equivalent(formula, to_ir(formula, VARS), {"x": X, "y": Y})


def test_arithmetic_type_is_the_narrowest_that_fits() -> None:
    u = z3.Int("u")
    assert arith_type(X <= 3, {"x": Var("x", INT)}) == INT
    assert arith_type(X <= 2**40, {"x": Var("x", INT)}) == LLONG
    assert arith_type(Y <= 3, {"y": Var("y", UINT)}) == LLONG
    assert arith_type(u <= 3, {"u": Var("u", ULONG)}) == INT128


def test_array_reads_translate() -> None:
    a = z3.Array("a", z3.IntSort(), z3.IntSort())
    variables = {"a": Var("a", ArrayType(INT, 4)), "x": Var("x", INT)}
    formula = z3.Select(a, X + 1) == 5
    e = to_ir(formula, variables)
    assert _equivalent(formula, e, {"a": a, "x": X})
    _well_typed(e, variables)


@pytest.mark.parametrize(
    "formula",
    [z3.ForAll([X], X + Y > X), X / Y == 1, z3.ToReal(X) < 1, z3.Int("ghost") > 0],
    ids=["forall", "non-constant divisor", "real", "unknown variable"],
)
def test_untranslatable_terms_raise(formula: z3.BoolRef) -> None:
    with pytest.raises(Unsupported):
        to_ir(formula, VARS)
