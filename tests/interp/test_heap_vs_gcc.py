"""The heap model (`frontend.memory`) runs as the compiled program does: random straight-line and
looping programs over a list node type (malloc, calloc, copies, field reads and writes, pointer
equality) give the interpreter the same final value as gcc's build; and a claim about that value
is proved only when it is true."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest
from quokka.invariants.verify import verify_path
from quokka.verifier.exec.interp import run
from quokka.verifier.exec.replay import find_compiler, gcc_available
from quokka.verifier.frontend import lower_source
from quokka.verifier.options import Options
from quokka.verifier.verdict.results import Verdict

HEADER = """\
#include <stdlib.h>
#include <stdio.h>
void reach_error(void) { abort(); }
void __VERIFIER_assert(int c) { if (!c) reach_error(); }
typedef struct node { struct node *next; int data; short tag; } Node;
"""
POINTERS = ("p", "q", "r")


def _statement(rng: random.Random) -> str:
    a, b = rng.choice(POINTERS), rng.choice(POINTERS)
    k = rng.randint(-5, 5)
    return rng.choice([
        f"{a} = malloc(sizeof(Node)); {a}->next = NULL; {a}->data = {k}; {a}->tag = {k + 1};",
        f"{a} = calloc(1, sizeof(Node));",
        f"{a} = {b};",
        f"if ({b} != NULL) {a} = {b}->next;",
        f"if ({a} != NULL) {a}->next = {b};",
        f"if ({a}) {a}->data = x + {k};",
        f"if ({a} != NULL) x = (x + {a}->data * {a}->tag) % 1009;",
        f"if ({a} == {b}) x = x + {k}; else x = x - 1;",
        f"if (!{a}) x = x + 2;",
    ])  # fmt: skip


def random_program(rng: random.Random) -> str:
    lines = ["Node *p = NULL, *q = NULL, *r = NULL;", "int x = 0;"]
    for _ in range(rng.randint(6, 14)):
        if rng.random() < 0.2:
            body = " ".join(_statement(rng) for _ in range(rng.randint(1, 3)))
            lines.append(f"for (int t = 0; t < {rng.randint(1, 4)}; t++) {{ {body} }}")
        else:
            lines.append(_statement(rng))
    return "\n".join(lines)


def _gcc_value(source: str, workdir: Path) -> int:
    c_file, binary = workdir / "h.c", workdir / "h.bin"
    c_file.write_text(source.replace("/*END*/", 'printf("%d\\n", x);'))
    compiler = find_compiler()
    assert compiler is not None
    subprocess.run([compiler, "-w", "-O0", str(c_file), "-o", str(binary)], check=True, timeout=60)
    done = subprocess.run([str(binary)], capture_output=True, text=True, timeout=10, check=True)
    return int(done.stdout)


@pytest.mark.needs_gcc
@pytest.mark.skipif(not gcc_available(), reason="no C compiler")
def test_the_interpreter_agrees_with_gcc_on_random_heap_programs(tmp_path: Path) -> None:
    rng = random.Random(17)
    for k in range(30):
        source = HEADER + "int main(void) {\n" + random_program(rng) + "\n/*END*/\nreturn 0;\n}\n"
        execution = run(lower_source(source, "h.c"), [])
        assert execution.outcome == "exit", (source, execution.message)
        workdir = tmp_path / str(k)
        workdir.mkdir()
        assert execution.final["x"] == _gcc_value(source, workdir), source


def test_a_claim_is_proved_only_when_true(tmp_path: Path) -> None:
    rng = random.Random(5)
    options = Options(timeout_s=20, proposers=())
    for k in range(6):
        program = random_program(rng)
        source = HEADER + "int main(void) {\n" + program + "\n/*END*/\nreturn 0;\n}\n"
        value = run(lower_source(source, "h.c"), []).final["x"]
        for claim, expected in ((f"x == {value}", Verdict.TRUE), (f"x == {value + 1}", Verdict.FALSE)):
            path = tmp_path / f"claim{k}.c"
            path.write_text(source.replace("/*END*/", f"__VERIFIER_assert({claim});"))
            result = verify_path(path, options)
            assert result.verdict in (expected, Verdict.UNKNOWN), (program, claim, result.reason)
            assert expected is Verdict.TRUE or result.verdict is not Verdict.TRUE
