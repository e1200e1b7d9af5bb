"""A canonical form of polynomial (in)equalities, to drop candidates that say the same thing.

`y == 2*x`, `2*x == y` and `2*y == 4*x` get one key. Only exact arithmetic is understood:
constants, variables, value-preserving casts, and `+ - *` on signed types (mathematical in the
IR); anything else (unsigned wrap-around, division, ...) has no key and is compared as written.
"""

from __future__ import annotations

from collections.abc import Hashable
from math import gcd

from quokka.verifier.ir import Binary, Cast, Const, Expr, IntType, Unary, Var

Mono = tuple[tuple[str, int], ...]
Polynomial = dict[Mono, int]


def polynomial(e: Expr) -> Polynomial | None:
    """`e` as a polynomial with integer coefficients, when its arithmetic is exact."""
    if isinstance(e, Const):
        return {(): e.value} if e.value else {}
    if isinstance(e, Var):
        return {((e.name, 1),): 1}
    if isinstance(e, Cast):
        src = e.operand.type
        exact = isinstance(src, IntType) and e.type.contains(src) and not e.type.is_bool
        return polynomial(e.operand) if exact else None
    if isinstance(e, Unary) and e.op == "-" and e.type.signed:
        inner = polynomial(e.operand)
        return None if inner is None else {m: -c for m, c in inner.items()}
    if isinstance(e, Binary) and e.op in ("+", "-", "*") and e.type.signed:
        a, b = polynomial(e.left), polynomial(e.right)
        if a is None or b is None:
            return None
        return _times(a, b) if e.op == "*" else _plus(a, b, 1 if e.op == "+" else -1)
    return None


def _plus(a: Polynomial, b: Polynomial, sign: int) -> Polynomial:
    out = dict(a)
    for m, c in b.items():
        out[m] = out.get(m, 0) + sign * c
    return {m: c for m, c in out.items() if c}


def _times(a: Polynomial, b: Polynomial) -> Polynomial:
    out: Polynomial = {}
    for ma, ca in a.items():
        for mb, cb in b.items():
            exps = dict(ma)
            for v, k in mb:
                exps[v] = exps.get(v, 0) + k
            m = tuple(sorted(exps.items()))
            out[m] = out.get(m, 0) + ca * cb
    return {m: c for m, c in out.items() if c}


def key(e: Expr) -> Hashable:
    """A key shared by candidates with the same meaning (`e` itself when there is none)."""
    if not (isinstance(e, Binary) and e.op in ("==", "!=", "<=", "<", ">=", ">")):
        return _as_key(e)
    left, right = polynomial(e.left), polynomial(e.right)
    if left is None or right is None:
        return _as_key(e)
    if e.op in ("==", "!="):
        return (e.op, _primitive(_plus(left, right, -1)))
    # everything as P <= 0 over the integers
    p = _plus(left, right, -1) if e.op in ("<=", "<") else _plus(right, left, -1)
    if e.op in ("<", ">"):
        p = _plus(p, {(): 1}, 1)
    const = p.pop((), 0)
    g = 0
    for c in p.values():
        g = gcd(g, c)
    if g == 0:
        return _as_key(e)
    return ("<=", tuple(sorted((m, c // g) for m, c in p.items())), (-const) // g)


def _as_key(e: Expr) -> Hashable:
    out: Hashable = e
    return out


def _primitive(p: Polynomial) -> tuple[tuple[Mono, int], ...]:
    g = 0
    for c in p.values():
        g = gcd(g, c)
    terms = sorted(p.items())
    if not terms:
        return ()
    sign = 1 if terms[0][1] > 0 else -1
    return tuple((m, sign * c // g) for m, c in terms)
