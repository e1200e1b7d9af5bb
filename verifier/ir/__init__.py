"""Quokka's intermediate representation: a tiny typed statement language over C integers
(and IEEE floating point).

Values are mathematical integers. Every expression has an integer type (or an array type, or a
floating type: see below); the meaning of each operator follows C as the IR defines it in
`semantics`:

* unsigned arithmetic wraps modulo 2**bits (the result of `Binary` on an unsigned type is
  already reduced);
* signed arithmetic is mathematical (SV-COMP reach-safety excludes overflow, which is
  undefined behaviour); `Program.overflow_sites` records where it could happen;
* `Cast` converts to its type with wrap-around (to `_Bool`: `x != 0`);
* `/` and `%` truncate toward zero; comparisons, `!`, `&&`, `||` yield int 0/1;
* `&&`, `||` and `Ite` are lazy (the frontend has already moved side effects into statements).

The operands of a `Binary` arithmetic operator have the operator's type (the frontend inserts
the usual arithmetic conversions as explicit casts); comparison operands share one type.
Statements: Assign, Havoc, Assume, Assert, If, Loop, Break, Continue, Scope, Return, Label, Goto.

Floating point (`float`, `double`: IEEE binary32/binary64, round to nearest even, evaluated in
the type itself as gcc does with SSE) has nodes of its own, so that no integer-only analysis
can mistake a float for an integer: `FloatConst`, `FloatUnary` (`-`), `FloatBinary`
(`+ - * /`), `FloatCompare` (int 0/1; IEEE: every comparison with a NaN is 0 except `!=`),
`ToFloat` (an integer or float converted to a float type, rounded) and `FloatToInt` (C's
truncation toward zero; undefined behaviour when the truncated value is not a value of the
integer type, NaN and infinities included). Their meaning is `fpsem`'s. Conditions, `&&`, `||`,
`!` and `Ite` take integers only: the frontend truth-tests a float as `x != 0.0`. Arrays of
floats do not exist. Only bounded model checking and the interpreter handle floats
(`uses_floats`): no other engine may see such a program.
Control flow is given its meaning in one place, `cfg`, which every analysis consumes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from quokka.verifier.errors import Coord, UnsupportedByEngine

# ----------------------------------------------------------------------------- types


@dataclass(frozen=True)
class IntType:
    """A C integer type; `_Bool` has bits == 1 and is unsigned."""

    name: str
    bits: int
    signed: bool

    @property
    def is_bool(self) -> bool:
        return self.name == "_Bool"

    @property
    def is_pointer(self) -> bool:
        """A pointer of the frontend's heap model (`frontend.memory`): an object number, not an
        address; only `==`, `!=` and truth tests on it mean anything in C."""
        return self.name.endswith("*")

    @property
    def min(self) -> int:
        return -(1 << (self.bits - 1)) if self.signed else 0

    @property
    def max(self) -> int:
        return (1 << (self.bits - 1)) - 1 if self.signed else (1 << self.bits) - 1

    def contains(self, other: IntType) -> bool:
        """True when every value of `other` is a value of this type."""
        return self.min <= other.min and other.max <= self.max

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class ArrayType:
    """A fixed-size C array of integers (size None: declared without a size)."""

    elem: IntType
    size: int | None

    @property
    def name(self) -> str:
        return f"{self.elem.name}[{'' if self.size is None else self.size}]"

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class FloatType:
    """An IEEE binary floating type: `ebits` exponent bits, `sbits` significand bits (the hidden
    bit included): float is (8, 24), double (11, 53)."""

    name: str
    ebits: int
    sbits: int

    @property
    def bits(self) -> int:
        return self.ebits + self.sbits

    def __str__(self) -> str:
        return self.name


Type = IntType | ArrayType | FloatType
ScalarType = IntType | FloatType

BOOL = IntType("_Bool", 1, False)


def int_types(data_model: str) -> dict[str, IntType]:
    """The integer types of a data model ("ILP32" or "LP64"), by canonical C name."""
    long_bits = 64 if data_model == "LP64" else 32
    out = {"_Bool": BOOL}
    for name, bits in [("char", 8), ("short", 16), ("int", 32), ("long", long_bits), ("long long", 64)]:
        out[f"signed {name}" if name == "char" else name] = IntType(
            "signed char" if name == "char" else name, bits, True
        )
        out[f"unsigned {name}"] = IntType(f"unsigned {name}", bits, False)
    out["char"] = IntType("char", 8, True)
    return out


INT = IntType("int", 32, True)
UINT = IntType("unsigned int", 32, False)
LLONG = IntType("long long", 64, True)
INT128 = IntType("__int128", 128, True)  # gcc's, on LP64 targets (x86-64): no C declaration has it
FLOAT = FloatType("float", 8, 24)
DOUBLE = FloatType("double", 11, 53)

# ----------------------------------------------------------------------------- expressions

ARITH_OPS = frozenset({"+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^"})
COMPARE_OPS = frozenset({"<", "<=", ">", ">=", "==", "!="})
LOGIC_OPS = frozenset({"&&", "||"})
UNARY_OPS = frozenset({"-", "~", "!"})


@dataclass(frozen=True)
class Const:
    value: int
    type: IntType


@dataclass(frozen=True)
class Var:
    name: str
    type: Type


@dataclass(frozen=True)
class Unary:
    op: str
    operand: Expr
    type: IntType


@dataclass(frozen=True)
class Binary:
    op: str
    left: Expr
    right: Expr
    type: IntType


@dataclass(frozen=True)
class Cast:
    operand: Expr
    type: IntType


@dataclass(frozen=True)
class Ite:
    cond: Expr
    then: Expr
    orelse: Expr
    type: IntType


@dataclass(frozen=True)
class Select:
    """Array read `array[index]`."""

    array: Expr
    index: Expr
    type: IntType


@dataclass(frozen=True)
class Store:
    """Functional array update: `array` with `index` set to `value`."""

    array: Expr
    index: Expr
    value: Expr
    type: ArrayType


@dataclass(frozen=True)
class FloatConst:
    """A floating constant: `value` is a Python float (a double) that is a value of `type`."""

    value: float
    type: FloatType


@dataclass(frozen=True)
class FloatUnary:
    """`-operand` (the sign flips, zeros and NaNs included)."""

    op: str
    operand: Expr
    type: FloatType


@dataclass(frozen=True)
class FloatBinary:
    """`left op right` for op in `+ - * /`, both operands of `type`, rounded to nearest even."""

    op: str
    left: Expr
    right: Expr
    type: FloatType


@dataclass(frozen=True)
class FloatCompare:
    """An IEEE comparison of two operands of one float type, yielding int 0/1."""

    op: str
    left: Expr
    right: Expr
    type: IntType = INT


@dataclass(frozen=True)
class ToFloat:
    """`operand` (an integer or a float) converted to `type`, rounded to nearest even."""

    operand: Expr
    type: FloatType


@dataclass(frozen=True)
class FloatToInt:
    """`operand` (a float) converted to the integer `type` (not `_Bool`): truncated toward zero;
    undefined behaviour when the result is not a value of `type` (NaN, infinities included)."""

    operand: Expr
    type: IntType


@dataclass(frozen=True)
class Forall:
    """`1` when `body` is non-zero for every integer `var` with `lo <= var < hi`, else `0`: a bounded
    universal quantifier, for invariants over array cells (`forall k in [0, i): a[k] == 0`).

    Only invariants hold it, never statements. `var` is bound (its name starts with `BOUND`, which
    no program variable's does); `lo` and `hi` have its type, and the range is mathematical.
    """

    var: Var
    lo: Expr
    hi: Expr
    body: Expr
    type: IntType = INT


BOUND = "@"  # the first character of a bound variable's name


FloatExpr = FloatConst | FloatUnary | FloatBinary | FloatCompare | ToFloat | FloatToInt
FLOAT_NODES = (FloatConst, FloatUnary, FloatBinary, FloatCompare, ToFloat, FloatToInt)

Expr = (
    Const | Var | Unary | Binary | Cast | Ite | Select | Store | Forall
    | FloatConst | FloatUnary | FloatBinary | FloatCompare | ToFloat | FloatToInt
)


_CHILD_FIELDS: dict[type, tuple[str, ...]] = {
    Const: (), Var: (), FloatConst: (),
    Unary: ("operand",), Cast: ("operand",), FloatUnary: ("operand",), ToFloat: ("operand",),
    FloatToInt: ("operand",),
    Binary: ("left", "right"), FloatBinary: ("left", "right"), FloatCompare: ("left", "right"),
    Ite: ("cond", "then", "orelse"), Select: ("array", "index"), Store: ("array", "index", "value"),
    Forall: ("lo", "hi", "body"),
}  # fmt: skip


def children(e: Expr) -> tuple[Expr, ...]:
    """The direct sub-expressions of `e`, left to right."""
    return tuple(getattr(e, name) for name in _CHILD_FIELDS[type(e)])


def with_children(e: Expr, new: Sequence[Expr]) -> Expr:
    """`e` with its direct sub-expressions (in `children` order) replaced by `new`."""
    fields = _CHILD_FIELDS[type(e)]
    node: Any = e  # each node class has its own fields: `replace` cannot be typed over the union
    rebuilt: Expr = dataclasses.replace(node, **dict(zip(fields, new, strict=True))) if fields else e
    return rebuilt


def walk(e: Expr) -> Iterator[Expr]:
    """All sub-expressions of `e` (pre-order, `e` first)."""
    stack = [e]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(children(node)))


def store_chain(e: Store) -> tuple[Expr, list[Store]]:
    """`e` = store(...store(base, i1, v1)..., ik, vk) as (base, [innermost store, ..., e]).

    Iterative: initialised arrays lower to chains of thousands of stores, deeper than Python's
    recursion limit allows a recursive walk to go.
    """
    chain = [e]
    while isinstance(chain[-1].array, Store):
        chain.append(chain[-1].array)
    chain.reverse()
    return chain[0].array, chain


def operands(e: Expr, op: str) -> list[Expr]:
    """The top-level `op` operands of `e` (`op` is `&&` or `||`), left to right."""
    out, stack = [], [e]
    while stack:
        node = stack.pop()
        if isinstance(node, Binary) and node.op == op:
            stack += [node.right, node.left]
        else:
            out.append(node)
    return out


def conjuncts(e: Expr) -> list[Expr]:
    """The top-level `&&` operands of `e`, left to right."""
    return operands(e, "&&")


def free_vars(e: Expr) -> frozenset[str]:
    """The names of the variables `e` reads (bound ones excluded)."""
    return frozenset(n.name for n in walk(e) if isinstance(n, Var) and not n.name.startswith(BOUND))


# ----------------------------------------------------------------------------- statements


@dataclass(frozen=True)
class Assign:
    target: str
    value: Expr
    coord: Coord | None = None


@dataclass(frozen=True)
class Havoc:
    """Give `target` any value of its type (a `__VERIFIER_nondet_*` call or an uninitialised local).

    `origin` says where the value comes from, e.g. "__VERIFIER_nondet_int" or "uninitialised".
    """

    target: str
    coord: Coord | None = None
    origin: str = "nondet"


@dataclass(frozen=True)
class Assume:
    cond: Expr
    coord: Coord | None = None


@dataclass(frozen=True)
class Assert:
    """The error location is reachable when `cond` is 0 here.

    `coord` is where the error is (e.g. the `reach_error()` call), `site` the statement of the
    outermost function (usually `main`) whose call led there, e.g. a `__VERIFIER_assert` call.
    """

    cond: Expr
    coord: Coord | None = None
    site: Coord | None = None


@dataclass(frozen=True)
class If:
    cond: Expr
    then: Block
    orelse: Block
    coord: Coord | None = None


@dataclass(frozen=True)
class Loop:
    """`while (1) { body; step }`; `continue` jumps to `step`. The loop head is before `body`."""

    id: str
    body: Block
    step: Block = ()
    coord: Coord | None = None


@dataclass(frozen=True)
class Break:
    coord: Coord | None = None


@dataclass(frozen=True)
class Continue:
    coord: Coord | None = None


@dataclass(frozen=True)
class Scope:
    """The body of a function (main, or an inlined call); `Return` leaves the innermost one."""

    function: str
    body: Block
    coord: Coord | None = None


@dataclass(frozen=True)
class Return:
    coord: Coord | None = None


@dataclass(frozen=True)
class Label:
    """A C label, visible to the `Goto`s of its innermost `Scope` (labels have function scope).

    `loop` is set when a `Goto` jumps back to the label: the label is then the head of a loop
    with that id (and an entry in `Program.loops`).
    """

    name: str
    coord: Coord | None = None
    loop: str | None = None


@dataclass(frozen=True)
class Goto:
    label: str
    coord: Coord | None = None


Stmt = Assign | Havoc | Assume | Assert | If | Loop | Break | Continue | Scope | Return | Label | Goto
Block = tuple[Stmt, ...]


def stmt_children(s: Stmt) -> tuple[Block, ...]:
    """The nested blocks of a statement."""
    if isinstance(s, If):
        return (s.then, s.orelse)
    if isinstance(s, Loop):
        return (s.body, s.step)
    if isinstance(s, Scope):
        return (s.body,)
    return ()


def walk_stmts(block: Block) -> Iterator[Stmt]:
    """Every statement in `block`, nested ones included (pre-order)."""
    for s in block:
        yield s
        for sub in stmt_children(s):
            yield from walk_stmts(sub)


# ----------------------------------------------------------------------------- program


HEAP = "heap"  # the VarDecl kind of field arrays and the allocation counter


@dataclass(frozen=True)
class VarDecl:
    """An IR variable. `c_name` is its name in the C source (IR names are unique)."""

    name: str
    type: Type
    kind: str  # "global" | "local" | "param" | "temp" | HEAP
    c_name: str
    coord: Coord | None = None


@dataclass(frozen=True)
class LoopInfo:
    """What the outside world knows about one loop.

    `scope` maps the C names visible at the loop head to IR variable names (innermost wins);
    `insert_after_line` names the loop in the Quokka prompt format "After line X, insert
    assume(COND);": the line of the loop keyword, as in the Quokka dataset (and UAutomizer's
    invariants in `quokka-dev/invariants.jsonl`).
    """

    id: str
    coord: Coord
    insert_after_line: int
    scope: tuple[tuple[str, str], ...]
    function: str = "main"
    parent: str | None = None

    def ir_name(self, c_name: str) -> str | None:
        return dict(self.scope).get(c_name)


@dataclass(frozen=True)
class Program:
    """A lowered C program: variables, the body of `main` (inlined calls included), its loops."""

    file: str
    data_model: str
    variables: tuple[VarDecl, ...]
    body: Block
    loops: tuple[LoopInfo, ...]
    overflow_sites: tuple[Coord, ...] = field(default=())
    # what its Asserts are (`properties`): "assert" (reach_error and failing assert()) or
    # "unreach-call" (reach_error only); gcc replay counts the same calls as the error
    property_name: str = "assert"
    # how a read of an uninitialised local is read (`definedness`): "strict" (undefined: no FALSE
    # may depend on it) or "nondet" (an arbitrary value, SV-COMP's reading)
    uninitialised: str = "strict"
    # the recursive calls past `RECURSION_DEPTH` activations, each cut to `Assume(0)`: the program is
    # then an under-approximation (see `bounded_recursion`)
    cut_calls: tuple[Coord, ...] = ()

    def var(self, name: str) -> VarDecl:
        for v in self.variables:
            if v.name == name:
                return v
        raise KeyError(name)

    def loop(self, loop_id: str) -> LoopInfo:
        for info in self.loops:
            if info.id == loop_id:
                return info
        raise KeyError(loop_id)

    @property
    def var_types(self) -> dict[str, Type]:
        return {v.name: v.type for v in self.variables}


RECURSION_DEPTH = 4  # activations of one function the frontend inlines at once


def bounded_recursion(program: Program) -> str | None:
    """Why nothing proven about `program` holds for the C program: its recursion was inlined only
    to `RECURSION_DEPTH` and the deeper calls cut (`Program.cut_calls`); None when none was cut.
    Its FALSE verdicts are real (a path of the cut program is one of the C program)."""
    if not program.cut_calls:
        return None
    where = ", ".join(map(str, program.cut_calls[:3])) + (", ..." if len(program.cut_calls) > 3 else "")
    depth = f"recursion inlined only to depth {RECURSION_DEPTH}"
    return f"{depth} ({where}); a proof would not cover deeper calls"


# ----------------------------------------------------------------------------- floating point

ONLY_BMC = "floating point: only bounded model checking handles it"


def stmt_exprs(s: Stmt) -> tuple[Expr, ...]:
    """The expressions a statement evaluates itself (not those of its nested blocks)."""
    if isinstance(s, Assign):
        return (s.value,)
    if isinstance(s, (Assume, Assert, If)):
        return (s.cond,)
    return ()


def constants(program: Program) -> set[int]:
    """The values of the constants in the statements of `program`."""
    exprs = (e for s in walk_stmts(program.body) for e in stmt_exprs(s))
    return {n.value for e in exprs for n in walk(e) if isinstance(n, Const)}


def float_use(program: Program) -> str | None:
    """Where `program` first uses floating point (a variable or a statement, as text), or None."""
    for v in program.variables:
        if isinstance(v.type, FloatType):
            return f"{v.coord}: {v.type} {v.c_name}" if v.coord else f"{v.type} {v.c_name}"
    for s in walk_stmts(program.body):
        for e in stmt_exprs(s):
            if any(isinstance(node, FLOAT_NODES) for node in walk(e)):
                return f"{s.coord}: a floating-point expression" if s.coord else "a floating-point expression"
    return None


def uses_floats(program: Program) -> bool:
    return float_use(program) is not None


def refusal(program: Program) -> str | None:
    """Why an engine other than bounded model checking (and the interpreter) must not handle
    `program`, or None: only those handle floating point (`ONLY_BMC`), and only a complete
    unrolling proves such a program."""
    where = float_use(program)
    return None if where is None else f"{ONLY_BMC} ({where})"


def require_integers(program: Program) -> None:
    """Raise `UnsupportedByEngine` when `program` uses floating point (see `refusal`)."""
    why = refusal(program)
    if why is not None:
        raise UnsupportedByEngine(why)
