"""Limited processes: wall time, CPU time, memory, crashes; the whole process group dies."""

from __future__ import annotations

import os
import sys
import time

from proctree import alive
from quokka.svcomp.execution import Limits, run_limited


def _python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_normal_exit_is_measured() -> None:
    outcome = run_limited(_python("print('hi'); import sys; sys.exit(3)"), Limits(5, 10, 10, 1024))
    assert (outcome.exit_code, outcome.signal, outcome.stdout, outcome.killed_for) == (3, None, "hi\n", "")
    assert 0 < outcome.wall_s < 10 and outcome.max_rss_mb > 1


def test_wall_limit_kills_the_whole_group() -> None:
    code = ("import subprocess, sys, time\n"
            "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
            "print(p.pid, flush=True)\ntime.sleep(60)\n")
    start = time.monotonic()
    outcome = run_limited(_python(code), Limits(1, 1.0, 30, 1024))
    assert time.monotonic() - start < 10
    assert outcome.killed_for == "wall" and outcome.signal == 9
    grandchild = int(outcome.stdout.split()[0])
    time.sleep(0.2)
    assert not alive(grandchild)


def test_cpu_limit_stops_a_spinning_process() -> None:
    outcome = run_limited(_python("while True: pass"), Limits(1, 30, 1, 1024))
    assert outcome.signal_name in ("SIGXCPU", "SIGKILL")
    assert outcome.cpu_s >= 0.5 and outcome.killed_for == ""


def test_memory_limit_gives_memory_error() -> None:
    outcome = run_limited(_python("x = bytearray(2 * 1024**3)"), Limits(5, 30, 30, 512))
    assert outcome.exit_code == 1 and "MemoryError" in outcome.stderr_tail


def test_missing_executable_is_an_outcome() -> None:
    outcome = run_limited(["/nonexistent/quokka"], Limits(5, 10, 10, 512))
    assert outcome.launch_error.startswith("cannot start /nonexistent/quokka")





def test_a_killed_commands_temporary_files_are_removed() -> None:
    # the command writes into its TMPDIR and is killed at the wall limit: no cleanup of its own
    code = ("import os, tempfile, time\n"
            "folder = tempfile.mkdtemp()\n"
            "open(os.path.join(folder, 'left'), 'w').write('x')\n"
            "print(folder, os.environ['TMPDIR'], flush=True)\ntime.sleep(60)\n")
    outcome = run_limited(_python(code), Limits(1, 1.0, 30, 1024))
    folder, scratch = outcome.stdout.split()
    assert outcome.killed_for == "wall" and folder.startswith(scratch)
    assert not os.path.exists(scratch)
