"""Check that a `Program` obeys the IR's typing and structure rules (see `ir`).

One pass over the statements with an explicit work stack (deeply nested programs do not
exhaust Python's stack); expressions are checked recursively by a table keyed on node class.
The first violation raises `IRTypeError` at the coordinate of the statement that contains it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from quokka.verifier import ir
from quokka.verifier.errors import IRTypeError
from quokka.verifier.ir import fpsem


class _Fail(Exception):
    """An expression-level violation; the statement walker adds the coordinate."""


def _require(ok: bool, message: str) -> None:
    if not ok:
        raise _Fail(message)


def _int(ty: ir.Type, what: str) -> ir.IntType:
    _require(isinstance(ty, ir.IntType), f"{what} must have an integer type, not {ty}")
    assert isinstance(ty, ir.IntType)
    return ty


def _float(ty: ir.Type, what: str) -> ir.FloatType:
    _require(isinstance(ty, ir.FloatType), f"{what} must have a floating type, not {ty}")
    assert isinstance(ty, ir.FloatType)
    return ty


class _ExprChecker:
    """Checks expressions against the declared variable types and returns their types.

    Post-order with an explicit stack (no recursion, whatever the nesting); each rule gets the
    node and the types of its children (in `ir.children` order).
    """

    def __init__(self, decls: Mapping[str, ir.Type]) -> None:
        self.decls = decls
        self.table: dict[type, Callable[[Any, list[ir.Type]], ir.Type]] = {
            ir.Const: self._const,
            ir.Var: self._var,
            ir.Unary: _unary,
            ir.Binary: _binary,
            ir.Cast: _cast,
            ir.Ite: _ite,
            ir.Select: _select,
            ir.Store: _store,
            ir.Forall: _forall,
            ir.FloatConst: _float_const,
            ir.FloatUnary: _float_unary,
            ir.FloatBinary: _float_binary,
            ir.FloatCompare: _float_compare,
            ir.ToFloat: _to_float,
            ir.FloatToInt: _float_to_int,
        }

    def check(self, root: ir.Expr) -> ir.Type:
        types: dict[int, ir.Type] = {}
        stack: list[tuple[ir.Expr, bool]] = [(root, False)]
        while stack:
            node, expanded = stack.pop()
            rule = self.table.get(type(node))
            if rule is None:
                raise _Fail(f"not an IR expression: {type(node).__name__}")
            if id(node) in types:
                continue
            if expanded:
                types[id(node)] = rule(node, [types[id(c)] for c in ir.children(node)])
            else:
                stack.append((node, True))
                stack.extend((c, False) for c in reversed(ir.children(node)))
        return types[id(root)]

    def check_int(self, e: ir.Expr, what: str) -> ir.IntType:
        return _int(self.check(e), what)

    def _const(self, e: ir.Const, _: list[ir.Type]) -> ir.Type:
        _require(isinstance(e.type, ir.IntType), f"constant {e.value} has non-integer type {e.type}")
        _require(e.type.min <= e.value <= e.type.max, f"constant {e.value} is not a value of {e.type}")
        return e.type

    def _var(self, e: ir.Var, _: list[ir.Type]) -> ir.Type:
        if e.name.startswith(ir.BOUND):  # bound by an enclosing `Forall` (`_forall` checks its type)
            return e.type
        declared = self.decls.get(e.name)
        _require(declared is not None, f"undeclared variable {e.name}")
        _require(declared == e.type, f"variable {e.name} used as {e.type}, declared {declared}")
        return e.type


def _unary(e: ir.Unary, sub: list[ir.Type]) -> ir.Type:
    _require(e.op in ("-", "~", "!"), f"unknown unary operator {e.op!r}")
    operand = _int(sub[0], f"operand of {e.op}")
    if e.op == "!":
        _require(e.type == ir.INT, f"! yields int, not {e.type}")
    else:
        _require(operand == e.type, f"operand of {e.op} is {operand}, operator type {e.type}")
    return e.type


def _binary(e: ir.Binary, sub: list[ir.Type]) -> ir.Type:
    left, right = _int(sub[0], f"left operand of {e.op}"), _int(sub[1], f"right operand of {e.op}")
    if e.op in ir.ARITH_OPS:
        _require(left == right == e.type, f"operands of {e.op} are {left} and {right}, operator {e.type}")
    elif e.op in ir.COMPARE_OPS:
        _require(left == right, f"operands of {e.op} have different types {left} and {right}")
        _require(e.type == ir.INT, f"comparison {e.op} yields int, not {e.type}")
    elif e.op in ir.LOGIC_OPS:
        _require(e.type == ir.INT, f"{e.op} yields int, not {e.type}")
    else:
        raise _Fail(f"unknown binary operator {e.op!r}")
    return e.type


def _cast(e: ir.Cast, sub: list[ir.Type]) -> ir.Type:
    _int(sub[0], "operand of a cast")
    return _int(e.type, "a cast")


def _ite(e: ir.Ite, sub: list[ir.Type]) -> ir.Type:
    _int(sub[0], "condition of ?:")
    _require(sub[1] == sub[2] == e.type, f"branches of ?: are {sub[1]} and {sub[2]}, result {e.type}")
    return e.type


def _forall(e: ir.Forall, sub: list[ir.Type]) -> ir.Type:
    _require(e.var.name.startswith(ir.BOUND), f"quantified variable {e.var.name} is not a bound name")
    bound = _int(e.var.type, "a quantified variable")
    _require(sub[0] == sub[1] == bound, f"bounds of a quantifier are {sub[0]} and {sub[1]}, variable {bound}")
    _int(sub[2], "body of a quantifier")
    _require(e.type == ir.INT, f"a quantifier yields int, not {e.type}")
    return e.type


def _select(e: ir.Select, sub: list[ir.Type]) -> ir.Type:
    array = sub[0]
    _require(isinstance(array, ir.ArrayType), f"indexing a non-array of type {array}")
    assert isinstance(array, ir.ArrayType)
    _int(sub[1], "array index")
    _require(array.elem == e.type, f"element of {array} read as {e.type}")
    return e.type


def _store(e: ir.Store, sub: list[ir.Type]) -> ir.Type:
    array, index, value = sub
    _require(isinstance(e.type, ir.ArrayType), f"store typed {e.type}")
    _require(array == e.type, f"store into {array} typed {e.type}")
    _int(index, "array index")
    _require(value == e.type.elem, f"storing {value} into {e.type}")
    return e.type


def _float_const(e: ir.FloatConst, _: list[ir.Type]) -> ir.Type:
    ty = _float(e.type, f"constant {e.value}")
    _require(isinstance(e.value, float), f"floating constant {e.value!r} is not a Python float")
    _require(fpsem.round_to(e.value, ty) == e.value or e.value != e.value, f"{e.value!r} is not a {ty}")
    return ty


def _float_unary(e: ir.FloatUnary, sub: list[ir.Type]) -> ir.Type:
    _require(e.op == "-", f"unknown floating unary operator {e.op!r}")
    _require(sub[0] == e.type, f"operand of {e.op} is {sub[0]}, operator type {e.type}")
    return _float(e.type, f"operator {e.op}")


def _float_binary(e: ir.FloatBinary, sub: list[ir.Type]) -> ir.Type:
    _require(e.op in ("+", "-", "*", "/"), f"unknown floating operator {e.op!r}")
    _require(sub[0] == sub[1] == e.type, f"operands of {e.op} are {sub[0]} and {sub[1]}, operator {e.type}")
    return _float(e.type, f"operator {e.op}")


def _float_compare(e: ir.FloatCompare, sub: list[ir.Type]) -> ir.Type:
    _require(e.op in ir.COMPARE_OPS, f"unknown comparison {e.op!r}")
    _float(sub[0], f"left operand of {e.op}")
    _require(sub[0] == sub[1], f"operands of {e.op} have different types {sub[0]} and {sub[1]}")
    _require(e.type == ir.INT, f"comparison {e.op} yields int, not {e.type}")
    return e.type


def _to_float(e: ir.ToFloat, sub: list[ir.Type]) -> ir.Type:
    _require(isinstance(sub[0], (ir.IntType, ir.FloatType)), f"conversion of {sub[0]} to {e.type}")
    return _float(e.type, "a conversion to float")


def _float_to_int(e: ir.FloatToInt, sub: list[ir.Type]) -> ir.Type:
    _float(sub[0], "operand of a float-to-integer conversion")
    ty = _int(e.type, "a float-to-integer conversion")
    _require(not ty.is_bool, "a float converts to _Bool by comparison with 0.0, not FloatToInt")
    return ty


@dataclass(frozen=True)
class _Ctx:
    """Where a statement sits: inside how many loops of its function, inside any function."""

    loops: int
    in_scope: bool


class _StmtChecker:
    def __init__(self, program: ir.Program) -> None:
        self.decls = program.var_types
        self.exprs = _ExprChecker(self.decls)
        self.loops: list[ir.Loop | ir.Label] = []
        self.table: dict[type, Callable[[Any, _Ctx], None]] = {
            ir.Assign: self._assign,
            ir.Havoc: self._havoc,
            ir.Assume: self._cond,
            ir.Assert: self._cond,
            ir.If: self._cond,
            ir.Loop: self._loop,
            ir.Break: self._jump,
            ir.Continue: self._jump,
            ir.Scope: lambda s, ctx: None,
            ir.Return: self._return,
            ir.Label: self._label,
            ir.Goto: self._goto,
        }

    def run(self, body: tuple[ir.Stmt, ...]) -> None:
        stack: list[tuple[ir.Stmt, _Ctx]] = [(s, _Ctx(0, False)) for s in reversed(body)]
        while stack:
            stmt, ctx = stack.pop()
            self.check(stmt, ctx)
            stack.extend((s, ctx2) for block, ctx2 in self._nested(stmt, ctx) for s in reversed(block))

    def check(self, stmt: ir.Stmt, ctx: _Ctx) -> None:
        handler = self.table.get(type(stmt))
        if handler is None:
            raise IRTypeError(None, f"not an IR statement: {type(stmt).__name__}")
        try:
            handler(stmt, ctx)
        except _Fail as exc:
            raise IRTypeError(stmt.coord, str(exc)) from None

    @staticmethod
    def _nested(stmt: ir.Stmt, ctx: _Ctx) -> list[tuple[tuple[ir.Stmt, ...], _Ctx]]:
        """The blocks of `stmt` in reverse order (so the stack visits them in order)."""
        if isinstance(stmt, ir.If):
            return [(stmt.orelse, ctx), (stmt.then, ctx)]
        if isinstance(stmt, ir.Loop):
            inner = _Ctx(ctx.loops + 1, ctx.in_scope)
            return [(stmt.step, inner), (stmt.body, inner)]
        if isinstance(stmt, ir.Scope):
            return [(stmt.body, _Ctx(0, True))]
        return []

    def _declared(self, name: str) -> ir.Type:
        ty = self.decls.get(name)
        _require(ty is not None, f"undeclared variable {name}")
        assert ty is not None
        return ty

    def _assign(self, s: ir.Assign, ctx: _Ctx) -> None:
        target = self._declared(s.target)
        value = self.exprs.check(s.value)
        _require(value == target, f"assigning {value} to {s.target} of type {target}")

    def _havoc(self, s: ir.Havoc, ctx: _Ctx) -> None:
        target = self._declared(s.target)
        havocable = isinstance(target, (ir.IntType, ir.ArrayType, ir.FloatType))
        _require(havocable, f"havoc of {s.target} of type {target}")

    def _cond(self, s: ir.Assume | ir.Assert | ir.If, ctx: _Ctx) -> None:
        self.exprs.check_int(s.cond, f"condition of {type(s).__name__}")

    def _loop(self, s: ir.Loop, ctx: _Ctx) -> None:
        self.loops.append(s)

    def _jump(self, s: ir.Break | ir.Continue, ctx: _Ctx) -> None:
        _require(ctx.loops > 0, f"{type(s).__name__.lower()} outside a loop")

    def _return(self, s: ir.Return, ctx: _Ctx) -> None:
        _require(ctx.in_scope, "return outside a function scope")

    def _label(self, s: ir.Label, ctx: _Ctx) -> None:
        if s.loop is not None:
            self.loops.append(s)

    def _goto(self, s: ir.Goto, ctx: _Ctx) -> None:
        _require(ctx.in_scope, "goto outside a function scope")


def _check_declarations(program: ir.Program) -> None:
    seen: set[str] = set()
    for decl in program.variables:
        if decl.name in seen:
            raise IRTypeError(decl.coord, f"variable {decl.name} declared twice")
        seen.add(decl.name)
        if isinstance(decl.type, ir.ArrayType) and not isinstance(decl.type.elem, ir.IntType):
            raise IRTypeError(decl.coord, f"array {decl.name} of non-integer elements")


def _loop_id(loop: ir.Loop | ir.Label) -> str:
    return loop.id if isinstance(loop, ir.Loop) else str(loop.loop)


def _check_loops(program: ir.Program, loops: list[ir.Loop | ir.Label]) -> None:
    seen: set[str] = set()
    for loop in loops:
        if _loop_id(loop) in seen:
            raise IRTypeError(loop.coord, f"loop id {_loop_id(loop)} used twice")
        seen.add(_loop_id(loop))
    infos: set[str] = set()
    for info in program.loops:
        if info.id in infos or info.id not in seen:
            problem = "has two LoopInfo entries" if info.id in infos else "has a LoopInfo but no Loop"
            raise IRTypeError(info.coord, f"loop {info.id} {problem}")
        infos.add(info.id)
        for c_name, ir_name in info.scope:
            if ir_name not in program.var_types:
                raise IRTypeError(info.coord, f"loop {info.id}: scope maps {c_name} to undeclared {ir_name}")
    for loop in loops:
        if _loop_id(loop) not in infos:
            raise IRTypeError(loop.coord, f"loop {_loop_id(loop)} has no LoopInfo")


def check_program(program: ir.Program) -> None:
    """Raise `IRTypeError` at the first violation of the IR's rules; return None if there is none."""
    _check_declarations(program)
    checker = _StmtChecker(program)
    checker.run(program.body)
    _check_loops(program, checker.loops)


def check_expr(e: ir.Expr, decls: Mapping[str, ir.Type]) -> ir.Type:
    """The type of `e` over variables declared in `decls`; raises `IRTypeError` at its first violation."""
    try:
        return _ExprChecker(decls).check(e)
    except _Fail as exc:
        raise IRTypeError(None, str(exc)) from exc
