"""C expressions (pycparser AST) to IR: side effects become statements, typing goes through `cexpr`.

`value(node, out)` appends the statements that evaluate `node`'s side effects to `out` (left to
right) and returns a side-effect-free IR expression for its value; `effect(node, out)` keeps the
side effects only. When a later operand has side effects that write a variable an earlier
operand's value reads, that value is saved in a temporary first, so evaluation order is explicit.
Function calls are left to subclasses (`calls`); `parse_invariant` uses a subclass that rejects
every side effect.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from pycparser import c_ast
from quokka.verifier.ir import cexpr, fpsem

from ..errors import Coord, FrontendError, UnsupportedFeature
from ..ir import (
    INT,
    ArrayType,
    Assign,
    Assume,
    Binary,
    Const,
    Expr,
    FloatConst,
    FloatType,
    Havoc,
    If,
    IntType,
    Ite,
    ScalarType,
    Stmt,
    Var,
    free_vars,
    walk_stmts,
)
from .ctype import VOID, CType, MultiArrayType, StructType, TypeResolver
from .memory import BlockType, StructInfo
from .state import BlockParam, ConstBinding, LowerState, PoisonBinding, RefBinding, TypedefBinding, VarBinding


@dataclass(frozen=True)
class LValue:
    """An assignable place: a scalar variable, or element `index` of an array variable."""

    var: Var
    index: Expr | None = None

    @property
    def type(self) -> ScalarType:
        ty = self.var.type
        return ty.elem if isinstance(ty, ArrayType) else ty

    def read(self) -> Expr:
        return self.var if self.index is None else cexpr.select(self.var, self.index)


def assigned(stmts: list[Stmt]) -> set[str]:
    """Variables the statements may write."""
    return {s.target for s in walk_stmts(tuple(stmts)) if isinstance(s, (Assign, Havoc))}


class ExprLowerer:
    """Lowers expressions; `call` is the hook for function calls."""

    def __init__(self, st: LowerState) -> None:
        self.st = st
        self.types = TypeResolver(st, self.const_int)
        self.effects_error: Callable[[Coord | None, str], Exception] | None = None
        self._value_table: dict[type, Callable[[Any, list[Stmt]], Expr]] = {
            c_ast.ID: self._id,
            c_ast.Constant: self._constant,
            c_ast.UnaryOp: self._unary,
            c_ast.BinaryOp: self._binary,
            c_ast.Assignment: self._assign_value,
            c_ast.TernaryOp: self._ternary,
            c_ast.Cast: self._cast,
            c_ast.FuncCall: self._call_value,
            c_ast.ArrayRef: lambda n, out: self.lvalue(n, out).read(),
            c_ast.StructRef: lambda n, out: self.lvalue(n, out).read(),
            c_ast.ExprList: self._comma,
        }

    # ------------------------------------------------------------------ entry points

    def value(self, node: Any, out: list[Stmt]) -> Expr:
        """The integer value of `node`; its side effects are appended to `out`."""
        handler = self._value_table.get(type(node))
        if handler is None:
            raise self.unsupported_node(node)
        return handler(node, out)

    def effect(self, node: Any, out: list[Stmt]) -> None:
        """Evaluate `node` for its side effects only."""
        if isinstance(node, c_ast.Assignment):
            self._assign(node, out, False)
        elif isinstance(node, c_ast.UnaryOp) and node.op in ("++", "--", "p++", "p--"):
            self._incdec(node, out, False)
        elif isinstance(node, c_ast.FuncCall):
            self.call(node, out, False)
        elif isinstance(node, c_ast.Cast) and self.types.resolve(node.to_type) == VOID:
            self.effect(node.expr, out)
        elif isinstance(node, c_ast.ExprList):
            for item in node.exprs:
                self.effect(item, out)
        elif isinstance(node, c_ast.TernaryOp):
            self._ternary_effect(node, out)
        elif isinstance(node, c_ast.BinaryOp) and node.op in ("&&", "||"):
            self._logic_effect(node, out)
        elif isinstance(node, c_ast.Compound):
            self.statement_expression(node, out)
        else:
            self.value(node, out)

    def statement_expression(self, node: c_ast.Compound, out: list[Stmt]) -> None:
        """GNU `({ ... })` whose value is unused (glibc's assert expands to one)."""
        raise UnsupportedFeature(self.st.coord(node), "statement expression")

    def call(self, node: c_ast.FuncCall, out: list[Stmt], want: bool) -> Expr | None:
        """Lower a call; return its value (None for void or when `want` is False)."""
        raise self.effect_error(node, "a function call")

    def const_int(self, node: Any) -> int:
        """The value of an integer constant expression (array sizes, case labels, enumerators)."""
        scratch: list[Stmt] = []
        with self.no_effects(lambda c, what: FrontendError(c, f"{what} in a constant expression")):
            value = cexpr.const_value(self.value(node, scratch))
        if value is None or scratch:
            raise FrontendError(self.st.coord(node), "not an integer constant expression")
        return value

    @contextmanager
    def no_effects(self, error: Callable[[Coord | None, str], Exception]) -> Iterator[None]:
        saved = self.effects_error
        self.effects_error = error
        try:
            yield
        finally:
            self.effects_error = saved

    def converted(self, node: Any, ty: ScalarType, out: list[Stmt]) -> Expr:
        """The value of `node` converted to `ty` (as by assignment)."""
        value = self.value(node, out)
        try:
            return self.convert(value, ty, node)
        except cexpr.NotScalar:
            raise UnsupportedFeature(self.st.coord(node), "pointer (array used as a value)") from None

    def convert(self, value: Expr, ty: ScalarType, node: Any) -> Expr:
        """`value` converted to `ty` as by assignment; between a pointer and an integer only the
        null constant converts, and a pointer converts to `_Bool` (the heap model's numbers are
        not addresses); between a pointer and a float nothing does."""
        memory = self.st.memory
        source_pointer, target_pointer = memory.is_pointer(value.type), memory.is_pointer(ty)
        if (source_pointer and isinstance(ty, FloatType)) or (target_pointer and cexpr.is_float(value)):
            raise FrontendError(self.st.coord(node), f"conversion between {value.type} and {ty}")
        if source_pointer and isinstance(ty, IntType) and not target_pointer and not ty.is_bool:
            raise UnsupportedFeature(self.st.coord(node), "pointer converted to an integer")
        if target_pointer and not source_pointer:
            if cexpr.const_value(value) != 0:
                raise UnsupportedFeature(self.st.coord(node), "integer converted to a pointer")
            assert isinstance(ty, IntType)
            return Const(0, ty)
        return cexpr.convert(value, ty)

    def effect_error(self, node: Any, what: str) -> Exception:
        coord = self.st.coord(node)
        if self.effects_error is not None:
            return self.effects_error(coord, what)
        return FrontendError(coord, f"{what} is not allowed here")

    def check_effects_allowed(self, node: Any, what: str) -> None:
        if self.effects_error is not None:
            raise self.effects_error(self.st.coord(node), what)

    def unsupported_node(self, node: Any) -> Exception:
        names = {
            c_ast.StructRef: "struct",
            c_ast.CompoundLiteral: "compound literal",
            c_ast.InitList: "initializer list in an expression",
            c_ast.GenericSelection: "_Generic",
            c_ast.Compound: "statement expression used as a value",
        }
        feature = names.get(type(node), f"expression {type(node).__name__}")
        return UnsupportedFeature(self.st.coord(node), feature)

    # ------------------------------------------------------------------ helpers

    def protect(self, e: Expr, out: list[Stmt], pos: int) -> Expr:
        """Keep `e` (computed before out[pos:]) from seeing writes made by out[pos:]."""
        if len(out) == pos or isinstance(e, Const) or not free_vars(e) & assigned(out[pos:]):
            return e
        t = self.st.temp(e.type)
        out.insert(pos, Assign(t.name, e))
        return t

    def record(self, e: Expr, node: Any) -> Expr:
        if cexpr.may_overflow(e):
            self.st.record_overflow(self.st.coord(node))
        return e

    def binary(self, op: str, a: Expr, b: Expr, node: Any) -> Expr:
        memory = self.st.memory
        if memory.is_pointer(a.type) or memory.is_pointer(b.type):
            return self._pointer_binary(op, a, b, node)
        try:
            return self.record(cexpr.binary(self.st.ct, op, a, b), node)
        except cexpr.NotScalar:
            raise UnsupportedFeature(self.st.coord(node), "pointer (array used as a value)") from None
        except ValueError as exc:  # a float operand of %, <<, &, ... (C rejects it)
            raise FrontendError(self.st.coord(node), str(exc)) from None

    def _pointer_binary(self, op: str, a: Expr, b: Expr, node: Any) -> Expr:
        """`==`/`!=` between pointers or with the null constant; nothing else is modelled."""
        if op not in ("==", "!="):
            feature = "pointer comparison" if op in ("<", "<=", ">", ">=") else "pointer arithmetic"
            raise UnsupportedFeature(self.st.coord(node), feature, op)
        ty = a.type if self.st.memory.is_pointer(a.type) else b.type
        assert isinstance(ty, IntType)
        return cexpr.binary(self.st.ct, op, self.convert(a, ty, node), self.convert(b, ty, node))

    def truth(self, e: Expr) -> Expr:
        """`e != 0` as an int 0/1."""
        return e if cexpr.is_boolean(e) else cexpr.binary(self.st.ct, "!=", e, Const(0, INT))

    # ------------------------------------------------------------------ leaves

    def _id(self, node: c_ast.ID, out: list[Stmt]) -> Expr:
        binding = self.st.scopes.lookup(node.name)
        if isinstance(binding, VarBinding):
            if isinstance(binding.type, ArrayType):
                raise UnsupportedFeature(self.st.coord(node), "pointer (array used as a value)", node.name)
            return Var(binding.name, binding.type)
        if isinstance(binding, ConstBinding):
            return Const(binding.value, INT)
        if isinstance(binding, PoisonBinding):
            raise UnsupportedFeature(self.st.coord(node), binding.error.feature, f"variable {node.name}")
        if isinstance(binding, TypedefBinding):
            raise FrontendError(self.st.coord(node), f"type name '{node.name}' used as a value")
        if isinstance(binding, RefBinding):
            raise UnsupportedFeature(self.st.coord(node), "pointer to a variable used as a value", node.name)
        if node.name in ("__func__", "__FUNCTION__", "__PRETTY_FUNCTION__"):
            raise UnsupportedFeature(self.st.coord(node), "string literal", node.name)
        if node.name == "NULL":  # used without its header, as in SV-COMP files stripped of includes
            return self.st.memory.null()
        raise self.undeclared(node)

    def undeclared(self, node: c_ast.ID) -> Exception:
        return FrontendError(self.st.coord(node), f"undeclared identifier '{node.name}'")

    def _constant(self, node: c_ast.Constant, out: list[Stmt]) -> Expr:
        coord = self.st.coord(node)
        text: str = node.value
        if node.type == "string":
            raise UnsupportedFeature(coord, "string literal")
        if node.type in ("float", "double", "long double"):
            return self._float_constant(text, coord)
        try:
            if node.type == "char":
                if not text.startswith("'"):
                    raise UnsupportedFeature(coord, "wide character constant", text)
                return cexpr.char_literal(text)
            return cexpr.int_literal(self.st.ct, text)
        except ValueError as exc:
            raise UnsupportedFeature(coord, "constant", str(exc)) from None

    def _float_constant(self, text: str, coord: Coord | None) -> Expr:
        try:
            value, ty = fpsem.literal(text)
        except ValueError as exc:
            feature = "long double" if "long double" in str(exc) else "floating constant"
            raise UnsupportedFeature(coord, feature, text) from None
        return FloatConst(value, ty)

    # ------------------------------------------------------------------ operators

    def _unary(self, node: c_ast.UnaryOp, out: list[Stmt]) -> Expr:
        op = node.op
        if op in ("++", "--", "p++", "p--"):
            result = self._incdec(node, out, True)
            assert result is not None
            return result
        if op in ("-", "+", "~", "!"):
            operand = self.value(node.expr, out)
            if op != "!" and self.st.memory.is_pointer(operand.type):
                raise UnsupportedFeature(self.st.coord(node), "pointer arithmetic", op)
            try:
                return self.record(cexpr.unary(self.st.ct, op, operand), node)
            except ValueError as exc:  # `~` on a float
                raise FrontendError(self.st.coord(node), str(exc)) from None
        if op == "*":
            return self._deref(node, out).read()
        if op == "sizeof":
            vla = self.vla_size(node.expr)
            if vla is not None:
                return vla
            return Const(self.types.size_of(self._type_of(node.expr), node), self.st.ct.size_t)
        features = {"&": "address-of (&)", "_Alignof": "_Alignof"}
        raise UnsupportedFeature(self.st.coord(node), features.get(op, f"operator {op}"))

    def _type_of(self, node: Any) -> CType:
        """The type of a sizeof operand (a type name, or an expression that is not evaluated)."""
        if isinstance(node, c_ast.Typename):
            return self.types.resolve(node)
        row = self.row_type(node)
        if row is not None:
            return row
        if isinstance(node, c_ast.ID):
            binding = self.st.scopes.lookup(node.name)
            if isinstance(binding, VarBinding):
                return self.st.memory.declared_type(binding.name, binding.type)
        if isinstance(node, c_ast.UnaryOp) and node.op == "*":
            scratch_ptr: list[Stmt] = []
            with self.no_effects(
                lambda c, what: UnsupportedFeature(c, "sizeof of an expression with " + what)
            ):
                pointer = self.value(node.expr, scratch_ptr)
            info = self._struct_target(pointer, node)
            return StructType(info)
        scratch: list[Stmt] = []
        with self.no_effects(lambda c, what: UnsupportedFeature(c, "sizeof of an expression with " + what)):
            return self.value(node, scratch).type

    def _binary(self, node: c_ast.BinaryOp, out: list[Stmt]) -> Expr:
        # Left-deep chains (a || b || c ...) are walked iteratively, not recursively, and runs of
        # one logical operator become balanced trees (same meaning: && and || are associative).
        spine: list[c_ast.BinaryOp] = []
        n: Any = node
        while isinstance(n, c_ast.BinaryOp):
            spine.append(n)
            n = n.left
        acc = self.value(n, out)
        run: list[Expr] = []
        run_op = ""
        for b in reversed(spine):
            if b.op in ("&&", "||"):
                sub: list[Stmt] = []
                right = self.value(b.right, sub)
                if not sub and b.op == run_op:
                    run.append(right)
                    continue
                acc = self._balanced(run_op, [acc, *run])
                run, run_op = ([right], b.op) if not sub else ([], "")
                if sub:
                    acc = self._logic(b, acc, right, sub, out)
            else:
                acc = self._balanced(run_op, [acc, *run])
                run, run_op = [], ""
                acc = self._arith(b, acc, out)
        return self._balanced(run_op, [acc, *run])

    def _balanced(self, op: str, items: list[Expr]) -> Expr:
        if len(items) == 1:
            return items[0]
        mid = len(items) // 2
        return cexpr.binary(self.st.ct, op, self._balanced(op, items[:mid]), self._balanced(op, items[mid:]))

    def _arith(self, node: c_ast.BinaryOp, left: Expr, out: list[Stmt]) -> Expr:
        pos = len(out)
        right = self.value(node.right, out)
        left = self.protect(left, out, pos)
        return self.binary(node.op, left, right, node)

    def _logic(self, node: c_ast.BinaryOp, left: Expr, right: Expr, sub: list[Stmt], out: list[Stmt]) -> Expr:
        """`left op right` where evaluating `right` has side effects `sub` (run only when needed)."""
        t = self.st.temp(INT)
        out.append(Assign(t.name, self.truth(left), self.st.coord(node)))
        inner = (*sub, Assign(t.name, self.truth(right), self.st.coord(node)))
        cond: Expr = t if node.op == "&&" else cexpr.negate(t)
        out.append(If(cond, inner, (), self.st.coord(node)))
        return t

    def _logic_effect(self, node: c_ast.BinaryOp, out: list[Stmt]) -> None:
        left = self.value(node.left, out)
        sub: list[Stmt] = []
        self.effect(node.right, sub)
        if sub:
            cond = cexpr.truth(left) if node.op == "&&" else cexpr.negate(left)
            out.append(If(cond, tuple(sub), (), self.st.coord(node)))

    def _ternary(self, node: c_ast.TernaryOp, out: list[Stmt]) -> Expr:
        cond = cexpr.truth(self.value(node.cond, out))
        s1: list[Stmt] = []
        s2: list[Stmt] = []
        a = self.value(node.iftrue, s1)
        b = self.value(node.iffalse, s2)
        try:
            floating = cexpr.is_float(a) or cexpr.is_float(b)  # no `Ite` of floats: an `If` below
            if not s1 and not s2 and not floating:
                return cexpr.conditional(self.st.ct, cond, a, b)
            ty = self.st.ct.arithmetic(cexpr.scalar_type(a), cexpr.scalar_type(b))
        except cexpr.NotScalar:
            raise UnsupportedFeature(self.st.coord(node), "pointer (array used as a value)") from None
        t = self.st.temp(ty)
        then = (*s1, Assign(t.name, cexpr.convert(a, ty)))
        orelse = (*s2, Assign(t.name, cexpr.convert(b, ty)))
        out.append(If(cond, then, orelse, self.st.coord(node)))
        return t

    def _ternary_effect(self, node: c_ast.TernaryOp, out: list[Stmt]) -> None:
        cond = cexpr.truth(self.value(node.cond, out))
        s1: list[Stmt] = []
        s2: list[Stmt] = []
        self.effect(node.iftrue, s1)
        self.effect(node.iffalse, s2)
        if s1 or s2:
            out.append(If(cond, tuple(s1), tuple(s2), self.st.coord(node)))

    def _cast(self, node: c_ast.Cast, out: list[Stmt]) -> Expr:
        ty = self.types.resolve(node.to_type)
        if isinstance(ty, BlockType):
            raise UnsupportedFeature(self.st.coord(node), "pointer to an integer used as a value", ty.name)
        if not isinstance(ty, (IntType, FloatType)):
            raise FrontendError(self.st.coord(node), f"cast to {ty.name} used as a value")
        return self.convert(self.value(node.expr, out), ty, node)

    def _comma(self, node: c_ast.ExprList, out: list[Stmt]) -> Expr:
        for item in node.exprs[:-1]:
            self.effect(item, out)
        return self.value(node.exprs[-1], out)

    def _call_value(self, node: c_ast.FuncCall, out: list[Stmt]) -> Expr:
        result = self.call(node, out, True)
        if result is None:
            raise FrontendError(self.st.coord(node), "the value of a void function is used")
        return result

    # ------------------------------------------------------------------ assignments

    def lvalue(self, node: Any, out: list[Stmt]) -> LValue:
        if isinstance(node, c_ast.ID):
            binding = self.st.scopes.lookup(node.name)
            if isinstance(binding, VarBinding) and isinstance(binding.type, (IntType, FloatType)):
                return LValue(Var(binding.name, binding.type))
            if isinstance(binding, VarBinding):
                raise FrontendError(self.st.coord(node), f"assignment to array '{node.name}'")
            if binding is None:
                raise self.undeclared(node)
            self._id(node, out)
            raise FrontendError(self.st.coord(node), f"'{node.name}' is not assignable")
        if isinstance(node, c_ast.ArrayRef):
            return self._element(node, out)
        if isinstance(node, c_ast.UnaryOp) and node.op == "*":
            return self._deref(node, out)
        if isinstance(node, c_ast.StructRef):
            return self._field(node, out)
        raise FrontendError(self.st.coord(node), "expression is not assignable")

    # ------------------------------------------------------------------ the heap (`memory`)

    def _field(self, node: c_ast.StructRef, out: list[Stmt]) -> LValue:
        """`p->f`, `(*p).f`: element p of the field's array, p assumed an allocated object."""
        base = node.name
        if node.type == ".":
            if not (isinstance(base, c_ast.UnaryOp) and base.op == "*"):
                raise UnsupportedFeature(self.st.coord(node), "struct")
            base = base.expr
        pointer = self.value(base, out)
        info = self._struct_target(pointer, node)
        name = node.field.name
        if name in info.unsupported:
            raise UnsupportedFeature(self.st.coord(node), info.unsupported[name], f"field {name}")
        if info.fields is None or name not in info.fields:
            raise FrontendError(self.st.coord(node), f"struct {info.tag} has no field '{name}'")
        array = self.st.memory.field_array(self.st, info, name)
        out.append(Assume(self.st.memory.allocated(self.st, pointer), self.st.coord(node)))
        return LValue(array, pointer)

    def _struct_target(self, pointer: Expr, node: Any) -> StructInfo:
        memory = self.st.memory
        info = memory.target(pointer.type) if isinstance(pointer.type, IntType) else None
        if info is None:
            what = "void *" if memory.is_pointer(pointer.type) else pointer.type.name
            raise FrontendError(self.st.coord(node), f"member access through {what}")
        return info

    def _deref(self, node: c_ast.UnaryOp, out: list[Stmt]) -> LValue:
        """`*a` and `*(a + i)` for a block `a` (`a[0]`, `a[i]`); a struct is no value here."""
        target = node.expr
        ref = self.st.scopes.lookup(target.name) if isinstance(target, c_ast.ID) else None
        if isinstance(ref, RefBinding):  # a parameter given `&x`: `*p` is x
            return LValue(Var(ref.name, ref.type))
        if isinstance(target, c_ast.BinaryOp) and target.op == "+":
            if self._is_array(target.left):
                return self._element(c_ast.ArrayRef(target.left, target.right, node.coord), out)
            if self._is_array(target.right):
                return self._element(c_ast.ArrayRef(target.right, target.left, node.coord), out)
        if self._is_array(target):
            return self._element(c_ast.ArrayRef(target, c_ast.Constant("int", "0"), node.coord), out)
        pointer = self.value(target, out)
        if self.st.memory.is_pointer(pointer.type):
            raise UnsupportedFeature(self.st.coord(node), "struct", "a struct used as a value")
        raise UnsupportedFeature(self.st.coord(node), "pointer dereference")

    def _element(self, node: c_ast.ArrayRef, out: list[Stmt]) -> LValue:
        shaped = self._shaped_element(node, out)
        if shaped is not None:
            return shaped
        array, index_node = node.name, node.subscript
        if not self._is_array(array) and self._is_array(index_node):
            array, index_node = index_node, array
        if not self._is_array(array):
            self.value(array, out)  # reports what the base is (string, pointer variable, ...)
            raise UnsupportedFeature(self.st.coord(node), "pointer (subscript of a non-array)")
        binding = self.st.scopes.lookup(array.name)
        assert isinstance(binding, VarBinding)
        index = self.value(index_node, out)
        if not isinstance(index.type, IntType) or self.st.memory.is_pointer(index.type):
            raise FrontendError(self.st.coord(node), "array index is not an integer")
        index = cexpr.convert(index, self.st.ct.promote(index.type))
        length = self.st.memory.blocks.get(binding.name)
        if length is not None:
            inside = self.binary(
                "&&",
                self.binary(">=", index, Const(0, INT), node),
                self.binary("<", index, length, node),
                node,
            )
            out.append(Assume(inside, self.st.coord(node)))
        return LValue(Var(binding.name, binding.type), index)

    # ------------------------------------------------------------------ multi-dimensional arrays

    def shape(self, node: Any) -> tuple[Var, tuple[int, ...]] | None:
        """The flat variable and the dimensions of the multi-dimensional array `node` names, or None."""
        if not isinstance(node, c_ast.ID):
            return None
        binding = self.st.scopes.lookup(node.name)
        if isinstance(binding, VarBinding) and binding.name in self.st.shapes:
            return Var(binding.name, binding.type), self.st.shapes[binding.name]
        return None

    def _subscripts(self, node: Any) -> tuple[Any, list[Any]]:
        """The base of a chain of subscripts `b[i][j]...` and the subscripts, left to right."""
        subs: list[Any] = []
        while isinstance(node, c_ast.ArrayRef):
            subs.append(node.subscript)
            node = node.name
        return node, subs[::-1]

    def row_type(self, node: Any) -> CType | None:
        """The type of `a[i]...` with fewer subscripts than the multi-dimensional `a` has dimensions
        (a sizeof operand, not evaluated), or None."""
        base, subs = self._subscripts(node)
        shaped = self.shape(base)
        if shaped is None or not subs or len(subs) >= len(shaped[1]):
            return None
        var, dims = shaped
        assert isinstance(var.type, ArrayType)
        rest = dims[len(subs) :]
        return ArrayType(var.type.elem, rest[0]) if len(rest) == 1 else MultiArrayType(var.type.elem, rest)

    def _shaped_element(self, node: c_ast.ArrayRef, out: list[Stmt]) -> LValue | None:
        """`a[i][j]...` for a multi-dimensional array `a` (None for any other subscript)."""
        base, subs = self._subscripts(node)
        shaped = self.shape(base)
        if shaped is None:
            return None
        var, dims = shaped
        if len(subs) < len(dims):
            detail = f"{base.name}: a row of a multi-dimensional array"
            raise UnsupportedFeature(self.st.coord(node), "pointer (array used as a value)", detail)
        if len(subs) > len(dims):
            raise FrontendError(self.st.coord(node), "subscripted value is neither array nor pointer")
        indices: list[Expr] = []
        for sub in subs:
            pos = len(out)
            index = self.value(sub, out)
            if not isinstance(index.type, IntType) or self.st.memory.is_pointer(index.type):
                raise FrontendError(self.st.coord(sub), "array index is not an integer")
            if index.type.bits > 64:
                raise UnsupportedFeature(self.st.coord(sub), "array index wider than 64 bits")
            indices = [self.protect(x, out, pos) for x in indices]
            indices.append(index)
        return LValue(var, self.flat_index(indices, dims))

    def flat_index(self, indices: list[Expr], dims: tuple[int, ...]) -> Expr:
        """The row-major index of `a[i][j]...` in the flat array (as `long long`).

        An index outside its own dimension is undefined behaviour even where the flat index is
        inside the array (`a[0][5]` of `int a[3][4]`, which gcc reads as `a[1][1]`). The index is
        then `flat / 0`: undefined behaviour that the interpreter and bounded model checking
        report as they report an array index out of bounds, and an unknown cell to a proof (the
        solver's division by zero is unspecified), so no proof can rely on which cell it is."""
        wide = self.st.ct.named("long long")
        flat: Expr | None = None
        inside: list[Expr] = []
        outside = False
        for index, dim in zip(indices, dims, strict=True):
            k = cexpr.const_value(index)
            i = cexpr.convert(index, wide)
            if k is None:
                low = Binary(">=", i, Const(0, wide), INT)
                inside.append(Binary("&&", low, Binary("<", i, Const(dim, wide), INT), INT))
            outside = outside or (k is not None and not 0 <= k < dim)
            scaled = None if flat is None else cexpr.fold(Binary("*", flat, Const(dim, wide), wide))
            flat = i if scaled is None else cexpr.fold(Binary("+", scaled, i, wide))
        assert flat is not None
        undefined = Binary("/", flat, Const(0, wide), wide)
        if outside or not inside:
            return undefined if outside else flat
        cond = inside[0]
        for more in inside[1:]:
            cond = Binary("&&", cond, more, INT)
        return Ite(cond, flat, undefined, wide)

    def vla_size(self, node: Any) -> Expr | None:
        """`sizeof a` for a variable-length array `a` (`memory`): `a.len * sizeof(T)`; else None."""
        binding = self.st.scopes.lookup(node.name) if isinstance(node, c_ast.ID) else None
        if type(binding) is not VarBinding or binding.name not in self.st.memory.vlas:
            return None  # (a pointer parameter bound to the array is a `BlockParam`: a pointer)
        assert isinstance(binding.type, ArrayType)
        length = self.st.memory.blocks[binding.name]
        size_t = self.st.ct.size_t
        elem = Const(self.types.size_of(binding.type.elem, node), size_t)
        return cexpr.binary(self.st.ct, "*", cexpr.convert(length, size_t), elem)

    def block_variable(self, node: Any) -> Var | None:
        """The block variable `node` names (`memory`), or None."""
        if not isinstance(node, c_ast.ID):
            return None
        binding = self.st.scopes.lookup(node.name)
        if isinstance(binding, VarBinding) and binding.name in self.st.memory.blocks:
            return Var(binding.name, binding.type)
        return None

    def allocate_block(self, block: Var, node: Any, out: list[Stmt], coord: Coord | None) -> None:
        """`block = node` where `node` must allocate (calls know how: `calls`)."""
        raise UnsupportedFeature(coord, "pointer to an integer not from malloc")

    def _is_array(self, node: Any) -> bool:
        if not isinstance(node, c_ast.ID):
            return False
        binding = self.st.scopes.lookup(node.name)
        return isinstance(binding, VarBinding) and isinstance(binding.type, ArrayType)

    def store(self, lv: LValue, value: Expr, out: list[Stmt], node: Any) -> None:
        coord = self.st.coord(node)
        try:
            cexpr.scalar_type(value)
            if lv.index is None:
                out.append(Assign(lv.var.name, cexpr.convert(value, lv.type), coord))
            else:
                out.append(Assign(lv.var.name, cexpr.store(lv.var, lv.index, value), coord))
        except cexpr.NotScalar:
            raise UnsupportedFeature(coord, "pointer (array used as a value)") from None

    def _assign_value(self, node: c_ast.Assignment, out: list[Stmt]) -> Expr:
        result = self._assign(node, out, True)
        assert result is not None
        return result

    def _assign(self, node: c_ast.Assignment, out: list[Stmt], want: bool) -> Expr | None:
        self.check_effects_allowed(node, "an assignment")
        block = self.block_variable(node.lvalue)
        if block is not None and block.name in self.st.memory.vlas:
            raise FrontendError(self.st.coord(node), f"assignment to array '{node.lvalue.name}'")
        if block is not None:
            if isinstance(self.st.scopes.lookup(node.lvalue.name), BlockParam):
                what = node.lvalue.name
                raise UnsupportedFeature(self.st.coord(node), "assignment to a pointer parameter", what)
            if node.op != "=" or want:
                raise UnsupportedFeature(
                    self.st.coord(node),
                    "pointer arithmetic" if node.op != "=" else "pointer to an integer used as a value",
                )
            self.allocate_block(block, node.rvalue, out, self.st.coord(node))
            return None
        lv = self.lvalue(node.lvalue, out)
        pos = len(out)
        rhs = self.converted(node.rvalue, lv.type, out) if node.op == "=" else self.value(node.rvalue, out)
        if lv.index is not None:
            lv = LValue(lv.var, self.protect(lv.index, out, pos))
        new = rhs if node.op == "=" else self.binary(node.op[:-1], lv.read(), rhs, node)
        self.store(lv, new, out, node)
        return lv.read() if want else None

    def _incdec(self, node: c_ast.UnaryOp, out: list[Stmt], want: bool) -> Expr | None:
        self.check_effects_allowed(node, f"{node.op.lstrip('p')}")
        lv = self.lvalue(node.expr, out)
        base = lv.read()
        postfix = node.op.startswith("p")
        if postfix and want:
            saved = self.st.temp(lv.type)
            out.append(Assign(saved.name, base, self.st.coord(node)))
            base = saved
        new = self.binary("+" if "++" in node.op else "-", base, Const(1, INT), node)
        self.store(lv, new, out, node)
        if not want:
            return None
        return base if postfix else lv.read()
