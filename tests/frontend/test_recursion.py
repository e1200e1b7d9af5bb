"""Recursion inlined to `RECURSION_DEPTH` activations, deeper calls cut (`Program.cut_calls`), and
pointer-to-integer parameters bound to the caller's block or `&x` (`frontend.calls`).

A cut program is an under-approximation: a FALSE on it is a real counterexample (replayed by gcc:
`conftest`), a TRUE is never reported (the portfolio makes it UNKNOWN, saying why)."""

from __future__ import annotations

from pathlib import Path

import pytest
from frontend_helpers import run_gcc, run_ir
from marks import needs_gcc
from quokka.invariants.verify import verify_path
from quokka.verifier.engines import bmc, spacer
from quokka.verifier.engines.base import Budget, EngineResult, Status
from quokka.verifier.errors import Coord, UnsupportedFeature
from quokka.verifier.frontend import lower, lower_source
from quokka.verifier.ir import RECURSION_DEPTH, Assume, Const, Program, Scope, Stmt, walk_stmts
from quokka.verifier.options import Options
from quokka.verifier.verdict.portfolio import Portfolio, PortfolioConfig
from quokka.verifier.verdict.results import Result, Verdict

PRELUDE = """\
extern int __VERIFIER_nondet_int(void);
extern void reach_error(void);
"""
FACT = (
    PRELUDE
    + """int fact(int n) {
    if (n <= 1) return 1;
    return n * fact(n - 1);
}
int main(void) {
    int n = __VERIFIER_nondet_int();
    if (n < 0 || n > LIMIT) return 0;
    if (fact(n) CHECK) reach_error();
    return 0;
}
"""
)
FACT_CALL = (5, 16)  # line, column of the recursive call `fact(n - 1)`
EVEN_ODD = (
    PRELUDE
    + """int odd(int n);
int even(int n) { if (n == 0) return 1; return odd(n - 1); }
int odd(int n) { if (n == 0) return 0; if (n == BAD) return 0; return even(n - 1); }
int main(void) {
    int n = __VERIFIER_nondet_int();
    if (n < 0 || n > 5) return 0;
    if (even(n) != (n % 2 == 0)) reach_error();
    return 0;
}
"""
)


def _fact(limit: int, check: str) -> str:
    return FACT.replace("LIMIT", str(limit)).replace("CHECK", check)


def _write(tmp_path: Path, text: str, name: str = "rec.c") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _race(path: Path, *extra: str) -> Result:
    """The portfolio of BMC and Spacer (and the claims of `extra`) on `path`, replayed with gcc."""
    strategies = {
        "bmc": lambda program, budget: bmc.check(program, budget),
        "spacer": lambda program, budget: spacer.solve(program, budget),
    }
    strategies.update({name: _claims_safe for name in extra})
    return Portfolio(lower(path), PortfolioConfig(timeout_s=20, source=path)).run(strategies)


def _claims_safe(program: Program, budget: Budget) -> EngineResult:
    """A SAFE without invariants: checked afresh (the programs here are loop-free), and so certified."""
    return EngineResult("claim", Status.SAFE, "claimed")


def _cuts(program: Program) -> list[Stmt]:
    return [s for s in walk_stmts(program.body) if isinstance(s, Assume) and s.cond == Const(0, s.cond.type)]


def _inlined(program: Program, function: str) -> int:
    """How many copies of `function`'s body the program has."""
    return sum(isinstance(s, Scope) and s.function == function for s in walk_stmts(program.body))


def _not_true_because_of_the_depth(result: Result, path: Path, line: int, column: int) -> None:
    assert result.verdict is Verdict.UNKNOWN, result.reason
    assert result.reason == (
        f"recursion inlined only to depth {RECURSION_DEPTH} ({path}:{line}:{column}); "
        "a proof would not cover deeper calls"
    )
    assert not result.invariants and result.counterexample is None
    assert any(run.engine == "recursion" and run.status == "unknown" for run in result.engines)


# ----------------------------------------------------------------------------- lowering


def test_a_recursive_function_is_inlined_to_the_depth_and_the_deeper_call_cut() -> None:
    program = lower_source(_fact(3, "!= 6"), "f.c")
    assert program.cut_calls == (Coord("f.c", *FACT_CALL),)
    assert _inlined(program, "fact") == RECURSION_DEPTH
    assert [s.coord for s in _cuts(program) if s.coord == program.cut_calls[0]] == [program.cut_calls[0]]


def test_a_program_without_recursion_has_no_cut_calls() -> None:
    program = lower_source(PRELUDE + "int f(int n) { return n + 1; }\nint main(void) { return f(f(1)); }")
    assert program.cut_calls == () and not _cuts(program)


def test_mutual_recursion_cuts_each_function_at_the_depth() -> None:
    program = lower_source(EVEN_ODD.replace("BAD", "-1"), "m.c")
    assert _inlined(program, "even") == _inlined(program, "odd") == RECURSION_DEPTH
    assert program.cut_calls == (Coord("m.c", 5, 70),)  # odd's call of even: its 5th activation


# ----------------------------------------------------------------------------- verdicts


@needs_gcc
def test_a_bug_within_the_depth_is_false_and_replays_in_gcc(tmp_path: Path) -> None:
    path = _write(tmp_path, _fact(4, "== 24"))  # fact(4) takes 4 activations: within the depth
    result = _race(path)
    assert result.verdict is Verdict.FALSE, result.reason
    assert result.counterexample is not None and [i.value for i in result.counterexample.inputs] == [4]


def test_a_correct_recursive_program_is_unknown_not_true(tmp_path: Path) -> None:
    path = _write(tmp_path, _fact(3, "> 6"))
    _not_true_because_of_the_depth(_race(path), path, *FACT_CALL)


def test_a_checked_safe_claim_cannot_make_a_cut_program_true(tmp_path: Path) -> None:
    path = _write(tmp_path, _fact(3, "> 6"))
    result = Portfolio(lower(path), PortfolioConfig(timeout_s=20, source=path)).run({"claim": _claims_safe})
    _not_true_because_of_the_depth(result, path, *FACT_CALL)


def test_a_bug_only_beyond_the_depth_is_neither_false_nor_true(tmp_path: Path) -> None:
    path = _write(tmp_path, _fact(5, "== 120"))  # fact(5) needs 5 activations: cut
    _not_true_because_of_the_depth(_race(path), path, *FACT_CALL)


@needs_gcc
def test_mutual_recursion_finds_a_bug_within_the_depth(tmp_path: Path) -> None:
    path = _write(tmp_path, EVEN_ODD.replace("BAD", "3"))  # odd(3) is 0: even(4) is wrong
    result = _race(path)
    assert result.verdict is Verdict.FALSE, result.reason
    assert result.counterexample is not None and [i.value for i in result.counterexample.inputs] == [4]


def test_correct_mutual_recursion_is_unknown_not_true(tmp_path: Path) -> None:
    path = _write(tmp_path, EVEN_ODD.replace("BAD", "-1"))
    _not_true_because_of_the_depth(_race(path), path, 5, 70)


def test_quokka_verify_reports_a_cut_program_unknown(tmp_path: Path) -> None:
    path = _write(tmp_path, _fact(3, "> 6"))
    result = verify_path(path, Options(timeout_s=20, proposers=()))
    assert result.verdict is Verdict.UNKNOWN and "recursion inlined only to depth" in result.reason
    assert result.to_json()["verdict"] == "unknown"


# ----------------------------------------------------------------------------- pointer parameters

POINTERS = """\
#include <stdlib.h>
extern int __VERIFIER_nondet_int(void);
extern void reach_error(void);
void inc(int *p) { *p = *p + 1; }
int fill(int *a, int n, int i) {
    if (i >= n) return i;
    a[i] = i;
    return fill(a, n, i + 1);
}
int main(void) {
    int x = __VERIFIER_nondet_int();
    if (x < 0 || x > 100) return 0;
    inc(&x);
    int *a = malloc(3 * sizeof(int));
    fill(a, 3, 0);
    if (CHECK) reach_error();
    return 0;
}
"""


def test_a_correct_program_with_pointer_parameters_and_recursion_is_unknown(tmp_path: Path) -> None:
    path = _write(tmp_path, POINTERS.replace("CHECK", "x > 101 || a[2] != 2 || a[0] != 0"))
    result = _race(path)
    assert result.verdict is Verdict.UNKNOWN and "recursion inlined only" in result.reason, result.reason


@needs_gcc
def test_writes_through_pointer_parameters_reach_the_caller(tmp_path: Path) -> None:
    path = _write(tmp_path, POINTERS.replace("CHECK", "x == 101 && a[1] == 1"))
    result = _race(path)
    assert result.verdict is Verdict.FALSE, result.reason
    assert result.counterexample is not None and [i.value for i in result.counterexample.inputs] == [100]


def test_a_pointer_parameter_without_recursion_can_be_true(tmp_path: Path) -> None:
    src = PRELUDE + (
        "void inc(int *p, int *q) { *p = *p + 1; *q = *q + 1; }\n"
        "int main(void) { int x = __VERIFIER_nondet_int(); if (x < 0 || x > 100) return 0;\n"
        "  inc(&x, &x); if (x > 102) reach_error(); return 0; }\n"
    )
    path = _write(tmp_path, src)
    result = _race(path)
    assert result.verdict is Verdict.TRUE, result.reason


UNSUPPORTED_POINTERS = {  # the call or statement, in a program with `int *g; int *a; int x, y[3];`
    "pointer argument": "f(0);",
    "address-of (&)": "f(&y[1]);",
    "global pointer to an integer passed to a function": "f(g);",
    "assignment to a pointer parameter": "h(a);",
    "pointer to a variable used as a value": "k(&x);",
}


@pytest.mark.parametrize("feature", sorted(UNSUPPORTED_POINTERS))
def test_other_pointer_arguments_are_unsupported_where_they_are(feature: str) -> None:
    src = (
        "#include <stdlib.h>\nint *g;\n"
        "void f(int *p) { *p = 1; }\n"
        "void h(int *p) { p = malloc(4); }\n"
        "int k(int *p) { return p != 0; }\n"
        "int main(void) { int *a = malloc(8); int x = 0, y[3];\n" + UNSUPPORTED_POINTERS[feature] + "\n}\n"
    )
    with pytest.raises(UnsupportedFeature) as info:
        lower_source(src, "p.c")
    assert info.value.feature == feature and info.value.coord is not None
    assert str(info.value).startswith(f"p.c:{info.value.coord.line}:{info.value.coord.column}: ")


AGAINST_GCC = """\
#include <stdlib.h>
extern int __VERIFIER_nondet_int(void);
extern void reach_error(void);
void swap(int *p, int *q) { int t = *p; *p = *q; *q = t; }
int sum(int *a, int n) { if (n <= 0) return 0; return a[n - 1] + sum(a, n - 1); }
void put(int *a, int i, int *v) { a[i] = *v; (*v)++; }
int main(void) {
    int x = __VERIFIER_nondet_int(), y = __VERIFIER_nondet_int();
    if (x < 0 || x > 1000 || y < 0 || y > 1000) return 0;
    swap(&x, &y);
    swap(&x, &x);
    int *a = calloc(3, sizeof(int));
    int k = x;
    put(a, 0, &k); put(a, 1, &k); put(a, 2, &k);
    if (k != x + 3 || sum(a, 3) != 3 * x + 3) reach_error();
    if (a[0] == y) reach_error();
    return 0;
}
"""


@needs_gcc
@pytest.mark.parametrize(("inputs", "outcome"), [([1, 2], "exit"), ([5, 5], "error"), ([7, -1], "exit")])
def test_pointer_parameters_and_recursion_run_as_gcc_runs_them(inputs: list[int], outcome: str) -> None:
    assert run_gcc(AGAINST_GCC, inputs) == outcome
    assert run_ir(AGAINST_GCC, inputs).outcome == outcome


def test_a_claim_about_a_loop_is_never_valid_when_calls_were_cut(tmp_path: Path) -> None:
    """`i <= 3` holds in the cut program as in the C one, yet no proof may cover deeper calls."""
    loop = "int i = 0;\n    /*@ loop invariant i <= 3; */\n    while (i < 3) { i++; }"
    first = "int n = __VERIFIER_nondet_int();"
    text = _fact(3, "!= 6").replace(first, f"{loop} {first}")
    result = verify_path(_write(tmp_path, text), Options(timeout_s=20))
    assert result.verdict is not Verdict.TRUE
    assert [(c.status, c.detail().startswith("recursion inlined only to depth")) for c in result.claims] == [
        ("unknown", True)
    ]
