"""Child processes that never outlive what they were started for.

A strategy runs in a forked child with its own process group (so that killing the group kills
what it started); a group of its own also means that nothing kills it when the verifier
process dies (`kill -9` of a batch worker): Linux's parent-death signal does (`die_with_parent`).
Supervisors (a batch's runner, the language server) also tag the environment of what they start
(`TAG_VARIABLE`, inherited by every descendant), and kill by tag what is left.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
from collections.abc import Iterable, Iterator

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
