"""Candidate polynomial equalities of a loop: the quantities its body conserves, zero on entry.

A polynomial P of degree <= 2 over the loop's variables (one integer type) with unknown
coefficients, such that P(after) - P(before) vanishes identically on every path from the loop's
head back to it, and P vanishes identically at the end of every path into the loop: each basis
vector of that linear system's null space is a candidate `P == 0` (`a == k*b + c` of the inner
loop of the extended Euclid algorithm). Only candidates: the algebra engine proves or drops them.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from ..ir import INT, Binary, Const, Expr, IntType, Program, Var

MAX_VARIABLES = 10
MAX_CANDIDATES = 6
Values = Mapping[str, Any]  # variable -> its value (a sympy polynomial) at the end of a path


def conserved(
    program: Program, names: Sequence[str], head: Values, around: Sequence[Values], into: Sequence[Values]
) -> list[Expr]:
    """Candidates for a loop whose paths back to its head end in `around` (over the `head`
    symbols) and whose paths into it end in `into`; over the variables `names` (written in it)."""
    import sympy

    chosen = _variables(program, names)
    if len(chosen) < 2 or not around:
        return []
    monomials = [m for d in (0, 1, 2) for m in itertools.combinations_with_replacement(chosen, d)]
    unknowns = [sympy.Dummy(f"u{k}") for k in range(len(monomials))]

    def template(values: Values) -> Any:
        return sum(u * sympy.Mul(*(values[v] for v in m)) for u, m in zip(unknowns, monomials, strict=True))

    rows = [template(end) - template(head) for end in around] + [template(end) for end in into]
    equations = [c for row in rows for c in _coefficients(sympy.expand(row), unknowns)]
    if not equations:
        return []
    matrix = sympy.Matrix([[eq.coeff(u) for u in unknowns] for eq in equations])
    ty = program.var(chosen[0]).type
    assert isinstance(ty, IntType)
    basis = matrix.nullspace()[:MAX_CANDIDATES]
    return [_equality(vector, monomials, ty) for vector in basis]


def _variables(program: Program, names: Sequence[str]) -> list[str]:
    """Those of `names` (in order of preference) of their most common integer type (not `_Bool`,
    not pointers), at most MAX_VARIABLES."""
    typed = [n for n in names if _plain_int(program.var(n).type)]
    if not typed:
        return []
    types = [program.var(n).type for n in typed]
    common = max(types, key=types.count)
    return [n for n in typed if program.var(n).type == common][:MAX_VARIABLES]


def _plain_int(ty: object) -> bool:
    return isinstance(ty, IntType) and not ty.is_bool and not ty.is_pointer


def _coefficients(poly: Any, unknowns: Sequence[Any]) -> list[Any]:
    """The coefficients of `poly` as a polynomial in its symbols other than `unknowns`."""
    import sympy

    if poly == 0:
        return []
    symbols = sorted(poly.free_symbols - set(unknowns), key=str)
    if not symbols:
        return [poly]
    return list(sympy.Poly(poly, *symbols).coeffs())


def _equality(vector: Any, monomials: Sequence[tuple[str, ...]], ty: IntType) -> Expr:
    """`positive terms == negative terms` of the integer multiple of `vector` in type `ty`."""
    import sympy

    scale = sympy.ilcm(*(sympy.fraction(c)[1] for c in vector))
    sides: tuple[list[Expr], list[Expr]] = ([], [])
    for c, m in zip(vector, monomials, strict=True):
        k = int(c * scale)
        if k:
            sides[0 if k > 0 else 1].append(_term(abs(k), m, ty))
    left, right = (_sum(side, ty) for side in sides)
    return Binary("==", left, right, INT)


def _term(k: int, monomial: tuple[str, ...], ty: IntType) -> Expr:
    if not monomial:
        return Const(k, ty)
    out: Expr = Var(monomial[0], ty)
    for name in monomial[1:]:
        out = Binary("*", out, Var(name, ty), ty)
    return out if k == 1 else Binary("*", Const(k, ty), out, ty)


def _sum(terms: list[Expr], ty: IntType) -> Expr:
    if not terms:
        return Const(0, ty)
    out = terms[0]
    for t in terms[1:]:
        out = Binary("+", out, t, ty)
    return out
