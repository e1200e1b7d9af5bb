"""Incremental unrolling of the structured IR into one Z3 formula, for bounded model checking.

Every `Loop` instance is unrolled `bound` times; what would run the next iteration is its
*frontier* (cut: not followed). Raising the bound extends every live frontier by more
iterations and only ever *adds* facts, so one incremental solver can serve every bound.

Join points that later iterations may still reach (the exit of a loop that is not fully
unrolled, the end of a function whose loops may `return`) are *open junctions*: a guard
literal `g` and fresh constants `x` with `g -> (c_1 | ... | c_n | open)` and `c_i -> x == x_i`.
Each extension chains `open -> (new contributions | open')`; a check assumes the newest
`open` literals false, i.e. paths needing more iterations are cut. Every other join is an
exact if-then-else merge. Guards are sound in both directions along the path a model takes:
a guard that is true in a model is reached by the one execution the Havoc values determine.

Paths on which C's behaviour is undefined (division by zero, bad shift count, out-of-bounds
array index, signed overflow) are blocked, so a model is an execution the interpreter replays.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import z3

from ..ir import (
    ArrayType,
    Assert,
    Assign,
    Assume,
    Binary,
    Block,
    Break,
    Const,
    Continue,
    Expr,
    Havoc,
    If,
    IntType,
    Ite,
    Loop,
    Program,
    Return,
    Scope,
    Select,
    Stmt,
    Store,
    Type,
    Unary,
    Var,
    children,
    stmt_children,
    walk_stmts,
)
from ..smt import Translator, in_range, sort_of

Key = tuple[int, ...]
Env = dict[str, z3.ExprRef]


class FormulaTooLarge(Exception):
    """The unrolling exceeded its size cap."""


class OutOfTime(Exception):
    """The budget ran out while building the unrolling."""


@dataclass(frozen=True)
class SymState:
    """A symbolic program state: the path condition and every variable's value."""

    guard: z3.BoolRef
    env: Env


@dataclass(frozen=True)
class HavocSite:
    """One executed-if-`guard` Havoc; `key` orders sites as an execution meets them."""

    key: Key
    guard: z3.BoolRef
    value: z3.ExprRef
    stmt: Havoc
    type: Type


@dataclass(frozen=True)
class ErrorSite:
    """An Assert instance; `flag` holds exactly when the path gets here and the condition is 0."""

    key: Key
    flag: z3.BoolRef
    stmt: Assert


@dataclass(frozen=True)
class Settings:
    no_overflow: bool = True
    max_assertions: int = 400_000
    solving: str = "incremental"  # or "fresh": a new pre-processing solver per query


# ----------------------------------------------------------------------------- the formula sink


class Formula:
    """The facts of the unrolling (only ever appended to), fresh names, definitions."""

    def __init__(self, settings: Settings, tick: Callable[[], None]) -> None:
        self.facts: list[z3.BoolRef] = []
        self.settings = settings
        self.tick = tick
        self.count = 0
        self._fresh = 0

    def add(self, fact: z3.BoolRef) -> None:
        if z3.is_true(fact):
            return
        self.count += 1
        if self.count > self.settings.max_assertions:
            raise FormulaTooLarge(f"more than {self.settings.max_assertions} assertions")
        self.facts.append(fact)

    def fresh(self, name: str, ty: Type | None = None) -> z3.ExprRef:
        self._fresh += 1
        if ty is None:
            return z3.Bool(f"{name}#{self._fresh}")
        return z3.Const(f"{name}#{self._fresh}", sort_of(ty))

    def define(self, name: str, term: z3.ExprRef, ty: Type) -> z3.ExprRef:
        """`term`, simplified; named by a fresh constant unless it is a value or a constant."""
        term = z3.simplify(term)
        if _is_atom(term):
            return term
        const = self.fresh(name, ty)
        self.add(const == term)
        return const

    def conj(self, guard: z3.BoolRef, *conds: z3.BoolRef) -> z3.BoolRef:
        """`guard & conds`, as a fresh literal unless it folds to a constant or a literal."""
        parts = [z3.simplify(c) for c in conds]
        if any(z3.is_false(p) for p in parts) or z3.is_false(guard):
            return z3.BoolVal(False)
        parts = [p for p in parts if not z3.is_true(p)]
        if not parts:
            return guard
        if z3.is_true(guard) and len(parts) == 1 and _is_atom(parts[0]):
            return parts[0]
        lit = self.fresh("g")
        self.add(lit == z3.And(guard, *parts))
        return lit


def _is_atom(t: z3.ExprRef) -> bool:
    if z3.is_int_value(t) or z3.is_true(t) or z3.is_false(t):
        return True
    return bool(z3.is_const(t) and t.decl().kind() == z3.Z3_OP_UNINTERPRETED)


# ----------------------------------------------------------------------------- joins


class Junction:
    """An open join point (see the module docstring)."""

    def __init__(self, fm: Formula, entry: SymState, names: Sequence[str], types: Mapping[str, Type]) -> None:
        self.fm = fm
        self.names = tuple(names)
        self.guard: z3.BoolRef = fm.fresh("j")
        self.env: Env = dict(entry.env)
        for n in self.names:
            self.env[n] = fm.fresh(n, types[n])
        self.open: z3.BoolRef | None = fm.fresh("open")
        fm.add(z3.Implies(self.guard, self.open))
        self._pending: list[z3.BoolRef] = []

    @property
    def state(self) -> SymState:
        return SymState(self.guard, self.env)

    def add(self, state: SymState) -> None:
        assert self.open is not None, "contribution to a closed junction"
        if z3.is_false(state.guard):
            return
        for n in self.names:
            self.fm.add(z3.Implies(state.guard, self.env[n] == state.env[n]))
        self._pending.append(state.guard)

    def flush(self, keep_open: bool) -> None:
        """Chain the contributions since the last flush; close the junction unless `keep_open`."""
        if self.open is None or (keep_open and not self._pending):
            return
        nxt = self.fm.fresh("open") if keep_open else None
        self.fm.add(z3.Implies(self.open, z3.Or(*self._pending, *([nxt] if nxt is not None else []))))
        self.open, self._pending = nxt, []


class Sink:
    """Where states leave to: a loop's exit or a scope's end. Exact merge, or an open junction."""

    def __init__(self) -> None:
        self.states: list[SymState] = []
        self.junction: Junction | None = None
        self.sources: list[LoopInstance] = []
        self.closed = False

    def add(self, state: SymState) -> None:
        if self.junction is not None:
            self.junction.add(state)
        else:
            assert not self.closed, "contribution to a merged sink"
            self.states.append(state)

    def live(self) -> bool:
        return any(src.head is not None for src in self.sources)


@dataclass
class LoopFrame:
    """Targets of `break` and `continue` inside one iteration."""

    exit: Sink
    continues: list[SymState] = field(default_factory=list)


@dataclass(frozen=True)
class Ctx:
    key: Key
    returns: Sink
    loop: LoopFrame | None = None

    def at(self, *more: int) -> Ctx:
        return replace(self, key=self.key + more)


class LoopInstance:
    """One dynamic instance of a `Loop` (a new one per iteration of each enclosing loop)."""

    def __init__(self, unroller: Unroller, loop: Loop, entry: SymState, ctx: Ctx) -> None:
        self.unroller = unroller
        self.loop = loop
        self.entry = entry
        self.ctx = ctx
        self.exit = Sink()
        self.exit.sources.append(self)
        self.head: SymState | None = entry
        self.iterations = 0

    def advance(self, bound: int) -> None:
        while self.head is not None and self.iterations < bound:
            self.iterations += 1
            self.head = self._iteration(self.head, self.iterations)

    def _iteration(self, head: SymState, n: int) -> SymState | None:
        ex = self.unroller
        frame = LoopFrame(self.exit)
        ctx = replace(self.ctx, loop=frame)
        end = ex.block(self.loop.body, head, ctx.at(n, 0))
        mid = ex.merge([end, *frame.continues])
        if mid is None or not self.loop.step:
            return mid
        frame2 = LoopFrame(self.exit)
        after = ex.block(self.loop.step, mid, replace(ctx, loop=frame2).at(n, 1))
        return ex.merge([after, *frame2.continues])


# ----------------------------------------------------------------------------- static facts


def _owned(block: Block, stop: tuple[type, ...]) -> list[Stmt]:
    """Statements of `block`, descending into nested blocks except below `stop` statements."""
    out: list[Stmt] = []
    for s in block:
        out.append(s)
        if not isinstance(s, stop):
            for sub in stmt_children(s):
                out.extend(_owned(sub, stop))
    return out


class Facts:
    """Per-statement static facts, cached by identity (the program outlives the unroller)."""

    def __init__(self) -> None:
        self._modified: dict[int, tuple[str, ...]] = {}
        self._breaks: dict[int, bool] = {}
        self._returns: dict[int, bool] = {}

    def modified(self, s: Loop | Scope) -> tuple[str, ...]:
        if id(s) not in self._modified:
            names = {t.target for t in walk_stmts((s,)) if isinstance(t, (Assign, Havoc))}
            self._modified[id(s)] = tuple(sorted(names))
        return self._modified[id(s)]

    def breaks(self, loop: Loop) -> bool:
        """Whether `loop` can be left by a `break` of its own."""
        if id(loop) not in self._breaks:
            owned = _owned(loop.body + loop.step, (Loop, Scope))
            self._breaks[id(loop)] = any(isinstance(s, Break) for s in owned)
        return self._breaks[id(loop)]

    def returns(self, loop: Loop) -> bool:
        """Whether `loop` can be left by a `return` of the enclosing function."""
        if id(loop) not in self._returns:
            owned = _owned(loop.body + loop.step, (Scope,))
            self._returns[id(loop)] = any(isinstance(s, Return) for s in owned)
        return self._returns[id(loop)]


# ----------------------------------------------------------------------------- the unroller


class Unroller:
    """Symbolic execution of a program with every loop instance unrolled `bound` times.

    Not `incremental`: a one-shot unrolling that is never extended; every join is exact (the
    simplest formula for a solver), frontiers are kept for the completeness query only.
    """

    def __init__(self, program: Program, fm: Formula, *, incremental: bool = True) -> None:
        self.program = program
        self.fm = fm
        self.incremental = incremental
        self.types = program.var_types
        self.facts = Facts()
        self.bound = 0
        self.havocs: list[HavocSite] = []
        self.errors: list[ErrorSite] = []
        self.new_errors: list[z3.BoolRef] = []
        self.loops: list[LoopInstance] = []
        self.junctions: list[tuple[Junction, Sink]] = []
        self.array_fills: dict[int, z3.ExprRef] = {}
        # Assumed when possible: a compiled replay zero-initialises locals.
        self.zero_uninitialised: z3.BoolRef = fm.fresh("zinit")

    # --- driving

    def build(self, bound: int) -> None:
        """Unroll the whole program `bound` times."""
        self.bound = bound
        env: Env = {v.name: _zero(v.type) for v in self.program.variables}
        self.block(self.program.body, SymState(z3.BoolVal(True), env), Ctx((), Sink()))
        self._flush()

    def extend(self, bound: int) -> None:
        """Unroll every live loop instance up to `bound` iterations."""
        self.bound = bound
        for inst in list(self.loops):
            inst.advance(bound)
        self.loops = [inst for inst in self.loops if inst.head is not None]
        self._flush()

    def _flush(self) -> None:
        for junction, sink in self.junctions:
            junction.flush(sink.live())
        self.junctions = [(j, s) for j, s in self.junctions if j.open is not None]

    def open_literals(self) -> list[z3.BoolRef]:
        """The literals a check assumes false: no path runs more than `bound` iterations."""
        return [j.open for j, _ in self.junctions if j.open is not None]

    def frontiers(self) -> list[z3.BoolRef]:
        """Guards of the live cut points (paths that would run one more iteration)."""
        return [inst.head.guard for inst in self.loops if inst.head is not None]

    # --- blocks and joins

    def block(self, block: Block, state: SymState | None, ctx: Ctx) -> SymState | None:
        for i, stmt in enumerate(block):
            if state is None:
                return None
            state = self.stmt(stmt, state, ctx.at(i))
        return state

    def merge(self, states: Sequence[SymState | None]) -> SymState | None:
        """The exact join of mutually exclusive states."""
        live = [s for s in states if s is not None and not z3.is_false(s.guard)]
        if len(live) <= 1:
            return live[0] if live else None
        guard = self.fm.fresh("m")
        self.fm.add(guard == z3.Or(*[s.guard for s in live]))
        env = dict(live[-1].env)
        for name, last in live[-1].env.items():
            if all(s.env[name].eq(last) for s in live[:-1]):
                continue
            term = last
            for s in reversed(live[:-1]):
                term = z3.If(s.guard, s.env[name], term)
            env[name] = self.fm.define(name, term, self.types[name])
        return SymState(guard, env)

    def _close(self, sink: Sink, entry: SymState, names: Sequence[str]) -> SymState | None:
        """The state after `sink`: exact if no further contributions can come, else a junction."""
        if not self.incremental or not sink.live():
            sink.closed = True
            return self.merge(sink.states)
        junction = Junction(self.fm, entry, names, self.types)
        for s in sink.states:
            junction.add(s)
        sink.junction = junction
        self.junctions.append((junction, sink))
        return junction.state

    # --- statements

    def stmt(self, s: Stmt, state: SymState, ctx: Ctx) -> SymState | None:
        self.fm.tick()
        if isinstance(s, Assign):
            return self._assign(s, state)
        if isinstance(s, Havoc):
            return self._havoc(s, state, ctx)
        if isinstance(s, (Assume, Assert)):
            return self._check(s, state, ctx)
        if isinstance(s, If):
            return self._if(s, state, ctx)
        if isinstance(s, Loop):
            return self._loop(s, state, ctx)
        if isinstance(s, Scope):
            return self._scope(s, state, ctx)
        self._jump(s, state, ctx)
        return None

    def _jump(self, s: Stmt, state: SymState, ctx: Ctx) -> None:
        if isinstance(s, Return):
            ctx.returns.add(state)
        elif ctx.loop is None:
            raise ValueError(f"{type(s).__name__} outside a loop at {s.coord}")
        elif isinstance(s, Break):
            ctx.loop.exit.add(state)
        elif isinstance(s, Continue):
            ctx.loop.continues.append(state)

    def _assign(self, s: Assign, state: SymState) -> SymState | None:
        tr = Translator(state.env)
        guard = self.fm.conj(state.guard, self.safe(s.value, tr))
        if z3.is_false(guard):
            return None
        env = dict(state.env)
        env[s.target] = self.fm.define(s.target, tr.term(s.value), self.types[s.target])
        return SymState(guard, env)

    def _havoc(self, s: Havoc, state: SymState, ctx: Ctx) -> SymState:
        ty = self.types[s.target]
        env = dict(state.env)
        if isinstance(ty, IntType):
            value = self.fm.fresh(f"{s.target}!in", ty)
            self.fm.add(in_range(value, ty))
            env[s.target] = value
        else:
            value = self._array_fill(s, ty)
            env[s.target] = z3.K(z3.IntSort(), value)
        if s.origin == "uninitialised":
            self.fm.add(z3.Implies(self.zero_uninitialised, value == 0))
        self.havocs.append(HavocSite(ctx.key, state.guard, value, s, ty))
        return SymState(state.guard, env)

    def _array_fill(self, s: Havoc, ty: ArrayType) -> z3.ExprRef:
        """The one value every element of an array Havoc `s` takes, in every instance of `s`.

        The replay draws array elements lazily in the order they are first read, which a model
        does not tell; constant arrays replay in any order (a bug that needs different
        elements is missed, never invented).
        """
        if id(s) not in self.array_fills:
            value = self.fm.fresh(f"{s.target}!fill", ty.elem)
            self.fm.add(in_range(value, ty.elem))
            self.array_fills[id(s)] = value
        return self.array_fills[id(s)]

    def _check(self, s: Assume | Assert, state: SymState, ctx: Ctx) -> SymState | None:
        tr = Translator(state.env)
        safe = self.safe(s.cond, tr)
        cond = tr.formula(s.cond)
        if isinstance(s, Assert):
            flag = self.fm.conj(state.guard, safe, z3.Not(cond))
            if not z3.is_false(flag):
                self.errors.append(ErrorSite(ctx.key, flag, s))
                self.new_errors.append(flag)
        guard = self.fm.conj(state.guard, safe, cond)
        return None if z3.is_false(guard) else SymState(guard, state.env)

    def _if(self, s: If, state: SymState, ctx: Ctx) -> SymState | None:
        tr = Translator(state.env)
        guard = self.fm.conj(state.guard, self.safe(s.cond, tr))
        cond = tr.formula(s.cond)
        then = self.block(s.then, _guarded(self.fm.conj(guard, cond), state.env), ctx.at(0))
        orelse = self.block(s.orelse, _guarded(self.fm.conj(guard, z3.Not(cond)), state.env), ctx.at(1))
        return self.merge([then, orelse])

    def _loop(self, s: Loop, state: SymState, ctx: Ctx) -> SymState | None:
        inst = LoopInstance(self, s, state, ctx)
        if self.facts.returns(s):
            ctx.returns.sources.append(inst)
        inst.advance(self.bound)
        if inst.head is not None:
            self.loops.append(inst)
        if not self.facts.breaks(s):
            return None
        return self._close(inst.exit, state, self.facts.modified(s))

    def _scope(self, s: Scope, state: SymState, ctx: Ctx) -> SymState | None:
        sink = Sink()
        end = self.block(s.body, state, Ctx((*ctx.key, 0), sink))
        if end is not None:
            sink.add(end)
        return self._close(sink, state, self.facts.modified(s))

    # --- undefined behaviour

    def safe(self, e: Expr, tr: Translator) -> z3.BoolRef:
        """When evaluating `e` (lazily, as C does) has defined behaviour."""
        cond = self._safe(e, tr)
        return z3.BoolVal(True) if cond is None else cond

    def _safe(self, e: Expr, tr: Translator) -> z3.BoolRef | None:
        if isinstance(e, (Const, Var)):
            return None
        if isinstance(e, Binary) and e.op in ("&&", "||"):
            left, right = self._safe(e.left, tr), self._safe(e.right, tr)
            if right is not None:
                taken = tr.formula(e.left)
                right = z3.Implies(taken if e.op == "&&" else z3.Not(taken), right)
            return _and(left, right)
        if isinstance(e, Ite):
            then, orelse = self._safe(e.then, tr), self._safe(e.orelse, tr)
            branch = None
            if then is not None or orelse is not None:
                branch = z3.If(tr.formula(e.cond), _true(then), _true(orelse))
            return _and(self._safe(e.cond, tr), branch)
        parts = [self._safe(c, tr) for c in children(e)]
        return _and(*parts, self._own(e, tr))

    def _own(self, e: Expr, tr: Translator) -> z3.BoolRef | None:
        """The condition for `e`'s own operation (not its operands) to be defined."""
        if isinstance(e, (Select, Store)):
            size = e.array.type.size if isinstance(e.array.type, ArrayType) else None
            index = tr.term(e.index)
            return None if size is None else z3.And(index >= 0, index < size)
        if isinstance(e, Unary) and e.op == "-":
            return self._no_overflow(e, tr)
        if not isinstance(e, Binary):
            return None
        if e.op in ("/", "%"):
            return _and(tr.term(e.right) != 0, self._no_overflow(e, tr), self._mod_overflow(e, tr))
        if e.op in ("<<", ">>"):
            return _and(_shift_count_ok(e, tr), self._shift_overflow(e, tr))
        if e.op in ("+", "-", "*"):
            return self._no_overflow(e, tr)
        return None

    def _no_overflow(self, e: Binary | Unary, tr: Translator) -> z3.BoolRef | None:
        if not self.fm.settings.no_overflow or not e.type.signed:
            return None
        return in_range(tr.term(e), e.type)

    def _mod_overflow(self, e: Binary, tr: Translator) -> z3.BoolRef | None:
        """`INT_MIN % -1` is undefined like `INT_MIN / -1` (though its value, 0, fits)."""
        if e.op != "%" or not self.fm.settings.no_overflow or not e.type.signed:
            return None
        return z3.Not(z3.And(tr.term(e.left) == e.type.min, tr.term(e.right) == -1))

    def _shift_overflow(self, e: Binary, tr: Translator) -> z3.BoolRef | None:
        if e.op != "<<" or not self.fm.settings.no_overflow or not e.type.signed:
            return None
        if isinstance(e.right, Const):
            return in_range(tr.term(e), e.type)
        bits = e.type.bits
        a, b = z3.Int2BV(tr.term(e.left), bits), z3.Int2BV(tr.term(e.right), bits)
        return (a << b) >> b == a  # the signed shift loses no bits


def _shift_count_ok(e: Binary, tr: Translator) -> z3.BoolRef:
    count = tr.term(e.right)
    return z3.And(count >= 0, count < e.type.bits)


def _zero(ty: Type) -> z3.ExprRef:
    """A variable's value before any assignment: 0, as in the interpreter."""
    if isinstance(ty, ArrayType):
        return z3.K(z3.IntSort(), z3.IntVal(0))
    return z3.IntVal(0)


def _guarded(guard: z3.BoolRef, env: Env) -> SymState | None:
    return None if z3.is_false(guard) else SymState(guard, env)


def _and(*parts: z3.BoolRef | None) -> z3.BoolRef | None:
    real = [p for p in parts if p is not None]
    if not real:
        return None
    return real[0] if len(real) == 1 else z3.And(*real)


def _true(p: z3.BoolRef | None) -> z3.BoolRef:
    return z3.BoolVal(True) if p is None else p

