"""The certificate checker: are the given loop invariants inductive, and do they imply safety?

One query per edge of the cutpoint graph (`encode`), each in a fresh solver:
initiation (entry -> head), consecution (head -> head, nested loops included) and safety
(head -> error, entry -> error). Loops without an invariant get `true`. The type-range facts of
`encode.range_facts` are conjoined to every invariant (and checked like the rest). An obligation
is valid only when its query is `unsat`; `unknown` is never valid.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import z3

from ..encode import ENTRY, ERROR, Edge, Encoding, encode, range_facts
from ..encode.instantiate import instantiate
from ..errors import Coord, EngineError
from ..ir import ArrayType, Binary, Const, Expr, IntType, Program, Var, conjuncts, free_vars, operands
from .base import Budget, EngineResult, Status, Stopwatch, unknown

ENGINE = "inductive"
SPLIT_MIN = 8  # a source invariant's disjunction this wide is checked one disjunct at a time
# the reason `solve` gives for an unsat found with the quantified hypotheses instantiated
INSTANTIATED = "quantified hypotheses instantiated at the index terms, goals skolemised"


@dataclass(frozen=True)
class Cti:
    """A counterexample to an obligation: the state at the source head and at the target head.

    Keys are the C names visible at the loop (IR names where none is known); `pre` is empty
    for the entry, `post` for the error location.
    """

    pre: Mapping[str, int]
    post: Mapping[str, int]


@dataclass(frozen=True)
class Obligation:
    kind: str  # "initiation" | "consecution" | "safety" | "input"
    src: str
    dst: str
    status: str  # "valid" | "invalid" | "unknown"
    reason: str
    cti: Cti | None = None
    assert_coord: Coord | None = None

    @property
    def valid(self) -> bool:
        return self.status == "valid"


@dataclass(frozen=True)
class Obligations:
    items: tuple[Obligation, ...]

    @property
    def all_valid(self) -> bool:
        return all(o.valid for o in self.items)

    @property
    def failed(self) -> tuple[Obligation, ...]:
        return tuple(o for o in self.items if not o.valid)

    def summary(self) -> str:
        if self.all_valid:
            return f"all {len(self.items)} obligations valid"
        if not self.items:
            return "no obligations"
        return "; ".join(o.reason for o in self.failed)


# ----------------------------------------------------------------------------- states


def state_names(program: Program, node: str) -> dict[str, str]:
    """IR name -> the name to show (C name at the loop; IR name where C names clash)."""
    if node in (ENTRY, ERROR):
        return {}
    ints = {v.name for v in program.variables if isinstance(v.type, IntType)}
    scope = program.loop(node).scope
    if scope:
        return {ir: c for c, ir in scope if ir in ints}
    c_names = [v.c_name for v in program.variables if v.name in ints]
    return {
        v.name: v.c_name if c_names.count(v.c_name) == 1 else v.name
        for v in program.variables
        if v.name in ints
    }


def state_values(
    model: z3.ModelRef, env: Mapping[str, z3.ExprRef], names: Mapping[str, str]
) -> dict[str, int]:
    out = {}
    for ir, shown in names.items():
        if ir in env:
            value = model.eval(env[ir], model_completion=True)
            if z3.is_int_value(value):
                out[shown] = value.as_long()
    return out


def cti_of(enc: Encoding, edge: Edge, model: z3.ModelRef) -> Cti:
    pre = state_values(model, enc.pre, state_names(enc.program, edge.src)) if edge.src != ENTRY else {}
    post = state_values(model, edge.post, state_names(enc.program, edge.dst))
    return Cti(pre, post)


def _show(state: Mapping[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in state.items()) or "-"


def describe(enc: Encoding, edge: Edge, cti: Cti | None = None) -> str:
    """A one-line description of the obligation of `edge` (with its CTI)."""
    where = edge.label
    coord = enc.assert_coord(edge)
    if edge.kind == "safety":
        where = f"assertion at line {coord.line}" if coord else "an assertion"
        where += "" if edge.src == ENTRY else f" from loop {edge.src}"
    text = f"{edge.kind} ({where})"
    if cti is not None:
        text += f" fails: [{_show(cti.pre)}]" + ("" if edge.dst == ERROR else f" -> [{_show(cti.post)}]")
    return text


# ----------------------------------------------------------------------------- queries


def solve(
    assertions: Sequence[z3.BoolRef], budget: Budget
) -> tuple[z3.CheckSatResult, z3.ModelRef | None, str]:
    """Check `assertions` in a fresh solver within `budget`: (result, model if sat, reason if unknown).

    A query with quantifiers is first asked quantifier-free (`instantiate`: hypotheses
    instantiated at the index terms, goals skolemised), which is weaker: its `unsat` is the
    answer (reason `INSTANTIATED`), anything else leaves the question to the original query."""
    if budget.expired:
        return z3.unknown, None, "budget exhausted"
    weaker = instantiate(assertions)
    kind = "inductive obligation, instantiated"
    if weaker is not None and _check(weaker.assertions, budget, kind)[0] == z3.unsat:
        return z3.unsat, None, INSTANTIATED
    return _check(assertions, budget, "inductive obligation")


def _check(
    assertions: Sequence[z3.BoolRef], budget: Budget, kind: str
) -> tuple[z3.CheckSatResult, z3.ModelRef | None, str]:
    if budget.expired:
        return z3.unknown, None, "budget exhausted"
    solver = z3.Solver()
    solver.set("timeout", budget.z3_timeout_ms())
    solver.add(*assertions)
    with budget.recorder.timed(kind) as call:
        result = solver.check()
        call.answer = str(result)
    if result == z3.sat:
        return result, solver.model(), ""
    return result, None, solver.reason_unknown() if result == z3.unknown else ""


def invariant_formulas(
    program: Program, invariants: Mapping[str, Expr]
) -> tuple[dict[str, list[Expr]], list[Obligation]]:
    """Each loop's conjuncts (given invariant plus range facts), and problems with the input."""
    problems = []
    names = {v.name for v in program.variables}
    loops = {info.id for info in program.loops}
    for loop, inv in invariants.items():
        bad = _malformed(inv, names) if loop in loops else f"no loop '{loop}' in the program"
        if bad:
            problems.append(Obligation("input", loop, loop, "invalid", f"invariant for {loop}: {bad}"))
    facts = list(range_facts(program))
    return {loop: [*([invariants[loop]] if loop in invariants else []), *facts] for loop in loops}, problems


def _malformed(inv: Expr, names: set[str]) -> str:
    unknown_vars = sorted(free_vars(inv) - names)
    if unknown_vars:
        return f"unknown variables {', '.join(unknown_vars)}"
    if isinstance(inv.type, ArrayType):
        return "not an integer expression"
    return ""


def holds(enc: Encoding, edge: Edge, at: str, parts: Sequence[Expr]) -> z3.BoolRef:
    tr = enc.translator(edge, at)
    return z3.And([tr.formula(c) for c in parts])


def cases(parts: Sequence[Expr]) -> tuple[list[Expr], list[Expr]] | None:
    """(the other conjuncts, the disjuncts) of the first conjunct that is a disjunction of at least
    `SPLIT_MIN` parts or a set of states (`is_state_set`); else None."""
    flat = [c for conj in parts for c in conjuncts(conj)]
    for k, c in enumerate(flat):
        parts = operands(c, "||")
        if len(parts) >= SPLIT_MIN or is_state_set(c):
            return flat[:k] + flat[k + 1 :], parts
    return None


def is_state_set(e: Expr) -> bool:
    """Whether `e` is a disjunction of points, each a conjunction of `variable == constant`."""
    parts = operands(e, "||")
    return len(parts) > 1 and all(_is_point(p) for p in parts)


def _is_point(e: Expr) -> bool:
    return all(
        isinstance(a, Binary) and a.op == "==" and isinstance(a.left, Var) and isinstance(a.right, Const)
        for a in conjuncts(e)
    )


Point = list[tuple[z3.ExprRef, z3.ExprRef]]  # pre-state constant -> value
Case = tuple[z3.BoolRef | None, Point | None]  # a disjunct: translated, or a point (translated on demand)
Cases = dict[str, tuple[z3.BoolRef, list[Case]]]  # loop -> (other conjuncts, disjuncts), translated


def case_query(
    enc: Encoding, edge: Edge, inv: Mapping[str, list[Expr]], budget: Budget, cache: Cases | None = None
) -> tuple[z3.CheckSatResult, z3.ModelRef | None, str]:
    """Whether the obligation of `edge` has a counterexample. A wide disjunction in the source
    invariant is split into one query per disjunct, where the whole disjunction can take the
    solver minutes. A disjunct that fixes variables to constants (a point of a set of states) is
    substituted into the query, which mostly simplifies to a constant then; when the edge takes
    that point to one determined state and the target invariant is a set of states too, membership
    is looked up instead (`_lands_in`), so a set of n states costs n lookups, not n queries of size n.
    `cache` keeps the translated cases of each loop for the other edges leaving it."""
    split = _cases(enc, edge, inv, {} if cache is None else cache) if edge.src != ENTRY else None
    if split is None:
        pre = [holds(enc, edge, "pre", inv[edge.src])] if edge.src != ENTRY else []
        return solve([edge.guard, *pre, *_negated_post(enc, edge, inv)], budget)
    rest, parts = split
    has_points = any(point for _, point in parts)
    target = _target(enc, edge, inv[edge.dst], rest, budget) if has_points and edge.dst != ERROR else None
    query: z3.BoolRef | None = None
    for part, point in parts:
        if budget.expired:
            return z3.unknown, None, "budget exhausted"
        if point and target is not None and _lands_in(point, target, budget):
            continue
        query = query if query is not None else z3.And(edge.guard, rest, *_negated_post(enc, edge, inv))
        instance = z3.simplify(z3.substitute(query, *point)) if point else query
        if z3.is_false(instance):
            continue
        result, model, why = solve([instance, _disjunct(part, point)], budget)
        if result != z3.unsat:
            return result, model, why
    return z3.unsat, None, ""


def _disjunct(part: z3.BoolRef | None, point: Point | None) -> z3.BoolRef:
    if part is not None:
        return part
    assert point is not None
    return z3.And([a == b for a, b in point])


def _negated_post(enc: Encoding, edge: Edge, inv: Mapping[str, list[Expr]]) -> list[z3.BoolRef]:
    return [z3.Not(holds(enc, edge, "post", inv[edge.dst]))] if edge.dst != ERROR else []


@dataclass(frozen=True)
class _Target:
    """A target invariant that is a set of states (its points' variables and values), and the
    edge's successor as one term `succ(guard, guard && !others, post values...)`: one substitution
    and one simplification per source point then give everything `_lands_in` needs (the z3 Python
    API costs far more per call than the work it asks for)."""

    names: tuple[str, ...]
    points: frozenset[tuple[int, ...]]
    successor: z3.ExprRef
    others_kept: bool  # the edge keeps the other conjuncts from anywhere the source's rest holds


def _target(
    enc: Encoding, edge: Edge, parts: Sequence[Expr], rest: z3.BoolRef, budget: Budget
) -> _Target | None:
    flat = [c for conj in parts for c in conjuncts(conj)]
    sets = [k for k, c in enumerate(flat) if is_state_set(c)]
    if not sets:
        return None
    points = [_assignment(p) for p in operands(flat[sets[0]], "||")]
    names = tuple(sorted(points[0] or ()))
    if not names or any(p is None or tuple(sorted(p)) != names for p in points):
        return None
    if any(n not in edge.post or not edge.post[n].is_int() for n in names):
        return None
    guard = z3.And(edge.guard, rest)
    others = holds(enc, edge, "post", flat[: sets[0]] + flat[sets[0] + 1 :])
    args = [guard, z3.And(guard, z3.Not(others)), *(edge.post[n] for n in names)]
    succ = z3.Function("succ", z3.BoolSort(), z3.BoolSort(), *(z3.IntSort() for _ in names), z3.BoolSort())
    values = frozenset(tuple(p[n] for n in names) for p in points if p is not None)
    kept = solve([args[1]], budget)[0] == z3.unsat
    return _Target(names, values, succ(*args), kept)


def _assignment(point: Expr) -> dict[str, int] | None:
    """`x == 1 && y == 2` as {x: 1, y: 2}; None if a variable is fixed twice."""
    out: dict[str, int] = {}
    for atom in conjuncts(point):
        assert isinstance(atom, Binary) and isinstance(atom.left, Var) and isinstance(atom.right, Const)
        if atom.left.name in out:
            return None
        out[atom.left.name] = atom.right.value
    return out


def _lands_in(point: Point, target: _Target, budget: Budget) -> bool:
    """True only when the edge cannot leave the target from `point`: its guard is false there, or
    it yields one state whatever the fresh values are, a member, and the other conjuncts (the
    range facts) cannot fail there. False means "not shown", and the full query decides."""
    succ = z3.simplify(z3.substitute(target.successor, *point))
    guard, others, *post = (succ.arg(k) for k in range(succ.num_args()))
    if z3.is_false(guard):
        return True
    if not all(z3.is_int_value(v) for v in post):
        return False
    if tuple(v.as_long() for v in post) not in target.points:
        return False
    return target.others_kept or bool(z3.is_false(others)) or solve([others], budget)[0] == z3.unsat


def _cases(
    enc: Encoding, edge: Edge, inv: Mapping[str, list[Expr]], cache: Cases
) -> tuple[z3.BoolRef, list[Case]] | None:
    if edge.src not in cache:
        split = cases(inv[edge.src])
        if split is None:
            return None
        rest, parts = split
        tr = enc.translator(edge, "pre")
        points = [_point(p, enc.pre) for p in parts]
        translated: list[Case] = [
            (None if pt else tr.formula(p), pt) for p, pt in zip(parts, points, strict=True)
        ]
        cache[edge.src] = (z3.And([tr.formula(c) for c in rest]), translated)
    return cache[edge.src]


def _point(e: Expr, env: Mapping[str, z3.ExprRef]) -> Point | None:
    """The substitution `var -> value` when `e` is a conjunction of `var == constant`, each
    variable fixed once (`_assignment`)."""
    values = _assignment(e) if _is_point(e) else None
    if values is None or any(name not in env for name in values):
        return None
    return [(env[name], z3.IntVal(value)) for name, value in values.items()]


def check_edge(
    enc: Encoding, edge: Edge, inv: Mapping[str, list[Expr]], budget: Budget, cache: Cases | None = None
) -> Obligation:
    result, model, why = case_query(enc, edge, inv, budget, cache)
    coord = enc.assert_coord(edge)
    if result == z3.unsat:
        text = describe(enc, edge) + " holds" + (f" ({INSTANTIATED})" if why == INSTANTIATED else "")
        return Obligation(edge.kind, edge.src, edge.dst, "valid", text, None, coord)
    if result == z3.unknown or model is None:
        text = f"{describe(enc, edge)} unknown ({why or 'solver gave up'})"
        return Obligation(edge.kind, edge.src, edge.dst, "unknown", text, None, coord)
    cti = cti_of(enc, edge, model)
    return Obligation(edge.kind, edge.src, edge.dst, "invalid", describe(enc, edge, cti), cti, coord)


def check(
    program: Program, invariants: Mapping[str, Expr], budget: Budget, encoding: Encoding | None = None
) -> Obligations:
    """Every obligation of `invariants` (loop id -> IR invariant) on `program`, reported separately."""
    inv, problems = invariant_formulas(program, invariants)
    if problems:
        return Obligations(tuple(problems))
    enc = encoding or encode(program)
    cache: Cases = {}
    return Obligations(tuple(check_edge(enc, edge, inv, budget, cache) for edge in enc.edges))


def prove_with(program: Program, invariants: Mapping[str, Expr], budget: Budget) -> EngineResult:
    """SAFE iff every obligation of `invariants` is valid; the certificate is `invariants` itself."""
    watch = Stopwatch()
    try:
        obligations = check(program, invariants, budget)
    except (EngineError, KeyError, TypeError, z3.Z3Exception) as exc:
        why = f"could not check the invariants: {type(exc).__name__}: {exc}"
        return unknown(ENGINE, why, watch.elapsed())
    stats = {"obligations": len(obligations.items), "failed": len(obligations.failed)}
    if not obligations.all_valid:
        return unknown(ENGINE, obligations.summary(), watch.elapsed(), stats)
    instantiated = sum(1 for o in obligations.items if o.reason.endswith(f"({INSTANTIATED})"))
    how = f", {instantiated} of them with {INSTANTIATED}" if instantiated else ""
    count = len(obligations.items)
    reason = f"the invariants are inductive and imply every assertion ({count} obligations{how})"
    loops = {info.id for info in program.loops}
    certificate = {k: v for k, v in invariants.items() if k in loops}
    return EngineResult(ENGINE, Status.SAFE, reason, certificate, None, watch.elapsed(), stats)
