"""Run one command under CPU-time, wall-time and memory limits, and measure what it used.

The command runs in its own session (process group). `resource` limits are set in the
child before `exec` (`preexec_fn`): RLIMIT_CPU (per process: the verifier's own worker
processes get the same limit each), RLIMIT_AS (address space, per process) and no core
files; with `die_with_parent`, the child is also killed when the runner dies (even by
`kill -9`). The wall-time limit is enforced here: the whole process group is killed, and every
process that carries the run's tag in its environment (`TAG_VARIABLE`, inherited by all
descendants): the verifier's engines run in process groups of their own, and outlive the group.
CPU time and peak memory come from `wait4` (the command and the descendants it waited for).
The command's temporary files go to a folder of its own (`TMPDIR`), removed when it has ended:
what a killed process leaves behind goes with it.

Only the process that reaps the child may use `RunningProcess`, and it should have no other
threads while it starts one (`preexec_fn` runs between `fork` and `exec`).
"""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from quokka.verifier.processes import (
    die_with_parent,
    kill_group,
    kill_tagged,
    tagged_environment,
)

from .store import now

_POLL_S = 0.05
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


def _preexec(limits: Limits, with_parent: bool) -> Callable[[], None]:
    cpu_s = max(1, int(limits.cpu_s + 0.999))
    cpu = _within_hard_limit(resource.RLIMIT_CPU, cpu_s, cpu_s + 5)
    memory = _within_hard_limit(resource.RLIMIT_AS, limits.memory_mb * 1024 * 1024)

    def setup() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, cpu)
        resource.setrlimit(resource.RLIMIT_AS, memory)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if with_parent:
            die_with_parent()

    return setup


def _within_hard_limit(kind: int, soft: int, hard: int | None = None) -> tuple[int, int]:
    """(soft, hard) no higher than the hard limit this process already has (which it cannot raise)."""
    _, current = resource.getrlimit(kind)
    hard = soft if hard is None else hard
    if current != resource.RLIM_INFINITY:
        soft, hard = min(soft, current), min(hard, current)
    return soft, hard


class RunningProcess:
    """A started command; `poll()` returns its `Outcome` once it has ended (or was killed)."""

    def __init__(
        self, command: Sequence[str], limits: Limits, *, cwd: Path | None = None, die_with_parent: bool = True
    ) -> None:
        self.command = tuple(command)
        self.limits = limits
        self.started_at = now()
        self._start = time.monotonic()
        self._stdout: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 - closed by _read_all
        self._stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 - closed by _read_all
        self._killed_for = ""
        self.tag = uuid.uuid4().hex
        self._scratch = Path(tempfile.mkdtemp(prefix="quokka-task-"))
        try:
            self._proc = subprocess.Popen(
                self.command,
                stdin=subprocess.DEVNULL,
                stdout=self._stdout,
                stderr=self._stderr,
                cwd=cwd,
                env={**tagged_environment(self.tag), "TMPDIR": str(self._scratch)},
                start_new_session=True,
                preexec_fn=_preexec(limits, die_with_parent),
            )
        except BaseException:
            self._stdout.close()
            self._stderr.close()
            shutil.rmtree(self._scratch, ignore_errors=True)
            raise

    @property
    def pid(self) -> int:
        return self._proc.pid

    def poll(self) -> Outcome | None:
        """The outcome if the command has ended; kills it once its wall time is up."""
        if _still_running(self.pid):
            if time.monotonic() - self._start > self.limits.wall_s:
                self.kill("wall")
            return None
        kill_group(self.pid)  # descendants left behind; the unreaped leader keeps the group id ours
        kill_tagged(self.tag)
        shutil.rmtree(self._scratch, ignore_errors=True)
        _, status, usage = os.wait4(self.pid, 0)
        self._proc.returncode = os.waitstatus_to_exitcode(status)
        return self._outcome(status, usage)

    def kill(self, why: str = "") -> None:
        """Kill the whole process group (the outcome then comes from `poll`)."""
        self._killed_for = self._killed_for or why
        kill_group(self.pid)
        kill_tagged(self.tag)

    def wait(self) -> Outcome:
        while True:
            outcome = self.poll()
            if outcome is not None:
                return outcome
            time.sleep(_POLL_S)

    def _outcome(self, status: int, usage: resource.struct_rusage) -> Outcome:
        exit_code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
        sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        return Outcome(
            command=self.command,
            exit_code=exit_code,
            signal=sig,
            stdout=_read_all(self._stdout),
            stderr_tail=_read_all(self._stderr)[-STDERR_TAIL:],
            cpu_s=round(usage.ru_utime + usage.ru_stime, 3),
            wall_s=round(time.monotonic() - self._start, 3),
            max_rss_mb=round(usage.ru_maxrss / 1024, 1),
            killed_for=self._killed_for,
            started_at=self.started_at,
            finished_at=now(),
            host=os.uname().nodename,
        )


def _still_running(pid: int) -> bool:
    info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    return info is None


def _read_all(handle: IO[bytes]) -> str:
    handle.seek(0)
    text = handle.read().decode("utf-8", errors="replace")
    handle.close()
    return text


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
