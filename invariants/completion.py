"""Template completion: keep the shape of a model's candidate, refit its constants to observed states.

Language models get the monomials of an invariant right more often than its coefficients
(`s == 9*i` where `s == 6*i` holds). For each polynomial conjunct of a candidate:

* `L == R`: every coefficient of `L - R` (and a constant term) becomes an unknown; the unknowns
  are fitted exactly to the recorded loop-head states (the rational null space of the monomial
  matrix, `linalg.nullspace`), e.g. `s == 9*i` -> `s == 6*i`;
* `L <= R` (and <, >=, >): the constant term is moved to the tightest value the states allow,
  e.g. `x <= 2*n + 5` -> `x - 2*n <= 3`.

The fitted text is parsed back with the frontend, so the result has C's typing; proposals are
only guesses (the verifier decides), and states are reachable states, never counterexamples
to induction.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from fractions import Fraction

from quokka.verifier.errors import QuokkaError
from quokka.verifier.ir import Binary, Cast, Const, Expr, IntType, Program, Unary, Var, conjuncts
from quokka.verifier.ir.printer import c_names

from .linalg import nullspace
from .protocol import Candidate, ProposalContext, Proposer, State
from .sampling import SamplingConfig, collect

PROPOSER = "completion"
MAX_TERMS = 24
MAX_DEGREE = 4
MAX_RELATIONS = 2
SPARE_ROWS = 2

Monomial = tuple[tuple[str, int], ...]  # (IR variable, exponent > 0), sorted by name; () is 1
Poly = dict[Monomial, Fraction]


def _mono_mul(a: Monomial, b: Monomial) -> Monomial:
    exps = dict(a)
    for v, e in b:
        exps[v] = exps.get(v, 0) + e
    return tuple(sorted(exps.items()))


def _combine(a: Poly, b: Poly, sign: int) -> Poly:
    out = dict(a)
    for m, c in b.items():
        out[m] = out.get(m, Fraction(0)) + sign * c
    return {m: c for m, c in out.items() if c}


def _times(a: Poly, b: Poly) -> Poly | None:
    out: Poly = {}
    for ma, ca in a.items():
        for mb, cb in b.items():
            m = _mono_mul(ma, mb)
            if sum(e for _, e in m) > MAX_DEGREE:
                return None
            out[m] = out.get(m, Fraction(0)) + ca * cb
    return {m: c for m, c in out.items() if c}


def to_poly(e: Expr) -> Poly | None:
    """`e` as a polynomial over its variables (casts are ignored), or None when it is not one."""
    if isinstance(e, Const):
        return {(): Fraction(e.value)} if e.value else {}
    if isinstance(e, Var):
        return {((e.name, 1),): Fraction(1)} if isinstance(e.type, IntType) else None
    if isinstance(e, Cast):
        return to_poly(e.operand)
    if isinstance(e, Unary) and e.op == "-":
        inner = to_poly(e.operand)
        return None if inner is None else {m: -c for m, c in inner.items()}
    if isinstance(e, Binary) and e.op in ("+", "-", "*"):
        a, b = to_poly(e.left), to_poly(e.right)
        if a is None or b is None:
            return None
        out = _times(a, b) if e.op == "*" else _combine(a, b, 1 if e.op == "+" else -1)
        return out if out is not None and len(out) <= MAX_TERMS else None
    return None


def _value(m: Monomial, state: State) -> int:
    out = 1
    for v, e in m:
        out *= state[v] ** e
    return out


def _rows(support: Sequence[Monomial], states: Sequence[State]) -> list[list[int]]:
    names = sorted({v for m in support for v, _ in m})
    distinct = {tuple(s[v] for v in names): s for s in states if all(v in s for v in names)}
    return [[_value(m, s) for m in support] for _, s in sorted(distinct.items())]


def _proportional(a: Poly, b: Poly) -> bool:
    if set(a) != set(b) or not a:
        return False
    m0 = next(iter(a))
    ratio = a[m0] / b[m0]
    return all(a[m] == ratio * b[m] for m in a)


def fit_equalities(diff: Poly, states: Sequence[State], exhaustive: bool = False) -> list[Poly]:
    """Polynomials over the monomials of `diff` (and 1) that vanish on every state, unlike `diff`.

    A fit needs `SPARE_ROWS` more distinct states than unknowns, so that it is not an accident of
    too few states, unless the states are `exhaustive` (every input of a small input box was run:
    a relation of all of them is what the loop keeps)."""
    support = [(), *sorted((m for m in diff if m), key=lambda m: (len(m), m))]
    rows = _rows(support, states)
    if not rows or (not exhaustive and len(rows) < len(support) + SPARE_ROWS):
        return []
    out = []
    for rel in nullspace(rows, len(support))[:MAX_RELATIONS]:
        poly = {support[i]: Fraction(c) for i, c in rel.coeffs}
        if any(m for m in poly) and not _proportional(poly, diff):
            out.append(poly)
    return out


def fit_bound(diff: Poly, op: str, states: Sequence[State]) -> tuple[Poly, str, int] | None:
    """`P <= max` (for `<`, `<=`) or `P >= min` (for `>`, `>=`) on the states; P: `diff` less its constant."""
    p = {m: c for m, c in diff.items() if m}
    if not p or any(c.denominator != 1 for c in p.values()):
        return None
    values = [
        sum(int(c) * _value(m, s) for m, c in p.items())
        for s in states
        if all(v in s for m in p for v, _ in m)
    ]
    if not values:
        return None
    if op in ("<", "<="):
        bound, rel = max(values), "<="
    else:
        bound, rel = min(values), ">="
    same = op == rel and diff.get((), Fraction(0)) == -bound
    return None if same else (p, rel, bound)


# ----------------------------------------------------------------------------- rendering


def _integral(poly: Poly) -> dict[Monomial, int]:
    denom = 1
    for c in poly.values():
        denom = denom * c.denominator // _gcd(denom, c.denominator)
    return {m: int(c * denom) for m, c in poly.items()}


def _gcd(a: int, b: int) -> int:
    while b:
        a, b = b, a % b
    return abs(a)


def _term(m: Monomial, coeff: int, names: Mapping[str, str]) -> str:
    factors = [names[v] for v, e in m for _ in range(e)]
    if not factors:
        return str(coeff)
    return "*".join(factors if coeff == 1 else [str(coeff), *factors])


def _ordered(poly: Mapping[Monomial, int]) -> list[tuple[Monomial, int]]:
    return sorted(poly.items(), key=lambda mc: (mc[1] < 0, -sum(e for _, e in mc[0]), mc[0]))


def _sum(poly: Mapping[Monomial, int], names: Mapping[str, str]) -> str:
    """`3*n*n + 3*n + 1`, with `-` for negative terms."""
    text = ""
    for m, c in _ordered(poly):
        term = _term(m, abs(c), names)
        text = (f"-{term}" if c < 0 else term) if not text else f"{text} {'-' if c < 0 else '+'} {term}"
    return text or "0"


def render_equality(poly: Poly, lead: Monomial | None, names: Mapping[str, str]) -> str:
    """`lhs == rhs` with positive coefficients on both sides, `lead` on the left."""
    ints = _integral(poly)
    if (lead in ints and ints[lead] < 0) or (lead not in ints and _ordered(ints)[0][1] < 0):
        ints = {m: -c for m, c in ints.items()}
    lhs = {m: c for m, c in ints.items() if c > 0}
    rhs = {m: -c for m, c in ints.items() if c < 0}
    return f"{_sum(lhs, names)} == {_sum(rhs, names)}"


def render_bound(p: Poly, rel: str, bound: int, names: Mapping[str, str]) -> str:
    """`P rel bound` with the negative terms of P moved right: `i - n <= 0` prints as `i <= n`."""
    ints = _integral(p)
    pos = {m: c for m, c in ints.items() if c > 0}
    neg = {m: -c for m, c in ints.items() if c < 0}
    if not pos:
        return f"{_sum(neg, names)} {'>=' if rel == '<=' else '<='} {-bound}"
    return f"{_sum(pos, names)} {rel} {_sum(neg | ({(): bound} if bound else {}), names)}"


# ----------------------------------------------------------------------------- candidates


def _lead(left: Expr) -> Monomial | None:
    poly = to_poly(left)
    return next((m for m in poly if m), None) if poly else None


def fitted_texts(
    conjunct: Expr, states: Sequence[State], names: Mapping[str, str], exhaustive: bool = False
) -> list[str]:
    """C texts of the refitted versions of one conjunct (none when it is not polynomial)."""
    if not isinstance(conjunct, Binary) or conjunct.op not in ("==", "<", "<=", ">", ">="):
        return []
    left, right = to_poly(conjunct.left), to_poly(conjunct.right)
    if left is None or right is None:
        return []
    diff = _combine(left, right, -1)
    if any(v not in names for m in diff for v, _ in m):
        return []
    if conjunct.op == "==":
        fits = fit_equalities(diff, states, exhaustive)
        return [render_equality(p, _lead(conjunct.left), names) for p in fits]
    bound = fit_bound(diff, conjunct.op, states)
    return [] if bound is None else [render_bound(*bound, names)]


def complete_candidate(
    c: Candidate, states: Sequence[State], program: Program, exhaustive: bool = False
) -> list[Candidate]:
    """The fitted versions of an accepted candidate, as `completion` candidates."""
    from quokka.verifier.frontend import parse_invariant

    names = c_names(program, c.loop_id)
    out = []
    for part in conjuncts(c.expr):
        for text in fitted_texts(part, states, names, exhaustive):
            try:
                expr = parse_invariant(text, program, c.loop_id)
            except QuokkaError:
                continue
            out.append(Candidate(c.loop_id, expr, text, PROPOSER, c.sample, c.text))
    return out


def complete(
    candidates: Sequence[Candidate],
    states: Mapping[str, Sequence[State]],
    program: Program,
    exhaustive: bool = False,
) -> list[Candidate]:
    """Fitted versions of every accepted candidate whose loop has recorded states."""
    out = []
    for c in candidates:
        if not c.rejected and states.get(c.loop_id):
            out.extend(complete_candidate(c, states[c.loop_id], program, exhaustive))
    return out


# ----------------------------------------------------------------------------- states


SAMPLING = SamplingConfig(
    max_runs=300, min_runs=40, target_states=400, target_reaching_runs=30, give_up_runs=150
)


def observe_states(
    program: Program, seed: int = 0, budget_s: float = 1.0
) -> tuple[dict[str, list[State]], bool]:
    """Loop-head states of `program` from random runs (`sampling.collect`; every state is
    reachable), and whether they are exhaustive (every input of a small input box was run)."""
    samples = collect(program, seed, time.monotonic() + budget_s, None, SAMPLING)
    return {info.id: list(samples.states.get(info.id, ())) for info in program.loops}, samples.exhaustive


def collect_states(program: Program, seed: int = 0, budget_s: float = 1.0) -> dict[str, list[State]]:
    """The states of `observe_states`."""
    return observe_states(program, seed, budget_s)[0]


class CompletionProposer:
    """Wraps a proposer: its candidates, plus their fitted versions (proposer "completion")."""

    def __init__(self, inner: Proposer) -> None:
        self.inner = inner
        self.name = inner.name
        self._states: tuple[Program, tuple[dict[str, list[State]], bool]] | None = None

    def states(self, program: Program, seed: int, budget_s: float) -> tuple[dict[str, list[State]], bool]:
        if self._states is None or self._states[0] is not program:
            self._states = (program, observe_states(program, seed, budget_s))
        return self._states[1]

    def propose(self, context: ProposalContext) -> list[Candidate]:
        found = self.inner.propose(context)
        if not any(not c.rejected for c in found):
            return found
        states, exhaustive = self.states(context.program, context.seed, min(1.0, context.budget_s / 10))
        known = {(c.loop_id, c.expr) for c in found}
        fitted = complete(found, states, context.program, exhaustive)
        fitted = [c for c in fitted if (c.loop_id, c.expr) not in known]
        return found + list({(c.loop_id, c.expr): c for c in fitted}.values())
