"""SV-COMP's `no-overflow` property as reach-safety: an assertion before every signed operation.

`with_overflow_checks` puts, before each statement that evaluates a signed operation which may
leave its type (`cexpr.may_overflow`), an `Assert` that holds exactly when none of them does. The
assertion evaluates as lazily as C does: an operand of `&&`, `||` or `?:` that C does not evaluate
is not checked, and an operation is checked only after its operands were (so the operands in its
check are the values C computes). The result of an operation is recomputed in `__int128`, where
the operands of any operation on types up to 64 bits fit with room to spare; signed arithmetic is
mathematical in every encoding that uses it (`smt`), so the recomputation is exact there too.

What counts as overflow (C11 6.5: "the result is not in the range of representable values"):
`+ - *` and negation out of range, `INT_MIN / -1` and `INT_MIN % -1`, and a `<<` of a negative
value or one whose result does not fit. Division by zero and shift counts out of range are
undefined but not overflow; the engines treat them as before. An assertion already in the
program is not part of this property: it is dropped (the frontend's no-overflow reading makes
none).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from quokka.verifier.errors import Coord
from quokka.verifier.ir import (
    INT,
    INT128,
    Assert,
    Assign,
    Assume,
    Binary,
    Block,
    Cast,
    Const,
    Expr,
    If,
    IntType,
    Ite,
    Loop,
    Program,
    Scope,
    Stmt,
    Unary,
    children,
)
from quokka.verifier.ir.cexpr import may_overflow


def with_overflow_checks(program: Program) -> Program:
    """`program` whose errors are its signed overflows (and no others); its overflow sites are
    now assertions, so none is left to report."""
    sites = program.overflow_sites
    return replace(program, body=_block(program.body, sites), overflow_sites=())


def _block(block: Block, sites: Sequence[Coord]) -> Block:
    out: list[Stmt] = []
    for s in block:
        out.extend(_stmt(s, sites))
    return tuple(out)


def _stmt(s: Stmt, sites: Sequence[Coord]) -> list[Stmt]:
    if isinstance(s, If):
        body = replace(s, then=_block(s.then, sites), orelse=_block(s.orelse, sites))
        return [*_check(s.cond, s.coord, sites), body]
    if isinstance(s, Loop):
        return [replace(s, body=_block(s.body, sites), step=_block(s.step, sites))]
    if isinstance(s, Scope):
        return [replace(s, body=_block(s.body, sites))]
    if isinstance(s, Assert):
        return _check(s.cond, s.coord, sites)
    if isinstance(s, Assign):
        return [*_check(s.value, s.coord, sites), s]
    if isinstance(s, Assume):
        return [*_check(s.cond, s.coord, sites), s]
    return [s]


def _check(e: Expr, coord: Coord | None, sites: Sequence[Coord]) -> list[Stmt]:
    cond = no_overflow(e)
    if cond is None:
        return []
    same_line = (c for c in sites if coord is not None and (c.file, c.line) == (coord.file, coord.line))
    site = next(same_line, coord)
    return [Assert(cond, coord, site)]


def no_overflow(e: Expr) -> Expr | None:
    """A condition, evaluated as lazily as C evaluates `e`, that holds exactly when no signed
    operation of `e` overflows (None: none can)."""
    if isinstance(e, Binary) and e.op in ("&&", "||"):
        left, right = no_overflow(e.left), no_overflow(e.right)
        if right is not None:
            taken = e.left if e.op == "&&" else Unary("!", e.left, INT)
            right = Binary("||", Unary("!", taken, INT), right, INT)
        return _all(left, right)
    if isinstance(e, Ite):
        then, orelse = no_overflow(e.then), no_overflow(e.orelse)
        branch = None if then is None and orelse is None else Ite(e.cond, _true(then), _true(orelse), INT)
        return _all(no_overflow(e.cond), branch)
    parts = [no_overflow(c) for c in children(e)]
    return _all(*parts, fits(e) if may_overflow(e) and not _always_fits(e) else None)


Interval = tuple[int, int]


def _always_fits(e: Expr) -> bool:
    """The operation `e` fits its type whatever values its operands' types allow (`(int)c * 6`
    for a char `c`): no check is needed."""
    ty = e.type
    exact = _exact(e)
    return isinstance(ty, IntType) and exact is not None and ty.min <= exact[0] and exact[1] <= ty.max


def _exact(e: Expr) -> Interval | None:
    """The values the operation `e` yields before it is fitted to its type (None: not known)."""
    if isinstance(e, Unary) and e.op == "-":
        low, high = _values(e.operand)
        return -high, -low
    if not isinstance(e, Binary) or e.op not in ("+", "-", "*"):
        return None
    (a, b), (c, d) = _values(e.left), _values(e.right)
    if e.op == "+":
        return a + c, b + d
    if e.op == "-":
        return a - d, b - c
    products = (a * c, a * d, b * c, b * d)
    return min(products), max(products)


def _values(e: Expr) -> Interval:
    """Bounds on the C value of `e` (one of its type's, once the checks before it held)."""
    if isinstance(e, Const):
        return e.value, e.value
    ty = e.type
    whole = (ty.min, ty.max) if isinstance(ty, IntType) else (-(1 << 128), 1 << 128)
    inner = _exact(e) if isinstance(e, (Unary, Binary)) else None
    if isinstance(e, Cast) and isinstance(e.operand.type, IntType):
        inner = _values(e.operand)
    if inner is None or inner[0] < whole[0] or inner[1] > whole[1]:
        return whole
    return inner


def fits(e: Expr) -> Expr:
    """The signed operation `e` (with `cexpr.may_overflow`) does not overflow, given that its
    operands have their C values."""
    ty = e.type
    assert isinstance(ty, IntType) and isinstance(e, (Unary, Binary))
    if isinstance(e, Unary):
        return Binary("!=", e.operand, Const(ty.min, ty), INT)
    if e.op in ("/", "%"):
        left_ok = Binary("!=", e.left, Const(ty.min, ty), INT)
        return Binary("||", left_ok, Binary("!=", e.right, Const(-1, ty), INT), INT)
    if e.op == "<<":
        return _shift_fits(e, ty)
    bounded = _constant_operand(e, ty)
    if bounded is not None:
        return bounded
    return _in_range(Binary(e.op, _wide(e.left), _wide(e.right), INT128), ty)


def _constant_operand(e: Binary, ty: IntType) -> Expr | None:
    """`x + c`, `c + x`, `x - c`, `c - x`, `x * c` or `c * x` fits exactly when `x` lies in an
    interval: its bounds, in `x`'s own type (None: some other operation)."""
    if isinstance(e.right, Const) and e.left.type == ty:
        x, c, swapped = e.left, e.right.value, False
    elif isinstance(e.left, Const) and e.right.type == ty:
        x, c, swapped = e.right, e.left.value, True
    else:
        return None
    if e.op == "*" and c == 0:
        return Const(1, INT)
    lo, hi = _operand_interval(e.op, c, swapped, ty)
    bounds = [Binary(">=", x, Const(lo, ty), INT)] if lo > ty.min else []
    bounds += [Binary("<=", x, Const(hi, ty), INT)] if hi < ty.max else []
    return _all(*bounds) or Const(1, INT)


def _operand_interval(op: str, c: int, swapped: bool, ty: IntType) -> tuple[int, int]:
    """The values of `x` for which `x op c` (`c op x` when `swapped`) lies in `ty`."""
    if op == "+":
        return ty.min - c, ty.max - c
    if op == "-":
        return (c - ty.max, c - ty.min) if swapped else (ty.min + c, ty.max + c)
    low, high = sorted((ty.min, ty.max), key=lambda bound: bound * (1 if c > 0 else -1))
    return -(-low // c), high // c  # c * x in [min, max]: x between ceil(low / c) and floor(high / c)


def _shift_fits(e: Binary, ty: IntType) -> Expr:
    """`e.left << e.right` is not a shift of a negative value, nor one whose result `ty` cannot
    hold; counts outside `0 .. bits - 1` are another kind of undefined behaviour (not checked)."""
    count = e.right
    assert isinstance(count.type, IntType)
    in_bounds = Binary(
        "&&",
        Binary(">=", count, Const(0, count.type), INT),
        Binary("<", count, Const(ty.bits, count.type), INT),
        INT,
    )
    shifted = Binary("<<", _wide(e.left), _wide(count), INT128)
    value_ok = Binary(
        "&&", Binary(">=", e.left, Const(0, ty), INT), Binary("<=", shifted, Const(ty.max, INT128), INT), INT
    )
    return Binary("||", Unary("!", in_bounds, INT), value_ok, INT)


def _in_range(wide: Expr, ty: IntType) -> Expr:
    low = Binary(">=", wide, Const(ty.min, INT128), INT)
    return Binary("&&", low, Binary("<=", wide, Const(ty.max, INT128), INT), INT)


def _wide(e: Expr) -> Expr:
    if isinstance(e, Const):
        return Const(e.value, INT128)
    return Cast(e, INT128)


def _true(e: Expr | None) -> Expr:
    return Const(1, INT) if e is None else e


def _all(*parts: Expr | None) -> Expr | None:
    real = [p for p in parts if p is not None]
    if not real:
        return None
    out = real[0]
    for p in real[1:]:
        out = Binary("&&", out, p, INT)
    return out
