"""Reads of uninitialised scalar locals along an executed path, and the two readings of them.

C11 6.3.2.1p2: reading an uninitialised automatic object that could have been declared `register`
(a scalar local whose address is never taken: every scalar the IR has) is undefined behaviour.
Under the `strict` reading (a plain C file's default) a counterexample that does so is not a run
the compiled program is bound to follow, so it does not justify FALSE. Under `nondet` (SV-COMP's
reading, a task file's default) such a local holds an arbitrary value of its type, like the result
of a `__VERIFIER_nondet_*` call, so the counterexample stands and its reads are reported. Either
way TRUE holds for every value (the engines read a `Havoc` as any value). Arrays are not tracked:
their uninitialised elements have unspecified values.

The check over-approximates reads: a condition reads all its variables, even those that `&&`,
`||` or `?:` would not evaluate, so it may reject a valid counterexample but never accepts one
that reads an uninitialised value.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from quokka.verifier.errors import Coord
from quokka.verifier.ir import (
    Assert,
    Assign,
    Assume,
    FloatType,
    Havoc,
    If,
    IntType,
    Program,
    Stmt,
    free_vars,
)
from quokka.verifier.options import (
    NONDET as NONDET,  # the two readings: defined with the options that choose them
)
from quokka.verifier.options import STRICT as STRICT
from quokka.verifier.options import UNINITIALISED_READINGS as UNINITIALISED_READINGS

ORIGIN = "uninitialised"  # the origin of the `Havoc` that declares a local without an initialiser


@dataclass(frozen=True)
class UninitialisedRead:
    """`variable` (IR name) was read at `coord` while it held the value of its uninitialised
    declaration at `declared`."""

    variable: str
    coord: Coord | None
    declared: Coord | None

    def describe(self, c_name: str) -> str:
        where = f" (declared at {self.declared})" if self.declared else ""
        return f"reads the uninitialised variable {c_name}{where} at {self.coord}"


def uninitialised_reads(program: Program, path: Iterable[Stmt | None]) -> tuple[UninitialisedRead, ...]:
    """The first read of each uninitialised value along `path` (the statements executed, in order)."""
    scalars = {d.name for d in program.variables if isinstance(d.type, (IntType, FloatType))}
    undefined: dict[str, Coord | None] = {}  # variable -> where its uninitialised value came from
    found: dict[tuple[str, Coord | None], UninitialisedRead] = {}
    reads: dict[int, frozenset[str]] = {}  # by statement identity: a long path repeats a few statements
    for stmt in path:
        if stmt is None:
            continue
        if undefined:
            known = reads.get(id(stmt))
            if known is None:
                known = reads[id(stmt)] = reads_of(stmt)
            for name in known & undefined.keys():
                origin = undefined[name]
                found.setdefault((name, origin), UninitialisedRead(name, stmt.coord, origin))
        target = written_by(stmt)
        if target in scalars and isinstance(stmt, Havoc) and stmt.origin == ORIGIN:
            undefined[target] = stmt.coord
        elif target is not None:
            undefined.pop(target, None)
    return tuple(found.values())


def reads_of(stmt: Stmt) -> frozenset[str]:
    if isinstance(stmt, Assign):
        return free_vars(stmt.value)
    if isinstance(stmt, (Assume, Assert, If)):
        return free_vars(stmt.cond)
    return frozenset()


def written_by(stmt: Stmt) -> str | None:
    return stmt.target if isinstance(stmt, (Assign, Havoc)) else None
