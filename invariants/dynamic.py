"""The dynamic proposer: candidate loop invariants learned from executions.

It runs the program in the IR interpreter on many inputs (random small and boundary values, and
Z3 models of the path to each loop as seeds), records the states at every loop head, and proposes
per loop what holds on all of them:

* constants (`x == 5`) and polynomial equalities up to degree 3 (more for few variables),
  e.g. `z == 6*n + 6`, `y == 3*n*n + 3*n + 1`, `x == n*n*n` (see `polynomial`);
* the conditions asserted at the loop's head and right after it (read through inlined
  `__VERIFIER_assert` calls, see `structure`), and relations between the two sides of those
  comparisons and of the loop's exit tests: `i <= n` when the loop runs while `i < n`, or
  `c <= k || c == 0` when that holds only once the loop has changed `c` from its entry value;
* what the program text says holds where the loop is entered: the assumptions, assertions and
  branch conditions on the way to it and the tests whose other branch ends the run (`if (!(n <=
  N)) return 0;`), the guards of the loops around it, and the head assertions of the loops
  directly inside it (over variables the loop keeps; see `structure`);
* octagonal bounds and congruences (see `octagon`; a large modulus only as a program constant).

Each candidate is re-evaluated with the IR's semantics on the recorded states before it is
proposed; a loop that no run reached (an earlier loop runs too long) gets the text's candidates
only. States passed in `ProposalContext.ctis` join the recorded ones. The samples of a program
are computed once per proposer instance and reused in later rounds; a program that reads no
input is run once.
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from quokka.verifier.encode.seeds import SeedSource
from quokka.verifier.ir import INT, Binary, Cast, Const, Expr, IntType, Loop, Program, Var, VarDecl
from quokka.verifier.ir.printer import c_names, format_expr

from .canonical import key
from .evaluate import compile_expr, holds_on
from .facts import ExprBuilder, Fact, equation, linear, long_long, wide_type
from .octagon import Observations, OctagonConfig, congruences, pair_bounds, unary_bounds
from .polynomial import EqualityConfig, equalities
from .protocol import Candidate, LoopContext, ProposalContext, State
from .sampling import Samples, SamplingConfig, collect
from .structure import (
    after_loop,
    assigned_in,
    comparisons,
    enclosing_guards,
    find_loop,
    inner_assertions,
    loop_head,
    path_facts,
    preference,
    program_constants,
)

NAME = "dynamic"


@dataclass(frozen=True)
class DynamicConfig:
    sampling: SamplingConfig = field(default_factory=SamplingConfig)
    equalities: EqualityConfig = field(default_factory=EqualityConfig)
    octagon: OctagonConfig = field(default_factory=OctagonConfig)
    time_share: float = 0.3  # of ProposalContext.budget_s
    max_time_s: float = 8.0
    seed_share: float = 0.25  # of the sampling time, at most, for exploring paths to the loops
    max_check_states: int = 2000
    guard_offset_limit: int = 16
    use_ctis: bool = True
    # propose "the state is one of those seen" up to this many states: many when the inputs were
    # enumerated (the set is then likely exact), few otherwise (a big wrong set slows Houdini down)
    max_set_states: int = 3000
    max_sampled_set_states: int = 400
    max_case_values: int = 4  # a variable the loop writes with this few values splits the states
    max_case_variables: int = 1


class DynamicProposer:
    """Proposes what all recorded loop-head states satisfy (see the module docstring)."""

    name = NAME

    def __init__(self, config: DynamicConfig | None = None) -> None:
        self.config = config or DynamicConfig()
        self._cache: tuple[Program, Samples] | None = None
        self.last_samples: Samples | None = None

    def propose(self, context: ProposalContext) -> list[Candidate]:
        if not context.loops:
            return []
        start = time.monotonic()
        limit = max(0.05, min(self.config.max_time_s, self.config.time_share * context.budget_s))
        samples = self._samples(context, start + 0.7 * limit)
        out: list[Candidate] = []
        for loop in context.loops:
            out += self._infer(context, loop, samples, start + limit)
        return out

    def _infer(
        self, context: ProposalContext, loop: LoopContext, samples: Samples, deadline: float
    ) -> list[Candidate]:
        lid = loop.loop.id
        ctis = [_ir_names(s, loop) for s in context.ctis.get(lid, ())] if self.config.use_ctis else []
        return infer(
            context.program,
            loop,
            samples.states.get(lid, ()),
            self.config,
            context.seed,
            runs=samples.runs.get(lid, ()),
            entry=samples.entry.get(lid, ()),
            ctis=ctis,
            deadline=deadline,
            exhaustive=samples.exhaustive,
        )

    def _samples(self, context: ProposalContext, deadline: float) -> Samples:
        if self._cache is not None and self._cache[0] is context.program:
            return self._cache[1]
        rng = random.Random(context.seed)
        explore_deadline = time.monotonic() + self.config.seed_share * max(0.0, deadline - time.monotonic())
        seeds = SeedSource(context.program, rng, explore_deadline)
        samples = collect(context.program, context.seed, deadline, seeds, self.config.sampling)
        self._cache = (context.program, samples)
        self.last_samples = samples
        return samples


def infer(
    program: Program,
    loop: LoopContext,
    states: Sequence[State],
    config: DynamicConfig | None = None,
    seed: int = 0,
    *,
    runs: Sequence[Sequence[int]] | None = None,
    entry: Sequence[bool] | None = None,
    ctis: Sequence[State] = (),
    deadline: float = float("inf"),
    exhaustive: bool = False,
) -> list[Candidate]:
    """Candidates for one loop from its head states.

    `runs[k]` numbers the runs that reached `states[k]` (default: each state its own run), which
    decides which extreme values are credible bounds; `entry[k]` says whether `states[k]` was
    seen on entry to the loop (default: none was); `ctis` are further states, always
    among those every candidate is checked on. States missing a loop variable are ignored.
    After `deadline` the polynomial search starts no new degree. `exhaustive`: the states come
    from running every input of a small box (`sampling.input_box`).
    """
    config = config or DynamicConfig()
    names = [d.name for d in loop.variables]
    ids = list(runs) if runs is not None else [(k,) for k in range(len(states))]
    ids += [(-1 - k,) for k in range(len(ctis))]
    flags = [*(entry if entry is not None else [False] * len(states)), *[False] * len(ctis)]
    rows = [r for r in zip([*states, *ctis], ids, flags, strict=True) if all(v in r[0] for v in names)]
    if not rows:  # no run got here (e.g. an earlier loop runs too long): what the program text says
        return _unobserved(program, loop)
    obs = Observations.of([s for s, _, _ in rows], [h for _, h, _ in rows], program_constants(program))
    at_entry = [s for s, _, f in rows if f]
    exprs = _structural(program, loop.loop.id, names, (obs.states, at_entry), config) + _exprs(
        _facts(program, loop, obs, config, seed, deadline), {d.name: d for d in program.variables}
    )
    cap = config.max_set_states if exhaustive else config.max_sampled_set_states
    sets = _state_set(loop, obs.states, cap)  # holds on every observed state by construction
    sampled_only = [s for s in states if all(v in s for v in names)]  # CTIs may be unreachable
    exprs += _by_case(program, loop, sampled_only, config, seed, deadline)
    extra = [s for s in ctis if all(v in s for v in names)]
    sampled = list(obs.states[: len(obs.states) - len(extra)])
    check = _check_states(sampled, config.max_check_states, seed) + extra
    names_c = c_names(program, loop.loop.id)
    out, seen = [], set()
    for e in exprs:
        k = key(e)
        if k not in seen and holds_on(e, check):
            seen.add(k)
            out.append(Candidate(loop.loop.id, e, format_expr(e, names_c, readable=True), NAME))
    return out + [Candidate(loop.loop.id, e, format_expr(e, names_c), NAME) for e in sets]


def _unobserved(program: Program, loop: LoopContext) -> list[Candidate]:
    """Candidates for a loop that no run reached: its head assertions, what is asserted after
    it, and the conditions known where it is entered (Houdini checks them like any other)."""
    names = frozenset(d.name for d in loop.variables)
    found = find_loop(program, loop.loop.id)
    if found is None:
        return []
    exprs = [*loop_head(found, names).asserted, *after_loop(program, loop.loop.id, names)]
    exprs += _entry_facts(program, found, names)
    names_c = c_names(program, loop.loop.id)
    unique = {key(e): e for e in exprs}
    return [Candidate(loop.loop.id, e, format_expr(e, names_c, readable=True), NAME) for e in unique.values()]


def _state_set(loop: LoopContext, states: Sequence[State], cap: int) -> list[Expr]:
    """The disjunction of the distinct states seen, when there are few: with small bounded inputs
    (SV-COMP's `_valuebound` tasks) the runs can see every reachable state, and then it is the
    strongest invariant there is."""
    ints = [d for d in loop.variables if isinstance(d.type, IntType)]
    distinct = sorted({tuple(s[d.name] for d in ints) for s in states})
    if not ints or not 1 < len(distinct) <= cap:
        return []
    points = [
        _balanced(
            "&&",
            [_compare("==", d, v) for d, v in zip(ints, p, strict=True)],
        )
        for p in distinct
    ]
    return [_balanced("||", points)]


def _by_case(
    program: Program,
    loop: LoopContext,
    states: Sequence[State],
    config: DynamicConfig,
    seed: int,
    deadline: float,
) -> list[Expr]:
    """`v != k || fact` for the constants and equalities that hold in the states where `v` is `k`,
    `v` the first variable the loop writes that takes few values: what holds at the head of a
    loop bounded by a counter (SV-COMP's `_unwindbound` tasks) differs by iteration."""
    found = find_loop(program, loop.loop.id)
    if found is None:
        return []
    decls = {d.name: d for d in program.variables}
    scope = {d.name for d in loop.variables}
    written = [decls[v] for v in assigned_in(found) if v in scope and isinstance(decls[v].type, IntType)]
    out: list[Expr] = []
    for d in [d for d in written if 2 <= len({s[d.name] for s in states}) <= config.max_case_values][
        : config.max_case_variables
    ]:
        for value in sorted({s[d.name] for s in states}):
            subset = Observations.of([s for s in states if s[d.name] == value])
            guard = _compare("!=", d, value)
            facts = _facts(program, loop, subset, config, seed, deadline)
            facts = [f for f in facts if f.kind in ("constant", "equality")]
            out += [Binary("||", guard, e, INT) for e in _exprs(facts, decls)]
    return out


def _balanced(op: str, parts: Sequence[Expr]) -> Expr:
    """`parts` joined by `op` as a balanced tree (a long chain would nest as deep as it is long)."""
    if len(parts) == 1:
        return parts[0]
    half = len(parts) // 2
    return Binary(op, _balanced(op, parts[:half]), _balanced(op, parts[half:]), INT)


def _ir_names(state: State, loop: LoopContext) -> State:
    """A state keyed by the C names visible at the loop (as the verifier reports CTIs) or by IR
    names, keyed by IR names."""
    scope = dict(loop.loop.scope)
    return {scope.get(k, k): v for k, v in state.items()}


def _facts(
    program: Program, loop: LoopContext, obs: Observations, config: DynamicConfig, seed: int, deadline: float
) -> list[Fact]:
    types = {d.name: d.type for d in loop.variables if isinstance(d.type, IntType)}
    states = obs.states
    constant = {v: states[0][v] for v in types if all(s[v] == states[0][v] for s in states)}
    facts = [linear({v: 1}, "==", c, "constant") for v, c in constant.items()]
    varying = preference([v for v in types if v not in constant], find_loop(program, loop.loop.id))
    eqs = equalities(varying, states, config.equalities, seed, deadline)
    facts += [equation(eq.poly, eq.solved, "equality") for eq in eqs]
    facts += unary_bounds(varying, obs, types, config.octagon)
    solved = {eq.solved for eq in eqs}
    facts += pair_bounds([v for v in varying if v not in solved], obs, config.octagon)
    facts += congruences(varying, obs, config.octagon)
    return facts


def _exprs(facts: list[Fact], decls: Mapping[str, VarDecl]) -> list[Expr]:
    builder = ExprBuilder(decls)
    out = []
    for f in facts:
        try:
            out.append(builder.to_expr(f))
        except ValueError:
            continue  # a constant beyond 128 bits
    return out


def _compare(op: str, d: VarDecl, value: int) -> Expr:
    """`d op value` for an integer variable `d`."""
    assert isinstance(d.type, IntType)
    return Binary(op, Var(d.name, d.type), Const(value, d.type), INT)


def _structural(
    program: Program,
    loop_id: str,
    loop_vars: Sequence[str],
    observed: tuple[Sequence[State], Sequence[State]],
    config: DynamicConfig,
) -> list[Expr]:
    """The loop's head assertions, and relations between the two sides of its exit tests and
    assertions; `observed` holds all states and those seen on entry to the loop."""
    loop = find_loop(program, loop_id)
    if loop is None:
        return []
    states, at_entry = observed
    head = loop_head(loop, frozenset(loop_vars))
    after = after_loop(program, loop_id, frozenset(loop_vars))
    atoms = [c for e in head.exits + head.asserted + after for c in comparisons(e)]
    ll, limit = _long_long(program), config.guard_offset_limit
    initial = _initial_values(program, [v for v in assigned_in(loop) if v in loop_vars], at_entry)
    out = [*head.asserted, *after, *_entry_facts(program, loop, frozenset(loop_vars))]
    for atom in atoms:
        out += _relations(atom, states, limit, ll) + _unless_initial(atom, states, initial, limit, ll)
    return out


def _entry_facts(program: Program, loop: Loop, names: frozenset[str]) -> list[Expr]:
    """What the text says holds at the loop's head besides its own assertions: the conditions
    known where it is entered, and the head assertions of the loops directly inside it."""
    entry = enclosing_guards(program, loop.id, names) + path_facts(program, loop.id, names)
    return entry + inner_assertions(loop, names)


def _initial_values(program: Program, written: Sequence[str], at_entry: Sequence[State]) -> dict[str, Const]:
    """The variables the loop writes that have one value whenever the loop is entered."""
    out = {}
    for v in written:
        values = {s[v] for s in at_entry}
        ty = program.var(v).type
        if len(values) == 1 and isinstance(ty, IntType):
            out[v] = Const(values.pop(), ty)
    return out


def _unless_initial(
    atom: Binary, states: Sequence[State], initial: Mapping[str, Const], limit: int, ll: IntType
) -> list[Expr]:
    """`L <= R + c || v == v0` where `L <= R + c` holds once the loop has changed `v` from its
    initial value v0 (`c <= k || c == 0` for `while (c < k)` when k may be negative)."""
    try:
        diffs = _differences(atom, states)
    except (ArithmeticError, KeyError, TypeError):
        return []
    out: list[Expr] = []
    for sign, op in ((1, "<="), (-1, ">=")):
        if max(sign * d for d in diffs) <= limit:
            continue  # `_relations` has the plain bound
        for v, v0 in initial.items():
            rest = [sign * d for d, s in zip(diffs, states, strict=True) if s[v] != v0.value]
            if rest and abs(max(rest)) <= limit:
                bound = _offset(atom.left, op, atom.right, sign * max(rest), ll)
                out.append(Binary("||", bound, Binary("==", Var(v, v0.type), v0, INT), INT))
                break
    return out


def _differences(atom: Binary, states: Sequence[State]) -> list[int]:
    lf, rf = compile_expr(atom.left), compile_expr(atom.right)
    return [lf(s) - rf(s) for s in states]


def _long_long(program: Program) -> IntType:
    return long_long({d.name: d for d in program.variables})


def _relations(atom: Binary, states: Sequence[State], limit: int, ll: IntType) -> list[Expr]:
    """The strongest of `L < R`, `L <= R`, `L == R`, ... that holds, or `L <= R + c` bounds."""
    left, right = atom.left, atom.right
    try:
        diffs = _differences(atom, states)
    except (ArithmeticError, KeyError, TypeError):
        return []
    lo, hi = min(diffs), max(diffs)
    if lo == hi == 0:
        return [Binary("==", left, right, INT)]
    out: list[Expr] = []
    # A strict bound seen on a prefix of the run is often the exit test: its non-strict form also
    # holds in the state that leaves the loop (`x <= 1000000` for `while (x < 1000000) x += 2`).
    if hi < 0:
        out.append(Binary("<", left, right, INT))
    if hi <= 0:
        out.append(Binary("<=", left, right, INT))
    elif abs(hi) <= limit:
        out.append(_offset(left, "<=", right, hi, ll))
    if lo > 0:
        out.append(Binary(">", left, right, INT))
    if lo >= 0:
        out.append(Binary(">=", left, right, INT))
    elif abs(lo) <= limit:
        out.append(_offset(left, ">=", right, lo, ll))
    return out


def _offset(left: Expr, op: str, right: Expr, c: int, ll: IntType) -> Expr:
    """`left op right + c` in a signed type wide enough for both sides (folded for a constant)."""
    assert isinstance(left.type, IntType) and isinstance(right.type, IntType)
    if c == 0:
        return Binary(op, left, right, INT)
    if isinstance(right, Const) and left.type.min <= right.value + c <= left.type.max:
        return Binary(op, left, Const(right.value + c, left.type), INT)
    w = wide_type([left.type, right.type], [c], ll)
    lw = left if left.type == w else Cast(left, w)
    rw = right if right.type == w else Cast(right, w)
    return Binary(op, lw, Binary("+" if c > 0 else "-", rw, Const(abs(c), w), w), INT)


def _check_states(states: list[State], cap: int, seed: int) -> list[State]:
    return states if len(states) <= cap else random.Random(seed).sample(states, cap)
