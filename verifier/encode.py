"""Cut the IR at loop heads and encode every loop-free segment between cutpoints as one Z3 formula.

Cutpoints are the program entry, the head of every `Loop` (before its body) and the error
location. A structured walk over the IR gives, for every statement, its exits by kind (normal,
break, continue, return, error at assertion i, loop head L), each a path condition (`guard`) and
an SSA environment; paths that meet are merged with if-then-else (large block encoding).

A segment starting at loop head L is encoded by walking the whole program with an unreachable
("bottom") state until the walk reaches L, where the head state is injected; the walk then runs
through L's body and step, and after a `break` on through whatever follows L, up to the next
cutpoints. Every loop it meets (other than one it is inside of) is a cutpoint: the walk stops
there. Entry: variables are 0 (arrays all 0), havocs are fresh constants in their type's range.

The pre-state at every loop head is the Z3 constant named like the IR variable; fresh
constants contain "!" (C identifiers never do).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import z3

from .errors import Coord, EngineError
from .ir import (
    ArrayType,
    Assert,
    Assign,
    Assume,
    Binary,
    Block,
    Break,
    Cast,
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
    Stmt,
    Unary,
    Var,
    stmt_children,
    walk_stmts,
)
from .smt import Translator, const, in_range

ENTRY = "@entry"
ERROR = "@error"

Env = dict[str, z3.ExprRef]

# The dataclasses holding Z3 terms compare by identity (`==` on Z3 terms builds a formula).


@dataclass(frozen=True, eq=False)
class State:
    """A set of executions reaching a point: those satisfying `guard`, with variable values `env`."""

    guard: z3.BoolRef
    env: Mapping[str, z3.ExprRef]


@dataclass(frozen=True, eq=False)
class HavocSite:
    """A havoc executed on a segment: the fresh constant it introduced, and when it runs."""

    stmt: Havoc
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

    program: Program
    pre: Mapping[str, z3.ExprRef]
    edges: tuple[Edge, ...]
    asserts: tuple[Assert, ...]
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


# ----------------------------------------------------------------------------- exits


def _key_head(loop_id: str) -> str:
    return f"head:{loop_id}"


def _key_error(index: int) -> str:
    return f"error:{index}"


NORMAL, BREAK, CONTINUE, RETURN = "normal", "break", "continue", "return"


class Exits:
    """The states leaving a statement, by exit kind (not merged until needed)."""

    def __init__(self) -> None:
        self.by_kind: dict[str, list[State]] = {}

    def add(self, kind: str, state: State | None) -> None:
        if state is not None and not z3.is_false(state.guard):
            self.by_kind.setdefault(kind, []).append(state)

    def absorb(self, other: Exits, skip: Iterable[str] = ()) -> None:
        skipped = set(skip)
        for kind, states in other.by_kind.items():
            if kind not in skipped:
                self.by_kind.setdefault(kind, []).extend(states)

    def take(self, *kinds: str) -> State | None:
        states = [s for k in kinds for s in self.by_kind.pop(k, [])]
        return merge(states)


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


# ----------------------------------------------------------------------------- the walk


def _path_to(block: Block, loop_id: str) -> set[int]:
    """The ids of the statements that contain (or are) the loop `loop_id`."""
    out: set[int] = set()

    def visit(stmts: Block) -> bool:
        found = False
        for s in stmts:
            hit = (isinstance(s, Loop) and s.id == loop_id) or any(visit(b) for b in stmt_children(s))
            if hit:
                out.add(id(s))
                found = True
        return found

    visit(block)
    return out


class _Walker:
    """Walks the program once, from the entry (start None) or from the head of loop `start`."""

    def __init__(self, program: Program, start: str | None, pre: Mapping[str, z3.ExprRef],
                 assert_ids: Mapping[int, int]) -> None:
        self.program = program
        self.start = start
        self.pre = pre
        self.assert_ids = assert_ids
        self.on_path = _path_to(program.body, start) if start is not None else set()
        self.havocs: list[HavocSite] = []
        self.types = program.var_types

    def block(self, stmts: Block, state: State | None) -> Exits:
        exits = Exits()
        for s in stmts:
            if state is None and id(s) not in self.on_path:
                continue
            out = self.stmt(s, state)
            state = out.take(NORMAL)
            exits.absorb(out)
        exits.add(NORMAL, state)
        return exits

    def stmt(self, s: Stmt, state: State | None) -> Exits:
        if isinstance(s, If):
            return self._if(s, state)
        if isinstance(s, Loop):
            return self._loop(s, state)
        if isinstance(s, Scope):
            return self._scope(s, state)
        exits = Exits()
        assert state is not None
        if isinstance(s, (Break, Continue, Return)):
            exits.add({Break: BREAK, Continue: CONTINUE, Return: RETURN}[type(s)], state)
            return exits
        exits.add(NORMAL, self._simple(s, state, exits))
        return exits

    def _simple(self, s: Stmt, state: State, exits: Exits) -> State:
        tr = Translator(state.env)
        if isinstance(s, Assign):
            return State(state.guard, {**state.env, s.target: tr.term(s.value)})
        if isinstance(s, Havoc):
            return self._havoc(s, state)
        if isinstance(s, Assume):
            return State(conj(state.guard, tr.formula(s.cond)), state.env)
        if isinstance(s, Assert):
            ok = tr.formula(s.cond)
            exits.add(_key_error(self.assert_ids[id(s)]), State(conj(state.guard, z3.Not(ok)), state.env))
            return State(conj(state.guard, ok), state.env)
        raise EngineError(f"unknown statement {type(s).__name__}")

    def _havoc(self, s: Havoc, state: State) -> State:
        ty = self.types[s.target]
        fresh = const(f"{s.target}!{len(self.havocs)}", ty)
        self.havocs.append(HavocSite(s, fresh, state.guard))
        guard = state.guard if isinstance(ty, ArrayType) else conj(state.guard, in_range(fresh, ty))
        return State(guard, {**state.env, s.target: fresh})

    def _if(self, s: If, state: State | None) -> Exits:
        exits = Exits()
        then_state = else_state = None
        if state is not None:
            cond = Translator(state.env).formula(s.cond)
            then_state = State(conj(state.guard, cond), state.env)
            else_state = State(conj(state.guard, z3.Not(cond)), state.env)
        exits.absorb(self.block(s.then, then_state))
        exits.absorb(self.block(s.orelse, else_state))
        return exits

    def _scope(self, s: Scope, state: State | None) -> Exits:
        inner = self.block(s.body, state)
        exits = Exits()
        exits.add(NORMAL, inner.take(NORMAL, RETURN))
        exits.absorb(inner)
        return exits

    def _loop(self, s: Loop, state: State | None) -> Exits:
        exits = Exits()
        exits.add(_key_head(s.id), state)
        if id(s) not in self.on_path:
            return exits
        head = State(z3.BoolVal(True), dict(self.pre)) if s.id == self.start else None
        body = self.block(s.body, head)
        step = self.block(s.step, body.take(NORMAL, CONTINUE))
        exits.add(_key_head(s.id), step.take(NORMAL, CONTINUE))
        exits.add(NORMAL, merge([*body.by_kind.pop(BREAK, []), *step.by_kind.pop(BREAK, [])]))
        exits.absorb(body)
        exits.absorb(step)
        return exits


# ----------------------------------------------------------------------------- encoding


def _initial_env(program: Program) -> Env:
    env: Env = {}
    for v in program.variables:
        if isinstance(v.type, ArrayType):
            env[v.name] = z3.K(z3.IntSort(), z3.IntVal(0))
        else:
            env[v.name] = z3.IntVal(0)
    return env


def _check_names(program: Program) -> None:
    bad = [v.name for v in program.variables if "!" in v.name]
    if bad:
        raise EngineError(f"variable names may not contain '!': {', '.join(bad)}")


def _edges_of(src: str, exits: Exits, havocs: tuple[HavocSite, ...]) -> list[Edge]:
    edges = []
    for kind in sorted(exits.by_kind):
        states = exits.by_kind[kind]
        what, _, arg = kind.partition(":")
        if kind in (NORMAL, RETURN):
            continue  # the end of the program (BREAK/CONTINUE cannot leave `main`)
        if what == "head":
            state = merge(states)
            assert state is not None
            edges.append(Edge(src, arg, state.guard, dict(state.env), None, havocs))
        elif what == "error":  # only the path condition matters
            guard = states[0].guard if len(states) == 1 else z3.Or([s.guard for s in states])
            edges.append(Edge(src, ERROR, guard, {}, int(arg), havocs))
        else:
            raise EngineError(f"'{kind}' outside any loop")
    return edges


def encode(program: Program) -> Encoding:
    """The cutpoint graph of `program` with exact edge formulas and the live variables per loop."""
    _check_names(program)
    asserts = tuple(s for s in walk_stmts(program.body) if isinstance(s, Assert))
    assert_ids = {id(a): i for i, a in enumerate(asserts)}
    pre = {v.name: const(v.name, v.type) for v in program.variables}
    edges: list[Edge] = []
    for start in [None, *(info.id for info in program.loops)]:
        walker = _Walker(program, start, pre, assert_ids)
        if start is None:
            exits = walker.block(program.body, State(z3.BoolVal(True), _initial_env(program)))
        else:
            exits = walker.block(program.body, None)
        edges.extend(_edges_of(start or ENTRY, exits, tuple(walker.havocs)))
    enc = Encoding(program, pre, tuple(edges), asserts)
    return Encoding(program, pre, enc.edges, asserts, live_variables(enc))


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


def dump(program: Program, directory: Path, invariants: Mapping[str, Expr] | None = None) -> list[Path]:
    """Write every verification condition and the CHC system as SMT-LIB files (see `chc.dump`)."""
    from .chc import dump as dump_chc

    return dump_chc(program, directory, invariants)


# ----------------------------------------------------------------------------- type-range facts


def range_facts(program: Program) -> tuple[Expr, ...]:
    """`0 <= v && v <= max` for every unsigned variable whose every assigned value is in range.

    These hold at every loop head (variables start at 0, havocs are in range), so checkers may
    add them to any invariant; they are still checked like every other conjunct.
    """
    ranged = {v.name for v in program.variables if isinstance(v.type, IntType) and not v.type.signed}
    types = program.var_types
    changed = True
    while changed:
        changed = False
        for s in walk_stmts(program.body):
            if isinstance(s, Assign) and s.target in ranged:
                ty = types[s.target]
                assert isinstance(ty, IntType)
                if not _value_in_range(s.value, ty, ranged):
                    ranged.discard(s.target)
                    changed = True
    return tuple(_range_expr(Var(v.name, v.type)) for v in program.variables if v.name in ranged)


def _range_expr(v: Var) -> Expr:
    ty = v.type
    assert isinstance(ty, IntType)
    int_ty = IntType("int", 32, True)
    low = Binary("<=", Const(0, ty), v, int_ty)
    high = Binary("<=", v, Const(ty.max, ty), int_ty)
    return Binary("&&", low, high, int_ty)


def _value_in_range(e: Expr, ty: IntType, ranged: set[str]) -> bool:
    """True when the value of `e` is surely a value of `ty` (given the `ranged` variables are)."""
    if isinstance(e, Const):
        return ty.min <= e.value <= ty.max
    if isinstance(e, Var):
        return e.name in ranged and isinstance(e.type, IntType) and ty.contains(e.type)
    if isinstance(e, Ite):
        return _value_in_range(e.then, ty, ranged) and _value_in_range(e.orelse, ty, ranged)
    if isinstance(e, Binary) and e.op in ("<", "<=", ">", ">=", "==", "!=", "&&", "||"):
        return ty.max >= 1
    if isinstance(e, Unary) and e.op == "!":
        return ty.max >= 1
    if isinstance(e, (Cast, Binary, Unary)):
        return not e.type.signed and ty.contains(e.type)  # unsigned results are wrapped
    return False
