"""Incremental unrolling of the control-flow graph (`cfg`) into one Z3 formula, for BMC.

A *region* (the top level, or one iteration of a loop instance) runs its blocks in `Cfg.order`;
the head of an inner loop starts a *loop instance* (a new one per iteration of each enclosing
loop), whose iterations are regions of the loop's blocks. An edge delivers its state to the
*sink* of its target: in the region itself, the next iteration's head for a back edge, or the
enclosing region (further up when the target lies outside it too) for an edge leaving a loop.
`return`, `break` and `goto` are such edges; a label a `goto` jumps back to heads a loop.

Every loop instance is unrolled `bound` times; what would run the next iteration is its
*frontier* (cut: not followed). Raising the bound extends every live frontier by more
iterations and only ever *adds* facts, so one incremental solver can serve every bound.

Sinks that live (not fully unrolled) instances may still reach (the exit of a loop, the end of
a function whose loops may `return`, the next head of a loop an inner loop jumps straight back
to) are *open junctions*: a guard literal `g` and fresh
constants `x` with `g -> (c_1 | ... | c_n | open)` and `c_i -> x == x_i`. Each extension chains
`open -> (new contributions | open')`; a check assumes the newest `open` literals false, i.e.
paths needing more iterations are cut. Every other join is an exact if-then-else merge. Guards
are sound in both directions along the path a model takes: a guard that is true in a model is
reached by the one execution the Havoc values determine.

Paths on which C's behaviour is undefined (division by zero, bad shift count, out-of-bounds
array index, signed overflow, a float converted to an integer type that does not hold its
truncation) are blocked, so a model is an execution the interpreter replays. A Havoc of a float
is a fresh bit-vector, its IEEE encoding (what the interpreter and the gcc replay take as input).
Havoc and error sites carry keys that order them as an execution meets them: (position in
`Cfg.order`, statement) in a region, below (head position, iteration) for each loop instance.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import z3
from quokka.verifier.encode.smt import INTEGERS, Domain, Translator, float_of_bits

from ..cfg import Branch, Cfg, CfgLoop, Jump, Simple, Terminator, build_cfg
from ..errors import Coord
from ..ir import (
    ArrayType,
    Assert,
    Assign,
    Assume,
    Binary,
    Const,
    Expr,
    FloatType,
    Forall,
    Havoc,
    IntType,
    Ite,
    Program,
    Type,
    Var,
    children,
)

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
class UndefinedSite:
    """`flag` holds exactly when the path gets to `coord` and its evaluation is undefined there
    (recorded when `Settings.track_undefined`)."""

    coord: Coord | None
    flag: z3.BoolRef


@dataclass(frozen=True)
class Settings:
    no_overflow: bool = True
    max_assertions: int = 400_000
    solving: str = "incremental"  # or "fresh": a new pre-processing solver per query
    domain: Domain = INTEGERS  # or `smt_bv.BITS`: bit-precise
    track_undefined: bool = False  # record where behaviour may be undefined (`Unroller.undefined`)


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
        return z3.Const(f"{name}#{self._fresh}", self.settings.domain.sort_of(ty))

    def fresh_bits(self, name: str, width: int) -> z3.BitVecRef:
        self._fresh += 1
        return z3.BitVec(f"{name}#{self._fresh}", width)

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
    if z3.is_int_value(t) or z3.is_bv_value(t) or z3.is_true(t) or z3.is_false(t) or z3.is_fp_value(t):
        return True
    return bool(z3.is_const(t) and t.decl().kind() == z3.Z3_OP_UNINTERPRETED)


# ----------------------------------------------------------------------------- joins


class Junction:
    """An open join point (see the module docstring); `base` gives the names not in `names`."""

    def __init__(self, fm: Formula, base: Env, names: Sequence[str], types: Mapping[str, Type]) -> None:
        self.fm = fm
        self.names = tuple(names)
        self.guard: z3.BoolRef = fm.fresh("j")
        self.env: Env = dict(base)
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
    """The states that reach one block (or a loop's next head): exact merge, or an open junction.

    `sources`: the loop instances that may deliver here from iterations not yet unrolled.
    """

    def __init__(self, *states: SymState) -> None:
        self.states: list[SymState] = list(states)
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
        self.sources = [src for src in self.sources if src.head is not None]
        return bool(self.sources)


# ----------------------------------------------------------------------------- regions


class Region:
    """The top level, or one iteration of a loop instance: where its edges deliver states."""

    def __init__(self, unroller: Unroller, key: Key, instance: LoopInstance | None = None) -> None:
        self.unroller = unroller
        self.key = key
        self.instance = instance
        self.loop = instance.loop if instance is not None else None
        self.sinks: dict[int, Sink] = {}
        self.next = Sink()

    def sink(self, target: int) -> Sink:
        """The sink an edge from a block of this region to `target` delivers to."""
        loop = self.loop
        if loop is not None and target == loop.head:
            return self.next
        if loop is not None and target not in loop.blocks:
            assert self.instance is not None
            return self.instance.region.sink(target)
        skip = self.unroller.forwards.get(target)
        if skip is not None:
            return self.sink(skip)
        if target not in self.sinks:
            self.sinks[target] = Sink()
        return self.sinks[target]

    def run(self, blocks: Sequence[int]) -> None:
        """Run `blocks` (in order), each from the join of the states delivered to it so far."""
        ex = self.unroller
        for b in blocks:
            sink = self.sinks.get(b)
            state = None if sink is None else ex.close(sink)
            if state is not None:
                ex.block(b, state, self)


class LoopInstance:
    """One dynamic instance of a loop (a new one per iteration of each enclosing loop)."""

    def __init__(self, unroller: Unroller, loop: CfgLoop, entry: SymState, region: Region, key: Key) -> None:
        self.unroller = unroller
        self.loop = loop
        self.entry = entry
        self.region = region
        self.key = key
        self.head: SymState | None = entry
        self.iterations = 0
        for target in unroller.exit_targets(loop.id):
            region.sink(target).sources.append(self)

    def advance(self, bound: int) -> None:
        while self.head is not None and self.iterations < bound:
            self.iterations += 1
            self.head = self._iteration(self.head, self.iterations)

    def _iteration(self, head: SymState, n: int) -> SymState | None:
        region = Region(self.unroller, (*self.key, n), self)
        region.sinks[self.loop.head] = Sink(head)
        region.run(self.unroller.owned[self.loop.id])
        return self.unroller.close(region.next)


class UnsupportedShape(Exception):
    """The control-flow graph has a shape the unroller does not handle."""


# ----------------------------------------------------------------------------- the unroller


class Unroller:
    """Symbolic execution of a program with every loop instance unrolled `bound` times.

    Not `incremental`: a one-shot unrolling that is never extended; every join is exact (the
    simplest formula for a solver), frontiers are kept for the completeness query only.
    """

    def __init__(
        self, program: Program, fm: Formula, *, incremental: bool = True, cfg: Cfg | None = None
    ) -> None:
        self.program = program
        self.cfg = cfg if cfg is not None else build_cfg(program)
        self.fm = fm
        self.incremental = incremental
        self.types = program.var_types
        self.domain = fm.settings.domain
        self.bound = 0
        self.havocs: list[HavocSite] = []
        self.errors: list[ErrorSite] = []
        self.undefined: list[UndefinedSite] = []
        self.new_errors: list[z3.BoolRef] = []
        self.loops: list[LoopInstance] = []
        self.junctions: list[tuple[Junction, Sink]] = []
        self.array_fills: dict[int, z3.ExprRef] = {}
        # Assumed when possible: a compiled replay zero-initialises locals.
        self.zero_uninitialised: z3.BoolRef = fm.fresh("zinit")
        self.position = {b: i for i, b in enumerate(self.cfg.order)}
        self.heads = {loop.head: loop for loop in self.cfg.loops.values()}
        self.owned = self._owned()
        self.forwards = self._forwards()
        self._exits: dict[str, tuple[int, ...]] = {}
        self._modified: dict[str, frozenset[str]] = {}

    def _owned(self) -> dict[str | None, tuple[int, ...]]:
        """The blocks each region runs, in order: a loop's head first, inner loops by their head."""
        cfg = self.cfg
        owned: dict[str | None, list[int]] = {None: []}
        for loop in cfg.loops.values():
            owned[loop.id] = [loop.head]
        for b in cfg.order:
            head = cfg.blocks[b].head
            if head is not None and self.heads.get(b) is not cfg.loops.get(head):
                raise UnsupportedShape(f"block {b} heads loop {head}, which has another head")
            owned[cfg.loops[head].parent if head is not None else cfg.loop_of(b)].append(b)
        return {k: tuple(v) for k, v in owned.items()}

    def _forwards(self) -> dict[int, int]:
        """Empty blocks that only jump on (no loop head): their edges deliver to the target."""
        return {b.id: b.end.target for b in self.cfg.blocks
                if not b.stmts and isinstance(b.end, Jump) and b.head is None and b.end.target != b.id}

    def exit_targets(self, loop_id: str) -> tuple[int, ...]:
        if loop_id not in self._exits:
            self._exits[loop_id] = tuple(dict.fromkeys(t for _, t in self.cfg.exits(loop_id)))
        return self._exits[loop_id]

    def modified(self, loop_id: str) -> frozenset[str]:
        """The variables a block of the loop assigns or havocs."""
        if loop_id not in self._modified:
            blocks = self.cfg.loops[loop_id].blocks
            self._modified[loop_id] = frozenset(
                s.target for b in blocks for s in self.cfg.blocks[b].stmts if isinstance(s, (Assign, Havoc))
            )
        return self._modified[loop_id]

    # --- driving

    def build(self, bound: int) -> None:
        """Unroll the whole program `bound` times."""
        self.bound = bound
        env: Env = {v.name: self.domain.zero(v.type) for v in self.program.variables}
        top = Region(self, ())
        top.sinks[self.cfg.entry] = Sink(SymState(z3.BoolVal(True), env))
        top.run(self.owned[None])
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

    def block(self, b: int, state: SymState, region: Region) -> None:
        """Run block `b` of `region` from `state`, delivering to its successors' sinks."""
        self.fm.tick()
        loop = self.heads.get(b)
        key = (*region.key, self.position[b])
        if loop is not None and loop is not region.loop:
            inst = LoopInstance(self, loop, state, region, key)
            inst.advance(self.bound)
            if inst.head is not None:
                self.loops.append(inst)
            return
        block = self.cfg.blocks[b]
        for i, stmt in enumerate(block.stmts):
            after = self.stmt(stmt, state, (*key, i))
            if after is None:
                return
            state = after
        self._end(block.end, state, region)

    def _end(self, end: Terminator, state: SymState, region: Region) -> None:
        if isinstance(end, Jump):
            region.sink(end.target).add(state)
        elif isinstance(end, Branch):
            tr = self.domain.translator(state.env)
            guard = self.fm.conj(state.guard, self.defined(end.cond, tr, state, end.coord))
            cond = tr.formula(end.cond)
            for target, taken in ((end.then, cond), (end.orelse, z3.Not(cond))):
                branch = _guarded(self.fm.conj(guard, taken), state.env)
                if branch is not None:
                    region.sink(target).add(branch)

    def merge(self, states: Sequence[SymState]) -> SymState | None:
        """The exact join of mutually exclusive states."""
        live = [s for s in states if not z3.is_false(s.guard)]
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

    def close(self, sink: Sink) -> SymState | None:
        """The state after `sink`: exact if no further contributions can come, else a junction."""
        if not self.incremental or not sink.live():
            sink.closed = True
            return self.merge(sink.states)
        envs = [s.env for s in sink.states] + [src.entry.env for src in sink.sources]
        names = set().union(*(self.modified(src.loop.id) for src in sink.sources))
        names.update(n for n, v in envs[0].items() if any(not e[n].eq(v) for e in envs[1:]))
        junction = Junction(self.fm, envs[0], sorted(names), self.types)
        for s in sink.states:
            junction.add(s)
        sink.junction = junction
        self.junctions.append((junction, sink))
        return junction.state

    # --- statements

    def stmt(self, s: Simple, state: SymState, key: Key) -> SymState | None:
        self.fm.tick()
        if isinstance(s, Assign):
            return self._assign(s, state)
        if isinstance(s, Havoc):
            return self._havoc(s, state, key)
        return self._check(s, state, key)

    def _assign(self, s: Assign, state: SymState) -> SymState | None:
        tr = self.domain.translator(state.env)
        guard = self.fm.conj(state.guard, self.defined(s.value, tr, state, s.coord))
        if z3.is_false(guard):
            return None
        env = dict(state.env)
        env[s.target] = self.fm.define(s.target, tr.term(s.value), self.types[s.target])
        return SymState(guard, env)

    def _havoc(self, s: Havoc, state: SymState, key: Key) -> SymState:
        ty = self.types[s.target]
        env = dict(state.env)
        if isinstance(ty, IntType):
            value = self.fm.fresh(f"{s.target}!in", ty)
            self.fm.add(self.domain.in_range(value, ty))
            env[s.target] = value
        elif isinstance(ty, FloatType):
            value = self.fm.fresh_bits(f"{s.target}!in", ty.bits)  # the IEEE encoding: any value
            env[s.target] = float_of_bits(value, ty)
        else:
            value = self._array_fill(s, ty)
            env[s.target] = self.domain.constant_array(value)
        if s.origin == "uninitialised":
            self.fm.add(z3.Implies(self.zero_uninitialised, value == 0))
        self.havocs.append(HavocSite(key, state.guard, value, s, ty))
        return SymState(state.guard, env)

    def _array_fill(self, s: Havoc, ty: ArrayType) -> z3.ExprRef:
        """The one value every element of an array Havoc `s` takes, in every instance of `s`.

        The replay draws array elements lazily in the order they are first read, which a model
        does not tell; constant arrays replay in any order (a bug that needs different
        elements is missed, never invented).
        """
        if id(s) not in self.array_fills:
            value = self.fm.fresh(f"{s.target}!fill", ty.elem)
            self.fm.add(self.domain.in_range(value, ty.elem))
            self.array_fills[id(s)] = value
        return self.array_fills[id(s)]

    def _check(self, s: Assume | Assert, state: SymState, key: Key) -> SymState | None:
        tr = self.domain.translator(state.env)
        safe = self.defined(s.cond, tr, state, s.coord)
        cond = tr.formula(s.cond)
        if isinstance(s, Assert):
            flag = self.fm.conj(state.guard, safe, z3.Not(cond))
            if not z3.is_false(flag):
                self.errors.append(ErrorSite(key, flag, s))
                self.new_errors.append(flag)
        guard = self.fm.conj(state.guard, safe, cond)
        return None if z3.is_false(guard) else SymState(guard, state.env)

    # --- undefined behaviour

    def defined(self, e: Expr, tr: Translator, state: SymState, coord: Coord | None) -> z3.BoolRef:
        """`safe`, recording the paths on which it fails when the settings ask for that."""
        safe = self.safe(e, tr)
        if self.fm.settings.track_undefined and not z3.is_true(safe):
            flag = self.fm.conj(state.guard, z3.Not(safe))
            if not z3.is_false(flag):
                self.undefined.append(UndefinedSite(coord, flag))
        return safe

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
        if isinstance(e, Forall):
            return self._forall_safe(e, tr)
        if isinstance(e, Ite):
            then, orelse = self._safe(e.then, tr), self._safe(e.orelse, tr)
            branch = None
            if then is not None or orelse is not None:
                branch = z3.If(tr.formula(e.cond), _true(then), _true(orelse))
            return _and(self._safe(e.cond, tr), branch)
        parts = [self._safe(c, tr) for c in children(e)]
        return _and(*parts, self._own(e, tr))

    def _forall_safe(self, e: Forall, tr: Translator) -> z3.BoolRef | None:
        """The body defined for every value of the bound variable in range. Stricter than C-like
        evaluation, which stops at the first value that fails the body: it only blocks paths."""
        body = self._safe(e.body, tr.inside(e))
        bounds = _and(self._safe(e.lo, tr), self._safe(e.hi, tr))
        return bounds if body is None else _and(bounds, tr.over_range(e, body))

    def _own(self, e: Expr, tr: Translator) -> z3.BoolRef | None:
        """The condition for `e`'s own operation (not its operands) to be defined."""
        return tr.defined(e, self.fm.settings.no_overflow)


def _guarded(guard: z3.BoolRef, env: Env) -> SymState | None:
    return None if z3.is_false(guard) else SymState(guard, env)


def _and(*parts: z3.BoolRef | None) -> z3.BoolRef | None:
    real = [p for p in parts if p is not None]
    if not real:
        return None
    return real[0] if len(real) == 1 else z3.And(*real)


def _true(p: z3.BoolRef | None) -> z3.BoolRef:
    return z3.BoolVal(True) if p is None else p

