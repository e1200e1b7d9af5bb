"""The minimal certificate: only the conjuncts that carry the proof, shown with pairs of bounds as
equalities, and the full certificate whenever no smaller proof is established (issue 19)."""

from __future__ import annotations

from corpus import Doubling, doubling
from quokka.verifier.engines.base import Budget, Status
from quokka.verifier.engines.inductive import prove_with
from quokka.verifier.ir import Binary, Expr, conjuncts
from quokka.verifier.ir.builder import ge, le, mul, num
from quokka.verifier.ir.printer import format_expr
from quokka.verifier.ir.simplify import readable_conjuncts
from quokka.verifier.verdict.minimize import minimal_certificate


def _program() -> Doubling:
    """n in [0, 50]; while (x < n) { x++; y += 2; } assert(y == 2 * n)."""
    return doubling("min.c", upper=50, bound_first=True)


def _all(*parts: Expr) -> Expr:
    acc = parts[0]
    for p in parts[1:]:
        acc = Binary("&&", acc, p, acc.type)  # type: ignore[arg-type]
    return acc


def test_only_the_conjuncts_that_carry_the_proof_remain_and_bounds_become_equalities() -> None:
    program, loop, x, y, n = _program()
    full = _all(ge(x, num(0)), le(y, mul(num(2), x)), ge(n, num(0)), le(x, n), ge(y, num(0)),
                ge(y, mul(num(2), x)), le(n, num(50)))
    assert prove_with(program, {loop: full}, Budget.of(30)).status is Status.SAFE
    small = minimal_certificate(program, {loop: full}, Budget.of(30))
    kept = conjuncts(small[loop])
    assert sorted(map(format_expr, kept)) == ["x <= n", "y <= 2*x", "y >= 2*x"]
    assert prove_with(program, small, Budget.of(30)).status is Status.SAFE
    shown = [format_expr(e) for _, e in readable_conjuncts(kept)]
    assert sorted(shown) == ["x <= n", "y == 2*x"]


def test_without_time_the_full_certificate_is_kept() -> None:
    program, loop, x, y, n = _program()
    full = _all(le(x, n), ge(y, mul(num(2), x)), le(y, mul(num(2), x)))
    assert minimal_certificate(program, {loop: full}, Budget.of(0)) == {loop: full}
