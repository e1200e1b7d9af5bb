"""`parse_invariant` (C expression text -> IR, typed like the lowering) and `find_acsl_invariants`."""

from __future__ import annotations

import json

import pytest
from frontend_helpers import Interp
from quokka.verifier.errors import InputError, UnsupportedFeature
from quokka.verifier.frontend import find_acsl_invariants, lower, lower_source, parse_invariant
from quokka.verifier.ir import INT, Binary, Cast, Const, IntType, Program, Var, free_vars
from shared_data import BENCHMARKS

SRC = """int g;
int main() {
  int x = 0; unsigned u = 1; long l = 2; unsigned char c = 3; int a[4];
  while (x < 10) {
    int x = 5;
    x++;
  }
  return 0;
}
"""


@pytest.fixture(scope="module")
def program() -> Program:
    return lower_source(SRC, "inv.c")


def value(program: Program, text: str, env: dict[str, int]) -> int:
    """Evaluate the parsed invariant in `env` (C names) with the test interpreter."""
    expr = parse_invariant(text, program, "L4")
    interp = Interp(program, [])
    scope = dict(program.loop("L4").scope)
    interp.env.update({scope[k]: v for k, v in env.items()})
    result = interp.eval(expr)
    assert isinstance(result, int)
    return result


def test_names_map_to_ir_names_and_typing_follows_c(program: Program) -> None:
    expr = parse_invariant("x < u", program, "L4")
    # -1 < 1u is false in C: x converts to unsigned.
    assert isinstance(expr, Binary) and isinstance(expr.left, Cast) and expr.left.type.name == "unsigned int"
    assert value(program, "x < u", {"x": -1, "u": 1}) == 0
    assert value(program, "(long)x < u", {"x": -1, "u": 1}) == 1  # LP64: unsigned int -> long
    assert value(program, "c + c == 6", {"c": 3}) == 1
    assert value(program, "-7 / 2 == -3 && -7 % 2 == -1", {}) == 1
    assert value(program, "u - 2 > 0", {"u": 1}) == 1  # unsigned wrap
    assert free_vars(parse_invariant("g + x + l >= 0 && a[x] == 0", program, "L4")) == {"g", "x", "l", "a"}


def test_true_false_and_casts(program: Program) -> None:
    assert parse_invariant("true", program, "L4") == Const(1, INT)
    expr = parse_invariant("(unsigned char)x == 44", program, "L4")
    assert value(program, "(unsigned char)x == 44", {"x": 300}) == 1
    assert isinstance(expr, Binary) and expr.left.type == INT  # promoted back to int
    assert parse_invariant("sizeof(long) == 8", program, "L4") == Const(1, INT)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("x = 1", "assignment"),
        ("x += 1", "assignment"),
        ("x++ > 0", "++"),
        ("--x > 0", "--"),
        ("__VERIFIER_nondet_int() > 0", "function call"),
        ("f(x)", "function call"),
        ("y > 0", "undeclared identifier 'y'"),
        ("(x > 0", "unbalanced"),
        ("x > 0)", "unbalanced"),
        ("", "empty"),
        ("x > 1.5", "floating-point"),
        ('x == "a"', "string"),
        ("a > 0", "pointer"),
        ("x ==> u", "==>"),
        ("x $ 2", "unexpected character"),
        ("x.f > 0", "struct"),
    ],
)
def test_rejections_are_input_errors_saying_why(program: Program, text: str, message: str) -> None:
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace("+", r"\+")):
        parse_invariant(text, program, "L4")


def test_unknown_loop_is_an_input_error(program: Program) -> None:
    with pytest.raises(InputError, match="no loop"):
        parse_invariant("x > 0", program, "L99")


def test_long_inputs_do_not_crash(program: Program) -> None:
    chain = " || ".join(f"x == {i}" for i in range(1000))
    assert len(chain) > 10_000
    assert value(program, chain, {"x": 999}) == 1
    nested = "(" * 100 + "x > 0" + ")" * 100
    assert value(program, nested, {"x": 1}) == 1
    too_deep = "(" * 6000 + "x" + ")" * 6000
    with pytest.raises(InputError):
        parse_invariant(too_deep, program, "L4")
    with pytest.raises(InputError):
        parse_invariant("x" * 200_000, program, "L4")


def test_inner_scope_shadowing(program: Program) -> None:
    # At the loop head only main's x is visible (the body's `int x` is not).
    assert dict(program.loop("L4").scope)["x"] == "x"
    assert parse_invariant("x >= 0", program, "L4") == Binary(">=", Var("x", INT), Const(0, INT), INT)


def test_unsupported_feature_in_invariant_becomes_input_error(program: Program) -> None:
    with pytest.raises(InputError) as info:
        parse_invariant("*x > 0", program, "L4")
    assert not isinstance(info.value, UnsupportedFeature)


QUOKKA_DEV = BENCHMARKS / "quokka-dev"


@pytest.mark.skipif(not QUOKKA_DEV.is_dir(), reason="shared benchmarks not present")
def test_uautomizer_invariants_parse_or_are_rejected_cleanly() -> None:
    lines = (QUOKKA_DEV / "invariants.jsonl").read_text().splitlines()[:120]
    parsed = 0
    for line in lines:
        entry = json.loads(line)
        program = lower(QUOKKA_DEV / entry["file"])
        (loop,) = [i for i in program.loops if i.coord.line == entry["after_line"]]
        try:
            expr = parse_invariant(entry["invariant"], program, loop.id)
        except InputError:
            continue
        assert isinstance(expr.type, IntType)
        parsed += 1
    assert parsed >= 0.9 * len(lines)


def test_find_acsl_invariants() -> None:
    text = """int main() {
  int i = 0;
  /*@ loop invariant 0 <= i <= 10;
      loop invariant i % 2 == 0;
      loop assigns i; */
  while (i < 10) i += 2;
  //@ loop invariant i >= 10;
  for (;;) { break; }
  /* loop invariant not_acsl; */
}
"""
    assert find_acsl_invariants(text) == [(5, "0 <= i <= 10"), (5, "i % 2 == 0"), (7, "i >= 10")]
    program = lower_source(text, "acsl.c")
    assert {i.insert_after_line for i in program.loops} == {6, 8}
