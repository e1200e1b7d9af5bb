"""C's typing rules over IR expressions: promotions, usual arithmetic conversions, literals.

Every operator built here has operands of the operator's type (explicit `Cast`s, `ToFloat`s,
`FloatToInt`s), as the IR requires; operations on constants are folded with `semantics` (and
`fpsem` for floats), so the folded value is exactly what the IR would compute. A floating
operand makes an arithmetic operator or comparison floating (the usual arithmetic conversions:
int op double -> double, float op double -> double); `%`, shifts, bitwise operators and `~` on a
float raise ValueError (C rejects them). The frontend (`lower`, `parse_invariant`) builds all its arithmetic
through this module, so there is one implementation of C's typing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from quokka.verifier import ir
from quokka.verifier.ir import fpsem, semantics

_RANK = {"_Bool": 0, "char": 1, "short": 2, "int": 3, "long": 4, "long long": 5, "__int128": 6}
SIGNED_OVERFLOW_OPS = frozenset({"+", "-", "*", "/", "%", "<<"})
DATA_MODELS = ("ILP32", "LP64")


def rank(ty: ir.IntType) -> int:
    """The integer conversion rank of `ty` (C11 6.3.1.1)."""
    if ty.name.endswith("*"):  # a pointer of the heap model (`frontend.memory`): an integer of its width
        return _RANK["long long"] if ty.bits > 32 else _RANK["int"]
    base = ty.name.removeprefix("unsigned ").removeprefix("signed ")
    return _RANK[base]


@dataclass(frozen=True)
class CTypes:
    """The integer types of one data model and the conversions between them."""

    data_model: str

    def named(self, name: str) -> ir.IntType:
        """The type with canonical C name `name` (e.g. "unsigned long")."""
        return ir.int_types(self.data_model)[name]

    @property
    def size_t(self) -> ir.IntType:
        return self.named("unsigned long" if self.data_model == "LP64" else "unsigned int")

    @property
    def gnu_wide(self) -> ir.IntType:
        """gcc's type for a decimal constant without `u` that no standard signed type holds (C11
        gives it none; gcc warns "integer constant is so large that it is unsigned"): `__int128`
        where the target has it (x86-64, LP64; the value is exact), else `long long` (i386, ILP32;
        the value's low 64 bits, i.e. 2**64 less)."""
        return ir.INT128 if self.data_model == "LP64" else self.named("long long")

    @property
    def pointer_bytes(self) -> int:
        return 8 if self.data_model == "LP64" else 4

    def promote(self, ty: ir.IntType) -> ir.IntType:
        """Integer promotion: types of lower rank than int become int (all their values fit)."""
        return ir.INT if rank(ty) < rank(ir.INT) else ty

    def unsigned_of(self, ty: ir.IntType) -> ir.IntType:
        base = ty.name.removeprefix("signed ")
        return self.named(base if base.startswith("unsigned") else f"unsigned {base}")

    def common(self, a: ir.IntType, b: ir.IntType) -> ir.IntType:
        """The usual arithmetic conversions (C11 6.3.1.8) on two integer types."""
        a, b = self.promote(a), self.promote(b)
        if a == b:
            return a
        if a.signed == b.signed:
            return a if rank(a) >= rank(b) else b
        uns, sig = (a, b) if not a.signed else (b, a)
        if rank(uns) >= rank(sig):
            return uns
        if sig.contains(uns):
            return sig
        return self.unsigned_of(sig)

    def arithmetic(self, a: ir.ScalarType, b: ir.ScalarType) -> ir.ScalarType:
        """The usual arithmetic conversions with floats: the wider float type if there is one."""
        floats = [t for t in (a, b) if isinstance(t, ir.FloatType)]
        if floats:
            return max(floats, key=lambda t: t.bits)
        assert isinstance(a, ir.IntType) and isinstance(b, ir.IntType)
        return self.common(a, b)


# ----------------------------------------------------------------------------- folding


def const_value(e: ir.Expr) -> int | None:
    """The value of `e` if it is a constant expression (no variables), else None."""
    folded = fold(e)
    return folded.value if isinstance(folded, ir.Const) else None


def _folded(value: int, ty: ir.IntType) -> ir.Const | None:
    return ir.Const(value, ty) if semantics.in_range(value, ty) else None


def uncast(e: ir.Expr) -> ir.Expr:
    """`e` without its outer casts that keep every value."""
    while isinstance(e, ir.Cast) and isinstance(e.operand.type, ir.IntType):
        if e.type.is_bool or not e.type.contains(e.operand.type):
            break
        e = e.operand
    return e


def fold(e: ir.Expr) -> ir.Expr:
    """`e` with its top operator evaluated when all operands are constants and the result fits."""
    try:
        result = _fold_top(e)
    except semantics.UndefinedBehaviour:
        result = None
    return e if result is None else result


def _fold_top(e: ir.Expr) -> ir.Expr | None:
    if isinstance(e, ir.FLOAT_NODES):
        return _fold_float(e)
    if isinstance(e, ir.Cast) and isinstance(e.operand, ir.Const):
        return ir.Const(semantics.wrap(e.operand.value, e.type), e.type)
    if isinstance(e, ir.Unary) and isinstance(e.operand, ir.Const):
        return _folded(semantics.unary(e.op, e.operand.value, e.type), e.type)
    if isinstance(e, ir.Binary) and isinstance(e.left, ir.Const) and isinstance(e.right, ir.Const):
        a, b = e.left.value, e.right.value
        if e.op in ir.COMPARE_OPS:
            return ir.Const(semantics.compare(e.op, a, b), ir.INT)
        if e.op == "&&":
            return ir.Const(int(a != 0 and b != 0), ir.INT)
        if e.op == "||":
            return ir.Const(int(a != 0 or b != 0), ir.INT)
        return _folded(semantics.arith(e.op, a, b, e.type), e.type)
    if isinstance(e, ir.Binary) and e.op in ir.LOGIC_OPS and isinstance(e.left, ir.Const):
        return _fold_short_circuit(e.op, e.left.value)
    if isinstance(e, ir.Ite) and isinstance(e.cond, ir.Const):
        return e.then if e.cond.value else e.orelse
    return None


def _fold_float(e: ir.FloatExpr) -> ir.Expr | None:
    """A float operation on constants, evaluated as `fpsem` does (None when not constant; a
    conversion to an integer that is undefined stays, for the interpreter to report)."""
    if isinstance(e, ir.ToFloat) and isinstance(e.operand, ir.Const):
        return ir.FloatConst(fpsem.from_int(e.operand.value, e.type), e.type)
    if isinstance(e, ir.ToFloat) and isinstance(e.operand, ir.FloatConst):
        return ir.FloatConst(fpsem.convert(e.operand.value, e.type), e.type)
    if isinstance(e, ir.FloatToInt) and isinstance(e.operand, ir.FloatConst):
        return ir.Const(fpsem.to_int(e.operand.value, e.type), e.type)  # UndefinedBehaviour: kept
    if isinstance(e, ir.FloatUnary) and isinstance(e.operand, ir.FloatConst):
        return ir.FloatConst(-e.operand.value, e.type)
    if isinstance(e, (ir.FloatBinary, ir.FloatCompare)):
        a, b = e.left, e.right
        if not (isinstance(a, ir.FloatConst) and isinstance(b, ir.FloatConst)):
            return None
        if isinstance(e, ir.FloatCompare):
            return ir.Const(fpsem.compare(e.op, a.value, b.value), ir.INT)
        return ir.FloatConst(fpsem.arith(e.op, a.value, b.value, e.type), e.type)
    return None


def _fold_short_circuit(op: str, left: int) -> ir.Const | None:
    if op == "&&" and left == 0:
        return ir.Const(0, ir.INT)
    if op == "||" and left != 0:
        return ir.Const(1, ir.INT)
    return None


# ----------------------------------------------------------------------------- operators


class NotScalar(TypeError):
    """An array where C wants a scalar value, or a scalar where it wants an array: the frontend
    refuses the program ("pointer (array used as a value)")."""



def int_type(e: ir.Expr) -> ir.IntType:
    """The type of an integer expression (raises NotScalar for an array)."""
    if not isinstance(e.type, ir.IntType):
        raise NotScalar(f"not an integer expression: {e.type}")
    return e.type


def scalar_type(e: ir.Expr) -> ir.ScalarType:
    """The type of an integer or floating expression (raises NotScalar for an array)."""
    if isinstance(e.type, ir.ArrayType):
        raise NotScalar(f"not a scalar expression: {e.type}")
    return e.type


def is_float(e: ir.Expr) -> bool:
    return isinstance(e.type, ir.FloatType)


def zero_of(ty: ir.FloatType) -> ir.FloatConst:
    return ir.FloatConst(0.0, ty)


def truth(e: ir.Expr) -> ir.Expr:
    """`e` as a condition of the IR (an integer): a float `x` becomes `x != 0.0`."""
    if isinstance(e.type, ir.FloatType):
        return ir.FloatCompare("!=", e, zero_of(e.type))
    return e


def convert(e: ir.Expr, ty: ir.ScalarType) -> ir.Expr:
    """`e` converted to `ty` as by assignment or a cast (integers wrap; to _Bool: != 0; to a
    float: rounded; a float to an integer: truncated, undefined when out of range)."""
    source = scalar_type(e)
    if source == ty:
        return e
    if isinstance(ty, ir.FloatType):
        return fold(ir.ToFloat(e, ty))
    if isinstance(source, ir.FloatType):
        if ty.is_bool:
            return convert(fold(truth(e)), ty)
        return fold(ir.FloatToInt(e, ty))
    return fold(ir.Cast(e, ty))


def _float_unary(op: str, e: ir.Expr, ty: ir.FloatType) -> ir.Expr:
    if op == "!":
        return fold(ir.FloatCompare("==", e, zero_of(ty)))
    if op == "+":
        return e
    if op == "-":
        return fold(ir.FloatUnary("-", e, ty))
    raise ValueError(f"wrong type argument to {op}: {ty}")


def unary(ct: CTypes, op: str, e: ir.Expr) -> ir.Expr:
    """`op e` for op in `- ~ ! +` with C's promotions."""
    if isinstance(e.type, ir.FloatType):
        return _float_unary(op, e, e.type)
    if op == "!":
        return fold(ir.Unary("!", e, ir.INT))
    ty = ct.promote(int_type(e))
    operand = convert(e, ty)
    if op == "+":
        return operand
    return fold(ir.Unary(op, operand, ty))


def binary(ct: CTypes, op: str, a: ir.Expr, b: ir.Expr) -> ir.Expr:
    """`a op b` with the usual arithmetic conversions made explicit."""
    if op in ir.LOGIC_OPS:
        return fold(ir.Binary(op, fold(truth(a)), fold(truth(b)), ir.INT))
    if is_float(a) or is_float(b):
        return _float_binary(ct, op, a, b)
    if op in ("<<", ">>"):
        ty = ct.promote(int_type(a))
        return fold(ir.Binary(op, convert(a, ty), convert(b, ty), ty))
    ty = ct.common(int_type(a), int_type(b))
    if op in ir.COMPARE_OPS:
        return fold(ir.Binary(op, convert(a, ty), convert(b, ty), ir.INT))
    if op not in ir.ARITH_OPS:
        raise ValueError(f"unknown binary operator {op!r}")
    return fold(ir.Binary(op, convert(a, ty), convert(b, ty), ty))


def _float_binary(ct: CTypes, op: str, a: ir.Expr, b: ir.Expr) -> ir.Expr:
    if op not in ir.COMPARE_OPS and op not in ("+", "-", "*", "/"):
        raise ValueError(f"invalid operands to {op} ({a.type} and {b.type})")
    ty = ct.arithmetic(scalar_type(a), scalar_type(b))
    assert isinstance(ty, ir.FloatType)
    if op in ir.COMPARE_OPS:
        return fold(ir.FloatCompare(op, convert(a, ty), convert(b, ty)))
    return fold(ir.FloatBinary(op, convert(a, ty), convert(b, ty), ty))


def conditional(ct: CTypes, cond: ir.Expr, then: ir.Expr, orelse: ir.Expr) -> ir.Expr:
    """`cond ? then : orelse` on integers (both branches converted to their common type); floats
    have no `Ite` (the frontend assigns a temporary in an `If` instead)."""
    ty = ct.common(int_type(then), int_type(orelse))
    return fold(ir.Ite(fold(truth(cond)), convert(then, ty), convert(orelse, ty), ty))


def negate(e: ir.Expr) -> ir.Expr:
    """`!e`, simplified where the result is the same int 0/1 (comparisons flip; of IEEE
    comparisons only `==` and `!=`, as `!(x < y)` is no `x >= y` when a NaN is involved)."""
    flipped = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}
    if isinstance(e, ir.Binary) and e.op in flipped:
        return ir.Binary(flipped[e.op], e.left, e.right, ir.INT)
    if isinstance(e, ir.FloatCompare) and e.op in ("==", "!="):
        return ir.FloatCompare(flipped[e.op], e.left, e.right)
    if isinstance(e.type, ir.FloatType):
        return fold(ir.FloatCompare("==", e, zero_of(e.type)))
    if isinstance(e, ir.Unary) and e.op == "!" and is_boolean(e.operand):
        return e.operand
    return fold(ir.Unary("!", e, ir.INT))


def is_boolean(e: ir.Expr) -> bool:
    """`e` is always 0 or 1 with type int (a comparison, `!`, `&&`, `||`)."""
    if isinstance(e, ir.Binary):
        return e.op in ir.COMPARE_OPS or e.op in ir.LOGIC_OPS
    return isinstance(e, ir.FloatCompare) or (isinstance(e, ir.Unary) and e.op == "!")


def may_overflow(e: ir.Expr) -> bool:
    """A signed operation whose result may leave its type (C's undefined behaviour)."""
    if isinstance(e, ir.Binary):
        return e.type.signed and e.op in SIGNED_OVERFLOW_OPS
    return isinstance(e, ir.Unary) and e.op == "-" and e.type.signed


def select(array: ir.Expr, index: ir.Expr) -> ir.Select:
    if not isinstance(array.type, ir.ArrayType):
        raise NotScalar("indexing a non-array")
    return ir.Select(array, index, array.type.elem)


def store(array: ir.Expr, index: ir.Expr, value: ir.Expr) -> ir.Store:
    if not isinstance(array.type, ir.ArrayType):
        raise NotScalar("storing into a non-array")
    return ir.Store(array, index, convert(value, array.type.elem), array.type)


# ----------------------------------------------------------------------------- literals

_INT_LITERAL = re.compile(r"(0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)([uUlL]*)\Z")


def int_literal(ct: CTypes, text: str) -> ir.Const:
    """An integer constant typed as C11 6.4.4.1 says (the first listed type that holds it), and
    as gcc types a decimal one without `u` above LLONG_MAX (`CTypes.gnu_wide`).

    Raises ValueError for malformed text or a value above ULLONG_MAX.
    """
    m = _INT_LITERAL.match(text)
    if m is None:
        raise ValueError(f"malformed integer constant {text!r}")
    digits, suffix = m.group(1), m.group(2).lower()
    value = _digits_value(digits)
    if value > ct.named("unsigned long long").max:
        raise ValueError(f"integer constant {text} is too large (above ULLONG_MAX)")
    decimal = not digits.startswith("0") or digits == "0"
    for name in _candidate_types(suffix, decimal):
        ty = ct.named(name)
        if value <= ty.max:
            return ir.Const(value, ty)
    # only a decimal constant without `u` gets here (the other lists end with unsigned long long)
    return ir.Const(semantics.wrap(value, ct.gnu_wide), ct.gnu_wide)


def _digits_value(digits: str) -> int:
    if digits[:2].lower() == "0x":
        return int(digits[2:], 16)
    if digits[:2].lower() == "0b":
        return int(digits[2:], 2)
    if digits.startswith("0") and len(digits) > 1:
        return int(digits[1:], 8)
    return int(digits)


def _candidate_types(suffix: str, decimal: bool) -> list[str]:
    unsigned = "u" in suffix
    longs = suffix.count("l")
    if suffix.replace("u", "") not in ("", "l", "ll") or suffix.count("u") > 1:
        raise ValueError(f"bad integer suffix {suffix!r}")
    signed_names = ["int", "long", "long long"][longs:]
    out: list[str] = []
    for name in signed_names:
        if not unsigned:
            out.append(name)
        if unsigned or not decimal:
            out.append(f"unsigned {name}")
    return out


_ESCAPES = {
    "n": 10,
    "t": 9,
    "r": 13,
    "0": 0,
    "a": 7,
    "b": 8,
    "f": 12,
    "v": 11,
    "\\": 92,
    "'": 39,
    '"': 34,
    "?": 63,
    "e": 27,
}


def char_literal(text: str) -> ir.Const:
    """A character constant such as 'a', '\\n', '\\x41', '\\101': type int, value of a (signed) char.

    Raises ValueError for wide or multi-character constants.
    """
    if len(text) < 3 or text[0] != "'" or text[-1] != "'":
        raise ValueError(f"unsupported character constant {text}")
    body = text[1:-1]
    if body.startswith("\\"):
        value = _escape_value(body[1:])
    elif len(body) == 1:
        value = ord(body)
    else:
        raise ValueError(f"multi-character constant {text}")
    if value > 255:
        raise ValueError(f"character constant {text} does not fit a char")
    return ir.Const(semantics.wrap(value, ir.IntType("char", 8, True)), ir.INT)


def _escape_value(esc: str) -> int:
    if esc[:1] == "x" and len(esc) > 1:
        return int(esc[1:], 16)
    if esc and all(c in "01234567" for c in esc) and len(esc) <= 3:
        return int(esc, 8)
    if len(esc) == 1 and esc in _ESCAPES:
        return _ESCAPES[esc]
    raise ValueError(f"unknown escape sequence \\{esc}")
