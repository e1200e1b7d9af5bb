"""The one home of child processes (issue 21): limits within the hard limits, a forked child's first
steps (`ChildSetup`), forked children with a pipe back, and limited commands killed whole."""

from __future__ import annotations

import ctypes
import functools
import multiprocessing.connection as mpc
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from proctree import alive
from quokka.verifier.infra import processes
from quokka.verifier.infra.processes import (
    TAG_VARIABLE,
    ChildSetup,
    LimitedCommand,
    ResourceLimits,
    apply_limits,
    start_child,
    within_hard_limit,
)

MB = 1024 * 1024
_PR_GET_PDEATHSIG = 2


def _in_child(job: Callable[[], object], timeout_s: float = 20) -> object:
    """What `job` returns when run in a forked child (so that its limits stay there)."""

    def send(conn: mpc.Connection) -> None:
        conn.send(job())
        conn.close()

    child = start_child("probe", send)
    try:
        assert child.conn.poll(timeout_s), "the child did not answer"
        return child.conn.recv()
    finally:
        child.kill()
        child.close()


def _death_signal() -> int:
    value = ctypes.c_int()
    ctypes.CDLL(None).prctl(_PR_GET_PDEATHSIG, ctypes.byref(value))
    return value.value




def _python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


# ----------------------------------------------------------------------------- limits


def test_limits_stay_within_a_lower_hard_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(resource, "getrlimit", lambda kind: (resource.RLIM_INFINITY, 100))
    assert within_hard_limit(resource.RLIMIT_AS, 500) == (100, 100)
    assert within_hard_limit(resource.RLIMIT_CPU, 50, 200) == (50, 100)
    monkeypatch.setattr(resource, "getrlimit", lambda kind: (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    assert within_hard_limit(resource.RLIMIT_CPU, 50, 55) == (50, 55)


def test_a_child_under_a_lower_hard_limit_gets_that_limit() -> None:
    def job() -> object:
        resource.setrlimit(resource.RLIMIT_AS, (3000 * MB, 3000 * MB))
        resource.setrlimit(resource.RLIMIT_CPU, (50, 50))
        apply_limits(ResourceLimits(memory_mb=8000, cpu_s=99.5))
        return resource.getrlimit(resource.RLIMIT_AS), resource.getrlimit(resource.RLIMIT_CPU)

    assert _in_child(job) == ((3000 * MB, 3000 * MB), (50, 50))


def test_cpu_limits_are_whole_seconds_with_a_grace_before_the_kill() -> None:
    def job() -> object:
        apply_limits(ResourceLimits(cpu_s=2.2, no_core=True))
        return resource.getrlimit(resource.RLIMIT_CPU), resource.getrlimit(resource.RLIMIT_CORE)

    hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    if hard != resource.RLIM_INFINITY:
        pytest.skip("this process already has a CPU limit")
    assert _in_child(job) == ((3, 3 + processes.CPU_GRACE_S), (0, 0))


# ----------------------------------------------------------------------------- a forked child's setup


def test_the_setup_of_a_forked_child(tmp_path: Path) -> None:
    setup = ChildSetup(ResourceLimits(memory_mb=700, nice=3), detach="group", parent=os.getpid(),
                       scratch=tmp_path)  # fmt: skip
    before: list[object] = []

    def job() -> object:
        setup(before_limits=lambda: before.append(resource.getrlimit(resource.RLIMIT_AS)))
        return {
            "group": os.getpgrp() == os.getpid(), "session": os.getsid(0) == os.getpid(),
            "death signal": _death_signal(), "memory": resource.getrlimit(resource.RLIMIT_AS),
            "before limits": before, "nice": os.nice(0), "TMPDIR": os.environ["TMPDIR"],
            "tempfile": tempfile.gettempdir(),
        }  # fmt: skip

    seen = _in_child(job)
    assert isinstance(seen, dict)
    assert seen["group"] and not seen["session"] and seen["death signal"] == 9
    # the hard limit stays where it was, so that a sanitized compiled run can lift the soft one
    assert seen["memory"] == (700 * MB, resource.getrlimit(resource.RLIMIT_AS)[1])
    assert seen["before limits"] == [resource.getrlimit(resource.RLIMIT_AS)]  # the cap came after
    assert seen["nice"] == os.nice(0) + 3
    assert seen["TMPDIR"] == seen["tempfile"] == str(tmp_path)


def test_a_child_over_its_memory_cap_gets_a_memory_error() -> None:
    def job() -> object:
        ChildSetup(ResourceLimits(memory_mb=300))()
        try:
            return len(bytearray(600 * MB))
        except MemoryError:
            return "out of memory"

    assert _in_child(job) == "out of memory"


def test_a_session_of_its_own() -> None:
    def job() -> object:
        ChildSetup(detach="session")()
        return os.getsid(0) == os.getpid() == os.getpgrp()

    assert _in_child(job) is True


def test_a_child_whose_parent_is_already_gone_exits_at_once() -> None:
    def job(conn: mpc.Connection) -> None:
        ChildSetup(parent=os.getpid())()  # not its parent's pid: as if the parent had died
        conn.send("not reached")

    child = start_child("orphan", job)
    child.close(timeout_s=10)
    assert child.process.exitcode == 1


def test_a_child_dies_with_its_parent() -> None:
    def sleeper(setup: ChildSetup, conn: mpc.Connection) -> None:
        setup()
        conn.send("ready")
        time.sleep(60)

    def parent(conn: mpc.Connection) -> None:
        grandchild = start_child("sleeper", functools.partial(sleeper, ChildSetup(parent=os.getpid())))
        grandchild.conn.recv()
        conn.send(grandchild.pid)
        os._exit(0)  # no clean-up of its children: only the parent-death signal kills the sleeper

    middle = start_child("parent", parent)
    pid = middle.conn.recv()
    middle.close()
    deadline = time.monotonic() + 10
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid)


def test_killing_a_forked_child_kills_its_group() -> None:
    def job(setup: ChildSetup, conn: mpc.Connection) -> None:
        setup()
        grandchild = os.fork()
        if grandchild == 0:
            time.sleep(60)
            os._exit(0)
        conn.send(grandchild)
        time.sleep(60)

    child = start_child("group", functools.partial(job, ChildSetup(detach="group", parent=os.getpid())))
    pid = child.conn.recv()
    child.kill()
    child.close()
    deadline = time.monotonic() + 10
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid) and child.process.exitcode == -9


# ----------------------------------------------------------------------------- limited commands


def test_a_command_past_its_wall_time_is_killed_with_its_group_and_tag() -> None:
    code = ("import os, subprocess, sys, time\n"
            "same = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
            "own = subprocess.Popen([sys.executable, '-c', 'import os,time; os.setpgrp(); time.sleep(60)'])\n"
            "print(same.pid, own.pid, os.environ['TMPDIR'], flush=True)\ntime.sleep(60)\n")
    started = time.monotonic()
    command = LimitedCommand(_python(code), ResourceLimits(cpu_s=30, memory_mb=1024), wall_s=1.5)
    ended = command.finish()
    assert time.monotonic() - started < 10
    assert ended.killed_for == "wall" and ended.signal == 9 and ended.exit_code is None
    same, own, scratch = ended.stdout.split()
    time.sleep(0.2)
    assert not alive(int(same)) and not alive(int(own))
    assert not os.path.exists(scratch)


def test_a_command_is_measured_and_runs_in_a_session_of_its_own() -> None:
    code = ("import os, time\n"
            "block = bytearray(100 * 1024 * 1024)\n"
            "end = time.process_time() + 0.5\n"
            "while time.process_time() < end: pass\n"
            f"print(os.getsid(0) == os.getpid(), os.environ['{TAG_VARIABLE}'])\n")
    command = LimitedCommand(_python(code), ResourceLimits(memory_mb=1024), wall_s=30)
    ended = command.finish()
    assert ended.exit_code == 0 and ended.killed_for == "", ended.stderr
    assert ended.cpu_s >= 0.4 and ended.max_rss_mb >= 100 and ended.wall_s >= 0.4
    session, tags = ended.stdout.split(maxsplit=1)
    assert session == "True" and command.tag in tags.split()


def test_a_run_dies_with_the_supervisor_its_environment_names() -> None:
    # the language server starts its verifier without a parent-death signal; the verifier sets it
    # itself from QUOKKA_SUPERVISOR, and does not pass the variable on
    child_code = (
        "import os, time\n"
        "from quokka.verifier.infra.processes import SUPERVISOR_VARIABLE, die_with_supervisor\n"
        "die_with_supervisor()\n"
        "assert SUPERVISOR_VARIABLE not in os.environ\n"
        "print('ready', flush=True)\n"
        "time.sleep(60)\n"
    )
    supervisor_code = (
        "import os, subprocess, sys, time\n"
        "env = {**os.environ, 'QUOKKA_SUPERVISOR': str(os.getpid())}\n"
        f"child = subprocess.Popen([sys.executable, '-c', {child_code!r}], env=env,\n"
        "                         stdout=subprocess.PIPE, text=True)\n"
        "assert child.stdout.readline() == 'ready\\n'\n"
        "print(child.pid, flush=True)\n"
        "time.sleep(60)\n"
    )
    supervisor = subprocess.Popen([sys.executable, "-c", supervisor_code], stdout=subprocess.PIPE, text=True)
    assert supervisor.stdout is not None
    run = int(supervisor.stdout.readline())
    assert alive(run)
    supervisor.kill()
    supervisor.wait()
    deadline = time.monotonic() + 5
    while alive(run) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(run)
