"""The `quokka` command: a dispatcher that finds its subcommands through entry points.

Each package registers its commands in `[project.entry-points."quokka.commands"]` with a
function `register(subparsers) -> None` that adds a parser whose `func(args) -> int` runs it,
so this module (in the lowest layer) never imports a higher layer.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib.metadata import entry_points, version

EXIT_BAD_INPUT = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="quokka",
        description="Verify C programs: guessed loop invariants, proven by Z3.",
    )
    parser.add_argument("--version", action="version", version=f"quokka {_version()}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for ep in sorted(entry_points(group="quokka.commands"), key=lambda e: e.name):
        ep.load()(subparsers)
    return parser


def _version() -> str:
    try:
        return version("quokka-verifier")
    except Exception:
        return "unknown"


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return EXIT_BAD_INPUT
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
