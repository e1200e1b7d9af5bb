"""Synthetic SV-COMP-style loop programs with known invariants (linear and polynomial templates,
random names, constants and bounds). Each one is written to a file; the caller re-checks it."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HEADER = """extern void abort(void);
void reach_error(void) { abort(); }
extern int __VERIFIER_nondet_int(void);

void __VERIFIER_assert(int cond) {
    if (!cond) {
        reach_error();
    }
}

int main() {
"""
NLA_HEADER = """extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) \
__attribute__((__nothrow__, __leaf__)) __attribute__((__noreturn__));
void reach_error() { __assert_fail("0", "{name}.c", 4, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
void assume_abort_if_not(int cond) {
    if (!cond) {
        abort();
    }
}
void __VERIFIER_assert(int cond) {
    if (!(cond)) {
    ERROR : { reach_error(); }
    }
    return;
}

int main() {
"""
HEADERS = (HEADER, NLA_HEADER)  # the second as in SV-COMP's nla-digbench programs
NAMES = (
    "i",
    "j",
    "k",
    "n",
    "m",
    "x",
    "y",
    "z",
    "a",
    "b",
    "c",
    "s",
    "t",
    "u",
    "v",
    "w",
    "cnt",
    "sum",
    "acc",
    "lo",
    "hi",
    "p",
    "q",
    "r",
)


@dataclass(frozen=True)
class Synthetic:
    """A generated program: its text, the loop keyword's line and the invariant there; `in_loop`
    for the `-ll` form (`in_loop_assertion`)."""

    name: str
    template: str
    source: str
    loop_line: int
    invariant: str
    in_loop: bool = False


IN_LOOP_SHARE = 0.5  # val families assert inside the loop about as often as after it
VARIABLES = 5  # distinct names drawn per program: the most any template uses
Body = tuple[list[str], str]  # (lines of main's body with the loop keyword marked by "@", invariant)


def _count_up(rng: random.Random, v: list[str]) -> Body:
    x, y, n = v[:3]
    a, c, bound = rng.randint(1, 9), rng.randint(-20, 20), rng.randint(5, 1000)
    lines = [
        f"int {n} = __VERIFIER_nondet_int();",
        f"if (!({n} >= 0 && {n} <= {bound})) return 0;",
        f"int {x} = 0;",
        f"int {y} = {c};",
        f"@while ({x} < {n}) {{",
        f"    {x} = {x} + 1;",
        f"    {y} = {y} + {a};",
        "}",
        f"__VERIFIER_assert({y} == {a} * {n} + {c});",
    ]
    return lines, f"{y} == {a} * {x} + {c} && {x} <= {n}"


def _count_down(rng: random.Random, v: list[str]) -> Body:
    i, j, n = v[:3]
    k, bound = rng.randint(1, 7), rng.randint(5, 500)
    lines = [
        f"int {n} = __VERIFIER_nondet_int();",
        f"if (!({n} >= 0 && {n} <= {bound})) return 0;",
        f"int {i} = {n};",
        f"int {j} = 0;",
        f"@while ({i} > 0) {{",
        f"    {i} = {i} - 1;",
        f"    {j} = {j} + {k};",
        "}",
        f"__VERIFIER_assert({j} == {k} * {n});",
    ]
    return lines, f"{j} + {k} * {i} == {k} * {n} && {i} >= 0"


def _two_counters(rng: random.Random, v: list[str]) -> Body:
    x, y, k, n = v[:4]
    a, b, bound = rng.randint(1, 5), rng.randint(1, 5), rng.randint(5, 1000)
    lines = [
        f"int {n} = __VERIFIER_nondet_int();",
        f"if (!({n} >= 0 && {n} <= {bound})) return 0;",
        f"int {x} = 0;",
        f"int {y} = 0;",
        f"int {k} = 0;",
        f"@while ({k} < {n}) {{",
        f"    {x} = {x} + {a};",
        f"    {y} = {y} + {b};",
        f"    {k} = {k} + 1;",
        "}",
        f"__VERIFIER_assert({b} * {x} == {a} * {y});",
    ]
    return lines, f"{x} == {a} * {k} && {y} == {b} * {k} && {k} <= {n}"


def _triangle(rng: random.Random, v: list[str]) -> Body:
    x, y, n = v[:3]
    bound = rng.randint(10, 1000)
    lines = [
        f"int {n} = __VERIFIER_nondet_int();",
        f"if (!({n} >= 0 && {n} <= {bound})) return 0;",
        f"int {x} = 0;",
        f"int {y} = 0;",
        f"@while ({x} < {n}) {{",
        f"    {x} = {x} + 1;",
        f"    {y} = {y} + {x};",
        "}",
        f"__VERIFIER_assert(2 * {y} == {n} * ({n} + 1));",
    ]
    return lines, f"2 * {y} == {x} * {x} + {x} && {x} <= {n}"


def _squares(rng: random.Random, v: list[str]) -> Body:
    x, y, n = v[:3]
    bound = rng.randint(10, 1000)
    lines = [
        f"int {n} = __VERIFIER_nondet_int();",
        f"if (!({n} >= 0 && {n} <= {bound})) return 0;",
        f"int {x} = 0;",
        f"int {y} = 0;",
        f"@while ({x} < {n}) {{",
        f"    {y} = {y} + 2 * {x} + 1;",
        f"    {x} = {x} + 1;",
        "}",
        f"__VERIFIER_assert({y} == {n} * {n});",
    ]
    return lines, f"{y} == {x} * {x} && {x} <= {n}"


def _cubes(rng: random.Random, v: list[str]) -> Body:
    x, y, z, n = v[:4]
    bound = rng.randint(10, 200)
    lines = [
        f"int {n} = __VERIFIER_nondet_int();",
        f"if (!({n} >= 0 && {n} <= {bound})) return 0;",
        f"int {x} = 0;",
        f"int {y} = 0;",
        f"int {z} = 1;",
        f"@while ({x} < {n}) {{",
        f"    {y} = {y} + {z};",
        f"    {z} = {z} + 2;",
        f"    {x} = {x} + 1;",
        "}",
        f"__VERIFIER_assert({y} == {n} * {n});",
    ]
    return lines, f"{z} == 2 * {x} + 1 && {y} == {x} * {x} && {x} <= {n}"


def _assume_n(n: str, low: int, bound: int) -> list[str]:
    """`n` a nondet input in `[low, bound]`, assumed SV-COMP style."""
    return [f"int {n} = __VERIFIER_nondet_int();", f"if (!({n} >= {low} && {n} <= {bound})) return 0;"]


def _nondet_split(rng: random.Random, v: list[str]) -> Body:
    x, y, i, n = v[:4]
    a, bound = rng.randint(1, 5), rng.randint(5, 1000)
    lines = [
        *_assume_n(n, 0, bound),
        f"int {x} = 0;",
        f"int {y} = 0;",
        f"int {i} = 0;",
        f"@while ({i} < {n}) {{",
        "    if (__VERIFIER_nondet_int()) {",
        f"        {x} = {x} + {a};",
        "    } else {",
        f"        {y} = {y} + {a};",
        "    }",
        f"    {i} = {i} + 1;",
        "}",
        f"__VERIFIER_assert({x} + {y} == {a} * {n});",
    ]
    return lines, f"{x} + {y} == {a} * {i} && {i} <= {n}"


def _ratio_bound(rng: random.Random, v: list[str]) -> Body:
    x, y, n = v[:3]
    k, bound = rng.randint(2, 5), rng.randint(5, 1000)
    lines = [
        *_assume_n(n, 0, bound),
        f"int {x} = 0;",
        f"int {y} = 0;",
        f"@while ({x} < {n}) {{",
        f"    {x} = {x} + 1;",
        "    if (__VERIFIER_nondet_int()) {",
        f"        {y} = {y} + {k};",
        "    } else {",
        f"        {y} = {y} + 1;",
        "    }",
        "}",
        f"__VERIFIER_assert({x} <= {y} && {y} <= {k} * {n});",
    ]
    return lines, f"{x} <= {y} && {y} <= {k} * {x} && {x} <= {n}"


def _stride(rng: random.Random, v: list[str]) -> Body:
    i, k, n = v[:3]
    step, c, bound = rng.randint(2, 9), rng.randint(-50, 50), rng.randint(5, 1000)
    lines = [
        *_assume_n(n, 0, bound),
        f"int {i} = {c};",
        f"int {k} = 0;",
        f"@while ({i} < {c} + {step} * {n}) {{",
        f"    {i} = {i} + {step};",
        f"    {k} = {k} + 1;",
        "}",
        f"__VERIFIER_assert({k} == {n} && {i} == {c} + {step} * {n});",
    ]
    return lines, f"{i} == {c} + {step} * {k} && {k} <= {n}"


def _count_le(rng: random.Random, v: list[str]) -> Body:
    i, j, n = v[:3]
    a, start, bound = rng.randint(1, 9), rng.randint(0, 3), rng.randint(5, 1000)
    lines = [
        *_assume_n(n, start, bound),
        f"int {i} = {start};",
        f"int {j} = 0;",
        f"@while ({i} <= {n}) {{",
        f"    {j} = {j} + {a};",
        f"    {i} = {i} + 1;",
        "}",
        f"__VERIFIER_assert({j} == {a} * ({n} - {start} + 1));",
    ]
    return lines, f"{start} <= {i} && {i} <= {n} + 1 && {j} == {a} * ({i} - {start})"


def _bounded_walk(rng: random.Random, v: list[str]) -> Body:
    i, n = v[:2]
    step, bound = rng.randint(2, 6), rng.randint(5, 1000)
    lines = [
        *_assume_n(n, 0, bound),
        f"int {i} = 0;",
        f"@while ({i} < {n}) {{",
        f"    if (__VERIFIER_nondet_int() && {i} + {step} <= {n}) {{",
        f"        {i} = {i} + {step};",
        "    } else {",
        f"        {i} = {i} + 1;",
        "    }",
        "}",
        f"__VERIFIER_assert({i} == {n});",
    ]
    return lines, f"0 <= {i} && {i} <= {n}"


def _two_phase(rng: random.Random, v: list[str]) -> Body:
    """Two loops in sequence, the second marked: the first one's exit condition is all it may use
    (the re-check gives unmarked loops `true`)."""
    i, j, s, n = v[:4]
    a, bound = rng.randint(1, 9), rng.randint(5, 1000)
    first = [*_assume_n(n, 0, bound), f"int {i} = 0;", f"while ({i} != {n}) {{", f"    {i} = {i} + 1;", "}"]
    if rng.random() < 0.5:
        loop = [f"int {j} = {i};", f"int {s} = 0;", f"@while ({j} != 0) {{", f"    {j} = {j} - 1;"]
        invariant = f"{s} + {a} * {j} == {a} * {n}"
    else:
        loop = [f"int {j} = 0;", f"int {s} = 0;", f"@while ({j} != {i}) {{", f"    {j} = {j} + 1;"]
        invariant = f"{s} == {a} * {j} && {i} == {n}"
    rest = [f"    {s} = {s} + {a};", "}", f"__VERIFIER_assert({s} == {a} * {n});"]
    return [*first, *loop, *rest], invariant


def _mult_by_add(rng: random.Random, v: list[str]) -> Body:
    x, z, i, n = v[:4]
    lim, bound = rng.randint(10, 1000), rng.randint(5, 1000)
    lines = [
        f"int {x} = __VERIFIER_nondet_int();",
        f"if (!({x} >= -{lim} && {x} <= {lim})) return 0;",
        *_assume_n(n, 0, bound),
        f"int {z} = 0;",
        f"int {i} = 0;",
        f"@while ({i} < {n}) {{",
        f"    {z} = {z} + {x};",
        f"    {i} = {i} + 1;",
        "}",
        f"__VERIFIER_assert({z} == {x} * {n});",
    ]
    return lines, f"{z} == {x} * {i} && {i} <= {n}"


def _triple_product(rng: random.Random, v: list[str]) -> Body:
    a, b, y, i, n = v[:5]
    lim, bound = rng.randint(5, 40), rng.randint(5, 500)
    lines = [
        f"int {a} = __VERIFIER_nondet_int();",
        f"int {b} = __VERIFIER_nondet_int();",
        f"if (!({a} >= -{lim} && {a} <= {lim} && {b} >= -{lim} && {b} <= {lim})) return 0;",
        *_assume_n(n, 0, bound),
        f"int {y} = 0;",
        f"int {i} = 0;",
        f"@while ({i} < {n}) {{",
        f"    {i} = {i} + 1;",
        f"    {y} = {y} + {a} * {b};",
        "}",
        f"__VERIFIER_assert({y} == {a} * {b} * {n});",
    ]
    return lines, f"{y} == {a} * {b} * {i} && {i} <= {n}"


def _grid_product(rng: random.Random, v: list[str]) -> Body:
    x, y, p, k, n = v[:5]
    x0, y0, bound = rng.randint(0, 9), rng.randint(0, 9), rng.randint(5, 1000)
    lines = [
        *_assume_n(n, 0, bound),
        f"int {x} = {x0};",
        f"int {y} = {y0};",
        f"int {p} = {x0 * y0};",
        f"int {k} = 0;",
        f"@while ({k} < {n}) {{",
        "    if (__VERIFIER_nondet_int()) {",
        f"        {p} = {p} + {y};",
        f"        {x} = {x} + 1;",
        "    } else {",
        f"        {p} = {p} + {x};",
        f"        {y} = {y} + 1;",
        "    }",
        f"    {k} = {k} + 1;",
        "}",
        f"__VERIFIER_assert({p} == {x} * {y} && {x} + {y} == {n} + {x0 + y0});",
    ]
    return lines, f"{p} == {x} * {y} && {x} + {y} == {k} + {x0 + y0} && {k} <= {n}"


def _square_sum(rng: random.Random, v: list[str]) -> Body:
    i, s, n = v[:3]
    bound = rng.randint(10, 500)
    lines = [
        *_assume_n(n, 0, bound),
        f"int {i} = 0;",
        f"int {s} = 0;",
        f"@while ({i} < {n}) {{",
        f"    {i} = {i} + 1;",
        f"    {s} = {s} + {i} * {i};",
        "}",
        f"__VERIFIER_assert(6 * {s} == {n} * ({n} + 1) * (2 * {n} + 1));",
    ]
    return lines, f"6 * {s} == {i} * ({i} + 1) * (2 * {i} + 1) && {i} <= {n}"


def _cube_sum(rng: random.Random, v: list[str]) -> Body:
    i, s, n = v[:3]
    bound = rng.randint(10, 150)
    lines = [
        *_assume_n(n, 0, bound),
        f"int {i} = 0;",
        f"int {s} = 0;",
        f"@while ({i} < {n}) {{",
        f"    {i} = {i} + 1;",
        f"    {s} = {s} + {i} * {i} * {i};",
        "}",
        f"__VERIFIER_assert(4 * {s} == {n} * {n} * ({n} + 1) * ({n} + 1));",
    ]
    return lines, f"4 * {s} == {i} * {i} * ({i} + 1) * ({i} + 1) && {i} <= {n}"


def _int_sqrt(rng: random.Random, v: list[str]) -> Body:
    r, n = v[:2]
    bound = rng.randint(100, 1000000)
    lines = [
        *_assume_n(n, 0, bound),
        f"int {r} = 0;",
        f"@while (({r} + 1) * ({r} + 1) <= {n}) {{",
        f"    {r} = {r} + 1;",
        "}",
        f"__VERIFIER_assert({r} * {r} <= {n} && {n} < ({r} + 1) * ({r} + 1));",
    ]
    return lines, f"{r} >= 0 && {r} * {r} <= {n}"


TEMPLATES: dict[str, tuple[str, Callable[[random.Random, list[str]], Body]]] = {
    "count_up": ("linear", _count_up),
    "count_down": ("linear", _count_down),
    "two_counters": ("linear", _two_counters),
    "nondet_split": ("linear", _nondet_split),
    "ratio_bound": ("linear", _ratio_bound),
    "stride": ("linear", _stride),
    "count_le": ("linear", _count_le),
    "bounded_walk": ("linear", _bounded_walk),
    "two_phase": ("linear", _two_phase),
    "triangle": ("polynomial", _triangle),
    "squares": ("polynomial", _squares),
    "odd_sum": ("polynomial", _cubes),
    "mult_by_add": ("polynomial", _mult_by_add),
    "triple_product": ("polynomial", _triple_product),
    "grid_product": ("polynomial", _grid_product),
    "square_sum": ("polynomial", _square_sum),
    "cube_sum": ("polynomial", _cube_sum),
    "int_sqrt": ("polynomial", _int_sqrt),
}


def generate(count: int, seed: int = 0, in_loop_share: float = IN_LOOP_SHARE) -> list[Synthetic]:
    """`count` programs, cycling through the templates, deterministic in `seed`; a share of them
    in the `-ll` form (see `in_loop_assertion`)."""
    rng = random.Random(seed)
    names = sorted(TEMPLATES)
    return [_make(rng, names[n % len(names)], n, in_loop_share) for n in range(count)]


def in_loop_assertion(body: list[str], invariant: str) -> Body:
    """The SV-COMP `-ll` form of a template: `while (1)` asserting the invariant's first conjunct
    (inductive alone in every template) before `if (!(COND)) break;`, and no assertion after the
    loop. That conjunct, as the assertion writes it, is the target: a model should learn that such
    an assertion is its loop's invariant."""
    first = invariant.split(" && ")[0]
    out = []
    for line in body:
        if line.startswith("__VERIFIER_assert("):
            continue
        if line.startswith("@while (") and line.endswith(") {"):
            cond = line.removeprefix("@while (").removesuffix(") {")
            line = "@while (1) {"
            out += [line, f"    __VERIFIER_assert({first});", f"    if (!({cond})) break;"]
        else:
            out.append(line)
    return out, first


def _make(rng: random.Random, template: str, n: int, in_loop_share: float) -> Synthetic:
    variables = rng.sample(NAMES, VARIABLES)
    body, invariant = TEMPLATES[template][1](rng, variables)
    in_loop = rng.random() < in_loop_share
    if in_loop:
        body, invariant = in_loop_assertion(body, invariant)
    name = f"synthetic_{template}{'-ll' if in_loop else ''}_{n}"
    lines = rng.choice(HEADERS).replace("{name}", name).splitlines()
    loop_line = 0
    for line in body:
        if line.startswith("@"):
            loop_line, line = len(lines) + 1, line[1:]
        lines.append("    " + line)
    lines += ["    return 0;", "}", ""]
    return Synthetic(name, template, "\n".join(lines), loop_line, invariant, in_loop)


def write_all(programs: list[Synthetic], directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for p in programs:
        path = directory / f"{p.name}.c"
        path.write_text(p.source, encoding="utf-8")
        paths.append(path)
    return paths
