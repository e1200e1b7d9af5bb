"""The shared lexer: comments, literals and preprocessor lines blanked in place; function headers."""

from __future__ import annotations

import re

import pytest
from quokka.verifier.lexer import blank_comments, function_header, tokens

SOURCE = """#include <stdio.h>
  #define LIMIT 10 // the bound
int count; /* a comment
   over two lines */ int total;
char *s = "say \\"hi\\" // not a comment";
char q = '\\''; char d = '"'; int after;
int main() { // while
  return count + total; /* for */ }
"""


def _same_shape(text: str, blanked: str) -> None:
    assert len(blanked) == len(text)
    assert [i for i, c in enumerate(blanked) if c == "\n"] == [i for i, c in enumerate(text) if c == "\n"]


def _blank(text: str, *parts: str) -> str:
    """`text` with each of `parts` replaced by spaces (newlines kept)."""
    for part in parts:
        text = text.replace(part, re.sub(r"[^\n]", " ", part))
    return text


def _positions(text: str, word: str) -> list[int]:
    return [m.start() for m in re.finditer(rf"\b{word}\b", text)]


@pytest.mark.parametrize(
    "options",
    [{}, {"literals": True}, {"literals": True, "directives": True},
     {"literals": True, "directives": True, "partial": True}],
)  # fmt: skip
def test_blanking_keeps_every_newline_and_offset(options: dict[str, bool]) -> None:
    blanked = blank_comments(SOURCE, **options)
    _same_shape(SOURCE, blanked)
    for word in ("count", "total", "after", "main", "return"):
        assert _positions(blanked, word) == _positions(SOURCE, word)


def test_what_each_option_blanks() -> None:
    comments_only = blank_comments(SOURCE)
    assert not {"the bound", "over two", "while"} & set(re.findall(r"the bound|over two|\w+", comments_only))
    assert '"say \\"hi\\" // not a comment"' in comments_only and "'\\''" in comments_only
    assert "#define LIMIT" in comments_only
    code = blank_comments(SOURCE, literals=True, directives=True)
    assert not {"include", "LIMIT", "say", "not", "'", '"', "for"} & set(re.findall(r"\w+|\S", code))


def test_line_and_block_comments_become_spaces() -> None:
    text = "a; // one\nb; /* two\n three */ c;\n"
    assert blank_comments(text) == _blank(text, "// one", "/* two\n three */")


def test_literals_are_kept_by_default_and_shield_what_looks_like_a_comment() -> None:
    text = "x = \"a // b /* c\"; y = '/'; // z\n"
    assert blank_comments(text) == "x = \"a // b /* c\"; y = '/';     \n"
    assert blank_comments(text, literals=True) == "x =              ; y =    ;     \n"


def test_escaped_quotes_and_quote_characters() -> None:
    text = "s = \"a\\\"b\"; c = '\\''; d = '\"'; e = 1;"
    assert blank_comments(text, literals=True) == "s =       ; c =     ; d =    ; e = 1;"
    assert blank_comments(text) == text


def test_a_string_continued_with_a_backslash_spans_the_newline() -> None:
    text = 's = "one \\\ntwo"; x;'
    assert blank_comments(text, literals=True) == "s =       \n    ; x;"


def test_unterminated_comment_runs_to_the_end_of_the_text() -> None:
    text = "int a; /* half\ntyped int b;"
    assert blank_comments(text) == "int a;        \n            "


def test_unterminated_literal_only_when_the_text_is_partial() -> None:
    text = "s = \"half // typed\nint b; c = 'x"
    assert blank_comments(text, literals=True, partial=True) == "s =               \nint b; c =   "
    # a lone quote is an ordinary character otherwise: what follows is still searched
    assert blank_comments(text, literals=True) == "s = \"half         \nint b; c = 'x"


def test_preprocessor_lines_are_blanked_on_request() -> None:
    text = "#include <a.h>\n  #  define N 1\nint x = N; # not at line start\n"
    assert blank_comments(text) == text
    blanked = blank_comments(text, directives=True)
    assert blanked == _blank(text, "#include <a.h>", "  #  define N 1")


def test_comment_in_the_middle_of_a_directive_line_does_not_start_a_directive() -> None:
    text = "/* x */ #define N 1\n"
    assert blank_comments(text, directives=True) == "        #define N 1\n"


def test_tokens_are_numbered_by_column() -> None:
    assert tokens('  x->y += 1.5e+3; s = "a b";') == [
        (3, "x"), (4, "->"), (6, "y"), (8, "+="), (11, "1.5e+3"), (17, ";"), (19, "s"), (21, "="),
        (23, '"a b"'), (28, ";")]  # fmt: skip


@pytest.mark.parametrize(
    ("code", "name"),
    [("int main(void) {", "main"), ("static int f(int (*g)(int), int n)\n{", "f"),
     ("while (x) {", None), ("x = sizeof(int) {", None), ("struct s {", None), ("int 1a() {", None)],
)  # fmt: skip
def test_function_header_before_a_brace(code: str, name: str | None) -> None:
    header = function_header(code, len(code) - 1)
    assert (header.group(1) if header else None) == name
    if header is not None:
        assert code[header.start(1) : header.end(1)] == name


def test_function_header_looks_back_no_further_than_start() -> None:
    code = "int f(int a,\n      int b) {"
    assert function_header(code, len(code) - 1, code.index("int b")) is None
    header = function_header(code, len(code) - 1, 0)
    assert header is not None and header.start(1) == code.index("f")
