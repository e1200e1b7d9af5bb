"""What a C file states, for a reader: its assertions as C text (`find_assertions`) and its code
lines without comments and without the SV-COMP harness (`outline_text`).

Used where a program's own assertion is a candidate loop invariant (training data), so the text is
what the programmer wrote, regenerated from pycparser's AST (macros such as `assert` expanded), and
by the language-model prompt, which shows a program as compactly as it can be read.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pycparser import c_ast, c_generator

from ..errors import Coord, InputError
from ..lexer import blank_comments
from .calls import ASSERT_FUNCTIONS, ASSUME_FUNCTIONS, ERROR_FUNCTIONS
from .coords import CoordMap
from .lower import parse_source, read_source, walk_ast

HARNESS_FUNCTIONS = ERROR_FUNCTIONS | ASSUME_FUNCTIONS | ASSERT_FUNCTIONS


@dataclass(frozen=True)
class Assertion:
    """One call of an assertion function in the file itself: its line and its argument as C text."""

    line: int
    condition: str


@dataclass(frozen=True)
class Outline:
    """A file as a reader needs it: its assertions, and its code lines `(line, text)` without
    comments, blank lines, `#include`s, function prototypes and the definitions of the SV-COMP
    harness functions (`reach_error`, `__VERIFIER_assert`, `assume_abort_if_not`, ...)."""

    assertions: tuple[Assertion, ...]
    code_lines: tuple[tuple[int, str], ...]


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
    return _assertions(ast, coords)


def outline_text(
    text: str, filename: str, data_model: str = "LP64", directory: Path | None = None
) -> Outline:
    """The `Outline` of C text; raises what `assertions_in_text` raises."""
    ast, coords = parse_source(text, filename, data_model, directory)
    hidden = _harness_lines(ast, coords, text.count("\n") + 1)
    lines = [
        (n, line.rstrip())
        for n, line in enumerate(blank_comments(text).split("\n"), 1)
        if n not in hidden and line.strip() and not line.lstrip().startswith("#include")
    ]
    return Outline(_assertions(ast, coords), tuple(lines))


def _harness_lines(ast: c_ast.FileAST, coords: CoordMap, last: int) -> set[int]:
    """The lines of top-level prototypes and harness function definitions in the file itself:
    each from its first line to the line before the next top-level item."""
    starts = []
    for node in ast.ext:
        coord = coords.coord(node.coord)
        if coord is not None and coord.file == coords.filename:
            starts.append((coord.line, _is_harness(node)))
    hidden: set[int] = set()
    for i, (line, harness) in enumerate(starts):
        end = starts[i + 1][0] - 1 if i + 1 < len(starts) else last
        if harness:
            hidden.update(range(line, max(line, end) + 1))
    return hidden


def _is_harness(node: Any) -> bool:
    if isinstance(node, c_ast.FuncDef):
        return node.decl.name in HARNESS_FUNCTIONS
    return isinstance(node, c_ast.Decl) and isinstance(node.type, c_ast.FuncDecl)


def _assertions(ast: c_ast.FileAST, coords: CoordMap) -> tuple[Assertion, ...]:
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
