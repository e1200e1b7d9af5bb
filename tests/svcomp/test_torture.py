"""`quokka torture` (issue 20): generated programs with known truth, confirmed mutants, fuzzed
inputs; a verifier that answers wrongly, crashes or hangs is caught and its program saved."""

from __future__ import annotations

import random
import shutil
import sys
from pathlib import Path

import pytest
from quokka.svcomp.execution import Outcome
from quokka.svcomp.qa.torture import Campaign, Settings, _problem, fuzzed, generated_program, mutants
from quokka.svcomp.qa.torture_invariants import ARRAY_KINDS, InvariantTrial, array_trial, invariant_trial
from quokka.svcomp.tasks import Task
from quokka.verifier.exec.replay import gcc_available
from quokka.verifier.frontend import lower, lower_source
from quokka.verifier.frontend.invariant import parse_invariant
from quokka.verifier.verdict.witnesses import witness_invariants

needs_gcc = pytest.mark.skipif(not gcc_available(), reason="no C compiler")


def test_generated_programs_are_seeded_and_lower() -> None:
    first = [generated_program(random.Random(3)) for _ in range(2)]
    assert first[0] == first[1]
    for k in range(20):
        lower_source(generated_program(random.Random(k)), f"g{k}.c")


def test_a_mutant_changes_one_comparison_or_constant_of_an_assertion() -> None:
    text = "int main() { int x = 1; if (x < 5) x = 2; __VERIFIER_assert(x <= 3); return 0; }"
    found = set(mutants(text, random.Random(0), limit=10))
    assert found == {text.replace("x <= 3", "x < 3"), text.replace("x <= 3", "x <= 4")}


def test_fuzzing_damages_the_text() -> None:
    text = "int main() { int x = 1; return x; }\n"
    damaged = {fuzzed(text, random.Random(k))[1] for k in range(30)}
    assert text.encode() not in damaged and len(damaged) > 5


def _outcome(exit_code: int | None, stderr: str = "", stdout: str = "", killed_for: str = "") -> Outcome:
    return Outcome(("quokka",), exit_code, None, stdout, stderr, 0.1, 0.1, 10.0, killed_for)


def test_what_counts_as_a_crash_or_a_hang() -> None:
    assert _problem(_outcome(2, "p.c:1:2: parse error: x\n")) is None
    assert _problem(_outcome(None, killed_for="wall")) == ("hang", "killed for wall after 0 s")
    crash = _problem(_outcome(1, 'Traceback (most recent call last):\n  File "x"\nKeyError: 1\n'))
    assert crash is not None and crash[0] == "crash"
    assert _problem(_outcome(0, stdout="not json"))[0] == "crash"  # type: ignore[index]
    assert _problem(_outcome(2, "error one\nerror two\n"))[0] == "crash"  # type: ignore[index]


@needs_gcc
def test_a_short_campaign_finds_nothing_wrong(tmp_path: Path) -> None:
    campaign = Campaign(Settings(0.2, 1, 5.0, tmp_path / "out", faults=False), [], [])
    counts = campaign.run()
    assert counts.programs >= 1 and sum(counts.verdicts.values()) >= 1
    assert not counts.failed, campaign.findings


@needs_gcc
def test_a_verifier_that_always_says_true_is_caught(tmp_path: Path) -> None:
    liar = tmp_path / "liar.py"
    liar.write_text(
        "import json, sys\n"
        "print(json.dumps({'verdict': 'true', 'reason': 'trust me', 'file': sys.argv[1]}))\n"
    )
    settings = Settings(0.15, 2, 5.0, tmp_path / "out", verifier=(sys.executable, str(liar)), faults=False)
    campaign = Campaign(settings, [], [])
    counts = campaign.run()
    assert counts.wrong >= 1 and counts.failed
    assert all(f.kind == "wrong" for f in campaign.findings)
    saved = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert any(name.endswith(".c") for name in saved) and any(name.endswith(".txt") for name in saved)


FALSE_TASK = """
extern int __VERIFIER_nondet_int(void);
extern void reach_error(void);
void __VERIFIER_assert(int c) { if (!c) reach_error(); }
int main(void) {
  int x = __VERIFIER_nondet_int();
  int i = 0;
  while (i < 10) {
    i = i + 1;
  }
  __VERIFIER_assert(x != 5);
  return 0;
}
"""


def _false_task(tmp_path: Path) -> Task:
    program = tmp_path / "known_false.c"
    program.write_text(FALSE_TASK)
    return Task(str(program), "t/known_false", program, False, "LP64", "known", "t")


def test_each_channel_carries_the_guess(tmp_path: Path) -> None:
    task = _false_task(tmp_path)
    seen: dict[str, InvariantTrial] = {}
    for k in range(40):
        trial = invariant_trial(task.program, "LP64", tmp_path, random.Random(k), f"inv{k}.c")
        assert trial is not None
        seen.setdefault(trial.description.split(":")[0], trial)
    assert set(seen) == {"option", "acsl", "witness"}
    assert seen["option"].args[0] == "--invariant" and seen["option"].args[1].startswith("8:")
    annotated = seen["acsl"].program.read_text()
    assert (
        "/*@ loop invariant" in annotated
        and annotated.replace(annotated.splitlines()[7] + "\n", "") == FALSE_TASK
    )
    witness = witness_invariants(Path(seen["witness"].args[1]), task.program)
    assert [w.line for w in witness] == [8]


@needs_gcc
def test_wrong_invariants_never_make_a_verdict_wrong(tmp_path: Path) -> None:
    campaign = Campaign(Settings(1.0, 4, 5.0, tmp_path / "out", faults=False), [], [_false_task(tmp_path)])
    try:  # the trial itself, not the whole rotation (which has array claims too)
        for k in range(3):
            campaign.invariant(k)
    finally:
        shutil.rmtree(campaign.work, ignore_errors=True)
    counts = campaign.counts
    assert counts.invariants == 3 and not counts.failed, campaign.findings


@needs_gcc
def test_a_verifier_that_trusts_the_given_invariant_is_caught(tmp_path: Path) -> None:
    liar = tmp_path / "liar.py"  # answers TRUE whenever it is given an invariant, else unknown
    liar.write_text(
        "import json, sys\n"
        "flags = any(a in sys.argv for a in ('--invariant', '--witness-in'))\n"
        "given = flags or 'loop invariant' in open(sys.argv[1]).read()\n"
        "print(json.dumps({'verdict': 'true' if given else 'unknown', 'reason': 'r', 'file': sys.argv[1]}))\n"
    )
    settings = Settings(0.15, 5, 5.0, tmp_path / "out", verifier=(sys.executable, str(liar)), faults=False)
    campaign = Campaign(settings, [], [_false_task(tmp_path)])
    campaign.run()
    assert any(f.kind == "wrong" and "at line 8" in f.trial for f in campaign.findings), campaign.findings


UNDECLARED_ASSERT = """
extern int __VERIFIER_nondet_int(void);
void reach_error(void) {}
int main(void) {
  int i = 0;
  int n = __VERIFIER_nondet_int();
  while (i < 3) {
    i = i + 1;
  }
  __VERIFIER_assert(i == n);
  return 0;
}
"""


def test_an_invariant_trial_is_judged_under_the_tasks_property(tmp_path: Path) -> None:
    """`__VERIFIER_assert` is never defined, so under unreach-call (the task's property) nothing
    reaches an error: TRUE. A bare C file is read as `assert`, where the call fails: FALSE. The
    trial must ask for the task's reading (a CI campaign once reported this as a wrong verdict)."""
    program = tmp_path / "undeclared_assert.c"
    program.write_text(UNDECLARED_ASSERT)
    task = Task(str(program), "t/undeclared_assert", program, True, "LP64", "undeclared", "t")
    campaign = Campaign(Settings(1.0, 7, 10.0, tmp_path / "out", faults=False), [], [task])
    try:
        for k in range(4):
            campaign.invariant(k)
    finally:
        shutil.rmtree(campaign.work, ignore_errors=True)
    assert campaign.counts.invariants == 4 and campaign.counts.verdicts["true"] >= 1
    assert not campaign.findings, campaign.findings


def test_array_trials_claim_every_shape_through_every_channel(tmp_path: Path) -> None:
    seen: set[tuple[str, str, bool | None]] = set()
    for k in range(80):
        trial = array_trial(tmp_path, random.Random(k), f"arr{k}.c")
        kind, channel = trial.description.split(" array: ")[0], trial.description.split(": ")[1]
        seen.add((kind, channel, trial.claim_holds))
        claim = trial.description.split(": ", 2)[2].rsplit(" at line ", 1)[0]
        assert claim.startswith("\\forall integer j; ")
        source = tmp_path / f"arr{k}.src.c"
        program = lower(source, "LP64")
        parse_invariant(claim, program, program.loops[0].id)  # raises on a claim that is not one
        if channel == "witness":
            [given] = witness_invariants(Path(trial.args[1]), source)
            assert given.expr == claim  # a quantified claim is not dropped as non-C
    assert {kind for kind, _, _ in seen} == set(ARRAY_KINDS)
    assert {holds for _, _, holds in seen} == {True, False, None}
    assert {channel for _, channel, _ in seen} == {"option", "acsl", "witness"}


def test_a_verifier_that_calls_every_claim_valid_is_caught(tmp_path: Path) -> None:
    liar = tmp_path / "liar.py"  # TRUE, and whatever is claimed is valid
    liar.write_text(
        "import json, sys\n"
        "claim = {'loop': 'L', 'line': 11, 'column': 0, 'expr': 'e', 'source': 'option',\n"
        "         'status': 'valid', 'reason': 'trust me', 'state': [], 'inputs': []}\n"
        "print(json.dumps({'verdict': 'true', 'reason': 'r', 'file': sys.argv[1], 'claims': [claim]}))\n"
    )
    settings = Settings(1.0, 3, 5.0, tmp_path / "out", verifier=(sys.executable, str(liar)), faults=False)
    campaign = Campaign(settings, [], [])
    try:
        for k in range(12):
            campaign.array_claim(k)
    finally:
        shutil.rmtree(campaign.work, ignore_errors=True)
    assert any(f.kind == "wrong" and "a false claim is valid" in f.detail for f in campaign.findings)
    assert campaign.counts.array_claims == 12 and campaign.counts.crashes == 0


def test_quantified_claims_on_array_programs_get_right_statuses(tmp_path: Path) -> None:
    campaign = Campaign(Settings(1.0, 1, 10.0, tmp_path / "out", faults=False), [], [])
    try:
        for k in range(6):
            campaign.array_claim(k)
    finally:
        shutil.rmtree(campaign.work, ignore_errors=True)
    assert campaign.counts.array_claims == 6 and campaign.counts.verdicts["true"] >= 1
    assert not campaign.findings, campaign.findings
