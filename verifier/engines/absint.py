"""Abstract interpretation over the CFG with convex polyhedra (the Parma Polyhedra Library).

`loop_heads(program)` computes one polyhedron per loop head: the classic forward analysis over the
basic blocks of `build_cfg` (chaotic iteration in reverse post-order), with joins (convex hulls)
everywhere, delayed widening at loop heads (BHRZ03 limited by thresholds: bounds `v <= c`, `v >= c`
for the program's constants `c` and `c +- 1`, and the linear atoms of the loop's branch
conditions), then a few descending passes (narrowing) to recover what widening lost.

What is tracked: the scalar integer variables (pointers, arrays and floats are not). What is
approximated (always by losing information, never by inventing it):

* `x := e` is an affine image when `e` is affine over tracked variables with integer
  coefficients; anything else (`*` of two variables, `/`, `%`, bit operations, array reads,
  floats) forgets `x` (an unsigned `x` keeps `x >= 0`, see `Domain.add_range`);
* unsigned arithmetic and every conversion (signed ones too) wrap: an affine image on an
  unsigned target whose result may leave the type's range forgets the target instead; an
  unsigned sub-expression or a cast is used only where the polyhedron shows it cannot wrap;
* conditions: comparisons of affine sides, `&&`, `||` (hull), `!`, `!=` (the hull of `<` and
  `>`); any other condition is not used (the state is kept whole);
* strict inequalities become non-strict ones on integers (`a < b` as `a <= b - 1`), but the
  polyhedra are rational: integer-only facts (parity) are not found;
* signed overflow is undefined behaviour (excluded), so signed arithmetic is mathematical.

The result is a sound over-approximation of the reachable states at each head under those rules;
the proposer built on it (`invariants.absint`) only proposes, and Houdini and the certificate
check decide.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import ppl
from quokka.verifier.cfg import BasicBlock, Branch, Cfg, Jump, build_cfg
from quokka.verifier.ir import (
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
    constants,
)

Poly: TypeAlias = Any  # a ppl.C_Polyhedron (the library has no type annotations)
Affine = tuple[dict[str, int], int]  # coefficients by variable, constant term
Linear = tuple[dict[str, int], str, int]  # sum(c*v) op bound, op one of "<=", ">=", "=="

DELAY = 2  # joins at a loop head before widening starts
DESCENDING = 2  # narrowing passes
MAX_THRESHOLDS = 400  # variables times constants, beyond which only assigned variables get them
MAX_DIMS = 80  # more tracked variables than this: no analysis (polyhedra get too costly)
MAX_ATOMS = 2  # atoms a loop head is partitioned by (at most 2**MAX_ATOMS parts)


@dataclass
class Domain:
    """The tracked variables (one PPL dimension each) and their types."""

    types: dict[str, IntType]
    dims: dict[str, int] = field(init=False)

    def __post_init__(self) -> None:
        self.dims = {v: k for k, v in enumerate(self.types)}

    def universe(self) -> Poly:
        p = ppl.C_Polyhedron(len(self.dims), "universe")
        for v in self.types:
            self.add_range(p, v)
        return p

    def empty(self) -> Poly:
        return ppl.C_Polyhedron(len(self.dims), "empty")

    def expr(self, coeffs: Mapping[str, int], const: int) -> ppl.Linear_Expression:
        out = ppl.Linear_Expression(const)
        for v, c in coeffs.items():
            if c:
                out += c * ppl.Variable(self.dims[v])
        return out

    def constraint(self, lin: Linear) -> ppl.Constraint:
        coeffs, op, bound = lin
        e = self.expr(coeffs, -bound)
        return e == 0 if op == "==" else (e <= 0 if op == "<=" else e >= 0)

    def add_range(self, p: Poly, v: str) -> None:
        """`v >= 0` for an unsigned `v`; nothing else (dropping constraints is sound): upper
        bounds on n variables make a box of 2**n vertices, too costly for the double
        description, and a signed range says nothing (no overflow) but its hulls with small
        polyhedra are constraints with coefficients like 2147483647."""
        if not self.types[v].signed:
            p.add_constraint(self.constraint(({v: 1}, ">=", 0)))

    def forget(self, p: Poly, v: str) -> None:
        p.unconstrain(ppl.Variable(self.dims[v]))
        self.add_range(p, v)

    def within(self, p: Poly, aff: Affine, ty: IntType) -> bool:
        """Whether the affine value stays within `ty`'s range on all of `p`."""
        q = ppl.C_Polyhedron(p)
        e = self.expr(*aff)
        q.add_constraint(e >= ty.min)
        q.add_constraint(e <= ty.max)
        return bool(q.contains(p))

    def linears(self, constraint: ppl.Constraint) -> Linear:
        """A PPL constraint as `sum(c*v) op bound` over variable names."""
        names = list(self.dims)
        coeffs = {names[k]: int(c) for k, c in enumerate(constraint.coefficients()) if c}
        op = "==" if constraint.is_equality() else ">="
        return coeffs, op, -int(constraint.inhomogeneous_term())


# ----------------------------------------------------------------------------- expressions


class Exprs:
    """Affine forms and linear conditions of IR expressions, read on one polyhedron."""

    def __init__(self, domain: Domain) -> None:
        self.d = domain

    def affine(self, e: Expr, p: Poly) -> Affine | None:
        """`e`'s exact value as an affine form, or None (see the module docstring)."""
        if isinstance(e, Const):
            return {}, e.value
        if isinstance(e, Var):
            return ({e.name: 1}, 0) if e.name in self.d.dims else None
        if isinstance(e, Cast):
            return self._cast(e, p)
        if isinstance(e, Unary) and e.op == "-":
            inner = self.affine(e.operand, p)
            return None if inner is None else self._exact(_scale(inner, -1), e.type, p)
        if isinstance(e, Binary) and e.op in ("+", "-", "*"):
            return self._binary(e, p)
        return None

    def _cast(self, e: Cast, p: Poly) -> Affine | None:
        inner = self.affine(e.operand, p)
        if inner is None or e.type.is_bool or e.type.is_pointer:
            return None
        # a conversion wraps into its type, signed ones included (only arithmetic cannot overflow)
        return inner if self.d.within(p, inner, e.type) else None

    def _binary(self, e: Binary, p: Poly) -> Affine | None:
        a, b = self.affine(e.left, p), self.affine(e.right, p)
        if a is None or b is None:
            return None
        if e.op == "+":
            out = _add(a, b, 1)
        elif e.op == "-":
            out = _add(a, b, -1)
        elif not a[0]:
            out = _scale(b, a[1])
        elif not b[0]:
            out = _scale(a, b[1])
        else:
            return None
        return self._exact(out, e.type, p)

    def _exact(self, aff: Affine, ty: IntType, p: Poly) -> Affine | None:
        """`aff` when it is the value of type `ty` (signed: always, overflow being undefined;
        otherwise only when `p` shows it within the range, so nothing wrapped)."""
        if ty.signed or self.d.within(p, aff, ty):
            return aff
        return None

    # ------------------------------------------------------------------------- conditions

    def assume(self, cond: Expr, p: Poly, truth: bool = True) -> Poly:
        """`p` restricted to the states where `cond` is non-zero (`truth`) or zero."""
        if p.is_empty():
            return p
        if isinstance(cond, Unary) and cond.op == "!":
            return self.assume(cond.operand, p, not truth)
        if isinstance(cond, Binary) and cond.op in ("&&", "||"):
            return self._logic(cond, p, truth)
        if isinstance(cond, Binary) and cond.op in ("<", "<=", ">", ">=", "==", "!="):
            return self._compare(cond, p, truth)
        if isinstance(cond.type, IntType) and not cond.type.is_pointer:
            return self._compare(Binary("!=", cond, Const(0, cond.type), cond.type), p, truth)
        return p

    def _logic(self, cond: Binary, p: Poly, truth: bool) -> Poly:
        conj = (cond.op == "&&") == truth
        if conj:
            return self.assume(cond.right, self.assume(cond.left, p, truth), truth)
        left = self.assume(cond.left, ppl.C_Polyhedron(p), truth)
        right = self.assume(cond.right, ppl.C_Polyhedron(p), truth)
        left.poly_hull_assign(right)
        return left

    def _compare(self, cond: Binary, p: Poly, truth: bool) -> Poly:
        a, b = self.affine(cond.left, p), self.affine(cond.right, p)
        if a is None or b is None:
            return p
        op = cond.op if truth else NEGATE[cond.op]
        diff = _add(a, b, -1)  # left - right, compared with 0
        if op == "!=":
            low = self._restrict(p, diff, "<")
            low.poly_hull_assign(self._restrict(p, diff, ">"))
            return low
        return self._restrict(p, diff, op)

    def _restrict(self, p: Poly, diff: Affine, op: str) -> Poly:
        out = ppl.C_Polyhedron(p)
        coeffs, const = diff
        strict = {"<": ("<=", -1), ">": (">=", 1)}
        op, shift = strict.get(op, (op, 0))
        out.add_constraint(self.d.constraint((coeffs, op, shift - const)))
        return out


NEGATE = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}


def _add(a: Affine, b: Affine, sign: int) -> Affine:
    coeffs = dict(a[0])
    for v, c in b[0].items():
        coeffs[v] = coeffs.get(v, 0) + sign * c
    return {v: c for v, c in coeffs.items() if c}, a[1] + sign * b[1]


def _scale(a: Affine, k: int) -> Affine:
    return ({v: k * c for v, c in a[0].items() if k * c}, k * a[1])


# ----------------------------------------------------------------------------- the analysis

Tag = tuple[int, tuple[bool, ...]] | None  # the partition a state is in: (head block, atom truths there)


@dataclass(frozen=True)
class Part:
    """One partition of a loop head: the truth of the head's atoms (`guard`, a conjunction),
    and the constraints of the states at the head where it holds."""

    guard: tuple[Linear, ...]
    constraints: tuple[Linear, ...]


@dataclass(frozen=True)
class Heads:
    """The analysis' result: per loop id the head's constraints (the hull of its parts) and, for
    a partitioned head, its parts; `complete` is False when the time budget ran out (then
    nothing is reported)."""

    constraints: Mapping[str, tuple[Linear, ...]]
    complete: bool
    reason: str = ""
    parts: Mapping[str, tuple[Part, ...]] = field(default_factory=dict)


class Analysis:
    """One forward analysis of a program (see the module docstring).

    With `partition`, the states of a loop whose body branches on linear inequalities (its
    *atoms*, at most `MAX_ATOMS`, exits excluded) are split at its head by the atoms' truth there,
    and each part is followed through the body on its own (trace partitioning): the disjunction
    of the parts is what a phase invariant needs (`x <= 1000000 && y == 0 || x == 1000000 + 3*y`).
    """

    def __init__(self, program: Program, cfg: Cfg, domain: Domain, deadline: float, partition: bool) -> None:
        self.cfg = cfg
        self.d = domain
        self.x = Exprs(domain)
        self.deadline = deadline
        self.entry: list[dict[Tag, Poly]] = [{} for _ in cfg.blocks]
        self.visits: dict[tuple[int, Tag], int] = {}
        self.rank = {b: k for k, b in enumerate(cfg.order)}
        self.heads = {loop.head: loop for loop in cfg.loops.values()}
        self.thresholds = {h: self._thresholds(program, h) for h in self.heads}
        self.atoms = {h: self._partition_atoms(h) for h in self.heads} if partition else {}
        self.owner = self._owners()

    def run(self) -> bool:
        """Ascending iteration with widening, then narrowing; False when out of time."""
        start = self.cfg.entry
        for tag, part in self._route(start, None, self.d.universe()):
            self.entry[start][tag] = part
        work = {start}
        while work:
            if time.monotonic() > self.deadline:
                return False
            b = min(work, key=self.rank.__getitem__)
            work.discard(b)
            for s, tag, post in self.post(b):
                for t, part in self._route(s, tag, post):
                    if self._update(s, t, part):
                        work.add(s)
        return self._descend()

    def head_state(self, head: int) -> Poly:
        out = self.d.empty()
        for p in self.entry[head].values():
            out.poly_hull_assign(p)
        return out

    def post(self, b: int) -> list[tuple[int, Tag, Poly]]:
        """The state at the end of block `b` on each outgoing edge, per partition."""
        block = self.cfg.blocks[b]
        out = []
        for tag, start in self.entry[b].items():
            p = ppl.C_Polyhedron(start)
            for s in block.stmts:
                p = self.stmt(s, p)
            out += [(succ, tag, q) for succ, q in self._edges(block, p) if not q.is_empty()]
        return out

    def _edges(self, block: BasicBlock, p: Poly) -> list[tuple[int, Poly]]:
        end = block.end
        if isinstance(end, Jump):
            return [(end.target, p)]
        if isinstance(end, Branch):
            return [
                (end.then, self.x.assume(end.cond, p, True)),
                (end.orelse, self.x.assume(end.cond, p, False)),
            ]
        return []

    def stmt(self, s: Assign | Havoc | Assume | Assert, p: Poly) -> Poly:
        if p.is_empty():
            return p
        if isinstance(s, (Assume, Assert)):  # after an assertion, only the runs where it held go on
            return self.x.assume(s.cond, p)
        if s.target not in self.d.dims:
            return p
        if isinstance(s, Havoc):
            self.d.forget(p, s.target)
            return p
        return self._assign(s.target, s.value, p)

    def _assign(self, target: str, value: Expr, p: Poly) -> Poly:
        aff = self.x.affine(value, p)
        if aff is None:
            self.d.forget(p, target)
            return p
        ty = self.d.types[target]
        fits = ty.signed or self.d.within(p, aff, ty)
        if not fits:
            self.d.forget(p, target)
            return p
        p.affine_image(ppl.Variable(self.d.dims[target]), self.d.expr(*aff))
        return p

    def _route(self, s: int, tag: Tag, p: Poly) -> list[tuple[Tag, Poly]]:
        """The partitions a state entering block `s` goes to: a partitioned loop's head splits
        it by its atoms; inside that loop it keeps its partition; elsewhere there is one."""
        owner = self.owner[s]
        if owner is None:
            return [(None, p)]
        if tag is not None and tag[0] == owner and s != owner:
            return [(tag, p)]
        parts: list[tuple[tuple[bool, ...], Poly]] = [((), p)]
        for atom in self.atoms[owner]:
            parts = [
                ((*bits, truth), q)
                for bits, part in parts
                for truth in (True, False)
                if not (q := self._with(part, atom if truth else negation(atom))).is_empty()
            ]
        return [((owner, bits), q) for bits, q in parts]

    def _with(self, p: Poly, lin: Linear) -> Poly:
        q = ppl.C_Polyhedron(p)
        q.add_constraint(self.d.constraint(lin))
        return q

    def _update(self, s: int, tag: Tag, post: Poly) -> bool:
        old = self.entry[s].get(tag)
        if old is None:
            self.entry[s][tag] = post
            return True
        if old.contains(post):
            return False
        new = ppl.C_Polyhedron(old)
        new.poly_hull_assign(post)
        key = (s, tag)
        self.visits[key] = self.visits.get(key, 0) + 1
        if s in self.heads and self.visits[key] > DELAY:
            new.limited_BHRZ03_extrapolation_assign(old, self.thresholds[s])
        self.entry[s][tag] = new
        return True

    def _descend(self) -> bool:
        """Descending passes from the post-fixpoint: each block's state becomes the join of what
        its predecessors now send (still a post-fixpoint, so still sound)."""
        for _ in range(DESCENDING):
            for b in self.cfg.order:
                if time.monotonic() > self.deadline:
                    return False
                self.entry[b] = self._incoming(b)
        return True

    def _incoming(self, b: int) -> dict[Tag, Poly]:
        sent: list[tuple[Tag, Poly]] = [(None, self.d.universe())] if b == self.cfg.entry else []
        for pred in set(self.cfg.preds[b]):
            sent += [(tag, p) for s, tag, p in self.post(pred) if s == b]
        out: dict[Tag, Poly] = {}
        for tag, p in sent:
            for t, part in self._route(b, tag, p):
                if t in out:
                    out[t].poly_hull_assign(part)
                else:
                    out[t] = part
        return out

    def _owners(self) -> list[int | None]:
        """Per block, the head of the innermost partitioned loop it is in (None: none)."""
        out: list[int | None] = [None] * len(self.cfg.blocks)
        size = [len(self.cfg.blocks) + 1] * len(self.cfg.blocks)
        for head, atoms in self.atoms.items():
            loop = self.heads[head]
            for b in loop.blocks if atoms else ():
                if len(loop.blocks) < size[b]:
                    out[b], size[b] = head, len(loop.blocks)
        return out

    def _partition_atoms(self, head: int) -> tuple[Linear, ...]:
        """The inequalities the loop's own branches (not its exits) test, as `sum <= bound`."""
        loop = self.heads[head]
        blocks = [self.cfg.blocks[b] for b in sorted(loop.blocks) if self.cfg.loop_of(b) == loop.id]
        conds = [
            b.end.cond for b in blocks if isinstance(b.end, Branch) and all(s in loop.blocks for s in b.succs)
        ]
        universe = self.d.universe()
        found: list[Linear] = []
        for node in (n for cond in conds for n in _comparisons(cond) if n.op in _AS_LE):
            a, b = self.x.affine(node.left, universe), self.x.affine(node.right, universe)
            if a is not None and b is not None and (a[0] or b[0]):
                atom = _canonical(_add(a, b, -1), node.op)
                if atom not in found:
                    found.append(atom)
        return tuple(found[:MAX_ATOMS])

    def _thresholds(self, program: Program, head: int) -> ppl.Constraint_System:
        """Bounds at the program's constants (for every variable, or only those the loop
        assigns when that is too many), and the atoms of the loop's branch conditions."""
        loop = self.heads[head]
        blocks = [self.cfg.blocks[b] for b in sorted(loop.blocks)]
        consts = sorted(c for c in constants(program) if abs(c) < 1 << 62)
        bounded = set(self.d.dims)
        if len(bounded) * len(consts) > MAX_THRESHOLDS:
            bounded &= {s.target for b in blocks for s in b.stmts if isinstance(s, (Assign, Havoc))}
        out = ppl.Constraint_System()
        for v in sorted(bounded):
            for c in {k + delta for k in consts for delta in (-1, 0, 1)}:
                out.insert(self.d.constraint(({v: 1}, "<=", c)))
                out.insert(self.d.constraint(({v: 1}, ">=", c)))
        for lin in self._atoms(b.end.cond for b in blocks if isinstance(b.end, Branch)):
            out.insert(self.d.constraint(lin))
        return out

    def _atoms(self, conds: Iterable[Expr]) -> list[Linear]:
        """The linear comparisons in `conds` (each as both of its non-strict halves)."""
        universe = self.d.universe()
        out: list[Linear] = []
        for cond in conds:
            for node in _comparisons(cond):
                a, b = self.x.affine(node.left, universe), self.x.affine(node.right, universe)
                if a is not None and b is not None and (a[0] or b[0]):
                    coeffs, const = _add(a, b, -1)
                    out += [(coeffs, op, -const + shift) for op, shift in _HALVES]
        return out


_HALVES = (("<=", 0), (">=", 0), ("<=", -1), (">=", 1))


_AS_LE = {"<": (1, -1), "<=": (1, 0), ">": (-1, -1), ">=": (-1, 0)}  # op: (sign, shift)


def _canonical(diff: Affine, op: str) -> Linear:
    """`diff op 0` as `sum <= k`, or as its negation when that has a positive first coefficient
    (an atom and its negation partition alike)."""
    sign, shift = _AS_LE[op]
    coeffs, const = _scale(diff, sign)
    bound = -const + shift
    if coeffs[min(coeffs)] < 0:
        coeffs, bound = {v: -c for v, c in coeffs.items()}, -bound - 1
    return coeffs, "<=", bound


def negation(lin: Linear) -> Linear:
    """The negation of an inequality, on integers: `sum <= k` is false when `sum >= k + 1`."""
    coeffs, op, bound = lin
    if op == "<=":
        return coeffs, ">=", bound + 1
    assert op == ">=", lin
    return coeffs, "<=", bound - 1


def _comparisons(e: Expr) -> list[Binary]:
    if isinstance(e, Binary) and e.op in ("&&", "||"):
        return [*_comparisons(e.left), *_comparisons(e.right)]
    if isinstance(e, Unary) and e.op == "!":
        return _comparisons(e.operand)
    if isinstance(e, Binary) and e.op in NEGATE:
        return [e]
    return []


def tracked(program: Program) -> dict[str, IntType]:
    """The variables the analysis tracks: scalar integers that are not pointers."""
    return {
        v.name: v.type for v in program.variables if isinstance(v.type, IntType) and not v.type.is_pointer
    }


def loop_heads(
    program: Program,
    budget_s: float = 5.0,
    scopes: Mapping[str, Collection[str]] | None = None,
    partition: bool = True,
) -> Heads:
    """The constraints of the polyhedron at every loop head (see the module docstring), projected
    on the variables `scopes` names for the loop (all tracked ones without it), and the parts of
    the partitioned heads; an unreachable head has no entry."""
    types = tracked(program)
    if len(types) > MAX_DIMS:
        return Heads({}, False, f"{len(types)} integer variables (more than {MAX_DIMS})")
    cfg = build_cfg(program)
    domain = Domain(types)
    analysis = Analysis(program, cfg, domain, time.monotonic() + budget_s, partition)
    if not analysis.run():
        return Heads({}, False, f"out of time after {budget_s:g} s")
    out, parts = {}, {}
    for loop_id, loop in cfg.loops.items():
        keep = set(types) if scopes is None else set(scopes.get(loop_id, ()))
        hull = analysis.head_state(loop.head)
        if hull.is_empty():
            continue
        out[loop_id] = _project(domain, hull, keep)
        split = [(tag, p) for tag, p in analysis.entry[loop.head].items() if tag is not None]
        if len(split) > 1:
            atoms = analysis.atoms[loop.head]
            parts[loop_id] = tuple(_part(domain, _guard(atoms, tag[1]), p, keep) for tag, p in split if tag)
    return Heads(out, True, parts=parts)


def _part(domain: Domain, guard: tuple[Linear, ...], p: Poly, keep: set[str]) -> Part:
    """The part's facts that its guard alone does not imply."""
    where = ppl.C_Polyhedron(len(domain.dims), "universe")
    for g in guard:
        where.add_constraint(domain.constraint(g))
    facts = []
    for c in _project(domain, p, keep):
        implied = ppl.C_Polyhedron(where)
        implied.add_constraint(domain.constraint(c))
        if not implied.contains(where):
            facts.append(c)
    return Part(guard, tuple(facts))


def _guard(atoms: tuple[Linear, ...], bits: tuple[bool, ...]) -> tuple[Linear, ...]:
    return tuple(a if truth else negation(a) for a, truth in zip(atoms, bits, strict=True))


def _project(domain: Domain, p: Poly, keep: set[str]) -> tuple[Linear, ...]:
    q = ppl.C_Polyhedron(p)
    for v, dim in domain.dims.items():
        if v not in keep:
            q.unconstrain(ppl.Variable(dim))
    return tuple(domain.linears(c) for c in q.minimized_constraints())
