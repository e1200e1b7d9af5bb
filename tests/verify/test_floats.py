"""Floating point (`float`, `double`): IEEE semantics in the interpreter agree with gcc bit for bit;
only bounded model checking (and random testing) handle such programs, so a float program is
FALSE (confirmed by gcc's build), TRUE only by a complete unrolling (`test_float_proofs`), or
UNKNOWN; a path through an undefined float-to-integer conversion is no counterexample."""

from __future__ import annotations

import json
import math
import random
import subprocess
from fractions import Fraction
from pathlib import Path

import pytest
from marks import needs_gcc
from quokka.invariants.verify import verify_path
from quokka.verifier.encode import encode
from quokka.verifier.engines import bmc, houdini, inductive, spacer
from quokka.verifier.engines.base import Budget, EngineResult, Status
from quokka.verifier.errors import FrontendError, UnsupportedByEngine, UnsupportedFeature
from quokka.verifier.exec.interp import run
from quokka.verifier.exec.replay import find_compiler, replay_with_compiler
from quokka.verifier.frontend import lower_source
from quokka.verifier.ir import (
    DOUBLE,
    FLOAT,
    INT,
    ONLY_BMC,
    Const,
    FloatBinary,
    FloatCompare,
    FloatConst,
    FloatToInt,
    Program,
    ToFloat,
    Var,
    fpsem,
    uses_floats,
)
from quokka.verifier.ir.cexpr import CTypes, binary, convert
from quokka.verifier.ir.printer import format_expr
from quokka.verifier.ir.typecheck import check_program
from quokka.verifier.options import Options
from quokka.verifier.verdict.checks import confirm_counterexample
from quokka.verifier.verdict.doublecheck import REFUTED, double_check
from quokka.verifier.verdict.portfolio import Portfolio, PortfolioConfig
from quokka.verifier.verdict.results import Verdict
from quokka.verifier.verdict.witnesses import violation_witness

OPTIONS = Options(timeout_s=20, proposers=())
PRELUDE = """\
extern int __VERIFIER_nondet_int(void);
extern double __VERIFIER_nondet_double(void);
extern float __VERIFIER_nondet_float(void);
extern void abort(void);
extern void reach_error(void);
void __VERIFIER_assert(int c) { if (!c) reach_error(); }
void assume_abort_if_not(int c) { if (!c) abort(); }
"""


def program_of(body: str) -> Program:
    program = lower_source(PRELUDE + "int main(void) {\n" + body + "\nreturn 0;\n}\n", "f.c")
    check_program(program)
    return program


def verify(tmp_path: Path, body: str, options: Options = OPTIONS):  # type: ignore[no-untyped-def]
    path = tmp_path / "floats.c"
    path.write_text(PRELUDE + "int main(void) {\n" + body + "\nreturn 0;\n}\n")
    return verify_path(path, options)


# ----------------------------------------------------------------------------- fpsem


@pytest.mark.parametrize(
    ("text", "value", "ty"),
    [
        ("3.25", 3.25, DOUBLE),
        ("2.0", 2.0, DOUBLE),
        ("1e-3", 0.001, DOUBLE),
        (".5", 0.5, DOUBLE),
        ("5.", 5.0, DOUBLE),
        ("0.5f", 0.5, FLOAT),
        ("0.1f", float.fromhex("0x1.99999ap-4"), FLOAT),
        ("0x1.8p1", 3.0, DOUBLE),
        ("1e400", math.inf, DOUBLE),
        ("1e-400", 0.0, DOUBLE),
        ("3.4028236e38f", math.inf, FLOAT),
        ("1e-46f", 0.0, FLOAT),
        ("1.5e-45f", float.fromhex("0x1p-149"), FLOAT),
    ],
)
def test_literals_round_once_to_their_type(text: str, value: float, ty: object) -> None:
    assert fpsem.literal(text) == (value, ty)


def test_long_double_and_malformed_literals_are_rejected() -> None:
    for text in ("1.0L", "1.0l", "1.2.3", "0x1.8"):
        with pytest.raises(ValueError):
            fpsem.literal(text)


def test_exact_rounding_without_double_rounding() -> None:
    # 1 + 2**-24 + 2**-60 is above the half-way point between two floats; rounded to double first,
    # it would land on the half-way point and then round (to even) down
    q = 1 + Fraction(1, 2**24) + Fraction(1, 2**60)
    assert fpsem.from_fraction(q, FLOAT) == 1 + 2**-23
    big = (1 << 62) + (1 << 38) + 1  # the same for a 64-bit integer converted to float
    assert fpsem.from_int(big, FLOAT) == float((1 << 62) + (1 << 39))
    assert fpsem.from_int(2**53 + 1, DOUBLE) == 2.0**53


def test_operations_follow_ieee() -> None:
    assert math.isnan(fpsem.arith("/", 0.0, 0.0, DOUBLE))
    assert fpsem.arith("/", -1.0, 0.0, DOUBLE) == -math.inf
    assert fpsem.arith("/", 1.0, -0.0, DOUBLE) == -math.inf
    assert fpsem.arith("*", 3e38, 10.0, FLOAT) == math.inf
    assert fpsem.compare("!=", math.nan, math.nan) == 1 and fpsem.compare("==", math.nan, math.nan) == 0
    assert fpsem.compare("==", 0.0, -0.0) == 1
    assert fpsem.from_bits(fpsem.to_bits(-0.25, FLOAT), FLOAT) == -0.25
    assert fpsem.from_bits(0x3FF8000000000000, DOUBLE) == 1.5


def test_undefined_conversions_to_integers_raise() -> None:
    assert fpsem.to_int(-2147483648.9, INT) == -(2**31)
    assert fpsem.to_int(2147483647.9, INT) == 2**31 - 1
    assert fpsem.to_int(-0.9, convert_target("unsigned int")) == 0
    for value in (2147483648.0, -2147483649.0, math.inf, math.nan):
        with pytest.raises(ArithmeticError):
            fpsem.to_int(value, INT)


def convert_target(name: str):  # type: ignore[no-untyped-def]
    return CTypes("LP64").named(name)


# ----------------------------------------------------------------------------- typing


def test_usual_arithmetic_conversions_with_floats() -> None:
    ct = CTypes("LP64")
    n, x, f = Var("n", INT), Var("x", DOUBLE), Var("f", FLOAT)
    assert binary(ct, "*", n, x) == FloatBinary("*", ToFloat(n, DOUBLE), x, DOUBLE)
    assert binary(ct, "+", f, x) == FloatBinary("+", ToFloat(f, DOUBLE), x, DOUBLE)
    assert binary(ct, "-", f, Const(1, INT)) == FloatBinary("-", f, FloatConst(1.0, FLOAT), FLOAT)
    assert binary(ct, "<", n, f) == FloatCompare("<", ToFloat(n, FLOAT), f)
    assert convert(x, INT) == FloatToInt(x, INT)
    assert convert(Const(3, INT), DOUBLE) == FloatConst(3.0, DOUBLE)
    assert convert(FloatConst(2.75, DOUBLE), INT) == Const(2, INT)
    assert isinstance(convert(FloatConst(3e9, DOUBLE), INT), FloatToInt)  # undefined: not folded
    for op in ("%", "<<", "&"):
        with pytest.raises(ValueError):
            binary(ct, op, x, n)


def test_lowering_of_conditions_ternaries_and_printing() -> None:
    program = program_of(
        "double x = __VERIFIER_nondet_double(); float f = 0.1f; int k = !x;\n"
        "double y = x ? 2 : f; if (x && f) k = (int)(x / 2.5) + (f < x);\n"
        "while (x) { x = x - 1; }"
    )
    assert uses_floats(program)
    assert {v.c_name: str(v.type) for v in program.variables if v.kind == "local"} == {
        "x": "double", "f": "float", "k": "int", "y": "double",
    }
    text = format_expr(FloatBinary("/", Var("x", DOUBLE), FloatConst(2.5, DOUBLE), DOUBLE))
    assert text == "x/2.5"
    assert format_expr(FloatConst(-math.inf, FLOAT)) == "-__builtin_inff()"
    assert format_expr(ToFloat(Var("n", INT), FLOAT)) == "(float)n"


@pytest.mark.parametrize(
    ("body", "feature"),
    [
        ("long double d = 1.0; d = d + 1;", "long double"),
        ("double a[2]; a[0] = 1.0;", "array of double"),
        ("_Complex double z = 0; z = 1;", "_Complex"),
        ("_Float128 q = 0; q = 1;", "long double"),
    ],
)
def test_unsupported_float_features_are_located_and_named(body: str, feature: str) -> None:
    with pytest.raises(UnsupportedFeature) as info:
        program_of(body)
    assert feature in info.value.feature and str(info.value).startswith("f.c:9:")


def test_float_library_functions_are_unsupported() -> None:
    with pytest.raises(UnsupportedFeature) as info:
        program_of("double d = __VERIFIER_nondet_double(); double e = fabs(d);".replace(
            "double e", "extern double fabs(double); double e"))
    assert "floating-point function without a body" in str(info.value)


def test_c_rejects_float_operands_of_integer_operators() -> None:
    for body in ("double d = 1.0; int k = d % 2;", "double d = 1.0; int k = ~d;"):
        with pytest.raises(FrontendError):
            program_of(body)


# ----------------------------------------------------------------------------- interpreter vs gcc

_TYPES = {"double": ("", 1e300, 1e-310), "float": ("f", 3e38, 1e-40)}


def _constant(rng: random.Random, ty: str) -> str:
    suffix, big, tiny = _TYPES[ty]
    kind = rng.randrange(6)
    if kind == 0:
        return str(rng.randint(-9, 9))  # an int operand: converted
    if kind == 1:
        return f"{rng.choice(['', '-'])}{big * rng.random():.6e}{suffix}"
    if kind == 2:
        return f"{tiny * rng.random():.3e}{suffix}"
    if kind == 3:
        return rng.choice(["0.0", "-0.0", "0.5", "0.1", "1e-3"]) + suffix
    digits = rng.randint(0, 17)
    return f"{rng.uniform(-1000, 1000):.{digits}f}{'' if digits else '.'}{suffix}"


def _expr(rng: random.Random, ty: str, depth: int) -> tuple[str, bool]:
    """A random expression over the variables of `_sources`, and whether it is floating (an
    integer operation would risk C's undefined behaviour: division by zero, overflow)."""
    if depth == 0 or rng.random() < 0.2:
        leaf = rng.choice(["x0", "x1", "x2", "y0", "n0", "u0"])
        return leaf, leaf[0] in "xy"
    kind = rng.randrange(8)
    if kind == 0:
        inner, floating = _expr(rng, ty, depth - 1)
        return f"-({inner})", floating
    if kind == 1:
        return f"({rng.choice(['double', 'float'])})({_expr(rng, ty, depth - 1)[0]})", True
    (left, left_float), (right, right_float) = _expr(rng, ty, depth - 1), _expr(rng, ty, depth - 1)
    if not (left_float or right_float):
        left = f"({ty}){left}"
    return f"({left} {rng.choice('+-*/')} {right})", True


def _sources(rng: random.Random, ty: str, count: int) -> tuple[str, list[str]]:
    other = "float" if ty == "double" else "double"
    decls = (
        f"{ty} x0 = {_constant(rng, ty)}, x1 = {_constant(rng, ty)}, x2 = {_constant(rng, ty)};\n"
        f"{other} y0 = {_constant(rng, other)}; int n0 = {rng.randint(-99, 99)}; "
        f"unsigned u0 = {rng.randint(0, 99)}u;\n"
    )
    return decls, [_expr(rng, ty, 3)[0] for _ in range(count)]


_IN_INT = "(r{k} > -2147483649.0 && r{k} < 2147483648.0 ? (int)r{k} : 0)"


def _gcc_values(tmp_path: Path, ty: str, decls: str, exprs: list[str]) -> list[tuple[float, int, int]]:
    lines = ["#include <stdio.h>", "int main(void) {", decls]
    for k, e in enumerate(exprs):
        lines.append(f"{ty} r{k} = {e};")
        cmp = f"r{k} < r{k - 1}" if k else "0"
        lines.append(f'printf("%a %d %d\\n", (double)r{k}, {_IN_INT.format(k=k)}, {cmp});')
    lines += ["return 0; }"]
    source, binary_file = tmp_path / "gcc.c", tmp_path / "gcc.bin"
    source.write_text("\n".join(lines) + "\n")
    subprocess.run([str(find_compiler()), "-O0", "-o", str(binary_file), str(source)], check=True)
    out = subprocess.run([str(binary_file)], capture_output=True, text=True, check=True).stdout
    values = []
    for line in out.splitlines():
        value, truncated, less = line.split()
        values.append((float.fromhex(value), int(truncated), int(less)))
    return values


def _check(k: int, value: float, truncated: int, less: int) -> str:
    r = f"r{k}"
    if math.isnan(value):
        same = f"{r} != {r}"
    elif math.isinf(value):
        same = f"{r} {'>' if value > 0 else '<'} {'-' if value < 0 else ''}1.7976931348623157e308"
    elif value == 0:
        same = f"{r} == 0 && 1.0 / {r} {'<' if math.copysign(1, value) < 0 else '>'} 0"
    else:
        same = f"{r} == {value.hex()}"
    cmp = f"r{k} < r{k - 1}" if k else "0"
    return f"__VERIFIER_assert({same}); __VERIFIER_assert({_IN_INT.format(k=k)} == {truncated});\n" + (
        f"__VERIFIER_assert(({cmp}) == {less});"
    )


@needs_gcc
@pytest.mark.parametrize("ty", ["double", "float"])
@pytest.mark.parametrize("seed", range(3))
def test_interpreter_agrees_with_gcc_bit_for_bit(tmp_path: Path, ty: str, seed: int) -> None:
    decls, exprs = _sources(random.Random(f"{ty}{seed}"), ty, 40)
    expected = _gcc_values(tmp_path, ty, decls, exprs)
    body = [decls]
    for k, (e, (value, truncated, less)) in enumerate(zip(exprs, expected, strict=True)):
        body.append(f"{ty} r{k} = {e};\n{_check(k, value, truncated, less)}")
    program = program_of("\n".join(body))
    execution = run(program, [])
    assert execution.outcome == "exit", execution.message


@needs_gcc
def test_harness_and_interpreter_read_float_inputs_as_their_encoding(tmp_path: Path) -> None:
    body = (
        "double d = __VERIFIER_nondet_double(); float f = __VERIFIER_nondet_float();\n"
        "if (d == 1.5 && f == -0.25f) reach_error();"
    )
    path = tmp_path / "inputs.c"
    path.write_text(PRELUDE + "int main(void) {\n" + body + "\nreturn 0;\n}\n")
    inputs = [fpsem.to_bits(1.5, DOUBLE), fpsem.to_bits(-0.25, FLOAT)]
    assert replay_with_compiler(path, inputs, "LP64").status == "reached"
    assert run(program_of(body), inputs).outcome == "error"
    assert replay_with_compiler(path, [inputs[0], 0], "LP64").status == "not_reached"


# ----------------------------------------------------------------------------- verdicts


@needs_gcc
def test_reachable_error_is_false_and_confirmed_by_gcc(tmp_path: Path) -> None:
    body = (
        "TYPE a = __VERIFIER_nondet_TYPE(); assume_abort_if_not(a >= 0 && a <= 10);\n"
        "TYPE x = a + 0.1f; __VERIFIER_assert(x - 0.1f == a);"
    )
    # random testing finds it for double; BMC alone (slower on 64-bit floats) for float
    for ty, options in (("double", OPTIONS), ("float", OPTIONS.with_(engines=("bmc",)))):
        result = verify(tmp_path, body.replace("TYPE", ty), options)
        assert result.verdict is Verdict.FALSE, result.reason
        assert result.counterexample is not None and "gcc" in result.counterexample.confirmed_by


@needs_gcc
def test_float_inputs_are_shown_as_values_and_kept_out_of_witnesses(tmp_path: Path) -> None:
    body = (
        "int n = __VERIFIER_nondet_int(); double d = __VERIFIER_nondet_double();\n"
        "if (n == 3 && d == -0.5) reach_error();"
    )
    result = verify(tmp_path, body, OPTIONS.with_(engines=("bmc",)))
    assert result.verdict is Verdict.FALSE and result.counterexample is not None, result.reason
    shown = [i.text for i in result.counterexample.inputs if i.origin.startswith("__VERIFIER")]
    assert shown == ["3", "-0.5"]
    witness = violation_witness(result, tmp_path / "floats.c", data_model="LP64")
    constraints = [json.dumps(seg) for seg in witness["content"] if "function_return" in json.dumps(seg)]
    assert len(constraints) == 1 and "\\result == 3" in constraints[0]


@needs_gcc
def test_assertion_that_always_holds_is_true_by_a_complete_unrolling_only(tmp_path: Path) -> None:
    body = (
        "double x = __VERIFIER_nondet_double(); double s = 3.25; int r = 1;\n"
        "assume_abort_if_not(x >= 0 && x <= 10);\n"
        "while (x - s > 0.0) { __VERIFIER_assert((int)(4 * s) - 12 * r * r == 1);\n"
        "  x = x - s; s = s + 6 * r + 3; r = r + 1; }"
    )
    result = verify(tmp_path, body)  # x <= 10 and s >= 3.25: at most 3 iterations
    assert result.verdict is Verdict.TRUE and result.decided_by == "bmc" and not result.invariants
    unbounded = verify(tmp_path, body.replace("x <= 10", "x <= 1e300"))
    assert unbounded.verdict is Verdict.UNKNOWN  # bmc cannot unroll it completely; the rest refuse
    assert any(ONLY_BMC in run.reason for run in unbounded.engines)


@needs_gcc
def test_undefined_float_to_int_conversion_is_no_counterexample(tmp_path: Path) -> None:
    body = "double x = __VERIFIER_nondet_double(); int i = (int)x; if (x > 3e9) reach_error();"
    result = verify(tmp_path, body, OPTIONS.with_(engines=("bmc", "testing")))
    assert result.verdict is Verdict.UNKNOWN, result.reason
    program = program_of(body)
    inputs = (fpsem.to_bits(4e9, DOUBLE),)
    assert run(program, inputs).outcome == "ub"
    cex, why = confirm_counterexample(program, EngineResult("fake", Status.UNSAFE, "", inputs=inputs), None)
    assert cex is None and "undefined behaviour" in why
    assert not bmc.check(program, Budget.of(10)).unsafe


def test_interpreter_alone_does_not_confirm_a_float_counterexample() -> None:
    program = program_of("double x = __VERIFIER_nondet_double(); if (x == 2.0) reach_error();")
    inputs = (fpsem.to_bits(2.0, DOUBLE),)
    cex, why = confirm_counterexample(program, EngineResult("fake", Status.UNSAFE, "", inputs=inputs), None)
    assert cex is None and "only a compiled replay confirms" in why


def test_only_bmc_handles_floats() -> None:
    program = program_of("double x = __VERIFIER_nondet_double(); if (x != x) reach_error();")
    budget = Budget.of(5)
    with pytest.raises(UnsupportedByEngine):
        encode(program)
    assert spacer.solve(program, budget).status is Status.UNKNOWN
    assert houdini.houdini(program, {}, budget).result.status is Status.UNKNOWN
    assert inductive.prove_with(program, {}, budget).status is Status.UNKNOWN
    assert double_check(program, {}, budget).status == REFUTED
    found = bmc.check(program, budget)  # a NaN input reaches the error
    assert found.unsafe and found.inputs is not None
    assert run(program, found.inputs).outcome == "error"


def test_portfolio_answers_true_for_floats_only_by_a_complete_unrolling() -> None:
    program = program_of("double x = 1.0; __VERIFIER_assert(x > 0);")

    def claims_safety(p: Program, budget: Budget) -> EngineResult:
        return EngineResult("liar", Status.SAFE, "trust me", {})

    result = Portfolio(program, PortfolioConfig(timeout_s=5)).run({"liar": claims_safety})
    assert result.verdict is Verdict.UNKNOWN
    assert any(r.status == "rejected" and ONLY_BMC in r.reason for r in result.engines)
