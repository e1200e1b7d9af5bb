"""Process-tree helpers for the tests: is a process still running, and which live processes are below one."""

from __future__ import annotations

import os


def _stat_fields(pid: int | str) -> list[str]:
    """The fields of /proc/PID/stat after the command name: state, parent pid, ... (OSError: gone)."""
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().rsplit(")", 1)[-1].split()


def alive(pid: int) -> bool:
    """`pid` is running (a zombie is not)."""
    try:
        return _stat_fields(pid)[0] != "Z"
    except OSError:
        return False


def descendants(pid: int) -> list[int]:
    """Live (non-zombie) processes below `pid`."""
    parents: dict[int, int] = {}
    states: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = _stat_fields(entry)
        except OSError:
            continue
        parents[int(entry)], states[int(entry)] = int(fields[1]), fields[0]
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        children = [p for p, pp in parents.items() if pp == parent]
        found += [c for c in children if states[c] != "Z"]
        frontier += children
    return found
