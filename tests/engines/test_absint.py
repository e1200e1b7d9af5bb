"""Abstract interpretation with polyhedra: known heads, widening, nesting, agreement with the
interpreter, and proposals that let Houdini prove (never a wrong assertion)."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

from quokka.invariants.absint import AbsintProposer
from quokka.invariants.protocol import ProposalContext, loop_contexts
from quokka.verifier.engines.absint import Linear, loop_heads
from quokka.verifier.engines.base import Budget, Status
from quokka.verifier.engines.houdini import houdini
from quokka.verifier.exec.interp import Runner
from quokka.verifier.frontend import lower_source
from quokka.verifier.ir import INT, UINT, Expr, IntType, Program
from quokka.verifier.ir.builder import ProgramBuilder, add, cast, eq, ge, le, lt, mul, ne, num, sub

SCHAR = IntType("signed char", 8, True)


def _holds(constraints: tuple[Linear, ...], state: dict[str, int]) -> bool:
    for coeffs, op, bound in constraints:
        value = sum(c * state[v] for v, c in coeffs.items())
        if not {"==": value == bound, "<=": value <= bound, ">=": value >= bound}[op]:
            return False
    return True


def _countdown(final: int) -> Program:
    """`x = 0; y = 10; while (x < 10) { x++; y--; } assert(y == final)`."""
    b = ProgramBuilder()
    x, y = b.var("x"), b.var("y")
    b.assign(x, num(0))
    b.assign(y, num(10))
    with b.loop("L"):
        b.if_break(ge(x, num(10)))
        b.assign(x, add(x, num(1)))
        b.assign(y, sub(y, num(1)))
    b.check(eq(y, num(final)))
    return b.build()


def test_the_head_is_the_known_polyhedron() -> None:
    """At the head: exactly `x + y == 10 && 0 <= x <= 10` (checked point by point)."""
    heads = loop_heads(_countdown(0))
    assert heads.complete
    head = heads.constraints["L"]
    for x, y in itertools.product(range(-3, 14), repeat=2):
        assert _holds(head, {"x": x, "y": y}) == (x + y == 10 and 0 <= x <= 10), (x, y)


def _nondet_loop(bounded: bool) -> Program:
    """`x = 0; while (nondet) { if (x < 100) x++; }` (or `x++` always, unbounded)."""
    b = ProgramBuilder()
    x, c = b.var("x"), b.var("c")
    b.assign(x, num(0))
    with b.loop("L"):
        b.havoc(c)
        b.if_break(eq(c, num(0)))
        with b.block() as step:
            b.assign(x, add(x, num(1)))
        if bounded:
            b.if_(lt(x, num(100)), tuple(step))
        else:
            b.emit(step[0])
    return b.build()


def test_widening_terminates_and_thresholds_keep_the_bound() -> None:
    unbounded = loop_heads(_nondet_loop(False)).constraints["L"]
    assert _holds(unbounded, {"x": 0, "c": 0}) and _holds(unbounded, {"x": 2**31 - 1, "c": 5})
    assert not _holds(unbounded, {"x": -1, "c": 0})
    bounded = loop_heads(_nondet_loop(True)).constraints["L"]
    assert _holds(bounded, {"x": 100, "c": 0}) and not _holds(bounded, {"x": 101, "c": 0})
    assert not _holds(bounded, {"x": -1, "c": 0})


def test_nested_loops() -> None:
    """`for (i = 0; i < 10; i++) for (j = 0; j < i; j++) s++;`: `0 <= j <= i <= 9` inside."""
    b = ProgramBuilder()
    i, j, s = b.var("i"), b.var("j"), b.var("s")
    b.assign(i, num(0))
    b.assign(s, num(0))
    with b.loop("outer"):
        b.if_break(ge(i, num(10)))
        b.assign(j, num(0))
        with b.loop("inner"):
            b.if_break(ge(j, i))
            b.assign(j, add(j, num(1)))
            b.assign(s, add(s, num(1)))
        b.assign(i, add(i, num(1)))
    program = b.build()
    heads = loop_heads(program, scopes={"inner": ["i", "j"], "outer": ["i"]}).constraints
    for iv, jv in itertools.product(range(-2, 13), repeat=2):
        assert _holds(heads["inner"], {"i": iv, "j": jv}) == (0 <= jv <= iv <= 9), (iv, jv)
        assert _holds(heads["outer"], {"i": iv}) == (0 <= iv <= 10), iv
    whole = loop_heads(program).constraints["inner"]  # s counts the inner iterations: s >= j
    assert _holds(whole, {"i": 3, "j": 2, "s": 5}) and not _holds(whole, {"i": 3, "j": 2, "s": 1})


def _random_program(rng: random.Random) -> Program:
    """A loop of affine, nonlinear and wrapping (unsigned) updates under nondet branches or
    branches on `x` (which partition the head)."""
    b = ProgramBuilder()
    x, y, c = b.var("x"), b.var("y"), b.var("c")
    u = b.var("u", UINT)
    b.assign(x, num(rng.randint(-5, 5)))
    b.assign(y, num(rng.randint(-5, 5)))
    b.assign(u, num(rng.randint(0, 3), UINT))
    with b.loop("L"):
        b.if_break(ge(x, num(rng.randint(5, 40))))
        b.havoc(c)
        with b.block() as then:
            b.assign(y, add(y, mul(num(rng.randint(-2, 2)), x)))
            b.assign(u, sub(u, num(rng.randint(1, 3), UINT)))
        with b.block() as orelse:
            b.assign(y, mul(y, x) if rng.random() < 0.3 else sub(y, num(1)))
            b.assign(u, add(u, num(1, UINT)))
        cond = ne(c, num(0)) if rng.random() < 0.5 else lt(x, num(rng.randint(0, 20)))
        b.if_(cond, tuple(then), tuple(orelse))
        b.assign(x, add(x, num(rng.randint(1, 3))))
    b.check(le(y, num(1000)))
    return b.build()


def test_every_state_the_interpreter_reaches_is_in_the_polyhedron() -> None:
    """Soundness against execution: random programs with wrap-around and nonlinear updates."""
    rng = random.Random(35)
    seen = split = 0
    for _ in range(30):
        program = _random_program(rng)
        heads = loop_heads(program)
        assert heads.complete
        run = Runner(program)
        for _ in range(5):
            execution = run.run(tuple(rng.randint(-1, 1) for _ in range(60)), max_steps=10_000)
            for state in execution.loop_heads:
                values = dict(state.values)
                assert _holds(heads.constraints[state.loop_id], values), state
                parts = heads.parts.get(state.loop_id, ())
                assert not parts or any(_holds(p.guard + p.constraints, values) for p in parts), state
                seen += 1
                split += bool(parts)
    assert seen > 100 and split > 50


def _proved(program: Program) -> bool:
    context = ProposalContext(program, None, loop_contexts(program))
    pool: dict[str, list[Expr]] = {}
    for c in AbsintProposer().propose(context):
        pool.setdefault(c.loop_id, []).append(c.expr)
    return houdini(program, pool, Budget.of(30)).result.status is Status.SAFE


def test_the_proposal_lets_houdini_prove_and_a_mutant_is_never_proved() -> None:
    assert _proved(_countdown(0))
    assert not _proved(_countdown(1))
    assert not _proved(_countdown(-1))


def test_unsigned_wrap_around_is_not_taken_for_arithmetic() -> None:
    """`u = 0; while (nondet) u = u - 1;` wraps to UINT_MAX: no `u <= 0` at the head."""
    b = ProgramBuilder()
    u, c = b.var("u", UINT), b.var("c")
    b.assign(u, num(0, UINT))
    with b.loop("L"):
        b.havoc(c)
        b.if_break(eq(c, num(0)))
        b.assign(u, sub(u, num(1, UINT)))
    b.check(eq(u, num(0, UINT)))
    program = b.build()
    assert _holds(loop_heads(program).constraints["L"], {"u": 2**32 - 1, "c": 1})
    assert not _proved(program)


def test_dump_dir_has_the_heads(tmp_path: Path) -> None:
    program = _countdown(0)
    AbsintProposer(tmp_path).propose(ProposalContext(program, None, loop_contexts(program)))
    dumped = json.loads((tmp_path / "absint" / "heads.json").read_text())
    assert dumped["complete"] and "x + y == 10" in dumped["heads"]["L"]["constraints"]
    split = lower_source(SPLIT % "1000000", "f.c", "ILP32", "unreach-call")
    AbsintProposer(tmp_path).propose(ProposalContext(split, None, loop_contexts(split)))
    (head,) = json.loads((tmp_path / "absint" / "heads.json").read_text())["heads"].values()
    assert {
        "guard": ["x >= 1000000"],
        "constraints": ["x - 3*y == 1000000", "y >= 0", "-3*y >= -2000002"],
    } in head["parts"]


def test_registered_and_escalating() -> None:
    from quokka.invariants.llm.settings import ModelSettings
    from quokka.invariants.registry import Escalating, make_proposers
    from quokka.verifier.options import Options

    (made,) = make_proposers(Options(proposers=("absint",)), ModelSettings(auto=False))
    assert isinstance(made, Escalating) and made.name == "absint"
    program = _countdown(0)
    context = ProposalContext(program, None, loop_contexts(program))
    assert made.propose(context) == [] and made.propose(context)


SPLIT = """
extern void __assert_fail(const char *, const char *, unsigned int, const char *);
void reach_error() { __assert_fail("0", "f.c", 3, "reach_error"); }
void __VERIFIER_assert(int cond) { if (!(cond)) { ERROR: {reach_error();} } }
int main() {
  int x = 0;
  int y = 0;
  while (x < 3000000) {
    if (x < 1000000) { x += 1; } else { x += 3; y += 1; }
  }
  __VERIFIER_assert(x == %s + 3 * y);
  return 0;
}
"""


def test_trace_partitioning_finds_the_phase_invariant() -> None:
    """The head split by `x < 1000000`: `x <= 999999 || x == 3*y + 1000000` proves the exit."""
    program = lower_source(SPLIT % "1000000", "f.c", "ILP32", "unreach-call")
    context = ProposalContext(program, None, loop_contexts(program))
    texts = [c.text for c in AbsintProposer().propose(context)]
    assert "x <= 999999 || x == 3*y + 1000000" in texts
    assert _proved(program)
    unsplit = loop_heads(program, partition=False)
    assert not unsplit.parts
    for wrong in ("999999", "1000001", "1000003"):  # off-by-one phases and a wrong offset
        assert not _proved(lower_source(SPLIT % wrong, "f.c", "ILP32", "unreach-call"))


def test_a_narrowing_signed_conversion_wraps() -> None:
    """`x = 0; while (x < 200) { x++; c = (signed char)x; }`: c reaches -56, not 200."""
    b = ProgramBuilder()
    x, c = b.var("x"), b.var("c", SCHAR)
    b.assign(x, num(0))
    b.assign(c, num(0, SCHAR))
    with b.loop("L"):
        b.if_break(ge(x, num(200)))
        b.assign(x, add(x, num(1)))
        b.assign(c, cast(x, SCHAR))
    b.check(ge(cast(c, INT), num(0)))
    program = b.build()
    heads = loop_heads(program)
    assert _holds(heads.constraints["L"], {"x": 200, "c": -56})
    assert not _proved(program)
    run = Runner(program).run(())
    assert run.outcome == "error"
