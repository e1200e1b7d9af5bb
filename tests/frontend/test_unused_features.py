"""What does not touch the property does not make a program UNKNOWN (issue 19): an unused
pointer declaration, an output call. Using them still gives a located unsupported feature."""

from __future__ import annotations

import pytest
from quokka.verifier.errors import UnsupportedFeature
from quokka.verifier.exec.interp import run
from quokka.verifier.frontend import lower_source
from quokka.verifier.ir import Assign, walk_stmts

PRELUDE = "extern void __VERIFIER_assert(int cond);\nextern int printf(const char *, ...);\n"


def _lower(body: str):  # type: ignore[no-untyped-def]
    return lower_source(PRELUDE + "int main() {\n" + body + "\nreturn 0; }\n", "u.c", "LP64")


def test_an_unused_pointer_declaration_is_skipped() -> None:
    program = _lower("int **p; int **q = 0; int x = 1; __VERIFIER_assert(x == 1);")
    assert [v.c_name for v in program.variables if v.kind == "local"] == ["x"]
    assert run(program, []).outcome == "exit"


def test_using_it_is_unsupported_where_it_is_used() -> None:
    with pytest.raises(UnsupportedFeature, match=r"u\.c:6:\d+: unsupported feature: pointer to a pointer"):
        _lower("int **p;\nint x = 1;\nx = **p;")


def test_a_declaration_whose_initialiser_does_something_is_not_skipped() -> None:
    with pytest.raises(UnsupportedFeature, match=r"u\.c:4:"):
        _lower("int x = 0; int **p = (int **) x++;")


def test_an_output_call_keeps_the_effects_of_its_arguments() -> None:
    program = _lower('int x = 0;\nprintf("%d %s\\n", x++, "a");\n__VERIFIER_assert(x == 1);')
    assert any(isinstance(s, Assign) for s in walk_stmts(program.body))
    assert run(program, []).outcome == "exit"
    with pytest.raises(UnsupportedFeature, match="printf"):
        _lower('int n = printf("x");')
