"""Runs `quokka verify --json` on a snapshot in its own process group, killed when the run is cancelled.

The start stays asyncio's own (`create_subprocess_exec`, awaited while the server goes on serving),
not `processes.LimitedCommand`'s blocking poll; the environment (tag, scratch `TMPDIR`) and the
kill (group and tag) are `processes`'.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from dataclasses import dataclass
from pathlib import Path

from quokka.verifier.errors import QuokkaError
from quokka.verifier.infra.processes import kill_run, new_tag, scratch_folder, supervised_environment
from quokka.verifier.task import read_task
from quokka.verifier.verdict.contract import Reading, classify
from quokka.verifier.verdict.results import Diagnostic, Result

from .model import STATUS_ERROR, STATUS_OK, Outcome, bad_input, failed

STDERR_TAIL = 2000


@dataclass(frozen=True)
class Job:
    """One snapshot to verify."""

    text: str
    path: Path | None  # the document's file, when it has one
    command: tuple[str, ...]  # the verifier's command line, before the file
    args: tuple[str, ...]  # its options, after the file
    wall_limit_s: float


def task_data_model(path: Path | None) -> str | None:
    """The data model of the SV-COMP task `<stem>.yml` beside `path` that names it as input."""
    if path is None or not path.with_suffix(".yml").is_file():
        return None
    try:
        task = read_task(path.with_suffix(".yml"))
    except QuokkaError:
        return None
    return task.data_model if task.file.name == path.name else None


def _on_disk(path: Path | None, text: str) -> bool:
    if path is None:
        return False
    try:
        return path.read_text(encoding="utf-8") == text
    except (OSError, UnicodeDecodeError):
        return False


class Runner:
    """Starts verifier processes and knows which are alive, so none outlives its run or the server."""

    def __init__(self) -> None:
        self._groups: dict[int, str] = {}  # process group -> the tag its processes carry

    @property
    def live_groups(self) -> frozenset[int]:
        return frozenset(self._groups)

    async def run(self, job: Job) -> Outcome:
        """The outcome of `job`; cancelling the awaiting task kills the verifier's whole process group."""
        with scratch_folder("quokka-lsp-") as folder:
            if _on_disk(job.path, job.text):
                assert job.path is not None
                input_path = job.path
            else:
                input_path = folder / (job.path.name if job.path is not None else "untitled.c")
                input_path.write_text(job.text, encoding="utf-8")
            return await self._run_process(job, input_path, folder)

    async def _run_process(self, job: Job, input_path: Path, folder: Path) -> Outcome:
        # output goes to files, not pipes: a grandchild holding a pipe would keep wait() from returning
        started = time.monotonic()
        tag = new_tag()  # the verifier's engines run in process groups of their own: found by tag
        out_path, err_path = folder / "stdout", folder / "stderr"
        with out_path.open("wb") as out, err_path.open("wb") as err:
            try:
                process = await asyncio.create_subprocess_exec(
                    *job.command, str(input_path), *job.args,
                    stdin=asyncio.subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True,
                    env=supervised_environment(tag, folder, os.getpid()),  # dies with the server
                )
            except OSError as exc:
                return failed(f"cannot start the verifier ({' '.join(job.command)}): {exc}", str(input_path))
        self._groups[process.pid] = tag
        try:
            await asyncio.wait_for(process.wait(), job.wall_limit_s)
        except TimeoutError:
            return failed(f"timeout: the verifier ran past {job.wall_limit_s:g} s and was stopped",
                          str(input_path), time.monotonic() - started)
        finally:
            self._kill_group(process.pid)
            await _reap(process)
        return parse_output(out_path.read_bytes(), err_path.read_bytes(), process.returncode, str(input_path),
                            time.monotonic() - started)

    def _kill_group(self, group: int) -> None:
        kill_run(group, self._groups.pop(group, None))

    def kill_all(self) -> None:
        for group in list(self._groups):
            self._kill_group(group)


async def _reap(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, asyncio.CancelledError):
        await asyncio.shield(process.wait())


def parse_output(stdout: bytes, stderr: bytes, returncode: int | None, input_path: str,
                 elapsed: float) -> Outcome:
    """The outcome of a finished `quokka verify --json` run."""
    tail = stderr.decode("utf-8", "replace")[-STDERR_TAIL:]
    found = classify(returncode, stdout.decode("utf-8", "replace"), tail)
    if found.reading is Reading.MALFORMED:
        return failed(f"the verifier printed a malformed result: {found.message}", input_path, elapsed)
    if isinstance(found.output, Diagnostic):
        return bad_input(found.output, input_path)
    if not isinstance(found.output, Result) or found.reading is Reading.CRASHED:
        return failed(f"the verifier ended without a result: {found.message}", input_path, elapsed)
    status = STATUS_ERROR if found.reading is Reading.BAD_INPUT else STATUS_OK
    return Outcome(found.output, input_path, status)
