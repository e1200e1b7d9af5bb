"""Random testing as a falsification engine: run the program on sampled inputs (`sampling`) until
one reaches the error.

Cheap next to BMC on the bugs that need many loop iterations over nonlinear arithmetic (SV-COMP's
`_unwindbound` tasks), where any large enough input overruns the bound. What it finds is only a
candidate: the portfolio replays it (interpreter, compiled program) before saying FALSE.
"""

from __future__ import annotations

import random
import time

from quokka.verifier.encode.seeds import SeedSource
from quokka.verifier.engines.base import Budget, EngineResult, Status, Stopwatch, unknown
from quokka.verifier.ir import Program
from quokka.verifier.verdict.portfolio import Strategy

from .sampling import SamplingConfig, collect

MAX_SHARE, MAX_S = 0.3, 10.0  # of the budget: testing gives up early, leaving the cores to the provers
SEED_SHARE = 0.2  # of testing's time, for Z3 models of the paths to each loop head
CONFIG = SamplingConfig(
    max_runs=50_000,
    min_runs=0,
    target_states=2**62,  # never "enough states": only an error, the deadline or staleness stop it
    stale_runs=5_000,
    stop_on_error=True,
)


def random_testing(seed: int) -> Strategy:
    """A portfolio strategy: UNSAFE with the inputs of the first run that reaches the error."""

    def strategy(program: Program, budget: Budget) -> EngineResult:
        watch = Stopwatch()
        deadline = min(budget.deadline, time.monotonic() + min(MAX_S, MAX_SHARE * budget.remaining()))
        seeds = SeedSource(
            program, random.Random(seed), time.monotonic() + SEED_SHARE * (deadline - time.monotonic())
        )
        samples = collect(program, seed, deadline, seeds, CONFIG)
        stats = {"runs": samples.run_count, "outcomes": dict(samples.outcomes)}
        if samples.error_inputs is None:
            return unknown(
                "testing", f"none of {samples.run_count} runs reached the error", watch.elapsed(), stats
            )
        return EngineResult(
            "testing",
            Status.UNSAFE,
            f"run {samples.run_count} of random testing reached the error",
            inputs=samples.error_inputs,
            time_s=watch.elapsed(),
            stats=stats,
        )

    return strategy
