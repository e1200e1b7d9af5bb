"""Test helpers for the frontend: a tiny independent IR interpreter and a gcc harness.

The interpreter is deliberately separate from `quokka.verifier.exec.interp`, so frontend tests do not
depend on (or share bugs with) it. It walks the nested statements, or, for a program with a `goto`,
the blocks of `cfg.build_cfg`. C programs are compiled with gcc (LP64) and run with the same
nondeterministic inputs; both must agree on the outcome.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from quokka.verifier import ir
from quokka.verifier.cfg import Branch, Halt, Jump, build_cfg
from quokka.verifier.frontend import lower_source
from quokka.verifier.ir import semantics

GCC = shutil.which("gcc")


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


class _Return(Exception):
    pass


class _Stop(Exception):
    def __init__(self, outcome: str) -> None:
        super().__init__(outcome)
        self.outcome = outcome


@dataclass
class Outcome:
    outcome: str  # "error" | "blocked" | "exit" | "limit"
    env: dict[str, object] = field(default_factory=dict)


class Interp:
    def __init__(self, program: ir.Program, inputs: Sequence[int], max_steps: int = 200_000) -> None:
        self.types = program.var_types
        self.env: dict[str, object] = {
            v.name: ({} if isinstance(v.type, ir.ArrayType) else 0) for v in program.variables
        }
        self.inputs = list(inputs)
        self.steps = max_steps
        self.program = program

    def run(self) -> Outcome:
        if any(isinstance(s, ir.Goto) for s in ir.walk_stmts(self.program.body)):
            return self.run_cfg()
        try:
            self.block(self.program.body)
        except _Stop as stop:
            return Outcome(stop.outcome, self.env)
        except _Return:
            pass
        return Outcome("exit", self.env)

    def run_cfg(self) -> Outcome:
        """Run the program's control-flow graph (its blocks hold simple statements only)."""
        cfg = build_cfg(self.program)
        b = cfg.entry
        try:
            while not isinstance(cfg.blocks[b].end, Halt):
                block = cfg.blocks[b]
                for s in block.stmts:
                    self.stmt(s)
                self.stmt(ir.Label("step"))  # counts a step for every block
                end = block.end
                if isinstance(end, Branch):
                    b = end.then if self.eval(end.cond) else end.orelse
                else:
                    assert isinstance(end, Jump)
                    b = end.target
            for s in cfg.blocks[b].stmts:
                self.stmt(s)
        except _Stop as stop:
            return Outcome(stop.outcome, self.env)
        return Outcome("exit", self.env)

    def block(self, block: ir.Block) -> None:
        for s in block:
            self.stmt(s)

    def stmt(self, s: object) -> None:
        self.steps -= 1
        if self.steps < 0:
            raise _Stop("limit")
        if isinstance(s, ir.Assign):
            self.env[s.target] = self.eval(s.value)
        elif isinstance(s, ir.Havoc):
            ty = self.types[s.target]
            if isinstance(ty, ir.ArrayType):
                self.env[s.target] = {}
            else:
                assert isinstance(ty, ir.IntType)
                self.env[s.target] = semantics.wrap(self.inputs.pop(0) if self.inputs else 0, ty)
        elif isinstance(s, ir.Assume):
            if not self.eval(s.cond):
                raise _Stop("blocked")
        elif isinstance(s, ir.Assert):
            if not self.eval(s.cond):
                raise _Stop("error")
        elif isinstance(s, ir.If):
            self.block(s.then if self.eval(s.cond) else s.orelse)
        elif isinstance(s, ir.Loop):
            self.loop(s)
        elif isinstance(s, ir.Scope):
            with contextlib.suppress(_Return):
                self.block(s.body)
        elif isinstance(s, ir.Break):
            raise _Break
        elif isinstance(s, ir.Continue):
            raise _Continue
        elif isinstance(s, ir.Return):
            raise _Return
        elif isinstance(s, ir.Label):
            pass
        else:
            raise AssertionError(f"unknown statement {s!r}")

    def loop(self, s: ir.Loop) -> None:
        while True:
            try:
                with contextlib.suppress(_Continue):
                    self.block(s.body)
                self.block(s.step)
            except _Break:
                return

    def eval(self, e: ir.Expr) -> object:
        if isinstance(e, ir.Const):
            assert e.type.min <= e.value <= e.type.max, e
            return e.value
        if isinstance(e, ir.Var):
            return self.env[e.name]
        if isinstance(e, ir.Cast):
            return semantics.wrap(self.eval(e.operand), e.type)  # type: ignore[arg-type]
        if isinstance(e, ir.Unary):
            return semantics.unary(e.op, self.eval(e.operand), e.type)  # type: ignore[arg-type]
        if isinstance(e, ir.Binary):
            return self.binary(e)
        if isinstance(e, ir.Ite):
            return self.eval(e.then) if self.eval(e.cond) else self.eval(e.orelse)
        if isinstance(e, ir.Select):
            arr = self.eval(e.array)
            assert isinstance(arr, dict)
            return arr.get(self.eval(e.index), 0)
        if isinstance(e, ir.Store):
            arr = dict(self.eval(e.array))  # type: ignore[call-overload]
            arr[self.eval(e.index)] = self.eval(e.value)
            return arr
        raise AssertionError(f"unknown expression {e!r}")

    def binary(self, e: ir.Binary) -> int:
        if e.op == "&&":
            return int(bool(self.eval(e.left)) and bool(self.eval(e.right)))
        if e.op == "||":
            return int(bool(self.eval(e.left)) or bool(self.eval(e.right)))
        a, b = self.eval(e.left), self.eval(e.right)
        assert isinstance(a, int) and isinstance(b, int)
        if e.op in ("<", "<=", ">", ">=", "==", "!="):
            assert e.left.type == e.right.type, e
            return semantics.compare(e.op, a, b)
        assert e.left.type == e.right.type == e.type, e
        return semantics.arith(e.op, a, b, e.type)


def run_ir(src: str, inputs: Sequence[int] = (), data_model: str = "LP64") -> Outcome:
    return Interp(lower_source(src, "t.c", data_model), inputs).run()


HARNESS = r"""
#include <stdlib.h>
static int q_argc; static char **q_argv; static int q_next = 1;
static long long q_in(void) { return q_next < q_argc ? atoll(q_argv[q_next++]) : 0; }
int __VERIFIER_nondet_int(void) { return (int)q_in(); }
unsigned int __VERIFIER_nondet_uint(void) { return (unsigned int)q_in(); }
char __VERIFIER_nondet_char(void) { return (char)q_in(); }
unsigned char __VERIFIER_nondet_uchar(void) { return (unsigned char)q_in(); }
short __VERIFIER_nondet_short(void) { return (short)q_in(); }
unsigned short __VERIFIER_nondet_ushort(void) { return (unsigned short)q_in(); }
long __VERIFIER_nondet_long(void) { return (long)q_in(); }
unsigned long __VERIFIER_nondet_ulong(void) { return (unsigned long)q_in(); }
_Bool __VERIFIER_nondet_bool(void) { return (_Bool)q_in(); }
void reach_error(void) { exit(99); }
void __VERIFIER_assert(int c) { if (!c) exit(99); }
void __VERIFIER_assume(int c) { if (!c) exit(98); }
void assume_abort_if_not(int c) { if (!c) exit(98); }
#define main q_user_main
"""


def run_gcc(src: str, inputs: Sequence[int] = ()) -> str:
    """Compile `src` with gcc (LP64) and run it: "error", "blocked" or "exit"."""
    assert GCC is not None
    with tempfile.TemporaryDirectory() as tmp:
        c_file = Path(tmp) / "t.c"
        exe = Path(tmp) / "t"
        driver = (
            "\n#undef main\nint main(int argc, char **argv) { q_argc = argc; q_argv = argv; q_user_main();"
        )
        driver += " return 0; }\n"
        c_file.write_text(HARNESS + src + driver)
        subprocess.run([GCC, "-w", "-O0", "-o", str(exe), str(c_file)], check=True, capture_output=True)
        code = subprocess.run([str(exe), *map(str, inputs)], capture_output=True, timeout=20).returncode
    return {0: "exit", 99: "error", 98: "blocked", -6: "blocked"}.get(code, f"code {code}")
