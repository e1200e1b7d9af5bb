"""Program families: the file-name stem without SV-COMP variant suffixes, and a split by family."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from pathlib import Path

_SUFFIX = re.compile(r"(_unwindbound\d+|_valuebound\d+|_true-unreach-call|_false-unreach-call|-ll|_ll|_\d+)$")


def family_of(name: str | Path) -> str:
    """`benchmark09_conjunctive_1.c` -> `benchmark09_conjunctive`, `cohencu-ll_valuebound5` -> `cohencu`."""
    stem = Path(name).name.split(".")[0]
    while True:
        shorter = _SUFFIX.sub("", stem)
        if shorter == stem or not shorter:
            return stem
        stem = shorter


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
