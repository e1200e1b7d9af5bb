"""`quokka lsp`: the language server over stdio (pygls is imported only when the command runs)."""

from __future__ import annotations

import argparse
import logging
import shlex
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "lsp",
        help="run the Quokka language server (stdio)",
        description="Speak the Language Server Protocol on stdin/stdout: proven loop invariants as inlay "
        "hints, assertion status as diagnostics, counterexamples, code actions and lenses.",
    )
    parser.add_argument("--stdio", action="store_true", help="accepted for editors that pass it (default)")
    parser.add_argument("--cache", type=Path, help="sqlite file of cached results (default: user cache dir)")
    parser.add_argument("--no-cache", action="store_true", help="do not read or write the result cache")
    parser.add_argument("--verifier", metavar="COMMAND",
                        help="the verifier command, run as COMMAND FILE [options] (default: this Python's "
                        "`quokka verify`)")
    parser.add_argument("--log-file", type=Path, help="write the server's log here")
    parser.add_argument("--log-level", default="INFO", help="log level for --log-file (default INFO)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.log_file is not None:
        logging.basicConfig(filename=args.log_file, level=args.log_level.upper(),
                            format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    from .cache import ResultCache, default_cache_path
    from .lsp import serve_stdio
    from .settings import DEFAULT_COMMAND

    cache = None if args.no_cache else ResultCache(args.cache or default_cache_path())
    command = tuple(shlex.split(args.verifier)) if args.verifier else DEFAULT_COMMAND
    serve_stdio(cache, command)
    return 0
