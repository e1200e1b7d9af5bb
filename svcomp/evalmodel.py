"""`quokka eval-model`: how useful a model's invariant guesses are, measured by the verifier.

For each task the model is asked once for N samples, with the prompt `quokka verify` uses (a local
model decodes under the answer grammar unless `llm_constrained = false`). Per sample: its
candidates are parsed (rejections counted); each is checked by the assert query of the two-query
check (Spacer proves it holds at its loop head: a true invariant), by the inductive check alone,
and by the two-query check (for a true invariant, its assume query: Spacer does the rest); and
the sample *proves* the task when its candidates with their template completions
(`invariants.completion`) prove it by Houdini. The task is also checked the way `quokka verify
--model` uses the N samples: all their candidates and completions pooled into one Houdini run
(`pooled`). A candidate false on a recorded loop-head state (a reachable one) is none of these
and goes to no solver (nor into a Houdini pool). Samples are shared out over the loops as the
LLM proposer does (`llm_per_loop`). pass@k, for those proofs, is the unbiased
estimator over the N samples (Chen et al., 2021, "Evaluating Large Language Models Trained on
Code").

With `speedup`, each task is also verified with the default proposers and with the model added,
under one budget each: the tasks at least 1.2x faster with the model are counted (the Quokka
paper's measure). The results go into the results store as one run (config `eval-model`, the
metrics of each task in `proposer_stats`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from math import comb
from typing import Any

from quokka.invariants.completion import complete, observe_states
from quokka.invariants.evaluate import compile_expr
from quokka.invariants.llm import LLMConfig, ModelSettings, make_backend
from quokka.invariants.llm.answers import answer_candidates
from quokka.invariants.llm.backend import Backend
from quokka.invariants.llm.prompt import messages_for_context
from quokka.invariants.protocol import Candidate, ProposalContext, State, loop_contexts
from quokka.invariants.verify import verify_program
from quokka.verifier.engines import houdini, inductive, spacer
from quokka.verifier.engines.base import Budget, Status
from quokka.verifier.errors import QuokkaError
from quokka.verifier.frontend import lower
from quokka.verifier.ir import Program, transform
from quokka.verifier.ir.semantics import UndefinedBehaviour
from quokka.verifier.options import Options
from quokka.verifier.properties import UNREACH_CALL
from quokka.verifier.verdict.results import Verdict

from .tasks import Task

SPEEDUP = 1.2
CHECKS = ("refuted", "holds", "inductive", "assume")  # `_Judge`'s cached questions about a candidate


@dataclass(frozen=True)
class EvalConfig:
    samples: int = 8
    temperature: float = 0.8
    seed: int = 0
    check_s: float = 5.0  # per solver check of a candidate
    speedup: bool = False
    timeout_s: float = 30.0  # the verify budget of the speed-up runs


@dataclass(frozen=True)
class SampleEval:
    candidates: int
    rejected: int
    true_invariants: int
    inductive_alone: bool  # one candidate is an inductive invariant that implies safety
    two_query: bool  # one candidate passes the two-query check
    houdini: bool  # the candidates and their completions prove the task by Houdini


@dataclass(frozen=True)
class CandidateCheck:
    """One parsed candidate of a sample and what the checks made of it (None: not asked)."""

    loop: str
    text: str
    rejected: str | None
    refuted: bool | None
    holds: bool | None
    inductive: bool | None
    assume_safe: bool | None


@dataclass(frozen=True)
class Transcript:
    """A sample as the model wrote it and its candidates: `--dump-dir`'s record of one answer."""

    answer: str
    candidates: tuple[CandidateCheck, ...]


@dataclass(frozen=True)
class TaskEval:
    name: str
    family: str
    samples: tuple[SampleEval, ...] = ()
    error: str = ""
    sample_s: float = 0.0
    check_s: float = 0.0
    model_free_s: float | None = None
    with_model_s: float | None = None
    with_model_verdict: str = ""
    pooled: bool = False  # all samples' candidates, with their completions, prove it by Houdini
    transcripts: tuple[Transcript, ...] = ()  # the answers, for --dump-dir (not in `to_json`)

    @property
    def proving(self) -> int:
        return sum(s.houdini for s in self.samples)

    def pass_at(self, k: int) -> float:
        return pass_at_k(len(self.samples), self.proving, k)

    @property
    def faster(self) -> bool:
        """Verified with the model, at least `SPEEDUP` times faster than without."""
        if self.model_free_s is None or self.with_model_s is None or self.with_model_verdict == "unknown":
            return False
        return self.model_free_s >= SPEEDUP * self.with_model_s

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        del data["transcripts"]
        data.update(proving=self.proving, pass_at_1=self.pass_at(1), faster=self.faster)
        return data


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that some of k samples drawn from n, c of them good, is good."""
    if n == 0 or k > n:
        return 0.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def evaluate_task(
    task: Task, backend: Backend, options: Options, model: ModelSettings, config: EvalConfig
) -> TaskEval:
    """Sample, parse and check the model's candidates for one task (see the module docstring);
    `options` and `model` are those of the speed-up runs' `verify`."""
    try:
        program = lower(task.program, task.data_model or "LP64", UNREACH_CALL)  # as batch reads a task
    except QuokkaError as exc:
        return TaskEval(task.name, task.family, error=str(exc))
    source = task.program.read_text(encoding="utf-8", errors="replace")
    context = ProposalContext(program, source, loop_contexts(program), {}, config.timeout_s, config.seed)
    started = time.monotonic()
    llm = LLMConfig.from_settings(model)
    request = replace(llm.request(program, config.seed, backend=backend), n=config.samples,
                      temperature=config.temperature)  # fmt: skip
    try:
        answers = llm.sample(backend, messages_for_context(context, llm.prompt), request)
    except QuokkaError as exc:
        return TaskEval(task.name, task.family, error=f"sampling: {exc}")
    sampled = time.monotonic()
    states, exhaustive = observe_states(program, config.seed)
    judge = _Judge(program, states, config, exhaustive)
    parsed = [answer_candidates(a, program, k) for k, a in enumerate(answers)]
    samples = tuple(judge.sample(candidates) for candidates in parsed)
    pooled = judge.proves([c for candidates in parsed for c in candidates])
    transcripts = tuple(
        Transcript(a, tuple(map(judge.record, c))) for a, c in zip(answers, parsed, strict=True)
    )
    checked = time.monotonic()
    speedup = _speedup(program, task, options, model, config) if config.speedup else (None, None, "")
    free_s, with_s, verdict = speedup
    return TaskEval(
        task.name, task.family, samples, sample_s=sampled - started, check_s=checked - sampled,
        model_free_s=free_s, with_model_s=with_s, with_model_verdict=verdict, pooled=pooled,
        transcripts=transcripts,
    )


class _Judge:
    """Checks the candidates of one task; samples often repeat each other, so answers are cached."""

    def __init__(
        self, program: Program, states: dict[str, list[State]], config: EvalConfig, exhaustive: bool = False
    ) -> None:
        self.program, self.states, self.seconds, self.exhaustive = program, states, config.check_s, exhaustive
        self.cache: dict[tuple[str, str, Any], bool] = {}
        self.pools: dict[frozenset[tuple[str, Any]], bool] = {}
        self.fitted: dict[tuple[str, Any], list[Candidate]] = {}

    def sample(self, candidates: Sequence[Candidate]) -> SampleEval:
        valid = [c for c in candidates if not c.rejected]
        live = [c for c in valid if not self._cached("refuted", c, self._refuted)]
        true = sum(self._cached("holds", c, self._holds) for c in live)
        alone = any(self._cached("inductive", c, self._inductive) for c in live)
        two_query = alone or any(
            self._cached("holds", c, self._holds) and self._cached("assume", c, self._assume_safe)
            for c in live
        )
        proves = self.proves(valid)
        return SampleEval(len(valid), len(candidates) - len(valid), true, alone, two_query, proves)

    def proves(self, candidates: Sequence[Candidate]) -> bool:
        """The candidates not refuted, with the completions of all, prove the task by Houdini."""
        valid = [c for c in candidates if not c.rejected]
        pool: dict[str, list[Any]] = {}
        fitted = [f for c in valid for f in self._completions(c)]
        for c in [*valid, *fitted]:
            if not self._cached("refuted", c, self._refuted):
                pool.setdefault(c.loop_id, []).append(c.expr)
        key = frozenset((loop, e) for loop, exprs in pool.items() for e in exprs)
        if key not in self.pools:
            self.pools[key] = bool(pool) and self._houdini(pool)
        return self.pools[key]

    def record(self, c: Candidate) -> CandidateCheck:
        """What the checks so far made of `c` (from the cache: nothing is checked again)."""
        refuted, holds, inductive, assume = (self.cache.get((k, c.loop_id, c.expr)) for k in CHECKS)
        text = (c.raw or c.text) if c.rejected else c.text
        return CandidateCheck(c.loop_id, text, c.rejected, refuted, holds, inductive, assume)

    def _completions(self, c: Candidate) -> list[Candidate]:
        """`c`'s template completions, fitted once though the pooled check meets `c` again."""
        key = (c.loop_id, c.expr)
        if key not in self.fitted:
            self.fitted[key] = complete([c], self.states, self.program, self.exhaustive)
        return self.fitted[key]

    def _cached(self, kind: str, c: Candidate, check: Callable[[Candidate], bool]) -> bool:
        key = (kind, c.loop_id, c.expr)
        if key not in self.cache:
            self.cache[key] = check(c)
        return self.cache[key]

    def _refuted(self, c: Candidate) -> bool:
        """False on a recorded loop-head state, which is reachable: no invariant, no solver needed."""
        try:
            holds = compile_expr(c.expr)
            return any(not holds(s) for s in self.states.get(c.loop_id, ()))
        except (UndefinedBehaviour, KeyError, TypeError):
            return False

    def _holds(self, c: Candidate) -> bool:
        """The assert query: Spacer proves that `c` holds whenever its loop head is reached."""
        asserted = transform.assert_program(self.program, {c.loop_id: c.expr})
        return spacer.solve(asserted, Budget.of(self.seconds)).status is Status.SAFE

    def _inductive(self, c: Candidate) -> bool:
        return bool(inductive.prove_with(self.program, {c.loop_id: c.expr}, Budget.of(self.seconds)).safe)

    def _assume_safe(self, c: Candidate) -> bool:
        """The assume query of the two-query check (its assert query is `_holds`): Spacer proves
        the program safe with `c` assumed at its loop head."""
        assumed = transform.assume_program(self.program, {c.loop_id: c.expr})
        return spacer.solve(assumed, Budget.of(self.seconds)).status is Status.SAFE

    def _houdini(self, pool: dict[str, list[Any]]) -> bool:
        return bool(houdini.houdini(self.program, pool, Budget.of(self.seconds)).result.safe)


def _speedup(
    program: Program, task: Task, options: Options, model: ModelSettings, config: EvalConfig
) -> tuple[float, float, str]:
    free = options.with_(timeout_s=config.timeout_s, seed=config.seed)
    with_llm = free.with_(proposers=(*free.proposers, "llm"))
    started = time.monotonic()
    verify_program(program, free, task.program, replace(model, model=None, endpoint=None))
    middle = time.monotonic()
    result = verify_program(program, with_llm, task.program, model.with_(samples=config.samples))
    verdict = "unknown" if result.verdict is Verdict.UNKNOWN else result.verdict.value
    return middle - started, time.monotonic() - middle, verdict


def open_backend(model: ModelSettings) -> Backend:
    """The model of `--model DIR|NAME` or `--endpoint URL`, loaded once for all tasks."""
    return make_backend(model)


@dataclass(frozen=True)
class Summary:
    tasks: int
    errors: int
    samples: int
    parse_rate: float  # accepted candidates / all candidates in the answers
    true_invariants: int
    proved_inductive_alone: int  # tasks where some candidate alone is an inductive proof
    proved_two_query: int  # tasks where some candidate passes the two-query check
    proved_houdini: int  # tasks some sample proves with completion and Houdini
    proved_pooled: int  # tasks all samples together prove with completion and Houdini (as verify does)
    pass_at_1: float
    pass_at_n: float
    faster: int | None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def summarize(evals: Sequence[TaskEval], speedup: bool) -> Summary:
    ok = [e for e in evals if not e.error]
    accepted = sum(s.candidates for e in ok for s in e.samples)
    rejected = sum(s.rejected for e in ok for s in e.samples)
    n = max((len(e.samples) for e in ok), default=0)
    return Summary(
        tasks=len(evals),
        errors=len(evals) - len(ok),
        samples=sum(len(e.samples) for e in ok),
        parse_rate=accepted / (accepted + rejected) if accepted + rejected else 0.0,
        true_invariants=sum(s.true_invariants for e in ok for s in e.samples),
        proved_inductive_alone=sum(any(s.inductive_alone for s in e.samples) for e in ok),
        proved_two_query=sum(any(s.two_query for s in e.samples) for e in ok),
        proved_houdini=sum(e.proving > 0 for e in ok),
        proved_pooled=sum(e.pooled for e in ok),
        pass_at_1=sum(e.pass_at(1) for e in ok) / len(evals) if evals else 0.0,
        pass_at_n=sum(e.pass_at(n) for e in ok) / len(evals) if evals and n else 0.0,
        faster=sum(e.faster for e in ok) if speedup else None,
    )
