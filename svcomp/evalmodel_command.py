"""What `quokka eval-model` does (its arguments are in `cli.py`; the measures in `evalmodel`)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict
from pathlib import Path

from quokka.invariants.llm.backend import Backend
from quokka.invariants.llm.settings import ModelSettings, from_pyproject
from quokka.verifier.errors import QuokkaError
from quokka.verifier.infra.store import ResultRow, RunInfo, Store, content_key, now
from quokka.verifier.options import Options
from quokka.verifier.properties import UNREACH_CALL
from quokka.verifier.verdict.dump import dump_json
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from . import scores
from .evalmodel import EvalConfig, Summary, TaskEval, evaluate_task, open_backend, summarize
from .runner import machine_info, tool_version
from .tasks import Task, load_tasks
from .ui import print_error, print_table

EXIT_OK, EXIT_BAD_INPUT = 0, 2


def eval_model_command(args: argparse.Namespace) -> int:
    err = Console(stderr=True)
    config = EvalConfig(args.samples, args.temperature, args.seed, check_s=args.check_timeout,
                        speedup=args.speedup, timeout_s=args.timeout)
    try:
        if (args.model is None) == (args.endpoint is None):
            raise QuokkaError("give one of --model DIR and --endpoint URL")
        first = Path(args.set[0]).resolve()
        options, settings = from_pyproject(first if first.is_dir() else first.parent)  # as `verify` reads it
        model = settings.with_(model=str(args.model) if args.model else None, endpoint=args.endpoint)
        tasks = load_tasks(args.set, UNREACH_CALL).tasks  # the model guesses invariants for reach-safety
        if not tasks:
            raise QuokkaError("no tasks to evaluate")
        backend = open_backend(model)
        evals = _evaluate(tasks, backend, (options, model), config, args, err)
    except QuokkaError as exc:
        print_error(err, str(exc))
        return EXIT_BAD_INPUT
    summary = summarize(evals, config.speedup)
    if args.json:
        sys.stdout.write(json.dumps({"summary": summary.to_json(),
                                     "tasks": [e.to_json() for e in evals]}) + "\n")
    else:
        print_table(Console(), _table(summary, config))
    return EXIT_OK


def _evaluate(tasks: tuple[Task, ...], backend: Backend, settings: tuple[Options, ModelSettings],
              config: EvalConfig, args: argparse.Namespace, err: Console) -> list[TaskEval]:
    out: list[TaskEval] = []
    store = Store.open(args.db) if args.db else None
    run = _start_run(store, args, config) if store else None
    try:
        with Progress(console=err, disable=args.json or not err.is_terminal) as progress:
            bar = progress.add_task("eval-model", total=len(tasks))
            for task in tasks:
                started = time.monotonic()
                found = evaluate_task(task, backend, *settings, config)
                out.append(found)
                if args.dump_dir is not None:
                    _dump(args.dump_dir, len(out), task, found)
                if store is not None and run is not None:
                    store.add_result(_row(run, task, found, time.monotonic() - started))
                progress.advance(bar)
        if store is not None and run is not None:
            store.update_run(run.id, ended_at=now(), status="finished")
    finally:
        if store is not None:
            store.close()
    return out


def _dump(directory: Path, index: int, task: Task, found: TaskEval) -> None:
    """`--dump-dir`'s NNN-TASK.json: the task's measures, then every answer and its candidates."""
    payload = {**found.to_json(), "answers": [asdict(t) for t in found.transcripts]}
    dump_json(directory, f"{index:03d}-{task.program.stem}.json", payload)


def _start_run(store: Store, args: argparse.Namespace, config: EvalConfig) -> RunInfo:
    sets = tuple(str(Path(p).resolve()) for p in args.set)
    model = str(args.model or args.endpoint)
    signature = content_key(json.dumps({"eval-model": model, "config": vars(config), "sets": sets,
                                        "at": now()}, sort_keys=True))
    run = RunInfo(id=0, signature=signature, config="eval-model", verify_args=("--model", model),
                  sets=sets, tool_version=tool_version(), machine=machine_info(), started_at=now(),
                  tasks_total=0)
    return store.start_run(run)


def _row(run: RunInfo, task: Task, found: TaskEval, wall_s: float) -> ResultRow:
    status = found.with_model_verdict or ("error: " + found.error if found.error else "unknown")
    return ResultRow(
        run_id=run.id, task=task.key, name=task.name, status=status, verdict=scores.verdict_of(status),
        category=scores.categorize(task.expected, status).value, score=scores.score(task.expected, status),
        expected=task.expected_text, set_name=task.set_name, family=task.family, program=str(task.program),
        wall_s=wall_s, reason=found.error, proposer_stats=found.to_json(),
    )


def _table(s: Summary, config: EvalConfig) -> Table:
    table = Table(title=f"eval-model: {config.samples} samples per task")
    table.add_column("measure")
    table.add_column("value", justify="right")
    rows = [("tasks", f"{s.tasks} ({s.errors} not evaluated)"), ("samples", str(s.samples)),
            ("parse rate (accepted candidates)", f"{s.parse_rate:.0%}"),
            ("true invariants (assert query)", str(s.true_invariants)),
            ("tasks proved by one candidate, inductive", str(s.proved_inductive_alone)),
            ("tasks proved by one candidate, two-query", str(s.proved_two_query)),
            ("tasks proved by one sample, completion + Houdini", str(s.proved_houdini)),
            ("tasks proved by all samples, completion + Houdini", str(s.proved_pooled)),
            ("pass@1", f"{s.pass_at_1:.1%}"), (f"pass@{config.samples}", f"{s.pass_at_n:.1%}")]
    if s.faster is not None:
        rows.append(("tasks >= 1.2x faster with the model", str(s.faster)))
    for name, value in rows:
        table.add_row(name, value)
    return table
