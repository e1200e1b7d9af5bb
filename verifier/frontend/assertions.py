"""The assertions a C file states, as C text: `find_assertions`.

Used where a program's own assertion is a candidate loop invariant (training data), so the text is
what the programmer wrote, regenerated from pycparser's AST (macros such as `assert` expanded).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pycparser import c_ast, c_generator

from ..errors import Coord, InputError
from .calls import ASSERT_FUNCTIONS
from .lower import parse_source, read_source, walk_ast


@dataclass(frozen=True)
class Assertion:
    """One call of an assertion function in the file itself: its line and its argument as C text."""

    line: int
    condition: str


def _callee(node: Any) -> str | None:
    return node.name.name if isinstance(node.name, c_ast.ID) else None


def find_assertions(path: Path, data_model: str = "LP64") -> tuple[Assertion, ...]:
    """Each assertion call in the file at `path` (not in included headers), in source order.

    Raises what `lower` raises for a file that does not preprocess or parse, and a located
    InputError for an assertion nested too deeply to print.
    """
    return assertions_in_text(read_source(path), str(path), data_model, path.parent)


def assertions_in_text(
    text: str, filename: str, data_model: str = "LP64", directory: Path | None = None
) -> tuple[Assertion, ...]:
    """`find_assertions` of C text (`filename` names it in errors; `directory` resolves includes)."""
    ast, coords = parse_source(text, filename, data_model, directory)
    generator = c_generator.CGenerator(reduce_parentheses=True)
    found = []
    for call in walk_ast(ast):
        coord = coords.coord(call.coord) if isinstance(call, c_ast.FuncCall) else None
        if coord is None or coord.file != coords.filename or _callee(call) not in ASSERT_FUNCTIONS:
            continue
        args = call.args.exprs if call.args is not None else []
        if len(args) == 1 and not isinstance(args[0], c_ast.Constant):
            found.append(Assertion(coord.line, _text(generator, args[0], coord)))
    return tuple(found)


def _text(generator: c_generator.CGenerator, expr: Any, coord: Coord) -> str:
    try:
        return str(generator.visit(expr))
    except RecursionError:  # pycparser's generator recurses per operator
        raise InputError(coord, "assertion nested too deeply to print") from None
