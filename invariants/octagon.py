"""Bounds and congruences observed on states: octagon constraints and `x % k == r`.

Every bound is the extreme value seen, so it holds on the states by construction; whether it is
an invariant is the verifier's business. Bounds that say nothing new are left out: a unary bound
at the edge of the variable's type, and a pair bound `x + y <= c` no tighter than the sum of the
unary bounds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import reduce
from math import gcd

from quokka.verifier.ir import IntType
from quokka.verifier.ir.semantics import c_mod

from .facts import Fact, linear

State = Mapping[str, int]


@dataclass(frozen=True)
class OctagonConfig:
    pair_constant_limit: int = 16  # pair bounds with a larger |constant| are sampling artefacts
    max_pair_bounds: int = 24  # per loop; those with the smallest |constant| first
    max_modulus: int = 64
    # A bound must be a "plausible" constant (0, +-1, a program constant +-1) or be reached in
    # this many runs: the largest value one random run happened to produce is no invariant.
    # An unsupported extreme is widened to the nearest plausible constant at most `widen_limit`
    # beyond it (`x - y <= 10` from `assume(x <= 10)` when no run reached 10).
    min_support: int = 2
    widen_limit: int = 16


@dataclass(frozen=True)
class Observations:
    """States with (some of) the runs that reached each, and the plausible bound constants."""

    states: Sequence[State]
    runs: Sequence[Sequence[int]]
    plausible: frozenset[int] = frozenset({-1, 0, 1})
    columns: dict[str, list[int]] = field(default_factory=dict, compare=False)

    @staticmethod
    def of(
        states: Sequence[State],
        runs: Sequence[Sequence[int]] | None = None,
        constants: frozenset[int] = frozenset(),
    ) -> Observations:
        """Without `runs`, every state counts as a run of its own."""
        plausible = frozenset({-1, 0, 1} | {c + d for c in constants for d in (-1, 0, 1)})
        ids = runs if runs is not None else [(k,) for k in range(len(states))]
        return Observations(states, ids, plausible)

    def column(self, v: str) -> list[int]:
        if v not in self.columns:
            self.columns[v] = [s[v] for s in self.states]
        return self.columns[v]

    def values(self, coeffs: Mapping[str, int]) -> list[int]:
        """`sum(c * v)` on every state (one or two variables with coefficients +-1)."""
        (x, cx), *rest = coeffs.items()
        xs = self.column(x) if cx == 1 else [-a for a in self.column(x)]
        if not rest:
            return xs
        ((y, cy),) = rest
        ys = self.column(y)
        if cy == 1:
            return [a + b for a, b in zip(xs, ys, strict=True)]
        return [a - b for a, b in zip(xs, ys, strict=True)]

    def support(self, values: Sequence[int], bound: int) -> int:
        """The number of (recorded) runs in which the value reaches `bound`."""
        return len({r for x, ids in zip(values, self.runs, strict=True) if x == bound for r in ids})

    def credible(self, values: Sequence[int], bound: int, min_support: int) -> bool:
        return bound in self.plausible or self.support(values, bound) >= min_support

    def threshold(self, values: Sequence[int], bound: int, upper: bool, config: OctagonConfig) -> int | None:
        """The bound to propose for an observed extreme: itself when credible, else the nearest
        plausible constant beyond it (within `widen_limit`), else None."""
        if self.credible(values, bound, config.min_support):
            return bound
        if upper:
            beyond = [c for c in self.plausible if bound < c <= bound + config.widen_limit]
            return min(beyond, default=None)
        beyond = [c for c in self.plausible if bound - config.widen_limit <= c < bound]
        return max(beyond, default=None)


def unary_bounds(
    names: Sequence[str], obs: Observations, types: Mapping[str, IntType], config: OctagonConfig | None = None
) -> list[Fact]:
    """`x >= lo` and `x <= hi` (not within 1 of the edge of x's type: boundary inputs)."""
    config = config or OctagonConfig()
    out = []
    for v in names:
        values = obs.values({v: 1})
        lo, hi = min(values), max(values)
        if lo == hi:
            continue
        low, high = obs.threshold(values, lo, False, config), obs.threshold(values, hi, True, config)
        if low is not None and low > types[v].min + 1:
            out.append(linear({v: 1}, ">=", low, "bound"))
        if high is not None and high < types[v].max - 1:
            out.append(linear({v: 1}, "<=", high, "bound"))
    return out


def pair_bounds(names: Sequence[str], obs: Observations, config: OctagonConfig | None = None) -> list[Fact]:
    """`x + y` and `x - y` bounds strictly tighter than the unary bounds imply; at most
    `max_pair_bounds`, preferring small constants, then bounds reached in many runs."""
    config = config or OctagonConfig()
    ranges = {v: (min(vs), max(vs)) for v in names for vs in [obs.values({v: 1})]}
    ranked: list[tuple[int, int, int, Fact]] = []
    for i, x in enumerate(names):
        for y in names[i + 1 :]:
            (xlo, xhi), (ylo, yhi) = ranges[x], ranges[y]
            for sign, implied_lo, implied_hi in ((1, xlo + ylo, xhi + yhi), (-1, xlo - yhi, xhi - ylo)):
                values = obs.values({x: 1, y: sign})
                lo, hi = min(values), max(values)
                if lo == hi:
                    continue  # an equality: the polynomial search reports it
                for op, bound in ((">=", lo), ("<=", hi)):
                    b = obs.threshold(values, bound, op == "<=", config)
                    tighter = b is not None and (b < implied_hi if op == "<=" else b > implied_lo)
                    if b is not None and tighter and abs(b) <= config.pair_constant_limit:
                        fact = linear({x: 1, y: sign}, op, b, "octagon")
                        ranked.append((abs(b), -obs.support(values, b), len(ranked), fact))
    return [fact for *_, fact in sorted(ranked)[: config.max_pair_bounds]]


def _common_residue(values: Sequence[int], k: int) -> int | None:
    residues = {c_mod(v, k) for v in values}
    return residues.pop() if len(residues) == 1 else None


def congruences(names: Sequence[str], obs: Observations, config: OctagonConfig | None = None) -> list[Fact]:
    """`x % g == r` with g the gcd of the differences of x's values (past `max_modulus`, the
    largest program constant that divides it: `x += 1048576 * n`); the parity of `x + y` (or
    else `x - y`, whose C remainder may have the other sign) when x's and y's parities vary."""
    max_mod = (config or OctagonConfig()).max_modulus
    out, odd_even = [], []
    for v in names:
        values = sorted(set(obs.column(v)))
        g = _modulus(reduce(gcd, (x - values[0] for x in values[1:]), 0), obs, max_mod)
        if len(values) >= 3 and g >= 2:
            r = _common_residue(values, g)
            if r is not None:
                out.append(Fact(((((v, 1),), 1),), "==", (((), r),) if r else (), "congruence", g))
        if len({x & 1 for x in values}) == 2:
            odd_even.append(v)
    for i, x in enumerate(odd_even):
        for y in odd_even[i + 1 :]:
            if len({(a + b) & 1 for a, b in zip(obs.column(x), obs.column(y), strict=True)}) == 1:
                out += _pair_parity(x, y, obs)
    return out


def _modulus(g: int, obs: Observations, max_mod: int) -> int:
    """`g` when small, else its largest divisor among the program's constants (0: none)."""
    if g <= max_mod:
        return g
    return max((c for c in obs.plausible if c > max_mod and g % c == 0), default=0)


def _pair_parity(x: str, y: str, obs: Observations) -> list[Fact]:
    for sign in (1, -1):
        r = _common_residue(sorted(set(obs.values({x: 1, y: sign}))), 2)
        if r is not None:
            return [Fact(((((x, 1),), 1), (((y, 1),), sign)), "==", (((), r),) if r else (), "congruence", 2)]
    return []
