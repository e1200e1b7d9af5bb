"""The IR as a C program gcc can build: the compiled check of a counterexample of a program that
has no C file (a program a test or a tool built as IR).

Every `Havoc` is a call of `__VERIFIER_nondet_ulonglong()` converted to the variable's type (of
`__VERIFIER_nondet_float()` / `_double()` for floats), so the compiled program asks for its
inputs in the order the interpreter takes them (`Execution.inputs_used`, which holds a float's
encoding, as the replay harness reads it). An `Assert` that fails calls `reach_error()`, an
`Assume` that fails ends the run without error. Variables are C globals named after their IR
names (zero at the start, as in the interpreter); a `Return` leaves its `Scope` by a `goto`, and
a `continue` of a loop with a step jumps to the step.

The C has the IR's meaning only where C computes what the IR says, so `program_to_c` refuses
(`NotEmittable`, with the reason) what it cannot write faithfully: arithmetic in a type narrower
than `int` (C promotes it), arrays without a size, havocked arrays (the interpreter draws their
elements lazily), array values other than stores into the same array or a copy, the heap model's
pointers, and a property whose error is not an `Assert`.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from quokka.verifier import ir
from quokka.verifier.ir.printer import format_expr, format_type_decl
from quokka.verifier.properties import NO_OVERFLOW

_MAX_DEPTH = 200
_INT_BITS = 32
_PRELUDE = (
    "void reach_error(void);\nvoid abort(void);\nvoid *memcpy(void *, const void *, unsigned long);\n"
    "unsigned long long __VERIFIER_nondet_ulonglong(void);\nfloat __VERIFIER_nondet_float(void);\n"
    "double __VERIFIER_nondet_double(void);\n"
)


class NotEmittable(Exception):
    """The program has something C would not compute as the IR does (the message says what)."""


def program_to_c(program: ir.Program) -> str:
    """`program` as a C translation unit with a `main`; NotEmittable when it cannot be written."""
    if program.property_name == NO_OVERFLOW:
        raise NotEmittable("its errors are signed overflows, not assertions")
    names = {d.name: _c_identifier(d.name, k) for k, d in enumerate(program.variables)}
    decls = [f"static {format_type_decl(names[d.name], _checked_type(d))};" for d in program.variables]
    writer = _Writer(program, names)
    body = writer.block(program.body, 1, _Context())
    return "\n".join([_PRELUDE, *decls, "int main(void) {", *body, "  qk_end:;", "  return 0;", "}", ""])


def _c_identifier(name: str, index: int) -> str:
    return f"q{index}_{_sanitized(name)}"


def _sanitized(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


def _checked_type(decl: ir.VarDecl) -> ir.Type:
    ty = decl.type
    if isinstance(ty, ir.ArrayType) and ty.size is None:
        raise NotEmittable(f"array {decl.name} has no size")
    scalar = ty.elem if isinstance(ty, ir.ArrayType) else ty
    if isinstance(scalar, ir.IntType) and scalar.is_pointer:
        raise NotEmittable(f"{decl.name} is a pointer of the heap model")
    return ty


@dataclass(frozen=True)
class _Context:
    """Where a statement is: the innermost loop's step label (None: no step), whether it is in a
    loop of its function, the number of its `Scope` (0: the outermost) and its nesting depth."""

    loop_step: str | None = None
    in_loop: bool = False
    scope: int = 0
    depth: int = 0

    @property
    def scope_end(self) -> str:
        """The label a `Return` jumps to: after its `Scope`, or the end of `main`."""
        return f"qk_return_{self.scope}" if self.scope else "qk_end"


@dataclass
class _Writer:
    program: ir.Program
    names: dict[str, str]
    labels: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def block(self, block: ir.Block, indent: int, ctx: _Context) -> list[str]:
        if ctx.depth > _MAX_DEPTH:
            raise NotEmittable(f"statements nested deeper than {_MAX_DEPTH}")
        return [line for s in block for line in self.stmt(s, indent, ctx)]

    def stmt(self, s: ir.Stmt, indent: int, ctx: _Context) -> list[str]:
        pad = "  " * indent
        if isinstance(s, (ir.If, ir.Loop, ir.Scope)):
            return self.compound(s, indent, replace(ctx, depth=ctx.depth + 1))
        if isinstance(s, (ir.Assign, ir.Havoc)):
            return [pad + line for line in self.update(s)]
        return [pad + self.jump_or_check(s, ctx)]

    def compound(self, s: ir.If | ir.Loop | ir.Scope, indent: int, ctx: _Context) -> list[str]:
        pad = "  " * indent
        if isinstance(s, ir.If):
            then = self.block(s.then, indent + 1, ctx)
            orelse = self.block(s.orelse, indent + 1, ctx)
            return [f"{pad}if ({self.expr(s.cond)}) {{", *then, f"{pad}}} else {{", *orelse, f"{pad}}}"]
        if isinstance(s, ir.Loop):
            step = f"qk_step_{next(self.labels)}" if s.step else None
            inner = replace(ctx, loop_step=step, in_loop=True)
            body = self.block(s.body, indent + 1, inner)
            rest = [f"{pad}  {step}:;", *self.block(s.step, indent + 1, inner)] if step else []
            return [f"{pad}for (;;) {{", *body, *rest, f"{pad}}}"]
        inner = replace(ctx, loop_step=None, in_loop=False, scope=next(self.labels))
        return [f"{pad}{{", *self.block(s.body, indent + 1, inner), f"{pad}}}", f"{pad}{inner.scope_end}:;"]

    def jump_or_check(self, s: ir.Stmt, ctx: _Context) -> str:
        if isinstance(s, ir.Assume):
            return f"if (!({self.expr(s.cond)})) abort();"
        if isinstance(s, ir.Assert):
            return f"if (!({self.expr(s.cond)})) reach_error();"
        if isinstance(s, (ir.Break, ir.Continue)) and not ctx.in_loop:
            raise NotEmittable(f"{type(s).__name__.lower()} outside a loop of its function")
        if isinstance(s, ir.Break):
            return "break;"
        if isinstance(s, ir.Continue):
            return "continue;" if ctx.loop_step is None else f"goto {ctx.loop_step};"
        if isinstance(s, ir.Return):
            return f"goto {ctx.scope_end};"
        if isinstance(s, ir.Goto):
            return f"goto {_label(s.label, ctx)};"
        assert isinstance(s, ir.Label)
        return f"{_label(s.name, ctx)}:;"

    def update(self, s: ir.Assign | ir.Havoc) -> list[str]:
        decl = self.program.var(s.target)
        target = self.names[s.target]
        if isinstance(s, ir.Havoc):
            return [_havoc(target, decl)]
        if not isinstance(decl.type, ir.ArrayType):
            return [f"{target} = {self.expr(s.value)};"]
        if isinstance(s.value, ir.Var):
            return [f"memcpy({target}, {self.names[s.value.name]}, sizeof {target});"]
        return self.stores(s.target, s.value)

    def stores(self, name: str, value: ir.Expr) -> list[str]:
        if not isinstance(value, ir.Store):
            raise NotEmittable(f"array {name} is given a value that is not a store into it")
        base, chain = ir.store_chain(value)
        if not (isinstance(base, ir.Var) and base.name == name):
            raise NotEmittable(f"array {name} is given a store into another array")
        if any(name in ir.free_vars(e) for st in chain for e in (st.index, st.value)):
            raise NotEmittable(f"a store into {name} reads {name}")
        target = self.names[name]
        return [f"{target}[{self.expr(st.index)}] = {self.expr(st.value)};" for st in chain]

    def expr(self, e: ir.Expr) -> str:
        for node in ir.walk(e):
            _check_expr(node)
        return format_expr(e, self.names)


def _label(name: str, ctx: _Context) -> str:
    return f"qk_label_{ctx.scope}_{_sanitized(name)}"


def _havoc(target: str, decl: ir.VarDecl) -> str:
    ty = decl.type
    if isinstance(ty, ir.ArrayType):
        raise NotEmittable(f"array {decl.name} is havocked (its elements are drawn as they are read)")
    if isinstance(ty, ir.FloatType):
        return f"{target} = __VERIFIER_nondet_{ty.name}();"
    return f"{target} = ({ty.name})__VERIFIER_nondet_ulonglong();"


def _check_expr(e: ir.Expr) -> None:
    if isinstance(e, ir.Store):
        raise NotEmittable("an array store inside an expression")
    if _arithmetic(e) and isinstance(e, ir.Unary | ir.Binary) and e.type.bits < _INT_BITS:
        raise NotEmittable(f"arithmetic ({e.op}) in {e.type}, which C promotes to int")
    if isinstance(e, ir.Var | ir.Cast) and isinstance(e.type, ir.IntType) and e.type.is_pointer:
        raise NotEmittable("a pointer of the heap model")


def _arithmetic(e: ir.Expr) -> bool:
    if isinstance(e, ir.Unary):
        return e.op != "!"
    return isinstance(e, ir.Binary) and e.op in ir.ARITH_OPS
