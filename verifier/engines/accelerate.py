"""Loop acceleration: closed forms of loops whose bodies are affine updates under a guard.

Pure analysis, IR in, closed forms out. A loop qualifies when its body (and step) is, after
inlined `__VERIFIER_assert`-style checks are set aside (a branch that only reaches the error or
aborts leaves a passing state unchanged), an exit test `if (c) break;` at its top followed by
assignments and `if`/`else` branches of assignments. Each way through the body (a *path*: its
branch conditions and its updates, over the state at the start of the iteration) is solved as a
recurrence with the iteration count `k` as a symbol (`K`): `x := x + g` with `g` a polynomial in
the other, already solved variables (a triangular system), and `x := a*x + b` with constants.

A *summary* runs the loop from its entry state in *phases*: in each phase one path is taken for a
number of iterations computed from the closed forms (the first `k` where the guard or the path's
condition fails: exact for conditions affine in `k`, and for polynomial ones only when they are
monotone for `k >= 1`), then the next phase starts from the state the closed forms give. The
entry states come from a walk of `main` (constants, unknown inputs as symbols, the exit states of
summarized loops before). Values are mathematical: a phase whose values leave their C type (an
unsigned wrap, a signed overflow) ends the summary (None), so a summary never describes a
wrapped run as an unwrapped one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import count

import sympy as sp
from quokka.verifier.ir import (
    INT,
    Assert,
    Assign,
    Assume,
    Binary,
    Block,
    Break,
    Cast,
    Const,
    Expr,
    Havoc,
    If,
    IntType,
    Label,
    Loop,
    Program,
    Scope,
    Stmt,
    Unary,
    Var,
    walk_stmts,
)

K = sp.Symbol("@k", integer=True)  # the iteration count: "@" keeps it apart from every C name
MAX_PHASES = 8
MAX_PATHS = 8
MAX_COUNT = 1 << 62  # iterations searched for a condition to fail
NEVER = MAX_COUNT + 1  # a condition that does not fail within MAX_COUNT iterations

Atom = tuple[sp.Expr, str]  # `expr op 0`
_NEGATE = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}


class NotAffine(Exception):
    """The loop is not of the accelerated shape (internal: ends the analysis of one loop)."""


@dataclass(frozen=True)
class Path:
    """One way through the body: it is taken when every atom of `cond` holds at the start of the
    iteration; `update` maps each variable it assigns to its new value over the start values."""

    cond: tuple[Atom, ...]
    update: Mapping[str, sp.Expr]


@dataclass(frozen=True)
class LoopBody:
    loop_id: str
    guard: tuple[Atom, ...]  # the loop goes on while all hold
    paths: tuple[Path, ...]
    opaque: frozenset[str]  # assigned, but not by an affine update: nothing is said about them


@dataclass(frozen=True)
class Phase:
    """`count` iterations along `paths[path]` from `start`; `forms[v]` is `v` after `K` of them."""

    path: int
    start: Mapping[str, sp.Expr]
    count: int
    forms: Mapping[str, sp.Expr]


@dataclass(frozen=True)
class Summary:
    """The loop from `entry` (values over unknown inputs' symbols) to `exit`, `total` iterations."""

    body: LoopBody
    entry: Mapping[str, sp.Expr]
    phases: tuple[Phase, ...]
    exit: Mapping[str, sp.Expr]
    total: int


# ----------------------------------------------------------------------------- IR -> sympy


def to_sym(e: Expr, env: Mapping[str, sp.Expr | None]) -> sp.Expr:
    """`e` as a polynomial over `env`'s values (a variable missing from `env` is its own symbol)."""
    if isinstance(e, Const):
        return sp.Integer(e.value)
    if isinstance(e, Var) and isinstance(e.type, IntType):
        value = env[e.name] if e.name in env else sp.Symbol(e.name)
        if value is None:
            raise NotAffine(f"{e.name} is not affine")
        return value
    if isinstance(e, Cast):
        return to_sym(e.operand, env)  # identity while in range: phases check the ranges
    if isinstance(e, Unary) and e.op == "-":
        return -to_sym(e.operand, env)
    if isinstance(e, Binary) and e.op in ("+", "-", "*"):
        a, b = to_sym(e.left, env), to_sym(e.right, env)
        return a + b if e.op == "+" else a - b if e.op == "-" else a * b
    raise NotAffine(f"not a polynomial: {type(e).__name__}")


def to_atoms(e: Expr, env: Mapping[str, sp.Expr | None]) -> tuple[Atom, ...]:
    """`e` (a conjunction of comparisons) as atoms `expr op 0`."""
    if isinstance(e, Binary) and e.op == "&&":
        return to_atoms(e.left, env) + to_atoms(e.right, env)
    if isinstance(e, Binary) and e.op in _NEGATE:
        return ((sp.expand(to_sym(e.left, env) - to_sym(e.right, env)), e.op),)
    if isinstance(e, Unary) and e.op == "!":
        return negate(to_atoms(e.operand, env))
    if isinstance(e, Var) and isinstance(e.type, IntType):
        return ((to_sym(e, env), "!="),)
    raise NotAffine("condition is not a conjunction of comparisons")


def negate(atoms: tuple[Atom, ...]) -> tuple[Atom, ...]:
    if len(atoms) != 1:
        raise NotAffine("negated conjunction")
    expr, op = atoms[0]
    return ((expr, _NEGATE[op]),)


def holds(atom: Atom, subs: Mapping[sp.Symbol, sp.Expr] | None = None) -> bool | None:
    """The atom's truth, or None when it depends on unknown symbols."""
    expr = sp.expand(atom[0].subs(subs) if subs else atom[0])
    if not expr.is_number:
        return None
    return _compare(int(expr), atom[1])


def _compare(value: int, op: str) -> bool:
    return {
        "<": value < 0, "<=": value <= 0, ">": value > 0, ">=": value >= 0, "==": value == 0, "!=": value != 0
    }[op]  # fmt: skip


# ----------------------------------------------------------------------------- the body


def is_check(s: If) -> bool:
    """An `if` whose branch only reaches the error or aborts: a passing state goes on unchanged."""
    if s.orelse or not s.then:
        return False
    last = s.then[-1]
    only = all(isinstance(t, (Label, Assert, Assume)) for t in s.then)
    return only and isinstance(last, Assume) and last.cond == Const(0, INT)


def loop_body(loop: Loop, program: Program) -> LoopBody:
    """The guard and paths of `loop` (raises NotAffine when it is not of the accelerated shape)."""
    stmts = list(loop.body) + list(loop.step)
    if not stmts or not _is_exit(stmts[0]):
        raise NotAffine("no exit test at the top")
    first = stmts[0]
    assert isinstance(first, If)
    guard = negate(to_atoms(first.cond, {}))
    paths: list[tuple[tuple[Atom, ...], dict[str, sp.Expr | None]]] = [((), {})]
    for s in stmts[1:]:
        paths = [p for cond, env in paths for p in _step(s, cond, env, program)]
        if len(paths) > MAX_PATHS:
            raise NotAffine("too many paths")
    opaque = frozenset(v for _, env in paths for v, e in env.items() if e is None)
    out = tuple(Path(cond, {v: e for v, e in env.items() if e is not None}) for cond, env in paths)
    return LoopBody(loop.id, guard, out, opaque)


def _is_exit(s: Stmt) -> bool:
    return isinstance(s, If) and len(s.then) == 1 and isinstance(s.then[0], Break) and not s.orelse


PathState = tuple[tuple[Atom, ...], dict[str, sp.Expr | None]]


def _step(
    s: Stmt, cond: tuple[Atom, ...], env: dict[str, sp.Expr | None], program: Program
) -> list[PathState]:
    if isinstance(s, Assign):
        return [(cond, {**env, s.target: _value(s, env, program)})]
    if isinstance(s, Havoc):
        return [(cond, {**env, s.target: None})]
    if isinstance(s, (Assert, Label)) or (isinstance(s, If) and is_check(s)):
        return [(cond, env)]
    if isinstance(s, Scope):
        out: list[PathState] = [(cond, env)]
        for t in s.body:
            out = [p for c, e in out for p in _step(t, c, e, program)]
        return out
    if isinstance(s, If):
        return _branch(s, cond, env, program)
    raise NotAffine(f"{type(s).__name__} in the body")


def _value(s: Assign, env: Mapping[str, sp.Expr | None], program: Program) -> sp.Expr | None:
    if not isinstance(program.var(s.target).type, IntType):
        raise NotAffine("non-integer assignment")
    try:
        return sp.expand(to_sym(s.value, env))
    except NotAffine:
        return None


def _branch(
    s: If, cond: tuple[Atom, ...], env: dict[str, sp.Expr | None], program: Program
) -> list[PathState]:
    atoms = to_atoms(s.cond, env)
    out: list[PathState] = []
    for extra, block in ((atoms, s.then), (negate(atoms), s.orelse)):
        part: list[PathState] = [(cond + extra, dict(env))]
        for t in block:
            part = [p for c, e in part for p in _step(t, c, e, program)]
        out += part
    return out


# ----------------------------------------------------------------------------- closed forms


def closed_forms(update: Mapping[str, sp.Expr]) -> dict[str, sp.Expr] | None:
    """Each updated variable after `K` iterations of `update`, over the start values (the
    variables' own symbols); None when the system is not triangular or not solvable here."""
    forms: dict[str, sp.Expr] = {}
    pending = {v: sp.expand(e) for v, e in update.items() if sp.expand(e) != sp.Symbol(v)}
    while pending:
        ready = [v for v, e in pending.items() if not (_names(e) - {v}) & set(pending)]
        if not ready:
            return None
        for v in ready:
            form = _solve(v, pending.pop(v), forms)
            if form is None:
                return None
            forms[v] = form
    return forms


def _names(e: sp.Expr) -> set[str]:
    return {s.name for s in e.free_symbols}


def _solve(v: str, rhs: sp.Expr, forms: Mapping[str, sp.Expr]) -> sp.Expr | None:
    """`v_k` for `v_{j+1} = a*v_j + g(others_j)`, `v_0 = v`."""
    x, j = sp.Symbol(v), sp.Symbol("j", integer=True, nonnegative=True)
    poly = sp.Poly(rhs, x)
    if poly.degree() > 1:
        return None
    a, g = poly.all_coeffs() if poly.degree() == 1 else [sp.Integer(0), poly.all_coeffs()[0]]
    if not a.is_number or a == 0:
        return None
    g_j = g.subs({sp.Symbol(n): f.subs(K, j) for n, f in forms.items()}, simultaneous=True)
    if a == 1:
        return sp.expand(x + sp.summation(g_j, (j, 0, K - 1)))
    if K in g_j.free_symbols or j in g_j.free_symbols:
        return None
    return a**K * x + g_j * (a**K - 1) / (a - 1)


# ----------------------------------------------------------------------------- phases


def summarize(body: LoopBody, entry: Mapping[str, sp.Expr], types: Mapping[str, IntType]) -> Summary | None:
    """The loop run from `entry` in phases, or None (not all conditions decidable, too many
    phases, a value leaving its type, or no end within `MAX_COUNT` iterations)."""
    solved = [closed_forms(p.update) for p in body.paths]
    state = dict(entry)
    phases: list[Phase] = []
    total = 0
    while all(holds(a, _subs(state)) for a in body.guard):
        if len(phases) == MAX_PHASES:
            return None
        phase = _phase(body, solved, state, types)
        if phase is None:
            return None
        phases.append(phase)
        total += phase.count
        state = {v: sp.expand(f.subs(K, phase.count)) for v, f in phase.forms.items()}
    if any(holds(a, _subs(state)) is None for a in body.guard):
        return None
    return Summary(body, dict(entry), tuple(phases), state, total)


def _subs(state: Mapping[str, sp.Expr]) -> dict[sp.Symbol, sp.Expr]:
    return {sp.Symbol(v): e for v, e in state.items()}


def _phase(
    body: LoopBody,
    solved: Sequence[dict[str, sp.Expr] | None],
    state: Mapping[str, sp.Expr],
    types: Mapping[str, IntType],
) -> Phase | None:
    subs = _subs(state)
    taken = [i for i, p in enumerate(body.paths) if all(holds(a, subs) for a in p.cond)]
    if len(taken) != 1 or any(holds(a, subs) is None for p in body.paths for a in p.cond):
        return None
    i = taken[0]
    forms = solved[i]
    if forms is None:
        return None
    at_k = {v: sp.expand(forms.get(v, sp.Symbol(v)).subs(subs, simultaneous=True)) for v in state}
    n = _first_failure([*body.guard, *body.paths[i].cond], at_k)
    if n is None or not _in_range(at_k, n, types, body.opaque):
        return None
    return Phase(i, dict(state), n, at_k)


def _first_failure(atoms: Sequence[Atom], at_k: Mapping[str, sp.Expr]) -> int | None:
    """The least `k >= 1` where some atom fails on the state `at_k` gives; None when not found
    exactly (a condition not monotone in `k`, an unknown symbol, or no failure)."""
    subs = _subs(at_k)
    found = [_fails_at(sp.expand(e.subs(subs, simultaneous=True)), op) for e, op in atoms]
    if any(f is None for f in found) or not found:
        return None
    first = min(f for f in found if f is not None)
    return None if first == NEVER else first


def _fails_at(e: sp.Expr, op: str) -> int | None:
    if e.free_symbols - {K} or not e.is_polynomial(K):
        return None
    if op == "!=":
        roots = [r for r in sp.Poly(e, K).ground_roots() if r.is_integer and r >= 1] if e.has(K) else []
        return int(min(roots)) if roots else (1 if e == 0 else NEVER)
    if e.has(K) and sp.Poly(e, K).degree() > 1 and not _monotone(e):
        return None
    return _search(lambda k: not _compare(int(e.subs(K, k)), op))


def _monotone(e: sp.Expr) -> bool:
    roots = sp.real_roots(sp.Poly(sp.diff(e, K), K))
    return all(r < 1 for r in roots)


def _search(fails: object) -> int:
    """The least `k >= 1` with `fails(k)`, for a predicate that stays true once true."""
    assert callable(fails)
    hi = 1
    while not fails(hi):
        hi *= 2
        if hi > MAX_COUNT:
            return NEVER
    lo = hi // 2  # fails(lo) is false (or lo == 0)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if fails(mid) else (mid, hi)
    return hi


def _in_range(
    at_k: Mapping[str, sp.Expr], n: int, types: Mapping[str, IntType], opaque: frozenset[str]
) -> bool:
    """Whether every tracked value stays in its C type for `0 <= k <= n` (checked at the ends and
    at the extrema of polynomial forms)."""
    for v, f in at_k.items():
        ty = types.get(v)
        if ty is None or v in opaque or (f.free_symbols - {K}):
            continue
        if not f.is_polynomial(K):
            return False
        points = {0, n, *_extrema(f, n)}
        if any(not ty.min <= int(f.subs(K, p)) <= ty.max for p in points):
            return False
    return True


def _extrema(f: sp.Expr, n: int) -> set[int]:
    if not f.has(K) or sp.Poly(f, K).degree() < 2:
        return set()
    roots = sp.real_roots(sp.Poly(sp.diff(f, K), K))
    return {int(sp.floor(r)) + d for r in roots for d in (0, 1) if 0 <= sp.floor(r) + d <= n}


# ----------------------------------------------------------------------------- entry states


def summaries(program: Program) -> dict[str, Summary]:
    """The summary of every top-level loop of `main` whose entry state the walk knows."""
    walker = _Walker(program)
    env: dict[str, sp.Expr] = {
        d.name: (sp.Integer(0) if d.kind == "global" else walker.fresh(d.name))
        for d in program.variables
        if isinstance(d.type, IntType)
    }
    walker.block(program.body, env)
    return walker.out


class _Walker:
    def __init__(self, program: Program) -> None:
        self.program = program
        self.types = {d.name: d.type for d in program.variables if isinstance(d.type, IntType)}
        self.out: dict[str, Summary] = {}
        self._ids = count()

    def fresh(self, name: str) -> sp.Symbol:
        return sp.Symbol(f"{name}@{next(self._ids)}")

    def block(self, block: Block, env: dict[str, sp.Expr]) -> bool:
        """Walk `block`, updating `env`; False once the walk cannot go on (a jump, a return)."""
        return all(self.stmt(s, env) for s in block)

    def stmt(self, s: Stmt, env: dict[str, sp.Expr]) -> bool:
        if isinstance(s, Assign) and s.target in self.types:
            env[s.target] = self._eval(s.value, env, s.target)
        elif isinstance(s, Havoc) and s.target in self.types:
            env[s.target] = self.fresh(s.target)
        elif isinstance(s, Scope):
            return self.block(s.body, env)
        elif isinstance(s, If) and not is_check(s):
            self._if(s, env)
        elif isinstance(s, Loop):
            self._loop(s, env)
        elif not isinstance(s, (Assign, Havoc, Assume, Assert, Label, If)):
            return False
        return True

    def _eval(self, e: Expr, env: Mapping[str, sp.Expr], target: str) -> sp.Expr:
        try:
            return sp.expand(to_sym(e, env))
        except NotAffine:
            return self.fresh(target)

    def _if(self, s: If, env: dict[str, sp.Expr]) -> None:
        try:
            atoms = to_atoms(s.cond, env)
            known = [holds(a) for a in atoms]
        except NotAffine:
            known = [None]
        if all(k is not None for k in known):
            self.block(s.then if all(known) else s.orelse, env)
            return
        self._forget(s, env)

    def _forget(self, s: Stmt, env: dict[str, sp.Expr]) -> None:
        for t in walk_stmts((s,)):
            if isinstance(t, (Assign, Havoc)) and t.target in self.types:
                env[t.target] = self.fresh(t.target)

    def _loop(self, s: Loop, env: dict[str, sp.Expr]) -> None:
        try:
            body = loop_body(s, self.program)
        except NotAffine:
            self._forget(s, env)
            return
        summary = summarize(body, env, self.types)
        if summary is None:
            self._forget(s, env)
            return
        self.out[s.id] = summary
        env.update(summary.exit)
        for v in body.opaque:
            env[v] = self.fresh(v)
