"""Evaluate integer IR expressions on recorded states, with exactly `semantics`' meaning.

`compile_expr` turns an expression into a closure over a state (IR name -> value) once, so a
candidate can be checked against thousands of states quickly. Arrays are not supported (states
hold integer variables only); division by zero raises `UndefinedBehaviour`.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping

from quokka.verifier.ir import Binary, Cast, Const, Expr, IntType, Ite, Unary, Var, semantics

State = Mapping[str, int]
Fn = Callable[[State], int]
_COMPARE: dict[str, Callable[[int, int], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}
_RING: dict[str, Callable[[int, int], int]] = {"+": operator.add, "-": operator.sub, "*": operator.mul}


def compile_expr(e: Expr) -> Fn:
    """`e` as a function of a state; raises TypeError for array expressions."""
    if isinstance(e, Const):
        k = e.value
        return lambda s: k
    if isinstance(e, Var):
        name = e.name
        return lambda s: s[name]
    if isinstance(e, Binary):
        return _binary(e)
    if isinstance(e, Unary):
        a, op, ty = compile_expr(e.operand), e.op, e.type
        return lambda s: semantics.unary(op, a(s), ty)
    if isinstance(e, Cast):
        a, ty, lo, hi = compile_expr(e.operand), e.type, e.type.min, e.type.max
        if ty.is_bool:
            return lambda s: semantics.wrap(a(s), ty)
        return lambda s: v if lo <= (v := a(s)) <= hi else semantics.wrap(v, ty)
    if isinstance(e, Ite):
        c, t, o = compile_expr(e.cond), compile_expr(e.then), compile_expr(e.orelse)
        return lambda s: t(s) if c(s) else o(s)
    raise TypeError(f"cannot evaluate {type(e).__name__} on integer states")


def _binary(e: Binary) -> Fn:
    a, b, op = compile_expr(e.left), compile_expr(e.right), e.op
    if op == "&&":
        return lambda s: int(bool(a(s)) and bool(b(s)))
    if op == "||":
        return lambda s: int(bool(a(s)) or bool(b(s)))
    if op in _COMPARE:
        cmp = _COMPARE[op]
        return lambda s: int(cmp(a(s), b(s)))
    ty: IntType = e.type
    if op in _RING and ty.signed:
        f = _RING[op]  # signed arithmetic is exact: `semantics.arith` without the dispatch
        return lambda s: f(a(s), b(s))
    return lambda s: semantics.arith(op, a(s), b(s), ty)


def holds_on(e: Expr, states: list[State]) -> bool:
    """True when `e` is non-zero on every state (a state that makes it undefined counts as false)."""
    try:
        f = compile_expr(e)
        return all(f(s) for s in states)
    except (semantics.UndefinedBehaviour, KeyError, TypeError):
        return False
