"""Polynomial equalities proven by algebra: the nonlinear invariants Z3's integer arithmetic gives up on.

Knuth's factoring loop asserts `d*d*q - 2*q*d - 4*r*d + 4*k*d + 8*r == 8*n` at its head, over
`unsigned` values that wrap. Every path between cutpoints (the entry, loop heads, the end) is run
symbolically on the control-flow graph: a value is a polynomial (sympy) over symbols that stand
for actual values (inputs, the state at a loop head, quotients and remainders, anything not
modelled), equal to the value exactly or modulo 2**w (unsigned arithmetic of width w; signed
arithmetic is mathematical, as everywhere in Quokka, with its overflows recorded elsewhere).
`x / y` and `x % y` introduce symbols Q, R with the fact `x == y*Q + R`; conditions that are
equalities (an `Assume`, a branch taken, an assertion passed) are facts; every other condition
is ignored, which only weakens what is known.

An equality holds at the end of a path when its polynomial is a combination of the facts with
polynomial cofactors (ideal membership, found by linear algebra on cofactor templates of degree
<= `MAX_DEGREE`): exactly when every fact used is exact, modulo 2**w when the cofactors have odd
denominators (2**w has no other units) and every fact used holds modulo 2**w. Each found
combination is verified by expanding it. Candidates are the equality conjuncts of the assertions
inside each loop; a Houdini loop keeps the inductive ones. SAFE needs every assertion of every
path proven; the certificate is the kept equalities per loop (`stats["algebra"]`), which the
portfolio checks afresh with `confirm`.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import z3
from quokka.verifier.ir.builder import conjunction

from ..cfg import Branch, Cfg, Halt, Jump, build_cfg
from ..ir import (
    ARITH_OPS,
    COMPARE_OPS,
    INT,
    LOGIC_OPS,
    Assert,
    Assign,
    Assume,
    Binary,
    Cast,
    Const,
    Expr,
    Havoc,
    IntType,
    Program,
    Unary,
    Var,
    conjuncts,
    free_vars,
    stmt_exprs,
    walk,
)
from ..properties import NO_OVERFLOW
from .base import Budget, EngineResult, Status, Stopwatch, unknown
from .conserved import conserved

ENGINE = "algebra"
MAX_DEGREE = 2
MAX_PATHS = 512
MAX_UNKNOWNS = 1500  # cofactor coefficients of one membership problem
SOLVE_MS = 5000  # z3's time for one linear system
RING_OPS = frozenset({"+", "-", "*"})
Proposed = Mapping[str, Sequence[Expr]]  # candidates per loop id


def applies(program: Program) -> bool:
    """Whether `program` asserts a nonlinear equality (a product of two variables) inside a loop
    (and its errors are assertions: a no-overflow program's are not)."""
    if program.property_name == NO_OVERFLOW:
        return False
    return any(_nonlinear(e) for e in _loop_assertion_equalities(build_cfg(program)))


def check(
    program: Program, budget: Budget, proposed: Mapping[str, Sequence[Expr]] | None = None
) -> EngineResult:
    """SAFE with polynomial-equality invariants, or UNKNOWN (never UNSAFE). Besides the program's
    own equalities, the equality conjuncts of `proposed` (per loop) are candidates."""
    watch = Stopwatch()
    if program.property_name == NO_OVERFLOW:
        return unknown(ENGINE, "a no-overflow program's errors are not assertions")
    try:
        proof = _Prover(build_cfg(program), budget)
        hopeless = proof.hopeless_assertion()
        if hopeless is not None:
            return unknown(ENGINE, hopeless, watch.elapsed())
        candidates = _with_proposed(_candidates(proof.cfg), proposed or {})
        invariants = proof.houdini(_with_proposed(candidates, proof.conserved()))
        failed = proof.unproven_assertion(invariants)
    except _GiveUp as exc:
        return unknown(ENGINE, str(exc), watch.elapsed())
    if failed is not None:
        return unknown(ENGINE, failed, watch.elapsed())
    found = {h: conjunction(list(parts)) for h, parts in invariants.items() if parts}
    return EngineResult(ENGINE, Status.SAFE, "polynomial invariants proven by ideal membership",
                        invariants=found, time_s=watch.elapsed(), stats={"algebra": True})  # fmt: skip


def confirm(program: Program, invariants: Mapping[str, Expr], budget: Budget) -> EngineResult:
    """The portfolio's check of a certificate of `check`: every path afresh, each equality of
    `invariants` preserved and every assertion proven, each combination verified by expansion."""
    watch = Stopwatch()
    try:
        proof = _Prover(build_cfg(program), budget)
        claimed = {h: tuple(conjuncts(e)) for h, e in invariants.items()}
        full = {h: claimed.get(h, ()) for h in proof.cfg.loops}
        kept = proof.houdini(full)
        if kept != full:
            return unknown(ENGINE, "a claimed equality is not inductive", watch.elapsed())
        failed = proof.unproven_assertion(full)
    except _GiveUp as exc:
        return unknown(ENGINE, str(exc), watch.elapsed())
    if failed is not None:
        return unknown(ENGINE, failed, watch.elapsed())
    return EngineResult(ENGINE, Status.SAFE, "every path re-checked by algebra", time_s=watch.elapsed())


def algebraic(result: EngineResult) -> bool:
    """Whether `result` is a proof of `check` (its certificate is checked by `confirm`)."""
    return result.stats.get("algebra") is True


class _GiveUp(Exception):
    pass


def _in_time(budget: Budget) -> None:
    if budget.expired:
        raise _GiveUp("timeout")


# ----------------------------------------------------------------------------- values and facts


def _sympy() -> Any:
    import sympy  # heavy: only the process that runs this engine pays for it

    return sympy


@dataclass(frozen=True)
class Modular:
    """A polynomial taken exactly (`modulus` 0) or modulo `modulus` (a power of two): as a value
    (a `Term`: the value equals `poly` so) or as a fact (a `Fact`: `poly == 0` so)."""

    poly: Any
    modulus: int


Term = Modular
Fact = Modular


def _divides(m: int, n: int) -> bool:
    """Whether a statement modulo `n` (0: exact) gives one modulo `m` (0: exact)."""
    return n == 0 or (m != 0 and n % m == 0)


def _meet(a: int, b: int) -> int:
    """The modulus two values modulo `a` and `b` are both known to (powers of two; 0: exact)."""
    return max(a, b) if 0 in (a, b) else min(a, b)


def _modulus(ty: IntType) -> int | None:
    """What arithmetic in `ty` is modulo: 0 for signed types (mathematical), 2**bits for unsigned
    ones, None where the engine does not model it (`_Bool`, pointers)."""
    if ty.is_bool or ty.is_pointer:
        return None
    return 0 if ty.signed else 1 << ty.bits


@dataclass
class _Symbols:
    """Fresh symbols; one quotient/remainder pair per division of the same two values."""

    count: itertools.count[int] = field(default_factory=itertools.count)
    divisions: dict[tuple[str, int, str, int], tuple[Any, Any]] = field(default_factory=dict)

    def fresh(self, hint: str) -> Term:
        return Term(_sympy().Dummy(f"{hint}{next(self.count)}"), 0)


@dataclass(frozen=True)
class _Goal:
    """An assertion met on a path: proven when its equalities follow from the facts known there,
    or when one of the refutable conjunctions does (then the path is infeasible)."""

    stmt: Assert
    equalities: list[Fact] | None
    facts: list[Fact]
    refutable: list[list[Fact]]


@dataclass
class _State:
    """Symbolic execution along one path: values, facts, the conjunctions of equalities the path
    needs false (a branch not taken), what boolean variables say, and the assertions met."""

    values: dict[str, Term]
    facts: list[Fact] = field(default_factory=list)
    refutable: list[list[Fact]] = field(default_factory=list)
    # a variable holding a condition: the equalities it states when true, and when false
    bools: dict[str, tuple[list[Fact] | None, list[Fact] | None]] = field(default_factory=dict)
    goals: list[_Goal] = field(default_factory=list)

    def copy(self) -> _State:
        return _State(
            dict(self.values), list(self.facts), list(self.refutable), dict(self.bools), list(self.goals)
        )

    def learn(self, cond: Expr, truth: bool, evaluator: _Evaluator) -> None:
        """The path continues where `cond` has value `truth`."""
        self.facts.extend(evaluator.equalities(cond, truth, self) or [])
        opposite = evaluator.equalities(cond, not truth, self)
        if opposite:
            self.refutable.append(opposite)


@dataclass(frozen=True)
class _PathEnd:
    """A path from cutpoint `start` (None: the entry) to `end` (None: the program ends there, or
    no execution goes on past an `assume(0)` or `assert(0)`)."""

    start: str | None
    end: str | None
    state: _State


class _Evaluator:
    def __init__(self, symbols: _Symbols) -> None:
        self.symbols = symbols

    def term(self, e: Expr, state: _State) -> Term:
        if isinstance(e, Const):
            return Term(_sympy().Integer(e.value), 0)
        if isinstance(e, Var) and e.name in state.values:
            return state.values[e.name]
        if isinstance(e, Binary) and e.op in ARITH_OPS:
            return self.binary(e, state)
        if isinstance(e, Unary) and e.op == "-":
            return self.ring(e.type, self.term(e.operand, state), Term(_sympy().Integer(0), 0), "neg", state)
        if isinstance(e, Cast):
            return self.cast(e, state)
        return self.symbols.fresh("v")

    def binary(self, e: Binary, state: _State) -> Term:
        a, b = self.term(e.left, state), self.term(e.right, state)
        if e.op in RING_OPS:
            return self.ring(e.type, a, b, e.op, state)
        if e.op in ("/", "%") and _modulus(e.type) is not None:
            return self.division(a, b, state)[0 if e.op == "/" else 1]
        return self.symbols.fresh("v")

    def ring(self, ty: IntType, a: Term, b: Term, op: str, state: _State) -> Term:
        m = _modulus(ty)
        if m is None or not (_divides(m, a.modulus) and _divides(m, b.modulus)):
            return self.symbols.fresh("v")
        poly = {"+": a.poly + b.poly, "-": a.poly - b.poly, "*": a.poly * b.poly, "neg": -a.poly}[op]
        return Term(_sympy().expand(poly), m)

    def division(self, a: Term, b: Term, state: _State) -> tuple[Term, Term]:
        """The quotient and remainder of the actual values: C's `a == b*(a/b) + a%b` holds of them
        (b != 0; otherwise the path has undefined behaviour)."""
        key = (str(a.poly), a.modulus, str(b.poly), b.modulus)
        if key not in self.symbols.divisions:
            self.symbols.divisions[key] = (self.symbols.fresh("q").poly, self.symbols.fresh("r").poly)
        q, r = self.symbols.divisions[key]
        fact = Fact(_sympy().expand(a.poly - b.poly * q - r), _meet(a.modulus, b.modulus))
        if fact not in state.facts:
            state.facts.append(fact)
        return Term(q, 0), Term(r, 0)

    def cast(self, e: Cast, state: _State) -> Term:
        inner = self.term(e.operand, state)
        source, target = e.operand.type, e.type
        if not isinstance(source, IntType) or _modulus(target) is None or _modulus(source) is None:
            return self.symbols.fresh("v")
        if inner.modulus == 0 and target.contains(source):
            return inner
        m = _modulus(target)
        if m and _divides(m, inner.modulus):  # a conversion to an unsigned type keeps the value mod 2**bits
            return Term(inner.poly, m)
        return self.symbols.fresh("v")

    def equalities(self, cond: Expr, truth: bool, state: _State) -> list[Fact] | None:
        """Equalities whose conjunction holds exactly when `cond` has truth value `truth` (None:
        no such list; the comparisons are at their operand type's modulus, so both ways hold)."""
        if isinstance(cond, Var):
            return state.bools.get(cond.name, (None, None))[0 if truth else 1]
        if isinstance(cond, Unary) and cond.op == "!":
            return self.equalities(cond.operand, not truth, state)
        if (
            isinstance(cond, Binary)
            and cond.op in ("==", "!=")
            and _is_zero(cond.right)
            and _boolean(cond.left, state)
        ):
            return self.equalities(cond.left, truth == (cond.op == "!="), state)
        if isinstance(cond, Binary) and cond.op == ("&&" if truth else "||"):
            left, right = self.equalities(cond.left, truth, state), self.equalities(cond.right, truth, state)
            return None if left is None or right is None else left + right
        if isinstance(cond, Binary) and cond.op == ("==" if truth else "!="):
            return self.equality(cond, state)
        return None

    def equality(self, cond: Binary, state: _State) -> list[Fact] | None:
        ty = cond.left.type
        m = _modulus(ty) if isinstance(ty, IntType) else None
        a, b = self.term(cond.left, state), self.term(cond.right, state)
        if m is None or not (_divides(m, a.modulus) and _divides(m, b.modulus)):
            return None
        return [Fact(_sympy().expand(a.poly - b.poly), m)]


# ----------------------------------------------------------------------------- paths


class _Paths:
    """Every path between cutpoints, run symbolically from the entry and from each loop head."""

    def __init__(self, cfg: Cfg, budget: Budget) -> None:
        self.cfg, self.budget = cfg, budget
        self.symbols = _Symbols()
        self.eval = _Evaluator(self.symbols)
        sp = _sympy()
        self.head_state = {v.name: Term(sp.Symbol(v.name), 0) for v in cfg.program.variables}
        zero = {v.name: Term(sp.Integer(0), 0) for v in cfg.program.variables}
        self.ends: list[_PathEnd] = []
        self._walk(None, cfg.entry, _State(zero))
        for loop_id, loop in cfg.loops.items():
            self._walk(loop_id, loop.head, _State(dict(self.head_state)))

    def _walk(self, start: str | None, block: int, state: _State) -> None:
        stack = [(block, state)]
        while stack:
            if len(self.ends) > MAX_PATHS:
                raise _GiveUp(f"more than {MAX_PATHS} paths between loop heads")
            _in_time(self.budget)
            b, st = stack.pop()
            if not all(self._step(s, st) for s in self.cfg.blocks[b].stmts):
                self.ends.append(_PathEnd(start, None, st))  # its goals still count
                continue
            end = self.cfg.blocks[b].end
            for target, cond, truth in _successors(end):
                nxt = st.copy() if isinstance(end, Branch) else st
                if cond is not None:
                    nxt.learn(cond, truth, self.eval)
                head = self.cfg.blocks[target].head
                if head is not None:
                    self.ends.append(_PathEnd(start, head, nxt))
                else:
                    stack.append((target, nxt))
            if isinstance(end, Halt):
                self.ends.append(_PathEnd(start, None, st))

    def _step(self, s: Assign | Havoc | Assume | Assert, st: _State) -> bool:
        """Run `s`; False when no execution goes on past it (`assume(0)`, `assert(0)`)."""
        if isinstance(s, Assign):
            st.bools.pop(s.target, None)
            if _is_condition(s.value):
                st.bools[s.target] = (
                    self.eval.equalities(s.value, True, st),
                    self.eval.equalities(s.value, False, st),
                )
            st.values[s.target] = self.eval.term(s.value, st)
        elif isinstance(s, Havoc):
            st.bools.pop(s.target, None)
            st.values[s.target] = self.symbols.fresh("h")
        elif isinstance(s, Assume):
            st.learn(s.cond, True, self.eval)
        else:
            goal = self.eval.equalities(s.cond, True, st)
            st.goals.append(_Goal(s, goal, list(st.facts), list(st.refutable)))
            st.learn(s.cond, True, self.eval)
        return not (isinstance(s, Assume | Assert) and _is_zero(s.cond))


def _is_condition(e: Expr) -> bool:
    return (isinstance(e, Binary) and e.op in COMPARE_OPS | LOGIC_OPS) or (
        isinstance(e, Unary) and e.op == "!"
    )


def _boolean(e: Expr, state: _State) -> bool:
    """Whether `e` is a condition (or a variable holding one), whose `!= 0` is its truth."""
    return _is_condition(e) or (isinstance(e, Var) and e.name in state.bools)


def _is_zero(e: Expr) -> bool:
    return isinstance(e, Const) and e.value == 0


def _successors(end: Jump | Branch | Halt) -> list[tuple[int, Expr | None, bool]]:
    if isinstance(end, Jump):
        return [(end.target, None, True)]
    if isinstance(end, Branch):
        return [(end.then, end.cond, True), (end.orelse, end.cond, False)]
    return []


# ----------------------------------------------------------------------------- the proof


class _Prover:
    def __init__(self, cfg: Cfg, budget: Budget) -> None:
        self.cfg, self.budget = cfg, budget
        self.paths = _Paths(cfg, budget)

    def conserved(self) -> dict[str, list[Expr]]:
        """Per loop, the quantities its body conserves that are zero on entry (`conserved`)."""
        head = {v: t.poly for v, t in self.paths.head_state.items()}
        out: dict[str, list[Expr]] = {}
        for h in self.cfg.loops:
            ends = [p for p in self.paths.ends if p.end == h]
            around = [_polys(p.state) for p in ends if p.start == h]
            into = [_polys(p.state) for p in ends if p.start != h]
            out[h] = conserved(self.cfg.program, _loop_variables(self.cfg, h), head, around, into)
        return out

    def houdini(self, candidates: Mapping[str, Sequence[Expr]]) -> dict[str, tuple[Expr, ...]]:
        """The largest subset of `candidates` (per loop) that every path preserves."""
        kept = {h: tuple(candidates.get(h, ())) for h in self.cfg.loops}
        changed = True
        while changed:
            changed = False
            for path in self.paths.ends:
                if path.end is None or not kept[path.end]:
                    continue
                facts = self.start_facts(path, kept)
                survivors = tuple(c for c in kept[path.end] if self.holds(c, path.state, facts))
                changed |= survivors != kept[path.end]
                kept[path.end] = survivors
        return kept

    def start_facts(self, path: _PathEnd, kept: Mapping[str, Sequence[Expr]]) -> list[Fact]:
        if path.start is None:
            return []
        state = _State(dict(self.paths.head_state))
        stated = [f for c in kept[path.start] for f in self.paths.eval.equalities(c, True, state) or []]
        return stated + state.facts  # with the quotient facts of divisions in the equalities

    def holds(self, candidate: Expr, state: _State, start: list[Fact]) -> bool:
        goals = self.paths.eval.equalities(candidate, True, state)
        return goals is not None and all(self.member(g, start + state.facts) for g in goals)

    def hopeless_assertion(self) -> str | None:
        """An assertion no equality could prove (it states none, and no path to it needs an
        equality false), found before any invariant is looked for; None when there is none."""
        for path in self.paths.ends:
            for goal in path.state.goals:
                if goal.equalities is None and not goal.refutable:
                    return f"assertion at {goal.stmt.coord}: not a polynomial equality"
        return None

    def unproven_assertion(self, kept: Mapping[str, Sequence[Expr]]) -> str | None:
        """Why some assertion on some path is not proven, or None when all are."""
        for path in self.paths.ends:
            start = self.start_facts(path, kept)
            for goal in path.state.goals:
                if not self.proven(goal, start):
                    return f"assertion at {goal.stmt.coord}: not a consequence of the polynomial facts"
        return None

    def proven(self, goal: _Goal, start: list[Fact]) -> bool:
        facts = start + goal.facts
        if goal.equalities is not None and all(self.member(g, facts) for g in goal.equalities):
            return True
        return any(all(self.member(g, facts) for g in conj) for conj in goal.refutable)

    def member(self, goal: Fact, facts: Sequence[Fact]) -> bool:
        _in_time(self.budget)
        return _combination(goal, list(dict.fromkeys(facts))) is not None


def _polys(state: _State) -> dict[str, Any]:
    return {v: t.poly for v, t in state.values.items()}


def _loop_variables(cfg: Cfg, loop_id: str) -> list[str]:
    """The variables loop `loop_id` carries: those it assigns, those it reads, then those its
    enclosing loop assigns (`a` of `c + k*b == a`); not the ones holding a condition or given any
    value (a nondet call, an uninitialised declaration)."""
    loop = cfg.loops[loop_id]
    stmts = [s for b in sorted(loop.blocks) for s in cfg.blocks[b].stmts]
    ends = [cfg.blocks[b].end for b in sorted(loop.blocks)]
    conditions = {s.target for s in stmts if isinstance(s, Assign) and _is_condition(s.value)}
    skip = conditions | {s.target for s in stmts if isinstance(s, Havoc)}
    exprs = [e for s in stmts for e in stmt_exprs(s)] + [e.cond for e in ends if isinstance(e, Branch)]
    read = [v for e in exprs for v in sorted(free_vars(e))]
    outer = _assigned(cfg, loop.parent) if loop.parent is not None else []
    return [v for v in dict.fromkeys(_assigned(cfg, loop_id) + read + outer) if v not in skip]


def _assigned(cfg: Cfg, loop_id: str) -> list[str]:
    blocks = sorted(cfg.loops[loop_id].blocks)
    return [s.target for b in blocks for s in cfg.blocks[b].stmts if isinstance(s, Assign)]


def _candidates(cfg: Cfg) -> dict[str, list[Expr]]:
    """Per loop, the equality conjuncts of the assertions inside it (nested loops included), and
    the definitions `v == e` of variables assigned once outside every loop (`xy = x*y;`)."""
    out: dict[str, list[Expr]] = {}
    definitions = _definitions(cfg)
    for loop_id, loop in cfg.loops.items():
        found = [c for b in sorted(loop.blocks) for c in _assert_equalities(cfg, b)]
        out[loop_id] = list(dict.fromkeys(found + definitions))
    return out


def _with_proposed(own: dict[str, list[Expr]], proposed: Proposed) -> dict[str, list[Expr]]:
    return {h: list(dict.fromkeys(cands + _equalities_of(proposed.get(h, ())))) for h, cands in own.items()}


def equalities_of(candidates: Proposed) -> dict[str, list[Expr]]:
    """The equality conjuncts of `candidates`, per loop (what algebra can use of them)."""
    return {h: _equalities_of(es) for h, es in candidates.items()}


def _equalities_of(exprs: Sequence[Expr]) -> list[Expr]:
    return [c for e in exprs for c in conjuncts(e) if isinstance(c, Binary) and c.op == "=="]


def nonlinear_equalities(candidates: Proposed) -> bool:
    """Whether some candidate is (or has a conjunct that is) a nonlinear equality."""
    return any(_nonlinear(c) for es in candidates.values() for c in _equalities_of(es))


def _definitions(cfg: Cfg) -> list[Expr]:
    """`v == e` of each nonlinear `v = e;` outside every loop, of a variable no loop writes."""
    in_loops = set().union(*(loop.blocks for loop in cfg.loops.values()))
    written = {s.target for b in in_loops for s in cfg.blocks[b].stmts if isinstance(s, Assign | Havoc)}
    outside = [s for b in cfg.blocks if b.id not in in_loops for s in b.stmts if isinstance(s, Assign)]
    counts = Counter(s.target for s in outside)
    return [
        Binary("==", Var(s.target, s.value.type), s.value, INT)
        for s in outside
        if s.target not in written
        and counts[s.target] == 1
        and _nonlinear(s.value)
        and not _is_condition(s.value)
    ]


def _assert_equalities(cfg: Cfg, block: int) -> Iterator[Expr]:
    """The equalities a block asserts, assumes or computes as a condition (`c = a == b;` of an
    inlined `__VERIFIER_assert(a == b)`)."""
    for s in cfg.blocks[block].stmts:
        cond = s.value if isinstance(s, Assign) and _is_condition(s.value) else getattr(s, "cond", None)
        if cond is not None:
            yield from _equalities_of([cond])


def _loop_assertion_equalities(cfg: Cfg) -> list[Expr]:
    return [c for cands in _candidates(cfg).values() for c in cands]


def _nonlinear(e: Expr) -> bool:
    return any(
        isinstance(n, Binary)
        and n.op == "*"
        and not isinstance(n.left, Const)
        and not isinstance(n.right, Const)
        for n in walk(e)
    )


# ----------------------------------------------------------------------------- ideal membership


def _combination(goal: Fact, facts: Sequence[Fact]) -> list[Any] | None:
    """Cofactors c with goal.poly == sum(c_i * facts_i.poly), exactly, or, for a goal modulo m,
    with integer cofactors and up to a polynomial whose coefficients are multiples of m (zero
    modulo m at every integer point); verified by expansion. None when none of degree <=
    MAX_DEGREE is found."""
    if _vanishes(goal.poly, goal.modulus):
        return []
    facts = [f for f in facts if _divides(goal.modulus, f.modulus)]  # those that hold modulo the goal's
    if not facts:
        return None
    gens = _gens(goal, facts)
    for degree in range(MAX_DEGREE + 1):
        cofactors = _solve(goal, facts, gens, degree)
        if cofactors is not None and _verified(goal, facts, cofactors):
            return cofactors
    return None


def _solve(goal: Fact, facts: Sequence[Fact], gens: list[Any], degree: int) -> list[Any] | None:
    """Cofactor templates of `degree` whose coefficients solve goal == sum(c_i * f_i): integers
    for a goal modulo a power of two, rationals for an exact one (z3 solves the linear system)."""
    sp = _sympy()
    combinations = itertools.combinations_with_replacement
    monomials = [sp.Mul(*c) for d in range(degree + 1) for c in combinations(gens, d)]
    if len(monomials) * len(facts) > MAX_UNKNOWNS:
        return None
    unknowns = [[sp.Dummy(f"c{i}_{j}") for j in range(len(monomials))] for i in range(len(facts))]
    templates = [sum(u * m for u, m in zip(row, monomials, strict=True)) for row in unknowns]
    residue = sp.expand(goal.poly - sum(t * f.poly for t, f in zip(templates, facts, strict=True)))
    equations = sp.Poly(residue, *gens).coeffs() if residue != 0 else []
    values = _linear_solution(equations, [u for row in unknowns for u in row], goal.modulus)
    return None if values is None else [sp.expand(t.xreplace(values)) for t in templates]


def _linear_solution(
    equations: Sequence[Any], unknowns: Sequence[Any], modulus: int
) -> dict[Any, Any] | None:
    """A solution of linear `equations` (sympy expressions = 0, or = 0 modulo `modulus` in
    integers when it is not 0) in `unknowns`, by z3."""
    sp = _sympy()
    var = z3.Int if modulus else z3.Real
    z3_of = {u: var(f"c{k}") for k, u in enumerate(unknowns)}
    solver = z3.Solver()
    solver.set("timeout", SOLVE_MS)
    for k, eq in enumerate(equations):
        terms = eq.as_coefficients_dict()
        total = z3.Sum([_z3_number(c) * (z3_of[u] if u != 1 else 1) for u, c in terms.items()])
        solver.add(total == (modulus * z3.Int(f"k{k}") if modulus else 0))
    if solver.check() != z3.sat:
        return None
    model = solver.model()
    return {u: sp.Rational(str(model.eval(x, model_completion=True))) for u, x in z3_of.items()}


def _z3_number(c: Any) -> z3.ArithRef:
    return z3.RealVal(str(c)) if not c.is_Integer else z3.IntVal(int(c))


def _verified(goal: Fact, facts: Sequence[Fact], cofactors: Sequence[Any]) -> bool:
    sp = _sympy()
    if goal.modulus and not all(_integral(c) for c in cofactors):
        return False
    total = sum((c * f.poly for c, f in zip(cofactors, facts, strict=True)), sp.Integer(0))
    return _vanishes(goal.poly - total, goal.modulus)


def _coefficients(poly: Any) -> list[Any]:
    sp = _sympy()
    expanded = sp.expand(poly)
    if not expanded.free_symbols:
        return [expanded]
    return list(sp.Poly(expanded, *sorted(expanded.free_symbols, key=str)).coeffs())


def _integral(poly: Any) -> bool:
    return all(c.is_Integer for c in _coefficients(poly))


def _vanishes(poly: Any, modulus: int) -> bool:
    """Whether `poly` is 0 at every integer point: identically, or modulo `modulus` (not 0) when
    each of its coefficients is a multiple of it (an integer polynomial)."""
    coefficients = [c for c in _coefficients(poly) if c != 0]
    if not coefficients:
        return True
    return modulus != 0 and all(c.is_Integer and int(c) % modulus == 0 for c in coefficients)


def _gens(goal: Fact, facts: Sequence[Fact]) -> list[Any]:
    return sorted(set().union(goal.poly.free_symbols, *(f.poly.free_symbols for f in facts)), key=str)
