"""The dynamic proposer end to end, on programs built with the builder."""

import time

import pytest
from quokka.invariants.dynamic import DynamicConfig, DynamicProposer, infer
from quokka.invariants.protocol import ProposalContext, loop_contexts
from quokka.invariants.sampling import SamplingConfig, collect
from quokka.verifier.encode.seeds import SeedSource
from quokka.verifier.engines.base import Budget
from quokka.verifier.engines.houdini import houdini
from quokka.verifier.ir import Assert, Assign, Program, Return, Scope, int_types
from quokka.verifier.ir.builder import ProgramBuilder, add, and_, cast, eq, ge, le, lt, mul, not_, num
from quokka.verifier.ir.typecheck import check_program
from shared_data import SHARED

T = int_types("LP64")
LL, SHORT, USHORT = T["long long"], T["short"], T["unsigned short"]


def cohencu(bound: int | None = None) -> Program:
    """cohencu; with `bound`, `0 <= a <= bound` (SV-COMP's `_valuebound` variants)."""
    b = ProgramBuilder("cohencu.c")
    a = b.var("a", SHORT)
    n, x, y, z = (b.var(v, LL) for v in "nxyz")
    b.havoc(a)
    if bound is not None:
        b.assume(and_(ge(a, num(0, SHORT)), le(a, num(bound, SHORT))))
    b.assign(n, num(0, LL))
    b.assign(x, num(0, LL))
    b.assign(y, num(1, LL))
    b.assign(z, num(6, LL))
    with b.loop():
        b.if_break(not_(le(n, cast(a, LL))))
        b.assign(n, add(n, num(1, LL)))
        b.assign(x, add(x, y))
        b.assign(y, add(y, z))
        b.assign(z, add(z, num(6, LL)))
    return b.build()


def two_var() -> Program:
    b = ProgramBuilder("twovar.c")
    x, y, n = b.var("x"), b.var("y"), b.var("n")
    b.havoc(n)
    b.assume(ge(n, num(0)))
    with b.loop():
        b.if_break(ge(x, n))
        b.assign(x, add(x, num(1)))
        b.assign(y, add(y, num(2)))
    return b.build()


def narrow_precondition() -> Program:
    """Random inputs almost never pass: a in [50, 60] and b >= a + 2000 (and not huge)."""
    b = ProgramBuilder("pre.c")
    a, bb, i, s = b.var("a"), b.var("b"), b.var("i"), b.var("s")
    b.havoc(a)
    b.havoc(bb)
    b.assume(and_(ge(a, num(50)), le(a, num(60))))
    b.assume(and_(ge(bb, add(a, num(2000))), le(bb, num(5000))))
    with b.loop():
        b.if_break(not_(lt(i, a)))
        b.assign(i, add(i, num(1)))
        b.assign(s, add(s, bb))
    return b.build()


def early_return() -> Program:
    """`if (!(a > 0)) return 0;` before the loop, as inlined code has it."""
    b = ProgramBuilder("ret.c")
    a, i = b.var("a"), b.var("i")
    b.havoc(a)
    with b.block() as guard:
        b.if_(not_(ge(a, num(700))), (Return(),))
    with b.block() as rest, b.loop():
        b.if_break(ge(i, a))
        b.assign(i, add(i, num(3)))
    b.emit(Scope("main2", tuple(guard) + tuple(rest)))
    return b.build()


def ps4() -> Program:
    """`while (c < k)` where k may be negative: `c <= k` holds only once the loop has run."""
    b = ProgramBuilder("ps4.c")
    k = b.var("k", SHORT)
    c, y, x = (b.var(v, LL) for v in "cyx")
    b.havoc(k)
    with b.loop():
        b.if_break(not_(lt(c, cast(k, LL))))
        b.assign(c, add(c, num(1, LL)))
        b.assign(y, add(y, num(1, LL)))
        b.assign(x, add(mul(mul(y, y), y), x))
    return b.build()


def _propose(program, budget=20.0, seed=0, ctis=None, proposer=None):
    proposer = proposer or DynamicProposer()
    context = ProposalContext(program, None, loop_contexts(program), ctis or {}, budget, seed)
    return proposer, proposer.propose(context)


def _texts(cands):
    return {c.text for c in cands}


def _proposals(program):
    """The candidates for `program`, and their texts."""
    _, cands = _propose(program)
    return cands, _texts(cands)


def _well_typed(program, cands):
    for c in cands:
        check_program(Program(program.file, program.data_model, program.variables, (Assert(c.expr),), ()))


def test_cohencu_polynomial_invariants_within_two_seconds():
    program = cohencu()
    start = time.monotonic()
    _, cands = _propose(program)
    elapsed = time.monotonic() - start
    texts = _texts(cands)
    assert {"z == 6*n + 6", "y == 3*n*n + 3*n + 1", "x == n*n*n"} <= texts
    assert elapsed < 4.0  # about 0.5 s on an idle machine
    assert all(c.proposer == "dynamic" and c.loop_id == program.loops[0].id for c in cands)
    _well_typed(program, cands)


def test_linear_two_variable_loop():
    program = two_var()
    cands, texts = _proposals(program)
    assert {"y == 2*x", "x <= n", "x >= 0"} <= texts  # x <= n from the exit test `x >= n`
    _well_typed(program, cands)


def test_narrow_precondition_is_reached_through_z3_seeds():
    program = narrow_precondition()
    loop_id = program.loops[0].id
    unseeded = collect(program, 0, time.monotonic() + 5, None, SamplingConfig(max_runs=300))
    assert len(unseeded.states.get(loop_id, ())) < 20
    proposer, cands = _propose(program)
    assert proposer.last_samples is not None and proposer.last_samples.seeded_runs > 0
    assert len(proposer.last_samples.states[loop_id]) > 200
    texts = _texts(cands)
    assert "s == i*b" in texts or "s == b*i" in texts
    assert "i <= a" in texts
    assert "a >= 50" in texts and "a <= 60" in texts
    _well_typed(program, cands)


def test_early_return_precondition():
    program = early_return()
    _, texts = _proposals(program)
    assert {"a >= 700", "i%3 == 0", "i <= a + 2"} <= texts


def test_exit_test_relation_unless_the_loop_has_not_run():
    program = ps4()
    cands, texts = _proposals(program)
    assert "y == c" in texts
    assert "4*x == c*c*c*c + 2*c*c*c + c*c" in texts
    assert "c <= k || c == 0" in texts
    assert not any(t.startswith("c <= (long long)k") and "||" not in t for t in texts)  # not an invariant
    _well_typed(program, cands)


def test_seed_source_models_satisfy_the_path_condition():
    program = narrow_precondition()
    import random

    source = SeedSource(program, random.Random(0), time.monotonic() + 5)
    loop_id = program.loops[0].id
    seeds = [source.next(loop_id) for _ in range(10)]
    assert all(s is not None for s in seeds)
    for a, b in seeds:
        assert 50 <= a <= 60 and a + 2000 <= b <= 5000
    # the extremes of each input come early; the rest are distinct
    assert {50, 60} <= {a for a, _ in seeds[:5]} and 5000 in {b for _, b in seeds[:5]}
    assert len(set(seeds[5:])) == 5 and not set(seeds[5:]) & set(seeds[:5])


def test_ctis_join_the_states_under_c_names():
    program = two_var()
    loop_id = program.loops[0].id
    proposer = DynamicProposer()
    _, first = _propose(program, proposer=proposer)
    assert "y == 2*x" in _texts(first)
    # a state (C names) where y != 2*x, and one that lacks a variable (ignored)
    _, second = _propose(program, ctis={loop_id: ({"x": 3, "y": 7, "n": 9}, {"x": 1})}, proposer=proposer)
    assert "y == 2*x" not in _texts(second)
    assert "x <= n" in _texts(second)


def test_samples_are_reused_across_rounds_and_deterministic():
    program = cohencu()
    proposer = DynamicProposer()
    _, a = _propose(program, proposer=proposer)
    samples = proposer.last_samples
    _, b = _propose(program, proposer=proposer, seed=1)
    assert proposer.last_samples is samples
    assert [c.text for c in a] == [c.text for c in b]
    _, c = _propose(program, seed=0)
    assert [x.text for x in a] == [x.text for x in c]


def test_infer_on_hand_made_states():
    program = two_var()
    loop = loop_contexts(program)[0]
    states = [{"x": k, "y": 2 * k, "n": n} for n in range(1, 30) for k in range(n + 1)]
    cands = infer(program, loop, states)
    assert "y == 2*x" in _texts(cands)
    # no state seen: only what the program text says (here the assumption `n >= 0` before the loop)
    assert _texts(infer(program, loop, [])) == {"n >= 0"}


def test_tiny_budget_still_answers():
    program = cohencu()
    start = time.monotonic()
    _, cands = _propose(program, budget=0.01)
    assert time.monotonic() - start < 5.0  # the proposer's floor is 0.05 s, not the 20 s default
    assert {c.loop_id for c in cands} == {program.loops[0].id}
    assert {c.proposer for c in cands} == {"dynamic"} and not any(c.rejected for c in cands)
    assert {"n >= 0", "z == 6*n + 6"} <= _texts(cands)  # a floor of samples: about 2,000 states
    _well_typed(program, cands)


SHARED = SHARED  # ../shared beside the project
COHENCU_C = SHARED / "benchmarks" / "svcomp-nla-dev" / "cohencu-ll.c"


@pytest.mark.skipif(not COHENCU_C.exists(), reason="no benchmarks")
def test_svcomp_cohencu_through_the_frontend():
    from quokka.verifier.frontend import lower

    program = lower(COHENCU_C, "ILP32")
    _, texts = _proposals(program)
    assert {"z == 6*n + 6", "y == 3*n*n + 3*n + 1", "x == n*n*n"} <= texts
    # the assertions at the loop head, read through the inlined __VERIFIER_assert
    assert "z*z == 12*y + 6*z - 12" in texts


def test_config_limits_time():
    config = DynamicConfig(max_time_s=0.3)
    start = time.monotonic()
    _propose(narrow_precondition(), proposer=DynamicProposer(config))
    assert time.monotonic() - start < 3.0


def test_small_bounded_inputs_give_the_set_of_reachable_states():
    program = cohencu(bound=3)
    _, cands = _propose(program)
    (states,) = [c for c in cands if c.text.count("||") >= 5]
    reachable = {(a, n) for a in range(4) for n in range(a + 2)}
    assert states.text.count("||") == len(reachable) - 1
    assert houdini(program, {program.loops[0].id: [states.expr]}, Budget.of(20)).kept[program.loops[0].id]


def test_no_state_set_when_the_inputs_are_unbounded():
    _, cands = _propose(cohencu())
    assert not [c for c in cands if c.text.count("||") >= 5]


def test_small_bounded_inputs_are_covered_by_the_box():
    """Two inputs in [0, 12]: random draws rarely hit all 169 pairs; the box runs every one."""
    b = ProgramBuilder("box.c")
    u, v, s = b.var("u"), b.var("v"), b.var("s")
    b.havoc(u)
    b.havoc(v)
    b.assume(and_(and_(ge(u, num(0)), le(u, num(12))), and_(ge(v, num(0)), le(v, num(12)))))
    with b.loop():
        b.if_break(ge(s, num(1)))
        b.assign(s, add(s, num(1)))
    samples = collect(b.build(), 0, time.monotonic() + 20)
    assert {(st["u"], st["v"]) for st in samples.states[b.build().loops[0].id]} == {
        (x, y) for x in range(13) for y in range(13)}
    assert samples.exhaustive
    assert not collect(cohencu(), 0, time.monotonic() + 5).exhaustive


def test_a_counter_with_few_values_splits_the_states_into_cases():
    """`c` counts to 2; at the head `y` is 0, then `x`, then `x + 1`: true case by case only."""
    b = ProgramBuilder("cases.c")
    x, y, c = b.var("x"), b.var("y"), b.var("c")
    b.havoc(x)
    with b.loop():
        b.if_break(ge(c, num(2)))
        b.assign(c, add(c, num(1)))
        b.if_(eq(c, num(1)), (Assign("y", x),), (Assign("y", add(y, num(1))),))
    program = b.build()
    cands, texts = _proposals(program)
    assert {"c != 0 || y == 0", "c != 1 || y == x", "c != 2 || y == x + 1"} <= texts
    _well_typed(program, cands)


def test_a_strict_exit_bound_seen_on_a_prefix_also_comes_non_strict(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """`while (x < 1000000) x += 2`: the run's prefix shows `x < 1000000`, which fails where the
    loop is left; `x <= 1000000` (with `x % 2 == 0`) is the invariant that proves `x == 1000000`."""
    from quokka.invariants.verify import verify_path
    from quokka.verifier.options import Options
    from quokka.verifier.verdict.results import Verdict

    path = tmp_path / "even.c"
    path.write_text(
        "extern void reach_error(void);\n"
        "int main() { int x = 0; while (x < 1000000) x += 2; if (x != 1000000) reach_error(); return 0; }\n"
    )
    result = verify_path(path, Options(timeout_s=20, engines=("houdini",)))
    assert result.verdict is Verdict.TRUE, result.reason
    assert any(inv.expr == "x <= 1000000" for inv in result.invariants)


def test_a_program_without_inputs_is_run_once():
    # every run of it is the same run: sampling stops after the first, however long the loop
    b = ProgramBuilder("det.c")
    x = b.var("x")
    b.assign(x, num(0))
    with b.loop():
        b.if_break(ge(x, num(10**8)))
        b.assign(x, add(x, num(1)))
    b.check(eq(x, num(10**8)))
    started = time.monotonic()
    samples = collect(b.build(), 0, time.monotonic() + 20)
    assert samples.run_count == 1 and samples.outcomes == {"limit": 1}
    assert time.monotonic() - started < 10
    with_input = ProgramBuilder("input.c")
    n = with_input.var("n")
    with_input.havoc(n)
    with with_input.loop():
        with_input.if_break(ge(n, num(3)))
        with_input.assign(n, add(n, num(1)))
    assert collect(with_input.build(), 0, time.monotonic() + 5).run_count > 1


def test_a_loop_no_run_reaches_still_gets_what_the_program_text_says():
    # the first loop runs 10**8 times: no sampled run gets to the second, whose entry conditions
    # (the assumption, the first loop's exit) are still proposed
    b = ProgramBuilder("late.c")
    x, n = b.var("x"), b.var("n")
    b.assign(x, num(0))
    with b.loop():
        b.if_break(ge(x, num(10**8)))
        b.assign(x, add(x, num(1)))
    b.havoc(n)
    b.assume(lt(n, num(100)))
    with b.loop() as late:
        b.if_break(le(n, num(0)))
        b.check(lt(n, num(100)))
        b.assign(n, add(n, num(-1)))
    _, candidates = _propose(b.build(), budget=4)
    texts = {c.text for c in candidates if c.loop_id == late}
    assert "n < 100" in texts
