"""Quantified array invariants: the bounded `Forall` of the IR, its encodings, and the candidates
`invariants.arrays` proposes for loops that fill arrays."""

from __future__ import annotations

import operator
import random

import pytest
import z3
from quokka.invariants import arrays
from quokka.invariants.report import print_result
from quokka.invariants.structure import find_loop
from quokka.invariants.verify import verify_path
from quokka.verifier import ir
from quokka.verifier.encode.smt import Translator
from quokka.verifier.errors import InputError
from quokka.verifier.exec.interp import run
from quokka.verifier.frontend import lower_source
from quokka.verifier.frontend.invariant import find_acsl_invariants, parse_invariant
from quokka.verifier.ir.builder import ProgramBuilder
from quokka.verifier.ir.printer import format_expr
from quokka.verifier.ir.typecheck import check_expr
from quokka.verifier.options import Options
from quokka.verifier.verdict.results import Verdict
from rich.console import Console

PRELUDE = """
extern int __VERIFIER_nondet_int(void);
extern void abort(void);
extern void reach_error(void);
void *malloc(unsigned long size);
void __VERIFIER_assert(int c) { if (!c) { reach_error(); } }
"""

# SV-COMP's rewrev: a heap array filled backwards, two cells a step, then every cell checked
REWREV = """
int main() {
    int SIZE = __VERIFIER_nondet_int();
    if (SIZE > 1 && SIZE < 100000) {
        int i;
        int *a = malloc(sizeof(int) * SIZE);
        int val2 = 3, val1 = 7, low = LOW;
        for (i = START; i >= -1; i--) {
            if (i >= 0) { a[i] = val1; }
            a[i + 1] = val2;
        }
        for (i = 0; i < SIZE; i++) { __VERIFIER_assert(a[i] >= low); }
    }
    return 0;
}
"""

# SV-COMP's mlceu2: the cells are 0 unless i >> SHIFT > 250, which `i < SIZE < 100000` rules out
MLCEU = """
int main() {
    int SIZE = __VERIFIER_nondet_int();
    if (SIZE > 1 && SIZE < 100000) {
        int i;
        int *a = malloc(sizeof(int) * SIZE);
        for (i = 0; i < SIZE; i++) { if (i >> SHIFT > 250) { a[i] = 1; } else { a[i] = 0; } }
        for (i = 0; i < SIZE; i++) { __VERIFIER_assert(a[i] == 0); }
    }
    return 0;
}
"""

A = ir.ArrayType(ir.INT, None)
K = ir.Var(ir.BOUND + "k", ir.INT)


def verify(tmp_path, text: str, timeout: float = 30) -> object:
    path = tmp_path / "arrays.c"
    path.write_text(PRELUDE + text)
    return verify_path(path, Options(timeout_s=timeout))


def cells_are_zero(lo: int, hi: int) -> ir.Forall:
    zero = ir.Binary("==", ir.Select(ir.Var("a", A), K, ir.INT), ir.Const(0, ir.INT), ir.INT)
    return ir.Forall(K, ir.Const(lo, ir.INT), ir.Const(hi, ir.INT), zero)


def test_a_bounded_quantifier_means_what_it_says_in_z3():
    a = z3.Store(z3.K(z3.IntSort(), z3.IntVal(0)), 1, 5)  # a[1] == 5, every other cell 0
    tr = Translator({"a": a})
    assert _valid(tr.formula(cells_are_zero(0, 1)))
    assert _valid(tr.formula(cells_are_zero(2, 9)))
    assert _valid(z3.Not(tr.formula(cells_are_zero(0, 2))))
    assert _valid(tr.formula(cells_are_zero(3, 3)))  # an empty range


def _valid(f: z3.BoolRef) -> bool:
    solver = z3.Solver()
    solver.add(z3.Not(f))
    return solver.check() == z3.unsat


def test_the_quantifier_prints_as_acsl_types_as_int_and_binds_its_variable():
    e = cells_are_zero(0, 4)
    assert format_expr(e) == "\\forall integer k; 0 <= k < 4 ==> a[k] == 0"
    assert check_expr(e, {"a": A}) == ir.INT
    assert ir.free_vars(e) == {"a"}


def test_a_quantified_invariant_in_the_table_keeps_its_brackets(tmp_path):
    result = verify(tmp_path, REWREV.replace("LOW", "2").replace("START", "SIZE - 2"))
    assert result.verdict is Verdict.TRUE, result.reason
    quantified = [inv.expr for inv in result.invariants if inv.expr.startswith("\\forall")]
    assert quantified and all("a[k]" in e for e in quantified)
    console = Console(record=True, width=200)
    print_result(result, console)
    assert quantified[0] in console.export_text()


def test_the_candidates_cover_what_a_backward_fill_has_written():
    program = lower_source(PRELUDE + REWREV.replace("LOW", "2").replace("START", "SIZE - 2"), "rewrev.c")
    fill, check = (find_loop(program, info.id) for info in program.loops)
    shown = {format_expr(e, readable=True) for e in arrays.candidates(program, fill)}
    assert "\\forall integer k; i + 2 <= k < SIZE ==> a[k] >= low" in shown
    read = {format_expr(e, readable=True) for e in arrays.candidates(program, check)}
    assert "\\forall integer k; 0 <= k < SIZE ==> a[k] >= low" in read


@pytest.mark.parametrize(
    ("program", "expected"),
    [
        (MLCEU.replace("SHIFT", "16"), Verdict.TRUE),
        (REWREV.replace("LOW", "2").replace("START", "SIZE - 2"), Verdict.TRUE),
        (REWREV.replace("LOW", "4").replace("START", "SIZE - 2"), Verdict.FALSE),  # val2 = 3 < 4
        (MLCEU.replace("SHIFT", "2"), Verdict.FALSE),  # i >> 2 > 250 from i = 1004 on
    ],
)
def test_fills_are_proven_and_their_mutants_are_refuted(tmp_path, program, expected):
    result = verify(tmp_path, program)
    assert result.verdict is expected, result.reason


def test_a_fill_that_leaves_the_last_cell_unwritten_is_not_proven(tmp_path):
    """Starting at SIZE - 3, a[SIZE - 1] is never written: its value is whatever malloc left."""
    result = verify(tmp_path, REWREV.replace("LOW", "2").replace("START", "SIZE - 3"), timeout=15)
    assert result.verdict is not Verdict.TRUE, result.reason


# ----------------------------------------------------------------------------- differential

N = 6  # the array's size; the loops run to a nondeterministic n <= N
_OPS = {">=": operator.ge, "<=": operator.le, "==": operator.eq, "!=": operator.ne}
_VALUES = {
    "c": lambda i, c: c,
    "i + c": lambda i, c: i + c,
    "2 * i": lambda i, c: 2 * i,
    "c - i": lambda i, c: c - i,
}


def _fill_program(rng: random.Random) -> tuple[str, bool]:
    """A program that fills a[0..n) (forwards or backwards) and checks every cell, and whether
    its assertion holds for every n (worked out here, by running it in Python). Most checks
    compare a cell with its own value shifted by -1, 0 or 1: right, or wrong by one."""
    value, c, op = rng.choice(sorted(_VALUES)), rng.randint(-2, 3), rng.choice(sorted(_OPS))
    stored = value.replace("c", str(c))
    if rng.random() < 0.7:
        delta = rng.randint(-1, 1)
        bound, rhs = f"({stored}) + {delta}", lambda i: _VALUES[value](i, c) + delta
    else:
        d = rng.randint(-2, 3)
        bound, rhs = f"i + {d}", lambda i: i + d
    fill = rng.choice(["for (i = 0; i < n; i++)", "for (i = n - 1; i >= 0; i--)"])
    text = f"""
int main() {{
    int a[{N}];
    int n = __VERIFIER_nondet_int();
    if (n < 0 || n > {N}) return 0;
    int i;
    {fill} {{ a[i] = {stored}; }}
    for (i = 0; i < n; i++) {{ __VERIFIER_assert(a[i] {op} {bound}); }}
    return 0;
}}
"""
    holds = all(_OPS[op](_VALUES[value](i, c), rhs(i)) for n in range(N + 1) for i in range(n))
    return text, holds


def test_no_fill_that_some_run_breaks_is_proven_and_most_correct_ones_are(tmp_path):
    rng = random.Random(7)
    verdicts = []
    for _ in range(16):
        text, holds = _fill_program(rng)
        result = verify(tmp_path, text, timeout=10)
        assert not (result.verdict is Verdict.TRUE and not holds), text
        assert not (result.verdict is Verdict.FALSE and holds), text
        verdicts.append((holds, result.verdict))
    true = sum(holds for holds, _ in verdicts)
    proven = sum(v is Verdict.TRUE for _, v in verdicts)
    assert len(verdicts) - true >= 4 and proven >= true - 1, verdicts


# ----------------------------------------------------------------------------- written by people


def _rewrev_annotated(claim: str) -> str:
    annotation = f"/*@ loop invariant \\forall integer k; {claim}; */\n        for (i = START"
    return REWREV.replace("LOW", "2").replace("for (i = START", annotation).replace("START", "SIZE - 2")


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("\\forall integer k; i + 2 <= k < SIZE ==> a[k] >= low", "i + 2 <= k < SIZE ==> a[k] >= low"),
        ("\\forall int j; 0 < j <= SIZE - 1 ==> (a[j] >= low)", "1 <= j < SIZE ==> a[j] >= low"),
    ],
)
def test_acsl_quantifiers_parse_into_the_ir(text, shown):
    program = lower_source(PRELUDE + _rewrev_annotated("0 <= k < 1 ==> 1"), "rewrev.c")
    e = parse_invariant(text, program, program.loops[0].id)
    assert isinstance(e, ir.Forall)
    assert format_expr(e, readable=True).split("; ", 1)[1] == shown


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("\\forall integer k; i <= k ==> a[k] > 0", "the range of a quantifier is written lo <= k < hi"),
        ("\\forall integer k; i <= k < SIZE a[k] > 0", "needs '==>' after its range"),
        ("\\forall float k; 0 <= k < 3 ==> a[k] > 0", "needs an integer type, not float"),
    ],
)
def test_malformed_quantifiers_are_located_input_errors(text, message):
    program = lower_source(PRELUDE + _rewrev_annotated("0 <= k < 1 ==> 1"), "rewrev.c")
    with pytest.raises(InputError, match=message):
        parse_invariant(text, program, program.loops[0].id)


def test_a_quantified_annotation_is_one_invariant_up_to_its_last_semicolon():
    text = "/*@ loop invariant \\forall integer k; 0 <= k < i ==> a[k] == 0;\n    loop invariant i >= 0; */"
    assert find_acsl_invariants(text) == [(2, "\\forall integer k; 0 <= k < i ==> a[k] == 0"), (2, "i >= 0")]


@pytest.mark.parametrize(
    ("claim", "status"),
    [
        ("i + 2 <= k < SIZE ==> a[k] >= low", "valid"),
        ("i + 1 <= k < SIZE ==> a[k] >= low", "refuted"),  # a[i + 1] is not written yet on entry
        ("0 <= k < SIZE ==> a[k] >= low", "refuted"),
    ],
)
def test_quantified_annotations_are_checked_and_refuted_by_a_replayed_run(tmp_path, claim, status):
    result = verify(tmp_path, _rewrev_annotated(claim), timeout=20)
    assert [c.status for c in result.claims] == [status], result.claims
    if status == "refuted":
        assert "replayed" in result.claims[0].detail()


def test_the_interpreter_evaluates_a_quantifier_over_its_range():
    for hi, expected in ((2, "exit"), (3, "error")):  # a = {0, 0, 5, 0}: a[2] is not 0
        b = ProgramBuilder()
        a = b.var("a", ir.ArrayType(ir.INT, 4))
        b.assign(a, ir.Store(a, ir.Const(2, ir.INT), ir.Const(5, ir.INT), a.type))
        b.check(ir.Forall(K, ir.Const(0, ir.INT), ir.Const(hi, ir.INT), _zero(ir.Select(a, K, ir.INT))))
        assert run(b.build(), ()).outcome == expected


def _zero(e: ir.Expr) -> ir.Expr:
    return ir.Binary("==", e, ir.Const(0, ir.INT), ir.INT)


ZERO_AFTER_A_LOOP = """
int main() {
    int n = __VERIFIER_nondet_int(), s = 0;
    for (int j = 0; j < n; j++) { s++; }
    int a[5000] = {0};  /* larger than the frontend stores cell by cell: an all-zero temporary */
    for (int i = 0; i < 5000; i++) { __VERIFIER_assert(a[i] == 0); }
    return s;
}
"""


def test_an_array_that_nothing_writes_is_still_all_zero_after_a_loop(tmp_path):
    result = verify(tmp_path, ZERO_AFTER_A_LOOP)
    assert result.verdict is Verdict.TRUE, result.reason
    assert any(inv.source == "arrays" and "zero" in inv.expr for inv in result.invariants)
