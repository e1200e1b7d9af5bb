"""Preprocessed files that use `size_t` (and gcc's other standard type names) without declaring
them (issue 17: `void *malloc(size_t size);` in a `.i` failed with "syntax error before: size").

A text that does not parse is parsed again with typedefs of the standard names it uses but never
typedefs (gcc's types for the data model); a file that parses, or declares the names itself,
keeps its meaning.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from frontend_helpers import GCC
from quokka.verifier.errors import InputError
from quokka.verifier.exec.interp import run
from quokka.verifier.frontend import lower, lower_source
from quokka.verifier.frontend.preprocess import standard_typedefs
from quokka.verifier.ir import Program

HARNESS = "extern unsigned long __VERIFIER_nondet_ulong(void);\nvoid reach_error(void);\n"
PROTOTYPES = (
    "extern void *memcpy(void *dest, const void *src, size_t n);\n"
    "void *malloc(size_t size);\n"
    "extern size_t strlen(const char *s);\n"
)
# n - 1 from 0 is SIZE_MAX: 2**32 - 1 on ILP32, 2**64 - 1 on LP64
MAIN = "int main() {\n  size_t n = 0;\n  n = n - 1;\n  if (n == 4294967295u) reach_error();\n  return 0;\n}\n"


def outcome(program: Program) -> str:
    return run(program, []).outcome


@pytest.mark.parametrize("suffix", [".i", ".c"])
def test_prototypes_with_size_t_and_no_typedef_parse(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"task{suffix}"
    path.write_text(HARNESS + PROTOTYPES + MAIN)
    program = lower(path, "LP64")
    assert program.var("n").type.name == "unsigned long"


@pytest.mark.parametrize(("data_model", "result"), [("ILP32", "error"), ("LP64", "exit")])
def test_an_undeclared_size_t_is_gccs_size_type(data_model: str, result: str) -> None:
    program = lower_source(HARNESS + PROTOTYPES + MAIN, "task.i", data_model)
    assert program.var("n").type.name == ("unsigned int" if data_model == "ILP32" else "unsigned long")
    assert outcome(program) == result


@pytest.mark.parametrize("data_model", ["ILP32", "LP64"])
def test_a_files_own_typedef_keeps_its_meaning(data_model: str) -> None:
    # an unusual size_t: one byte, so 0 - 1 is 255 whatever the data model
    own = "typedef unsigned char size_t;\n" + HARNESS + PROTOTYPES
    program = lower_source(own + MAIN.replace("4294967295u", "255"), "own.i", data_model)
    assert program.var("n").type.name == "unsigned char"
    assert outcome(program) == "error"


def test_the_usual_typedef_before_the_prototypes_parses() -> None:
    text = "typedef long unsigned int size_t;\n" + HARNESS + PROTOTYPES + MAIN
    assert lower_source(text, "glibc.i", "LP64").var("n").type.name == "unsigned long"


def test_a_file_using_the_name_for_a_variable_is_unchanged() -> None:
    program = lower_source("int size_t = 3;\nint main() { int k = size_t; return k; }\n", "v.c")
    assert program.var("size_t").type.name == "int"
    assert standard_typedefs("int size_t = 3;", "LP64") != ""  # offered, but never needed: it parses


@pytest.mark.parametrize(
    "text",
    [
        "typedef __builtin_va_list __gnuc_va_list;\ntypedef __gnuc_va_list va_list;\n",
        "typedef __SIZE_TYPE__ size_t;\ntypedef __PTRDIFF_TYPE__ ptrdiff_t;\n",
        "typedef __WCHAR_TYPE__ wchar_t;\n",
        "extern int printf(const char *format, ...);\n",
        "ptrdiff_t d;\nwchar_t w;\n",
    ],
)
def test_gcc_builtin_type_names_parse(text: str) -> None:
    src = text + "int main() { _Bool b = 2; int k = b; return k; }\n"
    assert lower_source(src, "builtins.i", "LP64").var("b").type.name == "_Bool"


@pytest.mark.parametrize(
    ("data_model", "types"),
    [("LP64", ("unsigned long", "long", "int")), ("ILP32", ("unsigned int", "int", "long"))],
)
def test_gcc_type_macros_per_data_model(data_model: str, types: tuple[str, str, str]) -> None:
    src = "__SIZE_TYPE__ s;\n__PTRDIFF_TYPE__ p;\n__WCHAR_TYPE__ w;\nint main() { return 0; }\n"
    program = lower_source(src, "m.c", data_model)
    assert tuple(program.var(v).type.name for v in "spw") == types


@pytest.mark.needs_gcc
@pytest.mark.skipif(GCC is None, reason="needs gcc")
def test_the_type_macros_are_gccs(tmp_path: Path) -> None:
    assert GCC is not None
    path = tmp_path / "types.c"
    path.write_text(
        "_Static_assert(_Generic((__SIZE_TYPE__)0, unsigned long: 1, default: 0), \"size\");\n"
        "_Static_assert(_Generic((__PTRDIFF_TYPE__)0, long: 1, default: 0), \"ptrdiff\");\n"
        "_Static_assert(_Generic((__WCHAR_TYPE__)0, int: 1, default: 0), \"wchar\");\n"
    )
    if subprocess.run([GCC, "-dM", "-E", "-x", "c", "/dev/null"], capture_output=True, text=True,
                      timeout=60, check=False).stdout.count("__LP64__") == 0:  # fmt: skip
        pytest.skip("gcc is not an LP64 compiler here")
    done = subprocess.run(
        [GCC, "-fsyntax-only", str(path)], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr


def test_a_real_syntax_error_is_reported_where_it_is() -> None:
    text = HARNESS + PROTOTYPES + "int main() {\n  size_t n = ;\n  return 0;\n}\n"
    with pytest.raises(InputError) as info:
        lower_source(text, "bad.i", "LP64")
    assert str(info.value).startswith("bad.i:7:")  # the `= ;`, not the first size_t


def test_an_error_the_typedefs_do_not_explain_is_the_first_one() -> None:
    text = "void f(size_t n, ) ;\nint main() { return 0; }\n"
    with pytest.raises(InputError) as info:
        lower_source(text, "bad.i", "LP64")
    assert str(info.value).startswith("bad.i:1:")
    assert "parse error" in str(info.value)


def test_no_typedefs_when_the_names_are_not_used() -> None:
    assert standard_typedefs("int main() { return 0; }", "LP64") == ""
    assert standard_typedefs("typedef unsigned long size_t; size_t n;", "LP64") == ""
    prelude = standard_typedefs("void *malloc(size_t size); wchar_t w;", "ILP32")
    assert prelude == '# 1 "<built-in>"\ntypedef unsigned int size_t;\ntypedef long wchar_t;\n'
