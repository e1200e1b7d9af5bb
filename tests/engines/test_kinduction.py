"""k-induction (`kinduction`): proofs that need k > 1 or an auxiliary invariant, the re-check of
the certificate gate, and mutants that must never be proved."""

from __future__ import annotations

import csv
import itertools
import random
from pathlib import Path

import pytest
from quokka.invariants.protocol import Candidate, ProposalContext
from quokka.invariants.quokka_loop import QuokkaLoop
from quokka.invariants.verify import verify_program
from quokka.verifier import ir
from quokka.verifier.engines import inductive, kinduction
from quokka.verifier.engines.base import Budget, EngineResult, Status
from quokka.verifier.frontend import lower
from quokka.verifier.ir.builder import ProgramBuilder, add, binop, eq, ge, lt, ne, num
from quokka.verifier.options import Options
from quokka.verifier.verdict.checks import certificate_result
from quokka.verifier.verdict.results import Verdict
from shared_data import BENCHMARKS

BENCH = BENCHMARKS


def _lagging(init_y: int = 0, steps: int | None = None) -> ir.Program:
    """`while (*) { assert(x == 0); x = y; y = 0; }` from x = 0, y = `init_y`: 2-inductive,
    not 1-inductive (from x == 0 alone, y is arbitrary). `steps` bounds the loop by a counter."""
    b = ProgramBuilder("lagging.c")
    x, y, go, i = b.var("x"), b.var("y"), b.var("go"), b.var("i")
    b.assign(x, num(0))
    b.assign(y, num(init_y))
    b.assign(i, num(0))
    with b.loop():
        b.havoc(go)
        b.if_break(eq(go, num(0)))
        if steps is not None:
            b.if_break(ge(i, num(steps)))
            b.assign(i, add(i, num(1)))
        b.check(eq(x, num(0)))
        b.assign(x, y)
        b.assign(y, num(0))
    return b.build()


def _even_lag(bad: int = 7, step: int = 2) -> ir.Program:
    """x counts by `step` from 0; z lags x by one iteration, w by two; `assert(w != bad)`.
    With `x % 2 == 0` known it is 2-inductive; without it, k-inductive for no k."""
    b = ProgramBuilder("even_lag.c")
    x, z, w, go = b.var("x"), b.var("z"), b.var("w"), b.var("go")
    for v in (x, z, w):
        b.assign(v, num(0))
    with b.loop():
        b.havoc(go)
        b.if_break(eq(go, num(0)))
        b.check(ne(w, num(bad)))
        b.assign(w, z)
        b.assign(z, x)
        b.assign(x, add(x, num(step)))
    return b.build()


def _even(program: ir.Program) -> dict[str, ir.Expr]:
    x = next(v for v in program.variables if v.c_name == "x")
    parity = binop("%", ir.Var(x.name, x.type), num(2))
    return {program.loops[0].id: eq(parity, num(0))}


def _counter(bound: int, claimed: int) -> ir.Program:
    """`i = 0; while (i < bound) i++; assert(i == claimed);`"""
    b = ProgramBuilder("counter.c")
    i = b.var("i")
    b.assign(i, num(0))
    with b.loop():
        b.if_break(ge(i, num(bound)))
        b.assign(i, add(i, num(1)))
    b.check(eq(i, num(claimed)))
    return b.build()


def _kind(program: ir.Program, aux: dict[str, ir.Expr] | None = None, **kw: object) -> EngineResult:
    return kinduction.check_program(program, Budget.of(30.0), aux, **kw)  # type: ignore[arg-type]


def test_two_inductive_without_invariants() -> None:
    program = _lagging()
    assert not inductive.prove_with(program, {}, Budget.of(10.0)).safe  # not 1-inductive
    result = _kind(program)
    assert result.safe, result.reason
    assert result.stats["k_induction"] == 2
    checked, why = certificate_result(program, result, Budget.of(20.0))
    assert checked is not None, why
    assert "fresh solvers" in why


def test_auxiliary_invariant_makes_it_provable() -> None:
    program = _even_lag()
    alone = _kind(program, max_k=8)
    assert not alone.safe and "not 8-inductive" in alone.reason
    helped = _kind(program, _even(program))
    assert helped.safe, helped.reason
    assert helped.stats["k_induction"] == 2
    assert helped.invariants == _even(program)
    assert certificate_result(program, helped, Budget.of(20.0))[0] is not None


def test_auxiliary_invariant_that_is_not_inductive_is_refused() -> None:
    program = _even_lag(step=3)  # x % 2 == 0 fails after one iteration
    result = _kind(program, _even(program))
    assert not result.safe
    assert "not inductive" in result.reason


@pytest.mark.parametrize(
    "program",
    [
        _lagging(init_y=1),  # the error at the second head
        _lagging(init_y=1, steps=5),
        _even_lag(bad=8),  # w reaches 8 (wrong bound)
        _counter(10, 11),  # off by one
        _counter(10, 9),
    ],
)
def test_false_programs_are_never_proved(program: ir.Program) -> None:
    result = _kind(program, max_k=24)
    assert not result.safe, result.reason


def test_even_with_aux_mutants_are_never_proved() -> None:
    for bad in (0, 8, 16):  # reachable values of w: the assertion fails
        program = _even_lag(bad=bad)
        assert not _kind(program, _even(program), max_k=16).safe


def test_forged_bound_is_rejected_by_the_gate() -> None:
    program = _lagging()
    forged = EngineResult(kinduction.ENGINE, Status.SAFE, "forged", {}, stats={"k_induction": 1})
    checked, why = certificate_result(program, forged, Budget.of(20.0))
    assert checked is None
    assert "not confirmed" in why


def test_counter_exit_value_is_proved() -> None:
    result = _kind(_counter(1000, 1000))
    assert result.safe, result.reason


def test_dump_and_profile(tmp_path: Path) -> None:
    budget = Budget.of(30.0)
    result = kinduction.check_program(_lagging(), budget, dump_dir=tmp_path)
    assert result.safe
    assert (tmp_path / "step2.smt2").read_text().endswith("(check-sat)\n")
    assert '"status": "safe"' in (tmp_path / "summary.json").read_text()
    rows = {t.what: t for t in budget.recorder.snapshot(kinduction.ENGINE)}
    assert rows["kind step query"].count == 2  # the base case folds to constants: no query
    failing = Budget.of(30.0)
    assert not kinduction.check_program(_lagging(init_y=1), failing).safe
    base = {t.what: t for t in failing.recorder.snapshot(kinduction.ENGINE)}["kind base query"]
    assert dict(base.answers) == {"sat": 1}


def test_portfolio_verdict_says_how_it_was_proved(tmp_path: Path) -> None:
    options = Options(engines=("kind",), timeout_s=30.0, proposers=(), dump_dir=tmp_path)
    result = verify_program(_lagging(), options)
    assert result.verdict is Verdict.TRUE, result.reason
    assert result.decided_by == kinduction.ENGINE
    assert "fresh solvers" in str(result.extra["proof"])
    assert "skipped: a k-inductive proof" in str(result.extra["double_check"])  # tests double-check
    assert (tmp_path / "kinduction" / "step2.smt2").exists()
    assert {(t.who, t.what) for t in result.profile} >= {("kind", "kind step query")}


def test_sequential_loops() -> None:
    """Two loops in sequence: the first counts to 10, the second lags."""
    b = ProgramBuilder("seq.c")
    i, x, y, go = b.var("i"), b.var("x"), b.var("y"), b.var("go")
    b.assign(i, num(0))
    with b.loop():
        b.if_break(ge(i, num(10)))
        b.assign(i, add(i, num(1)))
    b.assign(x, num(0))
    b.assign(y, num(0))
    with b.loop():
        b.havoc(go)
        b.if_break(eq(go, num(0)))
        b.check(eq(x, num(0)))
        b.assign(x, y)
        b.assign(y, num(0))
    b.check(lt(i, num(11)))
    program = b.build()
    # i > 10 at the second head fails the property (the exit is an input away); at the first, it
    # has no predecessor: 2-inductive without help
    assert _kind(program).stats["k_induction"] == 2
    bounded = {loop.id: ir.Binary("<=", i, num(10), ir.INT) for loop in program.loops}
    result = _kind(program, bounded)
    assert result.safe, result.reason
    assert result.stats["k_induction"] == 2
    assert certificate_result(program, result, Budget.of(20.0))[0] is not None


def _sample(set_name: str, count: int) -> list[tuple[Path, bool]]:
    with (BENCH / set_name / "tasks.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    return [(BENCH / set_name / r["file"], r["expected_verdict"] == "true") for r in rows[:count]]


@pytest.mark.slow
@pytest.mark.parametrize("set_name", ["hardtail-dev", "quokka-dev"])
def test_agrees_with_expected_verdicts(set_name: str) -> None:
    if not (BENCH / set_name / "tasks.csv").exists():
        pytest.skip(f"no {set_name}")
    proved = 0
    for path, expected in _sample(set_name, 12):
        program = lower(path, "ILP32", "unreach-call", "nondet")
        result = kinduction.check_program(program, Budget.of(3.0))
        if result.safe:
            assert expected, path
            assert certificate_result(program, result, Budget.of(10.0))[0] is not None, path
            proved += 1
    assert proved >= (2 if set_name == "quokka-dev" else 0)  # benchmark25, bh2017-ex-add_1/2 today


class _Parity:
    """Proposes `x % 2 == 0` and nothing else: Houdini keeps it, and it proves nothing alone."""

    name = "parity"

    def propose(self, context: ProposalContext) -> list[Candidate]:
        return [Candidate(loop, expr, "x % 2 == 0", self.name)
                for loop, expr in _even(context.program).items()]  # fmt: skip


def test_quokka_loop_strengthens_k_induction_with_houdini(tmp_path: Path) -> None:
    program = _even_lag()
    with_kind = Options(engines=("houdini", "kind"), dump_dir=tmp_path)
    result = QuokkaLoop([_Parity()], with_kind, None).run(program, Budget.of(30.0))
    assert result.safe, result.reason
    assert result.stats["k_induction"] == 2
    assert (tmp_path / "kinduction-houdini" / "summary.json").exists()
    without = QuokkaLoop([_Parity()], Options(engines=("houdini",)), None).run(program, Budget.of(30.0))
    assert not without.safe


def _chain(inits: list[int], last: int, bad: int) -> ir.Program:
    """`while (*) { assert(x1 != bad); x1 = x2; ...; xn = last; }` from x_i = inits[i]: x1 takes
    the values inits[0], inits[1], ..., then `last` forever (n-inductive, no fewer)."""
    b = ProgramBuilder("chain.c")
    xs = [b.var(f"x{i}") for i in range(len(inits))]
    go = b.var("go")
    for x, v in zip(xs, inits, strict=True):
        b.assign(x, num(v))
    with b.loop():
        b.havoc(go)
        b.if_break(eq(go, num(0)))
        b.check(ne(xs[0], num(bad)))
        for x, nxt in itertools.pairwise(xs):
            b.assign(x, nxt)
        b.assign(xs[-1], num(last))
    return b.build()


@pytest.mark.parametrize("seed", range(12))
def test_generated_chains_agree_with_their_runs(seed: int) -> None:
    """The truth of a chain is what its runs show: `bad` is reached iff x1 ever holds it."""
    rng = random.Random(seed)
    inits = [rng.randint(0, 4) for _ in range(rng.randint(1, 4))]
    last, bad = rng.randint(0, 4), rng.randint(0, 4)
    program = _chain(inits, last, bad)
    reachable = bad in inits or bad == last
    result = _kind(program, max_k=8)
    if reachable:
        assert not result.safe, (inits, last, bad)
        assert "base case fails" in result.reason
    else:
        assert result.safe, (inits, last, bad, result.reason)
        assert result.stats["k_induction"] <= len(inits)
        assert certificate_result(program, result, Budget.of(20.0))[0] is not None


def _nested(init_y: int) -> ir.Program:
    """`while (*) { y = init_y; while (*) { assert(x == 0); x = y; y = 0; } }` from x = y = 0."""
    b = ProgramBuilder("nested.c")
    x, y, go = b.var("x"), b.var("y"), b.var("go")
    b.assign(x, num(0))
    b.assign(y, num(0))
    with b.loop():
        b.havoc(go)
        b.if_break(eq(go, num(0)))
        b.assign(y, num(init_y))
        with b.loop():
            b.havoc(go)
            b.if_break(eq(go, num(0)))
            b.check(eq(x, num(0)))
            b.assign(x, y)
            b.assign(y, num(0))
    return b.build()


def test_nested_loops() -> None:
    program = _nested(0)
    result = _kind(program)
    assert result.safe, result.reason
    assert certificate_result(program, result, Budget.of(20.0))[0] is not None
    assert not _kind(_nested(1), max_k=16).safe  # the inner loop's second iteration fails
