"""Batch runs: every task a limited `quokka verify --json` process, every result committed at once.

`run_batch` finds or starts one run per configuration in the store (the same command finds
the same run again and resumes it: finished tasks are not run again), runs the missing tasks
on a backend (the local process pool, or Ray), and writes each result to the store as soon as
it arrives. Only this process writes; killing it loses the tasks in flight and nothing else.
With several configurations (`quokka bench`), the jobs are interleaved task by task (A B A B),
so that drift of the machine hits every configuration alike.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import os
import platform
import subprocess
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Protocol

from quokka.invariants.train.sources import read_jsonl
from quokka.verifier.errors import InputError
from quokka.verifier.infra.store import ResultRow, RunInfo, Store, content_key, now
from quokka.verifier.verdict.contract import Reading, classify, verify_argv
from quokka.verifier.verdict.results import (
    Diagnostic,
    Result,
)
from quokka.verifier.verdict.witnesses import (
    WitnessError,
    input_file_name,
    invariant_arguments,
    witness_file_name,
    witness_for,
    witness_invariants,
    write_witness,
)

from . import scores
from .configs import DEFAULT_VERIFIER, Config
from .execution import Limits, Outcome, RunningProcess, launch_failure
from .tasks import Task

_TICK_S = 0.25
_POLL_S = 0.05


@dataclass(frozen=True)
class BatchSpec:
    """Everything that decides what a batch runs (and so which run it resumes)."""

    tasks: tuple[Task, ...]
    configs: tuple[Config, ...]
    limits: Limits
    sets: tuple[str, ...] = ()
    verify_args: tuple[str, ...] = ()  # appended to every configuration's arguments
    verifier: tuple[str, ...] = DEFAULT_VERIFIER
    data_model: str | None = None  # overrides the tasks' data models
    rerun: bool = False
    witness_dir: Path | None = None
    invariants_from: Path | None = None  # check the invariants of these correctness witnesses
    bench: str | None = None
    problems: tuple[str, ...] = ()
    # `--property`: the property every task checks (None: each task's own; the tasks carry it)
    property: str | None = None
    cores: int | None = None  # `verify --cores` of every task (its share of the machine); None: not given


@dataclass(frozen=True)
class Job:
    index: int
    run_id: int
    config: str
    task: Task
    command: tuple[str, ...]
    limits: Limits
    error: str = ""  # set when the job cannot run at all (its result is this error)


@dataclass(frozen=True)
class Finished:
    job: Job
    outcome: Outcome


class Backend(Protocol):
    def run(self, jobs: Iterable[Job]) -> Iterator[Finished | None]:
        """Finished jobs as they end; None now and then, so the caller can refresh a display."""
        ...

    def close(self) -> None:
        """Stop everything still in flight."""
        ...


class ResultSink(Protocol):
    def start(self, runs: Sequence[RunInfo], total: int, done: Sequence[ResultRow]) -> None: ...

    def add(self, row: ResultRow) -> None: ...

    def tick(self) -> None: ...

    def stop(self) -> None: ...


@dataclass(frozen=True)
class BatchOutcome:
    runs: tuple[RunInfo, ...]
    ran: int  # results written now
    resumed: int  # results already in the store


# ----------------------------------------------------------------------------- the local backend


class LocalBackend:
    """Up to `jobs` limited processes at a time on this machine (single-threaded polling)."""

    def __init__(self, jobs: int = 1) -> None:
        self.jobs = max(1, jobs)
        self._running: dict[int, tuple[Job, RunningProcess]] = {}

    def run(self, jobs: Iterable[Job]) -> Iterator[Finished | None]:
        pending = deque(jobs)
        last_tick = time.monotonic()
        try:
            while pending or self._running:
                yield from self._fill(pending)
                yield from self._reap()
                if time.monotonic() - last_tick >= _TICK_S:
                    last_tick = time.monotonic()
                    yield None
                time.sleep(_POLL_S)
        finally:
            self.close()

    def _fill(self, pending: deque[Job]) -> Iterator[Finished]:
        while pending and len(self._running) < self.jobs:
            job = pending.popleft()
            try:
                self._running[job.index] = (job, RunningProcess(job.command, job.limits))
            except (OSError, ValueError, subprocess.SubprocessError) as exc:
                yield Finished(job, launch_failure(job.command, exc))

    def _reap(self) -> Iterator[Finished]:
        for index, (job, process) in list(self._running.items()):
            outcome = process.poll()
            if outcome is not None:
                del self._running[index]
                yield Finished(job, outcome)

    def close(self) -> None:
        for _, process in self._running.values():
            process.kill("interrupted")
            with contextlib.suppress(ChildProcessError):
                process.wait()
        self._running.clear()


# ----------------------------------------------------------------------------- planning


def task_command(spec: BatchSpec, config: Config, task: Task) -> tuple[str, ...]:
    """The `quokka verify` command line of one task (its program, checked for its property)."""
    data_model = spec.data_model or task.data_model
    options = ["--memory", str(spec.limits.memory_mb),  # its engines' own limit must fit in ours
               "--property", task.property]  # the task's property, not a plain C file's `assert`
    if data_model:
        options += ["--data-model", data_model]
    if spec.cores is not None:  # before the configuration's arguments, which may name their own
        options += ["--cores", str(spec.cores)]
    return verify_argv(spec.verifier, str(task.program), spec.limits.timeout_s, *options, *config.args,
                       *spec.verify_args)


def signature(spec: BatchSpec, config: Config) -> str:
    """What identifies a run: re-running a command with the same signature resumes the run.

    A `--property` run is a run of its own (its results are not mixed into the default run of the
    same sets); without one, the signature is what it was before `--property` existed."""
    data: dict[str, Any] = {
        "config": [config.name, list(config.args)],
        "verify_args": list(spec.verify_args),
        "verifier": list(spec.verifier),
        "limits": spec.limits.to_json(),
        "sets": sorted(spec.sets),
        "data_model": spec.data_model,
        "invariants_from": str(spec.invariants_from) if spec.invariants_from else None,
        "bench": spec.bench,
    }
    if spec.property is not None:
        data["property"] = spec.property
    return content_key(json.dumps(data, sort_keys=True))


def open_run(store: Store, spec: BatchSpec, config: Config) -> tuple[RunInfo, bool]:
    """The run to work on and whether it is resumed (an earlier run of the same command)."""
    sig = signature(spec, config)
    found = None if spec.rerun else store.find_run(sig)
    total = len(spec.tasks)
    if found is not None:
        store.update_run(found.id, ended_at=None, status="running", tasks_total=total,
                         problems=list(spec.problems))
        return found, True
    run = RunInfo(
        id=0, signature=sig, config=config.name, verify_args=(*config.args, *spec.verify_args),
        verifier=spec.verifier, limits=spec.limits.to_json(), sets=spec.sets, tool_version=tool_version(),
        machine=machine_info(), started_at=now(), bench=spec.bench, tasks_total=total,
        problems=spec.problems,
    )
    return store.start_run(run), False


def plan_jobs(spec: BatchSpec, runs: Sequence[tuple[RunInfo, Config, set[str]]]) -> list[Job]:
    """The jobs still to run, interleaved by task: (A, t1), (B, t1), (A, t2), ..."""
    jobs: list[Job] = []
    for task in spec.tasks:
        for run, config, done in runs:
            if task.key not in done:
                jobs.append(_job(len(jobs), spec, run, config, task))
    return jobs


def _job(index: int, spec: BatchSpec, run: RunInfo, config: Config, task: Task) -> Job:
    command = task_command(spec, config, task)
    error = ""
    if spec.invariants_from is not None:
        try:
            command = (*command, *_given_invariants(spec.invariants_from, task))
        except WitnessError as exc:
            error = f"witness: {exc}"
        except InputError as exc:
            error = f"invariants: {exc}"
    return Job(index, run.id, config.name, task, command, spec.limits, error)


def _given_invariants(source: Path, task: Task) -> tuple[str, ...]:
    """`--invariant` arguments for `task`: from its correctness witness in the folder `source`, or
    from the records of an `invariants.jsonl` file (`file`, `after_line`, `invariant`)."""
    if source.suffix != ".jsonl":
        return _witness_arguments(source, task)
    records = _jsonl_invariants(source.resolve()).get(task.program.resolve(), ())
    if not records:
        raise InputError(None, f"no invariant for {task.program.name} in {source}")
    return tuple(arg for line, expr in records for arg in ("--invariant", f"{line}:{expr}"))


@functools.cache
def _jsonl_invariants(path: Path) -> dict[Path, tuple[tuple[int, str], ...]]:
    table: dict[Path, list[tuple[int, str]]] = {}
    for target in read_jsonl(path):
        table.setdefault(target.file, []).append((target.after_line, target.invariant))
    return {file: tuple(records) for file, records in table.items()}


def _witness_arguments(folder: Path, task: Task) -> tuple[str, ...]:
    path = folder / witness_file_name(task.name, "true")
    if not path.is_file():
        raise WitnessError(f"no correctness witness {path}")
    return tuple(invariant_arguments(witness_invariants(path, task.program)))


# ----------------------------------------------------------------------------- interpreting



@dataclass(frozen=True)
class Interpreted:
    status: str
    reason: str
    output: Result | Diagnostic | None = None


def interpret(outcome: Outcome, limits: Limits) -> Interpreted:
    """The status of a finished process: its verdict, or timeout / out of memory / error."""
    if outcome.launch_error:
        return Interpreted(scores.error_status(outcome.launch_error), outcome.launch_error)
    signal = outcome.signal_name if outcome.signal is not None else None
    found = classify(outcome.exit_code, outcome.stdout, outcome.stderr_tail, signal)
    if outcome.killed_for == "wall":
        return Interpreted(scores.TIMEOUT, f"wall-time limit of {limits.wall_s:g} s reached", found.output)
    if outcome.signal_name == "SIGXCPU" or (outcome.signal == 9 and outcome.cpu_s >= limits.cpu_s):
        return Interpreted(scores.TIMEOUT, f"CPU-time limit of {limits.cpu_s:g} s reached", found.output)
    if found.output is None and found.reading is not Reading.MALFORMED and _out_of_memory(outcome):
        return Interpreted(scores.OUT_OF_MEMORY, f"memory limit of {limits.memory_mb} MB reached")
    if found.reading is Reading.RESULT and isinstance(found.output, Result):
        return Interpreted(found.output.verdict.value, found.message, found.output)
    return Interpreted(scores.error_status(found.message), found.message, found.output)


_OUT_OF_MEMORY_MARKERS = ("MemoryError", "std::bad_alloc", "Cannot allocate memory", "out of memory")


def _out_of_memory(outcome: Outcome) -> bool:
    """A run without a verdict that says it ran out of memory did, whatever its exit code: a
    MemoryError in a thread, at exit or under a wrapper script can leave the exit code 0."""
    return any(marker in outcome.stderr_tail for marker in _OUT_OF_MEMORY_MARKERS)


def make_row(job: Job, outcome: Outcome, found: Interpreted, session_id: int | None) -> ResultRow:
    """The store row of a finished job."""
    task, data = job.task, _wire(found.output)
    if found.status not in ("true", "false", "unknown"):
        data = {k: v for k, v in data.items() if k in ("engines", "candidates")}
    return ResultRow(
        run_id=job.run_id, task=task.key, name=task.name, status=found.status,
        verdict=scores.verdict_of(found.status),
        category=scores.categorize(task.expected, found.status).value,
        score=scores.score(task.expected, found.status), expected=task.expected_text,
        set_name=task.set_name, family=task.family, program=str(task.program),
        cpu_s=outcome.cpu_s, wall_s=outcome.wall_s, memory_mb=outcome.max_rss_mb,
        verify_time_s=data.get("time_s"), reason=found.reason, decided_by=str(data.get("decided_by", "")),
        invariants=data.get("invariants"), counterexample=data.get("counterexample"),
        candidates=data.get("candidates"), proposer_stats=proposer_stats(data.get("candidates")),
        engines=data.get("engines"), overflow_sites=data.get("overflow_sites"),
        published=[vars(p) for p in task.published] or None, exit_code=outcome.exit_code,
        stderr_tail=outcome.stderr_tail if found.status.startswith("error") else "",
        session_id=session_id, started_at=outcome.started_at, finished_at=outcome.finished_at,
        host=outcome.host,
    )


def _wire(output: Result | Diagnostic | None) -> dict[str, Any]:
    """A result's fields as the store reads them back (JSON lists, not tuples)."""
    data: dict[str, Any] = json.loads(json.dumps(output.to_json())) if isinstance(output, Result) else {}
    return data


def proposer_stats(candidates: Any) -> dict[str, dict[str, int]] | None:
    """Candidate counts per proposer and status ("proven", "rejected", "unused"). A candidate that
    several proposers proposed counts for each of them."""
    if not isinstance(candidates, list) or not candidates:
        return None
    stats: dict[str, dict[str, int]] = {}
    for item in candidates:
        if isinstance(item, dict):
            status = str(item.get("status", "?"))
            for name in [item.get("proposer", "?"), *item.get("also_proposed_by", ())]:
                per = stats.setdefault(str(name), {})
                per[status] = per.get(status, 0) + 1
    return stats


def error_outcome(job: Job) -> Outcome:
    stamp = now()
    return Outcome(job.command, None, None, "", "", 0.0, 0.0, 0.0, started_at=stamp, finished_at=stamp,
                   host=os.uname().nodename, launch_error=job.error)


# ----------------------------------------------------------------------------- running


def run_batch(spec: BatchSpec, store: Store, backend: Backend, sink: ResultSink) -> BatchOutcome:
    """Run what `spec` still needs, write each result to `store` as it finishes."""
    opened = [(open_run(store, spec, config), config) for config in spec.configs]
    runs = [run for (run, _), _ in opened]
    done_rows = store.results([r.id for r in runs])
    done = [(run, config, {row.task for row in done_rows if row.run_id == run.id})
            for (run, _), config in opened]
    jobs = plan_jobs(spec, done)
    sessions = {run.id: store.start_session(run.id) for run in runs}
    sink.start(runs, len(spec.tasks) * len(runs), done_rows)
    status = "interrupted"
    try:
        ran = _drive(store, spec, backend, sink, jobs, sessions)
        status = "finished"
    finally:
        backend.close()
        sink.stop()
        _close_runs(store, runs, sessions, status)
    return BatchOutcome(runs=tuple(runs), ran=ran, resumed=len(done_rows))


def _drive(
    store: Store, spec: BatchSpec, backend: Backend, sink: ResultSink, jobs: list[Job],
    sessions: dict[int, int],
) -> int:
    runnable = [job for job in jobs if not job.error]
    for job in jobs:
        if job.error:
            _record(store, spec, sink, Finished(job, error_outcome(job)), sessions)
    count = len(jobs) - len(runnable)
    for item in backend.run(runnable):
        if item is None:
            sink.tick()
            continue
        _record(store, spec, sink, item, sessions)
        count += 1
    return count


def _record(
    store: Store, spec: BatchSpec, sink: ResultSink, item: Finished, sessions: dict[int, int]
) -> None:
    found = interpret(item.outcome, item.job.limits)
    row = make_row(item.job, item.outcome, found, sessions.get(item.job.run_id))
    if spec.witness_dir is not None and isinstance(found.output, Result) and row.verdict in ("true", "false"):
        row = _with_witness(row, item.job, found.output, spec)
    store.add_result(row)
    sink.add(row)


def _with_witness(row: ResultRow, job: Job, result: Result, spec: BatchSpec) -> ResultRow:
    assert spec.witness_dir is not None
    folder = spec.witness_dir / job.config if len(spec.configs) > 1 else spec.witness_dir
    path = folder / witness_file_name(job.task.name, row.verdict)
    try:
        entry = witness_for(result, job.task.program, data_model=spec.data_model or job.task.data_model
                            or "LP64", configuration=job.config, file_name=_witness_input_name(job.task))
    except (WitnessError, ValueError) as exc:
        return _replace(row, witness=f"not written: {exc}")
    if entry is None:
        return row
    try:
        write_witness(entry, path)
    except WitnessError as exc:
        return _replace(row, witness=f"not written: {exc}")
    return _replace(row, witness=str(path))


def _witness_input_name(task: Task) -> str:
    """The program's name in its witness: relative to its task file, or a bare program's file name."""
    name: str = input_file_name(task.program, task.task_file or task.program)
    return name


def _replace(row: ResultRow, **changes: Any) -> ResultRow:
    return dataclasses.replace(row, **changes)


def _close_runs(store: Store, runs: Sequence[RunInfo], sessions: dict[int, int], status: str) -> None:
    for run in runs:
        store.end_session(sessions[run.id], status)
        store.update_run(run.id, status=status, ended_at=now() if status == "finished" else None)


# ----------------------------------------------------------------------------- about this machine


def tool_version() -> str:
    try:
        return f"quokka {version('quokka-verifier')}"
    except PackageNotFoundError:
        return "quokka unknown"


def machine_info() -> dict[str, Any]:
    return {
        "host": platform.node(),
        "system": f"{platform.system()} {platform.release()}",
        "machine": platform.machine(),
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "memory_mb": _memory_mb(),
        "python": platform.python_version(),
    }


def _cpu_model() -> str:
    return _proc_field("/proc/cpuinfo", "model name", lambda v: v) or platform.processor()


def _memory_mb() -> int | None:
    kb = _proc_field("/proc/meminfo", "MemTotal", lambda v: v.split()[0])
    return int(kb) // 1024 if kb and kb.isdigit() else None


def _proc_field(path: str, name: str, convert: Callable[[str], str]) -> str:
    with contextlib.suppress(OSError):
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            key, _, value = line.partition(":")
            if key.strip() == name:
                return convert(value.strip())
    return ""
