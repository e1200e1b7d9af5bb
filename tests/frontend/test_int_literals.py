"""The types of integer constants at the boundaries of the integer types, per data model, as gcc
gives them (issue 17: `s > 18446744065119617025` was refused as too large).

C11 6.4.4.1 gives an unsuffixed decimal constant the first of int, long, long long that holds it
and none above LLONG_MAX; gcc (warning "integer constant is so large that it is unsigned") types
it `__int128` on x86-64 (LP64: the value is exact) and `long long` on i386 (ILP32: its low 64
bits). Octal and hexadecimal constants may become unsigned; suffixes narrow the list.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from frontend_helpers import GCC
from quokka.invariants.verify import verify_path
from quokka.verifier.errors import UnsupportedFeature
from quokka.verifier.frontend import lower_source
from quokka.verifier.ir import INT, INT128, Assign, Const, Scope, cexpr, walk_stmts
from quokka.verifier.ir.cexpr import CTypes
from quokka.verifier.options import Options
from quokka.verifier.verdict.results import Verdict

# text -> (LP64 type, ILP32 type); the value is the constant's unless the type cannot hold it
CASES: dict[str, tuple[str, str]] = {
    "2147483647": ("int", "int"),
    "2147483648": ("long", "long long"),
    "4294967295": ("long", "long long"),
    "4294967296": ("long", "long long"),
    "9223372036854775807": ("long", "long long"),
    "9223372036854775808": ("__int128", "long long"),
    "18446744065119617025": ("__int128", "long long"),
    "18446744073709551615": ("__int128", "long long"),
    "0x7FFFFFFF": ("int", "int"),
    "0x80000000": ("unsigned int", "unsigned int"),
    "0xFFFFFFFF": ("unsigned int", "unsigned int"),
    "0x100000000": ("long", "long long"),
    "0x7FFFFFFFFFFFFFFF": ("long", "long long"),
    "0x8000000000000000": ("unsigned long", "unsigned long long"),
    "0xFFFFFFFFFFFFFFFF": ("unsigned long", "unsigned long long"),
    "017777777777": ("int", "int"),
    "020000000000": ("unsigned int", "unsigned int"),
    "01777777777777777777777": ("unsigned long", "unsigned long long"),
    "2147483648u": ("unsigned int", "unsigned int"),
    "4294967296u": ("unsigned long", "unsigned long long"),
    "2147483648l": ("long", "long long"),
    "4294967295ll": ("long long", "long long"),
    "0x80000000l": ("long", "unsigned long"),
    "9223372036854775808l": ("__int128", "long long"),
    "9223372036854775808ll": ("__int128", "long long"),
    "9223372036854775808ul": ("unsigned long", "unsigned long long"),
    "18446744073709551615ull": ("unsigned long long", "unsigned long long"),
    "0xFFFFFFFFFFFFFFFFll": ("unsigned long long", "unsigned long long"),
}
MODELS = ("LP64", "ILP32")


def expected(text: str, data_model: str) -> Const:
    name = CASES[text][MODELS.index(data_model)]
    ct = CTypes(data_model)
    ty = INT128 if name == "__int128" else ct.named(name)
    value = cexpr.int_literal(CTypes("LP64"), text.rstrip("lLuU") + "ull").value  # the written value
    return Const(value - (1 << 64) if value > ty.max else value, ty)


@pytest.mark.parametrize("data_model", MODELS)
@pytest.mark.parametrize("text", sorted(CASES))
def test_constant_types(text: str, data_model: str) -> None:
    assert cexpr.int_literal(CTypes(data_model), text) == expected(text, data_model)


def test_the_issue_constant_compares_by_value() -> None:
    lp64 = cexpr.int_literal(CTypes("LP64"), "18446744065119617025")
    assert lp64 == Const(18446744065119617025, INT128)
    ilp32 = cexpr.int_literal(CTypes("ILP32"), "18446744065119617025")
    assert ilp32.value == 18446744065119617025 - 2**64 and ilp32.type.name == "long long"
    ull = CTypes("LP64").named("unsigned long long")
    assert CTypes("LP64").common(ull, INT128) == INT128  # every unsigned long long fits
    assert cexpr.rank(INT128) > cexpr.rank(ull)


@pytest.mark.parametrize("data_model", MODELS)
def test_a_constant_above_ullong_max_is_a_located_error(data_model: str) -> None:
    with pytest.raises(ValueError, match="above ULLONG_MAX"):
        cexpr.int_literal(CTypes(data_model), "18446744073709551616")
    src = "int main() {\n  unsigned long long s = 0;\n  if (s > 18446744073709551616) return 1;\n}\n"
    with pytest.raises(UnsupportedFeature) as info:
        lower_source(src, "big.c", data_model)
    assert str(info.value).startswith("big.c:3:11: unsupported feature: constant")
    assert "18446744073709551616" in str(info.value)


@pytest.mark.parametrize(("data_model", "size"), [("LP64", 16), ("ILP32", 8)])
def test_sizeof_a_wide_constant(data_model: str, size: int) -> None:
    program = lower_source("int main() { int n = sizeof(9223372036854775808); return n; }", "s.c", data_model)
    (scope,) = program.body
    assert isinstance(scope, Scope)
    assigns = [s for s in walk_stmts(scope.body) if isinstance(s, Assign) and s.target == "n"]
    assert [a.value for a in assigns] == [Const(size, INT)]


# ----------------------------------------------------------------------------- against gcc


def _static_asserts(data_model: str) -> str:
    """A C file whose static assertions hold iff gcc types every constant as Quokka does."""
    lines = []
    for k, text in enumerate(sorted(CASES)):
        c = expected(text, data_model)
        ty = c.type.name
        bits = c.type.bits // 8
        lines.append(
            f"_Static_assert(_Generic(({text}), {ty}: 1, default: 0), \"type {k} {text}\");\n"
            f"_Static_assert(sizeof({text}) == {bits}, \"size {k} {text}\");\n"
            f"_Static_assert(({text}) == ({ty})({c.value % (1 << 64)}ull), \"value {k} {text}\");\n"
            f"_Static_assert((({text}) < 0) == {int(c.value < 0)}, \"sign {k} {text}\");\n"
        )
    return "".join(lines)


GCC_MODEL = {  # how gcc is told the data model, and a file that compiles only under it
    "LP64": ([], "_Static_assert(sizeof(long) == 8 && sizeof(__int128) == 16, \"LP64\");\n"),
    "ILP32": (["-m32"], "_Static_assert(sizeof(long) == 4, \"ILP32\");\n"),
}


def _gcc_syntax(tmp_path: Path, data_model: str, text: str) -> subprocess.CompletedProcess[str]:
    """gcc's verdict on `text` compiled (not linked: -m32 needs no 32-bit libc) for `data_model`."""
    assert GCC is not None
    path = tmp_path / f"check_{data_model}.c"
    path.write_text(text)
    return subprocess.run(
        [GCC, "-std=gnu11", "-w", "-fsyntax-only", *GCC_MODEL[data_model][0], str(path)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


@pytest.fixture(params=MODELS)
def gcc_data_model(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A data model gcc compiles for here (with __int128 on LP64); else the test is skipped."""
    if GCC is None:
        pytest.skip("needs gcc")
    model: str = request.param
    if _gcc_syntax(tmp_path, model, GCC_MODEL[model][1]).returncode != 0:
        pytest.skip(f"gcc does not compile for {model} (with __int128 on LP64) here")
    return model


@pytest.mark.needs_gcc
def test_constant_types_agree_with_gcc(tmp_path: Path, gcc_data_model: str) -> None:
    done = _gcc_syntax(tmp_path, gcc_data_model, _static_asserts(gcc_data_model))
    assert done.returncode == 0, done.stderr[:3000]


@pytest.mark.needs_gcc
def test_the_gcc_check_is_not_vacuous(tmp_path: Path, gcc_data_model: str) -> None:
    # the type the standard table would suggest for 9223372036854775808 (ull) is not gcc's
    text = "_Static_assert(_Generic((9223372036854775808), unsigned long long: 1, default: 0), \"ull\");\n"
    done = _gcc_syntax(tmp_path, gcc_data_model, text)
    assert done.returncode != 0 and "static assertion failed" in done.stderr


# ----------------------------------------------------------------------------- verdicts

OPTIONS = Options(timeout_s=30, engines=("bmc", "spacer"), proposers=())
ULL_PROGRAM = """\
extern unsigned long long __VERIFIER_nondet_ulonglong(void);
void reach_error(void);
int main() {
  unsigned long long s = __VERIFIER_nondet_ulonglong();
  if (s > 18446744065119617025) { if (s == 18446744073709551615) reach_error(); }
  if (s > 18446744065119617025) { s = 0; }
  if (s > 18446744065119617025) reach_error();
  return 0;
}
"""
SIGNED_PROGRAM = """\
extern long long __VERIFIER_nondet_longlong(void);
void reach_error(void);
int main() {
  long long t = __VERIFIER_nondet_longlong();
  if (t > 9223372036854775808) reach_error();
  return 0;
}
"""


@pytest.mark.parametrize("data_model", MODELS)
def test_comparison_with_an_unsigned_operand_is_false_with_its_input(tmp_path: Path, data_model: str) -> None:
    path = tmp_path / "ull.c"
    path.write_text(ULL_PROGRAM)
    result = verify_path(path, OPTIONS.with_(data_model=data_model))
    assert result.verdict is Verdict.FALSE, result.reason
    assert result.counterexample is not None and result.counterexample.error_line == 5
    assert [i.value for i in result.counterexample.inputs] == [2**64 - 1]


def test_without_the_reachable_error_the_unsigned_comparison_is_true(tmp_path: Path) -> None:
    path = tmp_path / "ull_true.c"
    path.write_text(ULL_PROGRAM.replace("reach_error(); }\n", "s = 0; }\n", 1))
    assert verify_path(path, OPTIONS).verdict is Verdict.TRUE


@pytest.mark.parametrize(("data_model", "verdict"), [("LP64", Verdict.TRUE), ("ILP32", Verdict.FALSE)])
def test_comparison_with_a_signed_operand_follows_gcc_per_data_model(
    tmp_path: Path, data_model: str, verdict: Verdict
) -> None:
    # LP64: __int128 2**63 is above every long long; ILP32: the constant is LLONG_MIN
    path = tmp_path / "signed.c"
    path.write_text(SIGNED_PROGRAM)
    result = verify_path(path, OPTIONS.with_(data_model=data_model))
    assert result.verdict is verdict, result.reason
