"""A shared labelled corpus of small IR programs, built without a parser.

Every engine's tests iterate over `CORPUS`: with the given `invariants`, the inductive checker
proves every safe example; no engine may say SAFE on an unsafe one or UNSAFE on a safe one.
`witness` (unsafe examples) is an input sequence whose replay in the interpreter reaches the
error, so the labels themselves are checked. Several examples exist because a naive encoding
gets them wrong (feature "naive-wrong"): non-wrapping unsigned arithmetic, Euclidean instead
of truncating division, `_Bool` without normalisation, `return` treated as `break`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import NamedTuple

from quokka.verifier import ir
from quokka.verifier.errors import QuokkaError
from quokka.verifier.ir.builder import (
    ProgramBuilder,
    add,
    and_,
    binop,
    cast,
    eq,
    ge,
    gt,
    le,
    lt,
    mul,
    ne,
    not_,
    num,
    or_,
    sub,
)

TYPES = ir.int_types("LP64")
UCHAR = TYPES["unsigned char"]
SCHAR = TYPES["signed char"]
ULONG = TYPES["unsigned long"]


@dataclass(frozen=True)
class Example:
    name: str
    program: ir.Program
    expected: str  # "safe" | "unsafe"
    features: frozenset[str]
    invariants: Mapping[str, ir.Expr] | None = None
    c_source: str | None = None
    witness: tuple[int, ...] | None = None  # unsafe: inputs that reach the error


def _variant(
    unsafe: bool,
    name: str,
    program: ir.Program,
    features: Iterable[str],
    invariants: Mapping[str, ir.Expr] | None,
    witness: tuple[int, ...],
    unsafe_name: str | None = None,
) -> Example:
    """The safe example `name`, proved by `invariants`, or (when `unsafe`) the unsafe one, named
    `unsafe_name` (default `name_unsafe`), whose `witness` inputs reach the error."""
    if unsafe:
        name = unsafe_name or f"{name}_unsafe"
        return Example(name, program, "unsafe", frozenset(features), witness=witness)
    return Example(name, program, "safe", frozenset(features), invariants)


def _implies(a: ir.Expr, b: ir.Expr) -> ir.Expr:
    return or_(not_(a), b)


def _div(a: ir.Expr, b: ir.Expr) -> ir.Expr:
    return binop("/", a, b)


def _mod(a: ir.Expr, b: ir.Expr) -> ir.Expr:
    return binop("%", a, b)


def _with_step(program: ir.Program, loop_id: str, step: ir.Block) -> ir.Program:
    """`program` where loop `loop_id` has `step` (what `continue` jumps to)."""

    def stmt(s: ir.Stmt) -> ir.Stmt:
        if isinstance(s, ir.Loop):
            body = tuple(stmt(x) for x in s.body)
            return replace(s, body=body, step=step if s.id == loop_id else s.step)
        if isinstance(s, ir.If):
            return replace(s, then=tuple(stmt(x) for x in s.then), orelse=tuple(stmt(x) for x in s.orelse))
        if isinstance(s, ir.Scope):
            return replace(s, body=tuple(stmt(x) for x in s.body))
        return s

    return replace(program, body=tuple(stmt(s) for s in program.body))


# ----------------------------------------------------------------------------- counters


def counter(unsafe: bool) -> Example:
    b = ProgramBuilder("counter.c")
    x, n = b.var("x"), b.var("n")
    b.havoc(n)
    b.assume(ge(n, num(0)))
    with b.loop() as loop:
        b.if_break(gt(x, n) if unsafe else ge(x, n))
        b.assign(x, add(x, num(1)))
    b.check(eq(x, n))
    inv = {loop: and_(ge(x, num(0)), le(x, n))}
    return _variant(unsafe, "counter", b.build(), {"counter"}, inv, (0,), unsafe_name="counter_off_by_one")


class Doubling(NamedTuple):
    program: ir.Program
    loop: str
    x: ir.Var
    y: ir.Var
    n: ir.Var


def doubling(
    file: str,
    names: str = "xyn",
    upper: int | None = None,
    bound_first: bool = False,
    excess: int | None = None,
) -> Doubling:
    """`n` nondet, at least 0 (and at most `upper`); `while (x < n) { x++; y += 2; }`, then
    `assert(y == 2*n)` (`y == 2*n + excess` with `excess`). `names` are those of x, y and n,
    declared in that order or, with `bound_first`, n first."""
    b = ProgramBuilder(file)
    order = [names[2], names[0], names[1]] if bound_first else list(names)
    declared = {name: b.var(name) for name in order}
    x, y, n = (declared[name] for name in names)
    b.havoc(n)
    b.assume(ge(n, num(0)) if upper is None else and_(ge(n, num(0)), le(n, num(upper))))
    with b.loop() as loop:
        b.if_break(ge(x, n))
        b.assign(x, add(x, num(1)))
        b.assign(y, add(y, num(2)))
    b.check(eq(y, mul(num(2), n) if excess is None else add(mul(num(2), n), num(excess))))
    return Doubling(b.build(), loop, x, y, n)


def nested_counters(outer: int, inner: int, file: str = "builder.c") -> ir.Program:
    """`for (i = 0; i < outer; i++) for (j = 0; j < inner; j++);`, the loops named outer and inner."""
    b = ProgramBuilder(file)
    i, j = b.var("i"), b.var("j")
    with b.loop("outer"):
        b.if_break(ge(i, num(outer)))
        b.assign(j, num(0))
        with b.loop("inner"):
            b.if_break(ge(j, num(inner)))
            b.assign(j, add(j, num(1)))
        b.assign(i, add(i, num(1)))
    return b.build()


def two_var(unsafe: bool) -> Example:
    program, loop, x, y, n = doubling("twovar.c", excess=1 if unsafe else 0)
    inv = {loop: and_(eq(y, mul(num(2), x)), le(x, n))}
    return _variant(unsafe, "two_var", program, {"linear", "two-variable"}, inv, (0,))


def cohencu() -> Example:
    b = ProgramBuilder("cohencu.c")
    a, n, x, y, z = (b.var(v) for v in "anxyz")
    b.havoc(a)
    b.assume(and_(ge(a, num(0)), le(a, num(1000))))
    b.assign(y, num(1))
    b.assign(z, num(6))
    with b.loop() as loop:
        b.if_break(gt(n, a))
        b.assign(n, add(n, num(1)))
        b.assign(x, add(x, y))
        b.assign(y, add(y, z))
        b.assign(z, add(z, num(6)))
    b.check(eq(x, mul(mul(n, n), n)))
    y_poly = add(add(mul(num(3), mul(n, n)), mul(num(3), n)), num(1))
    inv = and_(and_(eq(z, add(mul(num(6), n), num(6))), eq(y, y_poly)), eq(x, mul(mul(n, n), n)))
    return Example("cohencu", b.build(), "safe", frozenset({"polynomial"}), {loop: inv})


def sum_squares(unsafe: bool) -> Example:
    b = ProgramBuilder("sumsq.c")
    x, y, n = b.var("x"), b.var("y"), b.var("n")
    b.havoc(n)
    b.assume(and_(ge(n, num(0)), le(n, num(100))))
    with b.loop() as loop:
        b.if_break(ge(x, n))
        b.assign(x, add(x, num(1)))
        b.assign(y, add(y, mul(x, x)))
    rhs = mul(mul(x, add(x, num(1))), add(mul(num(2), x), num(1)))
    b.check(eq(mul(num(6), y), add(rhs, num(6)) if unsafe else rhs))
    inv = {loop: and_(eq(mul(num(6), y), rhs), le(x, n))}
    return _variant(unsafe, "sum_squares", b.build(), {"polynomial"}, inv, (0,))


# ----------------------------------------------------------------------------- nested loops


def nested(unsafe: bool) -> Example:
    b = ProgramBuilder("nested.c")
    i, j, n = b.var("i"), b.var("j"), b.var("n")
    b.havoc(n)
    with b.loop() as outer:
        b.if_break(ge(i, n))
        b.assign(j, num(0))
        with b.loop() as inner:
            b.if_break(ge(j, i))
            b.assign(j, add(j, num(1)))
        b.check(ne(j, num(3)) if unsafe else eq(j, i))
        b.assign(i, add(i, num(1)))
    inv = {outer: ge(i, num(0)), inner: and_(le(j, i), ge(j, num(0)))}
    return _variant(unsafe, "nested", b.build(), {"nested", "assert-in-loop"}, inv, (4,))


def nested_product() -> Example:
    b = ProgramBuilder("product.c")
    i, j, c, n, m = (b.var(v) for v in ("i", "j", "c", "n", "m"))
    b.havoc(n)
    b.havoc(m)
    b.assume(and_(ge(n, num(0)), ge(m, num(0))))
    with b.loop() as outer:
        b.if_break(ge(i, n))
        b.assign(j, num(0))
        with b.loop() as inner:
            b.if_break(ge(j, m))
            b.assign(c, add(c, num(1)))
            b.assign(j, add(j, num(1)))
        b.assign(i, add(i, num(1)))
    b.check(eq(c, mul(n, m)))
    inv = {
        outer: and_(eq(c, mul(i, m)), and_(le(i, n), ge(m, num(0)))),
        inner: and_(and_(eq(c, add(mul(i, m), j)), le(j, m)), and_(lt(i, n), ge(j, num(0)))),
    }
    return Example("nested_product", b.build(), "safe", frozenset({"nested", "polynomial"}), inv)


def nested_break() -> Example:
    b = ProgramBuilder("nested_break.c")
    i, j = b.var("i"), b.var("j")
    with b.loop() as outer:
        b.if_break(ge(i, num(3)))
        with b.loop() as inner:
            b.assign(j, add(j, num(1)))
            b.if_break(ge(j, num(2)))
        b.assign(i, add(i, num(1)))
    b.check(eq(j, num(4)))
    first = and_(eq(i, num(0)), eq(j, num(0)))
    later = and_(and_(gt(i, num(0)), le(i, num(3))), eq(j, add(i, num(1))))
    inner_first = and_(eq(i, num(0)), and_(ge(j, num(0)), le(j, num(1))))
    inner_later = and_(and_(gt(i, num(0)), le(i, num(2))), eq(j, add(i, num(1))))
    inv = {outer: or_(first, later), inner: or_(inner_first, inner_later)}
    return Example("nested_break", b.build(), "safe", frozenset({"nested", "break"}), inv)


def sequential_loops() -> Example:
    b = ProgramBuilder("sequential.c")
    x, y, n = b.var("x"), b.var("y"), b.var("n")
    b.havoc(n)
    b.assume(ge(n, num(0)))
    with b.loop() as first:
        b.if_break(ge(x, n))
        b.assign(x, add(x, num(1)))
    with b.loop() as second:
        b.if_break(ge(y, x))
        b.assign(y, add(y, num(1)))
    b.check(eq(y, n))
    inv = {
        first: and_(and_(le(x, n), ge(x, num(0))), eq(y, num(0))),
        second: and_(eq(x, n), and_(le(y, x), ge(y, num(0)))),
    }
    return Example("sequential_loops", b.build(), "safe", frozenset({"multiple-loops"}), inv)


# ----------------------------------------------------------------------------- break / continue / return


def continue_step(unsafe: bool) -> Example:
    """for (i = 0; i < n; i++) { if (i % 2 == 0) continue; c++; }  -- `continue` runs the step."""
    b = ProgramBuilder("continue.c")
    i, c, n = b.var("i"), b.var("c"), b.var("n")
    b.havoc(n)
    with b.loop() as loop:
        b.if_break(ge(i, n))
        b.if_continue(eq(_mod(i, num(2)), num(0)))
        b.assign(c, add(c, num(1)))
    step: ir.Block = (ir.Assign(i.name, add(i, num(1))),)
    b.check(ne(c, num(2)) if unsafe else le(mul(num(2), c), i))
    program = _with_step(b.build(), loop, step)
    inv = {
        loop: and_(
            ge(i, num(0)),
            and_(le(mul(num(2), c), i), _implies(eq(_mod(i, num(2)), num(1)), lt(mul(num(2), c), i))),
        )
    }
    return _variant(unsafe, "continue_step", program, {"continue", "break"}, inv, (4,))


def early_return_in_loop() -> Example:
    """while (1) { if (x >= 5) return; x++; } assert(0);  -- return leaves main: safe."""
    b = ProgramBuilder("return_main.c")
    x = b.var("x")
    with b.loop():
        b.if_(ge(x, num(5)), (ir.Return(),))
        b.assign(x, add(x, num(1)))
    b.check(num(0))
    return Example("return_from_main", b.build(), "safe", frozenset({"return", "naive-wrong"}), {})


def inlined_return(unsafe: bool) -> Example:
    """while (x < 5) { f(); x++; } with f() { if (x == 3) return; y++; }: y == 4 at the end."""
    b = ProgramBuilder("inlined_return.c")
    x, y = b.var("x"), b.var("y")
    with b.loop() as loop:
        b.if_break(ge(x, num(5)))
        with b.block() as body:
            b.if_(eq(x, num(3)), (ir.Return(),))
            b.assign(y, add(y, num(1)))
        b.emit(ir.Scope("f", tuple(body)))
        b.assign(x, add(x, num(1)))
    b.check(eq(y, num(5)) if unsafe else eq(y, num(4)))
    inv = {
        loop: and_(
            and_(ge(x, num(0)), le(x, num(5))),
            or_(and_(le(x, num(3)), eq(y, x)), and_(gt(x, num(3)), eq(y, sub(x, num(1))))),
        )
    }
    return _variant(unsafe, "inlined_return", b.build(), {"return", "scope", "naive-wrong"}, inv, ())


def goto_loop(unsafe: bool) -> Example:
    """again: x++; if (x < 5) goto again; assert(x == 5);  -- a loop made by a backward goto."""
    b = ProgramBuilder("goto_loop.c")
    x = b.var("x")
    loop = b.label("again", loop=True)
    assert loop is not None
    b.assign(x, add(x, num(1)))
    b.emit(ir.If(lt(x, num(5)), (ir.Goto("again"),), ()))
    b.check(eq(x, num(4)) if unsafe else eq(x, num(5)))
    inv = {loop: and_(ge(x, num(0)), le(x, num(4)))}
    return _variant(unsafe, "goto_loop", b.build(), {"goto"}, inv, ())


def goto_out_of_nested(unsafe: bool) -> Example:
    """Two nested `while (1)` loops left only by `goto done` when i == 2 && j == 1."""
    b = ProgramBuilder("goto_nested.c")
    i, j = b.var("i"), b.var("j")
    with b.loop():
        b.assign(j, num(0))
        with b.loop():
            b.if_break(ge(j, num(3)))
            b.emit(ir.If(and_(eq(i, num(2)), eq(j, num(1))), (ir.Goto("done"),), ()))
            b.assign(j, add(j, num(1)))
        b.assign(i, add(i, num(1)))
    b.label("done")
    b.check(eq(i, num(3)) if unsafe else and_(eq(i, num(2)), eq(j, num(1))))
    return _variant(unsafe, "goto_out_of_nested", b.build(), {"goto", "nested"}, None, ())


def break_even(unsafe: bool) -> Example:
    b = ProgramBuilder("even.c")
    x = b.var("x")
    if unsafe:
        b.assign(x, num(1))
    with b.loop() as loop:
        b.if_break(ge(x, num(10)))
        b.assign(x, add(x, num(2)))
    b.check(eq(x, num(10)))
    inv = {loop: and_(eq(_mod(x, num(2)), num(0)), and_(ge(x, num(0)), le(x, num(10))))}
    return _variant(unsafe, "break_even", b.build(), {"break", "modulo"}, inv, (), unsafe_name="break_odd")


# ----------------------------------------------------------------------------- C integer semantics


def uchar_wrap_loop(unsafe: bool) -> Example:
    """unsigned char c = 250; while (c != 0) { c = c + 1; n++; } assert(n == 6)."""
    b = ProgramBuilder("uchar_wrap.c")
    c, n = b.var("c", UCHAR), b.var("n")
    b.assign(c, num(250, UCHAR))
    with b.loop() as loop:
        b.if_break(eq(cast(c, ir.INT), num(0)))
        b.assign(c, cast(add(cast(c, ir.INT), num(1)), UCHAR))
        b.assign(n, add(n, num(1)))
    b.check(eq(n, num(5 if unsafe else 6)))
    ci = cast(c, ir.INT)
    inv = {
        loop: or_(
            and_(and_(ge(n, num(0)), le(n, num(5))), eq(ci, add(num(250), n))),
            and_(eq(n, num(6)), eq(ci, num(0))),
        )
    }
    return _variant(
        unsafe, "uchar_wrap_loop", b.build(), {"unsigned", "wrap", "cast", "naive-wrong"}, inv, ()
    )


def uint_wrap_loop() -> Example:
    """unsigned i = UINT_MAX - 2; for (k = 0; k < 5; k++) i = i + 1u; assert(i == 2)."""
    b = ProgramBuilder("uint_wrap.c")
    i, k = b.var("i", ir.UINT), b.var("k")
    b.assign(i, num(ir.UINT.max - 2, ir.UINT))
    with b.loop() as loop:
        b.if_break(ge(k, num(5)))
        b.assign(i, add(i, num(1, ir.UINT)))
        b.assign(k, add(k, num(1)))
    b.check(eq(i, num(2, ir.UINT)))
    wrapped = add(num(ir.UINT.max - 2, ir.UINT), cast(k, ir.UINT))
    inv = {loop: and_(and_(ge(k, num(0)), le(k, num(5))), eq(i, wrapped))}
    return Example("uint_wrap_loop", b.build(), "safe", frozenset({"unsigned", "wrap", "naive-wrong"}), inv)


def uint_max_plus_one(unsafe: bool) -> Example:
    b = ProgramBuilder("uint_max.c")
    x, y = b.var("x", ir.UINT), b.var("y", ir.UINT)
    b.havoc(x)
    b.assign(y, add(x, num(1, ir.UINT)))
    if unsafe:
        b.check(gt(y, x))
    else:
        b.if_(eq(x, num(ir.UINT.max, ir.UINT)), (ir.Assert(eq(y, num(0, ir.UINT))),))
    return _variant(
        unsafe,
        "uint_max_plus_one",
        b.build(),
        {"unsigned", "wrap", "naive-wrong", "no-loop"},
        {},
        (ir.UINT.max,),
    )


def ulong_counter() -> Example:
    b = ProgramBuilder("ulong.c")
    x, n = b.var("x", ULONG), b.var("n", ULONG)
    b.havoc(n)
    with b.loop() as loop:
        b.if_break(ge(x, n))
        b.assign(x, add(x, num(1, ULONG)))
    b.check(eq(x, n))
    return Example("ulong_counter", b.build(), "safe", frozenset({"unsigned", "64-bit"}), {loop: le(x, n)})


def trunc_division(unsafe: bool) -> Example:
    """Negative dividends: C's / and % truncate (a Euclidean encoding gets both labels wrong)."""
    b = ProgramBuilder("truncdiv.c")
    x, q, r = b.var("x"), b.var("q"), b.var("r")
    b.havoc(x)
    b.assume(and_(lt(x, num(0)), gt(x, num(-100))))
    b.assign(q, _div(x, num(2)))
    b.assign(r, _mod(x, num(2)))
    b.check(eq(add(mul(q, num(2)), r), x))
    b.check(ge(r, num(0)) if unsafe else le(r, num(0)))
    features = frozenset({"division", "modulo", "naive-wrong", "no-loop"})
    return _variant(unsafe, "trunc_division", b.build(), features, {}, (-1,))


def trunc_division_loop(unsafe: bool) -> Example:
    """s = sum of i / 2 for i = -9 .. -1: -20 truncating (-25 flooring)."""
    b = ProgramBuilder("truncdiv_loop.c")
    i, s = b.var("i"), b.var("s")
    b.assign(i, num(-9))
    with b.loop():
        b.if_break(ge(i, num(0)))
        b.assign(s, add(s, _div(i, num(2))))
        b.assign(i, add(i, num(1)))
    b.check(eq(s, num(-25 if unsafe else -20)))
    return _variant(unsafe, "trunc_division_loop", b.build(), {"division", "naive-wrong"}, None, ())


def bool_normalisation(unsafe: bool) -> Example:
    b = ProgramBuilder("bool.c")
    x, f = b.var("x"), b.var("f", ir.BOOL)
    b.havoc(x)
    b.assign(f, cast(x, ir.BOOL))
    as_int = cast(f, ir.INT)
    b.check(eq(as_int, x) if unsafe else or_(eq(as_int, num(0)), eq(as_int, num(1))))
    return _variant(unsafe, "bool_cast", b.build(), {"bool", "cast", "naive-wrong", "no-loop"}, {}, (5,))


def bool_loop() -> Example:
    b = ProgramBuilder("bool_loop.c")
    f, i, n = b.var("f", ir.BOOL), b.var("i"), b.var("n")
    b.havoc(n)
    with b.loop() as loop:
        b.if_break(ge(i, n))
        b.assign(f, cast(add(cast(f, ir.INT), num(1)), ir.BOOL))
        b.assign(i, add(i, num(1)))
    b.check(eq(cast(f, ir.INT), gt(i, num(0))))
    inv = {loop: and_(ge(i, num(0)), eq(cast(f, ir.INT), gt(i, num(0))))}
    return Example("bool_loop", b.build(), "safe", frozenset({"bool", "cast"}), inv)


def uchar_counter_cast() -> Example:
    """unsigned char u; for (k = 0; k < 300; k++) u = u + 1; assert(u == 44)."""
    b = ProgramBuilder("uchar_count.c")
    u, k = b.var("u", UCHAR), b.var("k")
    with b.loop() as loop:
        b.if_break(ge(k, num(300)))
        b.assign(u, cast(add(cast(u, ir.INT), num(1)), UCHAR))
        b.assign(k, add(k, num(1)))
    b.check(eq(cast(u, ir.INT), num(44)))
    inv = {loop: and_(and_(ge(k, num(0)), le(k, num(300))), eq(cast(u, ir.INT), _mod(k, num(256))))}
    return Example("uchar_counter_cast", b.build(), "safe", frozenset({"cast", "unsigned", "modulo"}), inv)


def schar_cast(unsafe: bool) -> Example:
    b = ProgramBuilder("schar.c")
    x, c = b.var("x"), b.var("c", SCHAR)
    b.havoc(x)
    b.assume(and_(ge(x, num(0)), lt(x, num(1000))))
    b.assign(c, cast(x, SCHAR))
    ci = cast(c, ir.INT)
    b.check(eq(ci, x) if unsafe else and_(ge(ci, num(-128)), le(ci, num(127))))
    return _variant(unsafe, "schar_cast", b.build(), {"cast", "no-loop"}, {}, (200,))


def bitwise_parity() -> Example:
    b = ProgramBuilder("parity.c")
    x, y = b.var("x"), b.var("y")
    b.havoc(x)
    b.assign(y, binop("&", x, num(1)))
    b.check(or_(eq(y, num(0)), eq(y, num(1))))
    return Example("bitwise_parity", b.build(), "safe", frozenset({"bitwise", "no-loop"}), {})


def euclid_gcd() -> Example:
    b = ProgramBuilder("gcd.c")
    x, y, t = b.var("x"), b.var("y"), b.var("t")
    b.havoc(x)
    b.havoc(y)
    b.assume(and_(gt(x, num(0)), gt(y, num(0))))
    with b.loop() as loop:
        b.if_break(eq(y, num(0)))
        b.assign(t, _mod(x, y))
        b.assign(x, y)
        b.assign(y, t)
    b.check(gt(x, num(0)))
    return Example(
        "euclid_gcd",
        b.build(),
        "safe",
        frozenset({"modulo", "non-constant-divisor"}),
        {loop: and_(gt(x, num(0)), ge(y, num(0)))},
    )


def bitwise_or_loop() -> Example:
    b = ProgramBuilder("or_loop.c")
    s, i, n = b.var("s"), b.var("i"), b.var("n")
    b.havoc(n)
    with b.loop() as loop:
        b.if_break(ge(i, n))
        b.assign(s, binop("|", s, num(1)))
        b.assign(i, add(i, num(1)))
    b.check(and_(ge(s, num(0)), le(s, num(1))))
    return Example(
        "bitwise_or_loop",
        b.build(),
        "safe",
        frozenset({"bitwise"}),
        {loop: or_(eq(s, num(0)), eq(s, num(1)))},
    )


# ----------------------------------------------------------------------------- arrays


def array_constant_cell() -> Example:
    b = ProgramBuilder("array.c")
    arr = ir.ArrayType(ir.INT, 10)
    a, i, s, n = b.var("a", arr), b.var("i"), b.var("s"), b.var("n")
    b.havoc(n)
    b.assign(a, ir.Store(a, num(3), num(5), arr))
    with b.loop() as loop:
        b.if_break(ge(i, n))
        b.assign(s, add(s, ir.Select(a, num(3), ir.INT)))
        b.assign(i, add(i, num(1)))
    b.check(eq(s, mul(num(5), i)))
    inv = {loop: and_(eq(ir.Select(a, num(3), ir.INT), num(5)), eq(s, mul(num(5), i)))}
    return Example("array_constant_cell", b.build(), "safe", frozenset({"array"}), inv)


def array_fill_unsafe() -> Example:
    b = ProgramBuilder("array_fill.c")
    arr = ir.ArrayType(ir.INT, 10)
    a, i, n = b.var("a", arr), b.var("i"), b.var("n")
    b.havoc(n)
    b.assume(le(n, num(10)))
    with b.loop():
        b.if_break(ge(i, n))
        b.assign(a, ir.Store(a, i, i, arr))
        b.assign(i, add(i, num(1)))
    b.check(ne(ir.Select(a, num(2), ir.INT), num(2)))
    return Example("array_fill_unsafe", b.build(), "unsafe", frozenset({"array"}), None, witness=(3,))


# ----------------------------------------------------------------------------- assume / assert


def assume_blocked() -> Example:
    """Paths through i == 5 are blocked, so the loop can only exit with i <= 5."""
    b = ProgramBuilder("assume.c")
    i, n = b.var("i"), b.var("n")
    b.havoc(n)
    with b.loop() as loop:
        b.if_break(ge(i, n))
        b.if_(eq(i, num(5)), (ir.Assume(num(0)),))
        b.assign(i, add(i, num(1)))
    b.check(le(i, num(5)))
    return Example(
        "assume_blocked", b.build(), "safe", frozenset({"assume"}), {loop: and_(ge(i, num(0)), le(i, num(5)))}
    )


def assert_in_loop(unsafe: bool) -> Example:
    b = ProgramBuilder("assert_loop.c")
    x, y = b.var("x"), b.var("y")
    with b.loop() as loop:
        b.if_break(ge(x, num(100)))
        b.assign(x, add(x, num(1)))
        b.assign(y, add(y, num(1)))
        b.check(ne(x, num(37)) if unsafe else eq(x, y))
    return _variant(
        unsafe,
        "assert_in_loop",
        b.build(),
        {"assert-in-loop", "after-k"},
        {loop: eq(x, y)},
        (),
        unsafe_name="assert_in_loop_k37",
    )


def nondet_loop_after_k() -> Example:
    b = ProgramBuilder("nondet_loop.c")
    c, i = b.var("c"), b.var("i")
    with b.loop():
        b.havoc(c)
        b.if_break(eq(c, num(0)))
        b.assign(i, add(i, num(1)))
    b.check(lt(i, num(10)))
    return Example(
        "nondet_loop_after_k",
        b.build(),
        "unsafe",
        frozenset({"after-k", "nondet"}),
        None,
        witness=(1,) * 10 + (0,),
    )


def halving(unsafe: bool) -> Example:
    b = ProgramBuilder("halving.c")
    x, n = b.var("x"), b.var("n")
    b.havoc(n)
    b.assume(ge(n, num(0)))
    b.assign(x, n)
    with b.loop() as loop:
        b.if_break(le(x, num(1)))
        b.assign(x, _div(x, num(2)))
    b.check(eq(x, num(1)) if unsafe else ge(x, num(0)))
    return _variant(unsafe, "halving", b.build(), {"division"}, {loop: ge(x, num(0))}, (0,))


# ----------------------------------------------------------------------------- C examples

C_PRELUDE = """
extern unsigned int __VERIFIER_nondet_uint(void);
extern int __VERIFIER_nondet_int(void);
extern void abort(void);
extern void reach_error(void);
void __VERIFIER_assert(int cond) { if (!cond) { ERROR: { reach_error(); abort(); } } }
"""

# name -> (main's text, expected, features, witness)
C_EXAMPLES: dict[str, tuple[str, str, frozenset[str], tuple[int, ...] | None]] = {
    "c_unsigned_counter": (
        """int main() { unsigned int n = __VERIFIER_nondet_uint(); unsigned int i = 0;
           while (i < n) { i++; } __VERIFIER_assert(i == n); return 0; }""",
        "safe",
        frozenset({"c", "unsigned", "counter"}),
        None,
    ),
    "c_uchar_wrap_unsafe": (
        """int main() { unsigned char c = 250; int k = 0;
           while (c != 0) { c++; k++; } __VERIFIER_assert(k == 5); return 0; }""",
        "unsafe",
        frozenset({"c", "unsigned", "wrap", "naive-wrong"}),
        (),
    ),
    "c_negative_modulo": (
        """int main() { int x = __VERIFIER_nondet_int();
           if (x < 0 && x > -100) { __VERIFIER_assert(x % 2 <= 0 && x / 2 >= x); } return 0; }""",
        "safe",
        frozenset({"c", "modulo", "division", "naive-wrong", "no-loop"}),
        None,
    ),
    "c_for_continue": (
        """int main() { int c = 0;
           for (int i = 0; i < 10; i++) { if (i % 3 == 0) continue; c++; }
           __VERIFIER_assert(c == 6); return 0; }""",
        "safe",
        frozenset({"c", "continue"}),
        None,
    ),
    "c_function_return": (
        """int f(int x) { if (x > 5) return 1; return 0; }
           int main() { int s = 0; for (int i = 0; i < 10; i++) s += f(i);
           __VERIFIER_assert(s == 4); return 0; }""",
        "safe",
        frozenset({"c", "return", "scope"}),
        None,
    ),
    "c_function_return_unsafe": (
        """int f(int x) { if (x > 5) return 1; return 0; }
           int main() { int s = 0; for (int i = 0; i < 10; i++) s += f(i);
           __VERIFIER_assert(s == 5); return 0; }""",
        "unsafe",
        frozenset({"c", "return", "scope"}),
        (),
    ),
    "c_goto_loop": (
        """int main() { int i = 0; int s = 0;
           again: if (i >= 10) goto done; s += 2; i++; goto again;
           done: __VERIFIER_assert(s == 2 * i); return 0; }""",
        "safe",
        frozenset({"c", "goto"}),
        None,
    ),
    "c_goto_loop_unsafe": (
        """int main() { int i = 0; int s = 0;
           again: if (i >= 10) goto done; s += 2; i++; goto again;
           done: __VERIFIER_assert(s == 19); return 0; }""",
        "unsafe",
        frozenset({"c", "goto"}),
        (),
    ),
    "c_goto_cil_break": (
        """int main() { unsigned int m = __VERIFIER_nondet_uint(); int e = 0;
           if (m == 0U) goto return_label;
           while (1) { while_0_continue: ; if (m >= 16U) goto while_0_break; m = m << 1U; e++; }
           while_0_break: ;
           __VERIFIER_assert(e <= 4);
           return_label: return 0; }""",
        "safe",
        frozenset({"c", "goto", "unsigned"}),
        None,
    ),
    "c_nondet_loop_unsafe": (
        """int main() { int i = 0; while (__VERIFIER_nondet_int()) i++;
           __VERIFIER_assert(i < 3); return 0; }""",
        "unsafe",
        frozenset({"c", "nondet", "after-k"}),
        (1, 1, 1, 0),
    ),
}


def _c_invariants(name: str, program: ir.Program) -> Mapping[str, ir.Expr] | None:
    if name != "c_unsigned_counter":
        return None
    info = program.loops[0]
    i, n = (ir.Var(info.ir_name(c) or c, ir.UINT) for c in ("i", "n"))
    return {info.id: le(i, n)}


def c_examples() -> tuple[list[Example], list[str]]:
    """The C examples that the frontend lowers, and errors for those it could not."""
    try:
        from quokka.verifier.frontend import lower_source
    except ImportError as exc:
        return [], [f"no frontend: {exc}"]
    out, errors = [], []
    for name, (text, expected, features, witness) in C_EXAMPLES.items():
        source = C_PRELUDE + text + "\n"
        try:
            program = lower_source(source, f"{name}.c", "ILP32")
        except QuokkaError as exc:
            errors.append(f"{name}: {exc}")
            continue
        out.append(Example(name, program, expected, features, _c_invariants(name, program), source, witness))
    return out, errors


def _builders() -> list[Callable[[], Example]]:
    both = [
        counter,
        two_var,
        sum_squares,
        nested,
        continue_step,
        inlined_return,
        break_even,
        uchar_wrap_loop,
        uint_max_plus_one,
        trunc_division,
        trunc_division_loop,
        bool_normalisation,
        schar_cast,
        assert_in_loop,
        halving,
        goto_loop,
        goto_out_of_nested,
    ]
    out: list[Callable[[], Example]] = []
    for make in both:
        out += [lambda make=make: make(False), lambda make=make: make(True)]
    return [
        *out,
        cohencu,
        nested_product,
        nested_break,
        sequential_loops,
        early_return_in_loop,
        uint_wrap_loop,
        ulong_counter,
        bool_loop,
        uchar_counter_cast,
        bitwise_parity,
        euclid_gcd,
        bitwise_or_loop,
        array_constant_cell,
        array_fill_unsafe,
        assume_blocked,
        nondet_loop_after_k,
    ]


_C_EXAMPLES, C_ERRORS = c_examples()
CORPUS: tuple[Example, ...] = (*(make() for make in _builders()), *_C_EXAMPLES)
SAFE = tuple(e for e in CORPUS if e.expected == "safe")
UNSAFE = tuple(e for e in CORPUS if e.expected == "unsafe")
BY_NAME = {e.name: e for e in CORPUS}


def twin(example: Example) -> Example | None:
    """The safe example an unsafe one was derived from (same loops and variables), if any."""
    names = {
        "counter_off_by_one": "counter",
        "break_odd": "break_even",
        "assert_in_loop_k37": "assert_in_loop",
    }
    return BY_NAME.get(names.get(example.name, example.name.removesuffix("_unsafe")))


def counter_program(target: int) -> ir.Program:
    """x counts up to a nondet n; the assertion x != target fails after `target` iterations."""
    b = ProgramBuilder("counter.c")
    x, n = b.var("x"), b.var("n")
    b.havoc(n)
    b.assign(x, num(0))
    with b.loop():
        b.if_break(ge(x, n))
        b.assign(x, add(x, num(1)))
        b.check(ne(x, num(target)))
    return b.build()
