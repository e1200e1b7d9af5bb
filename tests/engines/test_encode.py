"""The cutpoint encoding: every concrete step of the interpreter is an edge of the encoding,
loop-free programs are encoded exactly, and the structure (break, continue, return, nested
loops, liveness, range facts) is right."""

from __future__ import annotations

import itertools
import random

import pytest
import z3
from corpus import CORPUS, Example
from quokka.verifier.encode import ENTRY, ERROR, Encoding, encode, range_facts
from quokka.verifier.exec.interp import run
from quokka.verifier.ir import UINT, ArrayType, Assign, Return, Scope, Select, free_vars
from quokka.verifier.ir.builder import ProgramBuilder, add, ge, gt, lt, num

MAX_TRANSITIONS = 40


def _inputs(example: Example, seed: int) -> list[tuple[int, ...]]:
    rng = random.Random(seed)
    runs = [tuple(rng.randint(-3, 12) for _ in range(30)) for _ in range(4)]
    return [example.witness, *runs] if example.witness is not None else runs


def _allowed(enc: Encoding, src: str, pre: dict[str, int], dst: str, post: dict[str, int]) -> bool:
    """Does some edge src -> dst take the integer state `pre` to `post`?"""
    for edge in (e for e in enc.edges if e.src == src and e.dst == dst):
        solver = z3.Solver()
        solver.add(edge.guard)
        if src != ENTRY:
            solver.add(*[enc.pre[v] == value for v, value in pre.items()])
        if dst != ERROR:
            solver.add(*[edge.post[v] == value for v, value in post.items()])
        if solver.check() == z3.sat:
            return True
    return False


@pytest.mark.parametrize("example", CORPUS, ids=lambda e: e.name)
def test_every_interpreter_step_is_an_edge(example: Example) -> None:
    enc = encode(example.program)
    assert len({(e.src, e.dst, e.assert_index) for e in enc.edges}) == len(enc.edges)
    for inputs in _inputs(example, seed=7):
        execution = run(example.program, inputs, max_steps=20_000)
        assert example.expected == "unsafe" or execution.outcome != "error", "a safe example failed"
        nodes = [(ENTRY, {})] + [(h.loop_id, dict(h.values)) for h in execution.loop_heads]
        if execution.outcome == "error":
            nodes.append((ERROR, {}))
        for (src, pre), (dst, post) in list(itertools.pairwise(nodes))[:MAX_TRANSITIONS]:
            assert _allowed(enc, src, pre, dst, post), f"{src} {pre} -> {dst} {post} with inputs {inputs}"
        if execution.outcome == "error" and len(nodes) - 1 > MAX_TRANSITIONS:
            (src, pre), (dst, post) = nodes[-2], nodes[-1]
            assert _allowed(enc, src, pre, dst, post)


LOOP_FREE = [e for e in CORPUS if "no-loop" in e.features]


@pytest.mark.parametrize("example", LOOP_FREE, ids=lambda e: e.name)
def test_loop_free_programs_are_encoded_exactly(example: Example) -> None:
    enc = encode(example.program)
    solver = z3.Solver()
    errors = [e.guard for e in enc.edges if e.src == ENTRY and e.dst == ERROR]
    solver.add(z3.Or([*errors, z3.BoolVal(False)]))
    assert solver.check() == (z3.sat if example.expected == "unsafe" else z3.unsat)


def _nested_program() -> tuple[object, str, str]:
    b = ProgramBuilder("n.c")
    i, j = b.var("i"), b.var("j")
    with b.loop() as outer:
        b.if_break(ge(i, num(3)))
        with b.loop() as inner:
            b.if_break(ge(j, i))
            b.assign(j, add(j, num(1)))
        b.assign(i, add(i, num(1)))
    b.check(lt(j, num(5)))
    return b.build(), outer, inner


def test_nested_loops_have_every_head_to_head_edge() -> None:
    program, outer, inner = _nested_program()
    enc = encode(program)
    pairs = {(e.src, e.dst) for e in enc.edges}
    assert pairs == {(ENTRY, outer), (outer, inner), (inner, inner), (inner, outer), (outer, ERROR)}


def test_break_from_inner_loop_continues_in_outer_body() -> None:
    program, outer, inner = _nested_program()
    enc = encode(program)
    (edge,) = [e for e in enc.edges if e.src == inner and e.dst == outer]
    solver = z3.Solver()
    solver.add(edge.guard, enc.pre["i"] == 2, enc.pre["j"] == 2)
    assert solver.check() == z3.sat
    assert solver.model().eval(edge.post["i"]).as_long() == 3  # the rest of the outer body ran


def test_return_inside_inlined_function_only_leaves_the_function() -> None:
    b = ProgramBuilder("r.c")
    x = b.var("x")
    b.emit(Scope("f", (Return(), Assign("x", num(5)))))
    b.check(lt(x, num(1)))
    enc = encode(b.build())
    assert [e.dst for e in enc.edges] == [ERROR]
    assert z3.Solver().check(enc.edges[0].guard) == z3.unsat  # x is still 0: the assert holds


def test_return_from_main_ends_the_program() -> None:
    b = ProgramBuilder("r.c")
    x = b.var("x")
    b.if_(gt(x, num(-1)), (Return(),))
    b.check(num(0))
    enc = encode(b.build())
    assert all(z3.Solver().check(e.guard) == z3.unsat for e in enc.edges if e.dst == ERROR)


def test_liveness_drops_variables_written_before_read() -> None:
    b = ProgramBuilder("live.c")
    i, t, n, dead = b.var("i"), b.var("t"), b.var("n"), b.var("dead")
    b.havoc(n)
    with b.loop() as loop:
        b.if_break(ge(i, n))
        b.assign(t, add(i, num(1)))
        b.assign(i, t)
        b.assign(dead, num(3))
    b.check(ge(i, num(0)))
    assert encode(b.build()).live[loop] == ("i", "n")


def test_liveness_keeps_variables_read_after_the_loop() -> None:
    b = ProgramBuilder("live.c")
    i, k = b.var("i"), b.var("k")
    b.havoc(k)
    with b.loop() as loop:
        b.if_break(ge(i, num(4)))
        b.assign(i, add(i, num(1)))
    b.check(ge(k, num(0)))
    assert encode(b.build()).live[loop] == ("i", "k")


def test_range_facts_only_for_unsigned_variables_assigned_in_range() -> None:
    b = ProgramBuilder("ranges.c")
    u, w, s = b.var("u", UINT), b.var("w", UINT), b.var("s")
    arr = b.var("a", ArrayType(UINT, 4))
    b.havoc(u)
    b.assign(u, add(u, num(1, UINT)))
    b.assign(w, Select(arr, num(0), UINT))
    b.assign(s, add(s, num(1)))
    facts = range_facts(b.build())
    assert [sorted(free_vars(f)) for f in facts] == [["u"]]


def test_havoc_is_in_its_type_range() -> None:
    b = ProgramBuilder("h.c")
    u = b.var("u", UINT)
    b.havoc(u)
    b.check(ge(u, num(0, UINT)))
    enc = encode(b.build())
    assert z3.Solver().check(enc.edges[0].guard) == z3.unsat
