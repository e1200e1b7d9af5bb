"""TRUE for programs with floating point: only by a complete unrolling with no undefined behaviour
on any path (bounded model checking over IEEE terms), unrolled again bit-precisely before it is
believed. Checked against gcc on programs whose every input gcc runs."""

from __future__ import annotations

import math
import random
import subprocess
from pathlib import Path

import pytest
from marks import needs_gcc
from quokka.invariants.verify import verify_path
from quokka.verifier.exec.replay import find_compiler
from quokka.verifier.options import Options
from quokka.verifier.verdict.results import Verdict

INPUTS = range(6)  # n: how often the loop runs
PRELUDE = """\
extern int __VERIFIER_nondet_int(void);
extern void abort(void);
extern void reach_error(void);
void __VERIFIER_assert(int c) { if (!c) reach_error(); }
"""
BODY = """\
    TY x = X0, s = S0;
    for (int i = 0; i < n; i++) {
        x = x OP1 s;
        if (x > LIMIT) { x = x * SCALE; }
        s = s OP2 STEP;
    }
"""


def _body(rng: random.Random) -> str:
    ty = rng.choice(["double", "float"])
    suffix = "f" if ty == "float" else ""
    pick = {
        "TY": ty,
        "X0": f"{rng.uniform(-3, 3):.3f}{suffix}",
        "S0": f"{rng.choice([0.1, 0.25, 1.5, 3.0, 1e-8])}{suffix}",
        "OP1": rng.choice("+-*"),
        "OP2": rng.choice("+*"),
        "LIMIT": f"{rng.uniform(0, 5):.2f}{suffix}",
        "SCALE": f"{rng.choice([0.5, 0.1, 0.3333])}{suffix}",
        "STEP": f"{rng.choice([0.1, 1.0, 0.7])}{suffix}",
    }
    body = BODY
    for key, value in pick.items():
        body = body.replace(key, value)
    return body


def _gcc_values(tmp_path: Path, body: str) -> list[float]:
    """x after the loop, for each n of INPUTS, as gcc computes it."""
    source = tmp_path / "values.c"
    source.write_text(
        "#include <stdio.h>\nstatic double run(int n) {\n" + body + "    return x;\n}\n"
        f"int main(void) {{ for (int n = 0; n < {len(INPUTS)}; n++) printf(\"%a\\n\", run(n)); return 0; }}\n"
    )
    binary = tmp_path / "values"
    subprocess.run([str(find_compiler()), "-O0", "-o", str(binary), str(source)], check=True)
    out = subprocess.run([str(binary)], capture_output=True, text=True, check=True).stdout
    return [float.fromhex(v) for v in out.split()]


def _program(body: str, check: str) -> str:
    return (
        PRELUDE + "int main(void) {\n    int n = __VERIFIER_nondet_int();\n"
        f"    if (n < 0 || n >= {len(INPUTS)}) return 0;\n" + body + f"    __VERIFIER_assert({check});\n"
        "    return 0;\n}\n"
    )


@needs_gcc
def test_a_float_program_is_true_only_when_gcc_runs_every_input_without_error(tmp_path: Path) -> None:
    rng = random.Random(11)
    outcomes = []
    for k in range(16):
        body = _body(rng)
        values = _gcc_values(tmp_path, body)
        # x <= bound: the largest x (right), one of them (wrong if a larger one exists), or one
        # unit in the last place below the largest (wrong, by the least a double can be)
        bound = rng.choice([max(values), rng.choice(values), math.nextafter(max(values), -math.inf)])
        check = f"x <= {bound.hex()}"
        holds = all(v <= bound for v in values)
        path = tmp_path / f"p{k}.c"
        path.write_text(_program(body, check))
        result = verify_path(path, Options(timeout_s=20))
        assert not (result.verdict is Verdict.TRUE and not holds), path.read_text()
        assert not (result.verdict is Verdict.FALSE and holds), path.read_text()
        outcomes.append((holds, result.verdict))
    proven = sum(v is Verdict.TRUE for _, v in outcomes)
    refuted = sum(v is Verdict.FALSE for _, v in outcomes)
    assert proven >= 4 and refuted >= 2, outcomes


@pytest.mark.parametrize("unwound", [True, False])
def test_only_a_complete_unrolling_proves_a_float_program(tmp_path: Path, unwound: bool) -> None:
    """The same loop with a bound the unrolling reaches, and with an input-sized bound it does not."""
    limit = "n < 3" if unwound else "n < 1000000"
    text = (
        PRELUDE + "int main(void) {\n    int n = __VERIFIER_nondet_int();\n"
        f"    if (n < 0 || !({limit})) return 0;\n    double x = 0.0;\n"
        "    for (int i = 0; i < n; i++) { x = x + 0.5; }\n"
        "    __VERIFIER_assert(x >= 0.0);\n    return 0;\n}\n"
    )
    path = tmp_path / "loop.c"
    path.write_text(text)
    result = verify_path(path, Options(timeout_s=10))
    assert result.verdict is (Verdict.TRUE if unwound else Verdict.UNKNOWN), result.reason
    if unwound:
        assert result.decided_by == "bmc" and not result.invariants
