"""Compiled fuzzing: the program built by gcc with the replay harness (`replay.compile_c`), run on
many sampled inputs until one reaches the error (for `no-overflow`: until the sanitizer reports
a signed overflow).

A compiled run takes milliseconds where the interpreter needs seconds, so this finds the errors
that only show after tens of thousands of loop iterations (a counter run up to a type's limit, a
product that overflows only for inputs near the top of their range). Inputs mix small values,
the program's constants and their neighbours, type limits and values of random magnitude.

A program with loops and a large constant (`long_loops`: a bound of 10^5 or more) is first run
plainly: every input 0, then 1, then each of its constants, each run given seconds, not half of
one (together at most half of the campaign), so a counter that fails only after tens of millions
of iterations is found at once.

What it finds is a candidate like any engine's: the inputs of the run are read back by the
interpreter (uninitialised locals at 0, as the compiled program has them) and the portfolio
replays them in the interpreter and the compiled program again before it says FALSE.
"""

from __future__ import annotations

import random
import tempfile
import time
from pathlib import Path

from quokka.verifier.exec.interp import LONG_RUN_STEPS, Runner, compile_program
from quokka.verifier.exec.replay import CompiledProgram, ReplayResult, compile_c, is_nondet_call
from quokka.verifier.ir import Havoc, Program, VarDecl, constants, walk_stmts

from .base import Budget, EngineResult, Status, Stopwatch, unknown

ENGINE = "fuzz"
MAX_SHARE, MAX_S = 0.5, 8.0  # of the budget: the provers need the cores more once this has tried
RUN_TIMEOUT_S = 0.5  # one run (a loop the inputs never let end is cut off)
LARGE_BOUND = 100_000  # a constant this large makes the plain runs come first (`long_loops`)
PLAIN_RUN_S, MAX_PLAIN = 3.0, 8  # a plain run may take this long (2^30 iterations at -O0)
PLAIN_SHARE = 0.5  # of the campaign's time at most for the plain runs
MAP_STEPS = 200_000  # interpreter steps for reading a run's inputs back (the replay runs it further)
VECTOR = 48  # inputs offered to one run; a run that asks for more gets 0s
MAX_CONSTANTS = 24
LIMITS = tuple(
    v for bits in (7, 8, 15, 16, 31, 32, 63, 64) for v in ((1 << bits) - 1, 1 << bits, -(1 << bits))
)


def check(program: Program, budget: Budget, seed: int = 0) -> EngineResult:
    """UNSAFE with the inputs of the first compiled run that reaches the error, else UNKNOWN."""
    watch = Stopwatch()
    source = Path(program.file)
    if source.suffix not in (".c", ".i") or not source.is_file():
        return unknown(ENGINE, "no C file to compile", watch.elapsed())
    with tempfile.TemporaryDirectory(prefix="quokka-fuzz-") as tmp:
        built = compile_c(source, program.data_model, Path(tmp), property_name=program.property_name)
        if isinstance(built, ReplayResult):
            return unknown(ENGINE, f"cannot build the program: {built.detail}", watch.elapsed())
        deadline = time.monotonic() + min(MAX_S, MAX_SHARE * budget.remaining())
        return _campaign(program, built, random.Random(seed), deadline, watch)


def _campaign(
    program: Program, built: CompiledProgram, rng: random.Random, deadline: float, watch: Stopwatch
) -> EngineResult:
    pool = _constants(program)
    plain = _plain_vectors(program) if long_loops(program) else []
    plain_until = time.monotonic() + PLAIN_SHARE * (deadline - time.monotonic())
    runs = 0
    while time.monotonic() < deadline:
        if plain and time.monotonic() < plain_until:
            values, end = plain.pop(0), min(plain_until, time.monotonic() + PLAIN_RUN_S)
        else:
            values, end = _vector(rng, pool), time.monotonic() + RUN_TIMEOUT_S
        runs += 1
        outcome = built.run(values, timeout_s=max(0.05, min(end, deadline) - time.monotonic()))
        if outcome.status == "reached":
            found = f"run {runs} of the compiled program reached {built.error}"
            read = values if outcome.inputs_read is None else values[: outcome.inputs_read]
            inputs = _interpreter_inputs(program, read)
            return EngineResult(ENGINE, Status.UNSAFE, found, inputs=inputs, time_s=watch.elapsed(),
                                stats={"runs": runs})  # fmt: skip
    return unknown(
        ENGINE, f"none of {runs} compiled runs reached {built.error}", watch.elapsed(), {"runs": runs}
    )


def long_loops(program: Program) -> bool:
    """Whether `program` has loops and a constant of at least `LARGE_BOUND` (a loop that may run
    that often: its plain runs come first, each given `PLAIN_RUN_S`)."""
    return bool(program.loops) and any(abs(c) >= LARGE_BOUND for c in constants(program))


def _plain_vectors(program: Program) -> list[tuple[int, ...]]:
    """The plain runs: every input 0, every input 1, then every input one of the program's
    constants (smallest magnitude first: the ends of the ranges it assumes among them)."""
    values = dict.fromkeys([0, 1, *sorted(constants(program), key=abs)])
    return [(v,) * VECTOR for v in list(values)[:MAX_PLAIN]]


def _interpreter_inputs(program: Program, values: tuple[int, ...]) -> tuple[int, ...]:
    """The values of every `Havoc` on the run the compiled program made, reading `values`: the
    nondet calls take them in order (then 0s), uninitialised locals 0. A run longer than
    `MAP_STEPS` is mapped that far and the values it has not reached follow, when that is the
    same thing (every `Havoc` a nondet call, or none of `values` left); else up to `LONG_RUN_STEPS`."""
    runner = compile_program(program)
    mapped, rest = _mapped(runner, values, MAP_STEPS)
    if rest and not all(is_nondet_call(h.origin) for h in walk_stmts(program.body) if isinstance(h, Havoc)):
        mapped, rest = _mapped(runner, values, LONG_RUN_STEPS)
    return (*mapped, *rest)


def _mapped(runner: Runner, values: tuple[int, ...], steps: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The `Havoc` values of the first `steps` steps, and the `values` not read by then."""
    answers = iter(values)
    taken = 0

    def source(decl: VarDecl, havoc: Havoc) -> int:
        nonlocal taken
        if not is_nondet_call(havoc.origin):
            return 0
        taken += 1
        return next(answers, 0)

    run = runner.run(source, max_steps=steps, max_loop_head_states=0, record_path=False)
    return run.inputs_used, values[taken:] if run.outcome == "limit" else ()


def _constants(program: Program) -> list[int]:
    """The program's constants and their neighbours, smallest magnitude first."""
    near = {v + d for v in constants(program) for d in (-1, 0, 1)}
    return sorted(near, key=abs)[:MAX_CONSTANTS]


def _vector(rng: random.Random, pool: list[int]) -> tuple[int, ...]:
    """One run's inputs: all of one kind, or each of a kind drawn anew."""
    kinds = (_small, _constant, _limit, _magnitude)
    if rng.random() < 0.5:
        kind = rng.choice(kinds)
        return tuple(kind(rng, pool) for _ in range(VECTOR))
    return tuple(rng.choice(kinds)(rng, pool) for _ in range(VECTOR))


def _small(rng: random.Random, pool: list[int]) -> int:
    return rng.randint(-16, 16)


def _constant(rng: random.Random, pool: list[int]) -> int:
    return rng.choice(pool) if pool else _small(rng, pool)


def _limit(rng: random.Random, pool: list[int]) -> int:
    return rng.choice(LIMITS) + rng.randint(-2, 2)


def _magnitude(rng: random.Random, pool: list[int]) -> int:
    value = rng.randint(0, 1 << rng.randint(1, 63))
    return value if rng.random() < 0.7 else -value
