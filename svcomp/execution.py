"""Run one command under CPU-time, wall-time and memory limits, and measure what it used.

The mechanics are `processes.LimitedCommand`'s (a session of its own, limits set before `exec`,
a tagged environment, a scratch `TMPDIR`, the kill of group and tag at the wall limit, `wait4`).
The limits of a task: RLIMIT_CPU (per process: the verifier's own worker processes get the same
limit each), RLIMIT_AS (address space, per process) and no core files; with `die_with_parent`,
the command is also killed when the runner dies (even by `kill -9`). Here: the task's `Limits`,
and its `Outcome` (output, times, memory, host) for the store.

Only the process that reaps the child may use `RunningProcess`, and it should have no other
threads while it starts one (`preexec_fn` runs between `fork` and `exec`).
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from quokka.verifier.infra.processes import Ended, LimitedCommand, ResourceLimits
from quokka.verifier.infra.store import now

STDERR_TAIL = 4000


@dataclass(frozen=True)
class Limits:
    """Per-task limits. `timeout_s` is the verifier's own budget (`--timeout`)."""

    timeout_s: float
    wall_s: float
    cpu_s: float
    memory_mb: int

    @staticmethod
    def for_timeout(
        timeout_s: float, memory_mb: int = 4096, wall_s: float | None = None, cpu_s: float | None = None
    ) -> Limits:
        """Limits with room above the verifier's budget (start-up, certificate re-check, output)."""
        wall = wall_s if wall_s is not None else timeout_s + max(30.0, timeout_s / 2)
        return Limits(timeout_s, wall, cpu_s if cpu_s is not None else wall, memory_mb)

    def to_json(self) -> dict[str, float | int]:
        return {"timeout_s": self.timeout_s, "wall_s": self.wall_s, "cpu_s": self.cpu_s,
                "memory_mb": self.memory_mb}

    def resources(self) -> ResourceLimits:
        """What the command limits itself to (each of its processes)."""
        return ResourceLimits(memory_mb=self.memory_mb, cpu_s=self.cpu_s, no_core=True)


@dataclass(frozen=True)
class Outcome:
    """What one limited run did. `killed_for` is "wall" when the runner killed it for time."""

    command: tuple[str, ...]
    exit_code: int | None  # None when a signal ended it
    signal: int | None
    stdout: str
    stderr_tail: str
    cpu_s: float
    wall_s: float
    max_rss_mb: float
    killed_for: str = ""
    started_at: str = ""
    finished_at: str = ""
    host: str = ""
    launch_error: str = ""  # the command could not be started at all

    @property
    def signal_name(self) -> str:
        if self.signal is None:
            return ""
        try:
            return signal.Signals(self.signal).name
        except ValueError:
            return f"signal {self.signal}"


class RunningProcess(LimitedCommand):
    """A started command; `poll()` returns its `Outcome` once it has ended (or was killed)."""

    def __init__(
        self, command: Sequence[str], limits: Limits, *, cwd: Path | None = None, die_with_parent: bool = True
    ) -> None:
        self.limits = limits
        self.started_at = now()
        super().__init__(command, limits.resources(), limits.wall_s, cwd=cwd, bound=die_with_parent)

    def poll(self) -> Outcome | None:
        """The outcome if the command has ended; kills it once its wall time is up."""
        ended = self.ended()
        return None if ended is None else self._outcome(ended)

    def wait(self) -> Outcome:
        return self._outcome(self.finish())

    def _outcome(self, ended: Ended) -> Outcome:
        return Outcome(
            command=self.command,
            exit_code=ended.exit_code,
            signal=ended.signal,
            stdout=ended.stdout,
            stderr_tail=ended.stderr[-STDERR_TAIL:],
            cpu_s=ended.cpu_s,
            wall_s=ended.wall_s,
            max_rss_mb=ended.max_rss_mb,
            killed_for=ended.killed_for,
            started_at=self.started_at,
            finished_at=now(),
            host=os.uname().nodename,
        )


def launch_failure(command: Sequence[str], error: Exception) -> Outcome:
    """The outcome of a command that could not be started (missing executable, ...)."""
    stamp = now()
    return Outcome(
        command=tuple(command), exit_code=None, signal=None, stdout="", stderr_tail=str(error),
        cpu_s=0.0, wall_s=0.0, max_rss_mb=0.0, started_at=stamp, finished_at=stamp,
        host=os.uname().nodename, launch_error=f"cannot start {command[0]}: {error}",
    )


def run_limited(command: Sequence[str], limits: Limits, die_with_parent: bool = True) -> Outcome:
    """Run `command` to its end under `limits` (blocking)."""
    try:
        process = RunningProcess(command, limits, die_with_parent=die_with_parent)
    except (OSError, subprocess.SubprocessError) as exc:
        return launch_failure(command, exc)
    return process.wait()
