"""The assertions a C file states, as C text: `find_assertions`.

Used where a program's own assertion is a candidate loop invariant (training data), so the text is
what the programmer wrote, regenerated from pycparser's AST (macros such as `assert` expanded).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pycparser import c_ast, c_generator

from .calls import ASSERT_FUNCTIONS
from .coords import CoordMap
from .lower import parse, read_source
from .preprocess import preprocess


@dataclass(frozen=True)
class Assertion:
    """One call of an assertion function in the file itself: its line and its argument as C text."""

    line: int
    condition: str


def _calls(root: Any) -> Iterator[Any]:
    """The `FuncCall` nodes below `root` in source order (a stack: deep nesting is no recursion)."""
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, c_ast.FuncCall):
            yield node
        stack.extend(child for _, child in reversed(node.children()))


def _callee(node: Any) -> str | None:
    return node.name.name if isinstance(node.name, c_ast.ID) else None


def find_assertions(path: Path, data_model: str = "LP64") -> tuple[Assertion, ...]:
    """Each assertion call in the file at `path` (not in included headers), in source order.

    Raises what `lower` raises for a file that does not preprocess or parse.
    """
    pre = preprocess(read_source(path), str(path), data_model, path.parent)
    coords = CoordMap(pre)
    text = c_generator.CGenerator(reduce_parentheses=True)
    found = []
    for call in _calls(parse(pre, coords)):
        coord = coords.coord(call.coord)
        args = call.args.exprs if call.args is not None else []
        if coord is None or coord.file != coords.filename or _callee(call) not in ASSERT_FUNCTIONS:
            continue
        if len(args) == 1 and not isinstance(args[0], c_ast.Constant):
            found.append(Assertion(coord.line, text.visit(args[0])))
    return tuple(found)
