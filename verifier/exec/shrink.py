"""Smaller counterexamples: each input in turn brought as close to 0 as it can be while the run
still fails the same assertion without signed overflow (the interpreter decides), within a time
budget.

Whichever engine found a failing run, and whatever values its solver picked, the inputs shown
are then small and, for the same failing run, always the same: 0 where any value fails, else the
smallest magnitude a binary search finds (with the original sign). Values taken by later inputs
are re-read from the run: shrinking one input can change how many inputs the run takes.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from quokka.verifier.exec.interp import Execution, compile_program
from quokka.verifier.ir import Program

SHRINK_S = 0.5
MAX_STEPS = 100_000
Fails = Callable[[tuple[int, ...]], tuple[int, ...] | None]  # the inputs a failing run took, or None


def shrink(program: Program, inputs: tuple[int, ...], budget_s: float = SHRINK_S) -> tuple[int, ...]:
    """Inputs as small as found that fail the assertion `inputs` fail (`inputs` if they do not)."""
    runner = compile_program(program)

    def execute(values: tuple[int, ...]) -> Execution:
        return runner.run(values, max_steps=MAX_STEPS, max_loop_head_states=0, record_path=False)

    first = execute(inputs)
    if first.outcome != "error" or first.overflows:
        return inputs

    def fails(values: tuple[int, ...]) -> tuple[int, ...] | None:
        run = execute(values)
        ok = run.outcome == "error" and run.error is first.error and not run.overflows
        return run.inputs_used if ok else None

    deadline = time.monotonic() + budget_s
    values = first.inputs_used
    k = 0
    while k < len(values) and time.monotonic() < deadline:
        values = _closest_to_zero(values, k, fails, deadline)
        k += 1
    return values


def _closest_to_zero(values: tuple[int, ...], k: int, fails: Fails, deadline: float) -> tuple[int, ...]:
    """`values` with input k as near 0 as a binary search over its magnitude finds."""
    v = values[k]
    sign = 1 if v > 0 else -1
    best, lo, hi = values, 0, abs(v)  # `hi` fails; search the smallest failing magnitude in [lo, hi]
    while lo < hi and time.monotonic() < deadline:
        mid = (lo + hi) // 2
        found = fails((*values[:k], sign * mid, *values[k + 1 :]))
        if found is None:
            lo = mid + 1
        else:
            best, hi = found, mid
    return best
