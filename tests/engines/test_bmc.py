"""Bounded model checking: real bugs found with inputs that replay, non-bugs never reported."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest
from corpus import counter_program
from quokka.verifier import ir
from quokka.verifier.cfg import build_cfg
from quokka.verifier.engines import bmc
from quokka.verifier.engines.base import Budget, EngineResult, Status
from quokka.verifier.errors import Coord
from quokka.verifier.exec.interp import run
from quokka.verifier.ir.builder import (
    ProgramBuilder,
    add,
    and_,
    cast,
    eq,
    ge,
    gt,
    le,
    lt,
    mul,
    ne,
    num,
    or_,
)

UCHAR = ir.IntType("unsigned char", 8, False)
SCHAR = ir.IntType("signed char", 8, True)


def with_loops(program: ir.Program) -> ir.Program:
    """Register the hand-built `Loop`s (the builder only knows its own) as the interpreter needs."""
    known = {info.id for info in program.loops}
    extra = tuple(
        ir.LoopInfo(s.id, s.coord or Coord(program.file, 0), 0, ())
        for s in ir.walk_stmts(program.body)
        if isinstance(s, ir.Loop) and s.id not in known
    )
    return replace(program, loops=program.loops + extra)


def _bmc(program: ir.Program, seconds: float = 30.0, **kw: object) -> EngineResult:
    return bmc.check(program, Budget.of(seconds), **kw)  # type: ignore[arg-type]


def unsafe(program: ir.Program, **kw: object) -> EngineResult:
    """BMC finds the bug, and its inputs replay to that very assertion in the interpreter.

    Checked with the incremental deepening and with fresh one-shot unrollings (the probing
    mode); the incremental result is returned.
    """
    program = with_loops(program)
    fresh = _bmc(program, solving="fresh", **kw)
    result = _bmc(program, **kw)
    for r in (fresh, result):
        assert r.status is Status.UNSAFE, r.reason
        assert r.inputs is not None
        execution = run(program, r.inputs)
        assert execution.outcome == "error", execution.message
        assert not execution.overflows
        assert execution.error is not None and execution.error.coord == r.stats["error_coord"]
        assert [value for _, _, value in r.stats["trace"]] == list(r.inputs)  # type: ignore[union-attr]
    return result


def complete(program: ir.Program, **kw: object) -> EngineResult:
    """No error within a complete unwinding, flagged complete (both modes): SAFE with the empty
    certificate when no path has undefined behaviour, else UNKNOWN saying so."""
    fresh = _bmc(program, solving="fresh", **kw)
    result = _bmc(program, **kw)
    for r in (fresh, result):
        assert r.stats["complete"] is True, r.reason
        if r.status is Status.SAFE:
            assert r.invariants == {} and "no undefined behaviour on any path" in r.reason
        else:
            assert r.status is Status.UNKNOWN and "undefined behaviour" in r.reason, r.reason
    assert fresh.status is result.status
    return result


# ----------------------------------------------------------------------------- depth


@pytest.mark.parametrize("target", [1, 3, 7, 20])
def test_bug_needs_exactly_k_iterations(target: int) -> None:
    result = unsafe(counter_program(target))
    assert result.inputs is not None and result.inputs[0] >= target
    assert int(result.stats["bound"]) >= target  # type: ignore[call-overload]
    assert result.engine == "bmc"


def test_bug_not_reachable_within_max_bound_is_unknown_not_complete() -> None:
    result = _bmc(counter_program(30), max_bound=10)
    assert result.status is Status.UNKNOWN
    assert result.stats["complete"] is False
    assert result.stats["bound"] == 10
    assert "k=10" in result.reason


def _ten_steps(claimed: int) -> ir.Program:
    """x counts from 0 to 10 (a concrete loop), then `assert(x == claimed)`."""
    b = ProgramBuilder()
    x = b.var("x")
    b.assign(x, num(0))
    with b.loop():
        b.if_break(ge(x, num(10)))
        b.assign(x, add(x, num(1)))
    b.check(eq(x, num(claimed)))
    return b.build()


def test_concrete_loop_unwinds_completely() -> None:
    result = complete(_ten_steps(10))
    assert result.stats["bound"] == 11  # ten iterations, and the eleventh head leaves


def test_concrete_loop_bug_after_exit() -> None:
    result = unsafe(_ten_steps(11))
    assert result.inputs == ()


def test_bounded_symbolic_loop_is_complete_when_bound_is_assumed() -> None:
    b = ProgramBuilder()
    x, n = b.var("x"), b.var("n")
    b.havoc(n)
    b.assume(and_(ge(n, num(0)), le(n, num(5))))
    b.assign(x, num(0))
    with b.loop():
        b.if_break(ge(x, n))
        b.assign(x, add(x, num(1)))
    b.check(le(x, num(5)))
    assert complete(b.build()).stats["bound"] == 6


def test_infinite_loop_with_bug_inside() -> None:
    b = ProgramBuilder()
    x, y = b.var("x"), b.var("y")
    b.assign(x, num(0))
    with b.loop():  # while (1) without break: nothing after it is reachable
        b.havoc(y)
        b.assume(and_(ge(y, num(0)), le(y, num(3))))
        b.assign(x, add(x, y))
        b.check(ne(x, num(10)))
    b.check(eq(num(0), num(1)))
    result = unsafe(b.build())
    assert result.inputs is not None and sum(result.inputs) == 10
    assert result.stats["error_coord"] == Coord("builder.c", 6, 1)


# ----------------------------------------------------------------------------- C semantics


def test_unsigned_wraparound_bug() -> None:
    b = ProgramBuilder()
    u, v = b.var("u", ir.UINT), b.var("v", ir.UINT)
    b.havoc(u)
    b.assign(v, add(u, num(1, ir.UINT)))
    b.check(gt(v, u))  # fails only for u == UINT_MAX
    assert unsafe(b.build()).inputs == (ir.UINT.max,)


def test_unsigned_wraparound_non_bug() -> None:
    """A naive unbounded encoding would reach v == 2**32 here."""
    b = ProgramBuilder()
    u, v = b.var("u", ir.UINT), b.var("v", ir.UINT)
    b.havoc(u)
    b.assign(v, add(u, num(1, ir.UINT)))
    b.check(le(v, num(ir.UINT.max, ir.UINT)))
    b.check(or_(gt(v, num(0, ir.UINT)), eq(u, num(ir.UINT.max, ir.UINT))))
    complete(b.build())


def test_narrow_casts_wrap() -> None:
    b = ProgramBuilder()
    x, c = b.var("x"), b.var("c", UCHAR)
    b.havoc(x)
    b.assume(gt(x, num(255)))
    b.assign(c, cast(x, UCHAR))
    b.check(ne(c, num(0, UCHAR)))  # x == 256 * k wraps to 0
    result = unsafe(b.build())
    assert result.inputs is not None and result.inputs[0] % 256 == 0


def test_signed_char_cast_non_bug() -> None:
    b = ProgramBuilder()
    x, c = b.var("x"), b.var("c", SCHAR)
    b.havoc(x)
    b.assign(c, cast(x, SCHAR))
    b.check(and_(ge(c, num(-128, SCHAR)), le(c, num(127, SCHAR))))
    complete(b.build())


def test_truncating_division_of_negatives_non_bug() -> None:
    """Euclidean division would give -7 / 2 == -4 and -7 % 2 == 1."""
    b = ProgramBuilder()
    x, q, r = b.var("x"), b.var("q"), b.var("r")
    b.havoc(x)
    b.assume(eq(x, num(-7)))
    b.assign(q, ir.Binary("/", x, num(2), ir.INT))
    b.assign(r, ir.Binary("%", x, num(2), ir.INT))
    b.check(and_(eq(q, num(-3)), eq(r, num(-1))))
    complete(b.build())


def test_truncating_division_bug() -> None:
    b = ProgramBuilder()
    x, d, q = b.var("x"), b.var("d"), b.var("q")
    b.havoc(x)
    b.havoc(d)
    b.assume(lt(x, num(0)))
    b.assign(q, ir.Binary("/", x, d, ir.INT))
    b.check(eq(add(mul(q, d), ir.Binary("%", x, d, ir.INT)), x))  # holds for C's / and %
    b.check(or_(ne(q, num(-3)), ne(d, num(2))))  # -6 / 2 and -7 / 2 (Euclidean: -5 / 2 too)
    result = unsafe(b.build())
    assert result.inputs in ((-6, 2), (-7, 2))


def test_division_by_zero_path_is_not_reported() -> None:
    b = ProgramBuilder()
    x, y = b.var("x"), b.var("y")
    b.havoc(x)
    b.assign(y, ir.Binary("/", num(10), x, ir.INT))
    b.check(ne(x, num(0)))  # only reachable with x == 0 after dividing by it: undefined
    complete(b.build())


def test_lazy_and_guards_the_division() -> None:
    b = ProgramBuilder()
    x = b.var("x")
    b.havoc(x)
    b.check(or_(eq(x, num(0)), gt(ir.Binary("/", num(100), x, ir.INT), num(-50))))  # fails for x == -1, -2
    assert unsafe(b.build()).inputs in ((-1,), (-2,))


def test_signed_overflow_paths_are_blocked() -> None:
    b = ProgramBuilder()
    x, y = b.var("x"), b.var("y")
    b.havoc(x)
    b.assign(y, add(x, num(1)))
    b.check(le(y, num(ir.INT.max)))  # only "fails" through an overflow (undefined behaviour)
    complete(b.build())
    # Without the overflow guard the model overflows; the replay rejects it: still no UNSAFE.
    loose = _bmc(b.build(), no_overflow=False)
    assert loose.status is Status.UNKNOWN
    assert loose.stats.get("replay") == "failed"


def test_bool_conversion_is_not_wrapping() -> None:
    b = ProgramBuilder()
    x, flag = b.var("x"), b.var("flag", ir.BOOL)
    b.havoc(x)
    b.assign(flag, cast(x, ir.BOOL))
    b.check(eq(flag, ir.Binary("&", x, num(1), ir.INT)))  # fails for even non-zero x
    result = unsafe(b.build())
    assert result.inputs is not None and result.inputs[0] != 0 and result.inputs[0] % 2 == 0


def test_nondet_bool_takes_only_zero_or_one() -> None:
    b = ProgramBuilder()
    flag = b.var("flag", ir.BOOL)
    b.havoc(flag)
    b.check(or_(eq(flag, num(0, ir.BOOL)), eq(flag, num(1, ir.BOOL))))
    complete(b.build())
    b.check(eq(flag, num(0, ir.BOOL)))
    assert unsafe(b.build()).inputs == (1,)


def test_mask_and_shift() -> None:
    b = ProgramBuilder()
    x, y = b.var("x", ir.UINT), b.var("y", ir.UINT)
    b.havoc(x)
    shifted = ir.Binary("<<", x, num(3, ir.UINT), ir.UINT)
    low = ir.Binary("&", shifted, num(0xFFFF, ir.UINT), ir.UINT)
    b.assign(y, add(low, ir.Binary(">>", x, num(30, ir.UINT), ir.UINT)))
    b.check(ne(y, num(0x1239, ir.UINT)))
    result = unsafe(b.build())
    assert result.inputs is not None
    xv = result.inputs[0]
    assert ((xv << 3) & 0xFFFF) + (xv >> 30) == 0x1239


# ----------------------------------------------------------------------------- control flow


X = ir.Var("x", ir.INT)


@pytest.mark.parametrize(
    ("guard", "claim"),
    [
        pytest.param(ir.Assume(gt(X, num(0))), gt(X, num(0)), id="assume"),
        pytest.param(ir.If(lt(X, num(0)), (ir.Assume(num(0)),), ()), ge(X, num(0)), id="abort"),  # abort()
        pytest.param(ir.If(gt(X, num(3)), (ir.Return(),), ()), le(X, num(3)), id="early-return"),
    ],
)
def test_a_guard_before_the_bug_blocks_it(guard: ir.Stmt, claim: ir.Expr) -> None:
    b = ProgramBuilder()
    b.havoc(b.var(X.name))
    b.emit(guard)
    b.check(claim)
    complete(b.build())


def test_abort_inside_loop_cuts_only_that_path() -> None:
    b = ProgramBuilder()
    i, s, y = b.var("i"), b.var("s"), b.var("y")
    b.assign(i, num(0))
    b.assign(s, num(0))
    with b.loop():
        b.if_break(ge(i, num(4)))
        b.havoc(y)
        b.if_(lt(y, num(0)), (ir.Assume(num(0)),))
        b.assume(le(y, num(100)))
        b.assign(s, add(s, y))
        b.assign(i, add(i, num(1)))
    b.check(ne(s, num(399)))
    result = unsafe(b.build())
    assert result.inputs is not None and len(result.inputs) == 4 and sum(result.inputs) == 399


def test_break_and_continue() -> None:
    b = ProgramBuilder()
    i, odd = b.var("i"), b.var("odd")
    b.assign(i, num(0))
    b.assign(odd, num(0))
    body = (
        ir.If(ge(i, num(9)), (ir.Break(),), ()),
        b_assign(i, add(i, num(1))),
        ir.If(eq(ir.Binary("%", i, num(2), ir.INT), num(0)), (ir.Continue(),), ()),
        b_assign(odd, add(odd, num(1))),
    )
    b.emit(ir.Loop("L", body))
    b.check(ne(odd, num(5)))  # i = 1, 3, 5, 7, 9 are odd
    result = unsafe(b.build())
    assert result.stats["bound"] == 10


def test_continue_jumps_to_the_step() -> None:
    """for (i = 0; i < 5; i++) { if (i == 2) continue; s += i; } -> s == 8."""
    b = ProgramBuilder()
    i, s = b.var("i"), b.var("s")
    b.assign(i, num(0))
    b.assign(s, num(0))
    body = (
        ir.If(ge(i, num(5)), (ir.Break(),), ()),
        ir.If(eq(i, num(2)), (ir.Continue(),), ()),
        b_assign(s, add(s, i)),
    )
    b.emit(ir.Loop("L", body, (b_assign(i, add(i, num(1))),)))
    b.check(eq(s, num(8)))
    complete(b.build())
    b.check(ne(s, num(8)))
    unsafe(b.build())


def test_return_leaves_only_the_innermost_scope() -> None:
    b = ProgramBuilder()
    x, n = b.var("x"), b.var("n")
    b.havoc(n)
    f_body = (
        ir.If(gt(n, num(3)), (b_assign(x, num(1)), ir.Return()), ()),
        b_assign(x, num(2)),
    )
    b.emit(ir.Scope("f", f_body))
    b.check(ne(x, num(1)))  # reached after f returns early
    assert unsafe(b.build()).inputs is not None


def test_return_from_inside_a_loop() -> None:
    """int f() { i = 0; while (1) { if (i >= n) return; i++; } } f(); assert(i != 6);"""
    b = ProgramBuilder()
    i, n = b.var("i"), b.var("n")
    b.havoc(n)
    b.assign(i, num(0))
    loop = ir.Loop("L", (ir.If(ge(i, n), (ir.Return(),), ()), b_assign(i, add(i, num(1)))))
    b.emit(ir.Scope("f", (loop, b_assign(i, num(-1)))))
    b.check(ne(i, num(6)))
    assert unsafe(b.build()).inputs == (6,)


def test_return_from_a_loop_inside_an_outer_loop() -> None:
    """The inner function's end is reached by returns from iterations added later."""
    b = ProgramBuilder()
    k, i, n, total = b.var("k"), b.var("i"), b.var("n"), b.var("total")
    b.assign(k, num(0))
    b.assign(total, num(0))
    inner = ir.Loop("I", (ir.If(ge(i, n), (ir.Return(),), ()), b_assign(i, add(i, num(1)))))
    outer_body = (
        ir.If(ge(k, num(3)), (ir.Break(),), ()),
        ir.Havoc("n", None, "nondet"),
        ir.Assume(and_(ge(n, num(0)), le(n, num(20)))),
        b_assign(i, num(0)),
        ir.Scope("f", (inner,)),
        b_assign(total, add(total, i)),
        b_assign(k, add(k, num(1))),
    )
    b.emit(ir.Loop("O", outer_body))
    b.check(ne(total, num(40)))
    result = unsafe(b.build())
    assert result.inputs is not None and len(result.inputs) == 3 and sum(result.inputs) == 40


def test_nested_loops() -> None:
    b = ProgramBuilder()
    i, j, c, m = b.var("i"), b.var("j"), b.var("c"), b.var("m")
    b.havoc(m)
    b.assume(and_(ge(m, num(0)), le(m, num(10))))
    b.assign(i, num(0))
    b.assign(c, num(0))
    inner = ir.Loop(
        "I", (ir.If(ge(j, m), (ir.Break(),), ()), b_assign(j, add(j, num(1))), b_assign(c, add(c, num(1))))
    )
    stop = ir.If(ge(i, num(3)), (ir.Break(),), ())
    outer = ir.Loop("O", (stop, b_assign(j, num(0)), inner, b_assign(i, add(i, num(1)))))
    b.emit(outer)
    b.check(ne(c, num(12)))  # 3 * m == 12 needs m == 4 inner iterations per outer one
    assert unsafe(b.build()).inputs == (4,)
    b2 = ProgramBuilder()
    # The same nest with c == 3 * m asserted: complete once m's bound is unrolled.
    for v in ("i", "j", "c", "m"):
        b2.var(v)
    b2.havoc(m)
    b2.assume(and_(ge(m, num(0)), le(m, num(10))))
    b2.assign(i, num(0))
    b2.assign(c, num(0))
    b2.emit(outer)
    b2.check(eq(c, mul(num(3), m)))
    complete(b2.build())


def test_havocs_in_branches_replay_in_execution_order() -> None:
    b = ProgramBuilder()
    i, x, y, s = b.var("i"), b.var("x"), b.var("y"), b.var("s")
    b.assign(i, num(0))
    b.assign(s, num(0))
    body = (
        ir.If(ge(i, num(3)), (ir.Break(),), ()),
        ir.Havoc("x", Coord("h.c", 10, 1)),
        ir.If(
            gt(x, num(0)),
            (ir.Havoc("y", Coord("h.c", 12, 1)), b_assign(s, add(s, y))),
            (b_assign(s, ir.Binary("-", s, num(1), ir.INT)),),
        ),
        b_assign(i, add(i, num(1))),
    )
    b.emit(ir.Loop("L", body))
    b.assume(and_(ge(s, num(-100)), le(s, num(100))))
    b.check(ne(s, num(77)))
    result = unsafe(b.build())
    assert result.inputs is not None
    lines = [coord.line for coord, _, _ in result.stats["trace"]]  # type: ignore[union-attr]
    assert lines[0] == 10 and all(a != 12 or b == 10 for a, b in itertools.pairwise(lines))


def test_uninitialised_locals_are_inputs() -> None:
    b = ProgramBuilder()
    x = b.var("x")
    b.havoc(x, origin="uninitialised")
    b.check(ne(x, num(123)))
    result = unsafe(b.build())
    assert result.inputs == (123,)
    assert result.stats["trace"] == [(Coord("builder.c", 1, 1), "uninitialised", 123)]


# ----------------------------------------------------------------------------- arrays


def test_array_writes_and_reads() -> None:
    arr = ir.ArrayType(ir.INT, 5)
    b = ProgramBuilder()
    a, i, k = b.var("a", arr), b.var("i"), b.var("k")
    b.assign(i, num(0))
    with b.loop():
        b.if_break(ge(i, num(5)))
        b.assign(a, ir.Store(a, i, mul(i, i), arr))
        b.assign(i, add(i, num(1)))
    b.havoc(k)
    b.check(ne(ir.Select(a, k, ir.INT), num(9)))  # k == 3; out-of-bounds k is undefined, not a bug
    assert unsafe(b.build()).inputs == (3,)


def test_out_of_bounds_read_is_not_a_bug() -> None:
    arr = ir.ArrayType(ir.INT, 4)
    b = ProgramBuilder()
    a, k = b.var("a", arr), b.var("k")
    b.havoc(k)
    b.check(eq(ir.Select(a, k, ir.INT), num(0)))  # all elements are 0 (zero-initialised)
    complete(b.build())


def test_nondet_array_elements_replay() -> None:
    arr = ir.ArrayType(ir.INT, 10)
    b = ProgramBuilder()
    a, k = b.var("a", arr), b.var("k")
    b.havoc(a, origin="uninitialised")
    b.havoc(k)
    b.assume(and_(ge(k, num(0)), lt(k, num(10))))
    b.check(ne(ir.Select(a, k, ir.INT), num(42)))
    result = unsafe(b.build())
    assert result.inputs is not None and 42 in result.inputs


# ----------------------------------------------------------------------------- goto


def goto_counter(limit: ir.Expr | None) -> ir.Program:
    """x = 0; n = nondet(); [assume(0 <= n <= limit);]
    top: if (x >= n) goto done; x++; assert(x != 4); goto top; done: ;"""
    b = ProgramBuilder("goto.c")
    x, n = b.var("x"), b.var("n")
    b.assign(x, num(0))
    b.havoc(n)
    if limit is not None:
        b.assume(and_(ge(n, num(0)), le(n, limit)))
    b.emit(ir.Label("top", Coord("goto.c", 3), "L1"))
    b.emit(ir.If(ge(x, n), (ir.Goto("done"),), ()))
    b.assign(x, add(x, num(1)))
    b.check(ne(x, num(4)))
    b.emit(ir.Goto("top"))
    b.emit(ir.Label("done"))
    program = b.build()
    return replace(program, loops=(*program.loops, ir.LoopInfo("L1", Coord("goto.c", 3), 3, ())))


def test_goto_loop_bug_after_a_few_iterations() -> None:
    result = unsafe(goto_counter(None))
    assert result.inputs is not None and result.inputs[0] >= 4
    assert int(result.stats["bound"]) >= 4  # type: ignore[call-overload]
    shallow = _bmc(goto_counter(None), max_bound=3)
    assert shallow.status is Status.UNKNOWN and shallow.stats["complete"] is False


def test_goto_loop_without_bug_is_complete() -> None:
    assert complete(goto_counter(num(3))).stats["bound"] == 4


def goto_outer_head(check: ir.Expr) -> ir.Program:
    """k = total = 0; outer: if (k >= 3) goto done; k++; i = 0; n = nondet(); assume(0 <= n <= 5);
    while (1) { if (i >= n) goto outer; i++; total++; }  done: assert(check);

    The inner loop is left straight to the outer loop's head (a back edge of the goto loop)."""
    b = ProgramBuilder("outer.c")
    k, i, n, total = b.var("k"), b.var("i"), b.var("n"), b.var("total")
    b.assign(k, num(0))
    b.assign(total, num(0))
    b.emit(ir.Label("outer", Coord("outer.c", 3), "O"))
    b.emit(ir.If(ge(k, num(3)), (ir.Goto("done"),), ()))
    b.assign(k, add(k, num(1)))
    b.assign(i, num(0))
    b.havoc(n)
    b.assume(and_(ge(n, num(0)), le(n, num(5))))
    leave = ir.If(ge(i, n), (ir.Goto("outer"),), ())
    b.emit(ir.Loop("I", (leave, b_assign(i, add(i, num(1))), b_assign(total, add(total, num(1))))))
    b.emit(ir.Label("done"))
    b.check(check)
    program = b.build()
    return replace(program, loops=(*program.loops, ir.LoopInfo("O", Coord("outer.c", 3), 3, ())))


def test_goto_from_an_inner_loop_to_the_outer_head() -> None:
    total = ir.Var("total", ir.INT)
    result = unsafe(goto_outer_head(ne(total, num(14))))
    assert result.inputs is not None and len(result.inputs) == 3 and sum(result.inputs) == 14
    program = with_loops(goto_outer_head(le(total, num(15))))
    cfg = build_cfg(program)
    assert any(cfg.loop_of(src) == "I" for src, dst in cfg.back_edges if dst == cfg.head("O"))
    complete(program)


# ----------------------------------------------------------------------------- budget and size


def test_expired_budget_is_unknown() -> None:
    result = bmc.check(counter_program(50), Budget(0.0))
    assert result.status is Status.UNKNOWN
    assert "timeout" in result.reason


def test_formula_cap_is_unknown() -> None:
    result = _bmc(counter_program(50), max_assertions=100)
    assert result.status is Status.UNKNOWN
    assert "formula too large" in result.reason


def test_never_safe_and_deterministic() -> None:
    program = counter_program(5)
    first, second = _bmc(program), _bmc(program)
    assert first.status is second.status is Status.UNSAFE
    assert first.inputs == second.inputs


def test_negation_and_unary_minus() -> None:
    b = ProgramBuilder()
    x, y = b.var("x"), b.var("y")
    b.havoc(x)
    b.assume(gt(x, num(ir.INT.min)))
    b.assign(y, ir.Unary("-", x, ir.INT))
    b.check(eq(add(x, y), num(0)))
    complete(b.build())
    b.check(ne(y, num(-5)))
    assert unsafe(b.build()).inputs == (5,)


def test_slow_queries_switch_to_probing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bmc, "_SLOW_S", 0.0)
    monkeypatch.setattr(bmc, "_SLOW_SHARE", 0.0)
    b = ProgramBuilder()
    x, m = b.var("x"), b.var("m")
    b.havoc(m)
    b.assume(ge(m, num(20)))
    b.assign(x, num(0))
    with b.loop():
        b.assign(x, add(x, num(1)))
        b.check(ne(x, m))  # symbolic from the first iteration on: every bound is queried
    result = unsafe(b.build())
    assert result.stats["probing"] is True
    assert result.stats["bound"] == 32  # 1, then doubling: 2, 4, ..., 32
    assert result.inputs is not None and 20 <= result.inputs[0] <= 32
    b = ProgramBuilder()
    x, m = b.var("x"), b.var("m")
    b.havoc(m)
    b.assume(gt(m, num(10)))
    b.assign(x, num(0))
    with b.loop():
        b.if_break(ge(x, num(10)))
        b.assign(x, add(x, num(1)))
        b.check(ne(x, m))
    result = complete(b.build())
    assert result.stats["probing"] is True
    assert result.stats["bound"] == 16


def test_next_bound_schedule() -> None:
    assert [bmc.next_bound(k) for k in (1, 15, 16, 20)] == [2, 16, 20, 25]


def b_assign(target: object, value: object) -> object:
    assert isinstance(target, ir.Var)
    return ir.Assign(target.name, value)  # type: ignore[arg-type]
