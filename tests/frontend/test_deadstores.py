"""Stores to pointer variables that nothing reads are dropped before lowering (issue 17: the veris
task that kept `s = in;`); every pointer that is read, or stored in any other way, still counts."""

from __future__ import annotations

import pytest
from quokka.verifier import ir
from quokka.verifier.errors import UnsupportedFeature
from quokka.verifier.frontend.lower import lower_source


def lower(body: str, before: str = "") -> ir.Program:
    return lower_source(f"{before}\nint main(void) {{\n{body}\nreturn 0;\n}}\n", "t.c")


def assigned(program: ir.Program) -> set[str]:
    return {s.target for s in ir.walk_stmts(program.body) if isinstance(s, ir.Assign)}


def test_a_pointer_only_stored_to_is_dropped():
    program = lower("char in[3]; char *s; int i = 0; s = in; s = 0; in[0] = 1; i = in[0];")
    names = {v.c_name: v.name for v in program.variables}
    assert names["s"] not in assigned(program) and names["i"] in assigned(program)


def test_its_initialiser_is_dropped_too():
    program = lower("char in[3]; char *s = in; int x = 1;")
    names = {v.c_name: v.name for v in program.variables}
    assert names["s"] not in assigned(program)


@pytest.mark.parametrize("body", [
    "char in[3]; char *s; s = in; char c = s[0];",  # read
    "char in[3]; char *s; int c = 1; if (c) s = in;",  # stored, but not as a plain statement
    "char in[3]; char *s; for (s = in; 0;) {}",
])
def test_a_pointer_read_or_stored_otherwise_still_counts(body: str):
    with pytest.raises(UnsupportedFeature):
        lower(body)


def test_a_name_also_declared_at_file_scope_is_left_alone():
    """`g = in` may store to the global `g` (the local `g` shadows it only in its block)."""
    with pytest.raises(UnsupportedFeature):
        lower("char in[3]; g = in; { char *g; }", before="char *g;")
