"""`python -m quokka.server.verify_main FILE [options]`: `quokka verify` for the server's worker runs.

The same parser and code as `quokka verify` (same JSON contract), without the dispatcher loading every
other command's module first: that start-up time counts in every verification the editor waits for.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from quokka.invariants.cli_verify import register
from quokka.verifier.cli import exit_at_once, reporting_bugs
from quokka.verifier.infra.processes import die_with_supervisor


def main(argv: Sequence[str] | None = None) -> int:
    die_with_supervisor()  # a server killed with -9 takes this run with it
    parser = argparse.ArgumentParser(prog="quokka")
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["verify", *(sys.argv[1:] if argv is None else argv)])
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    exit_at_once(reporting_bugs(main, None))  # as `quokka verify`: no interpreter teardown (`cli.console`)
