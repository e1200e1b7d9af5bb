"""Map pycparser's coordinates (in cpp's output) back to lines and columns of the original file.

cpp keeps line numbers (through its line markers) but not columns: it collapses blanks, drops
comments and expands macros. For each line of the user's file we align the tokens cpp produced
with the tokens of the original line (comments blanked) and translate columns token by token.
"""

from __future__ import annotations

import bisect
import difflib
import re
from collections.abc import Iterator
from typing import Any

from ..errors import Coord
from ..lexer import blank_comments, tokens
from .preprocess import Preprocessed

_MARKER = re.compile(r'#\s*(?:line\s+)?(\d+)\s+"((?:\\.|[^"\\])*)"')


def output_lines(text: str) -> Iterator[tuple[str, int, str]]:
    """(file as in the marker, line number, text) for each non-marker line of cpp output."""
    file, line = "", 1
    for raw in text.split("\n"):
        m = _MARKER.match(raw)
        if m:
            file, line = m.group(2), int(m.group(1))
            continue
        if raw.startswith("#"):
            line += 1
            continue
        yield file, line, raw
        line += 1


class CoordMap:
    """Translates pycparser coordinates to `Coord`s in the original source."""

    def __init__(self, pre: Preprocessed) -> None:
        self.filename = pre.filename
        self.marker_name = pre.marker_name
        self._source_lines = blank_comments(pre.source).split("\n")
        self._pp_lines: dict[int, str] = {}
        for file, line, text in output_lines(pre.text):
            if file == pre.marker_name and text.strip() and line not in self._pp_lines:
                self._pp_lines[line] = text
        self._cache: dict[int, tuple[list[int], list[int]]] = {}

    def coord(self, node_coord: Any) -> Coord | None:
        """The original coordinate of a pycparser `Coord` (None stays None)."""
        if node_coord is None:
            return None
        file, line, column = node_coord.file, node_coord.line or 0, node_coord.column or 0
        if file != self.marker_name:
            return Coord(file, line, column)
        return Coord(self.filename, line, self.column(line, column))

    def column(self, line: int, pp_column: int) -> int:
        if pp_column <= 0 or line not in self._pp_lines or not 0 < line <= len(self._source_lines):
            return pp_column
        starts, mapped = self._line_map(line)
        if not starts:
            return pp_column
        i = max(0, bisect.bisect_right(starts, pp_column) - 1)
        return mapped[i]

    def _line_map(self, line: int) -> tuple[list[int], list[int]]:
        cached = self._cache.get(line)
        if cached is None:
            cached = _align(tokens(self._pp_lines[line]), tokens(self._source_lines[line - 1]))
            self._cache[line] = cached
        return cached


def _align(pp: list[tuple[int, str]], orig: list[tuple[int, str]]) -> tuple[list[int], list[int]]:
    """For each cpp token, the column of the original token it came from (best effort)."""
    starts = [col for col, _ in pp]
    if not orig:
        return starts, starts
    mapped = list(starts)
    matcher = difflib.SequenceMatcher(None, [t for _, t in pp], [t for _, t in orig], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        for i in range(i1, i2):
            if tag == "equal":
                j = j1 + (i - i1)
            elif tag == "replace":
                j = j1 + min(i - i1, j2 - j1 - 1)
            else:
                j = min(j1, len(orig) - 1)
            mapped[i] = orig[j][0]
    return starts, mapped
