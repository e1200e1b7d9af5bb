"""`--dump-dir` keeps what the proposers said: each round's candidates, who proposed them, and
what Houdini made of them (proposals/roundK.json)."""

from __future__ import annotations

import json

from quokka.invariants.dynamic import DynamicProposer
from quokka.invariants.protocol import Candidate, ProposalContext
from quokka.invariants.quokka_loop import QuokkaLoop
from quokka.verifier.engines.base import Budget, Status
from quokka.verifier.ir import INT, Var
from quokka.verifier.ir.builder import ProgramBuilder, add, eq, ge, le, mul, num
from quokka.verifier.options import Options


def _doubling():
    b = ProgramBuilder("double.c")
    i, s, n = b.var("i"), b.var("s"), b.var("n")
    b.havoc(n)
    b.assume(le(num(0), n))
    with b.loop() as loop_id:
        b.if_break(ge(i, n))
        b.assign(i, add(i, num(1)))
        b.assign(s, add(s, num(2)))
    b.check(eq(s, mul(num(2), n)))
    return b.build(), loop_id


def test_each_round_is_dumped_with_the_candidates_and_houdinis_answer(tmp_path):
    program, loop_id = _doubling()
    result = QuokkaLoop([DynamicProposer()], Options(dump_dir=tmp_path), None).run(program, Budget.of(20))
    assert result.status is Status.SAFE
    rounds = sorted((tmp_path / "proposals").glob("round*.json"))
    assert rounds, "no proposals dumped"
    last = json.loads(rounds[-1].read_text())
    assert last["proved"] is True
    rows = last["candidates"]
    assert {r["proposer"] for r in rows} == {"dynamic"} and {r["loop"] for r in rows} == {loop_id}
    kept = {r["invariant"] for r in rows if r["houdini"] == "kept"}
    assert "s == 2*i" in kept
    dropped = [r for r in rows if r["houdini"].startswith("dropped")]
    assert all(r["reason"] for r in dropped)


def test_nothing_is_dumped_without_a_dump_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    program, _ = _doubling()
    QuokkaLoop([DynamicProposer()], Options(), None).run(program, Budget.of(20))
    assert list(tmp_path.iterdir()) == []


class _Saying:
    """A proposer that answers `s == 2*i` at every loop, as a model that agrees with dynamic would."""

    name = "llm"

    def propose(self, context: ProposalContext) -> list[Candidate]:
        e = eq(Var("s", INT), mul(num(2), Var("i", INT)))
        return [Candidate(loop.loop.id, e, "s == 2*i", self.name) for loop in context.loops]


def test_a_candidate_two_proposers_found_names_both(tmp_path):
    program, _ = _doubling()
    loop = QuokkaLoop([DynamicProposer(), _Saying()], Options(dump_dir=tmp_path), None)
    result = loop.run(program, Budget.of(20))
    assert result.status is Status.SAFE
    shared = [r for r in result.stats["candidates"] if r.expr == "s == 2*i"]
    assert [(r.proposer, r.also_proposed_by, r.status) for r in shared] == [("dynamic", ("llm",), "proven")]
    assert all(r.also_proposed_by == () for r in result.stats["candidates"] if r.expr != "s == 2*i")
    last = json.loads(sorted((tmp_path / "proposals").glob("round*.json"))[-1].read_text())
    assert [r["also_proposed_by"] for r in last["candidates"] if r["invariant"] == "s == 2*i"] == [["llm"]]
