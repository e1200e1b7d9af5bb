"""The concrete interpreter: C semantics where a naive evaluation differs, control flow, bookkeeping."""

from __future__ import annotations

import random

import pytest
from quokka.verifier import semantics
from quokka.verifier.builder import ProgramBuilder, add, and_, cast, eq, ge, gt, lt, mul, ne, num, or_, sub
from quokka.verifier.errors import Coord
from quokka.verifier.interp import compile_program, run
from quokka.verifier.ir import (
    INT,
    UINT,
    ArrayType,
    Assert,
    Assign,
    Binary,
    Break,
    Const,
    Continue,
    Goto,
    Havoc,
    If,
    Ite,
    Label,
    Loop,
    LoopInfo,
    Program,
    Return,
    Scope,
    Select,
    Store,
    Unary,
    Var,
    VarDecl,
    int_types,
)

T = int_types("LP64")
LL, UC, BOOL, ULL = T["long long"], T["unsigned char"], T["_Bool"], T["unsigned long long"]


def value_of(expr, ty=INT, inputs=(), declare=()):
    """Evaluate `expr` by assigning it to a fresh variable; returns (value, execution)."""
    b = ProgramBuilder("v.c")
    for name, t in declare:
        b.var(name, t)
        b.havoc(Var(name, t))
    r = b.var("r", ty)
    b.assign(r, expr)
    with b.loop("END"):
        b.emit(Break())
    ex = run(b.build(), list(inputs))
    assert ex.outcome == "exit", ex.message
    return ex.loop_heads[-1].values["r"], ex


def test_division_truncates_toward_zero():
    assert value_of(Binary("/", num(-7), num(2), INT))[0] == -3
    assert value_of(Binary("%", num(-7), num(2), INT))[0] == -1
    assert value_of(Binary("%", num(7), num(-2), INT))[0] == 1


def test_conversions_wrap():
    assert value_of(cast(num(300), UC), UC)[0] == 44
    assert value_of(cast(num(-1), UC), UC)[0] == 255
    assert value_of(cast(num(5), BOOL), BOOL)[0] == 1
    assert value_of(cast(num(-256), BOOL), BOOL)[0] == 1
    assert value_of(cast(Const(4294967295, UINT), INT))[0] == -1


def test_unsigned_arithmetic_wraps():
    assert value_of(sub(Const(0, UINT), Const(1, UINT)), UINT)[0] == 4294967295
    assert value_of(mul(Const(65536, UINT), Const(65537, UINT)), UINT)[0] == 65536
    assert value_of(Unary("-", Const(1, UINT), UINT), UINT)[0] == 4294967295
    big = Const(1 << 63, ULL)
    assert value_of(add(big, big), ULL)[0] == 0


def test_signed_overflow_is_recorded_and_mathematical():
    value, ex = value_of(add(num(2147483647), num(1)))
    assert value == 2147483648
    assert ex.overflows == (Coord("v.c", 1, 1),)
    value, ex = value_of(Binary("/", num(-(1 << 31)), num(-1), INT))
    assert value == 1 << 31 and len(ex.overflows) == 1
    assert value_of(Binary("%", num(-(1 << 31)), num(-1), INT))[1].overflows
    assert value_of(Unary("-", num(-(1 << 31)), INT))[1].overflows
    assert value_of(add(num(2147483646), num(1)))[1].overflows == ()


def test_logic_is_lazy_and_yields_0_1():
    x = Var("x", INT)
    guarded = and_(ne(x, num(0)), gt(Binary("/", num(10), x, INT), num(1)))
    assert value_of(guarded, declare=[("x", INT)], inputs=[0])[0] == 0
    assert value_of(guarded, declare=[("x", INT)], inputs=[3])[0] == 1
    either = or_(eq(x, num(0)), gt(Binary("%", num(10), x, INT), num(5)))
    assert value_of(either, declare=[("x", INT)], inputs=[0])[0] == 1
    ite = Ite(eq(x, num(0)), num(-1), Binary("/", num(10), x, INT), INT)
    assert value_of(ite, declare=[("x", INT)], inputs=[0])[0] == -1
    assert value_of(and_(num(5), num(7)))[0] == 1
    assert value_of(Unary("!", num(5), INT))[0] == 0
    assert value_of(lt(num(-1), num(0)))[0] == 1


def test_havoc_wraps_inputs_and_pads_with_zero():
    b = ProgramBuilder("h.c")
    c, u, i = b.var("c", UC), b.var("u", UINT), b.var("i")
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

    def source(decl: VarDecl, stmt: Havoc) -> int:
        seen.append((decl.name, decl.type, stmt.origin))
        return 257

    ex = run(b.build(), source)
    assert seen == [("c", UC, "__VERIFIER_nondet_uchar")]
    assert ex.inputs_used == (1,)


def test_undefined_behaviour_stops_the_run():
    for bad in (
        Binary("/", num(1), num(0), INT),
        Binary("%", num(1), num(0), INT),
        Binary("<<", num(1), num(32), INT),
        Binary(">>", num(1), num(-1), INT),
        Select(Var("a", ArrayType(INT, 3)), num(3), INT),
        Select(Var("a", ArrayType(INT, None)), num(-1), INT),
    ):
        b = ProgramBuilder("u.c")
        b.var("a", bad.array.type if isinstance(bad, Select) else ArrayType(INT, 3))
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
    assert isinstance(bad.error, Assert) and bad.error.coord == Coord("o.c", 3, 1)
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
    b = ProgramBuilder("n.c")
    i, j = b.var("i"), b.var("j")
    with b.loop("outer"):
        b.if_break(ge(i, num(2)))
        b.assign(j, num(0))
        with b.loop("inner"):
            b.if_break(ge(j, num(3)))
            b.assign(j, add(j, num(1)))
        b.assign(i, add(i, num(1)))
    ex = run(b.build(), [])
    heads = [(h.loop_id, h.iteration, h.values["i"], h.values["j"]) for h in ex.loop_heads]
    assert heads == [
        ("outer", 0, 0, 0),
        ("inner", 0, 0, 0), ("inner", 1, 0, 1), ("inner", 2, 0, 2), ("inner", 3, 0, 3),
        ("outer", 1, 1, 3),
        ("inner", 0, 1, 0), ("inner", 1, 1, 1), ("inner", 2, 1, 2), ("inner", 3, 1, 3),
        ("outer", 2, 2, 3),
    ]  # fmt: skip
    capped = compile_program(b.build()).run([], max_loop_head_states=4)
    assert len(capped.loop_heads) == 4 and capped.outcome == "exit"


def test_goto_loop_heads_record_entries_and_iterations():
    # main: for (j = 0; j < 2; j++) { i = 0; goto top; i = 9; top: i++; if (i < 3) goto top; }
    c = [Coord("g.c", line, 1) for line in range(9)]
    i, j = Var("i", INT), Var("j", INT)
    inner = (
        Assign("i", num(0), c[2]),
        Goto("top", c[3]),  # a forward goto into the head: an entry
        Assign("i", num(9), c[8]),
        Label("top", c[4], loop="G"),
        Assign("i", add(i, num(1)), c[5]),
        If(lt(i, num(3)), (Goto("top", c[6]),), (), c[6]),  # the back edge: an iteration
    )
    exit_ = If(ge(j, num(2)), (Break(c[1]),), (), c[1])
    outer = Loop("F", (exit_, *inner), (Assign("j", add(j, num(1)), c[1]),), c[1])
    main = Scope("main", (outer, Assert(eq(i, num(3)), c[7])), c[0])
    decls = (VarDecl("i", INT, "local", "i"), VarDecl("j", INT, "local", "j"))
    loops = (LoopInfo("F", c[1], 1, ()), LoopInfo("G", c[4], 4, (), parent="F"))
    ex = run(Program("g.c", "LP64", decls, (main,), loops), [])
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
    i, s = Var("i", INT), Var("s", INT)
    body = (
        If(ge(i, num(5)), (Break(c),), (), c),
        If(eq(Binary("%", i, num(2), INT), num(0)), (Continue(c),), (), c),
        Assign("s", add(s, i), c),
    )
    loop = Loop("L", body, (Assign("i", add(i, num(1)), c),), Coord("s.c", 2, 1))
    callee = Scope("f", (If(ge(s, num(4)), (Return(c),), (), c), Assign("s", num(-100), c)), c)
    after = (callee, Assign("i", num(42), c), Return(c), Assign("i", num(7), c))
    end = Loop("E", (Break(c),), (), Coord("s.c", 3, 1))
    main = Scope("main", (loop, *after[:2], end, *after[2:]), c)
    decls = (VarDecl("i", INT, "local", "i"), VarDecl("s", INT, "local", "s"))
    infos = (LoopInfo("L", loop.coord, 1, ()), LoopInfo("E", end.coord, 2, ()))
    ex = run(Program("s.c", "LP64", decls, (main,), infos), [])
    assert ex.outcome == "exit"
    assert dict(ex.loop_heads[-1].values) == {"i": 42, "s": 1 + 3}


def test_arrays_store_select_copy_and_havoc():
    at = ArrayType(INT, 4)
    b = ProgramBuilder("a.c")
    a, c, k, r0, r1 = b.var("a", at), b.var("c", at), b.var("k"), b.var("r0"), b.var("r1")
    b.assign(a, Store(a, num(1), num(5), at))
    b.assign(c, a)
    b.assign(a, Store(a, num(1), num(6), at))
    b.assign(r0, Select(c, num(1), INT))
    b.assign(r1, Select(Store(a, num(2), num(9), at), num(2), INT))
    b.assign(k, add(Select(a, num(1), INT), Select(a, num(2), INT)))
    b.havoc(c)
    b.assign(r0, add(Select(c, num(3), INT), Select(c, num(3), INT)))
    b.assign(r1, Select(c, num(0), INT))
    with b.loop("END"):
        b.emit(Break())
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
                    Binary(op, Var("p", ty), Var("q", ty), ty), ty, [a, bb], [("p", ty), ("q", ty)]
                )
                assert got == want, (op, a, bb, ty)
                got, _ = value_of(Binary(op, Var("p", ty), Const(bb, ty), ty), ty, [a], [("p", ty)])
                assert got == want, (op, a, bb, ty)
        for op in ("-", "~"):
            a = rng.randint(ty.min, ty.max)
            assert value_of(Unary(op, Const(a, ty), ty), ty)[0] == semantics.unary(op, a, ty)


def test_path_merges_consecutive_duplicates():
    c = Coord("d.c", 4, 2)
    x = Var("x", INT)
    main = Scope("main", (Assign("x", num(1), c), Assign("x", add(x, num(1)), c), Assert(eq(x, num(2)), c)))
    ex = run(Program("d.c", "LP64", (VarDecl("x", INT, "local", "x"),), (main,), ()), [])
    assert ex.path == (c,) and ex.steps == 3


@pytest.mark.parametrize("depth", [1000])
def test_deeply_nested_statements(depth):
    x = Var("x", INT)
    c = Coord("deep.c", 1, 1)
    stmt = Assign("x", add(x, num(1)), c)
    for k in range(depth):
        stmt = If(ge(x, num(0)), (stmt,), (), c) if k % 2 else Loop(f"L{k}", (stmt, Break(c)), (), c)
    loops = tuple(LoopInfo(f"L{k}", c, 0, ()) for k in range(0, depth, 2))
    check = Assert(eq(x, num(1)), Coord("deep.c", 2, 1))
    p = Program("deep.c", "LP64", (VarDecl("x", INT, "local", "x"),), (Scope("main", (stmt, check)),), loops)
    ex = run(p, [])
    assert ex.outcome == "exit", ex.message
    assert len(ex.loop_heads) == depth // 2 and ex.loop_heads[-1].values["x"] == 0


def test_store_chains_thousands_deep():
    at = ArrayType(INT, 4096)
    b = ProgramBuilder("s.c")
    a, i, r = b.var("a", at), b.var("i"), b.var("r")
    chain = a
    for k in range(4096):
        chain = Store(chain, num(k), num(3 * k), at)
    b.assign(a, chain)  # in place
    b.havoc(i)
    b.assign(r, Select(Store(chain, i, num(-1), at), i, INT))  # a fresh copy
    b.check(ne(Select(a, i, INT), num(30)))
    p = b.build()
    ex = run(p, [10])
    assert ex.outcome == "error"
    assert run(p, [11]).outcome == "exit"
    assert run(p, [4096]).outcome == "ub"


def test_chained_stores_read_the_old_array():
    at = ArrayType(INT, 2)
    b = ProgramBuilder("o.c")
    a, r = b.var("a", at), b.var("r")
    b.assign(a, Store(a, num(0), num(5), at))
    # a = store(store(a, 1, a[0] + 1), 0, a[1]): both values read the array before the update.
    b.assign(
        a,
        Store(Store(a, num(1), add(Select(a, num(0), INT), num(1)), at), num(0), Select(a, num(1), INT), at),
    )
    b.assign(r, add(mul(Select(a, num(0), INT), num(10)), Select(a, num(1), INT)))
    b.check(ne(r, num(6)))
    assert run(b.build(), []).outcome == "error"


def test_overflow_without_a_coordinate_is_still_reported():
    main = Scope("main", (Assign("x", add(Const(2147483647, INT), num(1))),))
    ex = run(Program("nc.c", "LP64", (VarDecl("x", INT, "local", "x"),), (main,), ()), [])
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
    b.if_(gt(m, num(0)), (Assert(lt(n, num(0))),))
    assert run(b.build(), [0, 0], check_uninitialised=True).uninitialised_reads == ()
    (read,) = run(b.build(), [1, 0], check_uninitialised=True).uninitialised_reads
    assert read.variable == "n"
