"""IR expressions as Z3 terms, with exactly the meaning `semantics` gives them.

Integers are Z3 `Int`s; unsigned results are reduced modulo 2**bits, signed ones are exact;
arrays are `Array(Int, Int)`. `term` gives an integer term, `formula` a Boolean one (C truth: != 0).

Floats are terms of Z3's floating-point theory (`FPSort(ebits, sbits)`), rounded to nearest
even (`fpsem`): integers convert through bit-vectors of their width (`Int2BV`, exact for values
of the type), a float converts to an integer with `fpToSBV`/`fpToUBV` toward zero, whose value
SMT-LIB leaves unspecified exactly where C's behaviour is undefined: `float_to_int_defined`
gives the condition under which it is a value (`bmc_unroll` blocks the other paths). IEEE
equality is `fpEQ` (never Z3's `==`, which tells +0.0 from -0.0 and equates NaNs).

`Domain` bundles these choices (sorts, ranges, the translator) for the encodings that can also
run bit-precisely (`smt_bv`: every integer a bit-vector of its type's width).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping

import z3
from quokka.verifier.ir import (
    FLOAT_NODES,
    ArrayType,
    Binary,
    Cast,
    Const,
    Expr,
    FloatBinary,
    FloatCompare,
    FloatConst,
    FloatExpr,
    FloatToInt,
    FloatType,
    FloatUnary,
    Forall,
    IntType,
    Ite,
    Select,
    Store,
    ToFloat,
    Type,
    Unary,
    Var,
    fpsem,
    store_chain,
)

Env = Mapping[str, z3.ExprRef]

_COMPARE = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
}


_FP_COMPARE: dict[str, Callable[[z3.FPRef, z3.FPRef], z3.BoolRef]] = {
    "<": z3.fpLT,
    "<=": z3.fpLEQ,
    ">": z3.fpGT,
    ">=": z3.fpGEQ,
    "==": z3.fpEQ,
    "!=": lambda a, b: z3.Not(z3.fpEQ(a, b)),
}
_FP_ARITH: dict[str, Callable[[z3.FPRMRef, z3.FPRef, z3.FPRef], z3.FPRef]] = {
    "+": z3.fpAdd,
    "-": z3.fpSub,
    "*": z3.fpMul,
    "/": z3.fpDiv,
}


def sort_of(ty: Type) -> z3.SortRef:
    if isinstance(ty, ArrayType):
        return z3.ArraySort(z3.IntSort(), z3.IntSort())
    if isinstance(ty, FloatType):
        return z3.FPSort(ty.ebits, ty.sbits)
    return z3.IntSort()


def float_value(value: float, ty: FloatType) -> z3.FPRef:
    """The Z3 numeral of a value of `ty` (built from its IEEE encoding: exact, -0.0 included)."""
    return z3.simplify(z3.fpBVToFP(z3.BitVecVal(fpsem.to_bits(value, ty), ty.bits), sort_of(ty)))


def float_of_bits(bits: z3.BitVecRef, ty: FloatType) -> z3.FPRef:
    """The float whose IEEE encoding is the bit-vector `bits` (any pattern: NaNs included)."""
    return z3.fpBVToFP(bits, sort_of(ty))


def float_to_int_defined(x: z3.FPRef, ty: IntType) -> z3.BoolRef:
    """C defines the conversion of the float `x` to `ty`: its truncation is a value of `ty`
    (false for NaN and the infinities). Compares the truncation with powers of two, which every
    float format holds (or rounds to an infinity beyond its range, which is then right too)."""
    sort = x.sort()
    truncated = z3.fpRoundToIntegral(z3.RTZ(), x)
    low = z3.FPVal(float(ty.min), sort)  # 0 or -2**(bits-1)
    above = z3.FPVal(float(ty.max + 1), sort)  # 2**bits or 2**(bits-1)
    return z3.And(z3.fpGEQ(truncated, low), z3.fpLT(truncated, above))


def const(name: str, ty: Type) -> z3.ExprRef:
    """A fresh Z3 constant for a variable of type `ty`."""
    return z3.Const(name, sort_of(ty))


def in_range(t: z3.ArithRef, ty: IntType) -> z3.BoolRef:
    """`t` is a value of `ty`."""
    return z3.And(t >= ty.min, t <= ty.max)


def wrap(t: z3.ArithRef, ty: IntType) -> z3.ArithRef:
    """The C conversion of the integer `t` to `ty` (modulo 2**bits; `_Bool`: t != 0)."""
    if ty.is_bool:
        return z3.If(t != 0, z3.IntVal(1), z3.IntVal(0))
    modulus = 1 << ty.bits
    if ty.signed:
        half = 1 << (ty.bits - 1)
        return ((t + half) % modulus) - half
    return t % modulus


def trunc_div(a: z3.ArithRef, b: z3.ArithRef) -> z3.ArithRef:
    """C's `/`. Z3's `div` is Euclidean; both agree when the dividend is non-negative."""
    q = a / b
    return z3.If(z3.Or(a >= 0, a % b == 0), q, z3.If(b > 0, q + 1, q - 1))


def trunc_mod(a: z3.ArithRef, b: z3.ArithRef) -> z3.ArithRef:
    return a - b * trunc_div(a, b)


def _const_value(e: Expr) -> int | None:
    return e.value if isinstance(e, Const) else None


class Translator:
    """Translates IR expressions over an environment of Z3 terms (variable name -> term)."""

    def __init__(self, env: Env) -> None:
        self.env = env

    def term(self, e: Expr) -> z3.ExprRef:
        """The value of `e` (an Int term, or an array term for array expressions)."""
        if isinstance(e, Const):
            return self._const(e)
        if isinstance(e, Var):
            return self.env[e.name]
        if isinstance(e, Binary) and (e.op in _COMPARE or e.op in ("&&", "||")):
            return self._truth(self.formula(e), e.type)
        if isinstance(e, Unary):
            return self._unary(e)
        if isinstance(e, Binary):
            return self._arith(e)
        if isinstance(e, Cast):
            return self._cast(e)
        if isinstance(e, Ite):
            return z3.If(self.formula(e.cond), self.term(e.then), self.term(e.orelse))
        if isinstance(e, Select):
            return z3.Select(self.term(e.array), self._index(e.index))
        if isinstance(e, Store):
            return self._stores(e)
        if isinstance(e, Forall):
            return self._truth(self.formula(e), e.type)
        if isinstance(e, FLOAT_NODES):
            return self._float(e)
        raise TypeError(f"not an IR expression: {e!r}")

    def formula(self, e: Expr) -> z3.BoolRef:
        """`e != 0` as a Boolean formula, keeping comparisons and connectives Boolean."""
        if isinstance(e, Binary) and e.op in _COMPARE:
            return self._compare(e)
        if isinstance(e, FloatCompare):
            return _FP_COMPARE[e.op](self.term(e.left), self.term(e.right))
        if isinstance(e, Binary) and e.op == "&&":
            return z3.And(self.formula(e.left), self.formula(e.right))
        if isinstance(e, Binary) and e.op == "||":
            return z3.Or(self.formula(e.left), self.formula(e.right))
        if isinstance(e, Unary) and e.op == "!":
            return z3.Not(self.formula(e.operand))
        if isinstance(e, Const):
            return z3.BoolVal(e.value != 0)
        if isinstance(e, Forall):
            return self._forall(e)
        return self.term(e) != 0

    def _forall(self, e: Forall) -> z3.BoolRef:
        """`forall k. lo <= k < hi -> body`, `k` bound (over the same environment otherwise)."""
        return self.over_range(e, self.inside(e).formula(e.body))

    def inside(self, e: Forall) -> Translator:
        """A translator for `e`'s body: this environment with `e`'s bound variable as a Z3 bound
        constant (`over_range` quantifies it)."""
        inner = copy.copy(self)
        inner.env = {**self.env, e.var.name: self._bound(e.var)}
        return inner

    def over_range(self, e: Forall, body: z3.BoolRef) -> z3.BoolRef:
        """`forall k. lo <= k < hi -> body`, for `body` translated `inside(e)`."""
        k = self._bound(e.var)
        in_range = z3.And(self.term(e.lo) <= k, k < self.term(e.hi))
        return z3.ForAll([k], z3.Implies(in_range, body), patterns=_reads_at(body, k))

    def _bound(self, var: Var) -> z3.ExprRef:
        return z3.Int(var.name)

    def _float(self, e: FloatExpr) -> z3.ExprRef:
        if isinstance(e, FloatConst):
            return float_value(e.value, e.type)
        if isinstance(e, FloatUnary):
            return z3.fpNeg(self.term(e.operand))
        if isinstance(e, FloatBinary):
            return _FP_ARITH[e.op](z3.RNE(), self.term(e.left), self.term(e.right))
        if isinstance(e, FloatCompare):
            return self._truth(self.formula(e), e.type)
        if isinstance(e, ToFloat):
            return self._to_float(e)
        return self._float_to_int(e)

    def _to_float(self, e: ToFloat) -> z3.FPRef:
        a, source, sort = self.term(e.operand), e.operand.type, sort_of(e.type)
        if isinstance(source, FloatType):
            return z3.fpFPToFP(z3.RNE(), a, sort)
        assert isinstance(source, IntType)
        bv = z3.Int2BV(a, source.bits)  # a value of `source`: its bits are exact
        if source.signed:
            return z3.fpSignedToFP(z3.RNE(), bv, sort)
        return z3.fpUnsignedToFP(z3.RNE(), bv, sort)

    def _float_to_int(self, e: FloatToInt) -> z3.ArithRef:
        """The truncated value; unspecified where C's conversion is undefined (`float_to_int_defined`)."""
        x, ty = self.term(e.operand), e.type
        if ty.signed:
            return z3.BV2Int(z3.fpToSBV(z3.RTZ(), x, z3.BitVecSort(ty.bits)), is_signed=True)
        return z3.BV2Int(z3.fpToUBV(z3.RTZ(), x, z3.BitVecSort(ty.bits)), is_signed=False)

    def _stores(self, e: Store) -> z3.ExprRef:
        base, chain = store_chain(e)  # iterative: initialisers make chains thousands deep
        array = self.term(base)
        for store in chain:
            array = z3.Store(array, self._index(store.index), self.term(store.value))
        return array

    # --- what the bit-precise translator (`smt_bv`) does differently

    def _const(self, e: Const) -> z3.ExprRef:
        return z3.IntVal(e.value)

    def _truth(self, f: z3.BoolRef, ty: Type) -> z3.ExprRef:
        return _bool_to_int(f)

    def _index(self, e: Expr) -> z3.ExprRef:
        return self.term(e)

    def _compare(self, e: Binary) -> z3.BoolRef:
        return _COMPARE[e.op](self.term(e.left), self.term(e.right))  # type: ignore[no-any-return]

    def _below(self, e: Expr, bound: int) -> z3.BoolRef:
        """0 <= e < bound."""
        t = self.term(e)
        return z3.And(t >= 0, t < bound)

    def _fits(self, e: Binary | Unary) -> z3.BoolRef:
        """The signed `+`, `-`, `*` or negation `e` does not overflow."""
        return in_range(self.term(e), e.type)

    def _shift_fits(self, e: Binary) -> z3.BoolRef:
        """The signed `<<` `e` loses no bits."""
        if isinstance(e.right, Const):
            return in_range(self.term(e), e.type)
        bits = e.type.bits
        a, b = z3.Int2BV(self.term(e.left), bits), z3.Int2BV(self.term(e.right), bits)
        return (a << b) >> b == a

    # --- undefined behaviour

    def defined(self, e: Expr, no_overflow: bool) -> z3.BoolRef | None:
        """When `e`'s own operation (not its operands) has defined behaviour (None: always);
        `no_overflow`: signed overflow counts as undefined."""
        if isinstance(e, (Select, Store)):
            size = e.array.type.size if isinstance(e.array.type, ArrayType) else None
            return None if size is None else self._below(e.index, size)
        if isinstance(e, FloatToInt):
            return float_to_int_defined(self.term(e.operand), e.type)
        checked = no_overflow and isinstance(e, (Unary, Binary)) and e.type.signed
        if isinstance(e, Unary):
            return self._fits(e) if e.op == "-" and checked else None
        if not isinstance(e, Binary):
            return None
        if e.op in ("+", "-", "*"):
            return self._fits(e) if checked else None
        if e.op in ("/", "%"):
            nonzero = self.term(e.right) != 0
            if not checked:
                return nonzero
            # INT_MIN / -1 overflows; INT_MIN % -1 is undefined too (though 0 would fit)
            return z3.And(nonzero, z3.Not(z3.And(self.term(e.left) == e.type.min, self.term(e.right) == -1)))
        if e.op in ("<<", ">>"):
            count = self._below(e.right, e.type.bits)
            return z3.And(count, self._shift_fits(e)) if checked and e.op == "<<" else count
        return None

    def _unary(self, e: Unary) -> z3.ExprRef:
        if e.op == "!":
            return self._truth(z3.Not(self.formula(e.operand)), e.type)
        a = self.term(e.operand)
        r = -a if e.op == "-" else -a - 1
        return r if e.type.signed else wrap(r, e.type)

    def _cast(self, e: Cast) -> z3.ExprRef:
        a = self.term(e.operand)
        src = e.operand.type
        if isinstance(src, IntType) and e.type.contains(src) and not e.type.is_bool:
            return a
        return wrap(a, e.type)

    def _arith(self, e: Binary) -> z3.ExprRef:
        a, b, ty = self.term(e.left), self.term(e.right), e.type
        if e.op in ("+", "-", "*"):
            r = a + b if e.op == "+" else a - b if e.op == "-" else a * b
        elif e.op in ("/", "%"):
            r = _divmod(e.op, a, b, ty)
        elif e.op in ("<<", ">>"):
            r = self._shift(e, a, b)
        else:
            r = _bitwise(e.op, a, b, ty, _const_value(e.right))
        return r if ty.signed else wrap(r, ty)

    def _shift(self, e: Binary, a: z3.ArithRef, b: z3.ArithRef) -> z3.ArithRef:
        k = _const_value(e.right)
        if k is not None and 0 <= k < e.type.bits:
            return a * (1 << k) if e.op == "<<" else a / (1 << k)  # Euclidean div = floor here
        bits = e.type.bits
        bv_a, bv_b = z3.Int2BV(a, bits), z3.Int2BV(b, bits)
        if e.op == "<<":
            shifted = bv_a << bv_b
        else:
            shifted = bv_a >> bv_b if e.type.signed else z3.LShR(bv_a, bv_b)
        return _bv_to_int(shifted, e.type)


def _reads_at(body: z3.ExprRef, k: z3.ExprRef) -> list[z3.ExprRef | z3.PatternRef]:
    """The quantifier's patterns, so that E-matching instantiates it at the cells the query
    reads: each read `a[k]` of an array variable `a` in `body` (none: Z3 picks its own). A read
    of a stored-to array (a post-state) makes no pattern: a pattern holds no interpreted
    function. An array the body reads at several cells (`a[k] == a[k - 1] + 3`) makes a
    multi-pattern of all of them: `a[k]` alone would be a matching loop (each instance reads
    the next cell)."""
    reads: dict[int, dict[int, z3.ExprRef]] = {}  # array -> its reads that depend on k
    at: dict[int, z3.ExprRef] = {}
    stack, seen = [body], set()
    while stack:
        t = stack.pop()
        if t.get_id() in seen:
            continue
        seen.add(t.get_id())
        if z3.is_select(t):
            array, index = t.arg(0), t.arg(1)
            if array.decl().kind() == z3.Z3_OP_UNINTERPRETED and _mentions(index, k):
                reads.setdefault(array.get_id(), {})[t.get_id()] = t
                at.update({array.get_id(): t} if index.eq(k) else {})
            stack.append(index)  # a stored-to array holds no read at k: a store's indices are the program's
        else:
            stack.extend(t.children())
    out: list[z3.ExprRef | z3.PatternRef] = []
    for array, read in at.items():
        cells = list(reads[array].values())
        out.append(read if len(cells) == 1 else z3.MultiPattern(*cells))
    return out


def _mentions(t: z3.ExprRef, k: z3.ExprRef) -> bool:
    stack = [t]
    while stack:
        e = stack.pop()
        if e.eq(k):
            return True
        stack.extend(e.children())
    return False


def _divmod(op: str, a: z3.ArithRef, b: z3.ArithRef, ty: IntType) -> z3.ArithRef:
    if not ty.signed:  # operands are non-negative: Euclidean = truncating
        return a / b if op == "/" else a % b
    return trunc_div(a, b) if op == "/" else trunc_mod(a, b)


def _bitwise(op: str, a: z3.ArithRef, b: z3.ArithRef, ty: IntType, mask: int | None) -> z3.ArithRef:
    if op == "&" and mask is not None and mask >= 0 and (mask + 1) & mask == 0:
        return a % (mask + 1)  # x & (2**k - 1) on two's complement values
    bits = ty.bits
    x, y = z3.Int2BV(a, bits), z3.Int2BV(b, bits)
    r = x & y if op == "&" else x | y if op == "|" else x ^ y
    return _bv_to_int(r, ty)


def _bv_to_int(bv: z3.BitVecRef, ty: IntType) -> z3.ArithRef:
    return z3.BV2Int(bv, is_signed=ty.signed)


def _bool_to_int(f: z3.BoolRef) -> z3.ArithRef:
    return z3.If(f, z3.IntVal(1), z3.IntVal(0))


class Domain:
    """How an encoding represents C values: here as mathematical integers (`Int`, arrays
    `Array(Int, Int)`); `smt_bv.BITS` as bit-vectors of each type's width."""

    name = "int"

    def translator(self, env: Env) -> Translator:
        return Translator(env)

    def sort_of(self, ty: Type) -> z3.SortRef:
        return sort_of(ty)

    def in_range(self, t: z3.ExprRef, ty: IntType) -> z3.BoolRef:
        return in_range(t, ty)  # type: ignore[arg-type]

    def constant_array(self, value: z3.ExprRef) -> z3.ArrayRef:
        return z3.K(z3.IntSort(), value)

    def zero(self, ty: Type) -> z3.ExprRef:
        """A variable's value before any assignment: 0 (arrays all 0)."""
        if isinstance(ty, ArrayType):
            return self.constant_array(self.zero(ty.elem))
        if isinstance(ty, FloatType):
            return float_value(0.0, ty)
        return z3.IntVal(0)

    def value(self, t: z3.ExprRef, ty: Type) -> int:
        """The integer a model's value `t` of a variable of `ty` stands for (a float's: its bits)."""
        assert isinstance(t, (z3.IntNumRef, z3.BitVecNumRef)), f"not a model value: {t}"
        return int(t.as_long())


INTEGERS = Domain()
