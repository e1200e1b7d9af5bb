"""SV-COMP's array gaps in the frontend: large zero-initialised arrays, variable-length arrays,
multi-dimensional arrays, memset/memcpy (`frontend.stmt`, `frontend.expr`, `frontend.memcalls`).

Every lowering is checked against gcc: each program runs the same in gcc's build, in the test
helpers' interpreter and in Quokka's interpreter over several inputs, its FALSE is found (and
confirmed by gcc: `conftest`) and its corrected version proven TRUE. An index outside its own
dimension of a multi-dimensional array is undefined behaviour, never silently accepted."""

from __future__ import annotations

from pathlib import Path

import pytest
from frontend_helpers import run_gcc, run_ir
from marks import needs_gcc
from quokka.invariants.verify import verify_path
from quokka.verifier import ir
from quokka.verifier.errors import FrontendError, UnsupportedFeature
from quokka.verifier.exec import interp
from quokka.verifier.exec.replay import gcc_available
from quokka.verifier.frontend import lower_source, stmt
from quokka.verifier.options import Options
from quokka.verifier.verdict.results import Verdict

PRELUDE = """\
#include <string.h>
extern int __VERIFIER_nondet_int(void);
extern void reach_error(void);
"""
OPTIONS = Options(timeout_s=30, engines=("bmc", "spacer", "houdini", "bitblast"))


def _verify(tmp_path: Path, text: str, timeout_s: float = 30) -> Verdict:
    path = tmp_path / "arrays.c"
    path.write_text(text)
    result = verify_path(path, OPTIONS.with_(timeout_s=timeout_s))
    return result.verdict


def _same_as_gcc(src: str, inputs: list[int], expected: str) -> None:
    """gcc's build, the helpers' interpreter and Quokka's interpreter end `src` the same way."""
    assert run_gcc(src, inputs) == expected
    assert run_ir(src, inputs).outcome == expected
    assert interp.run(lower_source(src, "t.c"), inputs).outcome == expected


def _unsupported(src: str, feature: str) -> UnsupportedFeature:
    with pytest.raises(UnsupportedFeature) as info:
        lower_source(src, "u.c")
    exc = info.value
    assert feature in str(exc), str(exc)
    assert exc.coord is not None and str(exc).startswith(f"u.c:{exc.coord.line}:{exc.coord.column}: ")
    return exc


def _assigned_values(program: ir.Program) -> list[ir.Expr]:
    return [s.value for s in ir.walk_stmts(program.body) if isinstance(s, ir.Assign)]


def _stores(program: ir.Program) -> int:
    values = _assigned_values(program)
    return sum(1 for v in values for node in ir.walk(v) if isinstance(node, ir.Store))


# ----------------------------------------------------------------------------- large arrays

LARGE = (
    PRELUDE
    + """int g[1000000];
int h[200000] = {1, 2, [199999] = 3};
int main(void) {
  int i = __VERIFIER_nondet_int();
  if (i < 0 || i >= 1000000) return 0;
  int a[100000] = {0};
  int b[5000] = {5, 0, 7};
  for (int k = 0; k < 10; k++) g[k] = k + 1;
  if (i < 100000) a[i] = 9;
  if (CHECK) reach_error();
  return 0;
}
"""
)
LARGE_BUG = "g[i] == 4 && a[i] == 9 && h[199999] == 3 && b[2] == 7"
LARGE_OK = (
    "h[0] != 1 || h[1] != 2 || h[199999] != 3 || h[2] != 0 || b[0] != 5 || b[2] != 7 || b[3] != 0"
    " || (i >= 10 && g[i] != 0) || (i < 10 && g[i] != i + 1) || (i < 100000 && a[i] != 9)"
)


def test_large_arrays_lower_without_a_store_per_element() -> None:
    program = lower_source(LARGE.replace("CHECK", LARGE_BUG), "t.c")
    assert _stores(program) < 20  # h: 3 listed, b: 2 non-zero, a: none; the loop and a[i]
    zeros = [v for v in program.variables if v.kind == "temp" and v.name.startswith("zero.")]
    assert {v.type for v in zeros} == {ir.ArrayType(ir.INT, 100000), ir.ArrayType(ir.INT, 5000)}
    assert not any(isinstance(s, ir.Assign) and s.target in {v.name for v in zeros}
                   for s in ir.walk_stmts(program.body))  # fmt: skip


@needs_gcc
@pytest.mark.parametrize(
    ("inputs", "outcome"), [([3], "error"), ([4], "exit"), ([999999], "exit"), ([-1], "exit")]
)
def test_large_arrays_run_as_gcc_runs_them(inputs: list[int], outcome: str) -> None:
    _same_as_gcc(LARGE.replace("CHECK", LARGE_BUG), inputs, outcome)


LOOP_INIT = (
    PRELUDE
    + """int main(void) {
  int r = 0;
  int n = __VERIFIER_nondet_int();
  if (n < 0 || n > 4) return 0;
  for (int t = 0; t < n; t++) {
    int b[5000] = {1};
    int c[3] = {4};
    if (b[4999] != 0 || b[0] != 1 || c[2] != 0 || c[0] != 4) reach_error();
    b[4999] = t + 1;
    c[2] = 8;
    r = r + b[4999];
  }
  if (CHECK) reach_error();
  return 0;
}
"""
)


@needs_gcc
@pytest.mark.parametrize(("inputs", "outcome"), [([0], "exit"), ([2], "exit"), ([3], "error"), ([4], "exit")])
def test_an_array_in_a_loop_is_initialised_again_each_time(inputs: list[int], outcome: str) -> None:
    _same_as_gcc(LOOP_INIT.replace("CHECK", "r == 6"), inputs, outcome)


@needs_gcc
def test_an_array_in_a_loop_is_reset_for_the_verifier_too(tmp_path: Path) -> None:
    assert _verify(tmp_path, LOOP_INIT.replace("CHECK", "r == 6")) is Verdict.FALSE
    assert _verify(tmp_path, LOOP_INIT.replace("CHECK", "r > 10")) is Verdict.TRUE


def test_the_limit_is_on_listed_elements_not_on_the_size(monkeypatch: pytest.MonkeyPatch) -> None:
    lower_source("int main(void) { int a[16000000] = {1, [15999999] = 2}; return a[0]; }", "t.c")
    monkeypatch.setattr(stmt, "MAX_ELEMENT_STORES", 4)  # (a list of 4097 takes pycparser seconds)
    _unsupported("int main(void) { int a[6000] = {1, 2, 3, 4, 5}; return a[0]; }", "large initializer list")


# ----------------------------------------------------------------------------- variable-length arrays

VLA = (
    PRELUDE
    + """int main(void) {
  int n = __VERIFIER_nondet_int();
  if (n < 1 || n > 8) return 0;
  int a[n];
  for (int i = 0; i < n; i++) a[i] = 2 * i;
  if (sizeof(a) != n * sizeof(int) || sizeof a / sizeof a[0] != n) reach_error();
  if (CHECK) reach_error();
  return 0;
}
"""
)
VLA_CALLS = (
    PRELUDE
    + """int sum(int *p, int n) { int s = 0; for (int i = 0; i < n; i++) s += p[i]; return s; }
int main(void) {
  int m = __VERIFIER_nondet_int();
  if (m < 0 || m > 5) return 0;
  int total = 0;
  for (int k = 1; k <= m; k++) {
    int v[k + 0 * m++];
    m--;
    for (int i = 0; i < k; i++) v[i] = i;
    total += sum(v, k) + (int)(sizeof v / sizeof v[0]);
  }
  if (total == 20) reach_error();
  return 0;
}
"""
)


def test_a_variable_length_array_is_a_block() -> None:
    program = lower_source(VLA.replace("CHECK", "0"), "t.c")
    assert ir.ArrayType(ir.INT, None) in {v.type for v in program.variables if v.name == "a"}
    assumes = [s for s in ir.walk_stmts(program.body) if isinstance(s, ir.Assume)]
    read = {name for s in assumes for name in ir.free_vars(s.cond)}
    assert any(name.startswith("a.len") for name in read)  # n > 0, every access inside the array


@needs_gcc
@pytest.mark.parametrize(("inputs", "outcome"), [([1], "exit"), ([6], "error"), ([8], "exit")])
def test_a_variable_length_array_runs_as_gcc_runs_it(inputs: list[int], outcome: str) -> None:
    _same_as_gcc(VLA.replace("CHECK", "a[n - 1] == 10"), inputs, outcome)


@needs_gcc
@pytest.mark.parametrize(("inputs", "outcome"), [([0], "exit"), ([3], "exit"), ([4], "error"), ([5], "exit")])
def test_variable_length_arrays_in_a_loop_and_passed_to_a_function(inputs: list[int], outcome: str) -> None:
    _same_as_gcc(VLA_CALLS, inputs, outcome)


@pytest.mark.parametrize(
    ("decl", "feature"),
    [
        ("int a[n][4];", "multi-dimensional variable-length array"),
        ("int a[4][n];", "multi-dimensional variable-length array"),
        ("typedef int row[n]; row a;", "variable-length array type"),
    ],
)
def test_other_variable_length_arrays_are_refused(decl: str, feature: str) -> None:
    _unsupported(f"int main(void) {{ int n = 3;\n  {decl} a[0][0] = 1; return 0; }}", feature)


def test_a_variable_length_array_at_file_scope_is_an_error() -> None:
    with pytest.raises(FrontendError, match="file scope"):
        lower_source("int n = 3; int a[n]; int main(void) { return 0; }", "t.c")


# ----------------------------------------------------------------------------- multi-dimensional arrays

MULTI = (
    PRELUDE
    + """int g[3][4];
int main(void) {
  int m[2][3] = {{1, 2, 3}, {4, 5, 6}};
  int f[][2] = {1, 2, 3};
  static int s[2][2][2] = {{{1}}, {{0, 2}}};
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++) g[i][j] = 10 * i + j;
  int x = __VERIFIER_nondet_int(), y = __VERIFIER_nondet_int();
  if (x < 0 || x >= 3 || y < 0 || y >= 4) return 0;
  m[x % 2][y % 3] += 100;
  if (CHECK) reach_error();
  return 0;
}
"""
)
MULTI_BUG = "g[x][y] == 21 && m[1][0] == 4 && m[1][2] == 6 && f[1][0] == 3 && s[1][0][1] == 2"
MULTI_OK = (
    "g[x][y] != 10 * x + y || m[x % 2][y % 3] != 3 * (x % 2) + y % 3 + 101 || f[1][1] != 0"
    " || sizeof(f) != 4 * sizeof(int) || sizeof(m[0]) != 3 * sizeof(int) || sizeof g != 48"
    " || s[0][0][0] != 1 || s[1][0][1] != 2 || s[0][1][1] != 0"
)


def test_a_multi_dimensional_array_is_stored_flat() -> None:
    program = lower_source(MULTI.replace("CHECK", "0"), "t.c")
    types = {v.name: v.type for v in program.variables}
    assert types["g"] == ir.ArrayType(ir.INT, 12) and types["m"] == ir.ArrayType(ir.INT, 6)
    assert types["f"] == ir.ArrayType(ir.INT, 4) and ir.ArrayType(ir.INT, 8) in types.values()


@needs_gcc
@pytest.mark.parametrize(
    ("inputs", "outcome"),
    [([2, 1], "error"), ([0, 0], "exit"), ([1, 3], "exit"), ([2, 3], "exit"), ([3, 0], "exit")],
)
def test_multi_dimensional_arrays_run_as_gcc_runs_them(inputs: list[int], outcome: str) -> None:
    _same_as_gcc(MULTI.replace("CHECK", MULTI_BUG), inputs, outcome)
    _same_as_gcc(MULTI.replace("CHECK", MULTI_OK), inputs, "exit")


OUT_OF_ROW = (
    PRELUDE
    + """int main(void) {
  int a[3][4] = {0};
  int j = __VERIFIER_nondet_int();
  if (j < 0 || j > 5) return 0;
  a[0][j] = 1;
  if (a[1][1] == 1) reach_error();
  return 0;
}
"""
)


@needs_gcc
def test_an_index_outside_its_dimension_is_undefined_not_accepted(tmp_path: Path) -> None:
    assert run_gcc(OUT_OF_ROW, [5]) == "error"  # gcc's a[0][5] is a[1][1]: C leaves it undefined
    program = lower_source(OUT_OF_ROW, "t.c")
    assert [interp.run(program, [j]).outcome for j in (3, 4, 5)] == ["exit", "ub", "ub"]
    # BMC and bit-blasting see the undefined behaviour; no proof may take a[0][5] for a cell other
    # than a[1][1] (an index -1 would have let Houdini prove it)
    assert _verify(tmp_path, OUT_OF_ROW, timeout_s=6) is Verdict.UNKNOWN


DIAGONAL = (
    PRELUDE
    + """int a[1000][1000];
int main(void) {
  int n = __VERIFIER_nondet_int();
  if (n < 0 || n > 1000) return 0;
  int s = 0;
  for (int i = 0; i < n; i++) {
    a[i][i] = i;
    s += a[i][i];
  }
  if (s < 0) reach_error();
  return 0;
}
"""
)


def test_the_dimension_checks_leave_loops_provable(tmp_path: Path) -> None:
    assert _verify(tmp_path, DIAGONAL) is Verdict.TRUE  # too many iterations to unroll: an invariant


def test_a_constant_index_outside_its_dimension_is_undefined() -> None:
    program = lower_source("int main(void) { int a[3][4]; a[0][5] = 1; return a[1][1]; }", "t.c")
    assert interp.run(program, []).outcome == "ub"


@pytest.mark.parametrize(
    ("body", "feature"),
    [
        ("int *p; p = a[1];", "a row of a multi-dimensional array"),
        ("return *a[1];", "a row of a multi-dimensional array"),
        ("f(a[0]);", "a row of a multi-dimensional array"),
        ("int b[2][2] = {[1] = {1, 2}};", "designated initializer"),
    ],
)
def test_rows_as_pointers_are_refused_where_they_are(body: str, feature: str) -> None:
    src = f"void f(int *p) {{ p[0] = 1; }}\nint main(void) {{ int a[3][4] = {{0}};\n  {body} return 0; }}"
    _unsupported(src, feature)


def test_a_multi_dimensional_parameter_is_refused() -> None:
    _unsupported("void f(int p[][4]) { p[0][0] = 1; }\nint main(void) { int a[3][4]; f(a); return 0; }",
                 "pointer to an array")  # fmt: skip


# ----------------------------------------------------------------------------- memset, memcpy

MEM = (
    PRELUDE
    + """int big[100000];
int main(void) {
  int small[10];
  char c[6];
  int m[3][4];
  int n = __VERIFIER_nondet_int();
  if (n < 1 || n > 20) return 0;
  int v[n];
  memset(small, -1, sizeof(small));
  memset(c, 'x', 4);
  memset(m, 0, sizeof m);
  memset(v, 0, sizeof(v));
  for (int k = 0; k < 5; k++) big[k] = 3;
  memset(big, 0, sizeof(big));
  int copy[10];
  memcpy(copy, small, sizeof(small));
  int i = __VERIFIER_nondet_int();
  if (i < 0 || i >= 100000) return 0;
  if (CHECK) reach_error();
  return 0;
}
"""
)
MEM_BUG = (
    "small[9] == -1 && c[3] == 'x' && m[2][3] == 0 && v[n - 1] == 0 && big[i] == 0 && copy[4] == -1"
    " && i == 7"
)
MEM_OK = (
    "small[i % 10] != -1 || c[3] != 'x' || c[0] != 'x' || m[2][3] != 0 || v[n - 1] != 0 || big[i] != 0"
    " || copy[i % 10] != -1"
)


def test_memset_of_a_large_array_is_one_assignment() -> None:
    program = lower_source(MEM.replace("CHECK", "0"), "t.c")
    to_big = [s.value for s in ir.walk_stmts(program.body) if isinstance(s, ir.Assign) and s.target == "big"]
    assert [(type(v), v.type) for v in to_big][-1] == (ir.Var, ir.ArrayType(ir.INT, 100000))
    assert isinstance(to_big[-1], ir.Var) and to_big[-1].name.startswith("zero.")


@needs_gcc
@pytest.mark.parametrize(("inputs", "outcome"), [([3, 7], "error"), ([20, 99999], "exit"), ([1, 0], "exit")])
def test_memset_and_memcpy_run_as_gcc_runs_them(inputs: list[int], outcome: str) -> None:
    _same_as_gcc(MEM.replace("CHECK", MEM_BUG), inputs, outcome)
    _same_as_gcc(MEM.replace("CHECK", MEM_OK), inputs, "exit")


@pytest.mark.parametrize(
    ("call", "detail"),
    [
        ("memset(p, 0, 4 * sizeof(int));", "pointer to an integer"),
        ("memset(big, 0, 40000);", "part of a large array"),
        ("memset(big, 1, sizeof(big));", "non-zero value"),
        ("memset(small, 0, 44);", "past the end"),
        ("memset(small, 0, 6);", "whole elements"),
        ("memset(small, k, sizeof(small));", "non-constant value"),
        ("memset(v, 0, k * sizeof(int));", "whole array"),
        ("memcpy(small, small, 8);", "onto itself"),
        ("memcpy(small, c, 8);", "between arrays"),
        ("memset(small + 1, 0, 8);", "not the name of an array"),
        ("int *q = memset(small, 0, 8);", "result of memset"),
    ],
)
def test_other_memset_and_memcpy_calls_are_refused_where_they_are(call: str, detail: str) -> None:
    src = (
        "#include <string.h>\n#include <stdlib.h>\nint big[100000];\n"
        "int main(void) { int small[10]; char c[40]; int k = 3; int v[k]; int *p = malloc(16);\n"
        f"  {call} return 0; }}"
    )
    exc = _unsupported(src, detail)
    assert exc.coord is not None and exc.coord.line == 5


# ----------------------------------------------------------------------------- verdicts

_GCC = [pytest.mark.needs_gcc, pytest.mark.skipif(not gcc_available(), reason="no C compiler")]


@pytest.mark.parametrize(
    ("program", "check", "verdict"),
    [
        pytest.param(LARGE, LARGE_BUG, Verdict.FALSE, marks=_GCC, id="large-bug"),
        pytest.param(LARGE, LARGE_OK, Verdict.TRUE, id="large"),
        pytest.param(VLA, "a[n - 1] == 10", Verdict.FALSE, marks=_GCC, id="vla-bug"),
        pytest.param(VLA, "a[n - 1] != 2 * n - 2 || a[0] != 0", Verdict.TRUE, id="vla"),
        pytest.param(MULTI, MULTI_BUG, Verdict.FALSE, marks=_GCC, id="multi-bug"),
        pytest.param(MULTI, MULTI_OK, Verdict.TRUE, id="multi"),
        pytest.param(MEM, MEM_BUG, Verdict.FALSE, marks=_GCC, id="memset-bug"),
        pytest.param(MEM, MEM_OK, Verdict.TRUE, id="memset"),
    ],
)
def test_bugs_are_found_and_the_fixed_programs_proven(
    tmp_path: Path, program: str, check: str, verdict: Verdict
) -> None:
    assert _verify(tmp_path, program.replace("CHECK", check)) is verdict
