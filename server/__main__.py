"""`python -m quokka.server`: the same as `quokka lsp`."""

from __future__ import annotations

import argparse
import sys

from .cli import register


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m quokka.server")
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["lsp", *sys.argv[1:]])
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
