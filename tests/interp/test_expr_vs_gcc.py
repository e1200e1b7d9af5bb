"""Random well-typed expressions: printed with `format_expr`, evaluated by gcc and by the interpreter.

This checks the printer (valid C, precedence, constants) and the interpreter's arithmetic
(conversions, wrap-around, truncating division, shifts, laziness) against a real compiler.
Expressions whose evaluation overflows a signed type or is undefined are left out.
"""

from __future__ import annotations

import random
import subprocess

import pytest
from quokka.verifier.errors import Coord
from quokka.verifier.exec.interp import compile_program
from quokka.verifier.exec.replay import find_compiler
from quokka.verifier.ir import (
    Assign,
    Binary,
    Break,
    Cast,
    Const,
    Expr,
    Ite,
    Loop,
    LoopInfo,
    Program,
    Scope,
    Unary,
    Var,
    VarDecl,
    int_types,
)
from quokka.verifier.ir.printer import format_expr
from quokka.verifier.ir.typecheck import check_program

T = int_types("LP64")
ARITH_TYPES = [T["int"], T["unsigned int"], T["long long"], T["unsigned long long"], T["long"]]
ALL_TYPES = [*ARITH_TYPES, T["short"], T["unsigned char"], T["_Bool"], T["signed char"], T["unsigned short"]]
VARS = {ty.name: f"v{k}" for k, ty in enumerate(ALL_TYPES)}
INT = T["int"]


class Gen:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def value(self, ty) -> int:
        r = self.rng.random()
        if r < 0.6:
            v = self.rng.randint(-9, 9)
        elif r < 0.8:
            v = self.rng.choice([ty.min, ty.max, ty.min + 1, ty.max - 1, 0, 1])
        else:
            v = self.rng.randint(ty.min, ty.max)
        return max(ty.min, min(ty.max, v))

    def leaf(self, ty) -> Expr:
        if self.rng.random() < 0.5:
            return Var(VARS[ty.name], ty)
        return Const(self.value(ty), ty)

    def expr(self, ty, depth: int) -> Expr:
        if depth == 0 or self.rng.random() < 0.25:
            return self.leaf(ty)
        choices = ["cast", "ite"]
        if ty in ARITH_TYPES:
            choices += ["arith"] * 4 + ["unary"]
        if ty == INT:
            choices += ["compare", "compare", "logic", "not"]
        return getattr(self, "_" + self.rng.choice(choices))(ty, depth - 1)

    def _arith(self, ty, d):
        op = self.rng.choice(["+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>"])
        right = Const(self.rng.randint(0, ty.bits - 1), ty) if op in ("<<", ">>") else self.expr(ty, d)
        return Binary(op, self.expr(ty, d), right, ty)

    def _unary(self, ty, d):
        return Unary(self.rng.choice(["-", "~"]), self.expr(ty, d), ty)

    def _compare(self, ty, d):
        t = self.rng.choice(ALL_TYPES)
        op = self.rng.choice(["<", "<=", ">", ">=", "==", "!="])
        return Binary(op, self.expr(t, d), self.expr(t, d), INT)

    def _logic(self, ty, d):
        return Binary(self.rng.choice(["&&", "||"]), self.expr(INT, d), self.expr(INT, d), INT)

    def _not(self, ty, d):
        return Unary("!", self.expr(INT, d), INT)

    def _cast(self, ty, d):
        return Cast(self.expr(self.rng.choice(ALL_TYPES), d), ty)

    def _ite(self, ty, d):
        return Ite(self.expr(INT, d), self.expr(ty, d), self.expr(ty, d), ty)


def interpret(decls, inits, ty, e):
    """The value of `e` after assigning `inits`, or None when it overflows or is undefined."""
    c = Coord("e.c", 1, 1)
    result = VarDecl("r", ty, "local", "r")
    body = (
        *(Assign(n, Const(v, d.type), c) for (n, v), d in zip(inits, decls, strict=True)),
        Assign("r", e, c),
    )
    stop = Loop("END", (Break(c),), (), Coord("e.c", 2, 1))
    p = Program(
        "e.c", "LP64", (*decls, result), (Scope("main", (*body, stop)),), (LoopInfo("END", c, 1, ()),)
    )
    check_program(p)
    ex = compile_program(p).run([])
    if ex.outcome != "exit" or ex.overflows:
        return None
    return ex.loop_heads[-1].values["r"]


def c_program(decls, inits, cases) -> str:
    lines = ["#include <stdio.h>", "int main(void) {"]
    lines += [
        f"  {d.type.name} {n} = {format_expr(Const(v, d.type))};"
        for (n, v), d in zip(inits, decls, strict=True)
    ]
    for ty, e in cases:
        fmt, cty = ("%lld", "long long") if ty.signed else ("%llu", "unsigned long long")
        lines.append(f'  printf("{fmt}\\n", ({cty})({format_expr(e)}));')
    return "\n".join([*lines, "  return 0;", "}", ""])


@pytest.mark.needs_gcc
def test_random_expressions_agree_with_gcc(tmp_path):
    compiler = find_compiler()
    if compiler is None:
        pytest.skip("no C compiler")
    gen = Gen(1234)
    decls = tuple(VarDecl(VARS[ty.name], ty, "local", VARS[ty.name]) for ty in ALL_TYPES)
    inits = [(d.name, gen.value(d.type)) for d in decls]
    cases, expected = [], []
    while len(cases) < 400:
        ty = gen.rng.choice(ALL_TYPES)
        e = gen.expr(ty, gen.rng.randint(1, 5))
        value = interpret(decls, inits, ty, e)
        if value is not None:
            cases.append((ty, e))
            expected.append(value)
    src = tmp_path / "exprs.c"
    src.write_text(c_program(decls, inits, cases))
    subprocess.run([compiler, "-O0", "-w", str(src), "-o", str(tmp_path / "exprs")], check=True)
    out = subprocess.run([str(tmp_path / "exprs")], capture_output=True, text=True, check=True).stdout
    got = [int(line) for line in out.split()]
    mismatches = [
        (format_expr(e), want, have)
        for (ty, e), want, have in zip(cases, expected, got, strict=True)
        if (want if ty.signed else want % (1 << 64)) != have
    ]
    assert len(got) == len(cases)
    assert mismatches == []
