"""C typing rules of `verifier.ir.cexpr` (promotions, usual arithmetic conversions, literals)."""

from __future__ import annotations

import pytest
from quokka.verifier.ir import INT, Binary, Cast, Const, IntType, Var, cexpr
from quokka.verifier.ir.cexpr import CTypes

LP64, ILP32 = CTypes("LP64"), CTypes("ILP32")


def t(ct: CTypes, name: str) -> IntType:
    return ct.named(name)


@pytest.mark.parametrize(
    ("ct", "a", "b", "common"),
    [
        (LP64, "char", "unsigned char", "int"),  # both promote to int
        (LP64, "int", "unsigned int", "unsigned int"),
        (LP64, "long", "unsigned int", "long"),  # long holds every unsigned int on LP64
        (ILP32, "long", "unsigned int", "unsigned long"),  # ... but not on ILP32
        (LP64, "long long", "unsigned long", "unsigned long long"),
        (LP64, "unsigned short", "short", "int"),
        (LP64, "_Bool", "_Bool", "int"),
        (LP64, "long", "long long", "long long"),
    ],
)
def test_usual_arithmetic_conversions(ct: CTypes, a: str, b: str, common: str) -> None:
    assert ct.common(t(ct, a), t(ct, b)) == t(ct, common)
    assert ct.common(t(ct, b), t(ct, a)) == t(ct, common)


@pytest.mark.parametrize(
    ("ct", "text", "value", "type_name"),
    [
        (LP64, "2147483647", 2147483647, "int"),
        (LP64, "2147483648", 2147483648, "long"),
        (ILP32, "2147483648", 2147483648, "long long"),
        (LP64, "0x7fffffff", 2147483647, "int"),
        (LP64, "0x80000000", 2147483648, "unsigned int"),  # hex may become unsigned
        (LP64, "4294967295u", 4294967295, "unsigned int"),
        (LP64, "10UL", 10, "unsigned long"),
        (LP64, "017", 15, "int"),
        (LP64, "0", 0, "int"),
        (LP64, "1ll", 1, "long long"),
        (LP64, "18446744073709551615ULL", 2**64 - 1, "unsigned long long"),
        (LP64, "0x8000000000000000", 2**63, "unsigned long"),
    ],
)
def test_integer_literal_types(ct: CTypes, text: str, value: int, type_name: str) -> None:
    assert cexpr.int_literal(ct, text) == Const(value, t(ct, type_name))


@pytest.mark.parametrize("text", ["1.5", "08", "1uu", "0x", "18446744073709551616"])
def test_bad_literals(text: str) -> None:
    with pytest.raises(ValueError):
        cexpr.int_literal(LP64, text)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("'a'", 97),
        ("'\\n'", 10),
        ("'\\0'", 0),
        ("'\\x41'", 65),
        ("'\\101'", 65),
        ("'\\xff'", -1),
        ("'\\''", 39),
    ],
)
def test_char_literals(text: str, value: int) -> None:
    assert cexpr.char_literal(text) == Const(value, INT)


def test_operators_insert_casts_and_fold_constants() -> None:
    x = Var("x", t(LP64, "unsigned char"))
    e = cexpr.binary(LP64, "+", x, Const(1, INT))
    assert e == Binary("+", Cast(x, INT), Const(1, INT), INT)
    assert cexpr.binary(LP64, "<", Const(-1, INT), Const(0, t(LP64, "unsigned int"))) == Const(0, INT)
    assert cexpr.binary(LP64, "-", Const(0, t(LP64, "unsigned int")), Const(1, INT)).value == 4294967295
    assert cexpr.convert(Const(300, INT), t(LP64, "unsigned char")) == Const(44, t(LP64, "unsigned char"))
    assert cexpr.convert(Const(5, INT), t(LP64, "_Bool")).value == 1
    overflow = cexpr.binary(LP64, "+", Const(2147483647, INT), Const(1, INT))
    assert isinstance(overflow, Binary) and cexpr.may_overflow(overflow)  # not folded out of range
    shift = cexpr.binary(LP64, "<<", Var("c", t(LP64, "char")), Const(2, t(LP64, "unsigned long")))
    assert shift.type == INT and isinstance(shift, Binary) and shift.right == Const(2, INT)
    assert cexpr.unary(LP64, "-", Var("u", t(LP64, "unsigned int"))).type.name == "unsigned int"
    assert cexpr.unary(LP64, "!", Var("l", t(LP64, "long"))).type == INT


def test_negate_flips_comparisons() -> None:
    x = Var("x", INT)
    assert cexpr.negate(Binary("<", x, Const(0, INT), INT)) == Binary(">=", x, Const(0, INT), INT)
    assert cexpr.negate(x).op == "!"
