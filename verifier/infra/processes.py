"""The one home of child processes: starting them, limiting them, timing them and killing them.

A child first does what `ChildSetup` says: it leaves its parent's process group (so that killing
its group kills what it started), asks Linux to kill it when its parent dies (a group of its own
also means that nothing else kills it when the verifier process dies, e.g. `kill -9` of a batch
worker), moves its temporary files, and limits itself (`ResourceLimits`, never above the hard
limits it inherited). A Python callable runs in a forked child with a pipe back (`start_child`);
a command runs in a session of its own, timed, killed at its wall limit and reaped with its
resource usage (`LimitedCommand`).

Supervisors (a batch's runner, the language server) also tag the environment of what they start
(`TAG_VARIABLE`, inherited by every descendant), and kill by tag what is left (`kill_run`).
What a killed process cannot clean up, its supervisor does: each run gets a scratch folder for
its temporary files (`TMPDIR`, which `tempfile` and gcc both honour), removed once the run and
everything it started are gone (`scratch_folder`).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import multiprocessing as mp
import multiprocessing.connection as mpc
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Literal, TypeVar

from quokka.verifier.errors import EngineError

T = TypeVar("T")

_PR_SET_PDEATHSIG = 1
_POLL_S = 0.05
SUPERVISOR_VARIABLE = "QUOKKA_SUPERVISOR"  # the pid a supervised run dies with
TAG_VARIABLE = "QUOKKA_SUPERVISED"  # the tags of every supervised run a process descends from
CPU_GRACE_S = 5  # SIGXCPU at the soft CPU limit, SIGKILL this much later (the hard limit)


# ----------------------------------------------------------------------------- limits


@dataclass(frozen=True)
class ResourceLimits:
    """What a child limits itself to (None, 0, False: not limited)."""

    memory_mb: int | None = None  # address space, per process (RLIMIT_AS)
    cpu_s: float | None = None  # CPU time, per process (RLIMIT_CPU; whole seconds, at least 1)
    no_core: bool = False  # no core files (RLIMIT_CORE)
    nice: int = 0  # niceness increment


def within_hard_limit(kind: int, soft: int, hard: int | None = None) -> tuple[int, int]:
    """(soft, hard), `hard` defaulting to `soft`, no higher than the hard limit of `kind` this
    process already has (which it cannot raise)."""
    _, current = resource.getrlimit(kind)
    hard = soft if hard is None else hard
    if current != resource.RLIM_INFINITY:  # (RLIM_INFINITY is -1: never the smaller one)
        soft = min(soft, current)
        hard = current if hard == resource.RLIM_INFINITY else min(hard, current)
    return soft, hard


def apply_limits(limits: ResourceLimits) -> None:
    """Limit this process (and what it starts) to `limits`."""
    if limits.nice:
        os.nice(limits.nice)
    if limits.cpu_s is not None:
        seconds = max(1, int(limits.cpu_s + 0.999))
        resource.setrlimit(resource.RLIMIT_CPU, within_hard_limit(resource.RLIMIT_CPU, seconds,
                                                                  seconds + CPU_GRACE_S))
    if limits.memory_mb is not None:
        # the hard limit stays: a sanitized compiled run (AddressSanitizer reserves terabytes of
        # shadow address space) lifts the soft one for itself (`replay.LIFT_ADDRESS_LIMIT`)
        memory = within_hard_limit(resource.RLIMIT_AS, limits.memory_mb * 1024 * 1024, resource.RLIM_INFINITY)
        resource.setrlimit(resource.RLIMIT_AS, memory)
    if limits.no_core:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


# ----------------------------------------------------------------------------- a child's first steps


def die_with_parent(parent: int | None = None) -> None:
    """Have the kernel SIGKILL this process when its parent exits (Linux; elsewhere nothing).
    `parent`: the pid the parent had, when known: a parent that died before this call is
    noticed too (this process was already handed to another)."""
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if parent is not None and os.getppid() != parent:
        os._exit(1)


def use_scratch(folder: Path) -> None:
    """Put the temporary files of this process, and of the programs it starts, under `folder`.
    Only for a child process that is about to run a job and then exit: it changes the process's
    own environment and `tempfile`'s folder."""
    os.environ["TMPDIR"] = str(folder)
    tempfile.tempdir = str(folder)


def _nothing() -> None:
    pass


@dataclass(frozen=True)
class ChildSetup:
    """What a new child does first, built in its parent: the first call of a forked job, or a
    command's `preexec_fn` (`subprocess.Popen`), in this order: a process group ("group") or a
    session ("session") of its own, death with its parent `parent` (None: it may outlive it),
    its temporary files under `scratch`, then `limits`."""

    limits: ResourceLimits = field(default_factory=ResourceLimits)
    detach: Literal["", "group", "session"] = ""
    parent: int | None = None
    scratch: Path | None = None

    def __call__(self, before_limits: Callable[[], object] = _nothing) -> None:
        """`before_limits` runs just before the limits are set: start threads there (a thread's
        stack is address space too)."""
        if self.detach == "group":
            os.setpgrp()
        elif self.detach == "session":
            os.setsid()
        if self.parent is not None:
            die_with_parent(self.parent)
        if self.scratch is not None:
            use_scratch(self.scratch)
        before_limits()
        apply_limits(self.limits)


# ----------------------------------------------------------------------------- forked children


@dataclass
class Child:
    """A forked child running a Python callable; what it sends comes through `conn`."""

    name: str
    process: mp.process.BaseProcess
    conn: mpc.Connection

    @property
    def pid(self) -> int | None:
        return self.process.pid

    def kill(self) -> None:
        """SIGKILL the child, and the process group it leads if it has one of its own."""
        if self.process.pid is not None:
            kill_group(self.process.pid)
            if self.process.exitcode is None:  # not reaped yet: the pid is still this child's
                self.process.kill()

    def close(self, timeout_s: float = 5.0) -> None:
        """Reap the (killed or finished) child, waiting at most `timeout_s`, and close the pipe."""
        self.process.join(timeout=timeout_s)
        self.conn.close()


def start_child(name: str, job: Callable[[mpc.Connection], None], *, daemon: bool = False) -> Child:
    """Fork a child process (`quokka-<name>`) that runs `job` with the sending end of a pipe. The
    job's first step is its `ChildSetup` (with `parent=os.getpid()` of this process, to die with it)."""
    ctx = mp.get_context("fork")
    receiver, sender = ctx.Pipe(duplex=False)
    process = ctx.Process(target=job, args=(sender,), name=f"quokka-{name}", daemon=daemon)
    process.start()
    sender.close()
    return Child(name, process, receiver)


def call_until(name: str, job: Callable[[], T], deadline: float, setup: ChildSetup) -> T | None:
    """`job()` computed in a forked child (`setup` first: give it a process group of its own, so
    that what it starts, e.g. a compiler, dies with it), None when it has not answered by
    `deadline` (`time.monotonic()`; it is killed then). A job that raises, or a child that dies
    without an answer, raises EngineError with what happened."""
    child = start_child(name, functools.partial(_answer, job, setup))
    try:
        left = deadline - time.monotonic()
        if not child.conn.poll(None if left == float("inf") else max(0.0, left)):
            return None
        try:
            failed, value = child.conn.recv()
        except (EOFError, OSError):
            raise EngineError(f"{name}: the process ended without an answer (exit code "
                              f"{child.process.exitcode})") from None
        if failed:
            raise EngineError(f"{name} failed: {value}")
        answer: T = value
        return answer
    finally:
        child.kill()
        child.close()


def _answer(job: Callable[[], object], setup: ChildSetup, conn: mpc.Connection) -> None:
    setup()
    try:
        conn.send((False, job()))
    except Exception as exc:
        conn.send((True, f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=6)}"))
    finally:
        conn.close()


# ----------------------------------------------------------------------------- groups and tags


def kill_group(pid: int) -> None:
    """SIGKILL the process group `pid` (gone already: nothing)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


@contextlib.contextmanager
def paused(groups: Iterable[int]) -> Iterator[None]:
    """Stop the process groups `groups` (SIGSTOP) while the block runs, and continue them after
    (SIGCONT), so that the block has the cores to itself."""
    stopped = [pid for pid in groups if _signal_group(pid, signal.SIGSTOP)]
    try:
        yield
    finally:
        for pid in stopped:
            _signal_group(pid, signal.SIGCONT)


def _signal_group(pid: int, sig: signal.Signals) -> bool:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def new_tag() -> str:
    """A fresh tag for a supervised run."""
    return os.urandom(16).hex()  # as random as uuid4's, without importing uuid


def tagged_environment(tag: str) -> dict[str, str]:
    """This process's environment, with `tag` added to the tags its children inherit."""
    env = dict(os.environ)
    env[TAG_VARIABLE] = " ".join([*env.get(TAG_VARIABLE, "").split(), tag])
    return env


def supervised_environment(tag: str, scratch: Path, supervisor: int | None = None) -> dict[str, str]:
    """The environment of a supervised run: tagged with `tag`, its temporary files in `scratch`,
    and, with `supervisor`, the pid it is to die with (`die_with_supervisor`)."""
    env = {**tagged_environment(tag), "TMPDIR": str(scratch)}
    return env if supervisor is None else {**env, SUPERVISOR_VARIABLE: str(supervisor)}


def die_with_supervisor() -> None:
    """The first step of a supervised run that was started without a parent-death signal (the
    language server's asynchronous start): it dies with the supervisor its environment names.
    The variable is removed, so that what the run starts is not bound to the supervisor too."""
    supervisor = os.environ.pop(SUPERVISOR_VARIABLE, "")
    if supervisor.isdigit():
        die_with_parent(int(supervisor))


def tagged_processes(tag: str) -> list[int]:
    """The live processes (other than this one) whose environment carries `tag`."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and int(entry.name) != os.getpid() and _has_tag(entry.name, tag):
            found.append(int(entry.name))
    return found


def _has_tag(pid: str, tag: str) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:  # empty for a zombie
            variables = handle.read().split(b"\0")
    except OSError:  # gone meanwhile, or another user's
        return False
    prefix = f"{TAG_VARIABLE}=".encode()
    return any(v.startswith(prefix) and tag.encode() in v[len(prefix) :].split() for v in variables)


def kill_tagged(tag: str) -> int:
    """SIGKILL every process that carries `tag`; how many there were."""
    pids = tagged_processes(tag)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    return len(pids)


def kill_run(group: int, tag: str | None) -> None:
    """SIGKILL a supervised run: its process group `group`, and what carries its `tag` (the
    verifier's engines run in process groups of their own: they outlive the group)."""
    kill_group(group)
    if tag is not None:
        kill_tagged(tag)


@contextlib.contextmanager
def scratch_folder(prefix: str) -> Iterator[Path]:
    """A fresh folder for a supervised run's temporary files, removed after the block, whatever
    was left in it (by a process killed before it could clean up)."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# ----------------------------------------------------------------------------- limited commands


@dataclass(frozen=True)
class Ended:
    """How a `LimitedCommand` ended."""

    status: int  # the wait status
    usage: resource.struct_rusage  # the command's, with the descendants it waited for
    wall_s: float
    killed_for: str  # why it was killed ("wall": at its wall limit); "" if it was not
    stdout: str
    stderr: str

    @property
    def exit_code(self) -> int | None:
        """None when a signal ended it."""
        return os.WEXITSTATUS(self.status) if os.WIFEXITED(self.status) else None

    @property
    def signal(self) -> int | None:
        return os.WTERMSIG(self.status) if os.WIFSIGNALED(self.status) else None

    @property
    def cpu_s(self) -> float:
        return round(self.usage.ru_utime + self.usage.ru_stime, 3)

    @property
    def max_rss_mb(self) -> float:
        return round(self.usage.ru_maxrss / 1024, 1)


class LimitedCommand:
    """A command started in a session of its own under `limits` (`ChildSetup`, as `preexec_fn`),
    dying with this process unless `bound` is False; its environment tagged (`tag`), its temporary
    files in a scratch folder removed when it has ended, its output in files (a grandchild holding
    a pipe would keep it from ending). It is killed (group and tag) once `wall_s` has passed;
    `ended()` reaps it with its resource usage (`wait4`).

    Only the process that reaps the child may use it, and it should have no other threads while
    it starts one (`preexec_fn` runs between `fork` and `exec`)."""

    def __init__(self, command: Sequence[str], limits: ResourceLimits, wall_s: float, *,
                 cwd: Path | None = None, bound: bool = True) -> None:
        self.command, self.wall_s, self.tag = tuple(command), wall_s, new_tag()
        self._started = time.monotonic()
        self._killed_for = ""
        with contextlib.ExitStack() as held:  # closed and removed at once if the start fails
            self._stdout: IO[bytes] = held.enter_context(tempfile.TemporaryFile())
            self._stderr: IO[bytes] = held.enter_context(tempfile.TemporaryFile())
            scratch = held.enter_context(scratch_folder("quokka-task-"))
            setup = ChildSetup(limits, detach="session", parent=os.getpid() if bound else None)
            self._proc = subprocess.Popen(
                self.command, stdin=subprocess.DEVNULL, stdout=self._stdout, stderr=self._stderr, cwd=cwd,
                env=supervised_environment(self.tag, scratch), preexec_fn=setup,
            )
            self._held = held.pop_all()  # the output files and the scratch folder, released by `ended`

    @property
    def pid(self) -> int:
        return self._proc.pid

    def ended(self) -> Ended | None:
        """How the command ended, once it has; kills it once its wall time is up."""
        if _still_running(self.pid):
            if time.monotonic() - self._started > self.wall_s:
                self.kill("wall")
            return None
        kill_run(self.pid, self.tag)  # descendants left behind; the unreaped leader keeps the group id ours
        _, status, usage = os.wait4(self.pid, 0)
        self._proc.returncode = os.waitstatus_to_exitcode(status)
        with self._held:
            return Ended(status, usage, round(time.monotonic() - self._started, 3), self._killed_for,
                         _read_all(self._stdout), _read_all(self._stderr))

    def finish(self) -> Ended:
        """Wait for the command's end (or its kill at the wall limit)."""
        while True:
            ended = self.ended()
            if ended is not None:
                return ended
            time.sleep(_POLL_S)

    def kill(self, why: str = "") -> None:
        """Kill the whole run, group and tag (how it ended then comes from `ended`)."""
        self._killed_for = self._killed_for or why
        kill_run(self.pid, self.tag)


def _still_running(pid: int) -> bool:
    return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None


def _read_all(handle: IO[bytes]) -> str:
    handle.seek(0)
    return handle.read().decode("utf-8", errors="replace")


# ----------------------------------------------------------------------------- age


def process_age_s() -> float:
    """Seconds since this process started (Linux: `/proc`; 0.0 where unknown): the interpreter's
    start-up and imports, which a budget for the whole process must count too."""
    try:
        with open("/proc/self/stat", encoding="ascii", errors="replace") as handle:
            started = int(handle.read().rsplit(")", 1)[1].split()[19])  # field 22, in clock ticks
        with open("/proc/uptime", encoding="ascii") as handle:
            uptime = float(handle.read().split()[0])
        return max(0.0, uptime - started / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return 0.0


# ----------------------------------------------------------------------------- memory


def peak_rss_mb() -> float:
    """The peak resident memory of this process and of the children it has waited for (MB)."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return round(max(own, children) / 1024, 1)


def peak_rss_of(pid: int) -> float | None:
    """The peak resident memory of live process `pid` (MB; Linux's VmHWM), None if unknown."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except (OSError, ValueError, IndexError):
        return None
    return None
