"""Replaying inputs on the original C program compiled by gcc."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from marks import needs_gcc
from proctree import alive, descendants
from quokka.verifier.exec.replay import (
    PARENT_VARIABLE,
    CompiledProgram,
    LoopProbe,
    compile_c,
    data_model_dependence,
    find_compiler,
    gcc_available,
    instrument,
    replay_inputs,
    replay_with_compiler,
)
from quokka.verifier.infra.processes import start_child
from shared_data import BENCHMARKS

BENCH = BENCHMARKS  # ../shared beside the project


needs_bench = pytest.mark.skipif(not BENCH.is_dir(), reason="benchmarks not present")

PRELUDE = "extern int __VERIFIER_nondet_int(void);\nextern void abort(void);\n"


def write(tmp_path: Path, text: str, name: str = "p.c") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_gcc_available_matches_the_path():
    assert gcc_available() == bool(shutil.which("gcc") or shutil.which("cc"))


@needs_gcc
@needs_bench
@pytest.mark.parametrize(
    ("file", "reaching", "missing"),
    [
        ("quokka-dev/brs2f_1.c", [3], [-3]),  # reach_error calls __assert_fail
        ("quokka-dev/sum01-1_1.c", [10], [5]),  # reach_error is `assert(0)` from <assert.h>
        # A `true` task whose error gcc reaches only through signed overflow: 4*y wraps to x == 0.
        ("quokka-dev/benchmark39_conjunctive_1.c", [0, -(1 << 30)], [8, 2]),
    ],
)
def test_quokka_dev_files(file, reaching, missing):
    hit = replay_with_compiler(BENCH / file, reaching, "LP64")
    assert hit.status == "reached", hit.detail
    miss = replay_with_compiler(BENCH / file, missing, "LP64")
    assert miss.status == "not_reached", miss.detail


@needs_gcc
@needs_bench
def test_nla_file_runs_natively_when_model_independent(tmp_path):
    f = BENCH / "svcomp-nla-dev/cohencu-ll_unwindbound1.c"
    hit = replay_with_compiler(f, [3], "ILP32")
    assert hit.status == "reached"
    assert replay_with_compiler(f, [0], "ILP32").status == "not_reached"
    probe = write(tmp_path, "int main(void) { return 0; }\n", "m32.c")
    m32 = (
        subprocess.run(
            [str(find_compiler()), "-m32", str(probe), "-o", str(tmp_path / "m32")], capture_output=True
        ).returncode
        == 0
    )
    # float and double are the same IEEE types under ILP32 (-m32 -mfpmath=sse) and LP64
    double = replay_with_compiler(BENCH / "svcomp-nla-dev/freire1_unwindbound1.c", [3], "ILP32")
    assert double.status in ("reached", "not_reached")
    if m32:
        assert "run as LP64" not in hit.detail
    else:
        assert "ILP32 program run as LP64" in hit.detail and "run as LP64" in double.detail


@needs_gcc
def test_empty_reach_error_and_undeclared_reach_error(tmp_path):
    empty = write(
        tmp_path,
        PRELUDE + "void reach_error(){}\nint main(){ if (__VERIFIER_nondet_int() == 7) reach_error(); }\n",
    )
    assert replay_with_compiler(empty, [7], "LP64").status == "reached"
    assert replay_with_compiler(empty, [6], "LP64").status == "not_reached"
    code2inv = write(
        tmp_path,
        "void assert(int cond) { if (!(cond)) { ERROR : { reach_error(); abort(); } } }\n"
        "int main() { int x = unknown(); assert(x < 3); }\n"
        "int unknown() { return __VERIFIER_nondet_int(); }\n",
        "c2i.c",
    )
    assert replay_with_compiler(code2inv, [3], "LP64").status == "reached"
    assert replay_with_compiler(code2inv, [2], "LP64").status == "not_reached"


@needs_gcc
def test_inputs_are_converted_like_semantics_wrap(tmp_path):
    prog = write(
        tmp_path,
        "extern unsigned char __VERIFIER_nondet_uchar(void);\nextern _Bool __VERIFIER_nondet_bool(void);\n"
        "extern unsigned int __VERIFIER_nondet_uint(void);\nvoid reach_error(void);\n"
        "int main() { unsigned char c = __VERIFIER_nondet_uchar(); _Bool b = __VERIFIER_nondet_bool();\n"
        "  unsigned int u = __VERIFIER_nondet_uint(); int missing = __VERIFIER_nondet_uchar();\n"
        "  if (c == 44 && b == 1 && u == 4294967295u && missing == 0) reach_error(); return 0; }\n",
    )
    assert replay_with_compiler(prog, [300, 2, -1], "LP64").status == "reached"
    assert replay_with_compiler(prog, [300, 2, -1, 5], "LP64").status == "not_reached"


@needs_gcc
def test_abort_crash_timeout_and_compile_error(tmp_path):
    prog = write(
        tmp_path,
        PRELUDE + "void reach_error(void);\n"
        "int main() { int x = __VERIFIER_nondet_int();\n"
        "  if (x == 0) abort(); if (x == 1) { int z = x - 1; return 7 / z; }\n"
        "  if (x == 2) for (;;) {} return 0; }\n",
    )
    aborted = replay_with_compiler(prog, [0], "LP64")
    assert aborted.status == "not_reached" and "signal 6" in aborted.detail
    crashed = replay_with_compiler(prog, [1], "LP64")
    assert crashed.status == "not_reached" and "signal 8" in crashed.detail
    slow = replay_with_compiler(prog, [2], "LP64", timeout_s=0.5)
    assert slow.status == "error" and "longer than 0.5" in slow.detail
    broken = replay_with_compiler(write(tmp_path, "int main( {", "bad.c"), [], "LP64")
    assert broken.status == "error" and "does not compile" in broken.detail
    assert replay_with_compiler(prog, [], "ILP16").status == "unavailable"


@pytest.mark.parametrize(
    ("source", "dependent"),
    [
        ("long long x = 5LL; unsigned long long y = 7ull;", None),
        ("long x;", "uses `long`"),
        ("unsigned long int x;", "uses `long`"),
        ("int x = 5L;", "uses the long constant 5L"),
        ("int x = 5ul;", "uses the long constant 5ul"),
        ("int n = sizeof(int);", "uses `sizeof`"),
        ("double d; float f;", None),
        ("long double d;", "uses `long`"),
        ("int m = LONG_MAX;", "uses `LONG_MAX`"),
        ('long long m = LLONG_MAX; // a long comment\n char *s = "long";', None),
    ],
)
def test_data_model_dependence(source, dependent):
    assert data_model_dependence(source) == dependent


def test_instrument_inserts_trace_calls_at_loop_heads():
    src = (
        "int main() {\n"
        "  int i, s = 0;\n"
        "  for (i = 0; i < 3; i++) s += i; /* while (0) */\n"
        "  while (s > 0) s--;\n"
        "  do { s++; } while (s < 2);\n"
        "  for (;;) break;\n"
        "}\n"
    )
    probes = [
        LoopProbe(3, 3, (("i", True), ("s", True))),
        LoopProbe(4, 3, (("s", True),)),
        LoopProbe(5, 3, (("s", False),)),
        LoopProbe(6, 3, ()),
    ]
    lines = instrument(src, probes, "t.c").split("\n")
    assert lines[1] == '#line 1 "t.c"'
    body = lines[2:]
    trace = '__quokka_head(3, 3), __quokka_val_s("i", i), __quokka_val_s("s", s)'
    assert body[2] == f"  for (i = 0; {trace}, i < 3; i++) s += i; /* while (0) */"
    assert body[3] == '  while (__quokka_head(4, 3), __quokka_val_s("s", s), s > 0) s--;'
    assert body[4] == '  do { __quokka_head(5, 3), __quokka_val_u("s", s); s++; } while (s < 2);'
    assert body[5] == "  for (; __quokka_head(6, 3), 1;) break;"
    with pytest.raises(ValueError, match="no loop keyword"):
        instrument(src, [LoopProbe(2, 3, ())], "t.c")


@needs_gcc
def test_traced_loop_heads(tmp_path):
    prog = write(
        tmp_path,
        PRELUDE + "void reach_error(void);\nint main() {\n  int n = __VERIFIER_nondet_int(), k = 0;\n"
        "  while (k < n) {\n    k++;\n    if (k == 5) reach_error();\n  }\n  return 0;\n}\n",
    )
    built = compile_c(prog, "LP64", tmp_path, [LoopProbe(6, 3, (("k", True), ("n", True)))])
    assert not hasattr(built, "status"), built
    result = built.run([2])
    assert result.status == "not_reached"
    assert [(h.line, h.column, dict(h.values)) for h in result.heads] == [
        (6, 3, {"k": k, "n": 2}) for k in range(3)
    ]
    reached = built.run([9])
    assert reached.status == "reached" and len(reached.heads) == 5


def test_replay_inputs_keeps_nondet_calls_and_requires_zero_elsewhere():
    from quokka.verifier.exec.interp import run
    from quokka.verifier.ir.builder import ProgramBuilder

    b = ProgramBuilder("r.c")
    u, x, y = b.var("u"), b.var("x"), b.var("y")
    b.havoc(u, origin="uninitialised")
    b.havoc(x, origin="__VERIFIER_nondet_int")
    b.havoc(y, origin="unknown")
    program = b.build()
    assert replay_inputs(run(program, [0, 5, -7])) == (5, -7)
    why = replay_inputs(run(program, [3, 5, -7]))
    assert isinstance(why, str) and why.startswith("u (uninitialised) is 3 at r.c:1:1")


@needs_gcc
def test_code2inv_unknown_is_an_input(tmp_path):
    prog = write(
        tmp_path,
        "void assert(int cond) { if (!(cond)) { ERROR : { reach_error(); abort(); } } }\n"
        "int main() { int c = 0; while (unknown()) c++; assert(c != 2); }\n",
    )
    assert replay_with_compiler(prog, [1, 1, 0], "ILP32").status == "reached"
    assert replay_with_compiler(prog, [1, 0], "ILP32").status == "not_reached"


LOOPING = PRELUDE + "int main(void) {\n  int x = __VERIFIER_nondet_int();\n  while (1) { x = x + 1; }\n}\n"


@needs_gcc
def test_a_program_run_dies_with_the_process_that_runs_it(tmp_path):
    """kill -9 of a strategy running a looping program (as of a batch, by the torture campaign's
    fault) leaves no program running: nobody is left to end it at its timeout."""
    built = compile_c(write(tmp_path, LOOPING), "LP64", tmp_path)
    assert isinstance(built, CompiledProgram), built

    def runner(conn):
        conn.send("running")
        built.run([1], timeout_s=120)

    child = start_child("runner", runner)
    assert child.conn.poll(20) and child.conn.recv() == "running"
    deadline = time.monotonic() + 20
    while not (programs := descendants(child.pid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert programs, "the program did not start"
    os.kill(child.pid, signal.SIGKILL)
    child.close()
    deadline = time.monotonic() + 10
    while any(alive(p) for p in programs) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(p) for p in programs)


@needs_gcc
def test_a_program_whose_runner_is_gone_exits_at_once(tmp_path):
    """The runner's pid is not the program's parent (it died before the program set its death
    signal): the program exits at once, with status 125."""
    built = compile_c(write(tmp_path, LOOPING), "LP64", tmp_path)
    assert isinstance(built, CompiledProgram), built
    env = {**os.environ, PARENT_VARIABLE: "1"}  # a runner that is not this program's parent
    done = subprocess.run([str(built.binary)], input=b"1\n", env=env, capture_output=True, timeout=20)
    assert done.returncode == 125
