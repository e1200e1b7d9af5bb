"""Overflow sites are reported only where the proven invariants (with the bounds Houdini proves
beside them) do not rule an overflow out (issue 19)."""

from __future__ import annotations

from quokka.verifier.engines.base import Budget, Status
from quokka.verifier.engines.spacer import solve
from quokka.verifier.frontend import lower_source
from quokka.verifier.verdict.overflow import unproven_overflows

PRELUDE = "extern int __VERIFIER_nondet_int(void);\nextern void __VERIFIER_assert(int cond);\n"
BOUNDED = PRELUDE + """int main() {
  int n = __VERIFIER_nondet_int();
  if (n < 0 || n > 1000) return 0;
  int i = 0, sum = 0;
  while (i < n) { i = i + 1; sum = sum + 3; }
  __VERIFIER_assert(sum == 3 * n);
  return 0;
}
"""
UNBOUNDED = PRELUDE + """int main() {
  int n = __VERIFIER_nondet_int();
  int i = 0, sum = 0;
  while (i < 10) { i = i + 1; sum = sum + n; }
  __VERIFIER_assert(i == 10);
  return 0;
}
"""


def _sites(text: str) -> tuple[list[int], list[int]]:
    program = lower_source(text, "o.c", "ILP32")
    result = solve(program, Budget.of(30))
    assert result.status is Status.SAFE
    kept = unproven_overflows(program, result.invariants, Budget.of(30))
    return sorted({c.line for c in program.overflow_sites}), sorted({c.line for c in kept})


def test_sites_that_bounds_rule_out_are_dropped() -> None:
    recorded, kept = _sites(BOUNDED)
    assert recorded == [7, 8] and kept == []


def test_a_sum_of_unbounded_inputs_keeps_its_site() -> None:
    recorded, kept = _sites(UNBOUNDED)
    assert 6 in recorded and kept == [6]
