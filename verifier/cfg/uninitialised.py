"""Static questions about uninitialised locals, answered over the control-flow graph."""

from __future__ import annotations

from quokka.verifier.cfg import Branch, build_cfg
from quokka.verifier.errors import Coord
from quokka.verifier.ir import FloatType, Havoc, IntType, Program, Stmt, free_vars
from quokka.verifier.ir.definedness import ORIGIN, UninitialisedRead, reads_of, written_by


def possible_uninitialised_read(program: Program) -> UninitialisedRead | None:
    """A read of a scalar local that some path of the control-flow graph makes while the local
    still holds the value of its declaration without initialiser, or None: then no run reads
    one. Every path of the graph counts, whatever its conditions, and a condition reads all its
    variables (as `uninitialised_reads` has it), so None is certain and a read may be spurious."""
    cfg = build_cfg(program)
    scalars = {d.name for d in program.variables if isinstance(d.type, (IntType, FloatType))}
    entering: dict[int, dict[str, Coord | None]] = {cfg.entry: {}}
    work = [cfg.entry]
    while work:
        block = cfg.blocks[work.pop()]
        undefined = dict(entering[block.id])
        for stmt in block.stmts:
            read = _first_read(stmt.coord, reads_of(stmt), undefined)
            if read is not None:
                return read
            _update(undefined, stmt, scalars)
        if isinstance(block.end, Branch):
            read = _first_read(block.end.coord, free_vars(block.end.cond), undefined)
            if read is not None:
                return read
        for succ in block.succs:
            merged = {**undefined, **entering.get(succ, {})}
            if succ not in entering or merged.keys() != entering[succ].keys():
                entering[succ] = merged
                work.append(succ)
    return None


def _first_read(
    coord: Coord | None, reads: frozenset[str], undefined: dict[str, Coord | None]
) -> UninitialisedRead | None:
    names = sorted(reads & undefined.keys())
    return UninitialisedRead(names[0], coord, undefined[names[0]]) if names else None


def _update(undefined: dict[str, Coord | None], stmt: Stmt, scalars: set[str]) -> None:
    target = written_by(stmt)
    if target in scalars and isinstance(stmt, Havoc) and stmt.origin == ORIGIN:
        undefined[target] = stmt.coord
    elif target is not None:
        undefined.pop(target, None)
