"""Random C expressions (mixed integer types, literals with suffixes, casts, every operator):
the value gcc computes must be the value of the lowered IR. Expressions with undefined behaviour
(signed overflow, division by zero, bad shifts) are left out, since C gives them no value.
"""

from __future__ import annotations

import random
import subprocess
import tempfile
from pathlib import Path

import pytest
from frontend_helpers import GCC, Interp
from quokka.verifier.frontend import lower_source
from quokka.verifier.ir import Assign, Binary, Expr, Return, Scope, Unary, semantics

TYPES = [
    "int",
    "unsigned int",
    "long",
    "unsigned long",
    "long long",
    "unsigned long long",
    "short",
    "unsigned short",
    "char",
    "signed char",
    "unsigned char",
    "_Bool",
]
BINARY = ["+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "<", "<=", ">", ">=", "==", "!=", "&&", "||"]
SUFFIXES = ["", "", "u", "l", "ul", "ll", "ull", "U", "L"]


class Gen:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def literal(self) -> str:
        r = self.rng
        value = r.choice(
            [0, 1, 2, 7, 255, 256, 65535, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**63 - 1, r.randint(0, 99)]
        )
        text = r.choice([str(value), hex(value), "0" + oct(value)[2:] if value else "0"])
        suffix = r.choice(SUFFIXES)
        if value >= 2**63 and "u" not in suffix.lower():
            suffix = "u"
        return text + suffix

    def expr(self, depth: int) -> str:
        r = self.rng
        if depth == 0 or r.random() < 0.25:
            return f"v{r.randrange(len(TYPES))}" if r.random() < 0.6 else self.literal()
        kind = r.random()
        if kind < 0.15:
            return f"{r.choice(['-', '~', '!', '+'])}({self.expr(depth - 1)})"
        if kind < 0.25:
            return f"(({r.choice(TYPES)})({self.expr(depth - 1)}))"
        if kind < 0.32:
            return f"(({self.expr(depth - 1)}) ? ({self.expr(depth - 1)}) : ({self.expr(depth - 1)}))"
        op = r.choice(BINARY)
        right = str(r.randint(0, 7)) if op in ("<<", ">>") else self.expr(depth - 1)
        if op in ("/", "%"):
            right = f"(({right}) & 15) | 1"  # a positive divisor: x86 traps on x/0 and INT_MIN/-1
        return f"(({self.expr(depth - 1)}) {op} ({right}))"


class Undefined(Exception):
    pass


class CheckedInterp(Interp):
    """The test interpreter, refusing signed results outside their type (C's undefined overflow)."""

    def binary(self, e: Binary) -> int:
        result = super().binary(e)
        if e.type.signed and not semantics.in_range(result, e.type):
            raise Undefined
        return result

    def eval(self, e: Expr) -> object:
        result = super().eval(e)
        if isinstance(e, Unary) and e.type.signed and not semantics.in_range(result, e.type):  # type: ignore[arg-type]
            raise Undefined
        return result


def program(gen: Gen, count: int) -> tuple[str, list[str]]:
    decls = [f"  {ty} v{k} = ({ty})({gen.literal()});" for k, ty in enumerate(TYPES)]
    exprs = [gen.expr(3) for _ in range(count)]
    body = [f"  r[{i}] = (unsigned long long)({e});" for i, e in enumerate(exprs)]
    src = "int main() {\n" + "\n".join(decls) + f"\n  unsigned long long r[{count}];\n" + "\n".join(body)
    return src + "\n  return 0;\n}\n", exprs


def gcc_values(src: str, count: int) -> list[int]:
    """r[i] as computed by gcc (-fwrapv, so undefined signed overflow still gives some value)."""
    assert GCC is not None
    printing = src.replace(
        "  return 0;\n}", "".join(f'  printf("%llu\\n", r[{i}]);\n' for i in range(count)) + "  return 0;\n}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        c_file, exe = Path(tmp) / "e.c", Path(tmp) / "e"
        c_file.write_text("#include <stdio.h>\n" + printing)
        subprocess.run(
            [GCC, "-w", "-O0", "-fwrapv", "-o", str(exe), str(c_file)], check=True, capture_output=True
        )
        out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=20, check=True).stdout
    return [int(line) for line in out.split()]


def ir_values(src: str, count: int) -> list[int | None]:
    prog = lower_source(src, "e.c")
    interp = CheckedInterp(prog, [])
    main = prog.body[0]
    assert isinstance(main, Scope)
    values: list[int | None] = [None] * count
    for stmt in main.body:
        if isinstance(stmt, Return):
            break
        try:
            interp.stmt(stmt)
        except (Undefined, semantics.UndefinedBehaviour):
            continue
        if isinstance(stmt, Assign) and stmt.target == "r":
            arr = interp.env["r"]
            assert isinstance(arr, dict)
            for k, v in arr.items():
                values[k] = v
    return values


@pytest.mark.needs_gcc
@pytest.mark.skipif(GCC is None, reason="needs gcc")
@pytest.mark.parametrize("seed", range(4))
def test_random_expressions_agree_with_gcc(seed: int) -> None:
    gen = Gen(seed)
    count = 80
    src, exprs = program(gen, count)
    native = gcc_values(src, count)
    ir = ir_values(src, count)
    checked = 0
    for i, (n, v) in enumerate(zip(native, ir, strict=True)):
        if v is None:
            continue  # undefined in C (the IR interpreter refused it); gcc's -fwrapv value is arbitrary
        assert n == v, f"r[{i}] = {exprs[i]}: gcc {n}, IR {v}"
        checked += 1
    assert checked >= count // 2
