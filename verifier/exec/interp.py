"""A concrete interpreter for the IR, fast enough to run a program thousands of times.

`compile_program` lays the program's control-flow graph (`cfg.build_cfg`) out once as a flat
list of instructions (Python closures that return the next program counter), so running never
recurses on statement nesting; `Runner.run` executes that list. Expressions become
nested closures over an environment list (slot 0 holds the run's `_RunState`, slot k+1 the
value of variable k). All arithmetic is `semantics`' (fast paths compute `+ - *` and
comparisons with Python's operators, which are exactly `semantics`' mathematical ones, and
call `semantics.wrap` only when a result leaves its type's range).

Conventions (beyond the IR's semantics):

* Every variable starts at 0 (arrays: every element 0; floats: +0.0).
* Each executed `Havoc` of an integer variable takes the next input, converted to the target's
  type with `semantics.wrap` (300 into an `unsigned char` becomes 44); a sequence that has run
  out gives 0. `Execution.inputs_used` holds the converted values, `Execution.havocs` the
  statements that took them. A float variable takes the value whose IEEE encoding is the input
  modulo 2**32 (`float`) or 2**64 (`double`), `fpsem.from_bits`; `inputs_used` holds that
  encoding (what the gcc replay harness reinterprets the same way). A `Havoc` of an array makes
  every element an input, drawn lazily when the element is first read (unread elements consume
  no input).
* Floating point is `fpsem`'s (IEEE, round to nearest even); a conversion of a float to an
  integer type that C leaves undefined (NaN, infinite, or out of range) ends the run as "ub".
* `LoopHeadState.values` holds every integer variable of the program (arrays and floats are omitted);
  `iteration` counts from 0 at each entry into the loop. After `max_loop_head_states` states
  the run goes on without recording more.
* `overflows` lists, once each in order of first occurrence, the statements where a signed
  operation produced a value outside its type (C's undefined overflow; `INT_MIN % -1`
  included); the run continues with the mathematical value, as the IR defines.
* "limit" also ends a run whose expression evaluation exceeds Python's recursion limit (an
  expression nested hundreds deep; `message` says so).
* The state at a loop head is recorded on every edge into its block: as an entry (iteration 0)
  from outside the loop, as the next iteration along a back edge; a `goto` loop is no different.
* `steps` counts executed instructions: statements, branches, loop-head passes and the jumps
  (break, continue, return, goto) that the graph keeps with their coordinate; `path` lists the
  coordinates of these instructions, with consecutive duplicates merged.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from quokka.verifier import ir
from quokka.verifier.cfg import BasicBlock, Branch, Jump, Simple, Terminator, build_cfg
from quokka.verifier.errors import Coord
from quokka.verifier.ir import fpsem, semantics
from quokka.verifier.ir.definedness import UninitialisedRead, uninitialised_reads

InputFn = Callable[[ir.VarDecl, ir.Havoc], int]
Inputs = Sequence[int] | InputFn
Env = list[Any]
Fn = Callable[[Env], Any]
Pred = Callable[[Env], bool]
Instr = Callable[[Env], int]


@dataclass(frozen=True)
class LoopHeadState:
    """The integer variables (IR name -> value) when the head of loop `loop_id` is reached."""

    loop_id: str
    iteration: int
    values: Mapping[str, int]


@dataclass(frozen=True)
class Execution:
    """The result of one run.

    `outcome` is "error" (an Assert failed: `error` is it), "exit" (main returned), "blocked" (an
    Assume was false, which includes abort/exit), "ub" (division by zero, bad shift, array index
    out of bounds) or "limit" (`max_steps` reached).
    """

    outcome: str
    error: ir.Assert | None
    path: tuple[Coord, ...]
    loop_heads: tuple[LoopHeadState, ...]
    inputs_used: tuple[int, ...]
    overflows: tuple[Coord, ...]
    steps: int
    message: str
    havocs: tuple[ir.Havoc, ...] = ()
    uninitialised_reads: tuple[UninitialisedRead, ...] = ()
    final: Mapping[str, int] = field(default_factory=dict)  # integer variables when the run ended


class _Stop(Exception):
    """Ends a run early at a failed Assert ("error") or Assume ("blocked")."""

    def __init__(self, outcome: str, stmt: ir.Assert | ir.Assume) -> None:
        super().__init__(outcome)
        self.outcome = outcome
        self.stmt = stmt


class _Array(dict[int, int]):
    """An array value: index -> element; missing elements are 0 or drawn lazily by `fill`."""

    __slots__ = ("fill",)

    def __init__(self, items: Mapping[int, int] | None = None, fill: Callable[[int], int] | None = None):
        super().__init__(items or {})
        self.fill = fill

    def __missing__(self, index: int) -> int:
        return 0 if self.fill is None else self.fill(index)

    def clone(self) -> _Array:
        return _Array(self, self.fill)


# ----------------------------------------------------------------------------- compiled program


@dataclass(frozen=True)
class _Compiled:
    code: tuple[Instr, ...]
    start: int  # the first pc to run
    coords: tuple[Coord | None, ...]
    coord_ids: tuple[int, ...]  # per instruction: index into coord_table, -1 for none
    coord_table: tuple[Coord, ...]
    loop_ids: tuple[str, ...]
    int_names: tuple[str, ...]
    int_values: Callable[[Env], Sequence[int]]
    array_slots: tuple[int, ...]
    float_slots: tuple[int, ...]
    size: int
    sources: tuple[ir.Stmt | None, ...]  # per instruction: the statement it executes, if any

    def initial_env(self, state: _RunState) -> Env:
        env: Env = [0] * self.size
        env[0] = state
        for slot in self.array_slots:
            env[slot] = _Array()
        for slot in self.float_slots:
            env[slot] = 0.0
        return env


class _RunState:
    """The bookkeeping of one run (slot 0 of the environment); instructions call into it."""

    def __init__(self, compiled: _Compiled, inputs: Inputs, max_heads: int) -> None:
        self._compiled = compiled
        self._inputs = inputs
        self._next = 0
        self.used: list[int] = []
        self.havocs: list[ir.Havoc] = []
        self.overflows: dict[Coord, None] = {}
        self.heads: list[LoopHeadState] = []
        self.heads_left = max_heads
        self.iterations = [0] * len(compiled.loop_ids)

    def take(self, decl: ir.VarDecl, stmt: ir.Havoc, ty: ir.IntType) -> int:
        """The next input, converted to `ty` and recorded."""
        value = semantics.wrap(self._raw(decl, stmt), ty)
        self.used.append(value)
        self.havocs.append(stmt)
        return value

    def take_float(self, decl: ir.VarDecl, stmt: ir.Havoc, ty: ir.FloatType) -> float:
        """The value whose IEEE encoding is the next input (modulo 2**bits); the encoding is recorded."""
        bits = self._raw(decl, stmt) % (1 << ty.bits)
        self.used.append(bits)
        self.havocs.append(stmt)
        return fpsem.from_bits(bits, ty)

    def _raw(self, decl: ir.VarDecl, stmt: ir.Havoc) -> int:
        if callable(self._inputs):
            return self._inputs(decl, stmt)
        if self._next < len(self._inputs):
            self._next += 1
            return self._inputs[self._next - 1]
        return 0

    def overflow(self, coord: Coord) -> None:
        self.overflows[coord] = None

    def head(self, loop: int, env: Env, entry: bool) -> None:
        iteration = 0 if entry else self.iterations[loop]
        self.iterations[loop] = iteration + 1
        if self.heads_left > 0:
            self.heads_left -= 1
            compiled = self._compiled
            values = dict(zip(compiled.int_names, compiled.int_values(env), strict=True))
            self.heads.append(LoopHeadState(compiled.loop_ids[loop], iteration, values))


# ----------------------------------------------------------------------------- expressions

_COMPARE: dict[str, Callable[[Fn, Fn], Pred]] = {
    "<": lambda a, b: lambda env: a(env) < b(env),
    "<=": lambda a, b: lambda env: a(env) <= b(env),
    ">": lambda a, b: lambda env: a(env) > b(env),
    ">=": lambda a, b: lambda env: a(env) >= b(env),
    "==": lambda a, b: lambda env: a(env) == b(env),
    "!=": lambda a, b: lambda env: a(env) != b(env),
}
_COMPARE_CONST: dict[str, Callable[[Fn, int], Pred]] = {
    "<": lambda a, k: lambda env: a(env) < k,
    "<=": lambda a, k: lambda env: a(env) <= k,
    ">": lambda a, k: lambda env: a(env) > k,
    ">=": lambda a, k: lambda env: a(env) >= k,
    "==": lambda a, k: lambda env: a(env) == k,
    "!=": lambda a, k: lambda env: a(env) != k,
}
# Exact (mathematical) results, as `semantics.arith` computes them before wrapping.
_RING = {"+": operator.add, "-": operator.sub, "*": operator.mul}


def _out_of_range(ty: ir.IntType, coord: Coord) -> Callable[[Env, int], int]:
    """What to do with a result outside `ty`: unsigned wraps, signed is recorded as an overflow."""
    if ty.signed:

        def overflow(env: Env, v: int) -> int:
            env[0].overflow(coord)
            return v

        return overflow
    wrap = semantics.wrap
    return lambda env, v: wrap(v, ty)


def _in_type(raw: Fn, ty: ir.IntType, coord: Coord) -> Fn:
    lo, hi, fix = ty.min, ty.max, _out_of_range(ty, coord)
    return lambda env: v if lo <= (v := raw(env)) <= hi else fix(env, v)


def _ring(op: str, left: ir.Expr, right: ir.Expr, a: Fn, b: Fn, ty: ir.IntType, coord: Coord) -> Fn:
    """`+ - *`, fused with the range check and specialised for a constant operand."""
    f, lo, hi, fix = _RING[op], ty.min, ty.max, _out_of_range(ty, coord)
    if isinstance(right, ir.Const):
        k = right.value
        return lambda env: v if lo <= (v := f(a(env), k)) <= hi else fix(env, v)
    if isinstance(left, ir.Const):
        k = left.value
        return lambda env: v if lo <= (v := f(k, b(env))) <= hi else fix(env, v)
    return lambda env: v if lo <= (v := f(a(env), b(env))) <= hi else fix(env, v)


_VALUE, _TRUTH = "value", "truth"
# How to compile a node: what it needs compiled first (sub-expression, context), and how to build
# its closure from theirs.
_Rule = tuple[list[tuple[ir.Expr, str]], Callable[[list[Any]], Any]]


class _Exprs:
    """Compiles expressions of one program; `coord` is the statement being compiled.

    A node compiles in one of two contexts: "value" (a closure returning the C value) or "truth"
    (a closure returning `value != 0` as a Python bool, which spares conditions the int 0/1 round
    trip). The walk uses an explicit stack: expressions nested deeper than Python's recursion limit
    compile (evaluating them may still hit the limit; `run` reports that as "limit").
    """

    def __init__(self, slots: dict[str, int], file: str) -> None:
        self.slots = slots
        self.coord = Coord(file, 0, 0)

    def value(self, e: ir.Expr) -> Fn:
        fn: Fn = self._compile(e, _VALUE)
        return fn

    def truth(self, e: ir.Expr) -> Pred:
        fn: Pred = self._compile(e, _TRUTH)
        return fn

    def updates(self, chain: Sequence[ir.Store]) -> _Updates:
        check = _bounds_check(chain[0].type)
        return check, tuple((self.value(s.index), self.value(s.value)) for s in chain)

    def _compile(self, root: ir.Expr, context: str) -> Any:
        done: dict[tuple[int, str], Any] = {}
        stack: list[tuple[ir.Expr, str, _Rule | None]] = [(root, context, None)]
        while stack:
            node, ctx, rule = stack.pop()
            if (id(node), ctx) in done:
                continue
            if rule is None:
                rule = self._rule(node, ctx)
                stack.append((node, ctx, rule))
                stack.extend((d, c, None) for d, c in reversed(rule[0]))
            else:
                done[id(node), ctx] = rule[1]([done[id(d), c] for d, c in rule[0]])
        return done[id(root), context]

    def _rule(self, e: ir.Expr, ctx: str) -> _Rule:
        if ctx == _TRUTH:
            return self._truth_rule(e)
        if isinstance(e, ir.FLOAT_NODES):
            return _float_rule(e)
        if isinstance(e, ir.Const):
            k = e.value
            return [], lambda _: lambda env: k
        if isinstance(e, ir.Var):
            return [], lambda _: operator.itemgetter(self.slots[e.name])
        if isinstance(e, ir.Binary) and e.op not in _COMPARE and e.op not in ("&&", "||"):
            return [(e.left, _VALUE), (e.right, _VALUE)], lambda f: self._arith(e, f[0], f[1])
        if isinstance(e, ir.Unary) and e.op != "!":
            return [(e.operand, _VALUE)], lambda f: self._unary(e, f[0])
        if isinstance(e, (ir.Binary, ir.Unary, ir.Forall)):
            return [(e, _TRUTH)], lambda f: _as_int(f[0])
        if isinstance(e, ir.Cast):
            return [(e.operand, _VALUE)], lambda f: _cast(e.type, f[0])
        if isinstance(e, ir.Ite):
            return [(e.cond, _TRUTH), (e.then, _VALUE), (e.orelse, _VALUE)], lambda f: _ite(*f)
        if isinstance(e, ir.Select):
            return [(e.array, _VALUE), (e.index, _VALUE)], lambda f: _select(e, f[0], f[1])
        if isinstance(e, ir.Store):
            return self._store_rule(e)
        raise TypeError(f"not an IR expression: {type(e).__name__}")

    def _truth_rule(self, e: ir.Expr) -> _Rule:
        if isinstance(e, ir.FloatCompare):  # Python's float comparisons are IEEE's (NaN included)
            return [(e.left, _VALUE), (e.right, _VALUE)], lambda f: _COMPARE[e.op](f[0], f[1])
        if isinstance(e, ir.Binary) and e.op in _COMPARE:
            if isinstance(e.right, ir.Const):
                k, op = e.right.value, e.op
                return [(e.left, _VALUE)], lambda f: _COMPARE_CONST[op](f[0], k)
            return [(e.left, _VALUE), (e.right, _VALUE)], lambda f: _COMPARE[e.op](f[0], f[1])
        if isinstance(e, ir.Binary) and e.op in ("&&", "||"):
            return [(e.left, _TRUTH), (e.right, _TRUTH)], lambda f: _logic(e.op, f[0], f[1])
        if isinstance(e, ir.Unary) and e.op == "!":
            return [(e.operand, _TRUTH)], lambda f: _not(f[0])
        if isinstance(e, ir.Const):
            k = e.value != 0
            return [], lambda _: lambda env: k
        if isinstance(e, ir.Forall):
            slot = self.slots.setdefault(e.var.name, len(self.slots) + 1)
            return [(e.lo, _VALUE), (e.hi, _VALUE), (e.body, _TRUTH)], lambda f: _forall(slot, *f)
        return [(e, _VALUE)], lambda f: _nonzero(f[0])

    def _store_rule(self, e: ir.Store) -> _Rule:
        base, chain = ir.store_chain(e)
        deps = [(base, _VALUE)] + [(x, _VALUE) for s in chain for x in (s.index, s.value)]

        def build(f: list[Fn]) -> Fn:
            pairs = tuple((f[k], f[k + 1]) for k in range(1, len(f), 2))
            return _store(f[0], (_bounds_check(e.type), pairs))

        return deps, build

    def _arith(self, e: ir.Binary, a: Fn, b: Fn) -> Fn:
        ty, op = e.type, e.op
        if op in _RING and not ty.is_bool:
            return _ring(op, e.left, e.right, a, b, ty, self.coord)
        arith = semantics.arith
        raw: Fn = lambda env: arith(op, a(env), b(env), ty)  # noqa: E731
        if ty.signed and op in ("/", "<<"):
            return _in_type(raw, ty, self.coord)
        if ty.signed and op == "%":
            return _checked_mod(a, b, ty, self.coord)
        return raw

    def _unary(self, e: ir.Unary, a: Fn) -> Fn:
        ty, op, unary = e.type, e.op, semantics.unary
        if op == "-" and ty.signed:
            return _in_type(lambda env: -a(env), ty, self.coord)
        return lambda env: unary(op, a(env), ty)


def _float_rule(e: ir.FloatExpr) -> _Rule:
    """How to compile a floating-point node (values only: its conditions are `FloatCompare`s)."""
    if isinstance(e, ir.FloatConst):
        k = e.value
        return [], lambda _: lambda env: k
    if isinstance(e, ir.FloatUnary):
        return [(e.operand, _VALUE)], lambda f: _float_neg(f[0])
    if isinstance(e, (ir.FloatBinary, ir.FloatCompare)):
        return [(e.left, _VALUE), (e.right, _VALUE)], lambda f: _float_binary(e, f[0], f[1])
    if isinstance(e, ir.ToFloat):
        return [(e.operand, _VALUE)], lambda f: _to_float(e.operand.type, e.type, f[0])
    return [(e.operand, _VALUE)], lambda f: _float_to_int(e.type, f[0])


def _float_neg(a: Fn) -> Fn:
    return lambda env: -a(env)


def _float_binary(e: ir.FloatBinary | ir.FloatCompare, a: Fn, b: Fn) -> Fn:
    op = e.op
    if isinstance(e, ir.FloatCompare):
        return _as_int(_COMPARE[op](a, b))
    if e.type == ir.DOUBLE and op in _RING:  # Python's float + - * are IEEE double's (inf, NaN: no exception)
        f = _RING[op]
        return lambda env: f(a(env), b(env))
    arith, ty = fpsem.arith, e.type
    return lambda env: arith(op, a(env), b(env), ty)


def _to_float(source: object, ty: ir.FloatType, a: Fn) -> Fn:
    if isinstance(source, ir.IntType):
        from_int = fpsem.from_int
        return lambda env: from_int(a(env), ty)
    convert = fpsem.convert
    return lambda env: convert(a(env), ty)


def _float_to_int(ty: ir.IntType, a: Fn) -> Fn:
    to_int = fpsem.to_int
    return lambda env: to_int(a(env), ty)


def _logic(op: str, a: Pred, b: Pred) -> Pred:
    if op == "&&":
        return lambda env: a(env) and b(env)
    return lambda env: a(env) or b(env)


def _not(a: Pred) -> Pred:
    return lambda env: not a(env)


def _nonzero(v: Fn) -> Pred:
    return lambda env: v(env) != 0


def _cast(ty: ir.IntType, a: Fn) -> Fn:
    wrap = semantics.wrap
    if ty.is_bool:
        return lambda env: wrap(a(env), ty)
    lo, hi = ty.min, ty.max
    return lambda env: v if lo <= (v := a(env)) <= hi else wrap(v, ty)


def _forall(slot: int, lo: Fn, hi: Fn, body: Pred) -> Pred:
    """Every k in [lo, hi) satisfies `body`, k in `slot` meanwhile (the slot of a bound variable)."""

    def forall(env: Env) -> bool:
        saved = env[slot]
        try:
            for k in range(lo(env), hi(env)):
                env[slot] = k
                if not body(env):
                    return False
            return True
        finally:
            env[slot] = saved

    return forall


def _ite(c: Pred, t: Fn, o: Fn) -> Fn:
    return lambda env: t(env) if c(env) else o(env)


def _select(e: ir.Select, array: Fn, index: Fn) -> Fn:
    assert isinstance(e.array.type, ir.ArrayType)
    check = _bounds_check(e.array.type)

    def select(env: Env) -> int:
        a: _Array = array(env)
        i: int = index(env)
        check(i)
        return a[i]

    return select


def _store(array: Fn, updates: _Updates) -> Fn:
    def store(env: Env) -> _Array:
        new: _Array = array(env).clone()
        _apply(new, updates, env)
        return new

    return store


# A chain of stores into one array: the bounds check, then (index, value) in application order.
_Updates = tuple[Callable[[int], None], tuple[tuple[Fn, Fn], ...]]


def _apply(array: _Array, updates: _Updates, env: Env) -> None:
    """Evaluate every index and value first (they read the old array), then store them."""
    check, pairs = updates
    values = [(index(env), value(env)) for index, value in pairs]
    for i, v in values:
        check(i)
        array[i] = v


def _as_int(p: Pred) -> Fn:
    return lambda env: 1 if p(env) else 0


def _checked_mod(a: Fn, b: Fn, ty: ir.IntType, coord: Coord) -> Fn:
    lo, arith = ty.min, semantics.arith

    def mod(env: Env) -> int:
        x, y = a(env), b(env)
        if x == lo and y == -1:  # INT_MIN / -1 overflows, so INT_MIN % -1 is undefined too
            env[0].overflow(coord)
        return arith("%", x, y, ty)

    return mod


def _bounds_check(ty: ir.ArrayType) -> Callable[[int], None]:
    size = ty.size

    def check(i: int) -> None:
        if i < 0 or (size is not None and i >= size):
            raise semantics.UndefinedBehaviour(f"index {i} out of bounds of {ty.name}")

    return check


# ----------------------------------------------------------------------------- statements

# An instruction waiting for its place: built from the pc that follows it in its block.
_Pending = Callable[[int], Instr]


class _Layout:
    """Lays the control-flow graph out as a flat instruction list.

    Each block becomes its statements, then an instruction for its terminator when it has one:
    a `Branch`, or a `Jump` with a coordinate (break, continue, return, goto, a loop's back
    edge). A jump without one is no instruction: the pc before it goes straight to its target.
    An edge into a loop head goes through one of the head's two recording instructions, the
    entry one or (for a back edge) the iteration one; a back edge whose coordinate is the
    loop's is that instruction itself.
    """

    def __init__(self, program: ir.Program, slots: dict[str, int]) -> None:
        self.cfg = build_cfg(program)
        self.decls = {d.name: d for d in program.variables}
        self.slots = slots
        self.exprs = _Exprs(slots, program.file)
        self.nowhere = Coord(program.file, 0, 0)  # where overflows in statements without a coord are
        self.loop_index = {loop_id: k for k, loop_id in enumerate(self.cfg.loops)}
        infos = {info.id: info.coord for info in program.loops}
        self.head_coords = {b.id: infos.get(b.head) for b in self.cfg.blocks if b.head is not None}
        self.pending: list[tuple[_Pending, int | None]] = []  # the maker; the block it ends, if any
        self.coords: list[Coord | None] = []
        self.sources: list[ir.Stmt | None] = []  # per instruction: the statement it executes, if any
        self.block_pc: dict[int, int] = {}
        self.head_pc: dict[tuple[int, bool], int] = {}

    def run(self) -> tuple[tuple[Instr, ...], tuple[Coord | None, ...], int]:
        """The instructions, their coordinates and the first pc (`sources` then holds their statements)."""
        for b in self.cfg.order:
            self._block(self.cfg.blocks[b])
        code = (make(pc + 1 if b is None else self._through(b)) for pc, (make, b) in enumerate(self.pending))
        return tuple(code), tuple(self.coords), self._start(self.cfg.entry)

    def _emit(
        self, coord: Coord | None, make: _Pending, source: ir.Stmt | None = None, ends: int | None = None
    ) -> None:
        self.pending.append((make, ends))
        self.coords.append(coord)
        self.sources.append(source)

    def _block(self, block: BasicBlock) -> None:
        b = block.id
        if block.head is not None:
            self._record(b, block.head, True)
            self._record(b, block.head, False)
        end = block.end
        silent = self._silent(end)
        if block.stmts or not silent:
            self.block_pc[b] = len(self.pending)
        last = len(block.stmts) - 1 if silent else -1
        for n, s in enumerate(block.stmts):
            self.exprs.coord = s.coord or self.nowhere
            self._emit(s.coord, self._simple(s), s, b if n == last else None)
        if isinstance(end, Branch):
            self._branch(b, end)
        elif not silent:
            assert isinstance(end, Jump)
            self._emit(end.coord, lambda _: _goto(self._enter(b, end.target)))

    def _record(self, b: int, loop_id: str, entry: bool) -> None:
        k = self.loop_index[loop_id]
        self.head_pc[b, entry] = len(self.pending)
        self._emit(self.head_coords[b], lambda _: _head(k, entry, self._start(b)))

    def _silent(self, end: Terminator) -> bool:
        """Whether `end` needs no instruction of its own."""
        if isinstance(end, Branch):
            return False
        return not isinstance(end, Jump) or end.coord is None or end.coord == self.head_coords.get(end.target)

    def _branch(self, b: int, end: Branch) -> None:
        self.exprs.coord = end.coord or self.nowhere
        cond = self.exprs.truth(end.cond)
        source = ir.If(end.cond, (), (), end.coord)  # what `uninitialised_reads` knows a condition by
        then, orelse = end.then, end.orelse
        self._emit(end.coord, lambda _: _branch(cond, self._enter(b, then), self._enter(b, orelse)), source)

    def _start(self, b: int) -> int:
        """The pc that runs block `b` (its head recording done)."""
        pc = self.block_pc.get(b)
        return self._through(b) if pc is None else pc

    def _through(self, b: int) -> int:
        """Where control goes after the statements of `b` when its terminator is no instruction."""
        end = self.cfg.blocks[b].end
        return self._enter(b, end.target) if isinstance(end, Jump) else len(self.pending)

    def _enter(self, src: int, dst: int) -> int:
        """The pc that runs when control goes from block `src` to block `dst`."""
        while True:  # along jumps that are no instructions; every cycle passes a head
            if self.cfg.blocks[dst].head is not None:
                return self.head_pc[dst, not self.cfg.is_back(src, dst)]
            if dst in self.block_pc:
                return self.block_pc[dst]
            end = self.cfg.blocks[dst].end
            if not isinstance(end, Jump):
                return len(self.pending)
            src, dst = dst, end.target

    def _simple(self, s: Simple) -> _Pending:
        if isinstance(s, ir.Assign):
            return self._assign(s)
        if isinstance(s, ir.Havoc):
            return self._havoc(s)
        if isinstance(s, ir.Assume):
            return _check(self.exprs.truth(s.cond), "blocked", s)
        return _check(self.exprs.truth(s.cond), "error", s)

    def _assign(self, s: ir.Assign) -> _Pending:
        slot, decl = self.slots[s.target], self.decls[s.target]
        v = s.value
        if isinstance(decl.type, (ir.IntType, ir.FloatType)):
            return _set(slot, self.exprs.value(v))
        if isinstance(v, ir.Store):
            base, chain = ir.store_chain(v)
            if isinstance(base, ir.Var) and base.name == s.target:
                return _store_in_place(slot, self.exprs.updates(chain))
        fresh = self.exprs.value(v)
        copy: Fn = (lambda env: fresh(env).clone()) if isinstance(v, ir.Var) else fresh
        return _set(slot, copy)

    def _havoc(self, s: ir.Havoc) -> _Pending:
        slot, decl = self.slots[s.target], self.decls[s.target]
        if isinstance(decl.type, ir.ArrayType):
            return _havoc_array(slot, decl, s, decl.type.elem)
        return _havoc_scalar(slot, decl, s, decl.type)


def _goto(target: int) -> Instr:
    return lambda env: target


def _branch(cond: Pred, then: int, orelse: int) -> Instr:
    return lambda env: then if cond(env) else orelse


def _head(loop: int, entry: bool, target: int) -> Instr:
    def head(env: Env) -> int:
        env[0].head(loop, env, entry)
        return target

    return head


def _check(cond: Pred, outcome: str, stmt: ir.Assert | ir.Assume) -> _Pending:
    def make(nxt: int) -> Instr:
        def check(env: Env) -> int:
            if cond(env):
                return nxt
            raise _Stop(outcome, stmt)

        return check

    return make


def _set(slot: int, value: Fn) -> _Pending:
    def make(nxt: int) -> Instr:
        def assign(env: Env) -> int:
            env[slot] = value(env)
            return nxt

        return assign

    return make


def _then_next(action: Callable[[Env], None]) -> _Pending:
    """An instruction that performs `action` and continues with the next one."""

    def make(nxt: int) -> Instr:
        def instruction(env: Env) -> int:
            action(env)
            return nxt

        return instruction

    return make


def _store_in_place(slot: int, updates: _Updates) -> _Pending:
    return _then_next(lambda env: _apply(env[slot], updates, env))


def _havoc_scalar(slot: int, decl: ir.VarDecl, stmt: ir.Havoc, ty: ir.ScalarType) -> _Pending:
    if isinstance(ty, ir.FloatType):

        def havoc_float(env: Env) -> None:
            env[slot] = env[0].take_float(decl, stmt, ty)

        return _then_next(havoc_float)

    def havoc(env: Env) -> None:
        env[slot] = env[0].take(decl, stmt, ty)

    return _then_next(havoc)


def _havoc_array(slot: int, decl: ir.VarDecl, stmt: ir.Havoc, elem: ir.IntType) -> _Pending:
    def havoc(env: Env) -> None:
        state: _RunState = env[0]
        drawn: dict[int, int] = {}

        def fill(index: int) -> int:
            if index not in drawn:
                drawn[index] = state.take(decl, stmt, elem)
            return drawn[index]

        env[slot] = _Array(fill=fill)

    return _then_next(havoc)


# ----------------------------------------------------------------------------- running


def _compile(program: ir.Program) -> _Compiled:
    slots = {d.name: k + 1 for k, d in enumerate(program.variables)}
    layout = _Layout(program, slots)  # adds a slot for each quantified variable it compiles
    code, coords, start = layout.run()
    ints = [d for d in program.variables if isinstance(d.type, ir.IntType)]
    int_slots = [slots[d.name] for d in ints]
    table = tuple(dict.fromkeys(c for c in coords if c is not None))
    index = {c: k for k, c in enumerate(table)}
    return _Compiled(
        code=code,
        start=start,
        coords=coords,
        coord_ids=tuple(-1 if c is None else index[c] for c in coords),
        coord_table=table,
        loop_ids=tuple(layout.cfg.loops),
        int_names=tuple(d.name for d in ints),
        int_values=_getter(int_slots),
        array_slots=tuple(slots[d.name] for d in program.variables if isinstance(d.type, ir.ArrayType)),
        float_slots=tuple(slots[d.name] for d in program.variables if isinstance(d.type, ir.FloatType)),
        size=len(slots) + 1,
        sources=tuple(layout.sources),
    )


def _getter(slots: Sequence[int]) -> Callable[[Env], Sequence[int]]:
    if len(slots) >= 2:
        return operator.itemgetter(*slots)
    if len(slots) == 1:
        only = slots[0]
        return lambda env: (env[only],)
    return lambda env: ()


def _execute(compiled: _Compiled, env: Env, max_steps: int, trace: list[int] | None) -> tuple[Any, ...]:
    """Run the instructions: (outcome, stopping statement, detail, last pc, steps)."""
    code = compiled.code
    pc, steps, n = compiled.start, 0, len(code)
    try:
        if trace is None:
            while pc < n and steps < max_steps:
                steps += 1
                pc = code[pc](env)
        else:
            record = trace.append
            while pc < n and steps < max_steps:
                steps += 1
                record(pc)
                pc = code[pc](env)
    except _Stop as stop:
        return stop.outcome, stop.stmt, "", pc, steps
    except semantics.UndefinedBehaviour as ub:
        return "ub", None, str(ub), pc, steps
    except RecursionError:
        return "limit", None, "an expression is nested too deeply for Python's recursion limit", pc, steps
    return ("exit" if pc >= n else "limit"), None, "", pc, steps


LONG_RUN_STEPS = 3_000_000  # a replayed counterexample may run this long (about 4 s)


class Runner:
    """A program compiled once for repeated execution (see the module docstring)."""

    def __init__(self, program: ir.Program) -> None:
        self.program = program
        self._compiled = _compile(program)

    def run(
        self,
        inputs: Inputs,
        *,
        max_steps: int = 100_000,
        max_loop_head_states: int = 10_000,
        record_path: bool = True,
        check_uninitialised: bool = False,
    ) -> Execution:
        """Execute the program once. `record_path=False` leaves `path` empty (a little faster);
        `check_uninitialised` (which needs the path) fills `uninitialised_reads`."""
        compiled = self._compiled
        state = _RunState(compiled, inputs, max_loop_head_states)
        trace: list[int] | None = [] if record_path else None
        env = compiled.initial_env(state)
        outcome, stmt, detail, pc, steps = _execute(compiled, env, max_steps, trace)
        return Execution(
            outcome=outcome,
            error=stmt if isinstance(stmt, ir.Assert) else None,
            path=self._path(trace or ()),
            loop_heads=tuple(state.heads),
            inputs_used=tuple(state.used),
            overflows=tuple(state.overflows),
            steps=steps,
            message=self._message(outcome, stmt, detail, pc),
            havocs=tuple(state.havocs),
            uninitialised_reads=self._uninitialised(trace) if check_uninitialised else (),
            final=dict(zip(compiled.int_names, compiled.int_values(env), strict=True)),
        )

    def _uninitialised(self, trace: Sequence[int] | None) -> tuple[UninitialisedRead, ...]:
        if trace is None:
            raise ValueError("check_uninitialised needs record_path")
        sources = self._compiled.sources
        return uninitialised_reads(self.program, (sources[pc] for pc in trace))

    def _path(self, trace: Sequence[int]) -> tuple[Coord, ...]:
        ids, table = self._compiled.coord_ids, self._compiled.coord_table
        path: list[Coord] = []
        last = -1
        for pc in trace:
            c = ids[pc]
            if c >= 0 and c != last:
                path.append(table[c])
                last = c
        return tuple(path)

    def _message(self, outcome: str, stmt: ir.Assert | ir.Assume | None, detail: str, pc: int) -> str:
        coords = self._compiled.coords
        where = coords[pc] if 0 <= pc < len(coords) else None
        if stmt is not None and outcome == "error":
            assert isinstance(stmt, ir.Assert)
            site = f" (reached from {stmt.site})" if stmt.site and stmt.site != stmt.coord else ""
            return f"assertion failed at {stmt.coord}{site}"
        if stmt is not None:
            return f"assumption false at {stmt.coord}"
        if outcome == "ub":
            return f"undefined behaviour at {where}: {detail}"
        if outcome == "limit":
            return f"{detail or 'step limit reached'} at {where}"
        return "main returned"


def compile_program(program: ir.Program) -> Runner:
    """Compile `program` once; call `.run(inputs)` on the result as often as needed."""
    return Runner(program)


def run(
    program: ir.Program,
    inputs: Inputs,
    *,
    max_steps: int = 100_000,
    max_loop_head_states: int = 10_000,
    check_uninitialised: bool = False,
) -> Execution:
    """Compile and run `program` once (use `compile_program` to run it many times)."""
    return compile_program(program).run(
        inputs,
        max_steps=max_steps,
        max_loop_head_states=max_loop_head_states,
        check_uninitialised=check_uninitialised,
    )
