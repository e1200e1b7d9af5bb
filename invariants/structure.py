"""What the shape of a loop suggests: which variables it defines, its guard, its head assertions."""

from __future__ import annotations

from collections.abc import Iterator

from quokka.verifier.ir import (
    COMPARE_OPS,
    Assert,
    Assign,
    Assume,
    Binary,
    Block,
    Break,
    Const,
    Expr,
    Havoc,
    If,
    Loop,
    Program,
    Scope,
    Stmt,
    walk,
    walk_stmts,
)


def find_loop(program: Program, loop_id: str) -> Loop | None:
    for s in walk_stmts(program.body):
        if isinstance(s, Loop) and s.id == loop_id:
            return s
    return None


def assigned_in(loop: Loop) -> list[str]:
    """Variables the loop writes, in order of their first write."""
    out: dict[str, None] = {}
    for s in walk_stmts(loop.body + loop.step):
        if isinstance(s, (Assign, Havoc)):
            out.setdefault(s.target, None)
    return list(out)


def preference(names: list[str], loop: Loop | None) -> list[str]:
    """`names` ordered most dependent first: the loop's later writes first, then the variables
    it writes earlier (counters), then the ones it never writes (parameters)."""
    written = assigned_in(loop) if loop is not None else []
    first = [v for v in reversed(written) if v in names]
    return first + [v for v in names if v not in first]


def _head_prefix(block: Block) -> Iterator[Stmt]:
    """The statements at the start of `block` that run before the loop writes anything."""
    for s in block:
        if isinstance(s, (Assign, Havoc, Loop)):
            return
        if isinstance(s, Scope):
            yield from _head_prefix(s.body)
            if _writes(s.body):
                return
            continue
        yield s
        if isinstance(s, If) and _writes(s.then + s.orelse):
            return


def _writes(block: Block) -> bool:
    return any(isinstance(t, (Assign, Havoc, Loop)) for t in walk_stmts(block))


def exit_conditions(loop: Loop) -> list[Expr]:
    """Conditions of `if (c) break;` (or `if (c) ; else break;`) at the head of the loop."""
    out = []
    for s in _head_prefix(loop.body):
        if isinstance(s, If) and (_is_break(s.then) or (not s.then and _is_break(s.orelse))):
            out.append(s.cond)
    return out


def _is_break(block: Block) -> bool:
    return len(block) == 1 and isinstance(block[0], Break)


def head_assertions(loop: Loop) -> list[Expr]:
    """Conditions asserted at the head of the loop, before anything is written."""
    return [s.cond for s in _head_prefix(loop.body) if isinstance(s, Assert)]


def comparisons(e: Expr) -> list[Binary]:
    """The comparison sub-expressions of `e`."""
    return [n for n in walk(e) if isinstance(n, Binary) and n.op in COMPARE_OPS]


def program_constants(program: Program) -> frozenset[int]:
    """The integer constants the program's statements mention."""
    out: set[int] = set()
    for s in walk_stmts(program.body):
        for e in _stmt_exprs(s):
            out.update(n.value for n in walk(e) if isinstance(n, Const))
    return frozenset(out)


def _stmt_exprs(s: Stmt) -> tuple[Expr, ...]:
    if isinstance(s, Assign):
        return (s.value,)
    if isinstance(s, (Assume, Assert, If)):
        return (s.cond,)
    return ()
