"""Build IR programs directly, without C: for tests, proposers and synthetic programs.

b = ProgramBuilder("counter.c")
x = b.var("x")
b.assign(x, num(0))
with b.loop():
    b.if_break(ge(x, num(10)))
    b.assign(x, add(x, num(1)))
b.check(eq(x, num(10)))
program = b.build()
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from .errors import Coord
from .ir import (
    INT,
    Assert,
    Assign,
    Assume,
    Binary,
    Block,
    Break,
    Cast,
    Const,
    Continue,
    Expr,
    Goto,
    Havoc,
    If,
    IntType,
    Label,
    Loop,
    LoopInfo,
    Program,
    Scope,
    Stmt,
    Type,
    Unary,
    Var,
    VarDecl,
)


def num(value: int, ty: IntType = INT) -> Const:
    return Const(value, ty)


def _int_type(e: Expr) -> IntType:
    assert isinstance(e.type, IntType), f"not an integer expression: {e}"
    return e.type


def binop(op: str, a: Expr, b: Expr) -> Binary:
    """`a op b` on the type of `a` (comparisons and logic yield int)."""
    result = INT if op in ("<", "<=", ">", ">=", "==", "!=", "&&", "||") else _int_type(a)
    return Binary(op, a, b, result)


def add(a: Expr, b: Expr) -> Binary:
    return binop("+", a, b)


def sub(a: Expr, b: Expr) -> Binary:
    return binop("-", a, b)


def mul(a: Expr, b: Expr) -> Binary:
    return binop("*", a, b)


def lt(a: Expr, b: Expr) -> Binary:
    return binop("<", a, b)


def le(a: Expr, b: Expr) -> Binary:
    return binop("<=", a, b)


def gt(a: Expr, b: Expr) -> Binary:
    return binop(">", a, b)


def ge(a: Expr, b: Expr) -> Binary:
    return binop(">=", a, b)


def eq(a: Expr, b: Expr) -> Binary:
    return binop("==", a, b)


def ne(a: Expr, b: Expr) -> Binary:
    return binop("!=", a, b)


def and_(a: Expr, b: Expr) -> Binary:
    return binop("&&", a, b)


def conjunction(parts: Sequence[Expr]) -> Expr:
    """`parts[0] && parts[1] && ...` (at least one part)."""
    out = parts[0]
    for p in parts[1:]:
        out = and_(out, p)
    return out


def or_(a: Expr, b: Expr) -> Binary:
    return binop("||", a, b)


def not_(a: Expr) -> Unary:
    return Unary("!", a, INT)


def cast(a: Expr, ty: IntType) -> Cast:
    return Cast(a, ty)


class ProgramBuilder:
    """Collects statements into nested blocks; `build()` returns the frozen `Program`."""

    def __init__(self, file: str = "builder.c", data_model: str = "LP64") -> None:
        self.file = file
        self.data_model = data_model
        self._vars: list[VarDecl] = []
        self._blocks: list[list[Stmt]] = [[]]
        self._loops: list[LoopInfo] = []
        self._line = 0

    def _coord(self) -> Coord:
        self._line += 1
        return Coord(self.file, self._line, 1)

    def var(self, name: str, ty: Type = INT, kind: str = "local") -> Var:
        self._vars.append(VarDecl(name, ty, kind, name))
        return Var(name, ty)

    def emit(self, stmt: Stmt) -> None:
        self._blocks[-1].append(stmt)

    def assign(self, target: Var, value: Expr) -> None:
        self.emit(Assign(target.name, value, self._coord()))

    def havoc(self, target: Var, origin: str = "nondet") -> None:
        self.emit(Havoc(target.name, self._coord(), origin))

    def assume(self, cond: Expr) -> None:
        self.emit(Assume(cond, self._coord()))

    def check(self, cond: Expr) -> None:
        coord = self._coord()
        self.emit(Assert(cond, coord, coord))

    def if_break(self, cond: Expr) -> None:
        self.emit(If(cond, (Break(self._coord()),), ()))

    def if_continue(self, cond: Expr) -> None:
        self.emit(If(cond, (Continue(self._coord()),), ()))

    @contextmanager
    def block(self) -> Iterator[list[Stmt]]:
        self._blocks.append([])
        yield self._blocks[-1]
        self._blocks.pop()

    def if_(self, cond: Expr, then: Block, orelse: Block = ()) -> None:
        self.emit(If(cond, then, orelse, self._coord()))

    @contextmanager
    def loop(self, loop_id: str | None = None) -> Iterator[str]:
        """A `while (1)` loop whose body is whatever is emitted inside the `with`."""
        coord = self._coord()
        loop_id = loop_id or f"L{coord.line}"
        scope = tuple((v.c_name, v.name) for v in self._vars)
        self._loops.append(LoopInfo(loop_id, coord, coord.line, scope))
        self._blocks.append([])
        yield loop_id
        body = tuple(self._blocks.pop())
        self.emit(Loop(loop_id, body, (), coord))

    def label(self, name: str, loop: bool = False) -> str | None:
        """A C label; `loop`: a later `goto` jumps back to it, so it heads a loop (its id is returned)."""
        coord = self._coord()
        loop_id = None
        if loop:
            loop_id = f"L{coord.line}"
            scope = tuple((v.c_name, v.name) for v in self._vars)
            self._loops.append(LoopInfo(loop_id, coord, coord.line, scope))
        self.emit(Label(name, coord, loop_id))
        return loop_id

    def goto(self, name: str) -> None:
        self.emit(Goto(name, self._coord()))

    def build(self) -> Program:
        assert len(self._blocks) == 1, "unclosed block"
        main = Scope("main", tuple(self._blocks[0]), Coord(self.file, 0, 0))
        return Program(self.file, self.data_model, tuple(self._vars), (main,), tuple(self._loops))
