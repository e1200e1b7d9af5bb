"""What `quokka batch`, `bench` and `report` do (their arguments are in `cli.py`)."""

from __future__ import annotations

import argparse
import shlex
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from quokka.verifier.errors import QuokkaError
from quokka.verifier.infra.store import Store
from rich.console import Console

from . import configs as configs_mod
from .execution import Limits
from .runner import Backend, BatchOutcome, BatchSpec, LocalBackend, run_batch
from .summary import paired, published, summarize
from .tasks import TaskSet, load_tasks
from .ui import (
    ProgressSink,
    paired_table,
    print_error,
    print_table,
    problems_table,
    speedup_table,
    summary_table,
)

if TYPE_CHECKING:
    from .report import ReportData

EXIT_OK = 0
EXIT_WRONG = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130

# ----------------------------------------------------------------------------- batch and bench


def batch_command(args: argparse.Namespace) -> int:
    def plan(taskset: TaskSet) -> BatchSpec | int:
        if args.list:
            return _list_tasks(taskset)
        if args.db is None:
            raise QuokkaError("--db DB is needed (the results database)")
        return _spec(args, taskset, configs_mod.resolve([args.config], args.define), bench=None)

    outcome = _execute(args, plan)
    return outcome if isinstance(outcome, int) else _print_summary(args.db, outcome)


def bench_command(args: argparse.Namespace) -> int:
    names = [n.strip() for n in args.configs.split(",") if n.strip()]

    def plan(taskset: TaskSet) -> BatchSpec:
        return _spec(args, taskset, configs_mod.resolve(names, args.define), bench=",".join(names))

    if len(names) != 2 or names[0] == names[1]:
        wanted = f"--configs wants two different configurations A,B, got {args.configs!r}"
        print_error(Console(stderr=True), wanted)
        return EXIT_BAD_INPUT
    outcome = _execute(args, plan)
    if isinstance(outcome, int):
        return outcome
    _print_summary(args.db, outcome)
    return _print_paired(args.db, outcome, args.time)


def _execute(args: argparse.Namespace, plan: Callable[[TaskSet], BatchSpec | int]) -> BatchOutcome | int:
    """Load the task sets and run the batch `plan` makes of them; else an exit code: bad input,
    interrupted, or the one `plan` returns instead of a batch."""
    err = Console(stderr=True)
    try:
        taskset = load_tasks(args.sets, args.property)
        _show_problems(err, taskset)
        spec = plan(taskset)
        if isinstance(spec, int):
            return spec
        outcome = _run(args, spec, err)
    except QuokkaError as exc:
        print_error(err, str(exc))
        return EXIT_BAD_INPUT
    return EXIT_INTERRUPTED if outcome is None else outcome


def _spec(args: argparse.Namespace, taskset: TaskSet, configs: tuple[configs_mod.Config, ...],
          bench: str | None) -> BatchSpec:
    if not taskset.tasks:
        raise QuokkaError("no tasks to run")
    extra = [*(("--engines", args.engines) if args.engines else ()),
             *(("--proposers", args.proposers) if args.proposers else ()), *args.verify_arg]
    return BatchSpec(
        tasks=taskset.tasks, configs=configs,
        limits=Limits.for_timeout(args.timeout, args.memory, args.wall_limit, args.cpu_limit),
        sets=tuple(str(p.resolve()) for p in args.sets), verify_args=tuple(extra),
        verifier=tuple(shlex.split(args.verifier)), data_model=args.data_model, rerun=args.rerun,
        witness_dir=args.witness_dir, invariants_from=args.invariants_from, bench=bench,
        problems=tuple(str(p) for p in taskset.problems), property=args.property, cores=_task_cores(args),
    )


def _task_cores(args: argparse.Namespace) -> int | None:
    """Each task's share of this machine's cores (`verify --cores`); None on a cluster (Ray's own)."""
    if args.backend != "local":
        return None
    from quokka.verifier.verdict.schedule import available_cores

    jobs: int = args.jobs
    return max(1, available_cores() // jobs)


def _run(args: argparse.Namespace, spec: BatchSpec, err: Console) -> BatchOutcome | None:
    backend = _backend(args)
    sink = ProgressSink(err, enabled=not args.quiet)
    with Store.open(args.db) as store, _sigterm_as_exit():
        try:
            return run_batch(spec, store, backend, sink)
        except KeyboardInterrupt:
            err.print("interrupted: the results so far are in the database; run the same command to resume")
            return None


def _backend(args: argparse.Namespace) -> Backend:
    if args.backend == "ray":
        try:
            from .ray_backend import RayBackend  # optional dependency: imported only when asked for
        except ImportError as exc:
            raise QuokkaError("--backend ray needs the [ray] extra: pip install 'quokka-verifier[ray]' "
                              f"(cannot import {exc.name or 'ray'})") from exc
        ray_backend: Backend = RayBackend(address=args.address, jobs=args.jobs)
        return ray_backend
    return LocalBackend(args.jobs)


@contextmanager
def _sigterm_as_exit() -> Iterator[None]:
    """SIGTERM interrupts like Ctrl-C, so that in-flight tasks are killed and runs are closed."""

    def handler(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _show_problems(err: Console, taskset: TaskSet) -> None:
    table = problems_table([str(p) for p in taskset.problems], [str(s) for s in taskset.skipped])
    if table is not None:
        print_table(err, table)


def _list_tasks(taskset: TaskSet) -> int:
    out = Console(highlight=False)
    for task in taskset.tasks:
        out.print(f"{task.name}\t{task.property}\t{task.expected_text or '?'}\t{task.data_model or '-'}"
                  f"\t{task.program}", markup=False)
    out.print(f"{len(taskset.tasks)} tasks, {len(taskset.skipped)} skipped, {len(taskset.problems)} problems")
    return EXIT_OK


def _print_summary(db: Path, outcome: BatchOutcome) -> int:
    with Store.open(db, writer=False) as store:
        rows = store.results([r.id for r in outcome.runs])
    summaries = summarize(rows, outcome.runs)
    title = f"{db} ({outcome.ran} run now, {outcome.resumed} resumed)"
    print_table(Console(), summary_table(summaries, title=title))
    return EXIT_WRONG if any(s.tally.wrong for s in summaries) else EXIT_OK


def _print_paired(db: Path, outcome: BatchOutcome, measure: str) -> int:
    run_a, run_b = outcome.runs
    with Store.open(db, writer=False) as store:
        rows_a, rows_b = store.results([run_a.id]), store.results([run_b.id])
    sum_a, sum_b = summarize(rows_a, [run_a])[0], summarize(rows_b, [run_b])[0]
    pair = paired(rows_a, rows_b, sum_a, sum_b, measure=measure)
    out = Console()
    print_table(out, paired_table(pair, published(rows_a)))
    print_table(out, speedup_table(pair))
    return EXIT_WRONG if pair.a.tally.wrong or pair.b.tally.wrong else EXIT_OK


# ----------------------------------------------------------------------------- report


def report_command(args: argparse.Namespace) -> int:
    from . import report as report_mod  # matplotlib takes seconds to import: only for reports

    err = Console(stderr=True)
    try:
        with Store.open(args.db, writer=False) as store:
            data = report_mod.load(store, args.run)
        _report_outputs(args, data)
    except (QuokkaError, OSError) as exc:
        print_error(err, str(exc))
        return EXIT_BAD_INPUT
    return EXIT_OK


def _report_outputs(args: argparse.Namespace, data: ReportData) -> None:
    from . import report as report_mod

    out = Console()
    print_table(out, summary_table(data.per_run, title=f"{args.db}: results per run"))
    print_table(out, summary_table(data.per_family, title="results per family", group_label="family"))
    if args.csv:
        report_mod.write_csv(data.rows, args.csv)
    if not (args.plots or args.html):
        return
    plots = report_mod.make_plots(data, _scatter_runs(args.scatter, data), args.time)
    if args.plots:
        report_mod.write_plots(plots, args.plots)
    if args.html:
        args.html.parent.mkdir(parents=True, exist_ok=True)
        page = report_mod.render_html(data, plots, link_base=args.html.parent.absolute())
        args.html.write_text(page, encoding="utf-8")


def _scatter_runs(text: str | None, data: ReportData) -> tuple[int, int] | None:
    if not text:
        return (data.runs[0].id, data.runs[1].id) if len(data.runs) >= 2 else None
    try:
        a, b = (int(part) for part in text.split(","))
    except ValueError as exc:
        raise QuokkaError(f"--scatter wants two run ids A,B, got {text!r}") from exc
    return a, b


