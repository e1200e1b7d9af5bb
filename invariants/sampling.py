"""Run a program many times in the IR interpreter and collect the states at its loop heads.

Inputs come from a fixed rotation of strategies (small values around 0, small non-negative
values, boundary values of the type mixed with small ones, values anywhere in the type with
magnitudes spread over the bit widths; for a float, its IEEE encoding: small values, halves,
zeros, infinities, NaN, any bit pattern) with growing radii, and from seeds: input prefixes that
Z3 finds for the path to a loop head (`seeds.SeedSource`), continued with small values. Every
other run may be seeded, for the loop that the fewest runs have reached so far: a few seeds for
every loop, more while random inputs rarely reach it (a Z3 model costs far more than a run).

A run that hits undefined behaviour (division by zero, bad shift, signed overflow) contributes
nothing; a run that ends blocked, in an error or at the step limit keeps the states it reached.
Sampling stops at the deadline, or when every loop has enough states from enough runs, or when
runs stop finding new states.
"""

from __future__ import annotations

import itertools
import random
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from math import prod

from quokka.verifier.encode.seeds import SeedSource
from quokka.verifier.exec.interp import Runner, compile_program
from quokka.verifier.ir import (
    ArrayType,
    FloatType,
    Havoc,
    IntType,
    Label,
    Loop,
    Program,
    VarDecl,
    fpsem,
    semantics,
    walk_stmts,
)

State = Mapping[str, int]
MODES = ("small", "positive", "small", "boundary", "positive", "tiny", "wide")
RADII = (2, 5, 10, 20, 40, 100, 1000)
RUN_IDS = 4


@dataclass(frozen=True)
class SamplingConfig:
    max_runs: int = 2000
    min_runs: int = 80
    # Sampling may stop when every loop has this many distinct states, reached in this many runs
    # (the inputs that stay fixed during a loop vary only from run to run); a loop that no run
    # reached in `give_up_runs` runs is not waited for.
    target_states: int = 800
    target_reaching_runs: int = 60
    give_up_runs: int = 300
    stale_runs: int = 150  # stop when this many runs in a row reached a loop but no new state
    # Seeded runs per loop: `few_seeds`, then more only while fewer than `rare_reach` of the
    # random runs reach the loop.
    few_seeds: int = 12
    rare_reach: float = 0.1
    max_states: int = 4000  # distinct states kept per loop
    max_steps: int = 20_000
    heads_per_run: int = 400
    stop_on_error: bool = False  # end sampling at the first run that reaches the error
    # Then every input vector in the box around those of the runs that reached a loop, when it
    # is this small (each side widened by `box_margin`): small bounded inputs are covered.
    max_box: int = 3000
    box_margin: int = 2
    max_box_inputs: int = 4


@dataclass(frozen=True)
class Samples:
    """Distinct loop-head states per loop id, and how they were obtained.

    `runs[loop][k]` numbers (some of) the runs that reached `states[loop][k]`, at most
    `RUN_IDS` of them; runs cut short by a limit are not counted. `entry[loop][k]` says whether
    the state was seen on entering the loop (before its first iteration).
    """

    states: Mapping[str, tuple[State, ...]]
    runs: Mapping[str, tuple[tuple[int, ...], ...]]
    entry: Mapping[str, tuple[bool, ...]]
    run_count: int
    outcomes: Mapping[str, int]
    seeded_runs: int
    elapsed_s: float
    error_inputs: tuple[int, ...] | None = None  # the inputs of the first run that reached the error
    exhaustive: bool = False  # every input of a (non-empty) `input_box` was run


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
        if isinstance(ty, FloatType):
            return draw_float(self.rng, ty, self.mode, self.radius)
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
    if mode == "wide":
        return _wide(rng, ty)
    lo = 0 if mode == "positive" or not ty.signed else -radius
    low: int = ty.min
    high: int = ty.max
    return max(low, min(high, rng.randint(lo, radius)))


_SPECIAL_FLOATS = (0.0, -0.0, 1.0, -1.0, 0.5, float("inf"), float("-inf"), float("nan"), 1e308, 5e-324)


def draw_float(rng: random.Random, ty: FloatType, mode: str, radius: int) -> int:
    """One input for a float of type `ty`: the IEEE encoding of the value (see `fpsem`)."""
    if mode == "wide" and rng.random() < 0.3:
        bits: int = rng.getrandbits(ty.bits)
        return bits
    if mode == "wide":  # magnitudes spread over the exponents (where rounding starts to bite)
        value = rng.choice([-1, 1]) * rng.uniform(1, 2) * 2.0 ** rng.randint(-64, 96)
        if rng.random() < 0.5:
            value = float(round(value))
    elif mode == "boundary" and rng.random() < 0.3:
        value = rng.choice(_SPECIAL_FLOATS)
    else:
        lo = 0 if mode == "positive" else -radius
        hi = 2 if mode == "tiny" else radius
        value = rng.uniform(lo, hi)
        if rng.random() < 0.5:  # integers and halves: exact, and what loop bounds compare with
            value = round(2 * value) / 2
    encoded: int = fpsem.to_bits(fpsem.round_to(value, ty), ty)
    return encoded


def _wide(rng: random.Random, ty: IntType) -> int:
    """Anywhere in the type: uniformly, or with the magnitude's bit width uniform."""
    if rng.random() < 0.5:
        value: int = rng.randint(ty.min, ty.max)
        return value
    magnitude = rng.getrandbits(rng.randint(0, ty.bits - 1 if ty.signed else ty.bits))
    wrapped: int = semantics.wrap(-magnitude if ty.signed and rng.random() < 0.5 else magnitude, ty)
    return wrapped


@dataclass
class _Collector:
    program: Program
    config: SamplingConfig
    runner: Runner
    states: dict[str, dict[tuple[int, ...], State]] = field(default_factory=dict)
    runs_of: dict[str, dict[tuple[int, ...], tuple[int, ...]]] = field(default_factory=dict)
    reaching: dict[str, int] = field(default_factory=dict)  # runs that reached each loop
    stale: int = 0  # runs in a row that reached a loop head but found no new state
    entries: set[tuple[str, tuple[int, ...]]] = field(default_factory=set)
    seeded: dict[str, int] = field(default_factory=dict)  # seeded runs aimed at each loop
    seeded_reach: dict[str, int] = field(default_factory=dict)  # seeded runs that reached it
    outcomes: dict[str, int] = field(default_factory=dict)
    runs: int = 0
    error_inputs: tuple[int, ...] | None = None
    reaching_inputs: set[tuple[int, ...]] = field(default_factory=set)  # of runs that reached a loop
    deterministic: bool = False  # a run read no input: every run is that run

    def run(self, inputs: InputStream) -> None:
        self.runs += 1
        seeded = bool(inputs.prefix)
        ex = self.runner.run(
            inputs,
            max_steps=self.config.max_steps,
            max_loop_head_states=self.config.heads_per_run,
            record_path=False,
        )
        outcome = "ub" if ex.overflows else ex.outcome
        self.outcomes[outcome] = self.outcomes.get(outcome, 0) + 1
        self.deterministic = self.deterministic or not ex.inputs_used
        if outcome == "ub":
            return
        if outcome == "error" and self.error_inputs is None:
            self.error_inputs = ex.inputs_used
        if ex.loop_heads:
            self.reaching_inputs.add(ex.inputs_used)
        for loop_id in {head.loop_id for head in ex.loop_heads}:
            self.reaching[loop_id] = self.reaching.get(loop_id, 0) + 1
            if seeded:
                self.seeded_reach[loop_id] = self.seeded_reach.get(loop_id, 0) + 1
        # A run cut short by a limit supports no bound: the limit, not the program, decided
        # how far its variables got.
        cut_short = ex.outcome == "limit" or len(ex.loop_heads) >= self.config.heads_per_run
        fresh = False
        for head in ex.loop_heads:
            key = tuple(head.values.values())
            bucket, runs = self.states.setdefault(head.loop_id, {}), self.runs_of.setdefault(head.loop_id, {})
            if key not in bucket and len(bucket) < self.config.max_states:
                bucket[key] = head.values
                fresh = True
            if head.iteration == 0:
                self.entries.add((head.loop_id, key))
            have = runs.get(key, ())
            if key in bucket and not cut_short and len(have) < RUN_IDS and self.runs not in have:
                runs[key] = (*have, self.runs)
        if ex.loop_heads:
            self.stale = 0 if fresh else self.stale + 1

    def seed(self, seeds: SeedSource) -> tuple[int, ...] | None:
        """A seed for the loop reached in the fewest runs so far, if it still needs seeds: a few
        for every loop, more while random inputs rarely reach it (Z3 is slow next to a run)."""
        loops = [i.id for i in self.program.loops if self._wants_seed(i.id) and seeds.available(i.id)]
        if not loops:
            return None
        loop_id = min(loops, key=lambda lid: self.reaching.get(lid, 0))
        self.seeded[loop_id] = self.seeded.get(loop_id, 0) + 1
        seed: tuple[int, ...] | None = seeds.next(loop_id)
        return seed

    def _wants_seed(self, loop_id: str) -> bool:
        config = self.config
        if self._satisfied(loop_id):
            return False
        if self.seeded.get(loop_id, 0) < config.few_seeds:
            return True
        random_runs = self.runs - sum(self.seeded.values())
        random_reach = self.reaching.get(loop_id, 0) - self.seeded_reach.get(loop_id, 0)
        return random_reach < config.rare_reach * max(1, random_runs)

    def enough(self) -> bool:
        config = self.config
        if (config.stop_on_error and self.error_inputs is not None) or self.deterministic:
            return True
        if self.runs < config.min_runs:
            return False
        if self.stale >= config.stale_runs:
            return True
        for info in self.program.loops:
            if self.reaching.get(info.id, 0) == 0 and self.runs >= config.give_up_runs:
                continue
            if not self._satisfied(info.id):
                return False
        return True

    def _satisfied(self, loop_id: str) -> bool:
        states, reaching = len(self.states.get(loop_id, {})), self.reaching.get(loop_id, 0)
        return states >= self.config.target_states and reaching >= self.config.target_reaching_runs


def input_box(
    vectors: set[tuple[int, ...]], program: Program, config: SamplingConfig
) -> Iterator[tuple[int, ...]]:
    """Every vector of the box spanned by the inputs that `vectors` give to the `Havoc`s before the
    first loop, each side widened by `box_margin` within its type, when the box has at most
    `max_box` points (and at most `max_box_inputs` sides are nondet inputs; uninitialised locals
    get 0); otherwise none."""
    inputs = _inputs_before_loops(program)
    prefixes = [v[: len(inputs)] for v in vectors if len(v) >= len(inputs)]
    if not prefixes or not 0 < sum(nondet for _, nondet in inputs) <= config.max_box_inputs:
        return iter(())
    bounds = []
    for k, (ty, nondet) in enumerate(inputs):
        seen = [v[k] for v in prefixes]
        lo, hi = max(ty.min, min(seen) - config.box_margin), min(ty.max, max(seen) + config.box_margin)
        bounds.append((lo, hi) if nondet else (0, 0))
    if prod(hi - lo + 1 for lo, hi in bounds) > config.max_box:
        return iter(())
    return itertools.product(*(range(lo, hi + 1) for lo, hi in bounds))


def _inputs_before_loops(program: Program) -> list[tuple[IntType, bool]]:
    """The types of the integer `Havoc`s before the first loop, in program order, and whether each
    is a nondet input (not an uninitialised local)."""
    out: list[tuple[IntType, bool]] = []
    for stmt in walk_stmts(program.body):
        if isinstance(stmt, Loop) or (isinstance(stmt, Label) and stmt.loop is not None):
            break
        if isinstance(stmt, Havoc):
            ty = program.var(stmt.target).type
            if not isinstance(ty, IntType):
                break
            out.append((ty, stmt.origin != "uninitialised"))
    return out


def collect(
    program: Program,
    seed: int,
    deadline: float,
    seeds: SeedSource | None = None,
    config: SamplingConfig | None = None,
) -> Samples:
    """Run `program` until `deadline` (time.monotonic) or until every loop has enough states.

    Without `seeds`, every run draws its inputs at random.
    """
    config = config or SamplingConfig()
    start = time.monotonic()
    rng = random.Random(seed)
    collector = _Collector(program, config, compile_program(program))
    seeded = 0
    while collector.runs < config.max_runs and time.monotonic() < deadline and not collector.enough():
        k = collector.runs
        mode, radius = MODES[k % len(MODES)], RADII[(k // len(MODES)) % len(RADII)]
        prefix = collector.seed(seeds) if seeds is not None and k % 2 == 0 else None
        seeded += prefix is not None
        collector.run(InputStream(rng, mode, radius, prefix or ()))
    exhaustive = _run_box(collector, input_box(collector.reaching_inputs, program, config), rng, deadline)
    return Samples(
        {loop: tuple(bucket.values()) for loop, bucket in collector.states.items()},
        {loop: tuple(collector.runs_of[loop].get(k, ()) for k in b) for loop, b in collector.states.items()},
        {loop: tuple((loop, k) in collector.entries for k in b) for loop, b in collector.states.items()},
        collector.runs,
        dict(collector.outcomes),
        seeded,
        time.monotonic() - start,
        collector.error_inputs,
        exhaustive,
    )


def _run_box(
    collector: _Collector, box: Iterator[tuple[int, ...]], rng: random.Random, deadline: float
) -> bool:
    """Run every input vector of `box`; whether there was one and all of them ran."""
    ran = False
    stop_on_error = collector.config.stop_on_error
    for vector in box:
        if time.monotonic() >= deadline or (stop_on_error and collector.error_inputs is not None):
            return False
        collector.run(InputStream(rng, "tiny", 2, vector))
        ran = True
    return ran
