"""Exact rational null spaces of integer matrices.

`nullspace` eliminates modulo the Mersenne prime 2**127 - 1, lifts each basis vector back to the
rationals by rational reconstruction and keeps only the vectors that annihilate every row exactly,
so whatever it returns is an exact rational relation of the data. A relation whose reduced
coefficients exceed about 2**63 cannot be reconstructed and is dropped (for invariant inference
those are spurious fits anyway). `nullspace_exact` is plain Gauss-Jordan over `Fraction`s: slower,
kept as the reference the fast one is tested against.

Basis vectors come in reduced form: each has one "free" column (the last non-zero one, with a
positive coefficient) and otherwise only pivot columns, i.e. the rows of the reduced row echelon
form of the null space with the columns read right to left. Callers put the column they most want
to see solved for last.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from math import gcd, isqrt

PRIME = (1 << 127) - 1

Vector = tuple[tuple[int, int], ...]  # sparse: (column, coefficient), coefficients non-zero


@dataclass(frozen=True)
class Relation:
    """A primitive integer vector `v` with `row . v == 0` for every row; `lead` is its free column."""

    lead: int
    coeffs: Vector

    def dot(self, row: Sequence[int]) -> int:
        return sum(c * row[i] for i, c in self.coeffs)


class ModEchelon:
    """Rows modulo `p` kept in reduced row echelon form; rows are added one at a time."""

    def __init__(self, ncols: int, p: int = PRIME) -> None:
        self.ncols = ncols
        self.p = p
        self.pivots: dict[int, list[int]] = {}

    @property
    def rank(self) -> int:
        return len(self.pivots)

    def reduce(self, row: Sequence[int]) -> list[int]:
        p = self.p
        out = [x % p for x in row]
        for col, prow in self.pivots.items():
            f = out[col]
            if f:
                out = [(a - f * b) % p for a, b in zip(out, prow, strict=True)]
        return out

    def add(self, row: Sequence[int]) -> bool:
        """Add `row`; True when it was independent of the rows so far (the rank grew)."""
        reduced = self.reduce(row)
        col = next((i for i, x in enumerate(reduced) if x), None)
        if col is None:
            return False
        inv = pow(reduced[col], -1, self.p)
        new = [x * inv % self.p for x in reduced]
        for other_col, prow in self.pivots.items():
            f = prow[col]
            if f:
                self.pivots[other_col] = [(a - f * b) % self.p for a, b in zip(prow, new, strict=True)]
        self.pivots[col] = new
        return True

    def kernel(self) -> list[tuple[int, list[int]]]:
        """A null-space basis modulo p: (free column, dense vector) with the free entry 1."""
        out = []
        for free in range(self.ncols):
            if free in self.pivots:
                continue
            vec = [0] * self.ncols
            vec[free] = 1
            for col, prow in self.pivots.items():
                vec[col] = -prow[free] % self.p
            out.append((free, vec))
        return out


def rational_reconstruct(a: int, m: int) -> Fraction | None:
    """The fraction r/s with |r|, s <= sqrt(m/2) and r == a*s (mod m), if there is one."""
    bound = isqrt(m // 2)
    r0, r1, s0, s1 = m, a % m, 0, 1
    while r1 > bound:
        q = r0 // r1
        r0, r1 = r1, r0 - q * r1
        s0, s1 = s1, s0 - q * s1
    if s1 == 0 or abs(s1) > bound or gcd(r1, abs(s1)) != 1:
        return None
    return Fraction(r1, s1)


def primitive(free: int, values: dict[int, Fraction]) -> Relation:
    """The integer multiple of `values` with coprime coefficients and a positive entry at `free`."""
    denom: int = 1
    for v in values.values():
        denom = denom * v.denominator // gcd(denom, v.denominator)
    ints = {i: int(v * denom) for i, v in values.items() if v}
    g = 0
    for n in ints.values():
        g = gcd(g, n)
    sign = 1 if ints[free] > 0 else -1
    return Relation(free, tuple(sorted((i, sign * n // g) for i, n in ints.items())))


def lift(free: int, vec: Sequence[int], p: int = PRIME) -> Relation | None:
    """The rational vector whose image modulo p is `vec`, as a primitive integer `Relation`."""
    values: dict[int, Fraction] = {}
    for i, x in enumerate(vec):
        if x:
            q = rational_reconstruct(x, p)
            if q is None:
                return None
            values[i] = q
    return primitive(free, values)


def nullspace(rows: Sequence[Sequence[int]], ncols: int, first: int | None = None) -> list[Relation]:
    """The rational null space of `rows` (a reduced basis, see the module docstring).

    Only `first` rows (default: ncols + 8) are eliminated at the start. Then every row that a
    random combination of the kernel basis (modulo p) does not annihilate, i.e. every row
    outside the current row space, is eliminated too, until a pass adds none. The basis is then
    lifted to the rationals and checked exactly against all rows.
    """
    echelon = ModEchelon(ncols)
    start = min(len(rows), ncols + 8 if first is None else first)
    for row in rows[:start]:
        echelon.add(row)
    rng = random.Random(ncols)
    while True:
        kernel = echelon.kernel()
        if not kernel:
            return []
        probe = _combination(kernel, rng, echelon.p)
        outside = [row for row in rows[start:] if sum(row[i] * x for i, x in probe) % echelon.p]
        if not any([echelon.add(row) for row in outside]):
            break
    relations = [lift(free, vec) for free, vec in kernel]
    return [r for r in relations if r is not None and not any(r.dot(row) for row in rows)]


def _combination(
    kernel: Sequence[tuple[int, list[int]]], rng: random.Random, p: int
) -> list[tuple[int, int]]:
    """A random combination of the kernel vectors modulo p, sparse: (column, entry)."""
    total = [0] * len(kernel[0][1])
    for _, vec in kernel:
        c = rng.randrange(1, p)
        total = [(t + c * x) % p for t, x in zip(total, vec, strict=True)]
    return [(i, x) for i, x in enumerate(total) if x]


def nullspace_exact(rows: Sequence[Sequence[int]], ncols: int) -> list[Relation]:
    """The same basis as `nullspace`, by Gauss-Jordan elimination over the rationals."""
    pivots: dict[int, list[Fraction]] = {}
    for row in rows:
        cur = [Fraction(x) for x in row]
        for col, prow in pivots.items():
            if cur[col]:
                f = cur[col]
                cur = [a - f * b for a, b in zip(cur, prow, strict=True)]
        lead = next((i for i, x in enumerate(cur) if x), None)
        if lead is None:
            continue
        new = [x / cur[lead] for x in cur]
        for other, prow in pivots.items():
            if prow[lead]:
                f = prow[lead]
                pivots[other] = [a - f * b for a, b in zip(prow, new, strict=True)]
        pivots[lead] = new
    out = []
    for free in range(ncols):
        if free not in pivots:
            values = {free: Fraction(1)} | {col: -prow[free] for col, prow in pivots.items()}
            out.append(primitive(free, values))
    return out
