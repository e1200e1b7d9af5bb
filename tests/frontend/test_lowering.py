"""Per-feature tests of `lower_source`: structure, names, loops, coordinates, builtins, errors."""

from __future__ import annotations

import pytest
from frontend_helpers import run_ir
from quokka.verifier.errors import FrontendError, InputError, UnsupportedFeature
from quokka.verifier.frontend import lower, lower_source
from quokka.verifier.ir import (
    ArrayType,
    Assert,
    Assign,
    Assume,
    Binary,
    Break,
    Cast,
    Const,
    Havoc,
    If,
    IntType,
    Loop,
    Program,
    Scope,
    Stmt,
    Store,
    walk_stmts,
)
from quokka.verifier.ir.typecheck import check_program


def lowered(src: str, data_model: str = "LP64") -> Program:
    program = lower_source(src, "t.c", data_model)
    check_program(program)
    return program


def stmts(program: Program) -> list[Stmt]:
    return list(walk_stmts(program.body))


def of_type(program: Program, cls: type) -> list:
    return [s for s in stmts(program) if isinstance(s, cls)]


# ----------------------------------------------------------------------------- coordinates


def test_coords_name_the_users_file_with_original_columns() -> None:
    src = (
        "int main() {\n\tint   x = 0; /* comment */  int y = 1;\n  while (x    <  10) x++;\n  return 0;\n}\n"
    )
    program = lower_source(src, "dir/prog.c")
    loop = program.loops[0]
    assert (loop.coord.file, loop.coord.line, loop.coord.column) == ("dir/prog.c", 3, 3)
    assigns = {s.target: s for s in of_type(program, Assign)}
    # cpp collapses the blanks; the column of `y` is still that of the original text.
    assert assigns["y"].coord.column == src.splitlines()[1].index("y = 1") + 1
    assert all(c.file == "dir/prog.c" for c in program.overflow_sites)


def test_columns_survive_macro_expansion() -> None:
    src = "#define LIMIT 100\nint main() {\n  int x = 0;\n  while (x < LIMIT) { x++; }\n  return 0;\n}\n"
    program = lower_source(src, "m.c")
    check = next(s for s in stmts(program) if isinstance(s, If))
    assert check.coord.line == 4 and check.coord.column == src.splitlines()[3].index("x < LIMIT") + 1


def test_lower_reads_a_file_and_resolves_quoted_includes(tmp_path) -> None:
    (tmp_path / "defs.h").write_text("#define START 3\n")
    main = tmp_path / "main.c"
    main.write_text('#include "defs.h"\n#include <assert.h>\nint main() { int x = START; assert(x == 3); }\n')
    program = lower(main)
    assert program.file == str(main)
    (a,) = of_type(program, Assert)
    assert a.coord.file == str(main) and a.coord.line == 3


# ----------------------------------------------------------------------------- loops


def test_loop_info_ids_lines_scope_and_parents() -> None:
    src = """int g;
int main() {
  int x = 0, y;
  while (x < 3) {
    int y = x;
    for (int i = 0; i < y; i++) { x++; }
    x++;
  }
  do { x--; } while (x > 0);
  return 0;
}
"""
    program = lowered(src)
    outer, inner, do_loop = program.loops
    assert (outer.id, outer.coord.line, outer.insert_after_line, outer.parent) == ("L4", 4, 4, None)
    assert dict(outer.scope) == {"g": "g", "x": "x", "y": "y"}
    assert inner.parent == "L4" and inner.id == "L6"
    # the inner `y` shadows main's `y` and gets a fresh IR name; `i` is in scope at the head.
    assert dict(inner.scope)["y"] != "y" and dict(inner.scope)["i"] == "i"
    assert do_loop.id == "L9" and do_loop.function == "main"


def test_loops_of_a_function_inlined_twice_get_distinct_ids() -> None:
    src = """int f(int n) { int s = 0; while (n > 0) { s += n; n--; } return s; }
int main() { int a = f(2); int b = f(3); return 0; }"""
    program = lowered(src)
    assert [i.id for i in program.loops] == ["L1", "L1_2"]
    assert all(i.function == "f" for i in program.loops)
    first, second = program.loops
    assert dict(first.scope)["n"] != dict(second.scope)["n"]
    assert "a" not in dict(first.scope)  # main's locals are not visible inside f


def test_while_condition_side_effects_go_to_the_loop_top() -> None:
    program = lowered("int main() { int counter = 0; while (counter++ < 10) { } return 0; }")
    (loop,) = of_type(program, Loop)
    assert isinstance(loop.body[-1], If) and isinstance(loop.body[-1].then[0], Break)
    assert [type(s) for s in loop.body[:-1]] == [Assign, Assign]  # save old value, increment


def test_for_update_is_the_loop_step_and_do_while_uses_step_only_with_continue() -> None:
    program = lowered("int main() { int s = 0; for (int i = 0; i < 4; i++) s += i; return 0; }")
    (loop,) = of_type(program, Loop)
    assert len(loop.step) == 1 and loop.step[0].target == "i"
    plain = lowered("int main() { int i = 0; do { i++; } while (i < 3); return 0; }")
    assert of_type(plain, Loop)[0].step == ()
    cont = lowered("int main() { int i = 0; do { i++; if (i == 1) continue; } while (i < 3); return 0; }")
    assert isinstance(of_type(cont, Loop)[0].step[-1], If)


def test_while_true_has_no_exit_check() -> None:
    program = lowered("int main() { int x = 0; while (1) { if (x > 5) break; x++; } return 0; }")
    (loop,) = of_type(program, Loop)
    assert isinstance(loop.body[0], If) and loop.body[0].cond == Binary(
        ">", loop.body[0].cond.left, Const(5, IntType("int", 32, True)), IntType("int", 32, True)
    )


# ----------------------------------------------------------------------------- names and scopes


def test_shadowed_and_inlined_locals_get_unique_names() -> None:
    src = "int f(int x) { int t = x; return t; }\n"
    src += "int main() { int x = 1; { int x = 2; } f(x); f(x); return 0; }"
    program = lowered(src)
    names = [v.name for v in program.variables]
    assert len(names) == len(set(names))
    assert "x" in names and {"x_1", "x_2", "x_3"} <= set(names)
    scopes = of_type(program, Scope)
    assert [s.function for s in scopes] == ["main", "f", "f"]
    kinds = {v.name: v.kind for v in program.variables}
    assert kinds["x"] == "local" and any(v.kind == "param" and v.c_name == "x" for v in program.variables)


def test_uninitialised_locals_are_havocked_and_globals_initialised_first() -> None:
    program = lowered("int g; int h = 7; int main() { int u; int v = u; return v; }")
    main = program.body[0]
    assert isinstance(main, Scope) and main.function == "main"
    assert main.body[0] == Assign("g", Const(0, IntType("int", 32, True)), main.body[0].coord)
    assert isinstance(main.body[1], Assign) and main.body[1].value == Const(7, IntType("int", 32, True))
    (havoc,) = [s for s in of_type(program, Havoc) if s.target == "u"]
    assert havoc.origin == "uninitialised"


# ----------------------------------------------------------------------------- builtins


def test_nondet_types_follow_the_declaration_and_the_name() -> None:
    src = """extern unsigned short __VERIFIER_nondet_ushort(void);
int main() { int a = __VERIFIER_nondet_ushort(); long b = __VERIFIER_nondet_long();
  _Bool c = __VERIFIER_nondet_bool(); return 0; }"""
    program = lowered(src, "ILP32")
    havocs = of_type(program, Havoc)
    types = {h.origin: program.var(h.target).type for h in havocs if h.origin.startswith("__VERIFIER")}
    assert types["__VERIFIER_nondet_ushort"] == IntType("unsigned short", 16, False)
    assert types["__VERIFIER_nondet_long"] == IntType("long", 32, True)  # ILP32
    assert types["__VERIFIER_nondet_bool"] == IntType("_Bool", 1, False)


def test_reach_error_is_the_error_whatever_its_body_and_site_is_mains_statement() -> None:
    src = """void reach_error() { }
void __VERIFIER_assert(int cond) { if (!(cond)) { ERROR: { reach_error(); } } return; }
int main() {
  int x = 0;
  __VERIFIER_assert(x == 0);
  return 0;
}"""
    program = lowered(src)
    (a,) = of_type(program, Assert)
    assert a.cond == Const(0, IntType("int", 32, True))
    assert a.coord.line == 2 and a.site.line == 5


def test_declared_only_assert_and_assume_are_builtins_with_parameter_conversion() -> None:
    src = """extern void __VERIFIER_assert(int cond); extern void __VERIFIER_assume(int);
int main() { long big = 4294967296L; __VERIFIER_assume(big); __VERIFIER_assert(big); return 0; }"""
    program = lowered(src)
    (assume,) = of_type(program, Assume)
    (check,) = of_type(program, Assert)
    # the argument converts to int, so 2**32 becomes 0: the assumption blocks, the assertion fails.
    assert isinstance(assume.cond, Cast) and assume.cond.type == IntType("int", 32, True)
    assert check.site == check.coord and check.coord.line == 2
    assert run_ir(src).outcome == "blocked"


def test_user_definitions_win_over_builtins() -> None:
    src = """void assert(int cond) { if (!cond) { reach_error(); } }
void assume(int cond) { if (!cond) { abort(); } }
int main() { int x = 1; assume(x > 0); assert(x > 0); return 0; }"""
    program = lowered(src)
    assert [s.function for s in of_type(program, Scope)] == ["main", "assume", "assert"]
    assert of_type(program, Assume)[0].cond == Const(0, IntType("int", 32, True))  # abort()


def test_assert_h_assert_is_an_assertion_and_ndebug_removes_it() -> None:
    program = lowered("#include <assert.h>\nint main() { long x = 1L << 40; assert(x); return 0; }")
    (a,) = of_type(program, Assert)
    assert a.cond.type == IntType("long", 64, True)  # no conversion to int: the real macro tests x != 0
    ndebug = lowered("#define NDEBUG\n#include <assert.h>\nint main() { assert(0); return 0; }")
    assert of_type(ndebug, Assert) == []


def test_assert_fail_abort_and_exit() -> None:
    src = """extern void __assert_fail(const char *, const char *, unsigned int, const char *);
int main() { int x = 0; if (x) exit(1); if (x) abort(); __assert_fail("0", "f.c", 3, "main"); return 0; }"""
    program = lowered(src)
    assert len(of_type(program, Assume)) == 2 and all(s.cond.value == 0 for s in of_type(program, Assume))
    assert len(of_type(program, Assert)) == 1


def test_code2inv_unknown_is_nondeterministic() -> None:
    program = lowered("int main() { int x = 0; while (unknown()) { x++; } return 0; }")
    assert any(h.origin == "unknown" for h in of_type(program, Havoc))


def test_int_sqrt_is_exact() -> None:
    src = """extern double sqrt(double);
int main() { unsigned n = __VERIFIER_nondet_uint(); unsigned s = sqrt(n);
  __VERIFIER_assert(s * s <= n); return 0; }"""
    program = lowered(src)
    assert any(h.origin == "sqrt" for h in of_type(program, Havoc))
    assert len(of_type(program, Assume)) == 1


# ----------------------------------------------------------------------------- arrays, switch


def test_arrays_select_store_and_initialisers() -> None:
    src = "int g[3] = {0, 5}; int main() { int a[] = {1, [3] = 4}; a[2] = g[1] + a[3]; return a[2]; }"
    program = lowered(src)
    assert program.var("a").type == ArrayType(IntType("int", 32, True), 4)
    assert program.var("g").type == ArrayType(IntType("int", 32, True), 3)
    stores = [s for s in of_type(program, Assign) if isinstance(s.value, Store)]
    assert {s.target for s in stores} == {"g", "a"}


def test_switch_without_fallthrough_needs_no_flags() -> None:
    src = (
        "int main() { int x = 2, r = 0; switch (x) { case 1: r = 1; break; case 2: case 3: r = 2; break; "
        "default: r = 3; } return r; }"
    )
    program = lowered(src)
    temps = [v.name for v in program.variables if v.kind == "temp"]
    assert not any(t.startswith(("fall", "brk")) for t in temps)


# ----------------------------------------------------------------------------- overflow sites


def test_signed_operations_are_overflow_sites_unsigned_are_not() -> None:
    program = lowered(
        "int main() { int a = 1, b; unsigned u = 2; b = a * 3; u = u * 3; b = -a; "
        "b = 2147483647 + 1; return 0; }"
    )
    lines = {(c.line, c.column) for c in program.overflow_sites}
    assert len(lines) == 3  # a * 3, -a and the constant overflow; not u * 3
    quiet = lowered("int main() { unsigned u = 2; u = u * 3 + 1; int k = 2 + 3; return 0; }")
    assert quiet.overflow_sites == ()


# ----------------------------------------------------------------------------- data models


def test_limits_and_sizes_follow_the_data_model() -> None:
    src = "#include <limits.h>\nint main() { long m = LONG_MAX; unsigned long s = sizeof(long); return 0; }"
    lp64 = lowered(src, "LP64")
    ilp32 = lowered(src, "ILP32")
    value = {p.data_model: {s.target: s.value for s in of_type(p, Assign)} for p in (lp64, ilp32)}
    assert value["LP64"]["m"] == Const(2**63 - 1, IntType("long", 64, True))
    assert value["ILP32"]["m"] == Const(2**31 - 1, IntType("long", 32, True))
    assert value["LP64"]["s"].value == 8 and value["ILP32"]["s"].value == 4


# ----------------------------------------------------------------------------- unsupported


UNSUPPORTED = {  # name: (program, the feature the message names)
    "pointer to an integer": ("int main() { int x = 0; int *p = 0; p = &x; return *p; }", "address-of"),
    "address-of": ("int main() { int x = 0; long y = (long)&x; return 0; }", "address-of"),
    "struct": ("struct s { int a; }; int main() { struct s v; v.a = 1; return 0; }", "struct"),
    "long double": ("int main() { long double d = 1.0; return d > 0; }", "long double"),
    "long double constant": ("int main() { double d = 1.5L; return 0; }", "long double"),
    "float array": ("int main() { double a[2]; a[0] = 1.0; return 0; }", "array of double"),
    "float function": ("double fabs(double);\nint main() { double d = -1.0; return fabs(d) > 0; }",
                       "floating-point function without a body"),
    "computed goto": ("int main() { void *p = 0;\n  goto *p; return 0; }", "computed goto"),
    "function pointer": (
        "int f(void) { return 1; } int main() { int (*g)(void) = f; return g(); }", "pointer"
    ),
    "string": ('int main() { char c = "abc"[0]; return c; }', "string literal"),
    "extern function": ("int ext(int); int main() { return ext(1); }", "function without a body"),
    "2-d variable-length array": (
        "int main() { int n = 2; int a[n][2]; a[0][0] = 1; return 0; }",
        "multi-dimensional variable-length array",
    ),
    "pointer to pointer": (
        "#include <stdlib.h>\nint main() { int **p = malloc(8); return 0; }",
        "pointer to a pointer",
    ),
}


@pytest.mark.parametrize("name", sorted(UNSUPPORTED))
def test_unsupported_features_are_located_and_named(name: str) -> None:
    src, feature = UNSUPPORTED[name]
    with pytest.raises(UnsupportedFeature) as info:
        lower_source(src, "u.c")
    exc = info.value
    assert exc.coord is not None and exc.coord.file == "u.c" and exc.coord.column > 0
    assert exc.coord.line == src.count("\n") + 1
    assert feature in exc.feature and str(exc).startswith(f"u.c:{exc.coord.line}:")


def test_unused_functions_and_declarations_with_unsupported_features_are_fine() -> None:
    src = """#include <stdlib.h>
#include <string.h>
struct node { struct node *next; };
int count(struct node *n) { int k = 0; while (n) { k++; n = n->next; } return k; }
double half(double x) { return x / 2; }
int main() { int x = 1; return x; }"""
    assert lowered(src).loops == ()


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "src",
    [
        "",
        "   \n",
        "int main( {",
        "this is not C",
        "int main() { return 0 }",
        "#include <nonexistent_header.h>\n",
    ],
)
def test_bad_input_raises_quokka_errors_only(src: str) -> None:
    with pytest.raises((InputError, UnsupportedFeature)):
        lower_source(src, "bad.c")


def test_parse_errors_are_located() -> None:
    with pytest.raises(InputError) as info:
        lower_source("int main() {\n  int x = ;\n}\n", "p.c")
    assert info.value.coord is not None and info.value.coord.file == "p.c" and info.value.coord.line == 2


def test_missing_main_and_undeclared_names_are_frontend_errors() -> None:
    with pytest.raises(FrontendError, match="no main"):
        lower_source("int f(void) { return 0; }")
    with pytest.raises(FrontendError, match="undeclared identifier 'zz'"):
        lower_source("int main() { return zz; }")


def test_deep_nesting_is_an_input_error_not_a_crash() -> None:
    deep = "int main() { int x = " + "(" * 3000 + "1" + ")" * 3000 + "; return x; }"
    with pytest.raises(InputError):
        lower_source(deep)
    chain = "int main() { int x = 0; return " + " + ".join(["x"] * 3000) + "; }"
    assert lowered(chain).overflow_sites  # long left-deep chains are lowered iteratively


def test_unreadable_and_binary_files(tmp_path) -> None:
    with pytest.raises(InputError):
        lower(tmp_path / "missing.c")
    binary = tmp_path / "b.c"
    binary.write_bytes(b"int main() { return 0; }\0\0")
    with pytest.raises(InputError, match="binary"):
        lower(binary)
    with pytest.raises(InputError):
        lower(tmp_path)


def test_unknown_data_model_is_rejected() -> None:
    with pytest.raises(InputError, match="data model"):
        lower_source("int main() { return 0; }", data_model="LP32")


def test_preprocessed_i_file_with_gnu_extensions(tmp_path) -> None:
    src = tmp_path / "g.i"
    src.write_text(
        '# 1 "g.c"\n'
        "typedef unsigned long size_t;\n"
        "extern void *malloc(size_t __size) __attribute__ ((__nothrow__ , __leaf__))"
        " __attribute__ ((__malloc__));\n"
        "extern int __VERIFIER_nondet_int(void);\n"
        "__extension__ typedef long long int64;\n"
        "static __inline int twice(int x) { return 2 * x; }\n"
        "int main() { int64 a = twice(__VERIFIER_nondet_int()); "
        "if (__builtin_expect(a > 10, 0)) {"
        ' __assert_fail("a", "g.c", 7, __extension__ __PRETTY_FUNCTION__); }'
        " return 0; }\n"
    )
    program = lower(src)
    check_program(program)
    assert program.var("a").type == IntType("long long", 64, True)
    assert of_type(program, Assert)[0].coord.file == "g.c"
