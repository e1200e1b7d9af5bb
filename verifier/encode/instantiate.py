"""Quantified queries made quantifier-free: hypotheses instantiated at the query's index terms.

A query asks whether some state satisfies all its assertions; an obligation holds when the
query is unsat. A universal quantifier in positive position (a hypothesis: an invariant assumed
at the source head) is replaced by finitely many of its instances. That makes the query weaker,
so `unsat` of the instantiated query still proves `unsat` of the original (a model of it proves
nothing: it is incompleteness, never a wrong "holds"). A universal quantifier in negative
position (a goal, `Not(ForAll k. P(k))`) is replaced by `Not(P(sk))` for a fresh constant `sk`
(skolemisation: equisatisfiable). Weakening a goal would be unsound, and is never done.

The instances are taken at the index terms of the reads and writes of the same array in the
skolemised query (the index set of Bradley, Manna and Sipma's decision procedure for the array
property fragment): `a[i]`, `a[i - 1]`, the goal's `a[sk]`, the `a[N - 1]` inside a hypothesis.
A quantifier under a connective whose polarity is mixed (`==` between formulas, an `If`
condition) or over several variables is not handled: `prepare` answers None and the caller asks
the solver the original query.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import z3

MAX_INSTANCES = 20_000  # instances of one query beyond which it is left to the solver's quantifiers


@dataclass
class Prepared:
    """Formulas with their quantifiers taken out: negative ones skolemised, positive ones replaced
    by a Boolean placeholder each (`hypotheses`: placeholder -> the quantifier it stands for)."""

    formulas: list[z3.BoolRef] = field(default_factory=list)
    hypotheses: list[tuple[z3.BoolRef, z3.QuantifierRef]] = field(default_factory=list)


class Instantiator:
    """Rewrites formulas of one query; fresh names are unique within it."""

    def __init__(self, prefix: str = "q") -> None:
        self.prefix = prefix
        self.fresh = 0
        self.quantified: dict[int, bool] = {}  # term id -> whether a quantifier is inside it

    def _has_quantifier(self, f: z3.ExprRef) -> bool:
        key = f.get_id()
        if key not in self.quantified:
            self.quantified[key] = has_quantifier(f)
        return self.quantified[key]

    def prepare(self, formulas: Iterable[z3.BoolRef], out: Prepared | None = None) -> Prepared | None:
        """`formulas` (each asserted: positive) with their quantifiers taken out, added to `out`;
        None when one cannot be."""
        out = out if out is not None else Prepared()
        for f in formulas:
            rewritten = self._rewrite(f, True, out)
            if rewritten is None:
                return None
            out.formulas.append(rewritten)
        return out

    def skolemised(self, f: z3.BoolRef) -> z3.BoolRef:
        """`f` (asserted) with its negative quantifiers skolemised, where it has no positive one
        (else `f` itself)."""
        out = Prepared()
        rewritten = self._rewrite(f, True, out)
        return f if rewritten is None or out.hypotheses else rewritten

    def _name(self, what: str) -> str:
        self.fresh += 1
        return f"{self.prefix}!{what}{self.fresh}"

    def _rewrite(self, f: z3.ExprRef, positive: bool, out: Prepared) -> z3.BoolRef | None:
        if not self._has_quantifier(f):
            return f  # type: ignore[return-value]
        if z3.is_quantifier(f):
            return self._quantifier(f, positive, out)
        if z3.is_not(f):
            inner = self._rewrite(f.arg(0), not positive, out)
            return None if inner is None else z3.Not(inner)
        if z3.is_and(f) or z3.is_or(f):
            parts = [self._rewrite(a, positive, out) for a in f.children()]
            if any(p is None for p in parts):
                return None
            return z3.And(parts) if z3.is_and(f) else z3.Or(parts)  # type: ignore[arg-type]
        if z3.is_implies(f):
            left, right = self._rewrite(f.arg(0), not positive, out), self._rewrite(f.arg(1), positive, out)
            return None if left is None or right is None else z3.Implies(left, right)
        return None

    def _quantifier(self, q: z3.QuantifierRef, positive: bool, out: Prepared) -> z3.BoolRef | None:
        if q.num_vars() != 1 or q.var_sort(0) != z3.IntSort():
            return None
        if q.is_forall() != positive:  # a goal's `forall` or a hypothesis' `exists`: a fresh witness
            body = z3.substitute_vars(q.body(), z3.Int(self._name("sk")))
            return self._rewrite(body, positive, out)
        if has_quantifier(q.body()):
            return None
        placeholder = z3.Bool(self._name("h"))
        out.hypotheses.append((placeholder, q))
        return placeholder


def has_quantifier(f: z3.ExprRef) -> bool:
    """Whether a quantifier occurs in `f` (not looked for inside arrays: the program's stores and
    `If`s of arrays hold none)."""
    return _any(f, z3.is_quantifier, skip_arrays=True)


def _any(f: z3.ExprRef, test: object, skip_arrays: bool = False) -> bool:
    seen: set[int] = set()
    stack = [f]
    while stack:
        e = stack.pop()
        if e.get_id() in seen:
            continue
        seen.add(e.get_id())
        if test(e):  # type: ignore[operator]
            return True
        if z3.is_quantifier(e):
            stack.append(e.body())
        elif not (skip_arrays and z3.is_array(e)):
            stack.extend(e.children())
    return False


def _ground(e: z3.ExprRef) -> bool:
    return not _any(e, z3.is_var)


Terms = dict[int, dict[int, z3.ArithRef]]  # base array (its id) -> index terms (by id)


def index_terms(
    formulas: Iterable[z3.ExprRef], terms: Terms | None = None, seen: set[int] | None = None
) -> Terms:
    """The ground index terms of every array read and write in `formulas` (quantifier bodies
    included), by the arrays they index: the constants a chain of stores and `If`s starts from.
    Subterms in `seen` (ids) are skipped, and what is walked is added to it."""
    terms = terms if terms is not None else {}
    seen = seen if seen is not None else set()
    stack = list(formulas)
    while stack:
        e = stack.pop()
        if e.get_id() in seen:
            continue
        seen.add(e.get_id())
        if (z3.is_select(e) or z3.is_store(e)) and _ground(e.arg(1)):
            for base in _bases(e.arg(0)):
                terms.setdefault(base, {})[e.arg(1).get_id()] = e.arg(1)  # type: ignore[assignment]
        if z3.is_app(e):
            stack.extend(e.children())
        elif z3.is_quantifier(e):
            stack.append(e.body())
    return terms


def _bases(array: z3.ExprRef) -> set[int]:
    out: set[int] = set()
    stack = [array]
    while stack:
        a = stack.pop()
        if z3.is_store(a):
            stack.append(a.arg(0))
        elif z3.is_app_of(a, z3.Z3_OP_ITE):
            stack.extend((a.arg(1), a.arg(2)))
        else:
            out.add(a.get_id())
    return out


def flat_terms(terms: Terms) -> list[z3.ArithRef]:
    """The index terms of every array, once each."""
    return list({k: t for by_array in terms.values() for k, t in by_array.items()}.values())


def top_foralls(f: z3.BoolRef) -> list[z3.QuantifierRef]:
    """The universal quantifiers over one integer that are conjuncts of `f` (each implied by it)."""
    if z3.is_quantifier(f) and f.is_forall() and f.num_vars() == 1 and f.var_sort(0) == z3.IntSort():
        return [f]
    if z3.is_and(f):
        return [q for a in f.children() for q in top_foralls(a)]
    return []


def violated(q: z3.QuantifierRef, terms: Sequence[z3.ArithRef], model: z3.ModelRef) -> list[z3.BoolRef]:
    """The instances of `q` at `terms` that are false in `model`."""
    out = []
    for t in terms:
        inst = z3.substitute_vars(q.body(), t)
        if z3.is_false(model.eval(inst, model_completion=True)):
            out.append(inst)
    return out


def _read_arrays(body: z3.ExprRef) -> set[int]:
    """The arrays (their bases) that `body` reads or writes, at any index."""
    out: set[int] = set()
    seen: set[int] = set()
    stack = [body]
    while stack:
        e = stack.pop()
        if e.get_id() in seen or not z3.is_app(e):
            continue
        seen.add(e.get_id())
        if z3.is_select(e) or z3.is_store(e):
            out |= _bases(e.arg(0))
        stack.extend(e.children())
    return out


def instances(q: z3.QuantifierRef, terms: Terms) -> list[z3.BoolRef]:
    """`q`'s body at the index terms of the arrays it reads (at every term when it reads none)."""
    bases = _read_arrays(q.body()) or set(terms)
    at = {k: t for b in bases for k, t in terms.get(b, {}).items()}
    return [z3.substitute_vars(q.body(), t) for t in at.values()]  # type: ignore[misc]


@dataclass(frozen=True)
class Instantiated:
    """A quantifier-free query weaker than the original (`unsat` of it proves the original's)."""

    assertions: tuple[z3.BoolRef, ...]
    hypotheses: int  # quantified hypotheses instantiated
    instances: int


def instantiate(assertions: Sequence[z3.BoolRef]) -> Instantiated | None:
    """The query `assertions` with every quantified hypothesis instantiated at the query's index
    terms and every quantified goal skolemised; None when it has no quantifier, one `prepare`
    cannot take out, or more than `MAX_INSTANCES` instances."""
    if not any(has_quantifier(a) for a in assertions):
        return None
    prepared = Instantiator().prepare(assertions)
    if prepared is None:
        return None
    return close(prepared)


def close(prepared: Prepared, terms: Terms | None = None) -> Instantiated | None:
    """`prepared`'s formulas with each placeholder implying its quantifier's instances at the
    index terms of the formulas and the quantifiers' bodies (and `terms`)."""
    terms = index_terms([*prepared.formulas, *(q for _, q in prepared.hypotheses)], terms)
    extra: list[z3.BoolRef] = []
    count = 0
    for placeholder, q in prepared.hypotheses:
        inst = instances(q, terms)
        count += len(inst)
        if count > MAX_INSTANCES:
            return None
        extra.append(z3.Implies(placeholder, z3.And(inst)))
    return Instantiated((*prepared.formulas, *extra), len(prepared.hypotheses), count)
