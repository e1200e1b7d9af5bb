"""The result type every proving engine returns, and the time budget every engine honours."""

from __future__ import annotations

import enum
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from quokka.verifier.infra.profile import Recorder

from ..ir import Expr


class Status(enum.Enum):
    SAFE = "safe"
    UNSAFE = "unsafe"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class EngineResult:
    """What an engine concluded.

    `invariants` (SAFE): loop id -> IR invariant over IR variable names, the certificate.
    `inputs` (UNSAFE): the Havoc values in execution order, for concrete replay.
    `reason` is always filled: why the answer is unknown, or what proved it.
    Results are picklable (engines may run in child processes).
    """

    engine: str
    status: Status
    reason: str
    invariants: Mapping[str, Expr] = field(default_factory=dict)
    inputs: tuple[int, ...] | None = None
    time_s: float = 0.0
    stats: Mapping[str, object] = field(default_factory=dict)

    @property
    def safe(self) -> bool:
        return self.status is Status.SAFE

    @property
    def unsafe(self) -> bool:
        return self.status is Status.UNSAFE


def unknown(
    engine: str, reason: str, time_s: float = 0.0, stats: Mapping[str, object] | None = None
) -> EngineResult:
    """An UNKNOWN result."""
    return EngineResult(engine, Status.UNKNOWN, reason, time_s=time_s, stats=dict(stats or {}))


@dataclass(frozen=True)
class Budget:
    """A wall-clock deadline on `time.monotonic()`; engines derive their Z3 timeouts from it.
    `recorder` times the solver calls made under it (`profile`); derived budgets share it."""

    deadline: float
    recorder: Recorder = field(default_factory=Recorder, compare=False, repr=False)

    @staticmethod
    def of(seconds: float) -> Budget:
        """A budget that ends `seconds` from now."""
        return Budget(time.monotonic() + seconds)

    @staticmethod
    def unlimited() -> Budget:
        return Budget(float("inf"))

    def remaining(self) -> float:
        """Seconds left (never negative)."""
        return max(0.0, self.deadline - time.monotonic())

    @property
    def expired(self) -> bool:
        return self.remaining() <= 0.0

    def z3_timeout_ms(self, cap_s: float | None = None) -> int:
        """A Z3 `timeout` parameter (ms, >= 1) for the time left, optionally capped at `cap_s`."""
        left = self.remaining()
        if cap_s is not None:
            left = min(left, cap_s)
        if left == float("inf"):
            return 2**31 - 1
        return max(1, min(2**31 - 1, int(left * 1000)))

    def sub(self, seconds: float) -> Budget:
        """A budget ending after `seconds` or at this one's deadline, whichever comes first."""
        return Budget(min(self.deadline, time.monotonic() + seconds), self.recorder)

    def fraction(self, share: float) -> Budget:
        """A budget for `share` (0..1) of the time left."""
        left = self.remaining()
        return self if left == float("inf") else Budget(time.monotonic() + left * share, self.recorder)


class Stopwatch:
    """Measures an engine's run time for `EngineResult.time_s`."""

    def __init__(self) -> None:
        self.start = time.monotonic()

    def elapsed(self) -> float:
        return time.monotonic() - self.start
