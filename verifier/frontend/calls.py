"""Function calls: SV-COMP builtins, and inlining of the user's functions.

A recursive function is inlined up to `RECURSION_DEPTH` activations at once; a call that would
start one more ends its path instead (`Assume(0)`, after its arguments are evaluated) and is
recorded in `Program.cut_calls`: the program is then an under-approximation, whose FALSE is real
(replayed as always) and whose TRUE the portfolio does not report. A pointer-to-integer parameter
is bound, not copied: to the caller's block (`memory`) when given a local block variable, or to
the variable `x` when given `&x` (`*p` is `x`; nothing else of such a pointer is modelled).

A function the file defines is always inlined (a user definition wins over a builtin of the same
name), except the error functions, which are the error location whatever their body is. Builtins
apply to functions that are only declared.

Which calls are errors depends on the property (`CallReading`, `properties`): under `assert`
(a plain C file) `reach_error`, `__VERIFIER_error`, glibc's `__assert_fail` family and failing
`assert`/`__VERIFIER_assert` calls are; under `unreach-call` (SV-COMP) only `reach_error` is, a
failing `assert()` and `__assert_fail` abort (the path ends), and `__VERIFIER_error` and
`__VERIFIER_assert` are ordinary functions, lowered when the file defines them (under the older
`unreach-call:__VERIFIER_error` it is the other way round for `reach_error` and `__VERIFIER_error`).
One used without a definition cannot call `reach_error`: its call only evaluates its argument
(SV-COMP-derived files that call an undefined `__VERIFIER_assert` are labelled safe for exactly
that reason). Under `no-overflow` no call is an error: `reach_error` and `__VERIFIER_error` run
their bodies (do nothing when the file only declares them), and a failing `assert()` aborts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from pycparser import c_ast
from quokka.verifier import ir
from quokka.verifier.ir import cexpr
from quokka.verifier.ir.definedness import ORIGIN as UNINITIALISED

from ..errors import Coord, FrontendError, UnsupportedFeature
from ..properties import NO_OVERFLOW, UNREACH_CALL, UNREACH_VERIFIER_ERROR
from .ctype import STDINT_TYPES, CType, Signature
from .memcalls import MEMORY_FUNCTIONS, MemoryCalls
from .memory import BlockType
from .state import Arguments, BlockParam, LowerState, PointerArgument, RefBinding, VarBinding

ASSERT_FAIL_FUNCTIONS = frozenset({"__assert_fail", "__assert_perror_fail", "__assert"})  # glibc's
ERROR_FUNCTIONS = frozenset({"reach_error", "__VERIFIER_error", *ASSERT_FAIL_FUNCTIONS})
ASSUME_FUNCTIONS = frozenset({"__VERIFIER_assume", "assume_abort_if_not", "assume", "__CPROVER_assume"})
C_ASSERT_FUNCTIONS = frozenset({"assert", "__quokka_assert"})  # C's assert() (Quokka's assert.h)
SVCOMP_ASSERT = "__VERIFIER_assert"
ASSERT_FUNCTIONS = frozenset({SVCOMP_ASSERT, *C_ASSERT_FUNCTIONS})
EXIT_FUNCTIONS = frozenset({"abort", "exit", "_Exit", "_exit"})
NOOP_FUNCTIONS = frozenset({"__VERIFIER_atomic_begin", "__VERIFIER_atomic_end"})
# Allocation (`memory`): whether the function zeroes what it allocates. Allocation never fails (SV-COMP).
ALLOCATION_FUNCTIONS = {"malloc": False, "calloc": True, "alloca": False, "__builtin_alloca": False}
CALLOC_ORIGIN = "calloc"  # a Havoc whose values a counterexample must leave at 0
# Output only: their arguments are evaluated for their effects, the text is not modelled.
OUTPUT_FUNCTIONS = frozenset({"printf", "puts", "putchar", "fflush"})
ABS_FUNCTIONS = {"abs": "int", "labs": "long", "llabs": "long long"}
NONDET_PREFIX = "__VERIFIER_nondet_"
NONDET_TYPES = {
    "int": "int",
    "uint": "unsigned int",
    "unsigned": "unsigned int",
    "unsigned_int": "unsigned int",
    "short": "short",
    "ushort": "unsigned short",
    "char": "char",
    "uchar": "unsigned char",
    "schar": "signed char",
    "long": "long",
    "ulong": "unsigned long",
    "longlong": "long long",
    "ulonglong": "unsigned long long",
    "bool": "_Bool",
    "_Bool": "_Bool",
    "u8": "unsigned char",
    "u16": "unsigned short",
    "u32": "unsigned int",
    "u64": "unsigned long long",
    "s8": "signed char",
    "s16": "short",
    "s32": "int",
    "s64": "long long",
    "loff_t": "long long",
    **STDINT_TYPES,
}
NONDET_ALIASES = {"unknown": "int"}  # code2inv's nondeterministic condition
NONDET_FLOATS = {"float": ir.FLOAT, "double": ir.DOUBLE}  # any value, NaNs and infinities included
NONDET_UNSUPPORTED = {
    "pointer": "pointer",
    "charp": "pointer",
    "pchar": "pointer",
    "const_char_pointer": "pointer",
}


@dataclass(frozen=True)
class CallReading:
    """What calls mean under one property: `errors` are the error location (whatever their body),
    `asserts` assert their argument, `checks` abort when their argument is 0 (assume it),
    `aborts` end the path (their arguments are not evaluated), and `skips` do nothing unless the
    file defines them (their arguments are evaluated)."""

    errors: frozenset[str]
    asserts: frozenset[str]
    checks: frozenset[str] = frozenset()
    aborts: frozenset[str] = frozenset()
    skips: frozenset[str] = frozenset()


ASSERT_READING = CallReading(ERROR_FUNCTIONS, ASSERT_FUNCTIONS)
UNREACH_CALL_READING = CallReading(
    frozenset({"reach_error"}), frozenset(), C_ASSERT_FUNCTIONS, ASSERT_FAIL_FUNCTIONS
)


UNREACH_VERIFIER_ERROR_READING = CallReading(
    frozenset({"__VERIFIER_error"}), frozenset(), C_ASSERT_FUNCTIONS, ASSERT_FAIL_FUNCTIONS
)
NO_OVERFLOW_READING = CallReading(
    frozenset(),
    frozenset(),
    C_ASSERT_FUNCTIONS,
    ASSERT_FAIL_FUNCTIONS,
    frozenset({"reach_error", "__VERIFIER_error"}),
)


def call_reading(property_name: str) -> CallReading:
    readings = {
        UNREACH_CALL: UNREACH_CALL_READING,
        UNREACH_VERIFIER_ERROR: UNREACH_VERIFIER_ERROR_READING,
        NO_OVERFLOW: NO_OVERFLOW_READING,
    }
    return readings.get(property_name, ASSERT_READING)


def _floating(sig: Signature) -> bool:
    """Whether a signature has a float result or parameter (e.g. libm's `sqrt`, `fabs`)."""
    params = [ty for _, ty in sig.params or ()]
    return any(isinstance(ty, ir.FloatType) for ty in [sig.ret, *params])


def ends_with_return(body: Any) -> bool:
    items = getattr(body, "block_items", None) or []
    last = items[-1] if items else None
    while isinstance(last, c_ast.Label):  # CIL's `return_label: return (__retres);`
        last = last.stmt
    return isinstance(last, c_ast.Return)


class CallLowerer(MemoryCalls):
    """Expression lowering plus calls; `function_body` (statements) comes from a subclass."""

    def __init__(
        self, st: LowerState, functions: dict[str, c_ast.FuncDef], prototypes: dict[str, Any]
    ) -> None:
        super().__init__(st)
        self.functions = functions
        self.prototypes = prototypes
        self.reading = call_reading(st.property_name)

    def function_body(
        self, fdef: c_ast.FuncDef, sig: Signature, args: Arguments, ret: ir.Var | None, coord: Any
    ) -> list[ir.Stmt]:
        """The statements of `fdef`'s body inlined for one call (`stmt.StmtLowerer` lowers them)."""
        raise NotImplementedError

    def call(self, node: c_ast.FuncCall, out: list[ir.Stmt], want: bool) -> ir.Expr | None:
        self.check_effects_allowed(node, "a function call")
        if not isinstance(node.name, c_ast.ID):
            raise UnsupportedFeature(self.st.coord(node), "function pointer call")
        name: str = node.name.name
        args: list[Any] = list(node.args.exprs) if node.args else []
        if name in self.reading.errors:
            coord = self.st.coord(node)
            out.append(ir.Assert(ir.Const(0, ir.INT), coord, self.st.site or coord))
            return None
        if name in self.functions:
            return self.inline(self.functions[name], node, args, out, want)
        return self.builtin(name, node, args, out, want)

    # ------------------------------------------------------------------ builtins

    def builtin(
        self, name: str, node: c_ast.FuncCall, args: list[Any], out: list[ir.Stmt], want: bool
    ) -> ir.Expr | None:
        coord = self.st.coord(node)
        if name.startswith(NONDET_PREFIX) or name in NONDET_ALIASES:
            self._arity(node, name, args, 0)
            return self.nondet(name, node, out)
        if name == SVCOMP_ASSERT and name not in self.reading.asserts:
            self._arity(node, name, args, 1)
            self.builtin_args(name, node, args, out)
            return None
        if name in ASSUME_FUNCTIONS or name in self.reading.checks or name in self.reading.asserts:
            self._arity(node, name, args, 1)
            cond = cexpr.truth(self.builtin_args(name, node, args, out)[0])
            if name in self.reading.asserts:
                out.append(ir.Assert(cond, coord, self.st.site or coord))
            else:
                out.append(ir.Assume(cond, coord))
            return None
        if name in EXIT_FUNCTIONS or name in self.reading.aborts:
            if name in EXIT_FUNCTIONS:
                self.builtin_args(name, node, args, out)
            out.append(ir.Assume(ir.Const(0, ir.INT), coord))
            return None
        if name in NOOP_FUNCTIONS:
            return None
        if name in self.reading.skips:
            self.builtin_args(name, node, args, out)
            return None
        if name in ALLOCATION_FUNCTIONS:
            self._arity(node, name, args, 2 if name == "calloc" else 1)
            return self.allocate(name, args, out, want, coord)
        if name == "free":
            self._arity(node, name, args, 1)
            if self.block_variable(args[0]) is None:
                self.effect(args[0], out)
            return None
        if name in OUTPUT_FUNCTIONS and not want:
            self.output(args, out)
            return None
        if name in ABS_FUNCTIONS:
            self._arity(node, name, args, 1)
            return self.absolute(name, node, args, out)
        if name in MEMORY_FUNCTIONS:
            self._arity(node, name, args, 3)
            if want:
                what = "pointer to an integer used as a value"
                raise UnsupportedFeature(coord, what, f"the result of {name}")
            self.memory_call(name, node, args, out)
            return None
        if name in self.prototypes:
            sig = self.signature_of(name, node)
            if sig is not None and _floating(sig):
                raise UnsupportedFeature(coord, "floating-point function without a body", name)
            raise UnsupportedFeature(coord, "call to a function without a body", name)
        raise UnsupportedFeature(coord, "call to an undeclared function", name)

    def allocate(
        self, name: str, args: list[Any], out: list[ir.Stmt], want: bool, coord: Coord | None
    ) -> ir.Expr | None:
        """A new object (`memory`); the requested size does not matter to the model."""
        for arg in args:
            self.effect(arg, out)
        stmts, top = self.st.memory.allocate(self.st, coord, ALLOCATION_FUNCTIONS[name])
        out += stmts
        if not want:
            return None
        new = self.st.temp(top.type, "new")
        out.append(ir.Assign(new.name, top, coord))
        return new

    def allocate_block(self, block: ir.Var, node: Any, out: list[ir.Stmt], coord: Coord | None) -> None:
        """`block = malloc(size)` (or calloc, alloca): fresh contents, `size / sizeof(T)` elements."""
        call = node
        while isinstance(call, c_ast.Cast):
            call = call.expr
        name = (
            call.name.name if isinstance(call, c_ast.FuncCall) and isinstance(call.name, c_ast.ID) else None
        )
        length = self.st.memory.blocks[block.name]
        assert isinstance(length.type, ir.IntType)
        if name not in ALLOCATION_FUNCTIONS or name in self.functions:
            if cexpr.const_value(self.value(call, out)) != 0:
                raise UnsupportedFeature(coord, "pointer to an integer not from malloc")
            out.append(ir.Havoc(block.name, coord, UNINITIALISED))
            out.append(ir.Assign(length.name, ir.Const(0, length.type), coord))
            return
        args = list(call.args.exprs) if call.args else []
        self._arity(call, name, args, 2 if name == "calloc" else 1)
        sizes = [cexpr.convert(v, self.st.ct.size_t) for v in self.arguments(args, out)]
        size = sizes[0] if len(sizes) == 1 else self.binary("*", sizes[0], sizes[1], call)
        assert isinstance(block.type, ir.ArrayType)
        elem_bytes = ir.Const(self.types.size_of(block.type.elem, call), self.st.ct.size_t)
        origin = CALLOC_ORIGIN if ALLOCATION_FUNCTIONS[name] else UNINITIALISED
        out.append(ir.Havoc(block.name, coord, origin))
        count = cexpr.convert(self.binary("/", size, elem_bytes, call), length.type)
        out.append(ir.Assign(length.name, count, coord))

    def output(self, args: list[Any], out: list[ir.Stmt]) -> None:
        """An output call whose result is unused: what its arguments compute, without the text."""
        for arg in args:
            if not isinstance(arg, (c_ast.Constant, c_ast.ID)):  # a string, or a read of a variable
                self.effect(arg, out)

    def _arity(self, node: Any, name: str, args: list[Any], n: int) -> None:
        if len(args) != n:
            raise FrontendError(self.st.coord(node), f"{name} takes {n} argument(s), got {len(args)}")

    def signature_of(self, name: str, node: Any) -> Signature | None:
        """The declared signature of `name` (None if undeclared), unsupported types located at the call."""
        proto = self.prototypes.get(name)
        if proto is None:
            return None
        try:
            return self.types.signature(proto)
        except UnsupportedFeature as exc:
            raise UnsupportedFeature(self.st.coord(node), exc.feature, f"call to {name}") from None

    def builtin_args(self, name: str, node: Any, args: list[Any], out: list[ir.Stmt]) -> list[ir.Expr]:
        """Argument values, converted to the declared parameter types when a prototype exists."""
        sig = self.signature_of(name, node)
        values = self.arguments(args, out)
        if sig is None or sig.params is None:
            return values
        params = sig.params
        return [
            self._convert_arg(v, params[i][1], name, node) if i < len(params) else v
            for i, v in enumerate(values)
        ]

    def _convert_arg(self, value: ir.Expr, ty: CType, name: str, node: Any) -> ir.Expr:
        if not isinstance(ty, (ir.IntType, ir.FloatType)):
            raise FrontendError(self.st.coord(node), f"parameter of {name} has type {ty.name}")
        try:
            return cexpr.convert(value, ty)
        except cexpr.NotScalar:
            raise UnsupportedFeature(self.st.coord(node), "pointer (array used as a value)", name) from None

    def arguments(self, args: list[Any], out: list[ir.Stmt]) -> list[ir.Expr]:
        """Argument values left to right; earlier ones are saved if later ones write what they read."""
        values: list[ir.Expr] = []
        for a in args:
            pos = len(out)
            v = self.value(a, out)
            values = [self.protect(x, out, pos) for x in values]
            values.append(v)
        return values

    def nondet(self, name: str, node: Any, out: list[ir.Stmt]) -> ir.Expr:
        coord = self.st.coord(node)
        sig = self.signature_of(name, node)
        suffix = NONDET_ALIASES.get(name) or name[len(NONDET_PREFIX) :]
        ty: CType
        if sig is not None:
            ty = sig.ret
        elif suffix == "size_t":
            ty = self.st.ct.size_t
        elif suffix in NONDET_TYPES:
            ty = self.st.ct.named(NONDET_TYPES[suffix])
        elif suffix in NONDET_FLOATS:
            ty = NONDET_FLOATS[suffix]
        elif suffix in NONDET_UNSUPPORTED:
            raise UnsupportedFeature(coord, NONDET_UNSUPPORTED[suffix], name)
        else:
            raise UnsupportedFeature(coord, "unknown nondeterministic function", name)
        if not isinstance(ty, (ir.IntType, ir.FloatType)):
            raise UnsupportedFeature(coord, f"{ty.name} result", name)
        t = self.st.temp(ty, "nd")
        out.append(ir.Havoc(t.name, coord, name))
        return t

    def absolute(self, name: str, node: Any, args: list[Any], out: list[ir.Stmt]) -> ir.Expr:
        ty = self.st.ct.named(ABS_FUNCTIONS[name])
        x = cexpr.convert(self.arguments(args, out)[0], ty)
        neg = self.record(ir.Unary("-", x, ty), node)
        return cexpr.conditional(self.st.ct, self.binary("<", x, ir.Const(0, ir.INT), node), neg, x)

    # ------------------------------------------------------------------ sqrt

    def converted(self, node: Any, ty: ir.ScalarType, out: list[ir.Stmt]) -> ir.Expr:
        """As `ExprLowerer.converted`; `int_var = sqrt(int_expr)` is lowered exactly (see `int_sqrt`)."""
        inner, target = node, ty
        if isinstance(node, c_ast.Cast) and isinstance(node.expr, c_ast.FuncCall):
            cast_to = self.types.resolve(node.to_type)
            if isinstance(cast_to, ir.IntType):
                inner, target = node.expr, cast_to
        if isinstance(target, ir.IntType) and self._is_libm_sqrt(inner) and not target.is_bool:
            root = self.int_sqrt(inner, target, out)
            if root is not None:
                return cexpr.convert(root, ty)
        return super().converted(node, ty, out)

    def _is_libm_sqrt(self, node: Any) -> bool:
        if not (isinstance(node, c_ast.FuncCall) and isinstance(node.name, c_ast.ID)):
            return False
        proto = self.prototypes.get(node.name.name)
        if node.name.name != "sqrt" or "sqrt" in self.functions or proto is None:
            return False
        ret = getattr(proto.type, "type", None)
        return isinstance(ret, c_ast.IdentifierType) and ret.names == ["double"]

    def int_sqrt(self, node: c_ast.FuncCall, ty: ir.IntType, out: list[ir.Stmt]) -> ir.Expr | None:
        """`(ty) sqrt(n)` for an integer n of at most 32 bits, where double arithmetic is exact.

        The result is a fresh value r of `ty` with r*r <= n < (r+1)*(r+1) (computed in __int128,
        which the IR treats as mathematical and where these products always fit: the model adds no
        operation that the no-overflow property could find overflowing); when C leaves the
        conversion undefined (n < 0, or a root that does not fit `ty`) any value is allowed.
        """
        args = list(node.args.exprs) if node.args else []
        if len(args) != 1:
            return None
        pos = len(out)
        arg = self.value(args[0], out)
        if not isinstance(arg.type, ir.IntType) or arg.type.bits > 32:
            del out[pos:]  # evaluated again as an ordinary (unsupported) call
            return None
        aty = arg.type
        ll = ir.INT128
        n = cexpr.convert(arg, ll)
        root = self.st.temp(ty, "sqrt")
        out.append(ir.Havoc(root.name, self.st.coord(node), "sqrt"))
        r = cexpr.convert(root, ll)
        r1 = ir.Binary("+", r, ir.Const(1, ll), ll)
        exact = ir.Binary(
            "&&",
            ir.Binary("<=", ir.Binary("*", r, r, ll), n, ir.INT),
            ir.Binary("<", n, ir.Binary("*", r1, r1, ll), ir.INT),
            ir.INT,
        )
        options: list[ir.Expr] = [exact]
        if aty.signed:
            options.append(ir.Binary("<", n, ir.Const(0, ll), ir.INT))
        if math.isqrt(aty.max) > ty.max:
            options.append(ir.Binary(">=", n, ir.Const((ty.max + 1) ** 2, ll), ir.INT))
        cond = options[0]
        for extra in options[1:]:
            cond = ir.Binary("||", cond, extra, ir.INT)
        out.append(ir.Assume(cond, self.st.coord(node)))
        return root

    # ------------------------------------------------------------------ inlining

    def inline(
        self, fdef: c_ast.FuncDef, node: c_ast.FuncCall, args: list[Any], out: list[ir.Stmt], want: bool
    ) -> ir.Expr | None:
        name: str = fdef.decl.name
        coord = self.st.coord(node)
        if fdef.param_decls:
            raise UnsupportedFeature(self.st.coord(fdef), "K&R-style function definition", name)
        sig = self.types.signature(fdef.decl.type, pointers=True)
        self._check_call_arity(sig, name, args, node)
        values = self.parameters(sig, name, args, out)
        if self.st.call_stack.count(name) >= self.st.recursion_depth:
            return self.cut(sig, want, out, coord or self.st.coord(fdef))
        ret = None
        if want and isinstance(sig.ret, (ir.IntType, ir.FloatType)):
            ret = self.st.temp(sig.ret, f"{name}.ret")
            if not ends_with_return(fdef.body):
                out.append(ir.Havoc(ret.name, coord, "no return value"))
        body = self.function_body(fdef, sig, values, ret, coord)
        out.append(ir.Scope(name, tuple(body), coord))
        return ret

    def cut(self, sig: Signature, want: bool, out: list[ir.Stmt], coord: Coord | None) -> ir.Expr | None:
        """A recursive call past `RECURSION_DEPTH`: its path ends here (recorded, located at the call)."""
        where = coord or Coord(self.st.coords.filename, 0)
        self.st.cut_calls[where] = None
        out.append(ir.Assume(ir.Const(0, ir.INT), coord))
        if not want or not isinstance(sig.ret, (ir.IntType, ir.FloatType)):
            return None  # void: the caller reports a use of its value
        if isinstance(sig.ret, ir.FloatType):
            return ir.FloatConst(0.0, sig.ret)  # never read: the path has ended
        return ir.Const(0, sig.ret)

    def parameters(
        self, sig: Signature, name: str, args: list[Any], out: list[ir.Stmt]
    ) -> Arguments:
        """The arguments of a call to `name` (defined): values, left to right, and for each
        pointer-to-integer parameter what it is bound to (`pointer_argument`)."""
        params = sig.params or ()
        bound = {
            i: self.pointer_argument(arg, params[i][1], name)
            for i, arg in enumerate(args)
            if i < len(params) and isinstance(params[i][1], BlockType)
        }
        values = iter(self.arguments([a for i, a in enumerate(args) if i not in bound], out))
        return [bound[i] if i in bound else next(values) for i in range(len(args))]

    def pointer_argument(self, node: Any, ty: CType, name: str) -> PointerArgument:
        """What a `T *` parameter of `name` is given: a local block variable of element type T
        (or such a parameter), or `&x` for a variable x of type T (or such a parameter)."""
        assert isinstance(ty, BlockType)
        coord = self.st.coord(node)
        if isinstance(node, c_ast.UnaryOp) and node.op == "&":
            named = isinstance(node.expr, c_ast.ID)
            target = self.st.scopes.lookup(node.expr.name) if named else None
            if isinstance(target, VarBinding) and target.type == ty.elem:
                return RefBinding(target.name, ty.elem)
            detail = f"of {node.expr.name if named else 'an expression'} passed to {name} as {ty.name}"
            raise UnsupportedFeature(coord, "address-of (&)", detail)
        binding = self.st.scopes.lookup(node.name) if isinstance(node, c_ast.ID) else None
        if isinstance(binding, RefBinding) and binding.type == ty.elem:
            return binding
        unbound = isinstance(node, c_ast.ID) and not isinstance(binding, VarBinding)
        if unbound or self.row_type(node) is not None:
            self.value(node, [])  # an undeclared or unsupported name, or a row, is reported as such
        block = self.block_variable(node)
        if block is None or block.type != ir.ArrayType(ty.elem, None):
            detail = f"{name} takes {ty.name}: a local block or &variable"
            raise UnsupportedFeature(coord, "pointer argument", detail)
        if any(v.name == block.name and v.kind == "global" for v in self.st.variables):
            raise UnsupportedFeature(coord, "global pointer to an integer passed to a function", name)
        return BlockParam(block.name, block.type)

    def _check_call_arity(self, sig: Signature, name: str, args: list[Any], node: Any) -> None:
        if sig.variadic:
            raise UnsupportedFeature(self.st.coord(node), "variadic function", name)
        if sig.params is not None and len(args) != len(sig.params):
            raise FrontendError(
                self.st.coord(node), f"{name} takes {len(sig.params)} argument(s), got {len(args)}"
            )
