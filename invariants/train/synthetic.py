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
    """A generated program: its text, the loop keyword's line and the invariant there."""

    name: str
    template: str
    source: str
    loop_line: int
    invariant: str


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
    a, b = rng.randint(1, 5), rng.randint(1, 5)
    lines = [
        f"int {n} = __VERIFIER_nondet_int();",
        f"if (!({n} >= 0)) return 0;",
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


TEMPLATES: dict[str, tuple[str, Callable[[random.Random, list[str]], Body]]] = {
    "count_up": ("linear", _count_up),
    "count_down": ("linear", _count_down),
    "two_counters": ("linear", _two_counters),
    "triangle": ("polynomial", _triangle),
    "squares": ("polynomial", _squares),
    "odd_sum": ("polynomial", _cubes),
}


def generate(count: int, seed: int = 0) -> list[Synthetic]:
    """`count` programs, cycling through the templates, deterministic in `seed`."""
    rng = random.Random(seed)
    names = sorted(TEMPLATES)
    return [_make(rng, names[n % len(names)], n) for n in range(count)]


def _make(rng: random.Random, template: str, n: int) -> Synthetic:
    variables = rng.sample(NAMES, 4)
    body, invariant = TEMPLATES[template][1](rng, variables)
    lines = HEADER.splitlines()
    loop_line = 0
    for line in body:
        if line.startswith("@"):
            loop_line, line = len(lines) + 1, line[1:]
        lines.append("    " + line)
    lines += ["    return 0;", "}", ""]
    return Synthetic(f"synthetic_{template}_{n}", template, "\n".join(lines), loop_line, invariant)


def write_all(programs: list[Synthetic], directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for p in programs:
        path = directory / f"{p.name}.c"
        path.write_text(p.source, encoding="utf-8")
        paths.append(path)
    return paths
