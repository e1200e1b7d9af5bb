"""Quantified candidates about array cells: `\\forall integer k; lo <= k < hi ==> P(a[k], k)`.

The properties `P` come from the program text: every comparison that reads a cell `a[v]` at a
variable index (`a[i] >= low`, in an assertion or anywhere else) and every value stored at one
(`a[i] = i`), with `v` replaced by the bound `k`. The ranges are what a loop that walks an array
one cell at a time has covered: from 0, or down to a limit (a variable or positive constant that
some loop compares a counter with), ending at the loop's counter give or take a cell; and the
whole `[0, limit)`, for the loops that only read. Also: a store under an `if` whose condition
reads the index gives `!cond || a[k] == v`; where the program compares two cells of an array,
the running extreme `a[k] <= a[i]` (and `>=`) over `[0, i + d)`; and the counters' bounds
(`i >= 0`, `i <= n`), so that these candidates prove a program before any proposer has run it.
Houdini keeps what is inductive (instantiating the quantifiers at the index terms: see
`encode.instantiate`). The interpreter's loop-head states hold no arrays, so nothing filters
these candidates before Houdini does.
"""

from __future__ import annotations

from collections.abc import Iterator

from quokka.verifier.ir import (
    BOUND,
    INT,
    LLONG,
    ArrayType,
    Assign,
    Binary,
    Block,
    Const,
    Expr,
    Forall,
    Havoc,
    If,
    IntType,
    Loop,
    Program,
    Select,
    Stmt,
    Store,
    Unary,
    Var,
    free_vars,
    stmt_children,
    stmt_exprs,
    walk,
    walk_stmts,
)
from quokka.verifier.ir.builder import conjunction
from quokka.verifier.ir.cexpr import uncast
from quokka.verifier.ir.printer import c_names, format_expr

from .protocol import Candidate, ProposalContext
from .structure import assigned_in, comparisons, find_loop, substitute

NAME = "arrays"
OFFSETS = (-1, 0, 1, 2)  # a counter's distance from the edge of the covered range
BOUND_NAMES = ("k", "j", "m", "q", "idx")


class ArrayProposer:
    """Proposes `candidates` for every loop with an array in scope."""

    name = NAME

    def propose(self, context: ProposalContext) -> list[Candidate]:
        out = []
        for loop in context.loops:
            found = find_loop(context.program, loop.loop.id)
            names = c_names(context.program, loop.loop.id)
            exprs = candidates(context.program, found) if found is not None else []
            out += [Candidate(loop.loop.id, e, format_expr(e, names, readable=True), NAME) for e in exprs]
        return out


def candidates(program: Program, loop: Loop) -> list[Expr]:
    """The quantified candidates for the head of `loop`: over the arrays in scope, and that the
    arrays no statement writes (the frontend's all-zero temporaries) are still all zero."""
    return _filled(program, loop) + _extremes(program, loop) + _bounds(program, loop) + _untouched(program)


def _untouched(program: Program) -> list[Expr]:
    """`\\forall k; 0 <= k < n ==> z[k] == 0` for each array `z` of n cells that nothing assigns
    (every variable starts at 0)."""
    written = {s.target for s in walk_stmts(program.body) if isinstance(s, (Assign, Havoc))}
    out: list[Expr] = []
    for v in program.variables:
        ty = v.type
        if isinstance(ty, ArrayType) and ty.size is not None and v.name not in written:
            index = INT if ty.size <= INT.max else LLONG
            k = Var(BOUND + "k", index)
            zero = Binary("==", Select(Var(v.name, ty), k, ty.elem), Const(0, ty.elem), INT)
            out.append(Forall(k, Const(0, index), Const(ty.size, index), zero))
    return out


def _filled(program: Program, loop: Loop) -> list[Expr]:
    scope = dict(program.loop(loop.id).scope)  # C name -> IR name
    arrays = {v.name for v in program.variables if isinstance(v.type, ArrayType) and v.name in scope.values()}
    if not arrays:
        return []
    bound = next((n for n in BOUND_NAMES if n not in scope), "k_")
    counters = _counters(program, loop)
    limits = _limits(program, _all_counters(program), loop)
    out: dict[Expr, None] = {}
    loops = [s for s in walk_stmts(program.body) if isinstance(s, Loop)]
    fresh = {s.target for x in loops for s in walk_stmts(x.body + x.step) if isinstance(s, Havoc)}
    for array, index, body in _properties(program):
        if array not in arrays or (free_vars(body) - {index.name}) & fresh:
            continue  # a cell equal to an input read afresh each time is no invariant
        ty = index.type
        assert isinstance(ty, IntType)  # `_variable` finds integer variables only
        k = Var(BOUND + bound, ty)
        prop = substitute(body, {index.name: k})
        for lo, hi in _ranges(counters, limits, ty):
            if lo != hi and not (isinstance(lo, Const) and isinstance(hi, Const) and lo.value >= hi.value):
                out.setdefault(Forall(k, lo, hi, prop), None)
    return list(out)


def _extremes(program: Program, loop: Loop) -> list[Expr]:
    """`\\forall k; 0 <= k < i + d ==> a[k] <= a[i]` (and `>=`) for the counters `i` of `loop` and
    the arrays whose cells the program compares with each other (a bubble pass carries the
    largest cell so far along: `a[i] > a[i + 1]`)."""
    scope = dict(program.loop(loop.id).scope)
    compared = {a for a in _cell_comparisons(program) if a in scope.values()}
    bound = next((n for n in BOUND_NAMES if n not in scope), "k_")
    out: list[Expr] = []
    for name in sorted(compared):
        ty = program.var(name).type
        assert isinstance(ty, ArrayType)
        array = Var(name, ty)
        for c in _counters(program, loop):
            assert isinstance(c.type, IntType)
            k = Var(BOUND + bound, c.type)
            for op in ("<=", ">="):
                prop = Binary(op, Select(array, k, ty.elem), Select(array, c, ty.elem), INT)
                out += [Forall(k, Const(0, c.type), _plus(c, d), prop) for d in OFFSETS if d >= 0]
    return out


def _bounds(program: Program, loop: Loop) -> list[Expr]:
    """`i >= 0`, `i >= 1`, `i <= n` and `i <= n - 1` for the counters `i` of `loop` and the limits `n` of
    their type: what the ranges above need, proposed here too so that they can be proved before
    the proposers that run the program have answered."""
    limits = _limits(program, _all_counters(program), loop)
    out: list[Expr] = []
    for c in _counters(program, loop):
        ty = c.type
        assert isinstance(ty, IntType)
        out += [Binary(">=", c, Const(0, ty), INT), Binary(">=", c, Const(1, ty), INT)]
        for n in limits:
            if n.type == ty and n != c:
                out += [Binary("<=", c, n, INT), Binary("<=", c, _minus_one(n), INT)]
    return out


def _minus_one(e: Expr) -> Expr:
    if isinstance(e, Const):
        return Const(e.value - 1, e.type)
    assert isinstance(e.type, IntType)
    return Binary("-", e, Const(1, e.type), e.type)


def _cell_comparisons(program: Program) -> set[str]:
    """The arrays two of whose cells some comparison of the program holds against each other."""
    out = set()
    for s in walk_stmts(program.body):
        for e in stmt_exprs(s):
            for atom in comparisons(e):
                left, right = uncast(atom.left), uncast(atom.right)
                cells = isinstance(left, Select) and isinstance(right, Select) and left.array == right.array
                if cells and isinstance(left, Select) and isinstance(left.array, Var):
                    out.add(left.array.name)
    return out


def _properties(program: Program) -> Iterator[tuple[str, Var, Expr]]:
    """(array, index variable, property over that variable) from reads and writes of `a[v]`."""
    for s in walk_stmts(program.body):
        for e in stmt_exprs(s):
            for atom in comparisons(e):
                for node in walk(atom):
                    if isinstance(node, Select) and isinstance(node.array, Var):
                        index = _variable(node.index)
                        if index is not None:
                            yield node.array.name, index, atom
        stored = _stored(s)
        if stored is not None:
            yield stored
    yield from _guarded(program.body, ())


def _stored(s: Stmt) -> tuple[str, Var, Expr] | None:
    """(array, index variable, `a[i] == v`) for a store `a[i] = v` at a variable index."""
    if isinstance(s, Assign) and isinstance(s.value, Store) and isinstance(s.value.array, Var):
        index = _variable(s.value.index)
        if index is not None and s.value.array.name == s.target:
            cell = Select(s.value.array, s.value.index, s.value.value.type)  # type: ignore[arg-type]
            return s.target, index, Binary("==", cell, s.value.value, INT)
    return None


def _guarded(block: Block, guards: tuple[Expr, ...]) -> Iterator[tuple[str, Var, Expr]]:
    """`!(c) || a[i] == v` for each store under an `if (c)` whose condition reads the index
    (`if (i != z) a2[i] = a1[i];` makes `k == z || a2[k] == a1[k]`)."""
    for s in block:
        if isinstance(s, If):
            yield from _guarded(s.then, (*guards, s.cond))
            yield from _guarded(s.orelse, (*guards, Unary("!", s.cond, INT)))
            continue
        stored = _stored(s)
        relevant = [g for g in guards if stored is not None and stored[1].name in free_vars(g)]
        if stored is not None and relevant:
            array, index, prop = stored
            yield array, index, Binary("||", Unary("!", conjunction(relevant), INT), prop, INT)
        for inner in stmt_children(s):
            yield from _guarded(inner, guards)


def _variable(e: Expr) -> Var | None:
    """The integer variable `e` is, under casts that keep its value; else None."""
    e = uncast(e)
    return e if isinstance(e, Var) and isinstance(e.type, IntType) else None


def _steps(loop: Loop) -> Iterator[tuple[str, int]]:
    """(variable, c) for each `v = v + c` or `v = v - c` in the loop with a constant c."""
    for s in walk_stmts(loop.body + loop.step):
        if not isinstance(s, Assign) or not isinstance(s.value, Binary):
            continue
        v = s.value
        mover = _variable(v.left)
        if v.op in ("+", "-") and isinstance(v.right, Const) and mover is not None and mover.name == s.target:
            yield s.target, v.right.value if v.op == "+" else -v.right.value


def _counters(program: Program, loop: Loop) -> list[Var]:
    """The variables `loop` moves by one cell per step (and assigns nothing else to)."""
    written = assigned_in(loop)
    steps = dict(_steps(loop))
    return [Var(n, program.var(n).type) for n in written if abs(steps.get(n, 0)) == 1]


def _all_counters(program: Program) -> set[str]:
    loops = [s for s in walk_stmts(program.body) if isinstance(s, Loop)]
    return {v.name for loop in loops for v in _counters(program, loop)}


def _limits(program: Program, counters: set[str], loop: Loop) -> list[Expr]:
    """What some comparison holds a counter against: variables other than counters, and
    positive constants; and what `loop`'s own comparisons hold its counters against (another
    loop's counter, such as the length a filtering loop has built)."""
    out: dict[Expr, None] = {}
    for s in walk_stmts(program.body):
        _compared(s, counters, out)
    own = {v.name for v in _counters(program, loop)}
    for s in walk_stmts(loop.body + loop.step):
        _compared(s, own, out)
    return list(out)


def _compared(s: Stmt, counters: set[str], out: dict[Expr, None]) -> None:
    for e in stmt_exprs(s):
        for atom in comparisons(e):
            sides = [_variable(atom.left), _variable(atom.right)]
            if not any(v is not None and v.name in counters for v in sides):
                continue
            for side, var in zip((atom.left, atom.right), sides, strict=True):
                if var is not None and var.name not in counters:
                    out.setdefault(var, None)
                elif isinstance(side, Const) and side.value > 0:
                    out.setdefault(side, None)


def _ranges(counters: list[Var], limits: list[Expr], ty: IntType) -> Iterator[tuple[Expr, Expr]]:
    zero = Const(0, ty)
    ends: list[Expr] = [e for e in limits if e.type == ty and not isinstance(e, Const)]
    ends += [Const(e.value, ty) for e in limits if isinstance(e, Const) and e.value <= ty.max]
    for c in (c for c in counters if c.type == ty):
        for offset in OFFSETS:
            edge = _plus(c, offset)
            yield zero, edge
            for end in ends:
                yield edge, end
    for end in ends:
        yield zero, end


def _plus(v: Var, offset: int) -> Expr:
    assert isinstance(v.type, IntType)
    if offset == 0:
        return v
    return Binary("+" if offset > 0 else "-", v, Const(abs(offset), v.type), v.type)
