"""Readable display forms of IR expressions: the same meaning, written as a person would write it.

`readable(e)` returns an expression for printing only: its nodes may break the IR's rule that
operands have their operator's type, because each node's `type` is the type C gives the
printed text. Parsing the printed text back (`frontend.parse_invariant`) gives an expression
equivalent to `e` under the IR's semantics:

* Signed arithmetic is mathematical, so a signed `+ - *` subtree is a polynomial over its
  other sub-expressions: like terms are combined, `a + -1*b` reads `a - b`, `k*(x*y)` reads
  `k*x*y`, and comparisons move negative terms across, isolating a lone term where there is
  one: `3*n - y + 3*n*n <= -1` reads `y >= 3*n*n + 3*n + 1`. `e > -1` reads `e >= 0`, `e < 1`
  reads `e <= 0`.
* Suffixes and widening casts to a signed type go where every operand stays signed after
  C's promotions (`(long long)a + 1LL` reads `a + 1` for a `short a`), never where C would then
  compute in an unsigned type (`(long long)u + 1LL` keeps its cast for an `unsigned u`).
* Wrapping casts, unsigned arithmetic, bitwise operators and shifts keep their exact types; a
  constant operand of such an operator loses its suffix when C converts it to that type anyway.
* `!` of a comparison flips it; chains of `&&` / `||` print without inner parentheses.

The meaning is the IR's, not that of C with overflow: `3*n*n` for an `int n` is the mathematical
product (the IR excludes signed overflow, as SV-COMP does). Expressions nested deeper than
`MAX_DEPTH` are returned unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from quokka.verifier.ir import (
    COMPARE_OPS,
    INT,
    INT128,
    LLONG,
    LOGIC_OPS,
    Binary,
    Cast,
    Const,
    Expr,
    Forall,
    IntType,
    Ite,
    Select,
    Unary,
    children,
    semantics,
)
from quokka.verifier.ir.cexpr import fold, is_boolean, rank, uncast

MAX_DEPTH = 100
_LINEAR_OPS = frozenset({"+", "-", "*"})
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
_NEGATE = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}


def readable(e: Expr) -> Expr:
    """`e` rearranged for reading (see the module docstring); for printing only."""
    if _depth(e) > MAX_DEPTH:
        return e
    return _display(e)


def readable_conjuncts(conjuncts: Sequence[Expr]) -> list[tuple[int, Expr]]:
    """The readable forms of `conjuncts`, a pair `a <= b`, `a >= b` written once as `a == b`
    (each with the index of the first conjunct it shows)."""
    shown = [readable(c) for c in conjuncts]
    out: list[tuple[int, Expr]] = []
    used: set[int] = set()
    for i, c in enumerate(shown):
        if i in used:
            continue
        twin = next((j for j in range(i + 1, len(shown)) if j not in used and _opposite(c, shown[j])), None)
        if twin is not None and isinstance(c, Binary):
            used.add(twin)
            c = Binary("==", c.left, c.right, c.type)
        out.append((i, c))
    return out


def _opposite(a: Expr, b: Expr) -> bool:
    """`a` is `x <= y` (or `x >= y`) and `b` the other bound on the same sides, or the mirror."""
    bounds = ("<=", ">=")
    if not (isinstance(a, Binary) and isinstance(b, Binary) and a.op in bounds and b.op in bounds):
        return False
    same_sides = (a.left, a.right) == (b.left, b.right)
    mirrored = (a.left, a.right) == (b.right, b.left)
    return (same_sides and a.op != b.op) or (mirrored and a.op == b.op)


def _depth(e: Expr) -> int:
    """The nesting depth of `e`, a chain of one logical operator counting as one level."""
    deepest = 0
    stack = [(e, 1)]
    while stack and deepest <= MAX_DEPTH:
        node, d = stack.pop()
        deepest = max(deepest, d)
        chain = node.op if isinstance(node, Binary) and node.op in LOGIC_OPS else None
        for c in children(node):
            same = chain is not None and isinstance(c, Binary) and c.op == chain
            stack.append((c, d if same else d + 1))
    return deepest


# ----------------------------------------------------------------------------- types


def _int(e: Expr) -> IntType:
    assert isinstance(e.type, IntType), f"not an integer expression: {e.type}"
    return e.type


def _rank(ty: IntType) -> int:
    return rank(ty) if ty.name != INT128.name else rank(LLONG) + 1


def _promote(ty: IntType) -> IntType:
    return INT if _rank(ty) < rank(INT) else ty


def _stays_signed(ty: IntType) -> bool:
    """C computes with values of `ty` in a signed type (after the integer promotions)."""
    return _promote(ty).signed


def _wider(a: IntType, b: IntType) -> IntType:
    """C's common type of two types that promote to signed ones."""
    a, b = _promote(a), _promote(b)
    return a if _rank(a) >= _rank(b) else b


def _is_signed(e: Expr) -> bool:
    return isinstance(e.type, IntType) and e.type.signed


def _widening_to_signed(e: Cast) -> bool:
    """A cast the IR treats as the identity, to a signed type."""
    src = e.operand.type
    return e.type.signed and isinstance(src, IntType) and e.type.contains(src)


def _const(value: int) -> Const:
    """`value` as a literal without suffix where one fits (C types it signed either way)."""
    for ty in (INT, LLONG):
        if ty.min <= value <= ty.max:
            return Const(value, ty)
    return Const(value, INT128)


def _unsuffixed(c: Const) -> bool:
    """`c` can print as an int literal where C converts it to its own type (rank >= int)."""
    return _rank(c.type) >= rank(INT) and INT.min <= c.value <= INT.max


# ----------------------------------------------------------------------------- polynomials


@dataclass(frozen=True)
class _Term:
    """`coef * factors[0] * factors[1] * ...`; `key` identifies the multiset of factors."""

    coef: int
    factors: tuple[Expr, ...]
    key: tuple[Expr, ...]


@dataclass(frozen=True)
class _Lin:
    """A sum of terms (distinct keys, non-zero coefficients, first-seen order) and a constant."""

    terms: tuple[_Term, ...] = ()
    const: int = 0


def _term(coef: int, factors: tuple[Expr, ...]) -> _Term:
    return _Term(coef, factors, tuple(sorted(factors, key=repr)))


def _with_coef(t: _Term, coef: int) -> _Term:
    return _Term(coef, t.factors, t.key)


def _sum(a: _Lin, b: _Lin, sign: int) -> _Lin:
    acc = {t.key: t for t in a.terms}
    for t in b.terms:
        old = acc.get(t.key)
        acc[t.key] = _with_coef(old or t, (old.coef if old else 0) + sign * t.coef)
    return _Lin(tuple(t for t in acc.values() if t.coef != 0), a.const + sign * b.const)


def _scale(a: _Lin, k: int) -> _Lin:
    if k == 0:
        return _Lin()
    return _Lin(tuple(_with_coef(t, t.coef * k) for t in a.terms), a.const * k)


def _mul(a: _Lin, b: _Lin) -> _Lin:
    """The product. `-(x + y)` distributes; `2*(x + 1)` stays a product, as it was written."""
    for k, other in ((a, b), (b, a)):
        if not k.terms and (abs(k.const) <= 1 or _is_monomial(other) or not other.terms):
            return _scale(other, k.const)
    (ca, fa), (cb, fb) = _as_monomial(a), _as_monomial(b)
    return _Lin((_term(ca * cb, fa + fb),))


def _is_monomial(a: _Lin) -> bool:
    return len(a.terms) == 1 and a.const == 0


def _as_monomial(a: _Lin) -> tuple[int, tuple[Expr, ...]]:
    """`a` as `coef * factors`: a sum of several terms is one factor, its sign pulled out."""
    if not a.terms:
        return a.const, ()
    if _is_monomial(a):
        return a.terms[0].coef, a.terms[0].factors
    sign = -1 if _ordered(a.terms)[0].coef < 0 else 1
    return sign, (_build(_scale(a, sign)),)


def _ordered(terms: Sequence[_Term]) -> list[_Term]:
    """Positive terms first, then highest degree first; otherwise as they came."""
    return sorted(terms, key=lambda t: (t.coef < 0, -len(t.factors)))


def _linear(e: Expr) -> _Lin:
    """`e`, an expression whose value C and the IR both compute mathematically, as a sum."""
    if isinstance(e, Const) and e.type.signed:
        return _Lin((), e.value)
    if isinstance(e, Binary) and e.op in _LINEAR_OPS and _is_signed(e):
        a, b = _linear(e.left), _linear(e.right)
        return _mul(a, b) if e.op == "*" else _sum(a, b, 1 if e.op == "+" else -1)
    if isinstance(e, Unary) and e.op == "-" and _is_signed(e):
        return _scale(_linear(e.operand), -1)
    if isinstance(e, Cast) and _widening_to_signed(e):
        if isinstance(e.operand, Const):
            return _Lin((), e.operand.value)
        if _stays_signed(_int(e.operand)):
            return _linear(e.operand)
    atom = _atom(e)
    if isinstance(atom, Const):
        return _Lin((), atom.value)
    if isinstance(atom, (Binary, Unary)) and atom.op in _LINEAR_OPS and _is_signed(atom):
        return _linear(atom)  # `c ? x + 1 : y` with a constant `c` is displayed as `x + 1`
    return _Lin((_term(1, (atom,)),))


def _build(a: _Lin) -> Expr:
    return _side(_ordered(a.terms), a.const)


def _side(terms: Sequence[_Term], const: int) -> Expr:
    """`terms + const` printed left to right, negative coefficients as subtraction."""
    items = [*terms, *([_term(const, ())] if const else [])]
    if not items:
        return _const(0)
    out = _monomial(items[0].coef, items[0].factors)
    for t in items[1:]:
        right = _monomial(abs(t.coef), t.factors)
        out = Binary("+" if t.coef > 0 else "-", out, right, _wider(_int(out), _int(right)))
    return out


def _monomial(coef: int, factors: tuple[Expr, ...]) -> Expr:
    if not factors:
        return _const(coef)
    first = factors[0]
    out: Expr = first
    if coef == -1:
        out = Unary("-", first, _promote(_int(first)))
    elif coef != 1:
        k = _const(coef)
        out = Binary("*", k, first, _wider(k.type, _int(first)))
    for f in factors[1:]:
        out = Binary("*", out, f, _wider(_int(out), _int(f)))
    return out


# ----------------------------------------------------------------------------- comparisons


def _compare(e: Binary) -> Expr:
    if not (_stays_signed(_int(e.left)) and _stays_signed(_int(e.right))):
        left, right = _exact_pair(e.left, e.right)
        return Binary(e.op, left, right, INT)
    return _arrange(e.op, _sum(_linear(e.left), _linear(e.right), -1))


def _arrange(op: str, d: _Lin) -> Expr:
    """`d op 0` with positive coefficients on both sides, the constant on the right."""
    c = d.const
    if (op, c) in ((">", 1), ("<", -1)):
        op, c = op + "=", 0
    terms = _ordered(d.terms)
    if not terms:
        return _const(semantics.compare(op, c, 0))
    pos = [t for t in terms if t.coef > 0]
    neg = [_with_coef(t, -t.coef) for t in terms if t.coef < 0]
    if _positive_side_first(pos, neg):
        return Binary(op, _side(pos, 0), _side(neg, -c), INT)
    return Binary(_FLIP[op], _side(neg, 0), _side(pos, c), INT)


def _positive_side_first(pos: list[_Term], neg: list[_Term]) -> bool:
    """Which side goes left: the one with terms, a lone `1*t`, a lone term, else the positive."""
    if not pos or not neg:
        return bool(pos)
    for side, first in ((pos, True), (neg, False)):
        if len(side) == 1 and side[0].coef == 1:
            return first
    return len(pos) == 1 or len(neg) != 1


# ----------------------------------------------------------------------------- expressions


def _display(e: Expr) -> Expr:
    """`e` displayed; operators on constants evaluated as the frontend folds what it parses."""
    d = _node(e)
    folded = fold(d)
    if isinstance(folded, Const) and folded is not d and folded.type.signed:
        return _const(folded.value)
    return folded


def _node(e: Expr) -> Expr:
    if isinstance(e, Const):
        return _const(e.value) if e.type.signed else e
    if isinstance(e, Select):
        return Select(e.array, _value(e.index), e.type)
    if isinstance(e, Cast):
        return _cast(e)
    if isinstance(e, Unary):
        return _unary(e)
    if isinstance(e, Ite):
        return _ite(e)
    if isinstance(e, Binary):
        return _binary(e)
    if isinstance(e, Forall):
        return Forall(e.var, _display(e.lo), _display(e.hi), _value(e.body))
    return e  # Var, Store


def _value(e: Expr) -> Expr:
    """`e` displayed where only its value counts (a truth value, an index): the casts that keep
    every value (`(long long)u` for an unsigned `u`) can go."""
    return uncast(_display(uncast(e)))


def _atom(e: Expr) -> Expr:
    """`e` displayed, with a type that stays signed (a widening cast added if needed)."""
    d = _display(e)
    ty = _int(d)
    if _stays_signed(ty):
        return d
    return Cast(d, LLONG if LLONG.contains(ty) else INT128)


def _exact(e: Expr) -> Expr:
    """`e` displayed with exactly its own type (where C's conversions depend on it)."""
    if isinstance(e, Const) or not isinstance(e.type, IntType):
        return e
    d = _display(e)
    ty, dty = e.type, _int(d)
    if dty == ty:
        return d
    if isinstance(d, Const):
        return Const(d.value, ty) if semantics.in_range(d.value, ty) else e
    if ty.signed and dty.signed and ty.contains(dty):
        return Cast(d, ty)
    return e


def _exact_pair(a: Expr, b: Expr) -> tuple[Expr, Expr]:
    """Both operands with their exact types; a constant one unsuffixed where C converts it."""
    left, right = _exact(a), _exact(b)
    if isinstance(right, Const) and left.type == right.type and _unsuffixed(right):
        right = Const(right.value, INT)
    if isinstance(left, Const) and right.type == left.type and _unsuffixed(left):
        left = Const(left.value, INT)
    return left, right


def _cast(e: Cast) -> Expr:
    o = e.operand
    if not isinstance(o.type, IntType):
        return e
    if _widening_to_signed(e) and _stays_signed(o.type):
        return _build(_linear(o))
    d = _exact(o) if _widening_to_signed(e) else _converted(o, e.type)
    if isinstance(d, Const):
        identity = e.type.contains(o.type) and not e.type.is_bool
        return _display(Const(d.value if identity else semantics.wrap(d.value, e.type), e.type))
    return Cast(d, e.type)


def _converted(o: Expr, target: IntType) -> Expr:
    """`o` displayed as the operand of a wrapping cast to `target`: the cast must still wrap
    exactly when it did (a narrower display type could make it the identity)."""
    d = _display(o)
    ty, dty = _int(o), _int(d)
    if isinstance(d, Const) or dty == ty or target.is_bool or target.contains(dty) == target.contains(ty):
        return d
    if ty.signed and dty.signed and ty.contains(dty):
        return Cast(d, ty)
    return o


def _unary(e: Unary) -> Expr:
    o = e.operand
    if e.op == "!":
        return _not(o)
    if e.op == "-" and e.type.signed:
        return _build(_linear(e))
    if e.op == "~" and e.type.signed:
        d = _atom(o)
        return Unary("~", d, _promote(_int(d)))
    if _rank(e.type) < rank(INT):
        return e
    return Unary(e.op, _exact(o), e.type)


def _not(o: Expr) -> Expr:
    """`!o`, a comparison negated (also one `o` displays as: `!(x < 1 && 1)` reads `x >= 1`)."""
    if isinstance(o, Binary) and o.op in COMPARE_OPS:
        return _display(Binary(_NEGATE[o.op], o.left, o.right, INT))
    d = _value(o)
    if isinstance(d, Binary) and d.op in COMPARE_OPS:
        return _display(Binary(_NEGATE[d.op], d.left, d.right, INT))
    if isinstance(d, Unary) and d.op == "!" and is_boolean(d.operand):
        return d.operand
    return Unary("!", d, INT)


def _ite(e: Ite) -> Expr:
    cond = _value(e.cond)
    if e.type.signed:
        a, b = _atom(e.then), _atom(e.orelse)
        return Ite(cond, a, b, _wider(_int(a), _int(b)))
    return Ite(cond, _exact(e.then), _exact(e.orelse), e.type)


def _binary(e: Binary) -> Expr:
    if e.op in LOGIC_OPS:
        return _logic(e)
    if e.op in COMPARE_OPS:
        return _compare(e)
    if e.type.signed and e.op in _LINEAR_OPS:
        return _build(_linear(e))
    if e.type.signed and e.op in ("/", "%"):
        left, right = _atom(e.left), _atom(e.right)
        return Binary(e.op, left, right, _wider(_int(left), _int(right)))
    if _rank(e.type) < rank(INT):
        return e
    if e.op in ("<<", ">>"):
        right = _exact(e.right)
        if isinstance(right, Const) and _unsuffixed(right):
            right = Const(right.value, INT)
        return Binary(e.op, _exact(e.left), right, e.type)
    left, right = _exact_pair(e.left, e.right)
    return Binary(e.op, left, right, e.type)


def _logic(e: Binary) -> Expr:
    """A chain of `&&` (or `||`) without parentheses; constant operands folded away."""
    decisive = int(e.op == "||")  # the truth value of an operand that decides the chain
    items: list[Expr] = []
    for x in map(_value, _chain(e)):
        if isinstance(x, Const) and int(x.value != 0) == decisive:
            return _const(decisive)
        if not isinstance(x, Const):
            items.append(x)
    if not items:
        return _const(1 - decisive)
    if len(items) == 1 and not is_boolean(items[0]):
        items.append(_const(1 - decisive))
    out = items[0]
    for x in items[1:]:
        out = Binary(e.op, out, x, INT)
    return out


def _chain(e: Binary) -> list[Expr]:
    """The operands of a chain of `e.op` (`a && b && c`), left to right, without recursion."""
    out: list[Expr] = []
    stack: list[Expr] = [e]
    while stack:
        node = stack.pop()
        if isinstance(node, Binary) and node.op == e.op:
            stack += [node.right, node.left]
        else:
            out.append(node)
    return out
