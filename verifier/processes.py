"""Child processes that never outlive what they were started for.

A strategy runs in a forked child with its own process group (so that killing the group kills
what it started); a group of its own also means that nothing kills it when the verifier
process dies (`kill -9` of a batch worker): Linux's parent-death signal does (`die_with_parent`).
Supervisors (a batch's runner, the language server) also tag the environment of what they start
(`TAG_VARIABLE`, inherited by every descendant), and kill by tag what is left.

What a killed process cannot clean up, its supervisor does: each run gets a scratch folder for
its temporary files (`TMPDIR`, which `tempfile` and gcc both honour), removed once the run and
everything it started are gone (`scratch_folder`).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import shutil
import signal
import sys
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

_PR_SET_PDEATHSIG = 1
TAG_VARIABLE = "QUOKKA_SUPERVISED"  # the tags of every supervised run a process descends from


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


def tagged_environment(tag: str) -> dict[str, str]:
    """This process's environment, with `tag` added to the tags its children inherit."""
    env = dict(os.environ)
    env[TAG_VARIABLE] = " ".join([*env.get(TAG_VARIABLE, "").split(), tag])
    return env


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


@contextlib.contextmanager
def scratch_folder(prefix: str) -> Iterator[Path]:
    """A fresh folder for a supervised run's temporary files, removed after the block, whatever
    was left in it (by a process killed before it could clean up)."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def use_scratch(folder: Path) -> None:
    """Put the temporary files of this process, and of the programs it starts, under `folder`.
    Only for a child process that is about to run a job and then exit: it changes the process's
    own environment and `tempfile`'s folder."""
    os.environ["TMPDIR"] = str(folder)
    tempfile.tempdir = str(folder)


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
