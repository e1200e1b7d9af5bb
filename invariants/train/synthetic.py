"""Synthetic SV-COMP-style loop programs with known invariants (linear and polynomial templates,
random names, constants and bounds). Each one is written to a file; the caller re-checks it."""

from __future__ import annotations

import random
import string
import textwrap
from collections.abc import Callable, Sequence
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
VARIABLES = 5  # distinct names drawn per program (more where a template has more roles)
Body = tuple[list[str], str]  # (lines of main's body with the loop keyword marked by "@", invariant)


@dataclass(frozen=True)
class LoopTemplate:
    """A loop program with placeholders: `roles` are the variables (`$x` in the text), `draws` the
    constants drawn in order (`name=low..high`), `derive` constants computed from those. The
    program reads `inputs` (`LOW <= n m <= HIGH`: nondet `n` and `m` in that range; groups
    separated by `;`), declares the variables of `init` (`x=0 y=$c`), then runs `body`, whose
    loop keyword is marked "@". With `variants`, a coin flip picks which (lines, invariant)
    replaces the body's line `$variant`."""

    kind: str
    roles: str
    draws: str
    init: str
    body: str
    invariant: str
    inputs: str = "0 <= $n <= $bound"
    derive: Callable[[dict[str, int]], dict[str, int]] | None = None
    variants: tuple[tuple[str, str], ...] = ()


def _lines(text: str) -> list[str]:
    return textwrap.dedent(text).strip("\n").splitlines()


def _inputs(spec: str) -> list[str]:
    """The nondet inputs of `spec` (see `LoopTemplate`), assumed in range SV-COMP style."""
    out = []
    for group in spec.split(";"):
        low, names, high = (part.strip() for part in group.split("<="))
        out += [f"int {v} = __VERIFIER_nondet_int();" for v in names.split()]
        cond = " && ".join(f"{v} >= {low} && {v} <= {high}" for v in names.split())
        out.append(f"if (!({cond})) return 0;")
    return out


def instantiate(template: LoopTemplate, rng: random.Random, names: list[str]) -> Body:
    """`template`'s body and invariant with `names` for its roles and constants drawn from `rng`."""
    drawn: dict[str, int] = {}
    for draw in template.draws.split():
        key, span = draw.split("=")
        low, high = span.split("..")
        drawn[key] = rng.randint(int(low), int(high))
    if template.derive is not None:
        drawn |= template.derive(drawn)
    values = {**dict(zip(template.roles.split(), names, strict=False)), **drawn}
    lines, invariant = _lines(template.body), template.invariant
    if template.variants:
        variant, invariant = template.variants[0 if rng.random() < 0.5 else 1]
        at = lines.index("$variant")
        lines[at : at + 1] = _lines(variant)
    declared = [f"int ${name} = {value};" for name, value in (d.split("=") for d in template.init.split())]
    fill = string.Template
    text = [fill(line).substitute(values) for line in declared + lines]
    return _inputs(fill(template.inputs).substitute(values)) + text, fill(invariant).substitute(values)


TEMPLATES: dict[str, LoopTemplate] = {
    "count_up": LoopTemplate("linear", "x y n", "a=1..9 c=-20..20 bound=5..1000", "x=0 y=$c", """
        @while ($x < $n) {
            $x = $x + 1;
            $y = $y + $a;
        }
        __VERIFIER_assert($y == $a * $n + $c);
        """, "$y == $a * $x + $c && $x <= $n"),
    "count_down": LoopTemplate("linear", "i j n", "k=1..7 bound=5..500", "i=$n j=0", """
        @while ($i > 0) {
            $i = $i - 1;
            $j = $j + $k;
        }
        __VERIFIER_assert($j == $k * $n);
        """, "$j + $k * $i == $k * $n && $i >= 0"),
    "two_counters": LoopTemplate("linear", "x y k n", "a=1..5 b=1..5 bound=5..1000", "x=0 y=0 k=0", """
        @while ($k < $n) {
            $x = $x + $a;
            $y = $y + $b;
            $k = $k + 1;
        }
        __VERIFIER_assert($b * $x == $a * $y);
        """, "$x == $a * $k && $y == $b * $k && $k <= $n"),
    "nondet_split": LoopTemplate("linear", "x y i n", "a=1..5 bound=5..1000", "x=0 y=0 i=0", """
        @while ($i < $n) {
            if (__VERIFIER_nondet_int()) {
                $x = $x + $a;
            } else {
                $y = $y + $a;
            }
            $i = $i + 1;
        }
        __VERIFIER_assert($x + $y == $a * $n);
        """, "$x + $y == $a * $i && $i <= $n"),
    "ratio_bound": LoopTemplate("linear", "x y n", "k=2..5 bound=5..1000", "x=0 y=0", """
        @while ($x < $n) {
            $x = $x + 1;
            if (__VERIFIER_nondet_int()) {
                $y = $y + $k;
            } else {
                $y = $y + 1;
            }
        }
        __VERIFIER_assert($x <= $y && $y <= $k * $n);
        """, "$x <= $y && $y <= $k * $x && $x <= $n"),
    "stride": LoopTemplate("linear", "i k n", "step=2..9 c=-50..50 bound=5..1000", "i=$c k=0", """
        @while ($i < $c + $step * $n) {
            $i = $i + $step;
            $k = $k + 1;
        }
        __VERIFIER_assert($k == $n && $i == $c + $step * $n);
        """, "$i == $c + $step * $k && $k <= $n"),
    "count_le": LoopTemplate("linear", "i j n", "a=1..9 start=0..3 bound=5..1000", "i=$start j=0", """
        @while ($i <= $n) {
            $j = $j + $a;
            $i = $i + 1;
        }
        __VERIFIER_assert($j == $a * ($n - $start + 1));
        """, "$start <= $i && $i <= $n + 1 && $j == $a * ($i - $start)", inputs="$start <= $n <= $bound"),
    "bounded_walk": LoopTemplate("linear", "i n", "step=2..6 bound=5..1000", "i=0", """
        @while ($i < $n) {
            if (__VERIFIER_nondet_int() && $i + $step <= $n) {
                $i = $i + $step;
            } else {
                $i = $i + 1;
            }
        }
        __VERIFIER_assert($i == $n);
        """, "0 <= $i && $i <= $n"),
    # Two loops in sequence, the second marked: the first one's exit condition is all it may use
    # (the re-check gives unmarked loops `true`).
    "two_phase": LoopTemplate("linear", "i j s n", "a=1..9 bound=5..1000", "i=0", """
        while ($i != $n) {
            $i = $i + 1;
        }
        $variant
            $s = $s + $a;
        }
        __VERIFIER_assert($s == $a * $n);
        """, "", variants=(
        ("int $j = $i;\nint $s = 0;\n@while ($j != 0) {\n    $j = $j - 1;", "$s + $a * $j == $a * $n"),
        ("int $j = 0;\nint $s = 0;\n@while ($j != $i) {\n    $j = $j + 1;", "$s == $a * $j && $i == $n"),
    )),
    "triangle": LoopTemplate("polynomial", "x y n", "bound=10..1000", "x=0 y=0", """
        @while ($x < $n) {
            $x = $x + 1;
            $y = $y + $x;
        }
        __VERIFIER_assert(2 * $y == $n * ($n + 1));
        """, "2 * $y == $x * $x + $x && $x <= $n"),
    "squares": LoopTemplate("polynomial", "x y n", "bound=10..1000", "x=0 y=0", """
        @while ($x < $n) {
            $y = $y + 2 * $x + 1;
            $x = $x + 1;
        }
        __VERIFIER_assert($y == $n * $n);
        """, "$y == $x * $x && $x <= $n"),
    "mult_by_add": LoopTemplate("polynomial", "x z i n", "lim=10..1000 bound=5..1000", "z=0 i=0", """
        @while ($i < $n) {
            $z = $z + $x;
            $i = $i + 1;
        }
        __VERIFIER_assert($z == $x * $n);
        """, "$z == $x * $i && $i <= $n", inputs="-$lim <= $x <= $lim; 0 <= $n <= $bound"),
    "odd_sum": LoopTemplate("polynomial", "x y z n", "bound=10..200", "x=0 y=0 z=1", """
        @while ($x < $n) {
            $y = $y + $z;
            $z = $z + 2;
            $x = $x + 1;
        }
        __VERIFIER_assert($y == $n * $n);
        """, "$z == 2 * $x + 1 && $y == $x * $x && $x <= $n"),
    "triple_product": LoopTemplate("polynomial", "a b y i n", "lim=5..40 bound=5..500", "y=0 i=0", """
        @while ($i < $n) {
            $i = $i + 1;
            $y = $y + $a * $b;
        }
        __VERIFIER_assert($y == $a * $b * $n);
        """, "$y == $a * $b * $i && $i <= $n", inputs="-$lim <= $a $b <= $lim; 0 <= $n <= $bound"),
    "grid_product": LoopTemplate(
        "polynomial", "x y p k n", "x0=0..9 y0=0..9 bound=5..1000", "x=$x0 y=$y0 p=$p0 k=0", """
        @while ($k < $n) {
            if (__VERIFIER_nondet_int()) {
                $p = $p + $y;
                $x = $x + 1;
            } else {
                $p = $p + $x;
                $y = $y + 1;
            }
            $k = $k + 1;
        }
        __VERIFIER_assert($p == $x * $y && $x + $y == $n + $s0);
        """, "$p == $x * $y && $x + $y == $k + $s0 && $k <= $n",
        derive=lambda d: {"p0": d["x0"] * d["y0"], "s0": d["x0"] + d["y0"]}),
    "square_sum": LoopTemplate("polynomial", "i s n", "bound=10..500", "i=0 s=0", """
        @while ($i < $n) {
            $i = $i + 1;
            $s = $s + $i * $i;
        }
        __VERIFIER_assert(6 * $s == $n * ($n + 1) * (2 * $n + 1));
        """, "6 * $s == $i * ($i + 1) * (2 * $i + 1) && $i <= $n"),
    "cube_sum": LoopTemplate("polynomial", "i s n", "bound=10..150", "i=0 s=0", """
        @while ($i < $n) {
            $i = $i + 1;
            $s = $s + $i * $i * $i;
        }
        __VERIFIER_assert(4 * $s == $n * $n * ($n + 1) * ($n + 1));
        """, "4 * $s == $i * $i * ($i + 1) * ($i + 1) && $i <= $n"),
    "int_sqrt": LoopTemplate("polynomial", "r n", "bound=100..1000000", "r=0", """
        @while (($r + 1) * ($r + 1) <= $n) {
            $r = $r + 1;
        }
        __VERIFIER_assert($r * $r <= $n && $n < ($r + 1) * ($r + 1));
        """, "$r >= 0 && $r * $r <= $n"),
}


def _pair_assertions() -> tuple[tuple[str, str], ...]:
    """The two ways of asserting one of a pair's equalities (the other is its companion)."""
    first, second = "$u == $p * $x + $r * $y", "$v == $q * $x + $s * $y"
    orders = ((first, second), (second, first))
    return tuple((f"__VERIFIER_assert({a});", f"{a} && {b} && $i <= $n") for a, b in orders)


# The first conjunct of each invariant here is no invariant alone: the loop keeps it only because
# the other conjuncts (its companions) hold too. Asserted in the loop, it teaches a model to add them.
COMPANION_TEMPLATES: dict[str, LoopTemplate] = {
    "difference_chain": LoopTemplate(
        "polynomial", "x d i n", "a=1..5 b=0..5 c=0..20 bound=5..1000", "x=$c d=$ab i=0", """
        @while ($i < $n) {
            $x = $x + $d;
            $d = $d + $a2;
            $i = $i + 1;
        }
        __VERIFIER_assert($x == $a * $n * $n + $b * $n + $c);
        """, "$x == $a * $i * $i + $b * $i + $c && $d == $a2 * $i + $ab && $i <= $n",
        derive=lambda d: {"ab": d["a"] + d["b"], "a2": 2 * d["a"]}),
    "cube_chain": LoopTemplate("polynomial", "x y z i n", "a=1..4 bound=5..100", "x=0 y=$a z=$a6 i=0", """
        @while ($i < $n) {
            $x = $x + $y;
            $y = $y + $z;
            $z = $z + $a6;
            $i = $i + 1;
        }
        __VERIFIER_assert($x == $a * $n * $n * $n);
        """,
        "$x == $a * $i * $i * $i && $y == $a3 * $i * $i + $a3 * $i + $a && $z == $a6 * $i + $a6 && $i <= $n",
        derive=lambda d: {"a3": 3 * d["a"], "a6": 6 * d["a"]}),
    "difference_sum": LoopTemplate(
        "linear", "u v w i n", "c=1..20 step=1..9 bound=5..1000", "u=0 v=$c w=0 i=0", """
        @while ($i < $n) {
            $u = $u + $v - $w;
            $v = $v + $step;
            $w = $w + $step;
            $i = $i + 1;
        }
        __VERIFIER_assert($u == $c * $n);
        """, "$u == $c * $i && $v == $w + $c && $i <= $n"),
    "lagged_copy": LoopTemplate(
        "linear", "prev cur i n", "a=1..9 c=10..30 bound=5..1000", "prev=$ca cur=$c i=0", """
        @while ($i < $n) {
            $prev = $cur;
            $cur = $cur + $a;
            $i = $i + 1;
        }
        __VERIFIER_assert($prev == $a * $n + $ca);
        """, "$prev == $a * $i + $ca && $cur == $a * $i + $c && $i <= $n",
        derive=lambda d: {"ca": d["c"] - d["a"]}),
    "chunked_division": LoopTemplate(
        "polynomial", "a b d q r", "k=2..9 lim=2..50 bound=10..10000", "d=$k*$b q=0 r=$a", """
        @while ($r >= $d) {
            $r = $r - $d;
            $q = $q + $k;
        }
        __VERIFIER_assert($a == $q * $b + $r && $r < $d);
        """, "$a == $q * $b + $r && $d == $k * $b && $r >= 0", inputs="1 <= $b <= $lim; 0 <= $a <= $bound"),
    # Two values kept as combinations of the inputs, their coefficients updated with them: a step
    # that moves one value through the other keeps its equality only if the other's holds too.
    "pair_recurrence": LoopTemplate(
        "polynomial", "x y u v p q r s t i n", "c=1..3 lim=2..30 bound=3..10",
        "u=$x v=$y p=1 q=0 r=0 s=1 t=0 i=0", """
        @while ($i < $n) {
            $t = $u;
            $u = $v;
            $v = $t + $c * $v;
            $t = $p;
            $p = $q;
            $q = $t + $c * $q;
            $t = $r;
            $r = $s;
            $s = $t + $c * $s;
            $i = $i + 1;
        }
        $variant
        """, "", inputs="0 <= $x $y <= $lim; 0 <= $n <= $bound", variants=_pair_assertions(),
    ),
    "pair_row_operations": LoopTemplate(
        "polynomial", "x y u v p q r s k i n", "kmax=1..4 lim=2..30 bound=3..10",
        "u=$x v=$y p=1 q=0 r=0 s=1 k=0 i=0", """
        @while ($i < $n) {
            $k = __VERIFIER_nondet_int();
            if (!($k >= 0 && $k <= $kmax)) return 0;
            if (__VERIFIER_nondet_int()) {
                $u = $u - $k * $v;
                $p = $p - $k * $q;
                $r = $r - $k * $s;
            } else {
                $v = $v - $k * $u;
                $q = $q - $k * $p;
                $s = $s - $k * $r;
            }
            $i = $i + 1;
        }
        $variant
        """, "", inputs="0 <= $x $y <= $lim; 0 <= $n <= $bound", variants=_pair_assertions(),
    ),
}


def generate(
    count: int, seed: int = 0, in_loop_share: float = IN_LOOP_SHARE, in_loop_whole: bool = False
) -> list[Synthetic]:
    """`count` programs, cycling through the templates, deterministic in `seed`; a share of them
    in the `-ll` form (see `in_loop_assertion`)."""
    return _cycle(TEMPLATES, count, seed, in_loop_share, in_loop_whole)


def generate_companions(
    count: int, seed: int = 0, in_loop_share: float = IN_LOOP_SHARE, templates: Sequence[str] | None = None
) -> list[Synthetic]:
    """`count` programs of `COMPANION_TEMPLATES` (or of those named in `templates`), as `generate`
    makes them; the in-loop ones always teach the whole invariant, since their assertion alone is
    no invariant."""
    chosen = COMPANION_TEMPLATES if templates is None else {t: COMPANION_TEMPLATES[t] for t in templates}
    return _cycle(chosen, count, seed, in_loop_share, True)


def _cycle(
    templates: dict[str, LoopTemplate], count: int, seed: int, in_loop_share: float, whole: bool
) -> list[Synthetic]:
    rng = random.Random(seed)
    names = sorted(templates)
    return [_make(rng, templates, names[n % len(names)], n, in_loop_share, whole) for n in range(count)]


def in_loop_assertion(body: list[str], invariant: str, whole: bool = False) -> Body:
    """The SV-COMP `-ll` form of a template: `while (1)` asserting the invariant's first conjunct
    (inductive alone in each of `TEMPLATES`, in none of `COMPANION_TEMPLATES`) before
    `if (!(COND)) break;`, and no assertion after the loop. That conjunct, as the assertion writes
    it, is the target: a model should learn that such an assertion is its loop's invariant. With
    `whole`, the target is the whole invariant: the assertion and what else holds at the loop head."""
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
    return out, invariant if whole else first


def _make(
    rng: random.Random,
    templates: dict[str, LoopTemplate],
    template: str,
    n: int,
    in_loop_share: float,
    whole: bool,
) -> Synthetic:
    variables = rng.sample(NAMES, max(VARIABLES, len(templates[template].roles.split())))
    body, invariant = instantiate(templates[template], rng, variables)
    in_loop = rng.random() < in_loop_share
    if in_loop:
        body, invariant = in_loop_assertion(body, invariant, whole)
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
