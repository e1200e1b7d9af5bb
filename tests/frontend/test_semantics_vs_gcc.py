"""C semantics of the lowering, checked against gcc: each program runs natively and in the IR.

Every program asserts facts where the naive reading of C differs from C (comments say how), so
a frontend that got the rule wrong reaches the error in the IR while gcc does not.
"""

from __future__ import annotations

import pytest
from frontend_helpers import GCC, run_gcc, run_ir

CASES: dict[str, tuple[str, list[list[int]], str]] = {
    # naive: -1 < 0u is true; C converts -1 to unsigned.
    "mixed_sign_compare": (
        """int main() { int m = -1; unsigned u = 0;
        __VERIFIER_assert(!(m < u)); __VERIFIER_assert(-1 < 0u == 0);
        __VERIFIER_assert(m < (long)u); return 0; }""",
        [[]],
        "exit",
    ),
    # naive: 0u - 1 == -1; C wraps to UINT_MAX.
    "unsigned_wrap": (
        """int main() { unsigned x = 0u - 1; __VERIFIER_assert(x == 4294967295u);
        __VERIFIER_assert(x + 1 == 0); unsigned char c = 255; c++; __VERIFIER_assert(c == 0);
        unsigned short s = 65535; s += 2; __VERIFIER_assert(s == 1); return 0; }""",
        [[]],
        "exit",
    ),
    # naive: (unsigned char)300 == 300.
    "conversions_wrap": (
        """int main() { __VERIFIER_assert((unsigned char)300 == 44);
        __VERIFIER_assert((signed char)200 == -56);
        int i = 300; unsigned char c = i; __VERIFIER_assert(c == 44); char d = 200; __VERIFIER_assert(d < 0);
        _Bool b = 5; __VERIFIER_assert(b == 1);
        long long big = 4294967297LL; int t = big; __VERIFIER_assert(t == 1); return 0; }""",
        [[]],
        "exit",
    ),
    # naive (Python): -7 // 2 == -4 and -7 % 2 == 1.
    "truncating_division": (
        """int main() { int a = -7, b = 2; __VERIFIER_assert(a / b == -3); __VERIFIER_assert(a % b == -1);
        __VERIFIER_assert(7 % -2 == 1); __VERIFIER_assert(-7 / -2 == 3); return 0; }""",
        [[]],
        "exit",
    ),
    # integer promotion: uchar + uchar is computed in int (no wrap at 256).
    "promotions": (
        """int main() { unsigned char a = 200, b = 100; int s = a + b; __VERIFIER_assert(s == 300);
        unsigned short x = 65535; __VERIFIER_assert(x * x > 0 || 1); __VERIFIER_assert(~a == -201);
        __VERIFIER_assert((a + b) > 255); __VERIFIER_assert(-a == -200); return 0; }""",
        [[]],
        "exit",
    ),
    # long vs unsigned int on LP64: unsigned int converts to long (signed) -> -1L < 1u.
    "usual_conversions_lp64": (
        """int main() { long m = -1; unsigned u = 1; __VERIFIER_assert(m < u);
        unsigned long ul = 1; __VERIFIER_assert(!(m < ul)); return 0; }""",
        [[]],
        "exit",
    ),
    # literal typing: 2147483648 is long (not int); 0xFFFFFFFF is unsigned int.
    "literals": (
        """int main() { __VERIFIER_assert(2147483648 > 0); __VERIFIER_assert(0xFFFFFFFF > 0);
        __VERIFIER_assert(-0xFFFFFFFF == 1); __VERIFIER_assert(017 == 15); __VERIFIER_assert('a' == 97);
        __VERIFIER_assert('\\xff' == -1); __VERIFIER_assert('\\n' == 10); __VERIFIER_assert(-2147483648 < 0);
        __VERIFIER_assert(sizeof(int) == 4 && sizeof(long) == 8); return 0; }""",
        [[]],
        "exit",
    ),
    # shifts: the result has the promoted left type; right operand type does not matter.
    "shifts": (
        """int main() { unsigned char c = 1; __VERIFIER_assert((c << 8) == 256); unsigned u = 1u;
        __VERIFIER_assert((u << 31) > 0); __VERIFIER_assert((-8 >> 1) == -4);
        __VERIFIER_assert((1u << 31u) == 2147483648u); return 0; }""",
        [[]],
        "exit",
    ),
    # comparisons yield int 0/1; ! yields int.
    "comparison_values": (
        """int main() { int x = 5; int c = (x > 3) + (x > 4) + (x == 5); __VERIFIER_assert(c == 3);
        __VERIFIER_assert(!x == 0); __VERIFIER_assert(!!x == 1); __VERIFIER_assert((x && 7) == 1);
        return 0; }""",
        [[]],
        "exit",
    ),
    # short-circuit: the right side's side effects only happen when evaluated.
    "short_circuit": (
        """int f_count = 0; int f(void) { f_count++; return 1; }
        int main() { int x = 0; if (x && f()) { x = 9; } __VERIFIER_assert(f_count == 0);
        if (x || f()) { x = 1; } __VERIFIER_assert(f_count == 1 && x == 1);
        int y = (x == 1) ? f() : (f() + f()); __VERIFIER_assert(f_count == 2 && y == 1);
        x > 0 && f(); __VERIFIER_assert(f_count == 3); return 0; }""",
        [[]],
        "exit",
    ),
    # evaluation order with temps: postfix yields the old value.
    "increments": (
        """int main() { int i = 5; int a = i++; __VERIFIER_assert(a == 5 && i == 6); int b = ++i;
        __VERIFIER_assert(b == 7 && i == 7); int c = i--; __VERIFIER_assert(c == 7 && i == 6);
        int d = (i += 4); __VERIFIER_assert(d == 10 && i == 10); i *= 2; i -= 3; i /= 2; i %= 5;
        __VERIFIER_assert(i == 3); i <<= 2; i |= 1; i ^= 3; i &= 14; i >>= 1; __VERIFIER_assert(i == 7);
        _Bool bb = 0; bb--; __VERIFIER_assert(bb == 1); bb++; __VERIFIER_assert(bb == 1); return 0; }""",
        [[]],
        "exit",
    ),
    # loop condition with a side effect runs every iteration, including the last test.
    "side_effect_loop_condition": (
        """int main() { int counter = 0; int n = 0; while (counter++ < 10) { n++; }
        __VERIFIER_assert(n == 10 && counter == 11); int k = 0; do { k += 2; } while (k < 7);
        __VERIFIER_assert(k == 8); int s = 0; for (int j = 0; j < 5; j++) { if (j == 2) continue; s += j; }
        __VERIFIER_assert(s == 8); return 0; }""",
        [[]],
        "exit",
    ),
    # do-while with continue jumps to the condition.
    "do_while_continue": (
        """int main() { int i = 0, s = 0; do { i++; if (i % 2) continue; s += i; } while (i < 6);
        __VERIFIER_assert(s == 12 && i == 6); return 0; }""",
        [[]],
        "exit",
    ),
    # switch: fallthrough, default in the middle, break inside a nested if.
    "switch": (
        """int g(int x) { int r = 0; switch (x) { case 1: r += 1; case 2: r += 10; break;
          default: r += 100; case 5: r += 1000; break; case 6: if (r == 0) { r = 7; break; } r = 8; }
          return r; }
        int main() { __VERIFIER_assert(g(1) == 11); __VERIFIER_assert(g(2) == 10);
        __VERIFIER_assert(g(3) == 1100); __VERIFIER_assert(g(5) == 1000); __VERIFIER_assert(g(6) == 7);
        int t = 0; for (int i = 0; i < 4; i++) { switch (i) { case 0: continue; case 1: t += 1; break;
        default: t += 10; } t += 100; } __VERIFIER_assert(t == 321); return 0; }""",
        [[]],
        "exit",
    ),
    # globals start at zero (or their initialiser); functions are inlined with fresh locals.
    "globals_and_calls": (
        """int g; int h = 3; unsigned arr[4] = {1, 2}; int add(int a, int b) { int t = a + b; return t; }
        int twice(int a) { return add(a, a); }
        int main() { __VERIFIER_assert(g == 0 && h == 3); __VERIFIER_assert(arr[1] == 2 && arr[3] == 0);
        __VERIFIER_assert(twice(add(1, 2)) == 6); arr[3] = 7; arr[0] += arr[3];
        __VERIFIER_assert(arr[0] == 8); return 0; }""",
        [[]],
        "exit",
    ),
    # parameters are converted to their declared type.
    "parameter_conversion": (
        """int is_zero(unsigned char c) { return c == 0; } int main() { __VERIFIER_assert(is_zero(256));
        return 0; }""",
        [[]],
        "exit",
    ),
    # a static local keeps its value between calls.
    "static_local": (
        """int counter(void) { static int n = 5; n++; return n; }
        int main() { counter(); __VERIFIER_assert(counter() == 7); return 0; }""",
        [[]],
        "exit",
    ),
    # nondet inputs, assume, and a reachable error.
    "nondet_error": (
        """int main() { int x = __VERIFIER_nondet_int(); __VERIFIER_assume(x > 0);
        unsigned char c = __VERIFIER_nondet_uchar(); if (x == 3 && c == 44) reach_error(); return 0; }""",
        [[3, 300], [3, 45], [-1, 44]],
        "",
    ),
    # comma, ternary and assignment values.
    "expressions": (
        """int main() { int a, b; a = (b = 3, b + 1); __VERIFIER_assert(a == 4 && b == 3);
        int c = a > b ? a : b; __VERIFIER_assert(c == 4); int m = -5; unsigned u = 3;
        __VERIFIER_assert((1 ? m : u) > 0); return 0; }""",
        [[]],
        "exit",
    ),
    # main's return ends the program: code after it is not executed.
    "main_return": (
        """int main() { int x = __VERIFIER_nondet_int(); if (x > 0) return 0; reach_error(); return 0; }""",
        [[1], [0]],
        "",
    ),
    # gcc gives an enum without negative values the type unsigned int.
    "enums": (
        """enum color { RED, GREEN = 5, BLUE }; int main() { enum color c = RED; c = c - 1;
        __VERIFIER_assert(c > 0); __VERIFIER_assert(BLUE == 6 && RED - 1 < 0); return 0; }""",
        [[]],
        "exit",
    ),
    # do { } while (0) runs once; sizeof of arrays; arrays of unsigned char wrap on store.
    "arrays_and_sizeof": (
        """int main() { unsigned char a[4] = {250, 1}; int i = 0; do { a[i] += 10; } while (0);
        __VERIFIER_assert(a[0] == 4 && a[1] == 1); __VERIFIER_assert(sizeof(a) == 4);
        __VERIFIER_assert(sizeof a / sizeof a[0] == 4); int k = 0; a[k++] = 9;
        __VERIFIER_assert(k == 1 && a[0] == 9); return 0; }""",
        [[]],
        "exit",
    ),
    # nondet values are converted to the function's type.
    "nondet_types": (
        """int main() { unsigned char c = __VERIFIER_nondet_uchar(); short s = __VERIFIER_nondet_short();
        __VERIFIER_assert(c == 44 && s == -1); _Bool b = __VERIFIER_nondet_bool(); __VERIFIER_assert(b == 1);
        return 0; }""",
        [[300, 65535, 7]],
        "exit",
    ),
}


@pytest.mark.needs_gcc
@pytest.mark.skipif(GCC is None, reason="needs gcc")
@pytest.mark.parametrize("name", sorted(CASES))
def test_lowering_agrees_with_gcc(name: str) -> None:
    src, input_sets, expected = CASES[name]
    for inputs in input_sets:
        native = run_gcc(src, inputs)
        ir = run_ir(src, inputs).outcome
        assert ir == native, f"{name} {inputs}: IR {ir}, gcc {native}"
        if expected:
            assert native == expected


def test_nondet_error_outcomes_differ_by_input() -> None:
    # The error is reachable for one input and not for another (the test is not vacuous).
    src = CASES["nondet_error"][0]
    assert run_ir(src, [3, 300]).outcome == "error"
    assert run_ir(src, [3, 45]).outcome == "exit"
    assert run_ir(src, [-1, 44]).outcome == "blocked"
