"""A counter with small bounded input and its set of head states: the state-set tests' program."""

from __future__ import annotations

from quokka.verifier.ir import INT, Expr, Program, Var
from quokka.verifier.ir.builder import ProgramBuilder, add, and_, eq, ge, le, mul, num, or_

SQUARES = Var("y", INT)  # the sum of squares of `bounded_counter(bound, squares=True)`


def bounded_counter(bound: int, squares: bool = False) -> tuple[Program, str, Var, Var]:
    """x counts up to n, n an input in [0, bound]; with `squares`, y (`SQUARES`) sums the squares
    of the values x takes (`y += x * x` after each step)."""
    b = ProgramBuilder("bc.c")
    x, n = b.var("x"), b.var("n")
    y = b.var(SQUARES.name) if squares else None
    b.havoc(n)
    b.assume(and_(ge(n, num(0)), le(n, num(bound))))
    with b.loop() as loop:
        b.if_break(ge(x, n))
        b.assign(x, add(x, num(1)))
        if y is not None:
            b.assign(y, add(y, mul(x, x)))
    b.check(le(x, n))
    return b.build(), loop, x, n


def reachable(bound: int) -> list[tuple[int, int]]:
    """The (x, n) head states of `bounded_counter(bound)`."""
    return [(a, m) for m in range(bound + 1) for a in range(m + 1)]


def points(x: Var, n: Var, states: list[tuple[int, int]]) -> Expr:
    """The set of `states` as a balanced disjunction of points (as the dynamic proposer builds it)."""
    parts = [and_(eq(x, num(a)), eq(n, num(b))) for a, b in states]
    return _balanced_or(parts)


def _balanced_or(parts: list[Expr]) -> Expr:
    if len(parts) == 1:
        return parts[0]
    half = len(parts) // 2
    return or_(_balanced_or(parts[:half]), _balanced_or(parts[half:]))
