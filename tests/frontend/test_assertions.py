"""`find_assertions`: the C text of each assertion a file makes, with its line."""

from __future__ import annotations

from pathlib import Path

import pytest
from quokka.verifier.errors import InputError
from quokka.verifier.frontend import Assertion, assertions_in_text, find_assertions, outline_text

SRC = """#include <assert.h>
extern int __VERIFIER_nondet_int(void);
void reach_error(void) { assert(0); }
void __VERIFIER_assert(int cond) { if (!(cond)) { reach_error(); } }
int main() {
  int a = __VERIFIER_nondet_int(), b = 1, c = a, k = 0;
  while (c >= b) {
    __VERIFIER_assert(a == (k * b) + c);
    c = c - b; k = k + 1;
  }
  assert((a >= 0) || (c < b));
  return 0;
}
"""


def test_each_assertion_call_with_its_line_as_the_programmer_wrote_it(tmp_path: Path) -> None:
    path = tmp_path / "p.c"
    path.write_text(SRC)
    assert find_assertions(path) == (
        Assertion(8, "a == k * b + c"),
        Assertion(11, "a >= 0 || c < b"),
    )


def test_a_file_that_does_not_parse_is_a_located_input_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.c"
    path.write_text("int main() {\n  __VERIFIER_assert(x == );\n}\n")
    with pytest.raises(InputError) as info:
        find_assertions(path)
    assert str(info.value).startswith(f"{path}:2:")


def test_an_assertion_too_deep_to_print_is_a_located_input_error(tmp_path: Path) -> None:
    path = tmp_path / "deep.c"
    path.write_text("int main() {\n  int x = 0;\n  __VERIFIER_assert(" + "- " * 300 + "x == 0);\n}\n")
    with pytest.raises(InputError) as info:
        find_assertions(path)
    assert str(info.value) == f"{path}:3:3: assertion nested too deeply to print"


def test_assertions_in_text_are_those_of_the_same_file(tmp_path: Path) -> None:
    path = tmp_path / "p.c"
    path.write_text(SRC)
    assert assertions_in_text(SRC, "p.c") == find_assertions(path)


OUTLINED = """#include <assert.h>
/* the harness */
extern int __VERIFIER_nondet_int(void);
extern void abort(void);
void reach_error(void) { assert(0); }
void __VERIFIER_assert(int cond) {
  if (!(cond)) { reach_error(); }
}

int limit = 10;  // a global stays
int main() {
  int i = 0;  /* counts */

  while (i < limit) {
    __VERIFIER_assert(i >= 0);
    i++;
  }
  return 0;
}
"""


def test_the_outline_keeps_the_code_lines_with_their_numbers_and_drops_the_harness() -> None:
    outline = outline_text(OUTLINED, "o.c")
    assert outline.code_lines == (
        (10, "int limit = 10;"),
        (11, "int main() {"),
        (12, "  int i = 0;"),
        (14, "  while (i < limit) {"),
        (15, "    __VERIFIER_assert(i >= 0);"),
        (16, "    i++;"),
        (17, "  }"),
        (18, "  return 0;"),
        (19, "}"),
    )
    assert outline.assertions == (Assertion(15, "i >= 0"),)


def test_a_harness_definition_after_main_is_dropped_too() -> None:
    source = "void __VERIFIER_assert(int c);\nint main() {\n  __VERIFIER_assert(1);\n}\n"
    source += "void __VERIFIER_assert(int c) {\n  if (!c) {}\n}\n"
    assert [n for n, _ in outline_text(source, "late.c").code_lines] == [2, 3, 4]
