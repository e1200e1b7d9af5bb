"""Candidate facts over integer variables, and their translation to typed IR expressions.

A `Fact` is `lhs op rhs` (or `lhs % modulus == rhs`) with polynomial sides over IR variable names,
read with mathematical integers. `to_expr` turns it into an IR expression that means exactly that:
every variable is converted to one signed type `W` wide enough for all of them and for every
constant (the narrowest of the variables' own signed types, int, long long, __int128), and
signed IR arithmetic is mathematical, so the IR expression never wraps.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from quokka.verifier.ir import INT, INT128, LLONG, Binary, Cast, Const, Expr, IntType, Unary, Var, VarDecl

from .polynomial import Monomial, Poly, degree

_COMPARISONS = frozenset({"==", "<=", ">=", "<", ">", "!="})


@dataclass(frozen=True)
class Fact:
    """`lhs op rhs`, or `(lhs % modulus) op rhs` when `modulus` is set; `kind` says who found it."""

    lhs: Poly
    op: str
    rhs: Poly
    kind: str
    modulus: int | None = None


def evaluate_poly(poly: Poly, state: Mapping[str, int]) -> int:
    total = 0
    for mono, coeff in poly:
        term = coeff
        for v, e in mono:
            term *= state[v] ** e
        total += term
    return total


def holds(fact: Fact, state: Mapping[str, int]) -> bool:
    """The fact on one state, with C's `%` (truncating) for congruences."""
    left = evaluate_poly(fact.lhs, state)
    if fact.modulus is not None:
        q = abs(left) // fact.modulus
        left -= (q if left >= 0 else -q) * fact.modulus
    right = evaluate_poly(fact.rhs, state)
    return {
        "==": left == right,
        "<=": left <= right,
        ">=": left >= right,
        "<": left < right,
        ">": left > right,
        "!=": left != right,
    }[fact.op]


def variables(fact: Fact) -> set[str]:
    return {v for side in (fact.lhs, fact.rhs) for mono, _ in side for v, _ in mono}


def constants(fact: Fact) -> list[int]:
    out = [c for side in (fact.lhs, fact.rhs) for _, c in side]
    return out if fact.modulus is None else [*out, fact.modulus]


def wide_type(types: Sequence[IntType], constants: Sequence[int], long_long: IntType) -> IntType:
    """The narrowest signed type that holds every value of `types` and every constant."""
    own = {t for t in types if t.signed and not t.is_bool}
    options = sorted({*own, INT, long_long, INT128}, key=lambda t: t.bits)
    for ty in options:
        if all(ty.contains(t) for t in types) and all(ty.min <= c <= ty.max for c in constants):
            return ty
    raise ValueError("a constant does not fit in 128 bits")


def long_long(decls: Mapping[str, VarDecl]) -> IntType:
    for d in decls.values():
        if isinstance(d.type, IntType) and d.type.name == "long long":
            return d.type
    return LLONG


class ExprBuilder:
    """Builds IR expressions for facts over the declarations of one program."""

    def __init__(self, decls: Mapping[str, VarDecl]) -> None:
        self.decls = decls
        self.long_long = long_long(decls)

    def int_type(self, name: str) -> IntType:
        ty = self.decls[name].type
        assert isinstance(ty, IntType)
        return ty

    def to_expr(self, fact: Fact) -> Expr:
        """The fact as an IR comparison (type int) over `W`-typed operands (see module docstring)."""
        assert fact.op in _COMPARISONS
        w = wide_type([self.int_type(v) for v in sorted(variables(fact))], constants(fact), self.long_long)
        left = self.poly(fact.lhs, w)
        if fact.modulus is not None:
            left = Binary("%", left, Const(fact.modulus, w), w)
        return Binary(fact.op, left, self.poly(fact.rhs, w), INT)

    def var(self, name: str, w: IntType) -> Expr:
        ty = self.int_type(name)
        v = Var(name, ty)
        return v if ty == w else Cast(v, w)

    def monomial(self, mono: Monomial, coeff: int, w: IntType) -> Expr:
        """`coeff*x*x*y` (the factor 1 is left out)."""
        factors: list[Expr] = [self.var(v, w) for v, e in mono for _ in range(e)]
        if coeff != 1 or not factors:
            factors.insert(0, Const(coeff, w))
        out = factors[0]
        for f in factors[1:]:
            out = Binary("*", out, f, w)
        return out

    def _first(self, mono: Monomial, coeff: int, w: IntType) -> Expr:
        if coeff == -1 and mono:
            return Unary("-", self.monomial(mono, 1, w), w)
        return self.monomial(mono, coeff, w)

    def poly(self, poly: Poly, w: IntType) -> Expr:
        """The sum, positive terms first, highest degree first; 0 when empty."""
        terms = sorted(poly, key=lambda t: (t[1] < 0, -degree(t[0])))
        if not terms:
            return Const(0, w)
        out = self._first(*terms[0], w)
        for mono, coeff in terms[1:]:
            out = Binary("+" if coeff > 0 else "-", out, self.monomial(mono, abs(coeff), w), w)
        return out


def equation(poly: Poly, solved: str | None, kind: str) -> Fact:
    """`poly == 0` arranged for reading: `c*v == rest` for a solved variable `v`, otherwise the
    positive terms on the left and the negated negative ones on the right."""
    if solved is not None:
        lead = next((m, c) for m, c in poly if m == ((solved, 1),))
        sign = 1 if lead[1] > 0 else -1
        rest = tuple((m, -sign * c) for m, c in poly if m != lead[0])
        return Fact(((lead[0], sign * lead[1]),), "==", rest, kind)
    pos = tuple((m, c) for m, c in poly if c > 0)
    neg = tuple((m, -c) for m, c in poly if c < 0)
    if not pos:
        pos, neg = neg, ()
    return Fact(pos, "==", neg, kind)


def linear(coeffs: Mapping[str, int], op: str, bound: int, kind: str) -> Fact:
    """`sum(c*v) op bound`, with the variables in the given order."""
    lhs = tuple((((v, 1),), c) for v, c in coeffs.items() if c)
    return Fact(lhs, op, (((), bound),) if bound else (), kind)
