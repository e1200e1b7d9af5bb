"""SV-COMP's `no-overflow` property (`nooverflow`, the frontend's no-overflow reading, the
sanitizer replay): the checks mean exactly "this signed operation fits", they are evaluated as
lazily as C, reach_error() is no error, and verdicts are confirmed by a compiled run."""

from __future__ import annotations

from pathlib import Path

import pytest
import z3
from fuzzing import fuzzed_error
from marks import needs_gcc
from quokka.verifier.encode import range_facts
from quokka.verifier.encode.smt import Translator
from quokka.verifier.exec.replay import replay_with_compiler
from quokka.verifier.frontend import lower_source
from quokka.verifier.ir import INT, Assert, Binary, Const, IntType, Unary, Var, walk_stmts
from quokka.verifier.ir.nooverflow import fits, no_overflow
from quokka.verifier.ir.printer import format_expr
from quokka.verifier.options import Options
from quokka.verifier.properties import NO_OVERFLOW, decide

SCHAR = IntType("signed char", 8, True)
LLONG = IntType("long long", 64, True)


def _spec(op: str, a: z3.ArithRef, b: z3.ArithRef, ty: IntType) -> z3.BoolRef:
    """C11's "the result fits", written out independently of `nooverflow`."""
    lo, hi = ty.min, ty.max
    if op in ("+", "-", "*"):
        value = a + b if op == "+" else a - b if op == "-" else a * b
        return z3.And(lo <= value, value <= hi)
    if op in ("/", "%"):
        return z3.Not(z3.And(a == lo, b == -1))
    powers = [z3.And(b == k, a >= 0, a * 2**k <= hi) for k in range(ty.bits)]
    return z3.Or(z3.Or(b < 0, b >= ty.bits), *powers)  # out-of-range counts: another kind of UB


@pytest.mark.parametrize("ty", [SCHAR, INT, LLONG], ids=lambda t: t.name)
@pytest.mark.parametrize("op", ["+", "-", "*", "/", "%", "<<"])
def test_the_check_of_an_operation_is_exactly_it_fits(op: str, ty: IntType) -> None:
    a, b = Var("a", ty), Var("b", ty)
    za, zb = z3.Int("a"), z3.Int("b")
    ranges = z3.And(ty.min <= za, za <= ty.max, ty.min <= zb, zb <= ty.max)
    check = Translator({"a": za, "b": zb}).formula(fits(Binary(op, a, b, ty)))
    solver = z3.Solver()
    solver.add(ranges, check != _spec(op, za, zb, ty))
    assert solver.check() == z3.unsat, solver.model()


@pytest.mark.parametrize("op", ["+", "-", "*"])
@pytest.mark.parametrize("const", [-128, -7, -1, 0, 1, 2, 3, 100, 127])
def test_a_constant_operand_gives_bounds_on_the_other(op: str, const: int) -> None:
    x = Var("x", SCHAR)
    for expr in (Binary(op, x, Const(const, SCHAR), SCHAR), Binary(op, Const(const, SCHAR), x, SCHAR)):
        for value in range(-128, 128):
            left, right = (value, const) if expr.left == x else (const, value)
            exact = {"+": left + right, "-": left - right, "*": left * right}[op]
            got = z3.simplify(Translator({"x": z3.IntVal(value)}).formula(fits(expr)))
            assert z3.is_true(got) == (-128 <= exact <= 127), (expr, value)


def test_negation_overflows_only_at_the_minimum() -> None:
    x = Var("x", INT)
    check = fits(Unary("-", x, INT))
    assert check == Binary("!=", x, Const(INT.min, INT), INT)


def test_operands_left_unevaluated_are_not_checked() -> None:
    x = Var("x", INT)
    plus = Binary("+", x, Const(1, INT), INT)
    guarded = Binary("&&", Binary("<", x, Const(100, INT), INT), Binary(">", plus, Const(0, INT), INT), INT)
    check = no_overflow(guarded)
    assert check is not None
    for value, holds in ((INT.max, True), (99, True)):  # x = INT_MAX: x + 1 is never evaluated
        assert z3.is_true(z3.simplify(Translator({"x": z3.IntVal(value)}).formula(check))) == holds
    assert no_overflow(Binary("<", x, Const(3, INT), INT)) is None


HEADER = """
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *);
void reach_error() { __assert_fail("0", "t.c", 3, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
extern unsigned short __VERIFIER_nondet_ushort(void);
void __VERIFIER_assert(int cond) { if (!(cond)) { ERROR: {reach_error();} } }
void assume_abort_if_not(int cond) { if (!cond) { abort(); } }
"""


def _verify(tmp_path: Path, body: str, timeout: float = 20) -> tuple[str, str, object]:
    from quokka.invariants.verify import verify_path

    path = tmp_path / "t.c"
    path.write_text(HEADER + "int main(void) {\n" + body + "\n  return 0;\n}\n")
    options = Options().with_(property=NO_OVERFLOW, timeout_s=timeout, proposers=("dynamic",))
    result = verify_path(path, options)
    return result.verdict.value, result.reason, result.counterexample


def test_the_frontend_puts_a_check_before_each_signed_operation() -> None:
    text = HEADER + "int main() { int x = __VERIFIER_nondet_int(); unsigned u = 3; u = u * 5; x = x * 2; }"
    program = lower_source(text, "t.c", "LP64", NO_OVERFLOW)
    checks = [s for s in walk_stmts(program.body) if isinstance(s, Assert)]
    assert len(checks) == 1 and checks[0].site is not None and checks[0].site.line == 9
    assert text.splitlines()[8][checks[0].site.column - 1 :].startswith("x * 2")  # the operation
    assert program.overflow_sites == ()  # they are assertions now


def test_signed_variables_have_range_facts_under_no_overflow() -> None:
    text = HEADER + "int main() { short a = __VERIFIER_nondet_ushort(); int n = 0; while (n < a) n++; }"
    facts = {format_expr(f) for f in range_facts(lower_source(text, "t.c", "LP64", NO_OVERFLOW))}
    assert {"(short)-32768 <= a && a <= (short)32767", "(-2147483647 - 1) <= n && n <= 2147483647"} <= facts
    strict = range_facts(lower_source(text, "t.c", "LP64", "unreach-call"))  # signed ones may overflow
    assert [format_expr(f) for f in strict] == ["(unsigned short)0 <= nd.1 && nd.1 <= (unsigned short)65535"]


@needs_gcc
def test_an_overflowing_program_is_false_with_a_sanitizer_confirmed_run(tmp_path: Path) -> None:
    verdict, reason, cex = _verify(tmp_path, "int x = __VERIFIER_nondet_int();\n int y = x + 1;")
    assert verdict == "false", reason
    assert cex is not None and "gcc" in cex.confirmed_by and cex.error_line == 11


@needs_gcc
@pytest.mark.parametrize("body", [
    "int x = __VERIFIER_nondet_int();\n int y = (x < 100 && x > -100) ? x + 1 : 0;",
    "int x = __VERIFIER_nondet_int();\n if (x < 0) reach_error();\n x = x / 2 + 1;",  # no error here
    "int x = __VERIFIER_nondet_int();\n __VERIFIER_assert(x < 1000);\n int y = x + 1;",  # aborts first
    "unsigned u = __VERIFIER_nondet_int();\n u = u * u + 7;",  # unsigned wraps
    "int i = 0;\n while (i < 1000) { i = i + 1; }",
])  # fmt: skip
def test_programs_without_overflow_are_true(tmp_path: Path, body: str) -> None:
    verdict, reason, _ = _verify(tmp_path, body)
    assert verdict == "true", reason


@needs_gcc
@pytest.mark.parametrize("body", [
    "int x = __VERIFIER_nondet_int();\n int y = -x;",
    "int x = __VERIFIER_nondet_int();\n int y = x / -1;",
    "int x = __VERIFIER_nondet_int();\n int y = x << 1;",
    "int x = __VERIFIER_nondet_int();\n int y = x % -1;",
])  # fmt: skip
def test_each_kind_of_overflow_is_found_and_confirmed(tmp_path: Path, body: str) -> None:
    verdict, reason, cex = _verify(tmp_path, body)
    assert verdict == "false", reason
    assert cex is not None and cex.confirmed_by == ("interpreter", "gcc")


DEEP = HEADER + """
int main(void) {
  short a = __VERIFIER_nondet_ushort();
  int n = 0;
  while (n < a) { n = n + 1; }
  int y = n * 70000;
  return y;
}
"""


@needs_gcc
def test_fuzzing_the_compiled_program_finds_an_overflow_after_thousands_of_iterations(tmp_path: Path) -> None:
    path = tmp_path / "deep.c"
    _, inputs = fuzzed_error(path, DEEP, NO_OVERFLOW)
    assert inputs[-1] >= 30678  # n * 70000 overflows from n = 30678
    replayed = replay_with_compiler(path, [inputs[-1]], "LP64", property_name=NO_OVERFLOW)
    assert replayed.status == "reached" and "signed integer overflow" in replayed.detail


@needs_gcc
def test_reach_error_is_no_error_in_the_compiled_no_overflow_run(tmp_path: Path) -> None:
    path = tmp_path / "r.c"
    path.write_text(HEADER + "int main(void) { reach_error(); return 0; }\n")
    replayed = replay_with_compiler(path, [], "LP64", property_name=NO_OVERFLOW)
    assert replayed.status == "not_reached" and "signal 6" in replayed.detail  # __assert_fail aborts


def test_a_task_listing_only_no_overflow_checks_it() -> None:
    assert decide(["no-overflow", "coverage-branches"]).checked == NO_OVERFLOW
    assert decide(["no-overflow", "unreach-call"]).checked == "unreach-call"
    assert decide(["termination"]).checked is None



def test_operations_that_fit_whatever_their_operands_are_not_checked() -> None:
    text = HEADER + """int main() {
      signed char c = __VERIFIER_nondet_int(); short s = __VERIFIER_nondet_int();
      int a = c * 6 + s * s;
      long long b = (long long)a * a;
      int d = a + 1;
    }"""
    program = lower_source(text, "t.c", "LP64", NO_OVERFLOW)
    sites = [s.site for s in walk_stmts(program.body) if isinstance(s, Assert) and s.site]
    lines = text.splitlines()
    checked = [lines[c.line - 1].strip() for c in sites]
    assert checked == ["int d = a + 1;"]  # c*6 + s*s and (long long)a * a always fit


def test_a_program_without_a_checked_operation_is_true_at_once(tmp_path: Path) -> None:
    body = "unsigned u = __VERIFIER_nondet_int();\n double f = u * 0.5;\n u = u * u;"
    verdict, reason, _ = _verify(tmp_path, body)
    assert verdict == "true" and "no error location" in reason, reason
