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

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from quokka.verifier import ir
from quokka.verifier.errors import Coord


def num(value: int, ty: ir.IntType = ir.INT) -> ir.Const:
    return ir.Const(value, ty)


def _int_type(e: ir.Expr) -> ir.IntType:
    assert isinstance(e.type, ir.IntType), f"not an integer expression: {e}"
    return e.type


def binop(op: str, a: ir.Expr, b: ir.Expr) -> ir.Binary:
    """`a op b` on the type of `a` (comparisons and logic yield int)."""
    result = ir.INT if op in ("<", "<=", ">", ">=", "==", "!=", "&&", "||") else _int_type(a)
    return ir.Binary(op, a, b, result)


def _operator(op: str) -> Callable[[ir.Expr, ir.Expr], ir.Binary]:
    def build(a: ir.Expr, b: ir.Expr) -> ir.Binary:
        return binop(op, a, b)

    return build


add, sub, mul = _operator("+"), _operator("-"), _operator("*")
lt, le, gt, ge = _operator("<"), _operator("<="), _operator(">"), _operator(">=")
eq, ne = _operator("=="), _operator("!=")
and_, or_ = _operator("&&"), _operator("||")


def conjunction(parts: Sequence[ir.Expr]) -> ir.Expr:
    """`parts[0] && parts[1] && ...` (at least one part)."""
    out = parts[0]
    for p in parts[1:]:
        out = and_(out, p)
    return out


def not_(a: ir.Expr) -> ir.Unary:
    return ir.Unary("!", a, ir.INT)


def cast(a: ir.Expr, ty: ir.IntType) -> ir.Cast:
    return ir.Cast(a, ty)


class ProgramBuilder:
    """Collects statements into nested blocks; `build()` returns the frozen `Program`."""

    def __init__(self, file: str = "builder.c", data_model: str = "LP64") -> None:
        self.file = file
        self.data_model = data_model
        self._vars: list[ir.VarDecl] = []
        self._blocks: list[list[ir.Stmt]] = [[]]
        self._loops: list[ir.LoopInfo] = []
        self._line = 0

    def _coord(self) -> Coord:
        self._line += 1
        return Coord(self.file, self._line, 1)

    def var(self, name: str, ty: ir.Type = ir.INT, kind: str = "local") -> ir.Var:
        self._vars.append(ir.VarDecl(name, ty, kind, name))
        return ir.Var(name, ty)

    def emit(self, stmt: ir.Stmt) -> None:
        self._blocks[-1].append(stmt)

    def assign(self, target: ir.Var, value: ir.Expr) -> None:
        self.emit(ir.Assign(target.name, value, self._coord()))

    def havoc(self, target: ir.Var, origin: str = "nondet") -> None:
        self.emit(ir.Havoc(target.name, self._coord(), origin))

    def assume(self, cond: ir.Expr) -> None:
        self.emit(ir.Assume(cond, self._coord()))

    def check(self, cond: ir.Expr) -> None:
        coord = self._coord()
        self.emit(ir.Assert(cond, coord, coord))

    def if_break(self, cond: ir.Expr) -> None:
        self.emit(ir.If(cond, (ir.Break(self._coord()),), ()))

    def if_continue(self, cond: ir.Expr) -> None:
        self.emit(ir.If(cond, (ir.Continue(self._coord()),), ()))

    @contextmanager
    def block(self) -> Iterator[list[ir.Stmt]]:
        self._blocks.append([])
        yield self._blocks[-1]
        self._blocks.pop()

    def if_(self, cond: ir.Expr, then: ir.Block, orelse: ir.Block = ()) -> None:
        self.emit(ir.If(cond, then, orelse, self._coord()))

    @contextmanager
    def loop(self, loop_id: str | None = None) -> Iterator[str]:
        """A `while (1)` loop whose body is whatever is emitted inside the `with`."""
        coord = self._coord()
        loop_id = loop_id or f"L{coord.line}"
        scope = tuple((v.c_name, v.name) for v in self._vars)
        self._loops.append(ir.LoopInfo(loop_id, coord, coord.line, scope))
        self._blocks.append([])
        yield loop_id
        body = tuple(self._blocks.pop())
        self.emit(ir.Loop(loop_id, body, (), coord))

    def label(self, name: str, loop: bool = False) -> str | None:
        """A C label; `loop`: a later `goto` jumps back to it, so it heads a loop (its id is returned)."""
        coord = self._coord()
        loop_id = None
        if loop:
            loop_id = f"L{coord.line}"
            scope = tuple((v.c_name, v.name) for v in self._vars)
            self._loops.append(ir.LoopInfo(loop_id, coord, coord.line, scope))
        self.emit(ir.Label(name, coord, loop_id))
        return loop_id

    def goto(self, name: str) -> None:
        self.emit(ir.Goto(name, self._coord()))

    def build(self) -> ir.Program:
        assert len(self._blocks) == 1, "unclosed block"
        main = ir.Scope("main", tuple(self._blocks[0]), Coord(self.file, 0, 0))
        return ir.Program(self.file, self.data_model, tuple(self._vars), (main,), tuple(self._loops))
