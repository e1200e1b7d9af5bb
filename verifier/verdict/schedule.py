"""Which strategies run when: at most `cores` at once, the cheap and usually decisive ones first.

A program's cheap features (`Features`: loops, nonlinear operations, arrays, constant magnitudes,
cut recursion, floats) name its kind; the table `schedule.toml` (data, learned from profile
records: `svcomp.schedule_learn`) gives each kind two stages. The first stage's strategies run in order,
each with a short slice of the budget; the second stage's share what is left, a fair share each
(`Queue`). A strategy of the first stage may come again in the second, with the longer slice.
Strategies the table does not name go last; `FIRST` ones (the user's own invariants) first.
"""

from __future__ import annotations

import math
import os
import tomllib
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from quokka.verifier.engines.base import Budget
from quokka.verifier.errors import InputError
from quokka.verifier.ir import (
    ArrayType,
    Binary,
    Const,
    Program,
    Select,
    Store,
    float_use,
    stmt_exprs,
    walk,
    walk_stmts,
)

TABLE = Path(__file__).with_name("schedule.toml")
FIRST = ("user",)  # a user's invariants: one inductive check, decisive when they hold
BIG_CONSTANT = 1000  # a constant beyond this (in magnitude) makes a program "big-constants"
NONLINEAR_OPS = frozenset({"*", "/", "%"})
OVERDUE_S = 1.0  # a strategy still running this long after its slice is killed


@dataclass(frozen=True)
class Features:
    """What the schedule looks at in a program (all cheap: one walk over its statements)."""

    loops: int
    nonlinear: bool  # a product, quotient or remainder of two non-constant operands
    arrays: bool
    big_constants: bool
    recursion_cut: bool
    floats: bool

    @property
    def kind(self) -> str:
        """The table's row for the program: the first feature that applies, in this order."""
        for name, present in (
            ("floats", self.floats), ("recursion", self.recursion_cut), ("loop-free", self.loops == 0),
            ("arrays", self.arrays), ("nonlinear", self.nonlinear), ("big-constants", self.big_constants),
        ):  # fmt: skip
            if present:
                return name
        return "linear"


def features(program: Program) -> Features:
    nodes = [n for s in walk_stmts(program.body) for e in stmt_exprs(s) for n in walk(e)]
    return Features(
        loops=len(program.loops),
        nonlinear=any(_nonlinear(n) for n in nodes),
        arrays=any(isinstance(v.type, ArrayType) for v in program.variables)
        or any(isinstance(n, Select | Store) for n in nodes),
        big_constants=any(isinstance(n, Const) and abs(n.value) > BIG_CONSTANT for n in nodes),
        recursion_cut=bool(program.cut_calls),
        floats=float_use(program) is not None,
    )


def _nonlinear(e: object) -> bool:
    return (
        isinstance(e, Binary)
        and e.op in NONLINEAR_OPS
        and not isinstance(e.left, Const)
        and not isinstance(e.right, Const)
    )


# ----------------------------------------------------------------------------- the table


@dataclass(frozen=True)
class Stages:
    """One kind's row: the first stage's strategies (each with `slice_s`), then the second's."""

    first: tuple[str, ...]
    then: tuple[str, ...]
    slice_s: float


@dataclass(frozen=True)
class Table:
    kinds: Mapping[str, Stages]
    default: Stages
    # engines that start only where they apply (`invariants.verify._not_applicable`), and are then
    # cheap and decisive: last in every first stage, with a slice of their own
    specialists: tuple[str, ...] = ()
    specialist_slice_s: float = 3.0

    def stages(self, kind: str) -> Stages:
        return self.kinds.get(kind, self.default)


@cache
def load_table(path: Path = TABLE) -> Table:
    """The table in `path` (a located error when it cannot be read: the table is data, it is checked)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        slice_s = float(data.get("slice_s", 2.0))
        kinds = {name: _stages(row, slice_s) for name, row in data.get("kind", {}).items()}
        specialists = tuple(str(n) for n in data.get("specialists", ()))
        return Table(kinds, _stages(data["default"], slice_s), specialists,
                     float(data.get("specialist_slice_s", 3.0)))  # fmt: skip
    except (OSError, tomllib.TOMLDecodeError, KeyError, ValueError) as exc:
        raise InputError(None, f"{path}: cannot read the schedule: {exc}") from exc


def _stages(row: Mapping[str, Any], slice_s: float) -> Stages:
    first, then = row["first"], row["then"]
    if not all(isinstance(n, str) for n in (*first, *then)):
        raise ValueError("stage entries must be strategy names")
    return Stages(tuple(first), tuple(then), float(row.get("slice_s", slice_s)))


# ----------------------------------------------------------------------------- the queue


@dataclass(frozen=True)
class Slot:
    """One start of a strategy: its stage (1, 2) and its slice (None: a fair share of the rest)."""

    name: str
    stage: int
    slice_s: float | None


def plan(
    program: Program, names: Collection[str], table: Table | None = None, instant: Collection[str] = ()
) -> tuple[Slot, ...]:
    """The starts of the strategies `names` for `program`, in order; those in `instant` (which
    answer at once, e.g. an engine refusing floating point) first, so that they take no share."""
    table = table or load_table()
    stages = table.stages(features(program).kind)
    now = [n for n in instant if n in names]
    names = [n for n in names if n not in instant]
    first = [n for n in (*FIRST, *stages.first) if n in names]
    special = [n for n in table.specialists if n in names and n not in first]
    then = [n for n in stages.then if n in names and n not in special]
    rest = [n for n in names if n not in first and n not in then and n not in special]
    return (
        *(Slot(n, 1, stages.slice_s) for n in dict.fromkeys([*now, *first])),
        *(Slot(n, 1, table.specialist_slice_s) for n in special),
        *(Slot(n, 2, None) for n in dict.fromkeys([*then, *rest])),
    )


def race(names: Collection[str]) -> tuple[Slot, ...]:
    """Every strategy at once with the whole budget: the schedule before `Queue` (`--cores 0`)."""
    return tuple(Slot(n, 1, None) for n in names)


@dataclass
class Queue:
    """The slots not yet started, handed out as cores come free (`due`)."""

    slots: list[Slot]
    cores: int  # at most this many strategies running at once (0: no limit)
    started: list[Slot] = field(default_factory=list)

    def due(self, running: int, budget: Budget) -> list[tuple[Slot, Budget]]:
        """The slots to start now that `running` strategies run, each with its budget."""
        out: list[tuple[Slot, Budget]] = []
        while self.slots and (self.cores == 0 or running + len(out) < self.cores):
            slot = self.slots.pop(0)
            self.started.append(slot)
            out.append((slot, budget.sub(self._seconds(slot, budget))))
        return out

    def again(self, slot: Slot) -> None:
        """`slot`'s strategy, which used up its first-stage slice, once more after the others,
        with a share of the rest (unless it comes again anyway)."""
        if slot.slice_s is not None and all(s.name != slot.name for s in self.slots):
            self.slots.append(Slot(slot.name, 3, None))

    def keep_only(self, names: Collection[str]) -> None:
        """Drop the slots of every strategy but `names`."""
        self.slots = [s for s in self.slots if s.name in names]

    def _seconds(self, slot: Slot, budget: Budget) -> float:
        if slot.slice_s is not None:
            return slot.slice_s
        if self.cores == 0:
            return budget.remaining()
        waiting = 1 + sum(1 for s in self.slots if s.slice_s is None)
        return budget.remaining() / math.ceil(waiting / self.cores)


def available_cores() -> int:
    """The cores this process may run on (its affinity mask), at least 1."""
    return max(1, len(os.sched_getaffinity(0)))
