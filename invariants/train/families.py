"""A split of programs by family (`quokka.verifier.task.family_of` names them)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable


def split_families(
    families: Iterable[str], val_fraction: float, seed: int = 0
) -> tuple[list[str], list[str]]:
    """(train, validation) families: a deterministic order by seeded hash, the first fraction validates."""
    unique = sorted(set(families))
    order = sorted(unique, key=lambda f: hashlib.sha256(f"{seed}:{f}".encode()).hexdigest())
    n_val = round(len(unique) * val_fraction) if len(unique) > 1 else 0
    if val_fraction > 0 and n_val == 0 and len(unique) > 1:
        n_val = 1
    val = set(order[:n_val])
    return [f for f in unique if f not in val], [f for f in unique if f in val]
