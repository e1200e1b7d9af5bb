"""Drop candidates that are semantically equal to an earlier one of the same loop.

Cheap first: identical IR, then a fingerprint (the truth value at a few fixed points, computed by
Z3's simplifier with the IR's exact semantics) groups the rest, and only candidates with equal
fingerprints get an equivalence query (Z3, a few milliseconds, variables within their types).
A query that times out counts as "different": both candidates stay.
"""

from __future__ import annotations

from collections.abc import Sequence

from quokka.verifier.encode.meaning import Equivalence, Fingerprint
from quokka.verifier.ir import Program

from ..protocol import Candidate

MAX_QUERIES = 200


class Deduplicator:
    """Remembers what it has kept, per loop; `fresh` says whether a candidate is new."""

    def __init__(self, program: Program, seed: int = 0) -> None:
        self.meaning = Equivalence(program.var_types, seed)
        self.kept: dict[str, list[tuple[Candidate, Fingerprint]]] = {}

    def fresh(self, c: Candidate) -> bool:
        """True (and remembered) when `c` differs from every candidate kept for its loop."""
        kept = self.kept.setdefault(c.loop_id, [])
        if any(k.expr == c.expr for k, _ in kept):
            return False
        fp = self.meaning.fingerprint(c.expr)
        same = [k for k, pk in kept if pk == fp]
        if any(self._equivalent(c, k) for k in same):
            return False
        kept.append((c, fp))
        return True

    def _equivalent(self, a: Candidate, b: Candidate) -> bool:
        if self.meaning.queries >= MAX_QUERIES:
            return False
        return bool(self.meaning.equivalent(a.expr, b.expr))


def deduplicate(
    candidates: Sequence[Candidate], program: Program, dedup: Deduplicator | None = None
) -> list[Candidate]:
    """`candidates` without semantic repeats; of rejections, one per loop, text and reason."""
    dedup = dedup or Deduplicator(program)
    seen: set[tuple[str, str | None, str]] = set()
    out = []
    for c in candidates:
        if c.rejected:
            key = (c.loop_id, c.raw, c.rejected)
            if key not in seen:
                seen.add(key)
                out.append(c)
        elif dedup.fresh(c):
            out.append(c)
    return out
