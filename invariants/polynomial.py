"""Polynomial equalities that every observed state satisfies, found degree by degree.

At degree d the states are mapped to the values of all monomials of degree <= d (the columns) and
the exact rational null space of that matrix gives the relations (see `linalg`). Three measures
keep the matrix small and the answer readable:

* a relation that is linear in one variable `v` (no other monomial mentions `v`) defines `v`;
  `v` is eliminated and higher degrees are searched without it, e.g. cohencu gives
  `z == 6*n + 6`, then `y == 3*n*n + 3*n + 1`, then `x == n*n*n`;
* relations that are multiples of earlier ones (m * g) are not reported again;
* a monomial `v**e` with `e` >= the number of distinct values of `v` is left out (it is
  a combination of lower powers on the data: `b*b == b` for a flag is no news).

Variables are given in order of preference for being solved for (the most dependent first).
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations_with_replacement
from math import comb

from .linalg import ModEchelon, Relation, nullspace

Monomial = tuple[tuple[str, int], ...]  # (variable, exponent > 0), in variable order; () is 1
Poly = tuple[tuple[Monomial, int], ...]  # integer coefficients, non-zero
State = Mapping[str, int]


@dataclass(frozen=True)
class EqualityConfig:
    max_degree: int = 3
    max_monomials: int = 120
    # Past max_degree, keep going while this few monomials remain (ps4..ps6 need degree 4..6).
    high_degree: int = 6
    high_degree_monomials: int = 84
    # A degree d > 1 is tried only with at least spare_factor * columns + spare_rows distinct
    # states (degree 1: columns + spare_points): with fewer, the data fit spurious relations.
    spare_factor: float = 1.5
    spare_rows: int = 8
    # Distinct states used per degree: rows_per_column * columns + 60, at most max_rows (the
    # candidates are checked on more states later).
    rows_per_column: int = 6
    max_rows: int = 1500
    max_coefficient: int = 1_000_000  # larger ones are fits to too little data
    spare_points: int = 4  # distinct points a relation's variables need beyond its monomials


@dataclass(frozen=True)
class PolyEquality:
    """`sum(coeff * monomial) == 0` holds on every state; `solved` is the variable it defines."""

    poly: Poly
    degree: int
    solved: str | None = None


def degree(m: Monomial) -> int:
    return sum(e for _, e in m)


def monomials(names: Sequence[str], max_degree: int, max_power: dict[str, int]) -> list[Monomial]:
    """All monomials of degree 1..max_degree over `names` (exponents capped by `max_power`)."""
    out: list[Monomial] = []
    for d in range(1, max_degree + 1):
        for combo in combinations_with_replacement(names, d):
            mono = tuple((v, combo.count(v)) for v in names if v in combo)
            if all(e <= max_power[v] for v, e in mono):
                out.append(mono)
    return out


def column_order(names: Sequence[str], monos: Sequence[Monomial]) -> list[Monomial]:
    """Columns from least to most preferred as the solved-for term of a relation.

    Most preferred: single variables (in `names` order), then higher monomials by degree; the
    constant 1 comes first, so it never leads.
    """
    rank = {v: i for i, v in enumerate(names)}
    pure = [m for m in monos if degree(m) == 1]
    higher = [m for m in monos if degree(m) > 1]
    higher.sort(key=lambda m: (degree(m), [-rank[v] for v, _ in m]))
    pure.sort(key=lambda m: -rank[m[0][0]])
    return [(), *higher, *pure]


def mono_value(m: Monomial, state: State) -> int:
    out = 1
    for v, e in m:
        out *= state[v] ** e
    return out


def mul(a: Monomial, b: Monomial, names: Sequence[str]) -> Monomial:
    exps = dict(a)
    for v, e in b:
        exps[v] = exps.get(v, 0) + e
    return tuple((v, exps[v]) for v in names if v in exps)


def solved_variable(poly: Poly) -> str | None:
    """The variable that occurs in `poly` only as a linear term, preferring the leading term."""
    for mono, _ in poly:
        if degree(mono) != 1:
            continue
        v = mono[0][0]
        if sum(1 for m, _ in poly for w, _ in m if w == v) == 1:
            return v
    return None


@dataclass
class _Search:
    names: list[str]
    states: list[State]
    config: EqualityConfig
    rng: random.Random
    kept: list[PolyEquality] = field(default_factory=list)
    found: list[PolyEquality] = field(default_factory=list)
    power: dict[str, int] = field(default_factory=dict)

    def run(self, deadline: float) -> list[PolyEquality]:
        d = 1
        while self.names and self._degree_allowed(d) and time.monotonic() < deadline:
            relations = self._search(d)
            if relations is None:
                break
            credible = [self._credible(eq) for eq in relations]
            # Dubious relations are not reported, but their multiples are no news either.
            self.kept += [eq for eq, ok in zip(relations, credible, strict=True) if not ok]
            relations = [eq for eq, ok in zip(relations, credible, strict=True) if ok]
            if not self._eliminate(relations):
                self._keep(relations)
                d += 1
        return self.found

    def _degree_allowed(self, d: int) -> bool:
        if d <= self.config.max_degree:
            return True
        count = len(self._monos(d))
        return d <= self.config.high_degree and count <= self.config.high_degree_monomials

    def _monos(self, d: int) -> list[Monomial]:
        if not self.power:
            self.power = {v: len({s[v] for s in self.states}) - 1 for v in self.names}
        return column_order(self.names, monomials(self.names, d, self.power))

    def _search(self, d: int) -> list[PolyEquality] | None:
        """The new relations of degree `d`; None when the matrix would be too big or too thin."""
        cols = self._monos(d)
        if len(cols) > self.config.max_monomials:
            return None
        rows = self._rows(cols)
        config = self.config
        if d == 1:
            need = len(cols) + config.spare_points
        else:
            need = int(config.spare_factor * len(cols)) + config.spare_rows
        if len(rows) < need:
            return None
        return [_equality(p) for p in self._new(nullspace(rows, len(cols)), cols, d)]

    def _credible(self, eq: PolyEquality) -> bool:
        """Small coefficients, and more distinct points over its variables than the monomials of
        its degree could fit (inputs fixed during the loop vary only from run to run), counting
        only points where some term is non-zero (`t*(4*n - 19*s) == 0` says nothing where t is 0)."""
        if max(abs(c) for _, c in eq.poly) > self.config.max_coefficient:
            return False
        names = sorted(_variables(eq.poly))
        terms = [m for m, _ in eq.poly if m]
        points = {tuple(s[v] for v in names) for s in self.states if any(mono_value(m, s) for m in terms)}
        return len(points) >= comb(len(names) + eq.degree, eq.degree) + self.config.spare_points

    def _rows(self, cols: list[Monomial]) -> list[list[int]]:
        """Monomial values on distinct states (distinct over the current variables), shuffled."""
        seen = {tuple(s[v] for v in self.names): s for s in self.states}
        keys = sorted(seen)
        self.rng.shuffle(keys)
        count = min(self.config.max_rows, self.config.rows_per_column * len(cols) + 60)
        return [[mono_value(m, seen[k]) for m in cols] for k in keys[:count]]

    def _new(self, relations: list[Relation], cols: list[Monomial], d: int) -> list[Poly]:
        """The relations that are not combinations of multiples of earlier ones."""
        index = {m: i for i, m in enumerate(cols)}
        echelon = ModEchelon(len(cols))
        for g in self.kept:
            for m in [(), *monomials(self.names, d - g.degree, {v: d for v in self.names})]:
                vec = [0] * len(cols)
                placed = [(index.get(mul(mono, m, self.names)), c) for mono, c in g.poly]
                if all(col is not None for col, _ in placed):
                    for col, c in placed:
                        vec[col] = c  # type: ignore[index]
                    echelon.add(vec)
        out = []
        for rel in sorted(relations, key=lambda r: r.lead):
            vec = [0] * len(cols)
            for i, c in rel.coeffs:
                vec[i] = c
            if echelon.add(vec):
                out.append(tuple((cols[i], c) for i, c in sorted(rel.coeffs, key=lambda ic: -ic[0])))
        return out

    def _eliminate(self, relations: list[PolyEquality]) -> bool:
        """Record the relations that define a variable and drop those variables; True if any."""
        solved: set[str] = set()
        for eq in relations:
            if eq.solved is not None and not (_variables(eq.poly) & solved):
                solved.add(eq.solved)
                self.found.append(eq)
        self.names = [v for v in self.names if v not in solved]
        self.kept = [g for g in self.kept if not (_variables(g.poly) & solved)]
        return bool(solved)

    def _keep(self, relations: list[PolyEquality]) -> None:
        self.found.extend(relations)
        self.kept.extend(relations)


def _variables(poly: Poly) -> set[str]:
    return {v for m, _ in poly for v, _ in m}


def _equality(poly: Poly) -> PolyEquality:
    return PolyEquality(poly, max(degree(m) for m, _ in poly), solved_variable(poly))


def equalities(
    names: Sequence[str],
    states: Sequence[State],
    config: EqualityConfig | None = None,
    seed: int = 0,
    deadline: float = float("inf"),
) -> list[PolyEquality]:
    """Polynomial equalities over `names` (most dependent first) that all `states` satisfy.

    Variables with a single value on all states should be left out (they are constants). No
    new degree is started after `deadline` (time.monotonic).
    """
    search = _Search(list(names), list(states), config or EqualityConfig(), random.Random(seed))
    return search.run(deadline)
