"""`cfg.uninitialised.possible_uninitialised_read`: a static over-approximation of the reads of
uninitialised scalar locals (None means no run reads one), checked against the interpreter's
reads along executed paths on the same programs."""

from __future__ import annotations

import pytest
from quokka.verifier.cfg.uninitialised import possible_uninitialised_read
from quokka.verifier.exec.interp import run
from quokka.verifier.frontend import lower_source

HEAD = "extern int __VERIFIER_nondet_int(void);\nextern void reach_error(void);\n"
PROGRAMS = {
    # (main's body, whether some run reads an uninitialised value)
    "assigned_in_for": ("int i; int s = 0; for (i = 0; i < 5; i++) s += i; if (s > 9) reach_error();", False),
    "read_after_loop": ("int i = 0; int t; while (i < 5) i++; if (t + i == 3) reach_error();", True),
    "assigned_on_one_branch": ("int t; if (__VERIFIER_nondet_int()) t = 1; if (t == 2) reach_error();", True),
    "assigned_on_both_branches": (
        "int t; if (__VERIFIER_nondet_int()) t = 1; else t = 2; if (t == 3) reach_error();",
        False,
    ),
    "declared_in_a_loop_assigned_first": (
        "int s = 0; for (int i = 0; i < 3; i++) { int t; t = i; s += t; } if (s != 3) reach_error();",
        False,
    ),
    "declared_in_a_loop_read_first": (
        "int s = 0; for (int i = 0; i < 3; i++) { int t; s += t; t = i; } if (s == 1) reach_error();",
        True,
    ),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_static_check_finds_what_some_run_reads(name: str) -> None:
    source, expected = PROGRAMS[name]
    program = lower_source(f"{HEAD}int main(void) {{ {source} return 0; }}\n", f"{name}.c")
    found = possible_uninitialised_read(program)
    assert (found is not None) == expected, found
    runs = [run(program, (value,) * 4, check_uninitialised=True) for value in (0, 1)]
    assert any(r.uninitialised_reads for r in runs) == expected  # the runs agree (never more than static)
