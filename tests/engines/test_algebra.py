"""The algebra engine: polynomial equalities proven by ideal membership, exact or modulo 2**w."""

from __future__ import annotations

import random

import sympy
from quokka.verifier import ir
from quokka.verifier.cfg import build_cfg
from quokka.verifier.engines import algebra
from quokka.verifier.engines.algebra import Fact
from quokka.verifier.engines.base import Budget, Status
from quokka.verifier.exec.interp import run
from quokka.verifier.frontend import lower_source
from quokka.verifier.ir.builder import conjunction
from quokka.verifier.ir.printer import format_expr, format_program
from quokka.verifier.verdict.portfolio import Portfolio, PortfolioConfig
from quokka.verifier.verdict.results import Verdict

PRELUDE = """
extern unsigned int __VERIFIER_nondet_uint(void);
extern int __VERIFIER_nondet_int(void);
extern void abort(void);
extern void reach_error(void);
void __VERIFIER_assert(int c) { if (!c) { reach_error(); } }
void assume_abort_if_not(int c) { if (!c) abort(); }
"""

# Knuth's factoring loop (SV-COMP nla-digbench), its invariants asserted at the head
KNUTH_ASSERTIONS = (
    "d * d * q - 2 * q * d - 4 * r * d + 4 * k * d + 8 * r == 8 * n",
    "k * t == t * t",
    "d * d * q - 2 * d * q - 4 * d * r + 4 * d * t + 4 * a * k - 4 * a * t - 8 * n + 8 * r == 0",
    "d * k - d * t - a * k + a * t == 0",
)
KNUTH = """
    unsigned n, a, r, k, q, d, s, t;
    n = __VERIFIER_nondet_uint(); a = __VERIFIER_nondet_uint(); s = __VERIFIER_nondet_uint();
    assume_abort_if_not(n < 536870911u);
    assume_abort_if_not(a > 2);
    d = a; r = n % d; t = 0; k = n % (d - 2); q = 4 * (n / (d - 2) - n / d);
    while (1) {
        ASSERTIONS
        if (!((s >= d) && (r != 0))) break;
        if (2 * r + q < k) { t = r; r = 2 * r - k + q + d + 2; k = t; q = q + 4; d = d + 2; }
        else if ((2 * r + q >= k) && (2 * r + q < d + k + 2)) { t = r; r = 2 * r - k + q; k = t; d = d + 2; }
        else if ((2 * r + q >= k) && (2 * r + q >= d + k + 2) && (2 * r + q < 2 * d + k + 4)) {
            t = r; r = 2 * r - k + q - d - 2; k = t; q = q - 4; d = d + 2;
        } else { t = r; r = 2 * r - k + q - 2 * d - 4; k = t; q = q - 8; d = d + 2; }
    }
"""


def program_of(body: str) -> ir.Program:
    return lower_source(PRELUDE + "int main(void) {\n" + body + "\nreturn 0;\n}\n", "algebra.c")


def knuth(assertions: tuple[str, ...] = KNUTH_ASSERTIONS) -> ir.Program:
    asserted = "\n".join(f"__VERIFIER_assert({a});" for a in assertions)
    return program_of(KNUTH.replace("ASSERTIONS", asserted))


def test_knuths_nonlinear_invariants_over_wrapping_unsigned_values_are_proven():
    program = knuth()
    assert algebra.applies(program)
    result = algebra.check(program, Budget.of(60))
    assert result.status is Status.SAFE, result.reason
    assert algebra.algebraic(result)
    assert algebra.confirm(program, result.invariants, Budget.of(60)).status is Status.SAFE


def test_a_perturbed_knuth_invariant_is_never_proven():
    for k, assertion in enumerate(KNUTH_ASSERTIONS):
        wrong = assertion.replace("== ", "== 1 + ", 1)
        mutated = (*KNUTH_ASSERTIONS[:k], wrong, *KNUTH_ASSERTIONS[k + 1 :])
        result = algebra.check(knuth(mutated), Budget.of(60))
        assert result.status is Status.UNKNOWN, wrong


def test_confirm_rejects_a_certificate_with_an_equality_that_does_not_hold():
    program = knuth()
    found = algebra.check(program, Budget.of(60))
    loop, invariant = next(iter(found.invariants.items()))
    k, t = (next(v for v in program.variables if v.c_name == name) for name in ("k", "t"))
    wrong = ir.Binary("==", ir.Var(k.name, k.type), ir.Var(t.name, t.type), ir.INT)  # k == t: not at entry
    assert (
        algebra.confirm(program, {loop: conjunction([invariant, wrong])}, Budget.of(60)).status
        is Status.UNKNOWN
    )
    assert algebra.confirm(program, {}, Budget.of(60)).status is Status.UNKNOWN
    assert algebra.confirm(program, found.invariants, Budget.of(60)).status is Status.SAFE


def test_halving_a_doubled_unsigned_value_is_not_proven_equal():
    """`2*x / 2 == x` fails for x >= 2**31 (the product wraps): no proof."""
    program = program_of(
        "unsigned x = __VERIFIER_nondet_uint(); unsigned y = x * x; unsigned i = 0;"
        "while (i < 3) { __VERIFIER_assert((2 * y) / 2 == x * x); i++; }"
    )
    assert algebra.check(program, Budget.of(30)).status is Status.UNKNOWN


def test_an_identity_only_modulo_two_to_the_32_is_proven_for_unsigned_and_not_for_int():
    """n * 4294967295u + n wraps to 0; in mathematical (signed) arithmetic it is not 0."""
    unsigned = program_of(
        "unsigned n = __VERIFIER_nondet_uint(); unsigned x = n * 4294967295u; unsigned i = 0;"
        "while (i < 3) { __VERIFIER_assert(x + n == 0); __VERIFIER_assert(x * i + n * i == 0); i++; }"
    )
    assert algebra.check(unsigned, Budget.of(30)).status is Status.SAFE
    signed = program_of(
        "long long n = __VERIFIER_nondet_int(); long long x = n * 4294967295LL; long long i = 0;"
        "while (i < 3) { __VERIFIER_assert(x + n == 0); __VERIFIER_assert(x * i + n * i == 0); i++; }"
    )
    assert algebra.check(signed, Budget.of(30)).status is Status.UNKNOWN


def test_a_goal_modulo_a_power_of_two_needs_integer_cofactors():
    x = sympy.Symbol("x")
    modulus = 1 << 32
    # 2x == 0 (mod 2**32) does not give x == 0 (x = 2**31); exactly, 2x == 0 gives x == 0
    assert algebra._combination(Fact(x, modulus), [Fact(2 * x, modulus)]) is None
    assert algebra._combination(Fact(x, 0), [Fact(2 * x, 0)]) == [sympy.Rational(1, 2)]
    # a fact modulo 2**32 says nothing exact
    assert algebra._combination(Fact(x, 0), [Fact(x, modulus)]) is None
    # an exact fact holds modulo anything
    (cofactor,) = algebra._combination(Fact(3 * x, modulus), [Fact(x, 0)]) or [None]
    assert cofactor is not None and (cofactor - 3) % modulus == 0


def test_programs_without_nonlinear_loop_equalities_are_not_for_this_engine():
    linear = program_of("int i = 0; while (i < 10) { __VERIFIER_assert(2 * i >= i); i++; }")
    assert not algebra.applies(linear)


def test_the_portfolio_checks_an_algebraic_certificate_afresh():
    result = Portfolio(knuth(), PortfolioConfig(timeout_s=60)).run({"algebra": algebra.check})
    assert result.verdict is Verdict.TRUE, result.reason
    assert result.decided_by == "algebra"
    # algebra's four equalities, or the minimal certificate's three (one follows from the others)
    # when minimising finishes within its wall-clock guard (a loaded machine may cut it short)
    assert len(result.invariants) in (3, 4)
    assert {inv.proved_by for inv in result.invariants} == {"algebra"}


# ----------------------------------------------------------------------------- differential


def _poly(rng: random.Random, names: list[str]) -> dict[tuple[int, ...], int]:
    """A random polynomial of degree <= 2 over `names`: exponent vector -> coefficient."""
    terms: dict[tuple[int, ...], int] = {}
    for _ in range(rng.randint(1, 4)):
        exps = [0] * len(names)
        for _ in range(rng.randint(0, 2)):
            exps[rng.randrange(len(names))] += 1
        terms[tuple(exps)] = rng.choice([-3, -2, -1, 1, 2, 3, 5])
    return terms


def _c(poly: dict[tuple[int, ...], int], names: list[str], literal: str) -> str:
    parts = []
    for exps, coef in poly.items():
        factors = [f"({coef}{literal})"] + [n for n, e in zip(names, exps, strict=True) for _ in range(e)]
        parts.append("*".join(factors))
    return " + ".join(parts)


def _shifted(poly: dict[tuple[int, ...], int], names: list[str]) -> str:
    """F(i+1, x) - F(i, x) written out: `i` replaced by `(i + 1)`, minus F itself."""
    return " + ".join(
        "*".join([f"({coef})"] + [("(i + 1)" if n == "i" else n) for n, e in zip(names, exps, strict=True)
                                  for _ in range(e)])
        + " - " + "*".join([f"({coef})"] + [n for n, e in zip(names, exps, strict=True) for _ in range(e)])
        for exps, coef in poly.items()
    )  # fmt: skip


def _random_program(rng: random.Random) -> str:
    """`y` tracks F(i, x) by differences; the assertion is `y == F` or a perturbation of it."""
    ty, nondet, literal = rng.choice([("unsigned", "uint", "u"), ("long long", "int", "LL")])
    names = ["i", "x"]
    f = _poly(rng, names)
    asserted = _c(f, names, literal)
    if rng.random() < 0.5:
        asserted += f" + ({rng.choice([1, 2, -1])}{literal})*{rng.choice(['i', 'x', 'i*x', '1'])}"
    start = _c(f, names, literal).replace("i", "0")
    bounded = "assume_abort_if_not(x < 1000 && x > -1000);" if literal == "LL" else ""
    step = f"y = y + ({_shifted(f, names)}); i = i + 1;"
    return (
        f"{ty} x = __VERIFIER_nondet_{nondet}(); {ty} i = 0; {ty} y = {start}; {bounded}"
        f"while (i < 4) {{ __VERIFIER_assert(y * 1 == {asserted}); {step} }}"
    )


def test_no_program_the_interpreter_refutes_is_proven():
    """Random polynomial-tracking loops (unsigned values wrap): whatever algebra proves, no run
    reaches the error; and it proves a good share of the true ones."""
    rng = random.Random(20)
    counts = {"applies": 0, "proven": 0, "refuted": 0}
    for _ in range(40):
        program = program_of(_random_program(rng))
        if not algebra.applies(program):
            continue
        safe = algebra.check(program, Budget.of(20)).status is Status.SAFE
        values = [0, 1, 3, 999, -5, 2**31 - 1, 2**31, 2**32 - 1, *(rng.randrange(2**32) for _ in range(30))]
        runs = [run(program, (v,)) for v in values]
        reached = any(r.outcome == "error" and not r.overflows for r in runs)
        assert not (safe and reached), format_program(program)
        counts = {"applies": counts["applies"] + 1, "proven": counts["proven"] + safe,
                  "refuted": counts["refuted"] + reached}  # fmt: skip
    assert counts["applies"] >= 20 and counts["proven"] >= 10 and counts["refuted"] >= 5, counts


EGCD_INNER = """
    int x = __VERIFIER_nondet_int(), y = __VERIFIER_nondet_int();
    assume_abort_if_not(x >= 1 && y >= 1 && x <= 1000 && y <= 1000);
    int a = x, b = y, c = 0, k = 0;
    while (b != 0) {
        c = a; k = 0;
        while (1) {
            __VERIFIER_assert(a * 1 == k * b + c);
            if (!(c >= b)) break;
            c = c - b; k = k + 1;
        }
        a = b; b = c;
    }
"""


def test_a_quantity_the_loop_conserves_and_that_is_zero_on_entry_is_found():
    """The inner loop keeps c + k*b - a; it is 0 where the loop is entered (c = a, k = 0)."""
    program = program_of(EGCD_INNER.replace("__VERIFIER_assert(a * 1 == k * b + c);", ""))
    cfg = build_cfg(program)
    found = algebra._Prover(cfg, Budget.of(30)).conserved()
    inner = next(h for h, loop in cfg.loops.items() if loop.parent is not None)
    assert [format_expr(e) for e in found[inner]] == ["c + k*b == a"]
    assert algebra.check(program_of(EGCD_INNER), Budget.of(30)).status is Status.SAFE


# the extended Euclid algorithm; only the inner loop's a == y*r + x*p is asserted
EGCD = (
    "int x = __VERIFIER_nondet_int(), y = __VERIFIER_nondet_int();"
    "assume_abort_if_not(x >= 1 && y >= 1 && x <= 1000 && y <= 1000);"
    "int a = x, b = y, p = 1, q = 0, r = 0, s = 1, c = 0, k = 0, t;"
    "while (b != 0) { c = a; k = 0;"
    "  while (1) { __VERIFIER_assert(a == y * r + x * p); if (!(c >= b)) break; c = c - b; k = k + 1; }"
    "  a = b; b = c; t = p; p = q; q = t - q * k; t = r; r = s; s = t - s * k; }"
)


def test_proposed_equalities_are_candidates_and_only_proven_ones_are_kept():
    """The outer loop of the extended Euclid algorithm needs `b == x*q + y*s`, which no
    assertion states: given as a proposal, it is proven; a wrong proposal changes nothing."""
    program = program_of(EGCD)
    assert algebra.check(program, Budget.of(30)).status is Status.UNKNOWN
    variables = {v.c_name: ir.Var(v.name, v.type) for v in program.variables}
    x, y, b, q, s = (variables[n] for n in "xybqs")
    right = ir.Binary("+", ir.Binary("*", x, q, ir.INT), ir.Binary("*", y, s, ir.INT), ir.INT)
    good = ir.Binary("==", b, right, ir.INT)
    bad = ir.Binary("==", b, ir.Binary("*", x, q, ir.INT), ir.INT)
    proposed = {h: [good, bad] for h in build_cfg(program).loops}
    result = algebra.check(program, Budget.of(60), proposed)
    assert result.status is Status.SAFE, result.reason
    shown = [format_expr(e) for inv in result.invariants.values() for e in ir.conjuncts(inv)]
    assert "b == x*q + y*s" in shown and "b == x*q" not in shown
    assert algebra.confirm(program, result.invariants, Budget.of(60)).status is Status.SAFE


def test_the_quokka_loop_hands_its_proposed_equalities_to_algebra(tmp_path):
    """Algebra alone lacks the outer loop's `b == x*q + y*s`; the dynamic proposer finds it."""
    from quokka.invariants.verify import verify_path
    from quokka.verifier.options import Options

    path = tmp_path / "egcd.c"
    path.write_text(PRELUDE + "int main(void) {" + EGCD + "return 0; }\n")
    result = verify_path(path, Options(timeout_s=60, engines=("houdini", "algebra")))
    assert result.verdict is Verdict.TRUE, result.reason
    assert any(inv.source == "dynamic" for inv in result.invariants)
