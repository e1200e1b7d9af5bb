"""IR expressions as bit-vector terms: every integer a Z3 `BitVec` of its type's width.

The same meaning as `smt` wherever C's behaviour is defined: unsigned arithmetic wraps,
conversions wrap or extend, `/` and `%` truncate (`bvsdiv`, `bvsrem`), comparisons follow the
operands' signedness. Signed arithmetic wraps here, where `smt` computes it exactly; the two agree
on every execution without signed overflow, which `defined` (with `no_overflow`) tells apart.
Arrays are `Array(BitVec(64), BitVec(w))`: an index is extended to 64 bits as its type says.

Decision procedures for bit-vectors are complete, so loop-free programs get an exact answer
(`engines.bitblast`) where the integer encoding's mix of `Int2BV` and nonlinear arithmetic
makes Z3 give up.
"""

from __future__ import annotations

from collections.abc import Callable

import z3
from quokka.verifier.encode.smt import Domain, Env, Translator, float_value, sort_of
from quokka.verifier.errors import UnsupportedByEngine
from quokka.verifier.ir import (
    ArrayType,
    Binary,
    Cast,
    Const,
    Expr,
    FloatToInt,
    FloatType,
    Forall,
    IntType,
    ToFloat,
    Type,
    Unary,
)

INDEX_BITS = 64
_Pair = Callable[[z3.BitVecRef, z3.BitVecRef], z3.BitVecRef]

_SIGNED_COMPARE: dict[str, Callable[[z3.BitVecRef, z3.BitVecRef], z3.BoolRef]] = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}
_UNSIGNED_COMPARE: dict[str, Callable[[z3.BitVecRef, z3.BitVecRef], z3.BoolRef]] = {
    "<": z3.ULT,
    "<=": z3.ULE,
    ">": z3.UGT,
    ">=": z3.UGE,
}
_SIGNED_DIVISION: dict[str, _Pair] = {"/": lambda a, b: a / b, "%": z3.SRem, ">>": lambda a, b: a >> b}
_UNSIGNED_DIVISION: dict[str, _Pair] = {"/": z3.UDiv, "%": z3.URem, ">>": z3.LShR}
_COMMON: dict[str, _Pair] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "<<": lambda a, b: a << b,
    "&": lambda a, b: a & b,
    "|": lambda a, b: a | b,
    "^": lambda a, b: a ^ b,
}


def bv_sort(ty: Type) -> z3.SortRef:
    if isinstance(ty, ArrayType):
        return z3.ArraySort(z3.BitVecSort(INDEX_BITS), z3.BitVecSort(ty.elem.bits))
    if isinstance(ty, IntType):
        return z3.BitVecSort(ty.bits)
    return sort_of(ty)


def extend(t: z3.BitVecRef, source: IntType, bits: int) -> z3.BitVecRef:
    """The value `t` of `source` converted to `bits` bits (C's conversion: wraps when narrower)."""
    if bits < source.bits:
        return z3.Extract(bits - 1, 0, t)
    if bits == source.bits:
        return t
    grow = z3.SignExt if source.signed else z3.ZeroExt
    return grow(bits - source.bits, t)


class BitTranslator(Translator):
    """Translates IR expressions into bit-vector terms (see the module docstring)."""

    def _const(self, e: Const) -> z3.ExprRef:
        return z3.BitVecVal(e.value, e.type.bits)

    def _truth(self, f: z3.BoolRef, ty: Type) -> z3.ExprRef:
        bits = ty.bits if isinstance(ty, IntType) else 32
        return z3.If(f, z3.BitVecVal(1, bits), z3.BitVecVal(0, bits))

    def _index(self, e: Expr) -> z3.ExprRef:
        assert isinstance(e.type, IntType)
        return extend(self.term(e), e.type, INDEX_BITS)

    def inside(self, e: Forall) -> Translator:
        raise UnsupportedByEngine("a quantified invariant has no bit-precise encoding")

    def _compare(self, e: Binary) -> z3.BoolRef:
        a, b = self.term(e.left), self.term(e.right)
        if e.op == "==":
            return a == b
        if e.op == "!=":
            return a != b
        signed = isinstance(e.left.type, IntType) and e.left.type.signed
        return (_SIGNED_COMPARE if signed else _UNSIGNED_COMPARE)[e.op](a, b)

    def _below(self, e: Expr, bound: int) -> z3.BoolRef:
        t, ty = self.term(e), e.type
        assert isinstance(ty, IntType)
        nonneg = t >= 0 if ty.signed else z3.BoolVal(True)
        if bound > ty.max:
            return nonneg
        return z3.And(nonneg, t < bound) if ty.signed else z3.ULT(t, bound)

    def _fits(self, e: Binary | Unary) -> z3.BoolRef:
        if isinstance(e, Unary):
            return self.term(e.operand) != e.type.min
        a, b = self.term(e.left), self.term(e.right)
        if e.op == "+":
            return z3.And(z3.BVAddNoOverflow(a, b, True), z3.BVAddNoUnderflow(a, b))
        if e.op == "-":
            return z3.And(z3.BVSubNoOverflow(a, b), z3.BVSubNoUnderflow(a, b, True))
        return z3.And(z3.BVMulNoOverflow(a, b, True), z3.BVMulNoUnderflow(a, b))

    def _shift_fits(self, e: Binary) -> z3.BoolRef:
        a, b = self.term(e.left), self.term(e.right)
        return (a << b) >> b == a

    def _unary(self, e: Unary) -> z3.ExprRef:
        if e.op == "!":
            return self._truth(z3.Not(self.formula(e.operand)), e.type)
        a = self.term(e.operand)
        return -a if e.op == "-" else ~a

    def _cast(self, e: Cast) -> z3.ExprRef:
        a, source = self.term(e.operand), e.operand.type
        assert isinstance(source, IntType)
        if e.type.is_bool:
            return z3.If(a != 0, z3.BitVecVal(1, 1), z3.BitVecVal(0, 1))
        return extend(a, source, e.type.bits)

    def _arith(self, e: Binary) -> z3.ExprRef:
        a, b = self.term(e.left), self.term(e.right)
        common = _COMMON.get(e.op)
        if common is not None:
            return common(a, b)
        return (_SIGNED_DIVISION if e.type.signed else _UNSIGNED_DIVISION)[e.op](a, b)

    def _to_float(self, e: ToFloat) -> z3.FPRef:
        a, source, sort = self.term(e.operand), e.operand.type, sort_of(e.type)
        if isinstance(source, FloatType):
            return z3.fpFPToFP(z3.RNE(), a, sort)
        assert isinstance(source, IntType)
        convert = z3.fpSignedToFP if source.signed else z3.fpUnsignedToFP
        return convert(z3.RNE(), a, sort)

    def _float_to_int(self, e: FloatToInt) -> z3.ExprRef:
        x, ty = self.term(e.operand), e.type
        convert = z3.fpToSBV if ty.signed else z3.fpToUBV
        return convert(z3.RTZ(), x, z3.BitVecSort(ty.bits))


class BitDomain(Domain):
    """Integers as bit-vectors of their type's width (`BitTranslator`)."""

    name = "bits"

    def translator(self, env: Env) -> Translator:
        return BitTranslator(env)

    def sort_of(self, ty: Type) -> z3.SortRef:
        return bv_sort(ty)

    def in_range(self, t: z3.ExprRef, ty: IntType) -> z3.BoolRef:
        return z3.BoolVal(True)  # every bit pattern is a value of its type

    def constant_array(self, value: z3.ExprRef) -> z3.ArrayRef:
        return z3.K(z3.BitVecSort(INDEX_BITS), value)

    def zero(self, ty: Type) -> z3.ExprRef:
        if isinstance(ty, IntType):
            return z3.BitVecVal(0, ty.bits)
        if isinstance(ty, FloatType):
            return float_value(0.0, ty)
        return super().zero(ty)

    def value(self, t: z3.ExprRef, ty: Type) -> int:
        assert isinstance(t, z3.BitVecNumRef), f"not a model value: {t}"
        elem = ty.elem if isinstance(ty, ArrayType) else ty  # an array havoc's value: its fill
        return int(t.as_signed_long() if isinstance(elem, IntType) and elem.signed else t.as_long())


BITS = BitDomain()
