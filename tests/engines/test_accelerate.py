"""Loop acceleration: closed forms against the interpreter, phases, and mutants never proved."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
import sympy as sp
from quokka.invariants.accel import AccelProposer, loop_candidates
from quokka.invariants.protocol import ProposalContext, loop_contexts
from quokka.verifier.engines.accelerate import K, closed_forms, summaries
from quokka.verifier.engines.base import Budget, Status
from quokka.verifier.engines.houdini import houdini
from quokka.verifier.exec.interp import Runner
from quokka.verifier.frontend import lower_source
from quokka.verifier.ir import Program
from quokka.verifier.ir.builder import ProgramBuilder, add, ge, lt, mul, num


def _random_loop(rng: random.Random, phased: bool) -> Program:
    """`while (i < n) { [if (x < t)] x += a; [else x += a2;] y += b*x + c; z += y; i += s; }`."""
    b = ProgramBuilder()
    i, x, y, z = (b.var(v) for v in "ixyz")
    for v, value in ((i, rng.randint(-5, 5)), (x, rng.randint(-9, 9)), (y, rng.randint(-9, 9)), (z, 0)):
        b.assign(v, num(value))
    a, a2, s = rng.randint(-3, 3), rng.randint(1, 4), rng.randint(1, 3)
    with b.loop():
        b.if_break(ge(i, num(rng.randint(5, 60))))
        if phased:
            with b.block() as then:
                b.assign(x, add(x, num(a)))
            with b.block() as orelse:
                b.assign(x, add(x, num(a2)))
            b.if_(lt(x, num(rng.randint(0, 30))), tuple(then), tuple(orelse))
        else:
            b.assign(x, add(x, num(a)))
        b.assign(y, add(y, add(mul(num(rng.randint(-2, 2)), x), num(rng.randint(-3, 3)))))
        b.assign(z, add(z, y))
        b.assign(i, add(i, num(s)))
    return b.build()


@pytest.mark.parametrize("phased", [False, True])
def test_closed_forms_agree_with_the_interpreter(phased: bool) -> None:
    rng = random.Random(35 + phased)
    checked = 0
    for _ in range(25):
        program = _random_loop(rng, phased)
        found = summaries(program)
        run = Runner(program).run((), max_steps=100_000)
        if not found:
            continue
        (summary,) = found.values()
        heads = [h.values for h in run.loop_heads]
        assert len(heads) == summary.total + 1
        seen = 0
        for phase in summary.phases:
            for k in range(phase.count + 1):
                want = heads[seen + k]
                got = {v: int(f.subs(K, k)) for v, f in phase.forms.items() if v in want}
                assert got == {v: want[v] for v in got}
            seen += phase.count
        assert {v: int(e) for v, e in summary.exit.items()} == {v: run.final[v] for v in summary.exit}
        checked += 1
    assert checked >= 20


def test_geometric_and_polynomial_closed_forms() -> None:
    x, y, z = sp.symbols("x y z")
    forms = closed_forms({"x": 3 * x + 2, "y": y + 2, "z": z + y * y})
    assert forms is not None
    state = {"x": 1, "y": -3, "z": 5}
    for k in range(8):
        got = {v: int(f.subs({K: k, x: 1, y: -3, z: 5})) for v, f in forms.items()}
        assert got == state
        state = {"x": 3 * state["x"] + 2, "y": state["y"] + 2, "z": state["z"] + state["y"] ** 2}
    assert closed_forms({"x": y, "y": x}) is None  # not triangular


LONG = """
int main() {
  unsigned int i = 0u;
  unsigned int n = 0u;
  while (i < 0x40000000u) {
    i += 4u;
    n++;
  }
  __VERIFIER_assert(i == 0x40000000u && n == %s);
  return 0;
}
"""

PHASES = """
int main() {
  unsigned int x = 0u;
  while (x < 2000000u) {
    if (x < %s) {
      x += 1u;
    } else {
      x += 2u;
    }
  }
  __VERIFIER_assert(x == 2000000u);
  return 0;
}
"""

PRELUDE = "extern void __assert_fail(const char *, const char *, unsigned int, const char *);\n" + (
    'void reach_error() { __assert_fail("0", "f.c", 3, "reach_error"); }\n'
    "void __VERIFIER_assert(int cond) { if (!(cond)) { ERROR: {reach_error();} } }\n"
)


def _program(text: str) -> Program:
    return lower_source(PRELUDE + text, "f.c", "ILP32", "unreach-call")


def _proved(program: Program, proposer: AccelProposer | None = None) -> bool:
    context = ProposalContext(program, None, loop_contexts(program))
    pool: dict[str, list] = {}  # type: ignore[type-arg]
    for c in (proposer or AccelProposer()).propose(context):
        pool.setdefault(c.loop_id, []).append(c.expr)
    return houdini(program, pool, Budget.of(60)).result.status is Status.SAFE


def test_long_counter_and_phases_proved() -> None:
    assert _proved(_program(LONG % "0x10000000u"))
    assert _proved(_program(PHASES % "1000000u"))


def test_wrong_bound_and_off_by_one_phase_never_proved() -> None:
    assert not _proved(_program(LONG % "0x10000001u"))
    assert not _proved(_program(LONG.replace("0x40000000u) {", "0x40000004u) {", 1) % "0x10000000u"))
    assert not _proved(_program(PHASES % "1000001u"))


class _Wrong(AccelProposer):
    """Proposes from summaries whose closed forms are injected wrong: `n` one ahead."""

    def propose(self, context: ProposalContext) -> list:  # type: ignore[type-arg]
        out = []
        for loop in context.loops:
            for lid, s in summaries(context.program).items():
                if lid == loop.loop.id:
                    phases = tuple(replace(p, forms={**p.forms, "n": p.forms["n"] + 1}) for p in s.phases)
                    out += loop_candidates(context.program, loop, replace(s, phases=phases))
        return out


def test_wrong_closed_form_never_proved() -> None:
    program = _program(LONG % "0x10000001u")
    assert not _proved(program, _Wrong())
    # the injected form is what was proposed, and the certificate gate is what rejects it
    context = ProposalContext(program, None, loop_contexts(program))
    assert any(c.text.endswith("== 4*(long long)n - 4") for c in _Wrong().propose(context))


def test_a_counter_named_like_the_iteration_count() -> None:
    """The iteration count is no C name: a counter `k` keeps its facts (they were all dropped)."""
    program = _program(
        "int main() { int a = 0; int b = 1; int k = 0;\n"
        "  while (k < 10000000) { a += 2; b += 2; k++; }\n"
        "  __VERIFIER_assert(b - a == 1 && a % 2 == 0 && b % 2 == 1); return 0; }\n"
    )
    assert _proved(program)


def test_phases_without_facts_propose_nothing_and_do_not_fail() -> None:
    """A loop whose summary yields no fact in any phase proposes nothing (it raised IndexError)."""
    program = _program(
        "int main() { unsigned x = 0; unsigned n = __VERIFIER_nondet_uint();\n"
        "  while (x < n) { if (x < 10) x += 1; else x += 2; }\n"
        "  __VERIFIER_assert(x >= n); return 0; }\n"
    )
    context = ProposalContext(program, None, loop_contexts(program))
    assert all(c.loop_id for c in AccelProposer().propose(context))


def test_acceleration_escalates_and_is_built_only_when_asked() -> None:
    """The default `accel` proposer answers from the second round on, and imports nothing before."""
    from quokka.invariants.llm.settings import ModelSettings
    from quokka.invariants.registry import Escalating, make_proposers
    from quokka.verifier.options import Options

    built: list[AccelProposer] = []

    def build() -> AccelProposer:
        built.append(AccelProposer())
        return built[-1]

    program = _program(LONG % "0x10000000u")
    context = ProposalContext(program, None, loop_contexts(program))
    escalating = Escalating("accel", build)
    assert escalating.propose(context) == [] and built == []
    assert escalating.propose(context) and len(built) == 1
    assert "accel" in [p.name for p in make_proposers(Options(), ModelSettings(auto=False))]
