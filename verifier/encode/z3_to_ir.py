"""Z3 formulas over the program's variables (e.g. Spacer's invariants) back to IR expressions.

The IR has no mathematical integer type, but signed IR arithmetic is mathematical: every
variable is cast to one signed type that contains all of them (`long long`, or 128-bit when a
64-bit unsigned variable or a big constant occurs), so the IR expression means exactly the Z3
term. Z3's `div`/`mod` are Euclidean; they are translated only for constant divisors, through
C's truncating operators guarded by the dividend's sign. Anything else (quantifiers, reals,
non-constant divisors, array equalities) is `Unsupported`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import z3
from quokka.verifier.errors import QuokkaError
from quokka.verifier.ir import (
    INT,
    INT128,
    LLONG,
    ArrayType,
    Binary,
    Cast,
    Const,
    Expr,
    IntType,
    Ite,
    Select,
    Unary,
    Var,
)

_ARITH_TYPES = (INT, LLONG, INT128)


class Unsupported(QuokkaError):
    """The Z3 term has no exactly equivalent IR expression."""


_COMPARE = {z3.Z3_OP_LE: "<=", z3.Z3_OP_LT: "<", z3.Z3_OP_GE: ">=", z3.Z3_OP_GT: ">"}
_NEGATED = {"<=": ">", "<": ">=", ">=": "<", ">": "<=", "==": "!=", "!=": "=="}
_FOLD = {z3.Z3_OP_ADD: "+", z3.Z3_OP_SUB: "-", z3.Z3_OP_MUL: "*"}


def arith_type(formula: z3.ExprRef, variables: Mapping[str, Var]) -> IntType:
    """The narrowest of int, long long, __int128 holding the variables and constants of `formula`.

    Signed IR arithmetic is mathematical whatever the type, so the choice only decides which
    variables need a cast (none when all are `int`) and which constants are representable.
    """
    terms = subterms(formula)
    names = {t.decl().name() for t in terms if z3.is_const(t) and not z3.is_int_value(t)}
    types = [v.type for n, v in variables.items() if n in names and isinstance(v.type, IntType)]
    types += [v.type.elem for n, v in variables.items() if n in names and isinstance(v.type, ArrayType)]
    values = [t.as_long() for t in terms if z3.is_int_value(t)]
    for ty in _ARITH_TYPES:
        if all(ty.contains(t) for t in types) and all(ty.min <= x <= ty.max for x in values):
            return ty
    return INT128


def subterms(t: z3.ExprRef) -> list[z3.ExprRef]:
    """Every distinct subterm of `t` (`t` first), the bodies of quantifiers included."""
    seen: set[int] = set()
    out, stack = [], [t]
    while stack:
        e = stack.pop()
        if e.get_id() not in seen:
            seen.add(e.get_id())
            out.append(e)
            if z3.is_app(e):
                stack.extend(e.children())
            elif z3.is_quantifier(e):
                stack.append(e.body())
    return out


def to_ir(formula: z3.ExprRef, variables: Mapping[str, Var]) -> Expr:
    """The IR condition (int 0/1) meaning exactly the Boolean `formula`; raises `Unsupported`.

    `variables` maps the names of the Z3 constants in `formula` to IR variables.
    """
    return _Converter(variables, arith_type(formula, variables)).cond(formula)


class _Converter:
    def __init__(self, variables: Mapping[str, Var], arith: IntType) -> None:
        self.variables = variables
        self.arith = arith
        self.cache: dict[int, Expr] = {}

    def cond(self, t: z3.ExprRef) -> Expr:
        if not z3.is_bool(t):
            raise Unsupported(f"not a formula: {t}")
        return self._cached(t, self._cond)

    def term(self, t: z3.ExprRef) -> Expr:
        if not z3.is_int(t):
            raise Unsupported(f"not an integer term: {t}")
        return self._cached(t, self._term)

    def _cached(self, t: z3.ExprRef, fn: Callable[[z3.ExprRef], Expr]) -> Expr:
        key = t.get_id()
        if key not in self.cache:
            self.cache[key] = fn(t)
        return self.cache[key]

    # --------------------------------------------------------------- formulas

    def _cond(self, t: z3.ExprRef) -> Expr:
        if z3.is_quantifier(t) or not z3.is_app(t):
            raise Unsupported(f"quantified or bound term: {t}")
        k, args = t.decl().kind(), t.children()
        if k in (z3.Z3_OP_TRUE, z3.Z3_OP_FALSE):
            return Const(int(k == z3.Z3_OP_TRUE), INT)
        if k in (z3.Z3_OP_AND, z3.Z3_OP_OR):
            return self._fold_logic("&&" if k == z3.Z3_OP_AND else "||", args)
        if k == z3.Z3_OP_NOT:
            return _negate(self.cond(args[0]))
        if k == z3.Z3_OP_IMPLIES:
            return Binary("||", _negate(self.cond(args[0])), self.cond(args[1]), INT)
        if k in (z3.Z3_OP_XOR, z3.Z3_OP_EQ, z3.Z3_OP_DISTINCT):
            return self._equality(k, args)
        if k in _COMPARE:
            return Binary(_COMPARE[k], self.term(args[0]), self.term(args[1]), INT)
        if k == z3.Z3_OP_ITE:
            return Ite(self.cond(args[0]), self.cond(args[1]), self.cond(args[2]), INT)
        raise Unsupported(f"unsupported Boolean operator {t.decl().name()}")

    def _fold_logic(self, op: str, args: list[z3.ExprRef]) -> Expr:
        if not args:
            return Const(int(op == "&&"), INT)
        out = self.cond(args[0])
        for a in args[1:]:
            out = Binary(op, out, self.cond(a), INT)
        return out

    def _equality(self, kind: int, args: list[z3.ExprRef]) -> Expr:
        if len(args) != 2 and kind != z3.Z3_OP_DISTINCT:
            raise Unsupported("n-ary equality")
        side = self.cond if z3.is_bool(args[0]) else self.term
        op = "==" if kind == z3.Z3_OP_EQ else "!="
        parts = [
            Binary(op, side(a), side(b), INT) for i, a in enumerate(args) for b in args[i + 1 :]
        ]
        out = parts[0]
        for p in parts[1:]:
            out = Binary("&&", out, p, INT)
        return out

    # --------------------------------------------------------------- terms

    def _term(self, t: z3.ExprRef) -> Expr:
        if z3.is_int_value(t):
            return self._const(t.as_long())
        if z3.is_quantifier(t) or not z3.is_app(t):
            raise Unsupported(f"quantified or bound term: {t}")
        k, args = t.decl().kind(), t.children()
        if k == z3.Z3_OP_UNINTERPRETED and not args:
            return self._var(t.decl().name())
        if k in _FOLD:
            out = self.term(args[0])
            for a in args[1:]:
                out = Binary(_FOLD[k], out, self.term(a), self.arith)
            return out
        if k == z3.Z3_OP_UMINUS:
            return Unary("-", self.term(args[0]), self.arith)
        if k in (z3.Z3_OP_IDIV, z3.Z3_OP_MOD):
            return self._divmod(k, args)
        if k == z3.Z3_OP_ITE:
            return Ite(self.cond(args[0]), self.term(args[1]), self.term(args[2]), self.arith)
        if k == z3.Z3_OP_SELECT:
            return self._select(args)
        raise Unsupported(f"unsupported integer operator {t.decl().name()}")

    def _const(self, value: int) -> Const:
        if not self.arith.min <= value <= self.arith.max:
            raise Unsupported(f"constant {value} too large")
        return Const(value, self.arith)

    def _var(self, name: str) -> Expr:
        v = self.variables.get(name)
        if v is None or not isinstance(v.type, IntType):
            raise Unsupported(f"unknown integer variable {name}")
        return v if v.type == self.arith else Cast(v, self.arith)

    def _select(self, args: list[z3.ExprRef]) -> Expr:
        array = args[0]
        v = self.variables.get(array.decl().name()) if z3.is_const(array) else None
        if v is None or not isinstance(v.type, ArrayType):
            raise Unsupported(f"select from a non-variable array {array}")
        return Cast(Select(v, self.term(args[1]), v.type.elem), self.arith)

    def _divmod(self, kind: int, args: list[z3.ExprRef]) -> Expr:
        divisor = z3.simplify(args[1])
        if not z3.is_int_value(divisor) or divisor.as_long() == 0:
            raise Unsupported(f"division by the non-constant {args[1]}")
        k = divisor.as_long()
        a, m = self.term(args[0]), self._const(abs(k))
        if kind == z3.Z3_OP_MOD:  # Euclidean: in [0, |k|)
            r = Binary("%", a, m, self.arith)
            return Ite(Binary("<", r, self._const(0), INT), Binary("+", r, m, self.arith), r, self.arith)
        floor = self._floor_div(a, m, abs(k))
        return floor if k > 0 else Unary("-", floor, self.arith)

    def _floor_div(self, a: Expr, m: Const, k: int) -> Expr:
        """floor(a / k) for k > 0 with C's truncating `/`."""
        nonneg = Binary(">=", a, self._const(0), INT)
        shifted = Binary("-", self._const(k - 1), a, self.arith)  # > 0 when a < 0
        negative = Unary("-", Binary("/", shifted, m, self.arith), self.arith)
        return Ite(nonneg, Binary("/", a, m, self.arith), negative, self.arith)


def _negate(e: Expr) -> Expr:
    if isinstance(e, Binary) and e.op in _NEGATED:
        return Binary(_NEGATED[e.op], e.left, e.right, e.type)
    if isinstance(e, Unary) and e.op == "!":
        return e.operand
    return Unary("!", e, INT)
