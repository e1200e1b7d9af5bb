"""C statements and declarations to IR statements (loops, switch, blocks, initialisers)."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from pycparser import c_ast
from quokka.verifier import ir
from quokka.verifier.ir import cexpr
from quokka.verifier.ir.definedness import ORIGIN as UNINITIALISED

from ..errors import Coord, FrontendError, OutOfTime, UnsupportedFeature
from .calls import CallLowerer
from .ctype import VOID, CType, MultiArrayType, Signature, StructType, VlaType
from .gotos import GotoContext, GotoPlan, plan_gotos
from .memcalls import MAX_ELEMENT_STORES  # larger arrays: one reset, then the listed elements
from .memory import BlockType
from .state import (
    Arguments,
    BlockParam,
    LowerState,
    PoisonBinding,
    RefBinding,
    TypedefBinding,
    VarBinding,
)
from .switch import find_node, lower_switch

MAX_STATEMENTS = 300_000
DEADLINE_STATEMENTS = 64  # the lowerer looks at the clock once per this many statements
Declared = ir.IntType | ir.FloatType | ir.ArrayType | BlockType | VlaType | MultiArrayType


def stores(array: ir.Expr, values: dict[int, ir.Expr]) -> ir.Expr:
    """`array` with element i set to values[i] (in index order)."""
    for i in sorted(values):
        array = cexpr.store(array, ir.Const(i, ir.INT), values[i])
    return array


def storage_type(ty: ir.IntType | ir.FloatType | ir.ArrayType | MultiArrayType) -> ir.Type:
    """The IR type of a variable declared `ty` (a multi-dimensional array is stored flattened)."""
    return ty.flat if isinstance(ty, MultiArrayType) else ty


def has_continue(block: list[ir.Stmt]) -> bool:
    """A `continue` in `block` that belongs to the loop around it (not to a nested loop)."""
    stack: list[ir.Stmt] = list(block)
    while stack:
        s = stack.pop()
        if isinstance(s, ir.Continue):
            return True
        if not isinstance(s, (ir.Loop, ir.Scope)):
            for sub in ir.stmt_children(s):
                stack.extend(sub)
    return False


def _is_zero(node: Any) -> bool:
    return isinstance(node, c_ast.Constant) and node.type == "int" and node.value in ("0", "0u", "0U")


def runs_once(node: c_ast.DoWhile) -> bool:
    """`do { ... } while (0)` without a `break` or `continue` of its own: its body, once."""
    return _is_zero(node.cond) and not _jumps_out(node.stmt)


def _jumps_out(node: Any) -> bool:
    """A `break` or `continue` that would leave a loop made of `node` (not one of a nested loop/switch)."""
    return find_node(node, lambda n: isinstance(n, (c_ast.Break, c_ast.Continue)), _same_loop) is not None


def _same_loop(node: Any) -> Iterable[Any]:
    """The children of `node` where a `break` or `continue` would still be the enclosing loop's."""
    if isinstance(node, c_ast.Switch):
        return (c for _, c in node.stmt.children() if not isinstance(c, c_ast.Break))
    if isinstance(node, (c_ast.While, c_ast.DoWhile, c_ast.For)):
        return ()
    return (child for _, child in node.children())


def _inert(init: Any) -> bool:
    """Whether an initialiser has no effect to keep: none, a constant, or a cast of one (`NULL`)."""
    while isinstance(init, c_ast.Cast):
        init = init.expr
    return init is None or isinstance(init, c_ast.Constant)


class StmtLowerer(CallLowerer):
    """Lowers function bodies; one instance per lowering run."""

    def __init__(
        self, st: LowerState, functions: dict[str, c_ast.FuncDef], prototypes: dict[str, Any]
    ) -> None:
        super().__init__(st, functions, prototypes)
        self.ret_stack: list[tuple[ir.Var | None, CType]] = []
        self._goto_plans: dict[int, GotoPlan] = {}
        self._stmt_table: dict[type, Any] = {
            c_ast.Compound: lambda n, out: out.extend(self.block(n)),
            c_ast.Decl: self.declaration,
            c_ast.DeclList: self._decl_list,
            c_ast.Typedef: lambda n, out: self.typedef(n),
            c_ast.If: self._if,
            c_ast.While: self._while,
            c_ast.DoWhile: self._do_while,
            c_ast.For: self._for,
            c_ast.Switch: self._switch,
            c_ast.Break: self._break,
            c_ast.Continue: self._continue,
            c_ast.Return: self._return,
            c_ast.Label: self._label,
            c_ast.Goto: self._goto,
            c_ast.EmptyStatement: lambda n, out: None,
            c_ast.Pragma: lambda n, out: None,
            c_ast.StaticAssert: lambda n, out: None,
            c_ast.Case: lambda n, out: self._misplaced(n, "case label outside a switch"),
            c_ast.Default: lambda n, out: self._misplaced(n, "default label outside a switch"),
            c_ast.FuncDef: lambda n, out: self._unsupported(n, "nested function definition"),
        }

    def _unsupported(self, node: Any, feature: str) -> None:
        raise UnsupportedFeature(self.st.coord(node), feature)

    def _misplaced(self, node: Any, what: str) -> None:
        raise FrontendError(self.st.coord(node), what)

    # ------------------------------------------------------------------ functions

    def function_body(
        self, fdef: c_ast.FuncDef, sig: Signature, args: Arguments, ret: ir.Var | None, coord: Any
    ) -> list[ir.Stmt]:
        st = self.st
        saved, depth = (st.scopes, st.breakables, st.gotos), len(st.loop_stack)
        st.scopes, st.breakables = st.scopes.function_scope(), []
        st.call_stack.append(fdef.decl.name)
        self.ret_stack.append((ret, sig.ret))
        try:
            st.gotos = self.goto_context(fdef)
            body: list[ir.Stmt] = []
            for (pname, pty), value in zip(sig.params or (), args, strict=False):
                if isinstance(value, (BlockParam, RefBinding)):  # a pointer parameter, bound (`calls`)
                    if pname:
                        st.scopes.define(pname, value)
                    continue
                assert isinstance(pty, (ir.IntType, ir.FloatType))
                var = st.declare(pname or "arg", pty, "param", coord, plain=False)
                if pname:
                    st.scopes.define(pname, VarBinding(var.name, pty))
                body.append(ir.Assign(var.name, cexpr.convert(value, pty), coord))
            body += self.stmts(list(fdef.body.block_items or []))
            return body
        finally:
            st.scopes, st.breakables, st.gotos = saved
            del st.loop_stack[depth:]  # the loops of goto still open
            st.call_stack.pop()
            self.ret_stack.pop()

    def goto_context(self, fdef: c_ast.FuncDef) -> GotoContext:
        """A fresh context for one instance of the function `fdef` (its body is checked once)."""
        plan = self._goto_plans.get(id(fdef))
        if plan is None:
            plan = self._goto_plans[id(fdef)] = plan_gotos(fdef.body, self.st.coord, runs_once)
        return GotoContext(plan)

    # ------------------------------------------------------------------ blocks

    def statement_expression(self, node: c_ast.Compound, out: list[ir.Stmt]) -> None:
        self.check_effects_allowed(node, "a statement expression")
        out.extend(self.block(node))

    def block(self, node: Any) -> list[ir.Stmt]:
        """A statement as a block with its own scope."""
        items = list(node.block_items or []) if isinstance(node, c_ast.Compound) else [node]
        self.st.scopes.push()
        try:
            return self.stmts(items)
        finally:
            self.st.scopes.pop()

    def stmts(self, items: list[Any]) -> list[ir.Stmt]:
        """A statement list; after a `break` out of an enclosing switch the rest is skipped."""
        out: list[ir.Stmt] = []
        ctx = self.st.breakables[-1] if self.st.breakables else None
        for k, item in enumerate(items):
            before = ctx.uses if ctx else 0
            self.stmt(item, out)
            if ctx is not None and ctx.uses > before and k + 1 < len(items):
                rest = self.stmts(items[k + 1 :])
                if rest and ctx.flag is not None:
                    out.append(ir.If(cexpr.negate(ir.Var(ctx.flag, ir.INT)), tuple(rest), ()))
                return out
        return out

    def stmt(self, node: Any, out: list[ir.Stmt]) -> None:
        st = self.st
        st.size += 1
        if st.size > MAX_STATEMENTS:
            raise UnsupportedFeature(st.coord(node), "program too large after inlining")
        if st.size % DEADLINE_STATEMENTS == 0:
            OutOfTime.check(st.deadline, "lowering")
        if len(st.call_stack) == 1 and not isinstance(node, (c_ast.Compound, c_ast.Label)):
            st.site = st.coord(node)
        handler = self._stmt_table.get(type(node))
        if handler is not None:
            handler(node, out)
        else:
            self.effect(node, out)

    # ------------------------------------------------------------------ declarations

    def typedef(self, node: c_ast.Typedef) -> None:
        self.st.scopes.define(node.name, TypedefBinding(node.type))
        with contextlib.suppress(UnsupportedFeature):
            self.types.resolve(node.type)  # defines the constants of an enum declared here

    def _decl_list(self, node: c_ast.DeclList, out: list[ir.Stmt]) -> None:
        for d in node.decls:
            self.declaration(d, out)

    def declaration(self, node: c_ast.Decl, out: list[ir.Stmt]) -> None:
        if isinstance(node.type, c_ast.FuncDecl):
            if node.name not in self.functions:
                self.prototypes[node.name] = node.type
            return
        if node.name is None:
            with contextlib.suppress(UnsupportedFeature):
                self.types.resolve(node.type)  # defines enumeration constants
            return
        storage = node.storage or []
        if "extern" in storage:
            self._extern_local(node)
            return
        try:
            ty = self.complete(self.types.resolve(node.type), node.init, node)
        except UnsupportedFeature as exc:
            if not _inert(node.init):
                raise
            self.st.scopes.define(node.name, PoisonBinding(exc))  # unsupported only if it is used
            return
        if isinstance(ty, BlockType):
            self._block_local(node, ty, out)
            return
        if isinstance(ty, VlaType):
            self._vla_local(node, ty, out)
            return
        if "static" in storage:
            self._static_local(node, ty)
            return
        coord = self.st.coord(node)
        plain = len(self.st.call_stack) == 1
        var = self.declare_var(node.name, ty, "local", coord, plain, self._skipped_name(node))
        self.initialize(var, node.init, out, coord)

    def declare_var(
        self,
        c_name: str,
        ty: ir.IntType | ir.FloatType | ir.ArrayType | MultiArrayType,
        kind: str,
        coord: Coord | None,
        plain: bool = True,
        name: str | None = None,
    ) -> ir.Var:
        """A variable and its binding; a multi-dimensional array's shape is kept (`LowerState.shapes`)."""
        st = self.st
        var = st.declare(c_name, storage_type(ty), kind, coord, plain=plain, name=name)
        st.scopes.define(c_name, VarBinding(var.name, var.type))
        if isinstance(ty, MultiArrayType):
            st.shapes[var.name] = tuple(d or 0 for d in ty.dims)
        return var

    def complete(self, ty: CType, init: Any, node: Any) -> Declared:
        """The declared type, with the size of `int a[] = {...}` taken from the initialiser."""
        if isinstance(ty, StructType):
            raise UnsupportedFeature(self.st.coord(node), "struct", f"variable of type {ty.name}")
        if isinstance(ty, (BlockType, ir.FloatType, VlaType)):
            return ty
        if isinstance(ty, MultiArrayType):
            return self._complete_multi(ty, init, node)
        if ty == VOID or not isinstance(ty, (ir.IntType, ir.ArrayType)):
            raise FrontendError(self.st.coord(node), "variable of type void")
        if isinstance(ty, ir.ArrayType) and ty.size is None:
            if not isinstance(init, c_ast.InitList):
                raise FrontendError(self.st.coord(node), "array without a size")
            indices = self.array_values(ty, init, []).keys()
            return ir.ArrayType(ty.elem, max(indices, default=-1) + 1)
        return ty

    def _complete_multi(self, ty: MultiArrayType, init: Any, node: Any) -> MultiArrayType:
        if ty.dims[0] is not None:
            return ty
        if not isinstance(init, c_ast.InitList):
            raise FrontendError(self.st.coord(node), "array without a size")
        rows = self.multi_values(ty.dims, init, [])[1]
        return MultiArrayType(ty.elem, (rows, *ty.dims[1:]))

    def _vla_local(self, node: c_ast.Decl, ty: VlaType, out: list[ir.Stmt]) -> None:
        """`T a[n]`: a block (`memory`) of n elements, n evaluated now and assumed positive."""
        coord = self.st.coord(node)
        if node.init is not None:
            raise FrontendError(coord, "variable-length array may not be initialized")
        if "static" in (node.storage or []):
            raise FrontendError(coord, "static variable-length array")
        pos = len(out)
        size = self.value(ty.dim, out)
        if not isinstance(size.type, ir.IntType) or self.st.memory.is_pointer(size.type):
            raise FrontendError(self.st.coord(ty.dim), "size of an array is not an integer")
        size = self.protect(size, out, pos)
        var = self.declare_block(node.name, BlockType(ty.elem), "local", coord, self._skipped_name(node))
        self.st.memory.vlas.add(var.name)
        length = self.st.memory.blocks[var.name]
        assert isinstance(length.type, ir.IntType)
        out.append(ir.Assume(self.binary(">", size, ir.Const(0, ir.INT), node), coord))
        out.append(ir.Havoc(var.name, coord, UNINITIALISED))
        out.append(ir.Assign(length.name, cexpr.convert(size, length.type), coord))

    def _block_local(self, node: c_ast.Decl, ty: BlockType, out: list[ir.Stmt]) -> None:
        coord = self.st.coord(node)
        if "static" in (node.storage or []):
            raise UnsupportedFeature(coord, "static pointer to an integer", node.name)
        var = self.declare_block(node.name, ty, "local", coord, self._skipped_name(node))
        if node.init is None:
            length = self.st.memory.blocks[var.name]
            out += [ir.Havoc(var.name, coord, UNINITIALISED), ir.Havoc(length.name, coord, UNINITIALISED)]
        else:
            self.allocate_block(var, node.init, out, coord)

    def declare_block(
        self, c_name: str, ty: BlockType, kind: str, coord: Coord | None, name: str | None = None
    ) -> ir.Var:
        """A block variable (`memory`): the array, its length, its binding."""
        st = self.st
        var = st.declare(
            c_name, ir.ArrayType(ty.elem, None), kind, coord, plain=len(st.call_stack) <= 1, name=name
        )
        st.memory.blocks[var.name] = st.temp(st.ct.size_t, f"{var.name}.len")
        st.scopes.define(c_name, VarBinding(var.name, var.type))
        return var

    def _extern_local(self, node: c_ast.Decl) -> None:
        binding = self.st.scopes.frames[0].names.get(node.name)
        if binding is None:
            raise UnsupportedFeature(self.st.coord(node), "extern variable without a definition", node.name)
        self.st.scopes.define(node.name, binding)

    def _static_local(
        self, node: c_ast.Decl, ty: ir.IntType | ir.FloatType | ir.ArrayType | MultiArrayType
    ) -> None:
        coord = self.st.coord(node)
        key = (self.st.call_stack[-1], coord.line if coord else 0, coord.column if coord else 0)
        binding = self.st.statics.get(key)
        if binding is None:
            var = self.declare_var(node.name, ty, "global", coord, plain=False)
            self.st.init += self.static_init(var, node.init, coord)
            binding = self.st.statics[key] = VarBinding(var.name, var.type)
        self.st.scopes.define(node.name, binding)

    def static_init(self, var: ir.Var, init: Any, coord: Coord | None) -> list[ir.Stmt]:
        """The start-of-program statements giving a global/static its C initial value (0 if none)."""
        out: list[ir.Stmt] = []
        length = self.st.memory.blocks.get(var.name)
        if length is not None:
            if init is not None:
                raise UnsupportedFeature(coord, "initialised global pointer to an integer")
            return [
                ir.Havoc(var.name, coord, UNINITIALISED),
                ir.Assign(length.name, ir.Const(0, self.st.ct.size_t), coord),
            ]
        with self.no_effects(lambda c, what: FrontendError(c, f"{what} in a static initializer")):
            if init is None and isinstance(var.type, ir.IntType):
                out.append(ir.Assign(var.name, ir.Const(0, var.type), coord))
            elif init is None and isinstance(var.type, ir.FloatType):
                out.append(ir.Assign(var.name, ir.FloatConst(0.0, var.type), coord))
            else:  # an array: all 0 already, as every variable starts (only listed values are stored)
                self.initialize(var, c_ast.InitList([]) if init is None else init, out, coord, zero=True)
        return out

    def initialize(
        self, var: ir.Var, init: Any, out: list[ir.Stmt], coord: Coord | None, zero: bool = False
    ) -> None:
        """`var = init` where `var` is declared (`zero`: an array known to be all 0 here)."""
        if init is None:
            out.append(ir.Havoc(var.name, coord, UNINITIALISED))
            return
        if isinstance(var.type, (ir.IntType, ir.FloatType)):
            if isinstance(init, c_ast.InitList):
                if len(init.exprs) != 1:
                    raise FrontendError(coord, "scalar initialised with a list")
                init = init.exprs[0]
            out.append(ir.Assign(var.name, self.converted(init, var.type, out), coord))
            return
        assert isinstance(var.type, ir.ArrayType)
        self.array_initialize(var, var.type, init, out, coord, zero)

    def scalar(self, node: Any, out: list[ir.Stmt]) -> ir.Expr:
        value = self.value(node, out)
        if not isinstance(value.type, (ir.IntType, ir.FloatType)):
            raise UnsupportedFeature(self.st.coord(node), "pointer (array used as a value)")
        return value

    def array_initialize(
        self, var: ir.Var, ty: ir.ArrayType, init: Any, out: list[ir.Stmt], coord: Coord | None, zero: bool
    ) -> None:
        """`var = {...}`: the listed elements, every other one 0. A small array gets every element
        stored (its old value is not read); a large one, or one known to be all 0 (`zero`), is
        reset to `LowerState.zero_array` (or kept) and only its non-zero listed elements stored."""
        if not isinstance(init, c_ast.InitList):
            feature = (
                "string literal" if isinstance(init, c_ast.Constant) else "array initialised from a non-list"
            )
            raise UnsupportedFeature(coord, feature)
        shape = self.st.shapes.get(var.name)
        values = self.multi_values(shape, init, out)[0] if shape else self.array_values(ty, init, out)
        if len(values) > MAX_ELEMENT_STORES:
            raise UnsupportedFeature(coord, "large initializer list", f"{len(values)} elements")
        size = ty.size or 0
        if not zero and size <= MAX_ELEMENT_STORES:
            zeros = {i: ir.Const(0, ty.elem) for i in range(size)}
            out.append(ir.Havoc(var.name, coord, "array initializer"))
            out.append(ir.Assign(var.name, stores(var, zeros | values), coord))
            return
        listed = {i: v for i, v in values.items() if cexpr.const_value(cexpr.convert(v, ty.elem)) != 0}
        if zero and not listed:
            return
        base = var if zero else self.st.zero_array(ty)
        out.append(ir.Assign(var.name, stores(base, listed), coord))

    def multi_values(
        self, dims: tuple[int | None, ...], init: c_ast.InitList, out: list[ir.Stmt]
    ) -> tuple[dict[int, ir.Expr], int]:
        """The listed elements of a multi-dimensional array by flat index (nested lists, or braces
        elided as C allows), and how many rows (elements of the first dimension) they start."""
        values: dict[int, ir.Expr] = {}
        used, rows = self._fill(dims, list(init.exprs), 0, 0, values, out)
        if used < len(init.exprs):
            raise FrontendError(self.st.coord(init), "too many initializers for the array")
        return values, rows

    def _fill(
        self, dims: tuple[int | None, ...], items: list[Any], start: int, base: int,
        values: dict[int, ir.Expr], out: list[ir.Stmt],
    ) -> tuple[int, int]:  # fmt: skip
        """Initialise the sub-array of shape `dims` at flat index `base` from items[start:] (a
        sub-array without braces takes the items it needs); the next item and the rows started."""
        stride = math.prod(d or 0 for d in dims[1:])
        row, i = 0, start
        while i < len(items) and (dims[0] is None or row < dims[0]):
            item, at = items[i], base + row * stride
            if isinstance(item, c_ast.NamedInitializer):  # (pycparser gives it no coordinate)
                where = self.st.coord(item) or self.st.coord(item.expr) or self.st.coord(item.name[0])
                raise UnsupportedFeature(where, "designated initializer", "in a multi-dimensional array")
            if len(dims) == 1:
                if isinstance(item, c_ast.InitList):
                    raise UnsupportedFeature(self.st.coord(item), "nested initializer list")
                values[at] = self.scalar(item, out)
                i += 1
            elif isinstance(item, c_ast.InitList):
                used, _ = self._fill(dims[1:], list(item.exprs), 0, at, values, out)
                if used < len(item.exprs):
                    raise FrontendError(self.st.coord(item), "too many initializers for the array")
                i += 1
            else:
                i = self._fill(dims[1:], items, i, at, values, out)[0]
            row += 1
        return i, row

    def array_values(self, ty: ir.ArrayType, init: c_ast.InitList, out: list[ir.Stmt]) -> dict[int, ir.Expr]:
        values: dict[int, ir.Expr] = {}
        index = 0
        for item in init.exprs:
            if isinstance(item, c_ast.NamedInitializer):
                designator = item.name[0] if len(item.name) == 1 else None
                if designator is None or isinstance(designator, c_ast.ID):
                    raise UnsupportedFeature(self.st.coord(item), "designated initializer")
                index = self.const_int(getattr(designator, "expr", designator))
                item = item.expr
            if isinstance(item, c_ast.InitList):
                raise UnsupportedFeature(self.st.coord(item), "nested initializer list")
            values[index] = self.scalar(item, out)
            index += 1
        if ty.size is not None and any(i < 0 or i >= ty.size for i in values):
            raise FrontendError(self.st.coord(init), "too many initializers for the array")
        return values

    # ------------------------------------------------------------------ control flow

    def _if(self, node: c_ast.If, out: list[ir.Stmt]) -> None:
        cond = cexpr.truth(self.value(node.cond, out))
        then = self.block(node.iftrue)
        orelse = self.block(node.iffalse) if node.iffalse is not None else []
        out.append(ir.If(cond, tuple(then), tuple(orelse), self.st.coord(node)))

    def _loop_info(self, node: Any) -> str:
        st = self.st
        coord = st.coord(node) or Coord(st.coords.filename, 0, 0)
        lid = st.loop_id(coord)
        parent = st.loop_stack[-1] if st.loop_stack else None
        info = ir.LoopInfo(lid, coord, coord.line, st.scopes.visible_vars(), st.call_stack[-1], parent)
        st.loops.append(info)
        return lid

    @contextmanager
    def _in_loop(self, lid: str) -> Iterator[None]:
        self.st.loop_stack.append(lid)
        self.st.breakables.append(None)
        try:
            yield
        finally:
            del self.st.loop_stack[self.st.loop_stack.index(lid) :]
            self.st.breakables.pop()

    def _exit_unless(self, cond_node: Any, body: list[ir.Stmt], node: Any) -> None:
        cond = self.value(cond_node, body)
        if isinstance(cond, ir.Const) and cond.value != 0:
            return
        coord = self.st.coord(cond_node)
        body.append(ir.If(cexpr.negate(cond), (ir.Break(coord),), (), coord))

    def _while(self, node: c_ast.While, out: list[ir.Stmt]) -> None:
        lid = self._loop_info(node)
        with self._in_loop(lid):
            body: list[ir.Stmt] = []
            self._exit_unless(node.cond, body, node)
            body += self.block(node.stmt)
        out.append(ir.Loop(lid, tuple(body), (), self.st.coord(node)))

    def _do_while(self, node: c_ast.DoWhile, out: list[ir.Stmt]) -> None:
        if runs_once(node):
            out.extend(self.block(node.stmt))  # `do { ... } while (0)` runs its body once
            return
        lid = self._loop_info(node)
        with self._in_loop(lid):
            body = self.block(node.stmt)
            check: list[ir.Stmt] = []
            self._exit_unless(node.cond, check, node)
        if has_continue(body):
            out.append(ir.Loop(lid, tuple(body), tuple(check), self.st.coord(node)))
        else:
            out.append(ir.Loop(lid, (*body, *check), (), self.st.coord(node)))

    def _for(self, node: c_ast.For, out: list[ir.Stmt]) -> None:
        st = self.st
        st.scopes.push()
        try:
            if isinstance(node.init, c_ast.DeclList):
                for d in node.init.decls:
                    self.declaration(d, out)
            elif node.init is not None:
                self.effect(node.init, out)
            lid = self._loop_info(node)
            with self._in_loop(lid):
                body: list[ir.Stmt] = []
                if node.cond is not None:
                    self._exit_unless(node.cond, body, node)
                body += self.block(node.stmt)
                step: list[ir.Stmt] = []
                if node.next is not None:
                    if len(st.call_stack) == 1:
                        st.site = st.coord(node.next)
                    self.effect(node.next, step)
            out.append(ir.Loop(lid, tuple(body), tuple(step), st.coord(node)))
        finally:
            st.scopes.pop()

    def _break(self, node: c_ast.Break, out: list[ir.Stmt]) -> None:
        st = self.st
        if not st.breakables:
            raise FrontendError(st.coord(node), "break outside a loop or switch")
        ctx = st.breakables[-1]
        if ctx is None:
            out.append(ir.Break(st.coord(node)))
            return
        if ctx.flag is None:
            ctx.flag = st.temp(ir.INT, "brk").name
        ctx.uses += 1
        out.append(ir.Assign(ctx.flag, ir.Const(1, ir.INT), st.coord(node)))

    def _continue(self, node: c_ast.Continue, out: list[ir.Stmt]) -> None:
        if None not in self.st.breakables:
            raise FrontendError(self.st.coord(node), "continue outside a loop")
        out.append(ir.Continue(self.st.coord(node)))

    def _return(self, node: c_ast.Return, out: list[ir.Stmt]) -> None:
        ret, ret_ty = self.ret_stack[-1] if self.ret_stack else (None, VOID)
        if node.expr is not None:
            if ret is not None and isinstance(ret_ty, (ir.IntType, ir.FloatType)):
                value = self.scalar(node.expr, out)
                out.append(ir.Assign(ret.name, cexpr.convert(value, ret_ty), self.st.coord(node)))
            else:
                self.effect(node.expr, out)
        out.append(ir.Return(self.st.coord(node)))

    # ------------------------------------------------------------------ goto

    def _gotos(self, node: Any) -> GotoContext:
        if self.st.gotos is None:
            raise FrontendError(self.st.coord(node), "label or goto outside a function")
        return self.st.gotos

    def _label(self, node: c_ast.Label, out: list[ir.Stmt]) -> None:
        """`name: stmt`; a label some goto jumps back to is a loop head, its loop open until then."""
        ctx = self._gotos(node)
        lid = None
        if node.name in ctx.plan.heads:
            lid = self._loop_info(node)
            self.st.loop_stack.append(lid)
            ctx.open[node.name] = lid
        out.append(ir.Label(node.name, self.st.coord(node), lid))
        if node.stmt is not None:
            self.stmt(node.stmt, out)

    def _goto(self, node: c_ast.Goto, out: list[ir.Stmt]) -> None:
        """`goto name`, after havocking the variables whose declaration it jumps past."""
        ctx = self._gotos(node)
        self.st.has_goto = True
        for decl in ctx.plan.skips.get(id(node), ()):
            name = self._skipped_name(decl)
            assert name is not None
            out.append(ir.Havoc(name, self.st.coord(decl), UNINITIALISED))
        out.append(ir.Goto(node.name, self.st.coord(node)))
        if id(node) in ctx.plan.entries:
            self.st.loop_entries.append((self.st.coord(node), ctx.plan.entries[id(node)]))
        lid = ctx.open.get(node.name)
        if lid is not None and ctx.plan.last_back.get(node.name) == id(node) and lid in self.st.loop_stack:
            self.st.loop_stack.remove(lid)  # the loop of the label ends here

    def _skipped_name(self, decl: c_ast.Decl) -> str | None:
        """The IR name of a declaration some goto jumps past (reserved by the first to ask)."""
        ctx = self.st.gotos
        if ctx is None or id(decl) not in ctx.plan.skipped:
            return None
        name = ctx.names.get(id(decl))
        if name is None:
            name = ctx.names[id(decl)] = self.st.reserve(decl.name, len(self.st.call_stack) == 1)
        return name

    # ------------------------------------------------------------------ switch

    def _switch(self, node: c_ast.Switch, out: list[ir.Stmt]) -> None:
        lower_switch(self, node, out)
