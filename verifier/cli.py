"""The `quokka` command: a dispatcher that finds its subcommands through entry points.

Each package registers its commands in `[project.entry-points."quokka.commands"]` with a
function `register(subparsers) -> None` that adds a parser whose `func(args) -> int` runs it,
so this module (in the lowest layer) never imports a higher layer.
"""

from __future__ import annotations

import argparse
import atexit
import os
import sys
import time
from collections.abc import Sequence
from importlib.metadata import entry_points, version

EXIT_BAD_INPUT = 2
FAST_EXIT = frozenset({"verify"})  # commands that have written and closed all they write when they return


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser with every subcommand, or only `command`'s when it is a known one.

    Loading one command keeps `quokka verify` from importing what `batch` or `lsp` need.
    """
    parser = argparse.ArgumentParser(
        prog="quokka",
        description="Verify C programs: guessed loop invariants, proven by Z3.",
    )
    parser.add_argument("--version", action="version", version=f"quokka {_version()}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands = sorted(entry_points(group="quokka.commands"), key=lambda e: e.name)
    chosen = [ep for ep in commands if ep.name == command] or commands
    for ep in chosen:
        ep.load()(subparsers)
    return parser


def _version() -> str:
    try:
        return version("quokka-verifier")
    except Exception:
        return "unknown"


def main(argv: Sequence[str] | None = None, started: float | None = None) -> int:
    """Run the command `argv` names; `started` (`time.monotonic()`, default now) is when its run
    began, from which a command's budget counts (`args.started`; `quokka verify --timeout`)."""
    started = time.monotonic() if started is None else started
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv[0] if argv else None)
    args = parser.parse_args(argv)
    args.started = started
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return EXIT_BAD_INPUT
    code: int = args.func(args)
    return code


def entry() -> None:
    """The `quokka` command: `main`; then, for the commands in `FAST_EXIT`, an exit without the
    interpreter's tear-down (freeing every module and object costs up to a second on a busy
    machine, a second that `--timeout` must count): output flushed, exit handlers run. The run
    began with the process: its start-up and imports count as part of it."""
    from quokka.verifier.infra.processes import process_age_s

    code = main(started=time.monotonic() - process_age_s())
    if sys.argv[1:2] and sys.argv[1] in FAST_EXIT:
        sys.stdout.flush()
        sys.stderr.flush()
        atexit._run_exitfuncs()
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    entry()
