"""Run a program many times in the IR interpreter and collect the states at its loop heads.

Inputs come from a fixed rotation of strategies (small values around 0, small non-negative
values, boundary values of the type mixed with small ones) with growing radii, and from seeds:
input prefixes that Z3 found for the path to a loop head (`seeds`), continued with small values.
A run that hits undefined behaviour (division by zero, bad shift, signed overflow) contributes
nothing; a run that ends blocked or at the step limit keeps the states it reached.
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from quokka.verifier.interp import Execution, Runner, compile_program
from quokka.verifier.ir import ArrayType, Havoc, IntType, Program, VarDecl

State = Mapping[str, int]
MODES = ("small", "positive", "small", "boundary", "positive", "tiny")
RADII = (2, 5, 10, 20, 40, 100, 1000)
RUN_IDS = 4


@dataclass(frozen=True)
class SamplingConfig:
    max_runs: int = 2000
    min_runs: int = 80
    target_states: int = 800  # distinct states per loop after which sampling may stop
    max_states: int = 4000  # distinct states kept per loop
    max_steps: int = 20_000
    heads_per_run: int = 400


@dataclass(frozen=True)
class Samples:
    """Distinct loop-head states per loop id, and how they were obtained.

    `runs[loop][k]` numbers (some of) the runs that reached `states[loop][k]`, at most
    `RUN_IDS` of them; a run cut short by a limit does not count for its last state.
    """

    states: Mapping[str, tuple[State, ...]]
    runs: Mapping[str, tuple[tuple[int, ...], ...]]
    run_count: int
    outcomes: Mapping[str, int]
    seeded_runs: int
    elapsed_s: float


class InputStream:
    """The inputs of one run: `prefix` first, then values drawn by `mode` within `radius`."""

    def __init__(self, rng: random.Random, mode: str, radius: int, prefix: Sequence[int] = ()) -> None:
        self.rng = rng
        self.mode = mode
        self.radius = radius
        self.prefix = list(prefix)
        self.used = 0

    def __call__(self, decl: VarDecl, stmt: Havoc) -> int:
        if self.used < len(self.prefix):
            self.used += 1
            return self.prefix[self.used - 1]
        ty = decl.type.elem if isinstance(decl.type, ArrayType) else decl.type
        return draw(self.rng, ty, self.mode, self.radius)


def draw(rng: random.Random, ty: IntType, mode: str, radius: int) -> int:
    """One input value of type `ty`."""
    if ty.is_bool:
        return rng.randint(0, 1)
    if mode == "boundary" and rng.random() < 0.3:
        value: int = rng.choice([ty.min, ty.min + 1, -1, 0, 1, ty.max - 1, ty.max])
        return value
    if mode == "tiny":
        radius = 2
    lo = 0 if mode == "positive" or not ty.signed else -radius
    low: int = ty.min
    high: int = ty.max
    return max(low, min(high, rng.randint(lo, radius)))


@dataclass
class _Collector:
    program: Program
    config: SamplingConfig
    runner: Runner
    states: dict[str, dict[tuple[int, ...], State]] = field(default_factory=dict)
    runs_of: dict[str, dict[tuple[int, ...], tuple[int, ...]]] = field(default_factory=dict)
    outcomes: dict[str, int] = field(default_factory=dict)
    runs: int = 0

    def run(self, inputs: InputStream) -> None:
        self.runs += 1
        ex = self.runner.run(
            inputs,
            max_steps=self.config.max_steps,
            max_loop_head_states=self.config.heads_per_run,
            record_path=False,
        )
        outcome = "ub" if ex.overflows else ex.outcome
        self.outcomes[outcome] = self.outcomes.get(outcome, 0) + 1
        if outcome == "ub":
            return
        counted: set[tuple[str, tuple[int, ...]]] = set(self._cut_short(ex))
        for head in ex.loop_heads:
            key = tuple(head.values.values())
            bucket, runs = self.states.setdefault(head.loop_id, {}), self.runs_of.setdefault(head.loop_id, {})
            if key not in bucket and len(bucket) < self.config.max_states:
                bucket[key] = head.values
            if key in bucket and (head.loop_id, key) not in counted:
                counted.add((head.loop_id, key))
                have = runs.get(key, ())
                runs[key] = have if len(have) >= RUN_IDS else (*have, self.runs)

    def _cut_short(self, ex: Execution) -> list[tuple[str, tuple[int, ...]]]:
        """The last recorded state of each loop when the run was cut short: the limit, not the
        program, ended its loop there, so it does not support a bound."""
        if ex.outcome != "limit" and len(ex.loop_heads) < self.config.heads_per_run:
            return []
        last = {head.loop_id: tuple(head.values.values()) for head in ex.loop_heads}
        return list(last.items())

    def enough(self) -> bool:
        if self.runs < self.config.min_runs:
            return False
        counts = [len(self.states.get(info.id, {})) for info in self.program.loops]
        return all(c >= self.config.target_states for c in counts)


def collect(
    program: Program,
    seed: int,
    deadline: float,
    seeds: Sequence[Sequence[int]] = (),
    config: SamplingConfig | None = None,
) -> Samples:
    """Run `program` until `deadline` (time.monotonic) or until every loop has enough states.

    `seeds` are input prefixes; every other run uses the next one until they are used up.
    """
    config = config or SamplingConfig()
    start = time.monotonic()
    rng = random.Random(seed)
    collector = _Collector(program, config, compile_program(program))
    pending = list(seeds)
    seeded = 0
    while collector.runs < config.max_runs and time.monotonic() < deadline and not collector.enough():
        k = collector.runs
        mode, radius = MODES[k % len(MODES)], RADII[(k // len(MODES)) % len(RADII)]
        prefix: Sequence[int] = ()
        if pending and (k % 2 == 0 or not collector.states):
            prefix, seeded = pending.pop(0), seeded + 1
        collector.run(InputStream(rng, mode, radius, prefix))
    return Samples(
        {loop: tuple(bucket.values()) for loop, bucket in collector.states.items()},
        {loop: tuple(collector.runs_of[loop].get(k, ()) for k in b) for loop, b in collector.states.items()},
        collector.runs,
        dict(collector.outcomes),
        seeded,
        time.monotonic() - start,
    )
