"""Cut the control-flow graph at loop heads and encode every loop-free segment between cutpoints
as one Z3 formula.

Cutpoints are the program entry, the head block of every loop (`cfg`) and the error location.
From each cutpoint, symbolic execution runs forward over the CFG up to the next loop heads
(the one it started from included, along a back edge) and the failing assertions; every block
gets a path condition (`guard`) and an SSA environment, and paths that meet at a block are
merged with if-then-else (large block encoding). Entry: variables are 0 (arrays all 0), havocs
are fresh constants in their type's range.

The pre-state at every loop head is the Z3 constant named like the IR variable; fresh
constants contain "!" (C identifiers never do).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import z3
from quokka.verifier import ir
from quokka.verifier.cfg import BasicBlock, Branch, Cfg, Jump, Simple, build_cfg
from quokka.verifier.encode.smt import Translator, const, in_range
from quokka.verifier.errors import Coord, EngineError
from quokka.verifier.properties import NO_OVERFLOW

ENTRY = "@entry"
ERROR = "@error"

Env = dict[str, z3.ExprRef]

# The dataclasses holding Z3 terms compare by identity (`==` on Z3 terms builds a formula).


@dataclass(frozen=True, eq=False)
class State:
    """A set of executions reaching a point: those satisfying `guard`, with variable values `env`."""

    guard: z3.BoolRef
    env: Mapping[str, z3.ExprRef]


# Called before a statement or branch: its coordinate, the expressions it evaluates, the state there.
Observer = Callable[[Coord | None, tuple[ir.Expr, ...], "State"], None]


@dataclass(frozen=True, eq=False)
class HavocSite:
    """A havoc executed on a segment: the fresh constant it introduced, and when it runs."""

    stmt: ir.Havoc
    const: z3.ExprRef
    guard: z3.BoolRef


@dataclass(frozen=True, eq=False)
class Edge:
    """The loop-free paths from cutpoint `src` to cutpoint `dst`.

    `guard` ranges over the pre-state constants (IR names; none for ENTRY) and fresh ones;
    `post` gives each variable's value at `dst` (empty when `dst` is ERROR);
    `assert_index` says which assertion fails (ERROR only).
    """

    src: str
    dst: str
    guard: z3.BoolRef
    post: Mapping[str, z3.ExprRef]
    assert_index: int | None = None
    havocs: tuple[HavocSite, ...] = ()

    @property
    def kind(self) -> str:
        if self.dst == ERROR:
            return "safety"
        return "initiation" if self.src == ENTRY else "consecution"

    @property
    def label(self) -> str:
        return f"{_node_name(self.src)} -> {_node_name(self.dst)}"


def _node_name(node: str) -> str:
    return {ENTRY: "entry", ERROR: "error"}.get(node, f"loop {node}")


@dataclass(frozen=True, eq=False)
class Encoding:
    """The cutpoint graph of a program with one formula per edge."""

    program: ir.Program
    pre: Mapping[str, z3.ExprRef]
    edges: tuple[Edge, ...]
    asserts: tuple[ir.Assert, ...]
    live: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def edges_from(self, src: str) -> list[Edge]:
        return [e for e in self.edges if e.src == src]

    def edges_into(self, dst: str) -> list[Edge]:
        return [e for e in self.edges if e.dst == dst]

    def assert_coord(self, edge: Edge) -> Coord | None:
        if edge.assert_index is None:
            return None
        a = self.asserts[edge.assert_index]
        return a.site or a.coord

    def translator(self, edge: Edge, at: str) -> Translator:
        """Evaluates IR expressions in the pre-state ("pre") or post-state ("post") of `edge`."""
        return Translator(self.pre if at == "pre" else edge.post)


# ----------------------------------------------------------------------------- paths


def conj(a: z3.BoolRef, b: z3.BoolRef) -> z3.BoolRef:
    if z3.is_false(a) or z3.is_false(b):
        return z3.BoolVal(False)
    if z3.is_true(a):
        return b
    if z3.is_true(b):
        return a
    return z3.And(a, b)


def merge(states: Sequence[State]) -> State | None:
    """One state for the union of exclusive path sets (values merged by if-then-else)."""
    if not states:
        return None
    if len(states) == 1:
        return states[0]
    guard = z3.Or([s.guard for s in states])
    env: Env = {}
    for name, first in states[0].env.items():
        terms = [s.env[name] for s in states]
        if all(t.eq(first) for t in terms[1:]):
            env[name] = first
            continue
        value = terms[-1]
        for s, t in zip(reversed(states[:-1]), reversed(terms[:-1]), strict=True):
            value = z3.If(s.guard, t, value)
        env[name] = value
    return State(guard, env)


class _Segments:
    """The loop-free paths from one cutpoint: symbolic execution over the CFG up to the next
    loop heads and the error, in `cfg.order` (every edge that is not a back edge goes forward)."""

    def __init__(self, cfg: Cfg, start: int, state: State, observe: Observer | None = None) -> None:
        self.cfg = cfg
        self.types = cfg.program.var_types
        self.havocs: list[HavocSite] = []
        self.incoming: dict[int, list[State]] = {start: [state]}
        self.exits: dict[str, list[State]] = {}  # "head:L" / "error:i" -> states
        self.start = start
        self.observe = observe

    def run(self) -> dict[str, list[State]]:
        order = self.cfg.order
        for b in order[order.index(self.start):]:
            state = merge(self.incoming.pop(b, []))
            if state is not None:
                self._block(self.cfg.blocks[b], state)
        return self.exits

    def _block(self, block: BasicBlock, state: State) -> None:
        for s in block.stmts:
            if self.observe is not None:
                self.observe(s.coord, _operands(s), state)
            state = self._simple(s, state)
        end = block.end
        if isinstance(end, Jump):
            self._send(end.target, state)
        elif isinstance(end, Branch):
            if self.observe is not None:
                self.observe(end.coord, (end.cond,), state)
            cond = Translator(state.env).formula(end.cond)
            self._send(end.then, State(conj(state.guard, cond), state.env))
            self._send(end.orelse, State(conj(state.guard, z3.Not(cond)), state.env))

    def _send(self, target: int, state: State) -> None:
        if z3.is_false(state.guard):
            return
        head = self.cfg.blocks[target].head
        if head is not None:
            self.exits.setdefault(_key_head(head), []).append(state)
        else:
            self.incoming.setdefault(target, []).append(state)

    def _simple(self, s: Simple, state: State) -> State:
        tr = Translator(state.env)
        if isinstance(s, ir.Assign):
            return State(state.guard, {**state.env, s.target: tr.term(s.value)})
        if isinstance(s, ir.Havoc):
            return self._havoc(s, state)
        if isinstance(s, ir.Assume):
            return State(conj(state.guard, tr.formula(s.cond)), state.env)
        ok = tr.formula(s.cond)
        failing = conj(state.guard, z3.Not(ok))
        if not z3.is_false(failing):
            self.exits.setdefault(_key_error(self.cfg.assert_index(s)), []).append(State(failing, state.env))
        return State(conj(state.guard, ok), state.env)

    def _havoc(self, s: ir.Havoc, state: State) -> State:
        ty = self.types[s.target]
        fresh = const(f"{s.target}!{len(self.havocs)}", ty)
        self.havocs.append(HavocSite(s, fresh, state.guard))
        guard = state.guard if not isinstance(ty, ir.IntType) else conj(state.guard, in_range(fresh, ty))
        return State(guard, {**state.env, s.target: fresh})


def _operands(s: Simple) -> tuple[ir.Expr, ...]:
    if isinstance(s, ir.Assign):
        return (s.value,)
    return () if isinstance(s, ir.Havoc) else (s.cond,)


def _key_head(loop_id: str) -> str:
    return f"head:{loop_id}"


def _key_error(index: int) -> str:
    return f"error:{index}"


# ----------------------------------------------------------------------------- encoding


def _initial_env(program: ir.Program) -> Env:
    env: Env = {}
    for v in program.variables:
        if isinstance(v.type, ir.ArrayType):
            env[v.name] = z3.K(z3.IntSort(), z3.IntVal(0))
        else:
            env[v.name] = z3.IntVal(0)
    return env


def _check_names(program: ir.Program) -> None:
    bad = [v.name for v in program.variables if "!" in v.name]
    if bad:
        raise EngineError(f"variable names may not contain '!': {', '.join(bad)}")


def _edges_of(src: str, exits: Mapping[str, list[State]], havocs: tuple[HavocSite, ...]) -> list[Edge]:
    edges = []
    for kind in sorted(exits):
        states = exits[kind]
        what, _, arg = kind.partition(":")
        if what == "head":
            state = merge(states)
            assert state is not None
            edges.append(Edge(src, arg, state.guard, dict(state.env), None, havocs))
        else:  # an error: only the path condition matters
            guard = states[0].guard if len(states) == 1 else z3.Or([s.guard for s in states])
            edges.append(Edge(src, ERROR, guard, {}, int(arg), havocs))
    return edges


def encode(program: ir.Program) -> Encoding:
    """The cutpoint graph of `program` with exact edge formulas and the live variables per loop.
    Raises `UnsupportedByEngine` for a program with floating point (only BMC handles it)."""
    ir.require_integers(program)
    _check_names(program)
    cfg = build_cfg(program)
    pre = {v.name: const(v.name, v.type) for v in program.variables}
    edges: list[Edge] = []
    for name, segments in _all_segments(cfg, pre):
        exits = segments.run()
        edges.extend(_edges_of(name, exits, tuple(segments.havocs)))
    enc = Encoding(program, pre, tuple(edges), cfg.asserts)
    return Encoding(program, pre, enc.edges, cfg.asserts, live_variables(enc))


Watch = Callable[[str, Mapping[str, z3.ExprRef]], Observer]


def _all_segments(
    cfg: Cfg, pre: Mapping[str, z3.ExprRef], watch: Watch | None = None
) -> list[tuple[str, _Segments]]:
    """The segments from each cutpoint (ENTRY, then every loop head), `watch(start, pre)` observing."""
    starts = [(ENTRY, cfg.entry, State(z3.BoolVal(True), _initial_env(cfg.program)))]
    starts += [(loop.id, loop.head, State(z3.BoolVal(True), dict(pre))) for loop in cfg.loops.values()]
    return [(name, _Segments(cfg, block, state, watch(name, pre) if watch else None))
            for name, block, state in starts]


def explore(program: ir.Program, watch: Watch) -> None:
    """Execute every segment symbolically; before each statement and branch of a segment from
    cutpoint `start`, call `watch(start, pre)(coord, operands, state)`, where `pre` are the
    constants of the state at a loop head `start`. Raises `UnsupportedByEngine` for a program
    with floating point."""
    ir.require_integers(program)
    _check_names(program)
    pre = {v.name: const(v.name, v.type) for v in program.variables}
    for _, segments in _all_segments(build_cfg(program), pre, watch):
        segments.run()


# ----------------------------------------------------------------------------- liveness


def constants(terms: Iterable[z3.ExprRef]) -> dict[str, z3.ExprRef]:
    """The uninterpreted constants occurring in `terms`, by name."""
    seen: set[int] = set()
    out: dict[str, z3.ExprRef] = {}
    stack = list(terms)
    while stack:
        t = stack.pop()
        if t.get_id() in seen:
            continue
        seen.add(t.get_id())
        if z3.is_const(t) and t.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            out[t.decl().name()] = t
        elif z3.is_app(t):
            stack.extend(t.children())
    return out


def const_names(terms: Iterable[z3.ExprRef]) -> set[str]:
    """The names of the uninterpreted constants occurring in `terms`."""
    return set(constants(terms))


def live_variables(enc: Encoding) -> dict[str, tuple[str, ...]]:
    """The variables each loop head's future reads before writing, read off the edge formulas.

    A variable is live at L if an edge from L reads its pre-state constant in the guard, or in
    the post value of a variable live at the edge's target (a fixpoint over the cutpoint graph).
    """
    names = set(enc.pre)
    loops = [info.id for info in enc.program.loops]
    guard_reads = {id(e): const_names([e.guard]) & names for e in enc.edges}
    post_reads: dict[tuple[int, str], set[str]] = {}
    live: dict[str, set[str]] = {loop: set() for loop in loops}
    changed = True
    while changed:
        changed = False
        for e in enc.edges:
            if e.src == ENTRY:
                continue
            need = set(guard_reads[id(e)])
            for v in live.get(e.dst, set()):
                key = (id(e), v)
                if key not in post_reads:
                    post_reads[key] = const_names([e.post[v]]) & names
                need |= post_reads[key]
            if not need <= live[e.src]:
                live[e.src] |= need
                changed = True
    order = [v.name for v in enc.program.variables]
    return {loop: tuple(v for v in order if v in live[loop]) for loop in loops}


# ----------------------------------------------------------------------------- type-range facts


def range_facts(program: ir.Program) -> tuple[ir.Expr, ...]:
    """`min <= v && v <= max` for every unsigned variable whose every assigned value is in range.

    These hold at every loop head (variables start at 0, havocs are in range), so checkers may
    add them to any invariant; they are still checked like every other conjunct. Under
    `no-overflow` every signed operation is asserted to stay in its type before it runs, so
    signed variables qualify too.
    """
    signed = program.property_name == NO_OVERFLOW
    ranged = {
        v.name for v in program.variables if isinstance(v.type, ir.IntType) and (signed or not v.type.signed)
    }
    types = program.var_types
    changed = True
    while changed:
        changed = False
        for s in ir.walk_stmts(program.body):
            if isinstance(s, ir.Assign) and s.target in ranged:
                ty = types[s.target]
                assert isinstance(ty, ir.IntType)
                if not _value_in_range(s.value, ty, ranged, signed):
                    ranged.discard(s.target)
                    changed = True
    return tuple(_range_expr(ir.Var(v.name, v.type)) for v in program.variables if v.name in ranged)


def _range_expr(v: ir.Var) -> ir.Expr:
    ty = v.type
    assert isinstance(ty, ir.IntType)
    int_ty = ir.IntType("int", 32, True)
    low = ir.Binary("<=", ir.Const(ty.min, ty), v, int_ty)
    high = ir.Binary("<=", v, ir.Const(ty.max, ty), int_ty)
    return ir.Binary("&&", low, high, int_ty)


def _value_in_range(e: ir.Expr, ty: ir.IntType, ranged: set[str], checked: bool) -> bool:
    """True when the value of `e` is surely a value of `ty` (given the `ranged` variables are;
    `checked`: signed operations are asserted not to overflow before they run)."""
    if isinstance(e, ir.Const):
        return ty.min <= e.value <= ty.max
    if isinstance(e, ir.Var):
        return e.name in ranged and isinstance(e.type, ir.IntType) and ty.contains(e.type)
    if isinstance(e, ir.Ite):
        return _value_in_range(e.then, ty, ranged, checked) and _value_in_range(e.orelse, ty, ranged, checked)
    if isinstance(e, ir.Binary) and e.op in ("<", "<=", ">", ">=", "==", "!=", "&&", "||"):
        return ty.max >= 1
    if isinstance(e, ir.Unary) and e.op == "!":
        return ty.max >= 1
    if isinstance(e, (ir.Cast, ir.Binary, ir.Unary)):
        if not ty.contains(e.type):
            return False
        return not e.type.signed or (checked and _in_own_type(e, ranged))  # unsigned results are wrapped
    return False


def _in_own_type(e: ir.Cast | ir.Binary | ir.Unary, ranged: set[str]) -> bool:
    """Under `no-overflow`: the signed `e` surely has a value of its type. Checked operations
    (`+ - * <<`, negation) are asserted to; bitwise ones go through bit-vectors; a cast that
    narrows wraps. A widening cast, `~`, `>>`, and `/` or `%` by a non-zero constant keep their
    operand in range; a division by a variable may be by zero (any value in the integer encoding)."""
    if isinstance(e, ir.Cast):
        src = e.operand.type
        if not isinstance(src, ir.IntType) or not e.type.contains(src):
            return True
        return _value_in_range(e.operand, src, ranged, True)
    if isinstance(e, ir.Unary):
        return e.op != "~" or _operand_in_range(e.operand, ranged)
    if e.op in ("/", "%"):
        nonzero = isinstance(e.right, ir.Const) and e.right.value != 0
        return nonzero and _operand_in_range(e.left, ranged)
    return e.op != ">>" or _operand_in_range(e.left, ranged)


def _operand_in_range(e: ir.Expr, ranged: set[str]) -> bool:
    return isinstance(e.type, ir.IntType) and _value_in_range(e, e.type, ranged, True)
