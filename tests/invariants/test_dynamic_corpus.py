"""The dynamic proposer on the shared corpus: robust, well typed, and fed only reachable states."""

import pytest
from corpus import CORPUS
from quokka.invariants.dynamic import DynamicConfig, DynamicProposer
from quokka.invariants.evaluate import holds_on
from quokka.invariants.protocol import ProposalContext, loop_contexts
from quokka.invariants.sampling import SamplingConfig
from quokka.verifier.ir import Assert, Binary, Program, Select, Store, walk
from quokka.verifier.ir.typecheck import check_program

FAST = DynamicConfig(
    sampling=SamplingConfig(min_runs=30, target_states=200, target_reaching_runs=20), max_time_s=1.0
)


def conjuncts(e):
    if isinstance(e, Binary) and e.op == "&&":
        return conjuncts(e.left) + conjuncts(e.right)
    return [e]


def _has_arrays(e) -> bool:
    return any(isinstance(n, (Select, Store)) for n in walk(e))


@pytest.mark.parametrize("example", CORPUS, ids=lambda e: e.name)
def test_corpus_example(example):
    program = example.program
    proposer = DynamicProposer(FAST)
    cands = proposer.propose(ProposalContext(program, None, loop_contexts(program), {}, 10.0, 0))
    loop_ids = {info.id for info in program.loops}
    for c in cands:
        assert c.loop_id in loop_ids and c.rejected is None
        check_program(Program(program.file, program.data_model, program.variables, (Assert(c.expr),), ()))
    samples = proposer.last_samples
    if not program.loops:
        assert cands == [] and samples is None
        return
    assert samples is not None
    # every candidate holds on the states it was learned from
    for c in cands:
        assert holds_on(c.expr, list(samples.states[c.loop_id]))
    # the known invariants hold on the recorded states: they are reachable states
    for loop_id, inv in (example.invariants or {}).items():
        states = list(samples.states.get(loop_id, ()))
        for part in conjuncts(inv):
            if not _has_arrays(part):
                assert holds_on(part, states), f"{example.name}: known invariant fails on a recorded state"
