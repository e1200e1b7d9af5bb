"""`quokka parse FILE`: lower a C file (or an SV-COMP task .yml) and report its loops.

Exit status: 0 when the file lowers, 3 when it uses an unsupported C feature, 2 for any other
input or parse error. Errors go to stderr as `file:line:col: message`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import InputError, QuokkaError, ToolMissing, UnsupportedFeature

if TYPE_CHECKING:
    from .ir import Program

EXIT_OK = 0
EXIT_ERROR = 2
EXIT_UNSUPPORTED = 3

DESCRIPTION = """\
Preprocess and parse a C program, lower it to Quokka's IR and list its loops (id, position, the
line after which an invariant is inserted, the C variables in scope). FILE may be a C file
(.c, .i) or an SV-COMP task definition (.yml), whose input file and data model are used.
Exit status: 0 ok, 3 unsupported C feature, 2 input or parse error."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "parse",
        help="check that a C program lowers to the IR and list its loops",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("file", metavar="FILE", help="C file (.c, .i) or SV-COMP task definition (.yml)")
    parser.add_argument(
        "--data-model",
        choices=["ILP32", "LP64"],
        default=None,
        help="integer sizes: ILP32 (32-bit long) or LP64 (64-bit long); default: the task's, else LP64",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object (status, message, loops)")
    parser.add_argument("--dump-ir", action="store_true", help="also print the lowered IR")
    parser.set_defaults(func=run)


def resolve(file: str, data_model: str | None) -> tuple[Path, str]:
    """The C file and data model to lower (a task .yml names both)."""
    path = Path(file)
    if path.suffix in (".yml", ".yaml"):
        from .task import read_task

        task = read_task(path)
        return task.file, data_model or task.data_model
    return path, data_model or "LP64"


def loop_entries(program: Program) -> list[dict[str, Any]]:
    return [
        {
            "id": info.id,
            "line": info.coord.line,
            "column": info.coord.column,
            "insert_after_line": info.insert_after_line,
            "variables": [c_name for c_name, _ in info.scope],
            "function": info.function,
            "parent": info.parent,
        }
        for info in program.loops
    ]


def format_ir(program: Program) -> str:
    from quokka.verifier.ir.printer import format_program

    return format_program(program)


def run(args: argparse.Namespace) -> int:
    file, data_model = str(args.file), args.data_model or "LP64"
    program: Program | None = None
    try:
        path, data_model = resolve(args.file, args.data_model)
        file = str(path)
        from .frontend import lower

        program = lower(path, data_model)
        status, code, message = "ok", EXIT_OK, ""
    except UnsupportedFeature as exc:
        status, code, message = "unsupported", EXIT_UNSUPPORTED, str(exc)
    except (InputError, ToolMissing) as exc:
        status, code, message = "error", EXIT_ERROR, str(exc)
    except QuokkaError as exc:
        status, code, message = "error", EXIT_ERROR, str(exc)
    if message:
        print(message, file=sys.stderr)
    report: dict[str, Any] = {
        "status": status,
        "message": message,
        "file": file,
        "data_model": data_model,
        "loops": loop_entries(program) if program else [],
    }
    if args.json:
        if args.dump_ir and program is not None:
            report["ir"] = format_ir(program)
        print(json.dumps(report, indent=2))
    else:
        _print_text(report, program, args.dump_ir)
    return code


def _print_text(report: dict[str, Any], program: Program | None, dump_ir: bool) -> None:
    if program is None:
        print(f"{report['file']}: {report['status']}")
        return
    loops = report["loops"]
    print(f"{report['file']}: ok ({report['data_model']}), {len(loops)} loop{'s' * (len(loops) != 1)}")
    for loop in loops:
        where = f"line {loop['line']}:{loop['column']}"
        inside = f"in {loop['function']}" + (f", inside {loop['parent']}" if loop["parent"] else "")
        print(
            f"  {loop['id']}: {where}, insert after line {loop['insert_after_line']}, {inside}; "
            f"variables: {', '.join(loop['variables']) or '-'}"
        )
    if dump_ir:
        print(format_ir(program))
