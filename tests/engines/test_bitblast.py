"""The bit-precise decision of loop-free programs (`engines.bitblast`, `smt_bv`): C's integer
semantics on small programs, the cases the integer encoding timed out on (issue 18), and a
differential test against the interpreter on random loop-free programs."""

from __future__ import annotations

import random

import pytest
from quokka.verifier.engines import bitblast
from quokka.verifier.engines.base import Budget, Status
from quokka.verifier.exec.interp import run
from quokka.verifier.frontend.lower import lower_source
from quokka.verifier.ir import INT, UINT, Binary, Expr, Program, Unary
from quokka.verifier.ir.builder import cast, num
from quokka.verifier.properties import UNREACH_CALL
from test_bmc_fuzz import _Gen

HEADER = """
extern void abort(void);
void reach_error(void) { abort(); }
extern int __VERIFIER_nondet_int(void);
extern unsigned int __VERIFIER_nondet_uint(void);
void __VERIFIER_assert(int cond) { if (!cond) { reach_error(); } }
"""


def decide(body: str, seconds: float = 20) -> tuple[Status, str, tuple[int, ...] | None]:
    text = HEADER + "int main(void) {\n" + body + "\nreturn 0; }"
    program = lower_source(text, "t.c", "LP64", UNREACH_CALL)
    result = bitblast.check(program, Budget.of(seconds))
    assert result.stats.get("replay") != "failed", result.reason
    return result.status, result.reason, result.inputs


def test_xor_swap_is_proved_at_once():
    status, reason, _ = decide("""
        int a = __VERIFIER_nondet_int(), b = __VERIFIER_nondet_int();
        if (a < -1000 || a > 1000 || b < -1000 || b > 1000) return 0;
        int a0 = a, b0 = b;
        a = a ^ b; b = a ^ b; a = a ^ b;
        __VERIFIER_assert(a == b0 && b == a0);""", seconds=5)
    assert status is Status.SAFE, reason
    assert "no undefined behaviour" in reason


def test_power_of_two_bug_is_found_with_its_input():
    status, reason, inputs = decide("""
        int x = __VERIFIER_nondet_int();
        __VERIFIER_assert(!(x != 0 && (x & (x - 1)) == 0 && 1000000 < x && x < 2000000));""", seconds=5)
    assert status is Status.UNSAFE, reason
    assert inputs == (1 << 20,)


@pytest.mark.parametrize(("body", "status"), [
    # unsigned arithmetic wraps
    ("unsigned int u = __VERIFIER_nondet_uint(); __VERIFIER_assert(u + 1u != 0u);", Status.UNSAFE),
    # C's / and % truncate toward zero
    ("int a = -7; __VERIFIER_assert(a / 2 == -3 && a % 2 == -1 && 7 % -2 == 1);", Status.SAFE),
    # conversions wrap; comparisons follow the operands' signedness
    ("int a = 300; unsigned char c = a; __VERIFIER_assert(c == 44);", Status.SAFE),
    ("int a = -1; unsigned int u = a; __VERIFIER_assert(u > 0u && u == 4294967295u);", Status.SAFE),
    ("int a = __VERIFIER_nondet_int(); if (a < 0) return 0; __VERIFIER_assert((a >> 1) <= a);", Status.SAFE),
    ("int a = -8; __VERIFIER_assert((a >> 1) == -4);", Status.SAFE),
    ("unsigned int u = 1u << 31; __VERIFIER_assert((u >> 31) == 1u);", Status.SAFE),
    ("long l = __VERIFIER_nondet_int(); if (l < 0 || l > 100) return 0; __VERIFIER_assert(l * l <= 10000);",
     Status.SAFE),
    ("_Bool b = 256; __VERIFIER_assert(b == 1);", Status.SAFE),
])
def test_c_integer_semantics(body: str, status: Status):
    got, reason, _ = decide(body)
    assert got is status, reason


def test_possible_signed_overflow_is_not_proved():
    """Safe on every path without overflow, but `a + 1` overflows for INT_MAX: no SAFE (the
    integer encodings, which compute signed results exactly, would mean another program)."""
    status, reason, _ = decide("int a = __VERIFIER_nondet_int(); int b = a + 1; __VERIFIER_assert(b != a);")
    assert status is Status.UNKNOWN
    assert "undefined behaviour is possible at t.c:8" in reason


def test_division_by_zero_is_not_proved():
    status, reason, _ = decide("int a = __VERIFIER_nondet_int(); int b = 10 / a; __VERIFIER_assert(b <= 10);")
    assert status is Status.UNKNOWN and "undefined behaviour is possible" in reason


def test_error_on_a_path_without_overflow_is_found_despite_other_overflowing_paths():
    status, reason, inputs = decide("""
        int a = __VERIFIER_nondet_int(); int b = a * 2;
        __VERIFIER_assert(b != 1000);""")
    assert status is Status.UNSAFE, reason
    assert inputs == (500,)


def test_programs_with_loops_and_no_bit_operators_are_left_to_the_other_engines():
    status, reason, _ = decide("int i = 0; while (i < 3) i++; __VERIFIER_assert(i == 3);")
    assert status is Status.UNKNOWN and "no bitwise operators" in reason


INTERLEAVE = """
    unsigned int x = __VERIFIER_nondet_uint() & 65535u, y = __VERIFIER_nondet_uint() & 65535u;
    unsigned int z = 0, i = 0;
    while (i < 16u) { z |= ((x & (1u << i)) << i) | ((y & (1u << i)) << (i + 1)); i += 1u; }
    unsigned int xx = x, yy = y;
    xx = (xx | (xx << 8u)) & 16711935u; xx = (xx | (xx << 4u)) & 252645135u;
    xx = (xx | (xx << 2u)) & 858993459u; xx = (xx | (xx << 1u)) & 1431655765u;
    yy = (yy | (yy << 8u)) & 16711935u; yy = (yy | (yy << 4u)) & 252645135u;
    yy = (yy | (yy << 2u)) & 858993459u; yy = (yy | (yy << 1u)) & 1431655765u;
    __VERIFIER_assert(z == (xx | (yy << 1u)));"""


def test_a_bounded_loop_over_bits_is_unrolled_completely_and_proved():
    status, reason, _ = decide(INTERLEAVE)
    assert status is Status.SAFE and "no undefined behaviour" in reason


def test_a_bug_in_a_bounded_loop_over_bits_is_found():
    status, reason, inputs = decide(INTERLEAVE.replace("(y & (1u << i)) << (i + 1)", "(y & (1u << i)) << i"))
    assert status is Status.UNSAFE, reason
    assert inputs is not None


def test_an_unbounded_loop_over_bits_is_never_proved():
    # no unrolling is complete: however far it goes, it is no proof
    status, reason, _ = decide("""
        unsigned int n = __VERIFIER_nondet_uint(), x = 0;
        while (n > 0u) { x ^= n & 1u; n = n - 1u; }
        __VERIFIER_assert(x <= 1u);""", seconds=4)
    assert status is Status.UNKNOWN, reason


# ----------------------------------------------------------------------------- differential


class _LoopFreeGen(_Gen):
    """Random loop-free programs over int and unsigned char, with the bit-level operators too."""

    def loop(self, depth: int) -> list:
        return [self.assign()]

    def weak_cond(self) -> Expr:
        if self.rng.random() < 0.5:
            return super().weak_cond()
        op = self.rng.choice(["<", "<=", ">", ">=", "!="])
        return Binary(op, self.expr(1), num(self.rng.randint(-6, 12)), INT)

    def expr(self, depth: int = 0) -> Expr:
        if depth < 2 and self.rng.random() < 0.3:
            a, b = self.expr(depth + 1), self.expr(depth + 1)
            kind = self.rng.random()
            if kind < 0.3:
                return Binary(self.rng.choice("&|^"), a, b, INT)
            if kind < 0.5:
                return Binary(self.rng.choice(["<<", ">>"]), a, num(self.rng.randint(0, 4)), INT)
            if kind < 0.8:  # unsigned arithmetic, converted back (wrapping)
                return cast(Binary(self.rng.choice("+-*"), cast(a, UINT), cast(b, UINT), UINT), INT)
            return Unary("~", a, INT)
        return super().expr(depth)


_EXTREMES = (-(2**31), 2**31 - 1, -1, 0, 1, 255, 256, 2**30, -(2**30), 46341)


def _inputs(rng: random.Random) -> list[int]:
    return [rng.randint(-4, 5) if rng.random() < 0.7 else rng.choice(_EXTREMES) for _ in range(100)]


def _check_one(seed: int) -> str:
    program: Program = _LoopFreeGen(seed).program()
    assert not program.loops
    result = bitblast.check(program, Budget.of(20))
    assert result.stats.get("replay") != "failed", (seed, result.reason)
    rng = random.Random(seed)
    runs = [run(program, _inputs(rng), max_steps=20_000) for _ in range(120)]
    defined_error = any(r.outcome == "error" and not r.overflows for r in runs)
    undefined = any(r.overflows or r.outcome == "ub" for r in runs)
    if result.status is Status.SAFE:
        assert not defined_error and not undefined, (seed, result.reason)
        return "safe"
    if result.status is Status.UNSAFE:
        return "unsafe"
    assert not defined_error, (seed, result.reason)  # a reachable error is always found
    assert "undefined behaviour is possible" in result.reason, (seed, result.reason)
    return "undefined"


@pytest.mark.parametrize("chunk", range(3))
def test_random_loop_free_programs_agree_with_the_interpreter(chunk: int) -> None:
    outcomes = [_check_one(seed) for seed in range(chunk * 40, chunk * 40 + 40)]
    assert outcomes.count("unsafe") >= 3
    assert outcomes.count("safe") >= 3


class _BitLoopGen(_LoopFreeGen):
    """Random programs with the bit-level operators and loops bounded by fresh counters."""

    loop = _Gen.loop


def _check_bounded(seed: int) -> str:
    program: Program = _BitLoopGen(seed).program()
    result = bitblast.check(program, Budget.of(20))
    assert result.stats.get("replay") != "failed", (seed, result.reason)
    rng = random.Random(seed)
    runs = [run(program, _inputs(rng), max_steps=20_000) for _ in range(120)]
    if result.status is Status.SAFE:  # a proof covers every input: no sampled run may fail
        assert result.stats.get("complete") is True
        assert not any(r.outcome == "error" or r.overflows or r.outcome == "ub" for r in runs), seed
        return "safe"
    return result.status.value


@pytest.mark.parametrize("chunk", range(2))
def test_random_programs_with_bounded_loops_over_bits_agree_with_the_interpreter(chunk: int) -> None:
    outcomes = [_check_bounded(seed) for seed in range(1000 + chunk * 30, 1000 + chunk * 30 + 30)]
    assert outcomes.count("safe") >= 2 and outcomes.count("unsafe") >= 2, outcomes
