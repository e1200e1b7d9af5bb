"""Adversarial invariants for `quokka torture`: a task verified with a wrong, weak or ill-formed
loop invariant, given through one of the channels a user has: `--invariant LINE:EXPR`, an ACSL
`loop invariant` annotation in a copy of the program, or a correctness witness (`--witness-in`)
from a verifier that lies. A guess may cost a proof (or be refused as bad input); it must never
turn the verdict into a wrong one. Where the loop sees arrays, some guesses are `\\forall` claims
over their cells.

Array trials (`array_trial`) generate the program: a loop that fills a global, local or `malloc`
array, claimed about with a quantified invariant whose truth is known (true, false, not initiated,
true for the first iterations only, reading past the end): the claim must get a status, and a
false one must never be valid nor a true one refuted.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from quokka.verifier.errors import QuokkaError
from quokka.verifier.frontend import lower
from quokka.verifier.ir import ArrayType, LoopInfo, Program
from quokka.verifier.verdict.results import ProvenInvariant, Result, Verdict
from quokka.verifier.verdict.witnesses import correctness_witness, write_witness

CHANNELS = ("option", "acsl", "witness")
CONSTANTS = (0, 1, 2, -1, 7, 100, 2147483647, 4294967295)


@dataclass(frozen=True)
class InvariantTrial:
    """What to verify (`program`, an annotated copy for ACSL) with which extra `quokka verify`
    arguments; `description` names the channel, the guess and its loop."""

    program: Path
    args: tuple[str, ...]
    description: str
    claim_holds: bool | None = None  # whether the claim holds at every reachable loop-head state


def guess(names: Sequence[str], rng: random.Random) -> str:
    """A random invariant over `names`: mostly wrong, some true only without wrap-around or for
    some inputs, some over a name out of scope, some not C at all."""
    x, y, k = rng.choice(names), rng.choice(names), rng.choice(CONSTANTS)
    forms = (
        f"{x} <= {k}", f"{x} >= {k}", f"{x} == {y} + {k}", f"{x} % 2 == {k % 2}", f"{x} + 1 > {x}",
        f"{x} * {x} >= 0", f"{x} != {x}", "1", f"{x} < {y}", f"quokka_nosuch > {k}", f"{x} <=",
        f"{x} - {y} <= {k} && {y} - {x} <= {k}", f"{x} == {k} || {x} > {y}",
    )  # fmt: skip
    return rng.choice(forms)


def quantified_guess(arrays: Sequence[str], names: Sequence[str], rng: random.Random) -> str:
    """A random `\\forall` claim over the cells of one of `arrays`, its range bounded by one of
    `names` or a constant: true or false, initiated or not, some reading past the array's end."""
    a, i, k = rng.choice(arrays), rng.choice(names), rng.choice(CONSTANTS[:6])
    ranges = (f"0 <= j < {i}", f"0 <= j <= {i}", f"0 <= j < {k}", f"{i} <= j < {i} + 2", f"-1 <= j < {i}")
    bodies = (f"{a}[j] == {k}", f"{a}[j] >= {k}", f"{a}[j] == {a}[0]", f"{a}[j] <= {a}[j + 1]",
              f"{a}[j] == {k} && j < {k}", f"{a}[j] != {k} || j == {i}")  # fmt: skip
    return f"\\forall integer j; {rng.choice(ranges)} ==> {rng.choice(bodies)}"


def invariant_trial(
    program: Path, data_model: str, work: Path, rng: random.Random, name: str
) -> InvariantTrial | None:
    """A trial for one loop of `program` (None when it has none or does not lower)."""
    try:
        lowered = lower(program, data_model)
    except QuokkaError:
        return None
    if not lowered.loops:
        return None
    info = rng.choice(lowered.loops)
    arrays = _arrays_in_scope(lowered, info)
    if arrays and rng.random() < 0.5:
        expr = quantified_guess(arrays, [c for c, _ in info.scope if c not in arrays] or ["0"], rng)
    else:
        expr = guess([c for c, _ in info.scope] or ["x"], rng)
    return _given(program, data_model, info, expr, work, rng, name)


def _arrays_in_scope(program: Program, info: LoopInfo) -> list[str]:
    """The C names of the arrays (and `malloc` blocks) visible at the loop."""
    types = {d.name: d.type for d in program.variables}
    return [c for c, ir_name in info.scope if isinstance(types.get(ir_name), ArrayType)]


def _given(
    program: Path, data_model: str, info: LoopInfo, expr: str, work: Path, rng: random.Random, name: str
) -> InvariantTrial:
    """`expr` claimed at the loop of `info`, through a channel chosen at random."""
    channel = rng.choice(CHANNELS)
    described = f"{channel}: {expr} at line {info.coord.line}"
    if channel == "option":
        return InvariantTrial(program, ("--invariant", f"{info.coord.line}:{expr}"), described)
    if channel == "acsl":
        return InvariantTrial(_annotated(program, info, expr, work / name), (), described)
    witness = work / f"{Path(name).stem}.witness.yml"
    _lying_witness(program, data_model, info, expr, witness)
    return InvariantTrial(program, ("--witness-in", str(witness)), described)


def _annotated(program: Path, info: LoopInfo, expr: str, out: Path) -> Path:
    """A copy of `program` with `/*@ loop invariant expr; */` on its own line above the loop."""
    lines = program.read_text(errors="replace").splitlines(keepends=True)
    at = max(info.coord.line - 1, 0)
    out.write_text("".join([*lines[:at], f"/*@ loop invariant {expr}; */\n", *lines[at:]]))
    return out


def _lying_witness(program: Path, data_model: str, info: LoopInfo, expr: str, out: Path) -> None:
    """A correctness witness claiming `expr` at the loop, as a verifier that lies would write it
    (a quantified `expr` too, which Quokka's own witnesses leave out: it is not C)."""
    claimed = ProvenInvariant(info.id, info.coord.line, info.coord.column, "1", "torture")
    result = Result(Verdict.TRUE, "claimed", str(program), invariants=(claimed,))
    entry = correctness_witness(result, program, data_model=data_model)
    for item in entry["content"]:
        item["invariant"]["value"] = expr
    write_witness(entry, out)


# ----------------------------------------------------------------------------- array trials

ARRAY_KINDS = {  # where the array lives: (its declaration outside main, inside main)
    "global": ("int a[{n}];", ""),
    "local": ("", "int a[{n}];"),
    "heap": ("", "int *a = malloc({n} * sizeof(int));"),
}
ARRAY_PROGRAM = """void *malloc(unsigned long size);
extern int __VERIFIER_nondet_int(void);
extern void reach_error(void);
void __VERIFIER_assert(int c) {{ if (!c) reach_error(); }}
{outside}
int main(void) {{
  {inside}
  int m = {bound};
  if (m < 0 || m > {n}) return 0;
  int i = 0;
  while (i < m) {{
    a[i] = {v};
    i = i + 1;
  }}
  if (m > {half}) __VERIFIER_assert(a[{half}] == {v});
  return 0;
}}
"""


def array_claims(n: int, v: int) -> tuple[tuple[str, bool | None], ...]:
    """Quantified claims about `ARRAY_PROGRAM`'s loop (a[0..m) set to `v`, m up to `n`) with
    whether each holds at every reachable state of its head (None: undefined somewhere)."""
    forall = "\\forall integer j; "
    return (
        (f"{forall}0 <= j < i ==> a[j] == {v}", True),  # inductive
        (f"{forall}0 <= j < i ==> a[j] >= {v - 1}", True),
        (f"{forall}i <= j < i ==> a[j] == {v + 1}", True),  # an empty range
        (f"{forall}0 <= j < i ==> a[j] == {v + 1}", False),  # false after one iteration
        (f"{forall}0 <= j <= i ==> a[j] == {v}", False),  # a[i] is not set yet
        (f"{forall}0 <= j < {n} ==> a[j] == {v}", False),  # not initiated
        (f"{forall}0 <= j < i ==> a[j] == {v} && j < {n // 2 - 1}", False),  # true for a while
        (f"{forall}0 <= j < i ==> a[j + {n}] == {v}", None),  # reads past the end
    )


def array_trial(work: Path, rng: random.Random, name: str) -> InvariantTrial:
    """A generated array-filling program (its verdict TRUE) with a quantified claim of known truth,
    given through a channel chosen at random."""
    kind, n, v = rng.choice(sorted(ARRAY_KINDS)), rng.choice((4, 10, 100)), rng.choice((1, 5, 7, -3))
    outside, inside = (part.format(n=n) for part in ARRAY_KINDS[kind])
    bound = rng.choice((str(n), "__VERIFIER_nondet_int()"))
    text = ARRAY_PROGRAM.format(outside=outside, inside=inside, bound=bound, n=n, half=n // 2, v=v)
    program = work / f"{Path(name).stem}.src.c"  # `name` is the annotated copy's
    program.write_text(text)
    info = lower(program, "LP64").loops[0]
    expr, holds = rng.choice(array_claims(n, v))
    trial = _given(program, "LP64", info, expr, work, rng, name)
    return InvariantTrial(trial.program, trial.args, f"{kind} array: {trial.description}", holds)
