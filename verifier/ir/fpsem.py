"""IEEE floating point on Python floats, exactly as the IR defines it (see `ir`).

A `double` is a Python float. A `float` is a Python float that is a binary32 value: every
operation computes in double and rounds the result to binary32 once, which is the correctly
rounded binary32 result for `+ - * /` (double has more than 2*24 + 2 significand bits, so the
double rounding is innocuous). Rounding is to nearest, ties to even, as gcc's SSE code does
(x86-64; `-m32` builds get `-mfpmath=sse`, see `replay`). Overflow gives an infinity, 0/0 a
NaN: no float operation is undefined in C's sense except a conversion to an integer type whose
truncated value is not a value of that type (`to_int` raises `UndefinedBehaviour`).

Inputs: a `Havoc` of a float variable takes the IEEE bit pattern of the value (the input modulo
2**32 or 2**64): `from_bits`/`to_bits`. The gcc replay harness reinterprets its integer input
the same way, so the interpreter and the compiled program see the same value, NaNs and
infinities included (the sign and payload of a NaN do not matter to C's operators).

The interpreter (`interp`) and constant folding (`cexpr`) use these functions; the Z3 encoding
(`smt`) mirrors them with Z3's floating-point theory.
"""

from __future__ import annotations

import math
import operator
import re
import struct
from collections.abc import Callable
from fractions import Fraction

from quokka.verifier.ir import DOUBLE, FLOAT, FloatType, IntType
from quokka.verifier.ir.semantics import UndefinedBehaviour


def round_to(value: float, ty: FloatType) -> float:
    """The double `value` rounded to `ty` (to nearest even; beyond the range: an infinity)."""
    if ty == DOUBLE or math.isnan(value) or math.isinf(value):
        return value
    try:
        return float(struct.unpack("<f", struct.pack("<f", value))[0])
    except OverflowError:  # rounds to an infinity, which `struct` refuses to produce
        return math.copysign(math.inf, value)


def from_fraction(q: Fraction, ty: FloatType) -> float:
    """The exact rational `q` rounded to `ty` (to nearest even), without double rounding."""
    if q == 0:
        return 0.0
    sign, q = (-1.0 if q < 0 else 1.0), abs(q)
    emin, emax = 2 - (1 << (ty.ebits - 1)), (1 << (ty.ebits - 1)) - 1
    e = q.numerator.bit_length() - q.denominator.bit_length()  # 2**e <= q < 2**(e+2)
    if Fraction(2) ** e > q:
        e -= 1
    if Fraction(2) ** (e + 1) <= q:
        e += 1
    quantum = Fraction(2) ** (max(e, emin) - ty.sbits + 1)
    m = round(q / quantum)  # Fraction.__round__ rounds half to even
    value = m * quantum
    if value >= Fraction(2) ** (emax + 1):
        return sign * math.inf
    return sign * float(value)  # exact: a value of `ty` is a double


def from_int(value: int, ty: FloatType) -> float:
    """The integer `value` converted to `ty` (rounded to nearest even)."""
    if ty == DOUBLE or abs(value) < (1 << 53):
        return round_to(float(value), ty)  # int -> float is correctly rounded in Python
    return from_fraction(Fraction(value), ty)


def convert(value: float, ty: FloatType) -> float:
    """A float value converted to the float type `ty`."""
    return round_to(value, ty)


def to_int(value: float, ty: IntType) -> int:
    """C's conversion of a float to the integer type `ty` (not `_Bool`): truncation toward zero.

    Raises `UndefinedBehaviour` when the truncated value is not a value of `ty` (NaN and the
    infinities included), as C leaves that conversion undefined.
    """
    if math.isnan(value) or math.isinf(value):
        raise UndefinedBehaviour(f"conversion of {value} to {ty.name}")
    truncated = math.trunc(value)
    if not ty.min <= truncated <= ty.max:
        raise UndefinedBehaviour(f"conversion of {value!r} to {ty.name}: out of range")
    return truncated


def _divide(a: float, b: float) -> float:
    if b != 0:
        return a / b
    if a == 0 or math.isnan(a):
        return math.nan
    negative = (math.copysign(1.0, a) < 0) != (math.copysign(1.0, b) < 0)
    return -math.inf if negative else math.inf


_ARITH: dict[str, Callable[[float, float], float]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": _divide,
}


def arith(op: str, a: float, b: float, ty: FloatType) -> float:
    """`a op b` for op in `+ - * /` on values of `ty`, rounded to `ty`."""
    if op not in _ARITH:
        raise ValueError(f"not a floating-point operator: {op}")
    return round_to(_ARITH[op](a, b), ty)


def compare(op: str, a: float, b: float) -> int:
    """An IEEE comparison yielding int 0/1 (Python's float comparisons are IEEE's)."""
    table = {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b, "!=": a != b}
    return int(table[op])


def from_bits(bits: int, ty: FloatType) -> float:
    """The value whose IEEE encoding in `ty` is `bits` modulo 2**ty.bits."""
    if ty == FLOAT:
        return float(struct.unpack("<f", (bits & 0xFFFFFFFF).to_bytes(4, "little"))[0])
    return float(struct.unpack("<d", (bits & 0xFFFFFFFFFFFFFFFF).to_bytes(8, "little"))[0])


def to_bits(value: float, ty: FloatType) -> int:
    """The IEEE encoding of `value` (a value of `ty`) as an unsigned integer."""
    if ty == FLOAT:
        return int.from_bytes(struct.pack("<f", value), "little")
    return int.from_bytes(struct.pack("<d", value), "little")


def describe(bits: int, ty: FloatType) -> str:
    """An input's value as text: `1.5`, `-inf`, `nan` (the bit pattern for a NaN)."""
    value = from_bits(bits, ty)
    if math.isnan(value):
        return f"nan (bits {bits & ((1 << ty.bits) - 1):#x})"
    return repr(value)


# ----------------------------------------------------------------------------- literals

_DECIMAL = re.compile(r"(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?([fFlL]?)\Z")
_HEX = re.compile(r"0[xX]([0-9a-fA-F]*)\.?([0-9a-fA-F]*)[pP]([+-]?\d+)([fFlL]?)\Z")


def literal(text: str) -> tuple[float, FloatType]:
    """A C floating constant (decimal or hexadecimal, suffix `f` or none) as its value and type,
    rounded once from the exact decimal or hexadecimal value.

    Raises ValueError for malformed text and for `long double` constants (suffix `l`).
    """
    exact, suffix = _literal_value(text)
    if suffix in ("l", "L"):
        raise ValueError(f"long double constant {text}")
    ty = FLOAT if suffix in ("f", "F") else DOUBLE
    return from_fraction(exact, ty), ty


def _literal_value(text: str) -> tuple[Fraction, str]:
    m = _DECIMAL.match(text)
    if m is not None and (m.group(2) or "." in m.group(1)):
        mantissa = m.group(1)
        number = Fraction(mantissa if not mantissa.endswith(".") else mantissa[:-1])
        exponent = int(m.group(2)[1:]) if m.group(2) else 0
        return _scaled(number, exponent, len(mantissa)), m.group(3)
    h = _HEX.match(text)
    if h is not None and (h.group(1) or h.group(2)):
        digits = h.group(1) + h.group(2)
        number = Fraction(int(digits, 16), 16 ** len(h.group(2)))
        limit = 1200 + 4 * len(digits)  # as in `_scaled`: 2**-1200 rounds to 0, 2**1200 to infinity
        return number * Fraction(2) ** max(-limit, min(limit, int(h.group(3)))), h.group(4)
    raise ValueError(f"malformed floating constant {text!r}")


def _scaled(number: Fraction, exponent: int, digits: int) -> Fraction:
    """`number * 10**exponent`, where `number` has at most `digits` digits; an exponent far
    beyond every float's range is clamped (the result still rounds to 0 or an infinity)."""
    limit = 400 + digits  # 10**-400 rounds to 0 and 10**400 to infinity in every format here
    return number * Fraction(10) ** max(-limit, min(limit, exponent))
