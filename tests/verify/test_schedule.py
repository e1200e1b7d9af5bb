"""The scheduler: at most `cores` strategies at once, the first stage before the second, a table
of data; and a cut program's falsifiers are not cut short (issue 40: FALSE past the recursion cut)."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest
from marks import needs_gcc
from proctree import descendants
from quokka.invariants.protocol import Candidate, ProposalContext, Proposer
from quokka.invariants.verify import strategies, verify_path
from quokka.verifier.engines.base import Budget, EngineResult, unknown
from quokka.verifier.errors import InputError
from quokka.verifier.frontend import lower_source
from quokka.verifier.ir import Program
from quokka.verifier.ir.builder import ProgramBuilder, ge, mul, num
from quokka.verifier.options import Options
from quokka.verifier.verdict.portfolio import Portfolio, PortfolioConfig
from quokka.verifier.verdict.results import Verdict
from quokka.verifier.verdict.schedule import (
    OVERDUE_S,
    TABLE,
    Queue,
    Slot,
    Stages,
    Table,
    features,
    load_table,
    plan,
)

NAP_S = 0.4


def _program() -> Program:
    b = ProgramBuilder()
    x = b.var("x")
    b.havoc(x)
    b.check(ge(mul(x, x), num(0)))
    return b.build()


def _napper(log: Path, name: str):  # type: ignore[no-untyped-def]
    """A strategy that notes when it ran (in its own file under `log`) and decides nothing."""

    def nap(program: Program, budget: Budget) -> EngineResult:
        start = time.time()
        time.sleep(NAP_S)
        (log / f"{name}-{start}.json").write_text(json.dumps([name, start, time.time()]))
        return unknown(name, "napped")

    return nap


def _spans(log: Path) -> list[tuple[str, float, float]]:
    """(strategy, start, end) of every run, in the order they started."""
    return sorted((tuple(json.loads(p.read_text())) for p in log.glob("*.json")), key=lambda s: s[1])


def _most_at_once(spans: list[tuple[str, float, float]]) -> int:
    events = sorted([(s, 1) for _, s, _ in spans] + [(e, -1) for _, _, e in spans])
    running = most = 0
    for _, step in events:
        running += step
        most = max(most, running)
    return most


def _count_children(counts: list[int], done: threading.Event) -> None:
    """How many live processes are below this one, every few milliseconds until `done`."""
    while not done.wait(0.02):
        counts.append(len(descendants(os.getpid())))


NAMES = ("quokka", "spacer", "bmc", "testing", "algebra")


@pytest.mark.parametrize("cores", [1, 2])
def test_at_most_cores_strategies_run_at_once_in_the_planned_order(tmp_path: Path, cores: int) -> None:
    program = _program()
    config = PortfolioConfig(timeout_s=30, replay_with_compiler=False, cores=cores)
    alive: list[int] = []
    done = threading.Event()
    watcher = threading.Thread(target=_count_children, args=(alive, done))
    watcher.start()
    try:
        result = Portfolio(program, config).run({n: _napper(tmp_path, n) for n in NAMES})
    finally:
        done.set()
        watcher.join()
    spans = _spans(tmp_path)
    assert result.verdict is Verdict.UNKNOWN
    assert _most_at_once(spans) == cores and max(alive) == cores  # the strategies' own times, and /proc
    planned = plan(program, NAMES)
    started = [name for name, _, _ in spans]
    first = len([s for s in planned if s.stage == 1])
    assert sorted(started[:first]) == sorted(s.name for s in planned[:first])  # stage 1 before stage 2
    if cores == 1:  # with more, the children started together may note their start in any order
        assert started == [s.name for s in planned]


def test_cores_zero_is_the_race_of_old_every_strategy_at_once(tmp_path: Path) -> None:
    config = PortfolioConfig(timeout_s=30, replay_with_compiler=False, cores=0)
    Portfolio(_program(), config).run({n: _napper(tmp_path, n) for n in NAMES})
    assert _most_at_once(_spans(tmp_path)) == len(NAMES)


def test_the_queue_starts_the_first_stage_first_with_its_slice_then_fair_shares() -> None:
    slots = [Slot("a", 1, 1.5), Slot("b", 1, 1.5), Slot("c", 2, None), Slot("d", 2, None)]
    queue = Queue(list(slots), cores=1)
    budget = Budget.of(10.0)
    first = queue.due(0, budget)
    assert [s.name for s, _ in first] == ["a"] and first[0][1].remaining() == pytest.approx(1.5, abs=0.1)
    assert queue.due(1, budget) == []  # the one core is busy
    assert [s.name for s, _ in queue.due(0, budget)] == ["b"]
    (c, share), = queue.due(0, budget)
    assert c.name == "c" and share.remaining() == pytest.approx(5.0, abs=0.1)  # half the rest: d waits
    (d, rest), = queue.due(0, budget)
    assert d.name == "d" and rest.remaining() == pytest.approx(10.0, abs=0.1)


def test_a_first_stage_strategy_that_used_its_slice_comes_again_once() -> None:
    queue = Queue([Slot("b", 2, None)], cores=1)
    queue.again(Slot("a", 1, 1.0))
    queue.again(Slot("a", 1, 1.0))
    queue.again(Slot("b", 2, None))  # a second-stage slot had its share
    assert [(s.name, s.stage) for s in queue.slots] == [("b", 2), ("a", 3)]
    queue.keep_only({"a"})
    assert [s.name for s in queue.slots] == ["a"]


def test_the_plan_puts_the_users_invariants_first_and_unnamed_strategies_last() -> None:
    table = Table({}, Stages(first=("spacer",), then=("bmc", "spacer"), slice_s=1.0))
    slots = plan(_program(), ["model", "bmc", "user", "spacer"], table)
    assert [(s.name, s.stage) for s in slots] == [("user", 1), ("spacer", 1), ("bmc", 2), ("spacer", 2),
                                                  ("model", 2)]  # fmt: skip
    assert [s.slice_s for s in slots] == [1.0, 1.0, None, None, None]


def test_features_name_the_kind_of_a_program() -> None:
    nonlinear = features(_program())
    assert nonlinear.nonlinear and nonlinear.loops == 0 and nonlinear.kind == "loop-free"
    loop = lower_source(
        "int a[4]; int main(void) { int i = 0; while (i < 4) { a[i] = i * 100000; i++; } return 0; }"
    )
    found = features(loop)
    assert found.loops == 1 and found.arrays and found.big_constants and not found.nonlinear
    assert found.kind == "arrays"


def test_the_shipped_table_reads_and_names_known_strategies() -> None:
    table = load_table(TABLE)
    known = {"quokka", "model", "user", "bmc", "bitblast", "spacer", "testing", "fuzz", "execute", "algebra"}
    for stages in (table.default, *table.kinds.values()):
        assert set(stages.first) | set(stages.then) <= known and stages.slice_s > 0


def test_a_broken_table_is_a_located_error(tmp_path: Path) -> None:
    broken = tmp_path / "schedule.toml"
    broken.write_text("[default]\nfirst = [1]\nthen = []\n")
    with pytest.raises(InputError, match="cannot read the schedule"):
        load_table(broken)


DEEP_BUG = """\
extern int __VERIFIER_nondet_int(void);
extern void reach_error(void);
void f(int d, int n) {
  if (d >= n) return;
  if (d == 6) reach_error();
  f(d + 1, n);
}
int main(void) {
  int n = __VERIFIER_nondet_int();
  if (n < 0 || n > 100) return 0;
  f(0, n);
  return 0;
}
"""


@needs_gcc
@pytest.mark.parametrize("cores", [0, 1])
def test_a_bug_beyond_the_recursion_cut_is_false_confirmed_by_gcc(tmp_path: Path, cores: int) -> None:
    """Every prover says SAFE of the program cut at depth 4; the compiled runs go on and reach
    the error at depth 6 (issue 40)."""
    path = tmp_path / "deep.c"
    path.write_text(DEEP_BUG)
    result = verify_path(path, Options(timeout_s=20, property="unreach-call", cores=cores))
    assert result.verdict is Verdict.FALSE, result.reason
    assert result.counterexample is not None and "gcc" in result.counterexample.confirmed_by
    assert any(run.engine == "recursion" for run in result.engines)  # a SAFE came first, and was no verdict


def test_the_learned_table_ranks_fast_wins_first_and_reads_back(tmp_path: Path) -> None:
    from quokka.svcomp.schedule_learn import Win, stages, table_text

    wins = [Win("linear", "spacer", 0.5)] * 3 + [Win("linear", "bmc", 0.8), Win("linear", "bmc", 9.0)]
    wins += [Win("nonlinear", "algebra", 1.0)] * 4 + [Win("arrays", "quokka", 1.0)]  # arrays: too few
    assert stages(wins[:5], fast_s=2.0) == (["spacer", "bmc"], ["bmc"])  # bmc again: it also won slowly
    path = tmp_path / "schedule.toml"
    path.write_text(table_text(wins, 2.0, 2.0, ["race.sqlite"]))
    table = load_table(path)
    assert table.stages("nonlinear").first == ("algebra",) and table.stages("arrays") == table.default
    assert table.stages("linear") == Stages(("spacer", "bmc"), ("bmc",), 2.0)


def test_strategies_that_answer_at_once_go_first_and_take_no_share() -> None:
    table = Table({}, Stages(first=("spacer", "bmc"), then=("spacer", "bmc"), slice_s=1.0))
    slots = plan(_program(), ["bmc", "spacer", "fuzz"], table, instant={"spacer"})
    assert [(s.name, s.stage) for s in slots] == [("spacer", 1), ("bmc", 1), ("bmc", 2), ("fuzz", 2)]


class _Named:
    """A proposer that proposes nothing (only its name matters here)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def propose(self, context: ProposalContext) -> list[Candidate]:
        return []


def test_the_model_is_asked_only_in_the_second_stage_and_all_at_once_as_before() -> None:
    program = _program()
    proposers: list[Proposer] = [_Named("dynamic"), _Named("llm")]
    staged = strategies(program, Options(cores=1), proposers, None)
    assert {"quokka", "model"} <= set(staged)
    assert {s.stage for s in plan(program, list(staged)) if s.name == "model"} == {2}
    assert "model" not in strategies(program, Options(cores=0), proposers, None)  # one loop, with the model
    assert "model" not in strategies(program, Options(cores=1), [_Named("llm")], None)


def test_a_strategy_past_its_slice_is_killed_and_the_next_one_runs(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import quokka.verifier.verdict.portfolio as portfolio

    def stubborn(program: Program, budget: Budget) -> EngineResult:
        time.sleep(60)  # keeps no budget
        return unknown("stubborn", "never")

    slots = (Slot("stubborn", 1, 0.5), Slot("nap", 2, None))
    monkeypatch.setattr(portfolio, "plan", lambda program, names, instant=(): slots)
    started = time.time()
    config = PortfolioConfig(timeout_s=5, replay_with_compiler=False, cores=1)
    result = Portfolio(_program(), config).run({"stubborn": stubborn, "nap": _napper(tmp_path, "nap")})
    ((name, nap_start, _),) = _spans(tmp_path)
    assert name == "nap" and nap_start - started < 0.5 + OVERDUE_S + 1.0  # killed past its slice
    killed = [(r.status, r.reason) for r in result.engines if r.engine == "stubborn"]
    # again after the others, with the rest of the budget (where it keeps to nothing once more)
    assert killed == [("timeout", "its slice of the budget ended"), ("timeout", "budget exhausted")]


def test_specialists_end_the_first_stage_with_their_own_slice() -> None:
    table = Table({}, Stages(first=("bmc",), then=("spacer", "algebra"), slice_s=1.0), ("algebra",), 3.0)
    slots = plan(_program(), ["algebra", "spacer", "bmc"], table)
    assert [(s.name, s.stage, s.slice_s) for s in slots] == [("bmc", 1, 1.0), ("algebra", 1, 3.0),
                                                             ("spacer", 2, None)]  # fmt: skip
    assert load_table(TABLE).specialists  # the shipped table has them
