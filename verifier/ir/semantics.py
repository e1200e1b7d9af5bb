"""C integer semantics on Python ints, exactly as the IR defines them (see `ir`).

The interpreter, constant folding and the dynamic proposer use these functions; the Z3 encoder
mirrors them symbolically, and the tests check both against gcc.
"""

from __future__ import annotations

import operator
from collections.abc import Callable

from quokka.verifier.ir import IntType


class UndefinedBehaviour(ArithmeticError):
    """An operation whose result C leaves undefined (division by zero, bad shift)."""


def wrap(value: int, ty: IntType) -> int:
    """Convert `value` to `ty` as a C conversion does: modulo 2**bits, `_Bool` as `!= 0`."""
    if ty.is_bool:
        return int(value != 0)
    value &= (1 << ty.bits) - 1
    if ty.signed and value >> (ty.bits - 1):
        value -= 1 << ty.bits
    return value


def c_div(a: int, b: int) -> int:
    """C's `/`: the quotient truncated toward zero."""
    if b == 0:
        raise UndefinedBehaviour("division by zero")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def c_mod(a: int, b: int) -> int:
    """C's `%`: the remainder has the sign of the dividend, and a == (a/b)*b + a%b."""
    return a - c_div(a, b) * b


def _shift(op: str, a: int, b: int, ty: IntType) -> int:
    if b < 0 or b >= ty.bits:
        raise UndefinedBehaviour(f"shift by {b} on {ty.bits}-bit {ty.name}")
    return a << b if op == "<<" else a >> b


def _bitwise(op: str, a: int, b: int, ty: IntType) -> int:
    # On two's complement values Python's infinite-precision bit operations agree with C's.
    if op == "&":
        return a & b
    if op == "|":
        return a | b
    return a ^ b


_ARITH: dict[str, Callable[[int, int], int]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": c_div, "%": c_mod,
}


def arith(op: str, a: int, b: int, ty: IntType) -> int:
    """`a op b` for operands already converted to `ty`; unsigned results wrap, signed are exact."""
    if op in _ARITH:
        r = _ARITH[op](a, b)
    elif op in ("<<", ">>"):
        r = _shift(op, a, b, ty)
    elif op in ("&", "|", "^"):
        r = _bitwise(op, a, b, ty)
    else:
        raise ValueError(f"not an arithmetic operator: {op}")
    return r if ty.signed else wrap(r, ty)


def compare(op: str, a: int, b: int) -> int:
    """C comparison yielding int 0/1."""
    table = {
        "<": a < b,
        "<=": a <= b,
        ">": a > b,
        ">=": a >= b,
        "==": a == b,
        "!=": a != b,
    }
    return int(table[op])


def unary(op: str, a: int, ty: IntType) -> int:
    """`-a`, `~a` (on `ty`) or `!a`."""
    if op == "!":
        return int(a == 0)
    r = -a if op == "-" else ~a
    return r if ty.signed else wrap(r, ty)


def in_range(value: int, ty: IntType) -> bool:
    return ty.min <= value <= ty.max
