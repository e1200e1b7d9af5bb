"""The concrete interpreter: C semantics where a naive evaluation differs, control flow, bookkeeping."""

from __future__ import annotations

import random

import pytest
from corpus import nested_counters
from quokka.verifier import ir
from quokka.verifier.errors import Coord
from quokka.verifier.exec.interp import compile_program, run
from quokka.verifier.ir import semantics
from quokka.verifier.ir.builder import (
    ProgramBuilder,
    add,
    and_,
    cast,
    eq,
    ge,
    gt,
    lt,
    mul,
    ne,
    num,
    or_,
    sub,
)

T = ir.int_types("LP64")
LL, UC, BOOL, ULL = T["long long"], T["unsigned char"], T["_Bool"], T["unsigned long long"]


def value_of(expr, ty=ir.INT, inputs=(), declare=()):
    """Evaluate `expr` by assigning it to a fresh variable; returns (value, execution)."""
    b = ProgramBuilder("v.c")
    for name, t in declare:
        b.var(name, t)
        b.havoc(ir.Var(name, t))
    r = b.var("r", ty)
    b.assign(r, expr)
    with b.loop("END"):
        b.emit(ir.Break())
    ex = run(b.build(), list(inputs))
    assert ex.outcome == "exit", ex.message
    return ex.loop_heads[-1].values["r"], ex


def test_division_truncates_toward_zero():
    assert value_of(ir.Binary("/", num(-7), num(2), ir.INT))[0] == -3
    assert value_of(ir.Binary("%", num(-7), num(2), ir.INT))[0] == -1
    assert value_of(ir.Binary("%", num(7), num(-2), ir.INT))[0] == 1


def test_conversions_wrap():
    assert value_of(cast(num(300), UC), UC)[0] == 44
    assert value_of(cast(num(-1), UC), UC)[0] == 255
    assert value_of(cast(num(5), BOOL), BOOL)[0] == 1
    assert value_of(cast(num(-256), BOOL), BOOL)[0] == 1
    assert value_of(cast(ir.Const(4294967295, ir.UINT), ir.INT))[0] == -1


def test_unsigned_arithmetic_wraps():
    assert value_of(sub(ir.Const(0, ir.UINT), ir.Const(1, ir.UINT)), ir.UINT)[0] == 4294967295
    assert value_of(mul(ir.Const(65536, ir.UINT), ir.Const(65537, ir.UINT)), ir.UINT)[0] == 65536
    assert value_of(ir.Unary("-", ir.Const(1, ir.UINT), ir.UINT), ir.UINT)[0] == 4294967295
    big = ir.Const(1 << 63, ULL)
    assert value_of(add(big, big), ULL)[0] == 0


def test_signed_overflow_is_recorded_and_mathematical():
    value, ex = value_of(add(num(2147483647), num(1)))
    assert value == 2147483648
    assert ex.overflows == (Coord("v.c", 1, 1),)
    value, ex = value_of(ir.Binary("/", num(-(1 << 31)), num(-1), ir.INT))
    assert value == 1 << 31 and len(ex.overflows) == 1
    assert value_of(ir.Binary("%", num(-(1 << 31)), num(-1), ir.INT))[1].overflows
    assert value_of(ir.Unary("-", num(-(1 << 31)), ir.INT))[1].overflows
    assert value_of(add(num(2147483646), num(1)))[1].overflows == ()


def test_logic_is_lazy_and_yields_0_1():
    x = ir.Var("x", ir.INT)
    guarded = and_(ne(x, num(0)), gt(ir.Binary("/", num(10), x, ir.INT), num(1)))
    assert value_of(guarded, declare=[("x", ir.INT)], inputs=[0])[0] == 0
    assert value_of(guarded, declare=[("x", ir.INT)], inputs=[3])[0] == 1
    either = or_(eq(x, num(0)), gt(ir.Binary("%", num(10), x, ir.INT), num(5)))
    assert value_of(either, declare=[("x", ir.INT)], inputs=[0])[0] == 1
    ite = ir.Ite(eq(x, num(0)), num(-1), ir.Binary("/", num(10), x, ir.INT), ir.INT)
    assert value_of(ite, declare=[("x", ir.INT)], inputs=[0])[0] == -1
    assert value_of(and_(num(5), num(7)))[0] == 1
    assert value_of(ir.Unary("!", num(5), ir.INT))[0] == 0
    assert value_of(lt(num(-1), num(0)))[0] == 1


def test_havoc_wraps_inputs_and_pads_with_zero():
    b = ProgramBuilder("h.c")
    c, u, i = b.var("c", UC), b.var("u", ir.UINT), b.var("i")
    b.havoc(c)
    b.havoc(u)
    b.havoc(i)
    ex = run(b.build(), [300, -1])
    assert ex.inputs_used == (44, 4294967295, 0)
    assert [h.target for h in ex.havocs] == ["c", "u", "i"]


def test_callable_inputs_see_the_declaration_and_statement():
    b = ProgramBuilder("h.c")
    c = b.var("c", UC)
    b.havoc(c, origin="__VERIFIER_nondet_uchar")
    seen = []

    def source(decl: ir.VarDecl, stmt: ir.Havoc) -> int:
        seen.append((decl.name, decl.type, stmt.origin))
        return 257

    ex = run(b.build(), source)
    assert seen == [("c", UC, "__VERIFIER_nondet_uchar")]
    assert ex.inputs_used == (1,)


def test_undefined_behaviour_stops_the_run():
    for bad in (
        ir.Binary("/", num(1), num(0), ir.INT),
        ir.Binary("%", num(1), num(0), ir.INT),
        ir.Binary("<<", num(1), num(32), ir.INT),
        ir.Binary(">>", num(1), num(-1), ir.INT),
        ir.Select(ir.Var("a", ir.ArrayType(ir.INT, 3)), num(3), ir.INT),
        ir.Select(ir.Var("a", ir.ArrayType(ir.INT, None)), num(-1), ir.INT),
    ):
        b = ProgramBuilder("u.c")
        b.var("a", bad.array.type if isinstance(bad, ir.Select) else ir.ArrayType(ir.INT, 3))
        b.assign(b.var("r"), bad)
        b.check(num(0))
        ex = run(b.build(), [])
        assert ex.outcome == "ub", bad
        assert ex.message.startswith("undefined behaviour at u.c:1:1")


def test_assert_assume_limit_outcomes():
    b = ProgramBuilder("o.c")
    x = b.var("x")
    b.havoc(x)
    b.assume(ge(x, num(0)))
    b.check(lt(x, num(10)))
    p = b.build()
    assert run(p, [-1]).outcome == "blocked"
    ok = run(p, [3])
    assert ok.outcome == "exit" and ok.error is None and ok.message == "main returned"
    bad = run(p, [10])
    assert bad.outcome == "error"
    assert isinstance(bad.error, ir.Assert) and bad.error.coord == Coord("o.c", 3, 1)
    assert bad.message == "assertion failed at o.c:3:1"
    assert bad.path == (Coord("o.c", 0, 0), Coord("o.c", 1, 1), Coord("o.c", 2, 1), Coord("o.c", 3, 1))

    forever = ProgramBuilder("f.c")
    y = forever.var("y")
    with forever.loop():
        forever.assign(y, add(y, num(1)))
    ex = run(forever.build(), [], max_steps=1000)
    assert ex.outcome == "limit" and ex.steps == 1000
    assert len(ex.loop_heads) > 400


def test_loop_heads_count_iterations_per_entry():
    program = nested_counters(2, 3, "n.c")
    ex = run(program, [])
    heads = [(h.loop_id, h.iteration, h.values["i"], h.values["j"]) for h in ex.loop_heads]
    assert heads == [
        ("outer", 0, 0, 0),
        ("inner", 0, 0, 0), ("inner", 1, 0, 1), ("inner", 2, 0, 2), ("inner", 3, 0, 3),
        ("outer", 1, 1, 3),
        ("inner", 0, 1, 0), ("inner", 1, 1, 1), ("inner", 2, 1, 2), ("inner", 3, 1, 3),
        ("outer", 2, 2, 3),
    ]  # fmt: skip
    capped = compile_program(program).run([], max_loop_head_states=4)
    assert len(capped.loop_heads) == 4 and capped.outcome == "exit"


def test_goto_loop_heads_record_entries_and_iterations():
    # main: for (j = 0; j < 2; j++) { i = 0; goto top; i = 9; top: i++; if (i < 3) goto top; }
    c = [Coord("g.c", line, 1) for line in range(9)]
    i, j = ir.Var("i", ir.INT), ir.Var("j", ir.INT)
    inner = (
        ir.Assign("i", num(0), c[2]),
        ir.Goto("top", c[3]),  # a forward goto into the head: an entry
        ir.Assign("i", num(9), c[8]),
        ir.Label("top", c[4], loop="G"),
        ir.Assign("i", add(i, num(1)), c[5]),
        ir.If(lt(i, num(3)), (ir.Goto("top", c[6]),), (), c[6]),  # the back edge: an iteration
    )
    exit_ = ir.If(ge(j, num(2)), (ir.Break(c[1]),), (), c[1])
    outer = ir.Loop("F", (exit_, *inner), (ir.Assign("j", add(j, num(1)), c[1]),), c[1])
    main = ir.Scope("main", (outer, ir.Assert(eq(i, num(3)), c[7])), c[0])
    decls = (ir.VarDecl("i", ir.INT, "local", "i"), ir.VarDecl("j", ir.INT, "local", "j"))
    loops = (ir.LoopInfo("F", c[1], 1, ()), ir.LoopInfo("G", c[4], 4, (), parent="F"))
    ex = run(ir.Program("g.c", "LP64", decls, (main,), loops), [])
    assert ex.outcome == "exit", ex.message
    heads = [(h.loop_id, h.iteration, h.values["i"], h.values["j"]) for h in ex.loop_heads]
    assert heads == [
        ("F", 0, 0, 0),
        ("G", 0, 0, 0), ("G", 1, 1, 0), ("G", 2, 2, 0),
        ("F", 1, 3, 1),
        ("G", 0, 0, 1), ("G", 1, 1, 1), ("G", 2, 2, 1),
        ("F", 2, 3, 2),
    ]  # fmt: skip
    lines = [coord.line for coord in ex.path]
    assert lines[:8] == [0, 1, 2, 3, 4, 5, 6, 4] and 8 not in lines  # the dead `i = 9` never runs


def test_continue_runs_the_step_and_return_leaves_the_function():
    c = Coord("s.c", 1, 1)
    i, s = ir.Var("i", ir.INT), ir.Var("s", ir.INT)
    body = (
        ir.If(ge(i, num(5)), (ir.Break(c),), (), c),
        ir.If(eq(ir.Binary("%", i, num(2), ir.INT), num(0)), (ir.Continue(c),), (), c),
        ir.Assign("s", add(s, i), c),
    )
    loop = ir.Loop("L", body, (ir.Assign("i", add(i, num(1)), c),), Coord("s.c", 2, 1))
    callee = ir.Scope("f", (ir.If(ge(s, num(4)), (ir.Return(c),), (), c), ir.Assign("s", num(-100), c)), c)
    after = (callee, ir.Assign("i", num(42), c), ir.Return(c), ir.Assign("i", num(7), c))
    end = ir.Loop("E", (ir.Break(c),), (), Coord("s.c", 3, 1))
    main = ir.Scope("main", (loop, *after[:2], end, *after[2:]), c)
    decls = (ir.VarDecl("i", ir.INT, "local", "i"), ir.VarDecl("s", ir.INT, "local", "s"))
    infos = (ir.LoopInfo("L", loop.coord, 1, ()), ir.LoopInfo("E", end.coord, 2, ()))
    ex = run(ir.Program("s.c", "LP64", decls, (main,), infos), [])
    assert ex.outcome == "exit"
    assert dict(ex.loop_heads[-1].values) == {"i": 42, "s": 1 + 3}


def test_arrays_store_select_copy_and_havoc():
    at = ir.ArrayType(ir.INT, 4)
    b = ProgramBuilder("a.c")
    a, c, k, r0, r1 = b.var("a", at), b.var("c", at), b.var("k"), b.var("r0"), b.var("r1")
    b.assign(a, ir.Store(a, num(1), num(5), at))
    b.assign(c, a)
    b.assign(a, ir.Store(a, num(1), num(6), at))
    b.assign(r0, ir.Select(c, num(1), ir.INT))
    b.assign(r1, ir.Select(ir.Store(a, num(2), num(9), at), num(2), ir.INT))
    b.assign(k, add(ir.Select(a, num(1), ir.INT), ir.Select(a, num(2), ir.INT)))
    b.havoc(c)
    b.assign(r0, add(ir.Select(c, num(3), ir.INT), ir.Select(c, num(3), ir.INT)))
    b.assign(r1, ir.Select(c, num(0), ir.INT))
    with b.loop("END"):
        b.emit(ir.Break())
    ex = run(b.build(), [11, 12])
    assert dict(ex.loop_heads[-1].values) == {"k": 6, "r0": 22, "r1": 12}
    assert ex.inputs_used == (11, 12)


def test_compiled_arithmetic_matches_semantics():
    """The interpreter's fast paths agree with `semantics` on random operands of every type."""
    rng = random.Random(7)
    types = [T[n] for n in ("int", "unsigned int", "long long", "unsigned long long", "_Bool", "short")]
    for ty in types:
        for op in ("+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>"):
            for _ in range(40):
                a = rng.randint(ty.min, ty.max)
                bb = rng.choice([rng.randint(ty.min, ty.max), *(k for k in (1, 2, 3) if k <= ty.max)])
                try:
                    want = semantics.arith(op, a, bb, ty)
                except semantics.UndefinedBehaviour:
                    continue
                got, _ = value_of(
                    ir.Binary(op, ir.Var("p", ty), ir.Var("q", ty), ty), ty, [a, bb], [("p", ty), ("q", ty)]
                )
                assert got == want, (op, a, bb, ty)
                got, _ = value_of(ir.Binary(op, ir.Var("p", ty), ir.Const(bb, ty), ty), ty, [a], [("p", ty)])
                assert got == want, (op, a, bb, ty)
        for op in ("-", "~"):
            a = rng.randint(ty.min, ty.max)
            assert value_of(ir.Unary(op, ir.Const(a, ty), ty), ty)[0] == semantics.unary(op, a, ty)


def test_path_merges_consecutive_duplicates():
    c = Coord("d.c", 4, 2)
    x = ir.Var("x", ir.INT)
    body = (ir.Assign("x", num(1), c), ir.Assign("x", add(x, num(1)), c), ir.Assert(eq(x, num(2)), c))
    main = ir.Scope("main", body)
    ex = run(ir.Program("d.c", "LP64", (ir.VarDecl("x", ir.INT, "local", "x"),), (main,), ()), [])
    assert ex.path == (c,) and ex.steps == 3


@pytest.mark.parametrize("depth", [1000])
def test_deeply_nested_statements(depth):
    x = ir.Var("x", ir.INT)
    c = Coord("deep.c", 1, 1)
    stmt = ir.Assign("x", add(x, num(1)), c)
    for k in range(depth):
        stmt = ir.If(ge(x, num(0)), (stmt,), (), c) if k % 2 else ir.Loop(f"L{k}", (stmt, ir.Break(c)), (), c)
    loops = tuple(ir.LoopInfo(f"L{k}", c, 0, ()) for k in range(0, depth, 2))
    check = ir.Assert(eq(x, num(1)), Coord("deep.c", 2, 1))
    decls = (ir.VarDecl("x", ir.INT, "local", "x"),)
    p = ir.Program("deep.c", "LP64", decls, (ir.Scope("main", (stmt, check)),), loops)
    ex = run(p, [])
    assert ex.outcome == "exit", ex.message
    assert len(ex.loop_heads) == depth // 2 and ex.loop_heads[-1].values["x"] == 0


def test_store_chains_thousands_deep():
    at = ir.ArrayType(ir.INT, 4096)
    b = ProgramBuilder("s.c")
    a, i, r = b.var("a", at), b.var("i"), b.var("r")
    chain = a
    for k in range(4096):
        chain = ir.Store(chain, num(k), num(3 * k), at)
    b.assign(a, chain)  # in place
    b.havoc(i)
    b.assign(r, ir.Select(ir.Store(chain, i, num(-1), at), i, ir.INT))  # a fresh copy
    b.check(ne(ir.Select(a, i, ir.INT), num(30)))
    p = b.build()
    ex = run(p, [10])
    assert ex.outcome == "error"
    assert run(p, [11]).outcome == "exit"
    assert run(p, [4096]).outcome == "ub"


def test_chained_stores_read_the_old_array():
    at = ir.ArrayType(ir.INT, 2)
    b = ProgramBuilder("o.c")
    a, r = b.var("a", at), b.var("r")
    b.assign(a, ir.Store(a, num(0), num(5), at))
    # a = store(store(a, 1, a[0] + 1), 0, a[1]): both values read the array before the update.
    inner = ir.Store(a, num(1), add(ir.Select(a, num(0), ir.INT), num(1)), at)
    b.assign(a, ir.Store(inner, num(0), ir.Select(a, num(1), ir.INT), at))
    b.assign(r, add(mul(ir.Select(a, num(0), ir.INT), num(10)), ir.Select(a, num(1), ir.INT)))
    b.check(ne(r, num(6)))
    assert run(b.build(), []).outcome == "error"


def test_overflow_without_a_coordinate_is_still_reported():
    main = ir.Scope("main", (ir.Assign("x", add(ir.Const(2147483647, ir.INT), num(1))),))
    ex = run(ir.Program("nc.c", "LP64", (ir.VarDecl("x", ir.INT, "local", "x"),), (main,), ()), [])
    assert ex.overflows == (Coord("nc.c", 0, 0),)


@pytest.mark.parametrize(("depth", "outcome"), [(600, "error"), (5000, "limit")])
def test_deep_expressions(depth, outcome):
    b = ProgramBuilder("d.c")
    x = b.var("x")
    b.havoc(x)
    e = x
    for _ in range(depth):
        e = add(e, x)
    b.check(ne(e, num(depth + 1)))  # compiles at any depth
    ex = run(b.build(), [1])
    assert ex.outcome == outcome
    if outcome == "limit":
        assert "nested too deeply" in ex.message


def test_reads_of_uninitialised_scalars_are_found_and_overwrites_clear_them():
    b = ProgramBuilder("u.c")
    n, x, y = b.var("n"), b.var("x"), b.var("y")
    b.havoc(n, origin="uninitialised")
    b.havoc(y, origin="uninitialised")
    b.assign(y, num(1))  # overwritten before it is read: defined
    b.assign(x, add(n, y))  # reads n: undefined
    b.assign(n, num(0))
    b.check(eq(x, n))
    ex = run(b.build(), [5, 7], check_uninitialised=True)
    assert [r.variable for r in ex.uninitialised_reads] == ["n"]
    assert run(b.build(), [5, 7]).uninitialised_reads == ()  # only on request


def test_nondet_values_and_conditions_are_reads_too():
    b = ProgramBuilder("u.c")
    n, m = b.var("n"), b.var("m")
    b.havoc(m, origin="__VERIFIER_nondet_int")
    b.havoc(n, origin="uninitialised")
    b.if_(gt(m, num(0)), (ir.Assert(lt(n, num(0))),))
    assert run(b.build(), [0, 0], check_uninitialised=True).uninitialised_reads == ()
    (read,) = run(b.build(), [1, 0], check_uninitialised=True).uninitialised_reads
    assert read.variable == "n"
