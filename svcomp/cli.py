"""The `quokka batch`, `quokka bench` and `quokka report` commands (entry points `register_*`)."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeAlias

from quokka.verifier.cli_args import memory_mb, positive_int, seconds, seed, temperature
from quokka.verifier.properties import SUPPORTED

from .configs import DEFAULT_VERIFIER

# The `quokka` dispatcher imports every command's `register` for every call (each `quokka verify`
# of a batch too): this module stays light, the commands are imported when they run.


def batch_command(args: argparse.Namespace) -> int:
    from .commands import batch_command as run

    return run(args)


def bench_command(args: argparse.Namespace) -> int:
    from .commands import bench_command as run

    return run(args)


def report_command(args: argparse.Namespace) -> int:
    from .commands import report_command as run

    return run(args)


def torture_command(args: argparse.Namespace) -> int:
    from quokka.svcomp.qa.torture_command import torture_command as run

    return run(args)


def eval_model_command(args: argparse.Namespace) -> int:
    from .evalmodel_command import eval_model_command as run

    return run(args)

# ----------------------------------------------------------------------------- arguments


def _add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """Options shared by `batch` and `bench`: tasks, limits, verify options, backend."""
    parser.add_argument("sets", nargs="+", metavar="SET", type=Path,
                        help="task files (.yml), folders, tasks.csv files or C files")
    parser.add_argument("--property", choices=SUPPORTED,
                        help="check this property of every task; tasks that do not list it are "
                             "skipped (default: each task's first supported property: unreach-call, "
                             "else no-overflow)")
    parser.add_argument("--jobs", "-j", type=positive_int, default=1,
                        help="tasks run at the same time (default 1)")
    parser.add_argument("--timeout", type=seconds, default=60.0,
                        help="the verifier's time budget per task, seconds (default 60)")
    parser.add_argument("--memory", type=memory_mb, default=4096,
                        help="memory limit per process, MB (default 4096)")
    parser.add_argument("--wall-limit", type=seconds, help="kill a task after this many seconds "
                        "(default: timeout + max(30, timeout/2))")
    parser.add_argument("--cpu-limit", type=seconds, help="CPU-time limit per process, seconds "
                        "(default: the wall limit)")
    parser.add_argument("--define", action="append", default=[], metavar="NAME=ARGS",
                        help="define a configuration: NAME and its `quokka verify` arguments")
    parser.add_argument("--engines", help="verify option --engines for every task")
    parser.add_argument("--proposers", help="verify option --proposers for every task")
    parser.add_argument("--data-model", choices=("ILP32", "LP64"),
                        help="override the tasks' data models")
    parser.add_argument("--verify-arg", action="append", default=[], metavar="ARG",
                        help="pass ARG to every `quokka verify` (repeatable)")
    parser.add_argument("--rerun", action="store_true",
                        help="start a new run even if this command already has one (default: resume it)")
    parser.add_argument("--witness-dir", type=Path, help="write SV-COMP 2.0 witnesses of conclusive results")
    parser.add_argument("--invariants-from", type=Path, metavar="SOURCE",
                        help="give each task invariants to check (--invariant LINE:EXPR): those of its "
                             "correctness witness in the folder SOURCE, or those of an invariants.jsonl "
                             "file (records `file`, `after_line`, `invariant`)")
    parser.add_argument("--backend", choices=("local", "ray"), default="local",
                        help="local process pool (default) or a Ray cluster")
    parser.add_argument("--address", help="Ray cluster address (--backend ray; default: a local Ray)")
    parser.add_argument("--verifier", default=shlex.join(DEFAULT_VERIFIER),
                        help="the verify command line (default: this Python's `quokka verify`)")
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress display")


Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def _command(subparsers: Subparsers, name: str, run: Callable[[argparse.Namespace], int], help: str,
             description: str | None = None) -> argparse.ArgumentParser:
    """The parser of the subcommand `name`, which `run` carries out."""
    parser = subparsers.add_parser(name, help=help, description=description)
    parser.set_defaults(func=run)
    return parser


def _run_command(subparsers: Subparsers, name: str, run: Callable[[argparse.Namespace], int], help: str,
                 description: str) -> argparse.ArgumentParser:
    """A subcommand that runs tasks: `_command` with the arguments of a run."""
    parser = _command(subparsers, name, run, help, description)
    _add_run_arguments(parser)
    return parser


def register_batch(subparsers: Subparsers) -> None:
    parser = _run_command(
        subparsers, "batch", batch_command, "verify many SV-COMP tasks into a resumable results database",
        "Verify SV-COMP tasks, each in its own limited process; results go into an sqlite "
        "database as they finish. Running the same command again resumes: finished tasks are not run again.",
    )
    parser.add_argument("--db", type=Path, help="the results database (sqlite; needed unless --list)")
    parser.add_argument("--config", default="default", help="configuration name (default: default)")
    parser.add_argument("--list", action="store_true", help="only list the tasks, skipped ones and problems")


def register_bench(subparsers: Subparsers) -> None:
    parser = _run_command(
        subparsers, "bench", bench_command, "compare two configurations on the same tasks, interleaved",
        "Run two configurations over the same tasks in one run, interleaved (A B A B ...), "
        "and print the paired comparison. Resumable like `quokka batch`.",
    )
    parser.add_argument("--configs", required=True, metavar="A,B", help="the two configurations")
    parser.add_argument("--db", type=Path, default=Path("quokka-bench.sqlite"),
                        help="the results database (default: quokka-bench.sqlite)")
    parser.add_argument("--time", choices=("cpu", "wall"), default="cpu",
                        help="time for speed-ups (default cpu)")


def register_report(subparsers: Subparsers) -> None:
    parser = _command(subparsers, "report", report_command, "tables, plots and HTML from a results database")
    parser.add_argument("db", type=Path, help="the results database")
    parser.add_argument("--run", type=positive_int, nargs="+", default=[], metavar="ID",
                        help="runs (default: all)")
    parser.add_argument("--html", type=Path, help="write a self-contained HTML report")
    parser.add_argument("--plots", type=Path, metavar="DIR", help="write cactus.png (and scatter.png)")
    parser.add_argument("--csv", type=Path, help="write one line per result")
    parser.add_argument("--scatter", metavar="A,B",
                        help="run ids of the scatter plot (default: the first two)")
    parser.add_argument("--time", choices=("cpu", "wall"), default="cpu", help="time in plots (default cpu)")


def register_eval_model(subparsers: Subparsers) -> None:
    parser = _command(
        subparsers, "eval-model", eval_model_command, "measure a model's invariant guesses with the verifier",
        "Sample a model's candidate invariants for each task and check them: parse rate, true "
        "invariants (assert query), tasks proved alone or after template completion and Houdini, "
        "pass@1 and pass@N; with --speedup, the tasks verified at least 1.2x faster with the model.",
    )
    model = parser.add_mutually_exclusive_group(required=True)
    model.add_argument("--model",
                       help="a local transformers model: a directory, or a name (`quokka model list`)")
    model.add_argument("--endpoint", help="an OpenAI-compatible endpoint (base URL)")
    parser.add_argument("--set", nargs="+", required=True, type=Path, metavar="SET",
                        help="task files (.yml), folders, tasks.csv files or C files")
    parser.add_argument("--samples", type=positive_int, default=8, help="samples per task (default 8)")
    parser.add_argument("--temperature", type=temperature, default=0.8)
    parser.add_argument("--seed", type=seed, default=0)
    parser.add_argument("--check-timeout", type=seconds, default=5.0,
                        help="seconds per solver check of a candidate (default 5)")
    parser.add_argument("--speedup", action="store_true",
                        help="also verify each task with and without the model and count the speed-ups")
    parser.add_argument("--timeout", type=seconds, default=30.0, help="verify budget of --speedup runs")
    parser.add_argument("--db", type=Path, help="record the results in this results database")
    parser.add_argument("--dump-dir", type=Path, metavar="DIR",
                        help="write each task's answers (as the model wrote them) and their checks here")
    parser.add_argument("--json", action="store_true", help="one JSON object: summary and tasks")


def register_torture(subparsers: Subparsers) -> None:
    parser = _command(
        subparsers, "torture", torture_command, "try to make Quokka answer wrongly, crash or hang",
        "Run generated programs (truth from gcc's build on every input), mutants of the "
        "true tasks of SET (confirmed failing by gcc's build) and fuzzed copies of SET's programs "
        "through `quokka verify`, in turn, for --minutes. Exit status 1 on any wrong verdict, crash "
        "or hang; their programs are saved under --out.",
    )
    parser.add_argument("sets", nargs="*", type=Path, metavar="SET",
                        help="task files, folders or tasks.csv files for mutants and fuzzing "
                             "(default: none, generated programs only)")
    parser.add_argument("--minutes", type=seconds, default=5.0, help="length of the campaign (default 5)")
    parser.add_argument("--seed", type=seed, default=0)
    parser.add_argument("--timeout", type=seconds, default=10.0,
                        help="the verifier's budget per trial, seconds (default 10)")
    parser.add_argument("--out", type=Path, default=Path("torture-findings"),
                        help="where the programs of findings are saved (default: torture-findings)")
    parser.add_argument("--json", action="store_true", help="print the counts as one JSON object")
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress display")


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m quokka.svcomp.cli batch|bench|report ...` (the same commands without the dispatcher)."""
    parser = argparse.ArgumentParser(prog="quokka-svcomp")
    sub = parser.add_subparsers(dest="command", required=True)
    for register in (register_batch, register_bench, register_report, register_eval_model, register_torture):
        register(sub)
    args = parser.parse_args(argv)
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
