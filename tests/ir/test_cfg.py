"""The control-flow graph: blocks, loop heads, natural loops, and what it rejects."""

from __future__ import annotations

import pytest
from corpus import nested_counters
from quokka.verifier.cfg import Branch, Cfg, Halt, Jump, build_cfg
from quokka.verifier.errors import IRTypeError, QuokkaError, UnsupportedFeature
from quokka.verifier.ir import Assert, Assign, Goto, If, Label, Return, Scope
from quokka.verifier.ir.builder import ProgramBuilder, add, ge, lt, num
from shared_data import BENCHMARKS


def _reachable(cfg: Cfg) -> set[int]:
    seen, stack = {cfg.entry}, [cfg.entry]
    while stack:
        for t in cfg.blocks[stack.pop()].succs:
            if t not in seen:
                seen.add(t)
                stack.append(t)
    return seen


def _counter() -> ProgramBuilder:
    b = ProgramBuilder()
    x = b.var("x")
    b.assign(x, num(0))
    with b.loop("L"):
        b.if_break(ge(x, num(10)))
        b.assign(x, add(x, num(1)))
    b.check(lt(x, num(11)))
    return b


def test_a_while_loop_has_one_head_one_back_edge_and_an_exit() -> None:
    cfg = build_cfg(_counter().build())
    loop = cfg.loops["L"]
    assert cfg.blocks[loop.head].head == "L"
    assert [(s, d) for s, d in cfg.back_edges] == [(s, loop.head) for s, _ in cfg.back_edges]
    assert len(cfg.back_edges) == 1
    assert len(cfg.exits("L")) == 1
    assert loop.parent is None
    assert any(isinstance(b.end, Halt) for b in cfg.blocks if b.id in _reachable(cfg))


def test_order_sends_every_forward_edge_forward() -> None:
    cfg = build_cfg(_counter().build())
    pos = {b: i for i, b in enumerate(cfg.order)}
    assert sorted(pos) == list(range(len(cfg.blocks)))
    for src, dst in cfg.edges():
        assert cfg.is_back(src, dst) or pos[src] < pos[dst]


def test_nested_loops_know_their_parent_and_innermost_blocks() -> None:
    cfg = build_cfg(nested_counters(3, 3))
    assert cfg.loops["inner"].parent == "outer"
    assert cfg.loops["inner"].blocks < cfg.loops["outer"].blocks
    assert cfg.loop_of(cfg.head("inner")) == "inner"
    assert cfg.loop_of(cfg.head("outer")) == "outer"


def test_a_backward_goto_makes_a_loop_with_the_labels_id() -> None:
    b = ProgramBuilder()
    x = b.var("x")
    loop_id = b.label("again", loop=True)
    b.assign(x, add(x, num(1)))
    b.emit(If(lt(x, num(5)), (Goto("again"),), ()))
    b.check(ge(x, num(5)))
    cfg = build_cfg(b.build())
    assert loop_id is not None and cfg.blocks[cfg.head(loop_id)].head == loop_id
    assert {d for _, d in cfg.back_edges} == {cfg.head(loop_id)}


def test_forward_gotos_and_return_jump_to_their_targets() -> None:
    b = ProgramBuilder()
    x = b.var("x")
    b.goto("out")
    b.assign(x, num(7))  # unreachable: its block is emptied
    b.label("out")
    b.emit(Return())
    b.assign(x, num(8))
    cfg = build_cfg(b.build())
    live = _reachable(cfg)
    assigned = [s for blk in cfg.blocks if blk.id in live for s in blk.stmts if isinstance(s, Assign)]
    assert assigned == []
    assert all(not blk.stmts for blk in cfg.blocks if blk.id not in live)


def test_branches_carry_the_condition() -> None:
    b = ProgramBuilder()
    x = b.var("x")
    b.if_(lt(x, num(1)), (Assign("x", num(1)),), (Assign("x", num(2)),))
    cfg = build_cfg(b.build())
    branches = [blk.end for blk in cfg.blocks if isinstance(blk.end, Branch)]
    assert len(branches) == 1 and branches[0].cond == lt(x, num(1))
    assert all(isinstance(blk.end, (Jump, Branch, Halt)) for blk in cfg.blocks)


def test_a_goto_into_a_loop_is_rejected_at_the_goto() -> None:
    b = ProgramBuilder()
    x = b.var("x")
    b.emit(If(lt(x, num(0)), (Goto("inside"),), ()))
    with b.loop("L"):
        b.if_break(ge(x, num(10)))
        b.label("inside")
        b.assign(x, add(x, num(1)))
    with pytest.raises(UnsupportedFeature, match="goto into a loop"):
        build_cfg(b.build())


def test_undefined_labels_and_jumps_with_nowhere_to_go_are_ir_errors() -> None:
    b = ProgramBuilder()
    b.goto("nowhere")
    with pytest.raises(IRTypeError, match="undefined label nowhere"):
        build_cfg(b.build())
    p = _counter().build()
    from dataclasses import replace

    from quokka.verifier.ir import Break
    with pytest.raises(IRTypeError, match="break with nowhere to go"):
        build_cfg(replace(p, body=(Break(),)))


def test_labels_are_scoped_per_function_instance() -> None:
    b = ProgramBuilder()
    x = b.var("x")
    body = (Goto("done"), Assign("x", num(1)), Label("done"))
    b.emit(Scope("f", body))
    b.emit(Scope("f", body))
    b.check(lt(x, num(1)))
    cfg = build_cfg(b.build())
    assert len(cfg.asserts) == 1 and isinstance(cfg.asserts[0], Assert)
    live = _reachable(cfg)
    assert not [s for blk in cfg.blocks if blk.id in live for s in blk.stmts if isinstance(s, Assign)]


def test_every_benchmark_loop_has_a_head_with_the_frontends_parent() -> None:

    from quokka.verifier.frontend import lower

    folder = BENCHMARKS / "quokka-dev"
    files = sorted(folder.glob("*.c"))[:60]
    if not files:
        pytest.skip("no shared benchmarks")
    checked = 0
    for f in files:
        try:
            program = lower(str(f), "ILP32")
        except QuokkaError:  # unsupported features are the frontend's business
            continue
        cfg = build_cfg(program)
        assert {info.id: info.parent for info in program.loops} == {
            lid: loop.parent for lid, loop in cfg.loops.items()
        }
        checked += 1
    assert checked > 30
