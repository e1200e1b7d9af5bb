"""The lexical layer of C source text, shared by all who search it without parsing it.

`blank_comments` replaces comments (and, on request, string/char literals and preprocessor lines)
by spaces, keeping every newline, so that offsets, lines and columns of what is left do not move.
Pure text: no cpp, no pycparser.
"""

from __future__ import annotations

import functools
import re

_COMMENT = r"//[^\n]*|/\*.*?(?:\*/|\Z)"  # an unterminated `/*` runs to the end, as in cpp
_LITERAL = r"\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'"
_OPEN_LITERAL = r"\"(?:\\.|[^\"\\\n])*\"?|'(?:\\.|[^'\\\n])*'?"
_DIRECTIVE = r"^[^\S\n]*\#[^\n]*"
_NOT_NEWLINE = re.compile(r"[^\n]")

_TOKEN = re.compile(
    r"""[A-Za-z_]\w*
    | \.?\d(?:[eEpP][+-]|[\w.])*
    | "(?:\\.|[^"\\\n])*"?
    | '(?:\\.|[^'\\\n])*'?
    | \.\.\.|<<=|>>=|->|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^!=<>]=|\#\#
    | \S""",
    re.VERBOSE,
)
_HEADER = re.compile(r"\b([A-Za-z_]\w*)\s*\([^;{}()]*(?:\([^;{}()]*\)[^;{}()]*)*\)\s*$")
_NOT_FUNCTIONS = frozenset(("if", "while", "for", "switch", "sizeof"))


def blank_comments(
    text: str, *, literals: bool = False, directives: bool = False, partial: bool = False
) -> str:
    """`text` with every comment replaced by spaces, newlines kept.

    literals: blank string and character literals too (else they are kept as they are, though a
    `//` or `/*` inside one still starts no comment). directives: blank preprocessor lines too.
    partial: the text may be half-typed, so a literal without its closing quote runs to the end of
    its line (else such a lone quote is an ordinary character).
    """

    def blank(m: re.Match[str]) -> str:
        s = m.group(0)
        return s if not literals and s[0] in "\"'" else _NOT_NEWLINE.sub(" ", s)

    return _blanked(directives, partial).sub(blank, text)


@functools.cache
def _blanked(directives: bool, partial: bool) -> re.Pattern[str]:
    parts = [_COMMENT, _OPEN_LITERAL if partial else _LITERAL] + ([_DIRECTIVE] if directives else [])
    return re.compile("|".join(parts), re.DOTALL | re.MULTILINE)


def tokens(line: str) -> list[tuple[int, str]]:
    """(1-based column, text) of each C token on `line`."""
    return [(m.start() + 1, m.group(0)) for m in _TOKEN.finditer(line)]


def function_header(code: str, brace: int, start: int = 0) -> re.Match[str] | None:
    """The header `name(parameters)` that ends just before the `{` at `brace` in blanked `code`,
    looking no further back than `start`; group 1 is the name. None where there is none, or where
    the "name" is a keyword such as `while`."""
    header = _HEADER.search(code, start, brace)
    return header if header is not None and header.group(1) not in _NOT_FUNCTIONS else None
