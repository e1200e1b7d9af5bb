"""The `quokka` command: a dispatcher that finds its subcommands through entry points.

Each package registers its commands in `[project.entry-points."quokka.commands"]` with a
function `register(subparsers) -> None` that adds a parser whose `func(args) -> int` runs it,
so this module (in the lowest layer) never imports a higher layer.

`quokka --help` registers every command, `quokka CMD` only CMD: a command's registering module
is light (its arguments), and what the command does is imported when it runs. The entry points
are read from Quokka's own distribution metadata without `importlib.metadata` (a third of a
start-up's own time); only where that metadata is not found does `importlib.metadata` look.
"""

from __future__ import annotations

import argparse
import atexit
import importlib
import os
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn, TypeVar

T = TypeVar("T")

EXIT_BAD_INPUT = 2
DISTRIBUTION = "quokka_verifier"  # the distribution's name as its metadata folder spells it
GROUP = "quokka.commands"


class _Version(argparse.Action):
    """`--version`, which reads the installed version only when it is asked for."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *args: object, **kwargs: object) -> None:
        sys.stdout.write(f"quokka {_version()}\n")
        parser.exit()


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser with every subcommand, or only `command`'s when it is a known one.

    Loading one command keeps `quokka verify` from importing what `batch` or `lsp` need.
    """
    parser = argparse.ArgumentParser(
        prog="quokka",
        description="Verify C programs: guessed loop invariants, proven by Z3.",
    )
    parser.add_argument("--version", action=_Version, help="show the version and exit")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands = command_entry_points()
    chosen = [command] if command in commands else sorted(commands)
    for name in chosen:
        _load(commands[name])(subparsers)
    return parser


def command_entry_points() -> dict[str, str]:
    """Each command's name and `module:function` (the `quokka.commands` entry points)."""
    found = _metadata_folder()
    if found is None:
        from importlib.metadata import entry_points

        return {ep.name: ep.value for ep in entry_points(group=GROUP)}
    return entry_point_group((found / "entry_points.txt").read_text(encoding="utf-8"), GROUP)


def _metadata_folder() -> Path | None:
    """The first `quokka_verifier` metadata folder on `sys.path` (where `importlib.metadata` finds it)."""
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:  # no folder (e.g. a zip file)
            continue
        for name in filter(_names_distribution, names):
            if (Path(entry or ".", name) / "entry_points.txt").is_file():
                return Path(entry or ".", name)
    return None


def _names_distribution(name: str) -> bool:
    """Whether `name` is a metadata folder of `DISTRIBUTION` (`NAME-VERSION.dist-info`, `NAME.egg-info`)."""
    base, _, suffix = name.rpartition(".")
    return suffix in ("dist-info", "egg-info") and base.partition("-")[0].lower() == DISTRIBUTION


def entry_point_group(text: str, group: str) -> dict[str, str]:
    """The entries `name = value` of section `[group]` of an `entry_points.txt`."""
    out: dict[str, str] = {}
    section = None
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
        elif section == group and "=" in line and not line.startswith(("#", ";")):
            name, _, value = line.partition("=")
            out[name.strip()] = value.strip()
    return out


def _load(value: str) -> Callable[[Any], None]:
    """The function an entry point's value `module:function` names."""
    module, _, function = value.partition(":")
    loaded: Callable[[Any], None] = getattr(importlib.import_module(module.strip()), function.strip())
    return loaded


def _version() -> str:
    from importlib.metadata import version

    try:
        return version("quokka-verifier")
    except Exception:
        return "unknown"


def main(argv: Sequence[str] | None = None, started: float | None = None) -> int:
    """Run the command `argv` names; `started` (`time.monotonic()`, default now) is when its run
    began, from which a command's budget counts (`args.started`; `quokka verify --timeout`)."""
    return _dispatch(argv, started)[0]


def console() -> NoReturn:
    """The `quokka` program: `main`, then the end of the process. A command that leaves nothing to
    clean up once it has returned (`set_defaults(exit_at_once=True)`: `verify`, whose strategy
    processes are reaped and whose files are written and closed) ends without the interpreter's
    teardown, which frees every object one by one (every Z3 term: about 0.08 s of CPU, a second
    on a busy machine, which `--timeout` must count). The run began with the process: its
    start-up and imports count as part of it."""
    from quokka.verifier.infra.processes import process_age_s

    started = time.monotonic() - process_age_s()
    code, at_once = reporting_bugs(lambda argv: _dispatch(argv, started), None)
    if at_once:
        exit_at_once(code)
    sys.exit(code)


def reporting_bugs(run: Callable[[Any], T], arg: Any) -> T:
    """`run(arg)`, the one boundary where an exception that no layer below documents ends: it is a bug
    in Quokka, reported with its traceback and exit status 3, never read as a verdict or bad input."""
    try:
        return run(arg)
    except Exception:
        traceback.print_exc()
        sys.stderr.write("quokka: internal error: a bug in Quokka (the traceback above says where)\n")
        from quokka.verifier.verdict.contract import VerifyExit  # not at start-up: it loads the IR

        exit_at_once(VerifyExit.INTERNAL_ERROR)


def _dispatch(argv: Sequence[str] | None, started: float | None = None) -> tuple[int, bool]:
    """The command's exit status, and whether it may end the process at once."""
    started = time.monotonic() if started is None else started
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv[0] if argv else None)
    args = parser.parse_args(argv)
    args.started = started
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return EXIT_BAD_INPUT, False
    code: int = args.func(args)
    return code, bool(getattr(args, "exit_at_once", False))


def exit_at_once(code: int) -> NoReturn:
    """End the process now: the `atexit` handlers run, the standard streams are flushed (a
    closed pipe ends it with 120, as the interpreter's own flush does), the rest is skipped."""
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:
        code = code or 120
    os._exit(code)


if __name__ == "__main__":
    console()
