"""What the server reads off the program text itself: assertion sites, loop keywords, `main`, positions.

A lexical scan (comments, strings and preprocessor lines blanked out first), so that it works on any
text, half-typed or not, without running the frontend.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lsprotocol import types as lsp
from quokka.verifier.lexer import blank_comments, function_header

ASSERT_FUNCTIONS = ("__VERIFIER_assert", "assert")
ERROR_FUNCTIONS = ("reach_error",)
# calls inside the bodies of these functions are the machinery, not the program's assertions
_WRAPPERS = frozenset((*ASSERT_FUNCTIONS, *ERROR_FUNCTIONS, "__assert_fail", "assume_abort_if_not"))
LOOP_KEYWORDS = ("while", "for", "do")

_CALL = re.compile(r"\b(" + "|".join(ASSERT_FUNCTIONS + ERROR_FUNCTIONS) + r")\s*\(")
_LOOP = re.compile(r"\b(while|for|do)\b")
_MENTION = re.compile(r"(\S+?):(\d+)(?::(\d+))?\b")


def mask(text: str) -> str:
    """`text` with comments, string/char literals and preprocessor lines replaced by spaces."""
    return blank_comments(text, literals=True, directives=True, partial=True)


@dataclass(frozen=True)
class Span:
    """A stretch of source: 1-based lines, 1-based character columns, end exclusive."""

    line: int
    column: int
    end_line: int
    end_column: int


@dataclass(frozen=True)
class Site:
    """An assertion of the program: a call of `__VERIFIER_assert`/`assert`, or of `reach_error`."""

    name: str
    span: Span
    text: str  # the call as written, e.g. "__VERIFIER_assert(s == 2 * n)"


@dataclass(frozen=True)
class Function:
    name: str
    header: Span  # the name
    body_start: int  # offsets of `{` and of the matching `}`
    body_end: int


class SourceText:
    """Program text with offset/line/column arithmetic and LSP position conversion.

    LSP characters count code units of `encoding` ("utf-16" unless the client negotiated another).
    """

    def __init__(self, text: str, encoding: str = "utf-16") -> None:
        self.text = text
        self.encoding = encoding
        self.lines = text.split("\n")
        self._starts = [0]
        for line in self.lines[:-1]:
            self._starts.append(self._starts[-1] + len(line) + 1)
        self._masked: str | None = None

    @property
    def masked(self) -> str:
        if self._masked is None:
            self._masked = mask(self.text)
        return self._masked

    def line_col(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of a character offset."""
        lo, hi = 0, len(self._starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self._starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1, offset - self._starts[lo] + 1

    def span(self, start: int, end: int) -> Span:
        line, col = self.line_col(start)
        end_line, end_col = self.line_col(end)
        return Span(line, col, end_line, end_col)

    def line_text(self, line: int) -> str:
        return self.lines[line - 1] if 1 <= line <= len(self.lines) else ""

    def position(self, line: int, column: int) -> lsp.Position:
        """The LSP position of 1-based `line`/`column` (clamped into the text)."""
        line = min(max(line, 1), len(self.lines))
        text = self.lines[line - 1]
        chars = min(max(column - 1, 0), len(text))
        return lsp.Position(line=line - 1, character=_units(text[:chars], self.encoding))

    def range(self, span: Span) -> lsp.Range:
        return lsp.Range(self.position(span.line, span.column), self.position(span.end_line, span.end_column))

    def line_range(self, line: int) -> lsp.Range:
        """The range of a line's content, without its indentation (the whole line when blank)."""
        text = self.line_text(line)
        indent = len(text) - len(text.lstrip())
        if indent == len(text):
            indent = 0
        return self.range(Span(line, indent + 1, line, len(text.rstrip()) + 1))

    def from_position(self, position: lsp.Position) -> tuple[int, int]:
        """1-based (line, column) of an LSP position."""
        line = min(max(position.line, 0), len(self.lines) - 1)
        return line + 1, _chars(self.lines[line], position.character, self.encoding) + 1


def _units(prefix: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(prefix.encode("utf-8"))
    if encoding == "utf-32":
        return len(prefix)
    return len(prefix.encode("utf-16-le")) // 2


def _chars(line: str, units: int, encoding: str) -> int:
    count = 0
    for index, char in enumerate(line):
        if count >= units:
            return index
        count += _units(char, encoding)
    return len(line)


def functions(source: SourceText) -> tuple[Function, ...]:
    """The function definitions at file scope, with their bodies."""
    masked, out, depth, start = source.masked, [], 0, 0
    for index, char in enumerate(masked):
        if char == "{":
            if depth == 0:
                start = index
            depth += 1
        elif char == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                header = function_header(masked, start, max(0, start - 4000))
                if header is not None:
                    out.append(Function(header.group(1), source.span(header.start(1), header.end(1)),
                                        start, index))
    return tuple(out)


def assertion_sites(source: SourceText) -> tuple[Site, ...]:
    """Calls of the assertion functions inside function bodies other than the wrappers themselves."""
    bodies = functions(source)
    out = []
    for match in _CALL.finditer(source.masked):
        owner = next((f for f in bodies if f.body_start < match.start() < f.body_end), None)
        if owner is None or owner.name in _WRAPPERS:
            continue
        end = _matching_paren(source.masked, match.end() - 1)
        out.append(Site(match.group(1), source.span(match.start(), end), source.text[match.start():end]))
    return tuple(out)


def _matching_paren(masked: str, open_index: int) -> int:
    depth = 0
    for index in range(open_index, len(masked)):
        if masked[index] == "(":
            depth += 1
        elif masked[index] == ")":
            depth -= 1
            if depth == 0:
                return index + 1
    return len(masked)


def loop_keywords(source: SourceText) -> tuple[tuple[str, Span], ...]:
    """Every `while`/`for`/`do` keyword outside comments and strings."""
    return tuple((m.group(1), source.span(m.start(), m.end())) for m in _LOOP.finditer(source.masked))


def keyword_at(source: SourceText, line: int, column: int) -> tuple[str, Span] | None:
    """The loop keyword under 1-based (line, column), if any (its end counts too)."""
    for keyword, span in loop_keywords(source):
        if span.line == line and span.column <= column <= span.end_column:
            return keyword, span
    return None


def main_function(source: SourceText) -> Function | None:
    return next((f for f in functions(source) if f.name == "main"), None)


def mentioned_at(message: str, file: str) -> tuple[int, int] | None:
    """(line, column) of the first `path:line[:col]` in `message` that names `file` (column 0: none).

    The one location still read off text: an engine that declines names the place in its reason
    (`ir.refusal`: "floating point: only bounded model checking handles it (prog.c:3:7: float x)"),
    and the portfolio joins those reasons into the UNKNOWN's, which carries no typed cause for it.
    """
    for match in _MENTION.finditer(message):
        if same_file(match.group(1), file):
            return int(match.group(2)), int(match.group(3) or 0)
    return None


def same_file(named: str, file: str) -> bool:
    named, file = named.strip("'\"`()[]"), file.strip()
    return named == file or named.rsplit("/", 1)[-1] == file.rsplit("/", 1)[-1]
