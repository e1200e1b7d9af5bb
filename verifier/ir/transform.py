"""Programs made from programs: statements added at loop heads, assertions turned into assumptions."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from quokka.verifier.errors import Coord
from quokka.verifier.ir import Assert, Assume, Block, Expr, If, Label, Loop, Program, Scope, Stmt

AtHead = Callable[[str, Coord | None], Block]


def _rewrite(block: Block, at_head: AtHead, assert_to_assume: bool) -> Block:
    out: list[Stmt] = []
    for s in block:
        out.append(_rewrite_stmt(s, at_head, assert_to_assume))
        if isinstance(s, Label) and s.loop is not None:  # a goto loop's head is right after its label
            out.extend(at_head(s.loop, s.coord))
    return tuple(out)


def _rewrite_stmt(s: Stmt, at_head: AtHead, assert_to_assume: bool) -> Stmt:
    if isinstance(s, Assert) and assert_to_assume:
        return Assume(s.cond, s.coord)
    if isinstance(s, If):
        return replace(s, then=_rewrite(s.then, at_head, assert_to_assume),
                       orelse=_rewrite(s.orelse, at_head, assert_to_assume))
    if isinstance(s, Scope):
        return replace(s, body=_rewrite(s.body, at_head, assert_to_assume))
    if isinstance(s, Loop):
        body = at_head(s.id, s.coord) + _rewrite(s.body, at_head, assert_to_assume)
        return replace(s, body=body, step=_rewrite(s.step, at_head, assert_to_assume))
    return s


def assume_program(program: Program, candidates: Mapping[str, Expr]) -> Program:
    """`program` with each candidate assumed at the head of its loop."""
    def at_head(loop_id: str, coord: Coord | None) -> Block:
        return (Assume(candidates[loop_id], coord),) if loop_id in candidates else ()

    return at_loop_heads(program, at_head)


def assert_program(program: Program, candidates: Mapping[str, Expr]) -> Program:
    """`program` with its assertions assumed and each candidate asserted at the head of its loop."""
    def at_head(loop_id: str, coord: Coord | None) -> Block:
        return (Assert(candidates[loop_id], coord, coord),) if loop_id in candidates else ()

    return at_loop_heads(program, at_head, assert_to_assume=True)


def at_loop_heads(program: Program, at_head: AtHead, *, assert_to_assume: bool = False) -> Program:
    """`program` with the statements `at_head(loop id, loop coord)` at the head of every loop,
    and its own assertions turned into assumptions if `assert_to_assume`."""
    return replace(program, body=_rewrite(program.body, at_head, assert_to_assume))
